/* `refit calibrate`: fit a cluster's calibration knobs to refit-exec's measurements and
 * write the calibrated cluster file. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibrate.h"
#include "cmd.h"
#include "scenario.h"
#include "store.h"

static const char usage_calibrate[] =
    "usage: refit calibrate --db FILE --cluster NAME [--out FILE] [--json]\n"
    "\n"
    "Fits the calibration of cluster NAME (a preset or a cluster file) to every ok\n"
    "measurement (refit-exec --check) of a run that `refit sim` predicted on it: least\n"
    "squares on relative errors of the total and per-round times, over the knobs the runs\n"
    "can identify (nvlink_efficiency, nic_efficiency, message_latency_us,\n"
    "tensor_overhead_us, bucket_overhead_us). Prints each run's error before and after and\n"
    "writes the calibrated cluster file.\n"
    "  --out FILE     the calibrated cluster file (default NAME-calibrated.lua)\n"
    "  --json         print the fit as one JSON object instead of tables\n";
static void calibrated_name(const char *name, char *buf, size_t size)
{
    const char *suffix = "-calibrated";
    size_t n = strlen(name), k = strlen(suffix);
    if (n >= k && strcmp(name + n - k, suffix) == 0)
        snprintf(buf, size, "%s", name);
    else
        snprintf(buf, size, "%s%s", name, suffix);
}

/* The fit as one object: errors, each knob before and after, every measurement. */
static void print_calibration_json(const struct rf_calibration *cal, const char *name,
                                   const char *path)
{
    json_t *params = json_object(), *points = json_array();
    for (int k = 0; k < RF_CAL_PARAM_COUNT; k++)
        json_object_set_new(params, rf_cal_param_name((enum rf_cal_param)k),
                            json_pack("{s:f, s:f, s:b}", "before", cal->before[k], "after",
                                      cal->after[k], "identifiable", cal->used[k]));
    for (size_t i = 0; i < cal->n_points; i++) {
        const struct rf_cal_point *p = &cal->points[i];
        json_array_append_new(
            points, json_pack("{s:I, s:I, s:f, s:f, s:f}", "run_id", (json_int_t)p->run_id,
                              "measurement_id", (json_int_t)p->measurement_id, "measured_s",
                              p->measured_s, "before_s", p->before_s, "after_s", p->after_s));
    }
    json_t *o = json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:I, s:i, s:o, s:o}", "cluster", name,
                          "file", path, "objective_before", cal->objective_before,
                          "objective_after", cal->objective_after, "rms_before", cal->rms_before,
                          "rms_after", cal->rms_after, "measurements", (json_int_t)cal->n_points,
                          "evaluations", cal->evaluations, "parameters", params, "points", points);
    json_dumpf(o, stdout, JSON_INDENT(2));
    fputc('\n', stdout);
    json_decref(o);
}

int cmd_calibrate(int argc, char **argv)
{
    static const struct option opts[] = {
        {"db", required_argument, NULL, 'd'},  {"cluster", required_argument, NULL, 'c'},
        {"out", required_argument, NULL, 'o'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},      {NULL, 0, NULL, 0}};
    const char *db = NULL, *spec = NULL, *outp = NULL;
    bool json = false;
    int c;
    while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'c': spec = optarg; break;
        case 'o': outp = optarg; break;
        case 'j': json = true; break;
        case 'h': fputs(usage_calibrate, stdout); return 0;
        default: fputs(usage_calibrate, stderr); return 2;
        }
    }
    if (optind != argc || !db || !spec) {
        fputs(usage_calibrate, stderr);
        return 2;
    }

    char dir[PATH_MAX], name[256], path[PATH_MAX], when[32];
    struct rf_error err = {0};
    struct rf_lua *L = NULL;
    struct rf_store st = {0};
    struct rf_cluster cluster = {0};
    struct rf_calibration cal = {0};
    FILE *f = NULL;
    int rc = 1;
    cmd_models_dir(dir, sizeof(dir));
    if (access(db, F_OK) != 0) {
        fprintf(stderr, "refit: %s: no such database\n", db);
        return 1;
    }
    if (rf_lua_open(&L, dir, &err) < 0 || rf_store_open(&st, db, RF_STORE_READONLY, &err) < 0 ||
        rf_lua_load_cluster(L, spec, &cluster, &err) < 0 ||
        rf_calibrate(&st, &cluster, &cal, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    calibrated_name(cluster.name, name, sizeof(name));
    if (!outp) {
        snprintf(path, sizeof(path), "%s.lua", name);
        outp = path;
    }
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (!(f = fopen(outp, "w"))) {
        fprintf(stderr, "refit: %s: cannot write: %s\n", outp, strerror(errno));
        goto out;
    }
    if (rf_calibration_write(&cal, name, when, f, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    if (fclose(f) != 0) {
        f = NULL;
        fprintf(stderr, "refit: %s: write failed: %s\n", outp, strerror(errno));
        goto out;
    }
    f = NULL;

    if (json) {
        print_calibration_json(&cal, name, outp);
        rc = 0;
        goto out;
    }
    printf("%-6s %-6s %12s %12s %12s %10s %10s\n", "run", "meas", "measured_s", "before_s",
           "after_s", "err_before", "err_after");
    for (size_t i = 0; i < cal.n_points; i++) {
        const struct rf_cal_point *p = &cal.points[i];
        printf("%-6lld %-6lld %12.6g %12.6g %12.6g %+10.3f %+10.3f\n", (long long)p->run_id,
               (long long)p->measurement_id, p->measured_s, p->before_s, p->after_s,
               (p->before_s - p->measured_s) / p->measured_s,
               (p->after_s - p->measured_s) / p->measured_s);
    }
    printf("\n%-20s %12s %12s\n", "parameter", "before", "after");
    for (int k = 0; k < RF_CAL_PARAM_COUNT; k++)
        printf("%-20s %12.6g %12.6g%s\n", rf_cal_param_name((enum rf_cal_param)k), cal.before[k],
               cal.after[k], cal.used[k] ? "" : "   (not identifiable: kept)");
    printf("\nobjective (squared relative errors of totals and rounds): before %.4f, after %.4f\n",
           cal.objective_before, cal.objective_after);
    printf("rms relative error of totals: before %.4f, after %.4f (%zu measurements, %d "
           "evaluations)\n",
           cal.rms_before, cal.rms_after, cal.n_points, cal.evaluations);
    printf("calibrated cluster '%s' written to %s\n", name, outp);
    rc = 0;
out:
    if (f)
        fclose(f);
    rf_calibration_release(&cal);
    rf_cluster_release(&cluster);
    rf_store_close(&st);
    rf_lua_close(L);
    return rc;
}
