/* refit-exec --probe's report on rank 0: the gathered results as one JSON object or as
 * tables, with the calibration line a cluster preset takes (README: refit-exec --probe). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe_int.h"

/* The cluster preset's calibration field (models/lib/cluster.lua) each probe measures, and
 * whether the calibration line takes its figure. Of the two launch probes the line takes the
 * back-to-back one: the replay and the refit paths it models issue their kernels back to
 * back on one stream, so a launch costs them its share of the stream's throughput, not the
 * round trip of a lone kernel waited for. Of the two NCCL calls it takes the 4 KiB send, the
 * fixed cost a small collective or message pays; the empty group is printed beside it. */
static const struct {
    const char *field;
    bool line;
} calib[N_PROBES] = {[P_COPY] = {"memcpy_gbps", true},
                     [P_NARROW] = {"quant_gbps", true},
                     [P_LAUNCH] = {"kernel_launch_us", true},
                     [P_LATENCY] = {"kernel_launch_us", false},
                     [P_GROUP] = {"nccl_call_us", false},
                     [P_SEND4K] = {"nccl_call_us", true},
                     [P_BARRIER] = {"barrier_us", true},
                     [P_H2D] = {"h2d_gbps", true},
                     [P_D2H] = {"d2h_gbps", true}};

/* A probe's figure in its calibration field's unit (microseconds for the _us fields, else
 * GB/s), or -1 when it has none. */
static double field_value(const struct result *r)
{
    const char *f = calib[r->probe].field;
    if (!f || strcmp(r->status, "ok") != 0)
        return -1;
    size_t len = strlen(f);
    if (len > 3 && strcmp(f + len - 3, "_us") == 0)
        return r->seconds > 0 ? r->seconds * 1e6 : -1;
    return r->gbps > 0 ? r->gbps : -1;
}

/* As the calibration line writes it: whole GB/s, microseconds to three significant digits
 * (more below one, so a figure that was measured never prints as 0). */
static void format_value(const struct result *r, char *out, size_t size)
{
    double v = field_value(r);
    const char *f = calib[r->probe].field;
    if (strcmp(f + strlen(f) - 3, "_us") != 0)
        snprintf(out, size, "%.0f", v);
    else if (v >= 1)
        snprintf(out, size, "%.*f", v >= 100 ? 0 : v >= 10 ? 1 : 2, v);
    else
        snprintf(out, size, "%.3g", v);
}

void probe_print_json(const struct rf_backend *be, const struct result *res, int n,
                      const char *devices)
{
    json_t *probes = json_array(), *cal = json_object();
    for (int i = 0; probes && i < n; i++) {
        const struct result *r = &res[i];
        json_t *o = json_pack("{si ss sI so so ss ss}", "rank", r->rank, "name",
                              probe_name[r->probe], "bytes", (json_int_t)r->bytes, "seconds",
                              r->seconds >= 0 ? json_real(r->seconds) : json_null(), "gbps",
                              r->gbps >= 0 ? json_real(r->gbps) : json_null(), "impl", r->impl,
                              "status", r->status);
        double v = field_value(r);
        /* The first six keep their keys; the calibration's probes say which field they
         * measure, their figure in its unit, and whether the calibration line takes it. */
        if (o && r->probe >= P_LAUNCH) {
            json_object_set_new(o, "field", json_string(calib[r->probe].field));
            json_object_set_new(o, "value", v >= 0 ? json_real(v) : json_null());
            json_object_set_new(o, "calibrates", json_boolean(calib[r->probe].line));
        }
        if (cal && r->rank == 0 && calib[r->probe].line && v >= 0)
            json_object_set_new(cal, calib[r->probe].field, json_real(v));
        json_array_append_new(probes, o);
    }
    json_t *j = json_pack("{so ss ss? ss? ss? ss? ss? si so}", "probe", probes, "backend", be->name,
                          "device", devices[0] ? devices : NULL, "nccl_version", be->library,
                          "cuda_runtime", be->cuda_runtime, "driver", be->driver, "exec_config",
                          be->config, "ranks", be->ctl->size, "calibration", cal);
    char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
    if (s)
        puts(s);
    free(s);
    json_decref(j);
}

void probe_print_table(const struct rf_backend *be, const struct result *res, int n,
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
        if (!per_call(r->probe))
            printf("  %4d  %-8s  %-20s  %12lld  %10s  %9s  %s\n", r->rank, probe_name[r->probe],
                   r->impl, (long long)r->bytes, ms, gbps, r->status);
    }
    /* The fixed cost of one call, in microseconds. */
    printf("  %4s  %-8s  %-20s  %12s  %10s  %-16s  %s\n", "rank", "probe", "impl", "bytes",
           "us/call", "field", "status");
    for (int i = 0; i < n; i++) {
        const struct result *r = &res[i];
        char us[32] = "-";
        if (!per_call(r->probe))
            continue;
        if (r->seconds >= 0)
            snprintf(us, sizeof(us), "%.3f", r->seconds * 1e6);
        printf("  %4d  %-8s  %-20s  %12lld  %10s  %-16s  %s\n", r->rank, probe_name[r->probe],
               r->impl, (long long)r->bytes, us, calib[r->probe].field, r->status);
    }
    /* Rank 0's figures, only those measured, as a preset's calibration table takes them. */
    int fields = 0;
    for (int i = 0; i < n && res[i].rank == 0; i++) {
        char v[32];
        if (!calib[res[i].probe].line || field_value(&res[i]) < 0)
            continue;
        format_value(&res[i], v, sizeof(v));
        printf("%s%s = %s",
               fields++ ? ", " : "  rank 0's, to fold into a cluster preset: calibration = { ",
               calib[res[i].probe].field, v);
    }
    if (fields)
        printf(" }\n");
}
