#!/usr/bin/env bash
# tests/test_schema.sh - the results contract: a result of every kind (ok on dry and cpu, with and without the
# timeline, LoRA and classification; oom; error; and the sweep's error, timeout and crashed records) holds to
# docs/result.schema.json, checked by build/schema_check; the checker fails what breaks the schema; the trace
# holds the last --trace-steps steps and names its tracks. needs ./dpprof and build/schema_check. run by make test.
set -u
cd "$(dirname "$0")/.."
bin=./dpprof
sc=build/schema_check
schema=docs/result.schema.json
. tests/lib.bash

valid() { # name file...
    local name=$1; shift
    local out
    out=$("$sc" "$schema" "$@" 2>&1); check "$name: $(grep -c '^PASS' <<<"$out") of $# hold to the schema${out:+ $(grep '^FAIL' <<<"$out" | head -2 | tr '\n' ' ')}" test -z "$(grep '^FAIL' <<<"$out")"
}
r=$tmp/r; mkdir -p "$r"
tiny="--preset tiny --seq 16 --batch 4 --quiet"
"$bin" run $tiny --steps 2 --backend dry --out "$r/dry.json"
"$bin" run $tiny --steps 2 --backend dry --timeline none --algo flash_bk --sigma 1 --dataset-size 1000 --out "$r/dry-dp.json"
"$bin" run $tiny --steps 2 --backend cpu --algo ghost_bk --sigma 1 --dataset-size 1000 --lora-rank 2 --out "$r/cpu-lora.json"
"$bin" run $tiny --steps 1 --backend cpu --task cls --classes 3 --algo persample --poisson --sigma 1 --dataset-size 100 --out "$r/cpu-cls.json"
"$bin" run $tiny --steps 1 --backend cpu --memory-limit 1M --out "$r/oom.json" 2>/dev/null
"$bin" run $tiny --steps 1 --backend dry --ranks 2 --zero 3 --algo ghost --sigma 1 --out "$r/dry-zero3.json"
"$bin" run $tiny --steps 1 --backend cpu --zero 2 --algo persample --sigma 1 --out "$r/cpu-zero2.json"
"$bin" run --preset tiny --seq 16 --batch 2 --steps 50 --lr 1e5 --optimizer sgd --backend cpu --quiet --out "$r/error.json" 2>/dev/null
check "the runs wrote ok, oom and error results" bash -c "grep -q '\"status\": \"ok\"' '$r/dry.json' && grep -q '\"status\": \"oom\"' '$r/oom.json' && grep -q '\"status\": \"error\"' '$r/error.json'"
valid "dpprof run's results" "$r"/*.json
# the sweep's own records: a configuration the run refuses (error), one killed by the timeout, one by a signal
cat >"$tmp/s.conf" <<'C'
name = s
base = --preset tiny --backend cpu
axis kind = bad: --heads 5 | long: --steps 100000
C
"$bin" sweep "$tmp/s.conf" --out-dir "$tmp/s" --timeout 1 2>/dev/null
cat >"$tmp/crash.conf" <<'C'
name = crash
base = --preset tiny --backend cpu --steps 100000
C
(ulimit -c 0; ulimit -S -t 1; exec "$bin" sweep "$tmp/crash.conf" --out-dir "$tmp/crash" 2>/dev/null)
check "the sweep wrote error, timeout and crashed records" bash -c "grep -q '\"status\": \"error\"' '$tmp/s/s-bad.json' && grep -q '\"status\": \"timeout\"' '$tmp/s/s-long.json' && grep -q '\"status\": \"crashed\"' '$tmp/crash/crash.json'"
valid "dpprof sweep's records" "$tmp/s/s-bad.json" "$tmp/s/s-long.json" "$tmp/crash/crash.json"
check "every result says schema_version 2 first" bash -c "for f in '$r'/*.json '$tmp/s/s-long.json' '$tmp/crash/crash.json'; do sed -n 2p \"\$f\" | grep -qx '  \"schema_version\": 2,' || exit 1; done"
check "the timeline names its modules" bash -c "grep -q '\"modules\": \[\"embedding\", \"attention\", \"mlp\"' '$r/dry.json'"
# the checker fails what breaks the schema
sed 's/"status": "ok"/"status": "fine"/' "$r/dry.json" >"$tmp/bad-status.json"
sed 's/"schema_version": 2/"schema_version": 3/' "$r/dry.json" >"$tmp/bad-version.json"
sed 's/"peak_memory_mb": [0-9.e+-]*/"peak_memory_mb": "big"/' "$r/dry.json" >"$tmp/bad-type.json"
grep -v '"meta":' "$r/dry.json" >"$tmp/bad-missing.json"
sed 's/"error": "[^"]*"/"errors": "x"/' "$r/oom.json" >"$tmp/bad-noerror.json"
sed 's/"argv": \[[^]]*\]/"argv": []/' "$tmp/s/s-long.json" >"$tmp/bad-argv.json"
for f in "bad-status:status: 'fine' is none" "bad-version:schema_version: not the constant" "bad-type:peak_memory_mb: a value of type string" \
         "bad-noerror:the key 'error' is missing" "bad-argv:config.argv: fewer items than minItems"; do
    out=$("$sc" "$schema" "$tmp/${f%%:*}.json" 2>/dev/null); rc=$?
    check "the checker fails ${f%%:*}.json, saying why (exit $rc: ${out#* violations, the first: })" \
        bash -c "[ $rc = 1 ] && grep -q '^FAIL' <<<\"\$1\" && grep -qF -- \"\$2\" <<<\"\$1\"" _ "$out" "${f#*:}"
done
"$sc" "$schema" "$tmp/bad-missing.json" >/dev/null 2>&1; rc=$?
check "the checker fails a result that is not JSON or misses meta (exit $rc)" test "$rc" = 1
printf '{"type": "object", "patternProperties": {}}\n' >"$tmp/unknown.schema.json"
out=$("$sc" "$tmp/unknown.schema.json" "$r/dry.json" 2>&1)
check "a schema keyword the checker does not know fails, not passes" bash -c "grep -q '^FAIL' <<<'$out' && grep -q 'patternProperties' <<<'$out'"
# traces: the last --trace-steps steps (default 2), named tracks
"$bin" run $tiny --steps 6 --backend cpu --trace "$tmp/t6.json" --out "$tmp/t6r.json"
"$bin" run $tiny --steps 6 --backend cpu --trace "$tmp/t1.json" --trace-steps 1 --out "$tmp/t1r.json"
"$bin" run $tiny --steps 6 --backend cpu --trace "$tmp/t9.json" --trace-steps 9 --out "$tmp/t9r.json"
steps() { grep -o '"cat": "phase", "ph": "X", "pid": 1, "tid": 1, "ts": [^,]*, "dur": [^,]*, "args": {"step": [0-9]*' "$1" | grep -o '[0-9]*$' | sort -un | tr '\n' ' '; }
check "a trace holds the last 2 steps by default ($(steps "$tmp/t6.json"))" test "$(steps "$tmp/t6.json")" = "4 5 "
check "--trace-steps 1: the last step ($(steps "$tmp/t1.json"))" test "$(steps "$tmp/t1.json")" = "5 "
check "--trace-steps 9 of 6: every step ($(steps "$tmp/t9.json"))" test "$(steps "$tmp/t9.json")" = "0 1 2 3 4 5 "
check "a bounded trace is smaller than a whole one ($(wc -c <"$tmp/t1.json") < $(wc -c <"$tmp/t9.json") bytes)" test "$(wc -c <"$tmp/t1.json")" -lt "$(wc -c <"$tmp/t9.json")"
check "the trace names its tracks: phases and ops" bash -c "grep -q '\"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"phases\"}' '$tmp/t6.json' && grep -q '\"tid\": 2, \"args\": {\"name\": \"ops' '$tmp/t6.json'"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$tmp/t1.json" 2>/dev/null; rc=$?
command -v python3 >/dev/null && check "the bounded trace is valid JSON" test "$rc" = 0
