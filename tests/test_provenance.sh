#!/usr/bin/env bash
# tests/test_provenance.sh - what a result says it was built from: the commit, the sha256 of the files compiled
# (make source-files lists them) and whether the commit holds them. a copy whose .git is older than its files (the
# way a GPU machine once got its tree) must say "differs", name the files by their hash, and say so on a run.
# needs ./dpprof (make) and git. run by make test.
set -u
cd "$(dirname "$0")/.."
. tests/lib.bash
bin=${DPPROF_TEST_BIN:-$PWD/dpprof}
if ! command -v git >/dev/null || ! git rev-parse HEAD >/dev/null 2>&1; then echo "SKIP no git repository here: provenance not checked"; exit 0; fi
files=$(make -s --no-print-directory source-files)
hash=$(cat $files | sha256sum | cut -d' ' -f1)
if [ "$(for f in $files; do git show "HEAD:$f" 2>/dev/null; done | sha256sum | cut -d' ' -f1)" = "$hash" ]; then state=clean; else state=differs; fi
"$bin" run --preset tiny --backend dry --steps 1 --quiet --timeline none --out "$tmp/r.json"; rc=$?
check "a result's meta: the commit, the sources' sha256 (of $(echo $files | wc -w) files) and their state ($state), as the tree has them" bash -c \
    "[ $rc -eq 0 ] && grep -q '\"git_commit\": \"$(git rev-parse --short=12 HEAD)\", \"source_sha256\": \"$hash\", \"source_state\": \"$state\", \"source_note\": \"' '$tmp/r.json'"
check "dpprof version names them" bash -c "'$bin' version | grep -q '(.*$(git rev-parse --short=12 HEAD), sources ${hash:0:12} $state;'"
check "make source-hash: the hash a build here records" bash -c "[ \"\$(make -s --no-print-directory source-hash)\" = $hash ]"
err=$(make -s --no-print-directory source-hash REV=no-such-rev 2>&1); rc=$?
check "make source-hash REV=no-such-rev: exit non-zero, the value named ($err)" bash -c "[ $rc -ne 0 ] && grep -qF 'REV=no-such-rev is not a commit' <<<\"\$1\"" _ "$err"
# each data/bench folder's provenance line: the hash is that of the compiled commit's files, by the same rule
for pv in data/bench/*/provenance; do
    [ -f "$pv" ] || continue
    grep -v '^#' "$pv" | while read -r rec comp sha; do
        if ! git rev-parse --verify --quiet "$comp^{commit}" >/dev/null; then echo "SKIP $pv: commit $comp is not in this clone's history"; continue; fi
        check "$pv: $rec compiled $comp, whose files hash to ${sha:0:12}" bash -c "[ \"\$(make -s --no-print-directory source-hash REV=$comp)\" = $sha ]"
    done
done
# a copy of the tree whose .git is older than its files (the commit before the last that changed them): built, it
# says differs, names the files
last=$(git log -1 --format=%H -- $files)
git clone -q . "$tmp/copy" && git -C "$tmp/copy" reset -q --soft "$last~1" 2>/dev/null; rc=$?
if [ $rc -ne 0 ]; then echo "SKIP the sources were never changed after the first commit: no older .git to copy them under"; exit 0; fi
old=$(git -C "$tmp/copy" rev-parse --short=12 HEAD)
chash=$(cd "$tmp/copy" && cat $files | sha256sum | cut -d' ' -f1)
(cd "$tmp/copy" && make -s build/dpprof-nocuda CFLAGS=-O0 >"$tmp/build.log" 2>&1); rc=$?
"$tmp/copy/build/dpprof-nocuda" run --preset tiny --backend dry --steps 1 --timeline none --out "$tmp/c.json" 2>"$tmp/c.err"; rc2=$?
check "a copy whose .git is older than its files: the result names commit $old, source_state differs, the files' own hash" bash -c \
    "[ $rc -eq 0 ] && [ $rc2 -eq 0 ] && grep -q '\"git_commit\": \"$old\", \"source_sha256\": \"$chash\", \"source_state\": \"differs\"' '$tmp/c.json'"
check "make source-hash REV=${last:0:12}: the hash a build of that commit's files records (${chash:0:12})" bash -c "[ \"\$(make -s --no-print-directory source-hash REV=$last)\" = $chash ]"
check "...and the run says so on its terminal" grep -q "this build's sources (${chash:0:12}) are not commit $old's" "$tmp/c.err"
