/* Bounds on a refit that need no simulation: the strategy-independent lower bound (every
 * byte a GPU or domain needs must cross its ingress) and per-role link loads of a plan. */
#include "bound.h"

#include <stdlib.h>

int rf_lower_bound(const struct rf_plan *plan, const struct rf_side *train,
                   const struct rf_side *infer, const struct rf_topology *topo, double *bound,
                   struct rf_error *err)
{
    const struct rf_cluster *c = topo->cluster;
    size_t n_gpus = (size_t)topo->gpus;
    size_t n_domains = (size_t)((topo->gpus + c->nvlink.domain_gpus - 1) / c->nvlink.domain_gpus);
    int64_t *gpu_need = calloc(n_gpus, sizeof(int64_t));
    int64_t *domain_need = calloc(n_domains, sizeof(int64_t));
    double *domain_in = calloc(n_domains, sizeof(double));
    int rc;

    *bound = 0;
    if (!gpu_need || !domain_need || !domain_in) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = rf_plan_need(plan, train, infer, c->nvlink.domain_gpus, gpu_need, n_gpus, domain_need,
                           n_domains, err)) < 0)
        goto out;
    /* Every byte a GPU receives crosses its NVLink ingress or its NIC (GPUDirect). */
    for (size_t g = 0; g < n_gpus; g++) {
        double in = topo->links[rf_topology_link(topo, RF_LINK_NVL_IN, (int64_t)g)].capacity;
        int64_t nic = rf_topology_nic(topo, (int64_t)g);
        if (nic >= 0)
            in += topo->links[rf_topology_link(topo, RF_LINK_NIC_IN, nic)].capacity;
        if (gpu_need[g] > 0 && (double)gpu_need[g] / in > *bound)
            *bound = (double)gpu_need[g] / in;
    }
    /* Every byte entering a domain crosses the NIC of one of its GPUs. A NIC may serve
     * GPUs of several domains (2-GPU domains, a NIC per 4 GPUs): it counts for each, or a
     * domain without a NIC of its own would get no ingress and an infinite bound. NICs and
     * domains both grow with the GPU number, so each (domain, NIC) pair is one stretch. */
    for (int64_t g = 0, last_dom = -1, last_nic = -1; g < topo->gpus; g++) {
        int64_t dom = rf_topology_domain(topo, g), nic = rf_topology_nic(topo, g);
        if (nic >= 0 && (dom != last_dom || nic != last_nic))
            domain_in[dom] += topo->links[rf_topology_link(topo, RF_LINK_NIC_IN, nic)].capacity;
        last_dom = dom;
        last_nic = nic;
    }
    for (size_t d = 0; d < n_domains; d++)
        if (domain_need[d] > 0 && (double)domain_need[d] / domain_in[d] > *bound)
            *bound = (double)domain_need[d] / domain_in[d];
    rc = 0;
out:
    free(gpu_need);
    free(domain_need);
    free(domain_in);
    return rc;
}

void rf_plan_role_loads(const struct rf_plan *plan, const struct rf_topology *topo, double *loads)
{
    size_t nl = topo->n_links;
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        double *row = loads + (size_t)plan->tensors[plan->boxes[t->box].tensor].role * nl;
        for (int32_t k = 0; k < t->dst_count; k++) {
            int32_t d = t->dst + k * t->dst_stride;
            struct rf_route r;
            if (d == t->src)
                continue;
            rf_topology_route(topo, t->src, d, &r);
            for (int h = 0; h < r.n; h++)
                row[r.link[h]] += (double)t->bytes;
        }
    }
    /* A broadcast chain carries the whole tensor over every hop, as round_chain routes it. */
    for (size_t i = 0; i < plan->n_collectives; i++) {
        const struct rf_collective *c = &plan->collectives[i];
        double *row = loads + (size_t)plan->tensors[c->tensor].role * nl;
        int32_t prev = c->root;
        for (int32_t k = 0; k < c->gpu_count; k++) {
            int32_t g = c->first_gpu + k * c->gpu_stride;
            struct rf_route r;
            if (g == c->root)
                continue;
            rf_topology_route(topo, prev, g, &r);
            for (int h = 0; h < r.n; h++)
                row[r.link[h]] += (double)c->bytes;
            prev = g;
        }
    }
}

double rf_role_loads_bound(const struct rf_topology *topo, const double *const *role_loads)
{
    double worst = 0;
    for (size_t l = 0; l < topo->n_links; l++) {
        double b = 0;
        for (int r = 0; r < RF_ROLE_COUNT; r++)
            b += role_loads[r][l];
        if (b / topo->links[l].capacity > worst)
            worst = b / topo->links[l].capacity;
    }
    return worst;
}
