/* Calibration: Nelder-Mead over the logarithms of the identifiable calibration knobs, with
 * bounds, minimising the squared relative errors of re-simulated runs against measurements. */
#include "calibrate.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "describe.h"
#include "fileio.h"
#include "simulate.h"

/* A stored run once, with the measurements of it. */
struct cal_run {
    struct rf_stored_run run;
    /* The cluster it was predicted on, from its description (sim/describe.h): the
     * scenario's overrides, calibration, pxn (auto's choice included). Runs stored before
     * schema 7 have none and are simulated on the named cluster with their node count. */
    struct rf_cluster own;
    bool have_own;
    int64_t nodes;
    double predicted_s;
    double *rounds; /* predicted duration of each round, n_rounds entries */
    int32_t n_rounds;
};

/* A measurement: the run it measured and its round times. */
struct cal_meas {
    size_t run;
    double *rounds;
    int32_t n_rounds;
};

struct cal_ctx {
    struct rf_cluster base;
    struct rf_sim_options sim; /* every simulation of the fit runs with these */
    struct cal_run *runs;
    size_t n_runs;
    struct cal_meas *meas;
    struct rf_cal_point *points;
    size_t n_points;
    int param[RF_CAL_PARAM_COUNT]; /* fitted knobs, in order */
    int n_param;
    int evaluations;
};

static const char *const param_names[RF_CAL_PARAM_COUNT] = {
    "nvlink_efficiency", "nic_efficiency", "message_latency_us", "tensor_overhead_us",
    "bucket_overhead_us"};

/* Bounds of each knob: efficiencies as the cluster schema allows them (0, 1]; fixed costs
 * from 1 ns to 1 s. */
static const double lower[RF_CAL_PARAM_COUNT] = {1e-3, 1e-3, 1e-3, 1e-3, 1e-3};
static const double upper[RF_CAL_PARAM_COUNT] = {1, 1, 1e6, 1e6, 1e6};

const char *rf_cal_param_name(enum rf_cal_param p)
{
    return p < RF_CAL_PARAM_COUNT ? param_names[p] : "?";
}

static double *param_ref(struct rf_cluster *c, int p)
{
    switch (p) {
    case RF_CAL_NVLINK_EFFICIENCY: return &c->cal.nvlink_efficiency;
    case RF_CAL_NIC_EFFICIENCY: return &c->cal.nic_efficiency;
    case RF_CAL_MESSAGE_LATENCY_US: return &c->cal.message_latency_us;
    case RF_CAL_TENSOR_OVERHEAD_US: return &c->cal.tensor_overhead_us;
    default: return &c->cal.bucket_overhead_us;
    }
}

/* Simulates every run with the knobs of cluster c: on the cluster it was predicted on
 * with c's fitted knobs in place of its own, or (stored before schema 7) on c with the
 * run's node count. */
static int simulate_all(struct cal_ctx *x, const struct rf_cluster *c, struct rf_error *err)
{
    for (size_t i = 0; i < x->n_runs; i++) {
        struct cal_run *r = &x->runs[i];
        struct rf_cluster ci = *c;
        struct rf_topology topo = {0};
        struct rf_prediction pred = {0};
        ci.nodes = r->nodes;
        if (r->have_own) {
            ci = r->own;
            for (int p = 0; p < RF_CAL_PARAM_COUNT; p++)
                *param_ref(&ci, p) = *param_ref((struct rf_cluster *)c, p);
        }
        int rc = rf_topology_init(&topo, &ci, err);
        if (rc == 0)
            rc =
                rf_simulate(&r->run.plan, &r->run.train, &r->run.infer, &topo, &x->sim, &pred, err);
        if (rc == 0) {
            r->predicted_s = pred.predicted_s;
            for (int32_t k = 0; k < r->n_rounds; k++)
                r->rounds[k] = k < pred.n_rounds ? pred.round_finish[k] - pred.round_start[k] : 0;
        }
        rf_prediction_release(&pred);
        rf_topology_release(&topo);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* The objective: per measurement, the squared relative error of the total plus the mean
 * squared relative error of its rounds, so a run with many rounds weighs as much as one
 * with few. */
static double objective(const struct cal_ctx *x)
{
    double sum = 0;
    for (size_t i = 0; i < x->n_points; i++) {
        const struct cal_run *r = &x->runs[x->meas[i].run];
        double e = (r->predicted_s - x->points[i].measured_s) / x->points[i].measured_s;
        sum += e * e;
        const struct cal_meas *m = &x->meas[i];
        int32_t n = 0;
        double rs = 0;
        for (int32_t k = 0; k < m->n_rounds && k < r->n_rounds; k++) {
            if (m->rounds[k] <= 0)
                continue;
            double er = (r->rounds[k] - m->rounds[k]) / m->rounds[k];
            rs += er * er;
            n++;
        }
        if (n > 0)
            sum += rs / n;
    }
    return sum;
}

static double rms_total(const struct cal_ctx *x)
{
    double sum = 0;
    for (size_t i = 0; i < x->n_points; i++) {
        double e = (x->runs[x->meas[i].run].predicted_s - x->points[i].measured_s) /
                   x->points[i].measured_s;
        sum += e * e;
    }
    return sqrt(sum / (double)x->n_points);
}

/* Objective at log-parameters v (clamped to the bounds); a failed simulation is +inf. */
static double eval(struct cal_ctx *x, const double *v)
{
    struct rf_cluster c = x->base;
    struct rf_error err = {0};
    for (int j = 0; j < x->n_param; j++)
        *param_ref(&c, x->param[j]) = exp(v[j]);
    x->evaluations++;
    if (simulate_all(x, &c, &err) < 0)
        return INFINITY;
    return objective(x);
}

static void clamp(const struct cal_ctx *x, double *v)
{
    for (int j = 0; j < x->n_param; j++) {
        double lo = log(lower[x->param[j]]), hi = log(upper[x->param[j]]);
        v[j] = v[j] < lo ? lo : v[j] > hi ? hi : v[j];
    }
}

/* Nelder-Mead (reflection 1, expansion 2, contraction 1/2, shrink 1/2) from v with initial
 * steps of `step` in each log-parameter; v receives the best point. */
static double nelder_mead(struct cal_ctx *x, double *v, double step, int max_evals)
{
    int n = x->n_param;
    double s[RF_CAL_PARAM_COUNT + 1][RF_CAL_PARAM_COUNT], f[RF_CAL_PARAM_COUNT + 1];
    double c[RF_CAL_PARAM_COUNT], r[RF_CAL_PARAM_COUNT], e[RF_CAL_PARAM_COUNT];
    int start = x->evaluations;

    for (int i = 0; i <= n; i++) {
        memcpy(s[i], v, sizeof(double) * (size_t)n);
        if (i > 0) {
            double hi = log(upper[x->param[i - 1]]);
            /* Step down from a knob at its upper bound (an efficiency of 1). */
            s[i][i - 1] += s[i][i - 1] + step > hi ? -step : step;
        }
        clamp(x, s[i]);
        f[i] = eval(x, s[i]);
    }
    while (x->evaluations - start < max_evals) {
        /* Order: best first. */
        for (int i = 1; i <= n; i++)
            for (int k = i; k > 0 && f[k] < f[k - 1]; k--) {
                double t = f[k];
                f[k] = f[k - 1];
                f[k - 1] = t;
                for (int j = 0; j < n; j++) {
                    t = s[k][j];
                    s[k][j] = s[k - 1][j];
                    s[k - 1][j] = t;
                }
            }
        double size = 0;
        for (int i = 1; i <= n; i++)
            for (int j = 0; j < n; j++)
                size = fmax(size, fabs(s[i][j] - s[0][j]));
        if (size < 1e-5 || f[n] - f[0] < 1e-12 * (1 + f[0]))
            break;
        for (int j = 0; j < n; j++) {
            c[j] = 0;
            for (int i = 0; i < n; i++)
                c[j] += s[i][j] / n;
            r[j] = c[j] + (c[j] - s[n][j]);
        }
        clamp(x, r);
        double fr = eval(x, r);
        if (fr < f[0]) {
            for (int j = 0; j < n; j++)
                e[j] = c[j] + 2 * (c[j] - s[n][j]);
            clamp(x, e);
            double fe = eval(x, e);
            bool take_e = fe < fr;
            memcpy(s[n], take_e ? e : r, sizeof(double) * (size_t)n);
            f[n] = take_e ? fe : fr;
        } else if (fr < f[n - 1]) {
            memcpy(s[n], r, sizeof(double) * (size_t)n);
            f[n] = fr;
        } else {
            bool outside = fr < f[n];
            for (int j = 0; j < n; j++)
                e[j] = outside ? c[j] + 0.5 * (r[j] - c[j]) : c[j] + 0.5 * (s[n][j] - c[j]);
            double fc = eval(x, e);
            if (fc < (outside ? fr : f[n])) {
                memcpy(s[n], e, sizeof(double) * (size_t)n);
                f[n] = fc;
            } else {
                for (int i = 1; i <= n; i++) {
                    for (int j = 0; j < n; j++)
                        s[i][j] = s[0][j] + 0.5 * (s[i][j] - s[0][j]);
                    f[i] = eval(x, s[i]);
                }
            }
        }
    }
    int best = 0;
    for (int i = 1; i <= n; i++)
        if (f[i] < f[best])
            best = i;
    memcpy(v, s[best], sizeof(double) * (size_t)n);
    return f[best];
}

/* The cluster run r was predicted on, from its description. */
static int own_cluster(struct rf_store *st, struct cal_run *r, struct rf_error *err)
{
    json_t *doc = NULL;
    int rc = rf_describe_parse(r->run.scenario_json, &doc, err);
    if (rc == 0)
        rc = rf_describe_cluster(doc, &r->own, err);
    json_decref(doc);
    if (rc < 0) {
        char msg[sizeof(err->msg)];
        snprintf(msg, sizeof(msg), "%s", err->msg);
        return rf_error_set(err, rc, "%s: run %lld: %s", st->path, (long long)r->run.id, msg);
    }
    r->have_own = true;
    return 0;
}

/* Reads the ok measurements of runs predicted on a cluster named `name`. */
static int load_points(struct rf_store *st, struct cal_ctx *x, const char *name,
                       struct rf_error *err)
{
    sqlite3_stmt *q = NULL, *qr = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT m.run_id, m.id, m.seconds, p.nodes FROM measurement m"
                           " JOIN prediction p ON p.run_id = m.run_id"
                           " WHERE m.status = 'ok' AND m.seconds > 0 AND p.cluster = ?"
                           " ORDER BY m.run_id, m.id",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(st->db,
                           "SELECT round, seconds FROM measured_round"
                           " WHERE measurement_id = ? ORDER BY round",
                           -1, &qr, NULL) != SQLITE_OK) {
        rc = rf_error_set(err, RF_EDB, "%s: reading measurements: %s", st->path,
                          sqlite3_errmsg(st->db));
        goto out;
    }
    sqlite3_bind_text(q, 1, name, -1, SQLITE_TRANSIENT);
    /* The arrays hold at least their counts: a capacity that low only makes them grow. */
    size_t cap_points = x->n_points, cap_meas = x->n_points, cap_runs = x->n_runs;
    int s;
    while ((s = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t run_id = sqlite3_column_int64(q, 0);
        size_t n = x->n_points;
        if ((rc = RF_GROW(x->points, cap_points, n + 1, err)) < 0 ||
            (rc = RF_GROW(x->meas, cap_meas, n + 1, err)) < 0)
            goto out;
        memset(&x->points[n], 0, sizeof(x->points[n]));
        memset(&x->meas[n], 0, sizeof(x->meas[n]));
        x->n_points++;
        x->points[n].run_id = run_id;
        x->points[n].measurement_id = sqlite3_column_int64(q, 1);
        x->points[n].measured_s = sqlite3_column_double(q, 2);
        /* Rows come ordered by run: a new run id starts a new run. */
        if (x->n_runs == 0 || x->runs[x->n_runs - 1].run.id != run_id) {
            if ((rc = RF_GROW(x->runs, cap_runs, x->n_runs + 1, err)) < 0)
                goto out;
            struct cal_run *r = &x->runs[x->n_runs];
            memset(r, 0, sizeof(*r));
            r->nodes = sqlite3_column_int64(q, 3);
            if ((rc = rf_store_load_run(st, run_id, &r->run, err)) < 0) {
                rf_stored_run_release(&r->run);
                goto out;
            }
            x->n_runs++;
            if (r->run.scenario_json && (rc = own_cluster(st, r, err)) < 0)
                goto out;
            r->n_rounds = r->run.plan.n_rounds;
            r->rounds = calloc((size_t)r->n_rounds + 1, sizeof(double));
            if (!r->rounds) {
                rc = rf_error_set(err, RF_ENOMEM, "out of memory");
                goto out;
            }
        }
        struct cal_meas *m = &x->meas[n];
        m->run = x->n_runs - 1;
        int32_t R = x->runs[m->run].n_rounds;
        m->rounds = calloc((size_t)R + 1, sizeof(double));
        if (!m->rounds) {
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
            goto out;
        }
        sqlite3_bind_int64(qr, 1, x->points[n].measurement_id);
        while (sqlite3_step(qr) == SQLITE_ROW) {
            int64_t k = sqlite3_column_int64(qr, 0);
            if (k >= 0 && k < R) {
                m->rounds[k] = sqlite3_column_double(qr, 1);
                m->n_rounds = (int32_t)k + 1 > m->n_rounds ? (int32_t)k + 1 : m->n_rounds;
            }
        }
        sqlite3_reset(qr);
        for (int32_t k = 0; k < m->n_rounds; k++)
            x->points[n].n_rounds += m->rounds[k] > 0;
    }
    if (s != SQLITE_DONE)
        rc = rf_error_set(err, RF_EDB, "%s: reading measurements: %s", st->path,
                          sqlite3_errmsg(st->db));
out:
    sqlite3_finalize(q);
    sqlite3_finalize(qr);
    return rc;
}

/* A knob is identifiable when changing it moves some run's predicted time: doubling a
 * fixed cost (or setting a zero one to 1 us), halving an efficiency. */
static int find_params(struct cal_ctx *x, struct rf_error *err)
{
    double *ref = malloc((x->n_runs + 1) * sizeof(double));
    if (!ref)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    int rc = simulate_all(x, &x->base, err);
    for (size_t i = 0; rc == 0 && i < x->n_runs; i++)
        ref[i] = x->runs[i].predicted_s;
    for (int p = 0; rc == 0 && p < RF_CAL_PARAM_COUNT; p++) {
        struct rf_cluster c = x->base;
        double *v = param_ref(&c, p);
        *v = p <= RF_CAL_NIC_EFFICIENCY ? *v * 0.5 : *v > 0 ? *v * 2 : 1;
        if ((rc = simulate_all(x, &c, err)) < 0)
            break;
        for (size_t i = 0; i < x->n_runs; i++)
            if (fabs(x->runs[i].predicted_s - ref[i]) > 1e-6 * ref[i]) {
                x->param[x->n_param++] = p;
                break;
            }
    }
    free(ref);
    return rc;
}

static void ctx_release(struct cal_ctx *x)
{
    for (size_t i = 0; i < x->n_runs; i++) {
        rf_stored_run_release(&x->runs[i].run);
        rf_cluster_release(&x->runs[i].own);
        free(x->runs[i].rounds);
    }
    for (size_t i = 0; i < x->n_points; i++)
        free(x->meas[i].rounds);
    free(x->runs);
    free(x->meas);
}

int rf_calibrate(struct rf_store *st, const struct rf_cluster *cluster,
                 const struct rf_sim_options *opts, struct rf_calibration *out,
                 struct rf_error *err)
{
    struct cal_ctx x = {.base = *cluster};
    double tolerance;
    int rc;
    memset(out, 0, sizeof(*out));
    out->fitted = *cluster;
    /* A bad tolerance fails here, once, rather than as an infinite objective everywhere. */
    if ((rc = rf_sim_options_tolerance(opts, &tolerance, err)) < 0)
        goto out;
    x.sim = opts ? *opts : (struct rf_sim_options){0};
    x.sim.tolerance = tolerance;
    if ((rc = load_points(st, &x, cluster->name, err)) < 0)
        goto out;
    if (x.n_points == 0) {
        rc = rf_error_set(err, RF_EINVAL,
                          "no usable measurement: no run predicted on cluster '%s' (refit sim)"
                          " has an ok measurement (refit-exec --check)",
                          cluster->name);
        goto out;
    }
    if ((rc = find_params(&x, err)) < 0)
        goto out;

    /* Before: the cluster as given. */
    if ((rc = simulate_all(&x, &x.base, err)) < 0)
        goto out;
    out->objective_before = objective(&x);
    out->rms_before = rms_total(&x);
    for (size_t i = 0; i < x.n_points; i++)
        x.points[i].before_s = x.runs[x.meas[i].run].predicted_s;
    for (int p = 0; p < RF_CAL_PARAM_COUNT; p++)
        out->before[p] = out->after[p] = *param_ref(&x.base, p);

    /* Fit from the given values (a zero cost starts at 0.1 us), then restart once from the
     * best point, Nelder-Mead's usual guard against a collapsed simplex. */
    double v[RF_CAL_PARAM_COUNT];
    for (int j = 0; j < x.n_param; j++) {
        double b = *param_ref(&x.base, x.param[j]);
        v[j] = log(b > 0 ? b : 0.1);
    }
    clamp(&x, v);
    double fbest = x.n_param > 0 ? nelder_mead(&x, v, log(2.0), 600) : out->objective_before;
    if (x.n_param > 0)
        fbest = nelder_mead(&x, v, 0.5, 400);
    /* Keep the given values unless the fit improves on them. */
    if (fbest < out->objective_before) {
        for (int j = 0; j < x.n_param; j++)
            *param_ref(&out->fitted, x.param[j]) = exp(v[j]);
    }
    if ((rc = simulate_all(&x, &out->fitted, err)) < 0)
        goto out;
    out->objective_after = objective(&x);
    out->rms_after = rms_total(&x);
    for (size_t i = 0; i < x.n_points; i++)
        x.points[i].after_s = x.runs[x.meas[i].run].predicted_s;
    for (int j = 0; j < x.n_param; j++)
        out->used[x.param[j]] = true;
    for (int p = 0; p < RF_CAL_PARAM_COUNT; p++)
        out->after[p] = *param_ref(&out->fitted, p);
    out->evaluations = x.evaluations;
    out->points = x.points;
    out->n_points = x.n_points;
    x.points = NULL;
out:
    free(x.points);
    ctx_release(&x);
    return rc;
}

void rf_calibration_release(struct rf_calibration *cal)
{
    free(cal->points);
    cal->points = NULL;
    cal->n_points = 0;
}

/* A string as a Lua literal, the way string.format("%q") quotes it, except that a newline
 * becomes \n rather than a backslash and a line break: the result is always one line, so it
 * is safe inside a `--` comment too. Bytes from 0x80 up pass as they are (Lua strings are
 * bytes); every other control byte is a three-digit decimal escape, which no following digit
 * can extend. */
static void put_lua_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\r')
            fputs("\\r", f);
        else if (*p < 0x20 || *p == 0x7f)
            fprintf(f, "\\%03d", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* A number that reads back as exactly the same double: the shortest of 15, 16 and 17
 * significant digits that round-trips (17 always does), so that 0.96 stays 0.96. A
 * prediction from the written file is then calibrate's own, to the last bit. */
static void put_num(FILE *f, double v)
{
    char buf[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof(buf), "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, f);
}

/* "key = value," lines of the file. */
static void put_field(FILE *f, const char *indent, const char *key, double v)
{
    fprintf(f, "%s%s = ", indent, key);
    put_num(f, v);
    fputs(",\n", f);
}

int rf_calibration_write(const struct rf_calibration *cal, const char *name, const char *when,
                         FILE *f, struct rf_error *err)
{
    const struct rf_cluster *c = &cal->fitted;
    /* Every number must read back as written: inf or nan would be read as Lua globals. */
    for (size_t i = 0; i < rf_cluster_n_fields; i++) {
        const struct rf_cluster_field *fl = &rf_cluster_fields[i];
        if (fl->integer)
            continue;
        double v = *(const double *)((const char *)c + fl->offset);
        if (!isfinite(v))
            return rf_error_set(err, RF_EINVAL,
                                "the calibrated cluster has a figure that is not finite (%g)", v);
    }
    /* Strings from the user (names, paths) are quoted wherever they appear, comments
     * included: a newline in a name must not end the comment and start code. */
    fputs("-- Cluster ", f);
    put_lua_string(f, name);
    fputs(": cluster ", f);
    put_lua_string(f, c->name);
    fprintf(f, " calibrated by `refit calibrate` on %s.\n", when);
    fprintf(f, "-- Fitted to %zu measurement(s) (least squares on relative errors) of run(s)",
            cal->n_points);
    for (size_t i = 0; i < cal->n_points; i++)
        if (i == 0 || cal->points[i].run_id != cal->points[i - 1].run_id)
            fprintf(f, " %lld", (long long)cal->points[i].run_id);
    fprintf(f, ";\n-- RMS relative error %.4g before, %.4g after. Fitted:", cal->rms_before,
            cal->rms_after);
    for (int p = 0; p < RF_CAL_PARAM_COUNT; p++)
        if (cal->used[p])
            fprintf(f, " %s", param_names[p]);
    fputs(".\n-- Every other figure is the original's (", f);
    put_lua_string(f, c->source ? c->source : "?");
    fputs(").\n", f);
    fprintf(f, "return cluster.system{\n");
    fputs("    name = ", f);
    put_lua_string(f, name);
    fputs(",\n", f);
    fprintf(f, "    nodes = %lld,\n", (long long)c->nodes);
    fprintf(f, "    gpus_per_node = %lld,\n", (long long)c->gpus_per_node);
    put_field(f, "    ", "hbm_gb", c->hbm_gb);
    fprintf(f, "    nvlink = { domain_gpus = %lld, gbps = ", (long long)c->nvlink.domain_gpus);
    put_num(f, c->nvlink.gbps);
    fputs(", latency_us = ", f);
    put_num(f, c->nvlink.latency_us);
    fprintf(f, " },\n    nic = { per_node = %lld, gbps = ", (long long)c->nic.per_node);
    put_num(f, c->nic.gbps);
    fputs(", latency_us = ", f);
    put_num(f, c->nic.latency_us);
    fputs(" },\n    pcie = { gbps = ", f);
    put_num(f, c->pcie_gbps);
    fprintf(f, " },\n    fabric = { nodes_per_leaf = %lld, oversubscription = ",
            (long long)c->fabric.nodes_per_leaf);
    put_num(f, c->fabric.oversubscription);
    fputs(", switch_latency_us = ", f);
    put_num(f, c->fabric.switch_latency_us);
    fprintf(f, ", pxn = %s },\n", c->fabric.pxn ? "true" : "false");
    const char *in = "        ";
    fprintf(f, "    calibration = {\n");
    put_field(f, in, "nvlink_efficiency", c->cal.nvlink_efficiency);
    put_field(f, in, "nic_efficiency", c->cal.nic_efficiency);
    put_field(f, in, "message_latency_us", c->cal.message_latency_us);
    fprintf(f, "%snvl_channels_per_peer = %lld,\n", in, (long long)c->cal.nvl_channels_per_peer);
    if (c->cal.net_channels_per_peer > 0)
        fprintf(f, "%snet_channels_per_peer = %lld,\n", in,
                (long long)c->cal.net_channels_per_peer);
    fprintf(f, "%sp2p_channels = %lld,\n", in, (long long)c->cal.p2p_channels);
    put_field(f, in, "channel_gbps", c->cal.channel_gbps);
    fprintf(f, "%snvl_chunk_kib = %lld,\n", in, (long long)c->cal.nvl_chunk_kib);
    fprintf(f, "%snet_chunk_kib = %lld,\n", in, (long long)c->cal.net_chunk_kib);
    put_field(f, in, "memcpy_gbps", c->cal.memcpy_gbps);
    put_field(f, in, "quant_gbps", c->cal.quant_gbps);
    put_field(f, in, "tensor_overhead_us", c->cal.tensor_overhead_us);
    put_field(f, in, "bucket_overhead_us", c->cal.bucket_overhead_us);
    fprintf(f, "%sstreams = %lld,\n", in, (long long)c->cal.streams);
    put_field(f, in, "kernel_launch_us", c->cal.kernel_launch_us);
    put_field(f, in, "nccl_call_us", c->cal.nccl_call_us);
    put_field(f, in, "barrier_us", c->cal.barrier_us);
    put_field(f, in, "h2d_gbps", c->cal.h2d_gbps);
    put_field(f, in, "d2h_gbps", c->cal.d2h_gbps);
    put_field(f, in, "reg_region_us", c->cal.reg_region_us);
    put_field(f, in, "loader_scan_us", c->cal.loader_scan_us);
    fprintf(f, "    },\n}\n");
    if (ferror(f))
        return rf_error_set(err, RF_EIO, "writing the calibrated cluster failed");
    return 0;
}

int rf_calibration_save(const struct rf_calibration *cal, const char *name, const char *when,
                        const char *path, struct rf_error *err)
{
    char *buf = NULL;
    size_t len = 0;
    int rc;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    rc = rf_calibration_write(cal, name, when, f, err);
    if (fclose(f) != 0 && rc == 0)
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
    if (rc == 0)
        rc = rf_write_file_atomic(path, buf, len, err);
    free(buf);
    return rc;
}
