/* The report's link tables: per run the busiest links and a summary per link kind, which
 * name the bottleneck where a heatmap of thousands of links cannot. */
#include <sqlite3.h>
#include <stdio.h>

#include "report_int.h"

/* Writes the rows of q (already bound) as table cells: text columns escaped, the others
 * with the formats in fmt ('s' text, 'i' integer, 'g' GB of a byte count, 'f' %.6f,
 * 'u' %.3f). */
static int put_rows(struct report *rp, sqlite3_stmt *q, const char *fmt, struct rf_error *err)
{
    FILE *f = rp->out;
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        fputs("<tr>", f);
        for (int i = 0; fmt[i]; i++) {
            switch (fmt[i]) {
            case 's':
                fputs("<td>", f);
                report_put_esc(f, (const char *)sqlite3_column_text(q, i));
                break;
            case 'i':
                fprintf(f, "<td class=\"n\">%lld", (long long)sqlite3_column_int64(q, i));
                break;
            case 'g': fprintf(f, "<td class=\"n\">%.4f", sqlite3_column_double(q, i) / 1e9); break;
            case 'f': fprintf(f, "<td class=\"n\">%.6f", sqlite3_column_double(q, i)); break;
            default: fprintf(f, "<td class=\"n\">%.3f", sqlite3_column_double(q, i)); break;
            }
            fputs("</td>", f);
        }
        fputs("</tr>\n", f);
    }
    fputs("</table>\n", f);
    return step == SQLITE_DONE ? 0 : report_db_fail(rp, err);
}

static int table(struct report *rp, const struct run *r, const char *sql, const char *head,
                 const char *id, const char *fmt, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(rp->db, sql, -1, &q, NULL) != SQLITE_OK)
        return report_db_fail(rp, err);
    sqlite3_bind_int64(q, 1, r->id);
    fprintf(rp->out, "<table class=\"links\" id=\"%s-%lld\">\n<tr>%s</tr>\n", id, (long long)r->id,
            head);
    int rc = put_rows(rp, q, fmt, err);
    sqlite3_finalize(q);
    return rc;
}

int report_link_tables(struct report *rp, const struct run *r, struct rf_error *err)
{
    /* Links that carried nothing have no row: the counts are of links in use. */
    int rc = table(rp, r,
                   "SELECT kind, count(*), sum(bytes), max(busy_seconds), max(utilization),"
                   " avg(utilization) FROM link_load WHERE run_id = ?1 GROUP BY kind"
                   " ORDER BY min(link_id)",
                   "<th>kind</th><th>links used</th><th>GB</th><th>max busy (s)</th>"
                   "<th>max utilisation</th><th>mean utilisation</th>",
                   "link-kinds", "sigfuu", err);
    if (rc < 0)
        return rc;
    fputs(
        "<p>The ten links busy longest (the run's bottleneck is the first or ties with it):</p>\n",
        rp->out);
    return table(rp, r,
                 "SELECT name, kind, bytes, busy_seconds, utilization FROM link_load"
                 " WHERE run_id = ?1 ORDER BY busy_seconds DESC, link_id LIMIT 10",
                 "<th>link</th><th>kind</th><th>GB</th><th>busy (s)</th><th>utilisation</th>",
                 "link-top", "ssgfu", err);
}
