/* The pattern fill of a replay's sources, the poison of its destinations, and the check of
 * what arrived: on the backend's device path when it has one, else through host memory. */
#include <stdlib.h>
#include <string.h>

#include "pattern.h"
#include "replay_int.h"

#define HOST_CHUNK ((int64_t)16 << 20) /* host bytes per fill or check chunk */

/* Host memory a fill or check goes through, a chunk at a time, when the backend has no
 * device path. */
static int host_chunk(const struct rf_pattern_buf *pb, int64_t numel, uint8_t **host, int64_t *per,
                      struct rf_error *err)
{
    int64_t bytes = numel * (int64_t)pb->elem;
    *per = HOST_CHUNK / (int64_t)pb->elem;
    *host = malloc((size_t)(bytes < HOST_CHUNK ? bytes : HOST_CHUNK) + 1);
    return *host ? 0 : rf_error_set(err, RF_ENOMEM, "out of memory");
}

int rf_fill_buffer(struct rf_backend *be, void *buf, const struct rf_pattern_buf *pb, bool poison,
                   struct rf_error *err)
{
    int64_t numel = rf_box_numel(pb->box, pb->ndim), per;
    uint8_t *host;
    int rc;
    if (be->fill)
        return be->fill(be, buf, pb, poison, err);
    if ((rc = host_chunk(pb, numel, &host, &per, err)) < 0)
        return rc;
    for (int64_t lo = 0; lo < numel && rc == 0; lo += per) {
        int64_t hi = lo + per < numel ? lo + per : numel;
        rf_pattern_fill(host, pb, lo, hi, poison);
        rc = be->upload(be, (uint8_t *)buf + lo * (int64_t)pb->elem, host,
                        (size_t)((hi - lo) * (int64_t)pb->elem), err);
    }
    free(host);
    return rc;
}

int rf_check_buffer(struct rf_backend *be, const void *buf, const struct rf_pattern_buf *pb,
                    int64_t *errors, int64_t *first_bad, struct rf_error *err)
{
    int64_t numel = rf_box_numel(pb->box, pb->ndim), per;
    uint8_t *host;
    int rc;
    *errors = 0;
    *first_bad = -1;
    if (be->check)
        return be->check(be, buf, pb, errors, first_bad, err);
    if ((rc = host_chunk(pb, numel, &host, &per, err)) < 0)
        return rc;
    for (int64_t lo = 0; lo < numel && rc == 0; lo += per) {
        int64_t hi = lo + per < numel ? lo + per : numel;
        rc = be->download(be, host, (const uint8_t *)buf + lo * (int64_t)pb->elem,
                          (size_t)((hi - lo) * (int64_t)pb->elem), err);
        if (rc == 0)
            *errors += rf_pattern_check(host, pb, lo, hi, first_bad);
    }
    free(host);
    return rc;
}

/* Fills (poison = false) or poisons the buffers of kind `which`. */
static int fill_kind(struct rf_replay *r, int which, bool poison, bool sources_only,
                     struct rf_error *err)
{
    const struct rf_part *p = r->part;
    int rc;
    for (size_t i = 0; i < p->n_tensors; i++) {
        const struct rbuf *b = &r->buf[which][i];
        const struct rf_part_tensor *pt = &p->tensors[i];
        if (!b->ptr || (which == RF_BUF_WIRE && (!b->owned || (sources_only && pt->gather_elem))))
            continue;
        struct rf_pattern_buf pb = {(int32_t)i, pt->ndim,        pt->shape,
                                    &b->box,    (size_t)b->elem, pt->packed};
        /* A delta's receivers hold the last sent weights, the pattern, before the refit: the
         * k changed elements of each box are what the check catches unwritten. */
        bool last_sent = which == RF_BUF_INFER && pt->delta.enc != RF_DELTA_NONE;
        if ((rc = rf_fill_buffer(r->be, b->ptr, &pb, poison && !last_sent, err)) < 0)
            return rc;
    }
    return 0;
}

int rf_replay_fill(struct rf_replay *r, struct rf_error *err)
{
    int rc;
    /* Sources: training shards, and the scale tensors a root broadcasts without gathering
     * (it computes them; the computation is not emulated, its result is the pattern). */
    if ((rc = fill_kind(r, RF_BUF_TRAIN, false, false, err)) == 0 &&
        (rc = fill_kind(r, RF_BUF_WIRE, false, true, err)) == 0 &&
        (rc = replay_delta_fill(r, err)) == 0)
        rc = replay_merge_fill(r, err);
    return rc;
}

int rf_replay_poison(struct rf_replay *r, struct rf_error *err)
{
    int rc;
    if ((rc = fill_kind(r, RF_BUF_INFER, true, false, err)) == 0)
        rc = fill_kind(r, RF_BUF_GATHER, true, false, err);
    return rc;
}

int rf_replay_check(struct rf_replay *r, struct rf_check *out, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    int rc;
    memset(out, 0, sizeof(*out));
    out->first_tensor = -1;
    if ((rc = r->be->sync(r->be, err)) < 0)
        return rc;
    for (size_t i = 0; i < p->n_tensors; i++) {
        const struct rbuf *b = &r->buf[RF_BUF_INFER][i];
        const struct rf_part_tensor *pt = &p->tensors[i];
        int64_t errors, first;
        if (!b->ptr)
            continue;
        struct rf_pattern_buf pb = {(int32_t)i, pt->ndim,        pt->shape,
                                    &b->box,    (size_t)b->elem, pt->packed};
        if ((rc = pt->delta.enc != RF_DELTA_NONE
                      ? replay_delta_check(r, (int32_t)i, &errors, &first, err)
                      : rf_check_buffer(r->be, b->ptr, &pb, &errors, &first, err)) < 0)
            return rc;
        out->errors += errors;
        if (first >= 0 && out->first_tensor < 0) {
            out->first_tensor = (int32_t)i;
            out->first_index = first;
        }
        out->elements += b->numel;
        out->bytes += b->numel * b->elem;
    }
    return replay_merge_check(r, out, err);
}
