#!/usr/bin/env bash
# Installs the build into a DESTDIR, moves the tree somewhere else, and checks
# that it still works without environment variables: the installed xdev-smi
# finds the cpu plugin, pkg-config resolves xdev from the moved tree, and a
# small program built with `pkg-config --cflags --libs xdev` lists devices.
set -euo pipefail
build=$1
cxx=${2:-c++}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

meson install -C "$build" --destdir "$work/staged" --no-rebuild --quiet
mv "$work/staged" "$work/moved"
# Nothing may point back at the build tree (meson test sets LD_LIBRARY_PATH).
unset XDEV_PLUGIN_PATH LD_LIBRARY_PATH

smi=$(find "$work/moved" -path '*/bin/xdev-smi' -type f)
[ -x "$smi" ] || { echo "FAIL: no installed xdev-smi under $work/moved"; exit 1; }
out=$("$smi")
echo "$out"
grep -q '/job:localhost/replica:0/task:0/device:CPU:0' <<<"$out" || { echo "FAIL: CPU:0 not listed"; exit 1; }
grep -Eq 'loaded +cpu +'"$work/moved" <<<"$out" || { echo "FAIL: cpu plugin not loaded from the moved tree"; exit 1; }

pcdir=$(dirname "$(find "$work/moved" -name xdev.pc | head -n 1)")
export PKG_CONFIG_PATH=$pcdir
flags=$(pkg-config --cflags --libs xdev)
# A sanitizer build's libxdev needs its runtime first: build the program alike.
[ -n "${XDEV_TEST_SANITIZE:-}" ] && flags="-fsanitize=$XDEV_TEST_SANITIZE $flags"
libdir=$(pkg-config --variable=libdir xdev)
plugindir=$(pkg-config --variable=plugindir xdev)
[ -f "$plugindir/xdev_plugin_cpu.so" ] || { echo "FAIL: plugindir $plugindir has no cpu plugin"; exit 1; }
# The cuda plugin's shim finds its implementation in cuda_impl/ beside it.
if [ -f "$plugindir/xdev_plugin_cuda.so" ] && [ ! -f "$plugindir/cuda_impl/xdev_cuda_impl.so" ]; then
  echo "FAIL: $plugindir has the cuda plugin but not cuda_impl/xdev_cuda_impl.so"; exit 1
fi
case "$libdir" in "$work/moved"*) ;; *) echo "FAIL: pkg-config libdir $libdir is not in the moved tree"; exit 1;; esac

cat > "$work/list.cpp" <<'CPP'
#include <iostream>
#include <xdev/xdev.hpp>
int main() {
  auto devices = xdev::list_physical_devices();
  for (const auto& d : devices) std::cout << d << "\n";
  std::cout << "Num GPUs Available: " << xdev::num_gpus() << "\n";
  return devices.empty() ? 1 : 0;
}
CPP
# Exactly the README's line (no -Wl,-rpath of our own): xdev.pc carries the
# rpath, so the program starts without LD_LIBRARY_PATH.
# shellcheck disable=SC2086
"$cxx" -std=c++20 "$work/list.cpp" -o "$work/list" $flags
readelf -d "$work/list" | grep -Eq 'R(UN)?PATH.*'"$libdir" || { echo "FAIL: no rpath to $libdir in the user program"; exit 1; }
"$work/list" | tee "$work/list.out"
grep -q "PhysicalDevice(name='/physical_device:CPU:0', device_type='CPU')" "$work/list.out"
echo "install check passed"
