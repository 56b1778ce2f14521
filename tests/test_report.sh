#!/usr/bin/env bash
# tests/test_report.sh - dpprof report on a small sweep: figures, table, macros and summary exist,
# name the right numbers, come out byte-identical when regenerated, and bad figure lines are named
# by file and line. run by make test (from the repository root, after make).
set -u
cd "$(dirname "$0")/.."
bin=./dpprof
. tests/lib.bash

cat >"$tmp/small.conf" <<'CONF'
name = small
base = --preset tiny --backend dry --steps 1 --seq 64 --sigma 1 --dataset-size 1000 --timeline none
axis algo = vanilla: --algo vanilla --sigma 0 | ghost: --algo ghost | flash_bk: --algo flash_bk
axis batch = 2 | 4
axis lim = free: | tight: --memory-limit 2M
figure peak = bars x=batch series=algo value=peak_gib where=lim:free
figure mem = stacked group=algo ref=vanilla where=batch:4,lim:free
figure tl = timeline config=ghost-2-free
figure tls = timeline config=vanilla-2-free,ghost-2-free,flash_bk-4-free
figure ph = phases group=algo where=batch:4,lim:free
figure lt = bars x=batch series=algo value=peak_gib where=lim:free title="Peak memory, tiny model" xlabel="batch B"
figure ln = lines x=batch series=algo value=overhead where=lim:tight
table = pivot rows=algo cols=batch value=peak_gib where=lim:tight
table bd = breakdown group=algo where=batch:4,lim:free
CONF
"$bin" sweep "$tmp/small.conf" --out-dir "$tmp/r" 2>/dev/null; rc=$?
check "sweep of the small experiment exits 0" test $rc -eq 0
"$bin" report "$tmp/small.conf" --results "$tmp/r" --figures "$tmp/f" --tables "$tmp/t"; rc=$?
check "report exits 0" test $rc -eq 0
for f in small-peak small-mem small-tl small-tls small-ph small-ln; do
    check "figure $f.png is a PNG" bash -c "head -c 8 '$tmp/f/$f.png' | od -An -t x1 | tr -d ' \n' | grep -qx 89504e470d0a1a0a"
done
check "a quoted title and axis label are read whole: the figure is drawn" bash -c "head -c 8 '$tmp/f/small-lt.png' | od -An -t x1 | tr -d ' \n' | grep -qx 89504e470d0a1a0a"
check "pivot table: the columns' axis in words over their labels, the rows' axis in words" \
    bash -c "grep -qF '& \\multicolumn{2}{c}{logical batch B}' '$tmp/t/small-table.tex' && grep -qF 'algorithm & 2 & 4' '$tmp/t/small-table.tex'"
check "breakdown table: no column of categories that no row holds (no LoRA, no per-sample gradients)" \
    bash -c "grep -q 'peak & \\\$\\\\times\\\$non-private' '$tmp/t/small-bd-table.tex' && ! grep -qE 'LoRA|per-sample' '$tmp/t/small-bd-table.tex'"
printf 'name = small\nbase = --preset tiny --backend dry\naxis algo = vanilla: --algo vanilla\nfigure x = bars x=algo value=peak_gib title="no end\n' >"$tmp/badq.conf"
err=$("$bin" report "$tmp/badq.conf" --results "$tmp/r" --figures "$tmp/f" --tables "$tmp/t" 2>&1); rc=$?
check "a quoted value without its closing quote: exit 2 and FILE:LINE (got: $err)" bash -c "[ $rc -eq 2 ] && grep -qF 'badq.conf:4: title=\"...: no closing quote' <<<\"\$1\"" _ "$err"
check "table written as booktabs" bash -c "grep -q '\\\\toprule' '$tmp/t/small-table.tex' && grep -q '\\\\bottomrule' '$tmp/t/small-table.tex'"
check "the table shows oom where the memory limit was too small" grep -q '^ghost & oom' "$tmp/t/small-table.tex"
check "macros: peak of every configuration that ran" bash -c "[ \$(grep -c '{peak_gib}' '$tmp/t/small-macros.tex') -eq 6 ]"
check "macros: overhead of vanilla is 1.00" grep -q '\\dpdef{small}{vanilla-4-free}{overhead}{1.00}' "$tmp/t/small-macros.tex"
check "macros: oom configurations are marked oom" grep -q '\\dpdef{small}{ghost-4-tight}{status}{oom}' "$tmp/t/small-macros.tex"
check "summary counts the statuses" grep -q '^configurations 12: 6 ok, 6 oom, 0 error, 0 without a result' "$tmp/r/summary.txt"
check "summary says time was not measured" grep -q 'not measured (no GPU results)' "$tmp/r/summary.txt"
# an oom result holds the peak the configuration would need (the dry backend without the limit): the same
# configuration's peak where it ran without one; the summary says it, and the lines figure draws it hollow there
full_peak() { grep -o '"peak_without_limit": {"bytes": [0-9]*' "$1" | grep -o '[0-9]*$'; }
run_peak() { grep -o '"peak": [0-9]*' "$1" | head -1 | grep -o '[0-9]*$'; }
check "an oom result's peak_without_limit is the peak the same configuration has without the limit" bash -c \
    "[ -n \"\$1\" ] && [ \"\$1\" = \"\$2\" ] && [ \"\$3\" -lt \"\$1\" ]" _ "$(full_peak "$tmp/r/small-ghost-4-tight.json")" "$(run_peak "$tmp/r/small-ghost-4-free.json")" \
    "$(run_peak "$tmp/r/small-ghost-4-tight.json")"
check "a result that fit holds no peak_without_limit" bash -c "! grep -q peak_without_limit '$tmp/r/small-ghost-4-free.json'"
check "summary: an oom configuration's peak without the limit, drawn hollow" \
    bash -c "grep -A1 '^small-ghost-4-tight ' '$tmp/r/summary.txt' | grep -q 'does not fit: .* GiB without the memory limit (x vanilla [0-9.]*; .*drawn hollow'"
# auto plans for the limit (its two passes where flash_bk's peak is over it): its peak without the limit is that
# plan's (flash's), not the one auto would choose with no limit at all
for a in flash auto; do "$bin" run --preset tiny --backend dry --steps 1 --seq 64 --batch 4 --sigma 1 --dataset-size 1000 --timeline none --quiet --algo $a --out "$tmp/free-$a.json"; done
"$bin" run --preset tiny --backend dry --steps 1 --seq 64 --batch 4 --sigma 1 --dataset-size 1000 --timeline none --quiet --algo auto --memory-limit 46000000 --out "$tmp/lim-auto.json" 2>/dev/null; rc=$?
check "auto over its limit: its peak without the limit is the plan the limit made (flash's two passes), not auto's unlimited plan" bash -c \
    "[ $rc -eq 3 ] && [ \"\$1\" = \"\$2\" ] && [ \"\$1\" != \"\$3\" ]" _ "$(full_peak "$tmp/lim-auto.json")" "$(run_peak "$tmp/free-flash.json")" "$(run_peak "$tmp/free-auto.json")"
# a value of an axis none of whose configurations has run yet (a new shape of a committed sweep): left out of a
# bars figure (the summary names it, the figure does not) and of a pivot table, not drawn as a group of n/a
{ grep -v '^figure\|^table' "$tmp/small.conf"; echo 'figure peak = bars x=batch series=algo value=peak_gib where=lim:free'
  echo 'table = pivot rows=algo cols=batch value=peak_gib where=lim:free'; } >"$tmp/part.conf" # the small experiment, one figure and one table
mkdir -p "$tmp/part"
cp "$tmp"/r/small-*-2-*.json "$tmp/part/"
"$bin" report "$tmp/part.conf" --results "$tmp/part" --figures "$tmp/pf" --tables "$tmp/pt" >/dev/null 2>&1; rc=$?
check "a batch never run: the pivot table has no column of it, the summary says the bars figure left it out" bash -c \
    "[ $rc -eq 0 ] && grep -qF 'algorithm & 2 \\\\' '$tmp/pt/small-table.tex' && grep -q 'peak: batch=4 has no result (not run): left out of the figure' '$tmp/part/summary.txt' && [ -s '$tmp/pf/small-peak.png' ]"
# regenerated from the same results: byte for byte the same figures, table and macros
( cd "$tmp" && sha256sum f/* t/* ) >"$tmp/h1"
rm -rf "$tmp/f" "$tmp/t" "$tmp/r"/timelines
"$bin" report "$tmp/small.conf" --results "$tmp/r" --figures "$tmp/f" --tables "$tmp/t" >/dev/null; rc=$?
( cd "$tmp" && sha256sum f/* t/* ) >"$tmp/h2"
check "regenerated outputs are byte-identical" cmp -s "$tmp/h1" "$tmp/h2"
# bad figure lines: file and line named, exit 2
printf 'name = small\nbase = --preset tiny --backend dry\naxis algo = vanilla: --algo vanilla\nfigure x = bars x=seqq value=peak_gib\n' >"$tmp/bad1.conf"
err=$("$bin" report "$tmp/bad1.conf" --results "$tmp/r" --figures "$tmp/f" --tables "$tmp/t" 2>&1); rc=$?
check "bad axis in a figure line: exit 2 and FILE:LINE (got: $err)" bash -c "[ $rc -eq 2 ] && grep -qF 'bad1.conf:4: x=seqq is not an axis of this experiment' <<<'$err'"
printf 'name = small\nbase = --preset tiny --backend dry\naxis algo = vanilla: --algo vanilla\nfigure x = pie x=algo\n' >"$tmp/bad2.conf"
err=$("$bin" report "$tmp/bad2.conf" --results "$tmp/r" --figures "$tmp/f" --tables "$tmp/t" 2>&1); rc=$?
check "unknown figure kind: exit 2 and FILE:LINE (got: $err)" bash -c "[ $rc -eq 2 ] && grep -qF \"bad2.conf:4: unknown figure kind 'pie'\" <<<\"\$1\"" _ "$err"
# a line that lacks a key its kind needs, names a label its axis does not have, or a name another line has:
# exit 2, FILE:LINE and what is wrong, before anything is written (the good figure before it is not drawn)
for bad in "figure a = stacked|stacked needs group=" \
           "figure a = heatmap rows=algo value=peak_gib|heatmap needs cols=" \
           "figure a = heatmap cols=batch value=peak_gib|heatmap needs rows=" \
           "figure a = heatmap rows=algo cols=batch|heatmap needs value=" \
           "figure a = lines series=algo value=peak_gib|lines needs x=" \
           "figure a = capacity x=batch batch=batch|capacity needs series=" \
           "figure a = tradeoff|tradeoff needs series=" \
           "table p2 = pivot rows=algo value=peak_gib|pivot table needs cols=" \
           "figure a = phases group=algo value=peak_gib|value=peak_gib: phases takes bytes, flops, dram, peak or time" \
           "figure a = bars x=batch value=peak_gib where=algo:ghostt|where=algo:ghostt: 'ghostt' is not a label of the axis 'algo' (its labels: vanilla, ghost, flash_bk)" \
           "figure a = bars x=batch value=peak_gib where=lim:free,lim:tight|names the axis 'lim' twice" \
           "figure a = lines x=algo series=batch value=peak_gib|x=algo: lines need positive numbers as the axis labels (got 'vanilla')" \
           "figure peak = stacked group=algo|figure 'peak' again (first at line 6)" \
           "table = breakdown group=algo|a second unnamed table (the first at line 7 writes the same file)" \
           "figure Peak2 = bars x=batch value=peak_gib|figure name 'Peak2': expected up to 63 of a-z, 0-9, _ and -" \
           "figure a.b = bars x=batch value=peak_gib|figure name 'a.b': expected up to 63 of a-z, 0-9, _ and -"; do
    line=${bad%%|*} want=${bad#*|}
    printf 'name = small\nbase = --preset tiny --backend dry\naxis algo = vanilla: --algo vanilla | ghost: --algo ghost | flash_bk: --algo flash_bk\naxis batch = 2 | 4\naxis lim = free: | tight: --memory-limit 2M\nfigure peak = bars x=batch series=algo value=peak_gib where=lim:free\ntable = pivot rows=algo cols=batch value=peak_gib\n%s\n' "$line" >"$tmp/bad3.conf"
    rm -rf "$tmp/f3" "$tmp/t3"
    err=$("$bin" report "$tmp/bad3.conf" --results "$tmp/r" --figures "$tmp/f3" --tables "$tmp/t3" 2>&1); rc=$?
    check "'$line': exit 2, FILE:LINE, nothing written (got: $err)" \
        bash -c "[ $rc -eq 2 ] && grep -qF 'bad3.conf:8: ' <<<\"\$1\" && grep -qF \"\$2\" <<<\"\$1\" && [ ! -e '$tmp/f3' ] && [ ! -e '$tmp/t3' ]" _ "$err" "$want"
done
# --figures or --tables on a file: refused before any work, naming the path; missing parents are made
: >"$tmp/afile"
err=$("$bin" report "$tmp/small.conf" --results "$tmp/r" --figures "$tmp/afile" --tables "$tmp/t4" 2>&1); rc=$?
check "--figures on an existing file: exit 2 naming it, nothing written (got: $err)" \
    bash -c "[ $rc -eq 2 ] && grep -qF \"report: --figures: cannot create the directory '$tmp/afile': Not a directory\" <<<\"\$1\" && [ ! -e '$tmp/t4' ] && [ ! -s '$tmp/afile' ]" _ "$err"
err=$("$bin" report "$tmp/small.conf" --results "$tmp/r" --figures "$tmp/f4" --tables "$tmp/afile/t" 2>&1); rc=$?
check "--tables under a file: exit 2 naming that path, nothing written (got: $err)" \
    bash -c "[ $rc -eq 2 ] && grep -qF \"report: --tables: cannot create the directory '$tmp/afile/t': '$tmp/afile' is not a directory\" <<<\"\$1\" && [ ! -e '$tmp/f4' ]" _ "$err"
"$bin" report "$tmp/small.conf" --results "$tmp/r" --figures "$tmp/deep/a/f" --tables "$tmp/deep/b/t" >/dev/null 2>&1; rc=$?
check "--figures and --tables with missing parents: made, the report written" test $rc -eq 0 -a -s "$tmp/deep/a/f/small-peak.png" -a -s "$tmp/deep/b/t/small-table.tex"
err=$("$bin" report "$tmp/small.conf" --results "$tmp/nothing" 2>&1); rc=$?
check "no results: exit 2 and says to sweep first" bash -c "[ $rc -eq 2 ] && grep -qF 'run: dpprof sweep' <<<\"\$1\"" _ "$err"
# the report reads the lines the sweep accepted, as the sweep reads them: a table line after a
# vertical tab is drawn, and a description longer than 4095 bytes is one line (its text past byte
# 4095 is not read as a line of its own)
printf 'name = v\nbase = --preset tiny --backend dry --steps 1 --timeline none\naxis seq = 8 | 16\n\vtable = breakdown group=seq\n' >"$tmp/vt.conf"
"$bin" sweep "$tmp/vt.conf" --out-dir "$tmp/vr" 2>/dev/null
"$bin" report "$tmp/vt.conf" --results "$tmp/vr" --figures "$tmp/vf" --tables "$tmp/vtab" 2>"$tmp/vt.err"; rc=$?
check "a table line after a vertical tab: the table is written" test $rc -eq 0 -a -s "$tmp/vtab/v-table.tex"
{ printf 'name = v\nbase = --preset tiny --backend dry --steps 1 --timeline none\ndescription = '; head -c 4081 /dev/zero | tr '\0' 'a'
  printf 'figure x = pie x=seq\naxis seq = 8 | 16\n'; } >"$tmp/long.conf"
err=$("$bin" report "$tmp/long.conf" --results "$tmp/vr" --figures "$tmp/vf" --tables "$tmp/vtab" 2>&1); rc=$?
check "a 4200-byte description is one line, not a figure line (got: $err)" test $rc -eq 0
# the norm kernels' roofline (results of --op-times, written by hand here so the answer is known): each op's
# time at the peak that bounds it (bytes at the dram peak, or flops at the compute peak of the run's dtype,
# the longer), summed, over the measured time, and the macros name the bound that holds most of that time.
# bf16: the peaks are 2e12 B/s and 1e15 flop/s; linear_sqnorm_gram 2 ms, bound by the tensor cores at 1 ms
# (0.5 ms of bytes), gram_dot 2 ms bound by dram at 0.5 ms, adam not a norm kernel: 1.5 ms of 4 = 37.50 %.
# fp32 (peak 5e13): gram_dot 4 ms bound by dram at 2 ms, linear_sqnorm_gram 2 ms bound by flops at 0.2 ms:
# 2.2 of 6 ms = 36.67 %, DRAM bandwidth
printf 'name = nb\nbase = --preset tiny --backend dry --steps 1\naxis dt = b: --dtype bf16 | f: --dtype fp32\n' >"$tmp/nb.conf"
mkdir -p "$tmp/nb"
op() { printf '"%s": {"count": 1, "ms": %s, "flops": %s, "bytes_analytic": %s, "flops_per_s": %s, "bytes_per_s": %s, "share_of_fp32_peak": %s, "share_of_bf16_peak": %s, "share_of_dram_peak": %s}' "$@"; }
printf '{"experiment": "nb", "status": "ok", "config": {"dtype": "bf16"}, "throughput": {"ops": {"by_op": {%s, %s, %s}}}}\n' \
    "$(op linear_sqnorm_gram 2 1e12 1e9 5e14 5e11 10 0.5 0.25)" "$(op gram_dot 2 1e9 1e9 5e11 5e11 0.01 5e-4 0.25)" \
    "$(op adam 10 0 1e10 0 1e12 0 0 0.5)" >"$tmp/nb/nb-b.json"
printf '{"experiment": "nb", "status": "ok", "config": {"dtype": "fp32"}, "throughput": {"ops": {"by_op": {%s, %s}}}}\n' \
    "$(op gram_dot 4 1e9 4e9 2.5e11 1e12 0.005 0 0.5)" "$(op linear_sqnorm_gram 2 1e10 1e8 5e12 5e10 0.1 0 0.025)" >"$tmp/nb/nb-f.json"
"$bin" report "$tmp/nb.conf" --results "$tmp/nb" --figures "$tmp/nbf" --tables "$tmp/nbt" >/dev/null 2>&1; rc=$?
m="$tmp/nbt/nb-macros.tex"
check "report on hand-written op times exits 0 (got $rc)" test $rc -eq 0
check "bf16: the norm kernels reach 37.50 % of their roofline, bound by the tensor cores; 25.00 % of dram" \
    bash -c "grep -qxF '\\dpdef{nb}{b}{norm_bound_pct}{37.50}' '$m' && grep -qxF '\\dpdef{nb}{b}{norm_bound}{bf16 tensor-core peak}' '$m' && grep -qxF '\\dpdef{nb}{b}{norm_dram_pct}{25.00}' '$m'"
check "fp32: 36.67 % of their roofline, bound by DRAM bandwidth" \
    bash -c "grep -qxF '\\dpdef{nb}{f}{norm_bound_pct}{36.67}' '$m' && grep -qxF '\\dpdef{nb}{f}{norm_bound}{DRAM bandwidth}' '$m'"
check "a result without op times has no norm_bound macro" bash -c "[ -s '$tmp/t/small-macros.tex' ] && ! grep -q '{norm_bound' '$tmp/t/small-macros.tex'"
# an ops table (table NAME = ops ...: its own file) from hand-written op times: the top ops by their longest
# time in any column, longest first and ties by name, then the other ops, all ops and the step's mean; "--"
# where a column has no such op, the status where a configuration did not finish, and a bad top= refused
printf 'name = ot\nbase = --preset tiny --backend dry --steps 1\naxis algo = v: --algo vanilla | g: --algo ghost | x: --algo flash\ntable ops = ops cols=algo top=2\ntable = pivot rows=algo cols=algo value=step_ms\n' >"$tmp/ot.conf"
mkdir -p "$tmp/ot"
printf '{"experiment": "ot", "status": "ok", "avg_time_ms": 12.5, "throughput": {"ops": {"by_op": {%s, %s, %s}}}}\n' "$(op matmul_fwd 4 0 0 0 0 0 0 0)" "$(op adam 1 0 0 0 0 0 0 0)" "$(op rope_fwd 0.5 0 0 0 0 0 0 0)" >"$tmp/ot/ot-v.json"
printf '{"experiment": "ot", "status": "ok", "avg_time_ms": 20, "throughput": {"ops": {"by_op": {%s, %s, %s, %s}}}}\n' "$(op matmul_fwd 4 0 0 0 0 0 0 0)" "$(op gram 6 0 0 0 0 0 0 0)" "$(op adam 1 0 0 0 0 0 0 0)" "$(op gram_dot 3 0 0 0 0 0 0 0)" >"$tmp/ot/ot-g.json"
printf '{"experiment": "ot", "status": "oom"}\n' >"$tmp/ot/ot-x.json"
"$bin" report "$tmp/ot.conf" --results "$tmp/ot" --figures "$tmp/otf" --tables "$tmp/ott" >/dev/null 2>&1; rc=$?
t="$tmp/ott/ot-ops-table.tex"
check "ops table: report exits 0 and writes ot-ops-table.tex beside ot-table.tex" test $rc -eq 0 -a -s "$t" -a -s "$tmp/ott/ot-table.tex"
check "ops table: the header names the columns" grep -qxF 'op & v & g & x \\' "$t"
check "ops table: gram (6 ms) first, matmul_fwd (4) second; -- where vanilla has no gram; oom where flash did not finish" \
    bash -c "grep -A2 -xF '\\midrule' '$t' | head -3 | tail -2 | tr '\n' '|' | grep -qxF '\\texttt{gram} & -- & 6.0 & oom \\\\|\\texttt{matmul\\_fwd} & 4.0 & 4.0 & oom \\\\|'"
check "ops table: other ops (adam, rope; adam, gram_dot), all ops, the step's mean" \
    bash -c "grep -qxF 'other ops & 1.5 & 4.0 & oom \\\\' '$t' && grep -qxF 'all ops & 5.5 & 14.0 & oom \\\\' '$t' && grep -qxF 'step (mean) & 12.5 & 20.0 & oom \\\\' '$t'"
printf 'name = ot\nbase = --preset tiny --backend dry --steps 1\naxis algo = v: --algo vanilla\ntable ops = ops cols=algo top=0\n' >"$tmp/otbad.conf"
err=$("$bin" report "$tmp/otbad.conf" --results "$tmp/ot" --figures "$tmp/otf" --tables "$tmp/ott" 2>&1); rc=$?
check "ops table: top=0 is refused with exit 2, FILE:LINE and the value (got: $err)" bash -c "[ $rc -eq 2 ] && grep -qF 'otbad.conf:4: top=0: expected a whole number of ops from 1 to 64' <<<\"\$1\"" _ "$err"
printf 'name = ot\nbase = --preset tiny --backend dry --steps 1\naxis algo = v: --algo vanilla\ntable Ops! = ops cols=algo\n' >"$tmp/otname.conf"
err=$("$bin" report "$tmp/otname.conf" --results "$tmp/ot" --figures "$tmp/otf" --tables "$tmp/ott" 2>&1); rc=$?
check "a table name outside a-z, 0-9, _ and - is refused with exit 2, FILE:LINE and the name (got: $err)" bash -c "[ $rc -eq 2 ] && grep -qF \"otname.conf:4: table name 'Ops!': expected up to 63 of a-z, 0-9, _ and -\" <<<\"\$1\"" _ "$err"
# flop_ceiling: vanilla's analytic flops over the configuration's (its speed at vanilla's flop rate): 1.00 for
# vanilla, below 1 for ghost's two backward passes, and the value is the ratio of the two runs' flops_per_step
m="$tmp/t/small-macros.tex"
fv=$(grep -o '"flops_per_step": [0-9.e+]*' "$tmp/r/small-vanilla-4-free.json" | grep -o '[0-9.e+]*$')
fg=$(grep -o '"flops_per_step": [0-9.e+]*' "$tmp/r/small-ghost-4-free.json" | grep -o '[0-9.e+]*$')
cg=$(grep -o '\\dpdef{small}{ghost-4-free}{flop_ceiling}{[0-9.]*}' "$m" | grep -o '{[0-9.]*}$' | tr -d '{}')
check "flop_ceiling: vanilla 1.00, ghost $cg, the flops of a step $fv / $fg" \
    bash -c "grep -qxF '\\dpdef{small}{vanilla-4-free}{flop_ceiling}{1.00}' '$m' && awk -v c='$cg' -v v='$fv' -v g='$fg' 'BEGIN { exit !(c > 0 && c < 1 && (c - v / g) ^ 2 < 0.01 ^ 2) }'"

# timelines of several configurations: one PNG, a panel each (a figure's width, 1600 a panel, under the title and
# one legend), named in the summary; the configurations a timeline names are checked before anything runs
png_size() { python3 -c 'import struct,sys; d=open(sys.argv[1],"rb").read(24); print(*struct.unpack(">II", d[16:24]))' "$1"; }
read -r w h <<<"$(png_size "$tmp/f/small-tls.png")"
check "three panels in one figure: 2400 wide, three 1600-pixel panels under a title and legend (got ${w}x$h)" \
    bash -c "[ '$w' = 2400 ] && [ '$h' -gt 4800 ] && [ '$h' -lt 5600 ]"
check "the summary names the three configurations of the panels" \
    grep -qF "small-tls.png (timelines, one panel each, of small-vanilla-2-free, small-ghost-2-free, small-flash_bk-4-free)" "$tmp/r/summary.txt"
check "each panel's configuration was rerun once with its event log" \
    bash -c "ls '$tmp/r/timelines' | tr '\n' ' ' | grep -qxF 'small-flash_bk-4-free.json small-ghost-2-free.json small-vanilla-2-free.json '"
for bad in "vanilla-2-free,ghost-3-free:config=ghost-3-free is not a configuration of this experiment" \
           "vanilla-2-free,,ghost-2-free:config=vanilla-2-free,,ghost-2-free: an empty configuration between commas" \
           "ghost-2-free,ghost-2-free:config=ghost-2-free,ghost-2-free names small-ghost-2-free twice" \
           "vanilla-2-free,vanilla-4-free,ghost-2-free,ghost-4-free,flash_bk-2-free,flash_bk-4-free,vanilla-2-tight,vanilla-4-tight,ghost-2-tight:more than 8 configurations"; do
    cfg=${bad%%:*} want=${bad#*:}
    sed "s/^figure tls = .*/figure tls = timeline config=$cfg/" "$tmp/small.conf" >"$tmp/tlbad.conf"
    rm -rf "$tmp/tlr"; mkdir -p "$tmp/tlr"; cp "$tmp/r"/small-*.json "$tmp/tlr/"
    err=$("$bin" report "$tmp/tlbad.conf" --results "$tmp/tlr" --figures "$tmp/tlf" --tables "$tmp/tlt" 2>&1); rc=$?
    check "timeline config=$cfg: exit 2, FILE:LINE, nothing run (got: $err)" \
        bash -c "[ $rc -eq 2 ] && grep -qF 'tlbad.conf:9: config=' <<<\"\$1\" && grep -qF '$want' <<<\"\$1\" && [ ! -e '$tmp/tlr/timelines' ] && [ ! -e '$tmp/tlf' ]" _ "$err"
done
# dpprof plot timeline of several results: a panel each; a dry and a timed run do not share an axis; a sweep's
# result without its event log says what is missing
tl="$tmp/r/timelines"
"$bin" plot timeline "$tl/small-vanilla-2-free.json" "$tl/small-ghost-2-free.json" --out "$tmp/two.png"; rc=$?
read -r w h <<<"$(png_size "$tmp/two.png" 2>/dev/null)"
check "plot timeline of two results: exit 0, one 1600-wide figure of two 600-pixel panels (got $rc, ${w}x$h)" \
    bash -c "[ $rc -eq 0 ] && [ '$w' = 1600 ] && [ '$h' -gt 1200 ] && [ '$h' -lt 1400 ]"
"$bin" run --preset tiny --backend cpu --steps 1 --seq 16 --batch 2 --quiet --out "$tmp/cpu.json"
err=$("$bin" plot timeline "$tl/small-vanilla-2-free.json" "$tmp/cpu.json" --out "$tmp/mix.png" 2>&1); rc=$?
check "plot timeline of a dry and a timed result: exit 2, they cannot share an x axis, nothing written (got: $err)" \
    bash -c "[ $rc -eq 2 ] && grep -qF 'cpu.json is timed: their timelines cannot share an x axis' <<<\"\$1\" && [ ! -e '$tmp/mix.png' ]" _ "$err"
err=$("$bin" plot timeline "$tl/small-vanilla-2-free.json" "$tmp/r/small-ghost-2-free.json" --out "$tmp/mix.png" 2>&1); rc=$?
check "plot timeline with a sweep's result among several: exit 2, names that file and the missing event log (got: $err)" \
    bash -c "[ $rc -eq 2 ] && grep -qF 'small-ghost-2-free.json: its \"timeline\" is null' <<<\"\$1\" && grep -qF 'timeline config=LABELS' <<<\"\$1\"" _ "$err"

# the stages as memory: model load, data, optimizer and privacy setup are phases of the run with their live bytes
# (privacy setup only where there is privacy), then the step's; the summary lists each phase's peak
j="$tmp/r/small-ghost-2-free.json"
check "a dp run records the stages model_loaded, data_setup, optimizer_setup, privacy_setup, then the step's phases" \
    bash -c "python3 - '$j' <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
names = [s['name'] for s in r['snapshots']]
assert names[:5] == ['model_loaded', 'data_setup', 'optimizer_setup', 'privacy_setup', 'step0.forward'], names
p = r['phases']
assert p['data_setup']['bytes_peak'] == p['model_loaded']['bytes_end'], p['data_setup']
assert p['privacy_setup']['bytes_start'] == p['optimizer_setup']['bytes_end'], p['privacy_setup']
PY"
check "a vanilla run has no privacy_setup phase" \
    bash -c "python3 -c \"import json,sys; r=json.load(open(sys.argv[1])); sys.exit(r['phases'].get('privacy_setup', {}).get('count', 0) != 0)\" '$tmp/r/small-vanilla-2-free.json'"
check "the summary gives each configuration's memory at each phase's peak, setup stages first" \
    bash -c "grep -A2 '^small-ghost-2-free ' '$tmp/r/summary.txt' | grep -qE '^    memory at each phase.s peak \\(GiB\\): model_loaded [0-9.]+, data_setup [0-9.]+, optimizer_setup [0-9.]+, privacy_setup [0-9.]+, forward'"
printf 'line one\nline two\n' >"$tmp/corpus.txt"
"$bin" run --preset tiny --backend dry --steps 1 --seq 4 --batch 2 --data "$tmp/corpus.txt" --quiet --out "$tmp/data.json"; rc=$?
check "--data is read in the data_setup phase (a run on a file: exit 0, the phase recorded once)" \
    bash -c "[ $rc -eq 0 ] && python3 -c \"import json,sys; sys.exit(json.load(open(sys.argv[1]))['phases']['data_setup']['count'] != 1)\" '$tmp/data.json'"
err=$("$bin" run --preset tiny --backend dry --steps 1 --seq 64 --batch 2 --data "$tmp/corpus.txt" --quiet --out "$tmp/short.json" 2>&1); rc=$?
check "a --data file too short for the sequence: exit 2, naming the file and seq, nothing written (got: $err)" \
    bash -c "[ $rc -eq 2 ] && grep -qF 'corpus.txt: 18 bytes is too short for --seq 64' <<<\"\$1\" && [ ! -e '$tmp/short.json' ]" _ "$err"

# the report never writes into a sweep's outputs: a timeline's rerun leaves the sweep's trace and dump as the
# sweep wrote them (it once reran with their --trace and --dump)
cat >"$tmp/own.conf" <<CONF
name = own
base = --preset tiny --backend cpu --steps 1 --seq 8 --batch 2 --timeline none --trace $tmp/owntr/t.json --dump $tmp/owndump/d
axis seed = 1 | 2
figure tl = timeline config=1
CONF
mkdir -p "$tmp/owntr" "$tmp/owndump"
"$bin" sweep "$tmp/own.conf" --out-dir "$tmp/own" 2>/dev/null; rc=$?
before=$(cd "$tmp" && find owntr owndump -type f -exec sha256sum {} + | sort | sha256sum; find "$tmp/owntr" "$tmp/owndump" -newer "$tmp/own/summary.csv" | wc -l)
sleep 1
"$bin" report "$tmp/own.conf" --results "$tmp/own" --figures "$tmp/ownf" --tables "$tmp/ownt" 2>"$tmp/own.err"; rc2=$?
after=$(cd "$tmp" && find owntr owndump -type f -exec sha256sum {} + | sort | sha256sum; find "$tmp/owntr" "$tmp/owndump" -newer "$tmp/own/summary.csv" | wc -l)
check "report's timeline rerun leaves the sweep's --trace and --dump untouched (sweep $rc, report $rc2: $(head -c 200 "$tmp/own.err"))" \
    bash -c "[ $rc = 0 ] && [ $rc2 = 0 ] && [ -s '$tmp/ownf/own-tl.png' ] && [ '$before' = '$after' ] && [ -s '$tmp/owntr/t-own-1.json' ]"
# a key no figure reads is refused, naming it (and the closest); a 17th key is named as such
printf 'name = k\nbase = --preset tiny --backend dry --steps 1\naxis seq = 8 | 16\nfigure a = bars x=seq value=peak_gib colour=red\n' >"$tmp/k.conf"
err=$("$bin" report "$tmp/k.conf" --results "$tmp/kr" 2>&1 >/dev/null); rc=$?
check "an unknown key (colour=red): exit 2 naming it ($err)" bash -c "[ $rc = 2 ] && grep -qF \"k.conf:4: unknown key 'colour'\" <<<\"\$1\"" _ "$err"
printf 'name = k\nbase = --preset tiny --backend dry --steps 1\naxis seq = 8 | 16\nfigure a = bars x=seq value=peak_gib seriez=seq\n' >"$tmp/k2.conf"
err=$("$bin" report "$tmp/k2.conf" --results "$tmp/kr" 2>&1 >/dev/null); rc=$?
check "a misspelt key: did you mean ($err)" bash -c "[ $rc = 2 ] && grep -qF \"unknown key 'seriez' (did you mean series?)\" <<<\"\$1\"" _ "$err"
keys=$(for i in $(seq 14); do printf ' where=seq:8'; done)
printf 'name = k\nbase = --preset tiny --backend dry --steps 1\naxis seq = 8 | 16\nfigure a = bars x=seq value=peak_gib%s title=x\n' "$keys" >"$tmp/k3.conf"
err=$("$bin" report "$tmp/k3.conf" --results "$tmp/kr" 2>&1 >/dev/null); rc=$?
check "a 17th key is named as the 17th ($err)" bash -c "[ $rc = 2 ] && grep -qF \"more than 16 keys: 'title=x' is the 17th\" <<<\"\$1\"" _ "$err"
# a result that says ok and holds no memory: said, so that its empty cells are not taken for zeros
printf 'name = ok\nbase = --preset tiny --backend dry --steps 1 --timeline none\naxis seq = 8 | 16\nfigure p = bars x=seq value=peak_gib\n' >"$tmp/okc.conf"
"$bin" sweep "$tmp/okc.conf" --out-dir "$tmp/okr" 2>/dev/null
printf '{"experiment": "ok", "status": "ok"}\n' >"$tmp/okr/ok-16.json"
"$bin" report "$tmp/okc.conf" --results "$tmp/okr" --figures "$tmp/okf" --tables "$tmp/okt" 2>"$tmp/okc.err"; rc=$?
check "a result of status ok with no memory: said on stderr and in the summary, not taken for zeros ($(head -c 200 "$tmp/okc.err"))" \
    bash -c "[ $rc = 0 ] && grep -q 'ok-16.json: status ok but no breakdown.bytes.peak' '$tmp/okc.err' && grep -q 'ok-16 .*status ok but no breakdown.bytes.peak' '$tmp/okr/summary.txt'"
# what a measured run was built from: a result records the commit and the hash of its sources; a folder whose
# results predate the hash states both afterwards in its provenance file ("RECORDED COMPILED SHA256"), and the
# report names the compiled commit and the hash in the summary and the macros. the committed bf16 H200 run is one
src=$(ls -d data/bench/*-1426-NVIDIA_H200 2>/dev/null | head -1)
if [ -n "$src" ] && [ -f "$src/provenance" ]; then
    mkdir -p "$tmp/pv"
    cp "$src"/bench-*.json "$src/provenance" "$tmp/pv/"
    n=$(ls "$tmp"/pv/bench-*.json | wc -l)
    read -r rec comp sha < <(grep -v '^#' "$src/provenance")
    "$bin" report experiments/bench.conf --results "$tmp/pv" --figures "$tmp/pvf" --tables "$tmp/pvt" >/dev/null 2>&1; rc=$?
    check "provenance: the macros name the compiled commit ${comp:0:12} and sources ${sha:0:12}, not the recorded ${rec:0:12}" bash -c \
        "[ $rc = 0 ] && grep -qF '\\dpdef{bench}{bf16-trainer-vanilla}{run_commit}{${comp:0:12}}' '$tmp/pvt/bench-macros.tex' && grep -qF '\\dpdef{bench}{bf16-trainer-vanilla}{run_source}{${sha:0:12}}' '$tmp/pvt/bench-macros.tex' && ! grep -q '{run_commit}{${rec:0:12}}' '$tmp/pvt/bench-macros.tex'"
    check "provenance: the summary says what the $n results were built from, stated afterwards, and what they record" \
        grep -qF "built from: commit ${comp:0:12}, sources sha256 $sha ($n results, stated afterwards in the folder's provenance file: the results record commit ${rec:0:12})" "$tmp/pv/summary.txt"
    # a result that records its own hash: that hash, said to be the build's; the others keep the folder's line
    own=$(printf 'ab%.0s' $(seq 32))
    sed -i "s/\"git_commit\": \"${rec:0:12}\"/\"git_commit\": \"${rec:0:12}\", \"source_sha256\": \"$own\"/" "$tmp/pv/bench-bf16-lora-ghost.json"
    "$bin" report experiments/bench.conf --results "$tmp/pv" --figures "$tmp/pvf" --tables "$tmp/pvt" >/dev/null 2>&1; rc=$?
    check "provenance: a result's own hash wins over the folder's line, and is said to be the build's" bash -c \
        "[ $rc = 0 ] && grep -qF '\\dpdef{bench}{bf16-lora-ghost}{run_source}{${own:0:12}}' '$tmp/pvt/bench-macros.tex' && grep -qF '\\dpdef{bench}{bf16-lora-ghost}{run_commit}{${rec:0:12}}' '$tmp/pvt/bench-macros.tex' && grep -qF 'commit ${rec:0:12}, sources sha256 $own (1 result, recorded by the build)' '$tmp/pv/summary.txt' && grep -qF '($((n - 1)) results, stated afterwards' '$tmp/pv/summary.txt'"
    # without the file: the recorded commit, and no hash
    rm "$tmp/pv/provenance"
    "$bin" report experiments/bench.conf --results "$tmp/pv" --figures "$tmp/pvf" --tables "$tmp/pvt" >/dev/null 2>&1; rc=$?
    check "no provenance file: the recorded commit ${rec:0:12}, and the summary says no hash was recorded" bash -c \
        "[ $rc = 0 ] && grep -qF '\\dpdef{bench}{bf16-trainer-vanilla}{run_commit}{${rec:0:12}}' '$tmp/pvt/bench-macros.tex' && ! grep -q 'bf16-trainer-vanilla}{run_source}' '$tmp/pvt/bench-macros.tex' && grep -qF 'commit ${rec:0:12}, sources sha256 not recorded ($((n - 1)) results)' '$tmp/pv/summary.txt'"
    # a bad line, or two answers for one commit: refused before anything is written, by file and line
    echo 'kept' >"$tmp/pv/summary.txt"
    for bad in "$rec $comp ${sha:1}|not 'RECORDED-COMMIT COMPILED-COMMIT SHA256'" "$rec $comp $sha extra|not 'RECORDED-COMMIT COMPILED-COMMIT SHA256'" \
        "$rec XYZ $sha|not 'RECORDED-COMMIT COMPILED-COMMIT SHA256'" "$rec $comp $sha
$rec $rec $sha|commit ${rec:0:12} is given another build on an earlier line"; do
        printf '# a comment\n%s\n' "${bad%%|*}" >"$tmp/pv/provenance"
        line=$(printf '%s\n' "${bad%%|*}" | wc -l)
        err=$("$bin" report experiments/bench.conf --results "$tmp/pv" --figures "$tmp/pvf" --tables "$tmp/pvt" 2>&1 >/dev/null); rc=$?
        check "a bad provenance file: exit 2, its line $((line + 1)) named, the summary kept ($err)" bash -c \
            "[ $rc = 2 ] && grep -qF \"\$2\" <<<\"\$1\" && [ \"\$(cat '$tmp/pv/summary.txt')\" = kept ]" _ "$err" "provenance:$((line + 1)): ${bad#*|}"
    done
else echo "SKIP no committed bf16 H200 run with a provenance file in data/bench: the report's provenance not checked"; fi

# a result's strings are not trusted: a status, a device or a path that would close a macro's argument, start a
# line or input a file reaches the macros escaped
mkdir -p "$tmp/inj"
cp "$tmp/r/"*.json "$tmp/inj/"
python3 - "$tmp/inj/small-ghost-2-free.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); d["status"] = "ok}\\input{/x}\n\\input{/y}"
json.dump(d, open(sys.argv[1], "w"))
PY
"$bin" report "$tmp/small.conf" --results "$tmp/inj" --figures "$tmp/injf" --tables "$tmp/injt" 2>/dev/null; rc=$?
check "a result's status with braces, a backslash and a newline: escaped in the macros, no \\input reaches the paper" \
    bash -c "[ $rc = 0 ] && ! grep -qF '\\input' '$tmp/injt/small-macros.tex' && grep -qF '{status}{ok\\}\\char92{}input\\{/x\\} ' '$tmp/injt/small-macros.tex'"
# a results folder the report cannot write (read-only): refused before any directory is made for figures and tables
mkdir -p "$tmp/ro"
cp "$tmp/r/"*.json "$tmp/ro/"
chmod 755 "$tmp" && chmod 555 "$tmp/ro" && chmod 777 "$tmp/injf" 2>/dev/null
as_user=()
if [ "$(id -u)" = 0 ]; then as_user=(setpriv --reuid=65534 --regid=65534 --clear-groups); fi # root writes anywhere: as nobody
if [ "$(id -u)" != 0 ] || command -v setpriv >/dev/null; then
    mkdir -p "$tmp/rw" && chmod 777 "$tmp/rw"
    "${as_user[@]}" "$PWD/$bin" report "$tmp/small.conf" --results "$tmp/ro" --figures "$tmp/rw/figs" --tables "$tmp/rw/tabs" 2>"$tmp/ro.err"; rc=$?
    check "a read-only results folder: refused ($(head -c 160 "$tmp/ro.err")), no empty figures/ or tables/ left" \
        bash -c "[ $rc != 0 ] && grep -q \"summary '$tmp/ro/summary.txt': cannot write\" '$tmp/ro.err' && [ ! -e '$tmp/rw/figs' ] && [ ! -e '$tmp/rw/tabs' ]"
else
    echo "SKIP a read-only results folder: running as root without setpriv"
fi
chmod 755 "$tmp/ro"
