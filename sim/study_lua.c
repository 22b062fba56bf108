/* The study bridge: a study script (refit run) in the sandbox with a `refit` module whose
 * plan and sim functions call back into C, and the points of a study spread over ranks. */
#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "lua_int.h"
#include "sandbox.h"
#include "scenario.h"
#include "search_lua.h"

/* Studies. A study script runs in the sandbox with a `refit` module (models/lib/study.lua)
 * whose plan and sim functions call back into C through this closure: upvalues are the
 * callback, its context and the bridge. Lua errors are raised only after every C resource
 * of the call is released. */
struct study_up {
    struct rf_lua *R;
    rf_study_fn fn;
    void *ctx;
};

/* api(spec, strategy, label, simulate) -> result table */
/* "file:line: " of the function at level, with the whole file name: luaL_where gives
 * short_src, which Lua cuts to 60 bytes ("...ld/sub/t/x.lua"), so it would not name the
 * file a user can open. */
static void push_where(lua_State *L, int level)
{
    lua_Debug ar;
    if (lua_getstack(L, level, &ar) && lua_getinfo(L, "Sl", &ar) && ar.currentline > 0) {
        if (ar.source[0] == '@')
            lua_pushfstring(L, "%s:%d: ", ar.source + 1, ar.currentline);
        else
            lua_pushfstring(L, "%s:%d: ", ar.short_src, ar.currentline);
        return;
    }
    lua_pushliteral(L, "");
}

static int l_study_call(lua_State *L)
{
    struct study_up *up = lua_touserdata(L, lua_upvalueindex(1));
    struct rf_scenario_src src = {.path = NULL, .ref = LUA_NOREF};
    struct rf_study_result res;
    struct rf_error err = {0};
    char msg[sizeof(err.msg)];
    luaL_checktype(L, 1, LUA_TTABLE);
    const char *strategy = luaL_optstring(L, 2, NULL);
    size_t label_len = 0;
    const char *label = luaL_optlstring(L, 3, NULL, &label_len);
    bool simulate = lua_toboolean(L, 4);
    /* Checked here, before anything is held, so the error names the study's line: level 1
     * is refit.plan / refit.sim in study.lua, level 2 the study that called it. */
    if (label && !rf_utf8_valid(label, label_len)) {
        push_where(L, 2);
        lua_pushstring(L, "label: not valid UTF-8 (a label is stored as text)");
        lua_concat(L, 2);
        return lua_error(L);
    }
    lua_getfield(L, 1, "path");
    src.path = lua_tostring(L, -1); /* stays valid: the spec table holds it */
    lua_pop(L, 1);
    if (!src.path) {
        lua_pushvalue(L, 1);
        src.ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
    memset(&res, 0, sizeof(res));
    int rc = up->fn(up->ctx, &src, strategy, label, simulate, &res, &err);
    if (src.ref != LUA_NOREF)
        luaL_unref(L, LUA_REGISTRYINDEX, src.ref);
    /* The plan's own loads had their budgets; the study's next step gets a fresh one. */
    rf_sandbox_reset(&up->R->sb);
    if (rc < 0) {
        /* lua_error, not luaL_error: the message already says where, in the study. */
        snprintf(msg, sizeof(msg), "%s", err.msg);
        lua_pushstring(L, msg);
        return lua_error(L);
    }
    lua_createtable(L, 0, 24);
    rf_lua_set_int(L, "run_id", res.run_id);
    rf_lua_set_str(L, "model", res.model);
    rf_lua_set_str(L, "cluster", res.cluster);
    rf_lua_set_str(L, "strategy", res.strategy);
    rf_lua_set_str(L, "train_layout", res.train_layout);
    rf_lua_set_str(L, "infer_layout", res.infer_layout);
    rf_lua_set_int(L, "train_gpus", res.train_gpus);
    rf_lua_set_int(L, "infer_gpus", res.infer_gpus);
    rf_lua_set_str(L, "infer_dtype", res.infer_dtype);
    rf_lua_set_int(L, "model_params", res.model_params);
    rf_lua_set_int(L, "model_bytes", res.model_bytes);
    rf_lua_set_int(L, "payload_bytes", res.payload_bytes);
    rf_lua_set_int(L, "moved_bytes", res.moved_bytes);
    rf_lua_set_int(L, "logical_bytes", res.logical_bytes);
    rf_lua_set_int(L, "transfers", res.transfers);
    rf_lua_set_int(L, "rounds", res.rounds);
    if (simulate) {
        rf_lua_set_num(L, "predicted_s", res.predicted_s);
        rf_lua_set_num(L, "lower_bound_s", res.lower_bound_s);
        rf_lua_set_int(L, "fabric_bytes", res.fabric_bytes);
        rf_lua_set_int(L, "nvlink_bytes", res.nvlink_bytes);
        rf_lua_set_str(L, "bottleneck", res.bottleneck);
        if (res.auto_choice[0])
            rf_lua_set_str(L, "auto_choice", res.auto_choice);
        /* An overlapped refit: the refit as the engines shared it, the longest stall, and
         * when the last engine has the new weights (sim/overlap.h). */
        if (!isnan(res.stall_s)) {
            rf_lua_set_num(L, "overlap_refit_s", res.overlap_refit_s);
            rf_lua_set_num(L, "stall_s", res.stall_s);
            rf_lua_set_num(L, "staleness_s", res.staleness_s);
        }
    }
    return 1;
}

/* dist.take(k, fp) of a replay: nil, or the point's serialized result and a table of its
 * runs' ids, old -> new. */
static int l_study_take(lua_State *L)
{
    struct rf_study_dist *d = lua_touserdata(L, lua_upvalueindex(1));
    int64_t k = (int64_t)luaL_checkinteger(L, 1);
    const char *fp = luaL_checkstring(L, 2);
    char *result = NULL;
    int64_t *old = NULL, *new_ids = NULL;
    size_t n = 0;
    struct rf_error err = {0};
    int rc = d->take(d->take_ctx, k, fp, &result, &old, &new_ids, &n, &err);
    if (rc < 0) {
        char msg[sizeof(err.msg)];
        snprintf(msg, sizeof(msg), "%s", err.msg);
        free(result);
        free(old);
        free(new_ids);
        lua_pushstring(L, msg);
        return lua_error(L);
    }
    if (rc == 0) {
        lua_pushnil(L);
        return 1;
    }
    lua_pushstring(L, result);
    lua_createtable(L, 0, (int)n);
    for (size_t i = 0; i < n; i++) {
        lua_pushinteger(L, (lua_Integer)new_ids[i]);
        lua_rawseti(L, -2, (lua_Integer)old[i]);
    }
    free(result);
    free(old);
    free(new_ids);
    return 2;
}

int rf_lua_run_study(struct rf_lua *R, const char *path, rf_study_fn fn, rf_study_table_fn table_fn,
                     void *ctx, struct rf_study_dist *dist, struct rf_error *err)
{
    lua_State *L = R->L;
    struct study_up up = {R, fn, ctx};
    struct rf_study_table_up table_up = {table_fn, ctx};
    int top = lua_gettop(L);
    if (dist)
        dist->ref = LUA_NOREF;
    lua_getglobal(L, "require");
    lua_pushstring(L, "study");
    int rc = rf_sandbox_pcall(&R->sb, 1, 1, R->handler, path, err);
    if (rc < 0)
        goto out;
    /* The dist table below the call: what the dry pass records in it stays. */
    int dist_at = 0;
    if (dist && dist->mode != RF_STUDY_SERIAL) {
        lua_createtable(L, 0, 4);
        lua_pushstring(L, dist->mode == RF_STUDY_DRY ? "dry" : "replay");
        lua_setfield(L, -2, "mode");
        if (dist->mode == RF_STUDY_REPLAY) {
            lua_pushlightuserdata(L, dist);
            lua_pushcclosure(L, l_study_take, 1);
            lua_setfield(L, -2, "take");
        }
        dist_at = lua_gettop(L);
    }
    lua_getfield(L, dist_at ? -2 : -1, "run");
    lua_pushstring(L, path);
    lua_rawgeti(L, LUA_REGISTRYINDEX, R->module);
    /* A copy the closure owns: a dry pass's points are computed after this returns. */
    struct study_up *owned = lua_newuserdatauv(L, sizeof(*owned), 0);
    *owned = up;
    lua_pushcclosure(L, l_study_call, 1);
    rf_lua_push_study_search(R);           /* refit.search and refit.estimate (sim/search_lua.c) */
    rf_lua_push_study_table(L, &table_up); /* refit.table's store (sim/study_table_lua.c) */
    if (dist_at)
        lua_pushvalue(L, dist_at);
    else
        lua_pushnil(L);
    rc = rf_sandbox_pcall(&R->sb, 6, 0, R->handler, path, err);
    if (rc == 0 && dist_at > 0 && dist->mode == RF_STUDY_DRY) {
        lua_getfield(L, dist_at, "points");
        dist->n_points = lua_istable(L, -1) ? (size_t)lua_rawlen(L, -1) : 0;
        lua_pop(L, 1);
        lua_pushvalue(L, dist_at);
        dist->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
out:
    lua_settop(L, top);
    return rc;
}

int rf_lua_study_point(struct rf_lua *R, const struct rf_study_dist *dist, size_t i, int64_t *k,
                       char **fp, char **result, struct rf_error *err)
{
    lua_State *L = R->L;
    int top = lua_gettop(L);
    *fp = *result = NULL;
    lua_rawgeti(L, LUA_REGISTRYINDEX, dist->ref);
    lua_getfield(L, -1, "points");
    lua_rawgeti(L, -1, (lua_Integer)i);
    lua_getfield(L, -1, "k");
    *k = (int64_t)lua_tointeger(L, -1);
    lua_getfield(L, -2, "fp");
    const char *f = lua_tostring(L, -1);
    *fp = f ? strdup(f) : NULL;
    lua_settop(L, top + 1);
    lua_getfield(L, -1, "compute");
    lua_pushinteger(L, (lua_Integer)i);
    int rc = rf_sandbox_pcall(&R->sb, 1, 1, R->handler, "study point", err);
    if (rc == 0) {
        const char *text = lua_tostring(L, -1);
        *result = text ? strdup(text) : NULL;
    }
    lua_settop(L, top);
    if (rc == 0 && (!*fp || !*result))
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
    if (rc < 0) {
        free(*fp);
        free(*result);
        *fp = *result = NULL;
    }
    return rc;
}

int rf_lua_study_keys(struct rf_lua *R, const struct rf_study_dist *dist, int64_t *ks,
                      struct rf_error *err)
{
    lua_State *L = R->L;
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, dist->ref);
    lua_getfield(L, -1, "points");
    for (size_t i = 0; i < dist->n_points; i++) {
        lua_rawgeti(L, -1, (lua_Integer)i + 1);
        lua_getfield(L, -1, "k");
        ks[i] = (int64_t)lua_tointeger(L, -1);
        lua_pop(L, 2);
        if (i > 0 && ks[i] <= ks[i - 1]) {
            lua_settop(L, top);
            return rf_error_set(err, RF_EINVAL, "study points out of order");
        }
    }
    lua_settop(L, top);
    return 0;
}

void rf_lua_study_dist_release(struct rf_lua *R, struct rf_study_dist *dist)
{
    if (dist->ref != LUA_NOREF)
        luaL_unref(R->L, LUA_REGISTRYINDEX, dist->ref);
    dist->ref = LUA_NOREF;
}
