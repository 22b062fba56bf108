/* Error reporting for library code: fallible functions return 0 or a negative RF_E* code
 * and fill a caller-owned struct rf_error; only main() prints. */
#ifndef RF_ERROR_H
#define RF_ERROR_H

enum {
    RF_OK = 0,
    RF_EINVAL = -1, /* bad input: scenario, model, layout, command line */
    RF_ENOMEM = -2,
    RF_EIO = -3,      /* file system */
    RF_EDB = -4,      /* SQLite */
    RF_ELUA = -5,     /* error raised inside a Lua description */
    RF_EBUSY = -6,    /* SQLite: another process holds the lock past our busy timeout */
    RF_ENOTSUP = -7,  /* a strategy the scenario's framework profile does not run */
    RF_ENOREFIT = -8, /* an answer, not a fault: the scenario moves no weights (cmd_fail, exit 0) */
};

/* The start of a Lua error that is such an answer (models/lib/rlconfig.lua NO_REFIT): the
 * sandbox strips it and returns RF_ENOREFIT with the rest as the message. */
#define RF_NO_REFIT_MARK "\037no refit traffic\037"

struct rf_error {
    int code;
    char msg[1024];
};

/* Records the error (printf-style message) and returns code, so callers can write
 * `return rf_error_set(err, RF_EINVAL, "...")`. err may be NULL. An argument may be
 * err->msg itself (wrapping an earlier message): the text is formatted aside first. The
 * message is kept on one line and control bytes are written \xNN (sim/error.c). */
int rf_error_set(struct rf_error *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
