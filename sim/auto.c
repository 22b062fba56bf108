/* auto: a search over whole-plan predictions. Each candidate is planned, scheduled and
 * simulated exactly as `refit sim` would; the search keeps the fastest. Broadcast is skipped
 * when its own lower bound (the root must send the whole model) already exceeds the best
 * prediction, which cannot change the answer. */
#include "auto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "schedule.h"

struct search {
    const struct rf_auto_input *in;
    struct rf_plan best_plan;
    struct rf_prediction best_pred;
    bool have;
    enum rf_strategy *best_ts;
    enum rf_sources best_sources;
    int evaluated, pruned;
    struct rf_error *err;
};

/* Plans, schedules and predicts one candidate; keeps it when it is the fastest so far. */
static int try_candidate(struct search *s, const enum rf_strategy *ts, enum rf_sources sources,
                         bool *better)
{
    const struct rf_auto_input *in = s->in;
    struct rf_plan plan;
    struct rf_prediction pred;
    struct rf_plan_opts opts = {.topo = in->topo, .sources = sources};
    int rc;

    *better = false;
    if ((rc = rf_plan_build(&plan, in->model, in->train, in->infer, RF_STRAT_AUTO, ts, &opts,
                            s->err)) < 0)
        return rc;
    /* A plan whose busiest link alone needs longer than the best prediction cannot win. */
    if (s->have && rf_plan_link_bound(&plan, in->topo) >= s->best_pred.predicted_s) {
        s->pruned++;
        rf_plan_release(&plan);
        return 0;
    }
    if ((rc = rf_schedule(&plan, &(struct rf_schedule_opts){.staging_bytes = in->staging_bytes},
                          s->err)) < 0 ||
        (rc = rf_simulate(&plan, in->train, in->infer, in->topo, &pred, s->err)) < 0) {
        rf_plan_release(&plan);
        return rc;
    }
    s->evaluated++;
    if (!s->have || pred.predicted_s < s->best_pred.predicted_s) {
        if (s->have) {
            rf_plan_release(&s->best_plan);
            rf_prediction_release(&s->best_pred);
        }
        s->best_plan = plan;
        s->best_pred = pred;
        s->have = true;
        memcpy(s->best_ts, ts, in->model->n_tensors * sizeof(*ts));
        s->best_sources = sources;
        *better = true;
        return 0;
    }
    rf_plan_release(&plan);
    rf_prediction_release(&pred);
    return 0;
}

/* What the root of a broadcast must send at the least: every wire byte of the model once,
 * through its fastest way out (NVLink and NIC together). */
static double broadcast_bound(const struct rf_auto_input *in)
{
    const struct rf_topology *t = in->topo;
    int64_t root = in->train->first_gpu;
    double out = t->links[rf_topology_link(t, RF_LINK_NVL_OUT, root)].capacity;
    int64_t nic = rf_topology_nic(t, root);
    if (nic >= 0)
        out += t->links[rf_topology_link(t, RF_LINK_NIC_OUT, nic)].capacity;
    double bytes = 0;
    for (size_t i = 0; i < in->model->n_tensors; i++) {
        const struct rf_tensor *x = &in->model->tensors[i];
        enum rf_dtype dt = x->quant ? in->infer->dtype : x->dtype;
        bytes += (double)rf_tensor_numel(x) * (double)rf_dtype_size(dt);
    }
    return bytes / out;
}

int rf_auto(const struct rf_auto_input *in, struct rf_plan *plan, struct rf_prediction *pred,
            struct rf_auto_choice *choice, struct rf_error *err)
{
    size_t n = in->model->n_tensors;
    struct search s = {.in = in, .err = err};
    enum rf_strategy *ts = malloc((n + 1) * sizeof(*ts));
    int64_t role_bytes[RF_ROLE_COUNT] = {0};
    int rc;
    bool better;

    memset(choice, 0, sizeof(*choice));
    s.best_ts = malloc((n + 1) * sizeof(*s.best_ts));
    if (!ts || !s.best_ts) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    int64_t total = 0;
    for (size_t i = 0; i < n; i++) {
        role_bytes[in->model->tensors[i].role] += rf_tensor_numel(&in->model->tensors[i]);
        total += rf_tensor_numel(&in->model->tensors[i]);
    }

    /* Whole-plan candidates: the named strategies, each with both source choices. */
    static const enum rf_strategy uniform[] = {RF_STRAT_RESHARD, RF_STRAT_HIERARCHICAL};
    for (int src = RF_SOURCES_LOCAL; src >= RF_SOURCES_BALANCED; src--) {
        for (size_t u = 0; u < sizeof(uniform) / sizeof(uniform[0]); u++) {
            for (size_t i = 0; i < n; i++)
                ts[i] = uniform[u];
            if ((rc = try_candidate(&s, ts, (enum rf_sources)src, &better)) < 0)
                goto out;
        }
        if (in->hybrid && (rc = try_candidate(&s, in->hybrid, (enum rf_sources)src, &better)) < 0)
            goto out;
    }
    if (broadcast_bound(in) < s.best_pred.predicted_s) {
        for (size_t i = 0; i < n; i++)
            ts[i] = RF_STRAT_BROADCAST;
        if ((rc = try_candidate(&s, ts, RF_SOURCES_BALANCED, &better)) < 0)
            goto out;
    }

    /* Greedy per role, largest first: move the role to another strategy when that lowers
     * the prediction. Roles under 1% of the parameters are left as they are: their bytes
     * cannot move the prediction much, and each try costs a simulation. */
    bool done[RF_ROLE_COUNT] = {false};
    for (int pass = 0; pass < RF_ROLE_COUNT; pass++) {
        int role = -1;
        for (int r = 0; r < RF_ROLE_COUNT; r++)
            if (!done[r] && role_bytes[r] * 100 >= total &&
                (role < 0 || role_bytes[r] > role_bytes[role]))
                role = r;
        if (role < 0)
            break;
        done[role] = true;
        static const enum rf_strategy alts[] = {RF_STRAT_RESHARD, RF_STRAT_HIERARCHICAL,
                                                RF_STRAT_BROADCAST};
        for (size_t a = 0; a < sizeof(alts) / sizeof(alts[0]); a++) {
            bool same = true;
            memcpy(ts, s.best_ts, n * sizeof(*ts));
            for (size_t i = 0; i < n; i++)
                if (in->model->tensors[i].role == (enum rf_role)role) {
                    same &= ts[i] == alts[a];
                    ts[i] = alts[a];
                }
            if (same)
                continue;
            if ((rc = try_candidate(&s, ts, s.best_sources, &better)) < 0)
                goto out;
        }
    }

    /* Describe the winner: the strategy of each role (or "mixed"). */
    size_t len =
        (size_t)snprintf(choice->description, sizeof(choice->description),
                         "%s sources:", s.best_sources == RF_SOURCES_LOCAL ? "local" : "balanced");
    for (int r = 0; r < RF_ROLE_COUNT && len < sizeof(choice->description); r++) {
        if (role_bytes[r] == 0)
            continue;
        int first = -1;
        bool mixed = false;
        for (size_t i = 0; i < n; i++)
            if (in->model->tensors[i].role == (enum rf_role)r) {
                if (first < 0)
                    first = (int)s.best_ts[i];
                else if ((int)s.best_ts[i] != first)
                    mixed = true;
            }
        len += (size_t)snprintf(choice->description + len, sizeof(choice->description) - len,
                                " %s=%s", rf_role_name((enum rf_role)r),
                                mixed ? "mixed" : rf_strategy_name((enum rf_strategy)first));
    }
    choice->evaluated = s.evaluated;
    choice->pruned = s.pruned;
    *plan = s.best_plan;
    *pred = s.best_pred;
    plan->strategy = RF_STRAT_AUTO;
    s.have = false;
    rc = 0;
out:
    if (s.have) {
        rf_plan_release(&s.best_plan);
        rf_prediction_release(&s.best_pred);
    }
    free(ts);
    free(s.best_ts);
    return rc;
}
