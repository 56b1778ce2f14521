#!/usr/bin/env bash
# tests/test_outputs.sh - hostile outputs and faults: device nodes, symlinks, FIFOs, a full disk, concurrent
# writers, a signal mid-run, outputs that alias inputs or each other. each: nothing replaced, nothing half
# written, a message with the reason, every finished result kept. the full disk is a small tmpfs in a
# private mount namespace (unshare -m), SKIP where that is not allowed. needs ./dpprof. run by make test.
set -u
cd "$(dirname "$0")/.."
repo=$PWD
bin=${DPPROF_TEST_BIN:-$PWD/dpprof} # tests/test_sanitized.sh: the sanitizer build
sc=$PWD/build/schema_check
schema=$PWD/docs/result.schema.json
. tests/lib.bash
cd "$tmp"
q="--steps 1 --backend dry --quiet"
leftovers() { find "${1:-.}" -name '.dpprof-tmp.*' 2>/dev/null | grep -c .; }

# devices are written in place and stay devices
"$bin" run $q --out /dev/null 2>err; rc=$?
check "--out /dev/null: exit 0, /dev/null still a character device" bash -c "[ $rc = 0 ] && [ -c /dev/null ]"
if [ -w /dev/full ]; then
    "$bin" run $q --out /dev/full 2>err; rc=$?
    check "--out /dev/full: exit 1 saying 'No space left on device', /dev/full still a device ($(head -c 120 err))" bash -c "[ $rc = 1 ] && grep -q 'No space left on device' err && [ -c /dev/full ]"
    "$bin" run $q --trace /dev/full --out t.json 2>err; rc=$?
    check "--trace /dev/full: exit 1 with the reason; the --out result is kept" bash -c "[ $rc = 1 ] && grep -q 'No space left' err && grep -q '\"status\": \"ok\"' t.json"
else SKIP "no writable /dev/full: the device-full checks did not run"; fi
# symlinks: their target is written, the link stays a link
echo keep >target.json; ln -s target.json link.json
"$bin" run $q --out link.json 2>err; rc=$?
check "--out a symlink: the target is written, the link is still a link" bash -c "[ $rc = 0 ] && [ -L link.json ] && grep -q '\"status\": \"ok\"' target.json"
ln -s made.json dangling.json
"$bin" run $q --out dangling.json 2>err; rc=$?
check "--out a dangling symlink: its target is created, the link kept" bash -c "[ $rc = 0 ] && [ -L dangling.json ] && grep -q '\"status\": \"ok\"' made.json"
# FIFOs: written when read, refused (no hang) when nothing reads them
mkfifo fifo
timeout 20 "$bin" run $q --out fifo 2>err; rc=$?
check "--out a FIFO nothing reads: exit 2 at once, saying so, still a FIFO ($(head -c 100 err))" bash -c "[ $rc = 2 ] && grep -qF -- 'a FIFO that nothing reads' err && [ -p fifo ]"
( timeout 20 cat fifo >got.json & ); sleep 0.5
timeout 20 "$bin" run $q --out fifo 2>err; rc=$?; sleep 0.3
check "--out a FIFO with a reader: the reader gets the result, the FIFO stays" bash -c "[ $rc = 0 ] && grep -q '\"status\": \"ok\"' got.json && [ -p fifo ]"
# names that are not files, and names that alias
echo mine >.tmp; echo mine2 >x.json.tmp
"$bin" run $q --out '' 2>err; rc=$?
check "--out '': exit 2, the user's ./.tmp untouched" bash -c "[ $rc = 2 ] && grep -qF -- 'an empty path' err && [ \"\$(cat .tmp)\" = mine ]"
"$bin" run $q --out x.json 2>err; rc=$?
check "--out x.json: an existing x.json.tmp is not touched" bash -c "[ $rc = 0 ] && [ \"\$(cat x.json.tmp)\" = mine2 ] && [ -s x.json ]"
mkdir adir
"$bin" run $q --out adir 2>err; rc=$?
check "--out a directory: exit 2 before any work, saying so" bash -c "[ $rc = 2 ] && grep -qF -- 'is a directory' err"
"$bin" run $q --out - >stdout.json 2>err; rc=$?
check "--out -: standard output, no file named '-'" bash -c "[ $rc = 0 ] && [ ! -e ./- ] && grep -q '\"status\": \"ok\"' stdout.json"
# a name of standard output itself (/dev/stdout, /dev/fd/1, the file it is redirected to) is standard output:
# written there in place (a pipe has no name to rename onto, a file appended to keeps what it held)
n=$("$bin" run $q --out /dev/stdout 2>err | grep -c '"status": "ok"')
check "--out /dev/stdout into a pipe: the result comes through it ($(head -c 100 err))" test "$n" = 1
echo before >appended.txt
"$bin" run $q --out /dev/stdout >>appended.txt 2>err; rc=$?
check "--out /dev/stdout appended to a file: what the file held stays, the result follows it" bash -c "[ $rc = 0 ] && [ \"\$(head -1 appended.txt)\" = before ] && grep -q '\"status\": \"ok\"' appended.txt"
"$bin" run $q --out /dev/stdout --trace - 2>err | cat >both.out; rc=${PIPESTATUS[0]}
check "--out /dev/stdout --trace -: refused, both would write to standard output, nothing written" bash -c "[ $rc = 2 ] && [ ! -s both.out ] && grep -qF -- '--out /dev/stdout and --trace - would both write to standard output' err"
"$bin" run $q --out - --trace redirected.json >redirected.json 2>err; rc=$?
check "--out - --trace F with standard output redirected to F: refused" bash -c "[ $rc = 2 ] && grep -qF -- 'would both write to standard output' err"
"$bin" run $q --out same.json --trace ./same.json 2>err; rc=$?
check "--out f --trace f: refused, nothing written" bash -c "[ $rc = 2 ] && grep -qF -- 'are the same file' err && [ ! -e same.json ]"
cp t.json data.txt
"$bin" run --steps 1 --backend cpu --quiet --data data.txt --out data.txt 2>err; rc=$?
check "run --data f --out f: refused, the input intact" bash -c "[ $rc = 2 ] && grep -qF -- 'is the --data file' err && cmp -s t.json data.txt"
cp "$repo/tests/hf/smollm2-135m.json" hf.json && cp hf.json hf-orig.json && ln -s hf.json hf-link.json
"$bin" run --steps 1 --backend dry --quiet --hf-config hf.json --seq 8 --batch 1 --out ./hf.json 2>err; rc=$?
check "run --hf-config f --out f: refused, the input intact" bash -c "[ $rc = 2 ] && grep -qF -- \"--out './hf.json' is the --hf-config file\" err && cmp -s hf.json hf-orig.json"
"$bin" run --steps 1 --backend dry --quiet --hf-config hf.json --seq 8 --batch 1 --out r.json --trace hf-link.json 2>err; rc=$?
check "run --hf-config f --trace (a symlink to f): refused, the input intact" bash -c "[ $rc = 2 ] && grep -qF -- 'is the --hf-config file' err && cmp -s hf.json hf-orig.json && [ -L hf-link.json ] && [ ! -e r.json ]"
cp t.json p.json
"$bin" plot timeline p.json --out p.json 2>err; rc=$?
check "plot IN --out IN: refused, the input intact" bash -c "[ $rc = 2 ] && grep -qF -- 'is the input' err && cmp -s t.json p.json"
"$bin" plot timeline t.json --out adir 2>err; rc=$?
check "plot --out a directory: exit 2 before rendering" bash -c "[ $rc = 2 ] && grep -qF -- 'is a directory' err"
# --dump: checked before any work, built beside and renamed into place, nothing of the user's replaced
s0=$SECONDS
"$bin" run --preset llama-3.1-8b --steps 5 --backend dry --quiet --dump d1 2>err; rc=$?
check "--dump on dry: exit 2 before any work ($((SECONDS - s0)) s), no directory" bash -c "[ $rc = 2 ] && grep -qF -- 'needs computed values' err && [ ! -e d1 ]"
echo file >afile
"$bin" run --steps 1 --backend cpu --quiet --dump afile 2>err; rc=$?
check "--dump an existing file: exit 2, the file intact" bash -c "[ $rc = 2 ] && grep -qF -- 'exists and is not a directory' err && [ \"\$(cat afile)\" = file ]"
mkdir mine; echo precious >mine/notes.txt
"$bin" run --steps 1 --backend cpu --quiet --dump mine 2>err; rc=$?
check "--dump a directory of the user's: refused, its files intact" bash -c "[ $rc = 2 ] && grep -qF -- \"holds 'notes.txt', not a file of a dump\" err && [ \"\$(cat mine/notes.txt)\" = precious ]"
echo '{}' >mine/step.json
"$bin" run --steps 1 --backend cpu --quiet --dump mine 2>err; rc=$?
check "--dump a directory of the user's with a step.json in it: refused, naming the other file, both intact" \
    bash -c "[ $rc = 2 ] && grep -qF -- \"holds 'notes.txt', not a file of a dump\" err && [ \"\$(cat mine/notes.txt)\" = precious ] && [ \"\$(cat mine/step.json)\" = {} ]"
"$bin" run --steps 1 --backend cpu --quiet --dump dd 2>err && "$bin" run --steps 1 --batch 2 --backend cpu --quiet --dump dd 2>err; rc=$?
check "--dump over an earlier dump: replaced whole (batch 2 now), no temporary left" bash -c "[ $rc = 0 ] && grep -q '\"batch\": 2' dd/step.json && [ \$(ls dd | wc -l) = 5 ] && [ $(leftovers) = 0 ]"
"$bin" run --steps 1 --backend cpu --quiet --dump dd --out dd/r.json 2>err; rc=$?
check "--out in the --dump directory: exit 2 before any work, nothing written there" \
    bash -c "[ $rc = 2 ] && grep -qF -- \"--out 'dd/r.json' is in the --dump directory 'dd'\" err && [ ! -e dd/r.json ] && [ \$(ls -A dd | wc -l) = 6 ]"
ln -s dd/step.json dlink
"$bin" run --steps 1 --backend cpu --quiet --dump dd --trace dlink 2>err; rc=$?
check "--trace through a symlink into the --dump directory: exit 2, the dump intact" bash -c "[ $rc = 2 ] && grep -qF -- \"--trace 'dlink' is in the --dump directory\" err && grep -q '\"batch\": 2' dd/step.json"
# concurrent writers of one file: each writes its own temporary; the file is one whole result
for i in 1 2 3 4; do "$bin" run --steps 2 --seq 32 --backend cpu --quiet --out shared.json & done; wait
out=$("$sc" "$schema" shared.json 2>&1)
check "four runs writing one --out at once: it holds one whole result, no temporary left ($out)" bash -c "grep -q '^PASS' <<<'$out' && [ $(leftovers) = 0 ]"
# a signal mid-run: the temporary goes, what was there stays
cp t.json kept.json
"$bin" run --preset tiny --steps 100000 --backend cpu --quiet --out kept.json --trace ktrace.json 2>err & pid=$!
sleep 1; kill -TERM $pid; wait $pid; rc=$?
check "SIGTERM mid-run: killed (exit $rc), kept.json as it was, no temporary left" bash -c "[ $rc = 143 ] && cmp -s t.json kept.json && [ ! -e ktrace.json ] && [ $(leftovers) = 0 ]"
"$bin" run --preset tiny --steps 100000 --backend cpu --quiet --out kept.json 2>err & pid=$!
sleep 1; kill -KILL $pid; wait $pid 2>/dev/null
check "SIGKILL mid-run: kept.json as it was (a hidden temporary may stay, for a sweep's rerun to clear)" cmp -s t.json kept.json
# a full disk: a 64 KiB tmpfs in a private mount namespace
if unshare -m true 2>/dev/null && [ "$(id -u)" = 0 ]; then
    mkdir -p full
    cat >full.sh <<SH
set -u
mount -t tmpfs -o size=64k tmpfs full || exit 99
cp t.json full/old.json
head -c 40000 /dev/zero >full/pad
"$bin" run --steps 1 --seq 64 --backend dry --quiet --out full/old.json 2>full-err1.txt; echo "run \$?" >full-rc.txt
"$bin" plot timeline t.json --out full/fig.png 2>full-err2.txt; echo "plot \$?" >>full-rc.txt
"$bin" run --steps 1 --backend cpu --quiet --dump full/dump --out dump-r.json 2>full-err3.txt; echo "dump \$?" >>full-rc.txt
cmp -s t.json full/old.json && echo intact >>full-rc.txt
ls -a full | grep -c '^\.old\|^\.fig\|^\.dump' >>full-rc.txt
SH
    unshare -m bash full.sh; rc=$?
    if [ "$rc" = 99 ]; then SKIP "tmpfs could not be mounted here: the full-disk checks did not run"
    else
        check "a full disk: run --out exits 1 saying 'No space left on device', the old file intact, no temporary ($(tr '\n' ' ' <full-rc.txt))" \
            bash -c "grep -qx 'run 1' full-rc.txt && grep -q 'No space left on device' full-err1.txt && grep -qx intact full-rc.txt && [ \"\$(tail -1 full-rc.txt)\" = 0 ]"
        check "a full disk: plot exits 1 with the reason ($(head -c 100 full-err2.txt))" bash -c "grep -qx 'plot 1' full-rc.txt && grep -q 'No space left on device' full-err2.txt"
        check "a full disk: --dump exits 1 with the reason ($(head -c 100 full-err3.txt)), and the run's result says error, with why" \
            bash -c "grep -qx 'dump 1' full-rc.txt && grep -q 'No space left on device' full-err3.txt && grep -q '\"status\": \"error\"' dump-r.json && grep -q 'was not written: .*No space left on device' dump-r.json"
    fi
else SKIP "no private mount namespace here (unshare -m, root): the full-disk checks did not run"; fi

# ---- inputs: only regular files within a stated size are read; nothing blocks --------------------------
s0=$SECONDS
timeout 20 "$bin" sweep /dev/zero --out-dir z 2>err; rc=$?
check "sweep /dev/zero: exit 2 at once, naming a device ($(head -c 120 err))" bash -c "[ $rc = 2 ] && grep -q 'not a regular file (a device' err && [ $((SECONDS - s0)) -lt 10 ]"
mkfifo conf.fifo data.fifo res.fifo
timeout 20 "$bin" sweep conf.fifo --out-dir z 2>err; rc=$?
check "sweep a FIFO: exit 2 at once, no hang" bash -c "[ $rc = 2 ] && grep -q 'a FIFO' err"
timeout 20 "$bin" run --steps 1 --backend cpu --quiet --data data.fifo --out df.json 2>err; rc=$?
check "run --data a FIFO: exit 2 at once, no hang, nothing written" bash -c "[ $rc = 2 ] && grep -q 'a FIFO' err && [ ! -e df.json ]"
timeout 20 "$bin" plot timeline res.fifo --out pf.png 2>err; rc=$?
check "plot a FIFO: exit 2 at once" bash -c "[ $rc = 2 ] && grep -q 'a FIFO' err"

# ---- sweeps: one a directory, children die with it, their own files, memory shared -------------------------
cat >slow.conf <<'C'
name = slow
base = --preset tiny --backend cpu --steps 100000
C
"$bin" sweep slow.conf --out-dir so 2>so1.err & p1=$!
sleep 1
timeout 20 "$bin" sweep slow.conf --out-dir so 2>err; rc=$?
check "a second sweep into one directory: exit 2 naming the first's pid ($(head -c 140 err))" bash -c "[ $rc = 2 ] && grep -q 'another sweep (pid $p1) is writing' err"
kill -KILL $p1; wait $p1 2>/dev/null; sleep 0.5
check "SIGKILL of a sweep: its running configuration dies with it" bash -c "! pgrep -f '[r]un --preset tiny --backend cpu --steps 100000 --experiment slow' >/dev/null"
timeout 60 "$bin" sweep slow.conf --out-dir so --timeout 1 2>err; rc=$?
check "the rerun after SIGKILL runs (the lock went with the killed sweep)" bash -c "[ $rc = 0 ] && grep -q '\"status\": \"timeout\"' so/slow.json"
cat >tr.conf <<'C'
name = tr
base = --preset tiny --backend cpu --steps 1 --seq 16 --batch 2 --trace tr.json --dump dumps
axis s = x: --seed 1 | y: --seed 2
C
"$bin" sweep tr.conf --out-dir tro --jobs 2 2>err; rc=$?
check "--trace and --dump in a sweep's base: one file and one directory a configuration" \
    bash -c "[ $rc = 0 ] && grep -q '\"traceEvents\"' tr-tr-x.json && grep -q '\"traceEvents\"' tr-tr-y.json && [ -s dumps-tr-x/step.json ] && [ -s dumps-tr-y/step.json ] && [ ! -e tr.json ]"
avail=$(awk '/^MemAvailable:/ { print $2 * 1024 }' /proc/meminfo)
lim=$(grep -o '"memory_limit": [0-9]*' tro/tr-x.json | grep -o '[0-9]*$')
check "--jobs 2: a cpu configuration's memory limit is half of what is available ($lim of $avail)" \
    awk -v l="$lim" -v a="$avail" 'BEGIN { exit !(l > 0.35 * a && l < 0.6 * a) }'

# ---- reports: what they skip is named; labels cannot collide; linear parsing ---------------------------------
cat >rp.conf <<'C'
name = rp
base = --preset tiny --backend dry --steps 1 --timeline none
axis v = a: --seed 1 | a.timeline: --seed 2 | b: --seed 3 | c: --seed 4
figure t = timeline config=a
C
"$bin" sweep rp.conf --out-dir rpo 2>/dev/null
printf '{"experiment": "rp", "status": "o' >rpo/rp-b.json
printf '{"schema_version": 1, "experiment": "other", "status": "ok"}\n' >rpo/rp-c.json
"$bin" report rp.conf --results rpo --figures rpf --tables rpt 2>err; rc=$?
check "report names a truncated and a foreign result and why, and skips them" \
    bash -c "[ $rc = 0 ] && grep -q 'rp-b.json skipped: .*line 1' err && grep -q \"rp-c.json skipped: a result of experiment 'other', not of 'rp'\" err && grep -q '^rp-c .*skipped' rpo/summary.txt"
cp rpo/rp-a.json keep-a.json
sed 's/"seed": 1,/"seed": 7,/' keep-a.json >rpo/rp-a.json
"$bin" report rp.conf --results rpo --figures rpf2 --tables rpt2 2>err
check "a result of another version of the experiment file (another seed) is named and skipped, not used" \
    grep -q "rp-a.json skipped: its config.seed is 7, the experiment file gives this id --seed 1" err
cp keep-a.json rpo/rp-a.json
check "a label ending in .timeline does not collide with the timeline's cache (rp-a.timeline.json kept whole)" \
    bash -c "grep -q '\"experiment\": \"rp\"' rpo/rp-a.timeline.json && [ -s rpo/timelines/rp-a.json ] && [ -s rpf/rp-t.png ]"
{ printf 'name = many\nbase = --preset tiny --backend dry\naxis seed = '; seq 1 20000 | paste -sd'|'; } >many.conf
s0=$(date +%s%N)
"$bin" sweep many.conf --out-dir mo --dry-run >/dev/null 2>err; rc=$?
ms=$((($(date +%s%N) - s0) / 1000000))
check "an axis of 20000 values parses in linear time ($ms ms)" test "$rc" = 0 -a "$ms" -lt 5000
{ printf 'name = dup\nbase = --preset tiny --backend dry\naxis seed = '; { seq 1 20000; echo 17; } | paste -sd'|'; } >dup.conf
"$bin" sweep dup.conf --out-dir du --dry-run >/dev/null 2>err; rc=$?
check "two values with one label among 20001: named ($(head -c 120 err))" bash -c "[ $rc = 2 ] && grep -q 'values 17 and 20001 both have the label' err"

# ---- long runs: host memory bounded, and said so before it runs out -------------------------------------------
s0=$SECONDS
"$bin" run --preset llama-3.1-8b --steps 100000000 --backend dry --timeline none --quiet 2>err; rc=$?
check "--steps 1e8: exit 2 at once naming the host memory its records need, nothing written ($(head -c 150 err))" \
    bash -c "[ $rc = 2 ] && grep -q 'of records in host memory, more than half of what is available' err && [ ! -e long.json ] && [ $((SECONDS - s0)) -lt 20 ]"
"$bin" run --preset llama-3.1-8b --steps 2000000 --backend dry --quiet 2>err; rc=$?
check "a full timeline that would not fit: exit 2 after the first step, naming --timeline none ($(head -c 150 err))" \
    bash -c "[ $rc = 2 ] && grep -q 'the event log of 2000000 steps would take' err && grep -q -- '--timeline none' err && [ ! -e long.json ]"
if [ -z "${DPPROF_TEST_SANITIZED:-}" ]; then # a sanitizer reserves terabytes of address space
    (ulimit -v 1500000; "$bin" run --preset llama-3.1-8b --steps 30000 --backend dry --timeline none --quiet --out long.json) 2>err; rc=$?
    check "30000 dry steps of an 8B model with --timeline none in 1.5 GB of address space (the event log is not kept)" \
        bash -c "[ $rc = 0 ] && grep -q '\"status\": \"ok\"' long.json"
fi
# numbers a result cannot hold: out of range, not finite, absurdly nested
"$bin" sweep rp.conf --out-dir rpn 2>/dev/null
sed -i 's/"peak_memory_mb": [0-9.e+-]*/"peak_memory_mb": 1e400/' rpn/rp-b.json
sed -i 's/"peak": [0-9]*/"peak": 9.9e307/' rpn/rp-c.json
{ head -c 100000 /dev/zero | tr '\0' '['; head -c 100000 /dev/zero | tr '\0' ']'; } >rpn/rp-a.timeline.json
"$bin" report rp.conf --results rpn --figures rpf3 --tables rpt3 2>err; rc=$?
check "1e400, a peak of 9.9e307 bytes and 1e5-deep nesting: each named and skipped, the report runs ($(tr '\n' ' ' <err | head -c 300))" \
    bash -c "[ $rc = 0 ] && grep -q 'rp-b.json skipped: .*number out of range' err && grep -q 'rp-c.json skipped: breakdown.bytes.peak = 9.9e+307 is not a byte count' err && grep -q 'rp-a.timeline.json skipped: .*nesting deeper than 256 levels' err"

# ---- what a user owns is never lost ----------------------------------------------------------------------
# a Hugging Face model folder (config.json and model.safetensors, the names a dump writes) is not a dump of
# dpprof's: refused, the weights intact; a dump carries its marker, and only a marked directory is replaced
mkdir hfm; echo '{"model_type": "llama"}' >hfm/config.json; echo weights >hfm/model.safetensors
"$bin" run --steps 1 --backend cpu --quiet --dump hfm 2>err; rc=$?
check "--dump a Hugging Face model folder: exit 2 before the run, the weights intact ($(head -c 160 err))" \
    bash -c "[ $rc = 2 ] && grep -qF 'no .dpprof-dump: not a dump of dpprof' err && [ \"\$(cat hfm/model.safetensors)\" = weights ]"
check "a dump carries its marker (.dpprof-dump)" test -s dd/.dpprof-dump
mkdir empty
"$bin" run --steps 1 --backend cpu --quiet --dump empty 2>err; rc=$?
check "--dump an empty directory: written" bash -c "[ $rc = 0 ] && [ -s empty/step.json ] && [ -e empty/.dpprof-dump ]"
# a dump through a symbolic link (to a directory, or dangling): refused before the run, the link and its target kept
ln -s dd ddlink; ln -s nowhere-dir ddangle
"$bin" run --steps 1 --backend cpu --quiet --dump ddlink 2>err; rc=$?
check "--dump a symlink to a directory: exit 2 before the run, the link and the dump kept" bash -c "[ $rc = 2 ] && grep -qF 'is a symbolic link' err && [ -L ddlink ] && grep -q '\"batch\": 2' dd/step.json"
"$bin" run --steps 1 --backend cpu --quiet --dump ddangle --out ok-before.json 2>err; rc=$?
check "--dump a dangling symlink: exit 2 before the run (no result written)" bash -c "[ $rc = 2 ] && grep -qF 'is a symbolic link to nothing' err && [ ! -e ok-before.json ] && [ -L ddangle ]"
# standard streams by any name are written in place: the file standard error is redirected to keeps its
# lines, and later messages still reach it
echo keep >errlog
"$bin" run $q --out /dev/stderr 2>>errlog; rc=$?
check "--out /dev/stderr with 2>>log: written into the log in place, 'keep' kept" bash -c "[ $rc = 0 ] && [ \"\$(head -1 errlog)\" = keep ] && grep -q '\"status\": \"ok\"' errlog && ! ls -a | grep -q '^.dpprof-tmp.errlog'"
echo keep >errlog2
"$bin" run $q --out /proc/self/fd/2 2>>errlog2; rc=$?
check "--out /proc/self/fd/2 with 2>>log: the same" bash -c "[ $rc = 0 ] && [ \"\$(head -1 errlog2)\" = keep ] && grep -q '\"status\": \"ok\"' errlog2"
echo keep >fd3log
"$bin" run $q --out /dev/fd/3 3>>fd3log; rc=$?
check "--out /dev/fd/3 with 3>>file: appended through the descriptor, 'keep' kept" bash -c "[ $rc = 0 ] && [ \"\$(head -1 fd3log)\" = keep ] && grep -q '\"status\": \"ok\"' fd3log"
echo keep >samelog
"$bin" run $q --out samelog 2>>samelog; rc=$?
check "--out naming the file standard error is redirected to: written in place, 'keep' kept" bash -c "[ $rc = 0 ] && [ \"\$(head -1 samelog)\" = keep ] && grep -q '\"status\": \"ok\"' samelog"
# a replaced file keeps its owner and its mode; a replaced dump directory its mode (it holds the training batch)
echo old >private.json; chmod 600 private.json
"$bin" run $q --out private.json 2>err; rc=$?
check "--out over a 0600 file: replaced, still 0600" bash -c "[ $rc = 0 ] && [ \$(stat -c %a private.json) = 600 ] && grep -q '\"status\": \"ok\"' private.json"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    echo old >owned.json; chown nobody owned.json; chmod 640 owned.json
    "$bin" run $q --out owned.json 2>err; rc=$?
    check "--out over a file of another user's (as root): replaced, its owner and mode kept" bash -c "[ $rc = 0 ] && [ \"\$(stat -c '%U %a' owned.json)\" = 'nobody 640' ]"
else SKIP "not root: the owner of a replaced file was not checked"; fi
chmod 700 dd
"$bin" run --steps 1 --backend cpu --quiet --dump dd 2>err; rc=$?
check "--dump over a 0700 dump: replaced, still 0700" bash -c "[ $rc = 0 ] && [ \$(stat -c %a dd) = 700 ]"
# a name of 248 to 255 characters is written (its temporary has a shorter name)
long=$(printf 'r%.0s' $(seq 250)).json
"$bin" run $q --out "$long" 2>err; rc=$?
check "--out a name of 255 characters: written ($(head -c 120 err))" bash -c "[ $rc = 0 ] && grep -q '\"status\": \"ok\"' '$long' && ! ls -a | grep -qx '.dpprof-tmp.......'"
# SIGTERM while the dump is written: its temporary directory goes with the process
mkdir -p sig && cd sig
"$bin" run --backend cpu --steps 1 --seq 4 --batch 1 --vocab 32000 --hidden 256 --layers 4 --heads 4 --ffn 704 --quiet --dump big 2>err &
pid=$!
for _ in $(seq 2000); do ls -d .dpprof-tmp.big.* >/dev/null 2>&1 && break; sleep 0.005; done
caught=$(ls -d .dpprof-tmp.big.* 2>/dev/null | wc -l)
kill -TERM $pid 2>/dev/null; wait $pid; rc=$?
if [ "$caught" -gt 0 ]; then
    check "SIGTERM during --dump: killed (exit $rc), its temporary directory removed, no dump" bash -c "[ $rc = 143 ] && [ \$(find . -name '.dpprof-tmp.*' | wc -l) = 0 ] && [ ! -e big ]"
else SKIP "SIGTERM during --dump: the dump was written before the signal could reach it"; fi
# (a shell's background job ignores SIGQUIT: started with the default action, as from a terminal)
python3 -c 'import os, signal, sys; signal.signal(signal.SIGQUIT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])' \
    "$bin" run --backend cpu --steps 1 --seq 4 --batch 1 --vocab 32000 --hidden 256 --layers 4 --heads 4 --ffn 704 --quiet --dump bigq 2>err &
pid=$!
for _ in $(seq 2000); do ls -d .dpprof-tmp.bigq.* >/dev/null 2>&1 && break; sleep 0.005; done
caught=$(ls -d .dpprof-tmp.bigq.* 2>/dev/null | wc -l)
kill -QUIT $pid 2>/dev/null; wait $pid 2>/dev/null; rc=$?
if [ "$caught" -gt 0 ]; then
    check "SIGQUIT during --dump: killed (exit $rc), its temporary directory removed, no dump" bash -c "[ $rc = 131 ] && [ \$(find . -name '.dpprof-tmp.*' | wc -l) = 0 ] && [ ! -e bigq ]"
else SKIP "SIGQUIT during --dump: the dump was written before the signal could reach it"; fi
# standard error piped into a reader that stops (head): the run goes on to its end, its files whole, no temporary
( "$bin" run --backend cpu --steps 30 --seq 16 --out piped.json --dump pdump 2>&1 >/dev/null | head -c 1 >/dev/null )
sleep 0.5
check "stderr into head, which stops reading: the run ends, writes its result and dump, leaves no temporary" \
    bash -c "grep -q '\"status\": \"ok\"' piped.json && [ -s pdump/step.json ] && [ \$(find . -name '.dpprof-tmp.*' | wc -l) = 0 ]"
cd ..
