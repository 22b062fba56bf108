/* The replay's program: what one rank copies, sends, receives and broadcasts, round by
 * round, derived from the transfers that touch it. */

/* How the program is derived, and why it cannot deadlock:
 *
 *  - An item is one box moving between two buffers; a transfer run yields one item per
 *    destination GPU. Items of one round between one pair of GPUs form one message, in
 *    transfer-id order, each item at an offset aligned to its element size. Sender and
 *    receiver build the same message from the same transfers, so they agree on its size
 *    and layout without talking.
 *  - A message larger than the piece size (the plan's staging budget) travels in pieces:
 *    step s of a round carries piece s of every message that has one. Both sides of a
 *    message put piece s in step s, and every rank runs its steps of round r after all of
 *    round r - 1 and before round r's broadcasts, so the steps of all ranks match up and
 *    cannot deadlock (each step is one group of sends and receives).
 *  - Pipelined rounds (rf_part.pipelined: the round holds relays, sim/schedule.h) forward
 *    what arrives within the round. There the piece is the plan's chunk, every item is a
 *    message of its own (nothing merged per pair), and a message whose transfer has hop h
 *    carries piece k in step h + k, so the round has max(h + pieces) steps. A forward has
 *    hop h(after) + 1 and the same box and bytes as the item it forwards, so its piece k
 *    is exactly that item's piece k: it arrived on this rank in step h + k - 1 and was
 *    unpacked into the buffer the forward reads (after's destination buffer) before step
 *    h + k packs it (on NCCL all of it is in order on the rank's one stream). A forward of
 *    a local copy or of an earlier round's transfer has hop 0: its data is there before the
 *    round's first step. Deadlock-free as plain rounds are: both ends of a message know its
 *    hop and size, so they put each piece in the same step, messages of a step between one
 *    pair are posted in the same (transfer, destination) order on both, and every rank
 *    runs its groups in the same (round, step) order; the step in which a piece is sent
 *    never waits on a later step of any rank. Both ends must agree that a round is
 *    pipelined, which a sender alone cannot tell (the relay may be its receiver's), so
 *    rank 0 decides it for every rank.
 *  - Sends of one step with identical items (a run's box to several GPUs) share one
 *    packed copy in staging. The schedule bounds what a GPU sends and receives per round
 *    by the staging budget (in a pipelined round the sum of min(item, chunk)), so with
 *    that sharing staging never exceeds it; staging is sized from the steps themselves.
 *  - Broadcasts follow the round's messages, in (round, id) order on every member. The
 *    root broadcasts its whole tensor (after the emulated FP8 conversion) in pieces; each
 *    member receives a piece into staging and unpacks the part of its shard it holds.
 */
#include <stdlib.h>
#include <string.h>

#include "replay_int.h"

/* The box this GPU holds of tensor pt on a side, or false when it holds none. */
static bool held_box(const struct rf_side *side, const struct rf_part_tensor *pt, int gpu,
                     struct rf_box *box)
{
    struct rf_tensor t;
    rf_part_tensor_view(pt, &t);
    return rf_side_held_box(side, &t, gpu, box);
}

static bool box_inside(const struct rf_box *in, const struct rf_box *out, int ndim)
{
    for (int d = 0; d < ndim; d++)
        if (in->off[d] < out->off[d] || in->off[d] + in->len[d] > out->off[d] + out->len[d])
            return false;
    return true;
}

/* Sizes a buffer and counts it in *need; rf_replay_alloc allocates it. */
static void plan_buf(struct rbuf *b, const struct rf_box *box, int ndim, int32_t elem,
                     int64_t *need)
{
    b->box = *box;
    b->numel = rf_box_numel(box, ndim);
    b->elem = elem;
    b->owned = true;
    *need += b->numel * elem;
}

/* Which buffers this GPU needs: its shards on both sides, and as a broadcast root (or a
 * gather destination) the whole tensor. Sized only: nothing is allocated before the whole
 * job's need has been checked against the memory it has. */
static int plan_buffers(struct rf_replay *r, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    int rc;
    for (int k = 0; k < RF_BUF_COUNT; k++) {
        r->buf[k] = calloc(p->n_tensors + 1, sizeof(struct rbuf));
        if (!r->buf[k])
            return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    bool *gather = calloc(p->n_tensors + 1, sizeof(bool));
    bool *root = calloc(p->n_tensors + 1, sizeof(bool));
    if (!gather || !root) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t k = 0; k < p->n_transfers; k++) {
        const struct rf_part_transfer *t = &p->transfers[k];
        if (t->dst_buf == RF_BUF_GATHER && rf_part_transfer_has_dst(t, r->rank))
            gather[p->boxes[t->box].tensor] = true;
    }
    for (size_t k = 0; k < p->n_colls; k++)
        if (p->colls[k].root == r->rank)
            root[p->colls[k].tensor] = true;
    for (size_t i = 0; i < p->n_tensors; i++) {
        const struct rf_part_tensor *pt = &p->tensors[i];
        struct rf_box box;
        if (held_box(&p->train, pt, r->rank, &box))
            plan_buf(&r->buf[RF_BUF_TRAIN][i], &box, pt->ndim, pt->train_elem, &r->need.train);
        if (held_box(&p->infer, pt, r->rank, &box))
            plan_buf(&r->buf[RF_BUF_INFER][i], &box, pt->ndim, pt->wire_elem, &r->need.infer);
        whole_box(pt, &box);
        if (gather[i] || (root[i] && pt->gather_elem))
            plan_buf(&r->buf[RF_BUF_GATHER][i], &box, pt->ndim, pt->gather_elem, &r->need.root);
        if (!root[i])
            continue;
        if (pt->gather_elem == pt->wire_elem) {
            /* The gather buffer itself; its pointer is copied once it is allocated. */
            r->buf[RF_BUF_WIRE][i] = r->buf[RF_BUF_GATHER][i];
            r->buf[RF_BUF_WIRE][i].owned = false;
        } else {
            plan_buf(&r->buf[RF_BUF_WIRE][i], &box, pt->ndim, pt->wire_elem, &r->need.root);
        }
    }
    rc = 0;
out:
    free(gather);
    free(root);
    return rc;
}

struct entry {
    int32_t round, kind, peer, xfer, i;
};

static int cmp_entry(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    int32_t kx[5] = {x->round, x->kind, x->peer, x->xfer, x->i};
    int32_t ky[5] = {y->round, y->kind, y->peer, y->xfer, y->i};
    for (int k = 0; k < 5; k++)
        if (kx[k] != ky[k])
            return (kx[k] > ky[k]) - (kx[k] < ky[k]);
    return 0;
}

static const char *buf_name(int k)
{
    static const char *const names[] = {"training shard", "inference shard", "gather buffer",
                                        "wire buffer"};
    return names[k];
}

/* Checks that the buffer item `it` uses on this side exists and holds its box. */
static int check_buffer(struct rf_replay *r, const struct item *it, int which, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    const struct rbuf *b = &r->buf[which][it->tensor];
    int ndim = p->tensors[it->tensor].ndim;
    if (!b->numel || !box_inside(&p->boxes[it->box].box, &b->box, ndim) || b->elem != it->elem)
        return rf_error_set(err, RF_EINVAL,
                            "transfer %d: GPU %d's %s of %s does not hold box %d (%d-byte "
                            "elements)",
                            p->transfers[it->xfer].id, r->rank, buf_name(which),
                            rf_part_tensor_name(p, it->tensor), it->box, it->elem);
    return 0;
}

static uint64_t hash_items(const struct item *it, size_t n)
{
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (uint64_t)(uint32_t)it[i].xfer) * 1099511628211ULL;
    return h;
}

static bool same_items(const struct item *a, const struct item *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (a[i].xfer != b[i].xfer)
            return false;
    return true;
}

static int build_messages(struct rf_replay *r, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    size_t n = 0;
    int rc;
    for (size_t k = 0; k < p->n_transfers; k++)
        n += (size_t)p->transfers[k].dst_count;
    struct entry *e = malloc((n + 1) * sizeof(*e));
    /* Per transfer: the first message that sends its box (pipelined rounds). */
    int32_t *first_send = malloc((p->n_transfers + 1) * sizeof(*first_send));
    r->items = malloc((n + 1) * sizeof(*r->items));
    r->msgs = malloc((n + 1) * sizeof(*r->msgs));
    if (!e || !first_send || !r->items || !r->msgs) {
        free(e);
        free(first_send);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    for (size_t k = 0; k < p->n_transfers; k++)
        first_send[k] = -1;
    n = 0;
    for (size_t k = 0; k < p->n_transfers; k++) {
        const struct rf_part_transfer *t = &p->transfers[k];
        if (t->round < 0 || t->round >= p->n_rounds) {
            rc = rf_error_set(err, RF_EINVAL, "transfer %d is in round %d of %d", t->id, t->round,
                              p->n_rounds);
            goto out;
        }
        for (int32_t i = 0; i < t->dst_count; i++) {
            int32_t d = t->dst + i * t->dst_stride, from = rf_part_sender(t, i);
            if (from == r->rank && d == r->rank)
                e[n++] = (struct entry){t->round, K_LOCAL, d, (int32_t)k, i};
            else if (from == r->rank)
                e[n++] = (struct entry){t->round, K_SEND, d, (int32_t)k, i};
            else if (d == r->rank)
                e[n++] = (struct entry){t->round, K_RECV, from, (int32_t)k, i};
        }
    }
    qsort(e, n, sizeof(*e), cmp_entry);
    for (size_t j = 0; j < n; j++) {
        const struct rf_part_transfer *t = &p->transfers[e[j].xfer];
        struct item *it = &r->items[j];
        const struct rf_part_tensor *pt;
        it->xfer = e[j].xfer;
        it->box = t->box;
        it->tensor = p->boxes[t->box].tensor;
        pt = &p->tensors[it->tensor];
        /* A chain member forwards the copy it received. */
        it->src_buf = t->chain && e[j].i > 0 ? t->dst_buf : t->src_buf;
        it->dst_buf = t->dst_buf;
        it->elem = t->dst_buf == RF_BUF_GATHER ? pt->gather_elem : pt->wire_elem;
        it->bytes = t->bytes;
        if (e[j].kind != K_RECV && (rc = check_buffer(r, it, it->src_buf, err)) < 0)
            goto out;
        if (e[j].kind != K_SEND && (rc = check_buffer(r, it, it->dst_buf, err)) < 0)
            goto out;
        /* In a pipelined round every item is a message of its own, which starts at its
         * transfer's hop: piece k of a forward then waits on piece k of one item only. */
        bool own = p->pipelined[e[j].round];
        if (j == 0 || own || e[j].round != e[j - 1].round || e[j].kind != e[j - 1].kind ||
            e[j].peer != e[j - 1].peer) {
            r->msgs[r->n_msgs] = (struct msg){.round = e[j].round,
                                              .peer = e[j].peer,
                                              .kind = e[j].kind,
                                              .first = j,
                                              .piece = own ? r->chunk : r->piece,
                                              .hop = own ? rf_part_hop(t, e[j].i) : 0,
                                              .content = (int32_t)r->n_msgs};
            r->n_msgs++;
        }
        struct msg *m = &r->msgs[r->n_msgs - 1];
        it->at = align_up(m->bytes, it->elem);
        m->bytes = it->at + it->bytes;
        m->n++;
    }
    r->n_items = n;
    for (size_t i = 0; i < r->n_msgs; i++) {
        struct msg *m = &r->msgs[i];
        int64_t pieces = (m->bytes + m->piece - 1) / m->piece;
        if (pieces + m->hop > INT32_MAX) {
            rc = rf_error_set(err, RF_EINVAL,
                              "transfer %d: %lld bytes in pieces of %lld from step %d need more "
                              "than 2^31 steps",
                              p->transfers[r->items[m->first].xfer].id, (long long)m->bytes,
                              (long long)m->piece, m->hop);
            goto out;
        }
        m->pieces = (int32_t)pieces;
        m->hash = hash_items(&r->items[m->first], m->n);
        if (m->kind != K_SEND)
            continue;
        if (p->pipelined[m->round]) {
            /* Its one item's transfer run sends the same box to each of its GPUs. */
            int32_t x = r->items[m->first].xfer;
            if (first_send[x] < 0)
                first_send[x] = (int32_t)i;
            else
                m->content = first_send[x];
            continue;
        }
        /* Identical sends of the round share their packed bytes. */
        for (size_t j = i; j-- > 0 && r->msgs[j].round == m->round && r->msgs[j].kind == K_SEND;) {
            const struct msg *o = &r->msgs[j];
            if (o->content == (int32_t)j && o->hash == m->hash && o->n == m->n &&
                same_items(&r->items[o->first], &r->items[m->first], m->n)) {
                m->content = (int32_t)j;
                break;
            }
        }
    }
    rc = 0;
out:
    free(e);
    free(first_send);
    return rc;
}

static const struct rf_part *sort_part; /* qsort has no context argument in C11 */

static int cmp_coll_idx(const void *a, const void *b)
{
    const struct rf_part_collective *x = &sort_part->colls[*(const int32_t *)a];
    const struct rf_part_collective *y = &sort_part->colls[*(const int32_t *)b];
    if (x->round != y->round)
        return (x->round > y->round) - (x->round < y->round);
    return (x->id > y->id) - (x->id < y->id);
}

static int cmp_int32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The distinct peers of this rank's messages and the broadcast rings it is in: what the
 * backend's communication library connects at first use (rf_replay_comm_use). */
static int comm_use(struct rf_replay *r, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    r->send_peers = malloc((r->n_msgs + 1) * sizeof(int32_t));
    r->recv_peers = malloc((r->n_msgs + 1) * sizeof(int32_t));
    if (!r->send_peers || !r->recv_peers)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (size_t i = 0; i < r->n_msgs; i++) {
        const struct msg *m = &r->msgs[i];
        if (m->kind == K_SEND && m->peer != r->rank)
            r->send_peers[r->n_send_peers++] = m->peer;
        else if (m->kind == K_RECV && m->peer != r->rank)
            r->recv_peers[r->n_recv_peers++] = m->peer;
    }
    for (int dir = 0; dir < 2; dir++) {
        int32_t *v = dir ? r->recv_peers : r->send_peers;
        size_t *n = dir ? &r->n_recv_peers : &r->n_send_peers, k = 0;
        qsort(v, *n, sizeof(int32_t), cmp_int32);
        for (size_t i = 0; i < *n; i++)
            if (k == 0 || v[i] != v[k - 1])
                v[k++] = v[i];
        *n = k;
    }
    for (size_t g = 0; g < p->n_groups; g++) {
        const struct rf_part_group *gr = &p->groups[g];
        bool member = gr->root == r->rank, others = false;
        for (int32_t i = 0; i < gr->count; i++) {
            int32_t m = gr->first + i * gr->stride;
            member |= m == r->rank;
            others |= m != gr->root;
        }
        r->rings += member && others;
    }
    return 0;
}

/* Rounds, their steps, and the staging each step needs. */
static int build_rounds(struct rf_replay *r, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    size_t most = 0;
    r->rounds = calloc((size_t)p->n_rounds + 1, sizeof(*r->rounds));
    r->colls = malloc((p->n_colls + 1) * sizeof(int32_t));
    if (!r->rounds || !r->colls)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (size_t k = 0; k < p->n_colls; k++)
        r->colls[k] = (int32_t)k;
    sort_part = p;
    qsort(r->colls, p->n_colls, sizeof(int32_t), cmp_coll_idx);
    for (size_t i = 0; i < r->n_msgs; i++) {
        const struct msg *m = &r->msgs[i];
        if (m->round < 0 || m->round >= p->n_rounds)
            return rf_error_set(err, RF_EINVAL, "a transfer is in round %d of %d", m->round,
                                p->n_rounds);
        struct round_prog *rp = &r->rounds[m->round];
        if (rp->n_msgs == 0)
            rp->msg0 = i;
        rp->n_msgs++;
        if (m->kind != K_LOCAL && m->hop + m->pieces > rp->steps)
            rp->steps = m->hop + m->pieces;
    }
    for (size_t k = 0; k < p->n_colls; k++) {
        const struct rf_part_collective *c = &p->colls[r->colls[k]];
        if (c->round < 0 || c->round >= p->n_rounds)
            return rf_error_set(err, RF_EINVAL, "a broadcast is in round %d of %d", c->round,
                                p->n_rounds);
        struct round_prog *rp = &r->rounds[c->round];
        if (rp->n_colls == 0)
            rp->coll0 = k;
        rp->n_colls++;
        if (c->root != r->rank) {
            int64_t need = c->bytes < r->piece ? c->bytes : r->piece;
            if (need > r->recv_stage_bytes)
                r->recv_stage_bytes = need;
        }
    }
    for (int32_t rd = 0; rd < p->n_rounds; rd++) {
        const struct round_prog *rp = &r->rounds[rd];
        if (rp->n_msgs > most)
            most = rp->n_msgs;
        for (int32_t s = 0; s < rp->steps; s++) {
            int64_t send = 0, recv = 0;
            for (size_t i = rp->msg0; i < rp->msg0 + rp->n_msgs; i++) {
                const struct msg *m = &r->msgs[i];
                int32_t k = piece_at(m, s);
                if (k < 0)
                    continue;
                if (m->kind == K_SEND && m->content == (int32_t)i)
                    send = align_up(send, STAGE_ALIGN) + piece_len(m->piece, m->bytes, k);
                else if (m->kind == K_RECV)
                    recv = align_up(recv, STAGE_ALIGN) + piece_len(m->piece, m->bytes, k);
            }
            if (send > r->send_stage_bytes)
                r->send_stage_bytes = send;
            if (recv > r->recv_stage_bytes)
                r->recv_stage_bytes = recv;
        }
    }
    r->sends = malloc((most + 1) * sizeof(*r->sends));
    r->recvs = malloc((most + 1) * sizeof(*r->recvs));
    if (!r->sends || !r->recvs)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    r->need.staging = r->send_stage_bytes + r->recv_stage_bytes;
    return comm_use(r, err);
}

int rf_replay_new(struct rf_replay **out, const struct rf_part *part, int rank,
                  struct rf_backend *be, struct rf_error *err)
{
    struct rf_replay *r = calloc(1, sizeof(*r));
    int rc;
    if (!r)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    r->part = part;
    r->rank = rank;
    r->be = be;
    /* Pieces are a multiple of 8 bytes, so a piece boundary never splits an element. */
    r->piece = part->staging_bytes / 8 * 8;
    if (r->piece < 8)
        r->piece = 8;
    r->chunk = part->chunk_bytes > 0 ? part->chunk_bytes / 8 * 8 : r->piece;
    if (r->chunk < 8)
        r->chunk = 8;
    if ((rc = plan_buffers(r, err)) < 0 || (rc = build_messages(r, err)) < 0 ||
        (rc = build_rounds(r, err)) < 0 || (rc = replay_delta_plan(r, err)) < 0 ||
        (rc = replay_merge_plan(r, err)) < 0) {
        rf_replay_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int rf_replay_alloc(struct rf_replay *r, struct rf_error *err)
{
    const struct rf_part *p = r->part;
    int rc;
    for (int k = 0; k < RF_BUF_COUNT; k++)
        for (size_t i = 0; i < p->n_tensors; i++) {
            struct rbuf *b = &r->buf[k][i];
            if (b->numel && b->owned &&
                (rc = r->be->alloc(r->be, &b->ptr, (size_t)(b->numel * b->elem), err)) < 0)
                return rc;
        }
    for (size_t i = 0; i < p->n_tensors; i++)
        if (r->buf[RF_BUF_WIRE][i].numel && !r->buf[RF_BUF_WIRE][i].owned)
            r->buf[RF_BUF_WIRE][i].ptr = r->buf[RF_BUF_GATHER][i].ptr;
    if (r->send_stage_bytes &&
        (rc = r->be->alloc(r->be, (void **)&r->send_stage, (size_t)r->send_stage_bytes, err)) < 0)
        return rc;
    if (r->recv_stage_bytes &&
        (rc = r->be->alloc(r->be, (void **)&r->recv_stage, (size_t)r->recv_stage_bytes, err)) < 0)
        return rc;
    if ((rc = replay_delta_alloc(r, err)) < 0 || (rc = replay_merge_alloc(r, err)) < 0)
        return rc;
    /* A mark per round's end, and one after a LoRA merge. */
    return r->be->timers(r->be, p->n_rounds + 2, err);
}

void rf_replay_free(struct rf_replay *r)
{
    if (!r)
        return;
    for (int k = 0; k < RF_BUF_COUNT; k++) {
        for (size_t i = 0; r->buf[k] && i < r->part->n_tensors; i++)
            if (r->buf[k][i].ptr && r->buf[k][i].owned)
                r->be->free(r->be, r->buf[k][i].ptr);
        free(r->buf[k]);
    }
    replay_delta_free(r);
    replay_merge_free(r);
    if (r->send_stage)
        r->be->free(r->be, r->send_stage);
    if (r->recv_stage)
        r->be->free(r->be, r->recv_stage);
    free(r->items);
    free(r->msgs);
    free(r->rounds);
    free(r->colls);
    free(r->sends);
    free(r->recvs);
    free(r->send_peers);
    free(r->recv_peers);
    free(r);
}

void rf_replay_memory(const struct rf_replay *r, struct rf_replay_need *need)
{
    *need = r->need;
}

void rf_replay_comm_use(const struct rf_replay *r, struct rf_comm_use *use)
{
    *use = (struct rf_comm_use){r->send_peers, r->recv_peers, r->n_send_peers, r->n_recv_peers,
                                r->rings};
}
