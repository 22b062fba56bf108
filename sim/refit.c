/* The `refit` command: git-style subcommands over the library. This file holds main and the
 * one table of commands; each command lives in sim/cmd_<name>.c. Only the commands print. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cmd.h"

/* Every command, in the order `refit --help` lists them: its name, the arguments the help
 * shows, the function that runs it and its line in the help. */
static const struct cmd_entry {
    const char *name, *args;
    int (*fn)(int argc, char **argv);
    const char *help;
} commands[] = {
    {"plan", "SCENARIO", cmd_plan, "build the transfer plan of a scenario and store it"},
    {"sim", "SCENARIO", cmd_sim, "plan, simulate on the scenario's cluster, store the prediction"},
    {"run", "STUDY", cmd_run, "run a what-if study script (sweeps, tables), storing every run"},
    {"search", "SCENARIO", cmd_search,
     "rank the inference layouts that fit, simulate and store the best"},
    {"measure", "RUN", cmd_measure, "store a refit step's time read from a framework's log"},
    {"calibrate", "", cmd_calibrate, "fit a cluster's calibration to the measured replays"},
    {"report", "", cmd_report, "write an HTML page of stored runs (tables, gnuplot plots)"},
    {"models", "", cmd_models, "list the known model architectures"},
    {"clusters", "", cmd_clusters, "list the cluster presets with their GPUs, links and HBM"},
    {"show", "RUN", cmd_show,
     "a stored run on one screen: scenario, memory, prediction, measurements"},
    {"diff", "RUN RUN", cmd_diff, "what differs between two stored runs' scenarios and figures"},
    {"export", "TABLE", cmd_export,
     "a table or view of the database as CSV (--csv), optionally per run"},
    {"rm", "RUN...", cmd_rm, "remove stored runs (or --label L) and every row of theirs"},
};

static void usage(FILE *f)
{
    fputs("usage: refit <command> [options]\n\ncommands:\n", f);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        char synopsis[64];
        snprintf(synopsis, sizeof(synopsis), "%s%s%s", commands[i].name,
                 *commands[i].args ? " " : "", commands[i].args);
        fprintf(f, "  %-15s %s\n", synopsis, commands[i].help);
    }
    fputs("\n"
          "`refit help <command>` (or `refit <command> --help`, or -h) describes each command.\n"
          "Models and layouts are read from $REFIT_MODELS, else the models/ folder next to the\n"
          "binary, else ../share/" PACKAGE "/models from the binary (an installed copy), else\n"
          "" RF_MODELS_DIR ", else the source tree's models/ folder.\n",
          f);
}

/* A command that succeeded but whose output did not all reach stdout (a full disk, a closed
 * pipe) has failed: exit 0 would claim a result the user never got. */
static int finish(int rc)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        if (rc == 0)
            fprintf(stderr, "refit: stdout: %s\n", strerror(errno ? errno : EIO));
        return rc ? rc : 1;
    }
    return rc;
}

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct cmd_entry *find_command(const char *name)
{
    for (size_t i = 0; i < N_COMMANDS; i++)
        if (strcmp(name, commands[i].name) == 0)
            return &commands[i];
    return NULL;
}

/* An unknown command, with the nearest name when one is near: exit 2. */
static int unknown_command(const char *name)
{
    const char *names[N_COMMANDS];
    for (size_t i = 0; i < N_COMMANDS; i++)
        names[i] = commands[i].name;
    const char *near = cmd_nearest(name, strlen(name), names, N_COMMANDS);
    if (near)
        fprintf(stderr, "refit: unknown command '%s' (did you mean '%s'?)\n", name, near);
    else
        fprintf(stderr, "refit: unknown command '%s'; see refit --help\n", name);
    return 2;
}

int main(int argc, char **argv)
{
    bool help = argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
                              strcmp(argv[1], "help") == 0);
    /* `refit help CMD` is `refit CMD --help`, so each command's help lives in one place;
     * `refit help help` and `refit help -h` ask about refit itself. */
    bool about_refit = argc >= 3 && (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0 ||
                                     strcmp(argv[2], "help") == 0);
    if (help && argc >= 3 && strcmp(argv[1], "help") == 0 && !about_refit) {
        const struct cmd_entry *c = find_command(argv[2]);
        if (!c)
            return unknown_command(argv[2]);
        if (argc > 3) {
            fprintf(stderr, "refit: help takes one command, got %d; see refit --help\n", argc - 2);
            return 2;
        }
        char *args[] = {argv[2], "--help", NULL};
        return finish(c->fn(2, args));
    }
    if (argc < 2 || help) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : finish(0);
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("refit %s\n", PACKAGE_VERSION);
        return finish(0);
    }
    const struct cmd_entry *c = find_command(argv[1]);
    if (!c)
        return unknown_command(argv[1]);
    return finish(c->fn(argc - 1, argv + 1));
}
