#!/usr/bin/env bash
# The runner's expectation files (--expectations FILE): an expected failure is
# counted and does not fail the run; a test an entry says fails or is
# unsupported that passes anyway is an unexpected pass and fails the run (so
# a file cannot go stale); a malformed or stale file is a usage error.
#
#   check_expectations.sh RUNNER PASSING_PLUGIN FAILING_PLUGIN
#
# PASSING_PLUGIN passes abi.load and memory.query and has one device;
# FAILING_PLUGIN (the minimal loader fixture) fails memory.zero_size.
set -uo pipefail
runner=$1 good=$2 failing=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_expectations: FAIL: $*"; exit 1; }
# run RUNNER-ARGS...: output in $out, exit status in $rc.
run() {
  out=$("$runner" "$@" 2>&1)
  rc=$?
}
says() { grep -qF -- "$1" <<<"$out" || { echo "$out"; fail "the output does not say: $1"; }; }

# A stale xfail: the entry says abi.load fails, but it passes. The run fails.
printf '# stale on purpose\nabi.load  xfail  it used to crash\n' >"$work/stale.txt"
run "$good" --filter abi.load --filter memory.query --expectations "$work/stale.txt" \
  --junit "$work/stale.xml"
[ "$rc" = 1 ] || { echo "$out"; fail "a stale xfail entry: exit status $rc, expected 1"; }
says "XPASS abi.load: passed, but $work/stale.txt:2 says it fails (it used to crash); update the expectation file"
says "PASS memory.query"
says "1 passed, 0 failed, 0 skipped, 0 expected failures, 1 unexpected passes"
grep -q 'failures="1" skipped="0" expected_failures="0" unexpected_passes="1"' "$work/stale.xml" ||
  { cat "$work/stale.xml"; fail "the JUnit counts of an unexpected pass"; }
grep -q '<failure type="unexpected pass" message="passed, but' "$work/stale.xml" ||
  fail "the unexpected pass is not a <failure> in the JUnit XML"

# A stale unsupported entry fails the run the same way.
printf 'memory.query  unsupported  no memory\n' >"$work/unsupported.txt"
run "$good" --filter memory.query --expectations "$work/unsupported.txt"
[ "$rc" = 1 ] || fail "a stale unsupported entry: exit status $rc, expected 1"
says "XPASS memory.query: passed, but $work/unsupported.txt:1 says it is unsupported (no memory)"

# An unsupported test the suite skips: a skip with both reasons, exit 0.
printf 'copy.peer  unsupported  one device\n' >"$work/peer.txt"
run "$good" --filter copy.peer --expectations "$work/peer.txt"
[ "$rc" = 0 ] || { echo "$out"; fail "an unsupported test that skips: exit status $rc"; }
says "(unsupported, $work/peer.txt:1: one device)"
says "0 passed, 0 failed, 1 skipped, 0 expected failures, 0 unexpected passes"

# A real expected failure: counted, reported with its reason, exit 0. The
# first matching entry decides (memory.query passes under `pass`).
printf 'memory.query pass\nmemory.*  xfail  checks no sizes (by design)\n' >"$work/xfail.txt"
run "$failing" --filter memory.zero_size --filter memory.query --expectations "$work/xfail.txt" \
  --junit "$work/xfail.xml"
[ "$rc" = 0 ] || { echo "$out"; fail "an expected failure: exit status $rc, expected 0"; }
says "(expected failure, $work/xfail.txt:2: checks no sizes (by design))"
grep -q '^XFAIL memory.zero_size: ' <<<"$out" || fail "no XFAIL line"
says "1 passed, 0 failed, 0 skipped, 1 expected failures, 0 unexpected passes"
grep -q 'failures="0" skipped="1" expected_failures="1" unexpected_passes="0"' "$work/xfail.xml" ||
  { cat "$work/xfail.xml"; fail "the JUnit counts of an expected failure"; }
# Without the file the same failure fails the run.
run "$failing" --filter memory.zero_size
[ "$rc" = 1 ] || fail "memory.zero_size of the failing plugin did not fail without the file"

# Malformed and stale files are usage errors (2) naming file and line.
bad() {
  printf '%b' "$2" >"$work/bad.txt"
  run "$good" --filter abi.load --expectations "$work/bad.txt"
  [ "$rc" = 2 ] || { echo "$out"; fail "$1: exit status $rc, expected 2"; }
  says "$work/bad.txt:$3: $4"
}
bad "an unknown kind" 'abi.load  maybe  who knows\n' 1 "'maybe' is not pass, unsupported or xfail"
bad "an xfail without a reason" '\n# a comment\nabi.load xfail\n' 3 "xfail needs a reason"
bad "a glob matching no test" 'abi.lod  xfail  typo\n' 1 "'abi.lod' matches no test of the suite"
bad "a glob without a kind" 'abi.load\n' 1 "'abi.load' has no kind"
run "$good" --expectations "$work/missing.txt"
[ "$rc" = 2 ] || fail "a missing file: exit status $rc, expected 2"
says "cannot read expectation file $work/missing.txt"
echo "check_expectations: ok"
