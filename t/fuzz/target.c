/* The fuzz targets of the description loaders: the input's bytes become a scenario file, a
 * Hugging Face config.json, a cluster file, an RL framework's YAML config (a scenario's
 * `sides`) or a framework profile file (RF_FUZZ_KIND), loaded as `refit` loads them.
 * Built for libFuzzer by t/fuzz/build; t/fuzz/replay.c replays files through it (make check).
 *
 * Each input runs in a fresh Lua state, in a temporary directory that also holds a small
 * model, cluster file and config.json the input may name. A failure must be one clean line:
 * a crash, a sanitizer report, an empty or multi-line message, or (strict, the default) a
 * message that names no file or names a file of models/lib is a finding, reported by
 * abort(). */
#include <errno.h>
#include <lauxlib.h>
#include <limits.h>
#include <lua.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sandbox.h"
#include "scenario.h"

#ifndef RF_FUZZ_KIND
#define RF_FUZZ_KIND "scenario"
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char models[PATH_MAX], lib[PATH_MAX + 8], dir[PATH_MAX], input[PATH_MAX + 32];
static bool lax, verbose;

/* Smaller than refit's own limits, so an endless loop or a bomb ends in milliseconds and
 * libFuzzer finds crashes instead of timeouts; the mechanism is the same. */
static const struct rf_lua_limits limits = {64 << 20, 10 * 1000 * 1000};

#ifdef RF_FUZZ_LIBFUZZER
/* Lua line coverage for libFuzzer: the C coverage of the interpreter is not instrumented (it
 * is Debian's liblua5.4), so each (file, function, line) the library runs bumps a counter in
 * libFuzzer's extra-counters section. Hashing the source's text, not its address, keeps the
 * feature stable across the fresh state of each input. */
__attribute__((used, section("__libfuzzer_extra_counters"))) static uint8_t lua_lines[1 << 16];

static void observe(lua_State *L, lua_Debug *ar)
{
    if (!lua_getinfo(L, "S", ar))
        return;
    uint32_t h = 2166136261u;
    for (const char *c = ar->source; *c; c++)
        h = (h ^ (uint8_t)*c) * 16777619u;
    h = (h ^ (uint32_t)ar->linedefined) * 16777619u;
    h = (h ^ (uint32_t)ar->currentline) * 16777619u;
    uint8_t *c = &lua_lines[h & (sizeof(lua_lines) - 1)];
    if (*c < 255)
        (*c)++;
}
#endif

static void finding(const char *why, const char *msg)
{
    fprintf(stderr, "refit fuzz: %s: %s\n", why, msg);
    abort();
}

static int copy_file(const char *from, const char *name)
{
    char to[PATH_MAX + 64], buf[65536];
    size_t n;
    int rc = -1;
    snprintf(to, sizeof(to), "%s/%s", dir, name);
    FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
    if (!in || !out)
        goto out;
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            goto out;
    rc = ferror(in) ? -1 : 0;
out:
    if (in)
        fclose(in);
    if (out && fclose(out) != 0)
        rc = -1;
    return rc;
}

/* The scenarios that name a YAML input (verl's, then NeMo RL's reading of it) and a profile
 * input (its default path, then its point-to-point one), written beside the fixtures. */
static const char *const wrappers[][2] = {
    {"verl.lua", "return { cluster = 'dgx-h100', sides = { verl = 'input.yaml' }, "
                 "strategy = 'reshard' }\n"},
    {"nemo-rl.lua", "return { cluster = 'dgx-h100', sides = { nemo_rl = 'input.yaml' } }\n"},
    {"profile.lua", "return { model = 'tiny.lua', cluster = { system = 'dgx-h100', nodes = 2 },\n"
                    "  train = { gpus = 8, tp = 2 }, infer = { gpus = 8, first_gpu = 8, tp = 4 },\n"
                    "  framework = 'input.lua' }\n"},
    {"profile-p2p.lua", "return { model = 'tiny.lua', cluster = { system = 'dgx-h100', nodes = 2 "
                        "},\n  train = { gpus = 8, tp = 2 }, infer = { gpus = 8, first_gpu = 8, "
                        "tp = 4 },\n  framework = 'input.lua', strategy = 'p2p' }\n"},
};

/* The YAML files a YAML input may inherit from (`defaults:`), as t/data/yaml has them. */
static const char *const yaml_fixtures[] = {"verl-qwen3-30b.yaml", "nemo-rl-base.yaml",
                                            "nemo-rl-dsv3.yaml", "distill-base.yaml"};

static void cleanup(void)
{
    static const char *names[] = {"tiny.lua",  "cluster-custom.lua", "config.json",
                                  "input.lua", "model.json",         "input.yaml"};
    char path[PATH_MAX + 64];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
        unlink(path);
    }
    for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, wrappers[i][0]);
        unlink(path);
    }
    for (size_t i = 0; i < sizeof(yaml_fixtures) / sizeof(yaml_fixtures[0]); i++) {
        snprintf(path, sizeof(path), "%s/%s", dir, yaml_fixtures[i]);
        unlink(path);
    }
    rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    const char *m = getenv("REFIT_MODELS"), *d = getenv("REFIT_FUZZ_DATA");
    const char *tmp = getenv("TMPDIR");
    char data[PATH_MAX], from[PATH_MAX + 64];
    snprintf(models, sizeof(models), "%s", m && *m ? m : RF_FUZZ_SRCDIR "/models");
    snprintf(data, sizeof(data), "%s", d && *d ? d : RF_FUZZ_SRCDIR "/t/data");
    /* Absolute, as the inputs run from the fixture directory. */
    char cwd[PATH_MAX], rel[PATH_MAX];
    if (models[0] != '/' && getcwd(cwd, sizeof(cwd))) {
        snprintf(rel, sizeof(rel), "%s", models);
        snprintf(models, sizeof(models), "%.2000s/%.2000s", cwd, rel);
    }
    snprintf(lib, sizeof(lib), "%s/lib/", models);
    lax = getenv("REFIT_FUZZ_LAX") != NULL;
    verbose = getenv("REFIT_FUZZ_VERBOSE") != NULL;
    snprintf(dir, sizeof(dir), "%s/refit-fuzz.XXXXXX", tmp && *tmp == '/' ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        fprintf(stderr, "refit fuzz: %s: %s\n", dir, strerror(errno));
        exit(2);
    }
    atexit(cleanup);
    static const char *fixtures[][2] = {{"good/tiny.lua", "tiny.lua"},
                                        {"good/cluster-custom.lua", "cluster-custom.lua"},
                                        {"hf/qwen3-8b/config.json", "config.json"}};
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        snprintf(from, sizeof(from), "%s/%s", data, fixtures[i][0]);
        if (copy_file(from, fixtures[i][1]) < 0) {
            fprintf(stderr, "refit fuzz: cannot copy %s into %s\n", from, dir);
            exit(2);
        }
    }
    for (size_t i = 0; i < sizeof(yaml_fixtures) / sizeof(yaml_fixtures[0]); i++) {
        snprintf(from, sizeof(from), "%s/yaml/%s", data, yaml_fixtures[i]);
        if (copy_file(from, yaml_fixtures[i]) < 0) {
            fprintf(stderr, "refit fuzz: cannot copy %s into %s\n", from, dir);
            exit(2);
        }
    }
    for (size_t i = 0; i < sizeof(wrappers) / sizeof(wrappers[0]); i++) {
        char to[PATH_MAX + 64];
        snprintf(to, sizeof(to), "%s/%s", dir, wrappers[i][0]);
        FILE *f = fopen(to, "w");
        if (!f || fputs(wrappers[i][1], f) < 0 || fclose(f) != 0) {
            fprintf(stderr, "refit fuzz: cannot write %s\n", to);
            exit(2);
        }
    }
    /* Inputs run from the fixture directory: a path relative to the working directory (a
     * search path) finds the fixtures, never the files of whoever runs the fuzzer. */
    if (chdir(dir) != 0) {
        fprintf(stderr, "refit fuzz: %s: %s\n", dir, strerror(errno));
        exit(2);
    }
    const char *name = strcmp(RF_FUZZ_KIND, "config") == 0 ? "model.json"
                       : strcmp(RF_FUZZ_KIND, "yaml") == 0 ? "input.yaml"
                                                           : "input.lua";
    snprintf(input, sizeof(input), "%s/%s", dir, name);
    return 0;
}

/* A failure's message: one line that names a file (every path here is absolute). */
static void check_message(const struct rf_error *err)
{
    if (verbose)
        fprintf(stderr, "%s\n", err->msg);
    if (!err->msg[0])
        finding("empty error message", "");
    if (strchr(err->msg, '\n'))
        finding("error message of several lines", err->msg);
    /* Every path refit names here is absolute, but for one a config names relative to the
     * working directory (Hydra's file:// search path), which exists from there. */
    char named[PATH_MAX];
    size_t n = strcspn(err->msg, ":");
    snprintf(named, sizeof(named), "%.*s", (int)(n < sizeof(named) ? n : sizeof(named) - 1),
             err->msg);
    if (!lax && err->msg[0] != '/' && access(named, F_OK) != 0)
        finding("error message names no file", err->msg);
    /* A message that starts with the library's own file is a Lua error inside models/lib:
     * a bug, not a message about the input (which may itself quote that path). */
    if (!lax && strncmp(err->msg, lib, strlen(lib)) == 0)
        finding("error raised inside models/lib", err->msg);
}

/* Loads the scenario `name` of the fixture directory (under `strategy`, or as written), then
 * its sides' memory, as `refit plan` does. */
static int load_wrapper(struct rf_lua *L, const char *name, const char *strategy,
                        struct rf_error *err)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    struct rf_scenario_src src = {.path = path, .ref = LUA_NOREF};
    struct rf_scenario sc;
    int rc = rf_lua_load_scenario(L, &src, strategy, &sc, err);
    if (rc == 0)
        rc = rf_scenario_init_sides(&sc, err);
    rf_scenario_release(&sc);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct rf_lua *L = NULL;
    struct rf_error err = {0};
    FILE *f = fopen(input, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "refit fuzz: cannot write %s\n", input);
        exit(2);
    }
    if (rf_lua_open(&L, models, &err) < 0)
        finding("cannot open the Lua state", err.msg);
    rf_lua_set_limits(L, &limits);
#ifdef RF_FUZZ_LIBFUZZER
    rf_lua_set_observer(L, observe);
#endif
    int rc;
    if (strcmp(RF_FUZZ_KIND, "config") == 0) {
        struct rf_model m;
        rc = rf_lua_load_model(L, input, &m, &err);
        rf_model_release(&m);
    } else if (strcmp(RF_FUZZ_KIND, "yaml") == 0 || strcmp(RF_FUZZ_KIND, "framework") == 0) {
        /* Each reading of the input in turn; each failure must be clean. */
        bool yaml = strcmp(RF_FUZZ_KIND, "yaml") == 0;
        rc = load_wrapper(L, yaml ? "verl.lua" : "profile.lua", NULL, &err);
        if (rc < 0)
            check_message(&err);
        memset(&err, 0, sizeof(err));
        rc = load_wrapper(L, yaml ? "nemo-rl.lua" : "profile-p2p.lua", NULL, &err);
    } else if (strcmp(RF_FUZZ_KIND, "cluster") == 0) {
        struct rf_cluster c;
        rc = rf_lua_load_cluster(L, input, &c, &err);
        rf_cluster_release(&c);
    } else {
        /* As planned, then as hybrid: the second load runs the scenario's policy per tensor. */
        struct rf_scenario_src src = {.path = input, .ref = LUA_NOREF};
        struct rf_scenario sc;
        rc = rf_lua_load_scenario(L, &src, NULL, &sc, &err);
        if (rc == 0)
            rc = rf_scenario_init_sides(&sc, &err);
        rf_scenario_release(&sc);
        if (rc == 0) {
            rc = rf_lua_load_scenario(L, &src, "hybrid", &sc, &err);
            rf_scenario_release(&sc);
        }
    }
    if (rc < 0)
        check_message(&err);
    rf_lua_close(L);
    return 0;
}
