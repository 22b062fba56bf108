/* `refit report`: one self-contained HTML page of the stored runs. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd.h"
#include "report.h"
#include "store.h"

static const char usage_report[] =
    "usage: refit report --db FILE [--run ID ...] --html OUT\n"
    "\n"
    "Writes one self-contained HTML page (inline CSS and SVG) about the runs of FILE: a table\n"
    "per run, the strategy comparison, per-link utilisation and per-round timelines of\n"
    "simulated runs, and predicted against measured times where refit-exec stored\n"
    "measurements. The plots are drawn by gnuplot (Debian package gnuplot-nox;\n"
    "$REFIT_GNUPLOT names another binary); one that draws no plot in 30 s\n"
    "($REFIT_GNUPLOT_TIMEOUT seconds) is killed and the report fails.\n"
    "  --run ID       report this run (repeatable; default every run)\n"
    "  --html OUT     the page to write\n";

/* The signal that asked the report to stop (0: none): the report kills gnuplot, removes
 * its temporary folder and returns, and the command then dies of the same signal. */
static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
    stop_signal = sig;
}

int cmd_report(int argc, char **argv)
{
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"run", required_argument, NULL, 'r'},
                                         {"html", required_argument, NULL, 'o'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *db = NULL, *html = NULL;
    int64_t *ids = NULL;
    size_t n_ids = 0;
    int rc = 2, c;
    struct rf_error err = {0};
    if (!(ids = malloc((size_t)argc * sizeof(*ids)))) {
        fputs("refit: out of memory\n", stderr);
        return 1;
    }
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 'o': html = optarg; break;
        case 'r': {
            char *end;
            errno = 0;
            long long id = strtoll(optarg, &end, 10);
            if (errno || end == optarg || *end || id <= 0) {
                rc = cmd_usage_fail("report", "--run %s: not a run id", optarg);
                goto out;
            }
            ids[n_ids++] = id;
            break;
        }
        case 'h':
            fputs(usage_report, stdout);
            rc = 0;
            goto out;
        default: goto out;
        }
    }
    if (optind != argc) {
        rc = cmd_usage_fail("report", "report takes no argument '%s'", argv[optind]);
        goto out;
    }
    if (!db || !html) {
        rc = cmd_usage_fail("report", "report needs --db FILE and --html OUT");
        goto out;
    }
    /* The library reads no environment: the tools' places are the command's to pass. */
    struct rf_report_opts ropts = {
        .gnuplot = getenv("REFIT_GNUPLOT"), .tmpdir = getenv("TMPDIR"), .stop = &stop_signal};
    const char *limit = getenv("REFIT_GNUPLOT_TIMEOUT");
    if (limit && *limit) {
        char *end;
        errno = 0;
        double v = strtod(limit, &end);
        if (errno || *end || !(v > 0 && v <= 86400)) {
            fprintf(stderr,
                    "refit: REFIT_GNUPLOT_TIMEOUT=%s: expected seconds, above 0 and "
                    "at most 86400\n",
                    limit);
            rc = 2;
            goto out;
        }
        ropts.gnuplot_timeout_s = v;
    }
    /* No SA_RESTART: a signal also ends the wait it interrupts. A signal the caller ignores
     * (nohup, a script's background job) stays ignored. */
    struct sigaction sa = {.sa_handler = on_signal}, old[3];
    static const int sigs[3] = {SIGINT, SIGTERM, SIGHUP};
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 3; i++)
        if (sigaction(sigs[i], NULL, &old[i]) == 0 && old[i].sa_handler != SIG_IGN)
            sigaction(sigs[i], &sa, NULL);
    int made = rf_report_html(db, ids, n_ids, html, &ropts, &err);
    for (int i = 0; i < 3; i++)
        sigaction(sigs[i], &old[i], NULL);
    if (stop_signal) {
        /* Everything is cleaned up: die as the signal asked, as an uncaught one would. */
        fprintf(stderr, "refit: report: %s\n", made < 0 ? err.msg : "stopped");
        raise(stop_signal);
        rc = 128 + stop_signal;
        goto out;
    }
    if (made < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    printf("wrote %s\n", html);
    rc = 0;
out:
    free(ids);
    return rc;
}
