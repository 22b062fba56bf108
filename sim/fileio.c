/* Output files: the same-file test that keeps a command from overwriting its input, and the
 * atomic replacement (temp file in the same folder, fsync, rename) every output goes through. */
/* realpath is an XSI interface. */
#define _XOPEN_SOURCE 700

#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
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

/* The directory part of path ("." when there is none) into dir, the last part into *base. */
static int split_path(const char *path, char *dir, size_t size, const char **base)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        *base = path;
        return snprintf(dir, size, ".") < (int)size ? 0 : -1;
    }
    *base = slash + 1;
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    if (n >= size)
        return -1;
    memcpy(dir, path, n);
    dir[n] = '\0';
    return 0;
}

/* An absolute name for path that does not depend on how it is spelled: the resolved folder
 * plus the last part (which need not exist). With follow, an existing path is resolved to
 * its final target, as SQLite does for a database file. */
static bool canonical(const char *path, bool follow, char *buf, size_t size)
{
    char dir[PATH_MAX], rdir[PATH_MAX];
    const char *base;
    if (follow && size >= PATH_MAX && realpath(path, buf))
        return true;
    if (split_path(path, dir, sizeof(dir), &base) < 0 || !realpath(dir, rdir))
        return false;
    int n = snprintf(buf, size, "%s/%s", strcmp(rdir, "/") == 0 ? "" : rdir, base);
    return n > 0 && (size_t)n < size;
}

int rf_is_db_file(const char *out, const char *db)
{
    static const char *const tails[] = {"", "-wal", "-shm", "-journal"};
    char name[PATH_MAX + 16], cout[PATH_MAX], cdb[PATH_MAX];
    for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
        snprintf(name, sizeof(name), "%s%s", db, tails[i]);
        if (rf_same_file(out, name))
            return i == 0 ? 1 : 2;
    }
    /* Companions that do not exist yet are found by name: SQLite puts them beside the
     * resolved database file. */
    if (!canonical(out, false, cout, sizeof(cout)) || !canonical(db, true, cdb, sizeof(cdb)))
        return 0;
    size_t n = strlen(cdb);
    if (strncmp(cout, cdb, n) != 0)
        return 0;
    for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++)
        if (strcmp(cout + n, tails[i]) == 0)
            return i == 0 ? 1 : 2;
    return 0;
}

int rf_check_output(const char *out, const char *db, struct rf_error *err)
{
    int is = rf_is_db_file(out, db);
    if (is)
        return rf_error_set(err, RF_EINVAL, "%s: is the database %s%s; name another output", out,
                            db, is == 2 ? "'s WAL, shared memory or journal" : "");
    return 0;
}

int rf_atomic_write_begin(struct rf_atomic_file *af, const char *path, struct rf_error *err)
{
    static unsigned counter;
    char dir[PATH_MAX];
    const char *base;
    struct stat st;
    int fd = -1;
    memset(af, 0, sizeof(*af));
    if (snprintf(af->path, sizeof(af->path), "%s", path) >= (int)sizeof(af->path) ||
        split_path(path, dir, sizeof(dir), &base) < 0)
        return rf_error_set(err, RF_EINVAL, "%s: path too long", path);
    if (*base == '\0')
        return rf_error_set(err, RF_EINVAL, "%s: not a file name", path);
    /* Through a symbolic link to its target, so the user's link stays a link (and the
     * temporary file lies on the target's file system: rename cannot cross them). */
    char target[PATH_MAX];
    if (lstat(path, &st) == 0 && S_ISLNK(st.st_mode) && realpath(path, target)) {
        snprintf(af->path, sizeof(af->path), "%s", target);
        path = af->path;
        if (split_path(path, dir, sizeof(dir), &base) < 0)
            return rf_error_set(err, RF_EINVAL, "%s: path too long", path);
    }
    /* Only a regular file is replaced: as root, renaming over /dev/null or a FIFO would
     * replace the device node itself. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode))
        return rf_error_set(err, RF_EINVAL, "%s: not a regular file (an output is replaced whole)",
                            path);
    /* A hidden name of our own in the same folder, so the rename cannot cross file systems
     * and never clobbers a file of the user's; O_EXCL makes it ours, and mode 0666 lets the
     * umask decide a new file's permissions as for any file a program creates. */
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        snprintf(af->tmp, sizeof(af->tmp), "%s/.%s.%ld-%u.tmp", dir, base, (long)getpid(),
                 counter++);
        fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    if (fd < 0) {
        int e = errno;
        af->tmp[0] = '\0';
        return rf_error_set(err, RF_EIO, "%s: cannot create a file in %s: %s", path, dir,
                            strerror(e));
    }
    /* Replacing an existing file keeps the permissions its owner gave it. */
    if (stat(path, &st) == 0 && S_ISREG(st.st_mode))
        (void)fchmod(fd, st.st_mode & 07777);
    if (!(af->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        rf_atomic_write_abort(af);
        return rf_error_set(err, RF_EIO, "%s: %s", path, strerror(e));
    }
    return 0;
}

void rf_atomic_write_abort(struct rf_atomic_file *af)
{
    if (af->f) {
        fclose(af->f);
        af->f = NULL;
    }
    if (af->tmp[0]) {
        unlink(af->tmp);
        af->tmp[0] = '\0';
    }
}

int rf_atomic_write_commit(struct rf_atomic_file *af, struct rf_error *err)
{
    int e = 0;
    if (!af->f)
        return rf_error_set(err, RF_EINVAL, "%s: not open for writing", af->path);
    if (fflush(af->f) != 0 || ferror(af->f))
        e = errno ? errno : EIO;
    else if (fsync(fileno(af->f)) != 0)
        e = errno;
    int closed = fclose(af->f);
    af->f = NULL;
    if (!e && closed != 0)
        e = errno;
    if (!e && rename(af->tmp, af->path) != 0)
        e = errno;
    if (e) {
        rf_atomic_write_abort(af);
        return rf_error_set(err, RF_EIO, "%s: %s", af->path, strerror(e));
    }
    af->tmp[0] = '\0';
    /* The rename itself survives a crash once the folder is synced; a folder that cannot be
     * opened or synced (some file systems) leaves the file written all the same. */
    char dir[PATH_MAX];
    const char *base;
    if (split_path(af->path, dir, sizeof(dir), &base) == 0) {
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
    }
    return 0;
}

int rf_write_file_atomic(const char *path, const void *data, size_t len, struct rf_error *err)
{
    struct rf_atomic_file af;
    int rc = rf_atomic_write_begin(&af, path, err);
    if (rc < 0)
        return rc;
    if (len > 0 && fwrite(data, 1, len, af.f) != len) {
        int e = errno ? errno : EIO;
        rf_atomic_write_abort(&af);
        return rf_error_set(err, RF_EIO, "%s: %s", path, strerror(e));
    }
    return rf_atomic_write_commit(&af, err);
}
