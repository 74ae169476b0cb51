#!/usr/bin/env bash
# tools/test-summary, the closing report of `tools/quickstart test`: counts
# every lane's results (a meson testlog, a JUnit file, the fuzz results), counts
# a lane that failed without a failing test as one failure, and warns with the
# slowest tests only past the budget.
#
#   check_test_summary.sh TOOLS_TEST_SUMMARY
set -uo pipefail
summary=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "check_test_summary: FAIL: $*"; printf '%s\n' "${out:-}"; exit 1; }

cat >"$work/main.json" <<'JSON'
{"name": "xdev:core / a", "result": "OK", "duration": 1.5}
{"name": "xdev:core / b", "result": "SKIP", "duration": 0.1}
{"name": "xdev:core / c", "result": "EXPECTEDFAIL", "duration": 2.0}
{"name": "xdev:core / d", "result": "TIMEOUT", "duration": 300.0}
JSON
cat >"$work/python.xml" <<'XML'
<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" tests="4">
<testcase classname="tests.python.test_a" name="test_ok" time="0.5"/>
<testcase classname="tests.python.test_a" name="test_skip" time="0.0"><skipped message="no GPU"/></testcase>
<testcase classname="tests.python.test_a" name="test_fail" time="7.0"><failure message="x"/></testcase>
<testcase classname="tests.python.test_a" name="test_error" time="0.1"><error message="y"/></testcase>
</testsuite></testsuites>
XML
printf '{"name": "fuzz / fuzz_env", "result": "OK", "duration": 30}\n' >"$work/fuzz.json"

# Under the budget: per-lane lines, no warning, the closing line over all.
out=$("$summary" --elapsed 600 --budget 2700 main:1:100:"$work/main.json" \
      python:1:50:"$work/python.xml" fuzz:0:31:"$work/fuzz.json") || fail "exit status $?"
[ "$(tail -n 1 <<<"$out")" = "tests: 4 passed, 3 failed, 2 skipped" ] || fail "closing line"
grep -q 'FAILED in the main lane: xdev:core / d' <<<"$out" || fail "the timed-out test is not named"
grep -q 'FAILED in the python lane: tests.python.test_a::test_error' <<<"$out" || fail "the error is not named"
! grep -q WARNING <<<"$out" || fail "a warning under the budget"

# A lane that failed and wrote nothing (its build broke) is one failure; a
# lane that failed with only passing results is one too.
out=$("$summary" asan:1:20:"$work/missing.json" tsan:2:5:"$work/fuzz.json") || fail "exit status $?"
[ "$(tail -n 1 <<<"$out")" = "tests: 1 passed, 2 failed, 0 skipped" ] || fail "failed lanes not counted"
grep -q 'FAILED in the asan lane: asan lane: exit status 1, wrote no results' <<<"$out" ||
  fail "the lane without results is not named"

# Over the budget: a warning and the slowest tests, slowest first.
out=$("$summary" --elapsed 2800 --budget 2700 main:1:100:"$work/main.json" \
      python:1:50:"$work/python.xml") || fail "exit status $?"
grep -q 'WARNING: this run took 46.7 minutes, over the 45-minute budget' <<<"$out" || fail "no warning"
first=$(grep -A1 'The slowest tests' <<<"$out" | tail -n 1)
grep -q 'xdev:core / d' <<<"$first" || fail "the slowest test is not first: $first"
echo "check_test_summary: ok"
