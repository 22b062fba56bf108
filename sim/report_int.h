/* The report's internals, shared by the page (sim/report.c) and its gnuplot plots
 * (sim/report_plot.c). */
#ifndef RF_REPORT_INT_H
#define RF_REPORT_INT_H

#include <limits.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "error.h"
#include "report.h"

/* One run as the page shows it: the run row, its prediction and its latest good
 * measurement, when they exist. */
struct run {
    int64_t id;
    char *label, *model, *strategy, *system, *train_layout, *train_dtype, *infer_layout,
        *infer_dtype, *bottleneck, *cluster, *backend;
    int64_t nodes, train_gpus, infer_gpus, payload, moved, rounds;
    bool simulated, measured;
    double seconds, lower_bound, measured_seconds;
    int64_t fabric, nvlink, measurement_id, world_size;
    /* The step under a framework profile (schema 8), when the prediction has one. */
    bool has_step;
    double step_seconds;
    char *step_composition;
    /* A refit overlapped with generation (schema 16): the refit as the engines shared it,
     * the longest an engine stalled, and when the last had the new weights. */
    bool has_overlap;
    double overlap_refit, stall, staleness;
    /* The fastest simulated run of its scenario (lowest id on a tie): on a page of many
     * runs, the one whose heatmap is drawn and whose plots are unfolded. */
    bool fastest;
};

struct report {
    sqlite3 *db;
    const char *db_path;
    const char *gnuplot;
    double gnuplot_timeout_s;
    const volatile sig_atomic_t *stop;
    char tmp[PATH_MAX];
    int plots; /* plots drawn so far: names the files and the SVG ids */
    FILE *out;
    struct run *runs;
    size_t n_runs;
};

/* Writes s HTML-escaped. */
void report_put_esc(FILE *f, const char *s);
/* The database's last error as an RF_EDB error naming the file. */
int report_db_fail(struct report *rp, struct rf_error *err);
/* Whether run_id is one of the runs on the page. */
bool report_selected(const struct report *rp, int64_t run_id);

/* Runs gnuplot on a script in the temporary directory; its first line of complaint becomes
 * the error. */
int report_run_gnuplot(struct report *rp, const char *script, struct rf_error *err);
/* A plot's pieces (sim/report_plot.c): a label gnuplot can take inside a quoted string, the
 * data file and the script of the next plot (the script sets the SVG terminal and names the
 * data file `data`), and draw, which runs the script and inlines the SVG in a figure with
 * the caption, escaped. */
void report_gp_label(char *dst, size_t size, const char *s);
FILE *report_open_data(struct report *rp, struct rf_error *err);
int report_close_data(FILE *f, struct rf_error *err);
FILE *report_open_script(struct report *rp, int width, int height, struct rf_error *err);
int report_draw(struct report *rp, FILE *script, const char *id, const char *caption,
                struct rf_error *err);

/* A heatmap of more links than this is a band of one-pixel columns that hides the
 * bottleneck; past it the page relies on the link tables. */
#define REPORT_HEATMAP_MAX_LINKS 600

/* A timeline of more rounds draws bins of consecutive rounds, at most this many bars. */
#define REPORT_TIMELINE_BINS 100

/* Per run the links in use per kind and the ten busiest (sim/report_links.c). */
int report_link_tables(struct report *rp, const struct run *r, struct rf_error *err);

/* Whether two runs are of one scenario (model, cluster, GPUs, layouts): they differ only
 * in how the weights travel (strategy, dtype, options), which is what a reader compares. */
bool report_same_scenario(const struct run *a, const struct run *b);
/* A page of more simulated runs than this folds the per-run plots of all but the fastest
 * run of each scenario and draws the heatmaps of those only: its size stays bounded. */
#define REPORT_MANY_RUNS 8

/* The strategy comparison, one small log-axis chart per scenario (sim/report_compare.c). */
int report_plot_comparison(struct report *rp, struct rf_error *err);
/* The plots, each written into the page as an inline SVG figure (sim/report_plot.c). */
int report_plot_links(struct report *rp, const struct run *r, struct rf_error *err);
int report_plot_timeline(struct report *rp, const struct run *r, struct rf_error *err);
int report_plot_measured(struct report *rp, struct rf_error *err);
/* Each simulated run's engine stall against its refit time: a refit that stops the engines
 * on the diagonal, an overlapped one below it (sim/report_overlap.c). */
int report_plot_overlap(struct report *rp, struct rf_error *err);

/* A section per study with runs on the page: the tables its refit.table printed
 * (sim/report_study.c). */
int report_studies(struct report *rp, struct rf_error *err);
/* The nav's link to each of those sections: `study NAME` to #study-ID. */
int report_studies_nav(struct report *rp, struct rf_error *err);

#endif
