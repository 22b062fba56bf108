/* The strategy-independent lower bound: its source-side terms on hand-computable cases, and
 * every strategy's prediction at or above it on random layouts and clusters (the seed is
 * printed; REFIT_SEED=<n> replays one). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <cmocka.h>

#include "auto.h"
#include "bound.h"
#include "fixtures.h"
#include "random.h"
#include "schedule.h"
#include "simulate.h"

/* The bound of reshard of m between the sides on c. */
static double bound_of(const struct rf_cluster *c, const struct rf_model *m, struct rf_side *tr,
                       struct rf_side *in)
{
    struct rf_topology t;
    struct rf_plan p;
    struct rf_error err = {0};
    double bound;
    assert_int_equal(rf_topology_init(&t, c, &err), 0);
    if (rf_plan_build(&p, m, tr, in, RF_STRAT_RESHARD, NULL, NULL, &err) < 0 ||
        rf_lower_bound(&p, tr, in, &t, &bound, &err) < 0)
        fail_msg("%s", err.msg);
    rf_plan_release(&p);
    rf_topology_release(&t);
    return bound;
}

#define assert_close(a, b)                                                                         \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (fabs(a_ - b_) > 1e-12 * fabs(b_))                                                      \
            fail_msg("%.15g != %.15g", a_, b_);                                                    \
    } while (0)

/* One training GPU holds the whole tensor; four TP2 replicas in its node need it: each
 * inference GPU receives half of it, but GPU 0 must send all of it at least once, over its
 * NVLink port and its NIC. */
static void a_lone_holder_sends_everything_once(void **state)
{
    (void)state;
    struct rf_cluster c = test_cluster(2, 16, 16, 16);
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 1024, 512, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 1};
    struct rf_side tr = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(2, 1, 1, 1, 4, 8, 1, RF_DT_BF16);
    assert_close(bound_of(&c, &m, &tr, &in), 1024 * 512 * 2 / 450e9);
    rf_side_release(&tr);
    rf_side_release(&in);
}

/* Few trainer nodes feeding a whole domain, in small: NVLink domains of 4 nodes of 4 GPUs,
 * the trainers on one node of domain 0 and the inference replicas filling domain 1. Domain 1
 * receives over 16 NICs, but every byte leaves over the trainers' node's 4: four times the
 * ingress bound. */
static void few_trainer_nodes_bound_their_domain(void **state)
{
    (void)state;
    struct rf_cluster c = test_cluster(8, 4, 16, 4);
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 1024, 512, 0),
                             tensor("e", RF_CLASS_EXPERT_COLUMN, RF_ROLE_EXPERT, 0, 8, 64, 256)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 2, .experts = 8};
    int64_t bytes = (1024 * 512 + 8 * 64 * 256) * 2;
    struct rf_side tr = train_side(1, 1, 1, 4, 4, 1, false, 0, 1);
    struct rf_side in = infer_side(4, 1, 1, 1, 4, 16, 1, RF_DT_BF16);
    assert_close(bound_of(&c, &m, &tr, &in), (double)bytes / (4 * 50e9));
    rf_side_release(&tr);
    rf_side_release(&in);
}

/* Data-parallel replicas in two domains share the work: a piece either domain holds may
 * leave from either, so the source term is its bytes over both domains' NICs, never over
 * one's. Two 8-GPU domains with 2 NICs each hold the tensor (TP8, DP2) and feed one TP16
 * engine over domains 2 and 3, each of which needs half of it: every term is B / 4 NICs.
 * Trained on domain 0 alone (DP1), the whole B leaves over 2 NICs: twice that. */
static void replicas_in_two_domains_share_the_work(void **state)
{
    (void)state;
    struct rf_cluster c = test_cluster(4, 8, 8, 2);
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 1024, 512, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 1};
    double bytes = 1024 * 512 * 2;
    struct rf_side tr = train_side(8, 1, 1, 2, 1, 1, false, 0, 1);
    struct rf_side tr1 = train_side(8, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(16, 1, 1, 1, 1, 16, 1, RF_DT_BF16);
    assert_close(bound_of(&c, &m, &tr, &in), bytes / (4 * 50e9));
    assert_close(bound_of(&c, &m, &tr1, &in), bytes / (2 * 50e9));
    rf_side_release(&tr);
    rf_side_release(&tr1);
    rf_side_release(&in);
}

/* A set of domains counts what smaller sets inside it hold too, when it is needed where
 * no trainer is. PP2 over 4-GPU domains with a NIC per node: stage 0 (TP4 DP2, EP8) on
 * domains 0-1 holds a dense tensor replicated over both and experts each on one GPU;
 * stage 1 (domains 2-3) a norm. A TP16 engine on domains 4-7 needs it all: stage 0's
 * 2 MiB leave over domains 0-1's 2 NICs, twice what any one domain's pieces, the union of
 * all (4 NICs) or a destination domain's quarter give. */
static void domain_sets_add_the_pieces_of_their_parts(void **state)
{
    (void)state;
    struct rf_cluster c = test_cluster(8, 4, 4, 1);
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 1024, 512, 0),
                             tensor("e", RF_CLASS_EXPERT_COLUMN, RF_ROLE_EXPERT, 0, 8, 64, 1024),
                             tensor("n", RF_CLASS_REPLICATED, RF_ROLE_NORM, 1, 64, 0, 0)};
    struct rf_model m = {.name = "m", .layers = 2, .tensors = ts, .n_tensors = 3, .experts = 8};
    struct rf_side tr = train_side(4, 1, 2, 2, 8, 1, false, 0, 2);
    struct rf_side in = infer_side(16, 1, 1, 1, 1, 16, 2, RF_DT_BF16);
    assert_close(bound_of(&c, &m, &tr, &in), (1024 * 512 + 8 * 64 * 1024) * 2 / (2 * 50e9));
    rf_side_release(&tr);
    rf_side_release(&in);
}

/* A failure names the case: the iteration (replayed with the seed), the strategy, the
 * relay and schedule options and k (bit 0: PXN flipped, bit 1: local sources). */
static void check_above(double predicted, double bound, int iter, const char *what,
                        const struct rf_relay *r, const struct rf_schedule_opts *so, int k)
{
    if (!(predicted >= bound * (1 - 1e-12)))
        fail_msg("iteration %d: %s (relay ring %d fanout %d depth %d, chunk %lld, streams %d, "
                 "k %d) predicts %.15g below the bound %.15g",
                 iter, what, (int)r->ring, (int)r->fanout, (int)r->depth,
                 (long long)so->chunk_bytes, (int)so->streams, k, predicted, bound);
}

/* A random relay structure for hierarchical tensors: a source feeding each leader, or a
 * ring of leaders as a chain or a tree of fanout up to 4, its depth unlimited (0) or up to
 * 3 hops. */
static struct rf_relay random_relay(void)
{
    return (struct rf_relay){
        .ring = rnd() % 2, .fanout = 1 + (int32_t)(rnd() % 4), .depth = (int32_t)(rnd() % 4)};
}

/* Every named strategy (hybrid as a random per-tensor mix), with balanced and local sources,
 * PXN on and off, and auto: each prediction at or above the bound. Hierarchical tensors
 * relay as a random struct rf_relay says, and the schedule pipelines relays in a random
 * chunk (the default: the whole staging budget, or down to 256 bytes, so that chains of
 * hops share a round) with 1 to 3 rounds in flight (the cluster's streams, which the
 * simulator and the schedule share); a third of the inference sides are FP8. The bound
 * counted in the prediction is lowered by the batching margin; the check is against the
 * bound itself at the exact tolerance's margin too. */
/* Whether plan p relays leader to leader (a forward that leaves its NVLink domain, or a
 * chain run), and the deepest hop its schedule pipelines. */
static void relays_of(const struct rf_plan *p, const struct rf_topology *t, bool *ring,
                      int32_t *max_hop)
{
    for (size_t i = 0; i < p->n_transfers; i++) {
        const struct rf_transfer *x = &p->transfers[i];
        for (int32_t k = 0; k < x->dst_count; k++) {
            int32_t from = rf_transfer_sender(x, k), to = x->dst + k * x->dst_stride;
            *ring |= (x->after >= 0 || x->chain) &&
                     rf_topology_domain(t, from) != rf_topology_domain(t, to);
            if (rf_transfer_hop(x, k) > *max_hop)
                *max_hop = rf_transfer_hop(x, k);
        }
    }
}

static void random_plans_never_beat_the_bound(void **state)
{
    (void)state;
    static const int64_t chunks[] = {0, 256, 1024, 4096, 1 << 14};
    int ringed = 0, deep = 0, fp8 = 0;
    seed_rng();
    for (int iter = 0; iter < 300; iter++) {
        struct rf_tensor ts[64];
        struct rf_model m;
        struct rf_side tr, in;
        struct rf_error err = {0};
        int layers = 1 + (int)(rnd() % 3);
        bool moe = rnd() % 2;
        random_model(&m, ts, layers, moe);
        struct rf_cluster c = random_cluster();
        struct rf_relay relay = random_relay();
        struct rf_schedule_opts so = {.staging_bytes = 1 << 16,
                                      .chunk_bytes = pick(chunks, 5),
                                      .streams = 1 + (int32_t)(rnd() % 3)};
        c.cal.streams = so.streams;
        struct rf_cluster flipped = c;
        flipped.fabric.pxn = !c.fabric.pxn;
        random_sides(&tr, &in, layers, moe, c.nodes * c.gpus_per_node);
        struct rf_topology topo, alt;
        assert_int_equal(rf_topology_init(&topo, &c, &err), 0);
        assert_int_equal(rf_topology_init(&alt, &flipped, &err), 0);
        struct rf_sim_options o = {.tolerance = RF_SIM_TOLERANCE_MIN};
        double bound = 0;
        enum rf_strategy mix[64];
        for (size_t i = 0; i < m.n_tensors; i++)
            mix[i] = (enum rf_strategy)(rnd() % 3); /* broadcast, reshard, hierarchical */
        for (int s = RF_STRAT_BROADCAST; s <= RF_STRAT_HYBRID; s++) {
            for (int k = 0; k < 4; k++) {
                const struct rf_topology *t = k & 1 ? &alt : &topo;
                struct rf_plan_opts po = {.topo = t,
                                          .sources = k & 2 ? RF_SOURCES_LOCAL : RF_SOURCES_BALANCED,
                                          .relay = relay};
                struct rf_plan p;
                struct rf_prediction pred;
                double b;
                if (rf_plan_build(&p, &m, &tr, &in, (enum rf_strategy)s,
                                  s == RF_STRAT_HYBRID ? mix : NULL, &po, &err) < 0 ||
                    rf_schedule(&p, &so, &err) < 0 ||
                    rf_lower_bound(&p, &tr, &in, t, &b, &err) < 0 ||
                    rf_simulate(&p, &tr, &in, t, &o, &pred, &err) < 0)
                    fail_msg("iteration %d: %s", iter, err.msg);
                bool ring = false;
                int32_t hop = 0;
                relays_of(&p, t, &ring, &hop);
                ringed += ring;
                deep += hop >= 2;
                /* The bound depends on neither strategy nor sources (nor PXN: the same
                 * capacities). */
                if (s == RF_STRAT_BROADCAST && k == 0)
                    bound = b;
                assert_close(b, bound);
                check_above(pred.predicted_s, pred.lower_bound_s, iter, rf_strategy_name(s), &relay,
                            &so, k);
                check_above(pred.predicted_s, b * (1 - 2 * RF_SIM_TOLERANCE_MIN), iter,
                            rf_strategy_name(s), &relay, &so, k);
                rf_prediction_release(&pred);
                rf_plan_release(&p);
            }
        }
        struct rf_auto_input ai = {.model = &m,
                                   .train = &tr,
                                   .infer = &in,
                                   .topo = &topo,
                                   .staging_bytes = so.staging_bytes,
                                   .chunk_bytes = so.chunk_bytes,
                                   .relay = relay,
                                   .sources = RF_SOURCES_BALANCED,
                                   .hybrid = mix,
                                   .alt_topo = &alt,
                                   .sim = {.tolerance = RF_SIM_TOLERANCE_MIN, .threads = 1}};
        struct rf_plan p;
        struct rf_prediction pred;
        struct rf_auto_choice *choice = calloc(1, sizeof(*choice));
        assert_non_null(choice);
        if (rf_auto(&ai, &p, &pred, choice, &err) < 0)
            fail_msg("iteration %d: auto: %s", iter, err.msg);
        check_above(pred.predicted_s, bound * (1 - 2 * RF_SIM_TOLERANCE_MIN), iter, "auto", &relay,
                    &so, 0);
        free(choice);
        fp8 += in.dtype == RF_DT_FP8;
        rf_prediction_release(&pred);
        rf_plan_release(&p);
        rf_topology_release(&topo);
        rf_topology_release(&alt);
        rf_side_release(&tr);
        rf_side_release(&in);
    }
    /* The cases the structures exist for were drawn: leaders relaying between domains,
     * chains pipelined two hops deep or more, FP8. */
    printf("# plans relaying leader to leader %d, pipelined 2+ hops deep %d, FP8 sides %d\n",
           ringed, deep, fp8);
    assert_true(ringed > 0 && deep > 0 && fp8 > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_lone_holder_sends_everything_once),
        cmocka_unit_test(few_trainer_nodes_bound_their_domain),
        cmocka_unit_test(replicas_in_two_domains_share_the_work),
        cmocka_unit_test(domain_sets_add_the_pieces_of_their_parts),
        cmocka_unit_test(random_plans_never_beat_the_bound),
    };
    return cmocka_run_group_tests_name("bound", tests, NULL, NULL);
}
