#!/usr/bin/env bash
# tests/test_sanitized.sh - the command line's shell tests of bad input, bounds and hostile outputs (test_cli.sh,
# test_outputs.sh) again on build/dpprof-san, the program built with AddressSanitizer and UndefinedBehaviorSanitizer
# (no CUDA), and dpprof fit's (test_fit.sh): a memory error in a path only the command line reaches fails here. every sanitizer report is a
# file in a scratch folder; none may be there at the end. needs make build/dpprof-san. run by make test.
set -u
cd "$(dirname "$0")/.."
. tests/lib.bash
if [ ! -x build/dpprof-san ]; then echo "FAIL build/dpprof-san is missing (make build/dpprof-san)"; exit 1; fi
export DPPROF_TEST_BIN=$PWD/build/dpprof-san DPPROF_TEST_SANITIZED=1
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:log_path=$tmp/asan" UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:log_path=$tmp/ubsan"
for t in test_cli test_outputs test_fit; do
    bash "tests/$t.sh" 2>&1 | sed -n 's/^\(PASS\|FAIL\|SKIP\) /\1 sanitized: /p'
done
reports=$(ls "$tmp" | grep -c '^[au][sb]san\.' || true)
check "no sanitizer report from the command line's tests ($reports; the first: $(cat "$tmp"/[au][sb]san.* 2>/dev/null | grep -m1 -E 'ERROR|runtime error'))" test "$reports" -eq 0
