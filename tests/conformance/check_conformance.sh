#!/usr/bin/env bash
# Runs xdev-conformance on one plugin and checks what it printed:
#
#   check_conformance.sh --expect-pass - RUNNER PLUGIN [RUNNER OPTIONS...]
#       exit status 0, "N passed, 0 failed, N skipped, N expected failures,
#       0 unexpected passes"
#   check_conformance.sh --expect-failure TEXT RUNNER PLUGIN [RUNNER OPTIONS...]
#       exit status 1 (a failing plugin, not a crashing runner), at least one
#       failure or unexpected pass, and TEXT somewhere in the output
#
# Either way every test line must be `PASS name`, `FAIL name: reason`,
# `SKIP name: reason`, `XFAIL name: reason` or `XPASS name: reason` (no skip
# without a reason), their counts must match the summary line, and the
# summary must be alone on its line.
set -u
mode=$1 expected=$2 runner=$3 plugin=$4
shift 4

out=$("$runner" "$plugin" "$@" 2>&1)
rc=$?
printf '%s\n' "$out"
fail() { echo "check_conformance: FAIL: $*"; exit 1; }

pattern='^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped, [0-9]+ expected failures, [0-9]+ unexpected passes$'
summary=$(grep -E "$pattern" <<<"$out")
[ "$(grep -cE "$pattern" <<<"$out")" = 1 ] ||
  fail "expected exactly one summary line (exit status $rc)"
read -r passed _ failed _ skipped _ xfailed _ _ xpassed _ <<<"${summary//,/}"

body=$(sed -e '1d' -e '$d' <<<"$out")  # between the header and the summary
bad=$(grep -vE '^(PASS [A-Za-z0-9_.]+|(FAIL|SKIP|XFAIL|XPASS) [A-Za-z0-9_.]+: .+)$' <<<"$body")
[ -z "$bad" ] || fail "malformed lines: $bad"
for kind in PASS:$passed FAIL:$failed SKIP:$skipped XFAIL:$xfailed XPASS:$xpassed; do
  [ "$(grep -c "^${kind%%:*} " <<<"$body")" = "${kind#*:}" ] ||
    fail "${kind%%:*} lines do not add up to ${kind#*:}"
done

case $mode in
  --expect-pass)
    [ "$rc" = 0 ] || fail "exit status $rc, expected 0"
    [ "$failed" = 0 ] || fail "$failed failed"
    [ "$xpassed" = 0 ] || fail "$xpassed passed unexpectedly"
    ;;
  --expect-failure)
    [ "$rc" = 1 ] || fail "exit status $rc, expected 1 (a failure; >1 is a usage error or a crash)"
    [ "$((failed + xpassed))" -gt 0 ] || fail "nothing failed"
    grep -qF -- "$expected" <<<"$out" || fail "the output does not say: $expected"
    ;;
  *) fail "unknown mode $mode" ;;
esac
echo "check_conformance: ok"
