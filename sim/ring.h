/* NCCL 2.28's rings for one communicator (its channels, each channel's ring through every
 * NVLink domain, the NIC each ring crosses on), NCCL's own cost model of a ring broadcast or
 * all-gather, and the model's time of one on the cluster's links (doc/research/
 * nccl-collectives.md, sections 1, 2, 5 and 6, is the specification). */
#ifndef RF_RING_H
#define RF_RING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "topology.h"

enum rf_coll_op {
    RF_COLL_OP_BROADCAST, /* bytes: the buffer */
    RF_COLL_OP_ALLGATHER  /* bytes: the total output, N x each rank's part */
};

enum rf_nccl_proto { RF_NCCL_LL, RF_NCCL_LL128, RF_NCCL_SIMPLE, RF_NCCL_PROTO_COUNT };

/* A communicator's rings. NCCL "nodes" are NVLink domains (a DGX node, a whole NVL72 rack
 * with MNNVL), numbered by first appearance in rank order. */
struct rf_ring {
    int32_t n_ranks, n_nodes;
    int32_t min_local;       /* the fewest members on one node */
    int32_t min_nics;        /* the fewest distinct NICs of one node's members */
    int32_t search_channels; /* C_g: the distinct rings the search found */
    double channel_gbps;     /* NCCL's bw: the search's GB/s per ring */
    int32_t channels;        /* C: the collective channels (copies of the C_g rings) */
    bool same_channels;      /* every ring identical (one node) */
    bool blackwell;          /* NVLink of Blackwell's rate: the tuner's Blackwell constants */
    int32_t *gpus;           /* n_ranks: the members in rank order */
    /* ring[c * n_ranks + i]: the i-th GPU of distinct ring c, from node 0's entry. */
    int32_t *ring;
};

/* Builds the rings of the communicator gpus[0 .. n) (distinct GPUs of topo, in rank order;
 * n >= 1). Errors name the offending rank. */
int rf_ring_init(struct rf_ring *ring, const struct rf_topology *topo, const int32_t *gpus,
                 size_t n, struct rf_error *err);
void rf_ring_release(struct rf_ring *ring);

/* The n_ranks GPUs of distinct ring c's broadcast chain from root (root first, then its ring
 * successors: NCCL's runRing) into out; RF_EINVAL when c is out of range or root no member. */
int rf_ring_chain(const struct rf_ring *ring, int c, int32_t root, int32_t *out);

/* The most links rf_ring_chain_links writes: 4 per rank. */
size_t rf_ring_links_max(const struct rf_ring *ring);
/* The links channel c's chain from root crosses, each once, into links (room for
 * rf_ring_links_max), and the sum of its hops' latencies (seconds) into *latency_s.
 * Node-local hops are NVLink routes; a hop between nodes leaves on the exit GPU's NIC and
 * enters on the entry GPU's (rf_topology_route_direct: collectives use the ring's NICs, no
 * PXN relay). 0 when root is no member or c out of range. */
size_t rf_ring_chain_links(const struct rf_ring *ring, const struct rf_topology *topo, int c,
                           int32_t root, int32_t *links, double *latency_s);

/* NCCL's own estimate (seconds) of one call, as its tuner computes it (tuning.cc: ring
 * only, the cheapest of LL, LL128 and Simple), and the protocol it picks into *proto (may be
 * NULL). */
double rf_ring_nccl_time(const struct rf_ring *ring, enum rf_coll_op op, int64_t bytes,
                         enum rf_nccl_proto *proto);
/* NCCL's pipeline chunk (payload bytes) of a protocol for op. */
double rf_ring_chunk(enum rf_coll_op op, enum rf_nccl_proto proto);

/* The model's time (seconds) of one call on topo's links: NCCL's protocol (into *proto, may
 * be NULL); each distinct ring carries bytes / C_g (all-gather: (N-1)/N of it) at the least
 * share capacity / (rings on the link) over its links, times the protocol's efficiency;
 * plus NCCL's latency of that protocol and the fill (N-2) x chunk / that rate. A broadcast
 * is taken from rank 0 (nccl-tests' default root). 0 for one rank or no bytes. */
double rf_ring_time(const struct rf_ring *ring, const struct rf_topology *topo, enum rf_coll_op op,
                    int64_t bytes, enum rf_nccl_proto *proto);

/* Every distinct ring's path of one call, for whoever turns them into flows or link loads:
 * a broadcast's chain from root (N - 1 hops), an all-gather's whole ring (N hops). */
struct rf_ring_paths {
    int n;             /* C_g */
    int32_t *links;    /* path c: links[start[c] .. start[c + 1]), each link once */
    size_t *start;     /* n + 1 */
    double *latency_s; /* per path: the sum of its hops' latencies */
    double *share;     /* per path: the least capacity / (NCCL channels on the link), B/s */
};
/* root: the broadcast's (a member); ignored for an all-gather. */
int rf_ring_paths_init(struct rf_ring_paths *paths, const struct rf_ring *ring,
                       const struct rf_topology *topo, enum rf_coll_op op, int32_t root,
                       struct rf_error *err);
void rf_ring_paths_release(struct rf_ring_paths *paths);

/* The broadcast rings of collectives, by (topology, root, members first_gpu + i x
 * gpu_stride, i < gpu_count), each built once: many rounds and collectives share a member
 * set. The communicator is the root and the members, in GPU order (rank order of a group
 * built from sorted ranks). */
struct rf_ring_entry {
    const struct rf_topology *topo;
    int32_t root, first_gpu, gpu_count, gpu_stride;
    struct rf_ring ring;
    struct rf_ring_paths paths; /* RF_COLL_OP_BROADCAST from root */
};
struct rf_ring_set {
    struct rf_ring_entry *entries; /* sorted by key */
    size_t n, cap;
    int32_t *gpus; /* scratch: a communicator being built */
    size_t cap_gpus;
};
/* The entry of a collective's members (built on first use) into *out, valid until the next
 * call. A zeroed set is empty. */
int rf_ring_set_get(struct rf_ring_set *set, const struct rf_topology *topo, int32_t root,
                    int32_t first_gpu, int32_t gpu_count, int32_t gpu_stride,
                    const struct rf_ring_entry **out, struct rf_error *err);
void rf_ring_set_release(struct rf_ring_set *set);

#endif
