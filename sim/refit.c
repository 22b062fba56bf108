/* The `refit` command: git-style subcommands over the library. This file holds main, the
 * shared helpers and the commands that plan and simulate (plan, sim, run); calibrate,
 * report and models live in sim/cmd_*.c. Only the command files print or exit. */
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
#include "cmd.h"
#include "plan.h"
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

int cmd_fail(const struct rf_error *err)
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
void cmd_models_dir(char *buf, size_t size)
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
    cmd_models_dir(dir, sizeof(dir));
    existed = db_exists(db);
    if (rf_lua_open(&L, dir, &err) < 0 || rf_store_open(&st, db, RF_STORE_CREATE, &err) < 0 ||
        run_scenario(L, &st, &(struct rf_scenario_src){.path = argv[optind]}, strategy, label,
                     false, &r, &err) < 0) {
        rc = cmd_fail(&err);
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

    cmd_models_dir(dir, sizeof(dir));
    existed = db_exists(db);
    if (rf_lua_open(&L, dir, &err) < 0 || rf_store_open(&st, db, RF_STORE_CREATE, &err) < 0) {
        rc = cmd_fail(&err);
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
            rc = cmd_fail(&err);
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
    cmd_models_dir(dir, sizeof(dir));
    if (rf_lua_open(&L, dir, &err) < 0 || rf_store_open(&st, db, RF_STORE_CREATE, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    struct study_ctx ctx = {.L = L, .st = &st, .tty = isatty(STDERR_FILENO) != 0};
    fflush(stdout);
    if (rf_lua_run_study(L, argv[optind], study_run_one, &ctx, &err) < 0) {
        fflush(stdout);
        rc = cmd_fail(&err);
        goto out;
    }
    rc = 0;
out:
    rf_store_close(&st);
    rf_lua_close(L);
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
