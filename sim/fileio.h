/* Files the command writes: whether two paths name one file, and a whole file replaced
 * atomically (temp file in the same folder, fsync, rename), so no reader sees half of it. */
#ifndef RF_FILEIO_H
#define RF_FILEIO_H

#include <stddef.h>

#include "error.h"

/* 1 when a and b both exist and are the same file (device and inode, links followed), else
 * 0 (different, or either absent). */
int rf_same_file(const char *a, const char *b);

/* Writes len bytes of data as the file path: into a new temp file beside it, fsync, then
 * rename over path. On failure path is untouched and no temp file is left. A path that
 * exists but is not a regular file (a device, a folder) is RF_EINVAL; a symbolic link to a
 * regular file is written through (its target is replaced). */
int rf_write_file_atomic(const char *path, const void *data, size_t len, struct rf_error *err);

#endif
