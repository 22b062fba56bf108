/* The report's studies (README "Studies"): for each study with runs on the page, the tables
 * its refit.table printed (schema 10: study, study_table), at the top of the page, and the
 * nav's link to them. */
#include <jansson.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "report_int.h"

/* A cell as refit.table aligns it (models/lib/study.lua): numbers right, text left. */
static bool numeric(const char *s)
{
    return *s && strspn(s, "-0123456789.,e+") == strlen(s);
}

/* Whether any run of study id is on the page. */
static int study_on_page(struct report *rp, sqlite3_stmt *runs, int64_t id, bool *on,
                         struct rf_error *err)
{
    int step;
    *on = false;
    sqlite3_bind_int64(runs, 1, id);
    while (!*on && (step = sqlite3_step(runs)) == SQLITE_ROW)
        *on = report_selected(rp, sqlite3_column_int64(runs, 0));
    bool failed = !*on && step != SQLITE_DONE;
    sqlite3_reset(runs);
    return failed ? report_db_fail(rp, err) : 0;
}

/* cells: a JSON array of strings as one table row, each escaped; th for a header. */
static void put_row(FILE *f, const json_t *cells, bool header)
{
    size_t i;
    const json_t *c;
    fputs("<tr>", f);
    json_array_foreach(cells, i, c)
    {
        const char *s = json_is_string(c) ? json_string_value(c) : "";
        fputs(header ? "<th>" : numeric(s) ? "<td class=\"n\">" : "<td>", f);
        report_put_esc(f, s);
        fputs(header ? "</th>" : "</td>", f);
    }
    fputs("</tr>\n", f);
}

/* One stored table: its title as the caption, its headers, its rows. A row that is not the
 * JSON refit wrote (a file edited by hand) is an error naming the table. */
static int put_table(struct report *rp, sqlite3_stmt *t, int64_t study, struct rf_error *err)
{
    FILE *f = rp->out;
    int64_t ordinal = sqlite3_column_int64(t, 0);
    const char *title = (const char *)sqlite3_column_text(t, 1);
    json_t *cols = json_loads((const char *)sqlite3_column_text(t, 2), 0, NULL);
    json_t *rows = json_loads((const char *)sqlite3_column_text(t, 3), 0, NULL);
    int rc = 0;
    if (!json_is_array(cols) || !json_is_array(rows)) {
        rc = rf_error_set(err, RF_EDB,
                          "%s: study_table (study_id %lld, ordinal %lld): columns_json and "
                          "rows_json must be JSON arrays (as refit run writes them)",
                          rp->db_path, (long long)study, (long long)ordinal);
        goto out;
    }
    fputs("<table class=\"study-table\">\n", f);
    if (title) {
        fputs("<caption>", f);
        report_put_esc(f, title);
        fputs("</caption>\n", f);
    }
    put_row(f, cols, true);
    size_t i;
    const json_t *row;
    json_array_foreach(rows, i, row)
    {
        if (json_is_array(row))
            put_row(f, row, false);
    }
    fputs("</table>\n", f);
out:
    json_decref(cols);
    json_decref(rows);
    return rc;
}

/* A study's section: its name, path and start, then its tables in order. */
static int put_study(struct report *rp, sqlite3_stmt *studies, sqlite3_stmt *tables,
                     struct rf_error *err)
{
    FILE *f = rp->out;
    int64_t id = sqlite3_column_int64(studies, 0);
    int rc = 0, step;
    fprintf(f, "<section class=\"study\" id=\"study-%lld\">\n<h2>Study ", (long long)id);
    report_put_esc(f, (const char *)sqlite3_column_text(studies, 1));
    fputs("</h2>\n<p><code>", f);
    report_put_esc(f, (const char *)sqlite3_column_text(studies, 2));
    fputs("</code>, started ", f);
    report_put_esc(f, (const char *)sqlite3_column_text(studies, 3));
    fputs(".</p>\n", f);
    sqlite3_bind_int64(tables, 1, id);
    int n = 0;
    while ((step = sqlite3_step(tables)) == SQLITE_ROW) {
        n++;
        if ((rc = put_table(rp, tables, id, err)) < 0)
            break;
    }
    sqlite3_reset(tables);
    if (rc == 0 && step != SQLITE_DONE)
        rc = report_db_fail(rp, err);
    if (rc == 0 && n == 0)
        fputs("<p class=\"note\">The study stored no refit.table.</p>\n", f);
    if (rc == 0)
        fputs("</section>\n", f);
    return rc;
}

/* Each study with runs on the page, in id order: its section, or with nav its link in the
 * page's nav, so that the two always name the same studies. */
static int walk_studies(struct report *rp, bool nav, struct rf_error *err)
{
    sqlite3_stmt *studies = NULL, *runs = NULL, *tables = NULL;
    FILE *f = rp->out;
    int rc = 0, step;
    if (sqlite3_prepare_v2(rp->db, "SELECT id, name, path, started_at FROM study ORDER BY id", -1,
                           &studies, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(rp->db, "SELECT id FROM run WHERE study_id = ? ORDER BY id", -1, &runs,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(rp->db,
                           "SELECT ordinal, title, columns_json, rows_json FROM study_table"
                           " WHERE study_id = ? ORDER BY ordinal",
                           -1, &tables, NULL) != SQLITE_OK) {
        rc = report_db_fail(rp, err);
        goto out;
    }
    while ((step = sqlite3_step(studies)) == SQLITE_ROW) {
        int64_t id = sqlite3_column_int64(studies, 0);
        bool on;
        if ((rc = study_on_page(rp, runs, id, &on, err)) < 0)
            goto out;
        if (!on)
            continue;
        if (nav) {
            fprintf(f, "<a href=\"#study-%lld\">study ", (long long)id);
            report_put_esc(f, (const char *)sqlite3_column_text(studies, 1));
            fputs("</a>", f);
        } else if ((rc = put_study(rp, studies, tables, err)) < 0) {
            goto out;
        }
    }
    if (step != SQLITE_DONE)
        rc = report_db_fail(rp, err);
out:
    sqlite3_finalize(studies);
    sqlite3_finalize(runs);
    sqlite3_finalize(tables);
    return rc;
}

int report_studies(struct report *rp, struct rf_error *err)
{
    return walk_studies(rp, false, err);
}

int report_studies_nav(struct report *rp, struct rf_error *err)
{
    return walk_studies(rp, true, err);
}
