#!/usr/bin/env bash
# tests/test_outputs.sh - hostile outputs and faults: device nodes, symlinks, FIFOs, a full disk, concurrent
# writers, a signal mid-run, outputs that alias inputs or each other. each: nothing replaced, nothing half
# written, a message with the reason, every finished result kept. the full disk is a small tmpfs in a
# private mount namespace (unshare -m), SKIP where that is not allowed. needs ./dpprof. run by make test.
set -u
cd "$(dirname "$0")/.."
bin=$PWD/dpprof
sc=$PWD/build/schema_check
schema=$PWD/docs/result.schema.json
. tests/lib.bash
cd "$tmp"
q="--steps 1 --backend dry --quiet"
leftovers() { find "${1:-.}" -name '.*.??????' 2>/dev/null | grep -c .; }

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
"$bin" run $q --out same.json --trace ./same.json 2>err; rc=$?
check "--out f --trace f: refused, nothing written" bash -c "[ $rc = 2 ] && grep -qF -- 'are the same file' err && [ ! -e same.json ]"
cp t.json data.txt
"$bin" run --steps 1 --backend cpu --quiet --data data.txt --out data.txt 2>err; rc=$?
check "run --data f --out f: refused, the input intact" bash -c "[ $rc = 2 ] && grep -qF -- 'is the --data file' err && cmp -s t.json data.txt"
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
check "--dump a directory of the user's: refused, its files intact" bash -c "[ $rc = 2 ] && grep -qF -- 'no earlier dump' err && [ \"\$(cat mine/notes.txt)\" = precious ]"
"$bin" run --steps 1 --backend cpu --quiet --dump dd 2>err && "$bin" run --steps 1 --batch 2 --backend cpu --quiet --dump dd 2>err; rc=$?
check "--dump over an earlier dump: replaced whole (batch 2 now), no temporary left" bash -c "[ $rc = 0 ] && grep -q '\"batch\": 2' dd/step.json && [ \$(ls dd | wc -l) = 4 ] && [ $(leftovers) = 0 ]"
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
"$bin" run --steps 1 --backend cpu --quiet --dump full/dump 2>full-err3.txt; echo "dump \$?" >>full-rc.txt
cmp -s t.json full/old.json && echo intact >>full-rc.txt
ls -a full | grep -c '^\.old\|^\.fig\|^\.dump' >>full-rc.txt
SH
    unshare -m bash full.sh; rc=$?
    if [ "$rc" = 99 ]; then SKIP "tmpfs could not be mounted here: the full-disk checks did not run"
    else
        check "a full disk: run --out exits 1 saying 'No space left on device', the old file intact, no temporary ($(tr '\n' ' ' <full-rc.txt))" \
            bash -c "grep -qx 'run 1' full-rc.txt && grep -q 'No space left on device' full-err1.txt && grep -qx intact full-rc.txt && [ \"\$(tail -1 full-rc.txt)\" = 0 ]"
        check "a full disk: plot exits 1 with the reason ($(head -c 100 full-err2.txt))" bash -c "grep -qx 'plot 1' full-rc.txt && grep -q 'No space left on device' full-err2.txt"
        check "a full disk: --dump exits 1 with the reason ($(head -c 100 full-err3.txt))" bash -c "grep -qx 'dump 1' full-rc.txt && grep -q 'No space left on device' full-err3.txt"
    fi
else SKIP "no private mount namespace here (unshare -m, root): the full-disk checks did not run"; fi
