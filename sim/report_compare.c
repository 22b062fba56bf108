/* The report's strategy comparison: runs grouped by scenario (model, cluster, GPUs and
 * layouts), one small chart per group on a log axis, so a slow strategy never flattens others. */
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "describe.h"
#include "report_int.h"

bool report_same_scenario(const struct run *a, const struct run *b)
{
    return strcmp(a->model, b->model) == 0 && strcmp(a->system, b->system) == 0 &&
           a->nodes == b->nodes && a->train_gpus == b->train_gpus &&
           a->infer_gpus == b->infer_gpus && strcmp(a->train_layout, b->train_layout) == 0 &&
           strcmp(a->infer_layout, b->infer_layout) == 0;
}

/* A stored run's scenario as leaves (sim/describe.h), without what never tells two runs of
 * one chart apart as a reader thinks of them (the file or study line it came from, and the
 * cluster preset's figures, which `cluster` restates where the scenario kept them). 0 leaves
 * for a run stored before version 7 or a document that does not parse. */
static void scenario_leaves(const struct report *rp, int64_t id, struct rf_json_leaf **out,
                            size_t *n)
{
    static const char *const skip[] = {"source", "version", "cluster_preset", NULL};
    sqlite3_stmt *q = NULL;
    struct rf_error err;
    *out = NULL;
    *n = 0;
    if (sqlite3_prepare_v2(rp->db, "SELECT scenario_json FROM run WHERE id = ?", -1, &q, NULL) !=
        SQLITE_OK)
        return;
    sqlite3_bind_int64(q, 1, id);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_text(q, 0)) {
        json_t *doc = json_loads((const char *)sqlite3_column_text(q, 0), 0, NULL);
        if (doc && rf_json_leaves(doc, skip, out, n, &err) < 0) {
            *out = NULL;
            *n = 0;
        }
        json_decref(doc);
    }
    sqlite3_finalize(q);
}

/* What tells run r apart from the chart's runs that share its strategy, dtype and label: the
 * scenario fields that differ from any of them, by their last name and r's value, in path
 * order ("oversubscription=2.0 pxn=false"), at most three; empty when none differ. True
 * when one of them has the very same scenario (a study run twice): only the id tells. */
static bool scenario_difference(char *buf, size_t size, const struct report *rp,
                                const size_t *members, size_t n, size_t i)
{
    bool twin = false;
    const struct run *r = &rp->runs[members[i]];
    struct rf_json_leaf *a = NULL;
    size_t na = 0, used = 0;
    const char *shown[3];
    int n_shown = 0;
    buf[0] = '\0';
    scenario_leaves(rp, r->id, &a, &na);
    for (size_t j = 0; na > 0 && j < n; j++) {
        const struct run *o = &rp->runs[members[j]];
        if (j == i || strcmp(o->strategy, r->strategy) != 0 ||
            strcmp(o->infer_dtype, r->infer_dtype) != 0 || strcmp(o->label, r->label) != 0)
            continue;
        struct rf_json_leaf *b = NULL;
        struct rf_json_change *c = NULL;
        size_t nb = 0, nc = 0;
        struct rf_error err;
        scenario_leaves(rp, o->id, &b, &nb);
        if (nb > 0 && rf_json_diff(a, na, b, nb, &c, &nc, &err) == 0 && nc == 0)
            twin = true;
        for (size_t k = 0; k < nc && n_shown < 3; k++) {
            bool seen = false;
            for (int m = 0; m < n_shown; m++)
                seen |= strcmp(shown[m], c[k].path) == 0;
            if (seen || !c[k].a)
                continue;
            /* The path points into a, which outlives this loop. */
            for (size_t m = 0; m < na; m++)
                if (strcmp(a[m].path, c[k].path) == 0)
                    shown[n_shown++] = a[m].path;
        }
        free(c);
        rf_json_leaves_free(b, nb);
    }
    /* In path order, whichever run showed the difference first. */
    for (int m = 1; m < n_shown; m++)
        for (int k = m; k > 0 && strcmp(shown[k - 1], shown[k]) > 0; k--) {
            const char *t = shown[k];
            shown[k] = shown[k - 1];
            shown[k - 1] = t;
        }
    for (int m = 0; m < n_shown && used < size; m++) {
        const char *tail = strrchr(shown[m], '.');
        const char *value = "";
        for (size_t k = 0; k < na; k++)
            if (a[k].path == shown[m])
                value = a[k].value;
        used += (size_t)snprintf(buf + used, size - used, "%s%s=%s", m ? " " : "",
                                 tail ? tail + 1 : shown[m], value);
    }
    rf_json_leaves_free(a, na);
    return twin || na == 0;
}

/* A bar is named by its strategy; where runs of the chart share one, by what tells them
 * apart too: the inference dtype, the run's label, then the scenario fields that differ
 * (a study's sweep: "oversubscription=2.0 pxn=false"), and the run id when nothing does (or
 * when its label is empty). */
static void bar_label(char *buf, size_t size, const struct report *rp, const size_t *members,
                      size_t n, size_t i, bool singles)
{
    const struct run *r = &rp->runs[members[i]];
    if (singles) {
        snprintf(buf, size, "#%lld %s %s", (long long)r->id, r->model, r->strategy);
        return;
    }
    bool dtype = false, label = false, id = false;
    for (size_t j = 0; j < n; j++) {
        const struct run *o = &rp->runs[members[j]];
        if (j == i || strcmp(o->strategy, r->strategy) != 0)
            continue;
        bool same_dtype = strcmp(o->infer_dtype, r->infer_dtype) == 0;
        bool same_label = strcmp(o->label, r->label) == 0;
        dtype |= !same_dtype;
        label |= !same_label;
        id |= same_dtype && same_label;
    }
    char diff[160] = "";
    /* Fields that differ name the run, unless another has its very scenario. */
    if (id)
        id = scenario_difference(diff, sizeof(diff), rp, members, n, i) || !diff[0];
    id |= label && !*r->label;
    label &= *r->label != '\0';
    char sid[32];
    snprintf(sid, sizeof(sid), "#%lld", (long long)r->id);
    snprintf(buf, size, "%s%s%s%s%s%s%s%s%s", r->strategy, dtype ? " " : "",
             dtype ? r->infer_dtype : "", label ? " " : "", label ? r->label : "",
             diff[0] ? " " : "", diff, id ? " " : "", id ? sid : "");
}

/* Tics at 1, 2 and 5 of each decade within [lo, hi]: gnuplot's own log tics are decades
 * only, which leaves a chart spanning less than one with a single labelled tic. */
static void log_tics(FILE *s, double lo, double hi)
{
    static const double steps[3] = {1, 2, 5};
    fputs("set ytics (", s);
    bool first = true;
    double decade = 1;
    while (decade > lo)
        decade /= 10;
    while (decade * 10 <= lo)
        decade *= 10;
    for (; decade <= hi; decade *= 10)
        for (int k = 0; k < 3; k++) {
            double t = decade * steps[k];
            if (t < lo || t > hi)
                continue;
            fprintf(s, "%s'%g' %.9g", first ? "" : ", ", t, t);
            first = false;
        }
    fputs(")\n", s);
}

/* A title as a gnuplot single-quoted string: '' stands for a quote, and bytes outside
 * printable ASCII become '_' (gnuplot escapes the rest for the SVG). */
static void gp_title(FILE *f, const char *s)
{
    fputs("set title '", f);
    for (; *s; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s >= 0x20 && *s < 0x7f ? *s : '_', f);
    }
    fputs("'\n", f);
}

static int plot_group(struct report *rp, const size_t *members, size_t n, int number, bool singles,
                      struct rf_error *err)
{
    FILE *d = report_open_data(rp, err);
    if (!d)
        return RF_EIO;
    bool measured = false;
    double lo = 0, hi = 0;
    for (size_t i = 0; i < n; i++) {
        const struct run *r = &rp->runs[members[i]];
        char name[256], label[256];
        bar_label(name, sizeof(name), rp, members, n, i, singles);
        report_gp_label(label, sizeof(label), name);
        fprintf(d, "%zu \"%s\" %.9g %.9g ", i, label, r->seconds, r->lower_bound);
        if (r->measured)
            fprintf(d, "%.9g\n", r->measured_seconds);
        else
            fputs("?\n", d);
        measured |= r->measured;
        double vals[3] = {r->seconds, r->lower_bound, r->measured ? r->measured_seconds : 0};
        for (int k = 0; k < 3; k++) {
            if (vals[k] <= 0)
                continue;
            lo = lo == 0 || vals[k] < lo ? vals[k] : lo;
            hi = vals[k] > hi ? vals[k] : hi;
        }
    }
    int rc = report_close_data(d, err);
    if (rc < 0)
        return rc;
    if (hi <= 0)
        lo = 1e-3, hi = 1;
    /* Room for the bars and their slanted names: a chart of many runs or long names grows
     * instead of shrinking its plot to a strip. */
    size_t longest = 0;
    for (size_t i = 0; i < n; i++) {
        char name[256];
        bar_label(name, sizeof(name), rp, members, n, i, singles);
        longest = strlen(name) > longest ? strlen(name) : longest;
    }
    /* A name slanted by 25 degrees reaches right of its bar by about 0.9 of its length in
     * characters: the right margin keeps the last bars' names inside the picture (the page
     * scales a wide SVG down to its column). */
    int rmargin = (int)(0.9 * (double)longest) - 6;
    int width = 140 + 70 * (int)n + 6 * (rmargin > 0 ? rmargin : 0),
        height = 260 + 4 * (int)longest;
    FILE *s = report_open_script(rp, width < 500 ? 500 : width > 1400 ? 1400 : width, height, err);
    if (!s)
        return RF_EIO;
    const struct run *r0 = &rp->runs[members[0]];
    char title[1024];
    if (singles)
        snprintf(title, sizeof(title), "one run per scenario");
    else
        snprintf(title, sizeof(title), "%s, %s x %lld nodes, %lld to %lld GPUs", r0->model,
                 r0->system, (long long)r0->nodes, (long long)r0->train_gpus,
                 (long long)r0->infer_gpus);
    gp_title(s, title);
    /* A log axis from well under the fastest bar to over the slowest: a 200 s broadcast and
     * a 0.3 s reshard both read, and each bar carries its figure. */
    log_tics(s, lo / 2.5, hi * 2.5);
    fprintf(s,
            "set logscale y\nset yrange [%.9g:%.9g]\n"
            "set style fill solid 0.85 border -1\nset boxwidth 0.6\n"
            "set xrange [-0.6:%zu.6]\nset ylabel 'seconds (log scale)'\nset key off\n"
            "set xtics rotate by -25 nomirror\nset grid noxtics\nset rmargin %d\n"
            "plot data using 1:3:xtic(2) with boxes lc rgb '#4e79a7', \\\n"
            "  data using 1:4:(0.35) with xerrorbars pt -1 lw 3 lc rgb '#e15759', \\\n"
            "  data using 1:3:(sprintf('%%.3g', $3)) with labels offset 0,0.7",
            lo / 2.5, hi * 2.5, n - 1, rmargin > 2 ? rmargin : 2);
    if (measured)
        fputs(", \\\n  data using 1:5 with points pt 7 ps 1.4 lc rgb '#f28e2b'", s);
    fputc('\n', s);
    char id[64], caption[1024];
    snprintf(id, sizeof(id), "comparison-%d", number);
    if (singles)
        snprintf(caption, sizeof(caption),
                 "Runs that are alone in their scenario, predicted seconds on a log axis.");
    else
        snprintf(caption, sizeof(caption), "Training %s, inference %s.", r0->train_layout,
                 r0->infer_layout);
    return report_draw(rp, s, id, caption, err);
}

int report_plot_comparison(struct report *rp, struct rf_error *err)
{
    size_t *members = malloc((rp->n_runs + 1) * sizeof(*members));
    bool *done = calloc(rp->n_runs + 1, sizeof(*done));
    size_t n_singles = 0, *singles = malloc((rp->n_runs + 1) * sizeof(*singles));
    int rc = 0, number = 0;
    if (!members || !done || !singles) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    fputs("<p>Each chart is one scenario (model, cluster, GPUs, layouts); bars are predicted "
          "seconds on a log axis, the red mark the lower bound, orange dots measured "
          "times.</p>\n<div class=\"multiples\">\n",
          rp->out);
    /* Groups in the order of their first run, as the runs table lists them. */
    for (size_t i = 0; i < rp->n_runs; i++) {
        if (done[i] || !rp->runs[i].simulated)
            continue;
        size_t n = 0;
        for (size_t j = i; j < rp->n_runs; j++)
            if (!done[j] && rp->runs[j].simulated &&
                report_same_scenario(&rp->runs[i], &rp->runs[j])) {
                members[n++] = j;
                done[j] = true;
            }
        if (n == 1) {
            singles[n_singles++] = i;
            continue;
        }
        if ((rc = plot_group(rp, members, n, ++number, false, err)) < 0)
            goto out;
    }
    /* Runs alone in their scenario share one chart rather than a chart of one bar each. */
    if (n_singles > 0 && (rc = plot_group(rp, singles, n_singles, ++number, true, err)) < 0)
        goto out;
    fputs("</div>\n", rp->out);
out:
    free(members);
    free(done);
    free(singles);
    return rc;
}
