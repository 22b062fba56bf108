/* Deriving and shipping each rank's part. Arrays of plain structs travel as bytes (every
 * rank runs the same binary on the same kind of machine); large ones in 1 GiB chunks,
 * since MPI counts are int. */
#include "part.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"

#define CHUNK ((size_t)1 << 30)

int32_t rf_part_gpus(const struct rf_stored_run *run)
{
    /* The inference side's idle GPUs are ranks too (its span): a broadcast passes them. */
    int64_t n = run->train.first_gpu + run->train.gpus;
    if (run->infer.first_gpu + run->infer.place.span > n)
        n = run->infer.first_gpu + run->infer.place.span;
    if (rf_plan_gpu_extent(&run->plan) > n)
        n = rf_plan_gpu_extent(&run->plan);
    return (int32_t)n;
}

bool rf_part_transfer_has_dst(const struct rf_part_transfer *t, int32_t gpu)
{
    return rf_gpu_run_has(t->dst, t->dst_count, t->dst_stride, gpu);
}

/* Is gpu among first + i * stride (the root aside)? */
static bool among(const struct rf_part_group *g, int32_t gpu)
{
    return rf_gpu_run_has(g->first, g->count, g->stride, gpu);
}

bool rf_part_group_has(const struct rf_part_group *g, int32_t gpu)
{
    return gpu == g->root || among(g, gpu);
}

void rf_part_tensor_view(const struct rf_part_tensor *pt, struct rf_tensor *t)
{
    memset(t, 0, sizeof(*t));
    t->ndim = pt->ndim;
    memcpy(t->shape, pt->shape, sizeof(t->shape));
    t->cls = (enum rf_class)pt->cls;
    t->layer = pt->layer;
    t->scale_of = -1;
    if (rf_class_expert(t->cls))
        t->experts = t->shape[0];
}

const char *rf_part_tensor_name(const struct rf_part *p, int32_t tensor)
{
    if (!p->names || tensor < 0 || (size_t)tensor >= p->n_tensors)
        return "?";
    return p->names + p->tensors[tensor].name_at;
}

static int64_t box_numel(const struct rf_plan_box *b, int ndim)
{
    return rf_box_numel(&b->box, ndim);
}

static int64_t tensor_numel(const struct rf_part_tensor *pt)
{
    int64_t n = 1;
    for (int d = 0; d < pt->ndim; d++)
        n *= pt->shape[d];
    return n;
}

/* Element sizes per tensor, from the wire dtype and what gathers carry. */
static int derive_tensors(struct rf_part *p, const struct rf_stored_run *run, struct rf_error *err)
{
    const struct rf_plan *plan = &run->plan;
    size_t names = 0;
    for (size_t i = 0; i < plan->n_tensors; i++)
        names += strlen(plan->tensors[i].name) + 1;
    p->tensors = calloc(plan->n_tensors + 1, sizeof(*p->tensors));
    p->names = malloc(names + 1);
    if (!p->tensors || !p->names)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    p->n_tensors = plan->n_tensors;
    p->names_bytes = names;
    names = 0;
    for (size_t i = 0; i < plan->n_tensors; i++) {
        const struct rf_tensor *t = &plan->tensors[i];
        struct rf_part_tensor *pt = &p->tensors[i];
        pt->ndim = t->ndim;
        memcpy(pt->shape, t->shape, sizeof(pt->shape));
        for (int d = t->ndim; d < RF_MAX_DIMS; d++)
            pt->shape[d] = 1;
        pt->cls = t->cls;
        pt->layer = t->layer;
        pt->strategy = plan->tensor_strategy[i];
        pt->wire_elem = (int32_t)rf_dtype_size(plan->wire_dtype[i]);
        pt->delta = t->delta;
        pt->packed = rf_dtype_4bit(plan->wire_dtype[i]);
        if (pt->packed && t->shape[t->ndim - 1] % 2)
            return rf_error_set(err, RF_EINVAL, "%s: a 4-bit tensor of odd last dim %lld", t->name,
                                (long long)t->shape[t->ndim - 1]);
        if (pt->packed)
            pt->shape[t->ndim - 1] /= 2;
        pt->lora = t->lora;
        pt->lora_merge = t->lora_merge;
        pt->name_at = (int32_t)names;
        strcpy(p->names + names, t->name);
        names += strlen(t->name) + 1;
    }
    for (size_t k = 0; k < plan->n_transfers; k++) {
        const struct rf_transfer *t = &plan->transfers[k];
        const struct rf_plan_box *b = &plan->boxes[t->box];
        struct rf_part_tensor *pt = &p->tensors[b->tensor];
        int64_t n = box_numel(b, pt->ndim);
        if (pt->packed) {
            /* Its boxes are packed pairs: an even offset and length along the last dim. */
            const struct rf_box *x = &b->box;
            if (x->off[pt->ndim - 1] % 2 || x->len[pt->ndim - 1] % 2)
                return rf_error_set(err, RF_EINVAL,
                                    "transfer %zu: box %d of 4-bit %s splits "
                                    "a packed pair",
                                    k, t->box, rf_part_tensor_name(p, b->tensor));
            n /= 2;
        }
        /* A delta box travels as its encoding (sim/delta.h), in the wire's elements. */
        if (pt->delta.enc != RF_DELTA_NONE && t->phase == RF_PHASE_DELIVER) {
            int64_t want = n > 0 ? rf_delta_bytes(&pt->delta, n, (size_t)pt->wire_elem) : -1;
            if (t->bytes != want)
                return rf_error_set(
                    err, RF_EINVAL,
                    "transfer %zu: %lld bytes, but box %d of %s encodes as %s in "
                    "%lld",
                    k, (long long)t->bytes, t->box, rf_part_tensor_name(p, b->tensor),
                    rf_delta_enc_name(rf_delta_pick(&pt->delta, n, (size_t)pt->wire_elem)),
                    (long long)want);
            continue;
        }
        if (n <= 0 || t->bytes % n != 0)
            return rf_error_set(err, RF_EINVAL, "transfer %zu: %lld bytes for %lld elements", k,
                                (long long)t->bytes, (long long)n);
        int32_t elem = (int32_t)(t->bytes / n);
        if (t->phase == RF_PHASE_GATHER) {
            if (pt->gather_elem && pt->gather_elem != elem)
                return rf_error_set(err, RF_EINVAL, "%s: gathers of %d and %d bytes per element",
                                    rf_part_tensor_name(p, b->tensor), pt->gather_elem, elem);
            pt->gather_elem = elem;
        } else if (elem != pt->wire_elem) {
            return rf_error_set(err, RF_EINVAL,
                                "transfer %zu: %d bytes per element, the wire dtype has %d", k,
                                elem, pt->wire_elem);
        }
    }
    for (size_t i = 0; i < p->n_tensors; i++) {
        struct rf_part_tensor *pt = &p->tensors[i];
        /* A reshard sender packs wire elements: the FP8 conversion of its shard happens
         * before packing, as in NeMo-RL. A broadcast sender gathers its native elements
         * and the root converts. */
        pt->train_elem = pt->gather_elem ? pt->gather_elem : pt->wire_elem;
        /* A packed tensor's gathered pairs of BF16 (4 bytes) become a byte of two 4-bit
         * values at the root. */
        bool fp4 = pt->packed && pt->gather_elem == 4 && pt->wire_elem == 1;
        if (pt->gather_elem && pt->gather_elem != pt->wire_elem && !fp4 &&
            !(pt->gather_elem == 2 && pt->wire_elem == 1 && !pt->packed))
            return rf_error_set(err, RF_EINVAL,
                                "%s: the root would convert %d-byte to %d-byte elements; only "
                                "BF16 -> FP8 is emulated",
                                rf_part_tensor_name(p, (int32_t)i), pt->gather_elem, pt->wire_elem);
    }
    return 0;
}

/* A copy within one GPU: it moves nothing through staging and runs before the round's
 * messages (exec/replay.c). */
static bool is_local_copy(const struct rf_part_transfer *t)
{
    return t->src == t->dst && t->dst_count == 1;
}

/* Checks transfer k (already filled in, as is every earlier one) against the schedule's
 * contract for relays (sim/schedule.h): what it forwards (`after`, or -1) is an earlier
 * transfer that delivers the same box, as many bytes, to its sender in the same or an
 * earlier round, and its hop is the one the rule gives, which the replay's steps rely on:
 * 0, or in the round of what it forwards, that transfer's hop + 1, unless that is a local
 * copy (done before the round's messages, so nothing to wait for). */
static int check_relay(const struct rf_part *p, size_t k, int32_t after, struct rf_error *err)
{
    const struct rf_part_transfer *q = &p->transfers[k];
    char why[96];
    int32_t want = 0;
    if (q->hop < 0 || q->hop > RF_GPUS_MAX)
        return rf_error_set(err, RF_EINVAL, "transfer %zu has hop %d, not within 0..2^20", k,
                            q->hop);
    snprintf(why, sizeof(why), "it forwards nothing");
    if (after >= 0) {
        if ((size_t)after >= k)
            return rf_error_set(err, RF_EINVAL,
                                "transfer %zu depends on transfer %d, which is not an earlier one",
                                k, after);
        const struct rf_part_transfer *a = &p->transfers[after];
        if (!rf_part_transfer_has_dst(a, q->src) || a->box != q->box || a->round > q->round)
            return rf_error_set(err, RF_EINVAL,
                                "transfer %zu depends on transfer %d, which does not deliver "
                                "its box to GPU %d in the same or an earlier round",
                                k, after, q->src);
        if (a->bytes != q->bytes)
            return rf_error_set(err, RF_EINVAL,
                                "transfer %zu forwards box %d as %lld bytes, transfer %d "
                                "delivered it as %lld",
                                k, q->box, (long long)q->bytes, after, (long long)a->bytes);
        if (a->round == q->round && is_local_copy(q) && !is_local_copy(a))
            return rf_error_set(err, RF_EINVAL,
                                "transfer %zu, a copy on GPU %d, copies in round %d what "
                                "transfer %d delivers in that round: a round's local copies "
                                "run before its messages",
                                k, q->src, q->round, after);
        if (a->round < q->round) {
            snprintf(why, sizeof(why), "transfer %d, which it forwards, is in an earlier round",
                     after);
        } else if (is_local_copy(a)) {
            snprintf(why, sizeof(why), "transfer %d, which it forwards, is a local copy", after);
        } else {
            /* Member k of a chain receives at the chain's hop + k. */
            int32_t member = a->chain && a->dst_stride ? (q->src - a->dst) / a->dst_stride : 0;
            want = rf_part_hop(a, member) + 1;
            snprintf(why, sizeof(why),
                     "transfer %d's hop at GPU %d + 1: it forwards it in that round", after,
                     q->src);
        }
    }
    if (q->hop != want)
        return rf_error_set(err, RF_EINVAL,
                            "transfer %zu in round %d has hop %d; the schedule's rule gives %d "
                            "(%s)",
                            k, q->round, q->hop, want, why);
    return 0;
}

static int cmp_coll_order(const void *a, const void *b)
{
    const struct rf_part_collective *x = a, *y = b;
    if (x->round != y->round)
        return (x->round > y->round) - (x->round < y->round);
    return (x->id > y->id) - (x->id < y->id);
}

int rf_part_derive(struct rf_part *p, const struct rf_stored_run *run, struct rf_error *err)
{
    const struct rf_plan *plan = &run->plan;
    int rc;

    memset(p, 0, sizeof(*p));
    p->run_id = run->id;
    p->n_gpus = rf_part_gpus(run);
    p->n_rounds = plan->n_rounds;
    p->strategy = plan->strategy;
    p->staging_bytes = plan->staging_bytes;
    p->chunk_bytes = plan->chunk_bytes;
    p->net_channels_per_peer = plan->net_channels_per_peer;
    /* Figures the planner never writes (an edited or foreign database): a replay staged by
     * 0 bytes would run piece by piece, 8 bytes at a time, and be stored as measured. */
    if (p->staging_bytes <= 0 || p->chunk_bytes < 0 || p->n_rounds < 0) {
        rc = rf_error_set(err, RF_EINVAL,
                          "run %lld: stored staging %lld bytes, chunk %lld bytes, %d rounds: "
                          "the planner stores at least 1 byte of staging and no negative "
                          "figure (was the database edited?)",
                          (long long)run->id, (long long)p->staging_bytes,
                          (long long)p->chunk_bytes, p->n_rounds);
        goto fail;
    }
    if (p->net_channels_per_peer < 0) {
        rc = rf_error_set(err, RF_EINVAL, "run %lld: %d NCCL channels per network peer",
                          (long long)run->id, p->net_channels_per_peer);
        goto fail;
    }
    if ((rc = derive_tensors(p, run, err)) < 0)
        goto fail;
    p->boxes = malloc((plan->n_boxes + 1) * sizeof(*p->boxes));
    p->transfers = calloc(plan->n_transfers + 1, sizeof(*p->transfers));
    p->colls = calloc(plan->n_collectives + 1, sizeof(*p->colls));
    p->groups = calloc(plan->n_collectives + 1, sizeof(*p->groups));
    p->pipelined = calloc((size_t)(p->n_rounds > 0 ? p->n_rounds : 0) + 1, 1);
    if (!p->boxes || !p->transfers || !p->colls || !p->groups || !p->pipelined) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto fail;
    }
    if (plan->n_boxes)
        memcpy(p->boxes, plan->boxes, plan->n_boxes * sizeof(*p->boxes));
    p->n_boxes = plan->n_boxes;
    for (size_t k = 0; k < p->n_boxes; k++) {
        const struct rf_part_tensor *pt = &p->tensors[p->boxes[k].tensor];
        if (pt->packed) {
            p->boxes[k].box.off[pt->ndim - 1] /= 2;
            p->boxes[k].box.len[pt->ndim - 1] /= 2;
        }
    }

    for (size_t k = 0; k < plan->n_transfers; k++) {
        const struct rf_transfer *t = &plan->transfers[k];
        struct rf_part_transfer *q = &p->transfers[k];
        *q = (struct rf_part_transfer){.id = (int32_t)k,
                                       .box = t->box,
                                       .src = t->src,
                                       .dst = t->dst,
                                       .dst_count = t->dst_count,
                                       .dst_stride = t->dst_count > 1 ? t->dst_stride : 0,
                                       .round = t->round,
                                       .hop = t->hop,
                                       .chain = (int8_t)(t->chain != 0),
                                       .bytes = t->bytes};
        if (q->chain &&
            (q->dst_count < 2 || q->dst_stride == 0 || rf_part_transfer_has_dst(q, q->src))) {
            rc = rf_error_set(err, RF_EINVAL,
                              "transfer %zu: a chain needs 2 or more distinct members, none its "
                              "source",
                              k);
            goto fail;
        }
        q->dst_buf = t->phase == RF_PHASE_GATHER ? RF_BUF_GATHER : RF_BUF_INFER;
        q->src_buf = RF_BUF_TRAIN;
        if (t->round < 0 || t->round >= plan->n_rounds) {
            rc = rf_error_set(err, RF_EINVAL, "transfer %zu is in round %d of %d", k, t->round,
                              plan->n_rounds);
            goto fail;
        }
        if ((rc = check_relay(p, k, t->after, err)) < 0)
            goto fail;
        if (t->after >= 0)
            q->src_buf = p->transfers[t->after].dst_buf;
        int32_t tensor = plan->boxes[t->box].tensor;
        if (t->phase == RF_PHASE_GATHER && p->tensors[tensor].strategy != RF_STRAT_BROADCAST) {
            rc = rf_error_set(err, RF_EINVAL, "transfer %zu gathers %s, which is not broadcast", k,
                              rf_part_tensor_name(p, tensor));
            goto fail;
        }
    }
    p->n_transfers = plan->n_transfers;
    /* A round is pipelined when it holds a relayed transfer: one that forwards, or one that
     * is forwarded (the schedule keeps other transfers out of such rounds). */
    for (size_t k = 0; k < p->n_transfers; k++) {
        int32_t after = plan->transfers[k].after;
        if (p->transfers[k].chain)
            p->pipelined[p->transfers[k].round] = 1;
        if (after < 0)
            continue;
        p->pipelined[p->transfers[k].round] = 1;
        p->pipelined[p->transfers[after].round] = 1;
        if (p->chunk_bytes <= 0) {
            rc = rf_error_set(err, RF_EINVAL,
                              "run %lld relays (transfer %zu) with a pipeline chunk of %lld "
                              "bytes",
                              (long long)run->id, k, (long long)p->chunk_bytes);
            goto fail;
        }
    }

    for (size_t k = 0; k < plan->n_collectives; k++) {
        const struct rf_collective *c = &plan->collectives[k];
        const struct rf_part_tensor *pt = &p->tensors[c->tensor];
        if (c->bytes != tensor_numel(pt) * pt->wire_elem) {
            rc = rf_error_set(err, RF_EINVAL, "collective %zu: %lld bytes are not all of %s", k,
                              (long long)c->bytes, rf_part_tensor_name(p, c->tensor));
            goto fail;
        }
        p->colls[k] = (struct rf_part_collective){.id = (int32_t)k,
                                                  .tensor = c->tensor,
                                                  .round = c->round,
                                                  .root = c->root,
                                                  .bytes = c->bytes};
    }
    p->n_colls = plan->n_collectives;
    /* Groups are numbered in the order the replay first meets them, so every rank creates
     * their communicators in the same order. */
    struct rf_part_collective *order = malloc((p->n_colls + 1) * sizeof(*order));
    if (!order) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto fail;
    }
    memcpy(order, p->colls, p->n_colls * sizeof(*order));
    qsort(order, p->n_colls, sizeof(*order), cmp_coll_order);
    for (size_t i = 0; i < p->n_colls; i++) {
        const struct rf_collective *c = &plan->collectives[order[i].id];
        struct rf_part_group g = {c->root, c->first_gpu, c->gpu_count,
                                  c->gpu_count > 1 ? c->gpu_stride : 0};
        size_t j = 0;
        while (j < p->n_groups && memcmp(&p->groups[j], &g, sizeof(g)) != 0)
            j++;
        if (j == p->n_groups)
            p->groups[p->n_groups++] = g;
        p->colls[order[i].id].group = (int32_t)j;
    }
    free(order);

    for (size_t k = 0; k < plan->n_transfers; k++) {
        const struct rf_part_transfer *t = &p->transfers[k];
        for (int32_t i = 0; i < t->dst_count; i++) {
            if (t->dst + i * t->dst_stride == rf_part_sender(t, i))
                continue;
            p->moved_bytes += t->bytes;
            if (t->dst_buf == RF_BUF_INFER)
                p->payload_bytes += t->bytes;
        }
    }
    /* A broadcast moves its bytes to every member and writes them into those that hold an
     * inference shard: not the idle GPUs between engines placed domain by domain
     * (plan_broadcast). Counted once per group: a group spans the side. */
    int64_t *holders = calloc(p->n_groups + 1, sizeof(int64_t));
    if (!holders) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t j = 0; j < p->n_groups; j++) {
        const struct rf_part_group *g = &p->groups[j];
        for (int32_t i = 0; i < g->count; i++) {
            int64_t gpu = (int64_t)g->first + (int64_t)i * g->stride;
            holders[j] += gpu != g->root && rf_side_has_gpu(&run->infer, gpu);
        }
    }
    for (size_t k = 0; k < p->n_colls; k++) {
        const struct rf_part_group *g = &p->groups[p->colls[k].group];
        int64_t receivers = g->count - (among(g, g->root) ? 1 : 0);
        p->moved_bytes += p->colls[k].bytes * receivers;
        p->payload_bytes += p->colls[k].bytes * holders[p->colls[k].group];
    }
    free(holders);
    /* The sides: copied, with their own stage arrays and meshes. */
    struct rf_side *dst[2] = {&p->train, &p->infer};
    const struct rf_side *src[2] = {&run->train, &run->infer};
    for (int s = 0; s < 2; s++) {
        *dst[s] = *src[s];
        dst[s]->stage_layers = malloc(sizeof(int) * (size_t)src[s]->pp);
        dst[s]->layer_stage = NULL;
        if (!dst[s]->stage_layers) {
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
            goto fail;
        }
        memcpy(dst[s]->stage_layers, src[s]->stage_layers, sizeof(int) * (size_t)src[s]->pp);
        if ((rc = rf_side_init(dst[s], src[s]->n_layers, err)) < 0)
            goto fail;
    }
    return 0;
fail:
    rf_part_release(p);
    return rc;
}

int rf_part_select(const struct rf_part *whole, int rank, struct rf_part_transfer **transfers,
                   size_t *n_transfers, struct rf_part_collective **colls, size_t *n_colls,
                   struct rf_error *err)
{
    size_t nt = 0, nc = 0;
    for (int pass = 0; pass < 2; pass++) {
        nt = nc = 0;
        for (size_t k = 0; k < whole->n_transfers; k++) {
            const struct rf_part_transfer *t = &whole->transfers[k];
            if (t->src != rank && !rf_part_transfer_has_dst(t, rank))
                continue;
            if (pass)
                (*transfers)[nt] = *t;
            nt++;
        }
        for (size_t k = 0; k < whole->n_colls; k++) {
            const struct rf_part_collective *c = &whole->colls[k];
            if (!rf_part_group_has(&whole->groups[c->group], rank))
                continue;
            if (pass)
                (*colls)[nc] = *c;
            nc++;
        }
        if (pass == 0) {
            *transfers = malloc((nt + 1) * sizeof(**transfers));
            *colls = malloc((nc + 1) * sizeof(**colls));
            if (!*transfers || !*colls) {
                free(*transfers);
                free(*colls);
                *transfers = NULL;
                *colls = NULL;
                return rf_error_set(err, RF_ENOMEM, "out of memory");
            }
        }
    }
    *n_transfers = nt;
    *n_colls = nc;
    return 0;
}

/* Broadcasts bytes from rank 0 in chunks, waiting with the deadline. */
static int bcast_bytes(struct rf_ctl *ctl, void *buf, size_t bytes, struct rf_error *err)
{
    /* Every rank knows bytes (from the header), so all make the same calls. */
    for (size_t at = 0; at < bytes; at += CHUNK) {
        size_t n = bytes - at < CHUNK ? bytes - at : CHUNK;
        MPI_Request r;
        if (MPI_Ibcast((char *)buf + at, (int)n, MPI_BYTE, 0, ctl->comm, &r) != MPI_SUCCESS)
            return rf_error_set(err, RF_ECOMM, "MPI_Ibcast failed");
        int rc = rf_ctl_waitall(ctl, 1, &r, "the plan from rank 0", err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Point-to-point from rank 0 to `to` (or receive on `to`), in chunks. */
static int ship_bytes(struct rf_ctl *ctl, void *buf, size_t bytes, int to, struct rf_error *err)
{
    for (size_t at = 0; at < bytes; at += CHUNK) {
        size_t n = bytes - at < CHUNK ? bytes - at : CHUNK;
        MPI_Request r;
        int ok = ctl->rank == 0
                     ? MPI_Isend((char *)buf + at, (int)n, MPI_BYTE, to, 7, ctl->comm, &r)
                     : MPI_Irecv((char *)buf + at, (int)n, MPI_BYTE, 0, 7, ctl->comm, &r);
        if (ok != MPI_SUCCESS)
            return rf_error_set(err, RF_ECOMM, "MPI send of the plan failed");
        int rc = rf_ctl_waitall(ctl, 1, &r, "the plan from rank 0", err);
        if (rc < 0)
            return rc;
    }
    return 0;
}

/* Allocates *ptr for n elements on ranks other than 0, then broadcasts them. */
static int bcast_array(struct rf_ctl *ctl, void **ptr, size_t n, size_t size, struct rf_error *err)
{
    if (ctl->rank != 0) {
        *ptr = calloc(n + 1, size);
        if (!*ptr)
            return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    return bcast_bytes(ctl, *ptr, n * size, err);
}

struct header {
    int64_t run_id, staging_bytes, chunk_bytes, payload_bytes, moved_bytes;
    int32_t n_gpus, n_rounds, strategy, net_channels_per_peer;
    uint64_t n_tensors, names_bytes, n_boxes, n_groups;
    struct rf_side train, infer; /* pointers are not used on arrival */
};

int rf_part_share(struct rf_part *p, struct rf_ctl *ctl, struct rf_error *err)
{
    struct header h;
    int rc;
    struct rf_part_transfer *mine_t = NULL;
    struct rf_part_collective *mine_c = NULL;
    size_t n_mine_t = 0, n_mine_c = 0;

    memset(&h, 0, sizeof(h));
    if (ctl->rank == 0)
        h = (struct header){.run_id = p->run_id,
                            .staging_bytes = p->staging_bytes,
                            .chunk_bytes = p->chunk_bytes,
                            .payload_bytes = p->payload_bytes,
                            .moved_bytes = p->moved_bytes,
                            .n_gpus = p->n_gpus,
                            .n_rounds = p->n_rounds,
                            .strategy = p->strategy,
                            .net_channels_per_peer = p->net_channels_per_peer,
                            .n_tensors = p->n_tensors,
                            .names_bytes = p->names_bytes,
                            .n_boxes = p->n_boxes,
                            .n_groups = p->n_groups,
                            .train = p->train,
                            .infer = p->infer};
    else
        memset(p, 0, sizeof(*p));
    if ((rc = bcast_bytes(ctl, &h, sizeof(h), err)) < 0)
        return rc;
    if (ctl->rank != 0) {
        p->run_id = h.run_id;
        p->staging_bytes = h.staging_bytes;
        p->chunk_bytes = h.chunk_bytes;
        p->net_channels_per_peer = h.net_channels_per_peer;
        p->payload_bytes = h.payload_bytes;
        p->moved_bytes = h.moved_bytes;
        p->n_gpus = h.n_gpus;
        p->n_rounds = h.n_rounds;
        p->strategy = h.strategy;
        p->n_tensors = h.n_tensors;
        p->names_bytes = h.names_bytes;
        p->n_boxes = h.n_boxes;
        p->n_groups = h.n_groups;
        p->train = h.train;
        p->infer = h.infer;
        p->train.stage_layers = p->infer.stage_layers = NULL;
        p->train.layer_stage = p->infer.layer_stage = NULL;
    }
    if ((rc = bcast_array(ctl, (void **)&p->train.stage_layers, (size_t)h.train.pp, sizeof(int),
                          err)) < 0 ||
        (rc = bcast_array(ctl, (void **)&p->infer.stage_layers, (size_t)h.infer.pp, sizeof(int),
                          err)) < 0 ||
        (rc = bcast_array(ctl, (void **)&p->tensors, p->n_tensors, sizeof(*p->tensors), err)) < 0 ||
        (rc = bcast_array(ctl, (void **)&p->names, p->names_bytes, 1, err)) < 0 ||
        (rc = bcast_array(ctl, (void **)&p->boxes, p->n_boxes, sizeof(*p->boxes), err)) < 0 ||
        (rc = bcast_array(ctl, (void **)&p->groups, p->n_groups, sizeof(*p->groups), err)) < 0 ||
        (rc = bcast_array(ctl, (void **)&p->pipelined, (size_t)p->n_rounds, 1, err)) < 0)
        return rc;
    if (ctl->rank != 0 && ((rc = rf_side_init(&p->train, h.train.n_layers, err)) < 0 ||
                           (rc = rf_side_init(&p->infer, h.infer.n_layers, err)) < 0))
        return rc;

    /* Transfers and collectives: rank 0 selects and sends each rank its own. */
    if (ctl->rank == 0) {
        for (int r = 1; r < ctl->size; r++) {
            uint64_t n[2];
            if ((rc = rf_part_select(p, r, &mine_t, &n_mine_t, &mine_c, &n_mine_c, err)) < 0)
                return rc;
            n[0] = n_mine_t;
            n[1] = n_mine_c;
            if ((rc = ship_bytes(ctl, n, sizeof(n), r, err)) < 0 ||
                (rc = ship_bytes(ctl, mine_t, n_mine_t * sizeof(*mine_t), r, err)) < 0 ||
                (rc = ship_bytes(ctl, mine_c, n_mine_c * sizeof(*mine_c), r, err)) < 0)
                goto out;
            free(mine_t);
            free(mine_c);
            mine_t = NULL;
            mine_c = NULL;
        }
        if ((rc = rf_part_select(p, 0, &mine_t, &n_mine_t, &mine_c, &n_mine_c, err)) < 0)
            return rc;
    } else {
        uint64_t n[2];
        if ((rc = ship_bytes(ctl, n, sizeof(n), 0, err)) < 0)
            return rc;
        n_mine_t = n[0];
        n_mine_c = n[1];
        mine_t = malloc((n_mine_t + 1) * sizeof(*mine_t));
        mine_c = malloc((n_mine_c + 1) * sizeof(*mine_c));
        if (!mine_t || !mine_c) {
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
            goto out;
        }
        if ((rc = ship_bytes(ctl, mine_t, n_mine_t * sizeof(*mine_t), 0, err)) < 0 ||
            (rc = ship_bytes(ctl, mine_c, n_mine_c * sizeof(*mine_c), 0, err)) < 0)
            goto out;
    }
    free(p->transfers);
    free(p->colls);
    p->transfers = mine_t;
    p->n_transfers = n_mine_t;
    p->colls = mine_c;
    p->n_colls = n_mine_c;
    return 0;
out:
    free(mine_t);
    free(mine_c);
    return rc;
}

void rf_part_release(struct rf_part *p)
{
    if (!p)
        return;
    free(p->tensors);
    free(p->names);
    free(p->boxes);
    free(p->groups);
    free(p->pipelined);
    free(p->transfers);
    free(p->colls);
    rf_side_release(&p->train);
    rf_side_release(&p->infer);
    memset(p, 0, sizeof(*p));
}
