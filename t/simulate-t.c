/* Simulation on hand-computable cases: one transfer on one link, two flows sharing a NIC, a
 * pipelined broadcast against its closed form, and the bound never above the prediction. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures.h"
#include "schedule.h"
#include "simulate.h"

/* Two DGX-like nodes of 8 GPUs, one 50 GB/s NIC per GPU, no efficiency losses and no fixed
 * costs unless a test sets them, so every time is bytes / bandwidth + latencies. */
static struct rf_cluster cluster(void)
{
    struct rf_cluster c = {
        .name = "test", .source = "t", .nodes = 2, .gpus_per_node = 8, .hbm_gb = 80};
    c.nvlink.domain_gpus = 8;
    c.nvlink.gbps = 400;
    c.nic.per_node = 8;
    c.nic.gbps = 50;
    c.fabric.nodes_per_leaf = 32;
    c.fabric.oversubscription = 1;
    c.fabric.pxn = true;
    c.cal.nvlink_efficiency = 1;
    c.cal.nic_efficiency = 1;
    c.cal.net_channels_per_peer = 8;
    c.cal.channel_gbps = 14;
    c.cal.nvl_chunk_kib = 512;
    c.cal.net_chunk_kib = 128;
    c.cal.memcpy_gbps = 1e6; /* copies free unless a test says otherwise */
    c.cal.quant_gbps = 1e6;
    c.cal.streams = 1;
    return c;
}

/* cmocka 1.1 has assert_float_equal only for floats: compare doubles relatively here. */
#define assert_double_equal(a, b, rel)                                                             \
    do {                                                                                           \
        double a_ = (a), b_ = (b);                                                                 \
        if (fabs(a_ - b_) > (rel)*fabs(b_) + 1e-15)                                                \
            fail_msg("%.15g != %.15g", a_, b_);                                                    \
    } while (0)

/* rf_simulate_bound of the last plan predict() saw, on its cluster. */
static double last_bound;

/* Predicts p on c, and checks both bounds against the prediction: the physical one, and
 * rf_simulate_bound's, which auto prunes with. The plan is bounded on c and on c with PXN
 * flipped in one shared pass, and each must match the same bound taken alone and stay
 * below the prediction on its own cluster. */
static double predict_with(struct rf_plan *p, const struct rf_cluster *c, struct rf_side *tr,
                           struct rf_side *in, const struct rf_sim_options *o,
                           struct rf_prediction *pred)
{
    struct rf_cluster flipped = *c;
    struct rf_topology topo[2];
    struct rf_error err;
    double both[2], est[2], alone;
    flipped.fabric.pxn = !c->fabric.pxn;
    assert_int_equal(rf_topology_init(&topo[0], c, &err), 0);
    assert_int_equal(rf_topology_init(&topo[1], &flipped, &err), 0);
    const struct rf_topology *pair[2] = {&topo[0], &topo[1]};
    if (rf_simulate_bound(p, tr, in, pair, 2, o, both, est, &err) < 0)
        fail_msg("%s", err.msg);
    for (int i = 0; i < 2; i++) {
        struct rf_prediction other;
        assert_int_equal(rf_simulate_bound(p, tr, in, &pair[i], 1, o, &alone, NULL, &err), 0);
        assert_double_equal(both[i], alone, 0);
        assert_true(est[i] >= both[i]);
        if (rf_simulate(p, tr, in, &topo[i], o, i == 0 ? pred : &other, &err) < 0)
            fail_msg("%s", err.msg);
        double got = i == 0 ? pred->predicted_s : other.predicted_s;
        if (both[i] > got * (1 + 1e-12))
            fail_msg("bound %.15g above the prediction %.15g (pxn %d)", both[i], got,
                     (int)pair[i]->cluster->fabric.pxn);
        if (i == 1)
            rf_prediction_release(&other);
    }
    rf_topology_release(&topo[0]);
    rf_topology_release(&topo[1]);
    last_bound = both[0];
    if (pred->predicted_s < pred->lower_bound_s * (1 - 1e-12))
        fail_msg("prediction %.15g below the lower bound %.15g", pred->predicted_s,
                 pred->lower_bound_s);
    return pred->predicted_s;
}

/* The same with the default options. */
static double predict(struct rf_plan *p, const struct rf_cluster *c, struct rf_side *tr,
                      struct rf_side *in, struct rf_prediction *pred)
{
    return predict_with(p, c, tr, in, NULL, pred);
}

/* A hand-made plan: one box of `bytes` bytes from src to each of dsts, in one round. */
static void one_round(struct rf_plan *p, struct rf_tensor *t, struct rf_plan_box *b,
                      struct rf_transfer *tr, int n, const int32_t *src, const int32_t *dst,
                      int64_t bytes)
{
    static enum rf_dtype wire = RF_DT_BF16;
    *t = tensor("w", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, bytes / 2, 0, 0);
    b->tensor = 0;
    b->box = (struct rf_box){.off = {0}, .len = {bytes / 2, 1, 1, 1}};
    for (int i = 0; i < n; i++)
        tr[i] = (struct rf_transfer){.box = 0,
                                     .src = src[i],
                                     .dst = dst[i],
                                     .dst_count = 1,
                                     .after = -1,
                                     .round = 0,
                                     .bytes = bytes,
                                     .phase = RF_PHASE_DELIVER};
    *p = (struct rf_plan){.tensors = t,
                          .wire_dtype = &wire,
                          .n_tensors = 1,
                          .boxes = b,
                          .n_boxes = 1,
                          .transfers = tr,
                          .n_transfers = (size_t)n,
                          .n_rounds = 1};
}

/* 1 GB from GPU 0 (node 0, rail 0) to GPU 8 (node 1, rail 0), in pieces of `staging` bytes
 * (0: whole): NIC out, one leaf, NIC in; a message's fixed cost of 5 us, the NIC to NIC
 * latency, one switch. Returns the prediction (into pred). */
static double one_send(int64_t staging, struct rf_prediction *pred)
{
    struct rf_cluster c = cluster();
    c.cal.message_latency_us = 5;
    c.nic.latency_us = 2.2;
    c.fabric.switch_latency_us = 0.5;
    struct rf_tensor t;
    struct rf_plan_box b;
    struct rf_transfer tr[1];
    struct rf_plan p;
    struct rf_side trs = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side ins = infer_side(1, 1, 1, 1, 1, 8, 1, RF_DT_BF16);
    one_round(&p, &t, &b, tr, 1, (int32_t[]){0}, (int32_t[]){8}, 1000000000);
    p.staging_bytes = staging;
    double got = predict(&p, &c, &trs, &ins, pred);
    rf_side_release(&trs);
    rf_side_release(&ins);
    return got;
}

static void one_transfer_is_latency_plus_bytes_over_bandwidth(void **state)
{
    (void)state;
    struct rf_prediction pred;
    double want = 5e-6 + 2.2e-6 + 0.5e-6 + 1e9 / 50e9;
    assert_double_equal(one_send(0, &pred), want, 1e-12);
    /* Alone on its route, the message is its own bound (less the batching margin). */
    assert_double_equal(last_bound, want * (1 - 2 * RF_SIM_TOLERANCE_DEFAULT), 1e-12);
    assert_int_equal(pred.fabric_bytes, 1000000000);
    rf_prediction_release(&pred);
}

/* A message larger than the staging piece travels as one send a piece, one step each
 * (exec/steps.c): each piece pays the message's fixed cost and the route's latency. */
static void each_piece_pays_a_message_latency(void **state)
{
    (void)state;
    struct rf_prediction pred;
    /* 1 GB in pieces of 300 MB: 4 sends, the last 100 MB. */
    double want = 4 * (5e-6 + 2.2e-6 + 0.5e-6) + 1e9 / 50e9;
    assert_double_equal(one_send(300000000, &pred), want, 1e-12);
    rf_prediction_release(&pred);
}

static void two_flows_share_a_nic(void **state)
{
    (void)state;
    struct rf_cluster c = cluster();
    struct rf_tensor t;
    struct rf_plan_box b;
    struct rf_transfer tr[2];
    struct rf_plan p;
    struct rf_prediction pred;
    struct rf_side trs = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side ins = infer_side(1, 1, 1, 1, 1, 8, 1, RF_DT_BF16);
    /* GPU 0 sends 1 GB to GPU 8 and GPU 9: with PXN the second hops to GPU 1 over NVLink
     * and leaves on rail 1, so turn PXN off to make both share NIC 0: each gets 25 GB/s. */
    c.fabric.pxn = false;
    one_round(&p, &t, &b, tr, 2, (int32_t[]){0, 0}, (int32_t[]){8, 9}, 1000000000);
    double lat = 2 * c.nic.latency_us * 1e-6 + 3 * c.fabric.switch_latency_us * 1e-6;
    assert_double_equal(predict(&p, &c, &trs, &ins, &pred), lat + 2e9 / 50e9, 1e-9);
    rf_prediction_release(&pred);
    /* With PXN the two leave on different NICs: each at full rate after an NVLink hop. */
    c.fabric.pxn = true;
    double pxn = predict(&p, &c, &trs, &ins, &pred);
    assert_true(pxn < 1e9 / 50e9 * 1.01);
    rf_prediction_release(&pred);
    rf_side_release(&trs);
    rf_side_release(&ins);
}

static void broadcast_matches_its_closed_form(void **state)
{
    (void)state;
    struct rf_cluster c = cluster();
    c.cal.message_latency_us = 3;
    struct rf_tensor t = tensor("w", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 500000000, 0, 0);
    enum rf_dtype wire = RF_DT_BF16;
    /* Root GPU 0 to GPUs 1..7 on one node: NCCL's 12 identical rings (sim/ring.c), each a
     * flow of 1e9 / 12 B down the chain of 7 NVLink hops, all sharing each GPU's 400 GB/s,
     * so together at 400 GB/s. The fill is 6 Simple chunks of 512 KiB at one channel's share
     * of a link, 400 GB/s over the 24 channels (12 rings x 2 copies). */
    struct rf_collective col = {.kind = RF_COLL_BROADCAST,
                                .tensor = 0,
                                .root = 0,
                                .first_gpu = 1,
                                .gpu_count = 7,
                                .gpu_stride = 1,
                                .bytes = 1000000000,
                                .round = 0};
    struct rf_plan p = {.tensors = &t,
                        .wire_dtype = &wire,
                        .n_tensors = 1,
                        .collectives = &col,
                        .n_collectives = 1,
                        .n_rounds = 1};
    struct rf_prediction pred;
    struct rf_side trs = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side ins = infer_side(1, 1, 1, 1, 7, 1, 1, RF_DT_BF16);
    double B = 400e9, hops = 7, alpha = c.nvlink.latency_us * 1e-6, chunk = 512 * 1024.0;
    double want = 3e-6 + hops * alpha + (hops - 1) * chunk / (B / 24) + 1e9 / B;
    assert_double_equal(predict(&p, &c, &trs, &ins, &pred), want, 1e-12);
    rf_prediction_release(&pred);
    rf_side_release(&trs);
    rf_side_release(&ins);
}

/* Across two full nodes the broadcast takes all 8 NICs: 8 rings (sim/ring.c), each a flow of
 * 1e9 / 8 B alone on its NICs at 50 GB/s (NVLink ports carry at most 7 of them, 350 of 400
 * GB/s), where one chain took one NIC. The fill: 14 chunks of 512 KiB at a channel's least
 * share, a NIC under one ring's 2 copies, 25 GB/s (NVLink's 400 / 14 is more). */
static void broadcast_across_nodes_takes_every_nic(void **state)
{
    (void)state;
    struct rf_cluster c = cluster();
    struct rf_tensor t = tensor("w", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 500000000, 0, 0);
    enum rf_dtype wire = RF_DT_BF16;
    struct rf_collective col = {.kind = RF_COLL_BROADCAST,
                                .tensor = 0,
                                .root = 0,
                                .first_gpu = 1,
                                .gpu_count = 15,
                                .gpu_stride = 1,
                                .bytes = 1000000000,
                                .round = 0};
    struct rf_plan p = {.tensors = &t,
                        .wire_dtype = &wire,
                        .n_tensors = 1,
                        .collectives = &col,
                        .n_collectives = 1,
                        .n_rounds = 1};
    struct rf_prediction pred;
    struct rf_side trs = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side ins = infer_side(1, 1, 1, 1, 15, 1, 1, RF_DT_BF16);
    double want = 14 * 524288.0 / 25e9 + 1e9 / 8 / 50e9;
    assert_double_equal(predict(&p, &c, &trs, &ins, &pred), want, 1e-12);
    rf_prediction_release(&pred);
    rf_side_release(&trs);
    rf_side_release(&ins);
}

static void rounds_run_one_after_another(void **state)
{
    (void)state;
    struct rf_cluster c = cluster();
    struct rf_tensor t;
    struct rf_plan_box b;
    struct rf_transfer tr[2];
    struct rf_plan p;
    struct rf_prediction pred;
    struct rf_side trs = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side ins = infer_side(1, 1, 1, 1, 1, 8, 1, RF_DT_BF16);
    one_round(&p, &t, &b, tr, 2, (int32_t[]){0, 1}, (int32_t[]){8, 9}, 500000000);
    tr[1].round = 1;
    p.n_rounds = 2;
    double lat = 2 * c.nic.latency_us * 1e-6 + c.fabric.switch_latency_us * 1e-6;
    /* One stream: round 1 starts when round 0 ends. */
    assert_double_equal(predict(&p, &c, &trs, &ins, &pred), 2 * (lat + 0.5e9 / 50e9), 1e-12);
    assert_double_equal(pred.round_start[1], pred.round_finish[0], 1e-15);
    rf_prediction_release(&pred);
    /* Two streams: the rounds overlap (different NICs). */
    c.cal.streams = 2;
    assert_double_equal(predict(&p, &c, &trs, &ins, &pred), lat + 0.5e9 / 50e9, 1e-12);
    rf_prediction_release(&pred);
    rf_side_release(&trs);
    rf_side_release(&ins);
}

/* Real plans on c, with each tolerance the command accepts: the default, the exact end
 * and the top of the range, where flows finish up to 1% early and the bounds are lowered
 * by 2%. predict_with fails on any prediction below either bound. */
static void real_plans_never_beat_the_bound(void **state)
{
    (void)state;
    static const double tolerances[] = {0, RF_SIM_TOLERANCE_MIN, RF_SIM_TOLERANCE_MAX};
    struct rf_cluster c = cluster();
    c.cal.message_latency_us = 6;
    c.cal.tensor_overhead_us = 10;
    c.cal.bucket_overhead_us = 50;
    c.cal.memcpy_gbps = 1340;
    c.cal.nvlink_efficiency = 0.82;
    c.cal.nic_efficiency = 0.96;
    struct rf_tensor ts[] = {tensor("emb", RF_CLASS_VOCAB, RF_ROLE_EMBEDDING, -1, 4096, 512, 0),
                             tensor("q", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 2048, 512, 0),
                             tensor("o", RF_CLASS_ROW, RF_ROLE_ATTENTION, 0, 512, 2048, 0),
                             tensor("e", RF_CLASS_EXPERT_COLUMN, RF_ROLE_EXPERT, 1, 16, 512, 512),
                             tensor("n", RF_CLASS_REPLICATED, RF_ROLE_NORM, 1, 512, 0, 0)};
    struct rf_model m = {.name = "m",
                         .layers = 2,
                         .tensors = ts,
                         .n_tensors = 5,
                         .experts = 16,
                         .experts_per_token = 2};
    for (size_t k = 0; k < sizeof(tolerances) / sizeof(tolerances[0]); k++) {
        for (int s = RF_STRAT_BROADCAST; s <= RF_STRAT_HIERARCHICAL; s++) {
            for (int colocated = 0; colocated < 2; colocated++) {
                struct rf_sim_options o = {.tolerance = tolerances[k]};
                struct rf_side trs = train_side(2, 1, 2, 2, 4, 1, false, 0, 2);
                struct rf_side ins = infer_side(4, 1, 1, 1, 2, colocated ? 0 : 8, 2, RF_DT_FP8);
                struct rf_plan p;
                struct rf_prediction pred;
                struct rf_error err;
                /* Hierarchical needs the cluster's NVLink domains. */
                struct rf_topology topo;
                assert_int_equal(rf_topology_init(&topo, &c, &err), 0);
                struct rf_plan_opts po = {.topo = &topo};
                if (rf_plan_build(&p, &m, &trs, &ins, s, NULL, &po, &err) < 0)
                    fail_msg("%s", err.msg);
                rf_topology_release(&topo);
                assert_int_equal(
                    rf_schedule(&p, &(struct rf_schedule_opts){.staging_bytes = 1 << 20}, &err), 0);
                predict_with(&p, &c, &trs, &ins, &o, &pred);
                assert_true(pred.lower_bound_s > 0);
                rf_prediction_release(&pred);
                rf_plan_release(&p);
                rf_side_release(&trs);
                rf_side_release(&ins);
            }
        }
    }
}

/* The worst case for event batching: many messages of distinct sizes into one NIC, so that
 * nearly every completion is an event and the flows batched at each finish early. At the top
 * of the tolerance range the prediction comes out 0.35% under the exact time, which is the
 * physical bound here (the destination's NVLink ingress is negligible, no latencies): the
 * bound must carry the batching margin. */
static void batching_never_beats_the_bound(void **state)
{
    (void)state;
    struct rf_cluster c = cluster();
    c.nodes = 4;
    c.fabric.pxn = false;     /* every message straight into the destination's NIC */
    c.nvlink.gbps = 1e-3;     /* so that the bound's ingress is that NIC's alone */
    c.cal.channel_gbps = 100; /* no per-flow cap below the NIC's rate */
    enum { N = 24 };
    int32_t src[N], dst[N];
    int64_t bytes[N], total = 0;
    struct rf_transfer tr[N];
    struct rf_tensor t;
    struct rf_plan_box b;
    struct rf_plan p;
    struct rf_prediction pred;
    for (int i = 0; i < N; i++) {
        src[i] = i;                                           /* nodes 0-2 */
        dst[i] = 31;                                          /* node 3 */
        bytes[i] = 2 * (int64_t)llround(5e5 * pow(1.008, i)); /* finishes ~tolerance apart */
        total += bytes[i];
    }
    one_round(&p, &t, &b, tr, N, src, dst, total);
    for (int i = 0; i < N; i++)
        tr[i].bytes = bytes[i];
    struct rf_side trs = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side ins = infer_side(1, 1, 1, 1, 1, 31, 1, RF_DT_BF16);
    static const double tolerances[] = {RF_SIM_TOLERANCE_MIN, RF_SIM_TOLERANCE_MAX};
    double exact = 0;
    for (size_t k = 0; k < sizeof(tolerances) / sizeof(tolerances[0]); k++) {
        struct rf_sim_options o = {.tolerance = tolerances[k]};
        double got = predict_with(&p, &c, &trs, &ins, &o, &pred);
        if (k == 0) {
            exact = got;
            assert_double_equal(exact, (double)total / 50e9, 1e-6);
        } else {
            assert_true(got < exact * (1 - 1e-3)); /* the case is as bad as it claims */
        }
        rf_prediction_release(&pred);
    }
    rf_side_release(&trs);
    rf_side_release(&ins);
}

/* NCCL's p2p channels (sim/topology.c rf_topology_p2p): one 1 GB send between two nodes is
 * split over the channels per peer of the replay's communicator, at channel_gbps each. With
 * NCCL's default for a 50 GB/s NIC (4 asked at 14 GB/s) and 32 p2p channels, a 16-rank
 * communicator keeps 4 (56 GB/s, above the NIC: the NIC's 50 GB/s binds); a 136-rank one
 * halves them to 1 (1 x ceil(136 / 8) = 17 <= 32), 14 GB/s. */
static void network_sends_take_the_communicators_channels(void **state)
{
    (void)state;
    struct rf_cluster c = cluster();
    c.nodes = 17;
    c.cal.net_channels_per_peer = 0;
    c.cal.nvl_channels_per_peer = 32;
    c.cal.p2p_channels = 32;
    struct rf_tensor t;
    struct rf_plan_box b;
    struct rf_transfer tr[1];
    struct rf_plan p;
    struct rf_prediction pred;
    struct rf_side trs = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    one_round(&p, &t, &b, tr, 1, (int32_t[]){0}, (int32_t[]){8}, 1000000000);
    struct rf_side small = infer_side(1, 1, 1, 1, 1, 15, 1, RF_DT_BF16);  /* ranks 0..15 */
    struct rf_side large = infer_side(1, 1, 1, 1, 1, 135, 1, RF_DT_BF16); /* ranks 0..135 */
    assert_double_equal(predict(&p, &c, &trs, &small, &pred), 1e9 / 50e9, 1e-9);
    rf_prediction_release(&pred);
    assert_double_equal(predict(&p, &c, &trs, &large, &pred), 1e9 / 14e9, 1e-9);
    rf_prediction_release(&pred);
    /* NCCL_NCHANNELS_PER_NET_PEER=2 set: no halving, 28 GB/s whatever the size. */
    c.cal.net_channels_per_peer = 2;
    assert_double_equal(predict(&p, &c, &trs, &large, &pred), 1e9 / 28e9, 1e-9);
    rf_prediction_release(&pred);
    /* Sent in staging pieces, each an ncclSend, in the 16-rank communicator: a send starts
     * on 2 channels (4 halved while x 16 ranks > 32) and uses parts of 64 to 128 KiB, so a
     * 60 KiB piece takes 1 channel, 200 KiB 2 and 1 MiB all 4 (56 GB/s: the NIC binds). */
    c.cal.net_channels_per_peer = 0;
    p.staging_bytes = 60 << 10;
    assert_double_equal(predict(&p, &c, &trs, &small, &pred), 1e9 / 14e9, 1e-9);
    rf_prediction_release(&pred);
    p.staging_bytes = 200 << 10;
    assert_double_equal(predict(&p, &c, &trs, &small, &pred), 1e9 / 28e9, 1e-9);
    rf_prediction_release(&pred);
    p.staging_bytes = 1 << 20;
    assert_double_equal(predict(&p, &c, &trs, &small, &pred), 1e9 / 50e9, 1e-9);
    rf_prediction_release(&pred);
    rf_side_release(&trs);
    rf_side_release(&small);
    rf_side_release(&large);
}

/* A tolerance outside the range is refused, not clamped: above it the bounds would no
 * longer hold, and a NaN would disable batching's checks. */
static void tolerance_out_of_range_is_refused(void **state)
{
    (void)state;
    struct rf_cluster c = cluster();
    struct rf_tensor t;
    struct rf_plan_box b;
    struct rf_transfer tr[1];
    struct rf_plan p;
    struct rf_prediction pred;
    struct rf_topology topo;
    struct rf_error err;
    double bound, v;
    struct rf_side trs = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side ins = infer_side(1, 1, 1, 1, 1, 8, 1, RF_DT_BF16);
    one_round(&p, &t, &b, tr, 1, (int32_t[]){0}, (int32_t[]){8}, 1000000);
    assert_int_equal(rf_topology_init(&topo, &c, &err), 0);
    const struct rf_topology *one = &topo;
    const double bad[] = {0.5, 1.01e-2, 1e-13, -1e-3, NAN, INFINITY};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct rf_sim_options o = {.tolerance = bad[i]};
        assert_int_equal(rf_simulate(&p, &trs, &ins, &topo, &o, &pred, &err), RF_EINVAL);
        assert_non_null(strstr(err.msg, "simulation tolerance"));
        rf_prediction_release(&pred);
        assert_int_equal(rf_simulate_bound(&p, &trs, &ins, &one, 1, &o, &bound, NULL, &err),
                         RF_EINVAL);
        assert_int_equal(rf_sim_options_tolerance(&o, &v, &err), RF_EINVAL);
    }
    assert_int_equal(rf_sim_options_tolerance(NULL, &v, &err), 0);
    assert_true(v == RF_SIM_TOLERANCE_DEFAULT);
    rf_topology_release(&topo);
    rf_side_release(&trs);
    rf_side_release(&ins);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_transfer_is_latency_plus_bytes_over_bandwidth),
        cmocka_unit_test(each_piece_pays_a_message_latency),
        cmocka_unit_test(two_flows_share_a_nic),
        cmocka_unit_test(broadcast_matches_its_closed_form),
        cmocka_unit_test(broadcast_across_nodes_takes_every_nic),
        cmocka_unit_test(rounds_run_one_after_another),
        cmocka_unit_test(real_plans_never_beat_the_bound),
        cmocka_unit_test(batching_never_beats_the_bound),
        cmocka_unit_test(tolerance_out_of_range_is_refused),
        cmocka_unit_test(network_sends_take_the_communicators_channels),
    };
    return cmocka_run_group_tests_name("simulate", tests, NULL, NULL);
}
