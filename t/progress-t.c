/* The terminal's progress line (sim/progress.c): the text of a step (k/N, elapsed, the ETA
 * as elapsed/k*(N-k) against a hand computation), the redraw limit, clearing, and silence
 * when disabled. Times are set back in the struct, so no test sleeps. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "progress.h"

struct sink {
    char *buf;
    size_t len, seen;
    FILE *f;
};

static void sink_open(struct sink *s)
{
    memset(s, 0, sizeof(*s));
    s->f = open_memstream(&s->buf, &s->len);
    assert_non_null(s->f);
}

/* What was written since the last call. */
static const char *sink_new(struct sink *s)
{
    fflush(s->f);
    const char *text = s->buf + s->seen;
    s->seen = s->len;
    return text;
}

static void sink_close(struct sink *s)
{
    fclose(s->f);
    free(s->buf);
}

static void disabled_writes_nothing(void **state)
{
    (void)state;
    struct sink s;
    struct rf_progress p;
    sink_open(&s);
    rf_progress_init(&p, s.f, "refit sim", false);
    rf_progress_step(&p, 0, 5, "plan");
    rf_progress_step(&p, 5, 5, "plan");
    rf_progress_clear(&p);
    rf_progress_step(NULL, 1, 2, "plan"); /* no progress at all: a no-op */
    rf_progress_clear(NULL);
    assert_string_equal(sink_new(&s), "");
    sink_close(&s);
}

static void step_shows_elapsed_and_eta(void **state)
{
    (void)state;
    struct sink s;
    struct rf_progress p;
    sink_open(&s);
    rf_progress_init(&p, s.f, "refit sim", true);
    p.t0 -= 20; /* the command started 20 s ago */
    rf_progress_step(&p, 0, 5, "auto: predicted candidate");
    assert_string_equal(sink_new(&s),
                        "\rrefit sim: auto: predicted candidate 0/5, 20s elapsed\033[K");
    /* 2 of 5 done in the phase's 10 s: 5 s each, 3 to go, ETA 15 s. */
    p.phase_t0 -= 10;
    p.last_draw = -INFINITY;
    rf_progress_step(&p, 2, 5, "auto: predicted candidate");
    assert_string_equal(sink_new(&s),
                        "\rrefit sim: auto: predicted candidate 2/5, 20s elapsed, ETA 15s\033[K");
    /* Within 0.2 s of the last redraw: skipped; the last step always draws, without an ETA. */
    rf_progress_step(&p, 3, 5, "auto: predicted candidate");
    assert_string_equal(sink_new(&s), "");
    rf_progress_step(&p, 5, 5, "auto: predicted candidate");
    assert_string_equal(sink_new(&s),
                        "\rrefit sim: auto: predicted candidate 5/5, 20s elapsed\033[K");
    /* A new phase draws at once, even within the limit; a phase without a count has none. */
    rf_progress_step(&p, 0, 0, "describe");
    assert_string_equal(sink_new(&s), "\rrefit sim: describe, 20s elapsed\033[K");
    rf_progress_clear(&p);
    assert_string_equal(sink_new(&s), "\r\033[K");
    rf_progress_clear(&p); /* nothing drawn since: nothing to clear */
    assert_string_equal(sink_new(&s), "");
    sink_close(&s);
}

/* A phase restarted at k = 0 (auto's next batch of the same kind) paces its ETA anew. */
static void restart_paces_anew(void **state)
{
    (void)state;
    struct sink s;
    struct rf_progress p;
    sink_open(&s);
    rf_progress_init(&p, s.f, "x", true);
    rf_progress_step(&p, 0, 2, "bound");
    p.phase_t0 -= 100;
    rf_progress_step(&p, 0, 4, "bound");
    p.phase_t0 -= 8;
    p.last_draw = -INFINITY;
    sink_new(&s);
    rf_progress_step(&p, 1, 4, "bound"); /* 8 s for 1: 24 s for the other 3 */
    assert_string_equal(sink_new(&s), "\rx: bound 1/4, 0s elapsed, ETA 24s\033[K");
    sink_close(&s);
}

static void durations_read_as_minutes(void **state)
{
    (void)state;
    char b[32];
    rf_progress_duration(7.4, b, sizeof(b));
    assert_string_equal(b, "7s");
    rf_progress_duration(59.6, b, sizeof(b));
    assert_string_equal(b, "1m00s");
    rf_progress_duration(185, b, sizeof(b));
    assert_string_equal(b, "3m05s");
    rf_progress_duration(-1, b, sizeof(b));
    assert_string_equal(b, "0s");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(disabled_writes_nothing),
        cmocka_unit_test(step_shows_elapsed_and_eta),
        cmocka_unit_test(restart_paces_anew),
        cmocka_unit_test(durations_read_as_minutes),
    };
    return cmocka_run_group_tests_name("progress", tests, NULL, NULL);
}
