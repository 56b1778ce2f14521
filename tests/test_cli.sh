#!/usr/bin/env bash
# tests/test_cli.sh - the dpprof command line as a user meets it: help, bad input (exit code,
# message naming the problem, no partial file), a real run with every output, dry runs.
# needs ./dpprof (make). run by make test.
set -u
cd "$(dirname "$0")/.."
bin=${DPPROF_TEST_BIN:-$PWD/dpprof} # tests/test_sanitized.sh: the sanitizer build
. tests/lib.bash

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
bad 2 "--physical-batch 16 is larger than --batch 8" run --batch 8 --physical-batch 16 $o
bad 2 "--algo 'fancy': expected vanilla, persample" run --algo fancy $o
bad 2 "--sigma, --max-grad-norm, --clipping, --delta, --target-epsilon and --secure-noise apply to the DP algorithms, not to --algo vanilla" run --sigma 1.0 $o
bad 2 "--secure-noise apply to the DP algorithms, not to --algo vanilla" run --secure-noise $o
bad 2 "--poisson samples from a dataset: give --dataset-size" run --algo flash --poisson $o
bad 2 "--clipping 'layer': expected flat or per-layer" run --algo ghost --clipping layer $o
bad 2 "--sigma '-1': expected a number in [0," run --sigma -1 $o
bad 2 "--delta '1': expected a number in (0, 1)" run --delta 1 $o
bad 2 "--task 'seq2seq': expected lm or cls" run --task seq2seq $o
bad 2 "--checkpoint 'foo': expected none or layers" run --checkpoint foo $o
bad 2 "unknown option '--bogus'" run --bogus 1 $o
bad 2 "--steps needs a value" run $o --steps
# an option that takes a value does not take the next option as it: --out --quiet wrote a file named --quiet
err=$(cd "$tmp" && "$bin" run --steps 1 --backend dry --out --quiet 2>&1); rc=$?
check "run --out --quiet: exit 2, names the option it would have taken, no file named --quiet (got: $err)" \
    bash -c "[ $rc -eq 2 ] && grep -qF \"run: --out needs a value (FILE.json), got the option '--quiet'\" <<<\"\$1\" && [ ! -e '$tmp/--quiet' ]" _ "$err"
bad 2 "run: --experiment needs a value (NAME), got the option '--steps'" run --experiment --steps 1 --backend dry --out "$tmp/bad.json"
bad 2 "report: --figures needs a value (DIR), got the option '--tables'" report x.conf --results "$tmp" --figures --tables "$tmp"
bad 2 "--data '/nonexistent/corpus.txt': cannot read: No such file or directory" run --data /nonexistent/corpus.txt $o
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


# ---- bad input, part 2: sizes at and past their limits, values that are not numbers, files that are
# not what they say, outputs that cannot be written; each with dpprof's exact message ------------------
bad 2 "--vocab '99999999999': expected an integer in [2, 16777216]" run --vocab 99999999999 $o
bad 2 "--batch '2147483647': expected an integer in [1, 16777216]" run --batch 2147483647 $o
bad 2 "--classes '99999999999': expected an integer in [2, 16777216]" run --task cls --classes 99999999999 $o
bad 2 "--classes '1': expected an integer in [2, 16777216]" run --task cls --classes 1 $o
bad 2 "head size hidden/heads = 4194304 exceeds 256" run --hidden 16777216 --layers 4096 --out "$tmp/bad.json" --steps 1 --backend cpu
# a model of 2^62 elements: on dry its bytes pass what 64-bit counts hold (bad input, no file); on cpu it
# is over the memory limit (MemAvailable by default): an oom result, never a crash
bad 2 "run: this configuration needs more than 2^62 bytes (4611686018427387904) at once: in its dry model 1125899906842624 more bytes (model_parameters, attention)" \
    run --hidden 16777216 --heads 65536 --layers 4096 $o
# a model whose parameters fit but whose step does not (persample's per-sample gradients, vanilla's activations):
# refused before the run as well, not an error result from the middle of it
bad 2 "run: this configuration needs more than 2^62 bytes (4611686018427387904) at once: in its dry model 288230376151711744 more bytes (per_sample_gradients, mlp)" \
    run --algo persample --vocab 16777216 --hidden 65536 --layers 4096 --heads 512 --ffn 16777216 --seq 1 --batch 65536 $o
bad 2 "in its dry model 144114088564228096 more bytes (activations, mlp)" run --ffn 16777216 --layers 64 --seq 16384 --batch 131071 --hidden 256 --heads 4 $o
bad 3 "run: out of memory: 1125899906842624 more bytes (model_parameters, attention) would bring live memory to" \
    run --hidden 16777216 --heads 65536 --layers 4096 --steps 1 --backend cpu --quiet --out "$tmp/huge.json"
check "a model past the memory limit: its json says oom" grep -q '"status": "oom"' "$tmp/huge.json"
# the rows of a physical batch (seq x physical-batch) are an int: past it is overflow, not a wrap
bad 2 "--seq 16777216 times --physical-batch 16777216 is 281474976710656 tokens: it overflows the size arithmetic (at most 2147483647 per physical batch)" \
    run --seq 16777216 --batch 16777216 $o
bad 2 "--seq 16777216 times --physical-batch 128 is 2147483648 tokens: it overflows the size arithmetic" run --seq 16777216 --batch 128 $o
"$bin" run --seq 16777216 --batch 128 --physical-batch 127 --steps 1 --backend dry --timeline none --quiet --out "$tmp/edge.json"; rc=$?
check "seq x physical-batch = 2^24 x 127 (just under 2^31) runs on dry" test $rc -eq 0 -a -s "$tmp/edge.json"
bad 2 "--lr '-1': expected a number in (0, 1e+06]" run --lr -1 $o
bad 2 "--lr 'nan': expected a number in (0, 1e+06]" run --lr nan $o
bad 2 "--sigma 'inf': expected a number in [0, 1e+06]" run --algo flash --sigma inf $o
bad 2 "--delta '0': expected a number in (0, 1)" run --algo flash --delta 0 $o
bad 2 "--delta '1.5': expected a number in (0, 1)" run --algo flash --delta 1.5 $o
bad 2 "--max-grad-norm '0': expected a number in (0, 1e+12]" run --algo ghost --max-grad-norm 0 $o
bad 2 "--dataset-size '0': expected an integer in [1, 2147483647]" run --algo flash --dataset-size 0 $o
bad 2 "--physical-batch '0': expected an integer in [1, 16777216]" run --physical-batch 0 $o
bad 2 "--steps '0': expected an integer in [1, 100000000]" run --steps 0 --out "$tmp/bad.json" --backend dry
bad 2 "--warmup '-1': expected an integer in [0, 100000000]" run --warmup -1 $o
bad 2 "--seed '-1': expected an integer in [0, 2^64)" run --seed -1 $o
# strto* skip leading white space and take a sign: " -1" was the seed 2^64 - 1, " 5" the sequence 5
bad 2 "--seed ' -1': expected an integer in [0, 2^64)" run --seed " -1" $o
bad 2 "--seq ' 5': expected an integer in [1, 16777216]" run --seq " 5" $o
bad 2 "--seq '+5': expected an integer in [1, 16777216]" run --seq +5 $o
bad 2 "--lr ' 0.1': expected a number in (0, 1e+06]" run --lr " 0.1" $o
bad 2 "--memory-limit ' 1G': expected a positive size in bytes" run --memory-limit " 1G" $o
bad 2 "run: --wgmma and --no-wgmma contradict each other (--no-wgmma came second)" run --wgmma --no-wgmma $o
# the commands that take no arguments refuse any
bad 2 "presets: unexpected argument 'extra' (it takes none)" presets extra
bad 2 "presets: unknown option '--bogus' (it takes none)" presets --bogus
bad 2 "version: unexpected argument 'extra' (it takes none)" version extra
bad 2 "devices: unknown option '--bogus' (it takes none)" devices --bogus
"$bin" presets --help >"$tmp/ph.txt"; rc=$?
check "presets --help: its usage, exit 0" bash -c "[ $rc -eq 0 ] && grep -q '^usage: dpprof presets' '$tmp/ph.txt'"
bad 2 "--memory-limit '0': expected a positive size in bytes" run --memory-limit 0 $o
bad 2 "--timeline 'some': expected full or none" run --timeline some $o
# --data that is not a text file of samples
mkdir -p "$tmp/datadir"
bad 2 "--data '$tmp/datadir': is a directory" run --data "$tmp/datadir" $o
: >"$tmp/empty.txt"
bad 2 "empty.txt: 0 bytes is too short for --seq 64 (needs at least 65 bytes)" run --data "$tmp/empty.txt" $o
bad 2 "empty.txt: no 'label<TAB>text' lines" run --task cls --data "$tmp/empty.txt" $o
printf '\000\001\002\377\t\n\211PNG\r\n' >"$tmp/garbage.bin"
bad 2 "garbage.bin:1: expected 'label<TAB>text' with an integer label in [0, 2)" run --task cls --data "$tmp/garbage.bin" $o
# a --data file larger than memory (sparse): a clean out of memory, no session, no file left behind
if truncate -s 1T "$tmp/huge.txt" 2>/dev/null; then
    err=$([ -n "${DPPROF_TEST_SANITIZED:-}" ] || ulimit -v 4000000; "$bin" run --data "$tmp/huge.txt" $o 2>&1 >/dev/null); rc=$? # a sanitizer reserves terabytes
    check "a 1 TiB --data file: exit 2 naming its size and the limit, no file (got exit $rc: $err)" \
        bash -c "[ $rc -eq 2 ] && grep -qF \"huge.txt': 1099511627776 bytes, over the limit of 1073741824 for --data\" <<<\"\$1\" && [ ! -e '$tmp/bad.json' ]" _ "$err"
    rm -f "$tmp/huge.txt" "$tmp/bad.json" "$tmp/bad.json.tmp"
else
    echo "SKIP a 1 TiB --data file: this file system has no sparse files"
fi
# outputs that cannot be written: nothing is left behind, not even the --out that opened first
: >"$tmp/afile"
bad 2 "--out '/sys/dpprof-r.json': cannot write" run --steps 1 --backend dry --out /sys/dpprof-r.json
bad 2 "--out '$tmp/afile/r.json': cannot write: Not a directory" run --steps 1 --backend dry --out "$tmp/afile/r.json"
bad 2 "--dump '$tmp/afile/dump': cannot create the directory: Not a directory" run --dump "$tmp/afile/dump" --out "$tmp/bad.json" --steps 1 --backend cpu
bad 2 "--trace '$tmp/afile/t.json': cannot write: Not a directory" run --trace "$tmp/afile/t.json" $o
# the command line itself, as GNU tools read one: --opt=value and --opt value; -- ends the options; an unknown
# option is named as such, whether or not a value follows; a flag takes no value; bytes that are not ascii
bad 2 "unknown option '--frobnicate'" run --frobnicate
bad 2 "unknown option '--seqq'" run --seqq=64 $o
bad 2 "--quiet takes no value (got '1')" run --quiet=1 $o
bad 2 "--seq '': expected an integer" run --seq= $o
bad 2 "unexpected argument 'extra'" run $o -- extra
bad 2 "unexpected argument 'stray'" run stray $o
bad 2 "--out - and --trace - would both write to standard output" run --out - --trace - --steps 1 --backend dry
"$bin" run --seq=16 --batch=2 --steps=1 --backend=dry --quiet --out="$tmp/eq.json" --; rc=$?
check "--opt=value reads as --opt value, and a trailing -- ends the options (seq 16, batch 2)" \
    bash -c "[ $rc -eq 0 ] && grep -q '\"seq\": 16,' '$tmp/eq.json' && grep -q '\"batch\": 2,' '$tmp/eq.json'"
"$bin" run --seq 16 --batch 2 --steps 1 --backend dry --quiet --out - >"$tmp/stdout.json" 2>"$tmp/stdout.err"; rc=$?
check "--out - writes the result JSON to standard output and nothing else there, no file named '-'" \
    bash -c "[ $rc -eq 0 ] && [ ! -e ./- ] && [ ! -e ./-.tmp ] && head -c 1 '$tmp/stdout.json' | grep -q '{' && grep -q '\"status\": \"ok\"' '$tmp/stdout.json' && [ ! -s '$tmp/stdout.err' ]"
# sizes: K, M, G, T and KiB ... TiB are powers of 1024, KB ... TB powers of 1000
for sz in 80G:85899345920 80GiB:85899345920 80GB:80000000000 1.5KiB:1536 2MB:2000000 4096:4096 512B:512 1T:1099511627776; do
    "$bin" run --memory-limit "${sz%%:*}" --steps 1 --backend dry --quiet --out "$tmp/sz.json"
    check "--memory-limit ${sz%%:*} is ${sz##*:} bytes" grep -q "\"memory_limit\": ${sz##*:}," "$tmp/sz.json"
done
bad 2 "--memory-limit '80Gb': expected a positive size in bytes" run --memory-limit 80Gb $o
bad 2 "--memory-limit '0.5': expected a positive size in bytes" run --memory-limit 0.5 $o
# the terminal says sizes and counts in human units
"$bin" run --preset llama-3.1-8b --seq 128 --batch 1 --steps 1 --backend dry --out "$tmp/h.json" 2>"$tmp/h.err"
check "the terminal counts parameters in billions and bytes in GiB ($(head -1 "$tmp/h.err" | cut -c1-60)...)" \
    bash -c "grep -q 'llama-3.1-8b, lm, 8.03 B parameters' '$tmp/h.err' && grep -qE '^peak [0-9.]+ GiB \([0-9]+ bytes\) in [a-z_]+: model_parameters [0-9.]+ GiB, ' '$tmp/h.err'"
bad 2 "--seq '1"$'\xc2\xb2'"': expected an integer in [1, 16777216]" run --seq $'1\xc2\xb2' $o
bad 2 "unknown preset 'tin"$'\xc3\xa9'"'" run --preset $'tin\xc3\xa9' $o
bad 2 "lora-targets 'q,"$'\xff'"': '"$'\xff'"' is not one of q, k, v, o, gate, up, down" run --lora-rank 2 --lora-targets $'q,\xff' $o
# a repeated option: the last one wins
"$bin" run --seq 8 --seq 16 --batch 2 --batch 3 --steps 1 --backend dry --quiet --out "$tmp/dup.json"; rc=$?
check "a repeated option: the last one wins (seq 16, batch 3)" bash -c "[ $rc -eq 0 ] && grep -q '\"seq\": 16,' '$tmp/dup.json' && grep -q '\"batch\": 3,' '$tmp/dup.json'"
# an --experiment that is not utf-8: the json holds U+FFFD, so dpprof's own reader takes it back
"$bin" run --experiment $'x\xff\xfey' --steps 1 --backend dry --quiet --out "$tmp/u8.json"; rc=$?
check "--experiment with invalid utf-8: the result json says x\\ufffd\\ufffdy" bash -c "[ $rc -eq 0 ] && grep -qF '\"experiment\": \"x\\ufffd\\ufffdy\"' '$tmp/u8.json'"
"$bin" plot timeline "$tmp/u8.json" --out "$tmp/u8.png"; rc=$?
check "... and plot reads that json back" test $rc -eq 0 -a -s "$tmp/u8.png"
# the figures' font: DejaVu Sans by default, DPPROF_FONT another TrueType file (empty: the bitmap font); one that
# cannot be read is refused before any work, no PNG written
DPPROF_FONT= "$bin" plot timeline "$tmp/u8.json" --out "$tmp/u8-bitmap.png"; rc=$?
check "DPPROF_FONT= (empty): the built-in bitmap font, another PNG than DejaVu Sans' where that is installed" \
    bash -c "[ $rc -eq 0 ] && [ -s '$tmp/u8-bitmap.png' ] && { [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || ! cmp -s '$tmp/u8.png' '$tmp/u8-bitmap.png'; }"
err=$(DPPROF_FONT=$tmp/u8.json "$bin" plot timeline "$tmp/u8.json" --out "$tmp/u8-font.png" 2>&1); rc=$?
check "DPPROF_FONT that is no font: exit 2, names it, writes nothing (got: $err)" \
    bash -c "[ $rc -eq 2 ] && grep -qF \"DPPROF_FONT='$tmp/u8.json': no TrueType font could be read from it\" <<<\"\$1\" && [ ! -e '$tmp/u8-font.png' ]" _ "$err"
# plot on what is not a result
printf '\211PNG\r\n\032\n\000\000\000\rIHDR' >"$tmp/g.png"
bad 2 "g.png: line 1, column 1: unexpected byte 0x89, expected a value" plot timeline "$tmp/g.png" --out "$tmp/bad.json"
echo '{"timeline": {"t_ms": [0, 1], "bytes": [5, -5, 3], "category": [0, 0, 0]}}' >"$tmp/len.json"
bad 2 "len.json: timeline arrays are empty or of different lengths" plot timeline "$tmp/len.json" --out "$tmp/bad.json"
bad 2 "plot: usage: dpprof plot timeline RESULT.json [RESULT.json ...] --out FILE.png" plot timeline "$tmp/len.json"
bad 2 "--steps '-5': expected an integer in [0, 1000000000000]" epsilon --steps -5 --sigma 1 --sample-rate 0.01
bad 2 "--delta '1': expected a number in (0, 1)" epsilon --sigma 1 --sample-rate 0.1 --steps 10 --delta 1
bad 2 "run: --fused-clipgrad and --cublas-clipgrad contradict each other (--cublas-clipgrad came second)" run --preset tiny --algo auto --fused-clipgrad --cublas-clipgrad
bad 2 "run: --fused-noise and --separate-noise contradict each other (--fused-noise came second)" run --preset tiny --algo auto --separate-noise --fused-noise
bad 2 "run: --batched-clipgrad and --no-batched-clipgrad contradict each other (--no-batched-clipgrad came second)" run --preset tiny --algo auto --batched-clipgrad --no-batched-clipgrad
bad 2 "--dp-warp-tile '48': expected 32 or 64" run --preset tiny --dp-warp-tile 48
bad 2 "--wgmma selects a kernel of the bf16 gram norm on the GPU: it needs --backend cuda (or dry) and --dtype bf16 (this run is cpu, fp32)" run --preset tiny --wgmma --backend cpu --out "$tmp/bad.json"
bad 2 "--wgmma selects a kernel of the bf16 gram norm on the GPU: it needs --backend cuda (or dry) and --dtype bf16 (this run is dry, fp32)" run --wgmma $o
# sharded data parallelism: a rank's batch is B/N; without mpirun only the dry backend models more than one rank
# (the cpu and cuda backends run them as an MPI job, launched by mpirun: tests/test_mpi.sh)
if "$bin" version | grep -q ', MPI)'; then
    bad 2 "--ranks 2 on the cpu backend: launch the run as an MPI job of 2 processes (mpirun -np 2 ...)" run --preset tiny --ranks 2 --zero 1 --backend cpu --out "$tmp/bad.json"
else
    bad 2 "--ranks 2 on the cpu backend: this build has no MPI" run --preset tiny --ranks 2 --zero 1 --backend cpu --out "$tmp/bad.json"
fi
bad 2 "--ranks 2 on the " run --preset tiny --ranks 2 --out "$tmp/bad.json"
if "$bin" version | grep -q ', MPI)'; then
    bad 2 "--ranks 2 on the cuda backend: launch the run as an MPI job of 2 processes" run --preset tiny --ranks 2 --backend cuda --out "$tmp/bad.json"
else
    bad 2 "--ranks 2 on the cuda backend: this build has no MPI" run --preset tiny --ranks 2 --backend cuda --out "$tmp/bad.json"
fi
bad 2 "--ranks 3 does not divide --batch 8" run --ranks 3 $o
bad 2 "--physical-batch 8 is larger than a rank's batch / ranks = 8 / 2 = 4" run --ranks 2 --physical-batch 8 $o
bad 2 "--zero '4': expected an integer in [0, 3]" run --ranks 2 --zero 4 $o
bad 2 "--ranks '0': expected an integer in [1, 65536]" run --ranks 0 $o
for z in 1 3; do # bf16: the masters sharded as fp32 parameters are, the working copies with them (docs/model.md)
    "$bin" run --preset tiny --seq 16 --batch 4 --dtype bf16 --ranks 2 --zero $z --algo ghost_bk --sigma 1 --steps 1 --backend dry --quiet --out "$tmp/bf$z.json"; rc=$?
    check "dry --dtype bf16 --ranks 2 --zero $z: exit 0, its distributed object" sh -c "test $rc -eq 0 && grep -q '\"distributed\": {\"ranks\": 2, \"zero\": $z' '$tmp/bf$z.json'"
done
for z in 2 3; do # a tied head: its matrix's gradient from both uses, its gathers for both (docs/model.md)
    "$bin" run --preset llama-3.2-1b --seq 128 --batch 4 --ranks 2 --zero $z --algo flash_bk --sigma 1 --steps 1 --backend dry --quiet --out "$tmp/tied$z.json"; rc=$?
    check "dry llama-3.2-1b (tied) --ranks 2 --zero $z: exit 0, its distributed object" sh -c "test $rc -eq 0 && grep -q '\"distributed\": {\"ranks\": 2, \"zero\": $z' '$tmp/tied$z.json'"
done
"$bin" run --preset tiny --batch 8 --ranks 4 --zero 3 --algo flash_bk --sigma 1 $o --out "$tmp/zero.json" 2>"$tmp/zero.err"; rc=$?
check "dry --ranks 4 --zero 3: exit 0, the json's distributed object, the summary's rank line" \
    sh -c "test $rc -eq 0 && grep -q '\"distributed\": {\"ranks\": 4, \"zero\": 3' '$tmp/zero.json' && grep -q '^rank 0 of 4 (zero 3, 2 samples a step)' '$tmp/zero.err'"
# help is complete: every option of the run contract appears
help=$("$bin" run --help); rc=$?
missing=""
for opt in --preset --vocab --hidden --layers --heads --kv-heads --ffn --seq --task --classes --algo --batch \
           --physical-batch --steps --warmup --lr --optimizer --sigma --max-grad-norm --clipping --poisson \
           --dataset-size --delta --lora-rank --lora-alpha --lora-targets --dtype --backend --seed --out \
           --trace --dump --data --memory-limit --fused-clipgrad --cublas-clipgrad --batched-clipgrad --no-batched-clipgrad --fused-noise --separate-noise --dp-warp-tile --wgmma --no-wgmma \
           --model --hf-config --tied --untied --ranks --zero; do
    grep -qF -- "$opt" <<<"$help" || missing="$missing $opt"
done
check "run --help exits 0 and names every option${missing:+ (missing:$missing)}" test "$rc" -eq 0 -a -z "$missing"
check "run --help names --checkpoint" grep -qF -- "--checkpoint" <<<"$help"
# --checkpoint layers: the config says so, and the result has a recompute phase
"$bin" run --preset tiny --seq 16 --batch 2 --steps 1 --algo flash --sigma 1 --checkpoint layers --backend dry --quiet --out "$tmp/ckpt.json"; rc=$?
check "run --checkpoint layers: config.checkpoint and the recompute phase in the json" \
    bash -c "[ $rc -eq 0 ] && grep -q '\"checkpoint\": \"layers\"' '$tmp/ckpt.json' && grep -q '\"recompute\": {\"count\": 2,' '$tmp/ckpt.json'"
"$bin" --help >/dev/null; check "dpprof --help exits 0" test $? -eq 0
"$bin" >/dev/null 2>&1; check "dpprof without a command exits 2" test $? -eq 2

# a real cpu run with every output
"$bin" run --preset tiny --seq 32 --batch 4 --physical-batch 2 --steps 2 --warmup 1 --backend cpu --quiet \
    --out "$tmp/r.json" --trace "$tmp/t.json" --dump "$tmp/dump" --experiment cli-test 2>"$tmp/err"; rc=$?
check "cpu run exits 0" test $rc -eq 0
check "result json written, no .tmp left" test -s "$tmp/r.json" -a ! -e "$tmp/r.json.tmp"
check "result json has the fixed key order" bash -c "grep -o '^  \"[a-z_]*\"' '$tmp/r.json' | tr -d ' \"' | tr '\n' ' ' | grep -qx 'schema_version experiment config status avg_time_ms peak_memory_mb breakdown modules phases snapshots layers plan privacy throughput meta losses timeline '"
check "result json carries the seed's breakdown keys" bash -c "for k in model_parameters_mb optimizer_states_mb gradients_mb activation_hooks_mb norm_samples_mb temp_matrices_mb total_allocated_mb peak_allocated_mb; do grep -q \"\\\"\$k\\\"\" '$tmp/r.json' || exit 1; done"
check "status ok and experiment name" bash -c "grep -q '\"status\": \"ok\"' '$tmp/r.json' && grep -q '\"experiment\": \"cli-test\"' '$tmp/r.json'"
check "trace json written" grep -q '"traceEvents"' "$tmp/t.json"
for f in model.safetensors batch.safetensors grads.safetensors step.json config.json; do
    check "dump: $f" test -s "$tmp/dump/$f"
done
# safetensors: 8-byte header length + header + 4 bytes per element of every parameter
check "dump: model.safetensors holds every parameter as f32" bash -c "
    n=\$(grep -o '\"param_count\": [0-9]*' '$tmp/r.json' | grep -o '[0-9]*\$')
    hl=\$(od -An -t u8 -N 8 '$tmp/dump/model.safetensors' | tr -d ' ')
    sz=\$(stat -c %s '$tmp/dump/model.safetensors')
    [ -n \"\$n\" ] && [ \$((sz - 8 - hl)) -eq \$((4 * n)) ]"
check "dump: step.json has per-sample losses" grep -q '"per_sample_loss": \[' "$tmp/dump/step.json"

# Hugging Face configs (tests/hf/: the published config.json values of each model, written out here): the
# parameter counts are the published ones, exactly; tied heads where the model ties them
for m in llama-3.2-1b:1235814400:true llama-3.2-3b:3212749824:true llama-3.1-8b:8030261248:false tinyllama-1.1b:1100048384:false \
         smollm2-135m:134515008:true smollm2-360m:361821120:true smollm2-1.7b:1711376384:true; do
    IFS=: read -r name count tied <<<"$m"
    "$bin" run --hf-config "tests/hf/$name.json" --backend dry --steps 1 --seq 8 --batch 1 --quiet --timeline none --out "$tmp/hf.json"; rc=$?
    check "--hf-config $name: $count parameters (the published count), tie_embeddings $tied" \
        bash -c "[ $rc -eq 0 ] && grep -q '\"param_count\": $count,' '$tmp/hf.json' && grep -q '\"tie_embeddings\": $tied,' '$tmp/hf.json' && grep -q '\"preset\": \"tests/hf/$name.json\"' '$tmp/hf.json'"
done
for m in meta-llama/Llama-3.2-1B:1235814400 meta-llama/Llama-3.2-3B:3212749824 meta-llama/Llama-3.1-8B:8030261248; do
    "$bin" run --model "${m%%:*}" --backend dry --steps 1 --seq 8 --batch 1 --quiet --timeline none --out "$tmp/hf.json"; rc=$?
    check "--model ${m%%:*}: the preset, ${m##*:} parameters" bash -c "[ $rc -eq 0 ] && grep -q '\"param_count\": ${m##*:},' '$tmp/hf.json'"
done
"$bin" run --hf-config tests/hf/llama-3.2-1b.json --backend dry --steps 1 --seq 8 --batch 1 --timeline none --out "$tmp/hf.json" 2>"$tmp/hf.err"; rc=$?
check "--hf-config with rope_scaling llama3: runs, says the frequencies are unscaled, and the result's config.unmodelled records it" \
    bash -c "[ $rc -eq 0 ] && grep -q 'not modelled: rope_scaling llama3: the rotary frequencies are rope_theta' '$tmp/hf.err' && grep -q '\"unmodelled\": \"rope_scaling llama3: ' '$tmp/hf.json'"
"$bin" run --hf-config tests/hf/llama-3.2-1b.json --backend dry --steps 1 --seq 8 --batch 1 --quiet --timeline none --out "$tmp/hf.json" 2>"$tmp/hf.err"; rc=$?
check "--hf-config with rope_scaling llama3 and --quiet: nothing said, the result still records it" \
    bash -c "[ $rc -eq 0 ] && [ ! -s '$tmp/hf.err' ] && grep -q '\"unmodelled\": \"rope_scaling llama3: ' '$tmp/hf.json'"
"$bin" run --preset tiny --backend dry --steps 1 --seq 8 --batch 1 --quiet --timeline none --out "$tmp/hf.json"; rc=$?
check "a preset's result: config.unmodelled null" bash -c "[ $rc -eq 0 ] && grep -q '\"unmodelled\": null' '$tmp/hf.json'"
# Mistral: the Llama architecture where its sliding window covers the sequence (Mistral-7B-v0.1: the published count)
"$bin" run --hf-config tests/hf/mistral-7b-v0.1.json --backend dry --steps 1 --seq 4096 --batch 1 --quiet --timeline none --out "$tmp/hf.json"; rc=$?
check "--hf-config mistral-7b-v0.1 at --seq 4096 (its window): 7241732096 parameters, untied" \
    bash -c "[ $rc -eq 0 ] && grep -q '\"param_count\": 7241732096,' '$tmp/hf.json' && grep -q '\"tie_embeddings\": false,' '$tmp/hf.json'"
bad 2 '"sliding_window" = 4096, shorter than --seq 4097: dpprof'"'"'s attention is full causal attention' run --hf-config tests/hf/mistral-7b-v0.1.json --seq 4097 $o
"$bin" run --hf-config tests/hf/smollm2-135m.json --layers 2 --vocab 300 --untied --backend dry --steps 1 --seq 8 --batch 1 --quiet --timeline none --out "$tmp/hf.json"; rc=$?
check "--hf-config: an option wins over the file (layers 2, vocab 300, untied)" \
    bash -c "[ $rc -eq 0 ] && grep -q '\"vocab\": 300, \"hidden\": 576, \"layers\": 2, \"heads\": 9, \"kv_heads\": 3, \"head_size\": 64, \"ffn\": 1536, \"tie_embeddings\": false' '$tmp/hf.json'"
# what dpprof cannot model is refused before any work, naming the key and its value
# --peft-config: an adapter_config.json as PEFT 0.21 writes it (tests/peft/), each key mapped or refused by name
pj() { python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['config']; print(c['task'], c['lora_rank'], c['lora_alpha'], c['lora_targets'], c['train_head'], c['unmodelled'])" "$1"; }
"$bin" run --preset tiny --seq 16 --batch 2 --steps 1 --backend dry --peft-config tests/peft/causal-lm-qv.json --out "$tmp/peft1.json" 2>"$tmp/peft1.err"
check "--peft-config (CAUSAL_LM, q_proj and v_proj, r 16, alpha 32, dropout 0.05): lm, r 16, alpha 32, q,v, the head frozen, the dropout said unmodelled ($(pj "$tmp/peft1.json" 2>&1 | cut -c1-60))" \
    bash -c "pj() { $(declare -f pj | tail -n +2); }; [ \"\$(pj '$tmp/peft1.json' | cut -d' ' -f1-5)\" = 'lm 16 32 q,v False' ] && grep -q 'lora_dropout: dpprof' '$tmp/peft1.err'"
"$bin" run --preset tiny --seq 16 --batch 2 --steps 1 --backend dry --peft-config tests/peft/seq-cls-all-linear.json --out "$tmp/peft2.json" 2>/dev/null
check "--peft-config (SEQ_CLS, all-linear, modules_to_save score): cls, every projection, the score head trains" \
    bash -c "python3 -c \"import json; c=json.load(open('$tmp/peft2.json'))['config']; assert (c['task'], c['lora_rank'], c['lora_alpha'], c['lora_targets'], c['train_head'], c['unmodelled']) == ('cls', 8, 16, 'q,k,v,o,gate,up,down', True, None), c\""
"$bin" run --preset tiny --seq 16 --batch 2 --steps 1 --backend dry --peft-config tests/peft/causal-lm-head-rslora.json --out "$tmp/peft3.json" 2>/dev/null
check "--peft-config (use_rslora, modules_to_save lm_head): alpha 32 x sqrt(16) = 128 (the scale alpha / sqrt(r)), the lm head trains" \
    bash -c "python3 -c \"import json; c=json.load(open('$tmp/peft3.json'))['config']; assert (c['lora_alpha'], c['train_head']) == (128, True), c\""
"$bin" run --preset tiny --seq 16 --batch 2 --steps 1 --backend dry --peft-config tests/peft/causal-lm-qv.json --lora-rank 4 --lora-targets down --out "$tmp/peft4.json" 2>/dev/null
check "--peft-config with --lora-rank 4 --lora-targets down: the options win" bash -c "python3 -c \"import json; c=json.load(open('$tmp/peft4.json'))['config']; assert (c['lora_rank'], c['lora_targets']) == (4, 'down'), c\""
"$bin" run --hf-config tests/hf/llama-3.2-1b.json --peft-config tests/peft/causal-lm-qv.json --seq 16 --batch 2 --steps 1 --backend dry --quiet --out "$tmp/peft5.json" 2>/dev/null
check "--hf-config with rope_scaling llama3 and --peft-config with dropout: both said unmodelled" \
    bash -c "python3 -c \"import json; u=json.load(open('$tmp/peft5.json'))['config']['unmodelled']; assert u.startswith('rope_scaling llama3') and '; lora_dropout:' in u, u\""
peftbad() { # expected-text json-edit (python on d) [options]
    local text=$1 edit=$2; shift 2
    python3 -c "import json; d=json.load(open('tests/peft/causal-lm-qv.json')); $edit; json.dump(d, open('$tmp/peftbad.json','w'))"
    bad 2 "$text" run --preset tiny --peft-config "$tmp/peftbad.json" $o "$@"
}
peftbad '"peft_type" = PREFIX_TUNING: dpprof models LoRA ("LORA") only' 'd["peft_type"]="PREFIX_TUNING"'
peftbad '"use_dora" = true: DoRA' 'd["use_dora"]=True'
peftbad '"target_modules" = ".*proj": a regular expression' 'd["target_modules"]=".*proj"'
peftbad '"target_modules" holds embed_tokens: dpprof adapts q_proj' 'd["target_modules"]=["q_proj","embed_tokens"]'
peftbad '"modules_to_save" holds embed_tokens' 'd["modules_to_save"]=["embed_tokens"]'
peftbad '"use_bdlora" = true: a PEFT feature dpprof does not model' 'd["use_bdlora"]=True'
peftbad '"layers_to_transform" = an array: adapters on some layers only' 'd["layers_to_transform"]=[0]'
peftbad '"task_type" = "SEQ_2_SEQ_LM": dpprof trains CAUSAL_LM' 'd["task_type"]="SEQ_2_SEQ_LM"'
peftbad '"task_type" = "SEQ_CLS", but --task lm' 'd["task_type"]="SEQ_CLS"' --task lm
peftbad '"r" = 0: expected an integer in [1,' 'd["r"]=0'
peftbad '"init_lora_weights" = "pissa": an initialisation that changes the base weights' 'd["init_lora_weights"]="pissa"'
bad 2 "--peft-config" run --preset tiny --peft-config /nonexistent/adapter_config.json $o

hfbad() { # expected-text json-edit (python expression on d)
    local text=$1 edit=$2
    python3 -c "import json,sys; d=json.load(open('tests/hf/smollm2-135m.json')); $edit; json.dump(d, open('$tmp/hfbad.json','w'))"
    bad 2 "$text" run --hf-config "$tmp/hfbad.json" $o
}
hfbad '"model_type" = qwen2: dpprof models the Llama architecture (model_type "llama", or "mistral" where its sliding window covers --seq) only' 'd["model_type"]="qwen2"'
hfbad 'the required key "model_type" is missing' 'del d["model_type"]'
hfbad '"hidden_act" = gelu: dpprof'"'"'s MLP is SwiGLU with silu' 'd["hidden_act"]="gelu"'
hfbad '"attention_bias" = true: dpprof'"'"'s projections have no biases' 'd["attention_bias"]=True'
hfbad '"mlp_bias" = true' 'd["mlp_bias"]=True'
hfbad '"sliding_window" = 32, shorter than --seq 64' 'd["sliding_window"]=32'
hfbad '"sliding_window" is not a number (another type)' 'd["sliding_window"]=True'
hfbad '"rope_scaling" of type "yarn": dpprof implements none but llama3'"'"'s' 'd["rope_scaling"]={"rope_type":"yarn","factor":4.0}'
hfbad 'the required key "hidden_size" is missing' 'del d["hidden_size"]'
hfbad '"hidden_size" = 576.5: expected an integer in [1, 16777216]' 'd["hidden_size"]=576.5'
hfbad '"num_hidden_layers" is not a number (a string)' 'd["num_hidden_layers"]="30"'
hfbad '"vocab_size" = -5: expected an integer' 'd["vocab_size"]=-5'
hfbad '"hidden_size" = 577 is not a multiple of num_attention_heads = 9, and no head_dim is given' 'd["hidden_size"]=577; del d["head_dim"]'
hfbad '"num_key_value_heads" = 4 does not divide num_attention_heads = 9' 'd["num_key_value_heads"]=4'
hfbad '"tie_word_embeddings" is not a boolean ("yes"): expected true or false' 'd["tie_word_embeddings"]="yes"'
hfbad '"rms_norm_eps" is out of range (0): expected a number in (0, 1)' 'd["rms_norm_eps"]=0'
# a boolean given as a string or a number is not read as true: the message says what the file holds
hfbad '"mlp_bias" is not a boolean ("false"): expected true or false' 'd["mlp_bias"]="false"'
hfbad '"attention_bias" is not a boolean (1): expected true or false' 'd["attention_bias"]=1'
hfbad '"rope_theta" is not a number ("abc"): expected a number in (0, 1e+12]' 'd["rope_theta"]="abc"'
printf '{"model_type": "llama", "vocab_size": 10,' >"$tmp/hfbad.json"
bad 2 "hfbad.json: line 1, column" run --hf-config "$tmp/hfbad.json" $o
bad 2 "--hf-config $tmp: is a directory" run --hf-config "$tmp" $o
bad 2 "--hf-config defines the model: --preset/--model 'tiny' cannot come with it" run --preset tiny --hf-config tests/hf/smollm2-135m.json $o
bad 2 "run: --tied and --untied contradict each other (--untied came second)" run --tied --untied $o

# a tied model's dump: config.json says tie_word_embeddings true, and there is no lm_head.weight
"$bin" run --preset tiny --tied --algo flash_bk --seq 16 --batch 2 --steps 1 --backend cpu --quiet --out "$tmp/tied.json" --dump "$tmp/tdump"; rc=$?
check "tied dump: config.json has tie_word_embeddings true" bash -c "[ $rc -eq 0 ] && grep -q '\"tie_word_embeddings\": true' '$tmp/tdump/config.json'"
check "tied dump: model.safetensors and grads.safetensors have the embedding and no lm_head.weight" \
    bash -c "for f in model grads; do head -c 4096 '$tmp/tdump/'\$f.safetensors | grep -aq 'model.embed_tokens.weight' || exit 1; ! head -c 4096 '$tmp/tdump/'\$f.safetensors | grep -aq lm_head || exit 1; done"
check "tied dump: model.safetensors holds every parameter (one matrix for both uses)" bash -c "
    n=\$(grep -o '\"param_count\": [0-9]*' '$tmp/tied.json' | grep -o '[0-9]*\$')
    hl=\$(od -An -t u8 -N 8 '$tmp/tdump/model.safetensors' | tr -d ' ')
    sz=\$(stat -c %s '$tmp/tdump/model.safetensors')
    [ \"\$n\" = 108864 ] && [ \$((sz - 8 - hl)) -eq \$((4 * n)) ]"

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

# --dtype bf16: refused on cpu (it computes in fp32 only), reported on dry
bad 2 "--dtype bf16 runs on --backend cuda (and --backend dry reports its memory); the cpu backend computes in fp32 only" run --dtype bf16 --backend cpu --steps 1 --out "$tmp/bad.json"
"$bin" run --preset tiny --seq 24 --batch 3 --steps 1 --dtype bf16 --backend dry --quiet --out "$tmp/bf16.json"; rc=$?
check "dry bf16 run exits 0" test $rc -eq 0
check "dry bf16: the json says dtype bf16 and what is stored in bf16" bash -c "grep -q '\"dtype\": \"bf16\"' '$tmp/bf16.json' && grep -q '\"storage\": \"bf16: activations' '$tmp/bf16.json'"
"$bin" run --preset tiny --seq 24 --batch 3 --steps 1 --backend dry --quiet --out "$tmp/fp32.json"
peak_bytes() { grep -o "\"$1\": [0-9]*" "$2" | head -1 | grep -o '[0-9]*$'; } # the breakdown's exact bytes of a category
check "dry bf16: fewer activation bytes than fp32 ($(peak_bytes activations "$tmp/bf16.json") < $(peak_bytes activations "$tmp/fp32.json")), more weight bytes (the bf16 copies)" \
    test "$(peak_bytes activations "$tmp/bf16.json")" -lt "$(peak_bytes activations "$tmp/fp32.json")" -a \
         "$(peak_bytes model_parameters "$tmp/bf16.json")" -gt "$(peak_bytes model_parameters "$tmp/fp32.json")"

# a model that cannot fit the memory limit: status oom, exit 3, the json still written
"$bin" run --preset tiny --seq 64 --batch 8 --steps 1 --backend cpu --memory-limit 1M --quiet --out "$tmp/oom.json" 2>"$tmp/err"; rc=$?
check "over the memory limit: exit 3" test $rc -eq 3
check "over the memory limit: status oom in the json" grep -q '"status": "oom"' "$tmp/oom.json"
check "over the memory limit: the message names the bytes" grep -q "over the limit of 1048576 bytes" "$tmp/err"

# dp-sgd from the command line: the privacy block, the dump's norms and clip factors, the accountant
"$bin" run --preset tiny --seq 16 --batch 4 --physical-batch 2 --steps 2 --algo ghost_bk --sigma 1.0 --max-grad-norm 0.5 \
    --dataset-size 400 --backend cpu --quiet --out "$tmp/dp.json" --dump "$tmp/dpdump"; rc=$?
check "dp run (ghost_bk) exits 0" test $rc -eq 0
check "dp run in a fixed batch order: no epsilon, never the poisson figure, and the note says --poisson" \
    bash -c "grep -q '\"privacy\": {\"mechanism\": \"gaussian, batches in a fixed order\", \"accountant\": null, \"epsilon\": null' '$tmp/dp.json' && grep -q 'no epsilon is reported; poisson sampling (config.poisson; --poisson on the command line)' '$tmp/dp.json'"
"$bin" run --preset tiny --seq 16 --batch 4 --steps 2 --algo ghost_bk --sigma 1.0 --dataset-size 400 --poisson --backend dry --quiet --out "$tmp/dpp.json"
check "dp run with --poisson: the rdp epsilon" grep -q '"privacy": {"mechanism": "poisson-subsampled gaussian", "accountant": "rdp", "epsilon": [0-9]' "$tmp/dpp.json"
bad 2 "--target-epsilon chooses sigma for poisson-subsampled batches: set --poisson" run --algo flash --target-epsilon 3 --dataset-size 1000 $o
"$bin" run --preset tiny --seq 16 --batch 4 --steps 2 --algo flash --target-epsilon 3 --dataset-size 1000 --poisson --backend dry --quiet --out "$tmp/te.json"; rc=$?
out=$("$bin" epsilon --sigma 1.1 --sample-rate 0.004 --steps 14063 --accountant both); rc=$?
check "epsilon --accountant both: rdp 2.417 and the tight pld at most 1e-4 above dp_accounting's 2.2158763, never below ($(tr '\n' ' ' <<<"$out"))" \
    bash -c "[ $rc = 0 ] && grep -q '^epsilon_rdp 2.4170' <<<'$out' && awk '/^epsilon_pld/ { exit !(\$2 >= 2.2158763 && \$2 <= 2.2158763 * (1 + 1e-4)) }' <<<'$out'"
out=$("$bin" epsilon --target-epsilon 2 --sample-rate 0.01 --steps 1000 --accountant pld); rc=$?
check "epsilon --target-epsilon --accountant pld: a smaller sigma than rdp's, spending at most the target ($(tr '\n' ' ' <<<"$out"))" \
    bash -c "[ $rc = 0 ] && awk '/^sigma/ { s = \$2 } /^epsilon/ { e = \$2 } END { exit !(s > 0.9 && s < 0.97 && e <= 2 && e > 1.99) }' <<<'$out'"
bad 2 "epsilon: --accountant 'tight': expected rdp, pld or both" epsilon --sigma 1 --sample-rate 0.01 --steps 10 --accountant tight
bad 2 "run: --accountant 'prv': expected rdp, pld or both" run --accountant prv $o
"$bin" run --preset tiny --seq 16 --batch 4 --steps 3 --algo flash --sigma 1 --dataset-size 1000 --poisson --accountant both --backend dry --quiet --out "$tmp/acct.json"
check "run --accountant both: epsilon (rdp) and epsilon_pld beside it, the tight one smaller at 3 steps" \
    bash -c "grep -q '\"accountant\": \"rdp+pld\", \"epsilon\": ' '$tmp/acct.json' && grep -o '\"epsilon\": [0-9.e-]*, \"epsilon_pld\": [0-9.e-]*' '$tmp/acct.json' | awk '{ gsub(\",\", \"\"); exit !(\$4 > 0 && \$4 < \$2) }'"
check "--target-epsilon 3 with --poisson: the run reports epsilon 3 or a hair under" bash -c "[ $rc = 0 ] && grep -Eq '\"epsilon\": (2\.99[0-9]*|3)[,}]' '$tmp/te.json'"
check "dp run: layers name their method and the clipped sum" grep -q '"method": "gram T x T materialised", "clipped_sum": "book-keeping"' "$tmp/dp.json"
check "dp dump: per-sample norms" grep -q '"per_sample_norm": \[[0-9]' "$tmp/dpdump/step.json"
# ghost's gram of a layer's input is made once for the layers that read it (q, k, v; gate, up): per decoder layer
# 4 input grams and 7 output grams, not 7 and 7, and the head's two; a gram_dot for each of the 15 linear layers
"$bin" run --preset tiny --seq 8 --batch 2 --steps 1 --algo ghost_bk --sigma 1 --backend cpu --quiet --trace "$tmp/gt.json" --out "$tmp/g.json"
ng=$(grep -o '"name": "gram"' "$tmp/gt.json" | wc -l); nd=$(grep -o '"name": "gram_dot"' "$tmp/gt.json" | wc -l)
check "ghost_bk shares the input gram of q, k, v and of gate, up: $ng grams (2 layers x 11 + 2), $nd gram dots (15)" test "$ng" -eq 24 -a "$nd" -eq 15
# flash's gram norms likewise: one op for q, k, v and one for gate, up (4 a decoder layer, not 7, and the head's)
"$bin" run --preset tiny --seq 8 --batch 2 --steps 1 --algo flash_bk --sigma 1 --backend cpu --quiet --trace "$tmp/ft.json" --out "$tmp/f.json"
nf=$(grep -o '"name": "linear_sqnorm_gram"' "$tmp/ft.json" | wc -l); nl=$(grep -o '"method": "flash: tiled gram"' "$tmp/f.json" | wc -l)
check "flash_bk makes the input gram of q, k, v and of gate, up once: $nf gram-norm ops (2 layers x 4 + 1) for $nl layers (15)" test "$nf" -eq 9 -a "$nl" -eq 15
# the passes over every gradient are ops too (timed by --op-times, charged their bytes): the noise and the
# zeroing once a trainable tensor (21 in tiny), the non-finite check once a step
nn=$(grep -o '"name": "noise", "cat": "op"' "$tmp/ft.json" | wc -l); nz=$(grep -o '"name": "grad_zero", "cat": "op"' "$tmp/ft.json" | wc -l)
nc=$(grep -o '"name": "grad_check", "cat": "op"' "$tmp/ft.json" | wc -l)
check "the noise ($nn), the gradients' zeroing ($nz) and their non-finite check ($nc) are ops: 21, 21 and 1 in a step" test "$nn" -eq 21 -a "$nz" -eq 21 -a "$nc" -eq 1
# --fused-noise: the noise and the optimizer step in one pass, the same bits (the cpu runs the two references per
# tensor in turn), and no noise phase; adam and sgd
for opt in adam sgd; do
    for f in "" --fused-noise; do
        "$bin" run --preset tiny --seq 16 --batch 4 --steps 3 --algo ghost_bk --sigma 1.0 --optimizer $opt --backend cpu --quiet $f --out "$tmp/fn$opt$f.json"
    done
    check "--fused-noise ($opt, cpu): the losses of every step bitwise those without it, no noise phase, the config says so" \
        bash -c "[ \"\$(grep -o '\"losses\": \[[^]]*\]' '$tmp/fn$opt.json')\" = \"\$(grep -o '\"losses\": \[[^]]*\]' '$tmp/fn$opt--fused-noise.json')\" ] &&
                 grep -q '\"noise\": {\"count\"' '$tmp/fn$opt.json' && ! grep -q '\"noise\": {\"count\"' '$tmp/fn$opt--fused-noise.json' &&
                 grep -q '\"fused_noise\": true' '$tmp/fn$opt--fused-noise.json' && grep -q '\"fused_noise\": false' '$tmp/fn$opt.json'"
done
check "dp dump: clip factors, none above 1" bash -c "grep -o '\"clip_factor\": \[[^]]*\]' '$tmp/dpdump/step.json' | tr -d '[]\"a-z_:' | tr ',' '\n' | awk 'NF && (\$1 > 1 || \$1 <= 0) {bad = 1} END {exit bad}'"
out=$("$bin" epsilon --sigma 1.1 --sample-rate 0.004 --steps 14063 --delta 1e-5); rc=$?
check "epsilon command prints epsilon and the best order" bash -c "[ $rc -eq 0 ] && grep -q '^epsilon [0-9.]*$' <<<'$out' && grep -q '^best_order ' <<<'$out'"
out=$("$bin" epsilon --target-epsilon 2 --sample-rate 0.01 --steps 1000); rc=$?
check "epsilon --target-epsilon finds a sigma that spends at most the target" bash -c "[ $rc -eq 0 ] && awk '/^epsilon/ {exit !(\$2 <= 2 && \$2 > 1.99)}' <<<'$out'"
bad 2 "epsilon: give --sample-rate, --steps and one of --sigma or --target-epsilon" epsilon --sigma 1
bad 2 "--sample-rate '1.5': expected a number in [0, 1]" epsilon --sigma 1 --sample-rate 1.5 --steps 10
bad 2 "--target-epsilon needs a DP --algo and --dataset-size" run --algo flash --target-epsilon 3 $o
bad 2 "lora-targets 'q,x': 'x' is not one of q, k, v, o, gate, up, down" run --lora-rank 4 --lora-targets q,x $o
bad 2 "--lora-rank 32 must be smaller than the narrowest adapted width (32)" run --lora-rank 32 --lora-targets k $o
bad 2 "--lora-alpha, --lora-targets and --lora-dropout need --lora-rank" run --lora-alpha 8 $o
bad 2 "--lora-alpha, --lora-targets and --lora-dropout need --lora-rank" run --lora-dropout 0.1 $o
bad 2 "--lora-dropout" run --lora-rank 4 --lora-dropout 1 $o
# attnbench checks its options before it looks for a GPU (none here): each bad value named, nothing written
ab="--out $tmp/bad.json"
bad 2 "--shape '1,2,3': expected B,T,NH,NKV,HS, five integers in [1, 1000000]" attnbench --shape 1,2,3 $ab
bad 2 "--shape '1,64,0,1,64': expected B,T,NH,NKV,HS" attnbench --shape 1,64,0,1,64 $ab
bad 2 "--shape '1,64,4,3,64': NKV must divide NH, HS be at most 256" attnbench --shape 1,64,4,3,64 $ab
bad 2 "--shape '1,64,4,4,512': NKV must divide NH, HS be at most 256" attnbench --shape 1,64,4,4,512 $ab
bad 2 "--shape '60000,1000000,64,1,256': B*T*NH*HS*4 bytes exceeds 1e12" attnbench --shape 60000,1000000,64,1,256 $ab
bad 2 "--shape '1,64,4,4,64x': expected B,T,NH,NKV,HS" attnbench --shape 1,64,4,4,64x $ab
bad 2 "--repeats '0': expected an integer in [1, 1000]" attnbench --repeats 0 $ab
bad 2 "attnbench: unknown option '--seq'" attnbench --seq 64 $ab
bad 2 "attnbench: no GPU is visible on this machine" attnbench $ab
"$bin" run --preset llama-3.2-1b --seq 1024 --batch 8 --physical-batch 2 --algo auto --lora-rank 16 --train-head --sigma 1 --dataset-size 50000 --backend dry --steps 1 --quiet --out "$tmp/auto.json"; rc=$?
check "dry llama-3.2-1b with lora and auto: exits 0" test $rc -eq 0
check "auto names a flash method per layer (the trained head, 128256 wide)" grep -q '"method": "flash: tiled' "$tmp/auto.json"

# out of memory while the model is built (bf16, a projection's weights): the result says oom, its plan null (the
# session stopped before it), exit 3
"$bin" run --preset llama-3.2-1b --backend dry --dtype bf16 --algo flash_bk --sigma 1 --memory-limit 1600M --quiet --out "$tmp/oomload.json" 2>/dev/null; rc=$?
check "out of memory in the model's layers, bf16: exit 3, status oom, the plan null, the layers so far (exit $rc)" bash -c "[ $rc -eq 3 ] &&
    python3 -c \"import json; j=json.load(open('$tmp/oomload.json')); assert j['status'] == 'oom' and j['plan'] is None and 1 < len(j['layers']) < 100, j['status']\""

# --plan: the session's decisions, one line a tensor, before any step; the same on dry and cpu; nothing written
"$bin" run --preset tiny --seq 16 --batch 4 --algo flash_bk --sigma 1 --lora-rank 2 --backend dry --plan >"$tmp/plan-dry.txt" 2>/dev/null; rc=$?
"$bin" run --preset tiny --seq 16 --batch 4 --algo flash_bk --sigma 1 --lora-rank 2 --backend cpu --plan >"$tmp/plan-cpu.txt" 2>/dev/null
check "--plan exits 0 and prints a line for each of the 29 tensors (21 and 8 adapters) (exit $rc)" bash -c "[ $rc -eq 0 ] && [ \$(grep -c '^  model\.\|^  lm_head' '$tmp/plan-dry.txt') -eq 29 ]"
check "--plan: the frozen base and head, the adapters trained in fp32 on book-keeping" bash -c "grep -q '^  lm_head.weight .* no  *fp32  *none' '$tmp/plan-dry.txt' &&
    grep -q 'lora_A.weight .* yes  *fp32  *book-keeping  *x, dy' '$tmp/plan-dry.txt'"
check "--plan: dry's plan is cpu's, tensor for tensor" bash -c "diff <(tail -n +2 '$tmp/plan-dry.txt') <(tail -n +2 '$tmp/plan-cpu.txt')"
bad 2 "--plan prints the plan and runs nothing: --out would have nothing to write" run --preset tiny --plan --out "$tmp/plan.json"
"$bin" run --preset tiny --seq 16 --batch 4 --algo flash_bk --sigma 1 --lora-rank 2 --backend dry --quiet --out "$tmp/plan-run.json"
check "the result json carries the plan: each tensor stored and kept, the run's clipped sum and rates" bash -c "grep -q '\"stored\": \"fp32\", \"method\"' '$tmp/plan-run.json' &&
    grep -q '\"keeps\": \"x, dy\"' '$tmp/plan-run.json' && grep -q '\"plan\": {\"clipped_sum\": \"book-keeping\", .*\"rates\": \"none\"}' '$tmp/plan-run.json'"

# numerical faults stop the run with status error and say where
"$bin" run --preset tiny --seq 16 --batch 2 --steps 50 --lr 1e5 --optimizer sgd --backend cpu --quiet --out "$tmp/div.json" 2>"$tmp/err"; rc=$?
check "a diverging run exits 1" test $rc -eq 1
check "its json says status error" grep -q '"status": "error"' "$tmp/div.json"
check "and names the tensor and step: $(head -c 200 "$tmp/err")" grep -q 'the gradient of model\..* is -\?nan at element [0-9]* in step [0-9]*' "$tmp/err"
# bounds before the run: a dry run whose total of every allocation would pass 2^63 bytes, a trace of gigabytes
"$bin" run --backend dry --seq 131072 --batch 1048576 --physical-batch 8192 --vocab 16777216 --quiet --out "$tmp/huge2.json" 2>"$tmp/err"; rc=$?
check "a dry run allocating past 2^62 bytes in all: exit 2 before the run, nothing written ($(head -c 160 "$tmp/err"))" \
    bash -c "[ $rc -eq 2 ] && grep -q 'would allocate more than 2^62 bytes in all' '$tmp/err' && [ ! -e '$tmp/huge2.json' ]"
s0=$SECONDS
"$bin" run --backend dry --steps 1000000 --trace-steps 1000000 --trace "$tmp/big-trace.json" --quiet 2>"$tmp/err"; rc=$?
check "--trace-steps 1e6 over 1e6 dry steps: exit 2 at once with the trace's size and the --trace-steps that fit ($(head -c 200 "$tmp/err"))" \
    bash -c "[ $rc -eq 2 ] && grep -q -- '--trace would hold up to [0-9.]* GiB' '$tmp/err' && grep -q -- 'give --trace-steps [0-9]* or fewer' '$tmp/err' && [ ! -e '$tmp/big-trace.json' ] && [ $((SECONDS - s0)) -lt 10 ]"
# epsilon: no nan for the order of an infinite epsilon; a target no noise reaches is bad input, as in run
out=$("$bin" epsilon --sigma 0 --sample-rate 0.1 --steps 10 2>/dev/null); rc=$?
check "epsilon at sigma 0: infinite, best_order none ($(tr '\n' ' ' <<<"$out"))" bash -c "[ $rc -eq 0 ] && grep -qx 'epsilon inf' <<<'$out' && grep -qx 'best_order none' <<<'$out'"
"$bin" epsilon --target-epsilon 1e-9 --sample-rate 1 --steps 10 2>/dev/null; rc=$?
"$bin" run --algo flash --target-epsilon 1e-9 --dataset-size 8 --poisson --backend dry --quiet 2>/dev/null; rc2=$?
check "an unreachable --target-epsilon: exit 2 in epsilon ($rc) as in run ($rc2)" bash -c "[ $rc -eq 2 ] && [ $rc2 -eq 2 ]"
out=$("$bin" epsilon --sigma 0 --sample-rate 0.1 --steps 10 2>&1 >/dev/null)
check "epsilon at sigma 0 says why it is infinite ($out)" grep -q 'sigma 0 adds no noise: clipping alone is not private' <<<"$out"
# the pld where a step's loss passes exp's doubles (sigma 0.03 and under): never 0, never below one step's exact epsilon
# (1453.7 at q 0.5, sigma 0.02; 5425.5 at q 1, sigma 0.01; 1529.65 at delta 1e-8), never above rdp's
out=$("$bin" epsilon --accountant both --sample-rate 0.5 --sigma 0.02 --steps 1); rc=$?
check "epsilon --accountant both at sigma 0.02: pld at least the exact 1453.7, at most rdp's ($(tr '\n' ' ' <<<"$out"))" \
    bash -c "[ $rc = 0 ] && awk '/^epsilon_rdp/ { r = \$2 } /^epsilon_pld/ { p = \$2 } END { exit !(p >= 1453.7 && p < 1460 && p <= r) }' <<<'$out'"
out=$("$bin" epsilon --accountant pld --sample-rate 1 --sigma 0.01 --steps 1)
check "epsilon --accountant pld at q 1, sigma 0.01: the exact 5425.5, not 4100 ($(tr '\n' ' ' <<<"$out"))" awk '/^epsilon / { exit !($2 >= 5425.5 && $2 < 5430) }' <<<"$out"
out=$("$bin" epsilon --accountant pld --sample-rate 1 --sigma 0.02 --steps 1 --delta 1e-8)
check "epsilon --accountant pld at delta 1e-8, sigma 0.02: the exact 1529.65 ($(tr '\n' ' ' <<<"$out"))" awk '/^epsilon / { exit !($2 >= 1529.65 && $2 < 1532) }' <<<"$out"
out=$("$bin" epsilon --accountant both --sample-rate 0.5 --sigma 1e-300 --steps 1 2>"$tmp/err")
check "epsilon --accountant both where the pld cannot bound it: epsilon_pld none, never 0, and why ($(tr '\n' ' ' <<<"$out"))" \
    bash -c "grep -qx 'epsilon_pld none' <<<'$out' && grep -q 'could not bound this setting' '$tmp/err'"
out=$("$bin" epsilon --accountant pld --sample-rate 0.0001 --sigma 1 --steps 1000000000000 2>"$tmp/err")
check "epsilon --accountant pld at 1e12 steps: rdp's 9560.03 where the pld's grid cannot beat it, said ($(tr '\n' ' ' <<<"$out"))" \
    bash -c "grep -qx 'epsilon 9560.032373' <<<'$out' && grep -qx 'accountant rdp' <<<'$out' && grep -q 'rdp epsilon instead' '$tmp/err'"
# target mode: every sigma reaches the target where a record is drawn with a chance under delta; a large target is reached
out=$("$bin" epsilon --accountant pld --target-epsilon 1 --sample-rate 4.66e-10 --steps 1000 2>"$tmp/err"); rc=$?
check "epsilon --target-epsilon where a record is drawn with a chance under delta: sigma 0, epsilon 0, said ($(tr '\n' ' ' <<<"$out"))" \
    bash -c "[ $rc = 0 ] && grep -qx 'sigma 0' <<<'$out' && grep -qx 'epsilon 0' <<<'$out' && grep -q 'under delta' '$tmp/err'"
out=$("$bin" epsilon --accountant pld --target-epsilon 1000 --sample-rate 0.01 --steps 1); rc=$?
check "epsilon --target-epsilon 1000 at q 0.01 under the pld: a sigma near 0.024 ($(tr '\n' ' ' <<<"$out"))" \
    bash -c "[ $rc = 0 ] && awk '/^sigma/ { s = \$2 } /^epsilon/ { e = \$2 } END { exit !(s > 0.02 && s < 0.03 && e <= 1000 && e > 990) }' <<<'$out'"

# the privacy of every run, said on the terminal: a DP algorithm without --sigma warned of before it runs, the
# summary's privacy line, the reproducible noise said once; --sigma 0 given on purpose is not warned of
"$bin" run --preset tiny --seq 16 --batch 4 --steps 1 --algo flash_bk --backend dry 2>"$tmp/p0.err" >/dev/null; rc=$?
check "a DP --algo without --sigma: warned before the run, not private in the summary ($(grep -m1 warning "$tmp/p0.err" | head -c 160))" \
    bash -c "[ $rc = 0 ] && head -1 '$tmp/p0.err' | grep -q 'warning: --algo flash_bk clips without noise (--sigma is 0 by default): this run is not private' && grep -qx 'privacy: not private: no noise (sigma = 0): clipping alone is not private' '$tmp/p0.err'"
"$bin" run --preset tiny --seq 16 --batch 4 --steps 1 --algo flash_bk --sigma 0 --backend dry 2>"$tmp/p1.err" >/dev/null
check "--sigma 0 said: no warning, the summary says not private" bash -c "! grep -q warning '$tmp/p1.err' && grep -q '^privacy: not private' '$tmp/p1.err'"
"$bin" run --preset tiny --seq 16 --batch 4 --steps 3 --algo flash_bk --sigma 1 --dataset-size 1000 --poisson --backend dry --out "$tmp/p2.json" 2>"$tmp/p2.err" >/dev/null
eps=$(grep -o '"epsilon": [0-9.e+-]*' "$tmp/p2.json" | head -1 | awk '{print $2}')
check "a Poisson run's summary: ε at δ with q, σ, steps and the accountant, the JSON's ε to 3 digits ($(grep '^privacy' "$tmp/p2.err"); json $eps)" \
    bash -c "grep -Eq '^privacy: ε = [0-9.]+ at δ = 1e-05 \(Poisson, q = 0.004, σ = 1, 3 steps, RDP\)$' '$tmp/p2.err' && awk -v e='$eps' '/^privacy/ { sub(\"privacy: ε = \", \"\"); exit !(\$1 + 0 > 0 && (\$1 - e) / e < 5e-3 && (e - \$1) / e < 5e-3) }' '$tmp/p2.err'"
check "a run with noise from --seed says once that it is reproducible and for measuring" bash -c "[ \$(grep -c 'the noise is Philox from --seed 0: anyone who knows the seed can subtract it' '$tmp/p2.err') = 1 ]"
"$bin" run --preset tiny --seq 16 --batch 4 --steps 3 --algo flash_bk --sigma 1 --dataset-size 1000 --poisson --accountant pld --backend dry 2>"$tmp/p3.err" >/dev/null
check "--accountant pld: the summary names PLD ($(grep '^privacy' "$tmp/p3.err"))" grep -Eq '^privacy: ε = [0-9.]+ at δ = 1e-05 \(Poisson, q = 0.004, σ = 1, 3 steps, PLD\)$' "$tmp/p3.err"
"$bin" run --preset tiny --seq 16 --batch 4 --steps 1 --algo flash_bk --sigma 1 --dataset-size 1000 --backend dry 2>"$tmp/p4.err" >/dev/null
check "fixed batches: no ε, and why" grep -qx 'privacy: none: batches in a fixed order: no epsilon (poisson sampling gives one)' "$tmp/p4.err"
"$bin" run --preset tiny --seq 16 --batch 4 --steps 1 --algo vanilla --backend dry 2>"$tmp/p5.err" >/dev/null
check "vanilla: non-private, no warning" bash -c "grep -qx 'privacy: none (non-private training)' '$tmp/p5.err' && ! grep -q warning '$tmp/p5.err'"

# --secure-noise: other noise every run at the same seed, never written; the same memory and schedule as the
# reproducible noise; the reproducible noise the same every run
sn="--preset tiny --seq 16 --batch 4 --steps 3 --algo ghost_bk --sigma 1 --seed 5 --lr 0.05 --backend cpu --quiet"
for k in a b; do
    "$bin" run $sn --secure-noise --out "$tmp/sec-$k.json" 2>"$tmp/sec-$k.err"
    "$bin" run $sn --out "$tmp/rep-$k.json" 2>/dev/null
done
check "--secure-noise: no notice of reproducible noise" bash -c "! grep -q 'Philox from --seed' '$tmp/sec-a.err'"
check "--secure-noise: other noise each run at one seed, the seed written nowhere; the reproducible noise the same each run; the same memory and schedule in both modes" python3 - "$tmp"/sec-a.json "$tmp"/sec-b.json "$tmp"/rep-a.json "$tmp"/rep-b.json <<'PY'
import json, sys
sa, sb, ra, rb = (json.load(open(f)) for f in sys.argv[1:5])
ok = sa["losses"][0] == sb["losses"][0] == ra["losses"][0]  # step 0's loss comes before any noise
ok &= sa["losses"][2] != sb["losses"][2] and ra["losses"] == rb["losses"]
ok &= sa["meta"]["noise"]["secure"] is True and sa["meta"]["noise"]["seed"] is None and ra["meta"]["noise"]["secure"] is False and ra["meta"]["noise"]["seed"] == 5
for k in ("bytes", "category", "module", "phase", "step"):
    ok &= sa["timeline"][k] == ra["timeline"][k]
ok &= sa["breakdown"]["bytes"] == ra["breakdown"]["bytes"] and sa["peak_memory_mb"] == ra["peak_memory_mb"]
ok &= {k: v["count"] for k, v in sa["phases"].items()} == {k: v["count"] for k, v in ra["phases"].items()}
sys.exit(0 if ok else 1)
PY
check "--secure-noise: the noise's key appears in no output" bash -c "! grep -q '\"noise\": {[^}]*\"seed\": [0-9]' '$tmp/sec-a.json'"

# the tight accountant's bounds: 1e7 steps in under 5 s of cpu and 500 MB (the plain build; the sanitizer build is
# slower by its nature)
if [ -z "${DPPROF_TEST_BIN:-}" ] && [ -x /usr/bin/time ]; then
    /usr/bin/time -f '%U %S %M' -o "$tmp/pld.time" "$bin" epsilon --sigma 1 --sample-rate 0.01 --steps 10000000 --accountant pld >"$tmp/pld.out" 2>&1; rc=$?
    check "epsilon --accountant pld over 1e7 steps: under 5 s of cpu and 500 MB ($(cat "$tmp/pld.time"): user s, system s, KB; $(tr '\n' ' ' <"$tmp/pld.out"))" \
        bash -c "[ $rc = 0 ] && grep -qx 'accountant pld' '$tmp/pld.out' && awk '{ exit !(\$1 + \$2 < 5 && \$3 < 500000) }' '$tmp/pld.time'"
    for a in "1 0.0001 1000000000000" "0.03 0.01 10000000" "0.7 0.001 10000000"; do
        set -- $a
        /usr/bin/time -f '%U %S %M' -o "$tmp/pld.time" "$bin" epsilon --sigma "$1" --sample-rate "$2" --steps "$3" --accountant both >"$tmp/pld.out" 2>&1; rc=$?
        check "epsilon --accountant both at sigma $1, q $2, $3 steps: under 5 s of cpu, as the help says ($(cat "$tmp/pld.time"): user s, system s, KB)" \
            bash -c "[ $rc = 0 ] && awk '{ exit !(\$1 + \$2 < 5 && \$3 < 500000) }' '$tmp/pld.time'"
    done
fi

# a newcomer's rough edges: the banner names a config file's model, the common spellings of --seq get a "did you
# mean", a config key that changes the architecture is modelled or refused by name, fit takes the default --delta
# beside vanilla, fit --json - puts the JSON alone on standard output, and a study's expected oom are said so
"$bin" run --hf-config tests/hf/smollm2-135m.json --backend dry --steps 1 --seq 8 --batch 1 --timeline none --out "$tmp/hfb.json" 2>"$tmp/err"; rc=$?
check "--hf-config: the banner names the file's model, not tiny ($(grep -m1 'parameters' "$tmp/err"))" \
    bash -c "[ $rc = 0 ] && grep -q '^dpprof: tests/hf/smollm2-135m.json, lm, 135 M parameters' '$tmp/err'"
for s in --seq-len --seq-length --max-seq-len; do
    bad 2 "unknown option '$s' (did you mean --seq?)" run "$s" 64 $o
done
bad 2 "unknown option '--batch-size' (did you mean --batch?)" fit --batch-size 8
python3 - "$tmp" <<'PY'
import json, sys
d = json.load(open('tests/hf/smollm2-135m.json'))
json.dump(dict(d, architectures=['Qwen2ForCausalLM']), open(sys.argv[1] + '/qwen-arch.json', 'w'))
json.dump(dict(d, use_sliding_window=False, max_window_layers=21), open(sys.argv[1] + '/qwen-keys.json', 'w'))
json.dump(dict(d, attention_dropout=0.1), open(sys.argv[1] + '/dropout.json', 'w'))
PY
bad 2 '"architectures" holds Qwen2ForCausalLM: dpprof models LlamaFor... and MistralFor... only' run --hf-config "$tmp/qwen-arch.json" $o
bad 2 '"use_sliding_window": a key dpprof does not model, which may change the architecture: refused rather than ignored' run --hf-config "$tmp/qwen-keys.json" $o
bad 2 '"attention_dropout" = 0.1' run --hf-config "$tmp/dropout.json" $o
"$bin" fit --preset tiny --seq 64 --batch 8 --sigma 1 --delta 1e-5 --algo persample,vanilla --device H100 >"$tmp/fit.out" 2>&1; rc=$?
check "fit --delta 1e-5 (the default) with vanilla among the algorithms: runs ($(head -c 160 "$tmp/fit.out"))" bash -c "[ $rc = 0 ]"
"$bin" fit --preset tiny --seq 64 --batch 8 --sigma 1 --algo persample --device H100 --json - >"$tmp/fit.json" 2>"$tmp/fit.err"; rc=$?
check "fit --json -: the JSON alone on standard output, the table on standard error" \
    bash -c "[ $rc = 0 ] && python3 -c 'import json, sys; json.load(open(sys.argv[1]))' '$tmp/fit.json' && grep -q '^dpprof fit: tiny' '$tmp/fit.err'"
printf 'name = oomy\noom = expected: a batch past the limit\nbase = --preset tiny --backend dry --steps 1 --memory-limit 1M\n' >"$tmp/oomy.conf"
"$bin" sweep "$tmp/oomy.conf" --out-dir "$tmp/oomy" 2>"$tmp/err"; rc=$?
check "a sweep's oom line says what the study's oom is ($(grep -m1 ': oom' "$tmp/err"))" \
    bash -c "grep -q 'oomy: oom (expected: a batch past the limit)' '$tmp/err' && grep -q '(the oom: expected: a batch past the limit)' '$tmp/err'"
# a file a run writes is bounded (1 GiB; DPPROF_FILE_MAX lowers it for this test): the bound before the run is an
# upper bound on the trace and on the result, and the --trace-steps or --steps it suggests write a file within it
export DPPROF_FILE_MAX=20000000
"$bin" run --backend dry --layers 256 --algo ghost --steps 4 --trace-steps 4 --trace "$tmp/tb.json" --quiet 2>"$tmp/err"; rc=$?
n=$(grep -o 'give --trace-steps [0-9]*' "$tmp/err" | grep -o '[0-9]*$')
"$bin" run --backend dry --layers 256 --algo ghost --steps 4 --trace-steps "${n:-1}" --trace "$tmp/tb.json" --quiet; rc2=$?
check "a trace past the bound: refused before the run ($(head -c 150 "$tmp/err")); the --trace-steps it suggests ($n) write within it ($(stat -c %s "$tmp/tb.json" 2>/dev/null) bytes)" \
    bash -c "[ $rc = 2 ] && [ $rc2 = 0 ] && [ \$(stat -c %s '$tmp/tb.json') -le 20000000 ]"
"$bin" run --backend dry --steps 100000 --timeline none --out "$tmp/rb.json" --quiet 2>"$tmp/err"; rc=$?
n=$(grep -o 'give --steps [0-9]*' "$tmp/err" | grep -o '[0-9]*$')
"$bin" run --backend dry --steps "${n:-1}" --timeline none --out "$tmp/rb.json" --quiet; rc2=$?
check "a result past the bound: refused before the run ($(head -c 150 "$tmp/err")); the --steps it suggests ($n) write within it ($(stat -c %s "$tmp/rb.json" 2>/dev/null) bytes)" \
    bash -c "[ $rc = 2 ] && [ ! -e '$tmp/rb.json.tmp' ] && [ $rc2 = 0 ] && [ \$(stat -c %s '$tmp/rb.json') -le 20000000 ]"
unset DPPROF_FILE_MAX
# the peer harness without torch (python -S: no site packages): an error result naming what to install, no traceback
python3 -S experiments/peers.py run --framework pytorch --algo vanilla --out "$tmp/peer.json" --device cpu --dpprof "$bin" -- --preset tiny --steps 1 >/dev/null 2>"$tmp/err"; rc=$?
check "peers.py run without torch: exit 1, a result with status error naming the packages, no traceback ($(head -c 160 "$tmp/err"))" \
    bash -c "[ $rc = 1 ] && grep -q '\"status\": \"error\"' '$tmp/peer.json' && grep -q 'pip install torch transformers' '$tmp/peer.json' && ! grep -q Traceback '$tmp/err'"
