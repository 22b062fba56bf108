/* The pieces of the `refit` command: each subcommand is a function taking its own argv
 * (argv[0] is the subcommand), sharing the error printer and the models folder. */
#ifndef RF_CMD_H
#define RF_CMD_H

#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "error.h"
#include "simulate.h"
#include "store.h"

#ifndef RF_MODELS_DIR
#define RF_MODELS_DIR "/usr/local/share/refit/models"
#endif

/* Prints "refit: MESSAGE" on stderr; returns the exit status 1. */
int cmd_fail(const struct rf_error *err);
/* Prints "refit: MESSAGE (see refit CMD --help)" on stderr; returns the exit status 2. */
int cmd_usage_fail(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* getopt_long over a command's argv (argv[0] is the command; long options, and -h for the
 * command's --help) that says itself what is wrong, in one line: "unknown option --jsn, did
 * you mean --json?" (the nearest long option, when one is near), "--db needs a value" (also
 * for an empty value or one that is the next option), "--json takes no value". Returns the
 * option's val, -1 after the last option, or '?' when it printed an error (exit 2). */
int cmd_getopt(int argc, char **argv, const struct option *opts);
/* --max-memory SIZE into *out (bytes): 0, or 2 after the usage error. */
int cmd_max_memory(const char *cmd, const char *arg, int64_t *out);
/* The name of names[0..n) nearest to the first len bytes of word (one edit for a name
 * shorter than six letters, else two; a swap of neighbours counts one), or NULL: what "did
 * you mean" suggests for an unknown command or option. */
const char *cmd_nearest(const char *word, size_t len, const char *const *names, size_t n);
/* The folder of Lua descriptions: $REFIT_MODELS, else next to the binary, else installed. */
void cmd_models_dir(char *buf, size_t size);

/* The names of DIR's *.lua files without ".lua", sorted (what: the folder's kind in the error,
 * "models"): 0, or 1 after printing why (a folder that cannot be opened, or out of memory:
 * a list cut short would look complete). Free with cmd_names_free, also after a failure. */
int cmd_lua_names(const char *dir, const char *what, char ***names, size_t *n);
void cmd_names_free(char **names, size_t n);

/* The simulator's options from the environment (REFIT_SIM_TOLERANCE, REFIT_THREADS; unset
 * or empty: the defaults), range-checked: 0, or 1 after printing why on stderr. */
int cmd_sim_options(struct rf_sim_options *opts);

/* The database of a command, opened (and created) when the first run is stored: a command
 * that fails before that never creates a file, and no command ever removes one, since
 * another process may be writing to a database this one found absent. */
struct lazy_store {
    const char *path;
    struct rf_store st;
    bool open;
};
/* Opens the database if it is not open yet (0, or a negative RF_E* code in err). */
int lazy_store_get(struct lazy_store *ls, struct rf_error *err);
void lazy_store_close(struct lazy_store *ls);

/* A label is stored as SQLite TEXT and shown in reports and JSON: it must be UTF-8 (0, or
 * RF_EINVAL in err naming what, the option or field). */
int cmd_check_label(const char *what, const char *label, struct rf_error *err);
/* A --strategy value (NULL: none given), checked before anything is loaded: 0, or the exit
 * status 2 after saying which names exist. */
int cmd_check_strategy(const char *cmd, const char *strategy);

/* A --store value (full or summary) into *summary: 0, or the exit status 2 after saying
 * what is accepted. */
int cmd_store_mode(const char *cmd, const char *arg, bool *summary);

/* What the commands that read Lua share: the models folder, the Lua state over it, the
 * simulator's options and the database opened by the first run stored. */
struct rf_lua;
struct cmd_env {
    char models[PATH_MAX];
    struct rf_lua *L;
    struct rf_sim_options sim;
    struct lazy_store ls; /* path NULL: the command opens its database itself */
};
/* cmd_open's flags: CMD_OPEN_SIM reads the simulator's options (cmd_sim_options) first. */
enum { CMD_OPEN_SIM = 1 };
/* Fills env (ls.path = db, not opened yet) and opens Lua on the models folder: 0, or the
 * exit status 1 after printing why. cmd_close(env) is safe after either. */
int cmd_open(struct cmd_env *env, const char *db, unsigned flags);
void cmd_close(struct cmd_env *env);

/* What a study's runs share (refit run), and refit search's full simulations. */
struct study_ctx {
    struct rf_lua *L;
    struct lazy_store *ls;
    const struct rf_sim_options *sim;
    bool tty;                     /* progress on stderr */
    struct rf_progress *progress; /* with tty: each run's phases as it runs (sim/progress.h) */
    const char *progress_what;    /* the line's words before the run's number */
    bool summary; /* --store summary: every run stored without its plan rows (sim/store.h) */
    int runs;
    /* refit run's study (run.study_id, its refit.table output); NULL for refit search. */
    struct rf_store_study *study;
    /* With log_runs: the id of every run stored, in order (a distributed study's worker
     * says which runs each point stored; sim/cmd_run_dist.c). */
    bool log_runs;
    int64_t *log;
    size_t n_log, cap_log;
};
/* Frees the tables a study kept for its first stored run, once that run stored them. */
void study_pending_release(struct rf_store_study *study);
/* A study's refit.table (ctx a struct study_ctx): stored with the study (sim/cmd_run.c). */
int study_table_one(void *ctx, const struct rf_study_table *t, struct rf_error *err);
/* refit run --jobs N, and refit run launched by mpirun or srun (sim/cmd_run_dist.c): the
 * study's points computed by jobs processes, then replayed here; ranks: the launcher's
 * (size 1: --jobs). The exit status. */
int cmd_run_dist(struct cmd_env *env, struct study_ctx *ctx, const char *path, int jobs);
/* When an MPI launcher started this process as one of several ranks: sets *launched and
 * runs the study across them (the exit status); else 0 with *launched false. */
int cmd_run_launched(struct cmd_env *env, struct study_ctx *ctx, const char *path, bool *launched);
struct rf_progress;
struct rf_scenario_src;
struct rf_study_result;
/* One refit.plan / refit.sim (ctx a struct study_ctx): plan, simulate when asked, store in
 * one transaction, fill out (sim/cmd_run.c). */
int study_run_one(void *ctx, const struct rf_scenario_src *src, const char *strategy,
                  const char *label, bool simulate, struct rf_study_result *out,
                  struct rf_error *err);

struct rf_search_request;
struct rf_search_result;
/* A study's refit.search (ctx a struct study_ctx), with progress when ctx->tty
 * (sim/cmd_search.c). */
int cmd_search_study(void *ctx, const struct rf_scenario_src *src,
                     const struct rf_search_request *req, struct rf_search_result *out,
                     struct rf_error *err);

int cmd_plan(int argc, char **argv);      /* sim/cmd_plan.c */
int cmd_sim(int argc, char **argv);       /* sim/cmd_sim.c */
int cmd_run(int argc, char **argv);       /* sim/cmd_run.c */
int cmd_calibrate(int argc, char **argv); /* sim/cmd_calibrate.c */
int cmd_measure(int argc, char **argv);   /* sim/cmd_measure.c */
int cmd_report(int argc, char **argv);    /* sim/cmd_report.c */
int cmd_models(int argc, char **argv);    /* sim/cmd_models.c */
int cmd_clusters(int argc, char **argv);  /* sim/cmd_clusters.c */
int cmd_show(int argc, char **argv);      /* sim/cmd_show.c */
int cmd_diff(int argc, char **argv);      /* sim/cmd_show.c */
int cmd_search(int argc, char **argv);    /* sim/cmd_search.c */
int cmd_export(int argc, char **argv);    /* sim/cmd_export.c */
int cmd_rm(int argc, char **argv);        /* sim/cmd_rm.c */

/* A listing command (sim/cmd_list.c): the descriptions of a folder, one row each. */
struct cmd_list {
    const char *command, *usage;
    const char *what;   /* what the folder holds, for cmd_lua_names' errors */
    const char *subdir; /* the folder within the models folder; NULL: the models folder */
    const char *header; /* the table's header line */
    /* Loads the description at path and prints its row into tf, or (tf NULL) sets *json to
     * its object (NULL when it cannot be built); a failure fills err. */
    int (*row)(struct cmd_env *env, const char *path, FILE *tf, json_t **json,
               struct rf_error *err);
};
int cmd_list_run(const struct cmd_list *l, int argc, char **argv);

#endif
