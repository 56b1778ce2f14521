#!/usr/bin/env python3
"""experiments/peers.py - dpprof's configurations in PyTorch and Opacus: side by side on one GPU, or their memory on fake tensors.

    peers.py run --framework F --algo A --out FILE.json [--device cuda|cpu] [--dpprof BIN] -- DPPROF_RUN_OPTIONS
    peers.py check DUMP_DIR [--tolerance 1e-5]
    peers.py memory --framework F --algo A [--attention sdpa|eager] [--reconcile] --out FILE.json -- DPPROF_RUN_OPTIONS
    peers.py memory-sweep EXPERIMENT.conf --out-dir DIR [--tables DIR] [--only TEXT]
    peers.py memory-table DIR [--conf EXPERIMENT.conf] [--tables DIR]
    peers.py table DIR [DIR ...]
    peers.py accountant [--grid full|reduced] [--out FILE.tsv]
    peers.py draws [--n 48] [--seed S] [--only ghost|tied|checkpoint|bf16|...] [--append] --out FILE.json
    peers.py draws --conf EXPERIMENT.conf [--part K --parts N] --out FILE.json
    peers.py fit-check [--out FILE.json] [--label TEXT] -- DPPROF_FIT_OPTIONS
    peers.py events -- DPPROF_RUN_OPTIONS


run    builds the model of a dpprof configuration (the options of `dpprof run`, read back from a dry run of
       it) as a Hugging Face LlamaForCausalLM (SDPA attention, the same shapes, the same dtype policy:
       --dtype bf16 is bf16 autocast over fp32 master weights) and trains it at the same batch, physical
       batch, sequence length, steps (warm-up first, untimed), sigma, C and optimizer:
         --framework pytorch --algo vanilla     no privacy
         --framework opacus  --algo persample   Opacus's per-sample gradients (GradSampleModule, hooks)
         --framework opacus  --algo ghost       Opacus's ghost clipping (GradSampleModuleFastGradientClipping)
       It writes one result JSON in dpprof's schema: status ok | oom | error, step times (CUDA events on
       cuda), tokens/s, the allocator's peak allocated and reserved bytes and the driver's use, versions.
check  loads a dpprof --dump (config.json, model.safetensors, batch.safetensors, grads.safetensors,
       step.json) into PyTorch in float64 and compares per-sample losses, per-sample gradient norms, clip
       factors and the clipped sum with dpprof's; with Opacus importable, Opacus's per-sample norms too.
       Exit 1 when anything differs by more than the tolerance (relative).
memory runs the same configuration's steps on fake tensors (FakeTensorMode: shapes, no data, no GPU) under
       PyTorch's MemTracker and FlopCounterMode: the peak per phase by category (mapped to dpprof's) and the
       flops, one result JSON (meta.method "fake-tensor tracker", the patches fake tensors need named).
       --reconcile (fp32, full fine-tuning; PyTorch, Opacus per-sample and ghost): dpprof's dry peak of the
       configuration beside it and the difference split into named policy terms plus what is unexplained
       (docs/peers.md).
memory-sweep
       an experiment file's configurations (experiments/peers-memory.conf): runs named dpprof_ALGO by dpprof
       sweep (dry), pytorch_sdpa, pytorch_eager, opacus_persample and opacus_ghost by `memory --reconcile`,
       each in its own process (a result of status ok is kept: a rerun resumes); then memory-table.
memory-table
       DIR/reconciliation.md (each peer's peak beside dpprof's, the ratio, FLOPs, every term) and with
       --tables NAME-reconcile-table.tex and NAME-versions-macros.tex, from the results in DIR; the standard library only.
table  prints, per shape, each peer and each dpprof result of the same shape found in DIRs (their JSON):
       tokens/s, peak GiB (allocator, driver), ratio to PyTorch without privacy.
accountant
       dpprof's tight accountant (`dpprof epsilon --accountant pld`) against dp_accounting's PLD over a grid of
       sample rates q 1e-4..1, noise multipliers 0.4..5, 1..1e5 steps, delta 1e-5 and 1e-8 (--grid full: 200
       points; reduced: 12): dp_accounting at dpprof's own interval, pessimistic (connect the dots: an upper
       bound by the same method) and optimistic (privacy buckets: a lower estimate), and at q = 1 the exact
       epsilon of the Gaussian mechanism composed. One line a point with both times; exit 1 where dpprof is
       below the optimistic estimate or the exact value, or, where epsilon is at most 100, below the
       pessimistic bound by more than --tolerance (relative; past 100 dp_accounting's is above the exact
       value by about 1).
draws  configurations drawn at random (layers, widths, heads and kv-heads, vocabulary, tied or not, T, batch and
       physical batch, sdpa or eager, LoRA's rank and targets, a frozen or trained head, fp32 or bf16 autocast, under
       LoRA with the base loaded in bf16 or fp32; --only: Opacus's ghost clipping, its hooks with a tied head, Opacus in bf16, Hugging
       Face's gradient checkpointing), each run for two steps of the loop a PyTorch user writes (loss =
       model(input_ids=x, labels=y).loss under torch.autocast where bf16; loss.backward(); after the physical batches
       opt.step(); opt.zero_grad(set_to_none=True); Hugging Face's defaults; Opacus's as its tutorials write it) on
       fake tensors, twice: under a log of every storage (the program's own peak: no hook installed) and under
       PyTorch's MemTracker (with the log inside it: what the program holds with the tracker's hooks). One JSON of
       each draw's `dpprof run --framework` options and the three peaks, which tests/test_frameworks.sh holds dpprof's
       walk against; --append adds a batch of draws (its seed in meta.batches). --conf: no draws, each shape of an
       experiment file with each peer's loop (PyTorch sdpa and eager, Opacus's hooks and ghost clipping), resumed
       where --out has some; --part K --parts N runs every N-th from the K-th.
fit-check
       `dpprof fit --framework pytorch DPPROF_FIT_OPTIONS`'s answer (or --framework opacus's, given) held against
       that framework's loop: the best row's physical batch b and b + 1 each run (two steps, fake tensors, as draws
       runs them); the program's own peak plus fit's context must fit the device at b and not at b + 1 (where b + 1
       is within the batch); MemTracker's peak recorded beside. Beside it, fit's answer for dpprof's own engine (the
       same algorithm, no checkpointing). Prints one line, exit 1 where it does not hold;
       --out appends the record to a JSON list, which `dpprof plot fit-check` draws.
events the loop of draws at one configuration (`dpprof run --framework pytorch`'s options), with every storage its
       second step allocates ("+BYTES op shape dtype") and frees ("-BYTES op") printed in order, the phases marked:
       what dpprof's walk of the loop (docs/frameworks.md) was written against, event for event.

Needs torch and transformers (and opacus for --framework opacus, peft for LoRA); dp_accounting for accountant;
stdlib otherwise.
"""
import argparse
import datetime
import glob
import json
import math
import os
import platform
import random
import shlex
import subprocess
import sys
import tempfile
import time
import warnings

# Opacus's hooks fire on module outputs when no input needs a gradient (token ids): expected, said once per step
warnings.filterwarnings("ignore", message="Full backward hook is firing")
ALGOS = {"pytorch": ("vanilla",), "opacus": ("persample", "ghost")}
# options of dpprof run the peers drop (0: a flag, 1: takes a value): what only means something to dpprof on a
# GPU or for its outputs, the algorithm (the peer's), and for vanilla what only DP runs take
DROP = {"--dram": 0, "--op-times": 0, "--quiet": 0, "--backend": 1, "--timeline": 1, "--out": 1, "--trace": 1,
        "--dump": 1, "--trace-steps": 1, "--experiment": 1, "--algo": 1}
DP_ONLY = {"--sigma": 1, "--max-grad-norm": 1, "--clipping": 1, "--delta": 1, "--target-epsilon": 1,
           "--accountant": 1, "--poisson": 0}


def die(msg, code=2):
    print("peers.py: " + msg, file=sys.stderr)
    sys.exit(code)


def algo_of(args):
    """the algorithm dpprof options name (--algo), or their framework's default"""
    for i, x in enumerate(args):
        if x == "--algo" and i + 1 < len(args):
            return args[i + 1]
        if x.startswith("--algo="):
            return x.split("=", 1)[1]
    return "persample" if "opacus" in args else "vanilla"


def dpprof_config(dpprof, argv, algo, lora_ok=False, full=False):
    """the resolved configuration of `dpprof run ARGV --algo ALGO`, from a dry run of it (full: the whole result)"""
    drop = dict(DROP, **(DP_ONLY if algo == "vanilla" else {}))
    keep, i = [], 0
    while i < len(argv):
        a = argv[i]
        name = a.split("=", 1)[0]
        if name in drop:
            i += 1 + (drop[name] if "=" not in a else 0)
            continue
        keep.append(a)
        i += 1
    keep += ["--algo", algo]
    cmd = [dpprof, "run", *keep, "--backend", "dry", "--timeline", "full" if full else "none", "--quiet", "--out", "-"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        die("the dpprof configuration is refused: %s: %s" % (" ".join(keep), p.stderr.strip()))
    result = json.loads(p.stdout)
    cfg = result["config"]
    if cfg["task"] != "lm":
        die("--task %s: the peers run language modelling only" % cfg["task"])
    if cfg.get("lora_rank") and not lora_ok:
        die("--lora-rank %d: the peers run full fine-tuning only" % cfg["lora_rank"])
    if cfg.get("poisson") and (result.get("privacy") or {}).get("batch_sizes") is not None:
        cfg["batch_sizes"] = result["privacy"]["batch_sizes"]  # each step's Poisson draw, for the loop to take the same
    return (cfg, result) if full else cfg


def hf_config(c, transformers, use_cache=False):
    """a transformers LlamaConfig with dpprof's shapes (a dpprof config dict, or a dump's config.json); use_cache
    None: Hugging Face's default"""
    if "vocab_size" in c:  # a config.json
        return transformers.LlamaConfig(**{k: v for k, v in c.items() if k != "dpprof_version"})
    return transformers.LlamaConfig(
        vocab_size=c["vocab"], hidden_size=c["hidden"], intermediate_size=c["ffn"], num_hidden_layers=c["layers"],
        num_attention_heads=c["heads"], num_key_value_heads=c["kv_heads"], head_dim=c["head_size"],
        max_position_embeddings=c["seq"], rope_theta=c["rope_theta"], rms_norm_eps=c["norm_eps"],
        initializer_range=c["init_std"], tie_word_embeddings=bool(c.get("tie_embeddings", False)),
        attention_bias=False, mlp_bias=False, hidden_act="silu", pad_token_id=None, bos_token_id=None, eos_token_id=None,
        **({} if use_cache is None else {"use_cache": use_cache}))


def dpprof_version(dpprof):
    p = subprocess.run([dpprof, "--version"], capture_output=True, text=True)
    return p.stdout.split()[1] if p.returncode == 0 and len(p.stdout.split()) > 1 else "unknown"


def git_commit():
    try:
        here = os.path.dirname(os.path.abspath(__file__))
        return subprocess.run(["git", "-C", here, "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or None
    except OSError:
        return None


def write_text(path, text):
    """path's new text: a unique temporary beside it, renamed into place (readable by all, as a plain file is)"""
    fd, tmp = tempfile.mkstemp(prefix=".peers-", suffix=".tmp", dir=os.path.dirname(os.path.abspath(path)))
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_result(res, out):
    write_text(out, json.dumps(res, indent=1) + "\n")


# ---- run ------------------------------------------------------------------------------------------------
def cmd_run(a):
    if a.algo not in ALGOS[a.framework]:
        die("--algo %s: %s runs %s" % (a.algo, a.framework, " | ".join(ALGOS[a.framework])))
    cfg = dpprof_config(a.dpprof, a.dpprof_args, a.algo)
    out_dir = os.path.dirname(os.path.abspath(a.out))
    if not os.path.isdir(out_dir):
        die("--out %s: the directory %s does not exist" % (a.out, out_dir))
    res = {"schema_version": 2, "experiment": a.experiment, "status": "error",
           "config": dict(cfg, framework=a.framework, algo=a.algo, backend=a.device, argv=a.dpprof_args),
           "avg_time_ms": None, "peak_memory_mb": None, "meta": {"date": datetime.datetime.now(
               datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "git_commit": git_commit() or "unknown",
               "dpprof_version": dpprof_version(a.dpprof),
               "python": platform.python_version()}}
    try:
        train(a, cfg, res)
    except ImportError as e:  # a package the peer needs: an error result that says which, not a traceback
        res["status"] = "error"
        res["error"] = ("%s: %s (peers.py run needs torch and transformers, and opacus for --framework opacus: "
                        "pip install torch transformers opacus)" % (type(e).__name__, e))[:2000]
        print("peers.py run: %s" % res["error"], file=sys.stderr)
    except Exception as e:  # out of memory is a result; anything else an error, said
        oom = type(e).__name__ == "OutOfMemoryError" or "out of memory" in str(e).lower()
        res["status"] = "oom" if oom else "error"
        res["error"] = ("%s: %s" % (type(e).__name__, e))[:2000]
    write_result(res, a.out)
    tp = res.get("throughput") or {}
    print("%-8s %-10s %-6s %10s tok/s  peak %s GiB%s" % (
        a.framework, a.algo, res["status"], "%.0f" % tp["tokens_per_s"] if tp.get("tokens_per_s") else "--",
        "%.2f" % (res["peak_memory_mb"] / 1024) if res["peak_memory_mb"] else "--",
        ("  " + res["error"][:200]) if "error" in res else ""))
    return 0 if res["status"] in ("ok", "oom") else 1


def train(a, cfg, res):
    import torch
    import transformers
    dev = torch.device(a.device)
    cuda = dev.type == "cuda"
    if cuda and not torch.cuda.is_available():
        raise RuntimeError("--device cuda: torch sees no GPU")
    meta = res["meta"]
    meta.update(torch=torch.__version__, transformers=transformers.__version__)
    if a.framework == "opacus":
        import opacus
        meta["opacus"] = opacus.__version__
    if cuda:
        torch.cuda.init()
        free0, total = torch.cuda.mem_get_info()
        meta.update(device=torch.cuda.get_device_name(), cuda_runtime=torch.version.cuda,
                    cudnn=torch.backends.cudnn.version(), device_memory_bytes=total)
        torch.cuda.reset_peak_memory_stats()
    torch.manual_seed(cfg["seed"])
    B, P, T, V = cfg["batch"], cfg["physical_batch"], cfg["seq"], cfg["vocab"]
    bf16 = cfg["dtype"] == "bf16"
    with dev:  # built and initialised on the device
        model = transformers.LlamaForCausalLM._from_config(hf_config(cfg, transformers), attn_implementation="sdpa",
                                                           dtype=torch.float32)
    model.train()
    meta["param_count"] = sum(p.numel() for p in model.parameters())
    lr = cfg["lr"]
    fused = {"fused": True} if cuda else {}
    if cfg["optimizer"] == "adam":
        opt = torch.optim.AdamW(model.parameters(), lr=lr, betas=(0.9, 0.999), eps=1e-8,
                                weight_decay=cfg["weight_decay"], **fused)
    else:
        opt = torch.optim.SGD(model.parameters(), lr=lr)
    sigma, C = cfg["sigma"], cfg["max_grad_norm"]
    ce = torch.nn.CrossEntropyLoss(reduction="mean")
    if a.framework == "opacus":
        from opacus import GradSampleModule
        from opacus.grad_sample import GradSampleModuleFastGradientClipping
        from opacus.optimizers import DPOptimizer, DPOptimizerFastGradientClipping
        from opacus.utils.fast_gradient_clipping_utils import DPLossFastGradientClipping
        if a.algo == "persample":
            net = GradSampleModule(model, batch_first=True, loss_reduction="mean", strict=False)
            dpopt = DPOptimizer(opt, noise_multiplier=sigma, max_grad_norm=C, expected_batch_size=B,
                                loss_reduction="mean")
        else:
            net = GradSampleModuleFastGradientClipping(model, batch_first=True, max_grad_norm=C,
                                                       use_ghost_clipping=True, loss_reduction="mean", strict=False)
            dpopt = DPOptimizerFastGradientClipping(opt, noise_multiplier=sigma, max_grad_norm=C,
                                                    expected_batch_size=B, loss_reduction="mean")
            dploss = DPLossFastGradientClipping(net, dpopt, ce, "mean")
        opt = dpopt
    else:
        net = model
    gen = torch.Generator(device="cpu").manual_seed(cfg["seed"])
    n_steps = cfg["warmup"] + cfg["steps"]
    times, losses = [], []
    for step in range(n_steps):
        tok = torch.randint(0, V, (B, T), generator=gen).to(dev)
        tgt = torch.randint(0, V, (B, T), generator=gen).to(dev)
        if cuda:
            ev0, ev1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            ev0.record()
        t0 = time.perf_counter()
        total = 0.0
        for m0 in range(0, B, P):
            x, y = tok[m0:m0 + P], tgt[m0:m0 + P]
            last = m0 + P >= B
            with torch.autocast(device_type=dev.type, dtype=torch.bfloat16, enabled=bf16):
                logits = net(input_ids=x).logits
            logits = logits.float().view(-1, V)
            if a.framework == "opacus" and a.algo == "ghost":
                loss = dploss(logits, y.reshape(-1), shape=(x.shape[0], T))
                total = total + loss.detach() * x.shape[0]
            else:
                loss = ce(logits, y.reshape(-1))
                total = total + loss.detach() * x.shape[0]
                if a.framework == "pytorch":
                    loss = loss * (x.shape[0] / B)  # the mean over the logical batch
            loss.backward()
            del logits, loss
            if a.framework == "opacus":
                opt.signal_skip_step(do_skip=not last)
                opt.step()
                opt.zero_grad(set_to_none=True)
        if a.framework == "pytorch":
            opt.step()
            opt.zero_grad(set_to_none=True)
        if cuda:
            ev1.record()
            ev1.synchronize()
            ms = ev0.elapsed_time(ev1)
        else:
            ms = (time.perf_counter() - t0) * 1e3
        losses.append(float(total) / B)
        if step >= cfg["warmup"]:
            times.append(ms)
        if a.progress:
            print("  step %d/%d: %.1f ms" % (step + 1, n_steps, ms), file=sys.stderr, flush=True)
    mean = sum(times) / len(times)
    srt = sorted(times)
    med = srt[len(srt) // 2] if len(srt) % 2 else 0.5 * (srt[len(srt) // 2 - 1] + srt[len(srt) // 2])
    res.update(status="ok", avg_time_ms=mean, losses=losses)
    res["throughput"] = {"tokens_per_s": B * T * 1e3 / mean, "step_time_ms_median": med, "step_times_ms": times}
    mem = {}
    if cuda:
        torch.cuda.synchronize()
        free1, total = torch.cuda.mem_get_info()
        mem = {"peak_allocated_bytes": torch.cuda.max_memory_allocated(),
               "peak_reserved_bytes": torch.cuda.max_memory_reserved(),
               "driver_used_mb": (free0 - free1) / 2**20,
               "note": "peak_allocated: the caching allocator's most bytes held by tensors; peak_reserved: its most "
                       "bytes taken from the driver; driver_used_mb: cudaMemGetInfo's used bytes at the end, less "
                       "those before the model (the allocator keeps what it reserved; cuBLAS's workspace and "
                       "kernel modules loaded since count)"}
        res["peak_memory_mb"] = mem["peak_allocated_bytes"] / 2**20
        meta["driver_peak_used_mb"] = mem["driver_used_mb"]
    res["memory"] = mem or None


# ---- check ----------------------------------------------------------------------------------------------
def load_dump(d):
    from safetensors.torch import load_file
    for f in ("config.json", "model.safetensors", "batch.safetensors", "grads.safetensors", "step.json"):
        if not os.path.isfile(os.path.join(d, f)):
            die("%s: no %s (not a dpprof --dump directory)" % (d, f))
    with open(os.path.join(d, "config.json")) as f:
        conf = json.load(f)
    with open(os.path.join(d, "step.json")) as f:
        step = json.load(f)
    return (conf, load_file(os.path.join(d, "model.safetensors")), load_file(os.path.join(d, "batch.safetensors")),
            load_file(os.path.join(d, "grads.safetensors")), step)


def rel(a, b):
    import torch
    a, b = torch.as_tensor(a, dtype=torch.float64), torch.as_tensor(b, dtype=torch.float64)
    return float((a - b).norm() / max(float(b.norm()), 1e-300))


def cmd_check(a):
    import torch
    import transformers
    conf, weights, batch, grads, step = load_dump(a.dump)
    if conf.get("architectures") != ["LlamaForCausalLM"]:
        die("%s: %s: the check runs language modelling only" % (a.dump, conf.get("architectures")))
    if any("lora" in k for k in weights):
        die("%s: a LoRA dump: the check runs full fine-tuning only" % a.dump)
    torch.set_default_dtype(torch.float64)
    # the dump as a user loads it: from_pretrained reads config.json and model.safetensors as they are
    model, info = transformers.LlamaForCausalLM.from_pretrained(a.dump, dtype=torch.float64, attn_implementation="eager",
                                                                output_loading_info=True)
    model.train()  # from_pretrained gives eval mode, where Opacus's hooks record nothing (Llama has no dropout)
    missing = [k for k in info["missing_keys"] if not (conf.get("tie_word_embeddings") and k == "lm_head.weight")]
    unexpected = list(info["unexpected_keys"]) + list(info.get("mismatched_keys") or [])
    if missing or unexpected:
        die("%s: the dump's tensors do not fit LlamaForCausalLM: missing %s, unexpected %s" % (a.dump, missing, unexpected))
    tok, tgt = batch["tokens"], batch["targets"]
    B, V = tok.shape[0], conf["vocab_size"]
    names = [n for n, _ in model.named_parameters()]
    params = dict(model.named_parameters())
    losses, norms, per_grads = [], [], []
    for i in range(B):  # the per-sample loop: the definition
        model.zero_grad(set_to_none=True)
        logits = model(input_ids=tok[i:i + 1]).logits[0]
        loss = torch.nn.functional.cross_entropy(logits, tgt[i])
        loss.backward()
        losses.append(float(loss.detach()))
        g = {n: params[n].grad.detach().clone() for n in names}
        per_grads.append(g)
        norms.append(math.sqrt(sum(float((x * x).sum()) for x in g.values())))
    fails, rows = 0, []

    def report(what, err):
        nonlocal fails
        ok = err <= a.tolerance
        fails += not ok
        rows.append("%s %-58s relative difference %.2e" % ("PASS" if ok else "FAIL", what, err))

    report("per-sample losses (%d) against dpprof's" % B, rel(losses, step["per_sample_loss"]))
    C = step.get("max_grad_norm")
    if step.get("per_sample_norm") is not None:
        report("per-sample gradient norms against dpprof's", rel(norms, step["per_sample_norm"]))
        clip = [min(1.0, C / n) if n > 0 else 1.0 for n in norms]
        if step.get("clipping") == "flat":
            report("flat clip factors min(1, C/||g_i||) against dpprof's", rel(clip, step["clip_factor"]))
    else:
        clip = [1.0] * B
    worst, worst_name = 0.0, ""
    for n in grads:
        if n not in params:
            die("%s: grads.safetensors holds %s, which the model has not" % (a.dump, n))
        ref = sum(clip[i] * per_grads[i][n] for i in range(B))
        e = rel(grads[n], ref)
        if e > worst:
            worst, worst_name = e, n
    report("the clipped sum, each of %d tensors (worst: %s)" % (len(grads), worst_name or "none"), worst)
    if step.get("per_sample_norm") is not None:
        try:
            import opacus
        except ImportError:
            opacus = None
        if opacus is not None:
            from opacus import GradSampleModule
            model.zero_grad(set_to_none=True)
            gsm = GradSampleModule(model, batch_first=True, loss_reduction="mean", strict=False)
            logits = gsm(input_ids=tok).logits
            torch.nn.functional.cross_entropy(logits.reshape(-1, V), tgt.reshape(-1)).backward()
            onorm = torch.stack([p.grad_sample.reshape(B, -1).norm(dim=1) ** 2 for p in model.parameters()]).sum(0).sqrt()
            report("Opacus %s's per-sample norms (hooks) against dpprof's" % opacus.__version__,
                   rel(onorm.tolist(), step["per_sample_norm"]))
            gsm._close()
    print("\n".join(rows))
    print("%d checks, %d failed (dump %s, algo %s, dtype %s)" % (len(rows), fails, a.dump, step.get("algo"), step.get("dtype")))
    return 1 if fails else 0


# ---- table ----------------------------------------------------------------------------------------------
def shape_of(c):
    return "%s T=%d B=%d %s" % (c.get("preset"), c["seq"], c["batch"], c["dtype"])


def cmd_table(a):
    rows = {}
    for d in a.dirs:
        for f in sorted(glob.glob(os.path.join(d, "*.json")) + glob.glob(os.path.join(d, "peers", "*.json"))):
            try:
                with open(f) as fh:
                    j = json.load(fh)
            except (OSError, ValueError) as e:
                print("peers.py: %s skipped: %s" % (f, e), file=sys.stderr)
                continue
            c = j.get("config")
            if not isinstance(c, dict) or c.get("lora_rank") or "seq" not in c:
                continue
            fw = "dpprof" if "layers" in j else c.get("framework", "dpprof")  # a peer's result has no layers
            tp = j.get("throughput") or {}
            drv = (j.get("meta") or {}).get("driver_peak_used_mb")
            rows.setdefault(shape_of(c), {})[(fw, c["algo"])] = (j["status"], tp.get("tokens_per_s"), j.get("peak_memory_mb"), drv)
    order = [("pytorch", "vanilla"), ("opacus", "persample"), ("opacus", "ghost")]
    for shape in sorted(rows):
        r = rows[shape]
        base = (r.get(("pytorch", "vanilla")) or (None, None))[1]
        print("\n%s\n| framework | algorithm | status | tokens/s | x PyTorch | peak GiB (allocator) | GiB (driver) |" % shape)
        print("|---|---|---|---|---|---|---|")
        keys = [k for k in order if k in r] + sorted(k for k in r if k not in order)
        for k in keys:
            st, tps, pk, drv = r[k]
            print("| %s | %s | %s | %s | %s | %s | %s |" % (
                k[0], k[1], st, "%.0f" % tps if tps else "--", "%.2f" % (tps / base) if tps and base else "--",
                "%.2f" % (pk / 1024) if pk else "--", "%.2f" % (drv / 1024) if drv else "--"))
    return 0


# ---- memory ---------------------------------------------------------------------------------------------
# MemTracker's categories as dpprof's (buffers, the rotary table, with the parameters; Opacus's per-sample
# gradients, which the tracker counts as temporaries, split out by their size: see fake_step)
TRACKER_CATS = {"Parameter": "model_parameters", "Buffer": "model_parameters", "Gradient": "gradients",
                "Activation": "activations", "Temp": "activations", "Optstate": "optimizer_states", "Other": "other"}
DPPROF_CATS = ("model_parameters", "optimizer_states", "gradients", "activations", "activation_hooks", "norm_samples",
               "temp_matrices", "per_sample_gradients", "lora", "workspace", "data", "other")


def fake_patches(torch, framework):
    """what a step on fake tensors needs that the libraries do not do: applied, and named in the result"""
    import copy
    names = []
    if framework != "opacus":
        return names
    import opacus.grad_sample.functorch as ofun
    import opacus.grad_sample.embedding_norm_sample as oemb
    import opacus.optimizers.optimizer_fast_gradient_clipping as ofgc
    import torch.distributed._tools.mem_tracker as mtmod

    def make_functional(mod, disable_autograd_tracking=False):
        # the module's functional copy: deepcopy with meta parameters given (a fake module cannot move to meta)
        params = dict(mod.named_parameters())
        keys, values = params.keys(), tuple(params.values())
        memo = {id(p): torch.nn.Parameter(torch.empty(p.shape, dtype=p.dtype, device="meta"), requires_grad=p.requires_grad)
                for p in values}
        stateless = copy.deepcopy(mod, memo)

        def fmodel(new_values, *args, **kwargs):
            return torch.func.functional_call(stateless, dict(zip(keys, new_values)), args, kwargs)
        if disable_autograd_tracking:
            values = tuple(v.detach() for v in values)
        return fmodel, values
    ofun.make_functional = make_functional
    names.append("opacus.grad_sample.functorch.make_functional: deepcopy with a memo of meta parameters")
    orig = mtmod.get_untyped_storages

    def storages(t):  # functorch's wrappers own no memory: what they wrap is tracked
        return set() if torch._C._functorch.is_functorch_wrapped_tensor(t) else orig(t)
    mtmod.get_untyped_storages = storages
    names.append("MemTracker: functorch's wrapped tensors skipped (they own no storage)")

    class Unique:  # the embedding's norm sampler as Opacus writes it, but torch.unique (no fake shape) taking every
        # (sample, token) pair as distinct: exact where no token repeats within a sample, else an upper bound
        def __getattr__(self, name):
            return getattr(torch, name)

        @staticmethod
        def unique(x, dim=None, return_inverse=False, sorted=True):
            return x.clone(), torch.arange(x.shape[0], device=x.device)
    oemb.torch = Unique()
    names.append("opacus embedding norm: torch.unique takes every (sample, token) pair as distinct (it has no fake shape)")

    def accumulate(self):  # copy.deepcopy of a fake tensor's .data crashes: clone(), the same bytes
        for p in self.params:
            if p.summed_grad is not None:
                p.summed_grad.add_(p.grad.data)
            else:
                p.summed_grad = p.grad.data.clone()
    ofgc.DPOptimizerFastGradientClipping.accumulate = accumulate
    names.append("DPOptimizerFastGradientClipping.accumulate: clone() for copy.deepcopy(p.grad.data)")
    return names


def fake_step(a, cfg, res):
    """the configuration's steps on fake tensors (shapes, no data) under PyTorch's MemTracker and FlopCounterMode"""
    import warnings
    import torch
    import transformers
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.distributed._tools.mem_tracker import MemTracker
    from torch.utils.flop_counter import FlopCounterMode
    warnings.filterwarnings("ignore")
    meta = res["meta"]
    meta.update(torch=torch.__version__, transformers=transformers.__version__, method="fake-tensor tracker",
                tracker="torch.distributed._tools.mem_tracker.MemTracker", flops="torch.utils.flop_counter.FlopCounterMode",
                device="fake cpu (FakeTensorMode: shapes and dtypes, no data)")
    if a.framework == "opacus":
        import opacus
        meta["opacus"] = opacus.__version__
    meta["patches"] = fake_patches(torch, a.framework)
    B, P, T, V = cfg["batch"], cfg["physical_batch"], cfg["seq"], cfg["vocab"]
    bf16 = cfg["dtype"] == "bf16"
    lora = cfg.get("lora_rank") or 0
    n_steps = max(cfg["warmup"] + cfg["steps"], 2)  # adam's moments exist from the first step on: the second is the steady one
    phases, state, tracker, psg_at = {}, {"flops": 0, "peak": -1}, {}, {}
    with FakeTensorMode(allow_non_fake_inputs=True):
        model = transformers.LlamaForCausalLM._from_config(hf_config(cfg, transformers), attn_implementation=a.attention,
                                                           dtype=torch.float32)
        if lora:
            import peft
            from peft.tuners import tuners_utils
            meta["peft"] = peft.__version__
            # peft moves each new adapter and layer to its base layer's device and dtype: on fake tensors the module's
            # swap of its weight fails, and everything is on that device (fake cpu) in that dtype (fp32) already
            tuners_utils.BaseTunerLayer._move_adapter_to_device_of_base_layer = lambda self, adapter_name, device=None: None
            meta["patches"].append("peft's moves of its new adapters and layers to their base layer's device and dtype "
                                   "skipped while it wraps the model (the same device and dtype already; on fake tensors "
                                   "the weight's swap fails)")
            to = torch.nn.Module.to
            torch.nn.Module.to = lambda self, *args, **kwargs: self
            names = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "gate": "gate_proj", "up": "up_proj", "down": "down_proj"}
            targets = [names[t] for t in (cfg.get("lora_targets") or "q,v").split(",")]
            model = peft.get_peft_model(model, peft.LoraConfig(r=lora, lora_alpha=cfg["lora_alpha"], target_modules=targets,
                                                              lora_dropout=0.0, bias="none"))
            torch.nn.Module.to = to
            for n, p in model.named_parameters():  # --train-head: the head trains too (PEFT leaves it frozen)
                if "lm_head" in n and cfg.get("train_head"):
                    p.requires_grad_(True)
        model.train()
        trainable = [p for p in model.parameters() if p.requires_grad]
        meta["param_count"] = sum(p.numel() for p in model.parameters())
        meta["trainable_count"] = sum(p.numel() for p in trainable)
        if cfg["optimizer"] == "adam":
            opt = torch.optim.AdamW(trainable, lr=cfg["lr"], weight_decay=cfg["weight_decay"], foreach=True)  # as on cuda
        else:
            opt = torch.optim.SGD(trainable, lr=cfg["lr"], foreach=True)
        ce = torch.nn.CrossEntropyLoss(reduction="mean")
        net, dploss = model, None
        if a.framework == "opacus":
            from opacus import GradSampleModule
            from opacus.grad_sample import GradSampleModuleFastGradientClipping
            from opacus.optimizers import DPOptimizer, DPOptimizerFastGradientClipping
            from opacus.utils.fast_gradient_clipping_utils import DPLossFastGradientClipping
            if a.algo == "persample":
                net = GradSampleModule(model, batch_first=True, loss_reduction="mean", strict=False)
                opt = DPOptimizer(opt, noise_multiplier=cfg["sigma"], max_grad_norm=cfg["max_grad_norm"], expected_batch_size=B,
                                  loss_reduction="mean")
            else:
                net = GradSampleModuleFastGradientClipping(model, batch_first=True, max_grad_norm=cfg["max_grad_norm"],
                                                           use_ghost_clipping=True, loss_reduction="mean", strict=False)
                opt = DPOptimizerFastGradientClipping(opt, noise_multiplier=cfg["sigma"], max_grad_norm=cfg["max_grad_norm"],
                                                      expected_batch_size=B, loss_reduction="mean")
                dploss = DPLossFastGradientClipping(net, opt, ce, "mean")
        tok = torch.randint(0, V, (B, T))
        tgt = torch.randint(0, V, (B, T))
        mt = MemTracker()
        if lora:  # the tracker hooks every parameter's gradient, and a frozen one cannot take a hook: none for them
            class NoHook:
                def remove(self):
                    pass
            for p_ in model.parameters():
                if not p_.requires_grad:
                    mt._param_to_grad_hook_handles[p_] = (NoHook(), NoHook())
            meta["patches"].append("the tracker's gradient hooks not installed on frozen parameters (they cannot take one)")
        mt.track_external(model, opt)
        fc = FlopCounterMode(display=False)

        def psg_bytes():
            return sum(p.grad_sample.untyped_storage().nbytes() for p in trainable if getattr(p, "grad_sample", None) is not None)

        def grad_bytes():  # the gradients by role: p.grad and opacus's clipped sum p.summed_grad, each storage once
            sts = {}
            for p in trainable:
                for t in (p.grad, getattr(p, "summed_grad", None)):
                    if t is not None:
                        sts[id(t.untyped_storage())] = t.untyped_storage().nbytes()
            return sum(sts.values())

        def roles():
            state["psg"], state["grads"] = psg_bytes(), grad_bytes()

        state["psg"] = state["grads"] = 0
        if a.framework == "opacus":  # what opacus keeps by role at each new peak: the tracker counts its step's as activations
            update_peak = mt._update_peak_stats

            def update_peak_roles(peak_state):
                before = dict(mt._peak_mem)
                update_peak(peak_state)
                if mt._peak_mem != before:
                    roles()
            mt._update_peak_stats = update_peak_roles

        def mark(name, step):
            """the phase that ends: its peak (the tracker's, reset here) and its flops"""
            dev = next(iter(mt._peak_mem), None)
            flops = fc.get_total_flops()
            ph = phases.setdefault(name, {"count": 0, "time_ms_median": None, "bytes_start": None, "bytes_end": 0, "bytes_peak": 0,
                                          "flops": 0, "steps": []})
            if dev is None:
                return
            cur = mt._curr_mem_snap[dev]["Total"]
            if step == n_steps - 1:  # the last step's: the steady state
                ph["count"] += 1
                ph["flops"] += flops - state["flops"]
                ph["bytes_start"] = state.get("start", 0) if ph["bytes_start"] is None else ph["bytes_start"]
                ph["bytes_end"] = cur
                if mt._peak_mem[dev] >= ph["bytes_peak"]:
                    ph["bytes_peak"] = mt._peak_mem[dev]
                    snap = {str(getattr(k, "value", k)): v for k, v in mt._peak_mem_snap[dev].items()}
                    tracker[name] = {k: v for k, v in snap.items() if k != "Total"}
                    psg_at[name] = (state["psg"], state["grads"])
                if mt._peak_mem[dev] > state["peak"]:
                    state["peak"], state["peak_phase"] = mt._peak_mem[dev], name
            state["flops"], state["start"] = flops, cur
            mt._peak_mem[dev] = cur
            mt._peak_mem_snap[dev] = dict(mt._curr_mem_snap[dev])
            if a.framework == "opacus":
                roles()

        with mt, fc:
            for step in range(n_steps):
                for m0 in range(0, B, P):
                    x, y = tok[m0:m0 + P], tgt[m0:m0 + P]
                    mt.reset_mod_stats()  # the tracker's module statistics hold one call of a module
                    with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=bf16):
                        logits = net(input_ids=x).logits
                    logits = logits.float().view(-1, V)
                    if dploss is not None:
                        loss = dploss(logits, y.reshape(-1), shape=(x.shape[0], T))
                    else:
                        loss = ce(logits, y.reshape(-1))
                        if a.framework == "pytorch":
                            loss = loss * (x.shape[0] / B)  # the mean over the logical batch
                    mark("forward", step)
                    loss.backward()
                    del logits, loss
                    mark("backward", step)
                    if a.framework == "opacus":
                        opt.signal_skip_step(do_skip=m0 + P < B)
                        opt.step()
                        opt.zero_grad(set_to_none=True)
                        mark("optimizer_step", step)
                if a.framework == "pytorch":
                    opt.step()
                    opt.zero_grad(set_to_none=True)
                    mark("optimizer_step", step)
    peak_name = state["peak_phase"]
    ph = phases[peak_name]
    cat = dict.fromkeys(DPPROF_CATS, 0)
    for k, v in tracker[peak_name].items():
        cat[TRACKER_CATS.get(k, "other")] += v
    # opacus's per-sample gradients: temporaries to the tracker; its other temporaries (the backward's gradients of
    # activations) are activations, as dpprof counts its own
    psg, grads = psg_at.get(peak_name, (0, 0))
    psg = min(psg, tracker[peak_name].get("Temp", 0))
    cat["activations"] -= psg
    moved = min(max(grads - cat["gradients"], 0), cat["activations"])  # opacus's step's gradients: activations to the tracker
    cat["activations"] -= moved
    cat["gradients"] += moved
    cat["per_sample_gradients"] += psg
    if lora:  # the adapters' weights apart, as dpprof counts them
        ad = sum(p.untyped_storage().nbytes() for n, p in model.named_parameters() if "lora_" in n)
        cat["model_parameters"] -= ad
        cat["lora"] += ad
    cat["peak"] = ph["bytes_peak"]
    mb = lambda b: b / 2**20
    res.update(status="ok", peak_memory_mb=mb(ph["bytes_peak"]), losses=[])
    res["breakdown"] = {"model_parameters_mb": mb(cat["model_parameters"]), "optimizer_states_mb": mb(cat["optimizer_states"]),
                        "gradients_mb": mb(cat["gradients"]), "activations_mb": mb(cat["activations"]),
                        "temp_matrices_mb": mb(cat["temp_matrices"]), "per_sample_gradients_mb": mb(cat["per_sample_gradients"]),
                        "total_allocated_mb": mb(ph["bytes_peak"]), "peak_allocated_mb": mb(ph["bytes_peak"]),
                        "bytes": cat, "peak_phase": peak_name, "peak_step": n_steps - 1}
    for p_ in phases.values():
        p_.pop("steps", None)
        p_["bytes_start"] = p_["bytes_start"] or 0
    res["phases"] = phases
    flops = sum(p_["flops"] for p_ in phases.values())
    res["throughput"] = {"tokens_per_s": None, "step_time_ms_median": None, "flops_per_step": flops,
                         "note": "no time on fake tensors; flops_per_step: FlopCounterMode over the last step"}
    res["memory"] = {"method": "fake-tensor tracker", "peak_bytes": ph["bytes_peak"], "tracker_bytes_at_peak": tracker[peak_name],
                     "tracker_bytes_at_phase_peaks": tracker,
                     "note": "MemTracker's live bytes by its categories at the step's peak (the last step: adam's moments exist), "
                             "mapped to dpprof's: its temporaries (the backward's gradients of activations) with the activations, as dpprof "
                             "counts its own; opacus's per-sample gradients (temporaries to the tracker) and the gradients and clipped sum "
                             "of its step (activations to the tracker) by their size"}


def dpprof_live_at_peak(dp):
    """dpprof's live bytes at its peak by (category, module), from the result's event log"""
    tl, pe = dp["timeline"], dp["breakdown"]["peak_event"]
    cats, mods, out = tl["categories"], tl["modules"], {}
    for i in range(pe + 1):
        k = (cats[tl["category"][i]], mods[tl["module"][i]])
        out[k] = out.get(k, 0) + tl["bytes"][i]
    return out


def reconcile(peer, dp):
    """peer's peak - dpprof's = the sum of named terms + what the formulas leave unexplained. each term is a policy
    difference: what the peer holds at its peak by formula from the shape (PyTorch's autograd: what each op saves),
    less what dpprof holds at its peak by its own event log; the categories both measure (parameters, optimizer
    states, gradients) by measurement on both sides. unexplained: the peer's measured activations and temporaries
    less the formulas' sum. PyTorch without privacy, fp32, full fine-tuning or LoRA (the adapters' activations
    not modelled); returns (difference, [(name, bytes)], unexplained)"""
    c = peer["config"]
    e = 4
    P, T, L, V, C, F = c["physical_batch"], c["seq"], c["layers"], c["vocab"], c["hidden"], c["ffn"]
    NH, NKV, HS = c["heads"], c["kv_heads"], c["head_size"]
    N, Cq, Ckv = P * T, NH * HS, NKV * HS
    eager = c.get("attention_implementation") == "eager"
    live = dpprof_live_at_peak(dp)
    dcat = lambda cat: sum(v for (k, m), v in live.items() if k == cat)
    dmod = lambda cat, mod: live.get((cat, mod), 0)
    pb = peer["breakdown"]["bytes"]
    tr = peer["memory"]["tracker_bytes_at_peak"]  # the tracker's own categories: the formulas are written for them
    peer_act, peer_grad = tr.get("Activation", 0) + tr.get("Temp", 0), tr.get("Gradient", 0)
    f = {}
    fw, at = c.get("framework"), peer["breakdown"]["peak_phase"]
    kv = Cq if NKV != NH else Ckv  # grouped-query attention: k and v repeated to every head, the copies saved
    accumulate = P < c["batch"]  # the last physical batch adds its gradients to those of the earlier ones
    f["embedding"] = N * C * e
    f["norm"] = (2 * L + 1) * (2 * N * C * e + N * e)
    # each block's residual sum (saved by the RMSNorm that reads it next) with the block
    f["attention"] = L * (2 * N * Cq + 2 * N * kv + N * C) * e + 2 * T * HS * e
    f["attention"] += L * P * NH * T * T * e if eager else L * P * NH * T * e + L * P * T * T * e
    f["mlp"] = L * (4 * N * F + N * C) * e
    # the loss at the peak: at the backward's start the logits, log_softmax's output and the loss backward's two (N, V)
    # gradients; where the head's weight already has a gradient (accumulation; ghost's second backward), the head's
    # backward holds the logits, their gradient, the weight gradient's temporary (V, C) and the input's gradient (N, C)
    grads_before = accumulate or (fw == "opacus" and c["algo"] == "ghost")
    f["head"] = max(4 * N * V * e, 2 * N * V * e + V * C * e + N * C * e if grads_before else 0) + 8
    f["data"] = 2 * c["batch"] * T * 8  # the logical batch's ids, sliced by physical batch
    f["dres"] = 0
    moment = "start"
    if eager:
        # eager at a long sequence: the peak is the last layer's softmax backward, where the gradient of its T x T
        # probabilities and the softmax's backward output are both live; the head, the final norm, the last layer's
        # SwiGLU, second norm, output projection and v are done with and freed (the caller keeps the logits), the
        # gradients of those done are there. the larger of the two moments, gradients counted, is the peak
        Pt = peer["meta"]["trainable_count"] * e
        head_w = V * C * e
        done = head_w + C * e + 3 * C * F * e + C * e + C * Cq * e
        g = dict(f)
        g["attention"] -= (N * Cq + N * kv + N * C) * e
        g["attention"] += 2 * P * NH * T * T * e + N * Cq * e  # the probabilities' gradient, the softmax's, v's
        g["mlp"] -= (4 * N * F + N * C) * e
        g["norm"] -= 2 * (2 * N * C + N) * e
        g["head"] = N * V * e + 8
        g["dres"] = N * C * e  # the residual stream's gradient
        if sum(g.values()) + (Pt if grads_before else done) > sum(f.values()) + (Pt if grads_before else 0):
            f, moment = g, "softmax"
    f["gram"] = 0
    if fw == "opacus" and c["algo"] == "ghost":
        # ghost's first backward at the head: the loss's four (N, V) tensors, the head's weight gradient, the input's
        # gradient and the norm's two T x T Grams (ggT, aaT); its second backward's start holds every gradient instead
        Pt = peer["meta"]["trainable_count"] * e
        g = dict(f, head=4 * N * V * e + 8, gram=2 * P * T * T * e, dres=N * C * e)
        if sum(g.values()) + V * C * e > sum(f.values()) + Pt:
            f, moment = g, "ghost_head"
    terms = [
        ("parameters", pb["model_parameters"] + pb["lora"] - dcat("model_parameters") - dcat("lora")),
        ("optimizer states: measured on both sides (at a peak in PyTorch's AdamW(foreach) step, its temporary of the "
         "trainable parameters' size counted with them)", pb["optimizer_states"] - dcat("optimizer_states")),
        ("gradients: dpprof holds every gradient from setup on, zeroed after a step; PyTorch frees them "
         "(zero_grad(set_to_none=True)) and allocates each in the backward", peer_grad - dcat("gradients")),
        ("workspace: dpprof's cuBLAS workspace, an allocation of its own", -dcat("workspace")),
        ("token ids: PyTorch's int64 tokens and targets, dpprof's int32",
         f["data"] - dcat("data")),
        ("embedding output", f["embedding"] - dmod("activations", "embedding")),
        ("RMSNorm: PyTorch saves h*rsqrt and its scaled output and 1/rms for each norm, dpprof the output and 1/rms"
         + (" (the final norm's and the last layer's second freed at PyTorch's peak)" if moment == "softmax" else ""),
         f["norm"] - dmod("activations", "norm")),
        (("attention (eager): PyTorch saves q, k^T, v, the T x T probabilities, the output's copy and the residual sum, "
          "and RoPE's cos and sin" if eager else "attention (sdpa): PyTorch saves q, k, v, the output, log-sum-exp and the "
          "residual sum, Hugging Face's causal mask as floats a layer, and RoPE's cos and sin")
         + ("; with grouped-query attention k and v repeated to every head" if NKV != NH else "")
         + ("; at PyTorch's peak, the last layer's softmax backward, the probabilities' gradient and the softmax's "
            "(2 b NH T^2) beside them, that layer's v, output and residual sum freed" if moment == "softmax" else ""),
         f["attention"] - dmod("activations", "attention")),
        ("SwiGLU: PyTorch saves silu(gate) beside gate, up, their product and the residual sum"
         + (" (the last layer's freed at its peak)" if moment == "softmax" else ""), f["mlp"] - dmod("activations", "mlp")),
        (("loss: the logits the caller keeps, the loss's other tensors freed at PyTorch's peak" if moment == "softmax" else
          "loss: PyTorch's logits, log_softmax's output and the loss backward's two (N, V) gradients" if f["head"] == 4 * N * V * e + 8
          else "loss: the head's backward, where its weight has a gradient already: PyTorch's logits, their gradient, the "
          "weight gradient's temporary (V, C) and the input's gradient")
         + "; dpprof's logits, which their gradient overwrites, and the per-sample losses", f["head"] - dmod("activations", "head")),
    ]
    if f["gram"]:
        terms.append(("ghost's norms: Opacus's two T x T Grams of the head (its output gradient's and its input's) at its "
                      "peak in its first backward, beside the head's gradient", f["gram"]))
    other = sum(v for (k, m), v in live.items() if k == "activations" and m not in ("embedding", "norm", "attention", "mlp", "head"))
    terms.append(("the residual stream's gradient: the peer's at its peak in the %s, dpprof's held through its backward "
                  "(its other activations)" % ("last layer's softmax backward" if moment == "softmax" else "head's backward")
                  if moment in ("softmax", "ghost_head") else
                  "dpprof's other activations (the residual stream's gradient, held through its backward)", f["dres"] - other))
    unexplained = peer_act - sum(f.values())
    if fw == "opacus" and c["algo"] == "persample" and at == "optimizer_step":
        # Opacus's step: p.grad_sample (b per-sample gradients of every trainable parameter) kept until zero_grad, the
        # clipped sum p.summed_grad and the noisy p.grad beside it; the activations freed with the backward
        Pt, b = peer["meta"]["trainable_count"] * e, P
        dp_other = sum(v for (k, m), v in live.items() if k in ("activations", "activation_hooks", "norm_samples", "temp_matrices", "other"))
        terms = terms[:2] + [
            ("gradients: Opacus's clipped sum (p.summed_grad) and its noisy copy (p.grad) at its step, two of every "
             "trainable parameter; dpprof's one gradient, held from setup on", 2 * Pt - dcat("gradients")),
            ("per-sample gradients: Opacus keeps every parameter's (p.grad_sample, b of each) through its step; dpprof "
             "at its peak", b * Pt - dcat("per_sample_gradients"))] + terms[3:5] + [
            ("activations: Opacus's peak is in its optimizer step, its activations freed; dpprof's activations, norms "
             "and temporaries at its peak in the %s" % dp["breakdown"]["peak_phase"], -dp_other)]
        unexplained = peer_act - 2 * Pt - b * Pt - f["data"]
    elif fw == "opacus" and c["algo"] == "ghost" and at == "backward":
        if accumulate:  # dpprof adds each physical batch's clipped sum into its gradients
            Pt = peer["meta"]["trainable_count"] * e
            terms.append(("ghost: Opacus's clipped sum of the earlier physical batches (p.summed_grad) beside the gradients "
                          "its second backward makes; dpprof adds each physical batch's into its gradients", Pt))
            unexplained -= Pt
    elif at == "optimizer_step":  # the peer's activations are gone at its peak: its tokens are left
        terms = terms[:5] + [("activations: the peer's peak is in its optimizer step (AdamW(foreach) holds a temporary beside "
                              "the moments), its activations freed; dpprof's at its peak in the %s" % dp["breakdown"]["peak_phase"],
                              -dcat("activations"))]
        unexplained = peer_act - f["data"]
    elif at != "backward":
        die("--reconcile: the peer's peak is in its %s, where no formula is written" % at, 1)
    if not (fw == "opacus" and c["algo"] == "persample" and at == "optimizer_step"):
        dp_state = sum(dcat(k) for k in ("activation_hooks", "norm_samples", "temp_matrices", "per_sample_gradients", "other"))
        terms.append(("dpprof's DP state at its peak (per-sample norms, clip factors, temporaries, per-sample gradients)", -dp_state))
    diff = pb["peak"] - dp["breakdown"]["bytes"]["peak"]
    assert diff == sum(v for _, v in terms) + unexplained, "the terms do not cover every category"
    return diff, terms, unexplained


def cmd_memory(a):
    if a.algo not in ALGOS[a.framework]:
        die("--algo %s: %s runs %s" % (a.algo, a.framework, " | ".join(ALGOS[a.framework])))
    cfg = dpprof_config(a.dpprof, a.dpprof_args, a.algo, lora_ok=True)
    if a.reconcile and (cfg["dtype"] != "fp32" or cfg.get("lora_rank")):
        die("--reconcile: fp32 and full fine-tuning (the formulas of bf16 autocast and LoRA are not written)")
    out_dir = os.path.dirname(os.path.abspath(a.out))
    if not os.path.isdir(out_dir):
        die("--out %s: the directory %s does not exist" % (a.out, out_dir))
    res = {"schema_version": 2, "experiment": a.experiment, "status": "error",
           "config": dict(cfg, framework=a.framework, algo=a.algo, backend="fake", attention_implementation=a.attention,
                          argv=a.dpprof_args),
           "avg_time_ms": None, "peak_memory_mb": None, "meta": {"date": datetime.datetime.now(
               datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "git_commit": git_commit() or "unknown",
               "dpprof_version": dpprof_version(a.dpprof), "python": platform.python_version()}}
    t0 = time.time()
    try:
        fake_step(a, cfg, res)
    except Exception as e:
        res["status"] = "error"
        res["error"] = ("%s: %s" % (type(e).__name__, e))[:2000]
    res["meta"]["tracker_seconds"] = round(time.time() - t0, 2)
    if a.reconcile and res["status"] == "ok":
        _, dp = dpprof_config(a.dpprof, a.dpprof_args, a.algo, lora_ok=True, full=True)
        diff, terms, unexplained = reconcile(res, dp)
        res["reconciliation"] = {"peer_peak_bytes": res["breakdown"]["bytes"]["peak"], "dpprof_peak_bytes": dp["breakdown"]["bytes"]["peak"],
                                 "difference_bytes": diff, "terms": [{"name": n, "bytes": v} for n, v in terms],
                                 "unexplained_bytes": unexplained,
                                 "note": "peer - dpprof = the terms' sum + unexplained (docs/peers.md)"}
        print("peer %.3f MiB - dpprof %.3f MiB = %+.3f MiB:" % (res["breakdown"]["bytes"]["peak"] / 2**20, dp["breakdown"]["bytes"]["peak"] / 2**20,
                                                           diff / 2**20))
        for n, v in terms:
            if v:
                print("  %+12.3f MiB  %s" % (v / 2**20, n))
        print("  %+12.3f MiB  unexplained (%d bytes)" % (unexplained / 2**20, unexplained))
    write_result(res, a.out)
    print("%-8s %-10s %-6s %-6s peak %s MiB%s" % (a.framework, a.algo, a.attention, res["status"],
          "%.2f" % res["peak_memory_mb"] if res["peak_memory_mb"] else "--", ("  " + res["error"][:200]) if "error" in res else ""))
    return 0 if res["status"] == "ok" else 1


PEER_RUNS = {"pytorch_sdpa": ("pytorch", "vanilla", "sdpa"), "pytorch_eager": ("pytorch", "vanilla", "eager"),
             "opacus_persample": ("opacus", "persample", "sdpa"), "opacus_ghost": ("opacus", "ghost", "sdpa")}


def short_term(name):
    """a reconciliation term's name up to its explanation"""
    return name.split(":")[0].split(" (")[0] if not name.startswith("dpprof's") else name.split(" (")[0]


def cmd_memory_sweep(a):
    """an experiment file's configurations: dpprof's (runs named dpprof_ALGO) by dpprof sweep on its dry backend, the
    peers' (PEER_RUNS) by `peers.py memory --reconcile` each in its own process; a result of status ok is kept (a
    rerun resumes). then DIR/reconciliation.md and, with --tables, NAME-reconcile-table.tex"""
    if not os.path.isfile(a.conf):
        die("%s: no such experiment file" % a.conf)
    os.makedirs(a.out_dir, exist_ok=True)
    p = subprocess.run([a.dpprof, "sweep", a.conf, "--out-dir", a.out_dir, "--dry-run"], capture_output=True, text=True)
    if p.returncode != 0:
        die("%s: %s" % (a.conf, p.stderr.strip()))
    lines = [shlex.split(ln) for ln in p.stdout.splitlines() if " run " in ln]
    todo = []
    for argv in lines:
        out = argv[argv.index("--out") + 1]
        cid = os.path.basename(out)[:-len(".json")]
        run = cid.rsplit("-", 1)[1]
        exp = argv[argv.index("--experiment") + 1]
        if run.startswith("dpprof_"):
            continue
        if run not in PEER_RUNS:
            die("%s: run %s is neither dpprof_ALGO nor one of %s" % (a.conf, run, " ".join(sorted(PEER_RUNS))))
        todo.append((cid, exp, out, argv[2:]))
    if a.only:
        todo = [t for t in todo if a.only in t[0]]
    p = subprocess.run([a.dpprof, "sweep", a.conf, "--out-dir", a.out_dir, "--only", "dpprof_"],  # each cheap: all of them
                       capture_output=True, text=True)
    sys.stderr.write(p.stderr)
    sys.stderr.flush()
    fail = p.returncode != 0
    for i, (cid, exp, out, args) in enumerate(todo):
        try:
            if json.load(open(out))["status"] == "ok":
                print("[%d/%d] %s: done before" % (i + 1, len(todo), cid), flush=True)
                continue
        except (OSError, ValueError, KeyError):
            pass
        fw, algo, att = PEER_RUNS[cid.rsplit("-", 1)[1]]
        dtype = [v for o, v in zip(args, args[1:]) if o == "--dtype"]
        formulas = "--lora-rank" not in args and dtype[-1:] != ["bf16"]  # what --reconcile's formulas cover
        cmd = [sys.executable, os.path.abspath(__file__), "memory", "--dpprof", a.dpprof, "--framework", fw, "--algo", algo,
               "--attention", att, "--experiment", exp, "--out", out] + (["--reconcile"] if formulas else []) + ["--"] + args
        t0 = time.time()
        q = subprocess.run(cmd, capture_output=True, text=True)
        with open(os.path.join(a.out_dir, cid + ".log"), "w") as f:
            f.write(q.stdout + q.stderr)
        last = (q.stdout.strip().splitlines() or [q.stderr.strip()[-300:]])[-1]
        print("[%d/%d] %s: %s (%.0f s)" % (i + 1, len(todo), cid, last, time.time() - t0), flush=True)
        fail |= q.returncode != 0
    write_tables(a.out_dir, a.tables, a.conf)
    return 1 if fail else 0


PEER_LOOPS = (("pytorch_sdpa", ["--framework", "pytorch"]), ("pytorch_eager", ["--framework", "pytorch", "--attention", "eager"]),
              ("opacus_persample", ["--framework", "opacus", "--algo", "persample", "--sigma", "1.0"]),
              ("opacus_ghost", ["--framework", "opacus", "--algo", "ghost", "--sigma", "1.0", "--untied"]))


def conf_runs(conf):
    """(label, dpprof run options) of each shape of an experiment file's axis shape with each peer's loop (Opacus's
    ghost clipping on an untied head: it refuses a tied one)"""
    shapes = []
    for line in open(conf):
        if line.split("=", 1)[0].split() == ["axis", "shape"]:
            shapes = [v.split(":", 1) for v in line.split("=", 1)[1].split("|")]
    if not shapes:
        die("%s: no axis shape" % conf)
    return [("%s %s" % (name.strip(), peer), shlex.split(args) + extra) for name, args in shapes for peer, extra in PEER_LOOPS]


def conf_shapes(conf):
    """the names of an experiment file's axis shape, in its order"""
    try:
        for line in open(conf):
            if line.split("=", 1)[0].split() == ["axis", "shape"]:
                return [v.split(":", 1)[0].strip() for v in line.split("=", 1)[1].split("|")]
    except OSError:
        die("%s: cannot read it" % conf)
    return []


def write_tables(d, tables, conf=None, dpprof=None):
    """DIR/reconciliation.md and, with tables, NAME-reconcile-table.tex from the peers' results in DIR (their ids
    EXPERIMENT-SHAPE-RUN, in the experiment file's order of shapes)"""
    ids, shape_key = [], {}
    for f in sorted(glob.glob(os.path.join(d, "*.json"))):
        cid = os.path.basename(f)[:-len(".json")]
        if cid.count("-") >= 2 and cid.rsplit("-", 1)[1] in PEER_RUNS:
            ids.append(cid)
            try:
                c = json.load(open(f))["config"]
                k = (c["seq"], c["batch"], c.get("lora_rank") or 0)
            except (OSError, ValueError, KeyError, TypeError):
                k = (0, 0, 0)
            shape_key[cid.rsplit("-", 2)[1]] = max(k, shape_key.get(cid.rsplit("-", 2)[1], k))
    order = {r: i for i, r in enumerate(PEER_RUNS)}
    shapes = conf_shapes(conf) if conf else []
    # the shapes in the experiment file's order, else by sequence length, batch and LoRA, then name; within a shape
    # the peers in PEER_RUNS's order
    ids.sort(key=lambda c: (shapes.index(c.rsplit("-", 2)[1]) if c.rsplit("-", 2)[1] in shapes else len(shapes),
                            shape_key[c.rsplit("-", 2)[1]], c.rsplit("-", 2)[1], order[c.rsplit("-", 1)[1]]))
    if not ids:
        die("%s: no peer results (EXPERIMENT-SHAPE-RUN.json, RUN one of %s)" % (d, " ".join(PEER_RUNS)))
    rows = reconciliation_rows(d, ids)
    write_text(os.path.join(d, "reconciliation.md"), reconciliation_md(rows) + users_loops_md(d))
    if tables:
        os.makedirs(tables, exist_ok=True)
        write_text(os.path.join(tables, ids[0].rsplit("-", 2)[0] + "-reconcile-table.tex"), reconciliation_tex(rows))
        vs = {}  # the libraries the results were measured with, for the paper's caption
        for r in rows:
            vs.update({k: v for k, v in r["versions"].items() if v})
        write_text(os.path.join(tables, ids[0].rsplit("-", 2)[0] + "-versions-macros.tex"),
                   "%% peers.py memory-table: the versions the peers' results were measured with\n\\dpdef{%s-versions}{x}{versions}{%s}\n"
                   % (ids[0].rsplit("-", 2)[0], ", ".join("%s %s" % (k, str(v).replace("_", "\\_").replace("+", "+")) for k, v in sorted(vs.items()))))
        frameworks_macros(d, tables, dpprof)
    print("peers.py: %s/reconciliation.md%s" % (d, ", %s/%s-reconcile-table.tex" % (tables, ids[0].rsplit("-", 2)[0]) if tables else ""))


def frameworks_macros(d, tables, dpprof):
    """peers-memory-frameworks-macros.tex: the paper's numbers of dpprof --framework against the loops users write,
    from DIR's draws.json (dpprof run again on each), study-shapes.json and fit-check.json, where they are"""
    out = ["%% peers.py memory-table: dpprof --framework against the loops users write (draws.json, study-shapes.json, fit-check.json)"]
    mac = lambda key, field, value: out.append("\\dpdef{frameworks}{%s}{%s}{%s}" % (key, field, value))
    path = os.path.join(d, "draws.json")
    if os.path.exists(path) and dpprof and os.path.exists(dpprof):
        draws = json.load(open(path))["draws"]
        worst, n = 0.0, {"opacus": 0, "bf16": 0, "ghost": 0, "checkpoint": 0}
        for r in draws:
            a = r["args"]
            p = subprocess.run([dpprof, "run", "--backend", "dry", "--steps", "2", "--timeline", "none", "--quiet", "--out", "-"] + a,
                               capture_output=True, text=True)
            if p.returncode:
                die("dpprof refused draw %s: %s" % (r["id"], p.stderr.strip()[:300]))
            got, want = json.loads(p.stdout)["breakdown"]["bytes"]["peak"], r.get("log_peak_bytes", r["tracker_peak_bytes"])
            worst = max(worst, abs(got - want))
            n["opacus"] += "opacus" in a
            n["bf16"] += "bf16" in a
            n["ghost"] += "ghost" in a
            n["checkpoint"] += "--checkpoint" in a
        mac("draws", "n", len(draws))
        for k, v in n.items():
            mac("draws", k, v)
        mac("draws", "worst_kib", "%.0f" % (worst / 1024))
    path = os.path.join(d, "study-shapes.json")
    if os.path.exists(path):
        loops = {}
        for r in json.load(open(path))["draws"]:
            shape, run = r["label"].split()
            loops[shape, run] = r.get("log_peak_bytes", r["tracker_peak_bytes"])
            mac("%s-%s" % (shape, run), "loop_gib", "%.2f" % (loops[shape, run] / 2**30))
        for (shape, run), peak in loops.items():  # each loop over its framework's own non-private loop (PyTorch, SDPA)
            if (shape, "pytorch_sdpa") in loops:
                mac("%s-%s" % (shape, run), "loop_overhead", "%.2f" % (peak / loops[shape, "pytorch_sdpa"]))
        for shape in sorted({k[0] for k in loops}):  # dpprof's engine over its own non-private run, beside
            try:
                base = json.load(open(os.path.join(d, "peers-memory-%s-dpprof_vanilla.json" % shape)))["breakdown"]["bytes"]["peak"]
                for run in ("persample", "ghost"):
                    pk = json.load(open(os.path.join(d, "peers-memory-%s-dpprof_%s.json" % (shape, run))))["breakdown"]["bytes"]["peak"]
                    mac("%s-dpprof_%s" % (shape, run), "overhead", "%.2f" % (pk / base))
            except (OSError, ValueError, KeyError, TypeError):
                pass
    path = os.path.join(d, "fit-check.json")
    if os.path.exists(path):
        recs = json.load(open(path))
        mac("fitcheck", "n", len(recs))
        mac("fitcheck", "holds", sum(1 for r in recs if r.get("holds")))
    write_text(os.path.join(tables, "peers-memory-frameworks-macros.tex"), "\n".join(out) + "\n")


def reconciliation_rows(d, ids):
    """per peer result of ids: its shape, run, peak, dpprof's peak, the terms and what is unexplained"""
    rows = []
    for cid in ids:
        try:
            j = json.load(open(os.path.join(d, cid + ".json")))
        except (OSError, ValueError):
            continue
        shape, run = cid.rsplit("-", 2)[1:]
        r = j.get("reconciliation")
        dp = dpf = None
        try:
            algo = PEER_RUNS[run][1]
            dj = json.load(open(os.path.join(d, cid.rsplit("-", 1)[0] + "-dpprof_" + algo + ".json")))
            dp = dj["breakdown"]["bytes"]["peak"] if dj.get("status") == "ok" else None
            dpf = dj["throughput"]["flops_per_step"] if dj.get("status") == "ok" else None
        except (OSError, ValueError, KeyError):
            dpf = None
        rows.append({"shape": shape, "run": run, "status": j.get("status"), "error": j.get("error", ""),
                     "peer": j.get("breakdown", {}).get("bytes", {}).get("peak"), "dpprof": dp, "rec": r,
                     "phase": j.get("breakdown", {}).get("peak_phase"), "dpprof_flops": dpf,
                     "flops": (j.get("throughput") or {}).get("flops_per_step"), "versions": {k: j["meta"].get(k) for k in
                     ("torch", "transformers", "opacus", "peft") if j.get("meta", {}).get(k)}})
    return rows


def reconciliation_md(rows):
    gib = lambda b: "%.2f" % (b / 2**30) if b is not None else "--"
    tf = lambda f: "%.1f" % (f / 1e12) if f else "--"
    out = ["# PyTorch and Opacus beside dpprof: peak memory, fp32, on fake tensors", "",
           "Each peer's step on fake tensors under PyTorch's MemTracker (`peers.py memory`), dpprof's dry plan of the same",
           "configuration and algorithm; ratio: dpprof's peak over the peer's. unexplained: the peer's measured activations",
           "and temporaries less what the formulas of docs/peers.md say it holds at its peak. TFLOP: a step's, PyTorch's",
           "FlopCounterMode for the peer, dpprof's analytic count. No GPU measured these.", "",
           "| shape | peer | peer GiB | dpprof GiB | dpprof / peer | peer's peak in | unexplained bytes | peer TFLOP | dpprof TFLOP |",
           "|---|---|---:|---:|---:|---|---:|---:|---:|"]
    for r in rows:
        if r["status"] != "ok":
            out.append("| %s | %s | -- | %s | -- | %s | -- | -- | %s |" % (r["shape"], r["run"], gib(r["dpprof"]), r["error"][:120], tf(r["dpprof_flops"])))
            continue
        ratio = "%.3f" % (r["dpprof"] / r["peer"]) if r["dpprof"] else "--"
        un = "%d" % r["rec"]["unexplained_bytes"] if r["rec"] else "not reconciled (LoRA)"
        out.append("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (r["shape"], r["run"], gib(r["peer"]), gib(r["dpprof"]), ratio, r["phase"], un,
                                                                 tf(r["flops"]), tf(r["dpprof_flops"])))
    out += ["", "## The terms (peer - dpprof, MiB)", ""]
    for r in rows:
        if r["rec"]:
            out.append("**%s, %s** (%.1f - %.1f = %+.1f MiB):" % (r["shape"], r["run"], r["rec"]["peer_peak_bytes"] / 2**20,
                       r["rec"]["dpprof_peak_bytes"] / 2**20, r["rec"]["difference_bytes"] / 2**20))
            out.append("")
            for t in r["rec"]["terms"]:
                if t["bytes"]:
                    out.append("- %+.1f: %s" % (t["bytes"] / 2**20, t["name"]))
            out.append("- %+.6f: unexplained (%d bytes)" % (r["rec"]["unexplained_bytes"] / 2**20, r["rec"]["unexplained_bytes"]))
            out.append("")
    vs = {}
    for r in rows:
        vs.update(r["versions"])
    out.append("Versions: " + ", ".join("%s %s" % kv for kv in sorted(vs.items())) + ".")
    return "\n".join(out) + "\n"


def users_loops_md(d, dpprof=None):
    """the section of reconciliation.md on the loops users write, at the same shapes: DIR/study-shapes.json (peers.py
    draws --conf: the program's own peak and MemTracker's) beside `dpprof run --framework`'s dry peak of the loop
    (the binary DPPROF_BIN, ./dpprof); empty where the file or the binary is missing"""
    path, dpprof = os.path.join(d, "study-shapes.json"), dpprof or os.environ.get("DPPROF_BIN", "./dpprof")
    if not os.path.exists(path) or not os.path.exists(dpprof):
        return ""
    gib = lambda b: "%.2f" % (b / 2**30)
    out = ["", "## The loops users write, at the same shapes", "",
           "The harness above keeps the logits in the caller and turns the cache off; the loops users write do neither",
           "(`loss = model(input_ids=x, labels=y).loss`, Hugging Face's defaults; Opacus's ghost clipping: its criterion on the",
           "logits the caller holds, an untied head). Each loop's own peak on fake tensors (every storage logged, no hook),",
           "MemTracker's, and dpprof's walk of the same loop (`dpprof run --framework pytorch|opacus`, dry; docs/frameworks.md):",
           "every row, LoRA's included, within the 512-byte rounding the CPU leaves out.", "",
           "| shape | loop | the loop GiB | MemTracker GiB | dpprof --framework GiB | dpprof - the loop, bytes | dpprof's engine GiB |",
           "|---|---|---:|---:|---:|---:|---:|"]
    engine = {}
    for r in json.load(open(path))["draws"]:
        args = r["args"]
        p = subprocess.run([dpprof, "run", "--backend", "dry", "--steps", "2", "--timeline", "none", "--quiet", "--out", "-"] + args,
                           capture_output=True, text=True)
        walk = json.loads(p.stdout)["breakdown"]["bytes"]["peak"] if p.returncode == 0 else None
        # dpprof's engine at the same shape and algorithm (the framework's options left out)
        eng_args, i = [], 0
        while i < len(args):
            if args[i] in ("--framework", "--attention"):
                i += 2
                continue
            eng_args.append(args[i])
            i += 1
        key = " ".join(eng_args)
        if key not in engine:
            p = subprocess.run([dpprof, "run", "--backend", "dry", "--steps", "2", "--timeline", "none", "--quiet", "--out", "-"] + eng_args,
                               capture_output=True, text=True)
            engine[key] = json.loads(p.stdout)["breakdown"]["bytes"]["peak"] if p.returncode == 0 else None
        own = r.get("log_peak_bytes", r["tracker_peak_bytes"])
        shape, loop = (r.get("label") or "? ?").split(" ", 1)
        out.append("| %s | %s | %s | %s | %s | %s | %s |" % (shape, loop, gib(own), gib(r["tracker_peak_bytes"]), gib(walk) if walk else "--",
                                                          "%+d" % (walk - own) if walk else "--", gib(engine[key]) if engine[key] else "--"))
    return "\n".join(out) + "\n"


def reconciliation_tex(rows):
    esc = lambda x: x.replace("_", "\\_")
    out = ["% peers.py memory-sweep: PyTorch and Opacus beside dpprof (peak GiB, fp32, fake tensors) and the largest terms",
           "\\begin{tabular}{llrrrrrl}", "\\toprule",
           " & & \\multicolumn{3}{c}{peak (GiB)} & \\multicolumn{2}{c}{TFLOP a step} & \\\\",
           "\\cmidrule(lr){3-5}\\cmidrule(lr){6-7}",
           "shape & peer & peer & dpprof & ratio & peer & dpprof & largest terms, peer $-$ dpprof (GiB) \\\\", "\\midrule"]
    for r in rows:
        if r["status"] != "ok":
            out.append("%s & %s & -- & -- & -- & -- & -- & not run \\\\" % (esc(r["shape"]), esc(r["run"])))
            continue
        terms = sorted(r["rec"]["terms"], key=lambda t: -abs(t["bytes"]))[:3] if r["rec"] else []
        tt = "; ".join("%s %+.1f" % (esc(short_term(t["name"])), t["bytes"] / 2**30) for t in terms if abs(t["bytes"]) >= 2**26)
        tf = lambda f: "%.1f" % (f / 1e12) if f else "--"
        out.append("%s & %s & %.1f & %s & %s & %s & %s & %s \\\\" % (esc(r["shape"]), esc(r["run"]), r["peer"] / 2**30,
                   "%.1f" % (r["dpprof"] / 2**30) if r["dpprof"] else "--", "%.2f" % (r["dpprof"] / r["peer"]) if r["dpprof"] else "--",
                   tf(r["flops"]), tf(r["dpprof_flops"]), tt or "--"))
    out += ["\\bottomrule", "\\end{tabular}"]
    return "\n".join(out) + "\n"


GRID_Q = (1e-4, 1e-3, 1e-2, 0.1, 1.0)
GRID_SIGMA = (0.4, 0.7, 1.0, 2.0, 5.0)
GRID_STEPS = (1, 100, 10000, 100000)
GRID_DELTA = (1e-5, 1e-8)
# the reduced grid: a corner of each kind (tiny epsilon, large epsilon, many steps, q 1, delta 1e-8)
GRID_REDUCED = ((1e-4, 5.0, 100, 1e-5), (1e-4, 0.7, 10000, 1e-8), (1e-3, 1.0, 100, 1e-5), (1e-3, 0.4, 10000, 1e-5),
                (1e-2, 2.0, 10000, 1e-8), (1e-2, 0.7, 100, 1e-5), (0.1, 5.0, 100, 1e-5), (0.1, 1.0, 1, 1e-8),
                (0.1, 0.4, 100, 1e-5), (1.0, 2.0, 100, 1e-8), (1.0, 0.7, 1, 1e-5), (1.0, 5.0, 10000, 1e-5))


def gaussian_exact(sigma, steps, delta):
    """q = 1: steps of the Gaussian mechanism at noise multiplier sigma are one at sigma / sqrt(steps), whose
    delta(eps) = Phi(1 / (2 s) - eps s) - e^eps Phi(-1 / (2 s) - eps s) (Balle and Wang 2018), in logs"""
    from scipy.special import log_ndtr
    s = sigma / math.sqrt(steps)

    def d(e):
        a, b = log_ndtr(0.5 / s - e * s), e + log_ndtr(-0.5 / s - e * s)
        return math.exp(a) - math.exp(b) if a > b else 0.0
    lo, hi = 0.0, 1e7
    for _ in range(300):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if d(mid) > delta else (lo, mid)
    return hi


def cmd_accountant(a):
    """dpprof's pld against dp_accounting's at dpprof's interval, point by point"""
    try:
        from dp_accounting.pld import privacy_loss_distribution as pld
    except ImportError:
        die("accountant needs dp_accounting (pip install dp-accounting)")
    points = GRID_REDUCED if a.grid == "reduced" else tuple(
        (q, s, t, d) for q in GRID_Q for s in GRID_SIGMA for t in GRID_STEPS for d in GRID_DELTA)
    out = open(a.out, "w") if a.out else sys.stdout
    cols = ("q", "sigma", "steps", "delta", "eps_dpprof", "accountant", "interval", "s_dpprof", "eps_dpacc_pess",
            "eps_dpacc_opt", "s_dpacc", "eps_exact", "dpprof_over_pess", "dpprof_over_opt", "dpprof_over_exact")
    try:
        import importlib.metadata
        ver = importlib.metadata.version("dp-accounting")
    except Exception:
        ver = "?"
    dv = subprocess.run([a.dpprof, "--version"], capture_output=True, text=True).stdout.split("\n")[0]
    print("# dpprof epsilon --accountant pld against dp_accounting %s's PLD at dpprof's interval (pessimistic: connect the dots; optimistic: "
          "privacy buckets), and at q 1 the exact epsilon; %s; %s, %s, %d cpus; times in seconds of wall clock" % (
              ver, dv, datetime.date.today().isoformat(), platform.processor() or platform.machine(), os.cpu_count() or 0), file=out)
    print("\t".join(cols), file=out, flush=True)
    bad = 0
    for q, s, t, d in points:
        t0 = time.time()
        p = subprocess.run([a.dpprof, "epsilon", "--sigma", repr(s), "--sample-rate", repr(q), "--steps", str(t),
                            "--delta", repr(d), "--accountant", "pld"], capture_output=True, text=True)
        t1 = time.time() - t0
        kv = dict(l.split(None, 1) for l in p.stdout.splitlines() if " " in l)
        if p.returncode != 0 or "epsilon" not in kv:
            print("accountant: dpprof epsilon failed at q %g sigma %g steps %d delta %g: %s" % (q, s, t, d, p.stderr.strip()[:200]),
                  file=sys.stderr)
            bad += 1
            continue
        e, acc, h = float(kv["epsilon"]), kv.get("accountant", "?"), float(kv.get("interval", "nan"))
        ep = eo = float("nan")
        t0 = time.time()
        if acc == "pld" and h == h:
            try:
                ep = pld.from_gaussian_mechanism(s, sampling_prob=q, value_discretization_interval=h, pessimistic_estimate=True,
                                                 use_connect_dots=True).self_compose(t).get_epsilon_for_delta(d)
                eo = pld.from_gaussian_mechanism(s, sampling_prob=q, value_discretization_interval=h, pessimistic_estimate=False,
                                                 use_connect_dots=False).self_compose(t).get_epsilon_for_delta(d)
            except Exception as ex:  # dp_accounting's own limits: said, not counted against dpprof
                print("accountant: dp_accounting failed at q %g sigma %g steps %d delta %g: %s" % (q, s, t, d, ex), file=sys.stderr)
        t2 = time.time() - t0
        ex = gaussian_exact(s, t, d) if q == 1.0 else float("nan")
        rp = e / ep - 1 if ep == ep and 0 < ep < float("inf") else float("nan")
        ro = e / eo - 1 if eo == eo and 0 < eo < float("inf") else float("nan")
        rx = e / ex - 1 if ex == ex and ex > 0 else float("nan")
        why = []
        if ro == ro and ro < -1e-9:
            why.append("dp_accounting's optimistic estimate %.10g" % eo)
        if rx == rx and rx < -1e-9:
            why.append("the exact value %.10g" % ex)
        if rp == rp and rp < -a.tolerance and ep <= 100:
            why.append("dp_accounting's pessimistic bound %.10g by more than %g" % (ep, a.tolerance))
        if why:
            bad += 1
            print("accountant: q %g sigma %g steps %d delta %g: dpprof %.10g below %s" % (q, s, t, d, e, " and ".join(why)), file=sys.stderr)
        print("\t".join((repr(q), repr(s), str(t), repr(d), "%.10g" % e, acc, "%.3g" % h, "%.2f" % t1, "%.10g" % ep, "%.10g" % eo,
                         "%.2f" % t2, "%.10g" % ex, "%.2e" % rp, "%.2e" % ro, "%.2e" % rx)), file=out, flush=True)
    if a.out:
        out.close()
    print("accountant: %d points, %d below a reference" % (len(points), bad), file=sys.stderr)
    return 1 if bad else 0


PROJ = ("q", "k", "v", "o", "gate", "up", "down")


def lora_rank_below(r, targets, C, kv_width):
    """r, or the largest power of two below the narrowest adapted width (k and v: the kv-heads' width; the others: the
    model's) where r is not below it (no draw is taken for it: a seed's earlier draws stay as they were)"""
    limit = min([C] + [kv_width for t in targets if t in ("k", "v")])
    while r >= limit:
        r //= 2
    return r


def draw_args(rng, only=None):
    """one configuration drawn at random, as the options of dpprof run --framework pytorch; only: that framework
    (pytorch, opacus), Opacus's ghost clipping alone (ghost), or PyTorch's loop with Hugging Face's gradient
    checkpointing (checkpoint). The draws of a seed without `only` are those the first committed draws were made with"""
    hd, kv, rep = rng.choice((16, 32, 64, 128)), rng.choice((1, 2, 4, 8)), rng.choice((1, 2, 4))
    nh = kv * rep
    while nh * hd > 2048:
        hd //= 2
    C = nh * hd
    F = max(16, int(C * rng.uniform(2.0, 4.0)) // 16 * 16)
    B = rng.randint(1, 8)
    if (rng.random() < 0.3 or only in ("opacus", "ghost", "tied", "bf16")) and only not in ("pytorch", "checkpoint"):  # Opacus: fp32, an untied head
        # (tied: its hooks with a tied head; bf16: autocast, sdpa, its hooks or ghost clipping, a tied head under the hooks); full fine-tuning or LoRA
        algo = "ghost" if only == "ghost" or (only in ("opacus", "bf16") and rng.random() < 0.5) else "persample"
        tied = only == "tied" or (only == "bf16" and algo == "persample" and rng.random() < 0.3)
        args = ["--framework", "opacus", "--algo", algo, "--sigma", "1.0", "--vocab", str(rng.randint(500, 32768)), "--hidden", str(C),
                "--layers", str(rng.randint(1, 4)), "--heads", str(nh), "--kv-heads", str(kv), "--ffn", str(F),
                "--seq", str(rng.choice((32, 64, 128, 256, 512, 1024))), "--batch", str(B), "--physical-batch", str(rng.randint(1, B)),
                "--tied" if tied else "--untied"]
        if only != "bf16" and rng.random() < 0.4:
            args += ["--attention", "eager"]
        if rng.random() < 0.4:
            r = rng.choice((1, 2, 4, 8, 16))
            targets = [t for t in PROJ if rng.random() < 0.4] or [rng.choice(PROJ)]
            args += ["--lora-rank", str(lora_rank_below(r, targets, C, kv * hd)), "--lora-targets", ",".join(targets)]
            if rng.random() < 0.25 and not tied:
                args.append("--train-head")
        if only == "bf16":  # under LoRA a base in bf16, or in fp32 (--frozen-masters: a trained head needs it)
            args += ["--dtype", "bf16"]
            if "--lora-rank" in args and ("--train-head" in args or rng.random() < 0.3):
                args.append("--frozen-masters")
        return args
    args = ["--framework", "pytorch", "--vocab", str(rng.randint(500, 32768)), "--hidden", str(C), "--layers", str(rng.randint(1, 4)),
            "--heads", str(nh), "--kv-heads", str(kv), "--ffn", str(F), "--seq", str(rng.choice((32, 64, 128, 256, 512, 1024))),
            "--batch", str(B), "--physical-batch", str(rng.randint(1, B)), "--tied" if rng.random() < 0.4 else "--untied"]
    if rng.random() < 0.4:
        args += ["--attention", "eager"]
    if rng.random() < 0.5:
        targets = [t for t in PROJ if rng.random() < 0.4] or [rng.choice(PROJ)]
        args += ["--lora-rank", str(lora_rank_below(rng.choice((1, 2, 4, 8, 16)), targets, C, kv * hd)), "--lora-targets", ",".join(targets)]
        if rng.random() < 0.25:  # PEFT's modules_to_save (a tied head it would untie: drawn untied)
            args.append("--train-head")
            args[args.index("--tied") if "--tied" in args else args.index("--untied")] = "--untied"
    elif rng.random() < 0.15:
        args.append("--frozen-head")
    if "eager" not in args and rng.random() < 0.5:  # bf16 autocast; under LoRA a base in bf16, or in fp32 (--frozen-masters)
        args += ["--dtype", "bf16"]
        if "--lora-rank" in args and ("--train-head" in args or rng.random() < 0.3):
            args.append("--frozen-masters")
    if only == "checkpoint":
        args += ["--checkpoint", "layers"]
    return args


def NativeDropout(torch, p):
    """nn.Dropout as it runs on CUDA (a fused native_dropout: the output and a bool mask its backward keeps), on any
    device"""
    class Drop(torch.nn.Module):
        def forward(self, x):
            return torch.native_dropout(x, p, True)[0] if self.training else x
    return Drop()


def user_loop(cfg, attention, bf16, watch):
    """two steps of the loop a PyTorch user writes, on fake tensors, the model built as the configuration says (PEFT's
    LoRA, a base in bf16, the head trained or frozen); with config.framework opacus, Opacus's GradSampleModule (hooks)
    and DPOptimizer, each physical batch stepped as BatchMemoryManager steps it (skipped but the last). watch(model,
    opt) is a context manager around the steps. returns the versions (and any patch) it ran with"""
    import torch
    import transformers
    from torch._subclasses.fake_tensor import FakeTensorMode
    warnings.filterwarnings("ignore")
    meta = {"torch": torch.__version__, "transformers": transformers.__version__}
    opacus = cfg.get("framework") == "opacus"
    if opacus:
        import opacus as opacus_mod
        meta["opacus"] = opacus_mod.__version__
        meta["patches"] = fake_patches(torch, "opacus")
    B, P, T, V = cfg["batch"], cfg["physical_batch"], cfg["seq"], cfg["vocab"]
    with FakeTensorMode(allow_non_fake_inputs=True):
        base16 = bf16 and cfg.get("lora_rank") and not cfg.get("frozen_masters")  # PEFT's base loaded in bf16 (torch_dtype)
        model = transformers.LlamaForCausalLM._from_config(hf_config(cfg, transformers, use_cache=None), attn_implementation=attention,
                                                           dtype=torch.bfloat16 if base16 else torch.float32)
        if cfg.get("checkpoint") == "layers":  # Hugging Face's gradient checkpointing, its defaults (non-reentrant)
            (model.activation_checkpointing_enable if hasattr(model, "activation_checkpointing_enable") else model.gradient_checkpointing_enable)()
        if cfg.get("lora_rank"):
            import peft
            from peft.tuners import tuners_utils
            meta["peft"] = peft.__version__
            # as fake_step: peft's moves to the base layer's device and dtype skipped (the same already)
            tuners_utils.BaseTunerLayer._move_adapter_to_device_of_base_layer = lambda self, adapter_name, device=None: None
            to = torch.nn.Module.to
            torch.nn.Module.to = lambda self, *args, **kwargs: self
            p_drop = cfg.get("lora_dropout") or 0.0
            model = peft.get_peft_model(model, peft.LoraConfig(r=cfg["lora_rank"], lora_alpha=cfg["lora_alpha"], lora_dropout=p_drop,
                                                              target_modules=[t + "_proj" for t in cfg["lora_targets"].split(",")],
                                                              modules_to_save=["lm_head"] if cfg.get("train_head") else None))
            torch.nn.Module.to = to
            patches = meta.setdefault("patches", [])
            for mod in model.modules():  # modules_to_save's copy (copy.deepcopy) belongs to another fake mode, whose every
                # use the tracker would count anew: remade in this one, a tensor of the same size (the real copy's memory)
                if isinstance(mod, peft.utils.ModulesToSaveWrapper):
                    for copy_ in mod.modules_to_save.values():
                        copy_.weight = torch.nn.Parameter(torch.empty_like(mod.original_module.weight))
                        note = ("modules_to_save's copy of the head remade in the tracker's fake mode (copy.deepcopy's "
                                "is another fake mode's, each use of it counted as a new tensor)")
                        patches += [note] if note not in patches else []
                if p_drop and isinstance(mod, torch.nn.ModuleDict) and all(isinstance(d, torch.nn.Dropout) for d in mod.values()):
                    for k in list(mod.keys()):  # PEFT's lora_dropout as CUDA runs it: native_dropout's output and bool mask
                        mod[k] = NativeDropout(torch, p_drop)  # (the CPU's dropout multiplies by a float noise instead)
                    note = "PEFT's lora_dropout as CUDA runs it: torch.native_dropout (an output and a bool mask; the CPU's dropout makes a float noise)"
                    patches += [note] if note not in patches else []
        else:
            for n, p in model.named_parameters():  # --frozen-head without LoRA (a tied head: the embedding with it)
                if "lm_head" in n or (cfg.get("tie_embeddings") and "embed_tokens" in n):
                    p.requires_grad_(bool(cfg.get("train_head")))
        model.train()
        trainable = [p for p in model.parameters() if p.requires_grad]
        opt = torch.optim.AdamW(trainable, lr=cfg["lr"], weight_decay=cfg["weight_decay"], foreach=True)
        net, criterion = model, None
        ghost = opacus and cfg.get("algo") == "ghost"
        if opacus and not ghost:  # what make_private makes of them (grad_sample_mode="hooks"), at the logical batch
            from opacus import GradSampleModule
            from opacus.optimizers import DPOptimizer
            net = GradSampleModule(model, batch_first=True, loss_reduction="mean", strict=False)
            opt = DPOptimizer(opt, noise_multiplier=cfg["sigma"] or 1.0, max_grad_norm=cfg["max_grad_norm"] or 1.0, expected_batch_size=B,
                              loss_reduction="mean")
        elif ghost:  # grad_sample_mode="ghost": make_private wraps the criterion too
            from opacus.grad_sample import GradSampleModuleFastGradientClipping
            from opacus.optimizers import DPOptimizerFastGradientClipping
            from opacus.utils.fast_gradient_clipping_utils import DPLossFastGradientClipping
            net = GradSampleModuleFastGradientClipping(model, batch_first=True, max_grad_norm=cfg["max_grad_norm"] or 1.0,
                                                       use_ghost_clipping=True, loss_reduction="mean", strict=False)
            opt = DPOptimizerFastGradientClipping(opt, noise_multiplier=cfg["sigma"] or 1.0, max_grad_norm=cfg["max_grad_norm"] or 1.0,
                                                  expected_batch_size=B, loss_reduction="mean")
            criterion = DPLossFastGradientClipping(net, opt, torch.nn.CrossEntropyLoss(), "mean")
        if opacus:  # BatchMemoryManager's physical batches, cut by its own splitter (np.array_split: ceil(L / P)
            # near-equal parts; an empty draw one empty batch) from each step's logical batch L: B, or under Poisson
            # sampling dpprof's draws; every part but a step's last a skipped step
            from opacus.utils.batch_memory_manager import BatchSplittingSampler
            sizes = [[len(i) for i in BatchSplittingSampler(sampler=[list(range(L))], max_batch_size=P, optimizer=opt)]
                     for L in (cfg.get("batch_sizes") or [B, B])[:2]]
            opt._step_skip_queue.clear()  # the splitter's signals: the loop gives them again, as it runs each part
            steps = [[(n, j + 1 < len(parts)) for j, n in enumerate(parts)] for parts in sizes]
        else:  # the loop's gradient accumulation: physical batches of P, the last the rest
            steps = [[(min(P, B - m0), m0 + P < B) for m0 in range(0, B, P)] for _ in range(2)]
        with watch(net, opt) as w:
            for step in range(2):
                for n, skip in steps[step]:
                    x = torch.randint(0, V, (n, T))
                    y = torch.randint(0, V, (n, T))
                    w.physical(step)
                    with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=bf16):
                        if ghost:  # the loss is the wrapped criterion's, on the logits the caller holds
                            logits = net(input_ids=x).logits
                            loss = criterion(logits.view(-1, V), y.view(-1), shape=(n, T))
                        else:
                            loss = net(input_ids=x, labels=y).loss
                    w.mark(step, "backward")
                    loss.backward()
                    if opacus:  # BatchMemoryManager: a physical batch's step, skipped but the logical batch's last
                        w.mark(step, "optimizer_step")
                        opt.signal_skip_step(do_skip=skip)
                        opt.step()
                        opt.zero_grad(set_to_none=True)
                if not opacus:
                    w.mark(step, "optimizer_step")
                    opt.step()
                    opt.zero_grad(set_to_none=True)
    return meta


def storage_log(events=None, state=None):
    """a TorchDispatchMode that sees every storage an operator returns, keyed by the storage itself (two tensors of one
    storage are one allocation), freed when its last user goes: the program's own memory, with nothing held for the
    log (no hooks). .peak and .cur are bytes above what was live when it began (add() counts what was, the model's
    parameters); with events, each allocation and free appended as (state["step"], "+BYTES op shape dtype")"""
    import weakref
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class Log(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.live, self.cur, self.peak = {}, 0, 0

        def add(self, tensors):  # storages alive before the log began (the parameters, the buffers)
            for t in tensors:
                st = t.untyped_storage()
                if st._cdata not in self.live:
                    self.live[st._cdata] = st.nbytes()
                    self.cur += st.nbytes()
            self.peak = max(self.peak, self.cur)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            for t in tree_flatten(out)[0]:
                if not isinstance(t, torch.Tensor):
                    continue
                st = t.untyped_storage()
                key = st._cdata
                if key in self.live or not st.nbytes():
                    continue
                self.live[key] = st.nbytes()
                self.cur += st.nbytes()
                self.peak = max(self.peak, self.cur)
                if events is not None:
                    events.append((state["step"], "+%d %s %s %s" % (st.nbytes(), str(func).replace("aten.", ""), tuple(t.shape), str(t.dtype).replace("torch.", ""))))

                def gone(key=key, name=str(func).replace("aten.", ""), log=self):
                    if key in log.live:
                        n = log.live.pop(key)
                        log.cur -= n
                        if events is not None:
                            events.append((state["step"], "-%d %s" % (n, name)))
                weakref.finalize(st, gone).atexit = False  # nothing to count once the interpreter exits
            return out
    return Log()


def tracker_peak(cfg, attention, bf16, log=False):
    """user_loop under PyTorch's MemTracker: the peak bytes and the versions; with log, also the peak the storage log
    sees inside the tracker (what the program holds with the tracker's hooks installed)"""
    import contextlib
    from torch.distributed._tools.mem_tracker import MemTracker
    out = {}

    @contextlib.contextmanager
    def watch(model, opt):
        mt = MemTracker()

        class NoHook:  # the tracker hooks every parameter's gradient; a frozen one cannot take a hook
            def remove(self):
                pass
        for p in model.parameters():
            if not p.requires_grad:
                mt._param_to_grad_hook_handles[p] = (NoHook(), NoHook())
        mt.track_external(model, opt)
        sl = storage_log()
        sl.add(list(model.parameters()) + list(model.buffers()))

        class W:
            def physical(self, step):
                mt.reset_mod_stats()  # the tracker's module statistics hold one call of a module (the totals are kept)

            def mark(self, step, phase):
                pass
        with mt, (sl if log else contextlib.nullcontext()):
            yield W()
        out["peak"] = max(v["Total"] for v in mt.get_tracker_snapshot("peak").values())
        out["log"] = sl.peak
    meta = user_loop(cfg, attention, bf16, watch)
    return (out["peak"], meta, out["log"]) if log else (out["peak"], meta)


def log_peak(cfg, attention, bf16):
    """user_loop's peak bytes as the storage log sees them, no tracker installed: the program's own"""
    import contextlib
    out = {}

    @contextlib.contextmanager
    def watch(model, opt):
        sl = storage_log()
        sl.add(list(model.parameters()) + list(model.buffers()))

        class W:
            def physical(self, step):
                pass

            def mark(self, step, phase):
                pass
        with sl:
            yield W()
        out["peak"] = sl.peak
    user_loop(cfg, attention, bf16, watch)
    return out["peak"]


def cmd_events(a):
    """every storage the loop's last step allocates and frees, in order: what the framework walk was written against"""
    import contextlib
    args = a.dpprof_args if "--framework" in a.dpprof_args else ["--framework", "pytorch"] + a.dpprof_args
    cfg = dpprof_config(a.dpprof, ["--backend", "dry"] + args, algo_of(args), lora_ok=True)
    events, state = [], {"step": -1}

    @contextlib.contextmanager
    def watch(model, opt):
        sl = storage_log(events, state)
        sl.add(list(model.parameters()) + list(model.buffers()))

        class W:
            def physical(self, step):
                state["step"] = step
                events.append((step, "# forward"))

            def mark(self, step, phase):
                events.append((step, "# " + phase))
        with sl:
            yield W()
    user_loop(cfg, cfg["attention"], cfg["dtype"] == "bf16", watch)
    for step, line in events:
        if step == 1:
            print(line)
    return 0


def measure_apart(dpprof, args, tries=3):
    """the loop of a configuration under PyTorch's tracker and under the storage log, in a Python process of its own:
    PyTorch on fake tensors now and then corrupts its heap, and what one configuration leaves behind can crash the next.
    A process killed by a signal measured nothing and runs again (up to tries times); returns (tracker's peak, the
    versions, the log's peak under the tracker, the program's own peak)"""
    for _ in range(tries):
        p = subprocess.run([sys.executable, os.path.abspath(__file__), "measure", "--dpprof", dpprof, "--"] + args, capture_output=True, text=True)
        if p.returncode == 0:
            r = json.loads(p.stdout.strip().splitlines()[-1])
            return r["tracker_peak_bytes"], r["meta"], r["log_under_tracker_peak_bytes"], r["log_peak_bytes"]
        if p.returncode > 0:
            die("measuring %s failed (exit %d): %s" % (" ".join(args), p.returncode, p.stderr.strip()[-500:]), p.returncode)
        print("peers.py: measuring %s: killed by signal %d, run again" % (" ".join(args), -p.returncode), file=sys.stderr, flush=True)
    die("measuring %s: killed by a signal %d times" % (" ".join(args), tries), 3)


def cmd_measure(a):
    """one configuration's loop under the tracker and under the storage log, as one JSON line (measure_apart's child)"""
    args = a.dpprof_args
    cfg = dpprof_config(a.dpprof, ["--backend", "dry"] + args, algo_of(args), lora_ok=True)
    attn = "eager" if "eager" in args else "sdpa"
    peak, meta, under = tracker_peak(cfg, attn, cfg["dtype"] == "bf16", log=True)
    alone = log_peak(cfg, attn, cfg["dtype"] == "bf16")
    print(json.dumps({"tracker_peak_bytes": peak, "meta": meta, "log_under_tracker_peak_bytes": under, "log_peak_bytes": alone}), flush=True)
    return 0


def cmd_draws(a):
    rng = random.Random(a.seed)
    batch = {"seed": a.seed, "n": a.n, "only": a.only, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
             "git_commit": git_commit() or "unknown", "dpprof_version": dpprof_version(a.dpprof)}
    out = {"schema_version": 1, "meta": {"date": batch["date"], "git_commit": batch["git_commit"], "dpprof_version": batch["dpprof_version"],
                                         "python": platform.python_version(), "seed": a.seed, "n": a.n,
                                         "tracker": "torch.distributed._tools.mem_tracker.MemTracker", "device": "fake cpu (FakeTensorMode)",
                                         "loop": "loss = model(input_ids=x, labels=y).loss; loss.backward() per physical batch (x, y made "
                                                 "in the loop); opt.step(); opt.zero_grad(set_to_none=True); AdamW(foreach=True); two steps",
                                         "loop_ghost": "logits = model(input_ids=x).logits; loss = criterion(logits.view(-1, V), y.view(-1), "
                                                       "shape=(n, T)); loss.backward() (make_private's criterion, grad_sample_mode ghost)"},
           "draws": []}
    if a.append:  # more draws after a file's: its draws kept, each batch of draws named in meta.batches
        out = json.load(open(a.out))
        out["meta"].setdefault("batches", [{"seed": out["meta"]["seed"], "n": out["meta"]["n"], "only": None,
                                            "date": out["meta"]["date"], "git_commit": out["meta"]["git_commit"]}])
        out["meta"]["loop_ghost"] = ("logits = model(input_ids=x).logits; loss = criterion(logits.view(-1, V), y.view(-1), "
                                     "shape=(n, T)); loss.backward() (make_private's criterion, grad_sample_mode ghost)")
        out["meta"]["loop_checkpoint"] = "model.gradient_checkpointing_enable() (Hugging Face's defaults: non-reentrant) before PEFT, then the loop"
        out["meta"]["batches"].append(batch)
    if a.conf:  # the study's shapes, not drawn: each with each peer's loop (resumed: those --out has are kept)
        done = {}
        if os.path.exists(a.out):
            done = {r.get("label"): r for r in json.load(open(a.out))["draws"]}
        out["meta"].update(conf=a.conf, seed=None, n=None)
        runs = conf_runs(a.conf)
        out["draws"] = [dict(done[label], id=k) for k, (label, args) in enumerate(runs) if label in done]
        todo = [(label, args) for k, (label, args) in enumerate(runs) if label not in done and k % a.parts == a.part]
    else:
        todo = [(None, draw_args(rng, a.only)) for _ in range(a.n)]
    first = len(out["draws"])
    for i, (label, args) in enumerate(todo, first):
        if label:
            i = [l for l, _ in conf_runs(a.conf)].index(label)
        t0 = time.time()
        peak, meta, under, alone = measure_apart(a.dpprof, args)
        out["meta"].update(meta)
        out["draws"].append({"id": i, "args": args, "tracker_peak_bytes": peak, "log_peak_bytes": alone, "log_under_tracker_peak_bytes": under,
                             "seconds": round(time.time() - t0, 2)})
        if label:
            out["draws"][-1]["label"] = label
        else:
            batch["n"] = i - first + 1  # a batch cut short (PyTorch on fake tensors can crash) says how many it holds
            if not a.append:
                out["meta"]["n"] = batch["n"]
        write_text(a.out, json.dumps(out, indent=1) + "\n")  # a long run's results are kept as they come
        print("draw %2d  %-10.2f MiB  %s" % (i, peak / 2**20, " ".join(args)), flush=True)
    write_text(a.out, json.dumps(out, indent=1) + "\n")
    return 0


def fit_row_command(fit_args):
    """dpprof run's options of a fit configuration at one sample (where fit found nothing that fits)"""
    drop = {"--device": 1, "--gpu-memory": 1, "--json": 1, "--plot": 1, "--bench": 1, "--gpus": 1, "--epochs": 1}
    keep, i = [], 0
    while i < len(fit_args):
        if fit_args[i] in drop:
            i += 1 + drop[fit_args[i]]
            continue
        keep.append(fit_args[i])
        i += 1
    return "dpprof run " + " ".join(shlex.quote(x) for x in keep + ["--physical-batch", "1", "--backend", "dry"])


def engine_batch(dpprof, fit_args, algo="vanilla"):
    """dpprof fit's largest physical batch for dpprof's own engine at the same configuration (the algorithm, no checkpointing)"""
    p = subprocess.run([dpprof, "fit", *fit_args, "--algo", algo, "--checkpoint", "none", "--json", "-"], capture_output=True, text=True)
    if p.returncode not in (0, 3):
        die("dpprof fit failed (exit %d): %s" % (p.returncode, p.stderr.strip()[-500:]))
    rows = [r for r in json.loads(p.stdout)["fit"]["rows"] if r["fits"]]
    return rows[0]["physical_batch"] if rows else 0


def cmd_fit_check(a):
    fit_args = a.fit_args if "--framework" in a.fit_args else ["--framework", "pytorch"] + a.fit_args
    p = subprocess.run([a.dpprof, "fit", *fit_args, "--json", "-"], capture_output=True, text=True)
    if p.returncode not in (0, 3):
        die("dpprof fit failed (exit %d): %s" % (p.returncode, p.stderr.strip()[-500:]))
    f = json.loads(p.stdout)["fit"]
    total, ctx = f["device_memory_bytes"], f["margin"]["context_bytes"]
    rows = [r for r in f["rows"] if r["fits"]]
    rec = {"label": a.label or " ".join(a.fit_args), "fit_args": a.fit_args, "device_memory_bytes": total, "context_bytes": ctx,
           "batch": f["batch"], "engine_physical_batch": 0, "fit_physical_batch": 0, "tracker": {}, "holds": None}
    if not rows:  # nothing fits: the tracker at one sample must not fit either (the command of fit's best row at b = 1)
        rows = [dict(f["rows"][0], physical_batch=0, rank=1, command=fit_row_command(fit_args))]
    if rows:
        best = min(rows, key=lambda r: r["rank"])
        # dpprof's engine at the same configuration and algorithm (without the options of a framework)
        engine_args, i = [], 0
        while i < len(fit_args):
            if fit_args[i] in ("--framework", "--algo", "--grad-sample-mode"):
                i += 2
                continue
            engine_args.append(fit_args[i])
            i += 1
        rec["engine_physical_batch"] = engine_batch(a.dpprof, engine_args, best["algo"])
        rec["algo"] = best["algo"]
        b = best["physical_batch"]
        rec["fit_physical_batch"] = b
        argv = shlex.split(best["command"])[2:]
        for bb in (b, b + 1) if 0 < b < f["batch"] else ((b,) if b else (1,)):
            args = list(argv)
            args[args.index("--physical-batch") + 1] = str(bb)
            cfg = dpprof_config(a.dpprof, args, algo_of(args), lora_ok=True)
            if cfg.get("framework") == "opacus":  # Poisson's worst for BatchMemoryManager, as fit holds it: two parts of
                # exactly bb where the logical batch is larger (a draw of 2 bb), else the batch in one
                cfg["batch_sizes"] = [2 * bb if cfg["batch"] > bb else cfg["batch"]] * 2
            peak, meta = tracker_peak(cfg, cfg["attention"], cfg["dtype"] == "bf16")
            own = log_peak(cfg, cfg["attention"], cfg["dtype"] == "bf16")  # the program's own (no tracker's hooks): what fits
            rec["tracker"][str(bb)] = {"peak_bytes": peak, "log_peak_bytes": own, "need_bytes": own + ctx, "fits": own + ctx <= total}
            rec["meta"] = meta
        rec["holds"] = (not rec["tracker"]["1"]["fits"]) if b == 0 else \
            rec["tracker"][str(b)]["fits"] and (str(b + 1) not in rec["tracker"] or not rec["tracker"][str(b + 1)]["fits"])
    print("fit-check %s: fit's physical batch %d; the program: %s; %s" % (" ".join(a.fit_args), rec["fit_physical_batch"],
          ", ".join("b=%s need %.3f GiB (MemTracker's peak %.3f GiB) %s" % (k, v["need_bytes"] / 2**30, v["peak_bytes"] / 2**30, "fits" if v["fits"] else "does not fit")
                    for k, v in rec["tracker"].items()),
          "holds" if rec["holds"] else "DOES NOT HOLD"))
    if a.out:
        old = json.load(open(a.out)) if os.path.exists(a.out) else []
        write_text(a.out, json.dumps(old + [rec], indent=1) + "\n")
    return 0 if rec["holds"] else 1


def main():
    ap = argparse.ArgumentParser(prog="peers.py", description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 1)[1])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="one peer at a dpprof configuration")
    r.add_argument("--framework", required=True, choices=sorted(ALGOS))
    r.add_argument("--algo", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    r.add_argument("--dpprof", default=os.environ.get("DPPROF_BIN", "./dpprof"))
    r.add_argument("--experiment", default="peers")
    r.add_argument("--progress", action="store_true", help="one line per step on stderr")
    r.add_argument("dpprof_args", nargs=argparse.REMAINDER, help="-- then the options of dpprof run")
    c = sub.add_parser("check", help="PyTorch (float64) against a dpprof --dump")
    c.add_argument("dump")
    c.add_argument("--tolerance", type=float, default=1e-5)
    t = sub.add_parser("table", help="the side-by-side of result folders")
    t.add_argument("dirs", nargs="+")
    m = sub.add_parser("memory", help="one peer's memory and flops on fake tensors (no GPU)")
    m.add_argument("--framework", required=True, choices=sorted(ALGOS))
    m.add_argument("--algo", required=True)
    m.add_argument("--attention", default="sdpa", choices=("sdpa", "eager"), help="Hugging Face's attention (default sdpa)")
    m.add_argument("--out", required=True)
    m.add_argument("--dpprof", default=os.environ.get("DPPROF_BIN", "./dpprof"))
    m.add_argument("--experiment", default="peers-memory")
    m.add_argument("--reconcile", action="store_true", help="dpprof's dry peak of the same configuration beside it, the difference in named terms")
    m.add_argument("dpprof_args", nargs=argparse.REMAINDER, help="-- then the options of dpprof run")
    w = sub.add_parser("memory-sweep", help="an experiment file's dpprof and peer runs on fake tensors, and the reconciliation table")
    w.add_argument("conf")
    w.add_argument("--out-dir", required=True)
    w.add_argument("--tables", help="the folder for NAME-reconcile-table.tex")
    w.add_argument("--only", help="only the configurations whose id contains this")
    w.add_argument("--dpprof", default=os.environ.get("DPPROF_BIN", "./dpprof"))
    mt = sub.add_parser("memory-table", help="the reconciliation table of a folder of memory-sweep results (stdlib only)")
    mt.add_argument("dir")
    mt.add_argument("--tables", help="the folder for NAME-reconcile-table.tex")
    mt.add_argument("--conf", help="the experiment file: its shapes' order")
    mt.add_argument("--dpprof", default=os.environ.get("DPPROF_BIN", "./dpprof"), help="dpprof, run on each committed draw for the paper's numbers")
    g = sub.add_parser("accountant", help="dpprof's PLD accountant against dp_accounting's over a grid")
    g.add_argument("--grid", default="full", choices=("full", "reduced"))
    g.add_argument("--out", help="the table (tab-separated; default: standard output)")
    g.add_argument("--tolerance", type=float, default=1e-5, help="how far below dp_accounting's pessimistic bound dpprof may be (relative)")
    g.add_argument("--dpprof", default=os.environ.get("DPPROF_BIN", "./dpprof"))
    d = sub.add_parser("draws", help="random configurations' peaks under PyTorch's tracker (the loop a user writes)")
    d.add_argument("--n", type=int, default=48)
    d.add_argument("--only", choices=("pytorch", "opacus", "ghost", "tied", "checkpoint", "bf16"),
                   help="draw this framework only (ghost: Opacus's ghost clipping; tied: Opacus's hooks with a tied head; checkpoint: PyTorch's "
                        "loop with gradient checkpointing; bf16: Opacus under bf16 autocast)")
    d.add_argument("--append", action="store_true", help="add the draws to --out's, which are kept")
    d.add_argument("--conf", help="no draws: each shape of this experiment file's axis shape, with each peer's loop")
    d.add_argument("--part", type=int, default=0, help="with --conf: run the loops K, K + N, ... (K of --parts N; each part to its own --out)")
    d.add_argument("--parts", type=int, default=1)
    d.add_argument("--seed", type=int, default=20261206)
    d.add_argument("--out", required=True)
    d.add_argument("--dpprof", default=os.environ.get("DPPROF_BIN", "./dpprof"))
    ev = sub.add_parser("events", help="every storage the loop's last step allocates and frees (fake tensors)")
    ev.add_argument("--dpprof", default=os.environ.get("DPPROF_BIN", "./dpprof"))
    ev.add_argument("dpprof_args", nargs=argparse.REMAINDER, help="-- then the options of dpprof run --framework pytorch")
    me = sub.add_parser("measure", help="one configuration's loop under the tracker and the storage log, a JSON line (draws runs it apart)")
    me.add_argument("--dpprof", default=os.environ.get("DPPROF_BIN", "./dpprof"))
    me.add_argument("dpprof_args", nargs=argparse.REMAINDER, help="-- then the options of dpprof run --framework pytorch|opacus")
    fc = sub.add_parser("fit-check", help="dpprof fit --framework pytorch's physical batch against PyTorch's tracker")
    fc.add_argument("--out", help="append the record to this JSON list")
    fc.add_argument("--label", help="the configuration's name in the figure (default: the options)")
    fc.add_argument("--dpprof", default=os.environ.get("DPPROF_BIN", "./dpprof"))
    fc.add_argument("fit_args", nargs=argparse.REMAINDER, help="-- then the options of dpprof fit")
    a = ap.parse_args()
    if getattr(a, "fit_args", None) and a.fit_args[0] == "--":
        a.fit_args = a.fit_args[1:]
    if getattr(a, "dpprof_args", None) and a.dpprof_args[0] == "--":
        a.dpprof_args = a.dpprof_args[1:]
    if getattr(a, "tolerance", None) is not None and not (a.tolerance > 0 if a.cmd == "check" else a.tolerance >= 0):
        die("--tolerance %s: must be %s 0" % (a.tolerance, ">" if a.cmd == "check" else ">="))
    if getattr(a, "dpprof", None) is not None and not os.access(a.dpprof, os.X_OK):
        die("--dpprof %s: not an executable (build it: make dpprof)" % a.dpprof)
    if a.cmd == "memory-table" and not os.path.isdir(a.dir):
        die("%s: not a folder" % a.dir)
    cmds = {"run": cmd_run, "check": cmd_check, "memory": cmd_memory, "memory-sweep": cmd_memory_sweep,
            "memory-table": lambda a: write_tables(a.dir, a.tables, a.conf, a.dpprof) or 0, "accountant": cmd_accountant,
            "draws": cmd_draws, "fit-check": cmd_fit_check, "events": cmd_events, "measure": cmd_measure}
    return cmds.get(a.cmd, cmd_table)(a)


if __name__ == "__main__":
    rc = main()
    # what was written is complete: leave without the interpreter's teardown, where PyTorch's fake tensors now and
    # then corrupt the heap as they are collected (an abort after a finished run would read as a failed one)
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0 if rc is None else int(rc))
