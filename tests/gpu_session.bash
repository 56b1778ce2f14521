#!/usr/bin/env bash
# tests/gpu_session.bash - one call on a GPU machine: build, then the named steps in order, each
# bounded by what is left of one time budget, so the call returns (with everything measured so far packed
# in one file) before the machine's limit on a command kills it.
#
#   bash tests/gpu_session.bash [STEP ...]        (default: test attn bench:bf16-trainer)
#
# steps (each a make target of the Makefile; make gpu-run runs the plan of docs/gpu-runs.md: test attn
# bench:bf16-trainer bench:bf16-longctx bench:cudnn-trainer bench:cudnn-longctx peers, in about 10 minutes with the build):
#   test             make gpu-check-test        every op and whole DP step against the cpu reference
#   memcheck         make gpu-check-memcheck    the same under compute-sanitizer memcheck
#   racecheck        make gpu-check-racecheck   shared-memory races of the op groups
#   longctx          make gpu-check-longctx     the long-context configuration, fp32 and bf16
#   attn             make bench-attn            the attention kernels alone
#   bench[:SLICE]    make bench BENCH_ONLY=SLICE   experiments/bench.conf, or the configurations whose id
#                                               holds SLICE (bench alone: all of it, then attn and clipgrad)
#   clipgrad[:SLICE] make bench-clipgrad CLIPGRAD_ONLY=SLICE
#   study:NAME       make NAME BACKEND=cuda      one study (experiments/NAME.conf) timed on the GPU, into results/cuda-DEVICE/
#                    (a sweep resumes: a later call with results/ carried goes on where this one was cut)
#   peers[:SLICE]    make bench-peers PEERS_ONLY=SLICE   PyTorch and Opacus at the bench shapes (experiments/peers.py);
#                    Python wheels in .whl/ (opacus, say) are installed for it first, into /tmp/site
#   ncu-attn         Nsight Compute on the tensor-core attention kernels at the trainer shape
#   ncu-dp           Nsight Compute on the dp kernels in one flash_bk step at the trainer shape (bf16, fused clipped
#                    sum and noise): the gram norms' first 5 launches, the clipped sum's first 3, the noise's first 2;
#                    the gram norms' on the wgmma kernel (--wgmma) too
# environment:
#   BUDGET     seconds for the whole call, build included (default 560: the device runs a command 600 s)
#   RUN_STAMP  the DATE-TIME part of the data/ folders (default: now, UTC); give every call of a session
#              the same one so that their results land in one folder
#   OUT        where the packed results go (the device sets it; default results/gpu-session/out)
#   MIN_STEP   the least seconds left for a step to be started (default 60 for test and attn, 90 for
#              ncu-attn, 120 for the others); what it may take is what is left, less 20 s to pack
#   DPPROF_BIN the dpprof the bench targets and the device query run (default ./dpprof, as the Makefile's)
# RESUME=1 (make gpu-run sets it): a step that succeeded under the same RUN_STAMP (results/gpu-session/done/RUN_STAMP/STEP)
# is not run again, so a rerun resumes; the bench and peers steps resume within themselves anyway (what results/
# holds is not measured again)
# RUN_STAMP_FILE (make gpu-run sets it): the file that keeps the run's stamp. Each step that succeeds is written to
# data/bench/RUN_STAMP-DEVICE/gpu-run.txt too ("plan STEP ...", then "done STEP SECONDS DATE (BUILD)"), which is
# committed with the results: make gpu-run in a fresh clone, on the same kind of GPU, resumes the newest run of the
# same plan that has steps left (GPU_RUN_NEW=1: a new run all the same)
# what comes back: $OUT/gpu-session.tar.gz (data/bench/RUN_STAMP-*, data/gpu-check/RUN_STAMP-*, the raw
# results/bench*/ and results/gpu-check/ folders, each step's log) and $OUT/gpu-session.txt (the table
# below). unpack it in the repository root: `tar xzf .../gpu-session.tar.gz`; a later call that carries
# results/bench resumes the sweep where this one stopped. without a GPU every step says so and is skipped;
# the exit status is 1 when a step failed or a step name is unknown (2, before anything runs).
set -u
cd "$(dirname "$0")/.."
start=$SECONDS
budget=${BUDGET:-560}
case $budget in '' | *[!0-9]*) echo "gpu_session: BUDGET=$budget is not a whole number of seconds" >&2; exit 2 ;; esac
case ${MIN_STEP-0} in '' | *[!0-9]*) echo "gpu_session: MIN_STEP=$MIN_STEP is not a whole number of seconds" >&2; exit 2 ;; esac
export DPPROF_BIN=${DPPROF_BIN:-./dpprof}
# RUN_STAMP_FILE (make gpu-run sets it): the run's stamp, kept for the rerun; where it is empty the run is the
# newest one of this plan on this GPU committed in data/bench/*/gpu-run.txt with steps left, else a new one
if [ -n "${RUN_STAMP_FILE:-}" ] && [ -s "$RUN_STAMP_FILE" ]; then RUN_STAMP=$(cat "$RUN_STAMP_FILE"); fi
export RUN_STAMP=${RUN_STAMP:-$(date -u +%Y-%m-%d-%H%M)}
case $RUN_STAMP in *[!0-9-]* | '') echo "gpu_session: RUN_STAMP=$RUN_STAMP: expected DATE-TIME as 2026-11-26-1405" >&2; exit 2 ;; esac
out=${OUT:-results/gpu-session/out}
logs=results/gpu-session
[ $# -gt 0 ] || set -- test attn bench:bf16-trainer

# the least time a step needs to be worth starting (seconds); what it may take is what is left
need() {
    [ -n "${MIN_STEP:-}" ] && { echo "$MIN_STEP"; return; }
    case $1 in
    test | attn) echo 60 ;;
    ncu-attn | ncu-dp) echo 90 ;;
    *) echo 120 ;;
    esac
}
for s in "$@"; do
    case $s in
    test | memcheck | racecheck | longctx | attn | ncu-attn | ncu-dp | bench | bench:?* | clipgrad | clipgrad:?* | peers | peers:?*) ;;
    study:?*) [ -f "experiments/${s#study:}.conf" ] || { echo "gpu_session: step '$s': there is no experiments/${s#study:}.conf" >&2; exit 2; } ;;
    *) echo "gpu_session: unknown step '$s' (test memcheck racecheck longctx attn bench[:SLICE] clipgrad[:SLICE] peers[:SLICE] study:NAME ncu-attn ncu-dp)" >&2; exit 2 ;;
    esac
done

mkdir -p "$logs" "$out"
# the peers' Python packages that the machine lacks, carried as wheels in .whl/
case " $* " in *" peers"*)
    wheels=()
    for w in .whl/*.whl; do case $w in *cudnn_frontend*) ;; *) [ -f "$w" ] && wheels+=("$w") ;; esac; done
    if [ ${#wheels[@]} -gt 0 ]; then
        python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site "${wheels[@]}" &&
            export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
    fi ;;
esac
table=$logs/table.txt
: >"$table"
failed=0
row() { printf '%-24s %-34s %6ds\n' "$1" "$2" "$3" | tee -a "$table"; }

# everything measured so far, in one file, however the call ends
pack() {
    local dirs=()
    for d in data/bench/"$RUN_STAMP"-* data/gpu-check/"$RUN_STAMP"-* results/bench results/bench-attn results/bench-clipgrad results/bench-peers results/gpu-check results/cuda-* "$logs"; do
        [ -e "$d" ] && dirs+=("$d")
    done
    cp "$table" "$out/gpu-session.txt" 2>/dev/null
    tar czf "$out/gpu-session.tar.gz" --exclude="$out" --exclude="$logs/out" "${dirs[@]}" 2>/dev/null
    echo "gpu_session: packed ${dirs[*]} into $out/gpu-session.tar.gz"
}
trap pack EXIT

left() { echo $((budget - (SECONDS - start))); }
# a command within what is left of the budget, never past it: not started where nothing is left (timeout 0 would
# set no limit at all), status 124 then as when cut
bounded() {
    local l
    l=$(left)
    [ "$l" -gt 0 ] || return 124
    timeout "$l" "$@"
}

# the build: the device machine has no libstb-dev; the header can travel in .carry/include (Makefile)
if [ ! -f /usr/include/stb/stb_image_write.h ] && [ ! -f .carry/include/stb/stb_image_write.h ]; then
    echo "gpu_session: stb_image_write.h is missing here: on the machine that has libstb-dev run" >&2
    echo "  mkdir -p .carry/include && cp -r /usr/include/stb .carry/include/   and carry .carry" >&2
    row build "failed (no stb_image_write.h)" 0
    exit 1
fi
# cuDNN's attention needs its frontend's headers: a wheel of nvidia-cudnn-frontend from PyPI carried in .whl/ (any
# Python version's: only its include/ is used), unpacked where the Makefile looks (build/cudnn-frontend/include)
fe=$(ls .whl/nvidia_cudnn_frontend-*.whl 2>/dev/null | head -1)
if [ -n "$fe" ] && [ ! -f build/cudnn-frontend/include/cudnn_frontend.h ]; then
    mkdir -p build/cudnn-frontend &&
        python3 -c 'import sys, zipfile; z = zipfile.ZipFile(sys.argv[1]); z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("include/")])' "$fe" build/cudnn-frontend ||
        echo "gpu_session: could not unpack $fe: the build has no cuDNN attention" >&2
fi
t0=$SECONDS
if [ "$(left)" -le 0 ]; then row build "skipped (BUDGET=$budget)" 0; exit 1; fi
built=ok
rc=0
bounded make -j"$(nproc)" dpprof build/tests/test_gpu >"$logs/build.log" 2>&1 || rc=$?
if [ $rc != 0 ]; then
    # an NCCL or a cuDNN that does not build or link (the collectives between ranks; cuDNN's attention) must not cost
    # the rest: once more without the one the log names, then without both, each within what is left (a build cut by
    # the budget is not tried again)
    if [ $rc != 124 ] && grep -qi cudnn "$logs/build.log" && bounded make -j"$(nproc)" dpprof build/tests/test_gpu CUDNN_FRONTEND= >"$logs/build-without-cudnn.log" 2>&1; then
        built="ok without cuDNN (its failure: $logs/build.log)"
    elif [ $rc != 124 ] && grep -qi "nccl\|cudnn" "$logs/build.log" && bounded make -j"$(nproc)" dpprof build/tests/test_gpu NCCL_DEF= NCCL_LIBS= CUDNN_FRONTEND= >"$logs/build-without-nccl.log" 2>&1; then
        built="ok without NCCL and cuDNN (the failure: $logs/build.log)"
    else
        tail -20 "$logs/build.log"
        if [ $rc = 124 ]; then row build "cut at ${budget}s ($logs/build.log)" $((SECONDS - t0)); else row build "failed ($logs/build.log)" $((SECONDS - t0)); fi
        exit 1
    fi
fi
row build "$built" $((SECONDS - t0))
gpu=1
if ! dev=$($DPPROF_BIN devices 2>&1); then gpu=0; fi
echo "$dev" | head -3

# the device's name as the data folders spell it (the Makefile's RUN_TAG), and the plan: the steps asked
devtag=$(echo "$dev" | head -1 | sed 's/^0: //; s/,.*//; s/[^A-Za-z0-9.-]/_/g')
plan="$*"
build_id=$($DPPROF_BIN version 2>/dev/null | sed -n 's/^dpprof [^ ]* (\([^;)]*\).*/\1/p')
if [ -n "${RUN_STAMP_FILE:-}" ]; then
    # the run to go on with: the newest committed record of this plan on this GPU decides (steps left: resumed)
    if [ ! -s "$RUN_STAMP_FILE" ] && [ $gpu = 1 ] && [ -z "${GPU_RUN_NEW:-}" ]; then
        for rec in $(ls -r data/bench/*-"$devtag"/gpu-run.txt 2>/dev/null); do
            grep -qxF "plan $plan" "$rec" || continue
            left_steps=()
            for s in "$@"; do grep -q "^done $s " "$rec" || left_steps+=("$s"); done
            [ ${#left_steps[@]} -gt 0 ] || break
            case $(basename "${rec%/gpu-run.txt}") in [0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]-[0-9][0-9][0-9][0-9]-*) ;; *) continue ;; esac
            RUN_STAMP=$(basename "${rec%/gpu-run.txt}" | cut -c1-15)
            mkdir -p "$logs/done/$RUN_STAMP"
            awk '$1 == "done" { print $2 }' "$rec" | while read -r s; do touch "$logs/done/$RUN_STAMP/${s/:/-}"; done
            echo "gpu_session: resuming the run in ${rec%/gpu-run.txt}: ${#left_steps[@]} steps left (${left_steps[*]})"
            break
        done
    fi
    [ $gpu = 0 ] || echo "$RUN_STAMP" >"$RUN_STAMP_FILE" # a machine without a GPU starts no run
fi
# a step done, in the run's committed record
record() {
    [ -n "${RUN_STAMP_FILE:-}" ] || return 0
    local d=data/bench/$RUN_STAMP-$devtag rec
    rec=$d/gpu-run.txt
    mkdir -p "$d"
    [ -f "$rec" ] || printf '# make gpu-run: the plan, and each step done with its seconds, its date and the build that ran it (commit,\n# sources sha256, state). make gpu-run on this kind of GPU, in a fresh clone, resumes at the steps not done\nplan %s\n' "$plan" >"$rec"
    grep -q "^done $1 " "$rec" || echo "done $1 $2s $(date -u +%Y-%m-%dT%H:%MZ) (${build_id:-build unknown})" >>"$rec"
}
done_dir=$logs/done/$RUN_STAMP
for s in "$@"; do
    t0=$SECONDS
    if [ $gpu = 0 ]; then row "$s" "skipped (no GPU)" 0; continue; fi
    if [ -n "${RESUME:-}" ] && [ -f "$done_dir/${s/:/-}" ]; then row "$s" "done before ($RUN_STAMP)" 0; continue; fi
    l=$(left)
    if [ "$l" -lt "$(need "${s%%:*}")" ]; then row "$s" "skipped (${l}s left of ${budget}s)" 0; continue; fi
    # make's own per-part limits inside what is left, with 20 s to pack
    lim=$((l > 25 ? l - 20 : 5))
    per=$((lim < 540 ? lim : 540))
    log=$logs/${s/:/-}.log
    case $s in
    test | memcheck | racecheck | longctx) cmd=(make --no-print-directory gpu-check-"$s" GPU_CHECK_TIMEOUT=$per) ;;
    attn) cmd=(make --no-print-directory bench-attn) ;;
    bench) cmd=(make --no-print-directory bench BENCH_TIMEOUT=$per) ;;
    bench:*) cmd=(make --no-print-directory bench BENCH_ONLY="${s#bench:}" BENCH_TIMEOUT=$per) ;;
    clipgrad) cmd=(make --no-print-directory bench-clipgrad BENCH_TIMEOUT=$per) ;;
    clipgrad:*) cmd=(make --no-print-directory bench-clipgrad CLIPGRAD_ONLY="${s#clipgrad:}" BENCH_TIMEOUT=$per) ;;
    peers) cmd=(make --no-print-directory bench-peers BENCH_TIMEOUT=$per) ;;
    study:*) cmd=(make --no-print-directory "${s#study:}" BACKEND=cuda BENCH_TIMEOUT=$per) ;;
    peers:*) cmd=(make --no-print-directory bench-peers PEERS_ONLY="${s#peers:}" BENCH_TIMEOUT=$per) ;;
    ncu-attn)
        d=data/gpu-check/$RUN_STAMP-$devtag
        mkdir -p "$d"
        # attnbench runs each tensor-core variant (64-, then 128-row blocks, with 16 and then 32 query rows a warp)
        # as a warm-up and a timed call: 24 launches are both calls of fwd, bkv and bq in each
        cmd=(ncu --clock-control none -k 'regex:attn_(fwd|bkv|bq)_tc' --launch-count 24 --section SpeedOfLight --section Occupancy
            --section LaunchStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats
            $DPPROF_BIN attnbench --shape 8,1024,32,32,64 --repeats 1 --out "$d/ncu-attn-attnbench.json")
        ;;
    ncu-dp)
        d=data/gpu-check/$RUN_STAMP-$devtag
        mkdir -p "$d"
        # one ncu a kernel family, each over one step (the launches past the count run unprofiled): the backward
        # makes the head's and the last layer's gram norms first (down, gate+up, o, q+k+v: 5 launches), the clip
        # phase the clipped sums, the optimizer the noise; the gram norms and the clipped sums again with warps of 64 x 32
        # (--dp-warp-tile 32) to compare with the default 64 x 64, and the gram norms on the wgmma kernel (--wgmma, the
        # default on compute capability 9.0; the others run with --no-wgmma so that the gram norms take mma.sync)
        cmd=(bash -c 'bin=$1 d=$2; shift 2; for kc in "dp_sqnorm_gram_tc 5" "wgrad_tc 3" "model_noise_scale 2" "dp_sqnorm_gram_tc 5 32" "wgrad_tc 3 32" "dp_sqnorm_gram_wg 5 wgmma"; do
            set -- $kc
            case ${3-} in 32) x="--dp-warp-tile 32 --no-wgmma" ;; wgmma) x=--wgmma ;; *) x=--no-wgmma ;; esac
            ncu --clock-control none -k "regex:$1" --launch-count "$2" --section SpeedOfLight --section Occupancy --section LaunchStats \
                --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis --section WarpStateStats \
                "$bin" run --preset trainer-1b --seq 1024 --batch 8 --physical-batch 8 --algo flash_bk --dtype bf16 --sigma 1 \
                --steps 1 --warmup 0 --fused-clipgrad --fused-noise $x --quiet --out "$d/ncu-dp-$1${3:+-$3}.json" || exit
        done' _ "$DPPROF_BIN" "$d")
        ;;
    esac
    rc=0
    l=$(left)
    [ "$lim" -lt "$l" ] || lim=$((l > 1 ? l - 1 : 0)) # never past the budget
    if [ "$lim" -gt 0 ]; then timeout "$lim" "${cmd[@]}" >"$log" 2>&1 || rc=$?; else rc=124; fi
    case $s in ncu-attn | ncu-dp) cp "$log" "$d/$s.txt" ;; esac
    if [ $rc = 0 ]; then
        mkdir -p "$done_dir" && touch "$done_dir/${s/:/-}"
        record "$s" $((SECONDS - t0))
        row "$s" ok $((SECONDS - t0))
    else
        failed=1
        if [ $rc = 124 ]; then row "$s" "cut at ${lim}s ($log)" $((SECONDS - t0)); else row "$s" "failed, status $rc ($log)" $((SECONDS - t0)); fi
        grep -E '^FAIL' "$log" | head -10
    fi
    # the lines worth reading in the reply
    grep -hE '^# [0-9]+ passed|^make [a-z-]+: FAILED|ERROR SUMMARY' "$log" | tail -3
done
[ -f results/bench/summary.txt ] && tail -n 30 results/bench/summary.txt
echo "--- $RUN_STAMP, $((SECONDS - start))s of ${budget}s"
cat "$table"
exit $failed
