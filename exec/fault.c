/* Fault injection (testing only): parsing REFIT_EXEC_FAULT and the crash or hang itself;
 * the corruption is done by the replay, which owns the bytes. */
#include "fault.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int rf_fault_parse(const char *text, struct rf_fault *f, struct rf_error *err)
{
    char kind[16];
    int n = 0, round = -1;
    memset(f, 0, sizeof(*f));
    f->round = -1;
    if (!text || !*text)
        return 0;
    if (sscanf(text, "%d:%15[a-z]%n", &f->rank, kind, &n) < 2 || f->rank < 0 ||
        (text[n] && (sscanf(text + n, ":%d", &round) != 1 || round < 0)))
        return rf_error_set(err, RF_EINVAL,
                            "REFIT_EXEC_FAULT=%s: expected RANK:KIND[:ROUND], KIND one of crash, "
                            "hang, corrupt",
                            text);
    if (strcmp(kind, "crash") == 0)
        f->kind = RF_FAULT_CRASH;
    else if (strcmp(kind, "hang") == 0)
        f->kind = RF_FAULT_HANG;
    else if (strcmp(kind, "corrupt") == 0)
        f->kind = RF_FAULT_CORRUPT;
    else
        return rf_error_set(err, RF_EINVAL,
                            "REFIT_EXEC_FAULT=%s: unknown kind '%s' (crash, hang or corrupt)", text,
                            kind);
    f->round = round;
    return 0;
}

_Noreturn void rf_fault_fire(const struct rf_fault *f, int rank, int32_t round)
{
    fprintf(stderr, "refit-exec: rank %d: injected fault (REFIT_EXEC_FAULT): %s in round %d\n",
            rank, f->kind == RF_FAULT_CRASH ? "crashing" : "hanging", round);
    fflush(stderr);
    if (f->kind == RF_FAULT_CRASH)
        raise(SIGKILL);
    for (;;)
        pause();
}
