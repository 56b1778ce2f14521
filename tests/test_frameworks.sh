#!/usr/bin/env bash
# tests/test_frameworks.sh - dpprof run --framework pytorch|opacus against PyTorch's own memory, at configurations
# drawn at random (experiments/peers.py draws: layers, widths, heads and kv-heads, vocabulary, tied or not, T, batch
# and physical batch, sdpa or eager, LoRA's rank and targets, a frozen or trained head, bf16, gradient checkpointing,
# Opacus's hooks and ghost clipping):
#  - every draw of data/peers-memory/draws.json (peaks committed: the program's own, every storage logged without a
#    hook, and PyTorch's MemTracker's): dpprof's dry peak within max(1 MiB, 0.1%) of the program's; MemTracker's
#    the same, or (its module hooks keeping more alive under gradient checkpointing) the log run under it showing
#    the difference; the worst case printed;
#  - with a python that has torch, transformers and peft at the committed draws' versions (PEER_PYTHON): fresh
#    draws at a seed of this run's (printed), the tracker run here, and dpprof fit --framework pytorch's physical
#    batch held against the tracker (it fits, one more does not: peers.py fit-check); else one SKIP line.
# needs ./dpprof and python3 (DRAWS: another draws file). run by make test.
set -u
cd "$(dirname "$0")/.."
bin=./dpprof
py=${PEER_PYTHON:-python3}
draws=${DRAWS:-data/peers-memory/draws.json}
. tests/lib.bash

# one line per draw (id, dpprof's peak, the tracker's, the difference, within or not) and the worst, from a draws file
compare() {
    python3 - "$bin" "$1" <<'EOF'
import json, subprocess, sys
bin_, path = sys.argv[1], sys.argv[2]
d = json.load(open(path))
worst, bad = (0, None), 0
for r in d["draws"]:
    p = subprocess.run([bin_, "run", "--backend", "dry", "--steps", "2", "--timeline", "none", "--quiet", "--out", "-"] + r["args"],
                       capture_output=True, text=True)
    if p.returncode:
        print("FAIL draw %s: dpprof refused it: %s" % (r["id"], p.stderr.strip()[:300]))
        bad += 1
        continue
    # the reference: the program's own peak, every storage it allocates logged without a hook (the tracker's where the
    # draw predates the log); MemTracker's beside it, which must agree but where its own module hooks keep more alive
    # (gradient checkpointing over a frozen base), as the same log run under it shows
    got, tracker = json.loads(p.stdout)["breakdown"]["bytes"]["peak"], r["tracker_peak_bytes"]
    want = r.get("log_peak_bytes", tracker)
    tol = max(2**20, 1e-3 * want)
    diff = got - want
    ok = abs(diff) <= tol
    note = ""
    if abs(tracker - want) > tol:
        under = r["log_under_tracker_peak_bytes"]
        ok = ok and abs(under - tracker) <= max(2**20, 1e-3 * tracker)
        note = "; MemTracker %.3f MiB, the log under it %.3f MiB: its hooks keep %.3f MiB more alive" % (tracker / 2**20, under / 2**20, (under - want) / 2**20)
    bad += not ok
    name = r.get("label") or "draw %s" % r["id"]
    if abs(diff) / want >= worst[0]:
        worst = (abs(diff) / want, name, diff)
    print("%s %s: dpprof %.3f MiB, the program %.3f MiB, %+d bytes (%.4f%%; within max(1 MiB, 0.1%%))%s %s" % (
        "PASS" if ok else "FAIL", name, got / 2**20, want / 2**20, diff, 100.0 * diff / want, note, " ".join(r["args"])))
print("worst: %s, %+d bytes (%.4f%%) of %d" % (worst[1], worst[2], 100 * worst[0], len(d["draws"])))
sys.exit(1 if bad or not d["draws"] else 0)
EOF
}

out=$(compare "$draws"); rc=$?
echo "$out" | grep -E '^(PASS|FAIL) '
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["draws"]))' "$draws")
check "the committed draws: $n configurations (at least 40), every one within max(1 MiB, 0.1%) of the program's own peak (and of PyTorch's tracker, or its hooks shown to hold the difference); $(echo "$out" | tail -1)" \
    bash -c '[ $1 = 0 ] && [ $2 -ge 40 ]' _ $rc "$n"

# the study's and the bench's shapes (experiments/peers-memory.conf), each with the loops users write
study=data/peers-memory/study-shapes.json
out=$(compare "$study"); rc=$?
echo "$out" | grep -E '^(PASS|FAIL) '
n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["draws"]))' "$study")
check "the study's and the bench's shapes with PyTorch's loop (sdpa, eager) and Opacus's (hooks, ghost): $n loops, LoRA's included, each within max(1 MiB, 0.1%) of the program's own peak; $(echo "$out" | tail -1)" \
    bash -c '[ $1 = 0 ] && [ $2 -ge 24 ]' _ $rc "$n"

# fresh draws, the tracker run here, where the packages are the committed draws' versions (another version of
# transformers may allocate otherwise: that is a new measurement, not this test's)
want=$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["meta"]; print(m["torch"], m["transformers"], m["peft"])' "$draws")
have=$("$py" -c 'import torch, transformers, peft; print(torch.__version__, transformers.__version__, peft.__version__)' 2>/dev/null)
# peers.py, run again (up to five times) where the Python process dies of a signal: PyTorch on fake tensors now and
# then crashes in its allocator (a crash measures nothing; an exit with a status is kept)
peers() {
    local try rc
    for try in 1 2 3 4 5; do
        "$py" experiments/peers.py "$@"; rc=$?
        [ $rc -lt 128 ] && return $rc
        echo "peers.py $1: killed by signal $((rc - 128)), run again" >&2
    done
    return $rc
}
if [ "$have" = "$want" ]; then
    seed=$(( $(date +%s) % 1000000 ))
    if peers draws --n 2 --seed "$seed" --dpprof "$bin" --out "$tmp/fresh.json" >"$tmp/fresh.log" 2>&1 &&
        peers draws --only ghost --append --n 2 --seed "$seed" --dpprof "$bin" --out "$tmp/fresh.json" >>"$tmp/fresh.log" 2>&1 &&
        peers draws --only checkpoint --append --n 2 --seed "$seed" --dpprof "$bin" --out "$tmp/fresh.json" >>"$tmp/fresh.log" 2>&1 &&
        peers draws --only bf16 --append --n 2 --seed "$seed" --dpprof "$bin" --out "$tmp/fresh.json" >>"$tmp/fresh.log" 2>&1; then
        out=$(compare "$tmp/fresh.json"); rc=$?
        echo "$out" | grep -E '^(PASS|FAIL) '
        check "8 fresh draws (seed $seed; two of them Opacus's ghost clipping, two gradient checkpointing, two Opacus in bf16), the tracker run now: within max(1 MiB, 0.1%); $(echo "$out" | tail -1)" test $rc = 0
    else
        fail "peers.py draws --n 2 (and --only ghost, --only checkpoint, --only bf16 --n 2) --seed $seed: $(tail -3 "$tmp/fresh.log")"
    fi
    # event for event: the walk's second step (a build without the 512-byte rounding) against every storage the loop
    # allocates and frees (peers.py events), frees with nothing between them as a set (autocast frees its cache of
    # casts in its hash table's order)
    if ${CC:-cc} -std=c11 -O1 -DDPPROF_FW_ROUND=1 -I. main.c -o "$tmp/dpprof-exact" -lm 2>"$tmp/cc.err"; then
        for args in "--framework pytorch --checkpoint layers --dtype bf16 --lora-rank 4 --lora-targets q,v --kv-heads 2 --layers 2 --batch 4 --physical-batch 2" \
                    "--framework opacus --algo ghost --sigma 1 --untied --kv-heads 2 --layers 2 --batch 4 --physical-batch 2" \
                    "--framework opacus --algo persample --sigma 1 --tied --kv-heads 1 --layers 2 --batch 3 --physical-batch 1 --attention eager" \
                    "--framework opacus --algo persample --sigma 1 --dtype bf16 --tied --kv-heads 2 --layers 2 --batch 3 --physical-batch 2" \
                    "--framework opacus --algo ghost --sigma 1 --dtype bf16 --untied --kv-heads 2 --layers 2 --batch 4 --physical-batch 2 --lora-rank 4 --lora-targets q,v,gate --frozen-masters" \
                    "--framework opacus --algo persample --sigma 1 --untied --kv-heads 2 --layers 1 --batch 7 --physical-batch 3" \
                    "--framework opacus --algo ghost --sigma 1 --untied --kv-heads 2 --layers 1 --batch 6 --physical-batch 4 --poisson --dataset-size 60" \
                    "--framework opacus --algo persample --sigma 1 --untied --kv-heads 2 --layers 2 --batch 3 --physical-batch 2 --lora-rank 4 --lora-targets q,v,gate --lora-dropout 0.05" \
                    "--framework opacus --algo persample --sigma 1 --untied --dtype bf16 --train-head --kv-heads 2 --layers 2 --batch 2 --lora-rank 4 --lora-targets q,v"; do
            # shellcheck disable=SC2086
            peers events --dpprof "$bin" -- --vocab 300 --hidden 64 --ffn 96 --heads 4 --seq 16 $args >"$tmp/ev.txt" 2>"$tmp/ev.err"; rc=$?
            # shellcheck disable=SC2086
            "$tmp/dpprof-exact" run --backend dry --steps 2 --quiet --out "$tmp/ev.json" --vocab 300 --hidden 64 --ffn 96 --heads 4 --seq 16 $args 2>>"$tmp/ev.err"
            said=$(python3 - "$tmp/ev.txt" "$tmp/ev.json" <<'PY'
import json, sys
t = json.load(open(sys.argv[2]))["timeline"]
mine = [b for b, c, st in zip(t["bytes"], t["category"], t["step"]) if st == 1 and t["categories"][c] != "data"]
log = []
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    n, op = int(line[1:].split()[0]), line[1:].split()[1]
    if n and op not in ("lift_fresh.default", "randint.low"):  # the loop's own x and y, an optimizer's step count
        log.append(n if line[0] == "+" else -n)
def runs(ev):
    out, run = [], []
    for e in ev:
        if e < 0:
            run.append(e)
            continue
        out += sorted(run) + [e]
        run = []
    return out + sorted(run)
log = log[:len(mine)]
a, b = runs(mine), runs(log)
same = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), None)
print("%d events, the log's %d: %s" % (len(mine), len(log), "identical" if same is None and len(a) == len(b) else "first difference at %s" % same))
sys.exit(0 if same is None and len(a) == len(b) and len(a) > 100 else 1)
PY
            ); ok=$?
            check "the walk's second step against the loop's, event for event ($args): $said" test $rc = 0 -a $ok = 0
        done
    else
        fail "a build with -DDPPROF_FW_ROUND=1: $(head -3 "$tmp/cc.err")"
    fi
    # fit's answer in the user's terms against the tracker: the physical batch it gives fits, one more does not
    for args in "--seq 512 --batch 32 --gpu-memory 4G" "--seq 256 --batch 64 --gpu-memory 2G --lora-rank 8 --lora-targets q,k,v,o --dtype bf16" \
                "--framework opacus --seq 256 --batch 64 --gpu-memory 2G --untied --sigma 1 --lora-rank 8 --lora-targets q,v" \
                "--framework opacus --algo ghost --seq 256 --batch 32 --gpu-memory 2G --untied --sigma 1" \
                "--checkpoint layers --seq 512 --batch 64 --gpu-memory 2G --lora-rank 8 --lora-targets q,v" \
                "--framework opacus --seq 256 --batch 32 --gpu-memory 2G --untied --sigma 1 --dtype bf16 --lora-rank 8 --lora-targets q,v --lora-dropout 0.05"; do
        # shellcheck disable=SC2086
        said=$(peers fit-check --dpprof "$bin" -- --vocab 8000 --hidden 512 --layers 4 --heads 8 --kv-heads 4 --ffn 1376 $args 2>&1); rc=$?
        check "fit $args: its physical batch fits (the program's own peak, PyTorch's tracker beside) and one more does not (${said#fit-check * fit\'s })" test $rc = 0
    done
else
    echo "SKIP fresh draws: $py has torch, transformers, peft '${have:-none}', the committed draws were made with '$want'"
fi

# what the walk does not model is refused by name, before any work
for bad in "--framework opacus --algo persample --untied --checkpoint layers:--checkpoint layers under Opacus is not modelled yet" "--dtype bf16 --attention eager:--attention eager is not modelled yet" \
           "--algo flash_bk:non-private loop" "--backend cpu:it takes --backend dry" "--attention dpprof:takes sdpa or eager" \
           "--lora-rank 4 --train-head --tied:modules_to_save copies the head" \
           "--framework opacus --algo ghost --tied:Parameter tying is not supported with Ghost Clipping" "--framework opacus --algo vanilla --untied:grad_sample_mode hooks (algo persample) or ghost (algo ghost)"; do
    opt=${bad%%:*} says=${bad#*:}
    # shellcheck disable=SC2086
    $bin run --framework pytorch --preset tiny $opt --quiet --out "$tmp/bad.json" 2>"$tmp/err"; rc=$?
    check "--framework pytorch $opt: refused (exit $rc), saying '$says', no result written" \
        bash -c '[ $1 != 0 ] && grep -q -- "$2" "$3" && [ ! -e "$4" ]' _ $rc "$says" "$tmp/err" "$tmp/bad.json"
done
# an adapter config as PEFT saves it (lora_dropout 0.05): the frameworks walk its dropout (more memory than without)
for fw in "pytorch" "opacus --algo persample --sigma 1 --untied"; do
    # shellcheck disable=SC2086
    $bin run --framework $fw --preset tiny --peft-config tests/peft/causal-lm-qv.json --quiet --out "$tmp/drop.json" 2>"$tmp/err"; rc=$?
    # shellcheck disable=SC2086
    $bin run --framework $fw --preset tiny --peft-config tests/peft/causal-lm-qv.json --lora-dropout 0 --quiet --out "$tmp/nodrop.json" 2>>"$tmp/err"
    check "--framework ${fw%% *} --peft-config tests/peft/causal-lm-qv.json (lora_dropout 0.05): runs (exit $rc), config.lora_dropout 0.05, its dropout's memory beside the run without" python3 -c '
import json, sys
d, z = (json.load(open(f)) for f in sys.argv[1:3])
sys.exit(not (d["config"]["lora_dropout"] == 0.05 and not d["config"]["unmodelled"] and d["peak_memory_mb"] > z["peak_memory_mb"]))' "$tmp/drop.json" "$tmp/nodrop.json"
done
$bin run --attention eager --preset tiny --quiet --out "$tmp/bad.json" 2>"$tmp/err"; rc=$?
check "--attention eager without --framework pytorch: refused (exit $rc)" bash -c '[ $1 != 0 ] && grep -q "takes --framework pytorch" "$2"' _ $rc "$tmp/err"

# dpprof plot fit-check: the committed records drawn; a file that is not a list of records refused, naming it
$bin plot fit-check data/peers-memory/fit-check.json --out "$tmp/fit.png" 2>"$tmp/err"; rc=$?
check "dpprof plot fit-check data/peers-memory/fit-check.json: a PNG (exit $rc)" bash -c '[ $1 = 0 ] && [ "$(head -c 8 "$2" | od -An -tx1 | tr -d " ")" = 89504e470d0a1a0a ]' _ $rc "$tmp/fit.png"
echo '{"fit": 1}' >"$tmp/notlist.json"
$bin plot fit-check "$tmp/notlist.json" --out "$tmp/bad.png" 2>"$tmp/err"; rc=$?
check "dpprof plot fit-check of a file that is no list of records: exit $rc, the file named, no PNG" bash -c '[ $1 = 2 ] && grep -q notlist.json "$2" && [ ! -e "$3" ]' _ $rc "$tmp/err" "$tmp/bad.png"

# Opacus's physical batches: BatchMemoryManager's near-equal parts (7 at most 3 a part: 3, 2, 2); under Poisson
# sampling each step's draw in the result, split the same way; an empty draw refused by name (Hugging Face's model
# cannot run a batch of 0 samples)
$bin run --framework opacus --algo persample --sigma 1 --preset tiny --untied --batch 7 --physical-batch 3 --steps 1 --quiet --out "$tmp/split.json" 2>"$tmp/err"; rc=$?
check "--framework opacus --batch 7 --physical-batch 3: np.array_split's parts 3, 2, 2 (each part's ids and labels), exit $rc" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
t, T = d["timeline"], d["config"]["seq"]
data = [b for b, c, st in zip(t["bytes"], t["category"], t["step"]) if t["categories"][c] == "data" and b > 0]
sys.exit(data != [n * T * 8 for n in (3, 3, 2, 2, 2, 2)])' "$tmp/split.json"
$bin run --framework opacus --algo persample --sigma 1 --preset tiny --untied --batch 8 --physical-batch 3 --poisson --dataset-size 100 --steps 4 --quiet --out "$tmp/pois.json" 2>"$tmp/err"; rc=$?
check "--framework opacus --poisson: each step's draw in privacy.batch_sizes, ceil(L / 3) forward passes a step, an epsilon (exit $rc)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sizes = d["privacy"]["batch_sizes"]
fw = d["phases"]["forward"]["count"]
sys.exit(not (len(sizes) == 4 and fw == sum(-(-L // 3) for L in sizes) and len(set(sizes)) > 1 and d["privacy"]["epsilon"] > 0))' "$tmp/pois.json"
$bin run --framework opacus --algo persample --sigma 1 --preset tiny --untied --batch 2 --poisson --dataset-size 40 --seed 1 --steps 2 --quiet --out "$tmp/empty.json" 2>"$tmp/err"; rc=$?
check "--framework opacus --poisson drawing an empty batch: exit $rc, the step and Hugging Face's model named" \
    bash -c '[ $1 != 0 ] && grep -q "drew an empty batch at step 1" "$2" && grep -q "LlamaForCausalLM" "$2"' _ $rc "$tmp/err"

# an Opacus run's result: its per-sample gradients in the breakdown, its privacy the Gaussian mechanism at its sigma
$bin run --framework opacus --algo persample --sigma 1 --preset tiny --untied --batch 8 --physical-batch 4 --steps 2 --dataset-size 1000 --quiet --out "$tmp/op.json" 2>"$tmp/err"; rc=$?
check "--framework opacus: per-sample gradients at the peak, the privacy of sigma 1 (exit $rc)" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(not (d["breakdown"]["per_sample_gradients_mb"] > 0 and d["privacy"]["sigma"] == 1 and d["privacy"]["mechanism"].startswith("gaussian") and d["config"]["framework"] == "opacus"))' "$tmp/op.json"
