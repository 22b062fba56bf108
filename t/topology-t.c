/* Topology: rf_topology_init checks the cluster itself, whoever filled it (Lua, calibration,
 * a test): sizes whose products overflow or pass 2^20 GPUs, and rates or latencies that are
 * not finite, are refused with the field named; figures built on it stay finite. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <string.h>

#include "bound.h"
#include "checked.h"
#include "fixtures.h"
#include "topology.h"

/* 4 nodes of 8 GPUs, one NVLink domain per node, a NIC per GPU. */
static struct rf_cluster cluster(void)
{
    struct rf_cluster c = {.name = "t", .source = "t", .nodes = 4, .gpus_per_node = 8};
    c.hbm_gb = 80;
    c.nvlink.domain_gpus = 8;
    c.nvlink.gbps = 450;
    c.nvlink.latency_us = 0.6;
    c.nic.per_node = 8;
    c.nic.gbps = 50;
    c.nic.latency_us = 2.2;
    c.fabric.nodes_per_leaf = 2;
    c.fabric.oversubscription = 1;
    c.fabric.switch_latency_us = 0.5;
    c.cal.nvlink_efficiency = 0.82;
    c.cal.nic_efficiency = 0.96;
    c.cal.message_latency_us = 6;
    c.cal.net_channels_per_peer = 4;
    c.cal.channel_gbps = 14;
    c.cal.nvl_chunk_kib = 512;
    c.cal.net_chunk_kib = 128;
    c.cal.memcpy_gbps = 1000;
    c.cal.quant_gbps = 1000;
    c.cal.tensor_overhead_us = 10;
    c.cal.bucket_overhead_us = 50;
    c.cal.streams = 2;
    return c;
}

#define I64(field) offsetof(struct rf_cluster, field)

static void sizes_are_bounded(void **state)
{
    (void)state;
    static const struct {
        size_t field, field2; /* field2: a second field set to the same value, or 0 */
        int64_t value;
        const char *want;
    } rows[] = {
        {I64(nodes), 0, INT64_C(1) << 18,
         "cluster.nodes: 262144 nodes x 8 GPUs, more than the 1048576 GPUs refit supports"},
        /* 2^20 x 2^20 = 2^40 GPUs: each factor within bounds, the product not. */
        {I64(nodes), I64(gpus_per_node), INT64_C(1) << 20,
         "cluster.nodes: 1048576 nodes x 1048576 GPUs, more than the 1048576 GPUs refit "
         "supports"},
        {I64(nodes), 0, INT64_C(1) << 40, "cluster.nodes: 1099511627776, expected 1 to 1048576"},
        {I64(gpus_per_node), 0, 0, "cluster.gpus_per_node: 0, expected 1 to 1048576"},
        {I64(nic.per_node), 0, INT64_C(1) << 19,
         "cluster.nic.per_node: 4 nodes x 524288 NICs, more than 1048576 NICs"},
        {I64(nic.per_node), 0, -1, "cluster.nic.per_node: -1, expected 0 to 1048576"},
        {I64(nvlink.domain_gpus), 0, INT64_MAX,
         "cluster.nvlink.domain_gpus: 9223372036854775807, expected 1 to 1048576"},
        {I64(fabric.nodes_per_leaf), 0, 0,
         "cluster.fabric.nodes_per_leaf: 0, expected 1 to 9223372036854775807"},
        {I64(cal.streams), 0, INT64_C(1) << 32,
         "cluster.calibration.streams: 4294967296, expected 1 to 2147483647"},
        {I64(cal.net_channels_per_peer), 0, -2,
         "cluster.calibration.net_channels_per_peer: -2, expected 0 to 1048576"},
        {I64(cal.nvl_channels_per_peer), 0, -1,
         "cluster.calibration.nvl_channels_per_peer: -1, expected 0 to 1048576"},
        {I64(cal.p2p_channels), 0, INT64_C(1) << 21,
         "cluster.calibration.p2p_channels: 2097152, expected 0 to 1048576"},
        {I64(nic.per_node), 0, 0,
         "cluster.nic.per_node: 0, but 32 GPUs are more than one NVLink domain of 8"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct rf_cluster c = cluster();
        struct rf_topology t;
        struct rf_error err = {0};
        *(int64_t *)((char *)&c + rows[i].field) = rows[i].value;
        if (rows[i].field2)
            *(int64_t *)((char *)&c + rows[i].field2) = rows[i].value;
        assert_int_equal(rf_topology_init(&t, &c, &err), RF_EINVAL);
        assert_string_equal(err.msg, rows[i].want);
        assert_null(t.links);
    }
    /* A leaf group count near INT64_MAX once overflowed its rounding up. */
    struct rf_cluster c = cluster();
    struct rf_topology t;
    struct rf_error err = {0};
    c.fabric.nodes_per_leaf = INT64_MAX;
    assert_int_equal(rf_topology_init(&t, &c, &err), 0);
    assert_int_equal(t.leaves, 8);
    rf_topology_release(&t);
}

#define F64(field) offsetof(struct rf_cluster, field)

static void rates_and_latencies_are_finite(void **state)
{
    (void)state;
    static const struct {
        size_t field;
        double value;
        const char *want;
    } rows[] = {
        {F64(nic.gbps), 1e300,
         "cluster.nic.gbps: 1e+300 is not a finite rate (above 0, at most 1e+06)"},
        {F64(nic.gbps), NAN, "cluster.nic.gbps: nan is not a finite rate (above 0, at most 1e+06)"},
        {F64(nic.gbps), 0, "cluster.nic.gbps: 0 is not a finite rate (above 0, at most 1e+06)"},
        {F64(nvlink.gbps), INFINITY,
         "cluster.nvlink.gbps: inf is not a finite rate (above 0, at most 1e+06)"},
        {F64(nvlink.gbps), -450,
         "cluster.nvlink.gbps: -450 is not a finite rate (above 0, at most 1e+06)"},
        {F64(cal.memcpy_gbps), NAN,
         "cluster.calibration.memcpy_gbps: nan is not a finite rate (above 0, at most 1e+06)"},
        {F64(cal.quant_gbps), 0,
         "cluster.calibration.quant_gbps: 0 is not a finite rate (above 0, at most 1e+06)"},
        {F64(cal.channel_gbps), INFINITY,
         "cluster.calibration.channel_gbps: inf is not a finite rate (above 0, at most 1e+06)"},
        {F64(cal.nic_efficiency), 1.5,
         "cluster.calibration.nic_efficiency: 1.5 is not a finite rate (above 0, at most 1)"},
        {F64(cal.nvlink_efficiency), 0,
         "cluster.calibration.nvlink_efficiency: 0 is not a finite rate (above 0, at most 1)"},
        {F64(fabric.oversubscription), NAN,
         "cluster.fabric.oversubscription: nan, expected 1 to 1e+06"},
        {F64(fabric.oversubscription), 1e-300,
         "cluster.fabric.oversubscription: 1e-300, expected 1 to 1e+06"},
        {F64(cal.message_latency_us), INFINITY,
         "cluster.calibration.message_latency_us: inf is not a finite latency (0 to 1e+09 us)"},
        {F64(nic.latency_us), -1,
         "cluster.nic.latency_us: -1 is not a finite latency (0 to 1e+09 us)"},
        {F64(fabric.switch_latency_us), NAN,
         "cluster.fabric.switch_latency_us: nan is not a finite latency (0 to 1e+09 us)"},
        {F64(cal.bucket_overhead_us), 1e300,
         "cluster.calibration.bucket_overhead_us: 1e+300 is not a finite latency (0 to 1e+09 us)"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct rf_cluster c = cluster();
        struct rf_topology t;
        struct rf_error err = {0};
        *(double *)((char *)&c + rows[i].field) = rows[i].value;
        assert_int_equal(rf_topology_init(&t, &c, &err), RF_EINVAL);
        assert_string_equal(err.msg, rows[i].want);
    }
    /* Without NICs their rate builds no link: a localhost cluster's 0 GB/s is fine. */
    struct rf_cluster c = cluster();
    struct rf_topology t;
    struct rf_error err = {0};
    c.nodes = 1;
    c.nic.per_node = 0;
    c.nic.gbps = 0;
    assert_int_equal(rf_topology_init(&t, &c, &err), 0);
    for (size_t l = 0; l < t.n_links; l++)
        assert_true(isfinite(t.links[l].capacity) && t.links[l].capacity > 0);
    rf_topology_release(&t);
}

/* 2-GPU NVLink domains under one NIC per 4-GPU node: the second domain of a node has no NIC
 * of its own but receives through the node's; its ingress is that NIC, not 0 (which once
 * stored an infinite lower bound). */
static void domains_sharing_a_nic_have_a_finite_bound(void **state)
{
    (void)state;
    struct rf_cluster c = cluster();
    c.nodes = 2;
    c.gpus_per_node = 4;
    c.nvlink.domain_gpus = 2;
    c.nic.per_node = 1;
    struct rf_topology t;
    struct rf_error err = {0};
    assert_int_equal(rf_topology_init(&t, &c, &err), 0);
    struct rf_tensor ts[] = {tensor("n", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 1024, 0, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 1};
    struct rf_side tr = train_side(4, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(1, 1, 1, 1, 4, 4, 1, RF_DT_BF16);
    struct rf_plan p;
    double bound;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
    assert_int_equal(rf_lower_bound(&p, &tr, &in, &t, &bound, &err), 0);
    /* Each of domains 2 and 3 needs the 2048 bytes once, through node 1's one NIC. */
    double want = 2048 / (c.nic.gbps * 1e9 * c.cal.nic_efficiency);
    assert_true(fabs(bound - want) <= 1e-12 * want);
    rf_plan_release(&p);
    rf_side_release(&tr);
    rf_side_release(&in);
    rf_topology_release(&t);
}

/* Route latencies by hand (0.6 us NVLink, 2.2 us NIC to NIC, 0.5 us per switch; 2 nodes per
 * leaf): nic.latency_us is paid once per network message, plus each switch it crosses. */
static void route_latencies_match_a_hand_computation(void **state)
{
    (void)state;
    struct rf_cluster c = cluster();
    struct rf_topology t;
    struct rf_error err = {0};
    struct rf_route r;
    static const struct {
        bool pxn;
        int64_t src, dst;
        double want_us;
        int hops;
    } rows[] = {
        {true, 0, 5, 0.6, 2},              /* one NVLink domain: NVLink out, in */
        {true, 0, 8, 2.2 + 0.5, 2},        /* rail 0 of nodes 0 and 1: one leaf */
        {false, 0, 9, 2.2 + 3 * 0.5, 4},   /* rail 0 -> rail 1: leaf, spine, leaf */
        {false, 0, 16, 2.2 + 3 * 0.5, 4},  /* rail 0 of leaf groups 0 and 1 */
        {true, 0, 9, 0.6 + 2.2 + 0.5, 4},  /* PXN: over NVLink to GPU 1, then rail 1's leaf */
        {true, 0, 17, 0.6 + 2.2 + 1.5, 6}, /* PXN to rail 1, then leaf group 0 -> 1 */
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        c.fabric.pxn = rows[i].pxn;
        assert_int_equal(rf_topology_init(&t, &c, &err), 0);
        rf_topology_route(&t, rows[i].src, rows[i].dst, &r);
        if (fabs(r.latency_s - rows[i].want_us * 1e-6) > 1e-15)
            fail_msg("route %lld -> %lld: %.15g us, want %.15g", (long long)rows[i].src,
                     (long long)rows[i].dst, r.latency_s * 1e6, rows[i].want_us);
        assert_int_equal(r.n, rows[i].hops);
        assert_int_equal(r.fabric, rows[i].want_us > 0.6);
        rf_topology_release(&t);
    }
    /* The PXN route's links: GPU 0's NVLink out, GPU 1's in, node 0's NIC 1, node 1's NIC 1. */
    c.fabric.pxn = true;
    assert_int_equal(rf_topology_init(&t, &c, &err), 0);
    rf_topology_route(&t, 0, 9, &r);
    assert_int_equal(r.link[0], rf_topology_link(&t, RF_LINK_NVL_OUT, 0));
    assert_int_equal(r.link[1], rf_topology_link(&t, RF_LINK_NVL_IN, 1));
    assert_int_equal(r.link[2], rf_topology_link(&t, RF_LINK_NIC_OUT, 1));
    assert_int_equal(r.link[3], rf_topology_link(&t, RF_LINK_NIC_IN, 9));
    rf_topology_release(&t);
}

/* NCCL's p2p channel rule (paths.cc, enqueue.cc) by hand, for 50 GB/s NICs at 14 GB/s a
 * channel (4 channels asked per network peer), 32 p2p channels, 128 KiB chunks. */
static void p2p_channels_follow_nccl(void **state)
{
    (void)state;
    struct rf_cluster c = cluster();
    c.nodes = 32; /* 256 GPUs */
    c.fabric.nodes_per_leaf = 32;
    c.cal.net_channels_per_peer = 0; /* NCCL's default */
    c.cal.nvl_channels_per_peer = 32;
    c.cal.p2p_channels = 32;
    struct rf_topology t;
    struct rf_error err = {0};
    struct rf_p2p p;
    const double ch = 14e9, MiB = 1 << 20, KiB = 1 << 10;
    assert_int_equal(rf_topology_init(&t, &c, &err), 0);
    /* One NVLink domain: no network peer, no cap. */
    rf_topology_p2p(&t, 8, 0, &p);
    assert_false(p.spans);
    assert_true(rf_p2p_cap(&p, (int64_t)(64 * MiB)) == 0);
    /* 32 ranks: 4 x ceil(32 / 8) = 16 <= 32 keeps 4 per peer; a send starts from 1 (1 x 32
     * ranks <= 32) and doubles while its parts exceed 128 KiB. */
    rf_topology_p2p(&t, 32, 0, &p);
    assert_true(p.spans);
    assert_int_equal(p.per_peer, 4);
    assert_int_equal(p.min_channels, 1);
    assert_true(rf_p2p_cap(&p, (int64_t)(64 * MiB)) == 4 * ch);
    assert_true(rf_p2p_cap(&p, (int64_t)(100 * KiB)) == 1 * ch);
    assert_true(rf_p2p_cap(&p, (int64_t)(200 * KiB)) == 2 * ch);
    assert_true(rf_p2p_cap(&p, 0) == 1 * ch);
    /* 128 ranks: 4 x 16 = 64 > 32 halves to 2 (2 x 16 = 32); 129 ranks: 2 x 17 > 32 -> 1. */
    rf_topology_p2p(&t, 128, 0, &p);
    assert_int_equal(p.per_peer, 2);
    rf_topology_p2p(&t, 129, 0, &p);
    assert_int_equal(p.per_peer, 1);
    assert_true(rf_p2p_cap(&p, (int64_t)(64 * MiB)) == 1 * ch);
    /* refit-exec configures nChannelsPerNetPeer = the ask (4 for 50 GB/s): no halving, and
     * a 4 MiB relay chunk (parts of 64..128 KiB doubling from 1) gets all 4. */
    assert_int_equal(rf_topology_net_ask(&t), 4);
    rf_topology_p2p(&t, 129, rf_topology_net_ask(&t), &p);
    assert_int_equal(p.per_peer, 4);
    assert_true(rf_p2p_cap(&p, (int64_t)(4 * MiB)) == 4 * ch);
    rf_topology_release(&t);
    /* NCCL_NCHANNELS_PER_NET_PEER=8 set: no halving, only p2p_channels caps it. */
    c.cal.net_channels_per_peer = 8;
    assert_int_equal(rf_topology_init(&t, &c, &err), 0);
    rf_topology_p2p(&t, 256, 0, &p);
    assert_int_equal(p.per_peer, 8);
    assert_true(rf_p2p_cap(&p, (int64_t)(64 * MiB)) == 8 * ch);
    rf_topology_release(&t);
    /* The minimum over peers: NVLink peers asking 2 lower a 4-channel network peer's. */
    c.cal.net_channels_per_peer = 0;
    c.cal.nvl_channels_per_peer = 2;
    assert_int_equal(rf_topology_init(&t, &c, &err), 0);
    rf_topology_p2p(&t, 16, 0, &p);
    assert_int_equal(p.per_peer, 2);
    rf_topology_release(&t);
    /* A 100 GB/s NIC asks ceil(100 / 14) = 8 (a power of two already). */
    c.cal.nvl_channels_per_peer = 32;
    c.nic.gbps = 100;
    assert_int_equal(rf_topology_init(&t, &c, &err), 0);
    rf_topology_p2p(&t, 16, 0, &p);
    assert_int_equal(p.per_peer, 8);
    rf_topology_release(&t);
}

/* Checks the number at the top of L's stack, field table.key of a normalised cluster
 * (table NULL: the top level), against rf_cluster_fields. */
static void check_field(lua_State *L, const char *table, const char *key, size_t *seen)
{
    const struct rf_cluster_field *f = NULL;
    for (size_t i = 0; i < rf_cluster_n_fields && !f; i++)
        if (strcmp(rf_cluster_fields[i].key, key) == 0 &&
            (table ? rf_cluster_fields[i].table && strcmp(rf_cluster_fields[i].table, table) == 0
                   : !rf_cluster_fields[i].table))
            f = &rf_cluster_fields[i];
    if (!f)
        fail_msg("cluster.%s%s%s: in models/lib/cluster.lua, not in rf_cluster_fields "
                 "(sim/topology.c)",
                 table ? table : "", table ? "." : "", key);
    if (f->integer && !lua_isinteger(L, -1))
        fail_msg("cluster.%s%s%s: an integer in C, %s in Lua", table ? table : "", table ? "." : "",
                 key, lua_tostring(L, -1));
    /* A field a stored description may lack reads C's copy of the Lua default (the preset
     * keeps every such default). */
    if (f->since_default > 0 && lua_tonumber(L, -1) != f->since_default)
        fail_msg("cluster.%s%s%s: cluster.lua's default %s, sim/topology.h's %g",
                 table ? table : "", table ? "." : "", key, lua_tostring(L, -1), f->since_default);
    (*seen)++;
}

/* The one C list of the cluster's numeric fields (rf_cluster_fields) is the Lua contract's:
 * every number of a normalised preset from models/lib/cluster.lua is in it (an integer in
 * Lua where C reads one), and it has no other field. A field added to cluster.lua alone, or
 * to the C list alone, fails here. */
static void cluster_fields_match_cluster_lua(void **state)
{
    (void)state;
    lua_State *L = luaL_newstate();
    assert_non_null(L);
    luaL_openlibs(L);
    char code[512];
    snprintf(code, sizeof(code),
             "package.path = '%s/lib/?.lua'; cluster = require('cluster'); "
             "return dofile('%s/clusters/dgx-h100.lua')",
             RF_SOURCE_MODELS_DIR, RF_SOURCE_MODELS_DIR);
    if (luaL_dostring(L, code) != LUA_OK)
        fail_msg("cluster.lua: %s", lua_tostring(L, -1));
    int top = lua_gettop(L);
    size_t seen = 0;
    /* The top level's numbers, then each sub-table's (the contract nests one level). */
    for (lua_pushnil(L); lua_next(L, top) != 0; lua_pop(L, 1)) {
        const char *key = lua_tostring(L, -2);
        if (lua_type(L, -1) == LUA_TNUMBER) {
            check_field(L, NULL, key, &seen);
        } else if (lua_istable(L, -1)) {
            int sub = lua_gettop(L);
            for (lua_pushnil(L); lua_next(L, sub) != 0; lua_pop(L, 1))
                if (lua_type(L, -1) == LUA_TNUMBER)
                    check_field(L, key, lua_tostring(L, -2), &seen);
        }
    }
    lua_close(L);
    assert_int_equal(seen, rf_cluster_n_fields);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sizes_are_bounded),
        cmocka_unit_test(rates_and_latencies_are_finite),
        cmocka_unit_test(domains_sharing_a_nic_have_a_finite_bound),
        cmocka_unit_test(route_latencies_match_a_hand_computation),
        cmocka_unit_test(p2p_channels_follow_nccl),
        cmocka_unit_test(cluster_fields_match_cluster_lua),
    };
    return cmocka_run_group_tests_name("topology", tests, NULL, NULL);
}
