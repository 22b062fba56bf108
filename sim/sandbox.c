/* The limits of refit's Lua state and its file reader. Descriptions are programs: without
 * limits `while true do end` hangs refit and a table bomb takes the machine's memory. The
 * allocator counts the whole state's bytes, a count hook its instructions per entry from C
 * (and sim/lua_match.c charges its pattern-matching steps to the same budget); every file the
 * library reads goes through `refit.file.read`, which refuses devices, directories and oversized
 * files before reading a byte. */
#include "sandbox.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lua_match.h"

#define HOOK_PERIOD RF_LUA_HOOK_PERIOD
#define MAX_LEVELS 100
/* Larger than any reallocation of a Lua stack (LUAI_MAXSTACK slots of 16 bytes). */
#define BIG_REQUEST ((size_t)64 << 20)

static struct rf_sandbox *sandbox_of(lua_State *L)
{
    void *ud;
    lua_getallocf(L, &ud);
    return ud;
}

/* Where the user's code is running: the innermost frame of a description (a file outside
 * models/lib). The library's frames are skipped so a loop around a constructor call is
 * reported at the loop, not inside schema.lua; with no description running (a config.json
 * is being converted) there is no such frame and the caller names the input instead. The
 * walk stops after MAX_LEVELS frames: lua_getstack walks from the top, so a deep recursion
 * would make it quadratic. */
static bool running_site(lua_State *L, const struct rf_sandbox *sb, const char **file, int *line)
{
    lua_Debug ar;
    size_t n = strlen(sb->lib_source);
    for (int level = 0; level < MAX_LEVELS && lua_getstack(L, level, &ar); level++) {
        if (!lua_getinfo(L, "Sl", &ar) || ar.currentline <= 0)
            continue;
        if (ar.source[0] == '@' && strncmp(ar.source, sb->lib_source, n) != 0) {
            *file = ar.source + 1;
            *line = ar.currentline;
            return true;
        }
    }
    return false;
}

/* Raises `text` at the user's running line. Only called from the hook, where the stack is
 * consistent and an error may be raised. */
static void raise_limit(lua_State *L, struct rf_sandbox *sb, const char *text)
{
    const char *file;
    int line;
    sb->stopped = true;
    sb->unplaced = !running_site(L, sb, &file, &line);
    if (!sb->unplaced)
        snprintf(sb->stopped_by, sizeof(sb->stopped_by), "%s:%d: %s", file, line, text);
    else
        snprintf(sb->stopped_by, sizeof(sb->stopped_by), "%s", text);
    lua_pushstring(L, sb->stopped_by);
    lua_error(L);
}

static void hook(lua_State *L, lua_Debug *ar);
static void *sandbox_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

static void set_hook(struct rf_sandbox *sb, int period)
{
    lua_sethook(sb->L, hook, LUA_MASKCOUNT | (sb->observe ? LUA_MASKLINE : 0), period);
}

static void hook(lua_State *L, lua_Debug *ar)
{
    struct rf_sandbox *sb = sandbox_of(L);
    char text[256];
    if (ar->event == LUA_HOOKLINE) {
        if (sb->observe)
            sb->observe(L, ar);
        return;
    }
    if (sb->stopped)
        return;
    if (sb->armed) {
        /* Memory passed the limit at an allocation, where nothing may be inspected; here,
         * one instruction later, garbage is collected first so only live data counts. */
        sb->armed = false;
        set_hook(sb, HOOK_PERIOD);
        lua_gc(L, LUA_GCCOLLECT);
        if (sb->used <= sb->limits.memory_bytes)
            return;
        snprintf(text, sizeof(text), "more than %llu MiB of Lua memory in use (the limit)",
                 (unsigned long long)(sb->limits.memory_bytes >> 20));
        raise_limit(L, sb, text);
    }
    if (++sb->count * HOOK_PERIOD > sb->limits.instructions) {
        snprintf(text, sizeof(text),
                 "more than %llu million Lua instructions (the limit of one description "
                 "load or study step; an endless loop?)",
                 (unsigned long long)(sb->limits.instructions / 1000000));
        raise_limit(L, sb, text);
    }
}

void rf_sandbox_charge(lua_State *L, uint64_t steps, const char *what)
{
    void *ud;
    if (lua_getallocf(L, &ud) != sandbox_alloc)
        return;
    struct rf_sandbox *sb = ud;
    /* Once a limit is reported the error is on its way out; the library's message handler
     * may still match its own patterns. */
    if (sb->stopped)
        return;
    sb->steps += steps;
    sb->count += sb->steps / HOOK_PERIOD;
    sb->steps %= HOOK_PERIOD;
    if (sb->count * HOOK_PERIOD > sb->limits.instructions) {
        char text[256];
        snprintf(text, sizeof(text),
                 "%s: more than %llu million Lua instructions and pattern-matching steps (the "
                 "limit of one description load or study step; a pattern that backtracks "
                 "without end?)",
                 what, (unsigned long long)(sb->limits.instructions / 1000000));
        raise_limit(L, sb, text);
    }
}

/* Counts every byte of the state. Passing the limit succeeds but arms the hook, which
 * reports the user's line at the next instruction: an allocation cannot safely walk the
 * stack (Lua 5.4.6 holds stack offsets, not pointers, while it grows the stack). Growth
 * past twice the limit fails, so Lua raises "not enough memory" before the machine does. */
static void *sandbox_alloc(void *ud, void *ptr, size_t osize, size_t nsize)
{
    struct rf_sandbox *sb = ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        sb->used -= old;
        return NULL;
    }
    uint64_t cap = 2 * sb->limits.memory_bytes;
    if (nsize > old && (uint64_t)(nsize - old) > cap - (sb->used < cap ? sb->used : cap)) {
        sb->refused = true;
        /* Lua raises such a failure without calling the message handler, so the place is
         * taken here. A request this large is never the stack's own growth (16 MiB at
         * most), the one moment the stack cannot be walked. */
        const char *file;
        int line;
        if (nsize - old >= BIG_REQUEST && sb->L && running_site(sb->L, sb, &file, &line))
            snprintf(sb->refused_at, sizeof(sb->refused_at), "%s:%d", file, line);
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (!p)
        return NULL;
    sb->used = sb->used - old + nsize;
    if (sb->used > sb->peak)
        sb->peak = sb->used;
    if (sb->used > sb->limits.memory_bytes && !sb->armed && !sb->stopped && sb->L) {
        sb->armed = true;
        set_hook(sb, 1);
    }
    return p;
}

int rf_sandbox_open(struct rf_sandbox *sb, const char *lib_dir, struct rf_error *err)
{
    memset(sb, 0, sizeof(*sb));
    sb->limits = (struct rf_lua_limits){RF_LUA_MEMORY_LIMIT, RF_LUA_INSTRUCTION_LIMIT};
    int n = snprintf(sb->lib_source, sizeof(sb->lib_source), "@%s/", lib_dir);
    if (n < 0 || (size_t)n >= sizeof(sb->lib_source))
        return rf_error_set(err, RF_EINVAL, "%s: path too long", lib_dir);
    lua_State *L = lua_newstate(sandbox_alloc, sb);
    if (!L)
        return rf_error_set(err, RF_ENOMEM, "cannot create a Lua state");
    sb->L = L;
    set_hook(sb, HOOK_PERIOD);
    luaL_openlibs(L);
    rf_lua_match_install(L);
    luaL_requiref(L, "refit.file", rf_luaopen_file, 0);
    lua_pop(L, 1);
    return 0;
}

void rf_sandbox_close(struct rf_sandbox *sb)
{
    if (sb && sb->L) {
        lua_close(sb->L);
        sb->L = NULL;
    }
}

uint64_t rf_sandbox_instructions_peak(const struct rf_sandbox *sb)
{
    return (sb->count > sb->count_peak ? sb->count : sb->count_peak) * HOOK_PERIOD;
}

void rf_sandbox_reset(struct rf_sandbox *sb)
{
    lua_State *L = sb->L;
    if (sb->count > sb->count_peak)
        sb->count_peak = sb->count;
    /* What the last entry left over the limit is garbage now (its error unwound it). */
    if (sb->used > sb->limits.memory_bytes)
        lua_gc(L, LUA_GCCOLLECT);
    sb->count = sb->steps = 0;
    sb->armed = sb->stopped = sb->refused = sb->unplaced = false;
    sb->refused_at[0] = sb->stopped_by[0] = '\0';
    set_hook(sb, HOOK_PERIOD);
}

int rf_sandbox_pcall(struct rf_sandbox *sb, int nargs, int nresults, int msgh, const char *what,
                     struct rf_error *err)
{
    lua_State *L = sb->L;
    int fn = lua_gettop(L) - nargs, handler = 0;
    if (msgh != LUA_NOREF) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, msgh);
        lua_insert(L, fn);
        handler = fn++;
    }
    rf_sandbox_reset(sb);
    int status = lua_pcall(L, nargs, nresults, handler);
    if (sb->count > sb->count_peak)
        sb->count_peak = sb->count;
    if (status == LUA_OK) {
        if (handler)
            lua_remove(L, handler);
        return 0;
    }
    const char *msg = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    static const char nomem[] = "not enough memory";
    size_t len = msg ? strlen(msg) : 0;
    if (status == LUA_ERRERR && sb->stopped) {
        /* The limit struck inside the message handler, which Lua reports as "error in
         * error handling"; the limit's own message says more. */
        rf_error_set(err, RF_ELUA, "%s%s%s", sb->unplaced ? what : "", sb->unplaced ? ": " : "",
                     sb->stopped_by);
    } else if (msg && sb->stopped && sb->unplaced && strcmp(msg, sb->stopped_by) == 0) {
        rf_error_set(err, RF_ELUA, "%s: %s", what, msg);
    } else if (!msg) {
        rf_error_set(err, RF_ELUA, "%s: error object is a %s (error() should be given a string)",
                     what, luaL_typename(L, -1));
    } else if (len >= sizeof(nomem) - 1 && strcmp(msg + len - (sizeof(nomem) - 1), nomem) == 0 &&
               (sb->refused || status == LUA_ERRMEM)) {
        /* Lua's own words name neither the place nor the cause; the message handler may have
         * put the user's line before them, else the allocator noted it, else the input. */
        int at = (int)(len - (sizeof(nomem) - 1));
        const char *where = at ? "" : sb->refused_at[0] ? sb->refused_at : what;
        if (sb->refused)
            rf_error_set(err, RF_ELUA, "%s%s%.*smore than %llu MiB of Lua memory (the limit)",
                         where, at ? "" : ": ", at, msg,
                         (unsigned long long)(sb->limits.memory_bytes >> 20));
        else
            rf_error_set(err, RF_ELUA, "%s%s%s", where, at ? "" : ": ", msg);
    } else if (strncmp(msg, RF_NO_REFIT_MARK, sizeof(RF_NO_REFIT_MARK) - 1) == 0) {
        rf_error_set(err, RF_ENOREFIT, "%s", msg + sizeof(RF_NO_REFIT_MARK) - 1);
    } else {
        rf_error_set(err, RF_ELUA, "%s", msg);
    }
    /* One line, whatever Lua said (a missing module lists every path it tried):
     * rf_error_set writes line breaks as spaces. */
    lua_settop(L, (handler ? handler : fn) - 1);
    return err && err->code == RF_ENOREFIT ? RF_ENOREFIT : RF_ELUA;
}

/* refit.file.read(path) -> text | nil, reason. The path is checked with stat before it is
 * opened (a FIFO would block open, /dev/zero never ends), opened without blocking, checked
 * again on the descriptor, and read into a buffer Lua owns, so no error leaks the file. */
static int file_fail(lua_State *L, const char *reason)
{
    lua_pushnil(L);
    lua_pushstring(L, reason);
    return 2;
}

static int file_errno(lua_State *L, int e)
{
    char reason[128];
    snprintf(reason, sizeof(reason), "%s", strerror(e));
    reason[0] = (char)tolower((unsigned char)reason[0]);
    return file_fail(L, reason);
}

static int file_check(lua_State *L, const struct stat *st)
{
    char reason[128];
    if (S_ISDIR(st->st_mode))
        return file_fail(L, "is a directory");
    if (!S_ISREG(st->st_mode))
        return file_fail(L, "is not a regular file");
    if (st->st_size > RF_FILE_LIMIT) {
        snprintf(reason, sizeof(reason), "is %lld bytes, more than the %lld MiB refit reads",
                 (long long)st->st_size, (long long)(RF_FILE_LIMIT >> 20));
        return file_fail(L, reason);
    }
    return 0;
}

static int l_file_read(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    int n;
    if (stat(path, &st) != 0)
        return file_errno(L, errno);
    if ((n = file_check(L, &st)) != 0)
        return n;
    /* One byte more than the file holds, to notice a file that grew. */
    size_t cap = (size_t)st.st_size + 1;
    char *buf = lua_newuserdatauv(L, cap, 0);
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return file_errno(L, errno);
    if (fstat(fd, &st) != 0 || (n = file_check(L, &st)) != 0 || (size_t)st.st_size >= cap) {
        int e = errno;
        close(fd);
        if (n)
            return n;
        return (size_t)st.st_size >= cap ? file_fail(L, "changed while it was read")
                                         : file_errno(L, e);
    }
    size_t got = 0;
    while (got < cap) {
        ssize_t r = read(fd, buf + got, cap - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            return file_errno(L, e);
        }
        if (r == 0)
            break;
        got += (size_t)r;
    }
    close(fd);
    if (got >= cap)
        return file_fail(L, "changed while it was read");
    lua_pushlstring(L, buf, got);
    return 1;
}

/* The open folder of a list() call, owned by a userdata: a push that raises (out of
 * memory) leaves the DIR to the collector instead of leaking it. */
static int dir_gc(lua_State *L)
{
    DIR **d = lua_touserdata(L, 1);
    if (*d)
        closedir(*d);
    *d = NULL;
    return 0;
}

/* Whether entry e of the open folder d is a folder, following a symbolic link (a Hugging Face
 * cache's snapshots may be links). fstatat, not d_type: d_type is no POSIX field. */
static bool entry_is_dir(DIR *d, const struct dirent *e)
{
    struct stat st;
    return fstatat(dirfd(d), e->d_name, &st, 0) == 0 && S_ISDIR(st.st_mode);
}

/* list(dir [, "dirs"]) -> the names of dir's *.lua files without the suffix (what an
 * unknown preset's error offers instead), or with "dirs" the names of its folders (the
 * snapshots of a Hugging Face cache folder), in no order (file.lua sorts them), hidden
 * entries left out; or nil and the reason (a path that is no folder: "not a directory"). */
static int l_file_list(lua_State *L)
{
    const char *dir = luaL_checkstring(L, 1);
    bool dirs = strcmp(luaL_optstring(L, 2, "lua"), "dirs") == 0;
    DIR **d = lua_newuserdatauv(L, sizeof(*d), 0);
    *d = NULL;
    if (luaL_newmetatable(L, "refit.file.dir")) {
        lua_pushcfunction(L, dir_gc);
        lua_setfield(L, -2, "__gc");
    }
    lua_setmetatable(L, -2);
    if (!(*d = opendir(dir)))
        return file_errno(L, errno);
    lua_newtable(L);
    lua_Integer n = 0;
    struct dirent *e;
    while ((e = readdir(*d))) {
        size_t len = strlen(e->d_name);
        if (e->d_name[0] == '.')
            continue;
        if (dirs) {
            if (!entry_is_dir(*d, e))
                continue;
            lua_pushlstring(L, e->d_name, len);
        } else if (len < 5 || strcmp(e->d_name + len - 4, ".lua") != 0) {
            continue;
        } else {
            lua_pushlstring(L, e->d_name, len - 4);
        }
        lua_rawseti(L, -2, ++n);
    }
    closedir(*d);
    *d = NULL;
    return 1;
}

/* kind(path) -> "file", "dir" or "other" (a FIFO, a device), following links, or nil and
 * the reason: a lookup that never opens the path, so a FIFO named like a config cannot
 * block refit (models/lib/compose.lua's search of Hydra's config folders). */
static int l_file_kind(lua_State *L)
{
    const char *path = luaL_checkstring(L, 1);
    struct stat st;
    if (stat(path, &st) != 0)
        return file_errno(L, errno);
    lua_pushstring(L, S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir" : "other");
    return 1;
}

int rf_luaopen_file(lua_State *L)
{
    lua_createtable(L, 0, 4);
    lua_pushcfunction(L, l_file_kind);
    lua_setfield(L, -2, "kind");
    lua_pushcfunction(L, l_file_read);
    lua_setfield(L, -2, "read");
    lua_pushcfunction(L, l_file_list);
    lua_setfield(L, -2, "list");
    lua_pushinteger(L, (lua_Integer)RF_FILE_LIMIT);
    lua_setfield(L, -2, "limit");
    return 1;
}
