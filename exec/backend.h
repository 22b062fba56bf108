/* What the replay needs from a machine: memory, copies, the FP8 conversion, the pattern's
 * fill and check (optional: else through host memory), the grouped point-to-point exchange
 * of one step, broadcasts on sub-groups, timers. Two implementations: host memory with MPI
 * (backend_mpi.c) and GPUs with NCCL (backend_nccl.c). */
#ifndef RF_BACKEND_H
#define RF_BACKEND_H

#include <stddef.h>
#include <stdint.h>

#include "boxcopy.h"
#include "control.h"
#include "pattern.h"

/* One message of a grouped exchange: bytes at buf to (send) or from (receive) rank peer. */
struct rf_xfer {
    int peer;
    void *buf;
    size_t bytes;
};

/* The GPUs of one broadcast: root, plus first + i * stride for i < count (the root may be
 * among them). Every rank of such a group shares a sub-communicator. */
struct rf_group {
    int32_t root, first, count, stride;
};

/* What a rank's replay asks of the communication library beyond its buffers, for the memory
 * check: the ranks it sends to and receives from (NCCL sets up a connection to each, with
 * its buffers, at the first message) and the broadcast groups it is a member of (each a
 * ring, connected at the first broadcast). Filled by rf_replay_comm_use. */
struct rf_comm_use {
    const int32_t *send_peers, *recv_peers; /* distinct ranks, none of them this one */
    size_t n_send, n_recv;
    int32_t rings; /* groups of 2 or more members that hold this rank */
};

/* Calls are made by the rank's one thread in the order all ranks agree on (replay.c).
 * Work may be queued (NCCL: one CUDA stream) until `sync`; every call returns 0 or a
 * negative code with err filled. */
struct rf_backend {
    const char *name; /* "mpi" or "nccl" */
    void *impl;
    struct rf_ctl *ctl;
    /* What runs, for the measurement and --probe, set by the constructor (NULL when not
     * applicable): the device's name, the communication library's version, the CUDA
     * runtime's and the driver's (as "13.0"), and exec_config: the backend and how it does
     * what it does ("nccl blocking=1 fp8=kernel fill=device nvcc=13.0", "mpi fill=host"). */
    const char *device, *library, *cuda_runtime, *driver, *config;

    /* Device memory (host memory for MPI), zero-filled. */
    int (*alloc)(struct rf_backend *b, void **ptr, size_t bytes, struct rf_error *err);
    void (*free)(struct rf_backend *b, void *ptr);
    /* Host <-> device, complete when they return. */
    int (*upload)(struct rf_backend *b, void *dev, const void *host, size_t bytes,
                  struct rf_error *err);
    int (*download)(struct rf_backend *b, void *host, const void *dev, size_t bytes,
                    struct rf_error *err);
    /* Device-local strided copy (pack, unpack, same-GPU transfer). */
    int (*copy)(struct rf_backend *b, void *dst, const void *src, const struct rf_copy *c,
                struct rf_error *err);
    /* The broadcast root's BF16 -> FP8 emulation: rf_fp8_of_bf16 of each of n 2-byte
     * elements. */
    /* ... and the 4-bit one: rf_fp4_narrow of n gathered pairs (4 bytes each). */
    int (*narrow4)(struct rf_backend *b, uint8_t *dst, const uint8_t *src, int64_t n,
                   struct rf_error *err);
    int (*narrow)(struct rf_backend *b, uint8_t *dst, const uint8_t *src, int64_t n,
                  struct rf_error *err);
    /* Optional (NULL: the replay goes through host memory, rf_pattern_fill and check): the
     * pattern written into buf, a device buffer holding pb's box densely (pb->box and
     * pb->shape are read before it returns), queued like a copy; and its check, complete
     * when it returns, with rf_pattern_check's results: the number of wrong elements and the
     * first one's index within the box (-1 when none). */
    int (*fill)(struct rf_backend *b, void *buf, const struct rf_pattern_buf *pb, bool poison,
                struct rf_error *err);
    int (*check)(struct rf_backend *b, const void *buf, const struct rf_pattern_buf *pb,
                 int64_t *errors, int64_t *first_bad, struct rf_error *err);
    /* One step of point-to-point messages, sent and received as one group. */
    int (*exchange)(struct rf_backend *b, const struct rf_xfer *sends, size_t n_sends,
                    const struct rf_xfer *recvs, size_t n_recvs, struct rf_error *err);
    /* Creates the sub-communicators of groups[0..n): a collective call on every rank, with
     * the same groups in the same order. */
    int (*groups)(struct rf_backend *b, const struct rf_group *groups, size_t n,
                  struct rf_error *err);
    /* Broadcast of bytes at buf from the group's root (world rank) to its members. */
    int (*bcast)(struct rf_backend *b, int group, void *buf, size_t bytes, struct rf_error *err);
    /* Waits for all queued work, with the control plane's deadline. */
    int (*sync)(struct rf_backend *b, struct rf_error *err);
    /* Timestamps: n marks, recorded in queue order. wait_mark returns once the work queued
     * before mark i is done (with the control plane's deadline; MPI: at once, its work is
     * done when queued); elapsed gives the seconds between two reached marks, or an error. */
    int (*timers)(struct rf_backend *b, int n, struct rf_error *err);
    int (*mark)(struct rf_backend *b, int i, struct rf_error *err);
    int (*wait_mark)(struct rf_backend *b, int i, struct rf_error *err);
    int (*elapsed)(struct rf_backend *b, int from, int to, double *seconds, struct rf_error *err);
    /* What --probe times of a call's fixed cost (probe.c). A barrier across every rank of the
     * world, complete when it returns (with the control plane's deadline): NCCL, a 4-byte
     * ncclAllReduce on the world communicator; MPI, MPI_Ibarrier. */
    int (*barrier)(struct rf_backend *b, struct rf_error *err);
    /* Optional (NULL: not measured, there is no device or no kernel to launch): n empty
     * kernels queued back to back, and an ncclGroupStart/ncclGroupEnd with nothing in it. */
    int (*launch)(struct rf_backend *b, int64_t n, struct rf_error *err);
    int (*empty_group)(struct rf_backend *b, struct rf_error *err);
    /* Optional (NULL: host memory is the device's): pinned host memory, and copies between
     * it and device memory queued like a copy (cudaMemcpyAsync on the rank's stream). */
    int (*host_alloc)(struct rf_backend *b, void **ptr, size_t bytes, struct rf_error *err);
    void (*host_free)(struct rf_backend *b, void *ptr);
    int (*h2d)(struct rf_backend *b, void *dev, const void *host, size_t bytes,
               struct rf_error *err);
    int (*d2h)(struct rf_backend *b, void *host, const void *dev, size_t bytes,
               struct rf_error *err);
    /* After a failure: stop in-flight communication so no call blocks (NCCL abort). */
    void (*abort)(struct rf_backend *b);
    /* Memory the replay's buffers can take, and the pool it comes from: ranks whose pools
     * have the same name share it (MPI: the host's MemAvailable, pool "host NAME"; NCCL:
     * the GPU's free memory, pool "GPU <bus id> on NAME"). *bytes < 0 when unknown. Its
     * communicators exist by then, so what their creation took is not counted again. */
    int (*memory)(struct rf_backend *b, int64_t *bytes, char *pool, size_t pool_size,
                  struct rf_error *err);
    /* Optional (NULL: none): bytes of the pool the library will take at first use for what
     * the replay asks of it (NCCL: connection buffers, nccl_mem.h). */
    int64_t (*comm_need)(struct rf_backend *b, const struct rf_comm_use *use);
    void (*release)(struct rf_backend *b);
};

/* Starts a backend on this rank; MPI is initialised and ctl is ready. */
int rf_backend_mpi_new(struct rf_backend **out, struct rf_ctl *ctl, struct rf_error *err);
/* Returns an error naming why when refit-exec was built without NCCL. net_channels_per_peer
 * > 0: the plan's NCCL channels per network peer (rf_part), which the communicator is given
 * unless NCCL_NCHANNELS_PER_NET_PEER is set; 0 leaves NCCL's default. */
int rf_backend_nccl_new(struct rf_backend **out, struct rf_ctl *ctl, int32_t net_channels_per_peer,
                        struct rf_error *err);

#endif
