/* The Lua side of layout search (sim/search_lua.h): refit.search_layouts' candidates read
 * into rows, and the closures a study's refit.search and refit.estimate call. */
#include "search_lua.h"

#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "lua_int.h"
#include "search.h"

void rf_lua_unref(struct rf_lua *R, int ref)
{
    if (ref != LUA_NOREF && ref != LUA_REFNIL)
        luaL_unref(R->L, LUA_REGISTRYINDEX, ref);
}

/* The request as refit.search_layouts reads it: absent lists mean the scenario's. */
static void push_request(lua_State *L, const struct rf_search_request *req)
{
    lua_createtable(L, 0, 3);
    if (req->n_gpus > 0) {
        lua_createtable(L, req->n_gpus, 0);
        for (int i = 0; i < req->n_gpus; i++) {
            lua_pushinteger(L, (lua_Integer)req->gpus[i]);
            lua_rawseti(L, -2, i + 1);
        }
        lua_setfield(L, -2, "gpus");
    }
    if (req->n_dtypes > 0) {
        lua_createtable(L, req->n_dtypes, 0);
        for (int i = 0; i < req->n_dtypes; i++) {
            lua_pushstring(L, rf_dtype_name(req->dtypes[i]));
            lua_rawseti(L, -2, i + 1);
        }
        lua_setfield(L, -2, "dtypes");
    }
    if (req->n_pp > 0) {
        lua_createtable(L, req->n_pp, 0);
        for (int i = 0; i < req->n_pp; i++) {
            lua_pushinteger(L, (lua_Integer)req->pp[i]);
            lua_rawseti(L, -2, i + 1);
        }
        lua_setfield(L, -2, "pp");
    }
    lua_pushboolean(L, req->spanning);
    lua_setfield(L, -2, "spanning");
}

struct reader {
    struct rf_search_row *rows;
    size_t n; /* rows holding a reference */
    int rc;
    struct rf_error *err;
};

static bool int_field(lua_State *L, int t, const char *key, int64_t *out)
{
    int isnum;
    lua_getfield(L, t, key);
    *out = (int64_t)lua_tointegerx(L, -1, &isnum);
    lua_pop(L, 1);
    return isnum && *out >= 1 && *out <= RF_GPUS_MAX;
}

/* Reads the list at index 2 into rows, each entry kept in the registry (it is the spec
 * load_scenario_table normalises). Runs under lua_pcall: an API call on a value of the
 * wrong type raises. */
static int l_read_layouts(lua_State *L)
{
    struct reader *r = lua_touserdata(L, 1);
    size_t n = (size_t)lua_rawlen(L, 2);
    if (!(r->rows = calloc(n ? n : 1, sizeof(*r->rows)))) {
        r->rc = rf_error_set(r->err, RF_ENOMEM, "out of memory");
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        struct rf_search_row *row = &r->rows[i];
        lua_rawgeti(L, 2, (lua_Integer)i + 1);
        int e = lua_gettop(L);
        lua_getfield(L, e, "dtype");
        const char *dtype = lua_tostring(L, -1);
        bool ok = dtype && rf_dtype_parse(dtype, &row->dtype) == 0;
        lua_getfield(L, e, "spans");
        row->spans = lua_toboolean(L, -1);
        lua_pop(L, 2);
        ok = ok && int_field(L, e, "gpus", &row->gpus) && int_field(L, e, "tp", &row->tp) &&
             int_field(L, e, "dp", &row->dp) && int_field(L, e, "pp", &row->pp) &&
             int_field(L, e, "ep", &row->ep) && int_field(L, e, "replicas", &row->replicas) &&
             int_field(L, e, "nodes", &row->nodes);
        if (!ok) {
            r->rc = rf_error_set(r->err, RF_EINVAL,
                                 "refit.search_layouts: layout %zu is malformed (a broken "
                                 "contract of models/lib/search.lua)",
                                 i + 1);
            return 0;
        }
        row->index = i;
        row->ref = luaL_ref(L, LUA_REGISTRYINDEX);
        r->n = i + 1;
    }
    return 0;
}

int rf_lua_search_layouts(struct rf_lua *R, const struct rf_scenario_src *src,
                          const struct rf_search_request *req, struct rf_search_row **rows,
                          size_t *n_rows, struct rf_error *err)
{
    lua_State *L = R->L;
    int top = lua_gettop(L), rc;
    struct reader r = {.err = err};
    const char *what = src->path ? src->path : "scenario";
    *rows = NULL;
    *n_rows = 0;
    lua_rawgeti(L, LUA_REGISTRYINDEX, R->module);
    lua_getfield(L, -1, "search_layouts");
    lua_remove(L, -2);
    if (src->path)
        lua_pushstring(L, src->path);
    else
        lua_rawgeti(L, LUA_REGISTRYINDEX, src->ref);
    push_request(L, req);
    if ((rc = rf_sandbox_pcall(&R->sb, 2, 1, R->handler, what, err)) < 0)
        goto out;
    lua_pushcfunction(L, l_read_layouts);
    lua_pushlightuserdata(L, &r);
    lua_pushvalue(L, -3);
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
        rc = rf_error_set(err, RF_EINVAL, "%s: malformed result from models/lib: %s", what,
                          lua_tostring(L, -1));
    } else {
        rc = r.rc;
    }
    if (rc < 0) {
        for (size_t i = 0; i < r.n; i++)
            rf_lua_unref(R, r.rows[i].ref);
        free(r.rows);
        goto out;
    }
    *rows = r.rows;
    *n_rows = r.n;
out:
    lua_settop(L, top);
    return rc;
}

void rf_lua_set_study_search(struct rf_lua *R, const struct rf_study_search *s)
{
    R->study_search = *s;
}

/* ---- A study's refit.search and refit.estimate (models/lib/study.lua checks their
 * arguments; errors are raised only after every C resource is released) ---- */

static void set_bool(lua_State *L, const char *k, bool v)
{
    lua_pushboolean(L, v);
    lua_setfield(L, -2, k);
}

/* The spec at index 1 ({ path = } or a table spec) as a source; *ref to unref after. */
static void spec_src(lua_State *L, struct rf_scenario_src *src)
{
    src->ref = LUA_NOREF;
    lua_getfield(L, 1, "path");
    src->path = lua_tostring(L, -1); /* stays valid: the spec table holds it */
    lua_pop(L, 1);
    if (!src->path) {
        lua_pushvalue(L, 1);
        src->ref = luaL_ref(L, LUA_REGISTRYINDEX);
    }
}

/* The options at index 2, as study.lua validated them (search.OPTIONS). */
static void read_options(lua_State *L, struct rf_search_request *req)
{
    memset(req, 0, sizeof(*req));
    lua_getfield(L, 2, "gpus");
    if (lua_istable(L, -1))
        for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
            lua_rawgeti(L, -1, i);
            if (req->n_gpus < RF_SEARCH_MAX_GPU_COUNTS)
                req->gpus[req->n_gpus++] = (int64_t)lua_tointeger(L, -1);
            lua_pop(L, 1);
        }
    lua_getfield(L, 2, "pp");
    if (lua_istable(L, -1))
        for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
            lua_rawgeti(L, -1, i);
            if (req->n_pp < RF_SEARCH_MAX_GPU_COUNTS)
                req->pp[req->n_pp++] = (int64_t)lua_tointeger(L, -1);
            lua_pop(L, 1);
        }
    lua_pop(L, 1);
    lua_getfield(L, 2, "dtypes");
    if (lua_istable(L, -1))
        for (lua_Integer i = 1; i <= (lua_Integer)lua_rawlen(L, -1); i++) {
            lua_rawgeti(L, -1, i);
            const char *s = lua_tostring(L, -1);
            if (s && req->n_dtypes < 2 && rf_dtype_parse(s, &req->dtypes[req->n_dtypes]) == 0)
                req->n_dtypes++;
            lua_pop(L, 1);
        }
    lua_getfield(L, 2, "top");
    req->top = lua_isinteger(L, -1) ? (int64_t)lua_tointeger(L, -1) : RF_SEARCH_TOP_DEFAULT;
    lua_getfield(L, 2, "spanning");
    req->spanning = lua_toboolean(L, -1);
    lua_pop(L, 4);
    /* Strings of the options table, which stays on the stack for the call. */
    lua_getfield(L, 2, "strategy");
    req->strategy = lua_tostring(L, -1);
    lua_getfield(L, 2, "label");
    req->label = lua_tostring(L, -1);
    lua_pop(L, 2);
}

/* The fields a study sees of one row (and `refit search --json` prints, sim/cmd_search.c). */
static void push_row(lua_State *L, const struct rf_search_row *row, size_t rank)
{
    char layout[64];
    rf_search_layout_text(row, layout, sizeof(layout));
    lua_createtable(L, 0, 24);
    rf_lua_set_int(L, "rank", (int64_t)rank);
    rf_lua_set_str(L, "layout", layout);
    rf_lua_set_int(L, "gpus", row->gpus);
    rf_lua_set_int(L, "tp", row->tp);
    rf_lua_set_int(L, "dp", row->dp);
    rf_lua_set_int(L, "pp", row->pp);
    rf_lua_set_int(L, "ep", row->ep);
    rf_lua_set_int(L, "engines", row->replicas);
    rf_lua_set_int(L, "engine_gpus", row->tp * row->dp * row->pp);
    rf_lua_set_str(L, "dtype", rf_dtype_name(row->dtype));
    set_bool(L, "spans", row->spans);
    rf_lua_set_int(L, "nodes", row->nodes);
    rf_lua_set_int(L, "weights_bytes", row->mem.worst.weights);
    rf_lua_set_int(L, "infer_bytes", row->mem.worst.total);
    rf_lua_set_int(L, "kv_headroom_bytes", row->mem.headroom_bytes);
    rf_lua_set_num(L, "bound_s", row->bound_s);
    rf_lua_set_num(L, "estimate_s", row->estimate_s);
    rf_lua_set_str(L, "estimated_as", row->how);
    if (!isnan(row->estimate_step_s))
        rf_lua_set_num(L, "estimate_step_s", row->estimate_step_s);
    set_bool(L, "simulated", row->simulated);
    if (row->simulated) {
        rf_lua_set_int(L, "run_id", row->run.run_id);
        rf_lua_set_num(L, "predicted_s", row->run.predicted_s);
        rf_lua_set_num(L, "lower_bound_s", row->run.lower_bound_s);
        rf_lua_set_str(L, "bottleneck", row->run.bottleneck);
        if (!isnan(row->estimate_step_s)) {
            rf_lua_set_num(L, "step_s", row->run.predicted_s);
            rf_lua_set_num(L, "wire_s", row->run.wire_s);
        }
        rf_lua_set_str(L, "strategy", row->run.strategy);
        if (row->run.auto_choice[0])
            rf_lua_set_str(L, "auto_choice", row->run.auto_choice);
    }
}

/* The result table refit.search returns, from the result at index 1 (a light userdata). */
static int l_push_result(lua_State *L)
{
    const struct rf_search_result *res = lua_touserdata(L, 1);
    lua_createtable(L, 0, 12);
    rf_lua_set_str(L, "model", res->model);
    rf_lua_set_str(L, "cluster", res->cluster);
    rf_lua_set_str(L, "strategy", res->strategy);
    rf_lua_set_str(L, "label", res->label);
    rf_lua_set_int(L, "enumerated", (int64_t)res->enumerated);
    rf_lua_set_int(L, "fit", (int64_t)res->n_rows);
    rf_lua_set_int(L, "simulated", (int64_t)res->simulated);
    lua_createtable(L, (int)res->n_rows, 0);
    for (size_t i = 0; i < res->n_rows; i++) {
        push_row(L, &res->rows[i], i + 1);
        lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "layouts");
    return 1;
}

static int l_study_search(lua_State *L)
{
    struct rf_lua *R = lua_touserdata(L, lua_upvalueindex(1));
    struct rf_search_request req;
    struct rf_search_result res;
    struct rf_scenario_src src;
    struct rf_error err = {0};
    char msg[sizeof(err.msg)];
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checktype(L, 2, LUA_TTABLE);
    if (!R->study_search.search)
        return luaL_error(L, "refit.search: not available in this command");
    read_options(L, &req);
    spec_src(L, &src);
    int rc = R->study_search.search(R->study_search.ctx, &src, &req, &res, &err);
    rf_lua_unref(R, src.ref);
    /* The search's loads had their budgets; the study's next step gets a fresh one. */
    rf_sandbox_reset(&R->sb);
    if (rc == 0) {
        /* Built under protection: running out of Lua memory here must not leak the rows. */
        lua_pushcfunction(L, l_push_result);
        lua_pushlightuserdata(L, &res);
        if (lua_pcall(L, 1, 1, 0) != LUA_OK) {
            rc = rf_error_set(&err, RF_ENOMEM, "refit.search: %s", lua_tostring(L, -1));
            lua_pop(L, 1);
        }
        rf_search_result_release(R, &res);
    }
    if (rc < 0) {
        /* lua_error, not luaL_error: the message already says where. */
        snprintf(msg, sizeof(msg), "%s", err.msg);
        lua_pushstring(L, msg);
        return lua_error(L);
    }
    return 1;
}

static int l_study_estimate(lua_State *L)
{
    struct rf_lua *R = lua_touserdata(L, lua_upvalueindex(1));
    struct rf_scenario_src src;
    struct rf_scenario sc;
    struct rf_estimate e = {0};
    struct rf_error err = {0};
    char msg[sizeof(err.msg)];
    luaL_checktype(L, 1, LUA_TTABLE);
    const char *strategy = luaL_optstring(L, 2, NULL);
    spec_src(L, &src);
    int rc = rf_lua_load_scenario(R, &src, strategy, &sc, &err);
    if (rc == 0) {
        /* Memory is the answer's, not a refusal: a study asks before it plans. */
        sc.allow_overcommit = true;
        rc = rf_scenario_init_sides(&sc, &err);
    }
    bool fits = rc == 0 && sc.mem_infer.fits && sc.mem_train.fits;
    if (rc == 0 && fits)
        rc = rf_estimate(&sc, &R->study_search.sim, &e, &err);
    struct rf_side_memory mi = sc.mem_infer, mt = sc.mem_train;
    rf_scenario_release(&sc);
    rf_lua_unref(R, src.ref);
    rf_sandbox_reset(&R->sb);
    if (rc < 0) {
        snprintf(msg, sizeof(msg), "%s", err.msg);
        lua_pushstring(L, msg);
        return lua_error(L);
    }
    lua_createtable(L, 0, 10);
    set_bool(L, "fits", fits);
    set_bool(L, "train_fits", mt.fits);
    rf_lua_set_int(L, "weights_bytes", mi.worst.weights);
    rf_lua_set_int(L, "infer_bytes", mi.worst.total);
    rf_lua_set_int(L, "kv_headroom_bytes", mi.headroom_bytes);
    rf_lua_set_int(L, "train_bytes", mt.worst.total);
    if (fits) {
        rf_lua_set_num(L, "bound_s", e.bound_s);
        rf_lua_set_num(L, "estimate_s", e.estimate_s);
        rf_lua_set_str(L, "estimated_as", e.how);
        if (!isnan(e.step_s))
            rf_lua_set_num(L, "estimate_step_s", e.step_s);
    }
    return 1;
}

void rf_lua_push_study_search(struct rf_lua *R)
{
    lua_State *L = R->L;
    lua_createtable(L, 0, 2);
    lua_pushlightuserdata(L, R);
    lua_pushcclosure(L, l_study_search, 1);
    lua_setfield(L, -2, "search");
    lua_pushlightuserdata(L, R);
    lua_pushcclosure(L, l_study_estimate, 1);
    lua_setfield(L, -2, "estimate");
}
