#!/usr/bin/env bash
# The runner's command line: --list, --filter (glob or substring), --exclude,
# --junit, --jobs, and the exit status of a usage error.
#
#   check_runner_cli.sh RUNNER GOOD_PLUGIN
set -uo pipefail
runner=$1 plugin=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_runner_cli: FAIL: $*"; exit 1; }

all=$("$runner" --list) || fail "--list failed"
for group in abi device memory copy stream event concurrency kernel error; do
  grep -q "^$group\." <<<"$all" || fail "--list has no $group.* test"
done
[ "$(grep -c . <<<"$all")" -ge 50 ] || fail "--list lists only $(grep -c . <<<"$all") tests"

# A glob is matched against the whole name, anything else is a substring.
glob=$("$runner" --list --filter 'kernel.*')
[ "$(grep -vc '^kernel\.' <<<"$glob")" = 0 ] || fail "glob kernel.* matched other tests"
grep -qx 'kernel.MatMul' <<<"$glob" || fail "glob kernel.* missed kernel.MatMul"
[ -z "$("$runner" --list --filter 'Mat*')" ] || fail "a glob must match the whole name"
sub=$("$runner" --list --filter MatMul)
# (a substring anywhere in the name: BatchMatMulV2 has it too)
[ "$sub" = $'kernel.MatMul\nkernel.BatchMatMulV2' ] || fail "substring MatMul gave: $sub"
two=$("$runner" --list --filter kernel.Add --filter memory.query --exclude AddN)
[ "$two" = $'memory.query\nkernel.Add' ] || fail "two filters and an exclude gave: $two"

# A usage error is 2, not a test failure.
"$runner" >/dev/null 2>&1
[ $? = 2 ] || fail "no plugin file: exit status is not 2"
"$runner" --filter no-such-test "$plugin" >/dev/null 2>&1
[ $? = 2 ] || fail "a filter matching nothing: exit status is not 2"

# JUnit: one testcase per test, skips and failures marked.
out=$("$runner" --filter 'abi.*' --filter copy.peer --junit "$work/r.xml" "$plugin") ||
  { echo "$out"; fail "the run failed"; }
grep -q '^<testsuites name="xdev-conformance" tests="8" failures="0" skipped="1"' "$work/r.xml" ||
  { cat "$work/r.xml"; fail "unexpected <testsuites> header"; }
[ "$(grep -c '<testcase ' "$work/r.xml")" = 8 ] || fail "not 8 testcases"
grep -q '<skipped message="the plugin does not declare XDEV_CAP_PEER_COPY"/>' "$work/r.xml" ||
  fail "the skip reason is not in the XML"
# --jobs N runs N tests at a time and prints the same lines in the same order.
one=$("$runner" --filter 'abi.*' --filter 'memory.*' --filter copy.peer "$plugin") ||
  { echo "$one"; fail "the run with one job failed"; }
three=$("$runner" --jobs 3 --filter 'abi.*' --filter 'memory.*' --filter copy.peer "$plugin") ||
  { echo "$three"; fail "the run with --jobs 3 failed"; }
[ "$one" = "$three" ] || { diff <(echo "$one") <(echo "$three"); fail "--jobs 3 printed other lines"; }
err=$("$runner" --jobs 0 "$plugin" 2>&1)
rc=$?
[ "$rc" != 0 ] && [ "$rc" != 1 ] || fail "--jobs 0: exit status $rc (a usage error is neither 0 nor 1)"
grep -q -- '--jobs' <<<"$err" || fail "--jobs 0: the error does not name --jobs: $err"
echo "check_runner_cli: ok"
