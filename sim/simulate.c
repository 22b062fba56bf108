/* Simulation of a scheduled plan. Each round becomes a flow group: its transfers are merged
 * into one message per (source, destination) pair, as the executor packs them, and each
 * message is a flow through the source's copy engine (pack), the route, and the
 * destination's copy engine (unpack); FP8 runs add the source's quantiser. Broadcasts are
 * pipelined chains. Round r waits for round r - streams (that many staging buffers in
 * flight) and for every round it depends on. Fixed costs (per message, per tensor, per
 * round) are latencies; every mechanism has its knob in the cluster's calibration. A round's
 * flows are built in sim/simulate_round.c, bound mode's accounting is sim/simulate_bound.c. */
#include "simulate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "array.h"
#include "flowsim.h"
#include "simulate_int.h"
#include "update_phases.h"

static const char *const phase_names[RF_SIM_PHASE_COUNT] = {
    "gather", "deliver", "fanout", "broadcast", "local", "diff", "scatter", "merge"};

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
    for (int64_t i = 0; i < t->leaves; i++) {
        const struct rf_link *up = &t->links[rf_topology_link(t, RF_LINK_LEAF_UP, i)];
        int64_t group = i / c->nic.per_node;
        bool can = up->capacity < rf_topology_leaf_inject(t, group) * (1 - 1e-9);
        binds[rf_topology_link(t, RF_LINK_LEAF_UP, i)] = can;
        binds[rf_topology_link(t, RF_LINK_LEAF_DOWN, i)] = can;
    }
    for (int64_t g = 0; g < t->gpus; g++) {
        double nvl = t->links[rf_topology_link(t, RF_LINK_NVL_OUT, g)].capacity;
        double nic = rf_cluster_rates(c, g).nic_gbps * 1e9 * c->cal.nic_efficiency;
        double feed = nvl + (c->nic.per_node > 0 ? nic : 0);
        binds[rf_topology_link(t, RF_LINK_COPY, g)] =
            t->links[rf_topology_link(t, RF_LINK_COPY, g)].capacity < 2 * feed;
        binds[rf_topology_link(t, RF_LINK_QUANT, g)] =
            t->links[rf_topology_link(t, RF_LINK_QUANT, g)].capacity < feed;
        binds[rf_topology_link(t, RF_LINK_QUANT4, g)] =
            t->links[rf_topology_link(t, RF_LINK_QUANT4, g)].capacity < feed;
    }
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *x = &plan->transfers[i];
        if (x->src == x->dst && x->dst_count == 1 && x->src < t->gpus)
            binds[rf_topology_link(t, RF_LINK_COPY, x->src)] = true;
    }
}

static int cmp_edge(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

int sim_add_edge(struct sim *s, int32_t group, int32_t prerequisite)
{
    int rc = RF_GROW(s->edges, s->cap_edges, s->n_edges + 1, s->err);
    if (rc < 0)
        return rc;
    s->edges[s->n_edges][0] = group;
    s->edges[s->n_edges][1] = prerequisite;
    s->n_edges++;
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

/* The replay's communicator: rank r plays GPU r, and the world holds every GPU of both sides
 * and every GPU the plan names (rf_plan_gpu_extent, as exec/part.c rf_part_gpus). A GPU of a
 * transfer outside the cluster is refused. */
static int communicator(struct sim *s, const struct rf_side *train, const struct rf_side *infer)
{
    const struct rf_plan *plan = s->plan;
    const struct rf_topology *topo = s->topos[0];
    s->comm_ranks = train->first_gpu + train->gpus;
    if (infer->first_gpu + infer->place.span > s->comm_ranks)
        s->comm_ranks = infer->first_gpu + infer->place.span;
    if (rf_plan_gpu_extent(plan) > s->comm_ranks)
        s->comm_ranks = rf_plan_gpu_extent(plan);
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        int64_t hi = rf_gpu_run_last(t->dst, t->dst_count, t->dst_stride);
        if (t->src >= topo->gpus || hi >= topo->gpus)
            return rf_error_set(
                s->err, RF_EINVAL, "the plan uses GPU %lld but cluster %s has %lld GPUs",
                (long long)(t->src > hi ? t->src : hi), topo->cluster->name, (long long)topo->gpus);
    }
    return 0;
}

/* The arrays of a run, the links that can saturate, the relays' fills, and either the flow
 * engine with the plan's lower bound or bound mode's accumulators. */
static int setup(struct sim *s, const struct rf_side *train, const struct rf_side *infer)
{
    const struct rf_plan *plan = s->plan;
    const struct rf_topology *topo = s->topos[0];
    struct rf_prediction *out = s->out;
    int32_t R = plan->n_rounds;
    int rc;

    s->whole_piece = plan->staging_bytes > 0 ? plan->staging_bytes / 8 * 8 : 0;
    s->chunk = plan->chunk_bytes > 0 ? (double)plan->chunk_bytes : (double)s->whole_piece;
    s->capacity = malloc(topo->n_links * sizeof(double));
    s->runs_of = calloc((size_t)topo->gpus, sizeof(int32_t));
    s->tstart = calloc((size_t)R + 2, sizeof(size_t));
    s->cstart = calloc((size_t)R + 2, sizeof(size_t));
    s->torder = malloc((plan->n_transfers + 1) * sizeof(size_t));
    s->corder = malloc((plan->n_collectives + 1) * sizeof(size_t));
    s->chains = malloc((plan->n_collectives + 1) * sizeof(*s->chains));
    out->round_start = calloc((size_t)R + 1, sizeof(double));
    out->round_finish = calloc((size_t)R + 1, sizeof(double));
    s->binds = malloc(topo->n_links * sizeof(bool));
    s->extra_bytes = calloc(topo->n_links, sizeof(double));
    if (!s->capacity || !s->runs_of || !s->tstart || !s->cstart || !s->torder || !s->corder ||
        !s->chains || !out->round_start || !out->round_finish || !s->binds || !s->extra_bytes)
        return rf_error_set(s->err, RF_ENOMEM, "out of memory");
    out->n_rounds = R;
    for (size_t l = 0; l < topo->n_links; l++)
        s->capacity[l] = topo->links[l].capacity;
    mark_binding(plan, topo, s->binds);
    for (int i = 0; i < s->n_topos; i++)
        if ((rc = sim_relay_fill(plan, s->topos[i], &s->fill[i], s->err)) < 0)
            return rc;
    if (s->bound_only)
        return sim_bound_init(s);
    if ((rc = rf_flowsim_new(&s->fs, topo->n_links, s->capacity, s->err)) < 0)
        return rc;
    rf_flowsim_set_tolerance(s->fs, s->tolerance);
    rf_flowsim_set_once(s->fs);
    if ((rc = rf_lower_bound(plan, train, infer, topo, &out->lower_bound_s, s->err)) < 0)
        return rc;
    /* Batched flows finish up to the tolerance early, and many distinct finishes on one
     * saturated link add up (t/simulate-t.c: 24 messages into one NIC come out 0.35%
     * under the exact time at 1%): the bound takes the margin rf_simulate_bound takes,
     * so that no prediction is below it at any accepted tolerance. */
    out->lower_bound_s *= 1 - 2 * s->tolerance;
    return 0;
}

/* Transfers and collectives bucketed by round (counting sort). */
static void bucket_rounds(struct sim *s)
{
    const struct rf_plan *plan = s->plan;
    int32_t R = plan->n_rounds;
    size_t *tstart = s->tstart, *cstart = s->cstart;
    for (size_t i = 0; i < plan->n_transfers; i++)
        tstart[plan->transfers[i].round + 1]++;
    for (size_t i = 0; i < plan->n_collectives; i++)
        cstart[plan->collectives[i].round + 1]++;
    for (int32_t r = 0; r < R; r++) {
        tstart[r + 1] += tstart[r];
        cstart[r + 1] += cstart[r];
    }
    for (size_t i = 0; i < plan->n_transfers; i++)
        s->torder[tstart[plan->transfers[i].round]++] = i;
    for (size_t i = 0; i < plan->n_collectives; i++)
        s->corder[cstart[plan->collectives[i].round]++] = i;
    for (int32_t r = R; r > 0; r--) {
        tstart[r] = tstart[r - 1];
        cstart[r] = cstart[r - 1];
    }
    tstart[0] = cstart[0] = 0;
}

/* Round r's flows (or bound mode's loads), and its wait for round r - streams: that many
 * staging buffers are in flight. */
static int model_round(struct sim *s, int32_t r)
{
    int32_t streams = (int32_t)s->topos[0]->cluster->cal.streams;
    int rc;
    if ((rc = sim_round_transfers(s, r)) < 0 || (rc = sim_round_chains(s, r)) < 0)
        return rc;
    if (r >= streams && (rc = sim_add_edge(s, r, r - streams)) < 0)
        return rc;
    return s->bound_only ? sim_bound_round(s, r) : 0;
}

/* A broadcast waits for every gather of its tensor, whatever the stream window: rounds
 * before the window are implied by the chain of windows. */
static int gather_edges(struct sim *s)
{
    const struct rf_plan *plan = s->plan;
    int32_t streams = (int32_t)s->topos[0]->cluster->cal.streams;
    int rc = 0;
    if (plan->n_collectives == 0 || s->skip_gather)
        return 0;
    int32_t(*gr)[2] = malloc(plan->n_tensors * sizeof(*gr));
    if (!gr)
        return rf_error_set(s->err, RF_ENOMEM, "out of memory");
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
        int32_t lo = col->round - streams + 1;
        if (lo < gr[col->tensor][0])
            lo = gr[col->tensor][0];
        for (int32_t g = lo; g <= gr[col->tensor][1] && g < col->round && rc == 0; g++)
            rc = sim_add_edge(s, col->round, g);
    }
    free(gr);
    return rc;
}

/* The barriers (sorted, each once) into the engine, and the run. */
static int run_flows(struct sim *s)
{
    int rc;
    for (size_t i = 0; i < s->n_edges; i++) {
        if (i > 0 && s->edges[i][0] == s->edges[i - 1][0] && s->edges[i][1] == s->edges[i - 1][1])
            continue;
        if ((rc = rf_flowsim_after(s->fs, s->edges[i][0], s->edges[i][1], s->err)) < 0)
            return rc;
    }
    return rf_flowsim_run(s->fs, s->err);
}

/* The prediction from the run: makespan, rounds, phases, link loads (the simulated links'
 * and those left out), fabric and NVLink bytes, the bottleneck. */
static int collect(struct sim *s)
{
    struct rf_prediction *out = s->out;
    const struct rf_topology *topo = s->topos[0];
    int32_t R = s->plan->n_rounds;

    out->predicted_s = rf_flowsim_makespan(s->fs);
    out->flows = (int64_t)s->n_flows;
    struct rf_flowsim_stats st;
    rf_flowsim_stats(s->fs, &st);
    out->events = st.events;
    for (int32_t r = 0; r < R; r++) {
        out->round_start[r] = rf_flowsim_group_start(s->fs, r);
        out->round_finish[r] = rf_flowsim_group_finish(s->fs, r);
    }
    for (int p = 0; p < RF_SIM_PHASE_COUNT; p++) {
        out->phase_start[p] = INFINITY;
        out->phase_finish[p] = 0;
    }
    for (size_t f = 0; f < s->n_flows; f++) {
        int p = s->flow_phase[f];
        double st0 = out->round_start[s->flow_group[f]];
        double fin = rf_flowsim_flow_finish(s->fs, (int64_t)f);
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
    if (!out->link_bytes || !out->link_busy)
        return rf_error_set(s->err, RF_ENOMEM, "out of memory");
    memcpy(out->link_bytes, rf_flowsim_link_bytes(s->fs), topo->n_links * sizeof(double));
    memcpy(out->link_busy, rf_flowsim_link_busy(s->fs), topo->n_links * sizeof(double));
    /* Links left out of the flows: their bytes, and the time they would take at full rate. */
    for (size_t l = 0; l < topo->n_links; l++) {
        out->link_bytes[l] += s->extra_bytes[l];
        out->link_busy[l] += s->extra_bytes[l] / topo->links[l].capacity;
    }
    double worst = -1;
    for (size_t l = 0; l < topo->n_links; l++) {
        enum rf_link_kind k = topo->links[l].kind;
        if (k == RF_LINK_NVL_IN)
            out->nvlink_bytes += (int64_t)llround(out->link_bytes[l]);
        if (k == RF_LINK_NIC_OUT)
            out->fabric_bytes += (int64_t)llround(out->link_bytes[l]);
        if ((out->link_bytes[l] > 0 || out->link_busy[l] > 0) && out->link_busy[l] > worst)
            worst = out->link_busy[l];
    }
    /* The bottleneck: the link kept busy longest (link_load.busy_seconds). Its bytes at full
     * rate alone understate a link whose flows a slower one throttles: on
     * t/data/sim/qwen3-30b.lua's reshard the NIC with the most bytes per GB/s is busy 0.636 s,
     * another NIC 0.649 s. The links of one chain of flows end together, so of those busy as
     * long (to 1e-9), the one that carried the most at full rate is the one saturated: an NVLink
     * port 13% used waits on its NIC, it does not limit it. The lowest link id of a tie. */
    double most = -1;
    for (size_t l = 0; worst >= 0 && l < topo->n_links; l++) {
        double load = out->link_bytes[l] / topo->links[l].capacity;
        bool used = out->link_bytes[l] > 0 || out->link_busy[l] > 0;
        if (used && out->link_busy[l] >= worst * (1 - 1e-9) && load > most) {
            most = load;
            out->bottleneck = (int32_t)l;
        }
    }
    return 0;
}

static void sim_release(struct sim *s)
{
    rf_flowsim_free(s->fs);
    sim_bound_release(s);
    sim_round_release(s);
    free(s->msg_tmp);
    free(s->mcache);
    free(s->count);
    for (int i = 0; i < RF_SIM_MAX_TOPOLOGIES; i++)
        free(s->fill[i]);
    free(s->binds);
    free(s->extra_bytes);
    free(s->flow_phase);
    free(s->flow_group);
    free(s->edges);
    free(s->m);
    free(s->chains);
    free(s->runs_of);
    free(s->tstart);
    free(s->cstart);
    free(s->torder);
    free(s->corder);
    free(s->capacity);
}

/* The rounds of a plan as flows and barriers: simulated (bound NULL), or reduced to the
 * least time any simulation of them can take (bound set: sim/simulate_bound.c). */
static int model(const struct rf_plan *plan, const struct rf_side *train,
                 const struct rf_side *infer, const struct rf_topology *const *topos, int n_topos,
                 double tolerance, const struct rf_sim_options *opts, struct rf_prediction *out,
                 double *bound, double *estimate, struct rf_error *err)
{
    struct sim s = {.plan = plan,
                    .topo = topos[0],
                    .topos = topos,
                    .n_topos = bound ? n_topos : 1,
                    .tolerance = tolerance,
                    .tensor_mask = opts ? opts->tensor_mask : NULL,
                    .dst_mask = opts ? opts->dst_mask : NULL,
                    .skip_gather = opts && opts->skip_gather,
                    .err = err,
                    .out = out,
                    .bound_only = bound};
    double t0 = wall();
    int rc;

    memset(out, 0, sizeof(*out));
    out->bottleneck = -1;
    if ((rc = communicator(&s, train, infer)) < 0)
        return rc;
    if ((rc = setup(&s, train, infer)) < 0)
        goto out;
    bucket_rounds(&s);
    for (int32_t r = 0; r < plan->n_rounds; r++)
        if ((rc = model_round(&s, r)) < 0)
            goto out;
    if ((rc = gather_edges(&s)) < 0)
        goto out;
    if (s.n_edges > 0)
        qsort(s.edges, s.n_edges, sizeof(*s.edges), cmp_edge);
    /* The rounds are made: their messages, the sort's copy and the merge cache (for Kimi K3
     * onto 4,096 GPUs 0.3 GB, its largest round's) need not live through the run. */
    free(s.m);
    free(s.msg_tmp);
    free(s.mcache);
    s.m = s.msg_tmp = NULL;
    s.mcache = NULL;
    s.cap_m = s.cap_tmp = s.mcache_n = 0;
    if (bound)
        rc = sim_bound_finish(&s, bound, estimate);
    else if ((rc = run_flows(&s)) == 0 && (rc = collect(&s)) == 0)
        rc =
            rf_update_phases(plan, train, infer, s.topo, opts ? opts->tensor_mask : NULL, out, err);
out:
    out->sim_seconds = wall() - t0;
    sim_release(&s);
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
    return model(plan, train, infer, &topo, 1, tolerance, opts, out, NULL, NULL, err);
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
    rc = model(plan, train, infer, topos, n_topos, tolerance, opts, &scratch, bound, estimate, err);
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
