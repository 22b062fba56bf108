/* Fault injection, for testing only: REFIT_EXEC_FAULT makes one rank fail on purpose so the
 * tests can prove that a crash, a hang or corrupted bytes end as they should. */
#ifndef RF_FAULT_H
#define RF_FAULT_H

#include <stdint.h>

#include "error.h"

/* Testing only: REFIT_EXEC_FAULT=RANK:KIND[:ROUND] makes rank RANK fail on purpose, so the
 * tests can prove that failures end the job and are stored as failed. */
enum rf_fault_kind {
    RF_FAULT_NONE,
    RF_FAULT_CRASH,   /* the process dies (SIGKILL) at the start of the round */
    RF_FAULT_HANG,    /* the process stops responding at the start of the round */
    RF_FAULT_CORRUPT, /* one byte of what it sends (else of its destination) flips */
};

struct rf_fault {
    enum rf_fault_kind kind;
    int rank;
    int32_t round; /* -1: the middle round */
};

/* Parses REFIT_EXEC_FAULT's value (NULL or empty: no fault). */
int rf_fault_parse(const char *text, struct rf_fault *f, struct rf_error *err);
/* Refuses a fault that cannot fire as asked in this job: a rank beyond the world, a round
 * beyond the run's rounds, corruption on a rank that plays no GPU (text: the variable's
 * value, for the message). */
int rf_fault_check(const struct rf_fault *f, const char *text, int world, int gpus, int32_t rounds,
                   int64_t run, struct rf_error *err);
/* Crashes or hangs this rank now, saying so on stderr first (never returns). */
_Noreturn void rf_fault_fire(const struct rf_fault *f, int rank, int32_t round);

#endif
