/* The HTML report: one self-contained page (inline CSS and SVG) with the tables and plots of
 * the runs of a refit database; gnuplot draws the plots. */
#ifndef RF_REPORT_H
#define RF_REPORT_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"

/* Where the report runs its tools; the command fills these from the environment. */
struct rf_report_opts {
    const char *gnuplot; /* the gnuplot to run; NULL or "": `gnuplot` on the PATH */
    const char *tmpdir;  /* where the plots are drawn; NULL or "": /tmp */
    /* How long one gnuplot run may take before it is killed; 0: RF_GNUPLOT_TIMEOUT_S. */
    double gnuplot_timeout_s;
    /* Set (to a signal number) by the command's handler: a running gnuplot is killed and
     * the report ends with an error, its temporary folder removed. NULL: never. */
    const volatile sig_atomic_t *stop;
};

/* gnuplot draws the largest plot a report holds (a study's scatter, a 1,024-link heatmap)
 * in under 2 s here; a run past 30 s is one that waits for input or hangs (a wrapper, a
 * terminal it opened), which would otherwise hang the report. */
#define RF_GNUPLOT_TIMEOUT_S 30.0

/* Writes the report of runs run_ids[0..n_runs) of the database at db_path (every run when
 * n_runs is 0) to out_path, which may not be the database or its WAL or journal. The page is
 * written beside out_path and renamed into place (rf_atomic_write_*), so a failure leaves no
 * half-written page. Plots are drawn by running opts->gnuplot in a temporary directory under
 * opts->tmpdir; without gnuplot the call fails and says which package to install. */
int rf_report_html(const char *db_path, const int64_t *run_ids, size_t n_runs, const char *out_path,
                   const struct rf_report_opts *opts, struct rf_error *err);

#endif
