/* The colocated path of the step (sim/step_int.h): training and the engine on the same GPUs,
 * the framework's export, a copy into a CUDA IPC buffer on each GPU, the engine's load, and
 * the host <-> device moves of optimizer state and weights around them. */
#include <stdio.h>

#include "memory.h"
#include "step_int.h"

/* One GPU's memory on each side (sim/memory.c), from the plan's model tensors (scale tensors
 * follow them). */
static void gpu_memory(const struct rf_step_input *in, struct rf_side_memory *train,
                       struct rf_side_memory *infer)
{
    const struct rf_plan *plan = in->plan;
    size_t n = 0;
    while (n < plan->n_tensors && plan->tensors[n].scale_of < 0)
        n++;
    struct rf_model m = {.tensors = plan->tensors, .n_tensors = n};
    struct rf_memory_opts o = {.hbm_gb = in->topo->cluster->hbm_gb};
    rf_memory_of(&m, in->train, in->infer, &o, train, infer);
}

/* The colocated path (verl's hybrid engine, NeMo RL's colocated IPC path,
 * doc/research/frameworks.md 2.3, 3.1): training and the engine share each GPU. Before: the
 * optimizer state goes to host and the engine's weights come back. The export's gathers put
 * whole tensors on every GPU; each GPU copies them into an IPC buffer its engine maps (one
 * handshake per buffer: a device synchronisation, the handle and names over ZMQ, the ACK);
 * the engine clones and loads its shard. After: the training weights go to host. Nothing
 * crosses a NIC but the export's collectives. */
double step_colocated_part(const struct rf_step_input *in, struct rf_step *st, struct rf_error *err,
                           int *rcp)
{
    const struct rf_framework *fw = in->fw;
    const struct rf_plan *plan = in->plan;
    const struct rf_cluster *c = in->topo->cluster;
    double tensor_s = c->cal.tensor_overhead_us * 1e-6, nccl_s = c->cal.nccl_call_us * 1e-6;
    double d2h = c->cal.d2h_gbps > 0 ? c->cal.d2h_gbps : c->pcie_gbps;
    double h2d = c->cal.h2d_gbps > 0 ? c->cal.h2d_gbps : c->pcie_gbps;
    struct step_export_rings x;
    int64_t hf = 0, gcalls = 0, bytes = 0, shard = 0, qbytes = 0;
    double gather_s = 0;
    bool fp8 = in->infer->dtype == RF_DT_FP8;

    if ((*rcp = step_export_rings_init(&x, in->topo, in->train, err)) < 0)
        return 0;
    for (size_t i = 0; i < plan->n_tensors; i++) {
        const struct rf_tensor *t = &plan->tensors[i];
        /* Whole tensors in the engine's dtype: BF16 unless the sender quantises. */
        bool q8 = fp8 && fw->colo_quant == RF_FW_QUANT_SENDER;
        if (t->scale_of >= 0 && !q8)
            continue;
        size_t es = t->scale_of >= 0 ? rf_dtype_size(t->dtype)
                                     : (q8 && t->quant ? 1 : rf_dtype_size(in->train->dtype));
        if (t->scale_of < 0) {
            hf += step_hf_tensors(t);
            gather_s += step_export_gather(in, &x, t, false, &gcalls);
            if (fp8 && t->quant && !q8)
                qbytes += fw->colo_quant == RF_FW_QUANT_RECEIVER_SHARD
                              ? step_first_numel(in->infer, t, NULL) * 2
                              : rf_tensor_numel(t) * 2;
        }
        bytes += rf_tensor_numel(t) * (int64_t)es;
        shard += step_first_numel(in->infer, t, NULL) * (int64_t)es;
    }
    step_export_rings_release(&x);
    if (bytes == 0)
        return 0;

    struct rf_side_memory mt, mi;
    gpu_memory(in, &mt, &mi);
    double opt = fw->colo_offload_optimizer ? (double)mt.worst.optimizer / (d2h * 1e9) : 0;
    double wake = fw->colo_wake_weights ? (double)mi.worst.weights / (h2d * 1e9) : 0;
    step_add_phase(st, RF_STEP_ALL, RF_STEP_PREPARE, opt + wake,
                   (fw->colo_offload_optimizer ? mt.worst.optimizer : 0) +
                       (fw->colo_wake_weights ? mi.worst.weights : 0),
                   (fw->colo_offload_optimizer ? 1 : 0) + (fw->colo_wake_weights ? 1 : 0),
                   "optimizer state to host %.3g s (D2H), the engine's weights back %.3g s (H2D)",
                   opt, wake);

    double host = (double)gcalls * nccl_s + (double)hf * fw->colo_export_calls * tensor_s;
    double e = step_issued(host, gather_s, gcalls > 0 ? nccl_s : 0);
    step_add_phase(st, RF_STEP_ALL, RF_STEP_EXPORT, e, bytes, gcalls + hf,
                   "%s on every GPU: %lld collectives %.3g s on the device; host %.3g s (%lld HF "
                   "tensors x %.3g calls)",
                   fw->colo_export == RF_FW_COLO_EXPORT_FSDP ? "FSDP full_tensor()"
                                                             : "Bridge export",
                   (long long)gcalls, gather_s, host, (long long)hf, fw->colo_export_calls);

    int64_t bucket = in->colo_bucket > 0 ? in->colo_bucket : bytes;
    int64_t buckets = (bytes + bucket - 1) / bucket;
    double fill = (double)bytes / (c->cal.memcpy_gbps * 1e9);
    double hand = (double)buckets * c->cal.bucket_overhead_us * 1e-6;
    step_add_phase(st, RF_STEP_ALL, RF_STEP_TRANSFER, fill + hand, bytes, buckets,
                   "CUDA IPC on each GPU: whole tensors copied into %lld buffer(s) %.3g s, a "
                   "handshake each (sync, ZMQ, ACK) %.3g s; no NIC",
                   (long long)buckets, fill, hand);

    double clone = fw->colo_clone ? (double)bytes / (c->cal.memcpy_gbps * 1e9) : 0;
    double copy = (double)shard / (c->cal.memcpy_gbps * 1e9);
    double quant = qbytes > 0 ? (double)qbytes / (c->cal.quant_gbps * 1e9) : 0;
    double lhost = (double)hf * fw->colo_load_calls * tensor_s;
    double l = step_issued(lhost, clone + copy + quant, 0);
    double l_after_clone = step_issued(lhost, copy + quant, 0);
    step_add_phase(st, RF_STEP_ALL, RF_STEP_LOAD, l, shard + (fw->colo_clone ? bytes : 0), hf,
                   "vllm loader: %lld HF tensors x %.3g calls, %scopy of its shard %.3g s%s",
                   (long long)hf, fw->colo_load_calls,
                   fw->colo_clone ? "clone out of the IPC buffer, " : "", copy,
                   quant > 0 ? ", quantised" : "");

    double off = fw->colo_offload_weights ? (double)mt.worst.weights / (d2h * 1e9) : 0;
    step_add_phase(st, RF_STEP_ALL, RF_STEP_RESUME, off,
                   fw->colo_offload_weights ? mt.worst.weights : 0,
                   fw->colo_offload_weights ? 1 : 0,
                   "training weights to host %.3g s (D2H); the engine's KV cache rebuilt (not "
                   "measured: 0)",
                   off);

    bool overlap = fw->colo_buffers >= 2;
    /* One buffer the engine clones before it ACKs: its load of bucket k overlaps the
     * sender's export and fill of bucket k + 1, a two-stage pipeline (sender and clone,
     * then load). */
    bool clone_releases = !overlap && fw->colo_clone;
    double body;
    if (overlap) {
        body = step_compose(e, fill + hand, l, buckets, true);
        snprintf(st->composition, sizeof(st->composition),
                 "colocated: prepare, then %d IPC buffers: export, copy and load of %lld "
                 "bucket(s) overlap (a 3-stage pipeline), then resume",
                 (int)fw->colo_buffers, (long long)buckets);
        step_cite_overlap(st, fw->colo_overlap_why);
    } else if (clone_releases) {
        double a = e + fill + hand + clone, b = l_after_clone;
        double n = (double)buckets;
        body = (a > b ? a : b) * (n - 1) / n + (a + b) / n;
        snprintf(st->composition, sizeof(st->composition),
                 "colocated: prepare, then 1 IPC buffer over %lld bucket(s): the engine clones a "
                 "bucket and ACKs, so its load overlaps the next bucket's export and copy, "
                 "then resume",
                 (long long)buckets);
    } else {
        body = e + fill + hand + l;
        snprintf(st->composition, sizeof(st->composition),
                 "colocated: prepare, then export, copy and load of each of %lld buckets in turn "
                 "(the sender waits for the engine's ACK), then resume",
                 (long long)buckets);
    }
    return opt + wake + body + off;
}
