/* The `refit.json` Lua module: decode(text [, name]) turns JSON into Lua tables with
 * jansson, so Hugging Face config.json files are parsed by a maintained library. */
#include <jansson.h>
#include <lauxlib.h>
#include <lua.h>

#include "scenario.h"

static void push_value(lua_State *L, json_t *v)
{
    size_t i;
    const char *key;
    json_t *item;

    luaL_checkstack(L, 3, "JSON nesting too deep");
    switch (json_typeof(v)) {
    case JSON_OBJECT:
        lua_createtable(L, 0, (int)json_object_size(v));
        json_object_foreach(v, key, item)
        {
            push_value(L, item);
            lua_setfield(L, -2, key);
        }
        break;
    case JSON_ARRAY:
        lua_createtable(L, (int)json_array_size(v), 0);
        json_array_foreach(v, i, item)
        {
            push_value(L, item);
            lua_rawseti(L, -2, (lua_Integer)i + 1);
        }
        break;
    case JSON_STRING: lua_pushlstring(L, json_string_value(v), json_string_length(v)); break;
    case JSON_INTEGER: lua_pushinteger(L, (lua_Integer)json_integer_value(v)); break;
    case JSON_REAL: lua_pushnumber(L, json_real_value(v)); break;
    case JSON_TRUE: lua_pushboolean(L, 1); break;
    case JSON_FALSE: lua_pushboolean(L, 0); break;
    case JSON_NULL:
        /* JSON null is the module's `null` sentinel, so a present-but-null key is not
         * confused with a missing one. */
        lua_getfield(L, lua_upvalueindex(1), "null");
        break;
    }
}

static int l_decode(lua_State *L)
{
    size_t len;
    const char *text = luaL_checklstring(L, 1, &len);
    const char *name = luaL_optstring(L, 2, "JSON");
    json_error_t jerr;
    /* The document is owned by a userdata so a Lua error while building tables (out of
     * memory) cannot leak it. */
    json_t **doc = lua_newuserdatauv(L, sizeof(*doc), 0);
    *doc = NULL;
    luaL_setmetatable(L, "refit.json.doc");
    *doc = json_loadb(text, len, JSON_DECODE_ANY, &jerr);
    if (!*doc) {
        /* Not luaL_error: the message names the JSON file, not the Lua caller. */
        lua_pushfstring(L, "%s:%d: column %d: %s", name, jerr.line, jerr.column, jerr.text);
        return lua_error(L);
    }
    push_value(L, *doc);
    return 1;
}

static int l_doc_gc(lua_State *L)
{
    json_t **doc = luaL_checkudata(L, 1, "refit.json.doc");
    json_decref(*doc);
    *doc = NULL;
    return 0;
}

int rf_luaopen_json(lua_State *L)
{
    luaL_newmetatable(L, "refit.json.doc");
    lua_pushcfunction(L, l_doc_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_newtable(L);
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    lua_pushvalue(L, -1);
    lua_pushcclosure(L, l_decode, 1);
    lua_setfield(L, -2, "decode");
    return 1;
}
