/* The GPU backend: one rank per GPU, MPI bootstraps NCCL (rank 0's ncclUniqueId is
 * broadcast, as nccl-tests does), everything runs on one CUDA stream: pack and unpack are
 * cudaMemcpy2D/3DAsync, a step is ncclSend/ncclRecv inside ncclGroupStart/End, broadcasts
 * are ncclBroadcast on communicators split off the world, timers are CUDA events, --probe's
 * barrier is a 4-byte ncclAllReduce on the world. Built with nvcc, the root's FP8 conversion
 * and the pattern's fill and check are kernels (kernels.cu); without, the conversion is a
 * 1-byte-wide 2-d copy and fill and check go through host memory. exec_config says which
 * ran.
 *
 * What --timeout bounds depends on the communicators' mode (REFIT_EXEC_NCCL_BLOCKING):
 *  - Blocking (the default, as nccl-tests times NCCL): the data movement is bounded. Every
 *    wait for the stream (sync, wait_mark, a check) polls cudaStreamQuery/cudaEventQuery,
 *    NCCL's asynchronous errors and the control plane, so a send or receive whose peer died
 *    or hangs ends in ncclCommAbort and an error naming the round within --timeout. Not
 *    bounded: the calls that block inside NCCL until every rank involved joins them,
 *    ncclCommInitRank, ncclCommSplit, ncclCommFinalize, and an ncclGroupEnd, ncclBroadcast
 *    or (--probe's barrier) ncclAllReduce that connects to a peer for the first time (NCCL 2.28
 * connects at first use, a handshake with the peer before it queues the kernel). A peer that hangs
 * there (alive) stalls this rank until the launcher ends the job; one that dies makes the launcher
 * end it (mpirun does).
 *  - Non-blocking (REFIT_EXEC_NCCL_BLOCKING=0): every NCCL call returns at once
 *    (ncclInProgress) and is polled with the deadline like the stream, so all of the above is
 *    bounded too. But NCCL runs each non-blocking ncclGroupEnd on a thread it creates for that
 *    call (2.28, src/group.cc: pthread_create per group), and that start-up lies inside every
 *    step's measured time: use it to find a hang, not to time. */
#include "backend.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* nccl.h declares ncclGroupStart() and ncclGroupEnd() without (void). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstrict-prototypes"
#include <nccl.h>
#pragma GCC diagnostic pop

#include "nccl_mem.h"
#ifdef RF_HAVE_KERNELS
#include "kernels.h"
#endif

struct nccl_impl {
    int device, rank, size;
    int compute_capability; /* major * 10 + minor */
    bool blocking;
    bool kernels;    /* built with them, and this GPU can run them */
    bool *same_host; /* per world rank: on this rank's host (the P2P transport's reach) */
    unsigned long long *check_result; /* device: a check's count and first wrong index */
    unsigned long long *check_host;   /* pinned: where they are read back */
    int32_t *barrier_word;            /* device: what a barrier's all-reduce sums (--probe) */
    cudaStream_t stream;
    ncclComm_t world;
    ncclComm_t *group_comm; /* NULL where this rank is not a member */
    int *group_root;
    size_t n_groups;
    cudaEvent_t *ev;
    int n_ev;
    bool aborted;
    char device_name[256];
    char version[32], runtime[16], driver[16];
    char config[128];
    char pool[MPI_MAX_PROCESSOR_NAME + 64]; /* "GPU <bus id> on <host>": ranks sharing it */
};

static struct nccl_impl *impl(struct rf_backend *b)
{
    return b->impl;
}

static int cuda_error(struct rf_error *err, cudaError_t e, const char *what)
{
    return rf_error_set(err, RF_ECOMM, "%s: %s (%s)", what, cudaGetErrorString(e),
                        cudaGetErrorName(e));
}

#define CUDA_TRY(call, what)                                                                       \
    do {                                                                                           \
        cudaError_t e_ = (call);                                                                   \
        if (e_ != cudaSuccess)                                                                     \
            return cuda_error(err, e_, what);                                                      \
    } while (0)

static int nccl_error(struct rf_error *err, ncclComm_t comm, ncclResult_t r, const char *what)
{
    const char *last = ncclGetLastError(comm);
    return rf_error_set(err, RF_ECOMM, "%s: %s%s%s", what, ncclGetErrorString(r),
                        last && *last ? ": " : "", last ? last : "");
}

/* A non-blocking communicator reports ncclInProgress until the call has been enqueued (or
 * the communicator is ready); wait for it with the deadline. A blocking one is done when its
 * call returns: this reads its state once. */
static int wait_comm(struct rf_backend *b, ncclComm_t comm, const char *what, struct rf_error *err)
{
    struct rf_ctl_wait w;
    ncclResult_t state;
    int rc;
    rf_ctl_wait_begin(b->ctl, &w);
    for (;;) {
        ncclResult_t r = ncclCommGetAsyncError(comm, &state);
        if (r != ncclSuccess)
            return nccl_error(err, comm, r, what);
        if (state == ncclSuccess)
            return 0;
        if (state != ncclInProgress)
            return nccl_error(err, comm, state, what);
        if ((rc = rf_ctl_tick(b->ctl, &w, what, err)) < 0)
            return rc;
    }
}

static int check_call(struct rf_backend *b, ncclComm_t comm, ncclResult_t r, const char *what,
                      struct rf_error *err)
{
    if (r == ncclSuccess || r == ncclInProgress)
        return wait_comm(b, comm, what, err);
    return nccl_error(err, comm, r, what);
}

/* The control plane calls this while any wait polls: NCCL's asynchronous errors (a peer
 * died, the network failed) end the wait. */
static int poll_async(void *arg, struct rf_error *err)
{
    struct nccl_impl *n = arg;
    ncclResult_t state;
    for (size_t g = 0; g <= n->n_groups; g++) {
        ncclComm_t c = g < n->n_groups ? n->group_comm[g] : n->world;
        if (!c || n->aborted)
            continue;
        if (ncclCommGetAsyncError(c, &state) == ncclSuccess && state != ncclSuccess &&
            state != ncclInProgress)
            return nccl_error(err, c, state, "NCCL reported an asynchronous error");
    }
    return 0;
}

static int g_sync(struct rf_backend *b, struct rf_error *err)
{
    struct nccl_impl *n = impl(b);
    struct rf_ctl_wait w;
    int rc;
    rf_ctl_wait_begin(b->ctl, &w);
    for (;;) {
        cudaError_t e = cudaStreamQuery(n->stream);
        if (e == cudaSuccess)
            return 0;
        if (e != cudaErrorNotReady)
            return cuda_error(err, e, "the CUDA stream failed");
        if ((rc = rf_ctl_tick(b->ctl, &w, "this GPU's work (copies and NCCL calls)", err)) < 0)
            return rc;
    }
}

static int g_alloc(struct rf_backend *b, void **ptr, size_t bytes, struct rf_error *err)
{
    char what[128];
    snprintf(what, sizeof(what), "cudaMalloc of %zu bytes", bytes);
    CUDA_TRY(cudaMalloc(ptr, bytes ? bytes : 1), what);
    CUDA_TRY(cudaMemsetAsync(*ptr, 0, bytes, impl(b)->stream), "cudaMemsetAsync");
    return g_sync(b, err);
}

static void g_free(struct rf_backend *b, void *ptr)
{
    cudaFree(ptr);
}

static int g_upload(struct rf_backend *b, void *dev, const void *host, size_t bytes,
                    struct rf_error *err)
{
    CUDA_TRY(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, impl(b)->stream),
             "cudaMemcpyAsync to the GPU");
    return g_sync(b, err);
}

static int g_download(struct rf_backend *b, void *host, const void *dev, size_t bytes,
                      struct rf_error *err)
{
    CUDA_TRY(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, impl(b)->stream),
             "cudaMemcpyAsync from the GPU");
    return g_sync(b, err);
}

/* A 3-d copy (count[0] slices of count[1] rows) of rows of `width` bytes. */
static int copy3d(struct nccl_impl *n, char *dst, const char *src, const int64_t *count,
                  const int64_t *ds, const int64_t *ss, size_t e, struct rf_error *err)
{
    struct cudaMemcpy3DParms p;
    memset(&p, 0, sizeof(p));
    size_t width = (size_t)count[2] * e;
    p.srcPtr = make_cudaPitchedPtr((void *)src, (size_t)ss[1] * e, width, (size_t)(ss[0] / ss[1]));
    p.dstPtr = make_cudaPitchedPtr(dst, (size_t)ds[1] * e, width, (size_t)(ds[0] / ds[1]));
    p.extent = make_cudaExtent(width, (size_t)count[1], (size_t)count[0]);
    p.kind = cudaMemcpyDeviceToDevice;
    CUDA_TRY(cudaMemcpy3DAsync(&p, n->stream), "cudaMemcpy3DAsync");
    return 0;
}

static int copy2d(struct nccl_impl *n, char *dst, const char *src, int64_t rows, int64_t ds,
                  int64_t ss, size_t width, size_t e, struct rf_error *err)
{
    CUDA_TRY(cudaMemcpy2DAsync(dst, (size_t)ds * e, src, (size_t)ss * e, width, (size_t)rows,
                               cudaMemcpyDeviceToDevice, n->stream),
             "cudaMemcpy2DAsync");
    return 0;
}

static int g_copy(struct rf_backend *b, void *dst, const void *src, const struct rf_copy *c,
                  struct rf_error *err)
{
    struct nccl_impl *n = impl(b);
    size_t e = c->elem;
    char *d = (char *)dst + c->dst_off * (int64_t)e;
    const char *s = (const char *)src + c->src_off * (int64_t)e;
    size_t width = (size_t)c->count[c->ndim - 1] * e;
    int rc;
    switch (c->ndim) {
    case 1:
        CUDA_TRY(cudaMemcpyAsync(d, s, width, cudaMemcpyDeviceToDevice, n->stream),
                 "cudaMemcpyAsync");
        return 0;
    case 2: return copy2d(n, d, s, c->count[0], c->dst_stride[0], c->src_stride[0], width, e, err);
    default: break;
    }
    /* 3 or 4 dims: 3-d copies over the innermost three (a loop over the fourth). A 3-d copy
     * needs each slice stride to be a whole number of rows, which row-major boxes give. */
    int o = c->ndim - 3;
    int64_t outer = o ? c->count[0] : 1;
    bool whole = c->dst_stride[o] % c->dst_stride[o + 1] == 0 &&
                 c->src_stride[o] % c->src_stride[o + 1] == 0;
    for (int64_t i = 0; i < outer; i++) {
        char *di = d + (o ? i * c->dst_stride[0] * (int64_t)e : 0);
        const char *si = s + (o ? i * c->src_stride[0] * (int64_t)e : 0);
        if (whole) {
            rc = copy3d(n, di, si, &c->count[o], &c->dst_stride[o], &c->src_stride[o], e, err);
            if (rc < 0)
                return rc;
            continue;
        }
        for (int64_t j = 0; j < c->count[o]; j++) {
            rc = copy2d(n, di + j * c->dst_stride[o] * (int64_t)e,
                        si + j * c->src_stride[o] * (int64_t)e, c->count[o + 1],
                        c->dst_stride[o + 1], c->src_stride[o + 1], width, e, err);
            if (rc < 0)
                return rc;
        }
    }
    return 0;
}

/* rf_fp8_of_bf16 of each 2-byte element: a kernel at memory speed when built with nvcc; else
 * the high byte (little-endian byte 1) of each, as one 1-byte-wide strided copy, which the
 * copy engine moves a byte per row of its 2-d copy. */
static int g_narrow(struct rf_backend *b, uint8_t *dst, const uint8_t *src, int64_t count,
                    struct rf_error *err)
{
    if (count == 0)
        return 0;
#ifdef RF_HAVE_KERNELS
    if (impl(b)->kernels) {
        CUDA_TRY((cudaError_t)rf_kernel_narrow(impl(b)->stream, dst, src, count),
                 "the FP8 conversion kernel");
        return 0;
    }
#endif
    CUDA_TRY(cudaMemcpy2DAsync(dst, 1, src + 1, 2, 1, (size_t)count, cudaMemcpyDeviceToDevice,
                               impl(b)->stream),
             "cudaMemcpy2DAsync (FP8 emulation)");
    return 0;
}

/* rf_fp4_narrow of each gathered pair: a kernel when built with nvcc; else through host
 * memory (no copy combines two nibbles), after the queued work. */
static int g_narrow4(struct rf_backend *b, uint8_t *dst, const uint8_t *src, int64_t count,
                     struct rf_error *err)
{
    if (count == 0)
        return 0;
#ifdef RF_HAVE_KERNELS
    if (impl(b)->kernels) {
        CUDA_TRY((cudaError_t)rf_kernel_narrow_fp4(impl(b)->stream, dst, src, count),
                 "the 4-bit conversion kernel");
        return 0;
    }
#endif
    uint8_t *wide = malloc((size_t)count * 4), *narrow = malloc((size_t)count);
    int rc = wide && narrow ? 0 : rf_error_set(err, RF_ENOMEM, "out of memory");
    if (rc == 0)
        rc = b->download(b, wide, src, (size_t)count * 4, err);
    if (rc == 0) {
        rf_fp4_narrow(narrow, wide, count);
        rc = b->upload(b, dst, narrow, (size_t)count, err);
    }
    free(wide);
    free(narrow);
    return rc;
}

#ifdef RF_HAVE_KERNELS
static int g_fill(struct rf_backend *b, void *buf, const struct rf_pattern_buf *pb, bool poison,
                  struct rf_error *err)
{
    struct rf_pattern_geom g;
    rf_pattern_geom_of(&g, pb);
    CUDA_TRY((cudaError_t)rf_kernel_fill(impl(b)->stream, buf, &g, pb->tensor, pb->elem,
                                         rf_box_numel(pb->box, pb->ndim), poison),
             "the pattern fill kernel");
    return 0;
}

static int g_check(struct rf_backend *b, const void *buf, const struct rf_pattern_buf *pb,
                   int64_t *errors, int64_t *first_bad, struct rf_error *err)
{
    struct nccl_impl *n = impl(b);
    struct rf_pattern_geom g;
    int rc;
    rf_pattern_geom_of(&g, pb);
    /* The count starts at 0, the first wrong index at the largest value (all bits set). */
    CUDA_TRY(cudaMemsetAsync(n->check_result, 0, sizeof(*n->check_result), n->stream),
             "cudaMemsetAsync (the check's count)");
    CUDA_TRY(cudaMemsetAsync(n->check_result + 1, 0xff, sizeof(*n->check_result), n->stream),
             "cudaMemsetAsync (the check's first index)");
    CUDA_TRY((cudaError_t)rf_kernel_check(n->stream, buf, &g, pb->tensor, pb->elem,
                                          rf_box_numel(pb->box, pb->ndim), n->check_result),
             "the pattern check kernel");
    /* Into pinned memory: the copy is in stream order, done when the stream is. */
    CUDA_TRY(cudaMemcpyAsync(n->check_host, n->check_result, 2 * sizeof(*n->check_host),
                             cudaMemcpyDeviceToHost, n->stream),
             "cudaMemcpyAsync (the check's result)");
    if ((rc = g_sync(b, err)) < 0)
        return rc;
    *errors = (int64_t)n->check_host[0];
    *first_bad = n->check_host[0] ? (int64_t)n->check_host[1] : -1;
    return 0;
}
#endif

static int g_exchange(struct rf_backend *b, const struct rf_xfer *sends, size_t n_sends,
                      const struct rf_xfer *recvs, size_t n_recvs, struct rf_error *err)
{
    struct nccl_impl *n = impl(b);
    ncclResult_t r;
    if (n_sends + n_recvs == 0)
        return 0;
    if ((r = ncclGroupStart()) != ncclSuccess)
        return nccl_error(err, n->world, r, "ncclGroupStart");
    for (size_t i = 0; i < n_recvs; i++)
        if ((r = ncclRecv(recvs[i].buf, recvs[i].bytes, ncclUint8, recvs[i].peer, n->world,
                          n->stream)) != ncclSuccess &&
            r != ncclInProgress) {
            ncclGroupEnd();
            return nccl_error(err, n->world, r, "ncclRecv");
        }
    for (size_t i = 0; i < n_sends; i++)
        if ((r = ncclSend(sends[i].buf, sends[i].bytes, ncclUint8, sends[i].peer, n->world,
                          n->stream)) != ncclSuccess &&
            r != ncclInProgress) {
            ncclGroupEnd();
            return nccl_error(err, n->world, r, "ncclSend");
        }
    return check_call(b, n->world, ncclGroupEnd(), "ncclGroupEnd (a step's sends and receives)",
                      err);
}

/* A barrier through NCCL: a 4-byte sum over the world on the stream, which completes on no
 * rank before every rank has joined it, waited for with the deadline. It stands in for the
 * barrier M2N's transfer engine runs over GIN (NCCL's GPU-initiated networking): what a
 * device-side barrier across the ranks costs through NCCL. Only --probe calls it, so its
 * word is allocated at the first call. */
static int g_barrier(struct rf_backend *b, struct rf_error *err)
{
    struct nccl_impl *n = impl(b);
    int rc;
    if (!n->barrier_word) {
        CUDA_TRY(cudaMalloc((void **)&n->barrier_word, sizeof(*n->barrier_word)),
                 "cudaMalloc (a barrier's word)");
        CUDA_TRY(cudaMemsetAsync(n->barrier_word, 0, sizeof(*n->barrier_word), n->stream),
                 "cudaMemsetAsync (a barrier's word)");
    }
    if ((rc = check_call(b, n->world,
                         ncclAllReduce(n->barrier_word, n->barrier_word, 1, ncclInt32, ncclSum,
                                       n->world, n->stream),
                         "ncclAllReduce (a barrier)", err)) < 0)
        return rc;
    return g_sync(b, err);
}

/* A group with nothing in it: the fixed cost of ncclGroupStart/ncclGroupEnd alone. */
static int g_empty_group(struct rf_backend *b, struct rf_error *err)
{
    struct nccl_impl *n = impl(b);
    ncclResult_t r;
    if ((r = ncclGroupStart()) != ncclSuccess)
        return nccl_error(err, n->world, r, "ncclGroupStart");
    return check_call(b, n->world, ncclGroupEnd(), "ncclGroupEnd (an empty group)", err);
}

#ifdef RF_HAVE_KERNELS
static int g_launch(struct rf_backend *b, int64_t count, struct rf_error *err)
{
    CUDA_TRY((cudaError_t)rf_kernel_empty(impl(b)->stream, count), "an empty kernel's launch");
    return 0;
}
#endif

static int g_host_alloc(struct rf_backend *b, void **ptr, size_t bytes, struct rf_error *err)
{
    char what[128];
    snprintf(what, sizeof(what), "cudaHostAlloc of %zu bytes (pinned host memory)", bytes);
    CUDA_TRY(cudaHostAlloc(ptr, bytes ? bytes : 1, cudaHostAllocDefault), what);
    return 0;
}

static void g_host_free(struct rf_backend *b, void *ptr)
{
    cudaFreeHost(ptr);
}

/* Queued like a copy (upload and download wait for theirs): --probe times them with marks. */
static int g_h2d(struct rf_backend *b, void *dev, const void *host, size_t bytes,
                 struct rf_error *err)
{
    CUDA_TRY(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, impl(b)->stream),
             "cudaMemcpyAsync from pinned host memory");
    return 0;
}

static int g_d2h(struct rf_backend *b, void *host, const void *dev, size_t bytes,
                 struct rf_error *err)
{
    CUDA_TRY(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, impl(b)->stream),
             "cudaMemcpyAsync to pinned host memory");
    return 0;
}

static int g_groups(struct rf_backend *b, const struct rf_group *groups, size_t count,
                    struct rf_error *err)
{
    struct nccl_impl *n = impl(b);
    int rc;
    n->group_comm = calloc(count + 1, sizeof(ncclComm_t));
    n->group_root = calloc(count + 1, sizeof(int));
    if (!n->group_comm || !n->group_root)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (size_t g = 0; g < count; g++) {
        const struct rf_group *gr = &groups[g];
        bool member = n->rank == gr->root;
        int below = 0;
        for (int32_t i = 0; i < gr->count; i++) {
            int32_t r = gr->first + i * gr->stride;
            member |= r == n->rank;
            below += r < gr->root;
        }
        ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
        cfg.blocking = n->blocking;
        ncclResult_t r = ncclCommSplit(n->world, member ? 0 : NCCL_SPLIT_NOCOLOR, n->rank,
                                       &n->group_comm[g], &cfg);
        n->n_groups = g + 1;
        if (r != ncclSuccess && r != ncclInProgress)
            return nccl_error(err, n->world, r, "ncclCommSplit (a broadcast group)");
        if ((rc = wait_comm(b, n->world, "ncclCommSplit", err)) < 0)
            return rc;
        if (n->group_comm[g] &&
            (rc = wait_comm(b, n->group_comm[g], "ncclCommSplit (new communicator)", err)) < 0)
            return rc;
        n->group_root[g] = below;
    }
    return 0;
}

static int g_bcast(struct rf_backend *b, int group, void *buf, size_t bytes, struct rf_error *err)
{
    struct nccl_impl *n = impl(b);
    ncclComm_t c = n->group_comm[group];
    return check_call(b, c,
                      ncclBroadcast(buf, buf, bytes, ncclUint8, n->group_root[group], c, n->stream),
                      "ncclBroadcast", err);
}

static void free_events(struct nccl_impl *n)
{
    for (int i = 0; i < n->n_ev; i++)
        cudaEventDestroy(n->ev[i]);
    free(n->ev);
    n->ev = NULL;
    n->n_ev = 0;
}

static int g_timers(struct rf_backend *b, int count, struct rf_error *err)
{
    struct nccl_impl *n = impl(b);
    free_events(n);
    n->ev = calloc((size_t)count + 1, sizeof(cudaEvent_t));
    if (!n->ev)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (int i = 0; i < count; i++) {
        CUDA_TRY(cudaEventCreate(&n->ev[i]), "cudaEventCreate");
        n->n_ev = i + 1;
    }
    return 0;
}

static int g_mark(struct rf_backend *b, int i, struct rf_error *err)
{
    CUDA_TRY(cudaEventRecord(impl(b)->ev[i], impl(b)->stream), "cudaEventRecord");
    return 0;
}

/* Polled like sync: the work queued before mark i, with the deadline. */
static int g_wait_mark(struct rf_backend *b, int i, struct rf_error *err)
{
    struct nccl_impl *n = impl(b);
    struct rf_ctl_wait w;
    int rc;
    rf_ctl_wait_begin(b->ctl, &w);
    for (;;) {
        cudaError_t e = cudaEventQuery(n->ev[i]);
        if (e == cudaSuccess)
            return 0;
        if (e != cudaErrorNotReady)
            return cuda_error(err, e, "the CUDA stream failed");
        if ((rc = rf_ctl_tick(b->ctl, &w, "this GPU's work (copies and NCCL calls)", err)) < 0)
            return rc;
    }
}

static int g_elapsed(struct rf_backend *b, int from, int to, double *seconds, struct rf_error *err)
{
    struct nccl_impl *n = impl(b);
    float ms = 0;
    char what[96];
    if (from < 0 || to < from || to >= n->n_ev)
        return rf_error_set(err, RF_EINVAL, "marks %d to %d: there are %d", from, to, n->n_ev);
    snprintf(what, sizeof(what), "cudaEventElapsedTime between marks %d and %d", from, to);
    CUDA_TRY(cudaEventElapsedTime(&ms, n->ev[from], n->ev[to]), what);
    *seconds = ms / 1e3;
    return 0;
}

static void g_abort(struct rf_backend *b)
{
    struct nccl_impl *n = impl(b);
    if (!n || n->aborted)
        return;
    n->aborted = true;
    /* Sub-communicators first, then the world: in-flight kernels stop, nothing blocks. */
    for (size_t g = 0; g < n->n_groups; g++)
        if (n->group_comm[g])
            ncclCommAbort(n->group_comm[g]);
    if (n->world)
        ncclCommAbort(n->world);
}

/* The GPU's free memory now (after NCCL's own buffers); ranks on one GPU share it. */
static int g_memory(struct rf_backend *b, int64_t *bytes, char *pool, size_t pool_size,
                    struct rf_error *err)
{
    size_t free_bytes = 0, total = 0;
    snprintf(pool, pool_size, "%s", impl(b)->pool);
    CUDA_TRY(cudaMemGetInfo(&free_bytes, &total), "cudaMemGetInfo");
    *bytes = (int64_t)free_bytes;
    return 0;
}

/* What NCCL will allocate on this GPU at the replay's first messages and broadcasts
 * (nccl_mem.h): peers on this host connect over the P2P transport, each with buffers of its
 * own; peers elsewhere share the network transport's. */
static int64_t g_comm_need(struct rf_backend *b, const struct rf_comm_use *use)
{
    struct nccl_impl *n = impl(b);
    struct rf_nccl_buffers nb;
    struct rf_nccl_use u = {.rings = use->rings};
    rf_nccl_buffers_init(&nb, n->compute_capability, getenv);
    for (size_t i = 0; i < use->n_send; i++) {
        bool local = n->same_host[use->send_peers[i]];
        u.local_send += local;
        u.remote_send |= !local;
    }
    for (size_t i = 0; i < use->n_recv; i++) {
        bool local = n->same_host[use->recv_peers[i]];
        u.local_recv += local;
        u.remote_recv |= !local;
    }
    return rf_nccl_lazy_bytes(&nb, &u);
}

static void finish_comm(struct rf_backend *b, ncclComm_t c)
{
    struct rf_error err;
    if (!c)
        return;
    if (check_call(b, c, ncclCommFinalize(c), "ncclCommFinalize", &err) < 0)
        ncclCommAbort(c);
    else
        ncclCommDestroy(c);
}

static void g_release(struct rf_backend *b)
{
    struct nccl_impl *n = impl(b);
    if (b->ctl && b->ctl->poll_arg == n) {
        b->ctl->poll_extra = NULL;
        b->ctl->poll_arg = NULL;
    }
    if (n) {
        if (!n->aborted) {
            for (size_t g = 0; g < n->n_groups; g++)
                finish_comm(b, n->group_comm[g]);
            finish_comm(b, n->world);
        }
        free_events(n);
        if (n->check_result)
            cudaFree(n->check_result);
        if (n->check_host)
            cudaFreeHost(n->check_host);
        if (n->barrier_word)
            cudaFree(n->barrier_word);
        if (n->stream)
            cudaStreamDestroy(n->stream);
        free(n->same_host);
        free(n->group_comm);
        free(n->group_root);
        free(n);
    }
    free(b);
}

/* Marks the world ranks on this host (the members of `local`) in n->same_host. */
static int host_ranks(struct nccl_impl *n, MPI_Comm local, int lsize, struct rf_error *err)
{
    MPI_Group lg = MPI_GROUP_NULL, wg = MPI_GROUP_NULL;
    int *lr = calloc((size_t)lsize, sizeof(int)), *wr = calloc((size_t)lsize, sizeof(int)), rc = 0;
    n->same_host = calloc((size_t)n->size, sizeof(bool));
    if (!lr || !wr || !n->same_host) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (int i = 0; i < lsize; i++)
        lr[i] = i;
    if (MPI_Comm_group(local, &lg) != MPI_SUCCESS ||
        MPI_Comm_group(MPI_COMM_WORLD, &wg) != MPI_SUCCESS ||
        MPI_Group_translate_ranks(lg, lsize, lr, wg, wr) != MPI_SUCCESS) {
        rc = rf_error_set(err, RF_ECOMM, "MPI_Group_translate_ranks (this host's ranks) failed");
        goto out;
    }
    for (int i = 0; i < lsize; i++)
        if (wr[i] >= 0 && wr[i] < n->size)
            n->same_host[wr[i]] = true;
out:
    if (lg != MPI_GROUP_NULL)
        MPI_Group_free(&lg);
    if (wg != MPI_GROUP_NULL)
        MPI_Group_free(&wg);
    free(lr);
    free(wr);
    return rc;
}

/* Picks this rank's GPU: ranks on one host take its visible GPUs in turn. Whether ranks
 * share a GPU is decided on the GPUs' PCI bus ids, not on counts, since a launcher may show
 * each rank a different single GPU. Sharing is allowed only where NCCL can do it (2.30 and
 * later, with NCCL_MULTI_RANK_GPU_ENABLE=1; earlier versions fail with "Duplicate GPU
 * detected"). NCCL checks for duplicates between every pair of ranks of a communicator, on
 * every rank, so the decision is the world's (the most ranks on one GPU anywhere) and every
 * rank sets the variable, not only those of a host that shares. */
static int pick_device(struct nccl_impl *n, struct rf_ctl *ctl, struct rf_error *err)
{
    enum { BUS = 32 };
    MPI_Comm local = MPI_COMM_NULL;
    MPI_Request req;
    int lrank = 0, lsize = 1, ndev = 0, version = 0, len, most = 1, world_most = 1, rc = 0;
    char host[MPI_MAX_PROCESSOR_NAME] = "", bus[BUS] = "";
    char *all = NULL;
    MPI_Get_processor_name(host, &len);
    cudaError_t e = cudaGetDeviceCount(&ndev);
    if (e != cudaSuccess || ndev == 0)
        return rf_error_set(err, RF_ECOMM,
                            "no CUDA device on %s (%s): the nccl backend needs a GPU per rank; "
                            "use --backend mpi on hosts without GPUs",
                            host, e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, n->rank, MPI_INFO_NULL, &local) !=
        MPI_SUCCESS)
        return rf_error_set(err, RF_ECOMM, "MPI_Comm_split_type failed");
    MPI_Comm_rank(local, &lrank);
    MPI_Comm_size(local, &lsize);
    if ((rc = host_ranks(n, local, lsize, err)) < 0)
        goto out;
    n->device = lrank % ndev;
    if ((e = cudaDeviceGetPCIBusId(bus, BUS, n->device)) != cudaSuccess) {
        rc = cuda_error(err, e, "cudaDeviceGetPCIBusId");
        goto out;
    }
    all = calloc((size_t)lsize, BUS);
    if (!all) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    if (MPI_Iallgather(bus, BUS, MPI_CHAR, all, BUS, MPI_CHAR, local, &req) != MPI_SUCCESS) {
        rc = rf_error_set(err, RF_ECOMM, "MPI_Iallgather failed");
        goto out;
    }
    if ((rc = rf_ctl_waitall(ctl, 1, &req, "the GPUs of this host's ranks", err)) < 0)
        goto out;
    for (int i = 0; i < lsize; i++) {
        int same = 0;
        for (int j = 0; j < lsize; j++)
            same += strcmp(all + (size_t)i * BUS, all + (size_t)j * BUS) == 0;
        most = same > most ? same : most;
    }
    if (MPI_Iallreduce(&most, &world_most, 1, MPI_INT, MPI_MAX, ctl->comm, &req) != MPI_SUCCESS) {
        rc = rf_error_set(err, RF_ECOMM, "MPI_Iallreduce failed");
        goto out;
    }
    if ((rc = rf_ctl_waitall(ctl, 1, &req, "every host's count of ranks per GPU", err)) < 0)
        goto out;
    ncclGetVersion(&version);
    if (world_most > 1) {
        if (version < 23000) {
            rc = rf_error_set(err, RF_EINVAL,
                              "%d ranks share one GPU%s%s: NCCL %s cannot put several ranks on "
                              "one GPU (it fails with 'Duplicate GPU detected'); NCCL >= 2.30 "
                              "can, with NCCL_MULTI_RANK_GPU_ENABLE=1. Launch one rank per GPU",
                              world_most, most == world_most ? " on " : "",
                              most == world_most ? host : "", n->version);
            goto out;
        }
        if (!getenv("NCCL_MULTI_RANK_GPU_ENABLE")) {
            setenv("NCCL_MULTI_RANK_GPU_ENABLE", "1", 0);
            if (n->rank == 0)
                fprintf(stderr,
                        "refit-exec: up to %d ranks share a GPU: NCCL_MULTI_RANK_GPU_ENABLE=1 on "
                        "every rank (NCCL %s)\n",
                        world_most, n->version);
        }
    }
    if ((e = cudaSetDevice(n->device)) != cudaSuccess) {
        rc = cuda_error(err, e, "cudaSetDevice");
        goto out;
    }
    struct cudaDeviceProp prop;
    if ((e = cudaGetDeviceProperties(&prop, n->device)) != cudaSuccess) {
        rc = cuda_error(err, e, "cudaGetDeviceProperties");
        goto out;
    }
    snprintf(n->device_name, sizeof(n->device_name), "%s", prop.name);
    snprintf(n->pool, sizeof(n->pool), "GPU %s on %s", bus, host);
    n->compute_capability = prop.major * 10 + prop.minor;
out:
    free(all);
    if (local != MPI_COMM_NULL)
        MPI_Comm_free(&local);
    return rc;
}

/* The plan's NCCL channels per network peer (the simulator's p2p rate assumes them, sim/
 * topology.c): given to the world communicator, which carries every point-to-point step,
 * unless the user's NCCL_NCHANNELS_PER_NET_PEER says otherwise; that is left to NCCL. The
 * config field came with NCCL 2.24. Built against an older nccl.h, or run on an older
 * library (which ignores config fields it does not know), the plan's figure is not applied
 * and the communicator keeps NCCL's default; rank 0 says so, and how to apply it. */
static void set_net_channels(ncclConfig_t *cfg, const struct nccl_impl *n, int32_t channels,
                             int version)
{
    if (channels <= 0 || getenv("NCCL_NCHANNELS_PER_NET_PEER"))
        return;
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0)
    cfg->nChannelsPerNetPeer = channels;
    if (version >= 22400)
        return;
#endif
    if (n->rank == 0)
        fprintf(stderr,
                "refit-exec: NCCL %s has no nChannelsPerNetPeer (2.24 added it): the plan's %d "
                "channels per network peer are not set, NCCL's default applies; "
                "NCCL_NCHANNELS_PER_NET_PEER=%d sets them\n",
                n->version, channels, channels);
}

/* REFIT_EXEC_NCCL_BLOCKING: 1 (or unset) for blocking communicators, 0 for non-blocking
 * ones (the header says what each bounds). */
static int blocking_mode(bool *blocking, struct rf_error *err)
{
    const char *v = getenv("REFIT_EXEC_NCCL_BLOCKING");
    *blocking = true;
    if (!v || !*v || strcmp(v, "1") == 0)
        return 0;
    if (strcmp(v, "0") == 0) {
        *blocking = false;
        return 0;
    }
    return rf_error_set(err, RF_EINVAL,
                        "REFIT_EXEC_NCCL_BLOCKING=%s: expected 1 (blocking communicators, the "
                        "default) or 0 (non-blocking: every NCCL call bounded by --timeout)",
                        v);
}

/* "13.0" of a CUDA version number (13000). */
static void cuda_version(char *out, size_t size, int v)
{
    snprintf(out, size, "%d.%d", v / 1000, v % 1000 / 10);
}

static void describe(struct rf_backend *b, struct nccl_impl *n)
{
    int rt = 0, drv = 0;
    if (cudaRuntimeGetVersion(&rt) == cudaSuccess)
        cuda_version(n->runtime, sizeof(n->runtime), rt);
    if (cudaDriverGetVersion(&drv) == cudaSuccess)
        cuda_version(n->driver, sizeof(n->driver), drv);
    const char *nvcc = "none";
#ifdef RF_HAVE_KERNELS
    /* Kernels without an image for this GPU (older than sm_80) fail at launch: the copy and
     * host paths serve it instead, and exec_config says so. */
    int why = rf_kernels_usable();
    n->kernels = why == 0;
    nvcc = rf_kernels_nvcc();
    if (n->kernels) {
        b->fill = g_fill;
        b->check = g_check;
        b->launch = g_launch;
    } else if (n->rank == 0) {
        fprintf(stderr,
                "refit-exec: this refit-exec's kernels cannot run on %s (compute capability "
                "%d.%d: %s): FP8 conversion by copy, fill and check through host memory\n",
                n->device_name, n->compute_capability / 10, n->compute_capability % 10,
                cudaGetErrorString((cudaError_t)why));
    }
#endif
    snprintf(n->config, sizeof(n->config), "nccl blocking=%d fp8=%s fill=%s nvcc=%s", n->blocking,
             n->kernels ? "kernel" : "copy2d", n->kernels ? "device" : "host", nvcc);
    b->device = n->device_name;
    b->library = n->version;
    b->cuda_runtime = n->runtime[0] ? n->runtime : NULL;
    b->driver = n->driver[0] ? n->driver : NULL;
    b->config = n->config;
}

int rf_backend_nccl_new(struct rf_backend **out, struct rf_ctl *ctl, int32_t net_channels_per_peer,
                        struct rf_error *err)
{
    struct rf_backend *b = calloc(1, sizeof(*b));
    struct nccl_impl *n = calloc(1, sizeof(*n));
    ncclUniqueId id;
    int rc, version = 0;
    if (!b || !n) {
        free(b);
        free(n);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    *b = (struct rf_backend){.name = "nccl",
                             .impl = n,
                             .ctl = ctl,
                             .alloc = g_alloc,
                             .free = g_free,
                             .upload = g_upload,
                             .download = g_download,
                             .copy = g_copy,
                             .narrow = g_narrow,
                             .narrow4 = g_narrow4,
                             .exchange = g_exchange,
                             .groups = g_groups,
                             .bcast = g_bcast,
                             .sync = g_sync,
                             .barrier = g_barrier,
                             .empty_group = g_empty_group,
                             .host_alloc = g_host_alloc,
                             .host_free = g_host_free,
                             .h2d = g_h2d,
                             .d2h = g_d2h,
                             .timers = g_timers,
                             .mark = g_mark,
                             .wait_mark = g_wait_mark,
                             .elapsed = g_elapsed,
                             .abort = g_abort,
                             .memory = g_memory,
                             .comm_need = g_comm_need,
                             .release = g_release};
    n->rank = ctl->rank;
    n->size = ctl->size;
    ncclGetVersion(&version);
    snprintf(n->version, sizeof(n->version), "%d.%d.%d", version / 10000, version / 100 % 100,
             version % 100);
    /* Built against an nccl.h with ncclCommSplit, but the library found at run time (a
     * bundle's, a Python wheel's) may be older. */
    if (version < 21800) {
        rc = rf_error_set(err, RF_EINVAL,
                          "NCCL %s is too old: refit-exec needs 2.18 or later (ncclCommSplit, "
                          "for broadcast groups); point LD_LIBRARY_PATH at a newer libnccl.so.2",
                          n->version);
        goto fail;
    }
    if ((rc = blocking_mode(&n->blocking, err)) < 0 || (rc = pick_device(n, ctl, err)) < 0)
        goto fail;
    describe(b, n);
    cudaError_t e = cudaStreamCreateWithFlags(&n->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        rc = cuda_error(err, e, "cudaStreamCreate");
        goto fail;
    }
    if ((e = cudaMalloc((void **)&n->check_result, 2 * sizeof(unsigned long long))) !=
            cudaSuccess ||
        (e = cudaMallocHost((void **)&n->check_host, 2 * sizeof(unsigned long long))) !=
            cudaSuccess) {
        rc = cuda_error(err, e, "the check's counters (cudaMalloc, cudaMallocHost)");
        goto fail;
    }
    /* MPI bootstraps NCCL: rank 0's unique id goes to every rank. */
    memset(&id, 0, sizeof(id));
    if (ctl->rank == 0) {
        ncclResult_t r = ncclGetUniqueId(&id);
        if (r != ncclSuccess) {
            rc = nccl_error(err, NULL, r, "ncclGetUniqueId");
            goto fail;
        }
    }
    MPI_Request req;
    if (MPI_Ibcast(&id, sizeof(id), MPI_BYTE, 0, ctl->comm, &req) != MPI_SUCCESS) {
        rc = rf_error_set(err, RF_ECOMM, "MPI_Ibcast of the NCCL id failed");
        goto fail;
    }
    if ((rc = rf_ctl_waitall(ctl, 1, &req, "the NCCL id from rank 0", err)) < 0)
        goto fail;
    ncclConfig_t cfg = NCCL_CONFIG_INITIALIZER;
    cfg.blocking = n->blocking;
    set_net_channels(&cfg, n, net_channels_per_peer, version);
    ncclResult_t r = ncclCommInitRankConfig(&n->world, n->size, id, n->rank, &cfg);
    if (r != ncclSuccess && r != ncclInProgress) {
        rc = nccl_error(err, n->world, r, "ncclCommInitRankConfig");
        goto fail;
    }
    if ((rc = wait_comm(b, n->world, "ncclCommInitRank (every rank)", err)) < 0)
        goto fail;
    ctl->poll_extra = poll_async;
    ctl->poll_arg = n;
    ctl->yield_seconds = ctl->timeout;
    *out = b;
    return 0;
fail:
    g_abort(b);
    g_release(b);
    return rc;
}
