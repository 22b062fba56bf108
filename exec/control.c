/* Deadlines, failure notices and signals. A rank never sits in a blocking MPI call: it
 * tests its requests in a loop that also looks for notices, so a dead or hung peer turns
 * into a clear error on every rank that waits for it, within the timeout. */
#include "control.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MSG_LEN 512
/* Notices travel on the control communicator, so these tags never meet data messages. */
enum { TAG_FAIL = 1, TAG_STOP = 2 };
/* How long a failed rank waits for rank 0 to end the job before ending it itself, and how
 * long rank 0 gives the others to print why they stop. */
#define GRACE_SECONDS 10.0
#define STOP_SECONDS 0.5

static volatile sig_atomic_t got_signal;
static int signal_rank;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Appends decimal v to buf at *n (async-signal-safe: no stdio). */
static void put_int(char *buf, size_t *n, int v)
{
    char d[16];
    int k = 0;
    if (v < 0) {
        buf[(*n)++] = '-';
        v = -v;
    }
    do
        d[k++] = (char)('0' + v % 10);
    while ((v /= 10) > 0 && k < 15);
    while (k > 0)
        buf[(*n)++] = d[--k];
}

static void put_str(char *buf, size_t *n, const char *s)
{
    while (*s)
        buf[(*n)++] = *s++;
}

/* The launcher (mpirun, srun) ends a job with SIGTERM when one of its processes dies. Every
 * rank says so on stderr; rank 0 then returns so its next poll can record the failure,
 * the others end at once with the default action. */
static void on_signal(int sig)
{
    char buf[200];
    size_t n = 0;
    put_str(buf, &n, "refit-exec: rank ");
    put_int(buf, &n, signal_rank);
    put_str(buf, &n, ": terminated by signal ");
    put_int(buf, &n, sig);
    put_str(buf, &n, " (the launcher ended the job: a rank died or was killed)\n");
    ssize_t w = write(STDERR_FILENO, buf, n);
    (void)w;
    if (signal_rank != 0 || got_signal) {
        signal(sig, SIG_DFL);
        raise(sig);
    }
    got_signal = sig;
}

int rf_ctl_init(struct rf_ctl *c, double timeout, struct rf_error *err)
{
    memset(c, 0, sizeof(*c));
    c->timeout = timeout;
    c->yield_seconds = 0.01;
    /* Errors come back as codes (every call is checked) instead of killing the job. */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &c->size);
    if (MPI_Comm_dup(MPI_COMM_WORLD, &c->comm) != MPI_SUCCESS)
        return rf_error_set(err, RF_ECOMM, "MPI_Comm_dup failed");
    signal_rank = c->rank;
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    return 0;
}

void rf_ctl_release(struct rf_ctl *c)
{
    /* After the replay there is nothing to report: a launcher that stops ranks which are
     * already finishing (because another rank's exit status is non-zero) is no failure. */
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    if (c->comm != MPI_COMM_NULL && c->comm != 0)
        MPI_Comm_free(&c->comm);
    c->comm = MPI_COMM_NULL;
}

int rf_ctl_poll(struct rf_ctl *c, struct rf_error *err)
{
    int flag = 0;
    MPI_Status st;
    char msg[MSG_LEN];

    if (got_signal)
        return rf_error_set(err, RF_ESTOPPED,
                            "terminated by signal %d: the launcher ended the job (a rank died or "
                            "was killed)",
                            (int)got_signal);
    int tag = c->rank == 0 ? TAG_FAIL : TAG_STOP;
    int from = c->rank == 0 ? MPI_ANY_SOURCE : 0;
    MPI_Iprobe(from, tag, c->comm, &flag, &st);
    if (flag) {
        MPI_Recv(msg, MSG_LEN, MPI_CHAR, st.MPI_SOURCE, tag, c->comm, MPI_STATUS_IGNORE);
        msg[MSG_LEN - 1] = '\0';
        if (c->rank == 0)
            return rf_error_set(err, RF_ESTOPPED, "rank %d failed: %s", st.MPI_SOURCE, msg);
        return rf_error_set(err, RF_ESTOPPED, "stopping: %s", msg);
    }
    if (c->poll_extra)
        return c->poll_extra(c->poll_arg, err);
    return 0;
}

void rf_ctl_wait_begin(const struct rf_ctl *c, struct rf_ctl_wait *w)
{
    w->deadline = now() + c->timeout;
    w->spins = 0;
    w->sleeps = 0;
}

int rf_ctl_tick(struct rf_ctl *c, struct rf_ctl_wait *w, const char *what, struct rf_error *err)
{
    int rc;
    /* Notices are looked for every 64 ticks (an MPI_Iprobe is cheap, but not free), the
     * launcher's signal at every tick. */
    if ((got_signal || (w->spins & 63) == 0) && (rc = rf_ctl_poll(c, err)) < 0)
        return rc;
    if ((w->spins & 63) == 0 && now() > w->deadline)
        return rf_error_set(err, RF_ETIMEDOUT,
                            "timed out after %g s waiting for %s%s%s (a rank hangs or died)",
                            c->timeout, what, c->where[0] ? " in " : "", c->where);
    /* Yield at first: a rank that shares its core with others (mpirun --oversubscribe)
     * hands it to one that has work, and the wait still ends within microseconds of its
     * completion, which measured times need. Longer waits back off to 1 ms sleeps, so a
     * hung peer costs no CPU while the deadline runs. */
    if (now() < w->deadline - c->timeout + c->yield_seconds) {
        sched_yield();
    } else {
        long ns = w->sleeps < 10 ? 1000L << w->sleeps : 1000000L;
        w->sleeps++;
        nanosleep(&(struct timespec){0, ns}, NULL);
    }
    w->spins++;
    return 0;
}

int rf_ctl_waitall(struct rf_ctl *c, int n, MPI_Request *reqs, const char *what,
                   struct rf_error *err)
{
    struct rf_ctl_wait w;
    int rc = 0, done = 0;
    rf_ctl_wait_begin(c, &w);
    /* A failed wait leaves its requests pending: the job is ending, and collective
     * requests cannot be cancelled. */
    for (;;) {
        /* Once the launcher has signalled, MPI may block on its dead peer: stop calling. */
        if (got_signal)
            return rf_ctl_poll(c, err);
        if (MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            return rf_error_set(err, RF_ECOMM, "MPI failed while waiting for %s", what);
        if (done)
            return 0;
        if ((rc = rf_ctl_tick(c, &w, what, err)) < 0)
            return rc;
    }
}

int rf_ctl_barrier(struct rf_ctl *c, MPI_Comm comm, struct rf_error *err)
{
    MPI_Request r;
    if (MPI_Ibarrier(comm, &r) != MPI_SUCCESS)
        return rf_error_set(err, RF_ECOMM, "MPI_Ibarrier failed");
    return rf_ctl_waitall(c, 1, &r, "a barrier (every rank)", err);
}

_Noreturn void rf_ctl_leave(struct rf_ctl *c, const char *why, bool tell_root)
{
    static char msg[MSG_LEN];
    snprintf(msg, sizeof(msg), "%s", why);
    fflush(stdout);
    fflush(stderr);
    /* The launcher is ending the job already, and MPI may block on the dead peer. */
    if (got_signal)
        _exit(1);
    /* This rank has said why it stops; the launcher's SIGTERM needs no second line. */
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    if (c->rank == 0) {
        /* Every rank that still polls prints why it stops; then the job ends. */
        static MPI_Request reqs[4096];
        int n = 0;
        for (int r = 1; r < c->size && n < 4096; r++)
            MPI_Isend(msg, MSG_LEN, MPI_CHAR, r, TAG_STOP, c->comm, &reqs[n++]);
        double end = now() + STOP_SECONDS;
        while (now() < end) {
            int done = 0;
            MPI_Testall(n, reqs, &done, MPI_STATUSES_IGNORE);
            if (done)
                break;
            nanosleep(&(struct timespec){0, 1000000L}, NULL);
        }
        /* Give the stopped ranks a moment to print before the launcher kills them. */
        nanosleep(&(struct timespec){0, 200000000L}, NULL);
        MPI_Abort(MPI_COMM_WORLD, 1);
    } else {
        MPI_Request req = MPI_REQUEST_NULL;
        if (tell_root)
            MPI_Isend(msg, MSG_LEN, MPI_CHAR, 0, TAG_FAIL, c->comm, &req);
        double end = now() + GRACE_SECONDS;
        while (now() < end) {
            int done = 0;
            if (req != MPI_REQUEST_NULL)
                MPI_Test(&req, &done, MPI_STATUS_IGNORE);
            else
                MPI_Iprobe(0, TAG_STOP, c->comm, &done, MPI_STATUS_IGNORE);
            nanosleep(&(struct timespec){0, 5000000L}, NULL);
        }
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    _exit(1); /* MPI_Abort does not return; this is for the compiler and odd MPIs */
}
