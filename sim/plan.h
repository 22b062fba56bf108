/* The transfer plan: which box of which tensor goes from which GPU to which GPUs, for the
 * broadcast, reshard and hybrid strategies, plus the collectives of the broadcast path. */
#ifndef RF_PLAN_H
#define RF_PLAN_H

#include "framework.h"
#include "layout.h"
#include "model.h"

struct rf_topology; /* sim/topology.h: only the planner's options point to one */

/* The strategies, in the order of models/lib/policy.lua's policy.strategies (t/plan-t checks
 * the two lists are the same): broadcast, reshard and hierarchical are per-tensor plans;
 * hybrid mixes them by a policy; auto searches mixes by predicted time (sim/auto.c). This
 * list makes the enum and the names (rf_strategy_name, rf_strategy_parse). */
#define RF_STRATEGIES(X)                                                                           \
    X(BROADCAST, "broadcast")                                                                      \
    X(RESHARD, "reshard")                                                                          \
    X(HIERARCHICAL, "hierarchical")                                                                \
    X(HYBRID, "hybrid")                                                                            \
    X(AUTO, "auto")

#define RF_STRAT_ENUM_(id, name) RF_STRAT_##id,
enum rf_strategy { RF_STRATEGIES(RF_STRAT_ENUM_) RF_STRAT_COUNT };
#undef RF_STRAT_ENUM_

/* How replicated sources are chosen for a destination, in the order of policy.lua's
 * policy.sources (checked by t/plan-t): balanced takes the least-loaded replica, contiguous
 * blocks of destinations; local the nearest replica first (same NVLink domain, same rail and
 * leaf, same rail), then the least-loaded GPU or NIC. */
#define RF_SOURCES_LIST(X)                                                                         \
    X(BALANCED, "balanced")                                                                        \
    X(LOCAL, "local")

#define RF_SOURCES_ENUM_(id, name) RF_SOURCES_##id,
enum rf_sources { RF_SOURCES_LIST(RF_SOURCES_ENUM_) RF_SOURCES_COUNT };
#undef RF_SOURCES_ENUM_

/* hierarchical's relays between the destination NVLink domains of a box (M2N's ring). */
struct rf_relay {
    bool ring;      /* leaders forward leader to leader; false: a source feeds each leader */
    int32_t fanout; /* leaders each forwards to: 1 a chain around the ring, more a tree
                     * (0 means 1) */
    int32_t depth;  /* leader-to-leader hops from the leader a source feeds; 0: no limit */
};

struct rf_plan_opts {
    const struct rf_topology *topo; /* needed by hierarchical and local sources */
    enum rf_sources sources;
    struct rf_relay relay; /* zeroed: no ring */
    /* A framework profile's broadcast (sim/framework.h; zeroed: refit's own, the first
     * training GPU to the inference side's span): who is in the communicator, who roots
     * each tensor's broadcast. */
    enum rf_fw_comm bcast_comm;
    enum rf_fw_root bcast_root;
    /* The receivers quantise (a profile's quantize = receiver_*): weights travel in their
     * native dtype and an FP8 side gains no scale tensors on the wire. */
    bool wire_native;
};

/* Sets opts' broadcast fields as a framework profile plans them (zeroed fields when fw is
 * not present: refit's own plan): its communicator and roots, and native-dtype weights on
 * the wire when its receivers quantise. refit sim and the layout search's estimates plan
 * alike through it. */
void rf_plan_opts_profile(struct rf_plan_opts *opts, const struct rf_framework *fw);

/* Gather moves training shards to the broadcast root (training-side staging); deliver
 * writes into inference-side buffers. */
enum rf_phase { RF_PHASE_GATHER, RF_PHASE_DELIVER };

enum rf_coll_kind { RF_COLL_BROADCAST };

/* A piece of a tensor that travels as one unit: the intersection of a destination shard
 * with a source shard. */
struct rf_plan_box {
    int32_t tensor;
    struct rf_box box;
};

/* A run of transfers of one box from one source GPU: destination GPUs
 * dst, dst + dst_stride, ..., dst_count of them. Runs keep the plan of a 4096-GPU refit in
 * the hundreds of thousands of records while every transfer stays exact.
 *
 * A chain run (chain = 1) is a relay chain as one record: src sends the box to dst, which
 * forwards it to dst + dst_stride, and so on: destination k receives it from
 * rf_transfer_sender(t, k), pipelined in one round (its hop is the run's hop + k). M2N's
 * ring of domain leaders is a chain, so Kimi K3 onto 64 engines is a chain per box rather
 * than a run per hop (0.5 M records instead of 9.6 M). */
struct rf_transfer {
    int32_t box;
    int32_t src;
    int32_t dst;
    int32_t dst_count;
    int32_t dst_stride;
    uint8_t phase;
    uint8_t chain;
    int32_t after; /* transfer run that must land first (the source's copy), or -1 */
    int32_t round; /* set by rf_schedule */
    /* Set by rf_schedule: 0, or, for a relay placed in the round of the transfer it
     * forwards (`after`), that transfer's hop + 1 (pipelined, sim/schedule.h). */
    int32_t hop;
    int64_t bytes; /* per destination */
};

/* Who sends destination k of a run its copy: the run's source, or in a chain the member
 * before it. */
static inline int32_t rf_transfer_sender(const struct rf_transfer *t, int32_t k)
{
    return t->chain && k > 0 ? t->dst + (k - 1) * t->dst_stride : t->src;
}

/* The hop at which destination k of a run receives (sim/schedule.h). */
static inline int32_t rf_transfer_hop(const struct rf_transfer *t, int32_t k)
{
    return t->chain ? t->hop + k : t->hop;
}

/* Broadcast of a whole tensor from root to gpu_count GPUs first_gpu + i * gpu_stride (the
 * root among them receives nothing). */
struct rf_collective {
    enum rf_coll_kind kind;
    int32_t tensor;
    int32_t root;
    int32_t first_gpu, gpu_count, gpu_stride;
    int32_t round; /* set by rf_schedule: after every gather of its tensor */
    int64_t bytes;
};

/* Byte accounting, per role and in total. */
struct rf_tally {
    int64_t tensors, params;
    int64_t payload_bytes; /* written into inference buffers from another GPU */
    int64_t moved_bytes;   /* sent over any link: gathers and broadcast hops included */
    int64_t logical_bytes; /* collective volume (all-gather + broadcast) or bytes sent */
    int64_t local_bytes;   /* copies where source and destination are the same GPU */
    int64_t transfers;     /* point-to-point transfers (runs expanded) */
    int64_t collectives;
};

struct rf_plan {
    enum rf_strategy strategy;
    /* The run's tensors: the model's, then FP8 scale tensors when the inference side is
     * FP8. Names are owned by the plan. */
    struct rf_tensor *tensors;
    enum rf_dtype *wire_dtype;         /* dtype on the wire, per tensor */
    enum rf_strategy *tensor_strategy; /* broadcast or reshard, per tensor */
    size_t n_tensors;

    struct rf_plan_box *boxes;
    size_t n_boxes, cap_boxes;
    struct rf_transfer *transfers;
    size_t n_transfers, cap_transfers;
    struct rf_collective *collectives;
    size_t n_collectives, cap_collectives;

    int64_t model_params, model_bytes;
    struct rf_relay relay; /* as planned (hierarchical tensors only use it) */
    int64_t staging_bytes; /* schedule: per-GPU send and receive budget of one round */
    int64_t chunk_bytes;   /* schedule: a relay's pipeline chunk (sim/schedule.h) */
    /* NCCL's nChannelsPerNetPeer refit-exec gives its communicator (rf_topology_net_ask of
     * the planning cluster; 0: none given, NCCL's default halving in large ones). */
    int32_t net_channels_per_peer;
    int32_t n_rounds;
    struct rf_tally total;
    struct rf_tally role[RF_ROLE_COUNT];
};

const char *rf_strategy_name(enum rf_strategy s);
int rf_strategy_parse(const char *s, enum rf_strategy *out);
const char *rf_sources_name(enum rf_sources s);
/* 0, or -1 for a name that is not in RF_SOURCES_LIST. */
int rf_sources_parse(const char *s, enum rf_sources *out);

/* The GPUs first, first + stride, ... (count of them; stride 0: first alone), as a transfer
 * run's destinations or a broadcast's members are written: the last of them, and whether
 * gpu is one of them. */
int64_t rf_gpu_run_last(int64_t first, int64_t count, int64_t stride);
bool rf_gpu_run_has(int64_t first, int64_t count, int64_t stride, int64_t gpu);
/* One past the highest GPU the plan's transfers and collectives name (sources, roots and
 * every member of a run); 0 for a plan with neither. */
int64_t rf_plan_gpu_extent(const struct rf_plan *plan);

/* Plans the refit of model from train to infer. tensor_strategy gives broadcast, reshard or
 * hierarchical per model tensor (hybrid's resolved policy, auto's choice); NULL means
 * `strategy` for every tensor. opts may be NULL (balanced sources, no topology). */
int rf_plan_build(struct rf_plan *plan, const struct rf_model *model, const struct rf_side *train,
                  const struct rf_side *infer, enum rf_strategy strategy,
                  const enum rf_strategy *tensor_strategy, const struct rf_plan_opts *opts,
                  struct rf_error *err);
void rf_plan_release(struct rf_plan *plan);

/* A plan's size before it is built, counted from the layouts' cells (sim/plan_estimate.c):
 * boxes, the source x destination cell intersections of every tensor, and deliveries, each
 * box times its destination holders (the transfers a reshard or hierarchical plan makes;
 * with broadcast, each source cell's gather). FP8 scales count as the planner makes them. */
struct rf_plan_size {
    int64_t boxes, deliveries;
};
int rf_plan_estimate(const struct rf_model *model, const struct rf_side *train,
                     const struct rf_side *infer, bool broadcast, struct rf_plan_size *out,
                     struct rf_error *err);
/* The most memory a plan of that size holds: its boxes and, at most, a transfer run per
 * delivery. */
int64_t rf_plan_size_bytes(const struct rf_plan_size *size);

/* What every refit of a plan's tensors must move, whatever the strategy: rf_plan_need fills
 * it, rf_need_release frees it. A *piece* is one source shard's part of one destination
 * shard (wire dtype); its holders are the training GPUs holding that source shard. */
struct rf_need {
    size_t n_gpus, n_domains;
    /* Sinks: bytes each GPU, and each NVLink domain, must receive from outside itself (its
     * shards minus what it already holds on the training side, when colocated). */
    int64_t *gpu_in, *domain_in;
    /* Sources: bytes of pieces held by this GPU alone that another GPU needs. */
    int64_t *gpu_out;
    /* Holder groups: the distinct sets of domains holding a piece, sorted by size and then
     * lexicographically; group i is domains group_domain[group_start[i] .. group_start[i+1]]
     * (sorted). own: bytes of pieces held in exactly these domains and needed in a domain
     * outside them; away: the part of own needed in a domain without a training GPU. */
    size_t n_groups;
    size_t *group_start;
    int64_t *group_domain;
    int64_t *group_own, *group_away;
};

/* Fills need for plan's tensors between the sides, with NVLink domains of domain_gpus GPUs
 * (n_gpus GPUs and n_domains domains; GPUs and domains beyond them are ignored). need is
 * overwritten; on error it holds nothing to release. */
int rf_plan_need(const struct rf_plan *plan, const struct rf_side *train,
                 const struct rf_side *infer, int64_t domain_gpus, size_t n_gpus, size_t n_domains,
                 struct rf_need *need, struct rf_error *err);
void rf_need_release(struct rf_need *need);

#endif
