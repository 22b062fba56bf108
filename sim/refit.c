/* The `refit` command: git-style subcommands over the library. This file holds main, the
 * shared helpers and the commands that plan and simulate (plan, sim, run); calibrate,
 * report and models live in sim/cmd_*.c. Only the command files print or exit. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "auto.h"
#include "cmd.h"
#include "describe.h"
#include "json.h"
#include "plan.h"
#include "scenario.h"
#include "schedule.h"
#include "search_lua.h"
#include "simulate.h"
#include "step.h"
#include "store.h"
#include "store_prediction.h"

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
    "  search SCENARIO rank the inference layouts that fit, simulate and store the best\n"
    "  calibrate       fit a cluster's calibration to the measured replays\n"
    "  report          write an HTML page of stored runs (tables, gnuplot plots)\n"
    "  models          list the known model architectures\n"
    "  show RUN        a stored run on one screen: scenario, memory, prediction, measurements\n"
    "  diff RUN RUN    what differs between two stored runs' scenarios and figures\n"
    "\n"
    "`refit <command> --help` describes each command. Models and layouts are read from\n"
    "$REFIT_MODELS, else the models/ folder next to the binary, else " RF_MODELS_DIR ",\n"
    "else the source tree's models/ folder.\n";

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

int cmd_sim_options(struct rf_sim_options *opts)
{
    const char *tol = getenv("REFIT_SIM_TOLERANCE"), *thr = getenv("REFIT_THREADS");
    char *end;
    memset(opts, 0, sizeof(*opts));
    if (tol && *tol) {
        errno = 0;
        double v = strtod(tol, &end);
        /* The range's top keeps every prediction above its bounds (lowered by twice it). */
        if (*end || errno == ERANGE || !(v >= RF_SIM_TOLERANCE_MIN && v <= RF_SIM_TOLERANCE_MAX)) {
            fprintf(stderr, "refit: REFIT_SIM_TOLERANCE=%s: must be a number from %g to %g\n", tol,
                    RF_SIM_TOLERANCE_MIN, RF_SIM_TOLERANCE_MAX);
            return 1;
        }
        opts->tolerance = v;
    }
    if (thr && *thr) {
        errno = 0;
        long v = strtol(thr, &end, 10);
        if (*end || errno == ERANGE || v < 1 || v > RF_SIM_THREADS_MAX) {
            fprintf(stderr, "refit: REFIT_THREADS=%s: must be an integer from 1 to %d\n", thr,
                    RF_SIM_THREADS_MAX);
            return 1;
        }
        opts->threads = (int)v;
    }
    return 0;
}

int cmd_usage_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fputs("refit: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see refit %s --help)\n", cmd);
    return 2;
}

int cmd_getopt(int argc, char **argv, const struct option *opts)
{
    /* getopt's own messages would be printed before ours and call a trailing unknown flag
     * "needs a value"; ":" makes a missing value ':' and an unknown option '?'. */
    opterr = 0;
    int c = getopt_long(argc, argv, ":", opts, NULL);
    const char *cmd = argv[0];
    if (c == -1)
        return -1;
    const char *arg = argv[optind - 1];
    int len = (int)strcspn(arg, "=");
    if (c == ':') {
        cmd_usage_fail(cmd, "%.*s needs a value", len, arg);
        return '?';
    }
    if (c == '?') {
        if (strncmp(arg, "--", 2) == 0 && optopt != 0 && arg[len] == '=')
            cmd_usage_fail(cmd, "%.*s takes no value", len, arg);
        else if (strncmp(arg, "--", 2) != 0 && optopt != 0)
            cmd_usage_fail(cmd, "unknown option -%c", optopt);
        else
            cmd_usage_fail(cmd, "unknown option %.*s", len, arg);
        return '?';
    }
    for (const struct option *o = opts; o->name; o++) {
        if (o->val != c || o->has_arg != required_argument)
            continue;
        /* "--db --json" and "--db ''" would name a database "--json" or a temporary one:
         * a value in its own word must not look like an option, and none may be empty. */
        bool own_word = optarg == argv[optind - 1];
        if (*optarg == '\0' || (own_word && strncmp(optarg, "--", 2) == 0 && optarg[2])) {
            cmd_usage_fail(cmd, "--%s needs a value", o->name);
            return '?';
        }
    }
    return c;
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
    /* The installed copy, else the source tree this binary was built from (a build folder
     * of its own, as CI and distcheck use, has no models/ beside the binary). */
    snprintf(buf, size, "%s", RF_MODELS_DIR);
#ifdef RF_SOURCE_MODELS_DIR
    if (!is_dir(buf) && is_dir(RF_SOURCE_MODELS_DIR))
        snprintf(buf, size, "%s", RF_SOURCE_MODELS_DIR);
#endif
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

/* Rounds that relay (pipelined: sim/schedule.h) and the chain runs among the transfers. */
static void relay_counts(const struct rf_plan *plan, int64_t *pipelined, int64_t *chains)
{
    uint8_t *mark = calloc((size_t)plan->n_rounds + 1, 1);
    *pipelined = *chains = 0;
    for (size_t i = 0; i < plan->n_transfers && mark; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        *chains += t->chain;
        if (t->after >= 0 || t->chain)
            mark[t->round] = 1;
        if (t->after >= 0)
            mark[plan->transfers[t->after].round] = 1;
    }
    for (int32_t r = 0; r < plan->n_rounds && mark; r++)
        *pipelined += mark[r];
    free(mark);
}

/* The memory line of each side (sim/memory.h), marked where it does not fit. */
static void print_memory(FILE *f, const struct rf_scenario *sc)
{
    char line[256];
    const struct rf_side_memory *m[2] = {&sc->mem_train, &sc->mem_infer};
    for (int i = 0; i < 2; i++) {
        rf_memory_describe(m[i], i == 0, line, sizeof(line));
        fprintf(f, "  memory %s: %s%s\n", i == 0 ? "train" : "infer", line,
                m[i]->fits ? "" : "  DOES NOT FIT (allow_overcommit)");
    }
}

/* The memory lines as text (NULL when out of memory); the caller frees it. */
static char *memory_lines(const struct rf_scenario *sc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    print_memory(f, sc);
    fclose(f);
    return buf;
}

/* "memory": each side's worst GPU, and whether the run is an overcommitted what-if. */
static json_t *memory_json(const struct rf_scenario *sc)
{
    return json_pack("{so so sb}", "train", rf_memory_json(&sc->mem_train), "infer",
                     rf_memory_json(&sc->mem_infer), "overcommitted", sc->overcommitted);
}

/* "placement": how the inference engines sit on the NVLink domains (rf_engine_place). */
static json_t *placement_json(const struct rf_side *s)
{
    return json_pack("{ss sI sI sI sI sb}", "placement", s->domain_gpus > 0 ? "domain" : "packed",
                     "domain_gpus", (json_int_t)s->domain_gpus, "gpus", (json_int_t)s->gpus, "span",
                     (json_int_t)s->place.span, "engines_per_domain",
                     (json_int_t)s->place.per_domain, "gaps", s->place.gaps);
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
    printf("  infer %5lld GPUs from %-5lld %s, %s\n", (long long)sc->infer.gpus,
           (long long)sc->infer.first_gpu, il, rf_dtype_name(sc->infer.dtype));
    print_memory(stdout, sc);
    printf("\n");
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
    int64_t pipelined, chains;
    relay_counts(plan, &pipelined, &chains);
    printf("\nrun %lld stored in %s: %zu boxes, %zu transfer runs, %zu collectives in %d rounds "
           "of %.2f GB staging per GPU (%.2f s)\n",
           (long long)run, db, plan->n_boxes, plan->n_transfers, plan->n_collectives,
           plan->n_rounds, gb(plan->staging_bytes), seconds);
    if (pipelined > 0)
        printf("  %lld rounds pipelined in %.0f KiB chunks, %lld chain runs\n",
               (long long)pipelined, (double)plan->chunk_bytes / 1024, (long long)chains);
}

/* Peak resident memory of this process, in bytes. */
static int64_t peak_rss(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_SELF, &ru) != 0)
        return -1;
    return (int64_t)ru.ru_maxrss * 1024;
}

static int print_plan_json(const struct rf_scenario *sc, const struct rf_plan *plan, int64_t run,
                           double plan_seconds, double store_seconds, struct rf_error *err)
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
    int64_t pipelined, chains;
    relay_counts(plan, &pipelined, &chains);
    json_t *relay =
        json_pack("{sb sI sI}", "ring", plan->relay.ring, "fanout", (json_int_t)plan->relay.fanout,
                  "depth", (json_int_t)plan->relay.depth);
    json_t *o = json_pack(
        "{sI so so ss sI sI sI sI sI sI sI sI sI sI sI sI sf sf sI so sI sI sI sI so}", "run_id",
        (json_int_t)run, "scenario", rf_json_text(sc->source), "model",
        rf_json_text(sc->model.name), "strategy", rf_strategy_name(plan->strategy), "model_params",
        (json_int_t)plan->model_params, "model_bytes", (json_int_t)plan->model_bytes,
        "payload_bytes", (json_int_t)plan->total.payload_bytes, "moved_bytes",
        (json_int_t)plan->total.moved_bytes, "logical_bytes", (json_int_t)plan->total.logical_bytes,
        "local_bytes", (json_int_t)plan->total.local_bytes, "transfers",
        (json_int_t)plan->total.transfers, "transfer_runs", (json_int_t)plan->n_transfers, "boxes",
        (json_int_t)plan->n_boxes, "collectives", (json_int_t)plan->n_collectives, "rounds",
        (json_int_t)plan->n_rounds, "staging_bytes", (json_int_t)plan->staging_bytes,
        "plan_seconds", plan_seconds, "store_seconds", store_seconds, "peak_rss_bytes",
        (json_int_t)peak_rss(), "roles", roles, "chunk_bytes", (json_int_t)plan->chunk_bytes,
        "pipelined_rounds", (json_int_t)pipelined, "chain_runs", (json_int_t)chains,
        "net_channels_per_peer", (json_int_t)plan->net_channels_per_peer, "relay", relay);
    if (o) {
        json_object_set_new(o, "memory", memory_json(sc));
        json_object_set_new(o, "infer_placement", placement_json(&sc->infer));
    }
    return rf_json_print(o, stdout, err);
}

/* Loads SCENARIO (with an optional strategy override), builds its cluster's topology and
 * builds and schedules its plan. For auto the search predicts every candidate, so the
 * winner's prediction comes back in pred (pred->n_links > 0); otherwise pred is untouched. */
static int plan_scenario(struct rf_lua *L, const struct rf_scenario_src *src, const char *strategy,
                         const struct rf_sim_options *sim, struct rf_scenario *sc,
                         struct rf_topology *topo, struct rf_cluster *alt_cluster,
                         struct rf_topology *alt, struct rf_plan *plan, struct rf_prediction *pred,
                         struct rf_auto_choice *choice, struct rf_error *err)
{
    int rc;
    if ((rc = rf_lua_load_scenario(L, src, strategy, sc, err)) < 0 ||
        (rc = rf_scenario_init_sides(sc, err)) < 0 ||
        (rc = rf_topology_init(topo, &sc->cluster, err)) < 0)
        return rc;
    /* A profile says how its framework moves weights: a strategy it does not run has no
     * step to predict (refit's own plans are the profile-free scenario). */
    if (sc->framework.present && !(sc->framework.strategies & (1u << sc->strategy)))
        return rf_error_set(err, RF_ENOTSUP,
                            "%s: framework: %s does not run strategy %s (its profile %s lists "
                            "the ones it does; drop `framework` for refit's own plan)",
                            sc->source, sc->framework.name, rf_strategy_name(sc->strategy),
                            sc->framework.source);
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
                                   .chunk_bytes = sc->chunk_bytes,
                                   .relay = sc->relay,
                                   .sources = sc->sources,
                                   .hybrid = hy.tensor_strategy,
                                   .sim = *sim};
        rc = rf_auto(&in, plan, pred, choice, err);
        rf_scenario_release(&hy);
        return rc;
    }
    const struct rf_framework *fw = &sc->framework;
    struct rf_plan_opts opts = {.topo = topo,
                                .sources = sc->sources,
                                .relay = sc->relay,
                                .bcast_comm = fw->present ? fw->comm : RF_FW_COMM_RECEIVERS,
                                .bcast_root = fw->present ? fw->root : RF_FW_ROOT_FIRST,
                                .wire_native = fw->present && fw->broadcast &&
                                               fw->quant != RF_FW_QUANT_SENDER};
    if ((rc = rf_plan_build(plan, &sc->model, &sc->train, &sc->infer, sc->strategy,
                            sc->tensor_strategy, &opts, err)) < 0)
        return rc;
    return rf_schedule(plan,
                       &(struct rf_schedule_opts){.staging_bytes = sc->staging_bytes,
                                                  .chunk_bytes = sc->chunk_bytes,
                                                  .streams = (int32_t)sc->cluster.cal.streams},
                       err);
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
    struct rf_step step;            /* under a framework profile: the step's phases (sim/step.h) */
    const struct rf_topology *used; /* the topology the prediction was made on */
    char *scenario_json;            /* the run's description (sim/describe.h) */
    int64_t id;
    double t0, plan_seconds, seconds; /* t0: start; seconds: until stored */
};

/* The run's description (sim/describe.h), with the fields the scenario overrode recorded
 * against its cluster's preset file as that file reads now. */
static int describe_run(struct rf_lua *L, struct refit_run *r, struct rf_error *err)
{
    struct rf_cluster preset;
    int rc = rf_lua_load_cluster(L, r->sc.cluster.source, &preset, err);
    if (rc < 0)
        return rc;
    struct rf_describe_input in = {.sc = &r->sc,
                                   .plan = &r->plan,
                                   .choice = r->plan.strategy == RF_STRAT_AUTO ? &r->choice : NULL,
                                   .preset = &preset};
    r->scenario_json = rf_describe_text(&in);
    rf_cluster_release(&preset);
    if (!r->scenario_json)
        return rf_error_set(err, RF_ENOMEM, "%s: out of memory describing the run", r->sc.source);
    return 0;
}

/* Plans (and with simulate, predicts) one run; nothing is stored yet, so a scenario that
 * fails here leaves every database as it was. */
static int compute_run(struct rf_lua *L, const struct rf_scenario_src *src, const char *strategy,
                       bool simulate, const struct rf_sim_options *sim, struct refit_run *r,
                       struct rf_error *err)
{
    r->t0 = now();
    int rc = plan_scenario(L, src, strategy, sim, &r->sc, &r->topo, &r->alt_cluster, &r->alt_topo,
                           &r->plan, &r->pred, &r->choice, err);
    r->plan_seconds = now() - r->t0;
    r->used = r->choice.topo ? r->choice.topo : &r->topo;
    if (rc == 0 && r->sc.overcommitted)
        fprintf(stderr,
                "refit: warning: %s: the layout does not fit in the GPUs' memory "
                "(allow_overcommit: a what-if)\n",
                r->sc.source);
    const struct rf_framework *fw = &r->sc.framework;
    if (rc == 0 && simulate && r->pred.n_links == 0) {
        /* Under a profile that exports whole tensors onto the root itself, the plan's
         * point-to-point gathers (kept so refit-exec can replay the run) are its export
         * phase, not wire. */
        struct rf_sim_options o = *sim;
        o.skip_gather = fw->present && fw->gather != RF_FW_GATHER_P2P;
        rc = rf_simulate(&r->plan, &r->sc.train, &r->sc.infer, &r->topo, &o, &r->pred, err);
        if (rc == 0 && fw->present &&
            (rc = rf_step_predict(&r->plan, &r->sc.train, &r->sc.infer, &r->topo, fw, &o, &r->pred,
                                  &r->step, err)) == 0)
            r->pred.predicted_s = r->step.total_s;
    }
    if (rc == 0)
        rc = describe_run(L, r, err);
    return rc;
}

static int lazy_store_get(struct lazy_store *ls, struct rf_error *err)
{
    if (ls->open)
        return 0;
    int rc = rf_store_open(&ls->st, ls->path, RF_STORE_CREATE, err);
    if (rc < 0) {
        rf_store_close(&ls->st);
        return rc;
    }
    ls->open = true;
    return 0;
}

void lazy_store_close(struct lazy_store *ls)
{
    if (ls->open)
        rf_store_close(&ls->st);
    ls->open = false;
}

/* Stores a computed run in one transaction (a failure leaves no part of it). */
static int store_run(struct lazy_store *ls, const char *label, struct refit_run *r,
                     struct rf_error *err)
{
    int rc = lazy_store_get(ls, err);
    if (rc == 0) {
        struct rf_run_info info = {.label = label,
                                   .scenario = r->sc.source,
                                   .model = r->sc.model.name,
                                   .cluster_system = r->sc.cluster_system,
                                   .cluster_nodes = r->sc.cluster_nodes,
                                   .train = &r->sc.train,
                                   .infer = &r->sc.infer,
                                   .plan_seconds = r->plan_seconds,
                                   .scenario_json = r->scenario_json};
        struct rf_run_sim sim = {.prediction = r->pred.n_links ? &r->pred : NULL,
                                 .topo = r->used,
                                 .mem_train = &r->sc.mem_train,
                                 .mem_infer = &r->sc.mem_infer,
                                 .step = r->step.n > 0 ? &r->step : NULL};
        rc = rf_store_save_run(&ls->st, &info, &r->plan, &sim, &r->id, err);
    }
    r->seconds = now() - r->t0;
    return rc;
}

/* A label is stored as SQLite TEXT and shown in reports and JSON: it must be UTF-8. */
static int check_label(const char *what, const char *label, struct rf_error *err)
{
    if (label && !rf_utf8_valid(label, strlen(label)))
        return rf_error_set(err, RF_EINVAL, "%s: not valid UTF-8 (a label is stored as text)",
                            what);
    return 0;
}

static void refit_run_release(struct refit_run *r)
{
    free(r->scenario_json);
    rf_prediction_release(&r->pred);
    rf_topology_release(&r->alt_topo);
    rf_topology_release(&r->topo);
    rf_plan_release(&r->plan);
    rf_scenario_release(&r->sc);
}

/* A --strategy value, checked before anything is loaded. */
static int check_strategy(const char *cmd, const char *strategy)
{
    enum rf_strategy parsed;
    if (strategy && rf_strategy_parse(strategy, &parsed) < 0)
        return cmd_usage_fail(cmd,
                              "--strategy: unknown strategy '%s' (broadcast, reshard, "
                              "hierarchical, hybrid, auto)",
                              strategy);
    return 0;
}

static int cmd_plan(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},    {"strategy", required_argument, NULL, 's'},
        {"label", required_argument, NULL, 'l'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    const char *db = "refit.db", *strategy = NULL, *label = NULL;
    bool json = false;
    int c;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 's': strategy = optarg; break;
        case 'l': label = optarg; break;
        case 'j': json = true; break;
        case 'h': fputs(usage_plan, stdout); return 0;
        default: return 2;
        }
    }
    if (optind + 1 != argc)
        return cmd_usage_fail("plan", "plan takes one SCENARIO, got %d", argc - optind);

    char dir[PATH_MAX];
    struct rf_error err = {0};
    struct rf_lua *L = NULL;
    struct refit_run r = {0};
    struct lazy_store ls = {.path = db};
    struct rf_sim_options sim;
    int rc = 1;

    if (check_strategy("plan", strategy) != 0)
        return 2;
    if (check_label("--label", label, &err) < 0)
        return cmd_fail(&err);
    if (cmd_sim_options(&sim) != 0)
        return 1;
    cmd_models_dir(dir, sizeof(dir));
    if (rf_lua_open(&L, dir, &err) < 0 ||
        compute_run(L, &(struct rf_scenario_src){.path = argv[optind]}, strategy, false, &sim, &r,
                    &err) < 0 ||
        store_run(&ls, label, &r, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    if (json) {
        if (print_plan_json(&r.sc, &r.plan, r.id, r.plan_seconds, r.seconds - r.plan_seconds,
                            &err) < 0) {
            rc = cmd_fail(&err);
            goto out;
        }
    } else {
        print_plan(&r.sc, &r.plan, r.id, db, r.seconds);
    }
    rc = 0;
out:
    lazy_store_close(&ls);
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
        "{sI so so ss sf sf sI sI sI sI sI sI sI sI ss si sI sI sf}", "run_id", (json_int_t)run,
        "model", rf_json_text(sc->model.name), "cluster", rf_json_text(sc->cluster.name),
        "strategy", rf_strategy_name(plan->strategy), "predicted_s", p->predicted_s,
        "lower_bound_s", p->lower_bound_s, "payload_bytes", (json_int_t)plan->total.payload_bytes,
        "moved_bytes", (json_int_t)plan->total.moved_bytes, "logical_bytes",
        (json_int_t)plan->total.logical_bytes, "fabric_bytes", (json_int_t)p->fabric_bytes,
        "nvlink_bytes", (json_int_t)p->nvlink_bytes, "transfers", (json_int_t)plan->total.transfers,
        "collectives", (json_int_t)plan->total.collectives, "messages", (json_int_t)p->messages,
        "bottleneck", bottleneck, "rounds", plan->n_rounds, "flows", (json_int_t)p->flows, "events",
        (json_int_t)p->events, "sim_seconds", p->sim_seconds);
}

static void sim_header(FILE *f)
{
    fprintf(f, "%-12s %11s %10s %12s %12s %11s %7s  %s\n", "strategy", "predicted_s", "bound_s",
            "payload(GB)", "fabric(GB)", "nvlink(GB)", "rounds", "bottleneck");
}

static void sim_row(FILE *f, const struct rf_plan *plan, const struct rf_topology *topo,
                    const struct rf_prediction *p)
{
    char bottleneck[96] = "-";
    if (p->bottleneck >= 0)
        rf_link_describe(topo, (size_t)p->bottleneck, bottleneck, sizeof(bottleneck));
    fprintf(f, "%-12s %11.3f %10.3f %12.1f %12.1f %11.1f %7d  %s\n",
            rf_strategy_name(plan->strategy), p->predicted_s, p->lower_bound_s,
            gb(plan->total.payload_bytes), gb(p->fabric_bytes), gb(p->nvlink_bytes), plan->n_rounds,
            bottleneck);
}

/* The step's phases under a framework profile, below the strategy's row. */
static void print_step(FILE *f, const struct rf_framework *fw, const struct rf_step *st)
{
    if (st->n == 0)
        return;
    fprintf(f, "  %s step: %s\n", fw->name, st->composition);
    for (size_t i = 0; i < st->n; i++) {
        const struct rf_step_phase *p = &st->phase[i];
        fprintf(f, "    %-5s %-9s %9.3f s  %s\n", rf_step_part_name(p->part),
                rf_step_phase_name(p->phase), p->seconds, p->mechanism);
    }
}

/* The step's phases as JSON. */
static json_t *step_json(const struct rf_framework *fw, const struct rf_step *st)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < st->n; i++) {
        const struct rf_step_phase *p = &st->phase[i];
        json_array_append_new(
            a, json_pack("{ss ss sf sI sI so}", "part", rf_step_part_name(p->part), "phase",
                         rf_step_phase_name(p->phase), "seconds", p->seconds, "bytes",
                         (json_int_t)p->bytes, "calls", (json_int_t)p->calls, "mechanism",
                         rf_json_text(p->mechanism)));
    }
    return json_pack("{so so sf so}", "framework", rf_json_text(fw->name), "composition",
                     rf_json_text(st->composition), "seconds", st->total_s, "phases",
                     a ? a : json_null());
}

/* One strategy's JSON object; NULL when a value could not be packed. */
static json_t *sim_run_json(const struct refit_run *r)
{
    json_t *o = sim_json(&r->sc, &r->plan, r->used, &r->pred, r->id);
    if (!o)
        return NULL;
    json_object_set_new(o, "peak_rss_bytes", json_integer(peak_rss()));
    json_object_set_new(o, "memory", memory_json(&r->sc));
    json_object_set_new(o, "infer_placement", placement_json(&r->sc.infer));
    if (r->step.n > 0)
        json_object_set_new(o, "step", step_json(&r->sc.framework, &r->step));
    if (r->plan.strategy != RF_STRAT_AUTO)
        return o;
    json_t *cands = json_array();
    bool bad = !cands ||
               json_object_set_new(o, "auto_choice", rf_json_text(r->choice.description)) < 0 ||
               json_object_set_new(o, "auto_evaluated", json_integer(r->choice.evaluated)) < 0;
    for (int k = 0; !bad && k < r->choice.n_candidates; k++) {
        const struct rf_auto_candidate *ac = &r->choice.candidates[k];
        json_t *e = json_pack("{s:o, s:f, s:f}", "candidate", rf_json_text(ac->description),
                              "bound_s", ac->bound_s, "estimate_s", ac->estimate_s);
        bad = !e ||
              json_object_set_new(e, "predicted_s",
                                  isnan(ac->predicted_s) ? json_null()
                                                         : json_real(ac->predicted_s)) < 0 ||
              (ac->same_as >= 0 &&
               json_object_set_new(e, "same_plan_as", json_integer(ac->same_as)) < 0) ||
              json_array_append_new(cands, e) < 0;
    }
    if (bad || json_object_set_new(o, "auto_candidates", cands) < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
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
    bool json = false, compare = false;
    int c;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 's': strategy = optarg; break;
        case 'l': label = optarg; break;
        case 'j': json = true; break;
        case 'c': compare = true; break;
        case 'h': fputs(usage_sim, stdout); return 0;
        default: return 2;
        }
    }
    if (optind + 1 != argc)
        return cmd_usage_fail("sim", "sim takes one SCENARIO, got %d", argc - optind);
    if (compare && strategy)
        return cmd_usage_fail("sim", "--compare runs every strategy; drop --strategy");
    if (check_strategy("sim", strategy) != 0)
        return 2;

    char dir[PATH_MAX];
    struct rf_error err = {0};
    struct rf_lua *L = NULL;
    struct lazy_store ls = {.path = db};
    json_t *list = json_array();
    /* The table is collected here and printed once every strategy is stored, so a failure
     * prints no part of it. */
    char *table = NULL, *memory_text = NULL;
    size_t table_len = 0;
    FILE *tf = open_memstream(&table, &table_len);
    struct rf_sim_options sim;
    int rc = 1, stored = 0;
    int64_t first_id = 0;
    const char *all[RF_STRAT_COUNT];
    int n = 0;
    if (compare)
        for (int i = 0; i < RF_STRAT_COUNT; i++)
            all[n++] = rf_strategy_name((enum rf_strategy)i);
    else
        all[n++] = strategy;

    if (!list || !tf) {
        rf_error_set(&err, RF_ENOMEM, "out of memory");
        rc = cmd_fail(&err);
        goto out;
    }
    if (check_label("--label", label, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    if (cmd_sim_options(&sim) != 0)
        goto out; /* before any database is looked at: nothing to clean up */
    cmd_models_dir(dir, sizeof(dir));
    if (rf_lua_open(&L, dir, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    sim_header(tf);
    for (int i = 0; i < n; i++) {
        struct refit_run r = {0};
        int x = compute_run(L, &(struct rf_scenario_src){.path = argv[optind]}, all[i], true, &sim,
                            &r, &err);
        if (x == RF_ENOTSUP && compare) { /* --compare: the framework's strategies only */
            refit_run_release(&r);
            continue;
        }
        if (x == 0)
            x = store_run(&ls, label, &r, &err);
        if (x == 0 && json) {
            json_t *o = sim_run_json(&r);
            if (!o || json_array_append_new(list, o) < 0)
                x = rf_error_set(&err, RF_EINVAL, "cannot build the JSON output of run %lld",
                                 (long long)r.id);
        } else if (x == 0) {
            if (i == 0)
                memory_text = memory_lines(&r.sc);
            sim_row(tf, &r.plan, r.used, &r.pred);
            print_step(tf, &r.sc.framework, &r.step);
            if (r.plan.strategy == RF_STRAT_AUTO)
                fprintf(tf, "%-12s %s (%d candidates predicted, %d only bounded)\n", "",
                        r.choice.description, r.choice.evaluated, r.choice.pruned);
        }
        if (x == 0 && stored++ == 0)
            first_id = r.id;
        refit_run_release(&r);
        if (x < 0) {
            /* Each strategy is its own transaction: the ones before stay, and the error
             * says which, rather than leaving the user to guess. */
            if (stored > 0) {
                size_t len = strlen(err.msg);
                snprintf(err.msg + len, sizeof(err.msg) - len,
                         " (runs %lld.. of the %d earlier strategies stay in %s)",
                         (long long)first_id, stored, db);
            }
            rc = cmd_fail(&err);
            goto out;
        }
    }
    if (json) {
        json_t *doc = compare ? json_incref(list) : json_incref(json_array_get(list, 0));
        if (rf_json_print(doc, stdout, &err) < 0) {
            rc = cmd_fail(&err);
            goto out;
        }
    } else {
        fprintf(tf, "\n%sstored in %s\n", memory_text ? memory_text : "", db);
        if (fclose(tf) != 0) {
            tf = NULL;
            rf_error_set(&err, RF_ENOMEM, "out of memory");
            rc = cmd_fail(&err);
            goto out;
        }
        tf = NULL;
        fwrite(table, 1, table_len, stdout);
    }
    rc = 0;
out:
    if (tf)
        fclose(tf);
    free(table);
    free(memory_text);
    json_decref(list);
    lazy_store_close(&ls);
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

static void copy_str(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

/* One refit.plan / refit.sim of a study: plan (and simulate), store, report. */
int study_run_one(void *ctx, const struct rf_scenario_src *src, const char *strategy,
                  const char *label, bool simulate, struct rf_study_result *out,
                  struct rf_error *err)
{
    struct study_ctx *c = ctx;
    struct refit_run r = {0};
    int rc = check_label("label", label, err);
    if (rc == 0)
        rc = compute_run(c->L, src, strategy, simulate, c->sim, &r, err);
    if (rc == 0)
        rc = store_run(c->ls, label, &r, err);
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
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'h': fputs(usage_run, stdout); return 0;
        default: return 2;
        }
    }
    if (optind + 1 != argc)
        return cmd_usage_fail("run", "run takes one STUDY, got %d", argc - optind);
    char dir[PATH_MAX];
    struct rf_error err = {0};
    struct rf_lua *L = NULL;
    /* Opened by the first run the study stores: a study that fails before that leaves no
     * file; runs stored before a later failure stay (each is one transaction). */
    struct lazy_store ls = {.path = db};
    struct rf_sim_options sim;
    int rc = 1;
    if (cmd_sim_options(&sim) != 0)
        return 1;
    cmd_models_dir(dir, sizeof(dir));
    if (rf_lua_open(&L, dir, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    struct study_ctx ctx = {.L = L, .ls = &ls, .sim = &sim, .tty = isatty(STDERR_FILENO) != 0};
    rf_lua_set_study_search(L, &(struct rf_study_search){cmd_search_study, &ctx, sim});
    fflush(stdout);
    if (rf_lua_run_study(L, argv[optind], study_run_one, &ctx, &err) < 0) {
        fflush(stdout);
        rc = cmd_fail(&err);
        goto out;
    }
    rc = 0;
out:
    lazy_store_close(&ls);
    rf_lua_close(L);
    return rc;
}

/* A command that succeeded but whose output did not all reach stdout (a full disk, a closed
 * pipe) has failed: exit 0 would claim a result the user never got. */
static int finish(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (rc == 0)
            fprintf(stderr, "refit: stdout: %s\n", strerror(errno ? errno : EIO));
        return rc ? rc : 1;
    }
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
        return finish(cmd_plan(argc - 1, argv + 1));
    if (strcmp(argv[1], "sim") == 0)
        return finish(cmd_sim(argc - 1, argv + 1));
    if (strcmp(argv[1], "run") == 0)
        return finish(cmd_run(argc - 1, argv + 1));
    if (strcmp(argv[1], "calibrate") == 0)
        return finish(cmd_calibrate(argc - 1, argv + 1));
    if (strcmp(argv[1], "report") == 0)
        return finish(cmd_report(argc - 1, argv + 1));
    if (strcmp(argv[1], "models") == 0)
        return finish(cmd_models(argc - 1, argv + 1));
    if (strcmp(argv[1], "show") == 0)
        return finish(cmd_show(argc - 1, argv + 1));
    if (strcmp(argv[1], "diff") == 0)
        return finish(cmd_diff(argc - 1, argv + 1));
    if (strcmp(argv[1], "search") == 0)
        return finish(cmd_search(argc - 1, argv + 1));
    fprintf(stderr, "refit: '%s' is not a command; see refit --help\n", argv[1]);
    return 2;
}
