/* NCCL 2.28's rings for one communicator and the costs of a ring broadcast or all-gather on
 * them. Every rule below is traced in doc/research/nccl-collectives.md (cited by section);
 * nothing here was observed on hardware. */
#include "ring.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"

/* The Hopper inter-node speed ladder (GB/s per ring, search.cc 976-989), highest first: the
 * search starts at the first speed within the GPU-to-NIC path, whose PCIe Gen5 x16 NCCL
 * counts as 48 GB/s (1.2). */
static const double inter_ladder[] = {48, 45, 42, 40, 30,  24,  22,   20,  17.5,
                                      15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};

/* Blackwell's NVLink: NCCL models it as 18 x 40.1 GB/s against Hopper's 18 x 20.6, and
 * refit's clusters give the line rate: 900 GB/s on B200 and GB200, 450 on H100 and H200. */
#define BLACKWELL_NVLINK_GBPS 700.0

struct member {
    int32_t gpu, rank, domain;
};

static int cmp_member(const void *a, const void *b)
{
    const struct member *x = a, *y = b;
    if (x->domain != y->domain)
        return x->domain < y->domain ? -1 : 1;
    return (x->gpu > y->gpu) - (x->gpu < y->gpu);
}

struct node {
    size_t start, count; /* members[start .. start + count), sorted by GPU */
    int32_t first_rank;
};

static int cmp_node(const void *a, const void *b)
{
    const struct node *x = a, *y = b;
    return (x->first_rank > y->first_rank) - (x->first_rank < y->first_rank);
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The search's channels and speed (1.1, 1.2, 6(C)(1)): one node is the intra search's NVLink
 * rings (Hopper 6 at 60 GB/s duplicated to 12 at 30, Blackwell 8 at 90 to 16 at 45); several
 * nodes give one ring per distinct member NIC of the least-populated node at the speed its
 * NIC allows, capped at 32 and by what the GPU's NVLink carries at that speed, then the
 * duplication of small counts and the Hopper+ doubling of the collective channels. */
static void channels(struct rf_ring *r, const struct rf_topology *topo)
{
    const struct rf_cluster *c = topo->cluster;
    /* A communicator across a mixed cluster's parts runs at the slower part's rates. */
    double nvlink_gbps = rf_cluster_min_nvlink_gbps(c), nic_gbps = rf_cluster_min_nic_gbps(c);
    r->blackwell = nvlink_gbps >= BLACKWELL_NVLINK_GBPS;
    if (r->n_nodes == 1) {
        r->search_channels = r->blackwell ? 16 : 12;
        r->channel_gbps = r->blackwell ? 45 : 30;
        r->same_channels = true;
        r->channels = 2 * r->search_channels;
        return;
    }
    double bw = inter_ladder[sizeof(inter_ladder) / sizeof(inter_ladder[0]) - 1];
    for (size_t i = 0; i < sizeof(inter_ladder) / sizeof(inter_ladder[0]); i++)
        if (inter_ladder[i] <= nic_gbps) {
            bw = inter_ladder[i];
            break;
        }
    int32_t cg = r->min_nics > 0 ? r->min_nics : 1;
    if (cg > 32)
        cg = 32;
    double nvl_cap = floor(nvlink_gbps / bw);
    if (nvl_cap >= 1 && (double)cg > nvl_cap)
        cg = (int32_t)nvl_cap;
    /* ncclTopoDupChannels: no duplication below 25 GB/s, nor on sm > 80 below 50 GB/s with
     * more than 4 rings. */
    if (bw >= 25 && !(bw < 50 && cg > 4)) {
        cg *= 2;
        bw /= 2;
    }
    r->search_channels = cg;
    r->channel_gbps = bw;
    r->same_channels = false;
    r->channels = 2 * cg < 64 ? 2 * cg : 64;
    if (r->channels < 16 && bw > 45.0)
        r->channels = 2 * r->channels < 64 ? 2 * r->channels : 64;
}

/* Ring c's order on one node (2.2, 2.3, 6(C)(2)): even ring 2p enters at member 2p (mod k),
 * the GPU of the NIC it takes in turn, and runs upward by GPU index, leaving from its cyclic
 * predecessor; odd ring 2p + 1 runs the same members downward, entering on the NIC ring 2p
 * left on (crossNic=2). Odd-numbered nodes swap each pair so that every hop between nodes
 * stays on one rail (connect.cc 392-405, with an even ring count). One node: every ring is
 * the members in index order (sameChannels). */
static void node_order(const struct rf_ring *r, const struct member *m, const struct node *nd,
                       size_t node_index, int c, int32_t *out)
{
    size_t k = nd->count;
    if (r->n_nodes == 1) {
        for (size_t i = 0; i < k; i++)
            out[i] = m[nd->start + i].gpu;
        return;
    }
    int cc = c;
    if (node_index % 2 == 1 && r->search_channels % 2 == 0)
        cc ^= 1;
    size_t s = (size_t)(2 * (cc / 2)) % k;
    for (size_t i = 0; i < k; i++) {
        size_t j = cc % 2 == 0 ? (s + i) % k : (s + k - 1 - i % k) % k;
        out[i] = m[nd->start + j].gpu;
    }
}

int rf_ring_init(struct rf_ring *r, const struct rf_topology *topo, const int32_t *gpus, size_t n,
                 struct rf_error *err)
{
    struct member *m = NULL;
    struct node *nodes = NULL;
    int rc = 0;
    memset(r, 0, sizeof(*r));
    if (n == 0 || n > (size_t)topo->gpus)
        return rf_error_set(err, RF_EINVAL, "ring: %zu ranks, expected 1 to %lld", n,
                            (long long)topo->gpus);
    m = malloc(n * sizeof(*m));
    nodes = malloc(n * sizeof(*nodes));
    r->gpus = malloc(n * sizeof(*r->gpus));
    if (!m || !nodes || !r->gpus) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (gpus[i] < 0 || gpus[i] >= topo->gpus) {
            rc = rf_error_set(err, RF_EINVAL, "ring: rank %zu is GPU %d, not one of the %lld", i,
                              gpus[i], (long long)topo->gpus);
            goto out;
        }
        m[i] = (struct member){gpus[i], (int32_t)i, topo->place[gpus[i]].domain};
        r->gpus[i] = gpus[i];
    }
    qsort(m, n, sizeof(*m), cmp_member);
    size_t nn = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && m[i].gpu == m[i - 1].gpu) {
            rc = rf_error_set(err, RF_EINVAL, "ring: GPU %d is rank %d and rank %d", m[i].gpu,
                              m[i - 1].rank < m[i].rank ? m[i - 1].rank : m[i].rank,
                              m[i - 1].rank < m[i].rank ? m[i].rank : m[i - 1].rank);
            goto out;
        }
        if (i == 0 || m[i].domain != m[i - 1].domain)
            nodes[nn++] = (struct node){.start = i, .first_rank = m[i].rank};
        struct node *nd = &nodes[nn - 1];
        nd->count++;
        if (m[i].rank < nd->first_rank)
            nd->first_rank = m[i].rank;
    }
    /* Nodes in order of their first rank (init.cc 1095-1110): rank 0's node is node 0. */
    qsort(nodes, nn, sizeof(*nodes), cmp_node);
    r->n_ranks = (int32_t)n;
    r->n_nodes = (int32_t)nn;
    r->min_local = INT32_MAX;
    r->min_nics = INT32_MAX;
    for (size_t k = 0; k < nn; k++) {
        /* NICs grow with the GPU index, so a node's distinct NICs are its changes. */
        int32_t nics = 0;
        for (size_t i = nodes[k].start; i < nodes[k].start + nodes[k].count; i++) {
            int32_t nic = topo->place[m[i].gpu].nic;
            if (nic >= 0 && (i == nodes[k].start || nic != topo->place[m[i - 1].gpu].nic))
                nics++;
        }
        if ((int32_t)nodes[k].count < r->min_local)
            r->min_local = (int32_t)nodes[k].count;
        if (nics < r->min_nics)
            r->min_nics = nics;
    }
    channels(r, topo);
    r->ring = malloc((size_t)r->search_channels * n * sizeof(*r->ring));
    if (!r->ring) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (int c = 0; c < r->search_channels; c++) {
        int32_t *at = r->ring + (size_t)c * n;
        for (size_t k = 0; k < nn; k++) {
            node_order(r, m, &nodes[k], k, c, at);
            at += nodes[k].count;
        }
    }
out:
    free(m);
    free(nodes);
    if (rc < 0)
        rf_ring_release(r);
    return rc;
}

void rf_ring_release(struct rf_ring *r)
{
    if (!r)
        return;
    free(r->gpus);
    free(r->ring);
    memset(r, 0, sizeof(*r));
}

/* Where root sits on ring c, or -1. */
static int64_t position(const struct rf_ring *r, int c, int32_t root)
{
    if (c < 0 || c >= r->search_channels)
        return -1;
    const int32_t *ring = r->ring + (size_t)c * (size_t)r->n_ranks;
    for (int32_t i = 0; i < r->n_ranks; i++)
        if (ring[i] == root)
            return i;
    return -1;
}

int rf_ring_chain(const struct rf_ring *r, int c, int32_t root, int32_t *out)
{
    int64_t p = position(r, c, root);
    if (p < 0)
        return RF_EINVAL;
    const int32_t *ring = r->ring + (size_t)c * (size_t)r->n_ranks;
    for (int32_t j = 0; j < r->n_ranks; j++)
        out[j] = ring[(p + j) % r->n_ranks];
    return 0;
}

size_t rf_ring_links_max(const struct rf_ring *r)
{
    return 4 * (size_t)r->n_ranks;
}

/* The links of `hops` hops of ring c from position p, each once. A link crossed by several
 * hops of one chain is counted once: a flowsim path holds a link at most once, and the
 * chain's one pipelined stream passes it at the chain's rate whichever hops share it. Only
 * the rail leaf links can repeat on DGX and NVL72 (hops between different leaf groups on
 * one rail), and a non-blocking fabric does not bind leaf links anyway. */
static size_t ring_links(const struct rf_ring *r, const struct rf_topology *topo, int c, int64_t p,
                         int32_t hops, int32_t *links, double *latency_s)
{
    const int32_t *ring = r->ring + (size_t)c * (size_t)r->n_ranks;
    size_t n = 0;
    double lat = 0;
    for (int32_t j = 0; j < hops; j++) {
        int32_t a = ring[(p + j) % r->n_ranks], b = ring[(p + j + 1) % r->n_ranks];
        struct rf_route route;
        if (a == b)
            continue; /* a one-rank communicator's ring */
        rf_topology_route_direct(topo, a, b, &route);
        for (int h = 0; h < route.n; h++)
            links[n++] = route.link[h];
        lat += route.latency_s;
    }
    if (n > 1) {
        qsort(links, n, sizeof(*links), cmp_i32);
        size_t k = 1;
        for (size_t i = 1; i < n; i++)
            if (links[i] != links[k - 1])
                links[k++] = links[i];
        n = k;
    }
    if (latency_s)
        *latency_s = lat;
    return n;
}

size_t rf_ring_chain_links(const struct rf_ring *r, const struct rf_topology *topo, int c,
                           int32_t root, int32_t *links, double *latency_s)
{
    int64_t p = position(r, c, root);
    if (latency_s)
        *latency_s = 0;
    if (p < 0)
        return 0;
    return ring_links(r, topo, c, p, r->n_ranks - 1, links, latency_s);
}

int rf_ring_paths_init(struct rf_ring_paths *ps, const struct rf_ring *r,
                       const struct rf_topology *topo, enum rf_coll_op op, int32_t root,
                       struct rf_error *err)
{
    int cg = r->search_channels;
    size_t max = rf_ring_links_max(r);
    int32_t *sorted = NULL;
    int rc = 0;
    memset(ps, 0, sizeof(*ps));
    int64_t p0 = position(r, 0, root);
    if (op == RF_COLL_OP_BROADCAST && p0 < 0)
        return rf_error_set(err, RF_EINVAL, "ring: root GPU %d is no member", root);
    ps->n = cg;
    ps->links = malloc((size_t)cg * max * sizeof(*ps->links));
    ps->start = calloc((size_t)cg + 1, sizeof(*ps->start));
    ps->latency_s = calloc((size_t)cg, sizeof(*ps->latency_s));
    ps->share = calloc((size_t)cg, sizeof(*ps->share));
    if (!ps->links || !ps->start || !ps->latency_s || !ps->share) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    /* An all-gather moves around the whole ring (N hops); a broadcast along the chain from
     * its root (N - 1). */
    for (int c = 0; c < cg; c++) {
        int64_t p = op == RF_COLL_OP_BROADCAST ? position(r, c, root) : 0;
        int32_t hops = op == RF_COLL_OP_BROADCAST ? r->n_ranks - 1 : r->n_ranks;
        ps->start[c + 1] = ps->start[c] + ring_links(r, topo, c, p, hops, ps->links + ps->start[c],
                                                     &ps->latency_s[c]);
    }
    size_t total = ps->start[cg];
    if (!(sorted = malloc((total ? total : 1) * sizeof(*sorted)))) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(sorted, ps->links, total * sizeof(*sorted));
    if (total > 1)
        qsort(sorted, total, sizeof(*sorted), cmp_i32);
    /* A link's share for one NCCL channel: its capacity over every channel crossing it, the
     * paths on it times the C / C_g copies of each (6(B): a 50 GB/s NIC under 2 of 16
     * channels gives each 25). */
    double copies = (double)r->channels / (double)cg;
    for (int c = 0; c < cg; c++) {
        double share = INFINITY;
        for (size_t i = ps->start[c]; i < ps->start[c + 1]; i++) {
            int32_t l = ps->links[i];
            size_t lo = 0, hi = total;
            while (lo < hi) { /* the first entry >= l */
                size_t mid = lo + (hi - lo) / 2;
                if (sorted[mid] < l)
                    lo = mid + 1;
                else
                    hi = mid;
            }
            size_t e = lo;
            while (e < total && sorted[e] == l)
                e++;
            double s = topo->links[l].capacity / ((double)(e - lo) * copies);
            if (s < share)
                share = s;
        }
        ps->share[c] = share;
    }
out:
    free(sorted);
    if (rc < 0)
        rf_ring_paths_release(ps);
    return rc;
}

void rf_ring_paths_release(struct rf_ring_paths *ps)
{
    if (!ps)
        return;
    free(ps->links);
    free(ps->start);
    free(ps->latency_s);
    free(ps->share);
    memset(ps, 0, sizeof(*ps));
}

/* ---- NCCL's tuner (5.1, 5.2, 6(A)); latencies in us, bandwidths in GB/s. */

static const double base_lat[RF_NCCL_PROTO_COUNT] = {6.6, 14.0, 8.4};
static const double nvl_hop[RF_NCCL_PROTO_COUNT] = {0.6, 1.9, 3.4};
static const double net_hop[RF_NCCL_PROTO_COUNT] = {2.7, 4.0, 14.0};
/* The tree's hops: a broadcast's Simple latency takes them ("waiting for proper chunk
 * modeling"), an all-gather's inter-node hop with one rank per node. */
static const double nvl_tree_simple = 4.0;
static const double net_tree[RF_NCCL_PROTO_COUNT] = {5.0, 8.5, 14.0};

/* NCCL's latency of one call (us) with protocol p. */
static double nccl_latency(const struct rf_ring *r, enum rf_coll_op op, int p)
{
    double n = r->n_ranks, nodes = r->n_nodes;
    if (op == RF_COLL_OP_BROADCAST) {
        bool net = r->n_nodes > 1; /* every step is a NET step once the ring leaves a node */
        double hop = net ? net_hop[p] : nvl_hop[p];
        if (r->same_channels)
            return base_lat[p] + hop;
        if (p == RF_NCCL_SIMPLE)
            hop = net ? net_tree[p] : nvl_tree_simple;
        return base_lat[p] + n * hop;
    }
    /* netOverhead: 1 us on Intel hosts (2 on AMD), x3 for Simple, only across nodes; the
     * inter-node hop adds the NIC's reported latency, 0 for IB. */
    double over = r->n_nodes > 1 ? (p == RF_NCCL_SIMPLE ? 3.0 : 1.0) : 0;
    double intra = nvl_hop[p] > over ? nvl_hop[p] : over;
    double inter = r->n_ranks == r->n_nodes ? net_tree[p] : net_hop[p];
    return base_lat[p] + (n - nodes) * intra + (nodes - 1) * inter;
}

/* NCCL's bus bandwidth (GB/s) of protocol p. llMaxBw and perChMaxRingLL128Bw are the Intel
 * host rows (tuning.cc 169-180): refit's clusters do not say the host CPU. */
static double nccl_busbw(const struct rf_ring *r, int p)
{
    double bus = r->search_channels * r->channel_gbps;
    if (p == RF_NCCL_LL) {
        double llmax = r->n_nodes == 1   ? (r->blackwell ? 282.0 : 141.0)
                       : r->n_nodes == 2 ? 39.0
                                         : 20.4;
        return bus / 2 < llmax ? bus / 2 : llmax;
    }
    if (p == RF_NCCL_LL128) {
        /* LL128 is enabled: every refit cluster is sm90 or later with PIX (DGX) or P2C
         * (GB200) NICs and NVSwitch, within NCCL's LL128 conditions (5.1). */
        double per = !r->blackwell ? 36.7 : r->n_nodes == 2 ? 34.6 : 73.4;
        double a = 0.92 * bus, b = r->search_channels * per;
        return a < b ? a : b;
    }
    return bus;
}

double rf_ring_nccl_time(const struct rf_ring *r, enum rf_coll_op op, int64_t bytes,
                         enum rf_nccl_proto *proto)
{
    double best = INFINITY;
    int pick = RF_NCCL_SIMPLE;
    if (r->n_ranks <= 1 || bytes <= 0) {
        if (proto)
            *proto = RF_NCCL_SIMPLE;
        return 0;
    }
    /* algBw = busBw x N / nsteps: nsteps N for a broadcast, N - 1 for an all-gather. */
    double ratio = op == RF_COLL_OP_BROADCAST ? 1.0 : (r->n_ranks - 1.0) / r->n_ranks;
    for (int p = 0; p < RF_NCCL_PROTO_COUNT; p++) {
        double t = nccl_latency(r, op, p) + ratio * (double)bytes / (1000.0 * nccl_busbw(r, p));
        if (t < best) {
            best = t;
            pick = p;
        }
    }
    if (proto)
        *proto = (enum rf_nccl_proto)pick;
    return best * 1e-6;
}

double rf_ring_chunk(enum rf_coll_op op, enum rf_nccl_proto proto)
{
    switch (proto) {
    case RF_NCCL_LL: return 32768.0;     /* a 64 KiB LL step holds 32 KiB of data */
    case RF_NCCL_LL128: return 576000.0; /* a 614,400 B step at 120 data bytes per 128 */
    default:
        /* BROADCAST_CHUNKSTEPS 1 and ALLGATHER_CHUNKSTEPS 4 steps of 512 KiB. */
        return op == RF_COLL_OP_BROADCAST ? 524288.0 : 2097152.0;
    }
}

/* The data fraction of a protocol's wire bytes: LL sends a flag with every 8 data bytes,
 * LL128 one 8-byte flag per 128-byte line. */
static double efficiency(enum rf_nccl_proto p)
{
    return p == RF_NCCL_LL ? 0.5 : p == RF_NCCL_LL128 ? 15.0 / 16.0 : 1.0;
}

double rf_ring_time(const struct rf_ring *r, const struct rf_topology *topo, enum rf_coll_op op,
                    int64_t bytes, enum rf_nccl_proto *proto)
{
    enum rf_nccl_proto p;
    struct rf_ring_paths ps;
    rf_ring_nccl_time(r, op, bytes, &p);
    if (proto)
        *proto = p;
    if (r->n_ranks <= 1 || bytes <= 0)
        return 0;
    if (rf_ring_paths_init(&ps, r, topo, op, r->gpus[0], NULL) < 0)
        return INFINITY;
    double rate = INFINITY;
    for (int c = 0; c < ps.n; c++)
        if (ps.share[c] < rate)
            rate = ps.share[c];
    rf_ring_paths_release(&ps);
    /* rate is one NCCL channel's; a distinct ring is C / C_g channels. */
    double channel = rate * efficiency(p);
    double ring_rate = channel * (double)r->channels / r->search_channels;
    double ring_bytes = (double)bytes / r->search_channels;
    if (op == RF_COLL_OP_ALLGATHER)
        ring_bytes *= (r->n_ranks - 1.0) / r->n_ranks;
    double chunk = rf_ring_chunk(op, p), per_channel = (double)bytes / r->channels;
    if (per_channel < chunk)
        chunk = per_channel;
    /* A broadcast's pipeline fills from its one root: the last rank starts receiving after
     * N - 2 chunks have passed down the chain. A ring all-gather has none: every rank sends
     * its own slice from the first step, so the ring is busy at once and only the per-step
     * latency (in NCCL's latency) remains (doc/research/nccl-collectives.md 6(B)). */
    double fill =
        op == RF_COLL_OP_BROADCAST && r->n_ranks > 2 ? (r->n_ranks - 2.0) * chunk / channel : 0;
    return nccl_latency(r, op, p) * 1e-6 + fill + ring_bytes / ring_rate;
}

/* ---- Rings of collectives' member sets, cached. */

static int cmp_key(const struct rf_ring_entry *e, const struct rf_topology *topo, const int32_t *k)
{
    if (e->topo != topo)
        return (uintptr_t)e->topo < (uintptr_t)topo ? -1 : 1;
    int32_t ek[4] = {e->root, e->first_gpu, e->gpu_count, e->gpu_stride};
    for (int i = 0; i < 4; i++)
        if (ek[i] != k[i])
            return ek[i] < k[i] ? -1 : 1;
    return 0;
}

int rf_ring_set_get(struct rf_ring_set *set, const struct rf_topology *topo, int32_t root,
                    int32_t first_gpu, int32_t gpu_count, int32_t gpu_stride,
                    const struct rf_ring_entry **out, struct rf_error *err)
{
    int32_t key[4] = {root, first_gpu, gpu_count, gpu_stride};
    size_t lo = 0, hi = set->n;
    int rc;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp_key(&set->entries[mid], topo, key);
        if (c == 0) {
            *out = &set->entries[mid];
            return 0;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    size_t need = (size_t)(gpu_count > 0 ? gpu_count : 0) + 1;
    if ((rc = RF_GROW(set->gpus, set->cap_gpus, need, err)) < 0 ||
        (rc = RF_GROW(set->entries, set->cap, set->n + 1, err)) < 0)
        return rc;
    size_t n = 0;
    bool has_root = false;
    for (int32_t i = 0; i < gpu_count; i++) {
        set->gpus[n] = first_gpu + i * gpu_stride;
        has_root |= set->gpus[n] == root;
        n++;
    }
    if (!has_root)
        set->gpus[n++] = root;
    qsort(set->gpus, n, sizeof(*set->gpus), cmp_i32);
    struct rf_ring_entry e = {.topo = topo,
                              .root = root,
                              .first_gpu = first_gpu,
                              .gpu_count = gpu_count,
                              .gpu_stride = gpu_stride};
    if ((rc = rf_ring_init(&e.ring, topo, set->gpus, n, err)) < 0)
        return rc;
    if ((rc = rf_ring_paths_init(&e.paths, &e.ring, topo, RF_COLL_OP_BROADCAST, root, err)) < 0) {
        rf_ring_release(&e.ring);
        return rc;
    }
    memmove(&set->entries[lo + 1], &set->entries[lo], (set->n - lo) * sizeof(e));
    set->entries[lo] = e;
    set->n++;
    *out = &set->entries[lo];
    return 0;
}

void rf_ring_set_release(struct rf_ring_set *set)
{
    if (!set)
        return;
    for (size_t i = 0; i < set->n; i++) {
        rf_ring_paths_release(&set->entries[i].paths);
        rf_ring_release(&set->entries[i].ring);
    }
    free(set->entries);
    free(set->gpus);
    memset(set, 0, sizeof(*set));
}
