/* `refit run --jobs N`: a study's points computed by N processes at once, then the study
 * replayed here as a serial run would go, taking each point's runs from the process that
 * computed it (models/lib/study.lua, Distribution, says how points are found and matched).
 *
 * The processes are fork()ed after the dry pass, so each holds the study's Lua state with
 * its recorded points; worker j computes points j+1, j+1+N, ... into its own database (a
 * shard in a private temporary directory) and says on a pipe when each is done, which is
 * the progress shown here. A worker that fails, or dies (the kernel's OOM killer), leaves
 * its remaining points out of its shard; the replay computes whatever it does not find, so
 * the user's database ends exactly as a serial run leaves it, and an error is reported at
 * the study's line where a serial run reports it. Each worker's memory is its own point's:
 * the study's peak is the largest point's, times the jobs at once. A study cut short by a
 * signal leaves no shard behind (on_cut). */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "cmd.h"
#include "refit_run.h"

struct shards {
    char dir[4096];
    int n;             /* workers, one shard each */
    int attached;      /* the shard attached to the user's database, or -1 */
    const int64_t *ks; /* the call number of each recorded point, ascending */
    size_t n_points;
    struct study_ctx *ctx;
    size_t taken, missed; /* the replay's calls answered from a shard, and not */
};

static void shard_path(const struct shards *sh, int j, char *out, size_t size)
{
    snprintf(out, size, "%s/shard-%d.db", sh->dir, j);
}

/* The files SQLite may leave of shard j: the database and its journals (k < SHARD_FILES). */
enum { SHARD_FILES = 4 };
static void shard_file(const struct shards *sh, int j, int k, char *out, size_t size)
{
    static const char *const ext[SHARD_FILES] = {"", "-journal", "-wal", "-shm"};
    shard_path(sh, j, out, size);
    size_t len = strlen(out);
    snprintf(out + len, size - len, "%s", ext[k]);
}

/* A study cut short by SIGTERM (a scheduler's, or kill), SIGINT (Ctrl-C) or SIGHUP leaves
 * nothing in TMPDIR, where the shards of a large study are gigabytes: the handler, with
 * async-signal-safe calls only, stops the jobs and waits for them, removes the shard files
 * and their folder, and dies of the signal as it would have. The user's database needs
 * nothing: SQLite's journal rolls a write cut short back when the file is next opened. A
 * signal ignored when refit started (a background job's SIGINT, nohup's SIGHUP) stays
 * ignored; the jobs get the handlers refit started with. */
static const int cut_signals[] = {SIGINT, SIGTERM, SIGHUP};
enum { N_CUT = sizeof(cut_signals) / sizeof(cut_signals[0]) };
static struct {
    char **paths; /* the shards' files: .db, -journal, -wal, -shm of each */
    int n_paths;
    const char *dir; /* NULL until made */
    const pid_t *pids;
    int n_pids; /* 0 once the jobs are reaped: their pids may be another's */
    struct sigaction old[N_CUT];
    bool set[N_CUT];
} cut;

static void on_cut(int sig)
{
    for (int j = 0; j < cut.n_pids; j++)
        if (cut.pids[j] > 0)
            kill(cut.pids[j], SIGTERM);
    for (int j = 0; j < cut.n_pids; j++)
        if (cut.pids[j] > 0)
            while (waitpid(cut.pids[j], NULL, 0) < 0 && errno == EINTR)
                ;
    for (int i = 0; i < cut.n_paths; i++)
        unlink(cut.paths[i]);
    if (cut.dir)
        rmdir(cut.dir);
    signal(sig, SIG_DFL);
    raise(sig);
}

static void cut_install(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_cut;
    sigfillset(&sa.sa_mask); /* one signal cleans up; the others wait for its death */
    for (int i = 0; i < N_CUT; i++) {
        cut.set[i] = sigaction(cut_signals[i], NULL, &cut.old[i]) == 0 &&
                     cut.old[i].sa_handler != SIG_IGN && sigaction(cut_signals[i], &sa, NULL) == 0;
    }
}

/* The handlers refit started with: in a job, and here once the shards are gone. */
static void cut_restore(void)
{
    for (int i = 0; i < N_CUT; i++)
        if (cut.set[i])
            sigaction(cut_signals[i], &cut.old[i], NULL);
    memset(cut.set, 0, sizeof(cut.set));
}

/* The shards' paths, for the handler; without memory for them a cut leaves them. */
static void cut_paths(const struct shards *sh)
{
    char **paths = calloc((size_t)sh->n * SHARD_FILES + 1, sizeof(*paths)); /* NULL-ended */
    int n = 0;
    for (int j = 0; paths && j < sh->n; j++)
        for (int k = 0; k < SHARD_FILES; k++) {
            char p[4200];
            shard_file(sh, j, k, p, sizeof(p));
            if ((paths[n] = strdup(p)))
                n++;
        }
    cut.paths = paths;
    cut.n_paths = n;
}

static void cut_release(void)
{
    cut_restore();
    cut.n_paths = cut.n_pids = 0;
    cut.dir = NULL;
    for (int i = 0; cut.paths && cut.paths[i]; i++)
        free(cut.paths[i]);
    free(cut.paths);
    cut.paths = NULL;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Worker j of n: its points into shard j, a byte on fd (-1: none) for each. The exit
 * status. */
static int work(struct cmd_env *env, struct study_ctx *ctx, const struct rf_study_dist *d,
                const struct shards *sh, int j, int fd)
{
    char path[4200];
    shard_path(sh, j, path, sizeof(path));
    struct lazy_store ls = {.path = path};
    /* The shard's own study row: the user's database gets the study's row in the replay. */
    struct rf_store_study study = *ctx->study;
    study.id = 0;
    study.pending = NULL;
    study.n_pending = 0;
    ctx->ls = &ls;
    ctx->study = &study;
    ctx->tty = false;
    ctx->progress = NULL;
    ctx->log_runs = true;
    int status = 0;
    for (size_t i = (size_t)j + 1; i <= d->n_points; i += (size_t)sh->n) {
        struct rf_error err = {0};
        int64_t k;
        char *fp = NULL, *result = NULL;
        size_t before = ctx->n_log;
        /* A point that fails is left out: the replay computes it and reports the error at
         * the study's line, after the runs a serial study stores before it. */
        int rc = rf_lua_study_point(env->L, d, i, &k, &fp, &result, &err);
        if (rc == 0 && (rc = lazy_store_get(&ls, &err)) == 0)
            rc = rf_store_point_save(&ls.st, k, fp, result, ctx->log + before, ctx->n_log - before,
                                     &err);
        free(fp);
        free(result);
        if (rc < 0)
            break;
        if (fd >= 0 && write(fd, "p", 1) != 1) {
            status = 1;
            break;
        }
    }
    lazy_store_close(&ls);
    free(ctx->log);
    return status;
}

/* dist.take of the replay (struct rf_study_dist): point k from the shard of the worker that
 * computed it, its runs copied into the user's database one transaction each. */
static int take(void *vsh, int64_t k, const char *fp, char **result, int64_t **old,
                int64_t **new_ids, size_t *n, struct rf_error *err)
{
    struct shards *sh = vsh;
    struct study_ctx *ctx = sh->ctx;
    size_t lo = 0, hi = sh->n_points;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (sh->ks[mid] < k)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == sh->n_points || sh->ks[lo] != k) {
        sh->missed++;
        return 0;
    }
    int owner = (int)(lo % (size_t)sh->n), rc;
    char path[4200];
    shard_path(sh, owner, path, sizeof(path));
    if (access(path, F_OK) != 0) { /* its worker computed nothing */
        sh->missed++;
        return 0;
    }
    if ((rc = lazy_store_get(ctx->ls, err)) < 0)
        return rc;
    struct rf_store *st = &ctx->ls->st;
    if (sh->attached != owner) {
        if (sh->attached >= 0)
            rf_store_detach(st);
        sh->attached = -1;
        if ((rc = rf_store_attach(st, path, err)) < 0)
            return rc;
        sh->attached = owner;
    }
    if ((rc = rf_store_point_take(st, k, fp, result, old, n, err)) <= 0) {
        sh->missed += rc == 0;
        return rc;
    }
    sh->taken++;
    *new_ids = calloc(*n + 1, sizeof(**new_ids));
    if (!*new_ids)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (size_t i = 0; i < *n; i++) {
        if ((rc = rf_store_import_run(st, (*old)[i], ctx->study, &(*new_ids)[i], err)) < 0)
            return rc;
        ctx->runs++;
        /* The run that stored the study's row stored its pending tables with it. */
        if (ctx->study && ctx->study->id > 0)
            study_pending_release(ctx->study);
    }
    return 1;
}

/* Removes the shards, what SQLite left beside them (a rank that died mid-write) and their
 * directory. */
static void remove_shards(const struct shards *sh)
{
    char path[4200];
    for (int j = 0; j < sh->n; j++)
        for (int k = 0; k < SHARD_FILES; k++) {
            shard_file(sh, j, k, path, sizeof(path));
            unlink(path);
        }
    rmdir(sh->dir);
}

int cmd_run_dist(struct cmd_env *env, struct study_ctx *ctx, const char *path, int jobs)
{
    struct rf_error err = {0};
    struct rf_study_dist dry = {.mode = RF_STUDY_DRY};
    struct shards sh = {.n = jobs, .attached = -1, .ctx = ctx};
    int64_t *ks = NULL;
    int rc = 0, fds[2] = {-1, -1};
    pid_t *pids = NULL;
    bool made_dir = false;
    if (rf_lua_run_study(env->L, path, study_run_one, study_table_one, ctx, &dry, &err) < 0)
        goto fail;
    ks = calloc(dry.n_points + 1, sizeof(*ks));
    pids = calloc((size_t)jobs, sizeof(*pids));
    if (!ks || !pids) {
        rf_error_set(&err, RF_ENOMEM, "out of memory");
        goto fail;
    }
    sh.ks = ks;
    sh.n_points = dry.n_points;
    if (dry.n_points > 0) {
        if (rf_lua_study_keys(env->L, &dry, ks, &err) < 0)
            goto fail;
        const char *tmp = getenv("TMPDIR");
        snprintf(sh.dir, sizeof(sh.dir), "%s/refit-run-XXXXXX", tmp && *tmp ? tmp : "/tmp");
        cut_install();
        if (!mkdtemp(sh.dir)) {
            rf_error_set(&err, RF_EIO, "%s: %s", sh.dir, strerror(errno));
            goto fail;
        }
        made_dir = true;
        cut_paths(&sh);
        cut.pids = pids;
        cut.dir = sh.dir;
        cut.n_pids = jobs;
        if (pipe(fds) != 0) {
            rf_error_set(&err, RF_EIO, "pipe: %s", strerror(errno));
            goto fail;
        }
        /* Nothing printed yet may be printed twice by the children. */
        fflush(stdout);
        fflush(stderr);
        int started = 0;
        for (int j = 0; j < jobs && (size_t)j < dry.n_points; j++, started++) {
            pid_t p = fork();
            if (p < 0) {
                rf_error_set(&err, RF_EIO, "fork: %s", strerror(errno));
                break;
            }
            if (p == 0) {
                cut_restore();
                close(fds[0]);
                _exit(work(env, ctx, &dry, &sh, j, fds[1]));
            }
            pids[j] = p;
        }
        close(fds[1]);
        fds[1] = -1;
        /* Progress: a byte per point done, until every worker closed the pipe. */
        double t0 = now_s();
        size_t done = 0;
        char buf[64];
        ssize_t got;
        while ((got = read(fds[0], buf, sizeof(buf))) != 0) {
            if (got < 0) {
                if (errno == EINTR)
                    continue;
                break;
            }
            done += (size_t)got;
            if (ctx->tty) {
                double el = now_s() - t0;
                fprintf(stderr,
                        "\rrefit run: %zu/%zu points on %d jobs, %.0f s, about %.0f s left ", done,
                        dry.n_points, jobs, el,
                        done ? el / (double)done * (double)(dry.n_points - done) : 0.0);
            }
        }
        if (ctx->tty)
            fputs("\r\033[K", stderr);
        for (int j = 0; j < started; j++) {
            int status = 0;
            while (waitpid(pids[j], &status, 0) < 0 && errno == EINTR)
                ;
            if (WIFSIGNALED(status))
                fprintf(stderr,
                        "refit run: job %d ended by signal %d; its points are computed "
                        "here\n",
                        j + 1, WTERMSIG(status));
        }
        cut.n_pids = 0;
        if (err.code)
            goto fail;
    }
    /* The replay: the study as a serial run goes, points taken from the shards. */
    struct rf_study_dist replay = {.mode = RF_STUDY_REPLAY, .take = take, .take_ctx = &sh};
    rc = rf_lua_run_study(env->L, path, study_run_one, study_table_one, ctx, &replay, &err);
    /* What ran where: a study whose calls follow from its results (the dry pass stops at
     * the first such call) runs those here, one at a time. */
    fprintf(stderr, "refit run: %d jobs computed %zu points; the replay took %zu, computed %zu\n",
            jobs, dry.n_points, sh.taken, sh.missed);
    if (rc < 0)
        goto fail;
    goto out;
fail:
    rc = cmd_fail(&err);
out:
    if (sh.attached >= 0 && env->ls.open)
        rf_store_detach(&env->ls.st);
    if (fds[0] >= 0)
        close(fds[0]);
    if (fds[1] >= 0)
        close(fds[1]);
    cut_restore();
    if (made_dir)
        remove_shards(&sh);
    cut_release();
    rf_lua_study_dist_release(env->L, &dry);
    free(ks);
    free(pids);
    return rc;
}

#ifdef RF_HAVE_MPI
#include <mpi.h>

/* The shard's bytes go to rank 0 in pieces of this size (MPI counts are int). */
enum { PIECE = 16 << 20 };

/* Rank r (> 0) sends its shard file to rank 0: its size (-1: none), then its bytes. */
static int send_shard(const char *path)
{
    FILE *f = fopen(path, "rb");
    long long size = -1;
    if (f && fseek(f, 0, SEEK_END) == 0) {
        size = ftell(f);
        rewind(f);
    }
    char *buf = size > 0 ? malloc(PIECE) : NULL;
    if (size > 0 && !buf)
        size = -1;
    MPI_Send(&size, 1, MPI_LONG_LONG, 0, 1, MPI_COMM_WORLD);
    for (long long at = 0; size > 0 && at < size;) {
        int n = (int)(size - at < PIECE ? size - at : PIECE);
        if (fread(buf, 1, (size_t)n, f) != (size_t)n)
            memset(buf, 0, (size_t)n); /* rank 0 finds no valid point in a damaged shard */
        MPI_Send(buf, n, MPI_BYTE, 0, 2, MPI_COMM_WORLD);
        at += n;
    }
    free(buf);
    if (f)
        fclose(f);
    return 0;
}

/* Rank 0 receives rank r's shard into path (nothing when it has none). */
static int recv_shard(int r, const char *path, struct rf_error *err)
{
    long long size = -1;
    MPI_Recv(&size, 1, MPI_LONG_LONG, r, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (size <= 0)
        return 0;
    FILE *f = fopen(path, "wb");
    char *buf = malloc(PIECE);
    int rc = f && buf ? 0 : rf_error_set(err, RF_EIO, "%s: %s", path, strerror(errno));
    for (long long at = 0; at < size;) {
        int n = (int)(size - at < PIECE ? size - at : PIECE);
        /* Every piece is received, written or not: rank r waits for each to be taken. */
        MPI_Recv(buf ? buf : (char[1]){0}, buf ? n : 0, MPI_BYTE, r, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        if (rc == 0 && fwrite(buf, 1, (size_t)n, f) != (size_t)n)
            rc = rf_error_set(err, RF_EIO, "%s: %s", path, strerror(errno));
        at += n;
    }
    free(buf);
    if (f && fclose(f) != 0 && rc == 0)
        rc = rf_error_set(err, RF_EIO, "%s: %s", path, strerror(errno));
    if (rc < 0)
        unlink(path);
    return rc;
}

/* mpirun -np N refit run STUDY.lua (or srun): every rank runs the dry pass (the study is
 * the same file for all) and computes its share into a shard in its own temporary folder,
 * local to its node; the shards travel to rank 0 over MPI, so no shared file system is
 * needed; rank 0 replays the study into the user's database and prints what a serial run
 * prints. The others print nothing. The exit status is rank 0's; the others' is 0 unless
 * their own part failed. */
static int run_mpi(struct cmd_env *env, struct study_ctx *ctx, const char *path)
{
    int rank = 0, size = 1, rc = 0;
    struct rf_error err = {0};
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        fprintf(stderr, "refit: %s: MPI_Init failed\n", path);
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    struct rf_study_dist dry = {.mode = RF_STUDY_DRY};
    struct shards sh = {.n = size, .attached = -1, .ctx = ctx};
    int64_t *ks = NULL;
    bool made_dir = false;
    char shard[4200];
    const char *tmp = getenv("TMPDIR");
    snprintf(sh.dir, sizeof(sh.dir), "%s/refit-run-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(sh.dir))
        rc = rf_error_set(&err, RF_EIO, "%s: %s", sh.dir, strerror(errno));
    else
        made_dir = true;
    if (rc == 0)
        rc = rf_lua_run_study(env->L, path, study_run_one, study_table_one, ctx, &dry, &err);
    if (rc == 0 && !(ks = calloc(dry.n_points + 1, sizeof(*ks))))
        rc = rf_error_set(&err, RF_ENOMEM, "out of memory");
    if (rc == 0)
        rc = rf_lua_study_keys(env->L, &dry, ks, &err);
    sh.ks = ks;
    sh.n_points = dry.n_points;
    /* Each rank's share, rank 0's too: work points the context (the one the study's calls
     * were given) at the shard, and it is put back after. A rank whose own part failed
     * sends no shard: rank 0 computes its points. */
    if (rc == 0) {
        struct study_ctx saved = *ctx;
        work(env, ctx, &dry, &sh, rank, -1);
        *ctx = saved;
    }
    if (rank > 0) {
        shard_path(&sh, rank, shard, sizeof(shard));
        send_shard(rc == 0 ? shard : "");
    } else {
        for (int r = 1; r < size; r++) {
            shard_path(&sh, r, shard, sizeof(shard));
            int got = recv_shard(r, shard, &err);
            if (got < 0 && rc == 0)
                rc = got;
        }
        if (rc == 0) {
            struct rf_study_dist replay = {.mode = RF_STUDY_REPLAY, .take = take, .take_ctx = &sh};
            rc = rf_lua_run_study(env->L, path, study_run_one, study_table_one, ctx, &replay, &err);
            fprintf(stderr,
                    "refit run: %d ranks computed %zu points; the replay took %zu, computed %zu\n",
                    size, dry.n_points, sh.taken, sh.missed);
        }
    }
    if (sh.attached >= 0 && env->ls.open)
        rf_store_detach(&env->ls.st);
    if (made_dir)
        remove_shards(&sh);
    rf_lua_study_dist_release(env->L, &dry);
    free(ks);
    int status = rc < 0 ? cmd_fail(&err) : 0;
    MPI_Finalize();
    return status;
}
#endif

/* The ranks of the MPI launcher that started this process (mpirun, mpiexec, srun with
 * PMI/PMIx), from the environment it sets; 1 when none did. */
static long launcher_size(void)
{
    /* Open MPI's mpirun; MPICH's and srun's PMI; srun's step (not a batch script's
     * SLURM_NTASKS: `refit run` alone inside an allocation is one process). */
    static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        char *end;
        long n = v ? strtol(v, &end, 10) : 0;
        if (v && end != v && n > 1)
            return n;
    }
    return 1;
}

int cmd_run_launched(struct cmd_env *env, struct study_ctx *ctx, const char *path, bool *launched)
{
    long n = launcher_size();
    *launched = n > 1;
    if (!*launched)
        return 0;
#ifdef RF_HAVE_MPI
    return run_mpi(env, ctx, path);
#else
    (void)env;
    (void)ctx;
    fprintf(stderr,
            "refit: %s: started as one of %ld ranks, but this refit was built without MPI "
            "(configure found no libopenmpi-dev): run it once, with --jobs N\n",
            path, n);
    return 1;
#endif
}
