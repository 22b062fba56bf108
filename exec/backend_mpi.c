/* The host backend: "device" memory is host memory, copies are memcpy, a step is
 * MPI_Irecv/MPI_Isend of every message then one wait, broadcasts are MPI_Ibcast on
 * sub-communicators made once. Everything completes before a call returns, so sync has
 * nothing left to wait for. It runs the replay where no GPU is (make check). */
#include "backend.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "pattern.h"

/* MPI counts are int: messages travel in chunks of at most this many bytes (in order, and
 * MPI keeps the order of messages between two ranks with one tag). */
#define CHUNK ((size_t)1 << 30)

struct mpi_impl {
    MPI_Comm data; /* data messages: apart from the control plane's notices */
    MPI_Comm *group_comm;
    int *group_root; /* the root's rank inside its group's communicator */
    size_t n_groups;
    double *marks;
    int n_marks;
    MPI_Request *reqs;
    size_t cap_reqs;
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
};

static int mpi_error(struct rf_error *err, int code, const char *what, int peer)
{
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(code, text, &len);
    return rf_error_set(err, RF_ECOMM, "%s with rank %d failed: %s", what, peer, text);
}

static struct mpi_impl *impl(struct rf_backend *b)
{
    return b->impl;
}

static int m_alloc(struct rf_backend *b, void **ptr, size_t bytes, struct rf_error *err)
{
    *ptr = calloc(1, bytes ? bytes : 1);
    if (!*ptr)
        return rf_error_set(err, RF_ENOMEM, "out of host memory (%zu bytes)", bytes);
    return 0;
}

static void m_free(struct rf_backend *b, void *ptr)
{
    free(ptr);
}

static int m_upload(struct rf_backend *b, void *dev, const void *host, size_t bytes,
                    struct rf_error *err)
{
    memcpy(dev, host, bytes);
    return 0;
}

static int m_copy(struct rf_backend *b, void *dst, const void *src, const struct rf_copy *c,
                  struct rf_error *err)
{
    rf_copy_host(dst, src, c);
    return 0;
}

static int m_narrow(struct rf_backend *b, uint8_t *dst, const uint8_t *src, int64_t n,
                    struct rf_error *err)
{
    rf_fp8_narrow(dst, src, n);
    return 0;
}

static int m_narrow4(struct rf_backend *b, uint8_t *dst, const uint8_t *src, int64_t n,
                     struct rf_error *err)
{
    (void)b;
    (void)err;
    rf_fp4_narrow(dst, src, n);
    return 0;
}

/* The host's MemAvailable (what the kernel can give without swapping), from /proc/meminfo. */
static int m_memory(struct rf_backend *b, int64_t *bytes, char *pool, size_t pool_size,
                    struct rf_error *err)
{
    char host[MPI_MAX_PROCESSOR_NAME] = "", line[256];
    int len = 0;
    long long kb;
    FILE *f = fopen("/proc/meminfo", "r");
    MPI_Get_processor_name(host, &len);
    snprintf(pool, pool_size, "host %s", host);
    *bytes = -1;
    while (f && fgets(line, sizeof(line), f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1) {
            *bytes = (int64_t)kb * 1024;
            break;
        }
    if (f)
        fclose(f);
    return 0;
}

static size_t chunks(size_t bytes)
{
    return bytes == 0 ? 1 : (bytes + CHUNK - 1) / CHUNK;
}

static int m_exchange(struct rf_backend *b, const struct rf_xfer *sends, size_t n_sends,
                      const struct rf_xfer *recvs, size_t n_recvs, struct rf_error *err)
{
    struct mpi_impl *m = impl(b);
    size_t n = 0, need = 0;
    int rc;
    for (size_t i = 0; i < n_sends; i++)
        need += chunks(sends[i].bytes);
    for (size_t i = 0; i < n_recvs; i++)
        need += chunks(recvs[i].bytes);
    if ((rc = RF_GROW(m->reqs, m->cap_reqs, need, err)) < 0)
        return rc;
    /* Receives first, so most sends find their receive posted. */
    for (int dir = 0; dir < 2; dir++) {
        const struct rf_xfer *x = dir == 0 ? recvs : sends;
        size_t nx = dir == 0 ? n_recvs : n_sends;
        for (size_t i = 0; i < nx; i++) {
            size_t at = 0;
            do {
                size_t len = x[i].bytes - at < CHUNK ? x[i].bytes - at : CHUNK;
                char *p = (char *)x[i].buf + at;
                int ok =
                    dir == 0
                        ? MPI_Irecv(p, (int)len, MPI_BYTE, x[i].peer, 0, m->data, &m->reqs[n++])
                        : MPI_Isend(p, (int)len, MPI_BYTE, x[i].peer, 0, m->data, &m->reqs[n++]);
                if (ok != MPI_SUCCESS)
                    return mpi_error(err, ok, dir == 0 ? "MPI_Irecv" : "MPI_Isend", x[i].peer);
                at += len;
            } while (at < x[i].bytes);
        }
    }
    return rf_ctl_waitall(b->ctl, (int)n, m->reqs, "its messages", err);
}

static int m_groups(struct rf_backend *b, const struct rf_group *groups, size_t n,
                    struct rf_error *err)
{
    struct mpi_impl *m = impl(b);
    int rank, rc;
    MPI_Comm_rank(m->data, &rank);
    m->group_comm = calloc(n + 1, sizeof(MPI_Comm));
    m->group_root = calloc(n + 1, sizeof(int));
    if (!m->group_comm || !m->group_root)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    /* MPI_Comm_split blocks; the barrier before it makes sure every rank got this far. */
    if ((rc = rf_ctl_barrier(b->ctl, m->data, err)) < 0)
        return rc;
    for (size_t g = 0; g < n; g++) {
        const struct rf_group *gr = &groups[g];
        bool member = rank == gr->root;
        int below = 0; /* members with a smaller world rank than the root */
        for (int32_t i = 0; i < gr->count; i++) {
            int32_t r = gr->first + i * gr->stride;
            member |= r == rank;
            below += r < gr->root;
        }
        m->group_comm[g] = MPI_COMM_NULL;
        if (MPI_Comm_split(m->data, member ? 0 : MPI_UNDEFINED, rank, &m->group_comm[g]) !=
            MPI_SUCCESS)
            return rf_error_set(err, RF_ECOMM, "MPI_Comm_split for broadcast group %zu failed", g);
        m->group_root[g] = below;
        m->n_groups = g + 1;
    }
    return 0;
}

static int m_bcast(struct rf_backend *b, int group, void *buf, size_t bytes, struct rf_error *err)
{
    struct mpi_impl *m = impl(b);
    size_t at = 0;
    do {
        size_t len = bytes - at < CHUNK ? bytes - at : CHUNK;
        MPI_Request r;
        if (MPI_Ibcast((char *)buf + at, (int)len, MPI_BYTE, m->group_root[group],
                       m->group_comm[group], &r) != MPI_SUCCESS)
            return rf_error_set(err, RF_ECOMM, "MPI_Ibcast failed");
        int rc = rf_ctl_waitall(b->ctl, 1, &r, "a broadcast", err);
        if (rc < 0)
            return rc;
        at += len;
    } while (at < bytes);
    return 0;
}

/* On the data communicator, as the replay's messages are (the control plane's is for its
 * notices). */
static int m_barrier(struct rf_backend *b, struct rf_error *err)
{
    return rf_ctl_barrier(b->ctl, impl(b)->data, err);
}

static int m_sync(struct rf_backend *b, struct rf_error *err)
{
    return rf_ctl_poll(b->ctl, err);
}

static int m_timers(struct rf_backend *b, int n, struct rf_error *err)
{
    struct mpi_impl *m = impl(b);
    free(m->marks);
    m->marks = calloc((size_t)n + 1, sizeof(double));
    if (!m->marks)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    m->n_marks = n;
    return 0;
}

static int m_mark(struct rf_backend *b, int i, struct rf_error *err)
{
    impl(b)->marks[i] = MPI_Wtime();
    return 0;
}

/* Every call has finished its work when it returns. */
static int m_wait_mark(struct rf_backend *b, int i, struct rf_error *err)
{
    return 0;
}

static int m_elapsed(struct rf_backend *b, int from, int to, double *seconds, struct rf_error *err)
{
    const struct mpi_impl *m = impl(b);
    if (from < 0 || to < from || to >= m->n_marks)
        return rf_error_set(err, RF_EINVAL, "marks %d to %d: there are %d", from, to, m->n_marks);
    *seconds = m->marks[to] - m->marks[from];
    return 0;
}

static void m_abort(struct rf_backend *b) {}

static void m_release(struct rf_backend *b)
{
    struct mpi_impl *m = impl(b);
    if (!m)
        return;
    for (size_t g = 0; g < m->n_groups; g++)
        if (m->group_comm[g] != MPI_COMM_NULL)
            MPI_Comm_free(&m->group_comm[g]);
    if (m->data != MPI_COMM_NULL)
        MPI_Comm_free(&m->data);
    free(m->group_comm);
    free(m->group_root);
    free(m->marks);
    free(m->reqs);
    free(m);
    free(b);
}

int rf_backend_mpi_new(struct rf_backend **out, struct rf_ctl *ctl, struct rf_error *err)
{
    struct rf_backend *b = calloc(1, sizeof(*b));
    struct mpi_impl *m = calloc(1, sizeof(*m));
    if (!b || !m) {
        free(b);
        free(m);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    /* Fills and checks go through host memory, the same as any device's would without a
     * fill of its own (rf_fill_buffer), so the MPI backend tests that path. */
    *b = (struct rf_backend){.name = "mpi",
                             .impl = m,
                             .ctl = ctl,
                             .config = "mpi fill=host",
                             .alloc = m_alloc,
                             .free = m_free,
                             .upload = m_upload,
                             .download = m_upload,
                             .copy = m_copy,
                             .narrow = m_narrow,
                             .narrow4 = m_narrow4,
                             .exchange = m_exchange,
                             .groups = m_groups,
                             .bcast = m_bcast,
                             .sync = m_sync,
                             .barrier = m_barrier,
                             .timers = m_timers,
                             .mark = m_mark,
                             .wait_mark = m_wait_mark,
                             .elapsed = m_elapsed,
                             .abort = m_abort,
                             .memory = m_memory,
                             .release = m_release};
    m->data = MPI_COMM_NULL;
    if (MPI_Comm_dup(MPI_COMM_WORLD, &m->data) != MPI_SUCCESS) {
        m_release(b);
        return rf_error_set(err, RF_ECOMM, "MPI_Comm_dup failed");
    }
    *out = b;
    return 0;
}
