/* The planner's source choice: which holder of a box serves each destination, balanced
 * (blocks dealt round the exit NICs, least-loaded first) or local (the nearest holder). */
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"
#include "topology.h"

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
    if ((rc = RF_GROW(p->pairs, p->cap_pairs, nd, p->err)) < 0)
        return rc;
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
        if ((rc = RF_GROW(p->rem, p->cap_rem, nd, p->err)) < 0)
            return rc;
        while (j < nd && p->pairs[j][0] == p->pairs[i][0]) {
            p->rem[j - i] = p->pairs[j][1];
            j++;
        }
        if ((rc = planner_emit_runs_counted(p, box, p->pairs[i][0], p->rem, j - i, phase, bytes,
                                            count_logical)) < 0)
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
    if ((rc = RF_GROW(p->order, p->cap_order, k, p->err)) < 0)
        return rc;
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
        if ((rc = planner_emit_runs(p, box, src, d + lo, hi - lo, phase, bytes, count_logical)) <
                0 ||
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
    if ((rc = RF_GROW(p->keys, p->cap_keys, nh, p->err)) < 0)
        return rc;
    if ((rc = RF_GROW(p->groups, p->cap_groups, nh, p->err)) < 0)
        return rc;
    if ((rc = RF_GROW(p->deal, p->cap_deal, nh, p->err)) < 0)
        return rc;
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
    if ((rc = RF_GROW(p->rem, p->cap_rem, nd, p->err)) < 0)
        return rc;
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
    if ((rc = RF_GROW(p->order, p->cap_order, nh, p->err)) < 0)
        return rc;
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
