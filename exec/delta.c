/* A delta update's replay (sim/delta.h): the sender diffs its new weights against the last
 * sent ones and encodes each box (a bitmap or coordinates, and the changed values), relays
 * forward the encoding as it came, and each receiver scatters it into its weights. The codec
 * runs on the host, through a box-sized device scratch (the backend's copy, download and
 * upload), so both backends replay it alike; exec_config says "delta=host".
 *
 * The weights: the pattern is the last sent weights (the receivers hold them before the
 * refit, the senders keep a copy), and the new weights are those with the sign bit of each
 * box's k changed elements flipped (rf_delta_is_changed: k evenly spread, so a box changes
 * exactly as the plan counted it and the flipped value differs in every dtype). Boxes
 * partition a tensor, so every element has one rule. The replay does not write the new
 * weights back into the last sent copy (the prediction counts that write): every iteration
 * sends the same delta, and the check compares each destination with the new weights. */
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "replay_int.h"

static bool delta_tensor(const struct rf_replay *r, int32_t tensor)
{
    return r->part->tensors[tensor].delta.enc != RF_DELTA_NONE;
}

bool replay_delta_item(const struct rf_replay *r, const struct item *it)
{
    return it->dst_buf == RF_BUF_INFER && delta_tensor(r, it->tensor);
}

static int64_t box_numel_of(const struct rf_replay *r, int32_t box)
{
    const struct rf_plan_box *b = &r->part->boxes[box];
    return rf_box_numel(&b->box, r->part->tensors[b->tensor].ndim);
}

int replay_delta_plan(struct rf_replay *r, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    bool any = false;
    for (size_t i = 0; i < p->n_tensors && !any; i++)
        any = delta_tensor(r, (int32_t)i);
    if (!any)
        return 0;
    r->enc = calloc(p->n_boxes + 1, sizeof(*r->enc));
    r->enc_bytes = calloc(p->n_boxes + 1, sizeof(*r->enc_bytes));
    r->prev = calloc(p->n_tensors + 1, sizeof(*r->prev));
    if (!r->enc || !r->enc_bytes || !r->prev)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    /* The last sent copy beside each training shard of a delta tensor. */
    for (size_t i = 0; i < p->n_tensors; i++) {
        const struct rbuf *t = &r->buf[RF_BUF_TRAIN][i];
        if (delta_tensor(r, (int32_t)i) && t->numel) {
            r->prev[i] = *t;
            r->need.train += t->numel * t->elem;
        }
    }
    /* An encoding per box this rank sends or receives, and the scratch of the largest box. */
    for (size_t j = 0; j < r->n_items; j++) {
        const struct item *it = &r->items[j];
        if (!replay_delta_item(r, it))
            continue;
        int64_t dense = box_numel_of(r, it->box) * it->elem;
        if (dense > r->scratch_bytes)
            r->scratch_bytes = dense;
        if (r->enc_bytes[it->box] == 0) {
            r->enc_bytes[it->box] = it->bytes;
            r->need.staging += it->bytes;
        }
    }
    r->need.staging += r->scratch_bytes;
    return 0;
}

int replay_delta_alloc(struct rf_replay *r, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    int rc;
    if (!r->enc)
        return 0;
    for (size_t i = 0; i < p->n_tensors; i++)
        if (r->prev[i].numel &&
            (rc = r->be->alloc(r->be, &r->prev[i].ptr, (size_t)(r->prev[i].numel * r->prev[i].elem),
                               err)) < 0)
            return rc;
    for (size_t b = 0; b < p->n_boxes; b++)
        if (r->enc_bytes[b] &&
            (rc = r->be->alloc(r->be, &r->enc[b], (size_t)r->enc_bytes[b], err)) < 0)
            return rc;
    if (r->scratch_bytes &&
        (rc = r->be->alloc(r->be, &r->scratch, (size_t)r->scratch_bytes, err)) < 0)
        return rc;
    return 0;
}

void replay_delta_free(struct rf_replay *r)
{
    const struct rf_part *p = r->part;
    for (size_t i = 0; r->prev && i < p->n_tensors; i++)
        if (r->prev[i].ptr)
            r->be->free(r->be, r->prev[i].ptr);
    for (size_t b = 0; r->enc && b < p->n_boxes; b++)
        if (r->enc[b])
            r->be->free(r->be, r->enc[b]);
    if (r->scratch)
        r->be->free(r->be, r->scratch);
    free(r->prev);
    free(r->enc);
    free(r->enc_bytes);
}

/* Box `box` of buffer b, densely into host (read) or from it (write), through the scratch. */
static int region(struct rf_replay *r, const struct rbuf *b, int32_t box, uint8_t *host, bool write,
                  struct rf_error *err)
{
    const struct rf_plan_box *pb = &r->part->boxes[box];
    int ndim = r->part->tensors[pb->tensor].ndim;
    size_t bytes = (size_t)(rf_box_numel(&pb->box, ndim) * b->elem);
    struct rf_view bv, sv;
    int rc;
    rf_view_of_box(&bv, &b->box, ndim);
    rf_view_of_box(&sv, &pb->box, ndim);
    /* Synchronous uploads and downloads around queued copies: each waits for the queue. */
    if (write)
        return (rc = r->be->upload(r->be, r->scratch, host, bytes, err)) < 0 ||
                       (rc = replay_copy_region(r, b->ptr, &bv, r->scratch, &sv, &pb->box, ndim,
                                                (size_t)b->elem, err)) < 0
                   ? rc
                   : r->be->sync(r->be, err);
    if ((rc = replay_copy_region(r, r->scratch, &sv, b->ptr, &bv, &pb->box, ndim, (size_t)b->elem,
                                 err)) < 0 ||
        (rc = r->be->sync(r->be, err)) < 0)
        return rc;
    return r->be->download(r->be, host, r->scratch, bytes, err);
}

/* The new value of a changed element: its sign bit flipped (little-endian, top byte). */
static void flip(uint8_t *v, int32_t elem)
{
    v[elem - 1] ^= 0x80;
}

/* The sender's diff: the box of its new weights against its last sent copy, encoded into
 * out (the transfer's bytes). The diff must find the k changes the plan counted. */
static int encode(struct rf_replay *r, const struct item *it, uint8_t *out, struct rf_error *err)
{
    const struct rf_part_tensor *pt = &r->part->tensors[it->tensor];
    int64_t n = box_numel_of(r, it->box), k = rf_delta_changed(pt->delta.ppm, n), found = 0;
    size_t e = (size_t)it->elem, dense = (size_t)n * e;
    uint8_t *now = malloc(dense + 1), *was = malloc(dense + 1);
    int rc;
    if (!now || !was) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = region(r, &r->buf[RF_BUF_TRAIN][it->tensor], it->box, now, false, err)) < 0 ||
        (rc = region(r, &r->prev[it->tensor], it->box, was, false, err)) < 0)
        goto out;
    enum rf_delta_enc how = rf_delta_pick(&pt->delta, n, e);
    size_t isz = rf_delta_index_size(n);
    uint8_t *values = out + (how == RF_DELTA_BITMAP ? (size_t)(n + 7) / 8 : (size_t)k * isz);
    if (how == RF_DELTA_BITMAP)
        memset(out, 0, (size_t)(n + 7) / 8);
    for (int64_t j = 0; j < n; j++) {
        if (memcmp(now + (size_t)j * e, was + (size_t)j * e, e) == 0)
            continue;
        if (found < k) {
            if (how == RF_DELTA_BITMAP)
                out[j / 8] |= (uint8_t)(1u << (j % 8));
            else
                rf_le_store(out + (size_t)found * isz, (uint64_t)j, isz);
            memcpy(values + (size_t)found * e, now + (size_t)j * e, e);
        }
        found++;
    }
    if (found != k)
        rc = rf_error_set(err, RF_EINVAL,
                          "box %d of %s: the diff found %lld changed elements, the plan counts "
                          "%lld",
                          it->box, rf_part_tensor_name(r->part, it->tensor), (long long)found,
                          (long long)k);
out:
    free(now);
    free(was);
    return rc;
}

/* The receiver's scatter of an encoding into its weights. */
static int scatter(struct rf_replay *r, const struct item *it, const uint8_t *in,
                   struct rf_error *err)
{
    const struct rf_part_tensor *pt = &r->part->tensors[it->tensor];
    const struct rbuf *d = &r->buf[RF_BUF_INFER][it->tensor];
    int64_t n = box_numel_of(r, it->box), k = rf_delta_changed(pt->delta.ppm, n);
    size_t e = (size_t)it->elem, isz = rf_delta_index_size(n);
    enum rf_delta_enc how = rf_delta_pick(&pt->delta, n, e);
    uint8_t *w = malloc((size_t)n * e + 1);
    int rc;
    if (!w)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    if ((rc = region(r, d, it->box, w, false, err)) < 0)
        goto out;
    const uint8_t *values = in + (how == RF_DELTA_BITMAP ? (size_t)(n + 7) / 8 : (size_t)k * isz);
    int64_t v = 0;
    for (int64_t i = 0; how == RF_DELTA_BITMAP && i < n && v < k; i++)
        if (in[i / 8] >> (i % 8) & 1)
            memcpy(w + (size_t)i * e, values + (size_t)v++ * e, e);
    for (; how == RF_DELTA_COO && v < k; v++) {
        uint64_t j = rf_le_load(in + (size_t)v * isz, isz);
        if (j >= (uint64_t)n) {
            rc = rf_error_set(err, RF_EINVAL, "box %d of %s: index %llu outside its %lld elements",
                              it->box, rf_part_tensor_name(r->part, it->tensor),
                              (unsigned long long)j, (long long)n);
            goto out;
        }
        memcpy(w + j * e, values + (size_t)v * e, e);
    }
    rc = region(r, d, it->box, w, true, err);
out:
    free(w);
    return rc;
}

/* One byte range of a device buffer to another (a 1-d copy of bytes). */
static int copy_bytes(struct rf_replay *r, uint8_t *dst, const uint8_t *src, int64_t len,
                      struct rf_error *err)
{
    struct rf_copy c = {.ndim = 1, .count = {len}, .dst_stride = {1}, .src_stride = {1}, .elem = 1};
    return len > 0 ? r->be->copy(r->be, dst, src, &c, err) : 0;
}

int replay_delta_pack(struct rf_replay *r, const struct item *it, int64_t a, int64_t b,
                      uint8_t *stage, bool unpack, struct rf_error *err)
{
    uint8_t *enc = r->enc[it->box];
    int rc;
    /* A source encodes its box when its first byte is packed; a relay forwards the bytes it
     * received (already in enc). */
    if (!unpack && a == 0 && it->src_buf == RF_BUF_TRAIN) {
        uint8_t *host = malloc((size_t)it->bytes + 1);
        if (!host)
            return rf_error_set(err, RF_ENOMEM, "out of memory");
        if ((rc = encode(r, it, host, err)) == 0)
            rc = r->be->upload(r->be, enc, host, (size_t)it->bytes, err);
        free(host);
        if (rc < 0)
            return rc;
    }
    if ((rc = unpack ? copy_bytes(r, enc + a, stage, b - a, err)
                     : copy_bytes(r, stage, enc + a, b - a, err)) < 0)
        return rc;
    if (!unpack || b != it->bytes)
        return 0;
    /* Its last byte is in: scatter the whole encoding. */
    uint8_t *host = malloc((size_t)it->bytes + 1);
    if (!host)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    if ((rc = r->be->sync(r->be, err)) == 0 &&
        (rc = r->be->download(r->be, host, enc, (size_t)it->bytes, err)) == 0)
        rc = scatter(r, it, host, err);
    free(host);
    return rc;
}

int replay_delta_local(struct rf_replay *r, const struct item *it, struct rf_error *err)
{
    uint8_t *host = malloc((size_t)it->bytes + 1);
    int rc;
    if (!host)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    if ((rc = encode(r, it, host, err)) == 0)
        rc = scatter(r, it, host, err);
    free(host);
    return rc;
}

/* The sign bits of box `box`'s changed elements in the dense host copy `w` of buffer box
 * `held` (which holds the box). */
static void flip_box(const struct rf_replay *r, int32_t box, const struct rf_box *held, uint8_t *w,
                     int32_t elem)
{
    const struct rf_plan_box *pb = &r->part->boxes[box];
    const struct rf_part_tensor *pt = &r->part->tensors[pb->tensor];
    int64_t n = rf_box_numel(&pb->box, pt->ndim), k = rf_delta_changed(pt->delta.ppm, n);
    int64_t off[RF_MAX_DIMS];
    struct rf_pattern_geom g;
    for (int d = 0; d < pt->ndim; d++)
        off[d] = pb->box.off[d] - held->off[d];
    rf_pattern_geom_init(&g, pt->ndim, held->len, off, pb->box.len);
    for (int64_t j = 0; j < n; j++)
        if (rf_delta_is_changed(j, k, n))
            flip(w + (size_t)rf_pattern_index(&g, j) * (size_t)elem, elem);
}

static bool inside(const struct rf_box *in, const struct rf_box *out, int ndim)
{
    for (int d = 0; d < ndim; d++)
        if (in->off[d] < out->off[d] || in->off[d] + in->len[d] > out->off[d] + out->len[d])
            return false;
    return true;
}

/* The host copy of buffer b's pattern, with the changed elements of every delta box that
 * `want` says to flip. */
static int expected(struct rf_replay *r, int32_t tensor, const struct rbuf *b, const bool *want,
                    uint8_t **out, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    const struct rf_part_tensor *pt = &p->tensors[tensor];
    uint8_t *w = malloc((size_t)(b->numel * b->elem) + 1);
    if (!w)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    struct rf_pattern_buf pb = {tensor, pt->ndim, pt->shape, &b->box, (size_t)b->elem, false};
    rf_pattern_fill(w, &pb, 0, b->numel, false);
    for (size_t k = 0; k < p->n_boxes; k++)
        if (p->boxes[k].tensor == tensor && (!want || want[k]) &&
            inside(&p->boxes[k].box, &b->box, pt->ndim))
            flip_box(r, (int32_t)k, &b->box, w, b->elem);
    *out = w;
    return 0;
}

int replay_delta_fill(struct rf_replay *r, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    int rc = 0;
    if (!r->enc)
        return 0;
    /* The boxes this rank sends from its training shards carry the new weights there. */
    bool *sent = calloc(p->n_boxes + 1, sizeof(bool));
    if (!sent)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (size_t j = 0; j < r->n_items; j++)
        if (replay_delta_item(r, &r->items[j]) && r->items[j].src_buf == RF_BUF_TRAIN)
            sent[r->items[j].box] = true;
    for (size_t i = 0; i < p->n_tensors && rc == 0; i++) {
        const struct rbuf *t = &r->buf[RF_BUF_TRAIN][i];
        const struct rbuf *prev = &r->prev[i];
        if (!prev->ptr)
            continue;
        const struct rf_part_tensor *pt = &p->tensors[i];
        struct rf_pattern_buf pb = {(int32_t)i, pt->ndim,           pt->shape,
                                    &prev->box, (size_t)prev->elem, false};
        uint8_t *w = NULL;
        if ((rc = rf_fill_buffer(r->be, prev->ptr, &pb, false, err)) < 0 ||
            (rc = expected(r, (int32_t)i, t, sent, &w, err)) < 0)
            break;
        rc = r->be->upload(r->be, t->ptr, w, (size_t)(t->numel * t->elem), err);
        free(w);
    }
    free(sent);
    return rc;
}

int replay_delta_check(struct rf_replay *r, int32_t tensor, int64_t *errors, int64_t *first_bad,
                       struct rf_error *err)
{
    const struct rbuf *b = &r->buf[RF_BUF_INFER][tensor];
    size_t bytes = (size_t)(b->numel * b->elem);
    uint8_t *want = NULL, *got = malloc(bytes + 1);
    int rc;
    *errors = 0;
    *first_bad = -1;
    if (!got)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    if ((rc = r->be->download(r->be, got, b->ptr, bytes, err)) == 0 &&
        (rc = expected(r, tensor, b, NULL, &want, err)) == 0)
        for (int64_t j = 0; j < b->numel; j++)
            if (memcmp(got + (size_t)j * (size_t)b->elem, want + (size_t)j * (size_t)b->elem,
                       (size_t)b->elem) != 0) {
                if (*first_bad < 0)
                    *first_bad = j;
                ++*errors;
            }
    free(got);
    free(want);
    return rc;
}
