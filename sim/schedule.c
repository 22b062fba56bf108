/* First-fit round assignment. Per round, per GPU send and receive usage is kept in flat
 * arrays; a per-GPU hint skips rounds where that GPU is already full, so placing a transfer
 * costs a few array reads in the common case. */
#include "schedule.h"

#include <stdlib.h>
#include <string.h>

struct round_use {
    int64_t *send, *recv; /* per GPU */
};

struct sched {
    struct rf_plan *plan;
    struct rf_transfer *out; /* the scheduled runs: the plan's, split to fit the budget */
    size_t n_out, cap_out;
    struct rf_error *err;
    int64_t budget;
    size_t n_gpus;
    struct round_use *rounds;
    int32_t n_rounds, cap_rounds;
    int32_t *send_hint, *recv_hint; /* first round where the GPU may still have room */
};

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

static int ensure_round(struct sched *s, int32_t r)
{
    while (r >= s->n_rounds) {
        if (s->n_rounds == s->cap_rounds) {
            int32_t cap = s->cap_rounds ? s->cap_rounds * 2 : 64;
            struct round_use *nr = realloc(s->rounds, (size_t)cap * sizeof(*nr));
            if (!nr)
                return rf_error_set(s->err, RF_ENOMEM, "out of memory");
            s->rounds = nr;
            s->cap_rounds = cap;
        }
        struct round_use *u = &s->rounds[s->n_rounds];
        u->send = calloc(s->n_gpus, sizeof(int64_t));
        u->recv = calloc(s->n_gpus, sizeof(int64_t));
        if (!u->send || !u->recv) {
            free(u->send);
            free(u->recv);
            return rf_error_set(s->err, RF_ENOMEM, "out of memory");
        }
        s->n_rounds++;
    }
    return 0;
}

static bool transfer_fits(const struct sched *s, int32_t r, const struct rf_transfer *t)
{
    const struct round_use *u = &s->rounds[r];
    if (u->send[t->src] + min64(t->bytes * t->dst_count, s->budget) > s->budget)
        return false;
    int64_t need = min64(t->bytes, s->budget);
    for (int32_t i = 0; i < t->dst_count; i++)
        if (u->recv[t->dst + i * t->dst_stride] + need > s->budget)
            return false;
    return true;
}

static void advance_hint(struct sched *s, int32_t *hint, bool send, int32_t gpu)
{
    while (*hint < s->n_rounds) {
        const struct round_use *u = &s->rounds[*hint];
        if ((send ? u->send[gpu] : u->recv[gpu]) < s->budget)
            break;
        (*hint)++;
    }
}

static int place_transfer(struct sched *s, struct rf_transfer *t)
{
    int32_t r = 0;
    int rc;
    if (t->after >= 0)
        r = s->out[t->after].round + 1;
    if (t->src == t->dst && t->dst_count == 1) {
        /* A local copy moves nothing through staging. */
        t->round = r;
        return ensure_round(s, r);
    }
    if (s->send_hint[t->src] > r)
        r = s->send_hint[t->src];
    for (int32_t i = 0; i < t->dst_count; i++) {
        int32_t d = t->dst + i * t->dst_stride;
        if (s->recv_hint[d] > r)
            r = s->recv_hint[d];
    }
    for (;; r++) {
        if ((rc = ensure_round(s, r)) < 0)
            return rc;
        if (transfer_fits(s, r, t))
            break;
    }
    struct round_use *u = &s->rounds[r];
    u->send[t->src] += min64(t->bytes * t->dst_count, s->budget);
    advance_hint(s, &s->send_hint[t->src], true, t->src);
    for (int32_t i = 0; i < t->dst_count; i++) {
        int32_t d = t->dst + i * t->dst_stride;
        u->recv[d] += min64(t->bytes, s->budget);
        advance_hint(s, &s->recv_hint[d], false, d);
    }
    t->round = r;
    return 0;
}

/* A broadcast pipelines through its members: each receives the tensor and passes it on. */
static bool collective_fits(const struct sched *s, int32_t r, const struct rf_collective *c)
{
    const struct round_use *u = &s->rounds[r];
    int64_t need = min64(c->bytes, s->budget);
    if (u->send[c->root] + need > s->budget)
        return false;
    for (int32_t i = 0; i < c->gpu_count; i++) {
        int32_t g = c->first_gpu + i * c->gpu_stride;
        if (g != c->root && (u->recv[g] + need > s->budget || u->send[g] + need > s->budget))
            return false;
    }
    return true;
}

static int place_collective(struct sched *s, struct rf_collective *c, int32_t min_round)
{
    int32_t r = min_round;
    int rc;
    for (;; r++) {
        if ((rc = ensure_round(s, r)) < 0)
            return rc;
        if (collective_fits(s, r, c))
            break;
    }
    struct round_use *u = &s->rounds[r];
    int64_t need = min64(c->bytes, s->budget);
    u->send[c->root] += need;
    for (int32_t i = 0; i < c->gpu_count; i++) {
        int32_t g = c->first_gpu + i * c->gpu_stride;
        if (g != c->root) {
            u->recv[g] += need;
            u->send[g] += need;
        }
    }
    c->round = r;
    return 0;
}

int rf_schedule(struct rf_plan *plan, const struct rf_schedule_opts *opts, struct rf_error *err)
{
    struct sched s = {.plan = plan, .err = err, .budget = opts->staging_bytes};
    int32_t *gather_round = NULL;
    size_t *first_new = NULL, *n_new = NULL;
    int rc;

    if (s.budget <= 0)
        return rf_error_set(err, RF_EINVAL, "staging bytes must be positive");
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        size_t hi = (size_t)(t->dst + (t->dst_count - 1) * t->dst_stride);
        if ((size_t)t->src + 1 > s.n_gpus)
            s.n_gpus = (size_t)t->src + 1;
        if (hi + 1 > s.n_gpus)
            s.n_gpus = hi + 1;
    }
    for (size_t i = 0; i < plan->n_collectives; i++) {
        const struct rf_collective *c = &plan->collectives[i];
        size_t hi = (size_t)(c->first_gpu + (c->gpu_count - 1) * c->gpu_stride);
        if ((size_t)c->root + 1 > s.n_gpus)
            s.n_gpus = (size_t)c->root + 1;
        if (hi + 1 > s.n_gpus)
            s.n_gpus = hi + 1;
    }
    s.send_hint = calloc(s.n_gpus + 1, sizeof(int32_t));
    s.recv_hint = calloc(s.n_gpus + 1, sizeof(int32_t));
    gather_round = malloc((plan->n_tensors + 1) * sizeof(int32_t));
    if (!s.send_hint || !s.recv_hint || !gather_round) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < plan->n_tensors; i++)
        gather_round[i] = -1;

    /* A run whose bytes to all its destinations exceed the budget is split into runs of as
     * many destinations as fit (at least one), so no source stages more than the budget;
     * a dependency follows the piece that delivers to its source. */
    first_new = malloc((plan->n_transfers + 1) * sizeof(size_t));
    n_new = malloc((plan->n_transfers + 1) * sizeof(size_t));
    if (!first_new || !n_new) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        if (t->after >= (int32_t)i) {
            rc = rf_error_set(err, RF_EINVAL, "transfer %zu depends on a later one", i);
            goto out;
        }
        int32_t per = t->bytes > 0 && t->bytes < s.budget ? (int32_t)(s.budget / t->bytes) : 1;
        if (t->src == t->dst && t->dst_count == 1)
            per = 1;
        int32_t after = -1;
        if (t->after >= 0) {
            for (size_t k = 0; k < n_new[t->after] && after < 0; k++) {
                const struct rf_transfer *a = &s.out[first_new[t->after] + k];
                int64_t off = (int64_t)t->src - a->dst;
                if (off == 0 || (a->dst_stride != 0 && off % a->dst_stride == 0 &&
                                 off / a->dst_stride >= 0 && off / a->dst_stride < a->dst_count))
                    after = (int32_t)(first_new[t->after] + k);
            }
        }
        first_new[i] = s.n_out;
        n_new[i] = 0;
        for (int32_t j = 0; j < t->dst_count; j += per) {
            if (s.n_out == s.cap_out) {
                size_t cap = s.cap_out ? s.cap_out * 2 : plan->n_transfers + 64;
                struct rf_transfer *nt = realloc(s.out, cap * sizeof(*nt));
                if (!nt) {
                    rc = rf_error_set(err, RF_ENOMEM, "out of memory");
                    goto out;
                }
                s.out = nt;
                s.cap_out = cap;
            }
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
    for (size_t i = 0; i < plan->n_collectives; i++) {
        struct rf_collective *c = &plan->collectives[i];
        if ((rc = place_collective(&s, c, gather_round[c->tensor] + 1)) < 0)
            goto out;
    }
    plan->n_rounds = s.n_rounds;
    plan->staging_bytes = s.budget;
    rc = 0;
out:
    for (int32_t r = 0; r < s.n_rounds; r++) {
        free(s.rounds[r].send);
        free(s.rounds[r].recv);
    }
    free(s.rounds);
    free(s.send_hint);
    free(s.recv_hint);
    free(gather_round);
    free(first_new);
    free(n_new);
    free(s.out);
    return rc;
}
