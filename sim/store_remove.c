/* Removing runs (sim/store.h): a run and every row that references it, in one transaction;
 * the pages freed go to SQLite's freelist, where the next runs stored reuse them. */
#include "store_int.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every table that holds a run's rows, children before their parents, so that no delete
 * leaves a row that references a deleted one (foreign keys may be on, and each check finds
 * nothing left through the indexes of schema 9). measured_round belongs to a run through
 * its measurement. */
static const struct {
    const char *table, *sql;
} removals[] = {
    {"measured_round", "DELETE FROM measured_round WHERE measurement_id IN"
                       " (SELECT id FROM measurement WHERE run_id = ?1)"},
    {"measurement", "DELETE FROM measurement WHERE run_id = ?1"},
    {"transfer", "DELETE FROM transfer WHERE run_id = ?1"},
    {"collective", "DELETE FROM collective WHERE run_id = ?1"},
    {"box", "DELETE FROM box WHERE run_id = ?1"},
    {"tensor", "DELETE FROM tensor WHERE run_id = ?1"},
    {"role_summary", "DELETE FROM role_summary WHERE run_id = ?1"},
    {"round", "DELETE FROM round WHERE run_id = ?1"},
    {"gpu_traffic", "DELETE FROM gpu_traffic WHERE run_id = ?1"},
    {"side", "DELETE FROM side WHERE run_id = ?1"},
    {"memory", "DELETE FROM memory WHERE run_id = ?1"},
    {"link_load", "DELETE FROM link_load WHERE run_id = ?1"},
    {"predicted_round", "DELETE FROM predicted_round WHERE run_id = ?1"},
    {"predicted_phase", "DELETE FROM predicted_phase WHERE run_id = ?1"},
    {"predicted_step_phase", "DELETE FROM predicted_step_phase WHERE run_id = ?1"},
    {"prediction", "DELETE FROM prediction WHERE run_id = ?1"},
    {"run", "DELETE FROM run WHERE id = ?1"},
};
_Static_assert(sizeof(removals) / sizeof(removals[0]) == RF_STORE_RUN_TABLES,
               "RF_STORE_RUN_TABLES counts the tables removals[] empties");

/* A study exists only with runs (its row comes with its first: sim/store_study.c), so the
 * studies left without runs are those whose last runs went; their tables go first, then
 * the studies, in the runs' transaction. */
static int remove_orphan_studies(struct rf_store *st, struct rf_store_removed *out,
                                 struct rf_error *err)
{
    static const char orphan[] = "NOT EXISTS (SELECT 1 FROM run r WHERE r.study_id = s.id)";
    char sql[256];
    int rc;
    snprintf(sql, sizeof(sql),
             "DELETE FROM study_table WHERE study_id IN (SELECT id FROM study s WHERE %s)", orphan);
    if ((rc = rf_store_exec(st, sql, err)) < 0)
        return rc;
    out->study_tables = sqlite3_changes64(st->db);
    snprintf(sql, sizeof(sql), "DELETE FROM study AS s WHERE %s", orphan);
    if ((rc = rf_store_exec(st, sql, err)) < 0)
        return rc;
    out->studies = sqlite3_changes64(st->db);
    return 0;
}

/* The ids of the runs labelled label, in order, into out->ids. */
static int runs_with_label(struct rf_store *st, const char *label, struct rf_store_removed *out,
                           struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    size_t cap = 0;
    int rc = 0, step;
    if (sqlite3_prepare_v2(st->db, "SELECT id FROM run WHERE label = ? ORDER BY id", -1, &q,
                           NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, "run");
    rf_store_bind_text(q, 1, label);
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        if (out->n_ids == cap) {
            size_t ncap = cap ? 2 * cap : 16;
            int64_t *p = realloc(out->ids, ncap * sizeof(*p));
            if (!p) {
                rc = rf_error_set(err, RF_ENOMEM, "%s: out of memory listing runs", st->path);
                goto out;
            }
            out->ids = p;
            cap = ncap;
        }
        out->ids[out->n_ids++] = sqlite3_column_int64(q, 0);
    }
    if (step != SQLITE_DONE)
        rc = rf_store_db_error(st, err, "run");
    else if (out->n_ids == 0)
        rc = rf_error_set(err, RF_EINVAL, "%s: no run has label \"%s\" (nothing removed)", st->path,
                          label);
out:
    sqlite3_finalize(q);
    return rc;
}

/* Every id names a stored run; the first that does not is an error naming it. */
static int runs_exist(struct rf_store *st, const int64_t *ids, size_t n, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM run WHERE id = ?", -1, &q, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, "run");
    for (size_t i = 0; i < n && rc == 0; i++) {
        sqlite3_bind_int64(q, 1, ids[i]);
        int step = sqlite3_step(q);
        if (step == SQLITE_DONE)
            rc = rf_error_set(err, RF_EINVAL, "%s: run %lld does not exist (nothing removed)",
                              st->path, (long long)ids[i]);
        else if (step != SQLITE_ROW)
            rc = rf_store_db_error(st, err, "run");
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    return rc;
}

static int64_t pragma_int(struct rf_store *st, const char *sql)
{
    sqlite3_stmt *q = NULL;
    int64_t v = 0;
    if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        v = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return v;
}

int rf_store_remove_runs(struct rf_store *st, const int64_t *ids, size_t n, const char *label,
                         struct rf_store_removed *out, struct rf_error *err)
{
    sqlite3_stmt *del[RF_STORE_RUN_TABLES] = {NULL};
    bool in_tx = false;
    int rc;

    memset(out, 0, sizeof(*out));
    for (size_t t = 0; t < RF_STORE_RUN_TABLES; t++) {
        out->tables[t].table = removals[t].table;
        if (sqlite3_prepare_v2(st->db, removals[t].sql, -1, &del[t], NULL) != SQLITE_OK) {
            rc = rf_store_db_error(st, err, removals[t].table);
            goto out;
        }
    }
    if ((rc = rf_store_exec(st, "BEGIN IMMEDIATE", err)) < 0)
        goto out;
    in_tx = true;
    if (label) {
        if ((rc = runs_with_label(st, label, out, err)) < 0)
            goto out;
    } else {
        if (n && !(out->ids = malloc(n * sizeof(*out->ids)))) {
            rc = rf_error_set(err, RF_ENOMEM, "%s: out of memory", st->path);
            goto out;
        }
        memcpy(out->ids, ids, n * sizeof(*ids));
        out->n_ids = n;
    }
    /* Every id is checked before the first row goes, so a typo removes nothing. */
    if ((rc = runs_exist(st, out->ids, out->n_ids, err)) < 0)
        goto out;
    for (size_t i = 0; i < out->n_ids; i++)
        for (size_t t = 0; t < RF_STORE_RUN_TABLES; t++) {
            sqlite3_bind_int64(del[t], 1, out->ids[i]);
            if ((rc = rf_store_step(st, del[t], err, removals[t].table)) < 0)
                goto out;
            out->tables[t].rows += sqlite3_changes64(st->db);
        }
    if ((rc = remove_orphan_studies(st, out, err)) < 0)
        goto out;
    if ((rc = rf_store_exec(st, "COMMIT", err)) < 0)
        goto out;
    in_tx = false;
    out->free_pages = pragma_int(st, "PRAGMA freelist_count");
    out->page_size = pragma_int(st, "PRAGMA page_size");
out:
    if (in_tx)
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    for (size_t t = 0; t < RF_STORE_RUN_TABLES; t++)
        sqlite3_finalize(del[t]);
    if (rc < 0) {
        free(out->ids);
        memset(out, 0, sizeof(*out));
    }
    return rc;
}

void rf_store_removed_release(struct rf_store_removed *r)
{
    free(r->ids);
    r->ids = NULL;
    r->n_ids = 0;
}
