#!/usr/bin/env bash
# tests/test_gpu_session.sh - tests/gpu_session.bash, the bounded-time GPU run, where there is
# none (or, on a GPU, with too little budget to start a step): bad arguments refused before anything
# runs, the build, every step reported and skipped, the results packed, the exit status.
# run from the repository root after make (tests/run.sh does).
cd "$(dirname "$0")/.." || exit 1
. tests/lib.bash
s=tests/gpu_session.bash

out=$(bash $s test bogus 2>&1); rc=$?
check "an unknown step is refused with status 2, naming it" test "$rc" = 2 -a -n "$(echo "$out" | grep -F "unknown step 'bogus'")"
out=$(bash $s test study:nosuch 2>&1); rc=$?
check "a study step without its experiment file is refused with status 2, naming it" test "$rc" = 2 -a -n "$(echo "$out" | grep -F "no experiments/nosuch.conf")"
out=$(BUDGET=5m bash $s test 2>&1); rc=$?
check "a BUDGET that is not whole seconds is refused with status 2, naming it" test "$rc" = 2 -a -n "$(echo "$out" | grep -F 'BUDGET=5m')"
out=$(RUN_STAMP='x;y' bash $s test 2>&1); rc=$?
check "a RUN_STAMP that is not DATE-TIME is refused with status 2, naming it" test "$rc" = 2 -a -n "$(echo "$out" | grep -F 'RUN_STAMP=x;y')"
check "nothing was made by the refusals" test ! -e "$tmp/out"

# steps that need 120 s under a budget of 100: skipped for time on a GPU, for the GPU without one
out=$(OUT=$tmp/out BUDGET=100 RUN_STAMP=2000-01-01-0000 bash $s bench:bf16-trainer memcheck clipgrad:trainer ncu-dp 2>&1); rc=$?
echo "$out" | sed 's/^/  | /'
check "without a step to run, the call succeeds" test "$rc" = 0
check "the build is reported" grep -qE '^build +ok' <<<"$out"
n=$(grep -cE '^(bench:bf16-trainer|memcheck|clipgrad:trainer|ncu-dp) +skipped \((no GPU|[0-9]+s left of 100s)\)' "$tmp/out/gpu-session.txt")
check "the table that comes back reports every step as skipped, with the reason ($n of 4)" test "$n" = 4
check "the results are packed, with the table and the build log" \
    bash -c "tar tzf '$tmp/out/gpu-session.tar.gz' | grep -qx 'results/gpu-session/table.txt' && tar tzf '$tmp/out/gpu-session.tar.gz' | grep -qx 'results/gpu-session/build.log'"
check "the pack does not hold itself" bash -c "! tar tzf '$tmp/out/gpu-session.tar.gz' | grep -q gpu-session.tar.gz"

out=$(OUT=$tmp/out0 BUDGET=0 bash $s test 2>&1); rc=$?
check "no budget: status 1, the build reported skipped, still packed" \
    test "$rc" = 1 -a -n "$(grep -E '^build +skipped \(BUDGET=0\)' <<<"$out")" -a -f "$tmp/out0/gpu-session.tar.gz"

# a stand-in for dpprof that claims a GPU: the steps run, a failure and a step cut by the budget are
# reported, and what they left is packed. bench-attn writes to data/bench/RUN_STAMP-Fake_GPU: removed after,
fake=$tmp/fake-dpprof
cat >"$fake" <<'SH'
#!/usr/bin/env bash
case $1 in
devices) echo "0: Fake GPU, sm 9.0, 1 SMs" ;;
attnbench) echo "attnbench stand-in"; sleep "${FAKE_SLEEP:-0}"; exit "${FAKE_RC:-0}" ;;
*) exit 2 ;;
esac
SH
chmod +x "$fake"
stamp=2000-01-01-0001
# make bench-attn also leaves the stand-in's output in results/bench-attn: removed after, if it is still that
trap 'rm -rf "$tmp" data/bench/$stamp-Fake_GPU; grep -qs "attnbench stand-in" results/bench-attn/attnbench.txt && rm -rf results/bench-attn' EXIT
out=$(OUT=$tmp/o1 DPPROF_BIN=$fake RUN_STAMP=$stamp MIN_STEP=1 bash $s attn 2>&1); rc=$?
check "a step that succeeds: ok, status 0" test "$rc" = 0 -a -n "$(grep -E '^attn +ok' "$tmp/o1/gpu-session.txt")"
check "its results are packed" bash -c "tar tzf '$tmp/o1/gpu-session.tar.gz' | grep -qx 'data/bench/$stamp-Fake_GPU/attn/attnbench.txt'"
out=$(OUT=$tmp/o2 DPPROF_BIN=$fake RUN_STAMP=$stamp MIN_STEP=1 FAKE_RC=3 bash $s attn 2>&1); rc=$?
check "a step that fails: reported with its status, the call's status 1" \
    test "$rc" = 1 -a -n "$(grep -E '^attn +failed, status [1-9]' "$tmp/o2/gpu-session.txt")"
t0=$SECONDS
out=$(OUT=$tmp/o3 DPPROF_BIN=$fake RUN_STAMP=$stamp MIN_STEP=16 BUDGET=20 FAKE_SLEEP=60 bash $s attn test 2>&1); rc=$?
check "a step longer than the budget is cut at what was left ($((SECONDS - t0)) s of 20)" \
    test "$rc" = 1 -a $((SECONDS - t0)) -lt 20 -a -n "$(grep -E '^attn +cut at [0-9]+s' "$tmp/o3/gpu-session.txt")"
check "the step after it is skipped for time, and the pack is there" \
    test -n "$(grep -E '^test +skipped \([0-9]+s left of 20s\)' "$tmp/o3/gpu-session.txt")" -a -f "$tmp/o3/gpu-session.tar.gz"

# ncu-dp under a stand-in ncu that logs its arguments and runs the program it was given: five runs of one
# flash_bk step (gram norms, clipped sums, noise, then the first two with warps of 64 x 32), each with its
# kernel regex and launch count, and the log copied beside them into data/gpu-check/RUN_STAMP-Fake_GPU (removed
# after, with the bench folder)
mkdir -p "$tmp/bin"
cat >"$tmp/bin/ncu" <<'SH'
#!/usr/bin/env bash
echo "ncu $*" >>"$NCU_LOG"
while [ $# -gt 0 ] && [ "$1" != "$FAKE_BIN" ]; do shift; done
exec "$@"
SH
chmod +x "$tmp/bin/ncu"
sed -i 's/^\*) exit 2 ;;$/run) echo "run $*" ;;\n*) exit 2 ;;/' "$fake"
trap 'rm -rf "$tmp" data/bench/$stamp-Fake_GPU data/gpu-check/$stamp-Fake_GPU; grep -qs "attnbench stand-in" results/bench-attn/attnbench.txt && rm -rf results/bench-attn' EXIT
out=$(PATH="$tmp/bin:$PATH" NCU_LOG=$tmp/ncu.log FAKE_BIN=$fake OUT=$tmp/o4 DPPROF_BIN=$fake RUN_STAMP=$stamp MIN_STEP=1 bash $s ncu-dp 2>&1); rc=$?
check "ncu-dp: ok, status 0" test "$rc" = 0 -a -n "$(grep -E '^ncu-dp +ok' "$tmp/o4/gpu-session.txt" 2>/dev/null)"
check "ncu-dp: ncu ran six times, on the gram norms (5 launches) and the clipped sums (3) with both warp tiles, the noise (2), the gram norms on wgmma (5)" \
    test "$(grep -c . "$tmp/ncu.log" 2>/dev/null)" = 6 -a "$(grep -cE 'regex:dp_sqnorm_gram_tc --launch-count 5 ' "$tmp/ncu.log")" = 2 \
    -a "$(grep -cE -- 'regex:dp_sqnorm_gram_wg --launch-count 5 .* --wgmma --quiet --out [^ ]*/ncu-dp-dp_sqnorm_gram_wg-wgmma.json' "$tmp/ncu.log")" = 1 \
    -a "$(grep -cE 'regex:wgrad_tc --launch-count 3 ' "$tmp/ncu.log")" = 2 -a -n "$(grep -E 'regex:model_noise_scale --launch-count 2 ' "$tmp/ncu.log")" \
    -a "$(grep -cE -- '--dp-warp-tile 32 --no-wgmma --quiet --out [^ ]*/ncu-dp-(wgrad_tc|dp_sqnorm_gram_tc)-32.json' "$tmp/ncu.log")" = 2 \
    -a "$(grep -cE -- 'regex:dp_sqnorm_gram_tc .* --no-wgmma --quiet' "$tmp/ncu.log")" = 2
check "ncu-dp: each over one flash_bk step at the trainer shape in bf16, with the fused clipped sum and noise" \
    test "$(grep -c -- "run --preset trainer-1b --seq 1024 --batch 8 --physical-batch 8 --algo flash_bk --dtype bf16 --sigma 1 --steps 1 --warmup 0 --fused-clipgrad --fused-noise" "$tmp/ncu.log")" = 6
check "ncu-dp: the step's log is packed beside the results" \
    bash -c "tar tzf '$tmp/o4/gpu-session.tar.gz' | grep -qx 'data/gpu-check/$stamp-Fake_GPU/ncu-dp.txt'"
# ncu-attn under the same stand-in: one attnbench at the trainer shape, 24 launches (both calls of the forward,
# dk/dv and dq kernels with 64- and 128-row blocks, each with 16 and with 32 query rows a warp)
out=$(PATH="$tmp/bin:$PATH" NCU_LOG=$tmp/ncu-attn.log FAKE_BIN=$fake OUT=$tmp/o5 DPPROF_BIN=$fake RUN_STAMP=$stamp MIN_STEP=1 bash $s ncu-attn 2>&1); rc=$?
check "ncu-attn: ok, one ncu over attnbench at the trainer shape with the attention kernels' 24 launches" \
    test "$rc" = 0 -a "$(grep -c . "$tmp/ncu-attn.log" 2>/dev/null)" = 1 \
    -a -n "$(grep -E -- "-k regex:attn_\(fwd\|bkv\|bq\)_tc --launch-count 24 .* attnbench --shape 8,1024,32,32,64 --repeats 1 " "$tmp/ncu-attn.log")"

# make gpu-run: the plan in one command, the steps ordered by what they are worth, BUDGET passed on
out=$(make -n --no-print-directory gpu-run BUDGET=77 GPU_RUN_STAMP_FILE="$tmp/gr/stamp" 2>&1)
check "make gpu-run: the session's steps in order (test, attn, the bench at each shape on both attentions, peers, the checkpoint and dram studies) under BUDGET=77" \
    grep -qE 'BUDGET=77 RUN_STAMP_FILE=.* bash tests/gpu_session.bash test attn bench:bf16-trainer bench:cudnn-trainer clipgrad:trainer bench:bf16-lora bench:cudnn-lora bench:bf16-longctx bench:cudnn-longctx peers study:checkpoint study:dram$' <<<"$out"
out=$(make -n --no-print-directory gpu-run GPU_RUN_STAMP_FILE="$tmp/gr/stamp" 2>&1)
check "make gpu-run: BUDGET is 540 s by default" grep -qE 'BUDGET=540 RUN_STAMP_FILE=' <<<"$out"
# run (the stand-in GPU): a step done under the run's stamp is not run again; the rest come in the plan's order,
# each skipped for time (MIN_STEP above the budget), the budget the session counts being make's
gstamp=2000-01-01-0002
mkdir -p "$tmp/gr" results/gpu-session/done/$gstamp && echo $gstamp >"$tmp/gr/stamp" && touch results/gpu-session/done/$gstamp/test
trap 'rm -rf "$tmp" data/bench/$stamp-Fake_GPU data/gpu-check/$stamp-Fake_GPU results/gpu-session/done/$gstamp; grep -qs "attnbench stand-in" results/bench-attn/attnbench.txt && rm -rf results/bench-attn' EXIT
out=$(OUT=$tmp/o6 DPPROF_BIN=$fake MIN_STEP=1000 make --no-print-directory gpu-run BUDGET=100 GPU_RUN_STAMP_FILE="$tmp/gr/stamp" 2>&1); rc=$?
echo "$out" | sed 's/^/  | /'
order=$(grep -oE '^(test|attn|bench:(bf16|cudnn)-(trainer|lora|longctx)|clipgrad:trainer|peers|study:(checkpoint|dram)) ' "$tmp/o6/gpu-session.txt" 2>/dev/null | tr -d ' ' | tr '\n' ' ')
check "make gpu-run: status 0, the steps reported in the plan's order ($order)" test "$rc" = 0 -a "$order" = "test attn bench:bf16-trainer bench:cudnn-trainer clipgrad:trainer bench:bf16-lora bench:cudnn-lora bench:bf16-longctx bench:cudnn-longctx peers study:checkpoint study:dram "
check "make gpu-run: the step done before under the run's stamp is not run again" grep -qE "^test +done before \($gstamp\)" "$tmp/o6/gpu-session.txt"
n=$(grep -cE '^(attn|bench:(bf16|cudnn)-(trainer|lora|longctx)|clipgrad:trainer|peers|study:(checkpoint|dram)) +skipped \([0-9]+s left of 100s\)' "$tmp/o6/gpu-session.txt")
check "make gpu-run: BUDGET=100 reaches the session ($n of 11 steps skipped for time, of 100 s)" test "$n" = 11
check "make gpu-run: the stamp file is kept for the rerun" test "$(cat "$tmp/gr/stamp")" = $gstamp

# a run across windows: each step done is written to the run's committed record, data/bench/STAMP-DEVICE/gpu-run.txt,
# and make gpu-run in a fresh clone (no stamp file) resumes the newest record of the same plan on the same GPU
# that has steps left. the records here are the stand-in's (Fake_GPU), removed after
plan="test attn bench:bf16-trainer bench:cudnn-trainer clipgrad:trainer bench:bf16-lora bench:cudnn-lora bench:bf16-longctx bench:cudnn-longctx peers study:checkpoint study:dram"
r3=data/bench/2000-01-01-0003-Fake_GPU r4=data/bench/2000-01-01-0004-Fake_GPU r5=data/bench/2000-01-01-0005-Fake_GPU r6=data/bench/2000-01-01-0006-Other_GPU
trap 'rm -rf "$tmp" data/bench/$stamp-Fake_GPU data/gpu-check/$stamp-Fake_GPU results/gpu-session/done/$gstamp results/gpu-session/done/2000-01-01-000[13-7] $r3 $r4 $r5 $r6 data/bench/2000-01-01-0007-Fake_GPU data/bench/zz-not-a-stamp-Fake_GPU; grep -qs "attnbench stand-in" results/bench-attn/attnbench.txt && rm -rf results/bench-attn' EXIT
# the step that succeeds is recorded, with its seconds, date and build
echo 2000-01-01-0007 >"$tmp/gr/s7"
out=$(OUT=$tmp/o7 DPPROF_BIN=$fake MIN_STEP=1 make --no-print-directory gpu-run GPU_RUN_STEPS=attn BUDGET=100 GPU_RUN_STAMP_FILE="$tmp/gr/s7" 2>&1); rc=$?
check "a step done is recorded in the run's folder: the plan, then 'done attn SECONDS DATE (build)'" bash -c \
    "[ $rc = 0 ] && grep -qx 'plan attn' data/bench/2000-01-01-0007-Fake_GPU/gpu-run.txt && grep -qE '^done attn [0-9]+s 20[0-9-]+T[0-9:]+Z \(build unknown\)$' data/bench/2000-01-01-0007-Fake_GPU/gpu-run.txt"
# a committed record with two steps done, one of a plan that is not this one, one of another GPU, and one older
mkdir -p $r3 $r4 $r5 $r6
printf '# a record\nplan %s\ndone test 7s 2000-01-01T00:03Z (x)\ndone attn 9s 2000-01-01T00:04Z (x)\n' "$plan" >$r3/gpu-run.txt
printf 'plan test attn\ndone test 7s 2000-01-01T00:04Z (x)\n' >$r4/gpu-run.txt
printf 'plan %s\ndone test 7s 2000-01-01T00:06Z (x)\n' "$plan" >$r6/gpu-run.txt
mkdir -p data/bench/zz-not-a-stamp-Fake_GPU && printf 'plan %s\n' "$plan" >data/bench/zz-not-a-stamp-Fake_GPU/gpu-run.txt # sorts first, is no run
: >"$tmp/gr/s3"
out=$(OUT=$tmp/o8 DPPROF_BIN=$fake MIN_STEP=1000 make --no-print-directory gpu-run BUDGET=100 GPU_RUN_STAMP_FILE="$tmp/gr/s3" 2>&1); rc=$?
echo "$out" | sed 's/^/  | /'
check "a fresh clone resumes the committed run of this plan on this GPU: its stamp kept, 10 steps left named" bash -c \
    "[ $rc = 0 ] && [ \"\$(cat '$tmp/gr/s3')\" = 2000-01-01-0003 ] && grep -qF 'resuming the run in $r3: 10 steps left (bench:bf16-trainer ' <<<\"\$1\"" _ "$out"
n=$(grep -cE '^(test|attn) +done before \(2000-01-01-0003\)' "$tmp/o8/gpu-session.txt" 2>/dev/null)
check "...its steps done are not run again ($n of 2)" test "$n" = 2
# the newest record of the plan is complete: a new run, even with an older one that has steps left
{ printf 'plan %s\n' "$plan"; for s in $plan; do echo "done $s 1s 2000-01-01T00:05Z (x)"; done; } >$r5/gpu-run.txt
: >"$tmp/gr/s5"
out=$(OUT=$tmp/o9 DPPROF_BIN=$fake MIN_STEP=1000 make --no-print-directory gpu-run BUDGET=100 GPU_RUN_STAMP_FILE="$tmp/gr/s5" 2>&1); rc=$?
check "the newest run of the plan is complete: a new run (stamp $(cat "$tmp/gr/s5"))" bash -c \
    "[ $rc = 0 ] && ! grep -q resuming <<<\"\$1\" && ! grep -q 'done before' '$tmp/o9/gpu-session.txt' && [ \"\$(cat '$tmp/gr/s5')\" != 2000-01-01-0005 ] && [ \"\$(cat '$tmp/gr/s5')\" != 2000-01-01-0003 ]" _ "$out"
rm -rf $r5
: >"$tmp/gr/sn"
out=$(OUT=$tmp/o10 DPPROF_BIN=$fake MIN_STEP=1000 GPU_RUN_NEW=1 make --no-print-directory gpu-run BUDGET=100 GPU_RUN_STAMP_FILE="$tmp/gr/sn" 2>&1); rc=$?
check "GPU_RUN_NEW=1: a new run, the committed one left" bash -c "[ $rc = 0 ] && ! grep -q resuming <<<\"\$1\" && [ \"\$(cat '$tmp/gr/sn')\" != 2000-01-01-0003 ]" _ "$out"
# without a GPU nothing is run and no run is started: the stamp file stays empty
: >"$tmp/gr/s0"
out=$(OUT=$tmp/o11 make --no-print-directory gpu-run BUDGET=100 GPU_RUN_STAMP_FILE="$tmp/gr/s0" 2>&1); rc=$?
check "make gpu-run without a GPU: status 0, every step skipped, no run started (the stamp file empty)" bash -c \
    "[ $rc = 0 ] && [ ! -s '$tmp/gr/s0' ] && [ \$(grep -c 'skipped (no GPU)' '$tmp/o11/gpu-session.txt') = 12 ]"

# the budget bounds the build too: a build that runs past it is cut there and not tried again (timeout 0 would be no
# limit), so the call returns within it; a stand-in make names NCCL, as a link that fails on it would
mkdir -p "$tmp/fakebin"
cat >"$tmp/fakebin/make" <<'SH'
#!/usr/bin/env bash
echo "undefined reference to ncclGetErrorString"
sleep "${FAKE_MAKE_SLEEP:-30}"
exit 2
SH
chmod +x "$tmp/fakebin/make"
rm -f results/gpu-session/build-without-nccl.log results/gpu-session/build-without-cudnn.log
t0=$SECONDS
out=$(PATH="$tmp/fakebin:$PATH" OUT=$tmp/ob BUDGET=4 RUN_STAMP=2000-01-01-0002 bash tests/gpu_session.bash test 2>&1); rc=$?
check "a build past the budget: cut at it ($((SECONDS - t0)) s of 4), not tried again without NCCL, status 1" \
    bash -c "[ $rc = 1 ] && [ $((SECONDS - t0)) -lt 9 ] && grep -qE '^build +cut at 4s' <<<\"\$1\" && [ ! -e results/gpu-session/build-without-nccl.log ]" _ "$out"
t0=$SECONDS
out=$(PATH="$tmp/fakebin:$PATH" FAKE_MAKE_SLEEP=0 OUT=$tmp/ob2 BUDGET=6 RUN_STAMP=2000-01-01-0002 bash tests/gpu_session.bash test 2>&1); rc=$?
check "a build that fails naming NCCL with time left: tried again without it, within the budget ($((SECONDS - t0)) s of 6)" \
    bash -c "[ $rc = 1 ] && [ $((SECONDS - t0)) -lt 9 ] && [ -e results/gpu-session/build-without-nccl.log ]"
rm -f results/gpu-session/build-without-nccl.log results/gpu-session/build-without-cudnn.log
