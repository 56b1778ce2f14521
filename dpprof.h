/* dpprof.h - v0.1.0 - exact memory, time and traffic profiles of DP-SGD transformer training - MIT licence

   dpprof measures what differentially private training of Llama-style transformers costs: memory
   (exactly, by category and by module), time per phase and DRAM traffic, for every way of computing
   per-sample gradient norms. This file is the whole library: the profiler layer, the model, the
   CPU reference of every op, the dry backend, the outputs. The only other source is
   dpprof_kernels.cu (the CUDA backend), linked when nvcc is available.

   USE
     In exactly one C or C++ file:
         #define DPPROF_IMPLEMENTATION
         #include "dpprof.h"
     elsewhere just #include "dpprof.h". That implements the profiler: no library is needed, not
     even libm. The rest is opt-in, in the same file, before the #include:
         #define DPPROF_ENGINE   the model, DP-SGD, the backends, the writers, the reference ops, the
                                 noise and the accountant (link with -lm)
         #define DPPROF_CUDA     dpprof_kernels.cu is linked (nvcc; -lcudart -lcublas -lcupti): the cuda
                                 backend; without it the cuda entry points answer DPPROF_ERR_NO_CUDA

   THE PROFILER LAYER ALONE (no model needed)
         dpprof_prof p;
         dpprof_prof_init(&p, 0);
         dpprof_phase_begin(&p, DPPROF_PHASE_FORWARD, 0);
         float *x = (float *)dpprof_malloc(&p, bytes, DPPROF_CAT_ACTIVATIONS, DPPROF_MOD_MLP);
         ...                                  // or track your own allocations (cudaMalloc, pools):
         dpprof_track_alloc(&p, ptr, bytes, DPPROF_CAT_WORKSPACE, DPPROF_MOD_OTHER);
         dpprof_track_free(&p, ptr);
         dpprof_free(&p, x);
         dpprof_phase_end(&p);
         // p.peak_bytes, p.peak_by_cat[], p.peak_by_mod[] (split at the moment of the peak),
         // p.events[] (the live-bytes timeline), p.phases[] (bytes at start/end/peak per phase)
         dpprof_prof_write_json(&p, f);       // all of it as JSON; dpprof_prof_write_trace: Perfetto
         dpprof_prof_free(&p);
     Categories, modules and phases of your own: DPPROF_USER_CATEGORIES and its siblings (below).
     Every allocation carries a category and a module; every allocation and free is an event
     (time, category, module, +-bytes, phase, step). The peak is the first moment live bytes reach
     their maximum; the breakdown reported is the split at exactly that moment.

   THE ENGINE
         dpprof_config cfg;  memset(&cfg, 0, sizeof cfg);      // all-zero means defaults
         cfg.preset = "tiny"; cfg.seq = 64; cfg.batch = 8; cfg.backend = DPPROF_BACKEND_DRY;
         dpprof_session *s;
         if (dpprof_session_create(&cfg, &s) != DPPROF_OK) puts(dpprof_last_error());
         dpprof_session_run(s);                                // warm-up + measured steps
         dpprof_session_write_json(s, stdout, "my-experiment", "ok", NULL);
         dpprof_session_destroy(s);
     Backends: cpu (reference arithmetic), dry (same schedule and allocator bookkeeping, no
     arithmetic, no allocation: exact memory of any size in about a second), cuda (GPU), auto.
     cfg.dtype = DPPROF_DTYPE_BF16 (cuda, dry): activations and the matmul weights' working copies
     (dpprof_param.wl) in bf16; fp32 master weights, gradients, optimizer states; a frozen weight (LoRA's base)
     in bf16 alone (cfg.frozen_masters keeps its master). cpu refuses it.
     cfg.lora_rank: adapters on cfg.lora_targets; as PEFT runs it, the lm head is frozen unless cfg.train_head.
     dpprof_session_plan(s): what the session decided at its start (per tensor: norm method, clipped-gradient
     kernel; auto's rates, measured or given in cfg.rates); dpprof_session_write_plan prints it.
     cfg.checkpoint = DPPROF_CHECKPOINT_LAYERS: activation checkpointing on every backend and algorithm: the
     forward keeps each decoder layer's input alone, the backward recomputes the layer just before its
     backward (the recompute phase); the same bits as without (docs/model.md).

   DP-SGD
     cfg.algo = DPPROF_ALGO_FLASH_BK (or PERSAMPLE, GHOST, GHOST_BK, FLASH, AUTO); cfg.sigma,
     cfg.max_grad_norm, cfg.per_layer_clipping, cfg.poisson + cfg.dataset_size, cfg.lora_rank...
     cfg.tie_embeddings = DPPROF_SWITCH_ON makes the lm head the embedding matrix (one tensor; its per-sample norm carries the
     exact cross term of both uses, dpprof_tied_cross_ref); cfg.head_dim a head width other than hidden/heads.
     Every algorithm computes the same sum_i c_i grad loss_i; dpprof_session_clipped_grad() runs it
     on given samples, noise off, for checking against a per-sample loop. The privacy accountants:
     dpprof_rdp_epsilon(), dpprof_pld_epsilon() (tight), their _sigma_for_epsilon(); a run's privacy, said in
     one struct: dpprof_session_privacy(). The noise: dpprof_normal(seed, stream, index), Philox4x32-10 +
     Box-Muller, bit-identical on host and device; cfg.secure_noise keys it from the operating system's
     entropy and hardens each normal against floating-point attacks (DPPROF_NOISE_SECURE).

   SHARDED DATA PARALLELISM
     cfg.ranks = 8; cfg.zero = 3 (0 to 3) on the dry backend: the exact memory of rank 0 of 8 ranks, each taking
     batch / 8 samples, under ZeRO stage 3 (parameters, gradients and adam moments sharded); dpprof_session_dist()
     gives the shards and the bytes each collective moved (docs/model.md). with DPPROF_MPI the cpu backend runs
     the ranks as the processes of an MPI job (mpirun -np 8), with the single rank's results, and so does the
     cuda backend, a GPU a process, through NCCL (dpprof_kernels.cu built with DPPROF_NCCL; dpprof_nccl_*). one
     rank with any stage is plain training, bit for bit. the collectives' time, modelled from the links'
     specifications (NCCL's bus bandwidth relations, a lower bound): dpprof_coll_seconds() of one,
     dpprof_session_comm_time() of a step, over a dpprof_fabric of dpprof_link_find("nvlink4") and the like.

   ALSO IN HERE
     the cpu reference of every op (dpprof_<op>_ref, with dpprof_<op>_cost). the command line's strict JSON
     reader (dpprof_json_*) and figures (dpprof_plot_*, dpprof_canvas_*) are in dpprof_tools.h beside it.

   THE PARTS (declarations first, then the implementation in the same order)
     1 core          the reference type dpprof_real, one result-code vocabulary (dpprof_result), the
                     categories, modules and phases (DPPROF_USER_* extend them)
     2 profiler      dpprof_prof: allocations charged to a category and a module, phases, the peak and
                     its split, dpprof_prof_write_json / _write_trace
     3 noise and accountant   philox noise (host and device alike), the rdp and pld accountants
     4 ops           the cpu reference of every op and dp op (dpprof_<op>_ref) with its analytic cost
     5 engine        dpprof_config, presets, dpprof_session (model, dp-sgd, backends) and its writers
     6 cuda runtime  the device, device memory through the accountant, the gpu ops (dpprof_<op>_gpu),
                     the kernel choices (dpprof_cuda_tuning): dpprof_kernels.cu implements them
     the engine's implementation in sections, each under a heading with its contract: 5.1 configuration,
     5.2 the session, its tensors and the allocator, 5.3 sharding, 5.4 model and data, 5.5 forward, 5.6 DP
     phases, 5.7 backward and the physical batch, 5.8 noise, optimizer and the step, 5.9 auto, 5.10 session
     lifecycle, 5.11 writers and dump
   DPPROF_IMPLEMENTATION implements parts 1 and 2; DPPROF_ENGINE parts 3 to 6.

   EVERY PUBLIC FUNCTION, by part ({a,b} as the shell expands it)
     1 core          dpprof_result_str dpprof_last_error dpprof_fail dpprof_utf8_len dpprof_closest dpprof_words
                     dpprof_category_name dpprof_module_name dpprof_phase_name
     2 profiler      dpprof_prof_{init,free,now_ms,add_cost,same_memory,write_json,write_trace}
                     dpprof_track_{alloc,free,move,retag} dpprof_malloc dpprof_free dpprof_live
                     dpprof_phase_begin dpprof_phase_end
     3 noise and accountant   dpprof_philox4x32_10 dpprof_chacha20_block dpprof_noise_seed dpprof_normal
                     dpprof_normal4 dpprof_add_noise_ref
                     dpprof_rdp_{sgm,default_orders,epsilon,epsilon_classic,sigma_for_epsilon}
                     dpprof_pld_{epsilon,sigma_for_epsilon} dpprof_noiseless_epsilon dpprof_privacy_progress
     4 ops           dpprof_{matmul_fwd,matmul_bwd,embedding_fwd,embedding_bwd,rmsnorm_fwd,add_rmsnorm_fwd,
                     rmsnorm_bwd,rope_fwd,rope_bwd,attention_fwd,attention_bwd,swiglu_fwd,swiglu_bwd,add,
                     crossentropy_fwd,crossentropy_bwd,last_token_fwd,last_token_bwd,adam,sgd,scale}_{ref,cost}
                     dp ops: dpprof_{linear_psgrad,psgrad_sqnorm,psgrad_clipsum,gram,gram_dot,
                     linear_sqnorm_gram,linear_sqnorm_gram_group,linear_sqnorm_psg,linear_clipgrad,
                     embedding_sqnorm,embedding_psgrad,embedding_clipgrad,tied_cross,rmsnorm_psdweight,
                     rmsnorm_bwd_ps,clip_factors,sample_sqnorm}_{ref,cost} dpprof_clip_factors_bound_ref
                     dpprof_flash_choice
     5 engine        names: dpprof_{backend,algo,checkpoint,attention,framework}_name dpprof_{algo,checkpoint,attention}_parse
                     bf16: dpprof_bf16_{from_float,to_float,round_ref,pack_ref,unpack_ref}
                     configuration: dpprof_config_{fields,field_find,set,enum_name,resolve}
                     dpprof_preset_{names,shape,canonical,hf_name}
                     session: dpprof_session_{create,destroy,run,step,grad,clipped_grad,loss,batch,param_method,plan,
                     config,shape,prof,param_count,param,param_elems,param_read,param_write,steps_done,
                     step_loss,op_costs,memory_truth,peak_without_limit,dist,comm_time,privacy,write_json,
                     write_trace,write_plan,dump}
                     collectives' time: dpprof_links dpprof_link_find dpprof_coll_seconds dpprof_comm_time
                     privacy: dpprof_privacy_of (any setting's, under the accountant asked)
     6 cuda runtime  dpprof_device_peaks dpprof_flop_peak
                     dpprof_cuda_{device_count,device_info,malloc,free,init,alloc,release,copy,zero,sync,trim,
                     set_workspace,mem_used,pool_usage,event,event_ms,events_reset,counters_begin,counters_push,
                     counters_pop,counters_end,set_storage,storage,set_tuning,get_tuning,wgmma_count,
                     launch_count,work_count}
                     dpprof_nccl_{available,id,init,device_bytes,finish,allreduce,reduce_scatter,allgather,allgather_bf16}
                     dpprof_cudnn_{available,attention_plan,attention_fwd_gpu,attention_bwd_gpu}
                     gpu ops: the _gpu of every op of part 4 but adam, sgd and clip_factors:
                     dpprof_{matmul_fwd,matmul_bwd,embedding_fwd,embedding_bwd,rmsnorm_fwd,add_rmsnorm_fwd,
                     rmsnorm_bwd,rope_fwd,rope_bwd,attention_fwd,attention_bwd,swiglu_fwd,swiglu_bwd,add,
                     crossentropy_fwd,crossentropy_bwd,last_token_fwd,last_token_bwd,scale,linear_psgrad,
                     psgrad_sqnorm,psgrad_clipsum,gram,gram_dot,linear_sqnorm_gram,linear_sqnorm_gram_group,
                     linear_sqnorm_psg,linear_clipgrad,embedding_sqnorm,embedding_psgrad,embedding_clipgrad,
                     tied_cross,rmsnorm_psdweight,rmsnorm_bwd_ps,sample_sqnorm}_gpu
                     and dpprof_{adam,sgd,noise_adam,noise_sgd,cast_bf16,fill,init_normal,init_normal_bf16,
                     embedding_fwd_bf16,noise_scale,scale_rows,
                     nonfinite_reset,nonfinite,nonfinite_result,linear_sqnorm_gram_rep,linear_clipgrad_rep}_gpu

   BUILD OPTIONS
     DPPROF_IMPLEMENTATION   compile the implementation in this translation unit (the profiler)
     DPPROF_ENGINE, DPPROF_CUDA   the opt-in parts (USE, above)
     DPPROF_REF_DOUBLE       cpu reference stores double instead of float (gradient-check builds only)
     DPPROF_MPI              the engine's cpu and cuda backends run --ranks N as N processes of an MPI job
                             (mpicc, or the flags of `mpicc --showme`; launched by mpirun -np N; cuda: with
                             NCCL in the kernels); without it ranks > 1 is dry only
     DPPROF_MALLOC/DPPROF_REALLOC/DPPROF_FREE   override the allocator (all or none)
     DPPROF_ASSERT           override assert()
     DPPROF_API              decoration of public functions (default: extern)
     _POSIX_C_SOURCE>=199309L (or gnu mode) gives a monotonic clock; otherwise C11 timespec_get
   The header needs only libc (and libm for the engine). It compiles as C11 (-pedantic),
   as C++17 and under nvcc.
   Errors are result codes (dpprof_result); dpprof_last_error() holds the message of the last
   failure (one buffer per process: not thread-safe). Nothing in the library calls exit().
*/
#ifndef DPPROF_H
#define DPPROF_H

#define DPPROF_VERSION "0.1.0"
/* the result JSON's schema (docs/result.schema.json): its "schema_version", raised when a key changes meaning
   or goes away (new keys do not raise it) */
#define DPPROF_SCHEMA_VERSION 2

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <float.h> /* the inline noise generator checks FLT_EVAL_METHOD */
#include <math.h>

#ifndef DPPROF_API
#define DPPROF_API extern
#endif

#if defined(__CUDACC__)
#define DPPROF_HD __host__ __device__
#else
#define DPPROF_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

#ifdef DPPROF_REF_DOUBLE
typedef double dpprof_real; /* gradient-check builds: the whole cpu reference in double */
#else
typedef float dpprof_real; /* storage of the cpu reference; long sums accumulate in double */
#endif

/* =============================================================================================
   PART 1: core
   the reference type, one result-code vocabulary, the categories, modules and phases. Contract: every
   function of dpprof that can fail returns a dpprof_result (0 is success, every failure negative) and has
   recorded why with dpprof_fail, for dpprof_last_error(); nothing in the library prints or exits. The
   categories, modules and phases are the vocabulary of every byte and every millisecond reported;
   DPPROF_USER_* extend them.
   ============================================================================================= */
/* ---------------------------------------------------------------------------------------------
   result codes
   --------------------------------------------------------------------------------------------- */
#define DPPROF_RESULTS(X)                                   \
    X(DPPROF_OK, 0, "ok")                                   \
    X(DPPROF_ERR_INVALID, -1, "invalid argument")           \
    X(DPPROF_ERR_OOM, -2, "out of memory")                  \
    X(DPPROF_ERR_IO, -3, "input/output error")              \
    X(DPPROF_ERR_NO_CUDA, -4, "built without CUDA")         \
    X(DPPROF_ERR_NO_DEVICE, -5, "no GPU available")         \
    X(DPPROF_ERR_UNSUPPORTED, -6, "not supported")          \
    X(DPPROF_ERR_NUMERIC, -7, "non-finite value")           \
    X(DPPROF_ERR_OVERFLOW, -8, "size overflow")             \
    X(DPPROF_ERR_CUDA, -9, "CUDA error")                    \
    X(DPPROF_ERR_PARSE, -10, "parse error")                 \
    X(DPPROF_ERR_TOO_BIG, -11, "input over its size limit") \
    X(DPPROF_ERR_MISSING, -12, "absent value")              \
    X(DPPROF_ERR_TYPE, -13, "value of another type")        \
    X(DPPROF_ERR_RANGE, -14, "value out of range")          \
    X(DPPROF_ERR_ORDER, -15, "values out of order")         \
    X(DPPROF_ERR_NO_CONVERGENCE, -16, "a series did not converge")

/* one vocabulary for the whole library: every function that returns a code returns one of these (the JSON
   reader's, the figures' and the accountant's names below are these codes under the names their parts use) */
/* clang-format off */
typedef enum dpprof_result {
#define DPPROF__X(name, value, text) name = value,
    DPPROF_RESULTS(DPPROF__X)
#undef DPPROF__X
    DPPROF__RESULT_END = -17
} dpprof_result;
/* clang-format on */

DPPROF_API const char *dpprof_result_str(int result);
DPPROF_API const char *dpprof_last_error(void);
/* record the message of a failure for dpprof_last_error() and return code, so that call sites read
   `return dpprof_fail(CODE, "...", ...)`: the one way every part of dpprof (the engine, the accountant,
   dpprof_tools.h, dpprof_kernels.cu) reports a failure. the arguments may include dpprof_last_error() (a
   message that wraps the one before) */
DPPROF_API int dpprof_fail(int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* the length of the valid utf-8 sequence at s (avail bytes readable): 0 if invalid (overlong, surrogate, above
   u+10ffff, bad continuation, or not a lead byte), (size_t)-1 if the input ends inside a valid prefix */
DPPROF_API size_t dpprof_utf8_len(const char *s, size_t avail);
/* "did you mean": the closest of the '|'-separated words to word (an edit distance of at most a third of its
   length, and at least 1), copied into buf; NULL where none is that close */
DPPROF_API const char *dpprof_closest(const char *word, const char *words, char *buf, size_t cap);
/* the '|'-separated words as a message lists choices, "a, b or c", into buf (a word's "=..." is left out: a
   list of name=value pairs gives its names) */
DPPROF_API const char *dpprof_words(const char *words, char *buf, size_t cap);

/* ---------------------------------------------------------------------------------------------
   categories, modules, phases (names match the seed's JSON breakdown keys where they exist)
   --------------------------------------------------------------------------------------------- */
#define DPPROF_CATEGORIES(X)                        \
    X(MODEL_PARAMETERS, "model_parameters")         \
    X(OPTIMIZER_STATES, "optimizer_states")         \
    X(GRADIENTS, "gradients")                       \
    X(ACTIVATIONS, "activations")                   \
    X(ACTIVATION_HOOKS, "activation_hooks")         \
    X(PER_SAMPLE_GRADIENTS, "per_sample_gradients") \
    X(NORM_SAMPLES, "norm_samples")                 \
    X(TEMP_MATRICES, "temp_matrices")               \
    X(LORA, "lora")                                 \
    X(WORKSPACE, "workspace")                       \
    X(DATA, "data")

#define DPPROF_MODULES(X)     \
    X(EMBEDDING, "embedding") \
    X(ATTENTION, "attention") \
    X(MLP, "mlp")             \
    X(NORM, "norm")           \
    X(LORA, "lora")           \
    X(HEAD, "head")           \
    X(OPTIMIZER, "optimizer") \
    X(OTHER, "other")

#define DPPROF_PHASES(X)                  \
    X(MODEL_LOADED, "model_loaded")       \
    X(DATA_SETUP, "data_setup")           \
    X(OPTIMIZER_SETUP, "optimizer_setup") \
    X(PRIVACY_SETUP, "privacy_setup")     \
    X(FORWARD, "forward")                 \
    X(BACKWARD, "backward")               \
    X(BACKWARD_2, "backward_2")           \
    X(NORMS, "norms")                     \
    X(CLIP_ACCUMULATE, "clip_accumulate") \
    X(NOISE, "noise")                     \
    X(OPTIMIZER_STEP, "optimizer_step")   \
    X(RECOMPUTE, "recompute")

/* the vocabulary is extensible: define any of these before every #include of dpprof.h (the same in
   every file of a program) to add categories, modules or phases of your own, e.g.
       #define DPPROF_USER_CATEGORIES(X) X(KV_CACHE, "kv_cache") X(PINNED, "pinned_host")
   gives DPPROF_CAT_KV_CACHE and DPPROF_CAT_PINNED after the built-in ones; every count, table, name and
   writer takes them in */
#ifndef DPPROF_USER_CATEGORIES
#define DPPROF_USER_CATEGORIES(X)
#endif
#ifndef DPPROF_USER_MODULES
#define DPPROF_USER_MODULES(X)
#endif
#ifndef DPPROF_USER_PHASES
#define DPPROF_USER_PHASES(X)
#endif

/* clang-format off */
typedef enum dpprof_category {
#define DPPROF__X(name, text) DPPROF_CAT_##name,
    DPPROF_CATEGORIES(DPPROF__X)
    DPPROF_USER_CATEGORIES(DPPROF__X)
#undef DPPROF__X
    DPPROF_CAT_COUNT
} dpprof_category;

typedef enum dpprof_module {
#define DPPROF__X(name, text) DPPROF_MOD_##name,
    DPPROF_MODULES(DPPROF__X)
    DPPROF_USER_MODULES(DPPROF__X)
#undef DPPROF__X
    DPPROF_MOD_COUNT
} dpprof_module;

typedef enum dpprof_phase {
#define DPPROF__X(name, text) DPPROF_PHASE_##name,
    DPPROF_PHASES(DPPROF__X)
    DPPROF_USER_PHASES(DPPROF__X)
#undef DPPROF__X
    DPPROF_PHASE_COUNT,
    DPPROF_PHASE_NONE = -1
} dpprof_phase;
/* clang-format on */

DPPROF_API const char *dpprof_category_name(int category);
DPPROF_API const char *dpprof_module_name(int module);
DPPROF_API const char *dpprof_phase_name(int phase);

/* =============================================================================================
   PART 2: profiler
   every allocation charged to a category and a module, phases, the peak and its split, its writers.
   Contract: live bytes are the sum of what is tracked and not freed; the peak is the first moment they
   reach their maximum, and its split by category and by module is taken at that moment, so the split always
   adds up to the peak. Needs libc alone.
   ============================================================================================= */
/* ---------------------------------------------------------------------------------------------
   profiler layer
   --------------------------------------------------------------------------------------------- */
typedef struct dpprof_event {
    double t_ms;   /* time since dpprof_prof_init (0 with DPPROF_PROF_NO_CLOCK) */
    int64_t bytes; /* +allocated / -freed */
    int64_t live;  /* live bytes after this event */
    int32_t category, module, phase, step;
} dpprof_event;

typedef struct dpprof_phase_rec {
    int32_t phase, step;
    double t_start_ms, t_end_ms;
    int64_t bytes_start, bytes_end, bytes_peak; /* live bytes at begin, end, and the max inside */
    size_t event_start, event_end;              /* events [event_start, event_end) happened inside */
    double flops, bytes_analytic;               /* analytic cost of the ops run inside */
    double dram_read, dram_write;               /* measured DRAM bytes; < 0: unavailable */
    double l2_read, l2_write;                   /* measured L2 bytes (from the SMs); < 0: unavailable */
} dpprof_phase_rec;

typedef struct dpprof_live_alloc {
    const void *key;
    int64_t bytes;
    int32_t category, module;
} dpprof_live_alloc;

/* flags: NO_CLOCK: timestamps stay 0 (the dry backend measures no time); NO_EVENTS: the event log is not kept
   (a long run's host memory stays bounded; the peak, its split and the phases' byte levels are kept as ever;
   events[] stays empty and n_events_seen counts them) */
enum {
    DPPROF_PROF_NO_CLOCK = 1,
    DPPROF_PROF_NO_EVENTS = 2
};

typedef struct dpprof_prof {
    int flags;
    double t0;                                           /* clock origin (ms) */
    int64_t live_bytes, peak_bytes;                      /* now, and the max ever */
    int64_t live_by[DPPROF_CAT_COUNT][DPPROF_MOD_COUNT]; /* live bytes by category x module */
    int64_t peak_by[DPPROF_CAT_COUNT][DPPROF_MOD_COUNT]; /* the same at the moment of the peak */
    int64_t peak_by_cat[DPPROF_CAT_COUNT], peak_by_mod[DPPROF_MOD_COUNT];
    int64_t max_by_cat[DPPROF_CAT_COUNT]; /* each category's own high-water mark */
    size_t peak_event;                    /* index of the event that set the peak */
    int32_t peak_phase, peak_step;
    int32_t cur_phase, cur_step; /* DPPROF_PHASE_NONE outside phases */
    dpprof_event *events;
    size_t n_events, cap_events;
    size_t n_events_seen; /* every event, kept or not (DPPROF_PROF_NO_EVENTS) */
    dpprof_phase_rec *phases;
    size_t n_phases, cap_phases;
    dpprof_live_alloc *live;
    size_t n_live, cap_live;
    size_t *index;
    size_t cap_index, used_index; /* open-addressing index: key -> live[] slot + 1 */
    int64_t n_allocs, n_frees;
    int64_t alloc_bytes_total; /* every byte ever allocated (PyTorch's allocated_bytes.all.allocated) */
    int failed;                /* a table could not grow: results incomplete */
} dpprof_prof;

DPPROF_API int dpprof_prof_init(dpprof_prof *p, int flags);
DPPROF_API void dpprof_prof_free(dpprof_prof *p);
DPPROF_API double dpprof_prof_now_ms(const dpprof_prof *p);
/* the key is only compared, never read: tell gcc, which otherwise warns about fresh malloc memory */
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 10
#define DPPROF__KEY_ONLY __attribute__((access(none, 2)))
#else
#define DPPROF__KEY_ONLY
#endif
/* record an allocation made elsewhere (malloc, cudaMalloc, a pool): key identifies it until freed */
DPPROF_API int dpprof_track_alloc(dpprof_prof *p, const void *key, size_t bytes, int category, int module) DPPROF__KEY_ONLY;
DPPROF_API int dpprof_track_free(dpprof_prof *p, const void *key) DPPROF__KEY_ONLY;
/* the allocation known as old_key is known as new_key from now on (no event: nothing changed) */
DPPROF_API int dpprof_track_move(dpprof_prof *p, const void *old_key, const void *new_key);
/* the allocation changes category/module (an event pair: -bytes from the old, +bytes to the new) */
DPPROF_API int dpprof_track_retag(dpprof_prof *p, const void *key, int category, int module) DPPROF__KEY_ONLY;
/* allocate through DPPROF_MALLOC and track; NULL on failure (and dpprof_last_error says so) */
DPPROF_API void *dpprof_malloc(dpprof_prof *p, size_t bytes, int category, int module);
DPPROF_API void dpprof_free(dpprof_prof *p, void *ptr);
/* phases do not nest: begin closes the open one */
DPPROF_API int dpprof_phase_begin(dpprof_prof *p, int phase, int step);
DPPROF_API void dpprof_phase_end(dpprof_prof *p);
/* add analytic cost (FLOPs, bytes moved) to the open phase */
DPPROF_API void dpprof_prof_add_cost(dpprof_prof *p, double flops, double bytes);
/* 1 if two profiles saw the same memory history: every event's bytes, category, module, phase
   and step, the peak and its split, the phases' byte levels (times are not compared); a noise phase
   that moves no memory may be in one profile only (the noise in the optimizer's pass has none: auto
   chooses that by timing on cuda, which dry cannot); else 0 and *why (if not NULL) names the first
   difference */
DPPROF_API int dpprof_prof_same_memory(const dpprof_prof *a, const dpprof_prof *b, const char **why);
/* live bytes of one category (module < 0: all modules) */
DPPROF_API int64_t dpprof_live(const dpprof_prof *p, int category, int module);
/* the profile as JSON: {"schema_version", "peak_bytes", "peak_phase", "peak_step", "peak_by_category" and
   "peak_by_module" (bytes at the moment of the peak), "max_by_category" (each one's own high-water mark),
   "live_bytes", "allocs", "frees", "incomplete", "phases" (one record a phase: name, step, bytes at start,
   end and peak, times), "timeline" (the event log as parallel arrays, with the name lists)}. returns
   DPPROF_OK, or DPPROF_ERR_IO when the stream reports an error */
DPPROF_API int dpprof_prof_write_json(const dpprof_prof *p, FILE *f);
/* the profile as a Chrome/Perfetto trace (ui.perfetto.dev): the phases on a named track and the live bytes
   of each category as counters; times in ms from dpprof_prof_init (DPPROF_PROF_NO_CLOCK: the event
   index). same returns */
DPPROF_API int dpprof_prof_write_trace(const dpprof_prof *p, FILE *f);

/* =============================================================================================
   PART 3: noise and accountant
   Philox noise, bit for bit the same on host and device whatever the backend and the number of ranks; the
   RDP and PLD accountants of the Poisson-subsampled Gaussian mechanism. Contract: an epsilon reported is an
   upper bound (the PLD's discretisation is pessimistic), and sigma for a target is the smallest that
   reaches it under the accountant named.
   ============================================================================================= */
/* ===========================================================================
   privacy: declarations and the shared host/device section.

   (a) counter-based gaussian noise: philox4x32-10 (salmon, moraes, dror,
       shaw, "parallel random numbers: as easy as 1, 2, 3", sc'11) feeding a
       box-muller transform whose log and sin/cos are computed here, not by
       libm, so that cpu and gpu produce bitwise identical noise.
   (b) renyi-dp accountant for the poisson-subsampled gaussian mechanism
       (mironov, talwar, zhang 2019, "renyi differential privacy of the
       sampled gaussian mechanism", arxiv:1908.10530), host only.

   needs (from dpprof.h): <stddef.h> <stdint.h> <math.h>
   <float.h>, DPPROF_API and DPPROF_HD.

   ---- build requirements for bitwise cpu/gpu reproducibility -------------
   * the noise arithmetic must not be contracted into fused multiply-adds.
     device: every operation goes through __dmul_rn/__dadd_rn/__dsub_rn/
     __ddiv_rn/__dsqrt_rn/__fadd_rn (DPPROF__MUL etc. below), which nvcc never
     fuses, whatever --fmad says.
     host: measured with gcc 12 / clang 14 on x86-64 -march=haswell:
       gcc -std=c11 (iso c)        : no contraction (-ffp-contract=off is the
                                     iso-c default)
       gcc -std=gnu11, g++ (any
       -std, c++17 included)       : contracts across statements
                                     (-ffp-contract=fast is the default)
       clang / clang++             : contracts within one expression
                                     (-ffp-contract=on is the default)
     so the noise functions carry a gcc optimize("fp-contract=off") function
     attribute (gcc also refuses to inline them into differently-optimised
     callers, which keeps the protection) and a clang "#pragma STDC
     FP_CONTRACT OFF" at the top of each body. when they were written, the
     golden-bit test (tests/test_privacy.c) ran under gcc -std=gnu11, g++,
     clang and clang++ with -march=haswell: g++ without the guards changed
     the bits, and nvcc's host pass (-Xcompiler -O2,-march=haswell) leaves no fma in the
     noise functions (19 without the guards). make test runs it as c11, and
     the gpu test holds the cuda noise to the cpu's bits. gcc's manual ("floating point
     implementation") confirms it ignores the fp_contract pragma and only
     contracts under -ffp-contract=fast. other compilers (icx defaults to
     fast fp, msvc /fp:fast): build with contraction off
     (-ffp-contract=off, /fp:precise).
   * never build with -ffast-math / -Ofast / --use_fast_math on the host side
     of this code (they allow reassociation and flush subnormals).
   * FLT_EVAL_METHOD must be 0 (sse2 or better; x87 excess precision would
     round differently), checked below.
   * the device intrinsics are correctly rounded; glibc sqrt is correctly
     rounded (ieee 754 requires it), so sqrt needs no replacement.
   =========================================================================== */
#ifndef DPPROF_PRIVACY_DECL_H
#define DPPROF_PRIVACY_DECL_H

/* ---- result codes: dpprof_result's, under the names this part uses ---- */
#define DPPROF__PRIV_OK DPPROF_OK
#define DPPROF__PRIV_ENULL DPPROF_ERR_INVALID          /* a required out-pointer is null */
#define DPPROF__PRIV_EINVAL DPPROF_ERR_INVALID         /* argument out of domain or nan */
#define DPPROF__PRIV_ENOCONV DPPROF_ERR_NO_CONVERGENCE /* fractional-order series did not converge */
#define DPPROF__PRIV_ERANGE DPPROF_ERR_RANGE           /* target epsilon unreachable for any sigma */

/* number of orders in the default grid, so callers can size arrays without
   a vla */
#define DPPROF__PRIV_N_DEFAULT_ORDERS 151

/* largest finite rdp order accepted: both series cost o(alpha) terms */
#define DPPROF__PRIV_MAX_ORDER 1.0e6

#if !defined(__CUDA_ARCH__) && defined(FLT_EVAL_METHOD) && \
    (FLT_EVAL_METHOD == 1 || FLT_EVAL_METHOD == 2) &&      \
    !defined(DPPROF_ALLOW_EXCESS_PRECISION)
#error "dpprof noise needs FLT_EVAL_METHOD == 0 (e.g. -msse2 -mfpmath=sse) to match the gpu bit for bit; define DPPROF_ALLOW_EXCESS_PRECISION to build anyway"
#endif

/* ---- arithmetic that is never fused, on either side ---- */
#if defined(__CUDA_ARCH__)
#define DPPROF__MUL(a, b) __dmul_rn((a), (b))
#define DPPROF__ADD(a, b) __dadd_rn((a), (b))
#define DPPROF__SUB(a, b) __dsub_rn((a), (b))
#define DPPROF__DIV(a, b) __ddiv_rn((a), (b))
#define DPPROF__SQRT(a) __dsqrt_rn(a)
#define DPPROF__FADD(a, b) __fadd_rn((a), (b))
#else
#define DPPROF__MUL(a, b) ((a) * (b))
#define DPPROF__ADD(a, b) ((a) + (b))
#define DPPROF__SUB(a, b) ((a) - (b))
#define DPPROF__DIV(a, b) ((a) / (b))
#define DPPROF__SQRT(a) sqrt(a)
#define DPPROF__FADD(a, b) ((a) + (b))
#endif

/* host-side guards against contraction, see the header comment. they can be
   predefined (empty) only to demonstrate what they prevent. */
#ifndef DPPROF__FP_STRICT
#if !defined(__CUDA_ARCH__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__INTEL_COMPILER) && !defined(__INTEL_LLVM_COMPILER)
#define DPPROF__FP_STRICT __attribute__((optimize("fp-contract=off")))
#else
#define DPPROF__FP_STRICT
#endif
#endif
#ifndef DPPROF__FP_STRICT_BODY
#if defined(__clang__)
#define DPPROF__FP_STRICT_BODY _Pragma("STDC FP_CONTRACT OFF")
#else
#define DPPROF__FP_STRICT_BODY
#endif
#endif

/* the noise functions are defined (static inline) in every translation unit
   that includes dpprof.h: the cuda file compiles this same source for the
   device, and without relocatable device code a __device__ function must be
   defined in the unit that calls it. */
#define DPPROF__HDI static inline DPPROF_HD

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dpprof_u32x4 {
    uint32_t v[4];
} dpprof_u32x4;

/* the noise's key: 256 bits. a plain stream (reproducible, for measuring) is philox4x32-10 keyed by w[0] and w[1],
   a 64-bit seed (dpprof_noise_seed); a secure stream (DPPROF_NOISE_SECURE, for releasing a model) is chacha20 keyed
   by all eight words, drawn from the operating system's entropy */
typedef struct dpprof_noise_key {
    uint32_t w[8];
} dpprof_noise_key;

/* ---- (a) noise: host-only entry point ---- */

/* out[i] += (float)(stddev * dpprof_normal(key, stream, offset + i)) for
   i < n: the reference (cpu) way to add sigma*C gaussian noise to a
   gradient. the gpu kernel must produce the same bits by calling
   dpprof_normal4 and dpprof__noise_accum. null out with n == 0 is fine. */
DPPROF_API void dpprof_add_noise_ref(float *out, size_t n, double stddev,
                                     dpprof_noise_key key, uint64_t stream,
                                     uint64_t offset);

/* ---- (b) rdp accountant (host only) ---- */

/* rdp of one step of the poisson-subsampled gaussian mechanism with
   sampling rate q in [0,1] and noise multiplier sigma >= 0, at order
   alpha > 1 (alpha may be +inf; finite alpha must be <= 1e6).
   q == 0 -> 0; sigma == 0 -> +inf; q == 1 -> alpha / (2 sigma^2);
   sigma < 1e-100 -> +inf (1/sigma^2 would overflow).
   integer alpha: the exact binomial expansion (mtz 2019 sec. 3.3), summed
   as log1p of positive terms. fractional alpha: the mtz two-series formula
   with erfc; where that series would need more than alpha + 10^4 terms or
   log(A) < 1e-6 (its rounding floor), a trapezoid quadrature of the
   defining integral (agrees with the integer formula to 3e-14 relative over
   q in [1e-5, 0.999], sigma in [0.1, 100], alpha in [2, 256]).
   returns 0, DPPROF__PRIV_ENULL, DPPROF__PRIV_EINVAL or
   DPPROF__PRIV_ENOCONV (fractional alpha when both methods would be too
   long; not seen for sigma >= 0.01; rdp at ceil(alpha) is then a valid
   bound since rdp is nondecreasing in alpha). */
DPPROF_API int dpprof_rdp_sgm(double q, double sigma, double alpha,
                              double *rdp);

/* the default order grid, opacus's RDPAccountant.DEFAULT_ALPHAS:
   1 + x/10 for x = 1..99, then 12..63. returns the count (151) and fills
   orders when it is not null (pass null to get the size). */
DPPROF_API int dpprof_rdp_default_orders(double *orders);

/* epsilon at delta after `steps` identical steps, minimised over the
   orders (orders == null: the default grid, n_orders ignored), using the
   conversion of balle et al. 2020 (arxiv:1905.09982 thm 21, as in opacus
   get_privacy_spent):
     eps(alpha) = steps*rdp - (log(delta) + log(alpha))/(alpha - 1)
                  + log((alpha - 1)/alpha),
   clamped at 0 (and exactly 0 when the total rdp is 0: q == 0, steps == 0
   or sigma == inf). best_order (may be null) receives the minimising order,
   nan when every order gives +inf. orders for which dpprof_rdp_sgm reports
   DPPROF__PRIV_ENOCONV are skipped (the minimum over the rest is still a
   valid bound).
   errors: ENULL (eps null), EINVAL (q outside [0,1], sigma < 0,
   steps < 0, delta outside (0,1), an order <= 1 or > 1e6 and finite,
   n_orders <= 0 with orders given, nan anywhere). */
DPPROF_API int dpprof_rdp_epsilon(double q, double sigma, long long steps,
                                  double delta, const double *orders,
                                  int n_orders, double *eps,
                                  double *best_order);

/* same, with the classic conversion eps = steps*rdp - log(delta)/(alpha-1)
   (mironov 2017, prop. 3), for comparison with older published numbers
   (tf-privacy before 2021, abadi et al. style accounting). */
DPPROF_API int dpprof_rdp_epsilon_classic(double q, double sigma,
                                          long long steps, double delta,
                                          const double *orders, int n_orders,
                                          double *eps, double *best_order);

/* smallest noise multiplier (to 1e-6 relative, bisection on log sigma) for
   which dpprof_rdp_epsilon over the default orders gives eps <= target_eps.
   q == 0 or steps == 0 -> 0 when reachable, and 0 where no noise reaches the
   target already (dpprof_noiseless_epsilon: a record is drawn with a chance
   under delta). errors: ENULL, EINVAL
   (target_eps <= 0 or nan, others as dpprof_rdp_epsilon), ERANGE (target
   below what any sigma <= 1e6 reaches). */
DPPROF_API int dpprof_rdp_sigma_for_epsilon(double q, long long steps,
                                            double delta, double target_eps,
                                            double *sigma);

/* the tight accountant: epsilon at delta of `steps` compositions of the poisson-subsampled gaussian
   (rate q, noise multiplier sigma) from its privacy loss distribution, the larger of the add and the remove
   neighbour. connect-the-dots discretization on a grid of interval h: a pessimistic pair, so the result bounds
   the mechanism's epsilon from above; tails of at most 1e-16 of mass and the fft's roundoff moved up, or
   counted into delta where chernoff's bound on a composed tail says so, in all at most 1e-6 of delta.
   h <= 0: the interval follows epsilon and the steps (about 5e-5 of epsilon's worth of pessimism; at least
   1e-8), twice as coarse while a grid would pass 2^20 points. over q 1e-4..1, sigma 0.4..5, 1..1e5 steps,
   delta 1e-5 and 1e-8 never below dp_accounting 0.6.0's PLD at the same interval by more than 1e-5 relative
   (experiments/peers.py accountant; docs/dp.md). time and memory bounded by the grid's 2^20 points: under
   5 s to 1e7 steps. errors: ENULL, EINVAL (q, sigma, delta out of domain), ERANGE (a fixed h whose grid
   passes 2^20 points, a sigma whose loss no double holds, or a mass at infinity past delta: dpprof_privacy_of reports
   rdp's bound then). the epsilon is never above dpprof_rdp_epsilon's or dpprof_noiseless_epsilon's (both upper
   bounds too: the smallest of the three is the answer), and never below the exact epsilon: its losses past 700 (sigma
   under about 0.03) are summed as logs, where exp would pass a double */
DPPROF_API int dpprof_pld_epsilon(double q, double sigma, long long steps, double delta, double h, double *eps);
/* the exact epsilon of `steps` poisson-subsampled steps (rate q) with no noise at all (sigma 0): infinite unless the
   chance that a record is drawn in any step, 1 - (1 - q)^steps, is at most delta; then log(1 - delta) - steps
   log(1 - q) of the add neighbour, or 0. more noise is post-processing, so it bounds every sigma's epsilon from
   above: where it meets a target, every sigma does. errors: ENULL, EINVAL (q, delta out of domain, steps < 0) */
DPPROF_API int dpprof_noiseless_epsilon(double q, long long steps, double delta, double *eps);
/* the smallest sigma (to 5e-4 relative, bisection and interpolation on dpprof_pld_epsilon itself, at h, or at
   the interval dpprof_pld_epsilon takes for each sigma where h <= 0: what a report of that sigma gives) whose
   epsilon is at most target_eps; 0 where no noise reaches it (dpprof_noiseless_epsilon). errors as
   dpprof_rdp_sigma_for_epsilon */
DPPROF_API int dpprof_pld_sigma_for_epsilon(double q, long long steps, double delta, double target_eps, double h, double *sigma);
/* a line for each evaluation of the accountant in a sigma search (dpprof_pld_sigma_for_epsilon: at most 48, about
   25 in practice, each as long as a dpprof_pld_epsilon call), to fn with user and the search's cpu seconds so far;
   fn NULL (the default): none. one
   function for the process: set it before the search, not from two threads at once */
DPPROF_API void dpprof_privacy_progress(void (*fn)(void *user, double seconds, const char *line), void *user);

#ifdef __cplusplus
}
#endif

/* ===========================================================================
   shared host/device section: defined in every unit (see DPPROF__HDI).
   every floating-point operation below goes through DPPROF__MUL/ADD/SUB/
   DIV/SQRT/FADD, and each function opens with the anti-contraction guards.
   =========================================================================== */

/* ieee 754 binary64 bit patterns used below */
#define DPPROF__F64_MANT_MASK 0x000fffffffffffffULL
#define DPPROF__F64_ONE_BITS 0x3ff0000000000000ULL
#define DPPROF__F64_SQRT2_BITS 0x3ff6a09e667f3bcdULL /* 1.4142135623730951 */
#define DPPROF__F64_PINF_BITS 0x7ff0000000000000ULL
#define DPPROF__F64_NINF_BITS 0xfff0000000000000ULL
#define DPPROF__F64_QNAN_BITS 0x7ff8000000000000ULL

DPPROF__HDI uint64_t dpprof__f64_to_bits(double x) {
#if defined(__CUDA_ARCH__)
    return (uint64_t)__double_as_longlong(x);
#else
    /* union punning: defined in c11, documented as supported by gcc, clang
       and msvc in c++; avoids needing <string.h> for memcpy */
    union {
        double d;
        uint64_t u;
    } p;
    p.d = x;
    return p.u;
#endif
}

DPPROF__HDI double dpprof__f64_from_bits(uint64_t b) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double((long long)b);
#else
    union {
        double d;
        uint64_t u;
    } p;
    p.u = b;
    return p.d;
#endif
}

/* philox4x32 with 10 rounds (salmon et al. sc'11): each round multiplies the
   even words by the two philox multipliers, crosses the halves with xor of
   the odd words and the key, and bumps the key by the weyl constants
   (golden ratio and sqrt(3)-1 in 32-bit fixed point). integer only, so it is
   trivially identical on host and device. */
DPPROF__HDI dpprof_u32x4 dpprof_philox4x32_10(dpprof_u32x4 ctr, uint32_t key0,
                                              uint32_t key1) {
    int round;
    for (round = 0; round < 10; ++round) {
        uint64_t p0, p1;
        dpprof_u32x4 next;
        if (round > 0) {
            key0 = (uint32_t)(key0 + 0x9E3779B9u);
            key1 = (uint32_t)(key1 + 0xBB67AE85u);
        }
        p0 = (uint64_t)0xD2511F53u * (uint64_t)ctr.v[0];
        p1 = (uint64_t)0xCD9E8D57u * (uint64_t)ctr.v[2];
        next.v[0] = (uint32_t)(p1 >> 32) ^ ctr.v[1] ^ key0;
        next.v[1] = (uint32_t)p1;
        next.v[2] = (uint32_t)(p0 >> 32) ^ ctr.v[3] ^ key1;
        next.v[3] = (uint32_t)p0;
        ctr = next;
    }
    return ctr;
}

/* the key of a plain stream: the seed in w[0] (low half) and w[1], the rest 0 */
DPPROF__HDI dpprof_noise_key dpprof_noise_seed(uint64_t seed) {
    dpprof_noise_key k;
    int i;
    for (i = 0; i < 8; i++) k.w[i] = 0;
    k.w[0] = (uint32_t)seed;
    k.w[1] = (uint32_t)(seed >> 32);
    return k;
}

/* the chacha20 block function (bernstein 2008, the original layout: a 64-bit block counter and a 64-bit nonce; rfc
   8439 section 2.3 is the same function with state words 12..15 read as a 32-bit counter and a 96-bit nonce, so its
   test vector is state words 12..15 = counter lo, counter hi, nonce lo, nonce hi): 20 rounds of 32-bit adds, xors
   and rotations over the constants, the 256-bit key, the counter and the nonce, plus the input. a stream cipher
   made for keys of this size; integer only, so the same on host and device */
#define DPPROF__ROTL32(x, r) (((x) << (r)) | ((x) >> (32 - (r))))
#define DPPROF__CHACHA_QR(a, b, c, d)          \
    a += b, d ^= a, d = DPPROF__ROTL32(d, 16); \
    c += d, b ^= c, b = DPPROF__ROTL32(b, 12); \
    a += b, d ^= a, d = DPPROF__ROTL32(d, 8);  \
    c += d, b ^= c, b = DPPROF__ROTL32(b, 7)
DPPROF__HDI void dpprof_chacha20_block(const dpprof_noise_key *key, uint64_t counter, uint64_t nonce, uint32_t out[16]) {
    uint32_t in[16], x[16];
    int i;
    in[0] = 0x61707865u, in[1] = 0x3320646eu, in[2] = 0x79622d32u, in[3] = 0x6b206574u; /* "expand 32-byte k" */
    for (i = 0; i < 8; i++) in[4 + i] = key->w[i];
    in[12] = (uint32_t)counter, in[13] = (uint32_t)(counter >> 32), in[14] = (uint32_t)nonce, in[15] = (uint32_t)(nonce >> 32);
    for (i = 0; i < 16; i++) x[i] = in[i];
    for (i = 0; i < 10; i++) { /* a column round and a diagonal round */
        DPPROF__CHACHA_QR(x[0], x[4], x[8], x[12]);
        DPPROF__CHACHA_QR(x[1], x[5], x[9], x[13]);
        DPPROF__CHACHA_QR(x[2], x[6], x[10], x[14]);
        DPPROF__CHACHA_QR(x[3], x[7], x[11], x[15]);
        DPPROF__CHACHA_QR(x[0], x[5], x[10], x[15]);
        DPPROF__CHACHA_QR(x[1], x[6], x[11], x[12]);
        DPPROF__CHACHA_QR(x[2], x[7], x[8], x[13]);
        DPPROF__CHACHA_QR(x[3], x[4], x[9], x[14]);
    }
    for (i = 0; i < 16; i++) out[i] = x[i] + in[i];
}
#undef DPPROF__CHACHA_QR
#undef DPPROF__ROTL32

/* natural log of a positive double from +, -, *, / and bit manipulation only.
   x = 2^k * m with m in [sqrt(2)/2, sqrt(2)] (exponent split by bit ops, so
   exact); with f = m - 1 (exact by sterbenz) and s = f/(2+f),
   log(m) = 2 atanh(s) = f - (hfsq - s*(hfsq + R(s^2))), hfsq = f^2/2,
   R(z) = sum_{n>=1} 2 z^n/(2n+1): the big term f is exact, so rounding only
   touches the small correction. |s| <= 0.1716, z <= 0.0295, so 11 taylor
   terms leave a truncation error below 1e-18 relative. k*ln2 is split into
   ln2_hi (low 21 bits zero, so k*ln2_hi is exact) and ln2_lo.
   measured (test_privacy.c, vs logl with a 64-bit mantissa): max 1.50e-16
   relative (0.84 ulp) over 2^24 philox uniforms in (0,1), 1.46e-16
   (0.79 ulp) over 2^22 doubles spanning 2^-1074 .. 2^1024.
   log(0) = -inf, log(x < 0 or nan) = nan, log(+inf) = +inf. */
DPPROF__HDI DPPROF__FP_STRICT double dpprof__log(double x) {
    DPPROF__FP_STRICT_BODY
    const double ln2_hi = 6.9314718036912382e-01; /* 0x3fe62e42fee00000 */
    const double ln2_lo = 1.9082149292705877e-10; /* 0x3dea39ef35793c76 */
    uint64_t b;
    int k = 0;
    double m, f, hfsq, s, z, r, dk;
    if (!(x > 0.0)) {
        return (x == 0.0) ? dpprof__f64_from_bits(DPPROF__F64_NINF_BITS)
                          : dpprof__f64_from_bits(DPPROF__F64_QNAN_BITS);
    }
    b = dpprof__f64_to_bits(x);
    if ((b >> 52) >= 0x7ffu) {
        return x; /* +inf */
    }
    if ((b >> 52) == 0u) {
        /* subnormal: scale by 2^54 first (exact) so the split sees a normal */
        x = DPPROF__MUL(x, 18014398509481984.0);
        b = dpprof__f64_to_bits(x);
        k = -54;
    }
    k += (int)(b >> 52) - 1023;
    b = (b & DPPROF__F64_MANT_MASK) | DPPROF__F64_ONE_BITS; /* m in [1,2) */
    if (b > DPPROF__F64_SQRT2_BITS) {
        /* halve m (exponent bits only) to centre the range on 1 */
        b -= (uint64_t)1 << 52;
        k += 1;
    }
    m = dpprof__f64_from_bits(b);
    f = DPPROF__SUB(m, 1.0);
    hfsq = DPPROF__MUL(DPPROF__MUL(0.5, f), f);
    s = DPPROF__DIV(f, DPPROF__ADD(2.0, f));
    z = DPPROF__MUL(s, s);
    /* horner in z with the taylor coefficients 2/(2n+1), n = 11..1 */
    r = 8.6956521739130432e-02;                                 /* 2/23 */
    r = DPPROF__ADD(9.5238095238095233e-02, DPPROF__MUL(z, r)); /* 2/21 */
    r = DPPROF__ADD(1.0526315789473684e-01, DPPROF__MUL(z, r)); /* 2/19 */
    r = DPPROF__ADD(1.1764705882352941e-01, DPPROF__MUL(z, r)); /* 2/17 */
    r = DPPROF__ADD(1.3333333333333333e-01, DPPROF__MUL(z, r)); /* 2/15 */
    r = DPPROF__ADD(1.5384615384615385e-01, DPPROF__MUL(z, r)); /* 2/13 */
    r = DPPROF__ADD(1.8181818181818182e-01, DPPROF__MUL(z, r)); /* 2/11 */
    r = DPPROF__ADD(2.2222222222222221e-01, DPPROF__MUL(z, r)); /* 2/9 */
    r = DPPROF__ADD(2.8571428571428570e-01, DPPROF__MUL(z, r)); /* 2/7 */
    r = DPPROF__ADD(4.0000000000000002e-01, DPPROF__MUL(z, r)); /* 2/5 */
    r = DPPROF__ADD(6.6666666666666663e-01, DPPROF__MUL(z, r)); /* 2/3 */
    r = DPPROF__MUL(z, r);
    dk = (double)k;
    /* k*ln2_hi + (f - (hfsq - (s*(hfsq + r) + k*ln2_lo))), small terms first */
    return DPPROF__SUB(
        DPPROF__MUL(dk, ln2_hi),
        DPPROF__SUB(
            DPPROF__SUB(hfsq, DPPROF__ADD(DPPROF__MUL(s, DPPROF__ADD(hfsq, r)),
                                          DPPROF__MUL(dk, ln2_lo))),
            f));
}

/* sin(2 pi u) and cos(2 pi u) from +, -, *, / only. the reduction is exact:
   t = 4u (exact power-of-two scaling) counts quarter turns, r = t - round(t)
   is exact (an integer subtracted from a double with the same or larger
   exponent), so no multiple of pi is ever subtracted in floating point and
   the zeros of sin/cos at multiples of a quarter turn come out with full
   relative accuracy. with theta = r*pi/2 in [-pi/4, pi/4], taylor series to
   theta^19 (sin) and theta^18 (cos) truncate below 1e-18; cos uses
   1 - theta^2/2 with the rounding error of that subtraction carried
   separately. domain: |u| < 2^60 (else nan); the noise only uses (0,1).
   measured (test_privacy.c, vs sinl/cosl): max 2.59e-16 relative (1.83 ulp)
   over 2^24 uniforms; the rounding of theta = r*pi/2 dominates, glibc
   sin/cos evaluated on the same rounded theta show the same 1.83 ulp. */
DPPROF__HDI DPPROF__FP_STRICT void dpprof__sincos_2pi(double u, double *sin_out,
                                                      double *cos_out) {
    DPPROF__FP_STRICT_BODY
    const double pio2 = 1.5707963267948966; /* 0x3ff921fb54442d18 */
    double t, r, th, z, ps, pc, sn, cs, hz, w, corr;
    int64_t n;
    unsigned quadrant;
    if (!(u < 1.152921504606846976e18 && u > -1.152921504606846976e18)) {
        *sin_out = dpprof__f64_from_bits(DPPROF__F64_QNAN_BITS);
        *cos_out = *sin_out;
        return;
    }
    t = DPPROF__MUL(u, 4.0);
    n = (int64_t)t; /* truncation toward zero ... */
    if ((double)n > t) {
        n -= 1; /* ... turned into floor */
    }
    r = DPPROF__SUB(t, (double)n); /* exact, in [0,1) */
    if (r > 0.5) {
        r = DPPROF__SUB(r, 1.0); /* exact (sterbenz), now in (-0.5,0] */
        n += 1;
    }
    quadrant = (unsigned)((uint64_t)n & 3u);
    th = DPPROF__MUL(r, pio2);
    z = DPPROF__MUL(th, th);
    /* sin: th + th*z*(-1/3! + z/5! - ... - z^8/19!) */
    ps = -8.2206352466243295e-18;                                  /* -1/19! */
    ps = DPPROF__ADD(2.8114572543455206e-15, DPPROF__MUL(z, ps));  /* 1/17! */
    ps = DPPROF__ADD(-7.6471637318198164e-13, DPPROF__MUL(z, ps)); /* 1/15! */
    ps = DPPROF__ADD(1.6059043836821613e-10, DPPROF__MUL(z, ps));  /* 1/13! */
    ps = DPPROF__ADD(-2.5052108385441720e-08, DPPROF__MUL(z, ps)); /* 1/11! */
    ps = DPPROF__ADD(2.7557319223985893e-06, DPPROF__MUL(z, ps));  /* 1/9! */
    ps = DPPROF__ADD(-1.9841269841269841e-04, DPPROF__MUL(z, ps)); /* 1/7! */
    ps = DPPROF__ADD(8.3333333333333332e-03, DPPROF__MUL(z, ps));  /* 1/5! */
    ps = DPPROF__ADD(-1.6666666666666666e-01, DPPROF__MUL(z, ps)); /* 1/3! */
    sn = DPPROF__ADD(th, DPPROF__MUL(DPPROF__MUL(th, z), ps));
    /* cos: (1 - z/2) + z^2*(1/4! - z/6! + ... - z^7/18!) */
    pc = -1.5619206968586225e-16;                                  /* -1/18! */
    pc = DPPROF__ADD(4.7794773323873853e-14, DPPROF__MUL(z, pc));  /* 1/16! */
    pc = DPPROF__ADD(-1.1470745597729725e-11, DPPROF__MUL(z, pc)); /* 1/14! */
    pc = DPPROF__ADD(2.0876756987868100e-09, DPPROF__MUL(z, pc));  /* 1/12! */
    pc = DPPROF__ADD(-2.7557319223985888e-07, DPPROF__MUL(z, pc)); /* 1/10! */
    pc = DPPROF__ADD(2.4801587301587302e-05, DPPROF__MUL(z, pc));  /* 1/8! */
    pc = DPPROF__ADD(-1.3888888888888889e-03, DPPROF__MUL(z, pc)); /* 1/6! */
    pc = DPPROF__ADD(4.1666666666666664e-02, DPPROF__MUL(z, pc));  /* 1/4! */
    hz = DPPROF__MUL(0.5, z);
    w = DPPROF__SUB(1.0, hz);
    corr = DPPROF__SUB(DPPROF__SUB(1.0, w), hz); /* rounding error of w */
    cs = DPPROF__ADD(w, DPPROF__ADD(corr, DPPROF__MUL(DPPROF__MUL(z, z), pc)));
    switch (quadrant) {
    case 0u:
        *sin_out = sn;
        *cos_out = cs;
        break;
    case 1u:
        *sin_out = cs;
        *cos_out = -sn;
        break;
    case 2u:
        *sin_out = -sn;
        *cos_out = -cs;
        break;
    default:
        *sin_out = -cs;
        *cos_out = sn;
        break;
    }
}

/* a philox word -> uniform in (0,1): ((double)x + 0.5) * 2^-32. both steps
   are exact (33 significant bits at most), so the open interval is
   guaranteed: smallest 2^-33, largest 1 - 2^-33. */
DPPROF__HDI DPPROF__FP_STRICT double dpprof__u01(uint32_t x) {
    DPPROF__FP_STRICT_BODY
    return DPPROF__MUL(DPPROF__ADD((double)x, 0.5), 2.3283064365386962890625e-10);
}

/* box-muller on one pair of words: r = sqrt(-2 ln u_a),
   z_a = r cos(2 pi u_b), z_b = r sin(2 pi u_b). since u_a >= 2^-33 the
   output is bounded by sqrt(66 ln 2) = 6.76; the tail beyond that has
   probability 1.4e-11 and is absent. */
DPPROF__HDI DPPROF__FP_STRICT void dpprof__box_muller(uint32_t xa, uint32_t xb,
                                                      double *za, double *zb) {
    DPPROF__FP_STRICT_BODY
    double r, s, c;
    r = DPPROF__SQRT(DPPROF__MUL(-2.0, dpprof__log(dpprof__u01(xa))));
    dpprof__sincos_2pi(dpprof__u01(xb), &s, &c);
    *za = DPPROF__MUL(r, c);
    *zb = DPPROF__MUL(r, s);
}

/* four standard normals for counter block `block` of stream `stream` under
   `key`: ctr = {block lo, block hi, stream lo, stream hi},
   philox's key = {key.w[0], key.w[1]} (a seed); words (x0,x1) -> out[0..1], (x2,x3) -> out[2..3].
   streams are 63 bits: the top bit selects the hardened sampler below.
   note for privacy claims: a plain stream is floating-point gaussian noise
   (32-bit uniforms, tail cut at 6.76 sigma), open to the floating-point
   attacks on samplers (mironov, ccs'12, for laplace; jin et al., s&p'22, for
   gaussians); a secure stream is hardened as below. */
/* a stream with this bit set is the secure one: its uniforms come from chacha20 under the whole 256-bit key (one
   block of 16 words for a block of four normals: block counter = block, nonce = the stream without the bit), and
   each normal is the sum of four box-muller normals, halved (holohan and braghin, "secure random sampling in
   differential privacy", esorics 2021, section 5.1 with n = 2, as opacus's secure_mode does): the sum's
   floating-point values no longer reveal the samples that made them, which is what the attacks read. the same
   distribution, the same bits on host and device. the sum is a double; the noise a gradient receives is
   (float)(stddev * z) added in float (dpprof__noise_accum), so the released value is a float32 rounding of
   gradient plus noise, as in every float32 training */
#define DPPROF_NOISE_SECURE (UINT64_C(1) << 63)

DPPROF__HDI void dpprof__normal4_block(dpprof_noise_key key, uint64_t stream, uint64_t block, double out[4]) {
    dpprof_u32x4 ctr, x;
    ctr.v[0] = (uint32_t)block;
    ctr.v[1] = (uint32_t)(block >> 32);
    ctr.v[2] = (uint32_t)stream;
    ctr.v[3] = (uint32_t)(stream >> 32);
    x = dpprof_philox4x32_10(ctr, key.w[0], key.w[1]);
    dpprof__box_muller(x.v[0], x.v[1], &out[0], &out[1]);
    dpprof__box_muller(x.v[2], x.v[3], &out[2], &out[3]);
}

DPPROF__HDI DPPROF__FP_STRICT void dpprof_normal4(dpprof_noise_key key, uint64_t stream, uint64_t block, double out[4]) {
    DPPROF__FP_STRICT_BODY
    if (stream & DPPROF_NOISE_SECURE) { /* one chacha20 block: 16 words, 16 normals, four summed into each */
        uint32_t w[16];
        double z[16];
        int i;
        dpprof_chacha20_block(&key, block, stream & ~DPPROF_NOISE_SECURE, w);
        for (i = 0; i < 16; i += 2) dpprof__box_muller(w[i], w[i + 1], &z[i], &z[i + 1]);
        for (i = 0; i < 4; i++) out[i] = 0.5 * DPPROF__ADD(DPPROF__ADD(DPPROF__ADD(z[i], z[4 + i]), z[8 + i]), z[12 + i]); /* halving: exact */
    } else dpprof__normal4_block(key, stream, block, out);
}

/* the normal for element `index` of (key, stream): block = index/4,
   lane = index%4, so any element can be produced independently (one gpu
   thread per element or per block of four give the same values). */
DPPROF__HDI double dpprof_normal(dpprof_noise_key key, uint64_t stream, uint64_t index) {
    double z[4];
    dpprof_normal4(key, stream, index >> 2, z);
    return z[index & 3u];
}

/* acc + (float)(stddev * z): the double product is rounded to double, then
   to float (both round-to-nearest-even on host and device), then added in
   float. the gpu kernel must use this helper so that its bits match
   dpprof_add_noise_ref. */
DPPROF__HDI DPPROF__FP_STRICT float dpprof__noise_accum(float acc, double stddev,
                                                        double z) {
    DPPROF__FP_STRICT_BODY
    float v = (float)DPPROF__MUL(stddev, z);
    return DPPROF__FADD(acc, v);
}

#endif /* DPPROF_PRIVACY_DECL_H */

/* =============================================================================================
   PART 4: ops
   the CPU reference of every op and DP op (dpprof_<op>_ref) with its analytic cost (dpprof_<op>_cost).
   Contract: a reference is the definition a GPU kernel is tested against and a backward is tested against
   finite differences in double; a cost's flops and bytes are what the op must do, counted the same way for
   every backend.
   ============================================================================================= */
/* ---- cpu reference ops: declarations -----------------------------------------------------
   dimension vocabulary: B batch, T sequence, C channels, N = B*T rows, IC/OC linear in/out features,
   NH query heads, NKV key/value heads (GQA: query head h reads kv head h / (NH/NKV)), HS head size,
   V vocabulary (or classes). all tensors are row-major dpprof_real; token/target ids are int.
   linear layers follow pytorch: weight is (OC, IC), y = x W^T, no bias.
   gradients of parameters (dweight, dwte) always ACCUMULATE (+=); each input gradient says
   "+=" (accumulate) or "overwritten" below. long sums accumulate in double whatever dpprof_real is.
   no op allocates; attention keeps per-row state on the stack, bounded by DPPROF_MAX_HEAD_SIZE. */

#ifndef DPPROF_MAX_HEAD_SIZE
#define DPPROF_MAX_HEAD_SIZE 256 /* largest HS the reference attention / rope accept (stack arrays) */
#endif

/* matmul. out (N,OC), inp (N,IC), weight (OC,IC): out = inp @ weight^T, overwritten */
DPPROF_API void dpprof_matmul_fwd_ref(dpprof_real *out, const dpprof_real *inp, const dpprof_real *weight, int N, int IC, int OC);
/* dinp (N,IC) += dout (N,OC) @ weight (OC,IC); dweight (OC,IC) += dout^T @ inp (N,IC); either output may be NULL (skipped) */
DPPROF_API void dpprof_matmul_bwd_ref(dpprof_real *dinp, dpprof_real *dweight, const dpprof_real *dout, const dpprof_real *inp, const dpprof_real *weight, int N, int IC, int OC);

/* embedding. out (N,C) overwritten = wte (V,C) row tokens[n]; tokens (N) in [0,V) */
DPPROF_API void dpprof_embedding_fwd_ref(dpprof_real *out, const int *tokens, const dpprof_real *wte, int N, int C);
/* dwte (V,C) += dout (N,C) rows scattered by tokens (N); repeated tokens are summed in double */
DPPROF_API void dpprof_embedding_bwd_ref(dpprof_real *dwte, const dpprof_real *dout, const int *tokens, int N, int C);

/* rmsnorm. out (N,C) overwritten = inp (N,C) * rstd * weight (C); rstd (N) overwritten = 1/sqrt(mean(inp^2) + eps) */
DPPROF_API void dpprof_rmsnorm_fwd_ref(dpprof_real *out, dpprof_real *rstd, const dpprof_real *inp, const dpprof_real *weight, int N, int C, float eps);
/* the residual add and the norm after it: res (N,C) += other (N,C) as dpprof_add_ref, then dpprof_rmsnorm_fwd_ref of
   res into out and rstd; the gpu op reads res and other once and never reads the sum back */
DPPROF_API void dpprof_add_rmsnorm_fwd_ref(dpprof_real *out, dpprof_real *rstd, dpprof_real *res, const dpprof_real *other, const dpprof_real *weight, int N, int C, float eps);
/* dinp (N,C) +=, dweight (C) += (may be NULL); dout (N,C), inp (N,C), weight (C), rstd (N) from the forward */
DPPROF_API void dpprof_rmsnorm_bwd_ref(dpprof_real *dinp, dpprof_real *dweight, const dpprof_real *dout, const dpprof_real *inp, const dpprof_real *weight, const dpprof_real *rstd, int N, int C);

/* rope, hf-llama rotate_half convention, in place. x (B,T,NH,HS), row t has position t; HS even, <= DPPROF_MAX_HEAD_SIZE */
DPPROF_API void dpprof_rope_fwd_ref(dpprof_real *x, int B, int T, int NH, int HS, double theta);
/* backward of rope, in place: dx (B,T,NH,HS) is rotated by -angle (the transpose of the forward) */
DPPROF_API void dpprof_rope_bwd_ref(dpprof_real *dx, int B, int T, int NH, int HS, double theta);

/* causal gqa attention, scale 1/sqrt(HS). out (B,T,NH,HS) overwritten, lse (B,NH,T) overwritten (natural log-sum-exp
   of the scaled scores); q (B,T,NH,HS), k (B,T,NKV,HS), v (B,T,NKV,HS). no T x T storage (online softmax). */
DPPROF_API void dpprof_attention_fwd_ref(dpprof_real *out, dpprof_real *lse, const dpprof_real *q, const dpprof_real *k, const dpprof_real *v, int B, int T, int NH, int NKV, int HS);
/* dq (B,T,NH,HS), dk (B,T,NKV,HS), dv (B,T,NKV,HS) all OVERWRITTEN; dout, q, out (B,T,NH,HS); k, v (B,T,NKV,HS); lse (B,NH,T).
   flash-style recomputation, no T x T storage. dq is used as scratch during the call, so dq must not alias any input. */
DPPROF_API void dpprof_attention_bwd_ref(dpprof_real *dq, dpprof_real *dk, dpprof_real *dv, const dpprof_real *dout, const dpprof_real *q, const dpprof_real *k, const dpprof_real *v, const dpprof_real *out, const dpprof_real *lse, int B, int T, int NH, int NKV, int HS);

/* swiglu. h (n) overwritten = silu(gate (n)) * up (n), silu(x) = x / (1 + exp(-x)) */
DPPROF_API void dpprof_swiglu_fwd_ref(dpprof_real *h, const dpprof_real *gate, const dpprof_real *up, size_t n);
/* dgate (n), dup (n) OVERWRITTEN; dh, gate, up (n) */
DPPROF_API void dpprof_swiglu_bwd_ref(dpprof_real *dgate, dpprof_real *dup, const dpprof_real *dh, const dpprof_real *gate, const dpprof_real *up, size_t n);

/* out (n) overwritten = a (n) + b (n); out may alias a or b */
DPPROF_API void dpprof_add_ref(dpprof_real *out, const dpprof_real *a, const dpprof_real *b, size_t n);

/* per-sample cross-entropy. losses (B) overwritten = (1/T) sum_t -log softmax(logits (B,T,V))[targets (B,T)] */
DPPROF_API void dpprof_crossentropy_fwd_ref(dpprof_real *losses, const dpprof_real *logits, const int *targets, int B, int T, int V);
/* dlogits (B,T,V) OVERWRITTEN = dlosses (B)[b]/T * (softmax(logits (B,T,V)) - onehot(targets (B,T))); dlogits may alias logits */
DPPROF_API void dpprof_crossentropy_bwd_ref(dpprof_real *dlogits, const dpprof_real *logits, const int *targets, const dpprof_real *dlosses, int B, int T, int V);

/* out (B,C) overwritten = inp (B,T,C) row T-1 (the classification head reads the last token) */
DPPROF_API void dpprof_last_token_fwd_ref(dpprof_real *out, const dpprof_real *inp, int B, int T, int C);
/* dinp (B,T,C) += dout (B,C) into row T-1; other rows untouched */
DPPROF_API void dpprof_last_token_bwd_ref(dpprof_real *dinp, const dpprof_real *dout, int B, int T, int C);

/* adamw (pytorch, decoupled decay), in place on param, m, v (n); grad (n); t is the 1-based step */
DPPROF_API void dpprof_adam_ref(dpprof_real *param, dpprof_real *m, dpprof_real *v, const dpprof_real *grad, size_t n, double lr, double b1, double b2, double eps, double wd, int t);
/* param (n) -= lr * grad (n) */
DPPROF_API void dpprof_sgd_ref(dpprof_real *param, const dpprof_real *grad, size_t n, double lr);
/* y (n) overwritten = alpha * x (n); y may alias x */
DPPROF_API void dpprof_scale_ref(dpprof_real *y, const dpprof_real *x, size_t n, double alpha);

/* ---- analytic cost of each op, for the dry backend ------------------------------------------------
   flops: a multiply-add counts 2; exp, sqrt, divide, compare count 1 each. these are the algorithmic
   counts of the op (what a good kernel must do), not what the reference loops happen to do.
   bytes: minimum dram traffic = every input read once + every output written once, elem_size bytes
   per tensor element, 4 per int. an accumulated (+=) or in-place tensor is read and written (2x).
   all arithmetic is in double so llama-8b sizes at long T cannot overflow. */
typedef struct dpprof_cost {
    double flops;
    double bytes;
} dpprof_cost;

/* flops 2*N*IC*OC; bytes es*(N*IC + OC*IC + N*OC) */
DPPROF_API dpprof_cost dpprof_matmul_fwd_cost(int N, int IC, int OC, int elem_size);
/* flops 2*N*IC*OC (dinp) + 2*N*IC*OC (dweight) + N*IC + OC*IC (the += adds);
   bytes es*(N*OC dout + N*IC inp + OC*IC weight + 2*N*IC dinp + 2*OC*IC dweight). assumes both outputs wanted */
DPPROF_API dpprof_cost dpprof_matmul_bwd_cost(int N, int IC, int OC, int elem_size);
/* flops 0; bytes 4*N tokens + es*(N*C rows read + N*C written) */
DPPROF_API dpprof_cost dpprof_embedding_fwd_cost(int N, int C, int elem_size);
/* flops N*C adds; bytes 4*N + es*(N*C dout + 2*N*C dwte rows) (upper bound: a repeated token's row counted per occurrence) */
DPPROF_API dpprof_cost dpprof_embedding_bwd_cost(int N, int C, int elem_size);
/* flops N*(4*C + 4): sum of squares 2C, mean/eps/sqrt/reciprocal 4, x*rstd*w 2C; bytes es*(2*N*C + C + N) */
DPPROF_API dpprof_cost dpprof_rmsnorm_fwd_cost(int N, int C, int elem_size);
/* the add's N*C flops and dpprof_rmsnorm_fwd_cost's; bytes es*(4*N*C res read and written, other, out + C + N) */
DPPROF_API dpprof_cost dpprof_add_rmsnorm_fwd_cost(int N, int C, int elem_size);
/* flops N*(11*C + 3): row dot sum(dout*w*x) 3C, dinp 5C, dweight 3C, per-row constant 3;
   bytes es*(N*C dout + N*C inp + C weight + N rstd + 2*N*C dinp + 2*C dweight) */
DPPROF_API dpprof_cost dpprof_rmsnorm_bwd_cost(int N, int C, int elem_size);
/* flops 3*B*T*NH*HS (each rotated pair: 4 mul + 2 add; the cos/sin table, T*HS/2 entries, is not counted);
   bytes es*2*B*T*NH*HS (in place) */
DPPROF_API dpprof_cost dpprof_rope_fwd_cost(int B, int T, int NH, int HS, int elem_size);
/* same as the forward */
DPPROF_API dpprof_cost dpprof_rope_bwd_cost(int B, int T, int NH, int HS, int elem_size);
/* P = B*NH*T*(T+1)/2 causal (query, key) pairs. flops 2*HS*P (q.k) + 2*HS*P (p*v) + 5*P (scale, running max,
   subtract, exp, sum) + B*T*NH*HS (final divide); i.e. the two matmuls together are 2*B*NH*HS*T*(T+1).
   bytes es*(2*B*T*NH*HS q,out + 2*B*T*NKV*HS k,v + B*NH*T lse) */
DPPROF_API dpprof_cost dpprof_attention_fwd_cost(int B, int T, int NH, int NKV, int HS, int elem_size);
/* flash-style backward, P as above. flops 10*HS*P (recompute q.k, dout.v, and the dq, dk, dv updates, 2*HS each)
   + 4*P (exp(s - lse), dp - D, * p, * scale) + 2*B*T*NH*HS (D = rowsum(dout*out)); i.e. 2.5x the forward matmuls.
   bytes es*(3*B*T*NH*HS dout,q,out + 2*B*T*NKV*HS k,v + B*NH*T lse + B*T*NH*HS dq + 2*B*T*NKV*HS dk,dv) */
DPPROF_API dpprof_cost dpprof_attention_bwd_cost(int B, int T, int NH, int NKV, int HS, int elem_size);
/* flops 5*n (negate, exp, +1, divide, *up); bytes es*3*n */
DPPROF_API dpprof_cost dpprof_swiglu_fwd_cost(size_t n, int elem_size);
/* flops 12*n: sigmoid 4, silu 1, dup 1, dsilu = s*(1 + g*(1-s)) 4, dgate = dh*up*dsilu 2; bytes es*5*n */
DPPROF_API dpprof_cost dpprof_swiglu_bwd_cost(size_t n, int elem_size);
/* flops n; bytes es*3*n */
DPPROF_API dpprof_cost dpprof_add_cost(size_t n, int elem_size);
/* flops B*T*(4*V + 4) + B: per row max V, sum exp 3V, log + max + minus target 3, +1 for the mean; per sample a divide;
   bytes es*B*T*V logits + 4*B*T targets + es*B losses */
DPPROF_API dpprof_cost dpprof_crossentropy_fwd_cost(int B, int T, int V, int elem_size);
/* flops B*T*(7*V + 2): per row max V, sum exp 3V, per element subtract, exp, scale 3V, row constant and onehot 2;
   bytes es*(B*T*V logits + B dlosses + B*T*V dlogits) + 4*B*T targets (in place counts the same) */
DPPROF_API dpprof_cost dpprof_crossentropy_bwd_cost(int B, int T, int V, int elem_size);
/* flops 0; bytes es*2*B*C (only row T-1 of each sample is read) */
DPPROF_API dpprof_cost dpprof_last_token_fwd_cost(int B, int T, int C, int elem_size);
/* flops B*C adds; bytes es*(B*C dout + 2*B*C dinp row T-1) */
DPPROF_API dpprof_cost dpprof_last_token_bwd_cost(int B, int T, int C, int elem_size);
/* flops 16*n: m 3, v 4, two bias corrections 2, sqrt 1, +eps 1, divide 1, wd*p 1, add 1, *lr 1, subtract 1;
   bytes es*7*n (read param, m, v, grad; write param, m, v) */
DPPROF_API dpprof_cost dpprof_adam_cost(size_t n, int elem_size);
/* flops 2*n; bytes es*3*n */
DPPROF_API dpprof_cost dpprof_sgd_cost(size_t n, int elem_size);
/* flops n; bytes es*2*n */
DPPROF_API dpprof_cost dpprof_scale_cost(size_t n, int elem_size);

/* ---- dp reference ops: declarations -------------------------------------------------------
   per-sample gradient norms and clipped sums of dp-sgd, on the cpu. same conventions as the cpu
   reference ops above, plus: n samples of a physical batch, each of T positions; a linear layer
   y = x W^T with W (OC,IC), input x (n,T,IC), output gradient dy (n,T,OC); the per-sample gradient of
   sample i is g_i = dy_i^T x_i (OC,IC). norms are SQUARED l2 (frobenius) norms and always accumulate
   (+=) into double norm2 (n), whatever dpprof_real is: they feed the clip factors, and a float
   accumulator would lose the small samples next to the large ones. clip factors c (n) are double too.
   "overwritten" outputs are written in full (every element, zeros included).
   the per-sample loss gradient of the second backward pass (book-keeping / ghost clipping) is only a
   scale of dlosses by c: dpprof_scale_ref does it, there is no separate op. */

#ifndef DPPROF_NORM_TILE
#define DPPROF_NORM_TILE 32 /* side of the position-pair tiles (gram flash) and of the g_i blocks (psg flash) */
#endif
#if DPPROF_NORM_TILE < 1 || DPPROF_NORM_TILE > 64
#error "DPPROF_NORM_TILE must be in [1, 64]: the psg flash keeps TILE*TILE doubles on the stack (32 KiB at 64)"
#endif

/* per-sample gradients, materialised (the opacus way): psg (n,OC,IC) overwritten, psg[i] = dy_i^T x_i;
   dy (n,T,OC), x (n,T,IC) */
DPPROF_API void dpprof_linear_psgrad_ref(dpprof_real *psg, const dpprof_real *dy, const dpprof_real *x, int n, int T, int IC, int OC);
/* norm2 (n) += sum of squares of row i of psg (n,P) */
DPPROF_API void dpprof_psgrad_sqnorm_ref(double *norm2, const dpprof_real *psg, int n, size_t P);
/* dw (P) += sum_i c[i] * row i of psg (n,P); c (n). the sum over i is in double, dw is rounded once */
DPPROF_API void dpprof_psgrad_clipsum_ref(dpprof_real *dw, const dpprof_real *psg, const double *c, int n, size_t P);

/* gram matrices: out (n,T,T) overwritten, out[i] = x_i x_i^T for x (n,T,D). symmetric: the upper triangle is
   computed and mirrored, so out[i] is exactly symmetric */
DPPROF_API void dpprof_gram_ref(dpprof_real *out, const dpprof_real *x, int n, int T, int D);
/* ghost norm from materialised grams: norm2 (n) += <ga_i, gg_i>_F for ga, gg (n,T,T). with ga = gram(x) and
   gg = gram(dy) this is ||dy_i^T x_i||_F^2 */
DPPROF_API void dpprof_gram_dot_ref(double *norm2, const dpprof_real *ga, const dpprof_real *gg, int n, int T);

/* flash norm, gram flavour: norm2 (n) += ||dy_i^T x_i||_F^2 = sum_{s,t} (x_i x_i^T)_st (dy_i dy_i^T)_st for
   dy (n,T,OC), x (n,T,IC). over tiles of DPPROF_NORM_TILE x DPPROF_NORM_TILE position pairs (s,t); only tile
   pairs with s-tile <= t-tile are computed and the off-diagonal ones count twice (the summand is symmetric in
   s,t); diagonal tiles are computed in full. never stores a T x T matrix. */
DPPROF_API void dpprof_linear_sqnorm_gram_ref(double *norm2, const dpprof_real *dy, const dpprof_real *x, int n, int T, int IC, int OC);
/* the same for m layers that read one input x (n,T,IC) (q, k, v; gate, up): norm2[j] (n) += the squared norms of
   layer j, whose output gradient is dy[j] (n,T,OC[j]); each layer's sums are dpprof_linear_sqnorm_gram_ref's */
DPPROF_API void dpprof_linear_sqnorm_gram_group_ref(double *const *norm2, const dpprof_real *const *dy, const int *OC, int m, const dpprof_real *x, int n, int T, int IC);
/* flash norm, per-sample-gradient flavour: norm2 (n) += ||dy_i^T x_i||_F^2, building g_i one
   DPPROF_NORM_TILE x DPPROF_NORM_TILE block at a time (summed over T in double on the stack, square-summed,
   discarded). never stores (OC,IC) per sample. dy (n,T,OC), x (n,T,IC) */
DPPROF_API void dpprof_linear_sqnorm_psg_ref(double *norm2, const dpprof_real *dy, const dpprof_real *x, int n, int T, int IC, int OC);
/* book-keeping clipped weight gradient: dw (OC,IC) += sum_i c[i] dy_i^T x_i, one gemm over the n*T rows with
   dy scaled by c per sample; dy (n,T,OC), x (n,T,IC), c (n). with c = 1 it is dpprof_matmul_bwd_ref's dweight */
DPPROF_API void dpprof_linear_clipgrad_ref(dpprof_real *dw, const dpprof_real *dy, const dpprof_real *x, const double *c, int n, int T, int IC, int OC);
/* norm2 (n) += the squared norm of each sample of x (n, P), summed in double: book-keeping's batched bf16 clipped
   gradient bounds its rounding by the norms of a layer's dy and x (dpprof_clip_factors_bound_ref) */
DPPROF_API void dpprof_sample_sqnorm_ref(double *norm2, const dpprof_real *x, int n, size_t P);

/* embedding (V,C) looked up by tokens (n,T) in [0,V): the per-sample gradient has rows
   g_i[v] = sum_{t: tokens[i,t] = v} dy[i,t,:]. norm without materialising: norm2 (n) +=
   sum_{s,t: tok_s = tok_t} <dy_s, dy_t> (pairs s < t computed once and counted twice); dy (n,T,C) */
DPPROF_API void dpprof_embedding_sqnorm_ref(double *norm2, const dpprof_real *dy, const int *tokens, int n, int T, int C);
/* materialised: psg (n,V,C) overwritten with g_i; dy (n,T,C), tokens (n,T) in [0,V) */
DPPROF_API void dpprof_embedding_psgrad_ref(dpprof_real *psg, const dpprof_real *dy, const int *tokens, int n, int T, int V, int C);
/* clipped: dwte (V,C) += sum_i c[i] g_i; dy (n,T,C), tokens (n,T), c (n). every occurrence of a token in the
   whole batch is summed in double before the one rounding into dwte */
DPPROF_API void dpprof_embedding_clipgrad_ref(dpprof_real *dwte, const dpprof_real *dy, const int *tokens, const double *c, int n, int T, int C);

/* tied embedding and lm head: one matrix W (V,C) is the embedding (looked up by tokens (n,T)) and the head
   (logits = x W^T, x (n,T,C) the head's input), so its per-sample gradient is g_i = e_i + h_i with e_i the
   embedding's (rows sum_{s: tok_s = v} dy_s, dy (n,T,C) the gradient at the embedding's output) and
   h_i = dl_i^T x_i the head's (dl (n,T,V) the logits' gradient). ||g_i||^2 = ||e_i||^2 + ||h_i||^2 + 2<e_i,h_i>,
   and the cross term is sum_s <h_i[tok_s], dy_s> = sum_{s,t} dl_i[t, tok_s] <x_t, dy_s>: norm2 (n) += 2 of it,
   exactly, without any (V,C) per-sample tensor. tokens in [0,V) */
DPPROF_API void dpprof_tied_cross_ref(double *norm2, const dpprof_real *dl, const dpprof_real *x, const dpprof_real *dy, const int *tokens, int n, int T, int V, int C);

/* rmsnorm weight: per-sample gradient psg (n,C) overwritten, psg[i,c] = sum_t dout[i,t,c] * inp[i,t,c] * rstd[i,t];
   dout, inp (n,T,C), rstd (n,T) from the forward. the sum over i is dpprof_rmsnorm_bwd_ref's dweight */
DPPROF_API void dpprof_rmsnorm_psdweight_ref(dpprof_real *psg, const dpprof_real *dout, const dpprof_real *inp, const dpprof_real *rstd, int n, int T, int C);
/* the rmsnorm backward of the dp algorithms: dinp (n*T,C) += as dpprof_rmsnorm_bwd_ref (with no dweight), and
   psg (n,C) overwritten with the per-sample weight gradients as dpprof_rmsnorm_psdweight_ref; the gpu op reads
   dout and inp once for both */
DPPROF_API void dpprof_rmsnorm_bwd_ps_ref(dpprof_real *dinp, dpprof_real *psg, const dpprof_real *dout, const dpprof_real *inp, const dpprof_real *weight, const dpprof_real *rstd, int n, int T, int C);

/* flat clipping: c (n) overwritten, c[i] = min(1, clip / (sqrt(norm2[i]) + 1e-6)); norm2 (n) squared norms.
   a nan (or negative) norm gives a nan factor, never 1: a broken sample must not pass unclipped. c may alias norm2
   (in place). clip >= 0 */
DPPROF_API void dpprof_clip_factors_ref(double *c, const double *norm2, int n, double clip);
/* flat clipping with a bound on what rounding adds to each sample's clipped gradient: c[i] = min(1, clip /
   (sqrt(norm2[i]) + eps[i] + 1e-6)), eps (n) >= 0 (NULL: dpprof_clip_factors_ref). where a sample's computed
   contribution is c_i (g_i + r_i) with ||r_i|| <= eps[i], its norm stays within clip (Minkowski) */
DPPROF_API void dpprof_clip_factors_bound_ref(double *c, const double *norm2, const double *eps, int n, double clip);

/* which flash flavour is cheaper for one linear layer: 0 gram, 1 psg. compares the flops of
   dpprof_linear_sqnorm_gram_cost and dpprof_linear_sqnorm_psg_cost (roughly T*(T+TILE)*(IC+OC) against
   2*T*IC*OC per sample: gram wins at short T, psg at long T); a tie goes to gram. T, IC, OC >= 1 */
DPPROF_API int dpprof_flash_choice(int T, int IC, int OC);

/* ---- analytic cost of the dp ops (conventions of the costs above). norm2 and c are double whatever
   elem_size says: 8 bytes per element, norm2 read and written (+=) so 16 per sample, c read once (8).
   a multiply-add counts 2; "the +=" counts one add per accumulated element. ---- */

/* flops 2*n*T*IC*OC; bytes es*(n*T*OC dy + n*T*IC x + n*OC*IC psg) */
DPPROF_API dpprof_cost dpprof_linear_psgrad_cost(int n, int T, int IC, int OC, int elem_size);
/* flops n*(2*P + 1): a multiply-add per element, the += per sample; bytes es*n*P + 16*n */
DPPROF_API dpprof_cost dpprof_psgrad_sqnorm_cost(int n, size_t P, int elem_size);
/* flops 2*n*P + P: c[i]*psg multiply-add per element, the += into dw; bytes es*(n*P psg + 2*P dw) + 8*n c */
DPPROF_API dpprof_cost dpprof_psgrad_clipsum_cost(int n, size_t P, int elem_size);
/* flops n*T*(T+1)*D: the T*(T+1)/2 entries of the upper triangle, 2*D each (the mirror is free);
   bytes es*(n*T*D x + n*T*T out) */
DPPROF_API dpprof_cost dpprof_gram_cost(int n, int T, int D, int elem_size);
/* flops n*(2*T*T + 1); bytes es*2*n*T*T + 16*n */
DPPROF_API dpprof_cost dpprof_gram_dot_cost(int n, int T, int elem_size);
/* with b = DPPROF_NORM_TILE, m = ceil(T/b) tiles of lengths l_k (all b but the last), the computed position pairs
   are Q = sum_{j<=k} l_j*l_k = (T*T + sum_k l_k^2)/2 (= T*(T+b)/2 when b divides T) in NP = m*(m+1)/2 tile pairs.
   flops n*(Q*(2*IC + 2*OC + 2) + 2*NP + 1): per pair the two gram entries (2*IC, 2*OC) and their product
   multiply-added into the tile sum (2); per tile pair its weight (1 or 2) multiply-added into the sample (2);
   per sample the += (1). the full-square count would be n*T*T*(2*IC + 2*OC + 2).
   bytes es*n*T*(IC + OC) + 16*n */
DPPROF_API dpprof_cost dpprof_linear_sqnorm_gram_cost(int n, int T, int IC, int OC, int elem_size);
/* m layers that read the same input, OC their summed widths: the input's gram entries once (2*IC a pair), each
   layer's its own, the products and sums per layer: flops n*(Q*(2*IC + 2*OC + 2*m) + m*(2*NP + 1)); bytes
   es*n*T*(IC + OC) + 16*n*m. with m = 1 it is dpprof_linear_sqnorm_gram_cost */
DPPROF_API dpprof_cost dpprof_linear_sqnorm_gram_group_cost(int n, int T, int IC, int OC, int m, int elem_size);
/* flops n*(2*T*IC*OC + 2*IC*OC + 1): building g_i (2*T per element), square-summing it (2 per element), the +=;
   bytes es*n*T*(IC + OC) + 16*n (inputs read once: the minimum, not what the blocked loop rereads) */
DPPROF_API dpprof_cost dpprof_linear_sqnorm_psg_cost(int n, int T, int IC, int OC, int elem_size);
/* flops n*T*OC + 2*n*T*IC*OC + OC*IC: scaling dy by c, the gemm, the += into dw;
   bytes es*(n*T*OC dy + n*T*IC x + 2*OC*IC dw) + 8*n c */
DPPROF_API dpprof_cost dpprof_linear_clipgrad_cost(int n, int T, int IC, int OC, int elem_size);
/* flops 2*n*P (a multiply-add an element); bytes es*n*P + 16*n */
DPPROF_API dpprof_cost dpprof_sample_sqnorm_cost(int n, size_t P, int elem_size);
/* upper bound, reached when every position of a sample holds the same token (and exactly what a kernel that
   evaluates the whole masked T x T gram does): per sample T*(T-1)/2 token compares, T*(T+1)/2 dot products
   (2*C each) each multiply-added with its weight 1 or 2 into the sum (2), the += (1):
   flops n*(T*(T-1)/2 + T*(T+1)/2*(2*C + 2) + 1); bytes 4*n*T tokens + es*n*T*C dy + 16*n */
DPPROF_API dpprof_cost dpprof_embedding_sqnorm_cost(int n, int T, int C, int elem_size);
/* flops n*T*C adds; bytes 4*n*T tokens + es*(n*T*C dy + n*V*C psg) (psg is written in full, zeros included) */
DPPROF_API dpprof_cost dpprof_embedding_psgrad_cost(int n, int T, int V, int C, int elem_size);
/* flops 2*n*T*C (c[i]*dy multiply-added per element); bytes 4*n*T + es*(n*T*C dy + 2*n*T*C dwte rows) + 8*n c
   (upper bound as dpprof_embedding_bwd_cost: a repeated token's row counted per occurrence) */
DPPROF_API dpprof_cost dpprof_embedding_clipgrad_cost(int n, int T, int C, int elem_size);
/* per sample T*T position pairs (s,t): the dot <x_t, dy_s> (2*C) multiply-added with dl[t, tok_s] (2), the += (1):
   flops n*(T*T*(2*C + 2) + 1); bytes 4*n*T tokens + es*(n*T*T gathered dl + 2*n*T*C x, dy) + 16*n */
DPPROF_API dpprof_cost dpprof_tied_cross_cost(int n, int T, int V, int C, int elem_size);
/* flops 3*n*T*C (dout*inp*rstd added: 3 per element, as the dweight part of dpprof_rmsnorm_bwd_cost);
   bytes es*(2*n*T*C dout,inp + n*T rstd + n*C psg) */
DPPROF_API dpprof_cost dpprof_rmsnorm_psdweight_cost(int n, int T, int C, int elem_size);
/* dpprof_rmsnorm_bwd_cost's flops over N = n*T rows (its dweight part now per sample); bytes es*(4*N*C dout, inp,
   dinp read and written + C weight + N rstd + n*C psg): no second pass over dout and inp */
DPPROF_API dpprof_cost dpprof_rmsnorm_bwd_ps_cost(int n, int T, int C, int elem_size);
/* flops 4*n (sqrt, +1e-6, divide, compare); bytes 16*n (norm2 read, c written, both double; elem_size unused) */
DPPROF_API dpprof_cost dpprof_clip_factors_cost(int n, int elem_size);

/* =============================================================================================
   PART 5: engine
   configuration, presets, the session (model, DP-SGD, backends) and its writers. Contract: one schedule
   runs on every backend (cpu computes, cuda computes on the GPU, dry computes nothing) and every byte goes
   through one allocator, so the dry backend's memory is the cpu's and the GPU's to the byte; every DP
   algorithm computes the same clipped sum. Its implementation is in sections 5.1 to 5.11.
   ============================================================================================= */
/* ---------------------------------------------------------------------------------------------
   configuration
   --------------------------------------------------------------------------------------------- */
typedef enum dpprof_backend {
    DPPROF_BACKEND_AUTO = 0,
    DPPROF_BACKEND_CPU,
    DPPROF_BACKEND_CUDA,
    DPPROF_BACKEND_DRY
} dpprof_backend;
typedef enum dpprof_task {
    DPPROF_TASK_DEFAULT = 0,
    DPPROF_TASK_LM,
    DPPROF_TASK_CLS
} dpprof_task;
typedef enum dpprof_optimizer {
    DPPROF_OPT_DEFAULT = 0,
    DPPROF_OPT_ADAM,
    DPPROF_OPT_SGD
} dpprof_optimizer;
typedef enum dpprof_dtype {
    DPPROF_DTYPE_DEFAULT = 0,
    DPPROF_DTYPE_FP32,
    DPPROF_DTYPE_BF16
} dpprof_dtype;
/* activation (gradient) checkpointing: none keeps every activation for the backward; layers keeps each decoder
   layer's input alone and recomputes the layer's forward (the recompute phase) just before its backward */
typedef enum dpprof_checkpoint {
    DPPROF_CHECKPOINT_DEFAULT = 0,
    DPPROF_CHECKPOINT_NONE,
    DPPROF_CHECKPOINT_LAYERS
} dpprof_checkpoint;
DPPROF_API const char *dpprof_checkpoint_name(int checkpoint); /* "none", "layers" */
DPPROF_API int dpprof_checkpoint_parse(const char *name);      /* < 0 if unknown */
/* the attention's kernels on the cuda backend: dpprof's own (the default), or cuDNN's fused flash attention (bf16; its
   workspace tracked as category workspace, module attention; dpprof_config.attention_workspace) */
typedef enum dpprof_attention {
    DPPROF_ATTENTION_DEFAULT = 0,
    DPPROF_ATTENTION_DPPROF,
    DPPROF_ATTENTION_CUDNN,
    DPPROF_ATTENTION_SDPA, /* config.framework pytorch: torch's scaled_dot_product_attention (Hugging Face's default) */
    DPPROF_ATTENTION_EAGER /* config.framework pytorch: Hugging Face's eager attention (the T x T probabilities kept) */
} dpprof_attention;
/* whose memory a dry run accounts: dpprof's engine, or the loop a PyTorch user writes (dpprof_config.framework) */
typedef enum dpprof_framework {
    DPPROF_FRAMEWORK_DEFAULT = 0,
    DPPROF_FRAMEWORK_DPPROF,
    DPPROF_FRAMEWORK_PYTORCH,
    DPPROF_FRAMEWORK_OPACUS /* Opacus's loop (make_private, DPOptimizer, BatchMemoryManager): algo persample its hooks,
                               ghost its ghost clipping */
} dpprof_framework;
DPPROF_API const char *dpprof_framework_name(int framework); /* "dpprof", "pytorch", "opacus" */
DPPROF_API const char *dpprof_attention_name(int attention); /* "dpprof", "cudnn", "sdpa", "eager" */
DPPROF_API int dpprof_attention_parse(const char *name);     /* < 0 if unknown */
/* bf16: the top 16 bits of an ieee float. conversions: to float is exact; from float rounds to
   the nearest, ties to even; an inf stays inf, a nan stays a (quiet) nan; a finite value past the
   largest bf16 rounds to inf as ieee rounding does. */
typedef uint16_t dpprof_bf16;
DPPROF_API dpprof_bf16 dpprof_bf16_from_float(float f);
DPPROF_API float dpprof_bf16_to_float(dpprof_bf16 h);
DPPROF_API void dpprof_bf16_round_ref(float *x, size_t n);                            /* x = to_float(from_float(x)) */
DPPROF_API void dpprof_bf16_pack_ref(dpprof_bf16 *dst, const float *src, size_t n);   /* dst = from_float(src) */
DPPROF_API void dpprof_bf16_unpack_ref(float *dst, const dpprof_bf16 *src, size_t n); /* dst = to_float(src) */
typedef enum dpprof_algo {
    DPPROF_ALGO_DEFAULT = 0,
    DPPROF_ALGO_VANILLA,
    DPPROF_ALGO_PERSAMPLE,
    DPPROF_ALGO_GHOST,
    DPPROF_ALGO_GHOST_BK,
    DPPROF_ALGO_FLASH,
    DPPROF_ALGO_FLASH_BK,
    DPPROF_ALGO_AUTO,
    DPPROF_ALGO_COUNT
} dpprof_algo;

DPPROF_API const char *dpprof_backend_name(int backend);
DPPROF_API const char *dpprof_algo_name(int algo);
DPPROF_API int dpprof_algo_parse(const char *name); /* < 0 if unknown */

/* a choice the library makes itself unless told: AUTO (0) lets it choose (measuring where it can, each field says
   how), ON and OFF force it */
typedef enum dpprof_switch {
    DPPROF_SWITCH_OFF = -1,
    DPPROF_SWITCH_AUTO = 0,
    DPPROF_SWITCH_ON = 1
} dpprof_switch;
/* the accountant of a poisson run's epsilon: rdp (the default), pld (the tight one, dpprof_pld_epsilon), both */
typedef enum dpprof_accountant {
    DPPROF_ACCOUNTANT_RDP = 0,
    DPPROF_ACCOUNTANT_PLD,
    DPPROF_ACCOUNTANT_BOTH
} dpprof_accountant;
/* cuda: DRAM and L2 bytes from CUPTI's counters in warm-up step 0: off, per phase, or per op as well */
typedef enum dpprof_dram {
    DPPROF_DRAM_OFF = 0,
    DPPROF_DRAM_PHASES,
    DPPROF_DRAM_OPS
} dpprof_dram;
/* --algo auto with book-keeping: which linear layers materialise their per-sample gradients (dpprof_config.auto_materialise) */
typedef enum dpprof_materialise {
    DPPROF_MATERIALISE_NEVER = -1,     /* none */
    DPPROF_MATERIALISE_MEASURED = 0,   /* both rules where an exact dry run shows the peak does not grow, else the width rule */
    DPPROF_MATERIALISE_BOTH_RULES = 1, /* the width rule and the bytes rule, without the dry run */
    DPPROF_MATERIALISE_WIDTH_RULE = 2  /* the width rule alone, without the dry run */
} dpprof_materialise;

/* a desc struct: all-zero means defaults, resolved once by dpprof_config_resolve(). */
/* what --algo auto measures at session start on cuda, or is given (dpprof_config.rates), and plans from: each
   choice of the plan is the candidate these rates make fastest (off the gpu, with no rates given: by flops) */
typedef struct dpprof_rates {
    double gram, psg;               /* flop/s of the two flash flavours of the norm on dpprof's kernels; 0: not measured */
    double gram_cublas, psg_cublas; /* bf16: the same on cuBLAS blocks; 0: not measured */
    double ghost;                   /* ghost's two gram matrices and their dot; 0: not measured */
    double clipgrad[3];             /* given rates only: flop/s of bf16 book-keeping's clipped weight gradient on cuBLAS per
                                       sample, the fused kernel, the batched GEMM (a session measures ms per layer shape) */
    double noise_ms[2];             /* ms of the noise and the optimizer step on noise_n weights as two passes, as one;
                                       NAN: not measured */
    int64_t noise_n;
} dpprof_rates;

typedef struct dpprof_config {
    const char *preset;                  /* NULL -> "tiny"; see dpprof_preset_names() */
    int vocab, hidden, layers;           /* 0 -> the preset's */
    int heads, kv_heads, ffn;            /* 0 -> the preset's (kv_heads: grouped-query attention) */
    int head_dim;                        /* 0 -> hidden / heads (Hugging Face's head_dim where a config gives another) */
    dpprof_switch tie_embeddings;        /* AUTO -> the preset's; ON -> the lm head is the embedding matrix (one weight, one
                                    gradient, one pair of moments); OFF -> untied. task cls has no lm head: no effect */
    const char *model_name;              /* the result's config.preset where the shape comes from elsewhere (main.c's
                                    --hf-config: the file); NULL -> the preset's name */
    const char *unmodelled;              /* what of the model's source dpprof does not model, in words (main.c's --hf-config:
                                    "rope_scaling llama3: ..."): the result's config.unmodelled; NULL -> nothing */
    int seq;                             /* 0 -> 64 */
    dpprof_task task;                    /* 0 -> lm */
    int classes;                         /* 0 -> 2 (cls only) */
    dpprof_algo algo;                    /* 0 -> vanilla */
    int batch;                           /* logical batch; 0 -> 8 */
    int physical_batch;                  /* 0 -> batch */
    int steps;                           /* measured steps; 0 -> 3 */
    int warmup;                          /* warm-up steps run first and excluded from timing; 0 -> none */
    double lr;                           /* 0 -> 1e-3 (adam) or 1e-2 (sgd) */
    dpprof_optimizer optimizer;          /* 0 -> adam */
    double weight_decay;                 /* adamw decoupled decay; 0 -> none */
    dpprof_dtype dtype;                  /* 0 -> fp32; bf16: activations in bf16, fp32 masters (cuda, dry; cpu refuses) */
    dpprof_checkpoint checkpoint;        /* 0 -> none; layers: each decoder layer's input kept, the layer recomputed in the
                                    backward (docs/model.md: what each algorithm keeps and recomputes) */
    dpprof_attention attention;          /* 0 -> dpprof's kernels; cudnn: cuDNN's fused flash attention on cuda (bf16 only; the
                                    session fails where cuDNN has no plan for the shape); on dry its workspace alone
                                    (attention_workspace) */
    dpprof_framework framework;          /* 0 -> dpprof: its own engine's memory. pytorch (dry only): the memory of the loop a
                                    PyTorch user writes for Hugging Face's LlamaForCausalLM (model(x, labels=y).loss
                                    .backward(), AdamW(foreach), zero_grad(set_to_none)), walked as PyTorch allocates
                                    (docs/frameworks.md); attention sdpa (its default) or eager. opacus (dry only):
                                    Opacus's loop, algo persample (grad_sample_mode hooks) or ghost */
    int64_t attention_workspace;         /* cudnn: the bytes of cuDNN's workspace, allocated with the model (workspace, attention)
                                    on every backend; on cuda at least what cuDNN's plans need (the result's config says
                                    what was taken, for a dry run to model); 0 otherwise */
    dpprof_backend backend;              /* 0 -> auto */
    uint64_t seed;                       /* 0 is a seed like any other */
    const char *data_path;               /* NULL -> synthetic data; else byte-level text (lm) or label<TAB>text lines (cls) */
    double rope_theta;                   /* 0 -> the preset's */
    double norm_eps;                     /* 0 -> 1e-5 */
    double init_std;                     /* 0 -> 0.02 */
    int64_t memory_limit;                /* bytes; an allocation past it fails as out of memory (status oom); 0 -> none */
    const char *memory_rule;             /* what memory_limit stands for, in words (main.c's --device: the budget dpprof fit's
                                    rule leaves on that GPU): the result's config.memory_rule; NULL -> nothing */
    dpprof_materialise auto_materialise; /* algo auto with book-keeping: MEASURED -> materialise the per-sample
                                    gradients of the linear layers whose input is at most elem T / sizeof(real) wide
                                    (the width rule), or whose per-sample gradients take no more bytes than their
                                    input and output gradient (the bytes rule, dpprof__psg_fits), when an exact dry
                                    run shows that the peak does not grow (else the width rule alone, dry-run too);
                                    BOTH_RULES, WIDTH_RULE -> those rules without the dry run; NEVER */
    dpprof_switch auto_ghost;            /* algo auto with book-keeping: AUTO -> a layer not materialised takes ghost's gram
                                    matrices (n T x T, one layer at a time) where the exact dry run shows that the
                                    peak does not grow and, on cuda, the measured time is below both flash
                                    flavours' (never off the gpu); ON -> every such layer, unmeasured; OFF -> never */
    dpprof_switch fused_clipgrad;        /* cuda, bf16: the clipped weight gradients (book-keeping) on the fused tensor-core
                                    kernel (dpprof_cuda_tuning.fused_clipgrad) or on one cuBLAS GEMM per sample: ON ->
                                    fused; OFF -> cuBLAS; AUTO -> algo auto times both at each linear layer's shape at
                                    session start (physical batch >= 2) and takes the faster, the other algorithms cuBLAS */
    dpprof_switch batched_clipgrad;      /* cuda, bf16, flat clipping: a linear layer's clipped weight gradient as one cuBLAS GEMM over
                                    the physical batch's n T rows, its output gradient scaled by c_i in place (bf16), each
                                    sample's factor lowered to C / (||g_i|| + ||eps_i|| + 1e-6) with eps_i over the batched
                                    layers, eps_il = 2^-8 ||dy_il|| ||x_il||, so that the rounding stays within C
                                    (docs/dp.md): ON -> every linear layer (over fused_clipgrad); OFF, AUTO -> never (its
                                    factors are lowered: not the exact clipped sum; auto chooses among exact kernels only) */
    dpprof_switch fused_noise;           /* dp: the noise, the division by the batch and the optimizer step in one pass over the
                                    gradients (dpprof_noise_adam_gpu on cuda), the same bits; no noise phase then: the
                                    optimizer_step phase holds it. ON -> fused; OFF -> two passes; AUTO -> algo auto on
                                    cuda times both at session start and takes the faster, the others two passes */
    int dp_warp_tile;                    /* cuda, bf16: the warp tile of dpprof's dp tensor-core kernels (the fused clipgrad, both
                                    flavours of the flash norm), dpprof_cuda_tuning.dp_warp_tile: 64 (64 x 64) or 32 (64 x 32);
                                    0 -> the default (64 where the device's shared memory per block holds the kernels) */
    dpprof_switch wgmma;                 /* cuda, bf16: the gram flavour of the flash norm on Hopper's warpgroup mma
                                    (dpprof_cuda_tuning.wgmma): ON (compute capability 9.0 only, else refused);
                                    OFF -> mma.sync; AUTO -> on where the device is 9.0 */
    int no_timeline;                     /* result json without the event log (sweeps of hundreds of runs) */
    int trace_ops;                       /* time every op (cuda: an event pair each) for dpprof_session_write_trace */
    int trace_steps;                     /* dpprof_session_write_trace: the last N steps (0 -> 2), what a trace holds */
    int op_times;                        /* time every op in the warm-up steps (outside the timing): throughput.ops in the json */
    dpprof_dram dram;                    /* cuda: DRAM and L2 bytes from CUPTI, in warm-up step 0 (needs warmup >= 1): PHASES, or
                                    OPS as well (each op a range; the phases' values their ops' sums) */
    /* DP-SGD (docs/dp.md) */
    double sigma;         /* noise multiplier */
    double max_grad_norm; /* clipping bound C */
    int per_layer_clipping;
    int poisson;
    long long dataset_size;
    double delta;
    dpprof_accountant accountant; /* the result's epsilon: RDP (the default); PLD (the tight accountant,
                                    dpprof_pld_epsilon: seconds); BOTH (epsilon is rdp's, epsilon_pld beside) */
    int lora_rank;
    double lora_alpha;
    const char *lora_targets;
    double lora_dropout;          /* PEFT's lora_dropout p in [0, 1): config.framework pytorch and opacus walk each adapter's dropout
                            (its output and mask, as CUDA's native_dropout makes them); dpprof's engine runs without
                            (config.unmodelled says so) */
    dpprof_switch train_head;     /* AUTO -> as PEFT: under LoRA the lm head is frozen (not in modules_to_save; a tied
                                    head is the embedding matrix: frozen with it) and a cls head trains (SEQ_CLS: it
                                    is new); without LoRA everything trains. ON -> the head trains (modules_to_save);
                                    OFF -> the head is frozen (lm only: a cls head is new, it must train) */
    dpprof_switch frozen_masters; /* bf16: AUTO, OFF -> a frozen matmul weight or embedding table is stored once, in
                                    bf16 (PEFT's base loaded with torch_dtype = bfloat16; the norm vectors stay fp32);
                                    ON -> an fp32 master beside its bf16 copy, as a trainable weight has */
    /* sharded data parallelism (docs/model.md, "Sharded data parallelism"): the memory of rank 0 of `ranks`,
       each holding batch / ranks samples of the logical batch; dry backend only for ranks > 1 */
    int ranks;                 /* 0 -> 1 */
    int zero;                  /* 0: plain data parallel; 1: adam moments sharded; 2: + gradients; 3: + parameters */
    int secure_noise;          /* 1: the noise and poisson's draws from a seed the operating system's entropy gives
                              (getrandom), never stored or reported, each normal drawn hardened against floating-point
                              attacks (dpprof_normal4, DPPROF_NOISE_SECURE): for training a model to release. 0: from
                              `seed`, reproducible (for measuring, not for release) */
    const dpprof_rates *rates; /* algo auto: plan from these rates instead of timing the kernels (a dry run then plans as the
                                  gpu that measured them would); NULL: measured on cuda, flops elsewhere */
    double target_epsilon;     /* > 0: dpprof_config_resolve chooses sigma so that the run (warmup + steps poisson steps
                                    of rate batch / dataset_size) spends this epsilon at delta under the accountant (rdp, or
                                    pld; not both); needs a DP algo, poisson and dataset_size, and sigma 0. resolved: sigma
                                    set, target_epsilon 0 */
} dpprof_config;

/* the fields of dpprof_config, described: what dpprof_config_resolve checks a field against, and what
   dpprof_config_set parses a value into. a message about a field names it "config.NAME" (a command line maps
   the name to its option) */
typedef enum dpprof_field_type {
    DPPROF_FIELD_INT,   /* int in [lo, hi] (0 is always the default); values: "32|64" when only those are allowed */
    DPPROF_FIELD_INT64, /* int64_t / long long in [lo, hi] */
    DPPROF_FIELD_SEED,  /* uint64_t, any */
    DPPROF_FIELD_REAL,  /* double in [lo, hi], open at lo where open & 1, at hi where open & 2 */
    DPPROF_FIELD_BYTES, /* int64_t bytes in [1, 9e18]: a number with K, M, G, T (KiB ... powers of 1024) or KB, MB... */
    DPPROF_FIELD_TEXT,  /* const char * (the value is not copied: it must outlive the config) */
    DPPROF_FIELD_ENUM,  /* an enum: values names its codes from first on, '|' between ("off|auto|on") */
    DPPROF_FIELD_FLAG   /* int, 0 or 1 */
} dpprof_field_type;
typedef struct dpprof_config_field {
    const char *name; /* the member's name: "physical_batch" */
    dpprof_field_type type;
    size_t offset;      /* offsetof(dpprof_config, member) */
    double lo, hi;      /* the range of a value given */
    int open;           /* REAL: 1 open at lo, 2 at hi */
    const char *values; /* ENUM: the names; INT: the only values allowed (NULL: any in range) */
    int first;          /* ENUM: the code of the first name */
} dpprof_config_field;
/* every field (*n of them), in the struct's order */
DPPROF_API const dpprof_config_field *dpprof_config_fields(int *n);
/* the field called name; NULL (and dpprof_last_error names the closest field) when there is none */
DPPROF_API const dpprof_config_field *dpprof_config_field_find(const char *name);
/* parse value (text, as a command line or a file gives it: the whole string, in range, an enum by its name) into
   the field called name. DPPROF_ERR_INVALID with "config.NAME 'VALUE': expected ..." (and the closest name where
   an enum's value is misspelt) */
DPPROF_API int dpprof_config_set(dpprof_config *c, const char *name, const char *value);
/* the name of an enum field's code ("" for none) */
DPPROF_API const char *dpprof_config_enum_name(const dpprof_config_field *f, int code, char *buf, size_t cap);

typedef struct dpprof_shape {
    int V, C, L, NH, NKV, HS, F, K; /* vocab, hidden, layers, heads, kv heads, head size, ffn, classes */
    int tied;                       /* the lm head shares the embedding matrix (task lm only) */
    double rope_theta, norm_eps;
} dpprof_shape;

/* fill `out` with every default resolved and validate; on error the message names the bad value */
DPPROF_API int dpprof_config_resolve(const dpprof_config *in, dpprof_config *out, dpprof_shape *shape);
/* NULL-terminated list of preset names */
DPPROF_API const char *const *dpprof_preset_names(void);
/* a preset by its name or, for those that are published models, its Hugging Face name (meta-llama/Llama-3.2-1B) */
DPPROF_API int dpprof_preset_shape(const char *name, dpprof_shape *shape);
/* the preset's own name for a name or alias dpprof_preset_shape takes; its Hugging Face name ("" for none) */
DPPROF_API const char *dpprof_preset_canonical(const char *name);
DPPROF_API const char *dpprof_preset_hf_name(const char *name);

/* ---------------------------------------------------------------------------------------------
   the engine: model, training step, reports
   --------------------------------------------------------------------------------------------- */
typedef struct dpprof_tensor {
    void *data; /* NULL on the dry backend */
    int64_t n;  /* elements */
    int32_t elem_size, category, module;
    int32_t kept; /* the engine handed it to its keep-list: freeing here only forgets it */
} dpprof_tensor;

typedef struct dpprof_param {
    char name[64];     /* the dump's name, e.g. model.layers.0.self_attn.q_proj.weight */
    int rows, cols;    /* (rows, cols); vectors have rows = 1 */
    int module, layer; /* layer -1 outside the decoder stack */
    int trainable;
    int bf16_only;            /* frozen under --dtype bf16 (cuda, dry): the weights are wl's alone; w has their count
                                and no storage (config.frozen_masters) */
    dpprof_tensor w, g, m, v; /* weight, gradient, adam moments: fp32 (dpprof_real) whatever the dtype */
    dpprof_tensor wl;         /* --dtype bf16 on cuda and dry: the bf16 working copy of a matmul weight
                                (projections, lora A and B, the head) that the matmuls read, cast from w
                                after init, each update and param_write; n = 0 where there is none */
} dpprof_param;

typedef struct dpprof_session dpprof_session;

/* how a bf16 book-keeping layer makes its clipped weight gradient */
typedef enum dpprof_clipgrad {
    DPPROF_CLIPGRAD_CUBLAS, /* one cuBLAS GEMM per sample, alpha = c_i */
    DPPROF_CLIPGRAD_FUSED,  /* the fused tensor-core kernel */
    DPPROF_CLIPGRAD_BATCHED /* dy scaled by c_i in bf16, one cuBLAS GEMM over the batch (the factors bound the rounding) */
} dpprof_clipgrad;
/* where a flash flavour's norms run (cuda, bf16) */
typedef enum dpprof_norms_on {
    DPPROF_NORMS_KERNELS,
    DPPROF_NORMS_CUBLAS
} dpprof_norms_on;

typedef struct dpprof_plan_tensor {
    int method;               /* how its per-sample norm is computed (dpprof_session_param_method names it) */
    dpprof_clipgrad clipgrad; /* cuda, bf16 book-keeping: its clipped weight gradient's kernel */
    double clipgrad_ms[3];    /* auto: ms of one clipped gradient at its shape on each kernel; NAN: not measured */
} dpprof_plan_tensor;

/* the plan of a run: decided once, by dpprof_session_create, from the configuration, exact dry probes and auto's
   rates, before the first step; the steps only read it. which tensors train and how each is stored are the
   parameters' (dpprof_param.trainable, .bf16_only, .wl) */
typedef struct dpprof_plan {
    int two_pass;                    /* ghost, flash: a second backward makes the clipped sum */
    int bookkeeping;                 /* the clip phase makes it from what the backward kept */
    int materialise;                 /* auto: per-sample gradients materialised where they fit at level 1 or 2; 0 nowhere */
    int ghost;                       /* auto: ghost's gram matrices may replace flash */
    int head_method;                 /* tied: the norm method of the head's use of the embedding matrix; -1 otherwise */
    int batched;                     /* the batched clipped gradient can run (the norms phase bounds its rounding) */
    dpprof_norms_on gram_on, psg_on; /* cuda, bf16: where each flash flavour's norms run */
    int fused_noise;                 /* the noise, the division by the batch and the optimizer step in one pass */
    double noise_std;                /* sigma C */
    dpprof_rates rates;              /* what auto measured, or was given */
    int rates_given;                 /* 1: dpprof_config.rates, nothing timed */
    dpprof_plan_tensor *tensor;      /* (dpprof_session_param_count) */
} dpprof_plan;

DPPROF_API int dpprof_session_create(const dpprof_config *cfg, dpprof_session **out);
DPPROF_API void dpprof_session_destroy(dpprof_session *s);
/* warm-up steps then measured steps; stops at the first failure */
DPPROF_API int dpprof_session_run(dpprof_session *s);
/* one logical step: forward+backward over every physical batch, then the optimizer */
DPPROF_API int dpprof_session_step(dpprof_session *s);
/* forward+backward of `n` given samples into the gradients (which it zeroes first), no update.
   tokens (n,T); targets (n,T) for lm, (n) for cls. losses (n) per-sample, may be NULL. */
DPPROF_API int dpprof_session_grad(dpprof_session *s, const int *tokens, const int *targets, int n, double *losses);
/* the session's dp algorithm on `n` given samples (split into its physical batches), noise off:
   leaves sum_i c_i grad loss_i in the gradients (not divided by the batch); per-sample gradient
   norms (n) and flat clip factors (n; NaN under per-layer clipping) may be NULL */
DPPROF_API int dpprof_session_clipped_grad(dpprof_session *s, const int *tokens, const int *targets, int n, double *norms, double *clip);
/* the norm method of parameter i, as the result json's layers[].method names it */
DPPROF_API const char *dpprof_session_param_method(const dpprof_session *s, int i);
/* the run's plan (dpprof_plan); its text, one line a tensor, as dpprof run --plan prints it */
DPPROF_API const dpprof_plan *dpprof_session_plan(const dpprof_session *s);
DPPROF_API int dpprof_session_write_plan(const dpprof_session *s, FILE *f);
/* forward only: per-sample losses (n) */
DPPROF_API int dpprof_session_loss(dpprof_session *s, const int *tokens, const int *targets, int n, double *losses);
/* the samples of logical step `step` (index i of the logical batch), as training uses them */
DPPROF_API int dpprof_session_batch(dpprof_session *s, int step, int first, int n, int *tokens, int *targets);

DPPROF_API const dpprof_config *dpprof_session_config(const dpprof_session *s);
DPPROF_API const dpprof_shape *dpprof_session_shape(const dpprof_session *s);
DPPROF_API const dpprof_prof *dpprof_session_prof(const dpprof_session *s);
DPPROF_API int dpprof_session_param_count(const dpprof_session *s);
DPPROF_API dpprof_param *dpprof_session_param(dpprof_session *s, int i);
DPPROF_API int64_t dpprof_session_param_elems(const dpprof_session *s, int trainable_only);
/* copy tensor i's weights ('w'), gradient ('g') or adam moments ('m', 'v') to host memory out
   (w.n elements), on the cpu or the cuda backend (the dry backend holds no values: UNSUPPORTED) */
DPPROF_API int dpprof_session_param_read(dpprof_session *s, int i, char which, dpprof_real *out);
/* the other way: overwrite tensor i's 'w', 'g', 'm' or 'v' from host memory in (w.n elements) */
DPPROF_API int dpprof_session_param_write(dpprof_session *s, int i, char which, const dpprof_real *in);
DPPROF_API int dpprof_session_steps_done(const dpprof_session *s);
/* the memory of a run three ways, side by side (result json: meta.memory): the accountant's peak, the dry
   backend's peak of the same configuration (computed in-process after the last step, as --backend dry reports
   it; -1 where not known: not a cuda run, or the dry plan failed) and, on cuda, the driver's figure (cudaMemGetInfo's
   used bytes at the accountant's peaks, less those used before the session) with its difference to the accountant
   split into what the code can know: the pool's rounding of the live requests, the memory the pool holds and no
   request uses, and the remainder that nothing here can see (cuBLAS's own state, code of lazily loaded modules,
   CUPTI, other processes). accountant_at_driver_peak + pool_rounding + pool_unused + remainder = driver_peak */
typedef struct dpprof_memory_truth {
    int64_t accountant_peak, dry_peak, driver_peak; /* driver_peak: -1 off cuda */
    int64_t driver_before_session;                  /* used before the session: the context, cuBLAS's handle, loaded modules, other processes */
    int64_t cublas_workspace;                       /* the workspace dpprof hands cuBLAS: inside the accountant (workspace category) */
    int64_t accountant_at_driver_peak;              /* the accountant's live bytes when the driver read its peak */
    int64_t pool_rounding, pool_unused, remainder;  /* the driver's peak less the accountant's, split */
    int64_t nccl_device;                            /* NCCL's communicator (cuda, --ranks N): the device bytes it took as it was
                                                       made (dpprof_nccl_device_bytes), inside driver_before_session; -1: none */
} dpprof_memory_truth;
DPPROF_API void dpprof_session_memory_truth(const dpprof_session *s, dpprof_memory_truth *m);
/* the dry backend's peak of the session's configuration, every step, with config.memory_limit lifted and auto's plan
   kept as the limit made it (its two passes where flash_bk's peak is over the limit): what a run that stopped at the
   limit (oom) would have needed. an exact dry run (milliseconds to seconds); the result json of an oom run holds it
   (peak_without_limit). DPPROF_OK or the dry run's error */
DPPROF_API int dpprof_session_peak_without_limit(const dpprof_session *s, int64_t *peak);
/* --ranks, --zero: rank 0's shards (elements of dpprof_real) and the bytes each collective moved per rank in the
   last step (ring algorithm); the result json's "distributed" */
typedef struct dpprof_dist_info {
    int ranks, zero, zero_in_effect;                                  /* zero_in_effect: 0 where ranks = 1 (every stage is then plain training) */
    int64_t shard_elements;                                           /* sum of ceil(n_t / ranks) over the trainable tensors: a gradient or moment shard */
    int64_t padding_elements;                                         /* ranks x shard_elements - trainable elements */
    int64_t param_shard_elements;                                     /* the same sum over every tensor (zero 3's parameter shards) */
    int64_t gathered_max_bytes;                                       /* zero 3: the most all-gathered weight bytes live at once */
    int64_t all_reduce_bytes, reduce_scatter_bytes, all_gather_bytes; /* per rank: (n - 1) or 2 (n - 1) ring chunks a tensor */
    int64_t all_reduce_calls, reduce_scatter_calls, all_gather_calls; /* the collectives called (one a tensor each time) */
} dpprof_dist_info;
DPPROF_API void dpprof_session_dist(const dpprof_session *s, dpprof_dist_info *out);
/* the collectives' time: a model from the links' specifications, not a measurement. NCCL's performance relations
   (nccl-tests, doc/PERFORMANCE.md): a collective of S bytes on n ranks takes t = S / algbw, and its bus bandwidth
   busbw = algbw x 2 (n - 1) / n (all-reduce) or x (n - 1) / n (reduce-scatter, all-gather) is what the
   hardware's bottleneck link carries, whatever n. so the ring's time is
       t = S x factor / busbw + latency,   factor = 2 (n - 1) / n or (n - 1) / n,
   with busbw the peak each way of the slowest link the ring crosses (within a node the GPUs' link; over nodes each
   GPU's network card, one a GPU), and the latency the ring's steps, 2 (n - 1) or (n - 1), each a link's latency a
   step (the 2 (K - 1) or K - 1 steps between K nodes the network's, as NCCL's tuning model counts them). the
   bandwidths are peaks: the times are lower bounds (docs/fit.md, the table and its sources) */
typedef enum dpprof_coll {
    DPPROF_COLL_ALL_REDUCE,
    DPPROF_COLL_REDUCE_SCATTER,
    DPPROF_COLL_ALL_GATHER,
    DPPROF_COLL_COUNT
} dpprof_coll;
typedef struct dpprof_link {
    const char *name;      /* "nvlink4": what dpprof fit --link (or --network) takes, any case */
    int network;           /* 0: within a node (the GPUs' link); 1: between nodes (each GPU's network card) */
    double bytes_per_s;    /* the peak each way a GPU (1 GB/s = 1e9 bytes/s): the vendor's specification */
    double step_latency_s; /* a ring step's latency over it */
    const char *what;      /* "NVLink 4 (H100, H200 SXM)" */
    const char *source;    /* where the bandwidth and the latency come from */
} dpprof_link;
/* the links the model knows (*count of them), and one by name (any case; NULL: none) */
DPPROF_API const dpprof_link *dpprof_links(int *count);
DPPROF_API const dpprof_link *dpprof_link_find(const char *name);
/* ranks GPUs spread evenly over nodes machines: intra joins the GPUs of a node (unused with one GPU a node), net the
   nodes (unused with one node) */
typedef struct dpprof_fabric {
    int ranks, nodes;
    const dpprof_link *intra, *net;
} dpprof_fabric;
/* one ring collective on a tensor of `bytes` bytes (NCCL's S: the whole tensor, every rank's part together) on the
   fabric: *seconds (0 on one rank). DPPROF_ERR_INVALID where the fabric is not one (nodes not dividing ranks, a
   link missing or of the wrong kind) */
DPPROF_API int dpprof_coll_seconds(dpprof_coll kind, double bytes, const dpprof_fabric *f, double *seconds);
/* a step's collectives on the fabric, from the bytes a rank moved (dpprof_dist_info's, which carry the ring's
   factor already: a tensor's per-rank bytes are factor x S of the tensor padded to n equal parts, so the factor is
   not applied again) and the calls made. d->ranks must be f->ranks */
typedef struct dpprof_comm {
    double seconds;                            /* bandwidth_s + latency_s */
    double bandwidth_s;                        /* the bytes over busbw */
    double latency_s;                          /* every call's ring steps */
    double seconds_by_kind[DPPROF_COLL_COUNT]; /* all-reduce, reduce-scatter, all-gather */
    double busbw;                              /* bytes/s: the slowest link the ring crosses */
} dpprof_comm;
DPPROF_API int dpprof_comm_time(const dpprof_dist_info *d, const dpprof_fabric *f, dpprof_comm *out);
/* the same of a session's last step (a dry session: the collectives it counted; ranks = its cfg.ranks) */
DPPROF_API int dpprof_session_comm_time(const dpprof_session *s, const dpprof_fabric *f, dpprof_comm *out);
DPPROF_API double dpprof_session_step_loss(const dpprof_session *s, int step); /* mean loss of a step */
/* the analytic cost of the ops a session's steps ran, by op name (every backend, the dry one too): an op begun
   inside another is part of it, as in the result's throughput.ops; summed over every step done (divide by
   dpprof_session_steps_done for a step's). fills up to max entries in the order the ops first ran; returns how
   many names there are (at most DPPROF_OP_COST_MAX) */
#define DPPROF_OP_COST_MAX 96
typedef struct dpprof_op_cost {
    const char *name; /* "matmul_fwd": the op of part 4 (static storage) */
    long long count;  /* times it ran */
    double flops, bytes;
} dpprof_op_cost;
DPPROF_API int dpprof_session_op_costs(const dpprof_session *s, dpprof_op_cost *out, int max);
/* the privacy a run has, as the result json and a command line state it: the epsilon of the accountant asked, or
   why there is none */
typedef struct dpprof_privacy {
    int dp;                 /* a DP algorithm (else: non-private training) */
    int poisson;            /* batches drawn by poisson sampling (the accountants describe those alone) */
    double q, sigma, delta; /* q: batch / dataset size (NAN without a dataset size) */
    long long steps;
    double epsilon;                  /* the one reported: INFINITY at sigma 0, NAN where none is */
    double epsilon_rdp, epsilon_pld; /* each where it was computed, else NAN */
    double best_order;               /* rdp's order (NAN where rdp did not run or epsilon is infinite) */
    double pld_interval;             /* the pld grid's interval (NAN where pld did not run) */
    dpprof_accountant accountant;    /* whose epsilon is reported: rdp where pld was asked and could not bound it */
    const char *why;                 /* "" where epsilon is a bound; else why there is none, in words */
    char note[1024];                 /* how epsilon was computed, and to what it is accurate */
} dpprof_privacy;
/* the privacy of `steps` steps of the poisson-subsampled gaussian mechanism (rate q, noise multiplier sigma) under
   the accountant asked: rdp, pld (rdp's bound instead, said in the note, where the pld cannot bound it: a grid past
   its size, or mass at infinity past delta), or both (epsilon is rdp's). dp 0: non-private. DPPROF_OK, or an
   accountant's error (a value out of its domain) */
DPPROF_API int dpprof_privacy_of(int dp, double q, double sigma, long long steps, double delta, int poisson, dpprof_accountant accountant, dpprof_privacy *out);
/* the session's, at the steps it has taken (computed once per step count) */
DPPROF_API int dpprof_session_privacy(const dpprof_session *s, dpprof_privacy *out);

/* result JSON (docs/results.md, fixed key order, doubles as %.17g). status: "ok", "oom", "error"... */
DPPROF_API int dpprof_session_write_json(const dpprof_session *s, FILE *f, const char *experiment, const char *status, const char *error);
/* --trace: chrome/perfetto trace-event json: phases as complete events, live bytes as counters */
DPPROF_API int dpprof_session_write_trace(const dpprof_session *s, FILE *f);
/* --dump: model.safetensors, batch.safetensors, grads.safetensors, step.json into an existing directory */
DPPROF_API int dpprof_session_dump(dpprof_session *s, const char *dir);

/* =============================================================================================
   PART 6: cuda runtime
   dpprof_kernels.cu: the device, its memory through the accountant, the GPU ops (dpprof_<op>_gpu), the
   kernel choices. Contract: every allocation on the device is tracked with a category and a module; every
   GPU op matches its CPU reference within the tolerance of its dtype (tests/gpu_*.c); without
   dpprof_kernels.cu every entry point answers DPPROF_ERR_NO_CUDA, saying so.
   ============================================================================================= */
/* the cuda side (dpprof_kernels.cu); without it (no DPPROF_CUDA) these return DPPROF_ERR_NO_CUDA */
typedef struct dpprof_device_info {
    char name[128];
    int driver_version, runtime_version, cc_major, cc_minor, sm_count;
    size_t total_bytes, free_bytes;
    int clock_khz, mem_clock_khz, bus_width_bits; /* the sm's peak clock; dram clock and width */
} dpprof_device_info;
/* a device's theoretical peaks from its sm count, clock and compute capability: dense fp32 (cuda
   cores) and bf16 (tensor cores) flop/s, and dram bytes/s (2 x memory clock x bus width). 0 when the
   architecture is not in the table (sm 8.0, 8.6, 8.9, 9.0, 10.0) */
DPPROF_API void dpprof_device_peaks(const dpprof_device_info *d, double *fp32_flops, double *bf16_flops, double *dram_bytes);
/* the flop peak of a run in the storage precision dtype: the peak its mfu and every op's roofline are held to
   (fp32: the cuda cores' dense peak; bf16: the tensor cores' dense peak; 0 where not known). the one definition:
   the result's throughput.peak_flops, its mfu, model_flops_utilization and the ops' bound all use it */
DPPROF_API double dpprof_flop_peak(const dpprof_device_info *d, dpprof_dtype dtype);
DPPROF_API int dpprof_cuda_device_count(int *count);
DPPROF_API int dpprof_cuda_device_info(int device, dpprof_device_info *info);
/* device memory through the accountant */
DPPROF_API int dpprof_cuda_malloc(dpprof_prof *p, void **ptr, size_t bytes, int category, int module);
DPPROF_API int dpprof_cuda_free(dpprof_prof *p, void *ptr);

/* ---- the cuda backend's device runtime (dpprof_kernels.cu) ----------------------------------------
   one device and one stream per process. kernels and copies are queued on the stream; the first
   error of anything queued is kept (nothing more is queued after it) and dpprof_cuda_sync() returns
   it, with dpprof_last_error() saying what failed. builds without DPPROF_CUDA answer DPPROF_ERR_NO_CUDA.
   the workspace (DPPROF_WORKSPACE_BYTES, one allocation the caller makes and tracks as category
   workspace) holds cuBLAS's workspace (first DPPROF_CUBLAS_WORKSPACE_BYTES) and the kernels' scratch. */
#define DPPROF_CUBLAS_WORKSPACE_BYTES ((size_t)32 << 20) /* what NVIDIA recommends for cuBLAS on Hopper */
#define DPPROF_SCRATCH_BYTES ((size_t)8 << 20)           /* partial sums of the norm kernels, flags */
#define DPPROF_WORKSPACE_BYTES (DPPROF_CUBLAS_WORKSPACE_BYTES + DPPROF_SCRATCH_BYTES)
enum {
    DPPROF_COPY_H2D,
    DPPROF_COPY_D2H,
    DPPROF_COPY_D2D
};
DPPROF_API int dpprof_cuda_init(int device);                                        /* select, create the stream and cuBLAS; idempotent */
DPPROF_API int dpprof_cuda_alloc(void **ptr, size_t bytes);                         /* cudaMalloc, untracked: the caller tracks it */
DPPROF_API void dpprof_cuda_release(void *ptr);                                     /* cudaFree of dpprof_cuda_alloc's pointer (NULL: nothing) */
DPPROF_API int dpprof_cuda_copy(void *dst, const void *src, size_t bytes, int dir); /* DPPROF_COPY_*; D2H waits for it */
DPPROF_API int dpprof_cuda_zero(void *dst, size_t bytes);                           /* queued memset 0 */
DPPROF_API int dpprof_cuda_sync(void);                                              /* wait for the stream; the first error of anything queued */
DPPROF_API int dpprof_cuda_trim(void);                                              /* wait, then give the allocation pool's unused memory back to the driver */
DPPROF_API int dpprof_cuda_set_workspace(void *ptr, size_t bytes);                  /* bytes >= DPPROF_WORKSPACE_BYTES */
DPPROF_API int dpprof_cuda_mem_used(size_t *used);                                  /* the driver's figure: total - free device memory */
/* the stream-ordered pool's own figures now: the bytes of its live allocations as it rounds them (used) and what
   it holds from the driver (reserved) */
DPPROF_API int dpprof_cuda_pool_usage(size_t *used, size_t *reserved);
DPPROF_API int dpprof_cuda_event(int *id);                     /* record an event on the stream; ids count from 0 */
DPPROF_API int dpprof_cuda_event_ms(int a, int b, double *ms); /* time from event a to event b (waits for b) */
DPPROF_API void dpprof_cuda_events_reset(void);                /* forget recorded events (ids restart at 0) */
typedef struct dpprof_counter_range {
    char name[64];
    double dram_read, dram_write, l2_read, l2_write;
} dpprof_counter_range; /* bytes; < 0 where a metric is unavailable */
/* DRAM and L2 traffic per named range, from CUPTI's range profiler. begin: DPPROF_OK, or DPPROF_ERR_UNSUPPORTED with the reason
   in dpprof_last_error() (counters not permitted for this user: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES / NVPW errors, an
   unsupported device, CUPTI missing, more than one pass needed). Only one collection at a time. */
DPPROF_API int dpprof_cuda_counters_begin(int max_ranges);  /* after dpprof_cuda_init; sets up the profiler for the metrics below with user ranges */
DPPROF_API int dpprof_cuda_counters_push(const char *name); /* a range begins on the stream (ranges are not nested by the engine: push, pop, push, pop...) */
DPPROF_API int dpprof_cuda_counters_pop(void);
DPPROF_API int dpprof_cuda_counters_end(dpprof_counter_range *out, int max, int *n); /* stop, decode, evaluate; fills up to max ranges in order, *n = how many; tears everything down so begin can be called again */
/* the collectives between the ranks of an MPI job on the cuda backend: NCCL, one process a rank and a GPU a
   process (dpprof_kernels.cu built with -DDPPROF_NCCL; without it dpprof_nccl_available() is 0 and the rest
   fail, saying so). the engine opens the communicator after dpprof_cuda_init (rank 0's id broadcast over MPI)
   and queues the collectives on the kernels' stream, in place on fp32 tensors of n elements in a buffer of cap
   elements. rank r's part of a tensor is [r c, r c + len), c = ceil(n / ranks), the last parts shorter or empty;
   where cap >= ranks x c (a padded buffer) the part collectives are NCCL's reduce-scatter and all-gather, else
   (cap = n, or 0) one reduce or broadcast per part. a failure is the stream's (dpprof_cuda_sync says it) */
#define DPPROF_NCCL_ID_BYTES 128
DPPROF_API int dpprof_nccl_available(void);
DPPROF_API int dpprof_nccl_id(void *id, size_t bytes);                /* rank 0: a new communicator's id (DPPROF_NCCL_ID_BYTES) */
DPPROF_API int dpprof_nccl_init(const void *id, int ranks, int rank); /* every rank, with rank 0's id; one communicator a process */
DPPROF_API void dpprof_nccl_finish(void);                             /* waits for the stream, then closes the communicator */
/* the device memory NCCL's communicator took as it was made: its connections' buffers, every one made then
   (NCCL_RUNTIME_CONNECT=0 unless the user set it), measured as the free memory before and after (the driver's
   granularity; the GPU this rank's alone). outside the accountant, like the CUDA context; DPPROF_OK, or *bytes = -1 */
DPPROF_API int dpprof_nccl_device_bytes(int64_t *bytes);
DPPROF_API void dpprof_nccl_allreduce(float *x, size_t n);                        /* x = the sum of every rank's x */
DPPROF_API void dpprof_nccl_reduce_scatter(float *x, size_t n, size_t cap);       /* this rank's part of the sum, at its place in x */
DPPROF_API void dpprof_nccl_allgather(float *x, size_t n, size_t cap);            /* every rank's part (at its place in x) to every rank */
DPPROF_API void dpprof_nccl_allgather_bf16(dpprof_bf16 *x, size_t n, size_t cap); /* the same in bf16 (cap >= ranks x the part: padded) */
/* cuDNN's fused flash attention: the causal GQA attention of dpprof_attention_fwd_gpu / _bwd_gpu (same arguments, same
   layouts, the same overwrite rules) on cuDNN 9 through its C++ frontend's graph API, bf16 storage only
   (dpprof_kernels.cu built with -DDPPROF_CUDNN: cudnn.h and the frontend's headers, nvidia-cudnn-frontend on PyPI).
   without it dpprof_cudnn_available() is 0 and the rest fail, saying so. a shape's plans (forward and backward) are
   built at its first use; ws: a device workspace of at least the bytes dpprof_cudnn_attention_plan gives (the caller
   allocates and tracks it). the kernels' own attention stays the default until a GPU has measured cuDNN's faster */
DPPROF_API int dpprof_cudnn_available(void); /* cuDNN's version (e.g. 91900) where built with it, else 0 */
/* build or find the plans of a shape: DPPROF_OK, *ws = the larger workspace of the two and *deterministic = 1 where the
   backward is cuDNN's deterministic algorithm (the same bits every run, as dpprof's kernels; tried first), 0 where only
   its default built; else DPPROF_ERR_UNSUPPORTED (or _INVALID for a bad shape) with dpprof_last_error() in cuDNN's
   words (no handle, no engine for the graph). either pointer may be NULL */
DPPROF_API int dpprof_cudnn_attention_plan(int B, int T, int NH, int NKV, int HS, size_t *ws, int *deterministic);
DPPROF_API void dpprof_cudnn_attention_fwd_gpu(float *out, float *lse, const float *q, const float *k, const float *v, int B, int T, int NH, int NKV, int HS, void *ws, size_t ws_bytes);
DPPROF_API void dpprof_cudnn_attention_bwd_gpu(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k, const float *v, const float *out, const float *lse, int B, int T, int NH, int NKV, int HS, void *ws, size_t ws_bytes);

/* ---- the gpu ops: each computes exactly what its dpprof_<op>_ref computes (same arguments, same
   accumulate/overwrite rules, device pointers, fp32), queued on the stream; tests/test_gpu.c holds
   the tolerances.
   storage (--dtype bf16): dpprof_cuda_set_storage(DPPROF_DTYPE_BF16) makes the ops that follow read
   and write ACTIVATIONS as bf16 (dpprof_bf16, stored behind the same float * parameters), like
   cublasSetPointerMode changes how a pointer is read. activations are the token-indexed tensors: the
   inputs and outputs of every op and their gradients (x, out, dinp, dout, q, k, v, att, dq..., gate,
   up, h, logits, dlogits, dy), and the matmul weight (the bf16 working copy of the fp32 master).
   always fp32 whatever the storage: parameters other than the matmul weight (wte, rmsnorm weight),
   every parameter gradient (dweight, dwte, dw), per-sample gradients (psg), gram outputs (gram_gpu's
   out, gram_dot's inputs), rstd, lse, losses, dlosses, optimizer state; norms and clip factors are
   doubles. arithmetic is fp32 (long sums as the fp32 kernel does them): a bf16 op reads its bf16
   inputs widened exactly to fp32, computes like the fp32 op and rounds what it stores to the nearest
   bf16 (ties to even); its reference is the fp32 reference on the widened inputs with the stored
   outputs rounded by dpprof_bf16_round_ref. beyond the op table, the engine needs these: */
DPPROF_API int dpprof_cuda_set_storage(dpprof_dtype dtype); /* FP32 (the default) or BF16; else DPPROF_ERR_INVALID */
DPPROF_API dpprof_dtype dpprof_cuda_storage(void);
/* the kernel choices of the cuda backend: one struct for the process (the kernels' state is per process),
   all zero meaning the defaults. every choice computes the same function to the same tolerances (the tests run
   each); they exist to measure the alternatives (dpprof attnbench, make bench-clipgrad) and for devices the
   default does not fit. docs/cuda.md says what each kernel does and what was measured. */
typedef struct dpprof_cuda_tuning {
    int attention_simt;      /* 1: bf16 attention on the fp32 SIMT kernels (widened loads); 0: the tensor-core
                                kernels for even head sizes up to 128 */
    int attention_block;     /* rows of a tensor-core attention block: 64 or 128; 0: the forward 128 on sm_90 and
                                newer (64 before), the backward 64 */
    int attention_warp_rows; /* query rows a warp of the forward and dq kernels, 16 or 32 (32 applies up to head
                                size 64); 0: the forward 32 on sm_90 and newer (16 before), the dq kernel 16 */
    int norms_cublas;        /* 1: the bf16 flash norms on cuBLAS blocks; 0: dpprof's tensor-core kernels where
                                the layer's widths are multiples of 8 */
    int fused_clipgrad;      /* 1: the bf16 clipped weight gradient on the fused kernel (2 samples or more, widths
                                multiples of 8); 0: one cuBLAS GEMM per sample */
    int dp_warp_tile;        /* warps of the dp tensor-core kernels: 64 (64 x 64) or 32 (64 x 32); 0: 64 where the
                                device's shared memory per block holds the kernel, else 32 */
    int wgmma;               /* the gram flavour of the flash norm on Hopper's warpgroup mma: 1 on (compute
                                capability 9.0 only), -1 off (mma.sync); 0: on where the device is 9.0 */
} dpprof_cuda_tuning;
/* set every choice at once; NULL: the defaults. DPPROF_OK; DPPROF_ERR_INVALID for a value out of its set
   (dpprof_last_error names the field; nothing changes); DPPROF_ERR_UNSUPPORTED for wgmma = 1 on a device
   that is not compute capability 9.0 (or before dpprof_cuda_init) */
DPPROF_API int dpprof_cuda_set_tuning(const dpprof_cuda_tuning *t);
/* the choices as last set (all zero before any) */
DPPROF_API void dpprof_cuda_get_tuning(dpprof_cuda_tuning *t);
/* kernels on wgmma queued since dpprof_cuda_init (tests: the path was taken) */
DPPROF_API long long dpprof_cuda_wgmma_count(void);
/* the first field of t out of its set, or NULL: what dpprof_cuda_set_tuning checks */
#define DPPROF_CUDA_TUNING_BAD(t)                                                                                                \
    ((t)->attention_simt < 0 || (t)->attention_simt > 1                                                  ? "attention_simt"      \
     : (t)->attention_block != 0 && (t)->attention_block != 64 && (t)->attention_block != 128            ? "attention_block"     \
     : (t)->attention_warp_rows != 0 && (t)->attention_warp_rows != 16 && (t)->attention_warp_rows != 32 ? "attention_warp_rows" \
     : (t)->norms_cublas < 0 || (t)->norms_cublas > 1                                                    ? "norms_cublas"        \
     : (t)->fused_clipgrad < 0 || (t)->fused_clipgrad > 1                                                ? "fused_clipgrad"      \
     : (t)->dp_warp_tile != 0 && (t)->dp_warp_tile != 32 && (t)->dp_warp_tile != 64                      ? "dp_warp_tile"        \
     : (t)->wgmma < -1 || (t)->wgmma > 1                                                                 ? "wgmma"               \
                                                                                                         : (const char *)0)
/* the kernels dpprof has queued since the process started (its own; cuBLAS's are not counted) */
DPPROF_API long long dpprof_cuda_launch_count(void);
/* the device work queued so far: kernels, cuBLAS calls (as dpprof checks them), memsets and copies; the op records
   of a step cover all of it (result json: throughput.ops.coverage) */
DPPROF_API long long dpprof_cuda_work_count(void);
/* dst (n) = src (n) rounded to the nearest bf16, ties to even: the bf16 working copy of a weight */
DPPROF_API void dpprof_cast_bf16_gpu(dpprof_bf16 *dst, const float *src, size_t n);
/* out (n) = value */
DPPROF_API void dpprof_fill_gpu(float *out, size_t n, float value);
/* out[e] = (float)(stddev * dpprof_normal(seed, stream, e)): the cpu's initialisation, bit for bit */
DPPROF_API void dpprof_init_normal_gpu(float *out, size_t n, double stddev, uint64_t seed, uint64_t stream);
/* out (n) = dpprof_init_normal_gpu's values rounded to bf16 (dpprof_cast_bf16_gpu's bits), no fp32 copy: a frozen
   weight stored in bf16 alone */
DPPROF_API void dpprof_init_normal_bf16_gpu(dpprof_bf16 *out, size_t n, double stddev, uint64_t seed, uint64_t stream);
/* g[e] = (float)((double)dpprof__noise_accum(g[e], stddev, dpprof_normal(seed, stream, offset + e)) * scale), or without
   the noise when stddev == 0: dpprof_add_noise_ref then the division by the batch, bit for bit */
DPPROF_API void dpprof_noise_scale_gpu(float *g, size_t n, double stddev, dpprof_noise_key key, uint64_t stream, uint64_t offset, double scale);
/* book-keeping on cuda: x (n,T,D) in place, x[i,t,:] = (float)(c[i] * (double)x[i,t,:]); c (n) device doubles */
DPPROF_API void dpprof_scale_rows_gpu(float *x, const double *c, int n, int T, int D);
/* norm2 (n) += the squared norm of each sample of x (n, P) in the storage type (bf16 or fp32), summed in double:
   dpprof_sample_sqnorm_ref on the stored values */
DPPROF_API void dpprof_sample_sqnorm_gpu(double *norm2, const float *x, int n, size_t P);
/* non-finite checks without a sync per tensor: reset, check any number of tensors (each with a tag >= 0),
   then result: *tag = the smallest tag that held a nan or inf, or -1 (waits for the stream) */
DPPROF_API void dpprof_nonfinite_reset_gpu(void);
DPPROF_API void dpprof_nonfinite_gpu(const float *x, size_t n, int tag);
DPPROF_API int dpprof_nonfinite_result_gpu(int *tag);

DPPROF_API void dpprof_matmul_fwd_gpu(float *out, const float *inp, const float *weight, int N, int IC, int OC);
DPPROF_API void dpprof_matmul_bwd_gpu(float *dinp, float *dweight, const float *dout, const float *inp, const float *weight, int N, int IC, int OC);
DPPROF_API void dpprof_embedding_fwd_gpu(float *out, const int *tokens, const float *wte, int N, int C);
/* dpprof_embedding_fwd_gpu from a table stored in bf16 (a frozen table): dpprof_embedding_fwd_ref of the unpacked table */
DPPROF_API void dpprof_embedding_fwd_bf16_gpu(float *out, const int *tokens, const dpprof_bf16 *wte, int N, int C);
DPPROF_API void dpprof_embedding_bwd_gpu(float *dwte, const float *dout, const int *tokens, int N, int C);
DPPROF_API void dpprof_rmsnorm_fwd_gpu(float *out, float *rstd, const float *inp, const float *weight, int N, int C, float eps);
DPPROF_API void dpprof_add_rmsnorm_fwd_gpu(float *out, float *rstd, float *res, const float *other, const float *weight, int N, int C, float eps);
DPPROF_API void dpprof_rmsnorm_bwd_gpu(float *dinp, float *dweight, const float *dout, const float *inp, const float *weight, const float *rstd, int N, int C);
DPPROF_API void dpprof_rope_fwd_gpu(float *x, int B, int T, int NH, int HS, double theta);
DPPROF_API void dpprof_rope_bwd_gpu(float *dx, int B, int T, int NH, int HS, double theta);
DPPROF_API void dpprof_attention_fwd_gpu(float *out, float *lse, const float *q, const float *k, const float *v, int B, int T, int NH, int NKV, int HS);
/* dq, dk, dv must not overlap each other or the inputs: dq's storage also holds D = rowsum(dout * out)
   of every query row between the backward's kernels on the tensor cores (no scratch beyond the outputs) */
DPPROF_API void dpprof_attention_bwd_gpu(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k, const float *v, const float *out, const float *lse, int B, int T, int NH, int NKV, int HS);
DPPROF_API void dpprof_swiglu_fwd_gpu(float *h, const float *gate, const float *up, size_t n);
DPPROF_API void dpprof_swiglu_bwd_gpu(float *dgate, float *dup, const float *dh, const float *gate, const float *up, size_t n);
DPPROF_API void dpprof_add_gpu(float *out, const float *a, const float *b, size_t n);
DPPROF_API void dpprof_crossentropy_fwd_gpu(float *losses, const float *logits, const int *targets, int B, int T, int V);
DPPROF_API void dpprof_crossentropy_bwd_gpu(float *dlogits, const float *logits, const int *targets, const float *dlosses, int B, int T, int V);
DPPROF_API void dpprof_last_token_fwd_gpu(float *out, const float *inp, int B, int T, int C);
DPPROF_API void dpprof_last_token_bwd_gpu(float *dinp, const float *dout, int B, int T, int C);
/* the optimizers: dpprof_adam_ref, dpprof_sgd_ref bit for bit; copy (n), unless NULL, gets the updated weight's
   bf16 working copy in the same pass (dpprof_cast_bf16_gpu's bits, without reading the weight back) */
DPPROF_API void dpprof_adam_gpu(float *param, float *m, float *v, const float *grad, size_t n, double lr, double b1, double b2, double eps, double wd, int t,
                                dpprof_bf16 *copy);
DPPROF_API void dpprof_sgd_gpu(float *param, const float *grad, size_t n, double lr, dpprof_bf16 *copy);
/* the noise and the optimizer step in one pass over the gradient (dpprof_config.fused_noise): exactly
   dpprof_noise_scale_gpu(grad, n, stddev, seed, stream, offset, scale) then dpprof_adam_gpu or dpprof_sgd_gpu
   on the result, bit for bit, except that grad is only read (the privatised gradient is never stored) */
DPPROF_API void dpprof_noise_adam_gpu(float *param, float *m, float *v, const float *grad, size_t n, double lr, double b1, double b2, double eps, double wd, int t,
                                      dpprof_bf16 *copy, double stddev, dpprof_noise_key key, uint64_t stream, uint64_t offset, double scale);
DPPROF_API void dpprof_noise_sgd_gpu(float *param, const float *grad, size_t n, double lr, dpprof_bf16 *copy, double stddev, dpprof_noise_key key, uint64_t stream,
                                     uint64_t offset, double scale);
DPPROF_API void dpprof_scale_gpu(float *y, const float *x, size_t n, double alpha);
DPPROF_API void dpprof_linear_psgrad_gpu(float *psg, const float *dy, const float *x, int n, int T, int IC, int OC);
DPPROF_API void dpprof_psgrad_sqnorm_gpu(double *norm2, const float *psg, int n, size_t P);
DPPROF_API void dpprof_psgrad_clipsum_gpu(float *dw, const float *psg, const double *c, int n, size_t P);
DPPROF_API void dpprof_gram_gpu(float *out, const float *x, int n, int T, int D);
DPPROF_API void dpprof_gram_dot_gpu(double *norm2, const float *ga, const float *gg, int n, int T);
DPPROF_API void dpprof_linear_sqnorm_gram_gpu(double *norm2, const float *dy, const float *x, int n, int T, int IC, int OC);
/* norm2[0] += reps times the squared norm of sample 0, as linear_sqnorm_gram computes it for a batch of reps
   copies of it, without their memory (every block of the batch's launch reads sample 0): a way to time the gram
   flavour at a batch without the batch's inputs (the bf16 tensor-core kernel's rate grows with the samples it
   runs at once; the copies are read from L2 rather than DRAM) */
DPPROF_API void dpprof_linear_sqnorm_gram_rep_gpu(double *norm2, const float *dy, const float *x, int reps, int T, int IC, int OC);
/* linear_sqnorm_gram for m layers that read the same input x (n,T,IC): norm2[j] (n) += the squared norms of
   layer j, whose output gradient is dy[j] (n,T,OC[j]). the tensor-core kernel makes each tile of x's gram once
   for up to three layers (q, k, v; gate, up), so their norms cost one input gram instead of m; each layer's
   bits are those of dpprof_linear_sqnorm_gram_gpu alone. other paths take the layers one at a time */
DPPROF_API void dpprof_linear_sqnorm_gram_group_gpu(double *const *norm2, const float *const *dy, const int *OC, int m, const float *x, int n, int T, int IC);
DPPROF_API void dpprof_linear_sqnorm_psg_gpu(double *norm2, const float *dy, const float *x, int n, int T, int IC, int OC);
DPPROF_API void dpprof_linear_clipgrad_gpu(float *dw, const float *dy, const float *x, const double *c, int n, int T, int IC, int OC);
/* dw += sum_{i < reps} c_i dy_0^T x_0, as linear_clipgrad computes it for a batch of reps copies of sample 0,
   without their memory, on the kernel dpprof_cuda_tuning.fused_clipgrad selects: --algo auto times the two
   kernels with it at the run's physical batch (the fused kernel's one pass against cuBLAS's reps GEMMs) */
DPPROF_API void dpprof_linear_clipgrad_rep_gpu(float *dw, const float *dy, const float *x, const double *c, int reps, int T, int IC, int OC);
DPPROF_API void dpprof_embedding_sqnorm_gpu(double *norm2, const float *dy, const int *tokens, int n, int T, int C);
DPPROF_API void dpprof_embedding_psgrad_gpu(float *psg, const float *dy, const int *tokens, int n, int T, int V, int C);
DPPROF_API void dpprof_embedding_clipgrad_gpu(float *dwte, const float *dy, const int *tokens, const double *c, int n, int T, int C);
DPPROF_API void dpprof_tied_cross_gpu(double *norm2, const float *dl, const float *x, const float *dy, const int *tokens, int n, int T, int V, int C);
DPPROF_API void dpprof_rmsnorm_psdweight_gpu(float *psg, const float *dout, const float *inp, const float *rstd, int n, int T, int C);
DPPROF_API void dpprof_rmsnorm_bwd_ps_gpu(float *dinp, float *psg, const float *dout, const float *inp, const float *weight, const float *rstd, int n, int T, int C);

#ifdef __cplusplus
}
#endif
#endif /* DPPROF_H */

/* =============================================================================================
   implementation
   ============================================================================================= */
#ifdef DPPROF_IMPLEMENTATION
#ifndef DPPROF_IMPLEMENTATION_DONE
#define DPPROF_IMPLEMENTATION_DONE

#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if defined(__linux__)
#include <sys/random.h> /* getrandom: secure_noise's seed */
#endif

#if defined(DPPROF_MALLOC) && defined(DPPROF_FREE) && defined(DPPROF_REALLOC)
#elif !defined(DPPROF_MALLOC) && !defined(DPPROF_FREE) && !defined(DPPROF_REALLOC)
#define DPPROF_MALLOC(sz) malloc(sz)
#define DPPROF_REALLOC(p, sz) realloc(p, sz)
#define DPPROF_FREE(p) free(p)
#else
#error "define all or none of DPPROF_MALLOC, DPPROF_REALLOC, DPPROF_FREE"
#endif
#ifndef DPPROF_ASSERT
#include <assert.h>
#define DPPROF_ASSERT(x) assert(x)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* =============================================================================================
   PART 1 (implementation): core
   ============================================================================================= */
/* ---- errors ---------------------------------------------------------------------------------- */
static char dpprof__errbuf[1024];

DPPROF_API const char *dpprof_result_str(int result) {
    switch (result) {
#define DPPROF__X(name, value, text) \
    case value: return text;
        DPPROF_RESULTS(DPPROF__X)
#undef DPPROF__X
    default: return "unknown result code";
    }
}

DPPROF_API const char *dpprof_last_error(void) { return dpprof__errbuf; }

DPPROF_API int dpprof_fail(int code, const char *fmt, ...) {
    char msg[sizeof dpprof__errbuf];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap); /* through a copy: the arguments may hold the message before */
    va_end(ap);
    memcpy(dpprof__errbuf, msg, sizeof msg);
    return code;
}
/* the engine's name for it */
#define dpprof__fail dpprof_fail

/* propagate a failure: the message is already in dpprof_last_error() */
#define DPPROF__TRY(x)                    \
    do {                                  \
        int rc_ = (x);                    \
        if (rc_ != DPPROF_OK) return rc_; \
    } while (0)

/* ---- names ----------------------------------------------------------------------------------- */
/* clang-format off */
static const char *const dpprof__cat_names[] = {
#define DPPROF__X(name, text) text,
    DPPROF_CATEGORIES(DPPROF__X)
    DPPROF_USER_CATEGORIES(DPPROF__X)
#undef DPPROF__X
};
/* clang-format on */
static const char *const dpprof__mod_names[] = {
#define DPPROF__X(name, text) text,
    DPPROF_MODULES(DPPROF__X)
        DPPROF_USER_MODULES(DPPROF__X)
#undef DPPROF__X
};
static const char *const dpprof__phase_names[] = {
#define DPPROF__X(name, text) text,
    DPPROF_PHASES(DPPROF__X)
        DPPROF_USER_PHASES(DPPROF__X)
#undef DPPROF__X
};
static const char *const dpprof__algo_names[] = {"default", "vanilla", "persample", "ghost", "ghost_bk", "flash", "flash_bk", "auto"};
static const char *const dpprof__backend_names[] = {"auto", "cpu", "cuda", "dry"};

DPPROF_API const char *dpprof_category_name(int c) { return c >= 0 && c < DPPROF_CAT_COUNT ? dpprof__cat_names[c] : "?"; }
DPPROF_API const char *dpprof_module_name(int m) { return m >= 0 && m < DPPROF_MOD_COUNT ? dpprof__mod_names[m] : "?"; }
DPPROF_API const char *dpprof_phase_name(int ph) { return ph >= 0 && ph < DPPROF_PHASE_COUNT ? dpprof__phase_names[ph] : "none"; }
DPPROF_API dpprof_bf16 dpprof_bf16_from_float(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) return (dpprof_bf16)((u >> 16) | 0x0040u); /* nan: quiet, sign kept */
    u += 0x7fffu + ((u >> 16) & 1u);                                                                      /* round to nearest, ties to even; a carry into the exponent is right (up to inf) */
    return (dpprof_bf16)(u >> 16);
}
DPPROF_API float dpprof_bf16_to_float(dpprof_bf16 h) {
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
DPPROF_API void dpprof_bf16_round_ref(float *x, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) x[i] = dpprof_bf16_to_float(dpprof_bf16_from_float(x[i]));
}
DPPROF_API void dpprof_bf16_pack_ref(dpprof_bf16 *dst, const float *src, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) dst[i] = dpprof_bf16_from_float(src[i]);
}
DPPROF_API void dpprof_bf16_unpack_ref(float *dst, const dpprof_bf16 *src, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) dst[i] = dpprof_bf16_to_float(src[i]);
}

DPPROF_API const char *dpprof_algo_name(int a) { return a >= 0 && a < DPPROF_ALGO_COUNT ? dpprof__algo_names[a] : "?"; }
DPPROF_API const char *dpprof_backend_name(int b) { return b >= 0 && b <= DPPROF_BACKEND_DRY ? dpprof__backend_names[b] : "?"; }
DPPROF_API int dpprof_algo_parse(const char *name) {
    int i;
    for (i = 1; name && i < DPPROF_ALGO_COUNT; i++)
        if (strcmp(name, dpprof__algo_names[i]) == 0) return i;
    return -1;
}
static const char *const dpprof__attention_names[] = {"dpprof", "dpprof", "cudnn", "sdpa", "eager"};
DPPROF_API const char *dpprof_attention_name(int a) { return a >= 0 && a <= DPPROF_ATTENTION_EAGER ? dpprof__attention_names[a] : "?"; }
DPPROF_API const char *dpprof_framework_name(int f) {
    return f == DPPROF_FRAMEWORK_OPACUS ? "opacus" : (f == DPPROF_FRAMEWORK_PYTORCH ? "pytorch" : (f >= 0 && f <= DPPROF_FRAMEWORK_DPPROF ? "dpprof" : "?"));
}
DPPROF_API int dpprof_attention_parse(const char *name) {
    int i;
    for (i = 1; name && i <= DPPROF_ATTENTION_EAGER; i++)
        if (strcmp(name, dpprof__attention_names[i]) == 0) return i;
    return -1;
}
static const char *const dpprof__checkpoint_names[] = {"none", "none", "layers"};
DPPROF_API const char *dpprof_checkpoint_name(int c) { return c >= 0 && c <= DPPROF_CHECKPOINT_LAYERS ? dpprof__checkpoint_names[c] : "?"; }
DPPROF_API int dpprof_checkpoint_parse(const char *name) {
    int i;
    for (i = 1; name && i <= DPPROF_CHECKPOINT_LAYERS; i++)
        if (strcmp(name, dpprof__checkpoint_names[i]) == 0) return i;
    return -1;
}

/* ---- clock ----------------------------------------------------------------------------------- */
static double dpprof__clock_ms(void) {
    struct timespec ts;
#if defined(CLOCK_MONOTONIC)
    clock_gettime(CLOCK_MONOTONIC, &ts);
#else
    timespec_get(&ts, TIME_UTC); /* c11 fallback: not monotonic, see BUILD OPTIONS */
#endif
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* grow a table by doubling; 0 or DPPROF_ERR_OOM */
static int dpprof__grow(void **ptr, size_t *cap, size_t need, size_t elem) {
    size_t ncap;
    void *np;
    if (need <= *cap) return 0;
    ncap = *cap ? *cap : 64;
    while (ncap < need) ncap *= 2;
    if (ncap > SIZE_MAX / elem) return DPPROF_ERR_OVERFLOW;
    np = DPPROF_REALLOC(*ptr, ncap * elem);
    if (!np) return DPPROF_ERR_OOM;
    *ptr = np;
    *cap = ncap;
    return 0;
}

/* ---- json output: strings (utf-8, invalid bytes as U+FFFD) and numbers (nan and inf as null) --------- */
DPPROF_API size_t dpprof_utf8_len(const char *str, size_t avail) {
    const unsigned char *s = (const unsigned char *)str;
    unsigned char c = s[0], lo = 0x80, hi = 0xBF;
    size_t need, k;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 2;
    } else if (c == 0xE0) {
        need = 3;
        lo = 0xA0;
    } else if (c >= 0xE1 && c <= 0xEF) {
        need = 3;
        if (c == 0xED)
            hi = 0x9F;
    } else if (c == 0xF0) {
        need = 4;
        lo = 0x90;
    } else if (c >= 0xF1 && c <= 0xF3) {
        need = 4;
    } else if (c == 0xF4) {
        need = 4;
        hi = 0x8F;
    } else {
        return 0;
    }
    for (k = 1; k < need; k++) {
        if (k >= avail)
            return (size_t)-1;
        if (k == 1 ? (s[1] < lo || s[1] > hi) : (s[k] < 0x80 || s[k] > 0xBF))
            return 0;
    }
    return need;
}

/* levenshtein distance with transpositions (optimal string alignment), for "did you mean" */
static int dpprof__edit_distance(const char *a, size_t na, const char *b, size_t nb) {
    int row[3][64], i, j;
    if (na > 62 || nb > 62) return 1 << 20;
    for (j = 0; j <= (int)nb; j++) row[0][j] = j;
    for (i = 1; i <= (int)na; i++) {
        int *cur = row[i % 3], *prev = row[(i + 2) % 3], *prev2 = row[(i + 1) % 3];
        cur[0] = i;
        for (j = 1; j <= (int)nb; j++) {
            int cost = a[i - 1] != b[j - 1], v = prev[j] + 1;
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            if (prev[j - 1] + cost < v) v = prev[j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && prev2[j - 2] + 1 < v) v = prev2[j - 2] + 1;
            cur[j] = v;
        }
    }
    return row[na % 3][nb];
}

DPPROF_API const char *dpprof_closest(const char *word, const char *words, char *buf, size_t cap) {
    const char *w = words, *best = NULL;
    size_t n, bestn = 0, len;
    int bestd = 1 << 20, lim;
    if (!word || !words || !buf || !cap) return NULL;
    len = strlen(word);
    lim = (int)(len / 3) > 1 ? (int)(len / 3) : 1;
    while (*w) {
        int d;
        n = strcspn(w, "|");
        d = dpprof__edit_distance(word, len, w, n);
        if (d < bestd) bestd = d, best = w, bestn = n;
        w += n + (w[n] == '|');
    }
    if (!best || bestd > lim || bestd == 0) return NULL;
    snprintf(buf, cap, "%.*s", (int)bestn, best);
    return buf;
}

DPPROF_API const char *dpprof_words(const char *words, char *buf, size_t cap) {
    size_t len = 0, n;
    int k = 0, count = 1;
    const char *w;
    if (!buf || !cap) return "";
    buf[0] = 0;
    if (!words) return buf;
    for (w = words; *w; w++) count += *w == '|';
    for (w = words; *w && len < cap; k++) {
        n = strcspn(w, "|");
        len += (size_t)snprintf(buf + len, cap - len, "%s%.*s", k == 0 ? "" : (k == count - 1 ? " or " : ", "), (int)strcspn(w, "=|"), w);
        w += n + (w[n] == '|');
    }
    return buf;
}

static void dpprof__jstr(FILE *f, const char *str) {
    const unsigned char *p = (const unsigned char *)(str ? str : "");
    size_t n;
    if (!str) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (; *p; p++) {
        if (*p == '"' || *p == '\\') fprintf(f, "\\%c", *p);
        else if (*p == '\n') fputs("\\n", f);
        else if (*p == '\t') fputs("\\t", f);
        else if (*p < 0x20) fprintf(f, "\\u%04x", *p);
        else if (*p < 0x80) fputc(*p, f);
        /* json is utf-8: an invalid byte (--experiment, a --data path) becomes U+FFFD, so that
           dpprof's own reader takes the file back. the nul ends a sequence early: 4 is safe */
        else if ((n = dpprof_utf8_len((const char *)p, 4)) == 0 || n == (size_t)-1) fputs("\\ufffd", f);
        else {
            fwrite(p, 1, n, f);
            p += n - 1;
        }
    }
    fputc('"', f);
}

static void dpprof__jnum(FILE *f, double v) {
    if (v >= -DBL_MAX && v <= DBL_MAX) fprintf(f, "%.17g", v);
    else fputs("null", f); /* json has no nan or inf: unmeasured and infinite values are null */
}

/* =============================================================================================
   PART 2 (implementation): profiler
   ============================================================================================= */
/* ---- profiler -------------------------------------------------------------------------------- */
/* the live table is indexed by key so that a run with thousands of live allocations stays linear:
   slots hold live[] position + 1; 0 is empty, DPPROF__TOMB a freed slot that probes continue past */
#define DPPROF__TOMB ((size_t)-1)
static size_t dpprof__hash(uintptr_t key, size_t mask) {
    uint64_t h = (uint64_t)key * UINT64_C(0x9E3779B97F4A7C15);
    return (size_t)(h >> 17) & mask;
}

/* the index slot of key, or of the place to insert it (*found says which) */
static size_t dpprof__slot(const dpprof_prof *p, const void *key, int *found) DPPROF__KEY_ONLY;
static size_t dpprof__slot(const dpprof_prof *p, const void *key, int *found) {
    size_t mask = p->cap_index - 1, i = dpprof__hash((uintptr_t)key, mask), tomb = (size_t)-1;
    for (;; i = (i + 1) & mask) {
        size_t v = p->index[i];
        if (v == 0) {
            *found = 0;
            return tomb != (size_t)-1 ? tomb : i;
        }
        if (v == DPPROF__TOMB) {
            if (tomb == (size_t)-1) tomb = i;
        } else if (p->live[v - 1].key == key) {
            *found = 1;
            return i;
        }
    }
}

/* keep at most half the slots used (tombstones included): rebuild at twice the live count */
static int dpprof__reindex(dpprof_prof *p, size_t need) {
    size_t cap = 64, k;
    size_t *idx;
    while (cap < 4 * need) cap *= 2;
    idx = (size_t *)DPPROF_MALLOC(cap * sizeof(size_t));
    if (!idx) return DPPROF_ERR_OOM;
    memset(idx, 0, cap * sizeof(size_t));
    DPPROF_FREE(p->index);
    p->index = idx;
    p->cap_index = cap;
    p->used_index = 0;
    for (k = 0; k < p->n_live; k++) {
        int found;
        size_t slot = dpprof__slot(p, p->live[k].key, &found);
        p->index[slot] = k + 1;
        p->used_index++;
    }
    return DPPROF_OK;
}

DPPROF_API int dpprof_prof_init(dpprof_prof *p, int flags) {
    if (!p) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_prof_init: NULL profiler");
    memset(p, 0, sizeof *p);
    p->flags = flags;
    p->t0 = (flags & DPPROF_PROF_NO_CLOCK) ? 0.0 : dpprof__clock_ms();
    p->cur_phase = DPPROF_PHASE_NONE;
    p->peak_phase = DPPROF_PHASE_NONE;
    return DPPROF_OK;
}

DPPROF_API void dpprof_prof_free(dpprof_prof *p) {
    if (!p) return;
    DPPROF_FREE(p->events);
    DPPROF_FREE(p->phases);
    DPPROF_FREE(p->live);
    DPPROF_FREE(p->index);
    memset(p, 0, sizeof *p);
}

DPPROF_API double dpprof_prof_now_ms(const dpprof_prof *p) {
    return (p->flags & DPPROF_PROF_NO_CLOCK) ? 0.0 : dpprof__clock_ms() - p->t0;
}

static void dpprof__event(dpprof_prof *p, int64_t bytes, int cat, int mod) {
    dpprof_event *e;
    p->n_events_seen++;
    if (p->flags & DPPROF_PROF_NO_EVENTS) return;
    if (dpprof__grow((void **)&p->events, &p->cap_events, p->n_events + 1, sizeof *p->events)) {
        p->failed = 1;
        return;
    }
    e = &p->events[p->n_events++];
    e->t_ms = dpprof_prof_now_ms(p);
    e->bytes = bytes;
    e->live = p->live_bytes;
    e->category = cat;
    e->module = mod;
    e->phase = p->cur_phase;
    e->step = p->cur_step;
}

DPPROF_API int dpprof_track_alloc(dpprof_prof *p, const void *key, size_t bytes, int cat, int mod) {
    size_t i;
    int found;
    dpprof_live_alloc *a;
    if (!p || !key) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_track_alloc: NULL profiler or key");
    if (cat < 0 || cat >= DPPROF_CAT_COUNT) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_track_alloc: category %d out of range", cat);
    if (mod < 0 || mod >= DPPROF_MOD_COUNT) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_track_alloc: module %d out of range", mod);
    if (bytes > (size_t)INT64_MAX || p->live_bytes > INT64_MAX - (int64_t)bytes)
        return dpprof__fail(DPPROF_ERR_OVERFLOW, "dpprof_track_alloc: %zu bytes overflow the live total", bytes);
    if (p->alloc_bytes_total > INT64_MAX - (int64_t)bytes)
        return dpprof__fail(DPPROF_ERR_OVERFLOW, "dpprof_track_alloc: %zu bytes overflow the total of every allocation (%lld bytes so far; dpprof counts bytes in 64 bits)", bytes, (long long)p->alloc_bytes_total);
    if (2 * (p->used_index + 1) > p->cap_index && dpprof__reindex(p, p->n_live + 1) != DPPROF_OK) {
        p->failed = 1;
        return dpprof__fail(DPPROF_ERR_OOM, "dpprof_track_alloc: cannot grow the allocation index");
    }
    i = dpprof__slot(p, key, &found);
    if (found) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_track_alloc: key %p is already live", key);
    if (dpprof__grow((void **)&p->live, &p->cap_live, p->n_live + 1, sizeof *p->live)) {
        p->failed = 1;
        return dpprof__fail(DPPROF_ERR_OOM, "dpprof_track_alloc: cannot grow the allocation table");
    }
    if (p->index[i] == 0) p->used_index++;
    p->index[i] = p->n_live + 1;
    a = &p->live[p->n_live++];
    a->key = key;
    a->bytes = (int64_t)bytes;
    a->category = cat;
    a->module = mod;
    p->live_bytes += (int64_t)bytes;
    p->live_by[cat][mod] += (int64_t)bytes;
    p->n_allocs++;
    p->alloc_bytes_total += (int64_t)bytes;
    {
        int64_t c_live = dpprof_live(p, cat, -1);
        if (c_live > p->max_by_cat[cat]) p->max_by_cat[cat] = c_live;
    }
    dpprof__event(p, (int64_t)bytes, cat, mod);
    if (p->live_bytes > p->peak_bytes) { /* strictly greater: the peak is the first moment of the max */
        int c, m;
        p->peak_bytes = p->live_bytes;
        memcpy(p->peak_by, p->live_by, sizeof p->peak_by);
        memset(p->peak_by_cat, 0, sizeof p->peak_by_cat);
        memset(p->peak_by_mod, 0, sizeof p->peak_by_mod);
        for (c = 0; c < DPPROF_CAT_COUNT; c++)
            for (m = 0; m < DPPROF_MOD_COUNT; m++) {
                p->peak_by_cat[c] += p->live_by[c][m];
                p->peak_by_mod[m] += p->live_by[c][m];
            }
        p->peak_event = p->n_events_seen ? p->n_events_seen - 1 : 0;
        p->peak_phase = p->cur_phase;
        p->peak_step = p->cur_step;
    }
    if (p->cur_phase != DPPROF_PHASE_NONE && p->n_phases) {
        dpprof_phase_rec *r = &p->phases[p->n_phases - 1];
        if (p->live_bytes > r->bytes_peak) r->bytes_peak = p->live_bytes;
    }
    return DPPROF_OK;
}

DPPROF_API int dpprof_track_free(dpprof_prof *p, const void *key) {
    size_t slot, i;
    int found = 0;
    dpprof_live_alloc a;
    if (!p || !key) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_track_free: NULL profiler or key");
    if (p->cap_index) slot = dpprof__slot(p, key, &found);
    if (!found) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_track_free: key %p is not a live allocation", key);
    i = p->index[slot] - 1;
    a = p->live[i];
    p->index[slot] = DPPROF__TOMB;
    if (i != p->n_live - 1) { /* the last entry fills the hole: its index slot follows it */
        int f2;
        p->live[i] = p->live[p->n_live - 1];
        p->index[dpprof__slot(p, p->live[i].key, &f2)] = i + 1;
    }
    p->n_live--;
    p->live_bytes -= a.bytes;
    p->live_by[a.category][a.module] -= a.bytes;
    p->n_frees++;
    dpprof__event(p, -a.bytes, a.category, a.module);
    return DPPROF_OK;
}

DPPROF_API int dpprof_track_move(dpprof_prof *p, const void *old_key, const void *new_key) {
    size_t i, j;
    if (!p || !old_key || !new_key) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_track_move: NULL profiler or key");
    {
        int f_old = 0, f_new = 0;
        size_t s_old = p->cap_index ? dpprof__slot(p, old_key, &f_old) : 0;
        if (!f_old) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_track_move: key %p is not a live allocation", old_key);
        if (old_key == new_key) return DPPROF_OK;
        dpprof__slot(p, new_key, &f_new);
        if (f_new) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_track_move: key %p is already live", new_key);
        i = p->index[s_old] - 1;
        p->index[s_old] = DPPROF__TOMB;
        p->live[i].key = new_key;
        j = dpprof__slot(p, new_key, &f_new);
        if (p->index[j] == 0) p->used_index++;
        p->index[j] = i + 1;
        if (2 * p->used_index > p->cap_index) return dpprof__reindex(p, p->n_live);
        return DPPROF_OK;
    }
}

DPPROF_API int dpprof_track_retag(dpprof_prof *p, const void *key, int cat, int mod) {
    size_t i;
    dpprof_live_alloc a;
    if (!p || !key) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_track_retag: NULL profiler or key");
    {
        int found = 0;
        size_t slot = p->cap_index ? dpprof__slot(p, key, &found) : 0;
        if (!found) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_track_retag: key %p is not a live allocation", key);
        i = p->index[slot] - 1;
    }
    a = p->live[i];
    if (a.category == cat && a.module == mod) return DPPROF_OK;
    /* a free and an allocation of the same bytes: the total never moves, so neither does the peak */
    DPPROF__TRY(dpprof_track_free(p, key));
    return dpprof_track_alloc(p, key, (size_t)a.bytes, cat, mod);
}

DPPROF_API void *dpprof_malloc(dpprof_prof *p, size_t bytes, int cat, int mod) {
    void *ptr = DPPROF_MALLOC(bytes ? bytes : 1);
    if (!ptr) {
        dpprof__fail(DPPROF_ERR_OOM, "dpprof_malloc: cannot allocate %zu bytes (%s, %s)", bytes, dpprof_category_name(cat), dpprof_module_name(mod));
        return NULL;
    }
    if (dpprof_track_alloc(p, ptr, bytes, cat, mod) != DPPROF_OK) {
        DPPROF_FREE(ptr);
        return NULL;
    }
    return ptr;
}

DPPROF_API void dpprof_free(dpprof_prof *p, void *ptr) {
    if (!ptr) return;
    dpprof_track_free(p, ptr);
    DPPROF_FREE(ptr);
}

DPPROF_API int dpprof_phase_begin(dpprof_prof *p, int phase, int step) {
    dpprof_phase_rec *r;
    if (!p || phase < 0 || phase >= DPPROF_PHASE_COUNT) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_phase_begin: phase %d out of range", phase);
    dpprof_phase_end(p);
    if (dpprof__grow((void **)&p->phases, &p->cap_phases, p->n_phases + 1, sizeof *p->phases)) {
        p->failed = 1;
        return dpprof__fail(DPPROF_ERR_OOM, "dpprof_phase_begin: cannot grow the phase table");
    }
    r = &p->phases[p->n_phases++];
    memset(r, 0, sizeof *r);
    r->phase = phase;
    r->step = step;
    r->t_start_ms = r->t_end_ms = dpprof_prof_now_ms(p);
    r->bytes_start = r->bytes_end = r->bytes_peak = p->live_bytes;
    r->event_start = r->event_end = p->n_events;
    r->dram_read = r->dram_write = r->l2_read = r->l2_write = -1.0;
    p->cur_phase = phase;
    p->cur_step = step;
    return DPPROF_OK;
}

DPPROF_API void dpprof_phase_end(dpprof_prof *p) {
    dpprof_phase_rec *r;
    if (!p || p->cur_phase == DPPROF_PHASE_NONE || !p->n_phases) return;
    r = &p->phases[p->n_phases - 1];
    r->t_end_ms = dpprof_prof_now_ms(p);
    r->bytes_end = p->live_bytes;
    r->event_end = p->n_events;
    p->cur_phase = DPPROF_PHASE_NONE;
}

DPPROF_API void dpprof_prof_add_cost(dpprof_prof *p, double flops, double bytes) {
    if (!p || p->cur_phase == DPPROF_PHASE_NONE || !p->n_phases) return;
    p->phases[p->n_phases - 1].flops += flops;
    p->phases[p->n_phases - 1].bytes_analytic += bytes;
}

static int dpprof__phase_neutral_noise(const dpprof_phase_rec *r) {
    return r->phase == DPPROF_PHASE_NOISE && r->bytes_start == r->bytes_end && r->bytes_peak == r->bytes_start;
}

DPPROF_API int dpprof_prof_same_memory(const dpprof_prof *a, const dpprof_prof *b, const char **why) {
    size_t i, j;
    const char *w = NULL;
    if (a->n_events != b->n_events) w = "the number of events";
    for (i = 0; !w && i < a->n_events; i++) {
        const dpprof_event *x = &a->events[i], *y = &b->events[i];
        if (x->bytes != y->bytes || x->live != y->live || x->category != y->category || x->module != y->module || x->phase != y->phase || x->step != y->step) w = "an event";
    }
    if (!w && (a->peak_bytes != b->peak_bytes || a->peak_event != b->peak_event || memcmp(a->peak_by, b->peak_by, sizeof a->peak_by) != 0)) w = "the peak";
    for (i = j = 0; !w && (i < a->n_phases || j < b->n_phases);) {
        const dpprof_phase_rec *x = i < a->n_phases ? &a->phases[i] : NULL, *y = j < b->n_phases ? &b->phases[j] : NULL;
        if (x && y && x->phase == y->phase && x->step == y->step) {
            if (x->bytes_start != y->bytes_start || x->bytes_end != y->bytes_end || x->bytes_peak != y->bytes_peak) w = "a phase record";
            i++, j++;
        } else if (x && dpprof__phase_neutral_noise(x)) i++;
        else if (y && dpprof__phase_neutral_noise(y)) j++;
        else w = x && y ? "a phase record" : "the number of phases";
    }
    if (why) *why = w ? w : "";
    return w == NULL;
}

DPPROF_API int64_t dpprof_live(const dpprof_prof *p, int cat, int mod) {
    int64_t s = 0;
    int m;
    if (cat < 0 || cat >= DPPROF_CAT_COUNT) return 0;
    if (mod >= 0) return mod < DPPROF_MOD_COUNT ? p->live_by[cat][mod] : 0;
    for (m = 0; m < DPPROF_MOD_COUNT; m++) s += p->live_by[cat][m];
    return s;
}

/* ---- the profiler's writers ---------------------------------------------------------------------- */
/* the phases of steps >= from as complete events on track 1; idx: the clock is the event index */
static void dpprof__trace_phases(FILE *f, const dpprof_prof *p, int idx, int from) {
    size_t i;
    fputs(",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"phases\"}}", f);
    for (i = 0; i < p->n_phases; i++) {
        const dpprof_phase_rec *r = &p->phases[i];
        double ts = idx ? (double)r->event_start : r->t_start_ms * 1e3, te = idx ? (double)r->event_end : r->t_end_ms * 1e3;
        if (r->step < from) continue;
        fputs(",\n{\"name\": ", f);
        dpprof__jstr(f, dpprof_phase_name(r->phase));
        fputs(", \"cat\": \"phase\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": ", f);
        dpprof__jnum(f, ts);
        fputs(", \"dur\": ", f);
        dpprof__jnum(f, te - ts);
        fprintf(f, ", \"args\": {\"step\": %d, \"bytes_start\": %lld, \"bytes_end\": %lld, \"bytes_peak\": %lld, \"flops\": ", r->step, (long long)r->bytes_start, (long long)r->bytes_end, (long long)r->bytes_peak);
        dpprof__jnum(f, r->flops);
        fputs("}}", f);
    }
}
/* live bytes per category as a counter at each event of steps >= from (every event counts towards the level) */
static void dpprof__trace_counters(FILE *f, const dpprof_prof *p, int idx, int from) {
    int64_t live[DPPROF_CAT_COUNT];
    int used[DPPROF_CAT_COUNT], c, first;
    size_t i;
    memset(live, 0, sizeof live);
    memset(used, 0, sizeof used);
    for (i = 0; i < p->n_events; i++) used[p->events[i].category] |= p->events[i].bytes > 0;
    for (i = 0; i < p->n_events; i++) {
        const dpprof_event *e = &p->events[i];
        live[e->category] += e->bytes;
        if (e->step < from) continue;
        fputs(",\n{\"name\": \"live bytes\", \"ph\": \"C\", \"pid\": 1, \"ts\": ", f);
        dpprof__jnum(f, idx ? (double)i + 1 : e->t_ms * 1e3);
        fputs(", \"args\": {", f);
        for (c = 0, first = 1; c < DPPROF_CAT_COUNT; c++) {
            if (!used[c]) continue;
            fputs(first ? "" : ", ", f);
            dpprof__jstr(f, dpprof_category_name(c));
            fprintf(f, ": %lld", (long long)live[c]);
            first = 0;
        }
        fputs("}}", f);
    }
}

static void dpprof__jnames(FILE *f, const char *key, const char *(*name)(int), int n) {
    int i;
    fprintf(f, "\"%s\": [", key);
    for (i = 0; i < n; i++) {
        fputs(i ? ", " : "", f);
        dpprof__jstr(f, name(i));
    }
    fputs("]", f);
}

/* the event log as parallel arrays with the name lists: the inside of a "timeline" object, without its braces */
static void dpprof__timeline_arrays(FILE *f, const dpprof_prof *p, int clock, const char *nl) {
    size_t e;
    dpprof__jnames(f, "categories", dpprof_category_name, DPPROF_CAT_COUNT);
    fputs(", ", f);
    dpprof__jnames(f, "modules", dpprof_module_name, DPPROF_MOD_COUNT);
    fputs(", ", f);
    dpprof__jnames(f, "phases", dpprof_phase_name, DPPROF_PHASE_COUNT);
    fprintf(f, ", \"clock\": \"%s\",%s\"t_ms\": [", clock ? "measured" : "none", nl);
    for (e = 0; e < p->n_events; e++) {
        fputs(e ? "," : "", f);
        dpprof__jnum(f, p->events[e].t_ms);
    }
    fprintf(f, "],%s\"bytes\": [", nl);
    for (e = 0; e < p->n_events; e++) fprintf(f, "%s%lld", e ? "," : "", (long long)p->events[e].bytes);
    fprintf(f, "],%s\"category\": [", nl);
    for (e = 0; e < p->n_events; e++) fprintf(f, "%s%d", e ? "," : "", p->events[e].category);
    fprintf(f, "],%s\"module\": [", nl);
    for (e = 0; e < p->n_events; e++) fprintf(f, "%s%d", e ? "," : "", p->events[e].module);
    fprintf(f, "],%s\"phase\": [", nl);
    for (e = 0; e < p->n_events; e++) fprintf(f, "%s%d", e ? "," : "", p->events[e].phase);
    fprintf(f, "],%s\"step\": [", nl);
    for (e = 0; e < p->n_events; e++) fprintf(f, "%s%d", e ? "," : "", p->events[e].step);
    fputs("]", f);
}

DPPROF_API int dpprof_prof_write_json(const dpprof_prof *p, FILE *f) {
    size_t e;
    int c;
    if (!p || !f) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_prof_write_json: NULL %s", p ? "file" : "profile");
    fprintf(f, "{\"schema_version\": 1, \"peak_bytes\": %lld, \"peak_phase\": ", (long long)p->peak_bytes);
    dpprof__jstr(f, dpprof_phase_name(p->peak_phase));
    fprintf(f, ", \"peak_step\": %d, \"live_bytes\": %lld, \"allocs\": %lld, \"frees\": %lld, \"incomplete\": %s,\n \"peak_by_category\": {",
            p->peak_step, (long long)p->live_bytes, (long long)p->n_allocs, (long long)p->n_frees, p->failed ? "true" : "false");
    for (c = 0; c < DPPROF_CAT_COUNT; c++) {
        fputs(c ? ", " : "", f);
        dpprof__jstr(f, dpprof_category_name(c));
        fprintf(f, ": %lld", (long long)p->peak_by_cat[c]);
    }
    fputs("},\n \"peak_by_module\": {", f);
    for (c = 0; c < DPPROF_MOD_COUNT; c++) {
        fputs(c ? ", " : "", f);
        dpprof__jstr(f, dpprof_module_name(c));
        fprintf(f, ": %lld", (long long)p->peak_by_mod[c]);
    }
    fputs("},\n \"max_by_category\": {", f);
    for (c = 0; c < DPPROF_CAT_COUNT; c++) {
        fputs(c ? ", " : "", f);
        dpprof__jstr(f, dpprof_category_name(c));
        fprintf(f, ": %lld", (long long)p->max_by_cat[c]);
    }
    fputs("},\n \"phases\": [", f);
    for (e = 0; e < p->n_phases; e++) {
        const dpprof_phase_rec *r = &p->phases[e];
        fputs(e ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
        dpprof__jstr(f, dpprof_phase_name(r->phase));
        fprintf(f, ", \"step\": %d, \"bytes_start\": %lld, \"bytes_end\": %lld, \"bytes_peak\": %lld, \"t_start_ms\": ", r->step, (long long)r->bytes_start,
                (long long)r->bytes_end, (long long)r->bytes_peak);
        dpprof__jnum(f, r->t_start_ms);
        fputs(", \"t_end_ms\": ", f);
        dpprof__jnum(f, r->t_end_ms);
        fprintf(f, ", \"event_start\": %zu, \"event_end\": %zu}", r->event_start, r->event_end);
    }
    fputs("],\n \"timeline\": {", f);
    dpprof__timeline_arrays(f, p, !(p->flags & DPPROF_PROF_NO_CLOCK), "\n  ");
    fputs("}}\n", f);
    return fflush(f) != 0 || ferror(f) ? dpprof__fail(DPPROF_ERR_IO, "dpprof_prof_write_json: the stream reports a write error") : DPPROF_OK;
}

DPPROF_API int dpprof_prof_write_trace(const dpprof_prof *p, FILE *f) {
    const int idx = !!(p && (p->flags & DPPROF_PROF_NO_CLOCK));
    if (!p || !f) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_prof_write_trace: NULL %s", p ? "file" : "profile");
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"clock\": \"%s\"},\n\"traceEvents\": [\n", idx ? "event index" : "measured");
    fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"dpprof\"}}", f);
    dpprof__trace_phases(f, p, idx, INT32_MIN);
    dpprof__trace_counters(f, p, idx, INT32_MIN);
    fputs("\n]}\n", f);
    return fflush(f) != 0 || ferror(f) ? dpprof__fail(DPPROF_ERR_IO, "dpprof_prof_write_trace: the stream reports a write error") : DPPROF_OK;
}

#ifdef DPPROF_ENGINE /* parts 3 to 6: the engine, with -lm */
#ifdef DPPROF_MPI
#ifndef OMPI_SKIP_MPICXX /* the C API only: no C++ bindings inside the header's extern "C" */
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>
#endif

/* =============================================================================================
   PART 3 (implementation): noise and accountant
   ============================================================================================= */
/* ===========================================================================
   privacy: implementation (host only, in the
   DPPROF_IMPLEMENTATION section). uses libm (log, log1p, exp, expm1, erfc,
   sqrt, floor, fabs): the accountant never runs on the device, so libm's
   last-ulp differences do not matter here.
   =========================================================================== */
#ifndef DPPROF_PRIVACY_IMPL_H
#define DPPROF_PRIVACY_IMPL_H

/* ---------------------------------------------------------------- noise -- */

DPPROF_API void dpprof_add_noise_ref(float *out, size_t n, double stddev,
                                     dpprof_noise_key key, uint64_t stream,
                                     uint64_t offset) {
    size_t i = 0;
    if (out == NULL) {
        return;
    }
    /* walk whole philox blocks so each block is generated once; the first
       block may start mid-way when offset is not a multiple of four */
    while (i < n) {
        uint64_t idx = offset + (uint64_t)i;
        unsigned lane = (unsigned)(idx & 3u);
        double z[4];
        dpprof_normal4(key, stream, idx >> 2, z);
        for (; lane < 4u && i < n; ++lane, ++i) {
            out[i] = dpprof__noise_accum(out[i], stddev, z[lane]);
        }
    }
}

/* ----------------------------------------------------- log-space helpers -- */

/* log(exp(a) + exp(b)) without overflow */
static double dpprof__log_add(double a, double b) {
    double hi = a > b ? a : b;
    double lo = a > b ? b : a;
    if (lo == -HUGE_VAL) {
        return hi;
    }
    if (hi == HUGE_VAL) {
        return hi;
    }
    return hi + log1p(exp(lo - hi));
}

/* log(exp(a) - exp(b)) for a >= b; a result that rounding pushed below zero
   is returned as log(0) = -inf rather than an error, because the callers
   subtract sums that are non-negative in exact arithmetic */
static double dpprof__log_sub(double a, double b) {
    if (b == -HUGE_VAL) {
        return a;
    }
    if (!(a > b)) {
        return -HUGE_VAL;
    }
    return a + log(-expm1(b - a));
}

/* log(erfc(x)) for any x. below 20 libm's erfc keeps full relative accuracy
   (it is computed as exp(-x^2) times a rational function) and stays far from
   underflow (erfc(20) ~ 5e-176); from 20 on use the asymptotic series
   erfc(x) = exp(-x^2)/(x sqrt(pi)) * (1 + sum_k (-1)^k (2k-1)!!/(2x^2)^k),
   whose first omitted term after k = 10 is below 2e-22 for x >= 20; working
   in logs it never underflows. */
static double dpprof__log_erfc(double x) {
    const double half_log_pi = 0.57236494292470008707; /* log(pi)/2 */
    double t, term, sum;
    int k;
    if (x < 20.0) {
        return log(erfc(x));
    }
    t = 1.0 / (2.0 * x * x);
    term = 1.0;
    sum = 0.0;
    for (k = 1; k <= 10; ++k) {
        term *= -(double)(2 * k - 1) * t;
        sum += term;
    }
    return -x * x - log(x) - half_log_pi + log1p(sum);
}

/* log(exp(c) - 1) for c >= 0, accurate at both ends */
static double dpprof__log_expm1(double c) {
    if (c > 40.0) {
        return c + log1p(-exp(-c));
    }
    return log(expm1(c));
}

/* --------------------------------------------------------- log(A_alpha) -- */

/* integer alpha (mtz 2019 sec. 3.3): A = sum_i C(a,i) q^i (1-q)^(a-i)
   exp((i^2-i)/(2 sigma^2)). since the binomial weights sum to one and the
   i = 0, 1 exponents vanish, A = 1 + sum_{i>=2} C(a,i) q^i (1-q)^(a-i)
   expm1((i^2-i)/(2 sigma^2)), a sum of positive terms: computing it in log
   space and finishing with log1p keeps full relative accuracy even when
   log(A) is tiny (small q), where the plain sum would cancel. */
static int dpprof__log_a_int(double q, double sigma, double alpha, double *out) {
    long a = (long)alpha;
    long i;
    double lq = log(q), l1q = log1p(-q);
    double inv2s2 = 1.0 / (2.0 * sigma * sigma);
    double logc = 0.0; /* log C(a, i), built up incrementally */
    double acc = -HUGE_VAL;
    for (i = 1; i <= a; ++i) {
        double c, t;
        logc += log((double)(a - i + 1) / (double)i);
        if (i < 2) {
            continue;
        }
        c = (double)i * (double)(i - 1) * inv2s2;
        t = logc + (double)i * lq + (double)(a - i) * l1q + dpprof__log_expm1(c);
        acc = dpprof__log_add(acc, t);
    }
    *out = acc < 0.0 ? log1p(exp(acc)) : acc + log1p(exp(-acc));
    return DPPROF__PRIV_OK;
}

/* fractional alpha (mtz 2019 sec. 3.3): split the integral at
   z0 = sigma^2 log(1/q - 1) + 1/2 and expand each half in a generalised
   binomial series,
     A = sum_i C(a,i) q^i (1-q)^(a-i) e^((i^2-i)/(2s^2)) erfc((i-z0)/(sqrt2 s))/2
       + sum_i C(a,i) q^(a-i) (1-q)^i e^((j^2-j)/(2s^2)) erfc((z0-j)/(sqrt2 s))/2,
   j = a - i. C(a,i) changes sign for i > a, so positive and negative terms
   are summed separately in log space and subtracted once at the end. the
   terms past i > a alternate in sign, so stopping once a term is e^-40
   below the running positive sum bounds the truncation error by that term.
   near z0 the terms decay only polynomially (like i^-(a+2)) when
   sigma*|log(1/q - 1)| is small (q near 1/2, or q ~ 0.01..0.1 with sigma
   around 1), so after DPPROF__PRIV_SERIES_CAP terms past a the caller
   switches to quadrature. */
#define DPPROF__PRIV_SERIES_CAP 10000.0
static int dpprof__log_a_frac(double q, double sigma, double alpha, double *out) {
    const double log_half = -0.69314718055994530942;
    const double sqrt2 = 1.41421356237309504880;
    double lq = log(q), l1q = log1p(-q);
    double s2 = sigma * sigma;
    double inv2s2 = 1.0 / (2.0 * s2);
    double z0 = s2 * (l1q - lq) + 0.5;
    double scale = 1.0 / (sqrt2 * sigma);
    double logc = 0.0; /* log |C(a, i)| */
    int sign = 1;
    double pos = -HUGE_VAL, neg = -HUGE_VAL;
    double max_iter = alpha + DPPROF__PRIV_SERIES_CAP;
    long i;
    for (i = 0;; ++i) {
        double di = (double)i, j = alpha - di, s0, s1, t;
        if (i > 0) {
            double factor = alpha - (di - 1.0);
            logc += log(fabs(factor)) - log(di);
            if (factor < 0.0) {
                sign = -sign;
            }
        }
        s0 = logc + di * lq + j * l1q + (di * di - di) * inv2s2 + log_half +
             dpprof__log_erfc((di - z0) * scale);
        s1 = logc + j * lq + di * l1q + (j * j - j) * inv2s2 + log_half +
             dpprof__log_erfc((z0 - j) * scale);
        t = dpprof__log_add(s0, s1);
        if (sign > 0) {
            pos = dpprof__log_add(pos, t);
        } else {
            neg = dpprof__log_add(neg, t);
        }
        if (di > alpha && t < pos - 40.0) {
            break;
        }
        if (di > max_iter) {
            return DPPROF__PRIV_ENOCONV; /* the caller tries the quadrature */
        }
    }
    *out = dpprof__log_sub(pos, neg);
    return DPPROF__PRIV_OK;
}

/* log(1 - q + q e^u), the log of the mixture's likelihood ratio */
static double dpprof__log_mix(double q, double u) {
    if (u < 30.0) {
        return log1p(q * expm1(u));
    }
    return u + log(q) + log1p((1.0 - q) / q * exp(-u));
}

/* (1 + x)^a - 1 - a x for x > -1 with full relative accuracy: the binomial
   series sum_{k>=2} C(a,k) x^k when |a x| < 1/2 (term ratios are then below
   1/6 while k <= a and below 1/2 after, so 60 terms reach 1e-18), the direct
   form otherwise (its cancellation
   is then at most a factor ~ 2/((a-1) |x|) <= 4/(1 - 1/a)). */
static double dpprof__pow1p_m1_lin(double alpha, double x) {
    if (fabs(alpha * x) < 0.5) {
        double term = 0.5 * alpha * (alpha - 1.0) * x * x, sum = term;
        int k;
        for (k = 2; k < 60 && fabs(term) > 1e-18 * fabs(sum); ++k) {
            term *= (alpha - (double)k) / (double)(k + 1) * x;
            sum += term;
        }
        return sum;
    }
    return expm1(alpha * log1p(x)) - alpha * x;
}

/* quadrature for log(A), used where the series is slow or imprecise: the
   defining integral A = E_{t~N(0,1)} (1 + q w(t))^a with
   w = exp(t/s - 1/(2s^2)) - 1 (so q w + 1 is the likelihood ratio) by the
   trapezoid rule. the integrand is analytic in the strip |im t| < pi s
   (where 1 + q w first vanishes) and gaussian-decaying, so with h <= s/20
   the rule converges geometrically (error ~ exp(-2 pi^2 s/h) ~ e^-197
   relative). range: the log-integrand a L(t) - t^2/2, L = log(1 + q w),
   is within e^-60 of its maximum only on
   [-sqrt(2(60 - a log(1-q))), a/s + sqrt(2(60 + a(log(2/q) + 1/(2s^2))))]
   (from log(1-q) <= L <= log 2 + max(0, t/s)). since E[w] = 0 exactly,
   A - 1 = E[(1 + q w)^a - 1 - a q w], an integrand of second order in q w
   with no first-order cancellation: summing it keeps full relative accuracy
   of a tiny log(A) (small q, large sigma), where the series, which sums
   terms of size one, is limited to an absolute 1e-16 or so. */
static int dpprof__log_a_quad(double q, double sigma, double alpha, double *out) {
    const double log_sqrt_2pi = 0.91893853320467274178;
    double c = 1.0 / (2.0 * sigma * sigma);
    double h = sigma / 20.0 < 0.05 ? sigma / 20.0 : 0.05;
    double t_lo = -sqrt(2.0 * (60.0 - alpha * log1p(-q)));
    double t_hi = alpha / sigma + sqrt(2.0 * (60.0 + alpha * (log(2.0 / q) + c)));
    double npts = ceil((t_hi - t_lo) / h) + 1.0;
    double lse = -HUGE_VAL, sum_f = 0.0, log_a;
    long k, n;
    if (!(npts <= 4.0e6)) {
        return DPPROF__PRIV_ENOCONV;
    }
    n = (long)npts;
    for (k = 0; k < n; ++k) {
        double t = t_lo + h * (double)k;
        double u = t / sigma - c;
        double lphi = -0.5 * t * t - log_sqrt_2pi;
        double al = alpha * dpprof__log_mix(q, u);
        lse = dpprof__log_add(lse, al + lphi);
        if (al > 600.0) {
            /* (1+x)^a would overflow; there the -1 - a x is negligible and
               the product with the gaussian weight is taken in logs */
            sum_f += exp(al + lphi);
        } else {
            sum_f += dpprof__pow1p_m1_lin(alpha, q * expm1(u)) * exp(lphi);
        }
    }
    log_a = lse + log(h);
    if (log_a < 0.5 && sum_f < HUGE_VAL) {
        log_a = log1p(h * sum_f);
    }
    *out = log_a;
    return DPPROF__PRIV_OK;
}

/* ------------------------------------------------------------ public rdp -- */

DPPROF_API int dpprof_rdp_sgm(double q, double sigma, double alpha, double *rdp) {
    double log_a, r;
    int rc;
    if (rdp == NULL) {
        return dpprof__fail(DPPROF__PRIV_ENULL, "dpprof_rdp_sgm: NULL output");
    }
    if (q != q || sigma != sigma || alpha != alpha) {
        return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_rdp_sgm: a NaN among q = %g, sigma = %g, alpha = %g", q, sigma, alpha);
    }
    if (q < 0.0 || q > 1.0 || sigma < 0.0 || !(alpha > 1.0)) {
        return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_rdp_sgm: q = %g (in [0, 1]), sigma = %g (>= 0), alpha = %g (> 1): one is out of range", q, sigma, alpha);
    }
    if (alpha > DPPROF__PRIV_MAX_ORDER && alpha <= DBL_MAX) {
        return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_rdp_sgm: order %g is past %g (and finite)", alpha, (double)DPPROF__PRIV_MAX_ORDER);
    }
    if (q == 0.0) {
        *rdp = 0.0; /* the data is never touched */
        return DPPROF__PRIV_OK;
    }
    if (sigma < 1e-100 || alpha > DBL_MAX) {
        *rdp = HUGE_VAL; /* no noise, or the max-divergence limit */
        return DPPROF__PRIV_OK;
    }
    if (sigma > DBL_MAX) {
        *rdp = 0.0;
        return DPPROF__PRIV_OK;
    }
    if (q == 1.0) {
        *rdp = alpha / (2.0 * sigma * sigma); /* plain gaussian mechanism */
        return DPPROF__PRIV_OK;
    }
    if (alpha == floor(alpha)) {
        rc = dpprof__log_a_int(q, sigma, alpha, &log_a);
    } else {
        rc = dpprof__log_a_frac(q, sigma, alpha, &log_a);
        /* the series sums terms of size one, so below log(A) ~ 1e-6 its
           absolute rounding error (~1e-16) exceeds 1e-10 relative; there,
           and where it converges too slowly, the quadrature is better */
        if (rc == DPPROF__PRIV_ENOCONV || (rc == DPPROF__PRIV_OK && log_a < 1e-6)) {
            double log_a_q;
            if (dpprof__log_a_quad(q, sigma, alpha, &log_a_q) == DPPROF__PRIV_OK) {
                log_a = log_a_q;
                rc = DPPROF__PRIV_OK;
            }
        }
    }
    if (rc != DPPROF__PRIV_OK) {
        return dpprof__fail(rc, "dpprof_rdp_sgm: neither the series nor the quadrature converged at order %g (q %g, sigma %g)", alpha, q, sigma);
    }
    r = log_a / (alpha - 1.0);
    *rdp = r > 0.0 ? r : 0.0; /* a renyi divergence is never negative */
    return DPPROF__PRIV_OK;
}

DPPROF_API int dpprof_rdp_default_orders(double *orders) {
    int n = 0, x;
    for (x = 1; x <= 99; ++x) {
        if (orders != NULL) {
            orders[n] = 1.0 + (double)x / 10.0; /* same rounding as python's 1 + x / 10.0 */
        }
        ++n;
    }
    for (x = 12; x <= 63; ++x) {
        if (orders != NULL) {
            orders[n] = (double)x;
        }
        ++n;
    }
    return n;
}

/* ------------------------------------------------------ rdp -> (eps, delta) */

/* epsilon at one order from the total rdp (the tests also call it to check
   the conversion alone); improved != 0: balle et al. 2020,
   else the classic mironov 2017 bound */
static double dpprof__rdp_to_eps_one(double rdp_total, double alpha, double delta,
                                     int improved) {
    if (rdp_total == HUGE_VAL) {
        return HUGE_VAL;
    }
    if (rdp_total == 0.0) {
        return 0.0; /* identical output distributions: (0, 0)-dp at any delta */
    }
    if (alpha > DBL_MAX) {
        return rdp_total; /* both correction terms vanish as alpha -> inf */
    }
    if (improved) {
        return rdp_total - (log(delta) + log(alpha)) / (alpha - 1.0) +
               log1p(-1.0 / alpha);
    }
    return rdp_total - log(delta) / (alpha - 1.0);
}

static int dpprof__rdp_epsilon_impl(double q, double sigma, long long steps,
                                    double delta, const double *orders,
                                    int n_orders, double *eps,
                                    double *best_order, int improved) {
    double def[DPPROF__PRIV_N_DEFAULT_ORDERS];
    double best = HUGE_VAL, best_a = (double)NAN;
    int i;
    if (eps == NULL) {
        return dpprof__fail(DPPROF__PRIV_ENULL, "dpprof_rdp_epsilon: NULL epsilon");
    }
    if (q != q || sigma != sigma || delta != delta) {
        return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_rdp_epsilon: a NaN among q = %g, sigma = %g, delta = %g", q, sigma, delta);
    }
    if (q < 0.0 || q > 1.0 || sigma < 0.0 || steps < 0 || !(delta > 0.0) ||
        !(delta < 1.0)) {
        return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_rdp_epsilon: q = %g (in [0, 1]), sigma = %g (>= 0), steps = %lld (>= 0), delta = %g (in (0, 1)): one is out of range", q, sigma, (long long)steps, delta);
    }
    if (orders == NULL) {
        n_orders = dpprof_rdp_default_orders(def);
        orders = def;
    } else if (n_orders <= 0) {
        return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_rdp_epsilon: %d orders given", n_orders);
    }
    /* validate every order before computing anything, so an invalid grid
       fails the same way whatever q and sigma are */
    for (i = 0; i < n_orders; ++i) {
        double a = orders[i];
        if (a != a || !(a > 1.0) || (a > DPPROF__PRIV_MAX_ORDER && a <= DBL_MAX)) {
            return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_rdp_epsilon: order %d is %g: orders are in (1, %g] (or infinite)", i, a, (double)DPPROF__PRIV_MAX_ORDER);
        }
    }
    for (i = 0; i < n_orders; ++i) {
        double r, total, e;
        int rc = dpprof_rdp_sgm(q, sigma, orders[i], &r);
        if (rc == DPPROF__PRIV_ENOCONV) {
            continue; /* dropping an order keeps the minimum a valid bound */
        }
        if (rc != DPPROF__PRIV_OK) {
            return rc;
        }
        /* steps == 0 composes nothing, even when the per-step rdp is +inf */
        total = steps == 0 ? 0.0 : r * (double)steps;
        e = dpprof__rdp_to_eps_one(total, orders[i], delta, improved);
        if (e < best) {
            best = e;
            best_a = orders[i];
        }
    }
    /* the default grid stops at 63: where the minimum sits there, the orders past it are searched too
       (few steps or small q put it there; the grid's edge would overstate epsilon) */
    if (orders == def && best_a == def[n_orders - 1]) {
        static const double more[] = {64, 72, 80, 96, 112, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024, 1536, 2048, 3072, 4096, 8192};
        for (i = 0; i < (int)(sizeof more / sizeof more[0]); ++i) {
            double r, e;
            if (dpprof_rdp_sgm(q, sigma, more[i], &r) != DPPROF__PRIV_OK) continue;
            e = dpprof__rdp_to_eps_one(steps == 0 ? 0.0 : r * (double)steps, more[i], delta, improved);
            if (e < best) {
                best = e;
                best_a = more[i];
            }
        }
    }
    if (improved && best < 0.0) {
        best = 0.0;
    }
    *eps = best;
    if (best_order != NULL) {
        *best_order = best_a;
    }
    return DPPROF__PRIV_OK;
}

DPPROF_API int dpprof_rdp_epsilon(double q, double sigma, long long steps,
                                  double delta, const double *orders,
                                  int n_orders, double *eps, double *best_order) {
    return dpprof__rdp_epsilon_impl(q, sigma, steps, delta, orders, n_orders,
                                    eps, best_order, 1);
}

DPPROF_API int dpprof_rdp_epsilon_classic(double q, double sigma,
                                          long long steps, double delta,
                                          const double *orders, int n_orders,
                                          double *eps, double *best_order) {
    return dpprof__rdp_epsilon_impl(q, sigma, steps, delta, orders, n_orders,
                                    eps, best_order, 0);
}

DPPROF_API int dpprof_rdp_sigma_for_epsilon(double q, long long steps,
                                            double delta, double target_eps,
                                            double *sigma) {
    double lo, hi, e, e0;
    int rc, iter;
    if (sigma == NULL) {
        return dpprof__fail(DPPROF__PRIV_ENULL, "dpprof_rdp_sigma_for_epsilon: NULL sigma");
    }
    if (target_eps != target_eps || !(target_eps > 0.0)) {
        return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_rdp_sigma_for_epsilon: target epsilon %g must be > 0", target_eps);
    }
    /* also validates q, steps and delta */
    rc = dpprof_rdp_epsilon(q, 1.0, steps, delta, NULL, 0, &e, NULL);
    if (rc != DPPROF__PRIV_OK) {
        return rc;
    }
    if (dpprof_noiseless_epsilon(q, steps, delta, &e0) == DPPROF__PRIV_OK && e0 <= target_eps) {
        *sigma = 0.0; /* every sigma reaches it: a record is drawn at all with a chance under delta */
        return DPPROF__PRIV_OK;
    }
    if (q == 0.0 || steps == 0) {
        /* epsilon does not depend on sigma here */
        if (e <= target_eps) {
            *sigma = 0.0;
            return DPPROF__PRIV_OK;
        }
        return dpprof__fail(DPPROF__PRIV_ERANGE, "dpprof_rdp_sigma_for_epsilon: no sigma reaches epsilon %g (q %g, %lld steps, delta %g)", target_eps, q, (long long)steps, delta);
    }
    /* bracket: eps(lo) > target >= eps(hi); eps is non-increasing in sigma
       because every rdp(alpha) is */
    hi = 1.0;
    if (e > target_eps) {
        lo = hi;
        for (;;) {
            hi *= 2.0;
            if (hi > 1e6) {
                return dpprof__fail(DPPROF__PRIV_ERANGE, "dpprof_rdp_sigma_for_epsilon: sigma past 1e6 still spends more than epsilon %g (q %g, %lld steps, delta %g)", target_eps, q, (long long)steps, delta);
            }
            rc = dpprof_rdp_epsilon(q, hi, steps, delta, NULL, 0, &e, NULL);
            if (rc != DPPROF__PRIV_OK) {
                return rc;
            }
            if (e <= target_eps) {
                break;
            }
            lo = hi;
        }
    } else {
        lo = hi;
        for (;;) {
            lo *= 0.5;
            if (lo < 1e-12) {
                *sigma = hi; /* practically any sigma meets the target */
                return DPPROF__PRIV_OK;
            }
            rc = dpprof_rdp_epsilon(q, lo, steps, delta, NULL, 0, &e, NULL);
            if (rc != DPPROF__PRIV_OK) {
                return rc;
            }
            if (e > target_eps) {
                break;
            }
            hi = lo;
        }
    }
    /* bisection on log sigma: the geometric mean halves the log-bracket;
       stop at 1e-7 relative, a margin under the promised 1e-6 */
    for (iter = 0; iter < 200 && hi > lo * (1.0 + 1e-7); ++iter) {
        double mid = sqrt(lo * hi);
        rc = dpprof_rdp_epsilon(q, mid, steps, delta, NULL, 0, &e, NULL);
        if (rc != DPPROF__PRIV_OK) {
            return rc;
        }
        if (e <= target_eps) {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    *sigma = hi; /* hi always meets the target */
    return DPPROF__PRIV_OK;
}

/* ----------------------------------------------- privacy loss distribution -- */
/* an iterative radix-2 fft of n (a power of 2) complex values, re and im apart; inverse without the 1/n. t: a table of
   cos and sin of -2 pi k / tn for k < tn / 2 (cos first, then sin), tn a power of 2 at least n (dpprof__fft_need) */
typedef struct dpprof__fft_tab {
    double *tw;
    size_t n;
} dpprof__fft_tab;
static int dpprof__fft_need(dpprof__fft_tab *t, size_t n) { /* a table for n points or more, kept for the next transforms */
    size_t k;
    if (t->n >= n) return 0;
    DPPROF_FREE(t->tw);
    t->n = 0;
    if (!(t->tw = (double *)DPPROF_MALLOC(n * sizeof(double)))) return -1;
    for (k = 0; k < n / 2; k++) t->tw[k] = cos(-2.0 * 3.14159265358979323846 * (double)k / (double)n), t->tw[n / 2 + k] = sin(-2.0 * 3.14159265358979323846 * (double)k / (double)n);
    t->n = n;
    return 0;
}
static void dpprof__fft(double *re, double *im, size_t n, int inverse, const dpprof__fft_tab *t) {
    size_t i, j, len;
    const double *tc = t->tw, *ts = t->tw + t->n / 2;
    for (i = 1, j = 0; i < n; i++) {
        size_t bit = n >> 1;
        for (; j & bit; bit >>= 1) j ^= bit;
        j ^= bit;
        if (i < j) {
            double x = re[i];
            re[i] = re[j], re[j] = x;
            x = im[i], im[i] = im[j], im[j] = x;
        }
    }
    for (len = 2; len <= n; len <<= 1) {
        const size_t half = len / 2, stride = t->n / len;
        size_t k;
        for (i = 0; i < n; i += len)
            for (k = 0; k < half; k++) {
                const double wr = tc[k * stride], wi = inverse ? -ts[k * stride] : ts[k * stride];
                const size_t a = i + k, b = a + half;
                const double xr = re[b] * wr - im[b] * wi, xi = re[b] * wi + im[b] * wr;
                re[b] = re[a] - xr, im[b] = im[a] - xi;
                re[a] += xr, im[a] += xi;
            }
    }
}
/* the spectrum X[0..M] (M = m / 2) of a real sequence x of length m from the fft of z[j] = x[2j] + i x[2j+1]: with
   E[k] = (Z[k] + conj Z[M-k]) / 2 and O[k] = (Z[k] - conj Z[M-k]) / 2i, X[k] = E[k] + W^k O[k], W = e^(-2 pi i / m) */
static void dpprof__fft_unpack(const double *zr, const double *zi, size_t M, const dpprof__fft_tab *t, double *xr, double *xi) {
    const size_t s = t->n / (2 * M);
    size_t k;
    for (k = 0; k <= M; k++) {
        const size_t a = k % M, b = (M - k) % M;
        const double er = 0.5 * (zr[a] + zr[b]), ei = 0.5 * (zi[a] - zi[b]), or_ = 0.5 * (zi[a] + zi[b]), oi = -0.5 * (zr[a] - zr[b]);
        const double wr = k < M ? t->tw[k * s] : -1.0, wi = k < M ? t->tw[t->n / 2 + k * s] : 0.0;
        xr[k] = er + wr * or_ - wi * oi, xi[k] = ei + wr * oi + wi * or_;
    }
}
/* c[0 .. na + nb - 2] = the linear convolution of the real sequences a and b (a == b: a squared, one transform), by
   complex ffts of half the padded length: a real sequence's two halves (even and odd points) in one transform */
static int dpprof__conv(const double *a, size_t na, const double *b, size_t nb, double *c, dpprof__fft_tab *t) {
    const size_t n = na + nb - 1;
    size_t m = 2, M, k;
    double *buf, *zr, *zi, *ar, *ai, *br, *bi;
    while (m < n) m <<= 1;
    M = m / 2;
    if (dpprof__fft_need(t, m)) return -1;
    if (!(buf = (double *)DPPROF_MALLOC((6 * M + 4) * sizeof(double)))) return -1;
    zr = buf, zi = zr + M, ar = zi + M, ai = ar + M + 1, br = ai + M + 1, bi = br + M + 1;
    for (k = 0; k < M; k++) zr[k] = 2 * k < na ? a[2 * k] : 0.0, zi[k] = 2 * k + 1 < na ? a[2 * k + 1] : 0.0;
    dpprof__fft(zr, zi, M, 0, t);
    dpprof__fft_unpack(zr, zi, M, t, ar, ai);
    if (a != b) {
        for (k = 0; k < M; k++) zr[k] = 2 * k < nb ? b[2 * k] : 0.0, zi[k] = 2 * k + 1 < nb ? b[2 * k + 1] : 0.0;
        dpprof__fft(zr, zi, M, 0, t);
        dpprof__fft_unpack(zr, zi, M, t, br, bi);
    } else memcpy(br, ar, 2 * (M + 1) * sizeof(double));
    for (k = 0; k <= M; k++) { /* C = A B, over A's arrays */
        const double r = ar[k] * br[k] - ai[k] * bi[k], i = ar[k] * bi[k] + ai[k] * br[k];
        ar[k] = r, ai[k] = i;
    }
    { /* back: Z[k] = E[k] + i O[k], E[k] = (C[k] + conj C[M-k]) / 2, O[k] = (C[k] - conj C[M-k]) conj(W^k) / 2; z = ifft(Z) / M */
        const size_t s = t->n / m;
        for (k = 0; k < M; k++) {
            const double er = 0.5 * (ar[k] + ar[M - k]), ei = 0.5 * (ai[k] - ai[M - k]), dr = 0.5 * (ar[k] - ar[M - k]), di = 0.5 * (ai[k] + ai[M - k]);
            const double wr = t->tw[k * s], wi = -t->tw[t->n / 2 + k * s]; /* conj(W^k) */
            const double or_ = dr * wr - di * wi, oi = dr * wi + di * wr;
            zr[k] = er - oi, zi[k] = ei + or_;
        }
    }
    dpprof__fft(zr, zi, M, 1, t);
    for (k = 0; k < M; k++) {
        if (2 * k < n) c[2 * k] = zr[k] / (double)M;
        if (2 * k + 1 < n) c[2 * k + 1] = zi[k] / (double)M;
    }
    DPPROF_FREE(buf);
    return 0;
}

/* a loss pmf on the grid: mass p[k] at loss (lo + k) h, and mass at infinity. budget: the mass a trim of this
   pmf may count into infinity (a step's budget times the steps the pmf composes). logm[j]: an upper bound on
   the log of the finite part's moment generating function E[exp(t_j L)] at t_j = 2^(j/4 - 6), which bounds
   its upper tail (chernoff: P[L >= x] <= exp(log M(t) - t x)) whatever roundoff the fft left there */
#define DPPROF__PLD_NT 98
typedef struct dpprof__pld {
    double *p;
    long long lo;
    size_t n;
    double inf, budget;
    double ts; /* the scale of the mgf's t (dpprof__pld_t) */
    double logm[DPPROF__PLD_NT];
} dpprof__pld;

#define DPPROF__PLD_TAIL 1e-16     /* tail mass a truncation may move: the upper to infinity, the lower up to the window */
#define DPPROF__PLD_MAXN (1 << 20) /* the most points a composed pmf may hold: 4 x 2^21 doubles of fft, 64 MiB, a fifth of a second */

/* the mgf's t_j = 2^(j/4 - 6) in units of the loss, j < 49; and again, j - 49, scaled by ts: on a grid coarser than
   0.01 (a huge epsilon: a tiny sigma) as many points of the grid as 2^(j/4 - 6) are of a grid of 0.01, so that the
   bound can also trim a composition whose losses are counted in thousands (where e^(t l) of the first t would hold no
   tail at all). on a finer grid the two halves are the same t */
static double dpprof__pld_t(const dpprof__pld *d, int j) { return (j < 49 ? 1.0 : d->ts) * pow(2.0, 0.25 * (double)(j % 49) - 6.0); }
static double dpprof__pld_lse(double x, double y) { /* log(exp(x) + exp(y)) */
    if (x < y) {
        const double t = x;
        x = y, y = t;
    }
    return y == -HUGE_VAL ? x : x + log1p(exp(y - x));
}
/* the finite part's log mgf, summed from the pmf itself (a step's pmf, which has no fft roundoff): for each
   t a running log-sum-exp, mx the largest term so far and sm the sum scaled by it */
static void dpprof__pld_mgf(dpprof__pld *d, double h) {
    double mx[DPPROF__PLD_NT], sm[DPPROF__PLD_NT], t[DPPROF__PLD_NT];
    const int nt = d->ts == 1.0 ? DPPROF__PLD_NT / 2 : DPPROF__PLD_NT; /* on a fine grid the second half is the first */
    int j;
    size_t k;
    for (j = 0; j < nt; j++) mx[j] = -HUGE_VAL, sm[j] = 0.0, t[j] = dpprof__pld_t(d, j);
    for (k = 0; k < d->n; k++) {
        double lp, l;
        if (!(d->p[k] > 0.0)) continue;
        lp = log(d->p[k]), l = (double)(d->lo + (long long)k) * h;
        for (j = 0; j < nt; j++) {
            const double v = lp + t[j] * l;
            if (v > mx[j]) sm[j] = sm[j] * exp(mx[j] - v) + 1.0, mx[j] = v;
            else sm[j] += exp(v - mx[j]);
        }
    }
    for (j = 0; j < DPPROF__PLD_NT; j++) d->logm[j] = j < nt ? mx[j] + log(sm[j]) : d->logm[j - nt];
}
/* chernoff's bound on the finite part's mass at losses >= x, as a log */
static double dpprof__pld_logtail(const dpprof__pld *d, double x) {
    double best = 0.0;
    int j;
    for (j = 0; j < DPPROF__PLD_NT; j++) {
        const double v = d->logm[j] - dpprof__pld_t(d, j) * x;
        best = v < best ? v : best;
    }
    return best;
}

/* drop the window's ends. below: values under 1e-14 of the largest (the fft's roundoff fills the far tails
   with values near 1e-16 of it) or a tail of at most DPPROF__PLD_TAIL move up to the first kept point (a larger
   loss: pessimistic), and the mgf bound grows by what moved. above, whatever goes is counted into delta at
   every epsilon, and the composition multiplies it by the steps still to come, so it is held to the budget:
   a step's pmf (exact) moves no more than DPPROF__PLD_TAIL of its upper tail; a composed one (fft
   roundoff in its tails, which a real thin tail of mass can lie under) moves all from the loss where
   chernoff's bound on the tail fits the budget, and counts the bound, not the values there */
static void dpprof__pld_trim(dpprof__pld *d, double h, int composed) {
    size_t a = 0, b = d->n, k;
    double low = 0.0, high = 0.0, top = 0.0, floor_;
    int j;
    for (k = 0; k < d->n; k++) top = d->p[k] > top ? d->p[k] : top;
    floor_ = 1e-14 * top;
    while (a + 1 < b && (d->p[a] <= floor_ || low + d->p[a] <= DPPROF__PLD_TAIL)) low += d->p[a++];
    if (a) {
        d->p[a] += low;
        for (j = 0; j < DPPROF__PLD_NT && low > 0.0; j++)
            d->logm[j] = dpprof__pld_lse(d->logm[j], log(low) + dpprof__pld_t(d, j) * (double)(d->lo + (long long)a) * h);
    }
    if (!composed) { /* a step's exact tail: no more than the budget (a delta of 1e-22 needs less than 1e-16) */
        const double cap = d->budget < DPPROF__PLD_TAIL ? d->budget : DPPROF__PLD_TAIL;
        while (b > a + 1 && high + d->p[b - 1] <= cap) high += d->p[--b];
    } else { /* the smallest b whose tail bound fits: the bound falls as the loss grows */
        size_t lo_ = a + 1, hi_ = b;
        const double lcap = log(d->budget > DPPROF__PLD_TAIL ? d->budget : DPPROF__PLD_TAIL);
        while (lo_ < hi_) {
            const size_t mid = lo_ + (hi_ - lo_) / 2;
            if (dpprof__pld_logtail(d, (double)(d->lo + (long long)mid) * h) <= lcap) hi_ = mid;
            else lo_ = mid + 1;
        }
        if (lo_ < b) {
            high = exp(dpprof__pld_logtail(d, (double)(d->lo + (long long)lo_) * h));
            b = lo_;
        }
    }
    if (a)
        for (k = a; k < b; k++) d->p[k - a] = d->p[k];
    d->inf += high;
    d->lo += (long long)a;
    d->n = b - a;
}

/* c = a composed with b (the convolution of the pmfs), by fft; c's array is new. a == b: one forward
   transform, squared */
static int dpprof__pld_compose(const dpprof__pld *a, const dpprof__pld *b, double h, dpprof__pld *c, dpprof__fft_tab *t) {
    const size_t n = a->n + b->n - 1;
    size_t k;
    if (n > DPPROF__PLD_MAXN) /* the memory and the time stay bounded: the caller says so and falls back to rdp */
        return dpprof__fail(DPPROF__PRIV_ERANGE, "dpprof_pld_epsilon: the composed loss grid passes %d points at interval %g", DPPROF__PLD_MAXN, h);
    const int direct = (double)a->n * (double)b->n <= (double)(1 << 21);
    c->p = (double *)DPPROF_MALLOC(n * sizeof(double));
    if (c->p && direct) { /* small pmfs: the sum itself, which has no fft roundoff in its tails (a sum of products of
                             non-negative numbers keeps every digit of its thinnest tail), so that the trim may count
                             the values there, as of a step's */
        size_t i, j;
        memset(c->p, 0, n * sizeof(double));
        for (i = 0; i < a->n; i++)
            for (j = 0; j < b->n; j++) c->p[i + j] += a->p[i] * b->p[j];
    } else if (!c->p || dpprof__conv(a->p, a->n, a == b ? a->p : b->p, b->n, c->p, t)) {
        DPPROF_FREE(c->p);
        return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_pld_epsilon: out of memory for the composition's fft");
    }
    for (k = 0; k < n; k++) c->p[k] = c->p[k] > 0.0 ? c->p[k] : 0.0; /* roundoff */
    c->lo = a->lo + b->lo;
    c->n = n;
    c->inf = a->inf + b->inf - a->inf * b->inf; /* 1 - (1 - a)(1 - b), without losing a tiny a or b */
    c->budget = a->budget + b->budget;
    c->ts = a->ts;                                                             /* the same interval: the same t */
    for (k = 0; k < DPPROF__PLD_NT; k++) c->logm[k] = a->logm[k] + b->logm[k]; /* the mgf of a sum */
    dpprof__pld_trim(c, h, !direct);
    return DPPROF__PRIV_OK;
}

/* one step's hockey-stick divergence delta(e) = P[L > e] - e^e Q[L > e] of the poisson-subsampled gaussian:
   remove (P = (1-q) N(0, s^2) + q N(1, s^2), Q = N(0, s^2), L(x) = log(1 - q + q exp((2x - 1) / (2 s^2))))
   or add (P and Q swapped, the loss negated) */
/* in the form q [...]: the (1 - q) parts cancel exactly (e^e - (1 - q) = q exp((x - 1/2) / s^2) where the loss is
   e), so a q of 1e-20 keeps its digits; e^e - (1 - q) as expm1(e) + q for the same reason */
/* past a loss of 700 (exp overflows a double at 709.78) and where erfc leaves the normal doubles (its argument past
   25), the same terms as logs: log(e^e - (1 - q)) as e + log1p(-(1 - q) e^-e), each erfc's product as the exp of a sum
   of logs. the plain form stays wherever it is exact, so that nothing it computed changes */
static double dpprof__pld_lherfc(double y) { /* log(erfc(y) / 2), for any y: past 25 from erfc's asymptotic series */
    double s = 1.0, t = 1.0;
    int k;
    if (y < 25.0) return log(0.5 * erfc(y));
    for (k = 1; k < 12; k++) t *= -(2.0 * k - 1.0) / (2.0 * y * y), s += t; /* terms fall by 1/625 a step at least */
    return -y * y - log(y * 1.7724538509055160) - 0.6931471805599453 + log(s);
}
static double dpprof__pld_la(double q, double e) { /* log((e^e - (1 - q)) / q), e > log(1 - q) */
    if (q >= 1.0) return e;
    return e < 700.0 ? log((expm1(e) + q) / q) : e + log1p(-(1.0 - q) * exp(-e)) - log(q);
}
static double dpprof__pld_hs(double q, double sigma, int add, double e) {
    const double s2 = sigma * sigma, r2 = 1.4142135623730951 * sigma;
    double x, a;
    if (!add) {
        if (q < 1.0 && e <= log1p(-q)) return -expm1(e); /* every loss exceeds e */
        a = dpprof__pld_la(q, e);                        /* (x - 1/2) / s^2 */
        x = s2 * a + 0.5;
        if (a < 700.0 && x / r2 < 25.0) return q * (0.5 * erfc((x - 1.0) / r2) - exp(a) * 0.5 * erfc(x / r2));
        return q * 0.5 * erfc((x - 1.0) / r2) - exp(log(q) + a + dpprof__pld_lherfc(x / r2));
    }
    if (q < 1.0 && -e <= log1p(-q)) return 0.0; /* no loss exceeds e */
    a = dpprof__pld_la(q, -e);
    x = s2 * a + 0.5;
    if (fabs(e) < 700.0 && a < 700.0 && -x / r2 < 25.0 && -(x - 1.0) / r2 < 25.0) return exp(e) * q * (exp(a) * 0.5 * erfc(-x / r2) - 0.5 * erfc(-(x - 1.0) / r2));
    /* e^e q e^a = 1 - (1 - q) e^e */
    return exp(log1p(-(1.0 - q) * exp(e)) + dpprof__pld_lherfc(-x / r2)) - exp(log(q) + e + dpprof__pld_lherfc(-(x - 1.0) / r2));
}

/* one step's pmf on the grid by connect the dots (doroshenko et al. 2022): the discrete pair whose delta,
   as a function of exp(eps), is the chord through the true delta at every grid point; the true one is convex
   there, so the chords lie above it: pessimistic, and pessimistic under composition. masses from the chords'
   slopes: mu_j = exp(l_j) (s_j - s_{j-1}), mu_top = -s_{m-1} exp(l_m), delta at the top goes to infinity,
   the rest to the bottom point */
/* a step's loss window: where the mechanism's loss has mass beyond 1e-19 */
static void dpprof__pld_window(double q, double sigma, int add, double *lmin, double *lmax) {
    const double s2 = sigma * sigma, tail = 9.0 * sigma;
    /* log(1 - q + q e^z), z = (2x - 1) / (2 s^2); past z = 700 as z + log(q + (1 - q) e^-z) */
#define DPPROF__PLD_Z(x) ((2.0 * (x)-1.0) / (2.0 * s2))
#define DPPROF__PLD_L(x) (q < 1.0 ? (DPPROF__PLD_Z(x) < 700.0 ? log1p(q * expm1(DPPROF__PLD_Z(x))) : DPPROF__PLD_Z(x) + log(q + (1.0 - q) * exp(-DPPROF__PLD_Z(x)))) : DPPROF__PLD_Z(x))
    if (!add) {
        *lmin = DPPROF__PLD_L(-tail); /* above log(1 - q), its infimum: the mass below goes to the bottom point */
        *lmax = DPPROF__PLD_L(1.0 + tail);
    } else {
        *lmin = -DPPROF__PLD_L(tail);
        *lmax = q < 1.0 ? -log1p(-q) : -DPPROF__PLD_L(-tail); /* q = 1: the add pair's x is N(0, s2), as the remove pair's below */
    }
#undef DPPROF__PLD_L
#undef DPPROF__PLD_Z
}

static int dpprof__pld_step(double q, double sigma, double h, int add, double budget, dpprof__pld *d) {
    double lmin, lmax, *dl, *sl;
    long long k0, k1;
    size_t m, j;
    dpprof__pld_window(q, sigma, add, &lmin, &lmax);
    k0 = (long long)floor(lmin / h), k1 = (long long)ceil(lmax / h);
    if (k1 - k0 < 2) k1 = k0 + 2;
    if (k1 - k0 > DPPROF__PLD_MAXN) return dpprof__fail(DPPROF__PRIV_ERANGE, "dpprof_pld_epsilon: a step's loss grid of %lld points at interval %g passes %d", k1 - k0, h, DPPROF__PLD_MAXN);
    m = (size_t)(k1 - k0);
    dl = (double *)DPPROF_MALLOC((2 * m + 2) * sizeof(double));
    d->p = (double *)DPPROF_MALLOC((m + 1) * sizeof(double));
    if (!dl || !d->p) {
        DPPROF_FREE(dl);
        DPPROF_FREE(d->p);
        return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_pld_epsilon: out of memory for a step's loss grid");
    }
    sl = dl + m + 1;
    for (j = 0; j <= m; j++) {
        const double v = dpprof__pld_hs(q, sigma, add, (double)(k0 + (long long)j) * h);
        dl[j] = v > 0.0 ? v : 0.0;
    }
    if ((double)k0 * h > -700.0 && (double)k1 * h < 700.0) {
        for (j = 0; j < m; j++) { /* the chord's slope on [exp(l_j), exp(l_j+1)] */
            const double y0 = exp((double)(k0 + (long long)j) * h), y1 = exp((double)(k0 + (long long)j + 1) * h);
            sl[j] = (dl[j + 1] - dl[j]) / (y1 - y0);
        }
        for (j = 1; j < m; j++) { /* convexity makes these non-negative; roundoff is clamped */
            const double mu = exp((double)(k0 + (long long)j) * h) * (sl[j] - sl[j - 1]);
            d->p[j] = mu > 0.0 ? mu : 0.0;
        }
        sl[m - 1] *= exp((double)k1 * h); /* the top's slope times exp(l_m) */
    } else {
        /* a loss past 700 either way: the same masses without exp(l_j), which overflows or vanishes there.
           exp(l_j) s_j = (d_j+1 - d_j) / (e^h - 1) and exp(l_j) s_j-1 = (d_j - d_j-1) / (1 - e^-h) */
        const double c1 = 1.0 / expm1(h), c2 = 1.0 / -expm1(-h);
        for (j = 1; j < m; j++) {
            const double mu = c1 * (dl[j + 1] - dl[j]) - c2 * (dl[j] - dl[j - 1]);
            d->p[j] = mu > 0.0 ? mu : 0.0;
        }
        sl[m - 1] = (dl[m] - dl[m - 1]) * c2;
    }
    {
        const double top = -sl[m - 1];
        double rest = 1.0;
        d->p[m] = top > 0.0 ? top : 0.0;
        d->inf = dl[m];
        rest -= d->inf;
        for (j = 1; j <= m; j++) rest -= d->p[j];
        d->p[0] = rest > 0.0 ? rest : 0.0;
    }
    DPPROF_FREE(dl);
    d->lo = k0;
    d->n = m + 1;
    d->budget = budget; /* the caller's: it depends on the steps and delta */
    d->ts = h > 0.01 ? 0.01 / h : 1.0;
    dpprof__pld_mgf(d, h);
    dpprof__pld_trim(d, h, 0);
    return DPPROF__PRIV_OK;
}

/* delta(eps) of a composed pmf */
static double dpprof__pld_delta(const dpprof__pld *d, double h, double eps) {
    double s = d->inf;
    size_t k;
    for (k = 0; k < d->n; k++) {
        const double l = (double)(d->lo + (long long)k) * h;
        if (l > eps) s += d->p[k] * -expm1(eps - l);
    }
    return s;
}

/* the budget of one step: a composition of n steps trims at most 2 log2(n) + 2 times, each trim of a pmf of m
   steps moves at most m budgets to infinity, and the n / m compositions still to come multiply that by at most
   n / m; so all trims together add at most 1e-6 delta to the delta at any epsilon */
static double dpprof__pld_budget(long long steps, double delta) {
    int levels = 2;
    long long k;
    for (k = steps; k > 0; k >>= 1) levels += 2;
    return 1e-6 * delta / ((double)steps * (double)levels);
}

static int dpprof__pld_one(double q, double sigma, long long steps, double delta, double h, int add, double *eps) {
    dpprof__pld base, acc, t;
    dpprof__fft_tab tab = {NULL, 0};
    int rc = dpprof__pld_step(q, sigma, h, add, dpprof__pld_budget(steps, delta), &base), have = 0;
    double lo = 0.0, hi;
    if (rc) return rc;
    acc.p = NULL;
    while (steps > 0 && rc == DPPROF__PRIV_OK) { /* exponentiation by squaring */
        if (steps & 1) {
            if (!have) {
                double *cp = (double *)DPPROF_MALLOC(base.n * sizeof(double));
                if (!cp) rc = dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_pld_epsilon: out of memory for the composition");
                else acc = base, acc.p = (double *)memcpy(cp, base.p, base.n * sizeof(double)), have = 1;
            } else if ((rc = dpprof__pld_compose(&acc, &base, h, &t, &tab)) == DPPROF__PRIV_OK) {
                DPPROF_FREE(acc.p);
                acc = t;
            }
        }
        steps >>= 1;
        if (steps && rc == DPPROF__PRIV_OK && (rc = dpprof__pld_compose(&base, &base, h, &t, &tab)) == DPPROF__PRIV_OK) {
            DPPROF_FREE(base.p);
            base = t;
        }
    }
    DPPROF_FREE(base.p);
    DPPROF_FREE(tab.tw);
    if (rc) {
        DPPROF_FREE(acc.p);
        return rc;
    }
    if (!have) { /* no step: nothing spent */
        *eps = 0.0;
        return DPPROF__PRIV_OK;
    }
    if (acc.inf > delta) {
        DPPROF_FREE(acc.p);
        return dpprof__fail(DPPROF__PRIV_ERANGE, "dpprof_pld_epsilon: the mass at infinity passes delta %g: no epsilon reaches it", delta);
    }
    hi = (double)(acc.lo + (long long)acc.n) * h;
    if (hi < 0.0) hi = 0.0;
    if (dpprof__pld_delta(&acc, h, 0.0) <= delta) hi = 0.0;
    else {
        int it;
        for (it = 0; it < 200 && hi - lo > 1e-12 * (1.0 + hi); it++) {
            const double mid = 0.5 * (lo + hi);
            if (dpprof__pld_delta(&acc, h, mid) <= delta) hi = mid;
            else lo = mid;
        }
    }
    DPPROF_FREE(acc.p);
    *eps = hi;
    return DPPROF__PRIV_OK;
}

/* the grid's interval for an epsilon near eps over `steps` compositions. connect the dots is pessimistic by about
   an interval where few steps compose, and by about 0.02 steps h^2 where many do (fitted against intervals 1e-4 to
   6e-2, 100 to 1e7 steps): both held near 5e-5 of epsilon (an interval of 1e-4 at epsilon 2 over 1e5 steps), within
   [1e-8, 1] */
static double dpprof__pld_auto_h(double eps, long long steps) {
    double h = eps / 16384.0;
    const double hq = sqrt(eps * 5e-4 / (double)(steps > 0 ? steps : 1));
    if (hq < h) h = hq;
    return h != h ? 1e-4 : (h < 1e-8 ? 1e-8 : (h > 1.0 ? 1.0 : h));
}

/* the pld's epsilon at interval h, or, where h <= 0, at the interval dpprof__pld_auto_h gives for rdp's epsilon,
   twice as coarse while the grid would pass DPPROF__PLD_MAXN (a coarser grid is as pessimistic: a looser upper
   bound, never a lower one); *used: the interval */
/* the points a composition of `steps` steps will hold at interval h, predicted from a step's pmf (the larger of the
   two neighbours): a sum of many steps is near normal, and the trims keep it to about 8 standard deviations below
   its mean (1e-14 of the peak) and 10.4 above (chernoff at a budget near 1e-25): 18.5 of them, or the steps times a
   step's points where that is fewer. 0 where a step's pmf cannot be built */
static double dpprof__pld_points(double q, double sigma, long long steps, double delta, double h) {
    double most = 0.0;
    int add;
    for (add = 0; add < 2; add++) {
        dpprof__pld d;
        double m = 0.0, v = 0.0, w = 0.0, pts;
        size_t k;
        if (dpprof__pld_step(q, sigma, h, add, dpprof__pld_budget(steps, delta), &d) != DPPROF__PRIV_OK) return 0.0;
        for (k = 0; k < d.n; k++) w += d.p[k], m += d.p[k] * (double)k;
        m = w > 0.0 ? m / w : 0.0;
        for (k = 0; k < d.n; k++) v += d.p[k] * ((double)k - m) * ((double)k - m);
        v = w > 0.0 ? v / w : 0.0;
        pts = 18.5 * sqrt((double)steps * v) + (double)d.n;
        if ((double)steps * (double)d.n < pts) pts = (double)steps * (double)d.n;
        most = pts > most ? pts : most;
        DPPROF_FREE(d.p);
    }
    return most;
}

/* the interval for an epsilon near eps (dpprof__pld_auto_h); coarser where a step's window would pass an eighth of the
   grid's most points (a finer one fails a composition after work); and twice as coarse, as a failed composition would
   make it, while the composition is predicted to pass the grid's most points: the work a failure wastes (seconds,
   past 1e6 steps) is not done */
static double dpprof__pld_grid_h(double q, double sigma, long long steps, double delta, double eps) {
    double h = dpprof__pld_auto_h(eps, steps), a0, a1, r0, r1;
    int k;
    dpprof__pld_window(q, sigma, 0, &r0, &r1);
    dpprof__pld_window(q, sigma, 1, &a0, &a1);
    if ((r1 - r0) / h > DPPROF__PLD_MAXN / 8) h = (r1 - r0) / (DPPROF__PLD_MAXN / 8);
    if ((a1 - a0) / h > DPPROF__PLD_MAXN / 8) h = (a1 - a0) / (DPPROF__PLD_MAXN / 8);
    for (k = 0; k < 16 && dpprof__pld_points(q, sigma, steps, delta, h) > DPPROF__PLD_MAXN; k++) h *= 2.0;
    return h;
}

static int dpprof__pld_eps(double q, double sigma, long long steps, double delta, double h, double *eps, double *used) {
    double er = 0.0, ea = 0.0;
    int rc, tries, fixed = h > 0.0;
    if (q != q || sigma != sigma || delta != delta || q < 0.0 || q > 1.0 || !(sigma > 0.0) || steps < 0 || !(delta > 0.0 && delta < 1.0))
        return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_pld_epsilon: q = %g (in [0, 1]), sigma = %g (> 0), steps = %lld (>= 0), delta = %g (in (0, 1)): one is out of range", q, sigma, (long long)steps, delta);
    if (q > 0.0 && steps > 0) { /* a loss no double holds (sigma under about 1e-154): no grid can */
        double a0, a1, r0, r1;
        dpprof__pld_window(q, sigma, 0, &r0, &r1);
        dpprof__pld_window(q, sigma, 1, &a0, &a1);
        if (!isfinite(r1 - r0) || !isfinite(a1 - a0))
            return dpprof__fail(DPPROF__PRIV_ERANGE, "dpprof_pld_epsilon: sigma %g puts a step's privacy loss past the doubles: no loss grid holds it", sigma);
    }
    if (!fixed && q > 0.0 && steps > 0) { /* the interval from an upper bound near this epsilon: rdp's, then a grid 8 times coarser's (rdp's can be 4 times the pld's) */
        double e_up = NAN, e_c = NAN, h_c = NAN;
        if (dpprof_rdp_epsilon(q, sigma, steps, delta, NULL, 0, &e_up, NULL) != DPPROF__PRIV_OK || !(e_up > 0.0)) e_up = 3.0;
        /* a grid held to its points whose pessimism (about 0.02 steps h^2) passes rdp's epsilon tenfold cannot beat
           rdp's bound: refused before the work (seconds, at 1e12 steps), and rdp's is the answer */
        h = dpprof__pld_grid_h(q, sigma, steps, delta, e_up);
        if (0.002 * (double)steps * h * h > e_up)
            return dpprof__fail(DPPROF__PRIV_ERANGE, "dpprof_pld_epsilon: the grid that holds %lld steps (interval %g) is too coarse to bound epsilon below rdp's %g", (long long)steps, h, e_up);
        if (dpprof__pld_eps(q, sigma, steps, delta, 8.0 * dpprof__pld_auto_h(e_up, steps), &e_c, &h_c) == DPPROF__PRIV_OK && e_c > 0.0 && e_c < e_up) e_up = e_c;
        h = dpprof__pld_grid_h(q, sigma, steps, delta, e_up);
    } else if (fixed && q > 0.0 && steps > 0 && dpprof__pld_points(q, sigma, steps, delta, h) > 2.0 * DPPROF__PLD_MAXN) /* surely too fine: refused at once */
        return dpprof__fail(DPPROF__PRIV_ERANGE, "dpprof_pld_epsilon: the composed loss grid would pass %d points at interval %g", DPPROF__PLD_MAXN, h);
    if (used) *used = h;
    if (q == 0.0 || steps == 0) {
        *eps = 0.0;
        return DPPROF__PRIV_OK;
    }
    for (tries = 0;; tries++, h *= 2.0) {
        rc = dpprof__pld_one(q, sigma, steps, delta, h, 0, &er);
        if (rc == DPPROF__PRIV_OK) rc = dpprof__pld_one(q, sigma, steps, delta, h, 1, &ea);
        if (rc == DPPROF__PRIV_OK || fixed || tries == 16 || !strstr(dpprof_last_error(), "grid")) break;
    }
    if (used) *used = h;
    if (rc != DPPROF__PRIV_OK) return rc;
    *eps = er > ea ? er : ea;
    return DPPROF__PRIV_OK;
}

DPPROF_API int dpprof_noiseless_epsilon(double q, long long steps, double delta, double *eps) {
    double lq;
    if (!eps) return dpprof__fail(DPPROF__PRIV_ENULL, "dpprof_noiseless_epsilon: NULL epsilon");
    if (q != q || delta != delta || q < 0.0 || q > 1.0 || steps < 0 || !(delta > 0.0 && delta < 1.0))
        return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_noiseless_epsilon: q = %g (in [0, 1]), steps = %lld (>= 0), delta = %g (in (0, 1)): one is out of range", q, (long long)steps, delta);
    if (q == 0.0 || steps == 0) {
        *eps = 0.0;
        return DPPROF__PRIV_OK;
    }
    lq = log1p(-q);                                       /* -inf at q 1 */
    if (q >= 1.0 || -expm1((double)steps * lq) > delta) { /* the remove neighbour's mass at infinity passes delta */
        *eps = INFINITY;
        return DPPROF__PRIV_OK;
    }
    *eps = log1p(-delta) - (double)steps * lq; /* the add neighbour's: its loss is -steps log(1 - q), surely */
    if (*eps < 0.0) *eps = 0.0;
    return DPPROF__PRIV_OK;
}

/* the pld's epsilon, or rdp's or no noise's where smaller (each is an upper bound); *used: the grid's interval */
static int dpprof__pld_eps_min(double q, double sigma, long long steps, double delta, double h, double *eps, double *used) {
    double er = NAN, e0 = NAN;
    const int rc = dpprof__pld_eps(q, sigma, steps, delta, h, eps, used);
    if (rc != DPPROF__PRIV_OK) return rc;
    if (dpprof_rdp_epsilon(q, sigma, steps, delta, NULL, 0, &er, NULL) == DPPROF__PRIV_OK && er < *eps) *eps = er;
    if (dpprof_noiseless_epsilon(q, steps, delta, &e0) == DPPROF__PRIV_OK && e0 < *eps) *eps = e0;
    return DPPROF__PRIV_OK;
}

DPPROF_API int dpprof_pld_epsilon(double q, double sigma, long long steps, double delta, double h, double *eps) {
    if (!eps) return dpprof__fail(DPPROF__PRIV_ENULL, "dpprof_pld_epsilon: NULL epsilon");
    return dpprof__pld_eps_min(q, sigma, steps, delta, h, eps, NULL);
}

static void (*dpprof__progress_fn)(void *user, double seconds, const char *line);
static void *dpprof__progress_user;
DPPROF_API void dpprof_privacy_progress(void (*fn)(void *user, double seconds, const char *line), void *user) {
    dpprof__progress_fn = fn, dpprof__progress_user = user;
}

/* a sigma search: its setting, its evaluations so far and when it began (cpu time) */
typedef struct dpprof__search {
    double q, delta, target;
    long long steps;
    int n;
    clock_t t0;
} dpprof__search;
#define DPPROF__SEARCH_MAX 48 /* evaluations a search may make: about 25 in practice */

/* pld's epsilon at sigma for the search below: at the fixed interval h, or at dpprof_pld_epsilon's own (h <= 0), the
   one a report of this sigma takes; rdp's where the pld cannot bound it (what dpprof_privacy_of reports then). each
   evaluation said to the progress function */
static double dpprof__pld_search_eps(dpprof__search *sr, double sigma, double h) {
    double e;
    if (dpprof_pld_epsilon(sr->q, sigma, sr->steps, sr->delta, h, &e) != DPPROF__PRIV_OK && dpprof_rdp_epsilon(sr->q, sigma, sr->steps, sr->delta, NULL, 0, &e, NULL) != DPPROF__PRIV_OK) e = INFINITY;
    sr->n++;
    if (dpprof__progress_fn) {
        char line[160];
        const double t = (double)(clock() - sr->t0) / CLOCKS_PER_SEC;
        snprintf(line, sizeof line, "sigma for epsilon %g: sigma %.6g spends %.6g (evaluation %d of at most %d, %.1f s)", sr->target, sigma, e, sr->n, DPPROF__SEARCH_MAX, t);
        dpprof__progress_fn(dpprof__progress_user, t, line);
    }
    return e;
}

DPPROF_API int dpprof_pld_sigma_for_epsilon(double q, long long steps, double delta, double target_eps, double h, double *sigma) {
    double lo, hi, elo = INFINITY, ehi = INFINITY, hc;
    int rc, it;
    dpprof__search sr;
    if (!sigma) return dpprof__fail(DPPROF__PRIV_ENULL, "dpprof_pld_sigma_for_epsilon: NULL sigma");
    if (!(target_eps > 0.0)) return dpprof__fail(DPPROF__PRIV_EINVAL, "dpprof_pld_sigma_for_epsilon: target epsilon %g must be > 0", target_eps);
    if ((rc = dpprof_rdp_sigma_for_epsilon(q, steps, delta, target_eps, &hi)) != DPPROF__PRIV_OK && rc != DPPROF__PRIV_ERANGE) return rc;
    if (rc == DPPROF__PRIV_ERANGE) hi = 1e6;
    if (hi == 0.0) {
        *sigma = 0.0;
        return DPPROF__PRIV_OK;
    }
    sr.q = q, sr.delta = delta, sr.target = target_eps, sr.steps = steps, sr.n = 0, sr.t0 = clock();
    /* 1. a coarse bracket to 1%: a grid 8 times coarser than the target's interval (a pessimistic pair: its epsilon is
       above the fine one's, so its sigma brackets from above) at an eighth of the work, from rdp's sigma down */
    hc = 8.0 * (h > 0.0 ? h : dpprof__pld_auto_h(target_eps, steps));
    for (lo = hi / 4.0, it = 0; it < 20 && dpprof__pld_search_eps(&sr, lo, hc) <= target_eps; it++) hi = lo, lo /= 4.0;
    while ((hi - lo) > 1e-2 * hi && sr.n < DPPROF__SEARCH_MAX / 3) {
        const double mid = sqrt(lo * hi);
        if (dpprof__pld_search_eps(&sr, mid, hc) <= target_eps) hi = mid;
        else lo = mid;
    }
    /* 2. the bracket on the fine accountant (h, or the report's own interval): hi must hold, lo must not */
    while (sr.n < DPPROF__SEARCH_MAX && (ehi = dpprof__pld_search_eps(&sr, hi, h)) > target_eps) lo = hi, hi *= 1.02;
    while (sr.n < DPPROF__SEARCH_MAX && (elo = dpprof__pld_search_eps(&sr, lo, h)) <= target_eps) hi = lo, ehi = elo, lo /= 1.02;
    if (ehi > target_eps) return dpprof__fail(DPPROF__PRIV_ERANGE, "dpprof_pld_sigma_for_epsilon: no sigma reaches epsilon %g (q %g, %lld steps, delta %g)", target_eps, q, (long long)steps, delta);
    /* 3. to 5e-4 of sigma: log epsilon is smooth in log sigma, so the line through the bracket's ends falls within
       the tolerance of the crossing; a probe on either side of it closes the bracket, else interpolation again
       (illinois: an end kept twice has its weight halved), else bisection. past DPPROF__SEARCH_MAX evaluations
       (which no setting tried here reaches) hi, which spends at most the target, is the answer */
    for (it = 0; sr.n < DPPROF__SEARCH_MAX && (hi - lo) > 5e-4 * hi; it++) {
        const double la = log(lo), lb = log(hi), fa = isinf(elo) ? 50.0 : log(elo / target_eps), fb = log(ehi / target_eps);
        double x = fa > fb && fa - fb < 1e300 ? exp(la + (lb - la) * fa / (fa - fb)) : sqrt(lo * hi), e;
        if (it >= 6) x = sqrt(lo * hi);
        if (it < 6 && (it & 1) == 0) x *= 1.0 + 2e-4; /* the side of hi first, then of lo */
        else if (it < 6) x *= 1.0 - 2e-4;
        if (!(x > lo && x < hi)) x = sqrt(lo * hi);
        e = dpprof__pld_search_eps(&sr, x, h);
        if (e <= target_eps) hi = x, ehi = e;
        else lo = x, elo = e;
    }
    *sigma = hi;
    return DPPROF__PRIV_OK;
}

#endif /* DPPROF_PRIVACY_IMPL_H */

/* =============================================================================================
   PART 4 (implementation): ops
   ============================================================================================= */
/* ---- cpu reference ops: implementation ----------------------------------------------------------
   plain loops, innermost loop contiguous, every long sum in double. this is the specification the gpu
   kernels are tested against, so clarity wins over speed wherever the two disagree. */

/* dpprof.h defines DPPROF_ASSERT with DPPROF_MALLOC/DPPROF_FREE; this fallback is only for standalone use */
#ifndef DPPROF_ASSERT
#include <assert.h>
#define DPPROF_ASSERT(c) assert(c)
#endif

/* columns per double accumulator block: 64 doubles = 512 bytes of stack, stays in l1 */
#define DPPROF__BLK 64

static dpprof_cost dpprof__cost(double flops, double bytes) {
    dpprof_cost c;
    c.flops = flops;
    c.bytes = bytes;
    return c;
}

/* dot product in double. four interleaved partial sums instead of one chain: gcc may not reorder a
   single floating-point chain (no -ffast-math), so this is what lets -O2 vectorize it (about 3x) */
static double dpprof__dot(const dpprof_real *a, const dpprof_real *b, int n) {
    double s[4] = {0.0, 0.0, 0.0, 0.0}, r;
    int i, l;
    for (i = 0; i + 4 <= n; i += 4)
        for (l = 0; l < 4; l++) s[l] += (double)a[i + l] * b[i + l];
    r = (s[0] + s[1]) + (s[2] + s[3]);
    for (; i < n; i++) r += (double)a[i] * b[i];
    return r;
}

/* acc[0..n) += c * x[0..n) into a double accumulator. gcc -O2 (cheap cost model) leaves a plain
   variable-length loop scalar; a full block has a constant trip count and any other length is unrolled
   by four, and both of those it vectorizes (about 3x) */
static void dpprof__axpy(double *acc, double c, const dpprof_real *x, int n) {
    int i;
    if (n == DPPROF__BLK) {
        for (i = 0; i < DPPROF__BLK; i++) acc[i] += c * x[i];
        return;
    }
    for (i = 0; i + 4 <= n; i += 4) {
        acc[i] += c * x[i];
        acc[i + 1] += c * x[i + 1];
        acc[i + 2] += c * x[i + 2];
        acc[i + 3] += c * x[i + 3];
    }
    for (; i < n; i++) acc[i] += c * x[i];
}

/* ---- matmul ---------------------------------------------------------------------------------- */

void dpprof_matmul_fwd_ref(dpprof_real *out, const dpprof_real *inp, const dpprof_real *weight, int N, int IC, int OC) {
    int n, o;
    /* both operands of out[n, o] are contiguous rows (inp row n, weight row o): one dot product each */
    for (n = 0; n < N; n++) {
        const dpprof_real *x = inp + (size_t)n * IC;
        dpprof_real *y = out + (size_t)n * OC;
        for (o = 0; o < OC; o++) y[o] = (dpprof_real)dpprof__dot(x, weight + (size_t)o * IC, IC);
    }
}

void dpprof_matmul_bwd_ref(dpprof_real *dinp, dpprof_real *dweight, const dpprof_real *dout, const dpprof_real *inp, const dpprof_real *weight, int N, int IC, int OC) {
    double acc[4][DPPROF__BLK]; /* 2 KiB */
    int n, o, i, r, i0, nb, nr;
    /* both products are done by column block of IC, so a block of weight (for dinp) or of inp (for dweight)
       is reused from cache across the whole outer loop, and each output element is one double sum */
    if (dinp) {
        /* dinp[n, i] += sum_o dout[n, o] * weight[o, i]: rows of weight are contiguous in i */
        for (i0 = 0; i0 < IC; i0 += DPPROF__BLK) {
            nb = IC - i0 < DPPROF__BLK ? IC - i0 : DPPROF__BLK;
            for (n = 0; n < N; n += 4) {
                /* four rows of dout per sweep of the weight block: a quarter of the cache traffic */
                nr = N - n < 4 ? N - n : 4;
                for (r = 0; r < nr; r++)
                    for (i = 0; i < nb; i++) acc[r][i] = 0.0;
                for (o = 0; o < OC; o++) {
                    const dpprof_real *w = weight + (size_t)o * IC + i0;
                    for (r = 0; r < nr; r++) dpprof__axpy(acc[r], dout[(size_t)(n + r) * OC + o], w, nb);
                }
                for (r = 0; r < nr; r++) {
                    dpprof_real *dx = dinp + (size_t)(n + r) * IC + i0;
                    for (i = 0; i < nb; i++) dx[i] = (dpprof_real)(dx[i] + acc[r][i]);
                }
            }
        }
    }
    if (dweight) {
        /* dweight[o, i] += sum_n dout[n, o] * inp[n, i]: rows of inp are contiguous in i */
        for (i0 = 0; i0 < IC; i0 += DPPROF__BLK) {
            nb = IC - i0 < DPPROF__BLK ? IC - i0 : DPPROF__BLK;
            for (o = 0; o < OC; o += 4) {
                /* four output rows per sweep of the inp block: a quarter of the cache traffic */
                nr = OC - o < 4 ? OC - o : 4;
                for (r = 0; r < nr; r++)
                    for (i = 0; i < nb; i++) acc[r][i] = 0.0;
                for (n = 0; n < N; n++) {
                    const dpprof_real *x = inp + (size_t)n * IC + i0;
                    const dpprof_real *g = dout + (size_t)n * OC + o;
                    for (r = 0; r < nr; r++) dpprof__axpy(acc[r], g[r], x, nb);
                }
                for (r = 0; r < nr; r++) {
                    dpprof_real *dw = dweight + (size_t)(o + r) * IC + i0;
                    for (i = 0; i < nb; i++) dw[i] = (dpprof_real)(dw[i] + acc[r][i]);
                }
            }
        }
    }
}

/* ---- embedding ------------------------------------------------------------------------------- */

void dpprof_embedding_fwd_ref(dpprof_real *out, const int *tokens, const dpprof_real *wte, int N, int C) {
    int n;
    for (n = 0; n < N; n++) {
        DPPROF_ASSERT(tokens[n] >= 0);
        memcpy(out + (size_t)n * C, wte + (size_t)tokens[n] * C, (size_t)C * sizeof(dpprof_real));
    }
}

void dpprof_embedding_bwd_ref(dpprof_real *dwte, const dpprof_real *dout, const int *tokens, int N, int C) {
    double acc[DPPROF__BLK];
    int n, m, c0, c, nb;
    /* a frequent token's gradient is a long sum over rows, so all occurrences of a token are summed in
       double at its first occurrence. finding them costs O(N^2) int compares (no allocation allowed), which
       is small next to any matmul of the same step. */
    for (n = 0; n < N; n++) {
        int tok = tokens[n], seen = 0, repeated = 0;
        dpprof_real *dw;
        const dpprof_real *g;
        DPPROF_ASSERT(tok >= 0);
        for (m = 0; m < n; m++)
            if (tokens[m] == tok) {
                seen = 1;
                break;
            }
        if (seen) continue;
        for (m = n + 1; m < N; m++)
            if (tokens[m] == tok) {
                repeated = 1;
                break;
            }
        dw = dwte + (size_t)tok * C;
        if (!repeated) {
            /* single occurrence: one add per element, no sum to protect */
            g = dout + (size_t)n * C;
            for (c = 0; c < C; c++) dw[c] = (dpprof_real)((double)dw[c] + g[c]);
            continue;
        }
        for (c0 = 0; c0 < C; c0 += DPPROF__BLK) {
            nb = C - c0 < DPPROF__BLK ? C - c0 : DPPROF__BLK;
            for (c = 0; c < nb; c++) acc[c] = 0.0;
            for (m = n; m < N; m++) {
                if (tokens[m] != tok) continue;
                dpprof__axpy(acc, 1.0, dout + (size_t)m * C + c0, nb);
            }
            for (c = 0; c < nb; c++) dw[c0 + c] = (dpprof_real)(dw[c0 + c] + acc[c]);
        }
    }
}

/* ---- rmsnorm --------------------------------------------------------------------------------- */

void dpprof_rmsnorm_fwd_ref(dpprof_real *out, dpprof_real *rstd, const dpprof_real *inp, const dpprof_real *weight, int N, int C, float eps) {
    int n, c;
    for (n = 0; n < N; n++) {
        const dpprof_real *x = inp + (size_t)n * C;
        dpprof_real *y = out + (size_t)n * C;
        double ss = dpprof__dot(x, x, C), r;
        r = 1.0 / sqrt(ss / C + (double)eps);
        rstd[n] = (dpprof_real)r;
        for (c = 0; c < C; c++) y[c] = (dpprof_real)(x[c] * r * weight[c]);
    }
}

void dpprof_add_rmsnorm_fwd_ref(dpprof_real *out, dpprof_real *rstd, dpprof_real *res, const dpprof_real *other, const dpprof_real *weight, int N, int C, float eps) {
    if (N > 0 && C > 0) dpprof_add_ref(res, res, other, (size_t)N * C);
    dpprof_rmsnorm_fwd_ref(out, rstd, res, weight, N, C, eps);
}

void dpprof_rmsnorm_bwd_ref(dpprof_real *dinp, dpprof_real *dweight, const dpprof_real *dout, const dpprof_real *inp, const dpprof_real *weight, const dpprof_real *rstd, int N, int C) {
    double acc[DPPROF__BLK];
    int n, c, c0, nb;
    /* y_c = x_c r w_c with r = (mean(x^2) + eps)^(-1/2), dr/dx_j = -r^3 x_j / C, so
       dx_j = r (g_j w_j) - x_j r^3 / C * sum_c g_c w_c x_c */
    for (n = 0; n < N; n++) {
        const dpprof_real *x = inp + (size_t)n * C;
        const dpprof_real *g = dout + (size_t)n * C;
        dpprof_real *dx = dinp + (size_t)n * C;
        double r = rstd[n], dot = 0.0, k;
        for (c = 0; c < C; c++) dot += (double)g[c] * weight[c] * x[c];
        k = r * r * r * dot / C;
        for (c = 0; c < C; c++) dx[c] = (dpprof_real)(dx[c] + (r * g[c] * weight[c] - k * x[c]));
    }
    if (dweight) {
        /* dweight_c is a sum over all N rows: column blocks, rows inner, double accumulators */
        for (c0 = 0; c0 < C; c0 += DPPROF__BLK) {
            nb = C - c0 < DPPROF__BLK ? C - c0 : DPPROF__BLK;
            for (c = 0; c < nb; c++) acc[c] = 0.0;
            for (n = 0; n < N; n++) {
                const dpprof_real *x = inp + (size_t)n * C + c0;
                const dpprof_real *g = dout + (size_t)n * C + c0;
                double r = rstd[n];
                for (c = 0; c < nb; c++) acc[c] += (double)g[c] * x[c] * r;
            }
            for (c = 0; c < nb; c++) dweight[c0 + c] = (dpprof_real)(dweight[c0 + c] + acc[c]);
        }
    }
}

/* ---- rope ------------------------------------------------------------------------------------ */

/* rotates each (x[i], x[i + HS/2]) pair of every head by sign * t * inv_freq_i; sign -1 is the transpose */
static void dpprof__rope(dpprof_real *x, int B, int T, int NH, int HS, double theta, double sign) {
    double inv_freq[DPPROF_MAX_HEAD_SIZE / 2], cs[DPPROF_MAX_HEAD_SIZE / 2], sn[DPPROF_MAX_HEAD_SIZE / 2];
    int half = HS / 2, b, t, h, i;
    DPPROF_ASSERT(HS % 2 == 0 && HS > 0 && HS <= DPPROF_MAX_HEAD_SIZE);
    if (HS % 2 != 0 || HS <= 0 || HS > DPPROF_MAX_HEAD_SIZE) return; /* never overrun the tables under NDEBUG */
    for (i = 0; i < half; i++) inv_freq[i] = pow(theta, -2.0 * i / HS);
    for (t = 0; t < T; t++) {
        /* the angle depends only on (t, i): one table per position, reused by every sample and head */
        for (i = 0; i < half; i++) {
            double a = t * inv_freq[i];
            cs[i] = cos(a);
            sn[i] = sign * sin(a);
        }
        for (b = 0; b < B; b++) {
            for (h = 0; h < NH; h++) {
                dpprof_real *p = x + (((size_t)b * T + t) * NH + h) * HS;
                for (i = 0; i < half; i++) {
                    double x1 = p[i], x2 = p[i + half];
                    p[i] = (dpprof_real)(x1 * cs[i] - x2 * sn[i]);
                    p[i + half] = (dpprof_real)(x2 * cs[i] + x1 * sn[i]);
                }
            }
        }
    }
}

void dpprof_rope_fwd_ref(dpprof_real *x, int B, int T, int NH, int HS, double theta) {
    dpprof__rope(x, B, T, NH, HS, theta, 1.0);
}

void dpprof_rope_bwd_ref(dpprof_real *dx, int B, int T, int NH, int HS, double theta) {
    /* the forward is an orthogonal rotation per pair, so its jacobian transpose is the rotation by -angle */
    dpprof__rope(dx, B, T, NH, HS, theta, -1.0);
}

/* ---- attention ------------------------------------------------------------------------------- */

void dpprof_attention_fwd_ref(dpprof_real *out, dpprof_real *lse, const dpprof_real *q, const dpprof_real *k, const dpprof_real *v, int B, int T, int NH, int NKV, int HS) {
    double acc[DPPROF_MAX_HEAD_SIZE];                             /* 2 KiB */
    size_t qstride = (size_t)NH * HS, kstride = (size_t)NKV * HS; /* between consecutive tokens */
    double scale = 1.0 / sqrt((double)HS);
    int b, h, t, j, i, group;
    DPPROF_ASSERT(HS > 0 && HS <= DPPROF_MAX_HEAD_SIZE && NKV > 0 && NH % NKV == 0);
    if (HS <= 0 || HS > DPPROF_MAX_HEAD_SIZE || NKV <= 0 || NH % NKV != 0) return; /* never overrun acc under NDEBUG */
    group = NH / NKV;
    for (b = 0; b < B; b++) {
        for (h = 0; h < NH; h++) {
            const dpprof_real *kb = k + (size_t)b * T * kstride + (size_t)(h / group) * HS;
            const dpprof_real *vb = v + (size_t)b * T * kstride + (size_t)(h / group) * HS;
            for (t = 0; t < T; t++) {
                size_t row = ((size_t)b * T + t) * qstride + (size_t)h * HS;
                double m = 0.0, l = 0.0;
                for (i = 0; i < HS; i++) acc[i] = 0.0;
                /* online softmax: keep the running max m, l = sum exp(s - m) and acc = sum exp(s - m) v,
                   rescaling both when the max grows, so no score row is ever stored */
                for (j = 0; j <= t; j++) {
                    double s = scale * dpprof__dot(q + row, kb + (size_t)j * kstride, HS), p;
                    if (j == 0) {
                        m = s;
                    } else if (s > m) {
                        double corr = exp(m - s);
                        l *= corr;
                        for (i = 0; i < HS; i++) acc[i] *= corr;
                        m = s;
                    }
                    p = exp(s - m);
                    l += p;
                    dpprof__axpy(acc, p, vb + (size_t)j * kstride, HS);
                }
                /* l >= 1 because the max term contributes exp(0) */
                for (i = 0; i < HS; i++) out[row + i] = (dpprof_real)(acc[i] / l);
                lse[((size_t)b * NH + h) * T + t] = (dpprof_real)(m + log(l));
            }
        }
    }
}

void dpprof_attention_bwd_ref(dpprof_real *dq, dpprof_real *dk, dpprof_real *dv, const dpprof_real *dout, const dpprof_real *q, const dpprof_real *k, const dpprof_real *v, const dpprof_real *out, const dpprof_real *lse, int B, int T, int NH, int NKV, int HS) {
    double da[DPPROF_MAX_HEAD_SIZE], db[DPPROF_MAX_HEAD_SIZE]; /* 4 KiB */
    size_t qstride = (size_t)NH * HS, kstride = (size_t)NKV * HS;
    double scale = 1.0 / sqrt((double)HS);
    int b, h, t, j, i, g, kvh, group;
    DPPROF_ASSERT(HS > 0 && HS <= DPPROF_MAX_HEAD_SIZE && NKV > 0 && NH % NKV == 0);
    if (HS <= 0 || HS > DPPROF_MAX_HEAD_SIZE || NKV <= 0 || NH % NKV != 0) return;
    group = NH / NKV;

    /* pass 1: D = dout . out per (b, t, h). with no allocation allowed it is parked in element 0 of the
       same row of dq: pass 3 overwrites dq row by row and each row needs only its own D (read first).
       in float builds D is thus rounded to float, like the fp32 D of flash attention kernels. */
    for (b = 0; b < B; b++)
        for (t = 0; t < T; t++)
            for (h = 0; h < NH; h++) {
                size_t row = ((size_t)b * T + t) * qstride + (size_t)h * HS;
                dq[row] = (dpprof_real)dpprof__dot(dout + row, out + row, HS);
            }

    /* pass 2: per key j, dk_j and dv_j are sums over the group's query heads and queries t >= j; looping
       j outermost keeps each sum in a double accumulator, at the price of recomputing p and dp */
    for (b = 0; b < B; b++) {
        for (kvh = 0; kvh < NKV; kvh++) {
            for (j = 0; j < T; j++) {
                size_t krow = ((size_t)b * T + j) * kstride + (size_t)kvh * HS;
                const dpprof_real *kj = k + krow;
                const dpprof_real *vj = v + krow;
                for (i = 0; i < HS; i++) {
                    da[i] = 0.0;
                    db[i] = 0.0;
                }
                for (g = 0; g < group; g++) {
                    h = kvh * group + g;
                    for (t = j; t < T; t++) {
                        size_t row = ((size_t)b * T + t) * qstride + (size_t)h * HS;
                        const dpprof_real *qt = q + row;
                        const dpprof_real *gt = dout + row;
                        double s = scale * dpprof__dot(qt, kj, HS);
                        double p = exp(s - lse[((size_t)b * NH + h) * T + t]);
                        double dp = dpprof__dot(gt, vj, HS);
                        double ds = p * (dp - dq[row]);
                        dpprof__axpy(da, scale * ds, qt, HS);
                        dpprof__axpy(db, p, gt, HS);
                    }
                }
                for (i = 0; i < HS; i++) {
                    dk[krow + i] = (dpprof_real)da[i];
                    dv[krow + i] = (dpprof_real)db[i];
                }
            }
        }
    }

    /* pass 3: dq_t = scale * sum_{j <= t} ds_tj k_j */
    for (b = 0; b < B; b++) {
        for (h = 0; h < NH; h++) {
            const dpprof_real *kb = k + (size_t)b * T * kstride + (size_t)(h / group) * HS;
            const dpprof_real *vb = v + (size_t)b * T * kstride + (size_t)(h / group) * HS;
            for (t = 0; t < T; t++) {
                size_t row = ((size_t)b * T + t) * qstride + (size_t)h * HS;
                const dpprof_real *qt = q + row;
                const dpprof_real *gt = dout + row;
                double D = dq[row], lse_t = lse[((size_t)b * NH + h) * T + t];
                for (i = 0; i < HS; i++) da[i] = 0.0;
                for (j = 0; j <= t; j++) {
                    const dpprof_real *kj = kb + (size_t)j * kstride;
                    double s = scale * dpprof__dot(qt, kj, HS);
                    double p = exp(s - lse_t);
                    double ds = p * (dpprof__dot(gt, vb + (size_t)j * kstride, HS) - D);
                    dpprof__axpy(da, scale * ds, kj, HS);
                }
                for (i = 0; i < HS; i++) dq[row + i] = (dpprof_real)da[i];
            }
        }
    }
}

/* ---- swiglu, add ----------------------------------------------------------------------------- */

void dpprof_swiglu_fwd_ref(dpprof_real *h, const dpprof_real *gate, const dpprof_real *up, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        double g = gate[i];
        /* exp(-g) overflows to inf for very negative g, which gives the right limit 0 */
        double s = 1.0 / (1.0 + exp(-g));
        h[i] = (dpprof_real)(g * s * up[i]);
    }
}

void dpprof_swiglu_bwd_ref(dpprof_real *dgate, dpprof_real *dup, const dpprof_real *dh, const dpprof_real *gate, const dpprof_real *up, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        /* all inputs are read before either output is written */
        double g = gate[i], u = up[i], d = dh[i];
        double s = 1.0 / (1.0 + exp(-g));
        /* silu'(g) = s + g s (1 - s) */
        double dsilu = s * (1.0 + g * (1.0 - s));
        dup[i] = (dpprof_real)(d * g * s);
        dgate[i] = (dpprof_real)(d * u * dsilu);
    }
}

void dpprof_add_ref(dpprof_real *out, const dpprof_real *a, const dpprof_real *b, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) out[i] = a[i] + b[i];
}

/* ---- cross-entropy --------------------------------------------------------------------------- */

/* max and sum exp(x - max) of one row of logits, in double */
static void dpprof__softmax_stats(const dpprof_real *x, int V, double *mx, double *sum) {
    double m = x[0], s = 0.0;
    int i;
    for (i = 1; i < V; i++)
        if (x[i] > m) m = x[i];
    for (i = 0; i < V; i++) s += exp(x[i] - m);
    *mx = m;
    *sum = s;
}

void dpprof_crossentropy_fwd_ref(dpprof_real *losses, const dpprof_real *logits, const int *targets, int B, int T, int V) {
    int b, t;
    for (b = 0; b < B; b++) {
        double total = 0.0;
        for (t = 0; t < T; t++) {
            const dpprof_real *x = logits + ((size_t)b * T + t) * V;
            int y = targets[(size_t)b * T + t];
            double mx, se;
            DPPROF_ASSERT(y >= 0 && y < V);
            dpprof__softmax_stats(x, V, &mx, &se);
            /* -log softmax_y = log sum exp(x - mx) + (mx - x_y); mx - x_y is taken first because it is exact
               when the two are close, so large logits (1000) lose nothing to rounding */
            total += log(se) + (mx - (double)x[y]);
        }
        losses[b] = (dpprof_real)(total / T);
    }
}

void dpprof_crossentropy_bwd_ref(dpprof_real *dlogits, const dpprof_real *logits, const int *targets, const dpprof_real *dlosses, int B, int T, int V) {
    int b, t, i;
    for (b = 0; b < B; b++) {
        double sc = (double)dlosses[b] / T;
        for (t = 0; t < T; t++) {
            size_t off = ((size_t)b * T + t) * V;
            const dpprof_real *x = logits + off;
            dpprof_real *dx = dlogits + off;
            int y = targets[(size_t)b * T + t];
            double mx, se;
            DPPROF_ASSERT(y >= 0 && y < V);
            /* the row statistics are complete before the first write, and each element is read just
               before it is overwritten, so dlogits may alias logits */
            dpprof__softmax_stats(x, V, &mx, &se);
            for (i = 0; i < V; i++) {
                double p = exp(x[i] - mx) / se;
                dx[i] = (dpprof_real)(sc * (i == y ? p - 1.0 : p));
            }
        }
    }
}

/* ---- last token (classification head) ------------------------------------------------------- */

void dpprof_last_token_fwd_ref(dpprof_real *out, const dpprof_real *inp, int B, int T, int C) {
    int b;
    for (b = 0; b < B; b++)
        memcpy(out + (size_t)b * C, inp + ((size_t)b * T + (T - 1)) * C, (size_t)C * sizeof(dpprof_real));
}

void dpprof_last_token_bwd_ref(dpprof_real *dinp, const dpprof_real *dout, int B, int T, int C) {
    int b, c;
    for (b = 0; b < B; b++) {
        dpprof_real *dx = dinp + ((size_t)b * T + (T - 1)) * C;
        const dpprof_real *g = dout + (size_t)b * C;
        for (c = 0; c < C; c++) dx[c] = dx[c] + g[c];
    }
}

/* ---- optimizers and scaling ------------------------------------------------------------------ */

void dpprof_adam_ref(dpprof_real *param, dpprof_real *m, dpprof_real *v, const dpprof_real *grad, size_t n, double lr, double b1, double b2, double eps, double wd, int t) {
    /* bias corrections for the 1-based step t */
    double bc1 = 1.0 - pow(b1, (double)t), bc2 = 1.0 - pow(b2, (double)t);
    size_t i;
    for (i = 0; i < n; i++) {
        double g = grad[i], p = param[i];
        double mi = b1 * m[i] + (1.0 - b1) * g;
        double vi = b2 * v[i] + (1.0 - b2) * g * g;
        double mhat = mi / bc1, vhat = vi / bc2;
        /* decoupled decay uses the pre-update p, the same as pytorch's p *= 1 - lr*wd before the adam step */
        p -= lr * (mhat / (sqrt(vhat) + eps) + wd * p);
        m[i] = (dpprof_real)mi;
        v[i] = (dpprof_real)vi;
        param[i] = (dpprof_real)p;
    }
}

void dpprof_sgd_ref(dpprof_real *param, const dpprof_real *grad, size_t n, double lr) {
    size_t i;
    for (i = 0; i < n; i++) param[i] = (dpprof_real)(param[i] - lr * grad[i]);
}

void dpprof_scale_ref(dpprof_real *y, const dpprof_real *x, size_t n, double alpha) {
    size_t i;
    for (i = 0; i < n; i++) y[i] = (dpprof_real)(alpha * x[i]);
}

/* ---- analytic costs (formulas are documented at the declarations) ---------------------------- */

dpprof_cost dpprof_matmul_fwd_cost(int N, int IC, int OC, int elem_size) {
    double n = N, ic = IC, oc = OC, es = elem_size;
    return dpprof__cost(2.0 * n * ic * oc, es * (n * ic + oc * ic + n * oc));
}

dpprof_cost dpprof_matmul_bwd_cost(int N, int IC, int OC, int elem_size) {
    double n = N, ic = IC, oc = OC, es = elem_size;
    double flops = 2.0 * n * ic * oc /* dinp = dout @ weight */
                 + 2.0 * n * ic * oc /* dweight = dout^T @ inp */
                 + n * ic + oc * ic; /* the += into both */
    double bytes = es * (n * oc + n * ic + oc * ic + 2.0 * n * ic + 2.0 * oc * ic);
    return dpprof__cost(flops, bytes);
}

dpprof_cost dpprof_embedding_fwd_cost(int N, int C, int elem_size) {
    double n = N, c = C, es = elem_size;
    return dpprof__cost(0.0, 4.0 * n + es * (n * c + n * c));
}

dpprof_cost dpprof_embedding_bwd_cost(int N, int C, int elem_size) {
    double n = N, c = C, es = elem_size;
    return dpprof__cost(n * c, 4.0 * n + es * (n * c + 2.0 * n * c));
}

dpprof_cost dpprof_rmsnorm_fwd_cost(int N, int C, int elem_size) {
    double n = N, c = C, es = elem_size;
    return dpprof__cost(n * (4.0 * c + 4.0), es * (2.0 * n * c + c + n));
}

dpprof_cost dpprof_add_rmsnorm_fwd_cost(int N, int C, int elem_size) {
    double n = N, c = C, es = elem_size;
    return dpprof__cost(n * (5.0 * c + 4.0), es * (4.0 * n * c + c + n));
}

dpprof_cost dpprof_rmsnorm_bwd_cost(int N, int C, int elem_size) {
    double n = N, c = C, es = elem_size;
    double flops = n * (3.0 * c + 5.0 * c + 3.0 * c + 3.0);
    double bytes = es * (n * c + n * c + c + n + 2.0 * n * c + 2.0 * c);
    return dpprof__cost(flops, bytes);
}

dpprof_cost dpprof_rope_fwd_cost(int B, int T, int NH, int HS, int elem_size) {
    double e = (double)B * T * NH * HS, es = elem_size;
    return dpprof__cost(3.0 * e, es * 2.0 * e);
}

dpprof_cost dpprof_rope_bwd_cost(int B, int T, int NH, int HS, int elem_size) {
    return dpprof_rope_fwd_cost(B, T, NH, HS, elem_size);
}

dpprof_cost dpprof_attention_fwd_cost(int B, int T, int NH, int NKV, int HS, int elem_size) {
    double pairs = (double)B * NH * ((double)T * (T + 1) / 2.0); /* causal: query t sees keys 0..t */
    double hs = HS, es = elem_size;
    double qsz = (double)B * T * NH * HS, kvsz = (double)B * T * NKV * HS, lsesz = (double)B * NH * T;
    double flops = 2.0 * hs * pairs /* q . k */
                 + 2.0 * hs * pairs /* p * v */
                 + 5.0 * pairs      /* scale, running max, subtract, exp, sum */
                 + qsz;             /* divide by the row sum */
    double bytes = es * (2.0 * qsz + 2.0 * kvsz + lsesz);
    return dpprof__cost(flops, bytes);
}

dpprof_cost dpprof_attention_bwd_cost(int B, int T, int NH, int NKV, int HS, int elem_size) {
    double pairs = (double)B * NH * ((double)T * (T + 1) / 2.0);
    double hs = HS, es = elem_size;
    double qsz = (double)B * T * NH * HS, kvsz = (double)B * T * NKV * HS, lsesz = (double)B * NH * T;
    double flops = 10.0 * hs * pairs /* recompute q.k and dout.v, then dq, dk, dv updates */
                 + 4.0 * pairs       /* exp(s - lse), dp - D, * p, * scale */
                 + 2.0 * qsz;        /* D = rowsum(dout * out) */
    double bytes = es * (3.0 * qsz + 2.0 * kvsz + lsesz + qsz + 2.0 * kvsz);
    return dpprof__cost(flops, bytes);
}

dpprof_cost dpprof_swiglu_fwd_cost(size_t n, int elem_size) {
    return dpprof__cost(5.0 * (double)n, (double)elem_size * 3.0 * (double)n);
}

dpprof_cost dpprof_swiglu_bwd_cost(size_t n, int elem_size) {
    return dpprof__cost(12.0 * (double)n, (double)elem_size * 5.0 * (double)n);
}

dpprof_cost dpprof_add_cost(size_t n, int elem_size) {
    return dpprof__cost((double)n, (double)elem_size * 3.0 * (double)n);
}

dpprof_cost dpprof_crossentropy_fwd_cost(int B, int T, int V, int elem_size) {
    double rows = (double)B * T, v = V, es = elem_size;
    return dpprof__cost(rows * (4.0 * v + 4.0) + B, es * rows * v + 4.0 * rows + es * B);
}

dpprof_cost dpprof_crossentropy_bwd_cost(int B, int T, int V, int elem_size) {
    double rows = (double)B * T, v = V, es = elem_size;
    return dpprof__cost(rows * (7.0 * v + 2.0), es * (rows * v + B + rows * v) + 4.0 * rows);
}

dpprof_cost dpprof_last_token_fwd_cost(int B, int T, int C, int elem_size) {
    (void)T; /* only row T-1 is touched, whatever T is */
    return dpprof__cost(0.0, (double)elem_size * 2.0 * B * C);
}

dpprof_cost dpprof_last_token_bwd_cost(int B, int T, int C, int elem_size) {
    (void)T;
    return dpprof__cost((double)B * C, (double)elem_size * 3.0 * B * C);
}

dpprof_cost dpprof_adam_cost(size_t n, int elem_size) {
    return dpprof__cost(16.0 * (double)n, (double)elem_size * 7.0 * (double)n);
}

dpprof_cost dpprof_sgd_cost(size_t n, int elem_size) {
    return dpprof__cost(2.0 * (double)n, (double)elem_size * 3.0 * (double)n);
}

dpprof_cost dpprof_scale_cost(size_t n, int elem_size) {
    return dpprof__cost((double)n, (double)elem_size * 2.0 * (double)n);
}

/* ---- dp reference ops: implementation (after the
   cpu reference ops: it uses their dpprof__dot, dpprof__axpy, dpprof__cost and DPPROF__BLK) ----
   same rules as the ops above: plain loops, innermost loop contiguous, every long sum in double, no allocation.
   the norms are the specification the gpu norm kernels are tested against. */

/* dot product of two long vectors a, b (len): dpprof__dot takes an int length, and a (T,T) gram or a whole
   model's per-sample gradient can pass INT_MAX elements, so it is fed in chunks of 2^30 */
static double dpprof__dot_long(const dpprof_real *a, const dpprof_real *b, size_t len) {
    const size_t chunk = (size_t)1 << 30;
    double s = 0.0;
    size_t k;
    for (k = 0; k < len; k += chunk) {
        size_t m = len - k < chunk ? len - k : chunk;
        s += dpprof__dot(a + k, b + k, (int)m);
    }
    return s;
}

/* out (OC,IC) = (accumulate ? out : 0) + sum_{i<n} w_i dy_i^T x_i, dy (n,T,OC), x (n,T,IC), w_i = c[i] (c (n)),
   or 1 when c is NULL. the blocking of dpprof_matmul_bwd_ref's dweight (a 64-column block of x reused by four
   output rows), over the n*T rows in order, so with c NULL or all ones it repeats that op's arithmetic exactly */
static void dpprof__linear_dyTx(dpprof_real *out, int accumulate, const dpprof_real *dy, const dpprof_real *x, const double *c, int n, int T, int IC, int OC) {
    double acc[4][DPPROF__BLK]; /* 2 KiB */
    int i, t, o, r, k, i0, nb, nr;
    for (i0 = 0; i0 < IC; i0 += DPPROF__BLK) {
        nb = IC - i0 < DPPROF__BLK ? IC - i0 : DPPROF__BLK;
        for (o = 0; o < OC; o += 4) {
            nr = OC - o < 4 ? OC - o : 4;
            for (r = 0; r < nr; r++)
                for (k = 0; k < nb; k++) acc[r][k] = 0.0;
            for (i = 0; i < n; i++) {
                double w = c ? c[i] : 1.0;
                for (t = 0; t < T; t++) {
                    size_t row = (size_t)i * T + t;
                    const dpprof_real *xr = x + row * IC + i0;
                    const dpprof_real *g = dy + row * OC + o;
                    /* w * g is the per-sample scaling of dy; 1.0 * g is exact, hence the bitwise match */
                    for (r = 0; r < nr; r++) dpprof__axpy(acc[r], w * g[r], xr, nb);
                }
            }
            for (r = 0; r < nr; r++) {
                dpprof_real *dst = out + (size_t)(o + r) * IC + i0;
                if (accumulate)
                    for (k = 0; k < nb; k++) dst[k] = (dpprof_real)(dst[k] + acc[r][k]);
                else
                    for (k = 0; k < nb; k++) dst[k] = (dpprof_real)acc[r][k];
            }
        }
    }
}

/* dst (V,C) rows += sum over the N = n*T rows r of dy (N,C) of w_r dy_r into row tokens[r] (tokens (N)),
   w_r = c[r / T] (c (n)) or 1 when c is NULL. V > 0 bounds the tokens (rows outside [0,V) are skipped under
   NDEBUG rather than written out of bounds); V <= 0 means unknown (only tok >= 0 is checked). as in
   dpprof_embedding_bwd_ref, all occurrences of a token are summed in double at its first occurrence, found
   by O(N^2) int compares (no allocation allowed) */
static void dpprof__embedding_scatter(dpprof_real *dst, const dpprof_real *dy, const int *tokens, const double *c, int n, int T, int C, int V) {
    double acc[DPPROF__BLK];
    size_t N = (size_t)n * T, r, m;
    int c0, k, nb;
    for (r = 0; r < N; r++) {
        int tok = tokens[r], seen = 0, repeated = 0;
        dpprof_real *dw;
        DPPROF_ASSERT(tok >= 0 && (V <= 0 || tok < V));
        if (tok < 0 || (V > 0 && tok >= V)) continue;
        for (m = 0; m < r; m++)
            if (tokens[m] == tok) {
                seen = 1;
                break;
            }
        if (seen) continue;
        for (m = r + 1; m < N; m++)
            if (tokens[m] == tok) {
                repeated = 1;
                break;
            }
        dw = dst + (size_t)tok * C;
        if (!repeated) {
            /* single occurrence: one rounding per element, no sum to protect */
            const dpprof_real *g = dy + r * C;
            double w = c ? c[r / (size_t)T] : 1.0;
            for (k = 0; k < C; k++) dw[k] = (dpprof_real)(dw[k] + w * g[k]);
            continue;
        }
        for (c0 = 0; c0 < C; c0 += DPPROF__BLK) {
            nb = C - c0 < DPPROF__BLK ? C - c0 : DPPROF__BLK;
            for (k = 0; k < nb; k++) acc[k] = 0.0;
            for (m = r; m < N; m++) {
                if (tokens[m] != tok) continue;
                dpprof__axpy(acc, c ? c[m / (size_t)T] : 1.0, dy + m * C + c0, nb);
            }
            for (k = 0; k < nb; k++) dw[c0 + k] = (dpprof_real)(dw[c0 + k] + acc[k]);
        }
    }
}

/* ---- linear layers: materialised per-sample gradients ------------------------------------------- */

void dpprof_linear_psgrad_ref(dpprof_real *psg, const dpprof_real *dy, const dpprof_real *x, int n, int T, int IC, int OC) {
    int i;
    /* each sample is its own (T-row) weight gradient, overwritten */
    for (i = 0; i < n; i++)
        dpprof__linear_dyTx(psg + (size_t)i * OC * IC, 0, dy + (size_t)i * T * OC, x + (size_t)i * T * IC, NULL, 1, T, IC, OC);
}

void dpprof_psgrad_sqnorm_ref(double *norm2, const dpprof_real *psg, int n, size_t P) {
    int i;
    for (i = 0; i < n; i++) {
        const dpprof_real *g = psg + (size_t)i * P;
        norm2[i] += dpprof__dot_long(g, g, P);
    }
}

void dpprof_psgrad_clipsum_ref(dpprof_real *dw, const dpprof_real *psg, const double *c, int n, size_t P) {
    double acc[DPPROF__BLK];
    size_t p0;
    int i, k, nb;
    /* column blocks, samples inner: the sum over i stays in double and dw is rounded once */
    for (p0 = 0; p0 < P; p0 += DPPROF__BLK) {
        nb = P - p0 < DPPROF__BLK ? (int)(P - p0) : DPPROF__BLK;
        for (k = 0; k < nb; k++) acc[k] = 0.0;
        for (i = 0; i < n; i++) dpprof__axpy(acc, c[i], psg + (size_t)i * P + p0, nb);
        for (k = 0; k < nb; k++) dw[p0 + k] = (dpprof_real)(dw[p0 + k] + acc[k]);
    }
}

/* ---- linear layers: ghost norms ----------------------------------------------------------------- */

void dpprof_gram_ref(dpprof_real *out, const dpprof_real *x, int n, int T, int D) {
    int i, s, t;
    for (i = 0; i < n; i++) {
        const dpprof_real *xi = x + (size_t)i * T * D;
        dpprof_real *o = out + (size_t)i * T * T;
        /* upper triangle by dot products, mirrored: half the work and an exactly symmetric result */
        for (s = 0; s < T; s++)
            for (t = s; t < T; t++) {
                dpprof_real v = (dpprof_real)dpprof__dot(xi + (size_t)s * D, xi + (size_t)t * D, D);
                o[(size_t)s * T + t] = v;
                o[(size_t)t * T + s] = v;
            }
    }
}

void dpprof_gram_dot_ref(double *norm2, const dpprof_real *ga, const dpprof_real *gg, int n, int T) {
    size_t TT = (size_t)T * T;
    int i;
    for (i = 0; i < n; i++) norm2[i] += dpprof__dot_long(ga + (size_t)i * TT, gg + (size_t)i * TT, TT);
}

void dpprof_linear_sqnorm_gram_ref(double *norm2, const dpprof_real *dy, const dpprof_real *x, int n, int T, int IC, int OC) {
    int i, s0, t0, s, t, ns, nt;
    for (i = 0; i < n; i++) {
        const dpprof_real *xi = x + (size_t)i * T * IC;
        const dpprof_real *gi = dy + (size_t)i * T * OC;
        double total = 0.0;
        for (s0 = 0; s0 < T; s0 += DPPROF_NORM_TILE) {
            ns = T - s0 < DPPROF_NORM_TILE ? T - s0 : DPPROF_NORM_TILE;
            /* (x x^T)_st (dy dy^T)_st is symmetric in (s,t): tiles below the diagonal mirror those above */
            for (t0 = s0; t0 < T; t0 += DPPROF_NORM_TILE) {
                double tile = 0.0; /* the tile's own accumulator: a gpu block reduces a tile the same way */
                nt = T - t0 < DPPROF_NORM_TILE ? T - t0 : DPPROF_NORM_TILE;
                for (s = s0; s < s0 + ns; s++) {
                    const dpprof_real *xs = xi + (size_t)s * IC, *gs = gi + (size_t)s * OC;
                    /* each gram entry is made and consumed at once: no tile of either gram is kept */
                    for (t = t0; t < t0 + nt; t++)
                        tile += dpprof__dot(xs, xi + (size_t)t * IC, IC) * dpprof__dot(gs, gi + (size_t)t * OC, OC);
                }
                total += (t0 == s0 ? 1.0 : 2.0) * tile;
            }
        }
        norm2[i] += total;
    }
}

void dpprof_linear_sqnorm_gram_group_ref(double *const *norm2, const dpprof_real *const *dy, const int *OC, int m, const dpprof_real *x, int n, int T, int IC) {
    int j;
    for (j = 0; j < m; j++) dpprof_linear_sqnorm_gram_ref(norm2[j], dy[j], x, n, T, IC, OC[j]);
}

void dpprof_linear_sqnorm_psg_ref(double *norm2, const dpprof_real *dy, const dpprof_real *x, int n, int T, int IC, int OC) {
    double acc[DPPROF_NORM_TILE][DPPROF_NORM_TILE]; /* 8 KiB at tile 32: one block of g_i */
    int i, t, o0, i0, no, ni, o, k;
    for (i = 0; i < n; i++) {
        double total = 0.0;
        for (o0 = 0; o0 < OC; o0 += DPPROF_NORM_TILE) {
            no = OC - o0 < DPPROF_NORM_TILE ? OC - o0 : DPPROF_NORM_TILE;
            for (i0 = 0; i0 < IC; i0 += DPPROF_NORM_TILE) {
                ni = IC - i0 < DPPROF_NORM_TILE ? IC - i0 : DPPROF_NORM_TILE;
                for (o = 0; o < no; o++)
                    for (k = 0; k < ni; k++) acc[o][k] = 0.0;
                /* the whole sum over T goes into the block before it is squared: g_i's elements are exact
                   double sums, as in the materialised path (without its rounding to dpprof_real) */
                for (t = 0; t < T; t++) {
                    size_t row = (size_t)i * T + t;
                    const dpprof_real *xr = x + row * IC + i0;
                    const dpprof_real *g = dy + row * OC + o0;
                    for (o = 0; o < no; o++) dpprof__axpy(acc[o], g[o], xr, ni);
                }
                for (o = 0; o < no; o++)
                    for (k = 0; k < ni; k++) total += acc[o][k] * acc[o][k];
            }
        }
        norm2[i] += total;
    }
}

void dpprof_linear_clipgrad_ref(dpprof_real *dw, const dpprof_real *dy, const dpprof_real *x, const double *c, int n, int T, int IC, int OC) {
    /* sum_i c_i dy_i^T x_i = (C dy)^T x with C scaling each sample's T rows: one gemm over all n*T rows */
    dpprof__linear_dyTx(dw, 1, dy, x, c, n, T, IC, OC);
}

void dpprof_sample_sqnorm_ref(double *norm2, const dpprof_real *x, int n, size_t P) {
    int i;
    size_t e;
    for (i = 0; i < n; i++) {
        const dpprof_real *xi = x + (size_t)i * P;
        double total = 0.0;
        for (e = 0; e < P; e++) total += (double)xi[e] * (double)xi[e];
        norm2[i] += total;
    }
}

/* ---- embedding ---------------------------------------------------------------------------------- */

void dpprof_embedding_sqnorm_ref(double *norm2, const dpprof_real *dy, const int *tokens, int n, int T, int C) {
    int i, s, t;
    /* ||g_i||^2 = sum_v ||sum_{t: tok_t = v} dy_t||^2 expanded into pairs: the masked gram of dy. only equal
       pairs cost a dot product; the mask is O(T^2) int compares */
    for (i = 0; i < n; i++) {
        const int *tok = tokens + (size_t)i * T;
        const dpprof_real *gi = dy + (size_t)i * T * C;
        double total = 0.0;
        for (s = 0; s < T; s++) {
            const dpprof_real *gs = gi + (size_t)s * C;
            DPPROF_ASSERT(tok[s] >= 0);
            total += dpprof__dot(gs, gs, C);
            for (t = s + 1; t < T; t++)
                if (tok[t] == tok[s]) total += 2.0 * dpprof__dot(gs, gi + (size_t)t * C, C); /* (s,t) and (t,s) */
        }
        norm2[i] += total;
    }
}

void dpprof_tied_cross_ref(double *norm2, const dpprof_real *dl, const dpprof_real *x, const dpprof_real *dy, const int *tokens, int n, int T, int V, int C) {
    int i, s, t;
    for (i = 0; i < n; i++) {
        const int *tok = tokens + (size_t)i * T;
        const dpprof_real *li = dl + (size_t)i * T * V, *xi = x + (size_t)i * T * C, *gi = dy + (size_t)i * T * C;
        double total = 0.0;
        for (s = 0; s < T; s++) {
            DPPROF_ASSERT(tok[s] >= 0 && tok[s] < V);
            for (t = 0; t < T; t++) total += (double)li[(size_t)t * V + (size_t)tok[s]] * dpprof__dot(xi + (size_t)t * C, gi + (size_t)s * C, C);
        }
        norm2[i] += 2.0 * total;
    }
}

void dpprof_embedding_psgrad_ref(dpprof_real *psg, const dpprof_real *dy, const int *tokens, int n, int T, int V, int C) {
    size_t VC = (size_t)V * C, k;
    int i;
    for (i = 0; i < n; i++) {
        dpprof_real *g = psg + (size_t)i * VC;
        /* overwritten: rows of tokens the sample does not use are zero gradients, not stale data */
        for (k = 0; k < VC; k++) g[k] = (dpprof_real)0;
        dpprof__embedding_scatter(g, dy + (size_t)i * T * C, tokens + (size_t)i * T, NULL, 1, T, C, V);
    }
}

void dpprof_embedding_clipgrad_ref(dpprof_real *dwte, const dpprof_real *dy, const int *tokens, const double *c, int n, int T, int C) {
    /* one scatter over all n*T rows with dy scaled by c per sample: a token shared by samples is summed in
       double across them, like the vanilla dpprof_embedding_bwd_ref over the whole batch */
    dpprof__embedding_scatter(dwte, dy, tokens, c, n, T, C, 0);
}

/* ---- rmsnorm ------------------------------------------------------------------------------------ */

void dpprof_rmsnorm_psdweight_ref(dpprof_real *psg, const dpprof_real *dout, const dpprof_real *inp, const dpprof_real *rstd, int n, int T, int C) {
    double acc[DPPROF__BLK];
    int i, t, c, c0, nb;
    /* dpprof_rmsnorm_bwd_ref's dweight loop, restarted per sample (same product order, so the sum over i
       agrees with it to rounding) */
    for (i = 0; i < n; i++) {
        for (c0 = 0; c0 < C; c0 += DPPROF__BLK) {
            nb = C - c0 < DPPROF__BLK ? C - c0 : DPPROF__BLK;
            for (c = 0; c < nb; c++) acc[c] = 0.0;
            for (t = 0; t < T; t++) {
                size_t row = (size_t)i * T + t;
                const dpprof_real *xr = inp + row * C + c0;
                const dpprof_real *g = dout + row * C + c0;
                double r = rstd[row];
                for (c = 0; c < nb; c++) acc[c] += (double)g[c] * xr[c] * r;
            }
            for (c = 0; c < nb; c++) psg[(size_t)i * C + c0 + c] = (dpprof_real)acc[c];
        }
    }
}

void dpprof_rmsnorm_bwd_ps_ref(dpprof_real *dinp, dpprof_real *psg, const dpprof_real *dout, const dpprof_real *inp, const dpprof_real *weight, const dpprof_real *rstd, int n, int T, int C) {
    dpprof_rmsnorm_bwd_ref(dinp, NULL, dout, inp, weight, rstd, n * T, C);
    dpprof_rmsnorm_psdweight_ref(psg, dout, inp, rstd, n, T, C);
}

/* ---- clipping ----------------------------------------------------------------------------------- */

void dpprof_clip_factors_ref(double *c, const double *norm2, int n, double clip) { dpprof_clip_factors_bound_ref(c, norm2, NULL, n, clip); }

void dpprof_clip_factors_bound_ref(double *c, const double *norm2, const double *eps, int n, double clip) {
    int i;
    /* a negative bound would flip gradients instead of shrinking them */
    DPPROF_ASSERT(clip >= 0.0);
    for (i = 0; i < n; i++) {
        /* the 1e-6 (opacus' choice) keeps a zero gradient at factor 1 instead of dividing by zero; a nan eps
           makes a nan factor, as a nan norm does */
        double f = clip / (sqrt(norm2[i]) + (eps ? eps[i] : 0.0) + 1e-6);
        /* f == f is false only for nan: min() would turn a nan norm into factor 1, an unclipped sample */
        c[i] = (f == f && f > 1.0) ? 1.0 : f;
    }
}

int dpprof_flash_choice(int T, int IC, int OC) {
    /* the same counts as the dry backend's costs, so the choice and the reported flops never disagree */
    dpprof_cost g = dpprof_linear_sqnorm_gram_cost(1, T, IC, OC, 4);
    dpprof_cost p = dpprof_linear_sqnorm_psg_cost(1, T, IC, OC, 4);
    return g.flops <= p.flops ? 0 : 1;
}

/* ---- analytic costs of the dp ops (formulas are documented at the declarations) ------------------ */

dpprof_cost dpprof_linear_psgrad_cost(int n, int T, int IC, int OC, int elem_size) {
    double nn = n, t = T, ic = IC, oc = OC, es = elem_size;
    return dpprof__cost(2.0 * nn * t * ic * oc, es * (nn * t * oc + nn * t * ic + nn * oc * ic));
}

dpprof_cost dpprof_psgrad_sqnorm_cost(int n, size_t P, int elem_size) {
    double nn = n, p = (double)P, es = elem_size;
    return dpprof__cost(nn * (2.0 * p + 1.0), es * nn * p + 16.0 * nn);
}

dpprof_cost dpprof_psgrad_clipsum_cost(int n, size_t P, int elem_size) {
    double nn = n, p = (double)P, es = elem_size;
    return dpprof__cost(2.0 * nn * p + p, es * (nn * p + 2.0 * p) + 8.0 * nn);
}

dpprof_cost dpprof_gram_cost(int n, int T, int D, int elem_size) {
    double nn = n, t = T, d = D, es = elem_size;
    return dpprof__cost(nn * t * (t + 1.0) * d, es * (nn * t * d + nn * t * t));
}

dpprof_cost dpprof_gram_dot_cost(int n, int T, int elem_size) {
    double nn = n, t = T, es = elem_size;
    return dpprof__cost(nn * (2.0 * t * t + 1.0), es * 2.0 * nn * t * t + 16.0 * nn);
}

dpprof_cost dpprof_linear_sqnorm_gram_cost(int n, int T, int IC, int OC, int elem_size) {
    return dpprof_linear_sqnorm_gram_group_cost(n, T, IC, OC, 1, elem_size);
}

dpprof_cost dpprof_linear_sqnorm_gram_group_cost(int n, int T, int IC, int OC, int m, int elem_size) {
    double nn = n, t = T, ic = IC, oc = OC, es = elem_size, b = DPPROF_NORM_TILE, mm = m;
    double k = T > 0 ? (double)((T + DPPROF_NORM_TILE - 1) / DPPROF_NORM_TILE) : 0.0; /* tiles */
    double last = t - (k - 1.0) * b;                                                  /* length of the last */
    double sumsq = k > 0.0 ? (k - 1.0) * b * b + last * last : 0.0;
    double q = (t * t + sumsq) / 2.0, np = k * (k + 1.0) / 2.0;
    return dpprof__cost(nn * (q * (2.0 * ic + 2.0 * oc + 2.0 * mm) + mm * (2.0 * np + 1.0)), es * nn * t * (ic + oc) + 16.0 * nn * mm);
}

dpprof_cost dpprof_linear_sqnorm_psg_cost(int n, int T, int IC, int OC, int elem_size) {
    double nn = n, t = T, ic = IC, oc = OC, es = elem_size;
    return dpprof__cost(nn * (2.0 * t * ic * oc + 2.0 * ic * oc + 1.0), es * nn * t * (ic + oc) + 16.0 * nn);
}

dpprof_cost dpprof_linear_clipgrad_cost(int n, int T, int IC, int OC, int elem_size) {
    double nn = n, t = T, ic = IC, oc = OC, es = elem_size;
    return dpprof__cost(nn * t * oc + 2.0 * nn * t * ic * oc + oc * ic, es * (nn * t * oc + nn * t * ic + 2.0 * oc * ic) + 8.0 * nn);
}

dpprof_cost dpprof_sample_sqnorm_cost(int n, size_t P, int elem_size) {
    double nn = n, pp = (double)P;
    return dpprof__cost(2.0 * nn * pp, elem_size * nn * pp + 16.0 * nn);
}

dpprof_cost dpprof_embedding_sqnorm_cost(int n, int T, int C, int elem_size) {
    /* what the kernel does: every dy row is added once into its token's sum (C adds a row), each distinct
       token's sum is square-summed (2C; at most T distinct tokens a sample: the count taken, as the cost cannot
       see the tokens) and the T partials of a sample are added; the O(T^2) token compares that link equal
       tokens are integer work, not flops. the reference's masked gram (a dot product per equal pair) does the
       same arithmetic where every token is distinct */
    double nn = n, t = T, c = C, es = elem_size;
    double flops = nn * (t * c + 2.0 * t * c + t);
    return dpprof__cost(flops, 4.0 * nn * t + es * nn * t * c + 16.0 * nn);
}

dpprof_cost dpprof_embedding_psgrad_cost(int n, int T, int V, int C, int elem_size) {
    double nn = n, t = T, v = V, c = C, es = elem_size;
    return dpprof__cost(nn * t * c, 4.0 * nn * t + es * (nn * t * c + nn * v * c));
}

dpprof_cost dpprof_tied_cross_cost(int n, int T, int V, int C, int elem_size) {
    double nn = n, t = T, c = C, es = elem_size;
    (void)V;
    return dpprof__cost(nn * (t * t * (2.0 * c + 2.0) + 1.0), 4.0 * nn * t + es * (nn * t * t + 2.0 * nn * t * c) + 16.0 * nn);
}

dpprof_cost dpprof_embedding_clipgrad_cost(int n, int T, int C, int elem_size) {
    double nn = n, t = T, c = C, es = elem_size;
    return dpprof__cost(2.0 * nn * t * c, 4.0 * nn * t + es * (nn * t * c + 2.0 * nn * t * c) + 8.0 * nn);
}

dpprof_cost dpprof_rmsnorm_psdweight_cost(int n, int T, int C, int elem_size) {
    double nn = n, t = T, c = C, es = elem_size;
    return dpprof__cost(3.0 * nn * t * c, es * (2.0 * nn * t * c + nn * t + nn * c));
}

dpprof_cost dpprof_rmsnorm_bwd_ps_cost(int n, int T, int C, int elem_size) {
    double nn = n, N = (double)n * T, c = C, es = elem_size;
    return dpprof__cost(N * (11.0 * c + 3.0), es * (4.0 * N * c + c + N + nn * c));
}

dpprof_cost dpprof_clip_factors_cost(int n, int elem_size) {
    (void)elem_size;
    return dpprof__cost(4.0 * n, 16.0 * n);
}

/* the data-sheet peaks of the gpus we measure on (NVIDIA H100/H200/A100 data sheets: dense, no
   sparsity), else sm count x clock x per-sm rate (fp32: 2 x cuda cores per sm; bf16 tensor cores:
   2048 flop/clock/sm on sm 8.0, 4096 on sm 9.0) and 2 x memory clock x bus width */
DPPROF_API void dpprof_device_peaks(const dpprof_device_info *d, double *fp32_flops, double *bf16_flops, double *dram_bytes) {
    double f32 = 0, b16 = 0, dram = 0;
    if (d && strstr(d->name, "H200")) {
        f32 = 66.9e12;
        b16 = 989.4e12;
        dram = 4.8e12;
    } else if (d && strstr(d->name, "H100") && strstr(d->name, "NVL")) {
        f32 = 60e12;
        b16 = 835e12;
        dram = 3.9e12;
    } else if (d && strstr(d->name, "H100") && strstr(d->name, "PCIe")) {
        f32 = 51.2e12;
        b16 = 756e12;
        dram = 2.0e12;
    } else if (d && strstr(d->name, "H100")) {
        f32 = 66.9e12;
        b16 = 989.4e12;
        dram = 3.35e12;
    } else if (d && strstr(d->name, "A100")) {
        f32 = 19.5e12;
        b16 = 312e12;
        dram = d->total_bytes > ((size_t)50 << 30) ? 2.039e12 : 1.555e12;
    } else if (d && d->cc_major == 9 && d->cc_minor == 0) {
        f32 = 256.0 * d->sm_count * d->clock_khz * 1e3;
        b16 = 4096.0 * d->sm_count * d->clock_khz * 1e3;
    } else if (d && d->cc_major == 8 && d->cc_minor == 0) {
        f32 = 128.0 * d->sm_count * d->clock_khz * 1e3;
        b16 = 2048.0 * d->sm_count * d->clock_khz * 1e3;
    }
    if (d && dram == 0 && d->mem_clock_khz > 0) dram = 2.0 * d->mem_clock_khz * 1e3 * d->bus_width_bits / 8.0;
    if (fp32_flops) *fp32_flops = f32;
    if (bf16_flops) *bf16_flops = b16;
    if (dram_bytes) *dram_bytes = dram;
}

DPPROF_API double dpprof_flop_peak(const dpprof_device_info *d, dpprof_dtype dtype) {
    double f32, b16;
    dpprof_device_peaks(d, &f32, &b16, NULL);
    return dtype == DPPROF_DTYPE_BF16 ? b16 : f32;
}

/* =============================================================================================
   PART 5 (implementation): engine
   ============================================================================================= */
/* ---- 5.1 configuration -------------------------------------------------------------------------------------
   dpprof_config is a desc struct whose zero fields mean defaults. dpprof_config_resolve is the one place a
   configuration is checked: every field against its description (dpprof__fields: type, range, values;
   dpprof_config_set parses text by the same table), then the rules between fields, then the defaults, and
   sigma for config.target_epsilon. A message names a field as config.NAME. Presets give the model shapes; an
   alias or a Hugging Face name resolves to the preset. */

/* presets */
typedef struct dpprof__preset {
    const char *name;
    int V, C, L, NH, NKV, F;
    double theta;
    int tied;                /* tie_word_embeddings */
    const char *hf, *hf_old; /* the published model's Hugging Face name (and an older one), NULL for none */
} dpprof__preset;

/* shapes of the published configs: Llama-3.2-1B and 3B tie the lm head to the embedding as published
   (1,235,814,400 and 3,212,749,824 parameters), Llama-3.1-8B does not (8,030,261,248); the others are
   dpprof's own shapes, untied. tests/hf/ holds the published config.json values for --hf-config */
static const dpprof__preset dpprof__presets[] = {
    {"tiny", 256, 64, 2, 4, 2, 176, 10000.0, 0, NULL, NULL},
    {"gpt2-small", 50257, 768, 12, 12, 12, 3072, 10000.0, 0, NULL, NULL},
    {"llama-3.2-1b", 128256, 2048, 16, 32, 8, 8192, 500000.0, 1, "meta-llama/Llama-3.2-1B", NULL},
    {"llama-3.2-3b", 128256, 3072, 28, 24, 8, 8192, 500000.0, 1, "meta-llama/Llama-3.2-3B", NULL},
    {"llama-3.1-8b", 128256, 4096, 32, 32, 8, 14336, 500000.0, 0, "meta-llama/Llama-3.1-8B", "meta-llama/Meta-Llama-3.1-8B"},
    {"trainer-1b", 32000, 2048, 24, 32, 32, 5632, 10000.0, 0, NULL, NULL}, /* the seed trainers' ~1b model */
    {"longctx", 32000, 2048, 20, 16, 16, 5632, 10000.0, 0, NULL, NULL},    /* the seed's long-context model */
};
#define DPPROF__N_PRESETS ((int)(sizeof dpprof__presets / sizeof dpprof__presets[0]))
static const char *const dpprof__preset_list[] = {"tiny", "gpt2-small", "llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b", "trainer-1b", "longctx", NULL};

DPPROF_API const char *const *dpprof_preset_names(void) { return dpprof__preset_list; }

/* ascii case-insensitive equality (Hugging Face names are matched so) */
static int dpprof__same_ci(const char *a, const char *b) {
    for (; *a && *b; a++, b++) {
        const int x = *a >= 'A' && *a <= 'Z' ? *a - 'A' + 'a' : *a, y = *b >= 'A' && *b <= 'Z' ? *b - 'A' + 'a' : *b;
        if (x != y) return 0;
    }
    return *a == *b;
}

static const dpprof__preset *dpprof__preset_find(const char *name) {
    int i;
    for (i = 0; name && i < DPPROF__N_PRESETS; i++) {
        const dpprof__preset *p = &dpprof__presets[i];
        if (!strcmp(name, p->name) || (p->hf && dpprof__same_ci(name, p->hf)) || (p->hf_old && dpprof__same_ci(name, p->hf_old))) return p;
    }
    return NULL;
}

DPPROF_API const char *dpprof_preset_canonical(const char *name) {
    const dpprof__preset *p = dpprof__preset_find(name);
    return p ? p->name : NULL;
}

DPPROF_API const char *dpprof_preset_hf_name(const char *name) {
    const dpprof__preset *p = dpprof__preset_find(name);
    return p && p->hf ? p->hf : "";
}

DPPROF_API int dpprof_preset_shape(const char *name, dpprof_shape *sh) {
    const dpprof__preset *p = dpprof__preset_find(name);
    if (p) {
        memset(sh, 0, sizeof *sh);
        sh->V = p->V;
        sh->C = p->C;
        sh->L = p->L;
        sh->NH = p->NH;
        sh->NKV = p->NKV;
        sh->F = p->F;
        sh->HS = p->C / p->NH;
        sh->rope_theta = p->theta;
        sh->norm_eps = 1e-5;
        sh->tied = p->tied;
        return DPPROF_OK;
    }
    return dpprof__fail(DPPROF_ERR_INVALID, "unknown preset '%s' (known: tiny, gpt2-small, llama-3.2-1b, llama-3.2-3b, llama-3.1-8b, trainer-1b, longctx, "
                                            "or meta-llama/Llama-3.2-1B, meta-llama/Llama-3.2-3B, meta-llama/Llama-3.1-8B)",
                        name ? name : "(null)");
}

/* parameters of one decoder layer, in dump order */
enum {
    DPPROF__P_LN1,
    DPPROF__P_Q,
    DPPROF__P_K,
    DPPROF__P_V,
    DPPROF__P_O,
    DPPROF__P_LN2,
    DPPROF__P_GATE,
    DPPROF__P_UP,
    DPPROF__P_DOWN,
    DPPROF__P_PER_LAYER
};
static const char *const dpprof__proj_names[DPPROF__P_PER_LAYER] = {"", "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "", "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj"};

/* "q,v,gate" -> a bit per projection (bit DPPROF__P_Q...); -1 and a message for an unknown name */
static int dpprof__lora_mask(const char *list) {
    static const char *const names[] = {"", "q", "k", "v", "o", "", "gate", "up", "down"};
    int mask = 0, j;
    const char *p = list;
    while (*p) {
        size_t len = strcspn(p, ",");
        for (j = 0; j < DPPROF__P_PER_LAYER; j++)
            if (names[j][0] && strlen(names[j]) == len && !strncmp(p, names[j], len)) break;
        if (j == DPPROF__P_PER_LAYER) return dpprof__fail(DPPROF_ERR_INVALID, "config.lora_targets '%s': '%.*s' is not one of q, k, v, o, gate, up, down", list, (int)len, p);
        mask |= 1 << j;
        p += len;
        if (*p == ',') p++;
    }
    if (!mask) return dpprof__fail(DPPROF_ERR_INVALID, "config.lora_targets '%s' names no projection", list);
    return mask;
}

/* the largest value any single dimension may take: keeps products of four dims inside int64 */
#define DPPROF__DIM_MAX 16777216

/* ---- the configuration's fields, described once: dpprof_config_resolve checks them, dpprof_config_set parses
   them, a command line's options name them ------------------------------------------------------------- */
#define DPPROF__F(name, type, lo, hi, open, values, first) \
    { #name, type, offsetof(dpprof_config, name), lo, hi, open, values, first }
#define DPPROF__SWITCHES "off|auto|on"
static const dpprof_config_field dpprof__fields[] = {
    DPPROF__F(preset, DPPROF_FIELD_TEXT, 0, 0, 0, NULL, 0),
    DPPROF__F(vocab, DPPROF_FIELD_INT, 2, DPPROF__DIM_MAX, 0, NULL, 0),
    DPPROF__F(hidden, DPPROF_FIELD_INT, 2, DPPROF__DIM_MAX, 0, NULL, 0),
    DPPROF__F(layers, DPPROF_FIELD_INT, 1, 4096, 0, NULL, 0),
    DPPROF__F(heads, DPPROF_FIELD_INT, 1, 65536, 0, NULL, 0),
    DPPROF__F(kv_heads, DPPROF_FIELD_INT, 1, 65536, 0, NULL, 0),
    DPPROF__F(ffn, DPPROF_FIELD_INT, 1, DPPROF__DIM_MAX, 0, NULL, 0),
    DPPROF__F(head_dim, DPPROF_FIELD_INT, 1, DPPROF_MAX_HEAD_SIZE, 0, NULL, 0),
    DPPROF__F(tie_embeddings, DPPROF_FIELD_ENUM, 0, 0, 0, DPPROF__SWITCHES, -1),
    DPPROF__F(model_name, DPPROF_FIELD_TEXT, 0, 0, 0, NULL, 0),
    DPPROF__F(unmodelled, DPPROF_FIELD_TEXT, 0, 0, 0, NULL, 0),
    DPPROF__F(seq, DPPROF_FIELD_INT, 1, DPPROF__DIM_MAX, 0, NULL, 0),
    DPPROF__F(task, DPPROF_FIELD_ENUM, 0, 0, 0, "lm|cls", 1),
    DPPROF__F(classes, DPPROF_FIELD_INT, 2, DPPROF__DIM_MAX, 0, NULL, 0),
    DPPROF__F(algo, DPPROF_FIELD_ENUM, 0, 0, 0, "vanilla|persample|ghost|ghost_bk|flash|flash_bk|auto", 1),
    DPPROF__F(batch, DPPROF_FIELD_INT, 1, DPPROF__DIM_MAX, 0, NULL, 0),
    DPPROF__F(physical_batch, DPPROF_FIELD_INT, 1, DPPROF__DIM_MAX, 0, NULL, 0),
    DPPROF__F(steps, DPPROF_FIELD_INT, 1, 100000000, 0, NULL, 0),
    DPPROF__F(warmup, DPPROF_FIELD_INT, 0, 100000000, 0, NULL, 0),
    DPPROF__F(lr, DPPROF_FIELD_REAL, 0, 1e6, 1, NULL, 0),
    DPPROF__F(optimizer, DPPROF_FIELD_ENUM, 0, 0, 0, "adam|sgd", 1),
    DPPROF__F(weight_decay, DPPROF_FIELD_REAL, 0, 1e6, 0, NULL, 0),
    DPPROF__F(dtype, DPPROF_FIELD_ENUM, 0, 0, 0, "fp32|bf16", 1),
    DPPROF__F(checkpoint, DPPROF_FIELD_ENUM, 0, 0, 0, "none|layers", 1),
    DPPROF__F(attention, DPPROF_FIELD_ENUM, 0, 0, 0, "dpprof|cudnn|sdpa|eager", 1),
    DPPROF__F(framework, DPPROF_FIELD_ENUM, 0, 0, 0, "dpprof|pytorch|opacus", 1),
    DPPROF__F(attention_workspace, DPPROF_FIELD_BYTES, 1, 9.0e18, 0, NULL, 0),
    DPPROF__F(backend, DPPROF_FIELD_ENUM, 0, 0, 0, "auto|cpu|cuda|dry", 0),
    DPPROF__F(seed, DPPROF_FIELD_SEED, 0, 0, 0, NULL, 0),
    DPPROF__F(data_path, DPPROF_FIELD_TEXT, 0, 0, 0, NULL, 0),
    DPPROF__F(rope_theta, DPPROF_FIELD_REAL, 0, 1e12, 1, NULL, 0),
    DPPROF__F(norm_eps, DPPROF_FIELD_REAL, 0, 1, 3, NULL, 0),
    DPPROF__F(init_std, DPPROF_FIELD_REAL, 0, 1e3, 1, NULL, 0),
    DPPROF__F(memory_limit, DPPROF_FIELD_BYTES, 1, 9.0e18, 0, NULL, 0),
    DPPROF__F(memory_rule, DPPROF_FIELD_TEXT, 0, 0, 0, NULL, 0),
    DPPROF__F(auto_materialise, DPPROF_FIELD_ENUM, 0, 0, 0, "never|measured|both-rules|width-rule", -1),
    DPPROF__F(auto_ghost, DPPROF_FIELD_ENUM, 0, 0, 0, DPPROF__SWITCHES, -1),
    DPPROF__F(fused_clipgrad, DPPROF_FIELD_ENUM, 0, 0, 0, DPPROF__SWITCHES, -1),
    DPPROF__F(batched_clipgrad, DPPROF_FIELD_ENUM, 0, 0, 0, DPPROF__SWITCHES, -1),
    DPPROF__F(fused_noise, DPPROF_FIELD_ENUM, 0, 0, 0, DPPROF__SWITCHES, -1),
    DPPROF__F(dp_warp_tile, DPPROF_FIELD_INT, 32, 64, 0, "32|64", 0),
    DPPROF__F(wgmma, DPPROF_FIELD_ENUM, 0, 0, 0, DPPROF__SWITCHES, -1),
    DPPROF__F(no_timeline, DPPROF_FIELD_FLAG, 0, 1, 0, NULL, 0),
    DPPROF__F(trace_ops, DPPROF_FIELD_FLAG, 0, 1, 0, NULL, 0),
    DPPROF__F(trace_steps, DPPROF_FIELD_INT, 1, 100000000, 0, NULL, 0),
    DPPROF__F(op_times, DPPROF_FIELD_FLAG, 0, 1, 0, NULL, 0),
    DPPROF__F(dram, DPPROF_FIELD_ENUM, 0, 0, 0, "off|phases|ops", 0),
    DPPROF__F(sigma, DPPROF_FIELD_REAL, 0, 1e6, 0, NULL, 0),
    DPPROF__F(max_grad_norm, DPPROF_FIELD_REAL, 0, 1e12, 1, NULL, 0),
    DPPROF__F(per_layer_clipping, DPPROF_FIELD_FLAG, 0, 1, 0, NULL, 0),
    DPPROF__F(poisson, DPPROF_FIELD_FLAG, 0, 1, 0, NULL, 0),
    DPPROF__F(dataset_size, DPPROF_FIELD_INT64, 1, INT32_MAX, 0, NULL, 0),
    DPPROF__F(delta, DPPROF_FIELD_REAL, 0, 1, 3, NULL, 0),
    DPPROF__F(accountant, DPPROF_FIELD_ENUM, 0, 0, 0, "rdp|pld|both", 0),
    DPPROF__F(lora_rank, DPPROF_FIELD_INT, 1, DPPROF__DIM_MAX, 0, NULL, 0),
    DPPROF__F(lora_alpha, DPPROF_FIELD_REAL, 0, 1e12, 1, NULL, 0),
    DPPROF__F(lora_targets, DPPROF_FIELD_TEXT, 0, 0, 0, NULL, 0),
    DPPROF__F(lora_dropout, DPPROF_FIELD_REAL, 0, 1, 2, NULL, 0),
    DPPROF__F(train_head, DPPROF_FIELD_ENUM, 0, 0, 0, DPPROF__SWITCHES, -1),
    DPPROF__F(frozen_masters, DPPROF_FIELD_ENUM, 0, 0, 0, DPPROF__SWITCHES, -1),
    DPPROF__F(ranks, DPPROF_FIELD_INT, 1, 65536, 0, NULL, 0),
    DPPROF__F(zero, DPPROF_FIELD_INT, 0, 3, 0, NULL, 0),
    DPPROF__F(secure_noise, DPPROF_FIELD_FLAG, 0, 1, 0, NULL, 0),
    DPPROF__F(target_epsilon, DPPROF_FIELD_REAL, 0, 1e6, 1, NULL, 0),
};
#undef DPPROF__F
#define DPPROF__NFIELDS ((int)(sizeof dpprof__fields / sizeof dpprof__fields[0]))

DPPROF_API const dpprof_config_field *dpprof_config_fields(int *n) {
    if (n) *n = DPPROF__NFIELDS;
    return dpprof__fields;
}

DPPROF_API const dpprof_config_field *dpprof_config_field_find(const char *name) {
    char names[2048] = "", near[64];
    size_t len = 0;
    int i;
    for (i = 0; name && i < DPPROF__NFIELDS; i++) {
        if (!strcmp(name, dpprof__fields[i].name)) return &dpprof__fields[i];
        len += (size_t)snprintf(names + len, sizeof names - len, "%s%s", i ? "|" : "", dpprof__fields[i].name);
    }
    if (name && dpprof_closest(name, names, near, sizeof near))
        dpprof__fail(DPPROF_ERR_INVALID, "dpprof_config has no field '%s' (did you mean config.%s?)", name, near);
    else dpprof__fail(DPPROF_ERR_INVALID, "dpprof_config has no field '%s'", name ? name : "(null)");
    return NULL;
}

/* the i-th name of a '|' list into buf ("" past its end) */
static const char *dpprof__nth_word(const char *words, int i, char *buf, size_t cap) {
    size_t n;
    while (words && i-- > 0) {
        words = strchr(words, '|');
        if (words) words++;
    }
    n = words ? strcspn(words, "|") : 0;
    snprintf(buf, cap, "%.*s", (int)n, words ? words : "");
    return buf;
}

DPPROF_API const char *dpprof_config_enum_name(const dpprof_config_field *f, int code, char *buf, size_t cap) {
    if (!buf || !cap) return "";
    buf[0] = 0;
    if (f && f->type == DPPROF_FIELD_ENUM && code >= f->first) dpprof__nth_word(f->values, code - f->first, buf, cap);
    return buf;
}

/* the range of a number field, as a message gives it: "[1, 16777216]", "(0, 1)" */
static const char *dpprof__range_text(const dpprof_config_field *f, char *buf, size_t cap) {
    if (f->type == DPPROF_FIELD_INT || f->type == DPPROF_FIELD_INT64) snprintf(buf, cap, "[%lld, %lld]", (long long)f->lo, (long long)f->hi);
    else snprintf(buf, cap, "%s%g, %g%s", f->open & 1 ? "(" : "[", f->lo, f->hi, f->open & 2 ? ")" : "]");
    return buf;
}

/* a size in bytes: a number with K, M, G, T or KiB, MiB, GiB, TiB (powers of 1024), KB, MB, GB, TB (of 1000), B alone */
static int dpprof__parse_bytes(const char *s, int64_t *out) {
    /* clang-format off */
    static const struct { const char *sfx; double mul; } sfx[] = {
        {"", 1}, {"B", 1}, {"K", 1024.0}, {"k", 1024.0}, {"KiB", 1024.0}, {"KB", 1e3}, {"kB", 1e3},
        {"M", 1048576.0}, {"MiB", 1048576.0}, {"MB", 1e6}, {"G", 1073741824.0}, {"GiB", 1073741824.0}, {"GB", 1e9},
        {"T", 1099511627776.0}, {"TiB", 1099511627776.0}, {"TB", 1e12},
    };
    /* clang-format on */
    char *end;
    double v, mul = -1;
    size_t k;
    errno = 0;
    v = strtod(s, &end);
    for (k = 0; end != s && k < sizeof sfx / sizeof sfx[0]; k++)
        if (!strcmp(end, sfx[k].sfx)) mul = sfx[k].mul;
    if (!*s || isspace((unsigned char)*s) || *s == '+' || mul < 0 || errno == ERANGE || !(v > 0) || v * mul > 9.0e18 || v * mul < 1) return -1;
    *out = (int64_t)(v * mul);
    return 0;
}

/* is the value a field holds one it may hold: 0 always (the default), else in its range, set or enum */
static int dpprof__field_check(const dpprof_config *c, const dpprof_config_field *f) {
    const char *p = (const char *)c + f->offset;
    char range[96], list[256], name[64];
    switch (f->type) {
    case DPPROF_FIELD_INT:
    case DPPROF_FIELD_FLAG: {
        int v;
        memcpy(&v, p, sizeof v);
        if (v == 0 || (v >= f->lo && v <= f->hi && (!f->values || (snprintf(name, sizeof name, "|%d|", v), snprintf(list, sizeof list, "|%s|", f->values), strstr(list, name)))))
            return DPPROF_OK;
        if (f->type == DPPROF_FIELD_FLAG) return dpprof__fail(DPPROF_ERR_INVALID, "config.%s = %d: expected 0 or 1", f->name, v);
        if (f->values) return dpprof__fail(DPPROF_ERR_INVALID, "config.%s = %d: expected %s (0: the default)", f->name, v, dpprof_words(f->values, list, sizeof list));
        return dpprof__fail(DPPROF_ERR_INVALID, "config.%s = %d: expected an integer in %s (0: the default)", f->name, v, dpprof__range_text(f, range, sizeof range));
    }
    case DPPROF_FIELD_INT64:
    case DPPROF_FIELD_BYTES: {
        int64_t v;
        memcpy(&v, p, sizeof v);
        if (v == 0 || ((double)v >= f->lo && (double)v <= f->hi)) return DPPROF_OK;
        return dpprof__fail(DPPROF_ERR_INVALID, "config.%s = %lld: expected %s in [%lld, %lld] (0: the default)", f->name, (long long)v,
                            f->type == DPPROF_FIELD_BYTES ? "bytes" : "an integer", (long long)f->lo, (long long)f->hi);
    }
    case DPPROF_FIELD_REAL: {
        double v;
        memcpy(&v, p, sizeof v);
        if (v == 0 || (v >= f->lo && v <= f->hi && !((f->open & 1) && v == f->lo) && !((f->open & 2) && v == f->hi))) return DPPROF_OK;
        return dpprof__fail(DPPROF_ERR_INVALID, "config.%s = %g: expected a number in %s (0: the default)", f->name, v, dpprof__range_text(f, range, sizeof range));
    }
    case DPPROF_FIELD_ENUM: {
        int v, n = 1;
        const char *w;
        memcpy(&v, p, sizeof v);
        for (w = f->values; *w; w++) n += *w == '|';
        if (v == 0 || (v >= f->first && v < f->first + n)) return DPPROF_OK;
        return dpprof__fail(DPPROF_ERR_INVALID, "config.%s = %d: expected one of %s (codes %d to %d)", f->name, v, dpprof_words(f->values, list, sizeof list), f->first, f->first + n - 1);
    }
    default: return DPPROF_OK;
    }
}

DPPROF_API int dpprof_config_set(dpprof_config *c, const char *name, const char *value) {
    const dpprof_config_field *f = dpprof_config_field_find(name);
    char *p, *end, range[96], list[256], near[64];
    if (!f) return DPPROF_ERR_INVALID;
    if (!c || !value) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_config_set: NULL %s", c ? "value" : "config");
    p = (char *)c + f->offset;
    errno = 0;
    switch (f->type) {
    case DPPROF_FIELD_INT:
    case DPPROF_FIELD_INT64: {
        long long v = strtoll(value, &end, 10);
        /* strtoll skips leading white space and takes a '+': the value is the digits alone (or '-' and digits) */
        if (!*value || isspace((unsigned char)*value) || *value == '+' || *end || errno == ERANGE || v < f->lo || v > f->hi ||
            (f->values && (snprintf(range, sizeof range, "|%s|", f->values), snprintf(list, sizeof list, "|%s|", value), !strstr(range, list)))) {
            if (f->values) return dpprof__fail(DPPROF_ERR_INVALID, "config.%s '%s': expected %s", f->name, value, dpprof_words(f->values, list, sizeof list));
            return dpprof__fail(DPPROF_ERR_INVALID, "config.%s '%s': expected an integer in %s", f->name, value, dpprof__range_text(f, range, sizeof range));
        }
        if (f->type == DPPROF_FIELD_INT) {
            int iv = (int)v;
            memcpy(p, &iv, sizeof iv);
        } else {
            int64_t lv = (int64_t)v;
            memcpy(p, &lv, sizeof lv);
        }
        return DPPROF_OK;
    }
    case DPPROF_FIELD_SEED: {
        unsigned long long v = strtoull(value, &end, 10);
        uint64_t uv;
        if (*value < '0' || *value > '9' || *end || errno == ERANGE) /* strtoull takes " -1" as 2^64 - 1 */
            return dpprof__fail(DPPROF_ERR_INVALID, "config.%s '%s': expected an integer in [0, 2^64)", f->name, value);
        uv = (uint64_t)v;
        memcpy(p, &uv, sizeof uv);
        return DPPROF_OK;
    }
    case DPPROF_FIELD_REAL: {
        double v = strtod(value, &end);
        if (!*value || isspace((unsigned char)*value) || *value == '+' || *end || errno == ERANGE || v != v || v < f->lo || v > f->hi || ((f->open & 1) && v == f->lo) ||
            ((f->open & 2) && v == f->hi))
            return dpprof__fail(DPPROF_ERR_INVALID, "config.%s '%s': expected a number in %s", f->name, value, dpprof__range_text(f, range, sizeof range));
        memcpy(p, &v, sizeof v);
        return DPPROF_OK;
    }
    case DPPROF_FIELD_BYTES: {
        int64_t v;
        if (dpprof__parse_bytes(value, &v))
            return dpprof__fail(DPPROF_ERR_INVALID, "config.%s '%s': expected a positive size in bytes, optionally with K, M, G, T or KiB, MiB, GiB, TiB\n"
                                                    "(powers of 1024) or KB, MB, GB, TB (powers of 1000)",
                                f->name, value);
        memcpy(p, &v, sizeof v);
        return DPPROF_OK;
    }
    case DPPROF_FIELD_TEXT: memcpy(p, &value, sizeof value); return DPPROF_OK;
    case DPPROF_FIELD_FLAG: {
        int v = !strcmp(value, "1") || !strcmp(value, "true") ? 1 : (!strcmp(value, "0") || !strcmp(value, "false") ? 0 : -1);
        if (v < 0) return dpprof__fail(DPPROF_ERR_INVALID, "config.%s '%s': expected 0 or 1", f->name, value);
        memcpy(p, &v, sizeof v);
        return DPPROF_OK;
    }
    case DPPROF_FIELD_ENUM: {
        const char *w = f->values;
        int k = 0;
        while (*w) {
            size_t n = strcspn(w, "|");
            if (strlen(value) == n && !strncmp(value, w, n)) {
                int code = f->first + k;
                memcpy(p, &code, sizeof code);
                return DPPROF_OK;
            }
            w += n + (w[n] == '|');
            k++;
        }
        if (dpprof_closest(value, f->values, near, sizeof near))
            return dpprof__fail(DPPROF_ERR_INVALID, "config.%s '%s': expected %s (did you mean %s?)", f->name, value, dpprof_words(f->values, list, sizeof list), near);
        return dpprof__fail(DPPROF_ERR_INVALID, "config.%s '%s': expected %s", f->name, value, dpprof_words(f->values, list, sizeof list));
    }
    }
    return DPPROF_ERR_INVALID;
}

/* --target-epsilon: the noise that spends exactly the target over every step the run takes (warmup + steps), under
   the accountant asked (pld, or rdp) */
static int dpprof__sigma_for_target(dpprof_config *c) {
    const double q = (double)c->batch / (double)c->dataset_size;
    const long long steps = (long long)c->warmup + c->steps;
    double sigma = 0;
    if (c->algo == DPPROF_ALGO_VANILLA || !c->dataset_size || c->sigma > 0)
        return dpprof__fail(DPPROF_ERR_INVALID, "config.target_epsilon needs a DP config.algo and config.dataset_size, and replaces config.sigma");
    if (!c->poisson) /* the accountant describes poisson sampling: a fixed order would spend more */
        return dpprof__fail(DPPROF_ERR_INVALID, "config.target_epsilon chooses sigma for poisson-subsampled batches: set config.poisson (batches in a fixed order have no such guarantee)");
    if (c->accountant == DPPROF_ACCOUNTANT_BOTH) return dpprof__fail(DPPROF_ERR_INVALID, "config.target_epsilon takes one accountant: config.accountant = rdp or pld");
    if ((c->accountant == DPPROF_ACCOUNTANT_PLD ? dpprof_pld_sigma_for_epsilon(q, steps, c->delta, c->target_epsilon, 0, &sigma)
                                                : dpprof_rdp_sigma_for_epsilon(q, steps, c->delta, c->target_epsilon, &sigma)) != 0)
        return dpprof__fail(DPPROF_ERR_INVALID, "config.target_epsilon = %g: no noise multiplier reaches it at delta %g over %lld steps", c->target_epsilon, c->delta, steps);
    c->sigma = sigma;
    c->target_epsilon = 0;
    return DPPROF_OK;
}

DPPROF_API int dpprof_config_resolve(const dpprof_config *in, dpprof_config *out, dpprof_shape *sh) {
    dpprof_config c;
    dpprof_shape s;
    int i;
    if (!in || !out) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_config_resolve: NULL config");
    c = *in;
    /* every field against its description: negative sizes are errors, not defaults (only 0 means the default) */
    for (i = 0; i < DPPROF__NFIELDS; i++) DPPROF__TRY(dpprof__field_check(&c, &dpprof__fields[i]));
    if (!c.preset) c.preset = "tiny";
    DPPROF__TRY(dpprof_preset_shape(c.preset, &s));
    c.preset = dpprof_preset_canonical(c.preset); /* an alias resolves to the preset's own name */
    if (c.vocab) s.V = c.vocab;
    if (c.hidden) s.C = c.hidden;
    if (c.layers) s.L = c.layers;
    if (c.heads) s.NH = c.heads;
    if (c.kv_heads) s.NKV = c.kv_heads;
    else if (c.heads) s.NKV = c.heads; /* heads given alone: plain multi-head attention */
    if (c.ffn) s.F = c.ffn;
    if (c.rope_theta > 0) s.rope_theta = c.rope_theta;
    if (c.norm_eps > 0) s.norm_eps = c.norm_eps;
    if (!c.head_dim && s.C % s.NH) return dpprof__fail(DPPROF_ERR_INVALID, "heads = %d does not divide hidden = %d", s.NH, s.C);
    if (s.NH % s.NKV) return dpprof__fail(DPPROF_ERR_INVALID, "kv-heads = %d does not divide heads = %d", s.NKV, s.NH);
    s.HS = c.head_dim ? c.head_dim : s.C / s.NH;
    if (s.HS % 2) return dpprof__fail(DPPROF_ERR_INVALID, "head size hidden/heads = %d must be even (rotary embedding rotates pairs)", s.HS);
    if (s.HS > 256) return dpprof__fail(DPPROF_ERR_INVALID, "head size hidden/heads = %d exceeds 256", s.HS);
    if (!c.seq) c.seq = 64;
    if (!c.task) c.task = DPPROF_TASK_LM;
    if (c.task == DPPROF_TASK_CLS) {
        if (!c.classes) c.classes = 2;
        s.K = c.classes;
    } else {
        if (c.classes) return dpprof__fail(DPPROF_ERR_INVALID, "config.classes = %d only applies to config.task = cls", c.classes);
        s.K = 0;
    }
    if (c.tie_embeddings != DPPROF_SWITCH_AUTO) s.tied = c.tie_embeddings == DPPROF_SWITCH_ON;
    if (c.task == DPPROF_TASK_CLS) s.tied = 0; /* the classifier's score head is not the embedding */
    if (!c.algo) c.algo = DPPROF_ALGO_VANILLA;
    if (!c.batch) c.batch = 8;
    if (!c.ranks) c.ranks = 1;
    if (!c.dtype) c.dtype = DPPROF_DTYPE_FP32;
    if (c.ranks > 1) {
#ifndef DPPROF_MPI
        if (c.backend != DPPROF_BACKEND_DRY)
            return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.ranks = %d on the %s backend: this build has no MPI (build with mpicc, or -DDPPROF_MPI and Open MPI's flags, and launch with mpirun -np %d); config.backend = dry reports rank 0's memory",
                                c.ranks, dpprof_backend_name(c.backend), c.ranks);
#endif
        if (c.batch % c.ranks) return dpprof__fail(DPPROF_ERR_INVALID, "config.ranks = %d does not divide config.batch = %d: each rank takes batch / ranks samples", c.ranks, c.batch);
        if (!c.physical_batch) c.physical_batch = c.batch / c.ranks;
        if (c.physical_batch > c.batch / c.ranks)
            return dpprof__fail(DPPROF_ERR_INVALID, "config.physical_batch = %d is larger than a rank's batch / ranks = %d / %d = %d", c.physical_batch, c.batch, c.ranks, c.batch / c.ranks);
    }
    if (!c.physical_batch) c.physical_batch = c.batch;
    if (c.physical_batch > c.batch) return dpprof__fail(DPPROF_ERR_INVALID, "config.physical_batch = %d is larger than config.batch = %d", c.physical_batch, c.batch);
    /* the engine counts the rows of a physical batch (physical-batch x seq) in an int */
    if ((long long)c.physical_batch * c.seq > INT32_MAX)
        return dpprof__fail(DPPROF_ERR_OVERFLOW, "config.seq = %d times config.physical_batch = %d is %lld tokens: it overflows the size arithmetic (at most %d per physical batch)", c.seq, c.physical_batch, (long long)c.physical_batch * c.seq, INT32_MAX);
    if (!c.steps) c.steps = 3;
    if (!c.optimizer) c.optimizer = DPPROF_OPT_ADAM;
    if (c.lr == 0) c.lr = c.optimizer == DPPROF_OPT_ADAM ? 1e-3 : 1e-2;
    if (!c.checkpoint) c.checkpoint = DPPROF_CHECKPOINT_NONE;
    if (!c.framework) c.framework = DPPROF_FRAMEWORK_DPPROF;
    if (!c.attention) c.attention = c.framework >= DPPROF_FRAMEWORK_PYTORCH ? DPPROF_ATTENTION_SDPA : DPPROF_ATTENTION_DPPROF;
    if (c.framework == DPPROF_FRAMEWORK_DPPROF && c.attention >= DPPROF_ATTENTION_SDPA)
        return dpprof__fail(DPPROF_ERR_INVALID, "config.attention = %s is Hugging Face's attention in PyTorch: it takes config.framework = pytorch (dpprof's engine runs dpprof or cudnn)", dpprof_attention_name(c.attention));
    if (c.framework >= DPPROF_FRAMEWORK_PYTORCH) { /* what of a PyTorch (or Opacus) run the walk models (docs/frameworks.md) */
        const char *no = NULL, *fw = dpprof_framework_name(c.framework);
        const int op = c.framework == DPPROF_FRAMEWORK_OPACUS;
        if (c.backend == DPPROF_BACKEND_AUTO) c.backend = DPPROF_BACKEND_DRY;
        if (c.backend != DPPROF_BACKEND_DRY)
            return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.framework = %s accounts PyTorch's memory on the dry backend: it takes config.backend = dry (this run is %s)", fw, dpprof_backend_name(c.backend));
        if (c.attention < DPPROF_ATTENTION_SDPA)
            return dpprof__fail(DPPROF_ERR_INVALID, "config.attention = %s is dpprof's engine: config.framework = %s takes sdpa or eager", dpprof_attention_name(c.attention), fw);
        if (!op && c.algo && c.algo != DPPROF_ALGO_VANILLA)
            return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.algo = %s: config.framework = pytorch is PyTorch's non-private loop (algo vanilla; Opacus's DP-SGD is config.framework = opacus)", dpprof_algo_name(c.algo));
        if (op && c.algo != DPPROF_ALGO_PERSAMPLE && c.algo != DPPROF_ALGO_GHOST)
            return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.algo = %s: config.framework = opacus is Opacus's grad_sample_mode hooks (algo persample) or ghost (algo ghost)", dpprof_algo_name(c.algo));
        if (op && s.tied && c.algo == DPPROF_ALGO_GHOST && !c.lora_rank)
            return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.framework = opacus, config.algo = ghost with a tied head that trains: Opacus refuses it (\"Parameter tying is not supported with Ghost Clipping\"); "
                                                        "under LoRA the tied matrix is frozen, and it runs");
        if (c.task == DPPROF_TASK_CLS) no = "config.task = cls (LlamaForSequenceClassification)";
        else if (op && c.train_head == DPPROF_SWITCH_OFF) no = "config.train_head = off under Opacus";
        else if (c.dtype == DPPROF_DTYPE_BF16 && c.attention == DPPROF_ATTENTION_EAGER) no = "config.dtype = bf16 with config.attention = eager";
        else if (op && c.checkpoint == DPPROF_CHECKPOINT_LAYERS) no = "config.checkpoint = layers under Opacus";
        else if (c.ranks > 1) no = "config.ranks > 1";
        else if (c.optimizer == DPPROF_OPT_SGD) no = "config.optimizer = sgd";
        else if (c.lora_rank && c.train_head == DPPROF_SWITCH_ON && s.tied) no = "config.train_head = on with a tied head under LoRA (PEFT's modules_to_save copies the head, untying it)";
        if (no) return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.framework = %s: %s is not modelled yet (docs/frameworks.md says what is)", fw, no);
    }
    if (c.attention == DPPROF_ATTENTION_CUDNN && c.dtype != DPPROF_DTYPE_BF16) return dpprof__fail(DPPROF_ERR_INVALID, "config.attention = cudnn takes config.dtype = bf16 (cuDNN's fused attention has no fp32 kernels)");
    if (c.attention_workspace > 0 && c.attention != DPPROF_ATTENTION_CUDNN)
        return dpprof__fail(DPPROF_ERR_INVALID, "config.attention_workspace = %lld: bytes for config.attention = cudnn only", (long long)c.attention_workspace);
    if (c.init_std == 0) c.init_std = 0.02;
    if (c.data_path && s.V < 256) return dpprof__fail(DPPROF_ERR_INVALID, "config.data_path uses byte-level tokens and needs vocab >= 256, got vocab = %d", s.V);
    if (c.op_times && c.warmup < 1) return dpprof__fail(DPPROF_ERR_INVALID, "config.op_times times every op in the warm-up steps, outside the timing: it needs config.warmup = 1 or more");
    if (c.dram && c.warmup < 1) return dpprof__fail(DPPROF_ERR_INVALID, "config.dram counts DRAM traffic in warm-up step 0, outside the timing: it needs config.warmup = 1 or more");
    if (c.dram && c.backend != DPPROF_BACKEND_CUDA && c.backend != DPPROF_BACKEND_AUTO)
        return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.dram = %s reads the GPU's DRAM counters: it needs config.backend = cuda (this run is %s)", c.dram == DPPROF_DRAM_OPS ? "ops" : "phases", dpprof_backend_name(c.backend));
    if (c.wgmma == DPPROF_SWITCH_ON && (c.backend == DPPROF_BACKEND_CPU || c.dtype != DPPROF_DTYPE_BF16))
        return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.wgmma = on selects a kernel of the bf16 gram norm on the GPU: it needs config.backend = cuda (or dry) and config.dtype = bf16 (this run is %s, %s)",
                            dpprof_backend_name(c.backend), c.dtype == DPPROF_DTYPE_BF16 ? "bf16" : "fp32");
    /* DP-SGD options */
    if (c.algo == DPPROF_ALGO_VANILLA) {
        /* non-private training: a noise or clipping option would be silently meaningless */
        if (c.sigma > 0 || c.max_grad_norm > 0 || c.per_layer_clipping || c.delta > 0 || c.target_epsilon > 0 || c.secure_noise)
            return dpprof__fail(DPPROF_ERR_INVALID, "config.sigma, config.max_grad_norm, config.per_layer_clipping, config.delta, config.target_epsilon and config.secure_noise apply to the DP "
                                                    "algorithms, not to config.algo = vanilla");
    } else {
        if (c.max_grad_norm == 0) c.max_grad_norm = 1.0;
        if (c.delta == 0) c.delta = 1e-5;
    }
    if (c.poisson && !c.dataset_size) return dpprof__fail(DPPROF_ERR_INVALID, "config.poisson samples from a dataset: give config.dataset_size");
    if (c.dataset_size && c.dataset_size < c.batch) return dpprof__fail(DPPROF_ERR_INVALID, "config.dataset_size = %lld is smaller than config.batch = %d", c.dataset_size, c.batch);
    if (!c.lora_rank && (c.lora_alpha > 0 || c.lora_targets || c.lora_dropout > 0))
        return dpprof__fail(DPPROF_ERR_INVALID, "config.lora_alpha, config.lora_targets and config.lora_dropout need config.lora_rank");
    if (c.lora_dropout > 0 && c.framework < DPPROF_FRAMEWORK_PYTORCH && !c.unmodelled)
        c.unmodelled = "lora_dropout: dpprof's adapters run without dropout (the dropped input PEFT keeps for each adapter's backward is not counted)";
    if (c.lora_rank) {
        /* (IC, OC) of each projection: an adapter of rank >= its narrower side is a full matrix in disguise */
        const int io[DPPROF__P_PER_LAYER][2] = {{0, 0}, {s.C, s.NH * s.HS}, {s.C, s.NKV * s.HS}, {s.C, s.NKV * s.HS}, {s.NH * s.HS, s.C}, {0, 0}, {s.C, s.F}, {s.C, s.F}, {s.F, s.C}};
        int mask = dpprof__lora_mask(c.lora_targets ? c.lora_targets : "q,v"), min_width = DPPROF__DIM_MAX, j;
        if (mask < 0) return DPPROF_ERR_INVALID;
        if (!c.lora_targets) c.lora_targets = "q,v";
        if (c.lora_alpha == 0) c.lora_alpha = c.lora_rank; /* scale alpha / r = 1 */
        for (j = 0; j < DPPROF__P_PER_LAYER; j++)
            if (mask >> j & 1) {
                if (io[j][0] < min_width) min_width = io[j][0];
                if (io[j][1] < min_width) min_width = io[j][1];
            }
        if (c.lora_rank >= min_width) return dpprof__fail(DPPROF_ERR_INVALID, "config.lora_rank = %d must be smaller than the narrowest adapted width (%d)", c.lora_rank, min_width);
    }
    if (c.rates) { /* given rates: auto plans from them; each a rate (>= 0, finite; 0: not given) */
        const dpprof_rates *r = c.rates;
        const double v[] = {r->gram, r->psg, r->gram_cublas, r->psg_cublas, r->ghost, r->clipgrad[0], r->clipgrad[1], r->clipgrad[2]};
        size_t k;
        if (c.algo != DPPROF_ALGO_AUTO) return dpprof__fail(DPPROF_ERR_INVALID, "config.rates are what config.algo = auto plans from: config.algo = %s has no use for them", dpprof_algo_name(c.algo));
        for (k = 0; k < sizeof v / sizeof v[0]; k++)
            if (!(v[k] >= 0 && v[k] < INFINITY)) return dpprof__fail(DPPROF_ERR_INVALID, "config.rates: %g is not a rate (flop/s >= 0, 0 for none)", v[k]);
        for (k = 0; k < 2; k++)
            if (!(r->noise_ms[k] >= 0 && r->noise_ms[k] < INFINITY) && !isnan(r->noise_ms[k])) return dpprof__fail(DPPROF_ERR_INVALID, "config.rates.noise_ms[%d] = %g is not a time (ms >= 0, NAN for none)", (int)k, r->noise_ms[k]);
    }
    if (c.train_head == DPPROF_SWITCH_OFF && c.task == DPPROF_TASK_CLS)
        return dpprof__fail(DPPROF_ERR_INVALID, "config.train_head = off with config.task = cls: the classifier's score head is new, it must train (PEFT trains it too)");
    if (c.frozen_masters == DPPROF_SWITCH_ON && c.dtype != DPPROF_DTYPE_BF16)
        return dpprof__fail(DPPROF_ERR_INVALID, "config.frozen_masters = on keeps an fp32 master beside the bf16 copy of a frozen weight: it needs config.dtype = bf16 (fp32 weights are their own masters)");
    if (c.target_epsilon > 0) DPPROF__TRY(dpprof__sigma_for_target(&c));
    *out = c;
    if (sh) *sh = s;
    return DPPROF_OK;
}

/* ---- 5.2 the session, its tensors and the allocator --------------------------------------------------------
   dpprof_session holds everything a run owns: the model, the data, the DP state, the GPU state, the
   observations and the shards. Every byte of it is allocated by dpprof__talloc, which charges a category and a
   module to the profiler before the allocation (so an out-of-memory is the accountant's, by the byte, on every
   backend); the dry backend allocates nothing and keeps the same books. DPPROF__OP runs one op on the
   session's backend: its _ref on cpu, its _gpu on cuda, nothing on dry, and records its _cost. */

/* what a cpu session with --dtype bf16 answers (DPPROF_ERR_UNSUPPORTED) */
/* config.train_head resolved: whether the head trains (AUTO: as PEFT, frozen under LoRA unless it is a cls head) */
static int dpprof__head_trains(const dpprof_config *c) {
    if (c->train_head != DPPROF_SWITCH_AUTO) return c->train_head == DPPROF_SWITCH_ON;
    return !c->lora_rank || c->task == DPPROF_TASK_CLS;
}

#define DPPROF__BF16_CPU_MSG "config.dtype = bf16 runs on config.backend = cuda (and config.backend = dry reports its memory); the cpu backend computes in fp32 only"

/* counter-based streams: init, data and (later) noise never share philox counters */
#define DPPROF__STREAM_INIT (UINT64_C(1) << 40)
#define DPPROF__STREAM_DATA (UINT64_C(2) << 40)

typedef struct dpprof__layer_acts {
    dpprof_tensor ln1, rstd1;              /* (n,T,C), (n,T) */
    dpprof_tensor q, k, v;                 /* (n,T,NH,HS), (n,T,NKV,HS) x2, q and k after rope */
    dpprof_tensor att, lse;                /* (n,T,NH,HS), (n,NH,T) */
    dpprof_tensor xa;                      /* (n,T,C) residual after attention */
    dpprof_tensor ln2, rstd2;              /* (n,T,C), (n,T) */
    dpprof_tensor gate, up, h;             /* (n,T,F) x3 */
    dpprof_tensor xm;                      /* (n,T,C) residual after the mlp: the next layer's input */
    dpprof_tensor lu[DPPROF__P_PER_LAYER]; /* (n,T,r) lora: (alpha/r) x A^T per adapted projection, lora_B's input */
} dpprof__layer_acts;

typedef struct dpprof__acts {
    dpprof_tensor tokens, targets; /* (n,T) ints; targets (n,T) for lm, (n) for cls */
    dpprof_tensor x0;              /* (n,T,C) embedding output */
    dpprof__layer_acts *lay;       /* (L) */
    dpprof_tensor lnf, rstdf;      /* (n,T,C), (n,T) */
    dpprof_tensor last;            /* (n,C) cls only: the last token's features */
    dpprof_tensor logits;          /* (n,T,V) lm, (n,K) cls; dlogits in place in backward */
    dpprof_tensor losses;          /* (n) per-sample losses */
} dpprof__acts;

/* the model: its parameters, activations, lora adapters, workspace */
typedef struct dpprof__model {
    dpprof_param *params;
    int n_params, p_emb, p_normf, p_head;
    dpprof__acts a;
    int n_trainable;
    int *lora;             /* (L * 9) parameter index of lora_A of a projection (lora_B follows), or -1 */
    double lora_scale;     /* alpha / r */
    dpprof_tensor ws;      /* the workspace: cuBLAS's and the kernels' scratch (every backend tracks it) */
    dpprof_tensor attn_ws; /* --attention cudnn: cuDNN's workspace (cfg.attention_workspace bytes, every backend) */
} dpprof__model;

/* --data: the text and, for cls, its lines */
typedef struct dpprof__data {
    unsigned char *text; /* --data contents */
    size_t text_len;
    size_t *line_off; /* cls data: (n_lines) offsets, lengths, labels */
    int *line_len, *line_label, n_lines;
} dpprof__data;

/* the steps run, their losses and times */
typedef struct dpprof__run {
    int steps_done, adam_t;
    double *step_loss, *step_ms; /* (cap_steps) */
    int *step_n;                 /* (cap_steps) each step's logical batch (a Poisson draw's size) */
    size_t cap_steps;
} dpprof__run;

/* dp-sgd: the algorithm's shape and the state of the physical batch in flight */
typedef struct dpprof__dps {
    int dp;                 /* the pass in flight clips (dpprof_session_grad and the loss alone run without) */
    int bw_mode, bw_retain; /* DPPROF__MODE_*; keep activations for a second pass */
    int bw_n, bw_T;         /* the physical batch in the backward */
    dpprof_tensor norm2;    /* (n_params, n) doubles: per-sample squared norms per tensor */
    dpprof_tensor clip;     /* (n) flat or (n_params, n) per-layer clip factors, doubles */
    dpprof_tensor *psg;     /* (n_params) materialised per-sample gradients */
    dpprof_tensor *kept;    /* (cap_kept) tensors kept for the clip phase: stable addresses */
    const dpprof_tensor **kept_from;
    int n_kept, cap_kept;
    struct dpprof__cache_ent *cache; /* (cap_kept) layers waiting for their clipped gradient */
    int n_cache;
    int *batch_ids;                 /* (max batch) sample ids of the logical step in flight: this rank's */
    int batch_n;                    /* their count */
    int draw_n;                     /* the logical step's samples over every rank: B, or the size of the Poisson draw */
    int *rank_n;                    /* (ranks) poisson over ranks: each rank's share of the step's draw */
    int passes;                     /* the step's physical batches on this rank (zero >= 2 with poisson: the most any rank runs) */
    int idle;                       /* the physical batch in flight is an idle one: one sample that weighs zero (clip factors 0,
                       vanilla's dloss 0), run where the rank's share is done but another rank's is not, so that
                       it joins the pass's collectives (zero >= 2) */
    double *last_norms, *last_clip; /* (max batch + 1) per-sample norms and clip factors of the last step (an idle
                                       pass writes past this rank's samples) */
    dpprof_noise_key noise_key;     /* the noise's and poisson's key: cfg.seed (philox), or secure_noise's 256-bit secret (chacha20) */
    uint64_t noise_stream_bits;     /* or-ed into the noise's stream: DPPROF_NOISE_SECURE under secure_noise */
    dpprof_tensor xg;               /* ghost's gram of a layer's input (n, T, T), kept for the next layers that read the
                                       same input (q, k, v; gate, up) while xg_keep: one gram for the group */
    const dpprof_tensor *xg_src;    /* the input xg is the gram of (the tensor, not its data: dry has none) */
    int xg_keep;                    /* the backward: the next linear layer reads the same input */
    int fg_ok;                      /* the backward: this linear layer's output gradient lives until the group's last
                                       (a base q, k or gate; an adapter's is freed at once) */
    int fg_n;                       /* flash's gram norms waiting for the group's last layer (dpprof__flash_group) */
    int fg_p[3], fg_oc[3];          /* their parameters and widths */
    dpprof_tensor *fg_dy[3];        /* their output gradients */
    const dpprof_tensor *fg_x;      /* the input they read */
    dpprof_tensor rown;             /* (2 n_params, n) the squared norms of each batched layer's dy and x per sample */
    double *h_rown;                 /* their host copy (cuda) */
    double eps_ratio_max;           /* the largest ||eps_i|| / ||g_i|| of the run's samples (batched layers); NAN none */
} dpprof__dps;

static const char *dpprof__cg_name(dpprof_clipgrad k) { return k == DPPROF_CLIPGRAD_BATCHED ? "batched" : k == DPPROF_CLIPGRAD_FUSED ? "fused"
                                                                                                                                     : "cublas"; }
static const char *dpprof__norms_name(dpprof_norms_on w) { return w == DPPROF_NORMS_CUBLAS ? "cublas" : "kernels"; }

/* cuda: launch counts, host staging, the driver's figure, the device, counters */
typedef struct dpprof__gpu {
    long long launches;                            /* cuda: the kernels dpprof queued in the measured steps (not cuBLAS's) */
    long long wgmma_launches;                      /* cuda: of those, the ones on Hopper's warpgroup mma (--wgmma) */
    int *h_tok, *h_tgt;                            /* (physical batch * T) tokens and targets before the upload */
    float *h_loss;                                 /* (physical batch) per-sample losses after the forward */
    double *h_norm2, *h_clip;                      /* (n_params * physical batch) squared norms down, clip factors up: host copies of
                                       what the host reads or writes between kernels */
    int64_t drv_base, drv_peak;                    /* driver's used bytes before the session, and its peak above that */
    int64_t drv_pool_base;                         /* the pool's reserved bytes at drv_base */
    int64_t drv_live, drv_pool_used, drv_pool_res; /* at the driver's peak: the accountant's live bytes, the pool's used and reserved */
    int64_t dry_peak;                              /* the dry backend's peak of this configuration (after the last step), -1 unknown */
    dpprof_device_info dev;                        /* cuda: the device */
    int attn_deterministic;                        /* --attention cudnn: cuDNN's backward is its deterministic algorithm */
    int counting;                                  /* cfg.dram: CUPTI ranges are open in this step: 1 one per phase record, 2 one per
                                       op record (3: an op's range failed, the rest of the step uncounted) */
    size_t count_op0;                              /* counting 2: the step's first op record */
    char dram_note[256];                           /* why there are no counter values, when there are none */
} dpprof__gpu;

/* the op timing and phase events of traces and --op-times */
typedef struct dpprof__obs {
    int mark_ops;               /* ops are timed now: trace_ops, or op_times in a warm-up step */
    struct dpprof__op_rec *ops; /* trace_ops: every op's name, phase record and time */
    size_t n_ops, cap_ops;
    int *ph_ev; /* (cap_ph_ev) event id recorded at the start of each phase record, or -1 */
    size_t cap_ph_ev;
    double *ph_drv; /* (cap_ph_drv) cuda: the driver's used bytes, less those before the session, as
                                       each phase record ended (its snapshot's reserved_mb); nan: not read */
    size_t cap_ph_drv;
    int depth;                                /* ops open now: an op begun inside another is part of it */
    long long work_steps;                     /* the device work of the steps whose ops were timed (dpprof_cuda_work_count) */
    double ms_steps;                          /* their time */
    int n_steps;                              /* their count */
    dpprof_op_cost tally[DPPROF_OP_COST_MAX]; /* every backend: each op's analytic cost in the steps, by name (dpprof_session_op_costs) */
    int n_tally, tally_depth;                 /* names in tally; ops open now (one begun inside another is part of it) */
} dpprof__obs;

/* --ranks, --zero (dry): rank 0 of `n` under sharded data parallelism. every tensor is sharded on its own
   (flattened and padded to n equal parts, as per-parameter sharding does): a rank holds ceil(n_t / n) elements
   of tensor t, and a collective on tensor t moves (n - 1) ceil(n_t / n) elements per rank (reduce-scatter,
   all-gather; twice that for an all-reduce). docs/model.md, "Sharded data parallelism" */
enum {
    DPPROF__AR_BYTES,
    DPPROF__RS_BYTES,
    DPPROF__AG_BYTES
};
typedef struct dpprof__dist {
    int n, zero;                    /* ranks; the stage in effect: cfg.zero where n > 1, else 0 (a no-op) */
    int64_t shard_train;            /* sum of ceil(n_t / n) over the trainable tensors: a gradient or moment shard */
    int64_t shard_params;           /* zero 3: the same over every tensor (the parameter shards) */
    dpprof_tensor gpad, wpad;       /* zero 1, 2: the padding that makes the flat gradients and the trainable
                                       parameters n equal shards (reduce-scatter and all-gather in place) */
    dpprof_tensor gshard, m, v;     /* zero >= 2: the gradient shard; zero >= 1: the adam moment shards */
    dpprof_tensor wshard, lshard;   /* zero 3: the shards of the model_parameters and of the lora tensors (fp32: the
                                       weights, or bf16's masters; none for a tensor stored in bf16 alone) */
    dpprof_tensor wlshard, llshard; /* zero 3, bf16: the shards of the working copies (dpprof_param.wl), the same two
                                       categories: what the gathers move */
    dpprof_tensor *gath;            /* zero 3: (n_params) the gathered weights of the units in use */
    int64_t gath_live, gath_max;    /* zero 3: gathered bytes live now, and the most at once */
    int64_t bytes[3];               /* the last step's collective bytes per rank: all-reduce, reduce-scatter, all-gather */
    int64_t calls[3];               /* and the collectives called, of each kind */
    /* DPPROF_MPI, ranks > 1, cpu or cuda backend: the collectives run (MPI_COMM_WORLD or NCCL, one process a rank) */
    int real, rank;              /* real: the collectives move values; rank: this process's (0 otherwise) */
    int local, nccl;             /* the rank among its machine's (its GPU: local % GPUs); the cuda backend's
                                       NCCL communicator is open */
    int64_t nccl_bytes;          /* the device memory its creation took (dpprof_nccl_device_bytes; -1: none) */
    int64_t *toff, *poff, *eoff; /* (n_params) offsets: in the trainable shard (gradient and moment shards), in
                                       the parameter shard of the tensor's category (zero 3), in the whole trainable
                                       table (the noise's element index) */
    int64_t *loff;               /* (n_params) zero 3, bf16: the offset in the working copies' shard of its category */
    int *counts, *displs;        /* (n) a collective's part of each rank, in elements, and where it starts */
    int64_t peak_min, peak_max;  /* the ranks' peaks after the last step (equal: ranks_identical) */
} dpprof__dist;

/* config.framework pytorch: the walk's tensors (5.8b) */
typedef struct dpprof__fw {
    struct dpprof__fwt *t; /* (cap) the tensors, each an accountant key while it has bytes */
    int *free_list, n_free, cap;
    int rc;                          /* the first failure of the walk (out of memory); every later allocation does nothing */
    int mod;                         /* the module the next activation is charged to */
    int cos, sin;                    /* the rotary tables of the physical batch in flight */
    int tied;                        /* a tied head's weight gradient, waiting in AccumulateGrad's buffer for the embedding's */
    int pending[4], n_pending;       /* weight gradients added into .grad, dropped when the node that made them is done */
    int ids, labels;                 /* the last physical batch's input_ids and labels, alive until the next's are made */
    int *wcast;                      /* (n_params) bf16 autocast: a trainable weight's bf16 copy in autocast's cache, -1 */
    int base16;                      /* the base loaded in bf16 (LoRA, bf16, no fp32 masters): its frozen weights bf16 */
    int opacus, n;                   /* config.framework opacus; the physical batch in flight */
    int gc, nosave, recomp, stopped; /* Hugging Face's gradient checkpointing (checkpoint layers); a layer's checkpointed
                                     forward (nothing saved) in flight; its recompute in flight; that stopped early */
    int npack, stop_at, mask, pos;   /* tensors packed so far in a layer's forward; where its recompute stops; the mask,
                                     the position ids */
    int relayer, frame;              /* the layer whose recompute is due (-1: none); whose backward is in flight */
    int leaf, leafgrad, nleaf;       /* gradient checkpointing, a frozen embedding: its output made a leaf that requires a
                                     gradient, held by the graph with its .grad until the loss's name is taken (the
                                     physical batch in flight's: nleaf) */
    int ghost, pass, retain;         /* Opacus's ghost clipping (algo ghost); which of its two backward passes is in flight
                                     (1: hooks on, the graph retained; 2: hooks off); the graph is being retained */
    int logits, lps, psn;            /* ghost: the logits the caller holds, the last loss per sample, the module's last
                                     per-sample gradient norms */
    int *gs, *sg, *order, *ns;       /* (n_params) Opacus: a parameter's grad_sample and summed_grad; Hugging Face's
                                     order of the parameters (the optimizer's); ghost: its _norm_sample */
    int *w, *g, *m, *v, *tmp;        /* (n_params) a parameter's weight, .grad and moments; the optimizer's temporaries */
    struct dpprof__fw_layer *lay;    /* (L) what each layer keeps */
} dpprof__fw;

struct dpprof_session {
    dpprof_config cfg;
    dpprof_shape sh;
    int backend; /* resolved: cpu, cuda or dry */
    int elem;    /* bytes per activation element: 4 (fp32), 2 (bf16); everything else is dpprof_real */
    dpprof_prof prof;
    dpprof__model model;
    dpprof__data data;
    dpprof__run run;
    dpprof_plan plan; /* what the run does, decided at session start (5.9); the steps read it */
    dpprof__dps dps;  /* the batch in flight */
    dpprof__gpu gpu;
    dpprof__obs obs;
    dpprof__dist dist;
    dpprof_privacy privacy; /* dpprof_session_privacy's answer at privacy_steps - 1 steps (0: none yet) */
    int privacy_steps;
    dpprof__fw fw;      /* config.framework pytorch: the walk (its t is NULL otherwise) */
    int64_t plan_limit; /* plan_limit_set: the memory limit auto plans for in place of config.memory_limit (a probe
                           of a configuration's peak without its limit, dpprof_session_peak_without_limit) */
    int plan_limit_set;
};

#define DPPROF__F(t) ((dpprof_real *)(t).data)
#define DPPROF__I(t) ((int *)(t).data)
#define DPPROF__W(s, i) DPPROF__F((s)->model.params[i].w)
/* the weight a matmul reads: the bf16 working copy where there is one (its bits behind a float *, as
   the storage contract says), else the master */
#define DPPROF__WM(s, i) ((s)->model.params[i].wl.n ? DPPROF__F((s)->model.params[i].wl) : DPPROF__W(s, i))
/* element off of a tensor, stepping by its own element size (an activation is 2 bytes in bf16) */
#define DPPROF__AT(t, off) ((dpprof_real *)(void *)((char *)(t).data + (size_t)(off) * (size_t)(t).elem_size))
/* bytes per element of what is always dpprof_real: parameters, gradients, optimizer states,
   per-sample gradients, gram matrices, rstd, lse, losses */
#define DPPROF__R ((int)sizeof(dpprof_real))
/* gradient of a parameter, or NULL when it is frozen (ops then skip the weight gradient) */
#define DPPROF__G(s, i) ((s)->model.params[i].trainable ? DPPROF__F((s)->model.params[i].g) : (dpprof_real *)NULL)

/* the cuda path exists where the kernels are linked and the reference is fp32 (the gpu ops are fp32) */
#if !defined(DPPROF_CUDA) || defined(DPPROF_REF_DOUBLE)
#define DPPROF__CUDA 0
#define DPPROF__GPU(s, call) ((void)0)
#else
#define DPPROF__CUDA 1
#define DPPROF__GPU(s, call)                           \
    do {                                               \
        if ((s)->backend == DPPROF_BACKEND_CUDA) call; \
    } while (0)
#endif
#define DPPROF__ON_GPU(s) (DPPROF__CUDA && (s)->backend == DPPROF_BACKEND_CUDA)

/* --trace: each op's start and end (host clock on cpu, a cuda event pair on cuda, resolved when the
   step's work has run) */
typedef struct dpprof__op_rec {
    const char *name;
    size_t phase_rec;    /* the phase record it ran in */
    int ev0, ev1;        /* cuda events, or -1 */
    double t0, t1;       /* ms on the profiler's clock; nan until known */
    double flops, bytes; /* its analytic cost */
    long long w0, w1;    /* dpprof_cuda_work_count at its start and end */
    int counted;         /* --dram per op: it is a counter range (its ops are not timed then) */
    double traffic[4];   /* measured dram read, dram write, l2 read, l2 write bytes; < 0: none */
} dpprof__op_rec;

static void dpprof__op_mark(dpprof_session *s, const char *name, dpprof_cost c) {
    dpprof__op_rec *r;
    if (name && s->obs.tally_depth++ == 0 && s->prof.cur_phase >= DPPROF_PHASE_FORWARD) { /* the tally: an outermost op of a step */
        int i;
        for (i = 0; i < s->obs.n_tally && strcmp(s->obs.tally[i].name, name); i++) {}
        if (i == s->obs.n_tally && i < DPPROF_OP_COST_MAX) s->obs.tally[s->obs.n_tally++].name = name;
        if (i == DPPROF_OP_COST_MAX) i--; /* past the table's names: the last entry takes the rest (never reached by dpprof's own ops) */
        s->obs.tally[i].count++;
        s->obs.tally[i].flops += c.flops;
        s->obs.tally[i].bytes += c.bytes;
    } else if (!name && s->obs.tally_depth > 0) s->obs.tally_depth--;
    if (!s->obs.mark_ops) return;
    /* an op outside every phase (dpprof_session_grad's zeroing of the gradients) is not one of a step's */
    if (s->backend == DPPROF_BACKEND_DRY || !s->prof.n_phases || s->prof.cur_phase == DPPROF_PHASE_NONE) return;
    if (!name) { /* the end of the op begun last (of the outermost: one inside another is part of it) */
        if (s->obs.depth <= 0 || --s->obs.depth > 0 || !s->obs.n_ops) return;
        r = &s->obs.ops[s->obs.n_ops - 1];
        if (r->counted) { /* its range ends (a failure: the rest of the step goes uncounted, counters_end says why) */
            if (s->gpu.counting == 2 && dpprof_cuda_counters_pop() != DPPROF_OK) s->gpu.counting = 3;
        } else if (s->backend == DPPROF_BACKEND_CUDA) (void)dpprof_cuda_event(&r->ev1);
        else r->t1 = dpprof_prof_now_ms(&s->prof);
        r->w1 = dpprof_cuda_work_count();
        return;
    }
    if (s->obs.depth++ > 0) return;
    if (dpprof__grow((void **)&s->obs.ops, &s->obs.cap_ops, s->obs.n_ops + 1, sizeof *s->obs.ops) != 0) { /* the trace loses ops, the run goes on */
        s->obs.depth = 0;
        return;
    }
    r = &s->obs.ops[s->obs.n_ops++];
    r->w0 = r->w1 = dpprof_cuda_work_count();
    r->name = name;
    r->phase_rec = s->prof.n_phases - 1;
    r->ev0 = r->ev1 = -1;
    r->t0 = r->t1 = NAN;
    r->flops = c.flops;
    r->bytes = c.bytes;
    r->counted = 0;
    r->traffic[0] = r->traffic[1] = r->traffic[2] = r->traffic[3] = -1.0;
    if (s->gpu.counting == 2) { /* a counter range, not timed: the range's drains would be in its time */
        if (dpprof_cuda_counters_push(name) == DPPROF_OK) r->counted = 1;
        else s->gpu.counting = 3;
    } else if (s->backend == DPPROF_BACKEND_CUDA) (void)dpprof_cuda_event(&r->ev0);
    else r->t0 = dpprof_prof_now_ms(&s->prof);
}

/* every op goes through here: its analytic cost is charged to the open phase on every backend,
   the arithmetic runs where there is memory to run it on: the reference on cpu, the kernel on cuda */
#define DPPROF__OP(s, op, costargs, args)                               \
    do {                                                                \
        dpprof_cost c_ = dpprof_##op##_cost costargs;                   \
        dpprof_prof_add_cost(&(s)->prof, c_.flops, c_.bytes);           \
        dpprof__op_mark(s, #op, c_);                                    \
        if ((s)->backend == DPPROF_BACKEND_CPU) dpprof_##op##_ref args; \
        DPPROF__GPU(s, dpprof_##op##_gpu args);                         \
        dpprof__op_mark(s, NULL, c_);                                   \
    } while (0)
/* the same with a cost computed here (one half of an op, a plain copy): cpu call, gpu call */
#define DPPROF__OPX(s, name, cost, call, gcall)               \
    do {                                                      \
        dpprof_cost c_ = cost;                                \
        dpprof_prof_add_cost(&(s)->prof, c_.flops, c_.bytes); \
        dpprof__op_mark(s, name, c_);                         \
        if ((s)->backend == DPPROF_BACKEND_CPU) call;         \
        DPPROF__GPU(s, gcall);                                \
        dpprof__op_mark(s, NULL, c_);                         \
    } while (0)

/* the attention's gpu call: cuDNN's (--attention cudnn, with the session's cuDNN workspace) or dpprof's kernels */
#define DPPROF__UNPAREN(...) __VA_ARGS__
#define DPPROF__ATTN(s, pass, args)                                                                                         \
    ((s)->cfg.attention == DPPROF_ATTENTION_CUDNN                                                                           \
         ? dpprof_cudnn_attention_##pass##_gpu(DPPROF__UNPAREN args, (s)->model.attn_ws.data, (size_t)(s)->model.attn_ws.n) \
         : dpprof_attention_##pass##_gpu args)

/* device work that is no op of part 4 (an upload, the zeroing of a new tensor): inside an op record of its own
   when ops are timed, so that every kernel and copy of a step is in one; charged nothing (no analytic cost) */
#define DPPROF__MARKED(s, name, stmt) \
    do {                              \
        dpprof_cost z_;               \
        z_.flops = z_.bytes = 0.0;    \
        dpprof__op_mark(s, name, z_); \
        stmt;                         \
        dpprof__op_mark(s, NULL, z_); \
    } while (0)

/* one gemm (M,K) x (K,Nc): 2MKN flops, every operand read or written once; E bytes per input
   element, Eo per output element (a weight gradient is fp32 whatever the activations are) */
static dpprof_cost dpprof__gemm_cost(int M, int K, int Nc, int E, int Eo) {
    dpprof_cost c;
    c.flops = 2.0 * M * (double)K * Nc;
    c.bytes = (double)E * ((double)M * K + (double)K * Nc) + (double)Eo * ((double)M * Nc);
    return c;
}

/* host or device memory of the session's backend (dry: none) */
static void dpprof__release(dpprof_session *s, void *data) {
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) {
        dpprof_cuda_release(data);
        return;
    }
#endif
    (void)s;
    DPPROF_FREE(data);
}

/* the driver's figure at a new peak of the accountant: what cudaMemGetInfo says is used, less what
   was used before the session allocated anything (the context, other processes) */
static void dpprof__driver_peak(dpprof_session *s) {
#if DPPROF__CUDA
    size_t used = 0, pu = 0, pr = 0;
    if (dpprof_cuda_mem_used(&used) == DPPROF_OK && (int64_t)used - s->gpu.drv_base > s->gpu.drv_peak && dpprof_cuda_pool_usage(&pu, &pr) == DPPROF_OK) {
        s->gpu.drv_peak = (int64_t)used - s->gpu.drv_base;
        s->gpu.drv_live = s->prof.live_bytes;
        s->gpu.drv_pool_used = (int64_t)pu;
        s->gpu.drv_pool_res = (int64_t)pr;
    }
#else
    (void)s;
#endif
}

static int dpprof__talloc(dpprof_session *s, dpprof_tensor *t, int64_t n, int elem, int cat, int mod, int zero) {
    int64_t bytes;
    int rc;
    if (n <= 0 || n > INT64_MAX / elem || (uint64_t)(n * elem) > (uint64_t)SIZE_MAX)
        return dpprof__fail(DPPROF_ERR_OVERFLOW, "a %s tensor of %lld elements overflows the size arithmetic", dpprof_category_name(cat), (long long)n);
    bytes = n * elem;
    if (s->cfg.framework >= DPPROF_FRAMEWORK_PYTORCH) { /* the parameters' shapes alone: the walk allocates (5.8b) */
        memset(t, 0, sizeof *t);
        t->n = n;
        t->elem_size = elem;
        t->category = cat;
        t->module = mod;
        return DPPROF_OK;
    }
    if (s->cfg.memory_limit > 0 && bytes > s->cfg.memory_limit - s->prof.live_bytes)
        return dpprof__fail(DPPROF_ERR_OOM, "out of memory: %lld more bytes (%s, %s) would bring live memory to %lld bytes, over the limit of %lld bytes",
                            (long long)bytes, dpprof_category_name(cat), dpprof_module_name(mod), (long long)(s->prof.live_bytes + bytes), (long long)s->cfg.memory_limit);
    memset(t, 0, sizeof *t);
    t->n = n;
    t->elem_size = elem;
    t->category = cat;
    t->module = mod;
    if (s->backend == DPPROF_BACKEND_CPU) {
        t->data = DPPROF_MALLOC((size_t)bytes);
        if (!t->data) {
            memset(t, 0, sizeof *t);
            return dpprof__fail(DPPROF_ERR_OOM, "out of memory: cannot allocate %lld bytes (%s, %s) with %lld bytes live",
                                (long long)bytes, dpprof_category_name(cat), dpprof_module_name(mod), (long long)s->prof.live_bytes);
        }
        if (zero) memset(t->data, 0, (size_t)bytes);
    }
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) {
        if (dpprof_cuda_alloc(&t->data, (size_t)bytes) != DPPROF_OK) {
            memset(t, 0, sizeof *t);
            return dpprof__fail(DPPROF_ERR_OOM, "out of device memory: cudaMalloc of %lld bytes (%s, %s) failed with %lld bytes live (%s)",
                                (long long)bytes, dpprof_category_name(cat), dpprof_module_name(mod), (long long)s->prof.live_bytes, dpprof_last_error());
        }
        if (zero) DPPROF__MARKED(s, "alloc_zero", rc = dpprof_cuda_zero(t->data, (size_t)bytes));
        if (zero && rc != DPPROF_OK) {
            dpprof_cuda_release(t->data);
            memset(t, 0, sizeof *t);
            return dpprof__fail(DPPROF_ERR_CUDA, "%s", dpprof_last_error());
        }
    }
#endif
    rc = dpprof_track_alloc(&s->prof, t, (size_t)bytes, cat, mod);
    if (rc != DPPROF_OK) {
        dpprof__release(s, t->data);
        memset(t, 0, sizeof *t);
        return rc;
    }
    if (DPPROF__ON_GPU(s) && s->prof.live_bytes == s->prof.peak_bytes) dpprof__driver_peak(s);
    return rc;
}

static void dpprof__tfree(dpprof_session *s, dpprof_tensor *t) {
    if (!t->n) return;
    if (t->kept || s->cfg.framework >= DPPROF_FRAMEWORK_PYTORCH) { /* the keep-list owns memory and accounting now */
        memset(t, 0, sizeof *t);
        return;
    }
    dpprof_track_free(&s->prof, t);
    dpprof__release(s, t->data);
    memset(t, 0, sizeof *t);
}

/* an activation (s->elem bytes: bf16 under --dtype bf16), zeroed with Z; AR: an activation-category
   tensor that stays dpprof_real (rstd, lse, losses, dlosses) */
#define DPPROF__A(t, n, cat, mod) DPPROF__TRY(dpprof__talloc(s, &(t), (int64_t)(n), s->elem, DPPROF_CAT_##cat, DPPROF_MOD_##mod, 0))
#define DPPROF__Z(t, n, cat, mod) DPPROF__TRY(dpprof__talloc(s, &(t), (int64_t)(n), s->elem, DPPROF_CAT_##cat, DPPROF_MOD_##mod, 1))
#define DPPROF__AR(t, n, cat, mod) DPPROF__TRY(dpprof__talloc(s, &(t), (int64_t)(n), DPPROF__R, DPPROF_CAT_##cat, DPPROF_MOD_##mod, 0))

/* ---- 5.3 sharding ------------------------------------------------------------------------------------------
   config.ranks and config.zero: rank 0's part of every tensor ZeRO shards (the optimizer states, then the
   gradients, then the parameters), the gathers of stage 3 for each layer's forward and backward, and the
   collectives (all-reduce, reduce-scatter, all-gather: over MPI on cpu, NCCL on cuda, counted alone on dry). N
   ranks give one rank's results bit for bit. */
/* a rank's part of a tensor of n elements: ceil(n / ranks) (the last rank's part is padded) */
static int64_t dpprof__dist_chunk(const dpprof_session *s, int64_t n) { return (n + s->dist.n - 1) / s->dist.n; }

/* rank r's part of a tensor of n elements: [lo, lo + len), len = 0 for a rank past the end */
static void dpprof__dist_part_of(const dpprof_session *s, int64_t n, int r, int64_t *lo, int64_t *len) {
    const int64_t c = dpprof__dist_chunk(s, n), a = (int64_t)r * c;
    *lo = a < n ? a : n;
    *len = n - a <= 0 ? 0 : (n - a < c ? n - a : c);
}
/* this rank's */
static void dpprof__dist_part(const dpprof_session *s, int64_t n, int64_t *lo, int64_t *len) { dpprof__dist_part_of(s, n, s->dist.rank, lo, len); }

/* the collectives that move values (real ranks: the cpu backend over MPI_COMM_WORLD, the cuda backend over NCCL
   on device tensors; every rank calls them in the same order, as the steps are the same on every rank). in place
   on a tensor x of n elements in a buffer of cap elements (cap >= ranks x its chunk: a padded one): the all-reduce
   sums x over the ranks; the reduce-scatter leaves this rank's part of the sum at its place, x + lo; the
   all-gather fills x from every rank's part (mine: this rank's part from elsewhere, else in place at x + lo) */
#ifdef DPPROF_MPI
#define DPPROF__MPI_REAL (sizeof(dpprof_real) == sizeof(double) ? MPI_DOUBLE : MPI_FLOAT)
static void dpprof__mpi_parts(dpprof_session *s, int64_t n) {
    int r;
    for (r = 0; r < s->dist.n; r++) {
        int64_t lo, len;
        dpprof__dist_part_of(s, n, r, &lo, &len);
        s->dist.counts[r] = (int)len;
        s->dist.displs[r] = (int)lo;
    }
}
/* host memory, whatever the backend */
static void dpprof__mpi_allgather(dpprof_session *s, dpprof_real *x, int64_t n, const dpprof_real *mine) {
    dpprof__mpi_parts(s, n);
    MPI_Allgatherv(mine ? (const void *)mine : MPI_IN_PLACE, mine ? s->dist.counts[s->dist.rank] : 0, DPPROF__MPI_REAL, x, s->dist.counts, s->dist.displs,
                   DPPROF__MPI_REAL, MPI_COMM_WORLD);
}
#endif
/* n elements from src to dst on the session's side (device memory on the cuda backend) */
static void dpprof__dist_copy(dpprof_session *s, dpprof_real *dst, const dpprof_real *src, int64_t n) {
    if (n <= 0 || dst == src) return;
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) {
        (void)dpprof_cuda_copy(dst, src, (size_t)n * sizeof(dpprof_real), DPPROF_COPY_D2D); /* queued; a failure is the stream's */
        return;
    }
#endif
    (void)s;
    memmove(dst, src, (size_t)n * sizeof(dpprof_real));
}
static void dpprof__coll_allreduce(dpprof_session *s, dpprof_real *x, int64_t n) {
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) {
        dpprof_nccl_allreduce(x, (size_t)n);
        return;
    }
#endif
#ifdef DPPROF_MPI
    MPI_Allreduce(MPI_IN_PLACE, x, (int)n, DPPROF__MPI_REAL, MPI_SUM, MPI_COMM_WORLD);
#endif
    (void)s, (void)x, (void)n;
}
static void dpprof__coll_reduce_scatter(dpprof_session *s, dpprof_real *x, int64_t n, int64_t cap) {
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) {
        dpprof_nccl_reduce_scatter(x, (size_t)n, (size_t)cap);
        return;
    }
#endif
#ifdef DPPROF_MPI
    {
        int64_t lo, len;
        dpprof__mpi_parts(s, n);
        MPI_Reduce_scatter(MPI_IN_PLACE, x, s->dist.counts, DPPROF__MPI_REAL, MPI_SUM, MPI_COMM_WORLD); /* the part lands at x */
        dpprof__dist_part(s, n, &lo, &len);
        dpprof__dist_copy(s, x + lo, x, len); /* lo >= chunk >= len where lo > 0: no overlap */
    }
#endif
    (void)s, (void)x, (void)n, (void)cap;
}
static void dpprof__coll_allgather(dpprof_session *s, dpprof_real *x, int64_t n, int64_t cap, const dpprof_real *mine) {
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) {
        int64_t lo, len;
        dpprof__dist_part(s, n, &lo, &len);
        if (mine) dpprof__dist_copy(s, x + lo, mine, len);
        dpprof_nccl_allgather(x, (size_t)n, (size_t)cap);
        return;
    }
#endif
#ifdef DPPROF_MPI
    dpprof__mpi_allgather(s, x, n, mine);
#endif
    (void)s, (void)x, (void)n, (void)cap, (void)mine;
}

/* the all-gather of a bf16 working copy (zero 3 under --dtype bf16) into its padded buffer x, from this rank's part
   mine: ncclAllGather in bf16 on the cuda backend, the only one that runs bf16 (the cpu refuses it) */
static void dpprof__coll_allgather_bf16(dpprof_session *s, dpprof_bf16 *x, int64_t n, int64_t cap, const dpprof_bf16 *mine) {
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) {
        int64_t lo, len;
        dpprof__dist_part(s, n, &lo, &len);
        if (len) (void)dpprof_cuda_copy(x + lo, mine, (size_t)len * sizeof(dpprof_bf16), DPPROF_COPY_D2D); /* queued */
        dpprof_nccl_allgather_bf16(x, (size_t)n, (size_t)cap);
        return;
    }
#endif
    (void)s, (void)x, (void)n, (void)cap, (void)mine;
}

/* the ring algorithm's bytes per rank of one collective on a tensor of n elements of e bytes */
static void dpprof__dist_coll(dpprof_session *s, int kind, int64_t n, int e) {
    s->dist.bytes[kind] += (kind == DPPROF__AR_BYTES ? 2 : 1) * (int64_t)(s->dist.n - 1) * dpprof__dist_chunk(s, n) * e;
    s->dist.calls[kind]++;
}

/* the collectives' time (the declarations' comment says the model). the links: each GPU's peak each way, from the
   vendors' specifications (a total over both directions halved), and a ring step's latency from NCCL's own tuning
   model (src/graph/tuning.cc: the hardware latency of its ring algorithm, Simple protocol, over NVLink, PCI and the
   network), assumed to hold for these parts. docs/fit.md has the same table */
static const dpprof_link dpprof__links[] = {
    {"nvlink4", 0, 450e9, 3.4e-6, "NVLink 4 (H100, H200 SXM)", "NVIDIA's H100 and H200 datasheets: NVLink 900 GB/s a GPU, both directions together"},
    {"nvlink3", 0, 300e9, 3.4e-6, "NVLink 3 (A100 SXM)", "NVIDIA's A100 datasheet: NVLink 600 GB/s a GPU, both directions together"},
    {"pcie5", 0, 64e9, 5.7e-6, "PCIe Gen5 x16", "PCI Express 5.0 x16: 128 GB/s both directions together (NVIDIA's H100 PCIe datasheet)"},
    {"pcie4", 0, 32e9, 5.7e-6, "PCIe Gen4 x16 (A100 PCIe, L40S, L4, A10, RTX 4090)", "PCI Express 4.0 x16: 64 GB/s both directions together (NVIDIA's A100 PCIe, L40S, L4 and A10 datasheets)"},
    {"ndr", 1, 50e9, 9.6e-6, "InfiniBand NDR, 400 Gb/s a GPU", "InfiniBand NDR: 400 Gb/s a port (NVIDIA ConnectX-7), one port a GPU as in a DGX H100"},
    {"hdr", 1, 25e9, 9.6e-6, "InfiniBand HDR, 200 Gb/s a GPU", "InfiniBand HDR: 200 Gb/s a port (NVIDIA ConnectX-6), one port a GPU as in a DGX A100"},
};
DPPROF_API const dpprof_link *dpprof_links(int *count) {
    if (count) *count = (int)(sizeof dpprof__links / sizeof dpprof__links[0]);
    return dpprof__links;
}
DPPROF_API const dpprof_link *dpprof_link_find(const char *name) {
    size_t i, k;
    for (i = 0; name && i < sizeof dpprof__links / sizeof dpprof__links[0]; i++) {
        const char *a = dpprof__links[i].name;
        for (k = 0; a[k] && tolower((unsigned char)name[k]) == a[k]; k++) {}
        if (!a[k] && !name[k]) return &dpprof__links[i];
    }
    return NULL;
}

/* the fabric checked; its ring's bus bandwidth (the slowest link it crosses) and a ring step's latency within a
   node and between nodes */
static int dpprof__fabric(const dpprof_fabric *f, double *busbw, double *lat_in, double *lat_net) {
    int per;
    if (!f || f->ranks < 1 || f->nodes < 1 || f->ranks % f->nodes)
        return dpprof_fail(DPPROF_ERR_INVALID, "a fabric of %d GPUs over %d nodes: the nodes must divide the GPUs", f ? f->ranks : 0, f ? f->nodes : 0);
    per = f->ranks / f->nodes;
    if (per > 1 && (!f->intra || f->intra->network)) return dpprof_fail(DPPROF_ERR_INVALID, "%d GPUs a node and no link within a node (intra)", per);
    if (f->nodes > 1 && (!f->net || !f->net->network)) return dpprof_fail(DPPROF_ERR_INVALID, "%d nodes and no network link between them (net)", f->nodes);
    *busbw = per > 1 ? f->intra->bytes_per_s : INFINITY;
    if (f->nodes > 1 && f->net->bytes_per_s < *busbw) *busbw = f->net->bytes_per_s;
    *lat_in = per > 1 ? f->intra->step_latency_s : 0;
    *lat_net = f->nodes > 1 ? f->net->step_latency_s : 0;
    return DPPROF_OK;
}

/* a ring collective's time from the bytes a rank sends (factor x S) and the calls: the bytes over the bus bandwidth,
   every call's steps at their links' latency. 0 on one rank */
static double dpprof__ring(const dpprof_fabric *f, int kind, double rank_bytes, double calls, double busbw, double lat_in, double lat_net, double *lat) {
    const double twice = kind == DPPROF_COLL_ALL_REDUCE ? 2.0 : 1.0;
    const double steps = twice * (f->ranks - 1), net_steps = twice * (f->nodes - 1);
    if (f->ranks <= 1) return *lat = 0.0;
    *lat = calls * ((steps - net_steps) * lat_in + net_steps * lat_net);
    return rank_bytes / busbw + *lat;
}

DPPROF_API int dpprof_coll_seconds(dpprof_coll kind, double bytes, const dpprof_fabric *f, double *seconds) {
    double busbw = 0, lat_in = 0, lat_net = 0, lat = 0;
    int rc;
    *seconds = NAN;
    if ((int)kind < 0 || kind >= DPPROF_COLL_COUNT || !(bytes >= 0)) return dpprof_fail(DPPROF_ERR_INVALID, "a collective of kind %d on %g bytes", (int)kind, bytes);
    if ((rc = dpprof__fabric(f, &busbw, &lat_in, &lat_net)) != DPPROF_OK) return rc;
    *seconds = dpprof__ring(f, (int)kind, bytes * (kind == DPPROF_COLL_ALL_REDUCE ? 2.0 : 1.0) * (f->ranks - 1) / f->ranks, 1.0, busbw, lat_in, lat_net, &lat);
    return DPPROF_OK;
}

DPPROF_API int dpprof_comm_time(const dpprof_dist_info *d, const dpprof_fabric *f, dpprof_comm *out) {
    double busbw = 0, lat_in = 0, lat_net = 0;
    int rc, k;
    memset(out, 0, sizeof *out);
    if ((rc = dpprof__fabric(f, &busbw, &lat_in, &lat_net)) != DPPROF_OK) return rc;
    if (d->ranks != f->ranks) return dpprof_fail(DPPROF_ERR_INVALID, "the collectives of %d ranks on a fabric of %d GPUs", d->ranks, f->ranks);
    out->busbw = f->ranks > 1 ? busbw : NAN;
    for (k = 0; k < DPPROF_COLL_COUNT; k++) {
        const int64_t b = k == DPPROF_COLL_ALL_REDUCE ? d->all_reduce_bytes : (k == DPPROF_COLL_REDUCE_SCATTER ? d->reduce_scatter_bytes : d->all_gather_bytes);
        const int64_t c = k == DPPROF_COLL_ALL_REDUCE ? d->all_reduce_calls : (k == DPPROF_COLL_REDUCE_SCATTER ? d->reduce_scatter_calls : d->all_gather_calls);
        double lat;
        out->seconds_by_kind[k] = dpprof__ring(f, k, (double)b, (double)c, busbw, lat_in, lat_net, &lat);
        out->latency_s += lat;
        out->seconds += out->seconds_by_kind[k];
    }
    out->bandwidth_s = out->seconds - out->latency_s;
    return DPPROF_OK;
}

/* zero 3's unit of parameter i: 0 the embedding, 1 + l decoder layer l (with its adapters), L + 1 the final
   norm, L + 2 the head */
static int dpprof__dist_unit(const dpprof_session *s, int i) {
    if (s->model.params[i].layer >= 0) return 1 + s->model.params[i].layer;
    return i == s->model.p_emb ? 0 : (i == s->model.p_normf ? s->sh.L + 1 : s->sh.L + 2);
}
/* parameter i is used by unit u: its own, and a tied head's matrix (the embedding's) by the head's unit too */
static int dpprof__dist_uses(const dpprof_session *s, int i, int u) {
    return dpprof__dist_unit(s, i) == u || (s->sh.tied && i == s->model.p_emb && u == s->sh.L + 2);
}

/* a parameter's weights: zero 3 keeps only their shard (dpprof__dist_params), so the tensor is a descriptor that
   nothing tracks (kept: freeing it only forgets it) and the weights exist where a unit is gathered */
static void dpprof__param_untracked(dpprof_tensor *w, int64_t n, int elem, int cat, int mod) {
    memset(w, 0, sizeof *w);
    w->n = n;
    w->elem_size = elem;
    w->category = cat;
    w->module = mod;
    w->kept = 1;
}
static int dpprof__param_alloc(dpprof_session *s, dpprof_tensor *w, int64_t n, int cat, int mod) {
    if (s->dist.zero < 3) return dpprof__talloc(s, w, n, DPPROF__R, cat, mod, 0);
    dpprof__param_untracked(w, n, DPPROF__R, cat, mod);
    return DPPROF_OK;
}

/* weights ~ N(0, init_std^2) from philox, stream = parameter index, so any backend (or a reader of
   the README) regenerates them; rmsnorm weights are ones. dpprof__init_range: elements [e0, e0 + n) of
   tensor i into w[0, n) (the cpu's values; zero 3 makes a rank's shard of them so) */
static void dpprof__init_range(const dpprof_session *s, int i, dpprof_real *w, int64_t e0, int64_t n) {
    const dpprof_param *p = &s->model.params[i];
    int64_t e;
    if (strstr(p->name, ".lora_B.")) { /* lora starts as the identity change: B = 0 */
        memset(w, 0, (size_t)n * sizeof(dpprof_real));
        return;
    }
    if (p->rows == 1) {
        for (e = 0; e < n; e++) w[e] = (dpprof_real)1.0;
        return;
    }
    for (e = 0; e < n; e++)
        w[e] = (dpprof_real)(s->cfg.init_std * dpprof_normal(dpprof_noise_seed(s->cfg.seed), DPPROF__STREAM_INIT + (uint64_t)i, (uint64_t)(e0 + e)));
}

/* (real ranks) where this rank's part of tensor i's weights is: in its shard (zero 3), else in the tensor */
static dpprof_real *dpprof__dist_wpart(const dpprof_session *s, int i) {
    const dpprof_param *p = &s->model.params[i];
    int64_t lo, len;
    if (s->dist.zero == 3) return DPPROF__F(p->w.category == DPPROF_CAT_LORA ? s->dist.lshard : s->dist.wshard) + s->dist.poff[i];
    dpprof__dist_part(s, p->w.n, &lo, &len);
    return DPPROF__W(s, i) + lo;
}
/* (real ranks, zero 3, bf16) where this rank's part of tensor i's working copy is: in the copies' shard */
static dpprof_bf16 *dpprof__dist_wlpart(const dpprof_session *s, int i) {
    return (dpprof_bf16 *)(s->model.params[i].w.category == DPPROF_CAT_LORA ? s->dist.llshard : s->dist.wlshard).data + s->dist.loff[i];
}

/* zero 3, bf16: each tensor's working-copy part cast from its master's part (only_trainable: after an update,
   where frozen masters have not changed), an op charged on the rank's padded part (read 4, write 2 bytes an
   element) as the other shard ops are; a tensor stored in bf16 alone has no master and is not cast */
static void dpprof__z3_cast(dpprof_session *s, int only_trainable) {
    int i;
    for (i = 0; s->dist.zero == 3 && i < s->model.n_params; i++) {
        const dpprof_param *p = &s->model.params[i];
        int64_t lo, len;
        dpprof_cost c;
        if (!p->wl.n || p->bf16_only || (only_trainable && !p->trainable)) continue;
        dpprof__dist_part(s, p->w.n, &lo, &len);
        c.flops = (double)dpprof__dist_chunk(s, p->w.n);
        c.bytes = 6.0 * c.flops;
        DPPROF__OPX(s, "cast_bf16", c, (void)0, (len && s->dist.real ? dpprof_cast_bf16_gpu(dpprof__dist_wlpart(s, i), dpprof__dist_wpart(s, i), (size_t)len) : (void)0));
    }
}

/* zero 3: this rank's part of tensor i's initial values, made on the host (dpprof__init_range's values) and put in
   its shard: the master's (fp32), or, for a tensor stored in bf16 alone, the working copy's, rounded */
static int dpprof__z3_init(dpprof_session *s, int i, int64_t lo, int64_t len) {
#if DPPROF__CUDA
    const dpprof_param *p = &s->model.params[i];
    if (s->backend == DPPROF_BACKEND_CUDA) { /* made on the host (the same values), uploaded */
        dpprof_real *h = (dpprof_real *)DPPROF_MALLOC((size_t)len * (sizeof(dpprof_real) + sizeof(dpprof_bf16)));
        int rc;
        if (!h) return dpprof__fail(DPPROF_ERR_OOM, "cannot allocate a host buffer for %s's initial values", p->name);
        dpprof__init_range(s, i, h, lo, len);
        if (p->bf16_only) { /* rounded as dpprof_init_normal_bf16_gpu rounds the same floats */
            dpprof_bf16 *b = (dpprof_bf16 *)(void *)(h + len);
            dpprof_bf16_pack_ref(b, h, (size_t)len);
            rc = dpprof_cuda_copy(dpprof__dist_wlpart(s, i), b, (size_t)len * sizeof(dpprof_bf16), DPPROF_COPY_H2D);
        } else rc = dpprof_cuda_copy(dpprof__dist_wpart(s, i), h, (size_t)len * sizeof(dpprof_real), DPPROF_COPY_H2D);
        DPPROF_FREE(h);
        if (rc != DPPROF_OK) return dpprof__fail(DPPROF_ERR_CUDA, "the initial values of %s: %s", p->name, dpprof_last_error());
        return DPPROF_OK;
    }
#endif
    dpprof__init_range(s, i, dpprof__dist_wpart(s, i), lo, len); /* the cpu: fp32 (it refuses bf16) */
    return DPPROF_OK;
}

/* the shard sizes; zero 1, 2: the trainable parameters' padding (the all-gather after the update writes in
   place); zero 3: the parameter shards, one per category (model_parameters, lora), fp32 for the tensors with an
   fp32 copy (every one but those bf16 stores alone), and in bf16 the working copies' shards, two more */
static int dpprof__dist_params(dpprof_session *s) {
    int64_t base = 0, lora = 0, base16 = 0, lora16 = 0, pad, whole = 0;
    int i;
    s->dist.shard_train = s->dist.shard_params = 0;
    if (s->dist.n > 1) { /* host tables: the offsets of each tensor's part in the shards, and the collectives' parts */
        const size_t np = (size_t)s->model.n_params, nr = (size_t)s->dist.n;
        s->dist.toff = (int64_t *)DPPROF_MALLOC(sizeof(int64_t) * 4 * np);
        s->dist.counts = (int *)DPPROF_MALLOC(sizeof(int) * 2 * nr);
        if (!s->dist.toff || !s->dist.counts) return dpprof__fail(DPPROF_ERR_OOM, "cannot allocate the shard tables");
        s->dist.poff = s->dist.toff + np;
        s->dist.eoff = s->dist.poff + np;
        s->dist.loff = s->dist.eoff + np;
        s->dist.displs = s->dist.counts + nr;
    }
    for (i = 0; i < s->model.n_params; i++) {
        const dpprof_param *p = &s->model.params[i];
        const int64_t c = dpprof__dist_chunk(s, p->w.n), lo = p->w.category == DPPROF_CAT_LORA;
        if (s->dist.real && p->w.n > INT32_MAX) /* MPI counts elements in an int */
            return dpprof__fail(DPPROF_ERR_OVERFLOW, "%s has %lld elements: the MPI collectives take at most %d", p->name, (long long)p->w.n, (int)INT32_MAX);
        if (s->dist.toff) {
            s->dist.toff[i] = s->dist.shard_train;
            s->dist.poff[i] = lo ? lora : base;
            s->dist.eoff[i] = whole;
            s->dist.loff[i] = lo ? lora16 : base16;
        }
        if (p->trainable) s->dist.shard_train += c, whole += p->w.n;
        s->dist.shard_params += c;
        if (!p->bf16_only) *(lo ? &lora : &base) += c;
        if (p->wl.n) *(lo ? &lora16 : &base16) += c;
    }
    pad = (int64_t)s->dist.n * s->dist.shard_train - dpprof_session_param_elems(s, 1);
    if ((s->dist.zero == 1 || s->dist.zero == 2) && pad > 0)
        DPPROF__TRY(dpprof__talloc(s, &s->dist.wpad, pad, DPPROF__R, DPPROF_CAT_MODEL_PARAMETERS, DPPROF_MOD_OTHER, 0));
    if (s->dist.zero < 3) return DPPROF_OK;
    s->dist.gath = (dpprof_tensor *)DPPROF_MALLOC(sizeof(dpprof_tensor) * (size_t)s->model.n_params);
    if (!s->dist.gath) return dpprof__fail(DPPROF_ERR_OOM, "cannot allocate the gathered-weights table");
    memset(s->dist.gath, 0, sizeof(dpprof_tensor) * (size_t)s->model.n_params);
    if (base) DPPROF__TRY(dpprof__talloc(s, &s->dist.wshard, base, DPPROF__R, DPPROF_CAT_MODEL_PARAMETERS, DPPROF_MOD_OTHER, 0));
    if (lora) DPPROF__TRY(dpprof__talloc(s, &s->dist.lshard, lora, DPPROF__R, DPPROF_CAT_LORA, DPPROF_MOD_LORA, 0));
    if (base16) DPPROF__TRY(dpprof__talloc(s, &s->dist.wlshard, base16, (int)sizeof(dpprof_bf16), DPPROF_CAT_MODEL_PARAMETERS, DPPROF_MOD_OTHER, 0));
    if (lora16) DPPROF__TRY(dpprof__talloc(s, &s->dist.llshard, lora16, (int)sizeof(dpprof_bf16), DPPROF_CAT_LORA, DPPROF_MOD_LORA, 0));
    for (i = 0; s->dist.real && i < s->model.n_params; i++) { /* the rank's part of every tensor's initial values */
        int64_t lo, len;
        dpprof__dist_part(s, s->model.params[i].w.n, &lo, &len);
        if (len) DPPROF__TRY(dpprof__z3_init(s, i, lo, len));
    }
    dpprof__z3_cast(s, 0); /* bf16: the working copies' shards from the masters' */
    return DPPROF_OK;
}

/* the persistent dp state of the optimizer: zero 1: the flat gradients' padding (reduce-scattered in place);
   zero >= 2: the gradient shard; zero >= 1: adam's two moment shards */
static int dpprof__dist_states(dpprof_session *s) {
    const int64_t S = s->dist.shard_train, pad = (int64_t)s->dist.n * S - dpprof_session_param_elems(s, 1);
    if (!s->dist.zero || !S) return DPPROF_OK;
    if (s->dist.zero == 1 && pad > 0) DPPROF__TRY(dpprof__talloc(s, &s->dist.gpad, pad, DPPROF__R, DPPROF_CAT_GRADIENTS, DPPROF_MOD_OTHER, 1));
    if (s->dist.zero >= 2) DPPROF__TRY(dpprof__talloc(s, &s->dist.gshard, S, DPPROF__R, DPPROF_CAT_GRADIENTS, DPPROF_MOD_OTHER, 1));
    if (s->cfg.optimizer != DPPROF_OPT_ADAM) return DPPROF_OK;
    DPPROF__TRY(dpprof__talloc(s, &s->dist.m, S, DPPROF__R, DPPROF_CAT_OPTIMIZER_STATES, DPPROF_MOD_OPTIMIZER, 1));
    return dpprof__talloc(s, &s->dist.v, S, DPPROF__R, DPPROF_CAT_OPTIMIZER_STATES, DPPROF_MOD_OPTIMIZER, 1);
}

/* zero >= 2: tensor p's full-size gradient lives from just before the op that writes a physical batch's
   contribution to it (the backward's weight gradient, the clipped sum of book-keeping or of materialised
   per-sample gradients, the second backward's) until just after: then it is reduce-scattered, padded to
   ranks equal parts, into the rank's gradient shard and freed. a tied head's matrix has two contributions, the
   head's and then the embedding's: opened at the head's, it stays open (dpprof__grad_close_use) until the
   embedding's is in, and is reduce-scattered once */
static int dpprof__grad_open(dpprof_session *s, int p) {
    dpprof_param *P = &s->model.params[p];
    if (s->dist.zero < 2 || !P->trainable || P->g.n) return DPPROF_OK; /* open: the tied head's, waiting for the embedding's */
    return dpprof__talloc(s, &P->g, (int64_t)s->dist.n * dpprof__dist_chunk(s, P->w.n), DPPROF__R, DPPROF_CAT_GRADIENTS, P->module, 1);
}

static void dpprof__grad_close(dpprof_session *s, int p) {
    dpprof_param *P = &s->model.params[p];
    if (s->dist.zero < 2 || !P->trainable) return;
    dpprof__dist_coll(s, DPPROF__RS_BYTES, P->w.n, DPPROF__R);
    if (s->dist.real) { /* the shard so far joins this rank's part first: the sum is then the shard plus every rank's contribution */
        dpprof_real *g = DPPROF__F(P->g), *sh = DPPROF__F(s->dist.gshard) + s->dist.toff[p];
        int64_t lo, len, e;
        dpprof__dist_part(s, P->w.n, &lo, &len);
#if DPPROF__CUDA
        if (s->backend == DPPROF_BACKEND_CUDA) {
            if (len) { /* fp32 gradients: the add in fp32 storage whatever the activations' (bf16's) */
                (void)dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
                dpprof_add_gpu(g + lo, g + lo, sh, (size_t)len);
                (void)dpprof_cuda_set_storage(s->cfg.dtype == DPPROF_DTYPE_BF16 ? DPPROF_DTYPE_BF16 : DPPROF_DTYPE_FP32);
            }
        } else
#endif
            for (e = 0; e < len; e++) g[lo + e] += sh[e];
        dpprof__coll_reduce_scatter(s, g, P->w.n, P->g.n);
        dpprof__dist_copy(s, sh, g + lo, len);
    }
    dpprof__tfree(s, &P->g);
}
/* the end of one use's contribution to p: head, the tied head's use of the embedding's matrix, leaves it open */
static void dpprof__grad_close_use(dpprof_session *s, int p, int head) {
    if (!head) dpprof__grad_close(s, p);
}

/* zero 3: unit u's weights all-gathered into full-size buffers (padded to ranks equal parts), in the category
   and module of each tensor; under bf16 a tensor with a working copy gathers that copy alone, in bf16 (mixed
   precision as FSDP's: the masters stay sharded, the ops read the gathered bf16 copy) */
static int dpprof__z3_gather(dpprof_session *s, int u) {
    int i;
    if (u < 0 || u > s->sh.L + 2) return DPPROF_OK;
    for (i = 0; i < s->model.n_params; i++) {
        dpprof_param *p = &s->model.params[i];
        dpprof_tensor *g = &s->dist.gath[i];
        const int e = p->wl.n ? (int)sizeof(dpprof_bf16) : DPPROF__R; /* bf16: the working copy is what is gathered */
        if (g->n || !dpprof__dist_uses(s, i, u)) continue;
        DPPROF__TRY(dpprof__talloc(s, g, (int64_t)s->dist.n * dpprof__dist_chunk(s, p->w.n), e, p->w.category, p->module, 0));
        dpprof__dist_coll(s, DPPROF__AG_BYTES, p->w.n, e);
        if (s->dist.real && p->wl.n) { /* the copy the matmuls (and a tied head's embedding) read */
            dpprof__coll_allgather_bf16(s, (dpprof_bf16 *)g->data, p->w.n, g->n, dpprof__dist_wlpart(s, i));
            p->wl.data = g->data;
        } else if (s->dist.real) { /* the weights the ops read, while the unit is gathered */
            dpprof__coll_allgather(s, DPPROF__F(*g), p->w.n, g->n, dpprof__dist_wpart(s, i));
            p->w.data = g->data;
        }
        s->dist.gath_live += g->n * e;
        if (s->dist.gath_live > s->dist.gath_max) s->dist.gath_max = s->dist.gath_live;
    }
    return DPPROF_OK;
}

/* zero 3: unit u computes next in a pass (dir +1 the forward, -1 a backward): it is gathered, and the next
   unit of the pass with it (a prefetch of one unit ahead) */
static int dpprof__z3_use(dpprof_session *s, int u, int dir) {
    if (s->dist.zero < 3) return DPPROF_OK;
    DPPROF__TRY(dpprof__z3_gather(s, u));
    return dpprof__z3_gather(s, u + dir);
}

/* zero 3: unit u is done in this pass: its gathered weights are freed (u < 0: every unit's) */
static void dpprof__z3_done(dpprof_session *s, int u) {
    int i;
    if (s->dist.zero < 3 || !s->dist.gath) return; /* a model that did not fit has no table */
    for (i = 0; i < s->model.n_params; i++) {
        if (!s->dist.gath[i].n || (u >= 0 && !dpprof__dist_uses(s, i, u))) continue;
        s->dist.gath_live -= s->dist.gath[i].n * s->dist.gath[i].elem_size;
        s->model.params[i].w.data = s->model.params[i].wl.data = NULL;
        dpprof__tfree(s, &s->dist.gath[i]);
    }
}

/* ---- 5.4 model and data ------------------------------------------------------------------------------------
   The Llama model's tensors in Hugging Face's names, their initialisation from the seed, the bf16 working
   copies, and the data: synthetic sequences from the seed, or --data's bytes (lm) or labelled lines (cls).
   dpprof_session_batch gives a step's samples as training uses them. */

/* a tensor of the model. bf16: the matmul weights (not the embedding table unless it is the tied lm head, not the
   norm vectors) get their working copy beside the fp32 master, in the master's category and module; a frozen
   matmul weight or embedding table is stored once, in bf16 (wl; w keeps its size and no storage), unless
   config.frozen_masters keeps the master */
static int dpprof__add_param_cat(dpprof_session *s, const char *name, int rows, int cols, int category, int module, int layer, int trainable) {
    dpprof_param *p = &s->model.params[s->model.n_params++];
    const int bf16 = s->cfg.dtype == DPPROF_DTYPE_BF16 && module != DPPROF_MOD_NORM;
    const int matmul = s->model.n_params - 1 != s->model.p_emb || s->sh.tied;
    memset(p, 0, sizeof *p);
    snprintf(p->name, sizeof p->name, "%s", name);
    p->rows = rows;
    p->cols = cols;
    p->module = module;
    p->layer = layer;
    p->trainable = trainable;
    p->bf16_only = bf16 && !trainable && s->cfg.frozen_masters != DPPROF_SWITCH_ON;
    if (p->bf16_only) dpprof__param_untracked(&p->w, (int64_t)rows * cols, DPPROF__R, category, module); /* its weights are wl's */
    else DPPROF__TRY(dpprof__param_alloc(s, &p->w, (int64_t)rows * cols, category, module));
    if (!bf16 || !(matmul || p->bf16_only)) return DPPROF_OK;
    if (s->dist.zero == 3) /* a shard of it (dpprof__dist_params), the whole copy only where its unit is gathered */
        dpprof__param_untracked(&p->wl, (int64_t)rows * cols, (int)sizeof(dpprof_bf16), category, module);
    else DPPROF__TRY(dpprof__talloc(s, &p->wl, (int64_t)rows * cols, (int)sizeof(dpprof_bf16), category, module, 0));
    return DPPROF_OK;
}

static int dpprof__add_param(dpprof_session *s, const char *name, int rows, int cols, int module, int layer, int trainable) {
    return dpprof__add_param_cat(s, name, rows, cols, DPPROF_CAT_MODEL_PARAMETERS, module, layer, trainable);
}

/* the initial weights of tensor i (dpprof__init_range's) */
static void dpprof__init_param(dpprof_session *s, int i) {
    dpprof_param *p = &s->model.params[i];
    dpprof_real *w = DPPROF__F(p->w);
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) { /* the same values, made on the device (no w: zero 3's shards have them) */
        if (p->bf16_only) {                  /* a frozen matmul weight in bf16 alone: the rounded values, never in fp32 */
            if (p->wl.data) dpprof_init_normal_bf16_gpu((dpprof_bf16 *)p->wl.data, (size_t)p->wl.n, s->cfg.init_std, s->cfg.seed, DPPROF__STREAM_INIT + (uint64_t)i);
            return; /* no wl: zero 3 keeps a shard of it (dpprof__dist_params) */
        }
        if (!w) return;
        if (strstr(p->name, ".lora_B.")) dpprof_fill_gpu(w, (size_t)p->w.n, 0.0f);
        else if (p->rows == 1) dpprof_fill_gpu(w, (size_t)p->w.n, 1.0f);
        else dpprof_init_normal_gpu(w, (size_t)p->w.n, s->cfg.init_std, s->cfg.seed, DPPROF__STREAM_INIT + (uint64_t)i);
        return;
    }
#endif
    if (s->backend != DPPROF_BACKEND_CPU || !w) return; /* no w: zero 3 keeps a shard (dpprof__dist_params) */
    dpprof__init_range(s, i, w, 0, p->w.n);
}

/* the storage mode of the gpu ops is per process (dpprof_cuda_set_storage): each entry point that
   queues ops sets this session's, so that sessions of either dtype can be used in turn */
#if DPPROF__CUDA
/* one int of the tuning (a field's offset in dpprof_cuda_tuning) set, the rest as it is: the clipped weight
   gradient's kernel (auto takes it per layer; cuBLAS per sample unless fused), the bf16 flash norms on cuBLAS
   blocks or dpprof's kernels (auto takes them per flavour) */
static void dpprof__tune(size_t field, int on) {
    dpprof_cuda_tuning t;
    dpprof_cuda_get_tuning(&t);
    *(int *)(void *)((char *)&t + field) = on != 0;
    (void)dpprof_cuda_set_tuning(&t);
}
#define dpprof__tune_clipgrad(fused) dpprof__tune(offsetof(dpprof_cuda_tuning, fused_clipgrad), (fused))
#define dpprof__tune_norms(cublas) dpprof__tune(offsetof(dpprof_cuda_tuning, norms_cublas), (cublas))
#endif

static void dpprof__bind(const dpprof_session *s) {
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) {
        dpprof_cuda_tuning t;
        memset(&t, 0, sizeof t);
        t.fused_clipgrad = s->cfg.fused_clipgrad == DPPROF_SWITCH_ON;
        t.dp_warp_tile = s->cfg.dp_warp_tile;
        t.wgmma = (int)s->cfg.wgmma; /* 1 on a device that cannot was refused at session start */
        (void)dpprof_cuda_set_storage(s->cfg.dtype == DPPROF_DTYPE_BF16 ? DPPROF_DTYPE_BF16 : DPPROF_DTYPE_FP32);
        (void)dpprof_cuda_set_tuning(&t);
    }
#else
    (void)s;
#endif
}

/* bf16: refresh the working copies (wl) of the matmul weights from their fp32 masters; only_trainable:
   after an update, when frozen weights have not changed. charged as an op on every backend (read 4,
   write 2 bytes per element) so that the profile shows what mixed precision costs */
static void dpprof__cast_weights(dpprof_session *s, int first, int last, int only_trainable) {
    int i;
    if (s->dist.zero == 3) return; /* the copies are shards, cast from the masters' shards (dpprof__z3_cast) */
    for (i = first; i < last; i++) {
        dpprof_param *p = &s->model.params[i];
        dpprof_cost c;
        if (!p->wl.n || p->bf16_only || (only_trainable && !p->trainable)) continue;
        c.flops = (double)p->wl.n;
        c.bytes = 6.0 * (double)p->wl.n;
        DPPROF__OPX(s, "cast_bf16", c, (void)0, dpprof_cast_bf16_gpu((dpprof_bf16 *)p->wl.data, (const float *)p->w.data, (size_t)p->wl.n));
    }
}

/* cuda: the driver's used bytes (less those used before the session) as the open phase record ends */
static void dpprof__phase_driver(dpprof_session *s) {
#if DPPROF__CUDA
    size_t k, old = s->obs.cap_ph_drv, j, used = 0;
    if (s->backend != DPPROF_BACKEND_CUDA || s->prof.cur_phase == DPPROF_PHASE_NONE || !s->prof.n_phases) return;
    k = s->prof.n_phases - 1;
    if (dpprof__grow((void **)&s->obs.ph_drv, &s->obs.cap_ph_drv, k + 1, sizeof(double)) != 0) return; /* its snapshot says null */
    for (j = old; j < s->obs.cap_ph_drv; j++) s->obs.ph_drv[j] = NAN;
    if (dpprof_cuda_mem_used(&used) == DPPROF_OK) s->obs.ph_drv[k] = (double)((int64_t)used - s->gpu.drv_base);
#else
    (void)s;
#endif
}

static void dpprof__phase_end(dpprof_session *s) {
    dpprof__phase_driver(s);
    dpprof_phase_end(&s->prof);
}

static int dpprof__load_data(dpprof_session *s);

static int dpprof__build_model(dpprof_session *s) {
    const dpprof_shape *h = &s->sh;
    int l, i, base_trains, head_trains;
    char name[64];
    s->model.params = (dpprof_param *)DPPROF_MALLOC(sizeof(dpprof_param) * (size_t)(3 + 3 * DPPROF__P_PER_LAYER * h->L));
    s->model.lora = (int *)DPPROF_MALLOC(sizeof(int) * (size_t)(DPPROF__P_PER_LAYER * h->L + 1));
    if (!s->model.lora) return dpprof__fail(DPPROF_ERR_OOM, "cannot allocate the lora table");
    for (i = 0; i < DPPROF__P_PER_LAYER * h->L; i++) s->model.lora[i] = -1;
    if (!s->model.params) return dpprof__fail(DPPROF_ERR_OOM, "cannot allocate the parameter table");
    DPPROF__TRY(dpprof_phase_begin(&s->prof, DPPROF_PHASE_MODEL_LOADED, -1));
    /* cuBLAS's workspace and the kernels' scratch: one tracked allocation on every backend, so that
       dry and cpu report what the gpu holds */
    DPPROF__TRY(dpprof__talloc(s, &s->model.ws, (int64_t)DPPROF_WORKSPACE_BYTES, 1, DPPROF_CAT_WORKSPACE, DPPROF_MOD_OTHER, 0));
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA && dpprof_cuda_set_workspace(s->model.ws.data, (size_t)s->model.ws.n) != DPPROF_OK)
        return dpprof__fail(DPPROF_ERR_CUDA, "%s", dpprof_last_error());
    if (s->backend == DPPROF_BACKEND_CUDA && s->cfg.attention == DPPROF_ATTENTION_CUDNN) {
        /* cuDNN's plans at the physical batch (a smaller last one builds its own at its first use, within this
           workspace), built now so that no step times them; the workspace is at least what they need */
        size_t need = 0;
        int det = 0;
        if (dpprof_cudnn_attention_plan(s->cfg.physical_batch, s->cfg.seq, s->sh.NH, s->sh.NKV, s->sh.HS, &need, &det) != DPPROF_OK)
            return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.attention = cudnn: %s", dpprof_last_error());
        if ((int64_t)need > s->cfg.attention_workspace) s->cfg.attention_workspace = (int64_t)need;
        s->gpu.attn_deterministic = det;
    }
#endif
    if (s->cfg.attention_workspace > 0)
        DPPROF__TRY(dpprof__talloc(s, &s->model.attn_ws, s->cfg.attention_workspace, 1, DPPROF_CAT_WORKSPACE, DPPROF_MOD_ATTENTION, 0));
    /* lora: only the adapters (and the head where it trains) train, the base model is frozen: no gradient, no
       optimizer state, and in bf16 no fp32 master. a tied head is the embedding's matrix: it trains, through both
       of its uses, or is frozen with it */
    base_trains = !s->cfg.lora_rank;
    head_trains = dpprof__head_trains(&s->cfg);
    s->model.p_emb = s->model.n_params;
    DPPROF__TRY(dpprof__add_param(s, "model.embed_tokens.weight", h->V, h->C, DPPROF_MOD_EMBEDDING, -1, h->tied ? head_trains : base_trains));
    for (l = 0; l < h->L; l++) {
#define DPPROF__LP(suffix, r, c, mod)                             \
    snprintf(name, sizeof name, "model.layers.%d.%s", l, suffix); \
    DPPROF__TRY(dpprof__add_param(s, name, r, c, DPPROF_MOD_##mod, l, base_trains))
        DPPROF__LP("input_layernorm.weight", 1, h->C, NORM);
        DPPROF__LP("self_attn.q_proj.weight", h->NH * h->HS, h->C, ATTENTION);
        DPPROF__LP("self_attn.k_proj.weight", h->NKV * h->HS, h->C, ATTENTION);
        DPPROF__LP("self_attn.v_proj.weight", h->NKV * h->HS, h->C, ATTENTION);
        DPPROF__LP("self_attn.o_proj.weight", h->C, h->NH * h->HS, ATTENTION);
        DPPROF__LP("post_attention_layernorm.weight", 1, h->C, NORM);
        DPPROF__LP("mlp.gate_proj.weight", h->F, h->C, MLP);
        DPPROF__LP("mlp.up_proj.weight", h->F, h->C, MLP);
        DPPROF__LP("mlp.down_proj.weight", h->C, h->F, MLP);
#undef DPPROF__LP
    }
    s->model.p_normf = s->model.n_params;
    DPPROF__TRY(dpprof__add_param(s, "model.norm.weight", 1, h->C, DPPROF_MOD_NORM, -1, base_trains));
    /* tied: the lm head is the embedding's matrix, no tensor of its own (the dump omits lm_head.weight, as
       Hugging Face does for tie_word_embeddings) */
    s->model.p_head = h->tied ? s->model.p_emb : s->model.n_params;
    if (h->tied) {
    } else if (s->cfg.task == DPPROF_TASK_LM) DPPROF__TRY(dpprof__add_param(s, "lm_head.weight", h->V, h->C, DPPROF_MOD_HEAD, -1, head_trains));
    else DPPROF__TRY(dpprof__add_param(s, "score.weight", h->K, h->C, DPPROF_MOD_HEAD, -1, head_trains));
    if (s->cfg.lora_rank) { /* adapters after the base table: A (r, IC) and B (OC, r) per adapted projection */
        int mask = dpprof__lora_mask(s->cfg.lora_targets), j, r = s->cfg.lora_rank;
        s->model.lora_scale = s->cfg.lora_alpha / r;
        for (l = 0; l < h->L; l++)
            for (j = 0; j < DPPROF__P_PER_LAYER; j++) {
                const dpprof_param *bp = &s->model.params[1 + l * DPPROF__P_PER_LAYER + j];
                int rows = bp->rows, cols = bp->cols;
                if (!(mask >> j & 1)) continue;
                s->model.lora[l * DPPROF__P_PER_LAYER + j] = s->model.n_params;
                snprintf(name, sizeof name, "model.layers.%d.%s.lora_A.weight", l, dpprof__proj_names[j]);
                DPPROF__TRY(dpprof__add_param_cat(s, name, r, cols, DPPROF_CAT_LORA, DPPROF_MOD_LORA, l, 1));
                snprintf(name, sizeof name, "model.layers.%d.%s.lora_B.weight", l, dpprof__proj_names[j]);
                DPPROF__TRY(dpprof__add_param_cat(s, name, rows, r, DPPROF_CAT_LORA, DPPROF_MOD_LORA, l, 1));
            }
    }
    for (i = 0; i < s->model.n_params; i++) dpprof__init_param(s, i);
    dpprof__cast_weights(s, 0, s->model.n_params, 0);
    DPPROF__TRY(dpprof__dist_params(s));
    dpprof__phase_end(s);

    /* the data set prepared on the host (--data read, checked and indexed; synthetic samples need nothing):
       no device bytes, the batches reach the device in each step's forward (category data) */
    DPPROF__TRY(dpprof_phase_begin(&s->prof, DPPROF_PHASE_DATA_SETUP, -1));
    DPPROF__TRY(dpprof__load_data(s));
    dpprof__phase_end(s);

    /* gradients and optimizer states are persistent: allocated once, like a framework after step 1 */
    DPPROF__TRY(dpprof_phase_begin(&s->prof, DPPROF_PHASE_OPTIMIZER_SETUP, -1));
    for (i = 0; i < s->model.n_params; i++) {
        dpprof_param *p = &s->model.params[i];
        if (!p->trainable || s->dist.zero >= 2) continue; /* zero >= 2: a shard, and full size only in passing */
        DPPROF__TRY(dpprof__talloc(s, &p->g, p->w.n, DPPROF__R, DPPROF_CAT_GRADIENTS, p->module, 1));
    }
    DPPROF__TRY(dpprof__dist_states(s));
    if (s->cfg.optimizer == DPPROF_OPT_ADAM && !s->dist.zero) {
        for (i = 0; i < s->model.n_params; i++) {
            dpprof_param *p = &s->model.params[i];
            if (!p->trainable) continue;
            DPPROF__TRY(dpprof__talloc(s, &p->m, p->w.n, DPPROF__R, DPPROF_CAT_OPTIMIZER_STATES, DPPROF_MOD_OPTIMIZER, 1));
            DPPROF__TRY(dpprof__talloc(s, &p->v, p->w.n, DPPROF__R, DPPROF_CAT_OPTIMIZER_STATES, DPPROF_MOD_OPTIMIZER, 1));
        }
    }
    dpprof__phase_end(s);
    return DPPROF_OK;
}

/* ---- data ------------------------------------------------------------------------------------ */
static int dpprof__load_data(dpprof_session *s) {
    FILE *f;
    long len;
    size_t i, start;
    int line_no;
    const char *path = s->cfg.data_path;
    if (!path) return DPPROF_OK;
    f = fopen(path, "rb");
    if (!f) return dpprof__fail(DPPROF_ERR_IO, "config.data_path %s: cannot open: %s", path, strerror(errno));
    /* a directory opens, and its size reads as LONG_MAX: reading it is what fails */
    if (getc(f) == EOF && ferror(f)) {
        int e = errno;
        fclose(f);
        return dpprof__fail(DPPROF_ERR_IO, "config.data_path %s: cannot read: %s", path, strerror(e));
    }
    if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        return dpprof__fail(DPPROF_ERR_IO, "config.data_path %s: cannot read its size (not a regular file?)", path);
    }
    s->data.text = (unsigned char *)DPPROF_MALLOC((size_t)len + 1);
    if (!s->data.text) {
        fclose(f);
        return dpprof__fail(DPPROF_ERR_OOM, "config.data_path %s: cannot hold %ld bytes", path, len);
    }
    if (len && fread(s->data.text, 1, (size_t)len, f) != (size_t)len) {
        fclose(f);
        return dpprof__fail(DPPROF_ERR_IO, "config.data_path %s: read failed: %s", path, strerror(errno));
    }
    fclose(f);
    s->data.text_len = (size_t)len;
    if (s->cfg.task == DPPROF_TASK_LM) {
        if (s->data.text_len < (size_t)s->cfg.seq + 1)
            return dpprof__fail(DPPROF_ERR_INVALID, "config.data_path %s: %zu bytes is too short for config.seq = %d (needs at least %d bytes)", path, s->data.text_len, s->cfg.seq, s->cfg.seq + 1);
        return DPPROF_OK;
    }
    /* cls: lines "label<TAB>text"; blank lines are skipped */
    for (i = 0; i < s->data.text_len; i++) s->data.n_lines += s->data.text[i] == '\n';
    s->data.n_lines += 1;
    s->data.line_off = (size_t *)DPPROF_MALLOC(sizeof(size_t) * (size_t)s->data.n_lines);
    s->data.line_len = (int *)DPPROF_MALLOC(sizeof(int) * (size_t)s->data.n_lines);
    s->data.line_label = (int *)DPPROF_MALLOC(sizeof(int) * (size_t)s->data.n_lines);
    if (!s->data.line_off || !s->data.line_len || !s->data.line_label) return dpprof__fail(DPPROF_ERR_OOM, "config.data_path %s: cannot index its lines", path);
    s->data.n_lines = 0;
    for (start = 0, line_no = 1; start < s->data.text_len; line_no++) {
        size_t end = start, tab;
        long label = 0;
        int digits = 0;
        while (end < s->data.text_len && s->data.text[end] != '\n') end++;
        if (end == start || (end == start + 1 && s->data.text[start] == '\r')) {
            start = end + 1;
            continue;
        }
        for (tab = start; tab < end && s->data.text[tab] != '\t'; tab++) {
            if (s->data.text[tab] < '0' || s->data.text[tab] > '9' || ++digits > 9) break;
            label = label * 10 + (s->data.text[tab] - '0');
        }
        if (tab >= end || s->data.text[tab] != '\t' || digits == 0)
            return dpprof__fail(DPPROF_ERR_INVALID, "config.data_path %s:%d: expected 'label<TAB>text' with an integer label in [0, %d)", path, line_no, s->cfg.classes);
        if (label >= s->cfg.classes)
            return dpprof__fail(DPPROF_ERR_INVALID, "config.data_path %s:%d: label %ld is not in [0, %d) (set config.classes)", path, line_no, label, s->cfg.classes);
        if (end > tab + 1 && s->data.text[end - 1] == '\r') end--;
        if (end == tab + 1) return dpprof__fail(DPPROF_ERR_INVALID, "config.data_path %s:%d: empty text after the label", path, line_no);
        s->data.line_off[s->data.n_lines] = tab + 1;
        s->data.line_len[s->data.n_lines] = (int)(end - tab - 1 > (size_t)INT32_MAX ? INT32_MAX : end - tab - 1);
        s->data.line_label[s->data.n_lines] = (int)label;
        s->data.n_lines++;
        while (start < s->data.text_len && s->data.text[start] != '\n') start++;
        start++;
    }
    if (!s->data.n_lines) return dpprof__fail(DPPROF_ERR_INVALID, "config.data_path %s: no 'label<TAB>text' lines", path);
    return DPPROF_OK;
}

/* sample g of the stream (g = step * batch + position): the same sample whatever the physical split.
   synthetic lm: arithmetic progressions mod V with stride 1..3 (learnable from two tokens);
   synthetic cls: the class is the stride - 1. text: random windows (lm) or random lines (cls). */
static void dpprof__sample(const dpprof_session *s, uint64_t g, int *tok, int *tgt) {
    const int T = s->cfg.seq, V = s->sh.V;
    dpprof_u32x4 ctr, r;
    uint64_t r64;
    int t;
    ctr.v[0] = (uint32_t)g;
    ctr.v[1] = (uint32_t)(g >> 32);
    ctr.v[2] = (uint32_t)DPPROF__STREAM_DATA;
    ctr.v[3] = (uint32_t)(DPPROF__STREAM_DATA >> 32);
    r = dpprof_philox4x32_10(ctr, (uint32_t)s->cfg.seed, (uint32_t)(s->cfg.seed >> 32));
    r64 = (uint64_t)r.v[0] | ((uint64_t)r.v[1] << 32);
    if (!s->data.text) {
        uint64_t start = r.v[2] % (uint32_t)V;
        int label = s->cfg.task == DPPROF_TASK_CLS ? (int)(r.v[3] % (uint32_t)s->sh.K) : (int)(r.v[3] % 3u);
        uint64_t d = (uint64_t)label + 1;
        for (t = 0; t < T; t++) tok[t] = (int)((start + d * (uint64_t)t) % (uint64_t)V);
        if (s->cfg.task == DPPROF_TASK_CLS) tgt[0] = label;
        else
            for (t = 0; t < T; t++) tgt[t] = (int)((start + d * (uint64_t)(t + 1)) % (uint64_t)V);
        return;
    }
    if (s->cfg.task == DPPROF_TASK_LM) {
        size_t off = (size_t)(r64 % (uint64_t)(s->data.text_len - (size_t)T));
        for (t = 0; t < T; t++) {
            tok[t] = s->data.text[off + (size_t)t];
            tgt[t] = s->data.text[off + (size_t)t + 1];
        }
    } else {
        int li = (int)(r64 % (uint64_t)s->data.n_lines), m = s->data.line_len[li] < T ? s->data.line_len[li] : T;
        /* left-padded with byte 0 so the last position, which the head reads, is always text */
        for (t = 0; t < T; t++) tok[t] = t < T - m ? 0 : s->data.text[s->data.line_off[li] + (size_t)(t - (T - m))];
        tgt[0] = s->data.line_label[li];
    }
}

DPPROF_API int dpprof_session_batch(dpprof_session *s, int step, int first, int n, int *tokens, int *targets) {
    int i, T = s->cfg.seq, tw = s->cfg.task == DPPROF_TASK_LM ? T : 1;
    if (step < 0 || first < 0 || n < 0) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_batch: negative step/first/n");
    for (i = 0; i < n; i++)
        dpprof__sample(s, (uint64_t)step * (uint64_t)s->cfg.batch + (uint64_t)(first + i), tokens + (size_t)i * T, targets + (size_t)i * tw);
    return DPPROF_OK;
}

/* ---- 5.5 forward -------------------------------------------------------------------------------------------
   One physical batch through the decoder layers and the head: every activation the backward needs is allocated
   here (or, with config.checkpoint = layers, each layer's input alone), charged to its module. */
/* projection j of layer l: y (N,OC) = x W^T, plus (alpha/r) (x A^T) B^T when it has an adapter. y NULL: the
   adapter's input u = (alpha/r) x A^T alone (the recomputation of down, whose output it does not need) */
static int dpprof__proj_fwd(dpprof_session *s, int l, int j, dpprof_tensor *y, dpprof_tensor *x, int N, int IC, int OC) {
    const int P = 1 + l * DPPROF__P_PER_LAYER + j, E = s->elem, r = s->cfg.lora_rank;
    const int la = s->model.lora ? s->model.lora[l * DPPROF__P_PER_LAYER + j] : -1;
    dpprof_tensor tmp, *u;
    if (y) DPPROF__OP(s, matmul_fwd, (N, IC, OC, E), (DPPROF__F(*y), DPPROF__F(*x), DPPROF__WM(s, P), N, IC, OC));
    if (la < 0) return DPPROF_OK;
    u = &s->model.a.lay[l].lu[j];
    DPPROF__A(*u, (int64_t)N * r, ACTIVATIONS, LORA);
    DPPROF__OP(s, matmul_fwd, (N, IC, r, E), (DPPROF__F(*u), DPPROF__F(*x), DPPROF__WM(s, la), N, IC, r));
    DPPROF__OP(s, scale, ((size_t)N * r, E), (DPPROF__F(*u), DPPROF__F(*u), (size_t)N * r, s->model.lora_scale));
    if (!y) return DPPROF_OK;
    DPPROF__A(tmp, (int64_t)N * OC, ACTIVATIONS, LORA);
    DPPROF__OP(s, matmul_fwd, (N, r, OC, E), (DPPROF__F(tmp), DPPROF__F(*u), DPPROF__WM(s, la + 1), N, r, OC));
    DPPROF__OP(s, add, ((size_t)N * OC, E), (DPPROF__F(*y), DPPROF__F(*y), DPPROF__F(tmp), (size_t)N * OC));
    dpprof__tfree(s, &tmp);
    return DPPROF_OK;
}

/* decoder layer l on its input x, up to the down projection's input: ln1 where own_ln1 (layer 0, and the
   recomputation; a later layer's ln1 comes with the residual add that ends the layer before), q, k, v (after
   rope), att, lse, xa, ln2, gate, up, h, and the adapters' inputs. recompute (--checkpoint layers, in the
   backward): down's adapter input too, and not down itself, whose output, the next layer's input, is kept */
static int dpprof__layer_fwd(dpprof_session *s, int n, int l, dpprof_tensor *x, int own_ln1, int recompute) {
    const dpprof_shape *h = &s->sh;
    const int T = s->cfg.seq, C = h->C, NH = h->NH, NKV = h->NKV, HS = h->HS, F = h->F, E = s->elem;
    const int N = n * T, QD = NH * HS, KD = NKV * HS, P = 1 + l * DPPROF__P_PER_LAYER;
    const float eps = (float)h->norm_eps;
    dpprof__layer_acts *y = &s->model.a.lay[l];
    if (own_ln1) {
        DPPROF__A(y->ln1, (int64_t)N * C, ACTIVATIONS, NORM);
        DPPROF__AR(y->rstd1, N, ACTIVATIONS, NORM);
        DPPROF__OP(s, rmsnorm_fwd, (N, C, E), (DPPROF__F(y->ln1), DPPROF__F(y->rstd1), DPPROF__F(*x), DPPROF__W(s, P + DPPROF__P_LN1), N, C, eps));
    }
    DPPROF__A(y->q, (int64_t)N * QD, ACTIVATIONS, ATTENTION);
    DPPROF__A(y->k, (int64_t)N * KD, ACTIVATIONS, ATTENTION);
    DPPROF__A(y->v, (int64_t)N * KD, ACTIVATIONS, ATTENTION);
    DPPROF__TRY(dpprof__proj_fwd(s, l, DPPROF__P_Q, &y->q, &y->ln1, N, C, QD));
    DPPROF__TRY(dpprof__proj_fwd(s, l, DPPROF__P_K, &y->k, &y->ln1, N, C, KD));
    DPPROF__TRY(dpprof__proj_fwd(s, l, DPPROF__P_V, &y->v, &y->ln1, N, C, KD));
    DPPROF__OP(s, rope_fwd, (n, T, NH, HS, E), (DPPROF__F(y->q), n, T, NH, HS, h->rope_theta));
    DPPROF__OP(s, rope_fwd, (n, T, NKV, HS, E), (DPPROF__F(y->k), n, T, NKV, HS, h->rope_theta));
    DPPROF__A(y->att, (int64_t)N * QD, ACTIVATIONS, ATTENTION);
    DPPROF__AR(y->lse, (int64_t)n * NH * T, ACTIVATIONS, ATTENTION);
    DPPROF__OPX(s, "attention_fwd", dpprof_attention_fwd_cost(n, T, NH, NKV, HS, E),
                dpprof_attention_fwd_ref(DPPROF__F(y->att), DPPROF__F(y->lse), DPPROF__F(y->q), DPPROF__F(y->k), DPPROF__F(y->v), n, T, NH, NKV, HS),
                DPPROF__ATTN(s, fwd, (DPPROF__F(y->att), DPPROF__F(y->lse), DPPROF__F(y->q), DPPROF__F(y->k), DPPROF__F(y->v), n, T, NH, NKV, HS)));
    DPPROF__A(y->xa, (int64_t)N * C, ACTIVATIONS, ATTENTION);
    DPPROF__TRY(dpprof__proj_fwd(s, l, DPPROF__P_O, &y->xa, &y->att, N, QD, C));
    DPPROF__A(y->ln2, (int64_t)N * C, ACTIVATIONS, NORM);
    DPPROF__AR(y->rstd2, N, ACTIVATIONS, NORM);
    DPPROF__OP(s, add_rmsnorm_fwd, (N, C, E), (DPPROF__F(y->ln2), DPPROF__F(y->rstd2), DPPROF__F(y->xa), DPPROF__F(*x), DPPROF__W(s, P + DPPROF__P_LN2), N, C, eps));
    DPPROF__A(y->gate, (int64_t)N * F, ACTIVATIONS, MLP);
    DPPROF__A(y->up, (int64_t)N * F, ACTIVATIONS, MLP);
    DPPROF__TRY(dpprof__proj_fwd(s, l, DPPROF__P_GATE, &y->gate, &y->ln2, N, C, F));
    DPPROF__TRY(dpprof__proj_fwd(s, l, DPPROF__P_UP, &y->up, &y->ln2, N, C, F));
    DPPROF__A(y->h, (int64_t)N * F, ACTIVATIONS, MLP);
    DPPROF__OP(s, swiglu_fwd, ((size_t)N * F, E), (DPPROF__F(y->h), DPPROF__F(y->gate), DPPROF__F(y->up), (size_t)N * F));
    if (recompute) DPPROF__TRY(dpprof__proj_fwd(s, l, DPPROF__P_DOWN, NULL, &y->h, N, F, C));
    return DPPROF_OK;
}

/* what decoder layer l holds besides its output xm: freed (--checkpoint layers, after the layer's forward and
   after its backward; a failed step) */
static void dpprof__layer_free(dpprof_session *s, int l) {
    dpprof__layer_acts *y = &s->model.a.lay[l];
    dpprof_tensor *t[] = {&y->ln1, &y->rstd1, &y->q, &y->k, &y->v, &y->att, &y->lse, &y->xa, &y->ln2, &y->rstd2, &y->gate, &y->up, &y->h};
    size_t j;
    for (j = 0; j < sizeof t / sizeof t[0]; j++) dpprof__tfree(s, t[j]);
    for (j = 0; j < DPPROF__P_PER_LAYER; j++) dpprof__tfree(s, &y->lu[j]);
}

static int dpprof__forward(dpprof_session *s, int n) {
    const dpprof_shape *h = &s->sh;
    const int T = s->cfg.seq, C = h->C, F = h->F, E = s->elem;
    const int N = n * T;
    const float eps = (float)h->norm_eps;
    dpprof__acts *a = &s->model.a;
    dpprof_tensor *x;
    int l;
    DPPROF__TRY(dpprof__z3_use(s, 0, 1));
    DPPROF__A(a->x0, (int64_t)N * C, ACTIVATIONS, EMBEDDING);
    if (s->model.params[s->model.p_emb].bf16_only || (s->dist.zero == 3 && s->model.params[s->model.p_emb].wl.n))
        /* a frozen table in bf16 alone, or a tied head's matrix gathered as its bf16 copy (zero 3): the same values as
           the master's rounded into the bf16 output (cuda, dry: the cpu computes in fp32) */
        DPPROF__OPX(s, "embedding_fwd", dpprof_embedding_fwd_cost(N, C, E), (void)0,
                    dpprof_embedding_fwd_bf16_gpu(DPPROF__F(a->x0), DPPROF__I(a->tokens), (const dpprof_bf16 *)s->model.params[s->model.p_emb].wl.data, N, C));
    else DPPROF__OP(s, embedding_fwd, (N, C, E), (DPPROF__F(a->x0), DPPROF__I(a->tokens), DPPROF__W(s, s->model.p_emb), N, C));
    dpprof__z3_done(s, 0);
    x = &a->x0;
    for (l = 0; l < h->L; l++) {
        dpprof__layer_acts *y = &a->lay[l];
        const int P = 1 + l * DPPROF__P_PER_LAYER;
        DPPROF__TRY(dpprof__z3_use(s, 1 + l, 1));
        DPPROF__TRY(dpprof__layer_fwd(s, n, l, x, !l, 0));
        DPPROF__A(y->xm, (int64_t)N * C, ACTIVATIONS, MLP);
        DPPROF__TRY(dpprof__proj_fwd(s, l, DPPROF__P_DOWN, &y->xm, &y->h, N, F, C));
        { /* the residual add, and the norm that reads its sum next: the next layer's ln1 or the final norm */
            const int last = l == h->L - 1;
            dpprof_tensor *o = last ? &a->lnf : &a->lay[l + 1].ln1, *r = last ? &a->rstdf : &a->lay[l + 1].rstd1;
            DPPROF__A(*o, (int64_t)N * C, ACTIVATIONS, NORM);
            DPPROF__AR(*r, N, ACTIVATIONS, NORM);
            DPPROF__OP(s, add_rmsnorm_fwd, (N, C, E), (DPPROF__F(*o), DPPROF__F(*r), DPPROF__F(y->xm), DPPROF__F(y->xa), DPPROF__W(s, last ? s->model.p_normf : P + DPPROF__P_PER_LAYER + DPPROF__P_LN1), N, C, eps));
        }
        /* --checkpoint layers: the layer keeps its output xm (the next layer's input) alone */
        if (s->cfg.checkpoint == DPPROF_CHECKPOINT_LAYERS) dpprof__layer_free(s, l);
        dpprof__z3_done(s, 1 + l);
        x = &y->xm;
    }
    DPPROF__TRY(dpprof__z3_use(s, h->L + 1, 1));
    if (!h->L) {
        DPPROF__A(a->lnf, (int64_t)N * C, ACTIVATIONS, NORM);
        DPPROF__AR(a->rstdf, N, ACTIVATIONS, NORM);
        DPPROF__OP(s, rmsnorm_fwd, (N, C, E), (DPPROF__F(a->lnf), DPPROF__F(a->rstdf), DPPROF__F(*x), DPPROF__W(s, s->model.p_normf), N, C, eps));
    }
    dpprof__z3_done(s, h->L + 1);
    if (s->cfg.task == DPPROF_TASK_LM) {
        DPPROF__A(a->logits, (int64_t)N * h->V, ACTIVATIONS, HEAD);
        DPPROF__OP(s, matmul_fwd, (N, C, h->V, E), (DPPROF__F(a->logits), DPPROF__F(a->lnf), DPPROF__WM(s, s->model.p_head), N, C, h->V));
        DPPROF__AR(a->losses, n, ACTIVATIONS, HEAD);
        DPPROF__OP(s, crossentropy_fwd, (n, T, h->V, E), (DPPROF__F(a->losses), DPPROF__F(a->logits), DPPROF__I(a->targets), n, T, h->V));
    } else {
        DPPROF__A(a->last, (int64_t)n * C, ACTIVATIONS, HEAD);
        DPPROF__OP(s, last_token_fwd, (n, T, C, E), (DPPROF__F(a->last), DPPROF__F(a->lnf), n, T, C));
        DPPROF__A(a->logits, (int64_t)n * h->K, ACTIVATIONS, HEAD);
        DPPROF__OP(s, matmul_fwd, (n, C, h->K, E), (DPPROF__F(a->logits), DPPROF__F(a->last), DPPROF__WM(s, s->model.p_head), n, C, h->K));
        DPPROF__AR(a->losses, n, ACTIVATIONS, HEAD);
        DPPROF__OP(s, crossentropy_fwd, (n, 1, h->K, E), (DPPROF__F(a->losses), DPPROF__F(a->logits), DPPROF__I(a->targets), n, 1, h->K));
    }
    dpprof__z3_done(s, h->L + 2);
    return DPPROF_OK;
}

/* ---- 5.6 DP phases: per-sample norms, the keep-list, clipping ----------------------------------------------
   The backward of each op with DP-SGD in it: a linear layer's gradient summed (vanilla), clipped and summed,
   or its per-sample norm by the method chosen for it (per-sample gradient, gram matrices, flash/tiled norms);
   what book-keeping keeps for its second pass (the keep-list); the clip factors from the norms. */
/* what one backward pass computes for every trainable tensor */
enum {
    DPPROF__MODE_SUM,
    DPPROF__MODE_CLIPSUM,
    DPPROF__MODE_NORM
};
/* how a tensor's per-sample norm is computed (the result json's layers[].method) */
enum {
    DPPROF__M_SUMMED,
    DPPROF__M_FROZEN,
    DPPROF__M_PSG,
    DPPROF__M_GRAM,
    DPPROF__M_FLASH_GRAM,
    DPPROF__M_FLASH_PSG,
    DPPROF__M_VECTOR,
    DPPROF__M_TOKEN_PAIRS,
    DPPROF__M_COUNT
};
static const char *const dpprof__method_names[] = {"summed (non-private)", "frozen", "per-sample gradient materialised", "gram T x T materialised",
                                                   "flash: tiled gram", "flash: tiled per-sample gradient", "per-sample vector", "token-pair gram",
                                                   "per-token gradients summed per sample"};

typedef struct dpprof__cache_ent {
    int p, embed;          /* parameter; 1: embedding (x holds the tokens) */
    dpprof_tensor *x, *dy; /* kept input and output gradient */
    int T, IC, OC;
} dpprof__cache_ent;

#define DPPROF__D(t) ((double *)(t).data)
/* per-sample squared norms of tensor p, and its clip factors: both (n) vectors */
#define DPPROF__NORM2(s, p) (DPPROF__D((s)->dps.norm2) ? DPPROF__D((s)->dps.norm2) + (size_t)(p) * (size_t)(s)->dps.bw_n : (double *)NULL)
#define DPPROF__CLIP(s, p) (DPPROF__D((s)->dps.clip) ? DPPROF__D((s)->dps.clip) + (s)->cfg.per_layer_clipping * (size_t)(p) * (size_t)(s)->dps.bw_n : (double *)NULL)

/* hand a tensor to the keep-list (book-keeping holds it until the clip phase). the original's
   struct keeps its data pointer for the rest of the backward; freeing it there only forgets it.
   as_hook: it becomes an activation_hooks allocation (a cached output gradient) */
static int dpprof__keep(dpprof_session *s, dpprof_tensor *t, int as_hook, dpprof_tensor **out) {
    int i;
    if (t->kept) {
        for (i = s->dps.n_kept; i-- > 0;)
            if (s->dps.kept_from[i] == t) {
                *out = &s->dps.kept[i];
                return DPPROF_OK;
            }
        return dpprof__fail(DPPROF_ERR_INVALID, "internal: a kept tensor lost its slot");
    }
    if (s->dps.n_kept >= s->dps.cap_kept) return dpprof__fail(DPPROF_ERR_OVERFLOW, "internal: the keep-list is full (%d)", s->dps.cap_kept);
    for (i = 0; i < s->dps.n_kept; i++)
        if (s->dps.kept_from[i] == t) s->dps.kept_from[i] = NULL; /* an older tensor of the same variable */
    i = s->dps.n_kept++;
    s->dps.kept[i] = *t;
    s->dps.kept_from[i] = t;
    DPPROF__TRY(dpprof_track_move(&s->prof, t, &s->dps.kept[i]));
    t->kept = 1;
    if (as_hook) {
        DPPROF__TRY(dpprof_track_retag(&s->prof, &s->dps.kept[i], DPPROF_CAT_ACTIVATION_HOOKS, t->module));
        s->dps.kept[i].category = DPPROF_CAT_ACTIVATION_HOOKS;
    }
    *out = &s->dps.kept[i];
    return DPPROF_OK;
}

/* a copy into the keep-list, for an output gradient the backward keeps changing (the residual's) */
static int dpprof__keep_copy(dpprof_session *s, const dpprof_tensor *t, int module, dpprof_tensor **out) {
    int i;
    dpprof_cost c;
    if (s->dps.n_kept >= s->dps.cap_kept) return dpprof__fail(DPPROF_ERR_OVERFLOW, "internal: the keep-list is full (%d)", s->dps.cap_kept);
    i = s->dps.n_kept;
    DPPROF__TRY(dpprof__talloc(s, &s->dps.kept[i], t->n, t->elem_size, DPPROF_CAT_ACTIVATION_HOOKS, module, 0));
    s->dps.kept_from[i] = NULL;
    s->dps.n_kept++;
    c.flops = 0;
    c.bytes = 2.0 * (double)t->n * t->elem_size;
    DPPROF__OPX(s, "keep_copy", c, memcpy(s->dps.kept[i].data, t->data, (size_t)t->n * (size_t)t->elem_size),
                (void)dpprof_cuda_copy(s->dps.kept[i].data, t->data, (size_t)t->n * (size_t)t->elem_size, DPPROF_COPY_D2D));
    *out = &s->dps.kept[i];
    return DPPROF_OK;
}

static int dpprof__cache(dpprof_session *s, int p, int embed, dpprof_tensor *x, dpprof_tensor *dy, int T, int IC, int OC) {
    dpprof__cache_ent *e;
    if (s->dps.n_cache >= s->dps.cap_kept) return dpprof__fail(DPPROF_ERR_OVERFLOW, "internal: the clip cache is full");
    e = &s->dps.cache[s->dps.n_cache++];
    e->p = p;
    e->embed = embed;
    e->x = x;
    e->dy = dy;
    e->T = T;
    e->IC = IC;
    e->OC = OC;
    return DPPROF_OK;
}

/* ghost's shared input gram, freed */
static void dpprof__xg_release(dpprof_session *s) {
    dpprof__tfree(s, &s->dps.xg);
    s->dps.xg_src = NULL;
}

/* where a flash flavour's norms run (the plan's gram_on, psg_on): cuBLAS blocks on (on 1) before the op, off (0)
   after it */
static void dpprof__norms_cublas(const dpprof_session *s, dpprof_norms_on where, int on) {
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA && where == DPPROF_NORMS_CUBLAS) dpprof__tune_norms(on);
#else
    (void)s, (void)where, (void)on;
#endif
}

/* flash's gram norms of the layers waiting in s->fg (they read one input x): one op for the group, whose
   kernel makes the input's gram once (dpprof_linear_sqnorm_gram_group_gpu). the op is linear_sqnorm_gram
   with the group's cost; the cpu reference takes the layers one by one (the same sums) */
static void dpprof__flash_group(dpprof_session *s) {
    const int n = s->dps.bw_n, T = s->dps.bw_T, m = s->dps.fg_n, E = s->elem;
    int j, oc = 0;
    double *norm2[3];
    const dpprof_real *dy[3];
    if (!m) return;
    s->dps.fg_n = 0;
    for (j = 0; j < m; j++) {
        norm2[j] = DPPROF__NORM2(s, s->dps.fg_p[j]);
        dy[j] = DPPROF__F(*s->dps.fg_dy[j]);
        oc += s->dps.fg_oc[j];
    }
    {
        const int IC = s->model.params[s->dps.fg_p[0]].cols;
        const dpprof_real *x = DPPROF__F(*s->dps.fg_x);
        dpprof__norms_cublas(s, s->plan.gram_on, 1);
        DPPROF__OPX(s, "linear_sqnorm_gram", dpprof_linear_sqnorm_gram_group_cost(n, T, IC, oc, m, E), dpprof_linear_sqnorm_gram_group_ref(norm2, dy, s->dps.fg_oc, m, x, n, T, IC),
                    dpprof_linear_sqnorm_gram_group_gpu(norm2, dy, s->dps.fg_oc, m, x, n, T, IC));
        dpprof__norms_cublas(s, s->plan.gram_on, 0);
    }
    s->dps.fg_x = NULL;
}

/* the backward of y = x W^T for parameter p: dx += dy W, and the weight gradient the pass wants.
   dy_shared: dy is a buffer the backward keeps accumulating into (book-keeping must copy it) */
static int dpprof__linear_bwd(dpprof_session *s, int p, dpprof_tensor *dx, dpprof_tensor *dy, int dy_shared, dpprof_tensor *x, int T, int IC, int OC) {
    const dpprof_param *P = &s->model.params[p];
    const int n = s->dps.bw_n, N = n * T, E = s->elem;
    dpprof_tensor gg, *kx = NULL, *kdy = NULL;
    if (dx) DPPROF__OPX(s, "matmul_bwd_dinp", dpprof__gemm_cost(N, OC, IC, E, E), dpprof_matmul_bwd_ref(DPPROF__F(*dx), NULL, DPPROF__F(*dy), DPPROF__F(*x), DPPROF__WM(s, p), N, IC, OC),
                        dpprof_matmul_bwd_gpu(DPPROF__F(*dx), NULL, DPPROF__F(*dy), DPPROF__F(*x), DPPROF__WM(s, p), N, IC, OC));
    if (!P->trainable) return DPPROF_OK;
    if (s->dps.bw_mode == DPPROF__MODE_SUM) {
        DPPROF__TRY(dpprof__grad_open(s, p));
        DPPROF__OPX(s, "matmul_bwd_dweight", dpprof__gemm_cost(OC, N, IC, E, DPPROF__R), dpprof_matmul_bwd_ref(NULL, DPPROF__G(s, p), DPPROF__F(*dy), DPPROF__F(*x), DPPROF__WM(s, p), N, IC, OC),
                    dpprof_matmul_bwd_gpu(NULL, DPPROF__G(s, p), DPPROF__F(*dy), DPPROF__F(*x), DPPROF__WM(s, p), N, IC, OC));
        dpprof__grad_close_use(s, p, p == s->model.p_emb); /* the tied head: the embedding's backward adds its part */
        return DPPROF_OK;
    }
    if (s->dps.bw_mode == DPPROF__MODE_CLIPSUM) {
        DPPROF__TRY(dpprof__grad_open(s, p));
        DPPROF__OP(s, linear_clipgrad, (n, T, IC, OC, E), (DPPROF__G(s, p), DPPROF__F(*dy), DPPROF__F(*x), DPPROF__CLIP(s, p), n, T, IC, OC));
        dpprof__grad_close_use(s, p, p == s->model.p_emb);
        return DPPROF_OK;
    }
    /* the lm head reaches here as the embedding's tensor only when tied: its own method */
    switch (p == s->model.p_emb ? s->plan.head_method : s->plan.tensor[p].method) {
    case DPPROF__M_PSG: /* opacus: every layer's per-sample gradients live until the clip phase */
        DPPROF__TRY(dpprof__talloc(s, &s->dps.psg[p], (int64_t)n * OC * IC, DPPROF__R, DPPROF_CAT_PER_SAMPLE_GRADIENTS, P->module, 0));
        DPPROF__OP(s, linear_psgrad, (n, T, IC, OC, E), (DPPROF__F(s->dps.psg[p]), DPPROF__F(*dy), DPPROF__F(*x), n, T, IC, OC));
        /* tied: the embedding adds its rows to these before the norm (dpprof__embedding_bwd) */
        if (p != s->model.p_emb) DPPROF__OP(s, psgrad_sqnorm, (n, (size_t)OC * IC, DPPROF__R), (DPPROF__NORM2(s, p), DPPROF__F(s->dps.psg[p]), n, (size_t)OC * IC));
        return DPPROF_OK;
    case DPPROF__M_GRAM: /* ghost: both gram matrices of the physical batch, (n,T,T) each; the input's is shared
                            with the next layers that read the same input (dpprof__proj_bwd's xg_keep) */
        if (!(s->dps.xg.n == (int64_t)n * T * T && s->dps.xg_src == x)) {
            dpprof__xg_release(s);
            DPPROF__TRY(dpprof__talloc(s, &s->dps.xg, (int64_t)n * T * T, DPPROF__R, DPPROF_CAT_TEMP_MATRICES, P->module, 0));
            DPPROF__OP(s, gram, (n, T, IC, E), (DPPROF__F(s->dps.xg), DPPROF__F(*x), n, T, IC));
            s->dps.xg_src = x;
        }
        DPPROF__TRY(dpprof__talloc(s, &gg, (int64_t)n * T * T, DPPROF__R, DPPROF_CAT_TEMP_MATRICES, P->module, 0));
        DPPROF__OP(s, gram, (n, T, OC, E), (DPPROF__F(gg), DPPROF__F(*dy), n, T, OC));
        DPPROF__OP(s, gram_dot, (n, T, DPPROF__R), (DPPROF__NORM2(s, p), DPPROF__F(s->dps.xg), DPPROF__F(gg), n, T));
        dpprof__tfree(s, &gg);
        if (!s->dps.xg_keep) dpprof__xg_release(s);
        break;
    case DPPROF__M_FLASH_GRAM: /* a layer of a group that reads one input (q, k, v; gate, up) waits for the group's
                                  last, which takes the norms of all (dpprof__flash_group); a lone layer at once */
        if (s->dps.fg_n && s->dps.fg_x != x) dpprof__flash_group(s);
        if (s->dps.fg_ok || s->dps.fg_n) {
            s->dps.fg_p[s->dps.fg_n] = p;
            s->dps.fg_oc[s->dps.fg_n] = OC;
            s->dps.fg_dy[s->dps.fg_n++] = dy;
            s->dps.fg_x = x;
            if (!s->dps.fg_ok || s->dps.fg_n == 3) dpprof__flash_group(s);
        } else {
            dpprof__norms_cublas(s, s->plan.gram_on, 1);
            DPPROF__OP(s, linear_sqnorm_gram, (n, T, IC, OC, E), (DPPROF__NORM2(s, p), DPPROF__F(*dy), DPPROF__F(*x), n, T, IC, OC));
            dpprof__norms_cublas(s, s->plan.gram_on, 0);
        }
        break;
    default:
        dpprof__norms_cublas(s, s->plan.psg_on, 1);
        DPPROF__OP(s, linear_sqnorm_psg, (n, T, IC, OC, E), (DPPROF__NORM2(s, p), DPPROF__F(*dy), DPPROF__F(*x), n, T, IC, OC));
        dpprof__norms_cublas(s, s->plan.psg_on, 0);
        break;
    }
    if (s->plan.bookkeeping) { /* book-keeping: the clipped gradient is one gemm over n*T rows once c is known */
        DPPROF__TRY(dpprof__keep(s, x, 0, &kx));
        if (dy_shared) DPPROF__TRY(dpprof__keep_copy(s, dy, P->module, &kdy));
        else DPPROF__TRY(dpprof__keep(s, dy, 1, &kdy));
        DPPROF__TRY(dpprof__cache(s, p, 0, kx, kdy, T, IC, OC));
    }
    return DPPROF_OK;
}

/* rmsnorm with weight p: dinp += ..., and the weight's gradient; its per-sample gradients are
   (n, C) vectors: materialised for the norm in every dp algorithm, in the same pass as dinp (rmsnorm_bwd_ps) */
static int dpprof__rmsnorm_bwd(dpprof_session *s, int p, dpprof_tensor *dinp, dpprof_tensor *dout, dpprof_tensor *inp, dpprof_tensor *rstd, int T) {
    const int n = s->dps.bw_n, N = n * T, C = s->sh.C, E = s->elem;
    const dpprof_param *P = &s->model.params[p];
    dpprof_tensor tmp;
    int sum = s->dps.bw_mode == DPPROF__MODE_SUM && P->trainable;
    if (sum || !P->trainable) {
        if (sum) DPPROF__TRY(dpprof__grad_open(s, p));
        DPPROF__OP(s, rmsnorm_bwd, (N, C, E), (DPPROF__F(*dinp), sum ? DPPROF__G(s, p) : (dpprof_real *)NULL, DPPROF__F(*dout), DPPROF__F(*inp), DPPROF__W(s, p), DPPROF__F(*rstd), N, C));
        if (sum) dpprof__grad_close(s, p);
        return DPPROF_OK;
    }
    /* dp: dinp and the per-sample weight gradients from one pass over dout and inp */
    if (s->dps.bw_mode == DPPROF__MODE_CLIPSUM) {
        DPPROF__TRY(dpprof__talloc(s, &tmp, (int64_t)n * C, DPPROF__R, DPPROF_CAT_PER_SAMPLE_GRADIENTS, P->module, 0));
        DPPROF__OP(s, rmsnorm_bwd_ps, (n, T, C, E), (DPPROF__F(*dinp), DPPROF__F(tmp), DPPROF__F(*dout), DPPROF__F(*inp), DPPROF__W(s, p), DPPROF__F(*rstd), n, T, C));
        DPPROF__TRY(dpprof__grad_open(s, p));
        DPPROF__OP(s, psgrad_clipsum, (n, (size_t)C, DPPROF__R), (DPPROF__G(s, p), DPPROF__F(tmp), DPPROF__CLIP(s, p), n, (size_t)C));
        dpprof__grad_close(s, p);
        dpprof__tfree(s, &tmp);
        return DPPROF_OK;
    }
    DPPROF__TRY(dpprof__talloc(s, &s->dps.psg[p], (int64_t)n * C, DPPROF__R, DPPROF_CAT_PER_SAMPLE_GRADIENTS, P->module, 0));
    DPPROF__OP(s, rmsnorm_bwd_ps, (n, T, C, E), (DPPROF__F(*dinp), DPPROF__F(s->dps.psg[p]), DPPROF__F(*dout), DPPROF__F(*inp), DPPROF__W(s, p), DPPROF__F(*rstd), n, T, C));
    DPPROF__OP(s, psgrad_sqnorm, (n, (size_t)C, DPPROF__R), (DPPROF__NORM2(s, p), DPPROF__F(s->dps.psg[p]), n, (size_t)C));
    if (s->plan.two_pass) dpprof__tfree(s, &s->dps.psg[p]); /* the second pass sums the clipped vectors itself */
    return DPPROF_OK;
}

/* the embedding's weight gradient from the gradient at its output (the residual's, at the end) */
static int dpprof__embedding_bwd(dpprof_session *s, dpprof_tensor *dres, int T) {
    const int n = s->dps.bw_n, N = n * T, C = s->sh.C, V = s->sh.V, E = s->elem, p = s->model.p_emb;
    dpprof_tensor *kx = NULL, *kdy = NULL;
    int i;
    if (!s->model.params[p].trainable) return DPPROF_OK;
    if (s->dps.bw_mode == DPPROF__MODE_SUM || s->dps.bw_mode == DPPROF__MODE_CLIPSUM) {
        DPPROF__TRY(dpprof__grad_open(s, p));
        if (s->dps.bw_mode == DPPROF__MODE_SUM) DPPROF__OP(s, embedding_bwd, (N, C, E), (DPPROF__G(s, p), DPPROF__F(*dres), DPPROF__I(s->model.a.tokens), N, C));
        else DPPROF__OP(s, embedding_clipgrad, (n, T, C, E), (DPPROF__G(s, p), DPPROF__F(*dres), DPPROF__I(s->model.a.tokens), DPPROF__CLIP(s, p), n, T, C));
        dpprof__grad_close(s, p);
        return DPPROF_OK;
    }
    if (s->plan.tensor[p].method == DPPROF__M_PSG) { /* opacus: a (n, V, C) tensor */
        if (s->sh.tied) {                            /* the head's per-sample gradients are there: each sample's rows added to its own */
            for (i = 0; i < n; i++)
                DPPROF__OP(s, embedding_bwd, (T, C, E), (DPPROF__F(s->dps.psg[p]) + (size_t)i * V * C, DPPROF__AT(*dres, (size_t)i * T * C), DPPROF__I(s->model.a.tokens) + (size_t)i * T, T, C));
        } else {
            DPPROF__TRY(dpprof__talloc(s, &s->dps.psg[p], (int64_t)n * V * C, DPPROF__R, DPPROF_CAT_PER_SAMPLE_GRADIENTS, DPPROF_MOD_EMBEDDING, 0));
            DPPROF__OP(s, embedding_psgrad, (n, T, V, C, E), (DPPROF__F(s->dps.psg[p]), DPPROF__F(*dres), DPPROF__I(s->model.a.tokens), n, T, V, C));
        }
        DPPROF__OP(s, psgrad_sqnorm, (n, (size_t)V * C, DPPROF__R), (DPPROF__NORM2(s, p), DPPROF__F(s->dps.psg[p]), n, (size_t)V * C));
        return DPPROF_OK;
    }
    DPPROF__OP(s, embedding_sqnorm, (n, T, C, E), (DPPROF__NORM2(s, p), DPPROF__F(*dres), DPPROF__I(s->model.a.tokens), n, T, C));
    if (s->sh.tied) {
        /* the shared matrix's norm: the head's part is in norm2 already, this adds the cross term 2<e_i, h_i> from
           the head's input and output gradient, which a second pass retains and book-keeping keeps */
        const dpprof_tensor *hx = &s->model.a.lnf, *hdl = &s->model.a.logits;
        if (!s->dps.bw_retain)
            for (i = 0; i < s->dps.n_cache; i++)
                if (s->dps.cache[i].p == p && !s->dps.cache[i].embed) hx = s->dps.cache[i].x, hdl = s->dps.cache[i].dy;
        if (s->backend != DPPROF_BACKEND_DRY && (!hx->data || !hdl->data)) return dpprof__fail(DPPROF_ERR_INVALID, "internal: the tied head's input or output gradient is gone");
        DPPROF__OP(s, tied_cross, (n, T, V, C, E), (DPPROF__NORM2(s, p), DPPROF__F(*hdl), DPPROF__F(*hx), DPPROF__F(*dres), DPPROF__I(s->model.a.tokens), n, T, V, C));
    }
    if (s->plan.bookkeeping) {
        DPPROF__TRY(dpprof__keep(s, &s->model.a.tokens, 0, &kx));
        DPPROF__TRY(dpprof__keep(s, dres, 1, &kdy));
        DPPROF__TRY(dpprof__cache(s, p, 1, kx, kdy, T, V, C));
    }
    return DPPROF_OK;
}

/* forward activations: freed as soon as used, unless a second backward pass needs them */
static void dpprof__afree(dpprof_session *s, dpprof_tensor *t) {
    if (!s->dps.bw_retain) dpprof__tfree(s, t);
}

/* a decoder layer's own activation (not its input or output): the same, except under --checkpoint layers, where
   every backward pass recomputes the layer (dpprof__recompute) and frees what it made as soon as it is used */
static void dpprof__lfree(dpprof_session *s, dpprof_tensor *t) {
    if (!s->dps.bw_retain || s->cfg.checkpoint == DPPROF_CHECKPOINT_LAYERS) dpprof__tfree(s, t);
}

/* backward of projection j of layer l; an adapter's A and B are two more linear layers: B reads
   (alpha/r) u, A reads x, and every algorithm treats them like any other */
static int dpprof__proj_bwd(dpprof_session *s, int l, int j, dpprof_tensor *dx, dpprof_tensor *dy, int dy_shared, dpprof_tensor *x, int T, int IC, int OC) {
    const int la = s->model.lora ? s->model.lora[l * DPPROF__P_PER_LAYER + j] : -1, r = s->cfg.lora_rank, N = s->dps.bw_n * T, E = s->elem;
    dpprof_tensor du;
    /* q and k are followed by k and v, gate by up, each reading the same input: ghost's gram of it stays */
    s->dps.xg_keep = j == DPPROF__P_Q || j == DPPROF__P_K || j == DPPROF__P_GATE;
    /* flash's gram norms of q, k (gate) wait for v's (up's): dq, dk, dv (dgate, dup) live until all three are
       done, so the wait holds no byte more; an adapter's output gradient does not, and its layers go alone */
    s->dps.fg_ok = s->dps.xg_keep && la < 0;
    DPPROF__TRY(dpprof__linear_bwd(s, 1 + l * DPPROF__P_PER_LAYER + j, dx, dy, dy_shared, x, T, IC, OC));
    s->dps.fg_ok = 0;
    if (!s->dps.xg_keep) dpprof__flash_group(s); /* the group's last did not take them (another method) */
    if (la < 0) {
        if (!s->dps.xg_keep) dpprof__xg_release(s);
        s->dps.xg_keep = 0;
        return DPPROF_OK;
    }
    DPPROF__Z(du, (int64_t)N * r, ACTIVATIONS, LORA);
    DPPROF__TRY(dpprof__linear_bwd(s, la + 1, &du, dy, dy_shared, &s->model.a.lay[l].lu[j], T, r, OC));
    DPPROF__OP(s, scale, ((size_t)N * r, E), (DPPROF__F(du), DPPROF__F(du), (size_t)N * r, s->model.lora_scale));
    DPPROF__TRY(dpprof__linear_bwd(s, la, dx, &du, 0, x, T, IC, r));
    dpprof__tfree(s, &du);
    dpprof__lfree(s, &s->model.a.lay[l].lu[j]);
    if (!s->dps.xg_keep) dpprof__xg_release(s);
    s->dps.xg_keep = 0;
    return DPPROF_OK;
}

/* ---- 5.7 backward and the physical batch -------------------------------------------------------------------
   One schedule for every backend and algorithm: the backward of a physical batch, the norms and clip phases of
   the two-pass algorithms, the phases' records (time, bytes, flops, counters), and given samples
   (dpprof_session_grad, _clipped_grad, _loss) through the same code. */
static int dpprof__phase(dpprof_session *s, int phase, int step);

/* --checkpoint layers: layer l's forward again from its kept input x, just before its backward, in a recompute
   phase of its own (the backward pass's phase resumes after it); the same ops and kernels as the forward */
static int dpprof__recompute(dpprof_session *s, int n, int l, dpprof_tensor *x) {
    const int phase = s->prof.cur_phase, step = s->prof.cur_step;
    if (phase != DPPROF_PHASE_NONE) DPPROF__TRY(dpprof__phase(s, DPPROF_PHASE_RECOMPUTE, step));
    DPPROF__TRY(dpprof__layer_fwd(s, n, l, x, 1, 1));
    if (phase != DPPROF_PHASE_NONE) DPPROF__TRY(dpprof__phase(s, phase, step));
    return DPPROF_OK;
}
/* backward of sum_i dloss * loss_i (head_ready: the logits already hold the output gradient, as in
   a second pass). weight gradients go where s->dps.bw_mode says: summed into g, clipped into g, or
   per-sample norms into s->dps.norm2; every temporary is freed as soon as it has been used */
static int dpprof__backward(dpprof_session *s, int n, double dloss, int head_ready) {
    const dpprof_shape *h = &s->sh;
    const int T = s->cfg.seq, C = h->C, NH = h->NH, NKV = h->NKV, HS = h->HS, F = h->F, E = s->elem;
    const int N = n * T, QD = NH * HS, KD = NKV * HS, lm = s->cfg.task == DPPROF_TASK_LM;
    dpprof__acts *a = &s->model.a;
    dpprof_tensor dlosses, dlnf, dlast, dres, dh, dgate, dup, dln2, datt, dq, dk, dv, dln1;
    int l, i;
    s->dps.bw_n = n;
    s->dps.bw_T = T;
    if (!head_ready) {
        DPPROF__AR(dlosses, n, ACTIVATIONS, HEAD);
        if (s->backend == DPPROF_BACKEND_CPU)
            for (i = 0; i < n; i++) DPPROF__F(dlosses)[i] = (dpprof_real)dloss;
        DPPROF__GPU(s, DPPROF__MARKED(s, "dloss_fill", dpprof_fill_gpu(DPPROF__F(dlosses), (size_t)n, (float)dloss)));
        if (lm) DPPROF__OP(s, crossentropy_bwd, (n, T, h->V, E), (DPPROF__F(a->logits), DPPROF__F(a->logits), DPPROF__I(a->targets), DPPROF__F(dlosses), n, T, h->V));
        else DPPROF__OP(s, crossentropy_bwd, (n, 1, h->K, E), (DPPROF__F(a->logits), DPPROF__F(a->logits), DPPROF__I(a->targets), DPPROF__F(dlosses), n, 1, h->K));
        dpprof__tfree(s, &dlosses);
    }
    DPPROF__TRY(dpprof__z3_use(s, h->L + 2, -1));
    DPPROF__Z(dlnf, (int64_t)N * C, ACTIVATIONS, NORM);
    if (lm) {
        DPPROF__TRY(dpprof__linear_bwd(s, s->model.p_head, &dlnf, &a->logits, 0, &a->lnf, T, C, h->V));
    } else {
        DPPROF__Z(dlast, (int64_t)n * C, ACTIVATIONS, HEAD);
        DPPROF__TRY(dpprof__linear_bwd(s, s->model.p_head, &dlast, &a->logits, 0, &a->last, 1, C, h->K));
        DPPROF__OP(s, last_token_bwd, (n, T, C, E), (DPPROF__F(dlnf), DPPROF__F(dlast), n, T, C));
        dpprof__tfree(s, &dlast);
        dpprof__afree(s, &a->last);
    }
    dpprof__afree(s, &a->logits);
    dpprof__afree(s, &a->losses);
    dpprof__z3_done(s, h->L + 2);
    DPPROF__TRY(dpprof__z3_use(s, h->L + 1, -1));
    DPPROF__Z(dres, (int64_t)N * C, ACTIVATIONS, OTHER);
    DPPROF__TRY(dpprof__rmsnorm_bwd(s, s->model.p_normf, &dres, &dlnf, h->L ? &a->lay[h->L - 1].xm : &a->x0, &a->rstdf, T));
    dpprof__z3_done(s, h->L + 1);
    dpprof__tfree(s, &dlnf);
    dpprof__afree(s, &a->lnf);
    dpprof__afree(s, &a->rstdf);
    for (l = h->L - 1; l >= 0; l--) {
        dpprof__layer_acts *y = &a->lay[l];
        dpprof_tensor *xin = l ? &a->lay[l - 1].xm : &a->x0;
        const int P = 1 + l * DPPROF__P_PER_LAYER;
        DPPROF__TRY(dpprof__z3_use(s, 1 + l, -1));
        dpprof__afree(s, &y->xm); /* the next layer's input: its backward is done */
        if (s->cfg.checkpoint == DPPROF_CHECKPOINT_LAYERS) DPPROF__TRY(dpprof__recompute(s, n, l, xin));
        /* mlp: xm = xa + down(silu(gate(ln2)) * up(ln2)); dres holds d xm */
        DPPROF__Z(dh, (int64_t)N * F, ACTIVATIONS, MLP);
        DPPROF__TRY(dpprof__proj_bwd(s, l, DPPROF__P_DOWN, &dh, &dres, 1, &y->h, T, F, C));
        dpprof__lfree(s, &y->h);
        DPPROF__A(dgate, (int64_t)N * F, ACTIVATIONS, MLP);
        DPPROF__A(dup, (int64_t)N * F, ACTIVATIONS, MLP);
        DPPROF__OP(s, swiglu_bwd, ((size_t)N * F, E), (DPPROF__F(dgate), DPPROF__F(dup), DPPROF__F(dh), DPPROF__F(y->gate), DPPROF__F(y->up), (size_t)N * F));
        dpprof__tfree(s, &dh);
        dpprof__lfree(s, &y->gate);
        dpprof__lfree(s, &y->up);
        DPPROF__Z(dln2, (int64_t)N * C, ACTIVATIONS, NORM);
        DPPROF__TRY(dpprof__proj_bwd(s, l, DPPROF__P_GATE, &dln2, &dgate, 0, &y->ln2, T, C, F));
        DPPROF__TRY(dpprof__proj_bwd(s, l, DPPROF__P_UP, &dln2, &dup, 0, &y->ln2, T, C, F));
        dpprof__tfree(s, &dgate);
        dpprof__tfree(s, &dup);
        dpprof__lfree(s, &y->ln2);
        DPPROF__TRY(dpprof__rmsnorm_bwd(s, P + DPPROF__P_LN2, &dres, &dln2, &y->xa, &y->rstd2, T));
        dpprof__tfree(s, &dln2);
        dpprof__lfree(s, &y->rstd2);
        /* attention: xa = x + o(attn(rope(q(ln1)), rope(k(ln1)), v(ln1))); dres now holds d xa */
        DPPROF__Z(datt, (int64_t)N * QD, ACTIVATIONS, ATTENTION);
        DPPROF__TRY(dpprof__proj_bwd(s, l, DPPROF__P_O, &datt, &dres, 1, &y->att, T, QD, C));
        DPPROF__A(dq, (int64_t)N * QD, ACTIVATIONS, ATTENTION);
        DPPROF__A(dk, (int64_t)N * KD, ACTIVATIONS, ATTENTION);
        DPPROF__A(dv, (int64_t)N * KD, ACTIVATIONS, ATTENTION);
        DPPROF__OPX(s, "attention_bwd", dpprof_attention_bwd_cost(n, T, NH, NKV, HS, E),
                    dpprof_attention_bwd_ref(DPPROF__F(dq), DPPROF__F(dk), DPPROF__F(dv), DPPROF__F(datt), DPPROF__F(y->q), DPPROF__F(y->k), DPPROF__F(y->v), DPPROF__F(y->att), DPPROF__F(y->lse),
                                             n, T, NH, NKV, HS),
                    DPPROF__ATTN(s, bwd, (DPPROF__F(dq), DPPROF__F(dk), DPPROF__F(dv), DPPROF__F(datt), DPPROF__F(y->q), DPPROF__F(y->k), DPPROF__F(y->v), DPPROF__F(y->att), DPPROF__F(y->lse), n, T, NH, NKV, HS)));
        dpprof__tfree(s, &datt);
        dpprof__lfree(s, &y->att);
        dpprof__lfree(s, &y->lse);
        DPPROF__OP(s, rope_bwd, (n, T, NH, HS, E), (DPPROF__F(dq), n, T, NH, HS, h->rope_theta));
        DPPROF__OP(s, rope_bwd, (n, T, NKV, HS, E), (DPPROF__F(dk), n, T, NKV, HS, h->rope_theta));
        DPPROF__Z(dln1, (int64_t)N * C, ACTIVATIONS, NORM);
        DPPROF__TRY(dpprof__proj_bwd(s, l, DPPROF__P_Q, &dln1, &dq, 0, &y->ln1, T, C, QD));
        DPPROF__TRY(dpprof__proj_bwd(s, l, DPPROF__P_K, &dln1, &dk, 0, &y->ln1, T, C, KD));
        DPPROF__TRY(dpprof__proj_bwd(s, l, DPPROF__P_V, &dln1, &dv, 0, &y->ln1, T, C, KD));
        dpprof__tfree(s, &dq);
        dpprof__tfree(s, &dk);
        dpprof__tfree(s, &dv);
        dpprof__lfree(s, &y->q);
        dpprof__lfree(s, &y->k);
        dpprof__lfree(s, &y->v);
        dpprof__lfree(s, &y->ln1);
        DPPROF__TRY(dpprof__rmsnorm_bwd(s, P + DPPROF__P_LN1, &dres, &dln1, xin, &y->rstd1, T));
        dpprof__tfree(s, &dln1);
        dpprof__lfree(s, &y->rstd1);
        dpprof__lfree(s, &y->xa);
        dpprof__z3_done(s, 1 + l);
    }
    DPPROF__TRY(dpprof__z3_use(s, 0, -1));
    DPPROF__TRY(dpprof__embedding_bwd(s, &dres, T));
    dpprof__z3_done(s, 0);
    dpprof__tfree(s, &dres);
    dpprof__afree(s, &a->x0);
    return DPPROF_OK;
}

/* free whatever a failed step left live, so the session can report and be destroyed */
static void dpprof__acts_release(dpprof_session *s) {
    dpprof__acts *a = &s->model.a;
    int l;
    dpprof_tensor *top[] = {&a->tokens, &a->targets, &a->x0, &a->lnf, &a->rstdf, &a->last, &a->logits, &a->losses};
    dpprof__xg_release(s);
    s->dps.xg_keep = 0;
    s->dps.fg_ok = s->dps.fg_n = 0;
    s->dps.fg_x = NULL;
    s->dps.bw_retain = 0;
    for (l = 0; a->lay && l < s->sh.L; l++) {
        dpprof__layer_free(s, l);
        dpprof__tfree(s, &a->lay[l].xm);
    }
    for (l = 0; l < (int)(sizeof top / sizeof top[0]); l++) dpprof__tfree(s, top[l]);
    for (l = 0; s->dps.psg && l < s->model.n_params; l++) dpprof__tfree(s, &s->dps.psg[l]);
    for (l = 0; l < s->dps.n_kept; l++) dpprof__tfree(s, &s->dps.kept[l]);
    s->dps.n_kept = s->dps.n_cache = 0;
    dpprof__tfree(s, &s->dps.clip);
    dpprof__tfree(s, &s->dps.norm2);
    dpprof__tfree(s, &s->dps.rown);
    dpprof__z3_done(s, -1);
    for (l = 0; s->dist.zero >= 2 && l < s->model.n_params; l++) dpprof__tfree(s, &s->model.params[l].g);
}

/* the counters step ends: one range per phase record of the step, in order; or (per op) one per counted op
   record, and each phase record's values the sums of its ops' */
static int dpprof__counters_end(dpprof_session *s, size_t first_phase) {
#if DPPROF__CUDA
    dpprof_counter_range *cr;
    const int per_op = s->gpu.counting >= 2, broken = s->gpu.counting == 3;
    int n = 0, max = 0, rc = DPPROF_OK, k;
    size_t j;
    s->gpu.counting = 0;
    if (per_op)
        for (j = s->gpu.count_op0; j < s->obs.n_ops; j++) max += s->obs.ops[j].counted;
    else {
        max = (int)(s->prof.n_phases - first_phase);
        rc = dpprof_cuda_counters_pop();
    }
    cr = (dpprof_counter_range *)DPPROF_MALLOC(sizeof *cr * (size_t)(max > 0 ? max : 1));
    if (!cr) return dpprof__fail(DPPROF_ERR_OOM, "cannot allocate the counter results");
    if (rc == DPPROF_OK && !broken) rc = dpprof_cuda_counters_end(cr, max, &n);
    else {
        int dummy;
        dpprof_cuda_counters_end(cr, 0, &dummy);
    }
    if (broken || rc != DPPROF_OK || n != max) /* the run goes on without counters: the json says why */
        snprintf(s->gpu.dram_note, sizeof s->gpu.dram_note, "CUPTI range profiler: %.160s (%d ranges for %d %s)", broken || rc != DPPROF_OK ? dpprof_last_error() : "range count mismatch", n, max,
                 per_op ? "ops" : "phases");
    else if (!per_op)
        for (k = 0; k < n; k++) {
            dpprof_phase_rec *r = &s->prof.phases[first_phase + (size_t)k];
            r->dram_read = cr[k].dram_read;
            r->dram_write = cr[k].dram_write;
            r->l2_read = cr[k].l2_read;
            r->l2_write = cr[k].l2_write;
        }
    else {
        for (j = first_phase; j < s->prof.n_phases; j++) /* sums from zero (l2 stays unavailable where the ranges lack it) */
            s->prof.phases[j].dram_read = s->prof.phases[j].dram_write = 0.0, s->prof.phases[j].l2_read = s->prof.phases[j].l2_write = n && cr[0].l2_read >= 0 ? 0.0 : -1.0;
        for (j = s->gpu.count_op0, k = 0; j < s->obs.n_ops && k < n; j++) {
            dpprof__op_rec *o = &s->obs.ops[j];
            dpprof_phase_rec *r = &s->prof.phases[o->phase_rec];
            if (!o->counted) continue;
            o->traffic[0] = cr[k].dram_read, o->traffic[1] = cr[k].dram_write, o->traffic[2] = cr[k].l2_read, o->traffic[3] = cr[k].l2_write;
            r->dram_read += cr[k].dram_read;
            r->dram_write += cr[k].dram_write;
            if (r->l2_read >= 0) r->l2_read += cr[k].l2_read, r->l2_write += cr[k].l2_write;
            k++;
        }
    }
    DPPROF_FREE(cr);
#else
    (void)s;
    (void)first_phase;
#endif
    return DPPROF_OK;
}

/* a phase of the step begins; on cuda an event marks where on the device's stream it does */
static int dpprof__phase(dpprof_session *s, int phase, int step) {
    dpprof__phase_driver(s); /* the open record ends here */
#if DPPROF__CUDA
    if (s->gpu.counting == 1) { /* one counter range per phase record: close the last, open this one */
        if (s->prof.cur_phase != DPPROF_PHASE_NONE && dpprof_cuda_counters_pop() != DPPROF_OK)
            return dpprof__fail(DPPROF_ERR_CUDA, "DRAM counters: %s", dpprof_last_error());
        if (dpprof_cuda_counters_push(dpprof_phase_name(phase)) != DPPROF_OK) return dpprof__fail(DPPROF_ERR_CUDA, "DRAM counters: %s", dpprof_last_error());
    }
#endif
    DPPROF__TRY(dpprof_phase_begin(&s->prof, phase, step));
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) {
        size_t k = s->prof.n_phases - 1, old = s->obs.cap_ph_ev, j;
        if (dpprof__grow((void **)&s->obs.ph_ev, &s->obs.cap_ph_ev, k + 1, sizeof(int)) != 0) return dpprof__fail(DPPROF_ERR_OOM, "cannot grow the phase event table");
        for (j = old; j < s->obs.cap_ph_ev; j++) s->obs.ph_ev[j] = -1;
        if (dpprof_cuda_event(&s->obs.ph_ev[k]) != DPPROF_OK) return dpprof__fail(DPPROF_ERR_CUDA, "%s", dpprof_last_error());
    }
#endif
    return DPPROF_OK;
}

/* the per-sample losses of the physical batch where the host can read them: the tensor on cpu, a
   copy on cuda (this waits for the forward), NULL on dry */
static int dpprof__host_losses(dpprof_session *s, int n, const dpprof_real **out) {
    *out = NULL;
    (void)n;
    if (s->backend == DPPROF_BACKEND_CPU) *out = DPPROF__F(s->model.a.losses);
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) {
        int rc;
        DPPROF__MARKED(s, "loss_download", rc = dpprof_cuda_copy(s->gpu.h_loss, s->model.a.losses.data, sizeof(float) * (size_t)n, DPPROF_COPY_D2H));
        if (rc != DPPROF_OK) return dpprof__fail(DPPROF_ERR_CUDA, "the forward on the gpu failed: %s", dpprof_last_error());
        *out = s->gpu.h_loss;
    }
#endif
    return DPPROF_OK;
}

/* the clip factors of the physical batch from its per-sample, per-tensor squared norms. on cuda the
   norms come down to the host (n_params x n doubles), the factors are computed there and go back up:
   the same arithmetic as the cpu's, on the same doubles */
static int dpprof__norms_phase_run(dpprof_session *s, int n, int first) {
    const int per_layer = s->cfg.per_layer_clipping;
    const size_t n_clip = per_layer ? (size_t)n * (size_t)s->model.n_params : (size_t)n;
    int i, p;
    double cl, *norm2 = DPPROF__D(s->dps.norm2), *clip;
    DPPROF__TRY(dpprof__talloc(s, &s->dps.clip, (int64_t)n_clip, 8, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OTHER, 1));
    clip = DPPROF__D(s->dps.clip);
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) {
        if (dpprof_cuda_copy(s->gpu.h_norm2, s->dps.norm2.data, sizeof(double) * (size_t)n * (size_t)s->model.n_params, DPPROF_COPY_D2H) != DPPROF_OK)
            return dpprof__fail(DPPROF_ERR_CUDA, "the backward on the gpu failed: %s", dpprof_last_error());
        norm2 = s->gpu.h_norm2;
        clip = s->gpu.h_clip;
        memset(clip, 0, sizeof(double) * n_clip);
        if (s->plan.batched && dpprof_cuda_copy(s->dps.h_rown, s->dps.rown.data, sizeof(double) * 2 * (size_t)n * (size_t)s->model.n_params, DPPROF_COPY_D2H) != DPPROF_OK)
            return dpprof__fail(DPPROF_ERR_CUDA, "%s", dpprof_last_error());
    }
#endif
    if (s->backend == DPPROF_BACKEND_DRY) return DPPROF_OK;
#define DPPROF__HN(p) (norm2 + (size_t)(p) * (size_t)n) /* the host's squared norms of tensor p */
    for (i = 0; i < n; i++) {
        double tot = 0;
        for (p = 0; p < s->model.n_params; p++) {
            if (!s->model.params[p].trainable) continue;
            if (!(DPPROF__HN(p)[i] <= DBL_MAX)) /* nan or inf: the clip factor would be meaningless */
                return dpprof__fail(DPPROF_ERR_NUMERIC, "the per-sample gradient norm of sample %d in %s is %g", first + i, s->model.params[p].name, sqrt(DPPROF__HN(p)[i]));
            tot += DPPROF__HN(p)[i];
        }
        s->dps.last_norms[first + i] = sqrt(tot);
        if (!per_layer) clip[i] = tot;
    }
    if (!per_layer) {
        /* the batched layers' bound on their bf16 rounding, ||eps_i||, eps_il = 2^-8 ||dy_il|| ||x_il|| (dy and x as
           stored, the norms in double), into the factors: c_i = C / (||g_i|| + ||eps_i|| + 1e-6); NULL: none */
        double *rn = s->plan.batched ? s->dps.h_rown : NULL, *eps = rn ? rn + (size_t)2 * n * s->model.n_params : NULL; /* the row after the norms */
        int any = 0, k;
        for (i = 0; eps && i < n; i++) {
            double e2 = 0;
            for (k = 0; k < s->dps.n_cache; k++) {
                const int q = s->dps.cache[k].p;
                if (s->dps.cache[k].embed || s->plan.tensor[q].clipgrad != DPPROF_CLIPGRAD_BATCHED) continue;
                e2 += rn[(size_t)2 * q * n + i] * rn[((size_t)2 * q + 1) * n + i];
                any = 1;
            }
            eps[i] = ldexp(sqrt(e2), -8);
        }
        if (!any) eps = NULL;
        for (i = 0; eps && i < n; i++) {
            const double r = eps[i] / (sqrt(clip[i]) + 1e-300);
            if (!(r <= s->dps.eps_ratio_max)) s->dps.eps_ratio_max = r; /* NAN at first */
        }
        dpprof_clip_factors_bound_ref(clip, clip, eps, n, s->cfg.max_grad_norm);
        for (i = 0; i < n; i++) s->dps.last_clip[first + i] = clip[i];
    } else {
        /* per-layer: every clipped tensor gets C / sqrt(number of clipped tensors) */
        cl = s->cfg.max_grad_norm / sqrt((double)s->model.n_trainable);
        for (p = 0; p < s->model.n_params; p++)
            if (s->model.params[p].trainable) dpprof_clip_factors_ref(clip + (size_t)p * (size_t)n, DPPROF__HN(p), n, cl);
        for (i = 0; i < n; i++) s->dps.last_clip[first + i] = NAN; /* one factor per tensor: see the dump */
    }
#undef DPPROF__HN
    if (s->dps.idle) memset(clip, 0, sizeof(double) * n_clip); /* an idle pass's sample weighs zero in the clipped sum */
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA && dpprof_cuda_copy(s->dps.clip.data, clip, sizeof(double) * n_clip, DPPROF_COPY_H2D) != DPPROF_OK)
        return dpprof__fail(DPPROF_ERR_CUDA, "%s", dpprof_last_error());
#endif
    return DPPROF_OK;
}

/* the op clip_factors: the norms down to the host, the factors there, back up (its copies inside the op record) */
static int dpprof__norms_phase(dpprof_session *s, int n, int first) {
    dpprof_cost c;
    int rc, k;
    c.flops = (double)n * s->model.n_params;
    c.bytes = 8.0 * n * (s->model.n_params + 1.0);
    for (k = 0; s->plan.batched && k < s->dps.n_cache; k++) { /* the batched layers' norms of dy and x */
        const dpprof__cache_ent *e = &s->dps.cache[k];
        double *rn = DPPROF__D(s->dps.rown) ? DPPROF__D(s->dps.rown) + (size_t)2 * e->p * n : NULL;
        if (e->embed || s->plan.tensor[e->p].clipgrad != DPPROF_CLIPGRAD_BATCHED) continue;
        DPPROF__OP(s, sample_sqnorm, (n, (size_t)e->T * e->OC, s->elem), (rn, DPPROF__F(*e->dy), n, (size_t)e->T * e->OC));
        DPPROF__OP(s, sample_sqnorm, (n, (size_t)e->T * e->IC, s->elem), (rn ? rn + n : NULL, DPPROF__F(*e->x), n, (size_t)e->T * e->IC));
    }
    dpprof_prof_add_cost(&s->prof, c.flops, c.bytes);
    dpprof__op_mark(s, "clip_factors", c);
    rc = dpprof__norms_phase_run(s, n, first);
    dpprof__op_mark(s, NULL, c);
    return rc;
}

/* the clip factor of sample i (flat clipping) where the host can read it */
static double dpprof__host_clip(const dpprof_session *s, int i) {
    if (s->backend == DPPROF_BACKEND_CUDA) return s->gpu.h_clip[i];
    return DPPROF__D(s->dps.clip) ? DPPROF__D(s->dps.clip)[i] : 0.0;
}

/* book-keeping and per-sample materialisation: the clipped gradients, layer by layer */
/* cuda, flat clipping: sum_i c_i dy_i^T x_i = dy^T (diag(c) x). every kept input is scaled by its
   sample's factor once, in place (it dies after this phase, and with flat clipping every layer that
   reads it wants the same factors), then the clipped weight gradient is cuBLAS's dweight GEMM. an
   input that is also some layer's output gradient is never scaled: that layer uses the kernel */
#if DPPROF__CUDA
static int dpprof__clipgrad_fast(dpprof_session *s, int k, const void **scaled, int *n_scaled) {
    const dpprof__cache_ent *e = &s->dps.cache[k];
    const int n = s->dps.bw_n;
    int j;
    /* bf16: x scaled in place would be c_i x_i rounded to bf16, a relative error up to 2^-8 on the clipped
       gradient, past the bound; the bf16 clipgrad applies c_i in fp32 to the very values the norm read
       (one cuBLAS bf16 GEMM per sample with alpha = c_i rounded toward zero: tensor cores, no copy) */
    if (s->cfg.per_layer_clipping || s->cfg.dtype == DPPROF_DTYPE_BF16) return 0;
    for (j = 0; j < s->dps.n_cache; j++)
        if (s->dps.cache[j].dy->data == e->x->data) return 0;
    for (j = 0; j < *n_scaled && scaled[j] != e->x->data; j++) {}
    if (j == *n_scaled) {
        dpprof_scale_rows_gpu(DPPROF__F(*e->x), DPPROF__D(s->dps.clip), n, e->T, e->IC);
        scaled[(*n_scaled)++] = e->x->data;
    }
    dpprof_matmul_bwd_gpu(NULL, DPPROF__G(s, e->p), DPPROF__F(*e->dy), DPPROF__F(*e->x), DPPROF__WM(s, e->p), n * e->T, e->IC, e->OC);
    return 1;
}

/* cuda, bf16, a layer on the batched kernel: dy scaled by the factors in place, c_i dy_i rounded to bf16 (dy is this
   layer's alone and dies after this phase), then cuBLAS's dweight GEMM over all n T rows. the factors carry the
   rounding's bound (dpprof__norms_phase_run): sample i's contribution is c_i (dy_i^T x_i + E_i^T x_i) with
   |E_i| <= 2^-8 |dy_i| elementwise, so ||E_i^T x_i|| <= 2^-8 ||dy_i|| ||x_i|| = eps_il. a dy that is another entry's
   input or output gradient is left alone: that layer takes cuBLAS per sample (its eps still counted) */
static int dpprof__clipgrad_batched(dpprof_session *s, int k) {
    const dpprof__cache_ent *e = &s->dps.cache[k];
    const int n = s->dps.bw_n;
    int j;
    if (s->plan.tensor[e->p].clipgrad != DPPROF_CLIPGRAD_BATCHED || !s->plan.batched || e->x->data == e->dy->data) return 0;
    for (j = 0; j < s->dps.n_cache; j++)
        if (j != k && (s->dps.cache[j].dy->data == e->dy->data || s->dps.cache[j].x->data == e->dy->data)) return 0;
    dpprof_scale_rows_gpu(DPPROF__F(*e->dy), DPPROF__D(s->dps.clip), n, e->T, e->OC);
    dpprof_matmul_bwd_gpu(NULL, DPPROF__G(s, e->p), DPPROF__F(*e->dy), DPPROF__F(*e->x), NULL, n * e->T, e->IC, e->OC);
    return 1;
}
#endif

static int dpprof__clip_phase(dpprof_session *s) {
    const int n = s->dps.bw_n, E = s->elem;
    int k, p, n_scaled = 0;
    const void **scaled = (const void **)DPPROF_MALLOC(sizeof(void *) * (size_t)(s->dps.n_cache + 1));
    if (!scaled) return dpprof__fail(DPPROF_ERR_OOM, "cannot allocate the clip phase's table");
    (void)n_scaled; /* used by the cuda path only */
    for (k = 0; k < s->dps.n_cache; k++) {
        const dpprof__cache_ent *e = &s->dps.cache[k];
        const int rc = dpprof__grad_open(s, e->p);
        if (rc != DPPROF_OK) {
            DPPROF_FREE(scaled);
            return rc;
        }
        if (e->embed) DPPROF__OP(s, embedding_clipgrad, (n, e->T, e->OC, E), (DPPROF__G(s, e->p), DPPROF__F(*e->dy), DPPROF__I(*e->x), DPPROF__CLIP(s, e->p), n, e->T, e->OC));
        else if (s->backend == DPPROF_BACKEND_CUDA && DPPROF__G(s, e->p)) {
#if DPPROF__CUDA
            dpprof__tune_clipgrad(s->plan.tensor[e->p].clipgrad == DPPROF_CLIPGRAD_FUSED);
#endif
            DPPROF__OPX(s, "linear_clipgrad", dpprof_linear_clipgrad_cost(n, e->T, e->IC, e->OC, E), (void)0,
                        if (!dpprof__clipgrad_fast(s, k, scaled, &n_scaled) && !dpprof__clipgrad_batched(s, k))
                            dpprof_linear_clipgrad_gpu(DPPROF__G(s, e->p), DPPROF__F(*e->dy), DPPROF__F(*e->x), DPPROF__CLIP(s, e->p), n, e->T, e->IC, e->OC));
        } else DPPROF__OP(s, linear_clipgrad, (n, e->T, e->IC, e->OC, E), (DPPROF__G(s, e->p), DPPROF__F(*e->dy), DPPROF__F(*e->x), DPPROF__CLIP(s, e->p), n, e->T, e->IC, e->OC));
        dpprof__grad_close_use(s, e->p, e->p == s->model.p_emb && !e->embed); /* the tied head's: the embedding's entry follows */
    }
    DPPROF_FREE(scaled);
    for (p = 0; p < s->model.n_params; p++) {
        if (!s->dps.psg[p].n) continue;
        DPPROF__TRY(dpprof__grad_open(s, p));
        DPPROF__OP(s, psgrad_clipsum, (n, (size_t)s->dps.psg[p].n / (size_t)n, DPPROF__R), (DPPROF__G(s, p), DPPROF__F(s->dps.psg[p]), DPPROF__CLIP(s, p), n, (size_t)s->dps.psg[p].n / (size_t)n));
        dpprof__grad_close(s, p);
        dpprof__tfree(s, &s->dps.psg[p]);
    }
    for (k = 0; k < s->dps.n_kept; k++) dpprof__tfree(s, &s->dps.kept[k]);
    s->dps.n_kept = s->dps.n_cache = 0;
    return DPPROF_OK;
}

/* one physical batch whose tokens and targets are in s->model.a: forward, backward(s) and, for dp, the
   clipped gradient summed into g (vanilla: the gradient of dloss * sum of losses) */
static int dpprof__physical(dpprof_session *s, int step, int n, int first, double dloss, double *loss_sum, double *losses) {
    const int lm = s->cfg.task == DPPROF_TASK_LM;
    int i;
    const dpprof_real *hl;
    DPPROF__TRY(dpprof__forward(s, n));
    DPPROF__TRY(dpprof__host_losses(s, n, &hl));
    if (hl)
        for (i = 0; i < n; i++) {
            double v = (double)hl[i];
            if (!(fabs(v) <= DBL_MAX)) /* a non-finite loss poisons every gradient after it */
                return dpprof__fail(DPPROF_ERR_NUMERIC, "the loss of sample %d of step %d is %g", first + i, step, v);
            if (losses) losses[i] = v;
            *loss_sum += v;
        }
    else *loss_sum = NAN;
    DPPROF__TRY(dpprof__phase(s, DPPROF_PHASE_BACKWARD, step));
    if (!s->dps.dp) {
        s->dps.bw_mode = DPPROF__MODE_SUM;
        s->dps.bw_retain = 0;
        return dpprof__backward(s, n, dloss, 0);
    }
    /* pass 1: per-sample norms of every trainable tensor, from the unscaled per-sample losses */
    s->dps.bw_n = n;
    DPPROF__TRY(dpprof__talloc(s, &s->dps.norm2, (int64_t)n * s->model.n_params, 8, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OTHER, 1));
    if (s->plan.batched) DPPROF__TRY(dpprof__talloc(s, &s->dps.rown, (int64_t)2 * n * s->model.n_params, 8, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OTHER, 1));
    s->dps.bw_mode = DPPROF__MODE_NORM;
    s->dps.bw_retain = s->plan.two_pass;
    DPPROF__TRY(dpprof__backward(s, n, 1.0, 0));
    DPPROF__TRY(dpprof__phase(s, DPPROF_PHASE_NORMS, step));
    DPPROF__TRY(dpprof__norms_phase(s, n, first));
    if (s->plan.two_pass) {
        /* pass 2: backpropagate sum_i c_i loss_i (flat), or clip each tensor's per-sample
           gradients with its own factors (per-layer) */
        DPPROF__TRY(dpprof__phase(s, DPPROF_PHASE_BACKWARD_2, step));
        s->dps.bw_retain = 0;
        /* bf16: a scaled logits' gradient would be rounded to bf16 again at every tensor it flows
           through, off the norm by up to 2^-8; unscaled, pass 2 repeats pass 1's bf16 values bit for bit
           and every layer applies its c_i in fp32 (the clipsum path, with the flat factors) */
        s->dps.bw_mode = s->cfg.per_layer_clipping || s->cfg.dtype == DPPROF_DTYPE_BF16 ? DPPROF__MODE_CLIPSUM : DPPROF__MODE_SUM;
        if (s->dps.bw_mode == DPPROF__MODE_SUM) {
            size_t row = lm ? (size_t)s->cfg.seq * (size_t)s->sh.V : (size_t)s->sh.K;
            for (i = 0; i < n; i++) /* the output gradient of pass 1 is linear in dloss */
                DPPROF__OP(s, scale, (row, s->elem), (DPPROF__AT(s->model.a.logits, (size_t)i * row), DPPROF__AT(s->model.a.logits, (size_t)i * row), row, dpprof__host_clip(s, i)));
        }
        DPPROF__TRY(dpprof__backward(s, n, 1.0, 1));
    } else {
        DPPROF__TRY(dpprof__phase(s, DPPROF_PHASE_CLIP_ACCUMULATE, step));
        DPPROF__TRY(dpprof__clip_phase(s));
    }
    dpprof__tfree(s, &s->dps.clip);
    dpprof__tfree(s, &s->dps.norm2);
    dpprof__tfree(s, &s->dps.rown);
    return DPPROF_OK;
}

static int dpprof__data_alloc(dpprof_session *s, int n) {
    int T = s->cfg.seq, tw = s->cfg.task == DPPROF_TASK_LM ? T : 1;
    DPPROF__TRY(dpprof__talloc(s, &s->model.a.tokens, (int64_t)n * T, 4, DPPROF_CAT_DATA, DPPROF_MOD_OTHER, 0));
    DPPROF__TRY(dpprof__talloc(s, &s->model.a.targets, (int64_t)n * tw, 4, DPPROF_CAT_DATA, DPPROF_MOD_OTHER, 0));
    return DPPROF_OK;
}

/* cuda: the batch sampled on the host (h_tok, h_tgt) to the device tensors */
static int dpprof__upload_batch(dpprof_session *s, int n) {
#if DPPROF__CUDA
    const int T = s->cfg.seq, tw = s->cfg.task == DPPROF_TASK_LM ? T : 1;
    int rc = DPPROF_OK;
    if (s->backend == DPPROF_BACKEND_CUDA)
        DPPROF__MARKED(s, "batch_upload",
                       rc = dpprof_cuda_copy(s->model.a.tokens.data, s->gpu.h_tok, sizeof(int) * (size_t)n * (size_t)T, DPPROF_COPY_H2D);
                       if (rc == DPPROF_OK) rc = dpprof_cuda_copy(s->model.a.targets.data, s->gpu.h_tgt, sizeof(int) * (size_t)n * (size_t)tw, DPPROF_COPY_H2D));
    if (rc != DPPROF_OK) return dpprof__fail(DPPROF_ERR_CUDA, "uploading the batch: %s", dpprof_last_error());
#else
    (void)s;
    (void)n;
#endif
    return DPPROF_OK;
}

/* every trainable tensor's gradient = 0: the op grad_zero of the optimizer's phase (a write of every
   gradient byte; outside a step, dpprof_session_grad's, no phase is open and nothing is charged) */
static void dpprof__zero_grads(dpprof_session *s) {
    int i;
    for (i = 0; i < s->model.n_params; i++) {
        const size_t bytes = (size_t)s->model.params[i].g.n * (size_t)s->model.params[i].g.elem_size;
        dpprof_cost c;
        if (!s->model.params[i].trainable) continue;
        c.flops = 0.0;
        c.bytes = (double)bytes;
        DPPROF__OPX(s, "grad_zero", c, memset(s->model.params[i].g.data, 0, bytes), (void)dpprof_cuda_zero(s->model.params[i].g.data, bytes));
    }
}

static int dpprof__check_tokens(const dpprof_session *s, const int *tokens, const int *targets, int n) {
    int T = s->cfg.seq, tw = s->cfg.task == DPPROF_TASK_LM ? T : 1, lim = s->cfg.task == DPPROF_TASK_LM ? s->sh.V : s->sh.K;
    size_t i;
    for (i = 0; i < (size_t)n * (size_t)T; i++)
        if (tokens[i] < 0 || tokens[i] >= s->sh.V) return dpprof__fail(DPPROF_ERR_INVALID, "token %d at %zu is outside [0, %d)", tokens[i], i, s->sh.V);
    for (i = 0; i < (size_t)n * (size_t)tw; i++)
        if (targets[i] < 0 || targets[i] >= lim) return dpprof__fail(DPPROF_ERR_INVALID, "target %d at %zu is outside [0, %d)", targets[i], i, lim);
    return DPPROF_OK;
}

/* given samples, split into physical batches: forward (and, unless loss_only, the gradient the
   session's algorithm gives, summed into g: vanilla sum_i dloss*grad loss_i, dp sum_i c_i grad loss_i) */
static int dpprof__given(dpprof_session *s, const int *tokens, const int *targets, int n, double *losses, int loss_only, double dloss) {
    int T = s->cfg.seq, tw = s->cfg.task == DPPROF_TASK_LM ? T : 1, rc = DPPROF_OK, first, dp = s->dps.dp;
    double sum = 0;
    if (!tokens || !targets || n <= 0) return dpprof__fail(DPPROF_ERR_INVALID, "forward/backward needs tokens, targets and n > 0");
    if (s->backend == DPPROF_BACKEND_DRY) return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "computing values needs the cpu or cuda backend (this session is dry)");
    if (s->dist.real && !loss_only) return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "a session of %d ranks computes gradients in whole steps only (dpprof_session_step)", s->dist.n);
    if (s->backend == DPPROF_BACKEND_CUDA) dpprof_cuda_events_reset(); /* its phases' events are not kept: a caller's loop must not grow the pool */
    dpprof__bind(s);
    if (n > s->cfg.batch) return dpprof__fail(DPPROF_ERR_INVALID, "%d samples is more than the session's batch of %d", n, s->cfg.batch);
    DPPROF__TRY(dpprof__check_tokens(s, tokens, targets, n));
    if (loss_only) s->dps.dp = 0;
    for (first = 0; first < n && rc == DPPROF_OK; first += s->cfg.physical_batch) {
        int b = n - first < s->cfg.physical_batch ? n - first : s->cfg.physical_batch;
        rc = dpprof__phase(s, DPPROF_PHASE_FORWARD, s->run.steps_done);
        if (rc == DPPROF_OK) rc = dpprof__data_alloc(s, b);
        if (rc != DPPROF_OK) break;
        if (s->backend == DPPROF_BACKEND_CUDA) {
            memcpy(s->gpu.h_tok, tokens + (size_t)first * T, sizeof(int) * (size_t)b * (size_t)T);
            memcpy(s->gpu.h_tgt, targets + (size_t)first * tw, sizeof(int) * (size_t)b * (size_t)tw);
            rc = dpprof__upload_batch(s, b);
            if (rc != DPPROF_OK) break;
        } else {
            memcpy(s->model.a.tokens.data, tokens + (size_t)first * T, sizeof(int) * (size_t)b * (size_t)T);
            memcpy(s->model.a.targets.data, targets + (size_t)first * tw, sizeof(int) * (size_t)b * (size_t)tw);
        }
        if (loss_only) {
            const dpprof_real *hl = NULL;
            rc = dpprof__forward(s, b);
            if (rc == DPPROF_OK) rc = dpprof__host_losses(s, b, &hl);
            if (rc == DPPROF_OK && losses)
                for (int i = 0; i < b; i++) losses[first + i] = (double)hl[i];
        } else rc = dpprof__physical(s, s->run.steps_done, b, first, dloss, &sum, losses ? losses + first : NULL);
        dpprof__acts_release(s);
    }
    s->dps.dp = dp;
    dpprof__phase_end(s);
    if (rc != DPPROF_OK) dpprof__acts_release(s);
    return rc;
}

DPPROF_API int dpprof_session_grad(dpprof_session *s, const int *tokens, const int *targets, int n, double *losses) {
    int dp, rc;
    if (!s) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_grad: NULL session");
    dpprof__zero_grads(s);
    dp = s->dps.dp;
    s->dps.dp = 0; /* the plain gradient of the mean loss, whatever the algorithm */
    rc = dpprof__given(s, tokens, targets, n, losses, 0, n > 0 ? 1.0 / n : 0.0);
    s->dps.dp = dp;
    return rc;
}

DPPROF_API int dpprof_session_clipped_grad(dpprof_session *s, const int *tokens, const int *targets, int n, double *norms, double *clip) {
    int rc, i;
    if (!s) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_clipped_grad: NULL session");
    if (!s->dps.dp) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_clipped_grad: config.algo = %s does not clip", dpprof_algo_name(s->cfg.algo));
    dpprof__zero_grads(s);
    rc = dpprof__given(s, tokens, targets, n, NULL, 0, 1.0);
    for (i = 0; rc == DPPROF_OK && i < n; i++) {
        if (norms) norms[i] = s->dps.last_norms[i];
        if (clip) clip[i] = s->dps.last_clip[i];
    }
    return rc;
}

DPPROF_API int dpprof_session_loss(dpprof_session *s, const int *tokens, const int *targets, int n, double *losses) {
    if (!s) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_loss: NULL session");
    return dpprof__given(s, tokens, targets, n, losses, 1, 0.0);
}

/* ---- 5.8 noise, optimizer and the step ---------------------------------------------------------------------
   The Gaussian noise (Philox, the same bits on every backend and any number of ranks), the division by the
   batch, Adam or SGD, the collectives of the shards, and the logical step: its physical batches, its sampling
   (fixed or Poisson), the gradient check, the measured time. dpprof_session_step and _run. */

/* one trainable tensor's part of dpprof__noise on the cpu backend: g (n) from element `off` of the stream */
static void dpprof__noise_cpu(dpprof_session *s, dpprof_real *g, int64_t n, int step, uint64_t off) {
    const double inv_b = 1.0 / s->cfg.batch;
    int64_t e;
    if (s->plan.noise_std > 0) {
#ifdef DPPROF_REF_DOUBLE
        for (e = 0; e < n; e++) g[e] += s->plan.noise_std * dpprof_normal(s->dps.noise_key, (uint64_t)step | s->dps.noise_stream_bits, off + (uint64_t)e);
#else
        dpprof_add_noise_ref(g, (size_t)n, s->plan.noise_std, s->dps.noise_key, (uint64_t)step | s->dps.noise_stream_bits, off);
#endif
    }
    for (e = 0; e < n; e++) g[e] = (dpprof_real)(g[e] * inv_b);
}

/* the noise's analytic cost on a gradient: philox + box-muller per element, roughly; the gradient read and written */
static dpprof_cost dpprof__noise_cost(const dpprof_tensor *g) {
    dpprof_cost c;
    c.flops = 30.0 * (double)g->n;
    c.bytes = 2.0 * (double)g->n * g->elem_size;
    return c;
}

/* noise sigma*C on the clipped sum, from the counter-based generator at (seed, stream = step,
   element = offset over the trainable tensors in table order), then the division by the expected
   batch size: the update direction (sum_i c_i g_i + N(0, sigma^2 C^2 I)) / B */
/* ranks > 1, zero 0 and 1: the gradients' collective once the logical batch's clipped sum is complete (after
   the last physical batch): zero 0 all-reduces them, zero 1 reduce-scatters them, both in place (zero 1: a rank's
   shard is its part of each gradient). zero >= 2 reduce-scatters each gradient as it is written (dpprof__grad_close) */
static void dpprof__dist_reduce(dpprof_session *s) {
    int i;
    if (s->dist.n <= 1 || s->dist.zero >= 2) return;
    for (i = 0; i < s->model.n_params; i++) {
        dpprof_param *p = &s->model.params[i];
        if (!p->trainable) continue;
        dpprof__dist_coll(s, s->dist.zero ? DPPROF__RS_BYTES : DPPROF__AR_BYTES, p->w.n, DPPROF__R);
        if (!s->dist.real) continue;
        if (!s->dist.zero) {
            dpprof__coll_allreduce(s, DPPROF__F(p->g), p->w.n);
            continue;
        }
        dpprof__coll_reduce_scatter(s, DPPROF__F(p->g), p->w.n, p->g.n); /* the rank's part, at its place in the tensor */
    }
}

/* (real ranks, zero >= 1) the rank's part of every trainable tensor: the noise of a logical batch (noise_step >= 0:
   at the elements' indices in the whole trainable table, then the division by the batch) and, with update, the
   optimizer's step on it (the parameters' part: in the tensor, or in the shard at zero 3) */
static void dpprof__dist_apply(dpprof_session *s, int noise_step, int update) {
    const int adam = s->cfg.optimizer == DPPROF_OPT_ADAM;
    int i;
    for (i = 0; i < s->model.n_params; i++) {
        const dpprof_param *p = &s->model.params[i];
        int64_t lo, len;
        dpprof_real *g;
        if (!p->trainable) continue;
        dpprof__dist_part(s, p->w.n, &lo, &len);
        if (!len) continue;
        g = s->dist.zero == 1 ? DPPROF__F(p->g) + lo : DPPROF__F(s->dist.gshard) + s->dist.toff[i];
#if DPPROF__CUDA
        if (s->backend == DPPROF_BACKEND_CUDA) { /* the same ops on the device, on the rank's part */
            const double std = s->plan.noise_std, inv_b = 1.0 / s->cfg.batch;
            const uint64_t off = (uint64_t)(s->dist.eoff[i] + lo);
            dpprof_real *w = dpprof__dist_wpart(s, i), *m = adam ? DPPROF__F(s->dist.m) + s->dist.toff[i] : NULL, *v = adam ? DPPROF__F(s->dist.v) + s->dist.toff[i] : NULL;
            dpprof_bf16 *copy = s->dist.zero == 3 && p->wl.n ? dpprof__dist_wlpart(s, i) : NULL; /* zero 3, bf16: the copy's part in the same pass */
            if (!update) dpprof_noise_scale_gpu(g, (size_t)len, std, s->dps.noise_key, (uint64_t)noise_step | s->dps.noise_stream_bits, off, inv_b);
            else if (noise_step >= 0 && adam)
                dpprof_noise_adam_gpu(w, m, v, g, (size_t)len, s->cfg.lr, 0.9, 0.999, 1e-8, s->cfg.weight_decay, s->run.adam_t, copy, std, s->dps.noise_key, (uint64_t)noise_step | s->dps.noise_stream_bits, off, inv_b);
            else if (noise_step >= 0) dpprof_noise_sgd_gpu(w, g, (size_t)len, s->cfg.lr, copy, std, s->dps.noise_key, (uint64_t)noise_step | s->dps.noise_stream_bits, off, inv_b);
            else if (adam) dpprof_adam_gpu(w, m, v, g, (size_t)len, s->cfg.lr, 0.9, 0.999, 1e-8, s->cfg.weight_decay, s->run.adam_t, copy);
            else dpprof_sgd_gpu(w, g, (size_t)len, s->cfg.lr, copy);
            continue;
        }
#endif
        if (noise_step >= 0) dpprof__noise_cpu(s, g, len, noise_step, (uint64_t)(s->dist.eoff[i] + lo));
        if (!update) continue;
        if (adam)
            dpprof_adam_ref(dpprof__dist_wpart(s, i), DPPROF__F(s->dist.m) + s->dist.toff[i], DPPROF__F(s->dist.v) + s->dist.toff[i], g, (size_t)len, s->cfg.lr, 0.9, 0.999, 1e-8,
                            s->cfg.weight_decay, s->run.adam_t);
        else dpprof_sgd_ref(dpprof__dist_wpart(s, i), g, (size_t)len, s->cfg.lr);
    }
}

/* zero >= 1: noise and update on the rank's shard of the trainable tensors. the noise of a shard's element is
   drawn at the element's index in the whole trainable table (dpprof__noise's offsets), so that the ranks
   together add the single-rank noise bit for bit; zero 1, 2: the updated parameters are all-gathered back in
   place; the gradients (zero 1) or their shard (zero >= 2) are zeroed. bf16: zero 1 and 2 gather the updated fp32
   masters (every rank keeps them whole, as it keeps fp32 parameters) and each rank casts its whole working
   copies from them (cast_bf16 ops); zero 3's update writes the copy's shard in its own pass (charged as the
   single rank's fused update: 1 flop and 2 bytes an element more) */
static void dpprof__dist_update(dpprof_session *s, int noise_step, int noise_only) {
    const int adam = s->cfg.optimizer == DPPROF_OPT_ADAM;
    const size_t n = (size_t)s->dist.shard_train;
    dpprof_tensor shard;
    dpprof_cost c;
    int i;
    memset(&shard, 0, sizeof shard);
    shard.n = (int64_t)n;
    shard.elem_size = DPPROF__R;
    if (noise_only) {
        DPPROF__OPX(s, "noise", dpprof__noise_cost(&shard), s->dist.real ? dpprof__dist_apply(s, noise_step, 0) : (void)0,
                    s->dist.real ? dpprof__dist_apply(s, noise_step, 0) : (void)0);
        return;
    }
    s->run.adam_t++;
    c = adam ? dpprof_adam_cost(n, DPPROF__R) : dpprof_sgd_cost(n, DPPROF__R);
    if (noise_step >= 0) c.flops += dpprof__noise_cost(&shard).flops;
    for (i = 0; s->dist.zero == 3 && i < s->model.n_params; i++) /* the copies' parts, written in the same pass */
        if (s->model.params[i].trainable && s->model.params[i].wl.n) {
            const double k = (double)dpprof__dist_chunk(s, s->model.params[i].w.n);
            c.flops += k, c.bytes += 2.0 * k;
        }
    DPPROF__OPX(s, noise_step >= 0 ? (adam ? "noise_adam" : "noise_sgd") : (adam ? "adam" : "sgd"), c, s->dist.real ? dpprof__dist_apply(s, noise_step, 1) : (void)0,
                s->dist.real ? dpprof__dist_apply(s, noise_step, 1) : (void)0);
    for (i = 0; s->dist.zero <= 2 && i < s->model.n_params; i++) {
        if (!s->model.params[i].trainable) continue;
        dpprof__dist_coll(s, DPPROF__AG_BYTES, s->model.params[i].w.n, DPPROF__R);
        if (s->dist.real) dpprof__coll_allgather(s, DPPROF__W(s, i), s->model.params[i].w.n, s->model.params[i].w.n, NULL); /* the updated parts, in place */
    }
    if (s->dist.zero <= 2) dpprof__cast_weights(s, 0, s->model.n_params, 1); /* bf16: every rank's whole copies, from the gathered masters */
    if (s->dist.zero == 1) {
        dpprof__zero_grads(s);
        return;
    }
    c.flops = 0.0;
    c.bytes = (double)n * DPPROF__R;
    DPPROF__OPX(s, "grad_zero", c, (void)(s->dist.real ? memset(s->dist.gshard.data, 0, n * sizeof(dpprof_real)) : NULL),
                (void)(s->dist.real ? dpprof_cuda_zero(s->dist.gshard.data, n * sizeof(dpprof_real)) : DPPROF_OK));
}

static void dpprof__noise(dpprof_session *s, int step) {
    uint64_t off = 0;
    int i;
    if (s->dist.zero) {
        dpprof__dist_update(s, step, 1);
        return;
    }
    for (i = 0; i < s->model.n_params; i++) {
        dpprof_param *p = &s->model.params[i];
        dpprof_cost c;
        if (!p->trainable) continue;
        c = dpprof__noise_cost(&p->g);
        DPPROF__OPX(s, "noise", c, dpprof__noise_cpu(s, DPPROF__F(p->g), p->g.n, step, off),
                    dpprof_noise_scale_gpu(DPPROF__F(p->g), (size_t)p->g.n, s->plan.noise_std, s->dps.noise_key, (uint64_t)step | s->dps.noise_stream_bits, off, 1.0 / s->cfg.batch));
        off += (uint64_t)p->g.n;
    }
}

/* the update of every trainable weight; bf16: the optimizer's kernel also writes the weight's working copy
   (charged 1 flop and 2 bytes per element more), so no cast_bf16 op reads the new weight back.
   noise_step >= 0 (fused_noise): each tensor's noise and division by the batch (dpprof__noise's, the same
   stream offsets) in the same pass, never stored: the op noise_adam (noise_sgd), charged the noise's flops
   and none of its bytes; the cpu backend runs the two references in turn (the same bits) */
static void dpprof__optimizer(dpprof_session *s, int noise_step) {
    int i;
    const int E = DPPROF__R, adam = s->cfg.optimizer == DPPROF_OPT_ADAM; /* weights, gradients and moments are fp32 whatever the activations */
    const double inv_b = 1.0 / s->cfg.batch;
    uint64_t off = 0;
    if (s->dist.zero) {
        dpprof__dist_update(s, noise_step, 0);
        return;
    }
    s->run.adam_t++;
    for (i = 0; i < s->model.n_params; i++) {
        dpprof_param *p = &s->model.params[i];
        const size_t n = (size_t)p->w.n;
        dpprof_bf16 *copy = p->wl.n ? (dpprof_bf16 *)p->wl.data : NULL; /* cuda and dry only: cpu refuses bf16 */
        const uint64_t o = off;
        dpprof_cost c = adam ? dpprof_adam_cost(n, E) : dpprof_sgd_cost(n, E);
        if (!p->trainable) continue;
        off += (uint64_t)p->g.n;
        (void)copy, (void)o;                                           /* without cuda */
        if (p->wl.n) c.flops += (double)n, c.bytes += 2.0 * (double)n; /* dry has no data, the same cost */
        if (noise_step >= 0) {
            c.flops += dpprof__noise_cost(&p->g).flops;
            if (adam)
                DPPROF__OPX(s, "noise_adam", c,
                            (dpprof__noise_cpu(s, DPPROF__F(p->g), p->g.n, noise_step, o),
                             dpprof_adam_ref(DPPROF__F(p->w), DPPROF__F(p->m), DPPROF__F(p->v), DPPROF__F(p->g), n, s->cfg.lr, 0.9, 0.999, 1e-8, s->cfg.weight_decay, s->run.adam_t)),
                            dpprof_noise_adam_gpu(DPPROF__F(p->w), DPPROF__F(p->m), DPPROF__F(p->v), DPPROF__F(p->g), n, s->cfg.lr, 0.9, 0.999, 1e-8, s->cfg.weight_decay,
                                                  s->run.adam_t, copy, s->plan.noise_std, s->dps.noise_key, (uint64_t)noise_step | s->dps.noise_stream_bits, o, inv_b));
            else
                DPPROF__OPX(s, "noise_sgd", c, (dpprof__noise_cpu(s, DPPROF__F(p->g), p->g.n, noise_step, o), dpprof_sgd_ref(DPPROF__F(p->w), DPPROF__F(p->g), n, s->cfg.lr)),
                            dpprof_noise_sgd_gpu(DPPROF__F(p->w), DPPROF__F(p->g), n, s->cfg.lr, copy, s->plan.noise_std, s->dps.noise_key, (uint64_t)noise_step | s->dps.noise_stream_bits, o, inv_b));
        } else if (adam)
            DPPROF__OPX(s, "adam", c, dpprof_adam_ref(DPPROF__F(p->w), DPPROF__F(p->m), DPPROF__F(p->v), DPPROF__F(p->g), n, s->cfg.lr, 0.9, 0.999, 1e-8, s->cfg.weight_decay, s->run.adam_t),
                        dpprof_adam_gpu(DPPROF__F(p->w), DPPROF__F(p->m), DPPROF__F(p->v), DPPROF__F(p->g), n, s->cfg.lr, 0.9, 0.999, 1e-8, s->cfg.weight_decay, s->run.adam_t, copy));
        else
            DPPROF__OPX(s, "sgd", c, dpprof_sgd_ref(DPPROF__F(p->w), DPPROF__F(p->g), n, s->cfg.lr), dpprof_sgd_gpu(DPPROF__F(p->w), DPPROF__F(p->g), n, s->cfg.lr, copy));
    }
    (void)inv_b;
    dpprof__zero_grads(s);
}

/* the sample ids of logical step `step`: a fixed batch (rank r of N the r-th B/N of it), or poisson sampling (each
   of the dataset's D examples with probability q = B/D, from the counter-based generator). over ranks each rank
   draws the whole step's batch (a draw is a function of the sample id, the step and the key alone, so every rank
   draws the same) and takes its shard's samples, the ids i with i mod N = r (Opacus's distributed sampler's
   shards): the ranks' union is the one-rank batch exactly. the step's physical batches follow: ceil(n / b) of the
   rank's n samples, and from zero 2 on, where every physical batch holds collectives, the most any rank needs (a
   rank with fewer runs idle ones, dpprof__dps.idle) */
#define DPPROF__STREAM_POISSON (UINT64_C(3) << 40)
static int dpprof__poisson_draw(dpprof_session *s, int step, int *ids, int *mine, int *n);
static int dpprof__sample_batch(dpprof_session *s, int step) {
    int i, most;
    s->dps.batch_n = 0;
    if (!s->cfg.poisson) {
        for (i = 0; i < s->cfg.batch; i++) {
            uint64_t g = (uint64_t)step * (uint64_t)s->cfg.batch + (uint64_t)i;
            if (s->cfg.dataset_size) g %= (uint64_t)s->cfg.dataset_size;
            s->dps.batch_ids[s->dps.batch_n++] = (int)g;
        }
        s->dps.draw_n = s->dps.batch_n;
        s->dps.batch_n /= s->cfg.ranks; /* rank r takes the r-th batch / ranks samples */
        if (s->dist.rank) memmove(s->dps.batch_ids, s->dps.batch_ids + (size_t)s->dist.rank * (size_t)s->dps.batch_n, sizeof(int) * (size_t)s->dps.batch_n);
        most = s->dps.batch_n;
    } else {
        DPPROF__TRY(dpprof__poisson_draw(s, step, s->dps.batch_ids, &s->dps.batch_n, &s->dps.draw_n));
        most = s->dps.batch_n;
        for (i = 0; s->dist.zero >= 2 && i < s->dist.n; i++)
            if (s->dps.rank_n[i] > most) most = s->dps.rank_n[i];
    }
    s->dps.passes = (most + s->cfg.physical_batch - 1) / s->cfg.physical_batch;
    return DPPROF_OK;
}

/* step's Poisson draw: each of the dataset's samples in with probability batch / dataset_size, from the noise's key;
   the draw's size into *n; this rank's shard of it (the ids i with i mod ranks = rank; every id at one rank) into
   ids (NULL: none) and its count into *mine (NULL: none), each rank's count into dps.rank_n where it is */
static int dpprof__poisson_draw(dpprof_session *s, int step, int *ids, int *mine, int *n) {
    const int ranks = s->dist.n > 1 ? s->dist.n : 1;
    *n = 0;
    if (mine) *mine = 0;
    if (s->dps.rank_n) memset(s->dps.rank_n, 0, sizeof(int) * (size_t)ranks);
    {
        const double q = (double)s->cfg.batch / (double)s->cfg.dataset_size;
        long long j;
        uint32_t w[16];
        for (j = 0; j < s->cfg.dataset_size; j++) {
            uint32_t u;
            if (s->dps.noise_stream_bits & DPPROF_NOISE_SECURE) { /* chacha20 under the secret key: a block of 16 samples' draws */
                if (j % 16 == 0) dpprof_chacha20_block(&s->dps.noise_key, (uint64_t)j / 16, DPPROF__STREAM_POISSON | (uint64_t)(uint32_t)step, w);
                u = w[j % 16];
            } else {
                dpprof_u32x4 ctr, r;
                ctr.v[0] = (uint32_t)j;
                ctr.v[1] = (uint32_t)((uint64_t)j >> 32);
                ctr.v[2] = (uint32_t)step;
                ctr.v[3] = (uint32_t)(DPPROF__STREAM_POISSON >> 32);
                r = dpprof_philox4x32_10(ctr, s->dps.noise_key.w[0], s->dps.noise_key.w[1]);
                u = r.v[0];
            }
            if (((double)u + 0.5) * (1.0 / 4294967296.0) < q) {
                const int r = (int)(j % ranks);
                if (*n >= s->cfg.batch * 4 + 64) /* far above any plausible draw: refuse to grow without bound */
                    return dpprof__fail(DPPROF_ERR_OVERFLOW, "poisson sampling drew more than %d samples at step %d", *n, step);
                ++*n;
                if (s->dps.rank_n) s->dps.rank_n[r]++;
                if (r != s->dist.rank) continue;
                if (ids && mine) ids[*mine] = (int)j;
                if (mine) ++*mine;
            }
        }
    }
    return DPPROF_OK;
}

/* the optimizer must never see a nan or inf gradient: say which tensor went bad */
static int dpprof__check_grads_run(dpprof_session *s, int step) {
    int i;
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) { /* one flag for all tensors, one wait */
        int bad = -1;
        dpprof_nonfinite_reset_gpu();
        for (i = 0; i < s->model.n_params; i++) {
            const dpprof_param *p = &s->model.params[i];
            int64_t lo = 0, len = p->g.n;
            if (!p->trainable) continue;
            if (s->dist.real && s->dist.zero) dpprof__dist_part(s, p->w.n, &lo, &len); /* the rank's part: in the tensor (zero 1), in the shard */
            if (s->dist.real && s->dist.zero >= 2) dpprof_nonfinite_gpu(DPPROF__F(s->dist.gshard) + s->dist.toff[i], (size_t)len, i);
            else dpprof_nonfinite_gpu(DPPROF__F(p->g) + lo, (size_t)len, i);
        }
        if (dpprof_nonfinite_result_gpu(&bad) != DPPROF_OK) return dpprof__fail(DPPROF_ERR_CUDA, "step %d on the gpu: %s", step, dpprof_last_error());
        if (bad >= 0) return dpprof__fail(DPPROF_ERR_NUMERIC, "the gradient of %s holds a nan or inf in step %d", s->model.params[bad].name, step);
        return DPPROF_OK;
    }
#endif
    if (s->backend != DPPROF_BACKEND_CPU) return DPPROF_OK;
    if (s->dist.real && s->dist.zero >= 2) { /* the gradients are this rank's shard */
        const dpprof_real *g = DPPROF__F(s->dist.gshard);
        int64_t e;
        for (e = 0; e < s->dist.gshard.n; e++)
            if (!(fabs((double)g[e]) <= DBL_MAX)) return dpprof__fail(DPPROF_ERR_NUMERIC, "the gradient shard of rank %d is %g at element %lld in step %d", s->dist.rank, (double)g[e], (long long)e, step);
        return DPPROF_OK;
    }
    for (i = 0; i < s->model.n_params; i++) {
        const dpprof_param *p = &s->model.params[i];
        const dpprof_real *g = DPPROF__F(p->g);
        int64_t e, lo = 0, len = p->g.n;
        if (!p->trainable) continue;
        if (s->dist.real && s->dist.zero == 1) dpprof__dist_part(s, p->w.n, &lo, &len); /* reduce-scattered: the rank's part only */
        for (e = lo; e < lo + len; e++)
            if (!(fabs((double)g[e]) <= DBL_MAX))
                return dpprof__fail(DPPROF_ERR_NUMERIC, "the gradient of %s is %g at element %lld in step %d", p->name, (double)g[e], (long long)e, step);
    }
    return DPPROF_OK;
}

/* the check as the op grad_check: a read of every gradient byte (charged on every backend, dry too, so
   that the analytic bytes are the same everywhere) */
static int dpprof__check_grads(dpprof_session *s, int step) {
    dpprof_cost c;
    int i, rc;
    c.flops = 0.0;
    c.bytes = 0.0;
    for (i = 0; i < s->model.n_params; i++)
        if (s->model.params[i].trainable) c.bytes += (double)s->model.params[i].g.n * (double)s->model.params[i].g.elem_size;
    if (s->dist.zero) c.bytes = (double)s->dist.shard_train * DPPROF__R; /* the rank's shard */
    dpprof_prof_add_cost(&s->prof, c.flops, c.bytes);
    dpprof__op_mark(s, "grad_check", c);
    rc = dpprof__check_grads_run(s, step);
#ifdef DPPROF_MPI
    if (s->dist.real) { /* every rank goes on, or none: a rank's shard that went bad stops them all */
        int bad = rc != DPPROF_OK;
        MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (bad && rc == DPPROF_OK) rc = dpprof__fail(DPPROF_ERR_NUMERIC, "another rank's gradient shard holds a nan or inf in step %d", step);
    }
#endif
    dpprof__op_mark(s, NULL, c);
    return rc;
}

/* cuda: when the step's last queued work has run, the phases of the step get the device's times
   (cuda events recorded where each phase began), placed on the host clock at the step's start */
static int dpprof__gpu_times(dpprof_session *s, size_t first_phase, int ev_start, double t0, double *step_ms) {
#if DPPROF__CUDA
    size_t k;
    int ev_end;
    double ms;
    if (dpprof_cuda_event(&ev_end) != DPPROF_OK || dpprof_cuda_sync() != DPPROF_OK || dpprof_cuda_event_ms(ev_start, ev_end, step_ms) != DPPROF_OK)
        return dpprof__fail(DPPROF_ERR_CUDA, "the step on the gpu failed: %s", dpprof_last_error());
    for (k = first_phase; k < s->prof.n_phases; k++) {
        dpprof_phase_rec *r = &s->prof.phases[k];
        int a = k < s->obs.cap_ph_ev ? s->obs.ph_ev[k] : -1, b = k + 1 < s->prof.n_phases && k + 1 < s->obs.cap_ph_ev ? s->obs.ph_ev[k + 1] : ev_end;
        if (a < 0 || b < 0) continue;
        if (dpprof_cuda_event_ms(ev_start, a, &ms) != DPPROF_OK) return dpprof__fail(DPPROF_ERR_CUDA, "%s", dpprof_last_error());
        r->t_start_ms = t0 + ms;
        if (dpprof_cuda_event_ms(ev_start, b, &ms) != DPPROF_OK) return dpprof__fail(DPPROF_ERR_CUDA, "%s", dpprof_last_error());
        r->t_end_ms = t0 + ms;
    }
    for (k = s->obs.n_ops; k-- > 0 && s->obs.ops[k].phase_rec >= first_phase;) {
        dpprof__op_rec *o = &s->obs.ops[k];
        if (o->ev0 < 0 || o->ev1 < 0) continue;
        if (dpprof_cuda_event_ms(ev_start, o->ev0, &ms) != DPPROF_OK) return dpprof__fail(DPPROF_ERR_CUDA, "%s", dpprof_last_error());
        o->t0 = t0 + ms;
        if (dpprof_cuda_event_ms(ev_start, o->ev1, &ms) != DPPROF_OK) return dpprof__fail(DPPROF_ERR_CUDA, "%s", dpprof_last_error());
        o->t1 = t0 + ms;
    }
#else
    (void)s;
    (void)first_phase;
    (void)ev_start;
    (void)t0;
    (void)step_ms;
#endif
    return DPPROF_OK;
}

static int dpprof__dry_plan(const dpprof_session *s, int64_t *peak);

/* ---- 5.8b the frameworks' memory ----------------------------------------------------------------------------
   config.framework = pytorch (dry backend): the step a PyTorch user writes for Hugging Face's LlamaForCausalLM,
       loss = model(input_ids=x, labels=y).loss; loss.backward(); opt.step(); opt.zero_grad(set_to_none=True)
   with torch.optim.AdamW(foreach=True), walked allocation by allocation as PyTorch makes them: each tensor an
   operator returns, held while Python or autograd refers to it (a reference count: the Python name, each saved
   tensor of a node), freed when the last reference goes; the backward's nodes in autograd's order (the last
   created first), a node's outputs made before its incoming gradient and its saved tensors are released, a
   tensor's gradients from several uses summed out of place as they arrive. sdpa or eager attention, PEFT's LoRA
   (modules_to_save, a base loaded in bf16), bf16 autocast, Hugging Face's gradient checkpointing (checkpoint layers:
   each layer's forward keeps nothing its nodes save, its backward runs it again to the last saved tensor).
   config.framework = opacus: Opacus's loop over the same
   walk, its hooks (algo persample) or its ghost clipping (algo ghost: two backward passes, the first retaining the
   graph). Each allocation is rounded up to 512 bytes, as the
   CUDA caching allocator rounds its blocks (DPPROF_FW_ROUND; 1 for reading the walk against peers.py events).
   docs/frameworks.md lists what each operator allocates and saves and how the walk was checked against PyTorch's
   own tracker. */
#ifndef DPPROF_FW_ROUND
#define DPPROF_FW_ROUND 512
#endif
typedef struct dpprof__fwt {
    int64_t bytes; /* 0: the slot is free */
    int refs;
    int kept; /* it existed when a backward that retains the graph began: that backward frees it not */
} dpprof__fwt;

/* a tensor of n elements of e bytes, with one reference (its Python name); -1 where it has no bytes, or after an
   allocation failed (s->fw.rc says why; every later call does nothing) */
static int dpprof__fw_new(dpprof_session *s, int64_t n, int e, int cat, int mod) {
    dpprof__fw *w = &s->fw;
    int64_t bytes = n * e;
    int h;
    if (w->rc != DPPROF_OK || bytes <= 0 || w->stopped) return -1;
    bytes = (bytes + DPPROF_FW_ROUND - 1) / DPPROF_FW_ROUND * DPPROF_FW_ROUND;
    if (s->cfg.memory_limit > 0 && bytes > s->cfg.memory_limit - s->prof.live_bytes) {
        w->rc = dpprof__fail(DPPROF_ERR_OOM, "out of memory: %lld more bytes (%s, %s) would bring live memory to %lld bytes, over the limit of %lld bytes",
                             (long long)bytes, dpprof_category_name(cat), dpprof_module_name(mod), (long long)(s->prof.live_bytes + bytes), (long long)s->cfg.memory_limit);
        return -1;
    }
    if (!w->n_free) {
        w->rc = dpprof__fail(DPPROF_ERR_OVERFLOW, "the framework walk holds more than %d tensors", w->cap);
        return -1;
    }
    h = w->free_list[--w->n_free];
    w->t[h].bytes = bytes;
    w->t[h].refs = 1;
    w->t[h].kept = 0;
    if ((w->rc = dpprof_track_alloc(&s->prof, &w->t[h], (size_t)bytes, cat, mod)) != DPPROF_OK) return -1;
    return h;
}
/* one more reference (a second consumer receives it, a hook holds it) */
static int dpprof__fw_ref(dpprof_session *s, int h) {
    if (h >= 0) s->fw.t[h].refs++;
    return h;
}
/* a saved tensor packed (a product's input or weight): counted in a checkpointed forward; a recompute stops at the
   last the forward counted (torch.utils.checkpoint's early stop: the rest of the layer is not run again) */
static void dpprof__fw_pack(dpprof_session *s) {
    if (++s->fw.npack == s->fw.stop_at && s->fw.recomp) s->fw.stopped = 1;
}
/* an autograd node saves h for its backward: one more reference; none in a checkpointed forward (its saved tensors
   are holders, made again by the recompute; -1), nor past a recompute's early stop */
static int dpprof__fw_save(dpprof_session *s, int h) {
    return s->fw.nosave || s->fw.stopped ? -1 : dpprof__fw_ref(s, h);
}
/* one reference fewer, whoever holds it (an Opacus hook its input): the last frees it */
static void dpprof__fw_unref(dpprof_session *s, int h) {
    dpprof__fw *w = &s->fw;
    if (h < 0 || !w->t[h].bytes) return;
    if (--w->t[h].refs > 0) return;
    dpprof_track_free(&s->prof, &w->t[h]);
    w->t[h].bytes = 0;
    w->free_list[w->n_free++] = h;
}
/* one reference fewer: a Python name or a node's saved tensor; in a backward that retains the graph
   (retain_graph=True) the tensors saved before it are released not */
static void dpprof__fw_drop(dpprof_session *s, int h) {
    if (h >= 0 && s->fw.retain && s->fw.t[h].kept) return;
    dpprof__fw_unref(s, h);
}
/* retain_graph=True begins (on) or ends: every tensor alive now is kept */
static void dpprof__fw_retain(dpprof_session *s, int on) {
    int h;
    for (h = 0; h < s->fw.cap; h++) s->fw.t[h].kept = on && s->fw.t[h].bytes > 0;
    s->fw.retain = on;
}
/* the gradient h arrives at a tensor whose sum so far is *buf: the first is kept, each later one summed out of
   place (the new sum made, then the old sum and h dropped) */
static void dpprof__fw_acc(dpprof_session *s, int *buf, int h, int64_t n, int e) {
    int sum;
    if (*buf < 0) {
        *buf = h;
        return;
    }
    sum = dpprof__fw_new(s, n, e, DPPROF_CAT_ACTIVATIONS, s->fw.mod);
    dpprof__fw_drop(s, *buf);
    dpprof__fw_drop(s, h);
    *buf = sum;
}
/* a parameter's gradient dw (made with one reference) reaches AccumulateGrad: the first becomes .grad, a later one
   is added into it in place and dropped when AccumulateGrad runs, right after the node that made it
   (dpprof__fw_done) */
static void dpprof__fw_grad(dpprof_session *s, int p, int dw) {
    if (s->fw.g[p] < 0) s->fw.g[p] = dw;
    else if (s->fw.n_pending < (int)(sizeof s->fw.pending / sizeof s->fw.pending[0])) s->fw.pending[s->fw.n_pending++] = dw;
    else dpprof__fw_drop(s, dw);
}
/* a node is done (its incoming gradient dropped, its saved tensors released): the AccumulateGrad nodes it made ready
   run */
static void dpprof__fw_done(dpprof_session *s) {
    while (s->fw.n_pending) dpprof__fw_drop(s, s->fw.pending[--s->fw.n_pending]);
}

/* a node is through: its incoming gradient g dropped and what it saved (a, b) released, after g; but under gradient
   checkpointing (a checkpointed layer's backward: what it saved unpacked from the frame, freed as its apply returns)
   before g */
static void dpprof__fw_node_end(dpprof_session *s, int g, int a, int b) {
    if (s->fw.frame < 0) dpprof__fw_drop(s, g);
    dpprof__fw_drop(s, a);
    dpprof__fw_drop(s, b);
    if (s->fw.frame >= 0) dpprof__fw_drop(s, g);
}

#define DPPROF__FN(n, e) dpprof__fw_new(s, (int64_t)(n), (e), DPPROF_CAT_ACTIVATIONS, s->fw.mod)
/* a gradient *h (where there is one) passes a node that makes it anew (a cast's backward, a broadcast's sum): n
   elements of e bytes made, then the old dropped */
static void dpprof__fw_remake(dpprof_session *s, int *h, int64_t n, int e) {
    int t;
    if (*h < 0) return;
    t = DPPROF__FN(n, e);
    dpprof__fw_drop(s, *h);
    *h = t;
}
/* parameter p is stored in bf16: a frozen weight of a base loaded in bf16 (torch_dtype) */
static int dpprof__fw_w16(const dpprof_session *s, int p) {
    return s->fw.base16 && (!s->model.params[p].trainable || p == s->model.p_head); /* modules_to_save's copy: bf16 too */
}
/* the bytes of an element of parameter p (its .grad and AdamW's moments are its dtype) */
static int dpprof__fw_pe(const dpprof_session *s, int p) { return dpprof__fw_w16(s, p) ? 2 : 4; }
/* a parameter's weight gradient, made by its node: the first becomes .grad; a tied head's waits for the
   embedding's in AccumulateGrad's buffer */
static void dpprof__fw_dw(dpprof_session *s, int p) {
    const dpprof_param *pp = &s->model.params[p];
    const int dw = dpprof__fw_new(s, (int64_t)pp->rows * pp->cols, dpprof__fw_pe(s, p), DPPROF_CAT_GRADIENTS, p == s->model.p_emb ? DPPROF_MOD_HEAD : pp->module);
    if (p == s->model.p_emb) s->fw.tied = dw;
    else dpprof__fw_grad(s, p, dw);
}
/* ghost clipping: parameter p's new _norm_sample (n floats) replaces the last */
static void dpprof__fw_norm_sample(dpprof_session *s, int p, int h) {
    dpprof__fw_unref(s, s->fw.ns[p]);
    s->fw.ns[p] = h;
}
static void dpprof__fw_recompute(dpprof_session *s);
struct dpprof__fw_norm;
static void dpprof__fw_frame_end(dpprof_session *s, const struct dpprof__fw_norm *nm);
/* what one RMSNorm keeps for its backward: rgx and rgw, whether its input and its weight need gradients (what a
   node saves depends on which of its inputs do) */
typedef struct dpprof__fw_norm {
    int x, r, hn, rgx, rgw;
    int hx; /* Opacus: the input its forward hook keeps */
} dpprof__fw_norm;
/* Opacus's hook of an RMSNorm (functorch's grad sampler): the output's gradient times the batch size, the module's
   forward again per sample under vmap and its vector-Jacobian product, a zeroed grad_sample (n x C) */
static void dpprof__fw_opacus_norm_hook(dpprof_session *s, int g, int hx, int p, int64_t N, int C) {
    const int64_t n = s->fw.n;
    int bp, pw, mean, ad, r, hn, y, t1, s1, on, m1, m2, ps;
    if (s->fw.pass == 2) { /* the hooks off */
        dpprof__fw_drop(s, g);
        return;
    }
    bp = DPPROF__FN(N * C, 4);
    pw = DPPROF__FN(N * C, 4);
    mean = DPPROF__FN(N, 4);
    dpprof__fw_drop(s, pw);
    ad = DPPROF__FN(N, 4);
    r = DPPROF__FN(N, 4);
    dpprof__fw_drop(s, ad);
    hn = DPPROF__FN(N * C, 4);
    dpprof__fw_drop(s, r);
    y = DPPROF__FN(N * C, 4);
    dpprof__fw_drop(s, mean);
    t1 = DPPROF__FN(N * C, 4);
    s1 = DPPROF__FN(n, 4);
    dpprof__fw_drop(s, t1);
    dpprof__fw_drop(s, y);
    on = DPPROF__FN(n, 4);
    m1 = DPPROF__FN(N * C, 4);
    m2 = DPPROF__FN(N * C, 4);
    ps = DPPROF__FN(n * C, 4);
    dpprof__fw_drop(s, m1);
    dpprof__fw_drop(s, m2);
    dpprof__fw_drop(s, hn);
    dpprof__fw_drop(s, on);
    dpprof__fw_drop(s, s1);
    s->fw.gs[p] = dpprof__fw_new(s, n * C, 4, DPPROF_CAT_PER_SAMPLE_GRADIENTS, DPPROF_MOD_NORM);
    if (s->fw.ghost) { /* fast gradient clipping: _norm_sample a zeroed n x 1, then the grad_sample's norm; the
                          grad_sample goes */
        dpprof__fw_norm_sample(s, p, dpprof__fw_new(s, n, 4, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_NORM));
        dpprof__fw_norm_sample(s, p, dpprof__fw_new(s, n, 4, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_NORM));
        dpprof__fw_drop(s, s->fw.gs[p]);
        s->fw.gs[p] = -1;
    }
    dpprof__fw_drop(s, bp);
    dpprof__fw_unref(s, hx);
    dpprof__fw_drop(s, ps);
    dpprof__fw_drop(s, g);
}
/* LlamaRMSNorm.forward on x (N rows of C): pow, mean, + eps, rsqrt, x * rsqrt, weight * it; returns its output,
   which needs a gradient where x or the weight does */
static int dpprof__fw_norm_fwd(dpprof_session *s, dpprof__fw_norm *nm, int x, int rgx, int p, int64_t N, int C) {
    int pw, mean, ad, r, hn, hb, y;
    const int E = 4, xb = s->fw.base16; /* a bf16 base: x bf16, computed in fp32 (x.to(float32)), the weight bf16 */
    nm->hx = s->fw.opacus && s->model.params[p].trainable ? dpprof__fw_ref(s, x) : -1;
    nm->x = xb ? DPPROF__FN(N * C, 4) : x;
    x = nm->x;
    nm->rgx = rgx;
    nm->rgw = s->model.params[p].trainable;
    pw = DPPROF__FN(N * C, E);
    if (rgx) dpprof__fw_save(s, x); /* pow saves its input */
    mean = DPPROF__FN(N, E);
    dpprof__fw_drop(s, pw);
    ad = DPPROF__FN(N, E);
    r = DPPROF__FN(N, E);
    if (rgx) dpprof__fw_save(s, r); /* rsqrt saves its result */
    dpprof__fw_drop(s, ad);
    hn = DPPROF__FN(N * C, E);
    if (rgx) { /* x * rsqrt saves both */
        dpprof__fw_save(s, x);
        dpprof__fw_save(s, r);
    }
    dpprof__fw_drop(s, r);
    if (xb) dpprof__fw_drop(s, x);       /* the fp32 copy's name goes to hn */
    hb = xb ? DPPROF__FN(N * C, 2) : hn; /* hn.to(bf16) */
    y = DPPROF__FN(N * C, xb ? 2 : E);
    if (nm->rgw) dpprof__fw_save(s, hb); /* weight * hn saves hn where the weight trains */
    if (xb) dpprof__fw_drop(s, hb);
    dpprof__fw_drop(s, hn);
    dpprof__fw_drop(s, mean);
    nm->r = rgx ? r : -1;
    nm->hn = nm->rgw ? hb : -1;
    return y;
}
/* its backward from g (the output's gradient, consumed): the weight's gradient to parameter p, the input's two
   gradients summed into *gx */
static void dpprof__fw_norm_bwd(dpprof_session *s, dpprof__fw_norm *nm, int g, int *gx, int p, int64_t N, int C) {
    const int E = 4, xb = s->fw.base16, ck = s->fw.frame >= 0;
    int t, gh, gr, a, b, c, d, e, g32 = -1, gl = -1, *gxf = xb ? &g32 : (nm->hx >= 0 ? &gl : gx); /* a bf16 x: its fp32 copy's
                                                                     gradients first; Opacus: the hooked input's */
    if (nm->hx >= 0) dpprof__fw_ref(s, g);                                                        /* Opacus's hook holds the output's gradient */
    /* weight * hn */
    t = nm->rgw ? DPPROF__FN(N * C, E) : -1;
    gh = nm->rgx ? DPPROF__FN(N * C, xb ? 2 : E) : -1;
    if (ck) dpprof__fw_drop(s, nm->hn); /* gradient checkpointing: a saved tensor, unpacked from the frame, goes as the
                                           node's apply returns (before the engine's sum to the weight's shape and the
                                           incoming gradient); else after both */
    if (nm->rgw) dpprof__fw_grad(s, p, dpprof__fw_new(s, C, 4, DPPROF_CAT_GRADIENTS, DPPROF_MOD_NORM));
    dpprof__fw_drop(s, t);
    dpprof__fw_drop(s, g);
    if (!ck) dpprof__fw_drop(s, nm->hn);
    dpprof__fw_done(s);
    if (!nm->rgx) return;
    if (xb) { /* hn.to(bf16)'s backward */
        t = DPPROF__FN(N * C, 4);
        dpprof__fw_drop(s, gh);
        gh = t;
    }
    /* x * rsqrt */
    a = DPPROF__FN(N * C, E);
    t = DPPROF__FN(N * C, E);
    if (ck) {
        dpprof__fw_drop(s, nm->x);
        dpprof__fw_drop(s, nm->r);
    }
    gr = DPPROF__FN(N, E);
    dpprof__fw_drop(s, t);
    dpprof__fw_drop(s, gh);
    if (!ck) {
        dpprof__fw_drop(s, nm->x);
        dpprof__fw_drop(s, nm->r);
    }
    dpprof__fw_acc(s, gxf, a, N * C, E);
    /* rsqrt: g * -0.5 * r^3 */
    a = DPPROF__FN(N, E);
    b = DPPROF__FN(N, E);
    c = DPPROF__FN(N, E);
    dpprof__fw_drop(s, b);
    dpprof__fw_drop(s, a);
    dpprof__fw_node_end(s, gr, nm->r, -1);
    /* mean: expand / C; pow: g * 2 * x */
    d = DPPROF__FN(N * C, E);
    dpprof__fw_drop(s, c);
    a = DPPROF__FN(N * C, E);
    b = DPPROF__FN(N * C, E);
    e = DPPROF__FN(N * C, E);
    dpprof__fw_drop(s, b);
    dpprof__fw_drop(s, a);
    dpprof__fw_node_end(s, d, nm->x, -1);
    dpprof__fw_frame_end(s, nm);
    dpprof__fw_acc(s, gxf, e, N * C, E);
    if (nm->hx >= 0) { /* Opacus's hook, once the input's gradient is whole: then on to x */
        dpprof__fw_opacus_norm_hook(s, g, nm->hx, p, N, C);
        dpprof__fw_acc(s, gx, gl, N * C, E);
    }
    if (xb) { /* x.to(float32)'s backward: to x's bf16 */
        t = DPPROF__FN(N * C, 2);
        dpprof__fw_drop(s, g32);
        dpprof__fw_acc(s, gx, t, N * C, 2);
    }
}

/* what a linear layer (with its PEFT adapter, where it has one) keeps */
typedef struct dpprof__fw_lin {
    int rgx, rgy, xb; /* whether the input and the output need gradients; the input is bf16 */
    int xs, ws;       /* what the product saves: of x (x, or its bf16 copy) where the weight trains; the weight's bf16
                         copy where x needs a gradient (autocast) */
    int axs, aws, a;  /* what lora_A saved of its input and of its weight, its output */
    int bxs, bws, xa; /* what lora_B saved of lora_A's output and of its weight; PEFT's fp32 copy of a bf16 input */
    int hx, ahx, bhx; /* Opacus: the inputs its forward hooks keep (the base's, the adapters') */
    int dm;           /* PEFT's lora_dropout: the mask its backward keeps */
} dpprof__fw_lin;
/* the adapter of parameter p, or -1 */
static int dpprof__fw_lora(const dpprof_session *s, int p) {
    const int j = (p - 1) % DPPROF__P_PER_LAYER, l = (p - 1) / DPPROF__P_PER_LAYER;
    return s->model.lora && p >= 1 && l < s->sh.L && j != 0 && j != 5 ? s->model.lora[l * DPPROF__P_PER_LAYER + j] : -1;
}
/* Opacus's grad_sample of parameter p is bf16: a linear layer's (the head's too) under bf16 autocast; a norm's and
   the embedding's are fp32 */
static int dpprof__fw_gs16(const dpprof_session *s, int p) {
    return s->cfg.dtype == DPPROF_DTYPE_BF16 && (p == s->model.p_head || (p != s->model.p_emb && s->model.params[p].rows > 1));
}
/* Opacus's hook of a linear layer (GradSampleModule): the output's gradient times the batch size (loss_reduction
   mean), the per-sample gradient (an einsum: n x OC x IC), a zeroed grad_sample it is added into (kept to the
   optimizer's zero_grad); then the input and the output's gradient it held go. Ghost clipping's instead: the two
   T x T Grams of each sample (the output gradient's, the input's), their inner product, its square root the norm.
   With the hooks off (ghost's second backward) it only lets the output's gradient go. Under bf16 autocast the
   output's gradient is bf16: the input is cast to it (where it is fp32, xb = 0) and the per-sample gradient and
   grad_sample are bf16 */
static void dpprof__fw_opacus_linear_hook(dpprof_session *s, int g, int hx, int xb, int p, int64_t N) {
    const dpprof_param *pp = &s->model.params[p];
    const int64_t n = s->fw.n, per = n * pp->rows * pp->cols, tt = N / n * (N / n);
    const int e = s->cfg.dtype == DPPROF_DTYPE_BF16 ? 2 : 4;
    int bp, gs, xc = -1;
    if (s->fw.pass == 2) {
        dpprof__fw_drop(s, g);
        return;
    }
    bp = DPPROF__FN(N * pp->rows, e);
    if (e == 2 && !xb) xc = DPPROF__FN(N * pp->cols, 2);
    if (s->fw.ghost) {
        const int gg = dpprof__fw_new(s, n * tt, e, DPPROF_CAT_TEMP_MATRICES, pp->module), aa = dpprof__fw_new(s, n * tt, e, DPPROF_CAT_TEMP_MATRICES, pp->module);
        const int ga = DPPROF__FN(n, e), cl = DPPROF__FN(n, e);
        dpprof__fw_drop(s, ga);
        gs = dpprof__fw_new(s, n, e, DPPROF_CAT_NORM_SAMPLES, pp->module);
        dpprof__fw_drop(s, xc);
        dpprof__fw_drop(s, gg);
        dpprof__fw_drop(s, aa);
        dpprof__fw_drop(s, cl);
        dpprof__fw_norm_sample(s, p, gs);
        dpprof__fw_drop(s, bp);
        dpprof__fw_unref(s, hx);
        dpprof__fw_drop(s, g);
        return;
    }
    gs = DPPROF__FN(per, e);
    dpprof__fw_drop(s, xc);
    s->fw.gs[p] = dpprof__fw_new(s, per, e, DPPROF_CAT_PER_SAMPLE_GRADIENTS, pp->module);
    dpprof__fw_drop(s, bp);
    dpprof__fw_unref(s, hx);
    dpprof__fw_drop(s, gs);
    dpprof__fw_drop(s, g);
}
/* one F.linear (x @ W^T: mm saves x where W trains, W where x needs a gradient) on N rows of x (xb: bf16); under
   bf16 autocast the weight's bf16 copy (a trainable weight's cached for the forward; none where it is bf16) and
   x's where x is fp32, a bf16 output; returns the output, *xs and *ws what the product saved */
static int dpprof__fw_mm_fwd(dpprof_session *s, int x, int rgx, int xb, int p, int64_t N, int *xs, int *ws, int *hx) {
    const dpprof_param *pp = &s->model.params[p];
    const int ac = s->cfg.dtype == DPPROF_DTYPE_BF16, cached = ac && pp->trainable;
    int wc = -1, xc = x, out;
    if (ac && !dpprof__fw_w16(s, p)) {
        wc = s->fw.wcast[p] >= 0 ? s->fw.wcast[p] : dpprof__fw_new(s, (int64_t)pp->rows * pp->cols, 2, DPPROF_CAT_MODEL_PARAMETERS, p == s->model.p_emb ? DPPROF_MOD_HEAD : pp->module);
        if (cached) s->fw.wcast[p] = wc;
    }
    if (ac && !xb) xc = DPPROF__FN(N * pp->cols, 2);
    *xs = *ws = -1; /* the node saves its inputs before the product is made: x where the weight trains, the weight (or its
                       bf16 copy) where x needs a gradient */
    if (pp->trainable) {
        *xs = dpprof__fw_save(s, xc);
        dpprof__fw_pack(s);
    }
    if (rgx) {
        *ws = wc >= 0 ? dpprof__fw_save(s, wc) : -1;
        dpprof__fw_pack(s);
    }
    out = DPPROF__FN(N * pp->rows, ac ? 2 : 4);
    *hx = s->fw.opacus && pp->trainable ? dpprof__fw_ref(s, x) : -1; /* Opacus's forward hook keeps the module's input */
    if (xc != x) dpprof__fw_drop(s, xc);
    if (wc >= 0 && !cached) dpprof__fw_drop(s, wc);
    return out;
}
/* its backward from g (consumed): dW to parameter p where it trains; x's gradient (fp32 where x is: the cast's
   backward) summed into *gx where x needs one; then the weight's cast's backward and AccumulateGrad */
static void dpprof__fw_mm_bwd(dpprof_session *s, int g, int xs, int ws, int hx, int rgx, int xb, int p, int64_t N, int *gx) {
    const dpprof_param *pp = &s->model.params[p];
    const int ac = s->cfg.dtype == DPPROF_DTYPE_BF16, wcast = ac && !dpprof__fw_w16(s, p);
    int dwb = -1, t;
    if (hx >= 0 && !rgx) { /* Opacus, a module whose input needs no gradient: its hook runs on the output's gradient, first */
        dpprof__fw_ref(s, g);
        dpprof__fw_opacus_linear_hook(s, g, hx, xb, p, N);
        if (wcast) dwb = dpprof__fw_new(s, (int64_t)pp->rows * pp->cols, 2, DPPROF_CAT_GRADIENTS, pp->module);
        else dpprof__fw_dw(s, p);
        dpprof__fw_drop(s, g);
        dpprof__fw_drop(s, xs);
        if (dwb >= 0) { /* the weight's cast's backward: AccumulateGrad's fp32 */
            dpprof__fw_dw(s, p);
            dpprof__fw_drop(s, dwb);
        }
        dpprof__fw_done(s);
        return;
    }
    if (hx >= 0 && !ac) {     /* Opacus: the module's grad_sample in its full backward hook, after its own gradients
                                 (AccumulateGrad first) */
        dpprof__fw_ref(s, g); /* the hook holds the output's gradient */
        if (pp->trainable) dpprof__fw_dw(s, p);
        t = rgx ? DPPROF__FN(N * pp->cols, 4) : -1;
        dpprof__fw_drop(s, g);
        dpprof__fw_drop(s, xs);
        dpprof__fw_done(s);
        dpprof__fw_opacus_linear_hook(s, g, hx, xb, p, N);
        if (t >= 0) dpprof__fw_acc(s, gx, t, N * pp->cols, 4);
        return;
    }
    if (hx >= 0) dpprof__fw_ref(s, g); /* Opacus under autocast: the hook holds the output's gradient; the node and
                                          the casts' backwards run first, the hook at the input's */
    if (pp->trainable && !wcast) dpprof__fw_dw(s, p);
    else if (pp->trainable) dwb = dpprof__fw_new(s, (int64_t)pp->rows * pp->cols, 2, DPPROF_CAT_GRADIENTS, pp->module);
    t = rgx ? DPPROF__FN(N * pp->cols, ac ? 2 : 4) : -1;
    dpprof__fw_node_end(s, g, ws, xs);
    if (t >= 0 && ac && !xb) { /* x's cast's backward, the last made: first */
        const int t32 = DPPROF__FN(N * pp->cols, 4);
        dpprof__fw_drop(s, t);
        t = t32;
    }
    if (t >= 0 && hx < 0) dpprof__fw_acc(s, gx, t, N * pp->cols, ac && xb ? 2 : 4); /* the outputs routed */
    if (dwb >= 0) {
        dpprof__fw_dw(s, p);
        dpprof__fw_drop(s, dwb);
    }
    dpprof__fw_done(s); /* AccumulateGrad runs */
    if (hx < 0) return;
    dpprof__fw_opacus_linear_hook(s, g, hx, xb, p, N);
    if (t >= 0) dpprof__fw_acc(s, gx, t, N * pp->cols, xb ? 2 : 4);
}
/* nn.Linear on x, and PEFT's result + lora_B(lora_A(x)) * scaling where p has an adapter (the adapters fp32: a
   bf16 x copied to fp32 first); returns the output */
static int dpprof__fw_linear_fwd(dpprof_session *s, dpprof__fw_lin *ln, int x, int rgx, int xb, int p, int64_t N) {
    const dpprof_param *pp = &s->model.params[p];
    const int la = dpprof__fw_lora(s, p), ac = s->cfg.dtype == DPPROF_DTYPE_BF16, ea = ac ? 2 : 4;
    int base, out, b, m;
    ln->rgx = rgx;
    ln->xb = xb;
    ln->a = ln->xa = -1;
    base = dpprof__fw_mm_fwd(s, x, rgx, xb, p, N, &ln->xs, &ln->ws, &ln->hx);
    out = base;
    ln->dm = -1;
    if (la >= 0) {
        int d;
        ln->xa = ac && xb ? DPPROF__FN(N * pp->cols, 4) : x;
        d = ln->xa;
        if (s->cfg.lora_dropout > 0) { /* lora_dropout(x): CUDA's native_dropout, its output and a bool mask (kept by
                                          its backward where x needs a gradient) */
            const int m = (d = DPPROF__FN(N * pp->cols, 4), DPPROF__FN(N * pp->cols, 1));
            if (rgx) {
                ln->dm = dpprof__fw_save(s, m);
                dpprof__fw_pack(s);
            }
            dpprof__fw_drop(s, m);
        }
        ln->a = dpprof__fw_mm_fwd(s, d, rgx, 0, la, N, &ln->axs, &ln->aws, &ln->ahx);
        if (d != ln->xa) dpprof__fw_drop(s, d); /* lora_A keeps it */
        b = dpprof__fw_mm_fwd(s, ln->a, 1, ac, la + 1, N, &ln->bxs, &ln->bws, &ln->bhx);
        dpprof__fw_drop(s, ln->a);        /* lora_B keeps it */
        m = DPPROF__FN(N * pp->rows, ea); /* * scaling */
        dpprof__fw_drop(s, b);
        out = DPPROF__FN(N * pp->rows, ea);
        dpprof__fw_drop(s, m);
        dpprof__fw_drop(s, base);
        if (ln->xa != x) dpprof__fw_drop(s, ln->xa);
    }
    ln->rgy = rgx || pp->trainable || la >= 0;
    return out;
}
/* its backward from g (consumed): the weights' gradients; the input's, where it needs one, summed into *gx as each
   node makes it (the adapter's nodes first, the last created, then the base's) */
static void dpprof__fw_linear_bwd(dpprof_session *s, dpprof__fw_lin *ln, int g, int p, int64_t N, int *gx) {
    const dpprof_param *pp = &s->model.params[p];
    const int la = dpprof__fw_lora(s, p), base = ln->rgx || pp->trainable, ac = s->cfg.dtype == DPPROF_DTYPE_BF16;
    if (la >= 0) {
        int ms, da = -1, gxa = -1;
        if (base) dpprof__fw_ref(s, g); /* the sum's gradient goes on to both */
        ms = DPPROF__FN(N * pp->rows, ac ? 2 : 4);
        dpprof__fw_drop(s, g);
        dpprof__fw_recompute(s);
        dpprof__fw_mm_bwd(s, ms, ln->bxs, ln->bws, ln->bhx, 1, ac, la + 1, N, &da); /* lora_B */
        if (ln->dm >= 0) {                                                          /* lora_A, then the dropout's backward: the gradient times the mask, the mask let go */
            int gd = -1;
            dpprof__fw_mm_bwd(s, da, ln->axs, ln->aws, ln->ahx, ln->rgx, 0, la, N, &gd);
            if (gd >= 0) {
                const int t = DPPROF__FN(N * pp->cols, 4);
                dpprof__fw_node_end(s, gd, ln->dm, -1);
                dpprof__fw_acc(s, ac && ln->xb ? &gxa : gx, t, N * pp->cols, 4);
            }
        } else
            dpprof__fw_mm_bwd(s, da, ln->axs, ln->aws, ln->ahx, ln->rgx, 0, la, N, ac && ln->xb ? &gxa : gx); /* lora_A */
        if (gxa >= 0) {                                                                                       /* PEFT's fp32 copy's backward: to x's bf16 */
            const int t = DPPROF__FN(N * pp->cols, 2);
            dpprof__fw_drop(s, gxa);
            dpprof__fw_acc(s, gx, t, N * pp->cols, 2);
        }
        if (!base) return;
    }
    dpprof__fw_recompute(s);
    dpprof__fw_mm_bwd(s, g, ln->xs, ln->ws, ln->hx, ln->rgx, ln->xb, p, N, gx);
}
/* apply_rotary_pos_emb on one of q, k (n elements): (x * cos) + (rotate_half(x) * sin), the tables saved where x
   needs a gradient; returns the result */
static int dpprof__fw_rope_fwd(dpprof_session *s, int64_t n, int rg) {
    int m1, ng, ct, m2, out;
    const int ea = s->cfg.dtype == DPPROF_DTYPE_BF16 ? 2 : 4, E = s->fw.base16 ? 2 : 4; /* autocast: x bf16, the products with
                                                                                      the tables fp32 (bf16 tables of a bf16 base: bf16) */
    m1 = DPPROF__FN(n, E);
    if (rg) dpprof__fw_save(s, s->fw.cos);
    ng = DPPROF__FN(n / 2, ea);
    ct = DPPROF__FN(n, ea);
    dpprof__fw_drop(s, ng);
    m2 = DPPROF__FN(n, E);
    if (rg) dpprof__fw_save(s, s->fw.sin);
    dpprof__fw_drop(s, ct);
    out = DPPROF__FN(n, E);
    dpprof__fw_drop(s, m2);
    dpprof__fw_drop(s, m1);
    return out;
}
/* its backward from g (consumed); returns the gradient of the input */
static int dpprof__fw_rope_bwd(dpprof_session *s, int g, int64_t n) {
    int ms, ng, sb1, sb2, acc = -1, mc, t;
    const int ck = s->fw.frame >= 0;
    const int E = s->fw.base16 ? 2 : 4, ac = s->cfg.dtype == DPPROF_DTYPE_BF16 && !s->fw.base16, ea = s->cfg.dtype == DPPROF_DTYPE_BF16 ? 2 : 4;
    ms = DPPROF__FN(n, E); /* g * sin (autocast: cast to x's bf16) */
    if (ck) dpprof__fw_drop(s, s->fw.sin);
    if (ac) {
        t = DPPROF__FN(n, 2);
        dpprof__fw_drop(s, ms);
        ms = t;
    }
    if (!ck) dpprof__fw_drop(s, s->fw.sin);
    ng = DPPROF__FN(n / 2, ea); /* rotate_half: -x2's gradient, the two slices' */
    sb1 = DPPROF__FN(n, ea);
    dpprof__fw_drop(s, ng);
    sb2 = DPPROF__FN(n, ea);
    dpprof__fw_drop(s, ms);
    dpprof__fw_acc(s, &acc, sb1, n, ea);
    dpprof__fw_acc(s, &acc, sb2, n, ea);
    mc = DPPROF__FN(n, E); /* g * cos */
    if (ck) dpprof__fw_drop(s, s->fw.cos);
    if (ac) {
        t = DPPROF__FN(n, 2);
        dpprof__fw_drop(s, mc);
        mc = t;
    }
    dpprof__fw_drop(s, g);
    if (!ck) dpprof__fw_drop(s, s->fw.cos);
    dpprof__fw_acc(s, &acc, mc, n, ea);
    return acc;
}
/* what one decoder layer keeps; rg*: whether a tensor needs a gradient */
typedef struct dpprof__fw_layer {
    dpprof__fw_norm n1, n2;
    dpprof__fw_lin q, k, v, o, gate, up, down;
    int qe, kc, vc, out, lse;    /* q after rope, the cache's k and v, the attention's output; sdpa's log-sum-exp */
    int qs, ks;                  /* what sdpa saves of q and k: themselves, or under autocast their bf16 copies */
    int qc, kr, vr, pr;          /* eager: q's copy, k and v repeated to every head (the cache's where they are not), the
                                     probabilities */
    int gate_y, act, up_y;       /* mlp: gate_proj's and up_proj's outputs, silu's */
    int rgx, rgatt, rgh1, rgmlp; /* the input, the attention's output, the residual after it, the mlp's product */
    int fx, packs, rgin, rgout;  /* gradient checkpointing: the input its frame keeps, the tensors its forward packed;
                                    whether its input and output need gradients */
    int wm;                      /* gradient checkpointing, sdpa: the mask made floats (q's dtype) */
} dpprof__fw_layer;

/* LlamaDecoderLayer.forward on x (the residual stream, N = n T rows; rgx: it needs a gradient): returns its
   output; *rg_out says whether that needs a gradient */
static int dpprof__fw_layer_fwd(dpprof_session *s, dpprof__fw_layer *ly, int l, int x, int rgx, int n, int *rg_out) {
    const dpprof_shape *h = &s->sh;
    const int T = s->cfg.seq, C = h->C, P = 1 + l * DPPROF__P_PER_LAYER, b16 = s->fw.base16, ac = s->cfg.dtype == DPPROF_DTYPE_BF16 && !b16;
    const int ea = s->cfg.dtype == DPPROF_DTYPE_BF16 ? 2 : 4, E = b16 ? 2 : 4; /* E: the residual stream's, q and k after rope */
    const int64_t N = (int64_t)n * T, nq = N * h->NH * h->HS, nk = N * h->NKV * h->HS;
    int y1, q, k, v, ke, o, h1, y2, prod, d, out;
    ly->rgx = rgx;
    s->fw.mod = DPPROF_MOD_NORM;
    y1 = dpprof__fw_norm_fwd(s, &ly->n1, x, rgx, P, N, C);
    s->fw.mod = DPPROF_MOD_ATTENTION;
    q = dpprof__fw_linear_fwd(s, &ly->q, y1, rgx || ly->n1.rgw, b16, P + 1, N);
    k = dpprof__fw_linear_fwd(s, &ly->k, y1, ly->q.rgx, b16, P + 2, N);
    v = dpprof__fw_linear_fwd(s, &ly->v, y1, ly->q.rgx, b16, P + 3, N);
    ly->qe = dpprof__fw_rope_fwd(s, nq, ly->q.rgy);
    ke = dpprof__fw_rope_fwd(s, nk, ly->k.rgy);
    dpprof__fw_drop(s, q);
    dpprof__fw_drop(s, k);
    if (s->fw.gc) { /* no cache (gradient checkpointing turns it off): k and v go on as they are */
        ly->kc = ke;
        ly->vc = v;
    } else { /* the cache (use_cache defaults on): its copies of k (fp32 after rope with fp32 tables) and v replace them */
        ly->kc = DPPROF__FN(nk, E);
        ly->vc = DPPROF__FN(nk, ea);
        dpprof__fw_drop(s, ke);
        dpprof__fw_drop(s, v);
    }
    ly->rgatt = ly->q.rgy || ly->k.rgy || ly->v.rgy;
    if (s->cfg.attention == DPPROF_ATTENTION_SDPA) { /* causal without a mask: the output and log-sum-exp; saves q, k, v, both
                                                      (autocast: q and k cast to bf16 first, k's then q's). with a mask
                                                      (gradient checkpointing: no cache): repeat_kv copies k and v to
                                                      every head (where there are several kv-heads, fewer than heads; with
                                                      one, a view), autocast casts q then k, the bool mask is made q's
                                                      dtype and saved too */
        const int mask = s->fw.gc, rep = mask && h->NH != h->NKV && h->NKV > 1;
        int t1, t2, v;
        ly->kr = ly->vr = ly->wm = -1;
        if (mask) {
            ly->kr = rep ? DPPROF__FN(nq, E) : dpprof__fw_ref(s, ly->kc);
            ly->vr = rep ? DPPROF__FN(nq, ea) : dpprof__fw_ref(s, ly->vc);
            ly->qs = ac ? DPPROF__FN(nq, 2) : dpprof__fw_ref(s, ly->qe);
            ly->ks = ac ? DPPROF__FN(nq, 2) : dpprof__fw_ref(s, ly->kr);
            t1 = DPPROF__FN(1, ea);
            t2 = DPPROF__FN(1, ea);
            ly->wm = DPPROF__FN((int64_t)n * T * T, ea);
            dpprof__fw_drop(s, t1);
            dpprof__fw_drop(s, t2);
        } else {
            ly->ks = ac ? DPPROF__FN(nk, 2) : dpprof__fw_ref(s, ly->kc);
            ly->qs = ac ? DPPROF__FN(nq, 2) : dpprof__fw_ref(s, ly->qe);
        }
        v = mask ? ly->vr : ly->vc;
        ly->out = DPPROF__FN(nq, ea);
        ly->lse = DPPROF__FN((int64_t)n * h->NH * T, 4);
        if (ly->rgatt) {
            dpprof__fw_save(s, ly->qs);
            dpprof__fw_save(s, ly->ks);
            dpprof__fw_save(s, v);
            dpprof__fw_save(s, ly->wm);
            dpprof__fw_save(s, ly->out);
            dpprof__fw_save(s, ly->lse);
        }
        dpprof__fw_drop(s, ly->lse);
        dpprof__fw_drop(s, ly->wm);
        if (!mask) dpprof__fw_drop(s, ly->ks);
        dpprof__fw_drop(s, ly->qs);
        if (mask) dpprof__fw_drop(s, ly->ks);
        dpprof__fw_drop(s, ly->kr);
        dpprof__fw_drop(s, ly->vr);
    } else { /* eager: repeat_kv, q k^T (q copied), * scaling, + the mask, softmax, @ v, the transpose made contiguous */
        const int64_t tt = (int64_t)n * h->NH * T * T;
        /* the copies reshapes make: repeat_kv's expand of k and v to every head is a view where there is one kv-head
           (stride 0), else a copy; matmul's reshape to (n NH, ., .) then copies that view of k and v where n > 1, and
           q (laid out as (n, T, NH, HS)) where n > 1 and NH > 1; the output's transpose is contiguous already where
           NH = 1. a view in place of a copy keeps what it views alive instead */
        const int rep_copy = h->NH != h->NKV && h->NKV > 1, mm_copy = h->NH != h->NKV && h->NKV == 1 && n > 1;
        int sc, m, a, o2, kx, vx;
        ly->kr = rep_copy ? DPPROF__FN(nq, E) : dpprof__fw_ref(s, ly->kc);
        ly->vr = rep_copy ? DPPROF__FN(nq, E) : dpprof__fw_ref(s, ly->vc);
        ly->qc = n > 1 && h->NH > 1 ? DPPROF__FN(nq, E) : dpprof__fw_ref(s, ly->qe);
        kx = mm_copy ? DPPROF__FN(nq, E) : dpprof__fw_ref(s, ly->kr);
        sc = DPPROF__FN(tt, E);
        if (ly->k.rgy) dpprof__fw_save(s, ly->qc);
        if (ly->q.rgy) dpprof__fw_save(s, kx);
        dpprof__fw_drop(s, ly->kr);
        ly->kr = kx; /* what the product saved */
        dpprof__fw_drop(s, ly->qc);
        if (mm_copy) dpprof__fw_drop(s, kx); /* the reshape's copy: gone unless saved */
        m = DPPROF__FN(tt, E);
        dpprof__fw_drop(s, sc);
        a = DPPROF__FN(tt, E);
        dpprof__fw_drop(s, m);
        ly->pr = DPPROF__FN(tt, E); /* softmax saves its output, @ v the probabilities and v */
        if (ly->q.rgy || ly->k.rgy) dpprof__fw_save(s, ly->pr);
        dpprof__fw_drop(s, a);
        vx = mm_copy ? DPPROF__FN(nq, E) : dpprof__fw_ref(s, ly->vr);
        o2 = DPPROF__FN(nq, E);
        if (ly->v.rgy) dpprof__fw_save(s, ly->pr);
        if (ly->q.rgy || ly->k.rgy) dpprof__fw_save(s, vx);
        dpprof__fw_drop(s, ly->vr);
        ly->vr = vx;
        if (mm_copy) dpprof__fw_drop(s, vx);
        ly->out = h->NH > 1 ? DPPROF__FN(nq, E) : dpprof__fw_ref(s, o2);
        dpprof__fw_drop(s, o2);
        if (!mm_copy) dpprof__fw_drop(s, ly->kr);
        if (!mm_copy) dpprof__fw_drop(s, ly->vr);
    }
    o = dpprof__fw_linear_fwd(s, &ly->o, ly->out, ly->rgatt, ea == 2, P + 4, N);
    dpprof__fw_drop(s, ly->out);
    dpprof__fw_drop(s, ly->qe);
    if (s->fw.gc) { /* k and v: the attention's names, no cache's */
        dpprof__fw_drop(s, ly->kc);
        dpprof__fw_drop(s, ly->vc);
        ly->kc = ly->vc = -1;
    }
    dpprof__fw_drop(s, y1);
    h1 = DPPROF__FN(N * C, E);
    dpprof__fw_drop(s, o);
    ly->rgh1 = rgx || ly->o.rgy;
    s->fw.mod = DPPROF_MOD_NORM;
    y2 = dpprof__fw_norm_fwd(s, &ly->n2, h1, ly->rgh1, P + 5, N, C);
    s->fw.mod = DPPROF_MOD_MLP;
    ly->gate_y = dpprof__fw_linear_fwd(s, &ly->gate, y2, ly->rgh1 || ly->n2.rgw, b16, P + 6, N);
    ly->act = DPPROF__FN(N * h->F, ea);
    if (ly->gate.rgy) dpprof__fw_save(s, ly->gate_y); /* silu saves its input */
    dpprof__fw_drop(s, ly->gate_y);
    ly->up_y = dpprof__fw_linear_fwd(s, &ly->up, y2, ly->gate.rgx, b16, P + 7, N);
    prod = DPPROF__FN(N * h->F, ea); /* act * up saves each where the other needs a gradient */
    if (ly->up.rgy) dpprof__fw_save(s, ly->act);
    if (ly->gate.rgy) dpprof__fw_save(s, ly->up_y);
    dpprof__fw_drop(s, ly->act);
    dpprof__fw_drop(s, ly->up_y);
    ly->rgmlp = ly->gate.rgy || ly->up.rgy;
    d = dpprof__fw_linear_fwd(s, &ly->down, prod, ly->rgmlp, ea == 2, P + 8, N);
    dpprof__fw_drop(s, prod);
    dpprof__fw_drop(s, y2);
    out = DPPROF__FN(N * C, E);
    dpprof__fw_drop(s, d);
    dpprof__fw_drop(s, h1); /* the residual's name, then the attention weights eager returns (the layer's `_`) */
    if (s->cfg.attention == DPPROF_ATTENTION_EAGER) dpprof__fw_drop(s, ly->pr);
    *rg_out = ly->rgh1 || ly->down.rgy;
    return out;
}

/* gradient checkpointing: the first node of a layer's backward that unpacks a saved tensor runs the layer's forward
   again from the input its frame kept, under autocast again (its cache of the weights' casts new, gone when the
   recompute ends), every tensor saved now kept, until the last the checkpointed forward packed (the early stop: the
   rest of the layer not run, its names gone) */
static void dpprof__fw_recompute(dpprof_session *s) {
    const int l = s->fw.relayer;
    dpprof__fw_layer *ly;
    int rg, k;
    if (l < 0) return;
    ly = &s->fw.lay[l];
    s->fw.relayer = -1;
    if ((s->fw.rc = dpprof__phase(s, DPPROF_PHASE_RECOMPUTE, s->run.steps_done)) != DPPROF_OK) return;
    s->fw.recomp = 1;
    s->fw.npack = 0;
    s->fw.stop_at = ly->packs;
    s->fw.stopped = 0;
    (void)dpprof__fw_layer_fwd(s, ly, l, ly->fx, ly->rgin, s->fw.n, &rg);
    s->fw.recomp = s->fw.stopped = 0;
    for (k = 0; k < s->model.n_params; k++) {
        dpprof__fw_drop(s, s->fw.wcast[k]);
        s->fw.wcast[k] = -1;
    }
    if (s->fw.rc == DPPROF_OK) s->fw.rc = dpprof__phase(s, DPPROF_PHASE_BACKWARD, s->run.steps_done);
}
/* gradient checkpointing: the last saved tensor of the layer in its backward released (its input norm's pow's), its
   frame goes (the input and the kwargs it kept) */
static void dpprof__fw_frame_end(dpprof_session *s, const struct dpprof__fw_norm *nm) {
    if (s->fw.frame < 0 || nm != &s->fw.lay[s->fw.frame].n1) return;
    dpprof__fw_drop(s, s->fw.mask); /* the kwargs (the mask, the rotary tables, the position ids), then the input */
    dpprof__fw_drop(s, s->fw.cos);
    dpprof__fw_drop(s, s->fw.sin);
    dpprof__fw_drop(s, s->fw.pos);
    dpprof__fw_drop(s, s->fw.lay[s->fw.frame].fx);
    s->fw.frame = -1;
}

/* its backward from g, the gradient of its output (consumed); the gradient of its input x is summed into *gx */
static void dpprof__fw_layer_bwd(dpprof_session *s, dpprof__fw_layer *ly, int l, int g, int *gx, int n) {
    const dpprof_shape *h = &s->sh;
    const int T = s->cfg.seq, C = h->C, P = 1 + l * DPPROF__P_PER_LAYER, b16 = s->fw.base16, ac = s->cfg.dtype == DPPROF_DTYPE_BF16 && !b16;
    const int ea = s->cfg.dtype == DPPROF_DTYPE_BF16 ? 2 : 4, E = b16 ? 2 : 4;
    const int64_t N = (int64_t)n * T, nq = N * h->NH * h->HS, nk = N * h->NKV * h->HS;
    int g1 = -1, gy = -1, ga, gu, gs, dq, dk, dv, t, gb = -1;
    /* h2 = h1 + down: the gradient goes on to both (autocast: down's a bf16 copy, the sum's fp32 to h1) */
    if (ly->down.rgy) gb = ac ? DPPROF__FN(N * C, 2) : dpprof__fw_ref(s, g);
    if (ly->rgh1) dpprof__fw_acc(s, &g1, g, N * C, E);
    else dpprof__fw_drop(s, g);
    if (ly->down.rgy) {
        s->fw.mod = DPPROF_MOD_MLP;
        t = -1;
        dpprof__fw_linear_bwd(s, &ly->down, gb, P + 8, N, &t);
        if (ly->rgmlp) {
            ga = ly->gate.rgy ? DPPROF__FN(N * h->F, ea) : -1; /* act * up */
            gu = ly->up.rgy ? DPPROF__FN(N * h->F, ea) : -1;
            dpprof__fw_node_end(s, t, ly->gate.rgy ? ly->up_y : -1, ly->up.rgy ? ly->act : -1);
            if (ly->up.rgy) dpprof__fw_linear_bwd(s, &ly->up, gu, P + 7, N, &gy);
            if (ly->gate.rgy) {
                gs = DPPROF__FN(N * h->F, ea); /* silu */
                dpprof__fw_node_end(s, ga, ly->gate_y, -1);
                dpprof__fw_linear_bwd(s, &ly->gate, gs, P + 6, N, &gy);
            }
        }
        s->fw.mod = DPPROF_MOD_NORM;
        if (gy >= 0) dpprof__fw_norm_bwd(s, &ly->n2, gy, &g1, P + 5, N, C);
    }
    if (!ly->rgh1) return;
    /* h1 = x + o */
    gb = -1;
    if (ly->o.rgy) gb = ac ? DPPROF__FN(N * C, 2) : dpprof__fw_ref(s, g1);
    if (ly->rgx) dpprof__fw_acc(s, gx, g1, N * C, E);
    else dpprof__fw_drop(s, g1);
    if (!ly->o.rgy) return;
    s->fw.mod = DPPROF_MOD_ATTENTION;
    t = -1;
    dpprof__fw_linear_bwd(s, &ly->o, gb, P + 4, N, &t);
    if (!ly->rgatt) return;
    if (s->cfg.attention == DPPROF_ATTENTION_SDPA) { /* the three gradients made, those not needed dropped at once; with
                                                      the mask (gradient checkpointing) those of the repeated k and v, and
                                                      the repeats summed */
        const int mask = s->fw.gc, rep = mask && h->NH != h->NKV;
        const int64_t nkv = mask ? nq : nk;
        dq = DPPROF__FN(nq, ea);
        dk = DPPROF__FN(nkv, ea);
        dv = DPPROF__FN(nkv, ea);
        if (!ly->q.rgy) dpprof__fw_drop(s, dq), dq = -1;
        if (!ly->k.rgy) dpprof__fw_drop(s, dk), dk = -1;
        if (!ly->v.rgy) dpprof__fw_drop(s, dv), dv = -1;
        if (mask) { /* what it saved released, then the incoming gradient */
            dpprof__fw_drop(s, ly->out);
            dpprof__fw_drop(s, ly->lse);
            dpprof__fw_drop(s, ly->ks);
            dpprof__fw_drop(s, ly->qs);
            dpprof__fw_drop(s, ly->vr);
            dpprof__fw_drop(s, ly->wm);
            dpprof__fw_drop(s, t);
        } else {
            dpprof__fw_drop(s, t);
            dpprof__fw_drop(s, ly->ks);
            dpprof__fw_drop(s, ly->qs);
            dpprof__fw_drop(s, ly->vc);
            dpprof__fw_drop(s, ly->lse);
            dpprof__fw_drop(s, ly->out);
        }
        if (ac) { /* the casts' backward to fp32: q's, then k's */
            dpprof__fw_remake(s, &dq, nq, 4);
            dpprof__fw_remake(s, &dk, nkv, 4);
        }
        if (rep) { /* repeat_kv: the repeats summed, v's (the later made) first */
            dpprof__fw_remake(s, &dv, nk, ea);
            dpprof__fw_remake(s, &dk, nk, ac ? 4 : ea);
        }
    } else {
        const int64_t tt = (int64_t)n * h->NH * T * T;
        const int rgp = ly->q.rgy || ly->k.rgy;
        int gt, dvr, dp, ds, dm, dkt;
        gt = t; /* the transpose's gradient made contiguous (a view where n = 1 or NH = 1) */
        if (n > 1 && h->NH > 1) {
            gt = DPPROF__FN(nq, E);
            dpprof__fw_drop(s, t);
        }
        dvr = ly->v.rgy ? DPPROF__FN(nq, E) : -1; /* @ v */
        dp = rgp ? DPPROF__FN(tt, E) : -1;
        dpprof__fw_node_end(s, gt, rgp ? ly->vr : -1, ly->v.rgy ? ly->pr : -1);
        dkt = dq = -1;
        if (rgp) {
            ds = DPPROF__FN(tt, E); /* softmax */
            dpprof__fw_node_end(s, dp, ly->pr, -1);
            dm = DPPROF__FN(tt, E); /* * scaling */
            dpprof__fw_drop(s, ds);
            dkt = ly->k.rgy ? DPPROF__FN(nq, E) : -1; /* q k^T */
            dq = ly->q.rgy ? DPPROF__FN(nq, E) : -1;
            dpprof__fw_node_end(s, dm, ly->q.rgy ? ly->kr : -1, ly->k.rgy ? ly->qc : -1);
        }
        dk = dkt, dv = dvr;
        if (h->NH != h->NKV) { /* repeat_kv: the repeats summed */
            if (dkt >= 0) {
                dk = DPPROF__FN(nk, E);
                dpprof__fw_drop(s, dkt);
            }
            if (dvr >= 0) {
                dv = DPPROF__FN(nk, E);
                dpprof__fw_drop(s, dvr);
            }
        }
    }
    if (dk >= 0) dk = dpprof__fw_rope_bwd(s, dk, nk);
    if (dq >= 0) dq = dpprof__fw_rope_bwd(s, dq, nq);
    gy = -1;
    /* the projections' gradients, (n, heads, T, HS), made contiguous as (n, T, heads, HS) for the views' backward where
       there is more than one head (sdpa's v is laid out so already) */
    if (dv >= 0) {
        if ((s->cfg.attention == DPPROF_ATTENTION_EAGER || (s->fw.gc && h->NH != h->NKV)) && h->NKV > 1) {
            t = DPPROF__FN(nk, ea);
            dpprof__fw_drop(s, dv);
            dv = t;
        }
        dpprof__fw_linear_bwd(s, &ly->v, dv, P + 3, N, &gy);
    }
    if (dk >= 0) {
        if (h->NKV > 1) {
            t = DPPROF__FN(nk, ea);
            dpprof__fw_drop(s, dk);
            dk = t;
        }
        dpprof__fw_linear_bwd(s, &ly->k, dk, P + 2, N, &gy);
    }
    if (dq >= 0) {
        if (h->NH > 1) {
            t = DPPROF__FN(nq, ea);
            dpprof__fw_drop(s, dq);
            dq = t;
        }
        dpprof__fw_linear_bwd(s, &ly->q, dq, P + 1, N, &gy);
    }
    s->fw.mod = DPPROF_MOD_NORM;
    if (gy >= 0) dpprof__fw_norm_bwd(s, &ly->n1, gy, gx, P, N, C);
}

/* the model's backward from lg, the gradient of the logits (consumed): the head, the final norm, the layers, the
   embedding (and Opacus's hooks) */
static void dpprof__fw_model_bwd(dpprof_session *s, dpprof__fw_lin *head, dpprof__fw_norm *nf, int lg, int rg, int n) {
    const dpprof_shape *h = &s->sh;
    const int T = s->cfg.seq, C = h->C, V = h->V, L = h->L;
    const int64_t N = (int64_t)n * T;
    dpprof__fw_layer *ly = s->fw.lay;
    int g = -1, gx = -1, l, a;
    dpprof__fw_linear_bwd(s, head, lg, s->model.p_head, N, &g);
    s->fw.mod = DPPROF_MOD_NORM;
    if (rg) dpprof__fw_norm_bwd(s, nf, g, &gx, s->model.p_normf, N, C);
    for (l = L - 1; l >= 0 && gx >= 0; l--) {
        int gin = -1;
        if (s->fw.gc) s->fw.relayer = s->fw.frame = l; /* its recompute and its frame's end are due */
        dpprof__fw_layer_bwd(s, &ly[l], l, gx, &gin, n);
        gx = gin;
    }
    s->fw.mod = DPPROF_MOD_EMBEDDING;
    if (s->fw.ghost && s->fw.pass == 1 && s->model.params[s->model.p_emb].trainable && gx >= 0) {
        /* ghost clipping's hook: each (sample, token) pair's gradients summed (torch.unique over the pairs: taken as all
           distinct, exact where no token repeats within a sample, else an upper bound), their squares summed per sample */
        const int bp = DPPROF__FN(N * C, 4), ar = DPPROF__FN(n, 8), rows = DPPROF__FN(N, 8);
        int pairs, uq, inv, z, ia, pw, sq, res, nr;
        dpprof__fw_drop(s, ar);
        pairs = DPPROF__FN(2 * N, 8);
        uq = DPPROF__FN(2 * N, 8);
        inv = DPPROF__FN(N, 8);
        z = dpprof__fw_new(s, N * C, 4, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_EMBEDDING);
        ia = dpprof__fw_new(s, N * C, 4, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_EMBEDDING);
        dpprof__fw_drop(s, z);
        pw = dpprof__fw_new(s, N * C, 4, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_EMBEDDING);
        sq = DPPROF__FN(N, 4);
        dpprof__fw_drop(s, pw);
        res = DPPROF__FN(n, 4);
        nr = dpprof__fw_new(s, n, 4, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_EMBEDDING);
        dpprof__fw_drop(s, rows);
        dpprof__fw_drop(s, pairs);
        dpprof__fw_drop(s, inv);
        dpprof__fw_drop(s, ia);
        dpprof__fw_drop(s, sq);
        dpprof__fw_drop(s, res);
        dpprof__fw_drop(s, uq);
        dpprof__fw_norm_sample(s, s->model.p_emb, nr);
        dpprof__fw_drop(s, bp);
    } else if (s->fw.opacus && !s->fw.ghost && s->model.params[s->model.p_emb].trainable && gx >= 0) { /* Opacus's hook, before the
                                                           embedding's own backward: a per-sample gradient and grad_sample (n x V x C) */
        const int bp = DPPROF__FN(N * C, 4), z = DPPROF__FN((int64_t)n * V * C, 4);
        if (s->fw.gs[s->model.p_emb] < 0) /* a tied head's hook made it: added into in place */
            s->fw.gs[s->model.p_emb] = dpprof__fw_new(s, (int64_t)n * V * C, 4, DPPROF_CAT_PER_SAMPLE_GRADIENTS, DPPROF_MOD_EMBEDDING);
        dpprof__fw_drop(s, bp);
        dpprof__fw_drop(s, z);
    }
    a = s->model.params[s->model.p_emb].trainable ? dpprof__fw_new(s, (int64_t)V * C, 4, DPPROF_CAT_GRADIENTS, DPPROF_MOD_EMBEDDING) : -1;
    if (s->fw.leaf >= 0 && a < 0) s->fw.leafgrad = gx; /* the leaf's .grad */
    else dpprof__fw_drop(s, gx);
    if (a >= 0 && s->fw.tied >= 0) { /* both uses of the tied matrix: summed in AccumulateGrad's buffer, then .grad */
        int sum = dpprof__fw_new(s, (int64_t)V * C, 4, DPPROF_CAT_GRADIENTS, DPPROF_MOD_EMBEDDING);
        dpprof__fw_drop(s, s->fw.tied);
        dpprof__fw_drop(s, a);
        a = sum;
        s->fw.tied = -1;
    }
    if (a >= 0) dpprof__fw_grad(s, s->model.p_emb, a);
    dpprof__fw_done(s);
}

/* Opacus's clip factors from k norms per sample: their stack, its norm per sample (*nrm; replace: the one it held
   goes, as the module's per_sample_gradient_norms is replaced), C / (norm + 1e-6) clamped at 1, in e-byte floats
   (bf16 where every norm is: the stack's type); returns them */
static int dpprof__fw_clip_factors(dpprof_session *s, int k, int64_t n, int *nrm, int replace, int e) {
    int st, a, rc, m, cf;
    st = dpprof__fw_new(s, n * k, e, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OPTIMIZER);
    a = dpprof__fw_new(s, n, e, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OPTIMIZER);
    dpprof__fw_drop(s, st);
    if (replace) dpprof__fw_unref(s, *nrm);
    *nrm = a;
    a = dpprof__fw_new(s, n, e, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OPTIMIZER);
    rc = dpprof__fw_new(s, n, e, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OPTIMIZER);
    m = dpprof__fw_new(s, n, e, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OPTIMIZER);
    dpprof__fw_drop(s, rc);
    dpprof__fw_drop(s, a);
    cf = dpprof__fw_new(s, n, e, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OPTIMIZER);
    dpprof__fw_drop(s, m);
    return cf;
}

/* Opacus's ghost clipping from the logits on, the loop its tutorials write:
       logits = model(input_ids=x).logits
       loss = criterion(logits.view(-1, V), y.view(-1), shape=(n, T)); loss.backward()
   (make_private's criterion: cross-entropy per token, averaged per sample), the logits kept by the caller to the next
   physical batch. loss.backward() is two: the mean loss's with the hooks on and the graph retained (each module's
   per-sample norms), the clip factors, then the clipped loss's with the hooks off */
/* autocast exits: its cache of the weights' bf16 copies goes (what a node saved stays with the node) */
static void dpprof__fw_autocast_exit(dpprof_session *s) {
    int l;
    for (l = 0; l < s->model.n_params; l++) {
        dpprof__fw_drop(s, s->fw.wcast[l]);
        s->fw.wcast[l] = -1;
    }
}
/* the gradient of the logits from log_softmax's (a, n elements): under autocast its fp32 copy's backward casts it to
   the bf16 logits' */
static int dpprof__fw_logits_grad(dpprof_session *s, int a, int64_t n) {
    int g;
    if (s->cfg.dtype != DPPROF_DTYPE_BF16) return a;
    g = DPPROF__FN(n, 2);
    dpprof__fw_drop(s, a);
    return g;
}
static void dpprof__fw_ghost(dpprof_session *s, int step, int n, dpprof__fw_lin *head, dpprof__fw_norm *nf, int yf, int logits, int rg) {
    const int64_t N = (int64_t)n * s->cfg.seq, V = s->sh.V;
    const int ac = s->cfg.dtype == DPPROF_DTYPE_BF16;
    int l, lf, ls, tok, tw, mk, ms, nv, s1, lps, rl, seed, a, b, c, g, cf, sl, s2, k = 0, e = 2;
    /* the model's output goes once its logits are taken (the hidden state, the cache's k and v); then the last
       physical batch's logits, whose name the new ones take */
    dpprof__fw_drop(s, yf);
    for (l = 0; l < s->sh.L; l++) {
        dpprof__fw_drop(s, s->fw.lay[l].kc);
        dpprof__fw_drop(s, s->fw.lay[l].vc);
    }
    dpprof__fw_drop(s, s->fw.logits);
    s->fw.logits = logits;
    /* cross-entropy with reduction none (log_softmax, nll_loss: per token, its total weight); the tokens counted per
       sample (labels != ignore_index), the loss summed per sample and divided (that saves the counts) */
    lf = ac ? DPPROF__FN(N * V, 4) : -1; /* autocast's fp32 copy of the bf16 logits */
    ls = DPPROF__FN(N * V, 4);
    tok = DPPROF__FN(N, 4);
    tw = DPPROF__FN(1, 4);
    dpprof__fw_drop(s, lf);
    mk = DPPROF__FN(N, 1);
    ms = DPPROF__FN(n, 8);
    nv = DPPROF__FN(n, 8);
    dpprof__fw_drop(s, ms);
    s1 = DPPROF__FN(n, 4);
    lps = DPPROF__FN(n, 4);
    dpprof__fw_drop(s, s1);
    dpprof__fw_drop(s, tok);
    dpprof__fw_drop(s, mk);
    dpprof__fw_drop(s, s->fw.lps); /* the last loss, whose name the new one takes */
    s->fw.lps = lps;
    dpprof__fw_autocast_exit(s);
    /* the first backward, of the mean loss: the graph retained, the hooks' norms */
    if ((s->fw.rc = dpprof__phase(s, DPPROF_PHASE_BACKWARD, step)) != DPPROF_OK) return;
    s->fw.pass = 1;
    dpprof__fw_retain(s, 1);
    rl = DPPROF__FN(1, 4);
    seed = DPPROF__FN(1, 4);
    a = DPPROF__FN(n, 4); /* mean's, the division's, the per-sample sum's (expanded; copied for the view where n > 1) */
    b = DPPROF__FN(n, 4);
    dpprof__fw_drop(s, a);
    c = n > 1 ? DPPROF__FN(N, 4) : b; /* at n = 1 a view of the division's */
    if (n > 1) dpprof__fw_drop(s, b);
    g = DPPROF__FN(N * V, 4); /* nll_loss, log_softmax */
    dpprof__fw_drop(s, c);
    a = DPPROF__FN(N * V, 4);
    dpprof__fw_drop(s, g);
    dpprof__fw_model_bwd(s, head, nf, dpprof__fw_logits_grad(s, a, N * V), rg, n);
    dpprof__fw_drop(s, seed);
    dpprof__fw_retain(s, 0);
    /* the clip factors: the norms' stack, its norm per sample (kept by the module), C / (norm + 1e-6) clamped at 1;
       the clipped loss, its sum */
    if ((s->fw.rc = dpprof__phase(s, DPPROF_PHASE_NORMS, step)) != DPPROF_OK) return;
    for (l = 0; l < s->model.n_params; l++)
        if (s->model.params[l].trainable) k++, e = dpprof__fw_gs16(s, l) ? e : 4; /* bf16 where every norm is */
    cf = dpprof__fw_clip_factors(s, k, n, &s->fw.psn, 1, e);
    sl = DPPROF__FN(n, 4);
    s2 = DPPROF__FN(1, 4);
    seed = DPPROF__FN(1, 4);
    /* the second backward, of the clipped loss: the hooks off, the graph released */
    if ((s->fw.rc = dpprof__phase(s, DPPROF_PHASE_BACKWARD_2, step)) != DPPROF_OK) return;
    s->fw.pass = 2;
    a = DPPROF__FN(n, 4);
    b = DPPROF__FN(n, 4);
    dpprof__fw_drop(s, a);
    dpprof__fw_drop(s, nv);
    c = n > 1 ? DPPROF__FN(N, 4) : b;
    if (n > 1) dpprof__fw_drop(s, b);
    g = DPPROF__FN(N * V, 4);
    dpprof__fw_drop(s, c);
    dpprof__fw_drop(s, tw);
    a = DPPROF__FN(N * V, 4);
    dpprof__fw_drop(s, g);
    dpprof__fw_drop(s, ls);
    dpprof__fw_model_bwd(s, head, nf, dpprof__fw_logits_grad(s, a, N * V), rg, n);
    s->fw.pass = 0;
    dpprof__fw_drop(s, seed); /* backward()'s names go */
    dpprof__fw_drop(s, rl);
    dpprof__fw_drop(s, cf);
    dpprof__fw_drop(s, sl);
    dpprof__fw_drop(s, s2);
}

/* create_causal_mask's index tensors (int64): the batch's and the head's aranges, the queries' and the keys'
   positions (an arange plus the cache's offset), in t[0], t[1], t[3], t[5]; n = -1: they go */
static void dpprof__fw_mask_index(dpprof_session *s, int n, int T, int *t) {
    if (n < 0) {
        dpprof__fw_drop(s, t[0]);
        dpprof__fw_drop(s, t[1]);
        dpprof__fw_drop(s, t[3]);
        dpprof__fw_drop(s, t[5]);
        return;
    }
    t[0] = DPPROF__FN(n, 8);
    t[1] = DPPROF__FN(1, 8);
    t[2] = DPPROF__FN(T, 8);
    t[3] = DPPROF__FN(T, 8);
    dpprof__fw_drop(s, t[2]);
    t[4] = DPPROF__FN(T, 8);
    t[5] = DPPROF__FN(T, 8);
    dpprof__fw_drop(s, t[4]);
}

/* the physical batch of n samples: forward, the loss and backward (the gradients to .grad) */
static void dpprof__fw_physical(dpprof_session *s, int step, int n) {
    const dpprof_shape *h = &s->sh;
    const int T = s->cfg.seq, C = h->C, V = h->V, L = h->L, E = 4;
    const int64_t N = (int64_t)n * T;
    dpprof__fw_layer *ly = s->fw.lay;
    int ids, labels, emb, pos, mask, a, fr, ct, co, si, x, l, yf, logits, lf, pad, cl, ls, loss, tw, ones, g, rg;
    const int ac = s->cfg.dtype == DPPROF_DTYPE_BF16;
    dpprof__fw_norm nf;
    dpprof__fw_lin head;
    if ((s->fw.rc = dpprof__phase(s, DPPROF_PHASE_FORWARD, step)) != DPPROF_OK) return;
    /* input_ids and labels (int64), made in the loop: the last batch's go when their names are bound to the new */
    ids = dpprof__fw_new(s, N, 8, DPPROF_CAT_DATA, DPPROF_MOD_OTHER);
    dpprof__fw_drop(s, s->fw.ids);
    s->fw.ids = ids;
    labels = dpprof__fw_new(s, N, 8, DPPROF_CAT_DATA, DPPROF_MOD_OTHER);
    dpprof__fw_drop(s, s->fw.labels);
    s->fw.labels = labels;
    s->fw.mod = DPPROF_MOD_EMBEDDING;
    emb = DPPROF__FN(N * C, s->fw.base16 ? 2 : E);
    s->fw.mod = DPPROF_MOD_ATTENTION; /* position ids (int64) and the rotary tables */
    a = DPPROF__FN(T, 8);
    pos = DPPROF__FN(T, 8);
    dpprof__fw_drop(s, a);
    mask = -1;
    if (s->fw.gc) { /* without a cache (gradient checkpointing turns it off): packed sequences looked for in the position
                       ids (a cumulative sum, kept while the mask is made), and a bool causal mask (n, 1, T, T) from
                       index tensors, and-ed with the packing's; eager makes it floats */
        int t[12], cs;
        t[0] = DPPROF__FN(n, 8);
        t[1] = DPPROF__FN((int64_t)n * (T + 1), 8);
        t[2] = DPPROF__FN(N, 8);
        dpprof__fw_drop(s, t[1]);
        t[3] = DPPROF__FN(N, 1);
        cs = DPPROF__FN(N, 8);
        dpprof__fw_drop(s, t[3]);
        dpprof__fw_drop(s, t[0]);
        dpprof__fw_drop(s, t[2]);
        dpprof__fw_mask_index(s, n, T, t);
        t[6] = DPPROF__FN(1, 1);
        t[7] = DPPROF__FN(N, 8);
        t[8] = DPPROF__FN(N, 8);
        t[9] = DPPROF__FN(N * T, 1);
        dpprof__fw_drop(s, t[7]);
        dpprof__fw_drop(s, t[8]);
        t[10] = DPPROF__FN(N * T, 1);
        dpprof__fw_drop(s, t[9]);
        dpprof__fw_drop(s, t[6]);
        t[7] = DPPROF__FN(N, 8);
        t[8] = DPPROF__FN(N, 8);
        t[9] = DPPROF__FN(N * T, 1);
        dpprof__fw_drop(s, t[7]);
        dpprof__fw_drop(s, t[8]);
        mask = DPPROF__FN(N * T, 1);
        dpprof__fw_drop(s, t[9]);
        dpprof__fw_drop(s, t[10]);
        dpprof__fw_mask_index(s, -1, T, t);
        if (s->cfg.attention == DPPROF_ATTENTION_EAGER) {
            t[0] = DPPROF__FN(1, 4);
            t[1] = DPPROF__FN(1, 4);
            t[2] = DPPROF__FN(N * T, 4);
            dpprof__fw_drop(s, t[1]);
            dpprof__fw_drop(s, t[0]);
            dpprof__fw_drop(s, mask);
            mask = t[2];
        }
        dpprof__fw_drop(s, cs);
    } else if (s->cfg.attention == DPPROF_ATTENTION_EAGER) { /* the causal mask, (n, 1, T, T) floats, from int64 aranges and a bool */
        int t[8], le;
        dpprof__fw_mask_index(s, n, T, t);
        le = DPPROF__FN((int64_t)T * T, 1);
        dpprof__fw_mask_index(s, -1, T, t);
        t[6] = DPPROF__FN(1, 4);
        t[7] = DPPROF__FN(1, 4);
        mask = DPPROF__FN((int64_t)n * T * T, 4);
        dpprof__fw_drop(s, t[7]);
        dpprof__fw_drop(s, t[6]);
        dpprof__fw_drop(s, le);
    }
    a = DPPROF__FN(T, 4);
    fr = DPPROF__FN((int64_t)T * (h->HS / 2), 4);
    dpprof__fw_drop(s, a);
    ct = DPPROF__FN((int64_t)T * h->HS, 4);
    co = DPPROF__FN((int64_t)T * h->HS, 4);
    s->fw.cos = DPPROF__FN((int64_t)T * h->HS, 4);
    dpprof__fw_drop(s, co);
    si = DPPROF__FN((int64_t)T * h->HS, 4);
    s->fw.sin = DPPROF__FN((int64_t)T * h->HS, 4);
    dpprof__fw_drop(s, si);
    co = si = -1;
    if (s->fw.base16) { /* .to(x.dtype): bf16 tables */
        co = s->fw.cos;
        si = s->fw.sin;
        s->fw.cos = DPPROF__FN((int64_t)T * h->HS, 2);
        s->fw.sin = DPPROF__FN((int64_t)T * h->HS, 2);
    }
    dpprof__fw_drop(s, fr);
    dpprof__fw_drop(s, ct);
    dpprof__fw_drop(s, co);
    dpprof__fw_drop(s, si);
    x = emb;
    /* gradient checkpointing makes the embedding's output require a gradient (enable_input_require_grads) */
    rg = s->model.params[s->model.p_emb].trainable || s->fw.gc;
    if (s->fw.gc && !s->model.params[s->model.p_emb].trainable) s->fw.nleaf = dpprof__fw_ref(s, emb); /* a leaf: the graph's
                                                                   AccumulateGrad holds it */
    s->fw.mask = mask;
    s->fw.pos = pos;
    for (l = 0; l < L; l++) {
        int out;
        if (s->fw.gc) { /* checkpoint(layer, x, **kwargs): its frame keeps x and the kwargs (the mask, the rotary tables);
                           nothing the layer's nodes save is kept, the tensors packed counted */
            ly[l].fx = dpprof__fw_ref(s, x);
            dpprof__fw_ref(s, mask);
            dpprof__fw_ref(s, pos);
            dpprof__fw_ref(s, s->fw.cos);
            dpprof__fw_ref(s, s->fw.sin);
            s->fw.nosave = 1;
            s->fw.npack = 0;
        }
        out = dpprof__fw_layer_fwd(s, &ly[l], l, x, rg, n, &rg);
        s->fw.nosave = 0;
        ly[l].packs = s->fw.npack;
        ly[l].rgin = l ? ly[l - 1].rgout : (s->model.params[s->model.p_emb].trainable || s->fw.gc);
        ly[l].rgout = rg;
        if (l) dpprof__fw_drop(s, x); /* the embedding's output keeps its name (inputs_embeds) to the model's end */
        x = out;
    }
    s->fw.mod = DPPROF_MOD_NORM;
    yf = dpprof__fw_norm_fwd(s, &nf, x, rg, s->model.p_normf, N, C);
    rg = rg || nf.rgw;
    /* LlamaModel returns: its names go (the last hidden state's, the position ids, the mask, the embedding's output,
       the rotary tables) */
    dpprof__fw_drop(s, x);
    dpprof__fw_drop(s, pos);
    dpprof__fw_drop(s, emb);
    dpprof__fw_drop(s, mask);
    dpprof__fw_drop(s, s->fw.cos);
    dpprof__fw_drop(s, s->fw.sin);
    s->fw.mod = DPPROF_MOD_HEAD;
    logits = dpprof__fw_linear_fwd(s, &head, yf, rg, s->fw.base16, s->model.p_head, N);
    if (s->fw.ghost) {
        dpprof__fw_ghost(s, step, n, &head, &nf, yf, logits, rg);
        return;
    }
    /* ForCausalLMLoss: logits.float() (a copy of bf16 logits), the labels padded and shifted (int64), log_softmax,
       nll_loss (the loss and its total weight) */
    lf = ac ? DPPROF__FN(N * V, 4) : -1;
    pad = DPPROF__FN((int64_t)n * (T + 1), 8);
    cl = n > 1 ? DPPROF__FN(N, 8) : dpprof__fw_ref(s, pad); /* the shifted labels: a copy, or at n = 1 a view of pad */
    ls = DPPROF__FN(N * V, 4);
    loss = DPPROF__FN(1, 4);
    tw = DPPROF__FN(1, 4);
    dpprof__fw_drop(s, lf);
    dpprof__fw_drop(s, pad);
    /* LlamaForCausalLM returns the loss alone to the caller: the hidden states, the logits, the cache's k and v go */
    dpprof__fw_drop(s, yf);
    dpprof__fw_drop(s, logits);
    for (l = 0; l < L; l++) {
        dpprof__fw_drop(s, ly[l].kc);
        dpprof__fw_drop(s, ly[l].vc);
    }
    dpprof__fw_drop(s, s->fw.leafgrad); /* the last physical batch's loss, whose name the new one takes (and its graph:
                                           a leaf it held, the leaf's .grad) */
    dpprof__fw_drop(s, s->fw.leaf);
    s->fw.leaf = s->fw.nleaf;
    s->fw.leafgrad = s->fw.nleaf = -1;
    dpprof__fw_drop(s, s->fw.lps);
    s->fw.lps = loss;
    dpprof__fw_autocast_exit(s);
    if ((s->fw.rc = dpprof__phase(s, DPPROF_PHASE_BACKWARD, step)) != DPPROF_OK) return;
    ones = DPPROF__FN(1, 4);
    g = DPPROF__FN(N * V, 4); /* nll_loss */
    dpprof__fw_drop(s, cl);
    dpprof__fw_drop(s, tw);
    a = DPPROF__FN(N * V, 4); /* log_softmax */
    dpprof__fw_drop(s, g);
    dpprof__fw_drop(s, ls);
    dpprof__fw_model_bwd(s, &head, &nf, dpprof__fw_logits_grad(s, a, N * V), rg, n); /* logits.float()'s backward */
    dpprof__fw_drop(s, ones);
}

/* AdamW(foreach=True).step(): the moments made at the first step; exp_avg_sq's square roots, one temporary per
   trainable tensor at once; then zero_grad(set_to_none=True) */
static void dpprof__fw_optimizer(dpprof_session *s, int step) {
    int k, i, e, *tmp = s->fw.tmp, nt = 0;
    if ((s->fw.rc = dpprof__phase(s, DPPROF_PHASE_OPTIMIZER_STEP, step)) != DPPROF_OK) return;
    for (k = 0; k < s->model.n_params; k++) { /* the parameters in Hugging Face's order, as the optimizer has them */
        const dpprof_param *p = &s->model.params[i = s->fw.order[k]];
        if (!p->trainable || s->fw.g[i] < 0) continue;
        if (s->fw.m[i] < 0 && s->cfg.optimizer == DPPROF_OPT_ADAM) {
            s->fw.m[i] = dpprof__fw_new(s, (int64_t)p->rows * p->cols, dpprof__fw_pe(s, i), DPPROF_CAT_OPTIMIZER_STATES, DPPROF_MOD_OPTIMIZER);
            s->fw.v[i] = dpprof__fw_new(s, (int64_t)p->rows * p->cols, dpprof__fw_pe(s, i), DPPROF_CAT_OPTIMIZER_STATES, DPPROF_MOD_OPTIMIZER);
        }
    }
    for (e = 2; e <= 4; e += 2) /* foreach's groups by dtype: a bf16 group (modules_to_save's head over a bf16 base) first */
        for (k = 0; k < s->model.n_params && s->cfg.optimizer == DPPROF_OPT_ADAM; k++) {
            const dpprof_param *p = &s->model.params[i = s->fw.order[k]];
            if (p->trainable && s->fw.g[i] >= 0 && dpprof__fw_pe(s, i) == e)
                tmp[nt++] = dpprof__fw_new(s, (int64_t)p->rows * p->cols, e, DPPROF_CAT_OPTIMIZER_STATES, DPPROF_MOD_OPTIMIZER);
        }
    while (nt) dpprof__fw_drop(s, tmp[--nt]);
    for (k = 0; k < s->model.n_params && !s->fw.opacus; k++) {
        dpprof__fw_drop(s, s->fw.g[s->fw.order[k]]);
        s->fw.g[s->fw.order[k]] = -1;
    }
}

/* Opacus's DPOptimizer after a physical batch (BatchMemoryManager: every physical batch but the logical step's last
   is a skipped step): each parameter's per-sample norms, their stack and norm, the clip factors, the clipped sums
   (summed_grad, added into from the second physical batch on); on a skipped step zero_grad (grad_sample and .grad
   go); on the last the noise, a parameter at a time, .grad replaced by sum + noise, AdamW's step, zero_grad */
static void dpprof__fw_opacus_step(dpprof_session *s, int step, int last) {
    dpprof__fw *w = &s->fw;
    const int np = s->model.n_params;
    const int64_t n = w->n;
    int k, nk = 0, *nr = w->tmp, psn = -1, cf, t = -1, accumulate = 0, z, nz, prev = -1, g2, c32 = -1, cf32 = -1, ecf = 2;
    if ((w->rc = dpprof__phase(s, DPPROF_PHASE_CLIP_ACCUMULATE, step)) != DPPROF_OK) return;
    if (w->ghost) { /* DPOptimizerFastGradientClipping: .grad is the clipped sum already; summed_grad its copy, or added into */
        for (k = 0; k < np; k++) {
            const int p = w->order[k];
            const dpprof_param *pp = &s->model.params[p];
            if (w->g[p] >= 0 && w->sg[p] < 0) w->sg[p] = dpprof__fw_new(s, (int64_t)pp->rows * pp->cols, dpprof__fw_pe(s, p), DPPROF_CAT_GRADIENTS, pp->module);
        }
        goto noise;
    }
    for (k = 0; k < np; k++)
        if (w->gs[w->order[k]] >= 0) {
            nr[nk++] = dpprof__fw_new(s, n, dpprof__fw_gs16(s, w->order[k]) ? 2 : 4, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OPTIMIZER);
            ecf = dpprof__fw_gs16(s, w->order[k]) ? ecf : 4;
        }
    cf = dpprof__fw_clip_factors(s, nk, n, &psn, 0, ecf);
    for (k = 0; k < np; k++) accumulate |= w->sg[w->order[k]] >= 0;
    for (k = 0; k < np; k++) { /* the clipped sum, an einsum each: kept, or added into the kept one; a bf16 grad_sample
                                  cast to the parameter's fp32 first (the cast held to the next parameter's) */
        const int p = w->order[k], e = dpprof__fw_pe(s, p);
        const dpprof_param *pp = &s->model.params[p];
        if (w->gs[p] < 0) continue;
        dpprof__fw_drop(s, c32);
        c32 = dpprof__fw_gs16(s, p) && e == 4 ? dpprof__fw_new(s, n * pp->rows * pp->cols, 4, DPPROF_CAT_PER_SAMPLE_GRADIENTS, pp->module) : -1;
        { /* clip_factor_on_device: the clip factors in the parameter's dtype (a copy where they differ, else they) */
            const int u = ecf != e ? dpprof__fw_new(s, n, e, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OPTIMIZER) : -1;
            dpprof__fw_drop(s, cf32);
            cf32 = u;
        }
        if (!accumulate) w->sg[p] = dpprof__fw_new(s, (int64_t)pp->rows * pp->cols, e, DPPROF_CAT_GRADIENTS, pp->module);
        else {
            const int u = dpprof__fw_new(s, (int64_t)pp->rows * pp->cols, e, DPPROF_CAT_GRADIENTS, pp->module);
            dpprof__fw_drop(s, t);
            t = u;
        }
    }
    if (cf32 >= 0) dpprof__fw_drop(s, cf); /* the frame's locals go in order: the clip factors first where no copy aliases them */
    for (k = 0; k < nk; k++) dpprof__fw_drop(s, nr[k]);
    dpprof__fw_drop(s, psn);
    dpprof__fw_drop(s, c32);
    dpprof__fw_drop(s, cf32 >= 0 ? cf32 : cf);
    dpprof__fw_drop(s, t);
noise:
    if (!last) { /* a skipped step's zero_grad: the summed_grads stay */
        for (k = 0; k < np; k++) dpprof__fw_drop(s, w->gs[w->order[k]]), w->gs[w->order[k]] = -1;
        for (k = 0; k < np; k++) dpprof__fw_drop(s, w->g[w->order[k]]), w->g[w->order[k]] = -1;
        return;
    }
    if ((w->rc = dpprof__phase(s, DPPROF_PHASE_NOISE, step)) != DPPROF_OK) return;
    for (k = 0; k < np; k++) { /* the noise, and .grad = summed_grad + noise */
        const int p = w->order[k];
        const dpprof_param *pp = &s->model.params[p];
        if (w->sg[p] < 0) continue;
        z = dpprof__fw_new(s, (int64_t)pp->rows * pp->cols, dpprof__fw_pe(s, p), DPPROF_CAT_GRADIENTS, DPPROF_MOD_OPTIMIZER); /* the summed grad's dtype */
        nz = dpprof__fw_new(s, (int64_t)pp->rows * pp->cols, dpprof__fw_pe(s, p), DPPROF_CAT_GRADIENTS, DPPROF_MOD_OPTIMIZER);
        dpprof__fw_drop(s, z);
        dpprof__fw_drop(s, prev);
        g2 = dpprof__fw_new(s, (int64_t)pp->rows * pp->cols, dpprof__fw_pe(s, p), DPPROF_CAT_GRADIENTS, pp->module);
        dpprof__fw_drop(s, w->g[p]);
        w->g[p] = g2;
        prev = nz;
    }
    dpprof__fw_drop(s, prev);
    dpprof__fw_optimizer(s, step);
    for (k = 0; k < np; k++) { /* zero_grad */
        const int p = w->order[k];
        dpprof__fw_drop(s, w->gs[p]);
        dpprof__fw_drop(s, w->sg[p]);
        w->gs[p] = w->sg[p] = -1;
    }
    for (k = 0; k < np; k++) dpprof__fw_drop(s, w->g[w->order[k]]), w->g[w->order[k]] = -1;
}

/* the framework's session: the parameters (a fresh accountant: build_model made the shapes alone) and the walk's
   tables */
static int dpprof__noise_key(dpprof_session *s);
static int dpprof__fw_setup(dpprof_session *s) {
    dpprof__fw *w = &s->fw;
    const int np = s->model.n_params;
    int i, rc;
    dpprof_prof_free(&s->prof);
    DPPROF__TRY(dpprof_prof_init(&s->prof, DPPROF_PROF_NO_CLOCK | (s->cfg.no_timeline ? DPPROF_PROF_NO_EVENTS : 0)));
    w->cap = 10 * np + 64 * s->sh.L + 256;
    w->t = (dpprof__fwt *)DPPROF_MALLOC(sizeof(dpprof__fwt) * (size_t)w->cap);
    w->free_list = (int *)DPPROF_MALLOC(sizeof(int) * (size_t)w->cap);
    w->w = (int *)DPPROF_MALLOC(sizeof(int) * 10 * (size_t)np);
    w->lay = (dpprof__fw_layer *)DPPROF_MALLOC(sizeof(dpprof__fw_layer) * (size_t)s->sh.L);
    if (!w->t || !w->free_list || !w->w || !w->lay) return dpprof__fail(DPPROF_ERR_OOM, "cannot allocate the framework walk's tables");
    memset(w->t, 0, sizeof(dpprof__fwt) * (size_t)w->cap);
    for (i = 0; i < w->cap; i++) w->free_list[i] = w->cap - 1 - i;
    w->n_free = w->cap;
    w->g = w->w + np;
    w->m = w->g + np;
    w->v = w->m + np;
    w->tmp = w->v + np;
    w->wcast = w->tmp + np;
    w->gs = w->wcast + np;
    w->sg = w->gs + np;
    w->order = w->sg + np;
    w->ns = w->order + np;
    for (i = 0; i < 4 * np; i++) w->w[i] = -1;
    for (i = 0; i < np; i++) w->wcast[i] = w->gs[i] = w->sg[i] = w->ns[i] = -1;
    { /* Hugging Face's order: the embedding, each layer's q, k, v, o, gate, up, down and its two norms, the final norm, the head */
        static const int in_layer[DPPROF__P_PER_LAYER] = {1, 2, 3, 4, 6, 7, 8, 0, 5};
        int l, j, k = 0;
        w->order[k++] = s->model.p_emb;
        for (l = 0; l < s->sh.L; l++)
            for (j = 0; j < DPPROF__P_PER_LAYER; j++) { /* PEFT's adapters follow their projection's weight */
                const int p = 1 + l * DPPROF__P_PER_LAYER + in_layer[j], la = dpprof__fw_lora(s, p);
                w->order[k++] = p;
                if (la >= 0) w->order[k++] = la, w->order[k++] = la + 1;
            }
        w->order[k++] = s->model.p_normf;
        if (s->model.p_head != s->model.p_emb) w->order[k++] = s->model.p_head;
    }
    w->opacus = s->cfg.framework == DPPROF_FRAMEWORK_OPACUS;
    w->ghost = w->opacus && s->cfg.algo == DPPROF_ALGO_GHOST;
    w->gc = s->cfg.checkpoint == DPPROF_CHECKPOINT_LAYERS;
    w->relayer = w->frame = w->mask = w->leaf = w->leafgrad = w->nleaf = -1;
    s->dps.dp = w->opacus;                                              /* Opacus's DP-SGD: the result's privacy is its noise's */
    if (w->opacus && s->cfg.poisson) DPPROF__TRY(dpprof__noise_key(s)); /* the Poisson draws' key */
    w->cos = w->sin = w->tied = w->ids = w->labels = w->logits = w->lps = w->psn = -1;
    w->base16 = s->cfg.dtype == DPPROF_DTYPE_BF16 && s->cfg.lora_rank && s->cfg.frozen_masters != DPPROF_SWITCH_ON;
    DPPROF__TRY(dpprof_phase_begin(&s->prof, DPPROF_PHASE_MODEL_LOADED, -1));
    for (i = 0; i < np && w->rc == DPPROF_OK; i++) {
        const dpprof_param *p = &s->model.params[i];
        w->w[i] = dpprof__fw_new(s, (int64_t)p->rows * p->cols, dpprof__fw_w16(s, i) ? 2 : 4, p->w.category, p->module);
    }
    /* PEFT's modules_to_save: the trained head is a copy beside the frozen original (ModulesToSaveWrapper) */
    if (s->cfg.lora_rank && s->model.params[s->model.p_head].trainable)
        (void)dpprof__fw_new(s, (int64_t)s->model.params[s->model.p_head].rows * s->model.params[s->model.p_head].cols, w->base16 ? 2 : 4, DPPROF_CAT_MODEL_PARAMETERS, DPPROF_MOD_HEAD);
    /* the rotary embedding's buffers: inv_freq and original_inv_freq */
    (void)dpprof__fw_new(s, s->sh.HS / 2, 4, DPPROF_CAT_MODEL_PARAMETERS, DPPROF_MOD_ATTENTION);
    (void)dpprof__fw_new(s, s->sh.HS / 2, 4, DPPROF_CAT_MODEL_PARAMETERS, DPPROF_MOD_ATTENTION);
    rc = w->rc;
    dpprof__phase_end(s);
    return rc;
}

/* the per-step tables (loss, time, logical batch) to hold step */
static int dpprof__grow_steps(dpprof_session *s, int step) {
    size_t cap;
    if (dpprof__grow((void **)&s->run.step_loss, &s->run.cap_steps, (size_t)step + 1, sizeof(double)) != 0)
        return dpprof__fail(DPPROF_ERR_OOM, "cannot grow the loss table");
    cap = s->run.cap_steps;
    s->run.step_ms = (double *)DPPROF_REALLOC(s->run.step_ms, sizeof(double) * cap);
    s->run.step_n = (int *)DPPROF_REALLOC(s->run.step_n, sizeof(int) * cap);
    if (!s->run.step_ms || !s->run.step_n) return dpprof__fail(DPPROF_ERR_OOM, "cannot grow the step tables");
    return DPPROF_OK;
}

/* one step of the framework's loop: its physical batches (gradient accumulation), the optimizer */
static int dpprof__fw_step(dpprof_session *s) {
    const int step = s->run.steps_done, b = s->cfg.physical_batch;
    int first;
    DPPROF__TRY(dpprof__grow_steps(s, step));
    s->run.step_n[step] = s->cfg.batch;
    if (s->fw.opacus) { /* BatchMemoryManager's physical batches: the logical batch (a Poisson draw under config.poisson)
                           split as np.array_split splits it, into k = ceil(L / b) parts, the first L mod k of them one
                           sample larger */
        int L = s->cfg.batch, k, j;
        if (s->cfg.poisson && (s->fw.rc = dpprof__poisson_draw(s, step, NULL, NULL, &L)) != DPPROF_OK) return s->fw.rc;
        if (!L)
            return s->fw.rc = dpprof__fail(DPPROF_ERR_UNSUPPORTED,
                                           "config.poisson drew an empty batch at step %d (a sample rate of %g): Opacus runs it as a batch of 0 samples, which Hugging Face's LlamaForCausalLM "
                                           "cannot run (its attention's view of 0 elements fails), so the loop stops there; a larger config.batch (or another config.seed) draws none",
                                           step, (double)s->cfg.batch / (double)s->cfg.dataset_size);
        s->run.step_n[step] = L;
        k = (L + b - 1) / b;
        for (j = 0; j < k && s->fw.rc == DPPROF_OK; j++) {
            s->fw.n = L / k + (j < L % k);
            dpprof__fw_physical(s, step, s->fw.n);
            if (s->fw.rc == DPPROF_OK) dpprof__fw_opacus_step(s, step, j == k - 1);
        }
    } else /* the loop's gradient accumulation: physical batches of b, the last the rest */
        for (first = 0; first < s->cfg.batch && s->fw.rc == DPPROF_OK; first += b) {
            s->fw.n = s->cfg.batch - first < b ? s->cfg.batch - first : b;
            dpprof__fw_physical(s, step, s->fw.n);
        }
    if (s->fw.rc == DPPROF_OK && !s->fw.opacus) dpprof__fw_optimizer(s, step);
    dpprof__phase_end(s);
    if (s->fw.rc != DPPROF_OK) return s->fw.rc;
    s->run.step_loss[step] = NAN;
    s->run.step_ms[step] = NAN;
    s->run.steps_done++;
    return DPPROF_OK;
}

DPPROF_API int dpprof_session_step(dpprof_session *s) {
    const int b = s->cfg.physical_batch, T = s->cfg.seq, tw = s->cfg.task == DPPROF_TASK_LM ? T : 1;
    const int step = s->run.steps_done;
    double t0 = dpprof__clock_ms(), tp0 = 0, loss = 0, gpu_ms = NAN;
    int first, pass, rc = DPPROF_OK, ev_start = -1, nsamp;
    size_t first_phase = s->prof.n_phases;
    const long long launches0 = dpprof_cuda_launch_count(), wgmma0 = dpprof_cuda_wgmma_count(), work0 = dpprof_cuda_work_count();
    int marked;
    if (s->fw.t) return dpprof__fw_step(s);
    dpprof__bind(s);
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA) {
        if (s->cfg.dram && step == 0) { /* the counters step: warm-up, so its syncs do not touch the timing */
            /* one range per phase record: --checkpoint layers adds two a layer to each backward pass; per op: a bound on
               a step's ops (a layer's forward, backward and recompute with every adapter and norm op is under 128) */
            const int per_batch = s->cfg.dram == DPPROF_DRAM_OPS ? 64 + 128 * s->sh.L : 8 + (s->cfg.checkpoint == DPPROF_CHECKPOINT_LAYERS ? 4 * s->sh.L : 0);
            s->gpu.count_op0 = s->obs.n_ops;
            if (dpprof_cuda_counters_begin(64 + per_batch * (s->cfg.batch / s->cfg.physical_batch + 2)) == DPPROF_OK) s->gpu.counting = (int)s->cfg.dram;
            else snprintf(s->gpu.dram_note, sizeof s->gpu.dram_note, "CUPTI range profiler unavailable: %.200s", dpprof_last_error());
        }
        dpprof_cuda_events_reset();
        if (dpprof_cuda_event(&ev_start) != DPPROF_OK) return dpprof__fail(DPPROF_ERR_CUDA, "%s", dpprof_last_error());
        tp0 = dpprof_prof_now_ms(&s->prof);
    }
#endif
    DPPROF__TRY(dpprof__grow_steps(s, step));
    /* op times in the warm-up steps, but not in the counters step when there is another warm-up step */
    s->obs.mark_ops = s->cfg.trace_ops || (s->cfg.op_times && step < s->cfg.warmup && !(s->cfg.dram && step == 0 && s->cfg.warmup >= 2)) || s->gpu.counting == 2;
    DPPROF__TRY(dpprof__sample_batch(s, step));
    nsamp = s->dps.batch_n;
    s->run.step_n[step] = s->dps.draw_n;
    memset(s->dist.bytes, 0, sizeof s->dist.bytes);
    memset(s->dist.calls, 0, sizeof s->dist.calls);
    for (pass = first = 0; pass < s->dps.passes && rc == DPPROF_OK; pass++) {
        int n = s->dps.batch_n - first < b ? s->dps.batch_n - first : b;
        double idle_loss = 0;
        s->dps.idle = n <= 0; /* this rank's share is done, another rank's is not: one sample that weighs zero */
        if (s->dps.idle) n = 1;
        rc = dpprof__phase(s, DPPROF_PHASE_FORWARD, step);
        if (rc == DPPROF_OK) rc = dpprof__data_alloc(s, n);
        if (rc == DPPROF_OK && s->backend != DPPROF_BACKEND_DRY) {
            int i, *tok = s->backend == DPPROF_BACKEND_CUDA ? s->gpu.h_tok : DPPROF__I(s->model.a.tokens);
            int *tgt = s->backend == DPPROF_BACKEND_CUDA ? s->gpu.h_tgt : DPPROF__I(s->model.a.targets);
            for (i = 0; i < n; i++)
                dpprof__sample(s, s->dps.idle ? (uint64_t)s->dist.rank : (uint64_t)s->dps.batch_ids[first + i], tok + (size_t)i * T, tgt + (size_t)i * tw);
            rc = dpprof__upload_batch(s, n);
        }
        /* vanilla: the gradient of the mean loss of the logical batch (of its expected size B under poisson, as DP-SGD
           divides the noisy sum by B); dp: the clipped sum. an idle pass's loss and gradient are counted nowhere */
        if (rc == DPPROF_OK) rc = dpprof__physical(s, step, n, first, s->dps.idle ? 0.0 : 1.0 / s->cfg.batch, s->dps.idle ? &idle_loss : &loss, NULL);
        if (rc == DPPROF_OK) {
            dpprof__tfree(s, &s->model.a.tokens);
            dpprof__tfree(s, &s->model.a.targets);
        }
        if (!s->dps.idle) first += n;
    }
    s->dps.idle = 0;
#ifdef DPPROF_MPI
    if (s->dist.real) { /* the step's loss is the logical batch's, over every rank's samples; and every rank goes on, or
                           none (with poisson the ranks' shares, and so their peaks, differ: a memory limit may stop one) */
        double v[3];
        v[0] = loss;
        v[1] = (double)nsamp;
        v[2] = rc != DPPROF_OK;
        MPI_Allreduce(MPI_IN_PLACE, v, 3, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        loss = v[0];
        nsamp = (int)v[1];
        if (v[2] > 0) { /* which failure: the lowest code of the ranks' */
            int code = rc;
            MPI_Allreduce(MPI_IN_PLACE, &code, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
            if (rc == DPPROF_OK) rc = dpprof__fail(code, "another rank failed in step %d (%s)", step, dpprof_result_str(code));
        }
    }
#endif
    if (rc == DPPROF_OK) dpprof__dist_reduce(s);
    if (rc == DPPROF_OK) rc = dpprof__check_grads(s, step);
    if (rc == DPPROF_OK && s->dps.dp && !s->plan.fused_noise) {
        rc = dpprof__phase(s, DPPROF_PHASE_NOISE, step);
        if (rc == DPPROF_OK) dpprof__noise(s, step);
    }
    if (rc == DPPROF_OK) rc = dpprof__phase(s, DPPROF_PHASE_OPTIMIZER_STEP, step);
    if (rc == DPPROF_OK) dpprof__optimizer(s, s->dps.dp && s->plan.fused_noise ? step : -1);
    if (rc == DPPROF_OK && s->backend == DPPROF_BACKEND_CUDA) rc = dpprof__gpu_times(s, first_phase, ev_start, tp0, &gpu_ms);
    if (s->gpu.counting) {
        int rc2 = dpprof__counters_end(s, first_phase);
        if (rc == DPPROF_OK) rc = rc2;
    }
    dpprof__phase_end(s);
    if (rc != DPPROF_OK) {
        dpprof__acts_release(s);
        return rc;
    }
    marked = s->obs.mark_ops && !(s->cfg.dram == DPPROF_DRAM_OPS && step == 0); /* the counted step's ops are not timed */
    s->obs.mark_ops = s->cfg.trace_ops;
    s->run.step_loss[step] = nsamp ? loss / nsamp : NAN;
    s->run.step_ms[step] = s->backend == DPPROF_BACKEND_DRY ? NAN : (s->backend == DPPROF_BACKEND_CUDA ? gpu_ms : dpprof__clock_ms() - t0);
    if (marked && s->backend != DPPROF_BACKEND_DRY) { /* a step whose ops were timed: its work and time, to hold the op records against */
        s->obs.work_steps += dpprof_cuda_work_count() - work0;
        s->obs.ms_steps += s->run.step_ms[step];
        s->obs.n_steps++;
    }
    s->run.steps_done++;
#ifdef DPPROF_MPI
    if (s->dist.real && s->run.steps_done == s->cfg.warmup + s->cfg.steps) { /* every rank's peak, to hold against each other */
        long long v[2];
        v[0] = -(long long)s->prof.peak_bytes;
        v[1] = (long long)s->prof.peak_bytes;
        MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        s->dist.peak_min = (int64_t)-v[0];
        s->dist.peak_max = (int64_t)v[1];
    }
#endif
    if (step >= s->cfg.warmup) s->gpu.launches += dpprof_cuda_launch_count() - launches0, s->gpu.wgmma_launches += dpprof_cuda_wgmma_count() - wgmma0;
    /* the last step of a cuda run: the dry plan of the same configuration beside the accountant's peak */
    if (s->backend == DPPROF_BACKEND_CUDA && s->run.steps_done == s->cfg.warmup + s->cfg.steps && dpprof__dry_plan(s, &s->gpu.dry_peak) != DPPROF_OK) s->gpu.dry_peak = -1;
    if (s->backend != DPPROF_BACKEND_DRY && nsamp && !(s->run.step_loss[step] == s->run.step_loss[step] && fabs(s->run.step_loss[step]) <= DBL_MAX))
        return dpprof__fail(DPPROF_ERR_NUMERIC, "the loss of step %d is %g", step, s->run.step_loss[step]);
    return DPPROF_OK;
}

DPPROF_API int dpprof_session_run(dpprof_session *s) {
    int total = s->cfg.warmup + s->cfg.steps;
    while (s->run.steps_done < total) DPPROF__TRY(dpprof_session_step(s));
    return DPPROF_OK;
}

/* ---- 5.9 auto ----------------------------------------------------------------------------------------------
   config.algo = auto chooses per linear layer: materialise the per-sample gradient, ghost's gram matrices or a
   flash norm, by analytic costs, by exact dry probes of the peak (the same configuration on the dry backend,
   in process) and, on cuda, by kernels timed at session start (the clipped gradient, the noise pass, the flash
   flavours). */

/* the sequence length a parameter's norm sees: 1 for a classification head (the last position) */
static int dpprof__param_T(const dpprof_session *s, int i) {
    return (i == s->model.p_head && s->cfg.task == DPPROF_TASK_CLS) ? 1 : s->cfg.seq;
}

#if DPPROF__CUDA
/* auto's timings run a call 4 times: k = 0 warms up, the clock starts before k = 1 (dpprof__tick) and
   dpprof__tock gives the mean of the three timed calls; DPPROF_OK or DPPROF_ERR_CUDA (the caller says what) */
static int dpprof__tick(int k, int *e0) { return k != 1 || dpprof_cuda_event(e0) == DPPROF_OK ? DPPROF_OK : DPPROF_ERR_CUDA; }
static int dpprof__tock(int e0, double *ms) {
    int e1 = -1;
    if (dpprof_cuda_event(&e1) != DPPROF_OK || dpprof_cuda_event_ms(e0, e1, ms) != DPPROF_OK) return DPPROF_ERR_CUDA;
    *ms /= 3.0;
    return DPPROF_OK;
}
#endif

/* bf16 book-keeping's batched clipped gradient runs in this session: flat clipping, a physical batch of 2 or more and
   batched_clipgrad ON (never by default, auto's either: it lowers the clip factors, so its clipped sum is not the exact
   one). the norms phase then allocates the per-sample norms of the layers' dy and x on every backend */
static int dpprof__cg_batched_possible(const dpprof_session *s) {
    if (!s->plan.bookkeeping || s->plan.two_pass || s->cfg.dtype != DPPROF_DTYPE_BF16 || s->cfg.per_layer_clipping || s->cfg.physical_batch < 2) return 0;
    return s->cfg.batched_clipgrad == DPPROF_SWITCH_ON;
}

/* auto, bf16 book-keeping with physical batches of 2 or more (and fused_clipgrad 0): which kernel makes each
   linear layer's clipped gradient, measured once per distinct shape at session start, one warm-up and three
   timed calls of each: cuBLAS per sample (the GEMMs read and write all of dw once a sample) against the fused
   kernel (one pass; dpprof_linear_clipgrad_rep_gpu, the physical batch's worth of copies of one sample) and, with
   batched_clipgrad AUTO, the batched GEMM (dy's n T rows scaled, one GEMM with K = n T; on inputs of the batch's
   rows, as the GEMM's speed depends on K). the inputs (seq x widest input, seq x widest output, bf16, times the
   physical batch for the batched GEMM) and the factors are allocated on every backend that runs bf16, so the dry
   and cuda memory profiles stay equal; dw is the layer's own gradient, zeroed after */
static int dpprof__calibrate_clipgrad(dpprof_session *s) {
    const int n = s->cfg.physical_batch, T = s->cfg.seq, nb = s->plan.batched ? n : 1; /* nb: the samples the inputs hold */
    int i, wi = 0, wo = 0, rc;
    dpprof_tensor xs, ys, cs;
    if (s->cfg.fused_clipgrad != DPPROF_SWITCH_AUTO || s->cfg.batched_clipgrad == DPPROF_SWITCH_ON || !s->plan.bookkeeping || s->plan.two_pass || s->cfg.dtype != DPPROF_DTYPE_BF16 || n < 2)
        return DPPROF_OK; /* batched_clipgrad ON: every layer batched, nothing to choose */
    for (i = 0; i < s->model.n_params; i++) {
        const dpprof_param *p = &s->model.params[i];
        if (!p->trainable || p->rows <= 1 || i == s->model.p_emb || p->rows % 8 || p->cols % 8) continue;
        if (p->cols > wi) wi = p->cols;
        if (p->rows > wo) wo = p->rows;
    }
    if (!wi) return DPPROF_OK;
    memset(&ys, 0, sizeof ys);
    memset(&cs, 0, sizeof cs);
    DPPROF__TRY(dpprof__talloc(s, &xs, (int64_t)nb * T * wi, s->elem, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER, 0));
    rc = dpprof__talloc(s, &ys, (int64_t)nb * T * wo, s->elem, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER, 0);
    if (rc == DPPROF_OK) rc = dpprof__talloc(s, &cs, n, 8, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OTHER, 0);
    for (i = 0; rc == DPPROF_OK && s->plan.rates_given && i < s->model.n_params; i++) { /* given rates: each kernel's ms from its flops */
        const dpprof_param *p = &s->model.params[i];
        int f;
        if (!p->trainable || p->rows <= 1 || i == s->model.p_emb || p->rows % 8 || p->cols % 8) continue;
        for (f = 0; f < 2 + s->plan.batched; f++)
            if (s->plan.rates.clipgrad[f] > 0) s->plan.tensor[i].clipgrad_ms[f] = 1e3 * dpprof_linear_clipgrad_cost(n, dpprof__param_T(s, i), p->cols, p->rows, s->elem).flops / s->plan.rates.clipgrad[f];
    }
#if DPPROF__CUDA
    if (rc == DPPROF_OK && s->backend == DPPROF_BACKEND_CUDA && !s->plan.rates_given) {
        const uint32_t pair = 0x3f80bf80u; /* bf16 (-1, 1) pairs, as dpprof__calibrate's inputs */
        double *hc = (double *)DPPROF_MALLOC(sizeof(double) * (size_t)n);
        float v;
        int e0 = -1, j, k, f;
        memcpy(&v, &pair, sizeof v);
        dpprof_fill_gpu(DPPROF__F(xs), (size_t)nb * T * (size_t)wi / 2, v);
        dpprof_fill_gpu(DPPROF__F(ys), (size_t)nb * T * (size_t)wo / 2, v);
        if (!hc) rc = dpprof__fail(DPPROF_ERR_OOM, "cannot allocate the clip factors for config.algo = auto's timing");
        for (j = 0; rc == DPPROF_OK && j < n; j++) hc[j] = 1.0; /* the timing does not depend on them; 1 keeps the batched GEMM's scaled inputs */
        if (rc == DPPROF_OK && dpprof_cuda_copy(cs.data, hc, sizeof(double) * (size_t)n, DPPROF_COPY_H2D) != DPPROF_OK) rc = DPPROF_ERR_CUDA;
        DPPROF_FREE(hc);
        for (i = 0; rc == DPPROF_OK && i < s->model.n_params; i++) {
            dpprof_param *p = &s->model.params[i];
            const int Ti = dpprof__param_T(s, i);
            if (!p->trainable || p->rows <= 1 || i == s->model.p_emb || p->rows % 8 || p->cols % 8) continue;
            for (j = 0; j < i; j++) /* a shape measured already */
                if (!isnan(s->plan.tensor[j].clipgrad_ms[0]) && s->model.params[j].rows == p->rows && s->model.params[j].cols == p->cols && dpprof__param_T(s, j) == Ti) break;
            if (j < i) {
                for (f = 0; f < 3; f++) s->plan.tensor[i].clipgrad_ms[f] = s->plan.tensor[j].clipgrad_ms[f];
                continue;
            }
            for (f = 0; f < 2 + s->plan.batched && rc == DPPROF_OK; f++) {
                double ms = 0;
                dpprof__tune_clipgrad(f == DPPROF_CLIPGRAD_FUSED);
                for (k = 0; k < 4 && rc == DPPROF_OK; k++) {
                    rc = dpprof__tick(k, &e0);
                    if (f == DPPROF_CLIPGRAD_BATCHED) { /* what dpprof__clipgrad_batched queues */
                        dpprof_scale_rows_gpu(DPPROF__F(ys), (const double *)cs.data, n, Ti, p->rows);
                        dpprof_matmul_bwd_gpu(NULL, DPPROF__F(p->g), DPPROF__F(ys), DPPROF__F(xs), NULL, n * Ti, p->cols, p->rows);
                    } else dpprof_linear_clipgrad_rep_gpu(DPPROF__F(p->g), DPPROF__F(ys), DPPROF__F(xs), (const double *)cs.data, n, Ti, p->cols, p->rows);
                }
                if (rc == DPPROF_OK) rc = dpprof__tock(e0, &ms);
                if (rc == DPPROF_OK) s->plan.tensor[i].clipgrad_ms[f] = ms;
            }
            (void)dpprof_cuda_zero(p->g.data, (size_t)p->g.n * (size_t)p->g.elem_size);
        }
        dpprof__tune_clipgrad(s->cfg.fused_clipgrad == DPPROF_SWITCH_ON);
        dpprof_cuda_events_reset();
        if (rc == DPPROF_ERR_CUDA) rc = dpprof__fail(DPPROF_ERR_CUDA, "timing the clipped gradient kernels for config.algo = auto: %s", dpprof_last_error());
    }
#endif
    dpprof__tfree(s, &cs);
    dpprof__tfree(s, &ys);
    dpprof__tfree(s, &xs);
    return rc;
}

/* auto with noise (fused_noise 0): the noise and the optimizer step as two passes over the gradient
   (dpprof_noise_scale_gpu, then adam or sgd) or as one (dpprof_noise_adam_gpu, noise_sgd), timed once at
   session start on the largest trainable tensor's count of weights (at most 2^22), one warm-up and three timed
   calls each, on buffers of their own (weights, gradient, moments, the bf16 copy where the run keeps them),
   allocated on every backend so that the dry and cuda memory profiles stay equal; the step takes the faster */
static int dpprof__calibrate_noise(dpprof_session *s) {
    const int adam = s->cfg.optimizer == DPPROF_OPT_ADAM, bf16 = s->cfg.dtype == DPPROF_DTYPE_BF16;
    int64_t N = 0;
    int i, rc;
    dpprof_tensor w, g, m, v, cp;
    if (s->cfg.fused_noise != DPPROF_SWITCH_AUTO || !s->dps.dp) return DPPROF_OK;
    for (i = 0; i < s->model.n_params; i++)
        if (s->model.params[i].trainable && s->model.params[i].g.n > N) N = s->model.params[i].g.n;
    if (N > (INT64_C(1) << 22)) N = INT64_C(1) << 22; /* 4M weights: 152 MB a pass, past any launch overhead */
    if (!N) return DPPROF_OK;
    memset(&g, 0, sizeof g);
    memset(&m, 0, sizeof m);
    memset(&v, 0, sizeof v);
    memset(&cp, 0, sizeof cp);
    DPPROF__TRY(dpprof__talloc(s, &w, N, DPPROF__R, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER, 1));
    rc = dpprof__talloc(s, &g, N, DPPROF__R, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER, 1);
    if (rc == DPPROF_OK && adam) rc = dpprof__talloc(s, &m, N, DPPROF__R, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER, 1);
    if (rc == DPPROF_OK && adam) rc = dpprof__talloc(s, &v, N, DPPROF__R, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER, 1);
    if (rc == DPPROF_OK && bf16) rc = dpprof__talloc(s, &cp, N, 2, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER, 1);
    s->plan.rates.noise_n = N;
#if DPPROF__CUDA
    if (rc == DPPROF_OK && s->backend == DPPROF_BACKEND_CUDA && !s->plan.rates_given) {
        const double inv_b = 1.0 / s->cfg.batch;
        dpprof_bf16 *copy = bf16 ? (dpprof_bf16 *)cp.data : NULL;
        int e0 = -1, k, f;
        for (f = 0; f < 2 && rc == DPPROF_OK; f++) {
            double ms = 0;
            for (k = 0; k < 4 && rc == DPPROF_OK; k++) { /* stream 2^62 + k: no step's noise */
                const uint64_t st = (UINT64_C(1) << 62) + (uint64_t)k;
                rc = dpprof__tick(k, &e0);
                if (f) {
                    if (adam) dpprof_noise_adam_gpu(DPPROF__F(w), DPPROF__F(m), DPPROF__F(v), DPPROF__F(g), (size_t)N, s->cfg.lr, 0.9, 0.999, 1e-8, s->cfg.weight_decay, 1, copy,
                                                    s->plan.noise_std, s->dps.noise_key, st | s->dps.noise_stream_bits, 0, inv_b);
                    else dpprof_noise_sgd_gpu(DPPROF__F(w), DPPROF__F(g), (size_t)N, s->cfg.lr, copy, s->plan.noise_std, s->dps.noise_key, st | s->dps.noise_stream_bits, 0, inv_b);
                } else {
                    dpprof_noise_scale_gpu(DPPROF__F(g), (size_t)N, s->plan.noise_std, s->dps.noise_key, st | s->dps.noise_stream_bits, 0, inv_b);
                    if (adam) dpprof_adam_gpu(DPPROF__F(w), DPPROF__F(m), DPPROF__F(v), DPPROF__F(g), (size_t)N, s->cfg.lr, 0.9, 0.999, 1e-8, s->cfg.weight_decay, 1, copy);
                    else dpprof_sgd_gpu(DPPROF__F(w), DPPROF__F(g), (size_t)N, s->cfg.lr, copy);
                }
            }
            if (rc == DPPROF_OK) rc = dpprof__tock(e0, &ms);
            if (rc == DPPROF_OK) s->plan.rates.noise_ms[f] = ms;
        }
        dpprof_cuda_events_reset();
        if (rc == DPPROF_ERR_CUDA) rc = dpprof__fail(DPPROF_ERR_CUDA, "timing the noise and the optimizer step for config.algo = auto: %s", dpprof_last_error());
    }
#endif
    dpprof__tfree(s, &cp);
    dpprof__tfree(s, &v);
    dpprof__tfree(s, &m);
    dpprof__tfree(s, &g);
    dpprof__tfree(s, &w);
    return rc;
}

/* auto on cuda: how fast this device runs each flash flavour (and ghost's grams), measured once on the
   physical batch's worth of samples of a (T, C) -> (T, C) layer (the model's width at the run's T): the
   kernels' rates grow with the samples a launch takes (ghost's batched grams of one sample at T = 1024 fill
   half of an H100), and distinct samples are read from DRAM as the step reads them. the inputs are allocated on every
   backend, so the memory profiles of cpu, dry and cuda stay equal; off the gpu both rates are 1 and
   the choice is by flops (dpprof_flash_choice) */
static int dpprof__calibrate(dpprof_session *s) {
    const int T = s->cfg.seq, C = s->sh.C, n = s->cfg.physical_batch;
    /* ghost's grams are timed too where auto may use them and the rates decide (dpprof__auto_ghost) */
    const int ghost = s->plan.ghost && s->cfg.auto_ghost == DPPROF_SWITCH_AUTO;
    dpprof_tensor x, dy, nrm, ga, gg;
    int rc;
    if (s->plan.rates_given) s->plan.rates = *s->cfg.rates; /* nothing timed; the buffers below are allocated all the same */
    memset(&ga, 0, sizeof ga);
    memset(&gg, 0, sizeof gg);
    DPPROF__TRY(dpprof__talloc(s, &x, (int64_t)n * T * C, s->elem, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER, 0));
    rc = dpprof__talloc(s, &dy, (int64_t)n * T * C, s->elem, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER, 0);
    if (rc == DPPROF_OK) rc = dpprof__talloc(s, &nrm, n, 8, DPPROF_CAT_NORM_SAMPLES, DPPROF_MOD_OTHER, 1);
    else memset(&nrm, 0, sizeof nrm);
    if (rc == DPPROF_OK && ghost) rc = dpprof__talloc(s, &ga, (int64_t)n * T * T, DPPROF__R, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER, 0);
    if (rc == DPPROF_OK && ghost) rc = dpprof__talloc(s, &gg, (int64_t)n * T * T, DPPROF__R, DPPROF_CAT_TEMP_MATRICES, DPPROF_MOD_OTHER, 0);
#if DPPROF__CUDA
    if (rc == DPPROF_OK && s->backend == DPPROF_BACKEND_CUDA && !s->plan.rates_given) {
        int f, k, e0 = -1;
        double ms = 0;
        if (s->cfg.dtype == DPPROF_DTYPE_BF16) {
            /* x and dy are bf16 activations here: fill them with pairs of bf16 (-1, 1), the bits of
               one float per pair (the normal generator writes fp32 only) */
            const uint32_t pair = 0x3f80bf80u;
            float v;
            memcpy(&v, &pair, sizeof v);
            (void)dpprof_cuda_zero(x.data, (size_t)x.n * (size_t)x.elem_size);
            (void)dpprof_cuda_zero(dy.data, (size_t)dy.n * (size_t)dy.elem_size);
            dpprof_fill_gpu(DPPROF__F(x), (size_t)n * T * C / 2, v);
            dpprof_fill_gpu(DPPROF__F(dy), (size_t)n * T * C / 2, v);
        } else {
            dpprof_init_normal_gpu(DPPROF__F(x), (size_t)n * T * C, 1.0, s->cfg.seed, UINT64_C(5) << 40);
            dpprof_init_normal_gpu(DPPROF__F(dy), (size_t)n * T * C, 1.0, s->cfg.seed, (UINT64_C(5) << 40) + 1);
        }
        /* flash gram, flash psg, ghost; bf16: the two flash flavours again on cuBLAS blocks (f 3, 4) */
        for (f = 0; f < 5 && rc == DPPROF_OK; f++) {
            const int fl = f >= 3 ? f - 3 : f; /* the flavour */
            dpprof_cost c = fl == 2 ? dpprof_gram_cost(n, T, C, s->elem) : (fl ? dpprof_linear_sqnorm_psg_cost(n, T, C, C, s->elem) : dpprof_linear_sqnorm_gram_cost(n, T, C, C, s->elem));
            if ((f == 2 && !ghost) || (f >= 3 && s->cfg.dtype != DPPROF_DTYPE_BF16)) continue;
            if (fl == 2) c.flops = 2 * c.flops + dpprof_gram_dot_cost(n, T, s->elem).flops;
            dpprof__tune_norms(f >= 3);
            for (k = 0; k < 4 && rc == DPPROF_OK; k++) {
                rc = dpprof__tick(k, &e0);
                if (f == 2) {
                    dpprof_gram_gpu(DPPROF__F(ga), DPPROF__F(x), n, T, C);
                    dpprof_gram_gpu(DPPROF__F(gg), DPPROF__F(dy), n, T, C);
                    dpprof_gram_dot_gpu((double *)nrm.data, DPPROF__F(ga), DPPROF__F(gg), n, T);
                } else if (f) dpprof_linear_sqnorm_psg_gpu((double *)nrm.data, DPPROF__F(dy), DPPROF__F(x), n, T, C, C);
                else dpprof_linear_sqnorm_gram_gpu((double *)nrm.data, DPPROF__F(dy), DPPROF__F(x), n, T, C, C);
            }
            if (rc == DPPROF_OK) rc = dpprof__tock(e0, &ms);
            if (rc == DPPROF_OK && ms > 0)
                *(f == 4 ? &s->plan.rates.psg_cublas : f == 3 ? &s->plan.rates.gram_cublas
                                                   : f == 2   ? &s->plan.rates.ghost
                                                              : (f ? &s->plan.rates.psg : &s->plan.rates.gram)) = c.flops / (ms * 1e-3);
        }
        dpprof__tune_norms(0);
        dpprof_cuda_events_reset();
        if (rc != DPPROF_OK) rc = dpprof__fail(DPPROF_ERR_CUDA, "timing the flash norms for config.algo = auto: %s", dpprof_last_error());
    }
#endif
    dpprof__tfree(s, &gg);
    dpprof__tfree(s, &ga);
    dpprof__tfree(s, &nrm);
    dpprof__tfree(s, &dy);
    dpprof__tfree(s, &x);
    if (rc == DPPROF_OK) rc = dpprof__calibrate_clipgrad(s);
    if (rc == DPPROF_OK) rc = dpprof__calibrate_noise(s);
    return rc;
}

/* auto's clipgrad timing: whether any layer was measured (at = NULL), or whether layer *at was, as the first
   of its shape (the json lists each shape once) */
static int dpprof__cg_measured(const dpprof_session *s, const int *at) {
    int i, j;
    if (!s->plan.tensor || s->plan.rates_given) return 0; /* given rates: nothing was timed */
    for (i = at ? *at : 0; i < (at ? *at + 1 : s->model.n_params); i++) {
        if (isnan(s->plan.tensor[i].clipgrad_ms[0])) continue;
        if (!at) return 1;
        for (j = 0; j < i; j++)
            if (!isnan(s->plan.tensor[j].clipgrad_ms[0]) && s->model.params[j].rows == s->model.params[i].rows && s->model.params[j].cols == s->model.params[i].cols &&
                dpprof__param_T(s, j) == dpprof__param_T(s, i))
                return 0;
        return 1;
    }
    return 0;
}

/* the flops of a layer's flash gram norm per sample where share layers read its input (dpprof__input_share):
   the group's kernel makes the input's gram once, so each pays its share of it (assuming the group forms:
   the others on the gram flavour too, as layers of one shape are) */
static double dpprof__gram_flops(int T, int IC, int OC, int share) {
    const double all = dpprof_linear_sqnorm_gram_cost(1, T, IC, OC, 4).flops, x = dpprof_linear_sqnorm_gram_group_cost(1, T, IC, 0, 0, 4).flops;
    return all - (1.0 - 1.0 / share) * x;
}

/* auto's rate of a flash flavour (0 gram, 1 psg): its kernels', or cuBLAS's where that was measured faster */
static double dpprof__flash_rate(const dpprof_session *s, int psg) {
    return psg ? (s->plan.psg_on == DPPROF_NORMS_CUBLAS ? s->plan.rates.psg_cublas : s->plan.rates.psg)
               : (s->plan.gram_on == DPPROF_NORMS_CUBLAS ? s->plan.rates.gram_cublas : s->plan.rates.gram);
}

/* the cheaper flash flavour for a layer: auto's rates (measured on cuda, or given), flops elsewhere
   (dpprof_flash_choice's counts, with the input's gram shared); 1 = psg */

static int dpprof__flash_pick(const dpprof_session *s, int T, int IC, int OC, int share) {
    double g, p;
    if (s->cfg.algo != DPPROF_ALGO_AUTO || !(dpprof__flash_rate(s, 0) > 0 && dpprof__flash_rate(s, 1) > 0))
        return dpprof__gram_flops(T, IC, OC, share) <= dpprof_linear_sqnorm_psg_cost(1, T, IC, OC, 4).flops ? 0 : 1;
    g = dpprof__gram_flops(T, IC, OC, share) / dpprof__flash_rate(s, 0);
    p = dpprof_linear_sqnorm_psg_cost(1, T, IC, OC, s->elem).flops / dpprof__flash_rate(s, 1);
    return p < g;
}

/* auto with book-keeping: a linear layer's per-sample gradients (n x OC x IC reals) may be materialised, as
   persample does, where they take no more bytes than what book-keeping would keep for the layer instead.
   level 1: no more than its output gradient (n x T x OC elements): sizeof(real) IC <= elem T; level 2: or
   no more than its output gradient and its input together (n x T x (OC + IC) elements), which takes the
   narrow layers of any T as well (LoRA's A, r x IC: at r = 16, IC = 2048, T = 1024 its per-sample
   gradients are 1/32 of its input). the layer then needs no norm pass (its norm is the materialised
   gradients', its clipped sum a scaled sum of them, not a second GEMM over n T rows): fewer FLOPs. long
   sequences meet level 1 (bf16, T = 16384: every layer up to IC = 8192), short ones do not (T = 1024:
   IC <= 512). the bytes alone do not settle the peak (a per-sample gradient is born while tensors that
   die soon after are still alive, the logits' gradient at the head; an input several layers read is kept
   once), so by default an exact dry run decides (dpprof__auto_setup) */
static int dpprof__psg_fits(const dpprof_session *s, int T, int IC, int OC, int level) {
    if ((double)DPPROF__R * IC <= (double)s->elem * T) return 1;
    return level > 1 && (double)DPPROF__R * IC * OC <= (double)s->elem * T * ((double)IC + OC);
}

/* the peak of configuration c (every step of it) on the dry backend: what only measures (and needs a gpu or warm-up
   steps) is off, as a dry session refuses it and it changes no byte. with --op-times or --dram left on, the dry
   session refused them and auto quietly lost its choice (seen in the first H100 bench: auto at longctx ran as flash_bk) */
static int dpprof__session_create(const dpprof_config *cfg, dpprof_session **out, const int64_t *plan_limit);
static int dpprof__dry_run(dpprof_config *c, int64_t *peak, const int64_t *plan_limit) {
    dpprof_session *d = NULL;
    int rc;
    c->backend = DPPROF_BACKEND_DRY;
    c->op_times = 0;
    c->dram = DPPROF_DRAM_OFF;
    c->trace_ops = 0;
    c->no_timeline = 1;
    rc = dpprof__session_create(c, &d, plan_limit);
    if (rc == DPPROF_OK) rc = dpprof_session_run(d);
    if (rc == DPPROF_OK) *peak = d->prof.peak_bytes;
    dpprof_session_destroy(d);
    return rc;
}

/* the peak of one step of this configuration on the dry backend with algo and materialisation mat;
   DPPROF_OK or the probe's error (the caller keeps its default then) */
static int dpprof__dry_peak(const dpprof_session *s, int algo, int mat, int ghost, int64_t *peak) {
    dpprof_config probe = s->cfg;
    probe.algo = (dpprof_algo)algo;
    probe.backend = DPPROF_BACKEND_DRY;
    probe.memory_limit = 0;
    probe.auto_materialise = (dpprof_materialise)mat;
    probe.auto_ghost = (dpprof_switch)ghost;
    probe.steps = 1;
    probe.warmup = 0;
    probe.data_path = NULL;
    probe.fused_clipgrad = DPPROF_SWITCH_OFF;                                                       /* neither changes the bytes; forced, the probe allocates no timing buffers */
    probe.batched_clipgrad = dpprof__cg_batched_possible(s) ? DPPROF_SWITCH_ON : DPPROF_SWITCH_OFF; /* the norms of dy and x */
    probe.fused_noise = DPPROF_SWITCH_OFF;
    /* poisson over ranks: the probe takes the fixed batch (physical batches of b, the most a poisson one holds), so
       that every rank decides from the same figures whatever its share (a secure key is a new one in each probe) */
    if (probe.ranks > 1) probe.poisson = 0;
    return dpprof__dry_run(&probe, peak, NULL);
}

/* the peak --backend dry reports for this configuration: every step of it */
static int dpprof__dry_plan(const dpprof_session *s, int64_t *peak) {
    dpprof_config plan = s->cfg;
    return dpprof__dry_run(&plan, peak, NULL);
}

DPPROF_API int dpprof_session_peak_without_limit(const dpprof_session *s, int64_t *peak) {
    dpprof_config plan;
    int64_t lim;
    if (!s || !peak) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_peak_without_limit: NULL %s", s ? "peak" : "session");
    plan = s->cfg;
    lim = s->plan_limit_set ? s->plan_limit : s->cfg.memory_limit;
    plan.memory_limit = 0;
    return dpprof__dry_run(&plan, peak, &lim);
}

DPPROF_API void dpprof_session_memory_truth(const dpprof_session *s, dpprof_memory_truth *m) {
    memset(m, 0, sizeof *m);
    m->accountant_peak = s->prof.peak_bytes;
    m->dry_peak = s->backend == DPPROF_BACKEND_DRY ? s->prof.peak_bytes : s->gpu.dry_peak;
    m->driver_peak = m->driver_before_session = m->nccl_device = -1;
    if (s->backend != DPPROF_BACKEND_CUDA) return;
    if (s->dist.nccl) m->nccl_device = s->dist.nccl_bytes;
    m->driver_peak = s->gpu.drv_peak;
    m->driver_before_session = s->gpu.drv_base;
    m->cublas_workspace = (int64_t)DPPROF_CUBLAS_WORKSPACE_BYTES;
    m->accountant_at_driver_peak = s->gpu.drv_live;
    m->pool_rounding = s->gpu.drv_pool_used - s->gpu.drv_live;
    m->pool_unused = s->gpu.drv_pool_res - s->gpu.drv_pool_base - s->gpu.drv_pool_used;
    m->remainder = m->driver_peak - m->accountant_at_driver_peak - m->pool_rounding - m->pool_unused;
}

/* auto: book-keeping unless --memory-limit cannot hold flash_bk's peak (then two passes), and with
   book-keeping the per-sample gradients materialised where they fit (dpprof__psg_fits) unless that
   raises the peak above flash_bk's. each question is one exact dry step (milliseconds). returns the dry
   peak of what it chose where it measured one (dpprof__auto_ghost compares against it), else -1 */
static int64_t dpprof__auto_setup(dpprof_session *s) {
    int64_t bk_peak = -1, mat_peak = -1;
    int i, fits1 = 0, fits2 = 0;
    const int64_t lim = s->plan_limit_set ? s->plan_limit : s->cfg.memory_limit;
    if (lim > 0 && dpprof__dry_peak(s, DPPROF_ALGO_FLASH_BK, -1, -1, &bk_peak) == DPPROF_OK && bk_peak > lim) {
        /* book-keeping holds every layer's output gradient: if that does not fit the budget, the
           two-pass flash algorithm does the same arithmetic twice in less memory */
        s->plan.bookkeeping = 0;
        s->plan.two_pass = 1;
        return -1;
    }
    if (s->cfg.auto_materialise == DPPROF_MATERIALISE_NEVER) return bk_peak;
    for (i = 0; i < s->model.n_params; i++) {
        const dpprof_param *p = &s->model.params[i];
        const int cand = p->trainable && p->rows > 1 && i != s->model.p_emb;
        fits1 += cand && dpprof__psg_fits(s, dpprof__param_T(s, i), p->cols, p->rows, 1);
        fits2 += cand && dpprof__psg_fits(s, dpprof__param_T(s, i), p->cols, p->rows, 2);
    }
    if (!fits2) return bk_peak;
    if (s->cfg.auto_materialise != DPPROF_MATERIALISE_MEASURED) { /* both rules: level 2, the width rule: level 1 (the probes), unmeasured */
        s->plan.materialise = s->cfg.auto_materialise == DPPROF_MATERIALISE_BOTH_RULES ? 2 : (fits1 ? 1 : 0);
        return -1;
    }
    if (bk_peak < 0 && dpprof__dry_peak(s, DPPROF_ALGO_FLASH_BK, -1, -1, &bk_peak) != DPPROF_OK) return -1;
    /* level 2, and where it raises the peak and takes more layers than level 1, level 1 alone */
    if (dpprof__dry_peak(s, DPPROF_ALGO_AUTO, 1, -1, &mat_peak) == DPPROF_OK && mat_peak <= bk_peak) {
        s->plan.materialise = 2;
        return mat_peak;
    }
    if (fits1 && fits1 < fits2 && dpprof__dry_peak(s, DPPROF_ALGO_AUTO, 2, -1, &mat_peak) == DPPROF_OK && mat_peak <= bk_peak) {
        s->plan.materialise = 1;
        return mat_peak;
    }
    return bk_peak;
}

/* auto with book-keeping: may ghost's gram matrices replace flash? they are n T x T fp32 pairs, one layer
   at a time: at short T (1024) they are smaller than what the step holds anyway, and cuBLAS makes them
   for all n samples in one batched GEMM, where a flash block is one sample's (measured on an H100 at the
   1b trainer shape, T = 1024, B = 8: ghost_bk's norms took 30 ms a step, flash_bk's 90 ms, the same peak).
   an exact dry step with every candidate layer on ghost must show no higher peak than without; which
   layers take it is for the measured rates (dpprof__ghost_pick). base: the peak without ghost where
   dpprof__auto_setup measured it (flash_bk's, or with the materialised layers), else -1 */
static void dpprof__auto_ghost(dpprof_session *s, int64_t base) {
    int64_t ghost = -1;
    const int mat = s->plan.materialise == 2 ? DPPROF_MATERIALISE_BOTH_RULES : (s->plan.materialise == 1 ? DPPROF_MATERIALISE_WIDTH_RULE : DPPROF_MATERIALISE_NEVER); /* the probe's auto_materialise for this level */
    if (s->cfg.auto_ghost != DPPROF_SWITCH_AUTO) {
        s->plan.ghost = s->cfg.auto_ghost == DPPROF_SWITCH_ON;
        return;
    }
    if ((base >= 0 || dpprof__dry_peak(s, DPPROF_ALGO_AUTO, mat, -1, &base) == DPPROF_OK) && dpprof__dry_peak(s, DPPROF_ALGO_AUTO, mat, 1, &ghost) == DPPROF_OK)
        s->plan.ghost = ghost <= base;
}

/* a layer on ghost's grams (auto): every candidate when forced (auto_ghost = 1), else on cuda where the
   measured time of the grams and their dot is below both flash flavours'; off the gpu never (flash needs
   no more flops, and the dry and cpu reports stay those of flash). share: the layers that read the
   layer's input (q, k, v: 3; gate, up: 2; else 1), whose ghost makes the input's gram once
   (dpprof__proj_bwd), so each is charged its share of it */
static int dpprof__ghost_pick(const dpprof_session *s, int T, int IC, int OC, int share) {
    double g, f, p;
    if (s->cfg.auto_ghost == DPPROF_SWITCH_ON) return 1;
    if (!(s->plan.rates.ghost > 0 && dpprof__flash_rate(s, 0) > 0 && dpprof__flash_rate(s, 1) > 0)) return 0; /* measured on cuda, or given */
    g = (dpprof_gram_cost(1, T, IC, s->elem).flops / share + dpprof_gram_cost(1, T, OC, s->elem).flops + dpprof_gram_dot_cost(1, T, s->elem).flops) / s->plan.rates.ghost;
    f = dpprof__gram_flops(T, IC, OC, share) / dpprof__flash_rate(s, 0);
    p = dpprof_linear_sqnorm_psg_cost(1, T, IC, OC, s->elem).flops / dpprof__flash_rate(s, 1);
    return g < f && g < p;
}

/* the layers that read parameter i's input in the backward's ghost group: 3 for a decoder layer's q, k, v,
   2 for gate and up, 1 for every other tensor (the adapters: a frozen base layer between them breaks it) */
static int dpprof__input_share(const dpprof_session *s, int i) {
    const int j = (i - 1) % DPPROF__P_PER_LAYER;
    if (i < 1 || i > s->sh.L * DPPROF__P_PER_LAYER || s->cfg.lora_rank > 0) return 1;
    return j == DPPROF__P_Q || j == DPPROF__P_K || j == DPPROF__P_V ? 3 : (j == DPPROF__P_GATE || j == DPPROF__P_UP ? 2 : 1);
}

/* how tensor i's per-sample norm is computed; as_head: the tied embedding's matrix in its use as the lm head (a
   linear layer; its per-sample gradients are materialised by persample alone, never by auto) */
static int dpprof__method_of(const dpprof_session *s, int i, int as_head) {
    const dpprof_param *p = &s->model.params[i];
    const int algo = s->cfg.algo, T = dpprof__param_T(s, i);
    if (!p->trainable) return DPPROF__M_FROZEN;
    if (!s->dps.dp) return DPPROF__M_SUMMED;
    if (p->rows == 1) return DPPROF__M_VECTOR;
    if (algo == DPPROF_ALGO_PERSAMPLE) return DPPROF__M_PSG;
    if (i == s->model.p_emb && !as_head) return DPPROF__M_TOKEN_PAIRS;
    if (algo == DPPROF_ALGO_GHOST || algo == DPPROF_ALGO_GHOST_BK) return DPPROF__M_GRAM;
    if (!as_head && s->plan.materialise && dpprof__psg_fits(s, T, p->cols, p->rows, s->plan.materialise)) return DPPROF__M_PSG;
    if (s->plan.ghost && dpprof__ghost_pick(s, T, p->cols, p->rows, dpprof__input_share(s, i))) return DPPROF__M_GRAM;
    return dpprof__flash_pick(s, T, p->cols, p->rows, dpprof__input_share(s, i)) ? DPPROF__M_FLASH_PSG : DPPROF__M_FLASH_GRAM;
}

/* the algorithm's shape and each tensor's norm method; host tables for the dp state */
/* n bytes of the operating system's entropy: getrandom on linux, /dev/urandom elsewhere */
static int dpprof__os_entropy(void *buf, size_t n) {
#if defined(__linux__)
    size_t got = 0;
    while (got < n) {
        const ssize_t r = getrandom((char *)buf + got, n - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return dpprof__fail(DPPROF_ERR_IO, "getrandom: %s", strerror(errno));
        got += (size_t)r;
    }
    return DPPROF_OK;
#else
    FILE *f = fopen("/dev/urandom", "rb");
    const size_t got = f ? fread(buf, 1, n, f) : 0;
    if (f) fclose(f);
    return got == n ? DPPROF_OK : dpprof__fail(DPPROF_ERR_IO, "cannot read /dev/urandom");
#endif
}

/* the noise's key: cfg.seed (philox, reproducible), or under secure_noise 256 bits of the operating system's entropy
   (chacha20), the same on every rank (rank 0's, broadcast), kept in the session only */
static int dpprof__noise_key(dpprof_session *s) {
    s->dps.noise_key = dpprof_noise_seed(s->cfg.seed);
    s->dps.noise_stream_bits = 0;
    if (!s->cfg.secure_noise) return DPPROF_OK;
    s->dps.noise_stream_bits = DPPROF_NOISE_SECURE;
    if (s->dist.rank == 0) {
        const int rc = dpprof__os_entropy(s->dps.noise_key.w, sizeof s->dps.noise_key.w);
        if (rc != DPPROF_OK) return rc;
    }
#ifdef DPPROF_MPI
    if (s->dist.n > 1 && s->backend != DPPROF_BACKEND_DRY) MPI_Bcast(s->dps.noise_key.w, 8, MPI_UINT32_T, 0, MPI_COMM_WORLD);
#endif
    return DPPROF_OK;
}

/* auto's choices from its rates (measured on cuda at session start, or given): where each flash flavour's norms run,
   each bf16 book-keeping layer's clipped-gradient kernel, the noise's pass; each the candidate the rates make
   fastest. the norm methods follow (dpprof__method_of: flash flavour and ghost from the same rates) */
static void dpprof__plan_choose(dpprof_session *s) {
    const dpprof_rates *r = &s->plan.rates;
    int i, f;
    s->plan.gram_on = r->gram_cublas > r->gram ? DPPROF_NORMS_CUBLAS : DPPROF_NORMS_KERNELS;
    s->plan.psg_on = r->psg_cublas > r->psg ? DPPROF_NORMS_CUBLAS : DPPROF_NORMS_KERNELS;
    for (i = 0; i < s->model.n_params; i++) {
        dpprof_plan_tensor *t = &s->plan.tensor[i];
        if (isnan(t->clipgrad_ms[0]) && isnan(t->clipgrad_ms[1])) continue; /* not measured: the configuration's kernel */
        t->clipgrad = DPPROF_CLIPGRAD_CUBLAS;
        for (f = 1; f < 2 + s->plan.batched; f++)
            if (t->clipgrad_ms[f] < t->clipgrad_ms[t->clipgrad] || isnan(t->clipgrad_ms[t->clipgrad])) t->clipgrad = (dpprof_clipgrad)f;
    }
    if (s->cfg.fused_noise == DPPROF_SWITCH_AUTO && r->noise_n > 0 && !isnan(r->noise_ms[0]) && !isnan(r->noise_ms[1])) s->plan.fused_noise = r->noise_ms[1] < r->noise_ms[0];
}

static int dpprof__setup_dp(dpprof_session *s) {
    const int algo = s->cfg.algo;
    int i, max_batch = s->cfg.poisson ? 4 * s->cfg.batch + 64 : s->cfg.batch;
    if (dpprof__noise_key(s) != DPPROF_OK) return DPPROF_ERR_IO;
    s->dps.dp = algo != DPPROF_ALGO_VANILLA;
    s->plan.two_pass = algo == DPPROF_ALGO_GHOST || algo == DPPROF_ALGO_FLASH;
    s->plan.bookkeeping = algo == DPPROF_ALGO_GHOST_BK || algo == DPPROF_ALGO_FLASH_BK || algo == DPPROF_ALGO_AUTO;
    s->plan.noise_std = s->cfg.sigma * s->cfg.max_grad_norm;
    s->plan.rates_given = algo == DPPROF_ALGO_AUTO && s->cfg.rates != NULL;
    s->plan.rates.noise_ms[0] = s->plan.rates.noise_ms[1] = NAN;
    if (algo == DPPROF_ALGO_AUTO) {
        const int64_t base = dpprof__auto_setup(s);
        if (s->plan.bookkeeping) dpprof__auto_ghost(s, base);
    }
    s->plan.tensor = (dpprof_plan_tensor *)DPPROF_MALLOC(sizeof(dpprof_plan_tensor) * (size_t)s->model.n_params);
    s->plan.batched = dpprof__cg_batched_possible(s);
    s->dps.eps_ratio_max = NAN;
    if (s->plan.tensor)
        for (i = 0; i < s->model.n_params; i++) {
            s->plan.tensor[i].clipgrad = s->cfg.fused_clipgrad == DPPROF_SWITCH_ON ? DPPROF_CLIPGRAD_FUSED : DPPROF_CLIPGRAD_CUBLAS;
            if (s->plan.batched && s->cfg.batched_clipgrad == DPPROF_SWITCH_ON && i != s->model.p_emb) s->plan.tensor[i].clipgrad = DPPROF_CLIPGRAD_BATCHED;
            s->plan.tensor[i].clipgrad_ms[0] = s->plan.tensor[i].clipgrad_ms[1] = s->plan.tensor[i].clipgrad_ms[2] = NAN;
        }
    s->plan.fused_noise = s->cfg.fused_noise == DPPROF_SWITCH_ON;
    s->dps.psg = (dpprof_tensor *)DPPROF_MALLOC(sizeof(dpprof_tensor) * (size_t)s->model.n_params);
    s->dps.cap_kept = 3 * s->model.n_params + 16;
    s->dps.kept = (dpprof_tensor *)DPPROF_MALLOC(sizeof(dpprof_tensor) * (size_t)s->dps.cap_kept);
    s->dps.kept_from = (const dpprof_tensor **)DPPROF_MALLOC(sizeof(dpprof_tensor *) * (size_t)s->dps.cap_kept);
    s->dps.cache = (dpprof__cache_ent *)DPPROF_MALLOC(sizeof(dpprof__cache_ent) * (size_t)s->dps.cap_kept);
    s->dps.batch_ids = (int *)DPPROF_MALLOC(sizeof(int) * (size_t)max_batch);
    s->dps.last_norms = (double *)DPPROF_MALLOC(sizeof(double) * ((size_t)max_batch + 1));
    s->dps.last_clip = (double *)DPPROF_MALLOC(sizeof(double) * ((size_t)max_batch + 1));
    if (s->cfg.poisson) s->dps.rank_n = (int *)DPPROF_MALLOC(sizeof(int) * (size_t)s->dist.n);
    if (s->backend == DPPROF_BACKEND_CUDA) { /* what the norms phase moves between host and device */
        s->gpu.h_norm2 = (double *)DPPROF_MALLOC(sizeof(double) * (size_t)s->model.n_params * (size_t)s->cfg.physical_batch);
        s->gpu.h_clip = (double *)DPPROF_MALLOC(sizeof(double) * (size_t)s->model.n_params * (size_t)s->cfg.physical_batch);
        if (s->plan.batched) s->dps.h_rown = (double *)DPPROF_MALLOC(sizeof(double) * (2 * (size_t)s->model.n_params + 1) * (size_t)s->cfg.physical_batch);
        if (!s->gpu.h_norm2 || !s->gpu.h_clip || (s->plan.batched && !s->dps.h_rown)) return dpprof__fail(DPPROF_ERR_OOM, "cannot allocate the host copies of the norms");
    }
    if (!s->plan.tensor || !s->dps.psg || !s->dps.kept || !s->dps.kept_from || !s->dps.cache || !s->dps.batch_ids || !s->dps.last_norms || !s->dps.last_clip ||
        (s->cfg.poisson && !s->dps.rank_n))
        return dpprof__fail(DPPROF_ERR_OOM, "cannot allocate the dp tables");
    /* the privacy engine's setup, a phase of every dp run (auto measures its kernels in it) */
    if (s->dps.dp) DPPROF__TRY(dpprof_phase_begin(&s->prof, DPPROF_PHASE_PRIVACY_SETUP, -1));
    if (algo == DPPROF_ALGO_AUTO) {
        DPPROF__TRY(dpprof__calibrate(s));
        dpprof__plan_choose(s);
    }
    memset(s->dps.psg, 0, sizeof(dpprof_tensor) * (size_t)s->model.n_params);
    memset(s->dps.kept, 0, sizeof(dpprof_tensor) * (size_t)s->dps.cap_kept);
    for (i = 0; i <= max_batch; i++) s->dps.last_norms[i] = s->dps.last_clip[i] = NAN;
    for (i = 0; i < s->model.n_params; i++) {
        s->model.n_trainable += s->model.params[i].trainable;
        s->plan.tensor[i].method = dpprof__method_of(s, i, 0);
    }
    s->plan.head_method = s->sh.tied ? dpprof__method_of(s, s->model.p_emb, 1) : -1;
    if (s->plan.batched) { /* only a linear layer that keeps its dy and x (book-keeping) can take the batched GEMM */
        int any = 0;
        for (i = 0; i < s->model.n_params; i++)
            any |= i != s->model.p_emb && (s->plan.tensor[i].method == DPPROF__M_GRAM || s->plan.tensor[i].method == DPPROF__M_FLASH_GRAM || s->plan.tensor[i].method == DPPROF__M_FLASH_PSG);
        s->plan.batched = any;
    }
    if (s->dps.dp) dpprof__phase_end(s);
    return DPPROF_OK;
}

DPPROF_API const char *dpprof_session_param_method(const dpprof_session *s, int i) {
    /* the tied embedding's matrix: the lm head's method, the embedding's and the cross term (persample
       materialises the sum of both uses' per-sample gradients: its own name) */
    static const char *const tied[] = {"", "", "", "gram T x T materialised (lm head) + token-pair gram (embedding) + their cross term",
                                       "flash: tiled gram (lm head) + token-pair gram (embedding) + their cross term",
                                       "flash: tiled per-sample gradient (lm head) + token-pair gram (embedding) + their cross term", "", ""};
    if (s && s->sh.tied && i == s->model.p_emb && s->plan.tensor && s->plan.tensor[i].method == DPPROF__M_TOKEN_PAIRS && s->plan.head_method >= 0 && *tied[s->plan.head_method])
        return tied[s->plan.head_method];
    if (s && s->fw.t && i >= 0 && i < s->model.n_params) { /* a framework's loop: PyTorch's non-private; Opacus's hooks
                                                             materialise; its ghost clipping: the linear layers' T x T Grams,
                                                             the embedding's (sample, token) pairs, the norms' per-sample gradients */
        const int ghost = !s->fw.ghost ? 2 : (i == s->model.p_emb ? 8 : (s->model.params[i].module == DPPROF_MOD_NORM ? 2 : 3));
        return dpprof__method_names[!s->model.params[i].trainable ? 1 : (s->fw.opacus ? ghost : 0)];
    }
    return s && i >= 0 && i < s->model.n_params && s->plan.tensor ? dpprof__method_names[s->plan.tensor[i].method] : "?";
}

/* how tensor i's clipped sum is made, and (bf16 book-keeping) the kernel of its clipped weight gradient on cuda */
static const char *dpprof__clipped_sum_name(const dpprof_session *s, int i) {
    const int m = s->plan.tensor ? s->plan.tensor[i].method : DPPROF__M_FROZEN;
    if (s->cfg.algo == DPPROF_ALGO_VANILLA || !s->model.params[i].trainable || !s->plan.tensor) return "none"; /* no plan: the session stopped before it */
    if (s->plan.two_pass) return "second backward";
    return m == DPPROF__M_PSG || m == DPPROF__M_VECTOR ? "sum of materialised" : "book-keeping";
}
static const char *dpprof__clipgrad_name(const dpprof_session *s, int i) {
    const int bkl = !strcmp(dpprof__clipped_sum_name(s, i), "book-keeping");
    if (!bkl || s->cfg.dtype != DPPROF_DTYPE_BF16 || i == s->model.p_emb) return "none"; /* on every backend: the cuda run's kernel */
    return dpprof__cg_name(s->plan.tensor[i].clipgrad);
}
/* how tensor i's weights are stored: fp32 (the real type), bf16 alone (frozen), or an fp32 master with a bf16 copy */
static const char *dpprof__stored_name(const dpprof_session *s, int i) {
    const dpprof_param *p = &s->model.params[i];
    if (p->bf16_only) return "bf16";
    if (p->wl.n) return sizeof(dpprof_real) == 8 ? "fp64+bf16" : "fp32+bf16";
    return sizeof(dpprof_real) == 8 ? "fp64" : "fp32";
}
/* what a step keeps of tensor i for its clipped sum */
static const char *dpprof__keeps_name(const dpprof_session *s, int i) {
    const char *cs = dpprof__clipped_sum_name(s, i);
    if (!strcmp(cs, "none")) return "-";
    if (!strcmp(cs, "second backward")) return "activations (2nd pass)";
    if (!strcmp(cs, "sum of materialised")) return s->plan.tensor[i].method == DPPROF__M_PSG ? "per-sample grads" : "per-sample vector";
    return i == s->model.p_emb && !s->sh.tied ? "tokens, dy" : "x, dy";
}

DPPROF_API const dpprof_plan *dpprof_session_plan(const dpprof_session *s) { return s ? &s->plan : NULL; }

DPPROF_API int dpprof_session_write_plan(const dpprof_session *s, FILE *f) {
    const dpprof_config *c = &s->cfg;
    const int auto_rated = c->algo == DPPROF_ALGO_AUTO && (s->backend == DPPROF_BACKEND_CUDA || s->plan.rates_given);
    int i, w = 6;
    if (s->fw.t) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_write_plan: config.framework = %s runs PyTorch's loop, not a dpprof plan", dpprof_framework_name(c->framework));
    if (!s->plan.tensor) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_write_plan: the session stopped before its plan was made");
    for (i = 0; i < s->model.n_params; i++)
        if ((int)strlen(s->model.params[i].name) > w) w = (int)strlen(s->model.params[i].name);
    fprintf(f, "plan: %s, %s, %s, %s on %s, batch %d in physical batches of %d, checkpoint %s, %d rank%s, zero %d\n", c->model_name ? c->model_name : c->preset,
            c->task == DPPROF_TASK_LM ? "lm" : "cls", dpprof_algo_name(c->algo), c->dtype == DPPROF_DTYPE_BF16 ? "bf16" : "fp32", dpprof_backend_name(s->backend), c->batch,
            c->physical_batch, dpprof_checkpoint_name(c->checkpoint), s->dist.n, s->dist.n == 1 ? "" : "s", s->dist.zero);
    if (c->algo != DPPROF_ALGO_VANILLA) {
        fprintf(f, "  clipped sum: %s; clipping %s at C = %g; noise sigma %g (std %g) %s\n",
                s->plan.two_pass ? "a second backward" : (s->plan.bookkeeping ? "book-keeping" : "the materialised per-sample gradients"), c->per_layer_clipping ? "per layer" : "flat",
                c->max_grad_norm, c->sigma, s->plan.noise_std, s->plan.fused_noise ? "in the optimizer's pass" : "on a pass of its own");
        if (c->algo == DPPROF_ALGO_AUTO)
            fprintf(f, "  auto: %s; per-sample gradients materialised %s; ghost's grams %s; flash norms on %s (gram), %s (psg)\n",
                    s->plan.rates_given ? "planned from given rates" : (s->backend == DPPROF_BACKEND_CUDA ? "planned from rates measured at session start" : "planned by flops (no rates)"),
                    s->plan.materialise == 2 ? "where they fit (level 2)" : (s->plan.materialise == 1 ? "where they fit (level 1)" : "nowhere"), s->plan.ghost ? "allowed" : "not used",
                    auto_rated ? dpprof__norms_name(s->plan.gram_on) : "kernels", auto_rated ? dpprof__norms_name(s->plan.psg_on) : "kernels");
    }
    fprintf(f, "  %-*s  %-13s  %-6s  %-9s  %-19s  %-22s  %-8s  %s\n", w, "tensor", "shape", "trains", "stored", "clipped sum", "keeps", "clipgrad", "norm");
    for (i = 0; i < s->model.n_params; i++) {
        const dpprof_param *p = &s->model.params[i];
        char shape[32];
        snprintf(shape, sizeof shape, "%d x %d", p->rows, p->cols);
        fprintf(f, "  %-*s  %-13s  %-6s  %-9s  %-19s  %-22s  %-8s  %s\n", w, p->name, shape, p->trainable ? "yes" : "no", dpprof__stored_name(s, i), dpprof__clipped_sum_name(s, i),
                dpprof__keeps_name(s, i), dpprof__clipgrad_name(s, i), dpprof_session_param_method(s, i));
    }
    return ferror(f) ? dpprof__fail(DPPROF_ERR_IO, "writing the plan failed") : DPPROF_OK;
}

/* ---- 5.10 session lifecycle --------------------------------------------------------------------------------
   dpprof_session_create resolves the configuration, opens the backend (the GPU, the MPI job, NCCL), builds the
   model, loads the data, sets up DP (auto's choices) and records the setup phases; any failure frees
   everything. Then the accessors: the configuration, the shape, the profiler, the parameters and their values,
   the memory three ways. */

#ifdef DPPROF_MPI
/* real ranks on the cuda backend: the NCCL communicator of the MPI job's ranks (rank 0's id broadcast); every
   rank joins, or every rank fails */
static int dpprof__nccl_open(dpprof_session *s) {
    unsigned char id[DPPROF_NCCL_ID_BYTES + 1];
    int rc, bad;
    memset(id, 0, sizeof id);
    if (!s->dist.rank && dpprof_nccl_id(id, DPPROF_NCCL_ID_BYTES) != DPPROF_OK) {
        rc = dpprof__fail(DPPROF_ERR_CUDA, "config.backend = cuda, %d ranks: %s", s->dist.n, dpprof_last_error());
        id[DPPROF_NCCL_ID_BYTES] = 1;
    }
    MPI_Bcast(id, (int)sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (id[DPPROF_NCCL_ID_BYTES])
        return s->dist.rank ? dpprof__fail(DPPROF_ERR_CUDA, "config.backend = cuda, %d ranks: rank 0 could not make the NCCL communicator's id", s->dist.n) : DPPROF_ERR_CUDA;
    rc = dpprof_nccl_init(id, s->dist.n, s->dist.rank);
    if (rc != DPPROF_OK) rc = dpprof__fail(DPPROF_ERR_CUDA, "config.backend = cuda, %d ranks: %s", s->dist.n, dpprof_last_error());
    bad = rc != DPPROF_OK;
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rc == DPPROF_OK) s->dist.nccl = 1;
    if (rc == DPPROF_OK && dpprof_nccl_device_bytes(&s->dist.nccl_bytes) != DPPROF_OK) s->dist.nccl_bytes = -1;
    if (bad && rc == DPPROF_OK) rc = dpprof__fail(DPPROF_ERR_CUDA, "config.backend = cuda, %d ranks: another rank could not join the NCCL communicator", s->dist.n);
    return rc;
}
#endif

DPPROF_API int dpprof_session_create(const dpprof_config *cfg, dpprof_session **out) { return dpprof__session_create(cfg, out, NULL); }

/* plan_limit non-NULL: auto plans for that memory limit (its two passes where flash_bk's peak is over it) whatever
   config.memory_limit enforces */
static int dpprof__session_create(const dpprof_config *cfg, dpprof_session **out, const int64_t *plan_limit) {
    dpprof_session *s;
    int rc, count = 0, dev = 0;
    if (!out) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_create: NULL out");
    *out = NULL;
    s = (dpprof_session *)DPPROF_MALLOC(sizeof *s);
    if (!s) return dpprof__fail(DPPROF_ERR_OOM, "cannot allocate a session");
    memset(s, 0, sizeof *s);
    s->gpu.dry_peak = -1;
    if (plan_limit) s->plan_limit = *plan_limit, s->plan_limit_set = 1;
    rc = dpprof_config_resolve(cfg, &s->cfg, &s->sh);
    if (rc != DPPROF_OK) goto fail;
    s->backend = s->cfg.backend;
    s->dist.n = s->cfg.ranks;
    s->dist.zero = s->cfg.ranks > 1 ? s->cfg.zero : 0; /* one rank: every stage is plain training */
    if (s->backend == DPPROF_BACKEND_AUTO)             /* cuda when this build has it and a gpu is visible, else cpu */
        s->backend = DPPROF__CUDA && dpprof_cuda_device_count(&count) == DPPROF_OK && count > 0 ? DPPROF_BACKEND_CUDA : DPPROF_BACKEND_CPU;
    /* the cpu reference computes in dpprof_real only: a bf16 run there would be an fp32 run under another name */
    if (s->cfg.dtype == DPPROF_DTYPE_BF16 && s->backend == DPPROF_BACKEND_CPU) {
        rc = dpprof__fail(DPPROF_ERR_UNSUPPORTED, DPPROF__BF16_CPU_MSG);
        goto fail;
    }
    if (s->cfg.ranks > 1 && s->backend != DPPROF_BACKEND_DRY) { /* one process a rank, MPI_COMM_WORLD (cuda: and a GPU a process) */
#ifdef DPPROF_MPI
        int init = 0, world = 1;
        long long lim;
        MPI_Initialized(&init);
        if (!init) {
            rc = dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.ranks = %d on the %s backend: launch the run as an MPI job of %d processes (mpirun -np %d ...)", s->cfg.ranks,
                              dpprof_backend_name(s->backend), s->cfg.ranks, s->cfg.ranks);
            goto fail;
        }
        MPI_Comm_size(MPI_COMM_WORLD, &world);
        if (world != s->cfg.ranks) {
            rc = dpprof__fail(DPPROF_ERR_INVALID, "config.ranks = %d, but the MPI job has %d processes: give mpirun -np %d, or config.ranks = %d", s->cfg.ranks, world, s->cfg.ranks, world);
            goto fail;
        }
        MPI_Comm_rank(MPI_COMM_WORLD, &s->dist.rank);
        {
            MPI_Comm node; /* the ranks of this machine: rank `local` among them takes GPU local % GPUs */
            if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, s->dist.rank, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
                MPI_Comm_rank(node, &s->dist.local);
                MPI_Comm_free(&node);
            }
        }
        s->dist.real = 1;
        /* the ranks fail together or not at all: one memory limit for all (the smallest) */
        lim = s->cfg.memory_limit > 0 ? (long long)s->cfg.memory_limit : (long long)INT64_MAX;
        MPI_Allreduce(MPI_IN_PLACE, &lim, 1, MPI_LONG_LONG, MPI_MIN, MPI_COMM_WORLD);
        s->cfg.memory_limit = lim == (long long)INT64_MAX ? 0 : (int64_t)lim;
        /* poisson from zero 2 on: a rank the limit stopped inside a physical batch would leave the others waiting in
           that batch's collective, so the limit is held before any step against the fixed batch's dry peak (physical
           batches of b, the most a pass of any rank's share holds): the same figures on every rank, which fail together */
        if (s->cfg.poisson && s->dist.zero >= 2 && s->cfg.memory_limit > 0) {
            dpprof_config fixed = s->cfg;
            int64_t pk = 0;
            fixed.poisson = 0;
            fixed.memory_limit = 0;
            fixed.steps = 1;
            fixed.warmup = 0;
            rc = dpprof__dry_run(&fixed, &pk, NULL);
            if (rc == DPPROF_OK && pk > s->cfg.memory_limit)
                rc = dpprof__fail(DPPROF_ERR_OOM, "out of memory: with config.poisson at config.zero = %d a rank's physical batch of %d needs %lld bytes, over the limit of %lld bytes (every rank stops before the first step)",
                                  s->dist.zero, s->cfg.physical_batch, (long long)pk, (long long)s->cfg.memory_limit);
            if (rc != DPPROF_OK) goto fail;
        }
#endif
    }
    if (s->backend == DPPROF_BACKEND_CUDA) {
        rc = dpprof_cuda_device_count(&count);
        if (rc != DPPROF_OK && rc != DPPROF_ERR_NO_CUDA) rc = dpprof__fail(rc, "config.backend = cuda: %s", dpprof_last_error());
        if (rc == DPPROF_OK && count == 0) rc = dpprof__fail(DPPROF_ERR_NO_DEVICE, "config.backend = cuda: no GPU is visible on this machine");
        if (rc == DPPROF_OK && !DPPROF__CUDA) rc = dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.backend = cuda: this build computes in double (DPPROF_REF_DOUBLE) and has no gpu path");
        if (rc == DPPROF_OK && s->dist.real && !dpprof_nccl_available())
            rc = dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.ranks = %d on the cuda backend: this build has no NCCL (nccl.h was not found when dpprof_kernels.cu was compiled); config.backend = cpu runs the ranks over MPI",
                              s->cfg.ranks);
        if (rc == DPPROF_OK) dev = s->dist.local % count; /* one rank: GPU 0 */
        if (rc == DPPROF_OK && dpprof_cuda_device_info(dev, &s->gpu.dev) != DPPROF_OK) rc = dpprof__fail(DPPROF_ERR_CUDA, "config.backend = cuda: %s", dpprof_last_error());
        if (rc == DPPROF_OK && dpprof_cuda_init(dev) != DPPROF_OK) rc = dpprof__fail(DPPROF_ERR_CUDA, "config.backend = cuda: %s", dpprof_last_error());
        if (rc == DPPROF_OK && s->cfg.wgmma == DPPROF_SWITCH_ON && !(s->gpu.dev.cc_major == 9 && s->gpu.dev.cc_minor == 0))
            rc = dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.wgmma = on: Hopper's warpgroup mma runs on compute capability 9.0 only (H100, H200); this GPU, %s, is %d.%d",
                              s->gpu.dev.name, s->gpu.dev.cc_major, s->gpu.dev.cc_minor);
#ifdef DPPROF_MPI
        if (s->dist.real) { /* every rank has its GPU, or none goes on (the communicator would wait for it) */
            int bad = rc != DPPROF_OK;
            MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
            if (bad && rc == DPPROF_OK) rc = dpprof__fail(DPPROF_ERR_CUDA, "config.backend = cuda: another rank of the MPI job could not open its GPU");
            if (rc == DPPROF_OK) rc = dpprof__nccl_open(s);
        }
#endif
        if (rc != DPPROF_OK) goto fail;
        dpprof__bind(s);
        {
            size_t used = 0, pu = 0, pr = 0; /* what the driver holds before this session: the pool trimmed first */
            if (dpprof_cuda_trim() == DPPROF_OK && dpprof_cuda_mem_used(&used) == DPPROF_OK) s->gpu.drv_base = (int64_t)used;
            if (dpprof_cuda_pool_usage(&pu, &pr) == DPPROF_OK) s->gpu.drv_pool_base = (int64_t)pr;
        }
        s->gpu.h_tok = (int *)DPPROF_MALLOC(sizeof(int) * (size_t)s->cfg.physical_batch * (size_t)s->cfg.seq);
        s->gpu.h_tgt = (int *)DPPROF_MALLOC(sizeof(int) * (size_t)s->cfg.physical_batch * (size_t)s->cfg.seq);
        s->gpu.h_loss = (float *)DPPROF_MALLOC(sizeof(float) * (size_t)s->cfg.physical_batch);
        if (!s->gpu.h_tok || !s->gpu.h_tgt || !s->gpu.h_loss) {
            rc = dpprof__fail(DPPROF_ERR_OOM, "cannot allocate the host staging buffers");
            goto fail;
        }
    }
    /* config.backend = auto has become cpu or cuda here: what needs the gpu is checked against what it became */
    if (s->cfg.wgmma == DPPROF_SWITCH_ON && s->backend == DPPROF_BACKEND_CPU) {
        rc = dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.wgmma = on selects a kernel of the bf16 gram norm on the GPU: it needs config.backend = cuda (or dry) and config.dtype = bf16 (this run is %s, %s)",
                          dpprof_backend_name(s->backend), s->cfg.dtype == DPPROF_DTYPE_BF16 ? "bf16" : "fp32");
        goto fail;
    }
    if (s->cfg.dram && s->backend != DPPROF_BACKEND_CUDA) {
        rc = dpprof__fail(DPPROF_ERR_UNSUPPORTED, "config.dram = %s reads the GPU's DRAM counters: it needs config.backend = cuda (this run is %s)", s->cfg.dram == DPPROF_DRAM_OPS ? "ops" : "phases", dpprof_backend_name(s->backend));
        goto fail;
    }
    s->obs.mark_ops = s->cfg.trace_ops;
    s->cfg.backend = (dpprof_backend)s->backend;
    s->elem = s->cfg.dtype == DPPROF_DTYPE_BF16 ? (int)sizeof(dpprof_bf16) : (int)sizeof(dpprof_real);
    /* without a timeline or a trace the event log is not kept: a long run's host memory stays bounded */
    rc = dpprof_prof_init(&s->prof, (s->backend == DPPROF_BACKEND_DRY ? DPPROF_PROF_NO_CLOCK : 0) | (s->cfg.no_timeline && !s->cfg.trace_ops ? DPPROF_PROF_NO_EVENTS : 0));
    if (rc != DPPROF_OK) goto fail;
    s->model.a.lay = (dpprof__layer_acts *)DPPROF_MALLOC(sizeof(dpprof__layer_acts) * (size_t)s->sh.L);
    if (!s->model.a.lay) {
        rc = dpprof__fail(DPPROF_ERR_OOM, "cannot allocate the activation table");
        goto fail;
    }
    memset(s->model.a.lay, 0, sizeof(dpprof__layer_acts) * (size_t)s->sh.L);
    rc = dpprof__build_model(s);
    if (rc == DPPROF_OK && s->cfg.framework >= DPPROF_FRAMEWORK_PYTORCH) rc = dpprof__fw_setup(s);
    else if (rc == DPPROF_OK) rc = dpprof__setup_dp(s);
    if (rc != DPPROF_OK) goto fail;
    *out = s;
    return DPPROF_OK;
fail:
    /* a session whose model did not fit is still returned for its report (status oom) */
    if (rc == DPPROF_ERR_OOM && s->model.params) {
        dpprof__phase_end(s);
        *out = s;
        return rc;
    }
    dpprof_session_destroy(s);
    return rc;
}

DPPROF_API void dpprof_session_destroy(dpprof_session *s) {
    int i;
    if (!s) return;
    if (s->model.a.lay) dpprof__acts_release(s);
    for (i = 0; s->model.params && i < s->model.n_params; i++) {
        dpprof__tfree(s, &s->model.params[i].w);
        dpprof__tfree(s, &s->model.params[i].wl);
        dpprof__tfree(s, &s->model.params[i].g);
        dpprof__tfree(s, &s->model.params[i].m);
        dpprof__tfree(s, &s->model.params[i].v);
    }
    dpprof__tfree(s, &s->model.ws);
    dpprof__tfree(s, &s->model.attn_ws);
    {
        dpprof_tensor *d[] = {&s->dist.gpad, &s->dist.wpad, &s->dist.gshard, &s->dist.m, &s->dist.v, &s->dist.wshard, &s->dist.lshard, &s->dist.wlshard, &s->dist.llshard};
        for (i = 0; i < (int)(sizeof d / sizeof d[0]); i++) dpprof__tfree(s, d[i]);
        DPPROF_FREE(s->dist.gath);
        DPPROF_FREE(s->dist.toff);
        DPPROF_FREE(s->dist.counts);
    }
    if (s->dist.nccl) dpprof_nccl_finish();
    if (s->backend == DPPROF_BACKEND_CUDA) {
        (void)dpprof_cuda_trim(); /* what this session held goes back to the driver */
#if DPPROF__CUDA
        (void)dpprof_cuda_set_storage(DPPROF_DTYPE_FP32); /* the default for whoever queues ops next */
        (void)dpprof_cuda_set_tuning(NULL);
#endif
    }
    DPPROF_FREE(s->model.params);
    DPPROF_FREE(s->model.lora);
    DPPROF_FREE(s->gpu.h_tok);
    DPPROF_FREE(s->gpu.h_tgt);
    DPPROF_FREE(s->gpu.h_loss);
    DPPROF_FREE(s->gpu.h_norm2);
    DPPROF_FREE(s->gpu.h_clip);
    DPPROF_FREE(s->obs.ph_ev);
    DPPROF_FREE(s->obs.ph_drv);
    DPPROF_FREE(s->obs.ops);
    DPPROF_FREE(s->model.a.lay);
    DPPROF_FREE(s->data.text);
    DPPROF_FREE(s->data.line_off);
    DPPROF_FREE(s->data.line_len);
    DPPROF_FREE(s->data.line_label);
    DPPROF_FREE(s->run.step_loss);
    DPPROF_FREE(s->run.step_ms);
    DPPROF_FREE(s->run.step_n);
    DPPROF_FREE(s->plan.tensor);
    DPPROF_FREE(s->dps.h_rown);
    DPPROF_FREE(s->dps.psg);
    DPPROF_FREE(s->dps.kept);
    DPPROF_FREE((void *)s->dps.kept_from);
    DPPROF_FREE(s->dps.cache);
    DPPROF_FREE(s->dps.batch_ids);
    DPPROF_FREE(s->dps.last_norms);
    DPPROF_FREE(s->dps.last_clip);
    DPPROF_FREE(s->dps.rank_n);
    dpprof_prof_free(&s->prof);
    DPPROF_FREE(s->fw.t);
    DPPROF_FREE(s->fw.free_list);
    DPPROF_FREE(s->fw.w);
    DPPROF_FREE(s->fw.lay);
    DPPROF_FREE(s);
}

DPPROF_API const dpprof_config *dpprof_session_config(const dpprof_session *s) { return &s->cfg; }
DPPROF_API const dpprof_shape *dpprof_session_shape(const dpprof_session *s) { return &s->sh; }
DPPROF_API const dpprof_prof *dpprof_session_prof(const dpprof_session *s) { return &s->prof; }
DPPROF_API int dpprof_session_param_count(const dpprof_session *s) { return s->model.n_params; }
DPPROF_API dpprof_param *dpprof_session_param(dpprof_session *s, int i) { return i >= 0 && i < s->model.n_params ? &s->model.params[i] : NULL; }
static int dpprof__param_copy(dpprof_session *s, int i, char which, dpprof_real *host, int to_host) {
    const dpprof_tensor *t;
    size_t bytes;
    if (!s || i < 0 || i >= s->model.n_params || !host) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_param_read/write: no tensor %d", i);
    t = which == 'w' ? &s->model.params[i].w : (which == 'g' ? &s->model.params[i].g : (which == 'm' ? &s->model.params[i].m : (which == 'v' ? &s->model.params[i].v : NULL)));
    if (!t) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_param_read: '%c' is not w, g, m or v", which);
    if (s->dist.real && s->dist.zero) { /* sharded: the weights gathered (every rank calls it), nothing else */
        if (!to_host || which != 'w')
            return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "dpprof_session_param_%s of '%c' at zero %d: a rank holds shards; only the weights are read (gathered)", to_host ? "read" : "write", which, s->dist.zero);
        if (s->dist.zero == 3) {
#ifdef DPPROF_MPI
            const int64_t n = s->model.params[i].w.n;
            int64_t lo, len;
            dpprof__dist_part(s, n, &lo, &len);
            if (s->backend == DPPROF_BACKEND_CUDA) { /* the rank's part to the host, then the parts over MPI */
                int rc = DPPROF_OK, bad;
                if (len && s->model.params[i].bf16_only) { /* stored in bf16 alone: its copy's part, widened */
                    dpprof_bf16 *h = (dpprof_bf16 *)DPPROF_MALLOC((size_t)len * sizeof(dpprof_bf16));
                    if (h) memset(h, 0, (size_t)len * sizeof(dpprof_bf16));
                    rc = h ? dpprof_cuda_copy(h, dpprof__dist_wlpart(s, i), (size_t)len * sizeof(dpprof_bf16), DPPROF_COPY_D2H) : dpprof__fail(DPPROF_ERR_OOM, "no host buffer");
                    if (rc == DPPROF_OK) dpprof_bf16_unpack_ref(host + lo, h, (size_t)len);
                    DPPROF_FREE(h);
                } else if (len) rc = dpprof_cuda_copy(host + lo, dpprof__dist_wpart(s, i), (size_t)len * sizeof(dpprof_real), DPPROF_COPY_D2H);
                bad = rc != DPPROF_OK;
                MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
                if (bad) return dpprof__fail(DPPROF_ERR_CUDA, "dpprof_session_param_read: %s", rc != DPPROF_OK ? dpprof_last_error() : "another rank's copy failed");
                dpprof__mpi_allgather(s, host, n, NULL);
            } else dpprof__mpi_allgather(s, host, n, dpprof__dist_wpart(s, i));
#endif
            return DPPROF_OK;
        }
    }
    if (!t->n) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_param_read: %s has no '%c' (frozen, or not adam)", s->model.params[i].name, which);
    if (s->backend == DPPROF_BACKEND_DRY) return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "the dry backend holds no values");
    bytes = (size_t)t->n * sizeof(dpprof_real);
#if DPPROF__CUDA
    if (s->backend == DPPROF_BACKEND_CUDA && which == 'w' && s->model.params[i].bf16_only) { /* stored in bf16 alone: widened, or rounded */
        const size_t n = (size_t)t->n;
        dpprof_bf16 *h = (dpprof_bf16 *)DPPROF_MALLOC(n * sizeof(dpprof_bf16));
        int rc;
        if (!h) return dpprof__fail(DPPROF_ERR_OOM, "cannot allocate a host buffer for %s's bf16 weights", s->model.params[i].name);
        if (!to_host) dpprof_bf16_pack_ref(h, host, n);
        rc = to_host ? dpprof_cuda_copy(h, s->model.params[i].wl.data, n * sizeof(dpprof_bf16), DPPROF_COPY_D2H)
                     : dpprof_cuda_copy(s->model.params[i].wl.data, h, n * sizeof(dpprof_bf16), DPPROF_COPY_H2D);
        if (rc == DPPROF_OK && to_host) dpprof_bf16_unpack_ref(host, h, n);
        DPPROF_FREE(h);
        return rc == DPPROF_OK ? DPPROF_OK : dpprof__fail(DPPROF_ERR_CUDA, "%s", dpprof_last_error());
    }
    if (s->backend == DPPROF_BACKEND_CUDA) {
        int rc = to_host ? dpprof_cuda_copy(host, t->data, bytes, DPPROF_COPY_D2H) : dpprof_cuda_copy(t->data, host, bytes, DPPROF_COPY_H2D);
        if (rc == DPPROF_OK && !to_host && which == 'w') dpprof__cast_weights(s, i, i + 1, 0); /* the matmuls read the new values */
        return rc == DPPROF_OK ? DPPROF_OK : dpprof__fail(DPPROF_ERR_CUDA, "%s", dpprof_last_error());
    }
#endif
    if (to_host) memcpy(host, t->data, bytes);
    else memcpy(t->data, host, bytes);
    return DPPROF_OK;
}
DPPROF_API int dpprof_session_param_read(dpprof_session *s, int i, char which, dpprof_real *out) { return dpprof__param_copy(s, i, which, out, 1); }
DPPROF_API int dpprof_session_param_write(dpprof_session *s, int i, char which, const dpprof_real *in) { return dpprof__param_copy(s, i, which, (dpprof_real *)in, 0); }
DPPROF_API int dpprof_session_steps_done(const dpprof_session *s) { return s->run.steps_done; }
DPPROF_API int dpprof_session_op_costs(const dpprof_session *s, dpprof_op_cost *out, int max) {
    int i;
    for (i = 0; out && i < max && i < s->obs.n_tally; i++) out[i] = s->obs.tally[i];
    return s->obs.n_tally;
}
DPPROF_API double dpprof_session_step_loss(const dpprof_session *s, int step) { return step >= 0 && step < s->run.steps_done ? s->run.step_loss[step] : NAN; }
DPPROF_API int64_t dpprof_session_param_elems(const dpprof_session *s, int trainable_only) {
    int64_t n = 0;
    int i;
    for (i = 0; i < s->model.n_params; i++)
        if (!trainable_only || s->model.params[i].trainable) n += (int64_t)s->model.params[i].rows * s->model.params[i].cols;
    return n;
}

/* ---- 5.11 writers and dump ---------------------------------------------------------------------------------
   The result JSON (docs/results.md: fixed key order, doubles as %.17g, meta first), the Perfetto trace of the
   last steps, and the dump that Hugging Face's LlamaForCausalLM.from_pretrained loads: config.json,
   safetensors of the model, the batch and the gradients, step.json. */

/* result json */
#ifndef DPPROF_GIT_COMMIT
#define DPPROF_GIT_COMMIT "unknown"
#endif
/* the build's sources (the Makefile's SOURCE_HASH: sha256 of the files compiled) and whether the commit holds them:
   "clean", "differs" (edits not committed, or a copy whose .git is older than its files), "unknown" (no git) */
#ifndef DPPROF_SOURCE_HASH
#define DPPROF_SOURCE_HASH "unknown"
#endif
#ifndef DPPROF_SOURCE_STATE
#define DPPROF_SOURCE_STATE "unknown"
#endif
#define DPPROF__SOURCE_NOTE                                                                                                                              \
    (!strcmp(DPPROF_SOURCE_STATE, "clean")     ? "the files compiled are the commit's"                                                                   \
     : !strcmp(DPPROF_SOURCE_STATE, "differs") ? "the files compiled are not the commit's (edits not committed, or a copy whose .git is older than its " \
                                                 "files): source_sha256 names them"                                                                      \
                                               : "no git where it was built: source_sha256 alone names the files compiled")
#define DPPROF__MIB 1048576.0

static int dpprof__cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* median of v[0..n) (sorts a copy); nan when n == 0 */
static double dpprof__median(const double *v, size_t n) {
    double *c, m;
    if (!n) return NAN;
    c = (double *)DPPROF_MALLOC(sizeof(double) * n);
    if (!c) return NAN;
    memcpy(c, v, sizeof(double) * n);
    qsort(c, n, sizeof(double), dpprof__cmp_double);
    m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    DPPROF_FREE(c);
    return m;
}

/* throughput.ops: the timed ops (--op-times: warm-up steps; --trace: every step) by name, the most
   time first: time, analytic flops and bytes, the rates they imply and, on cuda, their share of the
   device's peaks (fp32 flop/s, dram bytes/s): how close each kernel runs to what bounds it */
static void dpprof__write_ops(const dpprof_session *s, FILE *f) {
    enum {
        MAXN = 64
    };
    const char *name[MAXN];
    double ms[MAXN], fl[MAXN], by[MAXN], tr[MAXN][4], tby[MAXN], pf = 0, ph = 0, pb = 0, pc, ms_ops = 0;
    long long work_ops = 0;
    const int bf16 = s->cfg.dtype == DPPROF_DTYPE_BF16; /* the compute peak of the roofline: the run's dtype's */
    long cnt[MAXN], tcnt[MAXN];
    int n = 0, i, j, m, order[MAXN];
    size_t k;
    for (k = 0; k < s->obs.n_ops; k++) {
        const dpprof__op_rec *o = &s->obs.ops[k];
        const int timed = o->t0 == o->t0 && o->t1 == o->t1, counted = o->traffic[0] >= 0;
        if (!timed && !counted) continue;
        for (i = 0; i < n && strcmp(name[i], o->name); i++) {}
        if (i == n) {
            if (n == MAXN) continue;
            name[n] = o->name;
            ms[n] = fl[n] = by[n] = tby[n] = tr[n][0] = tr[n][1] = tr[n][2] = tr[n][3] = 0;
            cnt[n] = tcnt[n] = 0;
            n++;
        }
        if (counted) { /* the counters step's records (not timed): measured bytes beside their analytic bytes */
            for (m = 0; m < 4; m++) tr[i][m] = o->traffic[m] >= 0 && tr[i][m] >= 0 ? tr[i][m] + o->traffic[m] : -1.0;
            tby[i] += o->bytes;
            tcnt[i]++;
        }
        if (!timed) continue;
        ms_ops += o->t1 - o->t0;
        work_ops += o->w1 - o->w0;
        ms[i] += o->t1 - o->t0;
        fl[i] += o->flops;
        by[i] += o->bytes;
        cnt[i]++;
    }
    if (!n) {
        fputs(", \"ops\": null", f);
        return;
    }
    if (s->backend == DPPROF_BACKEND_CUDA) {
        dpprof_device_peaks(&s->gpu.dev, &pf, &ph, &pb);
        pc = dpprof_flop_peak(&s->gpu.dev, s->cfg.dtype);
    } else pc = 0;
    for (i = 0; i < n; i++) order[i] = i;
    for (i = 1; i < n; i++) /* insertion sort by time, the most first */
        for (j = i; j > 0 && ms[order[j]] > ms[order[j - 1]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    fprintf(f, ", \"ops\": {\"note\": \"%s%s\", \"by_op\": {",
            s->backend == DPPROF_BACKEND_CUDA ? "cuda events around each op (its kernels); shares of the fp32, bf16 tensor-core and dram data-sheet peaks" : "host clock around each reference op",
            s->cfg.dram == DPPROF_DRAM_OPS ? "; traffic (config.dram = ops): the op's measured bytes in the counters step (warm-up step 0, each op a CUPTI range, not timed), its analytic bytes there, "
                                             "and the rates over the op's time per timed step (l2: the SMs' global loads and stores through L2)"
                                           : "");
    for (j = 0; j < n; j++) {
        i = order[j];
        fprintf(f, "%s\"%s\": {\"count\": %ld, \"ms\": ", j ? ", " : "", name[i], cnt[i]);
        dpprof__jnum(f, cnt[i] ? ms[i] : NAN); /* none timed (counted only): null */
        fputs(", \"flops\": ", f);
        dpprof__jnum(f, cnt[i] ? fl[i] : NAN);
        fputs(", \"bytes_analytic\": ", f);
        dpprof__jnum(f, cnt[i] ? by[i] : NAN);
        fputs(", \"flops_per_s\": ", f);
        dpprof__jnum(f, ms[i] > 0 ? fl[i] / (ms[i] * 1e-3) : NAN);
        fputs(", \"bytes_per_s\": ", f);
        dpprof__jnum(f, ms[i] > 0 ? by[i] / (ms[i] * 1e-3) : NAN);
        fputs(", \"share_of_fp32_peak\": ", f);
        dpprof__jnum(f, ms[i] > 0 && pf > 0 ? fl[i] / (ms[i] * 1e-3) / pf : NAN);
        fputs(", \"share_of_bf16_peak\": ", f);
        dpprof__jnum(f, ms[i] > 0 && ph > 0 ? fl[i] / (ms[i] * 1e-3) / ph : NAN);
        fputs(", \"share_of_dram_peak\": ", f);
        dpprof__jnum(f, ms[i] > 0 && pb > 0 ? by[i] / (ms[i] * 1e-3) / pb : NAN);
        if (pb > 0 && pc > 0 && ms[i] > 0) { /* the roofline: whichever peak takes longer for its bytes and flops */
            double tb = by[i] / pb, tc = fl[i] / pc;
            fprintf(f, ", \"bound\": \"%s\", \"share_of_bound\": ", tb >= tc ? "dram" : (bf16 ? "bf16" : "fp32"));
            dpprof__jnum(f, (tb >= tc ? tb : tc) / (ms[i] * 1e-3));
        } else fputs(", \"bound\": null, \"share_of_bound\": null", f);
        if (tcnt[i]) { /* --dram per op: the counters step's bytes; rates over this op's time per timed step */
            static const char *const tk[4] = {"dram_read", "dram_write", "l2_read", "l2_write"};
            const double per = ms[i] > 0 && s->obs.n_steps ? ms[i] / s->obs.n_steps * 1e-3 : 0;
            fprintf(f, ", \"traffic\": {\"count\": %ld, \"bytes_analytic\": ", tcnt[i]);
            dpprof__jnum(f, tby[i]);
            for (m = 0; m < 4; m++) {
                fprintf(f, ", \"%s_bytes\": ", tk[m]);
                dpprof__jnum(f, tr[i][m] >= 0 ? tr[i][m] : NAN);
                fprintf(f, ", \"%s_bytes_per_s\": ", tk[m]);
                dpprof__jnum(f, tr[i][m] >= 0 && per > 0 ? tr[i][m] / per : NAN);
            }
            fputs(", \"dram_over_analytic\": ", f);
            dpprof__jnum(f, tby[i] > 0 ? (tr[i][0] + tr[i][1]) / tby[i] : NAN);
            fputs("}", f);
        } else fputs(", \"traffic\": null", f);
        fputs("}", f);
    }
    /* what the op records leave out: the steps' device work outside every op (0 when each kernel, cuBLAS call,
       memset and copy is inside one) and their time less the ops' (launch gaps, host work between ops) */
    fprintf(f, "}, \"coverage\": {\"steps\": %d, \"device_work\": %lld, \"device_work_in_ops\": %lld, \"step_ms\": ", s->obs.n_steps, s->obs.work_steps, work_ops);
    dpprof__jnum(f, s->obs.n_steps ? s->obs.ms_steps / s->obs.n_steps : NAN);
    fputs(", \"ops_ms\": ", f);
    dpprof__jnum(f, s->obs.n_steps ? ms_ops / s->obs.n_steps : NAN);
    fputs(", \"untimed_ms\": ", f);
    dpprof__jnum(f, s->obs.n_steps ? (s->obs.ms_steps - ms_ops) / s->obs.n_steps : NAN);
    fputs(", \"note\": \"over the steps whose ops were timed: device_work (their total) counts the kernels, cuBLAS calls, memsets and copies dpprof queued (cuda; 0 elsewhere), device_work_in_ops those inside an op record; step_ms, ops_ms (the sum of the op records) and untimed_ms, per step: = step_ms - ops_ms: the time between the ops (launch gaps, host work)\"}}", f);
}

/* --checkpoint layers cuts a backward pass into records, the pass's and the recompute phase's in turn (B R B R ... B):
   a record of one continues the occurrence of that phase two records before, in the same step, so that both
   phases count one occurrence a pass (its time, flops and bytes the sum of its records) */
static int dpprof__phase_cont(const dpprof_prof *p, size_t i) {
    const dpprof_phase_rec *r = &p->phases[i];
    int a, b;
    if (i < 2 || p->phases[i - 2].phase != r->phase || p->phases[i - 2].step != r->step || p->phases[i - 1].step != r->step) return 0;
    a = r->phase;
    b = p->phases[i - 1].phase;
    if (a == DPPROF_PHASE_RECOMPUTE) a = b, b = DPPROF_PHASE_RECOMPUTE;
    return b == DPPROF_PHASE_RECOMPUTE && (a == DPPROF_PHASE_BACKWARD || a == DPPROF_PHASE_BACKWARD_2);
}

DPPROF_API void dpprof_session_dist(const dpprof_session *s, dpprof_dist_info *out) {
    memset(out, 0, sizeof *out);
    if (!s) return;
    out->ranks = s->cfg.ranks;
    out->zero = s->cfg.zero;
    out->zero_in_effect = s->dist.zero;
    out->shard_elements = s->dist.shard_train;
    out->padding_elements = (int64_t)s->dist.n * s->dist.shard_train - dpprof_session_param_elems(s, 1);
    out->param_shard_elements = s->dist.shard_params;
    out->gathered_max_bytes = s->dist.gath_max;
    out->all_reduce_bytes = s->dist.bytes[DPPROF__AR_BYTES];
    out->reduce_scatter_bytes = s->dist.bytes[DPPROF__RS_BYTES];
    out->all_gather_bytes = s->dist.bytes[DPPROF__AG_BYTES];
    out->all_reduce_calls = s->dist.calls[DPPROF__AR_BYTES];
    out->reduce_scatter_calls = s->dist.calls[DPPROF__RS_BYTES];
    out->all_gather_calls = s->dist.calls[DPPROF__AG_BYTES];
}

DPPROF_API int dpprof_session_comm_time(const dpprof_session *s, const dpprof_fabric *f, dpprof_comm *out) {
    dpprof_dist_info d;
    if (!s) return memset(out, 0, sizeof *out), dpprof_fail(DPPROF_ERR_INVALID, "no session");
    dpprof_session_dist(s, &d);
    if (d.ranks < 1) d.ranks = 1;
    return dpprof_comm_time(&d, f, out);
}

/* --ranks, --zero: "distributed" (docs/results.md): rank 0's shards and its collective bytes in the last step */
static void dpprof__write_dist(const dpprof_session *s, FILE *f) {
    const dpprof__dist *d = &s->dist;
    const int64_t P = dpprof_session_param_elems(s, 1), Pall = dpprof_session_param_elems(s, 0), R = DPPROF__R;
    const int64_t pad = (int64_t)d->n * d->shard_train - P, ps = d->zero >= 3 ? d->shard_params : (d->zero >= 1 ? Pall + pad : Pall);
    if (s->cfg.ranks <= 1 && !s->cfg.zero) return;
    fprintf(f, ",\n  \"distributed\": {\"ranks\": %d, \"zero\": %d, \"zero_in_effect\": %d, \"rank\": 0, \"ranks_identical\": %s, \"processes\": %d, \"rank_batch\": %d, ",
            s->cfg.ranks, s->cfg.zero, d->zero, (!s->dist.real && !s->cfg.poisson) || (s->dist.real && s->dist.peak_min == s->dist.peak_max) ? "true" : "false", s->dist.real ? s->dist.n : 1, s->cfg.batch / s->cfg.ranks);
    fprintf(f, "\"trainable_elements\": %lld, \"parameter_elements\": %lld, \"shard_elements\": %lld, \"shard_padding_elements\": %lld, ",
            (long long)P, (long long)Pall, (long long)d->shard_train, (long long)pad);
    fprintf(f, "\"parameter_elements_per_rank\": %lld, \"gradient_elements_per_rank\": %lld, \"optimizer_elements_per_rank\": %lld, \"gathered_max_bytes\": %lld, ",
            (long long)ps, (long long)(d->zero >= 2 ? d->shard_train : (d->zero == 1 ? (int64_t)d->n * d->shard_train : P)),
            (long long)(s->cfg.optimizer != DPPROF_OPT_ADAM ? 0 : 2 * (d->zero >= 1 ? d->shard_train : P)), (long long)d->gath_max);
    fprintf(f, "\"collective_bytes\": {\"all_reduce\": %lld, \"reduce_scatter\": %lld, \"all_gather\": %lld, \"total\": %lld}, \"bytes_per_element\": %lld}",
            (long long)d->bytes[DPPROF__AR_BYTES], (long long)d->bytes[DPPROF__RS_BYTES], (long long)d->bytes[DPPROF__AG_BYTES],
            (long long)(d->bytes[0] + d->bytes[1] + d->bytes[2]), (long long)R);
}

static void dpprof__write_phases(const dpprof_session *s, FILE *f) {
    const dpprof_prof *p = &s->prof;
    int ph, first = 1;
    double *times = (double *)DPPROF_MALLOC(sizeof(double) * (p->n_phases + 1));
    fputs("{", f);
    for (ph = 0; ph < DPPROF_PHASE_COUNT; ph++) {
        size_t i, count = 0, nt = 0;
        int64_t b_start = 0, b_end = 0, b_peak = 0;
        double flops = 0, bytes = 0, tmin = INFINITY, tmax = -INFINITY, tsum = 0, dr = 0, dw = 0, lr = 0, lw = 0;
        size_t ndram = 0, nl2 = 0;
        int setup = ph <= DPPROF_PHASE_PRIVACY_SETUP;
        for (i = 0; i < p->n_phases; i++) {
            const dpprof_phase_rec *r = &p->phases[i];
            const int cont = dpprof__phase_cont(p, i);
            if (r->phase != ph) continue;
            if (!count) b_start = r->bytes_start;
            b_end = r->bytes_end;
            if (r->bytes_peak > b_peak) b_peak = r->bytes_peak;
            count += !cont;
            flops += r->flops;
            bytes += r->bytes_analytic;
            if (r->dram_read >= 0) {
                dr += r->dram_read;
                ndram++;
            }
            if (r->dram_write >= 0) dw += r->dram_write;
            if (r->l2_read >= 0) {
                lr += r->l2_read;
                nl2++;
            }
            if (r->l2_write >= 0) lw += r->l2_write;
            /* warm-up steps are excluded from time, never from memory; a continued record adds to its occurrence */
            if (times && s->backend != DPPROF_BACKEND_DRY && (setup || r->step >= s->cfg.warmup)) {
                if (cont && nt) times[nt - 1] += r->t_end_ms - r->t_start_ms;
                else times[nt++] = r->t_end_ms - r->t_start_ms;
            }
        }
        if (!count) continue;
        for (i = 0; i < nt; i++) {
            tsum += times[i];
            if (times[i] < tmin) tmin = times[i];
            if (times[i] > tmax) tmax = times[i];
        }
        fprintf(f, "%s\n    ", first ? "" : ",");
        first = 0;
        dpprof__jstr(f, dpprof_phase_name(ph));
        fprintf(f, ": {\"count\": %zu, \"time_ms_mean\": ", count);
        dpprof__jnum(f, nt ? tsum / (double)nt : NAN);
        fputs(", \"time_ms_median\": ", f);
        dpprof__jnum(f, dpprof__median(times, nt));
        fputs(", \"time_ms_min\": ", f);
        dpprof__jnum(f, nt ? tmin : NAN);
        fputs(", \"time_ms_max\": ", f);
        dpprof__jnum(f, nt ? tmax : NAN);
        fprintf(f, ", \"bytes_start\": %lld, \"bytes_end\": %lld, \"bytes_peak\": %lld", (long long)b_start, (long long)b_end, (long long)b_peak);
        fputs(", \"flops\": ", f);
        dpprof__jnum(f, flops / (double)count);
        fputs(", \"bytes_analytic\": ", f);
        dpprof__jnum(f, bytes / (double)count);
        /* measured in one step (the counters step): the sum of its records of this phase */
        if (ndram) {
            fputs(", \"dram_read_bytes\": ", f);
            dpprof__jnum(f, dr);
            fputs(", \"dram_write_bytes\": ", f);
            dpprof__jnum(f, dw);
        } else fputs(", \"dram_read_bytes\": \"unavailable\", \"dram_write_bytes\": \"unavailable\"", f);
        if (nl2) {
            fputs(", \"l2_read_bytes\": ", f);
            dpprof__jnum(f, lr);
            fputs(", \"l2_write_bytes\": ", f);
            dpprof__jnum(f, lw);
        } else fputs(", \"l2_read_bytes\": \"unavailable\", \"l2_write_bytes\": \"unavailable\"", f);
        fputs("}", f);
    }
    fputs("\n  }", f);
    DPPROF_FREE(times);
}

/* the privacy block: rdp of the subsampled gaussian over every step run (warm-up steps spend
   privacy too), epsilon at delta with the improved conversion, minimised over opacus's orders */
DPPROF_API int dpprof_privacy_of(int dp, double q, double sigma, long long steps, double delta, int poisson, dpprof_accountant accountant, dpprof_privacy *out) {
    dpprof_privacy *r = out;
    int rc = DPPROF_OK;
    if (!r) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_privacy_of: NULL report");
    memset(r, 0, sizeof *r);
    r->dp = dp, r->poisson = poisson, r->q = q, r->sigma = sigma, r->delta = delta, r->steps = steps, r->accountant = accountant;
    r->epsilon = r->epsilon_rdp = r->epsilon_pld = r->best_order = r->pld_interval = NAN;
    r->why = "";
    if (!dp) {
        r->why = "non-private training";
        snprintf(r->note, sizeof r->note, "non-private training");
        return DPPROF_OK;
    }
    if (sigma == 0) {
        double e0 = INFINITY;
        if (q == q && poisson && dpprof_noiseless_epsilon(q, steps, delta, &e0) == DPPROF_OK && e0 < INFINITY) {
            r->epsilon = e0; /* exact: a record is drawn at all with a chance under delta */
            snprintf(r->note, sizeof r->note, "sigma = 0: no noise, but a record is drawn in any of the %lld steps with probability %.3g, under delta %g: epsilon %.3g exactly "
                                              "(log(1 - delta) - steps log(1 - q) of the add neighbour)",
                     steps, -expm1((double)steps * log1p(-q)), delta, e0);
            return DPPROF_OK;
        }
        r->epsilon = INFINITY;
        r->why = "no noise (sigma = 0): clipping alone is not private";
        snprintf(r->note, sizeof r->note, "sigma = 0: clipping without noise gives no privacy guarantee (epsilon is infinite)");
        return DPPROF_OK;
    }
    if (!(q == q)) {
        r->why = "no dataset size: the sample rate is unknown, and so is epsilon";
        snprintf(r->note, sizeof r->note, "no dataset size (config.dataset_size; --dataset-size on the command line): the sample rate q = B/N is unknown, so is epsilon");
        return DPPROF_OK;
    }
    if (!poisson) {
        r->why = "batches in a fixed order: no epsilon (poisson sampling gives one)";
        snprintf(r->note, sizeof r->note, "batches were drawn in a fixed order, not by poisson sampling: the poisson-subsampled epsilon does not hold for this run, and no "
                                          "epsilon is reported; poisson sampling (config.poisson; --poisson on the command line) draws the batches that accounting describes");
        return DPPROF_OK;
    }
    if ((rc = dpprof_rdp_epsilon(q, sigma, steps, delta, NULL, 0, &r->epsilon_rdp, &r->best_order)) != DPPROF_OK) return rc;
    r->epsilon = r->epsilon_rdp;
    if (accountant != DPPROF_ACCOUNTANT_RDP) {
        double e = NAN, h = NAN, e0 = INFINITY;
        if (dpprof__pld_eps(q, sigma, steps, delta, 0.0, &e, &h) == DPPROF_OK) {
            const int by_rdp = r->epsilon_rdp < e;
            dpprof_noiseless_epsilon(q, steps, delta, &e0);
            r->epsilon_pld = by_rdp ? r->epsilon_rdp : e, r->pld_interval = h;
            if (e0 < r->epsilon_pld) r->epsilon_pld = e0;
            if (accountant == DPPROF_ACCOUNTANT_PLD) r->epsilon = r->epsilon_pld;
            if (accountant == DPPROF_ACCOUNTANT_PLD && (by_rdp || e0 < e)) r->accountant = e0 < r->epsilon_rdp ? DPPROF_ACCOUNTANT_PLD : DPPROF_ACCOUNTANT_RDP;
            snprintf(r->note, sizeof r->note, "%s privacy loss distribution of the poisson-subsampled gaussian mechanism (the larger of the add and the remove neighbour): "
                                              "connect-the-dots discretisation at interval %.3g, composed by fft, pessimistic: an upper bound on the exact epsilon; "
                                              "never below dp_accounting 0.6.0's pld at the same interval by more than 1e-5 of it, above it by at most 0.3%% (docs/dp.md)%s%s",
                     accountant == DPPROF_ACCOUNTANT_BOTH ? "epsilon: rdp (mironov et al. 2019, improved conversion of balle et al. 2020); epsilon_pld:" : "the", h,
                     accountant == DPPROF_ACCOUNTANT_BOTH ? "" : "; rdp's epsilon beside it",
                     e0 < e && e0 <= r->epsilon_rdp ? "; here no noise's exact epsilon is smaller (a record is drawn at all with a chance under delta), and is the one reported"
                     : by_rdp                       ? "; here rdp's bound is smaller than the pld's (whose grid is coarse at this setting), and is the one reported"
                                                    : "");
        } else { /* an upper bound is still owed: rdp's */
            r->accountant = DPPROF_ACCOUNTANT_RDP;
            snprintf(r->note, sizeof r->note, "the privacy loss distribution could not bound this setting (%.200s): the rdp epsilon instead (mironov et al. 2019, improved conversion of balle et al. 2020), an upper bound", dpprof_last_error());
        }
    } else
        snprintf(r->note, sizeof r->note, "rdp of the poisson-subsampled gaussian mechanism (mironov et al. 2019), improved conversion (balle et al. 2020), minimised over orders up to 63 and past "
                                          "where the minimum is at the grid's edge: an upper bound");
    return DPPROF_OK;
}

DPPROF_API int dpprof_session_privacy(const dpprof_session *s, dpprof_privacy *out) {
    dpprof_session *m = (dpprof_session *)s; /* a memo: the accountant runs once for a step count */
    const dpprof_config *c;
    int rc;
    if (!s || !out) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_privacy: NULL %s", s ? "report" : "session");
    c = &s->cfg;
    if (s->privacy_steps != s->run.steps_done + 1) {
        rc = dpprof_privacy_of(s->dps.dp, c->dataset_size ? (double)c->batch / (double)c->dataset_size : NAN, c->sigma, s->run.steps_done, c->delta, c->poisson, c->accountant, &m->privacy);
        if (rc != DPPROF_OK) return rc;
        m->privacy_steps = s->run.steps_done + 1;
    }
    *out = s->privacy;
    return DPPROF_OK;
}

static void dpprof__write_privacy(const dpprof_session *s, FILE *f) {
    const dpprof_config *c = &s->cfg;
    dpprof_privacy r;
    if (dpprof_session_privacy(s, &r) != DPPROF_OK) { /* an accountant's domain error: said, nothing reported */
        memset(&r, 0, sizeof r);
        r.dp = 1, r.epsilon = r.epsilon_rdp = r.epsilon_pld = r.best_order = r.pld_interval = NAN, r.accountant = c->accountant, r.q = NAN;
        snprintf(r.note, sizeof r.note, "the accountant could not evaluate this setting: %.300s", dpprof_last_error());
    }
    if (!r.dp) {
        fprintf(f, "{\"mechanism\": \"none\", \"accountant\": null, \"epsilon\": null, \"delta\": null, \"sigma\": 0, \"max_grad_norm\": null, \"sample_rate\": null, \"steps\": %d, \"best_order\": null, \"note\": \"non-private training\"}", s->run.steps_done);
        return;
    }
    fprintf(f, "{\"mechanism\": \"%s\", \"accountant\": %s, \"epsilon\": ", c->poisson ? "poisson-subsampled gaussian" : "gaussian, batches in a fixed order",
            !c->poisson ? "null" : (r.accountant == DPPROF_ACCOUNTANT_PLD ? "\"pld\"" : (r.accountant == DPPROF_ACCOUNTANT_BOTH ? "\"rdp+pld\"" : "\"rdp\"")));
    dpprof__jnum(f, r.epsilon);
    if (c->accountant != DPPROF_ACCOUNTANT_RDP) { /* pld asked: its value (null where it could not bound the setting) and its grid */
        fputs(", \"epsilon_pld\": ", f);
        dpprof__jnum(f, r.epsilon_pld);
        fputs(", \"pld_interval\": ", f);
        dpprof__jnum(f, r.pld_interval);
    }
    fputs(", \"epsilon_rdp\": ", f);
    dpprof__jnum(f, r.epsilon_rdp);
    fputs(", \"delta\": ", f);
    dpprof__jnum(f, c->delta);
    fputs(", \"sigma\": ", f);
    dpprof__jnum(f, c->sigma);
    fputs(", \"max_grad_norm\": ", f);
    dpprof__jnum(f, c->max_grad_norm);
    fputs(", \"sample_rate\": ", f);
    dpprof__jnum(f, r.q);
    fprintf(f, ", \"steps\": %d, \"best_order\": ", s->run.steps_done);
    dpprof__jnum(f, r.accountant == DPPROF_ACCOUNTANT_PLD ? NAN : r.best_order); /* an rdp order where rdp's epsilon is the one reported */
    fprintf(f, ", \"clipping\": \"%s\", \"poisson\": %s", c->per_layer_clipping ? "per-layer" : "flat", c->poisson ? "true" : "false");
    if (c->poisson) { /* each step's draw (this rank's, over ranks) */
        int i;
        fputs(", \"batch_sizes\": [", f);
        for (i = 0; i < s->run.steps_done; i++) fprintf(f, "%s%d", i ? ", " : "", s->run.step_n[i]);
        fputs("]", f);
    }
    fputs(", \"note\": ", f);
    dpprof__jstr(f, r.note);
    fputs("}", f);
}

DPPROF_API int dpprof_session_write_json(const dpprof_session *s, FILE *f, const char *experiment, const char *status, const char *error) {
    const dpprof_config *c = &s->cfg;
    const dpprof_shape *h = &s->sh;
    const dpprof_prof *p = &s->prof;
    int i, measured = 0;
    size_t e;
    double tsum = 0, flops_steps = 0, fwd_flops = 0, *st;
    time_t now = time(NULL);
    char date[32] = "unknown";
    struct tm *tm = gmtime(&now);
    if (tm) strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", tm);
    if (!f) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_write_json: NULL file");

    fprintf(f, "{\n  \"schema_version\": %d,\n  \"experiment\": ", DPPROF_SCHEMA_VERSION);
    dpprof__jstr(f, experiment ? experiment : "run");
    fputs(",\n  \"config\": {\"preset\": ", f);
    dpprof__jstr(f, c->model_name ? c->model_name : c->preset);
    fprintf(f, ", \"vocab\": %d, \"hidden\": %d, \"layers\": %d, \"heads\": %d, \"kv_heads\": %d, \"head_size\": %d, \"ffn\": %d, \"tie_embeddings\": %s",
            h->V, h->C, h->L, h->NH, h->NKV, h->HS, h->F, h->tied ? "true" : "false");
    fputs(", \"unmodelled\": ", f);
    if (c->unmodelled) dpprof__jstr(f, c->unmodelled);
    else fputs("null", f);
    fprintf(f, ", \"seq\": %d, \"task\": \"%s\", \"classes\": %d, \"algo\": \"%s\", \"batch\": %d, \"physical_batch\": %d, \"steps\": %d, \"warmup\": %d",
            c->seq, c->task == DPPROF_TASK_LM ? "lm" : "cls", h->K, dpprof_algo_name(c->algo), c->batch, c->physical_batch, c->steps, c->warmup);
    fputs(", \"lr\": ", f);
    dpprof__jnum(f, c->lr);
    fprintf(f, ", \"optimizer\": \"%s\", \"weight_decay\": ", c->optimizer == DPPROF_OPT_ADAM ? "adam" : "sgd");
    dpprof__jnum(f, c->weight_decay);
    fputs(", \"sigma\": ", f);
    dpprof__jnum(f, c->sigma);
    fputs(", \"max_grad_norm\": ", f);
    dpprof__jnum(f, c->max_grad_norm);
    fprintf(f, ", \"clipping\": \"%s\", \"poisson\": %s, \"dataset_size\": %lld, \"delta\": ", c->per_layer_clipping ? "per-layer" : "flat", c->poisson ? "true" : "false", c->dataset_size);
    dpprof__jnum(f, c->delta);
    fprintf(f, ", \"lora_rank\": %d, \"lora_alpha\": ", c->lora_rank);
    dpprof__jnum(f, c->lora_alpha);
    fputs(", \"lora_targets\": ", f);
    dpprof__jstr(f, c->lora_targets ? c->lora_targets : "");
    fputs(", \"lora_dropout\": ", f);
    dpprof__jnum(f, c->lora_dropout);
    fprintf(f, ", \"train_head\": %s, \"frozen_masters\": %s", dpprof__head_trains(c) ? "true" : "false", c->frozen_masters == DPPROF_SWITCH_ON ? "true" : "false");
    fprintf(f, ", \"checkpoint\": \"%s\", \"attention\": \"%s\", \"attention_workspace\": %lld", dpprof_checkpoint_name(c->checkpoint), dpprof_attention_name(c->attention),
            (long long)c->attention_workspace);
    fprintf(f, ", \"framework\": \"%s\"", dpprof_framework_name(c->framework));
    if (c->attention == DPPROF_ATTENTION_CUDNN && s->backend == DPPROF_BACKEND_CUDA) /* the same bits every run, or not */
        fprintf(f, ", \"attention_deterministic\": %s", s->gpu.attn_deterministic ? "true" : "false");
    fprintf(f, ", \"dtype\": \"%s\", \"backend\": \"%s\", \"seed\": %llu, \"data\": ", c->dtype == DPPROF_DTYPE_BF16 ? "bf16" : "fp32", dpprof_backend_name(s->backend), (unsigned long long)c->seed);
    dpprof__jstr(f, c->data_path);
    fputs(", \"rope_theta\": ", f);
    dpprof__jnum(f, h->rope_theta);
    fputs(", \"norm_eps\": ", f);
    dpprof__jnum(f, h->norm_eps);
    fputs(", \"init_std\": ", f);
    dpprof__jnum(f, c->init_std);
    fprintf(f, ", \"param_count\": %lld, \"trainable_count\": %lld, \"bytes_per_element\": %d, \"memory_limit\": %lld, \"memory_rule\": ",
            (long long)dpprof_session_param_elems(s, 0), (long long)dpprof_session_param_elems(s, 1), s->elem, (long long)c->memory_limit);
    if (c->memory_rule) dpprof__jstr(f, c->memory_rule);
    else fputs("null", f);
    fprintf(f, ", \"fused_clipgrad\": %s, \"batched_clipgrad\": %s, \"fused_noise\": %s, \"dp_warp_tile\": %d, \"wgmma\": %s}",
            c->fused_clipgrad == DPPROF_SWITCH_ON ? "true" : (c->fused_clipgrad == DPPROF_SWITCH_AUTO && dpprof__cg_measured(s, NULL) ? "\"measured\"" : "false"),
            c->batched_clipgrad == DPPROF_SWITCH_ON && s->plan.batched ? "true" : (s->plan.batched && dpprof__cg_measured(s, NULL) ? "\"measured\"" : "false"),
            c->fused_noise == DPPROF_SWITCH_ON ? "true" : (c->fused_noise == DPPROF_SWITCH_AUTO && s->plan.rates.noise_n > 0 && !isnan(s->plan.rates.noise_ms[0]) ? "\"measured\"" : "false"), c->dp_warp_tile,
            c->wgmma == DPPROF_SWITCH_ON || (c->wgmma == DPPROF_SWITCH_AUTO && s->backend == DPPROF_BACKEND_CUDA && c->dtype == DPPROF_DTYPE_BF16 && s->gpu.dev.cc_major == 9 && s->gpu.dev.cc_minor == 0) ? "true" : "false");

    fputs(",\n  \"status\": ", f);
    dpprof__jstr(f, status ? status : "ok");
    if (error) {
        fputs(",\n  \"error\": ", f);
        dpprof__jstr(f, error);
    }
    if (status && !strcmp(status, "oom")) { /* the peak it stopped at is not the configuration's: the dry model's, without the limit */
        int64_t full = -1;
        char why[sizeof dpprof__errbuf];
        memcpy(why, dpprof__errbuf, sizeof why); /* the run's own message stays the last error */
        fputs(",\n  \"peak_without_limit\": {\"bytes\": ", f);
        if (dpprof_session_peak_without_limit(s, &full) == DPPROF_OK) fprintf(f, "%lld", (long long)full);
        else {
            fputs("null, \"error\": ", f);
            dpprof__jstr(f, dpprof_last_error());
        }
        fputs(", \"note\": \"the dry backend's peak of this configuration run again without config.memory_limit (every step; auto keeps the plan the limit made): "
              "what it would need where the run stopped at the limit; peak_memory_mb and breakdown are the run's at the stop\"}",
              f);
        memcpy(dpprof__errbuf, why, sizeof why);
    }
    st = (double *)DPPROF_MALLOC(sizeof(double) * ((size_t)s->run.steps_done + 1));
    for (i = c->warmup; i < s->run.steps_done; i++) {
        if (st) st[measured] = s->run.step_ms[i];
        tsum += s->run.step_ms[i];
        measured++;
    }
    fputs(",\n  \"avg_time_ms\": ", f);
    dpprof__jnum(f, measured && s->backend != DPPROF_BACKEND_DRY ? tsum / measured : NAN);
    fputs(",\n  \"peak_memory_mb\": ", f);
    dpprof__jnum(f, (double)p->peak_bytes / DPPROF__MIB);

    /* the seed's keys first, then the other categories, then exact bytes */
    fputs(",\n  \"breakdown\": {", f);
    {
        static const int seed_order[] = {DPPROF_CAT_MODEL_PARAMETERS, DPPROF_CAT_OPTIMIZER_STATES, DPPROF_CAT_GRADIENTS, DPPROF_CAT_ACTIVATION_HOOKS, DPPROF_CAT_NORM_SAMPLES, DPPROF_CAT_TEMP_MATRICES};
        static const int rest[] = {DPPROF_CAT_ACTIVATIONS, DPPROF_CAT_PER_SAMPLE_GRADIENTS, DPPROF_CAT_LORA, DPPROF_CAT_WORKSPACE, DPPROF_CAT_DATA};
        int k;
        for (k = 0; k < 6; k++) {
            fprintf(f, "%s\"%s_mb\": ", k ? ", " : "", dpprof_category_name(seed_order[k]));
            dpprof__jnum(f, (double)p->peak_by_cat[seed_order[k]] / DPPROF__MIB);
        }
        fputs(", \"total_allocated_mb\": ", f); /* cumulative, as PyTorch's allocated_bytes.all.allocated; live at the end: bytes.final */
        dpprof__jnum(f, (double)p->alloc_bytes_total / DPPROF__MIB);
        fputs(", \"peak_allocated_mb\": ", f);
        dpprof__jnum(f, (double)p->peak_bytes / DPPROF__MIB);
        for (k = 0; k < 5; k++) {
            fprintf(f, ", \"%s_mb\": ", dpprof_category_name(rest[k]));
            dpprof__jnum(f, (double)p->peak_by_cat[rest[k]] / DPPROF__MIB);
        }
        fputs(", \"bytes\": {", f);
        for (k = 0; k < DPPROF_CAT_COUNT; k++) fprintf(f, "%s\"%s\": %lld", k ? ", " : "", dpprof_category_name(k), (long long)p->peak_by_cat[k]);
        fprintf(f, ", \"peak\": %lld, \"final\": %lld}, \"peak_phase\": ", (long long)p->peak_bytes, (long long)p->live_bytes);
        dpprof__jstr(f, dpprof_phase_name(p->peak_phase));
        fprintf(f, ", \"peak_step\": %d, \"peak_event\": %zu}", p->peak_step, p->peak_event);
    }
    fputs(",\n  \"modules\": {", f);
    for (i = 0; i < DPPROF_MOD_COUNT; i++) {
        fprintf(f, "%s\"%s_mb\": ", i ? ", " : "", dpprof_module_name(i));
        dpprof__jnum(f, (double)p->peak_by_mod[i] / DPPROF__MIB);
    }
    fputs(", \"bytes\": {", f);
    for (i = 0; i < DPPROF_MOD_COUNT; i++) fprintf(f, "%s\"%s\": %lld", i ? ", " : "", dpprof_module_name(i), (long long)p->peak_by_mod[i]);
    fputs("}}", f);

    dpprof__write_dist(s, f);
    fputs(",\n  \"phases\": ", f);
    dpprof__write_phases(s, f);

    fputs(",\n  \"snapshots\": [", f);
    for (e = 0; e < p->n_phases; e++) {
        const dpprof_phase_rec *r = &p->phases[e];
        char name[64];
        if (r->step < 0) snprintf(name, sizeof name, "%s", dpprof_phase_name(r->phase));
        else snprintf(name, sizeof name, "step%d.%s", r->step, dpprof_phase_name(r->phase));
        fprintf(f, "%s\n    {\"name\": \"%s\", \"allocated_mb\": ", e ? "," : "", name);
        dpprof__jnum(f, (double)r->bytes_end / DPPROF__MIB);
        fputs(", \"reserved_mb\": ", f); /* cuda: the driver's figure (the pool keeps freed bytes); cpu, dry: null, nothing is reserved */
        dpprof__jnum(f, s->backend == DPPROF_BACKEND_CUDA && e < s->obs.cap_ph_drv ? s->obs.ph_drv[e] / DPPROF__MIB : NAN);
        fputs(", \"timestamp\": ", f);
        dpprof__jnum(f, s->backend == DPPROF_BACKEND_DRY ? NAN : r->t_end_ms / 1e3);
        fprintf(f, ", \"bytes\": %lld}", (long long)r->bytes_end);
    }
    fputs("\n  ]", f);

    fputs(",\n  \"layers\": [", f);
    for (i = 0; i < s->model.n_params; i++) {
        fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
        dpprof__jstr(f, s->model.params[i].name);
        fprintf(f, ", \"shape\": [%d, %d], \"trainable\": %s, \"stored\": \"%s\", \"method\": \"%s\", \"clipped_sum\": \"%s\", \"keeps\": \"%s\", \"clipgrad_kernel\": \"%s\"}",
                s->model.params[i].rows, s->model.params[i].cols, s->model.params[i].trainable ? "true" : "false", dpprof__stored_name(s, i), dpprof_session_param_method(s, i),
                dpprof__clipped_sum_name(s, i), dpprof__keeps_name(s, i), dpprof__clipgrad_name(s, i));
    }
    fputs("\n  ]", f);
    if (!s->plan.tensor) fputs(",\n  \"plan\": null", f); /* the session stopped before its plan (out of memory in the model) */
    else
        fprintf(f, ",\n  \"plan\": {\"clipped_sum\": \"%s\", \"materialise\": %d, \"ghost\": %s, \"batched_clipgrad\": %s, \"gram_on\": \"%s\", \"psg_on\": \"%s\", \"fused_noise\": %s, \"rates\": \"%s\"}",
                c->algo == DPPROF_ALGO_VANILLA ? "none" : (s->plan.two_pass ? "second backward" : (s->plan.bookkeeping ? "book-keeping" : "sum of materialised")), s->plan.materialise,
                s->plan.ghost ? "true" : "false", s->plan.batched ? "true" : "false", dpprof__norms_name(s->plan.gram_on), dpprof__norms_name(s->plan.psg_on), s->plan.fused_noise ? "true" : "false",
                c->algo != DPPROF_ALGO_AUTO ? "none" : (s->plan.rates_given ? "given" : (s->backend == DPPROF_BACKEND_CUDA ? "measured" : "none (flops)")));

    fputs(",\n  \"privacy\": ", f);
    dpprof__write_privacy(s, f);

    for (e = 0; e < p->n_phases; e++) {
        if (p->phases[e].step >= c->warmup && p->phases[e].phase >= DPPROF_PHASE_FORWARD) flops_steps += p->phases[e].flops;
        if (p->phases[e].step >= c->warmup && p->phases[e].phase == DPPROF_PHASE_FORWARD) fwd_flops += p->phases[e].flops;
    }
    fputs(",\n  \"throughput\": {\"tokens_per_s\": ", f);
    dpprof__jnum(f, measured && s->backend != DPPROF_BACKEND_DRY && tsum > 0 ? (double)c->batch * c->seq * measured / (tsum / 1e3) : NAN);
    fputs(", \"step_time_ms_median\": ", f);
    dpprof__jnum(f, st && s->backend != DPPROF_BACKEND_DRY ? dpprof__median(st, (size_t)measured) : NAN);
    fputs(", \"flops_per_step\": ", f);
    dpprof__jnum(f, measured ? flops_steps / measured : NAN);
    dpprof__write_ops(s, f);
    if (s->backend == DPPROF_BACKEND_CUDA && measured && tsum > 0) {
        /* mfu: the flops a step executes (flops_per_step: every op's analytic cost, part 4, summed over the
           step's ops; a frozen weight's gradient is never computed, so never counted) over the mean step time
           and the flop peak of the storage precision (dpprof_flop_peak). model flops: the convention of 3 x the forward's
           analytic flops (forward + a backward of twice its cost: the usual 6 N per token plus attention),
           the same for every algorithm, so the dp overhead shows as lost utilisation; with frozen weights
           (lora) it counts weight gradients that no op computes */
        const double peak = dpprof_flop_peak(&s->gpu.dev, c->dtype);
        fputs(", \"model_flops_per_step\": ", f);
        dpprof__jnum(f, 3.0 * fwd_flops / measured);
        fputs(", \"peak_flops\": ", f);
        dpprof__jnum(f, peak > 0 ? peak : NAN);
        fputs(", \"mfu\": ", f);
        dpprof__jnum(f, peak > 0 ? flops_steps / (tsum / 1e3) / peak : NAN);
        fputs(", \"model_flops_utilization\": ", f);
        dpprof__jnum(f, peak > 0 ? 3.0 * fwd_flops / (tsum / 1e3) / peak : NAN);
        fputs(", \"analytic_flops_share_of_peak\": ", f);
        dpprof__jnum(f, peak > 0 ? flops_steps / (tsum / 1e3) / peak : NAN);
        fputs(", \"kernel_launches_per_step\": ", f);
        dpprof__jnum(f, (double)s->gpu.launches / measured);
        fputs(", \"wgmma_kernels_per_step\": ", f);
        dpprof__jnum(f, (double)s->gpu.wgmma_launches / measured);
        fprintf(f, ", \"mfu_note\": \"mfu = flops_per_step (the analytic flops of the ops a step executes) / mean step time / the %s dense peak of %s (dpprof_flop_peak: data sheet, else SMs x clock x per-SM rate); model_flops_utilization = model_flops_per_step (3 x forward analytic flops) / mean step time / the same peak\"}",
                c->dtype == DPPROF_DTYPE_BF16 ? "bf16 tensor-core" : "fp32 cuda-core", s->gpu.dev.name);
    } else fputs(", \"mfu\": null, \"mfu_note\": \"no hardware peak is defined for the cpu and dry backends\"}", f);
    DPPROF_FREE(st);

    fprintf(f, ",\n  \"meta\": {\"dpprof_version\": \"%s\", \"git_commit\": ", DPPROF_VERSION);
    dpprof__jstr(f, DPPROF_GIT_COMMIT);
    fputs(", \"source_sha256\": ", f);
    dpprof__jstr(f, DPPROF_SOURCE_HASH);
    fputs(", \"source_state\": ", f);
    dpprof__jstr(f, DPPROF_SOURCE_STATE);
    fputs(", \"source_note\": ", f);
    dpprof__jstr(f, DPPROF__SOURCE_NOTE);
    fprintf(f, ", \"backend\": \"%s\", \"device\": ", dpprof_backend_name(s->backend));
    dpprof__jstr(f, s->backend == DPPROF_BACKEND_DRY ? "none (dry run)" : (s->backend == DPPROF_BACKEND_CUDA ? s->gpu.dev.name : "cpu"));
    if (s->backend == DPPROF_BACKEND_CUDA)
        fprintf(f, ", \"driver\": %d, \"cuda_runtime\": %d, \"compute_capability\": \"%d.%d\", \"sm_count\": %d, \"device_memory_bytes\": %zu, \"driver_peak_used_mb\": %.17g, \"driver_note\": \"%s\"",
                s->gpu.dev.driver_version, s->gpu.dev.runtime_version, s->gpu.dev.cc_major, s->gpu.dev.cc_minor, s->gpu.dev.sm_count, s->gpu.dev.total_bytes, (double)s->gpu.drv_peak / 1048576.0,
                "cudaMemGetInfo's used bytes at the accountant's peaks, less those used before the session: the stream-ordered pool keeps freed memory, rounds to its granularity and holds the cuBLAS handle's own state");
    else fputs(", \"driver\": null", f);
    /* the noise's generator; the seed of a secure run is the operating system's and written nowhere */
    fprintf(f, ", \"noise\": {\"generator\": \"%s\", \"secure\": %s, \"seed\": ",
            c->secure_noise ? "chacha20 (a 256-bit key), box-muller, each normal the sum of four over 2" : "philox4x32-10, box-muller",
            c->secure_noise ? "true" : "false");
    if (c->secure_noise) fputs("null", f);
    else fprintf(f, "%llu", (unsigned long long)c->seed);
    fprintf(f, ", \"note\": \"%s\"}", c->secure_noise ? "seeded from the operating system's entropy (getrandom), the seed kept in memory only: the noise and poisson's draws cannot be reproduced" : "seeded from config.seed: anyone who knows it can reproduce and subtract the noise; for measuring, not for releasing a model");
    {
        dpprof_memory_truth m;
        dpprof_session_memory_truth(s, &m);
        fprintf(f, ", \"memory\": {\"accountant_peak_bytes\": %lld, \"dry_peak_bytes\": ", (long long)m.accountant_peak);
        if (m.dry_peak >= 0) fprintf(f, "%lld", (long long)m.dry_peak);
        else fputs("null", f);
        if (s->backend == DPPROF_BACKEND_CUDA) {
            fprintf(f, ", \"driver_peak_bytes\": %lld, \"driver_before_session_bytes\": %lld, \"cublas_workspace_bytes\": %lld, \"gap\": {\"accountant_at_driver_peak_bytes\": %lld, "
                       "\"pool_rounding_bytes\": %lld, \"pool_unused_bytes\": %lld, \"unexplained_bytes\": %lld}, \"note\": \"driver_peak: cudaMemGetInfo's used bytes at the accountant's peaks less "
                       "driver_before_session (the context, cuBLAS's handle, modules loaded, other processes: read after the pool was trimmed, before the first allocation); "
                       "the gap at the reading of the driver's peak: accountant_at_driver_peak + pool_rounding (the stream-ordered pool's used bytes less the requests: its "
                       "rounding, frees the stream has not run) + pool_unused (what the pool holds from the driver, less its use and what it held before) + unexplained "
                       "(cuBLAS's own allocations, lazily loaded kernel code, CUPTI: not visible here) = driver_peak; the cuBLAS workspace is dpprof's, inside the accountant; "
                       "nccl_device (ranks on NCCL): the device memory NCCL's communicator took as it was made, every connection's buffers (NCCL_RUNTIME_CONNECT=0 unless set), "
                       "the free memory before and after; outside the accountant and inside driver_before_session, like the CUDA context\"",
                    (long long)m.driver_peak, (long long)m.driver_before_session, (long long)m.cublas_workspace, (long long)m.accountant_at_driver_peak, (long long)m.pool_rounding,
                    (long long)m.pool_unused, (long long)m.remainder);
            if (m.nccl_device >= 0) fprintf(f, ", \"nccl_device_bytes\": %lld}", (long long)m.nccl_device);
            else fputs(", \"nccl_device_bytes\": null}", f);
        } else fputs(", \"driver_peak_bytes\": null, \"note\": \"accountant and dry plan alone off the gpu\"}", f);
    }
    fputs(", \"dram_note\": ", f);
    dpprof__jstr(f, s->gpu.dram_note[0]          ? s->gpu.dram_note
                    : !c->dram                   ? "not requested (config.dram)"
                    : c->dram == DPPROF_DRAM_OPS ? "per op of warm-up step 0 (throughput.ops), each op a range of CUPTI's range profiler, and per phase their sums (dram__bytes_read/write.sum; l2: lts__t_sectors_srcunit_tex_op_read/write.sum x 32)"
                                                 : "per phase of warm-up step 0, from CUPTI's range profiler (dram__bytes_read/write.sum; l2: lts__t_sectors_srcunit_tex_op_read/write.sum x 32)");
    fputs(", \"batched_clip_bound\": ", f);
    if (!s->plan.batched || isnan(s->dps.eps_ratio_max)) fputs("null", f);
    else {
        fputs("{\"eps_over_norm_max\": ", f);
        dpprof__jnum(f, s->dps.eps_ratio_max);
        fputs(", \"note\": \"the layers on the batched clipped gradient (layers[].clipgrad_kernel) scale dy by c_i in bf16; each sample's factor is C / (||g_i|| + ||eps_i|| + 1e-6), eps_il = 2^-8 ||dy_il|| ||x_il|| over those layers, so that its contribution stays within C whatever the rounding; eps_over_norm_max: the largest ||eps_i|| / ||g_i|| of the run's samples\"}", f);
    }
    if (s->backend == DPPROF_BACKEND_CUDA && c->algo == DPPROF_ALGO_AUTO) {
        fputs(", \"auto_flash_flops_per_s\": {\"gram\": ", f);
        dpprof__jnum(f, s->plan.rates.gram);
        fputs(", \"psg\": ", f);
        dpprof__jnum(f, s->plan.rates.psg);
        fputs(", \"ghost\": ", f);
        if (s->plan.rates.ghost > 0) dpprof__jnum(f, s->plan.rates.ghost);
        else fputs("null", f);
        fputs(", \"gram_cublas\": ", f);
        if (s->plan.rates.gram_cublas > 0) dpprof__jnum(f, s->plan.rates.gram_cublas);
        else fputs("null", f);
        fputs(", \"psg_cublas\": ", f);
        if (s->plan.rates.psg_cublas > 0) dpprof__jnum(f, s->plan.rates.psg_cublas);
        else fputs("null", f);
        fprintf(f, ", \"gram_on\": \"%s\", \"psg_on\": \"%s\"", dpprof__norms_name(s->plan.gram_on), dpprof__norms_name(s->plan.psg_on));
        fputs(", \"note\": \"measured at session start on the physical batch of a (seq, hidden) layer; auto gives each layer the flavour with the smaller flops / rate, each flavour on dpprof's kernels or (bf16) on cuBLAS blocks, whichever was faster (gram_on, psg_on; cublas null: not timed); ghost (its two grams and their dot) is timed only where an exact dry step shows its T x T grams do not raise the peak, else null\"}", f);
        fputs(", \"auto_clipgrad_ms\": ", f);
        if (!dpprof__cg_measured(s, NULL)) fputs("null", f);
        else {
            int first = 1;
            fputs("{\"note\": \"bf16 book-keeping: one clipped weight gradient at each distinct linear shape and the physical batch, timed at session start, on cuBLAS per sample and on the fused kernel (the batched GEMM, whose factors are lowered, is no candidate: batched null); each layer takes the faster (layers[].clipgrad_kernel); null: not timed\", \"shapes\": [", f);
            for (i = 0; i < s->model.n_params; i++) {
                if (!dpprof__cg_measured(s, &i)) continue;
                fprintf(f, "%s{\"shape\": [%d, %d], \"seq\": %d, \"cublas\": ", first ? "" : ", ", s->model.params[i].rows, s->model.params[i].cols, dpprof__param_T(s, i));
                dpprof__jnum(f, s->plan.tensor[i].clipgrad_ms[0]);
                fputs(", \"fused\": ", f);
                dpprof__jnum(f, s->plan.tensor[i].clipgrad_ms[1]);
                fputs(", \"batched\": ", f);
                dpprof__jnum(f, s->plan.tensor[i].clipgrad_ms[2]);
                fputs("}", f);
                first = 0;
            }
            fputs("]}", f);
        }
        fputs(", \"auto_noise_ms\": ", f);
        if (!(s->plan.rates.noise_n > 0 && !isnan(s->plan.rates.noise_ms[0]))) fputs("null", f);
        else {
            fputs("{\"two_passes\": ", f);
            dpprof__jnum(f, s->plan.rates.noise_ms[0]);
            fputs(", \"one_pass\": ", f);
            dpprof__jnum(f, s->plan.rates.noise_ms[1]);
            fprintf(f, ", \"weights\": %lld, \"fused\": %s, \"note\": \"the noise and the optimizer step on the largest trainable tensor's count of weights (at most 2^22), timed at session start as two passes over the gradient and as one; the steps take the faster (--fused-noise or --separate-noise force one)\"}",
                    (long long)s->plan.rates.noise_n, s->plan.fused_noise ? "true" : "false");
        }
    }
    fprintf(f, ", \"seed\": %llu, \"date\": \"%s\", \"real\": \"%s\", \"storage\": \"%s\"}", (unsigned long long)c->seed, date,
            sizeof(dpprof_real) == 8 ? "double" : "float",
            c->dtype == DPPROF_DTYPE_BF16 ? "bf16: activations and the matmul weights' working copies (counted as weights); fp32: master weights, gradients, optimizer states, per-sample gradients, rstd, lse, losses"
                                          : "all tensors in the real type");

    fputs(",\n  \"losses\": [", f);
    for (i = 0; i < s->run.steps_done; i++) {
        fputs(i ? ", " : "", f);
        dpprof__jnum(f, s->run.step_loss[i]);
    }
    fputs("]", f);

    /* the whole event log: enough to redraw the live-bytes timeline from the file alone */
    if (c->no_timeline) {
        fputs(",\n  \"timeline\": null\n}\n", f);
        return ferror(f) ? dpprof__fail(DPPROF_ERR_IO, "writing the result json failed") : DPPROF_OK;
    }
    fputs(",\n  \"timeline\": {", f);
    dpprof__timeline_arrays(f, p, s->backend != DPPROF_BACKEND_DRY, "\n    ");
    fputs(",\n    \"marks\": [", f);
    for (e = 0; e < p->n_phases; e++) {
        fprintf(f, "%s{\"phase\": %d, \"step\": %d, \"event\": %zu, \"t_ms\": ", e ? ", " : "", p->phases[e].phase, p->phases[e].step, p->phases[e].event_start);
        dpprof__jnum(f, p->phases[e].t_start_ms);
        fputs("}", f);
    }
    fputs("]}\n}\n", f);
    return ferror(f) ? dpprof__fail(DPPROF_ERR_IO, "writing the result json failed") : DPPROF_OK;
}

/* ---- --trace --------------------------------------------------------------------------------- */
/* dry runs have no clock: there one event is one microsecond of the trace's time axis */
DPPROF_API int dpprof_session_write_trace(const dpprof_session *s, FILE *f) {
    const dpprof_prof *p = &s->prof;
    const int dry = s->backend == DPPROF_BACKEND_DRY;
    int last = 0, from;
    size_t i;
    if (!f) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_session_write_trace: NULL file");
    /* the last trace_steps steps: a trace of a long run stays the size of a short one's */
    for (i = 0; i < p->n_phases; i++) last = p->phases[i].step > last ? p->phases[i].step : last;
    from = last - (s->cfg.trace_steps > 0 ? s->cfg.trace_steps : 2) + 1;
    fprintf(f, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"dpprof_version\": \"%s\", \"backend\": \"%s\", \"clock\": \"%s\", \"steps\": [%d, %d]},\n\"traceEvents\": [\n",
            DPPROF_VERSION, dpprof_backend_name(s->backend), dry ? "event index (dry run)" : "measured", from > 0 ? from : 0, last);
    fputs("{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"args\": {\"name\": \"dpprof\"}}", f);
    dpprof__trace_phases(f, p, dry, from);
    if (s->obs.n_ops) fprintf(f, ",\n{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 2, \"args\": {\"name\": \"%s\"}}", s->backend == DPPROF_BACKEND_CUDA ? "ops (gpu kernels, cuda events)" : "ops (cpu reference)");
    for (i = 0; i < s->obs.n_ops; i++) {
        const dpprof__op_rec *o = &s->obs.ops[i];
        if (!(o->t0 == o->t0) || !(o->t1 == o->t1)) continue; /* not timed (a call outside a step) */
        if (o->phase_rec < p->n_phases && p->phases[o->phase_rec].step < from) continue;
        fputs(",\n{\"name\": ", f);
        dpprof__jstr(f, o->name);
        fputs(", \"cat\": \"op\", \"ph\": \"X\", \"pid\": 1, \"tid\": 2, \"ts\": ", f);
        dpprof__jnum(f, o->t0 * 1e3);
        fputs(", \"dur\": ", f);
        dpprof__jnum(f, (o->t1 - o->t0) * 1e3);
        fputs(", \"args\": {\"flops\": ", f);
        dpprof__jnum(f, o->flops);
        fputs(", \"bytes\": ", f);
        dpprof__jnum(f, o->bytes);
        fputs("}}", f);
    }
    dpprof__trace_counters(f, p, dry, from);
    fputs("\n]}\n", f);
    return ferror(f) ? dpprof__fail(DPPROF_ERR_IO, "writing the trace failed") : DPPROF_OK;
}

/* ---- --dump: safetensors + step.json --------------------------------------------------------- */
typedef struct dpprof__st_entry {
    const char *name;
    const char *dtype; /* "F32" or "I64" (ints, as PyTorch's losses and embeddings take them) */
    int ndim, dims[3];
    const void *data;
    int64_t n;     /* elements */
    int from_real; /* data is dpprof_real: converted to f32 on write */
} dpprof__st_entry;

/* safetensors: u64 little-endian header length, a json header, then the raw little-endian data */
static int dpprof__write_safetensors(const char *path, const dpprof__st_entry *ents, int n) {
    FILE *f;
    char *hdr;
    size_t cap = 256 + (size_t)n * 160, len = 0;
    uint64_t off = 0, hl;
    unsigned char lenb[8];
    int i, k;
    hdr = (char *)DPPROF_MALLOC(cap);
    if (!hdr) return dpprof__fail(DPPROF_ERR_OOM, "%s: cannot build the header", path);
    len += (size_t)snprintf(hdr + len, cap - len, "{\"__metadata__\":{\"format\":\"pt\",\"producer\":\"dpprof %s\"}", DPPROF_VERSION);
    for (i = 0; i < n; i++) {
        uint64_t nb = (uint64_t)ents[i].n * (ents[i].from_real ? 4u : 8u);
        len += (size_t)snprintf(hdr + len, cap - len, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[", ents[i].name, ents[i].dtype);
        for (k = 0; k < ents[i].ndim; k++) len += (size_t)snprintf(hdr + len, cap - len, "%s%d", k ? "," : "", ents[i].dims[k]);
        len += (size_t)snprintf(hdr + len, cap - len, "],\"data_offsets\":[%llu,%llu]}", (unsigned long long)off, (unsigned long long)(off + nb));
        off += nb;
    }
    len += (size_t)snprintf(hdr + len, cap - len, "}");
    while (len % 8) hdr[len++] = ' '; /* the data starts 8-byte aligned */
    hl = len;
    for (k = 0; k < 8; k++) lenb[k] = (unsigned char)(hl >> (8 * k));
    f = fopen(path, "wb");
    if (!f) {
        DPPROF_FREE(hdr);
        return dpprof__fail(DPPROF_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    }
    fwrite(lenb, 1, 8, f);
    fwrite(hdr, 1, len, f);
    DPPROF_FREE(hdr);
    for (i = 0; i < n; i++) {
        int64_t e;
        for (e = 0; e < ents[i].n; e++) {
            uint64_t u;
            unsigned char b[8];
            int nb = 8;
            if (ents[i].from_real) {
                float v = (float)((const dpprof_real *)ents[i].data)[e];
                uint32_t u32;
                memcpy(&u32, &v, 4);
                u = u32;
                nb = 4;
            } else {
                int64_t v = ((const int *)ents[i].data)[e];
                memcpy(&u, &v, 8);
            }
            for (k = 0; k < nb; k++) b[k] = (unsigned char)(u >> (8 * k));
            fwrite(b, 1, (size_t)nb, f);
        }
    }
    {
        const int bad = ferror(f) || fflush(f) != 0, e = errno;
        if (fclose(f) != 0 || bad) return dpprof__fail(DPPROF_ERR_IO, "%s: write failed: %s", path, strerror(bad ? e : errno));
    }
    return DPPROF_OK;
}

/* config.json: the model as Hugging Face transformers defines it, so that
   LlamaForCausalLM.from_pretrained(dir) (task lm) or LlamaForSequenceClassification (task cls, which pools
   the last position: pad_token_id is null, so give it one sample at a time or pool by hand) loads the dump */
static int dpprof__dump_hf_config(const dpprof_session *s, const char *dir) {
    const dpprof_shape *h = &s->sh;
    const int cls = s->cfg.task != DPPROF_TASK_LM;
    char path[4096];
    FILE *f;
    int k;
    snprintf(path, sizeof path, "%s/config.json", dir);
    f = fopen(path, "w");
    if (!f) return dpprof__fail(DPPROF_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
    fprintf(f, "{\n  \"architectures\": [\"%s\"],\n  \"model_type\": \"llama\",\n", cls ? "LlamaForSequenceClassification" : "LlamaForCausalLM");
    fprintf(f, "  \"vocab_size\": %d,\n  \"hidden_size\": %d,\n  \"intermediate_size\": %d,\n  \"num_hidden_layers\": %d,\n",
            h->V, h->C, h->F, h->L);
    fprintf(f, "  \"num_attention_heads\": %d,\n  \"num_key_value_heads\": %d,\n  \"head_dim\": %d,\n  \"max_position_embeddings\": %d,\n",
            h->NH, h->NKV, h->HS, s->cfg.seq);
    fputs("  \"rope_theta\": ", f);
    dpprof__jnum(f, h->rope_theta);
    fputs(",\n  \"rope_scaling\": null,\n  \"rms_norm_eps\": ", f);
    dpprof__jnum(f, h->norm_eps);
    fputs(",\n  \"initializer_range\": ", f);
    dpprof__jnum(f, s->cfg.init_std);
    /* tied: model.safetensors has no lm_head.weight, and from_pretrained ties it to the embedding */
    fprintf(f, ",\n  \"hidden_act\": \"silu\",\n  \"attention_bias\": false,\n  \"mlp_bias\": false,\n  \"attention_dropout\": 0.0,\n"
               "  \"tie_word_embeddings\": %s,\n  \"pad_token_id\": null,\n  \"bos_token_id\": null,\n  \"eos_token_id\": null,\n"
               "  \"use_cache\": false,\n  \"torch_dtype\": \"float32\"",
            h->tied ? "true" : "false");
    if (cls) {
        fprintf(f, ",\n  \"num_labels\": %d,\n  \"id2label\": {", h->K);
        for (k = 0; k < h->K; k++) fprintf(f, "%s\"%d\": \"LABEL_%d\"", k ? ", " : "", k, k);
        fputs("}", f);
    }
    fprintf(f, ",\n  \"dpprof_version\": \"%s\"\n}\n", DPPROF_VERSION);
    {
        const int bad = ferror(f) || fflush(f) != 0, e = errno;
        if (fclose(f) != 0 || bad) return dpprof__fail(DPPROF_ERR_IO, "%s: write failed: %s", path, strerror(bad ? e : errno));
    }
    return DPPROF_OK;
}

DPPROF_API int dpprof_session_dump(dpprof_session *s, const char *dir) {
    const int B = s->cfg.batch, T = s->cfg.seq, tw = s->cfg.task == DPPROF_TASK_LM ? T : 1;
    int *tok = NULL, *tgt = NULL, i, rc = DPPROF_OK;
    double *losses = NULL;
    char path[4096];
    dpprof__st_entry *ents = NULL;
    dpprof_real **hostw = NULL;
    FILE *f;
    if (s->backend == DPPROF_BACKEND_DRY) return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "dpprof_session_dump needs computed values: config.backend = cpu or cuda (this run is dry)");
    if (s->dist.real) return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "dpprof_session_dump with config.ranks = %d: the dump's gradients are one process's; run it with one rank", s->dist.n);
    if (s->backend == DPPROF_BACKEND_CUDA) { /* host copies of every tensor, freed at the end */
        hostw = (dpprof_real **)DPPROF_MALLOC(sizeof(dpprof_real *) * (size_t)s->model.n_params);
        if (!hostw) return dpprof__fail(DPPROF_ERR_OOM, "dpprof_session_dump: out of memory");
        memset(hostw, 0, sizeof(dpprof_real *) * (size_t)s->model.n_params);
    }
    tok = (int *)DPPROF_MALLOC(sizeof(int) * (size_t)B * T);
    tgt = (int *)DPPROF_MALLOC(sizeof(int) * (size_t)B * tw);
    losses = (double *)DPPROF_MALLOC(sizeof(double) * (size_t)B);
    ents = (dpprof__st_entry *)DPPROF_MALLOC(sizeof(dpprof__st_entry) * (size_t)(s->model.n_params + 2));
    if (!tok || !tgt || !losses || !ents) {
        rc = dpprof__fail(DPPROF_ERR_OOM, "dpprof_session_dump: out of memory");
        goto done;
    }
    /* the first logical step's batch, and sum_i grad loss_i at the current parameters, accumulated
       over the physical batches exactly as a training step does it */
    dpprof_session_batch(s, 0, 0, B, tok, tgt);
    for (i = 0; i < s->model.n_params; i++) {
        dpprof__st_entry *e = &ents[i];
        e->name = s->model.params[i].name;
        e->dtype = "F32";
        e->ndim = s->model.params[i].rows == 1 ? 1 : 2;
        e->dims[0] = s->model.params[i].rows == 1 ? s->model.params[i].cols : s->model.params[i].rows;
        e->dims[1] = s->model.params[i].cols;
        e->data = s->model.params[i].w.data;
        e->n = s->model.params[i].w.n;
        e->from_real = 1;
        if (hostw) {
            hostw[i] = (dpprof_real *)DPPROF_MALLOC(sizeof(dpprof_real) * (size_t)e->n);
            if (!hostw[i]) {
                rc = dpprof__fail(DPPROF_ERR_OOM, "dpprof_session_dump: out of memory");
                goto done;
            }
            if ((rc = dpprof_session_param_read(s, i, 'w', hostw[i])) != DPPROF_OK) goto done;
            e->data = hostw[i];
        }
    }
    snprintf(path, sizeof path, "%s/model.safetensors", dir);
    if ((rc = dpprof__write_safetensors(path, ents, s->model.n_params)) != DPPROF_OK) goto done;
    /* the algorithm's own path: sum_i c_i grad loss_i (c_i = 1 when it does not clip), before noise */
    dpprof__zero_grads(s);
    rc = dpprof__given(s, tok, tgt, B, losses, 0, 1.0);
    if (rc != DPPROF_OK) goto done;
    { /* only what trains has a gradient (lora freezes the base model) */
        int k = 0;
        for (i = 0; i < s->model.n_params; i++) {
            if (!s->model.params[i].trainable) continue;
            ents[k] = ents[i];
            ents[k].data = s->model.params[i].g.data;
            if (hostw) {
                if ((rc = dpprof_session_param_read(s, i, 'g', hostw[i])) != DPPROF_OK) goto done;
                ents[k].data = hostw[i];
            }
            k++;
        }
        snprintf(path, sizeof path, "%s/grads.safetensors", dir);
        if ((rc = dpprof__write_safetensors(path, ents, k)) != DPPROF_OK) goto done;
    }
    dpprof__zero_grads(s);
    ents[0].name = "tokens";
    ents[0].dtype = "I64";
    ents[0].ndim = 2;
    ents[0].dims[0] = B;
    ents[0].dims[1] = T;
    ents[0].data = tok;
    ents[0].n = (int64_t)B * T;
    ents[0].from_real = 0;
    ents[1].name = s->cfg.task == DPPROF_TASK_LM ? "targets" : "labels";
    ents[1].dtype = "I64";
    ents[1].ndim = tw == 1 ? 1 : 2;
    ents[1].dims[0] = B;
    ents[1].dims[1] = T;
    ents[1].data = tgt;
    ents[1].n = (int64_t)B * tw;
    ents[1].from_real = 0;
    snprintf(path, sizeof path, "%s/batch.safetensors", dir);
    if ((rc = dpprof__write_safetensors(path, ents, 2)) != DPPROF_OK) goto done;
    if ((rc = dpprof__dump_hf_config(s, dir)) != DPPROF_OK) goto done;
    snprintf(path, sizeof path, "%s/step.json", dir);
    f = fopen(path, "w");
    if (!f) {
        rc = dpprof__fail(DPPROF_ERR_IO, "%s: cannot write: %s", path, strerror(errno));
        goto done;
    }
    /* the tensors are the fp32 masters and gradients either way; dtype says how they were computed */
    fprintf(f, "{\n  \"algo\": \"%s\",\n  \"dtype\": \"%s\",\n  \"grads\": \"sum over the batch of c_i * grad loss_i, before noise; c_i = 1 without clipping\",\n  \"batch\": %d,\n  \"per_sample_loss\": [",
            dpprof_algo_name(s->cfg.algo), s->cfg.dtype == DPPROF_DTYPE_BF16 ? "bf16" : "fp32", B);
    for (i = 0; i < B; i++) {
        fputs(i ? ", " : "", f);
        dpprof__jnum(f, losses[i]);
    }
    fputs("],\n  \"per_sample_norm\": ", f);
    if (!s->dps.dp) fputs("null", f);
    else {
        fputs("[", f);
        for (i = 0; i < B; i++) {
            fputs(i ? ", " : "", f);
            dpprof__jnum(f, s->dps.last_norms[i]);
        }
        fputs("]", f);
    }
    fprintf(f, ",\n  \"max_grad_norm\": ");
    dpprof__jnum(f, s->dps.dp ? s->cfg.max_grad_norm : NAN);
    fprintf(f, ",\n  \"clipping\": \"%s\",\n  \"clip_factor\": [", !s->dps.dp ? "none" : (s->cfg.per_layer_clipping ? "per-layer (one factor per tensor: null here)" : "flat"));
    for (i = 0; i < B; i++) {
        fputs(i ? ", " : "", f);
        dpprof__jnum(f, s->dps.dp ? s->dps.last_clip[i] : 1.0);
    }
    fputs("],\n  \"loss\": ", f);
    {
        double m = 0;
        for (i = 0; i < B; i++) m += losses[i];
        dpprof__jnum(f, m / B);
    }
    fputs("\n}\n", f);
    {
        const int bad = ferror(f) || fflush(f) != 0, e = errno;
        if ((fclose(f) != 0 || bad) && rc == DPPROF_OK) rc = dpprof__fail(DPPROF_ERR_IO, "%s: write failed: %s", path, strerror(bad ? e : errno));
    }
done:
    for (i = 0; hostw && i < s->model.n_params; i++) DPPROF_FREE(hostw[i]);
    DPPROF_FREE(hostw);
    DPPROF_FREE(tok);
    DPPROF_FREE(tgt);
    DPPROF_FREE(losses);
    DPPROF_FREE(ents);
    return rc;
}

/* =============================================================================================
   PART 6 (implementation): cuda runtime without dpprof_kernels.cu
   ============================================================================================= */
#ifndef DPPROF_CUDA
/* built without dpprof_kernels.cu: the cuda entry points say so (a table, one to a line) */
/* clang-format off */
#define DPPROF__NO_CUDA_MSG "this dpprof was built without CUDA (no nvcc at build time)"
DPPROF_API int dpprof_cuda_device_count(int *count) {
    if (count) *count = 0;
    return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG);
}
DPPROF_API int dpprof_cuda_device_info(int device, dpprof_device_info *info) {
    (void)device;
    if (info) memset(info, 0, sizeof *info);
    return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG);
}
DPPROF_API int dpprof_cuda_malloc(dpprof_prof *p, void **ptr, size_t bytes, int category, int module) {
    (void)p; (void)bytes; (void)category; (void)module;
    if (ptr) *ptr = NULL;
    return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG);
}
DPPROF_API int dpprof_cuda_free(dpprof_prof *p, void *ptr) {
    (void)p; (void)ptr;
    return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG);
}
DPPROF_API int dpprof_cuda_init(int device) { (void)device; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_cuda_alloc(void **ptr, size_t bytes) { (void)bytes; if (ptr) *ptr = NULL; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API void dpprof_cuda_release(void *ptr) { (void)ptr; }
DPPROF_API int dpprof_cuda_copy(void *dst, const void *src, size_t bytes, int dir) { (void)dst; (void)src; (void)bytes; (void)dir; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_cuda_zero(void *dst, size_t bytes) { (void)dst; (void)bytes; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_cuda_sync(void) { return DPPROF_OK; }
DPPROF_API int dpprof_cuda_trim(void) { return DPPROF_OK; }
DPPROF_API int dpprof_cuda_set_workspace(void *ptr, size_t bytes) { (void)ptr; (void)bytes; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_cuda_mem_used(size_t *used) { if (used) *used = 0; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_cuda_pool_usage(size_t *used, size_t *reserved) { if (used) *used = 0; if (reserved) *reserved = 0; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_cuda_event(int *id) { if (id) *id = -1; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_cuda_event_ms(int a, int b, double *ms) { (void)a; (void)b; if (ms) *ms = 0; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API void dpprof_cuda_events_reset(void) {}
DPPROF_API int dpprof_cuda_set_storage(dpprof_dtype dtype) { (void)dtype; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API dpprof_dtype dpprof_cuda_storage(void) { return DPPROF_DTYPE_FP32; }
DPPROF_API long long dpprof_cuda_launch_count(void) { return 0; }
DPPROF_API long long dpprof_cuda_work_count(void) { return 0; }
DPPROF_API long long dpprof_cuda_wgmma_count(void) { return 0; }
static dpprof_cuda_tuning dpprof__tuning; /* kept, so that get returns what set took */
DPPROF_API int dpprof_cuda_set_tuning(const dpprof_cuda_tuning *t) {
    const char *bad = t ? DPPROF_CUDA_TUNING_BAD(t) : NULL;
    if (bad) return dpprof__fail(DPPROF_ERR_INVALID, "dpprof_cuda_set_tuning: %s is out of its set", bad);
    if (t && t->wgmma > 0) return dpprof__fail(DPPROF_ERR_UNSUPPORTED, "dpprof_cuda_set_tuning: wgmma runs on compute capability 9.0 only, and this build has no CUDA");
    if (t) dpprof__tuning = *t;
    else memset(&dpprof__tuning, 0, sizeof dpprof__tuning);
    return DPPROF_OK;
}
DPPROF_API void dpprof_cuda_get_tuning(dpprof_cuda_tuning *t) { if (t) *t = dpprof__tuning; }
DPPROF_API int dpprof_cuda_counters_begin(int max_ranges) { (void)max_ranges; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_cuda_counters_push(const char *name) { (void)name; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_cuda_counters_pop(void) { return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_cuda_counters_end(dpprof_counter_range *out, int max, int *n) { (void)out; (void)max; if (n) *n = 0; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_nccl_available(void) { return 0; }
DPPROF_API int dpprof_nccl_id(void *id, size_t bytes) { (void)id; (void)bytes; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_nccl_init(const void *id, int ranks, int rank) { (void)id; (void)ranks; (void)rank; return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG); }
DPPROF_API int dpprof_nccl_device_bytes(int64_t *bytes) {
    if (bytes) *bytes = -1;
    return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG);
}
DPPROF_API void dpprof_nccl_finish(void) {}
DPPROF_API void dpprof_nccl_allreduce(float *x, size_t n) { (void)x; (void)n; }
DPPROF_API void dpprof_nccl_reduce_scatter(float *x, size_t n, size_t cap) { (void)x; (void)n; (void)cap; }
DPPROF_API void dpprof_nccl_allgather(float *x, size_t n, size_t cap) { (void)x; (void)n; (void)cap; }
DPPROF_API void dpprof_nccl_allgather_bf16(dpprof_bf16 *x, size_t n, size_t cap) { (void)x; (void)n; (void)cap; }
DPPROF_API int dpprof_cudnn_available(void) { return 0; }
DPPROF_API int dpprof_cudnn_attention_plan(int B, int T, int NH, int NKV, int HS, size_t *ws, int *deterministic) {
    (void)B; (void)T; (void)NH; (void)NKV; (void)HS;
    if (ws) *ws = 0;
    if (deterministic) *deterministic = 0;
    return dpprof__fail(DPPROF_ERR_NO_CUDA, DPPROF__NO_CUDA_MSG);
}
DPPROF_API void dpprof_cudnn_attention_fwd_gpu(float *out, float *lse, const float *q, const float *k, const float *v, int B, int T, int NH, int NKV, int HS, void *ws, size_t ws_bytes) {
    (void)out; (void)lse; (void)q; (void)k; (void)v; (void)B; (void)T; (void)NH; (void)NKV; (void)HS; (void)ws; (void)ws_bytes;
}
DPPROF_API void dpprof_cudnn_attention_bwd_gpu(float *dq, float *dk, float *dv, const float *dout, const float *q, const float *k, const float *v, const float *out, const float *lse, int B, int T, int NH, int NKV, int HS, void *ws, size_t ws_bytes) {
    (void)dq; (void)dk; (void)dv; (void)dout; (void)q; (void)k; (void)v; (void)out; (void)lse; (void)B; (void)T; (void)NH; (void)NKV; (void)HS; (void)ws; (void)ws_bytes;
}
/* clang-format on */
#endif
#endif /* DPPROF_ENGINE */

#ifdef __cplusplus
}
#endif
#endif /* DPPROF_IMPLEMENTATION_DONE */
#endif /* DPPROF_IMPLEMENTATION */
