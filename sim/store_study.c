/* A study's rows (sim/store.h): the study itself and the tables printed before it, written
 * inside the transaction of its first run, and each refit.table after, one transaction each. */
#include "store_int.h"

/* Inserts table t of study id as the ordinal after its tables stored before. The ordinal is
 * read by the statement that writes it, inside the caller's transaction, so two tables of
 * one study can never share one. */
static int insert_table(struct rf_store *st, int64_t id, const struct rf_study_table *t,
                        struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(st->db,
                           "INSERT INTO study_table (study_id, ordinal, title, columns_json,"
                           " rows_json, text) SELECT ?1, coalesce(max(ordinal), 0) + 1, ?2, ?3,"
                           " ?4, ?5 FROM study_table WHERE study_id = ?1",
                           -1, &q, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, "study_table");
    sqlite3_bind_int64(q, 1, id);
    rf_store_bind_text(q, 2, t->title);
    rf_store_bind_text(q, 3, t->columns_json);
    rf_store_bind_text(q, 4, t->rows_json);
    rf_store_bind_text(q, 5, t->text);
    int rc = rf_store_step(st, q, err, "study_table");
    sqlite3_finalize(q);
    return rc;
}

/* The study row comes with the study's first stored run rather than when the study starts:
 * a study that fails before it stores anything (a typo on its first line) leaves no study
 * behind, and no study exists without a run, so refit rm of a study's last run can remove
 * it. The tables it printed before that run come in the same transaction, numbered first:
 * the study is never stored without them. Runs already commit one by one, so a later table
 * is its own transaction too: what a study printed before a later failure stays with the
 * runs it describes. */
int rf_store_insert_study(struct rf_store *st, const struct rf_store_study *study, int64_t *id,
                          struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(st->db,
                           "INSERT INTO study (path, name, started_at, refit_version)"
                           " VALUES (?, ?, ?, ?)",
                           -1, &q, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, "study");
    rf_store_bind_text(q, 1, study->path);
    rf_store_bind_text(q, 2, study->name);
    rf_store_bind_text(q, 3, study->started_at);
    rf_store_bind_text(q, 4, study->refit_version);
    int rc = rf_store_step(st, q, err, "study");
    sqlite3_finalize(q);
    if (rc < 0)
        return rc;
    *id = sqlite3_last_insert_rowid(st->db);
    for (size_t i = 0; i < study->n_pending && rc == 0; i++)
        rc = insert_table(st, *id, &study->pending[i], err);
    return rc;
}

int rf_store_save_study_table(struct rf_store *st, const struct rf_store_study *study,
                              const struct rf_study_table *t, struct rf_error *err)
{
    int rc;
    if (study->id <= 0)
        return rf_error_set(err, RF_EINVAL,
                            "%s: the study %s has no stored run to keep its "
                            "table with",
                            st->path, study->path);
    if ((rc = rf_store_exec(st, "BEGIN IMMEDIATE", err)) < 0)
        return rc;
    if ((rc = insert_table(st, study->id, t, err)) == 0 &&
        (rc = rf_store_exec(st, "COMMIT", err)) == 0)
        return 0;
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}
