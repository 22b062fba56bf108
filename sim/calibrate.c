/* Calibration: Nelder-Mead over the logarithms of the identifiable calibration knobs, with
 * bounds, minimising the squared relative errors of re-predicted runs against measurements:
 * refit-exec's replays against the wire, framework logs against the step. */
#include "calibrate.h"

#include <math.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "describe.h"
#include "fileio.h"
#include "framework.h"
#include "simulate.h"

/* A stored run once, with the measurements of it. */
struct cal_run {
    struct rf_stored_run run;
    /* The cluster it was predicted on, from its description (sim/describe.h): the
     * scenario's overrides, calibration, pxn (auto's choice included). Runs stored before
     * schema 7 have none and are simulated on the named cluster with their node count. */
    struct rf_cluster own;
    bool have_own;
    /* Its framework profile, from the description (fw.present false without one). */
    struct rf_framework fw;
    int64_t nodes;
    /* What its measurements compare with: the wire as refit-exec replays it (every
     * gather on the wire) and its rounds; the step under fw and its phases. */
    bool need_wire, need_step;
    double wire_s;
    double *rounds; /* predicted duration of each round, n_rounds entries */
    int32_t n_rounds;
    double step_s;
    double phase_s[RF_STEP_PHASE_COUNT]; /* each phase of the step, summed over its parts */
};

/* A measurement: the run it measured, its round times (a replay) or its phases (a log). */
struct cal_meas {
    size_t run;
    double *rounds;
    int32_t n_rounds;
    double phase_s[RF_STEP_PHASE_COUNT]; /* NAN where the log printed none */
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
    int tied[RF_CAL_PARAM_COUNT];
    int evaluations;
    const char *path; /* the database, which every error names */
};

static const char *const param_names[RF_CAL_PARAM_COUNT] = {
    "nvlink_efficiency",  "nic_efficiency",   "message_latency_us", "tensor_overhead_us",
    "bucket_overhead_us", "kernel_launch_us", "nccl_call_us",       "barrier_us",
    "loader_scan_us",     "reg_region_us",    "h2d_gbps",           "d2h_gbps"};

/* Bounds of each knob: efficiencies as the cluster schema allows them (0, 1]; fixed costs
 * from 1 ns to 1 s; rates from 1 MB/s to the schema's largest (RF_RATE_MAX_GBPS). */
static const double lower[RF_CAL_PARAM_COUNT] = {1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3,
                                                 1e-3, 1e-3, 1e-3, 1e-3, 1e-3, 1e-3};
static const double upper[RF_CAL_PARAM_COUNT] = {
    1, 1, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, RF_RATE_MAX_GBPS, RF_RATE_MAX_GBPS};

/* A rate or an efficiency (halved to see whether it matters), else a fixed cost (doubled). */
static bool is_rate(int p)
{
    return p <= RF_CAL_NIC_EFFICIENCY || p == RF_CAL_H2D_GBPS || p == RF_CAL_D2H_GBPS;
}

/* The order knobs are tried in when deciding which are identifiable: a knob that only
 * moves the predictions as earlier ones do is tied to them. The per-call constants come
 * before message_latency_us: on a broadcast's chain bucket_overhead_us and
 * message_latency_us add up, so no data of a broadcast step tells them apart, and the
 * per-call constants are what a framework's own log measures. */
static const int priority[RF_CAL_PARAM_COUNT] = {
    RF_CAL_NVLINK_EFFICIENCY,  RF_CAL_NIC_EFFICIENCY,   RF_CAL_TENSOR_OVERHEAD_US,
    RF_CAL_BUCKET_OVERHEAD_US, RF_CAL_KERNEL_LAUNCH_US, RF_CAL_NCCL_CALL_US,
    RF_CAL_BARRIER_US,         RF_CAL_LOADER_SCAN_US,   RF_CAL_REG_REGION_US,
    RF_CAL_H2D_GBPS,           RF_CAL_D2H_GBPS,         RF_CAL_MESSAGE_LATENCY_US};

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
    case RF_CAL_BUCKET_OVERHEAD_US: return &c->cal.bucket_overhead_us;
    case RF_CAL_KERNEL_LAUNCH_US: return &c->cal.kernel_launch_us;
    case RF_CAL_NCCL_CALL_US: return &c->cal.nccl_call_us;
    case RF_CAL_BARRIER_US: return &c->cal.barrier_us;
    case RF_CAL_LOADER_SCAN_US: return &c->cal.loader_scan_us;
    case RF_CAL_REG_REGION_US: return &c->cal.reg_region_us;
    case RF_CAL_H2D_GBPS: return &c->cal.h2d_gbps;
    default: return &c->cal.d2h_gbps;
    }
}

/* Predicts run r with the knobs of cluster c: on the cluster it was predicted on with c's
 * knobs in place of its own, or (stored before schema 7) on c with the run's node count.
 * The wire as refit-exec replays it (every gather on the wire), and under a profile the
 * step, whose wire leaves out the gathers the framework's export replaces. */
static int predict_run(const struct cal_ctx *x, struct cal_run *r, const struct rf_cluster *c,
                       struct rf_error *err)
{
    struct rf_cluster ci = *c;
    struct rf_topology topo = {0};
    struct rf_prediction pred = {0}, spred = {0};
    const struct rf_stored_run *s = &r->run;
    ci.nodes = r->nodes;
    if (r->have_own) {
        ci = r->own;
        for (int p = 0; p < RF_CAL_PARAM_COUNT; p++)
            *param_ref(&ci, p) = *param_ref((struct rf_cluster *)c, p);
    }
    int rc = rf_topology_init(&topo, &ci, err);
    if (rc == 0 && r->need_wire &&
        (rc = rf_simulate(&s->plan, &s->train, &s->infer, &topo, &x->sim, &pred, err)) == 0) {
        r->wire_s = pred.predicted_s;
        for (int32_t k = 0; k < r->n_rounds; k++)
            r->rounds[k] = k < pred.n_rounds ? pred.round_finish[k] - pred.round_start[k] : 0;
    }
    if (rc == 0 && r->need_step) {
        struct rf_sim_options o = x->sim;
        struct rf_step step;
        o.skip_gather = rf_framework_skips_gather(&r->fw);
        /* The replay's wire is the step's when the framework gathers point to point. */
        const struct rf_prediction *whole = &pred;
        if ((o.skip_gather || !r->need_wire) &&
            (rc = rf_simulate(&s->plan, &s->train, &s->infer, &topo, &o, &spred, err)) == 0)
            whole = &spred;
        if (rc == 0 && (rc = rf_step_predict(&s->plan, &s->train, &s->infer, &topo, &r->fw, &o,
                                             whole, &step, err)) == 0) {
            r->step_s = step.total_s;
            for (int k = 0; k < RF_STEP_PHASE_COUNT; k++)
                r->phase_s[k] = 0;
            for (size_t i = 0; i < step.n; i++)
                r->phase_s[step.phase[i].phase] += step.phase[i].seconds;
        }
    }
    rf_prediction_release(&spred);
    rf_prediction_release(&pred);
    rf_topology_release(&topo);
    return rc;
}

static int simulate_all(struct cal_ctx *x, const struct rf_cluster *c, struct rf_error *err)
{
    for (size_t i = 0; i < x->n_runs; i++) {
        int rc = predict_run(x, &x->runs[i], c, err);
        if (rc < 0) {
            char msg[sizeof(err->msg)];
            snprintf(msg, sizeof(msg), "%s", err->msg);
            return rf_error_set(err, rc, "%s: run %lld: %s", x->path, (long long)x->runs[i].run.id,
                                msg);
        }
    }
    return 0;
}

/* What point i is compared with: the step or the wire. */
static double point_predicted(const struct cal_ctx *x, size_t i)
{
    const struct cal_run *r = &x->runs[x->meas[i].run];
    return x->points[i].step ? r->step_s : r->wire_s;
}

/* The figures the fit compares, in a fixed order: per point its total, then its measured
 * rounds (a replay) or phases (a log); measured into meas when not NULL. Returns how many;
 * pred and meas may be NULL to count them. */
static size_t figures(const struct cal_ctx *x, double *pred, double *meas)
{
    size_t n = 0;
    for (size_t i = 0; i < x->n_points; i++) {
        const struct cal_run *r = &x->runs[x->meas[i].run];
        const struct cal_meas *m = &x->meas[i];
        if (pred)
            pred[n] = point_predicted(x, i);
        if (meas)
            meas[n] = x->points[i].measured_s;
        n++;
        for (int32_t k = 0; k < m->n_rounds && k < r->n_rounds; k++) {
            if (m->rounds[k] <= 0)
                continue;
            if (pred)
                pred[n] = r->rounds[k];
            if (meas)
                meas[n] = m->rounds[k];
            n++;
        }
        for (int k = 0; x->points[i].step && k < RF_STEP_PHASE_COUNT; k++) {
            if (!(m->phase_s[k] > 0))
                continue;
            if (pred)
                pred[n] = r->phase_s[k];
            if (meas)
                meas[n] = m->phase_s[k];
            n++;
        }
    }
    return n;
}

/* The objective: per measurement, the squared relative error of the total plus the mean
 * squared relative error of its rounds (a replay) or of the phases its log printed, so a run
 * with many rounds weighs as much as one with few. A phase of 0 s is stored, not fitted. */
static double objective(const struct cal_ctx *x)
{
    double sum = 0;
    for (size_t i = 0; i < x->n_points; i++) {
        const struct cal_run *r = &x->runs[x->meas[i].run];
        double e = (point_predicted(x, i) - x->points[i].measured_s) / x->points[i].measured_s;
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
        for (int k = 0; x->points[i].step && k < RF_STEP_PHASE_COUNT; k++) {
            if (!(m->phase_s[k] > 0))
                continue;
            double ep = (r->phase_s[k] - m->phase_s[k]) / m->phase_s[k];
            rs += ep * ep;
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
        double e = (point_predicted(x, i) - x->points[i].measured_s) / x->points[i].measured_s;
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

/* The cluster run r was predicted on and its framework profile, from its description. */
static int describe_run(struct rf_store *st, struct cal_run *r, struct rf_error *err)
{
    json_t *doc = NULL;
    int rc = rf_describe_parse(r->run.scenario_json, &doc, err);
    if (rc == 0 && (rc = rf_describe_cluster(doc, &r->own, err)) == 0)
        r->have_own = true;
    const json_t *fw = rc == 0 ? json_object_get(doc, "framework") : NULL;
    if (fw)
        rc = rf_framework_from_json(fw, &r->fw, err);
    json_decref(doc);
    if (rc < 0) {
        char msg[sizeof(err->msg)];
        snprintf(msg, sizeof(msg), "%s", err->msg);
        return rf_error_set(err, rc, "%s: run %lld: %s", st->path, (long long)r->run.id, msg);
    }
    return 0;
}

/* A run whose step a log measured: its plan as the step model reads it. The store keeps no
 * quantisation flag; a weight that travels as FP8 has its scale tensor in the plan, but an
 * engine that quantises on receipt gets BF16 and no scale, so which weights it quantises is
 * not in the file and its step cannot be re-predicted. */
static int prepare_step(struct rf_store *st, struct cal_run *r, struct rf_error *err)
{
    struct rf_plan *plan = &r->run.plan;
    if (r->run.infer.dtype != RF_DT_FP8)
        return 0;
    if (r->fw.broadcast && r->fw.quant != RF_FW_QUANT_SENDER)
        return rf_error_set(err, RF_ENOTSUP,
                            "%s: run %lld: an FP8 engine that quantises on receipt (%s, quantize "
                            "= %s): the database does not say which tensors it quantises, so its "
                            "step cannot be re-predicted for a log measurement",
                            st->path, (long long)r->run.id, r->fw.name,
                            rf_fw_quant_name(r->fw.quant));
    for (size_t i = 0; i < plan->n_tensors; i++)
        if (plan->tensors[i].scale_of >= 0 && (size_t)plan->tensors[i].scale_of < plan->n_tensors)
            plan->tensors[plan->tensors[i].scale_of].quant = true;
    return 0;
}

/* Reads the ok measurements of runs predicted on a cluster named `name` (under framework
 * `framework` when not NULL), with a replay's rounds and a log's phases. */
static int load_points(struct rf_store *st, struct cal_ctx *x, const char *name,
                       const char *framework, struct rf_error *err)
{
    sqlite3_stmt *q = NULL, *qr = NULL, *qp = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT m.run_id, m.id, m.seconds, p.nodes, m.backend = 'log'"
                           " FROM measurement m JOIN prediction p ON p.run_id = m.run_id"
                           " JOIN run r ON r.id = m.run_id"
                           " WHERE m.status = 'ok' AND m.seconds > 0 AND p.cluster = ?1"
                           " AND (?2 IS NULL OR (json_valid(r.scenario_json) AND"
                           " json_extract(r.scenario_json, '$.framework.name') = ?2))"
                           " ORDER BY m.run_id, m.id",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(st->db,
                           "SELECT round, seconds FROM measured_round"
                           " WHERE measurement_id = ? ORDER BY round",
                           -1, &qr, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(st->db,
                           "SELECT phase, seconds FROM measured_phase WHERE"
                           " measurement_id = ?",
                           -1, &qp, NULL) != SQLITE_OK) {
        rc = rf_error_set(err, RF_EDB, "%s: reading measurements: %s", st->path,
                          sqlite3_errmsg(st->db));
        goto out;
    }
    sqlite3_bind_text(q, 1, name, -1, SQLITE_TRANSIENT);
    if (framework)
        sqlite3_bind_text(q, 2, framework, -1, SQLITE_TRANSIENT);
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
        struct rf_cal_point *pt = &x->points[n];
        pt->run_id = run_id;
        pt->measurement_id = sqlite3_column_int64(q, 1);
        pt->measured_s = sqlite3_column_double(q, 2);
        pt->log = sqlite3_column_int(q, 4) != 0;
        /* A time no refit takes (a unit slip, or a row another tool wrote) would make the
         * fit's relative errors overflow: refused, naming it (refit measure refuses it too). */
        if (!(pt->measured_s >= RF_MEASURED_MIN_S && pt->measured_s <= RF_MEASURED_MAX_S)) {
            rc = rf_error_set(err, RF_EINVAL,
                              "%s: run %lld: measurement %lld: %g s is not a refit's time (refit "
                              "takes %g to %g s); remove it (DELETE FROM measurement WHERE id = "
                              "%lld) or calibrate on another database",
                              st->path, (long long)run_id, (long long)pt->measurement_id,
                              pt->measured_s, RF_MEASURED_MIN_S, RF_MEASURED_MAX_S,
                              (long long)pt->measurement_id);
            goto out;
        }
        for (int k = 0; k < RF_STEP_PHASE_COUNT; k++)
            pt->phase_measured[k] = pt->phase_before[k] = pt->phase_after[k] = NAN;
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
            if (r->run.scenario_json && (rc = describe_run(st, r, err)) < 0)
                goto out;
            r->n_rounds = r->run.plan.n_rounds;
            r->rounds = calloc((size_t)r->n_rounds + 1, sizeof(double));
            if (!r->rounds) {
                rc = rf_error_set(err, RF_ENOMEM, "out of memory");
                goto out;
            }
        }
        struct cal_meas *m = &x->meas[n];
        struct cal_run *r = &x->runs[x->n_runs - 1];
        m->run = x->n_runs - 1;
        for (int k = 0; k < RF_STEP_PHASE_COUNT; k++)
            m->phase_s[k] = NAN;
        /* A log under a profile measured the step; a replay, or a log of a profile-free
         * run, the wire. */
        pt->step = pt->log && r->fw.present;
        if (pt->step && !r->need_step && (rc = prepare_step(st, r, err)) < 0)
            goto out;
        r->need_step |= pt->step;
        r->need_wire |= !pt->step;
        int32_t R = r->n_rounds;
        m->rounds = calloc((size_t)R + 1, sizeof(double));
        if (!m->rounds) {
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
            goto out;
        }
        sqlite3_bind_int64(qr, 1, pt->measurement_id);
        while (sqlite3_step(qr) == SQLITE_ROW) {
            int64_t k = sqlite3_column_int64(qr, 0);
            if (k >= 0 && k < R) {
                m->rounds[k] = sqlite3_column_double(qr, 1);
                m->n_rounds = (int32_t)k + 1 > m->n_rounds ? (int32_t)k + 1 : m->n_rounds;
            }
        }
        sqlite3_reset(qr);
        for (int32_t k = 0; k < m->n_rounds; k++)
            pt->n_rounds += m->rounds[k] > 0;
        sqlite3_bind_int64(qp, 1, pt->measurement_id);
        while (sqlite3_step(qp) == SQLITE_ROW) {
            int k = rf_step_phase_parse((const char *)sqlite3_column_text(qp, 0));
            double v = sqlite3_column_double(qp, 1);
            if (k >= 0 && v != 0 && !(v >= RF_MEASURED_MIN_S && v <= RF_MEASURED_MAX_S)) {
                rc = rf_error_set(err, RF_EINVAL,
                                  "%s: run %lld: measurement %lld: phase %s: %g s is not a "
                                  "refit's time (refit takes 0 or %g to %g s)",
                                  st->path, (long long)run_id, (long long)pt->measurement_id,
                                  rf_step_phase_name((enum rf_step_phase_kind)k), v,
                                  RF_MEASURED_MIN_S, RF_MEASURED_MAX_S);
                sqlite3_reset(qp);
                goto out;
            }
            if (k >= 0)
                m->phase_s[k] = pt->phase_measured[k] = v;
        }
        sqlite3_reset(qp);
    }
    if (s != SQLITE_DONE)
        rc = rf_error_set(err, RF_EDB, "%s: reading measurements: %s", st->path,
                          sqlite3_errmsg(st->db));
out:
    sqlite3_finalize(q);
    sqlite3_finalize(qr);
    sqlite3_finalize(qp);
    return rc;
}

/* Which knobs the fit can identify. Each is changed in turn (a fixed cost doubled, or a zero
 * one set to 1 us; an efficiency or a rate halved) and its effect is the relative change of
 * every figure the fit compares (totals, rounds, phases). A knob whose effect is zero does not
 * matter to these runs; one whose effect is, to within 5%, a combination of the effects of
 * knobs already taken (in `priority` order) cannot be told apart from them and is tied to the
 * one whose effect it most resembles. Both are kept as given. */
static int find_params(struct cal_ctx *x, struct rf_error *err)
{
    size_t n = figures(x, NULL, NULL);
    double *ref = malloc((n + 1) * sizeof(double)), *cur = malloc((n + 1) * sizeof(double));
    double *eff = malloc((n + 1) * RF_CAL_PARAM_COUNT * sizeof(double));
    double *basis = malloc((n + 1) * RF_CAL_PARAM_COUNT * sizeof(double));
    int taken[RF_CAL_PARAM_COUNT], n_taken = 0, rc = 0;
    for (int p = 0; p < RF_CAL_PARAM_COUNT; p++)
        x->tied[p] = -1;
    if (!ref || !cur || !eff || !basis) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = simulate_all(x, &x->base, err)) < 0)
        goto out;
    figures(x, ref, NULL);
    for (int k = 0; k < RF_CAL_PARAM_COUNT; k++) {
        int p = priority[k];
        struct rf_cluster c = x->base;
        double *v = param_ref(&c, p);
        *v = is_rate(p) ? *v * 0.5 : *v > 0 ? *v * 2 : 1;
        if ((rc = simulate_all(x, &c, err)) < 0)
            goto out;
        figures(x, cur, NULL);
        double *d = &eff[(size_t)p * n], norm = 0, moved = 0;
        for (size_t i = 0; i < n; i++) {
            d[i] = ref[i] > 0 ? (cur[i] - ref[i]) / ref[i] : 0;
            norm += d[i] * d[i];
            moved = fmax(moved, fabs(d[i]));
        }
        if (moved <= 1e-6)
            continue;
        /* Its effect less its projection on the orthonormal basis of those taken. */
        double *b = &basis[(size_t)n_taken * n], rest = 0;
        memcpy(b, d, n * sizeof(double));
        for (int j = 0; j < n_taken; j++) {
            const double *e = &basis[(size_t)j * n];
            double dot = 0;
            for (size_t i = 0; i < n; i++)
                dot += b[i] * e[i];
            for (size_t i = 0; i < n; i++)
                b[i] -= dot * e[i];
        }
        for (size_t i = 0; i < n; i++)
            rest += b[i] * b[i];
        if (rest <= 0.05 * 0.05 * norm) {
            double best = -1;
            for (int j = 0; j < n_taken; j++) {
                const double *e = &eff[(size_t)taken[j] * n];
                double dot = 0, ne = 0;
                for (size_t i = 0; i < n; i++)
                    dot += d[i] * e[i], ne += e[i] * e[i];
                double cos = fabs(dot) / sqrt(ne * norm);
                if (cos > best)
                    best = cos, x->tied[p] = taken[j];
            }
            continue;
        }
        for (size_t i = 0; i < n; i++)
            b[i] /= sqrt(rest);
        taken[n_taken++] = p;
    }
    /* Fitted in the enum's order, as they are printed. */
    for (int p = 0; p < RF_CAL_PARAM_COUNT; p++)
        for (int j = 0; j < n_taken; j++)
            if (taken[j] == p)
                x->param[x->n_param++] = p;
out:
    free(ref);
    free(cur);
    free(eff);
    free(basis);
    return rc;
}

static void ctx_release(struct cal_ctx *x)
{
    for (size_t i = 0; i < x->n_runs; i++) {
        rf_stored_run_release(&x->runs[i].run);
        rf_cluster_release(&x->runs[i].own);
        rf_framework_release(&x->runs[i].fw);
        free(x->runs[i].rounds);
    }
    for (size_t i = 0; i < x->n_points; i++)
        free(x->meas[i].rounds);
    free(x->runs);
    free(x->meas);
}

/* Each point's prediction (and its phases') into before or after. */
static void record(struct cal_ctx *x, bool after)
{
    for (size_t i = 0; i < x->n_points; i++) {
        struct rf_cal_point *pt = &x->points[i];
        const struct cal_run *r = &x->runs[x->meas[i].run];
        *(after ? &pt->after_s : &pt->before_s) = point_predicted(x, i);
        for (int k = 0; pt->step && k < RF_STEP_PHASE_COUNT; k++)
            if (!isnan(pt->phase_measured[k]))
                (after ? pt->phase_after : pt->phase_before)[k] = r->phase_s[k];
    }
}

int rf_calibrate(struct rf_store *st, const struct rf_cluster *cluster,
                 const struct rf_sim_options *opts, const char *framework,
                 struct rf_calibration *out, struct rf_error *err)
{
    struct cal_ctx x = {.base = *cluster, .path = st->path};
    double tolerance;
    int rc;
    memset(out, 0, sizeof(*out));
    out->fitted = *cluster;
    /* A bad tolerance fails here, once, rather than as an infinite objective everywhere. */
    if ((rc = rf_sim_options_tolerance(opts, &tolerance, err)) < 0)
        goto out;
    x.sim = opts ? *opts : (struct rf_sim_options){0};
    x.sim.tolerance = tolerance;
    if ((rc = load_points(st, &x, cluster->name, framework, err)) < 0)
        goto out;
    if (x.n_points == 0) {
        if (framework)
            rc = rf_error_set(err, RF_EINVAL,
                              "%s: no usable measurement: no run predicted on cluster '%s' "
                              "under framework '%s' (refit sim) has an ok measurement "
                              "(refit-exec --check, or refit measure)",
                              st->path, cluster->name, framework);
        else
            rc = rf_error_set(err, RF_EINVAL,
                              "%s: no usable measurement: no run predicted on cluster '%s' "
                              "(refit sim) has an ok measurement (refit-exec --check, or refit "
                              "measure)",
                              st->path, cluster->name);
        goto out;
    }
    if ((rc = find_params(&x, err)) < 0)
        goto out;

    /* Before: the cluster as given. */
    if ((rc = simulate_all(&x, &x.base, err)) < 0)
        goto out;
    out->objective_before = objective(&x);
    out->rms_before = rms_total(&x);
    record(&x, false);
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
    record(&x, true);
    for (int j = 0; j < x.n_param; j++)
        out->used[x.param[j]] = true;
    for (int p = 0; p < RF_CAL_PARAM_COUNT; p++) {
        out->after[p] = *param_ref(&out->fitted, p);
        out->tied[p] = x.tied[p];
    }
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
