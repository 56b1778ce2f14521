#!/usr/bin/env bash
# tests/test_fuzz.sh - the libFuzzer harnesses (json reader, run options, experiment files) for a
# bounded time each (FUZZ_SECONDS, default 20), from their committed corpora: a crash, a sanitizer
# report or a broken invariant fails. SKIP when clang's libFuzzer runtime is missing. run by make test.
set -u
cd "$(dirname "$0")/.."
secs=${FUZZ_SECONDS:-20}
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }\n' >"$probe/p.c"
if ! clang -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" >/dev/null 2>&1; then
    echo "SKIP fuzzing: clang with libFuzzer is not installed (apt-get install clang libclang-rt-14-dev)"
    exit 0
fi
if ! make -s fuzz-build >"$probe/build.log" 2>&1; then
    echo "FAIL fuzzers do not build: $(tail -5 "$probe/build.log")"
    exit 1
fi
for f in json options conf; do
    rm -rf "build/fuzz/corpus_${f}_run" "build/fuzz/$f"
    mkdir -p "build/fuzz/corpus_${f}_run" "build/fuzz/$f"
    log=build/fuzz/$f.log
    build/fuzz/fuzz_$f -max_total_time="$secs" -timeout=30 -dict="tests/fuzz/$f.dict" -artifact_prefix="build/fuzz/$f/" \
        "build/fuzz/corpus_${f}_run" "tests/fuzz/corpus_$f" >"$log" 2>&1
    rc=$?
    runs=$(grep -o 'Done [0-9]* runs' "$log" | grep -o '[0-9]*' | tail -1)
    if [ $rc -eq 0 ]; then
        echo "PASS fuzz $f: ${runs:-?} runs in ${secs} s, no crash, no sanitizer report"
    else
        echo "FAIL fuzz $f (exit $rc): $(grep -m1 -E 'ERROR|runtime error|invariant' "$log") input: $(ls build/fuzz/$f/ | head -1)"
    fi
done
