/* A study's refit.table as the C side stores it: models/lib/study.lua hands over what it
 * printed, and this closure turns it into JSON arrays for the study's table callback. */
#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "lua_int.h"
#include "scenario.h"
#include "store.h"

/* list[1..#list] (a Lua list of strings at index idx) appended to arr as JSON strings: false
 * when one is not a string or not UTF-8 (study.lua checks both before the call). */
static bool append_strings(lua_State *L, int idx, json_t *arr)
{
    bool ok = true;
    lua_Integer n = (lua_Integer)lua_rawlen(L, idx);
    for (lua_Integer i = 1; i <= n && ok; i++) {
        lua_rawgeti(L, idx, i);
        size_t len = 0;
        const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &len) : NULL;
        ok = s && json_array_append_new(arr, json_stringn(s, len)) == 0;
        lua_pop(L, 1);
    }
    return ok;
}

/* table_api(title, headers, rows, text): upvalue 1 the struct rf_study_table_up. Every C
 * resource is released before a Lua error is raised. */
static int l_study_table(lua_State *L)
{
    const struct rf_study_table_up *up = lua_touserdata(L, lua_upvalueindex(1));
    const char *title = luaL_optstring(L, 1, NULL);
    luaL_checktype(L, 2, LUA_TTABLE);
    luaL_checktype(L, 3, LUA_TTABLE);
    const char *text = luaL_checkstring(L, 4);
    struct rf_error err = {0};
    char msg[sizeof(err.msg)];
    char *columns_json = NULL, *rows_json = NULL;
    json_t *columns = json_array(), *rows = json_array();
    bool ok = columns && rows && append_strings(L, 2, columns);
    lua_Integer n = (lua_Integer)lua_rawlen(L, 3);
    for (lua_Integer r = 1; r <= n && ok; r++) {
        json_t *row = json_array();
        lua_rawgeti(L, 3, r);
        ok = row && lua_istable(L, -1) && append_strings(L, lua_gettop(L), row);
        lua_pop(L, 1);
        ok = json_array_append_new(rows, row) == 0 && ok;
    }
    if (ok) {
        columns_json = json_dumps(columns, JSON_COMPACT);
        rows_json = json_dumps(rows, JSON_COMPACT);
    }
    json_decref(columns);
    json_decref(rows);
    int rc;
    if (!columns_json || !rows_json) {
        rc = rf_error_set(&err, RF_EINVAL,
                          "refit.table: cannot store the table (a cell that is not a UTF-8 "
                          "string, or out of memory)");
    } else {
        struct rf_study_table t = {title, columns_json, rows_json, text};
        rc = up->fn(up->ctx, &t, &err);
    }
    free(columns_json);
    free(rows_json);
    if (rc < 0) {
        snprintf(msg, sizeof(msg), "%s", err.msg);
        /* Level 2: the study's line that called refit.table (level 1 is study.lua). */
        luaL_where(L, 2);
        lua_pushstring(L, msg);
        lua_concat(L, 2);
        return lua_error(L);
    }
    return 0;
}

void rf_lua_push_study_table(struct lua_State *L, const struct rf_study_table_up *up)
{
    if (!up || !up->fn) {
        lua_pushnil(L);
        return;
    }
    /* A copy the closure owns: a dry pass's points run after the call that made it. */
    struct rf_study_table_up *u = lua_newuserdatauv(L, sizeof(*u), 0);
    *u = *up;
    lua_pushcclosure(L, l_study_table, 1);
}
