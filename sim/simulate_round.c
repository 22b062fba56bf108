/* One round of a plan as flows: its transfers merged into one message per (source,
 * destination) pair as the executor packs them, each message a flow through the source's copy
 * engine (pack), the route and the destination's copy engine (unpack), FP8 runs through the
 * source's quantiser; its broadcasts as NCCL's rings, one flow per ring (sim/ring.c); a relay's
 * pipeline fill as a tail. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "schedule.h"
#include "simulate_int.h"

static int cmp_msg(const void *a, const void *b)
{
    const struct msg *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->phase != y->phase)
        return x->phase < y->phase ? -1 : 1;
    if (x->hop != y->hop)
        return x->hop < y->hop ? -1 : 1;
    return (x->quant > y->quant) - (x->quant < y->quant);
}

static int cmp_chain(const void *a, const void *b)
{
    const struct rf_collective *x = ((const struct chain *)a)->c;
    const struct rf_collective *y = ((const struct chain *)b)->c;
    int32_t kx[4] = {x->root, x->first_gpu, x->gpu_count, x->gpu_stride};
    int32_t ky[4] = {y->root, y->first_gpu, y->gpu_count, y->gpu_stride};
    for (int i = 0; i < 4; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

static int add_flow(struct sim *s, const int32_t *full, int n_full, double bytes, double latency,
                    double tail, double cap, int32_t group, enum rf_sim_phase phase)
{
    size_t c1 = s->cap_flows, c2 = s->cap_flows;
    int32_t local[RF_ROUTE_MAX + 3], *path = local;
    int n = 0;
    int rc;
    /* A broadcast channel's chain is longer than any route: it goes on the heap. */
    if (n_full > RF_ROUTE_MAX + 3) {
        if ((rc = RF_GROW(s->path, s->cap_path, (size_t)n_full, s->err)) < 0)
            return rc;
        path = s->path;
    }
    for (int i = 0; i < n_full; i++) {
        if (s->binds[full[i]])
            path[n++] = full[i];
        else if (!s->bound_only) /* bytes of links left out, for link_load */
            s->extra_bytes[full[i]] += bytes;
    }
    if (s->bound_only) {
        sim_bound_add(s, path, n, bytes, latency, tail, cap);
        return 0;
    }
    if ((rc = RF_GROW(s->flow_phase, c1, s->n_flows + 1, s->err)) < 0 ||
        (rc = RF_GROW(s->flow_group, c2, s->n_flows + 1, s->err)) < 0)
        return rc;
    s->cap_flows = c1 < c2 ? c1 : c2;
    struct rf_flow_spec f = {.bytes = bytes,
                             .latency_s = latency,
                             .tail_s = tail,
                             .rate_cap = cap,
                             .path = path,
                             .path_len = n,
                             .group = group};
    if ((rc = rf_flowsim_add(s->fs, &f, s->err)) < 0)
        return rc;
    s->flow_phase[s->n_flows] = (uint8_t)phase;
    s->flow_group[s->n_flows] = group;
    s->n_flows++;
    s->out->phase_bytes[phase] += (int64_t)bytes;
    return 0;
}

/* One stable counting pass: m sorted by src (by_src) or dst into out. */
static void count_pass(const struct msg *m, size_t n, struct msg *out, size_t *count, size_t gpus,
                       bool by_src)
{
    memset(count, 0, (gpus + 1) * sizeof(*count));
    for (size_t i = 0; i < n; i++)
        count[(by_src ? m[i].src : m[i].dst) + 1]++;
    for (size_t g = 0; g < gpus; g++)
        count[g + 1] += count[g];
    for (size_t i = 0; i < n; i++)
        out[count[by_src ? m[i].src : m[i].dst]++] = m[i];
}

/* A message's key within its (src, dst) pair: phase, hop and quant, in that order. */
static uint32_t msg_key(const struct msg *x)
{
    return (uint32_t)x->phase << 18 | (uint32_t)x->hop << 2 | x->quant;
}

static int cmp_msg_in_pair(const void *a, const void *b)
{
    uint32_t kx = msg_key(a), ky = msg_key(b);
    return (kx > ky) - (kx < ky);
}

/* Sorts a round's messages by (src, dst, phase, hop, quant): stable counting passes by dst,
 * then src, then each pair's messages on their own: insertion sort for a few, qsort for
 * more. qsort of the whole round took a quarter of auto's time on Kimi K3 (7 M messages
 * per candidate); insertion sort alone took 79% of Kimi K2 FSDP's, whose pairs hold
 * hundreds of messages of many relay hops (every FSDP shard meets every TP shard). The
 * order within equal keys does not matter: their merge (round_messages) adds and takes
 * maxima. */
static int sort_msgs(struct sim *s, struct msg *m, size_t n)
{
    size_t gpus = (size_t)s->topo->gpus;
    int rc;
    if (n < 64) {
        if (n > 0) /* qsort on a NULL base is undefined even for no elements */
            qsort(m, n, sizeof(*m), cmp_msg);
        return 0;
    }
    if ((rc = RF_GROW(s->msg_tmp, s->cap_tmp, n, s->err)) < 0)
        return rc;
    if (!s->count && !(s->count = malloc((gpus + 1) * sizeof(*s->count))))
        return rf_error_set(s->err, RF_ENOMEM, "out of memory");
    count_pass(m, n, s->msg_tmp, s->count, gpus, false);
    count_pass(s->msg_tmp, n, m, s->count, gpus, true);
    for (size_t i = 0, e; i < n; i = e) {
        for (e = i + 1; e < n && m[e].src == m[i].src && m[e].dst == m[i].dst; e++)
            ;
        if (e - i > 16) {
            qsort(m + i, e - i, sizeof(*m), cmp_msg_in_pair);
            continue;
        }
        for (size_t k = i + 1; k < e; k++) {
            struct msg x = m[k];
            size_t j = k;
            while (j > i && cmp_msg_in_pair(&m[j - 1], &x) > 0) {
                m[j] = m[j - 1];
                j--;
            }
            m[j] = x;
        }
    }
    return 0;
}

/* The flows of a round's merged messages on s->topo. */
static int emit_messages(struct sim *s, int32_t r, const struct msg *m, size_t k,
                         const int32_t *runs_of)
{
    const struct rf_topology *topo = s->topo;
    const struct rf_cluster *c = topo->cluster;
    int rc = 0;
    double base = c->cal.bucket_overhead_us * 1e-6;
    struct rf_p2p p2p;
    rf_topology_p2p(topo, s->comm_ranks, s->plan->net_channels_per_peer, &p2p);
    for (size_t i = 0; i < k; i++) {
        int32_t path[RF_ROUTE_MAX + 3];
        int np = 0;
        double latency = base + c->cal.tensor_overhead_us * 1e-6 * runs_of[m[i].src];
        /* A relay's fill delays its end, not its start (sim_relay_fill): as a tail it adds no
         * activation events, which distinct start times would, one per hop and route. */
        double tail = (double)m[i].fill[s->topo_index];
        if (m[i].src == m[i].dst) {
            path[np++] = rf_topology_link(topo, RF_LINK_COPY, m[i].src);
            rc = add_flow(s, path, np, (double)m[i].bytes, latency, tail, 0, r, RF_SIM_LOCAL);
        } else {
            struct rf_route route;
            rf_topology_route(topo, m[i].src, m[i].dst, &route);
            if (m[i].quant)
                path[np++] = rf_topology_link(
                    topo, m[i].quant == RF_QUANT_4BIT ? RF_LINK_QUANT4 : RF_LINK_QUANT, m[i].src);
            path[np++] = rf_topology_link(topo, RF_LINK_COPY, m[i].src);
            for (int h = 0; h < route.n; h++)
                path[np++] = route.link[h];
            path[np++] = rf_topology_link(topo, RF_LINK_COPY, m[i].dst);
            /* Each piece is a send of its own in its own step (one NCCL group a step, in
             * stream order: exec/steps.c), so each pays a message's fixed cost and the
             * route's latency, not the first piece alone. */
            double pieces = 1;
            if (s->piece > 0)
                pieces = m[i].pieces > 0 ? (double)m[i].pieces
                                         : ceil((double)m[i].bytes / (double)s->piece);
            if (pieces < 1)
                pieces = 1;
            latency += pieces * (route.latency_s + c->cal.message_latency_us * 1e-6);
            /* A network send moves over the NCCL channels it is split into, each at most
             * channel_gbps (rf_p2p_cap); the executor sends a message in staging pieces. */
            double cap = 0;
            if (route.fabric)
                cap =
                    rf_p2p_cap(&p2p, s->piece > 0 && m[i].bytes > s->piece ? s->piece : m[i].bytes);
            rc = add_flow(s, path, np, (double)m[i].bytes, latency, tail, cap, r,
                          (enum rf_sim_phase)m[i].phase);
            s->out->messages++;
        }
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* x merged into y, a message of the same key, as the executor packs them: bytes and runs
 * add, the most pieces and the latest fill hold (each commutative, so the order messages
 * merge in does not change the result). */
static void merge_msg(struct msg *y, const struct msg *x)
{
    y->bytes += x->bytes;
    y->runs += x->runs;
    if (x->pieces > y->pieces)
        y->pieces = x->pieces;
    for (int a = 0; a < RF_SIM_MAX_TOPOLOGIES; a++)
        y->fill[a] = fmaxf(y->fill[a], x->fill[a]);
}

/* The merge cache's size for a round of n messages: enough for them all up to 2^16 entries
 * (1 MiB, within this machine's L2 and any L3), cleared. */
static int cache_reset(struct sim *s, size_t n)
{
    size_t want = 64;
    while (want < 2 * n && want < ((size_t)1 << 16))
        want *= 2;
    if (want > s->mcache_n) {
        free(s->mcache);
        s->mcache_n = 0;
        if (!(s->mcache = malloc(want * sizeof(*s->mcache))))
            return rf_error_set(s->err, RF_ENOMEM, "out of memory");
        s->mcache_n = want;
    }
    memset(s->mcache, 0, want * sizeof(*s->mcache));
    s->mcache_mask = want - 1;
    return 0;
}

/* Message x appended to the round's *n messages of s->m (room reserved), or merged into an
 * equal one the cache remembers (merge_msg). The sort then merges what the cache missed
 * (round_messages); merging early keeps the sort small where pairs repeat far apart: Kimi
 * K2 from FSDP made 126 M messages that merge into 1.2 M (every FSDP shard meets every TP
 * shard of every tensor), and sorting them all took most of auto's time. A hash table of
 * every message instead cost Kimi K3 a quarter more time than it saved: its rounds hold
 * millions of distinct pairs, and each probe missed the cache. */
static void add_msg(struct sim *s, const struct msg *x, size_t *n)
{
    uint32_t key = msg_key(x);
    uint64_t h = (uint64_t)(uint32_t)x->src * 0x9E3779B97F4A7C15u;
    h ^= ((uint64_t)(uint32_t)x->dst << 32 | key) * 0xC2B2AE3D27D4EB4Fu;
    struct mcache *e = &s->mcache[(h >> 40) & s->mcache_mask];
    if (e->index && e->src == x->src && e->dst == x->dst && e->key == key) {
        merge_msg(&s->m[e->index - 1], x);
        return;
    }
    s->m[*n] = *x;
    if (*n < UINT32_MAX)
        *e = (struct mcache){x->src, x->dst, key, (uint32_t)(*n + 1)};
    (*n)++;
}

/* The flows of one round's point-to-point messages, merged per key as the executor packs
 * them, in key order, on each topology. */
static int round_messages(struct sim *s, int32_t r, struct msg *m, size_t n)
{
    int rc;
    if ((rc = sort_msgs(s, m, n)) < 0)
        return rc;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && cmp_msg(&m[k - 1], &m[i]) == 0) {
            merge_msg(&m[k - 1], &m[i]);
        } else {
            m[k++] = m[i];
        }
    }
    /* The host hands its tensors to the transport one by one: a per-tensor cost on every
     * message the GPU sends this round. */
    for (size_t i = 0; i < k; i++)
        s->runs_of[m[i].src] += m[i].runs;
    for (int a = 0; a < (s->bound_only ? s->n_acc : 1) && rc == 0; a++) {
        if (s->bound_only)
            s->cur = &s->acc[a], s->topo = s->acc[a].topo;
        s->topo_index = a;
        rc = emit_messages(s, r, m, k, s->runs_of);
    }
    for (size_t i = 0; i < k; i++)
        s->runs_of[m[i].src] = 0;
    return rc;
}

/* A broadcast as NCCL 2.28 runs it (sim/ring.c, doc/research/nccl-collectives.md 2.5 and
 * 6(B)): the communicator's C_g distinct rings, each carrying bytes / C_g down its chain from
 * the root as ONE flow over the chain's links, each link once. A pipelined chain moves at
 * its slowest link's share, which is what one max-min flow over all its links gets; its
 * fill delays the start: the round's fixed costs (as a message's), the chain's hop
 * latencies, and (N - 2) chunks at the slowest link's per-channel share, the chunk NCCL's
 * for the protocol its tuner picks for these bytes (Simple: 512 KiB). A broadcast runs on
 * the ring's collective channels, not p2p channels per peer: no per-peer channel cap. FP8
 * passes the root's quantiser on every channel. */
static int round_chain(struct sim *s, int32_t r, const struct chain *ch)
{
    const struct rf_topology *topo = s->topo;
    const struct rf_cluster *c = topo->cluster;
    const struct rf_collective *col = ch->c;
    const struct rf_ring_entry *e;
    enum rf_nccl_proto proto;
    int rc;

    if ((rc = rf_ring_set_get(&s->rings, topo, col->root, col->first_gpu, col->gpu_count,
                              col->gpu_stride, &e, s->err)) < 0)
        return rc;
    const struct rf_ring *ring = &e->ring;
    const struct rf_ring_paths *ps = &e->paths;
    if (ring->n_ranks < 2)
        return 0;
    rf_ring_nccl_time(ring, RF_COLL_OP_BROADCAST, ch->bytes, &proto);
    double chunk = rf_ring_chunk(RF_COLL_OP_BROADCAST, proto);
    double per_channel = (double)ch->bytes / ring->channels;
    if (per_channel < chunk)
        chunk = per_channel;
    double base = c->cal.bucket_overhead_us * 1e-6 + c->cal.message_latency_us * 1e-6;
    double bytes = (double)ch->bytes / ps->n;
    for (int k = 0; k < ps->n; k++) {
        size_t n = ps->start[k + 1] - ps->start[k];
        if ((rc = RF_GROW(s->chain_path, s->cap_chain_path, n + 1, s->err)) < 0)
            return rc;
        memcpy(s->chain_path, ps->links + ps->start[k], n * sizeof(int32_t));
        /* Appended, the quantiser (the last block of links) keeps the path sorted. */
        if (ch->quant)
            s->chain_path[n++] = rf_topology_link(
                topo, ch->quant == RF_QUANT_4BIT ? RF_LINK_QUANT4 : RF_LINK_QUANT, col->root);
        double fill = (ring->n_ranks - 2.0) * chunk / ps->share[k];
        if ((rc = add_flow(s, s->chain_path, (int)n, bytes, base + ps->latency_s[k] + fill, 0, 0, r,
                           RF_SIM_BROADCAST)) < 0)
            return rc;
    }
    /* phase_bytes counts bytes sent, as before rings: the whole tensor over N - 1 hops, of
     * which add_flow counted each channel's bytes once. */
    if (!s->bound_only)
        s->out->phase_bytes[RF_SIM_BROADCAST] +=
            (int64_t)(ring->n_ranks - 1) * ch->bytes - (int64_t)ps->n * (int64_t)bytes;
    s->out->messages += ring->n_ranks - 1;
    return 0;
}

void sim_round_release(struct sim *s)
{
    rf_ring_set_release(&s->rings);
    free(s->path);
    free(s->chain_path);
}

/* The least time one hop of a relay takes to pass its first chunk on: the message's fixed
 * costs, its route's latency and one chunk at the route's slowest link. */
static double hop_fill(const struct rf_topology *topo, int32_t from, int32_t to, int64_t bytes,
                       double chunk)
{
    struct rf_route route;
    rf_topology_route(topo, from, to, &route);
    double slowest = INFINITY;
    for (int h = 0; h < route.n; h++)
        if (topo->links[route.link[h]].capacity < slowest)
            slowest = topo->links[route.link[h]].capacity;
    double b = (double)bytes < chunk ? (double)bytes : chunk;
    return route.latency_s + topo->cluster->cal.message_latency_us * 1e-6 +
           (slowest < INFINITY ? b / slowest : 0);
}

/* Round r's transfers as messages, one per destination (a chain member sends its
 * successor's), merged and emitted by round_messages; a relay whose feed is in an earlier
 * round within the stream window waits for that round. */
int sim_round_transfers(struct sim *s, int32_t r)
{
    const struct rf_plan *plan = s->plan;
    const struct rf_cluster *c = s->topos[0]->cluster;
    size_t n = 0;
    int rc;
    /* A pipelined round (one that relays) is sent in chunks (exec/replay.c). */
    bool pipelined = false;
    size_t made = 0;
    for (size_t k = s->tstart[r]; k < s->tstart[r + 1]; k++) {
        const struct rf_transfer *t = &plan->transfers[s->torder[k]];
        pipelined |= t->hop > 0 || t->chain;
        made += (size_t)t->dst_count;
    }
    if ((rc = cache_reset(s, made)) < 0)
        return rc;
    s->piece = pipelined && plan->chunk_bytes > 0 ? plan->chunk_bytes : s->whole_piece;
    for (size_t k = s->tstart[r]; k < s->tstart[r + 1]; k++) {
        const struct rf_transfer *t = &plan->transfers[s->torder[k]];
        int32_t tensor = plan->boxes[t->box].tensor;
        if ((s->tensor_mask && !s->tensor_mask[tensor]) ||
            (s->skip_gather && t->phase == RF_PHASE_GATHER))
            continue;
        uint8_t phase = t->phase == RF_PHASE_GATHER ? RF_SIM_GATHER
                        : t->after >= 0             ? RF_SIM_FANOUT
                                                    : RF_SIM_DELIVER;
        uint8_t quant = phase == RF_SIM_DELIVER ? sim_quant_of(plan, tensor) : RF_QUANT_NONE;
        if ((rc = RF_GROW(s->m, s->cap_m, n + (size_t)t->dst_count, s->err)) < 0)
            return rc;
        struct msg one = {.quant = quant, .runs = 1, .bytes = t->bytes};
        if (pipelined && s->piece > 0) {
            int64_t p = (t->bytes + s->piece - 1) / s->piece;
            one.pieces = p < INT32_MAX ? (int32_t)p : INT32_MAX;
        }
        double fill[RF_SIM_MAX_TOPOLOGIES];
        for (int a = 0; a < RF_SIM_MAX_TOPOLOGIES; a++)
            fill[a] = s->fill[a] ? s->fill[a][s->torder[k]] : 0;
        for (int32_t i = 0; i < t->dst_count; i++) {
            int32_t d = t->dst + i * t->dst_stride, hop = rf_transfer_hop(t, i);
            struct msg x = one;
            x.src = rf_transfer_sender(t, i);
            x.dst = d;
            x.hop = hop < UINT16_MAX ? (uint16_t)hop : UINT16_MAX;
            x.phase = x.src == d ? RF_SIM_LOCAL : phase;
            x.quant = x.src == t->src ? quant : RF_QUANT_NONE; /* members forward it as it came */
            /* A chain member forwards at the fill of the hops before it (s->fill[a] is set
             * only for the topologies messages are emitted on). */
            for (int a = 0; a < RF_SIM_MAX_TOPOLOGIES; a++) {
                x.fill[a] = (float)fill[a];
                if (t->chain && i + 1 < t->dst_count && s->fill[a])
                    fill[a] += hop_fill(s->topos[a], x.src, d, t->bytes, s->chunk);
            }
            if (!s->dst_mask || s->dst_mask[d])
                add_msg(s, &x, &n);
        }
        /* A relay in a later round than what it forwards waits for that round; one in
         * the same round is pipelined (its fill). */
        int32_t ar = t->after >= 0 ? plan->transfers[t->after].round : r;
        if (ar < r && ar > r - c->cal.streams && (rc = sim_add_edge(s, r, ar)) < 0)
            return rc;
    }
    return round_messages(s, r, s->m, n);
}

/* Round r's broadcasts: those with the same root and members form one chain, emitted on
 * every topology. */
int sim_round_chains(struct sim *s, int32_t r)
{
    const struct rf_plan *plan = s->plan;
    struct chain *chains = s->chains;
    size_t nc = 0;
    int rc = 0;
    for (size_t k = s->cstart[r]; k < s->cstart[r + 1]; k++) {
        const struct rf_collective *col = &plan->collectives[s->corder[k]];
        if (s->tensor_mask && !s->tensor_mask[col->tensor])
            continue;
        chains[nc++] =
            (struct chain){.c = col, .bytes = col->bytes, .quant = sim_quant_of(plan, col->tensor)};
    }
    if (nc > 0)
        qsort(chains, nc, sizeof(*chains), cmp_chain);
    size_t kc = 0;
    for (size_t i = 0; i < nc; i++) {
        if (kc > 0 && cmp_chain(&chains[kc - 1], &chains[i]) == 0) {
            chains[kc - 1].bytes += chains[i].bytes;
            if (chains[i].quant > chains[kc - 1].quant)
                chains[kc - 1].quant = chains[i].quant;
        } else {
            chains[kc++] = chains[i];
        }
    }
    for (size_t i = 0; i < kc; i++)
        for (int a = 0; a < (s->bound_only ? s->n_acc : 1) && rc == 0; a++) {
            if (s->bound_only)
                s->cur = &s->acc[a], s->topo = s->acc[a].topo;
            rc = round_chain(s, r, &chains[i]);
        }
    return rc;
}

/* The fill at destination k of chain run t, continued from the fill at destination k0
 * (at): each hop from k0 to k added in turn, the sum the chain's own messages build. */
static double member_fill(const struct rf_topology *topo, const struct rf_transfer *t, int32_t k0,
                          int32_t k, double at, double chunk)
{
    for (int32_t j = k0; t->chain && j < k; j++)
        at += hop_fill(topo, rf_transfer_sender(t, j), t->dst + j * t->dst_stride, t->bytes, chunk);
    return at;
}

/* A pipelined relay (hop > 0, sim/schedule.h) forwards chunk by chunk what the transfer it
 * depends on delivers in the same round: every hop's flow runs at once (concurrent flows
 * on all its links, as a broadcast chain's), and a hop starts once the first chunk has
 * crossed every hop before it. Its fill is the fill of the transfer it forwards plus that
 * transfer's fixed costs (message and route latency) and one chunk at the line rate of
 * its slowest link: the least any relay must wait, so contention can only make the real
 * fill longer. (A relay's flow may then run ahead of the bytes reaching it; the round
 * still ends after its slowest hop, as a pipeline does.) NULL when nothing relays. */
int sim_relay_fill(const struct rf_plan *plan, const struct rf_topology *topo, float **out,
                   struct rf_error *err)
{
    bool any = false;
    *out = NULL;
    for (size_t i = 0; i < plan->n_transfers && !any; i++)
        any = plan->transfers[i].hop > 0 || plan->transfers[i].chain;
    if (!any)
        return 0;
    float *fill = calloc(plan->n_transfers, sizeof(float));
    if (!fill)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    double chunk = plan->chunk_bytes > 0 ? (double)plan->chunk_bytes : (double)plan->staging_bytes;
    /* The last member fill computed: the relays of one chain's members come in member
     * order (domain order from where the chain entered), so each continues the last one's
     * sum rather than adding the chain's hops again from its head (Kimi K3 onto 64 engines,
     * chains of up to 63 hops: 0.8 s of a 4.3 s hierarchical prediction before). */
    int32_t last_a = -1, last_k = 0;
    double last_at = 0;
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        if (t->hop <= 0 || t->after < 0 || (size_t)t->after >= i)
            continue;
        /* t's source received its copy as member k of the run it forwards. */
        const struct rf_transfer *a = &plan->transfers[t->after];
        int32_t k = a->chain && a->dst_stride ? (t->src - a->dst) / a->dst_stride : 0;
        double at;
        if (t->after == last_a && k >= last_k)
            at = member_fill(topo, a, last_k, k, last_at, chunk);
        else
            at = member_fill(topo, a, 0, k, fill[t->after], chunk);
        last_a = t->after;
        last_k = k;
        last_at = at;
        fill[i] = (float)(at + hop_fill(topo, rf_transfer_sender(a, k), t->src, a->bytes, chunk));
    }
    *out = fill;
    return 0;
}

int64_t rf_simulate_delivery_bytes(void)
{
    return 2 * (int64_t)sizeof(struct msg);
}

double rf_plan_in_flight_bytes(const struct rf_plan_size *size, bool simulated)
{
    double beside = (double)rf_schedule_delivery_bytes();
    double msgs = simulated ? (double)rf_simulate_delivery_bytes() : 0;
    return (double)rf_plan_size_bytes(size) +
           (double)size->deliveries * (msgs > beside ? msgs : beside);
}
