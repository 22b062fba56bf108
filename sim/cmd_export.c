/* `refit export --csv`: one table or view of the store as RFC 4180 CSV with a header row, for
 * the people who go on in a spreadsheet or pandas; optionally only some runs. */
#include <errno.h>
#include <getopt.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "cmd.h"
#include "fileio.h"
#include "json.h"
#include "store.h"

static const char usage_export[] =
    "usage: refit export --csv TABLE [--run ID ...] [--db FILE] [--out OUT]\n"
    "\n"
    "Writes table or view TABLE of FILE (default refit.db) as CSV (RFC 4180: a header row of\n"
    "column names, fields with a comma, a quote or a line break quoted, quotes doubled, CRLF\n"
    "line ends; NULL is an empty field, an empty text \"\"; reals in the shortest form that\n"
    "reads back as the same double). Any table or view of the database can be named; an\n"
    "unknown name is refused with the list of them. Only reads the database.\n"
    "  --csv          the format (the only one)\n"
    "  --run ID       only the rows of this run, by the table's run_id column (the run table:\n"
    "                 its id); repeatable; refused for a table without one\n"
    "  --out OUT      write OUT (replaced atomically, never the database) instead of stdout\n";

/* A name SQLite knows as a table or view, as sqlite_master spells it. */
struct relation {
    char *name;
    bool view;
};

static void relations_free(struct relation *rel, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(rel[i].name);
    free(rel);
}

/* Every table and view of the database but SQLite's own, by name. */
static int list_relations(struct rf_store *st, struct relation **out, size_t *n_out,
                          struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    struct relation *rel = NULL;
    size_t n = 0, cap = 0;
    int rc = 0, s;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT name, type = 'view' FROM sqlite_master WHERE type IN "
                           "('table', 'view') AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' "
                           "ORDER BY type, name",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = rf_error_set(err, RF_EDB, "%s: %s", st->path, sqlite3_errmsg(st->db));
        goto out;
    }
    while ((s = sqlite3_step(q)) == SQLITE_ROW) {
        if ((rc = RF_GROW(rel, cap, n + 1, err)) < 0)
            goto out;
        if (!(rel[n].name = strdup((const char *)sqlite3_column_text(q, 0)))) {
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
            goto out;
        }
        rel[n++].view = sqlite3_column_int(q, 1) != 0;
    }
    if (s != SQLITE_DONE)
        rc = rf_error_set(err, RF_EDB, "%s: %s", st->path, sqlite3_errmsg(st->db));
out:
    sqlite3_finalize(q);
    if (rc < 0) {
        relations_free(rel, n);
        rel = NULL;
        n = 0;
    }
    *out = rel;
    *n_out = n;
    return rc;
}

/* The refusal of an unknown name lists what the user could have named. */
static int unknown_relation(const char *db, const char *name, const struct relation *rel, size_t n,
                            struct rf_error *err)
{
    char tables[512] = "", views[512] = "";
    for (size_t i = 0; i < n; i++) {
        char *list = rel[i].view ? views : tables;
        size_t len = strlen(list);
        snprintf(list + len, sizeof(tables) - len, "%s%s", len ? ", " : "", rel[i].name);
    }
    return rf_error_set(err, RF_EINVAL, "%s: no table or view '%s'; tables: %s; views: %s", db,
                        name, *tables ? tables : "(none)", *views ? views : "(none)");
}

/* The name as an SQL identifier: in double quotes, each quote doubled. The name comes from
 * sqlite_master, never from the command line, but any table name is legal SQLite. */
static char *quote_ident(const char *name)
{
    size_t len = strlen(name), k = 0;
    char *q = malloc(2 * len + 3);
    if (!q)
        return NULL;
    q[k++] = '"';
    for (const char *p = name; *p; p++) {
        if (*p == '"')
            q[k++] = '"';
        q[k++] = *p;
    }
    q[k++] = '"';
    q[k] = '\0';
    return q;
}

/* The column that names a row's run: run_id, or the run table's own id. NULL when none. */
static const char *run_column(struct rf_store *st, const char *name, const char *ident,
                              struct rf_error *err, int *rc)
{
    char sql[1200];
    sqlite3_stmt *q = NULL;
    const char *col = NULL;
    int s;
    *rc = 0;
    if (strcmp(name, "run") == 0)
        return "id";
    snprintf(sql, sizeof(sql), "PRAGMA table_info(%s)", ident);
    if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK) {
        *rc = rf_error_set(err, RF_EDB, "%s: %s", st->path, sqlite3_errmsg(st->db));
        return NULL;
    }
    while ((s = sqlite3_step(q)) == SQLITE_ROW)
        if (strcmp((const char *)sqlite3_column_text(q, 1), "run_id") == 0)
            col = "run_id";
    if (s != SQLITE_DONE)
        *rc = rf_error_set(err, RF_EDB, "%s: %s", st->path, sqlite3_errmsg(st->db));
    sqlite3_finalize(q);
    return col;
}

/* A --run that names no run would export nothing and look like a run without rows. */
static int check_runs(struct rf_store *st, const int64_t *ids, size_t n, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM run WHERE id = ?", -1, &q, NULL) != SQLITE_OK)
        return rf_error_set(err, RF_EDB, "%s: %s", st->path, sqlite3_errmsg(st->db));
    for (size_t i = 0; i < n && rc == 0; i++) {
        sqlite3_bind_int64(q, 1, ids[i]);
        int s = sqlite3_step(q);
        if (s == SQLITE_DONE)
            rc = rf_error_set(err, RF_EINVAL, "%s: --run %lld: no such run", st->path,
                              (long long)ids[i]);
        else if (s != SQLITE_ROW)
            rc = rf_error_set(err, RF_EDB, "%s: %s", st->path, sqlite3_errmsg(st->db));
        sqlite3_reset(q);
    }
    sqlite3_finalize(q);
    return rc;
}

/* One field: quoted only when it must be (RFC 4180 section 2, rules 6 and 7). */
static void put_text(FILE *f, const char *s, int len)
{
    bool quote = len == 0 || memchr(s, ',', (size_t)len) || memchr(s, '"', (size_t)len) ||
                 memchr(s, '\n', (size_t)len) || memchr(s, '\r', (size_t)len);
    if (!quote) {
        fwrite(s, 1, (size_t)len, f);
        return;
    }
    fputc('"', f);
    for (int i = 0; i < len; i++) {
        if (s[i] == '"')
            fputc('"', f);
        fputc(s[i], f);
    }
    fputc('"', f);
}

static void put_field(FILE *f, sqlite3_stmt *q, int col)
{
    switch (sqlite3_column_type(q, col)) {
    case SQLITE_NULL: break; /* an empty field; an empty text is "" */
    case SQLITE_INTEGER: fprintf(f, "%lld", (long long)sqlite3_column_int64(q, col)); break;
    case SQLITE_FLOAT: {
        /* SQLite's own text of a real has 15 digits, which loses the last bits of a figure
         * a user may compare exactly: the shortest form that reads back as the double. */
        rf_put_real(f, sqlite3_column_double(q, col), true);
        break;
    }
    default: {
        /* Text as stored; a blob (none in refit's schema) as its bytes, quoted as needed. */
        const char *s = (const char *)sqlite3_column_blob(q, col);
        put_text(f, s ? s : "", sqlite3_column_bytes(q, col));
        break;
    }
    }
}

/* Writes the header and every row of the query to f. */
static int write_csv(struct rf_store *st, sqlite3_stmt *q, FILE *f, struct rf_error *err)
{
    int cols = sqlite3_column_count(q), s;
    for (int c = 0; c < cols; c++) {
        const char *name = sqlite3_column_name(q, c);
        if (c)
            fputc(',', f);
        put_text(f, name, (int)strlen(name));
    }
    fputs("\r\n", f);
    while ((s = sqlite3_step(q)) == SQLITE_ROW) {
        for (int c = 0; c < cols; c++) {
            if (c)
                fputc(',', f);
            put_field(f, q, c);
        }
        fputs("\r\n", f);
    }
    if (s != SQLITE_DONE)
        return rf_error_set(err, RF_EDB, "%s: %s", st->path, sqlite3_errmsg(st->db));
    return 0;
}

/* The export itself, on an open store: check the name and the runs, then one query. */
static int export_csv(struct rf_store *st, const char *name, const int64_t *ids, size_t n_ids,
                      const char *out, struct rf_error *err)
{
    struct relation *rel = NULL;
    size_t n_rel = 0;
    const struct relation *found = NULL;
    char *ident = NULL, *sql = NULL;
    sqlite3_stmt *q = NULL;
    struct rf_atomic_file af = {0};
    const char *col = NULL;
    bool in_tx = false;
    size_t size;
    int rc, len;
    /* One read transaction: the names, the runs and the rows are of one state of the file,
     * whatever another refit writes meanwhile. */
    if (sqlite3_exec(st->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK) {
        rc = rf_error_set(err, RF_EDB, "%s: %s", st->path, sqlite3_errmsg(st->db));
        goto out;
    }
    in_tx = true;
    if ((rc = list_relations(st, &rel, &n_rel, err)) < 0)
        goto out;
    for (size_t i = 0; i < n_rel && !found; i++)
        if (strcmp(rel[i].name, name) == 0)
            found = &rel[i];
    if (!found) {
        rc = unknown_relation(st->path, name, rel, n_rel, err);
        goto out;
    }
    if (!(ident = quote_ident(found->name))) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    if (n_ids) {
        if (!(col = run_column(st, found->name, ident, err, &rc))) {
            if (rc == 0)
                rc = rf_error_set(err, RF_EINVAL,
                                  "%s: --run: %s '%s' has no run_id column; export it whole",
                                  st->path, found->view ? "view" : "table", found->name);
            goto out;
        }
        if ((rc = check_runs(st, ids, n_ids, err)) < 0)
            goto out;
    }
    size = strlen(ident) + 64 + 2 * n_ids;
    if (!(sql = malloc(size))) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    len = snprintf(sql, size, "SELECT * FROM %s", ident);
    if (n_ids) {
        len += snprintf(sql + len, size - (size_t)len, " WHERE %s IN (", col);
        for (size_t i = 0; i < n_ids; i++)
            len += snprintf(sql + len, size - (size_t)len, i ? ",?" : "?");
        snprintf(sql + len, size - (size_t)len, ")");
    }
    if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK) {
        rc = rf_error_set(err, RF_EDB, "%s: %s", st->path, sqlite3_errmsg(st->db));
        goto out;
    }
    for (size_t i = 0; i < n_ids; i++)
        sqlite3_bind_int64(q, (int)i + 1, ids[i]);
    if (!out) {
        rc = write_csv(st, q, stdout, err);
        goto out;
    }
    if ((rc = rf_atomic_write_begin(&af, out, err)) < 0 || (rc = write_csv(st, q, af.f, err)) < 0 ||
        (rc = rf_atomic_write_commit(&af, err)) < 0)
        goto out;
out:
    rf_atomic_write_abort(&af);
    sqlite3_finalize(q);
    if (in_tx)
        sqlite3_exec(st->db, "COMMIT", NULL, NULL, NULL);
    free(sql);
    free(ident);
    relations_free(rel, n_rel);
    return rc;
}

int cmd_export(int argc, char **argv)
{
    static const struct option opts[] = {
        {"csv", no_argument, NULL, 'c'},       {"db", required_argument, NULL, 'd'},
        {"run", required_argument, NULL, 'r'}, {"out", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},      {NULL, 0, NULL, 0}};
    const char *db = "refit.db", *out = NULL;
    bool csv = false;
    int64_t *ids = NULL;
    size_t n_ids = 0;
    int rc = 2, c;
    struct rf_error err = {0};
    struct rf_store st = {0};
    if (!(ids = malloc((size_t)argc * sizeof(*ids)))) {
        fputs("refit: out of memory\n", stderr);
        return 1;
    }
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'c': csv = true; break;
        case 'd': db = optarg; break;
        case 'o': out = optarg; break;
        case 'r': {
            char *end;
            errno = 0;
            long long id = strtoll(optarg, &end, 10);
            if (errno || end == optarg || *end || id <= 0) {
                rc = cmd_usage_fail("export", "--run %s: not a run id", optarg);
                goto out;
            }
            ids[n_ids++] = id;
            break;
        }
        case 'h':
            fputs(usage_export, stdout);
            rc = 0;
            goto out;
        default: goto out;
        }
    }
    if (argc - optind != 1) {
        rc = cmd_usage_fail("export", "export takes one TABLE, got %d", argc - optind);
        goto out;
    }
    if (!csv) {
        rc = cmd_usage_fail("export", "export needs a format: --csv");
        goto out;
    }
    /* Before opening: a refused output must not depend on the database being readable. */
    if (out && rf_check_output(out, db, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    if (rf_store_open(&st, db, RF_STORE_READONLY, &err) < 0 ||
        export_csv(&st, argv[optind], ids, n_ids, out, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    rc = 0;
out:
    rf_store_close(&st);
    free(ids);
    return rc;
}
