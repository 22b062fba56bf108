/* Progress on a terminal: one line, redrawn with a carriage return and cleared to its end,
 * so that nothing of it stays once the command prints its results. */
#include "progress.h"

#include <math.h>
#include <string.h>
#include <time.h>

/* Five redraws a second read as live without costing a search of thousands of estimates
 * a write per estimate. */
#define REDRAW_S 0.2

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void rf_progress_init(struct rf_progress *p, FILE *f, const char *prefix, bool enabled)
{
    memset(p, 0, sizeof(*p));
    p->f = f;
    p->enabled = enabled && f;
    snprintf(p->prefix, sizeof(p->prefix), "%s", prefix ? prefix : "refit");
    p->t0 = p->phase_t0 = now();
    p->last_draw = -INFINITY;
}

void rf_progress_duration(double seconds, char *buf, size_t size)
{
    long s = seconds > 0 ? lround(seconds) : 0;
    if (s >= 60)
        snprintf(buf, size, "%ldm%02lds", s / 60, s % 60);
    else
        snprintf(buf, size, "%lds", s);
}

void rf_progress_step(struct rf_progress *p, int64_t k, int64_t n, const char *phase)
{
    if (!p || !p->enabled)
        return;
    double t = now();
    bool new_phase = strncmp(p->phase, phase ? phase : "", sizeof(p->phase) - 1) != 0;
    if (new_phase || k == 0) {
        snprintf(p->phase, sizeof(p->phase), "%s", phase ? phase : "");
        p->phase_t0 = t;
    }
    if (!new_phase && k != n && t - p->last_draw < REDRAW_S)
        return;
    p->last_draw = t;
    char elapsed[32], eta[32] = "";
    rf_progress_duration(t - p->t0, elapsed, sizeof(elapsed));
    /* The ETA assumes the remaining steps take as long as the done ones did on average. */
    if (k > 0 && k < n)
        rf_progress_duration((t - p->phase_t0) / (double)k * (double)(n - k), eta, sizeof(eta));
    if (n > 0)
        fprintf(p->f, "\r%s: %s %lld/%lld, %s elapsed%s%s\033[K", p->prefix, p->phase, (long long)k,
                (long long)n, elapsed, eta[0] ? ", ETA " : "", eta);
    else
        fprintf(p->f, "\r%s: %s, %s elapsed\033[K", p->prefix, p->phase, elapsed);
    fflush(p->f);
    p->drawn = true;
}

void rf_progress_clear(struct rf_progress *p)
{
    if (!p || !p->enabled || !p->drawn)
        return;
    fputs("\r\033[K", p->f);
    fflush(p->f);
    p->drawn = false;
    p->phase[0] = '\0';
}

void rf_progress_hook(void *ctx, int64_t k, int64_t n, const char *phase)
{
    rf_progress_step(ctx, k, n, phase);
}
