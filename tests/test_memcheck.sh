#!/usr/bin/env bash
# tests/test_memcheck.sh - real runs of dpprof under valgrind memcheck: every algorithm on a tiny cpu
# configuration (with LoRA, Poisson sampling, per-layer clipping, cls data, every output), the oom and
# bad-input exits, a dry run of a large preset, plot, epsilon, a 2-configuration sweep (its children
# traced too) and the report on it. each run must end with the expected exit status and no valgrind
# error: no invalid read or write, no use of uninitialised memory, no definite leak.
# runs build/dpprof-nocuda (make build/dpprof-nocuda; make test builds it): a binary linked with
# libcudart makes valgrind report on the CUDA runtime, not on dpprof. SKIP without valgrind.
# run by make test (from the repository root). one line per check: PASS, FAIL or SKIP.
set -u
cd "$(dirname "$0")/.."
bin=build/dpprof-nocuda
if ! command -v valgrind >/dev/null 2>&1; then
    echo "SKIP valgrind is not installed: no memcheck runs"
    exit 0
fi
[ -x "$bin" ] || { echo "FAIL $bin not built (make build/dpprof-nocuda)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }

VG=(valgrind --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite -q)
n=0
# vg NAME EXPECTED-EXIT ARGS...: one run under memcheck; valgrind's messages go to the log
vg() {
    local name=$1 want=$2 rc log; shift 2
    n=$((n + 1))
    log=$tmp/vg_$n.log
    "${VG[@]}" --log-file="$log.%p" "$bin" "$@" >"$tmp/out_$n" 2>"$tmp/err_$n"; rc=$?
    cat "$log".* >"$log" 2>/dev/null; rm -f "$log".*
    if [[ "|$want|" == *"|$rc|"* ]] && ! grep -q '^==[0-9]*==' "$log"; then
        pass "memcheck: $name -> exit $rc, no valgrind error"
    else
        fail "memcheck: $name: want exit $want and a clean valgrind log, got exit $rc"
        grep -m 20 '^==[0-9]*==' "$log" | sed 's/^/    /'
        tail -3 "$tmp/err_$n" | sed 's/^/    | /'
    fi
}

tiny="--preset tiny --seq 8 --batch 2 --steps 1 --backend cpu --quiet"
for algo in vanilla persample ghost ghost_bk flash flash_bk auto; do
    vg "cpu $algo" 0 run $tiny --algo "$algo" --out "$tmp/$algo.json"
done
for algo in persample ghost_bk flash; do
    vg "cpu $algo --lora-rank 2" 0 run $tiny --algo "$algo" --lora-rank 2 --lora-targets q,v,down --out "$tmp/lora-$algo.json"
done
for algo in ghost flash_bk; do
    vg "cpu $algo --poisson --dataset-size 20" 0 run $tiny --algo "$algo" --poisson --dataset-size 20 --sigma 1 --out "$tmp/poisson-$algo.json"
done
vg "cpu flash per-layer clipping, physical batch 1, warm-up, sgd" 0 run $tiny --algo flash --clipping per-layer --physical-batch 1 --warmup 1 --optimizer sgd --out "$tmp/perlayer.json"
# 44513000 bytes: between the peaks of flash (44512580) and flash_bk (44513528) with this poisson draw, the 40 MiB workspace included: auto takes the second backward
vg "cpu auto under a memory limit (its dry probe), --target-epsilon" 0 run --preset tiny --seq 16 --batch 4 --steps 1 --backend cpu --quiet \
    --algo auto --memory-limit 44513000 --target-epsilon 3 --poisson --dataset-size 100 --out "$tmp/auto-limit.json"
check "auto under the limit chose the second backward" grep -q '"clipped_sum": "second backward"' "$tmp/auto-limit.json"
printf '0\thello world\n1\tgoodbye world\n\n1\tanother line\r\n' >"$tmp/cls.txt"
vg "cpu cls on --data with --trace and --dump" 0 run --preset tiny --task cls --classes 2 --seq 8 --batch 2 --steps 1 --backend cpu --quiet \
    --algo ghost_bk --data "$tmp/cls.txt" --out "$tmp/cls.json" --trace "$tmp/cls.trace.json" --dump "$tmp/dump"
head -c 2000 /dev/zero | tr '\0' 'a' >"$tmp/lm.txt"
vg "cpu lm on --data" 0 run $tiny --data "$tmp/lm.txt" --out "$tmp/lm.json"
vg "over the memory limit (oom json)" 3 run $tiny --algo ghost --memory-limit 100K --out "$tmp/oom.json"
check "the oom run wrote its json" grep -q '"status": "oom"' "$tmp/oom.json"
vg "bad input: --data on a directory" 2 run $tiny --data "$tmp" --out "$tmp/never.json"
vg "bad input: heads do not divide hidden" 2 run $tiny --heads 5 --out "$tmp/never.json"
vg "bad cls data" 2 run --preset tiny --task cls --seq 8 --batch 2 --steps 1 --backend cpu --data "$tmp/lm.txt" --out "$tmp/never.json"
check "bad input wrote no file" test ! -e "$tmp/never.json" -a ! -e "$tmp/never.json.tmp"
vg "dry llama-3.1-8b T=16384 B=1" 0 run --preset llama-3.1-8b --seq 16384 --batch 1 --steps 1 --backend dry --quiet --out "$tmp/dry8b.json"
vg "dry llama-3.2-1b flash_bk with lora" 0 run --preset llama-3.2-1b --seq 1024 --batch 4 --physical-batch 2 --algo flash_bk --lora-rank 16 --steps 1 --backend dry --quiet --timeline none --out "$tmp/dry1b.json"
vg "plot timeline (cpu result)" 0 plot timeline "$tmp/flash_bk.json" --out "$tmp/flash_bk.png"
vg "plot timeline (dry result)" 0 plot timeline "$tmp/dry8b.json" --out "$tmp/dry8b.png" --title "llama 8b"
check "plot wrote PNGs" test -s "$tmp/flash_bk.png" -a -s "$tmp/dry8b.png"
vg "plot timeline on a file that is not a result" 2 plot timeline "$tmp/cls.txt" --out "$tmp/never.png"
vg "fit: llama-3.2-1b on an H200 (the committed runs read, the time model), --json, --plot" 0 fit --preset llama-3.2-1b --seq 1024 --batch 16 --dtype bf16 --device H200 \
    --target-epsilon 8 --dataset-size 10000 --algo ghost_bk,flash_bk --json "$tmp/fit.json" --plot "$tmp/fit.png"
vg "fit: nothing fits, the GPU count that would (ZeRO 3)" 3 fit --preset llama-3.1-8b --seq 512 --batch 8 --gpu-memory 40G --sigma 1 --algo flash_bk --checkpoint layers
vg "fit: bad input" 2 fit --preset tiny --seq 64 --batch 8 --device H10 --sigma 1
vg "epsilon" 0 epsilon --sigma 1.1 --sample-rate 0.004 --steps 1000 --delta 1e-5
vg "epsilon --target-epsilon" 0 epsilon --target-epsilon 2 --sample-rate 0.01 --steps 100

# a 2-configuration sweep and its report. the sweep and the report's timeline rerun start their
# children as /proc/self/exe, which under valgrind is valgrind's own tool binary, not dpprof
# (--trace-children cannot follow it either): the parent is checked here, the children are the
# `dpprof run`s above. the results that the report reads come from the same binary run natively.
cat >"$tmp/mc.conf" <<'CONF'
name = mc
description = memcheck: two dp configurations on the tiny model
base = --preset tiny --backend cpu --steps 1 --seq 8 --batch 2 --sigma 1 --dataset-size 100
axis algo = ghost: --algo ghost | flash_bk: --algo flash_bk
figure peak = bars x=algo value=peak_gib
figure parts = stacked group=algo ref=ghost
figure tl = timeline config=ghost
table = breakdown group=algo
CONF
vg "sweep of 2 configurations (the parent)" 0 sweep "$tmp/mc.conf" --out-dir "$tmp/vgsweep" --jobs 2
check "sweep under valgrind: summary.csv has both rows" test "$(tail -n +2 "$tmp/vgsweep/summary.csv" 2>/dev/null | cut -d, -f1 | tr '\n' ' ')" = "mc-ghost mc-flash_bk "
vg "sweep --dry-run" 0 sweep "$tmp/mc.conf" --out-dir "$tmp/never" --dry-run
"$bin" sweep "$tmp/mc.conf" --out-dir "$tmp/sweep" 2>/dev/null
check "native sweep: both configurations ok" test "$(tail -n +2 "$tmp/sweep/summary.csv" 2>/dev/null | cut -d, -f3 | tr '\n' ' ')" = "ok ok "
# the timeline figure reruns its configuration unless DIR/timelines/ID.json exists: without it the
# rerun cannot start under valgrind (exit 1), with it (made natively) the report runs through
vg "report, the timeline rerun (exit 0, or 1 where valgrind cannot start it)" "0|1" report "$tmp/mc.conf" --results "$tmp/sweep" --figures "$tmp/fig" --tables "$tmp/tab"
"$bin" report "$tmp/mc.conf" --results "$tmp/sweep" --figures "$tmp/fig0" --tables "$tmp/tab0" >/dev/null 2>&1
rm -rf "$tmp/fig" "$tmp/tab"
vg "report on the 2-configuration sweep" 0 report "$tmp/mc.conf" --results "$tmp/sweep" --figures "$tmp/fig" --tables "$tmp/tab"
check "report wrote its figures, table, macros and summary" test -s "$tmp/fig/mc-peak.png" -a -s "$tmp/fig/mc-parts.png" -a -s "$tmp/fig/mc-tl.png" -a -s "$tmp/tab/mc-table.tex" -a -s "$tmp/tab/mc-macros.tex" -a -s "$tmp/sweep/summary.txt"
check "report under valgrind writes what it writes natively" bash -c "cmp -s '$tmp/tab/mc-table.tex' '$tmp/tab0/mc-table.tex' && cmp -s '$tmp/fig/mc-peak.png' '$tmp/fig0/mc-peak.png'"
vg "sweep: not an experiment file" 2 sweep "$tmp/cls.txt" --out-dir "$tmp/never"
printf "name = mc\nbase =\naxis algo = a: | b:\nfigure x = bars x=seqq\n" >"$tmp/bad.conf"
vg "report: a bad figure line" 2 report "$tmp/bad.conf" --results "$tmp/sweep"
