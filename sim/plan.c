/* The planner: rf_plan_build checks its inputs and plans tensor after tensor, by broadcast
 * (plan_broadcast.c) or by reshard and hierarchical (cells, sources and relays). */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

#include "checked.h"
#include "plan_int.h"
#include "topology.h"

/* Per tensor, each side's distinct shards ("cells") are enumerated from the layout algebra;
 * source cells form a grid (a partition per dim), so a destination box finds the source
 * cells it overlaps by binary search per dim (plan_cells.c): the work is linear in the
 * output, never all pairs. Replicated sources are chosen by load (plan_sources.c, or
 * relay.c when hierarchical), replicated destinations are emitted as arithmetic runs
 * (plan_emit.c). */
static int plan_reshard(struct planner *p, int32_t ti, const struct rf_side *train,
                        const struct rf_side *infer)
{
    /* A scale tensor has its weight's class, so the holders of a weight block compute and
     * send its scales. */
    const struct rf_tensor *t = &p->plan->tensors[ti];
    int rc;
    if ((rc = planner_collect_cells(p, train, t, &p->src)) < 0)
        return rc;
    if ((rc = planner_collect_cells(p, infer, t, &p->dst)) < 0)
        return rc;
    return planner_plan_cells(p, ti, p->plan->wire_dtype[ti], RF_PHASE_DELIVER, true);
}

void planner_release(struct planner *p)
{
    planner_cells_release(&p->src);
    planner_cells_release(&p->dst);
    for (int d = 0; d < RF_MAX_DIMS; d++)
        free(p->starts[d]);
    free(p->cell_of);
    free(p->rem);
    free(p->order);
    free(p->load);
    free(p->nic_load);
    free(p->in_load);
    free(p->nic_in);
    free(p->rail_mark);
    free(p->pairs);
    free(p->keys);
    free(p->groups);
    free(p->deal);
}

/* The planner's entry check of a side: its sizes and meshes, built for this model. */
static int check_side(const struct rf_side *s, const char *name, const struct rf_model *model,
                      struct rf_error *err)
{
    int rc;
    if (!s->layer_stage)
        return rf_error_set(err, RF_EINVAL, "%s: the side is not built (rf_side_init)", name);
    if ((rc = rf_side_check(s, name, err)) < 0)
        return rc;
    if (s->n_layers != model->layers)
        return rf_error_set(err, RF_EINVAL, "%s.stage_layers: cover %d layers, model %s has %d",
                            name, s->n_layers, model->name ? model->name : "", model->layers);
    return 0;
}

int rf_plan_build(struct rf_plan *plan, const struct rf_model *model, const struct rf_side *train,
                  const struct rf_side *infer, enum rf_strategy strategy,
                  const enum rf_strategy *tensor_strategy, const struct rf_plan_opts *opts,
                  struct rf_error *err)
{
    struct planner p = {.plan = plan,
                        .err = err,
                        .topo = opts ? opts->topo : NULL,
                        .sources = opts ? opts->sources : RF_SOURCES_BALANCED,
                        .bcast_comm = opts ? opts->bcast_comm : RF_FW_COMM_RECEIVERS,
                        .bcast_root = opts ? opts->bcast_root : RF_FW_ROOT_FIRST,
                        .wire_native = opts && opts->wire_native};
    int rc;

    memset(plan, 0, sizeof(*plan));
    plan->strategy = strategy;
    if (opts)
        p.relay = opts->relay;
    if (p.relay.fanout == 0)
        p.relay.fanout = 1;
    if (p.relay.fanout < 1 || p.relay.fanout > 64 || p.relay.depth < 0 ||
        p.relay.depth > RF_GPUS_MAX) {
        rc = rf_error_set(err, RF_EINVAL, "relay: fanout %d (1..64) or depth %d out of range",
                          (int)p.relay.fanout, (int)p.relay.depth);
        goto out;
    }
    plan->relay = p.relay;
    /* NCCL halves p2p channels per peer in communicators past 128 ranks unless told a
     * count: one 14 GB/s channel per pair cannot fill a relay's NIC, so refit-exec tells it
     * what NCCL itself asks (README, Simulator). */
    if (p.topo) {
        int64_t ask = rf_topology_net_ask(p.topo);
        plan->net_channels_per_peer = ask > 64 ? 64 : (int32_t)ask;
    }
    /* Whoever built the model and sides, their sizes are checked here, so every product
     * below is of bounded factors: GPUs within RF_GPUS_MAX, bytes within int64. */
    if ((unsigned)strategy >= RF_STRAT_COUNT) {
        rc = rf_error_set(err, RF_EINVAL, "strategy: %d is not a strategy", (int)strategy);
        goto out;
    }
    if ((rc = rf_model_check(model, err)) < 0 ||
        (rc = check_side(train, "train", model, err)) < 0 ||
        (rc = check_side(infer, "infer", model, err)) < 0)
        goto out;
    plan->model_params = rf_model_params(model);
    plan->model_bytes = rf_model_bytes(model);

    int64_t n_gpus, infer_end; /* the inference side's idle GPUs included (span) */
    if (rf_add_overflow(train->first_gpu, train->gpus, &n_gpus) ||
        rf_add_overflow(infer->first_gpu, infer->place.span, &infer_end) || n_gpus > RF_GPUS_MAX ||
        infer_end > RF_GPUS_MAX) {
        rc = rf_error_set(err, RF_EINVAL, "the sides reach beyond the %lld GPUs refit supports",
                          (long long)RF_GPUS_MAX);
        goto out;
    }
    if (infer_end > n_gpus)
        n_gpus = infer_end;
    p.load = calloc((size_t)n_gpus, sizeof(int64_t));
    p.nic_load = calloc(p.topo ? (size_t)p.topo->nics + 1 : 1, sizeof(int64_t));
    if (p.topo && n_gpus > p.topo->gpus) {
        rc = rf_error_set(err, RF_EINVAL, "the scenario uses %lld GPUs, cluster %s has %lld",
                          (long long)n_gpus, p.topo->cluster->name, (long long)p.topo->gpus);
        goto out;
    }
    if (!p.load || !p.nic_load) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = planner_tensors(&p, model, infer, strategy, tensor_strategy)) < 0)
        goto out;
    for (size_t i = 0; i < plan->n_tensors; i++)
        p.track_in |= plan->tensor_strategy[i] == RF_STRAT_HIERARCHICAL;
    if (p.track_in) { /* hierarchical needs a cluster: planner_tensors checked it */
        p.in_load = calloc((size_t)n_gpus, sizeof(int64_t));
        p.nic_in = calloc((size_t)p.topo->nics + 1, sizeof(int64_t));
        p.rail_mark = calloc((size_t)p.topo->cluster->nic.per_node + 1, sizeof(int32_t));
        if (!p.in_load || !p.nic_in || !p.rail_mark) {
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
            goto out;
        }
    }

    for (size_t i = 0; i < plan->n_tensors; i++) {
        const struct rf_tensor *t = &plan->tensors[i];
        plan->role[t->role].tensors++;
        plan->total.tensors++;
        if (t->scale_of < 0) {
            plan->role[t->role].params += rf_tensor_numel(t);
            plan->total.params += rf_tensor_numel(t);
        }
        if (plan->tensor_strategy[i] == RF_STRAT_BROADCAST)
            rc = planner_broadcast(&p, (int32_t)i, train, infer);
        else
            rc = plan_reshard(&p, (int32_t)i, train, infer);
        if (rc < 0)
            goto out;
    }
    rc = 0;
out:
    planner_release(&p);
    if (rc < 0)
        rf_plan_release(plan);
    return rc;
}

void rf_plan_opts_profile(struct rf_plan_opts *opts, const struct rf_framework *fw)
{
    opts->bcast_comm = fw->present ? fw->comm : RF_FW_COMM_RECEIVERS;
    opts->bcast_root = fw->present ? fw->root : RF_FW_ROOT_FIRST;
    opts->wire_native = fw->present && fw->broadcast && fw->quant != RF_FW_QUANT_SENDER;
}
