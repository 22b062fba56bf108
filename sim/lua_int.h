/* The Lua bridge's state, shared by the files that call into models/lib (sim/scenario.c,
 * sim/search_lua.c); nothing else sees it. */
#ifndef RF_LUA_INT_H
#define RF_LUA_INT_H

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

#endif
