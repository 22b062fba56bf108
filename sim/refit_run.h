/* One run of a scenario as the plan, sim and run commands make it (plan, predict, describe,
 * store in one transaction), and what plan and sim both print of it. */
#ifndef RF_REFIT_RUN_H
#define RF_REFIT_RUN_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "auto.h"
#include "cmd.h"
#include "error.h"
#include "plan.h"
#include "scenario.h"
#include "simulate.h"
#include "step.h"
#include "topology.h"

/* Owns everything it built until refit_run_release. */
struct refit_run {
    struct rf_scenario sc;
    struct rf_plan plan;
    struct rf_topology topo, alt_topo;
    struct rf_cluster alt_cluster; /* PXN flipped for auto; shares sc.cluster's strings */
    struct rf_prediction pred;
    struct rf_auto_choice choice;
    struct rf_step step; /* under a framework profile: the step's phases (sim/step.h) */
    struct rf_overlap_result
        overlap;                    /* an overlapped refit's stall and staleness (on: sc.overlap) */
    double wire_s;                  /* the simulated wire (pred's seconds before a step) */
    const struct rf_topology *used; /* the topology the prediction was made on */
    char *scenario_json;            /* the run's description (sim/describe.h) */
    /* The plan's size and the run's memory estimated before any work (--max-memory). */
    struct rf_plan_size size;
    int64_t estimate_bytes;
    int64_t id;
    bool summary; /* refit_run_store stores it as a summary (--store summary: no plan rows) */
    struct rf_store_study *study;     /* the study that stores it (refit run), or NULL */
    double t0, plan_seconds, seconds; /* t0: start; seconds: until stored */
};

/* Plans (and with simulate, predicts) one run; nothing is stored yet, so a scenario that
 * fails here leaves every database as it was. strategy (NULL: the scenario's) overrides. */
int refit_run_compute(struct rf_lua *L, const struct rf_scenario_src *src, const char *strategy,
                      bool simulate, const struct rf_sim_options *sim, struct refit_run *r,
                      struct rf_error *err);
/* Stores a computed run in one transaction (a failure leaves no part of it); fills r->id. */
int refit_run_store(struct lazy_store *ls, const char *label, struct refit_run *r,
                    struct rf_error *err);
void refit_run_release(struct refit_run *r);

/* sim/refit_run_output.c: the memory line of each side, marked where it does not fit. */
void refit_print_memory(FILE *f, const struct rf_scenario *sc);
/* The memory lines as text (NULL when out of memory); the caller frees it. */
char *refit_memory_lines(const struct rf_scenario *sc);
/* The plan's size and memory estimated before the run (rf_plan_estimate): "boxes",
 * "deliveries", "memory_bytes", the figure --max-memory is held against. */
json_t *refit_estimate_json(const struct refit_run *r);
/* "memory": each side's worst GPU, and whether the run is an overcommitted what-if. */
json_t *refit_memory_json(const struct rf_scenario *sc);
/* "placement": how the inference engines sit on the NVLink domains (rf_engine_place). */
json_t *refit_placement_json(const struct rf_side *s);
/* Peak resident memory of this process, in bytes (-1 when unknown). */
int64_t refit_peak_rss(void);

#endif
