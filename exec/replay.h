/* The schedule replay both backends share: per rank, per round, its local copies, its
 * packed messages (one per peer and direction, in an order every rank derives alike, sent
 * in staging-sized pieces) and its broadcasts; plus the pattern fill and the check. */
#ifndef RF_REPLAY_H
#define RF_REPLAY_H

#include "backend.h"
#include "fault.h"
#include "part.h"

struct rf_replay;

/* Builds this rank's program from its part and sizes its buffers (shards of both sides,
 * the root's whole tensors, send and receive staging) without allocating them, so the
 * job can refuse a replay that does not fit (rf_replay_memory) before it fills memory. */
int rf_replay_new(struct rf_replay **out, const struct rf_part *part, int rank,
                  struct rf_backend *be, struct rf_error *err);
/* Allocates the buffers on the backend (and its timers); before fill, poison or run. */
int rf_replay_alloc(struct rf_replay *r, struct rf_error *err);
void rf_replay_free(struct rf_replay *r);

/* Writes the pattern into every source (training shards, the scales a root broadcasts). */
int rf_replay_fill(struct rf_replay *r, struct rf_error *err);
/* Writes the complement of the pattern into every destination and gather buffer, so an
 * element the next iteration does not deliver fails the check. */
int rf_replay_poison(struct rf_replay *r, struct rf_error *err);

/* One iteration of the whole schedule. round_seconds gets n_rounds times (this rank's);
 * *total the whole iteration. `fault` (or NULL) fires when its rank is this one. The
 * backend runs at most one round behind what has been queued (wait_mark). */
int rf_replay_run(struct rf_replay *r, double *round_seconds, double *total,
                  const struct rf_fault *fault, struct rf_error *err);

/* Checks every element of every inference shard against the pattern. */
struct rf_check {
    int64_t bytes, elements, errors;
    int32_t first_tensor; /* where the first wrong element is, or -1 */
    int64_t first_index;  /* its index within this rank's shard */
};
int rf_replay_check(struct rf_replay *r, struct rf_check *out, struct rf_error *err);

/* Bytes this rank's buffers take on its backend (known before rf_replay_alloc). */
struct rf_replay_need {
    int64_t train;   /* its training shards */
    int64_t infer;   /* its inference shards */
    int64_t root;    /* whole tensors it gathers or broadcasts as a root */
    int64_t staging; /* send and receive staging */
};
void rf_replay_memory(const struct rf_replay *r, struct rf_replay_need *need);
/* The peers and broadcast groups of this rank's program (valid until rf_replay_free). */
void rf_replay_comm_use(const struct rf_replay *r, struct rf_comm_use *use);

/* The pattern written into one device buffer (box pb->box of its tensor, dense), or its
 * complement with `poison`: by the backend's fill when it has one, else through host memory.
 * And its check: the wrong elements and the first one's index within the box (-1: none).
 * The replay fills and checks with these; refit-exec --probe times them. */
int rf_fill_buffer(struct rf_backend *be, void *buf, const struct rf_pattern_buf *pb, bool poison,
                   struct rf_error *err);
int rf_check_buffer(struct rf_backend *be, const void *buf, const struct rf_pattern_buf *pb,
                    int64_t *errors, int64_t *first_bad, struct rf_error *err);

#endif
