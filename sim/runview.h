/* A stored run as refit show and refit diff present it: its run row, its description
 * (sim/describe.h), its memory lines, its prediction (and step) and its measurements, read in
 * one go. */
#ifndef RF_RUNVIEW_H
#define RF_RUNVIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "error.h"
#include "memory.h"
#include "step.h"
#include "store.h"

/* One replay of the run, or a step read from a log (backend "log": refit measure; table
 * measurement); seconds are NAN where NULL. */
struct rf_run_measurement {
    int64_t id, world_size, iters, warmup, bytes_verified, errors;
    double seconds, seconds_min, seconds_max;
    char *created_at, *backend, *status, *error_text, *exec_config, *source;
    /* A log's phases (table measured_phase) by enum rf_step_phase_kind; NAN where absent. */
    double phase_s[RF_STEP_PHASE_COUNT];
};

struct rf_run_view {
    int64_t id;
    /* The run row (strings never NULL: "" where the column is NULL). */
    char *created_at, *label, *scenario, *model, *strategy, *cluster_system;
    char *train_layout, *train_dtype, *infer_layout, *infer_dtype;
    bool has_label;
    int64_t cluster_nodes, train_gpus, train_first_gpu, infer_gpus, infer_first_gpu;
    int64_t model_params, model_bytes, payload_bytes, moved_bytes, transfers;
    int64_t rounds; /* -1: planned before schema 2 */
    bool summary;   /* run.stored 'summary' (schema 9): no plan rows, no replay */
    /* The description; NULL when the run was stored before schema 7. */
    json_t *doc;
    /* Table memory (schema 7): false when the run has no rows. */
    bool has_memory;
    struct rf_side_memory mem_train, mem_infer;
    /* Table prediction: false when the run was only planned. */
    bool has_prediction;
    char *pred_cluster, *bottleneck; /* bottleneck "" when none */
    double predicted_s, lower_bound_s;
    int64_t nvlink_bytes, fabric_bytes;
    /* The step under a framework profile (schema 8: prediction.step_seconds and table
     * predicted_step_phase, in seq order); false for a profile-free run or an older one. */
    bool has_step;
    struct rf_step step;
    struct rf_run_measurement *meas; /* in id order */
    size_t n_meas;
};

/* Loads run id ("no run 9 in FILE" when there is none). */
int rf_run_view_load(struct rf_store *st, int64_t id, struct rf_run_view *v, struct rf_error *err);
void rf_run_view_release(struct rf_run_view *v);
/* The latest ok measurement, or NULL. */
const struct rf_run_measurement *rf_run_view_measured(const struct rf_run_view *v);

#endif
