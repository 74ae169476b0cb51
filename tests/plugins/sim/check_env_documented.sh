#!/usr/bin/env bash
# Every XDEV_SIM_* variable the sim plugin reads is documented in its README
# and in docs/user-guide.md (they used not to be).
set -euo pipefail
src=$1
# read_env, read_env_ops, read_env_dtypes: every reader of the environment.
names=$(grep -oE 'read_env[a-z_]*\("XDEV_SIM_[A-Z_]*"' "$src/tests/plugins/sim/plugin.cpp" | grep -o 'XDEV_SIM_[A-Z_]*' | sort -u)
[ -n "$names" ] || { echo "FAIL: found no read_env(\"XDEV_SIM_...\") in plugin.cpp"; exit 1; }
# No other getenv of the plugin's own variables escapes this check (its
# test, test_sim_plugin.cpp, reads them back on purpose).
if grep -n 'getenv("XDEV_SIM_' $(ls "$src"/tests/plugins/sim/*.cpp | grep -v /test_); then
  echo "FAIL: read XDEV_SIM_* variables with read_env* (above), so that this check sees them"
  exit 1
fi
status=0
for name in $names; do
  for doc in tests/plugins/sim/README.md docs/user-guide.md; do
    grep -q "\`$name\`" "$src/$doc" || { echo "FAIL: $name is not documented in $doc"; status=1; }
  done
done
[ $status = 0 ] && echo "documented: $names"
exit $status
