/* Reading one stored run for refit show and diff (sim/runview.h): a few SELECTs on a
 * read-only store, NULL columns of older schemas mapped to "not stored". */
#include "runview.h"

#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "describe.h"

static int db_fail(struct rf_store *st, const char *what, struct rf_error *err)
{
    return rf_error_set(err, RF_EDB, "%s: reading %s: %s", st->path, what, sqlite3_errmsg(st->db));
}

/* A text column as an owned string, "" for NULL; false when out of memory. */
static bool text(sqlite3_stmt *q, int col, char **out)
{
    const unsigned char *s = sqlite3_column_text(q, col);
    *out = strdup(s ? (const char *)s : "");
    return *out != NULL;
}

static double real_or_nan(sqlite3_stmt *q, int col)
{
    return sqlite3_column_type(q, col) == SQLITE_NULL ? NAN : sqlite3_column_double(q, col);
}

static int load_row(struct rf_store *st, int64_t id, struct rf_run_view *v, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT created_at, label, scenario, model, strategy, cluster_system,"
                           " train_layout, train_dtype, infer_layout, infer_dtype, cluster_nodes,"
                           " train_gpus, train_first_gpu, infer_gpus, infer_first_gpu,"
                           " model_params, model_bytes, payload_bytes, moved_bytes, transfers,"
                           " rounds, scenario_json, stored FROM run WHERE id = ?",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(st, "run", err);
    sqlite3_bind_int64(q, 1, id);
    int s = sqlite3_step(q);
    if (s != SQLITE_ROW) {
        rc = s == SQLITE_DONE
                 ? rf_error_set(err, RF_EINVAL, "no run %lld in %s", (long long)id, st->path)
                 : db_fail(st, "run", err);
        goto out;
    }
    char **texts[] = {&v->created_at,   &v->label,          &v->scenario,     &v->model,
                      &v->strategy,     &v->cluster_system, &v->train_layout, &v->train_dtype,
                      &v->infer_layout, &v->infer_dtype};
    for (int i = 0; i < 10; i++)
        if (!text(q, i, texts[i])) {
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
            goto out;
        }
    v->has_label = sqlite3_column_type(q, 1) != SQLITE_NULL;
    int64_t *ints[] = {&v->cluster_nodes, &v->train_gpus,      &v->train_first_gpu,
                       &v->infer_gpus,    &v->infer_first_gpu, &v->model_params,
                       &v->model_bytes,   &v->payload_bytes,   &v->moved_bytes,
                       &v->transfers};
    for (int i = 0; i < 10; i++)
        *ints[i] = sqlite3_column_int64(q, 10 + i);
    v->rounds = sqlite3_column_type(q, 20) == SQLITE_NULL ? -1 : sqlite3_column_int64(q, 20);
    v->summary = sqlite3_column_text(q, 22) &&
                 strcmp((const char *)sqlite3_column_text(q, 22), "summary") == 0;
    if (sqlite3_column_type(q, 21) != SQLITE_NULL) {
        struct rf_error perr;
        if (rf_describe_parse((const char *)sqlite3_column_text(q, 21), &v->doc, &perr) < 0)
            rc =
                rf_error_set(err, perr.code, "%s: run %lld: %s", st->path, (long long)id, perr.msg);
    }
out:
    sqlite3_finalize(q);
    return rc;
}

static int load_memory(struct rf_store *st, int64_t id, struct rf_run_view *v, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int s, seen = 0;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT side, gpu, stage, weights_bytes, grads_bytes, optimizer_bytes,"
                           " staging_bytes, total_bytes, hbm_bytes, budget_bytes, headroom_bytes,"
                           " fits FROM memory WHERE run_id = ?",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(st, "memory", err);
    sqlite3_bind_int64(q, 1, id);
    while ((s = sqlite3_step(q)) == SQLITE_ROW) {
        const char *side = (const char *)sqlite3_column_text(q, 0);
        bool train = side && strcmp(side, "train") == 0;
        struct rf_side_memory *m = train ? &v->mem_train : &v->mem_infer;
        struct rf_gpu_memory *g = &m->worst;
        int64_t *cols[] = {&g->gpu,          &g->stage,         &g->weights, &g->grads,
                           &g->optimizer,    &g->staging,       &g->total,   &m->hbm_bytes,
                           &m->budget_bytes, &m->headroom_bytes};
        for (int i = 0; i < 10; i++)
            *cols[i] = sqlite3_column_int64(q, 1 + i);
        m->fits = sqlite3_column_int(q, 11) != 0;
        seen |= train ? 1 : 2;
    }
    sqlite3_finalize(q);
    if (s != SQLITE_DONE)
        return db_fail(st, "memory", err);
    v->has_memory = seen == 3;
    return 0;
}

static int load_prediction(struct rf_store *st, int64_t id, struct rf_run_view *v,
                           struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT cluster, bottleneck, seconds, lower_bound_seconds, nvlink_bytes,"
                           " fabric_bytes, step_seconds, step_composition FROM prediction"
                           " WHERE run_id = ?",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(st, "prediction", err);
    sqlite3_bind_int64(q, 1, id);
    int s = sqlite3_step(q);
    if (s == SQLITE_ROW) {
        v->has_prediction = true;
        if (!text(q, 0, &v->pred_cluster) || !text(q, 1, &v->bottleneck))
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        v->predicted_s = sqlite3_column_double(q, 2);
        v->lower_bound_s = sqlite3_column_double(q, 3);
        v->nvlink_bytes = sqlite3_column_int64(q, 4);
        v->fabric_bytes = sqlite3_column_int64(q, 5);
        if (sqlite3_column_type(q, 6) != SQLITE_NULL) {
            const unsigned char *c = sqlite3_column_text(q, 7);
            v->has_step = true;
            v->step.total_s = sqlite3_column_double(q, 6);
            snprintf(v->step.composition, sizeof(v->step.composition), "%s",
                     c ? (const char *)c : "");
        }
    } else if (s != SQLITE_DONE) {
        rc = db_fail(st, "prediction", err);
    }
    sqlite3_finalize(q);
    return rc;
}

/* The step's phases, when the prediction has a step; a stored name this refit does not know
 * (a newer schema would have raised the version first) is refused, naming the row. */
static int load_step(struct rf_store *st, int64_t id, struct rf_run_view *v, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int rc = 0, s;
    if (!v->has_step)
        return 0;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT seq, part, phase, seconds, bytes, calls, mechanism FROM"
                           " predicted_step_phase WHERE run_id = ? ORDER BY seq",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(st, "predicted_step_phase", err);
    sqlite3_bind_int64(q, 1, id);
    while ((s = sqlite3_step(q)) == SQLITE_ROW) {
        int part = rf_step_part_parse((const char *)sqlite3_column_text(q, 1));
        int phase = rf_step_phase_parse((const char *)sqlite3_column_text(q, 2));
        if (v->step.n == RF_STEP_PHASES_MAX || part < 0 || phase < 0) {
            rc = rf_error_set(err, RF_EINVAL, "%s: run %lld: predicted_step_phase seq %lld: %s",
                              st->path, (long long)id, (long long)sqlite3_column_int64(q, 0),
                              part < 0 || phase < 0 ? "unknown part or phase"
                                                    : "more phases than a step holds");
            goto out;
        }
        struct rf_step_phase *ph = &v->step.phase[v->step.n++];
        const unsigned char *m = sqlite3_column_text(q, 6);
        ph->part = (enum rf_step_part)part;
        ph->phase = (enum rf_step_phase_kind)phase;
        ph->seconds = sqlite3_column_double(q, 3);
        ph->bytes = sqlite3_column_int64(q, 4);
        ph->calls = sqlite3_column_int64(q, 5);
        snprintf(ph->mechanism, sizeof(ph->mechanism), "%s", m ? (const char *)m : "");
    }
    if (s != SQLITE_DONE)
        rc = db_fail(st, "predicted_step_phase", err);
out:
    sqlite3_finalize(q);
    return rc;
}

/* The phases a log measurement printed (table measured_phase) into m->phase_s. */
static int load_measured_phases(struct rf_store *st, sqlite3_stmt *q, struct rf_run_measurement *m,
                                struct rf_error *err)
{
    int s;
    sqlite3_bind_int64(q, 1, m->id);
    while ((s = sqlite3_step(q)) == SQLITE_ROW) {
        int k = rf_step_phase_parse((const char *)sqlite3_column_text(q, 0));
        if (k >= 0)
            m->phase_s[k] = sqlite3_column_double(q, 1);
    }
    sqlite3_reset(q);
    return s == SQLITE_DONE ? 0 : db_fail(st, "measured_phase", err);
}

static int load_measurements(struct rf_store *st, int64_t id, struct rf_run_view *v,
                             struct rf_error *err)
{
    sqlite3_stmt *q = NULL, *qp = NULL;
    int rc = 0, s;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT id, world_size, iters, warmup, bytes_verified, errors, seconds,"
                           " seconds_min, seconds_max, created_at, backend, status, error_text,"
                           " exec_config, source FROM measurement WHERE run_id = ? ORDER BY id",
                           -1, &q, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(st->db,
                           "SELECT phase, seconds FROM measured_phase WHERE measurement_id = ?", -1,
                           &qp, NULL) != SQLITE_OK) {
        rc = db_fail(st, "measurement", err);
        goto out;
    }
    sqlite3_bind_int64(q, 1, id);
    /* The array holds at least its count: a capacity that low only makes it grow. */
    size_t cap = v->n_meas;
    while ((s = sqlite3_step(q)) == SQLITE_ROW) {
        if ((rc = RF_GROW(v->meas, cap, v->n_meas + 1, err)) < 0)
            goto out;
        struct rf_run_measurement *m = &v->meas[v->n_meas];
        memset(m, 0, sizeof(*m));
        v->n_meas++;
        int64_t *ints[] = {&m->id,     &m->world_size,     &m->iters,
                           &m->warmup, &m->bytes_verified, &m->errors};
        for (int i = 0; i < 6; i++)
            *ints[i] = sqlite3_column_int64(q, i);
        m->seconds = real_or_nan(q, 6);
        m->seconds_min = real_or_nan(q, 7);
        m->seconds_max = real_or_nan(q, 8);
        for (int k = 0; k < RF_STEP_PHASE_COUNT; k++)
            m->phase_s[k] = NAN;
        if (!text(q, 9, &m->created_at) || !text(q, 10, &m->backend) || !text(q, 11, &m->status) ||
            !text(q, 12, &m->error_text) || !text(q, 13, &m->exec_config) ||
            !text(q, 14, &m->source)) {
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
            goto out;
        }
        if ((rc = load_measured_phases(st, qp, m, err)) < 0)
            goto out;
    }
    if (s != SQLITE_DONE)
        rc = db_fail(st, "measurement", err);
out:
    sqlite3_finalize(q);
    sqlite3_finalize(qp);
    return rc;
}

int rf_run_view_load(struct rf_store *st, int64_t id, struct rf_run_view *v, struct rf_error *err)
{
    int rc;
    memset(v, 0, sizeof(*v));
    v->id = id;
    if ((rc = load_row(st, id, v, err)) < 0 || (rc = load_memory(st, id, v, err)) < 0 ||
        (rc = load_prediction(st, id, v, err)) < 0 || (rc = load_step(st, id, v, err)) < 0 ||
        (rc = load_measurements(st, id, v, err)) < 0)
        rf_run_view_release(v);
    return rc;
}

void rf_run_view_release(struct rf_run_view *v)
{
    if (!v)
        return;
    char *texts[] = {v->created_at,   v->label,          v->scenario,     v->model,
                     v->strategy,     v->cluster_system, v->train_layout, v->train_dtype,
                     v->infer_layout, v->infer_dtype,    v->pred_cluster, v->bottleneck};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        free(texts[i]);
    for (size_t i = 0; i < v->n_meas; i++) {
        struct rf_run_measurement *m = &v->meas[i];
        free(m->created_at);
        free(m->backend);
        free(m->status);
        free(m->error_text);
        free(m->exec_config);
        free(m->source);
    }
    free(v->meas);
    json_decref(v->doc);
    memset(v, 0, sizeof(*v));
}

const struct rf_run_measurement *rf_run_view_measured(const struct rf_run_view *v)
{
    for (size_t i = v->n_meas; i > 0; i--)
        if (strcmp(v->meas[i - 1].status, "ok") == 0 && !isnan(v->meas[i - 1].seconds))
            return &v->meas[i - 1];
    return NULL;
}
