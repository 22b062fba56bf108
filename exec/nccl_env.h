/* The NCCL environment a stored run implies: what its prediction assumed of NCCL that only
 * an environment variable sets (PXN: NCCL_PXN_DISABLE), set on every rank before NCCL
 * initialises. A variable the user set is kept, and reported. */
#ifndef RF_NCCL_ENV_H
#define RF_NCCL_ENV_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "control.h"

struct rf_nccl_env {
    /* Rank 0, from the run's description: the PXN its prediction assumed (1 on, 0 off),
     * -1 when the run records none (stored before schema 7). */
    int64_t pxn;
    /* Rank 0, after rf_nccl_env_apply: NCCL_PXN_DISABLE as every rank holds it (the
     * distinct values joined by ","; "" when no rank has it), and who set it: "refit-exec",
     * "user" (already in the rank's environment), "user and refit-exec" (some ranks each),
     * or NULL (no rank has it). */
    char value[64];
    const char *set_by;
};

/* Rank 0: what the run's description (run.scenario_json, NULL before schema 7) implies. */
int rf_nccl_env_plan(struct rf_nccl_env *e, const char *scenario_json, struct rf_error *err);
/* Collective over the world: rank 0's decision reaches every rank, each sets what it
 * implies unless the variable is already set, and rank 0 learns what every rank holds. */
int rf_nccl_env_apply(struct rf_nccl_env *e, struct rf_ctl *ctl, struct rf_error *err);
/* "NCCL_PXN_DISABLE=1 (set by refit-exec: the plan's prediction assumed fabric.pxn =
 * false)"; "" when there is nothing to say (no rank has the variable). */
void rf_nccl_env_describe(const struct rf_nccl_env *e, char *buf, size_t size);
/* {"NCCL_PXN_DISABLE": {"value": "1", "set_by": "refit-exec", "plan_pxn": false}}, or {}. */
json_t *rf_nccl_env_json(const struct rf_nccl_env *e);

#endif
