/* refit-exec's command line: its options, the usage text, and their checks. */
#ifndef RF_EXEC_OPTIONS_H
#define RF_EXEC_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>

#include "fault.h"

/* What the command line asked (and REFIT_EXEC_FAULT, testing only). */
struct rf_exec_opts {
    const char *db;
    int64_t run;
    const char *backend;
    int64_t iters, warmup;
    bool check, json, probe;
    int64_t probe_bytes;
    double timeout, db_timeout;
    struct rf_fault fault;
    const char *fault_text;
};

/* Reads argv into o: -1 to go on, else the exit status (0 after --help; usage errors are
 * printed by rank 0 only, as launchers set its rank in the environment). */
int rf_exec_parse(int argc, char **argv, struct rf_exec_opts *o);

#endif
