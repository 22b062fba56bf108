/* The planner's broadcast strategy: every shard of a tensor gathered to one training GPU
 * (the root a framework picks), then one broadcast collective over the inference side. */
#include "plan_int.h"

/* acc += the bytes of tensor ti in dtype dt, checked (a 4-bit tensor's packed pairs: its
 * boxes were checked even, so its elements are). */
static int tensor_bytes(struct planner *p, int32_t ti, enum rf_dtype dt, int64_t *acc)
{
    int64_t n = rf_tensor_numel(&p->plan->tensors[ti]);
    if (rf_dtype_4bit(dt))
        return planner_add_bytes(p, ti, acc, rf_dtype_bytes(dt, n), 1, "the tensor's bytes");
    return planner_add_bytes(p, ti, acc, n, (int64_t)rf_dtype_size(dt), "the tensor's bytes");
}

/* The classic path: every shard goes to one root on the training side (the exporting rank),
 * which then broadcasts the whole tensor to every inference GPU. */
int planner_broadcast(struct planner *p, int32_t ti, const struct rf_side *train,
                      const struct rf_side *infer)
{
    struct rf_plan *plan = p->plan;
    const struct rf_tensor *t = &plan->tensors[ti];
    int32_t root = (int32_t)train->first_gpu;
    struct rf_tally d = {0};
    int rc;

    /* A framework may root each tensor elsewhere (sim/framework.h): at the first GPU of
     * the tensor's stage, or at one of the holders of its first element in turn. A scale
     * tensor keeps the root its weight had: it is the tensor planned just before it. */
    if ((t->scale_of < 0 || p->bcast_root != RF_FW_ROOT_FIRST) &&
        (rc = planner_collect_cells(p, train, t->scale_of < 0 ? t : &plan->tensors[t->scale_of],
                                    &p->src)) < 0)
        return rc;
    if (p->bcast_root != RF_FW_ROOT_FIRST && p->src.n > 0) {
        if (p->bcast_root == RF_FW_ROOT_OWNER) {
            size_t nh = p->src.hstart[1] - p->src.hstart[0];
            root = p->src.holders[p->src.hstart[0] + (size_t)ti % nh];
        } else {
            root = INT32_MAX;
            for (size_t h = 0; h < p->src.hstart[p->src.n]; h++)
                if (p->src.holders[h] < root)
                    root = p->src.holders[h];
        }
    }

    if (t->scale_of < 0) {
        enum rf_dtype gdt = t->quant ? train->dtype : t->dtype;
        if ((rc = planner_cells_reserve(p, &p->dst, 1, 1)) < 0)
            return rc;
        p->dst.n = 1;
        p->dst.nh = 1;
        for (int dd = 0; dd < RF_MAX_DIMS; dd++) {
            p->dst.box[0].off[dd] = 0;
            p->dst.box[0].len[dd] = dd < t->ndim ? t->shape[dd] : 1;
        }
        p->dst.hstart[0] = 0;
        p->dst.hstart[1] = 1;
        p->dst.holders[0] = root;
        if ((rc = planner_plan_cells(p, ti, gdt, RF_PHASE_GATHER, false)) < 0 ||
            (rc = tensor_bytes(p, ti, gdt, &d.logical_bytes)) < 0)
            return rc;
    }

    /* The broadcast spans the inference side's idle GPUs too (engines placed with gaps,
     * rf_engine_place): they receive into staging and drop it. One collective over the span
     * rather than one per engine: a pipelined ring's bandwidth does not depend on its
     * length, while a collective per engine would send the tensor out of the root once per
     * engine. So every member is a hop the bytes move over (moved), and only the GPUs that
     * hold a shard are written into (payload). The sides were checked: no sum here
     * overflows. */
    int64_t bytes = 0, span = infer->place.span, first = infer->first_gpu;
    /* NeMo RL's model_update_group holds every training and inference rank: the
     * communicator covers both sides (and any GPUs between them, which relay too). */
    if (p->bcast_comm == RF_FW_COMM_ALL) {
        int64_t end = first + span, tend = train->first_gpu + train->place.span;
        first = train->first_gpu < first ? train->first_gpu : first;
        span = (tend > end ? tend : end) - first;
    }
    int64_t hops = span, receivers = infer->gpus;
    if (root >= first && root < first + span)
        hops--;
    if (rf_side_has_gpu(infer, root))
        receivers--;
    if ((rc = tensor_bytes(p, ti, plan->wire_dtype[ti], &bytes)) < 0 ||
        (rc = planner_add_bytes(p, ti, &d.payload_bytes, bytes, receivers,
                                "the broadcast's bytes")) < 0 ||
        (rc = planner_add_bytes(p, ti, &d.moved_bytes, bytes, hops, "the broadcast's bytes")) < 0 ||
        (rc = planner_add_bytes(p, ti, &d.logical_bytes, bytes, 1, "the broadcast's bytes")) < 0)
        return rc;
    if ((rc = RF_GROW(plan->collectives, plan->cap_collectives, plan->n_collectives + 1, p->err)) <
        0)
        return rc;
    plan->collectives[plan->n_collectives++] = (struct rf_collective){.kind = RF_COLL_BROADCAST,
                                                                      .tensor = ti,
                                                                      .root = root,
                                                                      .first_gpu = (int32_t)first,
                                                                      .gpu_count = (int32_t)span,
                                                                      .gpu_stride = 1,
                                                                      .bytes = bytes};
    d.collectives = 1;
    return planner_tally_add(p, ti, &d);
}
