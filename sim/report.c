/* The HTML report (README "Reports"): reads runs, predictions, link loads, round times and
 * measurements from a refit database and writes one self-contained page; gnuplot draws
 * every plot as SVG, which is inlined. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report.h"
#include "store.h"

extern char **environ;

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
};

struct report {
    sqlite3 *db;
    const char *db_path;
    const char *gnuplot;
    char tmp[PATH_MAX];
    int plots; /* plots drawn so far: names the files and the SVG ids */
    FILE *out;
    struct run *runs;
    size_t n_runs;
};

static const char css[] =
    "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:1100px;color:#222;"
    "padding:0 1em}\n"
    "h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:2em}\n"
    "table{border-collapse:collapse;margin:1em 0;font-size:.9em}\n"
    "th,td{border:1px solid #ddd;padding:.25em .6em;text-align:left}\n"
    "th{background:#f3f5f8}td.n{text-align:right;font-variant-numeric:tabular-nums}\n"
    "figure{margin:1em 0}figure svg{max-width:100%;height:auto}\n"
    "figcaption{font-size:.85em;color:#555}\n"
    "nav a{margin-right:1em}.note{color:#666;font-style:italic}\n";

/* Writes s with every character that means something in HTML escaped, so the page shows
 * labels and paths as they are and they can never open a tag or close an attribute. */
static void put_esc(FILE *f, const char *s)
{
    for (; s && *s; s++) {
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

/* A label gnuplot can take inside a double-quoted string of a data file: characters that
 * could end the string or mean something to gnuplot become '_'. */
static void gp_label(char *dst, size_t size, const char *s)
{
    size_t i = 0;
    for (; s && *s && i + 1 < size; s++)
        dst[i++] = (strchr(" ._:+-#/", *s) || (*s >= '0' && *s <= '9') ||
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
}

static int db_fail(struct report *rp, struct rf_error *err)
{
    return rf_error_set(err, RF_EDB, "%s: %s", rp->db_path, sqlite3_errmsg(rp->db));
}

static const char run_sql[] =
    "SELECT r.id, r.label, r.model, r.strategy, r.cluster_system, r.cluster_nodes,\n"
    "  r.train_gpus, r.train_layout, r.train_dtype, r.infer_gpus, r.infer_layout,\n"
    "  r.infer_dtype, r.payload_bytes, r.moved_bytes, r.rounds,\n"
    "  p.run_id IS NOT NULL, p.seconds, p.lower_bound_seconds, p.fabric_bytes,\n"
    "  p.nvlink_bytes, p.bottleneck, p.cluster,\n"
    "  m.id IS NOT NULL, m.id, m.seconds, m.backend, m.world_size\n"
    "FROM run r LEFT JOIN prediction p ON p.run_id = r.id\n"
    "LEFT JOIN measurement m ON m.id = (SELECT max(id) FROM measurement\n"
    "  WHERE run_id = r.id AND status = 'ok' AND seconds > 0)\n"
    "WHERE ?1 IS NULL OR r.id = ?1 ORDER BY r.id";

static int add_run(struct report *rp, sqlite3_stmt *s, size_t *cap, struct rf_error *err)
{
    if (rp->n_runs == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        struct run *nr = realloc(rp->runs, nc * sizeof(*nr));
        if (!nr)
            return rf_error_set(err, RF_ENOMEM, "out of memory");
        rp->runs = nr;
        *cap = nc;
    }
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
    if (!r->label || !r->model || !r->strategy || !r->system || !r->train_layout ||
        !r->train_dtype || !r->infer_layout || !r->infer_dtype || !r->bottleneck || !r->cluster ||
        !r->backend)
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
        rc = db_fail(rp, err);
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
            rc = db_fail(rp, err);
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

static bool selected(const struct report *rp, int64_t run_id)
{
    for (size_t i = 0; i < rp->n_runs; i++)
        if (rp->runs[i].id == run_id)
            return true;
    return false;
}

/* Runs gnuplot on a script in the temporary directory; its messages go to a file there and
 * the first line of them into the error. */
static int run_gnuplot(struct report *rp, const char *script, struct rf_error *err)
{
    char errpath[PATH_MAX + 16], line[512] = "";
    snprintf(errpath, sizeof(errpath), "%s/gnuplot.err", rp->tmp);
    posix_spawn_file_actions_t fa;
    if (posix_spawn_file_actions_init(&fa) != 0)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    char *argv[] = {(char *)rp->gnuplot, (char *)script, NULL};
    pid_t pid;
    int e = posix_spawnp(&pid, rp->gnuplot, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    int status = 0;
    if (e == 0)
        while (waitpid(pid, &status, 0) < 0)
            if (errno != EINTR)
                return rf_error_set(err, RF_EIO, "waiting for gnuplot: %s", strerror(errno));
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

static FILE *open_data(struct report *rp, struct rf_error *err)
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
static FILE *open_script(struct report *rp, int width, int height, struct rf_error *err)
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
static int draw(struct report *rp, FILE *script, const char *id, const char *caption,
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
    if ((rc = run_gnuplot(rp, path, err)) < 0)
        goto out;
    plot_path(rp, path, sizeof(path), "svg");
    if (!(f = fopen(path, "r"))) {
        rc = rf_error_set(err, RF_EIO, "%s: %s", path, strerror(errno));
        goto out;
    }
    size_t len = 0, cap = 0, got;
    do {
        if (len + 4096 + 1 > cap) {
            cap = cap ? cap * 2 : 65536;
            char *ns = realloc(svg, cap);
            if (!ns) {
                rc = rf_error_set(err, RF_ENOMEM, "out of memory");
                goto out;
            }
            svg = ns;
        }
        got = fread(svg + len, 1, cap - len - 1, f);
        len += got;
    } while (got > 0);
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
    put_esc(rp->out, caption);
    fputs("</figcaption>\n</figure>\n", rp->out);
out:
    if (f)
        fclose(f);
    free(svg);
    rp->plots++;
    return rc;
}

static int close_data(FILE *f, struct rf_error *err)
{
    bool bad = ferror(f) != 0;
    if (fclose(f) != 0 || bad)
        return rf_error_set(err, RF_EIO, "cannot write a plot's data");
    return 0;
}

static int plot_comparison(struct report *rp, struct rf_error *err)
{
    FILE *d = open_data(rp, err);
    if (!d)
        return RF_EIO;
    bool measured = false;
    int x = 0;
    for (size_t i = 0; i < rp->n_runs; i++) {
        const struct run *r = &rp->runs[i];
        if (!r->simulated)
            continue;
        char name[160], label[160];
        snprintf(name, sizeof(name), "#%lld %s", (long long)r->id, r->strategy);
        gp_label(label, sizeof(label), name);
        fprintf(d, "%d \"%s\" %.9g %.9g ", x++, label, r->seconds, r->lower_bound);
        if (r->measured)
            fprintf(d, "%.9g\n", r->measured_seconds);
        else
            fputs("?\n", d);
        measured |= r->measured;
    }
    int rc = close_data(d, err);
    if (rc < 0)
        return rc;
    FILE *s = open_script(rp, 900, 420, err);
    if (!s)
        return RF_EIO;
    fprintf(s,
            "set style fill solid 0.85 border -1\nset boxwidth 0.6\nset yrange [0:*]\n"
            "set xrange [-0.6:%d.6]\nset ylabel 'seconds'\nset key top left\n"
            "set xtics rotate by -25 nomirror\nset grid noxtics\n"
            "plot data using 1:3:xtic(2) with boxes lc rgb '#4e79a7' title 'predicted', \\\n"
            "  data using 1:4:(0.35) with xerrorbars pt -1 lw 3 lc rgb '#e15759' "
            "title 'lower bound'",
            x - 1);
    if (measured)
        fputs(", \\\n  data using 1:5 with points pt 7 ps 1.4 lc rgb '#f28e2b' "
              "title 'measured'",
              s);
    fputc('\n', s);
    return draw(rp, s, "comparison-plot",
                "Predicted seconds per run and strategy; the red bar is the lower bound, "
                "dots are measured times.",
                err);
}

/* Heatmap of a run's links: one row per link kind (in link order), one column per link of
 * that kind (the GPU, NIC or leaf it belongs to), colour = utilisation. */
static int plot_links(struct report *rp, const struct run *r, struct rf_error *err)
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
                           "SELECT kind, row_number() OVER (PARTITION BY kind ORDER BY link_id)"
                           " - 1, utilization FROM link_load WHERE run_id = ? ORDER BY link_id",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = db_fail(rp, err);
        goto out;
    }
    sqlite3_bind_int64(q, 1, r->id);
    if (!(d = open_data(rp, err))) {
        rc = RF_EIO;
        goto out;
    }
    int step;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        char kind[32];
        gp_label(kind, sizeof(kind), (const char *)sqlite3_column_text(q, 0));
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
        rc = db_fail(rp, err);
        goto out;
    }
    rc = close_data(d, err);
    d = NULL;
    if (rc < 0)
        goto out;
    if (!(s = open_script(rp, 900, 140 + 34 * (n_kinds ? n_kinds : 1), err))) {
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
    rc = draw(rp, s, id, caption, err);
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
 * (rounds laid end to end from their measured seconds) when the run was replayed. */
static int plot_timeline(struct report *rp, const struct run *r, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    FILE *d = NULL, *s = NULL;
    int rc = 0, rounds = 0, measured = 0;
    if (sqlite3_prepare_v2(rp->db,
                           "SELECT pr.round, pr.start_seconds, pr.finish_seconds, mr.seconds "
                           "FROM predicted_round pr LEFT JOIN measured_round mr "
                           "ON mr.measurement_id = ?2 AND mr.round = pr.round "
                           "WHERE pr.run_id = ?1 ORDER BY pr.round",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = db_fail(rp, err);
        goto out;
    }
    sqlite3_bind_int64(q, 1, r->id);
    if (r->measured)
        sqlite3_bind_int64(q, 2, r->measurement_id);
    else
        sqlite3_bind_null(q, 2);
    if (!(d = open_data(rp, err))) {
        rc = RF_EIO;
        goto out;
    }
    int step;
    double clock = 0;
    while ((step = sqlite3_step(q)) == SQLITE_ROW) {
        fprintf(d, "%lld %.9g %.9g ", (long long)sqlite3_column_int64(q, 0),
                sqlite3_column_double(q, 1), sqlite3_column_double(q, 2));
        if (sqlite3_column_type(q, 3) != SQLITE_NULL) {
            double m = sqlite3_column_double(q, 3);
            fprintf(d, "%.9g %.9g\n", clock, clock + m);
            clock += m;
            measured++;
        } else {
            fputs("? ?\n", d);
        }
        rounds++;
    }
    if (step != SQLITE_DONE) {
        rc = db_fail(rp, err);
        goto out;
    }
    rc = close_data(d, err);
    d = NULL;
    if (rc < 0 || rounds == 0)
        goto out;
    int height = 160 + 4 * rounds;
    height = height < 320 ? 320 : height > 900 ? 900 : height;
    if (!(s = open_script(rp, 900, height, err))) {
        rc = RF_EIO;
        goto out;
    }
    fprintf(s,
            "set xlabel 'seconds'\nset ylabel 'round'\nset yrange [%d:-1]\n"
            "set xrange [0:*]\nset key bottom right\nset style fill solid 0.9 noborder\n"
            "plot data using 2:1:2:3:($1-0.45):($1+%s) with boxxyerror lc rgb '#4e79a7' "
            "title 'predicted'",
            rounds, measured ? "0" : "0.45");
    if (measured)
        fputs(", \\\n  data using 4:1:4:5:1:($1+0.45) with boxxyerror lc rgb '#f28e2b' "
              "title 'measured'",
              s);
    fputc('\n', s);
    char id[64], caption[256];
    snprintf(id, sizeof(id), "timeline-%lld", (long long)r->id);
    snprintf(caption, sizeof(caption), "Run %lld: predicted start and finish of each round%s.",
             (long long)r->id,
             measured ? "; measured rounds (orange) laid end to end from their seconds" : "");
    rc = draw(rp, s, id, caption, err);
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
static int plot_measured(struct report *rp, struct rf_error *err)
{
    static const char *const sql[2] = {
        "SELECT run_id, predicted_seconds, measured_seconds FROM predicted_vs_measured",
        "SELECT run_id, predicted_seconds, measured_seconds FROM predicted_vs_measured_round"};
    sqlite3_stmt *q = NULL;
    FILE *d = NULL, *s = NULL;
    int rc = 0;
    double lo = 0, hi = 0;
    if (!(d = open_data(rp, err))) {
        rc = RF_EIO;
        goto out;
    }
    for (int k = 0; k < 2; k++) {
        if (sqlite3_prepare_v2(rp->db, sql[k], -1, &q, NULL) != SQLITE_OK) {
            rc = db_fail(rp, err);
            goto out;
        }
        int step;
        while ((step = sqlite3_step(q)) == SQLITE_ROW) {
            double p = sqlite3_column_double(q, 1), m = sqlite3_column_double(q, 2);
            if (!selected(rp, sqlite3_column_int64(q, 0)) || p <= 0 || m <= 0)
                continue;
            double a = p < m ? p : m, b = p > m ? p : m;
            lo = lo == 0 || a < lo ? a : lo;
            hi = b > hi ? b : hi;
            fprintf(d, "%.9g %.9g\n", p, m);
        }
        if (step != SQLITE_DONE) {
            rc = db_fail(rp, err);
            goto out;
        }
        sqlite3_finalize(q);
        q = NULL;
        /* Two blank lines end a gnuplot data block: index 0 runs, index 1 rounds. */
        fputs(k == 0 ? "? ?\n\n\n" : "? ?\n", d);
    }
    rc = close_data(d, err);
    d = NULL;
    if (rc < 0)
        goto out;
    if (hi <= 0)
        goto out;
    if (!(s = open_script(rp, 620, 560, err))) {
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
    rc = draw(rp, s, "measured-plot",
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

static void row_text(FILE *f, const char *key, const char *value)
{
    fputs("<tr><th>", f);
    put_esc(f, key);
    fputs("</th><td>", f);
    put_esc(f, value);
    fputs("</td></tr>\n", f);
}

static void row_num(FILE *f, const char *key, const char *fmt, double v)
{
    char buf[64];
    snprintf(buf, sizeof(buf), fmt, v);
    fputs("<tr><th>", f);
    put_esc(f, key);
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
        return db_fail(rp, err);
    sqlite3_bind_int64(s, 1, r->id);
    fprintf(f,
            "<table class=\"phases\" id=\"phases-%lld\">\n<tr><th>phase</th><th>start (s)</th>"
            "<th>finish (s)</th><th>span (s)</th><th>GB</th></tr>\n",
            (long long)r->id);
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
        double start = sqlite3_column_double(s, 1), finish = sqlite3_column_double(s, 2);
        fputs("<tr><td>", f);
        put_esc(f, (const char *)sqlite3_column_text(s, 0));
        fprintf(f,
                "</td><td class=\"n\">%.4f</td><td class=\"n\">%.4f</td><td class=\"n\">%.4f"
                "</td><td class=\"n\">%.2f</td></tr>\n",
                start, finish, finish - start, (double)sqlite3_column_int64(s, 3) / 1e9);
    }
    fputs("</table>\n", f);
    if (rc != SQLITE_DONE) {
        sqlite3_finalize(s);
        return db_fail(rp, err);
    }
    sqlite3_finalize(s);
    return 0;
}

static void overview_table(FILE *f, const struct report *rp)
{
    fputs("<table class=\"overview\">\n<tr><th>run</th><th>label</th><th>model</th>"
          "<th>strategy</th><th>cluster</th><th>predicted (s)</th><th>lower bound (s)</th>"
          "<th>measured (s)</th><th>bottleneck</th></tr>\n",
          f);
    for (size_t i = 0; i < rp->n_runs; i++) {
        const struct run *r = &rp->runs[i];
        fprintf(f, "<tr><td><a href=\"#run-%lld\">%lld</a></td><td>", (long long)r->id,
                (long long)r->id);
        put_esc(f, r->label);
        fputs("</td><td>", f);
        put_esc(f, r->model);
        fputs("</td><td>", f);
        put_esc(f, r->strategy);
        fputs("</td><td>", f);
        put_esc(f, r->system);
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
        put_esc(f, r->simulated ? r->bottleneck : "");
        fputs("</td></tr>\n", f);
    }
    fputs("</table>\n", f);
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
    put_esc(f, rp->db_path);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<h1>refit report</h1>\n<p>", css);
    fprintf(f, "%zu run%s of <code>", rp->n_runs, rp->n_runs == 1 ? "" : "s");
    put_esc(f, rp->db_path);
    fprintf(f,
            "</code>, %zu simulated, %zu measured; written %s.</p>\n<nav>"
            "<a href=\"#runs\">runs</a>",
            simulated, measured, when);
    if (simulated > 1)
        fputs("<a href=\"#comparison\">strategy comparison</a>", f);
    if (measured > 0)
        fputs("<a href=\"#predicted-vs-measured\">predicted vs measured</a>", f);
    fputs("</nav>\n<section id=\"runs\">\n<h2>Runs</h2>\n", f);
    overview_table(f, rp);
    fputs("</section>\n", f);
    if (simulated > 1) {
        fputs("<section id=\"comparison\">\n<h2>Strategy comparison</h2>\n", f);
        if ((rc = plot_comparison(rp, err)) < 0)
            return rc;
        fputs("</section>\n", f);
    }
    if (measured > 0) {
        fputs("<section id=\"predicted-vs-measured\">\n<h2>Predicted vs measured</h2>\n", f);
        if ((rc = plot_measured(rp, err)) < 0)
            return rc;
        fputs("</section>\n", f);
    }
    for (size_t i = 0; i < rp->n_runs; i++) {
        const struct run *r = &rp->runs[i];
        fprintf(f, "<section class=\"run\" id=\"run-%lld\">\n<h2>Run %lld: ", (long long)r->id,
                (long long)r->id);
        put_esc(f, r->model);
        fputs(", ", f);
        put_esc(f, r->strategy);
        fputs("</h2>\n", f);
        summary_table(f, r);
        if (r->simulated) {
            fputs("<h3>Phases</h3>\n", f);
            if ((rc = phases_table(rp, r, err)) < 0)
                return rc;
            fputs("<h3>Link utilisation</h3>\n", f);
            if ((rc = plot_links(rp, r, err)) < 0)
                return rc;
            fputs("<h3>Round timeline</h3>\n", f);
            if ((rc = plot_timeline(rp, r, err)) < 0)
                return rc;
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
                   struct rf_error *err)
{
    struct report rp = {.db_path = db_path};
    struct rf_store st = {0};
    char partial[PATH_MAX];
    bool have_tmp = false, have_partial = false;
    int rc = 0;

    const char *gp = getenv("REFIT_GNUPLOT");
    rp.gnuplot = gp && *gp ? gp : "gnuplot";
    if (access(db_path, R_OK) != 0) {
        rc = rf_error_set(err, RF_EIO, "%s: %s", db_path, strerror(errno));
        goto out;
    }
    if ((rc = rf_store_open(&st, db_path, err)) < 0)
        goto out;
    rp.db = st.db;
    if ((rc = load_runs(&rp, run_ids, n_runs, err)) < 0)
        goto out;

    const char *tmpdir = getenv("TMPDIR");
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
    if ((rc = run_gnuplot(&rp, check, err)) < 0)
        goto out;

    if (snprintf(partial, sizeof(partial), "%s.partial", out_path) >= (int)sizeof(partial)) {
        rc = rf_error_set(err, RF_EINVAL, "%s: path too long", out_path);
        goto out;
    }
    if (!(rp.out = fopen(partial, "w"))) {
        rc = rf_error_set(err, RF_EIO, "%s: %s", partial, strerror(errno));
        goto out;
    }
    have_partial = true;
    if ((rc = write_page(&rp, err)) < 0)
        goto out;
    bool bad = ferror(rp.out) != 0;
    int closed = fclose(rp.out);
    rp.out = NULL;
    if (bad || closed != 0) {
        rc = rf_error_set(err, RF_EIO, "%s: cannot write", partial);
        goto out;
    }
    if (rename(partial, out_path) != 0) {
        rc = rf_error_set(err, RF_EIO, "%s: %s", out_path, strerror(errno));
        goto out;
    }
    have_partial = false;
out:
    if (rp.out)
        fclose(rp.out);
    if (have_partial)
        unlink(partial);
    if (have_tmp)
        remove_tmp(rp.tmp);
    for (size_t i = 0; i < rp.n_runs; i++)
        run_release(&rp.runs[i]);
    free(rp.runs);
    if (st.db)
        rf_store_close(&st);
    return rc;
}
