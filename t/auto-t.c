/* rf_auto's contract (sim/auto.h): its prediction is never above any named strategy's on the
 * same scenario, candidates with the very same plan are predicted once, and its choice does
 * not depend on the number of threads. Random scenarios from a printed seed (REFIT_SEED=<n>
 * replays one) and a fixture whose duplicate plans are known. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auto.h"
#include "fixtures.h"
#include "random.h"
#include "schedule.h"
#include "simulate.h"

/* One random scenario, as refit sim would plan it: the sides, the cluster with PXN and the
 * flipped copy auto also tries, the relay and schedule options, and hybrid's per-tensor mix. */
struct scenario {
    struct rf_tensor ts[64];
    struct rf_model m;
    struct rf_side tr, in;
    struct rf_cluster c, flipped;
    struct rf_topology topo, alt;
    struct rf_relay relay;
    struct rf_schedule_opts so;
    enum rf_strategy mix[64];
    enum rf_sources sources;
};

static void scenario_draw(struct scenario *s)
{
    static const int64_t chunks[] = {0, 256, 4096};
    struct rf_error err = {0};
    int layers = 1 + (int)(rnd() % 2);
    bool moe = rnd() % 2;
    random_model(&s->m, s->ts, layers, moe);
    s->c = random_cluster();
    s->so = (struct rf_schedule_opts){.staging_bytes = 1 << 16,
                                      .chunk_bytes = pick(chunks, 3),
                                      .streams = 1 + (int32_t)(rnd() % 2)};
    s->c.cal.streams = s->so.streams;
    s->flipped = s->c;
    s->flipped.fabric.pxn = !s->c.fabric.pxn;
    s->relay = (struct rf_relay){
        .ring = rnd() % 2, .fanout = 1 + (int32_t)(rnd() % 3), .depth = (int32_t)(rnd() % 3)};
    s->sources = rnd() % 2 ? RF_SOURCES_LOCAL : RF_SOURCES_BALANCED;
    random_sides(&s->tr, &s->in, layers, moe, s->c.nodes * s->c.gpus_per_node);
    for (size_t i = 0; i < s->m.n_tensors; i++)
        s->mix[i] = (enum rf_strategy)(rnd() % 3); /* broadcast, reshard, hierarchical */
    assert_int_equal(rf_topology_init(&s->topo, &s->c, &err), 0);
    assert_int_equal(rf_topology_init(&s->alt, &s->flipped, &err), 0);
}

static void scenario_release(struct scenario *s)
{
    rf_topology_release(&s->topo);
    rf_topology_release(&s->alt);
    rf_side_release(&s->tr);
    rf_side_release(&s->in);
}

static const struct rf_sim_options sim_opts = {.tolerance = RF_SIM_TOLERANCE_MIN, .threads = 1};

/* The prediction of named strategy st as `refit sim --strategy st` makes it. */
static double predict_named(const struct scenario *s, enum rf_strategy st, int iter)
{
    struct rf_plan_opts po = {.topo = &s->topo, .sources = s->sources, .relay = s->relay};
    struct rf_plan p;
    struct rf_prediction pred;
    struct rf_error err = {0};
    if (rf_plan_build(&p, &s->m, &s->tr, &s->in, st, st == RF_STRAT_HYBRID ? s->mix : NULL, &po,
                      &err) < 0 ||
        rf_schedule(&p, &s->so, &err) < 0 ||
        rf_simulate(&p, &s->tr, &s->in, &s->topo, &sim_opts, &pred, &err) < 0)
        fail_msg("iteration %d: %s: %s", iter, rf_strategy_name(st), err.msg);
    double v = pred.predicted_s;
    rf_prediction_release(&pred);
    rf_plan_release(&p);
    return v;
}

/* auto on the scenario with the given threads; the caller frees *choice. */
static double predict_auto(const struct scenario *s, int threads, struct rf_auto_choice **choice,
                           int iter)
{
    struct rf_auto_input ai = {.model = &s->m,
                               .train = &s->tr,
                               .infer = &s->in,
                               .topo = &s->topo,
                               .staging_bytes = s->so.staging_bytes,
                               .chunk_bytes = s->so.chunk_bytes,
                               .relay = s->relay,
                               .sources = s->sources,
                               .hybrid = s->mix,
                               .alt_topo = &s->alt,
                               .sim = sim_opts};
    ai.sim.threads = threads;
    struct rf_plan p;
    struct rf_prediction pred;
    struct rf_error err = {0};
    *choice = calloc(1, sizeof(**choice));
    assert_non_null(*choice);
    if (rf_auto(&ai, &p, &pred, *choice, &err) < 0)
        fail_msg("iteration %d: auto (%d threads): %s", iter, threads, err.msg);
    assert_int_equal(p.strategy, RF_STRAT_AUTO);
    double v = pred.predicted_s;
    rf_prediction_release(&pred);
    rf_plan_release(&p);
    return v;
}

/* Each record that repeats an earlier plan points at a candidate that is itself no repeat,
 * shows that candidate's figures, and is counted neither as predicted nor as bounded. */
static void check_repeats(const struct rf_auto_choice *ch, int n_topo, int iter)
{
    int distinct = 0;
    for (int k = 0; k < ch->n_candidates; k++) {
        const struct rf_auto_candidate *r = &ch->candidates[k];
        if (r->same_as < 0) {
            distinct++;
            continue;
        }
        int first = r->same_as * n_topo + k % n_topo;
        if (r->same_as >= k / n_topo || ch->candidates[first].same_as >= 0)
            fail_msg("iteration %d: candidate %d repeats %d, not an earlier distinct one", iter, k,
                     r->same_as);
        const struct rf_auto_candidate *o = &ch->candidates[first];
        if (!(r->bound_s == o->bound_s && (r->predicted_s == o->predicted_s ||
                                           (isnan(r->predicted_s) && isnan(o->predicted_s)))))
            fail_msg("iteration %d: candidate %d repeats %d with other figures", iter, k,
                     r->same_as);
    }
    assert_int_equal(ch->evaluated + ch->pruned, distinct);
}

static bool same_figure(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

/* On random scenarios: auto's prediction is at most every named strategy's (the same
 * options, sources and relay as `refit sim --strategy S`); with 2 threads it makes the very
 * same choice, with the same figure, as with 1; its repeats are consistent. */
static void auto_never_loses_and_ignores_threads(void **state)
{
    (void)state;
    int repeats = 0, predicted = 0, extra = 0;
    seed_rng();
    for (int iter = 0; iter < 200; iter++) {
        struct scenario s;
        scenario_draw(&s);
        struct rf_auto_choice *one, *two;
        double a1 = predict_auto(&s, 1, &one, iter), a2 = predict_auto(&s, 2, &two, iter);
        for (int st = RF_STRAT_BROADCAST; st <= RF_STRAT_HYBRID; st++) {
            double named = predict_named(&s, (enum rf_strategy)st, iter);
            if (a1 > named)
                fail_msg("iteration %d: auto %.9g s > %s %.9g s", iter, a1,
                         rf_strategy_name((enum rf_strategy)st), named);
        }
        if (a1 != a2 || strcmp(one->description, two->description) != 0)
            fail_msg("iteration %d: 1 thread: %s %.9g s; 2 threads: %s %.9g s", iter,
                     one->description, a1, two->description, a2);
        /* Two threads predict up to two candidates a round, so they may predict one that one
         * thread's bounds ruled out; every other figure is the same. */
        assert_int_equal(one->n_candidates, two->n_candidates);
        assert_int_equal(one->evaluated + one->pruned, two->evaluated + two->pruned);
        assert_true(two->evaluated >= one->evaluated);
        extra += two->evaluated - one->evaluated;
        for (int k = 0; k < one->n_candidates; k++) {
            const struct rf_auto_candidate *x = &one->candidates[k], *y = &two->candidates[k];
            if (strcmp(x->description, y->description) != 0 || x->same_as != y->same_as ||
                !same_figure(x->bound_s, y->bound_s) ||
                !same_figure(x->estimate_s, y->estimate_s) ||
                (!isnan(x->predicted_s) && !same_figure(x->predicted_s, y->predicted_s)))
                fail_msg("iteration %d: candidate %d differs between 1 and 2 threads", iter, k);
            repeats += x->same_as >= 0;
        }
        check_repeats(one, 2, iter);
        predicted += one->evaluated;
        free(one);
        free(two);
        scenario_release(&s);
    }
    /* The cases the checks exist for were drawn: repeated plans and several predictions. */
    printf("# repeated plans %d, candidates predicted %d (2 threads: %d more)\n", repeats,
           predicted, extra);
    assert_true(repeats > 0 && predicted > 60);
}

/* One training GPU holds every tensor (TP1, DP1), so each piece has one holder: balanced and
 * local sources choose the same source, and each uniform strategy's local-sources plan is
 * its balanced plan again. auto marks it so and predicts it at most once. */
static void a_single_holder_plans_once_per_strategy(void **state)
{
    (void)state;
    struct rf_error err = {0};
    struct rf_cluster c = test_cluster(2, 8, 8, 8);
    struct rf_cluster flipped = c;
    flipped.fabric.pxn = false;
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 1024, 512, 0),
                             tensor("v", RF_CLASS_ROW, RF_ROLE_ATTENTION, 0, 512, 1024, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 2};
    struct rf_side tr = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(2, 1, 1, 1, 4, 8, 1, RF_DT_BF16);
    struct rf_topology topo, alt;
    assert_int_equal(rf_topology_init(&topo, &c, &err), 0);
    assert_int_equal(rf_topology_init(&alt, &flipped, &err), 0);
    struct rf_auto_input ai = {.model = &m,
                               .train = &tr,
                               .infer = &in,
                               .topo = &topo,
                               .staging_bytes = 1 << 20,
                               .sources = RF_SOURCES_BALANCED,
                               .alt_topo = &alt,
                               .sim = sim_opts};
    struct rf_plan p;
    struct rf_prediction pred;
    struct rf_auto_choice *ch = calloc(1, sizeof(*ch));
    assert_non_null(ch);
    assert_int_equal(rf_auto(&ai, &p, &pred, ch, &err), 0);
    /* Step 1's order (sim/auto.c): reshard balanced, reshard local, hierarchical balanced,
     * hierarchical local; two records (PXN as given, flipped) each. */
    for (int t = 0; t < 2; t++) {
        assert_int_equal(ch->candidates[0 * 2 + t].same_as, -1);
        assert_int_equal(ch->candidates[1 * 2 + t].same_as, 0);
        assert_int_equal(ch->candidates[2 * 2 + t].same_as, -1);
        assert_int_equal(ch->candidates[3 * 2 + t].same_as, 2);
    }
    check_repeats(ch, 2, 0);
    free(ch);
    rf_prediction_release(&pred);
    rf_plan_release(&p);
    rf_topology_release(&topo);
    rf_topology_release(&alt);
    rf_side_release(&tr);
    rf_side_release(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(auto_never_loses_and_ignores_threads),
        cmocka_unit_test(a_single_holder_plans_once_per_strategy),
    };
    return cmocka_run_group_tests_name("auto", tests, NULL, NULL);
}
