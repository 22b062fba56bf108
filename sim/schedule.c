/* First-fit round assignment. Each GPU's send and receive usage per round is kept in one
 * array per GPU, so the search for a round with room reads consecutive memory (round-major
 * arrays made that scan a cache miss per round: a quarter of planning time on Kimi K3), and
 * in whichever of two forms is smaller: dense, a count per round, or sparse, the rounds it
 * stages bytes in (one count per round up to the plan's last held 1.08 GB for 8,192
 * inference GPUs that each receive in a few of 8,973 rounds). A per-GPU hint skips rounds
 * where that GPU is already full, and the full rounds before it are dropped. */
#include "schedule.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "checked.h"

/* One round a GPU stages bytes in: an entry of a sparse usage. */
struct use {
    int64_t bytes;
    int32_t round;
};

/* A GPU's usage in one direction. Rounds before full_below are full (exactly the budget:
 * usage never exceeds it) and are dropped; from there on, in one of two forms:
 * - sparse (d == NULL): e[head..n), the rounds with bytes staged, ascending; a round not
 *   listed holds nothing. 16 bytes a busy round; a lookup is a search (find).
 * - dense: d[r - base] for rounds base..base + len (base <= full_below), nothing past it.
 *   8 bytes a round, busy or not; a lookup is an index. Beside it the least usage of each
 *   block of BLOCK rounds (bmin[j], block j being rounds (base / BLOCK + j) * BLOCK ...,
 *   those of d only), so first fit skips a block in which nothing has room: a tiny model
 *   onto 8,192 GPUs with 1 MB of staging has 32,553 rounds, most nearly full at its
 *   sources, and scanning them one by one took 76% of its 57 s (issue 25).
 * A list turns dense once it lists half the rounds it spans (dense is then no larger), and
 * back when an array would span more than 4 rounds per busy round: a busy GPU (every
 * source of Kimi K3) is looked up as fast as an array allows, and an idle one's memory is
 * its few rounds. The factors differ so that no GPU switches back and forth each round. */
struct usage {
    struct use *e;
    size_t head, n, cap;
    size_t at; /* sparse: the last lookup's answer, where the next one starts */
    int64_t *d;
    size_t len, dcap;
    int64_t *bmin; /* dense: the least of d over each block */
    size_t bcap;
    size_t busy;  /* dense: the rounds of d with bytes */
    int32_t base; /* dense: the round of d[0] */
    int32_t last; /* sparse: e[n - 1].round, kept here: checking it costs no miss */
    int32_t full_below;
    /* The last first-fit answer: no round before fit_round had room for fit_need bytes.
     * Usage only grows, so that stays true, and holds for any larger need too: placing
     * runs of one size scans each round once instead of from the hint every time. */
    int64_t fit_need;
    int32_t fit_round;
};

/* A list this short stays sparse, whatever it spans. */
enum { DENSE_MIN = 16 };
/* Rounds per block of a dense usage's minimums: 1/64 more memory, and a scan of R full
 * rounds is R / 64 block checks and at most 2 * 64 round checks. */
enum { BLOCK = 64 };

/* Rounds of one kind, numbered on their own until rf_schedule interleaves the kinds. A
 * plain round stages whole messages (at most the budget per GPU and direction); a
 * pipelined round, which carries the boxes that relay, is sent in chunks, so it stages one
 * chunk per item in flight: each item counts min(bytes, chunk) (a run's sends share one
 * packed copy), and a round may carry far more than the budget in bytes. */
struct lane {
    bool pipelined;
    struct usage *send, *recv; /* per GPU */
    int32_t n_rounds;
    int32_t *send_hint, *recv_hint; /* first round where the GPU may still have room */
};

struct sched {
    struct rf_plan *plan;
    struct rf_transfer *out; /* the scheduled runs: the plan's, split to fit the budget */
    size_t n_out, cap_out;
    struct rf_error *err;
    int64_t budget, chunk;
    int32_t streams;
    size_t n_gpus;
    struct lane lanes[2]; /* plain, pipelined */
    struct lane *ln;      /* the one being filled */
};

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

/* The block of dense u's index k, and the index where it starts (clamped to 0). */
static size_t block_of(const struct usage *u, size_t k)
{
    return (size_t)(u->base + (int64_t)k) / BLOCK - (size_t)u->base / BLOCK;
}
static size_t block_start(const struct usage *u, size_t j)
{
    int64_t first = ((int64_t)u->base / BLOCK + (int64_t)j) * BLOCK - u->base;
    return first > 0 ? (size_t)first : 0;
}

/* bmin[j] recomputed from d. */
static void block_min(struct usage *u, size_t j)
{
    size_t k = block_start(u, j), end = block_start(u, j + 1);
    if (end > u->len)
        end = u->len;
    int64_t m = INT64_MAX;
    for (; k < end; k++)
        if (u->d[k] < m)
            m = u->d[k];
    u->bmin[j] = m;
}

/* Every block's minimum, from d (after d was made, grown or moved down). */
static int blocks_from(struct sched *s, struct usage *u, size_t from_block)
{
    size_t n = u->len ? block_of(u, u->len - 1) + 1 : 0;
    int rc = RF_GROW(u->bmin, u->bcap, n + 1, s->err);
    if (rc < 0)
        return rc;
    for (size_t j = from_block; j < n; j++)
        block_min(u, j);
    return 0;
}

/* The first listed entry of sparse u at round r or after (u->n when none). A GPU's lookups
 * stay near each other (Kimi K3, all lists sparse: two in three at the last answer or the
 * entry after it, the rest 8 entries away on average), so the search walks a few entries
 * from the last answer, then gallops, doubling its step, and bisects the bracket found. */
static size_t find(struct usage *u, int32_t r)
{
    size_t lo = u->head, hi = u->n, c = u->at;
    if (lo == hi || u->last < r) /* past the last listed round */
        return u->at = hi;
    if (c < lo || c >= hi)
        c = lo;
    if (u->e[c].round < r) {
        /* After c, and at hi - 1 at the latest: a short walk (its branch is predicted,
         * unlike a bisection's), then a gallop forward. */
        for (size_t end = c + 16 < hi ? c + 16 : hi; ++c < end;)
            if (u->e[c].round >= r)
                return u->at = c;
        size_t step = 1;
        lo = c;
        while (lo + step < hi && u->e[lo + step - 1].round < r) {
            lo += step;
            step *= 2;
        }
        if (lo + step < hi)
            hi = lo + step;
    } else {
        /* At c or before it: a short walk back, then a gallop. */
        for (size_t end = c > lo + 16 ? c - 16 : lo; c > end && u->e[c - 1].round >= r;)
            c--;
        if (c == lo || u->e[c - 1].round < r)
            return u->at = c;
        size_t step = 1;
        hi = c;
        while (hi >= lo + step && u->e[hi - step].round >= r) {
            hi -= step;
            step *= 2;
        }
        if (hi >= lo + step)
            lo = hi - step + 1;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->e[mid].round < r)
            lo = mid + 1;
        else
            hi = mid;
    }
    return u->at = lo;
}

/* Bytes a run stages at its source: one copy per destination, capped at the budget (a
 * larger send travels in pieces), so a product past int64 is simply the budget. */
static int64_t send_bytes(const struct sched *s, const struct rf_transfer *t)
{
    int64_t all;
    if (s->ln->pipelined)
        return min64(t->bytes, s->chunk);
    return rf_mul_overflow(t->bytes, t->dst_count, &all) ? s->budget : min64(all, s->budget);
}

/* Bytes a run stages at each destination. */
static int64_t recv_bytes(const struct sched *s, const struct rf_transfer *t)
{
    return min64(t->bytes, s->ln->pipelined ? s->chunk : s->budget);
}

/* The sparse usage u as an array from full_below to its last round. */
static int to_dense(struct sched *s, struct usage *u)
{
    size_t span = (size_t)(u->last - u->full_below) + 1;
    int rc = RF_GROW(u->d, u->dcap, span, s->err);
    if (rc < 0)
        return rc;
    memset(u->d, 0, span * sizeof(*u->d));
    u->base = u->full_below;
    for (size_t i = u->head; i < u->n; i++)
        u->d[u->e[i].round - u->base] = u->e[i].bytes;
    u->len = span;
    u->busy = u->n - u->head;
    free(u->e);
    u->e = NULL;
    u->head = u->n = u->cap = u->at = 0;
    return blocks_from(s, u, 0);
}

/* The dense usage u as the list of its busy rounds. */
static int to_sparse(struct sched *s, struct usage *u)
{
    int rc = RF_GROW(u->e, u->cap, u->busy + 1, s->err);
    if (rc < 0)
        return rc;
    u->head = u->n = u->at = 0;
    for (size_t k = 0; k < u->len; k++)
        if (u->d[k] > 0)
            u->e[u->n++] = (struct use){.bytes = u->d[k], .round = u->base + (int32_t)k};
    u->last = u->n > 0 ? u->e[u->n - 1].round : -1;
    free(u->d);
    u->d = NULL;
    free(u->bmin);
    u->bmin = NULL;
    u->len = u->dcap = u->busy = u->bcap = 0;
    return 0;
}

/* Adds bytes to round r (r >= full_below: a round before it has no room) of u. */
static int add_use(struct sched *s, struct usage *u, int32_t r, int64_t bytes)
{
    int rc;
    /* Nothing staged changes no round (and a zero-byte run may sit in a full one). */
    if (bytes == 0)
        return 0;
    if (u->d) {
        size_t k = (size_t)(r - u->base);
        if (k >= u->len && k + 1 > 4 * (u->busy + 1)) {
            if ((rc = to_sparse(s, u)) < 0)
                return rc;
        } else {
            if (k >= u->len) {
                if ((rc = RF_GROW(u->d, u->dcap, k + 1, s->err)) < 0)
                    return rc;
                memset(u->d + u->len, 0, (k + 1 - u->len) * sizeof(*u->d));
                size_t from = u->len ? block_of(u, u->len - 1) : 0;
                u->len = k + 1;
                if ((rc = blocks_from(s, u, from)) < 0)
                    return rc;
            }
            u->busy += u->d[k] == 0;
            size_t j = block_of(u, k);
            bool least = u->d[k] == u->bmin[j];
            u->d[k] += bytes;
            if (least)
                block_min(u, j);
            return 0;
        }
    }
    size_t i = find(u, r);
    if (i < u->n && u->e[i].round == r) {
        u->e[i].bytes += bytes;
        return 0;
    }
    if (u->head > 0 && u->head * 2 >= u->n) {
        /* The dropped entries are half the list: move the rest down (each entry moved
         * once on average). */
        memmove(u->e, u->e + u->head, (u->n - u->head) * sizeof(*u->e));
        u->n -= u->head;
        i -= u->head;
        u->head = 0;
    }
    if ((rc = RF_GROW(u->e, u->cap, u->n + 1, s->err)) < 0)
        return rc;
    memmove(u->e + i + 1, u->e + i, (u->n - i) * sizeof(*u->e));
    u->e[i] = (struct use){.bytes = bytes, .round = r};
    u->n++;
    u->last = u->e[u->n - 1].round;
    size_t listed = u->n - u->head;
    if (listed >= DENSE_MIN && 2 * listed >= (size_t)(u->last - u->full_below) + 1)
        return to_dense(s, u);
    return 0;
}

static void ensure_round(struct sched *s, int32_t r)
{
    if (r >= s->ln->n_rounds)
        s->ln->n_rounds = r + 1;
}

/* The first round from r on where u has room for need bytes (need <= budget: rounds past
 * the GPU's last use are empty). */
static int32_t next_fit(const struct sched *s, struct usage *u, int32_t r, int64_t need)
{
    /* Rounds before r are known too small for need only when they lie before fit_round
     * and need is at least fit_need; then the answer can be remembered. */
    bool known = need >= u->fit_need && r <= u->fit_round;
    if (known)
        r = u->fit_round;
    if (r < u->full_below && need > 0)
        r = u->full_below;
    if (u->d) {
        /* A zero need may stand before base: it fits anywhere. A block whose least usage
         * leaves no room is passed whole, from its first round. */
        size_t k = r >= u->base ? (size_t)(r - u->base) : u->len;
        while (k < u->len && need > s->budget - u->d[k]) {
            k++;
            size_t j;
            while (k < u->len && k == block_start(u, j = block_of(u, k)) &&
                   need > s->budget - u->bmin[j]) {
                k = block_start(u, j + 1);
                if (k > u->len)
                    k = u->len;
            }
        }
        if (r >= u->base)
            r = u->base + (int32_t)k;
    } else {
        /* The listed rounds from r on, in order: a round not listed holds nothing. */
        for (size_t i = find(u, r);
             i < u->n && u->e[i].round == r && need > s->budget - u->e[i].bytes; i++)
            r++;
    }
    if (known) {
        u->fit_need = need;
        u->fit_round = r;
    }
    return r;
}

/* The first round from r on where t fits: every GPU's next round with room, taken until
 * they agree. Each GPU's rounds are scanned forward once, in its own array, rather than
 * every destination being checked again at every round tried. */
static int32_t transfer_round(struct sched *s, int32_t r, const struct rf_transfer *t)
{
    int64_t send = send_bytes(s, t), need = recv_bytes(s, t);
    for (;;) {
        int32_t at = next_fit(s, &s->ln->send[t->src], r, send);
        for (int32_t i = 0; i < t->dst_count; i++) {
            int32_t d = t->dst + i * t->dst_stride;
            at = next_fit(s, &s->ln->recv[d], at, need);
            if (t->chain && i + 1 < t->dst_count) /* a member forwards it */
                at = next_fit(s, &s->ln->send[d], at, send);
        }
        if (at == r)
            return r;
        r = at;
    }
}

/* Moves the hint past the GPU's full rounds (a round not held holds nothing, so the hint
 * stops there) and drops them: every round before the hint is full. */
static void advance_hint(struct sched *s, int32_t *hint, struct usage *u)
{
    if (u->d) {
        while (*hint < s->ln->n_rounds && (size_t)(*hint - u->base) < u->len &&
               u->d[*hint - u->base] >= s->budget)
            (*hint)++;
        if (*hint > u->full_below)
            u->full_below = *hint;
        /* The full rounds are half the array: move the rest down. */
        size_t drop = (size_t)(u->full_below - u->base);
        if (drop > u->len)
            drop = u->len;
        if (drop > 0 && 2 * drop >= u->len) {
            memmove(u->d, u->d + drop, (u->len - drop) * sizeof(*u->d));
            u->len -= drop;
            u->busy -= drop;
            u->base = u->full_below;
            /* Fewer blocks than before: bmin is not grown, so this cannot fail. */
            (void)blocks_from(s, u, 0);
        }
        return;
    }
    /* The entries before the hint left the list, and none is added before it (a round
     * before the hint has no room): the list starts at the hint or after. */
    size_t i = u->head;
    while (*hint < s->ln->n_rounds && i < u->n && u->e[i].round == *hint &&
           u->e[i].bytes >= s->budget) {
        (*hint)++;
        i++;
    }
    while (u->head < u->n && u->e[u->head].round < *hint)
        u->head++;
    if (*hint > u->full_below)
        u->full_below = *hint;
}

static int place_transfer(struct sched *s, struct rf_transfer *t)
{
    int32_t r = 0;
    int rc;
    /* A relay may share the round of what it forwards (pipelined, hop + 1). */
    if (t->after >= 0)
        r = s->out[t->after].round;
    t->hop = 0;
    if (t->src == t->dst && t->dst_count == 1) {
        /* A local copy moves nothing through staging; copying what is still arriving in
         * this round would need the chunk-wise replay of a relay, so it waits a round. */
        t->round = t->after >= 0 ? r + 1 : r;
        ensure_round(s, t->round);
        return 0;
    }
    if (s->ln->send_hint[t->src] > r)
        r = s->ln->send_hint[t->src];
    for (int32_t i = 0; i < t->dst_count; i++) {
        int32_t d = t->dst + i * t->dst_stride;
        if (s->ln->recv_hint[d] > r)
            r = s->ln->recv_hint[d];
        if (t->chain && i + 1 < t->dst_count && s->ln->send_hint[d] > r)
            r = s->ln->send_hint[d];
    }
    r = transfer_round(s, r, t);
    /* A relay shares its feed's round (pipelined) or waits past the stream window. */
    int32_t feed = t->after >= 0 ? s->out[t->after].round : -1;
    if (feed >= 0 && r != feed && r < feed + s->streams)
        r = transfer_round(s, feed + s->streams, t);
    ensure_round(s, r);
    if ((rc = add_use(s, &s->ln->send[t->src], r, send_bytes(s, t))) < 0)
        return rc;
    advance_hint(s, &s->ln->send_hint[t->src], &s->ln->send[t->src]);
    for (int32_t i = 0; i < t->dst_count; i++) {
        int32_t d = t->dst + i * t->dst_stride;
        if ((rc = add_use(s, &s->ln->recv[d], r, recv_bytes(s, t))) < 0)
            return rc;
        advance_hint(s, &s->ln->recv_hint[d], &s->ln->recv[d]);
        if (t->chain && i + 1 < t->dst_count) {
            if ((rc = add_use(s, &s->ln->send[d], r, send_bytes(s, t))) < 0)
                return rc;
            advance_hint(s, &s->ln->send_hint[d], &s->ln->send[d]);
        }
    }
    t->round = r;
    /* A local copy is done before the round's sends (exec/replay.c): forwarding it is not
     * a pipelined hop. */
    const struct rf_transfer *a = t->after >= 0 ? &s->out[t->after] : NULL;
    if (a && a->round == r && !(a->src == a->dst && a->dst_count == 1))
        t->hop = a->hop + 1 + (a->chain && a->dst_stride ? (t->src - a->dst) / a->dst_stride : 0);
    return 0;
}

/* A broadcast pipelines through its members: each receives the tensor and passes it on.
 * Its round is the first from r on where the root can send and every member receive and
 * send, found as transfer_round finds a run's: each member's next round with room, taken
 * until they agree. Checking every member at every round tried instead cost Kimi K3 onto
 * 16,384 GPUs 83% of its broadcast's 23 s (2,967 broadcasts, each to every inference GPU). */
static int32_t collective_round(struct sched *s, int32_t r, const struct rf_collective *c)
{
    int64_t need = min64(c->bytes, s->budget);
    for (;;) {
        int32_t at = next_fit(s, &s->ln->send[c->root], r, need);
        for (int32_t i = 0; i < c->gpu_count; i++) {
            int32_t g = c->first_gpu + i * c->gpu_stride;
            if (g != c->root) {
                at = next_fit(s, &s->ln->recv[g], at, need);
                at = next_fit(s, &s->ln->send[g], at, need);
            }
        }
        if (at == r)
            return r;
        r = at;
    }
}

/* Whether every broadcast goes to one set of GPUs, none of them a root, that nothing else
 * in the plain lane stages anything at: then each member's usage is every other's, in
 * both directions, and one of them stands for all. A uniform broadcast of Kimi K3 onto
 * 65,536 GPUs is 2,967 broadcasts to every inference GPU: checked member by member, they
 * were 82% of its time. */
static bool members_alike(const struct sched *s, const struct rf_plan *plan)
{
    if (plan->n_collectives == 0)
        return false;
    const struct rf_collective *c0 = &plan->collectives[0];
    for (size_t i = 0; i < plan->n_collectives; i++) {
        const struct rf_collective *c = &plan->collectives[i];
        if (c->first_gpu != c0->first_gpu || c->gpu_count != c0->gpu_count ||
            c->gpu_stride != c0->gpu_stride)
            return false;
        int64_t k = c->gpu_stride ? ((int64_t)c->root - c->first_gpu) / c->gpu_stride : 0;
        if (k >= 0 && k < c->gpu_count && c->first_gpu + k * c->gpu_stride == c->root)
            return false;
    }
    for (int32_t i = 0; i < c0->gpu_count; i++) {
        int32_t g = c0->first_gpu + i * c0->gpu_stride;
        const struct usage *u[2] = {&s->ln->recv[g], &s->ln->send[g]};
        for (int k = 0; k < 2; k++)
            if (u[k]->d ? u[k]->busy > 0 : u[k]->n > u[k]->head)
                return false;
    }
    return true;
}

/* A broadcast to members that are alike (members_alike): its first member's receive usage
 * stands for every member's receives and sends. */
static int place_collective_alike(struct sched *s, struct rf_collective *c, int32_t r)
{
    struct lane *ln = s->ln;
    struct usage *root = &ln->send[c->root], *m = &ln->recv[c->first_gpu];
    int64_t need = min64(c->bytes, s->budget);
    int rc;
    for (;;) {
        int32_t at = next_fit(s, m, next_fit(s, root, r, need), need);
        if (at == r)
            break;
        r = at;
    }
    ensure_round(s, r);
    if ((rc = add_use(s, root, r, need)) < 0 || (rc = add_use(s, m, r, need)) < 0)
        return rc;
    advance_hint(s, &ln->send_hint[c->root], root);
    advance_hint(s, &ln->recv_hint[c->first_gpu], m);
    c->round = r;
    return 0;
}

static int place_collective(struct sched *s, struct rf_collective *c, int32_t min_round)
{
    struct lane *ln = s->ln;
    int32_t r = collective_round(s, min_round, c);
    int rc;
    ensure_round(s, r);
    int64_t need = min64(c->bytes, s->budget);
    if ((rc = add_use(s, &ln->send[c->root], r, need)) < 0)
        return rc;
    advance_hint(s, &ln->send_hint[c->root], &ln->send[c->root]);
    for (int32_t i = 0; i < c->gpu_count; i++) {
        int32_t g = c->first_gpu + i * c->gpu_stride;
        if (g == c->root)
            continue;
        if ((rc = add_use(s, &ln->recv[g], r, need)) < 0 ||
            (rc = add_use(s, &ln->send[g], r, need)) < 0)
            return rc;
        advance_hint(s, &ln->recv_hint[g], &ln->recv[g]);
        advance_hint(s, &ln->send_hint[g], &ln->send[g]);
    }
    c->round = r;
    return 0;
}

/* The order transfers are placed in. Plans list a tensor's boxes stage by stage and shard by
 * shard, so first fit in plan order fills a round with the boxes of a few sources (one
 * pipeline stage's expert ranks) while the others idle: DeepSeek-V3 from 64 GPUs in four
 * stages sent from 16 of them per round, 4x the time their NICs need. Instead the boxes
 * (each box's transfers, contiguous in the plan: its feeds, relays and fan-outs, every
 * `after` inside it) are taken in the order of their source's progress, the bytes it
 * sent before this box, then by source: every round draws on every source in proportion.
 * order[] receives plan indices; a box keeps its transfers' order. */
struct seg {
    int64_t progress;
    int32_t src;
    size_t first, n;
};

static int cmp_seg(const void *a, const void *b)
{
    const struct seg *x = a, *y = b;
    if (x->progress != y->progress)
        return x->progress < y->progress ? -1 : 1;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    return (x->first > y->first) - (x->first < y->first);
}

static int interleave(const struct rf_plan *plan, size_t n_gpus, uint32_t *order,
                      struct rf_error *err)
{
    size_t n = plan->n_transfers, ns = 0;
    struct seg *seg = malloc((n + 1) * sizeof(*seg));
    int64_t *sent = calloc(n_gpus + 1, sizeof(int64_t));
    if (!seg || !sent) {
        free(seg);
        free(sent);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && plan->transfers[j].box == plan->transfers[i].box)
            j++;
        const struct rf_transfer *t = &plan->transfers[i];
        int64_t bytes;
        seg[ns++] = (struct seg){sent[t->src], t->src, i, j - i};
        /* A source's progress saturates rather than wraps (the plan's own totals are
         * checked: this only orders). */
        if (t->src != t->dst || t->dst_count > 1) {
            if (rf_mul_overflow(t->bytes, t->dst_count, &bytes) ||
                rf_add_overflow(sent[t->src], bytes, &sent[t->src]))
                sent[t->src] = INT64_MAX;
        }
        i = j;
    }
    qsort(seg, ns, sizeof(*seg), cmp_seg);
    size_t k = 0;
    for (size_t i = 0; i < ns; i++)
        for (size_t j = 0; j < seg[i].n; j++)
            order[k++] = (uint32_t)(seg[i].first + j);
    free(seg);
    free(sent);
    return 0;
}

static bool gpus_ok(int64_t src, int64_t lo, int64_t hi, int64_t count)
{
    return src >= 0 && src < RF_GPUS_MAX && count >= 1 && count <= RF_GPUS_MAX && lo >= 0 &&
           lo < RF_GPUS_MAX && hi >= 0 && hi < RF_GPUS_MAX;
}

int64_t rf_schedule_delivery_bytes(void)
{
    /* s.out's piece, first_new, n_new and order, relayed and lane_of, and the receiver's
     * usage entry of its round (Qwen3-8B onto 8,192 GPUs with 1 MB staging, heaptrack:
     * pieces 201 MB, usage entries 168 MB, 5.35 M deliveries). The arrays grow by doubling,
     * but capacity never written is not resident (glibc maps large blocks), so the count,
     * not the capacity, is what the process holds. */
    return (int64_t)sizeof(struct rf_transfer) + 3 * (int64_t)sizeof(uint32_t) +
           (int64_t)sizeof(bool) + (int64_t)sizeof(uint8_t) + (int64_t)sizeof(struct use);
}

int rf_schedule(struct rf_plan *plan, const struct rf_schedule_opts *opts, struct rf_error *err)
{
    struct sched s = {.plan = plan, .err = err, .budget = opts->staging_bytes};
    int64_t chunk = opts->chunk_bytes ? opts->chunk_bytes : RF_CHUNK_DEFAULT_BYTES;
    s.ln = &s.lanes[0];
    int32_t *gather_round = NULL;
    /* Per plan run, 32 bits (runs and pieces are at most 2^31, checked): the piece index
     * its first piece got, its pieces (UINT32_MAX: not placed yet), its place in order. */
    uint32_t *first_new = NULL, *n_new = NULL, *order = NULL;
    size_t cap_lane = 0;
    bool *relayed = NULL;
    uint8_t *lane_of = NULL; /* per scheduled run: 1 in a pipelined round */
    int32_t *map[2] = {NULL, NULL};
    int64_t total_rounds;
    int rc;

    if (s.budget <= 0)
        return rf_error_set(err, RF_EINVAL, "staging bytes must be positive");
    if (chunk <= 0)
        return rf_error_set(err, RF_EINVAL, "chunk bytes must be positive");
    if (chunk > s.budget)
        chunk = s.budget;
    s.chunk = chunk;
    s.streams = opts->streams > 0 ? opts->streams : 1;
    /* The per-GPU arrays are indexed by every GPU a run or broadcast names: each must lie
     * in 0..RF_GPUS_MAX - 1 (int64 products of int32 fields cannot overflow). */
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        int64_t hi = rf_gpu_run_last(t->dst, t->dst_count, t->dst_stride);
        if (!gpus_ok(t->src, t->dst, hi, t->dst_count) || t->bytes < 0 || t->box < 0 ||
            (size_t)t->box >= plan->n_boxes || plan->boxes[t->box].tensor < 0 ||
            (size_t)plan->boxes[t->box].tensor >= plan->n_tensors)
            return rf_error_set(err, RF_EINVAL,
                                "transfer %zu: GPUs, bytes or box outside the plan's ranges", i);
        /* A chain's members are distinct and none is its source. */
        if (t->chain && (t->dst_count < 2 || t->dst_stride == 0 ||
                         rf_gpu_run_has(t->dst, t->dst_count, t->dst_stride, t->src)))
            return rf_error_set(err, RF_EINVAL,
                                "transfer %zu: a chain needs 2 or more distinct members, none "
                                "its source",
                                i);
    }
    for (size_t i = 0; i < plan->n_collectives; i++) {
        const struct rf_collective *c = &plan->collectives[i];
        int64_t hi = rf_gpu_run_last(c->first_gpu, c->gpu_count, c->gpu_stride);
        if (!gpus_ok(c->root, c->first_gpu, hi, c->gpu_count) || c->bytes < 0 || c->tensor < 0 ||
            (size_t)c->tensor >= plan->n_tensors)
            return rf_error_set(err, RF_EINVAL,
                                "collective %zu: GPUs, bytes or tensor outside the plan's ranges",
                                i);
    }
    s.n_gpus = (size_t)rf_plan_gpu_extent(plan);
    for (int k = 0; k < 2; k++) {
        struct lane *l = &s.lanes[k];
        l->pipelined = k == 1;
        l->send_hint = calloc(s.n_gpus + 1, sizeof(int32_t));
        l->recv_hint = calloc(s.n_gpus + 1, sizeof(int32_t));
        l->send = calloc(s.n_gpus + 1, sizeof(*l->send));
        l->recv = calloc(s.n_gpus + 1, sizeof(*l->recv));
        if (!l->send_hint || !l->recv_hint || !l->send || !l->recv) {
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
            goto out;
        }
    }
    gather_round = malloc((plan->n_tensors + 1) * sizeof(int32_t));
    relayed = calloc(plan->n_transfers + 1, sizeof(bool));
    if (!gather_round || !relayed) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < plan->n_tensors; i++)
        gather_round[i] = -1;

    /* A run whose bytes to all its destinations exceed the budget is split into runs of as
     * many destinations as fit (at least one), so no source stages more than the budget;
     * a dependency follows the piece that delivers to its source. */
    if (plan->n_transfers >= INT32_MAX) {
        rc = rf_error_set(err, RF_EINVAL, "the schedule exceeds 2^31 transfer runs");
        goto out;
    }
    first_new = malloc((plan->n_transfers + 1) * sizeof(uint32_t));
    n_new = malloc((plan->n_transfers + 1) * sizeof(uint32_t));
    order = malloc((plan->n_transfers + 1) * sizeof(uint32_t));
    if (!first_new || !n_new || !order) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        /* A dependency lies earlier, and on the same box (interleave keeps a box whole). */
        if (t->after >= (int32_t)i || (t->after >= 0 && plan->transfers[t->after].box != t->box)) {
            rc = rf_error_set(err, RF_EINVAL,
                              "transfer %zu depends on a later one or on another box", i);
            goto out;
        }
        if (t->after >= 0)
            relayed[i] = relayed[t->after] = true;
        if (t->chain)
            relayed[i] = true;
    }
    if ((rc = interleave(plan, s.n_gpus, order, err)) < 0)
        goto out;
    for (size_t i = 0; i < plan->n_transfers; i++)
        n_new[i] = UINT32_MAX; /* not placed yet */
    /* Every run yields at least one piece: room for that many before the first. */
    if ((rc = RF_GROW(s.out, s.cap_out, plan->n_transfers, err)) < 0 ||
        (rc = RF_GROW(lane_of, cap_lane, plan->n_transfers, err)) < 0)
        goto out;
    for (size_t oi = 0; oi < plan->n_transfers; oi++) {
        size_t i = order[oi];
        const struct rf_transfer *t = &plan->transfers[i];
        if (t->after >= 0 && n_new[t->after] == UINT32_MAX) {
            rc = rf_error_set(err, RF_EINVAL,
                              "transfer %zu depends on transfer %d of its box, which the plan "
                              "lists apart from it",
                              i, (int)t->after);
            goto out;
        }
        /* Relaying boxes go to pipelined rounds, the others to plain ones. */
        s.ln = &s.lanes[relayed[i] ? 1 : 0];
        /* Destinations per piece: budget / bytes can exceed int32 (5 GiB of 2-byte boxes),
         * and a run never has more than dst_count. A pipelined run stages one chunk however
         * many it sends to, so it stays whole. */
        int64_t fit = t->bytes > 0 && t->bytes < s.budget ? s.budget / t->bytes : 1;
        int32_t per = fit < t->dst_count ? (int32_t)fit : t->dst_count;
        if (t->src == t->dst && t->dst_count == 1)
            per = 1;
        if (s.ln->pipelined)
            per = t->dst_count;
        int32_t after = -1;
        if (t->after >= 0) {
            for (uint32_t k = 0; k < n_new[t->after] && after < 0; k++) {
                const struct rf_transfer *a = &s.out[first_new[t->after] + k];
                if (t->src == a->dst || rf_gpu_run_has(a->dst, a->dst_count, a->dst_stride, t->src))
                    after = (int32_t)(first_new[t->after] + k);
            }
        }
        first_new[i] = (uint32_t)s.n_out;
        n_new[i] = 0;
        for (int32_t j = 0; j < t->dst_count; j += per) {
            /* Pieces are indexed by int32 (`after`). */
            if (s.n_out >= INT32_MAX) {
                rc = rf_error_set(err, RF_EINVAL, "the schedule exceeds 2^31 transfer runs");
                goto out;
            }
            if ((rc = RF_GROW(s.out, s.cap_out, s.n_out + 1, err)) < 0 ||
                (rc = RF_GROW(lane_of, cap_lane, s.n_out + 1, err)) < 0)
                goto out;
            lane_of[s.n_out] = s.ln->pipelined;
            struct rf_transfer *piece = &s.out[s.n_out];
            *piece = *t;
            piece->dst = t->dst + j * t->dst_stride;
            piece->dst_count = t->dst_count - j < per ? t->dst_count - j : per;
            piece->after = after;
            if ((rc = place_transfer(&s, piece)) < 0)
                goto out;
            if (piece->phase == RF_PHASE_GATHER) {
                int32_t tensor = plan->boxes[piece->box].tensor;
                if (piece->round > gather_round[tensor])
                    gather_round[tensor] = piece->round;
            }
            s.n_out++;
            n_new[i]++;
        }
    }
    free(plan->transfers);
    plan->transfers = s.out;
    plan->n_transfers = s.n_out;
    plan->cap_transfers = s.cap_out;
    s.out = NULL;
    s.ln = &s.lanes[0];
    bool alike = members_alike(&s, plan);
    for (size_t i = 0; i < plan->n_collectives; i++) {
        struct rf_collective *c = &plan->collectives[i];
        int32_t from = gather_round[c->tensor] + 1;
        if ((rc = alike ? place_collective_alike(&s, c, from) : place_collective(&s, c, from)) < 0)
            goto out;
    }
    /* The kinds interleaved: plain 0, pipelined 0, plain 1, ... Each kind's rounds keep
     * their order (dependencies stay within a kind: a box is all of one kind, and a
     * broadcast's gathers are plain). */
    int32_t n0 = s.lanes[0].n_rounds, n1 = s.lanes[1].n_rounds, at = 0;
    if (rf_add_overflow(n0, n1, &total_rounds) || total_rounds > INT32_MAX) {
        rc = rf_error_set(err, RF_EINVAL, "the schedule exceeds 2^31 rounds");
        goto out;
    }
    map[0] = malloc(((size_t)n0 + 1) * sizeof(int32_t));
    map[1] = malloc(((size_t)n1 + 1) * sizeof(int32_t));
    if (!map[0] || !map[1]) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (int32_t r = 0; r < n0 || r < n1; r++) {
        if (r < n0)
            map[0][r] = at++;
        if (r < n1)
            map[1][r] = at++;
    }
    for (size_t i = 0; i < plan->n_transfers; i++)
        plan->transfers[i].round = map[lane_of[i]][plan->transfers[i].round];
    for (size_t i = 0; i < plan->n_collectives; i++)
        plan->collectives[i].round = map[0][plan->collectives[i].round];
    plan->n_rounds = at;
    plan->staging_bytes = s.budget;
    plan->chunk_bytes = chunk;
    rc = 0;
out:
    for (int k = 0; k < 2; k++) {
        struct lane *l = &s.lanes[k];
        for (size_t g = 0; g < s.n_gpus + 1 && l->send && l->recv; g++) {
            free(l->send[g].e);
            free(l->send[g].d);
            free(l->send[g].bmin);
            free(l->recv[g].e);
            free(l->recv[g].d);
            free(l->recv[g].bmin);
        }
        free(l->send);
        free(l->recv);
        free(l->send_hint);
        free(l->recv_hint);
    }
    free(relayed);
    free(lane_of);
    free(map[0]);
    free(map[1]);
    free(gather_round);
    free(first_new);
    free(n_new);
    free(order);
    free(s.out);
    return rc;
}
