/* Writing a result file without harming anything: refusing an output that is an input (the
 * database or its SQLite companions) and replacing a file atomically (temp, fsync, rename). */
#ifndef RF_FILEIO_H
#define RF_FILEIO_H

#include <limits.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"

/* 1 when a and b name the same existing file (same device and inode, through symlinks and
 * any spelling of the path), 0 when they differ or either is absent. */
int rf_same_file(const char *a, const char *b);

/* 1 when writing out would overwrite the SQLite database db, 2 when it would overwrite one of
 * its companions (db-wal, db-shm, db-journal, existing or not: SQLite may create them while
 * db is open), else 0. */
int rf_is_db_file(const char *out, const char *db);

/* Refuses (RF_EINVAL, "OUT: is the database DB; name another output", or "... DB's WAL,
 * shared memory or journal; ...") an output that rf_is_db_file says belongs to db. */
int rf_check_output(const char *out, const char *db, struct rf_error *err);

/* A file being replaced: written to a temporary file beside path, which commit flushes,
 * fsyncs and renames over path, and abort removes. A new file gets mode 0666 less the umask
 * (as fopen would); an existing regular file keeps its mode. A symbolic link is written
 * through (its target is replaced, the link stays); a path that exists but is not a regular
 * file (a folder, a device, a FIFO) is refused. */
struct rf_atomic_file {
    FILE *f; /* write here between begin and commit/abort */
    char path[PATH_MAX];
    char tmp[PATH_MAX + 32];
};

int rf_atomic_write_begin(struct rf_atomic_file *af, const char *path, struct rf_error *err);
/* Fails (and removes the temporary file) when any write to af->f failed. */
int rf_atomic_write_commit(struct rf_atomic_file *af, struct rf_error *err);
/* Removes the temporary file; a no-op after commit or on a zeroed struct. */
void rf_atomic_write_abort(struct rf_atomic_file *af);

/* The whole file at once: begin, write data[0..len), commit. */
int rf_write_file_atomic(const char *path, const void *data, size_t len, struct rf_error *err);

#endif
