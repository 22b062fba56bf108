/* The schedule: transfers and collectives grouped into rounds that bound the staging memory
 * each GPU needs. Within a round all transfers between one pair of GPUs become one packed
 * message; the executor replays exactly these rounds and the simulator predicts them. */
#ifndef RF_SCHEDULE_H
#define RF_SCHEDULE_H

#include "plan.h"

/* NeMo-RL's refit buckets default to min(2% of GPU memory, 5 GiB)
 * (nemo_rl/utils/packed_tensor.py); refit uses the same rule when a scenario gives none. */
#define RF_STAGING_MAX_BYTES (5LL << 30)

/* The pipeline chunk of a relay: what a relay receives before it forwards (the executor's
 * step in a round that relays, the simulator's fill per hop). 4 MiB: large enough that a
 * step's fixed cost (one NCCL group, about 10 us) is small against a chunk's 90 us on a
 * 400 Gb/s NIC, small enough that a chain of 64 hops fills in 6 ms. */
#define RF_CHUNK_DEFAULT_BYTES (4LL << 20)

struct rf_schedule_opts {
    int64_t staging_bytes; /* per GPU and round: bytes sent, and bytes received */
    int64_t chunk_bytes;   /* relay pipeline chunk; 0: min(RF_CHUNK_DEFAULT_BYTES, staging) */
    /* Rounds in flight at once (the cluster's calibration.streams; 0 means 1): a relay
     * that cannot share its feed's round goes at least this many rounds later, which the
     * stream window orders anyway, so that it does not hold a whole round back. */
    int32_t streams;
};

/* Assigns a round to every transfer run and collective of plan (first fit, in plan order):
 * a round holds at most staging_bytes of sends and of receives per GPU. A run whose bytes to
 * all its destinations exceed the budget is first split into runs of as many destinations
 * as fit (plan->transfers is replaced; `after` indices follow). A single transfer larger
 * than the budget takes a round of its own on its GPUs (the executor sends it in
 * staging-sized pieces). A broadcast follows every gather of its tensor; local copies need
 * no staging.
 *
 * Relays are pipelined: a transfer that forwards what another delivered (`after`) is placed
 * in the same round when its GPUs have room there, and its `hop` is then its dependency's
 * plus one: the relay forwards each chunk (plan->chunk_bytes) as it lands, so a chain of
 * hops costs one round and a fill of one chunk per hop, not a round per hop. Where the
 * round is full it goes `streams` rounds later or more (store and forward) with hop 0. A round with
 * any hop > 0 is a pipelined round: the executor steps it in chunks (exec/replay.c). */
int rf_schedule(struct rf_plan *plan, const struct rf_schedule_opts *opts, struct rf_error *err);

/* What rf_schedule holds per delivery beside the plan's own runs at its peak: the pieces it
 * builds (a transfer run each, at most one per delivery) and its per-run indexes (sim/
 * refit_run.c counts it in a run's memory estimate). */
int64_t rf_schedule_delivery_bytes(void);

#endif
