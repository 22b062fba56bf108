/* `refit sim`: plans and predicts a scenario's refit per strategy (or every one with
 * --compare), stores each run in its own transaction, and prints the table or JSON. */
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "json.h"
#include "progress.h"
#include "refit_run.h"

static const char usage_sim[] =
    "usage: refit sim SCENARIO [--strategy S | --compare] [--db FILE] [--label TEXT] [--json]\n"
    "                 [--store full|summary] [--max-memory SIZE]\n"
    "\n"
    "Plans the refit of SCENARIO, simulates it on the scenario's cluster (max-min fair flows\n"
    "over the modelled links, the schedule's rounds, fixed costs), and stores plan and\n"
    "prediction in FILE (default refit.db), one transaction per strategy.\n"
    "  --strategy S   broadcast | reshard | hierarchical | hybrid | auto\n"
    "  --compare      every strategy, side by side\n"
    "  --label TEXT   label stored with the run(s)\n"
    "  --store summary  store the run, its scenario, sides, memory and prediction (link\n"
    "                 loads, rounds, phases) but not the plan's tensors, boxes and transfers:\n"
    "                 a fraction of the space; refit-exec cannot replay it (default full)\n"
    "  --json         one JSON object (an array with --compare)\n"
    "  --max-memory SIZE  refuse up front, with the estimate, a run estimated to need\n"
    "                 more memory (GB, or with M, G or T; 0: no limit; default three\n"
    "                 quarters of this machine's memory)\n";

static double gb(int64_t bytes)
{
    return (double)bytes / 1e9;
}

static json_t *sim_json(const struct rf_scenario *sc, const struct rf_plan *plan,
                        const struct rf_topology *topo, const struct rf_prediction *p, int64_t run)
{
    char bottleneck[96] = "";
    if (p->bottleneck >= 0)
        rf_link_describe(topo, (size_t)p->bottleneck, bottleneck, sizeof(bottleneck));
    return json_pack(
        "{sI so so ss sf sf sI sI sI sI sI sI sI sI ss si sI sI sf}", "run_id", (json_int_t)run,
        "model", rf_json_text(sc->model.name), "cluster", rf_json_text(sc->cluster.name),
        "strategy", rf_strategy_name(plan->strategy), "predicted_s", p->predicted_s,
        "lower_bound_s", p->lower_bound_s, "payload_bytes", (json_int_t)plan->total.payload_bytes,
        "moved_bytes", (json_int_t)plan->total.moved_bytes, "logical_bytes",
        (json_int_t)plan->total.logical_bytes, "fabric_bytes", (json_int_t)p->fabric_bytes,
        "nvlink_bytes", (json_int_t)p->nvlink_bytes, "transfers", (json_int_t)plan->total.transfers,
        "collectives", (json_int_t)plan->total.collectives, "messages", (json_int_t)p->messages,
        "bottleneck", bottleneck, "rounds", plan->n_rounds, "flows", (json_int_t)p->flows, "events",
        (json_int_t)p->events, "sim_seconds", p->sim_seconds);
}

static void sim_header(FILE *f)
{
    fprintf(f, "%-6s %-12s %11s %10s %12s %12s %11s %7s  %s\n", "run", "strategy", "predicted_s",
            "bound_s", "payload(GB)", "fabric(GB)", "nvlink(GB)", "rounds", "bottleneck");
}

/* The run id comes first: it is what `refit show`, `refit report --run` and refit-exec's
 * replay need, and a --compare table maps each strategy to its own run. */
static void sim_row(FILE *f, int64_t run, const struct rf_plan *plan,
                    const struct rf_topology *topo, const struct rf_prediction *p)
{
    char bottleneck[96] = "-";
    if (p->bottleneck >= 0)
        rf_link_describe(topo, (size_t)p->bottleneck, bottleneck, sizeof(bottleneck));
    fprintf(f, "%-6lld %-12s %11.3f %10.3f %12.1f %12.1f %11.1f %7d  %s\n", (long long)run,
            rf_strategy_name(plan->strategy), p->predicted_s, p->lower_bound_s,
            gb(plan->total.payload_bytes), gb(p->fabric_bytes), gb(p->nvlink_bytes), plan->n_rounds,
            bottleneck);
}

/* "run 7", "runs 7..11" when the ids follow each other (one process stored them all), else
 * "runs 7, 9, 12" (another process stored runs in between). */
static void print_ids(FILE *f, const int64_t *ids, int n)
{
    bool consecutive = true;
    for (int i = 1; i < n; i++)
        consecutive = consecutive && ids[i] == ids[i - 1] + 1;
    if (n == 1)
        fprintf(f, "run %lld\n", (long long)ids[0]);
    else if (consecutive)
        fprintf(f, "runs %lld..%lld\n", (long long)ids[0], (long long)ids[n - 1]);
    else
        for (int i = 0; i < n; i++)
            fprintf(f, "%s%lld%s", i ? ", " : "runs ", (long long)ids[i], i + 1 < n ? "" : "\n");
}

/* The step's phases under a framework profile, below the strategy's row. */
static void print_step(FILE *f, const struct rf_framework *fw, const struct rf_step *st)
{
    if (st->n == 0)
        return;
    fprintf(f, "  %s step: %s\n", fw->name, st->composition);
    for (size_t i = 0; i < st->n; i++) {
        const struct rf_step_phase *p = &st->phase[i];
        fprintf(f, "    %-5s %-9s %9.3f s  %s\n", rf_step_part_name(p->part),
                rf_step_phase_name(p->phase), p->seconds, p->mechanism);
    }
}

/* An overlapped refit's line below the strategy's row: what an engine stalls and when the
 * last one has the new weights, against the whole refit's prediction. */
static void print_overlap(FILE *f, const struct refit_run *r)
{
    const struct rf_overlap *o = &r->sc.overlap;
    const struct rf_overlap_result *x = &r->overlap;
    if (o->rolling)
        fprintf(f,
                "  overlap: rolling, %lld engines one at a time: each stalls %.3f s (its refit "
                "alone), the last has the new weights after %.3f s (all at once: %.3f s)\n",
                (long long)x->engines, x->stall_s, x->staleness_s, r->pred.predicted_s);
    else
        fprintf(f,
                "  overlap: all engines while they generate (%s landing, generation %.6g GB/s a "
                "port): refit %.3f s, each engine stalls %.3f s to apply %.3f GB, new weights "
                "everywhere after %.3f s (stopped: %.3f s)\n",
                o->layer ? "layer" : "model", o->generation_bps / 1e9, x->refit_s, x->stall_s,
                (double)x->apply_bytes / 1e9, x->staleness_s, r->pred.predicted_s);
}

/* The step's phases as JSON. */
static json_t *step_json(const struct rf_framework *fw, const struct rf_step *st)
{
    json_t *a = json_array();
    for (size_t i = 0; a && i < st->n; i++) {
        const struct rf_step_phase *p = &st->phase[i];
        json_array_append_new(
            a, json_pack("{ss ss sf sI sI so}", "part", rf_step_part_name(p->part), "phase",
                         rf_step_phase_name(p->phase), "seconds", p->seconds, "bytes",
                         (json_int_t)p->bytes, "calls", (json_int_t)p->calls, "mechanism",
                         rf_json_text(p->mechanism)));
    }
    return json_pack("{so so sf so}", "framework", rf_json_text(fw->name), "composition",
                     rf_json_text(st->composition), "seconds", st->total_s, "phases",
                     a ? a : json_null());
}

/* One strategy's JSON object; NULL when a value could not be packed. */
static json_t *sim_run_json(const struct refit_run *r)
{
    json_t *o = sim_json(&r->sc, &r->plan, r->used, &r->pred, r->id);
    if (!o)
        return NULL;
    json_object_set_new(o, "peak_rss_bytes", json_integer(refit_peak_rss()));
    json_object_set_new(o, "estimate", refit_estimate_json(r));
    json_object_set_new(o, "memory", refit_memory_json(&r->sc));
    json_object_set_new(o, "infer_placement", refit_placement_json(&r->sc.infer));
    if (r->step.n > 0)
        json_object_set_new(o, "step", step_json(&r->sc.framework, &r->step));
    if (r->sc.overlap.on)
        json_object_set_new(o, "overlap",
                            json_pack("{ss ss sf sf sf sf sI sI}", "engines",
                                      r->sc.overlap.rolling ? "rolling" : "all", "granularity",
                                      r->sc.overlap.layer ? "layer" : "model", "generation_gbps",
                                      r->sc.overlap.generation_bps / 1e9, "refit_s",
                                      r->overlap.refit_s, "stall_s", r->overlap.stall_s,
                                      "staleness_s", r->overlap.staleness_s, "apply_bytes",
                                      (json_int_t)r->overlap.apply_bytes, "engines_count",
                                      (json_int_t)r->overlap.engines));
    if (r->plan.strategy != RF_STRAT_AUTO)
        return o;
    json_t *cands = json_array();
    bool bad = !cands ||
               json_object_set_new(o, "auto_choice", rf_json_text(r->choice.description)) < 0 ||
               json_object_set_new(o, "auto_evaluated", json_integer(r->choice.evaluated)) < 0 ||
               (r->choice.left_out_bytes > 0 &&
                json_object_set_new(o, "auto_left_out",
                                    json_pack("{s:[sss], s:I}", "strategies", "reshard",
                                              "hierarchical", "hybrid", "estimate_bytes",
                                              (json_int_t)r->choice.left_out_bytes)) < 0);
    for (int k = 0; !bad && k < r->choice.n_candidates; k++) {
        const struct rf_auto_candidate *ac = &r->choice.candidates[k];
        json_t *e = json_pack("{s:o, s:f, s:f}", "candidate", rf_json_text(ac->description),
                              "bound_s", ac->bound_s, "estimate_s", ac->estimate_s);
        bad = !e ||
              json_object_set_new(e, "predicted_s",
                                  isnan(ac->predicted_s) ? json_null()
                                                         : json_real(ac->predicted_s)) < 0 ||
              (ac->same_as >= 0 &&
               json_object_set_new(e, "same_plan_as", json_integer(ac->same_as)) < 0) ||
              json_array_append_new(cands, e) < 0;
    }
    if (bad || json_object_set_new(o, "auto_candidates", cands) < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

int cmd_sim(int argc, char **argv)
{
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"strategy", required_argument, NULL, 's'},
                                         {"label", required_argument, NULL, 'l'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"compare", no_argument, NULL, 'c'},
                                         {"store", required_argument, NULL, 'S'},
                                         {"max-memory", required_argument, NULL, 'M'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *db = "refit.db", *strategy = NULL, *label = NULL;
    int64_t max_memory = -1;
    bool json = false, compare = false, summary = false;
    int c;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 's': strategy = optarg; break;
        case 'l': label = optarg; break;
        case 'j': json = true; break;
        case 'c': compare = true; break;
        case 'S':
            if (cmd_store_mode("sim", optarg, &summary) != 0)
                return 2;
            break;
        case 'M':
            if (cmd_max_memory("sim", optarg, &max_memory) != 0)
                return 2;
            break;
        case 'h': fputs(usage_sim, stdout); return 0;
        default: return 2;
        }
    }
    if (optind + 1 != argc)
        return cmd_usage_fail("sim", "sim takes one SCENARIO, got %d", argc - optind);
    if (cmd_check_strategy("sim", strategy) != 0)
        return 2;
    /* Both at once is ambiguous (one run or five?): say what each does, so the user keeps
     * the one meant, rather than refit guessing. */
    if (compare && strategy)
        return cmd_usage_fail("sim",
                              "--compare with --strategy %s: --compare already runs every "
                              "strategy, %s among them, each as its own run; drop --strategy "
                              "for all of them, or --compare for %s alone",
                              strategy, strategy, strategy);

    struct rf_error err = {0};
    struct cmd_env env = {0};
    json_t *list = json_array();
    /* The table is collected here and printed once every strategy is stored, so a failure
     * prints no part of it. */
    char *table = NULL, *memory_text = NULL;
    size_t table_len = 0;
    FILE *tf = open_memstream(&table, &table_len);
    int rc = 1, stored = 0;
    int64_t first_id = 0, ids[RF_STRAT_COUNT];
    const char *all[RF_STRAT_COUNT];
    int n = 0;
    if (compare)
        for (int i = 0; i < RF_STRAT_COUNT; i++)
            all[n++] = rf_strategy_name((enum rf_strategy)i);
    else
        all[n++] = strategy;

    if (!list || !tf) {
        rf_error_set(&err, RF_ENOMEM, "out of memory");
        rc = cmd_fail(&err);
        goto out;
    }
    if (cmd_check_label("--label", label, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    if ((rc = cmd_open(&env, db, CMD_OPEN_SIM)) != 0)
        goto out;
    if (max_memory >= 0)
        env.sim.max_memory = max_memory;
    rc = 1;
    /* A terminal sees the phase and auto's candidates while Kimi K3 takes minutes; --json and
     * piped output never carry it. */
    struct rf_progress prog;
    rf_progress_init(&prog, stderr, "refit sim", !json && isatty(STDERR_FILENO));
    if (prog.enabled) {
        env.sim.progress = rf_progress_hook;
        env.sim.progress_ctx = &prog;
    }
    sim_header(tf);
    for (int i = 0; i < n; i++) {
        struct refit_run r = {0};
        if (compare)
            snprintf(prog.prefix, sizeof(prog.prefix), "refit sim: %s (%d/%d)", all[i], i + 1, n);
        int x = refit_run_compute(env.L, &(struct rf_scenario_src){.path = argv[optind]}, all[i],
                                  true, &env.sim, &r, &err);
        if (x == RF_ENOTSUP && compare) { /* --compare: the framework's strategies only */
            refit_run_release(&r);
            continue;
        }
        r.summary = summary;
        if (x == 0)
            x = refit_run_store(&env.ls, label, &r, &err);
        if (x == 0 && json) {
            json_t *o = sim_run_json(&r);
            if (!o || json_array_append_new(list, o) < 0)
                x = rf_error_set(&err, RF_EINVAL, "cannot build the JSON output of run %lld",
                                 (long long)r.id);
        } else if (x == 0) {
            if (i == 0)
                memory_text = refit_memory_lines(&r.sc);
            sim_row(tf, r.id, &r.plan, r.used, &r.pred);
            print_step(tf, &r.sc.framework, &r.step);
            if (r.sc.overlap.on)
                print_overlap(tf, &r);
            if (r.plan.strategy == RF_STRAT_AUTO)
                fprintf(tf, "%-6s %-12s %s (%d candidates predicted, %d only bounded)\n", "", "",
                        r.choice.description, r.choice.evaluated, r.choice.pruned);
            if (r.plan.strategy == RF_STRAT_AUTO && r.choice.left_out_bytes > 0)
                fprintf(tf,
                        "%-6s %-12s broadcasts only: reshard, hierarchical and hybrid left out, "
                        "their plans need an estimated %.3g GB (--max-memory %.3g GB)\n",
                        "", "", (double)r.choice.left_out_bytes / 1e9,
                        (double)env.sim.max_memory / 1e9);
        }
        if (x == 0 && stored == 0)
            first_id = r.id;
        if (x == 0)
            ids[stored++] = r.id;
        refit_run_release(&r);
        rf_progress_clear(&prog);
        if (x < 0) {
            /* Each strategy is its own transaction: the ones before stay, and the error
             * says which, rather than leaving the user to guess. */
            if (stored > 0) {
                size_t len = strlen(err.msg);
                snprintf(err.msg + len, sizeof(err.msg) - len,
                         " (runs %lld.. of the %d earlier strategies stay in %s)",
                         (long long)first_id, stored, db);
            }
            rc = cmd_fail(&err);
            goto out;
        }
    }
    if (json) {
        json_t *doc = compare ? json_incref(list) : json_incref(json_array_get(list, 0));
        if (rf_json_print(doc, stdout, &err) < 0) {
            rc = cmd_fail(&err);
            goto out;
        }
    } else {
        fprintf(tf, "\n%sstored in %s as ", memory_text ? memory_text : "", db);
        print_ids(tf, ids, stored);
        if (fclose(tf) != 0) {
            tf = NULL;
            rf_error_set(&err, RF_ENOMEM, "out of memory");
            rc = cmd_fail(&err);
            goto out;
        }
        tf = NULL;
        fwrite(table, 1, table_len, stdout);
    }
    rc = 0;
out:
    if (tf)
        fclose(tf);
    free(table);
    free(memory_text);
    json_decref(list);
    cmd_close(&env);
    return rc;
}
