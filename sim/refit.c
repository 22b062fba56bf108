/* The `refit` command: git-style subcommands over the library. This file holds main and the
 * one table of commands; each command lives in sim/cmd_<name>.c. Only the commands print. */
#include <errno.h>
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
    {"calibrate", "", cmd_calibrate, "fit a cluster's calibration to the measured replays"},
    {"report", "", cmd_report, "write an HTML page of stored runs (tables, gnuplot plots)"},
    {"models", "", cmd_models, "list the known model architectures"},
    {"show", "RUN", cmd_show,
     "a stored run on one screen: scenario, memory, prediction, measurements"},
    {"diff", "RUN RUN", cmd_diff, "what differs between two stored runs' scenarios and figures"},
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
          "`refit <command> --help` describes each command. Models and layouts are read from\n"
          "$REFIT_MODELS, else the models/ folder next to the binary, else " RF_MODELS_DIR ",\n"
          "else the source tree's models/ folder.\n",
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

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("refit %s\n", PACKAGE_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return finish(commands[i].fn(argc - 1, argv + 1));
    fprintf(stderr, "refit: '%s' is not a command; see refit --help\n", argv[1]);
    return 2;
}
