/* `refit run`: runs a what-if study script, storing each of its runs in its own
 * transaction; study_run_one is also what refit search stores its top rows with. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "cmd.h"
#include "progress.h"
#include "refit_run.h"
#include "search_lua.h"

static const char usage_run[] =
    "usage: refit run STUDY.lua [--db FILE] [--store full|summary] [--jobs N]\n"
    "                 [--max-memory SIZE]\n"
    "\n"
    "Runs a what-if study: a Lua script with the `refit` module (refit.scenario, refit.with,\n"
    "refit.plan, refit.sim, refit.table, refit.model, refit.progress; see README.md).\n"
    "Every plan and prediction it makes is stored in FILE (default refit.db), one\n"
    "transaction per run, labelled as the study says. Progress goes to stderr when it is a\n"
    "terminal.\n"
    "  --store summary  every run without its plan's tensors, boxes and transfers (run,\n"
    "                 scenario, sides, memory, prediction, link loads, rounds, phases)\n"
    "  --jobs N       compute the study's points in N processes at once, then store them\n"
    "                 in study order: the same rows as a serial run (README, Studies)\n"
    "  --max-memory SIZE  refuse up front, with the estimate, a point estimated to need\n"
    "                 more memory (GB, or with M, G or T; 0: no limit; default three\n"
    "                 quarters of this machine's memory)\n";

static void copy_str(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

/* Frees the copies study_table_one keeps of the tables printed before the study's first
 * stored run (the store only reads them, hence its const pointers). */
void study_pending_release(struct rf_store_study *study)
{
    for (size_t i = 0; i < study->n_pending; i++) {
        const struct rf_study_table *t = &study->pending[i];
        free((char *)t->title);
        free((char *)t->columns_json);
        free((char *)t->rows_json);
        free((char *)t->text);
    }
    free((struct rf_study_table *)study->pending);
    study->pending = NULL;
    study->n_pending = 0;
}

/* One refit.plan / refit.sim of a study: plan (and simulate), store, report. */
int study_run_one(void *ctx, const struct rf_scenario_src *src, const char *strategy,
                  const char *label, bool simulate, struct rf_study_result *out,
                  struct rf_error *err)
{
    struct study_ctx *c = ctx;
    struct refit_run r = {0};
    int rc = cmd_check_label("label", label, err);
    /* A study's run shows its number and phases while it runs (elapsed since the study
     * started): Kimi K3 runs take minutes each. */
    struct rf_sim_options o = *c->sim;
    if (c->progress) {
        snprintf(c->progress->prefix, sizeof(c->progress->prefix), "%s %d",
                 c->progress_what ? c->progress_what : "refit run: run", c->runs + 1);
        o.progress = rf_progress_hook;
        o.progress_ctx = c->progress;
    }
    if (rc == 0)
        rc = refit_run_compute(c->L, src, strategy, simulate, &o, &r, err);
    rf_progress_clear(c->progress);
    r.summary = c->summary;
    r.study = c->study;
    if (rc == 0)
        rc = refit_run_store(c->ls, label, &r, err);
    /* The run that stored the study's row stored its pending tables with it. */
    if (rc == 0 && c->study && c->study->id > 0)
        study_pending_release(c->study);
    if (rc == 0) {
        const struct rf_scenario *sc = &r.sc;
        const struct rf_plan *plan = &r.plan;
        out->run_id = r.id;
        copy_str(out->model, sizeof(out->model), sc->model.name);
        copy_str(out->cluster, sizeof(out->cluster), sc->cluster.name);
        copy_str(out->strategy, sizeof(out->strategy), rf_strategy_name(plan->strategy));
        copy_str(out->infer_dtype, sizeof(out->infer_dtype), rf_dtype_name(sc->infer.dtype));
        rf_side_describe(&sc->train, out->train_layout, sizeof(out->train_layout));
        rf_side_describe(&sc->infer, out->infer_layout, sizeof(out->infer_layout));
        out->train_gpus = sc->train.gpus;
        out->infer_gpus = sc->infer.gpus;
        out->model_params = plan->model_params;
        out->model_bytes = plan->model_bytes;
        out->payload_bytes = plan->total.payload_bytes;
        out->moved_bytes = plan->total.moved_bytes;
        out->logical_bytes = plan->total.logical_bytes;
        out->transfers = plan->total.transfers;
        out->rounds = plan->n_rounds;
        if (r.pred.n_links) {
            out->predicted_s = r.pred.predicted_s;
            out->lower_bound_s = r.pred.lower_bound_s;
            out->wire_s = r.wire_s > 0 ? r.wire_s : r.pred.predicted_s;
            out->step_s = r.step.n > 0 ? r.step.total_s : NAN;
            out->fabric_bytes = r.pred.fabric_bytes;
            out->nvlink_bytes = r.pred.nvlink_bytes;
            if (r.pred.bottleneck >= 0)
                rf_link_describe(r.used, (size_t)r.pred.bottleneck, out->bottleneck,
                                 sizeof(out->bottleneck));
        }
        copy_str(out->auto_choice, sizeof(out->auto_choice), r.choice.description);
        out->overlap_refit_s = out->stall_s = out->staleness_s = NAN;
        if (r.pred.n_links && r.sc.overlap.on) {
            out->overlap_refit_s = r.overlap.refit_s;
            out->stall_s = r.overlap.stall_s;
            out->staleness_s = r.overlap.staleness_s;
        }
        c->runs++;
        if (c->log_runs && (rc = RF_GROW(c->log, c->cap_log, c->n_log + 1, err)) == 0)
            c->log[c->n_log++] = r.id;
        if (c->tty)
            fprintf(stderr, "refit run: run %lld (%d so far): %s %s on %s%s%.3f s\n",
                    (long long)r.id, c->runs, out->model, out->strategy, out->cluster,
                    r.pred.n_links ? ", predicted " : "",
                    r.pred.n_links ? r.pred.predicted_s : 0.0);
    }
    refit_run_release(&r);
    return rc;
}

/* strdup(s), NULL staying NULL; false when out of memory. */
static bool dup_or_null(const char *s, const char **out)
{
    *out = s ? strdup(s) : NULL;
    return !s || *out;
}

/* One refit.table of the study: stored with the study once it has a stored run. A table
 * printed before the study's first run is kept here (study->pending) and stored with that
 * run, in its transaction, since the study's row comes with it (sim/store_study.c): a study
 * that stores no run writes nothing, and one that does stores every table it printed. */
int study_table_one(void *ctx, const struct rf_study_table *t, struct rf_error *err)
{
    struct study_ctx *c = ctx;
    if (!c->study)
        return 0;
    if (c->study->id == 0) {
        struct rf_store_study *s = c->study;
        struct rf_study_table *p =
            realloc((struct rf_study_table *)s->pending, (s->n_pending + 1) * sizeof(*p));
        if (!p)
            return rf_error_set(err, RF_ENOMEM, "refit.table: out of memory");
        s->pending = p;
        struct rf_study_table *n = &p[s->n_pending];
        *n = (struct rf_study_table){0};
        /* Counted before the copies are complete, so pending_release frees a partial one. */
        s->n_pending++;
        if (!dup_or_null(t->title, &n->title) || !dup_or_null(t->columns_json, &n->columns_json) ||
            !dup_or_null(t->rows_json, &n->rows_json) || !dup_or_null(t->text, &n->text))
            return rf_error_set(err, RF_ENOMEM, "refit.table: out of memory");
        return 0;
    }
    int rc = lazy_store_get(c->ls, err);
    if (rc == 0)
        rc = rf_store_save_study_table(&c->ls->st, c->study, t, err);
    return rc;
}

/* The study's name: the script's basename without .lua. */
static void study_name(const char *path, char *name, size_t size)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".lua") == 0)
        n -= 4;
    snprintf(name, size, "%.*s", (int)n, base);
}

int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},   {"store", required_argument, NULL, 'S'},
        {"jobs", required_argument, NULL, 'j'}, {"max-memory", required_argument, NULL, 'M'},
        {"help", no_argument, NULL, 'h'},       {NULL, 0, NULL, 0}};
    const char *db = "refit.db";
    bool summary = false;
    long jobs = 1;
    int64_t max_memory = -1;
    int c;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'S':
            if (cmd_store_mode("run", optarg, &summary) != 0)
                return 2;
            break;
        case 'j': {
            char *end;
            errno = 0;
            jobs = strtol(optarg, &end, 10);
            if (errno || end == optarg || *end || jobs < 1 || jobs > 1024)
                return cmd_usage_fail("run",
                                      "--jobs: expected a count of processes from 1 to "
                                      "1024, got '%s'",
                                      optarg);
            break;
        }
        case 'M':
            if (cmd_max_memory("run", optarg, &max_memory) != 0)
                return 2;
            break;
        case 'h': fputs(usage_run, stdout); return 0;
        default: return 2;
        }
    }
    if (optind + 1 != argc)
        return cmd_usage_fail("run", "run takes one STUDY, got %d", argc - optind);
    struct rf_error err = {0};
    /* The database is opened by the first run the study stores: a study that fails before
     * that leaves no file; runs stored before a later failure stay (each is one transaction). */
    struct cmd_env env;
    int rc = cmd_open(&env, db, CMD_OPEN_SIM);
    if (rc != 0) {
        cmd_close(&env);
        return rc;
    }
    if (max_memory >= 0)
        env.sim.max_memory = max_memory;
    char name[256], started[32] = "";
    time_t now = time(NULL);
    struct tm tm;
    study_name(argv[optind], name, sizeof(name));
    if (gmtime_r(&now, &tm))
        strftime(started, sizeof(started), "%Y-%m-%dT%H:%M:%SZ", &tm);
#ifdef PACKAGE_VERSION
    const char *version = PACKAGE_VERSION;
#else
    const char *version = NULL;
#endif
    struct rf_store_study study = {.path = argv[optind],
                                   .name = name,
                                   .started_at = started,
                                   .refit_version = version && *version ? version : NULL};
    struct rf_progress prog;
    rf_progress_init(&prog, stderr, "refit run", isatty(STDERR_FILENO) != 0);
    struct study_ctx ctx = {.L = env.L,
                            .ls = &env.ls,
                            .sim = &env.sim,
                            .tty = prog.enabled,
                            .progress = prog.enabled ? &prog : NULL,
                            .summary = summary,
                            .study = &study};
    rf_lua_set_study_search(env.L, &(struct rf_study_search){cmd_search_study, &ctx, env.sim});
    fflush(stdout);
    bool launched = false;
    rc = cmd_run_launched(&env, &ctx, argv[optind], &launched);
    if (launched)
        goto out;
    if (jobs > 1) {
        rc = cmd_run_dist(&env, &ctx, argv[optind], (int)jobs);
        goto out;
    }
    if (rf_lua_run_study(env.L, argv[optind], study_run_one, study_table_one, &ctx, NULL, &err) <
        0) {
        fflush(stdout);
        rc = cmd_fail(&err);
        goto out;
    }
    rc = 0;
out:
    /* A study that stored no run keeps its tables only on stdout. */
    study_pending_release(&study);
    cmd_close(&env);
    return rc;
}
