/* The Lua bridge: one Lua state running models/lib (validation and normalisation), and the
 * conversion of its normalised tables into C structs. Nothing past this file sees Lua. */
#ifndef RF_SCENARIO_H
#define RF_SCENARIO_H

#include "error.h"
#include "layout.h"
#include "model.h"
#include "plan.h"
#include "topology.h"

struct rf_scenario {
    char *source;
    struct rf_model model;
    struct rf_side train, infer;
    enum rf_strategy strategy;
    enum rf_strategy *tensor_strategy; /* per model tensor: broadcast or reshard */
    char *cluster_system;
    int64_t cluster_nodes;
    struct rf_cluster cluster;
    int64_t staging_bytes; /* schedule budget per GPU and round */
    enum rf_sources sources;
};

struct rf_lua;
struct lua_State;

/* Opens a Lua state with the refit library of models_dir (its lib/ folder). */
int rf_lua_open(struct rf_lua **out, const char *models_dir, struct rf_error *err);
void rf_lua_close(struct rf_lua *L);
/* Loads, validates and normalises a scenario file; errors name file:line and the field.
 * A non-NULL strategy overrides the scenario's (the hybrid policy is applied in Lua). */
int rf_lua_load_scenario(struct rf_lua *L, const char *path, const char *strategy,
                         struct rf_scenario *sc, struct rf_error *err);
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
