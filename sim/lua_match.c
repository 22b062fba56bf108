/* Lua 5.4's pattern matching, written again so that it can be stopped. Lua's own matcher
 * runs in C, where the count hook never fires: `("a"):rep(30000):find(("a*"):rep(30) .. "b")`
 * backtracks for minutes (issue 25 measured 75-120 s) inside one instruction. This one
 * counts its steps (a pattern item tried at a subject position, a recursion, a byte compared
 * by a plain find) and charges them to the sandbox's instruction budget every CHARGE_EVERY
 * steps, where the limit raises at the user's line like an endless loop does.
 *
 * The semantics are the reference manual's (section 6.4.1) and Lua 5.4.4's behaviour at the
 * edges, which t/lua-match-t checks against the interpreter's own functions on random
 * patterns and subjects: results, captures, and error messages alike. */
#include "lua_match.h"

#include <ctype.h>
#include <lauxlib.h>
#include <lua.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "sandbox.h"

#define ESC '%'
#define SPECIALS "^$*+?.([%-"
#define MAX_CAPTURES 32 /* Lua's LUA_MAXCAPTURES (lstrlib.c) */
#define MAX_DEPTH 200   /* Lua's MAXCCALLS: nested items past it are "pattern too complex" */
#define CAP_OPEN (-1)   /* a capture whose ')' has not been reached */
#define CAP_POSITION (-2)
#define CHARGE_EVERY 65536

struct capture {
    const char *start;
    ptrdiff_t len; /* bytes, or CAP_OPEN, CAP_POSITION */
};

struct matcher {
    lua_State *L;
    const char *fn; /* "find" ...: the charge's message names it */
    const char *subject, *subject_end, *pattern_end;
    int depth_left;
    int n_caps;
    uint64_t steps; /* not yet charged */
    struct capture cap[MAX_CAPTURES];
};

static void charge(struct matcher *m)
{
    uint64_t steps = m->steps;
    m->steps = 0;
    rf_sandbox_charge(m->L, steps, m->fn);
}

static inline void step(struct matcher *m, uint64_t n)
{
    m->steps += n;
    if (m->steps >= CHARGE_EVERY)
        charge(m);
}

static void matcher_init(struct matcher *m, lua_State *L, const char *fn, const char *s, size_t ls,
                         const char *p, size_t lp)
{
    m->L = L;
    m->fn = fn;
    m->subject = s;
    m->subject_end = s + ls;
    m->pattern_end = p + lp;
    m->steps = 0;
}

/* Before each attempt at a new subject position. */
static void matcher_restart(struct matcher *m)
{
    m->n_caps = 0;
    m->depth_left = MAX_DEPTH;
}

/* Past the single-character class at p: c, %c, or a [set]. Lua strings end in '\0', so
 * reading *pattern_end is allowed. */
static const char *item_end(struct matcher *m, const char *p)
{
    if (*p == ESC) {
        if (p + 1 >= m->pattern_end)
            luaL_error(m->L, "malformed pattern (ends with '%%')");
        return p + 2;
    }
    if (*p != '[')
        return p + 1;
    p++;
    if (*p == '^')
        p++;
    /* The first character of a set is a member even when it is ']'. */
    do {
        if (p == m->pattern_end)
            luaL_error(m->L, "malformed pattern (missing ']')");
        char c = *p++;
        if (c == ESC && p < m->pattern_end)
            p++;
    } while (*p != ']');
    return p + 1;
}

/* c against a class letter (%a, %d ...; upper case is the complement) or, for anything
 * else, the character itself (%. is '.'). */
static bool in_class(int c, int cl)
{
    bool r;
    switch (tolower(cl)) {
    case 'a': r = isalpha(c); break;
    case 'c': r = iscntrl(c); break;
    case 'd': r = isdigit(c); break;
    case 'g': r = isgraph(c); break;
    case 'l': r = islower(c); break;
    case 'p': r = ispunct(c); break;
    case 's': r = isspace(c); break;
    case 'u': r = isupper(c); break;
    case 'w': r = isalnum(c); break;
    case 'x': r = isxdigit(c); break;
    case 'z': /* '\0', deprecated since 5.2 but still Lua 5.4's */ r = c == 0; break;
    default: return cl == c;
    }
    return isupper(cl) ? !r : r;
}

/* c against the set from '[' at p to its closing ']' at last. */
static bool in_set(int c, const char *p, const char *last)
{
    bool member = true;
    if (p[1] == '^') {
        member = false;
        p++;
    }
    while (++p < last) {
        if (*p == ESC) {
            p++;
            if (in_class(c, (unsigned char)*p))
                return member;
        } else if (p[1] == '-' && p + 2 < last) {
            if ((unsigned char)p[0] <= c && c <= (unsigned char)p[2])
                return member;
            p += 2;
        } else if ((unsigned char)*p == c) {
            return member;
        }
    }
    return !member;
}

/* Whether the subject's byte at s matches the item p .. ep. */
static bool item_matches(struct matcher *m, const char *s, const char *p, const char *ep)
{
    step(m, 1);
    if (s >= m->subject_end)
        return false;
    int c = (unsigned char)*s;
    switch (*p) {
    case '.': return true;
    case ESC: return in_class(c, (unsigned char)p[1]);
    case '[': return in_set(c, p, ep - 1);
    default: return (unsigned char)*p == c;
    }
}

static const char *match(struct matcher *m, const char *s, const char *p);

/* %bxy at s: the shortest balanced run from x to its y. */
static const char *balance(struct matcher *m, const char *s, const char *p)
{
    if (p >= m->pattern_end - 1)
        luaL_error(m->L, "malformed pattern (missing arguments to '%%b')");
    if (s >= m->subject_end || *s != p[0])
        return NULL;
    int open = 1;
    const char *start = s;
    while (++s < m->subject_end) {
        if (*s == p[1]) {
            if (--open == 0) {
                step(m, (uint64_t)(s - start));
                return s + 1;
            }
        } else if (*s == p[0]) {
            open++;
        }
    }
    step(m, (uint64_t)(s - start));
    return NULL;
}

/* The greediest count of the item at s that lets the rest match. */
static const char *match_greedy(struct matcher *m, const char *s, const char *p, const char *ep)
{
    ptrdiff_t n = 0;
    while (item_matches(m, s + n, p, ep))
        n++;
    for (; n >= 0; n--) {
        const char *r = match(m, s + n, ep + 1);
        if (r)
            return r;
    }
    return NULL;
}

/* The fewest. */
static const char *match_lazy(struct matcher *m, const char *s, const char *p, const char *ep)
{
    for (;;) {
        const char *r = match(m, s, ep + 1);
        if (r)
            return r;
        if (!item_matches(m, s, p, ep))
            return NULL;
        s++;
    }
}

static const char *open_capture(struct matcher *m, const char *s, const char *p, ptrdiff_t what)
{
    if (m->n_caps >= MAX_CAPTURES)
        luaL_error(m->L, "too many captures");
    m->cap[m->n_caps].start = s;
    m->cap[m->n_caps].len = what;
    m->n_caps++;
    const char *r = match(m, s, p);
    if (!r)
        m->n_caps--;
    return r;
}

static const char *close_capture(struct matcher *m, const char *s, const char *p)
{
    int i = m->n_caps - 1;
    while (i >= 0 && m->cap[i].len != CAP_OPEN)
        i--;
    if (i < 0)
        luaL_error(m->L, "invalid pattern capture");
    m->cap[i].len = s - m->cap[i].start;
    const char *r = match(m, s, p);
    if (!r)
        m->cap[i].len = CAP_OPEN;
    return r;
}

/* %1 .. %9 in a pattern: the text capture l captured, again. */
static const char *backref(struct matcher *m, const char *s, int l)
{
    int i = l - '1';
    if (i < 0 || i >= m->n_caps || m->cap[i].len == CAP_OPEN)
        luaL_error(m->L, "invalid capture index %%%d", i + 1); /* 5.4.4's words */
    ptrdiff_t len = m->cap[i].len;
    /* A position capture has no text: its negative length never fits, as in Lua. */
    if (len < 0 || m->subject_end - s < len)
        return NULL;
    step(m, (uint64_t)len);
    return memcmp(m->cap[i].start, s, (size_t)len) == 0 ? s + len : NULL;
}

/* The end of the match of pattern p (to pattern_end) at subject position s, or NULL.
 * Recursion is where Lua's matcher recurses, so "pattern too complex" strikes alike. */
static const char *match(struct matcher *m, const char *s, const char *p)
{
    if (m->depth_left-- == 0)
        luaL_error(m->L, "pattern too complex");
    step(m, 1);
    const char *r = NULL;
    for (;;) {
        if (p == m->pattern_end) {
            r = s;
            break;
        }
        if (*p == '(') {
            r = p[1] == ')' ? open_capture(m, s, p + 2, CAP_POSITION)
                            : open_capture(m, s, p + 1, CAP_OPEN);
            break;
        }
        if (*p == ')') {
            r = close_capture(m, s, p + 1);
            break;
        }
        if (*p == '$' && p + 1 == m->pattern_end) {
            r = s == m->subject_end ? s : NULL;
            break;
        }
        if (*p == ESC && p[1] == 'b') {
            s = balance(m, s, p + 2);
            if (!s)
                break;
            p += 4;
            continue;
        }
        if (*p == ESC && p[1] == 'f') {
            p += 2;
            if (*p != '[')
                luaL_error(m->L, "missing '[' after '%%f' in pattern");
            const char *ep = item_end(m, p);
            int before = s == m->subject ? '\0' : (unsigned char)s[-1];
            int here = s < m->subject_end ? (unsigned char)*s : '\0';
            if (in_set(before, p, ep - 1) || !in_set(here, p, ep - 1))
                break;
            p = ep;
            continue;
        }
        if (*p == ESC && isdigit((unsigned char)p[1])) {
            s = backref(m, s, (unsigned char)p[1]);
            if (!s)
                break;
            p += 2;
            continue;
        }
        const char *ep = item_end(m, p);
        if (!item_matches(m, s, p, ep)) {
            if (*ep == '*' || *ep == '?' || *ep == '-') {
                p = ep + 1; /* zero of them is a match */
                continue;
            }
            break;
        }
        if (*ep == '?') {
            r = match(m, s + 1, ep + 1);
            if (r)
                break;
            p = ep + 1;
            continue;
        }
        if (*ep == '+') {
            r = match_greedy(m, s + 1, p, ep);
            break;
        }
        if (*ep == '*') {
            r = match_greedy(m, s, p, ep);
            break;
        }
        if (*ep == '-') {
            r = match_lazy(m, s, p, ep);
            break;
        }
        s++;
        p = ep;
    }
    m->depth_left++;
    return r;
}

/* Capture i of a match from s to e: pushes a position capture (returning CAP_POSITION),
 * otherwise sets *text and returns its length. With no captures, capture 0 is the match. */
static ptrdiff_t capture_at(struct matcher *m, int i, const char *s, const char *e,
                            const char **text)
{
    if (i >= m->n_caps) {
        if (i != 0)
            luaL_error(m->L, "invalid capture index %%%d", i + 1);
        *text = s;
        return e - s;
    }
    ptrdiff_t len = m->cap[i].len;
    *text = m->cap[i].start;
    if (len == CAP_OPEN)
        luaL_error(m->L, "unfinished capture");
    else if (len == CAP_POSITION)
        lua_pushinteger(m->L, (lua_Integer)(m->cap[i].start - m->subject) + 1);
    return len;
}

static void push_capture(struct matcher *m, int i, const char *s, const char *e)
{
    const char *text;
    ptrdiff_t len = capture_at(m, i, s, e, &text);
    if (len != CAP_POSITION)
        lua_pushlstring(m->L, text, (size_t)len);
}

/* Pushes the captures (or the whole match, s NULL: nothing) and returns their count. */
static int push_captures(struct matcher *m, const char *s, const char *e)
{
    int n = m->n_caps == 0 && s ? 1 : m->n_caps;
    luaL_checkstack(m->L, n, "too many captures");
    for (int i = 0; i < n; i++)
        push_capture(m, i, s, e);
    return n;
}

/* A 1-based start (negative from the end) as string.find reads it. */
static size_t start_index(lua_Integer pos, size_t len)
{
    if (pos > 0)
        return (size_t)pos;
    if (pos == 0 || pos < -(lua_Integer)len)
        return 1;
    return len + (size_t)pos + 1;
}

static bool has_specials(const char *p, size_t lp)
{
    for (size_t i = 0; i < lp; i++)
        if (p[i] && strchr(SPECIALS, p[i]))
            return true;
    return false;
}

/* A plain search, charged by the bytes it compares. */
static const char *find_plain(struct matcher *m, const char *s, size_t ls, const char *p, size_t lp)
{
    if (lp == 0)
        return s;
    if (lp > ls)
        return NULL;
    const char *end = s + (ls - lp) + 1;
    while (s < end) {
        const char *hit = memchr(s, p[0], (size_t)(end - s));
        step(m, (uint64_t)((hit ? hit : end) - s) / 16 + 1);
        if (!hit)
            return NULL;
        step(m, lp);
        if (memcmp(hit + 1, p + 1, lp - 1) == 0)
            return hit;
        s = hit + 1;
    }
    return NULL;
}

static int find_or_match(lua_State *L, bool find)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_index(luaL_optinteger(L, 3, 1), ls);
    struct matcher m;
    matcher_init(&m, L, find ? "string.find" : "string.match", s, ls, p, lp);
    if (init > ls + 1) {
        luaL_pushfail(L);
        return 1;
    }
    if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
        const char *hit = find_plain(&m, s + init - 1, ls - init + 1, p, lp);
        charge(&m);
        if (!hit) {
            luaL_pushfail(L);
            return 1;
        }
        lua_pushinteger(L, (lua_Integer)(hit - s) + 1);
        lua_pushinteger(L, (lua_Integer)(hit - s + lp));
        return 2;
    }
    bool anchored = *p == '^';
    if (anchored)
        p++; /* the pattern's end stays where matcher_init put it */
    const char *at = s + init - 1;
    do {
        matcher_restart(&m);
        const char *e = match(&m, at, p);
        if (e) {
            charge(&m);
            if (!find)
                return push_captures(&m, at, e);
            lua_pushinteger(L, (lua_Integer)(at - s) + 1);
            lua_pushinteger(L, (lua_Integer)(e - s));
            return push_captures(&m, NULL, NULL) + 2;
        }
    } while (at++ < m.subject_end && !anchored);
    charge(&m);
    luaL_pushfail(L);
    return 1;
}

static int l_find(lua_State *L)
{
    return find_or_match(L, true);
}

static int l_match(lua_State *L)
{
    return find_or_match(L, false);
}

/* gmatch's iterator state, a userdata beside the subject and pattern it points into. */
struct gmatch {
    struct matcher m;
    const char *at, *pattern, *last;
};

static int gmatch_next(lua_State *L)
{
    struct gmatch *g = lua_touserdata(L, lua_upvalueindex(3));
    g->m.L = L; /* the iterator may run in another coroutine */
    for (const char *at = g->at; at <= g->m.subject_end; at++) {
        matcher_restart(&g->m);
        const char *e = match(&g->m, at, g->pattern);
        /* An empty match where the last match ended is no match: "a*" over "ab" finds
         * "a" and "", not "a", "" and "" again. */
        if (e && e != g->last) {
            g->at = g->last = e;
            charge(&g->m);
            return push_captures(&g->m, at, e);
        }
    }
    charge(&g->m);
    return 0;
}

static int l_gmatch(lua_State *L)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    size_t init = start_index(luaL_optinteger(L, 3, 1), ls) - 1;
    lua_settop(L, 2); /* the closure keeps subject and pattern alive */
    struct gmatch *g = lua_newuserdatauv(L, sizeof(*g), 0);
    if (init > ls)
        init = ls + 1;
    /* In gmatch a leading '^' is an ordinary character (Lua 5.4's manual). */
    matcher_init(&g->m, L, "string.gmatch", s, ls, p, lp);
    g->at = s + init;
    g->pattern = p;
    g->last = NULL;
    lua_pushcclosure(L, gmatch_next, 3);
    return 1;
}

/* A string replacement: %0 the match, %1 .. %9 its captures, %% a '%'. */
static void add_template(struct matcher *m, luaL_Buffer *b, const char *s, const char *e)
{
    size_t l;
    const char *t = lua_tolstring(m->L, 3, &l);
    const char *esc;
    while ((esc = memchr(t, ESC, l)) != NULL) {
        luaL_addlstring(b, t, (size_t)(esc - t));
        char c = esc[1]; /* '\0' past the end: an invalid use */
        if (c == ESC) {
            luaL_addchar(b, ESC);
        } else if (c == '0') {
            luaL_addlstring(b, s, (size_t)(e - s));
        } else if (isdigit((unsigned char)c)) {
            const char *text;
            ptrdiff_t len = capture_at(m, c - '1', s, e, &text);
            if (len == CAP_POSITION)
                luaL_addvalue(b);
            else
                luaL_addlstring(b, text, (size_t)len);
        } else {
            luaL_error(m->L, "invalid use of '%c' in replacement string", ESC);
        }
        l -= (size_t)(esc + 2 - t);
        t = esc + 2;
    }
    luaL_addlstring(b, t, l);
}

/* Appends the replacement of the match s .. e; false when the match stays as it was (a
 * function or table gave false or nil). */
static bool add_replacement(struct matcher *m, luaL_Buffer *b, const char *s, const char *e,
                            int type)
{
    lua_State *L = m->L;
    if (type == LUA_TFUNCTION) {
        lua_pushvalue(L, 3);
        int n = push_captures(m, s, e);
        lua_call(L, n, 1);
    } else if (type == LUA_TTABLE) {
        push_capture(m, 0, s, e);
        lua_gettable(L, 3);
    } else {
        add_template(m, b, s, e);
        return true;
    }
    if (!lua_toboolean(L, -1)) {
        lua_pop(L, 1);
        luaL_addlstring(b, s, (size_t)(e - s));
        return false;
    }
    if (!lua_isstring(L, -1))
        return luaL_error(L, "invalid replacement value (a %s)", luaL_typename(L, -1));
    luaL_addvalue(b);
    return true;
}

static int l_gsub(lua_State *L)
{
    size_t ls, lp;
    const char *s = luaL_checklstring(L, 1, &ls);
    const char *p = luaL_checklstring(L, 2, &lp);
    int type = lua_type(L, 3);
    lua_Integer max_n = luaL_optinteger(L, 4, (lua_Integer)ls + 1);
    luaL_argexpected(L,
                     type == LUA_TNUMBER || type == LUA_TSTRING || type == LUA_TFUNCTION ||
                         type == LUA_TTABLE,
                     3, "string/function/table");
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    bool anchored = *p == '^';
    if (anchored) {
        p++;
        lp--;
    }
    struct matcher m;
    matcher_init(&m, L, "string.gsub", s, ls, p, lp);
    const char *at = s, *last = NULL;
    lua_Integer n = 0;
    bool changed = false;
    while (n < max_n) {
        matcher_restart(&m);
        const char *e = match(&m, at, p);
        if (e && e != last) {
            n++;
            changed = add_replacement(&m, &b, at, e, type) || changed;
            at = last = e;
        } else if (at < m.subject_end) {
            luaL_addchar(&b, *at++);
        } else {
            break;
        }
        if (anchored)
            break;
    }
    charge(&m);
    if (!changed) {
        lua_pushvalue(L, 1);
    } else {
        luaL_addlstring(&b, at, (size_t)(m.subject_end - at));
        luaL_pushresult(&b);
    }
    lua_pushinteger(L, n);
    return 2;
}

void rf_lua_match_install(lua_State *L)
{
    static const luaL_Reg fns[] = {
        {"find", l_find}, {"match", l_match}, {"gmatch", l_gmatch}, {"gsub", l_gsub}, {0, 0}};
    lua_getglobal(L, "string");
    luaL_setfuncs(L, fns, 0);
    lua_pop(L, 1);
}
