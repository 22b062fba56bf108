/* Calibration: fits a cluster's calibration knobs (efficiencies, fixed costs, per-call costs,
 * host rates) to the times refit-exec measured and the steps read from framework logs (refit
 * measure), by least squares on relative errors, re-predicting each stored run. */
#ifndef RF_CALIBRATE_H
#define RF_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "simulate.h"
#include "step.h"
#include "store.h"
#include "topology.h"

/* The knobs a calibration may fit; only those the data can identify are fitted. */
enum rf_cal_param {
    RF_CAL_NVLINK_EFFICIENCY,
    RF_CAL_NIC_EFFICIENCY,
    RF_CAL_MESSAGE_LATENCY_US,
    RF_CAL_TENSOR_OVERHEAD_US,
    RF_CAL_BUCKET_OVERHEAD_US,
    /* The step's per-call costs and host rates (cluster.calibration, sim/topology.h). */
    RF_CAL_KERNEL_LAUNCH_US,
    RF_CAL_NCCL_CALL_US,
    RF_CAL_BARRIER_US,
    RF_CAL_LOADER_SCAN_US,
    RF_CAL_REG_REGION_US,
    RF_CAL_H2D_GBPS,
    RF_CAL_D2H_GBPS,
    RF_CAL_PARAM_COUNT
};

/* One ok measurement of a run predicted on the cluster: a replay (refit-exec), compared with
 * the wire, or a step read from a log (refit measure), compared with the step the run's
 * framework profile gives (with the wire when the run has no profile). */
struct rf_cal_point {
    int64_t run_id, measurement_id;
    bool log;  /* backend 'log' */
    bool step; /* compared with the step, else with the wire */
    double measured_s;
    double before_s, after_s; /* predictions with the original and the fitted knobs */
    int32_t n_rounds;         /* measured rounds used in the fit (0: the total only) */
    /* A log's phases (NAN where it printed none): measured, and the step's phase of that
     * name summed over its parts, before and after. */
    double phase_measured[RF_STEP_PHASE_COUNT];
    double phase_before[RF_STEP_PHASE_COUNT], phase_after[RF_STEP_PHASE_COUNT];
};

struct rf_calibration {
    /* The fitted cluster: a copy of the input whose calibration holds the fitted values;
     * its strings are the input cluster's (borrowed). */
    struct rf_cluster fitted;
    bool used[RF_CAL_PARAM_COUNT]; /* identified by the data, hence fitted */
    /* A knob that moves the predictions but only as a fitted one does (bucket_overhead_us
     * and message_latency_us both start every broadcast): that knob, and it is kept; -1. */
    int tied[RF_CAL_PARAM_COUNT];
    double before[RF_CAL_PARAM_COUNT], after[RF_CAL_PARAM_COUNT];
    struct rf_cal_point *points;
    size_t n_points;
    double rms_before, rms_after;             /* RMS relative error of the total times */
    double objective_before, objective_after; /* what the fit minimised */
    int evaluations;                          /* objective evaluations (each simulates every run) */
};

const char *rf_cal_param_name(enum rf_cal_param p);

/* Fits cluster's calibration to every ok measurement whose run was predicted on a cluster
 * of that name (prediction.cluster), with the run's stored node count, simulating with opts
 * (NULL: the defaults), which a prediction from the written file must use too to match.
 * framework, when not NULL, keeps the runs stored under that framework profile only (the
 * description's framework.name). No usable measurement is an RF_EINVAL error. Release out
 * with rf_calibration_release. */
int rf_calibrate(struct rf_store *st, const struct rf_cluster *cluster,
                 const struct rf_sim_options *opts, const char *framework,
                 struct rf_calibration *out, struct rf_error *err);
void rf_calibration_release(struct rf_calibration *cal);

/* Writes the fitted cluster as a cluster file (`return cluster.system{...}`) named name to
 * f; when is a timestamp for the header comment. Every string is a quoted Lua literal and
 * every number reads back as exactly the double written. */
int rf_calibration_write(const struct rf_calibration *cal, const char *name, const char *when,
                         FILE *f, struct rf_error *err);
/* The same, as the file path, replaced atomically (sim/fileio.h): a failure leaves path as
 * it was. */
int rf_calibration_save(const struct rf_calibration *cal, const char *name, const char *when,
                        const char *path, struct rf_error *err);

#endif
