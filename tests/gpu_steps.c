/* ---- whole steps: the cuda backend against the cpu backend --------------------------------------- */

/* largest |a - b| / max(|b|, floor) over n values */
static double steps_relerr(const dpprof_real *a, const dpprof_real *b, size_t n, double floor_) {
    double worst = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]), m = fabs((double)b[i]);
        double e = d / (m > floor_ ? m : floor_);
        if (e != e) return INFINITY; /* a nan is the worst error (a later max must not overwrite it) */
        if (e > worst) worst = e;
    }
    return worst;
}

/* the error of tensor x against y (n values): steps_relerr with a floor of 1e-3 of y's largest magnitude
   (tiny entries of a sum of cancelling terms carry fp32 noise) */
static double steps_err_floor(const dpprof_real *x, const dpprof_real *y, size_t n) {
    double big = 0;
    size_t k;
    for (k = 0; k < n; k++)
        if (fabs((double)y[k]) > big) big = fabs((double)y[k]);
    return steps_relerr(x, y, n, big * 1e-3 > 1e-30 ? big * 1e-3 : 1e-30);
}

/* the worst err(x, y) over the tensors of two sessions ('w' or 'g'; 'g' only where trainable), with
   the name of the worst; INFINITY when a tensor cannot be read */
static double steps_worst(dpprof_session *a, dpprof_session *b, char which, double (*err)(const dpprof_real *, const dpprof_real *, size_t),
                          const char **worst_name) {
    double worst = 0;
    int i;
    *worst_name = "-";
    for (i = 0; i < dpprof_session_param_count(a); i++) {
        dpprof_param *p = dpprof_session_param(a, i);
        size_t n = (size_t)p->w.n;
        dpprof_real *x, *y;
        double e;
        if (which == 'g' && !p->trainable) continue;
        x = (dpprof_real *)malloc(sizeof(dpprof_real) * n);
        y = (dpprof_real *)malloc(sizeof(dpprof_real) * n);
        if (!x || !y || dpprof_session_param_read(a, i, which, x) != DPPROF_OK || dpprof_session_param_read(b, i, which, y) != DPPROF_OK) {
            free(x);
            free(y);
            return INFINITY;
        }
        e = err(x, y, n);
        if (!(e <= worst)) {
            worst = e;
            *worst_name = p->name;
        }
        free(x);
        free(y);
    }
    return worst;
}

/* the largest relative error over every trainable tensor's 'g' or 'w' of two sessions */
static double steps_tensors_err(dpprof_session *a, dpprof_session *b, char which, const char **worst_name) {
    return steps_worst(a, b, which, steps_err_floor, worst_name);
}

static int steps_tied; /* the cases in flight tie the lm head to the embedding */
static int steps_ckpt; /* the cases in flight run with --checkpoint layers */
static int steps_head; /* lora: the cases in flight train the head (--train-head) */

static void steps_config(dpprof_config *c, int algo, int per_layer, int cls, int lora) {
    memset(c, 0, sizeof *c);
    c->checkpoint = steps_ckpt ? DPPROF_CHECKPOINT_LAYERS : DPPROF_CHECKPOINT_NONE;
    c->preset = "tiny";
    c->tie_embeddings = steps_tied ? 1 : 0;
    c->seq = 12;
    c->batch = 4;
    c->physical_batch = 3; /* an uneven split: 3 + 1 */
    c->algo = (dpprof_algo)algo;
    c->per_layer_clipping = per_layer;
    if (algo != DPPROF_ALGO_VANILLA) c->max_grad_norm = 0.05; /* small enough that some samples are clipped, some not */
    c->task = cls ? DPPROF_TASK_CLS : DPPROF_TASK_LM;
    if (cls) c->classes = 3;
    c->seed = 7;
    c->steps = 2;
    /* auto on cuda takes ghost's grams where its measured time is shorter, a timing the dry backend
       cannot make (it keeps flash); pinned here, so that the device's memory profile can be held to the
       dry one event for event (and ghost's path inside auto runs on the device). the measured choice
       runs in test_cuemu_cli.sh, where the peaks are compared */
    if (algo == DPPROF_ALGO_AUTO) c->auto_ghost = 1;
    if (lora) {
        c->lora_rank = 4;
        c->lora_targets = "q,v,down";
        c->train_head = steps_head ? DPPROF_SWITCH_ON : DPPROF_SWITCH_AUTO;
    }
}

/* lora_B starts at zero: move it the same way in both sessions so A has a gradient */
static int steps_perturb_lora(dpprof_session *s) {
    int i;
    for (i = 0; i < dpprof_session_param_count(s); i++) {
        dpprof_param *p = dpprof_session_param(s, i);
        dpprof_real *w;
        int64_t e;
        if (!strstr(p->name, "lora_B")) continue;
        w = (dpprof_real *)malloc(sizeof(dpprof_real) * (size_t)p->w.n);
        if (!w) return DPPROF_ERR_OOM;
        for (e = 0; e < p->w.n; e++) w[e] = (dpprof_real)(0.2 * sin(0.37 * (double)e + i));
        if (dpprof_session_param_write(s, i, 'w', w) != DPPROF_OK) {
            free(w);
            return DPPROF_ERR_CUDA;
        }
        free(w);
    }
    return DPPROF_OK;
}

/* the tensors of a session stored in bf16 alone (frozen under --dtype bf16) */
static int steps_frozen_bf16(dpprof_session *s) {
    int i, k = 0;
    for (i = 0; i < dpprof_session_param_count(s); i++) k += dpprof_session_param(s, i)->bf16_only;
    return k;
}

/* the tensors whose weights in the gpu session are not the cpu's: rounded to bf16 where the gpu's are bf16 alone, else
   bitwise equal; -1 if one could not be read */
static int steps_frozen_unrounded(dpprof_session *gpu, dpprof_session *cpu) {
    int i, bad = 0;
    for (i = 0; i < dpprof_session_param_count(gpu); i++) {
        dpprof_param *p = dpprof_session_param(gpu, i);
        size_t n = (size_t)p->w.n;
        float *x = (float *)malloc(sizeof(float) * n), *y = (float *)malloc(sizeof(float) * n);
        if (!x || !y || dpprof_session_param_read(gpu, i, 'w', x) != DPPROF_OK || dpprof_session_param_read(cpu, i, 'w', y) != DPPROF_OK) bad = -1;
        else {
            if (p->bf16_only) dpprof_bf16_round_ref(y, n);
            bad += memcmp(x, y, sizeof(float) * n) != 0;
        }
        free(x);
        free(y);
        if (bad < 0) return -1;
    }
    return bad;
}

/* a cpu fp32 session and a cuda session (of c's dtype otherwise: dtype) of one configuration, lora_B moved
   off zero in both, with bitwise equal initial fp32 weights; DPPROF_OK or the first error */
static int steps_pair(dpprof_config *c, dpprof_dtype dtype, const char *name, int lora, dpprof_session **cpu, dpprof_session **gpu) {
    const char *wn;
    double ew;
    int rc;
    c->backend = DPPROF_BACKEND_CPU;
    rc = dpprof_session_create(c, cpu);
    if (rc == DPPROF_OK) {
        c->backend = DPPROF_BACKEND_CUDA;
        c->dtype = dtype;
        rc = dpprof_session_create(c, gpu);
    }
    CHECK(rc == DPPROF_OK, "%s: cpu fp32 and cuda %s sessions (%s)", name, dtype == DPPROF_DTYPE_BF16 ? "bf16" : "fp32", rc ? dpprof_last_error() : "ok");
    if (rc != DPPROF_OK) return rc;
    if (lora) CHECK(steps_perturb_lora(*cpu) == DPPROF_OK && steps_perturb_lora(*gpu) == DPPROF_OK, "%s: lora_B moved off zero in both (param_write)", name);
    ew = steps_tensors_err(*gpu, *cpu, 'w', &wn);
    if (steps_frozen_bf16(*gpu)) { /* frozen weights in bf16 alone: the cpu's values rounded, bit for bit */
        int k = steps_frozen_unrounded(*gpu, *cpu);
        CHECK(k == 0, "%s: the %d frozen weights stored in bf16 alone are the cpu's fp32 values rounded, bit for bit; the other masters bitwise equal (%d tensors differ)", name,
              steps_frozen_bf16(*gpu), k);
    } else CHECK(ew == 0, "%s: the initial fp32 master weights are bitwise equal (worst %.3g in %s)", name, ew, wn);
    return DPPROF_OK;
}

/* one batch on both sessions: vanilla's per-sample losses (their worst relative gap in *en) or the dp
   algorithms' norms and clip factors (n*, c*; worst relative gaps in *en, *ec); DPPROF_OK or the error */
static int steps_batch(dpprof_session *cpu, dpprof_session *gpu, const char *name, int algo, double *ncpu, double *ngpu, double *ccpu, double *cgpu,
                       double *en, double *ec) {
    int tok[4 * 12], tgt[4 * 12], i, rc;
    *en = *ec = 0;
    dpprof_session_batch(cpu, 0, 0, 4, tok, tgt);
    if (algo == DPPROF_ALGO_VANILLA) {
        rc = dpprof_session_grad(cpu, tok, tgt, 4, ncpu);
        if (rc == DPPROF_OK) rc = dpprof_session_grad(gpu, tok, tgt, 4, ngpu);
        CHECK(rc == DPPROF_OK, "%s: the gradient on both backends (%s)", name, rc ? dpprof_last_error() : "ok");
        for (i = 0; rc == DPPROF_OK && i < 4; i++) *en = fmax(*en, fabs(ncpu[i] - ngpu[i]) / fabs(ncpu[i]));
        return rc;
    }
    rc = dpprof_session_clipped_grad(cpu, tok, tgt, 4, ncpu, ccpu);
    if (rc == DPPROF_OK) rc = dpprof_session_clipped_grad(gpu, tok, tgt, 4, ngpu, cgpu);
    CHECK(rc == DPPROF_OK, "%s: the clipped gradient on both backends (%s)", name, rc ? dpprof_last_error() : "ok");
    for (i = 0; rc == DPPROF_OK && i < 4; i++) {
        *en = fmax(*en, fabs(ncpu[i] - ngpu[i]) / ncpu[i]);
        *ec = fmax(*ec, fabs(ccpu[i] - cgpu[i]) / ccpu[i]);
    }
    return rc;
}

/* the configuration run whole (two steps) on the cpu in fp32 and on the gpu in dtype, from fresh sessions */
static int steps_run_pair(dpprof_config *c, dpprof_dtype dtype, const char *name, dpprof_session **cpu, dpprof_session **gpu) {
    int rc;
    dpprof_session_destroy(*cpu);
    dpprof_session_destroy(*gpu);
    *cpu = *gpu = NULL;
    c->backend = DPPROF_BACKEND_CPU;
    c->dtype = DPPROF_DTYPE_FP32;
    rc = dpprof_session_create(c, cpu);
    if (rc == DPPROF_OK) rc = dpprof_session_run(*cpu);
    if (rc == DPPROF_OK) {
        c->backend = DPPROF_BACKEND_CUDA;
        c->dtype = dtype;
        rc = dpprof_session_create(c, gpu);
    }
    if (rc == DPPROF_OK) rc = dpprof_session_run(*gpu);
    CHECK(rc == DPPROF_OK, "%s: two noisy adam steps on both backends (%s)", name, rc ? dpprof_last_error() : "ok");
    return rc;
}

/* the gpu session's memory profile against a dry run of the same configuration (c's dtype) */
static void steps_same_as_dry(dpprof_config *c, const dpprof_session *gpu, const char *name) {
    const char *why = NULL;
    dpprof_session *dry = NULL;
    int rc;
    c->backend = DPPROF_BACKEND_DRY;
    rc = dpprof_session_create(c, &dry);
    if (rc == DPPROF_OK) rc = dpprof_session_run(dry);
    CHECK(rc == DPPROF_OK && dpprof_prof_same_memory(dpprof_session_prof(gpu), dpprof_session_prof(dry), &why),
          "%s: the device memory profile equals the dry %s backend's, event for event (%s)", name, c->dtype == DPPROF_DTYPE_BF16 ? "bf16" : "fp32",
          why ? why : "same");
    dpprof_session_destroy(dry);
}

/* the three peaks of a cuda run (meta.memory): the dry plan computed in-process equals the accountant's (the
   profiles are the same event for event: steps_same_as_dry) and the driver's figure is its split, summed */
static void steps_three_peaks(const dpprof_session *gpu, const char *name) {
    dpprof_memory_truth m;
    dpprof_session_memory_truth(gpu, &m);
    CHECK(m.dry_peak == m.accountant_peak, "%s: the in-process dry plan's peak %lld bytes = the accountant's %lld", name, (long long)m.dry_peak, (long long)m.accountant_peak);
    CHECK(m.driver_peak >= 0 && m.accountant_at_driver_peak > 0 && m.accountant_at_driver_peak + m.pool_rounding + m.pool_unused + m.remainder == m.driver_peak &&
              m.pool_rounding >= 0 && m.cublas_workspace == (int64_t)DPPROF_CUBLAS_WORKSPACE_BYTES,
          "%s: the driver's peak %lld = accountant %lld + pool rounding %lld + pool unused %lld + unexplained %lld (before the session %lld)", name,
          (long long)m.driver_peak, (long long)m.accountant_at_driver_peak, (long long)m.pool_rounding, (long long)m.pool_unused, (long long)m.remainder,
          (long long)m.driver_before_session);
}

/* --op-times on the gpu: every piece of device work of a timed step (kernels, cuBLAS calls, memsets, copies) is
   inside an op record, and the op records' flops are the step's executed flops, the dry backend's too */
static double steps_flops_per_step(const dpprof_session *s, int step) {
    const dpprof_prof *p = dpprof_session_prof(s);
    double f = 0;
    size_t e;
    for (e = 0; e < p->n_phases; e++)
        if (p->phases[e].step == step && p->phases[e].phase >= DPPROF_PHASE_FORWARD) f += p->phases[e].flops;
    return f;
}
static double steps_op_coverage(int algo, int lora) {
    dpprof_config c;
    dpprof_session *s = NULL, *d = NULL;
    char name[96];
    double fl = NAN, ops = 0;
    size_t k;
    long long in_ops = 0;
    int rc;
    snprintf(name, sizeof name, "op records %s%s", dpprof_algo_name(algo), lora ? " lora" : "");
    steps_config(&c, algo, 0, 0, lora);
    c.sigma = algo == DPPROF_ALGO_VANILLA ? 0 : 0.5;
    c.op_times = 1;
    c.warmup = 1;
    c.steps = 1;
    c.backend = DPPROF_BACKEND_CUDA;
    rc = dpprof_session_create(&c, &s);
    if (rc == DPPROF_OK) rc = dpprof_session_run(s);
    CHECK(rc == DPPROF_OK, "%s: a warm-up step with --op-times and a measured one on the gpu (%s)", name, rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK) {
        for (k = 0; k < s->obs.n_ops; k++) {
            in_ops += s->obs.ops[k].w1 - s->obs.ops[k].w0;
            ops += s->obs.ops[k].flops;
        }
        CHECK(s->obs.n_steps == 1 && s->obs.work_steps > 0 && in_ops == s->obs.work_steps,
              "%s: every kernel, cuBLAS call, memset and copy of the timed step is inside an op record (%lld of %lld)", name, in_ops, s->obs.work_steps);
        fl = steps_flops_per_step(s, 1);
        CHECK(fl > 0 && fabs(ops - steps_flops_per_step(s, 0)) <= 1e-9 * fl && steps_flops_per_step(s, 0) == fl,
              "%s: the executed flops of a step (%.6g) are the sum of its ops' costs (%.6g)", name, fl, ops);
        c.backend = DPPROF_BACKEND_DRY;
        c.op_times = 0;
        rc = dpprof_session_create(&c, &d);
        if (rc == DPPROF_OK) rc = dpprof_session_run(d);
        CHECK(rc == DPPROF_OK && steps_flops_per_step(d, 1) == fl, "%s: the dry backend's flops of a step are the same (%.6g)", name, rc == DPPROF_OK ? steps_flops_per_step(d, 1) : NAN);
        dpprof_session_destroy(d);
    }
    dpprof_session_destroy(s);
    return fl;
}
static void steps_op_records(void) {
    double full, lora;
    (void)steps_op_coverage(DPPROF_ALGO_VANILLA, 0);
    full = steps_op_coverage(DPPROF_ALGO_GHOST_BK, 0);
    lora = steps_op_coverage(DPPROF_ALGO_GHOST_BK, 1);
    (void)steps_op_coverage(DPPROF_ALGO_PERSAMPLE, 0);
    CHECK(lora < full, "ghost_bk with lora executes fewer flops a step (%.6g) than with every weight trained (%.6g): no frozen weight's gradient is computed", lora, full);
}

/* one configuration: the clipped gradient (norms, factors, sum) and then two noisy adam steps */
static void steps_case(int algo, int per_layer, int cls, int lora) {
    dpprof_config c;
    dpprof_session *cpu = NULL, *gpu = NULL;
    char name[128];
    int i;
    double ncpu[4], ngpu[4], ccpu[4], cgpu[4], en = 0, ec = 0, eg, ew;
    const char *wn;
    snprintf(name, sizeof name, "step %s%s%s%s%s%s", dpprof_algo_name(algo), per_layer ? " per-layer" : "", cls ? " cls" : " lm", lora ? " lora" : "", steps_tied ? " tied" : "", steps_ckpt ? " checkpoint" : "");
    steps_config(&c, algo, per_layer, cls, lora);
    if (steps_pair(&c, DPPROF_DTYPE_FP32, name, lora, &cpu, &gpu) != DPPROF_OK) goto done;
    if (steps_batch(cpu, gpu, name, algo, ncpu, ngpu, ccpu, cgpu, &en, &ec) != DPPROF_OK) goto done;
    if (algo == DPPROF_ALGO_VANILLA) {
        CHECK(en < 1e-5, "%s: per-sample losses agree (worst relative %.3g, tolerance 1e-5)", name, en);
    } else {
        CHECK(en < 1e-4, "%s: per-sample norms agree (worst relative %.3g, tolerance 1e-4; norms %.4g .. %.4g)", name, en, ncpu[0], ncpu[3]);
        if (!per_layer) {
            int clipped = 0;
            for (i = 0; i < 4; i++) clipped += ccpu[i] < 1;
            CHECK(ec < 1e-4, "%s: clip factors agree (worst relative %.3g, tolerance 1e-4; %d of 4 clipped)", name, ec, clipped);
        }
    }
    eg = steps_tensors_err(gpu, cpu, 'g', &wn);
    CHECK(eg < 1e-3, "%s: the summed (clipped) gradient agrees (worst relative %.3g in %s, tolerance 1e-3, floor 1e-3 of each tensor's largest value)", name, eg, wn);
    /* two full steps with noise: the same noise bits on both, updates within fp32 tolerance */
    if (algo != DPPROF_ALGO_VANILLA) c.sigma = 0.5;
    if (steps_run_pair(&c, DPPROF_DTYPE_FP32, name, &cpu, &gpu) != DPPROF_OK) goto done;
    ew = steps_tensors_err(gpu, cpu, 'w', &wn);
    /* adam divides by sqrt(v): an element whose gradient is ~0 moves by lr either way, so compare
       the weights at the scale of lr rather than relative to tiny values */
    CHECK(ew < 1e-3, "%s: weights after two steps agree (worst %.3g relative to 1e-3 of each tensor's scale, in %s)", name, ew, wn);
    CHECK(fabs(dpprof_session_step_loss(cpu, 1) - dpprof_session_step_loss(gpu, 1)) < 1e-4 * fabs(dpprof_session_step_loss(cpu, 1)),
          "%s: the second step's loss agrees (cpu %.8g, cuda %.8g)", name, dpprof_session_step_loss(cpu, 1), dpprof_session_step_loss(gpu, 1));
    steps_same_as_dry(&c, gpu, name);
    {
        /* the driver (the pool) rounds every live allocation up to its granularity (2 MiB) and holds
           the cuBLAS handle's state: a stated margin of 2 MiB per allocation live at the peak plus 64 MiB */
        const dpprof_prof *p = dpprof_session_prof(gpu);
        size_t e, live = 0;
        double peak = (double)p->peak_bytes, drv = (double)gpu->gpu.drv_peak, margin;
        for (e = 0; e <= p->peak_event && e < p->n_events; e++) live = p->events[e].bytes > 0 ? live + 1 : live - 1;
        margin = 2.0 * 1048576.0 * (double)live + 64.0 * 1048576.0;
        CHECK(drv >= 0.99 * peak && drv <= peak + margin, "%s: the driver's peak use %.1f MiB vs the accountant's %.1f MiB (margin %.0f MiB)", name, drv / 1048576.0,
              peak / 1048576.0, margin / 1048576.0);
    }
    steps_three_peaks(gpu, name);
done:
    dpprof_session_destroy(cpu);
    dpprof_session_destroy(gpu);
}

/* the same configuration twice on the gpu: bitwise the same losses and weights; in bf16 too, and a
   destroyed bf16 session leaves the gpu ops in fp32 storage */
static void steps_determinism(dpprof_dtype dtype) {
    const char *tag = dtype == DPPROF_DTYPE_BF16 ? "bf16 determinism" : "determinism";
    dpprof_config c;
    dpprof_session *a = NULL, *b = NULL;
    const char *wn;
    int rc;
    steps_config(&c, DPPROF_ALGO_FLASH_BK, 0, 0, 0);
    c.sigma = 1.0;
    c.backend = DPPROF_BACKEND_CUDA;
    c.dtype = dtype;
    rc = dpprof_session_create(&c, &a);
    if (rc == DPPROF_OK) rc = dpprof_session_run(a);
    if (rc == DPPROF_OK) rc = dpprof_session_create(&c, &b);
    if (rc == DPPROF_OK) rc = dpprof_session_run(b);
    CHECK(rc == DPPROF_OK, "%s: two identical flash_bk runs on the gpu (%s)", tag, rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK) {
        double ew = steps_tensors_err(a, b, 'w', &wn);
        CHECK(ew == 0 && dpprof_session_step_loss(a, 1) == dpprof_session_step_loss(b, 1), "%s: bitwise equal weights and losses (worst %.3g in %s)", tag, ew, wn);
    }
    dpprof_session_destroy(a);
    dpprof_session_destroy(b);
    if (dtype == DPPROF_DTYPE_BF16) CHECK(dpprof_cuda_storage() == DPPROF_DTYPE_FP32, "bf16: a destroyed bf16 session leaves the gpu ops in fp32 storage");
}

/* tolerances of bf16 against fp32: bf16's unit roundoff is 2^-8 = 3.9e-3 on every stored activation.
   measured on the emulator (tiny, T = 12): norms 1.1e-3, gradients 1.5e-2 of a tensor's largest
   value, weights after two adam steps 1e-2 lr apart (vanilla; 5e-5 lr with noise) */
#define BF16_TOL_NORM 1e-2
#define BF16_TOL_GRAD 5e-2
#define BF16_TOL_WEIGHTS 5e-2

/* ---- --dtype bf16: cuda with bf16 activations against the cpu's fp32 step -------------------------
   bf16 stores every activation with 8 significant bits, so the comparison with fp32 is at bf16's
   scale (tolerances below, each stated); the dp algorithms read the same bf16 activations for the
   norms, so among themselves they agree at fp32's scale */

/* max|x - y| / max|y|: the error relative to the tensor's scale (a nan is infinite) */
static double bf16_err_scale(const dpprof_real *x, const dpprof_real *y, size_t n) {
    double big = 0, d = 0;
    size_t k;
    for (k = 0; k < n; k++) {
        big = fmax(big, fabs((double)y[k]));
        d = fmax(d, fabs((double)x[k] - (double)y[k]));
        if (x[k] != x[k]) d = INFINITY;
    }
    return d / (big > 1e-30 ? big : 1e-30);
}

/* the largest max|a - b| / max|b| over the tensors of two sessions ('w' or 'g'; 'g' only where trainable) */
static double bf16_tensors_err(dpprof_session *a, dpprof_session *b, char which, const char **worst_name) {
    return steps_worst(a, b, which, bf16_err_scale, worst_name);
}

/* the mean |w_a - w_b| over every trained weight, in units of the learning rate: how far apart two runs'
   updates took the weights (adam moves each weight by about lr per step); a frozen weight's distance is its
   storage's (steps_pair) */
static double bf16_weights_apart(dpprof_session *a, dpprof_session *b, double lr) {
    double sum = 0;
    size_t cnt = 0;
    int i;
    for (i = 0; i < dpprof_session_param_count(a); i++) {
        dpprof_param *p = dpprof_session_param(a, i);
        size_t n = (size_t)p->w.n, k;
        dpprof_real *x, *y;
        if (!p->trainable) continue;
        x = (dpprof_real *)malloc(sizeof(dpprof_real) * n), y = (dpprof_real *)malloc(sizeof(dpprof_real) * n);
        if (!x || !y || dpprof_session_param_read(a, i, 'w', x) != DPPROF_OK || dpprof_session_param_read(b, i, 'w', y) != DPPROF_OK) {
            free(x);
            free(y);
            return INFINITY;
        }
        for (k = 0; k < n; k++) sum += fabs((double)x[k] - (double)y[k]);
        cnt += n;
        free(x);
        free(y);
    }
    return sum / (double)cnt / lr;
}

/* the persample algorithm's bf16 results on the case's batch: what the other algorithms must match */
static double bf16_ref_norms[4], bf16_ref_clip[4];
static dpprof_session *bf16_ref;

/* every bf16 working copy is its fp32 master rounded to nearest even, bit for bit (after init, each
   update and param_write); the count of tensors that differ, or -1 if one could not be read */
static int bf16_copies_stale(dpprof_session *s) {
    int i, stale = 0;
    for (i = 0; i < dpprof_session_param_count(s); i++) {
        dpprof_param *p = dpprof_session_param(s, i);
        size_t n = (size_t)p->wl.n;
        float *w;
        dpprof_bf16 *want, *got;
        if (!n) continue;
        w = (float *)malloc(sizeof(float) * n);
        want = (dpprof_bf16 *)malloc(sizeof(dpprof_bf16) * n);
        got = (dpprof_bf16 *)malloc(sizeof(dpprof_bf16) * n);
        if (!w || !want || !got || dpprof_session_param_read(s, i, 'w', w) != DPPROF_OK || dpprof_cuda_copy(got, p->wl.data, sizeof(dpprof_bf16) * n, DPPROF_COPY_D2H) != DPPROF_OK)
            stale = -1;
        else {
            dpprof_bf16_pack_ref(want, w, n);
            stale += memcmp(want, got, sizeof(dpprof_bf16) * n) != 0;
        }
        free(w);
        free(want);
        free(got);
        if (stale < 0) return -1;
    }
    return stale;
}

static void steps_bf16_case(int algo, int cls, int lora) {
    dpprof_config c;
    dpprof_session *cpu = NULL, *gpu = NULL;
    char name[128];
    int i;
    double ncpu[4], ngpu[4], ccpu[4], cgpu[4], en = 0, ec = 0, eg, ew;
    const char *wn;
    const int ref_case = !cls && !lora && !steps_tied; /* persample's lm results are the others' reference */
    snprintf(name, sizeof name, "bf16 step %s%s%s%s", dpprof_algo_name(algo), cls ? " cls" : " lm", lora ? (steps_head ? " lora, head trains" : " lora") : "", steps_tied ? " tied" : "");
    steps_config(&c, algo, 0, cls, lora);
    if (steps_pair(&c, DPPROF_DTYPE_BF16, name, lora, &cpu, &gpu) != DPPROF_OK) goto done;
    CHECK(bf16_copies_stale(gpu) == 0, "%s: every bf16 copy is its master rounded, after init%s", name, lora ? " and param_write" : "");
    if (steps_batch(cpu, gpu, name, algo, ncpu, ngpu, ccpu, cgpu, &en, &ec) != DPPROF_OK) goto done;
    if (algo == DPPROF_ALGO_VANILLA) {
        CHECK(en < 2e-2, "%s: per-sample losses agree (worst relative %.3g, tolerance 2e-2)", name, en);
    } else {
        CHECK(en < BF16_TOL_NORM, "%s: per-sample norms agree with fp32's (worst relative %.3g, tolerance %g; norms %.4g .. %.4g)", name, en, BF16_TOL_NORM, ncpu[0], ncpu[3]);
        CHECK(ec < BF16_TOL_NORM, "%s: clip factors agree with fp32's (worst relative %.3g, tolerance %g)", name, ec, BF16_TOL_NORM);
        if (algo == DPPROF_ALGO_PERSAMPLE && ref_case) {
            memcpy(bf16_ref_norms, ngpu, sizeof ngpu);
            memcpy(bf16_ref_clip, cgpu, sizeof cgpu);
        } else if (bf16_ref && ref_case) {
            double rn = 0;
            for (i = 0; i < 4; i++) rn = fmax(rn, fmax(fabs(ngpu[i] - bf16_ref_norms[i]) / bf16_ref_norms[i], fabs(cgpu[i] - bf16_ref_clip[i]) / bf16_ref_clip[i]));
            CHECK(rn < 1e-4, "%s: norms and clip factors agree with persample's in bf16 (worst relative %.3g, tolerance 1e-4: the same bf16 activations)", name, rn);
            eg = bf16_tensors_err(gpu, bf16_ref, 'g', &wn);
            CHECK(eg < 1e-4, "%s: the clipped sum agrees with persample's in bf16 (worst %.3g of a tensor's largest value, in %s; tolerance 1e-4)", name, eg, wn);
        }
    }
    eg = bf16_tensors_err(gpu, cpu, 'g', &wn);
    CHECK(eg < BF16_TOL_GRAD, "%s: the summed (clipped) gradient agrees with fp32's (worst %.3g of a tensor's largest value, in %s; tolerance %g)", name, eg, wn, BF16_TOL_GRAD);
    if (algo == DPPROF_ALGO_PERSAMPLE && ref_case) {
        bf16_ref = gpu; /* kept for the algorithms after it */
        gpu = NULL;
    }
    /* two noisy adam steps: the same noise bits, updates at bf16's distance */
    if (algo != DPPROF_ALGO_VANILLA) c.sigma = 0.5;
    if (steps_run_pair(&c, DPPROF_DTYPE_BF16, name, &cpu, &gpu) != DPPROF_OK) goto done;
    CHECK(bf16_copies_stale(gpu) == 0, "%s: every bf16 copy is its updated master rounded, after the steps", name);
    ew = bf16_weights_apart(gpu, cpu, dpprof_session_config(cpu)->lr);
    CHECK(ew < BF16_TOL_WEIGHTS, "%s: weights after two steps: mean |w_bf16 - w_fp32| = %.3g lr (tolerance %g lr)", name, ew, BF16_TOL_WEIGHTS);
    CHECK(fabs(dpprof_session_step_loss(cpu, 1) - dpprof_session_step_loss(gpu, 1)) < 2e-2 * fabs(dpprof_session_step_loss(cpu, 1)),
          "%s: the second step's loss agrees (fp32 %.8g, bf16 %.8g, tolerance 2e-2 relative)", name, dpprof_session_step_loss(cpu, 1), dpprof_session_step_loss(gpu, 1));
    if (lora) steps_same_as_dry(&c, gpu, name); /* the frozen weights in bf16 alone, the head frozen or trained */
    /* two noisy adam steps: the same noise bits, updates at bf16's distance */
    if (algo != DPPROF_ALGO_VANILLA) c.sigma = 0.5;
    if (steps_run_pair(&c, DPPROF_DTYPE_BF16, name, &cpu, &gpu) != DPPROF_OK) goto done;
done:
    dpprof_session_destroy(cpu);
    dpprof_session_destroy(gpu);
}

/* --batched-clipgrad: ghost_bk's clipped gradients as one GEMM over the batch, dy scaled by c_i in bf16 (3 + 1 samples:
   the GEMM over 3 samples' rows, then over 1), against persample in bf16 on the same activations: the norms are
   persample's (1e-4); each factor is at most persample's and above it less the rounding's bound (eps_i / ||g_i||,
   about 1% at this shape: 0.97 allowed); the clipped sum agrees to 3e-2 of a tensor's largest value (the lowered
   factors and bf16's 2^-8 on c dy); noisy steps at fp32's distance; the memory profile is dry's, event for event
   (the norms of dy and x per layer, allocated on both). auto with it: the timing of three kernels, dry's profile */
static void steps_bf16_batched(void) {
    dpprof_config c;
    dpprof_session *cpu = NULL, *gpu = NULL;
    const char *name = "bf16 step ghost_bk lm --batched-clipgrad", *wn;
    double ncpu[4], ngpu[4], ccpu[4], cgpu[4], en = 0, ec = 0, eg, rn = 0, lo = 1, hi = 0, ew;
    int i;
    if (!bf16_ref) return;
    steps_config(&c, DPPROF_ALGO_GHOST_BK, 0, 0, 0);
    c.batched_clipgrad = DPPROF_SWITCH_ON;
    if (steps_pair(&c, DPPROF_DTYPE_BF16, name, 0, &cpu, &gpu) != DPPROF_OK) goto done;
    if (steps_batch(cpu, gpu, name, DPPROF_ALGO_GHOST_BK, ncpu, ngpu, ccpu, cgpu, &en, &ec) != DPPROF_OK) goto done;
    for (i = 0; i < 4; i++) {
        rn = fmax(rn, fabs(ngpu[i] - bf16_ref_norms[i]) / bf16_ref_norms[i]);
        lo = fmin(lo, cgpu[i] / bf16_ref_clip[i]), hi = fmax(hi, cgpu[i] / bf16_ref_clip[i]);
    }
    CHECK(rn < 1e-4, "%s: the norms are persample's in bf16 (worst relative %.3g, tolerance 1e-4)", name, rn);
    CHECK(hi <= 1.0 && lo > 0.97, "%s: each clip factor is at most persample's and above 0.97 of it (%.6f .. %.6f: lowered by the rounding's bound)", name, lo, hi);
    eg = bf16_tensors_err(gpu, bf16_ref, 'g', &wn);
    CHECK(eg < 3e-2, "%s: the clipped sum agrees with persample's in bf16 (worst %.3g of a tensor's largest value, in %s; tolerance 3e-2)", name, eg, wn);
    c.sigma = 0.5;
    if (steps_run_pair(&c, DPPROF_DTYPE_BF16, name, &cpu, &gpu) != DPPROF_OK) goto done;
    ew = bf16_weights_apart(gpu, cpu, dpprof_session_config(cpu)->lr);
    CHECK(ew < BF16_TOL_WEIGHTS, "%s: weights after two noisy steps: mean |w_bf16 - w_fp32| = %.3g lr (tolerance %g lr)", name, ew, BF16_TOL_WEIGHTS);
    c.dtype = DPPROF_DTYPE_BF16;
    steps_same_as_dry(&c, gpu, name);
    dpprof_session_destroy(gpu);
    gpu = NULL;
    c.algo = DPPROF_ALGO_AUTO; /* auto with it asked for: every book-keeping layer on it, untimed */
    c.auto_ghost = 1;
    c.backend = DPPROF_BACKEND_CUDA;
    i = dpprof_session_create(&c, &gpu);
    if (i == DPPROF_OK) i = dpprof_session_run(gpu);
    CHECK(i == DPPROF_OK, "bf16 auto with --batched-clipgrad: two noisy steps (%s)", i ? dpprof_last_error() : "ok");
    if (i == DPPROF_OK) steps_same_as_dry(&c, gpu, "bf16 auto with --batched-clipgrad");
    dpprof_session_destroy(gpu);
    gpu = NULL;
    c.batched_clipgrad = DPPROF_SWITCH_AUTO; /* by default auto never takes it: its factors are lowered */
    i = dpprof_session_create(&c, &gpu);
    if (i == DPPROF_OK) {
        int k, batched = 0;
        for (k = 0; k < dpprof_session_param_count(gpu); k++) batched += dpprof_session_plan(gpu)->tensor[k].clipgrad == DPPROF_CLIPGRAD_BATCHED;
        CHECK(!batched && !dpprof_session_plan(gpu)->batched, "bf16 auto by default: no layer on the batched clipped gradient (%d), its norms not allocated", batched);
    } else CHECK(0, "bf16 auto by default: a session (%s)", dpprof_last_error());
done:
    dpprof_session_destroy(cpu);
    dpprof_session_destroy(gpu);
}

static void test_steps_bf16(void) {
    static const int algos[] = {DPPROF_ALGO_VANILLA, DPPROF_ALGO_PERSAMPLE, DPPROF_ALGO_GHOST, DPPROF_ALGO_GHOST_BK, DPPROF_ALGO_FLASH, DPPROF_ALGO_FLASH_BK};
    size_t a;
    for (a = 0; a < sizeof algos / sizeof algos[0]; a++) steps_bf16_case(algos[a], 0, 0);
    steps_bf16_batched();
    dpprof_session_destroy(bf16_ref);
    bf16_ref = NULL;
    steps_bf16_case(DPPROF_ALGO_FLASH, 1, 0);
    /* lora as PEFT runs it: the frozen weights in bf16 alone, the lm head frozen (every algorithm), then trained */
    for (a = 0; a < sizeof algos / sizeof algos[0]; a++) steps_bf16_case(algos[a], 0, 1);
    steps_bf16_case(DPPROF_ALGO_AUTO, 0, 1);
    steps_bf16_case(DPPROF_ALGO_FLASH_BK, 1, 1);
    steps_head = 1;
    steps_bf16_case(DPPROF_ALGO_GHOST_BK, 0, 1);
    steps_head = 0;
    steps_determinism(DPPROF_DTYPE_BF16);
}

/* a session's plan as dpprof run --plan prints it, less its first line (which names the backend); NULL on failure */
static char *steps_plan_text(const dpprof_session *s) {
    FILE *f = tmpfile();
    char *buf = NULL, *nl;
    long n;
    if (!f) return NULL;
    if (dpprof_session_write_plan(s, f) == DPPROF_OK && (n = ftell(f)) > 0 && (buf = (char *)calloc((size_t)n + 1, 1)) != NULL) {
        rewind(f);
        if (fread(buf, 1, (size_t)n, f) != (size_t)n) buf[0] = 0;
    }
    fclose(f);
    if (buf && (nl = strchr(buf, '\n')) != NULL) memmove(buf, nl + 1, strlen(nl + 1) + 1);
    return buf;
}

/* the plan of one configuration on dry, cpu (fp32) and cuda: the same text, tensor for tensor (auto with given rates:
   nothing timed, each backend plans from them) */
static void steps_plans(void) {
    static const struct {
        int algo, dtype, lora, rates;
    } cs[] = {
        {DPPROF_ALGO_FLASH_BK, DPPROF_DTYPE_FP32, 1, 0},
        {DPPROF_ALGO_GHOST, DPPROF_DTYPE_FP32, 0, 0},
        {DPPROF_ALGO_GHOST_BK, DPPROF_DTYPE_BF16, 1, 0},
        {DPPROF_ALGO_AUTO, DPPROF_DTYPE_FP32, 1, 1},
        {DPPROF_ALGO_AUTO, DPPROF_DTYPE_BF16, 0, 1},
    };
    size_t k;
    dpprof_rates r;
    memset(&r, 0, sizeof r);
    r.gram = 1e12, r.psg = 3e12, r.gram_cublas = 2e12, r.psg_cublas = 1e12, r.ghost = 0;
    r.clipgrad[0] = 1e12, r.clipgrad[1] = 2e12, r.clipgrad[2] = 0;
    r.noise_ms[0] = 2, r.noise_ms[1] = 1;
    for (k = 0; k < sizeof cs / sizeof cs[0]; k++) {
        dpprof_config c;
        dpprof_session *ss[3] = {NULL, NULL, NULL};
        char *txt[3] = {NULL, NULL, NULL}, name[96];
        static const int backs[3] = {DPPROF_BACKEND_DRY, DPPROF_BACKEND_CUDA, DPPROF_BACKEND_CPU};
        int b, ok = 1;
        steps_config(&c, cs[k].algo, 0, 0, cs[k].lora);
        c.dtype = (dpprof_dtype)cs[k].dtype;
        c.sigma = 0.5;
        c.auto_ghost = DPPROF_SWITCH_AUTO;
        if (cs[k].rates) c.rates = &r;
        snprintf(name, sizeof name, "plan %s %s%s%s", dpprof_algo_name(c.algo), cs[k].dtype == DPPROF_DTYPE_BF16 ? "bf16" : "fp32", cs[k].lora ? " lora" : "", cs[k].rates ? ", given rates" : "");
        for (b = 0; b < 3; b++) {
            if (backs[b] == DPPROF_BACKEND_CPU && c.dtype == DPPROF_DTYPE_BF16) continue; /* the cpu computes in fp32 */
            c.backend = (dpprof_backend)backs[b];
            ok &= dpprof_session_create(&c, &ss[b]) == DPPROF_OK && (txt[b] = steps_plan_text(ss[b])) != NULL;
        }
        CHECK(ok, "%s: sessions and their plans (%s)", name, ok ? "ok" : dpprof_last_error());
        if (ok) {
            int lines = 0;
            const char *q;
            for (q = txt[0]; *q; q++) lines += *q == '\n';
            CHECK(!strcmp(txt[0], txt[1]) && (!txt[2] || !strcmp(txt[0], txt[2])) && lines > 10, "%s: dry's, cuda's%s are the same, tensor for tensor (%d lines)", name,
                  txt[2] ? " and cpu's" : "", lines);
            if (strcmp(txt[0], txt[1])) printf("# dry:\n%s# cuda:\n%s", txt[0], txt[1]);
        }
        for (b = 0; b < 3; b++) {
            free(txt[b]);
            dpprof_session_destroy(ss[b]);
        }
    }
}

/* a configuration that cannot fit is status oom with the bytes it asked for, not a crash */
static void steps_oom(void) {
    dpprof_config c;
    dpprof_session *s = NULL;
    dpprof_device_info d;
    int rc;
    memset(&c, 0, sizeof c);
    c.preset = "llama-3.1-8b";
    c.seq = 16384;
    c.batch = 64;
    c.algo = DPPROF_ALGO_PERSAMPLE;
    c.backend = DPPROF_BACKEND_CUDA;
    c.steps = 1;
    dpprof_cuda_device_info(0, &d);
    rc = dpprof_session_create(&c, &s);
    if (rc == DPPROF_OK) rc = dpprof_session_run(s);
    CHECK(rc == DPPROF_ERR_OOM && strstr(dpprof_last_error(), "bytes"), "oom: llama-3.1-8b, T=16384, B=64, persample on %.0f GiB is DPPROF_ERR_OOM naming the bytes (%s)",
          (double)d.total_bytes / 1073741824.0, dpprof_last_error());
    if (s) {
        FILE *f = tmpfile();
        char buf[4096];
        size_t n = 0;
        CHECK(f && dpprof_session_write_json(s, f, "oom", "oom", dpprof_last_error()) == DPPROF_OK, "oom: the result json is written");
        if (f) {
            rewind(f);
            n = fread(buf, 1, sizeof buf - 1, f);
            buf[n] = 0;
            fclose(f);
        }
        CHECK(strstr(buf, "\"status\": \"oom\"") != NULL, "oom: its status is oom");
    }
    dpprof_session_destroy(s);
    /* and the device is usable afterwards */
    steps_config(&c, DPPROF_ALGO_VANILLA, 0, 0, 0);
    c.backend = DPPROF_BACKEND_CUDA;
    s = NULL;
    rc = dpprof_session_create(&c, &s);
    if (rc == DPPROF_OK) rc = dpprof_session_run(s);
    CHECK(rc == DPPROF_OK, "oom: a small run after it succeeds (%s)", rc ? dpprof_last_error() : "ok");
    dpprof_session_destroy(s);
}

/* --checkpoint layers on the device: the recomputation launches the forward's kernels on the same inputs, so two
   noisy steps give the same losses and weights as without it, bit for bit (the kernels are deterministic:
   steps_determinism), and the recompute phase is timed by CUDA events */
static void steps_ckpt_bitwise(int algo, int lora) {
    dpprof_config c;
    dpprof_session *s[2] = {NULL, NULL};
    char name[96];
    const char *wn = "";
    int k, rc = DPPROF_OK;
    double ew = -1;
    snprintf(name, sizeof name, "checkpoint %s%s on the device", dpprof_algo_name(algo), lora ? " lora" : "");
    for (k = 0; k < 2 && rc == DPPROF_OK; k++) {
        steps_ckpt = k;
        steps_config(&c, algo, 0, 0, lora);
        if (algo != DPPROF_ALGO_VANILLA) c.sigma = 0.5;
        c.backend = DPPROF_BACKEND_CUDA;
        rc = dpprof_session_create(&c, &s[k]);
        if (rc == DPPROF_OK && lora) rc = steps_perturb_lora(s[k]);
        if (rc == DPPROF_OK) rc = dpprof_session_run(s[k]);
    }
    steps_ckpt = 0;
    CHECK(rc == DPPROF_OK, "%s: two noisy steps with and without checkpointing (%s)", name, rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK) {
        const dpprof_prof *p = dpprof_session_prof(s[1]);
        size_t i, rec = 0, timed = 0;
        ew = steps_tensors_err(s[1], s[0], 'w', &wn);
        CHECK(ew == 0 && dpprof_session_step_loss(s[0], 1) == dpprof_session_step_loss(s[1], 1), "%s: losses and weights, bit for bit (worst %.3g in %s)", name, ew, wn);
        for (i = 0; i < p->n_phases; i++)
            if (p->phases[i].phase == DPPROF_PHASE_RECOMPUTE) rec++, timed += p->phases[i].t_end_ms >= p->phases[i].t_start_ms;
        CHECK(rec > 0 && timed == rec, "%s: %zu recompute records, %zu of them with a time (the device's events)", name, rec, timed);
    }
    dpprof_session_destroy(s[0]);
    dpprof_session_destroy(s[1]);
}

/* --attention cudnn: a flash_bk step on cuDNN's attention (bf16) against the cpu's fp32 reference at bf16's tolerances,
   the device's memory (cuDNN's workspace among it) against the dry model of the same configuration, event for event,
   and the in-process dry plan's peak against the accountant's. without cuDNN (a build or device without it, the
   emulator) the session is refused, naming cuDNN */
static void steps_cudnn(void) {
    dpprof_config c, g;
    dpprof_session *cpu = NULL, *gpu = NULL;
    double ncpu[4], ngpu[4], ccpu[4], cgpu[4], en = 0, ec = 0, eg;
    const char *wn, *name = "bf16 step flash_bk on cuDNN's attention";
    int rc;
    steps_config(&c, DPPROF_ALGO_FLASH_BK, 0, 0, 0);
    g = c;
    g.backend = DPPROF_BACKEND_CUDA;
    g.dtype = DPPROF_DTYPE_BF16;
    g.attention = DPPROF_ATTENTION_CUDNN;
    rc = dpprof_session_create(&g, &gpu);
    if (rc != DPPROF_OK) {
        CHECK(rc == DPPROF_ERR_UNSUPPORTED && strstr(dpprof_last_error(), "cuDNN"), "%s: refused without cuDNN, saying why (%s)", name, dpprof_last_error());
        return;
    }
    CHECK(dpprof_session_config(gpu)->attention_workspace >= 0, "%s: cuDNN's workspace %lld bytes", name, (long long)dpprof_session_config(gpu)->attention_workspace);
    c.backend = DPPROF_BACKEND_CPU;
    rc = dpprof_session_create(&c, &cpu);
    CHECK(rc == DPPROF_OK, "%s: the cpu fp32 session (%s)", name, rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK && steps_batch(cpu, gpu, name, DPPROF_ALGO_FLASH_BK, ncpu, ngpu, ccpu, cgpu, &en, &ec) == DPPROF_OK) {
        CHECK(en < BF16_TOL_NORM && ec < BF16_TOL_NORM, "%s: per-sample norms and clip factors agree with fp32's (worst relative %.3g, %.3g; tolerance %g)", name, en, ec, BF16_TOL_NORM);
        eg = bf16_tensors_err(gpu, cpu, 'g', &wn);
        CHECK(eg < BF16_TOL_GRAD, "%s: the clipped sum agrees with fp32's (worst %.3g of a tensor's largest value, in %s; tolerance %g)", name, eg, wn, BF16_TOL_GRAD);
    }
    dpprof_session_destroy(gpu);
    gpu = NULL;
    rc = dpprof_session_create(&g, &gpu);
    if (rc == DPPROF_OK) rc = dpprof_session_run(gpu);
    CHECK(rc == DPPROF_OK, "%s: two steps (%s)", name, rc ? dpprof_last_error() : "ok");
    if (rc == DPPROF_OK) {
        g.attention_workspace = dpprof_session_config(gpu)->attention_workspace; /* what the plans took, for dry to model */
        steps_same_as_dry(&g, gpu, name);
        steps_three_peaks(gpu, name);
    }
    dpprof_session_destroy(cpu);
    dpprof_session_destroy(gpu);
}

static void test_steps(void) {
    static const int algos[] = {DPPROF_ALGO_VANILLA, DPPROF_ALGO_PERSAMPLE, DPPROF_ALGO_GHOST, DPPROF_ALGO_GHOST_BK, DPPROF_ALGO_FLASH, DPPROF_ALGO_FLASH_BK, DPPROF_ALGO_AUTO};
    size_t a;
    for (a = 0; a < sizeof algos / sizeof algos[0]; a++) steps_case(algos[a], 0, 0, 0);
    steps_case(DPPROF_ALGO_FLASH_BK, 1, 0, 0);
    steps_case(DPPROF_ALGO_GHOST, 1, 0, 0);
    steps_case(DPPROF_ALGO_PERSAMPLE, 0, 1, 0);
    steps_case(DPPROF_ALGO_FLASH, 0, 1, 0);
    steps_case(DPPROF_ALGO_GHOST_BK, 0, 0, 1);
    steps_case(DPPROF_ALGO_FLASH_BK, 0, 1, 1);
    steps_tied = 1; /* the lm head tied to the embedding: its norm's cross term on the device */
    for (a = 0; a < sizeof algos / sizeof algos[0]; a++) steps_case(algos[a], 0, 0, 0);
    steps_case(DPPROF_ALGO_GHOST, 1, 0, 0);
    steps_case(DPPROF_ALGO_FLASH_BK, 0, 0, 1);
    steps_bf16_case(DPPROF_ALGO_FLASH, 0, 0);
    steps_bf16_case(DPPROF_ALGO_GHOST_BK, 0, 0);
    steps_bf16_case(DPPROF_ALGO_PERSAMPLE, 0, 1); /* the shared matrix frozen in bf16 alone: both uses read it */
    steps_head = 1;
    steps_bf16_case(DPPROF_ALGO_FLASH_BK, 0, 1); /* and trained, through both uses */
    steps_head = 0;
    steps_tied = 0;
    /* --checkpoint layers against the cpu reference (and the device's memory against dry's), then against the
       device without it */
    steps_ckpt = 1;
    steps_case(DPPROF_ALGO_GHOST, 0, 0, 1);
    steps_case(DPPROF_ALGO_FLASH_BK, 0, 1, 0);
    steps_case(DPPROF_ALGO_AUTO, 0, 0, 1);
    steps_ckpt = 0;
    steps_ckpt_bitwise(DPPROF_ALGO_VANILLA, 0);
    steps_ckpt_bitwise(DPPROF_ALGO_FLASH, 0);
    steps_ckpt_bitwise(DPPROF_ALGO_PERSAMPLE, 1);
    steps_determinism(DPPROF_DTYPE_FP32);
    steps_op_records();
    test_steps_bf16();
    steps_plans();
    steps_cudnn();
    steps_oom();
}
