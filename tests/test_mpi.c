/* tests/test_mpi.c - sharded data parallelism as an MPI job on the cpu backend: N ranks of B/N samples each
   give the single-rank run of B samples. run as `mpirun -np N build/tests/mpi_ranks` (N = 2 and 4 in make test);
   built with DPPROF_CUDA and linked to the kernels on the cpu emulator (build/tests/mpi_ranks_cuemu, tests/cuemu.h
   with its NCCL over MPI), the same checks hold for the cuda backend's ranks and their NCCL collectives, on fewer
   cases (N = 2 and 3: a part that is padded, and the collectives of the unpadded tensors);
   rank 0 runs the single-rank session and sends its losses and weights to all, every rank runs the N-rank
   one, and the checks hold on every rank:
   - the steps' losses and every weight after two noisy steps agree to reduction-order rounding, for every
     algorithm and ZeRO stage, full fine-tuning and LoRA, adam and sgd, gradient accumulation, a tied head (every
     algorithm and stage, and accumulating), activation checkpointing;
   - the noise a rank adds to its shard is, bit for bit, the single rank's noise at those elements;
   - each rank's memory history event by event, its peak and its split by category, and the bytes each
     collective moved equal the dry backend's figure for rank 0 of N (the model the fsdp experiment draws), and the ranks' peaks are equal;
   - poisson sampling (every algorithm, every stage, and accumulation in physical batches of 1): each step's shares
     are the ranks' ids i mod N of the single rank's draw and add up to it, with a seed whose draws leave a rank's
     share empty at a step (from zero 2 on that rank runs idle physical batches); N ranks give the single rank's
     losses and weights and noise as above, and each rank's memory history, peak and collective bytes are the dry
     backend's figure for that rank (its share of the draw); and at zero 0 and 1 a memory limit that stops only the
     ranks whose share reaches the largest peak stops every rank at that step, none waiting. */
#include <math.h>
#include <mpi.h>
#ifndef DPPROF_MPI
#define DPPROF_MPI
#endif
#include <stdlib.h>
#include <string.h>
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#include "test.h"

static int rank, world;
#ifdef DPPROF_CUDA
static const dpprof_backend backend = DPPROF_BACKEND_CUDA;
#else
static const dpprof_backend backend = DPPROF_BACKEND_CPU;
#endif

/* n reals at p of a session of the backend under test: zeroed, or copied to the host */
static void zero_reals(dpprof_real *p, int64_t n) {
    if (backend == DPPROF_BACKEND_CUDA) dpprof_cuda_zero(p, (size_t)n * sizeof(dpprof_real));
    else memset(p, 0, (size_t)n * sizeof(dpprof_real));
}
static dpprof_real *host_reals(const dpprof_real *p, int64_t n) {
    dpprof_real *h = (dpprof_real *)malloc(sizeof(dpprof_real) * (size_t)(n ? n : 1));
    if (!h || !n) return h;
    if (backend == DPPROF_BACKEND_CUDA) {
        if (dpprof_cuda_copy(h, p, (size_t)n * sizeof(dpprof_real), DPPROF_COPY_D2H) != DPPROF_OK) memset(h, 0xff, (size_t)n * sizeof(dpprof_real));
    } else memcpy(h, p, (size_t)n * sizeof(dpprof_real));
    return h;
}

/* a check that holds on every rank: rank 0 says it */
#define CHECK_ALL(cond, ...)                                                     \
    do {                                                                         \
        int all_ = (cond) ? 1 : 0;                                               \
        MPI_Allreduce(MPI_IN_PLACE, &all_, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD); \
        if (!rank) CHECK(all_, __VA_ARGS__);                                     \
        else if (all_) test_passed++;                                            \
        else test_failed++;                                                      \
    } while (0)

static const dpprof_algo algos[] = {DPPROF_ALGO_VANILLA, DPPROF_ALGO_PERSAMPLE, DPPROF_ALGO_GHOST, DPPROF_ALGO_GHOST_BK, DPPROF_ALGO_FLASH, DPPROF_ALGO_FLASH_BK, DPPROF_ALGO_AUTO};
#define N_ALGOS ((int)(sizeof algos / sizeof algos[0]))

typedef struct variant {
    const char *name;
    int lora, sgd, tied, ckpt, phys; /* phys: the physical batch (0: a rank's whole batch) */
    int poisson;                     /* poisson sampling from a dataset of this many samples (0: fixed batches) */
    int bf16;                        /* --dtype bf16 (the cuda backend's: the cpu refuses it) */
} variant;

static uint64_t poisson_seed = 11; /* a seed whose draws leave some rank's share empty (chosen in main) */

static dpprof_config config(dpprof_algo algo, int zero, int ranks, const variant *v, dpprof_backend backend) {
    dpprof_config c;
    memset(&c, 0, sizeof c);
    c.preset = "tiny";
    c.seq = 16;
    c.batch = world % 2 ? 2 * world : 8; /* a multiple of the ranks */
    c.physical_batch = v->phys;
    c.ranks = ranks;
    c.zero = zero;
    c.algo = algo;
    if (algo != DPPROF_ALGO_VANILLA) {
        c.sigma = 0.7;
        c.max_grad_norm = 0.5; /* clips some samples, not all */
    }
    c.steps = 2;
    c.seed = 11;
    c.no_timeline = 1;
    c.backend = backend;
    c.tie_embeddings = v->tied ? 1 : -1;
    if (v->lora) c.lora_rank = 4;
    if (v->sgd) c.optimizer = DPPROF_OPT_SGD;
    if (v->ckpt) c.checkpoint = DPPROF_CHECKPOINT_LAYERS;
    if (v->poisson) {
        c.poisson = 1;
        c.dataset_size = v->poisson;
        c.seed = poisson_seed;
    }
    if (v->bf16) c.dtype = DPPROF_DTYPE_BF16;
    return c;
}

static dpprof_session *session(const dpprof_config *c) {
    dpprof_session *s = NULL;
    if (dpprof_session_create(c, &s) != DPPROF_OK) {
        printf("# rank %d: %s\n", rank, dpprof_last_error());
        dpprof_session_destroy(s);
        return NULL;
    }
    return s;
}

/* zero >= 1: the noise of step `step` on this rank's shard, against the single rank's on the whole tensors */
static int noise_bitwise(dpprof_session *d, dpprof_session *r) {
    int i, same = 1;
    if (!d->dist.zero || !d->dps.dp) return 1;
    for (i = 0; i < r->model.n_params; i++)
        if (r->model.params[i].trainable) zero_reals(DPPROF__F(r->model.params[i].g), r->model.params[i].g.n);
    dpprof__noise(r, 7);
    if (d->dist.zero == 1) dpprof__zero_grads(d);
    else zero_reals(DPPROF__F(d->dist.gshard), d->dist.gshard.n);
    dpprof__dist_apply(d, 7, 0);
    for (i = 0; i < d->model.n_params; i++) {
        const dpprof_param *p = &d->model.params[i];
        int64_t lo, len;
        const dpprof_real *g;
        if (!p->trainable) continue;
        dpprof__dist_part(d, p->w.n, &lo, &len);
        g = d->dist.zero == 1 ? DPPROF__F(p->g) + lo : DPPROF__F(d->dist.gshard) + d->dist.toff[i];
        if (len) {
            dpprof_real *a = host_reals(g, len), *b = host_reals(DPPROF__F(r->model.params[i].g) + lo, len);
            if (!a || !b || memcmp(a, b, (size_t)len * sizeof(dpprof_real))) same = 0;
            free(a);
            free(b);
        }
    }
    return same;
}

/* the single rank's losses and final weights of (algo, v): run by rank 0 and broadcast (its cost is then one
   rank's, whatever the job's size); NULL on failure */
static double *reference(dpprof_algo algo, const variant *v, int64_t *nw) {
    dpprof_config c = config(algo, 0, 1, v, backend);
    dpprof_session *r = NULL;
    double *out = NULL;
    int64_t n = 0, at = 2;
    int i, ok = 1;
    c.physical_batch = v->phys ? v->phys : c.batch / world; /* the ranks' physical batches */
    if (!rank) {
        r = session(&c);
        ok = r && dpprof_session_run(r) == DPPROF_OK;
        for (i = 0; ok && i < dpprof_session_param_count(r); i++) n += dpprof_session_param(r, i)->w.n;
    }
    MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
    if (ok) out = (double *)malloc(sizeof(double) * (size_t)(n + 2));
    if (ok && !rank) {
        dpprof_real *w = (dpprof_real *)malloc(sizeof(dpprof_real) * (size_t)n);
        out[0] = dpprof_session_step_loss(r, 0);
        out[1] = dpprof_session_step_loss(r, 1);
        for (i = 0; w && i < dpprof_session_param_count(r); i++) {
            const int64_t m = dpprof_session_param(r, i)->w.n;
            int64_t e;
            if (dpprof_session_param_read(r, i, 'w', w) != DPPROF_OK) break;
            for (e = 0; e < m; e++) out[at + e] = (double)w[e];
            at += m;
        }
        free(w);
    }
    if (ok) MPI_Bcast(out, (int)(n + 2), MPI_DOUBLE, 0, MPI_COMM_WORLD);
    dpprof_session_destroy(r);
    *nw = n;
    return out;
}

static void one(dpprof_algo algo, int zero, const variant *v, const double *ref) {
    dpprof_config cr = config(algo, zero, 1, v, backend), cd = config(algo, zero, world, v, backend),
                  cy = config(algo, zero, world, v, DPPROF_BACKEND_DRY);
    dpprof_session *r, *d, *y;
    dpprof_dist_info di, yi;
    double lossd = 0, wd = 0, wmax = 0;
    int64_t at = 2;
    int i, k, ok = 1, cats = 1;
    const char *an = dpprof_algo_name(algo);
    const char *why = "";
    cr.physical_batch = v->phys ? v->phys : cd.batch / world;
    cd.no_timeline = cy.no_timeline = 0; /* the event logs, to hold against each other */
    r = session(&cr);                    /* not run: the single rank's noise, for the bitwise check */
    d = session(&cd);
    y = session(&cy);
    if (y) y->dist.rank = rank; /* the dry model of this rank (its share of a poisson draw) */
    ok = ref && r && d && y && dpprof_session_run(d) == DPPROF_OK && dpprof_session_run(y) == DPPROF_OK;
    CHECK_ALL(ok, "%s zero %d %s: the single rank, %d ranks and the dry model run", an, zero, v->name, world);
    if (!ok) goto done;
    for (k = 0; k < 2; k++) {
        const double a = ref[k], b = dpprof_session_step_loss(d, k);
        if (fabs(a - b) / fabs(a) > lossd) lossd = fabs(a - b) / fabs(a);
    }
    for (i = 0; i < dpprof_session_param_count(d) && ok; i++) {
        const int64_t n = dpprof_session_param(d, i)->w.n;
        dpprof_real *b = (dpprof_real *)malloc(sizeof(dpprof_real) * (size_t)n);
        int64_t e;
        ok = b && dpprof_session_param_read(d, i, 'w', b) == DPPROF_OK;
        for (e = 0; ok && e < n; e++) {
            if (fabs(ref[at + e] - b[e]) > wd) wd = fabs(ref[at + e] - b[e]);
            if (fabs(ref[at + e]) > wmax) wmax = fabs(ref[at + e]);
        }
        at += n;
        free(b);
    }
    CHECK_ALL(ok && lossd <= 1e-6 && wd <= 1e-6 * wmax, "%s zero %d %s: %d ranks = one rank (loss rel %.1e, weights after 2 steps %.1e of %.2f)", an, zero, v->name, world,
              lossd, wd, wmax);
    if (d->dist.zero && d->dps.dp) CHECK_ALL(noise_bitwise(d, r), "%s zero %d %s: a rank's noise is the single rank's, bit for bit", an, zero, v->name);
    dpprof_session_dist(d, &di);
    dpprof_session_dist(y, &yi);
    for (k = 0; k < DPPROF_CAT_COUNT; k++)
        if (dpprof_session_prof(d)->peak_by_cat[k] != dpprof_session_prof(y)->peak_by_cat[k]) cats = 0;
    CHECK_ALL(dpprof_session_prof(d)->peak_bytes == dpprof_session_prof(y)->peak_bytes && cats && (v->poisson || d->dist.peak_min == d->dist.peak_max),
              "%s zero %d %s: each rank's peak %lld bytes (by category too) = the dry model's %lld%s", an, zero, v->name, (long long)dpprof_session_prof(d)->peak_bytes,
              (long long)dpprof_session_prof(y)->peak_bytes, v->poisson ? " of that rank (its share of the draw)" : ", every rank's the same");
    k = dpprof_prof_same_memory(dpprof_session_prof(d), dpprof_session_prof(y), &why);
    CHECK_ALL(k, "%s zero %d %s: each rank's memory history, event by event (bytes, category, module, phase), is the dry model's%s%s", an, zero, v->name, k ? "" : ": ",
              k ? "" : why);
    CHECK_ALL(di.all_reduce_bytes == yi.all_reduce_bytes && di.reduce_scatter_bytes == yi.reduce_scatter_bytes && di.all_gather_bytes == yi.all_gather_bytes,
              "%s zero %d %s: collective bytes %lld/%lld/%lld = the dry model's", an, zero, v->name, (long long)di.all_reduce_bytes, (long long)di.reduce_scatter_bytes,
              (long long)di.all_gather_bytes);
done:
    dpprof_session_destroy(r);
    dpprof_session_destroy(d);
    dpprof_session_destroy(y);
}

/* poisson: every step's draw over the ranks (dry sessions of seed `seed`: one rank, and this rank of world, at zero 2)
   against the single rank's. *ok: at every step each rank's ids are its shard's (i mod N = rank) and in the single
   rank's draw, the shares add up to it (so their union is it), every rank counts the same shares, and the draw is
   not empty; *empty: some rank's share is empty at some step; *idle: some rank runs an idle physical batch */
static void shares(const variant *v, int *ok, int *empty, int *idle) {
    dpprof_config c1 = config(DPPROF_ALGO_GHOST_BK, 0, 1, v, DPPROF_BACKEND_DRY), cn = config(DPPROF_ALGO_GHOST_BK, 2, world, v, DPPROF_BACKEND_DRY);
    dpprof_session *one = session(&c1), *mine = session(&cn);
    int step, i, j, r;
    *ok = one && mine;
    *empty = *idle = 0;
    if (mine) mine->dist.rank = rank;
    for (step = 0; *ok && step < cn.steps; step++) {
        int sum, found = 1;
        *ok = dpprof__sample_batch(one, step) == DPPROF_OK && dpprof__sample_batch(mine, step) == DPPROF_OK && one->dps.draw_n == one->dps.batch_n &&
              mine->dps.draw_n == one->dps.draw_n && mine->dps.rank_n[rank] == mine->dps.batch_n && one->dps.draw_n > 0;
        for (i = 0; *ok && i < mine->dps.batch_n; i++) {
            for (j = 0; j < one->dps.batch_n && one->dps.batch_ids[j] != mine->dps.batch_ids[i]; j++) {}
            found &= mine->dps.batch_ids[i] % world == rank && j < one->dps.batch_n;
        }
        sum = mine->dps.batch_n;
        MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        *ok = *ok && found && sum == one->dps.draw_n;
        for (r = 0; *ok && r < world; r++) *empty |= mine->dps.rank_n[r] == 0;
        *idle |= *ok && mine->dps.passes > (mine->dps.batch_n + mine->cfg.physical_batch - 1) / mine->cfg.physical_batch;
    }
    dpprof_session_destroy(one);
    dpprof_session_destroy(mine);
    MPI_Allreduce(MPI_IN_PLACE, ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, empty, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, idle, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
}

/* poisson: the first seed from 11 whose draws leave some rank's share empty (the draw itself never), said */
static void poisson_setup(const variant *v) {
    int ok = 0, empty = 0, idle = 0;
    for (poisson_seed = 11; poisson_seed < 1000; poisson_seed++) {
        shares(v, &ok, &empty, &idle);
        if (!ok || (empty && idle)) break;
    }
    CHECK_ALL(ok && empty && idle, "poisson over %d ranks (seed %llu, B = %d of %d): each step's shares are the ranks' ids i mod %d of the single rank's draw and add up to it; a "
                                   "rank's share is empty at a step, and from zero 2 on a rank runs an idle physical batch",
              world, (unsigned long long)poisson_seed, config(DPPROF_ALGO_GHOST_BK, 0, world, v, backend).batch, v->poisson, world);
}

/* poisson: the ranks' peaks differ with their shares. a memory limit a byte under the largest stops the ranks that
   reach it and, at zero 0 and 1 (no collective inside a physical batch), every other rank with them at the step's
   reduction: an out-of-memory error there, "another rank failed" elsewhere, none waiting */
static void poisson_limit(const variant *v) {
    const uint64_t seed0 = poisson_seed;
    int z;
    for (z = 0; z <= 1; z++) {
        dpprof_config cd;
        dpprof_session *d = NULL;
        long long pk[2] = {0, 0}, mine = 0;
        int rc = DPPROF_OK, ok = 1;
        for (poisson_seed = seed0; ok && -pk[0] >= pk[1] && poisson_seed < seed0 + 100; poisson_seed++) { /* a seed whose shares give the ranks different peaks */
            dpprof_config cy = config(DPPROF_ALGO_GHOST_BK, z, world, v, DPPROF_BACKEND_DRY);
            dpprof_session *y = session(&cy);
            if (y) y->dist.rank = rank;
            ok = y && dpprof_session_run(y) == DPPROF_OK;
            if (ok) mine = (long long)dpprof_session_prof(y)->peak_bytes, pk[0] = -mine, pk[1] = mine;
            MPI_Allreduce(MPI_IN_PLACE, pk, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
            MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            dpprof_session_destroy(y);
        }
        cd = config(DPPROF_ALGO_GHOST_BK, z, world, v, backend); /* of the seed found */
        cd.seed = poisson_seed - 1;
        poisson_seed = seed0;
        CHECK_ALL(ok && -pk[0] < pk[1], "poisson zero %d, seed %llu: the ranks' dry peaks differ with their shares (%lld to %lld bytes)", z, (unsigned long long)cd.seed, -pk[0], pk[1]);
        if (!ok || -pk[0] >= pk[1]) continue;
        cd.memory_limit = (int64_t)pk[1] - 1;
        if (dpprof_session_create(&cd, &d) == DPPROF_OK) rc = dpprof_session_run(d);
        ok = mine == pk[1] ? rc == DPPROF_ERR_OOM : (rc != DPPROF_OK && strstr(dpprof_last_error(), "another rank failed") != NULL);
        CHECK_ALL(ok, "poisson zero %d within %lld bytes: the ranks at that peak run out of memory, the others stop with them (rank %d: %s)", z, pk[1] - 1, rank,
                  rc == DPPROF_OK ? "ran" : dpprof_last_error());
        dpprof_session_destroy(d);
    }
}

/* (algo, v) at zero 0 to zmax against one single-rank run */
static void stages(dpprof_algo algo, const variant *v, int zmax) {
    int64_t n = 0;
    double *ref = reference(algo, v, &n);
    int z;
    for (z = 0; z <= zmax; z++) one(algo, z, v, ref);
    free(ref);
}

int main(int argc, char **argv) {
    static const variant full = {"full", 0, 0, 0, 0, 0, 0, 0}, lora = {"lora", 1, 0, 0, 0, 0, 0, 0}, accum = {"accumulating b=1", 0, 0, 0, 0, 1, 0, 0},
                         sgd = {"sgd", 0, 1, 0, 0, 0, 0, 0}, tied = {"tied", 0, 0, 1, 0, 0, 0, 0}, ckpt = {"checkpoint", 0, 0, 0, 1, 0, 0, 0},
                         tacc = {"tied accumulating b=1", 0, 0, 1, 0, 1, 0, 0}, tsgd = {"tied sgd", 0, 1, 1, 0, 0, 0, 0};
    static const variant bf = {"bf16", 0, 0, 0, 0, 0, 0, 1}, sbf = {"bf16 sgd", 0, 1, 0, 0, 0, 0, 1}, lbf = {"lora bf16", 1, 0, 0, 0, 0, 0, 1}, tbf = {"tied bf16", 0, 0, 1, 0, 0, 0, 1},
                         abf = {"bf16 accumulating b=1", 0, 0, 0, 0, 1, 0, 1};
    /* poisson: non-private training under sgd (adam's division by sqrt(v) magnifies the order of summation's rounding
       where a gradient element is near zero, as vanilla's can be: 1e-6 seen at 4 ranks; dp's noise keeps them off zero) */
    static const variant poisson = {"poisson", 0, 0, 0, 0, 0, 32, 0}, poisson_sgd = {"poisson sgd", 0, 1, 0, 0, 0, 32, 0}, poisson_accum = {"poisson b=1", 0, 0, 0, 0, 1, 32, 0};
    int a, code;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    if (rank) { /* rank 0 speaks for all */
        if (!freopen("/dev/null", "w", stdout)) return 1;
    }
    printf("# %d ranks, %s backend\n", world, dpprof_backend_name(backend));
    poisson_setup(&poisson);
    poisson_limit(&poisson);
    if (backend == DPPROF_BACKEND_CUDA) { /* emulated kernels: the collectives' every path, on fewer algorithms */
        stages(DPPROF_ALGO_GHOST_BK, &poisson, 3);
        stages(DPPROF_ALGO_GHOST_BK, &full, 3);
        stages(DPPROF_ALGO_FLASH_BK, &lora, 3);
        stages(DPPROF_ALGO_PERSAMPLE, &sgd, 3);
        stages(DPPROF_ALGO_VANILLA, &tied, 3);
        /* bf16: the masters, gradients and moments sharded as in fp32; the working copies cast from the gathered
           masters (zero 1, 2) or sharded and gathered in bf16 (zero 3). every algorithm but auto, whose plan on the
           cuda backend follows the rates it times on the device (the dry model times nothing); vanilla with sgd
           (adam's first steps magnify the rounding of a near-zero summed gradient, a bf16 copy's rounding with it) */
        for (a = 0; a < N_ALGOS; a++) /* at 2 ranks; at more (padded parts) one algorithm, the variants below */
            if (algos[a] != DPPROF_ALGO_AUTO && (world <= 2 || algos[a] == DPPROF_ALGO_FLASH)) stages(algos[a], algos[a] == DPPROF_ALGO_VANILLA ? &sbf : &bf, 3);
        stages(DPPROF_ALGO_FLASH_BK, &lbf, 3);
        stages(DPPROF_ALGO_GHOST, &tbf, 3);
        stages(DPPROF_ALGO_GHOST_BK, &abf, 3);
    } else {
        for (a = 0; a < N_ALGOS; a++) {
            stages(algos[a], &full, 3);
            stages(algos[a], &lora, 3);
            stages(algos[a], algos[a] == DPPROF_ALGO_VANILLA ? &poisson_sgd : &poisson, 3);
            /* the shared matrix: both uses' gradient reduce-scattered once, gathered for each use. vanilla with sgd: without
               noise, adam's first steps move an element whose summed gradient is near 0 by about lr whatever its size, so its
               reduction-order rounding (1e-9 with sgd) reaches 1e-6 of the weights at 4 ranks */
            stages(algos[a], algos[a] == DPPROF_ALGO_VANILLA ? &tsgd : &tied, 3);
        }
        stages(DPPROF_ALGO_FLASH, &poisson_accum, 3);
        stages(DPPROF_ALGO_GHOST_BK, &accum, 3);
        stages(DPPROF_ALGO_PERSAMPLE, &accum, 3);
        stages(DPPROF_ALGO_FLASH_BK, &sgd, 3);
        stages(DPPROF_ALGO_GHOST, &ckpt, 3);
        stages(DPPROF_ALGO_FLASH, &tacc, 3);
        stages(DPPROF_ALGO_GHOST_BK, &tacc, 3);
    }
    { /* refusals, before any work */
        dpprof_config c = config(DPPROF_ALGO_GHOST, 0, world + 1, &full, backend);
        dpprof_session *s = NULL;
        int rc;
        c.batch = 8 * (world + 1);
        rc = dpprof_session_create(&c, &s);
        CHECK_ALL(rc == DPPROF_ERR_INVALID && !s && strstr(dpprof_last_error(), "processes"), "ranks = %d in a job of %d processes is refused: %s", world + 1, world, dpprof_last_error());
        c = config(DPPROF_ALGO_GHOST, 0, world, &full, backend);
        if (dpprof_session_create(&c, &s) == DPPROF_OK) {
            int tok[16] = {0}, tgt[16] = {0};
            rc = dpprof_session_grad(s, tok, tgt, 1, NULL);
            CHECK_ALL(rc == DPPROF_ERR_UNSUPPORTED, "a %d-rank session refuses dpprof_session_grad (whole steps only): %s", world, dpprof_last_error());
            dpprof_session_destroy(s);
        }
    }
    code = test_finish();
    MPI_Finalize();
    return code;
}
