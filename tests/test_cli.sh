#!/usr/bin/env bash
# tests/test_cli.sh - the dpprof command line as a user meets it: help, bad input (exit code,
# message naming the problem, no partial file), a real run with every output, dry runs.
# needs ./dpprof (make). run by make test.
set -u
cd "$(dirname "$0")/.."
bin=./dpprof
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass() { echo "PASS $*"; }
fail() { echo "FAIL $*"; }
check() { local name=$1; shift; if "$@"; then pass "$name"; else fail "$name"; fi; }

# bad input: exit code, a message containing the expected text, and no output file left behind
bad() { # expected-code expected-text args...
    local code=$1 text=$2; shift 2
    local out=$tmp/bad.json err rc
    err=$("$bin" "$@" 2>&1 >/dev/null); rc=$?; err=${err%%$'\n'*}
    if [ "$rc" -eq "$code" ] && grep -qF -- "$text" <<<"$err" && [ ! -e "$out" ] && [ ! -e "$out.tmp" ]; then
        pass "bad input ($*) -> exit $rc: $err"
    else
        fail "bad input ($*): want exit $code and '$text', got exit $rc: $err"
    fi
    rm -f "$out" "$out.tmp"
}
o="--out $tmp/bad.json --steps 1 --backend dry"
bad 2 "unknown preset 'llama-9'" run --preset llama-9 $o
bad 2 "heads = 5 does not divide hidden = 64" run --heads 5 $o
bad 2 "kv-heads = 3 does not divide heads = 4" run --heads 4 --kv-heads 3 $o
bad 2 "--batch '-3': expected an integer in [1, 16777216]" run --batch -3 $o
bad 2 "--hidden '-64': expected an integer" run --hidden -64 $o
bad 2 "--seq '0': expected an integer in [1," run --seq 0 $o
bad 2 "--seq '12x': expected an integer" run --seq 12x $o
bad 2 "--layers '99999999999999999999': expected an integer" run --layers 99999999999999999999 $o
bad 2 "physical-batch = 16 is larger than batch = 8" run --batch 8 --physical-batch 16 $o
bad 2 "--algo 'fancy': expected vanilla, persample" run --algo fancy $o
bad 2 "sigma, max-grad-norm, clipping and delta apply to the DP algorithms, not to --algo vanilla" run --sigma 1.0 $o
bad 2 "--poisson samples from a dataset: give --dataset-size" run --algo flash --poisson $o
bad 2 "--clipping 'layer': expected flat or per-layer" run --algo ghost --clipping layer $o
bad 2 "--sigma '-1': expected a number in [0," run --sigma -1 $o
bad 2 "delta = 1 must be in (0, 1)" run --delta 1 $o
bad 2 "--task 'seq2seq': expected lm or cls" run --task seq2seq $o
bad 2 "unknown option '--bogus'" run --bogus 1 $o
bad 2 "--steps needs a value" run $o --steps
bad 2 "--data /nonexistent/corpus.txt: cannot open" run --data /nonexistent/corpus.txt $o
bad 2 "--out '/nonexistent-dir/r.json': cannot write" run --steps 1 --backend dry --out /nonexistent-dir/r.json
bad 2 "--memory-limit 'lots': expected a positive size" run --memory-limit lots $o
bad 2 "unknown command 'fly'" fly
printf '1\tgood line\nnot a label line\n' >"$tmp/bad_cls.txt"
bad 2 "bad_cls.txt:2: expected 'label<TAB>text'" run --task cls --data "$tmp/bad_cls.txt" $o
printf '0\tfine\n7\tclass seven\n' >"$tmp/bad_label.txt"
bad 2 "bad_label.txt:2: label 7 is not in [0, 2)" run --task cls --data "$tmp/bad_label.txt" $o
bad 2 "needs vocab >= 256, got vocab = 100" run --vocab 100 --data "$tmp/bad_label.txt" $o
bad 2 "plot: unknown figure 'pie'" plot pie x.json --out "$tmp/x.png"
echo '{"experiment": "x", "timeline": {' >"$tmp/trunc.json"
bad 2 "trunc.json: line 2, column 1" plot timeline "$tmp/trunc.json" --out "$tmp/bad.json"
echo '{"experiment": "x"}' >"$tmp/notl.json"
bad 2 "no timeline" plot timeline "$tmp/notl.json" --out "$tmp/bad.json"

# help is complete: every option of the run contract appears
help=$("$bin" run --help); rc=$?
missing=""
for opt in --preset --vocab --hidden --layers --heads --kv-heads --ffn --seq --task --classes --algo --batch \
           --physical-batch --steps --warmup --lr --optimizer --sigma --max-grad-norm --clipping --poisson \
           --dataset-size --delta --lora-rank --lora-alpha --lora-targets --dtype --backend --seed --out \
           --trace --dump --data --memory-limit; do
    grep -qF -- "$opt" <<<"$help" || missing="$missing $opt"
done
check "run --help exits 0 and names every option${missing:+ (missing:$missing)}" test "$rc" -eq 0 -a -z "$missing"
"$bin" --help >/dev/null; check "dpprof --help exits 0" test $? -eq 0
"$bin" >/dev/null 2>&1; check "dpprof without a command exits 2" test $? -eq 2

# a real cpu run with every output
"$bin" run --preset tiny --seq 32 --batch 4 --physical-batch 2 --steps 2 --warmup 1 --backend cpu --quiet \
    --out "$tmp/r.json" --trace "$tmp/t.json" --dump "$tmp/dump" --experiment cli-test 2>"$tmp/err"; rc=$?
check "cpu run exits 0" test $rc -eq 0
check "result json written, no .tmp left" test -s "$tmp/r.json" -a ! -e "$tmp/r.json.tmp"
check "result json has the fixed key order" bash -c "grep -o '^  \"[a-z_]*\"' '$tmp/r.json' | tr -d ' \"' | tr '\n' ' ' | grep -qx 'experiment config status avg_time_ms peak_memory_mb breakdown modules phases snapshots layers privacy throughput meta losses timeline '"
check "result json carries the seed's breakdown keys" bash -c "for k in model_parameters_mb optimizer_states_mb gradients_mb activation_hooks_mb norm_samples_mb temp_matrices_mb total_allocated_mb peak_allocated_mb; do grep -q \"\\\"\$k\\\"\" '$tmp/r.json' || exit 1; done"
check "status ok and experiment name" bash -c "grep -q '\"status\": \"ok\"' '$tmp/r.json' && grep -q '\"experiment\": \"cli-test\"' '$tmp/r.json'"
check "trace json written" grep -q '"traceEvents"' "$tmp/t.json"
for f in model.safetensors batch.safetensors grads.safetensors step.json; do
    check "dump: $f" test -s "$tmp/dump/$f"
done
# safetensors: 8-byte header length + header + 4 bytes per element of every parameter
check "dump: model.safetensors holds every parameter as f32" bash -c "
    n=\$(grep -o '\"param_count\": [0-9]*' '$tmp/r.json' | grep -o '[0-9]*\$')
    hl=\$(od -An -t u8 -N 8 '$tmp/dump/model.safetensors' | tr -d ' ')
    sz=\$(stat -c %s '$tmp/dump/model.safetensors')
    [ -n \"\$n\" ] && [ \$((sz - 8 - hl)) -eq \$((4 * n)) ]"
check "dump: step.json has per-sample losses" grep -q '"per_sample_loss": \[' "$tmp/dump/step.json"

# the figure from the result file
"$bin" plot timeline "$tmp/r.json" --out "$tmp/r.png"; rc=$?
check "plot timeline exits 0" test $rc -eq 0
check "plot writes a PNG" bash -c "head -c 8 '$tmp/r.png' | od -An -t x1 | tr -d ' \n' | grep -qx 89504e470d0a1a0a"

# dry runs at full size, and cpu == dry for the memory numbers of the same configuration
"$bin" run --preset llama-3.1-8b --seq 16384 --batch 1 --steps 1 --backend dry --quiet --out "$tmp/d.json"; rc=$?
check "dry llama-3.1-8b T=16384 B=1 exits 0" test $rc -eq 0
"$bin" run --preset tiny --task cls --seq 24 --batch 3 --steps 2 --backend dry --quiet --out "$tmp/a.json" &&
"$bin" run --preset tiny --task cls --seq 24 --batch 3 --steps 2 --backend cpu --quiet --out "$tmp/b.json"
check "cpu and dry report the same breakdown and modules" bash -c "diff <(grep -E '^  \"(peak_memory_mb|breakdown|modules)\"' '$tmp/a.json') <(grep -E '^  \"(peak_memory_mb|breakdown|modules)\"' '$tmp/b.json') >/dev/null"
check "cpu and dry report the same event bytes" bash -c "diff <(grep '\"bytes\": \[' '$tmp/a.json') <(grep '\"bytes\": \[' '$tmp/b.json') >/dev/null"

# a model that cannot fit the memory limit: status oom, exit 3, the json still written
"$bin" run --preset tiny --seq 64 --batch 8 --steps 1 --backend cpu --memory-limit 1M --quiet --out "$tmp/oom.json" 2>"$tmp/err"; rc=$?
check "over the memory limit: exit 3" test $rc -eq 3
check "over the memory limit: status oom in the json" grep -q '"status": "oom"' "$tmp/oom.json"
check "over the memory limit: the message names the bytes" grep -q "over the limit of 1048576 bytes" "$tmp/err"

# dp-sgd from the command line: the privacy block, the dump's norms and clip factors, the accountant
"$bin" run --preset tiny --seq 16 --batch 4 --physical-batch 2 --steps 2 --algo ghost_bk --sigma 1.0 --max-grad-norm 0.5 \
    --dataset-size 400 --backend cpu --quiet --out "$tmp/dp.json" --dump "$tmp/dpdump"; rc=$?
check "dp run (ghost_bk) exits 0" test $rc -eq 0
check "dp run: privacy block with a finite epsilon" grep -q '"privacy": {"mechanism": "subsampled gaussian", "accountant": "rdp", "epsilon": [0-9]' "$tmp/dp.json"
check "dp run: layers name their method and the clipped sum" grep -q '"method": "gram T x T materialised", "clipped_sum": "book-keeping"' "$tmp/dp.json"
check "dp dump: per-sample norms" grep -q '"per_sample_norm": \[[0-9]' "$tmp/dpdump/step.json"
check "dp dump: clip factors, none above 1" bash -c "grep -o '\"clip_factor\": \[[^]]*\]' '$tmp/dpdump/step.json' | tr -d '[]\"a-z_:' | tr ',' '\n' | awk 'NF && (\$1 > 1 || \$1 <= 0) {bad = 1} END {exit bad}'"
out=$("$bin" epsilon --sigma 1.1 --sample-rate 0.004 --steps 14063 --delta 1e-5); rc=$?
check "epsilon command prints epsilon and the best order" bash -c "[ $rc -eq 0 ] && grep -q '^epsilon [0-9.]*$' <<<'$out' && grep -q '^best_order ' <<<'$out'"
out=$("$bin" epsilon --target-epsilon 2 --sample-rate 0.01 --steps 1000); rc=$?
check "epsilon --target-epsilon finds a sigma that spends at most the target" bash -c "[ $rc -eq 0 ] && awk '/^epsilon/ {exit !(\$2 <= 2 && \$2 > 1.99)}' <<<'$out'"
bad 2 "epsilon: give --sample-rate, --steps and one of --sigma or --target-epsilon" epsilon --sigma 1
bad 2 "--sample-rate '1.5': expected a number in [0, 1]" epsilon --sigma 1 --sample-rate 1.5 --steps 10
bad 2 "--target-epsilon needs a DP --algo and --dataset-size" run --algo flash --target-epsilon 3 $o
bad 2 "lora-targets 'q,x': 'x' is not one of q, k, v, o, gate, up, down" run --lora-rank 4 --lora-targets q,x $o
bad 2 "lora-rank = 32 must be smaller than the narrowest adapted width (32)" run --lora-rank 32 --lora-targets k $o
bad 2 "lora-alpha and lora-targets need --lora-rank" run --lora-alpha 8 $o
"$bin" run --preset llama-3.2-1b --seq 1024 --batch 8 --physical-batch 2 --algo auto --lora-rank 16 --sigma 1 --dataset-size 50000 --backend dry --steps 1 --quiet --out "$tmp/auto.json"; rc=$?
check "dry llama-3.2-1b with lora and auto: exits 0" test $rc -eq 0
check "auto names a flash method per layer" grep -q '"method": "flash: tiled' "$tmp/auto.json"

# numerical faults stop the run with status error and say where
"$bin" run --preset tiny --seq 16 --batch 2 --steps 50 --lr 1e5 --optimizer sgd --backend cpu --quiet --out "$tmp/div.json" 2>"$tmp/err"; rc=$?
check "a diverging run exits 1" test $rc -eq 1
check "its json says status error" grep -q '"status": "error"' "$tmp/div.json"
check "and names the tensor and step: $(head -c 200 "$tmp/err")" grep -q 'the gradient of model\..* is -\?nan at element [0-9]* in step [0-9]*' "$tmp/err"
