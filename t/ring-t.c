/* NCCL's rings (sim/ring.c): channel counts of doc/research/nccl-collectives.md 1.3, the ring
 * rules 6(C)(2)-(4) on the DGX H100 and GB200 NVL72 presets, the tuner's figures of 5.4 and
 * 6(A), and rf_ring_time against closed forms computed by hand in the comments. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ring.h"
#include "topology.h"

/* models/clusters/dgx-h100.lua as models/lib/cluster.lua normalises it (its defaults: NVLink
 * 0.6 us, NIC 2.2 us, switch 0.5 us, efficiencies 0.82 and 0.96). */
static struct rf_cluster dgx_h100(int64_t nodes)
{
    struct rf_cluster c = {.name = "dgx-h100", .source = "t", .nodes = nodes, .gpus_per_node = 8};
    c.hbm_gb = 80;
    c.nvlink.domain_gpus = 8;
    c.nvlink.gbps = 450;
    c.nvlink.latency_us = 0.6;
    c.nic.per_node = 8;
    c.nic.gbps = 50;
    c.nic.latency_us = 2.2;
    c.pcie_gbps = 64;
    c.fabric.nodes_per_leaf = 32;
    c.fabric.oversubscription = 1;
    c.fabric.switch_latency_us = 0.5;
    c.fabric.pxn = true;
    c.cal.nvlink_efficiency = 0.82;
    c.cal.nic_efficiency = 0.96;
    c.cal.message_latency_us = 6;
    c.cal.nvl_channels_per_peer = 32;
    c.cal.p2p_channels = 32;
    c.cal.channel_gbps = 14;
    c.cal.nvl_chunk_kib = 512;
    c.cal.net_chunk_kib = 128;
    c.cal.memcpy_gbps = 1340;
    c.cal.quant_gbps = 1340;
    c.cal.tensor_overhead_us = 10;
    c.cal.bucket_overhead_us = 50;
    c.cal.streams = 2;
    return c;
}

/* models/clusters/gb200-nvl72.lua: trays of 4 GPUs and 4 NICs, 72 GPUs per NVLink domain. */
static struct rf_cluster gb200(int64_t racks)
{
    struct rf_cluster c = dgx_h100(18 * racks);
    c.name = "gb200-nvl72";
    c.gpus_per_node = 4;
    c.hbm_gb = 186;
    c.nvlink.domain_gpus = 72;
    c.nvlink.gbps = 900;
    c.nic.per_node = 4;
    c.cal.nvlink_efficiency = 0.80;
    c.cal.net_chunk_kib = 256;
    c.cal.memcpy_gbps = 3200;
    c.cal.quant_gbps = 3200;
    return c;
}

struct fix {
    struct rf_cluster cl;
    struct rf_topology topo;
    struct rf_ring ring;
};

/* The ring of the GPUs listed (rank order), on cluster cl. */
static void build(struct fix *f, struct rf_cluster cl, const int32_t *gpus, size_t n)
{
    struct rf_error err = {0};
    f->cl = cl;
    assert_int_equal(rf_topology_init(&f->topo, &f->cl, &err), 0);
    int rc = rf_ring_init(&f->ring, &f->topo, gpus, n, &err);
    if (rc < 0)
        fail_msg("%s", err.msg);
}

/* GPUs first, first + 1, ... (count of them). */
static void build_range(struct fix *f, struct rf_cluster cl, int32_t first, int32_t count)
{
    int32_t *g = malloc((size_t)count * sizeof(*g));
    assert_non_null(g);
    for (int32_t i = 0; i < count; i++)
        g[i] = first + i;
    build(f, cl, g, (size_t)count);
    free(g);
}

static void done(struct fix *f)
{
    rf_ring_release(&f->ring);
    rf_topology_release(&f->topo);
}

static void expect(const struct rf_ring *r, int32_t nodes, int32_t cg, double bw, int32_t c,
                   bool same)
{
    assert_int_equal(r->n_nodes, nodes);
    assert_int_equal(r->search_channels, cg);
    assert_true(r->channel_gbps == bw);
    assert_int_equal(r->channels, c);
    assert_int_equal(r->same_channels, same);
}

/* 1.3's rows. */
static void channel_counts_follow_the_search(void **state)
{
    (void)state;
    struct fix f;
    /* One DGX H100: 6 NVLink rings at 60 GB/s duplicated to 12 at 30, C = 24. */
    build_range(&f, dgx_h100(4), 8, 8);
    expect(&f.ring, 1, 12, 30, 24, true);
    assert_int_equal(f.ring.min_local, 8);
    done(&f);
    /* 2 x 8 with a CX-7 per GPU: 8 rings at 48, no duplication (48 < 50, 8 > 4), C = 16. */
    build_range(&f, dgx_h100(4), 0, 16);
    expect(&f.ring, 2, 8, 48, 16, false);
    assert_int_equal(f.ring.min_nics, 8);
    done(&f);
    /* k = 1, 2, 4 members per node on 3 nodes: k rings at 48 duplicated to 2k at 24, C = 4k
     * (24 is not above 45: no Hopper doubling). */
    for (int32_t k = 1; k <= 4; k *= 2) {
        int32_t g[12];
        for (int32_t n = 0; n < 3; n++)
            for (int32_t i = 0; i < k; i++)
                g[n * k + i] = n * 8 + 2 * i; /* every other GPU: each with its own NIC */
        build(&f, dgx_h100(4), g, (size_t)(3 * k));
        expect(&f.ring, 3, 2 * k, 24, 4 * k, false);
        assert_int_equal(f.ring.min_local, k);
        done(&f);
    }
    /* k = 6: 6 rings at 48, no duplication, C = 12 doubled (48 > 45, 12 < 16) to 24. */
    {
        int32_t g[12];
        for (int32_t i = 0; i < 12; i++)
            g[i] = i / 6 * 8 + i % 6;
        build(&f, dgx_h100(4), g, 12);
        expect(&f.ring, 2, 6, 48, 24, false);
        done(&f);
    }
    /* A lone root and 3 full nodes: the least-populated node has one NIC, so C_g 2 at 24,
     * C = 4, N = 25 (5.4's row). */
    {
        int32_t g[25];
        g[0] = 0;
        for (int32_t i = 0; i < 24; i++)
            g[1 + i] = 8 + i;
        build(&f, dgx_h100(4), g, 25);
        expect(&f.ring, 4, 2, 24, 4, false);
        assert_int_equal(f.ring.n_ranks, 25);
        assert_int_equal(f.ring.min_local, 1);
        done(&f);
    }
    /* One NVL72 domain (72 ranks over 18 trays): one NCCL node, Blackwell's 8 rings at 90
     * duplicated to 16 at 45, C = 32. */
    build_range(&f, gb200(2), 0, 72);
    expect(&f.ring, 1, 16, 45, 32, true);
    assert_true(f.ring.blackwell);
    done(&f);
    /* Two NVL72 racks: 72 member NICs each, capped by 32 and by floor(900 / 48) = 18 rings
     * at 48; no duplication above 4; C = 36. */
    build_range(&f, gb200(2), 0, 144);
    expect(&f.ring, 2, 18, 48, 36, false);
    done(&f);
}

static void bad_members_are_refused(void **state)
{
    (void)state;
    struct rf_cluster cl = dgx_h100(2);
    struct rf_topology t;
    struct rf_ring r;
    struct rf_error err = {0};
    assert_int_equal(rf_topology_init(&t, &cl, &err), 0);
    int32_t twice[] = {3, 5, 3};
    assert_int_equal(rf_ring_init(&r, &t, twice, 3, &err), RF_EINVAL);
    assert_string_equal(err.msg, "ring: GPU 3 is rank 0 and rank 2");
    int32_t outside[] = {3, 16};
    assert_int_equal(rf_ring_init(&r, &t, outside, 2, &err), RF_EINVAL);
    assert_string_equal(err.msg, "ring: rank 1 is GPU 16, not one of the 16");
    rf_topology_release(&t);
}

/* Node order follows the first rank: GPUs of node 1 listed first make it NCCL's node 0. */
static void nodes_are_numbered_by_first_rank(void **state)
{
    (void)state;
    struct fix f;
    int32_t g[16];
    for (int32_t i = 0; i < 16; i++)
        g[i] = (i + 8) % 16; /* ranks 0-7 on GPUs 8-15 */
    build(&f, dgx_h100(2), g, 16);
    int32_t want0[] = {8, 9, 10, 11, 12, 13, 14, 15, 7, 6, 5, 4, 3, 2, 1, 0};
    int32_t out[16];
    assert_int_equal(rf_ring_chain(&f.ring, 0, 8, out), 0);
    assert_memory_equal(out, want0, sizeof(want0));
    done(&f);
}

/* 6(C)(2): on every node, ring pair (2p, 2p + 1) enters at the pair's NICs and leaves on the
 * other's; odd nodes swap the pair, so each hop between nodes joins the same rail. */
static void rings_pair_nics_and_stay_on_rails(void **state)
{
    (void)state;
    struct fix f;
    build_range(&f, dgx_h100(4), 0, 32);
    const struct rf_ring *r = &f.ring;
    assert_int_equal(r->search_channels, 8);
    for (int c = 0; c < 8; c++) {
        const int32_t *ring = r->ring + c * 32;
        for (int n = 0; n < 4; n++) {
            int32_t entry = ring[n * 8], exit = ring[n * 8 + 7];
            int cc = n % 2 ? c ^ 1 : c;
            int p = cc / 2;
            /* Even: enters at 2p, upward, leaves at 2p - 1; odd: the reverse. */
            int32_t want_entry = cc % 2 == 0 ? 2 * p : (2 * p + 7) % 8;
            int32_t want_exit = cc % 2 == 0 ? (2 * p + 7) % 8 : 2 * p;
            assert_int_equal(entry % 8, want_entry);
            assert_int_equal(exit % 8, want_exit);
            assert_int_equal(entry / 8, n);
            /* Next node's entry (cyclically) is on the exit's rail. */
            int32_t next = ring[(n * 8 + 8) % 32];
            assert_int_equal(f.topo.place[next].rail, f.topo.place[exit].rail);
            for (int i = 1; i < 8; i++) {
                int32_t step = cc % 2 == 0 ? 1 : 7;
                assert_int_equal(ring[n * 8 + i] % 8, (ring[n * 8 + i - 1] % 8 + step) % 8);
            }
        }
    }
    done(&f);
    /* GB200, two racks: GPU i of a rack sits on rail i % 4, so the same rule aligns rails;
     * ring 0 leaves rack 0 at GPU 71 and enters rack 1 at GPU 143 (rail 3 both). */
    build_range(&f, gb200(2), 0, 144);
    for (int c = 0; c < f.ring.search_channels; c++) {
        const int32_t *ring = f.ring.ring + c * 144;
        for (int n = 0; n < 2; n++)
            assert_int_equal(f.topo.place[ring[n * 72 + 71]].rail,
                             f.topo.place[ring[(n * 72 + 72) % 144]].rail);
    }
    assert_int_equal(f.ring.ring[71], 71);
    assert_int_equal(f.ring.ring[72], 143);
    done(&f);
}

static int count_kind(const struct rf_topology *t, const int32_t *links, size_t n,
                      enum rf_link_kind kind)
{
    int k = 0;
    for (size_t i = 0; i < n; i++)
        k += t->links[links[i]].kind == kind;
    return k;
}

/* 6(C)(3): over the C_g rings every NIC of every full node sends one ring and receives one,
 * and no ring enters and leaves a node on the same NIC. */
static void rings_spread_over_every_nic(void **state)
{
    (void)state;
    struct fix f;
    struct rf_error err = {0};
    build_range(&f, dgx_h100(4), 0, 32);
    struct rf_ring_paths ps;
    assert_int_equal(rf_ring_paths_init(&ps, &f.ring, &f.topo, RF_COLL_OP_ALLGATHER, 0, &err), 0);
    int *use = calloc(f.topo.n_links, sizeof(int));
    assert_non_null(use);
    for (int c = 0; c < ps.n; c++)
        for (size_t i = ps.start[c]; i < ps.start[c + 1]; i++)
            use[ps.links[i]]++;
    for (int64_t nic = 0; nic < 32; nic++) {
        assert_int_equal(use[rf_topology_link(&f.topo, RF_LINK_NIC_OUT, nic)], 1);
        assert_int_equal(use[rf_topology_link(&f.topo, RF_LINK_NIC_IN, nic)], 1);
    }
    for (int c = 0; c < 8; c++)
        for (int n = 0; n < 4; n++)
            assert_int_not_equal(f.topo.place[f.ring.ring[c * 32 + n * 8]].nic,
                                 f.topo.place[f.ring.ring[c * 32 + n * 8 + 7]].nic);
    /* Every channel's share on a NIC: 48 GB/s under 2 of the 16 channels (one ring, its 2
     * copies), below NVLink's 369 GB/s under 7 rings x 2. */
    for (int c = 0; c < ps.n; c++)
        assert_true(fabs(ps.share[c] - 24e9) < 1);
    free(use);
    rf_ring_paths_release(&ps);
    done(&f);
}

/* 6(C)(4) and 2.5: the chain from a root has N - 1 hops and crosses the network nNodes times,
 * or nNodes - 1 when the root is its node's entry on that ring. A root in the middle of its
 * node sends to the rest of its node, the other nodes, then back into its node's first. */
static void chains_follow_the_ring_from_the_root(void **state)
{
    (void)state;
    struct fix f;
    build_range(&f, dgx_h100(4), 0, 16);
    int32_t out[16];
    assert_int_equal(rf_ring_chain(&f.ring, 0, 3, out), 0);
    int32_t want[] = {3, 4, 5, 6, 7, 15, 14, 13, 12, 11, 10, 9, 8, 0, 1, 2};
    assert_memory_equal(out, want, sizeof(want));
    assert_int_equal(rf_ring_chain(&f.ring, 1, 3, out), 0);
    int32_t want1[] = {3, 2, 1, 0, 8, 9, 10, 11, 12, 13, 14, 15, 7, 6, 5, 4};
    assert_memory_equal(out, want1, sizeof(want1));
    assert_int_equal(rf_ring_chain(&f.ring, 8, 3, out), RF_EINVAL);
    assert_int_equal(rf_ring_chain(&f.ring, 0, 16, out), RF_EINVAL);
    int32_t *links = malloc(rf_ring_links_max(&f.ring) * sizeof(*links));
    assert_non_null(links);
    for (int32_t root = 0; root < 16; root++)
        for (int c = 0; c < 8; c++) {
            double lat;
            size_t n = rf_ring_chain_links(&f.ring, &f.topo, c, root, links, &lat);
            assert_int_equal(rf_ring_chain(&f.ring, c, root, out), 0);
            bool entry = out[0] == f.ring.ring[c * 16 + (root / 8) * 8];
            int net = count_kind(&f.topo, links, n, RF_LINK_NIC_OUT);
            assert_int_equal(net, entry ? 1 : 2);
            assert_int_equal(count_kind(&f.topo, links, n, RF_LINK_NIC_IN), net);
            /* 15 hops: the others over NVLink (out of each sender, into each receiver). */
            assert_int_equal(count_kind(&f.topo, links, n, RF_LINK_NVL_OUT), 15 - net);
            assert_int_equal(count_kind(&f.topo, links, n, RF_LINK_NVL_IN), 15 - net);
            /* Latencies: NVLink 0.6 us a hop, a network hop 2.2 + one leaf switch 0.5. */
            double want_lat = (15 - net) * 0.6e-6 + net * 2.7e-6;
            assert_true(fabs(lat - want_lat) < 1e-12);
        }
    free(links);
    done(&f);
}

/* A chain's links come back each once (sorted, no repeats), leaf links included: 4 nodes,
 * one per leaf group. */
static void chain_links_are_held_once(void **state)
{
    (void)state;
    struct fix f;
    struct rf_cluster cl = dgx_h100(4);
    cl.fabric.nodes_per_leaf = 1;
    build_range(&f, cl, 0, 32);
    int32_t *links = malloc(rf_ring_links_max(&f.ring) * sizeof(*links));
    assert_non_null(links);
    size_t n = rf_ring_chain_links(&f.ring, &f.topo, 0, 0, links, NULL);
    for (size_t i = 1; i < n; i++)
        assert_true(links[i] > links[i - 1]);
    /* Ring 0 from GPU 0 crosses 3 node boundaries, on rails 7, 0, 7: leaf groups 0 -> 1
     * on rail 7, 1 -> 2 on rail 0, 2 -> 3 on rail 7: 3 uplinks, 3 downlinks, distinct. */
    assert_int_equal(count_kind(&f.topo, links, n, RF_LINK_LEAF_UP), 3);
    assert_int_equal(count_kind(&f.topo, links, n, RF_LINK_LEAF_DOWN), 3);
    free(links);
    done(&f);
}

static double us(double s)
{
    return s * 1e6;
}

/* 6(A)'s test values and 5.4's crossovers. */
static void tuner_matches_nccl(void **state)
{
    (void)state;
    struct fix f;
    enum rf_nccl_proto p;
    const int64_t GiB = INT64_C(1) << 30;
    build_range(&f, dgx_h100(4), 0, 8);
    /* 11.8 + 2^30 / 360000 = 2994.4 us, Simple. */
    assert_true(fabs(us(rf_ring_nccl_time(&f.ring, RF_COLL_OP_BROADCAST, GiB, &p)) - 2994.416) <
                1e-3);
    assert_int_equal(p, RF_NCCL_SIMPLE);
    /* LL (7.2 + S / 141000) against Simple (11.8 + S / 360000): equal at S = 4.6 / (1/141000
     * - 1/360000) = 1,066,210 B; LL128 (15.9 + S / 331200) never wins. */
    rf_ring_nccl_time(&f.ring, RF_COLL_OP_BROADCAST, 1060000, &p);
    assert_int_equal(p, RF_NCCL_LL);
    rf_ring_nccl_time(&f.ring, RF_COLL_OP_BROADCAST, 1070000, &p);
    assert_int_equal(p, RF_NCCL_SIMPLE);
    /* All-gather, one node: Simple 32.2 + (7/8) S / 360000 (5.4: 411.4 GB/s of output). */
    assert_true(fabs(us(rf_ring_nccl_time(&f.ring, RF_COLL_OP_ALLGATHER, GiB, &p)) -
                     (32.2 + 7.0 / 8 * (double)GiB / 360000)) < 1e-6);
    assert_int_equal(p, RF_NCCL_SIMPLE);
    done(&f);

    build_range(&f, dgx_h100(4), 0, 16);
    /* 232.4 + 2^30 / 384000 = 3028.6 us. */
    assert_true(fabs(us(rf_ring_nccl_time(&f.ring, RF_COLL_OP_BROADCAST, GiB, &p)) - 3028.603) <
                1e-3);
    assert_int_equal(p, RF_NCCL_SIMPLE);
    /* LL 49.8 + S/39000, LL128 78 + S/293600, Simple 232.4 + S/384000: LL to LL128 at
     * 28.2 / (1/39000 - 1/293600) = 1,268,291 B; LL128 to Simple at 154.4 / (1/293600 -
     * 1/384000) = 192,563,717 B. */
    rf_ring_nccl_time(&f.ring, RF_COLL_OP_BROADCAST, 1260000, &p);
    assert_int_equal(p, RF_NCCL_LL);
    rf_ring_nccl_time(&f.ring, RF_COLL_OP_BROADCAST, 1280000, &p);
    assert_int_equal(p, RF_NCCL_LL128);
    rf_ring_nccl_time(&f.ring, RF_COLL_OP_BROADCAST, 192000000, &p);
    assert_int_equal(p, RF_NCCL_LL128);
    rf_ring_nccl_time(&f.ring, RF_COLL_OP_BROADCAST, 193000000, &p);
    assert_int_equal(p, RF_NCCL_SIMPLE);
    /* All-gather 2 x 8, Simple: 8.4 + 14 x max(3.4, 3) + 14 = 70.0 us (5.4). */
    assert_true(fabs(us(rf_ring_nccl_time(&f.ring, RF_COLL_OP_ALLGATHER, 4 * GiB, &p)) -
                     (70.0 + 15.0 / 16 * 4 * (double)GiB / 384000)) < 1e-6);
    done(&f);

    /* 8 x 8: LL128 (270 + S/293600) to Simple (904.4 + S/384000) at 634.4 / (1/293600 -
     * 1/384000) = 791,210,765 B. */
    build_range(&f, dgx_h100(8), 0, 64);
    rf_ring_nccl_time(&f.ring, RF_COLL_OP_BROADCAST, 790000000, &p);
    assert_int_equal(p, RF_NCCL_LL128);
    rf_ring_nccl_time(&f.ring, RF_COLL_OP_BROADCAST, 792000000, &p);
    assert_int_equal(p, RF_NCCL_SIMPLE);
    done(&f);

    /* Lone root + 3 full nodes, all-gather LL: 6.6 + 21 x 1 + 3 x 2.7 = 35.7 us at 20.4 GB/s
     * bus bandwidth (llMaxBw beyond 2 nodes). */
    {
        int32_t g[25];
        g[0] = 0;
        for (int32_t i = 0; i < 24; i++)
            g[1 + i] = 8 + i;
        build(&f, dgx_h100(4), g, 25);
        assert_true(fabs(us(rf_ring_nccl_time(&f.ring, RF_COLL_OP_ALLGATHER, 25000, &p)) -
                         (35.7 + 24.0 / 25 * 25000 / 20400)) < 1e-6);
        assert_int_equal(p, RF_NCCL_LL);
        done(&f);
    }

    /* One NVL72 domain: Simple 11.8 + S / 720000. */
    build_range(&f, gb200(1), 0, 72);
    assert_true(fabs(us(rf_ring_nccl_time(&f.ring, RF_COLL_OP_BROADCAST, GiB, &p)) -
                     (11.8 + (double)GiB / 720000)) < 1e-6);
    assert_int_equal(p, RF_NCCL_SIMPLE);
    /* All-gather LL latency 6.6 + 71 x 0.6 = 49.2 us at min(282, 360) GB/s. */
    assert_true(fabs(us(rf_ring_nccl_time(&f.ring, RF_COLL_OP_ALLGATHER, 72000, &p)) -
                     (49.2 + 71.0 / 72 * 72000 / 282000)) < 1e-6);
    assert_int_equal(p, RF_NCCL_LL);
    done(&f);
}

/* rf_ring_time's closed forms on the DGX H100 preset (NVLink 450 x 0.82 = 369 GB/s, NIC
 * 50 x 0.96 = 48 GB/s, both nodes under one leaf). */
static void model_time_has_closed_forms(void **state)
{
    (void)state;
    struct fix f;
    enum rf_nccl_proto p;
    const double GiB = 1073741824.0;
    /* 2 x 8, 1 GiB broadcast from rank 0, Simple: each channel's least share is a NIC's
     * 48 GB/s over one ring's 2 copies, 24 GB/s (NVLink: 369 / (7 rings x 2) = 26.4). Each
     * of the 8 rings carries 2^30 / 8 at 2 x 24; latency 232.4 us; fill 14 x 512 KiB / 24e9. */
    build_range(&f, dgx_h100(4), 0, 16);
    double want = 232.4e-6 + 14 * 524288.0 / 24e9 + GiB / 8 / 48e9;
    assert_true(fabs(rf_ring_time(&f.ring, &f.topo, RF_COLL_OP_BROADCAST, (int64_t)GiB, &p) -
                     want) < 1e-12);
    assert_int_equal(p, RF_NCCL_SIMPLE);
    /* 100 MB goes LL128: x 15/16, chunks of 576,000 B, latency 78 us. */
    want = 78e-6 + 14 * 576000.0 / (24e9 * 15 / 16) + 1e8 / 8 / (48e9 * 15 / 16);
    assert_true(fabs(rf_ring_time(&f.ring, &f.topo, RF_COLL_OP_BROADCAST, 100000000, &p) - want) <
                1e-12);
    assert_int_equal(p, RF_NCCL_LL128);
    done(&f);
    /* One node, 1 GiB all-gather, Simple: the 12 identical rings share every GPU's NVLink,
     * 369 GB/s over 24 channels = 15.375 GB/s each; each ring carries 7/8 of 2^30 / 12 at
     * 2 x 15.375; latency 32.2 us; no fill (every rank sends its own slice from the first
     * step). */
    build_range(&f, dgx_h100(4), 0, 8);
    want = 32.2e-6 + GiB / 12 * 7 / 8 / 30.75e9;
    assert_true(fabs(rf_ring_time(&f.ring, &f.topo, RF_COLL_OP_ALLGATHER, (int64_t)GiB, &p) -
                     want) < 1e-12);
    assert_int_equal(p, RF_NCCL_SIMPLE);
    /* One rank or no bytes: nothing to move. */
    assert_true(rf_ring_time(&f.ring, &f.topo, RF_COLL_OP_BROADCAST, 0, &p) == 0);
    done(&f);
    build_range(&f, dgx_h100(1), 5, 1);
    assert_true(rf_ring_time(&f.ring, &f.topo, RF_COLL_OP_BROADCAST, 1000, &p) == 0);
    done(&f);
}

/* Measured nccl-tests figures: a ring all-gather and a ring all-reduce share NCCL's C_g x bw,
 * so the busbw of a large all-gather on the cluster's calibrated links (NVLink 450 x 0.82,
 * NIC 50 x 0.96) must land on the published all-reduce rows: HGX H100 one node ~370 GB/s
 * (ASTRA-sim's HGX-H100 validation: 741 bidirectional), 2 x 8 nodes 383.8-392.8 and 8 nodes
 * 356.0-386.6 (github.com/coreweave/nccl-tests, README). */
static void allgather_busbw_meets_nccl_tests(void **state)
{
    (void)state;
    struct {
        int64_t nodes;
        double lo, hi;
    } rows[] = {{1, 370 * 0.97, 370 * 1.03}, {2, 383.8 * 0.99, 392.8}, {8, 356.0, 386.6}};
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct fix f;
        enum rf_nccl_proto p;
        int32_t n = (int32_t)rows[i].nodes * 8;
        build_range(&f, dgx_h100(rows[i].nodes), 0, n);
        double bytes = 8e9,
               t = rf_ring_time(&f.ring, &f.topo, RF_COLL_OP_ALLGATHER, (int64_t)bytes, &p);
        double busbw = bytes / t * (n - 1.0) / n / 1e9;
        print_message("%lld node(s): all-gather busbw %.1f GB/s (nccl-tests %.1f-%.1f)\n",
                      (long long)rows[i].nodes, busbw, rows[i].lo, rows[i].hi);
        assert_true(busbw >= rows[i].lo && busbw <= rows[i].hi);
        assert_int_equal(p, RF_NCCL_SIMPLE);
        done(&f);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(channel_counts_follow_the_search),
        cmocka_unit_test(allgather_busbw_meets_nccl_tests),
        cmocka_unit_test(bad_members_are_refused),
        cmocka_unit_test(nodes_are_numbered_by_first_rank),
        cmocka_unit_test(rings_pair_nics_and_stay_on_rails),
        cmocka_unit_test(rings_spread_over_every_nic),
        cmocka_unit_test(chains_follow_the_ring_from_the_root),
        cmocka_unit_test(chain_links_are_held_once),
        cmocka_unit_test(tuner_matches_nccl),
        cmocka_unit_test(model_time_has_closed_forms),
    };
    return cmocka_run_group_tests_name("ring", tests, NULL, NULL);
}
