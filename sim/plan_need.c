/* The bound's input: what every refit of a plan's tensors must move whatever the strategy
 * (rf_plan_need), per GPU, per NVLink domain and per group of source domains. */
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

static bool holds(const int32_t *h, size_t n, int32_t gpu)
{
    return bsearch(&gpu, h, n, sizeof(int32_t), planner_cmp_i32) != NULL;
}

/* Sorted unique domains of a cell's holders, into out (capacity n). */
/* A need less what its holder already has, never below zero (a delta's held ceiling may
 * pass its shard's floor). */
static int64_t sub_held(int64_t need, int64_t held)
{
    return need > held ? need - held : 0;
}

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
    size_t cap_dd = 0, cap_sd = 0, cap_own = 0, cap_away = 0, n_rec = 0, cap_rec = 0, n_rdom = 0,
           cap_rdom = 0;
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
        enum rf_dtype wire = plan->wire_dtype[ti];
        int64_t elem = (int64_t)rf_dtype_size(wire);
        if ((rc = planner_collect_cells(&p, train, t, &p.src)) < 0 ||
            (rc = planner_collect_cells(&p, infer, t, &p.dst)) < 0 ||
            (rc = planner_build_grid(&p, t)) < 0)
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
        if ((rc = RF_GROW(cell_own, cap_own, p.src.n, err)) < 0 ||
            (rc = RF_GROW(cell_away, cap_away, p.src.n, err)) < 0)
            break;
        for (size_t si = 0; si < p.src.n; si++)
            cell_own[si] = cell_away[si] = 0;
        for (size_t di = 0; di < p.dst.n && rc == 0; di++) {
            const struct rf_box *b = &p.dst.box[di];
            const int32_t *dh = p.dst.holders + p.dst.hstart[di];
            size_t ndh = p.dst.hstart[di + 1] - p.dst.hstart[di];
            int64_t bytes = 0;
            /* A delta shard's bytes are the floor of its boxes' encodings, whatever the
             * boxes (rf_delta_floor_bytes), so the bound stays below the plan. */
            if (t->delta.enc != RF_DELTA_NONE)
                bytes = rf_delta_floor_bytes(&t->delta, rf_box_numel(b, t->ndim), (size_t)elem);
            else if (rf_dtype_4bit(wire))
                bytes = rf_dtype_bytes(wire, rf_box_numel(b, t->ndim));
            else if ((rc = planner_add_bytes(&p, (int32_t)ti, &bytes, rf_box_numel(b, t->ndim),
                                             elem, "a shard's bytes")) < 0)
                break;
            if ((rc = RF_GROW(dd, cap_dd, ndh, err)) < 0)
                break;
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
                int64_t inter = rf_dtype_bytes(wire, rf_box_numel(&piece, t->ndim)), held = inter;
                /* A delta piece: what must leave counts its floor, what is held its ceiling
                 * (floor + 1), so that both terms stay below the plan's bytes. */
                if (t->delta.enc != RF_DELTA_NONE) {
                    inter = rf_delta_floor_bytes(&t->delta, rf_box_numel(&piece, t->ndim),
                                                 (size_t)elem);
                    held = inter + 1;
                }
                const int32_t *sh = p.src.holders + p.src.hstart[si];
                size_t nsh = p.src.hstart[si + 1] - p.src.hstart[si];
                if ((rc = RF_GROW(sd, cap_sd, nsh, err)) < 0)
                    break;
                size_t ns = domains_of(sh, nsh, domain_gpus, sd);
                for (size_t i = 0; i < ndh; i++)
                    if ((size_t)dh[i] < n_gpus && holds(sh, nsh, dh[i]))
                        need->gpu_in[dh[i]] = sub_held(need->gpu_in[dh[i]], held);
                for (size_t i = 0, j = 0; i < nd; i++) {
                    while (j < ns && sd[j] < dd[i])
                        j++;
                    if (j < ns && sd[j] == dd[i] && (size_t)dd[i] < n_domains)
                        need->domain_in[dd[i]] = sub_held(need->domain_in[dd[i]], held);
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
            if ((rc = RF_GROW(rec, cap_rec, n_rec + 1, err)) < 0 ||
                (rc = RF_GROW(rdom, cap_rdom, n_rdom + nsh, err)) < 0)
                break;
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
    planner_release(&p);
    free(dd);
    free(sd);
    free(cell_own);
    free(cell_away);
    free(rec);
    free(rdom);
    return rc;
}
