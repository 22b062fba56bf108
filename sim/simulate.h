/* Prediction: the stored plan's schedule replayed as flows over the cluster's links (max-min
 * fair sharing in sim/flowsim.c), plus the strategy-independent lower bound. */
#ifndef RF_SIMULATE_H
#define RF_SIMULATE_H

#include "bound.h"
#include "plan.h"
#include "topology.h"

/* Phases a prediction reports times for. */
enum rf_sim_phase {
    RF_SIM_GATHER,    /* shards to the broadcast root */
    RF_SIM_DELIVER,   /* training shards into inference buffers */
    RF_SIM_FANOUT,    /* forwarded copies inside an NVLink domain (hierarchical) */
    RF_SIM_BROADCAST, /* broadcast collectives */
    RF_SIM_LOCAL,     /* same-GPU copies */
    RF_SIM_DIFF,      /* a delta update's senders encode the changes (sim/update_phases.c) */
    RF_SIM_SCATTER,   /* ... and its receivers scatter them into their weights */
    RF_SIM_MERGE,     /* a merged LoRA update's engine folds B A into its weights */
    RF_SIM_PHASE_COUNT
};

struct rf_prediction {
    double predicted_s;
    double lower_bound_s;
    int64_t nvlink_bytes; /* bytes over NVLink ports (each NVLink hop once) */
    int64_t fabric_bytes; /* bytes injected into the network by NICs */
    int32_t bottleneck;   /* link with the longest busy time */
    size_t n_links;
    double *link_bytes, *link_busy;
    int32_t n_rounds;
    double *round_start, *round_finish;
    double phase_start[RF_SIM_PHASE_COUNT], phase_finish[RF_SIM_PHASE_COUNT];
    int64_t phase_bytes[RF_SIM_PHASE_COUNT];
    int64_t messages, flows, events;
    double sim_seconds; /* wall time of the simulation itself */
};

const char *rf_sim_phase_name(enum rf_sim_phase phase);

/* How the simulator runs; the command fills it (from REFIT_SIM_TOLERANCE and REFIT_THREADS):
 * the library reads no environment. A zeroed struct, or NULL where one is taken, means the
 * defaults. */
/* k of n steps of phase are done (k 0: the phase starts; n 0: it has no count). The
 * library only calls it; a command decides whether and how it is shown (sim/progress.h). */
typedef void (*rf_progress_fn)(void *ctx, int64_t k, int64_t n, const char *phase);

struct rf_sim_options {
    /* Event batching: completions within this fraction of the running round's elapsed time
     * are one event, so flows may finish up to that much early, and every bound is lowered
     * by twice it. 0: RF_SIM_TOLERANCE_DEFAULT; else within [RF_SIM_TOLERANCE_MIN,
     * RF_SIM_TOLERANCE_MAX] (outside is RF_EINVAL). */
    double tolerance;
    /* auto's worker threads for independent candidates; 0: the online CPUs, at most 2.
     * Above auto's own limit (8) means that limit. The result does not depend on it. */
    int threads;
    /* A part of the plan (sim/step.c's phases): tensor_mask[i] 0 leaves plan tensor i out
     * (its transfers and broadcasts are not simulated; NULL: every tensor), and skip_gather
     * leaves out the point-to-point gathers to broadcast roots (a framework whose export
     * puts whole tensors on the root another way, modelled as its export phase). */
    const uint8_t *tensor_mask;
    bool skip_gather;
    /* Deliveries only to the GPUs dst_mask marks (one engine: sim/overlap.c; NULL: every
     * GPU). A relay's member outside it is left out, its successor fed as if it held the
     * box; broadcasts are simulated whole. */
    const uint8_t *dst_mask;
    /* Progress of long work for a terminal (NULL: none): auto calls it as its candidates
     * are bounded and predicted, one call at a time (see rf_progress_fn). */
    rf_progress_fn progress;
    void *progress_ctx;
    /* The most memory a run may be estimated to need before any work (refit_run.c): a
     * larger plan is refused up front with its estimate. 0: no limit. */
    int64_t max_memory;
};

/* The most one simulation of a plan holds per delivery, when a whole plan falls in one
 * round and no message merges early: the message and the sort's scratch copy of it
 * (sim/simulate_round.c): rf_plan_estimate's deliveries times this is the simulator's part
 * of a run's memory estimate. */
int64_t rf_simulate_delivery_bytes(void);

/* One plan in flight's estimated bytes, from its size (rf_plan_estimate): its boxes and
 * transfer runs, and then the larger of what comes beside them in turn: the schedule's
 * pieces while it splits the runs into rounds (rf_schedule_delivery_bytes), or, when it is
 * simulated (`simulated`), its messages. An upper bound of the arrays that grow with the
 * plan: sim/refit_run.c and the layout search (sim/search.c) hold it against max_memory. */
double rf_plan_in_flight_bytes(const struct rf_plan_size *size, bool simulated);

#define RF_SIM_TOLERANCE_DEFAULT 1e-3
/* At and below 1e-11 the flow engine is exact to rounding. */
#define RF_SIM_TOLERANCE_MIN 1e-12
/* Above this the batching error is no longer small against the fixed costs it rounds, and
 * the margin of the bounds (twice it) would make them loose; see README (Simulator). */
#define RF_SIM_TOLERANCE_MAX 1e-2
#define RF_SIM_THREADS_MAX 256

/* The tolerance opts asks for (the default for NULL or 0), or RF_EINVAL when it is out of
 * range or not finite. */
int rf_sim_options_tolerance(const struct rf_sim_options *opts, double *tolerance,
                             struct rf_error *err);

/* Simulates a scheduled plan; fills out (release with rf_prediction_release). */
int rf_simulate(const struct rf_plan *plan, const struct rf_side *train,
                const struct rf_side *infer, const struct rf_topology *topo,
                const struct rf_sim_options *opts, struct rf_prediction *out, struct rf_error *err);
void rf_prediction_release(struct rf_prediction *pred);

/* A lower bound of what rf_simulate predicts for this scheduled plan, at a fraction of its
 * cost: the same messages, latencies, caps and barriers, but each round reduced to its
 * least duration (its busiest link at full rate, or its slowest message alone) and
 * chained through its barriers, and held to the busiest link's whole-run load. With
 * estimate (may be NULL), also a rough prediction from the same rounds: links serve rounds
 * first come, first served (see simulate.c). Computed for each of n_topos topologies of
 * one cluster that differ only in routing (PXN on and off), sharing the messages; bound
 * and estimate hold one value per topology. auto bounds and ranks candidates with them. */
#define RF_SIM_MAX_TOPOLOGIES 2
int rf_simulate_bound(const struct rf_plan *plan, const struct rf_side *train,
                      const struct rf_side *infer, const struct rf_topology *const *topos,
                      int n_topos, const struct rf_sim_options *opts, double *bound,
                      double *estimate, struct rf_error *err);

#endif
