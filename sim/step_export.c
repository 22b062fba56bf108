/* The framework's export as the step model costs it (sim/step_int.h): the gathers that put
 * whole tensors on the senders, as NCCL collectives on the training side's own groups
 * (Megatron-Bridge's PP broadcast and TP/EP all-gathers, slime's in-stage gathers, FSDP's
 * all-gather per parameter), each on its group's rings, with the NIC time it takes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"
#include "step_int.h"

bool step_is_expert(const struct rf_tensor *t)
{
    return rf_class_expert(t->cls);
}

/* Hugging Face tensors a model tensor stands for: a stacked expert tensor is one per
 * expert (what the exporters and the engines' loaders walk). */
int64_t step_hf_tensors(const struct rf_tensor *t)
{
    return t->experts > 0 ? t->experts : 1;
}

/* The weight a tensor belongs to (an FP8 scale tensor's weight, else itself). */
const struct rf_tensor *step_weight_of(const struct rf_plan *plan, size_t i)
{
    const struct rf_tensor *t = &plan->tensors[i];
    return t->scale_of >= 0 ? &plan->tensors[t->scale_of] : t;
}

/* Elements the first GPU of the tensor's stage holds on side s (coordinate 0 on every other
 * axis: torch.chunk's first chunk is the largest, so this is the busiest GPU's share). */
int64_t step_first_numel(const struct rf_side *s, const struct rf_tensor *t, int64_t *stage)
{
    struct rf_placement pl;
    const struct rf_mesh *mesh = rf_side_placement(s, t, &pl);
    int64_t coord[RF_MESH_MAX] = {0};
    if (pl.stage_axis >= 0)
        coord[pl.stage_axis] = pl.stage;
    if (stage)
        *stage = pl.stage_axis >= 0 ? pl.stage : 0;
    struct rf_box box;
    rf_placement_box(&pl, mesh, t->ndim, t->shape, coord, &box);
    return rf_box_numel(&box, t->ndim);
}

/* The GPUs of one mesh axis through the mesh's first GPU (the root's group on that axis). */
static int axis_ring(const struct rf_topology *topo, const struct rf_mesh *mesh, int axis,
                     struct rf_ring *ring, bool *have, struct rf_error *err)
{
    *have = false;
    if (axis < 0 || axis >= mesh->ndim || mesh->size[axis] < 2)
        return 0;
    int64_t n = mesh->size[axis];
    int32_t *gpus = malloc((size_t)n * sizeof(int32_t));
    if (!gpus)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (int64_t k = 0; k < n; k++)
        gpus[k] = (int32_t)(mesh->first_gpu + k * mesh->stride[axis]);
    int rc = rf_ring_init(ring, topo, gpus, (size_t)n, err);
    free(gpus);
    if (rc == 0)
        *have = true;
    return rc;
}

/* The seconds per byte a call on ring puts on its busiest NIC port: each distinct ring
 * carries bytes / C_g (an all-gather (N - 1) / N of that) over its links, and a port
 * several rings cross carries their sum. 0 when the rings stay inside one NVLink domain. */
static int nic_rate(const struct rf_ring *ring, const struct rf_topology *topo, enum rf_coll_op op,
                    double *out, struct rf_error *err)
{
    struct rf_ring_paths ps;
    *out = 0;
    int rc = rf_ring_paths_init(&ps, ring, topo, op, ring->gpus[0], err);
    if (rc < 0)
        return rc;
    double *load = calloc(topo->n_links, sizeof(double));
    if (!load) {
        rf_ring_paths_release(&ps);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    double per = 1.0 / ring->search_channels;
    if (op == RF_COLL_OP_ALLGATHER)
        per *= (ring->n_ranks - 1.0) / ring->n_ranks;
    for (int c = 0; c < ps.n; c++)
        for (size_t k = ps.start[c]; k < ps.start[c + 1]; k++) {
            const struct rf_link *l = &topo->links[ps.links[k]];
            if (l->kind != RF_LINK_NIC_OUT && l->kind != RF_LINK_NIC_IN)
                continue;
            load[ps.links[k]] += per / l->capacity;
            if (load[ps.links[k]] > *out)
                *out = load[ps.links[k]];
        }
    free(load);
    rf_ring_paths_release(&ps);
    return 0;
}

void step_export_rings_release(struct step_export_rings *x)
{
    if (x->has_pp)
        rf_ring_release(&x->pp);
    if (x->has_tp)
        rf_ring_release(&x->tp);
    if (x->has_ep)
        rf_ring_release(&x->ep);
    if (x->has_etp)
        rf_ring_release(&x->etp);
    if (x->has_dp)
        rf_ring_release(&x->dp);
    if (x->has_edp)
        rf_ring_release(&x->edp);
}

int step_export_rings_init(struct step_export_rings *x, const struct rf_topology *topo,
                           const struct rf_side *train, struct rf_error *err)
{
    int rc;
    memset(x, 0, sizeof(*x));
    if ((rc = axis_ring(topo, &train->dense, MG_PP, &x->pp, &x->has_pp, err)) < 0 ||
        (rc = axis_ring(topo, &train->dense, MG_TP, &x->tp, &x->has_tp, err)) < 0 ||
        (rc = axis_ring(topo, &train->expert, MG_EP, &x->ep, &x->has_ep, err)) < 0 ||
        (rc = axis_ring(topo, &train->expert, MG_ETP, &x->etp, &x->has_etp, err)) < 0 ||
        (x->has_pp && (rc = nic_rate(&x->pp, topo, RF_COLL_OP_BROADCAST, &x->nic_pp, err)) < 0) ||
        (x->has_tp && (rc = nic_rate(&x->tp, topo, RF_COLL_OP_ALLGATHER, &x->nic_tp, err)) < 0) ||
        (x->has_ep && (rc = nic_rate(&x->ep, topo, RF_COLL_OP_ALLGATHER, &x->nic_ep, err)) < 0) ||
        (x->has_etp && (rc = nic_rate(&x->etp, topo, RF_COLL_OP_ALLGATHER, &x->nic_etp, err)) < 0))
        step_export_rings_release(x);
    /* FSDP's groups: its shards are whole only after an all-gather over data parallelism. */
    else if (train->fsdp &&
             ((rc = axis_ring(topo, &train->dense, MG_DP, &x->dp, &x->has_dp, err)) < 0 ||
              (rc = axis_ring(topo, &train->expert, MG_EDP, &x->edp, &x->has_edp, err)) < 0 ||
              (x->has_dp &&
               (rc = nic_rate(&x->dp, topo, RF_COLL_OP_ALLGATHER, &x->nic_dp, err)) < 0) ||
              (x->has_edp &&
               (rc = nic_rate(&x->edp, topo, RF_COLL_OP_ALLGATHER, &x->nic_edp, err)) < 0)))
        step_export_rings_release(x);
    return rc;
}

/* calls collectives of `bytes` each on ring (0 when there is no such group); their busy
 * time on the busiest NIC port (nic s/B) is added to *nic_s. */
static double coll(const struct rf_ring *ring, bool have, const struct rf_topology *topo,
                   enum rf_coll_op op, int64_t calls, double bytes, double nic, double *nic_s,
                   int64_t *n_calls)
{
    if (!have || calls <= 0 || bytes <= 0)
        return 0;
    enum rf_nccl_proto proto;
    *n_calls += calls;
    *nic_s += (double)calls * bytes * nic;
    return (double)calls * rf_ring_time(ring, topo, op, (int64_t)ceil(bytes), &proto);
}

/* Megatron-Bridge's export of one weight on every training rank (frameworks.md 2.1): the
 * owning stage broadcasts its TP-local piece over the PP group, then a TP all-gather, and
 * experts go one local expert index at a time (PP broadcast and EP all-gather per index).
 * slime gathers within the stage only: no PP broadcast, experts by bucket. */
double step_export_gather(const struct rf_step_input *in, struct step_export_rings *x,
                          const struct rf_tensor *t, bool stage_only, int64_t *calls)
{
    const struct rf_side *train = in->train;
    enum rf_dtype dt = t->quant ? train->dtype : t->dtype;
    double piece = (double)step_first_numel(train, t, NULL) * (double)rf_dtype_size(dt);
    double full = (double)rf_tensor_numel(t) * (double)rf_dtype_size(dt);
    const struct rf_topology *topo = in->topo;
    double s = 0;
    /* FSDP (verl's default, full_tensor()): one all-gather per parameter over its data-
     * parallel group makes the TP-local piece whole first. */
    if (train->fsdp) {
        bool ex = step_is_expert(t);
        int64_t n = ex ? train->edp : train->dp;
        if (n > 1) {
            piece *= (double)n;
            s += ex ? coll(&x->edp, x->has_edp, topo, RF_COLL_OP_ALLGATHER, 1, piece, x->nic_edp,
                           &x->nic_s, calls)
                    : coll(&x->dp, x->has_dp, topo, RF_COLL_OP_ALLGATHER, 1, piece, x->nic_dp,
                           &x->nic_s, calls);
        }
    }
    if (step_is_expert(t)) {
        int64_t local = t->experts / (train->ep > 0 ? train->ep : 1);
        if (local < 1)
            local = 1;
        int64_t idx = local;
        if (stage_only) { /* slime: expert buckets of bucket / EP bytes per rank */
            double b = (double)in->bucket / (double)(train->ep > 0 ? train->ep : 1);
            idx = (int64_t)ceil(piece / (b > 0 ? b : piece));
        }
        double per = piece / (double)idx;
        if (!stage_only)
            s += coll(&x->pp, x->has_pp, topo, RF_COLL_OP_BROADCAST, idx, per, x->nic_pp, &x->nic_s,
                      calls);
        s += coll(&x->etp, x->has_etp, topo, RF_COLL_OP_ALLGATHER, idx, per * (double)train->etp,
                  x->nic_etp, &x->nic_s, calls);
        s += coll(&x->ep, x->has_ep, topo, RF_COLL_OP_ALLGATHER, idx,
                  per * (double)train->etp * (double)train->ep, x->nic_ep, &x->nic_s, calls);
        return s;
    }
    if (!stage_only)
        s += coll(&x->pp, x->has_pp, topo, RF_COLL_OP_BROADCAST, 1, piece, x->nic_pp, &x->nic_s,
                  calls);
    if (t->cls != RF_CLASS_REPLICATED)
        s += coll(&x->tp, x->has_tp, topo, RF_COLL_OP_ALLGATHER, 1, full, x->nic_tp, &x->nic_s,
                  calls);
    return s;
}
