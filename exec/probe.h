/* refit-exec --probe: microbenchmarks of one rank's device through its backend (the copies,
 * conversion, fill, check and exchange a replay is made of), each the median of timed
 * iterations; with several ranks each probes its own device and rank 0 prints them all. */
#ifndef RF_PROBE_H
#define RF_PROBE_H

#include "backend.h"

struct rf_probe_opts {
    int64_t bytes; /* per buffer, before the cap (a quarter of the pool's free memory) */
    int64_t iters, warmup;
    bool json;
};

/* Runs every probe on every rank (a collective call) and prints the results on rank 0's
 * stdout: a table, or with json one object (README: refit-exec --probe). Returns (on rank 0)
 * 0 when every probe is ok or unsupported and 1 when one failed (its status says why);
 * RF_EINVAL on every rank alike when the buffers would be too small (nothing ran); another
 * negative code when the job must end (a deadline passed, another rank failed). */
int rf_probe_run(struct rf_backend *be, const struct rf_probe_opts *o, struct rf_error *err);

#endif
