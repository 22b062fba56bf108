/* refit-exec: replays a stored plan on real hardware (NCCL) or host memory (MPI), one
 * process per GPU, verifies every byte and stores what it measured next to the run. */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend.h"
#include "control.h"
#include "nccl_env.h"
#include "options.h"
#include "part.h"
#include "probe.h"
#include "replay.h"
#include "store.h"

#ifndef RF_HAVE_NCCL
int rf_backend_nccl_new(struct rf_backend **out, struct rf_ctl *ctl, int32_t net_channels_per_peer,
                        struct rf_error *err)
{
    return rf_error_set(err, RF_EINVAL,
                        "this refit-exec was built without NCCL (configure found no CUDA and "
                        "NCCL); use --backend mpi");
}
#endif

/* Everything one rank holds; rank 0 also the store and the measurement row. */
struct exec {
    struct rf_exec_opts o;
    struct rf_ctl ctl;
    struct rf_part part;
    struct rf_backend *be;
    struct rf_replay *replay;
    struct rf_nccl_env env; /* what the run implies of NCCL's environment */
    /* rank 0 */
    struct rf_store st;
    bool have_store;
    int64_t measurement;
    struct rf_measurement m;
    int64_t wrong_ranks;
    bool refused;   /* the replay was refused before it allocated anything (memory) */
    char why[1024]; /* the measurement's error_text, when rank 0 writes one */
    char *model;
    char hosts[4096], gpus[4096], nccl[64], mpi[256], config[192];
};

/* Records the failure (rank 0), tells the others, ends the job. */
static _Noreturn void fail(struct exec *x, int rc, const struct rf_error *err)
{
    char why[1200];
    bool stopped = rc == RF_ESTOPPED;
    fprintf(stderr, "refit-exec: rank %d: %s\n", x->ctl.rank, err->msg);
    if (x->be)
        x->be->abort(x->be);
    if (x->ctl.rank == 0) {
        struct rf_error e2;
        snprintf(why, sizeof(why), "%s%s", stopped ? "" : "rank 0: ", err->msg);
        if (x->measurement > 0) {
            x->m.status = "failed";
            x->m.error_text = why;
            x->m.round_seconds = NULL;
            if (rf_store_measurement_finish(&x->st, x->measurement, &x->m, &e2) < 0)
                fprintf(stderr, "refit-exec: rank 0: %s: %s\n", x->o.db, e2.msg);
            else
                fprintf(stderr,
                        "refit-exec: rank 0: measurement %lld of run %lld stored as failed\n",
                        (long long)x->measurement, (long long)x->o.run);
        }
        rf_ctl_leave(&x->ctl, why, false);
    }
    rf_ctl_leave(&x->ctl, err->msg, !stopped);
}

/* Broadcasts an int from rank 0, honouring the deadline. */
static int bcast_int(struct exec *x, int64_t *v, struct rf_error *err)
{
    MPI_Request r;
    if (MPI_Ibcast(v, 1, MPI_INT64_T, 0, x->ctl.comm, &r) != MPI_SUCCESS)
        return rf_error_set(err, RF_ECOMM, "MPI_Ibcast failed");
    return rf_ctl_waitall(&x->ctl, 1, &r, "rank 0", err);
}

/* Rank 0: loads the run and checks that this world can replay it. */
static int load(struct exec *x, struct rf_error *err)
{
    struct rf_stored_run run;
    int rc;
    if ((rc = rf_store_open(&x->st, x->o.db, RF_STORE_EXISTING, err)) < 0)
        return rc;
    x->have_store = true;
    if ((rc = rf_store_load_run(&x->st, x->o.run, &run, err)) < 0)
        return rc;
    int32_t gpus = rf_part_gpus(&run);
    if (gpus > x->ctl.size) {
        rc = rf_error_set(err, RF_EINVAL,
                          "run %lld needs %d GPUs, this world has %d: plan a scaled-down "
                          "scenario; the simulator predicts the large one",
                          (long long)x->o.run, gpus, x->ctl.size);
    } else if ((rc = rf_nccl_env_plan(&x->env, run.scenario_json, err)) < 0) {
        char msg[sizeof(err->msg)];
        snprintf(msg, sizeof(msg), "%s", err->msg);
        rf_error_set(err, rc, "run %lld: %s", (long long)x->o.run, msg);
    } else if ((rc = rf_part_derive(&x->part, &run, err)) == 0) {
        if (!(x->model = strdup(run.model)))
            rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        else
            rc = rf_fault_check(&x->o.fault, x->o.fault_text, x->ctl.size, gpus, x->part.n_rounds,
                                x->o.run, err);
    }
    rf_stored_run_release(&run);
    if (rc == 0 && gpus < x->ctl.size)
        fprintf(stderr, "refit-exec: run %lld spans %d GPUs; ranks %d to %d have nothing to do\n",
                (long long)x->o.run, gpus, gpus, x->ctl.size - 1);
    return rc;
}

/* Gathers one string per rank on rank 0 and joins the distinct ones with commas. */
static int gather_names(struct exec *x, const char *mine, char *out, size_t size,
                        struct rf_error *err)
{
    enum { LEN = 256 };
    char local[LEN];
    char *all = x->ctl.rank == 0 ? calloc((size_t)x->ctl.size, LEN) : NULL;
    MPI_Request r;
    int rc;
    snprintf(local, sizeof(local), "%s", mine ? mine : "");
    if (x->ctl.rank == 0 && !all)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    if (MPI_Igather(local, LEN, MPI_CHAR, all, LEN, MPI_CHAR, 0, x->ctl.comm, &r) != MPI_SUCCESS) {
        free(all);
        return rf_error_set(err, RF_ECOMM, "MPI_Igather failed");
    }
    if ((rc = rf_ctl_waitall(&x->ctl, 1, &r, "every rank's host name", err)) < 0 ||
        x->ctl.rank != 0) {
        free(all);
        return rc;
    }
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < x->ctl.size; i++) {
        const char *s = all + (size_t)i * LEN;
        bool seen = !*s;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(s, all + (size_t)j * LEN) == 0;
        if (!seen && n + strlen(s) + 2 < size)
            n += (size_t)snprintf(out + n, size - n, n ? ",%s" : "%s", s);
    }
    free(all);
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int64_t n)
{
    qsort(v, (size_t)n, sizeof(double), cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* The result on stdout: the text form, or with json (also when it could not be stored,
 * then with every round, so nothing measured is lost) one JSON object. */
static void print_result(struct exec *x, bool json, bool stored)
{
    const struct rf_measurement *m = &x->m;
    int64_t wrong_ranks = x->wrong_ranks;
    if (json) {
        json_t *rounds = json_array();
        for (int32_t r = 0; rounds && m->round_seconds && r < m->n_rounds; r++)
            json_array_append_new(rounds, json_real(m->round_seconds[r]));
        json_t *j = json_pack(
            "{sI sI ss ss ss ss? sI sI sI sI sf sf sf sI sI sI sI sI so sb so}", "measurement_id",
            (json_int_t)x->measurement, "run_id", (json_int_t)x->o.run, "model", x->model,
            "backend", m->backend, "status", m->status, "exec_config", m->exec_config, "world_size",
            (json_int_t)m->world_size, "rounds", (json_int_t)x->part.n_rounds, "iters",
            (json_int_t)m->iters, "warmup", (json_int_t)m->warmup, "seconds", m->seconds,
            "seconds_min", m->seconds_min, "seconds_max", m->seconds_max, "payload_bytes",
            (json_int_t)x->part.payload_bytes, "moved_bytes", (json_int_t)x->part.moved_bytes,
            "bytes_verified", (json_int_t)m->bytes_verified, "errors", (json_int_t)m->errors,
            "wrong_ranks", (json_int_t)wrong_ranks, "round_seconds", rounds ? rounds : json_null(),
            "stored", (int)stored, "nccl_env", rf_nccl_env_json(&x->env));
        char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
        if (s)
            puts(s);
        free(s);
        json_decref(j);
        return;
    }
    printf("refit-exec: run %lld (%s, %s) on %lld ranks, backend %s, %d rounds\n",
           (long long)x->o.run, x->model, rf_strategy_name((enum rf_strategy)x->part.strategy),
           (long long)m->world_size, m->backend, x->part.n_rounds);
    char env[256];
    rf_nccl_env_describe(&x->env, env, sizeof(env));
    if (*env)
        printf("  %s\n", env);
    printf("  moved %.3f MB between GPUs (payload %.3f MB), %lld iterations after %lld warmup\n",
           x->part.moved_bytes / 1e6, x->part.payload_bytes / 1e6, (long long)m->iters,
           (long long)m->warmup);
    printf("  time %.3f ms median (min %.3f, max %.3f), slowest rank\n", m->seconds * 1e3,
           m->seconds_min * 1e3, m->seconds_max * 1e3);
    if (m->seconds > 0 && m->bytes_verified > 0)
        printf("  %.3f GB/s of payload, %.3f GB/s written into inference shards\n",
               x->part.payload_bytes / m->seconds / 1e9, m->bytes_verified / m->seconds / 1e9);
    else if (m->seconds > 0)
        printf("  %.3f GB/s of payload\n", x->part.payload_bytes / m->seconds / 1e9);
    if (x->o.check)
        printf("  verified %lld bytes of inference shards: %lld wrong elements\n",
               (long long)m->bytes_verified, (long long)m->errors);
    if (m->exec_config)
        printf("  exec_config: %s\n", m->exec_config);
    printf("  measurement %lld of run %lld: %s\n", (long long)x->measurement, (long long)x->o.run,
           m->status);
}

/* What one rank's buffers need, and what its pool (a host, a GPU) has available. */
struct mem_report {
    int64_t train, infer, root, staging, comm, available;
    char pool[192];
};

static int64_t mem_need(const struct mem_report *r)
{
    return r->train + r->infer + r->root + r->staging + r->comm;
}

/* Rank 0: the first pool whose ranks need more than it has, said with the figures of its
 * neediest rank; false when every pool fits (or its size is unknown). */
static bool mem_refusal(const struct mem_report *all, int n, char *why, size_t size)
{
    for (int i = 0; i < n; i++) {
        int64_t total = 0, avail = -1;
        int count = 0, worst = i;
        bool seen = false;
        for (int j = 0; j < i && !seen; j++)
            seen = strcmp(all[j].pool, all[i].pool) == 0;
        if (seen)
            continue;
        /* Ranks of a pool read its free memory at about the same moment; the largest
         * reading is used, so the replay is refused only when it surely does not fit. */
        for (int j = i; j < n; j++) {
            if (strcmp(all[j].pool, all[i].pool) != 0)
                continue;
            total += mem_need(&all[j]);
            count++;
            avail = all[j].available > avail ? all[j].available : avail;
            if (mem_need(&all[j]) > mem_need(&all[worst]))
                worst = j;
        }
        if (avail < 0 || total <= avail)
            continue;
        const struct mem_report *w = &all[worst];
        char root[64] = "", comm[96] = "";
        if (w->root > 0)
            snprintf(root, sizeof(root), ", broadcast roots %.1f", w->root / 1e9);
        if (w->comm > 0)
            snprintf(comm, sizeof(comm), ", NCCL connection buffers %.1f (estimated)",
                     w->comm / 1e9);
        snprintf(why, size,
                 "rank %d needs %.1f GB (training shards %.1f, inference %.1f%s, staging %.1f%s), "
                 "%s has %.1f GB available for %d rank%s needing %.1f GB: not replayed, nothing "
                 "allocated",
                 worst, mem_need(w) / 1e9, w->train / 1e9, w->infer / 1e9, root, w->staging / 1e9,
                 comm, w->pool, avail / 1e9, count, count == 1 ? "" : "s", total / 1e9);
        return true;
    }
    return false;
}

/* Every rank's buffers are sized before any is allocated. Rank 0 adds up the ranks that
 * draw on one pool (a host's memory for MPI, a GPU for NCCL) and refuses the replay within
 * seconds when they do not fit, rather than letting the kernel kill a rank minutes into
 * filling its shards (a Qwen3-8B replay on 4 host ranks did). Pools are told apart by name
 * (host, GPU bus id), gathered with a deadline like every other wait. The communicators
 * exist by now (the world and every broadcast group's), so the free memory is what their
 * creation left; what NCCL allocates later, at a peer's first message and a group's first
 * broadcast, is the backend's estimate (comm_need), added to the rank's need so a replay
 * that would run out of memory at its first send is refused here, with the figures. */
static int check_memory(struct exec *x, int64_t *refused, struct rf_error *err)
{
    struct mem_report mine = {0}, *all = NULL;
    struct rf_replay_need need;
    MPI_Request r;
    int rc;
    rf_replay_memory(x->replay, &need);
    mine.train = need.train;
    mine.infer = need.infer;
    mine.root = need.root;
    mine.staging = need.staging;
    if (x->be->comm_need) {
        struct rf_comm_use use;
        rf_replay_comm_use(x->replay, &use);
        mine.comm = x->be->comm_need(x->be, &use);
    }
    if ((rc = x->be->memory(x->be, &mine.available, mine.pool, sizeof(mine.pool), err)) < 0)
        return rc;
    if (x->ctl.rank == 0 && !(all = calloc((size_t)x->ctl.size, sizeof(*all))))
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    if (MPI_Igather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, 0,
                    x->ctl.comm, &r) != MPI_SUCCESS) {
        free(all);
        return rf_error_set(err, RF_ECOMM, "MPI_Igather failed");
    }
    if ((rc = rf_ctl_waitall(&x->ctl, 1, &r, "every rank's memory need", err)) < 0) {
        free(all);
        return rc;
    }
    *refused = x->ctl.rank == 0 && mem_refusal(all, x->ctl.size, x->why, sizeof(x->why));
    free(all);
    if ((rc = bcast_int(x, refused, err)) < 0)
        return rc;
    if (*refused && x->ctl.rank == 0) {
        x->refused = true;
        x->m.error_text = x->why;
        fprintf(stderr, "refit-exec: %s\n", x->why);
    }
    return 0;
}

/* refit-exec --probe: every rank, with no database. */
static int probe(struct exec *x, struct rf_error *err)
{
    struct rf_probe_opts po = {x->o.probe_bytes, x->o.iters, x->o.warmup, x->o.json};
    int rc = strcmp(x->o.backend, "nccl") == 0 ? rf_backend_nccl_new(&x->be, &x->ctl, 0, err)
                                               : rf_backend_mpi_new(&x->be, &x->ctl, err);
    return rc < 0 ? rc : rf_probe_run(x->be, &po, err);
}

/* The replay proper: every rank, after the part has arrived. */
static int replay(struct exec *x, struct rf_error *err)
{
    const char *dev;
    char host[MPI_MAX_PROCESSOR_NAME] = "";
    int len = 0, rc;
    int64_t total_iters = x->o.warmup + x->o.iters;
    int32_t nr = x->part.n_rounds;
    size_t row = (size_t)nr + 1;
    double *times = calloc((size_t)x->o.iters * row + 1, sizeof(double));
    double *slowest = calloc((size_t)x->o.iters * row + 1, sizeof(double));
    double *col = calloc((size_t)x->o.iters + 1, sizeof(double));
    double *rounds = calloc(row, sizeof(double));
    struct rf_check chk = {0};
    if (!times || !slowest || !col || !rounds) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    /* Before any NCCL call: NCCL reads its environment when it initialises. */
    if ((rc = rf_nccl_env_apply(&x->env, &x->ctl, err)) < 0)
        goto out;
    rc = strcmp(x->o.backend, "nccl") == 0
             ? rf_backend_nccl_new(&x->be, &x->ctl, x->part.net_channels_per_peer, err)
             : rf_backend_mpi_new(&x->be, &x->ctl, err);
    if (rc < 0)
        goto out;
    MPI_Get_processor_name(host, &len);
    dev = x->be->device;
    if ((rc = gather_names(x, host, x->hosts, sizeof(x->hosts), err)) < 0 ||
        (rc = gather_names(x, dev, x->gpus, sizeof(x->gpus), err)) < 0)
        goto out;
    if (x->ctl.rank == 0) {
        x->m.hosts = x->hosts;
        x->m.gpu_model = x->gpus[0] ? x->gpus : NULL;
        if (x->be->library) {
            snprintf(x->nccl, sizeof(x->nccl), "%s", x->be->library);
            x->m.nccl_version = x->nccl;
        }
        /* Rank 0's: every rank runs the same binary with the same environment; the NCCL
         * environment the replay ran with is part of how it ran. */
        if (x->be->config || x->env.set_by) {
            int n =
                snprintf(x->config, sizeof(x->config), "%s", x->be->config ? x->be->config : "");
            if (x->env.set_by && n >= 0 && (size_t)n < sizeof(x->config))
                snprintf(x->config + n, sizeof(x->config) - (size_t)n, "%sNCCL_PXN_DISABLE=%s",
                         n ? " " : "", x->env.value);
            x->m.exec_config = x->config;
        }
    }
    /* Broadcast groups first: creating their communicators is collective over the world. */
    struct rf_group *groups = calloc(x->part.n_groups + 1, sizeof(*groups));
    if (!groups) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t g = 0; g < x->part.n_groups; g++)
        groups[g] = (struct rf_group){x->part.groups[g].root, x->part.groups[g].first,
                                      x->part.groups[g].count, x->part.groups[g].stride};
    rc = x->be->groups(x->be, groups, x->part.n_groups, err);
    free(groups);
    if (rc < 0 || (rc = rf_replay_new(&x->replay, &x->part, x->ctl.rank, x->be, err)) < 0)
        goto out;
    int64_t refused = 0;
    if ((rc = check_memory(x, &refused, err)) < 0)
        goto out;
    if (refused) {
        rc = 1;
        goto out;
    }
    if ((rc = rf_replay_alloc(x->replay, err)) < 0 || (rc = rf_replay_fill(x->replay, err)) < 0)
        goto out;

    for (int64_t it = 0; it < total_iters; it++) {
        bool last = it == total_iters - 1;
        const struct rf_fault *f = NULL;
        double total;
        if (x->o.fault.kind == RF_FAULT_CORRUPT ? last : it == 0 && x->o.fault.kind)
            f = &x->o.fault;
        if (last && x->o.check && (rc = rf_replay_poison(x->replay, err)) < 0)
            goto out;
        if ((rc = x->be->sync(x->be, err)) < 0 ||
            (rc = rf_ctl_barrier(&x->ctl, x->ctl.comm, err)) < 0)
            goto out;
        double *dst = it >= x->o.warmup ? &times[(size_t)(it - x->o.warmup) * row] : rounds;
        if ((rc = rf_replay_run(x->replay, dst + 1, &total, f, err)) < 0)
            goto out;
        dst[0] = total;
    }
    if (x->o.check && (rc = rf_replay_check(x->replay, &chk, err)) < 0)
        goto out;
    if (chk.errors > 0)
        fprintf(stderr,
                "refit-exec: rank %d: %lld of %lld elements wrong; the first is element %lld of "
                "its shard of %s\n",
                x->ctl.rank, (long long)chk.errors, (long long)chk.elements,
                (long long)chk.first_index, rf_part_tensor_name(&x->part, chk.first_tensor));

    /* Slowest rank per iteration and round; sums of the check. */
    int64_t sums[3] = {chk.bytes, chk.errors, chk.errors > 0}, tot[3] = {0};
    MPI_Request req[2];
    if (MPI_Ireduce(times, slowest, (int)((size_t)x->o.iters * row), MPI_DOUBLE, MPI_MAX, 0,
                    x->ctl.comm, &req[0]) != MPI_SUCCESS ||
        MPI_Ireduce(sums, tot, 3, MPI_INT64_T, MPI_SUM, 0, x->ctl.comm, &req[1]) != MPI_SUCCESS) {
        rc = rf_error_set(err, RF_ECOMM, "MPI_Ireduce failed");
        goto out;
    }
    if ((rc = rf_ctl_waitall(&x->ctl, 2, req, "every rank's times", err)) < 0)
        goto out;
    if (x->ctl.rank == 0) {
        struct rf_measurement *m = &x->m;
        for (int64_t it = 0; it < x->o.iters; it++)
            col[it] = slowest[(size_t)it * row];
        m->seconds = median(col, x->o.iters);
        m->seconds_min = col[0];
        m->seconds_max = col[x->o.iters - 1];
        for (int32_t r = 0; r < nr; r++) {
            for (int64_t it = 0; it < x->o.iters; it++)
                col[it] = slowest[(size_t)it * row + 1 + (size_t)r];
            rounds[r] = median(col, x->o.iters);
        }
        m->round_seconds = rounds;
        m->n_rounds = nr;
        m->bytes_verified = tot[0];
        m->errors = tot[1];
        x->wrong_ranks = tot[2];
        rounds = NULL; /* m keeps them until the end */
        if (!x->o.check) {
            m->status = "unverified";
            m->error_text = "not verified (run without --check)";
        } else if (tot[1] > 0) {
            m->status = "failed";
            snprintf(x->why, sizeof(x->why), "verification found %lld wrong elements on %lld ranks",
                     (long long)tot[1], (long long)tot[2]);
            m->error_text = x->why;
        } else {
            m->status = "ok";
            m->error_text = NULL;
        }
        rc = tot[1] > 0 ? 1 : 0;
    }
out:
    free(times);
    free(slowest);
    free(col);
    free(rounds);
    return rc;
}

static void sleep_seconds(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* Testing only (REFIT_EXEC_TEST_STORE_GATE=PATH): rank 0 creates PATH.ready and waits for
 * PATH.go before it stores the result, so a test can take the database's lock at exactly
 * that point. */
static void store_gate(struct exec *x)
{
    const char *gate = getenv("REFIT_EXEC_TEST_STORE_GATE");
    char p[4096];
    if (!gate || !*gate)
        return;
    fprintf(stderr, "refit-exec: REFIT_EXEC_TEST_STORE_GATE=%s is set (testing only)\n", gate);
    snprintf(p, sizeof(p), "%s.ready", gate);
    FILE *f = fopen(p, "w");
    if (f)
        fclose(f);
    snprintf(p, sizeof(p), "%s.go", gate);
    for (double t0 = MPI_Wtime(); access(p, F_OK) != 0 && MPI_Wtime() - t0 < x->o.timeout;)
        sleep_seconds(0.01);
}

/* Rank 0, after every rank has the verdict: stores the result. Another process may hold
 * the database's lock (a long refit sim, a reader in DELETE mode): a measurement that took
 * minutes of GPU time is worth waiting for, so the write is retried with backoff for
 * --db-timeout seconds in all. If it still fails, the result goes to stdout as JSON with
 * every round, stderr says why, and the row stays failed ("did not finish"). */
static int store_result(struct exec *x, int verdict)
{
    struct rf_error err;
    double t0, left, delay = 0.1;
    bool said = false;
    int rc;
    store_gate(x);
    t0 = MPI_Wtime();
    for (;;) {
        left = x->o.db_timeout - (MPI_Wtime() - t0);
        /* The first try waits a second, so a lock is reported while we wait for it. */
        rf_store_set_busy_timeout(&x->st, left < 0.01 ? 0.01 : !said && left > 1 ? 1 : left);
        rc = rf_store_measurement_finish(&x->st, x->measurement, &x->m, &err);
        left = x->o.db_timeout - (MPI_Wtime() - t0);
        if (rc != RF_EBUSY || left <= 0)
            break;
        if (!said)
            fprintf(stderr,
                    "refit-exec: rank 0: %s is locked by another process; retrying for up to "
                    "%g s (--db-timeout)\n",
                    x->o.db, x->o.db_timeout);
        said = true;
        sleep_seconds(delay < left ? delay : left);
        delay = delay * 2 < 5 ? delay * 2 : 5;
    }
    if (rc < 0) {
        if (rc == RF_EBUSY)
            rf_error_set(&err, RF_EBUSY,
                         "%s: database is locked (another refit is writing it; waited %g s, "
                         "--db-timeout)",
                         x->o.db, x->o.db_timeout);
        if (!x->refused)
            print_result(x, true, false);
        fprintf(stderr,
                "refit-exec: rank 0: the result was not stored: %s; measurement %lld of run "
                "%lld stays failed (\"did not finish\")%s\n",
                err.msg, (long long)x->measurement, (long long)x->o.run,
                x->refused ? "" : "; the result is on stdout as JSON");
        return 1;
    }
    if (x->refused) {
        fprintf(stderr, "refit-exec: rank 0: measurement %lld of run %lld stored as failed\n",
                (long long)x->measurement, (long long)x->o.run);
        return 1;
    }
    print_result(x, x->o.json, true);
    if (x->m.errors > 0)
        fprintf(stderr, "refit-exec: rank 0: %s; measurement %lld stored as failed\n",
                x->m.error_text, (long long)x->measurement);
    return verdict;
}

int main(int argc, char **argv)
{
    struct exec x;
    struct rf_error err = {0};
    int rc;
    int64_t status = 0;

    memset(&x, 0, sizeof(x));
    x.env.pxn = -1; /* until rank 0 reads the run */
    if ((rc = rf_exec_parse(argc, argv, &x.o)) >= 0)
        return rc;
    /* Only this thread calls MPI; NCCL and the CUDA runtime start threads of their own
     * (NCCL's proxy, and a thread per non-blocking ncclGroupEnd), which never do. */
    int provided = MPI_THREAD_SINGLE;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
    if ((rc = rf_ctl_init(&x.ctl, x.o.timeout, &err)) < 0) {
        fprintf(stderr, "refit-exec: %s\n", err.msg);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (provided < MPI_THREAD_FUNNELED && x.ctl.rank == 0 && strcmp(x.o.backend, "nccl") == 0)
        fprintf(stderr,
                "refit-exec: this MPI provides thread level %d, below MPI_THREAD_FUNNELED: NCCL's "
                "and CUDA's own threads (which never call MPI) may not be safe with it\n",
                provided);
    if (x.o.probe) {
        status = probe(&x, &err);
        if (status == RF_EINVAL) {
            /* Refused alike on every rank before anything ran (the buffers' size, the
             * environment, the NCCL library). */
            if (x.ctl.rank == 0)
                fprintf(stderr, "refit-exec: %s\n", err.msg);
            rc = 1;
            goto out;
        }
        if (status < 0)
            fail(&x, (int)status, &err);
        /* Every rank exits with rank 0's verdict (only rank 0 saw every probe). */
        if ((rc = bcast_int(&x, &status, &err)) < 0)
            fail(&x, rc, &err);
        rc = (int)status;
        goto out;
    }
    if (x.ctl.rank == 0) {
        char v[MPI_MAX_LIBRARY_VERSION_STRING];
        int len = 0;
        MPI_Get_library_version(v, &len);
        v[strcspn(v, ",\n")] = '\0';
        snprintf(x.mpi, sizeof(x.mpi), "%s", v);
        x.m = (struct rf_measurement){.run_id = x.o.run,
                                      .backend = x.o.backend,
                                      .world_size = x.ctl.size,
                                      .iters = x.o.iters,
                                      .warmup = x.o.warmup,
                                      .status = "failed",
                                      .error_text = "did not finish (the job ended during the "
                                                    "replay: a rank died or was killed)",
                                      .seconds = -1,
                                      .seconds_min = -1,
                                      .seconds_max = -1,
                                      .mpi_version = x.mpi};
        if (x.o.fault.kind)
            fprintf(stderr, "refit-exec: REFIT_EXEC_FAULT=%s is set (testing only)\n",
                    getenv("REFIT_EXEC_FAULT"));
        rc = load(&x, &err);
        if (rc == 0)
            rc = rf_store_measurement_begin(&x.st, &x.m, &x.measurement, &err);
        if (rc < 0)
            fprintf(stderr, "refit-exec: %s\n", err.msg);
        status = rc < 0 ? 1 : 0;
    }
    /* Refusals before the replay starts end every rank cleanly, with nothing stored. */
    if ((rc = bcast_int(&x, &status, &err)) < 0)
        fail(&x, rc, &err);
    if (status != 0) {
        rc = 1;
        goto out;
    }
    if ((rc = rf_part_share(&x.part, &x.ctl, &err)) < 0 || (rc = replay(&x, &err)) < 0)
        fail(&x, rc, &err);
    /* Every rank exits with rank 0's verdict, given before rank 0 stores the result: the
     * others need not wait (past their deadline) while it waits for the database. */
    status = rc;
    if ((rc = bcast_int(&x, &status, &err)) < 0)
        fail(&x, rc, &err);
    rc = (int)status;
    if (x.ctl.rank == 0)
        rc = store_result(&x, rc);
out:
    rf_replay_free(x.replay);
    if (x.be)
        x.be->release(x.be);
    rf_part_release(&x.part);
    free((void *)x.m.round_seconds);
    if (x.have_store)
        rf_store_close(&x.st);
    free(x.model);
    rf_ctl_release(&x.ctl);
    MPI_Finalize();
    return rc;
}
