#!/usr/bin/env bash
# tests/gpu_ranks.bash - the cuda backend's ranks on a machine with several GPUs, one process a GPU over NCCL:
# for ZeRO 0 to 3, `mpirun -np N dpprof run --backend cuda --ranks N` against one rank on one GPU (the same
# logical batch, the same physical batch a rank) and the dry model of rank 0. it checks that the losses are one
# rank's to 1e-5, that every rank's peak is the dry model's and the ranks' peaks are equal, and that the
# collective bytes are the model's; it reports the step times. the default run (trainer-1b, fp32, flash_bk,
# T=1024, 2 samples a rank, 3 steps) takes about a minute a stage on H100s. needs a build with CUDA, NCCL and
# MPI, and mpirun. results, logs and summary.txt in OUT.
# usage: [RANKS=N] [DPPROF_BIN=./dpprof] [OUT=results/gpu-ranks] [RANKS_ARGS="dpprof run options"] bash tests/gpu_ranks.bash
#   RANKS: default the number of GPUs `dpprof devices` lists (fewer than 2: nothing to run, exit 2)
set -u
cd "$(dirname "$0")/.."
bin=${DPPROF_BIN:-./dpprof}
out=${OUT:-results/gpu-ranks}
args=${RANKS_ARGS:---preset trainer-1b --seq 1024 --algo flash_bk --sigma 1 --max-grad-norm 1 --steps 3 --warmup 1}
say() { echo "gpu_ranks: $*" >&2; }

if ! "$bin" version | grep -Eq 'CUDA, NCCL(, [^,]*cuDNN[^,]*)?, MPI\)'; then
    say "$bin is not built with CUDA, NCCL and MPI ($("$bin" version)): the ranks cannot run on GPUs"
    exit 2
fi
if ! command -v mpirun >/dev/null; then
    say "no mpirun on this machine (Open MPI: openmpi-bin)"
    exit 2
fi
gpus=$("$bin" devices 2>/dev/null | grep -c '^[0-9]*:')
n=${RANKS:-$gpus}
if ! [[ $n =~ ^[0-9]+$ ]] || [ "$n" -lt 2 ]; then
    say "RANKS=$n: the ranks need 2 or more GPUs (this machine lists $gpus; RANKS=N runs N ranks anyway)"
    exit 2
fi
mkdir -p "$out/logs"
b=$((2 * n))
fail=0
{
    echo "# the cuda backend's ranks: $n ranks against one, $("$bin" version)"
    "$bin" devices 2>/dev/null | head -"$n"
    echo "# options: $args --batch $b --physical-batch 2"
    printf '%-6s %-6s %12s %14s %14s %16s %10s %10s %10s\n' zero status loss_rel peak_mib dry_peak_mib collective_mib step_ms one_ms nccl_mib
} >"$out/summary.txt"
"$bin" run $args --backend cuda --batch "$b" --physical-batch 2 --out "$out/one.json" >"$out/logs/one.log" 2>&1 || { say "the single rank failed ($out/logs/one.log)"; fail=1; }
for z in 0 1 2 3; do
    mpirun --oversubscribe -np "$n" "$bin" run $args --backend cuda --batch "$b" --ranks "$n" --zero "$z" --out "$out/zero$z.json" >"$out/logs/zero$z.log" 2>&1 ||
        say "zero $z: the MPI job failed ($out/logs/zero$z.log)"
    "$bin" run $args --backend dry --batch "$b" --ranks "$n" --zero "$z" --out "$out/dry$z.json" >"$out/logs/dry$z.log" 2>&1
    python3 - "$out/one.json" "$out/zero$z.json" "$out/dry$z.json" "$z" >>"$out/summary.txt" <<'EOF' || fail=1
import json, sys
def load(f):
    try:
        return json.load(open(f))
    except Exception:
        return None
one, ranks, dry, z = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3]), sys.argv[4]
if not (one and ranks and dry) or ranks.get("status") != "ok":
    print(f"{z:<6} {'failed':<6}")
    sys.exit(1)
ms = lambda r: r.get("avg_time_ms") if isinstance(r.get("avg_time_ms"), (int, float)) else float("nan")
a, t = one["losses"], ranks["losses"]
rel = max(abs(x - y) / abs(x) for x, y in zip(a, t)) if len(a) == len(t) and a else float("inf")
d, dd = ranks["distributed"], dry["distributed"]
coll = d["collective_bytes"]["total"] / 2**20
ok = rel <= 1e-5 and d["processes"] > 1 and d["ranks_identical"] and ranks["peak_memory_mb"] == dry["peak_memory_mb"] and d["collective_bytes"] == dd["collective_bytes"]
nccl = ranks["meta"]["memory"].get("nccl_device_bytes")  # NCCL's own buffers, measured as the communicator was made
nccl = nccl / 2**20 if isinstance(nccl, (int, float)) else float("nan")
print(f"{z:<6} {'ok' if ok else 'FAIL':<6} {rel:12.2e} {ranks['peak_memory_mb']:14.1f} {dry['peak_memory_mb']:14.1f} {coll:16.1f} {ms(ranks):10.1f} {ms(one):10.1f} {nccl:10.1f}")
sys.exit(0 if ok else 1)
EOF
done
cat "$out/summary.txt"
[ $fail = 0 ] && say "every stage agrees with one rank and the dry model ($out/summary.txt)" || say "FAILED: see $out/summary.txt and $out/logs"
exit $fail
