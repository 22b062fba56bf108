/* The Lua side of layout search: the candidate layouts models/lib/search.lua enumerates, and
 * a study's refit.search and refit.estimate calling back into C. */
#ifndef RF_SEARCH_LUA_H
#define RF_SEARCH_LUA_H

#include "simulate.h"

struct rf_lua;
struct rf_scenario_src;
struct rf_search_request;
struct rf_search_result;
struct rf_search_row;
struct rf_error;

/* The candidate layouts of the scenario at src for req (refit.search_layouts): rows
 * allocated (sizes filled, the rest zero), each holding a registry reference to its
 * scenario spec, for rf_lua_load_scenario's src.ref; free them with free() after
 * rf_lua_unref of each. */
int rf_lua_search_layouts(struct rf_lua *L, const struct rf_scenario_src *src,
                          const struct rf_search_request *req, struct rf_search_row **rows,
                          size_t *n_rows, struct rf_error *err);
void rf_lua_unref(struct rf_lua *L, int ref);

/* What answers a study's refit.search: search(ctx, ...) runs and stores it (the command
 * that runs the study owns the database); refit.estimate needs only the simulator's
 * options. With search NULL, refit.search raises. */
struct rf_study_search {
    int (*search)(void *ctx, const struct rf_scenario_src *src, const struct rf_search_request *req,
                  struct rf_search_result *out, struct rf_error *err);
    void *ctx;
    struct rf_sim_options sim;
};
void rf_lua_set_study_search(struct rf_lua *L, const struct rf_study_search *s);
/* Pushes the fourth argument of study.run: { search = fn, estimate = fn } (sim/scenario.c). */
void rf_lua_push_study_search(struct rf_lua *L);

#endif
