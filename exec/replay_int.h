/* The replay's internals, shared by its files: the program a rank derives (program.c), its
 * steps (steps.c), the loop that runs it (replay.c) and the pattern fill and check (fill.c). */
#ifndef RF_REPLAY_INT_H
#define RF_REPLAY_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "replay.h"

/* Staging offsets of a step's pieces are aligned to this many bytes. */
#define STAGE_ALIGN 256

/* One buffer of this GPU: box `box` of a tensor, dense, row-major. */
struct rbuf {
    void *ptr;
    struct rf_box box;
    int64_t numel;
    int32_t elem;
    bool owned; /* false for a root's wire buffer that is its gather buffer */
};

struct item {
    int32_t xfer, tensor, box, elem;
    int8_t src_buf, dst_buf;
    int64_t bytes, at;
};

enum { K_LOCAL, K_SEND, K_RECV };

struct msg {
    int32_t round, peer, kind;
    size_t first, n; /* items */
    int64_t bytes;
    int64_t piece;   /* its round's piece size */
    int32_t hop;     /* the step that carries its first piece */
    int32_t pieces;  /* piece k travels in step hop + k */
    int32_t content; /* sends: the message whose packed bytes this one sends */
    uint64_t hash;
    int64_t stage_at; /* offset in staging during the current step */
};

struct round_prog {
    size_t msg0, n_msgs;
    size_t coll0, n_colls;
    int32_t steps;
};

struct rf_replay {
    const struct rf_part *part;
    int rank;
    struct rf_backend *be;
    struct rbuf *buf[RF_BUF_COUNT];
    struct item *items;
    size_t n_items;
    struct msg *msgs;
    size_t n_msgs;
    struct round_prog *rounds;
    int32_t *colls; /* indices into part->colls, by (round, id) */
    uint8_t *send_stage, *recv_stage;
    int64_t send_stage_bytes, recv_stage_bytes;
    int64_t piece; /* a plain round's piece: the staging budget */
    int64_t chunk; /* a pipelined round's: the plan's relay chunk */
    struct rf_xfer *sends, *recvs;
    struct rf_replay_need need;
    int32_t *send_peers, *recv_peers; /* distinct, for rf_replay_comm_use */
    size_t n_send_peers, n_recv_peers;
    int32_t rings;
    bool corrupted;
    /* A delta update (exec/delta.c; NULL when the plan has none): per plan box, the
     * encoding this rank sends or received (device memory) and its bytes; per tensor, the
     * last sent copy beside its training shard; the device scratch the host codec reads
     * and writes a box through. */
    void **enc;
    int64_t *enc_bytes;
    struct rbuf *prev;
    void *scratch;
    int64_t scratch_bytes;
    /* A merged LoRA update (exec/merge.c): per tensor, on the A of a pair this GPU merges,
     * its shard of the weight W (the base, the pattern) and of W + B A (what the merge
     * writes; a buffer apart, so every iteration merges the same). */
    struct rbuf *base, *merged;
};

static inline int64_t align_up(int64_t x, int64_t a)
{
    return (x + a - 1) / a * a;
}

/* The whole tensor as a box. */
static inline void whole_box(const struct rf_part_tensor *pt, struct rf_box *b)
{
    for (int d = 0; d < RF_MAX_DIMS; d++) {
        b->off[d] = 0;
        b->len[d] = d < pt->ndim ? pt->shape[d] : 1;
    }
}

/* Bytes of piece s of `bytes` cut in pieces of `piece`. */
static inline int64_t piece_len(int64_t piece, int64_t bytes, int32_t s)
{
    int64_t lo = (int64_t)s * piece;
    return bytes - lo < piece ? bytes - lo : piece;
}

/* The piece of message m that step s carries, or -1 for none. */
static inline int32_t piece_at(const struct msg *m, int32_t s)
{
    return s >= m->hop && s - m->hop < m->pieces ? s - m->hop : -1;
}

/* Copies `region` between two views of this GPU's memory, on the backend. */
int replay_copy_region(struct rf_replay *r, void *dst, const struct rf_view *dv, const void *src,
                       const struct rf_view *sv, const struct rf_box *region, int ndim, size_t elem,
                       struct rf_error *err);
/* A delta update's replay (exec/delta.c). Whether an item moves a delta box; the buffers
 * sized (after the messages) and allocated, and freed; the fill of the last sent copies and
 * the new weights; one item's byte range [a, b) (relative to the item) packed from its
 * encoding into stage or unpacked into it, encoding a source's box at its first byte and
 * scattering a received one at its last; a same-GPU delivery encoded and scattered; the
 * check of a delta tensor's inference shard against the new weights. */
bool replay_delta_item(const struct rf_replay *r, const struct item *it);
int replay_delta_plan(struct rf_replay *r, struct rf_error *err);
int replay_delta_alloc(struct rf_replay *r, struct rf_error *err);
void replay_delta_free(struct rf_replay *r);
int replay_delta_fill(struct rf_replay *r, struct rf_error *err);
int replay_delta_pack(struct rf_replay *r, const struct item *it, int64_t a, int64_t b,
                      uint8_t *stage, bool unpack, struct rf_error *err);
int replay_delta_local(struct rf_replay *r, const struct item *it, struct rf_error *err);
int replay_delta_check(struct rf_replay *r, int32_t tensor, int64_t *errors, int64_t *first_bad,
                       struct rf_error *err);
/* A merged LoRA update's replay (exec/merge.c): the weight shards sized (after the
 * buffers) and allocated, and freed; the base filled with the pattern; the merge after the
 * rounds; the check of every merged shard against W + B A from the pattern. */
int replay_merge_plan(struct rf_replay *r, struct rf_error *err);
int replay_merge_alloc(struct rf_replay *r, struct rf_error *err);
void replay_merge_free(struct rf_replay *r);
int replay_merge_fill(struct rf_replay *r, struct rf_error *err);
int replay_merge(struct rf_replay *r, struct rf_error *err);
int replay_merge_check(struct rf_replay *r, struct rf_check *out, struct rf_error *err);
/* Testing only: flips one byte of device memory. */
int replay_flip_byte(struct rf_replay *r, uint8_t *dev, struct rf_error *err);
/* Runs the steps of round `round`: packs, exchanges and unpacks its messages' pieces. */
int replay_run_steps(struct rf_replay *r, int32_t round, const struct round_prog *rp,
                     const struct rf_fault *f, struct rf_error *err);

#endif
