/* Prediction: the stored plan's schedule replayed as flows over the cluster's links (max-min
 * fair sharing in sim/flowsim.c), plus the strategy-independent lower bound. */
#ifndef RF_SIMULATE_H
#define RF_SIMULATE_H

#include "plan.h"
#include "topology.h"

/* Phases a prediction reports times for. */
enum rf_sim_phase {
    RF_SIM_GATHER,    /* shards to the broadcast root */
    RF_SIM_DELIVER,   /* training shards into inference buffers */
    RF_SIM_FANOUT,    /* forwarded copies inside an NVLink domain (hierarchical) */
    RF_SIM_BROADCAST, /* broadcast collectives */
    RF_SIM_LOCAL,     /* same-GPU copies */
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

/* Lower bound of any refit of plan's tensors between these sides on this topology: the
 * largest of (bytes a GPU must receive / its NVLink + NIC ingress) and (bytes an NVLink
 * domain must receive from outside / its NICs' ingress). */
int rf_lower_bound(const struct rf_plan *plan, const struct rf_side *train,
                   const struct rf_side *infer, const struct rf_topology *topo, double *bound,
                   struct rf_error *err);

/* A cheap lower bound of one plan's time: the most loaded link's bytes over its capacity,
 * counting point-to-point transfers only (broadcast chains excluded). */
double rf_plan_link_bound(const struct rf_plan *plan, const struct rf_topology *topo);

/* Simulates a scheduled plan; fills out (release with rf_prediction_release). */
int rf_simulate(const struct rf_plan *plan, const struct rf_side *train,
                const struct rf_side *infer, const struct rf_topology *topo,
                struct rf_prediction *out, struct rf_error *err);
void rf_prediction_release(struct rf_prediction *pred);

#endif
