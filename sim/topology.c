/* Links and routes of a cluster. Links of one kind sit in one block of the array, so the
 * link of GPU g or NIC n is an addition, and a route is built without any search. */
#include "topology.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"

/* One list of the normalised cluster's numeric fields (topology.h): the Lua reader
 * (sim/scenario.c), the run's description and its reader (sim/describe.c) and calibrate's
 * checks (sim/calibrate.c) all walk it, so none can miss a field. */
const struct rf_cluster_field rf_cluster_fields[] = {
    {NULL, "nodes", true, offsetof(struct rf_cluster, nodes), 0},
    {NULL, "gpus_per_node", true, offsetof(struct rf_cluster, gpus_per_node), 0},
    {NULL, "hbm_gb", false, offsetof(struct rf_cluster, hbm_gb), 0},
    {"nvlink", "domain_gpus", true, offsetof(struct rf_cluster, nvlink.domain_gpus), 0},
    {"nvlink", "gbps", false, offsetof(struct rf_cluster, nvlink.gbps), 0},
    {"nvlink", "latency_us", false, offsetof(struct rf_cluster, nvlink.latency_us), 0},
    {"nic", "per_node", true, offsetof(struct rf_cluster, nic.per_node), 0},
    {"nic", "gbps", false, offsetof(struct rf_cluster, nic.gbps), 0},
    {"nic", "latency_us", false, offsetof(struct rf_cluster, nic.latency_us), 0},
    {"pcie", "gbps", false, offsetof(struct rf_cluster, pcie_gbps), 0},
    {"fabric", "nodes_per_leaf", true, offsetof(struct rf_cluster, fabric.nodes_per_leaf), 0},
    {"fabric", "oversubscription", false, offsetof(struct rf_cluster, fabric.oversubscription), 0},
    {"fabric", "switch_latency_us", false, offsetof(struct rf_cluster, fabric.switch_latency_us),
     0},
    {"calibration", "nvlink_efficiency", false, offsetof(struct rf_cluster, cal.nvlink_efficiency),
     0},
    {"calibration", "nic_efficiency", false, offsetof(struct rf_cluster, cal.nic_efficiency), 0},
    {"calibration", "message_latency_us", false,
     offsetof(struct rf_cluster, cal.message_latency_us), 0},
    {"calibration", "nvl_channels_per_peer", true,
     offsetof(struct rf_cluster, cal.nvl_channels_per_peer), 0},
    {"calibration", "net_channels_per_peer", true,
     offsetof(struct rf_cluster, cal.net_channels_per_peer), 0},
    {"calibration", "p2p_channels", true, offsetof(struct rf_cluster, cal.p2p_channels), 0},
    {"calibration", "channel_gbps", false, offsetof(struct rf_cluster, cal.channel_gbps), 0},
    {"calibration", "nvl_chunk_kib", true, offsetof(struct rf_cluster, cal.nvl_chunk_kib), 0},
    {"calibration", "net_chunk_kib", true, offsetof(struct rf_cluster, cal.net_chunk_kib), 0},
    {"calibration", "memcpy_gbps", false, offsetof(struct rf_cluster, cal.memcpy_gbps), 0},
    {"calibration", "quant_gbps", false, offsetof(struct rf_cluster, cal.quant_gbps), 0},
    {"calibration", "tensor_overhead_us", false,
     offsetof(struct rf_cluster, cal.tensor_overhead_us), 0},
    {"calibration", "bucket_overhead_us", false,
     offsetof(struct rf_cluster, cal.bucket_overhead_us), 0},
    {"calibration", "streams", true, offsetof(struct rf_cluster, cal.streams), 0},
    /* The per-call costs; descriptions stored before them read their defaults. */
    {"calibration", "kernel_launch_us", false, offsetof(struct rf_cluster, cal.kernel_launch_us),
     RF_DEFAULT_KERNEL_LAUNCH_US},
    {"calibration", "nccl_call_us", false, offsetof(struct rf_cluster, cal.nccl_call_us),
     RF_DEFAULT_NCCL_CALL_US},
    {"calibration", "barrier_us", false, offsetof(struct rf_cluster, cal.barrier_us),
     RF_DEFAULT_BARRIER_US},
    {"calibration", "h2d_gbps", false, offsetof(struct rf_cluster, cal.h2d_gbps),
     RF_DEFAULT_H2D_GBPS},
    {"calibration", "d2h_gbps", false, offsetof(struct rf_cluster, cal.d2h_gbps),
     RF_DEFAULT_D2H_GBPS},
    {"calibration", "reg_region_us", false, offsetof(struct rf_cluster, cal.reg_region_us),
     RF_DEFAULT_REG_REGION_US},
    {"calibration", "loader_scan_us", false, offsetof(struct rf_cluster, cal.loader_scan_us),
     RF_DEFAULT_LOADER_SCAN_US},
};
const size_t rf_cluster_n_fields = sizeof(rf_cluster_fields) / sizeof(rf_cluster_fields[0]);

static const char *const kind_names[RF_LINK_KIND_COUNT] = {
    "nvl_out", "nvl_in", "nic_out", "nic_in", "leaf_up", "leaf_down", "copy", "quant", "quant4"};

const char *rf_link_kind_name(enum rf_link_kind kind)
{
    return kind_names[kind];
}

static int64_t rails(const struct rf_topology *t)
{
    return t->cluster->nic.per_node;
}

static int64_t groups(const struct rf_cluster *c)
{
    return (c->nodes - 1) / c->fabric.nodes_per_leaf + 1; /* no sum that could overflow */
}

/* The NIC serving a GPU: NICs of a node split its GPUs into equal consecutive groups. */
static int64_t nic_of(const struct rf_topology *t, int64_t gpu)
{
    const struct rf_cluster *c = t->cluster;
    if (c->nic.per_node == 0)
        return -1;
    int64_t node = gpu / c->gpus_per_node, local = gpu % c->gpus_per_node;
    return node * c->nic.per_node + local * c->nic.per_node / c->gpus_per_node;
}

static int64_t leaf_of(const struct rf_topology *t, int64_t nic)
{
    const struct rf_cluster *c = t->cluster;
    int64_t node = nic / c->nic.per_node, rail = nic % c->nic.per_node;
    return node / c->fabric.nodes_per_leaf * c->nic.per_node + rail;
}

/* A count field of the cluster: lo..hi. */
static int count_ok(int64_t v, int64_t lo, int64_t hi, const char *field, struct rf_error *err)
{
    if (v < lo || v > hi)
        return rf_error_set(err, RF_EINVAL, "cluster.%s: %lld, expected %lld to %lld", field,
                            (long long)v, (long long)lo, (long long)hi);
    return 0;
}

/* A rate (GB/s) or factor the link capacities are built from: finite, above 0, at most max,
 * so every capacity and sum of capacities stays finite and positive. */
static int rate_ok(double v, double max, const char *field, struct rf_error *err)
{
    if (!isfinite(v) || v <= 0 || v > max)
        return rf_error_set(err, RF_EINVAL,
                            "cluster.%s: %g is not a finite rate (above 0, at most %g)", field, v,
                            max);
    return 0;
}

/* A latency (us): finite, 0 or more, at most max, so sums of latencies stay finite. */
static int latency_ok(double v, const char *field, struct rf_error *err)
{
    if (!isfinite(v) || v < 0 || v > RF_LATENCY_MAX_US)
        return rf_error_set(err, RF_EINVAL, "cluster.%s: %g is not a finite latency (0 to %g us)",
                            field, v, RF_LATENCY_MAX_US);
    return 0;
}

/* Checks the cluster whoever filled it (Lua, calibration, a test): the products of its
 * sizes (GPUs, NICs, leaves, links) are computed here, so they are bounded first. */
static int check_cluster(const struct rf_cluster *c, struct rf_error *err)
{
    int64_t gpus, nics;
    int rc;
    if ((rc = count_ok(c->nodes, 1, RF_GPUS_MAX, "nodes", err)) < 0 ||
        (rc = count_ok(c->gpus_per_node, 1, RF_GPUS_MAX, "gpus_per_node", err)) < 0)
        return rc;
    if (rf_mul_overflow(c->nodes, c->gpus_per_node, &gpus) || gpus > RF_GPUS_MAX)
        return rf_error_set(err, RF_EINVAL,
                            "cluster.nodes: %lld nodes x %lld GPUs, more than the %lld GPUs refit "
                            "supports",
                            (long long)c->nodes, (long long)c->gpus_per_node,
                            (long long)RF_GPUS_MAX);
    if ((rc = count_ok(c->nvlink.domain_gpus, 1, RF_GPUS_MAX, "nvlink.domain_gpus", err)) < 0 ||
        (rc = count_ok(c->nic.per_node, 0, RF_GPUS_MAX, "nic.per_node", err)) < 0 ||
        (rc = count_ok(c->fabric.nodes_per_leaf, 1, INT64_MAX, "fabric.nodes_per_leaf", err)) < 0)
        return rc;
    if (rf_mul_overflow(c->nodes, c->nic.per_node, &nics) || nics > RF_GPUS_MAX)
        return rf_error_set(
            err, RF_EINVAL, "cluster.nic.per_node: %lld nodes x %lld NICs, more than %lld NICs",
            (long long)c->nodes, (long long)c->nic.per_node, (long long)RF_GPUS_MAX);
    if ((rc = count_ok(c->cal.nvl_channels_per_peer, 0, RF_GPUS_MAX,
                       "calibration.nvl_channels_per_peer", err)) < 0 ||
        (rc = count_ok(c->cal.net_channels_per_peer, 0, RF_GPUS_MAX,
                       "calibration.net_channels_per_peer", err)) < 0 ||
        (rc = count_ok(c->cal.p2p_channels, 0, RF_GPUS_MAX, "calibration.p2p_channels", err)) < 0 ||
        (rc = count_ok(c->cal.nvl_chunk_kib, 0, RF_GPUS_MAX, "calibration.nvl_chunk_kib", err)) <
            0 ||
        (rc = count_ok(c->cal.net_chunk_kib, 0, RF_GPUS_MAX, "calibration.net_chunk_kib", err)) <
            0 ||
        (rc = count_ok(c->cal.streams, 1, INT32_MAX, "calibration.streams", err)) < 0)
        return rc;
    if ((rc = rate_ok(c->nvlink.gbps, RF_RATE_MAX_GBPS, "nvlink.gbps", err)) < 0 ||
        (rc = rate_ok(c->cal.nvlink_efficiency, 1, "calibration.nvlink_efficiency", err)) < 0 ||
        (rc = rate_ok(c->cal.memcpy_gbps, RF_RATE_MAX_GBPS, "calibration.memcpy_gbps", err)) < 0 ||
        (rc = rate_ok(c->cal.quant_gbps, RF_RATE_MAX_GBPS, "calibration.quant_gbps", err)) < 0)
        return rc;
    /* The per-call costs: a zeroed cluster of a C caller (tests) leaves them 0, which costs
     * nothing; models/lib always gives them. */
    if ((c->cal.h2d_gbps != 0 &&
         (rc = rate_ok(c->cal.h2d_gbps, RF_RATE_MAX_GBPS, "calibration.h2d_gbps", err)) < 0) ||
        (c->cal.d2h_gbps != 0 &&
         (rc = rate_ok(c->cal.d2h_gbps, RF_RATE_MAX_GBPS, "calibration.d2h_gbps", err)) < 0) ||
        (rc = latency_ok(c->cal.reg_region_us, "calibration.reg_region_us", err)) < 0 ||
        (rc = latency_ok(c->cal.kernel_launch_us, "calibration.kernel_launch_us", err)) < 0 ||
        (rc = latency_ok(c->cal.nccl_call_us, "calibration.nccl_call_us", err)) < 0 ||
        (rc = latency_ok(c->cal.barrier_us, "calibration.barrier_us", err)) < 0 ||
        (rc = latency_ok(c->cal.loader_scan_us, "calibration.loader_scan_us", err)) < 0)
        return rc;
    /* Without NICs their rates build no link (a localhost cluster gives 0 GB/s). */
    if (c->nic.per_node > 0 &&
        ((rc = rate_ok(c->nic.gbps, RF_RATE_MAX_GBPS, "nic.gbps", err)) < 0 ||
         (rc = rate_ok(c->cal.nic_efficiency, 1, "calibration.nic_efficiency", err)) < 0))
        return rc;
    /* channel_gbps 0 is no channel limit (a zeroed cluster of a C caller; models/lib always
     * gives one), unless a channel count asks for it. */
    if ((c->cal.net_channels_per_peer > 0 || c->cal.channel_gbps != 0) &&
        (rc = rate_ok(c->cal.channel_gbps, RF_RATE_MAX_GBPS, "calibration.channel_gbps", err)) < 0)
        return rc;
    /* Leaf uplinks carry NIC rate / oversubscription: below 1 they would outrun their own
     * downlinks, as models/lib says. */
    if (!isfinite(c->fabric.oversubscription) || c->fabric.oversubscription < 1 ||
        c->fabric.oversubscription > RF_RATE_MAX_GBPS)
        return rf_error_set(err, RF_EINVAL, "cluster.fabric.oversubscription: %g, expected 1 to %g",
                            c->fabric.oversubscription, RF_RATE_MAX_GBPS);
    if ((rc = latency_ok(c->nvlink.latency_us, "nvlink.latency_us", err)) < 0 ||
        (rc = latency_ok(c->nic.latency_us, "nic.latency_us", err)) < 0 ||
        (rc = latency_ok(c->fabric.switch_latency_us, "fabric.switch_latency_us", err)) < 0 ||
        (rc = latency_ok(c->cal.message_latency_us, "calibration.message_latency_us", err)) < 0 ||
        (rc = latency_ok(c->cal.tensor_overhead_us, "calibration.tensor_overhead_us", err)) < 0 ||
        (rc = latency_ok(c->cal.bucket_overhead_us, "calibration.bucket_overhead_us", err)) < 0)
        return rc;
    if (c->nic.per_node == 0 && gpus > c->nvlink.domain_gpus)
        return rf_error_set(err, RF_EINVAL,
                            "cluster.nic.per_node: 0, but %lld GPUs are more than one NVLink "
                            "domain of %lld",
                            (long long)gpus, (long long)c->nvlink.domain_gpus);
    return 0;
}

int rf_topology_init(struct rf_topology *t, const struct rf_cluster *c, struct rf_error *err)
{
    int rc;
    memset(t, 0, sizeof(*t));
    if ((rc = check_cluster(c, err)) < 0)
        return rc;
    t->cluster = c;
    /* Bounded by check_cluster: every product here is at most 2^40. */
    t->gpus = c->nodes * c->gpus_per_node;
    t->nics = c->nodes * c->nic.per_node;
    t->leaves = groups(c) * c->nic.per_node;
    int64_t count[RF_LINK_KIND_COUNT] = {t->gpus,   t->gpus, t->nics, t->nics, t->leaves,
                                         t->leaves, t->gpus, t->gpus, t->gpus};
    size_t n = 0;
    for (int k = 0; k < RF_LINK_KIND_COUNT; k++) {
        t->base[k] = n;
        n += (size_t)count[k];
    }
    t->links = calloc(n, sizeof(*t->links));
    t->place = malloc((size_t)t->gpus * sizeof(*t->place));
    if (!t->links || !t->place) {
        rf_topology_release(t);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    t->n_links = n;
    for (int64_t g = 0; g < t->gpus; g++) {
        int64_t nic = nic_of(t, g);
        t->place[g] = (struct rf_place){.node = (int32_t)(g / c->gpus_per_node),
                                        .domain = (int32_t)(g / c->nvlink.domain_gpus),
                                        .nic = (int32_t)nic,
                                        .rail = nic < 0 ? -1 : (int32_t)(nic % c->nic.per_node),
                                        .leaf = nic < 0 ? -1 : (int32_t)leaf_of(t, nic)};
    }

    /* A mixed cluster's upper nodes have their own rates (rf_cluster_part): a GPU's NVLink,
     * copy and quantisation links and a node's NICs take its part's; a leaf carries what the
     * NICs of its nodes inject, whichever part they are in. */
    const struct rf_cluster_part *u = &c->upper;
    double nvl = c->nvlink.gbps * 1e9 * c->cal.nvlink_efficiency;
    double nic = c->nic.gbps * 1e9 * c->cal.nic_efficiency;
    double nvl_u = u->present ? u->nvlink_gbps * 1e9 * c->cal.nvlink_efficiency : nvl;
    double nic_u = u->present ? u->nic_gbps * 1e9 * c->cal.nic_efficiency : nic;
    for (int k = 0; k < RF_LINK_KIND_COUNT; k++) {
        for (int64_t i = 0; i < count[k]; i++) {
            struct rf_link *l = &t->links[t->base[k] + (size_t)i];
            l->kind = (enum rf_link_kind)k;
            switch (k) {
            case RF_LINK_NVL_OUT:
            case RF_LINK_NVL_IN:
                l->a = (int32_t)i;
                l->capacity = rf_cluster_is_upper(c, i) ? nvl_u : nvl;
                break;
            case RF_LINK_NIC_OUT:
            case RF_LINK_NIC_IN:
                l->a = (int32_t)(i / c->nic.per_node);
                l->b = (int32_t)(i % c->nic.per_node);
                l->capacity = u->present && l->a >= u->first_node ? nic_u : nic;
                break;
            case RF_LINK_LEAF_UP:
            case RF_LINK_LEAF_DOWN: {
                /* A leaf's uplinks carry what its nodes' NICs on that rail can inject,
                 * divided by the fabric's oversubscription. */
                int64_t group = i / rails(t); /* leaves exist only when rails do */
                l->a = (int32_t)(i % rails(t));
                l->b = (int32_t)group;
                l->capacity = rf_topology_leaf_inject(t, group) / c->fabric.oversubscription;
                break;
            }
            case RF_LINK_COPY:
                l->a = (int32_t)i;
                l->capacity =
                    (rf_cluster_is_upper(c, i) ? u->memcpy_gbps : c->cal.memcpy_gbps) * 1e9;
                break;
            case RF_LINK_QUANT:
                /* quant_gbps is the BF16 read rate; the link carries the FP8 written, half. */
                l->a = (int32_t)i;
                l->capacity =
                    (rf_cluster_is_upper(c, i) ? u->quant_gbps : c->cal.quant_gbps) * 1e9 / 2;
                break;
            case RF_LINK_QUANT4:
                /* ... and a 4-bit one writes a quarter of what it reads (its block scales, a
                 * byte per 16 or 32 elements, travel as tensors of their own). */
                l->a = (int32_t)i;
                l->capacity =
                    (rf_cluster_is_upper(c, i) ? u->quant_gbps : c->cal.quant_gbps) * 1e9 / 4;
                break;
            }
        }
    }
    return 0;
}

void rf_topology_release(struct rf_topology *t)
{
    if (!t)
        return;
    free(t->links);
    free(t->place);
    memset(t, 0, sizeof(*t));
}

double rf_topology_leaf_inject(const struct rf_topology *t, int64_t group)
{
    const struct rf_cluster *c = t->cluster;
    const struct rf_cluster_part *u = &c->upper;
    int64_t first = group * c->fabric.nodes_per_leaf;
    int64_t end = first + c->fabric.nodes_per_leaf;
    if (end > c->nodes)
        end = c->nodes;
    int64_t upper = 0;
    if (u->present && end > u->first_node)
        upper = end - (first > u->first_node ? first : u->first_node);
    double nic = c->nic.gbps * 1e9 * c->cal.nic_efficiency;
    double nic_u = u->present ? u->nic_gbps * 1e9 * c->cal.nic_efficiency : nic;
    return (double)(end - first - upper) * nic + (double)upper * nic_u;
}

struct rf_gpu_rates rf_cluster_rates(const struct rf_cluster *c, int64_t gpu)
{
    const struct rf_cluster_part *u = &c->upper;
    bool up = rf_cluster_is_upper(c, gpu);
    double pcie = up ? u->pcie_gbps : c->pcie_gbps;
    double h2d = up ? u->h2d_gbps : c->cal.h2d_gbps, d2h = up ? u->d2h_gbps : c->cal.d2h_gbps;
    return (struct rf_gpu_rates){.hbm_gb = up ? u->hbm_gb : c->hbm_gb,
                                 .nvlink_gbps = up ? u->nvlink_gbps : c->nvlink.gbps,
                                 .nic_gbps = up ? u->nic_gbps : c->nic.gbps,
                                 .memcpy_gbps = up ? u->memcpy_gbps : c->cal.memcpy_gbps,
                                 .quant_gbps = up ? u->quant_gbps : c->cal.quant_gbps,
                                 .h2d_gbps = h2d > 0 ? h2d : pcie,
                                 .d2h_gbps = d2h > 0 ? d2h : pcie};
}

double rf_cluster_min_nvlink_gbps(const struct rf_cluster *c)
{
    return c->upper.present && c->upper.nvlink_gbps < c->nvlink.gbps ? c->upper.nvlink_gbps
                                                                     : c->nvlink.gbps;
}

double rf_cluster_min_nic_gbps(const struct rf_cluster *c)
{
    return c->upper.present && c->upper.nic_gbps < c->nic.gbps ? c->upper.nic_gbps : c->nic.gbps;
}

void rf_cluster_release(struct rf_cluster *c)
{
    if (!c)
        return;
    free(c->name);
    free(c->upper.name);
    free(c->upper.source);
    free(c->source);
    memset(c, 0, sizeof(*c));
}

int64_t rf_topology_domain(const struct rf_topology *t, int64_t gpu)
{
    return t->place[gpu].domain;
}

int32_t rf_topology_link(const struct rf_topology *t, enum rf_link_kind kind, int64_t index)
{
    return (int32_t)(t->base[kind] + (size_t)index);
}

int64_t rf_topology_nic(const struct rf_topology *t, int64_t gpu)
{
    return t->place[gpu].nic;
}

static void hop(struct rf_route *r, const struct rf_topology *t, enum rf_link_kind k, int64_t i)
{
    r->link[r->n++] = rf_topology_link(t, k, i);
}

static void route(const struct rf_topology *t, int64_t src, int64_t dst, struct rf_route *r,
                  bool pxn)
{
    const struct rf_cluster *c = t->cluster;
    const struct rf_place *ps = &t->place[src], *pd = &t->place[dst];
    r->n = 0;
    r->fabric = false;
    if (ps->domain == pd->domain) {
        hop(r, t, RF_LINK_NVL_OUT, src);
        hop(r, t, RF_LINK_NVL_IN, dst);
        r->latency_s = c->nvlink.latency_us * 1e-6;
        return;
    }
    r->fabric = true;
    /* nic.latency_us is NIC to NIC with the switches excluded (models/lib/cluster.lua): a
     * message pays it once, plus one traversal per switch on its way. */
    r->latency_s = c->nic.latency_us * 1e-6;
    int64_t snic = ps->nic, dnic = pd->nic, sleaf = ps->leaf, dleaf = pd->leaf;
    if (pxn && ps->rail != pd->rail) {
        /* PXN: hop over NVLink to the GPU of the source node that sits on the destination's
         * rail, so the message stays on one rail and never climbs to the spine. */
        int64_t proxy = (int64_t)ps->node * c->gpus_per_node +
                        (int64_t)pd->rail * c->gpus_per_node / c->nic.per_node;
        if (proxy != src) {
            hop(r, t, RF_LINK_NVL_OUT, src);
            hop(r, t, RF_LINK_NVL_IN, proxy);
            r->latency_s += c->nvlink.latency_us * 1e-6;
        }
        snic += pd->rail - ps->rail; /* the same node's NIC on that rail */
        sleaf += pd->rail - ps->rail;
    }
    hop(r, t, RF_LINK_NIC_OUT, snic);
    if (sleaf == dleaf) {
        r->latency_s += c->fabric.switch_latency_us * 1e-6;
    } else {
        hop(r, t, RF_LINK_LEAF_UP, sleaf);
        hop(r, t, RF_LINK_LEAF_DOWN, dleaf);
        r->latency_s += 3 * c->fabric.switch_latency_us * 1e-6;
    }
    hop(r, t, RF_LINK_NIC_IN, dnic);
}

void rf_topology_route(const struct rf_topology *t, int64_t src, int64_t dst, struct rf_route *r)
{
    route(t, src, dst, r, t->cluster->fabric.pxn);
}

void rf_topology_route_direct(const struct rf_topology *t, int64_t src, int64_t dst,
                              struct rf_route *r)
{
    route(t, src, dst, r, false);
}

static int64_t pow2_up(int64_t n)
{
    int64_t p = 1;
    while (p < n)
        p *= 2;
    return p;
}

/* NCCL's channels per p2p peer (NVIDIA/nccl src/graph/paths.cc, master of 2026-06): at init
 * ncclTopoGetNchannels asks, per peer, 2 x (path / link bandwidth) channels over NVLink and
 * nChannelsPerNetPeer (NCCL_NCHANNELS_PER_NET_PEER) or else max(local NICs, ceil(NIC GB/s /
 * NCCL_P2P_PER_CHANNEL_NET_BW)) over the network; ncclTopoComputeP2pChannelsPerPeer takes
 * the minimum over every rank of the communicator (and init.cc over every rank's view),
 * so an NVLink peer of a communicator that spans domains gets the network's few. Then
 * ncclTopoComputeP2pChannels rounds it up to a power of two and, when the communicator spans
 * more than one NVLink domain and NCCL_NCHANNELS_PER_NET_PEER is unset, halves it while
 * channels x ceil(maxP2pPeers / 8) exceeds p2pnChannels (8 peers per work batch,
 * NCCL_MAX_DEV_WORK_P2P_PER_BATCH), so that every peer fits one round of the kernel's
 * channels; maxP2pPeers defaults to the communicator's size, which refit-exec leaves as it
 * is. Set, the count is only capped by p2pnChannels. The rule depends on the communicator,
 * never on how many peers a GPU talks to in one group. */
int64_t rf_topology_net_ask(const struct rf_topology *t)
{
    const struct rf_cluster *c = t->cluster;
    if (c->cal.net_channels_per_peer > 0)
        return pow2_up(c->cal.net_channels_per_peer);
    if (c->cal.channel_gbps <= 0)
        return 1;
    /* One NIC serves each GPU at most (models/lib refuses more NICs than GPUs). */
    double need = ceil(rf_cluster_min_nic_gbps(c) / c->cal.channel_gbps);
    return pow2_up(need < 1 ? 1 : need > (double)RF_GPUS_MAX ? RF_GPUS_MAX : (int64_t)need);
}

void rf_topology_p2p(const struct rf_topology *t, int64_t ranks, int64_t configured,
                     struct rf_p2p *p)
{
    const struct rf_cluster *c = t->cluster;
    memset(p, 0, sizeof(*p));
    p->ranks = ranks;
    p->channel_rate = c->cal.channel_gbps * 1e9;
    p->chunk = (double)c->cal.net_chunk_kib * 1024.0;
    /* Only network sends are capped: NCCL gives NVLink peers the same count, but refit has
     * no measured rate of one NVLink channel (README, Simulator). */
    p->spans = ranks > c->nvlink.domain_gpus && c->nic.per_node > 0 && c->cal.channel_gbps > 0;
    if (!p->spans)
        return;
    bool given = configured > 0 || c->cal.net_channels_per_peer > 0;
    int64_t per = configured > 0 ? configured : rf_topology_net_ask(t);
    if (c->nvlink.domain_gpus > 1 && c->cal.nvl_channels_per_peer > 0 &&
        c->cal.nvl_channels_per_peer < per)
        per = c->cal.nvl_channels_per_peer;
    per = pow2_up(per);
    int64_t total = c->cal.p2p_channels > 0 ? pow2_up(c->cal.p2p_channels) : 0; /* 0: unbounded */
    if (total > 0 && !given) {
        int64_t batches = (ranks + 7) / 8;
        while (per > 1 && per * batches > total)
            per /= 2;
    } else if (total > 0 && per > total) {
        per = total;
    }
    p->per_peer = per;
    /* enqueue.cc scheduleP2pTasksToPlan: a send starts from nChannelsMin, the per-peer count
     * halved while it times the communicator's ranks exceeds p2pnChannels. */
    p->min_channels = per;
    while (total > 0 && p->min_channels > 1 && p->min_channels * ranks > total)
        p->min_channels /= 2;
}

/* enqueue.cc addP2pToPlan: with more than one NVLink domain a send is cut into parts of half
 * a chunk to a chunk (p2pChunkSize, NCCL_P2P_NET_CHUNKSIZE), starting from nChannelsMin
 * channels and doubling while a part exceeds a chunk, up to p2pnChannelsPerPeer. */
double rf_p2p_cap(const struct rf_p2p *p, int64_t bytes)
{
    if (!p->spans)
        return 0;
    int64_t n = p->per_peer;
    if (bytes <= 0) {
        n = 1;
    } else if (p->chunk > 0) {
        double b = (double)bytes, min_part = p->chunk / 2, max_part = p->chunk;
        double need = ceil(b / min_part);
        n = need < (double)p->min_channels ? (int64_t)need : p->min_channels;
        double part = fmax(min_part, ceil(b / (double)n));
        while (part > max_part && n <= p->per_peer / 2) {
            n *= 2;
            part = ceil(b / (double)n);
        }
    }
    return (double)n * p->channel_rate;
}

void rf_link_describe(const struct rf_topology *t, size_t link, char *buf, size_t size)
{
    const struct rf_link *l = &t->links[link];
    switch (l->kind) {
    case RF_LINK_NIC_OUT:
    case RF_LINK_NIC_IN:
        snprintf(buf, size, "%s[node %d nic %d]", kind_names[l->kind], l->a, l->b);
        break;
    case RF_LINK_LEAF_UP:
    case RF_LINK_LEAF_DOWN:
        snprintf(buf, size, "%s[rail %d group %d]", kind_names[l->kind], l->a, l->b);
        break;
    default: snprintf(buf, size, "%s[gpu %d]", kind_names[l->kind], l->a); break;
    }
}
