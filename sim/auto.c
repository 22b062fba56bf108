/* auto: a search over whole-plan candidates that stays within seconds per candidate at Kimi
 * K3 scale, where one full prediction simulates 7 M messages (about 18 s on one core):
 *
 * 1. Candidates: reshard and hierarchical, each with local and balanced sources, the
 *    scenario's hybrid split and broadcast (with the scenario's sources) are planned,
 *    scheduled and bounded by rf_simulate_bound on the scenario's cluster and with PXN
 *    flipped, on worker threads.
 * 2. A greedy pass per role, largest first, over the best-bounded candidate: the role is
 *    moved to each other strategy. The mix is screened by its busiest link (the
 *    incumbent's per-role link loads, with the moved role's row taken from the uniform
 *    plan of the new strategy) and planned and bounded only when that beats the
 *    incumbent's bound; it replaces the incumbent when its own bound is lower.
 * 3. Predictions: the two lowest bounds are simulated in full (in parallel), then every
 *    named strategy, planned as `refit sim --strategy S` plans it, whose bound is below the
 *    best prediction: auto never predicts slower than any of them.
 *
 * Ranking by bound rests on its tightness: on Kimi K3 2048 -> 4096 GPUs it lies within 6%
 * of the prediction for every candidate (the busiest NIC dominates), while candidates
 * differ by up to 4x. Where bounds tie closely, predicting the runner-up too catches a
 * misranking of the top two. */
#include "auto.h"

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "schedule.h"

/* How many candidates are predicted in full on estimate rank alone: the best estimate and the
 * best of the other kind (relayed or direct; see step 3). Named strategies come on top when
 * their bound does not rule them out. */
#define PREDICT_TOP 2
/* At most this many worker threads (and predictions at once). */
#define MAX_THREADS 8

struct cand {
    enum rf_strategy *ts;    /* per tensor, owned */
    enum rf_sources sources; /* how replicated sources are chosen */
    struct rf_relay relay;   /* hierarchical's relays between domains */
    bool named;              /* planned exactly as `refit sim --strategy S` plans it */
    bool planned;
    struct rf_plan plan;  /* scheduled, while planned */
    double bound[2];      /* on topo[0] (the scenario's) and topo[1] (PXN flipped) */
    double estimate[2];   /* the same rounds, links first come first served */
    double pred[2];       /* NAN until predicted */
    double *loads[2];     /* per-role link loads, once computed */
    uint64_t fingerprint; /* of the scheduled plan's transfers and collectives */
    int same_as;          /* an earlier candidate with the very same plan, or -1 */
};

struct search {
    const struct rf_auto_input *in;
    const struct rf_topology *topo[2];
    int n_topo;
    int threads;
    double tolerance; /* in->sim's, checked */
    struct cand c[RF_AUTO_MAX_CANDIDATES];
    int n;
    int best_c, best_t; /* best prediction so far; best_c < 0 before any */
    struct rf_prediction best_pred;
    struct rf_error *err;
};

/* ---- Work on one candidate; each may run on a worker thread ---- */

enum task_kind { TASK_BOUND, TASK_LOADS, TASK_PREDICT };

struct task {
    enum task_kind kind;
    int c, t;
    int rc;
    struct rf_prediction pred;
    struct rf_error err;
};

/* Mixes often come out identical to a candidate already seen (moving the experts of a
 * model whose expert shards have one destination per NVLink domain from hierarchical to
 * reshard changes nothing): a hash of the schedule finds them, so that no plan is
 * predicted twice. */
static uint64_t mix64(uint64_t h, uint64_t x)
{
    h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdULL;
}

static uint64_t fingerprint(const struct rf_plan *p)
{
    uint64_t h = mix64((uint64_t)p->n_transfers, (uint64_t)p->n_collectives);
    h = mix64(h, (uint64_t)p->n_rounds);
    for (size_t i = 0; i < p->n_transfers; i++) {
        const struct rf_transfer *t = &p->transfers[i];
        h = mix64(h, (uint64_t)t->box << 32 | (uint32_t)t->src);
        h = mix64(h, (uint64_t)(uint32_t)t->dst << 32 | (uint32_t)t->dst_count);
        h = mix64(h, (uint64_t)(uint32_t)t->dst_stride << 32 | (uint32_t)t->round);
        h = mix64(h, (uint64_t)t->bytes ^ (uint64_t)t->phase << 56 ^ (uint64_t)t->chain << 48);
        h = mix64(h, (uint64_t)(uint32_t)t->after);
    }
    for (size_t i = 0; i < p->n_collectives; i++) {
        const struct rf_collective *c = &p->collectives[i];
        h = mix64(h, (uint64_t)(uint32_t)c->tensor << 32 | (uint32_t)c->root);
        h = mix64(h, (uint64_t)(uint32_t)c->first_gpu << 32 | (uint32_t)c->gpu_count);
        h = mix64(h, (uint64_t)(uint32_t)c->gpu_stride << 32 | (uint32_t)c->round);
        h = mix64(h, (uint64_t)c->bytes);
    }
    return h;
}

static int ensure_plan(struct search *s, struct cand *c, struct rf_error *err)
{
    const struct rf_auto_input *in = s->in;
    struct rf_plan_opts opts = {.topo = in->topo, .sources = c->sources, .relay = c->relay};
    int rc;
    if (c->planned)
        return 0;
    if ((rc = rf_plan_build(&c->plan, in->model, in->train, in->infer, RF_STRAT_AUTO, c->ts, &opts,
                            err)) < 0)
        return rc;
    if ((rc = rf_schedule(
             &c->plan,
             &(struct rf_schedule_opts){.staging_bytes = in->staging_bytes,
                                        .chunk_bytes = in->chunk_bytes,
                                        .streams = (int32_t)in->topo->cluster->cal.streams},
             err)) < 0) {
        rf_plan_release(&c->plan);
        return rc;
    }
    c->planned = true;
    c->fingerprint = fingerprint(&c->plan);
    return 0;
}

static void run_task(struct search *s, struct task *k)
{
    const struct rf_auto_input *in = s->in;
    struct cand *c = &s->c[k->c];
    if ((k->rc = ensure_plan(s, c, &k->err)) < 0)
        return;
    switch (k->kind) {
    case TASK_BOUND:
        k->rc = rf_simulate_bound(&c->plan, in->train, in->infer, s->topo, s->n_topo, &in->sim,
                                  c->bound, c->estimate, &k->err);
        break;
    case TASK_LOADS:
        c->loads[k->t] = calloc((size_t)RF_ROLE_COUNT * s->topo[k->t]->n_links, sizeof(double));
        if (!c->loads[k->t]) {
            k->rc = rf_error_set(&k->err, RF_ENOMEM, "out of memory");
            break;
        }
        k->rc = rf_plan_role_loads(&c->plan, s->topo[k->t], c->loads[k->t], &k->err);
        break;
    case TASK_PREDICT:
        k->rc =
            rf_simulate(&c->plan, in->train, in->infer, s->topo[k->t], &in->sim, &k->pred, &k->err);
        if (k->rc == 0)
            c->pred[k->t] = k->pred.predicted_s;
        break;
    }
}

struct pool {
    struct search *s;
    struct task *tasks;
    int n;
    atomic_int next;
    pthread_mutex_t lock; /* progress reports, one at a time */
    int done;
    const char *phase;
};

/* What a batch's progress line says: a batch holds tasks of one kind. */
static const char *task_phase(const struct task *k)
{
    switch (k->kind) {
    case TASK_BOUND: return "auto: bounded candidate";
    case TASK_LOADS: return "auto: link loads of candidate";
    case TASK_PREDICT: return "auto: predicted candidate";
    }
    return "auto";
}

static void *worker(void *arg)
{
    struct pool *p = arg;
    const struct rf_sim_options *o = &p->s->in->sim;
    for (;;) {
        int i = atomic_fetch_add(&p->next, 1);
        if (i >= p->n)
            return NULL;
        run_task(p->s, &p->tasks[i]);
        if (o->progress) {
            pthread_mutex_lock(&p->lock);
            o->progress(o->progress_ctx, ++p->done, p->n, p->phase);
            pthread_mutex_unlock(&p->lock);
        }
    }
}

/* Runs the tasks on up to s->threads threads (this one included). Tasks touch only their
 * own candidate, and no two tasks of one batch share a candidate unless its plan is built
 * already. The first failure in task order is reported, whatever the timing. */
static int run_tasks(struct search *s, struct task *tasks, int n)
{
    struct pool p = {.s = s, .tasks = tasks, .n = n, .phase = n > 0 ? task_phase(&tasks[0]) : ""};
    pthread_t th[MAX_THREADS];
    int started = 0;
    atomic_init(&p.next, 0);
    pthread_mutex_init(&p.lock, NULL);
    if (s->in->sim.progress && n > 0)
        s->in->sim.progress(s->in->sim.progress_ctx, 0, n, p.phase);
    for (int i = 1; i < s->threads && i < n; i++)
        if (pthread_create(&th[started], NULL, worker, &p) == 0)
            started++;
    worker(&p);
    for (int i = 0; i < started; i++)
        pthread_join(th[i], NULL);
    pthread_mutex_destroy(&p.lock);
    for (int i = 0; i < n; i++)
        if (tasks[i].rc < 0) {
            *s->err = tasks[i].err;
            return tasks[i].rc;
        }
    return 0;
}

/* ---- Candidates ---- */

/* add_cand's answer when the table is full: not an error for the greedy pass, which keeps
 * what it found, but a limit the fixed candidates must never reach. */
#define CAND_FULL 1

/* The error of an add_cand that failed (rc CAND_FULL or RF_ENOMEM), for callers that must
 * add the candidate. */
static int add_cand_error(int rc, struct rf_error *err)
{
    if (rc == CAND_FULL)
        return rf_error_set(err, RF_EINVAL,
                            "auto: the candidate table (%d, RF_AUTO_MAX_CANDIDATES) is full",
                            RF_AUTO_MAX_CANDIDATES);
    return rf_error_set(err, RF_ENOMEM, "out of memory");
}

/* Adds a candidate (*out, when out is not NULL): 0, CAND_FULL, or RF_ENOMEM. */
static int add_cand(struct search *s, const enum rf_strategy *ts, enum rf_strategy all,
                    enum rf_sources sources, bool named, struct cand **out)
{
    size_t n = s->in->model->n_tensors;
    if (s->n == RF_AUTO_MAX_CANDIDATES)
        return CAND_FULL;
    struct cand *c = &s->c[s->n];
    memset(c, 0, sizeof(*c));
    if (!(c->ts = malloc((n + 1) * sizeof(*c->ts))))
        return RF_ENOMEM;
    for (size_t i = 0; i < n; i++)
        c->ts[i] = ts ? ts[i] : all;
    c->sources = sources;
    c->relay = s->in->relay;
    c->same_as = -1;
    c->named = named;
    for (int t = 0; t < 2; t++) {
        c->bound[t] = c->estimate[t] = INFINITY;
        c->pred[t] = NAN;
    }
    s->n++;
    if (out)
        *out = c;
    return 0;
}

static void cand_release(struct cand *c)
{
    if (c->planned)
        rf_plan_release(&c->plan);
    c->planned = false;
    free(c->ts);
    free(c->loads[0]);
    free(c->loads[1]);
    c->ts = NULL;
    c->loads[0] = c->loads[1] = NULL;
}

/* hierarchical's relay structures auto tries besides the scenario's: leaders fed by the
 * sources (M2N without its ring), the ring as one chain (M2N), and chains of at most 8
 * leader hops (a source feeds every ninth leader): more source egress, less pipeline fill.
 * Trees (fanout 2 and more) are left to the scenario: on Kimi K3 their simulation does
 * not finish in minutes yet (NEWS). */
static const struct rf_relay relays[] = {
    {.ring = false, .fanout = 1, .depth = 0},
    {.ring = true, .fanout = 1, .depth = 0},
    {.ring = true, .fanout = 1, .depth = 8},
};

static bool same_relay(const struct rf_relay *a, const struct rf_relay *b)
{
    int fa = a->fanout ? a->fanout : 1, fb = b->fanout ? b->fanout : 1;
    /* Without the ring, fanout and depth mean nothing. */
    return a->ring == b->ring && (!a->ring || (fa == fb && a->depth == b->depth));
}

/* The uniform candidate of strategy st with these sources, or -1. */
static int find_uniform(const struct search *s, enum rf_strategy st, enum rf_sources sources)
{
    for (int i = 0; i < s->n; i++) {
        const struct cand *c = &s->c[i];
        bool uniform = true;
        for (size_t k = 0; k < s->in->model->n_tensors && uniform; k++)
            uniform = c->ts[k] == st;
        if (uniform && (st == RF_STRAT_BROADCAST || c->sources == sources) &&
            (st != RF_STRAT_HIERARCHICAL || same_relay(&c->relay, &s->in->relay)))
            return i;
    }
    return -1;
}

/* Marks candidate i as the same plan as an earlier one, if it is. */
static void find_same(struct search *s, int i)
{
    for (int j = 0; j < i; j++)
        if (s->c[j].same_as < 0 && s->c[j].fingerprint == s->c[i].fingerprint) {
            /* A named strategy's plan stays named under whichever candidate holds it. */
            s->c[i].same_as = j;
            s->c[j].named |= s->c[i].named;
            return;
        }
}

/* Whether a candidate relays any tensor through domain leaders (hierarchical). */
static bool relayed(const struct search *s, const struct cand *c)
{
    for (size_t i = 0; i < s->in->model->n_tensors; i++)
        if (c->ts[i] == RF_STRAT_HIERARCHICAL)
            return true;
    return false;
}

/* The candidate and cluster with the lowest estimate. */
static void best_estimate(const struct search *s, int *bc, int *bt)
{
    *bc = *bt = -1;
    for (int i = 0; i < s->n; i++)
        for (int t = 0; t < s->n_topo; t++)
            if (*bc < 0 || s->c[i].estimate[t] < s->c[*bc].estimate[*bt])
                *bc = i, *bt = t;
}

/* Bounds the candidates from index first on, on worker threads. */
static int bound_new(struct search *s, int first)
{
    struct task tasks[RF_AUTO_MAX_CANDIDATES];
    int nt = 0, rc;
    for (int i = first; i < s->n; i++)
        tasks[nt++] = (struct task){.kind = TASK_BOUND, .c = i};
    if ((rc = run_tasks(s, tasks, nt)) < 0)
        return rc;
    for (int i = first; i < s->n; i++)
        find_same(s, i);
    return 0;
}

/* What a uniform broadcast needs at the least. Every collective spans all inference GPUs
 * from the training root in GPU order (plan_broadcast), a chain that round_chain routes
 * hop by hop, so every wire byte of the model crosses each hop of that one chain: the
 * narrowest NVLink or NIC port on it bounds the time, on either PXN setting. (The plan
 * itself costs seconds and gigabytes on Kimi K3, where this bound is 8x the best.) */
static double broadcast_bound(const struct search *s)
{
    const struct rf_auto_input *in = s->in;
    double bytes = 0, best = INFINITY;
    /* A delta update travels point to point only (plan_tensors.c): no broadcast. */
    if (rf_model_has_delta(in->model))
        return INFINITY;
    for (size_t i = 0; i < in->model->n_tensors; i++) {
        const struct rf_tensor *x = &in->model->tensors[i];
        enum rf_dtype dt =
            x->quant && rf_dtype_quantised(in->infer->dtype) ? in->infer->dtype : x->dtype;
        bytes += (double)rf_dtype_bytes(dt, rf_tensor_numel(x));
    }
    for (int t = 0; t < s->n_topo; t++) {
        const struct rf_topology *topo = s->topo[t];
        double slowest = INFINITY;
        int64_t prev = in->train->first_gpu;
        /* The chain of plan_broadcast: the side's span, idle GPUs included. */
        int64_t end = in->infer->first_gpu + in->infer->place.span;
        for (int64_t g = in->infer->first_gpu; g < end; g++) {
            struct rf_route r;
            if (g == in->train->first_gpu)
                continue;
            rf_topology_route(topo, prev, g, &r);
            for (int h = 0; h < r.n; h++) {
                enum rf_link_kind k = topo->links[r.link[h]].kind;
                bool port = k == RF_LINK_NVL_OUT || k == RF_LINK_NVL_IN || k == RF_LINK_NIC_OUT ||
                            k == RF_LINK_NIC_IN;
                if (port && topo->links[r.link[h]].capacity < slowest)
                    slowest = topo->links[r.link[h]].capacity;
            }
            prev = g;
        }
        double b = slowest < INFINITY ? bytes / slowest : 0;
        if (b < best)
            best = b;
    }
    return best * (1 - 2 * s->tolerance); /* the margin of rf_simulate_bound */
}

/* Step 2: the greedy pass per role over the best-bounded candidate. */
static int greedy_roles(struct search *s)
{
    const struct rf_auto_input *in = s->in;
    size_t n = in->model->n_tensors;
    int64_t role_params[RF_ROLE_COUNT] = {0}, total = 0;
    bool done[RF_ROLE_COUNT] = {false};
    static const enum rf_strategy alts[] = {RF_STRAT_RESHARD, RF_STRAT_HIERARCHICAL,
                                            RF_STRAT_BROADCAST};
    int inc, t, rc;

    for (size_t i = 0; i < n; i++) {
        role_params[in->model->tensors[i].role] += rf_tensor_numel(&in->model->tensors[i]);
        total += rf_tensor_numel(&in->model->tensors[i]);
    }
    best_estimate(s, &inc, &t);
    if (inc < 0)
        return 0;
    for (int pass = 0; pass < RF_ROLE_COUNT; pass++) {
        /* Roles under 1% of the parameters stay as they are: their bytes cannot move the
         * time much, and each mix that passes the screen costs a plan. */
        int role = -1;
        for (int r = 0; r < RF_ROLE_COUNT; r++)
            if (!done[r] && role_params[r] * 100 >= total &&
                (role < 0 || role_params[r] > role_params[role]))
                role = r;
        if (role < 0)
            break;
        done[role] = true;

        /* The rows the screen sums: the incumbent's, and each alternative's uniform plan. */
        struct task tasks[1 + sizeof(alts) / sizeof(alts[0])];
        int nt = 0, base[sizeof(alts) / sizeof(alts[0])];
        if (!s->c[inc].loads[t])
            tasks[nt++] = (struct task){.kind = TASK_LOADS, .c = inc, .t = t};
        for (size_t a = 0; a < sizeof(alts) / sizeof(alts[0]); a++) {
            base[a] = find_uniform(s, alts[a], s->c[inc].sources);
            if (base[a] >= 0 && base[a] != inc && !s->c[base[a]].loads[t])
                tasks[nt++] = (struct task){.kind = TASK_LOADS, .c = base[a], .t = t};
        }
        if ((rc = run_tasks(s, tasks, nt)) < 0)
            return rc;

        int next = inc;
        for (size_t a = 0; a < sizeof(alts) / sizeof(alts[0]); a++) {
            bool same = true;
            for (size_t i = 0; i < n; i++)
                if (in->model->tensors[i].role == (enum rf_role)role)
                    same &= s->c[inc].ts[i] == alts[a];
            if (same || base[a] < 0 || base[a] == inc)
                continue;
            const double *rows[RF_ROLE_COUNT];
            size_t nl = s->topo[t]->n_links;
            for (int r = 0; r < RF_ROLE_COUNT; r++)
                rows[r] = (r == role ? s->c[base[a]].loads[t] : s->c[inc].loads[t]) + r * nl;
            /* Both sides are bounds: the mix must relieve the busiest link. */
            if (rf_role_loads_bound(s->topo[t], rows) >= s->c[next].bound[t])
                continue;
            struct cand *m;
            if ((rc = add_cand(s, s->c[inc].ts, 0, s->c[inc].sources, false, &m)) == CAND_FULL)
                break; /* keep what was found */
            if (rc < 0)
                return add_cand_error(rc, s->err);
            m->relay = s->c[inc].relay;
            for (size_t i = 0; i < n; i++)
                if (in->model->tensors[i].role == (enum rf_role)role)
                    m->ts[i] = alts[a];
            struct task k = {.kind = TASK_BOUND, .c = s->n - 1};
            if ((rc = run_tasks(s, &k, 1)) < 0)
                return rc;
            find_same(s, s->n - 1);
            if (m->same_as < 0 && m->estimate[t] < s->c[next].estimate[t])
                next = s->n - 1;
        }
        inc = next;
    }
    return 0;
}

/* Predicts the given (candidate, cluster) pairs, at most s->threads at once, and keeps the
 * fastest prediction. Plans no longer needed are released by the caller. */
static int predict(struct search *s, const int (*pairs)[2], int n)
{
    struct task tasks[MAX_THREADS];
    int rc;
    for (int i = 0; i < n; i++)
        tasks[i] = (struct task){.kind = TASK_PREDICT, .c = pairs[i][0], .t = pairs[i][1]};
    rc = run_tasks(s, tasks, n);
    for (int i = 0; i < n; i++) {
        struct task *k = &tasks[i];
        if (rc == 0 && (s->best_c < 0 || k->pred.predicted_s < s->best_pred.predicted_s)) {
            if (s->best_c >= 0)
                rf_prediction_release(&s->best_pred);
            s->best_pred = k->pred;
            s->best_c = k->c;
            s->best_t = k->t;
        } else {
            rf_prediction_release(&k->pred);
        }
    }
    return rc;
}

/* Strategy per role, sources and PXN of a candidate, for the record and the run's label. */
/* Appends word to buf (len bytes used of size) whole, or, when it does not fit with room
 * left for the mark, " ..." once: a name is never cut mid-word. False once it is full. */
static bool append_word(char *buf, size_t size, size_t *len, const char *word)
{
    static const char mark[] = " ...";
    size_t n = strlen(word);
    if (*len + n + sizeof(mark) <= size) {
        memcpy(buf + *len, word, n + 1);
        *len += n;
        return true;
    }
    if (*len + sizeof(mark) <= size) {
        memcpy(buf + *len, mark, sizeof(mark));
        *len += sizeof(mark) - 1;
    }
    return false;
}

static void describe(const struct search *s, const struct cand *c, int t, char *buf, size_t size)
{
    const struct rf_model *m = s->in->model;
    char word[64];
    size_t len = 0;
    buf[0] = '\0';
    snprintf(word, sizeof(word), "pxn %s, %s sources",
             s->topo[t]->cluster->fabric.pxn ? "on" : "off (NCCL_PXN_DISABLE=1)",
             rf_sources_name(c->sources));
    if (!append_word(buf, size, &len, word))
        return;
    if (relayed(s, c) && !c->relay.ring)
        snprintf(word, sizeof(word), ", no ring:");
    else if (relayed(s, c))
        snprintf(word, sizeof(word), ", ring%s%.0d%s%.0d:", c->relay.fanout > 1 ? " fanout " : "",
                 c->relay.fanout > 1 ? c->relay.fanout : 0, c->relay.depth ? " depth " : "",
                 c->relay.depth);
    else
        snprintf(word, sizeof(word), ":");
    if (!append_word(buf, size, &len, word))
        return;
    for (int r = 0; r < RF_ROLE_COUNT; r++) {
        int first = -1;
        bool mixed = false;
        for (size_t i = 0; i < m->n_tensors; i++)
            if (m->tensors[i].role == (enum rf_role)r) {
                if (first < 0)
                    first = (int)c->ts[i];
                else if ((int)c->ts[i] != first)
                    mixed = true;
            }
        if (first < 0)
            continue;
        snprintf(word, sizeof(word), " %s=%s", rf_role_name((enum rf_role)r),
                 mixed ? "mixed" : rf_strategy_name((enum rf_strategy)first));
        if (!append_word(buf, size, &len, word))
            return;
    }
}

struct ranked {
    double estimate, bound;
    int c, t;
};

static int cmp_ranked(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;
    if (x->estimate != y->estimate)
        return x->estimate < y->estimate ? -1 : 1;
    return x->c != y->c ? x->c - y->c : x->t - y->t;
}

/* The search's state for in (freed with search_free). */
static int search_new(const struct rf_auto_input *in, struct search **out, struct rf_error *err)
{
    struct search *s = calloc(1, sizeof(*s));
    int rc;
    *out = NULL;
    if (!s)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    s->in = in;
    s->err = err;
    s->best_c = -1;
    s->topo[0] = in->topo;
    s->n_topo = 1;
    if (in->alt_topo)
        s->topo[s->n_topo++] = in->alt_topo;
    if ((rc = rf_sim_options_tolerance(&in->sim, &s->tolerance, err)) < 0) {
        free(s);
        return rc;
    }
    /* Two threads by default: each prediction in flight holds its flows (about 1.4 GB on
     * Kimi K3 at 6144 GPUs), and the machine has two cores. The caller may ask for
     * another count (the command's REFIT_THREADS); the result does not depend on it. */
    s->threads = rf_auto_threads(&in->sim);
    *out = s;
    return 0;
}

int rf_auto_threads(const struct rf_sim_options *sim)
{
    int threads = sim->threads;
    if (threads <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus >= 2 ? 2 : 1;
    }
    return threads > MAX_THREADS ? MAX_THREADS : threads;
}

static void search_free(struct search *s)
{
    if (!s)
        return;
    if (s->best_c >= 0)
        rf_prediction_release(&s->best_pred);
    for (int i = 0; i < s->n; i++)
        cand_release(&s->c[i]);
    free(s);
}

int rf_auto_screen(const struct rf_auto_input *in, struct rf_auto_screen *out, struct rf_error *err)
{
    static const enum rf_strategy uniform[] = {RF_STRAT_RESHARD, RF_STRAT_HIERARCHICAL};
    struct search *s;
    int rc, bc, bt;
    memset(out, 0, sizeof(*out));
    if ((rc = search_new(in, &s, err)) < 0)
        return rc;
    /* One candidate at a time, its plan released once bounded: a search estimates several
     * layouts at once, and one plan can be gigabytes (Kimi K3 in FP8 as 128 engines of
     * TP32 without EP on GB200: 10 GB with both plans held, 117 s). */
    for (size_t u = 0; u < sizeof(uniform) / sizeof(uniform[0]); u++) {
        struct cand *c;
        if ((rc = add_cand(s, NULL, uniform[u], in->sources, true, &c)) != 0) {
            rc = add_cand_error(rc, err);
            goto out;
        }
        if ((rc = bound_new(s, s->n - 1)) < 0)
            goto out;
        /* Any plan of these sides gives the strategy-independent bound (its tensors'
         * bytes); lowered by the simulator's margin, as a prediction's lower_bound_s is. */
        if (u == 0 && (rc = rf_lower_bound(&c->plan, in->train, in->infer, in->topo,
                                           &out->lower_bound_s, err)) < 0)
            goto out;
        rf_plan_release(&c->plan);
        c->planned = false;
    }
    out->lower_bound_s *= 1 - 2 * s->tolerance;
    best_estimate(s, &bc, &bt);
    out->estimate_s = s->c[bc].estimate[bt];
    out->bound_s = s->c[bc].bound[bt];
    describe(s, &s->c[bc], bt, out->description, sizeof(out->description));
out:
    search_free(s);
    return rc;
}

int rf_auto(const struct rf_auto_input *in, struct rf_plan *plan, struct rf_prediction *pred,
            struct rf_auto_choice *choice, struct rf_error *err)
{
    struct search *s;
    int rc;

    memset(choice, 0, sizeof(*choice));
    if ((rc = search_new(in, &s, err)) < 0)
        return rc;

    /* Under a memory limit that the plans which reshard or relay do not fit (DeepSeek-V3
     * from FSDP on 2048 GPUs: 818 M deliveries, 105 GB), auto chooses among broadcasts
     * (a gather per source cell: 0.25 GB there), each source choice on both clusters, and
     * says what it left out, rather than refusing the question. */
    bool have_broadcast = false;
    double bb = INFINITY;
    choice->left_out_bytes = in->broadcast_only ? in->left_out_bytes : 0;
    if (in->broadcast_only) {
        for (int src = 0; src < RF_SOURCES_COUNT; src++)
            if ((rc = add_cand(s, NULL, RF_STRAT_BROADCAST, (enum rf_sources)src,
                               (enum rf_sources)src == in->sources, NULL)) != 0)
                goto add_failed;
        if ((rc = bound_new(s, 0)) < 0)
            goto out;
        have_broadcast = true;
        goto predict_best;
    }

    /* Step 1: the named strategies and their other source choice, and hierarchical's
     * other relay structures with the scenario's sources, bounded. */
    static const enum rf_strategy uniform[] = {RF_STRAT_RESHARD, RF_STRAT_HIERARCHICAL};
    for (size_t u = 0; u < sizeof(uniform) / sizeof(uniform[0]); u++)
        for (int src = 0; src < RF_SOURCES_COUNT; src++)
            if ((rc = add_cand(s, NULL, uniform[u], (enum rf_sources)src,
                               (enum rf_sources)src == in->sources, NULL)) != 0)
                goto add_failed;
    for (size_t v = 0; v < sizeof(relays) / sizeof(relays[0]); v++) {
        if (same_relay(&relays[v], &in->relay))
            continue;
        struct cand *c;
        if ((rc = add_cand(s, NULL, RF_STRAT_HIERARCHICAL, in->sources, false, &c)) != 0)
            goto add_failed;
        c->relay = relays[v];
    }
    if (in->hybrid && (rc = add_cand(s, in->hybrid, 0, in->sources, true, NULL)) != 0)
        goto add_failed;
    if ((rc = bound_new(s, 0)) < 0)
        goto out;
    /* Broadcast joins when its chain bound is competitive, so that the greedy pass can
     * move roles to it; otherwise only the named check below may still need it. */
    bb = broadcast_bound(s);
    int bc, bt;
    best_estimate(s, &bc, &bt);
    have_broadcast = bb < s->c[bc].estimate[bt];
    if (have_broadcast) {
        int first = s->n;
        if ((rc = add_cand(s, NULL, RF_STRAT_BROADCAST, in->sources, true, NULL)) != 0)
            goto add_failed;
        if ((rc = bound_new(s, first)) < 0)
            goto out;
    }

    /* Step 2. */
    if ((rc = greedy_roles(s)) < 0)
        goto out;

    /* Step 3: the lowest bounds predicted in full, then the named strategies the best
     * prediction has not ruled out. */
predict_best:;
    struct ranked rank[2 * RF_AUTO_MAX_CANDIDATES];
    int nr = 0;
    for (int i = 0; i < s->n; i++)
        for (int t = 0; t < s->n_topo && s->c[i].same_as < 0; t++)
            rank[nr++] = (struct ranked){s->c[i].estimate[t], s->c[i].bound[t], i, t};
    qsort(rank, (size_t)nr, sizeof(*rank), cmp_ranked);
    /* The first pick is the best estimate; the second, predicted beside it, the best of the
     * other kind (relayed through domain leaders, or direct) when there is one, else the
     * runner-up, and either only when its bound is below the first's estimate: a bound at
     * or above it can hardly win, and the named check below still predicts it if its bound
     * is below the best prediction. Without one of the other kind, a named strategy that
     * check would predict anyway goes now, in parallel. The estimate serves rounds first come first
     * served and can misrank the kinds: on DeepSeek-V3 GB200 128 -> 128 the two best estimates were
     * hierarchical (0.945, 0.963 s; predicted 1.245, 1.264) while the best plan, reshard
     * without PXN, came third (1.003; predicted 1.056). */
    int pick[PREDICT_TOP], npick = 0;
    if (nr > 0)
        pick[npick++] = 0;
    for (int i = 1; i < nr && npick < PREDICT_TOP; i++)
        if (relayed(s, &s->c[rank[i].c]) != relayed(s, &s->c[rank[0].c]) &&
            rank[i].bound < rank[0].estimate)
            pick[npick++] = i;
    /* Else a named strategy the check below would predict anyway (in parallel now). */
    for (int i = 1; i < nr && npick < PREDICT_TOP; i++)
        if (s->c[rank[i].c].named && rank[i].t == 0 && rank[i].c != rank[0].c &&
            rank[i].bound < rank[0].estimate)
            pick[npick++] = i;
    if (npick < PREDICT_TOP && nr > 1 && rank[1].bound < rank[0].estimate)
        pick[npick++] = 1;
    /* Only the plans about to be predicted stay in memory; a named strategy predicted
     * later is planned again (the broadcast plan alone is 0.3 GB on Kimi K3). */
    for (int i = 0; i < s->n; i++) {
        bool top = false;
        for (int k = 0; k < npick; k++)
            top |= rank[pick[k]].c == i;
        if (!top && s->c[i].planned) {
            rf_plan_release(&s->c[i].plan);
            s->c[i].planned = false;
        }
    }
    {
        int pairs[PREDICT_TOP][2];
        for (int k = 0; k < npick; k++)
            pairs[k][0] = rank[pick[k]].c, pairs[k][1] = rank[pick[k]].t;
        if ((rc = predict(s, (const int(*)[2])pairs, npick)) < 0)
            goto out;
    }
    if (!have_broadcast && bb < s->best_pred.predicted_s) {
        int first = s->n;
        if ((rc = add_cand(s, NULL, RF_STRAT_BROADCAST, in->sources, true, NULL)) != 0)
            goto add_failed;
        if ((rc = bound_new(s, first)) < 0)
            goto out;
        if (s->c[first].same_as < 0)
            rank[nr++] = (struct ranked){s->c[first].estimate[0], s->c[first].bound[0], first, 0};
    }
    for (;;) {
        int pairs[2 * RF_AUTO_MAX_CANDIDATES][2], np = 0;
        for (int i = 0; i < nr; i++) {
            struct cand *c = &s->c[rank[i].c];
            if (c->named && rank[i].t == 0 && isnan(c->pred[0]) &&
                rank[i].bound < s->best_pred.predicted_s && np < s->threads && np < MAX_THREADS)
                pairs[np][0] = rank[i].c, pairs[np++][1] = 0;
        }
        if (np == 0)
            break;
        if ((rc = predict(s, (const int(*)[2])pairs, np)) < 0)
            goto out;
    }

    /* The record: every candidate, its bound and (when predicted) its prediction. */
    for (int i = 0; i < s->n; i++)
        for (int t = 0; t < s->n_topo && choice->n_candidates < 2 * RF_AUTO_MAX_CANDIDATES; t++) {
            struct rf_auto_candidate *r = &choice->candidates[choice->n_candidates++];
            const struct cand *o = &s->c[s->c[i].same_as >= 0 ? s->c[i].same_as : i];
            describe(s, &s->c[i], t, r->description, sizeof(r->description));
            r->bound_s = o->bound[t];
            r->estimate_s = o->estimate[t];
            r->predicted_s = o->pred[t];
            r->same_as = s->c[i].same_as;
            if (s->c[i].same_as >= 0)
                continue;
            if (isnan(r->predicted_s))
                choice->pruned++;
            else
                choice->evaluated++;
        }
    struct cand *w = &s->c[s->best_c];
    describe(s, w, s->best_t, choice->description, sizeof(choice->description));
    choice->topo = s->topo[s->best_t];
    choice->sources = w->sources;
    *plan = w->plan;
    w->planned = false; /* the caller owns it now */
    plan->strategy = RF_STRAT_AUTO;
    *pred = s->best_pred;
    s->best_c = -1;
    rc = 0;
    goto out;
add_failed:
    rc = add_cand_error(rc, err);
out:
    search_free(s);
    return rc;
}
