/* sim/lua_match.c against Lua's own string library: the same results, captures and error
 * messages for find, match, gmatch and gsub on random patterns and subjects (the seed is
 * printed; REFIT_SEED=<n> replays one), and a budget that stops what Lua's would not. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua_match.h"
#include "random.h"
#include "sandbox.h"

/* Runs one call through Lua's function and ours and returns both outcomes as text: the
 * results (or all of gmatch's iterations), or the error message. */
static const char compare_lua[] =
    "local native, name, s, p, a3, a4 = ...\n"
    "local function show(ok, ...)\n"
    "  local out = { ok and 'ok' or 'error' }\n"
    "  for i = 1, select('#', ...) do\n"
    "    local v = select(i, ...)\n"
    "    out[#out + 1] = type(v) .. ':' .. tostring(v)\n"
    "  end\n"
    "  return table.concat(out, ' ')\n"
    "end\n"
    "local function iterate(fn, ...)\n"
    "  local out = {}\n"
    "  for a, b, c in fn(...) do\n"
    "    out[#out + 1] = tostring(a) .. ',' .. tostring(b) .. ',' .. tostring(c)\n"
    "    if #out > 100 then break end\n"
    "  end\n"
    "  return table.concat(out, ';')\n"
    "end\n"
    "local function run(fn)\n"
    "  if name == 'gmatch' then return show(pcall(iterate, fn, s, p, a3)) end\n"
    "  return show(pcall(fn, s, p, a3, a4))\n"
    "end\n"
    "return run(native[name]), run(string[name])\n";

static const char *const atoms[] = {
    "a",     "b",  "1",  " ",  ".",    "%a",   "%d",    "%A",   "%s",  "%w",    "%p",
    "%%",    "%.", "%z", "%]", "[ab]", "[^a]", "[a-b]", "[%d]", "[]]", "[^]a]", "[a-]",
    "[%a_]", "*",  "+",  "-",  "?",    "*",    "+",     "-",    "?",   "(",     ")",
    "(",     ")",  "()", "%1", "%2",   "%0",   "%bab",  "%b()", "%b",  "%f[a]", "%f[%A]",
    "%f",    "^",  "$",  "%",  "[",    "[^",   "x",     "^a",   "a$"};

static void random_pattern(char *out, size_t cap)
{
    size_t n = 1 + rnd() % 6, len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < n; i++) {
        const char *a = atoms[rnd() % (sizeof(atoms) / sizeof(atoms[0]))];
        size_t l = strlen(a);
        if (len + l + 1 > cap)
            break;
        memcpy(out + len, a, l + 1);
        len += l;
    }
}

static void random_subject(char *out, size_t cap)
{
    static const char alphabet[] = "aab1 b^$()%]ax";
    size_t n = rnd() % 13;
    if (n >= cap)
        n = cap - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = alphabet[rnd() % (sizeof(alphabet) - 1)];
    out[n] = '\0';
}

/* A state with our functions in `string` and Lua's in the global `native`; the compare
 * chunk in the registry. */
static lua_State *two_libraries(int *chunk)
{
    lua_State *L = luaL_newstate();
    assert_non_null(L);
    luaL_openlibs(L);
    lua_newtable(L);
    lua_getglobal(L, "string");
    static const char *const names[] = {"find", "match", "gmatch", "gsub"};
    for (int i = 0; i < 4; i++) {
        lua_getfield(L, -1, names[i]);
        lua_setfield(L, -3, names[i]);
    }
    lua_pop(L, 1);
    lua_setglobal(L, "native");
    rf_lua_match_install(L);
    assert_int_equal(luaL_loadbuffer(L, compare_lua, sizeof(compare_lua) - 1, "compare"), 0);
    *chunk = luaL_ref(L, LUA_REGISTRYINDEX);
    return L;
}

/* Pushes gsub's replacement of kind k: a template, a table or a function. */
static void push_replacement(lua_State *L, uint64_t k)
{
    static const char *const templates[] = {"<%0>", "[%1]", "%2%1", "%%", "x%", "%y", ""};
    switch (k % 4) {
    case 0:
    case 1: lua_pushstring(L, templates[rnd() % 7]); break;
    case 2:
        assert_int_equal(luaL_dostring(L, "return { a = 'A', b = false, ['1'] = 7 }"), 0);
        break;
    default:
        assert_int_equal(luaL_dostring(L, "return function(a, ...) if a == 'b' then return {} "
                                          "end if a == 'a' then return nil end return "
                                          "tostring(a) .. select('#', ...) end"),
                         0);
        break;
    }
}

static void compare_one(lua_State *L, int chunk, const char *name, const char *s, const char *p,
                        uint64_t extra)
{
    int top = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, chunk);
    lua_getglobal(L, "native");
    lua_pushstring(L, name);
    lua_pushstring(L, s);
    lua_pushstring(L, p);
    int len = (int)strlen(s);
    if (strcmp(name, "gsub") == 0) {
        push_replacement(L, extra);
        if (extra & 4)
            lua_pushinteger(L, (lua_Integer)(rnd() % 4));
        else
            lua_pushnil(L);
    } else {
        if (extra & 1)
            lua_pushinteger(L, (lua_Integer)(rnd() % (uint64_t)(2 * len + 5)) - len - 2);
        else
            lua_pushnil(L);
        if (extra & 2)
            lua_pushboolean(L, 1);
        else
            lua_pushnil(L);
    }
    assert_int_equal(lua_pcall(L, 6, 2, 0), 0);
    const char *theirs = lua_tostring(L, -2), *ours = lua_tostring(L, -1);
    if (strcmp(theirs, ours) != 0)
        fail_msg("%s(\"%s\", \"%s\"): Lua gives %s, ours %s", name, s, p, theirs, ours);
    lua_settop(L, top);
}

static void random_calls_equal_luas(void **state)
{
    (void)state;
    seed_rng();
    int chunk;
    lua_State *L = two_libraries(&chunk);
    static const char *const fns[] = {"find", "match", "gmatch", "gsub"};
    char p[64], s[16];
    for (int i = 0; i < 40000; i++) {
        random_pattern(p, sizeof(p));
        random_subject(s, sizeof(s));
        compare_one(L, chunk, fns[i % 4], s, p, rnd());
    }
    lua_close(L);
}

/* The edges a random draw rarely reaches: recursion past 200 items, 32 captures, NULs,
 * anchors after a capture, frontier at both ends, empty matches in gmatch and gsub. */
static void edge_cases_equal_luas(void **state)
{
    (void)state;
    int chunk;
    lua_State *L = two_libraries(&chunk);
    char deep[1024] = "", caps[256] = "", many[256] = "";
    for (int i = 0; i < 201; i++)
        strcat(deep, "a?");
    for (int i = 0; i < 33; i++)
        strcat(caps, "()");
    for (int i = 0; i < 32; i++)
        strcat(many, "(a*)");
    static const char *const fns[] = {"find", "match", "gmatch", "gsub"};
    const char *cases[][2] = {
        {"aaaa", deep},
        {"aaaa", caps},
        {"aaa", many},
        {"hello world", "%f[%w]%w+"},
        {"THE (quick) fox", "%f[%a]%a+%f[%A]"},
        {"key = value", "^(%w+)%s*=%s*(%w+)$"},
        {"  trim  ", "^%s*(.-)%s*$"},
        {"abc", ""},
        {"abc", "^"},
        {"abc", "$"},
        {"a.b.c", "."},
        {"a.b.c", "%."},
        {"x(a(b)c)y", "%b()"},
        {"aaa", "a-"},
        {"aaa", "a-$"},
        {"abab", "(ab)%1"},
        {"^a", "^a"},
        {"a$b", "a$b"},
        {"", "a*"},
        {"ab", "()a*()"},
        {"[x]", "[]x[]+"},
        {"%", "%%"},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++)
        for (int f = 0; f < 4; f++)
            for (uint64_t extra = 0; extra < 8; extra++)
                compare_one(L, chunk, fns[f], cases[c][0], cases[c][1], extra);
    lua_close(L);
}

/* Lua's matcher takes minutes over this pattern; ours stops at the sandbox's budget, the
 * message naming the function and the chunk's line, in well under a second. */
static void a_backtracking_pattern_is_stopped_by_the_budget(void **state)
{
    (void)state;
    struct rf_sandbox sb;
    struct rf_error err = {0};
    assert_int_equal(rf_sandbox_open(&sb, "/nonexistent/lib", &err), 0);
    sb.limits.instructions = 10 * 1000 * 1000;
    const char *code = "local s = string.rep('a', 30000)\n"
                       "return s:find(string.rep('a*', 30) .. 'b')\n";
    assert_int_equal(luaL_loadbuffer(sb.L, code, strlen(code), "@hostile.lua"), 0);
    assert_int_not_equal(rf_sandbox_pcall(&sb, 0, 1, LUA_NOREF, "hostile.lua", &err), 0);
    assert_non_null(strstr(err.msg, "hostile.lua:2: string.find: more than 10 million Lua "
                                    "instructions and pattern-matching steps"));
    /* The next entry has a fresh budget, and a plain find over the same subject is cheap. */
    code = "return (string.rep('a', 30000) .. 'b'):find(string.rep('a', 100) .. 'b', 1, true)";
    assert_int_equal(luaL_loadbuffer(sb.L, code, strlen(code), "@plain.lua"), 0);
    assert_int_equal(rf_sandbox_pcall(&sb, 0, 1, LUA_NOREF, "plain.lua", &err), 0);
    assert_int_equal(lua_tointeger(sb.L, -1), 29901);
    rf_sandbox_close(&sb);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(random_calls_equal_luas),
        cmocka_unit_test(edge_cases_equal_luas),
        cmocka_unit_test(a_backtracking_pattern_is_stopped_by_the_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
