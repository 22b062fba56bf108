/* `refit calibrate`: fit a cluster's calibration knobs to refit-exec's measurements and
 * write the calibrated cluster file. */
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "calibrate.h"
#include "cmd.h"
#include "fileio.h"
#include "scenario.h"
#include "simulate.h"
#include "step.h"
#include "store.h"

static const char usage_calibrate[] =
    "usage: refit calibrate --db FILE --cluster NAME [--framework NAME] [--out FILE] [--json]\n"
    "\n"
    "Fits the calibration of cluster NAME (a preset or a cluster file) to every ok\n"
    "measurement of a run that `refit sim` predicted on it: refit-exec's replays (--check)\n"
    "against the simulated wire and its rounds, steps read from a framework's log (refit\n"
    "measure) against the step the run's framework profile gives and its phases. Least\n"
    "squares on relative errors, over the knobs the runs can identify (nvlink_efficiency,\n"
    "nic_efficiency, message_latency_us, tensor_overhead_us, bucket_overhead_us,\n"
    "kernel_launch_us, nccl_call_us, barrier_us, loader_scan_us, reg_region_us, h2d_gbps,\n"
    "d2h_gbps). Prints each measurement's error before and after and writes the calibrated\n"
    "cluster file.\n"
    "  --framework NAME  only the runs stored under that framework profile (nemo-rl, verl)\n"
    "  --out FILE        the calibrated cluster file (default: NAME's file name without .lua,\n"
    "                    plus -calibrated.lua, in the current folder), replaced atomically\n"
    "  --json            print the fit as one JSON object instead of tables\n";
static const char calibrated[] = "-calibrated";

/* The suffix to append to make name NAME-calibrated, once: recalibrating a calibrated
 * cluster keeps its name. */
static const char *calibrated_suffix(const char *name)
{
    size_t n = strlen(name), k = strlen(calibrated);
    return n >= k && strcmp(name + n - k, calibrated) == 0 ? "" : calibrated;
}

/* NAME-calibrated as a malloc'd string (NULL when out of memory): never cut short. */
static char *calibrated_name(const char *name)
{
    size_t size = strlen(name) + sizeof(calibrated);
    char *s = malloc(size);
    if (s)
        snprintf(s, size, "%s%s", name, calibrated_suffix(name));
    return s;
}

/* The default output file: the --cluster argument's last component without .lua, made
 * NAME-calibrated.lua, in the current folder. It comes from the command line only, never
 * from the cluster file's contents (a name of "../../x" would write elsewhere). 0, or -1
 * when no file name is left (empty, "." or ".."). */
static int default_out(const char *spec, char *buf, size_t size)
{
    char base[NAME_MAX + 1];
    const char *slash = strrchr(spec, '/');
    snprintf(base, sizeof(base), "%s", slash ? slash + 1 : spec);
    size_t n = strlen(base);
    if (n >= 4 && strcmp(base + n - 4, ".lua") == 0)
        base[n - 4] = '\0';
    if (base[0] == '\0' || strcmp(base, ".") == 0 || strcmp(base, "..") == 0)
        return -1;
    snprintf(buf, size, "%s%s.lua", base, calibrated_suffix(base));
    return 0;
}

/* The fit as one object: errors, each knob before and after, every measurement. NULL when
 * a string is not UTF-8 (JSON cannot carry it). */
/* A log's phases of point p: [{phase, measured_s, before_s, after_s}]. */
static json_t *phases_json(const struct rf_cal_point *p)
{
    json_t *a = json_array();
    for (int k = 0; a && k < RF_STEP_PHASE_COUNT; k++)
        if (!isnan(p->phase_measured[k]))
            json_array_append_new(
                a,
                json_pack("{ss sf so so}", "phase", rf_step_phase_name((enum rf_step_phase_kind)k),
                          "measured_s", p->phase_measured[k], "before_s",
                          isnan(p->phase_before[k]) ? json_null() : json_real(p->phase_before[k]),
                          "after_s",
                          isnan(p->phase_after[k]) ? json_null() : json_real(p->phase_after[k])));
    return a;
}

/* The fit as one object: errors, each knob before and after, every measurement. NULL when
 * a string is not UTF-8 (JSON cannot carry it). */
static json_t *calibration_json(const struct rf_calibration *cal, const char *name,
                                const char *path)
{
    json_t *params = json_object(), *points = json_array();
    for (int k = 0; k < RF_CAL_PARAM_COUNT; k++)
        json_object_set_new(params, rf_cal_param_name((enum rf_cal_param)k),
                            json_pack("{s:f, s:f, s:b, s:o}", "before", cal->before[k], "after",
                                      cal->after[k], "identifiable", cal->used[k], "tied_to",
                                      cal->tied[k] >= 0 ? json_string(rf_cal_param_name(
                                                              (enum rf_cal_param)cal->tied[k]))
                                                        : json_null()));
    for (size_t i = 0; i < cal->n_points; i++) {
        const struct rf_cal_point *p = &cal->points[i];
        json_array_append_new(points, json_pack("{s:I, s:I, s:s, s:s, s:f, s:f, s:f, s:o}",
                                                "run_id", (json_int_t)p->run_id, "measurement_id",
                                                (json_int_t)p->measurement_id, "backend",
                                                p->log ? "log" : "replay", "compared_with",
                                                p->step ? "step" : "wire", "measured_s",
                                                p->measured_s, "before_s", p->before_s, "after_s",
                                                p->after_s, "phases", phases_json(p)));
    }
    /* "o" hands params and points over, also when the packing fails. */
    return json_pack("{s:s, s:s, s:f, s:f, s:f, s:f, s:I, s:i, s:o, s:o}", "cluster", name, "file",
                     path, "objective_before", cal->objective_before, "objective_after",
                     cal->objective_after, "rms_before", cal->rms_before, "rms_after",
                     cal->rms_after, "measurements", (json_int_t)cal->n_points, "evaluations",
                     cal->evaluations, "parameters", params, "points", points);
}

int cmd_calibrate(int argc, char **argv)
{
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"cluster", required_argument, NULL, 'c'},
                                         {"out", required_argument, NULL, 'o'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"framework", required_argument, NULL, 'f'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *db = NULL, *spec = NULL, *outp = NULL, *framework = NULL;
    bool json = false;
    int c;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'c': spec = optarg; break;
        case 'o': outp = optarg; break;
        case 'f': framework = optarg; break;
        case 'j': json = true; break;
        case 'h': fputs(usage_calibrate, stdout); return 0;
        default: return 2; /* cmd_getopt said what is wrong */
        }
    }
    if (optind != argc || !db || !spec) {
        fputs(usage_calibrate, stderr);
        return 2;
    }

    char path[PATH_MAX], when[32];
    char *name = NULL;
    json_t *o = NULL;
    struct rf_error err = {0};
    struct cmd_env env = {0};
    struct rf_store st = {0};
    struct rf_cluster cluster = {0};
    struct rf_calibration cal = {0};
    int rc = 1;
    if (!outp) {
        if (default_out(spec, path, sizeof(path)) < 0) {
            fprintf(stderr,
                    "refit: --cluster %s: no file name to derive the output's from (give --out "
                    "FILE)\n",
                    spec);
            return 2;
        }
        outp = path;
    }
    if (access(db, F_OK) != 0) {
        fprintf(stderr, "refit: %s: no such database\n", db);
        return 1;
    }
    if (rf_is_db_file(outp, db)) {
        fprintf(stderr,
                "refit: --out %s: is the database --db %s (or its -wal, -shm or -journal file);"
                " the calibrated cluster needs a file of its own\n",
                outp, db);
        return 2;
    }
    /* The database is read-only here, opened by the command itself, not env's lazy store. */
    if ((rc = cmd_open(&env, NULL, CMD_OPEN_SIM)) != 0)
        goto out;
    rc = 1;
    if (rf_store_open(&st, db, RF_STORE_READONLY, &err) < 0 ||
        rf_lua_load_cluster(env.L, spec, &cluster, &err) < 0 ||
        rf_calibrate(&st, &cluster, &env.sim, framework, &cal, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    if (!(name = calibrated_name(cluster.name))) {
        rc = cmd_fail(&(struct rf_error){.code = RF_ENOMEM, .msg = "out of memory"});
        goto out;
    }
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
    /* The JSON is built first: it cannot fail once the file is written. */
    if (json && !(o = calibration_json(&cal, name, outp))) {
        fprintf(stderr, "refit: --json: the cluster's name or the --out path is not UTF-8\n");
        goto out;
    }
    if (rf_calibration_save(&cal, name, when, outp, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }

    if (json) {
        json_dumpf(o, stdout, JSON_INDENT(2));
        fputc('\n', stdout);
        rc = 0;
        goto out;
    }
    printf("%-6s %-6s %-8s %12s %12s %12s %10s %10s\n", "run", "meas", "vs", "measured_s",
           "before_s", "after_s", "err_before", "err_after");
    for (size_t i = 0; i < cal.n_points; i++) {
        const struct rf_cal_point *p = &cal.points[i];
        printf("%-6lld %-6lld %-8s %12.6g %12.6g %12.6g %+10.3f %+10.3f\n", (long long)p->run_id,
               (long long)p->measurement_id, p->step ? "step" : "wire", p->measured_s, p->before_s,
               p->after_s, (p->before_s - p->measured_s) / p->measured_s,
               (p->after_s - p->measured_s) / p->measured_s);
        /* A log's phases under their point, against the step's phase of that name. */
        for (int k = 0; p->step && k < RF_STEP_PHASE_COUNT; k++)
            if (p->phase_measured[k] > 0)
                printf("  %-11s %-8s %12.6g %12.6g %12.6g %+10.3f %+10.3f\n", "",
                       rf_step_phase_name((enum rf_step_phase_kind)k), p->phase_measured[k],
                       p->phase_before[k], p->phase_after[k],
                       (p->phase_before[k] - p->phase_measured[k]) / p->phase_measured[k],
                       (p->phase_after[k] - p->phase_measured[k]) / p->phase_measured[k]);
    }
    printf("\n%-20s %12s %12s\n", "parameter", "before", "after");
    for (int k = 0; k < RF_CAL_PARAM_COUNT; k++) {
        printf("%-20s %12.6g %12.6g", rf_cal_param_name((enum rf_cal_param)k), cal.before[k],
               cal.after[k]);
        if (cal.tied[k] >= 0)
            printf("   (moves the predictions as %s does: kept)\n",
                   rf_cal_param_name((enum rf_cal_param)cal.tied[k]));
        else
            printf("%s\n", cal.used[k] ? "" : "   (not identifiable: kept)");
    }
    printf("\nobjective (squared relative errors of totals, and of rounds or phases): before "
           "%.4f, after %.4f\n",
           cal.objective_before, cal.objective_after);
    printf("rms relative error of totals: before %.4f, after %.4f (%zu measurements, %d "
           "evaluations)\n",
           cal.rms_before, cal.rms_after, cal.n_points, cal.evaluations);
    printf("calibrated cluster '%s' written to %s\n", name, outp);
    rc = 0;
out:
    json_decref(o);
    free(name);
    rf_calibration_release(&cal);
    rf_cluster_release(&cluster);
    rf_store_close(&st);
    cmd_close(&env);
    return rc;
}
