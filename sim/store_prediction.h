/* The simulator's side of the store: a run stored with its prediction, the step's phases
 * and each side's memory, all in the one transaction that stores the plan (sim/store.h). */
#ifndef RF_STORE_PREDICTION_H
#define RF_STORE_PREDICTION_H

#include "memory.h"
#include "overlap.h"
#include "simulate.h"
#include "step.h"
#include "store.h"
#include "topology.h"

/* What the simulator adds to a run, each optional (NULL: not stored). */
struct rf_run_sim {
    /* The prediction on topo (tables prediction, link_load, predicted_round,
     * predicted_phase); topo is needed with it. */
    const struct rf_prediction *prediction;
    const struct rf_topology *topo;
    /* The whole step under a framework profile (sim/step.h), stored with the prediction it
     * extends (prediction.step_seconds, step_composition, table predicted_step_phase); NULL
     * for a profile-free run. Needs prediction. */
    const struct rf_step *step;
    /* An overlapped refit's stall and staleness (prediction.stall_seconds,
     * staleness_seconds, overlap_refit_seconds); NULL: none (those columns NULL). */
    const struct rf_overlap_result *overlap;
    /* Each side's memory line (table memory). */
    const struct rf_side_memory *mem_train, *mem_infer;
};

/* Stores the run, its plan and sim's rows in one transaction (rf_store_save_plan with
 * sim's rows as its rf_run_info.more, which must be NULL); on any error nothing is left
 * behind. sim may be NULL: the plan alone. */
int rf_store_save_run(struct rf_store *st, const struct rf_run_info *info,
                      const struct rf_plan *plan, const struct rf_run_sim *sim, int64_t *run_id,
                      struct rf_error *err);

#endif
