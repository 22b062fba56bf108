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
 * in that order, every rank together (a barrier between probes). Each result is checked
 * after its timing against the host's definition of the pattern (a sample downloaded), and
 * the check against known answers (a poisoned buffer, one corrupted element), so a probe
 * that is fast but wrong says "failed". */
#include "probe.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "replay.h"

enum { P_COPY, P_PACK, P_NARROW, P_FILL, P_CHECK, P_SELFSEND, N_PROBES };
static const char *const probe_name[N_PROBES] = {"copy", "pack",  "narrow",
                                                 "fill", "check", "selfsend"};
/* The order they run in: fill first, so every later probe moves the pattern and its result
 * can be checked. */
static const int run_order[N_PROBES] = {P_FILL, P_CHECK, P_COPY, P_PACK, P_NARROW, P_SELFSEND};

#define ROW ((int64_t)4096)
#define PITCH ((int64_t)16384)
#define SAMPLE ((int64_t)4 << 20) /* bytes of a result downloaded to be checked */

/* One probe's result, gathered on rank 0 as plain bytes (every rank runs the same binary). */
struct result {
    int32_t rank, probe;
    int64_t bytes;
    double seconds, gbps; /* median; -1 when not measured */
    char impl[32];
    char status[224]; /* "ok", "unsupported: why" or "failed: why" */
};

struct rank_info {
    char device[128];
    char pool[192];
    int64_t available;
};

struct probe {
    struct rf_backend *be;
    const struct rf_probe_opts *o;
    uint8_t *a, *b, *host;
    int64_t n; /* bytes of each buffer */
    int64_t shape[RF_MAX_DIMS];
    struct rf_box box;
    struct rf_pattern_buf bf16, fp8; /* A (and B after a copy) as BF16; B after narrow */
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
    default: snprintf(out, size, "%s", mpi ? "MPI_Isend/MPI_Irecv" : "ncclSend/ncclRecv"); break;
    }
}

static int64_t probe_bytes(const struct probe *p, int probe)
{
    return probe == P_PACK ? p->n / PITCH * ROW : p->n;
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

/* What a probe's destination must hold after it ran. */
static int validate(struct probe *p, int probe, struct rf_error *err)
{
    switch (probe) {
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
    impl_of(p, probe, res->impl, sizeof(res->impl));
    snprintf(p->be->ctl->where, sizeof(p->be->ctl->where), "the %s probe", probe_name[probe]);
    for (int64_t it = 0; it < o->warmup + o->iters && rc == 0; it++) {
        double s = 0;
        rc = timed(p, probe, &s, &e);
        if (rc == 0 && it >= o->warmup)
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
    res->gbps = res->seconds > 0 ? (double)res->bytes / res->seconds / 1e9 : -1;
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

static void print_json(const struct rf_backend *be, const struct result *res, int n,
                       const char *devices)
{
    json_t *probes = json_array();
    for (int i = 0; probes && i < n; i++) {
        const struct result *r = &res[i];
        json_array_append_new(
            probes, json_pack("{si ss sI so so ss ss}", "rank", r->rank, "name",
                              probe_name[r->probe], "bytes", (json_int_t)r->bytes, "seconds",
                              r->seconds >= 0 ? json_real(r->seconds) : json_null(), "gbps",
                              r->gbps >= 0 ? json_real(r->gbps) : json_null(), "impl", r->impl,
                              "status", r->status));
    }
    json_t *j = json_pack("{so ss ss? ss? ss? ss? ss? si}", "probe", probes, "backend", be->name,
                          "device", devices[0] ? devices : NULL, "nccl_version", be->library,
                          "cuda_runtime", be->cuda_runtime, "driver", be->driver, "exec_config",
                          be->config, "ranks", be->ctl->size);
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    if (s)
        puts(s);
    free(s);
    json_decref(j);
}

static void print_table(const struct rf_backend *be, const struct result *res, int n,
                        const char *devices)
{
    printf("refit-exec --probe: backend %s on %d rank%s, %s", be->name, be->ctl->size,
           be->ctl->size == 1 ? "" : "s", devices[0] ? devices : "host memory");
    if (be->library)
        printf(", NCCL %s", be->library);
    if (be->cuda_runtime)
        printf(", CUDA runtime %s", be->cuda_runtime);
    if (be->driver)
        printf(", driver %s", be->driver);
    printf("\n  exec_config: %s\n", be->config ? be->config : "");
    printf("  %4s  %-8s  %-20s  %12s  %10s  %9s  %s\n", "rank", "probe", "impl", "bytes", "ms",
           "GB/s", "status");
    for (int i = 0; i < n; i++) {
        const struct result *r = &res[i];
        char ms[32] = "-", gbps[32] = "-";
        if (r->seconds >= 0)
            snprintf(ms, sizeof(ms), "%.3f", r->seconds * 1e3);
        if (r->gbps >= 0)
            snprintf(gbps, sizeof(gbps), "%.1f", r->gbps);
        printf("  %4d  %-8s  %-20s  %12lld  %10s  %9s  %s\n", r->rank, probe_name[r->probe],
               r->impl, (long long)r->bytes, ms, gbps, r->status);
    }
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
    p.bf16 = (struct rf_pattern_buf){0, 1, p.shape, &p.box, 2};
    p.fp8 = (struct rf_pattern_buf){0, 1, p.shape, &p.box, 1};
    p.samples = calloc((size_t)o->iters + 1, sizeof(double));
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
            print_json(be, gathered, n, devices);
        else
            print_table(be, gathered, n, devices);
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
    free(p.samples);
    free(p.host);
    free(gathered);
    free(all);
    return rc;
}
