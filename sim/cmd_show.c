/* `refit show` and `refit diff`: a stored run on one screen (scenario, memory, prediction,
 * measurements), and what differs between two runs' scenarios and figures. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "describe.h"
#include "json.h"
#include "runview.h"
#include "store.h"

static const char usage_show[] =
    "usage: refit show RUN [--db FILE] [--json]\n"
    "\n"
    "Shows run RUN of FILE (default refit.db) on one screen: its scenario as it was resolved\n"
    "(sides, cluster, the overrides of the cluster's preset, strategy, sources, relay),\n"
    "each side's memory, the prediction and its bottleneck, the step's phases when a framework\n"
    "profile gave it some (part, phase, seconds, share of the step, mechanism), and every\n"
    "measurement with how refit-exec ran it (or, from a log, its source and phases). A run\n"
    "stored before schema 7 has no resolved scenario: it is shown with what its run row\n"
    "says, and says so.\n"
    "  --json         one JSON object (the stored scenario in full under \"scenario\")\n";

static const char usage_diff[] =
    "usage: refit diff RUN RUN [--db FILE] [--json]\n"
    "\n"
    "Compares two runs of FILE (default refit.db): every field of their resolved scenarios\n"
    "that differs, as a dotted path (cluster.fabric.pxn: true -> false), then their figures\n"
    "(payload, predicted and bound seconds, measured seconds, memory), and when either run has\n"
    "a step, its seconds and each phase's, matched by part and phase.\n"
    "  --json         one JSON object\n";

/* Bytes in decimal units, as the rest of refit prints them. */
static void fmt_bytes(int64_t b, char *buf, size_t size)
{
    double v = (double)b;
    if (llabs(b) >= 1000000000)
        snprintf(buf, size, "%.2f GB", v / 1e9);
    else if (llabs(b) >= 1000000)
        snprintf(buf, size, "%.2f MB", v / 1e6);
    else if (llabs(b) >= 1000)
        snprintf(buf, size, "%.2f kB", v / 1e3);
    else
        snprintf(buf, size, "%lld B", (long long)b);
}

static const char *str(const json_t *o, const char *key)
{
    const char *s = json_string_value(json_object_get(o, key));
    return s ? s : "?";
}

static long long num(const json_t *o, const char *key)
{
    return (long long)json_integer_value(json_object_get(o, key));
}

/* Parses RUN; false after saying why (exit 2). */
static bool parse_run(const char *cmd, const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (*s == '\0' || *end || errno == ERANGE || v < 1) {
        cmd_usage_fail(cmd, "RUN %s: expected a run id (a positive integer)", s);
        return false;
    }
    *out = v;
    return true;
}

/* Parses the common command line: RUN [RUN] [--db FILE] [--json]; -1 to go on, else the
 * exit status. */
static int parse_args(int argc, char **argv, const char *usage, int want, int64_t *runs,
                      const char **db, bool *json)
{
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    int c;
    *db = "refit.db";
    *json = false;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'd': *db = optarg; break;
        case 'j': *json = true; break;
        case 'h': fputs(usage, stdout); return 0;
        default: return 2;
        }
    }
    if (argc - optind != want)
        return cmd_usage_fail(argv[0], "%s takes %s, got %d", argv[0],
                              want == 1 ? "one RUN" : "two RUNs", argc - optind);
    for (int i = 0; i < want; i++)
        if (!parse_run(argv[0], argv[optind + i], &runs[i]))
            return 2;
    return -1;
}

/* ---- refit show */

static void show_side(const char *name, const json_t *s, const struct rf_run_view *v)
{
    bool train = strcmp(name, "train") == 0;
    if (!s) {
        int64_t gpus = train ? v->train_gpus : v->infer_gpus;
        printf("  %-10s %lld GPU%s from %lld, %s, %s\n", name, (long long)gpus,
               gpus == 1 ? "" : "s", (long long)(train ? v->train_first_gpu : v->infer_first_gpu),
               train ? v->train_layout : v->infer_layout, train ? v->train_dtype : v->infer_dtype);
        return;
    }
    char extra[160];
    if (train)
        snprintf(extra, sizeof(extra), "%s%s%s%s",
                 json_is_true(json_object_get(s, "distributed_optimizer"))
                     ? "distributed optimizer"
                     : "optimizer state not sharded",
                 json_is_true(json_object_get(s, "fsdp")) ? ", fsdp" : "",
                 json_is_true(json_object_get(s, "offload_params"))
                     ? ", parameters offloaded between steps"
                     : "",
                 json_is_true(json_object_get(s, "offload_optimizer"))
                     ? ", optimizer state offloaded to the host"
                     : "");
    else
        snprintf(extra, sizeof(extra), "gpu_memory_utilization %g",
                 json_number_value(json_object_get(s, "gpu_memory_utilization")));
    printf("  %-10s %lld GPU%s from %lld, %s, %s, %s\n", name, num(s, "gpus"),
           num(s, "gpus") == 1 ? "" : "s", num(s, "first_gpu"), str(s, "layout"), str(s, "dtype"),
           extra);
}

/* Where the scenario changed its cluster's preset: "cluster.nodes 2 (preset 1), ...". */
static int show_overrides(const json_t *doc, struct rf_error *err)
{
    struct rf_json_leaf *pre = NULL, *cur = NULL;
    size_t np = 0, nc = 0;
    int rc;
    if ((rc = rf_json_leaves(json_object_get(doc, "cluster_preset"), NULL, &pre, &np, err)) < 0 ||
        (rc = rf_json_leaves(json_object_get(doc, "cluster"), NULL, &cur, &nc, err)) < 0)
        goto out;
    printf("  %-10s %s", "overrides", np == 0 ? "none (the preset as it is)" : "");
    for (size_t i = 0; i < np; i++) {
        const char *now = "?";
        for (size_t j = 0; j < nc; j++)
            if (strcmp(cur[j].path, pre[i].path) == 0)
                now = cur[j].value;
        printf("%scluster.%s %s (preset %s)", i ? ", " : "", pre[i].path, now, pre[i].value);
    }
    printf("\n");
out:
    rf_json_leaves_free(pre, np);
    rf_json_leaves_free(cur, nc);
    return rc;
}

/* Per role, the tensors of each strategy: "attention reshard 4, norm broadcast 5". */
static int show_strategies(const json_t *ts, struct rf_error *err)
{
    struct rf_json_leaf *l = NULL;
    size_t n = 0;
    int rc = rf_json_leaves(ts, NULL, &l, &n, err);
    if (rc < 0)
        return rc;
    printf("  %-10s %s", "tensors", n == 0 ? "-" : "");
    for (size_t i = 0; i < n; i++) {
        size_t role = strcspn(l[i].path, ".");
        printf("%s%.*s %s %s", i ? ", " : "", (int)role, l[i].path,
               l[i].path[role] ? l[i].path + role + 1 : "?", l[i].value);
    }
    printf("\n");
    rf_json_leaves_free(l, n);
    return 0;
}

static void show_memory(const struct rf_run_view *v)
{
    char line[256];
    if (!v->has_memory) {
        printf("  %-10s not stored (the run predates schema 7)\n", "memory");
        return;
    }
    const struct rf_side_memory *m[2] = {&v->mem_train, &v->mem_infer};
    for (int i = 0; i < 2; i++) {
        rf_memory_describe(m[i], i == 0, line, sizeof(line));
        printf("  memory %s: %s%s\n", i == 0 ? "train" : "infer", line,
               m[i]->fits ? "" : "  DOES NOT FIT (allow_overcommit)");
    }
}

/* The step under the run's framework profile: its time, how its phases compose into it, and
 * each phase with its share of the step (phases that overlap have shares summing past 100%). */
static void show_step(const struct rf_run_view *v)
{
    const struct rf_step *s = &v->step;
    printf("  %-10s %.6g s: %s\n", "step", s->total_s, s->composition);
    printf("  %-10s %-5s %-9s %10s %7s  %s\n", "phases", "part", "phase", "seconds", "share",
           "mechanism");
    for (size_t i = 0; i < s->n; i++) {
        const struct rf_step_phase *p = &s->phase[i];
        char share[16] = "-";
        if (s->total_s > 0)
            snprintf(share, sizeof(share), "%.1f%%", 100 * p->seconds / s->total_s);
        printf("  %-10s %-5s %-9s %10.6g %7s  %s\n", "", rf_step_part_name(p->part),
               rf_step_phase_name(p->phase), p->seconds, share, p->mechanism);
    }
}

static bool is_log(const struct rf_run_measurement *m)
{
    return strcmp(m->backend, "log") == 0;
}

/* A step read from a framework's log (refit measure): its time, its phases, its source. */
static void show_log(const struct rf_run_view *v, const struct rf_run_measurement *m)
{
    printf("    %lld  %s  %s, from a log: %.6g s (the %s)", (long long)m->id, m->created_at,
           m->status, m->seconds, v->has_step ? "step" : "wire");
    for (int k = 0, n = 0; k < RF_STEP_PHASE_COUNT; k++)
        if (!isnan(m->phase_s[k]))
            printf("%s%s %.6g s", n++ ? ", " : "; ", rf_step_phase_name((enum rf_step_phase_kind)k),
                   m->phase_s[k]);
    printf("; source %s\n", *m->source ? m->source : "-");
}

static void show_text(const struct rf_run_view *v, struct rf_error *err)
{
    const json_t *d = v->doc;
    char a[32], b[32], c[32];
    /* A framework's point-to-point path is planned as its p2p section says; the run's
     * strategy is that plan, and the path is named beside it. */
    const json_t *p2p = d ? json_object_get(json_object_get(d, "framework"), "p2p") : NULL;
    bool p2p_run = p2p && json_is_true(json_object_get(p2p, "run"));
    printf("run %lld%s%s%s: %s, strategy %s%s, stored %s\n", (long long)v->id,
           v->has_label ? " (label \"" : "", v->has_label ? v->label : "",
           v->has_label ? "\")" : "", v->model, v->strategy,
           p2p_run ? " (the framework's p2p path)" : "", v->created_at);
    if (!d) {
        printf("  %-10s %s (its resolved scenario was not stored: the run predates schema 7)\n",
               "scenario", v->scenario);
    } else {
        const json_t *m = json_object_get(d, "model");
        printf("  %-10s %s\n", "scenario", str(d, "source"));
        if (json_is_string(json_object_get(d, "sides")))
            printf("  %-10s %s\n", "sides", str(d, "sides"));
        fmt_bytes(num(m, "bytes"), a, sizeof(a));
        printf("  %-10s %s (%s): %.3f B params, %s, %lld layers, %lld experts\n", "model",
               str(m, "name"), str(m, "source"), (double)num(m, "params") / 1e9, a,
               num(m, "layers"), num(m, "experts"));
    }
    show_side("train", d ? json_object_get(d, "train") : NULL, v);
    show_side("infer", d ? json_object_get(d, "infer") : NULL, v);
    if (!d) {
        printf("  %-10s %s, %lld node%s\n", "cluster", v->cluster_system,
               (long long)v->cluster_nodes, v->cluster_nodes == 1 ? "" : "s");
    } else {
        const json_t *cl = json_object_get(d, "cluster");
        const json_t *nic = json_object_get(cl, "nic"), *fab = json_object_get(cl, "fabric");
        printf("  %-10s %s (%s): %lld node%s x %lld GPUs, %g GB HBM, NVLink domains of %lld, "
               "%lld NIC%s x %g GB/s a node, pxn %s\n",
               "cluster", str(cl, "name"), str(cl, "source"), num(cl, "nodes"),
               num(cl, "nodes") == 1 ? "" : "s", num(cl, "gpus_per_node"),
               json_number_value(json_object_get(cl, "hbm_gb")),
               num(json_object_get(cl, "nvlink"), "domain_gpus"), num(nic, "per_node"),
               num(nic, "per_node") == 1 ? "" : "s",
               json_number_value(json_object_get(nic, "gbps")),
               json_is_true(json_object_get(fab, "pxn")) ? "on" : "off");
        /* A mixed cluster: the nodes from first_node on are the second preset's GPUs. */
        const json_t *up = json_object_get(cl, "upper");
        if (up)
            printf("  %-10s nodes %lld.. are %s (%s): %g GB HBM, NVLink %g GB/s, NIC %g GB/s, "
                   "copy %g GB/s, quantisation %g GB/s\n",
                   "", num(up, "first_node"), str(up, "name"), str(up, "source"),
                   json_number_value(json_object_get(up, "hbm_gb")),
                   json_number_value(json_object_get(up, "nvlink_gbps")),
                   json_number_value(json_object_get(up, "nic_gbps")),
                   json_number_value(json_object_get(up, "memcpy_gbps")),
                   json_number_value(json_object_get(up, "quant_gbps")));
        if (show_overrides(d, err) < 0)
            printf("  (overrides: %s)\n", err->msg);
        const json_t *r = json_object_get(d, "relay");
        fmt_bytes(num(d, "staging_bytes"), a, sizeof(a));
        fmt_bytes(num(d, "chunk_bytes"), b, sizeof(b));
        printf("  %-10s staging %s a GPU and round, chunk %s, sources %s, relay %s fanout "
               "%lld depth %lld%s\n",
               "plan", a, b, str(d, "sources"),
               json_is_true(json_object_get(r, "ring")) ? "ring" : "no ring", num(r, "fanout"),
               num(r, "depth"),
               json_is_true(json_object_get(d, "allow_overcommit")) ? ", allow_overcommit" : "");
        if (show_strategies(json_object_get(d, "tensor_strategies"), err) < 0)
            printf("  (tensors: %s)\n", err->msg);
        const json_t *au = json_object_get(d, "auto");
        if (au)
            printf("  %-10s %s (%lld candidates predicted, %lld only bounded)\n", "auto",
                   str(au, "choice"), num(au, "evaluated"), num(au, "pruned"));
    }
    /* A summary (refit sim --store summary) says so where a replay would be tried. */
    if (v->summary)
        printf("  %-10s summary: no tensors, boxes or transfers; refit-exec cannot replay it "
               "(refit sim %s --store full stores them)\n",
               "stored", *v->scenario ? v->scenario : "SCENARIO");
    show_memory(v);
    fmt_bytes(v->payload_bytes, a, sizeof(a));
    if (v->has_prediction) {
        fmt_bytes(v->fabric_bytes, b, sizeof(b));
        fmt_bytes(v->nvlink_bytes, c, sizeof(c));
        printf("  %-10s %.6g s (bound %.6g s) on %s, bottleneck %s\n", "prediction", v->predicted_s,
               v->lower_bound_s, v->pred_cluster, *v->bottleneck ? v->bottleneck : "-");
        printf("  %-10s payload %s, fabric %s, NVLink %s, %lld rounds\n", "", a, b, c,
               (long long)v->rounds);
        if (v->has_step)
            show_step(v);
    } else {
        printf("  %-10s none (planned, not simulated); payload %s, %lld rounds\n", "prediction", a,
               (long long)v->rounds);
    }
    const struct rf_run_measurement *ok = rf_run_view_measured(v);
    if (v->n_meas == 0) {
        printf("  %-10s none\n", "measured");
        return;
    }
    printf("  %-10s %zu measurement%s", "measured", v->n_meas, v->n_meas == 1 ? "" : "s");
    /* A log's time is the step's (refit measure), a replay's the wire's. */
    if (ok && v->has_prediction)
        printf(" (the latest ok: %.6g s, %.3f x the %s)", ok->seconds,
               ok->seconds / (is_log(ok) && v->has_step ? v->step.total_s : v->predicted_s),
               is_log(ok) && v->has_step ? "predicted step" : "prediction");
    else if (ok)
        printf(" (the latest ok: %.6g s)", ok->seconds);
    printf("\n");
    for (size_t i = 0; i < v->n_meas; i++) {
        const struct rf_run_measurement *m = &v->meas[i];
        if (is_log(m)) {
            show_log(v, m);
            continue;
        }
        char t[96] = "no time";
        if (!isnan(m->seconds))
            snprintf(t, sizeof(t), "%.6g s (min %.6g, max %.6g)", m->seconds, m->seconds_min,
                     m->seconds_max);
        printf("    %lld  %s  %s, %s on %lld ranks, %lld iterations: %s; exec_config %s%s%s\n",
               (long long)m->id, m->created_at, m->status, m->backend, (long long)m->world_size,
               (long long)m->iters, t, *m->exec_config ? m->exec_config : "-",
               *m->error_text ? "; " : "", m->error_text);
    }
}

static json_t *real_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

/* The step as JSON: {seconds, composition, phases: [{part, phase, seconds, share, bytes,
 * calls, mechanism}]}, phases in the step's order. */
static json_t *step_json(const struct rf_step *s)
{
    json_t *phases = json_array();
    for (size_t i = 0; phases && i < s->n; i++) {
        const struct rf_step_phase *p = &s->phase[i];
        json_array_append_new(
            phases, json_pack("{ss ss sf so sI sI so}", "part", rf_step_part_name(p->part), "phase",
                              rf_step_phase_name(p->phase), "seconds", p->seconds, "share",
                              s->total_s > 0 ? json_real(p->seconds / s->total_s) : json_null(),
                              "bytes", (json_int_t)p->bytes, "calls", (json_int_t)p->calls,
                              "mechanism", rf_json_text(p->mechanism)));
    }
    return json_pack("{sf so so}", "seconds", s->total_s, "composition",
                     rf_json_text(s->composition), "phases", phases);
}

static json_t *show_json(const struct rf_run_view *v)
{
    json_t *meas = json_array();
    for (size_t i = 0; meas && i < v->n_meas; i++) {
        const struct rf_run_measurement *m = &v->meas[i];
        /* A log's phases by name (refit measure); none for a replay. */
        json_t *phases = json_object();
        for (int k = 0; phases && k < RF_STEP_PHASE_COUNT; k++)
            if (!isnan(m->phase_s[k]))
                json_object_set_new(phases, rf_step_phase_name((enum rf_step_phase_kind)k),
                                    json_real(m->phase_s[k]));
        json_array_append_new(
            meas, json_pack("{sI ss ss sI sI sI ss so so so sI sI ss* ss* so* so}", "id",
                            (json_int_t)m->id, "created_at", m->created_at, "backend", m->backend,
                            "world_size", (json_int_t)m->world_size, "iters", (json_int_t)m->iters,
                            "warmup", (json_int_t)m->warmup, "status", m->status, "seconds",
                            real_or_null(m->seconds), "seconds_min", real_or_null(m->seconds_min),
                            "seconds_max", real_or_null(m->seconds_max), "bytes_verified",
                            (json_int_t)m->bytes_verified, "errors", (json_int_t)m->errors,
                            "error_text", *m->error_text ? m->error_text : NULL, "exec_config",
                            *m->exec_config ? m->exec_config : NULL, "source",
                            *m->source ? rf_json_text(m->source) : NULL, "phases", phases));
    }
    json_t *o = json_pack(
        "{sI so* so so so so sb sO* sI sI sI sI sI so}", "run_id", (json_int_t)v->id, "label",
        v->has_label ? rf_json_text(v->label) : NULL, "created_at", rf_json_text(v->created_at),
        "scenario_path", rf_json_text(v->scenario), "model", rf_json_text(v->model), "strategy",
        rf_json_text(v->strategy), "scenario_stored", v->doc != NULL, "scenario", v->doc,
        "payload_bytes", (json_int_t)v->payload_bytes, "moved_bytes", (json_int_t)v->moved_bytes,
        "transfers", (json_int_t)v->transfers, "rounds", (json_int_t)v->rounds, "model_bytes",
        (json_int_t)v->model_bytes, "measurements", meas);
    if (!o)
        return NULL;
    json_object_set_new(o, "stored", json_string(v->summary ? "summary" : "full"));
    if (!v->doc)
        json_object_set_new(
            o, "run_row",
            json_pack("{so sI so so sI sI so so sI sI}", "cluster_system",
                      rf_json_text(v->cluster_system), "cluster_nodes",
                      (json_int_t)v->cluster_nodes, "train_layout", rf_json_text(v->train_layout),
                      "train_dtype", rf_json_text(v->train_dtype), "train_gpus",
                      (json_int_t)v->train_gpus, "train_first_gpu", (json_int_t)v->train_first_gpu,
                      "infer_layout", rf_json_text(v->infer_layout), "infer_dtype",
                      rf_json_text(v->infer_dtype), "infer_gpus", (json_int_t)v->infer_gpus,
                      "infer_first_gpu", (json_int_t)v->infer_first_gpu));
    json_object_set_new(o, "memory",
                        v->has_memory
                            ? json_pack("{so so sb}", "train", rf_memory_json(&v->mem_train),
                                        "infer", rf_memory_json(&v->mem_infer), "overcommitted",
                                        !(v->mem_train.fits && v->mem_infer.fits))
                            : json_null());
    json_object_set_new(
        o, "prediction",
        v->has_prediction
            ? json_pack("{so sf sf so* sI sI}", "cluster", rf_json_text(v->pred_cluster), "seconds",
                        v->predicted_s, "lower_bound_seconds", v->lower_bound_s, "bottleneck",
                        *v->bottleneck ? rf_json_text(v->bottleneck) : NULL, "nvlink_bytes",
                        (json_int_t)v->nvlink_bytes, "fabric_bytes", (json_int_t)v->fabric_bytes)
            : json_null());
    /* Only a run with a step has the key: a profile-free run's object is as before schema 8. */
    if (v->has_step)
        json_object_set_new(o, "step", step_json(&v->step));
    return o;
}

/* Prints doc canonically (exact reals, sorted keys) and a newline; steals it. */
static int print_canonical(json_t *doc, struct rf_error *err)
{
    char *text = doc ? rf_json_canonical(doc, 2) : NULL;
    json_decref(doc);
    if (!text)
        return rf_error_set(err, RF_ENOMEM, "cannot build the JSON output (out of memory)");
    int rc = puts(text) < 0 ? rf_error_set(err, RF_EIO, "cannot write the JSON output") : 0;
    free(text);
    return rc;
}

int cmd_show(int argc, char **argv)
{
    int64_t id;
    const char *db;
    bool json;
    int rc = parse_args(argc, argv, usage_show, 1, &id, &db, &json);
    if (rc >= 0)
        return rc;
    struct rf_store st;
    struct rf_run_view v;
    struct rf_error err = {0};
    if (rf_store_open(&st, db, RF_STORE_READONLY, &err) < 0)
        return cmd_fail(&err);
    rc = rf_run_view_load(&st, id, &v, &err);
    rf_store_close(&st);
    if (rc < 0)
        return cmd_fail(&err);
    if (json)
        rc = print_canonical(show_json(&v), &err);
    else
        show_text(&v, &err);
    rf_run_view_release(&v);
    return rc < 0 ? cmd_fail(&err) : 0;
}

/* ---- refit diff */

/* The leaves two runs are compared by: the description (less cluster_preset, which only
 * restates what cluster holds), or, when either run predates it, what both run rows say. */
static int diff_leaves(const struct rf_run_view *v, bool row, struct rf_json_leaf **out, size_t *n,
                       struct rf_error *err)
{
    static const char *const skip[] = {"cluster_preset", NULL};
    if (!row)
        return rf_json_leaves(v->doc, skip, out, n, err);
    json_t *r = json_pack(
        "{s{so so so so sI so so sI so so sI}}", "run", "source", rf_json_text(v->scenario),
        "model", rf_json_text(v->model), "strategy", rf_json_text(v->strategy), "cluster_system",
        rf_json_text(v->cluster_system), "cluster_nodes", (json_int_t)v->cluster_nodes,
        "train_layout", rf_json_text(v->train_layout), "train_dtype", rf_json_text(v->train_dtype),
        "train_gpus", (json_int_t)v->train_gpus, "infer_layout", rf_json_text(v->infer_layout),
        "infer_dtype", rf_json_text(v->infer_dtype), "infer_gpus", (json_int_t)v->infer_gpus);
    if (!r)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    int rc = rf_json_leaves(r, NULL, out, n, err);
    json_decref(r);
    return rc;
}

/* One figure of both runs; NAN where a run has none. */
struct figure {
    const char *name;
    double a, b;
    bool integer;
};

static void figure_of(const struct rf_run_view *v, int k, double *out)
{
    const struct rf_run_measurement *m = rf_run_view_measured(v);
    switch (k) {
    case 0: *out = (double)v->payload_bytes; break;
    case 1: *out = v->has_prediction ? v->predicted_s : NAN; break;
    case 2: *out = v->has_prediction ? v->lower_bound_s : NAN; break;
    case 3: *out = m ? m->seconds : NAN; break;
    case 4: *out = v->has_memory ? (double)v->mem_train.worst.total : NAN; break;
    case 5: *out = v->has_memory ? (double)v->mem_infer.worst.total : NAN; break;
    default: *out = v->has_memory ? (double)v->mem_infer.headroom_bytes : NAN; break;
    }
}

enum { N_FIGURES = 7 };
static const char *const figure_names[N_FIGURES] = {
    "payload_bytes",      "predicted_s",        "lower_bound_s",          "measured_s",
    "train_memory_bytes", "infer_memory_bytes", "infer_kv_headroom_bytes"};

static void fmt_figure(double v, bool integer, char *buf, size_t size)
{
    if (isnan(v))
        snprintf(buf, size, "-");
    else if (integer)
        snprintf(buf, size, "%.0f", v);
    else
        snprintf(buf, size, "%.6g", v);
}

/* The phases of both runs' steps matched by (part, phase): a's in its order, then those only
 * b has; a phase one run lacks is NAN there. */
struct phase_pair {
    enum rf_step_part part;
    enum rf_step_phase_kind phase;
    double a, b;
};

static size_t pair_phases(const struct rf_run_view *v, struct phase_pair *out)
{
    size_t n = 0;
    for (int k = 0; k < 2; k++) {
        const struct rf_step *s = &v[k].step;
        for (size_t i = 0; v[k].has_step && i < s->n; i++) {
            size_t j = 0;
            while (j < n && !(out[j].part == s->phase[i].part && out[j].phase == s->phase[i].phase))
                j++;
            if (j == n)
                out[n++] = (struct phase_pair){s->phase[i].part, s->phase[i].phase, NAN, NAN};
            *(k == 0 ? &out[j].a : &out[j].b) = s->phase[i].seconds;
        }
    }
    return n;
}

static void print_figure(const char *name, double a, double b, bool integer)
{
    char ta[40], tb[40], note[40] = "";
    fmt_figure(a, integer, ta, sizeof(ta));
    fmt_figure(b, integer, tb, sizeof(tb));
    if (strcmp(ta, tb) == 0)
        snprintf(note, sizeof(note), "  (same)");
    else if (a > 0 && b > 0)
        snprintf(note, sizeof(note), "  (x%.3f)", b / a);
    printf("  %-24s %s -> %s%s\n", name, ta, tb, note);
}

static json_t *json_value_of(const char *text)
{
    return text ? json_loads(text, JSON_DECODE_ANY, NULL) : json_null();
}

int cmd_diff(int argc, char **argv)
{
    int64_t id[2];
    const char *db;
    bool json;
    int rc = parse_args(argc, argv, usage_diff, 2, id, &db, &json);
    if (rc >= 0)
        return rc;
    struct rf_store st;
    struct rf_run_view v[2] = {0};
    struct rf_json_leaf *leaf[2] = {NULL, NULL};
    size_t nl[2] = {0, 0}, nc = 0;
    struct rf_json_change *ch = NULL;
    struct rf_error err = {0};
    if (rf_store_open(&st, db, RF_STORE_READONLY, &err) < 0)
        return cmd_fail(&err);
    rc = rf_run_view_load(&st, id[0], &v[0], &err);
    if (rc == 0 && (rc = rf_run_view_load(&st, id[1], &v[1], &err)) < 0)
        rf_run_view_release(&v[0]);
    rf_store_close(&st);
    if (rc < 0)
        return cmd_fail(&err);
    bool row = !v[0].doc || !v[1].doc;
    if ((rc = diff_leaves(&v[0], row, &leaf[0], &nl[0], &err)) < 0 ||
        (rc = diff_leaves(&v[1], row, &leaf[1], &nl[1], &err)) < 0 ||
        (rc = rf_json_diff(leaf[0], nl[0], leaf[1], nl[1], &ch, &nc, &err)) < 0)
        goto out;
    struct figure fig[N_FIGURES];
    for (int k = 0; k < N_FIGURES; k++) {
        fig[k].name = figure_names[k];
        fig[k].integer = strstr(figure_names[k], "bytes") != NULL;
        figure_of(&v[0], k, &fig[k].a);
        figure_of(&v[1], k, &fig[k].b);
    }
    /* The steps, only when either run has one: a profile-free pair diffs as before. */
    struct phase_pair pp[2 * RF_STEP_PHASES_MAX];
    size_t np = pair_phases(v, pp);
    bool has_step = v[0].has_step || v[1].has_step;
    double step_a = v[0].has_step ? v[0].step.total_s : NAN;
    double step_b = v[1].has_step ? v[1].step.total_s : NAN;
    if (json) {
        json_t *changes = json_array(), *figs = json_object();
        for (size_t i = 0; changes && i < nc; i++)
            json_array_append_new(changes,
                                  json_pack("{ss so so}", "path", ch[i].path, "a",
                                            json_value_of(ch[i].a), "b", json_value_of(ch[i].b)));
        for (int k = 0; figs && k < N_FIGURES; k++)
            json_object_set_new(
                figs, fig[k].name,
                json_pack("{so so}", "a", real_or_null(fig[k].a), "b", real_or_null(fig[k].b)));
        json_t *out =
            json_pack("{s[II] s[bb] sb so so}", "runs", (json_int_t)id[0], (json_int_t)id[1],
                      "scenario_stored", v[0].doc != NULL, v[1].doc != NULL, "run_rows_only", row,
                      "scenario", changes, "figures", figs);
        if (out && has_step) {
            json_t *phases = json_array();
            for (size_t i = 0; phases && i < np; i++)
                json_array_append_new(
                    phases, json_pack("{ss ss so so}", "part", rf_step_part_name(pp[i].part),
                                      "phase", rf_step_phase_name(pp[i].phase), "a",
                                      real_or_null(pp[i].a), "b", real_or_null(pp[i].b)));
            json_object_set_new(out, "step",
                                json_pack("{s{so so} so}", "seconds", "a", real_or_null(step_a),
                                          "b", real_or_null(step_b), "phases", phases));
        }
        rc = print_canonical(out, &err);
        goto out;
    }
    printf("run %lld -> run %lld\n", (long long)id[0], (long long)id[1]);
    for (int k = 0; k < 2; k++)
        if (!v[k].doc)
            printf("run %lld has no stored scenario (it predates schema 7): comparing what the run "
                   "rows say\n",
                   (long long)id[k]);
    printf("scenario: %zu difference%s\n", nc, nc == 1 ? "" : "s");
    for (size_t i = 0; i < nc; i++)
        printf("  %s: %s -> %s\n", ch[i].path, ch[i].a ? ch[i].a : "(none)",
               ch[i].b ? ch[i].b : "(none)");
    printf("figures:\n");
    for (int k = 0; k < N_FIGURES; k++)
        print_figure(fig[k].name, fig[k].a, fig[k].b, fig[k].integer);
    if (has_step) {
        printf("step:\n");
        print_figure("step_s", step_a, step_b, false);
        for (size_t i = 0; i < np; i++) {
            char name[40];
            snprintf(name, sizeof(name), "%s.%s_s", rf_step_part_name(pp[i].part),
                     rf_step_phase_name(pp[i].phase));
            print_figure(name, pp[i].a, pp[i].b, false);
        }
    }
out:
    free(ch);
    rf_json_leaves_free(leaf[0], nl[0]);
    rf_json_leaves_free(leaf[1], nl[1]);
    rf_run_view_release(&v[0]);
    rf_run_view_release(&v[1]);
    return rc < 0 ? cmd_fail(&err) : 0;
}
