/* `refit measure`: a refit step's time read from the user's own framework log (NeMo RL's
 * timing output, verl's timing_s/update_weights, ...) stored as a measurement of a run. */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "json.h"
#include "runview.h"
#include "step.h"
#include "store.h"

static const char usage[] =
    "usage: refit measure RUN --seconds S [--phase NAME=S ...] [--source TEXT] [--db FILE]\n"
    "                     [--json]\n"
    "\n"
    "Stores a refit step's time that the framework's own log printed (NeMo RL's timing\n"
    "output, verl's timing_s/update_weights, miles' logs) as a measurement of run RUN of FILE\n"
    "(default refit.db): backend 'log', status ok, nothing replayed or verified. Prints it\n"
    "beside the run's prediction: the step under a framework profile, else the wire. `refit\n"
    "calibrate` fits the cluster's per-call constants to such measurements.\n"
    "  --seconds S        the whole step, in seconds (1e-6 to 1e6)\n"
    "  --phase NAME=S     one phase the log printed, by the step's names: export, transfer,\n"
    "                     load, finalize, prepare, resume (repeatable, each once; at most the\n"
    "                     step's seconds)\n"
    "  --source TEXT      where the figure comes from (\"verl timing_s/update_weights, job 123\")\n"
    "  --json             one JSON object instead of text\n";

/* A number of seconds as the user wrote it; false after saying why (exit 2). Range checks
 * are the store's (rf_store_log_measurement), so every caller gets them. */
static bool parse_seconds(const char *opt, const char *arg, const char *s, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(s, &end);
    if (*s == '\0' || *end || errno == ERANGE) {
        cmd_usage_fail("measure", "%s %s: expected a number of seconds", opt, arg);
        return false;
    }
    return true;
}

/* NAME=S into p (the name one of the step's: rf_step_phase_name's static text); false after
 * saying why (exit 2). */
static bool parse_phase(const char *arg, struct rf_log_phase *p)
{
    const char *eq = strchr(arg, '=');
    char name[32];
    if (!eq || eq == arg) {
        cmd_usage_fail("measure", "--phase %s: expected NAME=SECONDS", arg);
        return false;
    }
    snprintf(name, sizeof(name), "%.*s", (int)(eq - arg), arg);
    int k = (size_t)(eq - arg) < sizeof(name) ? rf_step_phase_parse(name) : -1;
    if (k < 0) {
        char names[96] = "";
        for (int i = 0; i < RF_STEP_PHASE_COUNT; i++)
            snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", i ? ", " : "",
                     rf_step_phase_name((enum rf_step_phase_kind)i));
        cmd_usage_fail("measure", "--phase %s: unknown phase '%.*s' (the step's are %s)", arg,
                       (int)(eq - arg), arg, names);
        return false;
    }
    p->phase = rf_step_phase_name((enum rf_step_phase_kind)k);
    return parse_seconds("--phase", arg, eq + 1, &p->seconds);
}

/* What the run predicted for the measurement: its step where it has one, else the wire;
 * NAN when it was never simulated. */
static double predicted(const struct rf_run_view *v, const char **what)
{
    *what = v->has_step ? "step" : "wire";
    return v->has_step ? v->step.total_s : v->has_prediction ? v->predicted_s : NAN;
}

/* The run's predicted phase of that name, summed over the step's parts; NAN without a step. */
static double predicted_phase(const struct rf_run_view *v, const char *name)
{
    if (!v->has_step)
        return NAN;
    double s = 0;
    for (size_t i = 0; i < v->step.n; i++)
        if ((int)v->step.phase[i].phase == rf_step_phase_parse(name))
            s += v->step.phase[i].seconds;
    return s;
}

static json_t *real_or_null(double v)
{
    return isnan(v) ? json_null() : json_real(v);
}

static int print_json(const char *db, int64_t mid, const struct rf_log_measurement *m,
                      const struct rf_run_view *v, struct rf_error *err)
{
    const char *what;
    double pred = predicted(v, &what);
    json_t *phases = json_array();
    for (size_t i = 0; phases && i < m->n_phases; i++)
        json_array_append_new(phases,
                              json_pack("{ss sf so}", "phase", m->phases[i].phase, "seconds",
                                        m->phases[i].seconds, "predicted_s",
                                        real_or_null(predicted_phase(v, m->phases[i].phase))));
    json_t *o =
        json_pack("{sI sI so ss sf so so so so}", "measurement_id", (json_int_t)mid, "run_id",
                  (json_int_t)m->run_id, "db", rf_json_text(db), "backend", "log", "seconds",
                  m->seconds, "source", m->source ? rf_json_text(m->source) : json_null(),
                  "predicted_s", real_or_null(pred), "compared_with",
                  isnan(pred) ? json_null() : json_string(what), "phases", phases);
    /* Canonical text, as refit show writes it: reals shortest and exact (0.06). */
    char *text = o ? rf_json_canonical(o, 2) : NULL;
    json_decref(o);
    if (!text)
        return rf_error_set(err, RF_ENOMEM, "cannot build the JSON output (out of memory)");
    int rc = puts(text) < 0 ? rf_error_set(err, RF_EIO, "cannot write the JSON output") : 0;
    free(text);
    return rc;
}

static void print_text(const char *db, int64_t mid, const struct rf_log_measurement *m,
                       const struct rf_run_view *v)
{
    const char *what;
    double pred = predicted(v, &what);
    printf("measurement %lld of run %lld, from a log%s%s\n", (long long)mid, (long long)m->run_id,
           m->source ? ": " : "", m->source ? m->source : "");
    printf("  %-9s %12s %12s %8s\n", "", "measured_s", "predicted_s", "ratio");
    if (isnan(pred))
        printf("  %-9s %12.6g %12s %8s  (run %lld was not simulated)\n", "step", m->seconds, "-",
               "-", (long long)m->run_id);
    else
        printf("  %-9s %12.6g %12.6g %8.3f%s\n", what, m->seconds, pred, m->seconds / pred,
               v->has_step ? "" : "  (no framework profile: the wire)");
    for (size_t i = 0; i < m->n_phases; i++) {
        double p = predicted_phase(v, m->phases[i].phase);
        printf("  %-9s %12.6g %12.6g %8.3f\n", m->phases[i].phase, m->phases[i].seconds, p,
               p > 0 ? m->phases[i].seconds / p : NAN);
    }
    printf("stored in %s as measurement %lld\n", db, (long long)mid);
}

int cmd_measure(int argc, char **argv)
{
    static const struct option opts[] = {{"seconds", required_argument, NULL, 's'},
                                         {"phase", required_argument, NULL, 'p'},
                                         {"source", required_argument, NULL, 'S'},
                                         {"db", required_argument, NULL, 'd'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *db = "refit.db";
    struct rf_log_phase phases[RF_STEP_PHASE_COUNT * 2];
    struct rf_log_measurement m = {.seconds = NAN, .phases = phases};
    bool json = false, have_seconds = false;
    int c;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 's':
            if (!parse_seconds("--seconds", optarg, optarg, &m.seconds))
                return 2;
            have_seconds = true;
            break;
        case 'p':
            /* More than every phase twice is refused here; a phase twice by the store. */
            if (m.n_phases == sizeof(phases) / sizeof(phases[0]))
                return cmd_usage_fail(argv[0], "--phase: at most one of each phase");
            if (!parse_phase(optarg, &phases[m.n_phases]))
                return 2;
            m.n_phases++;
            break;
        case 'S': m.source = optarg; break;
        case 'd': db = optarg; break;
        case 'j': json = true; break;
        case 'h': fputs(usage, stdout); return 0;
        default: return 2; /* cmd_getopt said what is wrong */
        }
    }
    if (optind + 1 != argc)
        return cmd_usage_fail(argv[0], "measure takes one RUN");
    const char *run = argv[optind];
    char *end;
    errno = 0;
    long long id = strtoll(run, &end, 10);
    if (*run == '\0' || *end || errno == ERANGE || id < 1)
        return cmd_usage_fail(argv[0], "RUN %s: expected a run id (a positive integer)", run);
    if (!have_seconds)
        return cmd_usage_fail(argv[0], "--seconds S is required (the step's time the log printed)");
    m.run_id = id;

    struct rf_error err = {0};
    struct rf_store st;
    struct rf_run_view v;
    int64_t mid = 0;
    if (cmd_check_label("--source", m.source, &err) < 0)
        return cmd_fail(&err);
    /* The run is read first (what the measurement is compared with), so an unknown run is
     * refused before anything is written; the store writes in one transaction. */
    if (rf_store_open(&st, db, RF_STORE_EXISTING, &err) < 0)
        return cmd_fail(&err);
    int rc = rf_run_view_load(&st, m.run_id, &v, &err);
    if (rc == 0 && (rc = rf_store_log_measurement(&st, &m, &mid, &err)) < 0)
        rf_run_view_release(&v);
    rf_store_close(&st);
    if (rc < 0)
        return cmd_fail(&err);
    if (json)
        rc = print_json(db, mid, &m, &v, &err);
    else
        print_text(db, mid, &m, &v);
    rf_run_view_release(&v);
    return rc < 0 ? cmd_fail(&err) : 0;
}
