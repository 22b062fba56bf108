/* Opening a refit database (sim/store.h): refusing what is not one, migrating an older
 * one forward, and the errors every store file reports through (sim/store_int.h). */
#include "store_int.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* SQLite's "unable to open database file" says neither what is missing nor what is not
 * allowed: the file system does. */
static int cannot_open(struct rf_store *st, struct rf_error *err, const char *msg)
{
    char dir[4096];
    const char *slash = strrchr(st->path, '/');
    if (access(st->path, F_OK) == 0) {
        if (access(st->path, R_OK | W_OK) != 0)
            return rf_error_set(err, RF_EIO, "%s: %s", st->path, strerror(errno));
        return rf_error_set(err, RF_EDB, "%s: %s", st->path, msg);
    }
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash > st->path ? slash - st->path : 1) : 1,
             slash ? st->path : ".");
    struct stat sb;
    int e = stat(dir, &sb) != 0             ? errno
            : !S_ISDIR(sb.st_mode)          ? ENOTDIR
            : access(dir, W_OK | X_OK) != 0 ? errno
                                            : 0;
    if (e)
        return rf_error_set(err, RF_EIO, "%s: cannot create it: %s: %s", st->path, dir,
                            strerror(e));
    return rf_error_set(err, RF_EDB, "%s: cannot create it (%s)", st->path, msg);
}

/* Every SQLite error names the file, and a lock says what it is and how long we waited: a
 * bare "database is locked" leaves the user guessing which file and why. */
int rf_store_db_error(struct rf_store *st, struct rf_error *err, const char *what)
{
    int code = st->db ? sqlite3_errcode(st->db) : SQLITE_CANTOPEN;
    const char *msg = st->db ? sqlite3_errmsg(st->db) : "cannot open";
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
        return rf_error_set(err, RF_EBUSY,
                            "%s: database is locked (another refit is writing it; waited %g s)",
                            st->path, st->busy_seconds);
    if (code == SQLITE_NOTADB)
        return rf_error_set(err, RF_EDB, "%s: not a refit database (%s)", st->path, msg);
    if (code == SQLITE_READONLY)
        return rf_error_set(err, RF_EDB,
                            "%s: cannot write it (%s): the file or its folder is "
                            "read-only",
                            st->path, msg);
    if (code == SQLITE_CANTOPEN || code == SQLITE_PERM)
        return cannot_open(st, err, msg);
    if (what)
        return rf_error_set(err, RF_EDB, "%s: %s: %s", st->path, what, msg);
    return rf_error_set(err, RF_EDB, "%s: %s", st->path, msg);
}

int rf_store_exec(struct rf_store *st, const char *sql, struct rf_error *err)
{
    if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, NULL);
    return 0;
}

static int pragma_int(struct rf_store *st, const char *sql, int64_t *out, struct rf_error *err)
{
    sqlite3_stmt *s = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, NULL);
    if (sqlite3_step(s) == SQLITE_ROW)
        *out = sqlite3_column_int64(s, 0);
    else
        rc = rf_store_db_error(st, err, NULL);
    sqlite3_finalize(s);
    return rc;
}

/* What a file says it is: application_id, user_version and whether it holds anything. */
struct identity {
    int64_t app, version, objects;
};

static int read_identity(struct rf_store *st, struct identity *id, struct rf_error *err)
{
    int rc;
    if ((rc = pragma_int(st, "PRAGMA application_id", &id->app, err)) < 0 ||
        (rc = pragma_int(st, "PRAGMA user_version", &id->version, err)) < 0 ||
        (rc = pragma_int(st, "SELECT count(*) FROM sqlite_schema", &id->objects, err)) < 0)
        return rc;
    return 0;
}

/* Refuses what refit must not read or migrate into. A file with tables but user_version 0
 * is someone else's (refit sets the version in the transaction that creates its tables),
 * so it is never mixed with ours, whatever its application_id says. */
static int check_identity(struct rf_store *st, const struct identity *id, bool existing,
                          struct rf_error *err)
{
    if (id->objects > 0 && id->version == 0)
        return rf_error_set(err, RF_EDB, "%s: has tables but is not a refit database", st->path);
    if (id->objects > 0 && id->app != RF_STORE_APPLICATION_ID)
        return rf_error_set(err, RF_EDB, "%s: not a refit database (application_id %lld)", st->path,
                            (long long)id->app);
    if (id->objects == 0 && existing)
        return rf_error_set(err, RF_EDB,
                            "%s: empty, not a refit database (refit plan or sim creates one)",
                            st->path);
    if (id->version > RF_STORE_SCHEMA_VERSION)
        return rf_error_set(err, RF_EDB,
                            "%s: schema version %lld is newer than this refit (%d); upgrade refit",
                            st->path, (long long)id->version, RF_STORE_SCHEMA_VERSION);
    return 0;
}

/* "file:" URI of path with immutable=1, for a read-only open that cannot create the -shm
 * file a WAL database needs (a read-only folder). */
static void immutable_uri(const char *path, char *uri, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = (size_t)snprintf(uri, size, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p && n + 4 < size; p++) {
        if (*p == '%' || *p == '?' || *p == '#' || *p < 0x20 || *p >= 0x7f) {
            uri[n++] = '%';
            uri[n++] = hex[*p >> 4];
            uri[n++] = hex[*p & 15];
        } else {
            uri[n++] = (char)*p;
        }
    }
    snprintf(uri + n, size - n, "?immutable=1");
}

static int open_db(struct rf_store *st, const char *name, int flags, struct rf_error *err)
{
    /* One connection per thread (NOMUTEX): the mutexes of serialized mode cost 5% of
     * storing a Kimi K3 plan. */
    if (sqlite3_open_v2(name, &st->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        int rc = rf_store_db_error(st, err, NULL);
        sqlite3_close(st->db);
        st->db = NULL;
        return rc;
    }
    sqlite3_busy_timeout(st->db, (int)(st->busy_seconds * 1000));
    return 0;
}

/* Brings a writable file to the current schema: forward-only migrations in one
 * transaction, the identity read again inside it in case another process created or
 * migrated the file meanwhile. */
static int migrate(struct rf_store *st, struct rf_error *err)
{
    struct identity id;
    char sql[128];
    int rc;
    if ((rc = rf_store_exec(st, "BEGIN IMMEDIATE", err)) < 0)
        return rc;
    if ((rc = read_identity(st, &id, err)) < 0 || (rc = check_identity(st, &id, false, err)) < 0)
        goto out;
    for (int64_t v = id.version; v < RF_STORE_SCHEMA_VERSION; v++)
        if ((rc = rf_store_exec(st, rf_store_migrations[v], err)) < 0 ||
            (rf_store_migration_fill[v] && (rc = rf_store_migration_fill[v](st, err)) < 0))
            goto out;
    snprintf(sql, sizeof(sql), "PRAGMA application_id=%d; PRAGMA user_version=%d;",
             RF_STORE_APPLICATION_ID, RF_STORE_SCHEMA_VERSION);
    if ((rc = rf_store_exec(st, sql, err)) < 0 || (rc = rf_store_exec(st, "COMMIT", err)) < 0)
        goto out;
    return 0;
out:
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

/* Refuses a damaged file before anything reads or writes it. Overwritten bytes inside a
 * b-tree are often read without an error: a lookup misses a run that is there, an export
 * returns 270 of 300 rows, and a new run is stored into the damaged file (issue 25). SQLite's
 * quick_check walks every page (about 5 ms per MB here: 0.5 s for a 100 MB file of six
 * DeepSeek-V3 plans), which every command pays once at open; integrity_check, which also
 * compares each index with its table, costs three times as much and is left to the user. */
static int check_intact(struct rf_store *st, struct rf_error *err)
{
    sqlite3_stmt *s = NULL;
    char found[512] = "";
    int rc = sqlite3_prepare_v2(st->db, "PRAGMA quick_check(1)", -1, &s, NULL);
    if (rc == SQLITE_OK && (rc = sqlite3_step(s)) == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(s, 0);
        const char *text = t ? (const char *)t : "";
        /* "*** in database main ***\nOn tree page 74 ...": the problem, on one line. */
        const char *prefix = "*** in database main ***\n";
        if (strncmp(text, prefix, strlen(prefix)) == 0)
            text += strlen(prefix);
        snprintf(found, sizeof(found), "%s", text);
        for (char *c = found; *c; c++)
            if (*c == '\n')
                *c = ' ';
        rc = strcmp(found, "ok") == 0 ? SQLITE_OK : SQLITE_CORRUPT;
    }
    if (rc != SQLITE_OK && rc != SQLITE_CORRUPT) {
        int code = sqlite3_errcode(st->db);
        if (code != SQLITE_CORRUPT && code != SQLITE_NOTADB) {
            sqlite3_finalize(s);
            return rf_store_db_error(st, err, "checking it");
        }
        snprintf(found, sizeof(found), "%s", sqlite3_errmsg(st->db));
    }
    sqlite3_finalize(s);
    if (rc == SQLITE_OK)
        return 0;
    return rf_error_set(err, RF_EDB,
                        "%s: the database is damaged (SQLite's quick_check: %s); refit neither "
                        "reads nor writes it: recover what is left with `sqlite3 %s .recover`",
                        st->path, found, st->path);
}

int rf_store_open(struct rf_store *st, const char *path, int flags, struct rf_error *err)
{
    bool readonly = (flags & RF_STORE_READONLY) != 0;
    bool existing = readonly || (flags & RF_STORE_EXISTING) != 0;
    struct identity id;
    struct stat sb;
    int rc;

    memset(st, 0, sizeof(*st));
    st->busy_seconds = RF_STORE_BUSY_SECONDS;
    if (existing == ((flags & RF_STORE_CREATE) != 0))
        return rf_error_set(err, RF_EINVAL,
                            "%s: open it with one of RF_STORE_CREATE, _EXISTING, _READONLY", path);
    if (!(st->path = strdup(path)))
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    /* SQLite's "unable to open database file" does not say that the file is missing. */
    bool present = stat(path, &sb) == 0;
    if (existing && !present) {
        rc = rf_error_set(err, RF_EIO, "%s: %s", path,
                          errno == ENOENT ? "no such file" : strerror(errno));
        goto fail;
    }
    if (present && S_ISDIR(sb.st_mode)) {
        rc = rf_error_set(err, RF_EIO, "%s: is a directory, not a refit database", path);
        goto fail;
    }
    /* A device, FIFO or socket (/dev/null, or a link to it) is no database: SQLite would
     * open it, fail at the first write and leave a world-writable "<path>-journal" beside
     * it, in /dev. */
    if (present && !S_ISREG(sb.st_mode)) {
        rc = rf_error_set(err, RF_EIO, "%s: is not a regular file, not a refit database", path);
        goto fail;
    }
    if ((rc = open_db(st, path,
                      readonly ? SQLITE_OPEN_READONLY
                               : SQLITE_OPEN_READWRITE | (existing ? 0 : SQLITE_OPEN_CREATE),
                      err)) < 0)
        goto fail;
    rc = read_identity(st, &id, err);
    if (rc < 0 && readonly &&
        (sqlite3_errcode(st->db) == SQLITE_READONLY ||
         sqlite3_errcode(st->db) == SQLITE_CANTOPEN)) {
        /* A WAL file in a folder we cannot write: SQLite cannot create its -shm file. With no
         * -wal file beside it (or an empty one) every commit is in the file itself, so it is
         * read as immutable; with one, a writer is active (or died) and the file alone would
         * be stale. */
        char wal[4096 + 8], uri[3 * 4096 + 32];
        struct stat ws;
        snprintf(wal, sizeof(wal), "%s-wal", path);
        if (stat(wal, &ws) == 0 && ws.st_size > 0) {
            rc = rf_error_set(err, RF_EDB,
                              "%s: cannot read it: %s exists (a writer is active or died) and "
                              "the folder is not writable",
                              path, wal);
            goto fail;
        }
        sqlite3_close(st->db);
        st->db = NULL;
        immutable_uri(path, uri, sizeof(uri));
        if ((rc = open_db(st, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, err)) < 0)
            goto fail;
        rc = read_identity(st, &id, err);
    }
    if (rc < 0 || (rc = check_identity(st, &id, existing, err)) < 0)
        goto fail;
    if (present && sb.st_size > 0 && (rc = check_intact(st, err)) < 0)
        goto fail;
    if (readonly) {
        if (id.version < RF_STORE_SCHEMA_VERSION) {
            rc = rf_error_set(err, RF_EDB,
                              "%s: schema version %lld is older than this refit (%d): run refit "
                              "plan/sim on it once to upgrade, or open it writable",
                              path, (long long)id.version, RF_STORE_SCHEMA_VERSION);
            goto fail;
        }
        return 0;
    }
    if ((rc = rf_store_exec(st,
                            "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                            "PRAGMA foreign_keys=ON;",
                            err)) < 0)
        goto fail;
    if (id.version < RF_STORE_SCHEMA_VERSION && (rc = migrate(st, err)) < 0)
        goto fail;
    return 0;
fail:
    rf_store_close(st);
    return rc;
}

void rf_store_set_busy_timeout(struct rf_store *st, double seconds)
{
    st->busy_seconds = seconds;
    if (st->db)
        sqlite3_busy_timeout(st->db, (int)(seconds * 1000));
}

void rf_store_close(struct rf_store *st)
{
    if (!st)
        return;
    if (st->db)
        sqlite3_close(st->db);
    st->db = NULL;
    free(st->path);
    st->path = NULL;
}

void rf_store_bind_text(sqlite3_stmt *s, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i);
}

int rf_store_step(struct rf_store *st, sqlite3_stmt *s, struct rf_error *err, const char *what)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return rf_store_db_error(st, err, what);
    return 0;
}
