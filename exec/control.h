/* The control plane of refit-exec over MPI: every wait has a deadline, a failing rank tells
 * rank 0, rank 0 records the failure and ends the job, and the launcher's signals are
 * reported. Both backends wait only through here, so no rank blocks without a timeout. */
#ifndef RF_CONTROL_H
#define RF_CONTROL_H

#include <mpi.h>
#include <stdbool.h>

#include "error.h"

/* Error codes of the executor, beyond sim/error.h's. */
enum {
    RF_ECOMM = -10,     /* a communication or device call failed */
    RF_ETIMEDOUT = -11, /* a wait passed its deadline: a rank hangs or died */
    RF_ESTOPPED = -12,  /* another rank failed, or the launcher ended the job */
};

struct rf_ctl {
    MPI_Comm comm; /* notices only: a duplicate of MPI_COMM_WORLD */
    int rank, size;
    double timeout; /* seconds one wait may take */
    /* Called while waiting, by backends whose work completes outside MPI (NCCL's async
     * errors); returns 0 or a negative code with err filled. */
    int (*poll_extra)(void *arg, struct rf_error *err);
    void *poll_arg;
    /* How long a wait yields its core before it sleeps between polls: 10 ms by default
     * (host ranks may share cores); the NCCL backend yields throughout, as each rank has
     * its own core and a late wake-up would add to the measured time of a round. */
    double yield_seconds;
    /* Where the rank is (the replay keeps it current: round, step, peers), for messages. */
    char where[256];
};

/* Duplicates the world for notices and installs the SIGTERM/SIGINT reporters. */
int rf_ctl_init(struct rf_ctl *c, double timeout, struct rf_error *err);
void rf_ctl_release(struct rf_ctl *c);

/* Checks for a failure notice (rank 0: from any rank; others: rank 0's stop), a signal
 * from the launcher and the backend's own errors. RF_ESTOPPED with the reason in err. */
int rf_ctl_poll(struct rf_ctl *c, struct rf_error *err);

/* A poll loop: call rf_ctl_tick(c, &t, what, err) until the awaited thing is done; it
 * polls, yields the core for the first yield_seconds, then sleeps up to 1 ms a tick, and fails with
 * RF_ETIMEDOUT once `timeout` seconds have passed since rf_ctl_wait_begin. */
struct rf_ctl_wait {
    double deadline;
    unsigned spins, sleeps;
};
void rf_ctl_wait_begin(const struct rf_ctl *c, struct rf_ctl_wait *w);
int rf_ctl_tick(struct rf_ctl *c, struct rf_ctl_wait *w, const char *what, struct rf_error *err);

/* Waits for n MPI requests (they are cancelled if the wait fails). */
int rf_ctl_waitall(struct rf_ctl *c, int n, MPI_Request *reqs, const char *what,
                   struct rf_error *err);
/* A barrier that honours the deadline. */
int rf_ctl_barrier(struct rf_ctl *c, MPI_Comm comm, struct rf_error *err);

/* Ends this rank's part after a failure (never returns). A rank other than 0 tells rank 0
 * why when `tell_root` (not when rank 0 told it to stop), then waits a grace period for
 * rank 0 to end the job and ends it itself if rank 0 does not. Rank 0, which has recorded
 * the failure, tells every rank why the job stops, gives them a moment to print it, and
 * aborts the job. */
_Noreturn void rf_ctl_leave(struct rf_ctl *c, const char *why, bool tell_root);

#endif
