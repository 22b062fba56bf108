/* The schedule: transfers and collectives grouped into rounds that bound the staging memory
 * each GPU needs. Within a round all transfers between one pair of GPUs become one packed
 * message; the executor replays exactly these rounds and the simulator predicts them. */
#ifndef RF_SCHEDULE_H
#define RF_SCHEDULE_H

#include "plan.h"

/* NeMo-RL's refit buckets default to min(2% of GPU memory, 5 GiB)
 * (nemo_rl/utils/packed_tensor.py); refit uses the same rule when a scenario gives none. */
#define RF_STAGING_MAX_BYTES (5LL << 30)

struct rf_schedule_opts {
    int64_t staging_bytes; /* per GPU and round: bytes sent, and bytes received */
};

/* Assigns a round to every transfer run and collective of plan (first fit, in plan order):
 * a round holds at most staging_bytes of sends and of receives per GPU. A run whose bytes to
 * all its destinations exceed the budget is first split into runs of as many destinations
 * as fit (plan->transfers is replaced; `after` indices follow). A single transfer larger
 * than the budget takes a round of its own on its GPUs (the executor sends it in
 * staging-sized pieces). A transfer follows the one it depends on (`after`), a broadcast
 * follows every gather of its tensor; local copies need no staging. */
int rf_schedule(struct rf_plan *plan, const struct rf_schedule_opts *opts, struct rf_error *err);

#endif
