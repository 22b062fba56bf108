/* Progress on a terminal for long commands: one line redrawn in place (phase, k of n,
 * elapsed, ETA), at most about five times a second, cleared when the work ends. */
#ifndef RF_PROGRESS_H
#define RF_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* Only command files hold one: the library reports through an rf_progress_fn hook in its
 * options (sim/simulate.h), which rf_progress_hook forwards here. */
struct rf_progress {
    FILE *f;
    char prefix[64];
    bool enabled;
    bool drawn;       /* a line is on the terminal and must be cleared */
    char phase[96];   /* the phase being drawn */
    double t0;        /* rf_progress_init: the elapsed time counts from here */
    double phase_t0;  /* the phase's k = 0: its ETA is paced from here */
    double last_draw; /* rate limit */
};

/* Nothing is ever printed when enabled is false (not a terminal, or --json): the commands
 * pass isatty(2) && !json. */
void rf_progress_init(struct rf_progress *p, FILE *f, const char *prefix, bool enabled);
/* k of n steps of phase are done (n 0: a phase without steps). A new phase, or k 0, restarts
 * the ETA's pace; a redraw within 0.2 s of the last is skipped unless the phase changed or
 * k reached n. p may be NULL. */
void rf_progress_step(struct rf_progress *p, int64_t k, int64_t n, const char *phase);
/* Clears the line (before the command prints its own lines, and at the end). */
void rf_progress_clear(struct rf_progress *p);
/* An rf_progress_fn (ctx a struct rf_progress, or NULL). */
void rf_progress_hook(void *ctx, int64_t k, int64_t n, const char *phase);
/* "7s", "3m05s" (to the nearest second): how elapsed times and ETAs are written. */
void rf_progress_duration(double seconds, char *buf, size_t size);

#endif
