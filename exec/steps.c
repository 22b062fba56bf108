/* A round's steps: each step packs the pieces it carries into send staging, exchanges them
 * with the peers in one group, and unpacks what arrived (the program is in program.c). */
#include <stdio.h>

#include "replay_int.h"

int replay_copy_region(struct rf_replay *r, void *dst, const struct rf_view *dv, const void *src,
                       const struct rf_view *sv, const struct rf_box *region, int ndim, size_t elem,
                       struct rf_error *err)
{
    struct rf_copy c;
    rf_copy_make(&c, dv, sv, region, ndim, elem);
    if (rf_copy_numel(&c) == 0)
        return 0;
    return r->be->copy(r->be, dst, src, &c, err);
}

/* Packs (or, with unpack, unpacks) piece s of message m between its buffers and stage. */
static int pack_piece(struct rf_replay *r, const struct msg *m, int32_t s, uint8_t *stage,
                      bool unpack, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    int64_t lo = (int64_t)s * m->piece, hi = lo + piece_len(m->piece, m->bytes, s);
    int rc;
    for (size_t j = m->first; j < m->first + m->n; j++) {
        const struct item *it = &r->items[j];
        int64_t a = it->at > lo ? it->at : lo;
        int64_t b = it->at + it->bytes < hi ? it->at + it->bytes : hi;
        if (a >= b)
            continue;
        if (replay_delta_item(r, it)) {
            if ((rc = replay_delta_pack(r, it, a - it->at, b - it->at, stage + (a - lo), unpack,
                                        err)) < 0)
                return rc;
            continue;
        }
        const struct rf_part_tensor *pt = &p->tensors[it->tensor];
        const struct rbuf *buf = &r->buf[unpack ? it->dst_buf : it->src_buf][it->tensor];
        struct rf_box q[RF_RANGE_BOXES];
        struct rf_view bv, qv;
        int nq = rf_range_boxes(&p->boxes[it->box].box, pt->ndim, (a - it->at) / it->elem,
                                (b - it->at) / it->elem, q);
        uint8_t *pos = stage + (a - lo);
        rf_view_of_box(&bv, &buf->box, pt->ndim);
        for (int k = 0; k < nq; k++) {
            rf_view_of_box(&qv, &q[k], pt->ndim);
            rc = unpack ? replay_copy_region(r, buf->ptr, &bv, pos, &qv, &q[k], pt->ndim,
                                             (size_t)it->elem, err)
                        : replay_copy_region(r, pos, &qv, buf->ptr, &bv, &q[k], pt->ndim,
                                             (size_t)it->elem, err);
            if (rc < 0)
                return rc;
            pos += rf_box_numel(&q[k], pt->ndim) * it->elem;
        }
    }
    return 0;
}

int replay_flip_byte(struct rf_replay *r, uint8_t *dev, struct rf_error *err)
{
    uint8_t v;
    int rc;
    if ((rc = r->be->sync(r->be, err)) < 0 || (rc = r->be->download(r->be, &v, dev, 1, err)) < 0)
        return rc;
    v ^= 0xff;
    return r->be->upload(r->be, dev, &v, 1, err);
}

/* Keeps the control plane's `where` current, so a timeout names round, step and peers.
 * Sends and receives are in peer order (messages are sorted by it), so a peer that several
 * messages of a pipelined step go to is named once by skipping repeats. */
static void describe_step(struct rf_replay *r, int32_t round, const struct round_prog *rp,
                          int32_t s, size_t ns, size_t nr)
{
    char *w = r->be->ctl->where;
    size_t size = sizeof(r->be->ctl->where);
    int n = snprintf(w, size, "round %d, step %d of %d%s (sending to", round, s, rp->steps,
                     r->part->pipelined[round] ? ", pipelined" : "");
    for (int dir = 0; dir < 2; dir++) {
        const struct rf_xfer *x = dir ? r->recvs : r->sends;
        size_t nx = dir ? nr : ns, named = 0;
        if (dir && n > 0 && (size_t)n < size)
            n += snprintf(w + n, size - (size_t)n, "; receiving from");
        for (size_t i = 0; i < nx && n > 0 && (size_t)n < size; i++) {
            if (i > 0 && x[i].peer == x[i - 1].peer)
                continue;
            if (named < 8)
                n += snprintf(w + n, size - (size_t)n, " %d", x[i].peer);
            else if (named == 8)
                n += snprintf(w + n, size - (size_t)n, " ...");
            named++;
        }
        if (nx == 0 && n > 0 && (size_t)n < size)
            n += snprintf(w + n, size - (size_t)n, " none");
    }
    if (n > 0 && (size_t)n < size)
        snprintf(w + n, size - (size_t)n, ")");
}

int replay_run_steps(struct rf_replay *r, int32_t round, const struct round_prog *rp,
                     const struct rf_fault *f, struct rf_error *err)
{
    int rc;
    for (int32_t s = 0; s < rp->steps; s++) {
        size_t ns = 0, nr = 0;
        int64_t sat = 0, rat = 0;
        for (size_t i = rp->msg0; i < rp->msg0 + rp->n_msgs; i++) {
            struct msg *m = &r->msgs[i];
            int32_t k = piece_at(m, s);
            if (k < 0 || m->kind == K_LOCAL)
                continue;
            int64_t len = piece_len(m->piece, m->bytes, k);
            if (m->kind == K_RECV) {
                m->stage_at = rat;
                r->recvs[nr++] = (struct rf_xfer){m->peer, r->recv_stage + rat, (size_t)len};
                rat = align_up(rat + len, STAGE_ALIGN);
                continue;
            }
            if (m->content == (int32_t)i) {
                m->stage_at = sat;
                if ((rc = pack_piece(r, m, k, r->send_stage + sat, false, err)) < 0)
                    return rc;
                if (f && f->kind == RF_FAULT_CORRUPT && !r->corrupted) {
                    r->corrupted = true;
                    fprintf(stderr,
                            "refit-exec: rank %d: injected fault (REFIT_EXEC_FAULT): corrupting "
                            "a byte sent to rank %d in round %d\n",
                            r->rank, m->peer, m->round);
                    if ((rc = replay_flip_byte(r, r->send_stage + sat, err)) < 0)
                        return rc;
                }
                sat = align_up(sat + len, STAGE_ALIGN);
            }
            r->sends[ns++] = (struct rf_xfer){m->peer, r->send_stage + r->msgs[m->content].stage_at,
                                              (size_t)len};
        }
        describe_step(r, round, rp, s, ns, nr);
        if ((rc = r->be->exchange(r->be, r->sends, ns, r->recvs, nr, err)) < 0)
            return rc;
        /* Unpacked before the next step packs: a forward of one of these pieces goes out
         * in the next step, from the buffer it lands in. */
        for (size_t i = rp->msg0; i < rp->msg0 + rp->n_msgs; i++) {
            const struct msg *m = &r->msgs[i];
            int32_t k = piece_at(m, s);
            if (m->kind == K_RECV && k >= 0 &&
                (rc = pack_piece(r, m, k, r->recv_stage + m->stage_at, true, err)) < 0)
                return rc;
        }
    }
    return 0;
}
