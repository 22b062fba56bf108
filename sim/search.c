/* Layout search (sim/search.h): candidates from models/lib/search.lua, memory from
 * sim/memory.c, cheap predictions from the simulator's bound mode (auto: its screen), the
 * best few simulated in full through the caller's run hook, which stores them. */
#include "search.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "auto.h"
#include "schedule.h"
#include "search_lua.h"
#include "step.h"

/* Worker threads at most; each estimate holds one plan or, for auto, two. */
#define MAX_THREADS 8

void rf_search_layout_text(const struct rf_search_row *r, char *buf, size_t size)
{
    snprintf(buf, size, "tp%lld dp%lld pp%lld ep%lld", (long long)r->tp, (long long)r->dp,
             (long long)r->pp, (long long)r->ep);
}

/* A named strategy: the plan `refit sim --strategy S` would build, bounded and estimated on
 * the scenario's cluster as it is (PXN as configured: that is what it would simulate). */
static int estimate_named(struct rf_scenario *sc, const struct rf_topology *topo,
                          const struct rf_sim_options *sim, double tolerance,
                          struct rf_estimate *out, struct rf_error *err)
{
    struct rf_plan plan = {0};
    /* Under a profile, the plan and the wire `refit sim` builds for it (sim/refit_run.c):
     * its broadcast communicator and root, its wire dtype, and no point-to-point gathers
     * where its export puts whole tensors on the root another way. */
    const struct rf_framework *fw = &sc->framework;
    struct rf_plan_opts opts = {.topo = topo, .sources = sc->sources, .relay = sc->relay};
    rf_plan_opts_profile(&opts, fw);
    struct rf_sim_options o = *sim;
    o.skip_gather = rf_framework_skips_gather(fw);
    const struct rf_topology *topos[1] = {topo};
    int rc;
    if ((rc = rf_plan_build(&plan, &sc->model, &sc->train, &sc->infer, sc->strategy,
                            sc->tensor_strategy, &opts, err)) < 0)
        return rc;
    if ((rc = rf_schedule(&plan,
                          &(struct rf_schedule_opts){.staging_bytes = sc->staging_bytes,
                                                     .chunk_bytes = sc->chunk_bytes,
                                                     .streams = (int32_t)sc->cluster.cal.streams},
                          err)) < 0 ||
        (rc = rf_simulate_bound(&plan, &sc->train, &sc->infer, topos, 1, &o, &(double){0},
                                &out->estimate_s, err)) < 0 ||
        (rc = rf_lower_bound(&plan, &sc->train, &sc->infer, topo, &out->bound_s, err)) < 0)
        goto out;
    out->bound_s *= 1 - 2 * tolerance;
    /* The whole step around that wire, when the profile runs the strategy (else `refit sim`
     * refuses the layout, and so will the search's full simulation). */
    if (fw->present && (fw->strategies & (1u << sc->strategy))) {
        struct rf_step step;
        if ((rc = rf_step_estimate(&plan, &sc->train, &sc->infer, topo, fw, &o, out->estimate_s,
                                   &step, err)) < 0)
            goto out;
        out->step_s = step.total_s;
    }
    snprintf(out->how, sizeof(out->how), "%s", rf_strategy_name(sc->strategy));
out:
    rf_plan_release(&plan);
    return rc;
}

int rf_estimate(struct rf_scenario *sc, const struct rf_sim_options *sim, struct rf_estimate *out,
                struct rf_error *err)
{
    struct rf_topology topo = {0}, alt = {0};
    struct rf_cluster alt_cluster = sc->cluster; /* shares sc's strings, owns nothing */
    double tolerance;
    int rc;
    memset(out, 0, sizeof(*out));
    out->step_s = NAN;
    if ((rc = rf_sim_options_tolerance(sim, &tolerance, err)) < 0 ||
        (rc = rf_topology_init(&topo, &sc->cluster, err)) < 0)
        goto out;
    if (sc->strategy != RF_STRAT_AUTO) {
        rc = estimate_named(sc, &topo, sim, tolerance, out, err);
        goto out;
    }
    /* As `refit sim` sets auto up (sim/refit.c): PXN flipped only where messages can change
     * rails, several NICs per node. */
    alt_cluster.fabric.pxn = !alt_cluster.fabric.pxn;
    if (sc->cluster.nic.per_node > 1 && (rc = rf_topology_init(&alt, &alt_cluster, err)) < 0)
        goto out;
    struct rf_auto_input in = {.alt_topo = sc->cluster.nic.per_node > 1 ? &alt : NULL,
                               .model = &sc->model,
                               .train = &sc->train,
                               .infer = &sc->infer,
                               .topo = &topo,
                               .staging_bytes = sc->staging_bytes,
                               .chunk_bytes = sc->chunk_bytes,
                               .relay = sc->relay,
                               .sources = sc->sources,
                               .sim = *sim};
    struct rf_auto_screen screen;
    if ((rc = rf_auto_screen(&in, &screen, err)) < 0)
        goto out;
    out->bound_s = screen.lower_bound_s;
    out->estimate_s = screen.estimate_s;
    snprintf(out->how, sizeof(out->how), "%s", screen.description);
out:
    rf_topology_release(&alt);
    rf_topology_release(&topo);
    return rc;
}

/* ---- The estimates of the fitting rows, on worker threads ---- */

struct task {
    struct rf_search_row *row;
    struct rf_scenario sc; /* loaded on the main thread (Lua is single-threaded) */
    bool skip;             /* its plan does not fit max_memory: not estimated */
    int rc;
    struct rf_error err;
};

struct pool {
    struct task *tasks;
    size_t n, done;
    atomic_size_t next;
    struct rf_sim_options sim; /* each estimate's own: one thread when the pool has several */
    const struct rf_search_hooks *hooks;
    pthread_mutex_t lock; /* progress reports, one at a time and in order of completion */
};

static void *worker(void *arg)
{
    struct pool *p = arg;
    for (;;) {
        size_t i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n)
            return NULL;
        struct task *t = &p->tasks[i];
        struct rf_estimate e;
        t->rc = t->skip ? 0 : rf_estimate(&t->sc, &p->sim, &e, &t->err);
        if (t->rc == 0 && !t->skip) {
            t->row->bound_s = e.bound_s;
            t->row->estimate_s = e.estimate_s;
            t->row->estimate_step_s = e.step_s;
            snprintf(t->row->how, sizeof(t->row->how), "%s", e.how);
        }
        rf_scenario_release(&t->sc);
        pthread_mutex_lock(&p->lock);
        p->done++;
        if (p->hooks->progress)
            p->hooks->progress(p->hooks->progress_ctx, 0, p->done, p->n, t->row);
        pthread_mutex_unlock(&p->lock);
    }
}

static int threads_of(const struct rf_sim_options *sim)
{
    int n = sim->threads;
    if (n <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n = cpus >= 2 ? 2 : 1;
    }
    return n > MAX_THREADS ? MAX_THREADS : n;
}

/* Each task's plan estimated before it is built (the bound mode builds and schedules one,
 * auto's screen one at a time): a task whose plan needs more than sim->max_memory is skipped
 * and its row marked; the threads are as many as the largest of the others allows. Returns
 * the threads, at least one. */
static int fit_memory(struct task *tasks, size_t n, const struct rf_sim_options *sim,
                      struct rf_error *err)
{
    double limit = (double)sim->max_memory, most = 0;
    int threads = threads_of(sim);
    for (size_t i = 0; i < n; i++) {
        struct rf_scenario *sc = &tasks[i].sc;
        struct rf_plan_size size;
        int rc = rf_plan_estimate(&sc->model, &sc->train, &sc->infer,
                                  sc->strategy == RF_STRAT_BROADCAST, &size, err);
        if (rc < 0)
            return rc;
        double need = rf_plan_in_flight_bytes(&size, true);
        tasks[i].row->need_bytes = need < 9e18 ? (int64_t)need : INT64_MAX;
        tasks[i].skip = tasks[i].row->too_large = limit > 0 && need > limit;
        if (!tasks[i].skip && need > most)
            most = need;
    }
    while (limit > 0 && threads > 1 && threads * most > limit)
        threads--;
    return threads;
}

/* Estimates every task; the first failure in task order is reported, with its layout. */
static int estimate_all(struct task *tasks, size_t n, const struct rf_sim_options *sim,
                        const struct rf_search_hooks *hooks, struct rf_error *err)
{
    struct pool p = {.tasks = tasks, .n = n, .sim = *sim, .hooks = hooks};
    int threads = fit_memory(tasks, n, sim, err), started = 0;
    if (threads < 0)
        return threads;
    pthread_t th[MAX_THREADS];
    /* Layouts in parallel rather than auto's candidates within one: the same cores, and a
     * plan's serial parts (scheduling) overlap too. */
    if (threads > 1)
        p.sim.threads = 1;
    atomic_init(&p.next, 0);
    if (pthread_mutex_init(&p.lock, NULL) != 0)
        return rf_error_set(err, RF_ENOMEM, "cannot create a mutex");
    for (int i = 1; i < threads && (size_t)i < n; i++)
        if (pthread_create(&th[started], NULL, worker, &p) == 0)
            started++;
    worker(&p);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&p.lock);
    for (size_t i = 0; i < n; i++)
        if (tasks[i].rc < 0) {
            char layout[64];
            rf_search_layout_text(tasks[i].row, layout, sizeof(layout));
            return rf_error_set(err, tasks[i].rc, "%s (layout %s, %s, %lld GPUs)", tasks[i].err.msg,
                                layout, rf_dtype_name(tasks[i].row->dtype),
                                (long long)tasks[i].row->gpus);
        }
    return 0;
}

/* ---- Ranking ---- */

/* What ranks an estimated row: its step under a profile (the time the user waits for), else
 * its wire. */
static double estimate_key(const struct rf_search_row *r)
{
    return isnan(r->estimate_step_s) ? r->estimate_s : r->estimate_step_s;
}

static int cmp_estimate(const void *a, const void *b)
{
    const struct rf_search_row *x = *(struct rf_search_row *const *)a;
    const struct rf_search_row *y = *(struct rf_search_row *const *)b;
    double fx = estimate_key(x), fy = estimate_key(y);
    if (fx != fy)
        return fx < fy ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Simulated rows first, by prediction (under a profile `refit sim` stores the step as the
 * prediction: sim/refit_run.c), then the others by estimate. */
static int cmp_final(const void *a, const void *b)
{
    const struct rf_search_row *x = a, *y = b;
    if (x->simulated != y->simulated)
        return x->simulated ? -1 : 1;
    double fx = x->simulated ? x->run.predicted_s : estimate_key(x);
    double fy = y->simulated ? y->run.predicted_s : estimate_key(y);
    if (fx != fy)
        return fx < fy ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static void copy_str(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src ? src : "");
}

/* Loads every candidate and computes its memory; the fitting ones become tasks. The first
 * one loaded also describes the search (model, cluster, training side, which must fit). */
static int load_all(struct rf_lua *L, struct rf_search_result *out, const char *strategy,
                    struct task *tasks, size_t *n_tasks, struct rf_error *err)
{
    *n_tasks = 0;
    for (size_t i = 0; i < out->n_rows; i++) {
        struct rf_search_row *row = &out->rows[i];
        struct rf_scenario sc;
        int rc =
            rf_lua_load_scenario(L, &(struct rf_scenario_src){.ref = row->ref}, strategy, &sc, err);
        if (rc < 0)
            return rc;
        /* The inference side is the search's to judge: computed, never refused here. */
        bool allow = sc.allow_overcommit;
        sc.allow_overcommit = true;
        if ((rc = rf_scenario_init_sides(&sc, err)) < 0) {
            rf_scenario_release(&sc);
            return rc;
        }
        if (i == 0) {
            copy_str(out->source, sizeof(out->source), sc.source);
            copy_str(out->model, sizeof(out->model), sc.model.name);
            copy_str(out->cluster, sizeof(out->cluster), sc.cluster_system);
            copy_str(out->strategy, sizeof(out->strategy), rf_strategy_name(sc.strategy));
            copy_str(out->framework, sizeof(out->framework),
                     sc.framework.present ? sc.framework.name : NULL);
            out->train = sc.train;
            out->train.stage_layers = out->train.layer_stage = NULL; /* sizes only */
            out->mem_train = sc.mem_train;
            if (!sc.mem_train.fits && !allow) {
                rc = rf_memory_refuse(&sc.mem_train, true, sc.fit_site[0], NULL, err);
                rf_scenario_release(&sc);
                return rc;
            }
        }
        row->mem = sc.mem_infer;
        row->fits = sc.mem_infer.fits;
        if (row->fits) {
            tasks[*n_tasks].row = row;
            tasks[(*n_tasks)++].sc = sc;
        } else {
            rf_scenario_release(&sc);
        }
    }
    return 0;
}

int rf_search(struct rf_lua *L, const struct rf_scenario_src *src,
              const struct rf_search_request *req, const struct rf_sim_options *sim,
              const struct rf_search_hooks *hooks, struct rf_search_result *out,
              struct rf_error *err)
{
    struct task *tasks = NULL;
    struct rf_search_row **order = NULL;
    size_t n_tasks = 0;
    int rc;
    memset(out, 0, sizeof(*out));
    copy_str(out->label, sizeof(out->label), req->label ? req->label : "search");
    if ((rc = rf_lua_search_layouts(L, src, req, &out->rows, &out->n_rows, err)) < 0)
        goto out;
    out->enumerated = out->n_rows;
    if (out->n_rows == 0)
        goto out;
    for (size_t i = 0; i < out->n_rows; i++) {
        out->rows[i].estimate_s = INFINITY;
        out->rows[i].estimate_step_s = NAN;
    }
    tasks = calloc(out->n_rows, sizeof(*tasks));
    order = calloc(out->n_rows, sizeof(*order));
    if (!tasks || !order) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = load_all(L, out, req->strategy, tasks, &n_tasks, err)) < 0)
        goto out;
    /* Each phase starts with done = 0, so the caller's clock (its ETA) starts there. */
    if (hooks->progress)
        hooks->progress(hooks->progress_ctx, 0, 0, n_tasks, NULL);
    if ((rc = estimate_all(tasks, n_tasks, sim, hooks, err)) < 0)
        goto out;

    /* The best estimates, simulated in full in rank order and stored one by one: a failure
     * leaves the runs stored before it (each is its own transaction). */
    for (size_t i = 0; i < n_tasks; i++)
        order[i] = tasks[i].row;
    qsort(order, n_tasks, sizeof(*order), cmp_estimate);
    size_t top = req->top < (int64_t)n_tasks ? (size_t)req->top : n_tasks;
    /* Layouts left out for memory rank last and are never simulated. */
    while (top > 0 && order[top - 1]->too_large)
        top--;
    if (hooks->progress && top > 0)
        hooks->progress(hooks->progress_ctx, 1, 0, top, NULL);
    for (size_t k = 0; k < top; k++) {
        struct rf_search_row *row = order[k];
        if ((rc = hooks->run(hooks->run_ctx, &(struct rf_scenario_src){.ref = row->ref},
                             req->strategy, out->label, true, &row->run, err)) < 0)
            goto out;
        row->simulated = true;
        out->simulated++;
        if (!out->first_run)
            out->first_run = row->run.run_id;
        out->last_run = row->run.run_id;
        if (hooks->progress)
            hooks->progress(hooks->progress_ctx, 1, k + 1, top, row);
    }

    /* Only the fitting rows stay, ranked. */
    size_t kept = 0;
    for (size_t i = 0; i < out->n_rows; i++) {
        if (out->rows[i].fits)
            out->rows[kept++] = out->rows[i];
        else
            rf_lua_unref(L, out->rows[i].ref);
    }
    out->n_rows = kept;
    qsort(out->rows, out->n_rows, sizeof(*out->rows), cmp_final);
    rc = 0;
out:
    for (size_t i = 0; tasks && i < n_tasks; i++)
        rf_scenario_release(&tasks[i].sc);
    free(tasks);
    free(order);
    if (rc < 0)
        rf_search_result_release(L, out);
    return rc;
}

void rf_search_result_release(struct rf_lua *L, struct rf_search_result *r)
{
    for (size_t i = 0; r->rows && i < r->n_rows; i++)
        rf_lua_unref(L, r->rows[i].ref);
    free(r->rows);
    r->rows = NULL;
    r->n_rows = 0;
}
