#!/usr/bin/env bash
# tests/test_peers.sh - the peer harness (experiments/peers.py) on the cpu, at a tiny shape:
#  - dpprof's --dump of one step of per-sample, ghost and book-keeping (ghost, flash) clipping, loaded by LlamaForCausalLM.from_pretrained in float64,
#    agrees with PyTorch's per-sample loop on per-sample losses, norms, clip factors and the clipped sum, and
#    with Opacus's per-sample norms (an independent check of dpprof's arithmetic);
#  - a dump with one wrong number fails the check;
#  - peers.py accountant: dpprof's tight accountant against dp_accounting's PLD over a reduced grid;
#  - peers.py run (PyTorch, Opacus per-sample, Opacus ghost) writes results that hold to docs/result.schema.json,
#    and the checker fails a peer result without its memory; peers.py table reads them; bad options are refused.
# needs ./dpprof, build/schema_check and a python with torch, transformers and safetensors (PEER_PYTHON, default
# python3; opacus and dp_accounting for their parts): one SKIP line each where they are missing. run by make test.
set -u
cd "$(dirname "$0")/.."
bin=./dpprof
sc=build/schema_check
schema=docs/result.schema.json
py=${PEER_PYTHON:-python3}
peers=experiments/peers.py
. tests/lib.bash

# the tight accountant against dp_accounting's over the reduced grid (dp_accounting alone needed)
if "$py" -c 'import dp_accounting' 2>/dev/null; then
    "$py" "$peers" accountant --grid reduced --dpprof "$bin" --out "$tmp/pld-grid.tsv" 2>"$tmp/pld-grid.err"; rc=$?
    check "peers.py accountant --grid reduced: at 12 points dpprof's PLD never below dp_accounting's optimistic estimate or the exact value (q 1), nor below its pessimistic bound at the same interval by more than 1e-5 where epsilon is at most 100 (rc $rc; $(tail -1 "$tmp/pld-grid.err"))" \
        bash -c '[ $1 = 0 ] && [ "$(grep -c "	pld	" "$2")" = 12 ]' _ $rc "$tmp/pld-grid.tsv"
    "$py" "$peers" accountant --tolerance -1 >/dev/null 2>"$tmp/err"
    check "accountant: a negative tolerance refused (exit 2)" bash -c '[ $1 = 2 ] && grep -q -- "--tolerance -1" "$2"' _ $? "$tmp/err"
else
    echo "SKIP the accountant grid: $py cannot import dp_accounting"
fi
# the committed peers' memory (data/peers-memory/) still reads as this dpprof's results: the report's figures and
# table, and the reconciliation table (python3, stdlib only), as make figures draws them
mkdir -p "$tmp/pmd" && cp data/peers-memory/*.json "$tmp/pmd/"
"$bin" report experiments/peers-memory.conf --results "$tmp/pmd" --figures "$tmp/pmd/fig" --tables "$tmp/pmd/tab" >"$tmp/pmd.out" 2>&1
check "the committed peers' memory: dpprof report uses every result (figures, table; $(grep -c 'skipped\|not a dpprof' "$tmp/pmd/summary.txt") skipped)" bash -c '
    [ -s "$1/fig/peers-memory-trainer.png" ] && [ -s "$1/fig/peers-memory-longctx.png" ] && ! grep -q "skipped\|not a dpprof" "$1/summary.txt" &&
    [ "$(grep -cF "pytorch\\_sdpa" "$1/tab/peers-memory-table.tex")" = 1 ]' _ "$tmp/pmd"
python3 "$peers" memory-table "$tmp/pmd" --conf experiments/peers-memory.conf --tables "$tmp/pmd/tab" >/dev/null 2>&1
check "the committed peers' memory: its reconciliation table, every PyTorch reconciliation 0 bytes unexplained" bash -c '
    sed -n "1,/^## /p" "$1/reconciliation.md" >"$1/harness.md"
    [ -s "$1/tab/peers-memory-reconcile-table.tex" ] && grep "| pytorch_" "$1/harness.md" | grep -v "not reconciled" | grep -q . &&
    ! grep "| pytorch_" "$1/harness.md" | grep -v "not reconciled" | grep -qv "| backward | 0 |"' _ "$tmp/pmd"
check "the committed peers' memory: the loops users write at the same shapes, 24 rows, dpprof --framework within 1 MiB of each" python3 -c '
import sys
text = open(sys.argv[1]).read()
sec = text.split("## The loops users write, at the same shapes", 1)
rows = [l.split("|") for l in sec[1].splitlines() if l.startswith("| ") and not l.startswith("| shape")] if len(sec) == 2 else []
sys.exit(not (len(rows) == 24 and all(abs(int(r[6])) < 2**20 for r in rows)))' "$tmp/pmd/reconciliation.md"
check "the committed peers' memory: the versions the paper's caption names, one per library" bash -c '
    grep -Eq "^.dpdef.peers-memory-versions..x..versions..opacus [0-9.]+, peft [0-9.]+, torch [0-9.]+[^,]*, transformers [0-9.]+.$" "$1/tab/peers-memory-versions-macros.tex"' _ "$tmp/pmd"
if ! "$py" -c 'import torch, transformers, safetensors' 2>/dev/null; then
    echo "SKIP the peer harness: $py cannot import torch, transformers and safetensors (set PEER_PYTHON)"
    exit 0
fi
have_opacus=0
"$py" -c 'import opacus' 2>/dev/null && have_opacus=1
export OMP_NUM_THREADS=1 TRANSFORMERS_VERBOSITY=error TOKENIZERS_PARALLELISM=false

tiny="--preset tiny --seq 16 --batch 4 --steps 1 --backend cpu --quiet --timeline none"
# every dp algorithm, flat clipping at a bound that clips some samples and not others, no noise (the dump's
# gradients are the clipped sum before noise either way)
for algo in persample ghost ghost_bk flash_bk; do
    d=$tmp/dump-$algo
    if ! "$bin" run $tiny --algo "$algo" --max-grad-norm 3 --sigma 0 --dump "$d" --out "$tmp/$algo.json" 2>"$tmp/err"; then
        fail "$algo: dpprof run --dump failed: $(head -c 300 "$tmp/err")"
        continue
    fi
    out=$("$py" "$peers" check "$d" 2>&1)
    rc=$?
    n=$(grep -c '^PASS' <<<"$out")
    check "$algo: the dump against PyTorch float64 (from_pretrained): $n checks pass (rc $rc)$(grep '^FAIL' <<<"$out" | head -2 | tr '\n' ' ')" \
        test "$rc" -eq 0 -a "$n" -ge $((4 + have_opacus))
done
# the clip bound really clips: some clip factors below 1, some at 1 (else the check above is weaker than it says)
check "the bound clips some samples and not others" "$py" -c '
import json, sys
c = json.load(open(sys.argv[1]))["clip_factor"]
sys.exit(0 if min(c) < 0.999 and max(c) == 1.0 else 1)' "$tmp/dump-ghost/step.json"

# from_pretrained loads the dump as it is (config.json, tied or untied head) and reproduces the losses
check "LlamaForCausalLM.from_pretrained(dump) reproduces dpprof's per-sample losses" "$py" -c '
import json, sys, torch, transformers
from safetensors.torch import load_file
d = sys.argv[1]
m = transformers.LlamaForCausalLM.from_pretrained(d, dtype=torch.float64, attn_implementation="eager")
b = load_file(d + "/batch.safetensors")
assert b["tokens"].dtype == torch.int64 and b["targets"].dtype == torch.int64, "int64 tokens and targets"
ref = json.load(open(d + "/step.json"))["per_sample_loss"]
with torch.no_grad():
    for i, r in enumerate(ref):
        l = torch.nn.functional.cross_entropy(m(input_ids=b["tokens"][i:i+1]).logits[0], b["targets"][i])
        assert abs(float(l) - r) <= 1e-5 * abs(r), (i, float(l), r)' "$tmp/dump-ghost"

# a wrong number fails: one per-sample norm 1% off; one gradient element changed; one target changed
bad=$tmp/bad-norm; cp -r "$tmp/dump-ghost" "$bad"
"$py" -c '
import json, sys
p = sys.argv[1] + "/step.json"; s = json.load(open(p)); s["per_sample_norm"][1] *= 1.01
json.dump(s, open(p, "w"))' "$bad"
out=$("$py" "$peers" check "$bad" 2>&1)
check "a per-sample norm 1% off fails the check" bash -c '[ $1 -eq 1 ] && grep -q "^FAIL per-sample gradient norms" <<<"$2"' _ $? "$out"
bad=$tmp/bad-grad; cp -r "$tmp/dump-ghost" "$bad"
"$py" -c '
import sys, torch
from safetensors.torch import load_file, save_file
p = sys.argv[1] + "/grads.safetensors"; g = load_file(p); k = sorted(g)[0]; g[k].view(-1)[0] += 1e-2 * (g[k].norm() + 1)
save_file(g, p)' "$bad"
out=$("$py" "$peers" check "$bad" 2>&1)
check "a clipped-sum element changed fails the check" bash -c '[ $1 -eq 1 ] && grep -q "^FAIL the clipped sum" <<<"$2"' _ $? "$out"
bad=$tmp/bad-target; cp -r "$tmp/dump-ghost" "$bad"
"$py" -c '
import sys
from safetensors.torch import load_file, save_file
p = sys.argv[1] + "/batch.safetensors"; b = load_file(p); b["targets"][0, 3] = (b["targets"][0, 3] + 1) % 64
save_file(b, p)' "$bad"
out=$("$py" "$peers" check "$bad" 2>&1)
check "a target changed fails the check (the losses)" bash -c '[ $1 -eq 1 ] && grep -q "^FAIL per-sample losses" <<<"$2"' _ $? "$out"
out=$("$py" "$peers" check "$tmp" 2>&1)
check "a folder that is no dump is refused (exit 2, named)" bash -c '[ $1 -eq 2 ] && grep -q "not a dpprof --dump" <<<"$2"' _ $? "$out"

# the peers run: results in dpprof's schema
r=$tmp/peers; mkdir -p "$r"
opts="--preset tiny --seq 16 --batch 4 --physical-batch 2 --steps 2 --max-grad-norm 1 --sigma 1"
runs=("pytorch vanilla")
[ $have_opacus = 1 ] && runs+=("opacus persample" "opacus ghost") || echo "SKIP Opacus's runs: $py cannot import opacus"
for fa in "${runs[@]}"; do
    set -- $fa
    out=$("$py" "$peers" run --framework "$1" --algo "$2" --device cpu --out "$r/$1-$2.json" -- $opts 2>&1)
    check "peers.py run $1 $2 on the cpu: ok (rc $?) $(tail -c 300 <<<"$out" | tr '\n' ' ')" \
        grep -q '"status": "ok"' "$r/$1-$2.json"
done
"$bin" run $opts --backend cpu --algo ghost --quiet --out "$r/dpprof-ghost.json"
# the peers' memory on fake tensors (no GPU): PyTorch sdpa and eager, Opacus per-sample and ghost
fakes=("pytorch vanilla sdpa" "pytorch vanilla eager")
[ $have_opacus = 1 ] && fakes+=("opacus persample sdpa" "opacus ghost sdpa")
for fa in "${fakes[@]}"; do
    set -- $fa
    out=$("$py" "$peers" memory --framework "$1" --algo "$2" --attention "$3" --out "$r/fake-$1-$2-$3.json" -- $opts 2>&1)
    check "peers.py memory $1 $2 $3: ok, a peak and its categories summing to it ($(tail -c 200 <<<"$out" | tr '\n' ' '))" "$py" -c '
import json, sys
j = json.load(open(sys.argv[1]))
b = j["breakdown"]["bytes"]
assert j["status"] == "ok" and j["meta"]["method"] == "fake-tensor tracker" and b["peak"] > 0
assert sum(v for k, v in b.items() if k != "peak") == b["peak"], b
assert j["throughput"]["flops_per_step"] > 0' "$r/fake-$1-$2-$3.json"
done
# the reconciliation: peer - dpprof = named terms + unexplained: at the tiny shape within 1 MiB; at a shape with
# grouped-query attention, one and two physical batches, PyTorch's exact to the byte and Opacus's within 1 KiB (its
# per-sample norms and clip factors, b floats a layer, are in no formula)
recs=("pytorch vanilla sdpa" "pytorch vanilla eager")
[ $have_opacus = 1 ] && recs+=("opacus persample sdpa" "opacus ghost sdpa")
gqa="--vocab 1000 --hidden 128 --ffn 176 --layers 2 --heads 8 --kv-heads 2 --seq 32 --batch 4 --untied --steps 1 --sigma 1"
for fa in "${recs[@]}"; do
    set -- $fa
    "$py" "$peers" memory --framework $1 --algo $2 --attention $3 --reconcile --out "$r/rec-tiny-$1-$2-$3.json" -- $opts >"$tmp/rec.out" 2>&1
    check "reconcile $1 $2 $3, tiny: the terms sum to the difference, unexplained within 1 MiB ($(grep unexplained "$tmp/rec.out"))" "$py" -c '
import json, sys
r = json.load(open(sys.argv[1]))["reconciliation"]
assert r["difference_bytes"] == r["peer_peak_bytes"] - r["dpprof_peak_bytes"]
assert r["difference_bytes"] == sum(t["bytes"] for t in r["terms"]) + r["unexplained_bytes"]
assert abs(r["unexplained_bytes"]) <= 2**20 and any(t["bytes"] for t in r["terms"] if t["name"].startswith("workspace"))' "$r/rec-tiny-$1-$2-$3.json"
    lim=0; [ $1 = opacus ] && lim=1024
    for pb in 4 2; do
        "$py" "$peers" memory --framework $1 --algo $2 --attention $3 --reconcile --out "$tmp/rec-gqa.json" -- $gqa --physical-batch $pb >"$tmp/rec.out" 2>&1
        check "reconcile $1 $2 $3, grouped-query attention, physical batch $pb of 4: unexplained at most $lim bytes ($(grep unexplained "$tmp/rec.out"))" \
            "$py" -c 'import json, sys; sys.exit(abs(json.load(open(sys.argv[1]))["reconciliation"]["unexplained_bytes"]) > int(sys.argv[2]))' "$tmp/rec-gqa.json" $lim
    done
done
# eager at a long sequence: the peak in the last layer's softmax backward (its T x T gradients), exact to the byte
"$py" "$peers" memory --framework pytorch --algo vanilla --attention eager --reconcile --out "$tmp/rec-long.json" -- \
    --vocab 1000 --hidden 128 --ffn 176 --layers 2 --heads 8 --kv-heads 2 --seq 1024 --batch 1 --untied --steps 1 >"$tmp/rec.out" 2>&1
check "reconcile pytorch vanilla eager, T 1024: the peak in the softmax backward, unexplained 0 bytes ($(grep unexplained "$tmp/rec.out"))" \
    bash -c 'grep -q "softmax backward" "$1" && grep -q "unexplained (0 bytes)" "$1"' _ "$tmp/rec.out"
# Opacus's ghost at a long sequence: the peak in its first backward at the head, its two T x T Grams live
if [ $have_opacus = 1 ]; then
    "$py" "$peers" memory --framework opacus --algo ghost --reconcile --out "$tmp/rec-gh.json" -- \
        --vocab 1000 --hidden 128 --ffn 176 --layers 2 --heads 8 --kv-heads 2 --seq 1024 --batch 2 --untied --steps 1 --sigma 1 >"$tmp/rec.out" 2>&1
    check "reconcile opacus ghost, T 1024: the peak at the head's Grams, unexplained at most 1024 bytes ($(grep unexplained "$tmp/rec.out"))" \
        "$py" -c 'import json, sys; r = json.load(open(sys.argv[1]))["reconciliation"]
sys.exit(not (abs(r["unexplained_bytes"]) <= 1024 and any(t["name"].startswith("ghost'"'"'s norms") for t in r["terms"])))' "$tmp/rec-gh.json"
fi
"$py" "$peers" memory --framework pytorch --algo vanilla --reconcile --out "$tmp/x.json" -- --preset tiny --dtype bf16 >/dev/null 2>"$tmp/err"
check "--reconcile refuses what its formulas do not cover (bf16: exit 2)" bash -c '[ $1 -eq 2 ] && grep -q "reconcile" "$2"' _ $? "$tmp/err"
# LoRA through peft on fake tensors: the adapters apart, as dpprof counts them
if ! "$py" -c 'import peft' 2>/dev/null; then
    echo "SKIP peers.py memory with LoRA: $py cannot import peft"
else
"$py" "$peers" memory --framework pytorch --algo vanilla --out "$r/fake-lora.json" -- --preset tiny --seq 16 --batch 4 --lora-rank 4 >"$tmp/lora.out" 2>&1
check "peers.py memory with LoRA (peft): ok, the adapters in lora ($(tail -c 160 "$tmp/lora.out" | tr '\n' ' '))" "$py" -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["status"] == "ok" and j["breakdown"]["bytes"]["lora"] > 0 and j["meta"]["trainable_count"] < j["meta"]["param_count"]' "$r/fake-lora.json"
fi
# an experiment file's dpprof and peer runs (memory-sweep), the reconciliation table, and dpprof report's figure of them
if [ $have_opacus = 1 ]; then
    cat >"$tmp/pm.conf" <<'CONF'
name = peers-memory
description = the peers beside dpprof at the tiny shape
base = --backend dry --steps 1 --sigma 1.0 --dtype fp32 --timeline none
axis shape = tiny: --preset tiny --seq 16 --batch 4 --physical-batch 2
axis run = dpprof_vanilla: --algo vanilla --sigma 0 | pytorch_sdpa: --algo vanilla --sigma 0 | dpprof_ghost: --algo ghost | opacus_ghost: --algo ghost
figure tiny = stacked group=run where=shape:tiny
table = pivot rows=run cols=shape value=peak_gib
CONF
    "$py" "$peers" memory-sweep "$tmp/pm.conf" --out-dir "$tmp/pm" --tables "$tmp/pmgen" >"$tmp/pm.out" 2>&1
    check "peers.py memory-sweep: dpprof's runs and the peers', each reconciled ($(tail -n 2 "$tmp/pm.out" | tr '\n' ' '))" bash -c '
        ls "$1"/peers-memory-tiny-{dpprof_vanilla,pytorch_sdpa,dpprof_ghost,opacus_ghost}.json >/dev/null &&
        grep -q "| tiny | pytorch_sdpa | .* | backward | 0 |" "$1/reconciliation.md" && grep -qF "opacus\\_ghost" "$2/peers-memory-reconcile-table.tex"' _ "$tmp/pm" "$tmp/pmgen"
    "$py" "$peers" memory-sweep "$tmp/pm.conf" --out-dir "$tmp/pm" >"$tmp/pm.out" 2>&1
    check "peers.py memory-sweep resumes: a peer's result of status ok is kept" grep -q "opacus_ghost: done before" "$tmp/pm.out"
    "$bin" report "$tmp/pm.conf" --results "$tmp/pm" --figures "$tmp/pmfig" --tables "$tmp/pmgen" >"$tmp/rep.out" 2>&1
    check "dpprof report draws the peers beside dpprof by category ($(tail -n 1 "$tmp/rep.out"))" test -s "$tmp/pmfig/peers-memory-tiny.png"
fi
out=$("$sc" "$schema" "$r"/*.json 2>&1)
check "the peers' and dpprof's results hold to the schema: $(grep -c '^PASS' <<<"$out") of $(ls "$r"/*.json | wc -l) $(grep '^FAIL' <<<"$out" | head -2 | tr '\n' ' ')" \
    test -z "$(grep '^FAIL' <<<"$out")" -a "$(grep -c '^PASS' <<<"$out")" -eq "$(ls "$r"/*.json | wc -l)"
check "the peer result says its framework, algorithm and versions" "$py" -c '
import json, sys
j = json.load(open(sys.argv[1]))
assert j["config"]["framework"] == "pytorch" and j["config"]["algo"] == "vanilla"
assert j["meta"]["torch"] and j["meta"]["transformers"] and j["throughput"]["tokens_per_s"] > 0
assert len(j["losses"]) == j["config"]["warmup"] + j["config"]["steps"]' "$r/pytorch-vanilla.json"
"$py" -c '
import json, sys
j = json.load(open(sys.argv[1])); del j["memory"]; json.dump(j, open(sys.argv[2], "w"))' "$r/pytorch-vanilla.json" "$tmp/nomem.json"
check "the schema fails a peer result without its memory" bash -c '"$1" "$2" "$3" 2>&1 | grep -q "^FAIL"' _ "$sc" "$schema" "$tmp/nomem.json"
out=$("$py" "$peers" table "$r" 2>&1)
check "peers.py table lists the peers and dpprof at one shape" bash -c 'grep -q "^| pytorch | vanilla | ok" <<<"$1" && grep -q "^| dpprof | ghost | ok" <<<"$1"' _ "$out"
# bad options: refused before any work, nothing written
"$py" "$peers" run --framework pytorch --algo ghost --device cpu --out "$tmp/x.json" -- --preset tiny >/dev/null 2>"$tmp/err"
check "an algorithm the framework does not run is refused (exit 2)" bash -c '[ $1 -eq 2 ] && grep -q "pytorch runs vanilla" "$2" && [ ! -e "$3" ]' _ $? "$tmp/err" "$tmp/x.json"
"$py" "$peers" run --framework pytorch --algo vanilla --device cpu --out "$tmp/x.json" -- --preset tiny --heads 5 >/dev/null 2>"$tmp/err"
check "a configuration dpprof refuses is refused (exit 2, dpprof's reason)" bash -c '[ $1 -eq 2 ] && grep -q "refused" "$2" && [ ! -e "$3" ]' _ $? "$tmp/err" "$tmp/x.json"
"$py" "$peers" run --framework opacus --algo ghost --device cpu --out "$tmp/x.json" -- --preset tiny --lora-rank 2 >/dev/null 2>"$tmp/err"
check "LoRA is refused (exit 2, the peers run full fine-tuning)" bash -c '[ $1 -eq 2 ] && grep -q -- "--lora-rank 2" "$2" && [ ! -e "$3" ]' _ $? "$tmp/err" "$tmp/x.json"
