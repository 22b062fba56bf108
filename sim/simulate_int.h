/* The simulator's internals, shared by its three parts: sim/simulate.c (a plan's rounds as
 * flow groups and barriers, the prediction), sim/simulate_round.c (one round's messages and
 * broadcast chains as flows) and sim/simulate_bound.c (bound mode: rf_simulate_bound). */
#ifndef RF_SIMULATE_INT_H
#define RF_SIMULATE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "flowsim.h"
#include "ring.h"
#include "simulate.h"

/* One message (or local copy) of a round before merging. */
struct msg {
    int32_t src, dst;
    uint8_t phase;
    uint8_t quant; /* the sender's quantiser it passes: RF_QUANT_NONE, _FP8 or _4BIT */
    uint16_t hop;  /* the transfer's (sim/schedule.h), at most UINT16_MAX: messages merge per hop */
    int32_t runs;
    /* In a pipelined round, the most pieces (chunks) one of its items travels in: the
     * executor sends each item of such a round as a message of its own, its pieces in
     * consecutive steps, and items of one hop side by side (exec/program.c). 0 in a plain
     * round, where the merged message is what travels in pieces. */
    int32_t pieces;
    /* A relay's pipeline fill (sim_relay_fill) on each topology: it starts forwarding once
     * the first chunk of every hop before it has landed. */
    float fill[RF_SIM_MAX_TOPOLOGIES];
    int64_t bytes;
};

/* The broadcasts of one round with one root and member set, merged into one chain. */
struct chain {
    const struct rf_collective *c;
    int64_t bytes;
    uint8_t quant; /* the root's quantiser, as a message's */
};

/* Which quantiser a tensor's bytes pass on their sender: none, BF16 -> FP8 or BF16 -> a
 * 4-bit format (RF_LINK_QUANT, RF_LINK_QUANT4). */
enum { RF_QUANT_NONE, RF_QUANT_FP8, RF_QUANT_4BIT };
static inline uint8_t sim_quant_of(const struct rf_plan *plan, int32_t tensor)
{
    enum rf_dtype w = plan->wire_dtype[tensor];
    if (!rf_dtype_quantised(w) || w == plan->tensors[tensor].dtype)
        return RF_QUANT_NONE;
    return rf_dtype_4bit(w) ? RF_QUANT_4BIT : RF_QUANT_FP8;
}

/* What bound mode gathers on one topology. Several topologies of one cluster (PXN on and
 * off) share the rounds' messages and differ only in their routes. */
struct acc {
    const struct rf_topology *topo;
    double *round_load, *total_load, *round_dur;
    int32_t *touched;
    size_t n_touched;
    double round_flow;   /* the round's slowest flow alone: latency + bytes / its best rate */
    double *round_alone; /* each round's round_flow */
    /* Each round's link loads, for the estimate: entries [lstart[r], lstart[r + 1]). */
    struct lload {
        int32_t link;
        float seconds; /* the round's bytes on the link at full rate */
    } * lloads;
    size_t n_lloads, cap_lloads;
    size_t *lstart;
};

struct sim {
    const struct rf_plan *plan;
    const struct rf_topology *topo; /* the one being emitted on (bound mode: each in turn) */
    const struct rf_topology *const *topos;
    int n_topos;
    double tolerance;
    const uint8_t *tensor_mask; /* rf_sim_options: the part simulated (NULL: all) */
    const uint8_t *dst_mask;    /* ... and the destinations (NULL: all) */
    bool skip_gather;
    /* Links that can saturate are simulated; the others (leaf links of a non-blocking
     * fabric, copy engines and quantisers faster than everything feeding them) only carry
     * bytes, counted here, which keeps rounds decoupled and each rate solve small. */
    bool *binds;
    double *extra_bytes;
    double *capacity; /* of every link of topos[0] */
    struct rf_flowsim *fs;
    struct rf_error *err;
    uint8_t *flow_phase;
    int32_t *flow_group;
    size_t n_flows, cap_flows;
    int32_t (*edges)[2];
    size_t n_edges, cap_edges;
    struct rf_prediction *out;
    /* Bound mode (rf_simulate_bound): flows are not simulated; each round's link loads and
     * slowest lone flow give a least duration per round, and whole-run loads a link bound. */
    bool bound_only;
    struct acc acc[RF_SIM_MAX_TOPOLOGIES], *cur; /* one per topology; the one being filled */
    int n_acc;
    /* NCCL's p2p channels of the replay's communicator (every GPU the plan touches; the
     * executor's world) and the largest send the executor issues, one staging piece (one
     * chunk in a pipelined round). */
    int64_t comm_ranks, piece, whole_piece;
    double chunk;                       /* a relay's pipeline chunk (sim_hop_fill) */
    int topo_index;                     /* which of a message's fills applies to s->topo */
    float *fill[RF_SIM_MAX_TOPOLOGIES]; /* sim_relay_fill per transfer and topology, or NULL */
    /* The plan's transfers and collectives by round: those of round r are
     * torder[tstart[r] .. tstart[r + 1]) (corder and cstart likewise). */
    size_t *tstart, *cstart, *torder, *corder;
    struct msg *m; /* a round's messages */
    size_t cap_m;
    struct chain *chains; /* a round's broadcasts */
    int32_t *runs_of;     /* per GPU: the transfer runs it sends in the round */
    /* Recent messages by key (src, dst, phase, hop, quant), direct-mapped, for merging a
     * message into an equal one as it is made (sim_round_transfers): `index` is one past
     * the message's in m, 0 for an empty entry. */
    struct mcache {
        int32_t src, dst;
        uint32_t key, index;
    } * mcache;
    size_t mcache_n, mcache_mask;
    struct msg *msg_tmp; /* scratch of the message sort */
    size_t cap_tmp;
    size_t *count;
    /* Broadcasts as NCCL rings (simulate_round.c round_chain): each member set's rings,
     * built once per simulation, and room for paths longer than a route (a channel's chain
     * crosses up to 4 links per rank). */
    struct rf_ring_set rings;
    int32_t *path, *chain_path;
    size_t cap_path, cap_chain_path;
};

/* Group `group` (a round) waits for round `prerequisite`. */
int sim_add_edge(struct sim *s, int32_t group, int32_t prerequisite);

/* sim/simulate_round.c: round r's transfers and broadcasts as flows (bound mode: as loads on
 * every topology), and the relay edges to earlier rounds. */
int sim_round_transfers(struct sim *s, int32_t r);
int sim_round_chains(struct sim *s, int32_t r);
/* Frees what the round functions keep in s (the rings, long paths). */
void sim_round_release(struct sim *s);
/* The pipeline fill of every relayed transfer on topo (*out NULL when nothing relays). */
int sim_relay_fill(const struct rf_plan *plan, const struct rf_topology *topo, float **out,
                   struct rf_error *err);

/* sim/simulate_bound.c. */
int sim_bound_init(struct sim *s);
void sim_bound_release(struct sim *s);
/* A flow's bytes on the binding links path[0 .. n) of s->cur's topology. */
void sim_bound_add(struct sim *s, const int32_t *path, int n, double bytes, double latency,
                   double tail, double cap);
/* Closes round r on every topology: its least duration and its link loads. */
int sim_bound_round(struct sim *s, int32_t r);
/* The bound (and estimate, when not NULL) of each topology, from the closed rounds and the
 * sorted edges. */
int sim_bound_finish(struct sim *s, double *bound, double *estimate);

#endif
