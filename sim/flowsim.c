/* The flow-level simulator: an event-driven fluid model with max-min fair rates, solved
 * incrementally so that millions of flows in hundreds of barrier groups take seconds.
 *
 * Flows of one group with the same path, bytes, cap and latency are one member: they start
 * together and finish together. Members with the same path and cap, whatever their group,
 * bytes or latency, are one rate class: max-min fairness being symmetric, their active
 * flows move at one rate, so the solver rates classes (weighted by their active flows) and
 * a class's members finish in the order of their thresholds, the class's service (bytes
 * per flow moved) they joined at plus their bytes. Completions and activations within a
 * relative BATCH_EPS of each other are one event. At an event only the classes that can
 * change rate are re-solved: a local set S (the classes that gained members, and those
 * bottlenecked on links that lost some), grown until the bottleneck conditions of max-min
 * fairness hold again for the whole system. That set is usually far smaller than the
 * connected component, since leaf links tie every flow of a group into one component
 * without being bottlenecks. Each re-solve is progressive filling on a small local table
 * of S's links, with a heap of link levels.
 *
 * The cost of an event is proportional to the classes whose rates change. A saturated
 * link shared by many classes with distinct finish times therefore costs quadratic time
 * in their number (every completion re-rates the rest); members of one class cost only
 * their heap, and equal shard sizes, the common case in a refit, finish in one event. */
#include "flowsim.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "flowsim_int.h"

/* ---- Heaps ---- */

/* Min-heaps of (key, id) kept in plain arrays: the keys sit in the entries, so sifting
 * touches nothing else. */
static void heap_down(struct hent *h, size_t n, size_t i)
{
    struct hent x = h[i];
    for (;;) {
        size_t l = 2 * i + 1;
        if (l >= n)
            break;
        if (l + 1 < n && h[l + 1].key < h[l].key)
            l++;
        if (h[l].key >= x.key)
            break;
        h[i] = h[l];
        i = l;
    }
    h[i] = x;
}

static void heap_up(struct hent *h, size_t i)
{
    struct hent x = h[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (h[p].key <= x.key)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

static void heap_pop(struct hent *h, size_t *n)
{
    h[0] = h[--*n];
    if (*n > 0)
        heap_down(h, *n, 0);
}

static void heapify(struct hent *h, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        heap_down(h, n, i);
}

/* The completion heap is 4-ary: it holds every re-rated class's entry until it surfaces
 * (tens of thousands live, more stale), and half the depth of a binary heap halved the
 * cost of its pops, the largest single cost of a Kimi K3 prediction. */
static void heap4_down(struct hent *h, size_t n, size_t i)
{
    struct hent x = h[i];
    for (;;) {
        size_t c = 4 * i + 1;
        if (c >= n)
            break;
        size_t end = c + 4 < n ? c + 4 : n, m = c;
        for (size_t k = c + 1; k < end; k++)
            if (h[k].key < h[m].key)
                m = k;
        if (h[m].key >= x.key)
            break;
        h[i] = h[m];
        i = m;
    }
    h[i] = x;
}

static void heap4_up(struct hent *h, size_t i)
{
    struct hent x = h[i];
    while (i > 0) {
        size_t p = (i - 1) / 4;
        if (h[p].key <= x.key)
            break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

static bool cheap_live(const struct rf_flowsim *fs, struct hent e)
{
    return fs->cls[e.id].hkey == e.key;
}

/* Schedules class c's completion at its key. A class keeps one registered entry no later
 * than its key: a key that moved earlier is pushed (the old entry goes stale), one that
 * moved later is not, and its entry, when it surfaces early, is pushed again at the key of
 * that time. Rates fall about as often as they rise in a refit round, and a class often
 * falls several times before its entry surfaces: this saves those pushes and the pops of
 * their stale entries. */
static int cheap_push(struct rf_flowsim *fs, int32_t c)
{
    if (fs->cls[c].hkey <= fs->cls[c].key)
        return 0;
    /* Stale entries are dropped once they outnumber the live ones: every live class has
     * exactly one registered entry, so a compaction at least halves the heap (amortised
     * O(1) per push) and keeps it near the live count, in cache. */
    if (fs->n_cheap > 2 * fs->n_live + 1024) {
        size_t n = 0;
        for (size_t i = 0; i < fs->n_cheap; i++)
            if (cheap_live(fs, fs->cheap[i]))
                fs->cheap[n++] = fs->cheap[i];
        fs->n_cheap = n;
        for (size_t i = n > 1 ? (n - 2) / 4 + 1 : 0; i-- > 0;)
            heap4_down(fs->cheap, n, i);
    }
    if (RF_GROW(fs->cheap, fs->cap_cheap, fs->n_cheap + 1, NULL))
        return RF_ENOMEM;
    fs->cls[c].hkey = fs->cls[c].key;
    fs->cheap[fs->n_cheap] = (struct hent){fs->cls[c].key, c};
    heap4_up(fs->cheap, fs->n_cheap++);
    return 0;
}

static void cheap_pop(struct rf_flowsim *fs)
{
    fs->cheap[0] = fs->cheap[--fs->n_cheap];
    if (fs->n_cheap > 0)
        heap4_down(fs->cheap, fs->n_cheap, 0);
}

/* The earliest completion, or INFINITY; a registered entry that surfaces before its
 * class's key goes back in at the key (never more than one per class). */
static double cheap_top(struct rf_flowsim *fs)
{
    while (fs->n_cheap > 0) {
        struct hent e = fs->cheap[0];
        struct cls *k = &fs->cls[e.id];
        if (k->hkey != e.key || isnan(k->key)) {
            cheap_pop(fs);
            continue;
        }
        if (k->key == e.key)
            return e.key;
        /* Later than registered: move the entry down in place (a pop and a push in one). */
        k->hkey = k->key;
        fs->cheap[0].key = k->key;
        if (isinf(k->key)) {
            cheap_pop(fs);
            continue;
        }
        heap4_down(fs->cheap, fs->n_cheap, 0);
    }
    return INFINITY;
}

static void aheap_push(struct rf_flowsim *fs, double t, int32_t g)
{
    fs->aheap[fs->n_aheap] = (struct hent){t, g};
    heap_up(fs->aheap, fs->n_aheap++);
}

/* ---- Groups and links during the run ---- */

/* Group g has finished at its finish time: release the dependents whose last prerequisite
 * it was. A worklist rather than recursion, since chains of empty groups can be long; each
 * group enters it once. */
static void group_done(struct rf_flowsim *fs, int32_t g0)
{
    int32_t n = 0;
    fs->gstack[n++] = g0;
    while (n > 0) {
        struct group *gr = &fs->groups[fs->gstack[--n]];
        gr->done = true;
        for (int32_t i = gr->dbeg; i < gr->dend; i++) {
            int32_t d = fs->deps[i];
            struct group *dg = &fs->groups[d];
            if (gr->finish > dg->ready)
                dg->ready = gr->finish;
            if (--dg->npre > 0)
                continue;
            dg->started = true;
            dg->start = dg->finish = dg->ready;
            if (dg->cbeg == dg->cend)
                fs->gstack[n++] = d;
            else
                aheap_push(fs, dg->start + fs->memb[dg->cbeg].lat, d);
        }
    }
}

/* Member m's bytes have moved at time t: it finishes after its tail. A group finishing
 * releases its dependents at its finish time, which may lie in the future (a tail), and
 * their activations are scheduled events like any other. */
static void memb_finished(struct rf_flowsim *fs, int32_t m, double t)
{
    struct memb *x = &fs->memb[m];
    struct group *gr = &fs->groups[x->group];
    t += x->tail;
    x->finish = t;
    if (t > gr->finish)
        gr->finish = t;
    if (--gr->unfinished == 0)
        group_done(fs, x->group);
}

/* A class's member heap: its active members by threshold. */
static void mheap_push(struct rf_flowsim *fs, struct cls *k, double thr, int32_t m)
{
    struct hent *h = fs->mheap + k->hbeg;
    h[k->hn] = (struct hent){thr, m};
    heap_up(h, (size_t)k->hn++);
}

static void mheap_pop(struct rf_flowsim *fs, struct cls *k)
{
    struct hent *h = fs->mheap + k->hbeg;
    h[0] = h[--k->hn];
    if (k->hn > 0)
        heap_down(h, (size_t)k->hn, 0);
}

/* When the class's next member finishes at its rate (INFINITY at rate 0). */
static double cls_key(const struct rf_flowsim *fs, const struct cls *k)
{
    double left = fs->mheap[k->hbeg].key - k->svc;
    if (!(k->rate > 0))
        return INFINITY;
    return k->t_upd + (left > 0 ? left : 0) / k->rate;
}

static int solve_add(struct rf_flowsim *fs, int32_t c)
{
    struct cls *k = &fs->cls[c];
    if (k->stamp == fs->sstamp)
        return 0;
    if (RF_GROW(fs->mem, fs->capS, fs->nS + 1, NULL))
        return RF_ENOMEM;
    k->stamp = fs->sstamp;
    fs->mem[fs->nS++].c = c;
    return 0;
}

/* Class c's next completion surfaced at t: its members whose bytes have moved by t_end
 * at its rate finish (the first always), each at its own time or t if that has passed.
 * Its links lose their load; a class left without members leaves its links, ending the
 * busy intervals of those it leaves idle. The caller has consumed its registered entry. */
static int complete(struct rf_flowsim *fs, int32_t c, double t, double t_end)
{
    struct cls *k = &fs->cls[c];
    int32_t lost = 0;
    do {
        struct hent top = fs->mheap[k->hbeg];
        double left = top.key - k->svc;
        double fin = k->t_upd + (left > 0 ? left : 0) / k->rate;
        if (lost > 0 && fin > t_end)
            break;
        mheap_pop(fs, k);
        lost += fs->memb[top.id].w;
        memb_finished(fs, top.id, fin > t ? fin : t);
    } while (k->hn > 0);
    k->w -= lost;
    bool gone = k->w == 0;
    for (int32_t h = 0; h < k->path_len; h++) {
        int32_t l = fs->cpath[k->path + h];
        struct link *L = &fs->links[l];
        L->load -= (double)lost * k->rate;
        if (gone) {
            if (k->b == l)
                L->nb--;
            if (--L->n == 0) {
                L->load = 0; /* no drift survives an idle link */
                L->len = 0;
                L->busy += t - L->since;
            }
        }
        if (L->fstamp != fs->fstamp) {
            L->fstamp = fs->fstamp;
            if (RF_GROW(fs->freed, fs->cap_freed, fs->n_freed + 1, NULL))
                return RF_ENOMEM;
            fs->freed[fs->n_freed++] = l;
        }
    }
    if (!gone) {
        /* Its rate stands until a solve moves it (one of its links freed capacity). */
        k->key = cls_key(fs, k);
        return cheap_push(fs, c);
    }
    fs->n_live--;
    if (k->path_len > 0) {
        int32_t moved = fs->act[--fs->n_act];
        fs->act[k->apos] = moved;
        fs->cls[moved].apos = k->apos;
    }
    k->svc += k->rate * (t - k->t_upd);
    k->t_upd = t;
    k->rate = 0;
    k->b = -1;
    k->key = NAN;
    k->hkey = NAN;
    return 0;
}

/* Drops the dead entries of a link's list. */
static void link_compact(const struct rf_flowsim *fs, struct link *L)
{
    int32_t w = 0;
    for (int32_t j = 0; j < L->len; j++) {
        const struct cls *k = &fs->cls[L->list[j].c];
        if (k->w > 0 && k->serial == L->list[j].serial)
            L->list[w++] = L->list[j];
    }
    L->len = w;
}

/* Releases the members of group g whose activation time falls in the event window: each
 * joins its class at the class's service now (a class without members first takes its
 * links) and puts its class into the solve set. */
static int activate(struct rf_flowsim *fs, int32_t g, double t, double t_end)
{
    struct group *gr = &fs->groups[g];
    int rc;
    if (gr->start > fs->last_start)
        fs->last_start = gr->start;
    while (gr->cursor < gr->cend && gr->start + fs->memb[gr->cursor].lat <= t_end) {
        int32_t mi = gr->cursor++;
        struct memb *m = &fs->memb[mi];
        int32_t c = m->cls;
        struct cls *k = &fs->cls[c];
        double act = gr->start + m->lat;
        if (m->bytes == 0 || (k->path_len == 0 && k->cap == 0)) {
            memb_finished(fs, mi, act);
            continue;
        }
        if (k->path_len == 0) {
            /* Alone on no link: the cap is the rate, fixed for good, so the service is
             * linear in time and a member joins at that of its own activation. */
            if (k->w == 0) {
                fs->n_live++;
                k->rate = k->cap;
                k->svc = 0;
                k->t_upd = act;
            }
            k->w += m->w;
            mheap_push(fs, k, k->svc + k->cap * (act - k->t_upd) + m->bytes, mi);
            k->key = cls_key(fs, k);
            if ((rc = cheap_push(fs, c)) < 0)
                return rc;
            continue;
        }
        bool was = k->w > 0;
        if (!was) {
            k->serial++;
            for (int32_t h = 0; h < k->path_len; h++) {
                struct link *L = &fs->links[fs->cpath[k->path + h]];
                if (L->n == 0)
                    L->since = t;
                if (L->len == L->size && 2 * L->n <= L->len)
                    link_compact(fs, L);
                if (L->len == L->size) {
                    /* The size is int32_t to keep struct link small; capacities are powers
                     * of two, so the largest it can hold is 2^30. */
                    size_t nc = (size_t)L->size;
                    if (L->size > INT32_MAX / 2 || RF_GROW(L->list, nc, nc + 1, NULL))
                        return RF_ENOMEM;
                    L->size = (int32_t)nc;
                }
                L->list[L->len++] = (struct lent){c, k->serial};
                L->n++;
            }
            fs->n_live++;
            k->rate = 0;
            k->t_upd = t;
            k->b = -1;
            k->apos = fs->n_act;
            fs->act[fs->n_act++] = c;
        }
        /* Until the solve, its links carry the newcomer at the class's rate, so that
         * their loads stay the sum of their classes'. */
        for (int32_t h = 0; h < k->path_len; h++) {
            struct link *L = &fs->links[fs->cpath[k->path + h]];
            L->bytes += (double)m->w * m->bytes;
            L->load += (double)m->w * k->rate;
        }
        k->w += m->w;
        mheap_push(fs, k, k->svc + k->rate * (t - k->t_upd) + m->bytes, mi);
        if (was && k->rate > 0) {
            k->key = cls_key(fs, k);
            if ((rc = cheap_push(fs, c)) < 0)
                return rc;
        }
        if ((rc = solve_add(fs, c)) < 0)
            return rc;
    }
    if (gr->cursor < gr->cend)
        aheap_push(fs, gr->start + fs->memb[gr->cursor].lat, g);
    return 0;
}

/* ---- The local max-min solve ---- */

/* Freezes member s at rate r: its links lose its share of their residual and its weight.
 * Their levels rise but their heap entries are left as they are (see fill). */
static void freeze(struct rf_flowsim *fs, struct smem *m, double r, int32_t b)
{
    double wr = (double)m->w * r;
    m->frozen = true;
    m->r = r;
    m->b = b;
    for (int32_t h = m->off; h < m->off + m->len; h++) {
        struct slink *q = &fs->sl[fs->s_loc[h]];
        q->R -= wr;
        q->W -= m->w;
        q->sum_new += wr;
        if (r > q->max_new)
            q->max_new = r;
        if (q->W == 0)
            q->done = true;
    }
}

/* Gathers the solve set's links into a local table (residual capacity left by the other
 * classes, weight, members in CSR form), so that filling runs on small dense arrays. */
static int gather(struct rf_flowsim *fs)
{
    size_t hops = 0;

    fs->lstamp++;
    fs->n_sl = 0;
    for (size_t s = 0; s < fs->nS; s++) {
        struct smem *m = &fs->mem[s];
        const struct cls *k = &fs->cls[m->c];
        *m = (struct smem){
            .cap = k->cap, .c = m->c, .w = k->w, .off = (int32_t)hops, .len = k->path_len, .b = -1};
        if (RF_GROW(fs->s_loc, fs->cap_loc, hops + (size_t)k->path_len, NULL))
            return RF_ENOMEM;
        for (int32_t h = 0; h < k->path_len; h++) {
            int32_t l = fs->cpath[k->path + h];
            struct lslot *ls = &fs->lslot[l];
            if (ls->stamp != fs->lstamp) {
                if (RF_GROW(fs->sl, fs->cap_sl, fs->n_sl + 1, NULL))
                    return RF_ENOMEM;
                ls->stamp = fs->lstamp;
                ls->loc = (int32_t)fs->n_sl;
                fs->sl[fs->n_sl++] = (struct slink){.l = l, .lam_sat = -1};
            }
            struct slink *q = &fs->sl[ls->loc];
            fs->s_loc[hops + (size_t)h] = ls->loc;
            q->nS++;
            q->W += k->w;
            q->sum_old += (double)k->w * k->rate;
            if (k->b == l)
                q->nbS_old++;
        }
        hops += (size_t)k->path_len;
    }
    if (RF_GROW(fs->csr, fs->cap_csr, hops, NULL))
        return RF_ENOMEM;
    int32_t off = 0;
    for (size_t i = 0; i < fs->n_sl; i++) {
        struct slink *q = &fs->sl[i];
        const struct link *L = &fs->links[q->l];
        q->off = q->fill = off;
        off += q->nS;
        /* All of a link's classes in S: the residual is the capacity, free of drift. */
        q->out_load = q->nS == L->n ? 0 : L->load - q->sum_old;
        if (q->out_load < 0)
            q->out_load = 0;
        q->R = fs->lcap[q->l] - q->out_load;
        if (q->R < 0)
            q->R = 0;
    }
    for (size_t s = 0; s < fs->nS; s++) {
        const struct smem *m = &fs->mem[s];
        for (int32_t h = m->off; h < m->off + m->len; h++)
            fs->csr[fs->sl[fs->s_loc[h]].fill++] = (int32_t)s;
    }
    return 0;
}

/* Progressive filling of the solve set: raise all unfrozen rates together; the first link
 * to saturate freezes its members at that level, a cap freezes its own member.
 *
 * A link's level R/W only rises as members freeze elsewhere, so its heap entry is never
 * above its true level: an entry that reaches the top stale goes back with the current
 * level, and one that is current is the true minimum. A link is pushed again only when it
 * would have been next, not at every change. Caps never move, so they are sorted once. */
static int fill(struct rf_flowsim *fs)
{
    size_t ncap = 0, cp = 0;
    int rc;

    if ((rc = gather(fs)) < 0)
        return rc;
    if (RF_GROW(fs->heap, fs->cap_heap, fs->n_sl, NULL) ||
        RF_GROW(fs->caps, fs->cap_caps, 2 * fs->nS, NULL))
        return RF_ENOMEM;
    fs->n_heap = 0;
    for (size_t i = 0; i < fs->n_sl; i++) {
        const struct slink *q = &fs->sl[i];
        fs->heap[fs->n_heap++] = (struct hent){q->R / (double)q->W, (int32_t)i};
    }
    heapify(fs->heap, fs->n_heap);
    for (size_t s = 0; s < fs->nS; s++)
        if (fs->mem[s].cap > 0)
            fs->caps[ncap++] = (struct hent){fs->mem[s].cap, (int32_t)s};
    flowsim_sort_hents(fs->caps, ncap, fs->caps + fs->nS);

    /* Most links never saturate; once every member is frozen their entries are left. */
    size_t unfrozen = fs->nS;
    double lam = 0;
    while (unfrozen > 0) {
        /* Bring a current link to the top of the heap. */
        while (fs->n_heap > 0) {
            struct slink *q = &fs->sl[fs->heap[0].id];
            if (q->done) {
                heap_pop(fs->heap, &fs->n_heap);
                continue;
            }
            double level = q->R > 0 ? q->R / (double)q->W : 0;
            if (level < lam)
                level = lam; /* rounding must not take a level back below the water */
            if (level <= fs->heap[0].key)
                break;
            fs->heap[0].key = level;
            heap_down(fs->heap, fs->n_heap, 0);
        }
        while (cp < ncap && fs->mem[fs->caps[cp].id].frozen)
            cp++;
        double link_level = fs->n_heap ? fs->heap[0].key : INFINITY;
        if (cp < ncap && fs->caps[cp].key <= link_level) {
            lam = fs->caps[cp].key;
            freeze(fs, &fs->mem[fs->caps[cp++].id], lam, -1);
            unfrozen--;
            continue;
        }
        if (fs->n_heap == 0)
            break;
        struct slink *q = &fs->sl[fs->heap[0].id];
        heap_pop(fs->heap, &fs->n_heap);
        lam = link_level;
        q->lam_sat = lam;
        for (int32_t i = q->off; i < q->off + q->nS; i++) {
            struct smem *m = &fs->mem[fs->csr[i]];
            if (!m->frozen) {
                freeze(fs, m, lam, q->l);
                unfrozen--;
            }
        }
        q->done = true;
    }
    return 0;
}

/* The allocation is max-min fair iff every class has a bottleneck: its cap, or a saturated
 * link on which no class runs faster (Bertsekas and Gallager). S was just solved and the
 * other classes kept their rates; the conditions can only fail on links S crosses. A class
 * of S bottlenecked where an outsider runs faster needs the outsider re-solved (V1); an
 * outsider bottlenecked on a link that S left unsaturated, or on which S now runs faster,
 * needs to be re-solved (V2). Sets how many classes joined S. */
static int verify(struct rf_flowsim *fs, size_t *added)
{
    size_t before = fs->nS;
    int rc;
    for (size_t i = 0; i < fs->n_sl; i++) {
        const struct slink *q = &fs->sl[i];
        struct link *L = &fs->links[q->l];
        if (q->nS == L->n)
            continue;
        if (q->lam_sat >= 0) {
            if (L->len > L->n)
                link_compact(fs, L);
            double thr = q->lam_sat * (1 + RATE_EPS);
            for (int32_t j = 0; j < L->n; j++) {
                int32_t c = L->list[j].c;
                const struct cls *k = &fs->cls[c];
                if (k->stamp != fs->sstamp && k->rate > thr && (rc = solve_add(fs, c)) < 0)
                    return rc;
            }
        }
        if (L->nb - q->nbS_old > 0) {
            bool sat = q->out_load + q->sum_new >= fs->lcap[q->l] * (1 - RATE_EPS);
            if (sat && q->max_new <= fs->lsat[q->l] * (1 + RATE_EPS))
                continue;
            if (L->len > L->n)
                link_compact(fs, L);
            for (int32_t j = 0; j < L->n; j++) {
                int32_t c = L->list[j].c;
                const struct cls *k = &fs->cls[c];
                if (k->stamp != fs->sstamp && k->b == q->l &&
                    (!sat || q->max_new > k->rate * (1 + RATE_EPS)) && (rc = solve_add(fs, c)) < 0)
                    return rc;
            }
        }
    }
    *added = fs->nS - before;
    return 0;
}

/* Installs the solved rates: link loads and levels first (they need the old bottleneck
 * counts), then each class's remaining bytes, bottleneck and predicted finish. */
static int commit(struct rf_flowsim *fs, double t)
{
    int rc;
    for (size_t i = 0; i < fs->n_sl; i++) {
        const struct slink *q = &fs->sl[i];
        struct link *L = &fs->links[q->l];
        L->load = q->out_load + q->sum_new;
        if (L->nb - q->nbS_old == 0)
            fs->lsat[q->l] = q->lam_sat >= 0 ? q->lam_sat : INFINITY;
        else if (q->lam_sat >= 0 && q->lam_sat < fs->lsat[q->l])
            fs->lsat[q->l] = q->lam_sat;
    }
    for (size_t s = 0; s < fs->nS; s++) {
        const struct smem *m = &fs->mem[s];
        struct cls *k = &fs->cls[m->c];
        if (k->b >= 0)
            fs->links[k->b].nb--;
        k->b = m->b;
        if (k->b >= 0)
            fs->links[k->b].nb++;
        if (m->r == k->rate && k->rate > 0)
            continue;
        k->svc += k->rate * (t - k->t_upd);
        k->t_upd = t;
        k->rate = m->r;
        k->key = cls_key(fs, k);
        if (m->r > 0 && (rc = cheap_push(fs, m->c)) < 0)
            return rc;
    }
    return 0;
}

/* Re-rates the classes that can change after an event: S holds the new classes and those
 * bottlenecked on links that lost a class; it grows until the bottleneck conditions hold. */
static int solve(struct rf_flowsim *fs, double t)
{
    int rc;
    for (size_t i = 0; i < fs->n_freed; i++) {
        struct link *L = &fs->links[fs->freed[i]];
        if (L->nb == 0)
            continue;
        if (L->len > L->n)
            link_compact(fs, L);
        for (int32_t j = 0; j < L->n; j++)
            if (fs->cls[L->list[j].c].b == fs->freed[i] && (rc = solve_add(fs, L->list[j].c)) < 0)
                return rc;
    }
    /* A class that gained a member may have lost all of them in the same event. */
    size_t live = 0;
    for (size_t i = 0; i < fs->nS; i++)
        if (fs->cls[fs->mem[i].c].w > 0)
            fs->mem[live++] = fs->mem[i];
    fs->nS = live;
    if (fs->nS == 0)
        return 0;
    /* An event that touches most of the active classes (a group starting) would pull in
     * the rest through the checks and fill twice; take them all at once instead. */
    if (2 * fs->nS >= (size_t)fs->n_act)
        for (int32_t i = 0; i < fs->n_act; i++)
            if ((rc = solve_add(fs, fs->act[i])) < 0)
                return rc;
    fs->stats.solves++;
    for (;;) {
        size_t added;
        if ((rc = fill(fs)) < 0 || (rc = verify(fs, &added)) < 0)
            return rc;
        if (added == 0)
            break;
        /* Each pass fills S again from scratch; once S has grown to a quarter of the
         * active classes, the rest is cheaper taken at once than pulled in pass by pass
         * (Kimi K3 at 4096 GPUs: three fills per solve before, 15% less time after). */
        if (4 * fs->nS >= (size_t)fs->n_act)
            for (int32_t i = 0; i < fs->n_act; i++)
                if ((rc = solve_add(fs, fs->act[i])) < 0)
                    return rc;
    }
    fs->stats.solved_classes += (int64_t)fs->nS;
    return commit(fs, t);
}

/* ---- The run ---- */

static int simulate(struct rf_flowsim *fs, struct rf_error *err)
{
    double now = 0;
    int rc = 0;

    for (int32_t g = 0; g < fs->n_groups; g++) {
        struct group *gr = &fs->groups[g];
        /* An empty root releases its dependents at once; they are not roots. */
        if (gr->npre > 0 || gr->started)
            continue;
        gr->started = true;
        if (gr->cbeg == gr->cend)
            group_done(fs, g);
        else
            aheap_push(fs, fs->memb[gr->cbeg].lat, g);
    }

    for (;;) {
        double tc = cheap_top(fs);
        double ta = fs->n_aheap ? fs->aheap[0].key : INFINITY;
        double t = tc < ta ? tc : ta;
        if (t == INFINITY) {
            if (fs->n_live)
                return rf_error_set(err, RF_EINVAL, "flowsim: flows stalled at time %g", now);
            break;
        }
        if (t < now)
            t = now;
        now = t;
        double window = fs->tolerance * (t - fs->last_start);
        double t_end = t + (window > BATCH_EPS * t ? window : BATCH_EPS * t);
        fs->stats.events++;
        fs->sstamp++;
        fs->fstamp++;
        fs->nS = 0;
        fs->n_freed = 0;

        /* Completions can finish groups and release others whose flows activate inside the
         * window, and zero-byte activations complete at once: sweep until quiet. */
        bool progress = true;
        while (progress) {
            progress = false;
            while (cheap_top(fs) <= t_end) {
                int32_t c = fs->cheap[0].id;
                cheap_pop(fs);
                fs->cls[c].hkey = INFINITY;
                if ((rc = complete(fs, c, t, t_end)) < 0)
                    goto nomem;
                progress = true;
            }
            while (fs->n_aheap && fs->aheap[0].key <= t_end) {
                int32_t g = fs->aheap[0].id;
                heap_pop(fs->aheap, &fs->n_aheap);
                if ((rc = activate(fs, g, t, t_end)) < 0)
                    goto nomem;
                progress = true;
            }
        }
        if ((rc = solve(fs, t)) < 0)
            goto nomem;
    }
    for (int32_t g = 0; g < fs->n_groups; g++)
        if (!fs->groups[g].done)
            return rf_error_set(err, RF_EINVAL, "flowsim: group %d never finished", (int)g);
    return 0;
nomem:
    return rf_error_set(err, RF_ENOMEM, "flowsim: out of memory");
}

void rf_flowsim_set_tolerance(struct rf_flowsim *fs, double rel)
{
    fs->tolerance = rel > BATCH_EPS ? rel : BATCH_EPS;
}

void rf_flowsim_set_once(struct rf_flowsim *fs)
{
    fs->once = true;
}

int rf_flowsim_run(struct rf_flowsim *fs, struct rf_error *err)
{
    int rc;

    if (fs->spent)
        return rf_error_set(err, RF_EINVAL, "flowsim: run once (rf_flowsim_set_once) already");
    flowsim_free_run(fs);
    memset(&fs->stats, 0, sizeof(fs->stats));
    fs->last_start = 0;
    for (size_t l = 0; l < fs->n_links; l++) {
        struct link *L = &fs->links[l];
        L->load = L->since = L->bytes = L->busy = 0;
        L->n = L->len = L->nb = 0;
        L->fstamp = 0;
        fs->lslot[l].stamp = 0;
        fs->lsat[l] = INFINITY;
        fs->lbytes[l] = fs->lbusy[l] = 0;
    }
    fs->sstamp = fs->lstamp = fs->fstamp = 0;
    fs->n_cheap = fs->n_live = fs->n_aheap = 0;
    if ((rc = flowsim_build(fs, err)) < 0)
        goto out;
    if (fs->once) {
        /* Members and classes hold all the run needs (their own copies of the paths). */
        free(fs->flows);
        free(fs->paths);
        fs->flows = NULL;
        fs->paths = NULL;
        fs->cap_flows = fs->cap_paths = fs->n_paths = 0;
        fs->spent = true;
    }
    for (int32_t g = 0; g < fs->n_groups; g++) {
        struct group *gr = &fs->groups[g];
        gr->cursor = gr->cbeg;
        gr->unfinished = gr->cend - gr->cbeg;
    }
    fs->aheap = malloc(((size_t)fs->n_groups + 1) * sizeof(struct hent));
    fs->gstack = malloc(((size_t)fs->n_groups + 1) * sizeof(int32_t));
    fs->act = malloc(((size_t)fs->n_cls + 1) * sizeof(int32_t));
    fs->n_act = 0;
    if (!fs->aheap || !fs->gstack || !fs->act) {
        rc = rf_error_set(err, RF_ENOMEM, "flowsim: out of memory");
        goto out;
    }
    if ((rc = simulate(fs, err)) < 0)
        goto out;

    fs->makespan = 0;
    for (int32_t g = 0; g < fs->n_groups; g++)
        if (fs->groups[g].finish > fs->makespan)
            fs->makespan = fs->groups[g].finish;
    for (size_t l = 0; l < fs->n_links; l++) {
        fs->lbytes[l] = fs->links[l].bytes;
        fs->lbusy[l] = fs->links[l].busy;
    }
    fs->stats.flows = (int64_t)fs->n_flows;
    fs->stats.classes = fs->n_cls;
    fs->stats.groups = fs->n_groups;
    fs->run_flows = fs->n_flows;
    fs->run_groups = fs->n_groups;
    fs->ran = true;
out:
    if (rc < 0)
        flowsim_free_run(fs);
    return rc;
}

double rf_flowsim_flow_finish(const struct rf_flowsim *fs, int64_t flow)
{
    if (!fs->ran || flow < 0 || (uint64_t)flow >= fs->run_flows)
        return NAN;
    return fs->memb[fs->f_memb[flow]].finish;
}

double rf_flowsim_group_start(const struct rf_flowsim *fs, int32_t group)
{
    if (!fs->ran || group < 0 || group >= fs->run_groups)
        return NAN;
    return fs->groups[group].start;
}

double rf_flowsim_group_finish(const struct rf_flowsim *fs, int32_t group)
{
    if (!fs->ran || group < 0 || group >= fs->run_groups)
        return NAN;
    return fs->groups[group].finish;
}

double rf_flowsim_makespan(const struct rf_flowsim *fs)
{
    return fs->ran ? fs->makespan : NAN;
}

const double *rf_flowsim_link_bytes(const struct rf_flowsim *fs)
{
    return fs->lbytes;
}

const double *rf_flowsim_link_busy(const struct rf_flowsim *fs)
{
    return fs->lbusy;
}

void rf_flowsim_stats(const struct rf_flowsim *fs, struct rf_flowsim_stats *out)
{
    *out = fs->stats;
}
