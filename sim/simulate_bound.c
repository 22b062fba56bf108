/* Bound mode (rf_simulate_bound): a plan's rounds reduced to their least durations and
 * chained through their barriers, and a first-come-first-served estimate, per topology. */
#include <math.h>
#include <stdlib.h>

#include "array.h"
#include "simulate_int.h"

int sim_bound_init(struct sim *s)
{
    size_t n_links = s->topos[0]->n_links;
    int32_t R = s->plan->n_rounds;
    s->n_acc = s->n_topos;
    for (int i = 0; i < s->n_topos; i++) {
        struct acc *a = &s->acc[i];
        a->topo = s->topos[i];
        a->round_load = calloc(n_links, sizeof(double));
        a->total_load = calloc(n_links, sizeof(double));
        a->touched = malloc(n_links * sizeof(int32_t));
        a->round_dur = calloc((size_t)R + 1, sizeof(double));
        a->round_alone = calloc((size_t)R + 1, sizeof(double));
        a->lstart = calloc((size_t)R + 2, sizeof(size_t));
        if (!a->round_load || !a->total_load || !a->touched || !a->round_dur || !a->round_alone ||
            !a->lstart)
            return rf_error_set(s->err, RF_ENOMEM, "out of memory");
    }
    return 0;
}

void sim_bound_release(struct sim *s)
{
    for (int i = 0; i < RF_SIM_MAX_TOPOLOGIES; i++) {
        struct acc *a = &s->acc[i];
        free(a->round_load);
        free(a->total_load);
        free(a->touched);
        free(a->round_dur);
        free(a->round_alone);
        free(a->lloads);
        free(a->lstart);
    }
}

void sim_bound_add(struct sim *s, const int32_t *path, int n, double bytes, double latency,
                   double tail, double cap)
{
    struct acc *a = s->cur;
    double best = cap > 0 ? cap : INFINITY;
    for (int i = 0; i < n; i++) {
        if (a->round_load[path[i]] == 0 && bytes > 0)
            a->touched[a->n_touched++] = path[i];
        a->round_load[path[i]] += bytes;
        a->total_load[path[i]] += bytes;
        if (a->topo->links[path[i]].capacity < best)
            best = a->topo->links[path[i]].capacity;
    }
    double alone = latency + tail + (bytes > 0 && best < INFINITY ? bytes / best : 0);
    if (alone > a->round_flow)
        a->round_flow = alone;
}

/* A round lasts at least as long as its slowest flow alone and its busiest link at full
 * rate; its links' loads are kept for the estimate. */
int sim_bound_round(struct sim *s, int32_t r)
{
    int rc;
    for (int i = 0; i < s->n_acc; i++) {
        struct acc *a = &s->acc[i];
        double d = a->round_flow;
        if ((rc = RF_GROW(a->lloads, a->cap_lloads, a->n_lloads + a->n_touched, s->err)) < 0)
            return rc;
        a->lstart[r] = a->n_lloads;
        for (size_t k = 0; k < a->n_touched; k++) {
            int32_t l = a->touched[k];
            double busy = a->round_load[l] / s->capacity[l];
            if (busy > d)
                d = busy;
            a->lloads[a->n_lloads++] = (struct lload){l, (float)busy};
            a->round_load[l] = 0;
        }
        a->lstart[r + 1] = a->n_lloads;
        a->round_dur[r] = d;
        a->round_alone[r] = a->round_flow;
        a->n_touched = 0;
        a->round_flow = 0;
    }
    return 0;
}

/* The least finish of every round: it starts once its prerequisites have finished (no
 * sooner than their least finishes) and lasts at least its least duration. Barriers always
 * point back to earlier rounds, so one sweep in round order settles them. The result is
 * also held to the busiest link's whole-run load, since rounds in flight together share
 * links, and lowered by twice the event batching tolerance (flows may finish that much
 * early in the simulation).
 *
 * The estimate sweeps the same rounds with links that serve rounds first come, first
 * served: a round's bytes on a link start once the link has finished the earlier rounds'
 * and the round itself has started, and the round ends when its last link does (or its
 * slowest message alone). Unlike the bound it charges the idle gaps that barriers leave
 * on the busiest links, which is where hierarchical fan-out and broadcast after gather lose
 * time; like the bound it ignores the coupling of a message's two ends. */
static int round_bound(const struct sim *s, const struct acc *a, double *bound, double *estimate)
{
    int32_t R = s->plan->n_rounds;
    double *fin = calloc((size_t)R + 1, sizeof(double));
    double *efin = calloc((size_t)R + 1, sizeof(double));
    double *avail = calloc(a->topo->n_links, sizeof(double));
    double best = 0, est = 0;
    if (!fin || !efin || !avail) {
        free(fin);
        free(efin);
        free(avail);
        return rf_error_set(s->err, RF_ENOMEM, "out of memory");
    }
    size_t e = 0;
    for (int32_t r = 0; r < R; r++) {
        double start = 0, estart = 0;
        for (; e < s->n_edges && s->edges[e][0] == r; e++) {
            int32_t pre = s->edges[e][1];
            if (pre >= r)
                continue; /* never made; dropping a barrier only weakens the bound */
            if (fin[pre] > start)
                start = fin[pre];
            if (efin[pre] > estart)
                estart = efin[pre];
        }
        fin[r] = start + a->round_dur[r];
        if (fin[r] > best)
            best = fin[r];
        efin[r] = estart + a->round_alone[r];
        for (size_t i = a->lstart[r]; i < a->lstart[r + 1]; i++) {
            const struct lload *x = &a->lloads[i];
            double done = (avail[x->link] > estart ? avail[x->link] : estart) + x->seconds;
            avail[x->link] = done;
            if (done > efin[r])
                efin[r] = done;
        }
        if (efin[r] > est)
            est = efin[r];
    }
    for (size_t l = 0; l < a->topo->n_links; l++)
        if (a->total_load[l] / s->capacity[l] > best)
            best = a->total_load[l] / s->capacity[l];
    free(fin);
    free(efin);
    free(avail);
    *bound = best * (1 - 2 * s->tolerance);
    if (estimate)
        *estimate = est > best ? est : best;
    return 0;
}

int sim_bound_finish(struct sim *s, double *bound, double *estimate)
{
    int rc = 0;
    for (int i = 0; i < s->n_acc && rc == 0; i++)
        rc = round_bound(s, &s->acc[i], &bound[i], estimate ? &estimate[i] : NULL);
    return rc;
}
