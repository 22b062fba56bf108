/* Simulation of a scheduled plan. Each round becomes a flow group: its transfers are merged
 * into one message per (source, destination) pair, as the executor packs them, and each
 * message is a flow through the source's copy engine (pack), the route, and the
 * destination's copy engine (unpack); FP8 runs add the source's quantiser. Broadcasts are
 * pipelined chains. Round r waits for round r - streams (that many staging buffers in
 * flight) and for every round it depends on. Fixed costs (per message, per tensor, per
 * round) are latencies; every mechanism has its knob in the cluster's calibration. */
#include "simulate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flowsim.h"

static const char *const phase_names[RF_SIM_PHASE_COUNT] = {"gather", "deliver", "fanout",
                                                            "broadcast", "local"};

const char *rf_sim_phase_name(enum rf_sim_phase phase)
{
    return phase_names[phase];
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Which links can ever saturate: a leaf link unless its NICs cannot fill it; a copy engine or
 * quantiser unless the GPU's ports cannot feed it that fast (a GPU with local copies keeps
 * its copy engine, which then feeds itself). */
static void mark_binding(const struct rf_plan *plan, const struct rf_topology *t, bool *binds)
{
    const struct rf_cluster *c = t->cluster;
    for (size_t l = 0; l < t->n_links; l++)
        binds[l] = true;
    double nic = c->nic.gbps * 1e9 * c->cal.nic_efficiency;
    for (int64_t i = 0; i < t->leaves; i++) {
        const struct rf_link *up = &t->links[rf_topology_link(t, RF_LINK_LEAF_UP, i)];
        int64_t group = i / c->nic.per_node;
        int64_t in_group = c->nodes - group * c->fabric.nodes_per_leaf;
        if (in_group > c->fabric.nodes_per_leaf)
            in_group = c->fabric.nodes_per_leaf;
        bool can = up->capacity < (double)in_group * nic * (1 - 1e-9);
        binds[rf_topology_link(t, RF_LINK_LEAF_UP, i)] = can;
        binds[rf_topology_link(t, RF_LINK_LEAF_DOWN, i)] = can;
    }
    for (int64_t g = 0; g < t->gpus; g++) {
        double nvl = t->links[rf_topology_link(t, RF_LINK_NVL_OUT, g)].capacity;
        double feed = nvl + (c->nic.per_node > 0 ? nic : 0);
        binds[rf_topology_link(t, RF_LINK_COPY, g)] =
            t->links[rf_topology_link(t, RF_LINK_COPY, g)].capacity < 2 * feed;
        binds[rf_topology_link(t, RF_LINK_QUANT, g)] =
            t->links[rf_topology_link(t, RF_LINK_QUANT, g)].capacity < feed;
    }
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *x = &plan->transfers[i];
        if (x->src == x->dst && x->dst_count == 1 && x->src < t->gpus)
            binds[rf_topology_link(t, RF_LINK_COPY, x->src)] = true;
    }
}

/* One message (or local copy) of a round before merging. */
struct msg {
    int32_t src, dst;
    uint8_t phase;
    uint8_t quant;
    uint16_t hop; /* the transfer's (sim/schedule.h), at most UINT16_MAX: messages merge per hop */
    int32_t runs;
    /* A relay's pipeline fill (relay_fill) on each topology: it starts forwarding once the
     * first chunk of every hop before it has landed. */
    float fill[RF_SIM_MAX_TOPOLOGIES];
    int64_t bytes;
};

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

struct chain {
    const struct rf_collective *c;
    int64_t bytes;
    bool quant;
};

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

static int cmp_edge(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

struct sim {
    const struct rf_plan *plan;
    const struct rf_topology *topo;
    /* Links that can saturate are simulated; the others (leaf links of a non-blocking
     * fabric, copy engines and quantisers faster than everything feeding them) only carry
     * bytes, counted here, which keeps rounds decoupled and each rate solve small. */
    bool *binds;
    double *extra_bytes;
    struct rf_flowsim *fs;
    struct rf_error *err;
    uint8_t *flow_phase;
    int32_t *flow_group;
    size_t n_flows, cap_flows;
    int32_t (*edges)[2];
    size_t n_edges, cap_edges;
    struct rf_prediction *out;
    /* Bound mode (rf_simulate_bound): flows are not simulated; each round's link loads and
     * slowest lone flow give a least duration per round, and whole-run loads a link bound. */
    bool bound_only;
    struct acc *acc, *cur; /* one per topology; the one being filled */
    int n_acc;
    /* NCCL's p2p channels of the replay's communicator (every GPU the plan touches; the
     * executor's world) and the largest send the executor issues, one staging piece. */
    int64_t comm_ranks, piece;
    int topo_index;                     /* which of a message's fills applies to s->topo */
    float *fill[RF_SIM_MAX_TOPOLOGIES]; /* relay_fill per transfer and topology, or NULL */
    struct msg *msg_tmp;                /* scratch of sort_msgs */
    size_t cap_tmp;
    size_t *count;
};

/* What bound mode gathers on one topology. Several topologies of one cluster (PXN on and
 * off) share the rounds' messages and differ only in their routes. */
struct acc {
    const struct rf_topology *topo;
    double *round_load, *total_load, *round_dur;
    int32_t *touched;
    size_t n_touched;
    double round_flow; /* the round's slowest flow alone: latency + bytes / its best rate */
    double dbg_bytes, dbg_lat, dbg_best;
    int dbg_n;
    double *round_alone; /* each round's round_flow */
    /* Each round's link loads, for the estimate: entries [lstart[r], lstart[r + 1]). */
    struct lload {
        int32_t link;
        float seconds; /* the round's bytes on the link at full rate */
    } * lloads;
    size_t n_lloads, cap_lloads;
    size_t *lstart;
};

static int grow(void **p, size_t *cap, size_t need, size_t size, struct rf_error *err)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 1024;
    while (nc < need)
        nc *= 2;
    void *np = realloc(*p, nc * size);
    if (!np)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    *p = np;
    *cap = nc;
    return 0;
}

static int add_flow(struct sim *s, const int32_t *full, int n_full, double bytes, double latency,
                    double tail, double cap, int32_t group, enum rf_sim_phase phase)
{
    size_t c1 = s->cap_flows, c2 = s->cap_flows;
    int32_t path[RF_ROUTE_MAX + 3];
    int n = 0;
    int rc;
    for (int i = 0; i < n_full; i++) {
        if (s->binds[full[i]])
            path[n++] = full[i];
        else if (!s->bound_only) /* bytes of links left out, for link_load */
            s->extra_bytes[full[i]] += bytes;
    }
    if (s->bound_only) {
        struct acc *a = s->cur;
        double best = cap > 0 ? cap : INFINITY;
        for (int i = 0; i < n; i++) {
            if (a->round_load[path[i]] == 0 && bytes > 0)
                a->touched[a->n_touched++] = path[i];
            a->round_load[path[i]] += bytes;
            a->total_load[path[i]] += bytes;
            if (a->topo->links[path[i]].capacity < best)
                best = a->topo->links[path[i]].capacity;
        }
        double alone = latency + tail + (bytes > 0 && best < INFINITY ? bytes / best : 0);
        if (alone > a->round_flow) {
            a->round_flow = alone;
            if (getenv("RF_DEBUG_ROUNDS"))
                a->dbg_bytes = bytes, a->dbg_lat = latency, a->dbg_best = best, a->dbg_n = n;
        }
        return 0;
    }
    if ((rc = grow((void **)&s->flow_phase, &c1, s->n_flows + 1, 1, s->err)) < 0 ||
        (rc = grow((void **)&s->flow_group, &c2, s->n_flows + 1, sizeof(int32_t), s->err)) < 0)
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

static int add_edge(struct sim *s, int32_t group, int32_t prerequisite)
{
    int rc = grow((void **)&s->edges, &s->cap_edges, s->n_edges + 1, sizeof(*s->edges), s->err);
    if (rc < 0)
        return rc;
    s->edges[s->n_edges][0] = group;
    s->edges[s->n_edges][1] = prerequisite;
    s->n_edges++;
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

/* Sorts a round's messages by (src, dst, phase, quant): stable counting passes by dst,
 * then src, then insertion sort within each pair, which holds a few phases at most.
 * qsort took a quarter of auto's time on Kimi K3 (7 M messages per candidate). */
static int sort_msgs(struct sim *s, struct msg *m, size_t n)
{
    size_t gpus = (size_t)s->topo->gpus;
    int rc;
    if (n < 64) {
        if (n > 0) /* qsort on a NULL base is undefined even for no elements */
            qsort(m, n, sizeof(*m), cmp_msg);
        return 0;
    }
    if ((rc = grow((void **)&s->msg_tmp, &s->cap_tmp, n, sizeof(*m), s->err)) < 0)
        return rc;
    if (!s->count && !(s->count = malloc((gpus + 1) * sizeof(*s->count))))
        return rf_error_set(s->err, RF_ENOMEM, "out of memory");
    count_pass(m, n, s->msg_tmp, s->count, gpus, false);
    count_pass(s->msg_tmp, n, m, s->count, gpus, true);
    for (size_t i = 1; i < n; i++) {
        struct msg x = m[i];
        size_t j = i;
        while (j > 0 && cmp_msg(&m[j - 1], &x) > 0) {
            m[j] = m[j - 1];
            j--;
        }
        m[j] = x;
    }
    return 0;
}

static int emit_messages(struct sim *s, int32_t r, const struct msg *m, size_t k,
                         const int32_t *runs_of);

/* The flows of one round's point-to-point messages: merged per (source, destination) as the
 * executor packs them, then emitted on each topology. */
static int round_messages(struct sim *s, int32_t r, struct msg *m, size_t n, int32_t *runs_of)
{
    int rc;
    if ((rc = sort_msgs(s, m, n)) < 0)
        return rc;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        if (k > 0 && cmp_msg(&m[k - 1], &m[i]) == 0) {
            m[k - 1].bytes += m[i].bytes;
            m[k - 1].runs += m[i].runs;
            for (int a = 0; a < RF_SIM_MAX_TOPOLOGIES; a++)
                m[k - 1].fill[a] = fmaxf(m[k - 1].fill[a], m[i].fill[a]);
        } else {
            m[k++] = m[i];
        }
    }
    /* The host hands its tensors to the transport one by one: a per-tensor cost on every
     * message the GPU sends this round. */
    for (size_t i = 0; i < k; i++)
        runs_of[m[i].src] += m[i].runs;
    for (int a = 0; a < (s->bound_only ? s->n_acc : 1) && rc == 0; a++) {
        if (s->bound_only)
            s->cur = &s->acc[a], s->topo = s->acc[a].topo;
        s->topo_index = a;
        rc = emit_messages(s, r, m, k, runs_of);
    }
    for (size_t i = 0; i < k; i++)
        runs_of[m[i].src] = 0;
    return rc;
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
        /* A relay's fill delays its end, not its start (relay_fill): as a tail it adds no
         * activation events, which distinct start times would, one per hop and route. */
        double tail = (double)m[i].fill[s->topo_index];
        if (m[i].src == m[i].dst) {
            path[np++] = rf_topology_link(topo, RF_LINK_COPY, m[i].src);
            rc = add_flow(s, path, np, (double)m[i].bytes, latency, tail, 0, r, RF_SIM_LOCAL);
        } else {
            struct rf_route route;
            rf_topology_route(topo, m[i].src, m[i].dst, &route);
            if (m[i].quant)
                path[np++] = rf_topology_link(topo, RF_LINK_QUANT, m[i].src);
            path[np++] = rf_topology_link(topo, RF_LINK_COPY, m[i].src);
            for (int h = 0; h < route.n; h++)
                path[np++] = route.link[h];
            path[np++] = rf_topology_link(topo, RF_LINK_COPY, m[i].dst);
            latency += route.latency_s + c->cal.message_latency_us * 1e-6;
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

/* A broadcast as NCCL pipelines it: a chain root -> members in GPU order (node-local hops
 * first), every hop carrying the whole tensor at once; the pipeline fill, hops x hop latency
 * + (hops - 1) x one chunk at the slowest hop's rate, delays the whole chain:
 * T = alpha + hops * hop_latency + (hops - 1) * chunk / B + bytes / B. A broadcast is a
 * collective on the ring's channels (all of the communicator's), not p2p channels per
 * peer, so its hops have no per-peer channel cap. */
static int round_chain(struct sim *s, int32_t r, const struct chain *ch)
{
    const struct rf_topology *topo = s->topo;
    const struct rf_cluster *c = topo->cluster;
    const struct rf_collective *col = ch->c;
    double slowest = INFINITY, hop_latency = 0;
    bool fabric = false;
    int64_t hops = 0;
    int32_t prev = col->root;
    int rc;

    for (int32_t i = 0; i < col->gpu_count; i++) {
        int32_t g = col->first_gpu + i * col->gpu_stride;
        struct rf_route route;
        if (g == col->root)
            continue;
        rf_topology_route(topo, prev, g, &route);
        for (int h = 0; h < route.n; h++)
            if (topo->links[route.link[h]].capacity < slowest)
                slowest = topo->links[route.link[h]].capacity;
        if (route.latency_s > hop_latency)
            hop_latency = route.latency_s;
        fabric |= route.fabric;
        prev = g;
        hops++;
    }
    if (hops == 0)
        return 0;
    double chunk = (double)(fabric ? c->cal.net_chunk_kib : c->cal.nvl_chunk_kib) * 1024.0;
    double latency = c->cal.bucket_overhead_us * 1e-6 + c->cal.message_latency_us * 1e-6 +
                     (double)hops * hop_latency + (double)(hops - 1) * chunk / slowest;
    prev = col->root;
    for (int32_t i = 0; i < col->gpu_count; i++) {
        int32_t g = col->first_gpu + i * col->gpu_stride;
        int32_t path[RF_ROUTE_MAX + 1];
        int np = 0;
        struct rf_route route;
        if (g == col->root)
            continue;
        rf_topology_route(topo, prev, g, &route);
        if (ch->quant && prev == col->root)
            path[np++] = rf_topology_link(topo, RF_LINK_QUANT, col->root);
        for (int h = 0; h < route.n; h++)
            path[np++] = route.link[h];
        if ((rc = add_flow(s, path, np, (double)ch->bytes, latency, 0, 0, r, RF_SIM_BROADCAST)) < 0)
            return rc;
        prev = g;
    }
    s->out->messages += hops;
    return 0;
}

/* Event batching tolerance: messages of a round finish at many slightly different times, and
 * every completion re-rates the flows sharing its saturated links, so exact event handling is
 * quadratic in the messages of a round. By default completions within 0.1% of each other are
 * one event (they finish at most 0.1% early); the caller may ask for another tolerance (1e-11
 * is exact). The range is the command's promise too, so it is checked here as well. */
int rf_sim_options_tolerance(const struct rf_sim_options *opts, double *tolerance,
                             struct rf_error *err)
{
    double v = opts && opts->tolerance != 0 ? opts->tolerance : RF_SIM_TOLERANCE_DEFAULT;
    *tolerance = RF_SIM_TOLERANCE_DEFAULT;
    if (!(v >= RF_SIM_TOLERANCE_MIN && v <= RF_SIM_TOLERANCE_MAX))
        return rf_error_set(err, RF_EINVAL, "simulation tolerance %g: must be from %g to %g", v,
                            RF_SIM_TOLERANCE_MIN, RF_SIM_TOLERANCE_MAX);
    *tolerance = v;
    return 0;
}

/* The least finish of every round: it starts once its prerequisites have finished (no
 * sooner than their least finishes) and lasts at least its least duration. Barriers always
 * point back to earlier rounds, so one sweep in round order settles them. The result is
 * also held to the busiest link's whole-run load, since rounds in flight together share
 * links, and lowered by twice the event batching tolerance (flows may finish that much
 * early in the simulation).
 *
 * The estimate sweeps the same rounds with links that serve rounds first come, first
 * served: a round's bytes on a link start once the link has finished the earlier rounds'
 * and the round itself has started, and the round ends when its last link does (or its
 * slowest message alone). Unlike the bound it charges the idle gaps that barriers leave
 * on the busiest links, which is where hierarchical fan-out and broadcast after gather lose
 * time; like the bound it ignores the coupling of a message's two ends. */
static int round_bound(struct sim *s, const struct acc *a, const double *capacity, double tolerance,
                       double *bound, double *estimate)
{
    int32_t R = s->plan->n_rounds;
    double *fin = calloc((size_t)R + 1, sizeof(double));
    double *efin = calloc((size_t)R + 1, sizeof(double));
    double *avail = calloc(a->topo->n_links, sizeof(double));
    double best = 0, est = 0;
    if (!fin || !efin || !avail) {
        free(fin);
        free(efin);
        free(avail);
        return rf_error_set(s->err, RF_ENOMEM, "out of memory");
    }
    size_t e = 0;
    for (int32_t r = 0; r < R; r++) {
        double start = 0, estart = 0;
        for (; e < s->n_edges && s->edges[e][0] == r; e++) {
            int32_t pre = s->edges[e][1];
            if (pre >= r)
                continue; /* never made; dropping a barrier only weakens the bound */
            if (fin[pre] > start)
                start = fin[pre];
            if (efin[pre] > estart)
                estart = efin[pre];
        }
        fin[r] = start + a->round_dur[r];
        if (fin[r] > best)
            best = fin[r];
        efin[r] = estart + a->round_alone[r];
        for (size_t i = a->lstart[r]; i < a->lstart[r + 1]; i++) {
            const struct lload *x = &a->lloads[i];
            double done = (avail[x->link] > estart ? avail[x->link] : estart) + x->seconds;
            avail[x->link] = done;
            if (done > efin[r])
                efin[r] = done;
        }
        if (efin[r] > est)
            est = efin[r];
    }
    for (size_t l = 0; l < a->topo->n_links; l++)
        if (a->total_load[l] / capacity[l] > best)
            best = a->total_load[l] / capacity[l];
    free(fin);
    free(efin);
    free(avail);
    *bound = best * (1 - 2 * tolerance);
    if (estimate)
        *estimate = est > best ? est : best;
    return 0;
}

/* The rounds of a plan as flows and barriers: simulated (bound NULL), or reduced to the
 * least time any simulation of them can take (bound set). */
/* A pipelined relay (hop > 0, sim/schedule.h) forwards chunk by chunk what the transfer it
 * depends on delivers in the same round: every hop's flow runs at once (concurrent flows
 * on all its links, as a broadcast chain's), and a hop starts once the first chunk has
 * crossed every hop before it. Its fill is the fill of the transfer it forwards plus that
 * transfer's fixed costs (message and route latency) and one chunk at the line rate of
 * its slowest link: the least any relay must wait, so contention can only make the real
 * fill longer. (A relay's flow may then run ahead of the bytes reaching it; the round
 * still ends after its slowest hop, as a pipeline does.) NULL when nothing relays. */
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

/* The fill of destination k of run t given the fill at its source (chains add each hop
 * before k). */
static double member_fill(const struct rf_topology *topo, const struct rf_transfer *t, int32_t k,
                          double at_src, double chunk)
{
    for (int32_t j = 0; t->chain && j < k; j++)
        at_src +=
            hop_fill(topo, rf_transfer_sender(t, j), t->dst + j * t->dst_stride, t->bytes, chunk);
    return at_src;
}

static int relay_fill(const struct rf_plan *plan, const struct rf_topology *topo, float **out,
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
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        if (t->hop <= 0 || t->after < 0 || (size_t)t->after >= i)
            continue;
        /* t's source received its copy as member k of the run it forwards. */
        const struct rf_transfer *a = &plan->transfers[t->after];
        int32_t k = a->chain && a->dst_stride ? (t->src - a->dst) / a->dst_stride : 0;
        double at = member_fill(topo, a, k, fill[t->after], chunk);
        fill[i] = (float)(at + hop_fill(topo, rf_transfer_sender(a, k), t->src, a->bytes, chunk));
    }
    *out = fill;
    return 0;
}

static int model(const struct rf_plan *plan, const struct rf_side *train,
                 const struct rf_side *infer, const struct rf_topology *const *topos, int n_topos,
                 double tolerance, struct rf_prediction *out, double *bound, double *estimate,
                 struct rf_error *err)
{
    const struct rf_topology *topo = topos[0];
    const struct rf_cluster *c = topo->cluster;
    struct sim s = {.plan = plan, .topo = topo, .err = err, .out = out, .bound_only = bound};
    struct acc acc[RF_SIM_MAX_TOPOLOGIES] = {0};
    double t0 = wall();
    int32_t R = plan->n_rounds;
    size_t *tstart = NULL, *cstart = NULL;
    size_t *torder = NULL, *corder = NULL;
    struct msg *m = NULL;
    struct chain *chains = NULL;
    int32_t *runs_of = NULL;
    double *capacity = NULL;
    size_t cap_m = 0;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    out->bottleneck = -1;
    /* The communicator: rank r plays GPU r, and the world holds every GPU of both sides and
     * of every transfer (exec/part.c rf_part_gpus). */
    s.comm_ranks = train->first_gpu + train->gpus;
    if (infer->first_gpu + infer->gpus > s.comm_ranks)
        s.comm_ranks = infer->first_gpu + infer->gpus;
    int64_t whole_piece = plan->staging_bytes > 0 ? plan->staging_bytes / 8 * 8 : 0;
    double chunk = plan->chunk_bytes > 0 ? (double)plan->chunk_bytes : (double)whole_piece;
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        int64_t hi = t->dst + (int64_t)(t->dst_count - 1) * t->dst_stride;
        if (t->src + 1 > s.comm_ranks)
            s.comm_ranks = t->src + 1;
        if (hi + 1 > s.comm_ranks)
            s.comm_ranks = hi + 1;
        if (t->src >= topo->gpus || hi >= topo->gpus)
            return rf_error_set(
                err, RF_EINVAL, "the plan uses GPU %lld but cluster %s has %lld GPUs",
                (long long)(t->src > hi ? t->src : hi), c->name, (long long)topo->gpus);
    }
    capacity = malloc(topo->n_links * sizeof(double));
    runs_of = calloc((size_t)topo->gpus, sizeof(int32_t));
    tstart = calloc((size_t)R + 2, sizeof(size_t));
    cstart = calloc((size_t)R + 2, sizeof(size_t));
    torder = malloc((plan->n_transfers + 1) * sizeof(size_t));
    corder = malloc((plan->n_collectives + 1) * sizeof(size_t));
    chains = malloc((plan->n_collectives + 1) * sizeof(*chains));
    out->round_start = calloc((size_t)R + 1, sizeof(double));
    out->round_finish = calloc((size_t)R + 1, sizeof(double));
    if (!capacity || !runs_of || !tstart || !cstart || !torder || !corder || !chains ||
        !out->round_start || !out->round_finish) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    out->n_rounds = R;
    for (size_t l = 0; l < topo->n_links; l++)
        capacity[l] = topo->links[l].capacity;
    s.binds = malloc(topo->n_links * sizeof(bool));
    s.extra_bytes = calloc(topo->n_links, sizeof(double));
    if (!s.binds || !s.extra_bytes) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    mark_binding(plan, topo, s.binds);
    for (int i = 0; i < (bound ? n_topos : 1); i++)
        if ((rc = relay_fill(plan, topos[i], &s.fill[i], err)) < 0)
            goto out;
    if (bound) {
        s.acc = acc;
        s.n_acc = n_topos;
        for (int i = 0; i < n_topos; i++) {
            struct acc *a = &acc[i];
            a->topo = topos[i];
            a->round_load = calloc(topo->n_links, sizeof(double));
            a->total_load = calloc(topo->n_links, sizeof(double));
            a->touched = malloc(topo->n_links * sizeof(int32_t));
            a->round_dur = calloc((size_t)R + 1, sizeof(double));
            a->round_alone = calloc((size_t)R + 1, sizeof(double));
            a->lstart = calloc((size_t)R + 2, sizeof(size_t));
            if (!a->round_load || !a->total_load || !a->touched || !a->round_dur ||
                !a->round_alone || !a->lstart) {
                rc = rf_error_set(err, RF_ENOMEM, "out of memory");
                goto out;
            }
        }
    } else {
        if ((rc = rf_flowsim_new(&s.fs, topo->n_links, capacity, err)) < 0)
            goto out;
        rf_flowsim_set_tolerance(s.fs, tolerance);
        if ((rc = rf_lower_bound(plan, train, infer, topo, &out->lower_bound_s, err)) < 0)
            goto out;
        /* Batched flows finish up to the tolerance early, and many distinct finishes on one
         * saturated link add up (t/simulate-t.c: 24 messages into one NIC come out 0.35%
         * under the exact time at 1%): the bound takes the margin rf_simulate_bound takes,
         * so that no prediction is below it at any accepted tolerance. */
        out->lower_bound_s *= 1 - 2 * tolerance;
    }

    /* Transfers and collectives bucketed by round (counting sort). */
    for (size_t i = 0; i < plan->n_transfers; i++)
        tstart[plan->transfers[i].round + 1]++;
    for (size_t i = 0; i < plan->n_collectives; i++)
        cstart[plan->collectives[i].round + 1]++;
    for (int32_t r = 0; r < R; r++) {
        tstart[r + 1] += tstart[r];
        cstart[r + 1] += cstart[r];
    }
    for (size_t i = 0; i < plan->n_transfers; i++)
        torder[tstart[plan->transfers[i].round]++] = i;
    for (size_t i = 0; i < plan->n_collectives; i++)
        corder[cstart[plan->collectives[i].round]++] = i;
    for (int32_t r = R; r > 0; r--) {
        tstart[r] = tstart[r - 1];
        cstart[r] = cstart[r - 1];
    }
    tstart[0] = cstart[0] = 0;

    for (int32_t r = 0; r < R; r++) {
        size_t n = 0;
        /* A pipelined round (one that relays) is sent in chunks (exec/replay.c). */
        bool pipelined = false;
        for (size_t k = tstart[r]; k < tstart[r + 1] && !pipelined; k++)
            pipelined = plan->transfers[torder[k]].hop > 0 || plan->transfers[torder[k]].chain;
        s.piece = pipelined && plan->chunk_bytes > 0 ? plan->chunk_bytes : whole_piece;
        for (size_t k = tstart[r]; k < tstart[r + 1]; k++) {
            const struct rf_transfer *t = &plan->transfers[torder[k]];
            int32_t tensor = plan->boxes[t->box].tensor;
            uint8_t phase = t->phase == RF_PHASE_GATHER ? RF_SIM_GATHER
                            : t->after >= 0             ? RF_SIM_FANOUT
                                                        : RF_SIM_DELIVER;
            bool quant = phase == RF_SIM_DELIVER && plan->wire_dtype[tensor] == RF_DT_FP8 &&
                         plan->tensors[tensor].dtype != RF_DT_FP8;
            if ((rc = grow((void **)&m, &cap_m, n + (size_t)t->dst_count, sizeof(*m), err)) < 0)
                goto out;
            struct msg one = {.quant = quant, .runs = 1, .bytes = t->bytes};
            double fill[RF_SIM_MAX_TOPOLOGIES];
            for (int a = 0; a < RF_SIM_MAX_TOPOLOGIES; a++)
                fill[a] = s.fill[a] ? s.fill[a][torder[k]] : 0;
            for (int32_t i = 0; i < t->dst_count; i++) {
                int32_t d = t->dst + i * t->dst_stride, hop = rf_transfer_hop(t, i);
                m[n] = one;
                m[n].src = rf_transfer_sender(t, i);
                m[n].dst = d;
                m[n].hop = hop < UINT16_MAX ? (uint16_t)hop : UINT16_MAX;
                m[n].phase = m[n].src == d ? RF_SIM_LOCAL : phase;
                m[n].quant = quant && m[n].src == t->src; /* members forward FP8 as it came */
                /* A chain member forwards at the fill of the hops before it. */
                for (int a = 0; a < RF_SIM_MAX_TOPOLOGIES; a++) {
                    m[n].fill[a] = (float)fill[a];
                    if (t->chain && i + 1 < t->dst_count && s.fill[a])
                        fill[a] += hop_fill(bound ? topos[a] : topo, m[n].src, d, t->bytes, chunk);
                }
                n++;
            }
            /* A relay in a later round than what it forwards waits for that round; one in
             * the same round is pipelined (its fill). */
            int32_t ar = t->after >= 0 ? plan->transfers[t->after].round : r;
            if (ar < r && ar > r - c->cal.streams && (rc = add_edge(&s, r, ar)) < 0)
                goto out;
        }
        if ((rc = round_messages(&s, r, m, n, runs_of)) < 0)
            goto out;

        /* Broadcasts of one round with the same root and members form one chain. */
        size_t nc = 0;
        for (size_t k = cstart[r]; k < cstart[r + 1]; k++) {
            const struct rf_collective *col = &plan->collectives[corder[k]];
            chains[nc++] = (struct chain){
                .c = col, .bytes = col->bytes, .quant = plan->wire_dtype[col->tensor] == RF_DT_FP8};
        }
        if (nc > 0)
            qsort(chains, nc, sizeof(*chains), cmp_chain);
        size_t kc = 0;
        for (size_t i = 0; i < nc; i++) {
            if (kc > 0 && cmp_chain(&chains[kc - 1], &chains[i]) == 0) {
                chains[kc - 1].bytes += chains[i].bytes;
                chains[kc - 1].quant |= chains[i].quant;
            } else {
                chains[kc++] = chains[i];
            }
        }
        for (size_t i = 0; i < kc; i++)
            for (int a = 0; a < (bound ? n_topos : 1) && rc == 0; a++) {
                if (bound)
                    s.cur = &acc[a], s.topo = acc[a].topo;
                rc = round_chain(&s, r, &chains[i]);
            }
        if (rc < 0)
            goto out;
        if (r >= c->cal.streams && (rc = add_edge(&s, r, r - (int32_t)c->cal.streams)) < 0)
            goto out;
        if (bound) {
            for (int i = 0; i < n_topos; i++) {
                struct acc *a = &acc[i];
                double d = a->round_flow;
                if ((rc = grow((void **)&a->lloads, &a->cap_lloads, a->n_lloads + a->n_touched,
                               sizeof(*a->lloads), err)) < 0)
                    goto out;
                a->lstart[r] = a->n_lloads;
                for (size_t k = 0; k < a->n_touched; k++) {
                    int32_t l = a->touched[k];
                    double busy = a->round_load[l] / capacity[l];
                    if (busy > d)
                        d = busy;
                    a->lloads[a->n_lloads++] = (struct lload){l, (float)busy};
                    a->round_load[l] = 0;
                }
                a->lstart[r + 1] = a->n_lloads;
                a->round_dur[r] = d;
                if (getenv("RF_DEBUG_ROUNDS") && i == 0) {
                    int32_t wl = -1;
                    double wb = 0;
                    for (size_t k = a->lstart[r]; k < a->lstart[r + 1]; k++)
                        if (a->lloads[k].seconds > wb)
                            wb = a->lloads[k].seconds, wl = a->lloads[k].link;
                    fprintf(stderr,
                            "[%g B lat %g best %g n %d] round %d dur %.4f alone %.4f busiest %s %d "
                            "%d %.4f\n",
                            a->dbg_bytes, a->dbg_lat, a->dbg_best, a->dbg_n, r, d, a->round_flow,
                            wl >= 0 ? rf_link_kind_name(a->topo->links[wl].kind) : "-",
                            wl >= 0 ? a->topo->links[wl].a : -1,
                            wl >= 0 ? a->topo->links[wl].b : -1, wb);
                }
                a->round_alone[r] = a->round_flow;
                a->n_touched = 0;
                a->round_flow = 0;
            }
        }
    }
    /* A broadcast waits for every gather of its tensor, whatever the stream window: rounds
     * before the window are implied by the chain of windows. */
    if (plan->n_collectives > 0) {
        int32_t(*gr)[2] = malloc(plan->n_tensors * sizeof(*gr));
        if (!gr) {
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
            goto out;
        }
        for (size_t i = 0; i < plan->n_tensors; i++)
            gr[i][0] = INT32_MAX, gr[i][1] = -1;
        for (size_t i = 0; i < plan->n_transfers; i++) {
            const struct rf_transfer *t = &plan->transfers[i];
            int32_t tensor = plan->boxes[t->box].tensor;
            if (t->phase != RF_PHASE_GATHER)
                continue;
            if (t->round < gr[tensor][0])
                gr[tensor][0] = t->round;
            if (t->round > gr[tensor][1])
                gr[tensor][1] = t->round;
        }
        for (size_t k = 0; k < plan->n_collectives && rc == 0; k++) {
            const struct rf_collective *col = &plan->collectives[k];
            int32_t lo = col->round - (int32_t)c->cal.streams + 1;
            if (lo < gr[col->tensor][0])
                lo = gr[col->tensor][0];
            for (int32_t g = lo; g <= gr[col->tensor][1] && g < col->round && rc == 0; g++)
                rc = add_edge(&s, col->round, g);
        }
        free(gr);
        if (rc < 0)
            goto out;
    }
    if (s.n_edges > 0)
        qsort(s.edges, s.n_edges, sizeof(*s.edges), cmp_edge);
    if (bound) {
        for (int i = 0; i < n_topos && rc == 0; i++)
            rc = round_bound(&s, &acc[i], capacity, tolerance, &bound[i],
                             estimate ? &estimate[i] : NULL);
        goto out;
    }
    for (size_t i = 0; i < s.n_edges; i++) {
        if (i > 0 && s.edges[i][0] == s.edges[i - 1][0] && s.edges[i][1] == s.edges[i - 1][1])
            continue;
        if ((rc = rf_flowsim_after(s.fs, s.edges[i][0], s.edges[i][1], err)) < 0)
            goto out;
    }
    if ((rc = rf_flowsim_run(s.fs, err)) < 0)
        goto out;

    out->predicted_s = rf_flowsim_makespan(s.fs);
    out->flows = (int64_t)s.n_flows;
    struct rf_flowsim_stats st;
    rf_flowsim_stats(s.fs, &st);
    out->events = st.events;
    for (int32_t r = 0; r < R; r++) {
        out->round_start[r] = rf_flowsim_group_start(s.fs, r);
        out->round_finish[r] = rf_flowsim_group_finish(s.fs, r);
    }
    for (int p = 0; p < RF_SIM_PHASE_COUNT; p++) {
        out->phase_start[p] = INFINITY;
        out->phase_finish[p] = 0;
    }
    for (size_t f = 0; f < s.n_flows; f++) {
        int p = s.flow_phase[f];
        double st0 = out->round_start[s.flow_group[f]];
        double fin = rf_flowsim_flow_finish(s.fs, (int64_t)f);
        if (st0 < out->phase_start[p])
            out->phase_start[p] = st0;
        if (fin > out->phase_finish[p])
            out->phase_finish[p] = fin;
    }
    for (int p = 0; p < RF_SIM_PHASE_COUNT; p++)
        if (isinf(out->phase_start[p]))
            out->phase_start[p] = 0;

    out->n_links = topo->n_links;
    out->link_bytes = malloc(topo->n_links * sizeof(double));
    out->link_busy = malloc(topo->n_links * sizeof(double));
    if (!out->link_bytes || !out->link_busy) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    memcpy(out->link_bytes, rf_flowsim_link_bytes(s.fs), topo->n_links * sizeof(double));
    memcpy(out->link_busy, rf_flowsim_link_busy(s.fs), topo->n_links * sizeof(double));
    /* Links left out of the flows: their bytes, and the time they would take at full rate. */
    for (size_t l = 0; l < topo->n_links; l++) {
        out->link_bytes[l] += s.extra_bytes[l];
        out->link_busy[l] += s.extra_bytes[l] / topo->links[l].capacity;
    }
    double worst = -1;
    for (size_t l = 0; l < topo->n_links; l++) {
        enum rf_link_kind k = topo->links[l].kind;
        if (k == RF_LINK_NVL_IN)
            out->nvlink_bytes += (int64_t)llround(out->link_bytes[l]);
        if (k == RF_LINK_NIC_OUT)
            out->fabric_bytes += (int64_t)llround(out->link_bytes[l]);
        /* The bottleneck: the link kept busiest, judged by its load at full rate. */
        double load = out->link_bytes[l] / topo->links[l].capacity;
        if (out->link_bytes[l] > 0 && load > worst) {
            worst = load;
            out->bottleneck = (int32_t)l;
        }
    }
    rc = 0;
out:
    out->sim_seconds = wall() - t0;
    rf_flowsim_free(s.fs);
    for (int i = 0; i < RF_SIM_MAX_TOPOLOGIES; i++) {
        free(acc[i].round_load);
        free(acc[i].total_load);
        free(acc[i].touched);
        free(acc[i].round_dur);
        free(acc[i].round_alone);
        free(acc[i].lloads);
        free(acc[i].lstart);
    }
    free(s.msg_tmp);
    free(s.count);
    for (int i = 0; i < RF_SIM_MAX_TOPOLOGIES; i++)
        free(s.fill[i]);
    free(s.binds);
    free(s.extra_bytes);
    free(s.flow_phase);
    free(s.flow_group);
    free(s.edges);
    free(m);
    free(chains);
    free(runs_of);
    free(tstart);
    free(cstart);
    free(torder);
    free(corder);
    free(capacity);
    if (rc < 0)
        rf_prediction_release(out);
    return rc;
}

int rf_simulate(const struct rf_plan *plan, const struct rf_side *train,
                const struct rf_side *infer, const struct rf_topology *topo,
                const struct rf_sim_options *opts, struct rf_prediction *out, struct rf_error *err)
{
    double tolerance;
    memset(out, 0, sizeof(*out));
    int rc = rf_sim_options_tolerance(opts, &tolerance, err);
    if (rc < 0)
        return rc;
    return model(plan, train, infer, &topo, 1, tolerance, out, NULL, NULL, err);
}

int rf_simulate_bound(const struct rf_plan *plan, const struct rf_side *train,
                      const struct rf_side *infer, const struct rf_topology *const *topos,
                      int n_topos, const struct rf_sim_options *opts, double *bound,
                      double *estimate, struct rf_error *err)
{
    struct rf_prediction scratch;
    double tolerance;
    int rc = rf_sim_options_tolerance(opts, &tolerance, err);
    if (rc < 0)
        return rc;
    if (n_topos < 1 || n_topos > RF_SIM_MAX_TOPOLOGIES)
        return rf_error_set(err, RF_EINVAL, "rf_simulate_bound: %d topologies", n_topos);
    for (int i = 1; i < n_topos; i++)
        if (topos[i]->n_links != topos[0]->n_links || topos[i]->gpus != topos[0]->gpus)
            return rf_error_set(err, RF_EINVAL,
                                "rf_simulate_bound: the topologies are not of one cluster");
    rc = model(plan, train, infer, topos, n_topos, tolerance, &scratch, bound, estimate, err);
    rf_prediction_release(&scratch);
    return rc;
}

void rf_prediction_release(struct rf_prediction *p)
{
    if (!p)
        return;
    free(p->link_bytes);
    free(p->link_busy);
    free(p->round_start);
    free(p->round_finish);
    memset(p, 0, sizeof(*p));
}
