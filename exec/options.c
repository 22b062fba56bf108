/* refit-exec's command line (exec/options.h): the usage text, the options and their
 * checks, with the bounds every figure is held to. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

static const char usage_text[] =
    "usage: mpirun -np N refit-exec --db FILE --run ID [options]\n"
    "       mpirun -np N refit-exec --probe [--probe-bytes N] [--backend B] [--json]\n"
    "\n"
    "Replays run ID of the refit database FILE, one rank per GPU (rank r plays GPU r of the\n"
    "plan), and stores the measurement in FILE. Only rank 0 reads and writes FILE.\n"
    "With --probe it measures each rank's device instead (copy, pack, narrow, fill, check,\n"
    "selfsend: the operations of a replay; launch, latency, group, send4k, barrier: the fixed\n"
    "cost of a call; h2d, d2h: pinned host memory to the device and back), the median of\n"
    "--iters, and rank 0 prints them with the calibration line for a cluster preset.\n"
    "\n"
    "  --db FILE        refit database (default refit.db)\n"
    "  --run ID         the run to replay (refit plan prints its id)\n"
    "  --backend B      nccl (GPUs; the default when built with NCCL) or mpi (host memory)\n"
    "  --iters N        timed iterations (default 5, at most 10000); the median is stored\n"
    "  --warmup N       untimed iterations first (default 1, at most 10000)\n"
    "  --check          verify every destination element after the last iteration; without\n"
    "                   it the measurement is stored as unverified\n"
    "  --timeout S      seconds any one wait may take before the job is ended (default 120)\n"
    "  --db-timeout S   seconds rank 0 keeps trying to store the result while another process\n"
    "                   holds the database's lock (default 300); if it still cannot, it prints\n"
    "                   the result as JSON, the row stays failed and the exit status is 1\n"
    "  --json           print the result as one JSON object\n"
    "  --probe          microbenchmarks of each rank's device; no --db or --run\n"
    "  --probe-bytes N  bytes of each of the probes' two buffers (default 1G; suffix K, M, G:\n"
    "                   binary), at most a quarter of the free memory\n"
    "  --help           this text\n"
    "\n"
    "REFIT_EXEC_NCCL_BLOCKING=0 makes the NCCL communicators non-blocking, so that every NCCL\n"
    "call is bounded by --timeout (blocking ones, the default, bound only the data movement;\n"
    "non-blocking ones cost a thread per step, which shows in the times).\n"
    "\n"
    "Testing only: REFIT_EXEC_FAULT=RANK:KIND[:ROUND] (KIND crash, hang or corrupt) makes a\n"
    "rank fail on purpose in the given round (default: the middle one).\n"
    "REFIT_EXEC_TEST_STORE_GATE=PATH makes rank 0 create PATH.ready before it stores the\n"
    "result and wait (up to --timeout) for PATH.go to exist.\n";

/* The environment variables launchers set; only rank 0 prints usage errors. */
static bool env_rank_zero(void)
{
    const char *vars[] = {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "SLURM_PROCID"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v)
            return atoi(v) == 0;
    }
    return true;
}

static int usage_error(const char *fmt, const char *arg)
{
    if (env_rank_zero()) {
        fprintf(stderr, "refit-exec: ");
        fprintf(stderr, fmt, arg);
        fprintf(stderr, "\n(refit-exec --help for usage)\n");
    }
    return 2;
}

/* An integer from lo to hi; out of range (ERANGE included: 2^63 is not read as 2^63 - 1)
 * is false. */
/* The most timed or warmup iterations: each replays the whole refit (seconds on a real
 * cluster), and every timed one keeps a time per round on rank 0, so 10,000 of a plan of
 * 1,000 rounds are 160 MB; 2^31 warmups once ran until killed, and 10^9 iterations were
 * reported as "out of memory" (issue 25). */
#define MAX_ITERS 10000
#define STR_(x) #x
#define STR(x) STR_(x)

static bool parse_int(const char *s, int64_t lo, int64_t hi, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = s ? strtoll(s, &end, 10) : 0;
    if (!s || !*s || *end || errno == ERANGE || v < lo || v > hi)
        return false;
    *out = v;
    return true;
}

/* A byte count with an optional binary suffix (K, M, G). */
static bool parse_bytes(const char *s, int64_t *out)
{
    char *end;
    long long v = strtoll(s, &end, 10);
    int shift = 0;
    if (end == s || v <= 0)
        return false;
    if (*end == 'K' || *end == 'k')
        shift = 10, end++;
    else if (*end == 'M' || *end == 'm')
        shift = 20, end++;
    else if (*end == 'G' || *end == 'g')
        shift = 30, end++;
    if (*end || v > (INT64_MAX >> shift))
        return false;
    *out = (int64_t)v << shift;
    return true;
}

int rf_exec_parse(int argc, char **argv, struct rf_exec_opts *o)
{
    struct rf_error err;
#ifdef RF_HAVE_NCCL
    o->backend = "nccl";
#else
    o->backend = "mpi";
#endif
    o->db = "refit.db";
    o->run = -1;
    o->iters = 5;
    o->warmup = 1;
    o->timeout = 120;
    o->db_timeout = 300;
    o->probe_bytes = (int64_t)1 << 30;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            if (env_rank_zero())
                fputs(usage_text, stdout);
            return 0;
        } else if (strcmp(a, "--check") == 0) {
            o->check = true;
        } else if (strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--probe") == 0) {
            o->probe = true;
        } else if (!v) {
            return usage_error("%s needs a value", a);
        } else if (strcmp(a, "--db") == 0) {
            o->db = v, i++;
        } else if (strcmp(a, "--backend") == 0) {
            if (strcmp(v, "nccl") != 0 && strcmp(v, "mpi") != 0)
                return usage_error("--backend %s: expected nccl or mpi", v);
            o->backend = v, i++;
        } else if (strcmp(a, "--run") == 0) {
            if (!parse_int(v, 1, INT64_MAX, &o->run))
                return usage_error("--run %s: expected a run id (a positive integer)", v);
            i++;
        } else if (strcmp(a, "--probe-bytes") == 0) {
            if (!parse_bytes(v, &o->probe_bytes))
                return usage_error("--probe-bytes %s: expected a positive number of bytes "
                                   "(suffix K, M or G)",
                                   v);
            i++;
        } else if (strcmp(a, "--iters") == 0) {
            if (!parse_int(v, 1, MAX_ITERS, &o->iters))
                return usage_error(
                    "--iters %s: expected a positive number, at most " STR(MAX_ITERS), v);
            i++;
        } else if (strcmp(a, "--warmup") == 0) {
            if (!parse_int(v, 0, MAX_ITERS, &o->warmup))
                return usage_error("--warmup %s: expected a number from 0 to " STR(MAX_ITERS), v);
            i++;
        } else if (strcmp(a, "--timeout") == 0 || strcmp(a, "--db-timeout") == 0) {
            bool db = strcmp(a, "--db-timeout") == 0;
            char *end;
            double t = strtod(v, &end);
            if (*end || !(t > 0) || t > 1e6)
                return usage_error(db ? "--db-timeout %s: expected seconds > 0"
                                      : "--timeout %s: expected seconds > 0",
                                   v);
            *(db ? &o->db_timeout : &o->timeout) = t;
            i++;
        } else {
            return usage_error("unknown option %s", a);
        }
    }
    if (o->run < 0 && !o->probe)
        return usage_error("%s", "--run ID is required");
    o->fault_text = getenv("REFIT_EXEC_FAULT");
    if (rf_fault_parse(o->fault_text, &o->fault, &err) < 0)
        return usage_error("%s", err.msg);
    return -1;
}
