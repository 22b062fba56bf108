/* What NCCL allocates on a GPU at a communicator's first use, which refit-exec's memory
 * check cannot read from cudaMemGetInfo: connections are set up lazily (NCCL_RUNTIME_CONNECT,
 * on by default since 2.22), each with its buffers. Host code with no NCCL in it, so the
 * estimate is tested where no GPU is; the figures are NCCL 2.28.9's (nccl_mem.c). */
#ifndef RF_NCCL_MEM_H
#define RF_NCCL_MEM_H

#include <stdbool.h>
#include <stdint.h>

/* The sizes one connection's buffers take, as NCCL computes them for this rank. */
struct rf_nccl_buffers {
    int64_t simple, ll,
        ll128;             /* per protocol: NCCL_BUFFSIZE, NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE */
    int32_t ring_channels; /* channels of a ring */
    int32_t p2p_channels;  /* channels per point-to-point peer */
    int64_t net_chunk;     /* NCCL_P2P_NET_CHUNKSIZE: a slot of the shared network buffers */
    bool read;             /* P2P read (NVLink between compute capability 8.0 GPUs): the
                            * SIMPLE buffer is on the sender */
};

/* NCCL's defaults, or the values of its environment variables read through get (getenv);
 * compute_capability is major * 10 + minor of this rank's GPU. A variable NCCL would
 * refuse (not a number, not positive) leaves the default. */
void rf_nccl_buffers_init(struct rf_nccl_buffers *b, int compute_capability,
                          char *(*get)(const char *));

/* Device bytes one connection (one channel, one direction) of the P2P transport takes on
 * the sending or the receiving GPU. */
int64_t rf_nccl_conn_bytes(const struct rf_nccl_buffers *b, bool send);

/* What a rank will use of NCCL: distinct point-to-point peers on its host (P2P transport)
 * it sends to and receives from, whether it sends to or receives from any rank on another
 * host (the network transport, whose point-to-point buffers are shared by all such peers),
 * and the rings of the broadcast groups it is a member of (groups of two or more). */
struct rf_nccl_use {
    int32_t local_send, local_recv;
    bool remote_send, remote_recv;
    int32_t rings;
};

/* The device bytes NCCL will allocate on this rank's GPU for `use` at first use. */
int64_t rf_nccl_lazy_bytes(const struct rf_nccl_buffers *b, const struct rf_nccl_use *use);

#endif
