#!/usr/bin/env bash
# tests/run.sh BINDIR - runs every test program and shell test (TEST_SCRIPTS: only the scripts it names; TEST_QUICK:
# the privacy test's shorter sweeps; make check sets both), counts PASS/FAIL/SKIP lines, and
# ends with "N passed, N failed, N skipped". a program that exits non-zero without a FAIL line (a crash, a
# sanitizer report) counts as one failure. exit status 1 if anything failed. the test programs and the
# shell tests run as two lanes side by side (TEST_LANES=1: one after the other), each test's line printed
# when it ends.
set -u
bindir=${1:-build/tests}
cd "$(dirname "$0")/.."
logdir=$bindir/logs
mkdir -p "$logdir"
counts=$logdir/counts
: >"$counts"
run_one() { # name, command...: its line, and "passed failed skipped" appended to the counts
    local name=$1; shift
    local log=$logdir/$name.log start end rc p f s
    start=$EPOCHREALTIME
    "$@" >"$log" 2>&1
    rc=$?
    end=$EPOCHREALTIME
    p=$(grep -c '^PASS ' "$log"); f=$(grep -c '^FAIL ' "$log"); s=$(grep -c '^SKIP ' "$log")
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        f=1
        echo "FAIL $name exited with status $rc without a FAIL line (crash or sanitizer report):" >>"$log"
    fi
    echo "$p $f $s" >>"$counts"
    {
        printf '%-22s %4d passed %3d failed %3d skipped  %6.1fs\n' "$name" "$p" "$f" "$s" "$(awk "BEGIN{print $end - $start}")"
        if [ "$f" -ne 0 ]; then grep -E '^FAIL|runtime error|ERROR: AddressSanitizer' "$log" | head -20 | sed 's/^/    /'; tail -5 "$log" | sed 's/^/    | /'; fi
    } >"$log.line"
    cat "$log.line" # one write: the two lanes' lines do not interleave
}
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export CUEMU_STRICT=1 # the cuda emulator (tests/cuemu.h) aborts on a barrier that part of a block has exited
programs() {
    local t
    for t in "$bindir"/test_*; do
        [ -x "$t" ] && [ -f "$t" ] || continue
        # TEST_QUICK (make check): the privacy test's shorter sweeps
        if [ -n "${TEST_QUICK:-}" ] && [ "$(basename "$t")" = test_privacy ]; then run_one test_privacy "$t" quick; else run_one "$(basename "$t")" "$t"; fi
    done
    # the emulated gpu test again with the threads of every block (and the blocks) in other orders: a race
    # that one order hides shows in another (tests/cuemu.h, CUEMU_SCHEDULE; test_emu shows each catching one)
    if [ -x "$bindir/test_cuemu" ]; then
        run_one test_cuemu_reverse env CUEMU_SCHEDULE=reverse "$bindir/test_cuemu" model attn dp # the kernels; whole steps (steps) run in order above
        run_one test_cuemu_random env CUEMU_SCHEDULE=random:1 "$bindir/test_cuemu" model attn dp
    fi
}
scripts() {
    local t
    for t in tests/*.sh; do
        [ "$(basename "$t")" = run.sh ] && continue
        # TEST_SCRIPTS (make check): only the scripts named
        if [ -n "${TEST_SCRIPTS:-}" ] && ! grep -qw -- "$(basename "$t" .sh)" <<<"$TEST_SCRIPTS"; then continue; fi
        run_one "$(basename "$t" .sh)" bash "$t"
    done
}
if [ "${TEST_LANES:-2}" = 1 ]; then
    programs
    scripts
else
    programs &
    lane=$!
    scripts
    wait "$lane"
fi
read -r pass fail skip < <(awk '{p += $1; f += $2; s += $3} END {print p + 0, f + 0, s + 0}' "$counts")
if [ "$(wc -l <"$counts")" = 0 ]; then fail=1; echo "FAIL no test ran"; fi
echo "logs: $logdir"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
