#!/usr/bin/env bash
# The plugin author's path, end to end: install xdev into a DESTDIR, build the
# example plugin (sdk/examples/plugin) out of tree against it with pkg-config,
# install it into xdev's plugin directory, run the installed xdev-conformance
# on it (0 failed), and see the installed xdev-smi load it.
#
#   check_example.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1
source=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_example: FAIL: $*"; exit 1; }

meson install -C "$build" --destdir "$work/staged" --no-rebuild --quiet
# Nothing may point back at the build tree (meson test sets LD_LIBRARY_PATH).
unset XDEV_PLUGIN_PATH LD_LIBRARY_PATH
export XDG_CACHE_HOME="$work/cache"

pc=$(find "$work/staged" -name xdev.pc | head -n 1)
[ -n "$pc" ] || fail "no xdev.pc installed"
export PKG_CONFIG_PATH=$(dirname "$pc")
plugindir=$(realpath -m "$(pkg-config --variable=plugindir xdev)")
case "$plugindir" in "$work/staged"*) ;; *) fail "plugindir $plugindir is outside the install";; esac
# The SDK ships the plugin helpers and the version script C++ plugins link with.
pluginmap=$(realpath -m "$(pkg-config --variable=pluginmap xdev)")
[ -f "$pluginmap" ] || fail "pluginmap $pluginmap (pkg-config --variable=pluginmap xdev) is missing"
grep -q 'global: xdev_plugin_query;' "$pluginmap" || fail "$pluginmap does not export the entry point"
incdir=$(pkg-config --variable=includedir xdev)
for header in plugin_helpers.h plugin_helpers.hpp; do
  [ -f "$incdir/xdev/$header" ] || fail "xdev/$header is not installed in $incdir"
done

meson setup "$work/example" "$source/sdk/examples/plugin" >"$work/setup.log" 2>&1 ||
  { cat "$work/setup.log"; fail "meson setup of the example failed"; }
meson compile -C "$work/example" >"$work/compile.log" 2>&1 ||
  { cat "$work/compile.log"; fail "the example did not build"; }
meson install -C "$work/example" --quiet >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "meson install of the example failed"; }
plugin=$plugindir/xdev_plugin_example.so
[ -f "$plugin" ] || fail "the example was not installed into $plugindir"
# It exports one symbol and needs no libxdev.
exports=$(nm -D --defined-only "$plugin" | awk '{print $3}' | grep -v '^_' | sort | tr '\n' ' ')
[ "$exports" = "xdev_plugin_query " ] || fail "exports: $exports"
if ldd "$plugin" | grep -q libxdev; then fail "the plugin links libxdev"; fi

conformance=$(find "$work/staged" -path '*/bin/xdev-conformance' -type f)
[ -x "$conformance" ] || fail "no installed xdev-conformance"
out=$("$conformance" "$plugin" --expectations "$source/tests/conformance/expectations/example.txt") ||
  { echo "$out"; fail "xdev-conformance failed on the example"; }
echo "$out"
grep -qE '^[0-9]+ passed, 0 failed, [0-9]+ skipped, [0-9]+ expected failures, 0 unexpected passes$' \
  <<<"$out" || fail "no clean summary"

smi=$(find "$work/staged" -path '*/bin/xdev-smi' -type f)
smi_out=$("$smi")
grep -q '/job:localhost/replica:0/task:0/device:EXAMPLE:0' <<<"$smi_out" ||
  { echo "$smi_out"; fail "xdev-smi does not list EXAMPLE:0"; }
grep -Eq "loaded +example +$plugindir" <<<"$smi_out" ||
  { echo "$smi_out"; fail "xdev-smi does not show the example plugin loaded"; }
# The installed libxdev found its probe helper (<libdir>/xdev/xdev-plugin-probe):
# the plugins were probed in a child process and the successes cached.
grep -qF "$plugin" "$XDG_CACHE_HOME/xdev/plugin-probe.cache" ||
  fail "no probe cache entry for the example: was xdev-plugin-probe installed and found?"
echo "check_example: ok"
