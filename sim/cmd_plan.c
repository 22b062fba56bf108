/* `refit plan`: plans a scenario's refit, stores the run, and prints a summary per tensor
 * role (or one JSON object). */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd.h"
#include "json.h"
#include "refit_run.h"

static const char usage_plan[] =
    "usage: refit plan SCENARIO [--db FILE] [--strategy S] [--label TEXT] [--json]\n"
    "                  [--max-memory SIZE]\n"
    "\n"
    "Plans the refit described by SCENARIO (a Lua file), stores the run in FILE\n"
    "(default refit.db) in one transaction, and prints a summary per tensor role.\n"
    "  --strategy S   broadcast | reshard | hierarchical | hybrid | auto (overrides the\n"
    "                 scenario; auto predicts candidates on the scenario's cluster)\n"
    "  --label TEXT   label stored with the run\n"
    "  --json         print one JSON object instead of the table\n"
    "  --max-memory SIZE  refuse up front, with the estimate, a run estimated to need\n"
    "                 more memory (GB, or with M, G or T; 0: no limit; default three\n"
    "                 quarters of this machine's memory)\n";

static double gb(int64_t bytes)
{
    return (double)bytes / 1e9;
}

/* Rounds that relay (pipelined: sim/schedule.h) and the chain runs among the transfers. */
static void relay_counts(const struct rf_plan *plan, int64_t *pipelined, int64_t *chains)
{
    uint8_t *mark = calloc((size_t)plan->n_rounds + 1, 1);
    *pipelined = *chains = 0;
    for (size_t i = 0; i < plan->n_transfers && mark; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        *chains += t->chain;
        if (t->after >= 0 || t->chain)
            mark[t->round] = 1;
        if (t->after >= 0)
            mark[plan->transfers[t->after].round] = 1;
    }
    for (int32_t r = 0; r < plan->n_rounds && mark; r++)
        *pipelined += mark[r];
    free(mark);
}

static void print_plan(const struct rf_scenario *sc, const struct rf_plan *plan, int64_t run,
                       const char *db, double seconds)
{
    char tl[128], il[128];
    rf_side_describe(&sc->train, tl, sizeof(tl));
    rf_side_describe(&sc->infer, il, sizeof(il));
    printf("%s: %.2f B params, %.2f GB, strategy %s\n", sc->model.name,
           (double)plan->model_params / 1e9, gb(plan->model_bytes),
           rf_strategy_name(plan->strategy));
    printf("  train %5lld GPUs from %-5lld %s, %s\n", (long long)sc->train.gpus,
           (long long)sc->train.first_gpu, tl, rf_dtype_name(sc->train.dtype));
    printf("  infer %5lld GPUs from %-5lld %s, %s\n", (long long)sc->infer.gpus,
           (long long)sc->infer.first_gpu, il, rf_dtype_name(sc->infer.dtype));
    refit_print_memory(stdout, sc);
    printf("\n");
    printf("%-14s %7s %11s %12s %12s %12s %11s\n", "role", "tensors", "params(B)", "payload(GB)",
           "moved(GB)", "logical(GB)", "transfers");
    for (int r = 0; r <= RF_ROLE_COUNT; r++) {
        const struct rf_tally *t = r < RF_ROLE_COUNT ? &plan->role[r] : &plan->total;
        if (r < RF_ROLE_COUNT && t->tensors == 0)
            continue;
        printf("%-14s %7lld %11.3f %12.2f %12.2f %12.2f %11lld\n",
               r < RF_ROLE_COUNT ? rf_role_name((enum rf_role)r) : "total", (long long)t->tensors,
               (double)t->params / 1e9, gb(t->payload_bytes), gb(t->moved_bytes),
               gb(t->logical_bytes), (long long)t->transfers);
    }
    int64_t pipelined, chains;
    relay_counts(plan, &pipelined, &chains);
    printf("\nrun %lld stored in %s: %zu boxes, %zu transfer runs, %zu collectives in %d rounds "
           "of %.2f GB staging per GPU (%.2f s)\n",
           (long long)run, db, plan->n_boxes, plan->n_transfers, plan->n_collectives,
           plan->n_rounds, gb(plan->staging_bytes), seconds);
    if (pipelined > 0)
        printf("  %lld rounds pipelined in %.0f KiB chunks, %lld chain runs\n",
               (long long)pipelined, (double)plan->chunk_bytes / 1024, (long long)chains);
}

static int print_plan_json(const struct refit_run *computed, struct rf_error *err)
{
    const struct rf_scenario *sc = &computed->sc;
    const struct rf_plan *plan = &computed->plan;
    int64_t run = computed->id;
    double plan_seconds = computed->plan_seconds;
    double store_seconds = computed->seconds - computed->plan_seconds;
    json_t *roles = json_object();
    for (int r = 0; r < RF_ROLE_COUNT; r++) {
        const struct rf_tally *t = &plan->role[r];
        if (t->tensors == 0)
            continue;
        json_object_set_new(
            roles, rf_role_name((enum rf_role)r),
            json_pack("{sI sI sI sI sI sI sI sI}", "tensors", (json_int_t)t->tensors, "params",
                      (json_int_t)t->params, "payload_bytes", (json_int_t)t->payload_bytes,
                      "moved_bytes", (json_int_t)t->moved_bytes, "logical_bytes",
                      (json_int_t)t->logical_bytes, "local_bytes", (json_int_t)t->local_bytes,
                      "transfers", (json_int_t)t->transfers, "collectives",
                      (json_int_t)t->collectives));
    }
    int64_t pipelined, chains;
    relay_counts(plan, &pipelined, &chains);
    json_t *relay =
        json_pack("{sb sI sI}", "ring", plan->relay.ring, "fanout", (json_int_t)plan->relay.fanout,
                  "depth", (json_int_t)plan->relay.depth);
    json_t *o = json_pack(
        "{sI so so ss sI sI sI sI sI sI sI sI sI sI sI sI sf sf sI so sI sI sI sI so}", "run_id",
        (json_int_t)run, "scenario", rf_json_text(sc->source), "model",
        rf_json_text(sc->model.name), "strategy", rf_strategy_name(plan->strategy), "model_params",
        (json_int_t)plan->model_params, "model_bytes", (json_int_t)plan->model_bytes,
        "payload_bytes", (json_int_t)plan->total.payload_bytes, "moved_bytes",
        (json_int_t)plan->total.moved_bytes, "logical_bytes", (json_int_t)plan->total.logical_bytes,
        "local_bytes", (json_int_t)plan->total.local_bytes, "transfers",
        (json_int_t)plan->total.transfers, "transfer_runs", (json_int_t)plan->n_transfers, "boxes",
        (json_int_t)plan->n_boxes, "collectives", (json_int_t)plan->n_collectives, "rounds",
        (json_int_t)plan->n_rounds, "staging_bytes", (json_int_t)plan->staging_bytes,
        "plan_seconds", plan_seconds, "store_seconds", store_seconds, "peak_rss_bytes",
        (json_int_t)refit_peak_rss(), "roles", roles, "chunk_bytes", (json_int_t)plan->chunk_bytes,
        "pipelined_rounds", (json_int_t)pipelined, "chain_runs", (json_int_t)chains,
        "net_channels_per_peer", (json_int_t)plan->net_channels_per_peer, "relay", relay);
    if (o) {
        json_object_set_new(o, "memory", refit_memory_json(sc));
        json_object_set_new(o, "estimate", refit_estimate_json(computed));
        json_object_set_new(o, "infer_placement", refit_placement_json(&sc->infer));
    }
    return rf_json_print(o, stdout, err);
}

int cmd_plan(int argc, char **argv)
{
    static const struct option opts[] = {{"db", required_argument, NULL, 'd'},
                                         {"strategy", required_argument, NULL, 's'},
                                         {"label", required_argument, NULL, 'l'},
                                         {"json", no_argument, NULL, 'j'},
                                         {"max-memory", required_argument, NULL, 'M'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
    const char *db = "refit.db", *strategy = NULL, *label = NULL;
    int64_t max_memory = -1;
    bool json = false;
    int c;
    while ((c = cmd_getopt(argc, argv, opts)) != -1) {
        switch (c) {
        case 'd': db = optarg; break;
        case 's': strategy = optarg; break;
        case 'l': label = optarg; break;
        case 'j': json = true; break;
        case 'M':
            if (cmd_max_memory("plan", optarg, &max_memory) != 0)
                return 2;
            break;
        case 'h': fputs(usage_plan, stdout); return 0;
        default: return 2;
        }
    }
    if (optind + 1 != argc)
        return cmd_usage_fail("plan", "plan takes one SCENARIO, got %d", argc - optind);

    struct rf_error err = {0};
    struct refit_run r = {0};
    struct cmd_env env = {0};
    int rc = 1;

    if (cmd_check_strategy("plan", strategy) != 0)
        return 2;
    if (cmd_check_label("--label", label, &err) < 0)
        return cmd_fail(&err);
    if ((rc = cmd_open(&env, db, CMD_OPEN_SIM)) != 0)
        goto out;
    if (max_memory >= 0)
        env.sim.max_memory = max_memory;
    rc = 1;
    if (refit_run_compute(env.L, &(struct rf_scenario_src){.path = argv[optind]}, strategy, false,
                          &env.sim, &r, &err) < 0 ||
        refit_run_store(&env.ls, label, &r, &err) < 0) {
        rc = cmd_fail(&err);
        goto out;
    }
    if (json) {
        if (print_plan_json(&r, &err) < 0) {
            rc = cmd_fail(&err);
            goto out;
        }
    } else {
        print_plan(&r.sc, &r.plan, r.id, db, r.seconds);
    }
    rc = 0;
out:
    refit_run_release(&r);
    cmd_close(&env);
    return rc;
}
