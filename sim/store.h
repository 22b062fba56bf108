/* The SQLite store: schema (version 13), and one transaction per run. The schema is the
 * user-facing API of the results; README.md documents every table. */
#ifndef RF_STORE_H
#define RF_STORE_H

#include <stdbool.h>

#include "error.h"
#include "layout.h"
#include "plan.h"

#define RF_STORE_APPLICATION_ID 0x52454654 /* "REFT" */
#define RF_STORE_SCHEMA_VERSION 16

struct sqlite3;
struct rf_rows;

struct rf_store {
    struct sqlite3 *db;
    char *path;          /* as given to rf_store_open: every error names it */
    double busy_seconds; /* how long a statement waits for another writer's lock */
    /* The rows refit_rows yields during rf_store_insert_rows (sim/store_rows.c). */
    const struct rf_rows *rows;
    bool rows_module; /* registered on db */
};

/* How rf_store_open treats the file. */
enum {
    RF_STORE_CREATE = 1,   /* create it if missing (refit plan, sim, run); migrate it */
    RF_STORE_EXISTING = 2, /* it must exist and be a refit database (refit-exec); migrate it */
    /* Implies EXISTING: opened with SQLITE_OPEN_READONLY, no journal mode set, no migration,
     * nothing written (refit report, calibrate); works in a read-only folder. */
    RF_STORE_READONLY = 4,
};

/* Seconds a statement waits for a lock another process holds before it fails with
 * RF_EBUSY, unless rf_store_set_busy_timeout says otherwise. Long enough for another refit
 * to store a large plan (Kimi K3: 10 s). */
#define RF_STORE_BUSY_SECONDS 30.0

/* Rows of another part's tables for run `run`, written inside rf_store_save_plan's
 * transaction after the plan's (the simulator's prediction: sim/store_prediction.h). A
 * negative return rolls the whole run back; err says why. */
struct rf_store_rows {
    int (*write)(struct rf_store *st, int64_t run, void *ctx, struct rf_error *err);
    void *ctx;
};

/* One refit.table of a study as printed (README: table study_table): the title (NULL
 * when none), the headers and the rows as JSON arrays of the printed cell strings, and the
 * aligned text exactly as printed. */
struct rf_study_table {
    const char *title, *columns_json, *rows_json, *text;
};

/* A study script's run (refit run STUDY.lua; README: table study). Written in the
 * transaction of the first run it stores, so a study that stores nothing writes nothing;
 * id is 0 until then and the study's id after. */
struct rf_store_study {
    const char *path;          /* as given on the command line */
    const char *name;          /* the basename without .lua */
    const char *started_at;    /* ISO 8601 UTC */
    const char *refit_version; /* NULL when the build has none */
    int64_t id;
    /* The tables printed before the study's row was written (owned by the caller): written
     * with that row, in the same transaction, as ordinals 1..n_pending. */
    const struct rf_study_table *pending;
    size_t n_pending;
};

/* A distributed study's shards (sim/store_import.c, sim/cmd_run_dist.c). In a shard:
 * records point k (its fingerprint, its serialized result and the ids of the runs it
 * stored) in the shard's own table. */
int rf_store_point_save(struct rf_store *st, int64_t k, const char *fp, const char *result,
                        const int64_t *runs, size_t n_runs, struct rf_error *err);
/* Attaches the shard at path as schema "shard" (outside a transaction), and detaches it. */
int rf_store_attach(struct rf_store *st, const char *path, struct rf_error *err);
void rf_store_detach(struct rf_store *st);
/* Point k of the attached shard when its fingerprint is fp: 1 with its result and run ids
 * (the caller frees both), 0 when the shard has no such point, or an error. */
int rf_store_point_take(struct rf_store *st, int64_t k, const char *fp, char **result,
                        int64_t **runs, size_t *n_runs, struct rf_error *err);
/* Copies run old of the attached shard into st in one transaction, as the next run id
 * (*new_id), of study (written with it when not stored yet, as rf_store_save_plan does). */
int rf_store_import_run(struct rf_store *st, int64_t old, struct rf_store_study *study,
                        int64_t *new_id, struct rf_error *err);

/* Stores table t of study, numbered after the study's tables stored before, in its own
 * transaction. The study must have been stored (id > 0) by one of its runs. */
int rf_store_save_study_table(struct rf_store *st, const struct rf_store_study *study,
                              const struct rf_study_table *t, struct rf_error *err);

/* What a run records besides the plan itself. */
struct rf_run_info {
    const char *label;
    const char *scenario;
    const char *model;
    const char *cluster_system;
    int64_t cluster_nodes;
    const struct rf_side *train, *infer;
    double plan_seconds;
    /* Optional (NULL: not stored): the resolved scenario as JSON (sim/describe.h,
     * run.scenario_json). */
    const char *scenario_json;
    /* Optional: more rows of this run, in the same transaction. */
    const struct rf_store_rows *more;
    /* Store the run as a summary (run.stored 'summary'): its row, sides, tallies per role,
     * description and more's rows (prediction, memory), but no tensor, box, transfer,
     * collective or round rows, so it cannot be replayed. A tenth of a full Kimi K3 run's
     * rows and less: what studies and searches compare. */
    bool summary;
    /* Optional: the study that stores the run (run.study_id); a study not stored yet
     * (id 0) is stored in the run's transaction and its id set once that commits. */
    struct rf_store_study *study;
};

/* Opens a refit database as flags say (one of RF_STORE_CREATE, _EXISTING, _READONLY); a
 * writable open migrates an older file. A file that is not a refit database, one with
 * tables but no refit schema version, or one written by a newer refit is refused before
 * anything is written. Every error names path. */
int rf_store_open(struct rf_store *st, const char *path, int flags, struct rf_error *err);
/* Changes how long statements wait for another process's lock (RF_EBUSY after that). */
void rf_store_set_busy_timeout(struct rf_store *st, double seconds);
void rf_store_close(struct rf_store *st);
/* Stores a run and its plan (and info->more's rows) in one transaction; on any error
 * nothing is left behind. */
int rf_store_save_plan(struct rf_store *st, const struct rf_run_info *info,
                       const struct rf_plan *plan, int64_t *run_id, struct rf_error *err);

/* What a stored run needs to be replayed: its plan (tensors, boxes, transfers, collectives,
 * rounds) and both sides, rebuilt so shards can be recomputed with the layout algebra.
 * Fields the replay does not need (tallies per role, quantisation flags) are left zero. */
struct rf_stored_run {
    int64_t id;
    char *model;
    char *scenario_json; /* the run's description (sim/describe.h); NULL before schema 7 */
    struct rf_plan plan;
    struct rf_side train, infer;
};

/* Loads run `id`; a run without a schedule (planned before schema version 2) is refused. */
int rf_store_load_run(struct rf_store *st, int64_t id, struct rf_stored_run *run,
                      struct rf_error *err);
void rf_stored_run_release(struct rf_stored_run *run);

/* The tables rf_store_remove_runs empties of a run's rows. */
#define RF_STORE_RUN_TABLES 17

/* What rf_store_remove_runs removed: the runs' ids (rf_store_removed_release frees them), the
 * rows it deleted from each table, and the file's free pages after it (SQLite's freelist,
 * which the next runs stored reuse; the file itself keeps its size). */
struct rf_store_removed {
    int64_t *ids;
    size_t n_ids;
    struct {
        const char *table;
        int64_t rows;
    } tables[RF_STORE_RUN_TABLES];
    int64_t free_pages, page_size;
    /* The studies whose last runs these were, removed with their tables (study_table). */
    int64_t studies, study_tables;
};

/* Removes runs ids[0..n) (or, when label is not NULL, every run with that label, and ids is
 * ignored) and every row that references them, and every study left without runs, in one
 * transaction: a run that does not exist, or a label no run has, is an error naming it and
 * nothing is removed. */
int rf_store_remove_runs(struct rf_store *st, const int64_t *ids, size_t n, const char *label,
                         struct rf_store_removed *out, struct rf_error *err);
void rf_store_removed_release(struct rf_store_removed *r);

/* What refit-exec measured when it replayed a run (README: table measurement). */
struct rf_measurement {
    int64_t run_id;
    const char *backend; /* "nccl" or "mpi" ("log" is rf_store_log_measurement's) */
    int64_t world_size;
    int64_t iters, warmup;
    const char *status;     /* "ok", "failed" or "unverified" */
    const char *error_text; /* NULL when nothing went wrong */
    /* Median, fastest and slowest timed iteration, each the slowest rank's time; negative
     * when not measured (stored as NULL). */
    double seconds, seconds_min, seconds_max;
    int64_t bytes_verified, errors;
    const char *hosts, *gpu_model, *nccl_version, *mpi_version; /* NULL when unknown */
    /* How refit-exec ran it: backend, communicator mode, FP8 conversion, fill ("nccl
     * blocking=1 fp8=kernel fill=device nvcc=13.0", "mpi fill=host"); NULL when unknown. */
    const char *exec_config;
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

/* One phase of the step a framework's log printed (table measured_phase). */
struct rf_log_phase {
    const char *phase; /* the step's name for it (rf_step_phase_name): export, transfer, ... */
    double seconds;
};

/* The times refit takes as measurements of a step, a phase or a replay (refit measure,
 * refit calibrate). Below a microsecond is no refit's time: one NCCL call costs several
 * (nccl-tests' latency floor), logs print milliseconds and refit-exec's timers resolve
 * about 0.5 us, so such a figure is a unit slip (ms given as s... or 1e-300), and its
 * relative error would dominate any fit. Above 10^6 s (11.6 days) likewise. */
#define RF_MEASURED_MIN_S 1e-6
#define RF_MEASURED_MAX_S 1e6

/* A refit step's time as the framework's own log printed it (refit measure; README:
 * Measurements): no replay, nothing verified. */
struct rf_log_measurement {
    int64_t run_id;
    double seconds;     /* the whole step */
    const char *source; /* where the figure came from, as the user says it; NULL: not said */
    const struct rf_log_phase *phases;
    size_t n_phases;
};

/* Stores m as an ok measurement of backend 'log' (iters 1, world_size 0, bytes_verified 0:
 * a log verifies nothing) with its phases, in one transaction, and gives its id. Refused
 * with nothing written: a run that is not in the file, seconds outside RF_MEASURED_MIN_S
 * to RF_MEASURED_MAX_S, a phase twice, a phase's seconds neither 0 nor in that range, or
 * more than the step's, phases for a run
 * with no predicted step (no framework profile: nothing to compare them with). Phase names
 * are the caller's to check (rf_step_phase_parse); the table's CHECK refuses any other. */
int rf_store_log_measurement(struct rf_store *st, const struct rf_log_measurement *m, int64_t *id,
                             struct rf_error *err);

#endif
