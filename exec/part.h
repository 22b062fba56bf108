/* Each rank's part of a stored run. Rank 0 reads the run and derives what every rank
 * needs (rf_part_derive); rf_part_share ships it over MPI, so only rank 0 needs the
 * database: tensors, sides, boxes and broadcast groups to all, transfers and collectives
 * only to the ranks they touch. Rank r replays GPU r of the plan. */
#ifndef RF_PART_H
#define RF_PART_H

#include "control.h"
#include "store.h"

/* The buffers a GPU holds for a tensor: its training shard (a source), its inference
 * shard (a destination), the broadcast root's whole gathered tensor, and the root's whole
 * tensor in the wire dtype (the gathered one itself when no conversion is needed). */
enum rf_buf { RF_BUF_TRAIN, RF_BUF_INFER, RF_BUF_GATHER, RF_BUF_WIRE, RF_BUF_COUNT };

struct rf_part_tensor {
    int32_t ndim, cls, layer, strategy;
    int32_t wire_elem;     /* bytes per element in inference shards and broadcasts */
    int32_t train_elem;    /* ... in training shards: what the sender packs */
    int32_t gather_elem;   /* ... in the root's gather buffer; 0 when nothing is gathered */
    int32_t name_at;       /* offset of its name in rf_part.names */
    struct rf_delta delta; /* a delta update's encoding (sim/delta.h); zeroed: whole boxes */
    uint8_t lora;          /* a LoRA adapter's part (RF_LORA_A, then its B), or RF_LORA_NONE */
    bool lora_merge;       /* the engine merges the pair into its weight (exec/merge.c) */
    /* A 4-bit wire (MXFP4, NVFP4): the executor sees the tensor as its packed pairs along
     * the last dim, shape[ndim - 1] and every box's last dim halved, so a wire element is a
     * byte of two 4-bit values and a gathered one two BF16 values (4 bytes). */
    bool packed;
    int64_t shape[RF_MAX_DIMS];
};

/* A transfer run (rf_transfer), with the buffers it reads on src and writes on each dst.
 * hop: 0, or for a relay in the round of the transfer it forwards, that one's hop + 1 (its
 * pieces go out hop steps into the round, exec/replay.c). */
struct rf_part_transfer {
    int32_t id, box, src, dst, dst_count, dst_stride, round, hop;
    int8_t src_buf, dst_buf; /* a chain member forwards from its dst_buf */
    int8_t chain;            /* a relay chain (sim/plan.h): member i sends to member i + 1 */
    int64_t bytes;
};

/* Who sends destination i of t, and at which hop it receives (rf_transfer_sender). */
static inline int32_t rf_part_sender(const struct rf_part_transfer *t, int32_t i)
{
    return t->chain && i > 0 ? t->dst + (i - 1) * t->dst_stride : t->src;
}

static inline int32_t rf_part_hop(const struct rf_part_transfer *t, int32_t i)
{
    return t->chain ? t->hop + i : t->hop;
}

struct rf_part_collective {
    int32_t id, tensor, group, round, root;
    int64_t bytes;
};

struct rf_part_group {
    int32_t root, first, count, stride;
};

struct rf_part {
    int64_t run_id;
    int32_t n_gpus, n_rounds;
    int32_t strategy;
    int64_t staging_bytes;
    int64_t chunk_bytes; /* a pipelined round's piece (sim/schedule.h) */
    /* The nChannelsPerNetPeer the NCCL backend gives its communicator; 0: NCCL's default. */
    int32_t net_channels_per_peer;
    /* n_rounds bytes, on every rank: 1 where the round is pipelined, i.e. holds a relayed
     * transfer (one with `after`, or one some transfer forwards). Both ends of a message
     * must agree on how its round is stepped, and a sender may not hold the relay that
     * makes its round pipelined, so rank 0 decides for all. */
    uint8_t *pipelined;
    /* What the whole plan moves between GPUs (local copies excluded): into inference
     * buffers (payload) and over any link (gathers and every broadcast receiver too). */
    int64_t payload_bytes, moved_bytes;
    struct rf_side train, infer;
    struct rf_part_tensor *tensors;
    size_t n_tensors;
    char *names;
    size_t names_bytes;
    struct rf_plan_box *boxes;
    size_t n_boxes;
    struct rf_part_group *groups; /* distinct broadcast member sets, in schedule order */
    size_t n_groups;
    /* This rank's transfers (it sends or receives) and collectives, by id. On rank 0 before
     * rf_part_share: every transfer and collective of the plan. */
    struct rf_part_transfer *transfers;
    size_t n_transfers;
    struct rf_part_collective *colls;
    size_t n_colls;
};

/* GPUs the run spans (the world must have as many ranks). */
int32_t rf_part_gpus(const struct rf_stored_run *run);
/* Derives the whole part (all transfers and collectives) from a stored run, checking that
 * the executor can replay it: element sizes agree with bytes, dependencies deliver their
 * box to their sender in the same or an earlier round with the hop the schedule's rule
 * gives, only BF16 -> FP8 conversions at a root. */
int rf_part_derive(struct rf_part *p, const struct rf_stored_run *run, struct rf_error *err);
/* Keeps only what rank `rank` touches (used by rf_part_share; exposed for tests). */
int rf_part_select(const struct rf_part *whole, int rank, struct rf_part_transfer **transfers,
                   size_t *n_transfers, struct rf_part_collective **colls, size_t *n_colls,
                   struct rf_error *err);
/* Rank 0 holds the whole part; afterwards every rank holds its own. Collective over the
 * world; waits honour the control plane's deadline. */
int rf_part_share(struct rf_part *p, struct rf_ctl *ctl, struct rf_error *err);
/* Is gpu one of the GPUs of the transfer run or the group? */
bool rf_part_transfer_has_dst(const struct rf_part_transfer *t, int32_t gpu);
bool rf_part_group_has(const struct rf_part_group *g, int32_t gpu);
/* A tensor as the layout algebra wants it (no name), for rf_side_placement. */
void rf_part_tensor_view(const struct rf_part_tensor *pt, struct rf_tensor *t);
const char *rf_part_tensor_name(const struct rf_part *p, int32_t tensor);
void rf_part_release(struct rf_part *p);

#endif
