/* The HTML report (README "Reports"): reads runs, predictions, link loads, round times and
 * measurements from a refit database and writes one self-contained page; gnuplot draws
 * every plot as SVG, which is inlined. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "array.h"
#include "fileio.h"
#include "json.h"
#include "report.h"
#include "report_int.h"
#include "store.h"

static const char css[] =
    "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;"
    "padding:0 1em}\n"
    "h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\n"
    "table{border-collapse:collapse;margin:1em 0;font-size:.9em}\n"
    "th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left}\n"
    "th{background:#f3f5f8}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "figure{margin:1em 0}figure svg{max-width:100%;height:auto}\n"
    "figcaption{font-size:.85em;color:#555}\n"
    "nav a{margin-right:1em}.note{color:#666;font-style:italic}\n"
    ".wide{overflow-x:auto}table.overview{font-size:.8em}table.overview td{white-space:nowrap}\n"
    "details.more>summary{cursor:pointer;color:#336;margin:1em 0}\n"
    ".multiples{display:flex;flex-wrap:wrap;gap:0 1.5em;align-items:flex-start}\n"
    ".multiples figure{display:table;max-width:100%}"
    ".multiples figcaption{display:table-caption;caption-side:bottom}\n";

/* Writes s with every character that means something in HTML escaped, so the page shows
 * labels and paths as they are and they can never open a tag or close an attribute. */
void report_put_esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        /* The page says it is UTF-8: a byte that is not part of a valid sequence (a path in
         * another encoding) is shown as U+FFFD, so the page stays valid. */
        if ((unsigned char)*s >= 0x80) {
            size_t n = rf_utf8_seq((const unsigned char *)s, strlen(s));
            if (n == 0)
                fputs("\xEF\xBF\xBD", f);
            else
                fwrite(s, 1, n, f);
            s += n ? n - 1 : 0;
            continue;
        }
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&#39;", f); break;
        default: fputc(*s, f);
        }
    }
}

static char *col_dup(sqlite3_stmt *s, int i)
{
    const unsigned char *t = sqlite3_column_text(s, i);
    return strdup(t ? (const char *)t : "");
}

static void run_release(struct run *r)
{
    free(r->label);
    free(r->model);
    free(r->strategy);
    free(r->system);
    free(r->train_layout);
    free(r->train_dtype);
    free(r->infer_layout);
    free(r->infer_dtype);
    free(r->bottleneck);
    free(r->cluster);
    free(r->backend);
    free(r->step_composition);
}

int report_db_fail(struct report *rp, struct rf_error *err)
{
    return rf_error_set(err, RF_EDB, "%s: %s", rp->db_path, sqlite3_errmsg(rp->db));
}

static const char run_sql[] =
    "SELECT r.id, r.label, r.model, r.strategy, r.cluster_system, r.cluster_nodes,\n"
    "  r.train_gpus, r.train_layout, r.train_dtype, r.infer_gpus, r.infer_layout,\n"
    "  r.infer_dtype, r.payload_bytes, r.moved_bytes, r.rounds,\n"
    "  p.run_id IS NOT NULL, p.seconds, p.lower_bound_seconds, p.fabric_bytes,\n"
    "  p.nvlink_bytes, p.bottleneck, p.cluster,\n"
    "  m.id IS NOT NULL, m.id, m.seconds, m.backend, m.world_size,\n"
    "  p.step_seconds IS NOT NULL, p.step_seconds, p.step_composition,\n"
    "  p.stall_seconds IS NOT NULL, p.overlap_refit_seconds, p.stall_seconds,\n"
    "  p.staleness_seconds\n"
    "FROM run r LEFT JOIN prediction p ON p.run_id = r.id\n"
    "LEFT JOIN measurement m ON m.id = (SELECT max(id) FROM measurement\n"
    "  WHERE run_id = r.id AND status = 'ok' AND seconds > 0)\n"
    "WHERE ?1 IS NULL OR r.id = ?1 ORDER BY r.id";

static int add_run(struct report *rp, sqlite3_stmt *s, size_t *cap, struct rf_error *err)
{
    int rc = RF_GROW(rp->runs, *cap, rp->n_runs + 1, err);
    if (rc < 0)
        return rc;
    struct run *r = &rp->runs[rp->n_runs++];
    memset(r, 0, sizeof(*r));
    r->id = sqlite3_column_int64(s, 0);
    r->label = col_dup(s, 1);
    r->model = col_dup(s, 2);
    r->strategy = col_dup(s, 3);
    r->system = col_dup(s, 4);
    r->nodes = sqlite3_column_int64(s, 5);
    r->train_gpus = sqlite3_column_int64(s, 6);
    r->train_layout = col_dup(s, 7);
    r->train_dtype = col_dup(s, 8);
    r->infer_gpus = sqlite3_column_int64(s, 9);
    r->infer_layout = col_dup(s, 10);
    r->infer_dtype = col_dup(s, 11);
    r->payload = sqlite3_column_int64(s, 12);
    r->moved = sqlite3_column_int64(s, 13);
    r->rounds = sqlite3_column_int64(s, 14);
    r->simulated = sqlite3_column_int(s, 15) != 0;
    r->seconds = sqlite3_column_double(s, 16);
    r->lower_bound = sqlite3_column_double(s, 17);
    r->fabric = sqlite3_column_int64(s, 18);
    r->nvlink = sqlite3_column_int64(s, 19);
    r->bottleneck = col_dup(s, 20);
    r->cluster = col_dup(s, 21);
    r->measured = sqlite3_column_int(s, 22) != 0;
    r->measurement_id = sqlite3_column_int64(s, 23);
    r->measured_seconds = sqlite3_column_double(s, 24);
    r->backend = col_dup(s, 25);
    r->world_size = sqlite3_column_int64(s, 26);
    r->has_step = sqlite3_column_int(s, 27) != 0;
    r->step_seconds = sqlite3_column_double(s, 28);
    r->step_composition = col_dup(s, 29);
    r->has_overlap = sqlite3_column_int(s, 30) != 0;
    r->overlap_refit = sqlite3_column_double(s, 31);
    r->stall = sqlite3_column_double(s, 32);
    r->staleness = sqlite3_column_double(s, 33);
    if (!r->label || !r->model || !r->strategy || !r->system || !r->train_layout ||
        !r->train_dtype || !r->infer_layout || !r->infer_dtype || !r->bottleneck || !r->cluster ||
        !r->backend || !r->step_composition)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    return 0;
}

/* Reads the runs asked for (all when none), refusing an id the database does not hold. */
static int load_runs(struct report *rp, const int64_t *ids, size_t n_ids, struct rf_error *err)
{
    sqlite3_stmt *s = NULL;
    size_t cap = 0;
    int rc = 0;
    if (sqlite3_prepare_v2(rp->db, run_sql, -1, &s, NULL) != SQLITE_OK) {
        rc = report_db_fail(rp, err);
        goto out;
    }
    for (size_t i = 0; i < (n_ids ? n_ids : 1); i++) {
        sqlite3_reset(s);
        if (n_ids)
            sqlite3_bind_int64(s, 1, ids[i]);
        else
            sqlite3_bind_null(s, 1);
        size_t before = rp->n_runs;
        int step;
        while ((step = sqlite3_step(s)) == SQLITE_ROW)
            if ((rc = add_run(rp, s, &cap, err)) < 0)
                goto out;
        if (step != SQLITE_DONE) {
            rc = report_db_fail(rp, err);
            goto out;
        }
        if (n_ids && rp->n_runs == before) {
            rc = rf_error_set(err, RF_EINVAL, "%s: no run %lld", rp->db_path, (long long)ids[i]);
            goto out;
        }
    }
    if (rp->n_runs == 0)
        rc = rf_error_set(err, RF_EINVAL, "%s: no runs to report", rp->db_path);
out:
    sqlite3_finalize(s);
    return rc;
}

bool report_selected(const struct report *rp, int64_t run_id)
{
    for (size_t i = 0; i < rp->n_runs; i++)
        if (rp->runs[i].id == run_id)
            return true;
    return false;
}

static void row_text(FILE *f, const char *key, const char *value)
{
    fputs("<tr><th>", f);
    report_put_esc(f, key);
    fputs("</th><td>", f);
    report_put_esc(f, value);
    fputs("</td></tr>\n", f);
}

static void row_num(FILE *f, const char *key, const char *fmt, double v)
{
    char buf[64];
    snprintf(buf, sizeof(buf), fmt, v);
    fputs("<tr><th>", f);
    report_put_esc(f, key);
    fprintf(f, "</th><td class=\"n\">%s</td></tr>\n", buf);
}

static void side_text(char *buf, size_t size, int64_t gpus, const char *layout, const char *dtype)
{
    snprintf(buf, size, "%lld GPUs, %s, %s", (long long)gpus, layout, dtype);
}

static void summary_table(FILE *f, const struct run *r)
{
    char buf[512];
    fputs("<table class=\"summary\">\n", f);
    if (*r->label)
        row_text(f, "label", r->label);
    row_text(f, "model", r->model);
    row_text(f, "strategy", r->strategy);
    snprintf(buf, sizeof(buf), "%s x %lld nodes", r->system, (long long)r->nodes);
    row_text(f, "cluster", buf);
    side_text(buf, sizeof(buf), r->train_gpus, r->train_layout, r->train_dtype);
    row_text(f, "training", buf);
    side_text(buf, sizeof(buf), r->infer_gpus, r->infer_layout, r->infer_dtype);
    row_text(f, "inference", buf);
    row_num(f, "payload (GB)", "%.2f", (double)r->payload / 1e9);
    row_num(f, "moved (GB)", "%.2f", (double)r->moved / 1e9);
    row_num(f, "rounds", "%.0f", (double)r->rounds);
    if (r->simulated) {
        row_num(f, "fabric (GB)", "%.2f", (double)r->fabric / 1e9);
        row_num(f, "NVLink (GB)", "%.2f", (double)r->nvlink / 1e9);
        row_num(f, "predicted (s)", "%.4f", r->seconds);
        row_num(f, "lower bound (s)", "%.4f", r->lower_bound);
        row_text(f, "bottleneck", r->bottleneck);
    }
    if (r->simulated && r->has_overlap) {
        row_num(f, "refit overlapped (s)", "%.4f", r->overlap_refit);
        row_num(f, "engine stall (s)", "%.4f", r->stall);
        row_num(f, "staleness (s)", "%.4f", r->staleness);
    }
    if (r->measured) {
        row_num(f, "measured (s)", "%.4f", r->measured_seconds);
        snprintf(buf, sizeof(buf), "#%lld, %s, %lld ranks", (long long)r->measurement_id,
                 r->backend, (long long)r->world_size);
        row_text(f, "measurement", buf);
        if (r->simulated && r->seconds > 0)
            row_num(f, "measured / predicted", "%.3f", r->measured_seconds / r->seconds);
    }
    fputs("</table>\n", f);
}

/* When each phase of a simulated run moves its bytes (gather, deliver, fanout, broadcast,
 * local copies), in order of start: where the time of a strategy goes. */
static int phases_table(struct report *rp, const struct run *r, struct rf_error *err)
{
    FILE *f = rp->out;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(rp->db,
                           "SELECT phase, start_seconds, finish_seconds, bytes FROM"
                           " predicted_phase WHERE run_id = ? AND bytes > 0"
                           " ORDER BY start_seconds, phase",
                           -1, &s, NULL) != SQLITE_OK)
        return report_db_fail(rp, err);
    sqlite3_bind_int64(s, 1, r->id);
    fprintf(f,
            "<table class=\"phases\" id=\"phases-%lld\">\n<tr><th>phase</th><th>start (s)</th>"
            "<th>finish (s)</th><th>span (s)</th><th>GB</th></tr>\n",
            (long long)r->id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        double start = sqlite3_column_double(s, 1), finish = sqlite3_column_double(s, 2);
        fputs("<tr><td>", f);
        report_put_esc(f, (const char *)sqlite3_column_text(s, 0));
        fprintf(f,
                "</td><td class=\"n\">%.4f</td><td class=\"n\">%.4f</td><td class=\"n\">%.4f"
                "</td><td class=\"n\">%.2f</td></tr>\n",
                start, finish, finish - start, (double)sqlite3_column_int64(s, 3) / 1e9);
    }
    fputs("</table>\n", f);
    if (rc != SQLITE_DONE) {
        sqlite3_finalize(s);
        return report_db_fail(rp, err);
    }
    sqlite3_finalize(s);
    return 0;
}

/* The whole step under the run's framework profile (schema 8): how its phases compose into
 * its time, then each phase in the step's order with its share of the step (phases that
 * overlap have shares summing past 100%), what it moves and calls on its busiest GPU, and
 * its mechanism. */
static int step_table(struct report *rp, const struct run *r, struct rf_error *err)
{
    FILE *f = rp->out;
    sqlite3_stmt *s = NULL;
    if (sqlite3_prepare_v2(rp->db,
                           "SELECT part, phase, seconds, bytes, calls, mechanism FROM"
                           " predicted_step_phase WHERE run_id = ? ORDER BY seq",
                           -1, &s, NULL) != SQLITE_OK)
        return report_db_fail(rp, err);
    sqlite3_bind_int64(s, 1, r->id);
    fprintf(f, "<p>%.4f s: ", r->step_seconds);
    report_put_esc(f, r->step_composition);
    fprintf(f,
            "</p>\n<table class=\"step\" id=\"step-%lld\">\n<tr><th>part</th><th>phase</th>"
            "<th>seconds</th><th>share</th><th>GB</th><th>calls</th><th>mechanism</th></tr>\n",
            (long long)r->id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        double sec = sqlite3_column_double(s, 2);
        fputs("<tr><td>", f);
        report_put_esc(f, (const char *)sqlite3_column_text(s, 0));
        fputs("</td><td>", f);
        report_put_esc(f, (const char *)sqlite3_column_text(s, 1));
        fprintf(f, "</td><td class=\"n\">%.4f</td><td class=\"n\">", sec);
        if (r->step_seconds > 0)
            fprintf(f, "%.1f%%", 100 * sec / r->step_seconds);
        fprintf(f, "</td><td class=\"n\">%.2f</td><td class=\"n\">%lld</td><td>",
                (double)sqlite3_column_int64(s, 3) / 1e9, (long long)sqlite3_column_int64(s, 4));
        report_put_esc(f, (const char *)sqlite3_column_text(s, 5));
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
    sqlite3_finalize(s);
    return rc == SQLITE_DONE ? 0 : report_db_fail(rp, err);
}

static void overview_table(FILE *f, const struct report *rp)
{
    /* The step's column only when some run has a step: a page of profile-free runs is as it
     * was before schema 8. */
    bool steps = false, overlaps = false;
    for (size_t i = 0; i < rp->n_runs; i++) {
        steps |= rp->runs[i].has_step;
        overlaps |= rp->runs[i].has_overlap;
    }
    /* The figures first, then the scenario: on a narrow screen the table scrolls
     * sideways, and what is read first stays in view. */
    fputs("<table class=\"overview\">\n<tr><th>run</th><th>label</th><th>model</th>"
          "<th>strategy</th><th>predicted (s)</th><th>lower bound (s)</th><th>measured (s)</th>"
          "<th>bottleneck</th><th>cluster</th><th>GPUs (train / infer)</th>"
          "<th>dtypes (train / infer)</th><th>training layout</th><th>inference layout</th>",
          f);
    if (steps)
        fputs("<th>step (s)</th>", f);
    fputs(overlaps ? "<th>stall (s)</th><th>staleness (s)</th></tr>\n" : "</tr>\n", f);
    for (size_t i = 0; i < rp->n_runs; i++) {
        const struct run *r = &rp->runs[i];
        fprintf(f, "<tr><td><a href=\"#run-%lld\">%lld</a></td><td>", (long long)r->id,
                (long long)r->id);
        report_put_esc(f, r->label);
        fputs("</td><td>", f);
        report_put_esc(f, r->model);
        fputs("</td><td>", f);
        report_put_esc(f, r->strategy);
        if (r->simulated)
            fprintf(f, "</td><td class=\"n\">%.4f</td><td class=\"n\">%.4f", r->seconds,
                    r->lower_bound);
        else
            fputs("</td><td></td><td>", f);
        if (r->measured)
            fprintf(f, "</td><td class=\"n\">%.4f", r->measured_seconds);
        else
            fputs("</td><td>", f);
        fputs("</td><td>", f);
        report_put_esc(f, r->simulated ? r->bottleneck : "");
        fputs("</td><td>", f);
        report_put_esc(f, r->system);
        fprintf(f, " x %lld</td><td class=\"n\">%lld / %lld</td><td>", (long long)r->nodes,
                (long long)r->train_gpus, (long long)r->infer_gpus);
        report_put_esc(f, r->train_dtype);
        fputs(" / ", f);
        report_put_esc(f, r->infer_dtype);
        fputs("</td><td>", f);
        report_put_esc(f, r->train_layout);
        fputs("</td><td>", f);
        report_put_esc(f, r->infer_layout);
        if (steps && r->has_step)
            fprintf(f, "</td><td class=\"n\">%.4f", r->step_seconds);
        else if (steps)
            fputs("</td><td>", f);
        if (overlaps && r->has_overlap)
            fprintf(f, "</td><td class=\"n\">%.4f</td><td class=\"n\">%.4f", r->stall,
                    r->staleness);
        else if (overlaps)
            fputs("</td><td></td><td>", f);
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
}

/* Marks the fastest simulated run of each scenario (the first on a tie). */
static void mark_fastest(struct report *rp)
{
    for (size_t i = 0; i < rp->n_runs; i++) {
        struct run *r = &rp->runs[i];
        r->fastest = r->simulated;
        for (size_t j = 0; j < rp->n_runs && r->fastest; j++) {
            const struct run *o = &rp->runs[j];
            if (j != i && o->simulated && report_same_scenario(r, o) &&
                (o->seconds < r->seconds || (o->seconds == r->seconds && j < i)))
                r->fastest = false;
        }
    }
}

static int write_page(struct report *rp, struct rf_error *err)
{
    FILE *f = rp->out;
    size_t simulated = 0, measured = 0;
    int rc = 0;
    for (size_t i = 0; i < rp->n_runs; i++) {
        simulated += rp->runs[i].simulated;
        measured += rp->runs[i].measured;
    }
    char when[64] = "";
    time_t now = time(NULL);
    struct tm tm;
    if (gmtime_r(&now, &tm))
        strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm);
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<title>refit report: ",
          f);
    report_put_esc(f, rp->db_path);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>refit report</h1>\n<p>", css);
    fprintf(f, "%zu run%s of <code>", rp->n_runs, rp->n_runs == 1 ? "" : "s");
    report_put_esc(f, rp->db_path);
    fprintf(f,
            "</code>, %zu simulated, %zu measured; written %s.</p>\n<nav>"
            "<a href=\"#runs\">runs</a>",
            simulated, measured, when);
    if (simulated > 1)
        fputs("<a href=\"#comparison\">strategy comparison</a>", f);
    if (measured > 0)
        fputs("<a href=\"#predicted-vs-measured\">predicted vs measured</a>", f);
    if ((rc = report_studies_nav(rp, err)) < 0)
        return rc;
    fputs("</nav>\n", f);
    if ((rc = report_studies(rp, err)) < 0)
        return rc;
    fputs("<section id=\"runs\">\n<h2>Runs</h2>\n<div class=\"wide\">\n", f);
    overview_table(f, rp);
    fputs("</div>\n</section>\n", f);
    if (simulated > 1) {
        fputs("<section id=\"comparison\">\n<h2>Strategy comparison</h2>\n", f);
        if ((rc = report_plot_comparison(rp, err)) < 0)
            return rc;
        fputs("</section>\n", f);
    }
    bool overlaps = false;
    for (size_t i = 0; i < rp->n_runs; i++)
        overlaps |= rp->runs[i].has_overlap;
    if (overlaps) {
        fputs("<section id=\"stall\">\n<h2>Engine stall against refit time</h2>\n", f);
        if ((rc = report_plot_overlap(rp, err)) < 0)
            return rc;
        fputs("</section>\n", f);
    }
    if (measured > 0) {
        fputs("<section id=\"predicted-vs-measured\">\n<h2>Predicted vs measured</h2>\n", f);
        if ((rc = report_plot_measured(rp, err)) < 0)
            return rc;
        fputs("</section>\n", f);
    }
    mark_fastest(rp);
    bool many = simulated > REPORT_MANY_RUNS;
    for (size_t i = 0; i < rp->n_runs; i++) {
        const struct run *r = &rp->runs[i];
        fprintf(f, "<section class=\"run\" id=\"run-%lld\">\n<h2>Run %lld: ", (long long)r->id,
                (long long)r->id);
        report_put_esc(f, r->model);
        fputs(", ", f);
        report_put_esc(f, r->strategy);
        fputs("</h2>\n", f);
        summary_table(f, r);
        if (r->simulated) {
            fputs("<h3>Phases</h3>\n", f);
            if ((rc = phases_table(rp, r, err)) < 0)
                return rc;
            if (r->has_step) {
                fputs("<h3>Step phases</h3>\n", f);
                if ((rc = step_table(rp, r, err)) < 0)
                    return rc;
            }
            /* On a page of many runs only the fastest of each scenario shows its links and
             * rounds unfolded, with a heatmap; the others keep their tables and timeline
             * folded, which a click opens. */
            if (many)
                fprintf(f, "<details class=\"more\"%s><summary>Links and rounds%s</summary>\n",
                        r->fastest ? " open" : "",
                        r->fastest ? " (the fastest run of its scenario)" : "");
            fputs("<h3>Link utilisation</h3>\n", f);
            if ((rc = report_link_tables(rp, r, err)) < 0)
                return rc;
            if (!many || r->fastest) {
                if ((rc = report_plot_links(rp, r, err)) < 0)
                    return rc;
            } else {
                fprintf(f,
                        "<p class=\"note\" id=\"heatmap-%lld\">No heatmap: on a page of more "
                        "than %d runs only the fastest run of each scenario has one; "
                        "<code>refit report --run %lld</code> draws it.</p>\n",
                        (long long)r->id, REPORT_MANY_RUNS, (long long)r->id);
            }
            fputs("<h3>Round timeline</h3>\n", f);
            if ((rc = report_plot_timeline(rp, r, err)) < 0)
                return rc;
            if (many)
                fputs("</details>\n", f);
        } else {
            fputs("<p class=\"note\">Not simulated: run <code>refit sim</code> for link and "
                  "round plots.</p>\n",
                  f);
        }
        fputs("</section>\n", f);
    }
    fputs("</body>\n</html>\n", f);
    return 0;
}

/* Empties and removes the temporary directory (only files this report wrote are in it). */
static void remove_tmp(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[PATH_MAX + 256];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
            unlink(path);
        }
    closedir(d);
    rmdir(dir);
}

int rf_report_html(const char *db_path, const int64_t *run_ids, size_t n_runs, const char *out_path,
                   const struct rf_report_opts *opts, struct rf_error *err)
{
    struct report rp = {.db_path = db_path};
    struct rf_store st = {0};
    struct rf_atomic_file page = {0};
    bool have_tmp = false;
    int rc = 0;

    const char *gp = opts->gnuplot;
    rp.gnuplot = gp && *gp ? gp : "gnuplot";
    rp.gnuplot_timeout_s =
        opts->gnuplot_timeout_s > 0 ? opts->gnuplot_timeout_s : RF_GNUPLOT_TIMEOUT_S;
    rp.stop = opts->stop;
    if (access(db_path, R_OK) != 0) {
        rc = rf_error_set(err, RF_EIO, "%s: %s", db_path, strerror(errno));
        goto out;
    }
    /* The page replaces OUT: OUT must not be the database (nor its WAL or journal). */
    if ((rc = rf_check_output(out_path, db_path, err)) < 0)
        goto out;
    if ((rc = rf_store_open(&st, db_path, RF_STORE_READONLY, err)) < 0)
        goto out;
    rp.db = st.db;
    if ((rc = load_runs(&rp, run_ids, n_runs, err)) < 0)
        goto out;

    const char *tmpdir = opts->tmpdir;
    snprintf(rp.tmp, sizeof(rp.tmp), "%s/refit-report.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
    if (!mkdtemp(rp.tmp)) {
        rc = rf_error_set(err, RF_EIO, "%s: %s", rp.tmp, strerror(errno));
        goto out;
    }
    have_tmp = true;
    /* Before anything is written: gnuplot is there and has the SVG terminal. */
    char check[PATH_MAX + 16];
    snprintf(check, sizeof(check), "%s/check.gp", rp.tmp);
    FILE *c = fopen(check, "w");
    if (!c || fputs("set terminal svg\n", c) < 0 || fclose(c) != 0) {
        rc = rf_error_set(err, RF_EIO, "%s: cannot write", check);
        goto out;
    }
    if ((rc = report_run_gnuplot(&rp, check, err)) < 0)
        goto out;

    /* Written beside OUT and renamed over it once complete: a failure leaves OUT as it
     * was and no temporary file. */
    if ((rc = rf_atomic_write_begin(&page, out_path, err)) < 0)
        goto out;
    rp.out = page.f;
    if ((rc = write_page(&rp, err)) < 0)
        goto out;
    rp.out = NULL;
    if ((rc = rf_atomic_write_commit(&page, err)) < 0)
        goto out;
out:
    rf_atomic_write_abort(&page);
    if (have_tmp)
        remove_tmp(rp.tmp);
    for (size_t i = 0; i < rp.n_runs; i++)
        run_release(&rp.runs[i]);
    free(rp.runs);
    if (st.db)
        rf_store_close(&st);
    return rc;
}
