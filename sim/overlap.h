/* Refit that overlaps generation (a scenario's `overlap`): how long each engine stalls and
 * how stale the weights are when the last engine has the new ones, beside the refit time. */
#ifndef RF_OVERLAP_H
#define RF_OVERLAP_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "layout.h"

struct rf_plan;
struct rf_topology;
struct rf_sim_options;

/* models/lib/scenario.lua's `overlap`; zeroed: none (the engines stop for the whole refit,
 * which is then both the stall and the staleness). */
struct rf_overlap {
    bool on;
    /* engines = "rolling": one engine at a time leaves generation and is refitted in place
     * while the others generate; else ("all") every engine is refitted at once while all
     * keep generating on the old weights. */
    bool rolling;
    /* granularity = "layer": an engine that keeps generating lands the new weights a layer
     * at a time (a one-layer buffer); else ("model") in a whole second copy. */
    bool layer;
    /* Generation's own traffic on each inference GPU's NVLink and NIC ports while it runs,
     * bytes/s each way (0: none given): the refit of engines that keep generating shares
     * those ports. */
    double generation_bps;
};

struct rf_overlap_result {
    double refit_s;      /* all: the refit on ports shared with generation; rolling: one
                          * engine's refit alone */
    double stall_s;      /* the longest any engine cannot generate */
    double staleness_s;  /* from the end of the training step to new weights on the last
                          * engine */
    int64_t apply_bytes; /* all: what the busiest engine GPU copies into its parameters */
    int64_t engines;
};

/* What an inference GPU lands beside its weights under o, for the memory fit
 * (rf_memory_opts.landing): a second copy (all, model), a layer (all, layer), none. */
int rf_overlap_landing(const struct rf_overlap *o);

/* Predicts o for a simulated plan whose whole refit took whole_s on topo, with opts as the
 * prediction's (the overlap's simulations add their own masks and capacities):
 * - all: the plan simulated again with each inference GPU's NVLink and NIC ports less
 *   generation_bps (when given); each engine then stalls to copy its new shard into its
 *   parameters at the GPU's copy rate (the busiest GPU's bytes); the staleness is the
 *   refit plus that copy.
 * - rolling: the plan's deliveries to one engine (the first; engines of one layout receive
 *   alike) simulated alone; an engine stalls for that time, and the last one has its
 *   weights after engines x that time.
 * A generation figure at or above a port's capacity is RF_EINVAL. */
int rf_overlap_predict(const struct rf_overlap *o, const struct rf_plan *plan,
                       const struct rf_side *train, const struct rf_side *infer,
                       const struct rf_topology *topo, const struct rf_sim_options *opts,
                       double whole_s, struct rf_overlap_result *out, struct rf_error *err);

#endif
