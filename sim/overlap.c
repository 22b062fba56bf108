/* Refit that overlaps generation (sim/overlap.h): the stall and the staleness of all-engine
 * and rolling updates, from simulations of the same plan on shared ports or to one engine. */
#include "overlap.h"

#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "plan.h"
#include "simulate.h"
#include "topology.h"

/* The first GPU of each inference stage holds the largest shards (sim/memory.c); its bytes
 * of plan tensor t, in the wire's dtype. */
static int64_t shard_bytes(const struct rf_plan *plan, size_t t, const struct rf_side *infer,
                           int64_t gpu)
{
    struct rf_box box;
    const struct rf_tensor *x = &plan->tensors[t];
    if (!rf_side_held_box(infer, x, gpu, &box))
        return 0;
    return rf_dtype_bytes(plan->wire_dtype[t], rf_box_numel(&box, x->ndim));
}

static int64_t stage_gpu(const struct rf_side *infer, int64_t stage)
{
    int64_t coord[RF_MESH_MAX] = {0};
    coord[1] = stage; /* VL_PP (sim/layout.c): an inference side's stage axis */
    return rf_mesh_gpu(&infer->dense, coord);
}

int rf_overlap_landing(const struct rf_overlap *o)
{
    if (!o->on || o->rolling)
        return RF_LANDING_NONE;
    return o->layer ? RF_LANDING_LAYER : RF_LANDING_MODEL;
}

/* topo's links, with each inference GPU's NVLink ports and its NIC's ports less bps. */
static int shared_ports(const struct rf_topology *topo, const struct rf_side *infer, double bps,
                        struct rf_link **out, struct rf_error *err)
{
    struct rf_link *l = malloc(topo->n_links * sizeof(*l));
    if (!l)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    memcpy(l, topo->links, topo->n_links * sizeof(*l));
    bool *done = calloc(topo->n_links, sizeof(bool));
    if (!done) {
        free(l);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    int rc = 0;
    for (int64_t g = infer->first_gpu; g < infer->first_gpu + infer->place.span && rc == 0; g++) {
        if (!rf_side_has_gpu(infer, g) || g >= topo->gpus)
            continue;
        int32_t k[4] = {rf_topology_link(topo, RF_LINK_NVL_OUT, g),
                        rf_topology_link(topo, RF_LINK_NVL_IN, g), -1, -1};
        int64_t nic = rf_topology_nic(topo, g);
        if (nic >= 0) {
            k[2] = rf_topology_link(topo, RF_LINK_NIC_OUT, nic);
            k[3] = rf_topology_link(topo, RF_LINK_NIC_IN, nic);
        }
        for (int i = 0; i < 4 && rc == 0; i++) {
            if (k[i] < 0 || done[k[i]])
                continue;
            done[k[i]] = true;
            if (bps >= l[k[i]].capacity) {
                char name[64];
                rf_link_describe(topo, (size_t)k[i], name, sizeof(name));
                rc = rf_error_set(err, RF_EINVAL,
                                  "overlap.generation_gbps: %.6g GB/s of generation is at or "
                                  "above %s's %.6g GB/s, leaving the refit nothing",
                                  bps / 1e9, name, l[k[i]].capacity / 1e9);
            }
            l[k[i]].capacity -= bps;
        }
    }
    free(done);
    if (rc < 0)
        free(l);
    else
        *out = l;
    return rc;
}

int rf_overlap_predict(const struct rf_overlap *o, const struct rf_plan *plan,
                       const struct rf_side *train, const struct rf_side *infer,
                       const struct rf_topology *topo, const struct rf_sim_options *opts,
                       double whole_s, struct rf_overlap_result *out, struct rf_error *err)
{
    struct rf_sim_options so = opts ? *opts : (struct rf_sim_options){0};
    struct rf_prediction p;
    int rc = 0;
    memset(out, 0, sizeof(*out));
    out->engines = infer->replicas > 0 ? infer->replicas : 1;
    if (!o->on) {
        out->refit_s = out->stall_s = out->staleness_s = whole_s;
        return 0;
    }
    so.progress = NULL;
    if (o->rolling) {
        /* The first engine's GPUs: first_gpu and the engine's size after it. */
        int64_t engine = infer->gpus / out->engines;
        uint8_t *mask = calloc((size_t)topo->gpus, 1);
        if (!mask)
            return rf_error_set(err, RF_ENOMEM, "out of memory");
        for (int64_t g = infer->first_gpu; g < infer->first_gpu + engine && g < topo->gpus; g++)
            mask[g] = 1;
        so.dst_mask = mask;
        rc = rf_simulate(plan, train, infer, topo, &so, &p, err);
        free(mask);
        if (rc < 0)
            return rc;
        out->refit_s = p.predicted_s;
        rf_prediction_release(&p);
        out->stall_s = out->refit_s;
        out->staleness_s = (double)out->engines * out->refit_s;
        return 0;
    }
    out->refit_s = whole_s;
    if (o->generation_bps > 0) {
        struct rf_topology shared = *topo;
        struct rf_link *links = NULL;
        if ((rc = shared_ports(topo, infer, o->generation_bps, &links, err)) < 0)
            return rc;
        shared.links = links;
        rc = rf_simulate(plan, train, infer, &shared, &so, &p, err);
        free(links);
        if (rc < 0)
            return rc;
        out->refit_s = p.predicted_s;
        rf_prediction_release(&p);
    }
    /* The apply: each engine GPU copies its landed shard into its parameters (a copy link's
     * rate counts bytes copied), the busiest GPU last. */
    double apply = 0;
    for (int64_t stage = 0; stage < infer->pp; stage++) {
        int64_t gpu = stage_gpu(infer, stage), bytes = 0;
        for (size_t t = 0; t < plan->n_tensors; t++)
            bytes += shard_bytes(plan, t, infer, gpu);
        if (gpu < 0 || gpu >= topo->gpus || bytes == 0)
            continue;
        double s = (double)bytes / topo->links[rf_topology_link(topo, RF_LINK_COPY, gpu)].capacity;
        if (s > apply) {
            apply = s;
            out->apply_bytes = bytes;
        }
    }
    out->stall_s = apply;
    out->staleness_s = out->refit_s + apply;
    return 0;
}
