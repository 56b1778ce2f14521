#!/usr/bin/env bash
# tests/test_cuemu_cli.sh - the command line on the cuda backend, run on tests/cuemu.h (the cpu emulator of
# the cuda subset dpprof_kernels.cu uses; build/dpprof-cuemu): a run's json names the device and has
# gpu times, mfu and the driver's memory figure; --trace has the ops; --dump works from device memory;
# --dram says why it has no counters; out-of-memory on the device is exit 3 with status oom; the
# memory profile equals the dry backend's. the arithmetic itself is checked by build/tests/test_cuemu.
cd "$(dirname "$0")/.." || exit 1
source tests/lib.bash
bin=build/dpprof-cuemu
[ -x "$bin" ] || { fail "$bin is missing (make test builds it)"; exit 1; }
small="--preset tiny --seq 16 --batch 4 --physical-batch 2 --steps 2 --warmup 1 --quiet"

"$bin" run $small --backend cuda --algo flash_bk --sigma 1 --max-grad-norm 1 --dram --out "$tmp/run.json" --trace "$tmp/trace.json" 2>"$tmp/err"
check "cuda run (emulated) exits 0" test $? -eq 0
check "its json names the backend and the device" grep -q '"backend": "cuda", "device": "cuemu (cpu emulation of cuda)"' "$tmp/run.json"
check "its json has a measured step time and an mfu" grep -Eq '"step_time_ms_median": [0-9.]+.*"mfu": [0-9.e-]+' "$tmp/run.json"
check "its json has the driver's figure at the peak" grep -Eq '"driver_peak_used_mb": [0-9.]+' "$tmp/run.json"
check "--dram without counters says why, and the phases say unavailable" \
    bash -c "grep -q '\"dram_note\": \"CUPTI range profiler unavailable: counters need a real GPU' '$tmp/run.json' && grep -q '\"dram_read_bytes\": \"unavailable\"' '$tmp/run.json'"
check "--trace holds every op on a kernels track" bash -c "[ \$(grep -c '\"cat\": \"op\"' '$tmp/trace.json') -gt 100 ] && grep -q 'ops (gpu kernels, cuda events)' '$tmp/trace.json'"

# --dram-ops: each op of the counters step a counter range. the emulator's stand-in counters (CUEMU_COUNTERS=1)
# count the bytes of copies, memsets and cuBLAS calls: the matmuls' measured bytes are then their analytic bytes,
# the phases' are the sums of their ops', and the counted step's ops are not timed (the other warm-up step's are)
CUEMU_COUNTERS=1 "$bin" run --preset tiny --seq 16 --batch 4 --steps 1 --warmup 2 --quiet --backend cuda --algo ghost_bk --sigma 1 --dram-ops --op-times \
    --out "$tmp/opsdram.json" 2>"$tmp/err"
check "--dram-ops (emulated counters) exits 0 ($(head -c 200 "$tmp/err"))" test $? -eq 0
check "--dram-ops: every op of the counters step has its traffic, the matmuls' = their analytic bytes, the phases' = their ops' sums, those ops untimed" python3 - "$tmp/opsdram.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
ops = r["throughput"]["ops"]["by_op"]
tr = {k: v["traffic"] for k, v in ops.items()}
ok = all(t is not None and t["count"] >= 1 for t in tr.values()) and len(tr) > 20
mm = tr["matmul_fwd"]
ok = ok and mm["dram_read_bytes"] + mm["dram_write_bytes"] == mm["bytes_analytic"] > 0 and abs(mm["dram_over_analytic"] - 1) < 1e-12
ok = ok and all(v["count"] == v["traffic"]["count"] for v in ops.values())  # one timed warm-up step, one counted
ph = r["phases"]
dr = sum(p["dram_read_bytes"] + p["dram_write_bytes"] for p in ph.values() if not isinstance(p["dram_read_bytes"], str))
dt = sum(t["dram_read_bytes"] + t["dram_write_bytes"] for t in tr.values())
ok = ok and dr == dt > 0 and "per op of warm-up step 0" in r["meta"]["dram_note"]
sys.exit(not ok)
EOF
# an experiment file's cuda line: its options join every configuration on the cuda backend only, and the ops figure
# draws the measured bytes (a sentence without them)
cat >"$tmp/opsx.conf" <<'EOF'
name = opsx
base = --preset tiny --seq 16 --batch 4 --steps 1 --sigma 1 --backend dry --timeline none
axis algo = ghost | vanilla: --algo vanilla --sigma 0
cuda = --dram-ops --op-times --warmup 2
figure ops = ops where=algo:ghost
EOF
CUEMU_COUNTERS=1 "$bin" sweep "$tmp/opsx.conf" --out-dir "$tmp/opsx-cuda" --backend cuda --jobs 1 >/dev/null 2>&1
"$bin" sweep "$tmp/opsx.conf" --out-dir "$tmp/opsx-dry" --jobs 1 >/dev/null 2>&1
"$bin" report "$tmp/opsx.conf" --results "$tmp/opsx-cuda" --figures "$tmp/opsx-cuda/fig" --tables "$tmp/opsx-cuda/tab" >/dev/null 2>&1; rc1=$?
"$bin" report "$tmp/opsx.conf" --results "$tmp/opsx-dry" --figures "$tmp/opsx-dry/fig" --tables "$tmp/opsx-dry/tab" >/dev/null 2>&1; rc2=$?
check "sweep --backend cuda adds the file's cuda options (--dram-ops, --op-times), the dry sweep does not" python3 - "$tmp/opsx-cuda/opsx-ghost.json" "$tmp/opsx-dry/opsx-ghost.json" <<'EOF'
import json, sys
c, d = (json.load(open(f)) for f in sys.argv[1:3])
sys.exit(not (c["config"]["backend"] == "cuda" and c["throughput"]["ops"]["by_op"]["matmul_fwd"]["traffic"]["count"] > 0
              and d["config"]["backend"] == "dry" and d["throughput"]["ops"] is None))
EOF
check "report: the ops figure of measured results lists each op's measured over analytic bytes (matmul_fwd 1 on the stand-in), without them it is a sentence" \
    bash -c "[ $rc1 = 0 ] && [ $rc2 = 0 ] && [ -s '$tmp/opsx-cuda/fig/opsx-ops.png' ] && [ -s '$tmp/opsx-dry/fig/opsx-ops.png' ] && grep -q 'figure ops: opsx-ghost, measured DRAM bytes.*matmul_fwd 1[,$]' '$tmp/opsx-cuda/summary.txt' && ! grep -q 'figure ops:' '$tmp/opsx-dry/summary.txt'"
"$bin" run $small --backend cuda --algo ghost --dram-ops --out "$tmp/opsnone.json" 2>"$tmp/err"
check "--dram-ops without counters: exit 0, the note says why, no op has traffic" bash -c "[ $? = 0 ] && grep -q 'counters need a real GPU' '$tmp/opsnone.json' && ! grep -q '\"traffic\": {' '$tmp/opsnone.json'"

"$bin" run $small --backend dry --algo flash_bk --sigma 1 --max-grad-norm 1 --out "$tmp/dry.json"
peak() { grep -o '"peak_memory_mb": [0-9.e+-]*' "$1"; }
check "the cuda run's peak equals the dry run's ($(peak "$tmp/run.json"))" test "$(peak "$tmp/run.json")" = "$(peak "$tmp/dry.json")"
# the three peaks in the json (meta.memory): the in-process dry plan is the dry run's peak, and the driver's
# figure is its split summed; the terminal prints the three
dryb=$(grep -o '"peak": [0-9]*' "$tmp/dry.json" | head -1 | grep -o '[0-9]*$')
check "meta.memory: accountant and dry plan $dryb bytes, as the dry run's; the driver's split sums to its figure" python3 -c "
import json, sys
m = json.load(open('$tmp/run.json'))['meta']['memory']; g = m['gap']
assert m['accountant_peak_bytes'] == m['dry_peak_bytes'] == $dryb, m
assert g['accountant_at_driver_peak_bytes'] + g['pool_rounding_bytes'] + g['pool_unused_bytes'] + g['unexplained_bytes'] == m['driver_peak_bytes'], m
assert m['driver_before_session_bytes'] >= 0 and m['cublas_workspace_bytes'] == 32 << 20, m"
"$bin" run ${small% --quiet} --backend cuda --algo flash_bk --sigma 1 --max-grad-norm 1 --out "$tmp/run3.json" 2>"$tmp/err3"
check "the terminal summary of a cuda run prints the three peaks" grep -Eq '^peaks: accountant [0-9]+ bytes, dry plan .* \(= accountant\), driver [0-9]+ bytes' "$tmp/err3"

"$bin" run $small --backend cuda --algo ghost_bk --dump "$tmp/dump" --out "$tmp/dump.json"
check "--dump on cuda writes the five files" bash -c "for f in model.safetensors grads.safetensors batch.safetensors step.json config.json; do [ -s '$tmp/dump/'\$f ] || exit 1; done"
build/dpprof-nocuda run $small --backend cpu --algo ghost_bk --dump "$tmp/dumpcpu" --out "$tmp/dumpcpu.json"
check "the dumped batch equals the cpu backend's byte for byte, the model file has its size" bash -c "cmp -s '$tmp/dump/batch.safetensors' '$tmp/dumpcpu/batch.safetensors' && [ \$(stat -c %s '$tmp/dump/model.safetensors') = \$(stat -c %s '$tmp/dumpcpu/model.safetensors') ]"

CUEMU_MEMORY_BYTES=$((64 << 20)) "$bin" run --preset tiny --seq 64 --batch 64 --steps 1 --quiet --backend cuda --algo persample --out "$tmp/oom.json" 2>"$tmp/oom.err"
rc=$?
check "a run that does not fit the device exits 3 (got $rc)" test $rc -eq 3
check "its json says oom" grep -q '"status": "oom"' "$tmp/oom.json"
check "the message names the bytes cudaMalloc could not get" grep -q 'out of device memory: cudaMalloc of [0-9]* bytes' "$tmp/oom.json"

CUEMU_NO_DEVICE=1 "$bin" run $small --backend cuda --out "$tmp/nodev.json" 2>"$tmp/nodev.err"
rc=$?
check "--backend cuda without a device is exit 2 with a message (got $rc)" bash -c "[ $rc -eq 2 ] && grep -q 'no GPU is visible' '$tmp/nodev.err' && [ ! -e '$tmp/nodev.json' ]"
CUEMU_NO_DEVICE=1 "$bin" run $small --out "$tmp/auto.json"
check "--backend auto without a device runs on the cpu" grep -q '"backend": "cpu"' "$tmp/auto.json"
"$bin" run $small --out "$tmp/auto2.json"
check "--backend auto with a device runs on it" grep -q '"backend": "cuda"' "$tmp/auto2.json"
"$bin" run $small --backend cpu --dram --out "$tmp/dramcpu.json" 2>"$tmp/dramcpu.err"
rc=$?
check "--dram on the cpu backend is exit 2 naming the reason (got $rc)" bash -c "[ $rc -eq 2 ] && grep -q -- '--dram reads the GPU' '$tmp/dramcpu.err'"

# dpprof devices: what make bench and make gpu-check ask before measuring anything
"$bin" devices >"$tmp/dev.txt"
check "devices lists the (emulated) GPU with its peaks, exit 0" bash -c "[ $? -eq 0 ] && grep -q '^0: cuemu (cpu emulation of cuda), sm 9.0, 2 SMs.*peaks: fp32' '$tmp/dev.txt'"
CUEMU_NO_DEVICE=1 "$bin" devices >"$tmp/nodev.txt"
rc=$?
check "devices without a GPU says so, exit 1 (got $rc)" bash -c "[ $rc -eq 1 ] && grep -q '^no GPU visible' '$tmp/nodev.txt'"
build/dpprof-nocuda devices >"$tmp/nocuda.txt"
rc=$?
check "devices in a build without CUDA says so, exit 1 (got $rc)" bash -c "[ $rc -eq 1 ] && grep -q 'built without CUDA' '$tmp/nocuda.txt'"
# the benchmark's report on emulated results: speed and mfu per configuration (one shape, a; the figures and tables
# of the file's own shapes left out, as the report refuses a where= label the axis does not have)
sed -e 's/^base = .*/base = --backend cuda --steps 1 --warmup 1 --dram --op-times --sigma 1.0 --dataset-size 1000 --timeline none/' \
    -e 's/^axis shape = .*/axis shape = a: --preset tiny --seq 8 --batch 2/' -e 's/^axis algo = .*/axis algo = vanilla: --algo vanilla --sigma 0 | flash_bk: --algo flash_bk/' \
    -e 's/^axis dtype = .*/axis dtype = bf16: --dtype bf16 | fp32: --dtype fp32/' -e '/where=.*shape:\(trainer\|longctx\)/d' experiments/bench.conf >"$tmp/bench.conf"
"$bin" sweep "$tmp/bench.conf" --out-dir "$tmp/bench" --jobs 1 >/dev/null 2>&1 && "$bin" report "$tmp/bench.conf" --results "$tmp/bench" --figures "$tmp/bench" --tables "$tmp/bench" >/dev/null 2>&1
check "bench.conf sweeps and reports on the emulated GPU (table, speed figures bf16 and fp32, mfu figure)" bash -c "[ -s '$tmp/bench/bench-table.tex' ] && [ -s '$tmp/bench/bench-speed.png' ] && [ -s '$tmp/bench/bench-speed_fp32.png' ] && [ -s '$tmp/bench/bench-mfu.png' ]"
check "the bench macros have speed 1.00 for vanilla in each dtype and an mfu" bash -c "grep -q 'dpdef{bench}{bf16-a-vanilla}{speed}{1.00}' '$tmp/bench/bench-macros.tex' && grep -q 'dpdef{bench}{fp32-a-vanilla}{speed}{1.00}' '$tmp/bench/bench-macros.tex' && grep -q 'dpdef{bench}{bf16-a-flash_bk}{mfu}' '$tmp/bench/bench-macros.tex'"
# auto times the two flash flavours on the device and picks per layer by flops / measured rate
"$bin" run $small --backend cuda --algo auto --sigma 1 --out "$tmp/auto.json"
check "auto on cuda records the measured rates of both flash flavours" grep -Eq '"auto_flash_flops_per_s": \{"gram": [0-9.e+]+, "psg": [0-9.e+]+' "$tmp/auto.json"
check "auto on cuda records ghost's measured rate, or null where its grams would raise the peak" grep -Eq '"auto_flash_flops_per_s": \{"gram": [0-9.e+]+, "psg": [0-9.e+]+, "ghost": ([0-9.e+]+|null)' "$tmp/auto.json"
"$bin" run $small --backend dry --algo auto --sigma 1 --out "$tmp/autodry.json"
check "auto's timing buffers are in the schedule: its peak equals dry's" test "$(peak "$tmp/auto.json")" = "$(peak "$tmp/autodry.json")"
# --fused-clipgrad: bf16 book-keeping's clipped gradients on the fused tensor-core kernel, which dpprof launches
# itself (cuBLAS's per-sample GEMMs are not counted): one more kernel per clipped linear layer (tiny: 2 x 7 and the
# head) and physical batch (2), the json says so, the losses are the cuBLAS path's to fp32 rounding; fp32 ignores it
for f in "" --fused-clipgrad; do
    "$bin" run $small --backend cuda --dtype bf16 --algo ghost_bk --sigma 0 $f --out "$tmp/cg$f.json"
    "$bin" run $small --backend cuda --algo ghost_bk --sigma 0 $f --out "$tmp/cg32$f.json"
done
launches() { grep -Eo '"kernel_launches_per_step": [0-9.e+]+' "$1" | grep -Eo '[0-9.e+]+$'; }
losses() { grep -o '"losses": \[[^]]*\]' "$1" | grep -Eo -e '-?[0-9][0-9.e+-]*' | tr '\n' ' '; }
check "--fused-clipgrad is in the json's config" bash -c "grep -q '\"fused_clipgrad\": true' '$tmp/cg--fused-clipgrad.json' && grep -q '\"fused_clipgrad\": false' '$tmp/cg.json'"
check "bf16 with --fused-clipgrad launches 30 more kernels a step ($(launches "$tmp/cg--fused-clipgrad.json") against $(launches "$tmp/cg.json")), fp32 the same number" \
    bash -c "[ \$(( $(launches "$tmp/cg--fused-clipgrad.json") - $(launches "$tmp/cg.json") )) -eq 30 ] && [ '$(launches "$tmp/cg32--fused-clipgrad.json")' = '$(launches "$tmp/cg32.json")' ]"
check "bf16 losses with and without --fused-clipgrad agree to 1e-5 ($(losses "$tmp/cg--fused-clipgrad.json"))" \
    awk -v a="$(losses "$tmp/cg--fused-clipgrad.json")" -v b="$(losses "$tmp/cg.json")" 'BEGIN { n = split(a, x, " "); m = split(b, y, " "); if (n != m || n < 3) exit 1; for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 1e-5 * y[i]) exit 1 } }'
# --dp-warp-tile 32: the fused kernel with warps of 64 x 32 instead of the default (64 x 64 where the device holds
# the kernel, as the emulator's 227 KiB does): every element's arithmetic is the same, so ghost_bk's losses (its
# norms are ghost's, not these kernels') are the same bits
"$bin" run $small --backend cuda --dtype bf16 --algo ghost_bk --sigma 0 --fused-clipgrad --dp-warp-tile 32 --out "$tmp/cg32w.json"
check "--dp-warp-tile 32 is in the json's config, and the losses are the default warps' bits ($(losses "$tmp/cg32w.json"))" \
    bash -c "grep -q '\"dp_warp_tile\": 32' '$tmp/cg32w.json' && grep -q '\"dp_warp_tile\": 0' '$tmp/cg--fused-clipgrad.json' && [ -n '$(losses "$tmp/cg32w.json")' ] &&
             [ '$(losses "$tmp/cg32w.json")' = '$(losses "$tmp/cg--fused-clipgrad.json")' ]"
# --wgmma / --no-wgmma: the gram flavour of the flash norm on the wgmma kernel or on mma.sync; the default is wgmma
# where the device is compute capability 9.0, as the emulator's is (flash_bk at T = 16 takes gram for every linear
# layer; the json counts the kernels on wgmma); the norms in another grouping, the losses to 1e-5
for w in --no-wgmma --wgmma ""; do
    "$bin" run --preset tiny --seq 16 --batch 4 --steps 3 --warmup 1 --backend cuda --dtype bf16 --algo flash_bk --sigma 1 $w --quiet --out "$tmp/wg$w.json"
done
wgk() { grep -Eo '"wgmma_kernels_per_step": [0-9.e+]+' "$1" | grep -Eo '[0-9.e+]+$'; }
check "--wgmma is in the json's config, its gram kernels run on wgmma ($(wgk "$tmp/wg--wgmma.json") a step, $(wgk "$tmp/wg--no-wgmma.json") with --no-wgmma) with as many launches ($(launches "$tmp/wg--wgmma.json"), $(launches "$tmp/wg--no-wgmma.json"))" \
    bash -c "grep -q '\"wgmma\": true' '$tmp/wg--wgmma.json' && grep -q '\"wgmma\": false' '$tmp/wg--no-wgmma.json' && [ '$(wgk "$tmp/wg--no-wgmma.json")' = 0 ] &&
             awk 'BEGIN { exit !($(wgk "$tmp/wg--wgmma.json") + 0 > 0) }' && [ '$(launches "$tmp/wg--wgmma.json")' = '$(launches "$tmp/wg--no-wgmma.json")' ]"
check "the default on a device of compute capability 9.0 is wgmma: the json says so and the step takes --wgmma's kernels ($(wgk "$tmp/wg.json") a step)" \
    bash -c "grep -q '\"wgmma\": true' '$tmp/wg.json' && [ '$(wgk "$tmp/wg.json")' = '$(wgk "$tmp/wg--wgmma.json")' ] && [ '$(losses "$tmp/wg.json")' = '$(losses "$tmp/wg--wgmma.json")' ]"
check "losses with and without --wgmma agree to 1e-5 ($(losses "$tmp/wg--wgmma.json"))" \
    awk -v a="$(losses "$tmp/wg--wgmma.json")" -v b="$(losses "$tmp/wg--no-wgmma.json")" 'BEGIN { n = split(a, x, " "); m = split(b, y, " "); if (n != m || n < 3) exit 1; for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 1e-5 * y[i]) exit 1 } }'
# auto, bf16 book-keeping: the clipped gradient's exact kernels timed at each linear shape at session start (cuBLAS
# per sample, the fused kernel: auto_clipgrad_ms), each layer on the faster; the batched GEMM (its factors lowered) is
# never auto's candidate; --fused-clipgrad, --cublas-clipgrad and --batched-clipgrad force one, untimed; the timing
# buffers and the batched layers' norms are in the schedule (dry's peak)
for f in "" --fused-clipgrad --cublas-clipgrad --batched-clipgrad --no-batched-clipgrad; do
    "$bin" run $small --backend cuda --dtype bf16 --algo auto --sigma 1 $f --out "$tmp/acg$f.json"
done
"$bin" run $small --backend dry --dtype bf16 --algo auto --sigma 1 --out "$tmp/acgdry.json"
kernels() { grep -o '"clipgrad_kernel": "[a-z]*"' "$1" | grep -Eo '[a-z]+"$' | tr -d '"' | sort | uniq -c | tr -s ' \n' ' '; }
num='[0-9][0-9.e+-]*'
nshapes=$(grep -o '"auto_clipgrad_ms": {.*' "$tmp/acg.json" | grep -o "\"shape\": \[[0-9]*, [0-9]*\], \"seq\": 16, \"cublas\": $num, \"fused\": $num, \"batched\": null" | wc -l)
check "auto bf16 times the two exact clipgrad kernels once per distinct linear shape, the batched GEMM not ($nshapes shapes: q and o, k and v (gqa), gate and up, down, the head)" test "$nshapes" -eq 5
check "auto bf16's config says the kernels were measured, and every book-keeping linear layer names its kernel, none batched ($(kernels "$tmp/acg.json"))" \
    bash -c "grep -q '\"fused_clipgrad\": \"measured\"' '$tmp/acg.json' && grep -q '\"batched_clipgrad\": false' '$tmp/acg.json' && grep -q '\"batched_clip_bound\": null' '$tmp/acg.json' && [ \$(grep -Eo '\"clipgrad_kernel\": \"(fused|cublas)\"' '$tmp/acg.json' | wc -l) -eq 15 ]"
check "auto bf16's clipgrad timing buffers are in the schedule: its peak equals dry's" test "$(peak "$tmp/acg.json")" = "$(peak "$tmp/acgdry.json")"
check "--fused-clipgrad, --cublas-clipgrad and --batched-clipgrad force the kernel under auto, untimed ($(kernels "$tmp/acg--fused-clipgrad.json"); $(kernels "$tmp/acg--cublas-clipgrad.json"); $(kernels "$tmp/acg--batched-clipgrad.json"))" \
    bash -c "for k in fused cublas batched; do grep -q '\"auto_clipgrad_ms\": null' \"$tmp/acg--\$k-clipgrad.json\" && [ \$(grep -o \"\\\"clipgrad_kernel\\\": \\\"\$k\\\"\" \"$tmp/acg--\$k-clipgrad.json\" | wc -l) -eq 15 ] || exit 1; done &&
             grep -q '\"fused_clipgrad\": false' '$tmp/acg--cublas-clipgrad.json' && grep -q '\"batched_clipgrad\": true' '$tmp/acg--batched-clipgrad.json'"
check "--no-batched-clipgrad (the default said): auto times cuBLAS and the fused kernel only (batched null), no layer batched, no bound ($(kernels "$tmp/acg--no-batched-clipgrad.json"))" \
    bash -c "grep -o '\"auto_clipgrad_ms\": {.*' '$tmp/acg--no-batched-clipgrad.json' | grep -q '\"batched\": null' && ! grep -q '\"clipgrad_kernel\": \"batched\"' '$tmp/acg--no-batched-clipgrad.json' &&
             grep -q '\"batched_clipgrad\": false' '$tmp/acg--no-batched-clipgrad.json' && grep -q '\"batched_clip_bound\": null' '$tmp/acg--no-batched-clipgrad.json'"
bound() { grep -Eo '"eps_over_norm_max": [0-9.e+-]+' "$1" | grep -Eo '[0-9.e+-]+$'; }
"$bin" run $small --backend dry --dtype bf16 --algo auto --sigma 1 --batched-clipgrad --out "$tmp/acgdry-b.json"
check "--batched-clipgrad states the rounding's bound on the factors (eps_over_norm_max $(bound "$tmp/acg--batched-clipgrad.json"), between 0 and 1 at this shape) and its peak is dry's" \
    bash -c "awk 'BEGIN { v = \"$(bound "$tmp/acg--batched-clipgrad.json")\" + 0; exit !(v > 0 && v < 1) }' && [ '$(peak "$tmp/acg--batched-clipgrad.json")' = '$(peak "$tmp/acgdry-b.json")' ]"
# auto, bf16: each flash flavour timed on dpprof's kernels and on cuBLAS blocks, each on the faster (gram_on, psg_on);
# fp32 has no cuBLAS blocks: null
fr=$(grep -o '"auto_flash_flops_per_s": {[^}]*' "$tmp/acg.json" | head -c 400)
check "auto bf16 times both flash flavours on the kernels and on cuBLAS and names where each runs ($(grep -Eo '"(gram|psg)_on": "[a-z]*"' <<<"$fr" | tr '\n' ' '))" \
    bash -c "grep -Eq '\"gram_cublas\": $num, \"psg_cublas\": $num, \"gram_on\": \"(kernels|cublas)\", \"psg_on\": \"(kernels|cublas)\"' <<<\"\$1\"" _ "$fr"
"$bin" run $small --backend cuda --algo auto --sigma 1 --out "$tmp/afp32.json"
check "auto fp32: the flash flavours on dpprof's kernels alone (cuBLAS blocks are bf16's: null)" \
    grep -q '"gram_cublas": null, "psg_cublas": null, "gram_on": "kernels", "psg_on": "kernels"' "$tmp/afp32.json"
# auto with noise: the noise and the optimizer step timed as one pass and as two at session start
# (auto_noise_ms), the steps on the faster (a noise phase of their own exactly when two passes won);
# --fused-noise and --separate-noise force one, untimed, with the same bits
for f in "" --fused-noise --separate-noise; do
    "$bin" run $small --backend cuda --algo auto --sigma 1 $f --out "$tmp/an$f.json"
done
anfused=$(grep -o '"auto_noise_ms": {[^}]*}' "$tmp/an.json" | grep -Eo '"fused": (true|false)' | grep -Eo '(true|false)$')
check "auto times the noise in one pass and in two on the largest tensor's weights (auto_noise_ms; one pass faster: ${anfused:-?})" \
    grep -Eq '"auto_noise_ms": \{"two_passes": [0-9.e+-]+, "one_pass": [0-9.e+-]+, "weights": [1-9][0-9]*, "fused": (true|false)' "$tmp/an.json"
check "auto's steps follow the measured choice: a noise phase of their own exactly when two passes were faster" \
    bash -c "grep -q '\"fused_noise\": \"measured\"' '$tmp/an.json' && if [ '$anfused' = true ]; then ! grep -q '\"noise\": {\"count\"' '$tmp/an.json'; else grep -q '\"noise\": {\"count\"' '$tmp/an.json'; fi"
check "--fused-noise and --separate-noise force the pass under auto, untimed, with the same losses ($(losses "$tmp/an--fused-noise.json"))" \
    bash -c "grep -q '\"auto_noise_ms\": null' '$tmp/an--fused-noise.json' && grep -q '\"auto_noise_ms\": null' '$tmp/an--separate-noise.json' &&
             grep -q '\"fused_noise\": true' '$tmp/an--fused-noise.json' && grep -q '\"fused_noise\": false' '$tmp/an--separate-noise.json' &&
             ! grep -q '\"noise\": {\"count\"' '$tmp/an--fused-noise.json' && grep -q '\"noise\": {\"count\"' '$tmp/an--separate-noise.json' &&
             [ '$(losses "$tmp/an--fused-noise.json")' = '$(losses "$tmp/an--separate-noise.json")' ]"
# --op-times: every op timed in the warm-up steps, by name in throughput.ops with its share of the peaks
"$bin" run $small --backend cuda --algo flash_bk --sigma 1 --op-times --out "$tmp/ops.json"
check "--op-times gives throughput.ops with rates and shares of the peaks" grep -Eq '"ops": \{"note": "cuda events around each op.*"linear_sqnorm_gram": \{"count": [0-9]+, "ms": [0-9.e+-]+.*"share_of_dram_peak": [0-9.e+-]+' "$tmp/ops.json"
sf=$(grep -o '"linear_sqnorm_gram": {[^}]*}' "$tmp/ops.json" | grep -Eo '"share_of_fp32_peak": [0-9.e+-]+' | grep -Eo '[0-9.e+-]+$')
sh=$(grep -o '"linear_sqnorm_gram": {[^}]*}' "$tmp/ops.json" | grep -Eo '"share_of_bf16_peak": [0-9.e+-]+' | grep -Eo '[0-9.e+-]+$')
check "each op's share of the bf16 tensor-core peak is its fp32 share over the peaks' ratio (fp32 $sf, bf16 $sh)" awk -v a="$sf" -v b="$sh" 'BEGIN { exit !(a > 0 && b > 0 && a / b > 2) }'
sd=$(grep -o '"linear_sqnorm_gram": {[^}]*}' "$tmp/ops.json" | grep -Eo '"share_of_dram_peak": [0-9.e+-]+' | grep -Eo '[0-9.e+-]+$')
bd=$(grep -o '"linear_sqnorm_gram": {[^}]*}' "$tmp/ops.json" | grep -Eo '"bound": "[a-z0-9]+"' | grep -Eo '[a-z0-9]+"$' | tr -d '"')
sb=$(grep -o '"linear_sqnorm_gram": {[^}]*}' "$tmp/ops.json" | grep -Eo '"share_of_bound": [0-9.e+-]+' | grep -Eo '[0-9.e+-]+$')
check "each op names its roofline bound (an fp32 run: dram or fp32) and its share of it is the larger of the two shares (bound $bd: $sb; dram $sd, fp32 $sf)" \
    awk -v d="$sd" -v f="$sf" -v b="$sb" -v n="$bd" 'BEGIN { m = d > f ? d : f; w = d >= f ? "dram" : "fp32"; exit !(n == w && b > 0 && (b - m) / m < 1e-9 && (m - b) / m < 1e-9) }'
check "the bench macros have the norm kernels' share of the compute peak (bf16 runs: the tensor cores')" grep -q 'dpdef{bench}{bf16-a-flash_bk}{norm_flops_pct}' "$tmp/bench/bench-macros.tex"
"$bin" run $small --backend cuda --algo flash_bk --sigma 1 --out "$tmp/noops.json"
check "without it throughput.ops is null" grep -q '"ops": null' "$tmp/noops.json"
"$bin" run --preset tiny --seq 16 --batch 4 --steps 1 --quiet --backend cuda --op-times --out "$tmp/opsw.json" 2>"$tmp/opsw.err"
rc=$?
check "--op-times without warm-up is exit 2 naming the reason (got $rc)" bash -c "[ $rc -eq 2 ] && grep -q -- '--op-times times every op in the warm-up steps' '$tmp/opsw.err' && [ ! -e '$tmp/opsw.json' ]"
check "the bench macros have the norm kernels' share of the dram peak (--op-times)" grep -q 'dpdef{bench}{bf16-a-flash_bk}{norm_dram_pct}' "$tmp/bench/bench-macros.tex"
# --fused-noise on cuda: the noise and the optimizer step in one kernel per tensor (dpprof_noise_adam_gpu), the same
# bits as the noise kernel then adam's, in fp32 and bf16 (where it also writes the working copies); no noise phase
for d in fp32 bf16; do
    for f in "" --fused-noise; do
        "$bin" run $small --backend cuda --dtype $d --algo flash_bk --sigma 1 --warmup 1 --op-times $f --out "$tmp/fn$d$f.json"
    done
    check "--fused-noise ($d, cuda): losses bitwise those without it, noise_adam ops and no noise phase, fewer launches ($(launches "$tmp/fn$d--fused-noise.json") against $(launches "$tmp/fn$d.json"))" \
        bash -c "[ '$(losses "$tmp/fn$d.json")' = '$(losses "$tmp/fn$d--fused-noise.json")' ] && [ -n '$(losses "$tmp/fn$d.json")' ] &&
                 grep -Eq '\"noise_adam\": \{\"count\": [0-9]+' '$tmp/fn$d--fused-noise.json' && ! grep -q '\"noise\": {\"count\"' '$tmp/fn$d--fused-noise.json' &&
                 grep -q '\"noise\": {\"count\"' '$tmp/fn$d.json' && [ $(launches "$tmp/fn$d--fused-noise.json" | cut -d. -f1) -lt $(launches "$tmp/fn$d.json" | cut -d. -f1) ]"
done
# --dtype bf16 on cuda: bf16 activations, the weight copies refreshed by the optimizer, the dry backend's memory
"$bin" run $small --backend cuda --dtype bf16 --algo auto --sigma 1 --op-times --out "$tmp/bf16.json" --dump "$tmp/bf16dump" 2>"$tmp/bf16.err"
check "a bf16 cuda run (auto, --op-times, --dump) exits 0: $(head -c 200 "$tmp/bf16.err")" test -s "$tmp/bf16.json"
check "its json says dtype bf16 and what is stored how" bash -c "grep -q '\"dtype\": \"bf16\"' '$tmp/bf16.json' && grep -q '\"storage\": \"bf16: activations' '$tmp/bf16.json'"
check "the optimizer refreshes the weight copies in its own pass: no cast_bf16 op in the steps, adam's there (or noise_adam's, where auto measured one pass faster)" \
    bash -c "! grep -q '\"cast_bf16\": {\"count\"' '$tmp/bf16.json' && grep -Eq '\"(noise_)?adam\": \{\"count\": [0-9]+' '$tmp/bf16.json'"
"$bin" run $small --backend dry --dtype bf16 --algo auto --sigma 1 --out "$tmp/bf16dry.json"
check "the bf16 cuda run's peak equals the dry bf16 run's ($(peak "$tmp/bf16.json"))" test "$(peak "$tmp/bf16.json")" = "$(peak "$tmp/bf16dry.json")"
check "its dump says dtype bf16 (the tensors are the fp32 masters and gradients)" grep -q '"dtype": "bf16"' "$tmp/bf16dump/step.json"

# attnbench: every attention variant timed alone (the emulator's times mean nothing; the rows, statuses and
# the json are what is checked here)
"$bin" attnbench --shape 1,70,2,1,64 --shape 1,21,2,1,7 --repeats 2 --out "$tmp/ab.json" >"$tmp/ab.out" 2>&1
check "attnbench (emulated) exits 0" test $? -eq 0
check "attnbench: 28 rows (2 shapes x 7 variants x forward and backward)" test "$(grep -c '"shape": ' "$tmp/ab.json")" -eq 28
check "attnbench: cuDNN's rows skipped on the emulator, saying why" test "$(grep '"kernel": "cudnn"' "$tmp/ab.json" | grep -c '"status": "skipped", "note": "this build has no cuDNN attention')" -eq 4
check "attnbench: all 12 of HS 64 measured (a median time each), the 32-row-warp variants forward and backward" bash -c "
    [ \$(grep '\"HS\": 64,' '$tmp/ab.json' | grep -c '\"status\": \"ok\", \"note\": null, \"ms_median\": [0-9]') -eq 12 ] &&
    [ \$(grep '\"HS\": 64,' '$tmp/ab.json' | grep -c '\"warp_rows\": 32, \"pass\": \"[fb]wd\", \"status\": \"ok\"') -eq 4 ]"
check "attnbench: HS 7 on the tensor cores skipped, saying why; its simt rows measured" bash -c "
    [ \$(grep -c '\"status\": \"skipped\", \"note\": \"HS 7: the tensor-core kernels take even head sizes up to 128\"' '$tmp/ab.json') -eq 8 ] &&
    [ \$(grep '\"HS\": 7,' '$tmp/ab.json' | grep -c '\"kernel\": \"simt\".*\"status\": \"ok\"') -eq 4 ]"
check "attnbench: the table has the 128-row tensor-core backward" grep -Eq '^B1-T70-NH2-NKV1-HS64 +bf16 +tc-128 +bwd +[0-9.]+' "$tmp/ab.out"
check "attnbench: the table has the forward with 32 rows a warp" grep -Eq '^B1-T70-NH2-NKV1-HS64 +bf16 +tc-128w32 +fwd +[0-9.]+' "$tmp/ab.out"
check "attnbench: meta names the device and the flop formula" grep -q '"device": "cuemu (cpu emulation of cuda)".*"note": "flops and bytes_analytic are dpprof_attention_fwd_cost' "$tmp/ab.json"
CUEMU_MEMORY_BYTES=$((64 << 20)) "$bin" attnbench --shape 1,4096,32,32,64 --shape 1,16,1,1,8 --repeats 1 --out "$tmp/aboom.json" >/dev/null 2>&1
rc=$?
check "attnbench: a shape that does not fit is oom, the next one is measured (exit $rc)" bash -c "[ $rc -eq 0 ] &&
    [ \$(grep '\"T\": 4096,' '$tmp/aboom.json' | grep -c '\"status\": \"oom\"') -eq 14 ] && [ \$(grep '\"T\": 16,' '$tmp/aboom.json' | grep -c '\"status\": \"ok\"') -eq 12 ]"
CUEMU_NO_DEVICE=1 "$bin" attnbench --out "$tmp/abnodev.json" 2>"$tmp/abnodev.err"
rc=$?
check "attnbench without a device: exit 2, a message, no file (got $rc)" bash -c "[ $rc -eq 2 ] && grep -q 'no GPU is visible' '$tmp/abnodev.err' && [ ! -e '$tmp/abnodev.json' ]"
# a device with less shared memory per block (CUEMU_SMEM_OPTIN=99K plays an sm_86 gpu): the 128-row
# tensor-core backward at HS 128 needs 102.5 KiB and cannot launch; attnbench keeps what it measured, marks
# the rest not_run and exits 1, and the error says what the kernel needs and the device allows
CUEMU_QUIET=1 CUEMU_SMEM_OPTIN=99K "$bin" attnbench --shape 1,40,2,2,128 --shape 1,16,1,1,8 --repeats 1 --out "$tmp/ab99.json" >/dev/null 2>&1
rc=$?
check "attnbench on a 99 KiB device: exit 1, json status error (got $rc)" bash -c "[ $rc -eq 1 ] && grep -q '^  \"status\": \"error\",' '$tmp/ab99.json'"
check "attnbench on a 99 KiB device: 7 rows measured, the 128-row backward failed naming the bytes, 20 not run" bash -c "
    [ \$(grep -c '\"status\": \"ok\"' '$tmp/ab99.json') -eq 7 ] && [ \$(grep -c '\"status\": \"not_run\"' '$tmp/ab99.json') -eq 20 ] &&
    grep '\"block_rows\": 128, \"warp_rows\": 16, \"pass\": \"bwd\"' '$tmp/ab99.json' | grep -q 'needs 104960 bytes of shared memory per block, this device allows 101376'"
# the default block (128 rows on sm_90+) falls back to 64 where the 128-row backward does not fit: a bf16
# step at HS 128 on the 99 KiB device runs
CUEMU_QUIET=1 CUEMU_SMEM_OPTIN=99K "$bin" run --preset tiny --hidden 256 --heads 2 --kv-heads 1 --ffn 64 --layers 1 --vocab 64 --seq 8 --batch 1 --steps 1 \
    --backend cuda --dtype bf16 --quiet --out "$tmp/run99.json" 2>"$tmp/run99.err"
rc=$?
check "a bf16 step with HS 128 on a 99 KiB device takes 64-row attention blocks and runs (got $rc)" bash -c "[ $rc -eq 0 ] && grep -q '\"status\": \"ok\"' '$tmp/run99.json'"
