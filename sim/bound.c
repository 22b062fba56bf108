/* Bounds on a refit that need no simulation: the strategy-independent lower bound (every
 * byte a GPU or domain needs crosses its ingress, every byte leaves its holders over their
 * egress at least once) and per-role link loads of a plan. */
#include "bound.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "ring.h"

/* Past this many holder groups the subset sums (quadratic in groups) are left out: each
 * group then counts its own pieces alone, which is still a bound. */
#define GROUPS_SUBSET_MAX 4096

/* Whether sorted a (na) is a subset of sorted b (nb). */
static bool subset(const int64_t *a, size_t na, const int64_t *b, size_t nb)
{
    size_t j = 0;
    for (size_t i = 0; i < na; i++) {
        while (j < nb && b[j] < a[i])
            j++;
        if (j == nb || b[j] != a[i])
            return false;
    }
    return true;
}

static void raise_to(double *bound, int64_t bytes, double capacity)
{
    if (bytes > 0 && capacity > 0 && (double)bytes / capacity > *bound)
        *bound = (double)bytes / capacity;
}

/* The source side of the bound. A piece must reach every GPU that needs it, and its bytes
 * start only on its holders, so every piece needed beyond a set S of GPUs that contains all
 * its holders crosses S's egress at least once: a relay outside S received it across that
 * egress first, and replicas inside S can share the work but not undo it. For any S, then,
 * (bytes of pieces held only inside S and needed outside S) / (S's egress capacity) is a
 * lower bound. Replicas are why S must contain *every* holder of a piece: a data-parallel
 * copy in another domain could serve the destination instead, so a piece held by domains
 * {0, 1} counts for S = {0, 1} (or a superset) and never for S = {0} alone. S is taken as:
 * - one GPU, for pieces it alone holds: egress its NVLink port plus its NIC (GPUDirect);
 * - each set of domains that holds some piece exactly (need->groups), with the pieces held
 *   by that set, plus the pieces of each smaller set inside it that are needed in a domain
 *   without any training GPU (surely outside the set); and the union of all such sets.
 * A domain's egress is every NIC of each node where it has a GPU of either side: a byte
 * leaves a domain only over a NIC of the node of the GPU that sends it (rf_topology_route:
 * PXN hops to a GPU of the same node), and refit plans send only from GPUs of the two
 * sides (holders, inference GPUs as relays, the broadcast's root, which is a training
 * GPU). So in scripts/dsv3-gb200-relay.lua the 64 trainers' 16 trays give 64 NICs, not
 * domain 0's 72 (a GB200 tray has one compute NIC per GPU, NVIDIA's GB200 NVL72 reference
 * architecture; 50 GB/s at the default 0.96 NIC efficiency is 48): 1342 GB / (64 x 48 GB/s)
 * = 0.44 s.
 * NICs a node shares between domains count for each, which only lowers the bound. */
static int source_bound(const struct rf_need *need, const struct rf_side *train,
                        const struct rf_side *infer, const struct rf_topology *topo,
                        double *domain_out, double *bound, struct rf_error *err)
{
    const struct rf_cluster *c = topo->cluster;
    for (size_t g = 0; g < need->n_gpus; g++) {
        double out = topo->links[rf_topology_link(topo, RF_LINK_NVL_OUT, (int64_t)g)].capacity;
        int64_t nic = rf_topology_nic(topo, (int64_t)g);
        if (nic >= 0)
            out += topo->links[rf_topology_link(topo, RF_LINK_NIC_OUT, nic)].capacity;
        raise_to(bound, need->gpu_out[g], out);
    }
    /* GPUs grow with (domain, node), so each pair is one stretch, met once even across
     * the GPUs of neither side between two stretches. */
    for (int64_t g = 0, last_dom = -1, last_node = -1; g < topo->gpus; g++) {
        /* The inference side's idle GPUs count (its span): a broadcast's ring passes them,
         * and counting more NICs only lowers the bound. */
        bool side = (g >= train->first_gpu && g < train->first_gpu + train->gpus) ||
                    (g >= infer->first_gpu && g < infer->first_gpu + infer->place.span);
        int64_t dom = topo->place[g].domain, node = topo->place[g].node;
        if (!side || (dom == last_dom && node == last_node))
            continue;
        for (int64_t k = 0; k < c->nic.per_node && (size_t)dom < need->n_domains; k++)
            domain_out[dom] +=
                topo->links[rf_topology_link(topo, RF_LINK_NIC_OUT, node * c->nic.per_node + k)]
                    .capacity;
        last_dom = dom;
        last_node = node;
    }
    size_t ng = need->n_groups;
    const size_t *st = need->group_start;
    const int64_t *gd = need->group_domain;
    int64_t all_away = 0;
    double all_out = 0;
    bool *in_all = calloc(need->n_domains ? need->n_domains : 1, sizeof(bool));
    if (!in_all)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (size_t i = 0; i < ng; i++) {
        /* Pieces of the model: no sum here passes its bytes, which fit in int64. */
        int64_t bytes = need->group_own[i];
        double out = 0;
        for (size_t k = st[i]; k < st[i + 1]; k++)
            if ((size_t)gd[k] < need->n_domains) {
                out += domain_out[gd[k]];
                if (!in_all[gd[k]]) {
                    in_all[gd[k]] = true;
                    all_out += domain_out[gd[k]];
                }
            }
        /* Groups are sorted by size: a strict subset comes earlier. */
        for (size_t j = 0; j < i && ng <= GROUPS_SUBSET_MAX; j++)
            if (st[j + 1] - st[j] < st[i + 1] - st[i] &&
                subset(gd + st[j], st[j + 1] - st[j], gd + st[i], st[i + 1] - st[i]))
                bytes += need->group_away[j];
        raise_to(bound, bytes, out);
        all_away += need->group_away[i];
    }
    /* The union of every group: what must reach a domain without training GPUs. */
    raise_to(bound, all_away, all_out);
    free(in_all);
    return 0;
}

int rf_lower_bound(const struct rf_plan *plan, const struct rf_side *train,
                   const struct rf_side *infer, const struct rf_topology *topo, double *bound,
                   struct rf_error *err)
{
    const struct rf_cluster *c = topo->cluster;
    size_t n_gpus = (size_t)topo->gpus;
    size_t n_domains = (size_t)((topo->gpus + c->nvlink.domain_gpus - 1) / c->nvlink.domain_gpus);
    struct rf_need need;
    double *domain_in = calloc(n_domains, sizeof(double));
    double *domain_out = calloc(n_domains, sizeof(double));
    int rc;

    *bound = 0;
    memset(&need, 0, sizeof(need));
    if (!domain_in || !domain_out) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = rf_plan_need(plan, train, infer, c->nvlink.domain_gpus, n_gpus, n_domains, &need,
                           err)) < 0)
        goto out;
    /* Every byte a GPU receives crosses its NVLink ingress or its NIC (GPUDirect). */
    for (size_t g = 0; g < n_gpus; g++) {
        double in = topo->links[rf_topology_link(topo, RF_LINK_NVL_IN, (int64_t)g)].capacity;
        int64_t nic = rf_topology_nic(topo, (int64_t)g);
        if (nic >= 0)
            in += topo->links[rf_topology_link(topo, RF_LINK_NIC_IN, nic)].capacity;
        raise_to(bound, need.gpu_in[g], in);
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
        raise_to(bound, need.domain_in[d], domain_in[d]);
    rc = source_bound(&need, train, infer, topo, domain_out, bound, err);
out:
    rf_need_release(&need);
    free(domain_in);
    free(domain_out);
    return rc;
}

int rf_plan_role_loads(const struct rf_plan *plan, const struct rf_topology *topo, double *loads,
                       struct rf_error *err)
{
    size_t nl = topo->n_links;
    struct rf_ring_set rings = {0};
    int rc = 0;
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        double *row = loads + (size_t)plan->tensors[plan->boxes[t->box].tensor].role * nl;
        for (int32_t k = 0; k < t->dst_count; k++) {
            int32_t d = t->dst + k * t->dst_stride, from = rf_transfer_sender(t, k);
            struct rf_route r;
            if (d == from)
                continue;
            rf_topology_route(topo, from, d, &r);
            for (int h = 0; h < r.n; h++)
                row[r.link[h]] += (double)t->bytes;
        }
    }
    /* A broadcast is its rings, as round_chain runs it: each of the C_g channels carries
     * bytes / C_g over its chain's links, each link once. */
    for (size_t i = 0; i < plan->n_collectives && rc == 0; i++) {
        const struct rf_collective *c = &plan->collectives[i];
        double *row = loads + (size_t)plan->tensors[c->tensor].role * nl;
        const struct rf_ring_entry *e;
        if ((rc = rf_ring_set_get(&rings, topo, c->root, c->first_gpu, c->gpu_count, c->gpu_stride,
                                  &e, err)) < 0)
            break;
        if (e->ring.n_ranks < 2)
            continue;
        double bytes = (double)c->bytes / e->paths.n;
        for (size_t k = 0; k < e->paths.start[e->paths.n]; k++)
            row[e->paths.links[k]] += bytes;
    }
    rf_ring_set_release(&rings);
    return rc;
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
