/* The limits of refit's Lua state (memory, instructions) and the one reader of description
 * files (`refit.file`), so no description can hang, exhaust memory or read a device. */
#ifndef RF_SANDBOX_H
#define RF_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

struct lua_State;
struct lua_Debug;

/* Sees every line the state runs (the fuzz targets' coverage of models/lib); NULL: none. */
typedef void (*rf_lua_observer)(struct lua_State *L, struct lua_Debug *ar);

/* Defaults, far above the peaks measured on the largest shipped inputs (README, "Limits":
 * 1.9 MB and 180 thousand instructions, study-k3-5s and kimi-k3-gb200): Lua memory of the
 * whole state (130x), and Lua instructions of one entry from C, i.e. one description load
 * with its policy calls or one study's code between two of its plans (550x, 0.3 s). */
#define RF_LUA_MEMORY_LIMIT ((uint64_t)256 << 20)
#define RF_LUA_INSTRUCTION_LIMIT ((uint64_t)100 * 1000 * 1000)
/* The count hook runs every this many instructions: often enough to stop a loop within
 * microseconds, rarely enough that its cost disappears in the interpreter's. */
#define RF_LUA_HOOK_PERIOD 1000
/* The largest file (scenario, model, cluster, study, config.json) the library reads. */
#define RF_FILE_LIMIT ((int64_t)16 << 20)

struct rf_lua_limits {
    uint64_t memory_bytes;
    uint64_t instructions;
};

/* The allocator's and the count hook's state; it must outlive the Lua state. */
struct rf_sandbox {
    struct lua_State *L;
    struct rf_lua_limits limits;
    char lib_source[1024]; /* "@<models>/lib/": frames of the library, not of the user */
    size_t used, peak;     /* bytes the state holds now, and at most */
    uint64_t count;        /* instructions of the current entry, in hook periods */
    uint64_t count_peak;   /* the most any entry used */
    uint64_t steps;        /* pattern-matching steps short of a hook period (charged) */
    bool armed;            /* memory passed the limit: check at the next instruction */
    bool stopped;          /* a limit was reported in this entry: do not raise again */
    bool unplaced;         /* ... where no description was running (a config.json) */
    bool refused;          /* an allocation past twice the limit was refused */
    char refused_at[1024]; /* "file:line" of the user's code that asked, when known */
    char stopped_by[1280]; /* the limit's message, should the message handler lose it */
    rf_lua_observer observe;
};

/* Creates the Lua state with the counting allocator, the count hook and the standard
 * libraries, and preloads `refit.file`. lib_dir is <models>/lib. */
int rf_sandbox_open(struct rf_sandbox *sb, const char *lib_dir, struct rf_error *err);
void rf_sandbox_close(struct rf_sandbox *sb);
/* A fresh instruction budget (and the memory check re-armed) for the next entry from C. */
void rf_sandbox_reset(struct rf_sandbox *sb);
/* lua_pcall of the function below nargs arguments with a fresh budget and the message
 * handler at registry reference msgh (LUA_NOREF: none). On failure the error (a memory
 * limit made explicit, `what` naming the input when Lua cannot) is in err, the stack
 * restored below the function. */
int rf_sandbox_pcall(struct rf_sandbox *sb, int nargs, int nresults, int msgh, const char *what,
                     struct rf_error *err);

/* Charges steps of C work done for Lua (sim/lua_match.c's pattern matching, where the count
 * hook never fires) to the entry's instruction budget, one step as one instruction; past the
 * limit raises at the user's line, naming `what` ("string.find"). Nothing in a state the
 * sandbox did not open. */
void rf_sandbox_charge(struct lua_State *L, uint64_t steps, const char *what);

/* The most instructions one entry used so far (a multiple of the hook period). */
uint64_t rf_sandbox_instructions_peak(const struct rf_sandbox *sb);

/* The `refit.file` Lua module: read(path) -> text | nil, reason. */
int rf_luaopen_file(struct lua_State *L);

#endif
