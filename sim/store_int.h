/* What the store's files share (sim/store*.c, and the simulator's sim/store_prediction.c):
 * the migrations, the statement helpers and the errors that name the file. */
#ifndef RF_STORE_INT_H
#define RF_STORE_INT_H

#include <sqlite3.h>

#include "store.h"

/* rf_store_migrations[v] takes a file from version v to v + 1 (sim/store_schema.c). */
extern const char *const rf_store_migrations[RF_STORE_SCHEMA_VERSION];
/* rf_store_migration_fill[v], when set, runs after rf_store_migrations[v] in the same
 * transaction: what SQL would compute too slowly (sim/store_schema.c). */
extern int (*const rf_store_migration_fill[RF_STORE_SCHEMA_VERSION])(struct rf_store *,
                                                                     struct rf_error *);
/* Fills gpu_traffic for every run stored before version 11 from its stored transfers and
 * broadcasts, as the writer fills a new run's (sim/store_write.c). */
int rf_store_fill_traffic(struct rf_store *st, struct rf_error *err);

/* Fills err from the connection's last error, naming st->path and, when given, what was
 * being written or read ("transfer"); a lock says how long it waited. Returns the code. */
int rf_store_db_error(struct rf_store *st, struct rf_error *err, const char *what);
/* Runs sql (no rows) on st. */
int rf_store_exec(struct rf_store *st, const char *sql, struct rf_error *err);
/* Binds v as text, or NULL when v is NULL. */
void rf_store_bind_text(sqlite3_stmt *s, int i, const char *v);
/* Steps and resets a bound statement; anything but SQLITE_DONE is an error about what. */
int rf_store_step(struct rf_store *st, sqlite3_stmt *s, struct rf_error *err, const char *what);
/* Rows computed from memory, inserted by one statement (sim/store_rows.c): the SQL selects
 * c0 .. c<cols - 1> FROM refit_rows, whose row i is what fill(ctx, i, v) writes into v
 * (integers; RF_ROWS_NULL reads as NULL). A text column is an expression of an integer in
 * the SQL ("iif(c7, 'gather', 'deliver')"). */
enum { RF_ROWS_COLS = 16 };
#define RF_ROWS_NULL INT64_MIN
struct rf_rows {
    size_t n;
    int cols;
    void (*fill)(const void *ctx, size_t i, int64_t *v);
    const void *ctx;
};
int rf_store_insert_rows(struct rf_store *st, const char *sql, const struct rf_rows *rows,
                         const char *what, struct rf_error *err);

/* Inserts study's row, and the tables it printed before (study->pending), inside the
 * caller's transaction (a run's first store) and gives its id (sim/store_study.c). */
int rf_store_insert_study(struct rf_store *st, const struct rf_store_study *study, int64_t *id,
                          struct rf_error *err);

#endif
