/* The probes. Each rank allocates two buffers A and B of N bytes and times, with the
 * backend's marks (CUDA events; MPI_Wtime), the median of --iters iterations after --warmup
 * of each operation a replay is made of:
 *   fill      the pattern into A as N/2 BF16 elements (rf_fill_buffer: device or host)
 *   check     A against the pattern (rf_check_buffer)
 *   copy      A -> B, contiguous (GB/s = bytes copied / s: memcpy_gbps's convention,
 *             models/lib/cluster.lua)
 *   pack      rows of 4 KiB at a 16 KiB pitch of A -> B, packed: a TP column shard's pack
 *   narrow    A's BF16 -> FP8 into B (GB/s of BF16 read: quant_gbps's convention)
 *   selfsend  A -> B through the backend's exchange, a send and a receive to itself in one
 *             group (NCCL allows self point-to-point)
 * then the fixed cost of one call, each on the host's clock (MPI_Wtime) from before the call
 * to its completion, the median of --iters x CALLS calls one at a time:
 *   launch    LAUNCHES empty kernels back to back on the rank's stream, per launch (one
 *             sample is all of them, to the last one's completion)
 *   latency   one empty kernel, launched and waited for
 *   group     an empty ncclGroupStart/ncclGroupEnd
 *   send4k    a group of one 4 KiB send to rank r + 1 and receive from r - 1 (mod N; itself
 *             on one rank), to completion
 *   barrier   the backend's barrier across the world's N ranks
 * and host <-> device copies between pinned host memory and A or B, with the marks:
 *   h2d, d2h  cudaMemcpyAsync of N bytes (GB/s = bytes / s, 1 GB = 1e9 B)
 * in that order, every rank together (a barrier between probes). Each result is checked
 * after its timing against the host's definition of the pattern (a sample downloaded), and
 * the check against known answers (a poisoned buffer, one corrupted element), so a probe
 * that is fast but wrong says "failed". On host memory (the MPI backend) there is no kernel,
 * group or pinned copy: those say "not measured (host backend)", never a figure. Rank 0
 * gathers every rank's results and prints them (probe_report.c). */
#include "probe.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_int.h"
#include "replay.h"

/* The probes' names, as the reports and the messages print them. */
const char *const probe_name[N_PROBES] = {"copy",     "pack",   "narrow",  "fill",  "check",
                                          "selfsend", "launch", "latency", "group", "send4k",
                                          "barrier",  "h2d",    "d2h"};
/* The order they run in: fill first, so every later probe moves the pattern and its result
 * can be checked; the probes added for the calibration after the first six, which keep
 * their order and buffers. */
static const int run_order[N_PROBES] = {P_FILL,     P_CHECK,  P_COPY,    P_PACK,  P_NARROW,
                                        P_SELFSEND, P_LAUNCH, P_LATENCY, P_GROUP, P_SEND4K,
                                        P_BARRIER,  P_H2D,    P_D2H};

#define ROW ((int64_t)4096)
#define PITCH ((int64_t)16384)
#define SAMPLE ((int64_t)4 << 20) /* bytes of a result downloaded to be checked */
#define MSG ((int64_t)4096)       /* the send4k probe's message */
#define CALLS 100                 /* calls timed one at a time per iteration */
#define LAUNCHES 1000             /* back-to-back launches in one sample of the launch probe */

struct rank_info {
    char device[128];
    char pool[192];
    int64_t available;
};

struct probe {
    struct rf_backend *be;
    const struct rf_probe_opts *o;
    uint8_t *a, *b, *host;
    uint8_t *pinned; /* N bytes of pinned host memory (h2d, d2h), at their first use */
    int64_t n;       /* bytes of each buffer */
    int64_t shape[RF_MAX_DIMS];
    struct rf_box box, head_box, msg_box;
    struct rf_pattern_buf bf16, fp8; /* A (and B after a copy) as BF16; B after narrow */
    struct rf_pattern_buf head, msg; /* the first SAMPLE (or N) bytes; the first MSG bytes */
    double *samples;
};

/* The value of `key` ("fp8=") in the backend's exec_config, or dflt. */
static void config_token(const struct rf_backend *be, const char *key, const char *dflt, char *out,
                         size_t size)
{
    const char *at = be->config ? strstr(be->config, key) : NULL;
    if (!at) {
        snprintf(out, size, "%s", dflt);
        return;
    }
    at += strlen(key);
    snprintf(out, size, "%.*s", (int)strcspn(at, " "), at);
}

static void impl_of(const struct probe *p, int probe, char *out, size_t size)
{
    bool mpi = strcmp(p->be->name, "mpi") == 0;
    switch (probe) {
    case P_COPY: snprintf(out, size, "%s", mpi ? "memcpy" : "cudaMemcpyAsync"); break;
    case P_PACK: snprintf(out, size, "%s", mpi ? "memcpy" : "cudaMemcpy2DAsync"); break;
    case P_NARROW: config_token(p->be, "fp8=", "host", out, size); break;
    case P_FILL:
    case P_CHECK: config_token(p->be, "fill=", "host", out, size); break;
    case P_LAUNCH: snprintf(out, size, "empty kernel x %d", LAUNCHES); break;
    case P_LATENCY: snprintf(out, size, "empty kernel + sync"); break;
    case P_GROUP: snprintf(out, size, "ncclGroupStart/End"); break;
    case P_BARRIER: snprintf(out, size, "%s", mpi ? "MPI_Ibarrier" : "ncclAllReduce 4 B"); break;
    case P_H2D:
    case P_D2H: snprintf(out, size, "cudaMemcpyAsync"); break;
    default: snprintf(out, size, "%s", mpi ? "MPI_Isend/MPI_Irecv" : "ncclSend/ncclRecv"); break;
    }
}

static int64_t probe_bytes(const struct probe *p, int probe)
{
    switch (probe) {
    case P_PACK: return p->n / PITCH * ROW;
    case P_LAUNCH:
    case P_LATENCY:
    case P_GROUP: return 0;
    case P_SEND4K: return MSG;
    case P_BARRIER: return strcmp(p->be->name, "mpi") == 0 ? 0 : 4;
    default: return p->n;
    }
}

/* Why this backend cannot run a probe (its status), or NULL. Host memory is the MPI
 * backend's device: it launches no kernel, has no group and no pinned copy to time. */
static const char *unmeasured(const struct probe *p, int probe)
{
    const struct rf_backend *be = p->be;
    bool host = !be->host_alloc;
    switch (probe) {
    case P_LAUNCH:
    case P_LATENCY:
        if (be->launch)
            return NULL;
        return host ? "not measured (host backend)"
                    : "unsupported: no kernels (refit-exec was built without nvcc, or they "
                      "cannot run on this GPU)";
    case P_GROUP: return be->empty_group ? NULL : "not measured (host backend)";
    case P_H2D:
    case P_D2H: return host ? "not measured (host backend)" : NULL;
    default: return NULL;
    }
}

/* One untimed run of a probe's operation. */
static int op(struct probe *p, int probe, struct rf_error *err)
{
    struct rf_backend *be = p->be;
    int64_t errors, first;
    int rc;
    switch (probe) {
    case P_COPY: {
        struct rf_copy c = {.ndim = 1, .count = {p->n}, .dst_stride = {1}, .src_stride = {1}};
        c.elem = 1;
        return be->copy(be, p->b, p->a, &c, err);
    }
    case P_PACK: {
        struct rf_copy c = {.ndim = 2,
                            .count = {p->n / PITCH, ROW},
                            .dst_stride = {ROW, 1},
                            .src_stride = {PITCH, 1}};
        c.elem = 1;
        return be->copy(be, p->b, p->a, &c, err);
    }
    case P_NARROW: return be->narrow(be, p->b, p->a, p->n / 2, err);
    case P_H2D: return be->h2d(be, p->b, p->pinned, (size_t)p->n, err);
    case P_D2H: return be->d2h(be, p->pinned, p->a, (size_t)p->n, err);
    case P_FILL: return rf_fill_buffer(be, p->a, &p->bf16, false, err);
    case P_CHECK:
        if ((rc = rf_check_buffer(be, p->a, &p->bf16, &errors, &first, err)) < 0)
            return rc;
        if (errors != 0)
            return rf_error_set(err, RF_EINVAL,
                                "the check found %lld wrong elements in a filled buffer (the "
                                "first at %lld)",
                                (long long)errors, (long long)first);
        return 0;
    default: {
        struct rf_xfer send = {p->be->ctl->rank, p->a, (size_t)p->n};
        struct rf_xfer recv = {p->be->ctl->rank, p->b, (size_t)p->n};
        return be->exchange(be, &send, 1, &recv, 1, err);
    }
    }
}

static int timed(struct probe *p, int probe, double *seconds, struct rf_error *err)
{
    struct rf_backend *be = p->be;
    int rc;
    if ((rc = be->mark(be, 0, err)) < 0 || (rc = op(p, probe, err)) < 0 ||
        (rc = be->mark(be, 1, err)) < 0 || (rc = be->wait_mark(be, 1, err)) < 0)
        return rc;
    return be->elapsed(be, 0, 1, seconds, err);
}

/* One sample of a per-call probe, on the host's clock from before the call to its
 * completion: a call's fixed cost is what the host waits for it, the launch included, which
 * the device's marks would not see. A wait is the backend's, polled with the deadline (a
 * microsecond or so of polling is in every figure, as it is in the replay's waits). */
static int timed_call(struct probe *p, int probe, double *seconds, struct rf_error *err)
{
    struct rf_backend *be = p->be;
    int rank = be->ctl->rank, size = be->ctl->size;
    struct rf_xfer send = {(rank + 1) % size, p->a, (size_t)MSG};
    struct rf_xfer recv = {(rank + size - 1) % size, p->b, (size_t)MSG};
    int64_t calls = probe == P_LAUNCH ? LAUNCHES : 1;
    double start = MPI_Wtime();
    int rc;
    switch (probe) {
    case P_LAUNCH:
    case P_LATENCY: rc = be->launch(be, calls, err); break;
    case P_GROUP: rc = be->empty_group(be, err); break;
    case P_SEND4K: rc = be->exchange(be, &send, 1, &recv, 1, err); break;
    default: rc = be->barrier(be, err); break;
    }
    /* An empty group queues nothing; a barrier returns complete. */
    if (rc == 0 && probe != P_GROUP && probe != P_BARRIER)
        rc = be->sync(be, err);
    *seconds = (MPI_Wtime() - start) / (double)calls;
    return rc;
}

/* The first bytes of a device buffer against the pattern of pb, on the host. */
static int sample_ok(struct probe *p, const uint8_t *dev, const struct rf_pattern_buf *pb,
                     const char *what, struct rf_error *err)
{
    int64_t numel = rf_box_numel(pb->box, pb->ndim) * (int64_t)pb->elem < SAMPLE
                        ? rf_box_numel(pb->box, pb->ndim)
                        : SAMPLE / (int64_t)pb->elem;
    int64_t first = -1, wrong;
    int rc;
    if ((rc = p->be->sync(p->be, err)) < 0 ||
        (rc = p->be->download(p->be, p->host, dev, (size_t)(numel * (int64_t)pb->elem), err)) < 0)
        return rc;
    wrong = rf_pattern_check(p->host, pb, 0, numel, &first);
    if (wrong)
        return rf_error_set(err, RF_EINVAL,
                            "%s differs from the pattern: %lld of the first %lld elements wrong, "
                            "the first at %lld",
                            what, (long long)wrong, (long long)numel, (long long)first);
    return 0;
}

/* The check against known answers: every element of a poisoned buffer is wrong (the first
 * at 0), and of a filled buffer with one byte flipped exactly that element is. A refill
 * leaves A as the later probes expect it. */
static int check_answers(struct probe *p, struct rf_error *err)
{
    struct rf_backend *be = p->be;
    int64_t numel = p->n / 2, at = numel / 7 * 5, errors, first;
    uint8_t v;
    int rc;
    if ((rc = rf_fill_buffer(be, p->a, &p->bf16, true, err)) < 0 ||
        (rc = rf_check_buffer(be, p->a, &p->bf16, &errors, &first, err)) < 0)
        return rc;
    if (errors != numel || first != 0)
        return rf_error_set(err, RF_EINVAL,
                            "the check of a poisoned buffer found %lld wrong of %lld elements, "
                            "the first at %lld (expected all, the first at 0)",
                            (long long)errors, (long long)numel, (long long)first);
    if ((rc = rf_fill_buffer(be, p->a, &p->bf16, false, err)) < 0 || (rc = be->sync(be, err)) < 0 ||
        (rc = be->download(be, &v, p->a + 2 * at + 1, 1, err)) < 0)
        return rc;
    v ^= 0x10;
    if ((rc = be->upload(be, p->a + 2 * at + 1, &v, 1, err)) < 0 ||
        (rc = rf_check_buffer(be, p->a, &p->bf16, &errors, &first, err)) < 0)
        return rc;
    if (errors != 1 || first != at)
        return rf_error_set(err, RF_EINVAL,
                            "the check of a buffer with element %lld corrupted found %lld wrong, "
                            "the first at %lld (expected 1, at %lld)",
                            (long long)at, (long long)errors, (long long)first, (long long)at);
    return rf_fill_buffer(be, p->a, &p->bf16, false, err);
}

/* Before a probe runs: the complement of the pattern where it writes, so that its check
 * proves it wrote there, and the pattern in the pinned buffer h2d copies from. */
static int prepare(struct probe *p, int probe, struct rf_error *err)
{
    struct rf_backend *be = p->be;
    int64_t numel = rf_box_numel(p->head.box, p->head.ndim);
    int rc = 0;
    switch (probe) {
    case P_SEND4K: rc = rf_fill_buffer(be, p->b, &p->msg, true, err); break;
    case P_H2D:
    case P_D2H:
        if (!p->pinned && (rc = be->host_alloc(be, (void **)&p->pinned, (size_t)p->n, err)) < 0)
            return rc;
        rf_pattern_fill(p->pinned, &p->head, 0, numel, probe == P_D2H);
        if (probe == P_H2D)
            rc = rf_fill_buffer(be, p->b, &p->head, true, err);
        break;
    default: return 0;
    }
    return rc < 0 ? rc : be->sync(be, err);
}

/* The pinned buffer's first bytes (d2h's destination) against the pattern. */
static int pinned_ok(struct probe *p, struct rf_error *err)
{
    int64_t numel = rf_box_numel(p->head.box, p->head.ndim), first = -1, wrong;
    int rc;
    if ((rc = p->be->sync(p->be, err)) < 0)
        return rc;
    if ((wrong = rf_pattern_check(p->pinned, &p->head, 0, numel, &first)) != 0)
        return rf_error_set(err, RF_EINVAL,
                            "what it copied into pinned host memory differs from the pattern: "
                            "%lld of the first %lld elements wrong, the first at %lld",
                            (long long)wrong, (long long)numel, (long long)first);
    return 0;
}

/* What a probe's destination must hold after it ran. */
static int validate(struct probe *p, int probe, struct rf_error *err)
{
    switch (probe) {
    case P_SEND4K: return sample_ok(p, p->b, &p->msg, "the 4 KiB message it received", err);
    case P_H2D: return sample_ok(p, p->b, &p->head, "what it copied from pinned host memory", err);
    case P_D2H: return pinned_ok(p, err);
    case P_FILL: return sample_ok(p, p->a, &p->bf16, "the filled buffer", err);
    case P_CHECK: return check_answers(p, err);
    case P_COPY: return sample_ok(p, p->b, &p->bf16, "the copy", err);
    case P_NARROW: return sample_ok(p, p->b, &p->fp8, "the FP8 conversion", err);
    case P_SELFSEND: return sample_ok(p, p->b, &p->bf16, "what it received from itself", err);
    default: return 0; /* the pack: the replay's own checks cover its strided copies */
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Runs one probe on this rank. A failure of the operation is its result, not the job's,
 * unless a deadline passed or another rank ended the job. */
static int run_probe(struct probe *p, int probe, struct result *res, struct rf_error *err)
{
    const struct rf_probe_opts *o = p->o;
    struct rf_error e = {0};
    int64_t k = 0;
    int rc = 0;
    memset(res, 0, sizeof(*res));
    res->rank = p->be->ctl->rank;
    res->probe = probe;
    res->bytes = probe_bytes(p, probe);
    res->seconds = res->gbps = -1;
    const char *why = unmeasured(p, probe);
    if (why) {
        snprintf(res->impl, sizeof(res->impl), "-");
        snprintf(res->status, sizeof(res->status), "%s", why);
        return 0;
    }
    impl_of(p, probe, res->impl, sizeof(res->impl));
    snprintf(p->be->ctl->where, sizeof(p->be->ctl->where), "the %s probe", probe_name[probe]);
    /* A per-call probe times each of CALLS calls an iteration on its own (the launch probe
     * one batch of LAUNCHES), so its median is over many. */
    int64_t calls = per_call(probe) && probe != P_LAUNCH ? CALLS : 1;
    rc = prepare(p, probe, &e);
    for (int64_t it = 0; it < (o->warmup + o->iters) * calls && rc == 0; it++) {
        double s = 0;
        rc = per_call(probe) ? timed_call(p, probe, &s, &e) : timed(p, probe, &s, &e);
        if (rc == 0 && it >= o->warmup * calls)
            p->samples[k++] = s;
    }
    if (rc == 0)
        rc = validate(p, probe, &e);
    p->be->ctl->where[0] = '\0';
    if (rc == RF_ETIMEDOUT || rc == RF_ESTOPPED) {
        *err = e;
        return rc;
    }
    if (rc < 0) {
        snprintf(res->status, sizeof(res->status), "failed: %.200s", e.msg);
        return 0;
    }
    qsort(p->samples, (size_t)k, sizeof(double), cmp_double);
    res->seconds = k % 2 ? p->samples[k / 2] : 0.5 * (p->samples[k / 2 - 1] + p->samples[k / 2]);
    res->gbps = res->seconds > 0 && !per_call(probe) ? (double)res->bytes / res->seconds / 1e9 : -1;
    snprintf(res->status, sizeof(res->status), "ok");
    return 0;
}

/* Every rank's device, pool and free memory, on every rank. */
static int share_info(struct rf_backend *be, struct rank_info *mine, struct rank_info *all,
                      struct rf_error *err)
{
    MPI_Request r;
    if (MPI_Iallgather(mine, (int)sizeof(*mine), MPI_BYTE, all, (int)sizeof(*mine), MPI_BYTE,
                       be->ctl->comm, &r) != MPI_SUCCESS)
        return rf_error_set(err, RF_ECOMM, "MPI_Iallgather failed");
    return rf_ctl_waitall(be->ctl, 1, &r, "every rank's device", err);
}

/* The bytes of each buffer: what was asked, at most a quarter of the pool's free memory
 * shared among the ranks that draw on it (two buffers: half of it in all), in whole pitches
 * of the pack. */
static int64_t buffer_bytes(const struct rf_probe_opts *o, const struct rank_info *all, int size,
                            int rank)
{
    int64_t n = o->bytes;
    int sharing = 0;
    for (int i = 0; i < size; i++)
        sharing += strcmp(all[i].pool, all[rank].pool) == 0;
    if (all[rank].available > 0 && n > all[rank].available / 4 / sharing)
        n = all[rank].available / 4 / sharing;
    return n / PITCH * PITCH;
}

/* Rank 0: the distinct device names, joined with commas. */
static void join_devices(const struct rank_info *all, int size, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = '\0';
    for (int i = 0; i < size; i++) {
        bool seen = !all[i].device[0];
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(all[i].device, all[j].device) == 0;
        if (!seen && len + strlen(all[i].device) + 2 < cap)
            len += (size_t)snprintf(out + len, cap - len, len ? ",%s" : "%s", all[i].device);
    }
}

int rf_probe_run(struct rf_backend *be, const struct rf_probe_opts *o, struct rf_error *err)
{
    struct rf_ctl *ctl = be->ctl;
    struct probe p = {.be = be, .o = o};
    struct rank_info mine = {0}, *all = calloc((size_t)ctl->size, sizeof(*all));
    struct result res[N_PROBES], *gathered = NULL;
    char devices[1024];
    MPI_Request req;
    int rc, failed = 0, any = 0;
    if (!all)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    snprintf(mine.device, sizeof(mine.device), "%s", be->device ? be->device : "");
    if ((rc = be->memory(be, &mine.available, mine.pool, sizeof(mine.pool), err)) < 0 ||
        (rc = share_info(be, &mine, all, err)) < 0)
        goto out;
    /* Every rank sizes every rank's buffers, so all refuse alike. */
    for (int r = 0; r < ctl->size; r++)
        if (buffer_bytes(o, all, ctl->size, r) < PITCH) {
            rc = rf_error_set(err, RF_EINVAL,
                              "the probes need buffers of 16 KiB or more: rank %d gets %lld "
                              "bytes (--probe-bytes %lld; %s has %lld bytes free)",
                              r, (long long)buffer_bytes(o, all, ctl->size, r), (long long)o->bytes,
                              all[r].pool, (long long)all[r].available);
            goto out;
        }
    p.n = buffer_bytes(o, all, ctl->size, ctl->rank);
    p.shape[0] = p.n / 2;
    p.box.off[0] = 0;
    p.box.len[0] = p.n / 2;
    for (int d = 1; d < RF_MAX_DIMS; d++) {
        p.shape[d] = p.box.len[d] = 1;
        p.box.off[d] = 0;
    }
    p.bf16 = (struct rf_pattern_buf){0, 1, p.shape, &p.box, 2, false};
    p.fp8 = (struct rf_pattern_buf){0, 1, p.shape, &p.box, 1, false};
    p.head_box = p.msg_box = p.box;
    p.head_box.len[0] = (p.n < SAMPLE ? p.n : SAMPLE) / 2;
    p.msg_box.len[0] = MSG / 2;
    p.head = (struct rf_pattern_buf){0, 1, p.shape, &p.head_box, 2, false};
    p.msg = (struct rf_pattern_buf){0, 1, p.shape, &p.msg_box, 2, false};
    p.samples = calloc((size_t)o->iters * CALLS + 1, sizeof(double));
    p.host = malloc((size_t)SAMPLE);
    if (!p.samples || !p.host) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = be->alloc(be, (void **)&p.a, (size_t)p.n, err)) < 0 ||
        (rc = be->alloc(be, (void **)&p.b, (size_t)p.n, err)) < 0 ||
        (rc = be->timers(be, 2, err)) < 0)
        goto out;
    for (int i = 0; i < N_PROBES; i++) {
        int probe = run_order[i];
        if ((rc = rf_ctl_barrier(ctl, ctl->comm, err)) < 0 ||
            (rc = run_probe(&p, probe, &res[probe], err)) < 0)
            goto out;
    }
    if (ctl->rank == 0 && !(gathered = calloc((size_t)ctl->size * N_PROBES, sizeof(*gathered)))) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    if (MPI_Igather(res, (int)sizeof(res), MPI_BYTE, gathered, (int)sizeof(res), MPI_BYTE, 0,
                    ctl->comm, &req) != MPI_SUCCESS) {
        rc = rf_error_set(err, RF_ECOMM, "MPI_Igather failed");
        goto out;
    }
    if ((rc = rf_ctl_waitall(ctl, 1, &req, "every rank's probes", err)) < 0)
        goto out;
    if (ctl->rank == 0) {
        int n = ctl->size * N_PROBES;
        for (int i = 0; i < n; i++) {
            failed |= strncmp(gathered[i].status, "failed", 6) == 0;
            any |= strcmp(gathered[i].status, "ok") == 0;
        }
        join_devices(all, ctl->size, devices, sizeof(devices));
        if (o->json)
            probe_print_json(be, gathered, n, devices);
        else
            probe_print_table(be, gathered, n, devices);
        for (int i = 0; i < n; i++)
            if (strncmp(gathered[i].status, "failed", 6) == 0)
                fprintf(stderr, "refit-exec: rank %d: the %s probe %s\n", gathered[i].rank,
                        probe_name[gathered[i].probe], gathered[i].status);
    }
    rc = failed || (ctl->rank == 0 && !any) ? 1 : 0;
out:
    if (p.a)
        be->free(be, p.a);
    if (p.b)
        be->free(be, p.b);
    if (p.pinned)
        be->host_free(be, p.pinned);
    free(p.samples);
    free(p.host);
    free(gathered);
    free(all);
    return rc;
}
