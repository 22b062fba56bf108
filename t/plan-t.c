/* Planner: hand-computable plans and property tests on random layouts (the seed is printed;
 * REFIT_SEED=<n> replays one). Every destination element must be delivered exactly once
 * from a GPU that holds it; reshard never moves more than broadcast; rank order does not
 * change the result. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "checked.h"
#include "fixtures.h"
#include "plan.h"
#include "topology.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
    /* splitmix64: tiny, good enough for drawing layouts */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int64_t pick(const int64_t *v, int n)
{
    return v[rnd() % (uint64_t)n];
}

/* Checks that every destination element of every tensor is delivered exactly once from a
 * source that holds it. */
static void check_coverage(const struct rf_plan *plan, struct rf_side *train, struct rf_side *infer)
{
    for (size_t ti = 0; ti < plan->n_tensors; ti++) {
        const struct rf_tensor *t = &plan->tensors[ti];
        struct rf_placement pl, spl;
        const struct rf_mesh *m = rf_side_placement(infer, t, &pl);
        const struct rf_mesh *sm = rf_side_placement(train, t, &spl);
        int64_t coord[RF_MESH_MAX] = {0};
        int64_t n_coords = 1;
        for (int a = 0; a < m->ndim; a++)
            n_coords *= m->size[a];
        for (int64_t k = 0; k < n_coords; k++) {
            int64_t r = k;
            for (int a = m->ndim - 1; a >= 0; a--) {
                coord[a] = r % m->size[a];
                r /= m->size[a];
            }
            if (coord[pl.stage_axis] != pl.stage)
                continue;
            struct rf_box want;
            rf_placement_box(&pl, m, t->ndim, t->shape, coord, &want);
            int64_t n = rf_box_numel(&want, t->ndim);
            if (n == 0)
                continue;
            int32_t gpu = (int32_t)rf_mesh_gpu(m, coord);
            int *hits = calloc((size_t)n, sizeof(int));
            for (size_t x = 0; x < plan->n_transfers; x++) {
                const struct rf_transfer *tr = &plan->transfers[x];
                const struct rf_plan_box *pb = &plan->boxes[tr->box];
                if (pb->tensor != (int32_t)ti || tr->phase != RF_PHASE_DELIVER)
                    continue;
                for (int32_t i = 0; i < tr->dst_count; i++) {
                    if (tr->dst + i * tr->dst_stride != gpu)
                        continue;
                    if (tr->after >= 0) {
                        /* A forwarded copy: its source received this very box first. */
                        const struct rf_transfer *a = &plan->transfers[tr->after];
                        bool covered = false;
                        assert_int_equal(a->box, tr->box);
                        for (int32_t j = 0; j < a->dst_count; j++)
                            covered |= a->dst + j * a->dst_stride == tr->src;
                        assert_true(covered);
                        assert_int_equal(a->after, -1);
                        goto mark;
                    }
                    /* The source holds the piece: find its coordinate on the source mesh. */
                    int64_t sc[RF_MESH_MAX] = {0}, rem = tr->src - sm->first_gpu;
                    for (int a = 0; a < sm->ndim; a++) {
                        sc[a] = rem / sm->stride[a] % sm->size[a];
                    }
                    assert_int_equal(rf_mesh_gpu(sm, sc), tr->src);
                    assert_int_equal(sc[spl.stage_axis], spl.stage);
                    struct rf_box have, inter;
                    rf_placement_box(&spl, sm, t->ndim, t->shape, sc, &have);
                    assert_true(rf_box_intersect(&have, &pb->box, t->ndim, &inter));
                    assert_int_equal(rf_box_numel(&inter, t->ndim),
                                     rf_box_numel(&pb->box, t->ndim));
                mark:
                    /* Mark the elements of the piece inside the destination box. */
                    int64_t idx[RF_MAX_DIMS] = {0};
                    int64_t pn = rf_box_numel(&pb->box, t->ndim);
                    for (int64_t e = 0; e < pn; e++) {
                        int64_t q = e, flat = 0;
                        for (int d = t->ndim - 1; d >= 0; d--) {
                            idx[d] = q % pb->box.len[d];
                            q /= pb->box.len[d];
                        }
                        for (int d = 0; d < t->ndim; d++) {
                            int64_t g = pb->box.off[d] + idx[d] - want.off[d];
                            assert_true(g >= 0 && g < want.len[d]);
                            flat = flat * want.len[d] + g;
                        }
                        hits[flat]++;
                    }
                }
            }
            for (int64_t e = 0; e < n; e++)
                if (hits[e] != 1)
                    fail_msg("tensor %s gpu %d element %lld delivered %d times", t->name, gpu,
                             (long long)e, hits[e]);
            free(hits);
        }
    }
}

static void release_sides(struct rf_side *a, struct rf_side *b)
{
    rf_side_release(a);
    rf_side_release(b);
}

static void column_tp2_to_tp4(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 8, 4, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 1};
    struct rf_side tr = train_side(2, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(4, 1, 1, 1, 1, 2, 1, RF_DT_BF16);
    struct rf_plan p;
    struct rf_error err;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
    /* Rows 0-3 on GPU 0, 4-7 on GPU 1; each of GPUs 2..5 gets 2 rows from one of them. */
    assert_int_equal(p.n_transfers, 4);
    assert_int_equal(p.total.payload_bytes, 8 * 4 * 2);
    assert_int_equal(p.transfers[0].src, 0);
    assert_int_equal(p.transfers[0].dst, 2);
    assert_int_equal(p.transfers[3].src, 1);
    assert_int_equal(p.transfers[3].dst, 5);
    assert_int_equal(p.boxes[p.transfers[3].box].box.off[0], 6);
    check_coverage(&p, &tr, &in);
    rf_plan_release(&p);
    release_sides(&tr, &in);
}

static void replicas_balance_sources(void **state)
{
    (void)state;
    /* 4 identical training replicas (DP4), 8 inference replicas: each source serves 2. */
    struct rf_tensor ts[] = {tensor("n", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 64, 0, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 1};
    struct rf_side tr = train_side(1, 1, 1, 4, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(1, 1, 1, 1, 8, 4, 1, RF_DT_BF16);
    struct rf_plan p;
    struct rf_error err;
    int64_t sent[4] = {0};
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
    for (size_t i = 0; i < p.n_transfers; i++)
        sent[p.transfers[i].src] += p.transfers[i].bytes * p.transfers[i].dst_count;
    for (int g = 0; g < 4; g++)
        assert_int_equal(sent[g], 2 * 64 * 2);
    /* Contiguous destinations of one source are one run. */
    assert_int_equal(p.n_transfers, 4);
    assert_int_equal(p.total.transfers, 8);
    rf_plan_release(&p);
    release_sides(&tr, &in);
}

static void colocated_same_layout_is_local(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_ROW, RF_ROLE_ATTENTION, 0, 6, 10, 0),
                             tensor("e", RF_CLASS_EXPERT_COLUMN, RF_ROLE_EXPERT, 0, 4, 6, 2)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 2};
    struct rf_side tr = train_side(4, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(4, 1, 1, 1, 1, 0, 1, RF_DT_BF16);
    struct rf_plan p;
    struct rf_error err;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
    assert_int_equal(p.total.payload_bytes, 0);
    assert_int_equal(p.total.local_bytes, (6 * 10 + 4 * 6 * 2) * 2);
    check_coverage(&p, &tr, &in);
    rf_plan_release(&p);
    release_sides(&tr, &in);
}

static void broadcast_is_two_model_sizes(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("emb", RF_CLASS_VOCAB, RF_ROLE_EMBEDDING, -1, 32, 8, 0),
                             tensor("w", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 8, 8, 0),
                             tensor("e", RF_CLASS_EXPERT_ROW, RF_ROLE_EXPERT, 1, 8, 4, 8)};
    struct rf_model m = {.name = "m", .layers = 2, .tensors = ts, .n_tensors = 3};
    struct rf_side tr = train_side(2, 1, 2, 2, 4, 1, false, 0, 2);
    struct rf_side in = infer_side(2, 1, 1, 1, 3, 8, 2, RF_DT_BF16);
    struct rf_plan p;
    struct rf_error err;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_BROADCAST, NULL, NULL, &err), 0);
    int64_t model = (32 * 8 + 8 * 8 + 8 * 4 * 8) * 2;
    assert_int_equal(p.model_bytes, model);
    assert_int_equal(p.total.logical_bytes, 2 * model);
    /* Every one of the 6 inference GPUs receives the whole model. */
    assert_int_equal(p.total.payload_bytes, 6 * model);
    assert_int_equal(p.n_collectives, 3);
    /* The gather brings every byte to the root (GPU 0) except what it holds itself. */
    int64_t gathered = 0, local = 0;
    for (size_t i = 0; i < p.n_transfers; i++) {
        assert_int_equal(p.transfers[i].dst, 0);
        assert_int_equal(p.transfers[i].phase, RF_PHASE_GATHER);
        if (p.transfers[i].src == 0)
            local += p.transfers[i].bytes;
        else
            gathered += p.transfers[i].bytes;
    }
    assert_int_equal(gathered + local, model);
    assert_int_equal(p.total.moved_bytes, gathered + 6 * model);
    rf_plan_release(&p);
    release_sides(&tr, &in);
}

static void fp8_adds_block_scales(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {
        tensor("model.w.weight", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 300, 256, 0),
        tensor("model.n.weight", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 256, 0, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 2};
    struct rf_side tr = train_side(2, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(1, 1, 1, 1, 1, 2, 1, RF_DT_FP8);
    struct rf_plan p;
    struct rf_error err;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
    assert_int_equal(p.n_tensors, 3);
    assert_string_equal(p.tensors[2].name, "model.w.weight_scale_inv");
    assert_int_equal(p.tensors[2].shape[0], 3); /* ceil(300 / 128) */
    assert_int_equal(p.tensors[2].shape[1], 2);
    assert_int_equal(p.wire_dtype[0], RF_DT_FP8);
    /* FP8 weight (1 byte), BF16 norm, FP32 scales. */
    assert_int_equal(p.total.payload_bytes, 300 * 256 + 256 * 2 + 3 * 2 * 4);
    check_coverage(&p, &tr, &in);
    rf_plan_release(&p);
    release_sides(&tr, &in);
}

/* A random model of every class with uneven sizes. */
static void random_model(struct rf_model *m, struct rf_tensor *ts, int layers)
{
    static const int64_t dims[] = {1, 3, 5, 7, 8, 12, 16, 30};
    static const int64_t experts[] = {2, 4, 6, 8, 12};
    int n = 0;
    ts[n++] =
        tensor("emb", RF_CLASS_VOCAB, RF_ROLE_EMBEDDING, -1, pick(dims, 8) + 10, pick(dims, 8), 0);
    for (int l = 0; l < layers; l++) {
        ts[n++] =
            tensor("col", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, l, pick(dims, 8), pick(dims, 8), 0);
        ts[n++] =
            tensor("row", RF_CLASS_ROW, RF_ROLE_ATTENTION, l, pick(dims, 8), pick(dims, 8), 0);
        ts[n++] = tensor("norm", RF_CLASS_REPLICATED, RF_ROLE_NORM, l, pick(dims, 8), 0, 0);
        int64_t e = pick(experts, 5);
        ts[n++] = tensor("ecol", RF_CLASS_EXPERT_COLUMN, RF_ROLE_EXPERT, l, e, pick(dims, 8),
                         pick(dims, 8));
        ts[n++] =
            tensor("erow", RF_CLASS_EXPERT_ROW, RF_ROLE_EXPERT, l, e, pick(dims, 8), pick(dims, 8));
    }
    ts[n++] = tensor("head", RF_CLASS_VOCAB, RF_ROLE_LM_HEAD, layers, pick(dims, 8) + 3,
                     pick(dims, 8), 0);
    *m = (struct rf_model){.name = "random",
                           .layers = layers,
                           .tensors = ts,
                           .n_tensors = (size_t)n,
                           .experts = 4,
                           .experts_per_token = 1};
}

static void random_sides(struct rf_side *tr, struct rf_side *in, int layers, bool swap,
                         bool colocate)
{
    static const int64_t small[] = {1, 1, 2, 2, 3, 4};
    int64_t tp = pick(small, 6), cp = pick(small, 3), pp = 1 + (int64_t)(rnd() % 3);
    int64_t dp = pick(small, 6);
    int64_t world = tp * cp * dp;
    /* ep * etp must divide tp * cp * dp. */
    int64_t ep = 1, etp = 1;
    for (int64_t cand = world; cand >= 1; cand--)
        if (world % cand == 0 && rnd() % 3 == 0) {
            ep = cand;
            break;
        }
    if ((world / ep) % 2 == 0 && rnd() % 2)
        etp = 2;
    bool fsdp = rnd() % 4 == 0;
    int64_t itp = pick(small, 6), ipp = 1 + (int64_t)(rnd() % 2), idp = 1 + (int64_t)(rnd() % 2);
    int64_t iep = rnd() % 2 ? itp * idp : 1, rep = 1 + (int64_t)(rnd() % 3);
    int64_t tgpus = tp * cp * pp * dp, igpus = itp * ipp * idp * rep;
    int64_t tfirst = swap ? igpus : 0, ifirst = swap ? 0 : tgpus;
    if (colocate)
        tfirst = ifirst = 0;
    *tr = train_side(tp, cp, pp, dp, ep, etp, fsdp, tfirst, layers);
    *in = infer_side(itp, ipp, idp, iep, rep, ifirst, layers, rnd() % 4 ? RF_DT_BF16 : RF_DT_FP8);
}

static uint64_t seed(void)
{
    const char *s = getenv("REFIT_SEED");
    uint64_t v = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
    printf("# seed %llu (REFIT_SEED to replay)\n", (unsigned long long)v);
    return v;
}

/* 64 nodes of 4 GPUs, NVLink domains of 2, a NIC per 2 GPUs: enough for any random side. */
static struct rf_cluster small_cluster(void)
{
    struct rf_cluster c = {.name = "small", .source = "t", .nodes = 64, .gpus_per_node = 4};
    c.nvlink.domain_gpus = 2;
    c.nvlink.gbps = 100;
    c.nic.per_node = 2;
    c.nic.gbps = 25;
    c.fabric.nodes_per_leaf = 4;
    c.fabric.oversubscription = 1;
    c.fabric.pxn = true;
    c.cal.nvlink_efficiency = c.cal.nic_efficiency = 1;
    c.cal.memcpy_gbps = c.cal.quant_gbps = 1000;
    c.cal.streams = 1;
    return c;
}

/* Bytes of transfers whose source and destination lie in different NVLink domains. */
static int64_t cross_domain_bytes(const struct rf_plan *p, const struct rf_topology *t)
{
    int64_t n = 0;
    for (size_t i = 0; i < p->n_transfers; i++) {
        const struct rf_transfer *x = &p->transfers[i];
        for (int32_t k = 0; k < x->dst_count; k++)
            if (rf_topology_domain(t, x->src) != rf_topology_domain(t, x->dst + k * x->dst_stride))
                n += x->bytes;
    }
    return n;
}

static void random_layouts_cover_exactly_once(void **state)
{
    (void)state;
    rng_state = seed();
    for (int iter = 0; iter < 60; iter++) {
        struct rf_tensor ts[64];
        struct rf_model m;
        struct rf_side tr, in;
        struct rf_plan rs, bc;
        struct rf_error err;
        int layers = 1 + (int)(rnd() % 4);
        random_model(&m, ts, layers);
        random_sides(&tr, &in, layers, false, iter % 5 == 0);
        if (rf_plan_build(&rs, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err) < 0)
            fail_msg("iteration %d: %s", iter, err.msg);
        check_coverage(&rs, &tr, &in);
        /* Hierarchical and local sources on a cluster of 2-GPU NVLink domains with 2 NICs
         * per 4-GPU node: the same coverage and payload; with local sources hierarchical
         * never crosses domains more than reshard. */
        struct rf_topology topo;
        struct rf_cluster c = small_cluster();
        assert_int_equal(rf_topology_init(&topo, &c, &err), 0);
        int64_t cross[2][2];
        for (int k = 0; k < 4; k++) {
            struct rf_plan hp;
            enum rf_strategy st = k & 1 ? RF_STRAT_HIERARCHICAL : RF_STRAT_RESHARD;
            struct rf_plan_opts o = {.topo = &topo,
                                     .sources = k & 2 ? RF_SOURCES_LOCAL : RF_SOURCES_BALANCED};
            if (rf_plan_build(&hp, &m, &tr, &in, st, NULL, &o, &err) < 0)
                fail_msg("iteration %d: %s", iter, err.msg);
            check_coverage(&hp, &tr, &in);
            assert_int_equal(hp.total.payload_bytes, rs.total.payload_bytes);
            cross[k >> 1][k & 1] = cross_domain_bytes(&hp, &topo);
            rf_plan_release(&hp);
        }
        assert_true(cross[1][1] <= cross[1][0]);
        rf_topology_release(&topo);
        assert_int_equal(rf_plan_build(&bc, &m, &tr, &in, RF_STRAT_BROADCAST, NULL, NULL, &err), 0);
        /* Reshard never moves more bytes than gather-and-broadcast. With disjoint pools it
         * also never delivers more; colocated, the broadcast root's copy arrives by the
         * gather instead, so payloads are not comparable. */
        assert_true(rs.total.moved_bytes <= bc.total.moved_bytes);
        if (iter % 5 != 0)
            assert_true(rs.total.payload_bytes <= bc.total.payload_bytes);
        rf_plan_release(&rs);
        rf_plan_release(&bc);
        release_sides(&tr, &in);
    }
}

/* An NVL72-like cluster in miniature: trays of 4 GPUs, NVLink domains of 8 (2 trays), and
 * nics NICs per tray (4: one per GPU, as GB200; 2: a NIC per 2 GPUs). */
static struct rf_cluster tray_cluster(int64_t nics)
{
    struct rf_cluster c = small_cluster();
    c.nodes = 6;
    c.nvlink.domain_gpus = 8;
    c.nic.per_node = nics;
    c.fabric.nodes_per_leaf = 6;
    return c;
}

/* Hierarchical leaders spread over every destination NIC of a domain (M2N's leaders are
 * per domain, not one GPU for every box): experts of 4 training GPUs (domain 0) onto 8 TP2
 * replicas in domains 1 and 2. Each box goes to one GPU per replica; when the lowest GPU of
 * the domain led every box, 4 of the 16 inference NICs with one NIC per GPU (2 of 8 with
 * one per 2 GPUs) received every fabric byte. Each delivery also lands on the source's rail
 * whenever the domain has a destination there. */
static void hierarchical_leaders_spread_over_nics(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("e0", RF_CLASS_EXPERT_COLUMN, RF_ROLE_EXPERT, 0, 4, 8, 16),
                             tensor("e1", RF_CLASS_EXPERT_ROW, RF_ROLE_EXPERT, 0, 4, 16, 8)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 2};
    struct rf_side tr = train_side(1, 1, 1, 4, 4, 1, false, 0, 1);
    struct rf_side in = infer_side(2, 1, 1, 1, 8, 8, 1, RF_DT_BF16);
    for (int64_t nics = 4; nics >= 2; nics -= 2) {
        struct rf_cluster c = tray_cluster(nics);
        struct rf_topology topo;
        struct rf_error err;
        struct rf_plan p, rs;
        assert_int_equal(rf_topology_init(&topo, &c, &err), 0);
        struct rf_plan_opts o = {.topo = &topo, .sources = RF_SOURCES_BALANCED};
        if (rf_plan_build(&p, &m, &tr, &in, RF_STRAT_HIERARCHICAL, NULL, &o, &err) < 0)
            fail_msg("%s", err.msg);
        assert_int_equal(rf_plan_build(&rs, &m, &tr, &in, RF_STRAT_RESHARD, NULL, &o, &err), 0);
        check_coverage(&p, &tr, &in);
        assert_int_equal(p.total.payload_bytes, rs.total.payload_bytes);
        int64_t nic_in[24] = {0}, fabric = 0, off_rail = 0;
        for (size_t i = 0; i < p.n_transfers; i++) {
            const struct rf_transfer *x = &p.transfers[i];
            const struct rf_place *s = &topo.place[x->src];
            if (x->after >= 0) {
                /* The fan-out stays on NVLink, from the leader the box came to. */
                const struct rf_transfer *a = &p.transfers[x->after];
                bool led = false;
                for (int32_t k = 0; k < a->dst_count; k++)
                    led |= a->dst + k * a->dst_stride == x->src;
                assert_true(led);
                for (int32_t k = 0; k < x->dst_count; k++)
                    assert_int_equal(topo.place[x->dst + k * x->dst_stride].domain, s->domain);
                continue;
            }
            for (int32_t k = 0; k < x->dst_count; k++) {
                const struct rf_place *d = &topo.place[x->dst + k * x->dst_stride];
                assert_int_not_equal(s->domain, d->domain);
                nic_in[d->nic] += x->bytes;
                fabric += x->bytes;
                /* Same rail as the source when some destination of the box in that domain
                 * is: look for one among the leader's fan-out. */
                bool rail_there = false;
                for (size_t j = 0; j < p.n_transfers; j++) {
                    const struct rf_transfer *y = &p.transfers[j];
                    for (int32_t q = 0; y->after == (int32_t)i && q < y->dst_count; q++) {
                        const struct rf_place *f = &topo.place[y->dst + q * y->dst_stride];
                        rail_there |= f->domain == d->domain && f->rail == s->rail;
                    }
                }
                off_rail += rail_there && d->rail != s->rail;
            }
        }
        /* Once per box and domain: 2 domains. */
        assert_int_equal(fabric, 2 * (4 * 8 * 16 + 4 * 16 * 8) * 2);
        /* The inference NICs: 8..23 are GPUs 8..23 with one NIC per GPU, 4..11 with two. */
        int64_t first = 8 * nics / 4, n = 16 * nics / 4, max = 0;
        for (int64_t k = first; k < first + n; k++)
            max = nic_in[k] > max ? nic_in[k] : max;
        printf("# %lld NICs per tray: busiest NIC %lld bytes, mean %lld\n", (long long)nics,
               (long long)max, (long long)(fabric / n));
        assert_true(max * n <= fabric * 11 / 10); /* max / mean <= 1.1 */
        assert_int_equal(off_rail, 0);
        rf_plan_release(&p);
        rf_plan_release(&rs);
        rf_topology_release(&topo);
    }
    release_sides(&tr, &in);
}

/* Engines placed domain by domain on a miniature NVL72 (trays of 4, domains of 12): TP4 DP2
 * EP8 engines of 8 from GPU 12, one per domain (12-19, 24-31, 36-43; 20-23 and 32-35 idle),
 * the way GB200 racks hold 64-GPU engines. Every strategy delivers every element exactly
 * once, only to engine GPUs, each engine inside one domain; a broadcast spans the idle GPUs
 * (one collective over 12..43) and writes the 24 engine GPUs. Packed, the second engine
 * would take 20-27 across domains 1 and 2. */
static void domain_placed_engines_stay_in_their_domains(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("q", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 64, 32, 0),
                             tensor("o", RF_CLASS_ROW, RF_ROLE_ATTENTION, 0, 32, 64, 0),
                             tensor("e", RF_CLASS_EXPERT_COLUMN, RF_ROLE_EXPERT, 0, 16, 8, 32),
                             tensor("n", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 32, 0, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 4};
    struct rf_side tr = train_side(2, 1, 1, 4, 8, 1, false, 0, 1);
    struct rf_side in = {.kind = RF_SIDE_VLLM,
                         .tp = 4,
                         .pp = 1,
                         .dp = 2,
                         .ep = 8,
                         .cp = 1,
                         .etp = 1,
                         .edp = 1,
                         .replicas = 3,
                         .gpus = 24,
                         .first_gpu = 12,
                         .dtype = RF_DT_BF16,
                         .domain_gpus = 12,
                         .stage_layers = calloc(1, sizeof(int))};
    struct rf_error err;
    in.stage_layers[0] = 1;
    assert_int_equal(rf_side_init(&in, 1, &err), 0);
    assert_int_equal(in.place.span, 32);
    struct rf_cluster c = small_cluster();
    c.nodes = 12;
    c.nvlink.domain_gpus = 12;
    c.nic.per_node = 4;
    struct rf_topology topo;
    assert_int_equal(rf_topology_init(&topo, &c, &err), 0);
    int64_t model = 0;
    for (size_t i = 0; i < m.n_tensors; i++)
        model += rf_tensor_numel(&ts[i]) * 2;
    for (int k = 0; k < 4; k++) {
        static const enum rf_strategy st[] = {RF_STRAT_RESHARD, RF_STRAT_HIERARCHICAL,
                                              RF_STRAT_RESHARD, RF_STRAT_BROADCAST};
        struct rf_plan_opts o = {.topo = &topo,
                                 .sources = k == 2 ? RF_SOURCES_LOCAL : RF_SOURCES_BALANCED};
        struct rf_plan p;
        if (rf_plan_build(&p, &m, &tr, &in, st[k], NULL, &o, &err) < 0)
            fail_msg("%s", err.msg);
        if (st[k] != RF_STRAT_BROADCAST) /* whose deliveries are collectives: below */
            check_coverage(&p, &tr, &in);
        int64_t engine_bytes[3] = {0};
        for (size_t i = 0; i < p.n_transfers; i++) {
            const struct rf_transfer *x = &p.transfers[i];
            for (int32_t j = 0; x->phase == RF_PHASE_DELIVER && j < x->dst_count; j++) {
                int32_t g = x->dst + j * x->dst_stride;
                assert_true(rf_side_has_gpu(&in, g));
                /* Engine r holds GPUs 12 + 12 r .. + 7: all in domain r + 1. */
                assert_true((g - 12) % 12 < 8);
                engine_bytes[(g - 12) / 12] += x->bytes;
            }
        }
        if (st[k] == RF_STRAT_BROADCAST) {
            assert_int_equal(p.n_collectives, m.n_tensors);
            for (size_t i = 0; i < p.n_collectives; i++) {
                const struct rf_collective *x = &p.collectives[i];
                assert_int_equal(x->root, 0);
                assert_int_equal(x->first_gpu, 12);
                assert_int_equal(x->gpu_count, 32);
                assert_int_equal(x->gpu_stride, 1);
            }
            /* Written into the 24 engine GPUs, moved over all 32 (idle ones too) plus the
             * gathers to GPU 0 of what it does not hold. */
            assert_int_equal(p.total.payload_bytes, 24 * model);
            int64_t gathered = 0;
            for (size_t i = 0; i < p.n_transfers; i++)
                if (p.transfers[i].src != p.transfers[i].dst)
                    gathered += p.transfers[i].bytes * p.transfers[i].dst_count;
            assert_int_equal(p.total.moved_bytes, 32 * model + gathered);
        } else {
            /* Each engine receives its shards: q and o (4096 bytes each) on both DP ranks,
             * the experts (8192) once over EP8, the norm (64) on all 8 GPUs. */
            for (int r = 0; r < 3; r++)
                assert_int_equal(engine_bytes[r], 2 * (4096 + 4096) + 8192 + 8 * 64);
        }
        rf_plan_release(&p);
    }
    /* Packed, the same engines cross a domain boundary. */
    struct rf_side packed = infer_side(4, 1, 2, 8, 3, 12, 1, RF_DT_BF16);
    assert_int_not_equal(topo.place[20].domain, topo.place[27].domain);
    assert_true(rf_side_has_gpu(&packed, 20) && rf_side_has_gpu(&packed, 27));
    assert_false(rf_side_has_gpu(&in, 20));
    rf_side_release(&packed);
    rf_topology_release(&topo);
    release_sides(&tr, &in);
}

/* Bytes each NIC sends in plan p, by the NIC_OUT link of each delivery's route: the
 * simulator's routing, not the planner's own account. nic_out has topo.nics entries. */
static void nic_egress(const struct rf_plan *p, const struct rf_topology *t, int64_t *nic_out)
{
    memset(nic_out, 0, (size_t)t->nics * sizeof(*nic_out));
    for (size_t i = 0; i < p->n_transfers; i++) {
        const struct rf_transfer *x = &p->transfers[i];
        for (int32_t k = 0; k < x->dst_count; k++) {
            struct rf_route r;
            if (x->src == x->dst + k * x->dst_stride)
                continue;
            rf_topology_route(t, x->src, x->dst + k * x->dst_stride, &r);
            for (int h = 0; h < r.n; h++)
                if (t->links[r.link[h]].kind == RF_LINK_NIC_OUT)
                    nic_out[(size_t)r.link[h] - t->base[RF_LINK_NIC_OUT]] += x->bytes;
        }
    }
}

/* Balanced sources count the NIC a delivery leaves by, which under PXN is the NIC of the
 * source's tray on the destination's rail (topology.c's routes), not the source's own.
 * Experts of EP4 x EDP2 on two trays (tray 0 holds EP ranks 0..3 on GPUs 0..3, tray 1 the
 * same on 4..7) go to one inference GPU on rail 0, in 4 boxes of 2 holders: every holder
 * of tray 0 leaves by NIC 0, every holder of tray 1 by NIC 4. Balancing GPU loads, each
 * box went to its lower holder (the loads tied: no box shares a holder), all in tray 0,
 * and NIC 0 sent every byte while NIC 4 sent none; the boxes must alternate between the
 * trays. Without PXN each holder leaves by its own NIC: four NICs, a box each. Local
 * sources, among equally near holders, choose by the same NIC's load. */
static void balanced_sources_spread_over_pxn_nics(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("e", RF_CLASS_EXPERT_COLUMN, RF_ROLE_EXPERT, 0, 8, 16, 16)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 1};
    struct rf_side tr = train_side(1, 1, 1, 8, 4, 1, false, 0, 1);
    struct rf_side in = infer_side(1, 1, 1, 1, 1, 8, 1, RF_DT_BF16);
    int64_t total = 8 * 16 * 16 * 2;
    for (int k = 0; k < 4; k++) {
        bool pxn = k < 2, local = k & 1;
        struct rf_cluster c = tray_cluster(4);
        c.fabric.pxn = pxn;
        struct rf_topology topo;
        struct rf_error err;
        struct rf_plan p;
        assert_int_equal(rf_topology_init(&topo, &c, &err), 0);
        struct rf_plan_opts o = {.topo = &topo,
                                 .sources = local ? RF_SOURCES_LOCAL : RF_SOURCES_BALANCED};
        if (rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, &o, &err) < 0)
            fail_msg("%s", err.msg);
        check_coverage(&p, &tr, &in);
        assert_int_equal(p.total.payload_bytes, total);
        int64_t out[24], max = 0, sum = 0;
        int used = 0;
        assert_int_equal(topo.nics, 24);
        nic_egress(&p, &topo, out);
        for (int n = 0; n < 24; n++) {
            max = out[n] > max ? out[n] : max;
            sum += out[n];
            used += out[n] > 0;
        }
        printf("# %s sources, PXN %s: busiest NIC %lld of %lld bytes, %d NICs send\n",
               local ? "local" : "balanced", pxn ? "on" : "off", (long long)max, (long long)sum,
               used);
        assert_int_equal(sum, total);
        if (pxn) {
            /* Only NICs 0 and 4 can carry it: half each. */
            assert_int_equal(out[0], total / 2);
            assert_int_equal(out[4], total / 2);
        } else {
            assert_int_equal(used, 4);
            assert_int_equal(max, total / 4);
        }
        rf_plan_release(&p);
        rf_topology_release(&topo);
    }
    release_sides(&tr, &in);
}

static void results_independent_of_rank_order(void **state)
{
    (void)state;
    rng_state = seed();
    for (int iter = 0; iter < 40; iter++) {
        struct rf_tensor ts[64];
        struct rf_model m;
        struct rf_side tr, in, tr2, in2;
        struct rf_plan a, b;
        struct rf_error err;
        int layers = 1 + (int)(rnd() % 4);
        random_model(&m, ts, layers);
        uint64_t keep = rng_state;
        random_sides(&tr, &in, layers, false, false);
        rng_state = keep;
        random_sides(&tr2, &in2, layers, true, false); /* inference pool first */
        assert_int_equal(rf_plan_build(&a, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
        assert_int_equal(rf_plan_build(&b, &m, &tr2, &in2, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
        assert_int_equal(a.total.payload_bytes, b.total.payload_bytes);
        assert_int_equal(a.total.moved_bytes, b.total.moved_bytes);
        assert_int_equal(a.total.transfers, b.total.transfers);
        assert_int_equal(a.n_boxes, b.n_boxes);
        for (int r = 0; r < RF_ROLE_COUNT; r++)
            assert_int_equal(a.role[r].payload_bytes, b.role[r].payload_bytes);
        check_coverage(&b, &tr2, &in2);
        rf_plan_release(&a);
        rf_plan_release(&b);
        release_sides(&tr, &in);
        release_sides(&tr2, &in2);
    }
}

/* Planner entry: a model whose sizes overflow int64 is refused, naming the tensor and
 * field, before anything is planned (such shapes crashed the planner, or stored negative
 * totals with success). */
static void overflowing_models_are_refused(void **state)
{
    (void)state;
    const int64_t g = INT64_C(1) << 30, G = INT64_C(1) << 32;
    static const struct {
        int64_t a, b;
        const char *want;
    } rows[] = {
        {INT64_C(1) << 32, INT64_C(1) << 32,
         "emb.shape: 4294967296 x 4294967296 elements overflow 64-bit counts"},
        {INT64_C(1) << 32, INT64_C(1) << 30,
         "emb.shape: 4294967296 x 1073741824 = 4611686018427387904 elements, whose FP32 bytes "
         "overflow 64-bit counts"},
        {8, -4, "emb.shape[2]: -4 is not a positive size"},
    };
    struct rf_side tr = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(1, 1, 1, 1, 2, 1, 1, RF_DT_BF16);
    struct rf_plan p;
    struct rf_error err;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct rf_tensor ts[] = {
            tensor("emb", RF_CLASS_VOCAB, RF_ROLE_EMBEDDING, -1, rows[i].a, rows[i].b, 0)};
        struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 1};
        assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err),
                         RF_EINVAL);
        assert_string_equal(err.msg, rows[i].want);
        assert_int_equal(p.n_tensors, 0); /* nothing half-built is left */
        assert_int_equal(rf_tensor_numel(&ts[0]), rows[i].b < 0 || i == 0 ? -1 : G * g);
    }
    /* Four tensors of 2^61 bytes each: every one fits, their sum (2^63) does not. */
    struct rf_tensor ts[] = {tensor("a", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, G, G / 16, 0),
                             tensor("b", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, G, G / 16, 0),
                             tensor("c", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, G, G / 16, 0),
                             tensor("d", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, G, G / 16, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 4};
    assert_int_equal(rf_model_params(&m), 4 * (G * (G / 16)));
    assert_int_equal(rf_model_bytes(&m), -1);
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err),
                     RF_EINVAL);
    assert_string_equal(err.msg, "d: model m's bytes overflow 64 bits when this tensor is added");
    m.n_tensors = 1;
    m.experts = 256;
    m.experts_per_token = 300;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err),
                     RF_EINVAL);
    assert_string_equal(err.msg, "m.experts_per_token: 300, expected 0 to the 256 experts");
    release_sides(&tr, &in);
}

/* Byte counts that grow with destinations (run bytes x destinations, broadcast payload,
 * the plan's totals) are checked: a tensor of 2^61 bytes fits, four copies of it do not. */
static void byte_counts_past_int64_are_refused(void **state)
{
    (void)state;
    const int64_t G = INT64_C(1) << 32;
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, G, G / 16, 0),
                             tensor("w2", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, G, G / 16, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 1};
    struct rf_side tr = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(1, 1, 1, 1, 4, 1, 1, RF_DT_BF16);
    struct rf_plan p;
    struct rf_error err;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_BROADCAST, NULL, NULL, &err),
                     RF_EINVAL);
    assert_string_equal(err.msg, "w: the broadcast's bytes overflow 64-bit byte counts");
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err),
                     RF_EINVAL);
    assert_string_equal(err.msg, "w: a transfer run's bytes overflow 64-bit byte counts");
    assert_int_equal(p.n_transfers, 0);
    release_sides(&tr, &in);
    /* Two GPUs: each run of 2^62 bytes fits; the plan's total of two such does not. */
    m.n_tensors = 2;
    tr = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    in = infer_side(1, 1, 1, 1, 2, 1, 1, RF_DT_BF16);
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err),
                     RF_EINVAL);
    assert_string_equal(err.msg, "w2: the plan's totals overflow 64-bit byte counts");
    release_sides(&tr, &in);
}

/* The planner checks the sides it is given, however they were built: a GPU range that
 * wraps past INT64_MAX once passed the range check, stored dst_gpu = -1 and corrupted the
 * heap (a double free). */
static void wrapped_gpu_ranges_are_refused(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 8, 4, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 1};
    struct rf_side tr = train_side(2, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(2, 1, 1, 1, 2, 2, 1, RF_DT_BF16);
    struct rf_plan p;
    struct rf_error err;
    int64_t first = in.first_gpu;
    in.first_gpu = in.dense.first_gpu = in.expert.first_gpu = INT64_MAX - 3;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err),
                     RF_EINVAL);
    assert_string_equal(err.msg, "infer.first_gpu: 9223372036854775804 + 4 GPUs ends beyond the "
                                 "1048576 GPUs refit supports");
    assert_int_equal(p.n_transfers, 0);
    /* A mesh edited apart from its side. */
    in.first_gpu = first;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err),
                     RF_EINVAL);
    assert_string_equal(err.msg, "infer: the engine mesh reaches beyond its GPUs 2..5");
    in.dense.first_gpu = in.expert.first_gpu = first;
    /* Sides built for another model, or never built. */
    m.layers = 2;
    ts[0].layer = 1;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err),
                     RF_EINVAL);
    assert_string_equal(err.msg, "train.stage_layers: cover 1 layers, model m has 2");
    m.layers = 1;
    ts[0].layer = 0;
    struct rf_side raw = in;
    raw.layer_stage = NULL;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &raw, RF_STRAT_RESHARD, NULL, NULL, &err),
                     RF_EINVAL);
    assert_string_equal(err.msg, "infer: the side is not built (rf_side_init)");
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
    check_coverage(&p, &tr, &in);
    rf_plan_release(&p);
    release_sides(&tr, &in);
}

/* A run's members: first + i * stride for i < count, stride 0 the first alone, negative
 * strides counting down; and the plan's GPU extent over sources, run members and
 * broadcast roots and members. */
static void gpu_runs_and_extent(void **state)
{
    (void)state;
    static const struct {
        int64_t first, count, stride, gpu;
        bool has;
    } rows[] = {
        {4, 3, 2, 4, true},  {4, 3, 2, 6, true},   {4, 3, 2, 8, true},    {4, 3, 2, 10, false},
        {4, 3, 2, 5, false}, {4, 3, 2, 2, false},  {4, 1, 0, 4, true},    {4, 5, 0, 5, false},
        {9, 3, -3, 3, true}, {9, 3, -3, 0, false}, {9, 3, -3, 12, false},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
        assert_int_equal(rf_gpu_run_has(rows[i].first, rows[i].count, rows[i].stride, rows[i].gpu),
                         rows[i].has);
    assert_int_equal(rf_gpu_run_last(4, 3, 2), 8);
    assert_int_equal(rf_gpu_run_last(9, 3, -3), 3);

    struct rf_transfer tr[2] = {{.src = 3, .dst = 0, .dst_count = 4, .dst_stride = 2},
                                {.src = 11, .dst = 1, .dst_count = 1}};
    struct rf_collective co[1] = {{.root = 2, .first_gpu = 4, .gpu_count = 6, .gpu_stride = 2}};
    struct rf_plan p = {.transfers = tr, .n_transfers = 1};
    assert_int_equal(rf_plan_gpu_extent(&p), 7); /* run 0, 2, 4, 6 */
    p.n_transfers = 2;
    assert_int_equal(rf_plan_gpu_extent(&p), 12); /* source 11 */
    p.collectives = co;
    p.n_collectives = 1;
    assert_int_equal(rf_plan_gpu_extent(&p), 15); /* members 4 .. 14 */
    p.n_transfers = p.n_collectives = 0;
    assert_int_equal(rf_plan_gpu_extent(&p), 0);
}

/* Checks that models/lib/policy.lua's list `field` names list[0..n) in order: the Lua
 * schema and the C enum (RF_STRATEGIES, RF_SOURCES_LIST) are one contract. */
static void policy_list_is(const char *field, const char *(*name)(int), int n)
{
    lua_State *L = luaL_newstate();
    assert_non_null(L);
    luaL_openlibs(L);
    char code[512];
    snprintf(code, sizeof(code), "package.path = '%s/lib/?.lua'; return require('policy').%s",
             RF_SOURCE_MODELS_DIR, field);
    if (luaL_dostring(L, code) != LUA_OK)
        fail_msg("policy.lua: %s", lua_tostring(L, -1));
    assert_true(lua_istable(L, -1));
    lua_Integer len = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= len || i <= n; i++) {
        lua_geti(L, -1, i);
        const char *lua_name = lua_tostring(L, -1);
        const char *c_name = i <= n ? name((int)(i - 1)) : NULL;
        if (!lua_name || !c_name || strcmp(lua_name, c_name) != 0)
            fail_msg("policy.%s[%lld]: Lua says %s, sim/plan.h says %s", field, (long long)i,
                     lua_name ? lua_name : "nothing", c_name ? c_name : "nothing");
        lua_pop(L, 1);
    }
    lua_close(L);
}

static const char *strategy_at(int i)
{
    return rf_strategy_name((enum rf_strategy)i);
}

static const char *sources_at(int i)
{
    return rf_sources_name((enum rf_sources)i);
}

static void strategy_names_match_policy_lua(void **state)
{
    (void)state;
    policy_list_is("strategies", strategy_at, RF_STRAT_COUNT);
    enum rf_strategy s;
    assert_int_equal(rf_strategy_parse("hierarchical", &s), 0);
    assert_int_equal(s, RF_STRAT_HIERARCHICAL);
    assert_int_equal(rf_strategy_parse("magic", &s), -1);
}

static void sources_names_match_policy_lua(void **state)
{
    (void)state;
    policy_list_is("sources", sources_at, RF_SOURCES_COUNT);
    enum rf_sources s = RF_SOURCES_BALANCED;
    assert_int_equal(rf_sources_parse("local", &s), 0);
    assert_int_equal(s, RF_SOURCES_LOCAL);
    /* Nothing but the listed names: "nearest" is not silently balanced. */
    assert_int_equal(rf_sources_parse("nearest", &s), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(column_tp2_to_tp4),
        cmocka_unit_test(gpu_runs_and_extent),
        cmocka_unit_test(replicas_balance_sources),
        cmocka_unit_test(colocated_same_layout_is_local),
        cmocka_unit_test(broadcast_is_two_model_sizes),
        cmocka_unit_test(fp8_adds_block_scales),
        cmocka_unit_test(random_layouts_cover_exactly_once),
        cmocka_unit_test(hierarchical_leaders_spread_over_nics),
        cmocka_unit_test(balanced_sources_spread_over_pxn_nics),
        cmocka_unit_test(domain_placed_engines_stay_in_their_domains),
        cmocka_unit_test(results_independent_of_rank_order),
        cmocka_unit_test(overflowing_models_are_refused),
        cmocka_unit_test(byte_counts_past_int64_are_refused),
        cmocka_unit_test(wrapped_gpu_ranges_are_refused),
        cmocka_unit_test(strategy_names_match_policy_lua),
        cmocka_unit_test(sources_names_match_policy_lua),
    };
    return cmocka_run_group_tests_name("plan", tests, NULL, NULL);
}
