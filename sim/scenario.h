/* The Lua bridge: one Lua state running models/lib (validation and normalisation), and the
 * conversion of its normalised tables into C structs. Nothing past this file sees Lua. */
#ifndef RF_SCENARIO_H
#define RF_SCENARIO_H

#include "error.h"
#include "framework.h"
#include "layout.h"
#include "memory.h"
#include "model.h"
#include "overlap.h"
#include "plan.h"
#include "sandbox.h"
#include "topology.h"

struct rf_scenario {
    char *source;
    /* Where the sides came from when a framework config gave them ("verl ppo.yaml; set in
     * the scenario: train.placement"), NULL when the scenario wrote them. */
    char *sides;
    /* What the refit moves when not the full weights ("lora rank 64 on q_proj, v_proj"):
     * the model's tensors are then the adapters (models/lib/update.lua); NULL: full. */
    char *update;
    struct rf_model model;
    /* The weights both sides hold but the refit does not move (a LoRA update's base model:
     * frozen, so no gradients or optimizer state); empty for a full update. */
    struct rf_model frozen;
    /* A refit that overlaps generation (sim/overlap.h); zeroed: the engines stop for it. */
    struct rf_overlap overlap;
    struct rf_side train, infer;
    enum rf_strategy strategy;
    enum rf_strategy *tensor_strategy; /* per model tensor: broadcast or reshard */
    char *cluster_system;
    int64_t cluster_nodes;
    struct rf_cluster cluster;
    int64_t staging_bytes; /* schedule budget per GPU and round */
    int64_t chunk_bytes;   /* a relay's pipeline chunk; 0: the default (sim/schedule.h) */
    enum rf_sources sources;
    struct rf_relay relay;
    /* Memory at refit time (sim/memory.h), computed by rf_scenario_init_sides: a side that
     * does not fit is refused unless allow_overcommit (a what-if), then overcommitted. */
    bool allow_overcommit, overcommitted;
    struct rf_side_memory mem_train, mem_infer;
    /* Where a side that does not fit is reported ("dsv3.yaml:41: policy...tp_size: refit's
     * infer", or "x.lua:7: infer"), and the YAML key of the engine's memory share when a
     * config set it (models/lib/scenario.lua fit_sites); NULL where unknown. */
    char *fit_site[2], *share_site;
    /* How an RL framework runs the step (sim/framework.h); present false: no profile. */
    struct rf_framework framework;
};

struct rf_lua;
struct lua_State;

/* Opens a Lua state with the refit library of models_dir (its lib/ folder). */
int rf_lua_open(struct rf_lua **out, const char *models_dir, struct rf_error *err);
void rf_lua_close(struct rf_lua *L);
/* The Hugging Face hub cache (its models--org--name folders) a framework config's model id
 * is looked up in (models/lib/scenario.lua); NULL: none. */
void rf_lua_set_hf_cache(struct rf_lua *L, const char *dir);
/* Replaces the state's limits (sim/sandbox.h; the defaults are RF_LUA_*_LIMIT). */
void rf_lua_set_limits(struct rf_lua *L, const struct rf_lua_limits *limits);
/* Calls observe on every line the state runs (sim/sandbox.h). */
void rf_lua_set_observer(struct rf_lua *L, rf_lua_observer observe);
/* The most Lua memory the state held and instructions one entry ran, so far. */
void rf_lua_usage(const struct rf_lua *L, uint64_t *peak_bytes, uint64_t *peak_instructions);
/* Where a scenario comes from: a file, or (path NULL) a registry reference to a study's
 * spec { table = ..., source = "study.lua:12", base_dir = ... }. */
struct rf_scenario_src {
    const char *path;
    int ref;
};

/* Loads, validates and normalises a scenario; errors name file:line and the field.
 * A non-NULL strategy overrides the scenario's (the hybrid policy is applied in Lua). */
int rf_lua_load_scenario(struct rf_lua *L, const struct rf_scenario_src *src, const char *strategy,
                         struct rf_scenario *sc, struct rf_error *err);

/* What a study's refit.plan / refit.sim returns. */
struct rf_study_result {
    int64_t run_id;
    char model[64], cluster[64], strategy[16], infer_dtype[8];
    char train_layout[128], infer_layout[128];
    int64_t train_gpus, infer_gpus, model_params, model_bytes;
    int64_t payload_bytes, moved_bytes, logical_bytes, transfers, rounds;
    double predicted_s, lower_bound_s;
    /* The wire alone and, under a framework profile, the whole step (then predicted_s, as
     * stored); step_s is NAN without a profile. */
    double wire_s, step_s;
    int64_t fabric_bytes, nvlink_bytes;
    char bottleneck[96];
    char auto_choice[512];
    /* A refit that overlaps generation (sim/overlap.h): NAN without one. */
    double overlap_refit_s, stall_s, staleness_s;
};

/* Plans (and with simulate, simulates) one scenario of a study and stores it. */
typedef int (*rf_study_fn)(void *ctx, const struct rf_scenario_src *src, const char *strategy,
                           const char *label, bool simulate, struct rf_study_result *out,
                           struct rf_error *err);

/* Stores one refit.table of a study as it was printed (struct rf_study_table, sim/store.h).
 * A negative return is raised as a Lua error at the study's line. */
struct rf_study_table;
typedef int (*rf_study_table_fn)(void *ctx, const struct rf_study_table *t, struct rf_error *err);
/* A study's table callback and its context; fn NULL: tables are only printed. */
struct rf_study_table_up {
    rf_study_table_fn fn;
    void *ctx;
};
/* Pushes the study's table_api (sim/study_table_lua.c), or nil when up or up->fn is NULL. */
void rf_lua_push_study_table(struct lua_State *L, const struct rf_study_table_up *up);

/* A study's pass when it is distributed (models/lib/study.lua, Distribution; sim/
 * cmd_run_dist.c): serial (as without one), dry (record the points) or replay. */
enum { RF_STUDY_SERIAL, RF_STUDY_DRY, RF_STUDY_REPLAY };
struct rf_study_dist {
    int mode;
    /* dry, set by rf_lua_run_study: the points recorded, kept in the Lua state until
     * rf_lua_study_dist_release */
    int ref;
    size_t n_points;
    /* replay: point k's result when its fingerprint is fp: 1 with *result and the ids of
     * its runs, old[i] stored as new_ids[i] (all malloc'd, the caller frees), 0 when there
     * is none (the study computes the call itself), or an error. */
    int (*take)(void *ctx, int64_t k, const char *fp, char **result, int64_t **old,
                int64_t **new_ids, size_t *n, struct rf_error *err);
    void *take_ctx;
};

/* Runs the study script at path (models/lib/study.lua gives it its `refit` module); each
 * refit.plan / refit.sim goes to fn, each refit.table to table_fn (NULL: none), both with
 * ctx. dist NULL (or serial): a plain run. */
int rf_lua_run_study(struct rf_lua *L, const char *path, rf_study_fn fn, rf_study_table_fn table_fn,
                     void *ctx, struct rf_study_dist *dist, struct rf_error *err);
/* Computes point i (1-based) of a dry pass, with the functions the dry pass was given: its
 * call number k, its fingerprint and its result serialized (both malloc'd). */
int rf_lua_study_point(struct rf_lua *L, const struct rf_study_dist *dist, size_t i, int64_t *k,
                       char **fp, char **result, struct rf_error *err);
/* The call number of each point of a dry pass, ascending, into ks[0..n_points). */
int rf_lua_study_keys(struct rf_lua *L, const struct rf_study_dist *dist, int64_t *ks,
                      struct rf_error *err);
void rf_lua_study_dist_release(struct rf_lua *L, struct rf_study_dist *dist);
/* Loads a model by name (models/<name>.lua), .lua path or Hugging Face config.json path. */
int rf_lua_load_model(struct rf_lua *L, const char *spec, struct rf_model *model,
                      struct rf_error *err);
/* Loads a cluster preset by name (models/clusters/<name>.lua) or path. */
int rf_lua_load_cluster(struct rf_lua *L, const char *spec, struct rf_cluster *cluster,
                        struct rf_error *err);
/* Prepares both sides for planning (meshes, stage maps). */
int rf_scenario_init_sides(struct rf_scenario *sc, struct rf_error *err);
void rf_scenario_release(struct rf_scenario *sc);

/* The `refit.json` Lua module (JSON decoding with jansson). */
int rf_luaopen_json(struct lua_State *L);

#endif
