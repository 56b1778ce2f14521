#!/usr/bin/env bash
# tests/test_mpi.sh - ranks as an MPI job on the cpu backend: build/tests/mpi_ranks (tests/test_mpi.c) under
# mpirun with 2 and 4 processes (oversubscribed: more ranks than cores), then the command line: `mpirun -np 2
# dpprof run --backend cpu --ranks 2` gives the single rank's losses, the dry model's peak, one result file
# written by rank 0; with --poisson the single rank's losses, draws and epsilon; and the refusals (a --ranks other than the job's size, ranks without mpirun, a command
# other than run). then the cuda backend's ranks on the cpu emulator with its NCCL over MPI: the same test
# (build/tests/mpi_ranks_cuemu) with 2 and 3 processes, and build/dpprof-cuemu's command line. a build without
# MPI: the refusal that says so, the rest SKIP. needs ./dpprof. run by make test.
set -u
cd "$(dirname "$0")/.."
root=$PWD
bin=$PWD/dpprof
prog=$PWD/build/tests/mpi_ranks
emu=$PWD/build/tests/mpi_ranks_cuemu
emubin=$PWD/build/dpprof-cuemu
. tests/lib.bash
SKIP() { echo "SKIP $*"; }
# mpirun as root (CI) needs both variables; shared memory without the cross-memory-attach that containers forbid
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
cd "$tmp"
q="--preset tiny --seq 16 --batch 8 --steps 3 --algo ghost_bk --sigma 0.8 --max-grad-norm 0.5 --quiet"

if ! "$bin" version | grep -q ', MPI)'; then
    "$bin" run $q --backend cpu --ranks 2 2>err; rc=$?
    check "a build without MPI refuses --ranks 2 on the cpu backend, saying so (exit $rc: $(head -c 160 err))" bash -c "[ $rc = 2 ] && grep -q 'has no MPI' err"
    SKIP "this dpprof has no MPI (no mpicc when it was built): the MPI job checks did not run"
    exit 0
fi
if ! command -v mpirun >/dev/null; then
    fail "dpprof was built with MPI but there is no mpirun to launch it"
    exit 1
fi
mpi() { mpirun --oversubscribe -np "$@"; }

for n in 2 4; do
    if [ -x "$prog" ]; then
        mpi "$n" "$prog" >"ranks$n.log" 2>&1; rc=$?
        cat "ranks$n.log" | grep -E '^(PASS|FAIL|SKIP) ' | sed "s/^\(PASS\|FAIL\|SKIP\) /\1 [$n ranks] /"
        check "mpi_ranks under mpirun -np $n exits 0" test "$rc" = 0
    else fail "build/tests/mpi_ranks is not built (make test-build builds it where mpicc is)"; fi
done

# the command line: one rank against two, the dry model beside them
"$bin" run $q --backend cpu --physical-batch 4 --out one.json 2>err1; rc1=$?
mpi 2 "$bin" run $q --backend cpu --ranks 2 --zero 3 --out two.json 2>err2; rc2=$?
"$bin" run $q --backend dry --ranks 2 --zero 3 --out dry.json 2>err3; rc3=$?
check "one rank, mpirun -np 2 --ranks 2 --zero 3 and the dry model all exit 0 ($rc1 $rc2 $rc3: $(head -c 200 err2))" test "$rc1$rc2$rc3" = 000
check "mpirun -np 2: the steps' losses are the single rank's to 1e-6" python3 - one.json two.json <<'EOF'
import json, sys
a, b = (json.load(open(f))["losses"] for f in sys.argv[1:3])
sys.exit(not (len(a) == len(b) == 3 and all(abs(x - y) <= 1e-6 * abs(x) for x, y in zip(a, b))))
EOF
check "mpirun -np 2: 2 processes ran, their peaks are equal, and the peak is the dry model's" python3 - two.json dry.json <<'EOF'
import json, sys
t, d = (json.load(open(f)) for f in sys.argv[1:3])
td, dd = t["distributed"], d["distributed"]
sys.exit(not (td["processes"] == 2 and td["ranks_identical"] and dd["processes"] == 1 and t["peak_memory_mb"] == d["peak_memory_mb"]
              and td["collective_bytes"] == dd["collective_bytes"] and t["breakdown"] == d["breakdown"]))
EOF
check "rank 0 alone writes: one result file, no stray ones" bash -c "[ \$(ls | grep -c json) = 3 ] && ! ls -a | grep -q '^\.two'"
mpi 2 "$bin" run $q --backend cpu --ranks 2 2>err; rc=$?
check "mpirun -np 2 without --out: exit 0, rank 0 speaks (one 'peak' line)" bash -c "[ $rc = 0 ] && [ \$(grep -c '^peak' err) -le 1 ]"

# poisson sampling over the ranks: every rank draws the step's batch and takes its shard; the union is the single
# rank's draw, so the losses, the draws and the epsilon are the single rank's; the peak is the dry model's of rank 0
p="$q --poisson --dataset-size 40"
"$bin" run $p --backend cpu --physical-batch 4 --out pone.json 2>err1; rc1=$?
mpi 2 "$bin" run $p --backend cpu --ranks 2 --zero 2 --out ptwo.json 2>err2; rc2=$?
"$bin" run $p --backend dry --ranks 2 --zero 2 --out pdry.json 2>err3; rc3=$?
check "--poisson: one rank, mpirun -np 2 --ranks 2 --zero 2 and the dry model all exit 0 ($rc1 $rc2 $rc3: $(head -c 200 err2))" test "$rc1$rc2$rc3" = 000
check "mpirun -np 2 --poisson: the single rank's losses to 1e-6, its draws (privacy.batch_sizes) and its epsilon; the peak is the dry model's (rank 0's share)" python3 - pone.json ptwo.json pdry.json <<'EOF'
import json, sys
a, t, d = (json.load(open(f)) for f in sys.argv[1:4])
pa, pt, pd = a["privacy"], t["privacy"], d["privacy"]
sys.exit(not (len(a["losses"]) == len(t["losses"]) == 3 and all(abs(x - y) <= 1e-6 * abs(x) for x, y in zip(a["losses"], t["losses"]))
              and pa["batch_sizes"] == pt["batch_sizes"] == pd["batch_sizes"] and pa["epsilon"] == pt["epsilon"] == pd["epsilon"] and pt["epsilon"] > 0
              and pt["mechanism"] == "poisson-subsampled gaussian" and pt["sample_rate"] == 8 / 40 and t["peak_memory_mb"] == d["peak_memory_mb"]
              and t["distributed"]["processes"] == 2 and d["distributed"]["ranks_identical"] is False))
EOF
timeout 120 mpirun --oversubscribe -np 2 "$bin" run $p --backend cpu --ranks 2 --zero 2 --memory-limit 2M --out plim.json 2>err; rc=$?
check "mpirun -np 2 --poisson --zero 2 under a limit a physical batch exceeds: every rank stops before the first step, no wait (exit $rc)" \
    bash -c "[ $rc != 0 ] && [ $rc != 124 ] && grep -q 'every rank stops before the first step' err"

# refusals, before any work, naming the bad value
mpi 2 "$bin" run $q --backend cpu --ranks 3 --batch 9 --out bad.json 2>err; rc=$?
check "--ranks 3 in a job of 2 processes: refused, no file ($(grep -m1 -o 'ranks 3[^:]*: [^(]*' err))" bash -c "[ $rc != 0 ] && grep -q -- '--ranks 3, but the MPI job has 2 processes' err && [ ! -e bad.json ]"
"$bin" run $q --backend cpu --ranks 2 --out bad.json 2>err; rc=$?
check "--ranks 2 without mpirun: refused, saying how to launch it ($(head -c 120 err))" bash -c "[ $rc = 2 ] && grep -q 'mpirun -np 2' err && [ ! -e bad.json ]"
mpi 2 "$bin" presets >out 2>err; rc=$?
check "mpirun -np 2 dpprof presets: refused (only run is an MPI job)" bash -c "[ $rc != 0 ] && grep -q \"only 'dpprof run'\" err"
"$bin" run $q --backend cuda --ranks 2 2>err; rc=$?
check "--backend cuda --ranks 2 without mpirun: refused, saying how to launch it ($(head -c 100 err))" bash -c "[ $rc = 2 ] && grep -q 'mpirun -np 2' err"
timeout 120 mpirun --oversubscribe -np 2 "$bin" run $q --backend cpu --ranks 2 --out nosuchdir/r.json 2>err; rc=$?
check "an --out that rank 0 alone cannot write: every rank stops, no wait (exit $rc: $(grep -m1 -o "nosuchdir[^']*'[^:]*: [^)]*" err))" bash -c "[ $rc != 0 ] && [ $rc != 124 ] && grep -q nosuchdir err"
mpi 2 "$bin" run $q --backend cpu --ranks 2 --dump dumpdir 2>err; rc=$?
check "mpirun -np 2 --dump: refused (a dump is one process's)" bash -c "[ $rc != 0 ]"

# the cuda backend's ranks: the kernels on the cpu emulator, NCCL the emulator's over MPI (tests/cuemu.h). the
# engine's checks with 2 ranks and with 3 (parts that are padded, collectives of unpadded tensors part by part),
# then the command line: one rank, two ranks at zero 3 and the dry model
for n in 2 3; do
    if [ -x "$emu" ]; then
        mpi "$n" "$emu" >"cuda$n.log" 2>&1; rc=$?
        grep -E '^(PASS|FAIL|SKIP) ' "cuda$n.log" | sed "s/^\(PASS\|FAIL\|SKIP\) /\1 [cuda, emulated, $n ranks] /"
        check "mpi_ranks_cuemu under mpirun -np $n exits 0" test "$rc" = 0
    else fail "build/tests/mpi_ranks_cuemu is not built (make test-build builds it where mpicc is)"; fi
done
if [ -x "$emubin" ] && "$emubin" version | grep -Eq 'NCCL(, [^,]*cuDNN[^,]*)?, MPI\)'; then
    "$emubin" run $q --backend cuda --physical-batch 4 --out cone.json 2>err1; rc1=$?
    mpi 2 "$emubin" run $q --backend cuda --ranks 2 --zero 3 --out ctwo.json 2>err2; rc2=$?
    check "cuda (emulated): one rank and mpirun -np 2 --ranks 2 --zero 3 exit 0 ($rc1 $rc2: $(head -c 200 err2))" test "$rc1$rc2" = 00
    check "cuda (emulated) mpirun -np 2: the losses are the single rank's to 1e-6, 2 processes ran, the peak and its split are the dry model's" python3 - cone.json ctwo.json dry.json <<'EOF'
import json, sys
a, t, d = (json.load(open(f)) for f in sys.argv[1:4])
ok = len(a["losses"]) == len(t["losses"]) == 3 and all(abs(x - y) <= 1e-6 * abs(x) for x, y in zip(a["losses"], t["losses"]))
td, dd = t["distributed"], d["distributed"]
sys.exit(not (ok and td["processes"] == 2 and td["ranks_identical"] and t["peak_memory_mb"] == d["peak_memory_mb"] and t["breakdown"] == d["breakdown"]
              and td["collective_bytes"] == dd["collective_bytes"] and t["config"]["backend"] == "cuda"))
EOF
    # NCCL's own buffers: the emulator's stand-in (9 MiB, the driver's 2 MiB granules: 10 MiB) made with the
    # communicator, since dpprof asks NCCL to connect at creation, and so measured then on every rank; where the
    # user's NCCL_RUNTIME_CONNECT=1 keeps connections lazy, nothing is measured and the bytes are the driver's gap
    check "cuda (emulated) mpirun -np 2: NCCL's buffers measured as the communicator is made (meta.memory.nccl_device_bytes, inside driver_before_session); one rank: none" python3 - cone.json ctwo.json <<'EOF'
import json, sys
a, t = (json.load(open(f))["meta"]["memory"] for f in sys.argv[1:3])
sys.exit(not (a["nccl_device_bytes"] is None and t["nccl_device_bytes"] == 10 << 20 and t["driver_before_session_bytes"] >= t["nccl_device_bytes"]
              and t["gap"]["unexplained_bytes"] == 0))
EOF
    NCCL_RUNTIME_CONNECT=1 mpi 2 -x NCCL_RUNTIME_CONNECT "$emubin" run $q --backend cuda --ranks 2 --zero 3 --out clazy.json 2>err3; rc=$?
    check "cuda (emulated) with the user's NCCL_RUNTIME_CONNECT=1: kept, nothing measured (null), the buffers in the driver's unexplained gap ($rc)" python3 - clazy.json ctwo.json <<'EOF'
import json, sys
z, t = (json.load(open(f))["meta"]["memory"] for f in sys.argv[1:3])
sys.exit(not (z["nccl_device_bytes"] is None and z["gap"]["unexplained_bytes"] == t["nccl_device_bytes"] and z["driver_peak_bytes"] == t["driver_peak_bytes"] + t["nccl_device_bytes"]))
EOF
    # the several-GPU check (make gpu-ranks) on the emulator's one device, shared by the ranks
    (cd "$root" && RANKS=2 DPPROF_BIN="$emubin" OUT="$tmp/gr" RANKS_ARGS="--preset tiny --seq 16 --algo ghost_bk --sigma 1 --steps 2 --warmup 1" \
        bash tests/gpu_ranks.bash) >gr.log 2>&1; rc=$?
    check "tests/gpu_ranks.bash with RANKS=2 (emulated): every ZeRO stage agrees with one rank and the dry model, NCCL's buffers (the stand-in's 10 MiB) in its last column (exit $rc)" \
        bash -c "[ $rc = 0 ] && [ \$(grep -cE '^[0-3] +ok .* 10\.0$' '$tmp/gr/summary.txt') = 4 ]"
    (cd "$root" && DPPROF_BIN="$emubin" OUT="$tmp/gr1" bash tests/gpu_ranks.bash) >gr1.log 2>&1; rc=$?
    check "tests/gpu_ranks.bash on a machine of one GPU: exit 2, saying it needs 2 ($(head -c 120 gr1.log))" bash -c "[ $rc = 2 ] && grep -q '2 or more GPUs' gr1.log"
else fail "build/dpprof-cuemu is not built with the emulator's NCCL and MPI ($("$emubin" version 2>&1 | head -c 100))"; fi
