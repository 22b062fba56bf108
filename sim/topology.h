/* Clusters and routing: the modelled links of a cluster (per-GPU NVLink ports, per-NIC
 * ports, rail leaf uplinks/downlinks of a rail-optimised leaf/spine fabric, per-GPU copy and
 * quantisation engines) and the route of a message between two GPUs. */
#ifndef RF_TOPOLOGY_H
#define RF_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* A cluster as the normalised Lua description gives it (doc/architecture.md): bandwidths
 * in GB/s per direction (1e9 B/s), latencies in microseconds. */
/* The nodes from first_node on, when a cluster mixes two presets (a scenario's cluster = {
 * train = ..., infer = ... }, models/lib/cluster.lua): their GPUs' HBM, NVLink, NICs and
 * copy rates come from the second preset; everything else (node shape, domains, fabric,
 * the other calibration constants) is the first's. present false: a uniform cluster. */
struct rf_cluster_part {
    bool present;
    char *name, *source;
    int64_t first_node;
    double hbm_gb, nvlink_gbps, nic_gbps, pcie_gbps, memcpy_gbps, quant_gbps, h2d_gbps, d2h_gbps;
};

struct rf_cluster {
    char *name, *source;
    int64_t nodes, gpus_per_node;
    double hbm_gb;
    struct {
        int64_t domain_gpus;
        double gbps, latency_us;
    } nvlink;
    struct {
        int64_t per_node;
        double gbps, latency_us;
    } nic;
    /* GPU <-> host PCIe, per GPU: checkpoint-engine's H2D copy of each owner's buckets
     * (sim/step.c, framework gather "host"). */
    double pcie_gbps;
    struct {
        int64_t nodes_per_leaf;
        double oversubscription, switch_latency_us;
        bool pxn;
    } fabric;
    struct {
        double nvlink_efficiency, nic_efficiency, message_latency_us;
        /* NCCL's p2p channels: per NVLink peer, per network peer (0: NCCL's default, derived
         * from nic.gbps / channel_gbps and halved in large communicators), and the
         * communicator's p2p channels (p2pnChannels). */
        int64_t nvl_channels_per_peer, net_channels_per_peer, p2p_channels;
        double channel_gbps;
        int64_t nvl_chunk_kib, net_chunk_kib;
        double memcpy_gbps, quant_gbps, tensor_overhead_us, bucket_overhead_us;
        int64_t streams;
        /* Per-call costs of the step's mechanisms (sim/step.c; each cited in
         * models/lib/cluster.lua): one CUDA kernel launch, one NCCL call's host launch, a
         * barrier across a communicator, pinned host<->device copies, registering memory
         * with the NIC, and one entry of an engine loader's linear name scan. */
        double kernel_launch_us, nccl_call_us, barrier_us, h2d_gbps, d2h_gbps, reg_region_us,
            loader_scan_us;
    } cal;
    struct rf_cluster_part upper;
};

/* Whether GPU `gpu` is one of the mixed cluster's second preset (its upper part). */
static inline bool rf_cluster_is_upper(const struct rf_cluster *c, int64_t gpu)
{
    return c->upper.present && gpu / c->gpus_per_node >= c->upper.first_node;
}

/* What one GPU is, from its part of the cluster: the rates the step's device work runs at
 * (sim/step*.c). h2d_gbps and d2h_gbps are the calibrated copy rates, PCIe's where the
 * calibration has none (0, run descriptions stored before those fields). */
struct rf_gpu_rates {
    double hbm_gb, nvlink_gbps, nic_gbps, memcpy_gbps, quant_gbps, h2d_gbps, d2h_gbps;
};
struct rf_gpu_rates rf_cluster_rates(const struct rf_cluster *c, int64_t gpu);

/* The slower part's NVLink and NIC line rates: NCCL's ranks agree on the minimum of their
 * channels and speeds at init (init.cc, the all-gathered graph info), so a communicator
 * across both parts is sized by it. A uniform cluster's own rates. */
double rf_cluster_min_nvlink_gbps(const struct rf_cluster *c);
double rf_cluster_min_nic_gbps(const struct rf_cluster *c);

/* A numeric field of the normalised cluster: its table in the Lua contract (NULL: the top
 * level), its key, whether it is an integer (int64_t) or a number (double), and where it
 * lives in struct rf_cluster. t/topology-t checks the list against models/lib/cluster.lua. */
struct rf_cluster_field {
    const char *table, *key;
    bool integer;
    size_t offset;
    /* > 0: the field came after schema 7's descriptions; a stored run's description without
     * it reads this value (models/lib/cluster.lua's default), not an error. */
    double since_default;
};
extern const struct rf_cluster_field rf_cluster_fields[];
extern const size_t rf_cluster_n_fields;

enum rf_link_kind {
    RF_LINK_NVL_OUT,   /* GPU NVLink egress */
    RF_LINK_NVL_IN,    /* GPU NVLink ingress */
    RF_LINK_NIC_OUT,   /* NIC transmit */
    RF_LINK_NIC_IN,    /* NIC receive */
    RF_LINK_LEAF_UP,   /* rail leaf switch -> spine (aggregate) */
    RF_LINK_LEAF_DOWN, /* spine -> rail leaf switch (aggregate) */
    RF_LINK_COPY,      /* GPU copy engine: pack/unpack through HBM */
    RF_LINK_QUANT,     /* GPU BF16 -> FP8 quantisation */
    RF_LINK_QUANT4,    /* GPU BF16 -> MXFP4 / NVFP4 quantisation (the last block of links) */
    RF_LINK_KIND_COUNT
};

struct rf_link {
    enum rf_link_kind kind;
    int32_t a, b;    /* endpoints: GPU, or node and NIC index, or rail and leaf group */
    double capacity; /* bytes/s after calibration */
};

/* Where a GPU sits, computed once per topology: routes are built for every message of
 * every candidate auto bounds, and the divisions behind them dominated. */
struct rf_place {
    int32_t node, domain;
    int32_t nic, rail, leaf; /* -1 without NICs */
};

/* The links of a cluster in one array, addressed arithmetically: no per-link lookups. */
struct rf_topology {
    const struct rf_cluster *cluster;
    int64_t gpus, nics, leaves;
    struct rf_link *links;
    size_t n_links;
    struct rf_place *place; /* per GPU */
    /* Offsets of each link kind's block in links[]. */
    size_t base[RF_LINK_KIND_COUNT];
};

/* The route of one message: link indices, latency and the per-flow rate cap. */
#define RF_ROUTE_MAX 8
struct rf_route {
    int32_t link[RF_ROUTE_MAX];
    int n;
    double latency_s; /* hop latencies, without the per-message software latency */
    bool fabric;      /* leaves the NVLink domain */
};

/* NCCL's point-to-point channels in one communicator (the executor's world: GPUs 0 ..
 * ranks - 1), as NCCL fixes them at init (rf_topology_p2p) and splits each send over them
 * (rf_p2p_cap): see topology.c for the rule and its source. */
struct rf_p2p {
    int64_t ranks;
    bool spans;           /* more than one NVLink domain: NCCL's nNodes > 1 */
    int64_t per_peer;     /* p2pnChannelsPerPeer: the most channels one send uses */
    int64_t min_channels; /* the fewest a send starts from (enqueue.cc nChannelsMin) */
    double chunk;         /* p2pChunkSize, bytes */
    double channel_rate;  /* bytes/s one network channel carries (channel_gbps) */
};

/* The largest rate (GB/s) and latency (us) a cluster may give: 1 PB/s, as models/lib
 * bounds rates, and 1000 s; beyond them capacities and sums of times stop being finite
 * figures worth predicting. */
#define RF_RATE_MAX_GBPS 1e6

/* models/lib/cluster.lua's defaults of the per-call costs (cited there), which a run's
 * description stored before they existed reads (rf_cluster_fields' since_default). */
#define RF_DEFAULT_KERNEL_LAUNCH_US 3.0
#define RF_DEFAULT_NCCL_CALL_US 3.5
#define RF_DEFAULT_BARRIER_US 16.7
#define RF_DEFAULT_H2D_GBPS 57.0
#define RF_DEFAULT_D2H_GBPS 52.8
#define RF_DEFAULT_REG_REGION_US 1897.0
#define RF_DEFAULT_LOADER_SCAN_US 0.0479
#define RF_LATENCY_MAX_US 1e9

const char *rf_link_kind_name(enum rf_link_kind kind);
/* Checks the cluster first (whoever filled it): sizes positive, at most RF_GPUS_MAX GPUs and
 * NICs, rates finite within (0, RF_RATE_MAX_GBPS] (efficiencies (0, 1]), latencies finite
 * within [0, RF_LATENCY_MAX_US]; errors name the field ("cluster.nic.gbps: ..."). */
int rf_topology_init(struct rf_topology *topo, const struct rf_cluster *cluster,
                     struct rf_error *err);
void rf_topology_release(struct rf_topology *topo);
void rf_cluster_release(struct rf_cluster *cluster);

/* The NVLink domain of a GPU of the topology (0 <= gpu < topo->gpus). */
int64_t rf_topology_domain(const struct rf_topology *topo, int64_t gpu);
/* Route from src to dst (different GPUs); copy engines are added by the caller. */
void rf_topology_route(const struct rf_topology *topo, int64_t src, int64_t dst,
                       struct rf_route *route);
/* The same route without a PXN relay, whatever fabric.pxn says: across domains it leaves on
 * src's own NIC and enters on dst's, as a collective's ring hop does (NCCL fixes a ring's
 * NICs in its graph; sim/ring.c). */
void rf_topology_route_direct(const struct rf_topology *topo, int64_t src, int64_t dst,
                              struct rf_route *route);
int32_t rf_topology_link(const struct rf_topology *topo, enum rf_link_kind kind, int64_t index);
/* The NIC serving a GPU (-1 without NICs). */
int64_t rf_topology_nic(const struct rf_topology *topo, int64_t gpu);
/* The p2p channels of a communicator of the first `ranks` GPUs of the topology. */
/* configured > 0: the communicator was given nChannelsPerNetPeer = configured (refit-exec
 * gives it rf_topology_net_ask, plan->net_channels_per_peer), which stops NCCL's halving;
 * 0: NCCL's default (the cluster's net_channels_per_peer stands for the environment). */
void rf_topology_p2p(const struct rf_topology *topo, int64_t ranks, int64_t configured,
                     struct rf_p2p *p2p);
/* What NCCL asks per network peer before any halving: the cluster's net_channels_per_peer,
 * or ceil(nic.gbps / channel_gbps), as a power of two. */
int64_t rf_topology_net_ask(const struct rf_topology *topo);

/* What the NICs of leaf group `group`'s nodes inject on one rail (B/s, achieved): a leaf
 * uplink's capacity before the fabric's oversubscription, each node at its part's rate. */
double rf_topology_leaf_inject(const struct rf_topology *topo, int64_t group);
/* The rate cap (bytes/s) of one network send of `bytes` bytes in that communicator: the
 * channels NCCL splits it over x channel_gbps; 0 (none) when the communicator has no
 * network peers. */
double rf_p2p_cap(const struct rf_p2p *p2p, int64_t bytes);
/* Short name such as "nic_in[node 3 nic 5]", for tables and the store. */
void rf_link_describe(const struct rf_topology *topo, size_t link, char *buf, size_t size);

#endif
