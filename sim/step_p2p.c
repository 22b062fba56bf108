/* The point-to-point path from the trainers' host memory (sim/step_int.h), as miles' P2P mode
 * runs it (doc/research/p2p-paths.md §1): every rank of a training stage gathers the stage's
 * whole tensors; each sender converts them, runs the engine's loader on a CPU replica of each
 * distinct target rank (a blocking D2H copy of the target's slice per tensor) and writes the
 * replica's bytes over RDMA into the engine's live weights. */
#include <stdio.h>
#include <stdlib.h>

#include "step_int.h"

static int64_t ceil_div(int64_t a, int64_t b)
{
    return b > 0 ? (a + b - 1) / b : a;
}

/* Per training stage: what each of its senders does before it writes. */
struct stage_work {
    int64_t hf, gcalls, bytes, shard, qbytes;
    double gather_s;
};

double step_p2p_part(const struct rf_step_input *in, struct rf_step *st, struct rf_error *err,
                     int *rcp)
{
    const struct rf_framework *fw = in->fw;
    const struct rf_plan *plan = in->plan;
    const struct rf_side *train = in->train, *infer = in->infer;
    const struct rf_cluster *c = in->topo->cluster;
    double tensor_s = c->cal.tensor_overhead_us * 1e-6, nccl_s = c->cal.nccl_call_us * 1e-6;
    double d2h = c->cal.d2h_gbps > 0 ? c->cal.d2h_gbps : c->pcie_gbps;
    bool fp8 = infer->dtype == RF_DT_FP8;
    struct step_export_rings x;
    int64_t weights = 0;

    *rcp = 0;
    struct stage_work *sw = calloc((size_t)train->pp, sizeof(*sw));
    if (!sw) {
        *rcp = rf_error_set(err, RF_ENOMEM, "out of memory");
        return 0;
    }
    if (fw->reshard_stage_gather && (*rcp = step_export_rings_init(&x, in->topo, train, err)) < 0) {
        free(sw);
        return 0;
    }
    for (size_t i = 0; i < plan->n_tensors; i++) {
        const struct rf_tensor *t = &plan->tensors[i];
        int64_t stage = 0;
        (void)step_first_numel(train, step_weight_of(plan, i), &stage);
        struct stage_work *w = &sw[stage < train->pp ? stage : 0];
        size_t es = rf_dtype_size(plan->wire_dtype[i]);
        w->bytes += rf_tensor_numel(t) * (int64_t)es;
        w->shard += step_first_numel(infer, t, NULL) * (int64_t)es;
        if (t->scale_of >= 0)
            continue;
        weights++;
        w->hf += step_hf_tensors(t);
        /* convert_to_hf block-quantises on every source when the engine is FP8. */
        if (fp8 && t->quant && plan->wire_dtype[i] == RF_DT_FP8)
            w->qbytes += rf_tensor_numel(t) * 2;
        if (fw->reshard_stage_gather)
            w->gather_s += step_export_gather(in, &x, t, true, &w->gcalls);
    }
    if (fw->reshard_stage_gather)
        step_export_rings_release(&x);

    /* Senders of a stage: its gathered data-parallel ranks, world / pp; each pairs with
     * rollout rank r first, then takes targets of the engine ranks it already holds: a source
     * loads ceil(engine / senders) distinct target ranks (p2p_transfer_utils.py plan_p2p). */
    int64_t senders = train->gpus / (train->pp > 0 ? train->pp : 1);
    int64_t engine = infer->gpus / (infer->replicas > 0 ? infer->replicas : 1);
    int64_t ranks = ceil_div(engine, senders);
    if (ranks < 1)
        ranks = 1;
    int64_t entries = fw->loader == RF_FW_LOADER_SGLANG ? step_scan_entries(plan) : 0;

    /* Stages send side by side: the slowest stage's sender sets the export. */
    double e = 0, host_e = 0, gather_e = 0, load_e = 0, d2h_e = 0;
    int64_t hf_e = 0, calls_e = 0, bytes_e = 0, buckets = 1, received = 0;
    for (int64_t s = 0; s < train->pp; s++) {
        const struct stage_work *w = &sw[s];
        received += w->shard; /* an engine GPU receives its shard of every stage */
        double host = (double)w->gcalls * nccl_s + (double)w->hf * fw->export_calls * tensor_s;
        double dev = w->gather_s + (double)w->qbytes / (c->cal.quant_gbps * 1e9);
        /* The CPU replica's loader per distinct target rank: per tensor its calls and the
         * mapping scan on the host, and a blocking copy of the target's slice to pinned host
         * memory, one after another. */
        double load = (double)ranks * (double)w->hf *
                      (fw->load_calls * tensor_s + (double)entries * c->cal.loader_scan_us * 1e-6);
        double copy = (double)ranks * (double)w->shard / (d2h * 1e9);
        double t = step_issued(host, dev, w->gcalls > 0 ? nccl_s : 0) + load + copy;
        if (t > e) {
            e = t;
            host_e = host;
            gather_e = dev;
            load_e = load;
            d2h_e = copy;
            hf_e = w->hf;
            calls_e = w->gcalls + w->hf * ranks;
            bytes_e = w->bytes;
        }
        int64_t n = in->bucket > 0 ? ceil_div(w->bytes, in->bucket) : 1;
        buckets = n > buckets ? n : buckets;
    }
    free(sw);

    /* A first refit registers each parameter of the CPU replica with the NIC (miles'
     * register_cpu_memory, one region a parameter; replicas of other ranks alias it). */
    double reg =
        fw->first_refit && fw->reshard_register ? (double)weights * c->cal.reg_region_us * 1e-6 : 0;
    step_add_phase(st, RF_STEP_ALL, RF_STEP_PREPARE, reg, 0, reg > 0 ? weights : 0, "%s",
                   reg > 0 ? "first refit: the CPU replica's parameters registered with the NIC"
                           : "steady refit: nothing to set up");
    step_add_phase(st, RF_STEP_ALL, RF_STEP_EXPORT, e, bytes_e, calls_e,
                   "%lld HF tensors: gathers, conversion %.3g s (host %.3g s); CPU loader x %lld "
                   "rank(s) %.3g s; blocking D2H %.3g s",
                   (long long)hf_e, gather_e > host_e ? gather_e : host_e, host_e, (long long)ranks,
                   load_e, d2h_e);
    step_add_phase(st, RF_STEP_ALL, RF_STEP_TRANSFER, in->wire_all_s, received, buckets,
                   "RDMA writes from pinned host memory into the engines' weights (the plan "
                   "simulated)%s",
                   fw->reshard_wait_nonlast && ranks > 1 ? "; all but the last rank's waited" : "");
    step_add_phase(st, RF_STEP_ALL, RF_STEP_LOAD, 0, 0, 0,
                   "written into the engine's live weights: no receiver copy");
    /* Per bucket: the sender's work and its waited writes, then the last rank's writes
     * under the next bucket's work: a two-stage pipeline. */
    double waited =
        fw->reshard_wait_nonlast ? in->wire_all_s * (double)(ranks - 1) / (double)ranks : 0;
    double a = e + waited, b = in->wire_all_s - waited, n = (double)buckets;
    snprintf(st->composition, sizeof(st->composition),
             "%s%lld bucket(s): the sender's gathers, loads and waited writes, then the last "
             "rank's writes under the next bucket's (a 2-stage pipeline)",
             reg > 0 ? "registration, then " : "", (long long)buckets);
    return reg + (a > b ? a : b) * (n - 1) / n + (a + b) / n;
}
