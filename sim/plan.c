/* The planner. Per tensor, each side's distinct shards ("cells") are enumerated from the
 * layout algebra; source cells form a grid (a partition per dim), so a destination box
 * finds the source cells it overlaps by binary search per dim: the work is linear in the
 * output, never all pairs. Replicated sources are chosen by load, replicated destinations
 * are emitted as arithmetic runs. */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "plan_int.h"
#include "topology.h"

static int cells_reserve(struct planner *p, struct cells *c, size_t n, size_t nh)
{
    if (n + 1 > c->cap) {
        size_t nc = c->cap ? c->cap : 64;
        while (nc < n + 1)
            nc *= 2;
        struct rf_box *b = realloc(c->box, nc * sizeof(*b));
        if (!b)
            return rf_error_set(p->err, RF_ENOMEM, "out of memory");
        c->box = b;
        size_t *h = realloc(c->hstart, (nc + 1) * sizeof(*h));
        if (!h)
            return rf_error_set(p->err, RF_ENOMEM, "out of memory");
        c->hstart = h;
        c->cap = nc;
    }
    GROW(c->holders, c->nh, c->caph, nh);
    return 0;
}

static void cells_release(struct cells *c)
{
    free(c->box);
    free(c->hstart);
    free(c->holders);
}

int planner_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Advances an odometer over the given axes; returns false after the last coordinate. */
static bool odometer(int64_t *coord, const int *axes, int n, const struct rf_mesh *m)
{
    for (int i = n - 1; i >= 0; i--) {
        if (++coord[axes[i]] < m->size[axes[i]])
            return true;
        coord[axes[i]] = 0;
    }
    return false;
}

static int collect_cells(struct planner *p, const struct rf_side *side, const struct rf_tensor *t,
                         struct cells *c)
{
    struct rf_placement pl;
    const struct rf_mesh *m = rf_side_placement(side, t, &pl);
    bool sharding[RF_MESH_MAX] = {false};
    int sax[RF_MESH_MAX], rax[RF_MESH_MAX], ns = 0, nr = 0;
    int64_t coord[RF_MESH_MAX] = {0};
    int64_t replicas = 1;
    int rc;

    for (int i = 0; i < pl.n; i++)
        sharding[pl.shard[i].axis] = true;
    for (int a = 0; a < m->ndim; a++) {
        if (a == pl.stage_axis)
            continue;
        if (sharding[a])
            sax[ns++] = a;
        else {
            rax[nr++] = a;
            replicas *= m->size[a];
        }
    }
    if (pl.stage_axis >= 0)
        coord[pl.stage_axis] = pl.stage;

    c->n = 0;
    c->nh = 0;
    do {
        struct rf_box b;
        rf_placement_box(&pl, m, t->ndim, t->shape, coord, &b);
        if (rf_box_numel(&b, t->ndim) == 0)
            continue;
        if ((rc = cells_reserve(p, c, c->n + 1, c->nh + (size_t)replicas)) < 0)
            return rc;
        c->box[c->n] = b;
        c->hstart[c->n] = c->nh;
        size_t first = c->nh;
        do {
            c->holders[c->nh++] = (int32_t)rf_mesh_gpu(m, coord);
        } while (odometer(coord, rax, nr, m));
        qsort(c->holders + first, c->nh - first, sizeof(int32_t), planner_cmp_i32);
        c->n++;
    } while (odometer(coord, sax, ns, m));
    c->hstart[c->n] = c->nh;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Index of the interval of `starts` containing x (the last start <= x). */
static size_t find_interval(const int64_t *starts, size_t n, int64_t x)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (starts[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Builds the per-dim partitions of the source cells and the cell index of every grid
 * position. Layouts whose shards do not form a grid are rejected: every destination byte
 * must be found in exactly one source cell. */
static int build_grid(struct planner *p, const struct rf_tensor *t)
{
    const struct cells *c = &p->src;
    size_t total = 1;
    for (int d = 0; d < t->ndim; d++) {
        int64_t *s = malloc(sizeof(int64_t) * c->n);
        if (!s)
            return rf_error_set(p->err, RF_ENOMEM, "out of memory");
        for (size_t i = 0; i < c->n; i++)
            s[i] = c->box[i].off[d];
        qsort(s, c->n, sizeof(int64_t), cmp_i64);
        size_t u = 0;
        for (size_t i = 0; i < c->n; i++)
            if (u == 0 || s[i] != s[u - 1])
                s[u++] = s[i];
        free(p->starts[d]);
        p->starts[d] = s;
        p->nstart[d] = u;
        /* A grid has one cell per position; more positions than cells leave a gap, and
         * refusing them here keeps the product from overflowing. */
        if (__builtin_mul_overflow(total, u, &total) || total > c->n)
            return rf_error_set(p->err, RF_EINVAL, "%s: source shards leave a gap", t->name);
    }
    GROW(p->cell_of, 0, p->cap_cell_of, total);
    for (size_t i = 0; i < total; i++)
        p->cell_of[i] = -1;
    for (size_t i = 0; i < c->n; i++) {
        size_t flat = 0;
        for (int d = 0; d < t->ndim; d++) {
            size_t k = find_interval(p->starts[d], p->nstart[d], c->box[i].off[d]);
            int64_t end = k + 1 < p->nstart[d] ? p->starts[d][k + 1] : t->shape[d];
            if (end - p->starts[d][k] != c->box[i].len[d])
                return rf_error_set(p->err, RF_EINVAL,
                                    "%s: source shards do not form a grid on dim %d", t->name, d);
            flat = flat * p->nstart[d] + k;
        }
        p->cell_of[flat] = (int32_t)i;
    }
    for (size_t i = 0; i < total; i++)
        if (p->cell_of[i] < 0)
            return rf_error_set(p->err, RF_EINVAL, "%s: source shards leave a gap", t->name);
    return 0;
}

/* Refuses a byte count of tensor ti past int64: a figure that wrapped would be stored as
 * if it were true. */
static int overflow(struct planner *p, int32_t ti, const char *what)
{
    return rf_error_set(p->err, RF_EINVAL, "%s: %s overflow 64-bit byte counts",
                        p->plan->tensors[ti].name, what);
}

/* *acc += a * b for a byte or load count of tensor ti, checked. */
int planner_add_bytes(struct planner *p, int32_t ti, int64_t *acc, int64_t a, int64_t b,
                      const char *what)
{
    return rf_muladd_overflow(acc, a, b) ? overflow(p, ti, what) : 0;
}

static int tally_add(struct planner *p, int32_t ti, const struct rf_tally *d)
{
    struct rf_plan *plan = p->plan;
    struct rf_tally *ts[2] = {&plan->total, &plan->role[plan->tensors[ti].role]};
    for (int i = 0; i < 2; i++) {
        /* Into a copy, so a refused tally leaves the plan's as it was. */
        struct rf_tally t = *ts[i];
        if (rf_add_overflow(t.payload_bytes, d->payload_bytes, &t.payload_bytes) ||
            rf_add_overflow(t.moved_bytes, d->moved_bytes, &t.moved_bytes) ||
            rf_add_overflow(t.logical_bytes, d->logical_bytes, &t.logical_bytes) ||
            rf_add_overflow(t.local_bytes, d->local_bytes, &t.local_bytes) ||
            rf_add_overflow(t.transfers, d->transfers, &t.transfers) ||
            rf_add_overflow(t.collectives, d->collectives, &t.collectives))
            return overflow(p, ti, "the plan's totals");
        *ts[i] = t;
    }
    return 0;
}

int32_t planner_egress_nic(const struct planner *p, int32_t src, int32_t dst)
{
    const struct rf_place *s = &p->topo->place[src], *d = &p->topo->place[dst];
    if (s->domain == d->domain || s->nic < 0)
        return -1;
    /* PXN: the bytes cross to the GPU of src's node on dst's rail and leave by its NIC. */
    if (p->topo->cluster->fabric.pxn && s->rail != d->rail)
        return s->nic + d->rail - s->rail;
    return s->nic;
}

/* planner_emit; egress false: the caller has counted the run's NIC egress as it chose. */
static int emit_run(struct planner *p, int32_t box, int32_t src, int32_t dst, int32_t count,
                    int32_t stride, uint8_t phase, int64_t bytes, bool count_logical, bool egress)
{
    struct rf_plan *plan = p->plan;
    int32_t ti = plan->boxes[box].tensor;
    int64_t all;
    /* Transfer indices are int32 (`after`, the executor's items). */
    if (plan->n_transfers >= INT32_MAX)
        return rf_error_set(p->err, RF_EINVAL, "%s: the plan exceeds 2^31 transfer runs",
                            plan->tensors[ti].name);
    if (rf_mul_overflow(bytes, count, &all))
        return overflow(p, ti, "a transfer run's bytes");
    GROW(plan->transfers, 0, plan->cap_transfers, plan->n_transfers + 1);
    plan->transfers[plan->n_transfers++] = (struct rf_transfer){.box = box,
                                                                .src = src,
                                                                .dst = dst,
                                                                .dst_count = count,
                                                                .dst_stride = stride,
                                                                .phase = phase,
                                                                .after = -1,
                                                                .bytes = bytes};
    if (p->track_in && src != dst) {
        /* Ingress of every destination of the run: its GPU's, and its NIC's when the bytes
         * come from another NVLink domain (a fabric delivery lands on the receiver's own
         * NIC, PXN or not: topology.c's routes). */
        const struct rf_place *pl = p->topo->place;
        int rc;
        for (int32_t i = 0; i < count; i++) {
            int32_t g = dst + i * stride;
            if ((rc = planner_add_bytes(p, ti, &p->in_load[g], bytes, 1, "a GPU's ingress")) < 0 ||
                (pl[g].domain != pl[src].domain && pl[g].nic >= 0 &&
                 (rc = planner_add_bytes(p, ti, &p->nic_in[pl[g].nic], bytes, 1,
                                         "a NIC's ingress")) < 0))
                return rc;
        }
    }
    if (egress && p->topo && src != dst && p->topo->place[src].nic >= 0) {
        /* planner_egress_nic for each destination, with src's place read once: this runs
         * for every transfer of the plan. */
        const struct rf_place *pl = p->topo->place, *s = &pl[src];
        bool pxn = p->topo->cluster->fabric.pxn;
        for (int32_t i = 0; i < count; i++) {
            const struct rf_place *q = &pl[dst + i * stride];
            if (q->domain == s->domain)
                continue;
            int64_t *l = &p->nic_load[pxn ? s->nic + q->rail - s->rail : s->nic];
            if (rf_add_overflow(*l, bytes, l))
                return overflow(p, ti, "a NIC's load");
        }
    }
    struct rf_tally d = {0};
    d.transfers = count;
    if (src == dst) {
        d.local_bytes = all;
    } else {
        d.moved_bytes = all;
        if (phase == RF_PHASE_DELIVER)
            d.payload_bytes = all;
        if (count_logical)
            d.logical_bytes = all;
    }
    return tally_add(p, ti, &d);
}

int planner_emit(struct planner *p, int32_t box, int32_t src, int32_t dst, int32_t count,
                 int32_t stride, uint8_t phase, int64_t bytes, bool count_logical)
{
    return emit_run(p, box, src, dst, count, stride, phase, bytes, count_logical, true);
}

/* Emits dsts[0..n) from src as maximal arithmetic runs (egress as in emit_run). */
static int emit_runs(struct planner *p, int32_t box, int32_t src, const int32_t *dsts, size_t n,
                     uint8_t phase, int64_t bytes, bool count_logical, bool egress)
{
    size_t i = 0;
    while (i < n) {
        size_t j = i + 1;
        int32_t stride = j < n ? dsts[j] - dsts[i] : 0;
        while (j < n && dsts[j] - dsts[j - 1] == stride)
            j++;
        int rc = emit_run(p, box, src, dsts[i], (int32_t)(j - i), j - i > 1 ? stride : 0, phase,
                          bytes, count_logical, egress);
        if (rc < 0)
            return rc;
        i = j;
    }
    return 0;
}

int planner_emit_runs(struct planner *p, int32_t box, int32_t src, const int32_t *dsts, size_t n,
                      uint8_t phase, int64_t bytes, bool count_logical)
{
    return emit_runs(p, box, src, dsts, n, phase, bytes, count_logical, true);
}

static int cmp_load(const void *a, const void *b)
{
    const struct gpu_load *x = a, *y = b;
    if (x->load != y->load)
        return (x->load > y->load) - (x->load < y->load);
    return (x->gpu > y->gpu) - (x->gpu < y->gpu);
}

/* The holders h in p->order (grown to nh by the caller), least-loaded first: hierarchical
 * splits a box's destination domains into contiguous blocks over them in this order (and
 * balanced sources without NICs, a box's destinations). */
void planner_order_by_load(struct planner *p, const int32_t *h, size_t nh)
{
    for (size_t i = 0; i < nh; i++)
        p->order[i] = (struct gpu_load){p->load[h[i]], h[i]};
    qsort(p->order, nh, sizeof(*p->order), cmp_load);
}

/* How far a holder is from a destination: 0 same NVLink domain, 1 same rail and leaf
 * (one switch), 2 same rail (spine, but no cross-rail hop), 3 anywhere. */
static int tier(const struct rf_place *h, const struct rf_place *d)
{
    if (h->domain == d->domain)
        return 0;
    if (h->rail != d->rail)
        return 3;
    return h->leaf == d->leaf ? 1 : 2;
}

static int cmp_pair(const void *a, const void *b)
{
    const int32_t *x = a, *y = b;
    if (x[0] != y[0])
        return x[0] < y[0] ? -1 : 1;
    return (x[1] > y[1]) - (x[1] < y[1]);
}

/* Local source choice: each destination takes the nearest holder, and among equally near
 * ones the least loaded (its NVLink port inside a domain, outside the NIC its delivery
 * leaves by, then its GPU), so fabric traffic spreads over NICs and rails. Under PXN the
 * holders of a node share that NIC on a rail none of them is on; without the GPU's load
 * after it the node's first holder sent all of it, and Qwen3-235B on H100 predicted 6 to
 * 10% slower at 0.8 and 1.2 GB of staging. Destinations served by one source become
 * runs. */
static int assign_local(struct planner *p, int32_t box, const int32_t *h, size_t nh,
                        const int32_t *dsts, size_t nd, uint8_t phase, int64_t bytes,
                        bool count_logical)
{
    /* The topology's placement table: local source choice compares every holder with
     * every destination. */
    const struct rf_place *pl = p->topo->place;
    int rc;
    GROW(p->pairs, 0, p->cap_pairs, nd);
    for (size_t i = 0; i < nd; i++) {
        int32_t best = h[0];
        int best_tier = 4;
        int64_t best_load = INT64_MAX, best_gpu = INT64_MAX;
        for (size_t k = 0; k < nh; k++) {
            int tr = tier(&pl[h[k]], &pl[dsts[i]]);
            int32_t nic = planner_egress_nic(p, h[k], dsts[i]);
            int64_t ld = nic < 0 ? p->load[h[k]] : p->nic_load[nic], gpu = p->load[h[k]];
            if (tr < best_tier || (tr == best_tier && ld < best_load) ||
                (tr == best_tier && ld == best_load && gpu < best_gpu)) {
                best = h[k];
                best_tier = tr;
                best_load = ld;
                best_gpu = gpu;
            }
        }
        int32_t ti = p->plan->boxes[box].tensor, nic = planner_egress_nic(p, best, dsts[i]);
        if ((rc = planner_add_bytes(p, ti, &p->load[best], bytes, 1, "a GPU's load")) < 0 ||
            (nic >= 0 &&
             (rc = planner_add_bytes(p, ti, &p->nic_load[nic], bytes, 1, "a NIC's load")) < 0))
            return rc;
        p->pairs[i][0] = best;
        p->pairs[i][1] = dsts[i];
    }
    qsort(p->pairs, nd, sizeof(*p->pairs), cmp_pair);
    for (size_t i = 0; i < nd;) {
        size_t j = i;
        GROW(p->rem, 0, p->cap_rem, nd);
        while (j < nd && p->pairs[j][0] == p->pairs[i][0]) {
            p->rem[j - i] = p->pairs[j][1];
            j++;
        }
        if ((rc = emit_runs(p, box, p->pairs[i][0], p->rem, j - i, phase, bytes, count_logical,
                            false)) < 0)
            return rc;
        i = j;
    }
    return 0;
}

static int cmp_exit_holder(const void *a, const void *b)
{
    const struct exit_holder *x = a, *y = b;
    if (x->nic != y->nic)
        return (x->nic > y->nic) - (x->nic < y->nic);
    if (x->load != y->load)
        return (x->load > y->load) - (x->load < y->load);
    return (x->gpu > y->gpu) - (x->gpu < y->gpu);
}

/* Groups in the order they are dealt blocks: a holder that reaches the destinations over
 * NVLink (nic_load -1, a group of its own) before any NIC, then the less loaded NIC, then
 * the less loaded GPU first in line, then the lower GPU (a pure function of the loads:
 * plans are deterministic). */
static int cmp_deal(const void *a, const void *b)
{
    const struct exit_deal *x = a, *y = b;
    if (x->nic_load != y->nic_load)
        return (x->nic_load > y->nic_load) - (x->nic_load < y->nic_load);
    if (x->load != y->load)
        return (x->load > y->load) - (x->load < y->load);
    return (x->gpu > y->gpu) - (x->gpu < y->gpu);
}

/* Balanced sources for destinations d[0..m) of one box (ascending), which every holder
 * reaches the same way (assign_balanced): a holder in their NVLink domain `dom` (-1: none
 * is) over NVLink, any other by a NIC, under PXN the NIC of its node on the destination's
 * rail, without it its own (topology.c's routes). Holders behind one NIC are one choice,
 * not several: the destinations are split into min(nh, m) contiguous blocks, each to a
 * holder of its own, dealt round the NICs (holders over NVLink first, then the least
 * loaded NIC) and on each NIC to its least-loaded GPUs first. So a tray whose holders all
 * leave by one NIC sends its share of the box, not all of it (balancing GPU loads alone
 * sent DeepSeek-V3's dense boxes on GB200 through a few NICs: the busiest carried 50.7 GB
 * against 48.1 now, every NIC of a stage the same). A deal bounds each NIC's share of a
 * box; giving block after block to whichever NIC is then least loaded predicted the same
 * on every preset scenario. Under PXN a holder's NIC is its node's on d[0]'s rail: exact
 * when the destinations share a rail (replicas a whole number of nodes apart, where PXN
 * funnels), and otherwise a block spreads over its node's NICs anyway, which the node
 * stands for; grouping by rail instead split Kimi K3's replicated tensors into 8x the runs
 * (0.48 to 1.32 M, planning 2.2x as long). O(nh log nh + m). */
static int assign_group(struct planner *p, int32_t box, const int32_t *h, size_t nh,
                        const int32_t *d, size_t m, int32_t dom, uint8_t phase, int64_t bytes,
                        bool count_logical)
{
    const struct rf_place *pl = p->topo->place;
    bool pxn = p->topo->cluster->fabric.pxn;
    int32_t rail = pl[d[0]].rail, ti = p->plan->boxes[box].tensor;
    int rc;
    for (size_t i = 0; i < nh; i++) {
        const struct rf_place *q = &pl[h[i]];
        int32_t nic = q->domain == dom ? -1 : pxn ? q->nic + rail - q->rail : q->nic;
        p->keys[i] = (struct exit_holder){p->load[h[i]], nic, h[i]};
    }
    qsort(p->keys, nh, sizeof(*p->keys), cmp_exit_holder);
    size_t ng = 0;
    for (size_t i = 0; i < nh; i++) {
        const struct exit_holder *e = &p->keys[i];
        if (i == 0 || e->nic < 0 || e->nic != e[-1].nic) {
            p->groups[ng] = (struct exit_group){(uint32_t)i, (uint32_t)i};
            p->deal[ng] = (struct exit_deal){e->nic < 0 ? -1 : p->nic_load[e->nic], e->load, e->gpu,
                                             (uint32_t)ng};
            ng++;
        }
        p->groups[ng - 1].end = (uint32_t)i + 1;
    }
    qsort(p->deal, ng, sizeof(*p->deal), cmp_deal);
    size_t k = nh < m ? nh : m, j = 0;
    GROW(p->order, 0, p->cap_order, k);
    while (j < k) {
        /* One pass round the NICs that have holders left; emptied ones drop out, so the
         * passes cost nh in all. */
        size_t left = 0;
        for (size_t x = 0; x < ng && j < k; x++, j++) {
            struct exit_group *g = &p->groups[p->deal[x].group];
            const struct exit_holder *e = &p->keys[g->next++];
            p->order[j] = (struct gpu_load){e->load, e->gpu};
            if (g->next < g->end)
                p->deal[left++] = p->deal[x];
        }
        ng = left;
    }
    /* The chosen holders take the blocks least-loaded GPU first, as without NICs: the
     * schedule orders boxes by the progress of their first run's source (sim/schedule.c,
     * interleave), and a box first sent by the GPU that sent least keeps every source's
     * rounds in step. Blocks in dealing order predicted Qwen3-235B on GB200, hybrid, at
     * 2.06 s instead of 1.64 (1.61 now). */
    qsort(p->order, k, sizeof(*p->order), cmp_load);
    for (j = 0; j < k; j++) {
        size_t lo = j * m / k, hi = (j + 1) * m / k;
        int32_t src = p->order[j].gpu;
        if ((rc = emit_runs(p, box, src, d + lo, hi - lo, phase, bytes, count_logical, true)) < 0 ||
            (rc = planner_add_bytes(p, ti, &p->load[src], bytes, (int64_t)(hi - lo),
                                    "a GPU's load")) < 0)
            return rc;
    }
    return 0;
}

/* Does a sorted holder list have a GPU in NVLink domain dom? */
bool planner_holds_in_domain(const struct rf_topology *t, const int32_t *h, size_t nh, int32_t dom)
{
    int64_t first = (int64_t)dom * t->cluster->nvlink.domain_gpus;
    size_t lo = 0, hi = nh;
    while (lo < hi) { /* the first holder at or past the domain's first GPU */
        size_t mid = (lo + hi) / 2;
        if (h[mid] < first)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < nh && t->place[h[lo]].domain == dom;
}

/* Balanced sources on a cluster with NICs: p->rem[0..n) (ascending) in stretches that
 * every holder reaches by one way, those in an NVLink domain a holder shares and those in
 * none, each to assign_group. Stretches, not groups gathered from all of rem: a group of
 * destinations from all over would split into blocks that are no runs. */
static int assign_balanced(struct planner *p, int32_t box, const int32_t *h, size_t nh, size_t n,
                           uint8_t phase, int64_t bytes, bool count_logical)
{
    const struct rf_topology *t = p->topo;
    int rc;
    GROW(p->keys, 0, p->cap_keys, nh);
    GROW(p->groups, 0, p->cap_groups, nh);
    GROW(p->deal, 0, p->cap_deal, nh);
    int32_t dom = -2; /* of the stretch so far: none yet */
    for (size_t lo = 0, i = 0; i <= n; i++) {
        int32_t di = -2;
        if (i < n) {
            di = t->place[p->rem[i]].domain;
            /* rem ascends, so a domain's destinations are adjacent: one search each. */
            if (i == 0 || t->place[p->rem[i - 1]].domain != di)
                di = planner_holds_in_domain(t, h, nh, di) ? di : -1;
            else
                di = dom;
        }
        if (i > lo && di != dom) {
            if ((rc = assign_group(p, box, h, nh, p->rem + lo, i - lo, dom, phase, bytes,
                                   count_logical)) < 0)
                return rc;
            lo = i;
        }
        dom = di;
    }
    return 0;
}

/* Chooses a source replica for every destination of one box: a destination that holds the
 * data copies locally; the others are split into contiguous blocks served by the least
 * loaded holders, on a cluster with NICs dealt round the NICs the blocks would leave by
 * (assign_group), so sources stay balanced across replicas and NICs (or, with local
 * sources, each takes its nearest holder). */
int planner_assign(struct planner *p, int32_t box, const int32_t *h, size_t nh, const int32_t *dsts,
                   size_t nd, uint8_t phase, int64_t bytes, bool count_logical)
{
    size_t nrem = 0;
    int rc;
    GROW(p->rem, 0, p->cap_rem, nd);
    for (size_t i = 0; i < nd; i++) {
        if (bsearch(&dsts[i], h, nh, sizeof(int32_t), planner_cmp_i32)) {
            if ((rc = planner_emit(p, box, dsts[i], dsts[i], 1, 0, phase, bytes, count_logical)) <
                0)
                return rc;
        } else {
            p->rem[nrem++] = dsts[i];
        }
    }
    if (nrem == 0)
        return 0;
    if (p->sources == RF_SOURCES_LOCAL && p->topo) {
        /* rem is reused by assign_local: hand it a copy of the remaining destinations. */
        int32_t *rem = malloc(nrem * sizeof(int32_t));
        if (!rem)
            return rf_error_set(p->err, RF_ENOMEM, "out of memory");
        memcpy(rem, p->rem, nrem * sizeof(int32_t));
        rc = assign_local(p, box, h, nh, rem, nrem, phase, bytes, count_logical);
        free(rem);
        return rc;
    }
    if (p->topo && p->topo->place[h[0]].nic >= 0)
        return assign_balanced(p, box, h, nh, nrem, phase, bytes, count_logical);
    /* Without NICs to balance: contiguous blocks over the least-loaded GPUs. */
    GROW(p->order, 0, p->cap_order, nh);
    planner_order_by_load(p, h, nh);
    size_t k = nh < nrem ? nh : nrem;
    for (size_t j = 0; j < k; j++) {
        size_t lo = j * nrem / k, hi = (j + 1) * nrem / k;
        int32_t src = p->order[j].gpu;
        if ((rc = planner_emit_runs(p, box, src, p->rem + lo, hi - lo, phase, bytes,
                                    count_logical)) < 0)
            return rc;
        if ((rc = planner_add_bytes(p, p->plan->boxes[box].tensor, &p->load[src], bytes,
                                    (int64_t)(hi - lo), "a GPU's load")) < 0)
            return rc;
    }
    return 0;
}

static int push_box(struct planner *p, int32_t tensor, const struct rf_box *b)
{
    struct rf_plan *plan = p->plan;
    if (plan->n_boxes >= INT32_MAX)
        return rf_error_set(p->err, RF_EINVAL, "%s: the plan exceeds 2^31 boxes",
                            plan->tensors[tensor].name);
    GROW(plan->boxes, 0, plan->cap_boxes, plan->n_boxes + 1);
    plan->boxes[plan->n_boxes].tensor = tensor;
    plan->boxes[plan->n_boxes].box = *b;
    plan->n_boxes++;
    return 0;
}

/* Delivers every destination cell of tensor ti (already in p->dst) from the source cells in
 * p->src, elem_size bytes per element. */
static int plan_cells(struct planner *p, int32_t ti, size_t elem_size, uint8_t phase,
                      bool count_logical)
{
    bool hier = p->plan->tensor_strategy[ti] == RF_STRAT_HIERARCHICAL && phase == RF_PHASE_DELIVER;
    const struct rf_tensor *t = &p->plan->tensors[ti];
    int rc;
    if ((rc = build_grid(p, t)) < 0)
        return rc;
    for (size_t di = 0; di < p->dst.n; di++) {
        const struct rf_box *b = &p->dst.box[di];
        size_t lo[RF_MAX_DIMS], hi[RF_MAX_DIMS], k[RF_MAX_DIMS];
        for (int d = 0; d < t->ndim; d++) {
            lo[d] = find_interval(p->starts[d], p->nstart[d], b->off[d]);
            hi[d] = find_interval(p->starts[d], p->nstart[d], b->off[d] + b->len[d] - 1);
            k[d] = lo[d];
        }
        for (;;) {
            size_t flat = 0;
            for (int d = 0; d < t->ndim; d++)
                flat = flat * p->nstart[d] + k[d];
            int32_t ci = p->cell_of[flat];
            struct rf_box piece;
            if (rf_box_intersect(b, &p->src.box[ci], t->ndim, &piece)) {
                int64_t bytes = 0;
                if ((rc = planner_add_bytes(p, ti, &bytes, rf_box_numel(&piece, t->ndim),
                                            (int64_t)elem_size, "a box's bytes")) < 0 ||
                    (rc = push_box(p, ti, &piece)) < 0)
                    return rc;
                int32_t box = (int32_t)(p->plan->n_boxes - 1);
                const int32_t *h = p->src.holders + p->src.hstart[ci];
                const int32_t *d = p->dst.holders + p->dst.hstart[di];
                size_t nh = p->src.hstart[ci + 1] - p->src.hstart[ci];
                size_t nd = p->dst.hstart[di + 1] - p->dst.hstart[di];
                rc = hier ? planner_assign_hierarchical(p, box, h, nh, d, nd, bytes)
                          : planner_assign(p, box, h, nh, d, nd, phase, bytes, count_logical);
                if (rc < 0)
                    return rc;
            }
            int d = t->ndim - 1;
            while (d >= 0 && ++k[d] > hi[d]) {
                k[d] = lo[d];
                d--;
            }
            if (d < 0)
                break;
        }
    }
    return 0;
}

/* acc += the bytes of tensor ti in dtype dt, checked. */
static int tensor_bytes(struct planner *p, int32_t ti, enum rf_dtype dt, int64_t *acc)
{
    return planner_add_bytes(p, ti, acc, rf_tensor_numel(&p->plan->tensors[ti]),
                             (int64_t)rf_dtype_size(dt), "the tensor's bytes");
}

static int plan_reshard(struct planner *p, int32_t ti, const struct rf_side *train,
                        const struct rf_side *infer)
{
    /* A scale tensor has its weight's class, so the holders of a weight block compute and
     * send its scales. */
    const struct rf_tensor *t = &p->plan->tensors[ti];
    int rc;
    if ((rc = collect_cells(p, train, t, &p->src)) < 0)
        return rc;
    if ((rc = collect_cells(p, infer, t, &p->dst)) < 0)
        return rc;
    return plan_cells(p, ti, rf_dtype_size(p->plan->wire_dtype[ti]), RF_PHASE_DELIVER, true);
}

/* The classic path: every shard goes to one root on the training side (the exporting rank),
 * which then broadcasts the whole tensor to every inference GPU. */
static int plan_broadcast(struct planner *p, int32_t ti, const struct rf_side *train,
                          const struct rf_side *infer)
{
    struct rf_plan *plan = p->plan;
    const struct rf_tensor *t = &plan->tensors[ti];
    int32_t root = (int32_t)train->first_gpu;
    struct rf_tally d = {0};
    int rc;

    /* A framework may root each tensor elsewhere (sim/framework.h): at the first GPU of
     * the tensor's stage, or at one of the holders of its first element in turn. A scale
     * tensor keeps the root its weight had: it is the tensor planned just before it. */
    if ((t->scale_of < 0 || p->bcast_root != RF_FW_ROOT_FIRST) &&
        (rc = collect_cells(p, train, t->scale_of < 0 ? t : &plan->tensors[t->scale_of], &p->src)) <
            0)
        return rc;
    if (p->bcast_root != RF_FW_ROOT_FIRST && p->src.n > 0) {
        if (p->bcast_root == RF_FW_ROOT_OWNER) {
            size_t nh = p->src.hstart[1] - p->src.hstart[0];
            root = p->src.holders[p->src.hstart[0] + (size_t)ti % nh];
        } else {
            root = INT32_MAX;
            for (size_t h = 0; h < p->src.hstart[p->src.n]; h++)
                if (p->src.holders[h] < root)
                    root = p->src.holders[h];
        }
    }

    if (t->scale_of < 0) {
        enum rf_dtype gdt = t->quant ? train->dtype : t->dtype;
        if ((rc = cells_reserve(p, &p->dst, 1, 1)) < 0)
            return rc;
        p->dst.n = 1;
        p->dst.nh = 1;
        for (int dd = 0; dd < RF_MAX_DIMS; dd++) {
            p->dst.box[0].off[dd] = 0;
            p->dst.box[0].len[dd] = dd < t->ndim ? t->shape[dd] : 1;
        }
        p->dst.hstart[0] = 0;
        p->dst.hstart[1] = 1;
        p->dst.holders[0] = root;
        if ((rc = plan_cells(p, ti, rf_dtype_size(gdt), RF_PHASE_GATHER, false)) < 0 ||
            (rc = tensor_bytes(p, ti, gdt, &d.logical_bytes)) < 0)
            return rc;
    }

    /* The broadcast spans the inference side's idle GPUs too (engines placed with gaps,
     * rf_engine_place): they receive into staging and drop it. One collective over the span
     * rather than one per engine: a pipelined ring's bandwidth does not depend on its
     * length, while a collective per engine would send the tensor out of the root once per
     * engine. So every member is a hop the bytes move over (moved), and only the GPUs that
     * hold a shard are written into (payload). The sides were checked: no sum here
     * overflows. */
    int64_t bytes = 0, span = infer->place.span, first = infer->first_gpu;
    /* NeMo RL's model_update_group holds every training and inference rank: the
     * communicator covers both sides (and any GPUs between them, which relay too). */
    if (p->bcast_comm == RF_FW_COMM_ALL) {
        int64_t end = first + span, tend = train->first_gpu + train->place.span;
        first = train->first_gpu < first ? train->first_gpu : first;
        span = (tend > end ? tend : end) - first;
    }
    int64_t hops = span, receivers = infer->gpus;
    if (root >= first && root < first + span)
        hops--;
    if (rf_side_has_gpu(infer, root))
        receivers--;
    if ((rc = tensor_bytes(p, ti, plan->wire_dtype[ti], &bytes)) < 0 ||
        (rc = planner_add_bytes(p, ti, &d.payload_bytes, bytes, receivers,
                                "the broadcast's bytes")) < 0 ||
        (rc = planner_add_bytes(p, ti, &d.moved_bytes, bytes, hops, "the broadcast's bytes")) < 0 ||
        (rc = planner_add_bytes(p, ti, &d.logical_bytes, bytes, 1, "the broadcast's bytes")) < 0)
        return rc;
    GROW(plan->collectives, 0, plan->cap_collectives, plan->n_collectives + 1);
    plan->collectives[plan->n_collectives++] = (struct rf_collective){.kind = RF_COLL_BROADCAST,
                                                                      .tensor = ti,
                                                                      .root = root,
                                                                      .first_gpu = (int32_t)first,
                                                                      .gpu_count = (int32_t)span,
                                                                      .gpu_stride = 1,
                                                                      .bytes = bytes};
    d.collectives = 1;
    return tally_add(p, ti, &d);
}

/* Copies the model's tensors into the plan and, for an FP8 inference side, adds one FP32
 * scale tensor per quantised weight (RF_FP8_BLOCK-square blocks over the last two dims, named as
 * Hugging Face names them: `.weight_scale_inv`). */
static int plan_tensors(struct planner *p, const struct rf_model *model,
                        const struct rf_side *infer, enum rf_strategy strategy,
                        const enum rf_strategy *tensor_strategy)
{
    struct rf_plan *plan = p->plan;
    bool fp8 = infer->dtype == RF_DT_FP8 && !p->wire_native;
    size_t n = model->n_tensors;
    struct rf_tensor scale;
    for (size_t i = 0; i < model->n_tensors; i++)
        if (fp8 && rf_tensor_fp8_scale(&model->tensors[i], &scale))
            n++;
    plan->tensors = calloc(n, sizeof(*plan->tensors));
    plan->wire_dtype = calloc(n, sizeof(*plan->wire_dtype));
    plan->tensor_strategy = calloc(n, sizeof(*plan->tensor_strategy));
    if (!plan->tensors || !plan->wire_dtype || !plan->tensor_strategy)
        return rf_error_set(p->err, RF_ENOMEM, "out of memory");
    plan->n_tensors = n; /* names start NULL, so a release on error frees what was set */

    size_t k = model->n_tensors;
    for (size_t i = 0; i < model->n_tensors; i++) {
        const struct rf_tensor *src = &model->tensors[i];
        struct rf_tensor *t = &plan->tensors[i];
        *t = *src;
        t->scale_of = -1;
        t->name = strdup(src->name);
        if (!t->name)
            return rf_error_set(p->err, RF_ENOMEM, "out of memory");
        enum rf_strategy s = tensor_strategy ? tensor_strategy[i] : strategy;
        if ((unsigned)s >= RF_STRAT_COUNT)
            return rf_error_set(p->err, RF_EINVAL, "%s: strategy %d is not a strategy", src->name,
                                (int)s);
        if (s == RF_STRAT_HYBRID || s == RF_STRAT_AUTO)
            return rf_error_set(p->err, RF_EINVAL,
                                "%s: %s needs a per-tensor choice (broadcast, reshard or "
                                "hierarchical)",
                                src->name, rf_strategy_name(s));
        if (s == RF_STRAT_HIERARCHICAL && !p->topo)
            return rf_error_set(p->err, RF_EINVAL,
                                "hierarchical needs a cluster (its NVLink domains)");
        plan->tensor_strategy[i] = s;
        plan->wire_dtype[i] = src->quant && fp8 ? infer->dtype : src->dtype;
        struct rf_tensor *sc = &plan->tensors[k];
        if (!(fp8 && rf_tensor_fp8_scale(src, sc)))
            continue;
        sc->scale_of = (int)i;
        size_t len = strlen(src->name);
        const char *suffix = "_scale_inv";
        sc->name = malloc(len + strlen(suffix) + 1);
        if (!sc->name)
            return rf_error_set(p->err, RF_ENOMEM, "out of memory");
        memcpy(sc->name, src->name, len);
        strcpy(sc->name + len, suffix);
        plan->wire_dtype[k] = RF_DT_FP32;
        plan->tensor_strategy[k] = s;
        k++;
    }
    return 0;
}

static bool holds(const int32_t *h, size_t n, int32_t gpu)
{
    return bsearch(&gpu, h, n, sizeof(int32_t), planner_cmp_i32) != NULL;
}

/* Sorted unique domains of a cell's holders, into out (capacity n). */
static size_t domains_of(const int32_t *h, size_t n, int64_t domain_gpus, int64_t *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t d = h[i] / domain_gpus;
        if (k == 0 || out[k - 1] != d)
            out[k++] = d; /* holders are sorted, so their domains are too */
    }
    return k;
}

/* One source cell's contribution to a holder group, before groups are merged: its
 * domains are dom[off .. off + n] of the need's scratch array. */
struct group_rec {
    size_t off, n;
    const int64_t *dom; /* set once every record is in, the array no longer moving */
    int64_t own, away;
};

static int cmp_group_rec(const void *a, const void *b)
{
    const struct group_rec *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    for (size_t i = 0; i < x->n; i++)
        if (x->dom[i] != y->dom[i])
            return x->dom[i] < y->dom[i] ? -1 : 1;
    return 0;
}

/* Whether sorted a (na) has an element that sorted b (nb) lacks. */
static bool has_outside(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
    for (size_t i = 0, j = 0; i < na; i++) {
        while (j < nb && b[j] < a[i])
            j++;
        if (j == nb || b[j] != a[i])
            return true;
    }
    return false;
}

void rf_need_release(struct rf_need *need)
{
    if (!need)
        return;
    free(need->gpu_in);
    free(need->domain_in);
    free(need->gpu_out);
    free(need->group_start);
    free(need->group_domain);
    free(need->group_own);
    free(need->group_away);
    memset(need, 0, sizeof(*need));
}

/* Merges the records (sorted here) into need's groups: equal domain sets add up. */
static int need_groups(struct planner *p, struct rf_need *need, struct group_rec *rec, size_t n,
                       const int64_t *dom)
{
    size_t ng = 0, nd = 0;
    for (size_t i = 0; i < n; i++)
        rec[i].dom = dom + rec[i].off;
    if (n > 0) /* rec is NULL when no piece must leave its holders */
        qsort(rec, n, sizeof(*rec), cmp_group_rec);
    for (size_t i = 0; i < n; i++)
        if (i == 0 || cmp_group_rec(&rec[i - 1], &rec[i]) != 0) {
            ng++;
            nd += rec[i].n;
        }
    need->group_start = malloc((ng + 1) * sizeof(size_t));
    need->group_domain = malloc((nd ? nd : 1) * sizeof(int64_t));
    need->group_own = calloc(ng ? ng : 1, sizeof(int64_t));
    need->group_away = calloc(ng ? ng : 1, sizeof(int64_t));
    if (!need->group_start || !need->group_domain || !need->group_own || !need->group_away)
        return rf_error_set(p->err, RF_ENOMEM, "out of memory");
    need->group_start[0] = 0;
    size_t g = 0;
    for (size_t i = 0; i < n; i++) {
        if (i == 0 || cmp_group_rec(&rec[i - 1], &rec[i]) != 0) {
            if (i > 0)
                g++;
            memcpy(need->group_domain + need->group_start[g], rec[i].dom,
                   rec[i].n * sizeof(int64_t));
            need->group_start[g + 1] = need->group_start[g] + rec[i].n;
        }
        /* Sums of pieces of the model: no larger than its bytes, which fit (tensor_bytes). */
        need->group_own[g] += rec[i].own;
        need->group_away[g] += rec[i].away;
    }
    need->n_groups = ng;
    return 0;
}

int rf_plan_need(const struct rf_plan *plan, const struct rf_side *train,
                 const struct rf_side *infer, int64_t domain_gpus, size_t n_gpus, size_t n_domains,
                 struct rf_need *need, struct rf_error *err)
{
    struct planner p = {.plan = (struct rf_plan *)plan, .err = err};
    int64_t *dd = NULL, *sd = NULL, *cell_own = NULL, *cell_away = NULL, *rdom = NULL;
    struct group_rec *rec = NULL;
    size_t cap_dd = 0, cap_sd = 0, cap_cell = 0, n_rec = 0, cap_rec = 0, n_rdom = 0, cap_rdom = 0;
    int64_t train_end = train->first_gpu + train->gpus;
    int rc = 0;

    memset(need, 0, sizeof(*need));
    if (domain_gpus < 1)
        return rf_error_set(err, RF_EINVAL, "NVLink domains of %lld GPUs", (long long)domain_gpus);
    if ((rc = rf_side_check(train, "train", err)) < 0 ||
        (rc = rf_side_check(infer, "infer", err)) < 0)
        return rc;
    need->n_gpus = n_gpus;
    need->n_domains = n_domains;
    need->gpu_in = calloc(n_gpus ? n_gpus : 1, sizeof(int64_t));
    need->domain_in = calloc(n_domains ? n_domains : 1, sizeof(int64_t));
    need->gpu_out = calloc(n_gpus ? n_gpus : 1, sizeof(int64_t));
    if (!need->gpu_in || !need->domain_in || !need->gpu_out) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t ti = 0; ti < plan->n_tensors && rc == 0; ti++) {
        const struct rf_tensor *t = &plan->tensors[ti];
        int64_t elem = (int64_t)rf_dtype_size(plan->wire_dtype[ti]);
        if ((rc = collect_cells(&p, train, t, &p.src)) < 0 ||
            (rc = collect_cells(&p, infer, t, &p.dst)) < 0 || (rc = build_grid(&p, t)) < 0)
            break;
        /* The source terms count each piece once, which needs the destination cells to be
         * disjoint. Cells are torch.chunk pieces of one split sequence, so they are; should
         * they ever overlap (their sizes add up past the tensor's), the tensor adds no
         * source term rather than a wrong one. */
        int64_t numel = 1, dst_numel = 0;
        for (int d = 0; d < t->ndim; d++)
            numel *= t->shape[d]; /* fits: the sides were checked against the model */
        for (size_t di = 0; di < p.dst.n && dst_numel <= numel; di++)
            dst_numel += rf_box_numel(&p.dst.box[di], t->ndim);
        bool sources = dst_numel == numel;
        if (p.src.n > cap_cell) {
            free(cell_own);
            free(cell_away);
            cap_cell = p.src.n;
            cell_own = malloc(cap_cell * sizeof(int64_t));
            cell_away = malloc(cap_cell * sizeof(int64_t));
            if (!cell_own || !cell_away) {
                rc = rf_error_set(err, RF_ENOMEM, "out of memory");
                break;
            }
        }
        for (size_t si = 0; si < p.src.n; si++)
            cell_own[si] = cell_away[si] = 0;
        for (size_t di = 0; di < p.dst.n && rc == 0; di++) {
            const struct rf_box *b = &p.dst.box[di];
            const int32_t *dh = p.dst.holders + p.dst.hstart[di];
            size_t ndh = p.dst.hstart[di + 1] - p.dst.hstart[di];
            int64_t bytes = 0;
            if ((rc = planner_add_bytes(&p, (int32_t)ti, &bytes, rf_box_numel(b, t->ndim), elem,
                                        "a shard's bytes")) < 0)
                break;
            if (ndh > cap_dd) {
                free(dd);
                cap_dd = ndh;
                if (!(dd = malloc(cap_dd * sizeof(*dd)))) {
                    rc = rf_error_set(err, RF_ENOMEM, "out of memory");
                    break;
                }
            }
            size_t nd = domains_of(dh, ndh, domain_gpus, dd);
            /* Whether a destination sits in a domain without any training GPU. */
            bool away = false;
            for (size_t i = 0; i < nd && !away; i++)
                away = (dd[i] + 1) * domain_gpus <= train->first_gpu ||
                       dd[i] * domain_gpus >= train_end;
            for (size_t i = 0; i < ndh && rc == 0; i++)
                if ((size_t)dh[i] < n_gpus)
                    rc = planner_add_bytes(&p, (int32_t)ti, &need->gpu_in[dh[i]], bytes, 1,
                                           "a GPU's need");
            for (size_t i = 0; i < nd && rc == 0; i++)
                if ((size_t)dd[i] < n_domains)
                    rc = planner_add_bytes(&p, (int32_t)ti, &need->domain_in[dd[i]], bytes, 1,
                                           "a domain's need");
            if (rc < 0)
                break;
            /* Subtract what a GPU or its domain already holds on the training side, and
             * count the pieces that must leave their holders. */
            for (size_t si = 0; si < p.src.n; si++) {
                struct rf_box piece;
                if (!rf_box_intersect(b, &p.src.box[si], t->ndim, &piece))
                    continue;
                /* A part of the shard just counted: no larger than bytes. */
                int64_t inter = rf_box_numel(&piece, t->ndim) * elem;
                const int32_t *sh = p.src.holders + p.src.hstart[si];
                size_t nsh = p.src.hstart[si + 1] - p.src.hstart[si];
                if (nsh > cap_sd) {
                    free(sd);
                    cap_sd = nsh;
                    if (!(sd = malloc(cap_sd * sizeof(*sd)))) {
                        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
                        break;
                    }
                }
                size_t ns = domains_of(sh, nsh, domain_gpus, sd);
                for (size_t i = 0; i < ndh; i++)
                    if ((size_t)dh[i] < n_gpus && holds(sh, nsh, dh[i]))
                        need->gpu_in[dh[i]] -= inter;
                for (size_t i = 0, j = 0; i < nd; i++) {
                    while (j < ns && sd[j] < dd[i])
                        j++;
                    if (j < ns && sd[j] == dd[i] && (size_t)dd[i] < n_domains)
                        need->domain_in[dd[i]] -= inter;
                }
                if (!sources)
                    continue;
                /* Pieces are disjoint (a grid of sources, disjoint destinations), so these
                 * sums count each byte once and stay within the tensor's bytes. */
                if (nsh == 1 && (size_t)sh[0] < n_gpus && (ndh > 1 || dh[0] != sh[0]))
                    need->gpu_out[sh[0]] += inter;
                if (has_outside(dd, nd, sd, ns))
                    cell_own[si] += inter;
                if (away)
                    cell_away[si] += inter;
            }
        }
        /* One record per source cell that must send: its holders' domains, its bytes. */
        for (size_t si = 0; si < p.src.n && rc == 0; si++) {
            if (cell_own[si] == 0)
                continue; /* away is a part of own */
            const int32_t *sh = p.src.holders + p.src.hstart[si];
            size_t nsh = p.src.hstart[si + 1] - p.src.hstart[si];
            if (n_rec == cap_rec) {
                size_t nc = cap_rec ? 2 * cap_rec : 256;
                struct group_rec *nr = realloc(rec, nc * sizeof(*rec));
                if (!nr) {
                    rc = rf_error_set(err, RF_ENOMEM, "out of memory");
                    break;
                }
                rec = nr;
                cap_rec = nc;
            }
            if (n_rdom + nsh > cap_rdom) {
                size_t nc = cap_rdom ? 2 * cap_rdom : 1024;
                while (nc < n_rdom + nsh)
                    nc *= 2;
                int64_t *nr = realloc(rdom, nc * sizeof(*rdom));
                if (!nr) {
                    rc = rf_error_set(err, RF_ENOMEM, "out of memory");
                    break;
                }
                rdom = nr;
                cap_rdom = nc;
            }
            size_t ns = domains_of(sh, nsh, domain_gpus, rdom + n_rdom);
            rec[n_rec++] = (struct group_rec){
                .off = n_rdom, .n = ns, .own = cell_own[si], .away = cell_away[si]};
            n_rdom += ns;
        }
    }
    if (rc == 0)
        rc = need_groups(&p, need, rec, n_rec, rdom);
out:
    if (rc < 0)
        rf_need_release(need);
    cells_release(&p.src);
    cells_release(&p.dst);
    for (int d = 0; d < RF_MAX_DIMS; d++)
        free(p.starts[d]);
    free(p.cell_of);
    free(dd);
    free(sd);
    free(cell_own);
    free(cell_away);
    free(rec);
    free(rdom);
    return rc;
}

/* The planner's entry check of a side: its sizes and meshes, built for this model. */
static int check_side(const struct rf_side *s, const char *name, const struct rf_model *model,
                      struct rf_error *err)
{
    int rc;
    if (!s->layer_stage)
        return rf_error_set(err, RF_EINVAL, "%s: the side is not built (rf_side_init)", name);
    if ((rc = rf_side_check(s, name, err)) < 0)
        return rc;
    if (s->n_layers != model->layers)
        return rf_error_set(err, RF_EINVAL, "%s.stage_layers: cover %d layers, model %s has %d",
                            name, s->n_layers, model->name ? model->name : "", model->layers);
    return 0;
}

int rf_plan_build(struct rf_plan *plan, const struct rf_model *model, const struct rf_side *train,
                  const struct rf_side *infer, enum rf_strategy strategy,
                  const enum rf_strategy *tensor_strategy, const struct rf_plan_opts *opts,
                  struct rf_error *err)
{
    struct planner p = {.plan = plan,
                        .err = err,
                        .topo = opts ? opts->topo : NULL,
                        .sources = opts ? opts->sources : RF_SOURCES_BALANCED,
                        .bcast_comm = opts ? opts->bcast_comm : RF_FW_COMM_RECEIVERS,
                        .bcast_root = opts ? opts->bcast_root : RF_FW_ROOT_FIRST,
                        .wire_native = opts && opts->wire_native};
    int rc;

    memset(plan, 0, sizeof(*plan));
    plan->strategy = strategy;
    if (opts)
        p.relay = opts->relay;
    if (p.relay.fanout == 0)
        p.relay.fanout = 1;
    if (p.relay.fanout < 1 || p.relay.fanout > 64 || p.relay.depth < 0 ||
        p.relay.depth > RF_GPUS_MAX) {
        rc = rf_error_set(err, RF_EINVAL, "relay: fanout %d (1..64) or depth %d out of range",
                          (int)p.relay.fanout, (int)p.relay.depth);
        goto out;
    }
    plan->relay = p.relay;
    /* NCCL halves p2p channels per peer in communicators past 128 ranks unless told a
     * count: one 14 GB/s channel per pair cannot fill a relay's NIC, so refit-exec tells it
     * what NCCL itself asks (README, Simulator). */
    if (p.topo) {
        int64_t ask = rf_topology_net_ask(p.topo);
        plan->net_channels_per_peer = ask > 64 ? 64 : (int32_t)ask;
    }
    /* Whoever built the model and sides, their sizes are checked here, so every product
     * below is of bounded factors: GPUs within RF_GPUS_MAX, bytes within int64. */
    if ((unsigned)strategy >= RF_STRAT_COUNT) {
        rc = rf_error_set(err, RF_EINVAL, "strategy: %d is not a strategy", (int)strategy);
        goto out;
    }
    if ((rc = rf_model_check(model, err)) < 0 ||
        (rc = check_side(train, "train", model, err)) < 0 ||
        (rc = check_side(infer, "infer", model, err)) < 0)
        goto out;
    plan->model_params = rf_model_params(model);
    plan->model_bytes = rf_model_bytes(model);

    int64_t n_gpus, infer_end; /* the inference side's idle GPUs included (span) */
    if (rf_add_overflow(train->first_gpu, train->gpus, &n_gpus) ||
        rf_add_overflow(infer->first_gpu, infer->place.span, &infer_end) || n_gpus > RF_GPUS_MAX ||
        infer_end > RF_GPUS_MAX) {
        rc = rf_error_set(err, RF_EINVAL, "the sides reach beyond the %lld GPUs refit supports",
                          (long long)RF_GPUS_MAX);
        goto out;
    }
    if (infer_end > n_gpus)
        n_gpus = infer_end;
    p.load = calloc((size_t)n_gpus, sizeof(int64_t));
    p.nic_load = calloc(p.topo ? (size_t)p.topo->nics + 1 : 1, sizeof(int64_t));
    if (p.topo && n_gpus > p.topo->gpus) {
        rc = rf_error_set(err, RF_EINVAL, "the scenario uses %lld GPUs, cluster %s has %lld",
                          (long long)n_gpus, p.topo->cluster->name, (long long)p.topo->gpus);
        goto out;
    }
    if (!p.load || !p.nic_load) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = plan_tensors(&p, model, infer, strategy, tensor_strategy)) < 0)
        goto out;
    for (size_t i = 0; i < plan->n_tensors; i++)
        p.track_in |= plan->tensor_strategy[i] == RF_STRAT_HIERARCHICAL;
    if (p.track_in) { /* hierarchical needs a cluster: plan_tensors checked it */
        p.in_load = calloc((size_t)n_gpus, sizeof(int64_t));
        p.nic_in = calloc((size_t)p.topo->nics + 1, sizeof(int64_t));
        p.rail_mark = calloc((size_t)p.topo->cluster->nic.per_node + 1, sizeof(int32_t));
        if (!p.in_load || !p.nic_in || !p.rail_mark) {
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
            goto out;
        }
    }

    for (size_t i = 0; i < plan->n_tensors; i++) {
        const struct rf_tensor *t = &plan->tensors[i];
        plan->role[t->role].tensors++;
        plan->total.tensors++;
        if (t->scale_of < 0) {
            plan->role[t->role].params += rf_tensor_numel(t);
            plan->total.params += rf_tensor_numel(t);
        }
        if (plan->tensor_strategy[i] == RF_STRAT_BROADCAST)
            rc = plan_broadcast(&p, (int32_t)i, train, infer);
        else
            rc = plan_reshard(&p, (int32_t)i, train, infer);
        if (rc < 0)
            goto out;
    }
    rc = 0;
out:
    cells_release(&p.src);
    cells_release(&p.dst);
    for (int d = 0; d < RF_MAX_DIMS; d++)
        free(p.starts[d]);
    free(p.cell_of);
    free(p.rem);
    free(p.order);
    free(p.load);
    free(p.nic_load);
    free(p.in_load);
    free(p.nic_in);
    free(p.rail_mark);
    free(p.pairs);
    free(p.keys);
    free(p.groups);
    free(p.deal);
    if (rc < 0)
        rf_plan_release(plan);
    return rc;
}
