/* One run of a scenario as the plan, sim and run commands make it: load, plan (auto's search
 * or one strategy), schedule, predict, describe, then store in one transaction. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "auto.h"
#include "describe.h"
#include "refit_run.h"
#include "schedule.h"
#include "store.h"
#include "store_prediction.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Tells the progress hook (a terminal's line, sim/progress.h) that a phase starts. */
static void phase(const struct rf_sim_options *sim, const char *name)
{
    if (sim->progress)
        sim->progress(sim->progress_ctx, 0, 0, name);
}

/* The most workers, from `most` down to one, whose plans in flight fit limit (0: none). */
static int fitting_workers(int most, double one, double limit)
{
    while (limit > 0 && most > 1 && most * one > limit)
        most--;
    return most;
}

/* The run's memory estimated before any work, refused above sim->max_memory: its largest
 * arrays, the plan's boxes and transfer runs, and the larger of the schedule's pieces or,
 * when it simulates, a round's messages before they merge, for each plan in flight (auto's
 * workers each hold one; rf_plan_in_flight_bytes). The arrays that grow with the plan,
 * counted from its size (rf_plan_estimate, exact in boxes and deliveries), not the
 * process's peak: Kimi K3 2048 -> 4096 auto, 3.1 GB estimated and 1.9 GB measured
 * (messages merge early, rounds spread them); the quick start's reshard simulated, 0.13 GB
 * and 0.16 GB (the Lua state, the topology and the flows besides); Qwen3-8B onto 32,768
 * GPUs with 1 MB staging planned, 2.7 GB and 1.43 GB (runs that reach several GPUs). What
 * it is for is a refusal in a second where the plan would take the machine down:
 * DeepSeek-V3 from FSDP on 2048 GPUs to 1024, 818 M deliveries, 105 GB. Auto with more
 * workers than the limit holds runs with fewer (*workers; its result does not depend on
 * them) before it is refused: with one a run needs what a plain strategy's does. */
static int check_memory(const struct rf_scenario *sc, bool simulate,
                        const struct rf_sim_options *sim, struct rf_plan_size *size,
                        int64_t *estimate, int *workers_out, int64_t *left_out,
                        struct rf_error *err)
{
    bool broadcast = sc->strategy == RF_STRAT_BROADCAST;
    int rc = rf_plan_estimate(&sc->model, &sc->train, &sc->infer, broadcast, size, err);
    if (rc < 0)
        return rc;
    bool is_auto = sc->strategy == RF_STRAT_AUTO; /* auto simulates its candidates */
    bool simulated = simulate || is_auto;
    double limit = (double)sim->max_memory;
    double one = rf_plan_in_flight_bytes(size, simulated), b = 0;
    int workers = fitting_workers(is_auto ? rf_auto_threads(sim) : 1, one, limit);
    double need = workers * one;
    *left_out = 0;
    /* auto whose plans that reshard or relay do not fit chooses among broadcasts, when
     * those fit (sim/auto.c says why). */
    if (is_auto && limit > 0 && need > limit) {
        struct rf_plan_size bsize;
        if ((rc = rf_plan_estimate(&sc->model, &sc->train, &sc->infer, true, &bsize, err)) < 0)
            return rc;
        b = rf_plan_in_flight_bytes(&bsize, simulated);
        int bw = fitting_workers(rf_auto_threads(sim), b, limit);
        if (bw * b <= limit) {
            *size = bsize;
            *left_out = one < 9e18 ? (int64_t)one : INT64_MAX;
            workers = bw;
            need = bw * b;
        }
    }
    *workers_out = workers;
    *estimate = need < 9e18 ? (int64_t)need : INT64_MAX;
    if (limit <= 0 || need <= limit)
        return 0;
    char alone[96] = "";
    if (is_auto)
        snprintf(alone, sizeof(alone), "; broadcast alone, auto's fallback, %.3g GB", b / 1e9);
    return rf_error_set(err, RF_ENOMEM,
                        "%s: the run needs an estimated %.3g GB (%.3g M deliveries of %.3g M "
                        "boxes%s), more than the limit of %.3g GB (--max-memory, by default "
                        "three quarters of this machine's memory): nothing was planned",
                        sc->source, need / 1e9, (double)size->deliveries / 1e6,
                        (double)size->boxes / 1e6, alone, limit / 1e9);
}

/* Loads SCENARIO (with an optional strategy override), builds its cluster's topology and
 * builds and schedules its plan. For auto the search predicts every candidate, so the
 * winner's prediction comes back in pred (pred->n_links > 0); otherwise pred is untouched. */
static int plan_scenario(struct rf_lua *L, const struct rf_scenario_src *src, const char *strategy,
                         bool simulate, const struct rf_sim_options *sim, struct rf_scenario *sc,
                         struct rf_topology *topo, struct rf_cluster *alt_cluster,
                         struct rf_topology *alt, struct rf_plan *plan, struct rf_prediction *pred,
                         struct rf_auto_choice *choice, struct rf_plan_size *size,
                         int64_t *estimate, struct rf_error *err)
{
    int rc, workers = 1;
    int64_t left_out = 0;
    phase(sim, "load");
    if ((rc = rf_lua_load_scenario(L, src, strategy, sc, err)) < 0 ||
        (rc = rf_scenario_init_sides(sc, err)) < 0 ||
        (rc = rf_topology_init(topo, &sc->cluster, err)) < 0 ||
        (rc = check_memory(sc, simulate, sim, size, estimate, &workers, &left_out, err)) < 0)
        return rc;
    /* A profile says how its framework moves weights: a strategy it does not run has no
     * step to predict (refit's own plans are the profile-free scenario). Colocated sides run
     * the profile's colocated path, planned as reshard (models/lib/scenario.lua). */
    bool colocated = sc->framework.colocated_run && sc->strategy == RF_STRAT_RESHARD;
    bool p2p = sc->framework.p2p_run; /* strategy p2p, planned as its section says */
    if (sc->framework.present && !colocated && !p2p &&
        !(sc->framework.strategies & (1u << sc->strategy)))
        return rf_error_set(err, RF_ENOTSUP,
                            "%s: framework: %s does not run strategy %s (its profile %s lists "
                            "the ones it does; drop `framework` for refit's own plan)",
                            sc->source, sc->framework.name, rf_strategy_name(sc->strategy),
                            sc->framework.source);
    if (sc->strategy == RF_STRAT_AUTO) {
        /* The scenario's hybrid split is one of auto's candidates, unless the update is a
         * delta, which never broadcasts (plan_tensors.c). */
        struct rf_scenario hy = {0};
        if (!rf_model_has_delta(&sc->model) &&
            (rc = rf_lua_load_scenario(L, src, "hybrid", &hy, err)) < 0)
            return rc;
        /* PXN only matters where messages can change rails: several NICs per node. The
         * flipped copy shares the scenario cluster's strings (it owns nothing). */
        const struct rf_topology *alt_topo = NULL;
        *alt_cluster = sc->cluster;
        alt_cluster->fabric.pxn = !alt_cluster->fabric.pxn;
        if (sc->cluster.nic.per_node > 1) {
            if ((rc = rf_topology_init(alt, alt_cluster, err)) < 0)
                return rc;
            alt_topo = alt;
        }
        struct rf_auto_input in = {.alt_topo = alt_topo,
                                   .model = &sc->model,
                                   .train = &sc->train,
                                   .infer = &sc->infer,
                                   .topo = topo,
                                   .staging_bytes = sc->staging_bytes,
                                   .chunk_bytes = sc->chunk_bytes,
                                   .relay = sc->relay,
                                   .sources = sc->sources,
                                   .hybrid = hy.tensor_strategy,
                                   .broadcast_only = left_out > 0,
                                   .left_out_bytes = left_out,
                                   .sim = *sim};
        in.sim.threads = workers;
        rc = rf_auto(&in, plan, pred, choice, err);
        rf_scenario_release(&hy);
        return rc;
    }
    const struct rf_framework *fw = &sc->framework;
    struct rf_plan_opts opts = {.topo = topo, .sources = sc->sources, .relay = sc->relay};
    rf_plan_opts_profile(&opts, fw);
    phase(sim, "plan");
    if ((rc = rf_plan_build(plan, &sc->model, &sc->train, &sc->infer, sc->strategy,
                            sc->tensor_strategy, &opts, err)) < 0)
        return rc;
    phase(sim, "schedule");
    return rf_schedule(plan,
                       &(struct rf_schedule_opts){.staging_bytes = sc->staging_bytes,
                                                  .chunk_bytes = sc->chunk_bytes,
                                                  .streams = (int32_t)sc->cluster.cal.streams},
                       err);
}

/* The run's description (sim/describe.h), with the fields the scenario overrode recorded
 * against its cluster's preset file as that file reads now. */
static int describe_run(struct rf_lua *L, struct refit_run *r, struct rf_error *err)
{
    struct rf_cluster preset;
    int rc = rf_lua_load_cluster(L, r->sc.cluster.source, &preset, err);
    if (rc < 0)
        return rc;
    struct rf_describe_input in = {.sc = &r->sc,
                                   .plan = &r->plan,
                                   .choice = r->plan.strategy == RF_STRAT_AUTO ? &r->choice : NULL,
                                   .preset = &preset};
    r->scenario_json = rf_describe_text(&in);
    rf_cluster_release(&preset);
    if (!r->scenario_json)
        return rf_error_set(err, RF_ENOMEM, "%s: out of memory describing the run", r->sc.source);
    return 0;
}

int refit_run_compute(struct rf_lua *L, const struct rf_scenario_src *src, const char *strategy,
                      bool simulate, const struct rf_sim_options *sim, struct refit_run *r,
                      struct rf_error *err)
{
    r->t0 = now();
    int rc = plan_scenario(L, src, strategy, simulate, sim, &r->sc, &r->topo, &r->alt_cluster,
                           &r->alt_topo, &r->plan, &r->pred, &r->choice, &r->size,
                           &r->estimate_bytes, err);
    r->plan_seconds = now() - r->t0;
    r->used = r->choice.topo ? r->choice.topo : &r->topo;
    /* A progress line (a terminal only) is wiped first, so the warning starts its own line. */
    if (rc == 0 && r->sc.overcommitted && sim->progress)
        fputs("\r\033[K", stderr);
    if (rc == 0 && r->sc.overcommitted)
        fprintf(stderr,
                "refit: warning: %s: the layout does not fit in the GPUs' memory "
                "(allow_overcommit: a what-if)\n",
                r->sc.source);
    const struct rf_framework *fw = &r->sc.framework;
    if (rc == 0 && simulate && r->pred.n_links == 0) {
        /* Under a profile that exports whole tensors onto the root itself, the plan's
         * point-to-point gathers (kept so refit-exec can replay the run) are its export
         * phase, not wire. */
        struct rf_sim_options o = *sim;
        o.skip_gather = rf_framework_skips_gather(fw);
        phase(sim, "simulate");
        rc = rf_simulate(&r->plan, &r->sc.train, &r->sc.infer, &r->topo, &o, &r->pred, err);
        r->wire_s = r->pred.predicted_s;
        if (rc == 0 && fw->present &&
            (rc = rf_step_predict(&r->plan, &r->sc.train, &r->sc.infer, &r->topo, fw, &o, &r->pred,
                                  &r->step, err)) == 0)
            r->pred.predicted_s = r->step.total_s;
    }
    /* The refit overlapped with generation: the plan simulated again as the engines share
     * it (sim/overlap.h), beside the whole refit's prediction. */
    if (rc == 0 && simulate && r->sc.overlap.on) {
        struct rf_sim_options o = *sim;
        o.skip_gather = rf_framework_skips_gather(fw);
        phase(sim, "overlap");
        rc = rf_overlap_predict(&r->sc.overlap, &r->plan, &r->sc.train, &r->sc.infer, r->used, &o,
                                r->pred.predicted_s, &r->overlap, err);
    }
    if (rc == 0) {
        phase(sim, "describe");
        rc = describe_run(L, r, err);
    }
    return rc;
}

int refit_run_store(struct lazy_store *ls, const char *label, struct refit_run *r,
                    struct rf_error *err)
{
    int rc = lazy_store_get(ls, err);
    if (rc == 0) {
        struct rf_run_info info = {.label = label,
                                   .scenario = r->sc.source,
                                   .model = r->sc.model.name,
                                   .cluster_system = r->sc.cluster_system,
                                   .cluster_nodes = r->sc.cluster_nodes,
                                   .train = &r->sc.train,
                                   .infer = &r->sc.infer,
                                   .plan_seconds = r->plan_seconds,
                                   .scenario_json = r->scenario_json,
                                   .summary = r->summary,
                                   .study = r->study};
        struct rf_run_sim sim = {.prediction = r->pred.n_links ? &r->pred : NULL,
                                 .topo = r->used,
                                 .mem_train = &r->sc.mem_train,
                                 .mem_infer = &r->sc.mem_infer,
                                 .step = r->step.n > 0 ? &r->step : NULL,
                                 .overlap = r->sc.overlap.on ? &r->overlap : NULL};
        rc = rf_store_save_run(&ls->st, &info, &r->plan, &sim, &r->id, err);
    }
    r->seconds = now() - r->t0;
    return rc;
}

void refit_run_release(struct refit_run *r)
{
    free(r->scenario_json);
    rf_prediction_release(&r->pred);
    rf_topology_release(&r->alt_topo);
    rf_topology_release(&r->topo);
    rf_plan_release(&r->plan);
    rf_scenario_release(&r->sc);
}
