/* The plumbing every `refit` command shares: its error lines, option parsing, the models
 * folder, the simulator's options from the environment, and cmd_open's Lua-and-store setup. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "array.h"
#include "cmd.h"
#include "json.h"
#include "plan.h"
#include "scenario.h"
#include "simulate.h"

int cmd_fail(const struct rf_error *err)
{
    /* An answer rather than a fault (a config whose generation runs on the training
     * weights): said on stdout, and the command succeeds. */
    if (err->code == RF_ENOREFIT) {
        printf("%s\n", err->msg);
        return 0;
    }
    fprintf(stderr, "refit: %s\n", err->msg);
    return 1;
}

int cmd_sim_options(struct rf_sim_options *opts)
{
    const char *tol = getenv("REFIT_SIM_TOLERANCE"), *thr = getenv("REFIT_THREADS");
    char *end;
    memset(opts, 0, sizeof(*opts));
    if (tol && *tol) {
        errno = 0;
        double v = strtod(tol, &end);
        /* The range's top keeps every prediction above its bounds (lowered by twice it). */
        if (*end || errno == ERANGE || !(v >= RF_SIM_TOLERANCE_MIN && v <= RF_SIM_TOLERANCE_MAX)) {
            fprintf(stderr, "refit: REFIT_SIM_TOLERANCE=%s: must be a number from %g to %g\n", tol,
                    RF_SIM_TOLERANCE_MIN, RF_SIM_TOLERANCE_MAX);
            return 1;
        }
        opts->tolerance = v;
    }
    /* Three quarters of the machine's memory: what a run may be estimated to need before
     * it is refused (--max-memory overrides it), leaving room for the system and the
     * estimate's own slack. */
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    if (pages > 0 && page > 0)
        opts->max_memory = (int64_t)pages * page / 4 * 3;
    if (thr && *thr) {
        errno = 0;
        long v = strtol(thr, &end, 10);
        if (*end || errno == ERANGE || v < 1 || v > RF_SIM_THREADS_MAX) {
            fprintf(stderr, "refit: REFIT_THREADS=%s: must be an integer from 1 to %d\n", thr,
                    RF_SIM_THREADS_MAX);
            return 1;
        }
        opts->threads = (int)v;
    }
    return 0;
}

int cmd_max_memory(const char *cmd, const char *arg, int64_t *out)
{
    char *end;
    errno = 0;
    double v = strtod(arg, &end);
    double unit = 1e9;
    if (*end == 'M' || *end == 'G' || *end == 'T') {
        unit = *end == 'M' ? 1e6 : *end == 'G' ? 1e9 : 1e12;
        end++;
        if (*end == 'B')
            end++;
    }
    if (end == arg || *end || errno == ERANGE || !(v >= 0) || v * unit > 9e18)
        return cmd_usage_fail(cmd,
                              "--max-memory %s: expected a size in GB (or with M, G or T), 0 "
                              "for no limit",
                              arg);
    *out = (int64_t)(v * unit);
    return 0;
}

int cmd_usage_fail(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fputs("refit: ", stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, " (see refit %s --help)\n", cmd);
    return 2;
}

/* The optimal string alignment distance (Levenshtein plus adjacent transpositions, "smi" for
 * "sim" costs 1) of a and the first bn bytes of b, capped: names are short, typos are near. */
static size_t edit_distance(const char *a, const char *b, size_t bn)
{
    enum { MAX = 64 };
    size_t an = strlen(a);
    if (an >= MAX || bn >= MAX)
        return SIZE_MAX;
    size_t d[MAX + 1][MAX + 1];
    for (size_t i = 0; i <= an; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= bn; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= an; i++)
        for (size_t j = 1; j <= bn; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = d[i - 1][j - 1] + cost;
            if (d[i - 1][j] + 1 < v)
                v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[an][bn];
}

const char *cmd_nearest(const char *word, size_t len, const char *const *names, size_t n)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX;
    for (size_t i = 0; i < n; i++) {
        size_t d = edit_distance(names[i], word, len);
        /* One edit for a short name, two from six letters on: "jsn" is --json's typo, not
         * --run's (two edits of a three-letter name), and "x" no typo of "db". */
        size_t most = strlen(names[i]) < 6 ? 1 : 2;
        if (d <= most && d < strlen(names[i]) && d < best_d) {
            best = names[i];
            best_d = d;
        }
    }
    return best;
}

/* The long option nearest to the unknown "--NAME" (len bytes of it after the dashes). */
static const char *nearest_option(const char *name, size_t len, const struct option *opts)
{
    const char *names[64];
    size_t n = 0;
    for (const struct option *o = opts; o->name && n < 64; o++)
        names[n++] = o->name;
    return cmd_nearest(name, len, names, n);
}

int cmd_getopt(int argc, char **argv, const struct option *opts)
{
    /* getopt's own messages would be printed before ours and call a trailing unknown flag
     * "needs a value"; ":" makes a missing value ':' and an unknown option '?'. The one
     * short option is -h, the --help every command has. */
    opterr = 0;
    int c = getopt_long(argc, argv, ":h", opts, NULL);
    const char *cmd = argv[0];
    if (c == -1)
        return -1;
    if (c == 'h')
        for (const struct option *o = opts; o->name; o++)
            if (strcmp(o->name, "help") == 0)
                return o->val;
    const char *arg = argv[optind - 1];
    int len = (int)strcspn(arg, "=");
    if (c == ':') {
        cmd_usage_fail(cmd, "%.*s needs a value", len, arg);
        return '?';
    }
    if (c == '?') {
        const char *near;
        if (strncmp(arg, "--", 2) == 0 && optopt != 0 && arg[len] == '=')
            cmd_usage_fail(cmd, "%.*s takes no value", len, arg);
        else if (strncmp(arg, "--", 2) != 0 && optopt != 0)
            cmd_usage_fail(cmd, "unknown option -%c", optopt);
        else if (strncmp(arg, "--", 2) == 0 &&
                 (near = nearest_option(arg + 2, (size_t)len - 2, opts)) != NULL)
            cmd_usage_fail(cmd, "unknown option %.*s, did you mean --%s?", len, arg, near);
        else
            cmd_usage_fail(cmd, "unknown option %.*s", len, arg);
        return '?';
    }
    for (const struct option *o = opts; o->name; o++) {
        if (o->val != c || o->has_arg != required_argument)
            continue;
        /* "--db --json" and "--db ''" would name a database "--json" or a temporary one:
         * a value in its own word must not look like an option, and none may be empty. */
        bool own_word = optarg == argv[optind - 1];
        if (*optarg == '\0' || (own_word && strncmp(optarg, "--", 2) == 0 && optarg[2])) {
            cmd_usage_fail(cmd, "--%s needs a value", o->name);
            return '?';
        }
    }
    return c;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int cmd_lua_names(const char *dir, const char *what, char ***names, size_t *n)
{
    size_t cap = 0;
    *names = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "refit: %s: cannot open the %s folder\n", dir, what);
        return 1;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".lua") != 0)
            continue;
        if (RF_GROW(*names, cap, *n + 1, NULL) < 0)
            break;
        if (!((*names)[*n] = strndup(e->d_name, len - 4)))
            break;
        (*n)++;
    }
    /* A list cut short by memory would look complete: fail instead. */
    bool short_list = e != NULL;
    closedir(d);
    if (short_list) {
        fputs("refit: out of memory\n", stderr);
        return 1;
    }
    if (*n > 0)
        qsort(*names, *n, sizeof(**names), cmp_str);
    return 0;
}

void cmd_names_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

static bool is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Where the Lua descriptions live; see usage_main. */
void cmd_models_dir(char *buf, size_t size)
{
    const char *env = getenv("REFIT_MODELS");
    if (env && *env) {
        snprintf(buf, size, "%s", env);
        return;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash) {
            *slash = '\0';
            int w = snprintf(buf, size, "%s/models", exe);
            if (w > 0 && (size_t)w < size && is_dir(buf))
                return;
            /* An installed binary finds its models in <prefix>/share/refit/models, the
             * pkgdatadir of the default layout, wherever the prefix went: `make install
             * prefix=/opt/x` (or a DESTDIR staged copy) after configuring another prefix
             * leaves RF_MODELS_DIR pointing where nothing was installed. */
            w = snprintf(buf, size, "%s/../share/" PACKAGE "/models", exe);
            if (w > 0 && (size_t)w < size && is_dir(buf))
                return;
        }
    }
    /* The installed copy, else the source tree this binary was built from (a build folder
     * of its own, as CI and distcheck use, has no models/ beside the binary). */
    snprintf(buf, size, "%s", RF_MODELS_DIR);
#ifdef RF_SOURCE_MODELS_DIR
    if (!is_dir(buf) && is_dir(RF_SOURCE_MODELS_DIR))
        snprintf(buf, size, "%s", RF_SOURCE_MODELS_DIR);
#endif
}

int lazy_store_get(struct lazy_store *ls, struct rf_error *err)
{
    if (ls->open)
        return 0;
    int rc = rf_store_open(&ls->st, ls->path, RF_STORE_CREATE, err);
    if (rc < 0) {
        rf_store_close(&ls->st);
        return rc;
    }
    ls->open = true;
    return 0;
}

void lazy_store_close(struct lazy_store *ls)
{
    if (ls->open)
        rf_store_close(&ls->st);
    ls->open = false;
}

int cmd_open(struct cmd_env *env, const char *db, unsigned flags)
{
    struct rf_error err = {0};
    memset(env, 0, sizeof(*env));
    env->ls.path = db;
    if ((flags & CMD_OPEN_SIM) && cmd_sim_options(&env->sim) != 0)
        return 1; /* before any file is looked at: nothing to clean up */
    cmd_models_dir(env->models, sizeof(env->models));
    if (rf_lua_open(&env->L, env->models, &err) < 0)
        return cmd_fail(&err);
    /* Where huggingface_hub keeps downloads (its documented order: HF_HUB_CACHE, else
     * $HF_HOME/hub, else ~/.cache/huggingface/hub), so a framework config's model id
     * (Qwen/Qwen2.5-7B) is read from the config.json the framework itself loaded. */
    char hub[PATH_MAX];
    const char *cache = getenv("HF_HUB_CACHE"), *home = getenv("HF_HOME"), *user = getenv("HOME");
    int w = -1;
    if (cache && *cache)
        w = snprintf(hub, sizeof(hub), "%s", cache);
    else if (home && *home)
        w = snprintf(hub, sizeof(hub), "%s/hub", home);
    else if (user && *user)
        w = snprintf(hub, sizeof(hub), "%s/.cache/huggingface/hub", user);
    if (w > 0 && (size_t)w < sizeof(hub) && is_dir(hub))
        rf_lua_set_hf_cache(env->L, hub);
    return 0;
}

void cmd_close(struct cmd_env *env)
{
    lazy_store_close(&env->ls);
    rf_lua_close(env->L);
    env->L = NULL;
}

int cmd_check_label(const char *what, const char *label, struct rf_error *err)
{
    if (label && !rf_utf8_valid(label, strlen(label)))
        return rf_error_set(err, RF_EINVAL, "%s: not valid UTF-8 (a label is stored as text)",
                            what);
    return 0;
}

int cmd_check_strategy(const char *cmd, const char *strategy)
{
    enum rf_strategy parsed;
    /* "p2p" names a framework profile's point-to-point path; the scenario's loader checks
     * that its profile has one and plans it as the profile says (models/lib/scenario.lua). */
    if (!strategy || rf_strategy_parse(strategy, &parsed) == 0 || strcmp(strategy, "p2p") == 0)
        return 0;
    char names[160] = "";
    for (int i = 0; i < RF_STRAT_COUNT; i++)
        snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
                 rf_strategy_name((enum rf_strategy)i));
    snprintf(names + strlen(names), sizeof(names) - strlen(names), ", p2p (under a profile)");
    return cmd_usage_fail(cmd, "--strategy: unknown strategy '%s' (%s)", strategy, names);
}

int cmd_store_mode(const char *cmd, const char *arg, bool *summary)
{
    if (strcmp(arg, "full") != 0 && strcmp(arg, "summary") != 0)
        return cmd_usage_fail(cmd, "--store %s: expected full or summary", arg);
    *summary = strcmp(arg, "summary") == 0;
    return 0;
}
