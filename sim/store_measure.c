/* Measurements (sim/store.h): what refit-exec measured, written as failed before the
 * replay starts and completed after it, so a job that dies midway leaves a failed row. */
#include "store_int.h"

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
