/* Test helper for t/show.sh and t/report.sh: stores runs whose prediction carries a
 * hand-made step (sim/step.h), as refit sim will under a framework profile (sim/step.c).
 * usage: step-db DB; prints the ids of the runs it stored, one a line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_prediction.h"

static void phase(struct rf_step *s, enum rf_step_part part, enum rf_step_phase_kind kind,
                  double seconds, int64_t bytes, int64_t calls, const char *mechanism)
{
    struct rf_step_phase *p = &s->phase[s->n++];
    p->part = part;
    p->phase = kind;
    p->seconds = seconds;
    p->bytes = bytes;
    p->calls = calls;
    snprintf(p->mechanism, sizeof(p->mechanism), "%s", mechanism);
}

int main(int argc, char **argv)
{
    struct rf_tensor ts[2] = {{.name = "a.weight",
                               .ndim = 2,
                               .shape = {8, 4},
                               .cls = RF_CLASS_COLUMN,
                               .role = RF_ROLE_ATTENTION,
                               .scale_of = -1},
                              {.name = "b.weight",
                               .ndim = 1,
                               .shape = {4},
                               .cls = RF_CLASS_REPLICATED,
                               .role = RF_ROLE_NORM,
                               .scale_of = -1}};
    struct rf_model m = {.name = "tiny", .layers = 1, .tensors = ts, .n_tensors = 2};
    struct rf_side tr = {.kind = RF_SIDE_MEGATRON,
                         .gpus = 2,
                         .tp = 2,
                         .cp = 1,
                         .pp = 1,
                         .dp = 1,
                         .ep = 1,
                         .etp = 1,
                         .edp = 2,
                         .replicas = 1,
                         .stage_layers = calloc(1, sizeof(int))};
    struct rf_side in = {.kind = RF_SIDE_VLLM,
                         .gpus = 2,
                         .first_gpu = 2,
                         .tp = 1,
                         .cp = 1,
                         .pp = 1,
                         .dp = 1,
                         .ep = 1,
                         .etp = 1,
                         .edp = 1,
                         .replicas = 2,
                         .stage_layers = calloc(1, sizeof(int))};
    struct rf_cluster c = {.name = "dgx-h100", .source = "step-db", .nodes = 1, .gpus_per_node = 8};
    struct rf_topology topo = {.cluster = &c};
    struct rf_store st;
    struct rf_error err;
    int rc = 1;
    if (!tr.stage_layers || !in.stage_layers)
        return 1;
    tr.stage_layers[0] = in.stage_layers[0] = 1;
    if (argc != 2) {
        fprintf(stderr, "usage: step-db DB\n");
        return 2;
    }
    if (rf_side_init(&tr, 1, &err) < 0 || rf_side_init(&in, 1, &err) < 0 ||
        rf_store_open(&st, argv[1], RF_STORE_CREATE, &err) < 0) {
        fprintf(stderr, "step-db: %s\n", err.msg);
        return 1;
    }
    /* Run 1: NeMo RL's broadcast, one bucket at a time (nothing overlaps). Run 2: its hybrid,
     * the reshard bulk then the broadcast of the rest, with two buffers. */
    static const char *const labels[2] = {"nemo-rl broadcast", "nemo-rl hybrid"};
    static const enum rf_strategy strategies[2] = {RF_STRAT_BROADCAST, RF_STRAT_RESHARD};
    for (int k = 0; k < 2; k++) {
        struct rf_plan plan;
        struct rf_step s = {.n = 0};
        struct rf_prediction p = {.bottleneck = -1};
        int64_t run;
        if (k == 0) {
            phase(&s, RF_STEP_ALL, RF_STEP_EXPORT, 0.5, 4000000000, 1200,
                  "Megatron-Bridge export: TP all-gather per tensor, HF naming");
            phase(&s, RF_STEP_ALL, RF_STEP_TRANSFER, 2, 8000000000, 400,
                  "NCCL broadcast of 1 GB buckets from the first training GPU");
            phase(&s, RF_STEP_ALL, RF_STEP_LOAD, 0.75, 8000000000, 2400,
                  "vLLM load_weights: one copy per tensor, FP8 quantisation");
            phase(&s, RF_STEP_ALL, RF_STEP_FINALIZE, 0.25, 0, 1, "process_weights_after_loading");
            snprintf(s.composition, sizeof(s.composition), "1 buffer: export + transfer + load");
            s.total_s = 3.5;
            p.predicted_s = 2;
            p.lower_bound_s = 1.5;
        } else {
            phase(&s, RF_STEP_BULK, RF_STEP_EXPORT, 0.125, 1000000000, 300, "stack local experts");
            phase(&s, RF_STEP_BULK, RF_STEP_TRANSFER, 0.5, 3000000000, 96, "reshard p2p");
            phase(&s, RF_STEP_BULK, RF_STEP_LOAD, 0.25, 3000000000, 300, "fused gate/up copy");
            phase(&s, RF_STEP_MISC, RF_STEP_TRANSFER, 0.375, 500000000, 40,
                  "broadcast of the rest");
            phase(&s, RF_STEP_ALL, RF_STEP_FINALIZE, 0.25, 0, 1, "process_weights_after_loading");
            snprintf(s.composition, sizeof(s.composition),
                     "bulk, then misc: max(export, transfer, load) + first export + last load");
            s.total_s = 1.25;
            p.predicted_s = 0.875;
            p.lower_bound_s = 0.5;
        }
        if (rf_plan_build(&plan, &m, &tr, &in, strategies[k], NULL, NULL, &err) < 0)
            goto out;
        struct rf_run_info info = {.label = labels[k],
                                   .scenario = "step-db",
                                   .model = "tiny",
                                   .cluster_system = "dgx-h100",
                                   .cluster_nodes = 1,
                                   .train = &tr,
                                   .infer = &in,
                                   .scenario_json = "{\"version\": 1, \"framework\": {\"name\": "
                                                    "\"nemo-rl\"}}"};
        struct rf_run_sim sim = {.prediction = &p, .topo = &topo, .step = &s};
        int r = rf_store_save_run(&st, &info, &plan, &sim, &run, &err);
        rf_plan_release(&plan);
        if (r < 0)
            goto out;
        printf("%lld\n", (long long)run);
    }
    rc = 0;
out:
    if (rc)
        fprintf(stderr, "step-db: %s\n", err.msg);
    rf_store_close(&st);
    rf_side_release(&tr);
    rf_side_release(&in);
    return rc;
}
