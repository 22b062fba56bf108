/* Fault injection (testing only): parsing REFIT_EXEC_FAULT and the crash or hang itself;
 * the corruption is done by the replay, which owns the bytes. */
#include "fault.h"

#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

/* A decimal number >= 0 that fits an int, ending at *end; false for anything else. */
static bool parse_index(const char *s, const char **end, int *out)
{
    long v = 0;
    if (*s < '0' || *s > '9')
        return false;
    for (; *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (*s - '0');
        if (v > 1000000000L)
            return false;
    }
    *out = (int)v;
    *end = s;
    return true;
}

int rf_fault_parse(const char *text, struct rf_fault *f, struct rf_error *err)
{
    static const char *const kinds[] = {"crash", "hang", "corrupt"};
    const char *p = text, *colon;
    size_t len;
    memset(f, 0, sizeof(*f));
    f->round = -1;
    if (!text || !*text)
        return 0;
    /* RANK:KIND[:ROUND], nothing before, between or after: a typo must not silently
     * inject nothing (or something else). */
    if (!parse_index(p, &p, &f->rank) || *p++ != ':')
        goto bad;
    colon = strchr(p, ':');
    len = colon ? (size_t)(colon - p) : strlen(p);
    for (int k = 0; k < 3; k++)
        if (strlen(kinds[k]) == len && strncmp(p, kinds[k], len) == 0)
            f->kind = (enum rf_fault_kind)(k + 1);
    if (!f->kind) {
        for (size_t i = 0; i < len; i++)
            if (p[i] < 'a' || p[i] > 'z')
                goto bad;
        if (len == 0)
            goto bad;
        return rf_error_set(err, RF_EINVAL,
                            "REFIT_EXEC_FAULT=%s: unknown kind '%.*s' (crash, hang or corrupt)",
                            text, (int)len, p);
    }
    if (colon && (!parse_index(colon + 1, &p, &f->round) || *p))
        goto bad;
    return 0;
bad:
    memset(f, 0, sizeof(*f));
    return rf_error_set(err, RF_EINVAL,
                        "REFIT_EXEC_FAULT=%s: expected RANK:KIND[:ROUND], KIND one of crash, "
                        "hang, corrupt",
                        text);
}

int rf_fault_check(const struct rf_fault *f, const char *text, int world, int gpus, int32_t rounds,
                   int64_t run, struct rf_error *err)
{
    if (!f->kind)
        return 0;
    if (f->rank >= world)
        return rf_error_set(
            err, RF_EINVAL,
            "REFIT_EXEC_FAULT=%s: rank %d is not in this world of %d ranks (0 to %d)", text,
            f->rank, world, world - 1);
    if (rounds < 1)
        return rf_error_set(err, RF_EINVAL, "REFIT_EXEC_FAULT=%s: run %lld has no rounds", text,
                            (long long)run);
    if (f->round >= rounds)
        return rf_error_set(
            err, RF_EINVAL, "REFIT_EXEC_FAULT=%s: run %lld has %d round%s (0 to %d), not round %d",
            text, (long long)run, rounds, rounds == 1 ? "" : "s", rounds - 1, f->round);
    if (f->kind == RF_FAULT_CORRUPT && f->rank >= gpus)
        return rf_error_set(err, RF_EINVAL,
                            "REFIT_EXEC_FAULT=%s: rank %d plays no GPU of run %lld (it spans %d): "
                            "it has nothing to corrupt",
                            text, f->rank, (long long)run, gpus);
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
