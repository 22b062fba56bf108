/* The Lua bridge's state, shared by the files that call into models/lib (sim/scenario.c,
 * sim/study_lua.c, sim/search_lua.c); nothing else sees it. */
#ifndef RF_LUA_INT_H
#define RF_LUA_INT_H

#include <lua.h>
#include <stdint.h>

#include "sandbox.h"
#include "search_lua.h"

struct rf_lua {
    struct rf_sandbox sb; /* the state, its limits and counters */
    struct lua_State *L;
    int module;  /* registry reference of require("refit") */
    int handler; /* registry reference of sandbox.message, the message handler */
    char lib[1024];
    struct rf_study_search study_search; /* a study's refit.search; search NULL: none */
};

/* Fields of the table on top of the stack: what the bridges hand a study back. */
static inline void rf_lua_set_num(lua_State *L, const char *k, double v)
{
    lua_pushnumber(L, v);
    lua_setfield(L, -2, k);
}

static inline void rf_lua_set_int(lua_State *L, const char *k, int64_t v)
{
    lua_pushinteger(L, (lua_Integer)v);
    lua_setfield(L, -2, k);
}

static inline void rf_lua_set_str(lua_State *L, const char *k, const char *v)
{
    lua_pushstring(L, v);
    lua_setfield(L, -2, k);
}

#endif
