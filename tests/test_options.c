/* tests/test_options.c - the command line's option tables: every option that sets a dpprof_config field names
   one the library describes, with values it takes; the parser's errors (did you mean), the library's messages
   in the command line's words; and docs/results.md's list of dpprof run's options is the table's (on a
   mismatch the test prints the list the table gives). run from the repository root (tests/run.sh does). */
#define _XOPEN_SOURCE 700
#define DPPROF_IMPLEMENTATION
#define DPPROF_ENGINE
#include "dpprof.h"
#define DPPROF_TOOLS_IMPLEMENTATION
#include "dpprof_tools.h"
#include "dpprof_cli.h"
#include "dpprof_experiments.h"
#include "test.h"

/* every option of a command: a name, help, a library field where it sets one, and values the field takes */
static void check_table(const cli_command *c) {
    size_t i, j;
    int bad_field = 0, bad_help = 0, dup = 0, bad_value = 0;
    for (i = 0; i < c->nopt; i++) {
        const cli_opt *o = &c->opt[i];
        if (o->kind == CLI_HEAD) continue;
        if (!o->name || strncmp(o->name, "--", 2) || !o->help || !o->help[0]) bad_help++, printf("# %s: %s has no name or no help\n", c->name, o->name ? o->name : "(null)");
        for (j = 0; j < i; j++)
            if (c->opt[j].name && !strcmp(c->opt[j].name, o->name)) dup++, printf("# %s: %s twice\n", c->name, o->name);
        if (o->kind == CLI_CONFIG || o->kind == CLI_SET) {
            dpprof_config probe;
            memset(&probe, 0, sizeof probe);
            if (!cli_field(o)) {
                bad_field++, printf("# %s: %s sets config.%s, which dpprof_config does not have\n", c->name, o->name, o->key);
                continue;
            }
            if (o->kind == CLI_SET && dpprof_config_set(&probe, o->key, o->values) != DPPROF_OK) bad_value++, printf("# %s: %s: %s\n", c->name, o->name, dpprof_last_error());
            if (o->kind == CLI_CONFIG && o->values) { /* each of the command line's names maps to a value the field takes */
                const char *w = o->values;
                while (*w) {
                    size_t n = strcspn(w, "|"), e = strcspn(w, "=|");
                    char v[64];
                    snprintf(v, sizeof v, "%.*s", (int)(n - e - 1), w + e + 1);
                    if (e >= n || dpprof_config_set(&probe, o->key, v) != DPPROF_OK) bad_value++, printf("# %s: %s: '%.*s' maps to no value of config.%s\n", c->name, o->name, (int)n, w, o->key);
                    w += n + (w[n] == '|');
                }
            }
        }
    }
    CHECK(bad_field == 0, "%s: every option that sets a config field names one dpprof_config_fields describes", c->name);
    CHECK(bad_value == 0, "%s: every value an option sets is one its field takes", c->name);
    CHECK(bad_help == 0 && dup == 0, "%s: every option has a name, a help line, and no name is there twice", c->name);
}

/* what parsing argv prints on stderr (the first line) and returns */
static int parse_says(const cli_command *c, const char *args, char *msg, size_t cap) {
    char buf[512], *argv[32], *p;
    int argc = 0, rc, fd, saved;
    run_opts o;
    FILE *f = tmpfile();
    snprintf(buf, sizeof buf, "%s", args);
    for (p = strtok(buf, " "); p && argc < 31; p = strtok(NULL, " ")) argv[argc++] = p;
    fflush(stderr);
    saved = dup(2);
    fd = fileno(f);
    dup2(fd, 2);
    memset(&o, 0, sizeof o);
    cli_cmd = c->name;
    rc = c == &run_cmd ? parse_run(argc, argv, &o) : cli_parse(c, argc, argv, &o, &o.cfg, NULL, NULL);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    rewind(f);
    msg[0] = 0;
    if (!fgets(msg, (int)cap, f)) msg[0] = 0;
    msg[strcspn(msg, "\n")] = 0;
    fclose(f);
    return rc;
}

/* the fenced block of docs/results.md after the line that starts with head; NULL where there is none */
static char *docs_block(const char *path, const char *head) {
    FILE *f = fopen(path, "r");
    char line[1024], *out;
    size_t len = 0, cap = 1 << 16;
    int state = 0; /* 0 before head, 1 before the fence, 2 inside */
    if (!f) return NULL;
    out = (char *)calloc(cap, 1);
    while (out && fgets(line, sizeof line, f)) {
        if (state == 0 && !strncmp(line, head, strlen(head))) state = 1;
        else if (state == 1 && !strncmp(line, "```", 3)) state = 2;
        else if (state == 2 && !strncmp(line, "```", 3)) break;
        else if (state == 2 && len + strlen(line) < cap) len += (size_t)snprintf(out + len, cap - len, "%s", line);
    }
    fclose(f);
    if (state != 2) {
        free(out);
        return NULL;
    }
    return out;
}

int main(void) {
    char msg[1024], say[1024], want[1 << 16];
    size_t n;
    FILE *mem;
    char *docs;

    check_table(&run_cmd);
    check_table(&sweep_cmd);
    check_table(&report_cmd);
    fit_table();
    check_table(&fit_cmd);
    CHECK(fit_cmd.nopt == CLI_N(fit_spec), "fit's table: each of run's options it names is in run's table (%zu of %zu)", fit_cmd.nopt, CLI_N(fit_spec));
    CHECK(parse_says(&fit_cmd, "--lora-rnk 8", msg, sizeof msg) == EXIT_USAGE && strstr(msg, "did you mean --lora-rank?"), "fit: an unknown option, the closest named (%s)", msg);

    /* docs/results.md lists dpprof run's options as the table gives them */
    mem = tmpfile();
    cli_synopsis(mem, &run_cmd);
    rewind(mem);
    n = fread(want, 1, sizeof want - 1, mem);
    want[n] = 0;
    fclose(mem);
    docs = docs_block("docs/results.md", "`dpprof run` options");
    CHECK(docs && !strcmp(docs, want), "docs/results.md lists dpprof run's options as its option table does");
    if (!docs || strcmp(docs, want)) printf("# the list the table gives (docs/results.md, in the block after '`dpprof run` options'):\n%s", want);
    free(docs);

    /* the parser: did you mean, values by the library's description, the pairs */
    CHECK(parse_says(&run_cmd, "--seqq 5", msg, sizeof msg) == EXIT_USAGE && strstr(msg, "dpprof: run: unknown option '--seqq' (did you mean --seq?)"), "an unknown option: the closest named (%s)", msg);
    CHECK(parse_says(&run_cmd, "--frobnicate 5", msg, sizeof msg) == EXIT_USAGE && strstr(msg, "unknown option '--frobnicate'") && !strstr(msg, "did you mean"), "nothing close: no guess (%s)", msg);
    CHECK(parse_says(&run_cmd, "--algo flashbk", msg, sizeof msg) == EXIT_USAGE && strstr(msg, "--algo 'flashbk': expected vanilla, persample, ghost, ghost_bk, flash, flash_bk or auto (did you mean flash_bk?)"),
          "an enum's value misspelt: the library's names, the closest named (%s)", msg);
    CHECK(parse_says(&run_cmd, "--clipping per_layer", msg, sizeof msg) == EXIT_USAGE && strstr(msg, "--clipping 'per_layer': expected flat or per-layer (did you mean per-layer?)"),
          "a value of the command line's own names misspelt: the closest named (%s)", msg);
    CHECK(parse_says(&run_cmd, "--batch -3", msg, sizeof msg) == EXIT_USAGE && strstr(msg, "--batch '-3': expected an integer in [1, 16777216]"), "a number out of the library's range (%s)", msg);
    CHECK(parse_says(&run_cmd, "--dp-warp-tile 48", msg, sizeof msg) == EXIT_USAGE && strstr(msg, "--dp-warp-tile '48': expected 32 or 64"), "a number out of its set (%s)", msg);
    CHECK(parse_says(&run_cmd, "--wgmma --no-wgmma", msg, sizeof msg) == EXIT_USAGE && strstr(msg, "--wgmma and --no-wgmma contradict each other (--no-wgmma came second)"), "a pair given both ways (%s)", msg);
    CHECK(parse_says(&run_cmd, "--dram-ops --dram", msg, sizeof msg) == EXIT_OK, "--dram after --dram-ops keeps the counters per op");
    CHECK(parse_says(&run_cmd, "--quiet=1", msg, sizeof msg) == EXIT_USAGE && strstr(msg, "--quiet takes no value (got '1')"), "a flag given a value (%s)", msg);
    CHECK(parse_says(&run_cmd, "--steps", msg, sizeof msg) == EXIT_USAGE && strstr(msg, "--steps needs a value (N)"), "an option without its value (%s)", msg);
    CHECK(parse_says(&sweep_cmd, "--jobz 2", msg, sizeof msg) == EXIT_USAGE && strstr(msg, "dpprof: sweep: unknown option '--jobz' (did you mean --jobs?)"), "another command's table (%s)", msg);

    /* the library's messages in the command line's words */
    cli_say(&run_cmd, "config.physical_batch = 16 is larger than config.batch = 8", say, sizeof say);
    CHECK(!strcmp(say, "--physical-batch 16 is larger than --batch 8"), "config.NAME = V: the option and V (%s)", say);
    cli_say(&run_cmd, "config.tie_embeddings = off unties it", say, sizeof say);
    CHECK(!strcmp(say, "--untied unties it"), "a value an option without a value sets: that option (%s)", say);
    cli_say(&run_cmd, "config.per_layer_clipping = 1, config.no_timeline = 1", say, sizeof say);
    CHECK(!strcmp(say, "--clipping per-layer, --timeline none"), "a value in the command line's names (%s)", say);
    cli_say(&run_cmd, "config.poisson samples from a dataset: give config.dataset_size", say, sizeof say);
    CHECK(!strcmp(say, "--poisson samples from a dataset: give --dataset-size"), "a field alone: its option (%s)", say);
    cli_say(&run_cmd, "config.head_dim = 7 and config. alone", say, sizeof say);
    CHECK(!strcmp(say, "head_dim = 7 and config. alone"), "a field no option sets: its name (%s)", say);
    return test_finish();
}
