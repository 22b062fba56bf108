/* The simulator's rows of a stored run (sim/store_prediction.h): prediction, link_load,
 * predicted_round, predicted_phase, predicted_step_phase and memory, in the run's transaction. */
#include "store_prediction.h"

#include <stdio.h>
#include <string.h>

#include "store_int.h"

enum { S_PRED, S_LINK, S_PROUND, S_PPHASE, S_MEMORY, S_STEP, S_COUNT };

static const char *const insert_sql[S_COUNT] = {
    "INSERT INTO prediction (run_id, cluster, cluster_source, nodes, gpus_per_node, seconds,"
    " lower_bound_seconds, nvlink_bytes, fabric_bytes, bottleneck, bottleneck_link_id, messages,"
    " flows, events, sim_seconds, step_seconds, step_composition, overlap_refit_seconds,"
    " stall_seconds, staleness_seconds)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO link_load VALUES (?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO predicted_round VALUES (?,?,?,?)",
    "INSERT INTO predicted_phase VALUES (?,?,?,?,?)",
    "INSERT INTO memory VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO predicted_step_phase (run_id, seq, part, phase, seconds, bytes, calls,"
    " mechanism) VALUES (?,?,?,?,?,?,?,?)",
};

/* The step's phases (schema 8), in the order the step lists them. A name outside the enums
 * is "?", which the table's CHECK refuses: the run's transaction is rolled back whole. */
static int insert_step(struct rf_store *st, sqlite3_stmt *q, int64_t run, const struct rf_step *stp,
                       struct rf_error *err)
{
    char what[64];
    int rc;
    for (size_t i = 0; i < stp->n; i++) {
        const struct rf_step_phase *ph = &stp->phase[i];
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int64(q, 2, (int64_t)i);
        rf_store_bind_text(q, 3, rf_step_part_name(ph->part));
        rf_store_bind_text(q, 4, rf_step_phase_name(ph->phase));
        sqlite3_bind_double(q, 5, ph->seconds);
        sqlite3_bind_int64(q, 6, ph->bytes);
        sqlite3_bind_int64(q, 7, ph->calls);
        sqlite3_bind_text(q, 8, ph->mechanism, (int)strnlen(ph->mechanism, RF_STEP_MECHANISM_MAX),
                          SQLITE_TRANSIENT);
        snprintf(what, sizeof(what), "predicted_step_phase (step phase %zu)", i);
        if ((rc = rf_store_step(st, q, err, what)) < 0)
            return rc;
    }
    return 0;
}

static int insert_prediction(struct rf_store *st, sqlite3_stmt **s, int64_t run,
                             const struct rf_topology *topo, const struct rf_prediction *p,
                             const struct rf_step *stp, const struct rf_overlap_result *ov,
                             struct rf_error *err)
{
    const struct rf_cluster *c = topo->cluster;
    sqlite3_stmt *q = s[S_PRED];
    char name[96];
    int rc;
    sqlite3_bind_int64(q, 1, run);
    rf_store_bind_text(q, 2, c->name);
    rf_store_bind_text(q, 3, c->source);
    sqlite3_bind_int64(q, 4, c->nodes);
    sqlite3_bind_int64(q, 5, c->gpus_per_node);
    sqlite3_bind_double(q, 6, p->predicted_s);
    sqlite3_bind_double(q, 7, p->lower_bound_s);
    sqlite3_bind_int64(q, 8, p->nvlink_bytes);
    sqlite3_bind_int64(q, 9, p->fabric_bytes);
    if (p->bottleneck >= 0) {
        rf_link_describe(topo, (size_t)p->bottleneck, name, sizeof(name));
        rf_store_bind_text(q, 10, name);
        sqlite3_bind_int(q, 11, p->bottleneck);
    } else {
        sqlite3_bind_null(q, 10);
        sqlite3_bind_null(q, 11);
    }
    sqlite3_bind_int64(q, 12, p->messages);
    sqlite3_bind_int64(q, 13, p->flows);
    sqlite3_bind_int64(q, 14, p->events);
    sqlite3_bind_double(q, 15, p->sim_seconds);
    if (stp) {
        sqlite3_bind_double(q, 16, stp->total_s);
        sqlite3_bind_text(q, 17, stp->composition,
                          (int)strnlen(stp->composition, RF_STEP_COMPOSITION_MAX),
                          SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_null(q, 16);
        sqlite3_bind_null(q, 17);
    }
    for (int k = 0; k < 3; k++)
        if (ov)
            sqlite3_bind_double(q, 18 + k,
                                k == 0   ? ov->refit_s
                                : k == 1 ? ov->stall_s
                                         : ov->staleness_s);
        else
            sqlite3_bind_null(q, 18 + k);
    if ((rc = rf_store_step(st, q, err, "prediction")) < 0)
        return rc;
    /* Only links that carried bytes or were busy get a row (a missing row means zero): a
     * 2-GPU plan on a 100000-node cluster has 4.85 M links, of which 4 carry anything. */
    for (size_t l = 0; l < p->n_links; l++) {
        const struct rf_link *k = &topo->links[l];
        int64_t bytes = (int64_t)(p->link_bytes[l] + 0.5);
        if (bytes == 0 && !(p->link_busy[l] > 0))
            continue;
        q = s[S_LINK];
        rf_link_describe(topo, l, name, sizeof(name));
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int64(q, 2, (int64_t)l);
        rf_store_bind_text(q, 3, rf_link_kind_name(k->kind));
        rf_store_bind_text(q, 4, name);
        sqlite3_bind_int(q, 5, k->a);
        sqlite3_bind_int(q, 6, k->b);
        sqlite3_bind_double(q, 7, k->capacity / 1e9);
        sqlite3_bind_int64(q, 8, bytes);
        sqlite3_bind_double(q, 9, p->link_busy[l]);
        sqlite3_bind_double(
            q, 10, p->predicted_s > 0 ? p->link_bytes[l] / (k->capacity * p->predicted_s) : 0);
        if ((rc = rf_store_step(st, q, err, "link_load")) < 0)
            return rc;
    }
    for (int32_t r = 0; r < p->n_rounds; r++) {
        q = s[S_PROUND];
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int(q, 2, r);
        sqlite3_bind_double(q, 3, p->round_start[r]);
        sqlite3_bind_double(q, 4, p->round_finish[r]);
        if ((rc = rf_store_step(st, q, err, "predicted_round")) < 0)
            return rc;
    }
    for (int ph = 0; ph < RF_SIM_PHASE_COUNT; ph++) {
        if (p->phase_bytes[ph] == 0)
            continue;
        q = s[S_PPHASE];
        sqlite3_bind_int64(q, 1, run);
        rf_store_bind_text(q, 2, rf_sim_phase_name((enum rf_sim_phase)ph));
        sqlite3_bind_double(q, 3, p->phase_start[ph]);
        sqlite3_bind_double(q, 4, p->phase_finish[ph]);
        sqlite3_bind_int64(q, 5, p->phase_bytes[ph]);
        if ((rc = rf_store_step(st, q, err, "predicted_phase")) < 0)
            return rc;
    }
    return stp ? insert_step(st, s[S_STEP], run, stp, err) : 0;
}

/* Each side's memory line (sim/memory.h), when given. */
static int insert_memory(struct rf_store *st, sqlite3_stmt *q, int64_t run,
                         const struct rf_run_sim *sim, struct rf_error *err)
{
    const struct rf_side_memory *mem[2] = {sim->mem_train, sim->mem_infer};
    int rc;
    for (int k = 0; k < 2; k++) {
        const struct rf_side_memory *m = mem[k];
        if (!m)
            continue;
        int64_t v[] = {m->worst.gpu,       m->worst.stage,    m->worst.weights, m->worst.grads,
                       m->worst.optimizer, m->worst.staging,  m->worst.total,   m->hbm_bytes,
                       m->budget_bytes,    m->headroom_bytes, m->fits};
        sqlite3_bind_int64(q, 1, run);
        rf_store_bind_text(q, 2, k == 0 ? "train" : "infer");
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
            sqlite3_bind_int64(q, 3 + (int)i, v[i]);
        if ((rc = rf_store_step(st, q, err, "memory")) < 0)
            return rc;
    }
    return 0;
}

/* A step is part of a prediction (its transfer phase is the simulated wire) and its phases
 * fit their array: checked before anything is written. */
static int check_step(const struct rf_run_sim *sim, struct rf_error *err)
{
    if (!sim->step)
        return 0;
    if (!sim->prediction)
        return rf_error_set(err, RF_EINVAL,
                            "rf_run_sim.step: a step needs the prediction it extends "
                            "(rf_run_sim.prediction is NULL)");
    if (sim->step->n > RF_STEP_PHASES_MAX)
        return rf_error_set(err, RF_EINVAL, "rf_run_sim.step: %zu phases, at most %d", sim->step->n,
                            RF_STEP_PHASES_MAX);
    return 0;
}

/* The simulator's rows of run `run`, inside rf_store_save_plan's transaction: statements
 * prepared here (after the writer turned foreign keys off for the run) and finalized. */
static int write_sim(struct rf_store *st, int64_t run, void *ctx, struct rf_error *err)
{
    const struct rf_run_sim *sim = ctx;
    sqlite3_stmt *s[S_COUNT] = {NULL};
    int rc = 0;
    for (int i = 0; i < S_COUNT && rc == 0; i++)
        if (sqlite3_prepare_v2(st->db, insert_sql[i], -1, &s[i], NULL) != SQLITE_OK)
            rc = rf_store_db_error(st, err, "prepare");
    if (rc == 0 && sim->prediction)
        rc =
            insert_prediction(st, s, run, sim->topo, sim->prediction, sim->step, sim->overlap, err);
    if (rc == 0)
        rc = insert_memory(st, s[S_MEMORY], run, sim, err);
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(s[i]);
    return rc;
}

int rf_store_save_run(struct rf_store *st, const struct rf_run_info *info,
                      const struct rf_plan *plan, const struct rf_run_sim *sim, int64_t *run_id,
                      struct rf_error *err)
{
    struct rf_store_rows more = {.write = write_sim, .ctx = (void *)sim};
    struct rf_run_info with = *info;
    int rc;
    if (!sim)
        return rf_store_save_plan(st, info, plan, run_id, err);
    if (sim->prediction && !sim->topo)
        return rf_error_set(err, RF_EINVAL,
                            "rf_run_sim.topo: a prediction needs the topology it was computed "
                            "on (rf_run_sim.topo is NULL)");
    if ((rc = check_step(sim, err)) < 0)
        return rc;
    with.more = &more;
    return rf_store_save_plan(st, &with, plan, run_id, err);
}
