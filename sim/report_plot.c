/* The report's plots: data files and gnuplot scripts in the report's temporary directory,
 * run by gnuplot, the SVG inlined into the page. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "array.h"
#include "report_int.h"

extern char **environ;

/* A label gnuplot can take inside a double-quoted string of a data file: characters that
 * could end the string or mean something to gnuplot become '_'. */
void report_gp_label(char *dst, size_t size, const char *s)
{
    size_t i = 0;
    for (; s && *s && i + 1 < size; s++)
        dst[i++] = (strchr(" ._:+-#/=", *s) || (*s >= '0' && *s <= '9') ||
                    (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z'))
                       ? *s
                       : '_';
    dst[i] = '\0';
}

/* A path as a gnuplot single-quoted string, in which '' stands for a quote. */
static void gp_path(FILE *f, const char *path)
{
    fputc('\'', f);
    for (; *path; path++) {
        if (*path == '\'')
            fputc('\'', f);
        fputc(*path, f);
    }
    fputc('\'', f);
}

/* Waits for gnuplot (pid, its own process group) until it exits, its time is up or the
 * command is told to stop; in the last two cases the group is killed (a wrapper script's
 * children with it) and reaped. Returns 0 with its status, or the error. */
static int wait_gnuplot(struct report *rp, pid_t pid, const char *script, int *status,
                        struct rf_error *err)
{
    struct timespec t0, now, nap = {0, 1000000};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        pid_t w = waitpid(pid, status, WNOHANG);
        if (w == pid)
            return 0;
        if (w < 0 && errno != EINTR)
            return rf_error_set(err, RF_EIO, "waiting for gnuplot: %s", strerror(errno));
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited = (double)(now.tv_sec - t0.tv_sec) + (double)(now.tv_nsec - t0.tv_nsec) / 1e9;
        bool stop = rp->stop && *rp->stop;
        if (stop || waited > rp->gnuplot_timeout_s) {
            kill(-pid, SIGKILL);
            kill(pid, SIGKILL);
            while (waitpid(pid, status, 0) < 0 && errno == EINTR)
                ;
            if (stop)
                return rf_error_set(err, RF_EIO, "interrupted while gnuplot drew %s", script);
            return rf_error_set(err, RF_EIO,
                                "%s: no answer after %g s on %s, killed (a gnuplot that waits "
                                "for input or hangs; $REFIT_GNUPLOT names the binary, "
                                "$REFIT_GNUPLOT_TIMEOUT its seconds)",
                                rp->gnuplot, rp->gnuplot_timeout_s, script);
        }
        /* Polled from 1 ms up to 20 ms: a quick plot is not held up, a slow one costs
         * little. */
        nanosleep(&nap, NULL);
        if (nap.tv_nsec < 20000000)
            nap.tv_nsec *= 2;
    }
}

/* Runs gnuplot on a script in the temporary directory; its messages go to a file there and
 * the first line of them into the error. It runs in a process group of its own, bounded by
 * the report's timeout. */
int report_run_gnuplot(struct report *rp, const char *script, struct rf_error *err)
{
    char errpath[PATH_MAX + 16], line[512] = "";
    if (rp->stop && *rp->stop)
        return rf_error_set(err, RF_EIO, "interrupted before gnuplot drew %s", script);
    snprintf(errpath, sizeof(errpath), "%s/gnuplot.err", rp->tmp);
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    if (posix_spawnattr_init(&attr) != 0) {
        posix_spawn_file_actions_destroy(&fa);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    char *argv[] = {(char *)rp->gnuplot, (char *)script, NULL};
    pid_t pid;
    int e = posix_spawnp(&pid, rp->gnuplot, &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    int status = 0, rc;
    if (e == 0 && (rc = wait_gnuplot(rp, pid, script, &status, err)) < 0)
        return rc;
    /* A shell-less spawn reports a missing program either as ENOENT or as exit status 127. */
    if (e == ENOENT || (e == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 127))
        return rf_error_set(err, RF_EINVAL,
                            "%s: not found; the report's plots need gnuplot (Debian package "
                            "gnuplot-nox)",
                            rp->gnuplot);
    if (e != 0)
        return rf_error_set(err, RF_EIO, "cannot run %s: %s", rp->gnuplot, strerror(e));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        FILE *f = fopen(errpath, "r");
        if (f) {
            /* gnuplot echoes the offending line first; the message is on a later one. */
            char buf[512];
            while (fgets(buf, sizeof(buf), f))
                if (strstr(buf, "line ") || !*line)
                    snprintf(line, sizeof(line), "%s", buf);
            fclose(f);
        }
        line[strcspn(line, "\n")] = '\0';
        return rf_error_set(err, RF_EIO, "gnuplot failed on %s: %s", script, line);
    }
    return 0;
}

/* The files of plot number k: data, script, SVG. */
static void plot_path(const struct report *rp, char *buf, size_t size, const char *ext)
{
    snprintf(buf, size, "%s/p%d.%s", rp->tmp, rp->plots, ext);
}

FILE *report_open_data(struct report *rp, struct rf_error *err)
{
    char path[PATH_MAX + 16];
    plot_path(rp, path, sizeof(path), "dat");
    FILE *f = fopen(path, "w");
    if (!f)
        rf_error_set(err, RF_EIO, "%s: %s", path, strerror(errno));
    return f;
}

/* Opens the plot's script with the SVG terminal and output set and the data file named
 * `data` for the plot commands. */
FILE *report_open_script(struct report *rp, int width, int height, struct rf_error *err)
{
    char path[PATH_MAX + 16];
    plot_path(rp, path, sizeof(path), "gp");
    FILE *f = fopen(path, "w");
    if (!f) {
        rf_error_set(err, RF_EIO, "%s: %s", path, strerror(errno));
        return NULL;
    }
    fprintf(f, "set terminal svg size %d,%d noenhanced font 'sans,11' background '#ffffff'\n",
            width, height);
    plot_path(rp, path, sizeof(path), "svg");
    fputs("set output ", f);
    gp_path(f, path);
    plot_path(rp, path, sizeof(path), "dat");
    fputs("\ndata = ", f);
    gp_path(f, path);
    fputs("\nset datafile missing '?'\nset grid front lc rgb '#dddddd'\n", f);
    return f;
}

/* Closes the script, runs gnuplot and copies the SVG into the page inside a figure. The
 * XML prolog is left out (the page is HTML), and the ids gnuplot gives every plot the same
 * are made unique to the plot. */
int report_draw(struct report *rp, FILE *script, const char *id, const char *caption,
                struct rf_error *err)
{
    char path[PATH_MAX + 16];
    char *svg = NULL;
    FILE *f = NULL;
    int rc = 0;
    bool bad = ferror(script) != 0;
    if (fclose(script) != 0 || bad) {
        rc = rf_error_set(err, RF_EIO, "%s: cannot write the plot script", rp->tmp);
        goto out;
    }
    plot_path(rp, path, sizeof(path), "gp");
    if ((rc = report_run_gnuplot(rp, path, err)) < 0)
        goto out;
    plot_path(rp, path, sizeof(path), "svg");
    if (!(f = fopen(path, "r"))) {
        rc = rf_error_set(err, RF_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    size_t len = 0, cap = 0, got;
    do {
        /* Room for a 4 KiB read and the terminating NUL; reads fill what is free. */
        if ((rc = RF_GROW(svg, cap, len + 4096 + 1, err)) < 0)
            goto out;
        got = fread(svg + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
    if (ferror(f)) {
        rc = rf_error_set(err, RF_EIO, "%s: cannot read", path);
        goto out;
    }
    svg[len] = '\0';
    const char *p = strstr(svg, "<svg");
    if (!p) {
        rc = rf_error_set(err, RF_EIO, "%s: gnuplot wrote no SVG", path);
        goto out;
    }
    fprintf(rp->out, "<figure class=\"plot\" id=\"%s\">\n", id);
    static const char gid[] = "id=\"gnuplot_";
    for (const char *q; (q = strstr(p, gid)); p = q + sizeof(gid) - 1) {
        fwrite(p, 1, (size_t)(q - p), rp->out);
        fprintf(rp->out, "id=\"%s-gnuplot_", id);
    }
    fputs(p, rp->out);
    fputs("<figcaption>", rp->out);
    report_put_esc(rp->out, caption);
    fputs("</figcaption>\n</figure>\n", rp->out);
out:
    if (f)
        fclose(f);
    free(svg);
    rp->plots++;
    return rc;
}

int report_close_data(FILE *f, struct rf_error *err)
{
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return rf_error_set(err, RF_EIO, "cannot write a plot's data");
    return 0;
}

static int count_links(struct report *rp, const struct run *r, int64_t *n, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(rp->db, "SELECT count(*) FROM link_load WHERE run_id = ?", -1, &q,
                           NULL) != SQLITE_OK)
        return report_db_fail(rp, err);
    sqlite3_bind_int64(q, 1, r->id);
    int step = sqlite3_step(q);
    *n = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return step == SQLITE_ROW ? 0 : report_db_fail(rp, err);
}

/* Heatmap of a run's links: one row per link kind (in link order), one column per link of
 * that kind (the GPU, NIC or leaf it belongs to), colour = utilisation. */
int report_plot_links(struct report *rp, const struct run *r, struct rf_error *err)
{
    enum { MAX_KINDS = 16 };
    char kinds[MAX_KINDS][32];
    int n_kinds = 0;
    int64_t max_x = 0;
    double max_u = 1.0;
    sqlite3_stmt *q = NULL;
    FILE *d = NULL, *s = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(rp->db,
                           /* Idle links have no row: the column comes from the endpoints
                            * (GPU; node and NIC; rail and leaf group), not the row's rank. */
                           "SELECT kind, CASE WHEN kind IN ('nic_out', 'nic_in') THEN endpoint_a"
                           " * (SELECT max(endpoint_b) + 1 FROM link_load WHERE run_id = ?1 AND"
                           " kind IN ('nic_out', 'nic_in')) + endpoint_b"
                           " WHEN kind IN ('leaf_up', 'leaf_down') THEN endpoint_b"
                           " * (SELECT max(endpoint_a) + 1 FROM link_load WHERE run_id = ?1 AND"
                           " kind IN ('leaf_up', 'leaf_down')) + endpoint_a ELSE endpoint_a END,"
                           " utilization FROM link_load WHERE run_id = ?1 ORDER BY link_id",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = report_db_fail(rp, err);
        goto out;
    }
    sqlite3_bind_int64(q, 1, r->id);
    int64_t links = 0;
    if ((rc = count_links(rp, r, &links, err)) < 0)
        goto out;
    if (links > REPORT_HEATMAP_MAX_LINKS) {
        fprintf(rp->out,
                "<p class=\"note\" id=\"heatmap-%lld\">No heatmap: %lld links in use, past the "
                "%d a heatmap shows legibly; the tables above name the busiest.</p>\n",
                (long long)r->id, (long long)links, REPORT_HEATMAP_MAX_LINKS);
        goto out;
    }
    if (!(d = report_open_data(rp, err))) {
        rc = RF_EIO;
        goto out;
    }
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        char kind[32];
        report_gp_label(kind, sizeof(kind), (const char *)sqlite3_column_text(q, 0));
        int y = 0;
        while (y < n_kinds && strcmp(kinds[y], kind) != 0)
            y++;
        if (y == n_kinds) {
            if (n_kinds == MAX_KINDS)
                continue;
            snprintf(kinds[n_kinds++], sizeof(kinds[0]), "%s", kind);
        }
        int64_t x = sqlite3_column_int64(q, 1);
        double u = sqlite3_column_double(q, 2);
        max_x = x > max_x ? x : max_x;
        max_u = u > max_u ? u : max_u;
        fprintf(d, "%lld %d %.6g\n", (long long)x, y, u);
    }
    if (step != SQLITE_DONE) {
        rc = report_db_fail(rp, err);
        goto out;
    }
    rc = report_close_data(d, err);
    d = NULL;
    if (rc < 0)
        goto out;
    if (!(s = report_open_script(rp, 900, 140 + 34 * (n_kinds ? n_kinds : 1), err))) {
        rc = RF_EIO;
        goto out;
    }
    fprintf(s,
            "set palette defined (0 '#f7fbff', 0.25 '#c6dbef', 0.5 '#6baed6', 0.75 '#2171b5',"
            " 1 '#08306b')\nset cbrange [0:%g]\nset cblabel 'utilisation'\n"
            "set xrange [-0.5:%lld.5]\nset yrange [%d.5:-0.5]\n"
            "set xlabel 'GPU / NIC / leaf index within the link kind'\nset grid noxtics noytics\n"
            "set ytics (",
            max_u, (long long)max_x, n_kinds > 0 ? n_kinds - 1 : 0);
    for (int y = 0; y < n_kinds; y++)
        fprintf(s, "%s'%s' %d", y ? ", " : "", kinds[y], y);
    fputs(")\nplot data using 1:2:(0.5):(0.5):3 with boxxyerror fs solid 1.0 noborder "
          "lc palette notitle\n",
          s);
    char id[64], caption[256];
    snprintf(id, sizeof(id), "heatmap-%lld", (long long)r->id);
    snprintf(caption, sizeof(caption),
             "Run %lld: utilisation of every link (bytes / (capacity x predicted time)).",
             (long long)r->id);
    rc = report_draw(rp, s, id, caption, err);
    s = NULL;
out:
    if (d)
        fclose(d);
    if (s)
        fclose(s);
    sqlite3_finalize(q);
    return rc;
}

/* Per-round timeline: the predicted interval of each round, and under it the measured one
 * (rounds laid end to end from their measured seconds) when the run was replayed. Past
 * REPORT_TIMELINE_BINS rounds, consecutive rounds are drawn as one bar from the first start
 * to the last finish of the bin: 940 bars of a pixel each read as a smear. */
struct bin {
    int64_t first, last;
    double start, finish, mstart, mfinish;
    bool measured;
};

int report_plot_timeline(struct report *rp, const struct run *r, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    FILE *d = NULL, *s = NULL;
    int rc = 0;
    int64_t rounds = 0, measured = 0;
    if (sqlite3_prepare_v2(rp->db,
                           "SELECT pr.round, pr.start_seconds, pr.finish_seconds, mr.seconds, "
                           "count(*) OVER () FROM predicted_round pr LEFT JOIN measured_round mr "
                           "ON mr.measurement_id = ?2 AND mr.round = pr.round "
                           "WHERE pr.run_id = ?1 ORDER BY pr.round",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = report_db_fail(rp, err);
        goto out;
    }
    sqlite3_bind_int64(q, 1, r->id);
    if (r->measured)
        sqlite3_bind_int64(q, 2, r->measurement_id);
    else
        sqlite3_bind_null(q, 2);
    if (!(d = report_open_data(rp, err))) {
        rc = RF_EIO;
        goto out;
    }
    int step;
    double clock = 0;
    int64_t per_bin = 1, bins = 0;
    struct bin b = {0};
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        if (rounds == 0) {
            int64_t total = sqlite3_column_int64(q, 4);
            per_bin = (total + REPORT_TIMELINE_BINS - 1) / REPORT_TIMELINE_BINS;
        }
        int64_t round = sqlite3_column_int64(q, 0);
        double start = sqlite3_column_double(q, 1), finish = sqlite3_column_double(q, 2);
        if (rounds % per_bin == 0)
            b = (struct bin){.first = round, .start = start, .finish = finish, .mstart = clock};
        b.last = round;
        b.start = start < b.start ? start : b.start;
        b.finish = finish > b.finish ? finish : b.finish;
        if (sqlite3_column_type(q, 3) != SQLITE_NULL) {
            clock += sqlite3_column_double(q, 3);
            b.measured = true;
            measured++;
        }
        b.mfinish = clock;
        rounds++;
        if (rounds % per_bin == 0 || rounds == sqlite3_column_int64(q, 4)) {
            fprintf(d, "%lld %lld %.9g %.9g ", (long long)b.first, (long long)b.last, b.start,
                    b.finish);
            if (b.measured)
                fprintf(d, "%.9g %.9g\n", b.mstart, b.mfinish);
            else
                fputs("? ?\n", d);
            bins++;
        }
    }
    if (step != SQLITE_DONE) {
        rc = report_db_fail(rp, err);
        goto out;
    }
    rc = report_close_data(d, err);
    d = NULL;
    if (rc < 0 || rounds == 0)
        goto out;
    int height = 160 + 4 * (int)bins;
    height = height < 320 ? 320 : height;
    if (!(s = report_open_script(rp, 900, height, err))) {
        rc = RF_EIO;
        goto out;
    }
    /* A bar spans its rounds on the y axis (the last one to 0.9 of a round, leaving a gap);
     * with measurements the predicted bar takes the upper half and the measured the lower. */
    /* A few rounds get a tic each, never a fractional round. */
    if (rounds <= 20)
        fputs("set ytics 1\n", s);
    fprintf(s,
            "set xlabel 'seconds'\nset ylabel 'round'\nset yrange [%lld:-1]\n"
            "set xrange [0:*]\nset key bottom right\nset style fill solid 0.9 noborder\n"
            "plot data using 3:1:3:4:1:%s with boxxyerror lc rgb '#4e79a7' "
            "title 'predicted'",
            (long long)rounds, measured ? "(($1+$2+0.9)/2)" : "($2+0.9)");
    if (measured)
        fputs(", \\\n  data using 5:1:5:6:(($1+$2+0.9)/2):($2+0.9) with boxxyerror "
              "lc rgb '#f28e2b' title 'measured'",
              s);
    fputc('\n', s);
    char id[64], caption[384], bin_text[128] = "";
    snprintf(id, sizeof(id), "timeline-%lld", (long long)r->id);
    if (per_bin > 1)
        snprintf(bin_text, sizeof(bin_text),
                 " (%lld rounds in %lld bars of %lld consecutive rounds)", (long long)rounds,
                 (long long)bins, (long long)per_bin);
    snprintf(caption, sizeof(caption), "Run %lld: predicted start and finish of each round%s%s.",
             (long long)r->id, bin_text,
             measured ? "; measured rounds (orange) laid end to end from their seconds" : "");
    rc = report_draw(rp, s, id, caption, err);
    s = NULL;
out:
    if (d)
        fclose(d);
    if (s)
        fclose(s);
    sqlite3_finalize(q);
    return rc;
}

/* Predicted against measured seconds, per run and per round, on log axes with y = x. */
int report_plot_measured(struct report *rp, struct rf_error *err)
{
    static const char *const sql[2] = {
        "SELECT run_id, predicted_seconds, measured_seconds FROM predicted_vs_measured",
        "SELECT run_id, predicted_seconds, measured_seconds FROM predicted_vs_measured_round"};
    sqlite3_stmt *q = NULL;
    FILE *d = NULL, *s = NULL;
    int rc = 0;
    double lo = 0, hi = 0;
    if (!(d = report_open_data(rp, err))) {
        rc = RF_EIO;
        goto out;
    }
    for (int k = 0; k < 2; k++) {
        if (sqlite3_prepare_v2(rp->db, sql[k], -1, &q, NULL) != SQLITE_OK) {
            rc = report_db_fail(rp, err);
            goto out;
        }
        int step;
        while ((step = sqlite3_step(q)) == SQLITE_ROW) {
            double p = sqlite3_column_double(q, 1), m = sqlite3_column_double(q, 2);
            if (!report_selected(rp, sqlite3_column_int64(q, 0)) || p <= 0 || m <= 0)
                continue;
            double a = p < m ? p : m, b = p > m ? p : m;
            lo = lo == 0 || a < lo ? a : lo;
            hi = b > hi ? b : hi;
            fprintf(d, "%.9g %.9g\n", p, m);
        }
        if (step != SQLITE_DONE) {
            rc = report_db_fail(rp, err);
            goto out;
        }
        sqlite3_finalize(q);
        q = NULL;
        /* Two blank lines end a gnuplot data block: index 0 runs, index 1 rounds. */
        fputs(k == 0 ? "? ?\n\n\n" : "? ?\n", d);
    }
    rc = report_close_data(d, err);
    d = NULL;
    if (rc < 0)
        goto out;
    if (hi <= 0)
        goto out;
    if (!(s = report_open_script(rp, 620, 560, err))) {
        rc = RF_EIO;
        goto out;
    }
    fprintf(s,
            "set logscale xy\nset xrange [%.9g:%.9g]\nset yrange [%.9g:%.9g]\nset size square\n"
            "set xlabel 'predicted seconds'\nset ylabel 'measured seconds'\nset key top left\n"
            "plot x with lines dt 2 lc rgb '#888888' title 'y = x', \\\n"
            "  data index 1 using 1:2 with points pt 6 ps 0.8 lc rgb '#4e79a7' title 'round', \\\n"
            "  data index 0 using 1:2 with points pt 7 ps 1.5 lc rgb '#e15759' title 'run'\n",
            lo / 1.5, hi * 1.5, lo / 1.5, hi * 1.5);
    rc = report_draw(
        rp, s, "measured-plot",
        "Measured against predicted seconds: whole runs and single rounds; points above "
        "the dashed line took longer than predicted.",
        err);
    s = NULL;
out:
    if (d)
        fclose(d);
    if (s)
        fclose(s);
    sqlite3_finalize(q);
    return rc;
}
