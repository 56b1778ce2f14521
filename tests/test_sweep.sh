#!/usr/bin/env bash
# tests/test_sweep.sh - dpprof sweep as a user meets it: a small sweep and its summary, failing
# configurations recorded and the others finished, interruption and resume, timeouts and crashes,
# bad experiment files (exact message, exit 2, nothing written), --dry-run, --only, --jobs.
# run by make test (from the repository root, after make). one line per check: PASS or FAIL.
set -u
cd "$(dirname "$0")/.."
bin=./dpprof
[ -x "$bin" ] || { echo "FAIL ./dpprof not built (run make in the tree root)"; exit 1; }
. tests/lib.bash
status_of() { grep -o '"status": "[^"]*"' "$1" 2>/dev/null | head -1 | sed 's/.*: "\(.*\)"/\1/'; }
HEADER='id,seq,batch,status,peak_memory_mb,avg_time_ms,model_parameters_mb,optimizer_states_mb,gradients_mb,activations_mb,activation_hooks_mb,per_sample_gradients_mb,norm_samples_mb,temp_matrices_mb,lora_mb,workspace_mb,data_mb,tokens_per_s,dram_read_mb,dram_write_mb,l2_read_mb,l2_write_mb'

# ---- a small sweep: tiny preset, dry backend, 2 axes, 6 configurations ---------------------------------
cat >"$tmp/small.conf" <<'EOF'
# a small sweep
name = small
description = tiny model, dry backend: memory vs sequence length and batch

base = --preset tiny --backend dry --steps 1    # every configuration
axis seq = 16 | 32
axis batch = 2 | 4 | 8
EOF
ids="small-16-2 small-16-4 small-16-8 small-32-2 small-32-4 small-32-8"
"$bin" sweep "$tmp/small.conf" --out-dir "$tmp/s1" 2>"$tmp/s1.err"; rc=$?
check "small sweep exits 0" test $rc -eq 0
missing=""; for id in $ids; do [ -s "$tmp/s1/$id.json" ] && [ -s "$tmp/s1/logs/$id.log" -o -e "$tmp/s1/logs/$id.log" ] || missing="$missing $id"; done
check "every ID.json and log written${missing:+ (missing:$missing)}" test -z "$missing"
check "every result has status ok and experiment 'small'" bash -c "for id in $ids; do grep -q '\"status\": \"ok\"' '$tmp/s1/'\$id.json && grep -q '\"experiment\": \"small\"' '$tmp/s1/'\$id.json || exit 1; done"
check "no .tmp left" test -z "$(find "$tmp/s1" -name '*.tmp')"
check "summary.csv header" test "$(head -1 "$tmp/s1/summary.csv")" = "$HEADER"
check "summary.csv has 6 rows in configuration order" test "$(tail -n +2 "$tmp/s1/summary.csv" | cut -d, -f1 | tr '\n' ' ')" = "$ids "
check "summary.csv rows: labels, status, 22 fields each" bash -c "tail -n +2 '$tmp/s1/summary.csv' | awk -F, 'NF != 22 || \$4 != \"ok\" { exit 1 }' && grep -q '^small-32-4,32,4,ok,[0-9.]*,,0.477783,0.955566,0.477783,' '$tmp/s1/summary.csv'"
check "dry rows: avg_time_ms, tokens_per_s and the measured traffic empty (null)" bash -c "tail -n +2 '$tmp/s1/summary.csv' | awk -F, '\$6 != \"\" || \$18 != \"\" || \$19 \$20 \$21 \$22 != \"\" { exit 1 }'"
check "progress: one line per configuration in the spec'd form" bash -c "[ \$(grep -cE '^\[[1-6]/6\] small-[0-9]+-[0-9]+: ok \(peak [0-9.]+ MiB\) elapsed [0-9.]+s, remaining ~[0-9]+s$' '$tmp/s1.err') -eq 6 ]"
check "summary line counts the statuses" grep -q "6 of 6 done (0 skipped): ok 6, oom 0, error 0, crashed 0, timeout 0" "$tmp/s1.err"

# ---- --dry-run, --only, --jobs ---------------------------------------------------------------------------
out=$("$bin" sweep "$tmp/small.conf" --out-dir "$tmp/dry" --dry-run); rc=$?
check "--dry-run exits 0 and prints 6 lines" test $rc -eq 0 -a "$(printf '%s\n' "$out" | wc -l)" -eq 6
check "--dry-run writes nothing" test ! -e "$tmp/dry"
check "--dry-run line is the child's command" bash -c "printf '%s\n' \"\$1\" | sed -n 5p | grep -qE '/dpprof run --preset tiny --backend dry --steps 1 --seq 32 --batch 4 --experiment small --out $tmp/dry/small-32-4.json --quiet\$'" _ "$out"
out=$("$bin" sweep "$tmp/small.conf" --out-dir "$tmp/dry" --dry-run --only -32-); rc=$?
check "--dry-run --only -32- prints the 3 matching lines" test $rc -eq 0 -a "$(printf '%s\n' "$out" | grep -c 'small-32-')" -eq 3 -a "$(printf '%s\n' "$out" | wc -l)" -eq 3
"$bin" sweep "$tmp/small.conf" --out-dir "$tmp/only" --only -16- 2>"$tmp/only.err"; rc=$?
check "--only -16- runs only those 3" test $rc -eq 0 -a "$(ls "$tmp/only" | grep -c '\.json$')" -eq 3 -a -e "$tmp/only/small-16-8.json" -a ! -e "$tmp/only/small-32-2.json"
check "--only: summary lists every configuration, the others not_run" bash -c "[ \$(tail -n +2 '$tmp/only/summary.csv' | wc -l) -eq 6 ] && [ \$(grep -c ',not_run,' '$tmp/only/summary.csv') -eq 3 ] && grep -q '^small-32-8,32,8,not_run,,,,,,,,,,,,,,,,,,\$' '$tmp/only/summary.csv'"
check "--only progress counts the selection: [k/3]" test "$(grep -c '^\[[1-3]/3\]' "$tmp/only.err")" -eq 3
"$bin" sweep "$tmp/small.conf" --out-dir "$tmp/j2" --jobs 2 2>"$tmp/j2.err"; rc=$?
check "--jobs 2 exits 0 and gives the same summary.csv as --jobs 1" bash -c "[ $rc -eq 0 ] && cmp -s '$tmp/s1/summary.csv' '$tmp/j2/summary.csv'"
check "--jobs 2 writes the same result files" test "$(cd "$tmp/s1" && ls)" = "$(cd "$tmp/j2" && ls)"
# the two children run at once: two runs that each time out after 2 s take about 2 s, not 4
cat >"$tmp/par.conf" <<'EOF'
name = par
base = --preset tiny --backend cpu --steps 100000
axis seed = 1 | 2
EOF
t0=$(date +%s%N)
"$bin" sweep "$tmp/par.conf" --out-dir "$tmp/par" --jobs 2 --timeout 2 2>"$tmp/par.err"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "--jobs 2 runs two children at once (2 timeouts of 2 s in ${ms} ms < 3500)" test $rc -eq 0 -a $ms -lt 3500 -a "$(status_of "$tmp/par/par-1.json")" = timeout -a "$(status_of "$tmp/par/par-2.json")" = timeout

# ---- impossible configurations in the middle are recorded, the others finish -----------------------------
cat >"$tmp/bad.conf" <<'EOF'
name = mixed
base = --preset tiny --backend dry --steps 1 --seq 16
axis mode = fine: | tight: --memory-limit 1K | badheads: --heads 5 | after: --batch 4
EOF
"$bin" sweep "$tmp/bad.conf" --out-dir "$tmp/bad" 2>"$tmp/bad.err"; rc=$?
check "a sweep with failing configurations exits 0" test $rc -eq 0
check "memory-limit 1K: the run's own JSON says oom" bash -c "[ '$(status_of "$tmp/bad/mixed-tight.json")' = oom ] && grep -q 'over the limit of 1024 bytes' '$tmp/bad/mixed-tight.json' && grep -q '\"timeline\"' '$tmp/bad/mixed-tight.json'"
check "heads 5 (exit 2, no JSON): the sweep writes status error with the exit status and the log's last line" \
    grep -q '"error": "exited with status 2: dpprof: run: heads = 5 does not divide hidden = 64"' "$tmp/bad/mixed-badheads.json"
check "the sweep's error JSON: experiment, id, status, config.argv" bash -c "grep -q '\"experiment\": \"mixed\"' '$tmp/bad/mixed-badheads.json' && grep -q '\"id\": \"mixed-badheads\"' '$tmp/bad/mixed-badheads.json' && [ '$(status_of "$tmp/bad/mixed-badheads.json")' = error ] && grep -q '\"argv\": \[\"[^\"]*dpprof\", \"run\", \"--preset\", \"tiny\", \"--backend\", \"dry\", \"--steps\", \"1\", \"--seq\", \"16\", \"--heads\", \"5\", \"--experiment\", \"mixed\", \"--out\", \"$tmp/bad/mixed-badheads.json\", \"--quiet\"\]' '$tmp/bad/mixed-badheads.json'"
check "the configurations before and after finish ok" test "$(status_of "$tmp/bad/mixed-fine.json")" = ok -a "$(status_of "$tmp/bad/mixed-after.json")" = ok
check "summary.csv records ok, oom, error, ok" test "$(tail -n +2 "$tmp/bad/summary.csv" | cut -d, -f1,3 | tr '\n' ' ')" = "mixed-fine,ok mixed-tight,oom mixed-badheads,error mixed-after,ok "
check "the error row has empty metric cells" grep -qx 'mixed-badheads,badheads,error,,,,,,,,,,,,,,,,,,' "$tmp/bad/summary.csv"
check "progress shows the failures and points at the log" grep -q "^\[3/4\] mixed-badheads: error elapsed [0-9.]*s, remaining ~[0-9]*s (log: $tmp/bad/logs/mixed-badheads.log)$" "$tmp/bad.err"
check "the log holds the run's message" grep -q 'heads = 5 does not divide hidden = 64' "$tmp/bad/logs/mixed-badheads.log"

# ---- interruption and resume -------------------------------------------------------------------------------
cat >"$tmp/slow.conf" <<'EOF'
name = slow
base = --preset tiny --backend cpu --steps 30
axis seed = 1 | 2 | 3 | 4
EOF
"$bin" sweep "$tmp/slow.conf" --out-dir "$tmp/k" 2>"$tmp/k1.err" &
pid=$!
for _ in $(seq 600); do [ -e "$tmp/k/slow-1.json" ] && break; sleep 0.05; done
kill -TERM $pid; wait $pid; rc=$?
n1=$(ls "$tmp/k" | grep -c '\.json$')
check "SIGTERM: the sweep exits 130" test $rc -eq 130
check "SIGTERM: finished results stay ($n1 of 4), the running one is not recorded" test "$n1" -ge 1 -a "$n1" -lt 4
# the signal may fall between two configurations, or after a child wrote its whole result (finished,
# whether or not it had exited): 0 or 1 killed, and exactly the results on disk counted as finished
check "SIGTERM: no .tmp left, the message says how to resume ($(tail -1 "$tmp/k1.err"))" bash -c "[ -z \"\$(find '$tmp/k' -name '*.tmp')\" ] && grep -Eq 'interrupted by SIGTERM: [01] running configurations? killed, $n1 of 4 finished; run the same command to resume' '$tmp/k1.err'"
check "SIGTERM: no child survives" bash -c "! grep -qas -- '$tmp/k/slow-[0-9]\.json' /proc/[0-9]*/cmdline"
check "SIGTERM: no summary.csv for an interrupted sweep" test ! -e "$tmp/k/summary.csv"
before=$(cd "$tmp/k" && stat -c '%n %y' *.json)
sleep 0.1
"$bin" sweep "$tmp/slow.conf" --out-dir "$tmp/k" 2>"$tmp/k2.err"; rc=$?
check "resume exits 0 and writes all 4" test $rc -eq 0 -a "$(ls "$tmp/k" | grep -c '\.json$')" -eq 4
check "resume: the $n1 finished ones are skipped (progress says so)" test "$(grep -c 'skipped: done before$' "$tmp/k2.err")" -eq "$n1"
check "resume: their files are untouched (same mtimes)" test "$before" = "$(cd "$tmp/k" && stat -c '%n %y' $(printf '%s\n' "$before" | cut -d' ' -f1))"
check "resume: the rest ran" test "$(grep -cE 'ok \(peak [0-9.]+ MiB\) elapsed' "$tmp/k2.err")" -eq $((4 - n1))
check "resume: summary.csv has every row, all ok, cpu timings filled" bash -c "[ \$(tail -n +2 '$tmp/k/summary.csv' | wc -l) -eq 4 ] && tail -n +2 '$tmp/k/summary.csv' | awk -F, '\$3 != \"ok\" || \$5 == \"\" || \$17 == \"\" { exit 1 }'"
rm "$tmp/k/summary.csv"
"$bin" sweep "$tmp/slow.conf" --out-dir "$tmp/k" 2>"$tmp/k3.err"; rc=$?
check "all done before: exits 0, skips 4, still writes summary.csv" bash -c "[ $rc -eq 0 ] && [ \$(grep -c 'skipped: done before' '$tmp/k3.err') -eq 4 ] && [ \$(tail -n +2 '$tmp/k/summary.csv' | grep -c ',ok,') -eq 4 ]"
# SIGINT as well
"$bin" sweep "$tmp/slow.conf" --out-dir "$tmp/ki" 2>"$tmp/ki.err" &
pid=$!
for _ in $(seq 600); do [ -e "$tmp/ki/logs/slow-1.log" ] && break; sleep 0.05; done
sleep 0.3
kill -INT $pid; wait $pid; rc=$?
check "SIGINT: exits 130, the killed run left nothing" bash -c "[ $rc -eq 130 ] && [ ! -e '$tmp/ki/slow-1.json' ] && grep -q 'interrupted by SIGINT' '$tmp/ki.err'"
# a killed writer's leftover temporary (.dpprof-tmp.ID.json.XXXXXX) is removed and the configuration rerun; a
# truncated result is rerun; a user's file that only looks like a temporary (.ID.json.backup) stays
rm -f "$tmp/k/slow-2.json" "$tmp/k/summary.csv"
echo '{"experiment": "slow", "status": "o' >"$tmp/k/.dpprof-tmp.slow-2.json.a1B2c3"
echo 'my backup' >"$tmp/k/.slow-2.json.backup"
echo 'my backup' >"$tmp/k/.slow-2.json.a1B2c3"
echo '{"experiment": "slow", "status": "o' >"$tmp/k/slow-3.json"
"$bin" sweep "$tmp/slow.conf" --out-dir "$tmp/k" 2>"$tmp/k4.err"; rc=$?
check "leftover .dpprof-tmp.ID.json.XXXXXX removed and rerun, truncated ID.json rerun" bash -c "[ $rc -eq 0 ] && [ ! -e '$tmp/k/.dpprof-tmp.slow-2.json.a1B2c3' ] && [ '$(status_of "$tmp/k/slow-2.json")' = ok ] && [ \$(grep -c 'skipped: done before' '$tmp/k4.err') -eq 2 ] && grep -q '^\[[34]/4\] slow-3: ok' '$tmp/k4.err' && [ '$(status_of "$tmp/k/slow-3.json")' = ok ]"
check "a user's .ID.json.backup and .ID.json.a1B2c3 beside a rerun result are kept" bash -c "grep -q 'my backup' '$tmp/k/.slow-2.json.backup' && grep -q 'my backup' '$tmp/k/.slow-2.json.a1B2c3'"
# a result written by hand counts as done; its status cell is csv-quoted
printf '{"status": "ok, \\"by hand\\"", "peak_memory_mb": 1.5, "breakdown": {"data_mb": null}}\n' >"$tmp/k/slow-4.json"
"$bin" sweep "$tmp/slow.conf" --out-dir "$tmp/k" 2>/dev/null
check "a cell with a comma or quote is csv-quoted; null is empty" grep -qx 'slow-4,4,"ok, ""by hand""",1.5,,,,,,,,,,,,,,,,,' "$tmp/k/summary.csv"

# ---- timeouts and crashes -----------------------------------------------------------------------------------
cat >"$tmp/to.conf" <<'EOF'
name = to
base = --preset tiny --backend cpu
axis len = short: --steps 1 | long: --steps 100000
EOF
t0=$(date +%s%N)
"$bin" sweep "$tmp/to.conf" --out-dir "$tmp/to" --timeout 1 2>"$tmp/to.err"; rc=$?
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
check "--timeout 1: exits 0 after about a second (${ms} ms)" test $rc -eq 0 -a $ms -lt 5000
check "--timeout 1: the long run is killed and recorded as timeout" bash -c "[ '$(status_of "$tmp/to/to-long.json")' = timeout ] && grep -q '\"error\": \"timed out after 1 s and was killed (the log is empty)\"' '$tmp/to/to-long.json'"
check "--timeout 1: the short run is ok, the csv says timeout" bash -c "[ '$(status_of "$tmp/to/to-short.json")' = ok ] && grep -q '^to-long,long,timeout,' '$tmp/to/summary.csv'"
# a real crash without changing dpprof: a cpu-time limit kills the child with SIGXCPU
cat >"$tmp/crash.conf" <<'EOF'
name = crash
base = --preset tiny --backend cpu --steps 100000
EOF
(ulimit -c 0; ulimit -S -t 1; exec "$bin" sweep "$tmp/crash.conf" --out-dir "$tmp/crash" 2>"$tmp/crash.err"); rc=$?
check "a child killed by a signal: the sweep exits 0, status crashed with the signal's name" bash -c "[ $rc -eq 0 ] && [ '$(status_of "$tmp/crash/crash.json")' = crashed ] && grep -q '\"error\": \"killed by signal SIGXCPU ([0-9]*)' '$tmp/crash/crash.json' && grep -q '^crash,crashed,' '$tmp/crash/summary.csv'"
check "no axes: one configuration whose id is the name" grep -q '^\[1/1\] crash: crashed elapsed' "$tmp/crash.err"

# ---- bad experiment files and options: the exact message, exit 2, nothing written ----------------------------
n_bad=0
bad() { # name expected-message conf-text [extra args]   (conf-text '-' = no file written, use $conf)
    local name=$1 want=$2 text=$3 err rc; shift 3
    local conf=$tmp/bad_$n_bad.conf
    n_bad=$((n_bad + 1))
    [ "$text" = - ] || printf '%s\n' "$text" >"$conf"
    [ "$text" = - ] && conf=$CONF
    want=${want//@F/$conf}
    err=$("$bin" sweep "$conf" --out-dir "$tmp/never/out" "$@" 2>&1 >/dev/null); rc=$?
    err=${err%%$'\n'*}
    if [ $rc -eq 2 ] && [ "$err" = "$want" ] && [ ! -e "$tmp/never" ]; then pass "bad input: $name -> exit 2: $err"
    else fail "bad input: $name: want exit 2 and '$want', got exit $rc: '$err'"; fi
    rm -rf "$tmp/never"
}
mkdir -p "$tmp/never" && rmdir "$tmp/never"
bad "missing name" "dpprof: sweep: @F:3: end of file: no 'name = ...' line (required)" \
'# no name
base = --preset tiny
axis seq = 16 | 32'
bad "missing base" "dpprof: sweep: @F:2: end of file: no 'base = ...' line (required; it may be empty)" \
'name = x
axis seq = 16 | 32'
bad "unknown key" "dpprof: sweep: @F:2: unknown key 'nmae' (known: name, description, base, axis NAME, figure NAME, table [NAME])" \
'base = --preset tiny
nmae = x'
bad "empty axis" "dpprof: sweep: @F:3: axis 'seq' is empty: give its values separated by '|'" \
'name = x
base = --preset tiny
axis seq =    # nothing'
bad "empty axis value" "dpprof: sweep: @F:3: axis 'seq': value 2 is empty (check the '|' separators)" \
'name = x
base = --preset tiny
axis seq = 16 | | 32'
bad "duplicate axis" "dpprof: sweep: @F:4: duplicate axis 'seq' (first at line 3)" \
'name = x
base = --preset tiny
axis seq = 16 | 32
axis seq = 64'
bad "duplicate key" "dpprof: sweep: @F:2: duplicate key 'name' (first at line 1)" \
'name = x
name = y'
bad "a line without '='" "dpprof: sweep: @F:3: expected 'KEY = VALUE', got 'axis seq 16 | 32'" \
'name = x
base = --preset tiny
axis seq 16 | 32'
bad "a quote in base" "dpprof: sweep: @F:2: base: quotes and backslashes are not supported (options are split on whitespace, with no quoting): '--preset \"tiny\"'" \
'name = x
base = --preset "tiny"'
bad "a quote in an axis value" "dpprof: sweep: @F:3: axis 'mode' value 1 ('a: --data 'my file.txt''): quotes and backslashes are not supported (options are split on whitespace, with no quoting): '--data 'my file.txt''" \
"name = x
base = --preset tiny
axis mode = a: --data 'my file.txt'"
bad "bad name characters" "dpprof: sweep: @F:1: name 'Big Sweep': use only a-z 0-9 _ - (it starts every id and file name)" \
'name = Big Sweep
base = --preset tiny'
bad "bad axis name" "dpprof: sweep: @F:3: axis name 'Seq': use only a-z 0-9 _ -" \
'name = x
base = --preset tiny
axis Seq = 16'
bad "axis name taken by a csv column" "dpprof: sweep: @F:3: axis name 'status' is taken by a summary.csv column: choose another" \
'name = x
base = --preset tiny
axis status = 16'
bad "axis without a name" "dpprof: sweep: @F:3: axis without a name: write 'axis NAME = v1 | v2 | ...'" \
'name = x
base = --preset tiny
axis = 16'
bad "bad label" "dpprof: sweep: @F:3: axis 'mode' value 1 ('Full: --steps 1'): label 'Full': use only a-z 0-9 . _ -" \
'name = x
base = --preset tiny
axis mode = Full: --steps 1'
bad "duplicate label" "dpprof: sweep: @F:3: axis 'mode': values 1 and 2 both have the label 'a': label them 'LABEL: OPTIONS'" \
'name = x
base = --preset tiny
axis mode = a: --steps 1 | a: --steps 2'
bad "bare value with a space" "dpprof: sweep: @F:3: axis 'seq' value 1 ('16 32'): a bare value is one word (it means '--seq VALUE'): write 'LABEL: OPTIONS' for more" \
'name = x
base = --preset tiny
axis seq = 16 32'
bad "bare value with a vertical tab (white space, as the options split at it)" "dpprof: sweep: @F:3: axis 'seed' value 1 ('1"$'\v'"2'): a bare value is one word (it means '--seed VALUE'): write 'LABEL: OPTIONS' for more" \
"name = x
base = --preset tiny
axis seed = 1"$'\v'"2"
bad "options not starting with --" "dpprof: sweep: @F:2: base: expected options starting with '--', got 'preset tiny'" \
'name = x
base = preset tiny'
bad "--out set in the file" "dpprof: sweep: @F:2: base: '--out' is set by the sweep (--experiment NAME --out DIR/ID.json --quiet): remove it" \
'name = x
base = --preset tiny --out r.json'
bad "colliding ids" "dpprof: sweep: @F:4: two configurations have the same id 'x-a-b-c' (labels joined with '-' collide): change a label" \
'name = x
base = --preset tiny
axis p = a-b: | a:
axis q = c: | b-c:'
v10=$(seq -s ' | ' 1 10)
bad "too many configurations" "dpprof: sweep: @F:8: axis 'f' makes 200000 configurations (100000 x 2), more than the limit of 100000" \
"name = x
base = --preset tiny
axis a = $v10
axis b = $v10
axis c = $v10
axis d = $v10
axis e = $v10
axis f = 1 | 2"
long=$(printf '%0250d' 0)
bad "an id too long for a file name" "dpprof: sweep: @F:3: the id of configuration 2 is 252 characters long, more than 240 (ids name files): shorten the name or the labels" \
"name = x
base = --preset tiny
axis seed = 1 | $long"
printf 'name = x\nbase = --preset\0tiny\n' >"$tmp/nul.conf"; CONF=$tmp/nul.conf
bad "a NUL byte" "dpprof: sweep: @F:2: a NUL byte: this is not a text file" -
CONF=/nonexistent/exp.conf
bad "unreadable file (missing)" "dpprof: sweep: experiment file '@F': cannot read: No such file or directory" -
mkdir "$tmp/adir"; CONF=$tmp/adir
bad "unreadable file (a directory)" "dpprof: sweep: experiment file '@F': is a directory" -
CONF=$tmp/small.conf
"$bin" sweep "$CONF" --out-dir "$tmp/nonexistent-parent/out" --only small-16-2 2>/dev/null >/dev/null; rc=$?
check "nonexistent out-dir parents are made (mkdir -p) and the sweep runs" test $rc -eq 0 -a -s "$tmp/nonexistent-parent/out/small-16-2.json"
: >"$tmp/afile"
err=$("$bin" sweep "$CONF" --out-dir "$tmp/afile" 2>&1 >/dev/null); rc=$?
check "out-dir is a file -> exit 2" test $rc -eq 2 -a "$err" = "dpprof: sweep: --out-dir: cannot create the directory '$tmp/afile': Not a directory"
err=$("$bin" sweep "$CONF" --out-dir "$tmp/afile" --dry-run 2>&1 >/dev/null); rc=$?
check "--dry-run with an out-dir that is a file -> exit 2, as the sweep would" test $rc -eq 2 -a "$err" = "dpprof: sweep: --out-dir: cannot create the directory '$tmp/afile': Not a directory"
err=$("$bin" sweep "$CONF" --out-dir "$tmp/afile/out" 2>&1 >/dev/null); rc=$?
check "out-dir under a file -> exit 2 naming the file" test $rc -eq 2 -a "$err" = "dpprof: sweep: --out-dir: cannot create the directory '$tmp/afile/out': '$tmp/afile' is not a directory"
# every configuration's options are parsed as run parses them before anything runs: a bad one is the file's
# error (exit 2, the configuration and the option named, nothing written), not an error result of each run
bad "an unknown option in base" "dpprof: sweep: @F: configuration x-16: run: unknown option '--bogus'" \
'name = x
base = --preset tiny --backend dry --bogus 3
axis seq = 16 | 32'
bad "an axis value run refuses" "dpprof: sweep: @F: configuration x-5: run: --seq '-5': expected an integer in [1, 16777216]" \
'name = x
base = --preset tiny --backend dry --steps 1
axis seq = 16 | -5 | abc'
bad "an axis value run refuses, with --dry-run" "dpprof: sweep: @F: configuration x-abc: run: --seq 'abc': expected an integer in [1, 16777216]" \
'name = x
base = --preset tiny --backend dry --steps 1
axis seq = 16 | abc' --dry-run
bad "an option without its value" "dpprof: sweep: @F: configuration x-a: run: --lora-rank needs a value (r), got the option '--steps' (a value that starts with '--' is written --lora-rank=VALUE)" \
'name = x
base = --preset tiny --backend dry
axis m = a: --lora-rank --steps 1'
bad "a bare -- in base" "dpprof: sweep: @F:2: base: '--' would end run's options (the sweep's own after it would be arguments): remove it" \
'name = x
base = --preset tiny --backend dry --steps 1 --'
bad "--only matching nothing" "dpprof: sweep: --only 'zzz' matches none of the 6 configurations of @F" - --only zzz
bad "--jobs 0" "dpprof: sweep: --jobs '0': expected an integer in [1, 1024]" - --jobs 0
bad "--timeout -1" "dpprof: sweep: --timeout '-1': expected a number in [0, 1e+09]" - --timeout -1
bad "unknown option" "dpprof: sweep: unknown option '--job' (did you mean --jobs?)" - --job 2
bad "two experiment files" "dpprof: sweep: unexpected argument 'extra.conf' (one experiment file)" - extra.conf
err=$("$bin" sweep "$CONF" 2>&1 >/dev/null); rc=$?
check "no --out-dir -> exit 2 with the usage" test $rc -eq 2 -a "${err%%$'\n'*}" = "dpprof: sweep: usage: dpprof sweep EXPERIMENT.conf --out-dir DIR [--jobs J] [--dry-run] [--only TEXT] [--timeout SECONDS] [--backend NAME]"
help=$("$bin" sweep --help); rc=$?
check "sweep --help exits 0 and describes the file format" bash -c "[ $rc -eq 0 ] && for w in 'name =' 'base =' 'axis seq' 'LABEL: OPTIONS' '--out-dir' '--jobs' '--dry-run' '--only' '--timeout' 'summary.csv' 'skipped'; do grep -qF -- \"\$w\" <<<\"\$1\" || exit 1; done" _ "$help"
check "dpprof --help lists sweep" bash -c "'$bin' --help | grep -q '^  sweep '"

# a full disk: finished results stay whole, nothing half-written is left, the sweep says why and
# stops, and a rerun with room resumes (a 40 KiB tmpfs; SKIP where mounting is not allowed)
fd="$tmp/fulldisk"
mkdir -p "$fd"
if mount -t tmpfs -o size=40k tmpfs "$fd" 2>/dev/null; then
    printf 'name = fd\nbase = --preset tiny --backend dry --steps 1 --timeline none\naxis seq = 8 | 16 | 32 | 64 | 128 | 256 | 512 | 1024 | 2048 | 4096\n' >"$tmp/fd.conf"
    err=$("$bin" sweep "$tmp/fd.conf" --out-dir "$fd/r" 2>&1 >/dev/null); rc=$?
    check "full disk: the sweep stops with exit 1 and says it could not write" bash -c "[ $rc -eq 1 ] && grep -q 'No space left on device' <<<\"\$1\" && grep -q 'could not write' <<<\"\$1\"" _ "$err"
    bad_json=0
    for f in "$fd"/r/*.json; do
        [ -e "$f" ] || continue
        "$bin" plot timeline "$f" --out /dev/null 2>&1 | grep -q 'line [0-9]*, column' && bad_json=1
    done
    check "full disk: every result file left is whole JSON, no .tmp left" bash -c "[ $bad_json -eq 0 ] && ! ls '$fd'/r/*.tmp >/dev/null 2>&1"
    n_before=$(ls "$fd"/r/*.json | wc -l)
    cp -r "$fd/r" "$tmp/fd-moved"
    umount "$fd"
    "$bin" sweep "$tmp/fd.conf" --out-dir "$tmp/fd-moved" 2>"$tmp/fd.err"; rc=$?
    check "full disk: with room, the rerun skips the $n_before finished and completes the rest" bash -c "[ $rc -eq 0 ] && [ \$(grep -c 'skipped: done before' '$tmp/fd.err') -eq $n_before ] && [ \$(ls '$tmp'/fd-moved/*.json | wc -l) -eq 10 ]"
else
    echo "SKIP full disk: cannot mount a small tmpfs here (needs root)"
fi

# another id's result that is not a regular file: summary.csv says so, never reads it (a FIFO would hang the
# sweep, /dev/zero would cost a GiB)
printf 'name = nf\nbase = --preset tiny --backend dry --steps 1 --timeline none\naxis seq = 8 | 16 | 32\n' >"$tmp/nf.conf"
mkdir -p "$tmp/nf"
mkfifo "$tmp/nf/nf-16.json"
ln -s /dev/zero "$tmp/nf/nf-32.json"
timeout 60 "$bin" sweep "$tmp/nf.conf" --out-dir "$tmp/nf" --only nf-8 2>"$tmp/nf.err"; rc=$?
check "a FIFO and a /dev/zero link as other ids' results: sweep --only ends at once, summary.csv says unreadable (rc $rc)" \
    bash -c "[ $rc -eq 0 ] && grep -q '^nf-8,8,ok' '$tmp/nf/summary.csv' && grep -q '^nf-16,16,unreadable' '$tmp/nf/summary.csv' && grep -q '^nf-32,32,unreadable' '$tmp/nf/summary.csv' && [ -p '$tmp/nf/nf-16.json' ]"
# an interrupted run's trace temporary beside its trace path: the resume removes it (and nothing else there)
printf 'name = tt\nbase = --preset tiny --backend dry --steps 1 --timeline none --trace %s/traces/t.json\naxis seq = 8 | 16\n' "$tmp" >"$tmp/tt.conf"
mkdir -p "$tmp/traces"
echo partial >"$tmp/traces/.dpprof-tmp.t-tt-8.json.Zq9x2A"
echo mine >"$tmp/traces/.t-tt-8.json.Zq9x2A"
"$bin" sweep "$tmp/tt.conf" --out-dir "$tmp/tt" 2>/dev/null; rc=$?
check "a resume removes a killed run's trace temporary (.dpprof-tmp.t-ID.json.XXXXXX), keeps a user's file" \
    bash -c "[ $rc -eq 0 ] && [ ! -e '$tmp/traces/.dpprof-tmp.t-tt-8.json.Zq9x2A' ] && grep -q mine '$tmp/traces/.t-tt-8.json.Zq9x2A' && [ -s '$tmp/traces/t-tt-8.json' ]"
# ten thousand configurations naming one --hf-config of a megabyte: read once, not per configuration
python3 - "$tmp/big-hf.json" <<'PY'
import json, sys
cfg = {"model_type": "llama", "vocab_size": 256, "hidden_size": 64, "intermediate_size": 176, "num_hidden_layers": 2,
       "num_attention_heads": 4, "num_key_value_heads": 2, "_name_or_path": "x" * 1000000}
json.dump(cfg, open(sys.argv[1], "w"))
PY
printf 'name = hf\nbase = --hf-config %s --backend dry --steps 1\naxis seed = %s\n' "$tmp/big-hf.json" "$(seq -s ' | ' 1 10000)" >"$tmp/hf.conf"
start=$(date +%s.%N)
"$bin" sweep "$tmp/hf.conf" --out-dir "$tmp/hf" --dry-run >/dev/null 2>"$tmp/hf.err"; rc=$?
secs=$(awk "BEGIN {print $(date +%s.%N) - $start}")
check "sweep --dry-run of 1e4 configurations with a 1 MB --hf-config: checked in ${secs} s (the file read once; under 20 s)" \
    bash -c "[ $rc -eq 0 ] && awk 'BEGIN {exit !($secs < 20)}'"
# --repeats: every configuration K times, interleaved (each once, then each again), the k-th run into ID.repK.json;
# a resume runs only the runs missing; the report takes the median step and the range, and names a repeat it
# cannot use
printf 'name = rp\nbase = --preset tiny --backend cpu --steps 2 --seq 16 --batch 2 --sigma 1 --timeline none\naxis algo = vanilla: --algo vanilla --sigma 0 | ghost: --algo ghost\nfigure speed = bars x=algo value=speed\n' >"$tmp/rp.conf"
"$bin" sweep "$tmp/rp.conf" --out-dir "$tmp/rp" --repeats 3 2>"$tmp/rp.err"; rc=$?
check "--repeats 3: six runs, ID.json, ID.rep2.json, ID.rep3.json of each" bash -c \
    "[ $rc -eq 0 ] && for id in rp-vanilla rp-ghost; do for s in '' .rep2 .rep3; do [ -s '$tmp/rp/'\$id\$s.json ] || exit 1; done; done"
check "--repeats: interleaved (every configuration's first run before any second run)" bash -c \
    "grep -o 'rp-[a-z]*\\( (run [23])\\)\\?: ok' '$tmp/rp.err' | tr '\\n' '|' | grep -qx 'rp-vanilla: ok|rp-ghost: ok|rp-vanilla (run 2): ok|rp-ghost (run 2): ok|rp-vanilla (run 3): ok|rp-ghost (run 3): ok|'"
rm "$tmp/rp/rp-ghost.rep2.json"
"$bin" sweep "$tmp/rp.conf" --out-dir "$tmp/rp" --repeats 3 2>"$tmp/rp2.err"; rc=$?
check "--repeats resumed: only the missing run runs (rp-ghost's second)" bash -c \
    "[ $rc -eq 0 ] && [ \$(grep -c 'skipped: done before' '$tmp/rp2.err') -eq 5 ] && grep -q 'rp-ghost (run 2): ok' '$tmp/rp2.err' && [ -s '$tmp/rp/rp-ghost.rep2.json' ]"
"$bin" report "$tmp/rp.conf" --results "$tmp/rp" --figures "$tmp/rpf" --tables "$tmp/rpt" 2>/dev/null; rc=$?
check "the report of repeats: the median step between the fastest and the slowest, 3 runs each, in the macros and the summary" python3 - "$tmp/rpt/rp-macros.tex" "$tmp/rp" <<'PY'
import json, re, statistics, sys
m = dict(((c, k), v) for c, k, v in re.findall(r"\\dpdef\{rp\}\{([a-z]+)\}\{([a-z_]+)\}\{([^}]*)\}", open(sys.argv[1]).read()))
for c in ("vanilla", "ghost"):
    ms = sorted(json.load(open("%s/rp-%s%s.json" % (sys.argv[2], c, s)))["avg_time_ms"] for s in ("", ".rep2", ".rep3"))
    assert m[(c, "repeats")] == "3", m
    assert abs(float(m[(c, "step_ms")]) - statistics.median(ms)) <= 0.5 and abs(float(m[(c, "step_ms_min")]) - ms[0]) <= 0.5 and abs(float(m[(c, "step_ms_max")]) - ms[2]) <= 0.5, (m, ms)
PY
check "...the summary gives each configuration's runs and range; the figure says the bars are medians" bash -c \
    "[ $rc -eq 0 ] && [ \$(grep -c '^    repeats: 3 runs; step ' '$tmp/rp/summary.txt') -eq 2 ] && grep -q 'speed: bars are the median of the repeated runs (3 to 3 each)' '$tmp/rp/summary.txt'"
# one run's own spread: the range of its timed steps (from one step's end to the next's, the snapshots' host
# clock) over their median, the warm-up steps left out; a dry run has no time, so no such number
printf 'name = sr\nbase = --preset tiny --seq 16 --batch 2 --sigma 1 --timeline none --warmup 2 --steps 4\naxis b = cpu: --backend cpu | dry: --backend dry\naxis a = ghost: --algo ghost\ntable = pivot rows=b cols=a value=step_range_pct\n' >"$tmp/sr.conf"
"$bin" sweep "$tmp/sr.conf" --out-dir "$tmp/sr" 2>/dev/null && "$bin" report "$tmp/sr.conf" --results "$tmp/sr" --figures "$tmp/srf" --tables "$tmp/srt" 2>/dev/null; rc=$?
check "step_range_pct: the timed steps' range over their median, from the snapshots (cpu); none for a dry run" python3 - "$rc" "$tmp/srt/sr-macros.tex" "$tmp/sr/sr-cpu-ghost.json" <<'PY'
import json, re, statistics, sys
assert sys.argv[1] == "0", sys.argv[1]
m = dict(((c, k), v) for c, k, v in re.findall(r"\\dpdef\{sr\}\{([a-z]+)-ghost\}\{([a-z_]+)\}\{([^}]*)\}", open(sys.argv[2]).read()))
d = json.load(open(sys.argv[3]))
end = {}
for s in d["snapshots"]:
    if s["name"].startswith("step"):
        k = int(s["name"][4:].split(".")[0])
        end[k] = max(end.get(k, s["timestamp"]), s["timestamp"])
iv = [end[k] - end[k - 1] for k in range(2, 6)]
want = 100 * (max(iv) - min(iv)) / statistics.median(iv)
got = float(m[("cpu", "step_range_pct")])
assert abs(got - want) <= max(0.01, 0.005 * want), (got, want, iv)
assert ("dry", "step_range_pct") not in m or m[("dry", "step_range_pct")] in ("", "--", "nan"), m.get(("dry", "step_range_pct"))
PY
echo '{"truncated' >"$tmp/rp/rp-ghost.rep3.json"
"$bin" report "$tmp/rp.conf" --results "$tmp/rp" --figures "$tmp/rpf" --tables "$tmp/rpt" 2>"$tmp/rp3.err"; rc=$?
check "a repeat that is not a result: left out and named (stderr, summary), the others kept (2 runs)" bash -c \
    "[ $rc -eq 0 ] && grep -q 'rp-ghost: repeat 3 left out' '$tmp/rp3.err' && grep -q '^    repeats: 2 runs' '$tmp/rp/summary.txt' && grep -q 'repeat 3 left out' '$tmp/rp/summary.txt'"
err=$("$bin" sweep "$tmp/rp.conf" --out-dir "$tmp/rp" --repeats 0 2>&1); rc=$?
check "--repeats 0: refused ($err)" bash -c "[ $rc -eq 2 ] && grep -q \"repeats '0': expected an integer in \\[1, 32\\]\" <<<\"\$1\"" _ "$err"

# ---- nothing lost, nothing replaced: repeats and their traces, ids that collide with a repeat's file, a run
# stopped between its trace and its result, a lock that is a link, --dry-run with --repeats --------------------
printf 'name = rc\nbase = --preset tiny --backend dry --steps 1\naxis v = 1: --seq 16 | 1.rep2: --seq 32\n' >"$tmp/rc.conf"
err=$("$bin" sweep "$tmp/rc.conf" --out-dir "$tmp/rc" --repeats 2 2>&1); rc=$?
check "a label whose id ends as a repeat's file name (rc-1.rep2): refused, nothing written ($err)" \
    bash -c "[ $rc -eq 2 ] && grep -q \"the id 'rc-1.rep2' ends as a repeated run's file name does\" <<<\"\$1\" && [ ! -e '$tmp/rc' ]" _ "$err"
printf 'name = tr\nbase = --preset tiny --backend dry --steps 1 --trace %s/tr/t.json\naxis seq = 16 | 32\n' "$tmp" >"$tmp/tr.conf"
"$bin" sweep "$tmp/tr.conf" --out-dir "$tmp/tr" --repeats 2 2>"$tmp/tr.err"; rc=$?
check "--repeats 2 with --trace: each run its own trace (t-ID.json, t-ID.rep2.json), four in all" \
    bash -c "[ $rc -eq 0 ] && [ -s '$tmp/tr/t-tr-16.json' ] && [ -s '$tmp/tr/t-tr-16.rep2.json' ] && [ -s '$tmp/tr/t-tr-32.json' ] && [ -s '$tmp/tr/t-tr-32.rep2.json' ]"
rm -f "$tmp/tr/t-tr-32.json"
"$bin" sweep "$tmp/tr.conf" --out-dir "$tmp/tr" --repeats 2 2>"$tmp/tr2.err"; rc=$?
check "a result whose trace is missing (a run stopped between them) runs again on resume, the others are skipped" \
    bash -c "[ $rc -eq 0 ] && [ -s '$tmp/tr/t-tr-32.json' ] && grep -q '^\[[0-9]/4\] tr-32: ok' '$tmp/tr2.err' && [ \$(grep -c 'skipped: done before' '$tmp/tr2.err') -eq 3 ]"
out=$("$bin" sweep "$tmp/tr.conf" --out-dir "$tmp/tr" --repeats 3 --dry-run); rc=$?
check "--dry-run --repeats 3: every run's command, 6 for 2 configurations, each repeat with its own files" \
    bash -c "[ $rc -eq 0 ] && [ \$(wc -l <<<\"\$1\") -eq 6 ] && grep -q 'tr-32.rep3.json' <<<\"\$1\" && grep -q 't-tr-32.rep3.json' <<<\"\$1\"" _ "$out"
mkdir -p "$tmp/lk"
echo 'a user file' >"$tmp/precious"
ln -s "$tmp/precious" "$tmp/lk/.sweep.lock"
err=$("$bin" sweep "$tmp/small.conf" --out-dir "$tmp/lk" 2>&1); rc=$?
check "a .sweep.lock that is a symbolic link: refused, its target untouched ($err)" \
    bash -c "[ $rc -eq 2 ] && grep -q 'is a symbolic link: not a sweep' <<<\"\$1\" && [ \"\$(cat '$tmp/precious')\" = 'a user file' ]" _ "$err"
