/* The estimate of NCCL's lazily allocated connection buffers. Every figure is NCCL 2.28.9's,
 * read in its source (the file is named at each); a later NCCL may differ, so the estimate
 * is what the memory check adds, not what the replay depends on. */
#include "nccl_mem.h"

#include <stdlib.h>

/* src/include/device.h: NCCL_STEPS slots per buffer; an LL buffer holds
 * NCCL_LL_LINES_PER_THREAD (8) x NCCL_LL_MAX_NTHREADS (512) 16-byte lines per step, an LL128
 * buffer NCCL_LL128_ELEMS_PER_THREAD (120) x NCCL_LL128_MAX_NTHREADS (640) 8-byte elements;
 * src/init.cc: DEFAULT_LL_BUFFSIZE, DEFAULT_LL128_BUFFSIZE and DEFAULT_BUFFSIZE (SIMPLE,
 * 4 MiB), which NCCL_LL_BUFFSIZE, NCCL_LL128_BUFFSIZE and NCCL_BUFFSIZE replace. */
#define STEPS 8
#define LL_DEFAULT ((int64_t)8 * 512 * STEPS * 16)     /* 512 KiB */
#define LL128_DEFAULT ((int64_t)120 * 640 * STEPS * 8) /* 4800 KiB */
#define SIMPLE_DEFAULT ((int64_t)4 << 20)
/* src/include/comm.h: struct ncclSendMem and ncclRecvMem, the head of each connection's
 * memory, are padded to MEM_ALIGN (4 KiB); every P2P transport buffer is rounded up to
 * CUDA_IPC_MIN (2 MiB), the granularity of memory shared between processes. */
#define MEM_HEADER ((int64_t)4096)
#define IPC_MIN ((int64_t)2 << 20)
/* src/transport/net.cc: point-to-point messages over the network share one buffer per
 * direction and local rank, NCCL_SHARED_STEPS (16) slots per channel of NCCL_P2P_NET_CHUNKSIZE
 * (src/init.cc: 128 KiB) each. */
#define SHARED_STEPS 16
#define NET_CHUNK_DEFAULT ((int64_t)128 << 10)
/* The channels NCCL picks come from its topology search (rings: src/graph/connect.cc; per
 * point-to-point peer twice the NVLinks between the GPUs, src/graph/paths.cc
 * ncclTopoGetNchannels), which no NCCL call reports. 32 is what NVSwitch systems of H100
 * and later reach (MAXCHANNELS is 64); a PCIe peer gets 2, so the estimate errs towards
 * refusing there. NCCL's own caps lower it, for NCCL and for the estimate alike. */
#define CHANNELS 32

static int64_t env_int(char *(*get)(const char *), const char *name, int64_t dflt)
{
    const char *v = get ? get(name) : NULL;
    char *end;
    long long x;
    if (!v || !*v)
        return dflt;
    x = strtoll(v, &end, 0);
    return *end || x <= 0 ? dflt : (int64_t)x;
}

static int32_t at_most(int32_t n, int64_t cap)
{
    return cap < n ? (int32_t)cap : n;
}

void rf_nccl_buffers_init(struct rf_nccl_buffers *b, int compute_capability,
                          char *(*get)(const char *))
{
    int32_t channels = CHANNELS;
    b->simple = env_int(get, "NCCL_BUFFSIZE", SIMPLE_DEFAULT);
    b->ll = env_int(get, "NCCL_LL_BUFFSIZE", LL_DEFAULT);
    b->ll128 = env_int(get, "NCCL_LL128_BUFFSIZE", LL128_DEFAULT);
    b->net_chunk = env_int(get, "NCCL_P2P_NET_CHUNKSIZE", NET_CHUNK_DEFAULT);
    channels = at_most(channels, env_int(get, "NCCL_MAX_NCHANNELS", CHANNELS));
    channels = at_most(channels, env_int(get, "NCCL_MAX_CTAS", CHANNELS));
    b->ring_channels = channels;
    b->p2p_channels = at_most(channels, env_int(get, "NCCL_MAX_P2P_NCHANNELS", CHANNELS));
    /* src/graph/paths.cc ncclTopoCheckP2p: P2P read only between NVLink-connected GPUs of
     * compute capability 8.0, unless NCCL_P2P_READ_ENABLE says otherwise. */
    const char *read = get ? get("NCCL_P2P_READ_ENABLE") : NULL;
    b->read = read && *read ? atoi(read) == 1 : compute_capability == 80;
}

static int64_t ipc_round(int64_t bytes)
{
    return (bytes + IPC_MIN - 1) / IPC_MIN * IPC_MIN;
}

/* src/transport/p2p.cc p2pSendSetup and p2pRecvSetup: the receiver holds the LL, LL128 and
 * SIMPLE buffers after its ncclRecvMem, the sender only its ncclSendMem; with P2P read the
 * SIMPLE buffer moves to the sender. */
int64_t rf_nccl_conn_bytes(const struct rf_nccl_buffers *b, bool send)
{
    if (send)
        return ipc_round(MEM_HEADER + (b->read ? b->simple : 0));
    return ipc_round(MEM_HEADER + b->ll + b->ll128 + (b->read ? 0 : b->simple));
}

int64_t rf_nccl_lazy_bytes(const struct rf_nccl_buffers *b, const struct rf_nccl_use *use)
{
    int64_t send = rf_nccl_conn_bytes(b, true), recv = rf_nccl_conn_bytes(b, false);
    int64_t shared = (int64_t)b->p2p_channels * SHARED_STEPS * b->net_chunk;
    /* src/enqueue.cc: the first message to or from a peer connects all of its channels
     * (p2pnChannelsPerPeer), whatever its size. */
    int64_t bytes = (int64_t)b->p2p_channels * (use->local_send * send + use->local_recv * recv);
    bytes += (use->remote_send ? shared : 0) + (use->remote_recv ? shared : 0);
    /* src/transport/generic.cc ncclTransportRingConnect: the first broadcast connects every
     * ring channel, a send to the next member and a receive from the previous one (a ring
     * over the network holds buffers of the same sizes). */
    bytes += (int64_t)use->rings * b->ring_channels * (send + recv);
    return bytes;
}
