/* Measurements (sim/store.h): what refit-exec measured, written as failed before the
 * replay starts and completed after it, so a job that dies midway leaves a failed row; and
 * a step's time read from a framework's log (refit measure), written whole or not at all. */
#include "store_int.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* Binds the columns every measurement statement shares, from parameter 1 on, in the order
 * of measurement_columns. */
static const char measurement_columns[] =
    "run_id, backend, world_size, iters, warmup, seconds, seconds_min, seconds_max,"
    " bytes_verified, errors, status, error_text, hosts, gpu_model, nccl_version, mpi_version,"
    " exec_config";
enum { MEASUREMENT_COLUMNS = 17 };

static void bind_seconds(sqlite3_stmt *q, int i, double v)
{
    if (v >= 0)
        sqlite3_bind_double(q, i, v);
    else
        sqlite3_bind_null(q, i);
}

static void bind_measurement(sqlite3_stmt *q, const struct rf_measurement *m)
{
    sqlite3_bind_int64(q, 1, m->run_id);
    rf_store_bind_text(q, 2, m->backend);
    sqlite3_bind_int64(q, 3, m->world_size);
    sqlite3_bind_int64(q, 4, m->iters);
    sqlite3_bind_int64(q, 5, m->warmup);
    bind_seconds(q, 6, m->seconds);
    bind_seconds(q, 7, m->seconds_min);
    bind_seconds(q, 8, m->seconds_max);
    sqlite3_bind_int64(q, 9, m->bytes_verified);
    sqlite3_bind_int64(q, 10, m->errors);
    rf_store_bind_text(q, 11, m->status);
    rf_store_bind_text(q, 12, m->error_text);
    rf_store_bind_text(q, 13, m->hosts);
    rf_store_bind_text(q, 14, m->gpu_model);
    rf_store_bind_text(q, 15, m->nccl_version);
    rf_store_bind_text(q, 16, m->mpi_version);
    rf_store_bind_text(q, 17, m->exec_config);
}

int rf_store_measurement_begin(struct rf_store *st, const struct rf_measurement *m, int64_t *id,
                               struct rf_error *err)
{
    char sql[512];
    sqlite3_stmt *q = NULL;
    int rc;
    snprintf(sql, sizeof(sql),
             "INSERT INTO measurement (%s) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
             measurement_columns);
    if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, "measurement");
    bind_measurement(q, m);
    /* One statement outside BEGIN is its own transaction. */
    if ((rc = rf_store_step(st, q, err, "measurement")) == 0)
        *id = sqlite3_last_insert_rowid(st->db);
    sqlite3_finalize(q);
    return rc;
}

int rf_store_measurement_finish(struct rf_store *st, int64_t id, const struct rf_measurement *m,
                                struct rf_error *err)
{
    char sql[512];
    sqlite3_stmt *up = NULL, *ins = NULL;
    bool in_tx = false;
    int rc;

    snprintf(sql, sizeof(sql),
             "UPDATE measurement SET (%s) = (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) WHERE id = ?",
             measurement_columns);
    if (sqlite3_prepare_v2(st->db, sql, -1, &up, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(st->db,
                           "INSERT OR REPLACE INTO measured_round (measurement_id, round, seconds)"
                           " VALUES (?,?,?)",
                           -1, &ins, NULL) != SQLITE_OK) {
        rc = rf_store_db_error(st, err, "measurement");
        goto out;
    }
    if ((rc = rf_store_exec(st, "BEGIN IMMEDIATE", err)) < 0)
        goto out;
    in_tx = true;
    bind_measurement(up, m);
    sqlite3_bind_int64(up, MEASUREMENT_COLUMNS + 1, id);
    if ((rc = rf_store_step(st, up, err, "measurement")) < 0)
        goto out;
    if (sqlite3_changes(st->db) != 1) {
        rc = rf_error_set(err, RF_EINVAL, "no measurement %lld in this database", (long long)id);
        goto out;
    }
    for (int32_t r = 0; m->round_seconds && r < m->n_rounds; r++) {
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int(ins, 2, r);
        sqlite3_bind_double(ins, 3, m->round_seconds[r]);
        if ((rc = rf_store_step(st, ins, err, "measured_round")) < 0)
            goto out;
    }
    if ((rc = rf_store_exec(st, "COMMIT", err)) < 0)
        goto out;
    in_tx = false;
out:
    if (in_tx)
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_finalize(up);
    sqlite3_finalize(ins);
    return rc;
}

/* The checks that need no database: the step's time, each phase's, no phase twice. */
static int check_log(const struct rf_log_measurement *m, struct rf_error *err)
{
    if (!(m->seconds >= RF_MEASURED_MIN_S && m->seconds <= RF_MEASURED_MAX_S))
        return rf_error_set(err, RF_EINVAL,
                            "seconds %g: the step's time must be from %g to %g s (a unit slip?)",
                            m->seconds, RF_MEASURED_MIN_S, RF_MEASURED_MAX_S);
    for (size_t i = 0; i < m->n_phases; i++) {
        const struct rf_log_phase *p = &m->phases[i];
        if (!(p->seconds == 0 ||
              (p->seconds >= RF_MEASURED_MIN_S && p->seconds <= RF_MEASURED_MAX_S)))
            return rf_error_set(err, RF_EINVAL, "phase %s: %g s: must be 0 or from %g to %g s",
                                p->phase, p->seconds, RF_MEASURED_MIN_S, RF_MEASURED_MAX_S);
        if (p->seconds > m->seconds)
            return rf_error_set(err, RF_EINVAL, "phase %s: %g s is more than the whole step's %g s",
                                p->phase, p->seconds, m->seconds);
        for (size_t j = 0; j < i; j++)
            if (strcmp(m->phases[j].phase, p->phase) == 0)
                return rf_error_set(err, RF_EINVAL, "phase %s given twice", p->phase);
    }
    return 0;
}

/* Whether run id exists (1, 0) and has a predicted step (*step); a negative code on error. */
static int log_run(struct rf_store *st, int64_t id, bool *step, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int rc;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT p.step_seconds IS NOT NULL FROM run r"
                           " LEFT JOIN prediction p ON p.run_id = r.id WHERE r.id = ?",
                           -1, &q, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, "run");
    sqlite3_bind_int64(q, 1, id);
    int s = sqlite3_step(q);
    if (s == SQLITE_ROW) {
        *step = sqlite3_column_int(q, 0) != 0;
        rc = 1;
    } else {
        rc = s == SQLITE_DONE ? 0 : rf_store_db_error(st, err, "run");
    }
    sqlite3_finalize(q);
    return rc;
}

int rf_store_log_measurement(struct rf_store *st, const struct rf_log_measurement *m, int64_t *id,
                             struct rf_error *err)
{
    sqlite3_stmt *ins = NULL, *ph = NULL;
    bool in_tx = false, step = false;
    int rc;

    if ((rc = check_log(m, err)) < 0)
        return rc;
    if (sqlite3_prepare_v2(st->db,
                           "INSERT INTO measurement (run_id, backend, world_size, iters, warmup,"
                           " seconds, bytes_verified, errors, status, source)"
                           " VALUES (?, 'log', 0, 1, 0, ?, 0, 0, 'ok', ?)",
                           -1, &ins, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(st->db,
                           "INSERT INTO measured_phase (measurement_id, phase, seconds)"
                           " VALUES (?, ?, ?)",
                           -1, &ph, NULL) != SQLITE_OK) {
        rc = rf_store_db_error(st, err, "measurement");
        goto out;
    }
    if ((rc = rf_store_exec(st, "BEGIN IMMEDIATE", err)) < 0)
        goto out;
    in_tx = true;
    if ((rc = log_run(st, m->run_id, &step, err)) <= 0) {
        if (rc == 0)
            rc = rf_error_set(err, RF_EINVAL, "%s: no run %lld", st->path, (long long)m->run_id);
        goto out;
    }
    if (m->n_phases > 0 && !step) {
        rc = rf_error_set(err, RF_EINVAL,
                          "%s: run %lld has no predicted step (refit sim under a framework "
                          "profile): its phases have nothing to be compared with",
                          st->path, (long long)m->run_id);
        goto out;
    }
    sqlite3_bind_int64(ins, 1, m->run_id);
    sqlite3_bind_double(ins, 2, m->seconds);
    rf_store_bind_text(ins, 3, m->source);
    if ((rc = rf_store_step(st, ins, err, "measurement")) < 0)
        goto out;
    int64_t mid = sqlite3_last_insert_rowid(st->db);
    for (size_t i = 0; i < m->n_phases; i++) {
        sqlite3_bind_int64(ph, 1, mid);
        rf_store_bind_text(ph, 2, m->phases[i].phase);
        sqlite3_bind_double(ph, 3, m->phases[i].seconds);
        if ((rc = rf_store_step(st, ph, err, "measured_phase")) < 0)
            goto out;
    }
    if ((rc = rf_store_exec(st, "COMMIT", err)) < 0)
        goto out;
    in_tx = false;
    *id = mid;
out:
    if (in_tx)
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_finalize(ins);
    sqlite3_finalize(ph);
    return rc;
}
