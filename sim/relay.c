/* hierarchical: NVIDIA M2N's algorithm. A box's destination NVLink domains each get a
 * leader, which receives the box over the fabric once and fans it out over NVLink to the
 * domain's other destinations; with the ring (struct rf_relay), leaders forward it leader
 * to leader around the ring of destination domains (or down a tree), so a source sends
 * it once per chain instead of once per domain. The schedule pipelines every forward
 * (sim/schedule.h): a chain costs a fill of one chunk per hop, not a round per hop. */
#include <string.h>

#include "plan_int.h"
#include "topology.h"

/* The leader of one destination domain for one box: among the domain's destinations c[0..n)
 * of the box (none holds it), the one whose NIC rail matches the source's (src >= 0) or, with
 * the source still to be chosen (src < 0), the rail of any holder (rail_mark): a same-rail
 * delivery stays on its rail leaf, PXN or not, and with PXN a cross-rail one would move
 * the sender's bytes onto another NIC of its node (topology.c's routes). Then the least
 * loaded NIC ingress, as several GPUs may share a NIC, then the least loaded GPU ingress,
 * then the lowest GPU: a pure function of the loads, so plans are deterministic. When the
 * box comes from inside the domain (cross false) neither rail nor NIC is involved. */
static int32_t pick_leader(const struct planner *p, const int32_t *c, size_t n, int32_t src,
                           bool cross)
{
    const struct rf_place *pl = p->topo->place;
    int32_t best = c[0];
    int best_miss = 2;
    int64_t best_nic = INT64_MAX, best_gpu = INT64_MAX;
    for (size_t i = 0; i < n; i++) {
        const struct rf_place *q = &pl[c[i]];
        int miss = 0;
        int64_t nic = 0;
        if (cross && q->nic >= 0) {
            miss = src >= 0 ? q->rail != pl[src].rail : p->rail_mark[q->rail] != p->rail_stamp;
            nic = p->nic_in[q->nic];
        }
        int64_t gpu = p->in_load[c[i]];
        if (miss < best_miss || (miss == best_miss && nic < best_nic) ||
            (miss == best_miss && nic == best_nic && gpu < best_gpu)) {
            best = c[i];
            best_miss = miss;
            best_nic = nic;
            best_gpu = gpu;
        }
    }
    return best;
}

/* One destination domain of a box: its range of dsts, its leader, and the run that brings
 * the leader the box (-1 until known). */
struct dom {
    size_t lo, hi;
    int32_t lead, run;
};

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Sources feed the leaders of domains feed[0..n) (ascending): each leader is chosen on its
 * source's rail, then by ingress (pick_leader). leaders[] is scratch of n entries. */
static int feed_leaders(struct planner *p, int32_t box, const int32_t *h, size_t nh,
                        const int32_t *dsts, struct dom *dom, const size_t *feed, size_t n,
                        int32_t *leaders, int64_t bytes)
{
    const struct rf_topology *t = p->topo;
    const struct rf_place *pl = t->place;
    int32_t ti = p->plan->boxes[box].tensor;
    int rc;
    if (p->sources == RF_SOURCES_LOCAL) {
        /* Local sources choose a holder per destination, nearest first (assign_local): lead
         * with a GPU on a rail some holder has, and the nearest holder is then on it. */
        if (++p->rail_stamp == INT32_MAX) {
            memset(p->rail_mark, 0, (size_t)t->cluster->nic.per_node * sizeof(int32_t));
            p->rail_stamp = 1;
        }
        for (size_t k = 0; k < nh; k++)
            if (pl[h[k]].rail >= 0)
                p->rail_mark[pl[h[k]].rail] = p->rail_stamp;
        for (size_t k = 0; k < n; k++) {
            struct dom *d = &dom[feed[k]];
            bool cross = !planner_holds_in_domain(t, h, nh, pl[dsts[d->lo]].domain);
            d->lead = pick_leader(p, dsts + d->lo, d->hi - d->lo, -1, cross);
            leaders[k] = d->lead;
        }
        size_t first = p->plan->n_transfers;
        if ((rc = planner_assign(p, box, h, nh, leaders, n, RF_PHASE_DELIVER, bytes, true)) < 0)
            return rc;
        /* Which run brought each leader the box: a binary search per destination, as the
         * leaders ascend. */
        for (size_t x = first; x < p->plan->n_transfers; x++) {
            const struct rf_transfer *r = &p->plan->transfers[x];
            for (int32_t i = 0; i < r->dst_count; i++) {
                int32_t g = r->dst + i * r->dst_stride;
                const int32_t *f = bsearch(&g, leaders, n, sizeof(int32_t), planner_cmp_i32);
                dom[feed[f - leaders]].run = (int32_t)x;
            }
        }
        return 0;
    }
    /* Balanced sources as assign gives them (contiguous blocks of domains over the
     * least-loaded holders), chosen first so each leader can be on its source's rail. */
    planner_order_by_load(p, h, nh);
    size_t kk = nh < n ? nh : n;
    for (size_t j = 0; j < kk; j++) {
        size_t lo = j * n / kk, hi = (j + 1) * n / kk;
        int32_t src = p->order[j].gpu;
        for (size_t k = lo; k < hi; k++) {
            struct dom *d = &dom[feed[k]];
            bool cross = pl[src].domain != pl[dsts[d->lo]].domain;
            d->lead = pick_leader(p, dsts + d->lo, d->hi - d->lo, src, cross);
            leaders[k] = d->lead;
        }
        size_t from = p->plan->n_transfers;
        if ((rc = planner_emit_runs(p, box, src, leaders + lo, hi - lo, RF_PHASE_DELIVER, bytes,
                                    true)) < 0 ||
            (rc = planner_add_bytes(p, ti, &p->load[src], bytes, (int64_t)(hi - lo),
                                    "a GPU's load")) < 0)
            return rc;
        /* emit_runs covers the leaders in order, a run at a time. */
        size_t k = lo;
        for (size_t x = from; x < p->plan->n_transfers; x++)
            for (int32_t i = 0; i < p->plan->transfers[x].dst_count; i++)
                dom[feed[k++]].run = (int32_t)x;
    }
    return 0;
}

/* The relays of one tree of leaders: tree[0..n) are domains in heap order (the children of
 * entry q are q * fanout + 1 .. q * fanout + fanout), tree[0]'s leader already fed. Each
 * child's leader is picked on its parent's rail (the parent's NIC talks to the same rail
 * leaf) and then by ingress; a parent forwards to its children in one go. kids[] is scratch
 * of fanout entries. */
static int relay_tree(struct planner *p, int32_t box, const int32_t *dsts, struct dom *dom,
                      const size_t *tree, size_t n, int64_t bytes, int32_t (*kids)[2])
{
    int32_t ti = p->plan->boxes[box].tensor;
    size_t f = (size_t)p->relay.fanout;
    int rc;
    for (size_t q = 0; q * f + 1 < n; q++) {
        struct dom *parent = &dom[tree[q]];
        size_t nk = 0;
        for (size_t i = q * f + 1; i <= q * f + f && i < n; i++) {
            struct dom *d = &dom[tree[i]];
            d->lead = pick_leader(p, dsts + d->lo, d->hi - d->lo, parent->lead, true);
            kids[nk][0] = d->lead;
            kids[nk][1] = (int32_t)tree[i];
            nk++;
        }
        qsort(kids, nk, sizeof(*kids), planner_cmp_i32); /* by leader GPU */
        if ((rc = RF_GROW(p->rem, p->cap_rem, nk, p->err)) < 0)
            return rc;
        for (size_t k = 0; k < nk; k++)
            p->rem[k] = kids[k][0];
        size_t from = p->plan->n_transfers, k = 0;
        if ((rc = planner_emit_runs(p, box, parent->lead, p->rem, nk, RF_PHASE_DELIVER, bytes,
                                    true)) < 0 ||
            (rc = planner_add_bytes(p, ti, &p->load[parent->lead], bytes, (int64_t)nk,
                                    "a GPU's load")) < 0)
            return rc;
        for (size_t x = from; x < p->plan->n_transfers; x++) {
            p->plan->transfers[x].after = parent->run;
            for (int32_t i = 0; i < p->plan->transfers[x].dst_count; i++)
                dom[kids[k++][1]].run = (int32_t)x;
        }
    }
    return 0;
}

/* The relays of one chain of leaders (fanout 1): tree[0..n) are domains in ring order,
 * tree[0]'s leader already fed. Each leader is picked on its predecessor's rail, then by
 * ingress; stretches whose leaders are evenly spaced become one chain run each (with one
 * destination per domain, as Kimi K3's expert shards have, a whole chain is one or two). */
static int relay_chain(struct planner *p, int32_t box, const int32_t *dsts, struct dom *dom,
                       const size_t *tree, size_t n, int64_t bytes)
{
    int32_t ti = p->plan->boxes[box].tensor;
    int rc;
    for (size_t i = 1; i < n; i++) {
        struct dom *d = &dom[tree[i]];
        d->lead = pick_leader(p, dsts + d->lo, d->hi - d->lo, dom[tree[i - 1]].lead, true);
    }
    for (size_t i = 1; i < n;) {
        const struct dom *from = &dom[tree[i - 1]];
        size_t j = i + 1;
        int32_t stride = j < n ? dom[tree[j]].lead - dom[tree[i]].lead : 0;
        while (j < n && stride > 0 && dom[tree[j]].lead - dom[tree[j - 1]].lead == stride)
            j++;
        int32_t count = (int32_t)(j - i);
        if ((rc = planner_emit(p, box, from->lead, dom[tree[i]].lead, count, count > 1 ? stride : 0,
                               RF_PHASE_DELIVER, bytes, true)) < 0)
            return rc;
        int32_t run = (int32_t)(p->plan->n_transfers - 1);
        struct rf_transfer *x = &p->plan->transfers[run];
        x->chain = count > 1;
        x->after = from->run;
        /* Every member but the last sends the box on, as does the run's source. */
        if ((rc = planner_add_bytes(p, ti, &p->load[from->lead], bytes, 1, "a GPU's load")) < 0)
            return rc;
        for (size_t k = i; k < j; k++) {
            dom[tree[k]].run = run;
            if (k + 1 < j && (rc = planner_add_bytes(p, ti, &p->load[dom[tree[k]].lead], bytes, 1,
                                                     "a GPU's load")) < 0)
                return rc;
        }
        i = j;
    }
    return 0;
}

/* Leaders a tree of this fanout holds within `depth` hops of its root (0: no limit), at
 * most n. */
static size_t tree_capacity(int32_t fanout, int32_t depth, size_t n)
{
    if (depth <= 0)
        return n;
    size_t cap = 1, level = 1;
    for (int32_t d = 0; d < depth && cap < n; d++) {
        level = level > n / (size_t)fanout ? n : level * (size_t)fanout;
        cap = cap > n - level ? n : cap + level;
    }
    return cap < n ? cap : n;
}

/* Hierarchical delivery of one box. Replicas that hold the data themselves (colocated) copy
 * it locally, and the first of them leads its domain. The other domains (in ascending
 * order) need a leader fed over the fabric: without the ring a source feeds every one;
 * with it they are taken around the ring starting one domain further for each box (so
 * every domain enters, forwards and ends chains equally often), cut into trees of at most
 * tree_capacity leaders, and a source feeds each tree's root. Leaders are spread over the
 * domain's GPUs and NICs box by box (pick_leader): with the lowest GPU of the domain
 * leading every box, DeepSeek-V3 onto 18 TP8 replicas in two NVL72 domains sent every
 * fabric byte to 16 of the 144 inference NICs. */
int planner_assign_hierarchical(struct planner *p, int32_t box, const int32_t *h, size_t nh,
                                const int32_t *dsts, size_t nd, int64_t bytes)
{
    const struct rf_place *pl = p->topo->place;
    int32_t ti = p->plan->boxes[box].tensor;
    size_t n_need = 0, n_dom = 0, f = (size_t)p->relay.fanout;
    int rc;
    if ((rc = RF_GROW(p->rem, p->cap_rem, nd, p->err)) < 0)
        return rc;
    if ((rc = RF_GROW(p->order, p->cap_order, nh, p->err)) < 0)
        return rc;
    /* need[] lists the domains without a colocated leader, in order; ring[] the same around
     * the ring, feed[] the roots of its trees; leaders[] is feed_leaders' scratch. */
    struct dom *dom = malloc(nd * sizeof(*dom));
    int32_t *leaders = malloc(nd * sizeof(int32_t));
    size_t *need = malloc(nd * sizeof(size_t)), *ring = malloc(nd * sizeof(size_t));
    size_t *feed = malloc(nd * sizeof(size_t));
    int32_t(*kids)[2] = malloc((f + 1) * sizeof(*kids));
    if (!dom || !leaders || !need || !ring || !feed || !kids) {
        rc = rf_error_set(p->err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < nd;) {
        size_t j = i;
        struct dom *d = &dom[n_dom];
        d->lead = -1;
        d->run = -1;
        while (j < nd && pl[dsts[j]].domain == pl[dsts[i]].domain) {
            if (bsearch(&dsts[j], h, nh, sizeof(int32_t), planner_cmp_i32)) {
                if ((rc = planner_emit(p, box, dsts[j], dsts[j], 1, 0, RF_PHASE_DELIVER, bytes,
                                       true)) < 0)
                    goto out;
                if (d->lead < 0) {
                    d->lead = dsts[j];
                    d->run = (int32_t)(p->plan->n_transfers - 1);
                }
            }
            j++;
        }
        d->lo = i;
        d->hi = j;
        if (d->lead < 0)
            need[n_need++] = n_dom;
        n_dom++;
        i = j;
    }
    if (n_need > 0 && (!p->relay.ring || n_need == 1)) {
        if ((rc = feed_leaders(p, box, h, nh, dsts, dom, need, n_need, leaders, bytes)) < 0)
            goto out;
    } else if (n_need > 0) {
        size_t e = p->ring_turn++ % n_need;
        for (size_t k = 0; k < n_need; k++)
            ring[k] = need[(e + k) % n_need];
        size_t cap = tree_capacity(p->relay.fanout, p->relay.depth, n_need);
        size_t trees = (n_need + cap - 1) / cap;
        for (size_t j = 0; j < trees; j++)
            feed[j] = ring[j * n_need / trees];
        qsort(feed, trees, sizeof(*feed), cmp_size);
        if ((rc = feed_leaders(p, box, h, nh, dsts, dom, feed, trees, leaders, bytes)) < 0)
            goto out;
        for (size_t j = 0; j < trees; j++) {
            size_t lo = j * n_need / trees, hi = (j + 1) * n_need / trees;
            rc = f == 1 ? relay_chain(p, box, dsts, dom, ring + lo, hi - lo, bytes)
                        : relay_tree(p, box, dsts, dom, ring + lo, hi - lo, bytes, kids);
            if (rc < 0)
                goto out;
        }
    }
    for (size_t k = 0; k < n_dom; k++) {
        struct dom *d = &dom[k];
        size_t nf = 0;
        for (size_t j = d->lo; j < d->hi; j++)
            if (dsts[j] != d->lead && !bsearch(&dsts[j], h, nh, sizeof(int32_t), planner_cmp_i32))
                p->rem[nf++] = dsts[j];
        if (nf == 0)
            continue;
        size_t from = p->plan->n_transfers;
        if ((rc = planner_emit_runs(p, box, d->lead, p->rem, nf, RF_PHASE_DELIVER, bytes, true)) <
            0)
            goto out;
        for (size_t x = from; x < p->plan->n_transfers; x++)
            p->plan->transfers[x].after = d->run;
        if ((rc = planner_add_bytes(p, ti, &p->load[d->lead], bytes, (int64_t)nf, "a GPU's load")) <
            0)
            goto out;
    }
    rc = 0;
out:
    free(dom);
    free(leaders);
    free(need);
    free(ring);
    free(feed);
    free(kids);
    return rc;
}
