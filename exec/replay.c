/* The replay loop: one iteration of the whole schedule, round by round (local copies, the
 * round's steps, its broadcasts), with the fault injection that tests its failure paths. */
#include <stdio.h>

#include "replay_int.h"

static int run_locals(struct rf_replay *r, const struct msg *m, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    int rc;
    for (size_t j = m->first; j < m->first + m->n; j++) {
        const struct item *it = &r->items[j];
        if (replay_delta_item(r, it)) {
            if ((rc = replay_delta_local(r, it, err)) < 0)
                return rc;
            continue;
        }
        const struct rf_part_tensor *pt = &p->tensors[it->tensor];
        const struct rbuf *s = &r->buf[it->src_buf][it->tensor];
        const struct rbuf *d = &r->buf[it->dst_buf][it->tensor];
        struct rf_view sv, dv;
        rf_view_of_box(&sv, &s->box, pt->ndim);
        rf_view_of_box(&dv, &d->box, pt->ndim);
        if ((rc = replay_copy_region(r, d->ptr, &dv, s->ptr, &sv, &p->boxes[it->box].box, pt->ndim,
                                     (size_t)it->elem, err)) < 0)
            return rc;
    }
    return 0;
}

/* Unpacks the elements [e0, e1) of the whole tensor (a broadcast piece in stage) into the
 * part of this GPU's inference shard they cover. */
static int unpack_range(struct rf_replay *r, int32_t tensor, int64_t e0, int64_t e1,
                        const uint8_t *stage, struct rf_error *err)
{
    const struct rf_part_tensor *pt = &r->part->tensors[tensor];
    const struct rbuf *d = &r->buf[RF_BUF_INFER][tensor];
    struct rf_box whole, q[RF_RANGE_BOXES], cut;
    struct rf_view dv, sv;
    int rc;
    whole_box(pt, &whole);
    rf_view_of_box(&dv, &d->box, pt->ndim);
    rf_view_of_range(&sv, pt->shape, pt->ndim, e0);
    int nq = rf_range_boxes(&whole, pt->ndim, e0, e1, q);
    for (int k = 0; k < nq; k++)
        if (rf_box_intersect(&q[k], &d->box, pt->ndim, &cut) &&
            (rc = replay_copy_region(r, d->ptr, &dv, stage, &sv, &cut, pt->ndim,
                                     (size_t)pt->wire_elem, err)) < 0)
            return rc;
    return 0;
}

static int run_collective(struct rf_replay *r, const struct rf_part_collective *c,
                          struct rf_error *err)
{
    const struct rf_part_tensor *pt = &r->part->tensors[c->tensor];
    const struct rbuf *infer = &r->buf[RF_BUF_INFER][c->tensor];
    int64_t numel = c->bytes / pt->wire_elem;
    int rc;
    snprintf(r->be->ctl->where, sizeof(r->be->ctl->where),
             "round %d (broadcast of %s from rank %d)", c->round,
             rf_part_tensor_name(r->part, c->tensor), c->root);
    if (c->root == r->rank) {
        const struct rbuf *wire = &r->buf[RF_BUF_WIRE][c->tensor];
        const struct rbuf *gather = &r->buf[RF_BUF_GATHER][c->tensor];
        if (pt->gather_elem && pt->gather_elem != pt->wire_elem &&
            (rc = (pt->packed ? r->be->narrow4 : r->be->narrow)(r->be, wire->ptr, gather->ptr,
                                                                numel, err)) < 0)
            return rc;
        for (int64_t at = 0; at < c->bytes; at += r->piece)
            if ((rc = r->be->bcast(r->be, c->group, (uint8_t *)wire->ptr + at,
                                   (size_t)piece_len(r->piece, c->bytes, (int32_t)(at / r->piece)),
                                   err)) < 0)
                return rc;
        /* Colocated: the root is an inference GPU too and takes its shard from its copy. */
        if (infer->ptr) {
            struct rf_view dv, sv;
            rf_view_of_box(&dv, &infer->box, pt->ndim);
            rf_view_of_box(&sv, &wire->box, pt->ndim);
            return replay_copy_region(r, infer->ptr, &dv, wire->ptr, &sv, &infer->box, pt->ndim,
                                      (size_t)pt->wire_elem, err);
        }
        return 0;
    }
    for (int64_t at = 0; at < c->bytes; at += r->piece) {
        int64_t len = piece_len(r->piece, c->bytes, (int32_t)(at / r->piece));
        if ((rc = r->be->bcast(r->be, c->group, r->recv_stage, (size_t)len, err)) < 0)
            return rc;
        if (infer->ptr && (rc = unpack_range(r, c->tensor, at / pt->wire_elem,
                                             (at + len) / pt->wire_elem, r->recv_stage, err)) < 0)
            return rc;
    }
    return 0;
}

int rf_replay_run(struct rf_replay *r, double *round_seconds, double *total,
                  const struct rf_fault *fault, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    struct rf_backend *be = r->be;
    int rc;
    if (fault && fault->rank != r->rank)
        fault = NULL;
    int32_t fault_round = fault && fault->round >= 0 ? fault->round : p->n_rounds / 2;
    r->corrupted = false;
    if ((rc = be->mark(be, 0, err)) < 0)
        return rc;
    for (int32_t rd = 0; rd < p->n_rounds; rd++) {
        const struct round_prog *rp = &r->rounds[rd];
        if (fault && (fault->kind == RF_FAULT_CRASH || fault->kind == RF_FAULT_HANG) &&
            rd == (fault_round < p->n_rounds ? fault_round : p->n_rounds - 1))
            rf_fault_fire(fault, r->rank, rd);
        for (size_t i = rp->msg0; i < rp->msg0 + rp->n_msgs; i++)
            if (r->msgs[i].kind == K_LOCAL && (rc = run_locals(r, &r->msgs[i], err)) < 0)
                return rc;
        if ((rc = replay_run_steps(r, rd, rp, fault, err)) < 0)
            return rc;
        for (size_t k = rp->coll0; k < rp->coll0 + rp->n_colls; k++)
            if ((rc = run_collective(r, &p->colls[r->colls[k]], err)) < 0)
                return rc;
        /* At most one round is queued ahead of the one the GPU runs: once round rd is
         * queued, wait for round rd - 1's end. The GPU never idles while the host queues the
         * next round (draining every round did: the host's queueing time between rounds was
         * counted in neither), and what is in flight stays bounded, as NeMo-RL's buckets
         * bound it, so a failure surfaces within a round of where it happened. Staging is
         * reused from round to round without a wait of its own: every copy, send and receive
         * of a rank is on its one stream, in queue order, so round rd's packs into staging
         * run after round rd - 1's sends from it have finished. */
        if ((rc = be->mark(be, rd + 1, err)) < 0)
            return rc;
        if (rd == 0)
            continue;
        snprintf(be->ctl->where, sizeof(be->ctl->where),
                 "round %d (its copies and messages, while round %d is queued)", rd - 1, rd);
        if ((rc = be->wait_mark(be, rd, err)) < 0)
            return rc;
    }
    snprintf(be->ctl->where, sizeof(be->ctl->where), "round %d (its copies and messages)",
             p->n_rounds - 1);
    if ((rc = be->sync(be, err)) < 0)
        return rc;
    be->ctl->where[0] = '\0';
    if (fault && fault->kind == RF_FAULT_CORRUPT && !r->corrupted) {
        /* Nothing sent: spoil a byte of the first shard this GPU receives instead. */
        for (size_t i = 0; i < p->n_tensors && !r->corrupted; i++)
            if (r->buf[RF_BUF_INFER][i].ptr) {
                r->corrupted = true;
                fprintf(stderr,
                        "refit-exec: rank %d: injected fault (REFIT_EXEC_FAULT): corrupting a "
                        "byte of its shard of %s\n",
                        r->rank, rf_part_tensor_name(p, (int32_t)i));
                if ((rc = replay_flip_byte(r, r->buf[RF_BUF_INFER][i].ptr, err)) < 0)
                    return rc;
            }
    }
    /* A merged LoRA update's engine folds what landed into its weights, in the refit's
     * time (after an injected fault, so a spoiled adapter spoils the weight too). */
    snprintf(be->ctl->where, sizeof(be->ctl->where), "the LoRA merge after round %d",
             p->n_rounds - 1);
    bool merges = r->merged != NULL;
    if (merges && ((rc = replay_merge(r, err)) < 0 ||
                   (rc = be->mark(be, p->n_rounds + 1, err)) < 0 || (rc = be->sync(be, err)) < 0))
        return rc;
    be->ctl->where[0] = '\0';
    for (int32_t rd = 0; rd < p->n_rounds; rd++)
        if ((rc = be->elapsed(be, rd, rd + 1, &round_seconds[rd], err)) < 0)
            return rf_error_set(err, rc, "the time of round %d: %s", rd, err->msg);
    *total = 0;
    if (p->n_rounds > 0 &&
        (rc = be->elapsed(be, 0, merges ? p->n_rounds + 1 : p->n_rounds, total, err)) < 0)
        return rf_error_set(err, rc, "the time of the iteration: %s", err->msg);
    return 0;
}
