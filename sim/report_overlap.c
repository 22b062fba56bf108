/* The report's stall plot: for each simulated run, how long an engine cannot generate
 * against how long the refit takes. A refit that stops the engines sits on the diagonal
 * (its stall is the refit); an overlapped one (a scenario's `overlap`) below it. */
#include "report_int.h"

int report_plot_overlap(struct report *rp, struct rf_error *err)
{
    FILE *d = report_open_data(rp, err), *s = NULL;
    double lo = 0, hi = 0;
    int rc = 0;
    if (!d)
        return RF_EIO;
    /* Index 0 the runs that stop the engines, index 1 the overlapped ones: the refit as the
     * engines shared it, and the longest stall. */
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < rp->n_runs; i++) {
            const struct run *r = &rp->runs[i];
            if (!r->simulated || r->has_overlap != (k == 1))
                continue;
            double x = k ? r->overlap_refit : r->seconds, y = k ? r->stall : r->seconds;
            if (x <= 0 || y <= 0)
                continue;
            double a = x < y ? x : y, b = x > y ? x : y;
            lo = lo == 0 || a < lo ? a : lo;
            hi = b > hi ? b : hi;
            fprintf(d, "%.9g %.9g %lld\n", x, y, (long long)r->id);
        }
        fputs(k == 0 ? "? ? ?\n\n\n" : "? ? ?\n", d);
    }
    if ((rc = report_close_data(d, err)) < 0 || hi <= 0)
        return rc;
    if (!(s = report_open_script(rp, 620, 560, err)))
        return RF_EIO;
    fprintf(
        s,
        "set logscale xy\nset xrange [%.9g:%.9g]\nset yrange [%.9g:%.9g]\nset size square\n"
        "set xlabel 'refit seconds'\nset ylabel 'engine stall seconds'\nset key top left\n"
        "plot x with lines dt 2 lc rgb '#888888' title 'stopped: stall = refit', \\\n"
        "  data index 0 using 1:2 with points pt 7 ps 1.2 lc rgb '#4e79a7' title 'stopped', \\\n"
        "  data index 1 using 1:2 with points pt 5 ps 1.2 lc rgb '#e15759' title "
        "'overlapped', \\\n"
        "  data index 1 using 1:2:3 with labels offset 1,0.5 notitle\n",
        lo / 1.5, hi * 1.5, lo / 1.5, hi * 1.5);
    return report_draw(rp, s, "stall-plot",
                       "How long an engine cannot generate against how long its refit takes: "
                       "a refit that stops the engines on the dashed line, an overlapped one "
                       "(labelled with its run) below it.",
                       err);
}
