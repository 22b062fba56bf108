/* Benchmark of the flow-level simulator on synthetic refit-like traffic: a chain of rounds,
 * each sending a few shards to every destination GPU, for growing cluster sizes. Prints a
 * table; it is not a test. Usage: flowsim-bench [dst_gpus ...] (default 256 1024 4096). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "flowsim.h"

#define GPUS_PER_NODE 8
#define GPUS_PER_LEAF 128 /* 16 nodes under one leaf switch */
#define ROUNDS 200

/* Link capacities in bytes/s per direction: NVLink 4 (900 GB/s bidirectional), a 400 Gb/s
 * NIC, and leaf up/downlinks oversubscribed 2:1 so that they sometimes bind. */
#define NVLINK_BW 450e9
#define NIC_BW 50e9
#define LEAF_BW (GPUS_PER_LEAF * NIC_BW / 2)
/* One flow alone: NCCL channels x per-channel bandwidth. */
#define NET_CAP (2 * 14e9)
#define NVL_CAP (8 * 20e9)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* CPU seconds of this process: unlike wall time, not inflated by other loads. */
static double cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static uint64_t hash3(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t z = a * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full ^ c * 0x165667b19e3779f9ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

struct topo {
    int64_t gpus, leaves;
    size_t n_links;
    double *cap;
};

/* Per GPU g: NVLink out 4g, in 4g+1, NIC out 4g+2, in 4g+3; then leaf l: up, down. */
static int route(const struct topo *t, int64_t s, int64_t d, int32_t *path, double *lat)
{
    if (s / GPUS_PER_NODE == d / GPUS_PER_NODE) {
        path[0] = (int32_t)(4 * s);
        path[1] = (int32_t)(4 * d + 1);
        *lat = 3e-6;
        return 2;
    }
    path[0] = (int32_t)(4 * s + 2);
    path[1] = (int32_t)(4 * d + 3);
    *lat = 8e-6;
    if (s / GPUS_PER_LEAF == d / GPUS_PER_LEAF)
        return 2;
    path[2] = (int32_t)(4 * t->gpus + 2 * (s / GPUS_PER_LEAF));
    path[3] = (int32_t)(4 * t->gpus + 2 * (d / GPUS_PER_LEAF) + 1);
    *lat = 10e-6;
    return 4;
}

static int run_one(int64_t dst_gpus)
{
    /* Every third GPU is a training (source) GPU, the others serve inference, so nodes mix
     * both and some shards travel over NVLink. */
    int64_t src_gpus = dst_gpus / 2;
    struct topo t = {.gpus = dst_gpus + src_gpus};
    t.leaves = (t.gpus + GPUS_PER_LEAF - 1) / GPUS_PER_LEAF;
    t.n_links = (size_t)(4 * t.gpus + 2 * t.leaves);
    t.cap = malloc(t.n_links * sizeof(double));
    int64_t *src = malloc((size_t)src_gpus * sizeof(int64_t));
    int64_t *dst = malloc((size_t)dst_gpus * sizeof(int64_t));
    struct rf_flowsim *fs = NULL;
    struct rf_error err;
    int rc = 1;

    if (!t.cap || !src || !dst)
        goto out;
    for (int64_t g = 0; g < t.gpus; g++) {
        t.cap[4 * g] = t.cap[4 * g + 1] = NVLINK_BW;
        t.cap[4 * g + 2] = t.cap[4 * g + 3] = NIC_BW;
    }
    for (int64_t l = 0; l < t.leaves; l++)
        t.cap[4 * t.gpus + 2 * l] = t.cap[4 * t.gpus + 2 * l + 1] = LEAF_BW;
    int64_t ns = 0, nd = 0;
    for (int64_t g = 0; g < t.gpus; g++) {
        if (g % 3 == 0)
            src[ns++] = g;
        else
            dst[nd++] = g;
    }

    double t0 = now();
    if (rf_flowsim_new(&fs, t.n_links, t.cap, &err) < 0)
        goto fail;
    /* A round per layer: each destination GPU receives its attention shards (two sizes)
     * from one source and its three equal MLP shards plus a norm vector from another, as a
     * resharding plan would. Sources are drawn by hash, so loads are uneven and finish
     * times spread out; the three MLP shards are identical flows. */
    static const double attn[2] = {6 << 20, 4 << 20};
    for (int32_t r = 0; r < ROUNDS; r++) {
        for (int64_t j = 0; j < nd; j++) {
            int32_t path[4];
            double lat;
            int64_t s1 = src[hash3((uint64_t)j, (uint64_t)r, 1) % (uint64_t)ns];
            int64_t s2 = src[hash3((uint64_t)j, (uint64_t)r, 2) % (uint64_t)ns];
            int len = route(&t, s1, dst[j], path, &lat);
            struct rf_flow_spec f = {.latency_s = lat,
                                     .rate_cap = len == 2 && path[0] % 4 == 0 ? NVL_CAP : NET_CAP,
                                     .path = path,
                                     .path_len = len,
                                     .group = r};
            for (int k = 0; k < 2; k++) {
                f.bytes = attn[k];
                if (rf_flowsim_add(fs, &f, &err) < 0)
                    goto fail;
            }
            len = route(&t, s2, dst[j], path, &lat);
            f.latency_s = lat;
            f.path_len = len;
            f.rate_cap = len == 2 && path[0] % 4 == 0 ? NVL_CAP : NET_CAP;
            f.bytes = 16 << 20;
            for (int k = 0; k < 3; k++)
                if (rf_flowsim_add(fs, &f, &err) < 0)
                    goto fail;
            f.bytes = 16 << 10;
            if (rf_flowsim_add(fs, &f, &err) < 0)
                goto fail;
        }
        if (r > 0 && rf_flowsim_after(fs, r, r - 1, &err) < 0)
            goto fail;
    }
    double t1 = now(), c1 = cpu();
    if (rf_flowsim_run(fs, &err) < 0)
        goto fail;
    double t2 = now(), c2 = cpu();

    struct rf_flowsim_stats st;
    struct rusage ru;
    rf_flowsim_stats(fs, &st);
    getrusage(RUSAGE_SELF, &ru);
    printf("%8lld %8lld %7zu %6lld %9lld %9lld %8lld %8lld %11lld %7.2f %7.2f %7.2f %9.4f %8.0f\n",
           (long long)dst_gpus, (long long)src_gpus, t.n_links, (long long)st.groups,
           (long long)st.flows, (long long)st.classes, (long long)st.events, (long long)st.solves,
           (long long)st.solved_classes, t1 - t0, t2 - t1, c2 - c1, rf_flowsim_makespan(fs),
           (double)ru.ru_maxrss / 1024);
    fflush(stdout);
    rc = 0;
    goto out;
fail:
    fprintf(stderr, "flowsim-bench: %s\n", err.msg);
out:
    rf_flowsim_free(fs);
    free(t.cap);
    free(src);
    free(dst);
    return rc;
}

int main(int argc, char **argv)
{
    static const int64_t sizes[] = {256, 1024, 4096};
    printf("# %d rounds in a chain; add_s: wall seconds adding the flows, run_s: wall seconds"
           " simulating, cpu_s: CPU seconds simulating; sim_s: simulated makespan; peak RSS of"
           " the process so far\n",
           ROUNDS);
    printf("%8s %8s %7s %6s %9s %9s %8s %8s %11s %7s %7s %7s %9s %8s\n", "dst_gpus", "src_gpus",
           "links", "groups", "flows", "classes", "events", "solves", "re-rated", "add_s", "run_s",
           "cpu_s", "sim_s", "rss_MiB");
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            if (run_one(strtoll(argv[i], NULL, 10)) != 0)
                return 1;
        return 0;
    }
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        if (run_one(sizes[i]) != 0)
            return 1;
    return 0;
}
