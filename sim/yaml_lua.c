/* The `refit.yaml` Lua module: libyaml's event parser turned into Lua tables, with the line
 * of every key beside, so models/lib/rlconfig.lua can name the YAML file, line and key. */
#include "yaml_lua.h"

#include <errno.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* Deeper than any framework config nests (NeMo RL's reach seven levels), and shallow
 * enough that the C recursion and the Lua stack stay small whatever the input. */
#define MAX_DEPTH 64
/* The longest dotted key path kept for the lines table. */
#define MAX_PATH 1024
/* Nodes (scalars, lists and mappings) one document may build, aliases expanded. An alias is
 * a copy, as OmegaConf makes it (OmegaConf.create builds its own node for every value, so a
 * child config's override of an aliased section leaves the anchor's other users alone); a
 * copy costs memory, so "billion laughs" documents stop here. NeMo RL's largest recipes
 * hold about 600 keys and verl's resolved ppo_trainer.yaml about 900: a 300x margin. */
#define MAX_NODES (1 << 18)

/* Stack slots of l_decode. */
enum { TEXT = 1, NAME, DECODER, ANCHORS, LINES };

/* The parser and its current event live in a userdata, so a Lua error raised while the
 * tables are built (a YAML fault, or memory running out) frees them in __gc. */
struct decoder {
    yaml_parser_t parser;
    yaml_event_t event;
    bool parser_live, event_live;
    const char *name;
    const unsigned char *text;
    size_t len;
    char path[MAX_PATH];
    size_t path_len;
    long nodes;
};

static void release(struct decoder *d)
{
    if (d->event_live)
        yaml_event_delete(&d->event);
    if (d->parser_live)
        yaml_parser_delete(&d->parser);
    d->event_live = d->parser_live = false;
}

static int l_decoder_gc(lua_State *L)
{
    release(luaL_checkudata(L, 1, "refit.yaml.decoder"));
    return 0;
}

/* Raises "<name>:<line>: <message>": not luaL_error, the message names the YAML file, not
 * the Lua caller. */
static int raise(lua_State *L, struct decoder *d, size_t line, const char *message, const char *arg)
{
    lua_pushfstring(L, "%s:%d: ", d->name, (int)line);
    lua_pushfstring(L, message, arg);
    lua_concat(L, 2);
    return lua_error(L);
}

/* Raises a fault of libyaml's reader (bytes that are not UTF-8, a control character): it
 * carries a byte offset, not a mark, so the line and column are counted here, and the byte
 * or character is named, not echoed. A sequence cut short is reported at its first byte,
 * where the user's editor shows the odd character. */
static void reader_error(lua_State *L, struct decoder *d, const char *problem)
{
    size_t end = d->parser.problem_offset < d->len ? d->parser.problem_offset : d->len;
    bool octet = strstr(problem, "octet") != NULL;
    if (octet && (strstr(problem, "trailing") || strstr(problem, "incomplete")))
        for (size_t k = 1; k <= 3 && k <= end; k++)
            if (d->text[end - k] >= 0xC0) {
                end -= k;
                break;
            }
    int line = 1, column = 1;
    for (size_t i = 0; i < end; i++) {
        if (d->text[i] == '\n')
            line++, column = 1;
        else if ((d->text[i] & 0xC0) != 0x80)
            column++;
    }
    char byte[8];
    snprintf(byte, sizeof(byte), "0x%02X", end < d->len ? d->text[end] : 0);
    if (octet && end < d->len)
        lua_pushfstring(L, "%s:%d: column %d: not UTF-8 (byte %s: %s); YAML files are UTF-8",
                        d->name, line, column, byte, problem);
    else if (d->parser.problem_value >= 0)
        lua_pushfstring(L, "%s:%d: column %d: %s (code %d)", d->name, line, column, problem,
                        d->parser.problem_value);
    else
        lua_pushfstring(L, "%s:%d: column %d: %s", d->name, line, column, problem);
    lua_error(L);
}

static void next(lua_State *L, struct decoder *d)
{
    if (d->event_live)
        yaml_event_delete(&d->event);
    d->event_live = false;
    if (!yaml_parser_parse(&d->parser, &d->event)) {
        const char *problem = d->parser.problem ? d->parser.problem : "malformed YAML";
        if (d->parser.error == YAML_READER_ERROR)
            reader_error(L, d, problem);
        lua_pushfstring(L, "%s:%d: column %d: %s", d->name, (int)d->parser.problem_mark.line + 1,
                        (int)d->parser.problem_mark.column + 1, problem);
        if (d->parser.context)
            lua_pushfstring(L, " (%s)", d->parser.context);
        else
            lua_pushliteral(L, "");
        lua_concat(L, 2);
        lua_error(L);
    }
    d->event_live = true;
}

static size_t line_of(const struct decoder *d)
{
    return d->event.start_mark.line + 1;
}

/* Appends ".part" (or "part" at the top) to the path; returns the old length to restore. */
static size_t push_path(lua_State *L, struct decoder *d, const char *part, size_t len)
{
    size_t old = d->path_len, need = old + (old ? 1 : 0) + len;
    if (need >= sizeof(d->path))
        raise(L, d, line_of(d), "keys nest too deep (a path of more than %s bytes)", "1023");
    if (old)
        d->path[d->path_len++] = '.';
    memcpy(d->path + d->path_len, part, len);
    d->path_len = need;
    d->path[need] = '\0';
    return old;
}

static void set_line(lua_State *L, struct decoder *d, size_t line)
{
    lua_pushlstring(L, d->path, d->path_len);
    lua_pushinteger(L, (lua_Integer)line);
    lua_rawset(L, LINES);
}

static bool in(const char *s, const char *const *words)
{
    for (; *words; words++)
        if (strcmp(s, *words) == 0)
            return true;
    return false;
}

/* [-+]?digits, the integers of YAML's core schema (no 0x or 0o: no config refit reads
 * writes sizes that way). */
static bool is_int(const char *s)
{
    if (*s == '-' || *s == '+')
        s++;
    if (!*s)
        return false;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return false;
    return true;
}

/* [-+]?(digits[.digits?]|.digits)([eE][-+]?digits)?, checked before strtod, which would
 * also take "inf", "nan" and hexadecimal. */
static bool is_float(const char *s)
{
    int digits = 0;
    if (*s == '-' || *s == '+')
        s++;
    for (; *s >= '0' && *s <= '9'; s++)
        digits++;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++)
            digits++;
    if (!digits)
        return false;
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '-' || *s == '+')
            s++;
        if (*s < '0' || *s > '9')
            return false;
        while (*s >= '0' && *s <= '9')
            s++;
    }
    return *s == '\0';
}

/* A plain scalar typed as PyYAML (YAML 1.1) reads it, which is what NeMo RL's and verl's
 * loaders (OmegaConf, Hydra) start from: null, booleans including yes/no/on/off, integers,
 * floats (with 1e-6, which OmegaConf adds), else a string. Quoted or !!str-tagged scalars
 * are always strings. */
static void push_scalar(lua_State *L, const yaml_event_t *e)
{
    static const char *const nulls[] = {"", "~", "null", "Null", "NULL", NULL};
    static const char *const trues[] = {"true", "True", "TRUE", "yes", "Yes",
                                        "YES",  "on",   "On",   "ON",  NULL};
    static const char *const falses[] = {"false", "False", "FALSE", "no",  "No",
                                         "NO",    "off",   "Off",   "OFF", NULL};
    const char *s = (const char *)e->data.scalar.value;
    size_t len = e->data.scalar.length;
    const char *tag = (const char *)e->data.scalar.tag;
    bool plain = e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
                 !(tag && strcmp(tag, YAML_STR_TAG) == 0) && strlen(s) == len;
    if (plain && in(s, nulls)) {
        lua_pushlightuserdata(L, NULL);
    } else if (plain && in(s, trues)) {
        lua_pushboolean(L, 1);
    } else if (plain && in(s, falses)) {
        lua_pushboolean(L, 0);
    } else if (plain && is_int(s)) {
        errno = 0;
        long long v = strtoll(s, NULL, 10);
        /* An integer past 64 bits is kept as the number it approximates. */
        if (errno == ERANGE)
            lua_pushnumber(L, strtod(s, NULL));
        else
            lua_pushinteger(L, (lua_Integer)v);
    } else if (plain && is_float(s)) {
        lua_pushnumber(L, strtod(s, NULL));
    } else {
        lua_pushlstring(L, s, len);
    }
}

static void parse_node(lua_State *L, struct decoder *d, int depth);

/* Counts one node built, and stops a document whose aliases expand past MAX_NODES. */
static void count_node(lua_State *L, struct decoder *d)
{
    if (++d->nodes > MAX_NODES)
        raise(L, d, line_of(d),
              "the document expands to more than %s values (aliases are copies, as OmegaConf "
              "makes them); write the repeated sections once",
              "262144");
}

static void pop_path(struct decoder *d, size_t old)
{
    d->path_len = old;
    d->path[old] = '\0';
}

/* Replaces the table on top of the stack with a deep copy, the lines of its keys set to
 * `line` (the alias's) under the current path, so a fault in an aliased value is reported
 * where the alias stands. Nesting is bounded as the parser bounds it. */
static void copy_value(lua_State *L, struct decoder *d, int depth, size_t line)
{
    if (lua_type(L, -1) != LUA_TTABLE)
        return;
    if (depth > MAX_DEPTH)
        raise(L, d, line, "nests deeper than %s levels", "64");
    luaL_checkstack(L, 8, "YAML nesting too deep");
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, -3)) {
        char index[24];
        const char *part;
        size_t len;
        count_node(L, d);
        if (lua_type(L, -2) == LUA_TNUMBER) {
            len = (size_t)snprintf(index, sizeof(index), "%lld", (long long)lua_tointeger(L, -2));
            part = index;
        } else {
            part = lua_tolstring(L, -2, &len);
        }
        size_t old = push_path(L, d, part, len);
        set_line(L, d, line);
        copy_value(L, d, depth + 1, line);
        pop_path(d, old);
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, -4);
    }
    lua_remove(L, -2);
}

/* Remembers the value on top of the stack under the anchor at `anchor` (a stack slot, or
 * 0 for none). */
static void keep_anchor(lua_State *L, int anchor)
{
    if (!anchor)
        return;
    lua_pushvalue(L, anchor);
    lua_pushvalue(L, -2);
    lua_rawset(L, ANCHORS);
    lua_remove(L, anchor);
}

/* The anchor of the current event pushed as a string (its slot returned), or 0. It is
 * copied before the event is freed. */
static int anchor_of(lua_State *L, const yaml_char_t *anchor)
{
    if (!anchor)
        return 0;
    lua_pushstring(L, (const char *)anchor);
    return lua_gettop(L);
}

static void parse_sequence(lua_State *L, struct decoder *d, int depth)
{
    lua_Integer n = 0;
    char index[24];
    lua_newtable(L);
    for (;;) {
        next(L, d);
        if (d->event.type == YAML_SEQUENCE_END_EVENT)
            break;
        int len = snprintf(index, sizeof(index), "%lld", (long long)++n);
        size_t old = push_path(L, d, index, (size_t)len);
        set_line(L, d, line_of(d));
        parse_node(L, d, depth + 1);
        lua_rawseti(L, -2, n);
        pop_path(d, old);
    }
}

/* A decoded list: a table with elements (a mapping's keys are strings, so its length is 0;
 * an empty list merges nothing either way). */
static bool is_list(lua_State *L, int index)
{
    return lua_type(L, index) == LUA_TTABLE && lua_rawlen(L, index) > 0;
}

/* Merges each table of the list on top (YAML's `<<: *base` or `<<: [*a, *b]`) into the
 * mapping below it: keys written in the mapping win, then earlier merged mappings win over
 * later ones (the merge key's specification, https://yaml.org/type/merge.html). The merged
 * values are the aliases' copies, owned by this mapping alone. Their lines are those of
 * the copies, under this mapping's path. */
static void apply_merges(lua_State *L)
{
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        lua_pushnil(L);
        while (lua_next(L, -2)) {
            lua_pushvalue(L, -2);
            if (lua_rawget(L, -6) == LUA_TNIL) {
                lua_pop(L, 1);
                lua_pushvalue(L, -2);
                lua_insert(L, -2);
                lua_rawset(L, -6);
            } else {
                lua_pop(L, 2);
            }
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

/* The value of a `<<` key, on top of the stack, appended to the merges list below it: one
 * mapping, or each mapping of a list in order. */
static void add_merge(lua_State *L, struct decoder *d, size_t line)
{
    const char *where = d->path_len ? d->path : "(top)";
    if (lua_type(L, -1) != LUA_TTABLE)
        raise(L, d, line, "%s: '<<' must merge a mapping or a list of mappings", where);
    if (!is_list(L, -1)) {
        lua_rawseti(L, -2, (lua_Integer)lua_rawlen(L, -2) + 1);
        return;
    }
    lua_Integer n = (lua_Integer)lua_rawlen(L, -1);
    for (lua_Integer i = 1; i <= n; i++) {
        if (lua_rawgeti(L, -1, i) != LUA_TTABLE || is_list(L, -1))
            raise(L, d, line, "%s: '<<' must merge a mapping or a list of mappings", where);
        lua_rawseti(L, -3, (lua_Integer)lua_rawlen(L, -3) + 1);
    }
    lua_pop(L, 1);
}

static void parse_mapping(lua_State *L, struct decoder *d, int depth)
{
    lua_newtable(L);
    lua_newtable(L); /* the `<<` merges, applied once every own key is in */
    for (;;) {
        next(L, d);
        if (d->event.type == YAML_MAPPING_END_EVENT)
            break;
        size_t line = line_of(d);
        if (d->event.type != YAML_SCALAR_EVENT)
            raise(L, d, line, "%s: a key that is a list or a mapping; refit reads string keys",
                  d->path_len ? d->path : "(top)");
        const char *key = (const char *)d->event.data.scalar.value;
        size_t key_len = d->event.data.scalar.length;
        bool merge =
            d->event.data.scalar.style == YAML_PLAIN_SCALAR_STYLE && strcmp(key, "<<") == 0;
        if (merge) {
            next(L, d);
            parse_node(L, d, depth + 1);
            add_merge(L, d, line);
            continue;
        }
        lua_pushlstring(L, key, key_len);
        size_t old = push_path(L, d, key, key_len);
        lua_pushvalue(L, -1);
        if (lua_rawget(L, -4) != LUA_TNIL)
            raise(L, d, line, "%s: duplicate key", d->path);
        lua_pop(L, 1);
        set_line(L, d, line);
        next(L, d);
        parse_node(L, d, depth + 1);
        lua_rawset(L, -4);
        pop_path(d, old);
    }
    apply_merges(L);
}

/* Pushes the node whose first event is the current one. */
static void parse_node(lua_State *L, struct decoder *d, int depth)
{
    if (depth > MAX_DEPTH)
        raise(L, d, line_of(d), "nests deeper than %s levels", "64");
    luaL_checkstack(L, 8, "YAML nesting too deep");
    count_node(L, d);
    int anchor;
    switch (d->event.type) {
    case YAML_ALIAS_EVENT:
        lua_pushstring(L, (const char *)d->event.data.alias.anchor);
        if (lua_rawget(L, ANCHORS) == LUA_TNIL)
            raise(L, d, line_of(d), "unknown alias *%s", (const char *)d->event.data.alias.anchor);
        copy_value(L, d, depth, line_of(d));
        break;
    case YAML_SCALAR_EVENT:
        anchor = anchor_of(L, d->event.data.scalar.anchor);
        push_scalar(L, &d->event);
        keep_anchor(L, anchor);
        break;
    case YAML_SEQUENCE_START_EVENT:
        anchor = anchor_of(L, d->event.data.sequence_start.anchor);
        parse_sequence(L, d, depth);
        keep_anchor(L, anchor);
        break;
    case YAML_MAPPING_START_EVENT:
        anchor = anchor_of(L, d->event.data.mapping_start.anchor);
        parse_mapping(L, d, depth);
        keep_anchor(L, anchor);
        break;
    default: raise(L, d, line_of(d), "unexpected YAML event%s", ""); break;
    }
}

static int l_decode(lua_State *L)
{
    size_t len;
    const unsigned char *text = (const unsigned char *)luaL_checklstring(L, TEXT, &len);
    const char *name = luaL_optstring(L, NAME, "YAML");
    lua_settop(L, NAME);
    struct decoder *d = lua_newuserdatauv(L, sizeof(*d), 0);
    memset(d, 0, sizeof(*d));
    luaL_setmetatable(L, "refit.yaml.decoder");
    d->name = name;
    d->text = text;
    d->len = len;
    if (!yaml_parser_initialize(&d->parser))
        return luaL_error(L, "not enough memory");
    d->parser_live = true;
    yaml_parser_set_input_string(&d->parser, text, len);
    lua_newtable(L); /* ANCHORS */
    lua_newtable(L); /* LINES */
    next(L, d);      /* STREAM_START */
    next(L, d);
    if (d->event.type == YAML_STREAM_END_EVENT) {
        /* An empty file: no document, read as null. */
        lua_pushlightuserdata(L, NULL);
    } else {
        next(L, d); /* the DOCUMENT_START's root node */
        parse_node(L, d, 0);
        next(L, d); /* DOCUMENT_END */
        next(L, d);
        if (d->event.type != YAML_STREAM_END_EVENT)
            raise(L, d, line_of(d), "a second YAML document; refit reads one per file%s", "");
    }
    lua_pushvalue(L, LINES);
    release(d);
    return 2;
}

int rf_luaopen_yaml(lua_State *L)
{
    luaL_newmetatable(L, "refit.yaml.decoder");
    lua_pushcfunction(L, l_decoder_gc);
    lua_setfield(L, -2, "__gc");
    lua_pop(L, 1);
    lua_createtable(L, 0, 2);
    /* The same sentinel as refit.json.null: a key written as null is not a missing key. */
    lua_pushlightuserdata(L, NULL);
    lua_setfield(L, -2, "null");
    lua_pushcfunction(L, l_decode);
    lua_setfield(L, -2, "decode");
    return 1;
}
