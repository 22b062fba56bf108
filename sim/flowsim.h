/* The flow-level network simulator: a fluid model in which every active flow gets its max-min
 * fair rate under link capacities and its own rate cap, with flows released in barrier groups. */
#ifndef RF_FLOWSIM_H
#define RF_FLOWSIM_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct rf_flowsim; /* opaque */

/* One flow. The path is copied by rf_flowsim_add; its order does not matter (a fluid flow
 * occupies all its links at once). */
struct rf_flow_spec {
    double bytes;     /* payload; 0 allowed (pure latency) */
    double latency_s; /* fixed delay after release before bytes start moving (alpha) */
    /* Fixed time after its bytes have moved before the flow counts as finished: its links
     * are free, its group is not (a pipeline's drain). 0 for most flows. */
    double tail_s;
    double rate_cap;     /* bytes/s upper bound of this flow alone; 0 = none */
    const int32_t *path; /* link indices the flow crosses, each at most once */
    int path_len;
    int32_t group; /* >= 0: the flow is released when its group starts */
};

/* What one run cost: flows and the rate classes they were merged into (flows with one path
 * and one rate cap share a rate), events (instants at which flows activated or completed,
 * near-simultaneous ones batched), rate solves and the classes they re-rated in total (the
 * work of the incremental solver). */
struct rf_flowsim_stats {
    int64_t flows, classes, groups;
    int64_t events, solves, solved_classes;
};

/* capacity: n_links rates in bytes/s, each > 0 and finite. */
int rf_flowsim_new(struct rf_flowsim **out, size_t n_links, const double *capacity,
                   struct rf_error *err);
void rf_flowsim_free(struct rf_flowsim *fs); /* NULL ok */

/* Returns the flow index (>= 0, in order of addition) or a negative RF_E* code. */
int rf_flowsim_add(struct rf_flowsim *fs, const struct rf_flow_spec *f, struct rf_error *err);

/* Group `group` starts when group `prerequisite` has finished (a barrier); several may be
 * given and the group starts at the latest of their finishes. Groups without prerequisites
 * start at time 0. */
int rf_flowsim_after(struct rf_flowsim *fs, int32_t group, int32_t prerequisite,
                     struct rf_error *err);

/* Completions (and activations) within rel x (time since the latest group start) of the
 * earliest one are processed as one event at that instant: those flows finish up to that
 * much early, an error relative to the running group's elapsed time. The default, 1e-11
 * (of absolute time), is exact to rounding; a larger tolerance trades that error for fewer
 * events when many flows of different sizes share a saturated link (each event re-rates
 * them all). */
void rf_flowsim_set_tolerance(struct rf_flowsim *fs, double rel);

/* The flows are run once: rf_flowsim_run frees their specs as soon as it has merged them
 * into members and classes (Kimi K3 onto 4,096 GPUs: 4.9 M flows, 0.3 GB held through the
 * run for nothing). Results stay readable; adding flows or running again is then
 * RF_EINVAL. */
void rf_flowsim_set_once(struct rf_flowsim *fs);

/* Simulates every flow added so far (again from time 0 when called a second time, unless
 * rf_flowsim_set_once). A cycle among groups is RF_EINVAL. */
int rf_flowsim_run(struct rf_flowsim *fs, struct rf_error *err);

/* Results of the last run; NAN for an index out of range, before a run, or once flows or
 * barriers were added after it. Link bytes are those of the flows that crossed the link;
 * busy time is the total time during which some flow was moving on it. */
double rf_flowsim_flow_finish(const struct rf_flowsim *fs, int64_t flow);
double rf_flowsim_group_start(const struct rf_flowsim *fs, int32_t group);
double rf_flowsim_group_finish(const struct rf_flowsim *fs, int32_t group); /* = start if empty */
double rf_flowsim_makespan(const struct rf_flowsim *fs);
const double *rf_flowsim_link_bytes(const struct rf_flowsim *fs); /* bytes each link carried */
const double *rf_flowsim_link_busy(const struct rf_flowsim *fs);  /* seconds at nonzero rate */
void rf_flowsim_stats(const struct rf_flowsim *fs, struct rf_flowsim_stats *out);

#endif
