/* A distributed study's shard databases (sim/cmd_run_dist.c): each rank stores the runs of
 * its points in a database of its own, with a row per point (its fingerprint, its result
 * and the runs it stored); rank 0 copies a point's runs into the user's database in study
 * order, each in one transaction, as a serial study stores them. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "store_int.h"

/* The points' table lives only in a shard: the user's database never holds it. */
int rf_store_point_save(struct rf_store *st, int64_t k, const char *fp, const char *result,
                        const int64_t *runs, size_t n_runs, struct rf_error *err)
{
    int rc = rf_store_exec(st,
                           "CREATE TABLE IF NOT EXISTS refit_point (k INTEGER PRIMARY KEY,"
                           " fp TEXT NOT NULL, result TEXT NOT NULL, runs TEXT NOT NULL)",
                           err);
    if (rc < 0)
        return rc;
    /* The run ids as text, "3,4,5": a point stores a few (refit.search's top rows). */
    size_t cap = n_runs * 21 + 1, len = 0;
    char *ids = malloc(cap);
    if (!ids)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    ids[0] = '\0';
    for (size_t i = 0; i < n_runs; i++)
        len += (size_t)snprintf(ids + len, cap - len, "%s%lld", i ? "," : "", (long long)runs[i]);
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(st->db,
                           "INSERT INTO refit_point (k, fp, result, runs) VALUES (?, ?, ?, ?)", -1,
                           &q, NULL) != SQLITE_OK) {
        free(ids);
        return rf_store_db_error(st, err, "refit_point");
    }
    sqlite3_bind_int64(q, 1, k);
    rf_store_bind_text(q, 2, fp);
    rf_store_bind_text(q, 3, result);
    rf_store_bind_text(q, 4, ids);
    rc = rf_store_step(st, q, err, "refit_point");
    sqlite3_finalize(q);
    free(ids);
    return rc;
}

int rf_store_attach(struct rf_store *st, const char *path, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(st->db, "ATTACH ? AS shard", -1, &q, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, "attach");
    rf_store_bind_text(q, 1, path);
    int rc = rf_store_step(st, q, err, "attach");
    sqlite3_finalize(q);
    return rc;
}

void rf_store_detach(struct rf_store *st)
{
    sqlite3_exec(st->db, "DETACH shard", NULL, NULL, NULL);
}

int rf_store_point_take(struct rf_store *st, int64_t k, const char *fp, char **result,
                        int64_t **runs, size_t *n_runs, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    *result = NULL;
    *runs = NULL;
    *n_runs = 0;
    /* A shard whose rank computed nothing has no table: no point of it is found. */
    if (sqlite3_prepare_v2(st->db,
                           "SELECT result, runs FROM shard.refit_point WHERE k = ? AND fp = ?", -1,
                           &q, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_int64(q, 1, k);
    rf_store_bind_text(q, 2, fp);
    int rc = 0, step = sqlite3_step(q);
    if (step == SQLITE_ROW) {
        const char *text = (const char *)sqlite3_column_text(q, 0);
        const char *ids = (const char *)sqlite3_column_text(q, 1);
        size_t cap = 0;
        *result = strdup(text ? text : "");
        if (!*result)
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        for (const char *p = ids; rc == 0 && p && *p;) {
            char *end;
            long long id = strtoll(p, &end, 10);
            if (end == p)
                break;
            if ((rc = RF_GROW(*runs, cap, *n_runs + 1, err)) < 0)
                break;
            (*runs)[(*n_runs)++] = id;
            p = *end == ',' ? end + 1 : end;
        }
        if (rc == 0)
            rc = 1;
    } else if (step != SQLITE_DONE) {
        rc = rf_store_db_error(st, err, "refit_point");
    }
    sqlite3_finalize(q);
    if (rc < 0) {
        free(*result);
        free(*runs);
        *result = NULL;
        *runs = NULL;
        *n_runs = 0;
    }
    return rc;
}

/* "INSERT INTO main.T (c...) SELECT c... FROM shard.T WHERE key = ?1" over every column
 * of the table as the user's database has it (shard and database are the same schema
 * version: one refit wrote both), with run_id written ?2 (the new id); in the run table
 * itself id is NULL (the next id) and study_id ?3. */
static int copy_sql(struct rf_store *st, const char *table, char **out, struct rf_error *err)
{
    bool run = strcmp(table, "run") == 0;
    char q[256];
    snprintf(q, sizeof(q), "SELECT name FROM pragma_table_info('%s', 'main') ORDER BY cid", table);
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, q, -1, &s, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, table);
    size_t cap = 8192, len = 0, slen = 0;
    char *cols = malloc(cap), *sel = malloc(cap);
    int rc = cols && sel ? 0 : rf_error_set(err, RF_ENOMEM, "out of memory");
    while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
        const char *c = (const char *)sqlite3_column_text(s, 0);
        char v[160];
        if (run && strcmp(c, "id") == 0)
            snprintf(v, sizeof(v), "NULL");
        else if (run && strcmp(c, "study_id") == 0)
            snprintf(v, sizeof(v), "?3");
        else if (strcmp(c, "run_id") == 0)
            snprintf(v, sizeof(v), "?2");
        else
            snprintf(v, sizeof(v), "\"%s\"", c);
        if (len + strlen(c) + 8 > cap || slen + strlen(v) + 8 > cap) {
            rc = rf_error_set(err, RF_EINVAL, "%s: table %s has too many columns", st->path, table);
            break;
        }
        len += (size_t)snprintf(cols + len, cap - len, "%s\"%s\"", len ? ", " : "", c);
        slen += (size_t)snprintf(sel + slen, cap - slen, "%s%s", slen ? ", " : "", v);
    }
    sqlite3_finalize(s);
    if (rc == 0 && len == 0)
        rc = rf_error_set(err, RF_EINVAL, "%s: no table %s", st->path, table);
    if (rc == 0) {
        size_t n = len + slen + 2 * strlen(table) + 96;
        *out = malloc(n);
        if (!*out)
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        else
            snprintf(*out, n,
                     "INSERT INTO main.\"%s\" (%s) SELECT %s FROM shard.\"%s\" WHERE %s = ?1",
                     table, cols, sel, table, run ? "id" : "run_id");
    }
    free(cols);
    free(sel);
    return rc;
}

/* Runs sql with ?1 = old, ?2 = new, ?3 = the study's id (NULL when none). */
static int copy_rows(struct rf_store *st, const char *sql, int64_t old, int64_t new_id,
                     int64_t study_id, const char *what, struct rf_error *err)
{
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, what);
    sqlite3_bind_int64(s, 1, old);
    sqlite3_bind_int64(s, 2, new_id);
    if (sqlite3_bind_parameter_count(s) >= 3) {
        if (study_id > 0)
            sqlite3_bind_int64(s, 3, study_id);
        else
            sqlite3_bind_null(s, 3);
    }
    int rc = rf_store_step(st, s, err, what);
    sqlite3_finalize(s);
    return rc;
}

int rf_store_import_run(struct rf_store *st, int64_t old, struct rf_store_study *study,
                        int64_t *new_id, struct rf_error *err)
{
    int rc;
    bool in_tx = false;
    int64_t study_id = study ? study->id : 0;
    sqlite3_stmt *tables = NULL;
    /* As the writer stores a run: foreign keys off for the copy (the rows come from a run
     * that was whole when its shard committed it), back on after. */
    if ((rc = rf_store_exec(st, "PRAGMA foreign_keys=OFF", err)) < 0)
        return rc;
    if ((rc = rf_store_exec(st, "BEGIN IMMEDIATE", err)) < 0)
        goto out;
    in_tx = true;
    if (study && study_id == 0 && (rc = rf_store_insert_study(st, study, &study_id, err)) < 0)
        goto out;
    /* The run's row first: its new id is the next of the user's database. */
    char *sql = NULL;
    if ((rc = copy_sql(st, "run", &sql, err)) < 0)
        goto out;
    rc = copy_rows(st, sql, old, 0, study_id, "run", err);
    free(sql);
    if (rc < 0)
        goto out;
    *new_id = sqlite3_last_insert_rowid(st->db);
    /* Every other table of a run: those with a run_id column. measurement has its own
     * ids and a study measures nothing; the ordinals are shared by every run. */
    if (sqlite3_prepare_v2(
            st->db,
            "SELECT m.name FROM main.sqlite_master m WHERE m.type = 'table' AND"
            " m.name NOT IN ('run', 'measurement') AND EXISTS (SELECT 1 FROM"
            " pragma_table_info(m.name, 'main') WHERE name = 'run_id') ORDER BY m.name",
            -1, &tables, NULL) != SQLITE_OK) {
        rc = rf_store_db_error(st, err, "sqlite_master");
        goto out;
    }
    while (rc == 0 && sqlite3_step(tables) == SQLITE_ROW) {
        const char *t = (const char *)sqlite3_column_text(tables, 0);
        char name[128];
        snprintf(name, sizeof(name), "%s", t);
        if ((rc = copy_sql(st, name, &sql, err)) < 0)
            break;
        rc = copy_rows(st, sql, old, *new_id, 0, name, err);
        free(sql);
    }
    if (rc == 0)
        rc = rf_store_exec(st, "INSERT OR IGNORE INTO main.ordinal SELECT i FROM shard.ordinal",
                           err);
    if (rc < 0)
        goto out;
    if ((rc = rf_store_exec(st, "COMMIT", err)) < 0)
        goto out;
    in_tx = false;
    if (study)
        study->id = study_id;
    /* The planner's statistics, as the writer keeps them after each run (sim/
     * store_write.c says why); advice only, so a failure is not the caller's. */
    sqlite3_exec(st->db, "PRAGMA analysis_limit=1000; ANALYZE main", NULL, NULL, NULL);
out:
    sqlite3_finalize(tables);
    if (in_tx)
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_exec(st->db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
    return rc;
}
