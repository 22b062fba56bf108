/* The whole refit step as phases (export, transfer, load, finalize), each a mechanism with
 * its cost, as a framework profile (sim/framework.h) runs it around the simulated wire. */
#ifndef RF_STEP_H
#define RF_STEP_H

#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "framework.h"
#include "plan.h"
#include "simulate.h"

enum rf_step_phase_kind {
    RF_STEP_EXPORT,   /* sender: gathers, conversion, packing, quantisation */
    RF_STEP_TRANSFER, /* the wire: the simulated plan (or its part) */
    RF_STEP_LOAD,     /* receivers: copies into parameters, quantisation, loader calls */
    RF_STEP_FINALIZE, /* once per refit on the engine */
    RF_STEP_PREPARE,  /* colocated: optimizer state to host, the engine's weights back */
    RF_STEP_RESUME,   /* colocated: the training weights to host after the refit */
    RF_STEP_PHASE_COUNT
};

/* The parts of a step: a broadcast run is one part ("all"); hybrid under a profile is the
 * reshard bulk, then the broadcast of the rest ("misc"). */
enum rf_step_part { RF_STEP_ALL, RF_STEP_BULK, RF_STEP_MISC, RF_STEP_PART_COUNT };

#define RF_STEP_MECHANISM_MAX 160
/* A composition line holds the citation of an overlap (RF_FW_WHY_MAX) besides its own. */
#define RF_STEP_COMPOSITION_MAX 480
struct rf_step_phase {
    enum rf_step_part part;
    enum rf_step_phase_kind phase;
    double seconds; /* the phase's own time, summed over its buckets */
    int64_t bytes;  /* bytes it moves or touches on its busiest GPU */
    int64_t calls;  /* collectives, copies or framework calls it issues on that GPU */
    char mechanism[RF_STEP_MECHANISM_MAX]; /* one line: what it is and its knob */
};

#define RF_STEP_PHASES_MAX 16
struct rf_step {
    struct rf_step_phase phase[RF_STEP_PHASES_MAX];
    size_t n;
    /* How the phases compose into the step's time (one line, e.g. "2 buffers: max(export,
     * transfer, load) + first export + last load"). */
    char composition[RF_STEP_COMPOSITION_MAX];
    double total_s;
};

/* What the phase model takes: the plan and its sides on the cluster, the profile, and the
 * wire times of the plan's parts (rf_step_predict simulates them). */
struct rf_step_input {
    const struct rf_plan *plan;
    const struct rf_side *train, *infer;
    const struct rf_topology *topo;
    const struct rf_framework *fw;
    int64_t bucket;  /* the framework's bucket, bytes */
    int64_t buckets; /* of the broadcast path */
    double wire_all_s, wire_bulk_s, wire_misc_s;
    /* The busiest training-side NIC port's busy time in the broadcast wire (all, misc):
     * what overlapped export collectives share. */
    double wire_all_nic_s, wire_misc_nic_s;
    int bulk_groups; /* groups of training stages the bulk went in */
    /* A point-to-point path that moves the experts after the dense tensors: each group's
     * wire simulated alone (0 otherwise). */
    double wire_dense_s, wire_expert_s;
    /* The broadcast communicator: ranks, NCCL's rings, one call's launch latency. */
    int64_t comm_ranks;
    int64_t roots;       /* distinct broadcast roots */
    int64_t colo_bucket; /* the colocated path's IPC buffer, bytes */
    int comm_rings;
    double bcast_latency_s;
};

/* The step of a scheduled plan as fw runs it. whole is the plan's prediction as
 * rf_simulate gave it with the profile's options (skip_gather unless the profile gathers
 * point to point); the parts a hybrid step needs (the bulk by groups of training stages,
 * the misc broadcast) are simulated here with opts. */
int rf_step_predict(const struct rf_plan *plan, const struct rf_side *train,
                    const struct rf_side *infer, const struct rf_topology *topo,
                    const struct rf_framework *fw, const struct rf_sim_options *opts,
                    const struct rf_prediction *whole, struct rf_step *out, struct rf_error *err);
/* The step of the same plan from the simulator's bound mode, as a search ranks layouts:
 * wire_s is the whole plan's estimate (rf_simulate_bound's, with opts' skip_gather), a
 * hybrid step's parts are estimated the same way, and export, load and finalize are
 * rf_step_predict's. Bound mode keeps no link's busy time, so the floor of an overlapped
 * step (a training NIC the export's collectives and the broadcast share) counts the
 * export's share alone. */
int rf_step_estimate(const struct rf_plan *plan, const struct rf_side *train,
                     const struct rf_side *infer, const struct rf_topology *topo,
                     const struct rf_framework *fw, const struct rf_sim_options *opts,
                     double wire_s, struct rf_step *out, struct rf_error *err);

const char *rf_step_phase_name(enum rf_step_phase_kind phase);
const char *rf_step_part_name(enum rf_step_part part);
/* The kind or part of a stored name; -1 when unknown. */
int rf_step_phase_parse(const char *name);
int rf_step_part_parse(const char *name);

#endif
