/* The probes' internals, shared by their files: the probes, their names and one probe's
 * result as rank 0 gathers it (probe.c), and the reports of the results (probe_report.c). */
#ifndef RF_PROBE_INT_H
#define RF_PROBE_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "backend.h"

/* The probes, in the order they are printed (probe.c runs them in its own). */
enum {
    P_COPY,
    P_PACK,
    P_NARROW,
    P_FILL,
    P_CHECK,
    P_SELFSEND,
    P_LAUNCH,
    P_LATENCY,
    P_GROUP,
    P_SEND4K,
    P_BARRIER,
    P_H2D,
    P_D2H,
    N_PROBES
};
extern const char *const probe_name[N_PROBES];

/* The probes that time one call's fixed cost on the host's clock. */
static inline bool per_call(int probe)
{
    return probe >= P_LAUNCH && probe <= P_BARRIER;
}

/* One probe's result, gathered on rank 0 as plain bytes (every rank runs the same binary). */
struct result {
    int32_t rank, probe;
    int64_t bytes;
    double seconds, gbps; /* median; -1 when not measured */
    char impl[32];
    char status[224]; /* "ok", "unsupported: why" or "failed: why" */
};

/* Rank 0's report of the n results gathered from every rank (rank by rank, each rank's in
 * the printed order), on stdout: one JSON object, or a table of the timed probes, one of the
 * per-call ones and the calibration line. devices: the ranks' distinct devices, joined with
 * commas ("" on host memory). */
void probe_print_json(const struct rf_backend *be, const struct result *res, int n,
                      const char *devices);
void probe_print_table(const struct rf_backend *be, const struct result *res, int n,
                       const char *devices);

#endif
