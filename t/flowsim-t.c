/* Flow-level simulator: hand-computed cases, and random cases checked against a brute-force
 * reference that re-runs progressive filling from scratch over single flows at every event
 * (the seed is printed; REFIT_SEED=<n> replays one). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "flowsim.h"

/* ---- A test case: links, flows and barriers, run by the engine or the reference ---- */

#define MAXL 16
#define MAXF 256
#define MAXG 8
#define MAXE 32

struct tflow {
    double bytes, lat, cap;
    int32_t path[MAXL];
    int path_len;
    int32_t group;
};

struct tcase {
    int nl, nf, ng, ne;
    double cap[MAXL];
    struct tflow f[MAXF];
    int32_t edge[MAXE][2]; /* group, prerequisite */
};

struct result {
    double ff[MAXF], gs[MAXG], gf[MAXG], lb[MAXL], lu[MAXL], makespan;
};

static void add_flow(struct tcase *tc, double bytes, double lat, double cap, int32_t group,
                     int path_len, const int32_t *path)
{
    struct tflow *f = &tc->f[tc->nf++];
    *f = (struct tflow){.bytes = bytes, .lat = lat, .cap = cap, .group = group};
    f->path_len = path_len;
    if (path_len > 0)
        memcpy(f->path, path, sizeof(int32_t) * (size_t)path_len);
    if (group + 1 > tc->ng)
        tc->ng = group + 1;
}

static void add_edge(struct tcase *tc, int32_t group, int32_t pre)
{
    tc->edge[tc->ne][0] = group;
    tc->edge[tc->ne][1] = pre;
    tc->ne++;
    if (group + 1 > tc->ng)
        tc->ng = group + 1;
    if (pre + 1 > tc->ng)
        tc->ng = pre + 1;
}

static struct rf_flowsim *engine_load(const struct tcase *tc)
{
    struct rf_flowsim *fs;
    struct rf_error err;
    if (rf_flowsim_new(&fs, (size_t)tc->nl, tc->cap, &err) < 0)
        fail_msg("new: %s", err.msg);
    for (int i = 0; i < tc->nf; i++) {
        const struct tflow *f = &tc->f[i];
        struct rf_flow_spec s = {.bytes = f->bytes,
                                 .latency_s = f->lat,
                                 .rate_cap = f->cap,
                                 .path = f->path,
                                 .path_len = f->path_len,
                                 .group = f->group};
        int rc = rf_flowsim_add(fs, &s, &err);
        if (rc != i)
            fail_msg("add %d: %d %s", i, rc, err.msg);
    }
    for (int e = 0; e < tc->ne; e++)
        if (rf_flowsim_after(fs, tc->edge[e][0], tc->edge[e][1], &err) < 0)
            fail_msg("after: %s", err.msg);
    return fs;
}

static void engine_run(const struct tcase *tc, struct result *r)
{
    struct rf_flowsim *fs = engine_load(tc);
    struct rf_error err;
    if (rf_flowsim_run(fs, &err) < 0)
        fail_msg("run: %s", err.msg);
    for (int i = 0; i < tc->nf; i++)
        r->ff[i] = rf_flowsim_flow_finish(fs, i);
    for (int g = 0; g < tc->ng; g++) {
        r->gs[g] = rf_flowsim_group_start(fs, g);
        r->gf[g] = rf_flowsim_group_finish(fs, g);
    }
    memcpy(r->lb, rf_flowsim_link_bytes(fs), sizeof(double) * (size_t)tc->nl);
    memcpy(r->lu, rf_flowsim_link_busy(fs), sizeof(double) * (size_t)tc->nl);
    r->makespan = rf_flowsim_makespan(fs);
    rf_flowsim_free(fs);
}

/* ---- The brute-force reference ---- */

static bool crosses(const struct tflow *f, int l)
{
    for (int k = 0; k < f->path_len; k++)
        if (f->path[k] == l)
            return true;
    return false;
}

/* Textbook progressive filling over single flows: all unfrozen rates rise together; the
 * lowest link share or cap freezes its flows; repeat from scratch until all are frozen. */
static void ref_maxmin(const struct tcase *tc, const bool *active, double *rate)
{
    bool frozen[MAXF];
    for (int i = 0; i < tc->nf; i++) {
        frozen[i] = !active[i];
        rate[i] = 0;
    }
    for (;;) {
        double lvl = INFINITY, share[MAXL];
        bool any = false;
        for (int l = 0; l < tc->nl; l++) {
            double rem = tc->cap[l];
            int cnt = 0;
            for (int i = 0; i < tc->nf; i++)
                if (active[i] && crosses(&tc->f[i], l)) {
                    if (frozen[i])
                        rem -= rate[i];
                    else
                        cnt++;
                }
            share[l] = cnt ? (rem > 0 ? rem : 0) / cnt : INFINITY;
            if (share[l] < lvl)
                lvl = share[l];
        }
        for (int i = 0; i < tc->nf; i++)
            if (!frozen[i]) {
                any = true;
                if (tc->f[i].cap > 0 && tc->f[i].cap < lvl)
                    lvl = tc->f[i].cap;
            }
        if (!any)
            break;
        assert_true(isfinite(lvl));
        for (int i = 0; i < tc->nf; i++) {
            if (frozen[i])
                continue;
            bool fr = tc->f[i].cap > 0 && tc->f[i].cap == lvl;
            for (int k = 0; k < tc->f[i].path_len && !fr; k++)
                fr = share[tc->f[i].path[k]] == lvl;
            if (fr) {
                frozen[i] = true;
                rate[i] = lvl;
            }
        }
    }
}

static void ref_run(const struct tcase *tc, struct result *r)
{
    enum { WAIT, ACTIVE, DONE } st[MAXF];
    double rem[MAXF], rate[MAXF], ready[MAXG] = {0};
    bool started[MAXG] = {false}, gdone[MAXG] = {false}, active[MAXF];
    int npre[MAXG] = {0};
    double t = 0;

    memset(r, 0, sizeof(*r));
    for (int i = 0; i < tc->nf; i++) {
        st[i] = WAIT;
        rem[i] = tc->f[i].bytes;
    }
    for (int e = 0; e < tc->ne; e++)
        npre[tc->edge[e][0]]++;
    for (int g = 0; g < tc->ng; g++)
        if (npre[g] == 0) {
            started[g] = true;
            r->gs[g] = 0;
        }
    for (;;) {
        bool changed = true;
        while (changed) {
            changed = false;
            for (int i = 0; i < tc->nf; i++) {
                const struct tflow *f = &tc->f[i];
                if (st[i] != WAIT || !started[f->group] || r->gs[f->group] + f->lat > t)
                    continue;
                if (f->bytes == 0 || (f->path_len == 0 && f->cap == 0)) {
                    st[i] = DONE;
                    r->ff[i] = r->gs[f->group] + f->lat;
                } else {
                    st[i] = ACTIVE;
                }
                changed = true;
            }
            for (int g = 0; g < tc->ng; g++) {
                if (!started[g] || gdone[g])
                    continue;
                double fin = r->gs[g];
                bool all = true;
                for (int i = 0; i < tc->nf; i++)
                    if (tc->f[i].group == g) {
                        all = all && st[i] == DONE;
                        if (st[i] == DONE && r->ff[i] > fin)
                            fin = r->ff[i];
                    }
                if (!all)
                    continue;
                gdone[g] = true;
                r->gf[g] = fin;
                changed = true;
                for (int e = 0; e < tc->ne; e++)
                    if (tc->edge[e][1] == g) {
                        int d = tc->edge[e][0];
                        if (fin > ready[d])
                            ready[d] = fin;
                        if (--npre[d] == 0) {
                            started[d] = true;
                            r->gs[d] = ready[d];
                        }
                    }
            }
        }
        for (int i = 0; i < tc->nf; i++)
            active[i] = st[i] == ACTIVE;
        ref_maxmin(tc, active, rate);
        double next = INFINITY;
        for (int i = 0; i < tc->nf; i++) {
            if (st[i] == ACTIVE && t + rem[i] / rate[i] < next)
                next = t + rem[i] / rate[i];
            if (st[i] == WAIT && started[tc->f[i].group] &&
                r->gs[tc->f[i].group] + tc->f[i].lat < next)
                next = r->gs[tc->f[i].group] + tc->f[i].lat;
        }
        if (next == INFINITY)
            break;
        double dt = next - t;
        for (int l = 0; l < tc->nl; l++) {
            bool busy = false;
            for (int i = 0; i < tc->nf; i++)
                if (active[i] && crosses(&tc->f[i], l)) {
                    r->lb[l] += rate[i] * dt;
                    busy = true;
                }
            if (busy)
                r->lu[l] += dt;
        }
        for (int i = 0; i < tc->nf; i++)
            if (st[i] == ACTIVE) {
                bool ends = t + rem[i] / rate[i] <= next;
                rem[i] -= rate[i] * dt;
                if (ends) {
                    st[i] = DONE;
                    r->ff[i] = next;
                }
            }
        t = next;
    }
    for (int g = 0; g < tc->ng; g++)
        assert_true(gdone[g]);
    r->makespan = 0;
    for (int g = 0; g < tc->ng; g++)
        if (r->gf[g] > r->makespan)
            r->makespan = r->gf[g];
}

/* ---- Helpers ---- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double unif(double lo, double hi)
{
    return lo + (hi - lo) * (double)(rnd() >> 11) / 9007199254740992.0;
}

static uint64_t seed(void)
{
    const char *s = getenv("REFIT_SEED");
    uint64_t v = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
    printf("# seed %llu (REFIT_SEED to replay)\n", (unsigned long long)v);
    return v;
}

static bool close_to(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(fabs(a), fabs(b)) + 1e-12;
}

#define assert_close(a, b, rel)                                                                    \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (!close_to(a_, b_, rel))                                                                \
            fail_msg("%s = %.17g, want %.17g", #a, a_, b_);                                        \
    } while (0)

/* A random case: a few links, flows with repeats (to exercise classes), zero bytes, empty
 * paths, caps, latencies, and a random barrier DAG over lower-numbered groups. */
static void random_case(struct tcase *tc, int max_flows, int max_links)
{
    memset(tc, 0, sizeof(*tc));
    tc->nl = 1 + (int)(rnd() % (uint64_t)max_links);
    for (int l = 0; l < tc->nl; l++)
        tc->cap[l] = rnd() % 3 == 0 ? (double)(1 + rnd() % 4) : unif(0.5, 8);
    int ng = 1 + (int)(rnd() % 5);
    for (int g = 1; g < ng; g++)
        for (int k = 0; k < 2; k++)
            if (rnd() % 2 && tc->ne < MAXE)
                add_edge(tc, g, (int32_t)(rnd() % (uint64_t)g));
    int nf = 1 + (int)(rnd() % (uint64_t)max_flows);
    for (int i = 0; i < nf; i++) {
        if (i > 0 && rnd() % 3 == 0) {
            tc->f[tc->nf] = tc->f[rnd() % (uint64_t)tc->nf];
            if (rnd() % 4 == 0)
                tc->f[tc->nf].group = (int32_t)(rnd() % (uint64_t)ng);
            if (tc->f[tc->nf].group + 1 > tc->ng)
                tc->ng = tc->f[tc->nf].group + 1;
            tc->nf++;
            continue;
        }
        int32_t path[MAXL];
        int len = 0;
        int want = rnd() % 10 == 0 ? 0 : 1 + (int)(rnd() % 3);
        for (int l = 0; l < tc->nl && len < want; l++)
            if (rnd() % (uint64_t)tc->nl < (uint64_t)want)
                path[len++] = l;
        /* Shuffle: the engine must not care about path order. */
        for (int k = len - 1; k > 0; k--) {
            int j = (int)(rnd() % (uint64_t)(k + 1));
            int32_t x = path[k];
            path[k] = path[j];
            path[j] = x;
        }
        static const double sizes[] = {0, 1, 2, 3.5, 10};
        double bytes = rnd() % 2 ? sizes[rnd() % 5] : unif(0.1, 20);
        double lat = rnd() % 2 ? 0 : (rnd() % 2 ? 0.25 : unif(0, 2));
        double cap = rnd() % 3 == 0 ? unif(0.3, 4) : 0;
        add_flow(tc, bytes, lat, cap, (int32_t)(rnd() % (uint64_t)ng), len, path);
    }
}

/* Prints a failing case as TAP comments, to be turned into a hand test. */
static void dump_case(const struct tcase *tc)
{
    printf("# links:");
    for (int l = 0; l < tc->nl; l++)
        printf(" %.17g", tc->cap[l]);
    printf("\n");
    for (int e = 0; e < tc->ne; e++)
        printf("# group %d after %d\n", (int)tc->edge[e][0], (int)tc->edge[e][1]);
    for (int i = 0; i < tc->nf; i++) {
        const struct tflow *f = &tc->f[i];
        printf("# flow %d: group %d bytes %.17g latency %.17g cap %.17g path", i, (int)f->group,
               f->bytes, f->lat, f->cap);
        for (int k = 0; k < f->path_len; k++)
            printf(" %d", (int)f->path[k]);
        printf("\n");
    }
}

static void check_against_reference(const struct tcase *tc, int iter)
{
    struct result a, b;
    engine_run(tc, &a);
    ref_run(tc, &b);
    bool ok = close_to(a.makespan, b.makespan, 1e-9);
    for (int i = 0; i < tc->nf; i++)
        ok = ok && close_to(a.ff[i], b.ff[i], 1e-9);
    for (int l = 0; l < tc->nl; l++)
        ok = ok && close_to(a.lb[l], b.lb[l], 1e-9) && close_to(a.lu[l], b.lu[l], 1e-9);
    if (!ok)
        dump_case(tc);
    for (int i = 0; i < tc->nf; i++)
        if (!close_to(a.ff[i], b.ff[i], 1e-9))
            fail_msg("iteration %d: flow %d finishes at %.17g, reference %.17g", iter, i, a.ff[i],
                     b.ff[i]);
    for (int g = 0; g < tc->ng; g++)
        if (!close_to(a.gs[g], b.gs[g], 1e-9) || !close_to(a.gf[g], b.gf[g], 1e-9))
            fail_msg("iteration %d: group %d runs %.17g..%.17g, reference %.17g..%.17g", iter, g,
                     a.gs[g], a.gf[g], b.gs[g], b.gf[g]);
    for (int l = 0; l < tc->nl; l++)
        if (!close_to(a.lb[l], b.lb[l], 1e-9) || !close_to(a.lu[l], b.lu[l], 1e-9))
            fail_msg("iteration %d: link %d carried %.17g in %.17g s, reference %.17g in %.17g",
                     iter, l, a.lb[l], a.lu[l], b.lb[l], b.lu[l]);
    assert_close(a.makespan, b.makespan, 1e-9);
}

/* ---- Hand-computed cases ---- */

static void one_flow_takes_latency_plus_bytes_over_capacity(void **state)
{
    (void)state;
    struct tcase tc = {.nl = 1, .cap = {100}};
    add_flow(&tc, 1000, 0.5, 0, 0, 1, (int32_t[]){0});
    struct result r;
    engine_run(&tc, &r);
    assert_true(r.ff[0] == 10.5);
    assert_true(r.gf[0] == 10.5);
    assert_true(r.makespan == 10.5);
    assert_true(r.lb[0] == 1000);
    assert_true(r.lu[0] == 10);
}

static void two_flows_share_a_link_then_the_survivor_speeds_up(void **state)
{
    (void)state;
    /* 5 B/s each until A's 10 B are through at t=2; B then has 20 B left at 10 B/s. */
    struct tcase tc = {.nl = 1, .cap = {10}};
    add_flow(&tc, 10, 0, 0, 0, 1, (int32_t[]){0});
    add_flow(&tc, 30, 0, 0, 0, 1, (int32_t[]){0});
    struct result r;
    engine_run(&tc, &r);
    assert_close(r.ff[0], 2, 1e-15);
    assert_close(r.ff[1], 4, 1e-15);
    assert_close(r.lb[0], 40, 1e-15);
    assert_close(r.lu[0], 4, 1e-15);
}

static void max_min_with_two_bottlenecks(void **state)
{
    (void)state;
    /* Links 0 (10 B/s), 1 (6 B/s), 2 (8 B/s). f0 crosses 0 and 1, f1 crosses 0, f2 crosses 1,
     * f3 crosses 1 and 2, f4 crosses 2. Link 1 is the first bottleneck: 6/3 = 2 for f0, f2,
     * f3. Then link 0 leaves 10 - 2 = 8 to f1 and link 2 leaves 8 - 2 = 6 to f4. With bytes
     * equal to those rates every flow finishes at t=1, which is only true of those rates. */
    struct tcase tc = {.nl = 3, .cap = {10, 6, 8}};
    add_flow(&tc, 2, 0, 0, 0, 2, (int32_t[]){0, 1});
    add_flow(&tc, 8, 0, 0, 0, 1, (int32_t[]){0});
    add_flow(&tc, 2, 0, 0, 0, 1, (int32_t[]){1});
    add_flow(&tc, 2, 0, 0, 0, 2, (int32_t[]){2, 1});
    add_flow(&tc, 6, 0, 0, 0, 1, (int32_t[]){2});
    struct result r;
    engine_run(&tc, &r);
    for (int i = 0; i < 5; i++)
        assert_close(r.ff[i], 1, 1e-14);
    for (int l = 0; l < 3; l++) {
        assert_close(r.lb[l], tc.cap[l], 1e-14);
        assert_close(r.lu[l], 1, 1e-14);
    }
    /* Double f1's bytes: after t=1 it is alone on link 0 at 10 B/s, so 8 B more take 0.8 s. */
    tc.f[1].bytes = 16;
    engine_run(&tc, &r);
    assert_close(r.ff[1], 1.8, 1e-14);
    assert_close(r.ff[4], 1, 1e-14);
}

static void rate_cap_binds(void **state)
{
    (void)state;
    /* The capped flow gets 2 B/s, the other the remaining 8 of the link's 10. A flow on no
     * link moves at its cap alone. */
    struct tcase tc = {.nl = 1, .cap = {10}};
    add_flow(&tc, 4, 0, 2, 0, 1, (int32_t[]){0});
    add_flow(&tc, 16, 0, 0, 0, 1, (int32_t[]){0});
    add_flow(&tc, 9, 0.5, 3, 0, 0, NULL);
    add_flow(&tc, 9, 0.5, 0, 0, 0, NULL);
    struct result r;
    engine_run(&tc, &r);
    assert_close(r.ff[0], 2, 1e-15);
    assert_close(r.ff[1], 2, 1e-15);
    assert_close(r.ff[2], 3.5, 1e-15);
    assert_close(r.ff[3], 0.5, 1e-15);
    /* A cap above the fair share does not bind: 5 B/s each. */
    tc.f[0].cap = 7;
    tc.f[0].bytes = 10;
    tc.f[1].bytes = 10;
    engine_run(&tc, &r);
    assert_close(r.ff[0], 2, 1e-15);
    assert_close(r.ff[1], 2, 1e-15);
}

static void zero_bytes_finish_at_release_plus_latency(void **state)
{
    (void)state;
    struct tcase tc = {.nl = 1, .cap = {10}};
    add_flow(&tc, 0, 0.75, 0, 0, 1, (int32_t[]){0});
    add_flow(&tc, 0, 0, 0, 0, 0, NULL);
    struct result r;
    engine_run(&tc, &r);
    assert_true(r.ff[0] == 0.75);
    assert_true(r.ff[1] == 0);
    assert_true(r.lb[0] == 0 && r.lu[0] == 0);
}

static void group_starts_when_its_prerequisite_finishes(void **state)
{
    (void)state;
    struct tcase tc = {.nl = 1, .cap = {10}};
    add_flow(&tc, 10, 0, 0, 0, 1, (int32_t[]){0});   /* group 0: done at 1 */
    add_flow(&tc, 20, 0.5, 0, 1, 1, (int32_t[]){0}); /* group 1: 1 + 0.5 + 2 */
    add_edge(&tc, 1, 0);
    struct result r;
    engine_run(&tc, &r);
    assert_close(r.gf[0], 1, 1e-15);
    assert_close(r.gs[1], 1, 1e-15);
    assert_close(r.ff[1], 3.5, 1e-15);
    assert_close(r.gf[1], 3.5, 1e-15);
    assert_close(r.makespan, 3.5, 1e-15);
}

static void chain_of_groups_adds_up(void **state)
{
    (void)state;
    /* Groups 0..5 in a chain, each one flow of 1.25 s (0.25 latency + 10 B at 10 B/s), except
     * group 3, which is empty and so finishes as it starts. Group 6 waits for groups 2 and 5
     * (a diamond): it starts at the later one. */
    struct tcase tc = {.nl = 1, .cap = {10}};
    for (int g = 0; g < 6; g++) {
        if (g != 3)
            add_flow(&tc, 10, 0.25, 0, g, 1, (int32_t[]){0});
        if (g > 0)
            add_edge(&tc, g, g - 1);
    }
    add_edge(&tc, 6, 2);
    add_edge(&tc, 6, 5);
    struct result r;
    engine_run(&tc, &r);
    double want[6] = {1.25, 2.5, 3.75, 3.75, 5, 6.25};
    for (int g = 0; g < 6; g++) {
        assert_close(r.gf[g], want[g], 1e-14);
        assert_close(r.gs[g], g ? want[g - 1] : 0, 1e-14);
    }
    assert_close(r.gs[3], r.gf[3], 1e-15);
    assert_close(r.gs[6], 6.25, 1e-14);
    assert_close(r.gf[6], 6.25, 1e-14);
    assert_close(r.makespan, 6.25, 1e-14);
}

static void busy_time_excludes_idle_gaps(void **state)
{
    (void)state;
    /* The link carries group 0 during [0, 1], is idle during group 1's latency [1, 2], and
     * carries group 1 during [2, 3]. */
    struct tcase tc = {.nl = 2, .cap = {10, 10}};
    add_flow(&tc, 10, 0, 0, 0, 1, (int32_t[]){0});
    add_flow(&tc, 10, 1, 0, 1, 1, (int32_t[]){0});
    add_edge(&tc, 1, 0);
    struct result r;
    engine_run(&tc, &r);
    assert_close(r.lu[0], 2, 1e-15);
    assert_close(r.lu[1], 0, 1e-15);
    assert_close(r.makespan, 3, 1e-15);
}

static void cycle_is_refused(void **state)
{
    (void)state;
    struct tcase tc = {.nl = 1, .cap = {10}};
    add_flow(&tc, 10, 0, 0, 0, 1, (int32_t[]){0});
    add_edge(&tc, 0, 2);
    add_edge(&tc, 1, 0);
    add_edge(&tc, 2, 1);
    struct rf_flowsim *fs = engine_load(&tc);
    struct rf_error err = {0};
    assert_int_equal(rf_flowsim_run(fs, &err), RF_EINVAL);
    assert_int_equal(err.code, RF_EINVAL);
    assert_non_null(strstr(err.msg, "cycle"));
    assert_true(isnan(rf_flowsim_makespan(fs)));
    rf_flowsim_free(fs);

    struct tcase self = {.nl = 1, .cap = {10}};
    add_edge(&self, 0, 0);
    fs = engine_load(&self);
    assert_int_equal(rf_flowsim_run(fs, &err), RF_EINVAL);
    rf_flowsim_free(fs);
}

static void bad_input_is_refused(void **state)
{
    (void)state;
    struct rf_flowsim *fs;
    struct rf_error err;
    assert_int_equal(rf_flowsim_new(&fs, 2, (double[]){1, 0}, &err), RF_EINVAL);
    assert_null(fs);
    assert_int_equal(rf_flowsim_new(&fs, 2, (double[]){1, 2}, &err), 0);
    struct rf_flow_spec s = {.bytes = 1, .path = (int32_t[]){0, 2}, .path_len = 2};
    assert_int_equal(rf_flowsim_add(fs, &s, &err), RF_EINVAL); /* link out of range */
    s.path = (int32_t[]){1, 1};
    assert_int_equal(rf_flowsim_add(fs, &s, &err), RF_EINVAL); /* link twice */
    s.path = (int32_t[]){1, 0};
    s.bytes = -1;
    assert_int_equal(rf_flowsim_add(fs, &s, &err), RF_EINVAL);
    s.bytes = 1;
    s.group = -1;
    assert_int_equal(rf_flowsim_add(fs, &s, &err), RF_EINVAL);
    s.group = 0;
    assert_int_equal(rf_flowsim_add(fs, &s, &err), 0);
    assert_int_equal(rf_flowsim_after(fs, 1, -1, &err), RF_EINVAL);
    assert_true(isnan(rf_flowsim_flow_finish(fs, 0))); /* not run yet */
    assert_int_equal(rf_flowsim_run(fs, &err), 0);
    assert_close(rf_flowsim_flow_finish(fs, 0), 1, 1e-15);
    assert_true(isnan(rf_flowsim_flow_finish(fs, 1)));
    rf_flowsim_free(fs);
    rf_flowsim_free(NULL);
}

static void one_path_is_one_rate_class_whose_members_finish_in_turn(void **state)
{
    (void)state;
    /* Three flows on one link, of different bytes, latencies and groups: one rate class.
     * A alone moves 0.5 B by t = 0.5, then A and B share 0.5 B/s each: B's 1 B are
     * through at 2.5, A's last 0.5 B alone at 3. Group 1 (C) starts at 3, the class
     * active again, and C takes 1 s. */
    struct tcase tc = {.nl = 1, .cap = {1}};
    add_flow(&tc, 2, 0, 0, 0, 1, (int32_t[]){0});
    add_flow(&tc, 1, 0.5, 0, 0, 1, (int32_t[]){0});
    add_flow(&tc, 1, 0, 0, 1, 1, (int32_t[]){0});
    add_edge(&tc, 1, 0);
    struct rf_flowsim *fs = engine_load(&tc);
    struct rf_error err;
    if (rf_flowsim_run(fs, &err) < 0)
        fail_msg("run: %s", err.msg);
    struct rf_flowsim_stats st;
    rf_flowsim_stats(fs, &st);
    assert_int_equal(st.classes, 1);
    assert_close(rf_flowsim_flow_finish(fs, 0), 3, 1e-15);
    assert_close(rf_flowsim_flow_finish(fs, 1), 2.5, 1e-15);
    assert_close(rf_flowsim_flow_finish(fs, 2), 4, 1e-15);
    assert_close(rf_flowsim_group_finish(fs, 0), 3, 1e-15);
    assert_close(rf_flowsim_link_busy(fs)[0], 4, 1e-15);
    rf_flowsim_free(fs);
}

/* ---- Properties on random cases ---- */

static void a_run_once_frees_its_flows_and_answers_the_same(void **state)
{
    (void)state;
    /* rf_flowsim_set_once: the same answer, bit for bit, with the specs freed after the
     * build; a flow added or a second run afterwards is refused. */
    rng_state = seed();
    for (int iter = 0; iter < 50; iter++) {
        struct tcase tc;
        struct rf_error err;
        random_case(&tc, 60, 8);
        struct rf_flowsim *a = engine_load(&tc), *b = engine_load(&tc);
        rf_flowsim_set_once(b);
        assert_int_equal(rf_flowsim_run(a, &err), 0);
        assert_int_equal(rf_flowsim_run(b, &err), 0);
        assert_true(rf_flowsim_makespan(a) == rf_flowsim_makespan(b));
        for (int i = 0; i < tc.nf; i++)
            assert_true(rf_flowsim_flow_finish(a, i) == rf_flowsim_flow_finish(b, i));
        const struct tflow *f = &tc.f[0];
        struct rf_flow_spec s = {.bytes = f->bytes,
                                 .latency_s = f->lat,
                                 .rate_cap = f->cap,
                                 .path = f->path,
                                 .path_len = f->path_len,
                                 .group = f->group};
        assert_int_equal(rf_flowsim_add(b, &s, &err), RF_EINVAL);
        assert_non_null(strstr(err.msg, "rf_flowsim_set_once"));
        assert_int_equal(rf_flowsim_run(b, &err), RF_EINVAL);
        assert_true(rf_flowsim_makespan(b) == rf_flowsim_makespan(a));
        rf_flowsim_free(a);
        rf_flowsim_free(b);
    }
}

static void a_second_run_starts_afresh(void **state)
{
    (void)state;
    /* Running again gives the same answer bit for bit; flows added after a run count in
     * the next one and void the old results until then. */
    rng_state = seed();
    for (int iter = 0; iter < 50; iter++) {
        struct tcase tc;
        struct rf_error err;
        random_case(&tc, 60, 8);
        struct rf_flowsim *fs = engine_load(&tc);
        assert_int_equal(rf_flowsim_run(fs, &err), 0);
        double first = rf_flowsim_makespan(fs), f0 = rf_flowsim_flow_finish(fs, 0);
        assert_int_equal(rf_flowsim_run(fs, &err), 0);
        assert_true(rf_flowsim_makespan(fs) == first);
        assert_true(rf_flowsim_flow_finish(fs, 0) == f0);

        const struct tflow *f = &tc.f[0];
        struct rf_flow_spec s = {.bytes = f->bytes + 1,
                                 .latency_s = f->lat,
                                 .rate_cap = f->cap,
                                 .path = f->path,
                                 .path_len = f->path_len,
                                 .group = f->group};
        assert_int_equal(rf_flowsim_add(fs, &s, &err), tc.nf);
        assert_true(isnan(rf_flowsim_makespan(fs)));
        assert_int_equal(rf_flowsim_run(fs, &err), 0);
        tc.f[tc.nf++] = (struct tflow){.bytes = s.bytes,
                                       .lat = s.latency_s,
                                       .cap = s.rate_cap,
                                       .path_len = s.path_len,
                                       .group = s.group};
        memcpy(tc.f[tc.nf - 1].path, f->path, sizeof(f->path));
        struct result r;
        ref_run(&tc, &r);
        assert_close(rf_flowsim_makespan(fs), r.makespan, 1e-9);
        assert_close(rf_flowsim_flow_finish(fs, tc.nf - 1), r.ff[tc.nf - 1], 1e-9);
        rf_flowsim_free(fs);
    }
}

static void random_cases_agree_with_brute_force(void **state)
{
    (void)state;
    rng_state = seed();
    for (int iter = 0; iter < 400; iter++) {
        struct tcase tc;
        random_case(&tc, iter < 300 ? 24 : 120, iter < 300 ? 6 : 12);
        check_against_reference(&tc, iter);
    }
}

static void identical_flows_behave_as_separate_flows(void **state)
{
    (void)state;
    /* Many copies of few flows collapse into a handful of classes; the reference runs the
     * copies one by one. */
    rng_state = seed();
    for (int iter = 0; iter < 40; iter++) {
        struct tcase tc;
        random_case(&tc, 6, 5);
        int base = tc.nf;
        while (tc.nf < 60)
            tc.f[tc.nf++] = tc.f[rnd() % (uint64_t)base];
        check_against_reference(&tc, iter);
    }
}

static void flows_on_few_paths_agree_with_brute_force(void **state)
{
    (void)state;
    /* Many flows on the paths and caps of a few, with their own bytes, latencies and
     * groups: rate classes of many members that join, finish and come back. */
    rng_state = seed();
    for (int iter = 0; iter < 100; iter++) {
        struct tcase tc;
        random_case(&tc, 4, 6);
        int base = tc.nf;
        while (tc.nf < 48) {
            struct tflow f = tc.f[rnd() % (uint64_t)base];
            f.bytes = rnd() % 2 ? (double)(rnd() % 5) : unif(0.1, 20);
            f.lat = rnd() % 2 ? 0 : unif(0, 2);
            f.group = (int32_t)(rnd() % (uint64_t)(tc.ng > 0 ? tc.ng : 1));
            tc.f[tc.nf++] = f;
        }
        check_against_reference(&tc, iter);
    }
}

static void link_bytes_are_bytes_times_path_length(void **state)
{
    (void)state;
    rng_state = seed();
    for (int iter = 0; iter < 200; iter++) {
        struct tcase tc;
        struct result r;
        random_case(&tc, 120, 12);
        engine_run(&tc, &r);
        double want = 0, got = 0;
        for (int i = 0; i < tc.nf; i++)
            want += tc.f[i].bytes * tc.f[i].path_len;
        for (int l = 0; l < tc.nl; l++)
            got += r.lb[l];
        if (!close_to(got, want, 1e-12))
            fail_msg("iteration %d: links carried %.17g, flows hold %.17g", iter, got, want);
    }
}

static void makespan_is_never_below_the_busiest_link(void **state)
{
    (void)state;
    rng_state = seed();
    for (int iter = 0; iter < 200; iter++) {
        struct tcase tc;
        struct result r;
        random_case(&tc, 120, 12);
        engine_run(&tc, &r);
        for (int l = 0; l < tc.nl; l++) {
            if (r.makespan < r.lb[l] / tc.cap[l] * (1 - 1e-12))
                fail_msg("iteration %d: makespan %.17g below link %d's %.17g", iter, r.makespan, l,
                         r.lb[l] / tc.cap[l]);
            assert_true(r.lu[l] <= r.makespan * (1 + 1e-12));
            assert_true(r.lu[l] >= r.lb[l] / tc.cap[l] * (1 - 1e-12));
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_flow_takes_latency_plus_bytes_over_capacity),
        cmocka_unit_test(two_flows_share_a_link_then_the_survivor_speeds_up),
        cmocka_unit_test(max_min_with_two_bottlenecks),
        cmocka_unit_test(rate_cap_binds),
        cmocka_unit_test(zero_bytes_finish_at_release_plus_latency),
        cmocka_unit_test(group_starts_when_its_prerequisite_finishes),
        cmocka_unit_test(chain_of_groups_adds_up),
        cmocka_unit_test(busy_time_excludes_idle_gaps),
        cmocka_unit_test(cycle_is_refused),
        cmocka_unit_test(bad_input_is_refused),
        cmocka_unit_test(one_path_is_one_rate_class_whose_members_finish_in_turn),
        cmocka_unit_test(a_second_run_starts_afresh),
        cmocka_unit_test(random_cases_agree_with_brute_force),
        cmocka_unit_test(identical_flows_behave_as_separate_flows),
        cmocka_unit_test(flows_on_few_paths_agree_with_brute_force),
        cmocka_unit_test(link_bytes_are_bytes_times_path_length),
        cmocka_unit_test(a_run_once_frees_its_flows_and_answers_the_same),
        cmocka_unit_test(makespan_is_never_below_the_busiest_link),
    };
    return cmocka_run_group_tests_name("flowsim", tests, NULL, NULL);
}
