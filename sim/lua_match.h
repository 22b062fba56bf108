/* Lua's string.find, match, gmatch and gsub with a budget: the same results and errors as
 * Lua 5.4's, with every matching step charged to the sandbox, so no pattern hangs refit. */
#ifndef RF_LUA_MATCH_H
#define RF_LUA_MATCH_H

struct lua_State;

/* Replaces find, match, gmatch and gsub in the state's string table (which is also the
 * strings' metatable __index, so s:find is the same function). Steps are charged through
 * rf_sandbox_charge (sim/sandbox.h), which does nothing in a state the sandbox did not
 * open. */
void rf_lua_match_install(struct lua_State *L);

#endif
