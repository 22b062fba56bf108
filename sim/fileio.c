/* Files the command writes: same-file tests by inode, and atomic whole-file replacement.
 * (The CLI's sim/fileio.c has the same contract; whichever is merged is the one kept.) */
/* realpath is an X/Open interface in glibc's headers. */
#define _XOPEN_SOURCE 700

#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int rf_same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (stat(a, &sa) != 0 || stat(b, &sb) != 0)
        return 0;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int write_all(int fd, const char *p, size_t len)
{
    while (len > 0) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int rf_write_file_atomic(const char *path, const void *data, size_t len, struct rf_error *err)
{
    char target[PATH_MAX], tmp[PATH_MAX + 32], dir[PATH_MAX];
    struct stat st;
    int fd = -1, rc = 0;
    tmp[0] = '\0';
    /* Through a link to its target, so that the link stays and the temp file is on the
     * target's file system (rename cannot cross them). */
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && realpath(path, target))
        path = target;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return rf_error_set(err, RF_EINVAL, "%s: not a regular file (it is replaced whole)", path);
    const char *slash = strrchr(path, '/');
    if (slash)
        snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path == 0 ? 1 : slash - path), path);
    else
        snprintf(dir, sizeof(dir), ".");
    /* O_EXCL with a fresh name rather than mkstemp: the file gets the usual mode (0666 less
     * the umask) that a plain fopen would have given it. */
    for (int attempt = 0; fd < 0; attempt++) {
        snprintf(tmp, sizeof(tmp), "%s.tmp%ld.%d", path, (long)getpid(), attempt);
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && (errno != EEXIST || attempt >= 100)) {
            rc = rf_error_set(err, RF_EIO, "%s: cannot write: %s", path, strerror(errno));
            tmp[0] = '\0';
            goto out;
        }
    }
    if (write_all(fd, data, len) < 0 || fsync(fd) != 0) {
        rc = rf_error_set(err, RF_EIO, "%s: write failed: %s", path, strerror(errno));
        goto out;
    }
    int c = close(fd);
    fd = -1;
    if (c != 0) {
        rc = rf_error_set(err, RF_EIO, "%s: write failed: %s", path, strerror(errno));
        goto out;
    }
    if (rename(tmp, path) != 0) {
        rc = rf_error_set(err, RF_EIO, "%s: cannot replace: %s", path, strerror(errno));
        goto out;
    }
    tmp[0] = '\0';
    /* The rename itself is durable once the folder is synced; a folder that cannot be
     * opened (no read permission) leaves only that step undone. */
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
out:
    if (fd >= 0)
        close(fd);
    if (tmp[0])
        unlink(tmp);
    return rc;
}
