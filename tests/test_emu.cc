// tests/test_emu.cc - the emulator's own checks (tests/cuemu.h): each bug it is there to catch is
// planted in a small kernel and seen caught, and the same kernel without the bug is seen to pass
// (no false alarm). test_cuemu then trusts the emulator with dpprof's kernels.
//   schedules   forward, reverse and random thread and block orders are what they say, random is
//               reproducible from its seed, a bad CUEMU_SCHEDULE is an error
//   races       a read of a neighbour's shared value without a barrier (read after write: forward
//               hides it, reverse catches it), an overwrite before the neighbour read the old value
//               (write after read: reverse hides it, forward catches it), a block reading what
//               another block writes (reverse and random catch it)
//   poison      shared memory (static and dynamic) starts every block as 0xff bytes: a tile only
//               partly loaded, or loaded by block 0 alone, reads garbage
//   faults      a write past an allocation and threads waiting at different barriers stop the
//               program with a message naming the launch
//   mma         the tensor-core mma computes A B + C in the ptx isa's fragment layout, and needs the
//               whole warp
//   ldmatrix    x4 and x4.trans hand each lane the elements the ptx isa says, from the rows the lanes
//               point at; a misaligned row stops the program
//   cp.async    a copy lands at the wait_group that covers its group, not before; src_bytes 0 fills
//               zeros; a thread that exits with a copy in flight stops the program
//   wgmma       two warpgroups' m64n128k16 products from descriptors of the interleaved layout give each
//               lane the documented accumulators at the wait_group; an operand overwritten before that
//               wait or a cp.async into one started before it, and a warp that exits with one in flight,
//               stop the program
// build: g++ -std=c++17 -Itests tests/test_emu.cc (see the Makefile); runs in a second or two.
#include "cuemu.h"
#include "test.h"

#include <string>
#include <sys/wait.h>
#include <vector>

#define NT 64 // threads of the race kernels' blocks

// ---- kernels ----------------------------------------------------------------------------------------
// the order the threads (blocks) ran in: out[k] = the k-th thread (block) to reach the atomic
__global__ void k_thread_order(int *out, int *count) { out[atomicAdd(count, 1)] = (int)threadIdx.x; }
__global__ void k_block_order(int *out, int *count) {
    if (threadIdx.x == 0) out[atomicAdd(count, 1)] = (int)(blockIdx.x + gridDim.x * blockIdx.y);
}

// read after write: thread t reads s[t-1], which thread t-1 writes; out[t] = t is intended
__global__ void k_raw(int *out, int barrier) {
    __shared__ int s[NT];
    const int t = (int)threadIdx.x;
    s[t] = t + 1;
    if (barrier) __syncthreads();
    out[t] = t ? s[t - 1] : 0;
}

// write after read: two tiles through one shared array; thread t reads s[t-1] of each tile, and
// without the second barrier thread t-1 may already have stored the next tile there
__global__ void k_war(int *out, const int *in, int barrier) {
    __shared__ int s[NT];
    const int t = (int)threadIdx.x;
    int acc = 0;
    for (int it = 0; it < 2; it++) {
        s[t] = in[it * NT + t];
        __syncthreads();
        if (t) acc += s[t - 1];
        if (barrier) __syncthreads();
    }
    out[t] = acc;
}

// a race between warps across a warp collective: each thread reads the other warp's half of a tile,
// sums with its neighbour lane (a shuffle), then stores the next tile; without the barrier before the
// store, a warp that runs ahead overwrites what the other warp has yet to read
__global__ void k_cross_warp(int *out, int barrier) {
    __shared__ int s[NT];
    const int t = (int)threadIdx.x;
    s[t] = t;
    __syncthreads();
    int v = s[NT - 1 - t];
    v += __shfl_xor_sync(0xffffffffu, v, 1);
    if (barrier) __syncthreads();
    s[t] = 1000 + t;
    __syncthreads();
    out[t] = v + s[t] - (1000 + t);
}

// one block's output depends on another's: out[b] = out[b-1] + 1 (only right if blocks ran in order)
__global__ void k_chain(int *out) {
    const int b = (int)blockIdx.x;
    out[b] = (b ? out[b - 1] : 0) + 1;
}

// a tile loaded by the first `load` threads of the block, or by block 0 alone (only0), then read by all
__global__ void k_tile(int *out, int load, int only0) {
    __shared__ int s[NT];
    const int t = (int)threadIdx.x;
    if (t < load && (!only0 || blockIdx.x == 0)) s[t] = 1000 + t;
    __syncthreads();
    out[blockIdx.x * NT + t] = s[t];
}

// dynamic shared memory as each block finds it (first 4 ints), then written with the block's index
__global__ void k_dyn(unsigned *out) {
    unsigned *s = (unsigned *)cuemu_dynamic_smem();
    const int t = (int)threadIdx.x;
    if (t < 4) out[blockIdx.x * 4 + t] = s[t];
    __syncthreads();
    s[t] = blockIdx.x;
}

// d = 2 (A B) through two tensor-core mma calls; A (16x16), B (16x8) given as bf16 bits, row major; the
// fragments are gathered by the ptx isa's formulas (g = lane / 4, t = lane % 4), D scattered back
__global__ void k_mma(float *d, const unsigned short *A, const unsigned short *B) {
    const unsigned lane = threadIdx.x, g = lane >> 2, t = lane & 3;
    uint32_t a[4], b[2];
    for (unsigned j = 0; j < 4; j++) {
        const unsigned row = g + ((j & 1) ? 8 : 0), col = 2 * t + ((j & 2) ? 8 : 0);
        a[j] = (uint32_t)A[row * 16 + col] | ((uint32_t)A[row * 16 + col + 1] << 16);
    }
    for (unsigned j = 0; j < 2; j++) {
        const unsigned k = 2 * t + (j ? 8 : 0);
        b[j] = (uint32_t)B[k * 8 + g] | ((uint32_t)B[(k + 1) * 8 + g] << 16);
    }
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    cuemu_mma_m16n8k16_bf16(acc, a, b);
    cuemu_mma_m16n8k16_bf16(acc, a, b);
    for (unsigned i = 0; i < 4; i++) d[(g + (i >= 2 ? 8 : 0)) * 8 + 2 * t + (i & 1)] = acc[i];
}
__global__ void k_mma_half_warp(float *d) {
    uint32_t a[4] = {0, 0, 0, 0}, b[2] = {0, 0};
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    if (threadIdx.x < 16) cuemu_mma_m16n8k16_bf16(acc, a, b);
    d[threadIdx.x] = acc[0];
}

// four 8x8 b16 matrices in static shared memory, element (j, r, c) = 1000 j + 10 r + c, rows 24 b16 apart
// (48 bytes: 16-byte aligned, not contiguous); lane l points at row l % 8 of matrix l / 8 (plus `skew` b16:
// 0, or 1 for a misaligned row); out[4 l + j] = lane l's register j
__global__ void k_ldmatrix(uint32_t *out, int trans, int skew) {
    __shared__ __align__(16) unsigned short tile[4 * 8 * 24 + 8];
    const unsigned l = threadIdx.x;
    for (unsigned i = l; i < 4 * 8 * 24; i += 32) {
        const unsigned j = i / 192, r = i % 192 / 24, c = i % 24;
        tile[i] = (unsigned short)(c < 8 ? 1000 * j + 10 * r + c : 0xffff);
    }
    __syncthreads();
    uint32_t r[4];
    cuemu_ldmatrix_x4(r, tile + (l / 8) * 192 + (l % 8) * 24 + skew, trans);
    for (unsigned j = 0; j < 4; j++) out[4 * l + j] = r[j];
}
// 32 threads, each copies 16 bytes (4 ints) of src into dynamic shared memory in two groups (lanes' first
// copy from src, second from src + 128 ints, or zeros when zfill), reading its slots back after each step:
// out[0 ..) before any wait, after wait_group 1 (the first group only), after wait_group 0
__global__ void k_cp_async(int *out, const int *src, int zfill, int forget) {
    int *s = (int *)cuemu_dynamic_smem();
    const int l = (int)threadIdx.x;
    cuemu_cp_async_16(s + 4 * l, src + 4 * l, 16);
    cuemu_cp_async_commit();
    cuemu_cp_async_16(s + 128 + 4 * l, src + 128 + 4 * l, zfill ? 0 : 16);
    cuemu_cp_async_commit();
    if (forget) return;
    for (int step = 0; step < 3; step++) {
        if (step == 1) cuemu_cp_async_wait(1);
        if (step == 2) cuemu_cp_async_wait(0);
        for (int k = 0; k < 4; k++) out[step * 256 + 4 * l + k] = s[4 * l + k], out[step * 256 + 128 + 4 * l + k] = s[128 + 4 * l + k];
    }
}

// wgmma: two warpgroups (256 threads); A (128 x 16) and B (128 x 16) as bf16 bits, row major, copied into
// dynamic shared memory in the interleaved core-matrix layout (element (m, k) at (m / 8) SBO + (k / 8) LBO +
// (m % 8) 16 + (k % 8) 2 bytes, LBO 128, SBO 256; B after A); warpgroup q multiplies A's rows 64 q .. by B^T
// twice (scale-d 0, then 1) into d: D (128 x 128) = 2 A B^T, scattered back by the ptx isa's formula. mode 1
// overwrites A between the wgmma and its wait; mode 2 exits without the wait; mode 3 starts a cp.async into A
// before the wait
__global__ void k_wgmma(float *D, const unsigned short *A, const unsigned short *B, int mode) {
    unsigned char *s = (unsigned char *)cuemu_dynamic_smem();
    const unsigned t = threadIdx.x, wq = t / 128, w = t / 32 % 4, l = t % 32;
    for (unsigned i = t; i < 2 * 128 * 16; i += 256) {
        const unsigned m = i / 16 % 128, k = i % 16, off = (m / 8) * 256 + (k / 8) * 128 + (m % 8) * 16 + (k % 8) * 2;
        const unsigned short v = i < 128 * 16 ? A[i] : B[i - 128 * 16];
        std::memcpy(s + (i < 128 * 16 ? 0 : 4096) + off, &v, 2);
    }
    __syncthreads();
    const uint64_t lay = ((uint64_t)(128 >> 4) << 16) | ((uint64_t)(256 >> 4) << 32);
    const uint64_t da = lay | ((cuemu_smem_u32(s + wq * 8 * 256) >> 4) & 0x3fff), db = lay | ((cuemu_smem_u32(s + 4096) >> 4) & 0x3fff);
    float d[64];
    for (int i = 0; i < 64; i++) d[i] = -1.f;
    cuemu_fence_proxy_async();
    cuemu_wgmma_fence();
    cuemu_wgmma_m64n128k16_bf16(d, da, db, 0);
    cuemu_wgmma_m64n128k16_bf16(d, da, db, 1);
    cuemu_wgmma_commit();
    if (mode == 2) return;
    __syncthreads();
    if (mode == 1 && t == 0) s[0] ^= 1;
    if (mode == 3 && t == 0) cuemu_cp_async_16(s, A, 16), cuemu_cp_async_commit();
    cuemu_wgmma_wait(0);
    if (mode == 3) cuemu_cp_async_wait(0);
    for (unsigned i = 0; i < 64; i++) D[(64 * wq + 16 * w + l / 4 + 8 * (i / 2 % 2)) * 128 + 8 * (i / 4) + 2 * (l % 4) + i % 2] = d[i];
}

__global__ void k_past_end(int *out, int n) { out[n + (int)threadIdx.x] = 1; }
__global__ void k_two_barriers(int *out) {
    if (threadIdx.x % 2) __syncthreads();
    else out[threadIdx.x] = __syncthreads_count(1);
}

// ---- helpers ----------------------------------------------------------------------------------------
static int *dev_ints(size_t n) { // device ints, as cudaMalloc leaves them (0xff bytes: -1)
    void *p = nullptr;
    if (cudaMalloc(&p, n * sizeof(int)) != cudaSuccess) {
        std::fprintf(stderr, "test_emu: cudaMalloc of %zu ints failed\n", n);
        std::exit(2);
    }
    return (int *)p;
}
static std::vector<int> host(const void *d, size_t n) {
    std::vector<int> h(n);
    cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost);
    return h;
}
static void upload(void *d, const std::vector<int> &h) { cudaMemcpy(d, h.data(), h.size() * sizeof(int), cudaMemcpyHostToDevice); }
static void zero(void *d, size_t n) { cudaMemset(d, 0, n * sizeof(int)); }

static bool is_permutation(const std::vector<int> &v) {
    std::vector<int> seen(v.size(), 0);
    for (int x : v) {
        if (x < 0 || (size_t)x >= v.size() || seen[(size_t)x]) return false;
        seen[(size_t)x] = 1;
    }
    return true;
}
static std::vector<int> iota(size_t n, bool reversed) {
    std::vector<int> v(n);
    for (size_t i = 0; i < n; i++) v[i] = (int)(reversed ? n - 1 - i : i);
    return v;
}

// the order a launch ran its threads (blocks = 0) or blocks (blocks = grid size) in, under schedule s
static std::vector<int> order(const char *s, unsigned blocks) {
    cuemu_set_schedule(s);
    size_t n = blocks ? blocks : 96;
    int *out = dev_ints(n), *count = dev_ints(1);
    zero(count, 1);
    if (blocks) cuemu_launch(k_block_order, dim3(blocks), dim3(32), 0, out, count);
    else cuemu_launch(k_thread_order, dim3(1), dim3((unsigned)n), 0, out, count);
    std::vector<int> h = host(out, n);
    cudaFree(out);
    cudaFree(count);
    return h;
}

// runs fn in a child process; its exit status (or 128 + signal) and what it wrote to stderr
static int in_child(void (*fn)(), std::string *err) {
    int fd[2];
    if (pipe(fd) != 0) return -1;
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        dup2(fd[1], 2);
        fn();
        std::_Exit(0);
    }
    close(fd[1]);
    char buf[4096];
    ssize_t k;
    err->clear();
    while ((k = read(fd[0], buf, sizeof buf)) > 0) err->append(buf, (size_t)k);
    while (!err->empty() && err->back() == '\n') err->pop_back();
    close(fd[0]);
    int st = 0;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}
static bool has(const std::string &s, const char *what) { return s.find(what) != std::string::npos; }

// ---- checks -----------------------------------------------------------------------------------------
static void test_schedules() {
    std::vector<int> f = order("forward", 0), r = order("reverse", 0), a = order("random:5", 0), b = order("random:5", 0),
                     c = order("random:6", 0);
    CHECK(f == iota(96, false), "schedule forward: the threads of a block run in linear id order");
    CHECK(r == iota(96, true), "schedule reverse: the threads of a block run in reverse linear id order");
    CHECK(is_permutation(a) && a != f && a != r, "schedule random:5: the threads run in a permutation that is neither forward nor reverse");
    CHECK(a == b && a != c, "schedule random: the same seed gives the same order, another seed another");
    for (unsigned g : {36u, 37u}) { // the block permutation needs a multiplier prime to the grid size
        std::vector<int> bf = order("forward", g), br = order("reverse", g), ba = order("random:5", g);
        CHECK(bf == iota(g, false) && br == iota(g, true), "schedule forward/reverse: %u blocks run in (reverse) linear order", g);
        CHECK(is_permutation(ba) && ba != bf && ba != br, "schedule random:5: %u blocks run in a permutation that is neither", g);
    }
    std::string err;
    int rc = in_child([] { cuemu_set_schedule("sideways"); }, &err);
    CHECK(rc != 0 && has(err, "CUEMU_SCHEDULE=sideways: not forward, reverse or random[:seed]"),
          "a bad schedule stops the program and names it (exit %d: %s)", rc, err.c_str());
    rc = in_child([] { cuemu_set_schedule("random:x1"); }, &err);
    CHECK(rc != 0 && has(err, "CUEMU_SCHEDULE=random:x1: the seed"), "a bad random seed stops the program and names it (exit %d: %s)", rc,
          err.c_str());
    cuemu_set_schedule("forward");
}

// runs a race kernel under each schedule; which schedules give the intended result
struct Seen {
    bool forward, reverse, random;
};
template <typename Run>
static Seen under_schedules(Run run) {
    Seen s;
    cuemu_set_schedule("forward");
    s.forward = run();
    cuemu_set_schedule("reverse");
    s.reverse = run();
    cuemu_set_schedule("random:1");
    s.random = run();
    cuemu_set_schedule("forward");
    return s;
}

static void test_races() {
    int *out = dev_ints(NT), *in = dev_ints(2 * NT);
    std::vector<int> hin(2 * NT);
    for (int i = 0; i < 2 * NT; i++) hin[(size_t)i] = 3 * i + 1;
    upload(in, hin);
    for (int barrier = 0; barrier < 2; barrier++) {
        Seen raw = under_schedules([&] {
            cuemu_launch(k_raw, dim3(1), dim3(NT), 0, out, barrier);
            return host(out, NT) == iota(NT, false);
        });
        Seen war = under_schedules([&] {
            cuemu_launch(k_war, dim3(1), dim3(NT), 0, out, in, barrier);
            std::vector<int> h = host(out, NT);
            bool ok = h[0] == 0;
            for (int t = 1; t < NT; t++) ok = ok && h[(size_t)t] == hin[(size_t)t - 1] + hin[(size_t)(NT + t - 1)];
            return ok;
        });
        Seen cw = under_schedules([&] {
            cuemu_launch(k_cross_warp, dim3(1), dim3(NT), 0, out, barrier);
            std::vector<int> h = host(out, NT);
            bool ok = true;
            for (int t = 0; t < NT; t++) ok = ok && h[(size_t)t] == (NT - 1 - t) + (NT - 1 - (t ^ 1));
            return ok;
        });
        if (barrier) {
            CHECK(raw.forward && raw.reverse && raw.random, "race-free read of a neighbour's shared value: right in every schedule");
            CHECK(war.forward && war.reverse && war.random, "race-free reuse of a shared tile: right in every schedule");
            CHECK(cw.forward && cw.reverse && cw.random, "race-free reuse of a tile across warps: right in every schedule");
        } else {
            CHECK(!cw.forward && !cw.reverse,
                  "a race between warps across a warp collective (a warp stores the next tile before the other read this one): caught");
            CHECK(raw.forward && !raw.reverse && !raw.random,
                  "read-after-write race (no barrier between a store and a neighbour's load): forward hides it, reverse and random catch it");
            CHECK(!war.forward && war.reverse,
                  "write-after-read race (the next tile stored before the neighbour read this one): reverse hides it, forward catches it");
        }
    }
    const unsigned G = 40;
    int *chain = dev_ints(G);
    Seen ch = under_schedules([&] {
        cudaMemset(chain, 0xff, G * sizeof(int)); // no earlier run's values
        cuemu_launch(k_chain, dim3(G), dim3(1), 0, chain);
        std::vector<int> h = host(chain, G), want(G);
        for (unsigned b = 0; b < G; b++) want[b] = (int)b + 1;
        return h == want;
    });
    CHECK(ch.forward && !ch.reverse && !ch.random, "a block reading another block's output: forward hides it, reverse and random catch it");
    cudaFree(chain);
    cudaFree(in);
    cudaFree(out);
}

static void test_poison() {
    const unsigned G = 3;
    int *out = dev_ints(G * NT);
    // the whole tile loaded in every block: no poison left
    cuemu_launch(k_tile, dim3(G), dim3(NT), 0, out, NT, 0);
    std::vector<int> h = host(out, G * NT);
    bool ok = true;
    for (unsigned i = 0; i < G * NT; i++) ok = ok && h[i] == 1000 + (int)(i % NT);
    CHECK(ok, "a tile every block loads whole reads back right (no false alarm)");
    // a partly loaded tile: the rest reads as the poison, 0xffffffff
    cuemu_launch(k_tile, dim3(G), dim3(NT), 0, out, 40, 0);
    h = host(out, G * NT);
    ok = true;
    for (unsigned i = 0; i < G * NT; i++) ok = ok && h[i] == (i % NT < 40 ? 1000 + (int)(i % NT) : -1);
    CHECK(ok, "shared memory a block reads before writing it is 0xff bytes, in every block");
    // a tile only block 0 loads: later blocks see the poison, not block 0's values
    cuemu_launch(k_tile, dim3(G), dim3(NT), 0, out, NT, 1);
    h = host(out, G * NT);
    ok = true;
    for (unsigned i = 0; i < G * NT; i++) ok = ok && h[i] == (i < NT ? 1000 + (int)i : -1);
    CHECK(ok, "shared memory does not keep the previous block's values (a kernel relying on them reads 0xff bytes)");
    // CUEMU_SMEM_POISON=0: the old behaviour, under which that bug passes unseen
    cuemu_set_smem_poison(0);
    cuemu_launch(k_tile, dim3(G), dim3(NT), 0, out, NT, 1);
    h = host(out, G * NT);
    ok = true;
    for (unsigned i = 0; i < G * NT; i++) ok = ok && h[i] == 1000 + (int)(i % NT);
    CHECK(ok, "without the poison, the blocks after block 0 read block 0's tile (the bug the poison exposes)");
    cuemu_set_smem_poison(1);
    // dynamic shared memory: 0xff bytes at the start of every block, whatever the block before wrote
    unsigned *dyn = (unsigned *)dev_ints(G * 4);
    cuemu_launch(k_dyn, dim3(G), dim3(NT), NT * sizeof(unsigned), dyn);
    h = host(dyn, G * 4);
    ok = true;
    for (unsigned i = 0; i < G * 4; i++) ok = ok && (unsigned)h[i] == 0xffffffffu;
    CHECK(ok, "dynamic shared memory is 0xff bytes at the start of every block");
    cudaFree(dyn);
    cudaFree(out);
}

static void test_faults() {
    std::string err;
    int rc = in_child(
        [] {
            int *o = dev_ints(64);
            cuemu_name_next_launch("k_past_end");
            cuemu_launch(k_past_end, dim3(1), dim3(32), 0, o, 64);
        },
        &err);
    CHECK(rc != 0 && has(err, "k_past_end") && has(err, "past the end of device allocation"),
          "a write past an allocation stops the program, naming the launch (exit %d)", rc);
    rc = in_child(
        [] {
            int *o = dev_ints(64);
            cuemu_launch(k_two_barriers, dim3(1), dim3(64), 0, o);
        },
        &err);
    CHECK(rc != 0 && has(err, "wait at different block barriers"), "threads at different barriers stop the program with why (exit %d)",
          rc);
}

// the tensor-core mma: D of two accumulated calls against the product in double, exactly (bf16 inputs
// that are small integers make every product and sum exact); a warp with lanes missing stops
static void test_mma() {
    unsigned short hA[256], hB[128];
    double want[128];
    for (int i = 0; i < 256; i++) { // small integers as bf16 bits: exact in fp32
        float f = (float)((i * 7) % 11 - 5);
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        hA[i] = (unsigned short)(u >> 16);
    }
    for (int i = 0; i < 128; i++) {
        float f = (float)((i * 5) % 9 - 4);
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        hB[i] = (unsigned short)(u >> 16);
    }
    for (int r = 0; r < 16; r++)
        for (int c = 0; c < 8; c++) {
            double s = 0.0;
            for (int k = 0; k < 16; k++) s += (double)((r * 16 + k) * 7 % 11 - 5) * (double)((k * 8 + c) * 5 % 9 - 4);
            want[r * 8 + c] = 2.0 * s;
        }
    void *dA, *dB, *dD;
    cudaMalloc(&dA, sizeof hA), cudaMalloc(&dB, sizeof hB), cudaMalloc(&dD, 128 * sizeof(float));
    cudaMemcpy(dA, hA, sizeof hA, cudaMemcpyHostToDevice), cudaMemcpy(dB, hB, sizeof hB, cudaMemcpyHostToDevice);
    cuemu_launch(k_mma, dim3(1), dim3(32), 0, (float *)dD, (const unsigned short *)dA, (const unsigned short *)dB);
    float hD[128];
    cudaMemcpy(hD, dD, sizeof hD, cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int i = 0; i < 128; i++) bad += (double)hD[i] != want[i];
    CHECK(bad == 0, "mma.sync m16n8k16 bf16: two accumulated calls give 2 A B exactly in the documented fragment layout (%d of 128 differ)", bad);
    cudaFree(dA), cudaFree(dB), cudaFree(dD);
    std::string err;
    int rc = in_child(
        [] {
            float *o = (float *)dev_ints(32);
            cuemu_launch(k_mma_half_warp, dim3(1), dim3(32), 0, o);
        },
        &err);
    CHECK(rc != 0 && has(err, "every lane of warp 0 must execute it"), "an mma half the warp skips stops the program with why (exit %d)", rc);
}

// ldmatrix x4: lane l's register j holds matrix j's (g, 2t), (g, 2t+1), or with .trans (2t, g), (2t+1, g),
// g = l / 4, t = l % 4 (the formulas of the ptx isa, written here independently of the emulator's)
static void test_ldmatrix() {
    uint32_t *d = (uint32_t *)dev_ints(128);
    for (int trans = 0; trans < 2; trans++) {
        cuemu_launch(k_ldmatrix, dim3(1), dim3(32), 0, d, trans, 0);
        std::vector<int> h = host(d, 128);
        int bad = 0;
        for (unsigned l = 0; l < 32; l++)
            for (unsigned j = 0; j < 4; j++) {
                const unsigned g8 = l / 4, t = l % 4;
                const unsigned lo = trans ? 1000 * j + 10 * (2 * t) + g8 : 1000 * j + 10 * g8 + 2 * t;
                const unsigned hi = trans ? 1000 * j + 10 * (2 * t + 1) + g8 : 1000 * j + 10 * g8 + 2 * t + 1;
                bad += (uint32_t)h[4 * l + j] != (lo | (hi << 16));
            }
        CHECK(bad == 0, "ldmatrix.x4%s: every lane gets the documented elements of the four matrices (%d of 128 registers differ)", trans ? ".trans" : "", bad);
    }
    cudaFree(d);
    std::string err;
    int rc = in_child(
        [] {
            uint32_t *o = (uint32_t *)dev_ints(128);
            cuemu_launch(k_ldmatrix, dim3(1), dim3(32), 0, o, 0, 1);
        },
        &err);
    CHECK(rc != 0 && has(err, "not 16 bytes of shared memory at a 16-byte boundary"), "ldmatrix of a misaligned row stops the program with why (exit %d)", rc);
}

// cp.async: nothing lands before a wait (the slots still hold the 0xff poison: -1), wait_group 1 lands the
// first group only, wait_group 0 the second too (zeros with src_bytes 0); exiting with copies in flight stops
static void test_cp_async() {
    std::vector<int> src(256);
    for (int i = 0; i < 256; i++) src[(size_t)i] = 7 * i + 1;
    int *dsrc = dev_ints(256), *out = dev_ints(768);
    upload(dsrc, src);
    for (int zfill = 0; zfill < 2; zfill++) {
        cuemu_set_smem_poison(1);
        cuemu_launch(k_cp_async, dim3(1), dim3(32), 256 * sizeof(int), out, (const int *)dsrc, zfill, 0);
        std::vector<int> h = host(out, 768);
        int before = 0, mid = 0, after = 0;
        for (int i = 0; i < 256; i++) {
            const int want2 = zfill ? 0 : src[(size_t)i];
            before += h[(size_t)i] != -1;
            mid += h[256 + (size_t)i] != (i < 128 ? src[(size_t)i] : -1);
            after += h[512 + (size_t)i] != (i < 128 ? src[(size_t)i] : want2);
        }
        CHECK(before == 0 && mid == 0 && after == 0,
              "cp.async%s: no copy lands before a wait (%d wrong), wait_group 1 lands the first group only (%d wrong), wait_group 0 the second (%d wrong)",
              zfill ? " with src_bytes 0 (zero fill)" : "", before, mid, after);
    }
    cudaFree(dsrc), cudaFree(out);
    std::string err;
    int rc = in_child(
        [] {
            int *o = dev_ints(768), *sr = dev_ints(256);
            cuemu_launch(k_cp_async, dim3(1), dim3(32), 256 * sizeof(int), o, (const int *)sr, 0, 1);
        },
        &err);
    CHECK(rc != 0 && has(err, "cp.async copies into shared memory not waited for"), "a thread exiting with cp.async copies in flight stops the program with why (exit %d)", rc);
}

// wgmma: D = 2 A B^T exactly (small integers), every lane's accumulators where the ptx isa puts them; the
// operand check and the in-flight check stop the program with why
static void test_wgmma() {
    std::vector<unsigned short> hA(128 * 16), hB(128 * 16);
    auto bits = [](int v) {
        float f = (float)v;
        uint32_t u;
        std::memcpy(&u, &f, sizeof u);
        return (unsigned short)(u >> 16);
    };
    for (int i = 0; i < 128 * 16; i++) hA[(size_t)i] = bits((i * 7) % 11 - 5), hB[(size_t)i] = bits((i * 5) % 9 - 4);
    void *dA, *dB, *dD;
    cudaMalloc(&dA, hA.size() * 2), cudaMalloc(&dB, hB.size() * 2), cudaMalloc(&dD, 128 * 128 * sizeof(float));
    cudaMemcpy(dA, hA.data(), hA.size() * 2, cudaMemcpyHostToDevice), cudaMemcpy(dB, hB.data(), hB.size() * 2, cudaMemcpyHostToDevice);
    cuemu_launch(k_wgmma, dim3(1), dim3(256), 8192, (float *)dD, (const unsigned short *)dA, (const unsigned short *)dB, 0);
    std::vector<float> hD(128 * 128);
    cudaMemcpy(hD.data(), dD, hD.size() * sizeof(float), cudaMemcpyDeviceToHost);
    int bad = 0;
    for (int m = 0; m < 128; m++)
        for (int n = 0; n < 128; n++) {
            double sum = 0.0;
            for (int k = 0; k < 16; k++) sum += (double)((m * 16 + k) * 7 % 11 - 5) * (double)((n * 16 + k) * 5 % 9 - 4);
            bad += (double)hD[(size_t)(m * 128 + n)] != 2.0 * sum;
        }
    CHECK(bad == 0, "wgmma m64n128k16 bf16: two warpgroups, scale-d 0 then 1, give 2 A B^T exactly in the documented fragment layout (%d of 16384 differ)", bad);
    cudaFree(dA), cudaFree(dB), cudaFree(dD);
    static int g_mode;
    for (g_mode = 1; g_mode < 4; g_mode++) {
        const int mode = g_mode;
        std::string err;
        int rc = in_child(
            [] {
                float *o = (float *)dev_ints(128 * 128);
                unsigned short *a = (unsigned short *)dev_ints(128 * 8);
                cuemu_launch(k_wgmma, dim3(1), dim3(256), 8192, o, (const unsigned short *)a, (const unsigned short *)a, g_mode);
            },
            &err);
        static const char *const want[] = {"", "changed before the wgmma.wait_group", "wgmma.mma_async in flight (the first at", "has a cp.async in flight into shared memory it reads"};
        static const char *const what[] = {"", "an operand overwritten before the wgmma's wait_group", "a warp exiting with a wgmma in flight",
                                           "a cp.async into an operand started before the wgmma's wait_group"};
        CHECK(rc != 0 && has(err, want[mode]), "%s stops the program with why (exit %d)", what[mode], rc);
    }
}

int main() {
    setenv("CUEMU_QUIET", "1", 1);
    test_schedules();
    test_races();
    test_poison();
    test_faults();
    test_mma();
    test_ldmatrix();
    test_cp_async();
    test_wgmma();
    return test_finish();
}
