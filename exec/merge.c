/* A merged LoRA update's replay: after the rounds, each engine GPU folds the adapters it
 * received into its shard of the weight, W + B A (a column W's rows from B's rows and all
 * of A, a row W's columns from all of B and A's columns: the shards vLLM gives it). The
 * arithmetic is the elements' bits as unsigned integers modulo 2^(8 x elem), like the
 * pattern's emulated FP8: not float arithmetic, but every product and sum depends on the
 * right element of the right shard, so a shard merged from a misplaced A or B fails the
 * check, which recomputes W + B A from the pattern itself. The base W is the pattern of a
 * tensor id past the plan's, the merge writes a buffer of its own (the engine merges in
 * place), so every iteration merges the same. On the host, through the backend's
 * downloads and uploads, as exec/delta.c's codec. */
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "replay_int.h"

/* The pattern's tensor id of the base weight that pair (A at a) folds into. */
static int32_t base_id(const struct rf_part *p, size_t a)
{
    return (int32_t)(p->n_tensors + a);
}

/* The weight W of the pair whose A is tensor a, as the layout algebra sees it. */
static void weight_of(const struct rf_part *p, size_t a, struct rf_tensor *w)
{
    struct rf_tensor ta, tb;
    rf_part_tensor_view(&p->tensors[a], &ta);
    rf_part_tensor_view(&p->tensors[a + 1], &tb);
    rf_lora_weight(&ta, &tb, w);
}

/* Whether box `in` spans box `of` along dim d. */
static bool covers(const struct rf_box *in, const struct rf_box *of, int d)
{
    return in->off[d] <= of->off[d] && in->off[d] + in->len[d] >= of->off[d] + of->len[d];
}

/* The row-major index in box b (ndim 2 or 3) of the element at expert e (3 dims), row i and
 * column j, all global coordinates. */
static int64_t at_in(const struct rf_box *b, int ndim, int64_t e, int64_t i, int64_t j)
{
    int R = ndim - 2, C = ndim - 1;
    int64_t x = ndim == 3 ? e - b->off[0] : 0;
    return (x * b->len[R] + (i - b->off[R])) * b->len[C] + (j - b->off[C]);
}

static bool merged_pair(const struct rf_part *p, size_t a)
{
    return a + 1 < p->n_tensors && p->tensors[a].lora == RF_LORA_A && p->tensors[a].lora_merge &&
           p->tensors[a + 1].lora == RF_LORA_B;
}

int replay_merge_plan(struct rf_replay *r, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    bool any = false;
    for (size_t i = 0; i < p->n_tensors && !any; i++)
        any = merged_pair(p, i);
    if (!any)
        return 0;
    r->base = calloc(p->n_tensors + 1, sizeof(*r->base));
    r->merged = calloc(p->n_tensors + 1, sizeof(*r->merged));
    if (!r->base || !r->merged)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (size_t a = 0; a < p->n_tensors; a++) {
        struct rf_tensor w;
        struct rf_box box;
        if (!merged_pair(p, a))
            continue;
        weight_of(p, a, &w);
        if (!rf_side_held_box(&p->infer, &w, r->rank, &box))
            continue;
        const struct rbuf *ab = &r->buf[RF_BUF_INFER][a], *bb = &r->buf[RF_BUF_INFER][a + 1];
        /* A column W's shard needs all of A (its rows of B are B's shard); a row W's needs
         * all of B; stacked experts, the shard's experts of both. Shards vLLM's way always
         * hold them; a layout that does not is refused. */
        int n = w.ndim, R = n - 2, C = n - 1;
        int64_t rank = p->tensors[a].shape[R];
        if (!ab->numel || !bb->numel || !covers(&ab->box, &box, C) || !covers(&bb->box, &box, R) ||
            (n == 3 && !covers(&ab->box, &box, 0)) || (n == 3 && !covers(&bb->box, &box, 0)) ||
            ab->box.len[R] != rank || bb->box.len[C] != rank)
            return rf_error_set(err, RF_EINVAL,
                                "%s: GPU %d merges its shard of the weight, but does not hold "
                                "the A and B shards it needs",
                                rf_part_tensor_name(p, (int32_t)a), r->rank);
        int32_t elem = bb->elem;
        struct rbuf *base = &r->base[a], *m = &r->merged[a];
        base->box = m->box = box;
        base->numel = m->numel = rf_box_numel(&box, n);
        base->elem = m->elem = elem;
        base->owned = m->owned = true;
        r->need.infer += 2 * base->numel * elem;
    }
    return 0;
}

int replay_merge_alloc(struct rf_replay *r, struct rf_error *err)
{
    int rc;
    for (size_t i = 0; r->base && i < r->part->n_tensors; i++)
        if (r->base[i].numel &&
            ((rc = r->be->alloc(r->be, &r->base[i].ptr,
                                (size_t)(r->base[i].numel * r->base[i].elem), err)) < 0 ||
             (rc = r->be->alloc(r->be, &r->merged[i].ptr,
                                (size_t)(r->merged[i].numel * r->merged[i].elem), err)) < 0))
            return rc;
    return 0;
}

void replay_merge_free(struct rf_replay *r)
{
    for (size_t i = 0; r->base && i < r->part->n_tensors; i++) {
        if (r->base[i].ptr)
            r->be->free(r->be, r->base[i].ptr);
        if (r->merged[i].ptr)
            r->be->free(r->be, r->merged[i].ptr);
    }
    free(r->base);
    free(r->merged);
}

int replay_merge_fill(struct rf_replay *r, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    int rc;
    for (size_t a = 0; r->base && a < p->n_tensors; a++) {
        const struct rbuf *b = &r->base[a];
        if (!b->ptr)
            continue;
        struct rf_tensor w;
        weight_of(p, a, &w);
        struct rf_pattern_buf pb = {base_id(p, a), w.ndim,          w.shape,
                                    &b->box,       (size_t)b->elem, false};
        if ((rc = rf_fill_buffer(r->be, b->ptr, &pb, false, err)) < 0)
            return rc;
    }
    return 0;
}

/* W + B A over W's shard `box` (ndim 2, or 3 for stacked experts, each its own product)
 * into out, from the base w (box), B's rows (b_box) and A's columns (a_box), all host
 * copies; rank is r. Sums are modulo 2^(8 x elem). */
static void fold(uint8_t *out, const uint8_t *w, const struct rf_box *box, int ndim,
                 const uint8_t *bm, const struct rf_box *b_box, const uint8_t *am,
                 const struct rf_box *a_box, int64_t rank, int32_t elem)
{
    int R = ndim - 2, C = ndim - 1;
    size_t e = (size_t)elem;
    int64_t experts = ndim == 3 ? box->len[0] : 1;
    for (int64_t x = 0; x < experts; x++) {
        int64_t ex = ndim == 3 ? box->off[0] + x : 0;
        for (int64_t i = box->off[R]; i < box->off[R] + box->len[R]; i++)
            for (int64_t j = box->off[C]; j < box->off[C] + box->len[C]; j++) {
                int64_t at = at_in(box, ndim, ex, i, j);
                uint64_t acc = rf_le_load(w + at * elem, e);
                for (int64_t k = 0; k < rank; k++)
                    acc += rf_le_load(bm + at_in(b_box, ndim, ex, i, k) * elem, e) *
                           rf_le_load(am + at_in(a_box, ndim, ex, k, j) * elem, e);
                rf_le_store(out + at * elem, acc, e);
            }
    }
}

static int download(struct rf_replay *r, const struct rbuf *b, uint8_t **host, struct rf_error *err)
{
    size_t bytes = (size_t)(b->numel * b->elem);
    if (!(*host = malloc(bytes + 1)))
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    return r->be->download(r->be, *host, b->ptr, bytes, err);
}

int replay_merge(struct rf_replay *r, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    int rc = 0;
    for (size_t a = 0; r->base && a < p->n_tensors && rc == 0; a++) {
        const struct rbuf *w = &r->base[a], *m = &r->merged[a];
        const struct rbuf *ab = &r->buf[RF_BUF_INFER][a], *bb = &r->buf[RF_BUF_INFER][a + 1];
        uint8_t *hw = NULL, *ha = NULL, *hb = NULL, *out = NULL;
        if (!w->ptr)
            continue;
        if ((rc = download(r, w, &hw, err)) == 0 && (rc = download(r, ab, &ha, err)) == 0 &&
            (rc = download(r, bb, &hb, err)) == 0 &&
            !(out = malloc((size_t)(m->numel * m->elem) + 1)))
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        if (rc == 0) {
            int n = p->tensors[a].ndim;
            fold(out, hw, &w->box, n, hb, &bb->box, ha, &ab->box, p->tensors[a].shape[n - 2],
                 w->elem);
            rc = r->be->upload(r->be, m->ptr, out, (size_t)(m->numel * m->elem), err);
        }
        free(hw);
        free(ha);
        free(hb);
        free(out);
    }
    return rc;
}

/* The pattern of box `box` of a tensor of `shape` (ndim dims), as a host copy. */
static int pattern_of(int32_t tensor, int ndim, const int64_t *shape, const struct rf_box *box,
                      int32_t elem, uint8_t **out, struct rf_error *err)
{
    int64_t n = rf_box_numel(box, ndim);
    if (!(*out = malloc((size_t)(n * elem) + 1)))
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    struct rf_pattern_buf pb = {tensor, ndim, shape, box, (size_t)elem, false};
    rf_pattern_fill(*out, &pb, 0, n, false);
    return 0;
}

int replay_merge_check(struct rf_replay *r, struct rf_check *out, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    int rc = 0;
    for (size_t a = 0; r->base && a < p->n_tensors && rc == 0; a++) {
        const struct rbuf *m = &r->merged[a];
        if (!m->ptr)
            continue;
        /* From the pattern alone: the base, and the A columns and B rows the shard needs. */
        const struct rf_part_tensor *pa = &p->tensors[a], *pb = &p->tensors[a + 1];
        struct rf_tensor w;
        weight_of(p, a, &w);
        int n = w.ndim, R = n - 2, C = n - 1;
        struct rf_box a_box = m->box, b_box = m->box;
        a_box.off[R] = 0;
        a_box.len[R] = pa->shape[R];
        b_box.off[C] = 0;
        b_box.len[C] = pb->shape[C];
        uint8_t *hw = NULL, *ha = NULL, *hb = NULL, *want = NULL, *got = NULL;
        if ((rc = pattern_of(base_id(p, a), n, w.shape, &m->box, m->elem, &hw, err)) == 0 &&
            (rc = pattern_of((int32_t)a, n, pa->shape, &a_box, m->elem, &ha, err)) == 0 &&
            (rc = pattern_of((int32_t)a + 1, n, pb->shape, &b_box, m->elem, &hb, err)) == 0 &&
            !(want = malloc((size_t)(m->numel * m->elem) + 1)))
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        if (rc == 0 && (rc = download(r, m, &got, err)) == 0) {
            fold(want, hw, &m->box, n, hb, &b_box, ha, &a_box, pa->shape[R], m->elem);
            int64_t bad = 0, first = -1;
            for (int64_t j = 0; j < m->numel; j++)
                if (memcmp(got + j * m->elem, want + j * m->elem, (size_t)m->elem) != 0) {
                    if (first < 0)
                        first = j;
                    bad++;
                }
            out->errors += bad;
            if (first >= 0 && out->first_tensor < 0) {
                out->first_tensor = (int32_t)a;
                out->first_index = first;
            }
            out->elements += m->numel;
            out->bytes += m->numel * m->elem;
        }
        free(hw);
        free(ha);
        free(hb);
        free(want);
        free(got);
    }
    return rc;
}
