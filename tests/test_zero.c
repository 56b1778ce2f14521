/* tests/test_zero.c - sharded data parallelism (--ranks, --zero) on the dry backend, checked against the
   sizes worked out here from the parameter table: every rank's shard is sum ceil(n_t / N) elements (plus
   padding where a tensor does not split evenly), zero 0 at N ranks is the single-rank run at batch B/N
   byte for byte, every stage's activations are that run's, the collectives move the ring algorithm's
   bytes, the report adds up, Llama-3.1-8B answers in under a second; refusals; poisson sampling over ranks (the
   single rank's draws and epsilon, the largest share's physical batches from zero 2 on, a step that draws nothing);
   and on the cpu one rank with any stage gives the bits of plain training for every algorithm. run by make test. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <math.h>
#include "dpprof.h"
#include "test.h"

static const dpprof_algo algos[] = {DPPROF_ALGO_VANILLA, DPPROF_ALGO_PERSAMPLE, DPPROF_ALGO_GHOST, DPPROF_ALGO_GHOST_BK, DPPROF_ALGO_FLASH, DPPROF_ALGO_FLASH_BK, DPPROF_ALGO_AUTO};
#define N_ALGOS ((int)(sizeof algos / sizeof algos[0]))

static dpprof_config dry(const char *preset, int seq, int batch, int phys, int ranks, int zero, dpprof_algo algo) {
    dpprof_config c;
    memset(&c, 0, sizeof c);
    c.preset = preset;
    c.seq = seq;
    c.batch = batch;
    c.physical_batch = phys;
    c.ranks = ranks;
    c.zero = zero;
    c.algo = algo;
    c.sigma = algo == DPPROF_ALGO_VANILLA ? 0 : 1.0;
    c.steps = 1;
    c.no_timeline = 1;
    c.backend = DPPROF_BACKEND_DRY;
    return c;
}

/* one step; NULL on failure (said) */
static dpprof_session *run(const dpprof_config *c) {
    dpprof_session *s = NULL;
    if (dpprof_session_create(c, &s) != DPPROF_OK || dpprof_session_run(s) != DPPROF_OK) {
        printf("# %s: %s\n", c->preset, dpprof_last_error());
        dpprof_session_destroy(s);
        return NULL;
    }
    return s;
}

/* sum of ceil(n_t / N) over the (trainable) tensors, from the table */
static int64_t shard_of(dpprof_session *s, int N, int trainable_only) {
    int64_t S = 0;
    int i;
    for (i = 0; i < dpprof_session_param_count(s); i++) {
        const dpprof_param *p = dpprof_session_param(s, i);
        if (!trainable_only || p->trainable) S += (p->w.n + N - 1) / N;
    }
    return S;
}

static int adds_up(const dpprof_prof *p) {
    int64_t c = 0, m = 0;
    int k;
    for (k = 0; k < DPPROF_CAT_COUNT; k++) c += p->peak_by_cat[k];
    for (k = 0; k < DPPROF_MOD_COUNT; k++) m += p->peak_by_mod[k];
    return c == p->peak_bytes && m == p->peak_bytes;
}

/* what rank 0 holds between steps: parameters, gradients, adam moments and the workspace, by stage */
static int64_t persistent(int zero, int64_t Pall, int64_t P, int64_t S, int64_t Sall, int N) {
    const int64_t pad = (int64_t)N * S - P, R = (int64_t)sizeof(dpprof_real);
    switch (zero) {
    case 0: return R * (Pall + P + 2 * P) + DPPROF_WORKSPACE_BYTES;
    case 1: return R * (Pall + pad + P + pad + 2 * S) + DPPROF_WORKSPACE_BYTES;
    case 2: return R * (Pall + pad + S + 2 * S) + DPPROF_WORKSPACE_BYTES;
    default: return R * (Sall + S + 2 * S) + DPPROF_WORKSPACE_BYTES;
    }
}

/* the collectives' time model against NCCL's relations (nccl-tests, doc/PERFORMANCE.md), worked out here: a ring
   collective of S bytes on n ranks whose slowest link carries B bytes/s each way takes S x factor / B (factor 2 (n - 1)
   / n for all-reduce, (n - 1) / n for reduce-scatter and all-gather), so that NCCL's busbw = (S / t) x factor is B;
   plus the ring's steps (2 (n - 1) or n - 1) at the links' latency, the 2 (K - 1) or K - 1 steps between K nodes at
   the network's */
static double factor_of(dpprof_coll k, int n) { return (k == DPPROF_COLL_ALL_REDUCE ? 2.0 : 1.0) * (n - 1) / n; }
static double steps_of(dpprof_coll k, int n) { return (k == DPPROF_COLL_ALL_REDUCE ? 2.0 : 1.0) * (n - 1); }
static int near(double a, double b) { return fabs(a - b) <= 1e-12 * fabs(b) + 1e-18; }

static void check_comm_model(void) {
    static const int ns[] = {2, 3, 4, 8, 16, 64};
    static const double sizes[] = {1, 4096, 1e6, 7.25e8, 3.2e10};
    const dpprof_link bare = {"test-bare", 0, 100e9, 0.0, "a link of 100 GB/s, no latency", "the test"};
    const dpprof_link lat = {"test-lat", 0, 40e9, 5e-6, "a link of 40 GB/s, 5 us a step", "the test"};
    const dpprof_link net = {"test-net", 1, 12.5e9, 20e-6, "a network of 12.5 GB/s, 20 us a step", "the test"};
    const dpprof_link *nv4 = dpprof_link_find("NVLink4"), *ndr = dpprof_link_find("ndr");
    int k, i, j, ok_bus = 1, ok_lat = 1, ok_one = 1, ok_nodes = 1, ok_flat = 1, count = 0, cases = 0;
    double t;
    for (k = 0; k < DPPROF_COLL_COUNT; k++)
        for (i = 0; i < (int)(sizeof ns / sizeof ns[0]); i++)
            for (j = 0; j < (int)(sizeof sizes / sizeof sizes[0]); j++) {
                const dpprof_coll c = (dpprof_coll)k;
                const int n = ns[i];
                const double S = sizes[j];
                dpprof_fabric f = {n, 1, &bare, NULL};
                cases++;
                /* no latency: NCCL's busbw of the time is the link's bandwidth, whatever n and S */
                if (dpprof_coll_seconds(c, S, &f, &t) != DPPROF_OK || !near(S / t * factor_of(c, n), bare.bytes_per_s)) ok_bus = 0;
                /* with a latency a step */
                f.intra = &lat;
                if (dpprof_coll_seconds(c, S, &f, &t) != DPPROF_OK || !near(t, S * factor_of(c, n) / lat.bytes_per_s + steps_of(c, n) * lat.step_latency_s)) ok_lat = 0;
                /* n GPUs over two nodes (n even) and one a node: the network bounds the ring; its steps take its latency */
                if (n % 2 == 0) {
                    const dpprof_fabric f2 = {n, 2, &lat, &net}, fn = {n, n, NULL, &net};
                    const double s2 = steps_of(c, 2), sn = steps_of(c, n);
                    if (dpprof_coll_seconds(c, S, &f2, &t) != DPPROF_OK ||
                        !near(t, S * factor_of(c, n) / net.bytes_per_s + (steps_of(c, n) - s2) * lat.step_latency_s + s2 * net.step_latency_s))
                        ok_nodes = 0;
                    if (dpprof_coll_seconds(c, S, &fn, &t) != DPPROF_OK || !near(t, S * factor_of(c, n) / net.bytes_per_s + sn * net.step_latency_s)) ok_nodes = 0;
                }
                /* a network faster than the link: the link bounds the ring */
                {
                    const dpprof_link fast = {"test-fast", 1, 1e12, 1e-6, "a network of 1 TB/s", "the test"};
                    const dpprof_fabric f3 = {n * 2, 2, &lat, &fast};
                    if (dpprof_coll_seconds(c, S, &f3, &t) != DPPROF_OK || !near(t, S * factor_of(c, 2 * n) / lat.bytes_per_s + (steps_of(c, 2 * n) - steps_of(c, 2)) * lat.step_latency_s +
                                                                                        steps_of(c, 2) * fast.step_latency_s))
                        ok_flat = 0;
                }
                /* one rank: nothing moves */
                {
                    const dpprof_fabric f1 = {1, 1, &lat, NULL};
                    if (dpprof_coll_seconds(c, S, &f1, &t) != DPPROF_OK || t != 0.0) ok_one = 0;
                }
            }
    CHECK(ok_bus, "NCCL's bus bandwidth: (S / t) x 2(n-1)/n (all-reduce), x (n-1)/n (reduce-scatter, all-gather) is the link's 100 GB/s at %d cases (n 2 to 64, S 1 B to 32 GB)", cases);
    CHECK(ok_lat, "with 5 us a ring step: t = S x factor / 40 GB/s + 2(n-1) or (n-1) steps x 5 us, at the same %d cases", cases);
    CHECK(ok_nodes, "over 2 nodes and over a node a GPU: the network (12.5 GB/s) bounds the ring, 2(K-1) or K-1 of its steps at its 20 us");
    CHECK(ok_flat, "a network faster than the link within a node: the link bounds the ring");
    CHECK(ok_one, "one rank: every collective of every size takes 0 s");
    {
        dpprof_fabric f = {8, 1, nv4, NULL};
        const double S = 2e9; /* a 1B-parameter model's fp16 gradients: 8 H100s on NVLink 4 */
        CHECK(nv4 && dpprof_coll_seconds(DPPROF_COLL_ALL_REDUCE, S, &f, &t) == DPPROF_OK && near(t, S * 2 * 7 / 8 / 450e9 + 14 * 3.4e-6),
              "all-reduce of 2 GB on 8 GPUs over NVLink 4: %.3f ms = 2 GB x 14/8 / 450 GB/s + 14 x 3.4 us", 1e3 * t);
        f.ranks = 16, f.nodes = 2, f.net = ndr;
        CHECK(ndr && dpprof_coll_seconds(DPPROF_COLL_ALL_REDUCE, S, &f, &t) == DPPROF_OK && near(t, S * 2 * 15 / 16 / 50e9 + 28 * 3.4e-6 + 2 * 9.6e-6),
              "...on 16 GPUs over 2 nodes with InfiniBand NDR: %.2f ms, bounded by the network's 50 GB/s (28 steps x 3.4 us, 2 x 9.6 us)", 1e3 * t);
    }
    { /* the table: the specifications' peaks each way, every name found in any case, the kinds */
        const dpprof_link *l = dpprof_links(&count);
        int ok = count == 6;
        for (i = 0; i < count; i++) ok = ok && dpprof_link_find(l[i].name) == &l[i] && l[i].bytes_per_s > 0 && l[i].step_latency_s > 0 && l[i].source[0];
        ok = ok && nv4 && nv4->bytes_per_s == 450e9 && !nv4->network && dpprof_link_find("nvlink3")->bytes_per_s == 300e9 && dpprof_link_find("PCIE5")->bytes_per_s == 64e9 &&
             dpprof_link_find("pcie4")->bytes_per_s == 32e9 && ndr && ndr->bytes_per_s == 50e9 && ndr->network && dpprof_link_find("hdr")->bytes_per_s == 25e9;
        CHECK(ok && !dpprof_link_find("nvlink5") && !dpprof_link_find("") && !dpprof_link_find(NULL),
              "the links: %d, NVLink 4 450 GB/s and 3 300 GB/s, PCIe 5 64 GB/s and 4 32 GB/s each way, NDR 50 GB/s, HDR 25 GB/s; names in any case", count);
    }
    { /* what is not a fabric */
        const dpprof_fabric bad[] = {{6, 4, nv4, ndr}, {4, 2, nv4, NULL}, {4, 1, NULL, NULL}, {4, 2, ndr, ndr}, {4, 2, nv4, nv4}, {0, 1, nv4, NULL}};
        int ok = 1;
        for (i = 0; i < (int)(sizeof bad / sizeof bad[0]); i++) ok = ok && dpprof_coll_seconds(DPPROF_COLL_ALL_GATHER, 1e6, &bad[i], &t) == DPPROF_ERR_INVALID && t != t;
        CHECK(ok, "refused (invalid): 6 GPUs over 4 nodes, 2 nodes without a network, GPUs a node without a link, a network within a node, a link between nodes, no GPU (%s)",
              dpprof_last_error());
    }
}

/* a dry step's communication time: its per-rank bytes (which carry the ring's factor) over the bus bandwidth, and
   each call's ring steps at the link's latency; the calls a step makes: a trainable tensor's collective once a step
   (zero 0, 1; zero 1's all-gather, zero 2's), a reduce-scatter a physical batch (zero 2, 3), zero 3's gathers of
   every tensor once a pass */
static void check_step_comm(dpprof_session *s, const dpprof_dist_info *d, const char *preset, int N, int z, int64_t k, int64_t passes, int tied) {
    const dpprof_link *l = dpprof_link_find("nvlink4");
    const dpprof_fabric f = {N, 1, l, NULL};
    dpprof_comm c;
    int64_t T = 0, A = dpprof_session_param_count(s), ar, rs, ag;
    int i;
    double bytes, calls_steps;
    for (i = 0; i < A; i++) T += dpprof_session_param(s, i)->trainable != 0;
    ar = z == 0 ? T : 0;
    rs = z == 1 ? T : (z >= 2 ? k * T : 0);
    ag = z == 0 ? 0 : (z <= 2 ? T : k * (1 + passes) * (A + tied)); /* tied: the shared matrix for the head's use too */
    CHECK(d->all_reduce_calls == ar && d->reduce_scatter_calls == rs && d->all_gather_calls == ag, "%s N=%d zero %d: %lld all-reduces (%lld), %lld reduce-scatters (%lld), %lld all-gathers (%lld) a step",
          preset, N, z, (long long)d->all_reduce_calls, (long long)ar, (long long)d->reduce_scatter_calls, (long long)rs, (long long)d->all_gather_calls, (long long)ag);
    bytes = (double)(d->all_reduce_bytes + d->reduce_scatter_bytes + d->all_gather_bytes);
    calls_steps = (double)(2 * d->all_reduce_calls + d->reduce_scatter_calls + d->all_gather_calls) * (N - 1);
    CHECK(dpprof_session_comm_time(s, &f, &c) == DPPROF_OK && near(c.bandwidth_s, bytes / 450e9) && near(c.latency_s, calls_steps * 3.4e-6) &&
              near(c.seconds, c.bandwidth_s + c.latency_s) && near(c.seconds, c.seconds_by_kind[0] + c.seconds_by_kind[1] + c.seconds_by_kind[2]),
          "%s N=%d zero %d on NVLink 4: %.3f ms a step = %.0f bytes a rank / 450 GB/s + %.0f ring steps x 3.4 us", preset, N, z, 1e3 * c.seconds, bytes, calls_steps);
}

/* the shards, the bytes between steps and the collective bytes of every stage, against the table */
/* strict: each stage lowers the peak (not so in general: at zero 2 the head's full-size gradient still lives
   during its backward, so where the head is most of what trains (lora) the gradient shard beside it can raise
   the peak over zero 1's; at zero 3 two gathered units can outweigh a small model's shards) */
static int zero_head; /* lora: the cases in flight train the head (--train-head) */
static int zero_tied; /* the cases in flight tie the head to the embedding: zero 3 gathers the matrix for each use */
static int zero_bf16; /* the cases in flight are --dtype bf16: fp32 masters, bf16 working copies */

/* bf16, from the table: the bytes the masters do not hold (a tensor stored in bf16 alone has none) and the working
   copies' bytes, whole (zero 0 to 2) or a rank's shard (zero 3); zero 3's gathered bytes of every tensor once, a
   working copy in bf16 */
static int64_t bf16_extra(dpprof_session *s, int z, int N) {
    int64_t b = 0;
    int i;
    for (i = 0; i < dpprof_session_param_count(s); i++) {
        const dpprof_param *p = dpprof_session_param(s, i);
        const int64_t n = z == 3 ? (p->w.n + N - 1) / N : p->w.n;
        if (p->bf16_only) b -= n * (int64_t)sizeof(dpprof_real);
        if (p->wl.n) b += n * (int64_t)sizeof(dpprof_bf16);
    }
    return b;
}
static int64_t gathered_bytes(dpprof_session *s, int N) {
    int64_t b = 0;
    int i;
    for (i = 0; i < dpprof_session_param_count(s); i++) {
        const dpprof_param *p = dpprof_session_param(s, i);
        b += (p->w.n + N - 1) / N * (p->wl.n ? (int64_t)sizeof(dpprof_bf16) : (int64_t)sizeof(dpprof_real));
    }
    return b;
}

static void check_stages(const char *preset, int seq, int batch, int phys, int N, int lora, dpprof_algo algo, int strict) {
    int64_t peak[4] = {0, 0, 0, 0};
    int z;
    for (z = 0; z <= 3; z++) {
        dpprof_config c = dry(preset, seq, batch, phys, N, z, algo);
        dpprof_session *s;
        dpprof_dist_info d;
        int64_t P, Pall, S, Sall, R = (int64_t)sizeof(dpprof_real), k = batch / N / phys, passes;
        const dpprof_prof *p;
        c.lora_rank = lora;
        if (lora && zero_head) c.train_head = DPPROF_SWITCH_ON;
        if (zero_tied) c.tie_embeddings = DPPROF_SWITCH_ON;
        if (zero_bf16) c.dtype = DPPROF_DTYPE_BF16;
        s = run(&c);
        CHECK(s != NULL, "%s N=%d zero %d %s lora %d: runs", preset, N, z, dpprof_algo_name(algo), lora);
        if (!s) continue;
        p = dpprof_session_prof(s);
        dpprof_session_dist(s, &d);
        P = dpprof_session_param_elems(s, 1);
        Pall = dpprof_session_param_elems(s, 0);
        S = shard_of(s, N, 1);
        Sall = shard_of(s, N, 0);
        passes = algo == DPPROF_ALGO_GHOST || algo == DPPROF_ALGO_FLASH ? 2 : 1;
        peak[z] = p->peak_bytes;
        CHECK(d.shard_elements == S && d.padding_elements == N * S - P && d.param_shard_elements == Sall && S >= (P + N - 1) / N,
              "%s N=%d zero %d: shard %lld = sum ceil(n_t/N) (ceil(P/N) = %lld), padding %lld", preset, N, z, (long long)d.shard_elements, (long long)((P + N - 1) / N), (long long)d.padding_elements);
        {
            const int64_t want = persistent(z, Pall, P, S, Sall, N) + (zero_bf16 ? bf16_extra(s, z, N) : 0);
            CHECK(p->live_bytes == want, "%s N=%d zero %d %s%s: %lld bytes held between steps, %lld expected", preset, N, z, dpprof_algo_name(algo), zero_bf16 ? " bf16" : "",
                  (long long)p->live_bytes, (long long)want);
        }
        CHECK(adds_up(p), "%s N=%d zero %d %s: the peak's split by category and by module adds up to %lld", preset, N, z, dpprof_algo_name(algo), (long long)p->peak_bytes);
        {
            const int64_t ar = z == 0 ? 2 * (N - 1) * S * R : 0;
            const int64_t rs = z == 1 ? (N - 1) * S * R : (z >= 2 ? k * (N - 1) * S * R : 0);
            /* tied: the shared matrix gathered for the head's use too */
            const int64_t tied = zero_tied ? (int64_t)(dpprof_session_param(s, 0)->w.n + N - 1) / N * (zero_bf16 ? 2 : R) : 0;
            /* zero 1, 2: the fp32 masters (bf16 too); zero 3: every tensor once a pass, a working copy in bf16 */
            const int64_t ag = z == 0 ? 0 : (z <= 2 ? (N - 1) * S * R : k * (1 + passes) * (N - 1) * (gathered_bytes(s, N) + tied));
            CHECK(d.all_reduce_bytes == ar && d.reduce_scatter_bytes == rs && d.all_gather_bytes == ag,
                  "%s N=%d zero %d %s: all-reduce %lld (%lld), reduce-scatter %lld (%lld), all-gather %lld (%lld) bytes a step", preset, N, z, dpprof_algo_name(algo),
                  (long long)d.all_reduce_bytes, (long long)ar, (long long)d.reduce_scatter_bytes, (long long)rs, (long long)d.all_gather_bytes, (long long)ag);
            check_step_comm(s, &d, preset, N, z, k, passes, zero_tied);
        }
        if (z == 3) {
            int64_t big = 0;
            int i;
            for (i = 0; i < dpprof_session_param_count(s); i++) {
                const int64_t b = (dpprof_session_param(s, i)->w.n + N - 1) / N * N * (dpprof_session_param(s, i)->wl.n ? 2 : R);
                if (b > big) big = b;
            }
            CHECK(d.gathered_max_bytes >= big && d.gathered_max_bytes < p->peak_bytes, "%s N=%d zero 3: at most %lld gathered bytes at once (the largest tensor gathered: %lld)", preset, N,
                  (long long)d.gathered_max_bytes, (long long)big);
        }
        dpprof_session_destroy(s);
    }
    if (strict < 0) return;
    if (strict)
        CHECK(peak[0] > peak[1] && peak[1] > peak[2] && peak[2] > peak[3], "%s N=%d %s lora %d: each stage lowers the peak (%lld > %lld > %lld > %lld)", preset, N, dpprof_algo_name(algo), lora,
              (long long)peak[0], (long long)peak[1], (long long)peak[2], (long long)peak[3]);
    else
        CHECK(peak[0] > peak[1] && peak[0] > peak[3], "%s N=%d %s lora %d: zero 1 and zero 3 lower zero 0's peak (%lld > %lld, %lld)", preset, N, dpprof_algo_name(algo), lora,
              (long long)peak[0], (long long)peak[1], (long long)peak[3]);
}

/* a rank's activations and dp state are the single-rank run's at batch B/N; zero 0 is that run exactly. (auto
   chooses its norm methods by exact dry runs of the rank's own peak: from zero 2 on, where the gradients no
   longer all persist, it may choose otherwise than the single-rank run, so it is held to zero 0 and 1) */
static void check_rank_batch(const char *preset, int seq, int N, dpprof_algo algo) {
    dpprof_config c1 = dry(preset, seq, 2 * 2, 2, 1, 0, algo);
    dpprof_session *one = run(&c1);
    int z, k;
    const int cats[] = {DPPROF_CAT_ACTIVATIONS, DPPROF_CAT_ACTIVATION_HOOKS, DPPROF_CAT_PER_SAMPLE_GRADIENTS, DPPROF_CAT_NORM_SAMPLES, DPPROF_CAT_TEMP_MATRICES, DPPROF_CAT_DATA};
    if (!one) {
        CHECK(0, "%s: the single-rank run", preset);
        return;
    }
    for (z = 0; z <= 3; z++) {
        dpprof_config c = dry(preset, seq, 2 * 2 * N, 2, N, z, algo);
        dpprof_session *s = run(&c);
        int same = s != NULL;
        if (algo == DPPROF_ALGO_AUTO && z >= 2) {
            CHECK(same, "%s auto N=%d zero %d: runs", preset, N, z);
            dpprof_session_destroy(s);
            continue;
        }
        for (k = 0; s && k < (int)(sizeof cats / sizeof cats[0]); k++) same &= dpprof_session_prof(s)->max_by_cat[cats[k]] == dpprof_session_prof(one)->max_by_cat[cats[k]];
        CHECK(same, "%s %s N=%d zero %d: activations, hooks, per-sample gradients, norms, temporaries and data are the single-rank run's at B/N", preset, dpprof_algo_name(algo), N, z);
        if (s && z == 0)
            CHECK(dpprof_session_prof(s)->peak_bytes == dpprof_session_prof(one)->peak_bytes &&
                      !memcmp(dpprof_session_prof(s)->peak_by, dpprof_session_prof(one)->peak_by, sizeof dpprof_session_prof(s)->peak_by),
                  "%s %s N=%d zero 0: the peak and its split are the single-rank run's at B/N (%lld bytes): the all-reduce is in place", preset, dpprof_algo_name(algo), N,
                  (long long)dpprof_session_prof(s)->peak_bytes);
        dpprof_session_destroy(s);
    }
    dpprof_session_destroy(one);
}

static void check_llama(void) {
    const clock_t t0 = clock();
    dpprof_config c = dry("llama-3.1-8b", 512, 64, 2, 8, 3, DPPROF_ALGO_FLASH_BK);
    dpprof_session *s = run(&c);
    const double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    dpprof_dist_info d;
    if (!s) {
        CHECK(0, "llama-3.1-8b --ranks 8 --zero 3 runs");
        return;
    }
    dpprof_session_dist(s, &d);
    CHECK(d.shard_elements == (dpprof_session_param_elems(s, 1) + 7) / 8 && d.padding_elements == 0 && d.param_shard_elements == d.shard_elements,
          "llama-3.1-8b --ranks 8 --zero 3: parameters, gradients and each adam moment are ceil(P/8) = %lld elements a rank, no padding", (long long)d.shard_elements);
    CHECK(secs < 1.0, "llama-3.1-8b --ranks 8 --zero 3 (flash_bk, T = 512): one dry step in %.2f s of cpu time (< 1 s)", secs);
    dpprof_session_destroy(s);
    /* 80 GiB: plain data parallel does not fit, full sharding does */
    c.memory_limit = (int64_t)80 << 30;
    c.zero = 0;
    {
        dpprof_session *o = NULL;
        int rc = dpprof_session_create(&c, &o);
        if (rc == DPPROF_OK) rc = dpprof_session_run(o);
        CHECK(rc == DPPROF_ERR_OOM, "llama-3.1-8b --ranks 8 --zero 0 within 80 GiB: out of memory (%s)", dpprof_result_str(rc));
        dpprof_session_destroy(o);
    }
    c.zero = 3;
    s = run(&c);
    CHECK(s != NULL, "llama-3.1-8b --ranks 8 --zero 3 within 80 GiB: fits");
    dpprof_session_destroy(s);
}

static void check_refusals(void) {
    dpprof_config c = dry("tiny", 16, 8, 0, 2, 0, DPPROF_ALGO_VANILLA), out;
    c.backend = DPPROF_BACKEND_CPU;
    CHECK(dpprof_config_resolve(&c, &out, NULL) == DPPROF_ERR_UNSUPPORTED && strstr(dpprof_last_error(), "has no MPI"), "cpu --ranks 2 in a build without MPI: refused (%s)", dpprof_last_error());
    c.backend = DPPROF_BACKEND_CUDA;
    CHECK(dpprof_config_resolve(&c, &out, NULL) == DPPROF_ERR_UNSUPPORTED, "cuda --ranks 2: refused");
    c.backend = DPPROF_BACKEND_DRY;
    CHECK(dpprof_config_resolve(&c, &out, NULL) == DPPROF_OK && out.physical_batch == 4, "dry --ranks 2 --batch 8: the physical batch defaults to B/N = 4");
    c.ranks = 3;
    CHECK(dpprof_config_resolve(&c, &out, NULL) == DPPROF_ERR_INVALID && strstr(dpprof_last_error(), "ranks = 3") && strstr(dpprof_last_error(), "batch = 8"), "--ranks 3 --batch 8: refused (%s)", dpprof_last_error());
    c.ranks = 2;
    c.physical_batch = 8;
    CHECK(dpprof_config_resolve(&c, &out, NULL) == DPPROF_ERR_INVALID && strstr(dpprof_last_error(), "config.physical_batch = 8"), "--ranks 2 --batch 8 --physical-batch 8: refused (%s)", dpprof_last_error());
    c.physical_batch = 0;
    c.zero = 4;
    CHECK(dpprof_config_resolve(&c, &out, NULL) == DPPROF_ERR_INVALID, "--zero 4: refused");
}

/* out of memory at every stage, while the model is built and in the middle of a step: an oom result that
   reports and is destroyed cleanly (the sanitizers watch) */
static void check_oom(void) {
    int z, k;
    for (z = 0; z <= 3; z++)
        for (k = 0; k < 2; k++) {
            dpprof_config c = dry("tiny", 16, 8, 2, 2, z, DPPROF_ALGO_GHOST);
            dpprof_session *s = run(&c);
            int64_t limits[2] = {(int64_t)1 << 20, 0};
            int rc;
            limits[1] = s ? dpprof_session_prof(s)->peak_bytes - 1 : 1; /* a byte short of the step's peak */
            dpprof_session_destroy(s);
            s = NULL;
            c.memory_limit = limits[k];
            rc = dpprof_session_create(&c, &s);
            if (rc == DPPROF_OK) rc = dpprof_session_run(s);
            CHECK(rc == DPPROF_ERR_OOM && s && dpprof_session_prof(s)->peak_bytes <= limits[k], "zero %d, N=2 within %lld bytes: oom (%s), the session still reports", z, (long long)limits[k],
                  dpprof_result_str(rc));
            dpprof_session_destroy(s);
        }
}

/* cpu, one rank: every stage is plain training, bit for bit, for every algorithm */
static void check_cpu_one_rank(void) {
    int a, z, i;
    for (a = 0; a < N_ALGOS; a++) {
        dpprof_session *ref = NULL;
        dpprof_config c = dry("tiny", 8, 4, 2, 0, 0, algos[a]);
        c.steps = 2;
        c.backend = DPPROF_BACKEND_CPU;
        c.seed = 3;
        for (z = 0; z <= 3; z++) {
            dpprof_session *s;
            int same = 1;
            c.ranks = z ? 1 : 0;
            c.zero = z;
            if (dpprof_session_create(&c, &s) != DPPROF_OK || dpprof_session_run(s) != DPPROF_OK) {
                CHECK(0, "cpu %s --ranks 1 --zero %d runs: %s", dpprof_algo_name(algos[a]), z, dpprof_last_error());
                dpprof_session_destroy(s);
                continue;
            }
            if (!z) {
                ref = s;
                continue;
            }
            same = ref && dpprof_session_prof(s)->peak_bytes == dpprof_session_prof(ref)->peak_bytes &&
                   !memcmp(dpprof_session_prof(s)->peak_by, dpprof_session_prof(ref)->peak_by, sizeof dpprof_session_prof(s)->peak_by);
            for (i = 0; same && i < 2; i++) same = dpprof_session_step_loss(s, i) == dpprof_session_step_loss(ref, i);
            for (i = 0; same && i < dpprof_session_param_count(s); i++) {
                const int64_t n = dpprof_session_param(s, i)->w.n;
                dpprof_real *x = (dpprof_real *)malloc(sizeof(dpprof_real) * (size_t)n), *y = (dpprof_real *)malloc(sizeof(dpprof_real) * (size_t)n);
                const char which[] = "wmv";
                int k;
                for (k = 0; same && k < 3 && x && y; k++) {
                    if (!dpprof_session_param(s, i)->trainable && k) break;
                    same = dpprof_session_param_read(s, i, which[k], x) == DPPROF_OK && dpprof_session_param_read(ref, i, which[k], y) == DPPROF_OK &&
                           !memcmp(x, y, sizeof(dpprof_real) * (size_t)n);
                }
                same &= x && y;
                free(x);
                free(y);
            }
            CHECK(same, "cpu %s --ranks 1 --zero %d: the bytes, the losses, the weights and adam's moments are --zero 0's bit for bit", dpprof_algo_name(algos[a]), z);
            dpprof_session_destroy(s);
        }
        dpprof_session_destroy(ref);
    }
}

/* step `step`'s poisson draw of seed `seed` (rate batch / D), counted here from the generator: the draw's size, and
   rank r of N's share (the ids i mod N = r) into share[r] */
static int poisson_draw(uint64_t seed, int step, int batch, long long D, int N, int *share) {
    const dpprof_noise_key key = dpprof_noise_seed(seed);
    long long j;
    int n = 0, r;
    for (r = 0; r < N; r++) share[r] = 0;
    for (j = 0; j < D; j++) {
        dpprof_u32x4 ctr, u;
        ctr.v[0] = (uint32_t)j;
        ctr.v[1] = (uint32_t)((uint64_t)j >> 32);
        ctr.v[2] = (uint32_t)step;
        ctr.v[3] = 3u << 8; /* the poisson stream */
        u = dpprof_philox4x32_10(ctr, key.w[0], key.w[1]);
        if (((double)u.v[0] + 0.5) / 4294967296.0 < (double)batch / (double)D) n++, share[j % N]++;
    }
    return n;
}

/* the result's privacy.batch_sizes is `sizes` */
static int has_sizes(const dpprof_session *s, const char *sizes) {
    const size_t cap = (size_t)1 << 22;
    char *buf = (char *)malloc(cap), want[96];
    FILE *f = tmpfile();
    size_t n = 0;
    int found;
    if (f && buf && dpprof_session_write_json(s, f, "poisson", "ok", NULL) == DPPROF_OK) {
        rewind(f);
        n = fread(buf, 1, cap - 1, f);
    }
    if (f) fclose(f);
    if (!buf) return 0;
    buf[n] = 0;
    snprintf(want, sizeof want, "\"batch_sizes\": %s", sizes);
    found = strstr(buf, want) != NULL;
    free(buf);
    return found;
}

/* poisson sampling over ranks on the dry backend: every algorithm and stage runs; the draws (privacy.batch_sizes,
   counted here from the generator) and the epsilon are the single rank's, at q = B / D whatever N; from zero 2 on
   every rank runs the physical batches of the largest share (the reduce-scatters and gathers of the last step); a
   step that draws nothing runs, with no physical batch and no collective in it */
static void check_poisson(void) {
    enum {
        N = 4,
        B = 8,
        D = 40,
        STEPS = 3
    };
    int a, z, step, share[N], last = 0, most = 0, r;
    char sizes[64] = "";
    dpprof_privacy p1, pn;
    dpprof_config c1 = dry("tiny", 16, B, 2, 1, 0, DPPROF_ALGO_GHOST_BK), out;
    dpprof_session *one;
    c1.poisson = 1;
    c1.dataset_size = D;
    c1.steps = STEPS;
    c1.seed = 5;
    one = run(&c1);
    {
        dpprof_config c = c1;
        c.ranks = N;
        c.physical_batch = 0;
        CHECK(dpprof_config_resolve(&c, &out, NULL) == DPPROF_OK && out.physical_batch == B / N, "dry --ranks %d --poisson --dataset-size %d: accepted, the physical batch B/N = %d", N, D, B / N);
    }
    for (step = 0; step < STEPS; step++) {
        last = poisson_draw(c1.seed, step, B, D, N, share);
        snprintf(sizes + strlen(sizes), sizeof sizes - strlen(sizes), "%s%d%s", step ? ", " : "[", last, step == STEPS - 1 ? "]" : "");
    }
    for (r = 0; r < N; r++)
        if (share[r] > most) most = share[r];
    for (a = 0; a < N_ALGOS; a++)
        for (z = 0; z <= 3; z++) {
            dpprof_config c = c1;
            dpprof_session *s;
            dpprof_dist_info d;
            c.algo = algos[a];
            c.sigma = algos[a] == DPPROF_ALGO_VANILLA ? 0 : 1.0;
            c.ranks = N;
            c.zero = z;
            c.physical_batch = 1;
            c1.algo = c.algo;
            c1.sigma = c.sigma;
            s = run(&c);
            CHECK(s != NULL, "poisson %s N=%d zero %d: runs", dpprof_algo_name(algos[a]), N, z);
            if (!s) continue;
            {
                dpprof_session *o = run(&c1);
                const int ok = o && dpprof_session_privacy(s, &pn) == DPPROF_OK && dpprof_session_privacy(o, &p1) == DPPROF_OK && pn.poisson && pn.q == (double)B / D &&
                               (algos[a] == DPPROF_ALGO_VANILLA ? !pn.dp : (pn.dp && pn.epsilon > 0 && pn.epsilon == p1.epsilon));
                CHECK(ok, "poisson %s N=%d zero %d: the privacy is the single rank's, q = B/D = %g (epsilon %g)", dpprof_algo_name(algos[a]), N, z, pn.q, pn.epsilon);
                dpprof_session_destroy(o);
            }
            dpprof_session_dist(s, &d);
            if (z >= 2) /* the last step: the largest share's physical batches of 1, each tensor reduce-scattered in each */
                check_step_comm(s, &d, "tiny poisson", N, z, most, algos[a] == DPPROF_ALGO_GHOST || algos[a] == DPPROF_ALGO_FLASH ? 2 : 1, 0);
            if (algos[a] == DPPROF_ALGO_GHOST_BK && z == 3) CHECK(has_sizes(s, sizes) && has_sizes(one, sizes), "poisson N=%d: privacy.batch_sizes %s, the single rank's draws", N, sizes);
            dpprof_session_destroy(s);
        }
    dpprof_session_destroy(one);
    { /* a step that draws nothing: no physical batch on any rank, no collective in it, a loss of nan, no wait */
        uint64_t seed;
        int n0 = 0;
        for (seed = 1; seed < 2000 && !((n0 = poisson_draw(seed, 0, 4, 400, N, share)) > 0 && poisson_draw(seed, 1, 4, 400, N, share) == 0); seed++) {}
        snprintf(sizes, sizeof sizes, "[%d, 0]", n0);
        for (z = 2; z <= 3; z++) {
            dpprof_config c = dry("tiny", 16, 4, 0, N, z, DPPROF_ALGO_FLASH_BK);
            dpprof_session *s;
            dpprof_dist_info d;
            c.poisson = 1;
            c.dataset_size = 400;
            c.steps = 2;
            c.seed = seed;
            s = run(&c);
            CHECK(s && has_sizes(s, sizes), "poisson seed %llu zero %d: the draws are %s (step 1's empty); it runs", (unsigned long long)seed, z, sizes);
            if (s) {
                dpprof_session_dist(s, &d);
                check_step_comm(s, &d, "tiny poisson, an empty draw", N, z, 0, 1, 0);
            }
            dpprof_session_destroy(s);
        }
    }
}

int main(void) {
    int a;
    check_comm_model();
    check_refusals();
    check_oom();
    check_llama();
    /* padding: the tiny model's tensors do not all split in 3 or 8 */
    for (a = 0; a < N_ALGOS; a++) check_stages("tiny", 16, 12, 2, 3, 0, algos[a], 0);
    check_stages("tiny", 16, 16, 1, 8, 0, DPPROF_ALGO_FLASH_BK, 0);
    zero_head = 1; /* the head trains: the stages shard its gradient and moments */
    check_stages("tiny", 16, 12, 2, 3, 4, DPPROF_ALGO_GHOST_BK, 0);
    zero_head = 0; /* the head frozen (lora's default): the adapters' few states are all a stage shards; no order of the peaks */
    check_stages("tiny", 16, 12, 2, 3, 4, DPPROF_ALGO_GHOST_BK, -1);
    zero_tied = 1; /* the tied head: its matrix's gradient from both uses, and its gathers for both */
    for (a = 0; a < N_ALGOS; a++) check_stages("tiny", 16, 12, 2, 3, 0, algos[a], 0);
    check_stages("llama-3.2-1b", 128, 16, 1, 8, 0, DPPROF_ALGO_FLASH_BK, 1);
    zero_tied = 0;
    zero_bf16 = 1; /* bf16: the masters, gradients and moments sharded as in fp32, the working copies with them */
    for (a = 0; a < N_ALGOS; a++) check_stages("tiny", 16, 12, 2, 3, 0, algos[a], 0);
    check_stages("tiny", 16, 12, 2, 3, 4, DPPROF_ALGO_FLASH_BK, -1); /* lora: the frozen base in bf16 alone */
    zero_tied = 1;
    check_stages("tiny", 16, 12, 2, 3, 0, DPPROF_ALGO_GHOST, 0);
    check_stages("llama-3.2-1b", 128, 16, 1, 8, 0, DPPROF_ALGO_FLASH_BK, 1);
    zero_tied = zero_bf16 = 0;
    check_stages("llama-3.1-8b", 256, 16, 1, 8, 0, DPPROF_ALGO_FLASH_BK, 1);
    check_stages("llama-3.1-8b", 256, 16, 1, 8, 0, DPPROF_ALGO_VANILLA, 1);
    check_stages("llama-3.1-8b", 256, 16, 1, 8, 16, DPPROF_ALGO_VANILLA, 0);
    for (a = 0; a < N_ALGOS; a++) check_rank_batch("tiny", 16, 4, algos[a]);
    check_rank_batch("llama-3.1-8b", 256, 8, DPPROF_ALGO_FLASH_BK);
    check_poisson();
    check_cpu_one_rank();
    return test_finish();
}
