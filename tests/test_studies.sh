#!/usr/bin/env bash
# tests/test_studies.sh - the studies on a backend of the user's choice: `make NAME BACKEND=cpu` (and
# BACKEND=cuda on build/dpprof-cuemu, the cpu emulator of the cuda backend) runs an experiment file's
# configurations there, whatever its --backend dry says, into a folder of its own (not the dry results),
# and the report says what measured each number: the summary's time, memory-per-time and per-phase
# lines, the table's source line, the figure's title. run by make test (from the repository root, after make).
set -u
cd "$(dirname "$0")/.."
bin=./dpprof
. tests/lib.bash

mkdir -p "$tmp/exp"
cat >"$tmp/exp/tiny.conf" <<'CONF'
name = tiny
base = --preset tiny --seq 16 --batch 4 --steps 2 --warmup 1 --backend dry --sigma 1.0 --dataset-size 1000 --timeline none
axis algo = vanilla: --algo vanilla --sigma 0 | persample: --algo persample | flash_bk: --algo flash_bk
figure step = bars x=algo value=step_ms
figure tradeoff = tradeoff series=algo
table = pivot rows=algo cols=algo value=step_ms
CONF

# sweep --backend: after the file's options, so it wins
"$bin" sweep "$tmp/exp/tiny.conf" --out-dir "$tmp/dry" --dry-run >"$tmp/cmds" 2>&1
"$bin" sweep "$tmp/exp/tiny.conf" --out-dir "$tmp/dry" --dry-run --backend cpu >"$tmp/cmds-cpu" 2>&1
check "sweep --backend cpu puts --backend cpu after the file's --backend dry" \
    bash -c "[ \$(grep -c -- '--backend dry .*--backend cpu --experiment tiny' '$tmp/cmds-cpu') -eq 3 ] && ! grep -q -- '--backend cpu' '$tmp/cmds'"
err=$("$bin" sweep "$tmp/exp/tiny.conf" --out-dir "$tmp/dry" --backend gpu 2>&1); rc=$?
check "sweep --backend gpu is refused with exit 2 (got $rc: $err)" bash -c "[ $rc -eq 2 ] && grep -qF \"expected auto, cpu, cuda or dry\" <<<\"\$1\"" _ "$err"

# make NAME BACKEND=cpu: results, figures and tables in MEASURED_DIR/cpu/, timed
make --no-print-directory tiny EXPERIMENTS_DIR="$tmp/exp" MEASURED_DIR="$tmp/m" BACKEND=cpu >"$tmp/make-cpu.log" 2>&1; rc=$?
check "make tiny BACKEND=cpu exits 0 (got $rc)" test $rc -eq 0
check "its results are in MEASURED_DIR/cpu/tiny, its figures and tables beside them" \
    test -s "$tmp/m/cpu/tiny/tiny-vanilla.json" -a -s "$tmp/m/cpu/figures/tiny-step.png" -a -s "$tmp/m/cpu/generated/tiny-table.tex"
check "the runs were on the cpu backend" bash -c "[ \$(grep -l '\"backend\": \"cpu\"' '$tmp/m/cpu/tiny/'tiny-*.json | wc -l) -eq 3 ]"
s="$tmp/m/cpu/tiny/summary.txt"
check "the summary says what measured the time" grep -qF 'time: measured on cpu (3 results)' "$s"
check "the summary has each configuration's step, tokens/s, peak x step and ms per phase" \
    bash -c "[ \$(grep -Ec '^    time \\(cpu\\): step [0-9.]+ ms, [0-9.]+ tokens/s, peak x step [0-9.]+ GiB s; ms per step: forward [0-9.]+, backward [0-9.]+' '$s') -eq 3 ]"
check "the summary has each configuration's memory at the peak by category" bash -c "[ \$(grep -c '^    memory at the peak (GiB): model_parameters' '$s') -eq 3 ]"
check "the table of a measured metric names what measured it" grep -qxF '% measured on: cpu (3 results)' "$tmp/m/cpu/generated/tiny-table.tex"
check "the table has the measured times" bash -c "grep -Eq '^vanilla & [0-9]+ & -- & --' '$tmp/m/cpu/generated/tiny-table.tex'"
check "the trade-off figure is drawn from the timed results" bash -c "[ -s '$tmp/m/cpu/figures/tiny-tradeoff.png' ] && ! grep -q 'no timed result' '$s'"
check "gib_s macros: peak x measured step" bash -c "[ \$(grep -c '{gib_s}' '$tmp/m/cpu/generated/tiny-macros.tex') -eq 3 ]"

# the same file on dry (the default): nothing timed, and the figure and table say so
make --no-print-directory tiny EXPERIMENTS_DIR="$tmp/exp" MEASURED_DIR="$tmp/m" -n >"$tmp/make-dry.n" 2>&1
check "make tiny (BACKEND=dry) still writes results/tiny, figures/ and paper/generated/" \
    bash -c "grep -qF -- '--out-dir results/tiny --jobs' '$tmp/make-dry.n' && grep -qF -- '--figures figures --tables paper/generated' '$tmp/make-dry.n' && ! grep -q -- '--backend' '$tmp/make-dry.n'"
"$bin" sweep "$tmp/exp/tiny.conf" --out-dir "$tmp/dry" >/dev/null 2>&1
"$bin" report "$tmp/exp/tiny.conf" --results "$tmp/dry" --figures "$tmp/dry/f" --tables "$tmp/dry/t" >/dev/null 2>&1; rc=$?
check "the dry report exits 0 (got $rc)" test $rc -eq 0
check "the dry table of a measured metric says nothing measured it" grep -qxF '% measured on: none' "$tmp/dry/t/tiny-table.tex"
check "the dry summary says time was not measured" grep -q 'not measured (no GPU results)' "$tmp/dry/summary.txt"
check "the dry trade-off figure is drawn, and names each configuration without a timed result" \
    bash -c "[ -s '$tmp/dry/f/tiny-tradeoff.png' ] && grep -qF 'tradeoff: no timed result for vanilla (not timed: memory only), persample (not timed: memory only), flash_bk (not timed: memory only)' '$tmp/dry/summary.txt'"

# BACKEND=cuda on the cpu emulator of cuda: the folder is named after the device
emu=build/dpprof-cuemu
if [ -x "$emu" ]; then
    make --no-print-directory tiny EXPERIMENTS_DIR="$tmp/exp" MEASURED_DIR="$tmp/m" BACKEND=cuda DPPROF_BIN="$emu" >"$tmp/make-cuda.log" 2>&1; rc=$?
    d="$tmp/m/cuda-cuemu"
    check "make tiny BACKEND=cuda DPPROF_BIN=$emu exits 0 (got $rc)" test $rc -eq 0
    check "its results are in MEASURED_DIR/cuda-DEVICE/ ($(ls "$tmp/m" | tr '\n' ' '))" bash -c "ls -d '$d'*/tiny >/dev/null 2>&1"
    check "the summary names the backend and the device" bash -c "grep -qF 'time: measured on cuda on cuemu (cpu emulation of cuda) (3 results)' '$d'*/tiny/summary.txt"
else
    fail "$emu is missing (make test builds it)"
fi
if [ -x "$emu" ]; then
    check "on cuda a snapshot's reserved_mb is the driver's figure (a number)" \
        bash -c "grep -Eq '\"reserved_mb\": [0-9]' '$d'*/tiny/tiny-flash_bk.json"
fi
check "on cpu a snapshot's reserved_mb is null (nothing reserved beyond the live bytes)" \
    bash -c "grep -q '\"reserved_mb\": null' '$tmp/m/cpu/tiny/tiny-flash_bk.json' && ! grep -Eq '\"reserved_mb\": [0-9]' '$tmp/m/cpu/tiny/tiny-flash_bk.json'"
# total_allocated_mb: every byte ever allocated, so at least what is live at the end and at the peak
check "total_allocated_mb is cumulative: at least the peak" bash -c "python3 - '$tmp/m/cpu/tiny/tiny-flash_bk.json' <<'PY'
import json, sys
b = json.load(open(sys.argv[1]))['breakdown']
sys.exit(0 if b['total_allocated_mb'] * 2**20 >= b['bytes']['peak'] > b['bytes']['final'] else 1)
PY"

# budgets: a configuration over the memory limit is oom in the table and labelled oom under its bar;
# phases figures of memory (value=peak, setup phases too) and of measured dram (none on dry: said)
cat >"$tmp/exp/budget.conf" <<'CONF'
name = budget
base = --preset tiny --seq 64 --batch 16 --steps 1 --backend dry --sigma 1.0 --dataset-size 1000 --memory-limit 52M --timeline none
axis algo = vanilla: --algo vanilla --sigma 0 | persample: --algo persample
figure peak = bars x=algo value=peak_gib
figure stages = phases group=algo value=peak
figure dram = phases group=algo value=dram
table = pivot rows=algo cols=algo value=peak_gib
CONF
"$bin" sweep "$tmp/exp/budget.conf" --out-dir "$tmp/b" >/dev/null 2>&1
"$bin" report "$tmp/exp/budget.conf" --results "$tmp/b" --figures "$tmp/b/f" --tables "$tmp/b/t" >/dev/null 2>"$tmp/b.err"; rc=$?
check "report with an oom configuration exits 0 (got $rc: $(head -c 200 "$tmp/b.err"))" test $rc -eq 0
check "the table says oom where the configuration does not fit" grep -q '^persample & -- & oom' "$tmp/b/t/budget-table.tex"
check "the bar of the oom configuration is labelled oom" grep -qF 'peak: algo=persample has no peak_gib (oom): no bar, labelled oom' "$tmp/b/summary.txt"
check "the stage figure (live memory at each phase's peak) and the dram figure (nothing measured: said) are drawn" \
    test -s "$tmp/b/f/budget-stages.png" -a -s "$tmp/b/f/budget-dram.png"

# plot timeline of a sweep's result (no event log) says what is missing
err=$("$bin" plot timeline "$tmp/b/budget-vanilla.json" --out "$tmp/tl.png" 2>&1); rc=$?
check "plot timeline of a sweep result: exit 2, names the missing event log and the way to get it (got: $err)" \
    bash -c "[ $rc -eq 2 ] && grep -qF 'its \"timeline\" is null: the run kept no event log (--timeline none' <<<\"\$1\" && grep -qF 'timeline config=LABELS' <<<\"\$1\"" _ "$err"

# every study that models one card fits it by dpprof fit's rule (--device H100): no experiment file sets a
# --memory-limit of its own, and every file that names the 80 GB H100 takes --device H100
devs=$(grep -l -- '--device H100' experiments/*.conf | wc -l)
check "no experiment file sets a --memory-limit; $devs take --device H100" bash -c "[ $devs -ge 7 ] && ! grep -q -- '--memory-limit' experiments/*.conf"
check "every experiment file that names the 80 GB H100 takes --device H100" \
    bash -c "for f in \$(grep -l '80 GB H100' experiments/*.conf); do grep -q -- '--device H100' \"\$f\" || { echo \"\$f\"; exit 1; }; done"
