/* Links and routes of a cluster. Links of one kind sit in one block of the array, so the
 * link of GPU g or NIC n is an addition, and a route is built without any search. */
#include "topology.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const kind_names[RF_LINK_KIND_COUNT] = {
    "nvl_out", "nvl_in", "nic_out", "nic_in", "leaf_up", "leaf_down", "copy", "quant"};

const char *rf_link_kind_name(enum rf_link_kind kind)
{
    return kind_names[kind];
}

static int64_t rails(const struct rf_topology *t)
{
    return t->cluster->nic.per_node;
}

static int64_t groups(const struct rf_cluster *c)
{
    return (c->nodes + c->fabric.nodes_per_leaf - 1) / c->fabric.nodes_per_leaf;
}

/* The NIC serving a GPU: NICs of a node split its GPUs into equal consecutive groups. */
static int64_t nic_of(const struct rf_topology *t, int64_t gpu)
{
    const struct rf_cluster *c = t->cluster;
    if (c->nic.per_node == 0)
        return -1;
    int64_t node = gpu / c->gpus_per_node, local = gpu % c->gpus_per_node;
    return node * c->nic.per_node + local * c->nic.per_node / c->gpus_per_node;
}

static int64_t leaf_of(const struct rf_topology *t, int64_t nic)
{
    const struct rf_cluster *c = t->cluster;
    int64_t node = nic / c->nic.per_node, rail = nic % c->nic.per_node;
    return node / c->fabric.nodes_per_leaf * c->nic.per_node + rail;
}

int rf_topology_init(struct rf_topology *t, const struct rf_cluster *c, struct rf_error *err)
{
    memset(t, 0, sizeof(*t));
    if (c->nodes < 1 || c->gpus_per_node < 1 || c->nic.per_node < 0 || c->nvlink.domain_gpus < 1 ||
        c->fabric.nodes_per_leaf < 1 || c->fabric.oversubscription <= 0)
        return rf_error_set(err, RF_EINVAL, "%s: cluster sizes must be positive", c->name);
    t->cluster = c;
    t->gpus = c->nodes * c->gpus_per_node;
    t->nics = c->nodes * c->nic.per_node;
    t->leaves = groups(c) * c->nic.per_node;
    if (c->nic.per_node == 0 && t->gpus > c->nvlink.domain_gpus)
        return rf_error_set(err, RF_EINVAL, "%s: GPUs beyond one NVLink domain need NICs", c->name);
    int64_t count[RF_LINK_KIND_COUNT] = {t->gpus,   t->gpus,   t->nics, t->nics,
                                         t->leaves, t->leaves, t->gpus, t->gpus};
    size_t n = 0;
    for (int k = 0; k < RF_LINK_KIND_COUNT; k++) {
        t->base[k] = n;
        n += (size_t)count[k];
    }
    t->links = calloc(n, sizeof(*t->links));
    t->place = malloc((size_t)t->gpus * sizeof(*t->place));
    if (!t->links || !t->place) {
        rf_topology_release(t);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    t->n_links = n;
    for (int64_t g = 0; g < t->gpus; g++) {
        int64_t nic = nic_of(t, g);
        t->place[g] = (struct rf_place){.node = (int32_t)(g / c->gpus_per_node),
                                        .domain = (int32_t)(g / c->nvlink.domain_gpus),
                                        .nic = (int32_t)nic,
                                        .rail = nic < 0 ? -1 : (int32_t)(nic % c->nic.per_node),
                                        .leaf = nic < 0 ? -1 : (int32_t)leaf_of(t, nic)};
    }

    double nvl = c->nvlink.gbps * 1e9 * c->cal.nvlink_efficiency;
    double nic = c->nic.gbps * 1e9 * c->cal.nic_efficiency;
    for (int k = 0; k < RF_LINK_KIND_COUNT; k++) {
        for (int64_t i = 0; i < count[k]; i++) {
            struct rf_link *l = &t->links[t->base[k] + (size_t)i];
            l->kind = (enum rf_link_kind)k;
            switch (k) {
            case RF_LINK_NVL_OUT:
            case RF_LINK_NVL_IN:
                l->a = (int32_t)i;
                l->capacity = nvl;
                break;
            case RF_LINK_NIC_OUT:
            case RF_LINK_NIC_IN:
                l->a = (int32_t)(i / c->nic.per_node);
                l->b = (int32_t)(i % c->nic.per_node);
                l->capacity = nic;
                break;
            case RF_LINK_LEAF_UP:
            case RF_LINK_LEAF_DOWN: {
                /* A leaf's uplinks carry what its nodes' NICs on that rail can inject,
                 * divided by the fabric's oversubscription. */
                int64_t group = i / rails(t); /* leaves exist only when rails do */
                int64_t in_group = c->nodes - group * c->fabric.nodes_per_leaf;
                if (in_group > c->fabric.nodes_per_leaf)
                    in_group = c->fabric.nodes_per_leaf;
                l->a = (int32_t)(i % rails(t));
                l->b = (int32_t)group;
                l->capacity = (double)in_group * nic / c->fabric.oversubscription;
                break;
            }
            case RF_LINK_COPY:
                l->a = (int32_t)i;
                l->capacity = c->cal.memcpy_gbps * 1e9;
                break;
            case RF_LINK_QUANT:
                /* quant_gbps is the BF16 read rate; the link carries the FP8 written, half. */
                l->a = (int32_t)i;
                l->capacity = c->cal.quant_gbps * 1e9 / 2;
                break;
            }
        }
    }
    return 0;
}

void rf_topology_release(struct rf_topology *t)
{
    if (!t)
        return;
    free(t->links);
    free(t->place);
    memset(t, 0, sizeof(*t));
}

void rf_cluster_release(struct rf_cluster *c)
{
    if (!c)
        return;
    free(c->name);
    free(c->source);
    memset(c, 0, sizeof(*c));
}

int64_t rf_topology_domain(const struct rf_topology *t, int64_t gpu)
{
    return t->place[gpu].domain;
}

int32_t rf_topology_link(const struct rf_topology *t, enum rf_link_kind kind, int64_t index)
{
    return (int32_t)(t->base[kind] + (size_t)index);
}

int64_t rf_topology_nic(const struct rf_topology *t, int64_t gpu)
{
    return t->place[gpu].nic;
}
int64_t rf_topology_leaf(const struct rf_topology *t, int64_t nic)
{
    return leaf_of(t, nic);
}

static void hop(struct rf_route *r, const struct rf_topology *t, enum rf_link_kind k, int64_t i)
{
    r->link[r->n++] = rf_topology_link(t, k, i);
}

void rf_topology_route(const struct rf_topology *t, int64_t src, int64_t dst, struct rf_route *r)
{
    const struct rf_cluster *c = t->cluster;
    const struct rf_place *ps = &t->place[src], *pd = &t->place[dst];
    r->n = 0;
    r->rate_cap = 0;
    r->fabric = false;
    if (ps->domain == pd->domain) {
        hop(r, t, RF_LINK_NVL_OUT, src);
        hop(r, t, RF_LINK_NVL_IN, dst);
        r->latency_s = c->nvlink.latency_us * 1e-6;
        return;
    }
    r->fabric = true;
    r->latency_s = 2 * c->nic.latency_us * 1e-6;
    int64_t snic = ps->nic, dnic = pd->nic, sleaf = ps->leaf, dleaf = pd->leaf;
    if (c->fabric.pxn && ps->rail != pd->rail) {
        /* PXN: hop over NVLink to the GPU of the source node that sits on the destination's
         * rail, so the message stays on one rail and never climbs to the spine. */
        int64_t proxy = (int64_t)ps->node * c->gpus_per_node +
                        (int64_t)pd->rail * c->gpus_per_node / c->nic.per_node;
        if (proxy != src) {
            hop(r, t, RF_LINK_NVL_OUT, src);
            hop(r, t, RF_LINK_NVL_IN, proxy);
            r->latency_s += c->nvlink.latency_us * 1e-6;
        }
        snic += pd->rail - ps->rail; /* the same node's NIC on that rail */
        sleaf += pd->rail - ps->rail;
    }
    hop(r, t, RF_LINK_NIC_OUT, snic);
    if (sleaf == dleaf) {
        r->latency_s += c->fabric.switch_latency_us * 1e-6;
    } else {
        hop(r, t, RF_LINK_LEAF_UP, sleaf);
        hop(r, t, RF_LINK_LEAF_DOWN, dleaf);
        r->latency_s += 3 * c->fabric.switch_latency_us * 1e-6;
    }
    hop(r, t, RF_LINK_NIC_IN, dnic);
    /* NCCL moves a network peer's data over a few channels of bounded rate each. */
    r->rate_cap = (double)c->cal.net_channels_per_peer * c->cal.channel_gbps * 1e9;
}

void rf_link_describe(const struct rf_topology *t, size_t link, char *buf, size_t size)
{
    const struct rf_link *l = &t->links[link];
    switch (l->kind) {
    case RF_LINK_NIC_OUT:
    case RF_LINK_NIC_IN:
        snprintf(buf, size, "%s[node %d nic %d]", kind_names[l->kind], l->a, l->b);
        break;
    case RF_LINK_LEAF_UP:
    case RF_LINK_LEAF_DOWN:
        snprintf(buf, size, "%s[rail %d group %d]", kind_names[l->kind], l->a, l->b);
        break;
    default: snprintf(buf, size, "%s[gpu %d]", kind_names[l->kind], l->a); break;
    }
}
