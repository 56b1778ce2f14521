#!/usr/bin/env bash
# tests/test_fit.sh - dpprof fit: every row's physical batch fits and one more does not (checked by dpprof run
# on dry, with the margin the row states); the peak and the flops it prints are the run's (with fixed batches, as fit
# probes), and a row's private command (--poisson, one GPU or several) runs as echoed within it; sigma reaches the
# target epsilon; a model too big for every configuration gets an answer; bad input is refused first.
# needs ./dpprof (make). run by make test.
set -u
cd "$(dirname "$0")/.."
bin=${DPPROF_TEST_BIN:-$PWD/dpprof}
. tests/lib.bash

joined() { sed ':a;N;$!ba;s/\n    / /g' "$1"; } # the terminal's notes unwrapped: a line a note

# fit, then each row against dpprof run: the printed peak is the run's at b; need(b) fits, need(b + 1) does not
# (need = peak x (1 + the algorithm's fraction) + the context + NCCL's buffers where --nccl-mem gives them, the
# row's own margin, from the json)
rows_check() { # name json
    python3 - "$bin" "$2" <<'PY'
import json, shlex, subprocess, sys
binary, path = sys.argv[1], sys.argv[2]
f = json.load(open(path))["fit"]
total, ctx, frac = f["device_memory_bytes"], f["margin"]["context_bytes"] + (f["margin"]["nccl_bytes"] or 0), f["margin"]["fraction_of_peak"]
brank = f["batch"] // f["gpus"]
def worst(argv, b):  # Opacus's rows hold two parts of exactly b where the logical batch is larger (Poisson's worst)
    argv[argv.index("--physical-batch") + 1] = str(b)
    if "opacus" in argv and brank > b:
        argv[argv.index("--batch") + 1] = str(2 * b)
    return argv
def run(cmd, b, poisson=False):  # the fixed batch's figures (the probe's: a Poisson run's vary with its draw), or the command as echoed
    argv = shlex.split(cmd)
    argv[0] = binary
    worst(argv, b)
    if not poisson and "--poisson" in argv:
        argv.remove("--poisson")
    out = subprocess.run(argv + ["--steps", "2", "--quiet", "--timeline", "none", "--out", "-"], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit("run failed: %s: %s" % (" ".join(argv), out.stderr))
    j = json.loads(out.stdout)
    return j["breakdown"]["bytes"]["peak"], j
bad, n, checked, devruns, device_checked, poisson = [], 0, 0, 0, {}, 0
dev_named = f["device"] in ("H100", "H200", "A100-80", "A100-40", "L40S", "A10", "L4", "RTX4090")
for r in f["rows"]:
    if not r["fits"]:
        continue
    n += 1
    need = lambda p: p * (1 + frac[r["algo"]]) + ctx
    b = r["physical_batch"]
    peak, j = run(r["command"], b)
    if peak != r["peak_bytes"]:
        bad.append("%s: printed peak %d, run's %d" % (r["command"], r["peak_bytes"], peak))
    if abs(need(peak) - r["need_bytes"]) > 1:
        bad.append("%s: need %d, from the run %d" % (r["command"], r["need_bytes"], need(peak)))
    if need(peak) > total:
        bad.append("%s: b = %d does not fit" % (r["command"], b))
    if "--poisson" in r["command"]:  # the private command runs as echoed; its physical batch bounds its peak
        ppeak, _ = run(r["command"], b, True)
        poisson += 1
        if ppeak > r["peak_bytes"]:
            bad.append("%s: the Poisson run's peak %d is over the row's %d" % (r["command"], ppeak, r["peak_bytes"]))
    if b < brank:
        peak1, _ = run(r["command"], b + 1)
        if need(peak1) <= total:
            bad.append("%s: b + 1 = %d fits too" % (r["command"], b + 1))
        checked += 1
    elif r["accumulation"] != 1:
        bad.append("%s: the whole batch in one, yet accumulation %d" % (r["command"], r["accumulation"]))
    if dev_named and r["algo"] != "auto" and not device_checked.get(r["algo"]):  # dpprof run --device: the same rule as a limit (auto adapts its plan to a limit: not this rule's probe)
        device_checked[r["algo"]] = 1
        for bb, want in ((b, "ok"), (b + 1, "oom")) if b < brank else ((b, "ok"),):
            argv = shlex.split(r["command"]); argv[0] = binary
            worst(argv, bb)
            if "--poisson" in argv:  # the rule's oom at b + 1 is the fixed batch's (a Poisson draw may not fill b + 1)
                argv.remove("--poisson")
            out = subprocess.run(argv + ["--device", f["device"], "--steps", "2", "--quiet", "--timeline", "none", "--out", "-"], capture_output=True, text=True)
            st = json.loads(out.stdout)["status"] if out.stdout else "exit %d" % out.returncode
            if st != want:
                bad.append("%s --device %s at b = %d: %s, want %s" % (r["command"], f["device"], bb, st, want))
            devruns += 1
    # the flops of a logical step: the same run without poisson sampling (fixed batches) executes them
    argv = shlex.split(r["command"]); argv[0] = binary; argv.remove("--poisson") if "--poisson" in argv else None
    if "--framework" in argv:  # a framework's walk charges no ops: fit's flops are dpprof's engine's of the same step
        i = argv.index("--framework"); del argv[i:i + 2]
        if "--attention" in argv:
            i = argv.index("--attention"); del argv[i:i + 2]
    out = subprocess.run(argv + ["--steps", "1", "--quiet", "--timeline", "none", "--out", "-"], capture_output=True, text=True)
    fl = json.loads(out.stdout)["throughput"]["flops_per_step"] * f["gpus"]
    if abs(fl - r["flops_per_step"]) > 1e-9 * fl:
        bad.append("%s: flops %.17g, the run's %.17g" % (r["command"], r["flops_per_step"], fl))
if bad or n == 0:
    print("\n".join(bad[:5]) if bad else "no row fits")
    sys.exit(1)
print("%d rows: the peak is the run's, b fits; b + 1 does not (%d checked; the others take the whole batch)%s%s" % (n, checked, "; dpprof run --device %s agrees in %d runs" % (f["device"], devruns) if devruns else "",
      "; %d Poisson commands run, each within its row's peak" % poisson if poisson else ""))
PY
}

fit() { # name json args...: fit, exit 0, and every row checked
    local name=$1 json=$2 said; shift 2
    "$bin" fit "$@" --json "$json" >"${json%.json}.out" 2>"$tmp/fit.err"; local rc=$?
    if [ $rc -ne 0 ]; then fail "$name: exit $rc: $(head -3 "$tmp/fit.err")"; return; fi
    if said=$(rows_check "$name" "$json" 2>&1); then pass "$name: ${said##*$'\n'}"; else fail "$name: $said"; fi
}

fit "llama-3.2-1b T=1024 B=64 bf16 on an H200, epsilon 8" "$tmp/a.json" --preset llama-3.2-1b --seq 1024 --batch 64 --dtype bf16 --device H200 \
    --target-epsilon 8 --dataset-size 100000 --epochs 3
fit "gpt2-small T=512 B=32 on 4 GPUs of 3 GiB, every ZeRO stage" "$tmp/b.json" --preset gpt2-small --seq 512 --batch 32 --gpus 4 --gpu-memory 3G --sigma 1.1 \
    --dataset-size 50000
check "...every fitting row on 4 GPUs echoes a private command: --dataset-size 50000 --poisson (each rank its shard of the draw)" python3 -c '
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["fit"]["rows"] if r["fits"]]
sys.exit(not (rows and all("--ranks 4 " in r["command"] and "--dataset-size 50000 --poisson " in r["command"] for r in rows)))' "$tmp/b.json"
joined "$tmp/b.out" >"$tmp/bj.out"
check "...NCCL's own buffers not counted there, and said so (with what measures them)" bash -c \
    "grep -q 'NCCL.s own buffers are not counted' '$tmp/bj.out' && grep -q 'dpprof run --backend cuda --ranks 4 measures them' '$tmp/bj.out' && grep -q '\"nccl_bytes\": null' '$tmp/b.json'"
fit "the same with --nccl-mem 300M: every row's need holds NCCL's buffers" "$tmp/bn.json" --preset gpt2-small --seq 512 --batch 32 --gpus 4 --gpu-memory 3G \
    --sigma 1.1 --dataset-size 50000 --nccl-mem 300M
check "...each row's physical batch at most the one without them, one row smaller, the 300 MiB named" python3 -c '
import json, sys
a, b = ({(r["algo"], r["checkpoint"], r["zero"], r["lora_rank"]): r for r in json.load(open(p))["fit"]["rows"]} for p in sys.argv[1:3])
n = json.load(open(sys.argv[2]))["fit"]["margin"]["nccl_bytes"]
sys.exit(not (n == 300 << 20 and a.keys() == b.keys() and all(b[k]["physical_batch"] <= a[k]["physical_batch"] for k in a)
              and any(b[k]["physical_batch"] < a[k]["physical_batch"] for k in a)))' "$tmp/b.json" "$tmp/bn.json"
fit "llama-3.2-1b T=2048 LoRA 0, 8, 64 on an L4, the PLD accountant" "$tmp/c.json" --preset llama-3.2-1b --seq 2048 --batch 32 --dtype bf16 --device L4 \
    --lora-rank 0,8,64 --algo ghost_bk,flash_bk,persample --target-epsilon 3 --dataset-size 20000 --accountant pld
fit "llama-3.2-1b T=512 LoRA 16, the head trained and fp32 masters of the frozen weights kept" "$tmp/lh.json" --preset llama-3.2-1b --seq 512 --batch 16 \
    --dtype bf16 --device L4 --lora-rank 16 --train-head --frozen-masters --algo flash_bk,ghost_bk --sigma 1
check "the LoRA rows' commands keep --train-head and --frozen-masters" bash -c "grep -q '^best: dpprof run .* --lora-rank 16 --train-head --frozen-masters ' '$tmp/lh.out'"
fit "SmolLM2-135M and a PEFT adapter config (every projection, rslora, lm_head saved)" "$tmp/pf.json" --hf-config tests/hf/smollm2-135m.json \
    --peft-config tests/peft/causal-lm-head-rslora.json --seq 256 --batch 16 --dtype bf16 --device L4 --sigma 1 --algo flash_bk,persample
check "the adapter config's rows: r 16, alpha 32 sqrt(16), every projection, the head trained" \
    bash -c "grep -q '^best: dpprof run --hf-config tests/hf/smollm2-135m.json .* --lora-rank 16 --lora-alpha 128 --lora-targets q,k,v,o,gate,up,down --train-head ' '$tmp/pf.out'"
fit "a shape of flags T=256 B=48: 48 is not a power of two, the last physical batch smaller" "$tmp/d.json" --preset tiny --hidden 256 --layers 4 --heads 8 \
    --kv-heads 2 --ffn 704 --vocab 5000 --seq 256 --batch 48 --gpu-memory 1400M --sigma 0.8 --checkpoint none,layers

# sigma reaches the target: the epsilon dpprof epsilon gives at the printed sigma is at most the target, and a sigma
# 0.1% lower spends more (the four digits are rounded up, not padded); the accountant is named
check "sigma of a target: at most epsilon 8 at the printed sigma (RDP, named), over the target 0.1% lower" python3 - "$bin" "$tmp/a.json" "$tmp/fit.out" <<'PY'
import json, subprocess, sys
binary, path = sys.argv[1], sys.argv[2]
p = json.load(open(path))["fit"]["privacy"]
assert p["accountant"] == "rdp" and "RDP accountant" in p["line"], p
assert p["steps"] == 3 * 100000 // 64 + 1 and abs(p["sample_rate"] - 64 / 100000) < 1e-15, p
def eps(s):
    out = subprocess.run([binary, "epsilon", "--sample-rate", repr(p["sample_rate"]), "--steps", str(p["steps"]), "--sigma", repr(s)], capture_output=True, text=True).stdout
    return float(out.split("epsilon ")[1].split()[0])
assert eps(p["sigma"]) <= 8 and abs(eps(p["sigma"]) - p["epsilon"]) < 1e-6, (eps(p["sigma"]), p)
assert eps(p["sigma"] * 0.999) > 8, p
PY
check "sigma of a target under the PLD: at most epsilon 3, the accountant named" python3 - "$bin" "$tmp/c.json" <<'PY'
import json, subprocess, sys
binary, path = sys.argv[1], sys.argv[2]
p = json.load(open(path))["fit"]["privacy"]
assert p["accountant"] == "pld" and "PLD accountant" in p["line"], p
out = subprocess.run([binary, "epsilon", "--sample-rate", repr(p["sample_rate"]), "--steps", str(p["steps"]), "--sigma", repr(p["sigma"]), "--accountant", "pld"], capture_output=True, text=True).stdout
assert float(out.split("epsilon ")[1].split()[0]) <= 3, out
PY
check "the terminal: the privacy line of the target" grep -q '^privacy: σ [0-9.]* spends ε = \(8\|7.99\) at δ = 1e-05 over 4688 steps (3 epochs; Poisson, q = 0.00064; RDP accountant)' "$tmp/a.out"
"$bin" fit --preset llama-3.2-1b --seq 1024 --batch 64 --dtype bf16 --device H200 --target-epsilon 8 --dataset-size 100000 >"$tmp/h200.txt"; rc=$?
joined "$tmp/h200.txt" >"$tmp/h200.out"
check "on an H200 in bf16 (its time model's error above 15%): ranked by flops, the predicted step time shown, the error printed" bash -c \
    "[ $rc -eq 0 ] && grep -q 'ranked by the flops of a logical step .*: the step time predicted from per-op rates of [0-9]* runs on NVIDIA H200 .* is shown (step ms) but not ranked by' '$tmp/h200.out' &&
     grep -q 'leave-one-shape-out error over [0-9]* runs of [0-9]* shapes, mean [0-9]*%, largest [0-9]*% (.*), is above the 15% a ranking by time needs' '$tmp/h200.out' \
     && grep -q '^fits: the peak, plus .* for the CUDA context and driver' '$tmp/h200.out' && grep -q '^best: dpprof run --preset llama-3.2-1b --seq 1024 --batch 64 --physical-batch [0-9]* --algo ' '$tmp/h200.out'"
"$bin" fit --preset llama-3.2-1b --seq 1024 --batch 64 --dtype fp32 --device H200 --sigma 1 --lora-rank 0,16 --json "$tmp/h200f.json" >"$tmp/h200f.txt"; rc=$?
joined "$tmp/h200f.txt" >"$tmp/h200f.out"
check "on an H200 in fp32 (its time model's error within 15%): ranked by the predicted step time; rows within the error are ties, by flops among themselves" python3 - "$tmp/h200f.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1]))["fit"]
cm, rows = f["cost_model"], [r for r in f["rows"] if r["fits"]]
err = cm["leave_one_shape_out"]["mean_abs_error"]
assert cm["kind"] == "predicted step time" and err <= cm["time_error_max"] == 0.15, cm["kind"]
ties = 0
for i, r in enumerate(rows):  # a row's rank is its run's first row's; the run's times within err of that row's
    first = rows[r["rank"] - 1]
    assert first["rank"] == r["rank"] and r["predicted_step_ms"] <= first["predicted_step_ms"] * (1 + err) + 1e-9, (i, r["rank"])
    if i and rows[i - 1]["rank"] == r["rank"]:
        ties += 1
        assert rows[i - 1]["flops_per_step"] <= r["flops_per_step"], i  # by flops inside a tie
    else:
        assert r["rank"] == i + 1, (i, r["rank"])  # a run's first row: its own place
assert ties > 0, "no ties"
print("%d rows, %d tied with a better one (mean error %.0f%%)" % (len(rows), ties, 100 * err))
PY
check "on a GPU without committed runs (L4): ranked by flops, and it says so" bash -c "sed ':a;N;\$!ba;s/\n    / /g' '$tmp/c.out' | grep -q \"ranked by the flops of a logical step (dpprof's analytic costs, every GPU): no committed bf16 runs of L4\""
mkdir -p "$tmp/nobench"
"$bin" fit --preset tiny --seq 64 --batch 8 --gpu-memory 1G --sigma 1 --bench "$tmp/nobench" --json "$tmp/e.json" >"$tmp/e.txt"; rc=$?
joined "$tmp/e.txt" >"$tmp/e.out"
check "no committed runs at all (--bench an empty folder): no margin added, and it says so; flops only" bash -c \
    "[ $rc -eq 0 ] && grep -q 'no GPU runs under $tmp/nobench measured the allocator' '$tmp/e.out' && grep -q '\"context_bytes\": 0,' '$tmp/e.json' && grep -q '\"kind\": \"flops\"' '$tmp/e.json'"
check "privacy: sigma without a dataset size: epsilon unknown, said" grep -q "^privacy: σ 1; ε unknown without --dataset-size" "$tmp/e.out"

# dpprof run --device: fit's rule as the run's memory limit, said in config.memory_rule; bad input refused first
"$bin" run --preset tiny --backend dry --steps 1 --algo persample --sigma 1 --device H100 --quiet --out "$tmp/dev.json"; rc=$?
check "run --device H100: memory_limit is (79.6 GiB - the context) / (1 + persample's share), the rule in config.memory_rule" python3 - "$tmp/dev.json" "$tmp/a.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))["config"]
m = json.load(open(sys.argv[2]))["fit"]["margin"]
want = (81559 * 1048576 - m["context_bytes"]) / (1 + m["fraction_of_peak"]["persample"])
assert abs(c["memory_limit"] - want) <= 1, (c["memory_limit"], want)
assert "dpprof fit's rule" in c["memory_rule"] and "persample" in c["memory_rule"], c["memory_rule"]
PY
err=$("$bin" run --preset tiny --backend dry --steps 1 --algo persample --sigma 1 --device H100 --out "$tmp/dev2.json" 2>&1 >/dev/null)
check "run --device H100 says its memory limit and the rule on the terminal" grep -q "^dpprof: run: --device H100: memory limit 73.9 GiB for persample (dpprof fit's rule" <<<"$err"
bad_fit() { # code text args...
    local code=$1 text=$2 err; shift 2
    err=$("$bin" run --preset tiny --backend dry --steps 1 --quiet "$@" --out "$tmp/devbad.json" 2>&1 >/dev/null); local rc=$?
    check "run $*: exit $code, '$text' ($err)" bash -c "[ $rc -eq $code ] && grep -qF -- \"\$1\" <<<\"\$2\" && [ ! -e '$tmp/devbad.json' ]" _ "$text" "$err"
}
bad_fit 2 "--device 'H300': not a GPU dpprof knows (H100, H200, A100-80" --device H300
bad_fit 2 "--device H100 and --memory-limit: give one" --device H100 --memory-limit 10G

# a model too big for every configuration: exit 3, the least memory it needs and the GPUs that would hold it
"$bin" fit --hf-config tests/hf/mistral-7b-v0.1.json --seq 4096 --batch 16 --device L40S --sigma 1 --algo ghost_bk,flash_bk >"$tmp/big.out" 2>&1; rc=$?
check "mistral-7b full fine-tuning on one L40S: exit 3, the least memory, and the fewest GPUs that fit (ZeRO 3)" bash -c \
    "[ $rc -eq 3 ] && grep -q '^nothing fits L40S (45.0 GiB a GPU): the least memory, .* needs [0-9.]* GiB a GPU' '$tmp/big.out' && grep -q '^with [0-9]* GPUs (ZeRO 3, [0-9]* samples\? a GPU) it fits' '$tmp/big.out'"
g=$(sed -n 's/^with \([0-9]*\) GPUs.*/\1/p' "$tmp/big.out")
"$bin" fit --hf-config tests/hf/mistral-7b-v0.1.json --seq 4096 --batch 16 --device L40S --sigma 1 --algo ghost_bk,flash_bk --gpus "${g:-1}" --zero 3 >"$tmp/big2.out" 2>&1; rc=$?
check "...and on that many GPUs it does fit (exit 0, a best row)" bash -c "[ $rc -eq 0 ] && grep -q '^best: dpprof run --hf-config tests/hf/mistral-7b-v0.1.json' '$tmp/big2.out'"
"$bin" fit --preset llama-3.1-8b --seq 8192 --batch 8 --dtype bf16 --device A10 --sigma 1 >"$tmp/big3.out" 2>&1; rc=$?
"$bin" fit --preset tiny --seq 64 --batch 8 --gpu-memory 1G --sigma 1 >"$tmp/ctx.out" 2>&1; rc=$?
check "a GPU smaller than the measured context: exit 3, and it says so" bash -c "[ $rc -eq 3 ] && grep -q '^the CUDA context and driver alone take 1.10 GiB' '$tmp/ctx.out'"
check "llama-3.1-8b bf16 T=8192 on an A10: exit 3, and no number of GPUs holds it with ZeRO 3: the memory it needs" bash -c \
    "[ $rc -eq 3 ] && grep -q '^no number of GPUs up to the batch (8: one sample a GPU) fits with ZeRO 3: a GPU of at least [0-9.]* GiB is needed' '$tmp/big3.out'"
"$bin" fit --preset llama-3.1-8b --seq 4096 --batch 16 --dtype bf16 --device L40S --sigma 1 --algo ghost_bk,flash_bk >"$tmp/big4.out" 2>&1; rc=$?
g=$(sed -n 's/^with \([0-9]*\) GPUs.*/\1/p' "$tmp/big4.out")
check "llama-3.1-8b bf16 T=4096 on one L40S: exit 3, and the fewest GPUs that fit with ZeRO 3 of bf16 ($g)" bash -c \
    "[ $rc -eq 3 ] && grep -q '^with [0-9]* GPUs (ZeRO 3, [0-9]* samples\? a GPU) it fits' '$tmp/big4.out'"
"$bin" fit --preset llama-3.1-8b --seq 4096 --batch 16 --dtype bf16 --device L40S --sigma 1 --algo ghost_bk,flash_bk --gpus "${g:-1}" --json "$tmp/big4.json" >"$tmp/big5.out" 2>&1; rc=$?
check "...and on that many GPUs bf16 searches ZeRO 0 to 3 (none left out) and a row fits" bash -c \
    "[ $rc -eq 0 ] && ! grep -q '^not searched' '$tmp/big5.out' && grep -q '^best: dpprof run --preset llama-3.1-8b' '$tmp/big5.out'"
if said=$(rows_check big4 "$tmp/big4.json" 2>&1); then pass "...every row of the bf16 ZeRO search against dpprof run: ${said##*$'\n'}"; else fail "...the bf16 ZeRO search: $said"; fi

# what of a model's config.json dpprof does not model is printed by fit
"$bin" fit --hf-config tests/hf/llama-3.2-1b.json --seq 512 --batch 8 --device H100 --sigma 1 --algo flash_bk --checkpoint none >"$tmp/hf.out" 2>/dev/null; rc=$?
check "fit of a config with rope_scaling llama3: 'not modelled:' says so" bash -c "[ $rc -eq 0 ] && grep -q '^not modelled: rope_scaling llama3: the rotary frequencies' '$tmp/hf.out'"

# the speed the search is built for: llama-3.1-8b at T=8192 on 8 GPUs, every algorithm, checkpointing none and
# layers, ZeRO 0 to 3, in one process with no JSON per probe
start=$EPOCHREALTIME
"$bin" fit --preset llama-3.1-8b --seq 8192 --batch 64 --gpus 8 --device H100 --target-epsilon 8 --dataset-size 100000 --plot "$tmp/fit.png" --json "$tmp/8b.json" >"$tmp/8b.out"; rc=$?
secs=$(awk "BEGIN{printf \"%.2f\", $EPOCHREALTIME - $start}")
check "llama-3.1-8b T=8192 on 8 H100s, 48 combinations: ranked rows, a figure (PNG), in ${secs} s" bash -c \
    "[ $rc -eq 0 ] && grep -q 'searched 48 combinations with [0-9]* dry probes' '$tmp/8b.out' && [ \"\$(head -c 8 '$tmp/fit.png' | od -An -c | tr -d ' ')\" = '211PNG\r\n032\n' ]"
if said=$(rows_check 8b "$tmp/8b.json" 2>&1); then pass "...every row of the 8b search against dpprof run: ${said##*$'\n'}"; else fail "...the 8b search: $said"; fi

# --framework pytorch: the loop a PyTorch user writes; every row checked as above (its margin adds no allocator share:
# PyTorch's is not measured); the answer in the user's terms; what it does not model refused before any work
fit "fit --framework pytorch, 1B on an H100" "$tmp/pt.json" --framework pytorch --preset llama-3.2-1b --seq 1024 --batch 64 --device H100
joined "$tmp/pt.out" >"$tmp/pt.txt"
check "...its answer in PyTorch's terms (a per-device batch and gradient accumulation steps), and the margin says what is not measured" \
    bash -c 'grep -q "^in PyTorch: a per-device batch of [0-9]* with [0-9]* gradient accumulation steps (the logical batch 64)" "$1" && grep -q "Not measured, so not added: PyTorch.s reserved over allocated" "$1"' _ "$tmp/pt.txt"
fit "fit --framework pytorch, LoRA ranks 8 and 32, eager, on 24 GiB" "$tmp/pt2.json" --framework pytorch --preset llama-3.2-1b --seq 512 --batch 32 --gpu-memory 24G --lora-rank 8,32 --attention eager
fit "fit --framework opacus, 1B untied on an H100: its hooks and its ghost clipping" "$tmp/op.json" --framework opacus --preset llama-3.2-1b --untied --seq 1024 --batch 256 --device H100 --sigma 1
joined "$tmp/op.out" >"$tmp/op.txt"
check "...both grad_sample_modes searched; the answer in Opacus's terms: make_private's grad_sample_mode, then max_physical_batch_size=N on the last line" \
    python3 -c '
import json, re, sys
f = json.load(open(sys.argv[1]))["fit"]
text = open(sys.argv[2]).read().rstrip("\n").split("\n")
best = [r for r in f["rows"] if r["rank"] == 1][0]
mode = "ghost" if best["algo"] == "ghost" else "hooks"
ok = {r["algo"] for r in f["rows"]} == {"persample", "ghost"} and text[-1] == "max_physical_batch_size=%d" % best["physical_batch"]
ok = ok and any(("grad_sample_mode=\"%s\"" % mode) in l and "max_physical_batch_size=%d" % best["physical_batch"] in l for l in text)
sys.exit(not ok)' "$tmp/op.json" "$tmp/op.txt"
"$bin" fit --framework opacus --preset tiny --untied --seq 64 --batch 8 --device H100 --sigma 1 --algo flash_bk >/dev/null 2>"$tmp/err"; rc=$?
check "fit --framework opacus --algo flash_bk: refused (exit $rc), naming Opacus's two modes" bash -c '[ $1 = 2 ] && grep -q "grad_sample_mode hooks (persample) or ghost (ghost)" "$2"' _ $rc "$tmp/err"
fit "fit --framework pytorch, LoRA bf16 T=4096 on 24 GiB, with and without gradient checkpointing" "$tmp/pt3.json" --framework pytorch --preset llama-3.2-1b --seq 4096 --batch 32 --gpu-memory 24G --lora-rank 16 --dtype bf16
check "...both searched by default: checkpointing none and layers" python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["fit"]; sys.exit({r["checkpoint"] for r in f["rows"]} != {"none", "layers"})' "$tmp/pt3.json"
"$bin" fit --framework pytorch --preset llama-3.2-1b --seq 4096 --batch 32 --gpu-memory 24G --lora-rank 16 --dtype bf16 --checkpoint layers >"$tmp/pt4.out" 2>&1; rc=$?
check "fit --framework pytorch --checkpoint layers: the answer says to turn Hugging Face's gradient checkpointing on (exit $rc)" \
    bash -c '[ $1 = 0 ] && tail -1 "$2" | grep -q "^in PyTorch: a per-device batch of [0-9]* with .*, after model.gradient_checkpointing_enable()$"' _ $rc "$tmp/pt4.out"
"$bin" fit --framework opacus --preset tiny --untied --seq 64 --batch 8 --device H100 --sigma 1 --checkpoint layers >/dev/null 2>"$tmp/err"; rc=$?
check "fit --framework opacus --checkpoint layers: refused (exit $rc), Opacus's loop runs without" bash -c '[ $1 = 2 ] && grep -q "Opacus.s loop without checkpointing" "$2"' _ $rc "$tmp/err"
for bad in "--algo flash_bk:non-private (vanilla)" "--gpus 2 --batch 64:one GPU"; do
    opt=${bad%%:*} says=${bad#*:}
    # shellcheck disable=SC2086
    "$bin" fit --framework pytorch --preset tiny --seq 64 --batch 8 --device H100 $opt >/dev/null 2>"$tmp/err"; rc=$?
    check "fit --framework pytorch $opt: refused (exit $rc), saying '$says'" bash -c '[ $1 = 2 ] && grep -q -- "$2" "$3"' _ $rc "$says" "$tmp/err"
done
"$bin" fit --preset tiny --seq 64 --batch 8 --gpu-memory 2G --sigma 1 --json - >"$tmp/stdout.json" 2>/dev/null; rc=$?
check "--json -: the table on standard output, after the terminal's lines" bash -c "[ $rc -eq 0 ] && sed -n '/^{/,\$p' '$tmp/stdout.json' | python3 -c 'import json,sys; json.load(sys.stdin)'"

# the collectives' time on several GPUs (a model from the links' specifications): a comm ms column; each row's time is
# NCCL's ring relations of its step's bytes and calls, worked out here from the json; those bytes are dpprof run's
# for the row's command; the rows ranked by compute plus communication where fit ranks by time
comm_check() { # json: every fitting row's communication against the formula, its bytes against dpprof run's
    python3 - "$bin" "$1" <<'PY'
import json, shlex, subprocess, sys
binary, path = sys.argv[1], sys.argv[2]
f = json.load(open(path))["fit"]
c, n = f["communication"], f["gpus"]
K, link, net = c["nodes"], c["link"], c["network"]
assert c["gpus"] == n and c["gpus_per_node"] * K == n, c
bws = ([link["bytes_per_s"]] if n > K else []) + ([net["bytes_per_s"]] if K > 1 else [])
busbw = min(bws)
assert c["busbw_bytes_per_s"] == busbw and "lower bound" in c["note"] and "not a measurement" in c["note"], c
lat_in = link["step_latency_s"] if n > K else 0.0
lat_net = net["step_latency_s"] if K > 1 else 0.0
rows, bad, runs = [r for r in f["rows"] if r["fits"]], [], 0
for r in rows:
    want, lat = 0.0, 0.0
    for kind, twice in (("all_reduce", 2), ("reduce_scatter", 1), ("all_gather", 1)):
        k = r["collectives"][kind]
        steps, inter = twice * (n - 1), twice * (K - 1)  # a ring's steps; those between nodes take the network's latency
        t = k["bytes_per_rank"] / busbw + k["calls"] * ((steps - inter) * lat_in + inter * lat_net)
        lat += k["calls"] * ((steps - inter) * lat_in + inter * lat_net)
        if abs(1e3 * t - k["ms"]) > 1e-5 * 1e3 * t + 1e-9:
            bad.append("%s %s: %s ms, the formula %.6g" % (r["command"], kind, k["ms"], 1e3 * t))
        want += t
    if abs(r["communication_ms"] - 1e3 * want) > 1e-5 * 1e3 * want or want <= 0 or abs(r["communication_latency_ms"] - 1e3 * lat) > 1e-5 * 1e3 * lat + 1e-9:
        bad.append("%s: %s ms, the formula %.6g" % (r["command"], r["communication_ms"], 1e3 * want))
    if r["predicted_step_ms"] is not None and abs(r["predicted_total_ms"] - r["predicted_step_ms"] - r["communication_ms"]) > 1e-6 * r["predicted_total_ms"]:
        bad.append("%s: total %s is not compute + communication" % (r["command"], r["predicted_total_ms"]))
    argv = shlex.split(r["command"]); argv[0] = binary
    if "--poisson" in argv:  # fit's collectives are the fixed batch's (a Poisson step's, from zero 2 on, vary with its largest share)
        argv.remove("--poisson")
    out = subprocess.run(argv + ["--steps", "1", "--quiet", "--timeline", "none", "--out", "-"], capture_output=True, text=True)
    cb = json.loads(out.stdout)["distributed"]["collective_bytes"]
    runs += 1
    if any(cb[k] != r["collectives"][k]["bytes_per_rank"] for k in ("all_reduce", "reduce_scatter", "all_gather")):
        bad.append("%s: bytes %s, dpprof run's %s" % (r["command"], r["collectives"], cb))
if f["cost_model"]["kind"] == "predicted step time":  # runs of ties: within the error of the run's least total
    err, i, prev = f["cost_model"]["leave_one_shape_out"]["mean_abs_error"], 0, None
    while i < len(rows):
        j = i
        while j < len(rows) and rows[j]["rank"] == rows[i]["rank"]:
            j += 1
        lo = min(x["predicted_total_ms"] for x in rows[i:j])
        if rows[i]["rank"] != i + 1 or any(x["predicted_total_ms"] > lo * (1 + err) + 1e-9 for x in rows[i:j]) or (prev is not None and lo <= prev * (1 + err)):
            bad.append("rank %d: not a run of ties by compute + communication" % rows[i]["rank"])
        prev, i = lo, j
    assert c["ranked"], c
if bad or not rows:
    print("\n".join(bad[:5]) if bad else "no row fits")
    sys.exit(1)
print("%d rows: NCCL's ring relations on %s%s (busbw %.0f GB/s); the bytes dpprof run's in %d runs; %s" % (len(rows), link["name"] if n > K else "-", " + " + net["name"] if K > 1 else "",
      busbw / 1e9, runs, "ranked by compute + communication" if c["ranked"] else "not ranked (flops)"))
PY
}
"$bin" fit --preset tiny --seq 64 --batch 8 --gpus 2 --device H100 --sigma 1 --json "$tmp/g2.json" >"$tmp/g2.txt"; rc=$?
joined "$tmp/g2.txt" >"$tmp/g2.out"
check "--gpus 2 on H100s: a comm ms column, the links named (NVLink 4, the SXM part's), a lower bound, the best row's compute or communication dominating" bash -c \
    "[ $rc -eq 0 ] && grep -q '^rank .* step ms   comm ms ' '$tmp/g2.out' && grep -q '^communication: 2 GPUs on NVLink 4 (H100, H200 SXM), 450 GB/s each way a GPU (--device H100, taken as the SXM part)' '$tmp/g2.out' \
     && grep -q 'lower bound, not a measurement' '$tmp/g2.out' && grep -q 'The best row: compute [0-9]* ms, communication [0-9.]* ms a step: \(compute\|communication\) dominates' '$tmp/g2.out'"
if said=$(comm_check "$tmp/g2.json" 2>&1); then pass "...its rows' communication: ${said##*$'\n'}"; else fail "...its rows' communication: $said"; fi
"$bin" fit --preset tiny --seq 64 --batch 8 --gpus 4 --nodes 2 --device A100-80 --sigma 1 --algo flash_bk,persample --json "$tmp/g4.json" >"$tmp/g4.txt"; rc=$?
joined "$tmp/g4.txt" >"$tmp/g4.out"
check "--gpus 4 --nodes 2 on A100s: NVLink 3 within a node, InfiniBand HDR between (the defaults, said), the network bounding the ring" bash -c \
    "[ $rc -eq 0 ] && grep -q '^communication: 4 GPUs over 2 nodes of 2; within a node NVLink 3 (A100 SXM), 300 GB/s each way a GPU (--device A100-80, taken as the SXM part); between nodes InfiniBand HDR, 200 Gb/s a GPU, 25 GB/s each way (the default; --network NAME for another)' '$tmp/g4.out' \
     && grep -q '\"busbw_bytes_per_s\": 25000000000,' '$tmp/g4.json'"
if said=$(comm_check "$tmp/g4.json" 2>&1); then pass "...its rows' communication: ${said##*$'\n'}"; else fail "...its rows' communication: $said"; fi
"$bin" fit --preset tiny --seq 64 --batch 8 --gpus 4 --nodes 4 --gpu-memory 2G --network ndr --sigma 1 --algo flash_bk --json "$tmp/g5.json" >"$tmp/g5.txt"; rc=$?
joined "$tmp/g5.txt" >"$tmp/g5.out"
check "--gpus 4 --nodes 4 --network ndr, no --device: a GPU a node, the network alone; ranked by flops, communication shown and not ranked, said" bash -c \
    "[ $rc -eq 0 ] && grep -q '^communication: 4 GPUs over 4 nodes of 1; between nodes InfiniBand NDR, 400 Gb/s a GPU, 50 GB/s each way (--network)' '$tmp/g5.out' \
     && grep -q 'Shown (comm ms) but not ranked by: the ranking is by flops' '$tmp/g5.out' && grep -q 'no compute time is predicted here to weigh it against' '$tmp/g5.out' \
     && grep -q '\"link\": null, \"network\": {\"name\": \"ndr\"' '$tmp/g5.json'"
if said=$(comm_check "$tmp/g5.json" 2>&1); then pass "...its rows' communication: ${said##*$'\n'}"; else fail "...its rows' communication: $said"; fi
check "gpt2-small on 4 GPUs of 3 GiB (no --device): PCIe Gen4 assumed and said, the communication shown beside the flops" bash -c \
    "sed ':a;N;\$!ba;s/\n    / /g' '$tmp/b.out' | grep -q '^communication: 4 GPUs on PCIe Gen4 x16 (.*), 32 GB/s each way a GPU (no --device names the GPU: the slowest link of the table assumed)'"
if said=$(comm_check "$tmp/8b.json" 2>&1); then pass "llama-3.1-8b on 8 H100s, its rows' communication: ${said##*$'\n'}"; else fail "llama-3.1-8b on 8 H100s, its rows' communication: $said"; fi
check "one GPU: no comm ms column, \"communication\": null, and no word of communication in the notes" bash -c \
    "! grep -q 'comm ms' '$tmp/h200f.out' && grep -q '\"communication\": null,' '$tmp/h200f.json' && ! grep -qi 'communication' '$tmp/h200f.out'"

# bad input: exit 2, the value named, no file written
badfit() { # expected-text args...
    local text=$1; shift
    local err rc
    err=$("$bin" fit "$@" --json "$tmp/bad.json" 2>&1 >/dev/null); rc=$?; err=${err%%$'\n'*}
    if [ $rc -eq 2 ] && grep -qF -- "$text" <<<"$err" && [ ! -e "$tmp/bad.json" ]; then pass "fit refuses ($*): $err"; else fail "fit ($*): want exit 2 and '$text', got $rc: $err"; fi
    rm -f "$tmp/bad.json"
}
m="--preset tiny --seq 64 --batch 8"
badfit "--seq T is required" --preset tiny --batch 8 --device H100 --sigma 1
badfit "--batch B is required" --preset tiny --seq 64 --device H100 --sigma 1
badfit "give the GPU: --device NAME" $m --sigma 1
badfit "--device 'H10': not in the table (did you mean H100?)" $m --device H10 --sigma 1
badfit "--device H100 and --gpu-memory: give one" $m --device H100 --gpu-memory 80G --sigma 1
badfit "--batch 8 is not a multiple of --gpus 3" $m --gpus 3 --device H100 --sigma 1
badfit "--zero 1: ZeRO shards over GPUs; give --gpus 2 or more" $m --zero 1 --device H100 --sigma 1
badfit "--nodes 3 does not divide --gpus 8: the GPUs are spread evenly over the nodes" $m --gpus 8 --nodes 3 --device H100 --sigma 1
badfit "--nodes 2: the nodes hold the GPUs of --gpus N; give --gpus 2 or more" $m --nodes 2 --device H100 --sigma 1
badfit "--link nvlink4: the link between GPUs; give --gpus 2 or more" $m --link nvlink4 --device H100 --sigma 1
badfit "--link 'nvlnk4': not a link dpprof knows (did you mean nvlink4?; nvlink4, nvlink3, pcie5, pcie4)" $m --gpus 2 --link nvlnk4 --device H100 --sigma 1
badfit "--link ndr: a network between nodes (--network, with --nodes 2 or more), not a link within a node" $m --gpus 2 --link ndr --device H100 --sigma 1
badfit "--network 'infiniband': not a link dpprof knows (ndr, hdr)" $m --gpus 4 --nodes 2 --network infiniband --device H100 --sigma 1
badfit "--network nvlink4: a link within a node (--link), not a network between nodes (ndr, hdr)" $m --gpus 4 --nodes 2 --network nvlink4 --device H100 --sigma 1
badfit "--network ndr: the network between nodes; give --nodes 2 or more" $m --gpus 2 --network ndr --device H100 --sigma 1
badfit "--nccl-mem 1G: NCCL's buffers are those of several GPUs; give --gpus 2 or more" $m --nccl-mem 1G --device H100 --sigma 1
badfit "--nccl-mem 'lots': expected a size under the GPU's memory (512M, 1.5GiB)" $m --gpus 2 --nccl-mem lots --device H100 --sigma 1
badfit "--nccl-mem '90G': expected a size under the GPU's memory" $m --gpus 2 --nccl-mem 90G --device H100 --sigma 1
badfit "--algo 'ghost,gost': 'gost' is not one of" $m --algo ghost,gost --device H100 --sigma 1
badfit "--checkpoint 'none,': an empty or overlong item" $m --checkpoint none, --device H100 --sigma 1
badfit "--zero '0,4': '4' is not one of 0, 1, 2, 3" $m --gpus 2 --zero 0,4 --device H100 --sigma 1
badfit "--lora-rank '8,x': 'x' is not one of" $m --lora-rank 8,x --device H100 --sigma 1
badfit "give the privacy: --target-epsilon E with --dataset-size N" $m --device H100
badfit "--target-epsilon 8 needs --dataset-size N" $m --device H100 --target-epsilon 8
badfit "--target-epsilon 8 and --sigma 1: give one" $m --device H100 --target-epsilon 8 --sigma 1 --dataset-size 1000
badfit "--dataset-size 4 is smaller than the logical batch --batch 8" $m --device H100 --target-epsilon 8 --dataset-size 4
badfit "--accountant both: fit states one epsilon" $m --device H100 --sigma 1 --accountant both
badfit "--epochs '0': expected a number in (0, 1e+06]" $m --device H100 --sigma 1 --epochs 0
badfit "--bench '/nonexistent': not a directory" $m --device H100 --sigma 1 --bench /nonexistent
badfit "heads = 5 does not divide hidden = 64" --preset tiny --heads 5 --seq 64 --batch 8 --device H100 --sigma 1
badfit "--lora-rank" $m --lora-rank 100000 --device H100 --sigma 1
badfit "unknown option '--physical-batch'" $m --physical-batch 2 --device H100 --sigma 1
badout() { # expected-text args...: refused before any work, nothing on standard output
    local text=$1; shift
    local err rc
    err=$("$bin" fit $m --device H100 --sigma 1 "$@" 2>&1 >"$tmp/badout.out"); rc=$?; err=${err%%$'\n'*}
    if [ $rc -eq 2 ] && grep -qF -- "$text" <<<"$err" && [ ! -s "$tmp/badout.out" ]; then pass "fit refuses ($*) before any work: $err"; else fail "fit ($*): want exit 2 and '$text', got $rc: $err"; fi
}
badout "--json '/nonexistent/x.json': cannot write" --json /nonexistent/x.json
badout "--plot '$tmp': is a directory" --plot "$tmp"
badout "are the same file: one would be lost" --json "$tmp/same" --plot "$tmp/same"
badout "--json '-' and --plot '-' are the same file" --json - --plot -
cp tests/hf/smollm2-135m.json "$tmp/model.json"
err=$("$bin" fit --hf-config "$tmp/model.json" --seq 64 --batch 8 --device H100 --sigma 1 --json "$tmp/model.json" 2>&1 >/dev/null); rc=$?
check "fit --json the --hf-config file: refused, the file as it was ($err)" bash -c "[ $rc -eq 2 ] && cmp -s tests/hf/smollm2-135m.json '$tmp/model.json'"
"$bin" fit --help >"$tmp/help.out"; rc=$?
check "fit --help: the options and the device table" bash -c "[ $rc -eq 0 ] && grep -q '^  --device NAME' '$tmp/help.out' && grep -q '^  H200      143771 MiB' '$tmp/help.out' && grep -q '^  --target-epsilon E' '$tmp/help.out'"
check "fit --help: --nodes, --link, --network and the links' table (peak each way a GPU)" bash -c \
    "grep -q '^  --nodes K' '$tmp/help.out' && grep -q '^  --link NAME' '$tmp/help.out' && grep -q '^  --network NAME' '$tmp/help.out' && grep -q '^  nvlink4    450 GB/s  NVLink 4 (H100, H200 SXM)' '$tmp/help.out' && grep -q '^  ndr         50 GB/s  InfiniBand NDR' '$tmp/help.out'"
check "the device table's H100 and H200 are the committed runs' nvidia-smi totals" bash -c \
    "grep -qh '^NVIDIA H100 80GB HBM3, .*, 81559 MiB' data/bench/*/device.txt && grep -qh '^NVIDIA H200, .*, 143771 MiB' data/bench/*/device.txt && grep -q '^  H100       81559 MiB' '$tmp/help.out'"
# the runs the step times rest on: each build named (the day, the commit compiled, its sources: the result's own
# hash, else its folder's provenance file), on the terminal and in the json
h100=$(ls -d data/bench/*-NVIDIA_H100_80GB_HBM3 2>/dev/null | tail -1)
if [ -n "$h100" ] && [ -f "$h100/provenance" ]; then
    read -r _ comp sha < <(grep -v '^#' "$h100/provenance" | head -1)
    day=$(basename "$h100" | cut -c1-10)
    "$bin" fit --preset llama-3.2-3b --seq 2048 --batch 256 --dtype bf16 --device H100 --sigma 1 --json "$tmp/b.json" >"$tmp/b.txt"; rc=$?
    check "fit names what its rates were built from: $day, commit ${comp:0:12}, sources ${sha:0:12} (the folder's provenance)" bash -c \
        "[ $rc -eq 0 ] && tr -s ' \n' ' ' <'$tmp/b.txt' | grep -qF '($day, commit ${comp:0:12}, sources ${sha:0:12} (' && grep -qF '\"built_from\": \"$day, commit ${comp:0:12}, sources ${sha:0:12} (' '$tmp/b.json'"
    # a provenance file it cannot read: refused, by file and line, before the search
    mkdir -p "$tmp/bb" && cp -r data/bench/. "$tmp/bb/" && printf 'not a line\n' >>"$tmp/bb/$(basename "$h100")/provenance"
    n=$(grep -c . "$tmp/bb/$(basename "$h100")/provenance")
    badfit "$(basename "$h100")/provenance:$n: not 'RECORDED-COMMIT COMPILED-COMMIT SHA256'" --preset llama-3.2-3b --seq 2048 --batch 256 --dtype bf16 --device H100 --sigma 1 --bench "$tmp/bb"
else echo "SKIP no committed H100 runs with a provenance file: the rates' builds not checked"; fi
# the paper's macros from fit (experiments/fit.sh): every one has a value, however the terminal's lines wrap; the
# time model's error and the rates' builds are there
bash experiments/fit.sh "$bin" "$tmp/fitsh" >/dev/null 2>&1; rc=$?
empty=$(grep -c '}{}$' "$tmp/fitsh/fit-macros.tex" 2>/dev/null)
check "experiments/fit.sh: status 0, no macro without a value ($empty), loo_mean, loo_max and rates_from given" bash -c \
    "[ $rc -eq 0 ] && [ '$empty' = 0 ] && grep -qE '^\\\\dpdef\\{fit\\}\\{x\\}\\{loo_max\\}\\{[0-9]+\\}$' '$tmp/fitsh/fit-macros.tex' && grep -qE '^\\\\dpdef\\{fit\\}\\{x\\}\\{loo_mean\\}\\{[0-9]+\\}$' '$tmp/fitsh/fit-macros.tex' && grep -q '{rates_from}{20' '$tmp/fitsh/fit-macros.tex'"
# a device.txt with numbers no GPU has: refused by name, not an "inf PiB" context
cp -r data/bench "$tmp/absurd"
d=$(ls "$tmp/absurd" | head -1)
sed -i 's/[0-9.]* GiB free/1e300 GiB free/' "$tmp/absurd/$d/device.txt"
"$bin" fit --preset tiny --seq 64 --batch 8 --sigma 1 --device H100 --bench "$tmp/absurd" >"$tmp/out" 2>&1; rc=$?
check "a device.txt with 1e300 GiB free: exit 2, the file named, no inf in the answer ($(head -c 200 "$tmp/out"))" \
    bash -c "[ $rc = 2 ] && grep -q 'device.txt: memory.total [0-9]* MiB and 1e+300 GiB free are no GPU' '$tmp/out' && ! grep -q 'inf' '$tmp/out'"
