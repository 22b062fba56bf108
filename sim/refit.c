/* The `refit` command: git-style subcommands over the library (plan, models). Only this
 * file prints or exits. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auto.h"
#include "calibrate.h"
#include "plan.h"
#include "report.h"
#include "scenario.h"
#include "schedule.h"
#include "simulate.h"
#include "store.h"

#ifndef RF_MODELS_DIR
#define RF_MODELS_DIR "/usr/local/share/refit/models"
#endif

static const char usage_main[] =
    "usage: refit <command> [options]\n"
    "\n"
    "commands:\n"
    "  plan SCENARIO   build the transfer plan of a scenario and store it\n"
    "  sim SCENARIO    plan, simulate on the scenario's cluster, store the prediction\n"
    "  run STUDY       run a what-if study script (sweeps, tables), storing every run\n"
    "  calibrate       fit a cluster's calibration to the measured replays\n"
    "  report          write an HTML page of stored runs (tables, gnuplot plots)\n"
    "  models          list the known model architectures\n"
    "\n"
    "`refit <command> --help` describes each command. Models and layouts are read from\n"
    "$REFIT_MODELS, else the models/ folder next to the binary, else " RF_MODELS_DIR ".\n";

static const char usage_plan[] =
    "usage: refit plan SCENARIO [--db FILE] [--strategy S] [--label TEXT] [--json]\n"
    "\n"
    "Plans the refit described by SCENARIO (a Lua file), stores the run in FILE\n"
    "(default refit.db) in one transaction, and prints a summary per tensor role.\n"
    "  --strategy S   broadcast | reshard | hierarchical | hybrid | auto (overrides the\n"
    "                 scenario; auto predicts candidates on the scenario's cluster)\n"
    "  --label TEXT   label stored with the run\n"
    "  --json         print one JSON object instead of the table\n";

static const char usage_sim[] =
    "usage: refit sim SCENARIO [--strategy S | --compare] [--db FILE] [--label TEXT] [--json]\n"
    "\n"
    "Plans the refit of SCENARIO, simulates it on the scenario's cluster (max-min fair flows\n"
    "over the modelled links, the schedule's rounds, fixed costs), and stores plan and\n"
    "prediction in FILE (default refit.db), one transaction per strategy.\n"
    "  --strategy S   broadcast | reshard | hierarchical | hybrid | auto\n"
    "  --compare      every strategy, side by side\n"
    "  --label TEXT   label stored with the run(s)\n"
    "  --json         one JSON object (an array with --compare)\n";

static const char usage_calibrate[] =
    "usage: refit calibrate --db FILE --cluster NAME [--out FILE] [--json]\n"
    "\n"
    "Fits the calibration of cluster NAME (a preset or a cluster file) to every ok\n"
    "measurement (refit-exec --check) of a run that `refit sim` predicted on it: least\n"
    "squares on relative errors of the total and per-round times, over the knobs the runs\n"
    "can identify (nvlink_efficiency, nic_efficiency, message_latency_us,\n"
    "tensor_overhead_us, bucket_overhead_us). Prints each run's error before and after and\n"
    "writes the calibrated cluster file.\n"
    "  --out FILE     the calibrated cluster file (default NAME-calibrated.lua)\n"
    "  --json         print the fit as one JSON object instead of tables\n";
static const char usage_report[] =
    "usage: refit report --db FILE [--run ID ...] --html OUT\n"
    "\n"
    "Writes one self-contained HTML page (inline CSS and SVG) about the runs of FILE: a table\n"
    "per run, the strategy comparison, per-link utilisation and per-round timelines of\n"
    "simulated runs, and predicted against measured times where refit-exec stored\n"
    "measurements. The plots are drawn by gnuplot (Debian package gnuplot-nox;\n"
    "$REFIT_GNUPLOT names another binary).\n"
    "  --run ID       report this run (repeatable; default every run)\n"
    "  --html OUT     the page to write\n";

static const char usage_models[] =
    "usage: refit models [--json]\n"
    "\n"
    "Lists the model architectures of the models folder with their parameter counts.\n";

static int fail(const struct rf_error *err)
{
    fprintf(stderr, "refit: %s\n", err->msg);
    return 1;
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Where the Lua descriptions live; see usage_main. */
static void models_dir(char *buf, size_t size)
{
    const char *env = getenv("REFIT_MODELS");
    if (env && *env) {
        snprintf(buf, size, "%s", env);
        return;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            int w = snprintf(buf, size, "%s/models", exe);
            if (w > 0 && (size_t)w < size && is_dir(buf))
                return;
        }
    }
    snprintf(buf, size, "%s", RF_MODELS_DIR);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double gb(int64_t bytes)
{
    return (double)bytes / 1e9;
}

static void print_plan(const struct rf_scenario *sc, const struct rf_plan *plan, int64_t run,
                       const char *db, double seconds)
{
    char tl[128], il[128];
    rf_side_describe(&sc->train, tl, sizeof(tl));
    rf_side_describe(&sc->infer, il, sizeof(il));
    printf("%s: %.2f B params, %.2f GB, strategy %s\n", sc->model.name,
           (double)plan->model_params / 1e9, gb(plan->model_bytes),
           rf_strategy_name(plan->strategy));
    printf("  train %5lld GPUs from %-5lld %s, %s\n", (long long)sc->train.gpus,
           (long long)sc->train.first_gpu, tl, rf_dtype_name(sc->train.dtype));
    printf("  infer %5lld GPUs from %-5lld %s, %s\n\n", (long long)sc->infer.gpus,
           (long long)sc->infer.first_gpu, il, rf_dtype_name(sc->infer.dtype));
    printf("%-14s %7s %11s %12s %12s %12s %11s\n", "role", "tensors", "params(B)", "payload(GB)",
           "moved(GB)", "logical(GB)", "transfers");
    for (int r = 0; r <= RF_ROLE_COUNT; r++) {
        const struct rf_tally *t = r < RF_ROLE_COUNT ? &plan->role[r] : &plan->total;
        if (r < RF_ROLE_COUNT && t->tensors == 0)
            continue;
        printf("%-14s %7lld %11.3f %12.2f %12.2f %12.2f %11lld\n",
               r < RF_ROLE_COUNT ? rf_role_name((enum rf_role)r) : "total", (long long)t->tensors,
               (double)t->params / 1e9, gb(t->payload_bytes), gb(t->moved_bytes),
               gb(t->logical_bytes), (long long)t->transfers);
    }
    printf("\nrun %lld stored in %s: %zu boxes, %zu transfer runs, %zu collectives in %d rounds "
           "of %.2f GB staging per GPU (%.2f s)\n",
           (long long)run, db, plan->n_boxes, plan->n_transfers, plan->n_collectives,
           plan->n_rounds, gb(plan->staging_bytes), seconds);
}

/* Peak resident memory of this process, in bytes. */
static int64_t peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return (int64_t)ru.ru_maxrss * 1024;
}

static void print_plan_json(const struct rf_scenario *sc, const struct rf_plan *plan, int64_t run,
                            double plan_seconds, double store_seconds)
{
    json_t *roles = json_object();
    for (int r = 0; r < RF_ROLE_COUNT; r++) {
        const struct rf_tally *t = &plan->role[r];
        if (t->tensors == 0)
            continue;
        json_object_set_new(
            roles, rf_role_name((enum rf_role)r),
            json_pack("{sI sI sI sI sI sI sI sI}", "tensors", (json_int_t)t->tensors, "params",
                      (json_int_t)t->params, "payload_bytes", (json_int_t)t->payload_bytes,
                      "moved_bytes", (json_int_t)t->moved_bytes, "logical_bytes",
                      (json_int_t)t->logical_bytes, "local_bytes", (json_int_t)t->local_bytes,
                      "transfers", (json_int_t)t->transfers, "collectives",
                      (json_int_t)t->collectives));
    }
    json_t *o = json_pack(
        "{sI ss ss ss sI sI sI sI sI sI sI sI sI sI sI sI sf sf sI so}", "run_id", (json_int_t)run,
        "scenario", sc->source, "model", sc->model.name, "strategy",
        rf_strategy_name(plan->strategy), "model_params", (json_int_t)plan->model_params,
        "model_bytes", (json_int_t)plan->model_bytes, "payload_bytes",
        (json_int_t)plan->total.payload_bytes, "moved_bytes", (json_int_t)plan->total.moved_bytes,
        "logical_bytes", (json_int_t)plan->total.logical_bytes, "local_bytes",
        (json_int_t)plan->total.local_bytes, "transfers", (json_int_t)plan->total.transfers,
        "transfer_runs", (json_int_t)plan->n_transfers, "boxes", (json_int_t)plan->n_boxes,
        "collectives", (json_int_t)plan->n_collectives, "rounds", (json_int_t)plan->n_rounds,
        "staging_bytes", (json_int_t)plan->staging_bytes, "plan_seconds", plan_seconds,
        "store_seconds", store_seconds, "peak_rss_bytes", (json_int_t)peak_rss(), "roles", roles);
    json_dumpf(o, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
    json_decref(o);
}

/* Loads SCENARIO (with an optional strategy override), builds its cluster's topology and
 * builds and schedules its plan. For auto the search predicts every candidate, so the
 * winner's prediction comes back in pred (pred->n_links > 0); otherwise pred is untouched. */
static int plan_scenario(struct rf_lua *L, const struct rf_scenario_src *src, const char *strategy,
                         struct rf_scenario *sc, struct rf_topology *topo,
                         struct rf_cluster *alt_cluster, struct rf_topology *alt,
                         struct rf_plan *plan, struct rf_prediction *pred,
                         struct rf_auto_choice *choice, struct rf_error *err)
{
    int rc;
    if ((rc = rf_lua_load_scenario(L, src, strategy, sc, err)) < 0 ||
        (rc = rf_scenario_init_sides(sc, err)) < 0 ||
        (rc = rf_topology_init(topo, &sc->cluster, err)) < 0)
        return rc;
    if (sc->strategy == RF_STRAT_AUTO) {
        /* The scenario's hybrid split is one of auto's candidates. */
        struct rf_scenario hy = {0};
        if ((rc = rf_lua_load_scenario(L, src, "hybrid", &hy, err)) < 0)
            return rc;
        /* PXN only matters where messages can change rails: several NICs per node. The
         * flipped copy shares the scenario cluster's strings (it owns nothing). */
        const struct rf_topology *alt_topo = NULL;
        *alt_cluster = sc->cluster;
        alt_cluster->fabric.pxn = !alt_cluster->fabric.pxn;
        if (sc->cluster.nic.per_node > 1) {
            if ((rc = rf_topology_init(alt, alt_cluster, err)) < 0)
                return rc;
            alt_topo = alt;
        }
        struct rf_auto_input in = {.alt_topo = alt_topo,
                                   .model = &sc->model,
                                   .train = &sc->train,
                                   .infer = &sc->infer,
                                   .topo = topo,
                                   .staging_bytes = sc->staging_bytes,
                                   .sources = sc->sources,
                                   .hybrid = hy.tensor_strategy};
        rc = rf_auto(&in, plan, pred, choice, err);
        rf_scenario_release(&hy);
        return rc;
    }
    struct rf_plan_opts opts = {.topo = topo, .sources = sc->sources};
    if ((rc = rf_plan_build(plan, &sc->model, &sc->train, &sc->infer, sc->strategy,
                            sc->tensor_strategy, &opts, err)) < 0)
        return rc;
    return rf_schedule(plan, &(struct rf_schedule_opts){.staging_bytes = sc->staging_bytes}, err);
}

/* One run of a scenario as every command makes it: plan (and, for sim, predict), store in
 * one transaction. Owns everything it built until refit_run_release. */
struct refit_run {
    struct rf_scenario sc;
    struct rf_plan plan;
    struct rf_topology topo, alt_topo;
    struct rf_cluster alt_cluster; /* PXN flipped for auto; shares sc.cluster's strings */
    struct rf_prediction pred;
    struct rf_auto_choice choice;
    const struct rf_topology *used; /* the topology the prediction was made on */
    int64_t id;
    double plan_seconds, seconds;
};

static int run_scenario(struct rf_lua *L, struct rf_store *st, const struct rf_scenario_src *src,
                        const char *strategy, const char *label, bool simulate, struct refit_run *r,
                        struct rf_error *err)
{
    double t0 = now();
    int rc = plan_scenario(L, src, strategy, &r->sc, &r->topo, &r->alt_cluster, &r->alt_topo,
                           &r->plan, &r->pred, &r->choice, err);
    r->plan_seconds = now() - t0;
    r->used = r->choice.topo ? r->choice.topo : &r->topo;
    if (rc == 0 && simulate && r->pred.n_links == 0)
        rc = rf_simulate(&r->plan, &r->sc.train, &r->sc.infer, &r->topo, &r->pred, err);
    if (rc == 0) {
        struct rf_run_info info = {.label = label,
                                   .scenario = r->sc.source,
                                   .model = r->sc.model.name,
                                   .cluster_system = r->sc.cluster_system,
                                   .cluster_nodes = r->sc.cluster_nodes,
                                   .train = &r->sc.train,
                                   .infer = &r->sc.infer,
                                   .plan_seconds = r->plan_seconds,
                                   .prediction = r->pred.n_links ? &r->pred : NULL,
                                   .topo = r->used};
        rc = rf_store_save_plan(st, &info, &r->plan, &r->id, err);
    }
    r->seconds = now() - t0;
    return rc;
}

static void refit_run_release(struct refit_run *r)
{
    rf_prediction_release(&r->pred);
    rf_topology_release(&r->alt_topo);
    rf_topology_release(&r->topo);
    rf_plan_release(&r->plan);
    rf_scenario_release(&r->sc);
}

/* A command that fails before storing any run leaves no new database behind: the file (and
 * its WAL companions) is removed when it did not exist before. */
static bool db_exists(const char *db)
{
    return access(db, F_OK) == 0;
}

static void drop_new_db(const char *db, bool existed, int stored)
{
    static const char *const tails[] = {"", "-wal", "-shm", "-journal"};
    char path[PATH_MAX + 16];
    if (existed || stored > 0)
        return;
    for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
        snprintf(path, sizeof(path), "%s%s", db, tails[i]);
        unlink(path);
    }
}

static int cmd_plan(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},    {"strategy", required_argument, NULL, 's'},
        {"label", required_argument, NULL, 'l'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    const char *db = "refit.db", *strategy = NULL, *label = NULL;
    bool json = false, existed = false;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 's': strategy = optarg; break;
        case 'l': label = optarg; break;
        case 'j': json = true; break;
        case 'h': fputs(usage_plan, stdout); return 0;
        default: fputs(usage_plan, stderr); return 2;
        }
    }
    if (optind + 1 != argc) {
        fputs(usage_plan, stderr);
        return 2;
    }

    char dir[PATH_MAX];
    struct rf_error err = {0};
    struct rf_lua *L = NULL;
    struct refit_run r = {0};
    struct rf_store st = {0};
    int rc = 1;
    enum rf_strategy override;

    if (strategy && (rf_strategy_parse(strategy, &override) < 0)) {
        fprintf(stderr,
                "refit: --strategy: unknown strategy '%s' (broadcast, reshard, hierarchical, "
                "hybrid, auto)\n",
                strategy);
        return 2;
    }
    models_dir(dir, sizeof(dir));
    existed = db_exists(db);
    if (rf_lua_open(&L, dir, &err) < 0 || rf_store_open(&st, db, &err) < 0 ||
        run_scenario(L, &st, &(struct rf_scenario_src){.path = argv[optind]}, strategy, label,
                     false, &r, &err) < 0) {
        rc = fail(&err);
        goto out;
    }
    if (json)
        print_plan_json(&r.sc, &r.plan, r.id, r.plan_seconds, r.seconds - r.plan_seconds);
    else
        print_plan(&r.sc, &r.plan, r.id, db, r.seconds);
    rc = 0;
out:
    rf_store_close(&st);
    if (rc != 0)
        drop_new_db(db, existed, 0);
    refit_run_release(&r);
    rf_lua_close(L);
    return rc;
}

static json_t *sim_json(const struct rf_scenario *sc, const struct rf_plan *plan,
                        const struct rf_topology *topo, const struct rf_prediction *p, int64_t run)
{
    char bottleneck[96] = "";
    if (p->bottleneck >= 0)
        rf_link_describe(topo, (size_t)p->bottleneck, bottleneck, sizeof(bottleneck));
    return json_pack(
        "{sI ss ss ss sf sf sI sI sI sI sI sI sI sI ss si sI sI sf}", "run_id", (json_int_t)run,
        "model", sc->model.name, "cluster", sc->cluster.name, "strategy",
        rf_strategy_name(plan->strategy), "predicted_s", p->predicted_s, "lower_bound_s",
        p->lower_bound_s, "payload_bytes", (json_int_t)plan->total.payload_bytes, "moved_bytes",
        (json_int_t)plan->total.moved_bytes, "logical_bytes", (json_int_t)plan->total.logical_bytes,
        "fabric_bytes", (json_int_t)p->fabric_bytes, "nvlink_bytes", (json_int_t)p->nvlink_bytes,
        "transfers", (json_int_t)plan->total.transfers, "collectives",
        (json_int_t)plan->total.collectives, "messages", (json_int_t)p->messages, "bottleneck",
        bottleneck, "rounds", plan->n_rounds, "flows", (json_int_t)p->flows, "events",
        (json_int_t)p->events, "sim_seconds", p->sim_seconds);
}

static void sim_header(void)
{
    printf("%-12s %11s %10s %12s %12s %11s %7s  %s\n", "strategy", "predicted_s", "bound_s",
           "payload(GB)", "fabric(GB)", "nvlink(GB)", "rounds", "bottleneck");
}

static void sim_row(const struct rf_plan *plan, const struct rf_topology *topo,
                    const struct rf_prediction *p)
{
    char bottleneck[96] = "-";
    if (p->bottleneck >= 0)
        rf_link_describe(topo, (size_t)p->bottleneck, bottleneck, sizeof(bottleneck));
    printf("%-12s %11.3f %10.3f %12.1f %12.1f %11.1f %7d  %s\n", rf_strategy_name(plan->strategy),
           p->predicted_s, p->lower_bound_s, gb(plan->total.payload_bytes), gb(p->fabric_bytes),
           gb(p->nvlink_bytes), plan->n_rounds, bottleneck);
}

static int cmd_sim(int argc, char **argv)
{
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"strategy", required_argument, NULL, 's'},
                                         {"label", required_argument, NULL, 'l'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"compare", no_argument, NULL, 'c'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *db = "refit.db", *strategy = NULL, *label = NULL;
    bool json = false, compare = false, existed = false;
    int stored = 0;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 's': strategy = optarg; break;
        case 'l': label = optarg; break;
        case 'j': json = true; break;
        case 'c': compare = true; break;
        case 'h': fputs(usage_sim, stdout); return 0;
        default: fputs(usage_sim, stderr); return 2;
        }
    }
    if (optind + 1 != argc || (compare && strategy)) {
        fputs(usage_sim, stderr);
        return 2;
    }
    enum rf_strategy override;
    if (strategy && rf_strategy_parse(strategy, &override) < 0) {
        fprintf(stderr, "refit: --strategy: unknown strategy '%s'\n", strategy);
        return 2;
    }

    char dir[PATH_MAX];
    struct rf_error err = {0};
    struct rf_lua *L = NULL;
    struct rf_store st = {0};
    json_t *list = json_array();
    int rc = 1;
    const char *all[RF_STRAT_COUNT];
    int n = 0;
    if (compare)
        for (int i = 0; i < RF_STRAT_COUNT; i++)
            all[n++] = rf_strategy_name((enum rf_strategy)i);
    else
        all[n++] = strategy;

    models_dir(dir, sizeof(dir));
    existed = db_exists(db);
    if (rf_lua_open(&L, dir, &err) < 0 || rf_store_open(&st, db, &err) < 0) {
        rc = fail(&err);
        goto out;
    }
    if (!json)
        sim_header();
    for (int i = 0; i < n; i++) {
        struct refit_run r = {0};
        int x = run_scenario(L, &st, &(struct rf_scenario_src){.path = argv[optind]}, all[i], label,
                             true, &r, &err);
        if (x == 0 && json) {
            json_t *o = sim_json(&r.sc, &r.plan, r.used, &r.pred, r.id);
            json_object_set_new(o, "peak_rss_bytes", json_integer(peak_rss()));
            if (r.plan.strategy == RF_STRAT_AUTO) {
                json_object_set_new(o, "auto_choice", json_string(r.choice.description));
                json_object_set_new(o, "auto_evaluated", json_integer(r.choice.evaluated));
                json_t *cands = json_array();
                for (int k = 0; k < r.choice.n_candidates; k++) {
                    const struct rf_auto_candidate *ac = &r.choice.candidates[k];
                    json_t *e = json_pack("{s:s, s:f, s:f}", "candidate", ac->description,
                                          "bound_s", ac->bound_s, "estimate_s", ac->estimate_s);
                    json_object_set_new(e, "predicted_s",
                                        isnan(ac->predicted_s) ? json_null()
                                                               : json_real(ac->predicted_s));
                    if (ac->same_as >= 0)
                        json_object_set_new(e, "same_plan_as", json_integer(ac->same_as));
                    json_array_append_new(cands, e);
                }
                json_object_set_new(o, "auto_candidates", cands);
            }
            json_array_append_new(list, o);
        } else if (x == 0) {
            sim_row(&r.plan, r.used, &r.pred);
            if (r.plan.strategy == RF_STRAT_AUTO)
                printf("%-12s %s (%d candidates predicted, %d only bounded)\n", "",
                       r.choice.description, r.choice.evaluated, r.choice.pruned);
        }
        refit_run_release(&r);
        if (x < 0) {
            rc = fail(&err);
            goto out;
        }
        stored++;
    }
    if (json) {
        json_dumpf(compare ? list : json_array_get(list, 0), stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    } else {
        printf("\nstored in %s\n", db);
    }
    rc = 0;
out:
    json_decref(list);
    rf_store_close(&st);
    if (rc != 0)
        drop_new_db(db, existed, stored);
    rf_lua_close(L);
    return rc;
}

static const char usage_run[] =
    "usage: refit run STUDY.lua [--db FILE]\n"
    "\n"
    "Runs a what-if study: a Lua script with the `refit` module (refit.scenario, refit.with,\n"
    "refit.plan, refit.sim, refit.table, refit.model, refit.progress; see README.md).\n"
    "Every plan and prediction it makes is stored in FILE (default refit.db), one\n"
    "transaction per run, labelled as the study says. Progress goes to stderr when it is a\n"
    "terminal.\n";

struct study_ctx {
    struct rf_lua *L;
    struct rf_store *st;
    bool tty;
    int runs;
};

static void copy_str(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

/* One refit.plan / refit.sim of a study: plan (and simulate), store, report. */
static int study_run_one(void *ctx, const struct rf_scenario_src *src, const char *strategy,
                         const char *label, bool simulate, struct rf_study_result *out,
                         struct rf_error *err)
{
    struct study_ctx *c = ctx;
    struct refit_run r = {0};
    int rc = run_scenario(c->L, c->st, src, strategy, label, simulate, &r, err);
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
            out->fabric_bytes = r.pred.fabric_bytes;
            out->nvlink_bytes = r.pred.nvlink_bytes;
            if (r.pred.bottleneck >= 0)
                rf_link_describe(r.used, (size_t)r.pred.bottleneck, out->bottleneck,
                                 sizeof(out->bottleneck));
        }
        copy_str(out->auto_choice, sizeof(out->auto_choice), r.choice.description);
        c->runs++;
        if (c->tty)
            fprintf(stderr, "refit run: run %lld (%d so far): %s %s on %s%s%.3f s\n",
                    (long long)r.id, c->runs, out->model, out->strategy, out->cluster,
                    r.pred.n_links ? ", predicted " : "",
                    r.pred.n_links ? r.pred.predicted_s : 0.0);
    }
    refit_run_release(&r);
    return rc;
}

static int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    const char *db = "refit.db";
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'h': fputs(usage_run, stdout); return 0;
        default: fputs(usage_run, stderr); return 2;
        }
    }
    if (optind + 1 != argc) {
        fputs(usage_run, stderr);
        return 2;
    }
    char dir[PATH_MAX];
    struct rf_error err = {0};
    struct rf_lua *L = NULL;
    struct rf_store st = {0};
    int rc = 1;
    models_dir(dir, sizeof(dir));
    if (rf_lua_open(&L, dir, &err) < 0 || rf_store_open(&st, db, &err) < 0) {
        rc = fail(&err);
        goto out;
    }
    struct study_ctx ctx = {.L = L, .st = &st, .tty = isatty(STDERR_FILENO) != 0};
    fflush(stdout);
    if (rf_lua_run_study(L, argv[optind], study_run_one, &ctx, &err) < 0) {
        fflush(stdout);
        rc = fail(&err);
        goto out;
    }
    rc = 0;
out:
    rf_store_close(&st);
    rf_lua_close(L);
    return rc;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmd_models(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    bool json = false;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'h': fputs(usage_models, stdout); return 0;
        default: fputs(usage_models, stderr); return 2;
        }
    }
    if (optind != argc) {
        fputs(usage_models, stderr);
        return 2;
    }

    char dir[PATH_MAX];
    struct rf_error err = {0};
    struct rf_lua *L = NULL;
    char **names = NULL;
    size_t n = 0, cap = 0;
    json_t *list = json_array();
    int rc = 1;

    models_dir(dir, sizeof(dir));
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "refit: %s: cannot open the models folder\n", dir);
        goto out;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".lua") != 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **nn = realloc(names, cap * sizeof(*names));
            if (!nn)
                break;
            names = nn;
        }
        names[n++] = strndup(e->d_name, len - 4);
    }
    closedir(d);
    if (n > 0)
        qsort(names, n, sizeof(*names), cmp_str);
    if (rf_lua_open(&L, dir, &err) < 0) {
        rc = fail(&err);
        goto out;
    }
    if (!json)
        printf("%-22s %10s %10s %10s %8s\n", "model", "params(B)", "active(B)", "bf16(GB)",
               "tensors");
    for (size_t i = 0; i < n; i++) {
        struct rf_model m;
        if (rf_lua_load_model(L, names[i], &m, &err) < 0) {
            rc = fail(&err);
            goto out;
        }
        int64_t params = rf_model_params(&m), active = rf_model_active_params(&m);
        int64_t bytes = rf_model_bytes(&m);
        if (json)
            json_array_append_new(list,
                                  json_pack("{ss sI sI sI sI ss}", "name", m.name, "params",
                                            (json_int_t)params, "active_params", (json_int_t)active,
                                            "bf16_bytes", (json_int_t)bytes, "tensors",
                                            (json_int_t)m.n_tensors, "family", m.family));
        else
            printf("%-22s %10.2f %10.2f %10.1f %8zu\n", m.name, (double)params / 1e9,
                   (double)active / 1e9, gb(bytes), m.n_tensors);
        rf_model_release(&m);
    }
    if (json) {
        json_dumpf(list, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
    }
    rc = 0;
out:
    json_decref(list);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    rf_lua_close(L);
    return rc;
}

/* The calibrated cluster's name: NAME-calibrated, once. */
static void calibrated_name(const char *name, char *buf, size_t size)
{
    const char *suffix = "-calibrated";
    size_t n = strlen(name), k = strlen(suffix);
    if (n >= k && strcmp(name + n - k, suffix) == 0)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "%s%s", name, suffix);
}

/* The fit as one object: errors, each knob before and after, every measurement. */
static void print_calibration_json(const struct rf_calibration *cal, const char *name,
                                   const char *path)
{
    json_t *params = json_object(), *points = json_array();
    for (int k = 0; k < RF_CAL_PARAM_COUNT; k++)
        json_object_set_new(params, rf_cal_param_name((enum rf_cal_param)k),
                            json_pack("{s:f, s:f, s:b}", "before", cal->before[k], "after",
                                      cal->after[k], "identifiable", cal->used[k]));
    for (size_t i = 0; i < cal->n_points; i++) {
        const struct rf_cal_point *p = &cal->points[i];
        json_array_append_new(
            points, json_pack("{s:I, s:I, s:f, s:f, s:f}", "run_id", (json_int_t)p->run_id,
                              "measurement_id", (json_int_t)p->measurement_id, "measured_s",
                              p->measured_s, "before_s", p->before_s, "after_s", p->after_s));
    }
    json_t *o = json_pack("{s:s, s:s, s:f, s:f, s:I, s:i, s:o, s:o}", "cluster", name, "file", path,
                          "rms_before", cal->rms_before, "rms_after", cal->rms_after,
                          "measurements", (json_int_t)cal->n_points, "evaluations",
                          cal->evaluations, "parameters", params, "points", points);
    json_dumpf(o, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
    json_decref(o);
}

static int cmd_calibrate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},  {"cluster", required_argument, NULL, 'c'},
        {"out", required_argument, NULL, 'o'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},      {NULL, 0, NULL, 0}};
    const char *db = NULL, *spec = NULL, *outp = NULL;
    bool json = false;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'c': spec = optarg; break;
        case 'o': outp = optarg; break;
        case 'j': json = true; break;
        case 'h': fputs(usage_calibrate, stdout); return 0;
        default: fputs(usage_calibrate, stderr); return 2;
        }
    }
    if (optind != argc || !db || !spec) {
        fputs(usage_calibrate, stderr);
        return 2;
    }

    char dir[PATH_MAX], name[256], path[PATH_MAX], when[32];
    struct rf_error err = {0};
    struct rf_lua *L = NULL;
    struct rf_store st = {0};
    struct rf_cluster cluster = {0};
    struct rf_calibration cal = {0};
    FILE *f = NULL;
    int rc = 1;
    models_dir(dir, sizeof(dir));
    if (access(db, F_OK) != 0) {
        fprintf(stderr, "refit: %s: no such database\n", db);
        return 1;
    }
    if (rf_lua_open(&L, dir, &err) < 0 || rf_store_open(&st, db, &err) < 0 ||
        rf_lua_load_cluster(L, spec, &cluster, &err) < 0 ||
        rf_calibrate(&st, &cluster, &cal, &err) < 0) {
        rc = fail(&err);
        goto out;
    }
    calibrated_name(cluster.name, name, sizeof(name));
    if (!outp) {
        snprintf(path, sizeof(path), "%s.lua", name);
        outp = path;
    }
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!(f = fopen(outp, "w"))) {
        fprintf(stderr, "refit: %s: cannot write: %s\n", outp, strerror(errno));
        goto out;
    }
    if (rf_calibration_write(&cal, name, when, f, &err) < 0) {
        rc = fail(&err);
        goto out;
    }
    if (fclose(f) != 0) {
        f = NULL;
        fprintf(stderr, "refit: %s: write failed: %s\n", outp, strerror(errno));
        goto out;
    }
    f = NULL;

    if (json) {
        print_calibration_json(&cal, name, outp);
        rc = 0;
        goto out;
    }
    printf("%-6s %-6s %12s %12s %12s %10s %10s\n", "run", "meas", "measured_s", "before_s",
           "after_s", "err_before", "err_after");
    for (size_t i = 0; i < cal.n_points; i++) {
        const struct rf_cal_point *p = &cal.points[i];
        printf("%-6lld %-6lld %12.6g %12.6g %12.6g %+10.3f %+10.3f\n", (long long)p->run_id,
               (long long)p->measurement_id, p->measured_s, p->before_s, p->after_s,
               (p->before_s - p->measured_s) / p->measured_s,
               (p->after_s - p->measured_s) / p->measured_s);
    }
    printf("\n%-20s %12s %12s\n", "parameter", "before", "after");
    for (int k = 0; k < RF_CAL_PARAM_COUNT; k++)
        printf("%-20s %12.6g %12.6g%s\n", rf_cal_param_name((enum rf_cal_param)k), cal.before[k],
               cal.after[k], cal.used[k] ? "" : "   (not identifiable: kept)");
    printf("\nrms relative error: before %.4f, after %.4f (%zu measurements, %d evaluations)\n",
           cal.rms_before, cal.rms_after, cal.n_points, cal.evaluations);
    printf("calibrated cluster '%s' written to %s\n", name, outp);
    rc = 0;
out:
    if (f)
        fclose(f);
    rf_calibration_release(&cal);
    rf_cluster_release(&cluster);
    rf_store_close(&st);
    rf_lua_close(L);
    return rc;
}

static int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"run", required_argument, NULL, 'r'},
                                         {"html", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *db = NULL, *html = NULL;
    int64_t *ids = NULL;
    size_t n_ids = 0;
    int rc = 2, c;
    struct rf_error err = {0};
    if (!(ids = malloc((size_t)argc * sizeof(*ids)))) {
        fputs("refit: out of memory\n", stderr);
        return 1;
    }
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'o': html = optarg; break;
        case 'r': {
            char *end;
            errno = 0;
            long long id = strtoll(optarg, &end, 10);
            if (errno || end == optarg || *end || id <= 0) {
                fprintf(stderr, "refit: --run %s: not a run id\n", optarg);
                goto out;
            }
            ids[n_ids++] = id;
            break;
        }
        case 'h':
            fputs(usage_report, stdout);
            rc = 0;
            goto out;
        default: fputs(usage_report, stderr); goto out;
        }
    }
    if (optind != argc || !db || !html) {
        fputs(usage_report, stderr);
        goto out;
    }
    if (rf_report_html(db, ids, n_ids, html, &err) < 0) {
        rc = fail(&err);
        goto out;
    }
    printf("wrote %s\n", html);
    rc = 0;
out:
    free(ids);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        fputs(usage_main, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("refit %s\n", PACKAGE_VERSION);
        return 0;
    }
    if (strcmp(argv[1], "plan") == 0)
        return cmd_plan(argc - 1, argv + 1);
    if (strcmp(argv[1], "sim") == 0)
        return cmd_sim(argc - 1, argv + 1);
    if (strcmp(argv[1], "run") == 0)
        return cmd_run(argc - 1, argv + 1);
    if (strcmp(argv[1], "calibrate") == 0)
        return cmd_calibrate(argc - 1, argv + 1);
    if (strcmp(argv[1], "report") == 0)
        return cmd_report(argc - 1, argv + 1);
    if (strcmp(argv[1], "models") == 0)
        return cmd_models(argc - 1, argv + 1);
    fprintf(stderr, "refit: '%s' is not a command; see refit --help\n", argv[1]);
    return 2;
}
