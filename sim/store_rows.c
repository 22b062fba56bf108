/* Rows from memory as a table (sim/store_int.h): refit_rows, an eponymous virtual table
 * whose rows a writer's callback computes, so a table's rows go in by one INSERT ... SELECT. */
#include "store_int.h"

#include <stdlib.h>
#include <string.h>

/* Why a virtual table: an INSERT run once per row pays SQLite a statement's whole life per
 * row (cursors on the table and its indexes, the program's setup and halt, a statement
 * journal). For the quick start's 101k boxes and 191k transfers that was 0.63 s of
 * `refit plan`'s 0.85 s; a VALUES list of 64 rows a statement took 0.35 s; the same rows
 * through INSERT ... SELECT from a virtual table over the plan take 0.2 s, what SQLite
 * itself needs to copy them from one table to another. */

struct rows_vtab {
    sqlite3_vtab base;
    struct rf_store *st;
};

struct rows_cursor {
    sqlite3_vtab_cursor base;
    const struct rf_rows *src;
    size_t i;
    int64_t v[RF_ROWS_COLS];
};

static int rows_connect(sqlite3 *db, void *aux, int argc, const char *const *argv,
                        sqlite3_vtab **out, char **errmsg)
{
    (void)argc, (void)argv, (void)errmsg;
    int rc = sqlite3_declare_vtab(db, "CREATE TABLE x(c0, c1, c2, c3, c4, c5, c6, c7, c8, c9,"
                                      " c10, c11, c12, c13, c14, c15)");
    if (rc != SQLITE_OK)
        return rc;
    struct rows_vtab *t = sqlite3_malloc(sizeof(*t));
    if (!t)
        return SQLITE_NOMEM;
    memset(t, 0, sizeof(*t));
    t->st = aux;
    *out = &t->base;
    return SQLITE_OK;
}

static int rows_disconnect(sqlite3_vtab *vt)
{
    sqlite3_free(vt);
    return SQLITE_OK;
}

static int rows_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
    (void)vt;
    info->estimatedCost = 1e6;
    return SQLITE_OK;
}

static int rows_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
    (void)vt;
    struct rows_cursor *c = sqlite3_malloc(sizeof(*c));
    if (!c)
        return SQLITE_NOMEM;
    memset(c, 0, sizeof(*c));
    *out = &c->base;
    return SQLITE_OK;
}

static int rows_close(sqlite3_vtab_cursor *cur)
{
    sqlite3_free(cur);
    return SQLITE_OK;
}

static void fill(struct rows_cursor *c)
{
    if (c->src && c->i < c->src->n)
        c->src->fill(c->src->ctx, c->i, c->v);
}

static int rows_filter(sqlite3_vtab_cursor *cur, int idx, const char *idxs, int argc,
                       sqlite3_value **argv)
{
    (void)idx, (void)idxs, (void)argc, (void)argv;
    struct rows_cursor *c = (struct rows_cursor *)cur;
    c->src = ((struct rows_vtab *)cur->pVtab)->st->rows;
    c->i = 0;
    fill(c);
    return SQLITE_OK;
}

static int rows_next(sqlite3_vtab_cursor *cur)
{
    struct rows_cursor *c = (struct rows_cursor *)cur;
    c->i++;
    fill(c);
    return SQLITE_OK;
}

static int rows_eof(sqlite3_vtab_cursor *cur)
{
    const struct rows_cursor *c = (const struct rows_cursor *)cur;
    return !c->src || c->i >= c->src->n;
}

static int rows_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
    const struct rows_cursor *c = (const struct rows_cursor *)cur;
    if (col < 0 || col >= c->src->cols || c->v[col] == RF_ROWS_NULL)
        sqlite3_result_null(ctx);
    else
        sqlite3_result_int64(ctx, c->v[col]);
    return SQLITE_OK;
}

static int rows_rowid(sqlite3_vtab_cursor *cur, sqlite_int64 *rowid)
{
    *rowid = (sqlite_int64)((const struct rows_cursor *)cur)->i;
    return SQLITE_OK;
}

/* Eponymous only (no xCreate): the table exists in every connection that registered the
 * module, and no schema of a user's file ever names it. */
static const sqlite3_module rows_module = {
    .iVersion = 0,
    .xConnect = rows_connect,
    .xBestIndex = rows_best_index,
    .xDisconnect = rows_disconnect,
    .xOpen = rows_open,
    .xClose = rows_close,
    .xFilter = rows_filter,
    .xNext = rows_next,
    .xEof = rows_eof,
    .xColumn = rows_column,
    .xRowid = rows_rowid,
};

int rf_store_insert_rows(struct rf_store *st, const char *sql, const struct rf_rows *rows,
                         const char *what, struct rf_error *err)
{
    int rc;
    if (rows->cols < 1 || rows->cols > RF_ROWS_COLS)
        return rf_error_set(err, RF_EINVAL, "%s: %d columns (1 to %d)", what, rows->cols,
                            RF_ROWS_COLS);
    if (!st->rows_module) {
        if (sqlite3_create_module(st->db, "refit_rows", &rows_module, st) != SQLITE_OK)
            return rf_store_db_error(st, err, what);
        st->rows_module = true;
    }
    st->rows = rows;
    rc = sqlite3_exec(st->db, sql, NULL, NULL, NULL);
    st->rows = NULL;
    return rc == SQLITE_OK ? 0 : rf_store_db_error(st, err, what);
}
