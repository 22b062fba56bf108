/* The SQLite store: schema (version 4), and one transaction per run. The schema is the
 * user-facing API of the results; README.md documents every table. */
#ifndef RF_STORE_H
#define RF_STORE_H

#include "error.h"
#include "layout.h"
#include "plan.h"
#include "simulate.h"
#include "topology.h"

#define RF_STORE_APPLICATION_ID 0x52454654 /* "REFT" */
#define RF_STORE_SCHEMA_VERSION 4

struct sqlite3;

struct rf_store {
    struct sqlite3 *db;
};

/* What a run records besides the plan itself. */
struct rf_run_info {
    const char *label;
    const char *scenario;
    const char *model;
    const char *cluster_system;
    int64_t cluster_nodes;
    const struct rf_side *train, *infer;
    double plan_seconds;
    /* Optional: the simulator's prediction on this topology, stored in the same
     * transaction. */
    const struct rf_prediction *prediction;
    const struct rf_topology *topo;
};

/* Opens (creating or migrating) a refit database. A file that is not a refit database, or
 * one written by a newer refit, is refused. */
int rf_store_open(struct rf_store *st, const char *path, struct rf_error *err);
void rf_store_close(struct rf_store *st);
/* Stores a run and its plan in one transaction; on any error nothing is left behind. */
int rf_store_save_plan(struct rf_store *st, const struct rf_run_info *info,
                       const struct rf_plan *plan, int64_t *run_id, struct rf_error *err);

/* What a stored run needs to be replayed: its plan (tensors, boxes, transfers, collectives,
 * rounds) and both sides, rebuilt so shards can be recomputed with the layout algebra.
 * Fields the replay does not need (tallies per role, quantisation flags) are left zero. */
struct rf_stored_run {
    int64_t id;
    char *model;
    struct rf_plan plan;
    struct rf_side train, infer;
};

/* Loads run `id`; a run without a schedule (planned before schema version 2) is refused. */
int rf_store_load_run(struct rf_store *st, int64_t id, struct rf_stored_run *run,
                      struct rf_error *err);
void rf_stored_run_release(struct rf_stored_run *run);

/* What refit-exec measured when it replayed a run (README: table measurement). */
struct rf_measurement {
    int64_t run_id;
    const char *backend; /* "nccl" or "mpi" */
    int64_t world_size;
    int64_t iters, warmup;
    const char *status;     /* "ok", "failed" or "unverified" */
    const char *error_text; /* NULL when nothing went wrong */
    /* Median, fastest and slowest timed iteration, each the slowest rank's time; negative
     * when not measured (stored as NULL). */
    double seconds, seconds_min, seconds_max;
    int64_t bytes_verified, errors;
    const char *hosts, *gpu_model, *nccl_version, *mpi_version; /* NULL when unknown */
    const double *round_seconds; /* median per round, n_rounds entries; NULL for none */
    int32_t n_rounds;
};

/* Inserts measurement m (its round times are ignored) and returns its id: a replay
 * stores itself as failed ("did not finish") before it starts, so a job that dies midway
 * leaves a failed row and never a measurement. */
int rf_store_measurement_begin(struct rf_store *st, const struct rf_measurement *m, int64_t *id,
                               struct rf_error *err);
/* Overwrites measurement id with m and stores its round times, in one transaction. */
int rf_store_measurement_finish(struct rf_store *st, int64_t id, const struct rf_measurement *m,
                                struct rf_error *err);

#endif
