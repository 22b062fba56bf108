/* The auto strategy: refit's own plan. It predicts candidate mixes of per-tensor strategies
 * and source choices and keeps the fastest, so it never predicts slower than the best of
 * the named strategies it includes. */
#ifndef RF_AUTO_H
#define RF_AUTO_H

#include "plan.h"
#include "simulate.h"

struct rf_auto_input {
    const struct rf_model *model;
    struct rf_side *train, *infer;
    const struct rf_topology *topo;
    int64_t staging_bytes;
    /* The scenario's hybrid split (its policy), tried as one candidate; may be NULL. */
    const enum rf_strategy *hybrid;
};

struct rf_auto_choice {
    int evaluated;         /* plans predicted */
    int pruned;            /* plans skipped: their busiest link alone was slower */
    char description[512]; /* what won, per role */
};

/* Fills plan (scheduled, strategy RF_STRAT_AUTO) and its prediction with the best candidate:
 * every named strategy with balanced and local sources, then a greedy pass that moves each
 * role (largest first) to the strategy that lowers the prediction most. */
int rf_auto(const struct rf_auto_input *in, struct rf_plan *plan, struct rf_prediction *pred,
            struct rf_auto_choice *choice, struct rf_error *err);

#endif
