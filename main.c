/* main.c - the dpprof command line: run, fit, sweep, report, plot, epsilon, presets, devices, attnbench. the one
   translation unit of the program: dpprof.h's, dpprof_tools.h's implementations, and the command line's parts
   (dpprof_cli.h: options, messages, files; dpprof_experiments.h: sweep, report, timelines).
   build: make (see Makefile); usage: dpprof --help */
#define _XOPEN_SOURCE 700 /* POSIX 2008 with realpath */
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#define DPPROF_PLOT_TRUETYPE /* the figures' text in a TrueType font: stb_truetype (libstb-dev) compiled here */
#define STB_TRUETYPE_IMPLEMENTATION
#define STBTT_STATIC
#include "dpprof_tools.h"
#include "dpprof_cli.h"
#include "dpprof_experiments.h"
#ifdef DPPROF_MPI
#include <mpi.h>
#endif

/* ---- top-level help ---------------------------------------------------------------------------- */
static void help_main(void) {
    printf("dpprof %s - exact memory, time and traffic profiles of DP-SGD transformer training\n\n"
           "usage: dpprof COMMAND [options]\n\n"
           "commands:\n"
           "  run       train a Llama-style model for a few steps and profile it (dpprof run --help)\n"
           "  fit       what fits a GPU, how fast, at what sigma: every algorithm, checkpointing, ZeRO stage\n"
           "            and LoRA rank at its largest physical batch (dpprof fit --help)\n"
           "  plot      render a figure from result JSON (dpprof plot --help)\n"
           "  sweep     run every configuration of an experiment file, one process each, resumable\n"
           "            (dpprof sweep --help)\n"
           "  report    figures, LaTeX tables, macros and a summary of a sweep (dpprof report --help;\n"
           "            'dpprof tables' is the same command)\n"
           "  epsilon   privacy spent by DP-SGD: the RDP or the tight PLD accountant (dpprof epsilon --help)\n"
           "  presets   list the model presets and their shapes\n"
           "  devices   list the GPUs the cuda backend sees, with their peaks (exit 1 when none)\n"
           "  attnbench time the attention kernels alone on the GPU, every variant (dpprof attnbench --help)\n"
           "  version   print the version\n\n"
           "backends: cpu (reference arithmetic), dry (exact memory of any size, no arithmetic),\n"
           "cuda (GPU kernels, fp32 or bf16), auto (cuda when a GPU is visible, else cpu).\n"
           "exit codes: 0 ok, 1 runtime error, 2 bad input, 3 out of memory (result JSON says oom).\n",
           DPPROF_VERSION);
}

typedef struct plot_opts {
    const char *out, *title;
} plot_opts;

static const cli_opt plot_opt[] = {
    {NULL, NULL, CLI_HEAD, .help = "options:"},
    {"--out", "FILE.png", CLI_TEXT, .field = offsetof(plot_opts, out), .help = "the figure (written atomically)"},
    {"--title", "TEXT", CLI_TEXT, .field = offsetof(plot_opts, title), .help = "its title (default: what the results ran)"},
    {"--help", NULL, CLI_HELP, .help = "this text"},
};

static const cli_command plot_cmd = {"plot", "usage: dpprof plot timeline RESULT.json [RESULT.json ...] --out FILE.png [--title TEXT]\n"
                                             "       dpprof plot fit-check FIT-CHECK.json --out FILE.png [--title TEXT]",
                                     "  timeline   live memory over the run, stacked by category, phases marked\n"
                                     "             (x: time in ms when the run measured time; allocation events for dry runs).\n"
                                     "             several results (up to 8): one panel each, named by its file, on shared axes\n"
                                     "  fit-check  experiments/peers.py fit-check's records: per configuration and GPU, the largest\n"
                                     "             physical batch dpprof fit gives for dpprof's engine and for PyTorch's loop, and\n"
                                     "             the largest PyTorch's own tracker admits\n",
                                     plot_opt, CLI_N(plot_opt), 64, NULL, NULL};

static char run_dump_error[600]; /* why the dump failed, for the result */
static int run_dump(void *ctx, const char *dir) {
    if (dpprof_session_dump((dpprof_session *)ctx, dir) == DPPROF_OK) return 0;
    snprintf(run_dump_error, sizeof run_dump_error, "%.590s", dpprof_last_error());
    cli_fail(0, "--dump: %s", dpprof_last_error());
    return -1;
}

/* an MPI job (mpirun -np N dpprof run ...): this process's rank and the job's size; 0 and 1 otherwise */
static int mpi_rank, mpi_world = 1, mpi_agreed;

/* the ranks agree that every one of them is ready to run (ok: this one is); a rank that stops before it (bad
   input that only it sees, as rank 0's --out) agrees with 0 on its way out (main), so that no rank waits for it */
static int mpi_agree(int ok) {
#ifdef DPPROF_MPI
    if (mpi_world > 1) MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
#endif
    mpi_agreed = 1;
    return ok;
}

/* before the run, from one physical batch on the dry backend (in process, a fraction of a second): byte counts are
   64-bit, so a dry run without a memory limit whose live bytes or whose total of every allocation would pass 2^63
   would stop mid-run (in the accountant): refused here, past 2^62 (what the probe leaves out, --data's bytes,
   the other physical batches' inputs, is far less than the margin). and a trace or a result past FILE_MAX_BYTES is
   refused with its size, where a long run's --trace-steps or --steps would write gigabytes: the sizes are upper
   bounds (every number at its longest), and the writers check the size again before a file is put in place.
   1 after saying why, else 0 */
#define RUN_MAX_BYTES ((int64_t)1 << 62)
#define FILE_MAX_BYTES file_max_bytes()
/* 1 GiB; DPPROF_FILE_MAX (bytes, 1 MiB to 1 GiB) lowers it, for the tests of the bound */
static double file_max_bytes(void) {
    const char *e = getenv("DPPROF_FILE_MAX");
    const double v = e ? strtod(e, NULL) : 0.0;
    return v >= 1048576.0 && v <= (double)(1 << 30) ? v : (double)(1 << 30);
}
/* the longest a trace's allocation event can be: its fixed text, a time of 24 characters, and for every category
   with an allocation its name and a count of 20 digits (dpprof__trace_counters); a phase or an op record at most 320 */
static double trace_event_bytes(const dpprof_prof *p) {
    int used[DPPROF_CAT_COUNT] = {0}, c;
    double b = 89.0;
    size_t i;
    for (i = 0; i < p->n_events; i++) used[p->events[i].category] |= p->events[i].bytes > 0;
    for (c = 0; c < DPPROF_CAT_COUNT; c++)
        if (used[c]) b += (double)strlen(dpprof_category_name(c)) + 26.0;
    return b;
}
#define TRACE_RECORD_BYTES 320.0
/* a result's per-step records at their longest: a snapshot a phase record (a step's name, three numbers of 24
   characters, a count of 20 digits) and a loss */
#define RESULT_RECORD_BYTES 200.0
#define RESULT_LOSS_BYTES 26.0
/* the bound again as a file is put in place: a file past FILE_MAX_BYTES is not committed (the estimate above is an
   upper bound, so this never happens but where it is wrong). 1 after saying why and removing the temporary */
static int out_past_bound(out_file *o, const char *what, const char *hint) {
    char hb[32], hb2[32];
    long pos;
    if (o->kind != OUT_FILE || fflush(o->f) != 0 || (pos = ftell(o->f)) < 0 || (double)pos <= FILE_MAX_BYTES) return 0;
    cli_fail(0, "%s '%s' came to %s, past the %s a file of dpprof may hold: not written; %s", what, o->name, human_bytes((double)pos, hb, sizeof hb),
             human_bytes(FILE_MAX_BYTES, hb2, sizeof hb2), hint);
    out_abort(o);
    return 1;
}

static int run_too_big(const dpprof_config *cfg, const dpprof_config *resolved, int limit_bytes, int trace, int result) {
    dpprof_config probe = *cfg;
    dpprof_session *d = NULL;
    long long more, live;
    char cat[64], mod[64], hb[32], hb2[32];
    int rc;
    size_t e0 = 0;
    int64_t a0 = 0;
    const double nphys = (double)resolved->batch / ((double)resolved->physical_batch * resolved->ranks), steps = (double)resolved->warmup + resolved->steps;
    probe.backend = DPPROF_BACKEND_DRY;
    probe.memory_limit = RUN_MAX_BYTES;
    probe.steps = 1;
    probe.warmup = 0;
    probe.physical_batch = resolved->physical_batch; /* the peak of a step is one physical batch's */
    probe.batch = resolved->physical_batch * resolved->ranks;
    probe.no_timeline = 0;
    probe.trace_ops = probe.op_times = 0;
    probe.dram = DPPROF_DRAM_OFF;
    probe.data_path = NULL;
    rc = dpprof_session_create(&probe, &d);
    size_t r0 = 0;
    if (rc == DPPROF_OK) e0 = dpprof_session_prof(d)->n_events, a0 = dpprof_session_prof(d)->alloc_bytes_total, r0 = dpprof_session_prof(d)->n_phases;
    if (rc == DPPROF_OK) rc = dpprof_session_step(d);
    if (rc == DPPROF_OK) { /* a step's allocations and events: the physical batch's, times the physical batches */
        const dpprof_prof *p = dpprof_session_prof(d);
        const long long batch_bytes = (long long)(p->alloc_bytes_total - a0);
        const double total = (double)a0 + (double)batch_bytes * nphys * steps;
        const double per_step = (double)(p->n_events - e0) * nphys, tsteps = resolved->trace_steps > 0 ? resolved->trace_steps : 2;
        const double recs = (double)(p->n_phases - r0) * nphys; /* a step's phase records (at most: some are the step's, not the batch's) */
        const double ev_bytes = trace_event_bytes(p);
        const double tbytes = (per_step * ev_bytes + recs * TRACE_RECORD_BYTES) * (tsteps < steps ? tsteps : steps);
        const double rbytes = (recs * RESULT_RECORD_BYTES + RESULT_LOSS_BYTES) * steps;
        dpprof_session_destroy(d); /* p is gone with it */
        if (limit_bytes && total > (double)RUN_MAX_BYTES) {
            cli_fail(0, "this run would allocate more than 2^62 bytes in all (about %.3g: %lld bytes a physical batch in its dry model, %.0f physical batches a step, %.0f steps). "
                        "dpprof counts bytes in 64 bits: give fewer steps, or a smaller model, batch or sequence",
                     total, batch_bytes, nphys, steps);
            return 1;
        }
        if (trace && tbytes > FILE_MAX_BYTES) {
            const double fit = FILE_MAX_BYTES / (per_step * ev_bytes + recs * TRACE_RECORD_BYTES);
            cli_fail(0, "--trace would hold up to %s (%.0f allocation events a step, %.0f steps): a trace is at most %s; give --trace-steps %.0f or fewer", human_bytes(tbytes, hb, sizeof hb),
                     per_step, tsteps < steps ? tsteps : steps, human_bytes(FILE_MAX_BYTES, hb2, sizeof hb2), fit >= 1 ? floor(fit) : 1);
            return 1;
        }
        if (result && rbytes > FILE_MAX_BYTES) {
            cli_fail(0, "the result would hold up to %s of per-step records (%.0f phase records and a loss a step, %.0f steps): a result is at most %s; give --steps %.0f or fewer",
                     human_bytes(rbytes, hb, sizeof hb), recs, steps, human_bytes(FILE_MAX_BYTES, hb2, sizeof hb2), floor(FILE_MAX_BYTES / (recs * RESULT_RECORD_BYTES + RESULT_LOSS_BYTES)));
            return 1;
        }
        return 0;
    }
    /* out of the probe's budget, not of host memory for the profiler's tables; any other error is the run's to say */
    rc = limit_bytes && rc == DPPROF_ERR_OOM && !(d && dpprof_session_prof(d)->failed);
    if (rc && sscanf(dpprof_last_error(), "out of memory: %lld more bytes (%63[^,], %63[^)]) would bring live memory to %lld", &more, cat, mod, &live) == 4)
        cli_fail(0, "this configuration needs more than 2^62 bytes (%lld) at once: in its dry model %lld more bytes (%s, %s) would bring live memory to %lld bytes. "
                    "dpprof counts bytes in 64 bits: give a smaller model, batch or sequence",
                 (long long)RUN_MAX_BYTES, more, cat, mod, live);
    else if (rc) cli_fail(0, "this configuration needs more than 2^62 bytes (%lld) at once (its dry model: %s). dpprof counts bytes in 64 bits: give a smaller model, batch or sequence", (long long)RUN_MAX_BYTES, dpprof_last_error());
    dpprof_session_destroy(d);
    return rc;
}

/* pld was asked and rdp's epsilon is the one reported: the pld could not bound the setting */
static int c_acc_rdp_fallback(const dpprof_privacy *pv, dpprof_accountant asked) { return asked == DPPROF_ACCOUNTANT_PLD && pv->accountant == DPPROF_ACCOUNTANT_RDP; }

static int cmd_run(int argc, char **argv) {
    run_opts o;
    dpprof_config resolved;
    dpprof_shape shape;
    dpprof_session *s = NULL;
    out_file out, trace;
    int rc, code = EXIT_OK, total;
    char err[1024] = "", hb[32], hb2[32];
    double last_print;
    double t0;

    memset(&out, 0, sizeof out);
    memset(&trace, 0, sizeof trace);
    if ((rc = parse_run(argc, argv, &o)) != EXIT_OK) return rc == CLI_HELP_SHOWN ? EXIT_OK : rc;
    if (mpi_world > 1) { /* the ranks of an MPI job: --ranks is the job's size; rank 0 alone speaks and writes */
        if (!o.cfg.ranks) o.cfg.ranks = mpi_world;
        if (mpi_rank) {
            o.quiet = 1;
            o.out = o.trace = NULL;
        }
    }
    /* resolve first (the library's check of every option, and the noise of --target-epsilon): bad input is
       reported before any file is touched */
    if (!o.quiet) dpprof_privacy_progress(cli_progress, NULL);
    if (dpprof_config_resolve(&o.cfg, &resolved, &shape) != DPPROF_OK) return cli_fail_lib(&run_cmd, EXIT_USAGE);
    if (o.plan && (o.out || o.trace || o.dump))
        return cli_fail(EXIT_USAGE, "--plan prints the plan and runs nothing: %s would have nothing to write", o.out ? "--out" : (o.trace ? "--trace" : "--dump"));
    if (o.cfg.target_epsilon > 0) { /* the noise that spends exactly the target over every step this run takes */
        const long long steps = (long long)resolved.warmup + resolved.steps;
        if (!o.quiet)
            fprintf(stderr, "dpprof: sigma %.6g gives epsilon %g at delta %g over %lld steps (q = %g)\n", resolved.sigma, o.cfg.target_epsilon, resolved.delta, steps,
                    (double)resolved.batch / (double)resolved.dataset_size);
        o.cfg.sigma = resolved.sigma;
        o.cfg.target_epsilon = 0;
    }
    {
        int gpus = 0; /* auto runs on a gpu when there is one: then the gpu's own memory is the limit */
        if (resolved.backend == DPPROF_BACKEND_AUTO && dpprof_cuda_device_count(&gpus) != DPPROF_OK) gpus = 0;
        if (!o.limit_given && (resolved.backend == DPPROF_BACKEND_CPU || (resolved.backend == DPPROF_BACKEND_AUTO && gpus == 0))) {
            /* a model that cannot fit is an oom result, not the oom killer; a sweep's jobs share the memory */
            const char *jobs = getenv("DPPROF_SWEEP_JOBS");
            long long nj = jobs ? atoll(jobs) : mpi_world; /* an MPI job's ranks share the machine too */
            o.cfg.memory_limit = mem_available() / (nj >= 1 && nj <= 1024 ? nj : 1);
        }
    }
    if (o.device) { /* the limit dpprof fit's rule leaves on that GPU for this algorithm */
        static char rule[1024];
        if (o.limit_given) return cli_usage("--device %s and --memory-limit: give one (--device sets the limit by dpprof fit's rule)", o.device);
        if ((rc = fit_run_budget(o.device, (int)resolved.algo, (int)resolved.framework, &o.cfg.memory_limit, rule, sizeof rule)) != 0) return rc;
        o.cfg.memory_rule = rule;
        o.limit_given = 1;
        if (!o.quiet)
            fprintf(stderr, "dpprof: run: --device %s: memory limit %s for %s (dpprof fit's rule; config.memory_rule says how)\n", o.device,
                    human_bytes((double)o.cfg.memory_limit, hb, sizeof hb), dpprof_algo_name(resolved.algo));
    }
    if (o.cfg.data_path && in_check("--data", o.cfg.data_path, IN_DATA_LIMIT, NULL, 0)) return EXIT_USAGE;
    if (o.dump && o.cfg.backend == DPPROF_BACKEND_DRY) {
        cli_fail(0, "--dump needs computed values: use --backend cpu or cuda (this run is dry)");
        return EXIT_USAGE;
    }
    if (o.dump && mpi_world > 1) {
        cli_fail(0, "--dump with %d ranks: a dump is one process's model, batch and gradients; run it without mpirun", mpi_world);
        return EXIT_USAGE;
    }
    if (o.dump && outdir_check("--dump", o.dump)) return EXIT_USAGE;
    if (o.dump) { /* the dump replaces its directory whole: no output or input of this run may lie in it */
        const char *paths[5] = {o.out, o.trace, o.cfg.data_path, o.hf_config, o.peft_config}, *names[5] = {"--out", "--trace", "--data", "--hf-config", "--peft-config"};
        int k, kind;
        for (k = 0; k < 5; k++) {
            char rp[PATH_MAX];
            const char *p = paths[k];
            if (!p) continue;
            if (k < 2 && out_resolve(NULL, p, rp, &kind) == 0) { /* an output: where it is written (standard output, a device: nowhere) */
                if (kind != OUT_FILE) continue;
                p = rp;
            }
            if (path_within(p, o.dump)) {
                cli_fail(0, "%s '%s' is in the --dump directory '%s': the dump replaces that directory whole", names[k], paths[k], o.dump);
                return EXIT_USAGE;
            }
        }
    }
    if (o.out && o.trace && out_is_stdout(o.out) && out_is_stdout(o.trace)) {
        cli_fail(0, "--out %s and --trace %s would both write to standard output: give one a file", o.out, o.trace);
        return EXIT_USAGE;
    }
    if (o.out && o.trace && out_same(o.out, o.trace)) {
        cli_fail(0, "--out '%s' and --trace '%s' are the same file: one would be lost", o.out, o.trace);
        return EXIT_USAGE;
    }
    { /* an output must not be an input (the same file: its device and inode where both exist) */
        const char *outs[2] = {o.out, o.trace}, *names[2] = {"--out", "--trace"}, *ins[3] = {o.cfg.data_path, o.hf_config, o.peft_config}, *in_names[3] = {"--data", "--hf-config", "--peft-config"};
        int k, m;
        for (k = 0; k < 2; k++)
            for (m = 0; m < 3; m++)
                if (outs[k] && ins[m] && out_same(outs[k], ins[m])) {
                    cli_fail(0, "%s '%s' is the %s file: it would be overwritten", names[k], outs[k], in_names[m]);
                    return EXIT_USAGE;
                }
    }
    { /* bounds checked before the run: a dry run's bytes in 64 bits, a trace's size, a result's */
        const int bytes = resolved.backend == DPPROF_BACKEND_DRY && !o.cfg.memory_limit, tr = o.trace != NULL;
        if ((bytes || tr || o.out) && run_too_big(&o.cfg, &resolved, bytes, tr, o.out != NULL)) return EXIT_USAGE;
    }
    if (o.out && out_open(&out, o.out, "--out")) return EXIT_USAGE;
    if (o.trace && out_open(&trace, o.trace, "--trace")) {
        out_abort(&out);
        return EXIT_USAGE;
    }

    if (!mpi_agree(1)) { /* another rank stopped on its input (it said why) */
        out_abort(&out);
        out_abort(&trace);
        return EXIT_USAGE;
    }
    /* what privacy this run will have, said before it runs, once every input was found good */
    if (resolved.algo != DPPROF_ALGO_VANILLA && !o.quiet) {
        if (resolved.sigma == 0 && !o.sigma_given)
            cli_fail(0, "warning: --algo %s clips without noise (--sigma is 0 by default): this run is not private; give --sigma (or --sigma 0 to say you mean it)", dpprof_algo_name(resolved.algo));
        else if (resolved.sigma > 0 && !resolved.secure_noise)
            fprintf(stderr, "dpprof: run: the noise is Philox from --seed %llu: anyone who knows the seed can subtract it; it is for measuring, not for releasing a model (--secure-noise for that)\n",
                    (unsigned long long)resolved.seed);
    }
    rc = dpprof_session_create(&o.cfg, &s);
    /* an oom before the model was built (the session itself, --data) comes back without a session */
    if (rc != DPPROF_OK && (rc != DPPROF_ERR_OOM || !s)) {
        cli_fail_lib(&run_cmd, 0);
        out_abort(&out);
        out_abort(&trace);
        /* input the engine refuses (unknown data, unsupported option) is bad input: no file at all */
        return rc == DPPROF_ERR_INVALID || rc == DPPROF_ERR_UNSUPPORTED || rc == DPPROF_ERR_IO || rc == DPPROF_ERR_NO_CUDA || rc == DPPROF_ERR_NO_DEVICE || rc == DPPROF_ERR_OVERFLOW ? EXIT_USAGE : (rc == DPPROF_ERR_OOM ? EXIT_OOM : EXIT_ERROR);
    }
    if (rc == DPPROF_OK && o.plan) { /* the session's decisions, before any step */
        rc = mpi_rank ? DPPROF_OK : dpprof_session_write_plan(s, stdout);
        dpprof_session_destroy(s);
        if (rc != DPPROF_OK || fflush(stdout) != 0) return cli_fail(EXIT_ERROR, "writing the plan to standard output failed");
        return EXIT_OK;
    }
    total = resolved.warmup + resolved.steps;
    if (rc == DPPROF_OK && !o.quiet && !strcmp(DPPROF_SOURCE_STATE, "differs"))
        fprintf(stderr, "dpprof: run: this build's sources (%.12s) are not commit %s's (edits not committed, or a copy whose .git is older than its files); the result names them\n",
                DPPROF_SOURCE_HASH, DPPROF_GIT_COMMIT);
    if (rc == DPPROF_OK && !o.quiet)
        fprintf(stderr, "dpprof: %s, %s, %s parameters, seq %d, batch %d (physical %d), %d steps on %s\n",
                resolved.model_name ? resolved.model_name : resolved.preset, resolved.task == DPPROF_TASK_LM ? "lm" : "cls", human_count((double)dpprof_session_param_elems(s, 0), hb, sizeof hb),
                resolved.seq, resolved.batch, resolved.physical_batch, total, dpprof_backend_name(dpprof_session_config(s)->backend));
    { /* a step's phase records and losses stay for the report: refused now if all of them would not fit */
        const double need = (double)total * (16.0 * (double)sizeof(dpprof_phase_rec) + 64.0), avail = (double)mem_available();
        if (rc == DPPROF_OK && avail > 0 && need > avail / 2) {
            cli_fail(0, "%d steps would keep about %s of records in host memory, more than half of what is available (%s): give fewer --steps", total, human_bytes(need, hb, sizeof hb), human_bytes(avail, hb2, sizeof hb2));
            out_abort(&out);
            out_abort(&trace);
            dpprof_session_destroy(s);
            return EXIT_USAGE;
        }
    }
    t0 = now_s();
    last_print = -1e9;
    while (rc == DPPROF_OK && dpprof_session_steps_done(s) < total) {
        int k = dpprof_session_steps_done(s);
        rc = dpprof_session_step(s);
        if (rc == DPPROF_OK && k == 0 && total > 1 && !o.cfg.no_timeline) {
            /* the event log grows by a step's events each step: refused now if all of them would not fit */
            const dpprof_prof *p = dpprof_session_prof(s);
            const double need = (double)p->n_events * (double)total * (double)(sizeof(dpprof_event) + 40), avail = (double)mem_available();
            if (avail > 0 && need > avail / 2) {
                cli_fail(0, "the event log of %d steps would take about %s of host memory (%zu events a step), more than half of what is available (%s): "
                            "--timeline none keeps the peak, its split and the phases without it",
                         total, human_bytes(need, hb, sizeof hb), p->n_events, human_bytes(avail, hb2, sizeof hb2));
                out_abort(&out);
                out_abort(&trace);
                dpprof_session_destroy(s);
                return EXIT_USAGE;
            }
        }
        if (rc == DPPROF_OK && !o.quiet && (total <= 20 || k + 1 == total || now_s() - last_print >= 1.0)) { /* at most a line a second */
            double loss = dpprof_session_step_loss(s, k);
            last_print = now_s();
            fprintf(stderr, "  step %d/%d%s", k + 1, total, k < resolved.warmup ? " (warm-up)" : "");
            if (loss == loss) fprintf(stderr, "  loss %.4f", loss);
            fprintf(stderr, "  peak %s  elapsed %.1f s\n", human_bytes((double)dpprof_session_prof(s)->peak_bytes, hb, sizeof hb), last_print - t0);
        }
    }
    if (rc != DPPROF_OK) {
        cli_say(&run_cmd, dpprof_last_error(), err, sizeof err);
        cli_fail(0, "%s", err);
        /* the profiler's own tables could not grow: the host is out of memory, not the model's budget */
        if (rc == DPPROF_ERR_OOM && dpprof_session_prof(s)->failed) {
            snprintf(err, sizeof err, "out of host memory for the profiler's records after %d steps (not the model's memory): %.600s", dpprof_session_steps_done(s), dpprof_last_error());
            cli_fail(0, "%s", err);
            rc = DPPROF_ERR_IO;
        }
        code = rc == DPPROF_ERR_OOM ? EXIT_OOM : EXIT_ERROR;
    }
    /* the trace and the dump first, the result last: a result is the mark that a run has ended and written all it
       was asked (a sweep stopped between them runs it again) */
    if (o.trace) {
        int w = dpprof_session_write_trace(s, trace.f);
        if (w != DPPROF_OK && !ferror(trace.f)) {
            cli_fail(0, "--trace '%s': %s", o.trace, dpprof_last_error());
            out_abort(&trace);
            code = EXIT_ERROR;
        } else if (out_past_bound(&trace, "--trace", "give fewer --trace-steps") || out_commit(&trace)) code = EXIT_ERROR;
    }
    if (rc == DPPROF_OK && o.dump && outdir_write("--dump", o.dump, run_dump, s) != 0) { /* the run did not do all it was asked: its result says so */
        snprintf(err, sizeof err, "--dump '%.300s' was not written: %.600s", o.dump, run_dump_error[0] ? run_dump_error : "see the run's messages");
        code = EXIT_ERROR;
    }
    if (o.out) {
        const int failed = rc != DPPROF_OK || err[0];
        int w = dpprof_session_write_json(s, out.f, o.experiment, rc == DPPROF_OK ? (err[0] ? "error" : "ok") : (rc == DPPROF_ERR_OOM ? "oom" : "error"), failed ? err : NULL);
        if (w != DPPROF_OK && !ferror(out.f)) { /* the writer's own reason; a stream error is the commit's to say */
            cli_fail(0, "--out '%s': %s", o.out, dpprof_last_error());
            out_abort(&out);
            code = EXIT_ERROR;
        } else if (out_past_bound(&out, "--out", "give fewer --steps") || out_commit(&out)) code = EXIT_ERROR;
    }
    if (rc == DPPROF_OK && !o.quiet) {
        const dpprof_prof *p = dpprof_session_prof(s);
        int c, first;
        fprintf(stderr, "peak %s (%lld bytes) in %s:", human_bytes((double)p->peak_bytes, hb, sizeof hb), (long long)p->peak_bytes, dpprof_phase_name(p->peak_phase));
        for (c = 0, first = 1; c < DPPROF_CAT_COUNT; c++)
            if (p->peak_by_cat[c]) fprintf(stderr, "%s %s %s", first ? "" : ",", dpprof_category_name(c), human_bytes((double)p->peak_by_cat[c], hb, sizeof hb)), first = 0;
        fprintf(stderr, "\n");
        {
            dpprof_privacy pv;
            if (dpprof_session_privacy(s, &pv) == DPPROF_OK && pv.dp) {
                if (pv.why[0] && !(pv.epsilon == pv.epsilon)) fprintf(stderr, "privacy: none: %s\n", pv.why);
                else if (pv.why[0]) fprintf(stderr, "privacy: not private: %s\n", pv.why);
                else
                    fprintf(stderr, "privacy: \u03b5 = %.3g at \u03b4 = %g (Poisson, q = %.3g, \u03c3 = %.3g, %lld steps, %s)\n", pv.epsilon, pv.delta, pv.q, pv.sigma, pv.steps,
                            pv.accountant == DPPROF_ACCOUNTANT_PLD ? "PLD" : (c_acc_rdp_fallback(&pv, resolved.accountant) ? "RDP: the PLD could not bound it" : "RDP"));
            } else if (dpprof_session_privacy(s, &pv) == DPPROF_OK)
                fprintf(stderr, "privacy: none (non-private training)\n");
        }
        dpprof_memory_truth m;
        dpprof_session_memory_truth(s, &m);
        if (m.driver_peak >= 0) { /* cuda: the three peaks side by side (meta.memory) */
            char hd[32], hv[32];
            fprintf(stderr, "peaks: accountant %lld bytes, dry plan %s%s, driver %lld bytes (%s; of the gap: pool rounding %lld, pool unused %lld, unexplained %lld)\n",
                    (long long)m.accountant_peak, m.dry_peak >= 0 ? human_bytes((double)m.dry_peak, hd, sizeof hd) : "unknown",
                    m.dry_peak >= 0 ? (m.dry_peak == m.accountant_peak ? " (= accountant)" : " (differs)") : "", (long long)m.driver_peak,
                    human_bytes((double)m.driver_peak, hv, sizeof hv), (long long)m.pool_rounding, (long long)m.pool_unused, (long long)m.remainder);
        }
        if (resolved.ranks > 1 || resolved.zero) {
            dpprof_dist_info d;
            char h1[32], h2[32], h3[32];
            dpprof_session_dist(s, &d);
            fprintf(stderr, "rank 0 of %d (zero %d, %d samples a step): shards of %lld elements (%lld padding); per step all-reduce %s, reduce-scatter %s, all-gather %s\n",
                    d.ranks, d.zero, resolved.batch / resolved.ranks, (long long)d.shard_elements, (long long)d.padding_elements, human_bytes((double)d.all_reduce_bytes, h1, sizeof h1),
                    human_bytes((double)d.reduce_scatter_bytes, h2, sizeof h2), human_bytes((double)d.all_gather_bytes, h3, sizeof h3));
        }
    }
    dpprof_session_destroy(s);
    return code;
}

static int cmd_plot(int argc, char **argv) {
    plot_opts po;
    const char *pos[64], *kind, **in = pos + 1, *out, *title;
    char labels[TL_MAX_PANELS][128], ttl[300];
    const char *lp[TL_MAX_PANELS];
    int k, npos = 0, nin, rc;
    memset(&po, 0, sizeof po);
    rc = cli_parse(&plot_cmd, argc, argv, &po, NULL, pos, &npos);
    if (rc == CLI_HELP_SHOWN) return EXIT_OK;
    if (rc != EXIT_OK) return rc;
    kind = npos ? pos[0] : NULL, nin = npos ? npos - 1 : 0, out = po.out, title = po.title;
    if (nin > TL_MAX_PANELS) return cli_usage("'%s': at most 8 results make one figure", in[TL_MAX_PANELS]);
    if (!kind || !nin || !out) return cli_usage("usage: dpprof plot timeline RESULT.json [RESULT.json ...] --out FILE.png");
    if (strcmp(kind, "timeline") != 0 && strcmp(kind, "fit-check") != 0) return cli_usage("unknown figure '%s' (known: timeline, fit-check)", kind);
    if (!strcmp(kind, "fit-check") && nin != 1) return cli_usage("dpprof plot fit-check takes one FILE.json (peers.py fit-check --out)");
    for (k = 0; k < nin; k++)
        if (out_same(in[k], out)) return cli_usage("--out '%s' is the input '%s': it would be overwritten", out, in[k]);
    { /* the output is checked before any work */
        char path[PATH_MAX];
        int okind;
        if (out_resolve("--out", out, path, &okind)) return EXIT_USAGE;
    }
    if (!strcmp(kind, "fit-check")) return plot_fit_check(in[0], out, title);
    if (nin == 1) return plot_timeline(in[0], out, title, 0, 0, 0);
    for (k = 0; k < nin; k++) { /* a panel is named by its file: DIR/ID.json is ID */
        const char *b = strrchr(in[k], '/');
        size_t len;
        b = b ? b + 1 : in[k];
        len = strlen(b);
        if (len > 5 && !strcmp(b + len - 5, ".json")) len -= 5;
        snprintf(labels[k], sizeof labels[k], "%.*s", (int)(len < 127 ? len : 127), b);
        lp[k] = labels[k];
    }
    snprintf(ttl, sizeof ttl, "%s", title ? title : "memory timelines, one panel each, shared axes");
    return plot_timelines(in, lp, nin, out, ttl, 1600, 600, 2);
}

typedef struct eps_opts {
    double sigma, q, target;
    long long steps;
} eps_opts;

static const cli_opt eps_opt[] = {
    {NULL, NULL, CLI_HEAD, .help = "options:"},
    {"--sigma", "S", CLI_REAL, .field = offsetof(eps_opts, sigma), .lo = 0, .hi = 1e6, .help = "the noise multiplier"},
    {"--target-epsilon", "E", CLI_REAL, .field = offsetof(eps_opts, target), .lo = 0, .hi = 1e6, .open = 1, .help = "the epsilon to spend: prints the smallest sigma that does"},
    {"--sample-rate", "Q", CLI_REAL, .field = offsetof(eps_opts, q), .lo = 0, .hi = 1, .help = "the poisson sampling rate (batch / dataset size)"},
    {"--steps", "N", CLI_LLONG, .field = offsetof(eps_opts, steps), .lo = 0, .hi = 1e12, .help = "the steps taken"},
    {"--delta", "D", CLI_CONFIG, .key = "delta", .help = "(default 1e-5)"},
    {"--accountant", "rdp|pld|both", CLI_CONFIG, .key = "accountant", .help = "(default rdp)"},
    {"--help", NULL, CLI_HELP, .help = "this text"},
};

static const cli_command eps_cmd = {"epsilon", "usage: dpprof epsilon --sigma S --sample-rate Q --steps N [--delta D] [--accountant rdp|pld|both]\n"
                                               "       dpprof epsilon --target-epsilon E --sample-rate Q --steps N [--delta D] [--accountant rdp|pld]",
                                    ""
                                    "privacy spent by DP-SGD with Poisson sampling (rate Q) and noise multiplier S over N steps:\n"
                                    "  rdp   the RDP accountant of the Poisson-subsampled Gaussian mechanism (Mironov et al. 2019),\n"
                                    "        improved conversion (Balle et al. 2020), minimised over the orders 1.1 ... 10.9, 12 ... 63\n"
                                    "        and past 63 where the minimum is at 63 (the default; prints the best order)\n"
                                    "  pld   the privacy loss distribution, the tight accountant: pessimistic connect-the-dots\n"
                                    "        discretization, composed by FFT, on a grid whose interval follows epsilon and the\n"
                                    "        steps (printed). an upper bound: never below dp_accounting's PLD at the same interval\n"
                                    "        by more than 1e-5 relative (q 1e-4..1, sigma 0.4..5, 1..1e5 steps, delta 1e-5 and\n"
                                    "        1e-8: docs/dp.md), never above RDP's, never below the exact epsilon at any sigma,\n"
                                    "        sample rate and step count (losses past exp's doubles summed as logs). where its grid\n"
                                    "        (2^20 points) cannot hold the setting, or cannot beat RDP's bound, or its mass at\n"
                                    "        infinity passes delta, the RDP bound instead, said. under 5 s to 1e12 steps\n"
                                    "  both  prints epsilon_rdp and epsilon_pld (none where the PLD cannot bound it)\n"
                                    "with --target-epsilon, the smallest sigma that reaches it under the accountant named (pld:\n"
                                    "to 5e-4 of sigma, by at most 48 evaluations of the accountant itself, progress on stderr\n"
                                    "past 2 s; about 12 s at 1e7 steps); 0 where no noise is needed (a record is drawn at\n"
                                    "all with a chance under delta). sigma 0 has no finite epsilon unless that chance is under\n"
                                    "delta (then it is exact). delta defaults to 1e-5.\n",
                                    eps_opt, CLI_N(eps_opt), 0, NULL, NULL};

static int cmd_epsilon(int argc, char **argv) {
    double sigma, q, delta, target;
    long long steps;
    int acct, rc;
    eps_opts eo;
    dpprof_config acc; /* --delta and --accountant as run takes them */
    dpprof_privacy pv;
    eo.sigma = eo.q = eo.target = -1, eo.steps = -1;
    memset(&acc, 0, sizeof acc);
    rc = cli_parse(&eps_cmd, argc, argv, &eo, &acc, NULL, NULL);
    if (rc == CLI_HELP_SHOWN) return EXIT_OK;
    if (rc != EXIT_OK) return rc;
    sigma = eo.sigma, q = eo.q, target = eo.target, steps = eo.steps, delta = acc.delta > 0 ? acc.delta : 1e-5, acct = (int)acc.accountant;
    if (q < 0 || steps < 0 || (sigma < 0) == (target < 0)) return cli_usage("give --sample-rate, --steps and one of --sigma or --target-epsilon");
    if (target > 0 && acct == DPPROF_ACCOUNTANT_BOTH) return cli_usage("--target-epsilon takes one accountant: rdp or pld");
    if (target > 0) {
        dpprof_privacy_progress(cli_progress, NULL);
        rc = acct == DPPROF_ACCOUNTANT_PLD ? dpprof_pld_sigma_for_epsilon(q, steps, delta, target, 0, &sigma) : dpprof_rdp_sigma_for_epsilon(q, steps, delta, target, &sigma);
        if (rc != 0) { /* a target no noise reaches is bad input, as in run */
            cli_fail(0, "no sigma reaches epsilon %g at delta %g under the %s accountant (q %g, %lld steps)", target, delta, acct == DPPROF_ACCOUNTANT_PLD ? "PLD" : "RDP", q, steps);
            return EXIT_USAGE;
        }
        printf("sigma %.10g\n", sigma);
    }
    if (dpprof_privacy_of(1, q, sigma, steps, delta, 1, (dpprof_accountant)acct, &pv) != DPPROF_OK) return cli_fail(EXIT_USAGE, "%s", dpprof_last_error());
    if (sigma == 0) { /* no noise: no finite epsilon, or the exact one where a record is drawn at all with a chance under delta */
        if (pv.epsilon < INFINITY) fprintf(stderr, "dpprof: epsilon: %s\n", pv.note);
        else fprintf(stderr, "dpprof: epsilon: sigma 0 adds no noise: clipping alone is not private, and no finite epsilon bounds it (a record is drawn in some step with "
                             "probability %.3g, not under delta %g)\n",
                     q >= 1 ? 1.0 : -expm1((double)steps * log1p(-q)), delta);
        if (acct == DPPROF_ACCOUNTANT_BOTH) printf("epsilon_rdp %.10g\nepsilon_pld %.10g\ndelta %g\nbest_order none\n", pv.epsilon, pv.epsilon, delta);
        else printf("epsilon %.10g\ndelta %g\n%s\n", pv.epsilon, delta, acct == DPPROF_ACCOUNTANT_PLD ? "accountant pld" : "best_order none");
        return EXIT_OK;
    }
    if (acct != DPPROF_ACCOUNTANT_RDP && !(pv.epsilon_pld == pv.epsilon_pld)) cli_fail(0, "%s", pv.note); /* the pld could not bound it: rdp's, said */
    else if (acct == DPPROF_ACCOUNTANT_PLD && pv.accountant == DPPROF_ACCOUNTANT_RDP) cli_fail(0, "rdp's bound %.6g is below the pld's at its grid here: the one printed", pv.epsilon);
    {
        char ord[32]; /* an infinite epsilon has no best order: none, not nan */
        if (pv.best_order == pv.best_order) snprintf(ord, sizeof ord, "%g", pv.best_order);
        else snprintf(ord, sizeof ord, "none");
        if (acct == DPPROF_ACCOUNTANT_BOTH) {
            printf("epsilon_rdp %.10g\n", pv.epsilon_rdp);
            if (pv.epsilon_pld == pv.epsilon_pld) printf("epsilon_pld %.10g\n", pv.epsilon_pld);
            else printf("epsilon_pld none\n");
            printf("delta %g\nbest_order %s\n", delta, ord);
        } else if (acct == DPPROF_ACCOUNTANT_PLD && pv.epsilon_pld == pv.epsilon_pld)
            printf("epsilon %.10g\ndelta %g\naccountant %s\ninterval %.3g\n", pv.epsilon, delta, pv.accountant == DPPROF_ACCOUNTANT_RDP ? "rdp" : "pld", pv.pld_interval);
        else if (acct == DPPROF_ACCOUNTANT_PLD)
            printf("epsilon %.10g\ndelta %g\naccountant rdp\nbest_order %s\n", pv.epsilon, delta, ord);
        else printf("epsilon %.10g\ndelta %g\nbest_order %s\n", pv.epsilon, delta, ord);
    }
    return EXIT_OK;
}

static int cmd_presets(void) {
    const char *const *n;
    printf("%-14s %8s %6s %4s %4s %4s %6s %10s %5s  %s\n", "preset", "vocab", "hidden", "L", "NH", "NKV", "ffn", "rope_theta", "tied", "also named");
    for (n = dpprof_preset_names(); *n; n++) {
        dpprof_shape s;
        dpprof_preset_shape(*n, &s);
        printf("%-14s %8d %6d %4d %4d %4d %6d %10g %5s  %s\n", *n, s.V, s.C, s.L, s.NH, s.NKV, s.F, s.rope_theta, s.tied ? "yes" : "no", dpprof_preset_hf_name(*n));
    }
    return EXIT_OK;
}

/* what the cuda backend would run on: make bench and make gpu-check ask this first */
/* ---- attnbench: the attention kernels alone, timed on the GPU ------------------------------------------
   every kernel variant (fp32 simt; bf16 simt; bf16 tensor cores in blocks of 64 and of 128 rows, with 16 or 32
   query rows a warp; cuDNN's fused flash attention where the build has it) forward and backward at a few shapes, so the block size and the warp
   rows can be chosen from a measurement: median,
   min and max of --repeats timed calls after one warm-up, each call between two CUDA events; rates from
   the analytic flops and bytes of dpprof_attention_{fwd,bwd}_cost. a failed launch stops the measuring
   (the device queue keeps its first error); what was measured is written, with the error */
#define AB_MAX_SHAPES 16
#define AB_MAX_REPEATS 1000
typedef struct ab_shape {
    char name[48];
    int B, T, NH, NKV, HS;
} ab_shape;
typedef struct ab_variant {
    const char *storage, *kernel;
    int rows, wrows;
} ab_variant; /* wrows: the forward's rows a warp */
/* clang-format off */
static const ab_variant ab_variants[] = {{"fp32", "simt", 0, 0}, {"bf16", "simt", 0, 0}, {"bf16", "tc", 64, 16}, {"bf16", "tc", 128, 16},
                                         {"bf16", "tc", 64, 32},  {"bf16", "tc", 128, 32}, {"bf16", "cudnn", 0, 0}};
/* clang-format on */
#define AB_NV ((int)(sizeof ab_variants / sizeof ab_variants[0]))
typedef struct ab_row {
    const char *status;
    char note[160];
    double ms_med, ms_min, ms_max, flops, bytes;
} ab_row;

typedef struct ab_opts {
    cli_texts shape;
    int repeats;
    const char *out;
} ab_opts;

static const cli_opt ab_opt[] = {
    {NULL, NULL, CLI_HEAD, .help = "options:"},
    {"--shape", "B,T,NH,NKV,HS", CLI_TEXTS, .field = offsetof(ab_opts, shape), .help = "a shape (repeatable; default: the bench shapes, trainer-1b at B=8 T=1024,\nlongctx at B=1 T=16384, llama-3.2-1b at B=8 T=1024, from the presets)"},
    {"--repeats", "N", CLI_INT, .field = offsetof(ab_opts, repeats), .lo = 1, .hi = AB_MAX_REPEATS, .help = "timed calls per variant and pass (default 10, at most 1000)"},
    {"--out", "FILE.json", CLI_TEXT, .field = offsetof(ab_opts, out), .help = "the results (written atomically)"},
    {"--help", NULL, CLI_HELP, .help = "this text"},
};

static const cli_command ab_cmd = {"attnbench", "usage: dpprof attnbench [--shape B,T,NH,NKV,HS]... [--repeats N] [--out FILE.json]",
                                   "Times the attention kernels alone on the GPU, forward and backward, for every variant: fp32 on\n"
                                   "the simt kernels; bf16 storage on the simt kernels, and on the tensor cores in blocks of 64 and of\n"
                                   "128 rows (dpprof_cuda_tuning.attention_block; the tensor cores take even head sizes up to 128), each\n"
                                   "with 16 query rows a warp (tc-64, tc-128) and, at head sizes up to 64, with 32 (tc-64w32,\n"
                                   "tc-128w32; dpprof_cuda_tuning.attention_warp_rows); and cuDNN's fused flash attention (cudnn, bf16),\n"
                                   "where the build has it (dpprof version says so) and cuDNN has an engine for the shape, else the row\n"
                                   "says why. its workspace is allocated beside the tensors; the deterministic backward is asked for.\n"
                                   "Each timing is the median (with min and max) of N calls after one warm-up call, each between two\n"
                                   "CUDA events; TFLOP/s and the shares of the device's fp32, bf16 and DRAM peaks come from the\n"
                                   "analytic flops and bytes of the op (the same as in a run's throughput.ops).\n",
                                   ab_opt, CLI_N(ab_opt), 0, NULL,
                                   "needs a GPU: without one it says so and exits 2, writing nothing. a shape that does not fit in\n"
                                   "device memory is recorded as oom and the others are measured. a launch that fails stops the\n"
                                   "measuring (the device keeps its first error): what was measured is written, the rest marked\n"
                                   "not_run, status error, exit 1.\n"};

/* "B,T,NH,NKV,HS" -> a shape named after its numbers; 0 or a message on stderr */
static int ab_parse_shape(const char *v, ab_shape *sh) {
    long long x[5];
    const char *p = v;
    int i;
    for (i = 0; i < 5; i++) {
        char *end;
        errno = 0;
        x[i] = strtoll(p, &end, 10);
        if (end == p || errno == ERANGE || *end != (i < 4 ? ',' : '\0') || x[i] < 1 || x[i] > 1000000) {
            cli_fail(0, "--shape '%s': expected B,T,NH,NKV,HS, five integers in [1, 1000000]", v);
            return -1;
        }
        p = end + 1;
    }
    if (x[2] % x[3] || x[4] > DPPROF_MAX_HEAD_SIZE || x[0] > 65535 || x[2] > 65535) {
        cli_fail(0, "--shape '%s': NKV must divide NH, HS be at most %d, B and NH at most 65535", v, DPPROF_MAX_HEAD_SIZE);
        return -1;
    }
    if ((double)x[0] * (double)x[1] * (double)x[2] * (double)x[4] * 4.0 > 1e12) {
        cli_fail(0, "--shape '%s': B*T*NH*HS*4 bytes exceeds 1e12", v);
        return -1;
    }
    sh->B = (int)x[0], sh->T = (int)x[1], sh->NH = (int)x[2], sh->NKV = (int)x[3], sh->HS = (int)x[4];
    snprintf(sh->name, sizeof sh->name, "B%d-T%d-NH%d-NKV%d-HS%d", sh->B, sh->T, sh->NH, sh->NKV, sh->HS);
    return 0;
}

static int ab_cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* one variant and pass of a shape: one warm-up call, then `repeats` timed ones; the row says how it went.
   returns DPPROF_OK or the device queue's error */
static int ab_time(ab_row *row, int bwd, int repeats, float **t16, float **t32, const ab_shape *sh, int bf16, int cudnn, void *ws, size_t wsb) {
    float **t = bf16 ? t16 : t32; /* q k v dout out lse dq dk dv */
    double ms[AB_MAX_REPEATS];
    int r, rc = DPPROF_OK;
    dpprof_cuda_events_reset();
    for (r = 0; r <= repeats && rc == DPPROF_OK; r++) {
        int e0 = -1, e1 = -1;
        if (r > 0) rc = dpprof_cuda_event(&e0);
        if (cudnn && !bwd) dpprof_cudnn_attention_fwd_gpu(t[4], t32[5], t[0], t[1], t[2], sh->B, sh->T, sh->NH, sh->NKV, sh->HS, ws, wsb);
        else if (cudnn) dpprof_cudnn_attention_bwd_gpu(t[6], t[7], t[8], t[3], t[0], t[1], t[2], t[4], t32[5], sh->B, sh->T, sh->NH, sh->NKV, sh->HS, ws, wsb);
#if DPPROF__CUDA /* the gpu ops are dpprof_kernels.cu's: a build without it finds no device and never comes here */
        else if (!bwd) dpprof_attention_fwd_gpu(t[4], t32[5], t[0], t[1], t[2], sh->B, sh->T, sh->NH, sh->NKV, sh->HS);
        else dpprof_attention_bwd_gpu(t[6], t[7], t[8], t[3], t[0], t[1], t[2], t[4], t32[5], sh->B, sh->T, sh->NH, sh->NKV, sh->HS);
#endif
        if (r > 0 && rc == DPPROF_OK) rc = dpprof_cuda_event(&e1);
        if (r > 0 && rc == DPPROF_OK) rc = dpprof_cuda_event_ms(e0, e1, &ms[r - 1]);
        if (rc == DPPROF_OK) rc = dpprof_cuda_sync();
    }
    dpprof_cuda_events_reset();
    if (rc != DPPROF_OK) {
        row->status = "error";
        snprintf(row->note, sizeof row->note, "%.150s", dpprof_last_error());
        return rc;
    }
    qsort(ms, (size_t)repeats, sizeof ms[0], ab_cmp);
    row->status = "ok";
    row->ms_min = ms[0], row->ms_max = ms[repeats - 1];
    row->ms_med = repeats % 2 ? ms[repeats / 2] : 0.5 * (ms[repeats / 2 - 1] + ms[repeats / 2]);
    return DPPROF_OK;
}

static void ab_json_num(FILE *f, double v) {
    if (v == v && v - v == 0) fprintf(f, "%.17g", v);
    else fputs("null", f);
}

static int cmd_attnbench(int argc, char **argv) {
    ab_shape shapes[AB_MAX_SHAPES];
    static const struct {
        const char *preset;
        int B, T;
    } defaults[] = {{"trainer-1b", 8, 1024}, {"longctx", 1, 16384}, {"llama-3.2-1b", 8, 1024}};
    ab_row *rows;
    dpprof_device_info dev;
    double peak32 = 0, peak16 = 0, peakdram = 0;
    int nshape = 0, repeats = 10, count = 0, i, s, v, pass, stop = 0, rc;
    ab_opts ao;
    const char *out_path = NULL;
    out_file af;
    char date[32];
    time_t now = time(NULL);
    memset(&ao, 0, sizeof ao);
    ao.repeats = 10;
    rc = cli_parse(&ab_cmd, argc, argv, &ao, NULL, NULL, NULL);
    if (rc == CLI_HELP_SHOWN) return EXIT_OK;
    if (rc != EXIT_OK) return rc;
    repeats = ao.repeats, out_path = ao.out;
    for (nshape = 0; nshape < ao.shape.n; nshape++)
        if (ab_parse_shape(ao.shape.v[nshape], &shapes[nshape])) return EXIT_USAGE;
    for (i = 0; nshape == 0 && i < (int)(sizeof defaults / sizeof defaults[0]); i++) {
        dpprof_shape p;
        if (dpprof_preset_shape(defaults[i].preset, &p) != DPPROF_OK) return cli_fail(EXIT_ERROR, "preset %s is missing", defaults[i].preset);
        snprintf(shapes[i].name, sizeof shapes[i].name, "%s", defaults[i].preset);
        shapes[i].B = defaults[i].B, shapes[i].T = defaults[i].T, shapes[i].NH = p.NH, shapes[i].NKV = p.NKV, shapes[i].HS = p.HS;
        if (i + 1 == (int)(sizeof defaults / sizeof defaults[0])) nshape = i + 1;
    }
    rc = dpprof_cuda_device_count(&count);
    if (rc != DPPROF_OK || count == 0) {
        cli_fail(0, "no GPU is visible on this machine (%s): nothing measured", rc == DPPROF_ERR_NO_CUDA ? "this dpprof was built without CUDA" : (rc != DPPROF_OK ? dpprof_last_error() : "the CUDA runtime sees no device"));
        return EXIT_USAGE;
    }
    if (out_path && out_open(&af, out_path, "--out")) return EXIT_USAGE;
    if (dpprof_cuda_device_info(0, &dev) != DPPROF_OK || dpprof_cuda_init(0) != DPPROF_OK) {
        cli_fail(0, "%s", dpprof_last_error());
        if (out_path) out_abort(&af);
        return EXIT_ERROR;
    }
    dpprof_device_peaks(&dev, &peak32, &peak16, &peakdram);
    rows = (ab_row *)calloc((size_t)nshape * AB_NV * 2, sizeof *rows);
    if (!rows) {
        cli_fail(0, "out of host memory");
        if (out_path) out_abort(&af);
        return EXIT_ERROR;
    }
    printf("attnbench on %s (sm %d.%d, %d SMs; peaks fp32 %.1f, bf16 %.1f TFLOP/s, dram %.2f TB/s), %d timed calls each\n", dev.name, dev.cc_major, dev.cc_minor,
           dev.sm_count, peak32 / 1e12, peak16 / 1e12, peakdram / 1e12, repeats);
    printf("%-24s %-5s %-9s %-4s %10s %10s %9s %7s %7s\n", "shape", "dtype", "kernel", "pass", "ms median", "ms min", "TFLOP/s", "%fp32", "%bf16");
    for (s = 0; s < nshape; s++) {
        const ab_shape *sh = &shapes[s];
        const size_t nq = (size_t)sh->B * sh->T * sh->NH * sh->HS, nk = (size_t)sh->B * sh->T * sh->NKV * sh->HS, nl = (size_t)sh->B * sh->NH * sh->T;
        const size_t n[9] = {nq, nk, nk, nq, nq, nl, nq, nk, nk};
        float *t32[9] = {0}, *t16[9] = {0};
        int arc = DPPROF_OK;
        for (i = 0; i < 9 && arc == DPPROF_OK; i++) {
            arc = dpprof_cuda_alloc((void **)&t32[i], n[i] * sizeof(float));
            if (arc == DPPROF_OK && i != 5) arc = dpprof_cuda_alloc((void **)&t16[i], n[i] * sizeof(dpprof_bf16));
        }
        /* cuDNN's plans for the shape and their workspace (a row says why where there are none) */
        void *cudnn_ws = NULL;
        size_t cudnn_wsb = 0;
        int cudnn_det = 0, cudnn_ok = 0;
        char cudnn_why[160] = "";
        if (arc == DPPROF_OK) {
            cudnn_ok = dpprof_cudnn_attention_plan(sh->B, sh->T, sh->NH, sh->NKV, sh->HS, &cudnn_wsb, &cudnn_det) == DPPROF_OK;
            if (cudnn_ok && cudnn_wsb) cudnn_ok = dpprof_cuda_alloc(&cudnn_ws, cudnn_wsb) == DPPROF_OK;
            snprintf(cudnn_why, sizeof cudnn_why, "%.150s", cudnn_ok ? "" : dpprof_last_error());
            if (cudnn_ok) printf("%-24s cuDNN's plans: workspace %.1f MiB, backward %s\n", sh->name, (double)cudnn_wsb / 1048576.0, cudnn_det ? "deterministic" : "not deterministic");
        }
        if (arc == DPPROF_OK) { /* inputs: standard normals (q, k, v, dout), and their bf16 roundings */
#if DPPROF__CUDA
            for (i = 0; i < 4; i++) {
                dpprof_init_normal_gpu(t32[i], n[i], 1.0, 1234, (uint64_t)i);
                dpprof_cast_bf16_gpu((dpprof_bf16 *)t16[i], t32[i], n[i]);
            }
#endif
            arc = dpprof_cuda_sync();
        }
        for (v = 0; v < AB_NV; v++)
            for (pass = 0; pass < 2; pass++) {
                ab_row *row = &rows[((size_t)s * AB_NV + v) * 2 + pass];
                const ab_variant *va = &ab_variants[v];
                const int bf16 = !strcmp(va->storage, "bf16");
                char label[16];
                const dpprof_cost c = pass ? dpprof_attention_bwd_cost(sh->B, sh->T, sh->NH, sh->NKV, sh->HS, bf16 ? 2 : 4)
                                           : dpprof_attention_fwd_cost(sh->B, sh->T, sh->NH, sh->NKV, sh->HS, bf16 ? 2 : 4);
                row->flops = c.flops, row->bytes = c.bytes;
                snprintf(label, sizeof label, "%s%s%s", va->kernel, va->rows == 128 ? "-128" : (va->rows ? "-64" : ""), va->wrows == 32 ? "w32" : "");
                if (stop) {
                    row->status = "not_run";
                    snprintf(row->note, sizeof row->note, "an earlier launch failed: the device queue keeps its first error");
                } else if (arc != DPPROF_OK) {
                    row->status = arc == DPPROF_ERR_OOM ? "oom" : "error";
                    snprintf(row->note, sizeof row->note, "%.150s", dpprof_last_error());
                } else if (va->rows && !(sh->HS % 2 == 0 && sh->HS <= 128)) {
                    row->status = "skipped";
                    snprintf(row->note, sizeof row->note, "HS %d: the tensor-core kernels take even head sizes up to 128", sh->HS);
                } else if (!strcmp(va->kernel, "cudnn") && !cudnn_ok) {
                    row->status = "skipped";
                    snprintf(row->note, sizeof row->note, "%s", cudnn_why);
                } else if (va->wrows == 32 && sh->HS > 64) {
                    row->status = "skipped";
                    snprintf(row->note, sizeof row->note, "HS %d: 32 rows a warp apply up to head size 64, above it tc-%d's kernels run", sh->HS, va->rows);
                } else {
                    dpprof_cuda_tuning tune;
                    memset(&tune, 0, sizeof tune);
                    tune.attention_simt = va->rows == 0, tune.attention_block = va->rows, tune.attention_warp_rows = va->wrows;
                    dpprof_cuda_set_storage(bf16 ? DPPROF_DTYPE_BF16 : DPPROF_DTYPE_FP32);
                    (void)dpprof_cuda_set_tuning(&tune);
                    if (ab_time(row, pass, repeats, t16, t32, sh, bf16, !strcmp(va->kernel, "cudnn"), cudnn_ws, cudnn_wsb) != DPPROF_OK) stop = 1;
                }
                if (!strcmp(row->status, "ok"))
                    printf("%-24s %-5s %-9s %-4s %10.3f %10.3f %9.1f %6.1f%% %6.1f%%\n", sh->name, va->storage, label, pass ? "bwd" : "fwd", row->ms_med, row->ms_min, row->flops / (row->ms_med * 1e-3) / 1e12,
                           peak32 > 0 ? 100.0 * row->flops / (row->ms_med * 1e-3) / peak32 : 0.0, peak16 > 0 ? 100.0 * row->flops / (row->ms_med * 1e-3) / peak16 : 0.0);
                else printf("%-24s %-5s %-9s %-4s %s: %s\n", sh->name, va->storage, label, pass ? "bwd" : "fwd", row->status, row->note);
                fflush(stdout);
            }
        dpprof_cuda_set_storage(DPPROF_DTYPE_FP32);
        (void)dpprof_cuda_set_tuning(NULL);
        for (i = 0; i < 9; i++) dpprof_cuda_release(t32[i]), dpprof_cuda_release(t16[i]);
        dpprof_cuda_release(cudnn_ws);
    }
    strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
    if (out_path) {
        FILE *f = af.f;
        fputs("{\n  \"experiment\": \"attnbench\",\n  \"status\": ", f);
        sweep_json_str(f, stop ? "error" : "ok");
        fprintf(f, ",\n  \"repeats\": %d,\n  \"results\": [", repeats);
        for (s = 0; s < nshape; s++)
            for (v = 0; v < AB_NV; v++)
                for (pass = 0; pass < 2; pass++) {
                    const ab_row *row = &rows[((size_t)s * AB_NV + v) * 2 + pass];
                    const int ok = !strcmp(row->status, "ok");
                    const double rate = ok ? row->flops / (row->ms_med * 1e-3) : NAN, bw = ok ? row->bytes / (row->ms_med * 1e-3) : NAN;
                    fputs(s || v || pass ? ",\n    {\"shape\": " : "\n    {\"shape\": ", f);
                    sweep_json_str(f, shapes[s].name);
                    fprintf(f, ", \"B\": %d, \"T\": %d, \"NH\": %d, \"NKV\": %d, \"HS\": %d, \"storage\": \"%s\", \"kernel\": \"%s\", \"block_rows\": ", shapes[s].B, shapes[s].T,
                            shapes[s].NH, shapes[s].NKV, shapes[s].HS, ab_variants[v].storage, ab_variants[v].kernel);
                    if (ab_variants[v].rows) fprintf(f, "%d", ab_variants[v].rows);
                    else fputs("null", f);
                    fputs(", \"warp_rows\": ", f);
                    if (ab_variants[v].wrows) fprintf(f, "%d", ab_variants[v].wrows);
                    else fputs("null", f);
                    fprintf(f, ", \"pass\": \"%s\", \"status\": ", pass ? "bwd" : "fwd");
                    sweep_json_str(f, row->status);
                    fputs(", \"note\": ", f);
                    if (row->note[0]) sweep_json_str(f, row->note);
                    else fputs("null", f);
                    fputs(", \"ms_median\": ", f), ab_json_num(f, ok ? row->ms_med : NAN);
                    fputs(", \"ms_min\": ", f), ab_json_num(f, ok ? row->ms_min : NAN);
                    fputs(", \"ms_max\": ", f), ab_json_num(f, ok ? row->ms_max : NAN);
                    fputs(", \"flops\": ", f), ab_json_num(f, row->flops);
                    fputs(", \"bytes_analytic\": ", f), ab_json_num(f, row->bytes);
                    fputs(", \"tflops\": ", f), ab_json_num(f, rate / 1e12);
                    fputs(", \"share_of_fp32_peak\": ", f), ab_json_num(f, peak32 > 0 ? rate / peak32 : NAN);
                    fputs(", \"share_of_bf16_peak\": ", f), ab_json_num(f, peak16 > 0 ? rate / peak16 : NAN);
                    fputs(", \"share_of_dram_peak\": ", f), ab_json_num(f, peakdram > 0 ? bw / peakdram : NAN);
                    fputs("}", f);
                }
        fputs("\n  ],\n  \"meta\": {\"dpprof_version\": ", f);
        sweep_json_str(f, DPPROF_VERSION);
        fputs(", \"git_commit\": ", f);
        sweep_json_str(f, DPPROF_GIT_COMMIT);
        fputs(", \"source_sha256\": ", f);
        sweep_json_str(f, DPPROF_SOURCE_HASH);
        fputs(", \"source_state\": ", f);
        sweep_json_str(f, DPPROF_SOURCE_STATE);
        fputs(", \"device\": ", f);
        sweep_json_str(f, dev.name);
        fprintf(f, ", \"driver\": %d, \"cuda_runtime\": %d, \"compute_capability\": \"%d.%d\", \"sm_count\": %d, \"peak_fp32_flops\": ", dev.driver_version,
                dev.runtime_version, dev.cc_major, dev.cc_minor, dev.sm_count);
        ab_json_num(f, peak32 > 0 ? peak32 : NAN);
        fputs(", \"peak_bf16_flops\": ", f), ab_json_num(f, peak16 > 0 ? peak16 : NAN);
        fputs(", \"peak_dram_bytes_per_s\": ", f), ab_json_num(f, peakdram > 0 ? peakdram : NAN);
        fprintf(f, ", \"date\": \"%s\", \"note\": \"flops and bytes_analytic are dpprof_attention_fwd_cost / _bwd_cost (causal pairs: 4 HS flops each forward, "
                   "10 HS backward, as flash attention counts; the backward kernels also recompute q.k and dout.v for dq: 14 HS executed); "
                   "peaks from dpprof_device_peaks\"}\n}\n",
                date);
        if (out_commit(&af)) {
            free(rows);
            return EXIT_ERROR;
        }
    }
    free(rows);
    return stop ? EXIT_ERROR : EXIT_OK;
}

static int cmd_devices(void) {
    int count = 0, i, rc = dpprof_cuda_device_count(&count);
    if (rc != DPPROF_OK || count == 0) {
        printf("no GPU visible: %s\n", rc == DPPROF_ERR_NO_CUDA ? "this dpprof was built without CUDA" : (rc != DPPROF_OK ? dpprof_last_error() : "the CUDA runtime sees no device"));
        return EXIT_ERROR;
    }
    for (i = 0; i < count; i++) {
        dpprof_device_info d;
        double f32, b16, dram;
        if (dpprof_cuda_device_info(i, &d) != DPPROF_OK) {
            printf("%d: %s\n", i, dpprof_last_error());
            continue;
        }
        dpprof_device_peaks(&d, &f32, &b16, &dram);
        printf("%d: %s, sm %d.%d, %d SMs, %.1f GiB (%.1f GiB free), driver %d, runtime %d; peaks: fp32 %.1f TFLOP/s, bf16 %.1f TFLOP/s, dram %.2f TB/s\n", i, d.name,
               d.cc_major, d.cc_minor, d.sm_count, (double)d.total_bytes / 1073741824.0, (double)d.free_bytes / 1073741824.0, d.driver_version, d.runtime_version,
               f32 / 1e12, b16 / 1e12, dram / 1e12);
    }
    return EXIT_OK;
}

/* a command that takes no arguments (presets, devices, version): 1 where argv has none past it, else -1 after
   printing its usage (--help, -h: exit 0) or saying what is extra (exit 2); *rc is the exit code */
static int no_args(int argc, char **argv, const char *what, int *rc) {
    if (argc < 3) return 1;
    if (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h")) {
        printf("usage: %s %s (no options)\n\n%s\n", prog_name, argv[1], what);
        *rc = EXIT_OK;
    } else *rc = cli_usage(strncmp(argv[2], "--", 2) ? "unexpected argument '%s' (it takes none)" : "unknown option '%s' (it takes none)", argv[2]);
    return -1;
}

/* the figures' font, for the commands that draw: DPPROF_FONT's TrueType file, else DejaVu Sans where Debian's
   fonts-dejavu-core puts it, else (or with DPPROF_FONT set empty) the built-in bitmap font. a DPPROF_FONT that
   cannot be read is an error before any work */
#define CLI_DEFAULT_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
static int cli_font(void) {
    const char *env = getenv("DPPROF_FONT");
    if (env && !env[0]) return 0;
    if (dpprof_plot_font(env ? env : CLI_DEFAULT_FONT) == 0 || !env) return 0;
    return cli_usage("DPPROF_FONT='%s': no TrueType font could be read from it (unset it for DejaVu Sans, set it empty for the built-in bitmap font)", env);
}

static int dispatch(int argc, char **argv) {
    int rc = EXIT_OK;
    if (argc < 2) {
        help_main();
        return EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        help_main();
        return EXIT_OK;
    }
    { /* every message from here on names the command */
        static const char *const known[] = {"run", "fit", "plot", "sweep", "report", "tables", "epsilon", "presets", "devices", "attnbench", "version", "--version"};
        size_t k;
        for (k = 0; k < sizeof known / sizeof known[0]; k++)
            if (!strcmp(argv[1], known[k])) cli_cmd = !strcmp(known[k], "tables") ? "report" : (known[k][0] == '-' ? "version" : known[k]);
    }
    if ((!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) && no_args(argc, argv, "prints the version, its commit and what the build has: CUDA, NCCL, MPI", &rc) < 0) return rc;
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
#ifdef DPPROF_MPI
        const char *mpi = "MPI";
#else
        const char *mpi = "no MPI: ranks > 1 on the dry backend only";
#endif
        const int dnn = dpprof_cudnn_available();
        char cudnn[48] = "";
        if (DPPROF__CUDA) snprintf(cudnn, sizeof cudnn, dnn ? ", cuDNN %d.%d.%d" : ", no cuDNN attention", dnn / 10000, dnn / 100 % 100, dnn % 100);
        printf("dpprof %s (%s, sources %.12s %s; %s%s, %s)\n", DPPROF_VERSION, DPPROF_GIT_COMMIT, DPPROF_SOURCE_HASH, DPPROF_SOURCE_STATE,
               !DPPROF__CUDA ? "no CUDA" : (dpprof_nccl_available() ? "CUDA, NCCL" : "CUDA without NCCL"), cudnn, mpi);
        return EXIT_OK;
    }
    if (!strcmp(argv[1], "fit") || !strcmp(argv[1], "plot") || !strcmp(argv[1], "sweep") || !strcmp(argv[1], "report") || !strcmp(argv[1], "tables"))
        if ((rc = cli_font()) != 0) return rc;
    if (!strcmp(argv[1], "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(argv[1], "fit")) return cmd_fit(argc - 2, argv + 2);
    if (!strcmp(argv[1], "plot")) return cmd_plot(argc - 2, argv + 2);
    if (!strcmp(argv[1], "presets")) return no_args(argc, argv, "lists the model presets and their shapes", &rc) < 0 ? rc : cmd_presets();
    if (!strcmp(argv[1], "devices")) return no_args(argc, argv, "lists the GPUs the cuda backend sees, with their peaks (exit 1 when none)", &rc) < 0 ? rc : cmd_devices();
    if (!strcmp(argv[1], "attnbench")) return cmd_attnbench(argc - 2, argv + 2);
    if (!strcmp(argv[1], "epsilon")) return cmd_epsilon(argc - 2, argv + 2);
    if (!strcmp(argv[1], "sweep")) return cmd_sweep(argc, argv); /* the whole argv: argv[0] is the fallback binary */
    /* tables: another name for report, which writes figures and tables together */
    if (!strcmp(argv[1], "report") || !strcmp(argv[1], "tables")) return cmd_report(argc - 2, argv + 2);
    {
        char near[32];
        if (dpprof_closest(argv[1], "run|fit|plot|sweep|report|tables|epsilon|presets|devices|attnbench|version", near, sizeof near))
            return cli_usage("unknown command '%s' (did you mean %s?)", argv[1], near);
        return cli_usage("unknown command '%s'", argv[1]);
    }
}

/* launched by mpirun (Open MPI's or a PMI launcher's variables), a build with MPI joins the job; otherwise it
   never touches MPI, so the single-process program needs no launcher */
/* a write to a pipe whose reader stopped (stderr into head), or past a file-size limit, fails with an error the
   writer reports, rather than killing the run before it removes its temporaries: SIGPIPE and SIGXFSZ ignored where
   nobody else handles them */
static void quiet_signals(void) {
    static const int sigs[] = {SIGPIPE, SIGXFSZ};
    size_t k;
    for (k = 0; k < sizeof sigs / sizeof sigs[0]; k++) {
        struct sigaction old;
        if (sigaction(sigs[k], NULL, &old) == 0 && old.sa_handler == SIG_DFL) signal(sigs[k], SIG_IGN);
    }
}

int main(int argc, char **argv) {
    quiet_signals();
#ifdef DPPROF_MPI
    int code, joined = getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_RANK");
    if (joined) {
        MPI_Init(&argc, &argv);
        MPI_Comm_rank(MPI_COMM_WORLD, &mpi_rank);
        MPI_Comm_size(MPI_COMM_WORLD, &mpi_world);
    }
    if (mpi_world > 1 && (argc < 2 || strcmp(argv[1], "run") != 0)) {
        if (!mpi_rank) cli_fail(0, "only 'dpprof run' runs as an MPI job of %d processes (give mpirun -np 1 or no mpirun for '%s')", mpi_world, argc > 1 ? argv[1] : "");
        code = EXIT_USAGE;
    } else code = dispatch(argc, argv);
    if (mpi_world > 1 && !mpi_agreed) mpi_agree(0); /* stopped before the run: the other ranks must not wait */
    if (joined) MPI_Finalize();
    return code;
#else
    return dispatch(argc, argv);
#endif
}
