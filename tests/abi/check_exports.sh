#!/usr/bin/env bash
# A library of the tree (libxdev, libxdev_mpi) exports exactly the symbols
# listed in <name>.symbols beside this script (demangled).
# A difference means the SDK's binary interface changed: if that is deliberate,
# regenerate the list with `tests/abi/check_exports.sh LIB --update` and say so
# in the commit.
set -euo pipefail
lib=$1
if [ "${2:-}" = "--sanitized" ]; then
  echo "SKIP: sanitizer builds change what libxdev exports (instrumentation); checked in plain builds"
  exit 77
fi
name=$(basename "$lib")
list=$(dirname "$0")/${name%%.so*}.symbols
actual=$(nm -D --defined-only "$lib" | c++filt | awk '{ $1 = ""; $2 = ""; sub(/^  /, ""); print }' | LC_ALL=C sort)
if [ "${2:-}" = "--update" ]; then
  printf '%s\n' "$actual" > "$list"
  exit 0
fi
if ! diff -u "$list" <(printf '%s\n' "$actual"); then
  echo "FAIL: the symbols $name exports changed (see the diff above: - expected, + actual)"
  exit 1
fi
if grep -q 'xdev::detail' <<<"$actual"; then echo "FAIL: internals exported"; exit 1; fi
echo "$name exports $(wc -l <<<"$actual") symbols, as listed"
