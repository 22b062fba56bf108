/* The `refit.json` Lua module: decode(text [, name]) turns JSON into Lua tables with
 * jansson, so Hugging Face config.json files are parsed by a maintained library. And the
 * other direction: UTF-8 checks and whole-or-nothing JSON output for the command. */
#include "json.h"

#include <lauxlib.h>
#include <lua.h>
#include <stdlib.h>
#include <string.h>

#include "scenario.h"

size_t rf_utf8_seq(const unsigned char *s, size_t len)
{
    if (len == 0)
        return 0;
    if (s[0] < 0x80)
        return 1;
    /* The ranges of RFC 3629's table: the second byte's range excludes overlong forms
     * (E0, F0), surrogates (ED) and code points past U+10FFFF (F4). */
    size_t n;
    unsigned char lo = 0x80, hi = 0xBF;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        n = 3;
        lo = s[0] == 0xE0 ? 0xA0 : 0x80;
        hi = s[0] == 0xED ? 0x9F : 0xBF;
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        n = 4;
        lo = s[0] == 0xF0 ? 0x90 : 0x80;
        hi = s[0] == 0xF4 ? 0x8F : 0xBF;
    } else
        return 0;
    if (len < n || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

bool rf_utf8_valid(const char *s, size_t len)
{
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < len;) {
        size_t n = rf_utf8_seq(u + i, len - i);
        if (n == 0)
            return false;
        i += n;
    }
    return true;
}

json_t *rf_json_text(const char *s)
{
    if (!s)
        s = "";
    size_t len = strlen(s);
    if (rf_utf8_valid(s, len))
        return json_stringn(s, len);
    /* At most three bytes (U+FFFD) for every byte of s. */
    char *buf = malloc(3 * len + 1);
    if (!buf)
        return NULL;
    const unsigned char *u = (const unsigned char *)s;
    size_t o = 0;
    for (size_t i = 0; i < len;) {
        size_t n = rf_utf8_seq(u + i, len - i);
        if (n == 0) {
            memcpy(buf + o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
        } else {
            memcpy(buf + o, s + i, n);
            o += n;
            i += n;
        }
    }
    json_t *v = json_stringn(buf, o);
    free(buf);
    return v;
}

int rf_json_print(json_t *v, FILE *f, struct rf_error *err)
{
    /* Dumped to memory first, so a document that cannot be dumped prints nothing. */
    char *text = v ? json_dumps(v, JSON_INDENT(2)) : NULL;
    json_decref(v);
    if (!text)
        return rf_error_set(err, RF_EINVAL,
                            "cannot write the JSON output (a value is not "
                            "valid UTF-8 or memory ran out)");
    int rc = fputs(text, f) < 0 || fputc('\n', f) == EOF ? RF_EIO : 0;
    free(text);
    if (rc < 0)
        return rf_error_set(err, RF_EIO, "cannot write the JSON output");
    return 0;
}

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

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

void rf_put_real(FILE *f, double v, bool real)
{
    char buf[40];
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(buf, sizeof(buf), "%.*g", digits, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    fputs(buf, f);
    if (real && !strpbrk(buf, ".eEn"))
        fputs(".0", f);
}

static void put_indent(FILE *f, int indent, int depth)
{
    if (indent <= 0)
        return;
    fputc('\n', f);
    for (int i = 0; i < indent * depth; i++)
        fputc(' ', f);
}

/* Writes v at nesting depth; false when out of memory. */
static bool put_value(FILE *f, const json_t *v, int indent, int depth)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: {
        size_t n = json_object_size(v), i = 0;
        const char **keys = malloc((n ? n : 1) * sizeof(*keys));
        const char *key;
        json_t *item;
        if (!keys)
            return false;
        json_object_foreach((json_t *)v, key, item)
        {
            keys[i++] = key;
        }
        qsort(keys, n, sizeof(*keys), cmp_key);
        fputc('{', f);
        bool ok = true;
        for (i = 0; i < n && ok; i++) {
            json_t *k = json_string(keys[i]);
            char *text = k ? json_dumps(k, JSON_ENCODE_ANY) : NULL;
            json_decref(k);
            ok = text != NULL;
            if (ok) {
                if (i > 0)
                    fputc(',', f);
                put_indent(f, indent, depth + 1);
                fputs(text, f);
                fputs(indent > 0 ? ": " : ":", f);
                ok = put_value(f, json_object_get(v, keys[i]), indent, depth + 1);
            }
            free(text);
        }
        if (n > 0)
            put_indent(f, indent, depth);
        fputc('}', f);
        free(keys);
        return ok;
    }
    case JSON_ARRAY: {
        /* Arrays of scalars (stage_layers) stay on one line. */
        size_t n = json_array_size(v);
        bool flat = true;
        for (size_t i = 0; i < n && flat; i++)
            flat = !json_is_object(json_array_get(v, i)) && !json_is_array(json_array_get(v, i));
        fputc('[', f);
        for (size_t i = 0; i < n; i++) {
            if (i > 0)
                fputs(flat && indent > 0 ? ", " : ",", f);
            if (!flat)
                put_indent(f, indent, depth + 1);
            if (!put_value(f, json_array_get(v, i), indent, depth + 1))
                return false;
        }
        if (!flat && n > 0)
            put_indent(f, indent, depth);
        fputc(']', f);
        return true;
    }
    case JSON_STRING: {
        char *text = json_dumps(v, JSON_ENCODE_ANY);
        if (!text)
            return false;
        fputs(text, f);
        free(text);
        return true;
    }
    case JSON_INTEGER: fprintf(f, "%" JSON_INTEGER_FORMAT, json_integer_value(v)); return true;
    case JSON_REAL: rf_put_real(f, json_real_value(v), true); return true;
    case JSON_TRUE: fputs("true", f); return true;
    case JSON_FALSE: fputs("false", f); return true;
    case JSON_NULL: fputs("null", f); return true;
    }
    return false;
}

char *rf_json_canonical(const json_t *v, int indent)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return NULL;
    bool ok = v && put_value(f, v, indent, 0);
    if (fclose(f) != 0 || !ok) {
        free(buf);
        return NULL;
    }
    return buf;
}
