/* `refit search`: the inference layouts of a scenario that fit, ranked by their cheap
 * estimates, the best simulated in full and stored (sim/search.c); its table and JSON. */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "checked.h"
#include "cmd.h"
#include "json.h"
#include "progress.h"
#include "scenario.h"
#include "search.h"
#include "search_lua.h"

static const char usage_search[] =
    "usage: refit search SCENARIO [--gpus N,...] [--dtype bf16,fp8] [--pp N,...] [--top K]\n"
    "                    [--strategy S] [--spanning] [--db FILE] [--label TEXT] [--json]\n"
    "                    [--store full|summary] [--max-memory SIZE]\n"
    "\n"
    "Lists the inference layouts of SCENARIO that fit in the GPUs' memory (TP x DP x PP x EP\n"
    "as vLLM accepts them, experts whole per EP rank, engines aligned to the NVLink domains),\n"
    "estimates the refit of each (the simulator's bound mode; auto: its screen of reshard and\n"
    "hierarchical), simulates the K best estimates in full, stores them in FILE (default\n"
    "refit.db) with one label, and prints every layout that fits, ranked.\n"
    "  --gpus N,...    inference GPU counts (default: the scenario's infer.gpus); a count\n"
    "                  the scenario's cluster cannot hold grows cluster.nodes\n"
    "  --dtype D,...   bf16, fp8 or both (default: the scenario's infer.dtype)\n"
    "  --pp N,...      pipeline sizes to consider (default: every size vLLM accepts)\n"
    "  --top K         layouts simulated in full and stored (default 5; 0: estimates only)\n"
    "  --strategy S    broadcast | reshard | hierarchical | hybrid | auto (default: the\n"
    "                  scenario's)\n"
    "  --spanning      also engines that cross NVLink domains (packed), marked 'spans'\n"
    "  --label TEXT    label of the stored runs (default search)\n"
    "  --json          one JSON object instead of the table\n"
    "  --store summary store the top rows without their plans (refit sim --help)\n"
    "  --max-memory SIZE  leave out, with the estimate, layouts whose plan is estimated to\n"
    "                  need more memory (GB, or with M, G or T; 0: no limit; default three\n"
    "                  quarters of this machine's memory); layouts are estimated as many at\n"
    "                  once as it holds\n"
    "Progress (k/N and an ETA) goes to stderr when it is a terminal. REFIT_THREADS sets the\n"
    "layouts estimated at once (default 2).\n";

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

/* ---- Flags ---- */

static int parse_count(const char *s, int64_t min, int64_t max, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (end == s || *end || errno == ERANGE || v < min || v > max)
        return -1;
    *out = v;
    return 0;
}

/* A list of sizes (--gpus 1024,2048, --pp 1,2): what = "a GPU count"; none twice. */
static int parse_sizes(const char *flag, const char *what, const char *arg, int64_t *out, int *n)
{
    char buf[1024], *save = NULL;
    if (strlen(arg) >= sizeof(buf) || arg[0] == ',' || arg[strlen(arg) - 1] == ',' ||
        strstr(arg, ",,"))
        return cmd_usage_fail("search", "%s: expected integers separated by commas, got '%s'", flag,
                              arg);
    snprintf(buf, sizeof(buf), "%s", arg);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int64_t v;
        if (parse_count(tok, 1, RF_GPUS_MAX, &v) < 0)
            return cmd_usage_fail("search", "%s: '%s' is not %s (an integer from 1 to %lld)", flag,
                                  tok, what, (long long)RF_GPUS_MAX);
        for (int i = 0; i < *n; i++)
            if (out[i] == v)
                return cmd_usage_fail("search", "%s: %lld is listed twice", flag, (long long)v);
        if (*n == RF_SEARCH_MAX_GPU_COUNTS)
            return cmd_usage_fail("search", "%s: more than %d values", flag,
                                  RF_SEARCH_MAX_GPU_COUNTS);
        out[(*n)++] = v;
    }
    return 0;
}

/* --dtype bf16,fp8: the inference side's wire dtypes, none twice. */
static int parse_dtypes(const char *arg, struct rf_search_request *req)
{
    char buf[256], *save = NULL;
    if (strlen(arg) >= sizeof(buf) || arg[0] == ',' || arg[strlen(arg) - 1] == ',' ||
        strstr(arg, ",,"))
        return cmd_usage_fail("search", "--dtype: expected bf16, fp8 or bf16,fp8, got '%s'", arg);
    snprintf(buf, sizeof(buf), "%s", arg);
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        enum rf_dtype d;
        if ((strcmp(tok, "bf16") != 0 && strcmp(tok, "fp8") != 0) || rf_dtype_parse(tok, &d) < 0)
            return cmd_usage_fail("search", "--dtype: '%s' is not an inference dtype (bf16 or fp8)",
                                  tok);
        for (int i = 0; i < req->n_dtypes; i++)
            if (req->dtypes[i] == d)
                return cmd_usage_fail("search", "--dtype: %s is listed twice", tok);
        req->dtypes[req->n_dtypes++] = d;
    }
    return 0;
}

/* ---- Progress ---- */

struct progress {
    const char *prefix; /* "refit search" or "refit run: search" */
    int phase;
    double start;
    struct rf_progress line; /* the estimates' line, redrawn at most five times a second */
};

/* k/N and an ETA from this phase's pace so far; estimates overwrite one line (a search
 * estimates thousands of layouts: sim/progress.c limits the redraws), each full simulation
 * gets its own. */
static void on_progress(void *ctx, int phase, size_t done, size_t total,
                        const struct rf_search_row *row)
{
    struct progress *p = ctx;
    if (phase != p->phase || done == 0) {
        p->phase = phase;
        p->start = now();
    }
    double elapsed = now() - p->start;
    char eta[32] = "-";
    if (done == total)
        rf_progress_duration(elapsed, eta, sizeof(eta));
    if (phase == 0 && done < total) {
        if (!p->line.enabled)
            rf_progress_init(&p->line, stderr, p->prefix, true);
        rf_progress_step(&p->line, (int64_t)done, (int64_t)total, "estimated layouts that fit");
    } else if (phase == 0) {
        rf_progress_clear(&p->line);
        fprintf(stderr, "\r%s: estimated %zu/%zu layouts that fit, took %s\n", p->prefix, done,
                total, eta);
    } else if (row) {
        char layout[64];
        if (done < total)
            rf_progress_duration(elapsed / (double)done * (double)(total - done), eta, sizeof(eta));
        rf_search_layout_text(row, layout, sizeof(layout));
        fprintf(stderr, "\r%s: simulated %zu/%zu: %s %s on %lld GPUs, %.3f s (run %lld), %s %s\n",
                p->prefix, done, total, layout, rf_dtype_name(row->dtype), (long long)row->gpus,
                row->run.predicted_s, (long long)row->run.run_id, done == total ? "took" : "ETA",
                eta);
    }
    fflush(stderr);
}

/* ---- Output ---- */

/* Whether the rows rank by the step: a profile that runs the strategy gave them step
 * estimates (auto's screen has none, and ranks by the wire). */
static bool by_step(const struct rf_search_result *r)
{
    for (size_t i = 0; r->framework[0] && i < r->n_rows; i++)
        if (!isnan(r->rows[i].estimate_step_s))
            return true;
    return false;
}

static void print_table(const struct rf_search_result *r, const char *db, double max_memory_gb)
{
    char train[128], line[256];
    rf_side_describe(&r->train, train, sizeof(train));
    rf_memory_describe(&r->mem_train, true, line, sizeof(line));
    /* Under a profile the rows rank by the whole step (sim/step.h), the time the user
     * waits for: a faster wire can come with a slower export. */
    bool step = by_step(r);
    printf("%s on %s, strategy %s: %zu layouts enumerated, %zu fit", r->model, r->cluster,
           r->strategy, r->enumerated, r->n_rows);
    if (step)
        printf("; framework %s: ranked by the step (step s)", r->framework);
    printf("\n");
    printf("  train %lld GPUs %s: %s\n\n", (long long)r->train.gpus, train, line);
    printf("%4s  %-20s %-5s %6s %8s %11s %7s %10s %9s", "rank", "layout", "dtype", "gpus",
           "engines", "weights GB", "KV GB", "refit s", "bound s");
    if (step)
        printf(" %10s", "step s");
    printf("  %s\n", "bottleneck");
    bool any_estimate = false, any_spans = false, any_left_out = false;
    for (size_t i = 0; i < r->n_rows; i++) {
        const struct rf_search_row *row = &r->rows[i];
        char layout[64], figure[32], stepf[32] = "";
        rf_search_layout_text(row, layout, sizeof(layout));
        if (row->simulated)
            snprintf(figure, sizeof(figure), "%.3f", step ? row->run.wire_s : row->run.predicted_s);
        else if (row->too_large)
            snprintf(figure, sizeof(figure), "-");
        else
            snprintf(figure, sizeof(figure), "~%.3f", row->estimate_s);
        if (step) {
            char est[24] = "-";
            if (row->simulated)
                snprintf(est, sizeof(est), "%.3f", row->run.predicted_s);
            else if (!isnan(row->estimate_step_s))
                snprintf(est, sizeof(est), "~%.3f", row->estimate_step_s);
            snprintf(stepf, sizeof(stepf), " %10s", est);
        }
        any_estimate |= !row->simulated && !row->too_large;
        any_spans |= row->spans;
        char bound[24] = "-", note[96] = "-";
        if (!row->too_large)
            snprintf(bound, sizeof(bound), "%.3f",
                     row->simulated ? row->run.lower_bound_s : row->bound_s);
        if (row->simulated)
            snprintf(note, sizeof(note), "%s", row->run.bottleneck);
        else if (row->too_large)
            snprintf(note, sizeof(note), "left out: its plan needs an estimated %.3g GB",
                     (double)row->need_bytes / 1e9);
        printf("%4zu  %-20s %-5s %6lld %8lld %11.1f %7.1f %10s %9s%s  %s%s\n", i + 1, layout,
               rf_dtype_name(row->dtype), (long long)row->gpus, (long long)row->replicas,
               gb(row->mem.worst.weights), gb(row->mem.headroom_bytes), figure, bound, stepf, note,
               row->spans ? "  (spans domains)" : "");
        any_left_out |= row->too_large;
    }
    printf("\n");
    if (any_estimate)
        printf("~: estimate only (%s), not simulated\n",
               strcmp(r->strategy, "auto") == 0 ? "auto's screen: the best of reshard and "
                                                  "hierarchical, bound mode"
                                                : "the simulator's bound mode");
    if (step)
        printf("refit s: the wire; step s: export, wire, load and finalize as %s runs them (the "
               "stored prediction); ~: from the wire's estimate\n",
               r->framework);
    if (any_spans)
        printf("spans domains: packed engines that cross NVLink domain boundaries\n");
    if (any_left_out)
        printf("left out: layouts whose plan is estimated above --max-memory (%.3g GB), neither "
               "estimated nor simulated\n",
               max_memory_gb);
    printf("weights GB, KV GB: per GPU, the worst of the inference side; KV: what the engine's "
           "share leaves for the KV cache\n");
    if (r->simulated > 0)
        printf("%zu simulated in full and stored in %s with label '%s': runs %lld..%lld\n",
               r->simulated, db, r->label, (long long)r->first_run, (long long)r->last_run);
    else
        printf("none simulated in full (--top 0): nothing stored\n");
}

static json_t *num_or_null(bool have, double v)
{
    return have ? json_real(v) : json_null();
}

static json_t *row_json(const struct rf_search_row *row, size_t rank, bool step)
{
    char layout[64];
    rf_search_layout_text(row, layout, sizeof(layout));
    json_t *o = json_pack(
        "{sI ss sI sI sI sI sI sI sI ss sb sI sI sI sI so sb}", "rank", (json_int_t)rank, "layout",
        layout, "gpus", (json_int_t)row->gpus, "tp", (json_int_t)row->tp, "dp", (json_int_t)row->dp,
        "pp", (json_int_t)row->pp, "ep", (json_int_t)row->ep, "engines", (json_int_t)row->replicas,
        "engine_gpus", (json_int_t)(row->tp * row->dp * row->pp), "dtype",
        rf_dtype_name(row->dtype), "spans", row->spans, "nodes", (json_int_t)row->nodes,
        "weights_bytes", (json_int_t)row->mem.worst.weights, "infer_bytes",
        (json_int_t)row->mem.worst.total, "kv_headroom_bytes", (json_int_t)row->mem.headroom_bytes,
        "estimated_as", rf_json_text(row->how), "simulated", row->simulated);
    if (!o)
        return NULL;
    /* A layout left out for memory has neither figure, only its plan's estimate. */
    json_object_set_new(o, "bound_s", num_or_null(!row->too_large, row->bound_s));
    json_object_set_new(o, "estimate_s", num_or_null(!row->too_large, row->estimate_s));
    json_object_set_new(o, "plan_memory_bytes", json_integer((json_int_t)row->need_bytes));
    json_object_set_new(o, "left_out", json_boolean(row->too_large));
    const struct rf_study_result *run = &row->run;
    json_object_set_new(o, "run_id",
                        row->simulated ? json_integer((json_int_t)run->run_id) : json_null());
    json_object_set_new(o, "predicted_s", num_or_null(row->simulated, run->predicted_s));
    json_object_set_new(o, "lower_bound_s", num_or_null(row->simulated, run->lower_bound_s));
    /* Under a profile: the step, estimated and simulated (then predicted_s), and the wire. */
    if (step) {
        json_object_set_new(o, "estimate_step_s",
                            num_or_null(!isnan(row->estimate_step_s), row->estimate_step_s));
        json_object_set_new(o, "step_s", num_or_null(row->simulated, run->predicted_s));
        json_object_set_new(o, "wire_s", num_or_null(row->simulated, run->wire_s));
    }
    json_object_set_new(o, "bottleneck",
                        row->simulated ? rf_json_text(run->bottleneck) : json_null());
    json_object_set_new(o, "strategy", row->simulated ? rf_json_text(run->strategy) : json_null());
    if (row->simulated && run->auto_choice[0])
        json_object_set_new(o, "auto_choice", rf_json_text(run->auto_choice));
    return o;
}

static int print_json(const struct rf_search_result *r, const char *db, struct rf_error *err)
{
    const struct rf_side_memory *m = &r->mem_train;
    json_t *rows = json_array();
    for (size_t i = 0; rows && i < r->n_rows; i++) {
        json_t *o = row_json(&r->rows[i], i + 1, by_step(r));
        if (!o || json_array_append_new(rows, o) < 0) {
            json_decref(rows);
            return rf_error_set(err, RF_ENOMEM, "cannot build the JSON output");
        }
    }
    json_t *train = json_pack("{sI sI sI sI sb}", "gpus", (json_int_t)r->train.gpus, "gpu",
                              (json_int_t)m->worst.gpu, "total_bytes", (json_int_t)m->worst.total,
                              "budget_bytes", (json_int_t)m->budget_bytes, "fits", m->fits);
    json_t *o = json_pack("{so so so ss ss ss sI sI sI so so}", "scenario", rf_json_text(r->source),
                          "model", rf_json_text(r->model), "cluster", rf_json_text(r->cluster),
                          "strategy", r->strategy, "label", r->label, "db", db, "enumerated",
                          (json_int_t)r->enumerated, "fit", (json_int_t)r->n_rows, "simulated",
                          (json_int_t)r->simulated, "train", train, "layouts", rows);
    if (o)
        json_object_set_new(o, "ranked_by", json_string(by_step(r) ? "step" : "wire"));
    if (o && r->framework[0])
        json_object_set_new(o, "framework", json_string(r->framework));
    return rf_json_print(o, stdout, err);
}

/* ---- The command, and a study's refit.search ---- */

int cmd_search_study(void *ctx, const struct rf_scenario_src *src,
                     const struct rf_search_request *req, struct rf_search_result *out,
                     struct rf_error *err)
{
    struct study_ctx *c = ctx;
    struct progress p = {.prefix = "refit run: search", .phase = -1};
    struct rf_search_hooks hooks = {.run = study_run_one,
                                    .run_ctx = c,
                                    .progress = c->tty ? on_progress : NULL,
                                    .progress_ctx = &p};
    return rf_search(c->L, src, req, c->sim, &hooks, out, err);
}

/* The error of a search that found nothing to rank. */
static int nothing(const struct rf_search_result *r, const char *path, bool spanning)
{
    if (r->enumerated == 0)
        fprintf(stderr,
                "refit: %s: no layout of these GPU counts passes vLLM's rules with engines "
                "aligned to the NVLink domains%s\n",
                path, spanning ? "" : " (--spanning adds engines that cross them)");
    else
        fprintf(stderr,
                "refit: %s: no layout fits in the GPUs' memory (%zu enumerated; more GPUs, fp8, "
                "or a larger infer.gpu_memory_utilization)\n",
                path, r->enumerated);
    return 1;
}

int cmd_search(int argc, char **argv)
{
    static const struct option opts[] = {{"gpus", required_argument, NULL, 'g'},
                                         {"dtype", required_argument, NULL, 't'},
                                         {"pp", required_argument, NULL, 'P'},
                                         {"top", required_argument, NULL, 'k'},
                                         {"strategy", required_argument, NULL, 's'},
                                         {"spanning", no_argument, NULL, 'p'},
                                         {"db", required_argument, NULL, 'd'},
                                         {"label", required_argument, NULL, 'l'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"store", required_argument, NULL, 'S'},
                                         {"max-memory", required_argument, NULL, 'M'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int64_t max_memory = -1;
    struct rf_search_request req = {.top = RF_SEARCH_TOP_DEFAULT};
    const char *db = "refit.db";
    bool json = false, summary = false;
    int c;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'S':
            if (cmd_store_mode("search", optarg, &summary) != 0)
                return 2;
            break;
        case 'g':
            if (parse_sizes("--gpus", "a GPU count", optarg, req.gpus, &req.n_gpus) != 0)
                return 2;
            break;
        case 'P':
            if (parse_sizes("--pp", "a pipeline size", optarg, req.pp, &req.n_pp) != 0)
                return 2;
            break;
        case 't':
            if (parse_dtypes(optarg, &req) != 0)
                return 2;
            break;
        case 'k':
            if (parse_count(optarg, 0, RF_GPUS_MAX, &req.top) < 0)
                return cmd_usage_fail("search",
                                      "--top: '%s' is not a count of layouts (an integer from 0 "
                                      "to %lld)",
                                      optarg, (long long)RF_GPUS_MAX);
            break;
        case 's': req.strategy = optarg; break;
        case 'p': req.spanning = true; break;
        case 'd': db = optarg; break;
        case 'l': req.label = optarg; break;
        case 'j': json = true; break;
        case 'M':
            if (cmd_max_memory("search", optarg, &max_memory) != 0)
                return 2;
            break;
        case 'h': fputs(usage_search, stdout); return 0;
        default: return 2;
        }
    }
    if (optind + 1 != argc)
        return cmd_usage_fail("search", "search takes one SCENARIO, got %d", argc - optind);
    struct rf_error err = {0};
    if (cmd_check_strategy("search", req.strategy) != 0)
        return 2;
    if (cmd_check_label("--label", req.label, &err) < 0)
        return cmd_fail(&err);

    struct cmd_env env;
    struct rf_search_result res = {0};
    bool have = false;
    int rc = cmd_open(&env, db, CMD_OPEN_SIM);
    if (rc != 0)
        goto out;
    if (max_memory >= 0)
        env.sim.max_memory = max_memory;
    rc = 1;
    /* The study context's runs are the top rows; its own line per run stays off (the
     * search prints one), its phases show while each runs. */
    bool tty = !json && isatty(STDERR_FILENO);
    struct rf_progress runs;
    rf_progress_init(&runs, stderr, "refit search", tty);
    struct study_ctx ctx = {.L = env.L,
                            .ls = &env.ls,
                            .sim = &env.sim,
                            .tty = false,
                            .progress = tty ? &runs : NULL,
                            .progress_what = "refit search: full simulation",
                            .summary = summary};
    struct progress p = {.prefix = "refit search", .phase = -1};
    struct rf_search_hooks hooks = {.run = study_run_one,
                                    .run_ctx = &ctx,
                                    .progress = tty ? on_progress : NULL,
                                    .progress_ctx = &p};
    if (rf_search(env.L, &(struct rf_scenario_src){.path = argv[optind]}, &req, &env.sim, &hooks,
                  &res, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    have = true;
    if (res.n_rows == 0) {
        rc = nothing(&res, argv[optind], req.spanning);
        goto out;
    }
    if (json) {
        if (print_json(&res, db, &err) < 0) {
            rc = cmd_fail(&err);
            goto out;
        }
    } else {
        print_table(&res, db, (double)env.sim.max_memory / 1e9);
    }
    rc = 0;
out:
    if (have)
        rf_search_result_release(env.L, &res);
    cmd_close(&env);
    return rc;
}
