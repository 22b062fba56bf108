/* The planner's internals: the state one rf_plan_build (or rf_plan_need) works in and the
 * verbs the planner's files share. Nothing outside sim/plan*.c and sim/relay.c includes it. */
#ifndef RF_PLAN_INT_H
#define RF_PLAN_INT_H

#include <stdbool.h>
#include <stdlib.h>

#include "array.h"
#include "plan.h"

/* The distinct non-empty shards of one tensor on one side, each with its holder GPUs. */
struct cells {
    size_t n, cap;
    struct rf_box *box;
    size_t *hstart; /* n + 1 offsets into holders */
    size_t cap_hstart;
    int32_t *holders;
    size_t nh, caph;
};

struct gpu_load {
    int64_t load;
    int32_t gpu;
};

/* A holder of a box as the balanced choice sees it for one group of destinations: the NIC
 * its deliveries would leave by (-1: they stay on NVLink), its GPU's load, its GPU. */
struct exit_holder {
    int64_t load;
    int32_t nic, gpu;
};

/* The holders keys[next..end) that leave by one NIC (or one holder over NVLink). */
struct exit_group {
    uint32_t next, end;
};

/* An exit group's place in the deal: its NIC's load (-1 over NVLink), then its first
 * holder's GPU load and GPU. */
struct exit_deal {
    int64_t nic_load, load;
    int32_t gpu;
    uint32_t group;
};

struct planner {
    struct rf_plan *plan;
    struct rf_error *err;
    const struct rf_topology *topo; /* NULL when planning without a cluster */
    enum rf_sources sources;
    enum rf_fw_comm bcast_comm; /* rf_plan_opts: a framework's broadcast communicator */
    enum rf_fw_root bcast_root;
    bool wire_native;
    int64_t *load; /* bytes each GPU has been chosen to send so far */
    /* Bytes each NIC sends so far: every transfer that leaves its NVLink domain counts on
     * the NIC its route leaves by (planner_egress_nic), whoever planned it. */
    int64_t *nic_load;
    /* Bytes each GPU has been assigned to receive from another GPU, and each NIC from
     * another NVLink domain: hierarchical's leaders are chosen by them. Kept only when a
     * tensor is hierarchical (track_in), so other plans pay nothing for them. */
    bool track_in;
    int64_t *in_load, *nic_in;
    int32_t *rail_mark; /* per rail: the stamp of the last box whose holders use it */
    int32_t rail_stamp;
    struct rf_relay relay; /* hierarchical's relays between domains (fanout >= 1) */
    uint32_t ring_turn;    /* boxes relayed so far: where the next one enters the ring */
    int32_t (*pairs)[2];
    size_t cap_pairs;
    struct cells src, dst;
    int64_t *starts[RF_MAX_DIMS]; /* source grid: sorted interval starts per dim */
    size_t nstart[RF_MAX_DIMS];
    int32_t *cell_of;
    size_t cap_cell_of;
    int32_t *rem;
    struct gpu_load *order;
    size_t cap_rem, cap_order;
    /* The balanced choice's scratch: holders by exit NIC, a group per NIC, the order the
     * groups are dealt blocks in. */
    struct exit_holder *keys;
    struct exit_group *groups;
    struct exit_deal *deal;
    size_t cap_keys, cap_groups, cap_deal;
};

/* plan.c: the planner's lifecycle. Frees every array a planner owns (not the plan). */
void planner_release(struct planner *p);

/* plan_cells.c: cells, the source grid and the intersections of destination cells with it. */
/* qsort comparison of int32_t. */
int planner_cmp_i32(const void *a, const void *b);
/* Makes room in c for n cells (n + 1 offsets) and nh holders. */
int planner_cells_reserve(struct planner *p, struct cells *c, size_t n, size_t nh);
void planner_cells_release(struct cells *c);
/* The cells of tensor t on side, each with its sorted holder GPUs, into c. */
int planner_collect_cells(struct planner *p, const struct rf_side *side, const struct rf_tensor *t,
                          struct cells *c);
/* The same with holders false: the cells' boxes and, in hstart, their holders' counts only
 * (c->holders is not filled): what the estimate needs (sim/plan_estimate.c). */
int planner_collect_cells_as(struct planner *p, const struct rf_side *side,
                             const struct rf_tensor *t, struct cells *c, bool holders);
/* The source grid of p->src for tensor t (p->starts, p->cell_of); RF_EINVAL when the source
 * shards leave a gap or do not form a grid. */
int planner_build_grid(struct planner *p, const struct rf_tensor *t);
/* What planner_plan_cells would make of tensor t from the cells in p->src and p->dst,
 * added to *boxes (the intersections) and *deliveries (each box times its destination
 * holders), without making it. */
int planner_count_cells(struct planner *p, const struct rf_tensor *t, int64_t *boxes,
                        int64_t *deliveries);
/* Delivers every destination cell of tensor ti (in p->dst) from the source cells in p->src,
 * in dtype dt: one box per intersection, each assigned its sources. */
int planner_plan_cells(struct planner *p, int32_t ti, enum rf_dtype dt, uint8_t phase,
                       bool count_logical);

/* plan_emit.c: transfer runs, their tallies and the loads they add. */
/* *acc += a * b for a byte or load count of tensor ti, checked (an overflow is RF_EINVAL
 * naming the tensor and `what`). */
int planner_add_bytes(struct planner *p, int32_t ti, int64_t *acc, int64_t a, int64_t b,
                      const char *what);
/* Adds d to the plan's total and tensor ti's role, or to neither (RF_EINVAL on overflow). */
int planner_tally_add(struct planner *p, int32_t ti, const struct rf_tally *d);
/* Appends the run of box from src to dst, dst + stride, ... (count of them), with its
 * tallies, the NIC egress of each delivery that leaves src's NVLink domain (nic_load) and,
 * when track_in, the ingress loads. */
int planner_emit(struct planner *p, int32_t box, int32_t src, int32_t dst, int32_t count,
                 int32_t stride, uint8_t phase, int64_t bytes, bool count_logical);
/* Emits dsts[0..n) from src as maximal arithmetic runs, in their order. */
int planner_emit_runs(struct planner *p, int32_t box, int32_t src, const int32_t *dsts, size_t n,
                      uint8_t phase, int64_t bytes, bool count_logical);
/* planner_emit_runs for a caller that has counted the runs' NIC egress as it chose their
 * source (the local choice): nic_load is left alone. */
int planner_emit_runs_counted(struct planner *p, int32_t box, int32_t src, const int32_t *dsts,
                              size_t n, uint8_t phase, int64_t bytes, bool count_logical);
/* The NIC a transfer from src to dst leaves by, as topology.c routes it: none (-1) inside
 * an NVLink domain or without NICs; with PXN the NIC of src's node on dst's rail; else
 * src's own. */
int32_t planner_egress_nic(const struct planner *p, int32_t src, int32_t dst);

/* plan_sources.c: which holder sends each destination its box. */
/* The holders h in p->order (grown to nh by the caller), least-loaded first. */
void planner_order_by_load(struct planner *p, const int32_t *h, size_t nh);
/* Serves dsts[0..nd) of one box from its holders h[0..nh) (sorted): local copies where a
 * destination holds it, else the balanced or local source choice. */
int planner_assign(struct planner *p, int32_t box, const int32_t *h, size_t nh, const int32_t *dsts,
                   size_t nd, uint8_t phase, int64_t bytes, bool count_logical);
/* Does a sorted holder list have a GPU in NVLink domain dom? */
bool planner_holds_in_domain(const struct rf_topology *t, const int32_t *h, size_t nh, int32_t dom);

/* relay.c: hierarchical delivery of one box. */
int planner_assign_hierarchical(struct planner *p, int32_t box, const int32_t *h, size_t nh,
                                const int32_t *dsts, size_t nd, int64_t bytes);

/* plan_broadcast.c: the gather to a root and one broadcast collective of tensor ti. */
int planner_broadcast(struct planner *p, int32_t ti, const struct rf_side *train,
                      const struct rf_side *infer);

/* plan_tensors.c: the plan's tensors (the model's, then an FP8 side's scales), with each
 * one's strategy and wire dtype. */
int planner_tensors(struct planner *p, const struct rf_model *model, const struct rf_side *infer,
                    enum rf_strategy strategy, const enum rf_strategy *tensor_strategy);

#endif
