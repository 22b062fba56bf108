/* An update's phases around the wire (sim/update_phases.h): per GPU, the HBM bytes of
 * encoding each delta box it sends, of scattering each one it receives, and of merging each
 * LoRA pair into its shard of the weight, at its HBM rate. */
#include "update_phases.h"

#include <stdlib.h>

#include "delta.h"

/* The HBM sector a write lands in (the CUDA C++ Best Practices Guide's 32-byte segments). */
#define SECTOR 32

int64_t rf_delta_sector_bytes(int64_t n, int64_t k, size_t elem)
{
    int64_t whole = n * (int64_t)elem;
    return k < whole / SECTOR ? k * SECTOR : whole;
}

struct sent {
    int32_t box, src;
};

static int cmp_sent(const void *a, const void *b)
{
    const struct sent *x = a, *y = b;
    if (x->box != y->box)
        return (x->box > y->box) - (x->box < y->box);
    return (x->src > y->src) - (x->src < y->src);
}

/* The slowest GPU's time for its bytes, each GPU at twice its copy link's rate. */
static double slowest(const struct rf_topology *topo, const double *bytes)
{
    double worst = 0;
    for (int32_t g = 0; g < topo->gpus; g++) {
        if (bytes[g] <= 0)
            continue;
        double rate = 2 * topo->links[rf_topology_link(topo, RF_LINK_COPY, g)].capacity;
        if (bytes[g] / rate > worst)
            worst = bytes[g] / rate;
    }
    return worst;
}

/* The delta's diff and scatter on their busiest GPUs, their bytes in out. */
static int delta_seconds(const struct rf_plan *plan, const struct rf_topology *topo,
                         const uint8_t *tensor_mask, struct rf_prediction *out, double *diff_s,
                         double *scatter_s, struct rf_error *err)
{
    int rc = 0;
    double *diff = calloc((size_t)topo->gpus, sizeof(double));
    double *scatter = calloc((size_t)topo->gpus, sizeof(double));
    struct sent *sent = malloc((plan->n_transfers ? plan->n_transfers : 1) * sizeof(*sent));
    size_t n_sent = 0;
    if (!diff || !scatter || !sent) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    /* The receivers: every destination a box reaches from another GPU scatters it, relay
     * members too (each keeps the box; what it forwards is the encoding it received). The
     * senders: a box's first source encodes it once, whatever the destinations. */
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        const struct rf_plan_box *b = &plan->boxes[t->box];
        const struct rf_tensor *x = &plan->tensors[b->tensor];
        if (x->delta.enc == RF_DELTA_NONE || t->phase != RF_PHASE_DELIVER ||
            (tensor_mask && !tensor_mask[b->tensor]))
            continue;
        int64_t n = rf_box_numel(&b->box, x->ndim), k = rf_delta_changed(x->delta.ppm, n);
        size_t wire = rf_dtype_size(plan->wire_dtype[b->tensor]);
        double written = (double)rf_delta_sector_bytes(n, k, wire);
        bool remote = false;
        for (int32_t j = 0; j < t->dst_count; j++) {
            int32_t d = t->dst + j * t->dst_stride;
            if (d == rf_transfer_sender(t, j) || d < 0 || d >= topo->gpus)
                continue;
            scatter[d] += (double)t->bytes + written;
            remote = true;
        }
        if (remote && t->after < 0)
            sent[n_sent++] = (struct sent){t->box, t->src};
    }
    qsort(sent, n_sent, sizeof(*sent), cmp_sent);
    int64_t diff_total = 0, scatter_total = 0;
    for (size_t i = 0; i < n_sent; i++) {
        if ((i > 0 && cmp_sent(&sent[i], &sent[i - 1]) == 0) || sent[i].src < 0 ||
            sent[i].src >= topo->gpus)
            continue;
        const struct rf_plan_box *b = &plan->boxes[sent[i].box];
        const struct rf_tensor *x = &plan->tensors[b->tensor];
        int64_t n = rf_box_numel(&b->box, x->ndim), k = rf_delta_changed(x->delta.ppm, n);
        size_t wire = rf_dtype_size(plan->wire_dtype[b->tensor]);
        /* Read the new weights and the last sent ones, write the encoding, and update the
         * last sent copy where the box changed. */
        int64_t bytes = n * (int64_t)rf_dtype_size(x->dtype) + n * (int64_t)wire +
                        rf_delta_bytes(&x->delta, n, wire) + rf_delta_sector_bytes(n, k, wire);
        diff[sent[i].src] += (double)bytes;
        diff_total += bytes;
    }
    for (int32_t g = 0; g < topo->gpus; g++)
        scatter_total += (int64_t)scatter[g];
    *diff_s = slowest(topo, diff);
    *scatter_s = slowest(topo, scatter);
    out->phase_bytes[RF_SIM_DIFF] = diff_total;
    out->phase_bytes[RF_SIM_SCATTER] = scatter_total;
out:
    free(diff);
    free(scatter);
    free(sent);
    return rc;
}

/* The merge on the engine: each GPU folds B A into its shard of W (sim/model.h's
 * rf_lora_weight), reading W, A and B and writing W once. It is memory-bound: 2 r flops a W
 * element for 4 bytes of BF16 traffic, r / 2 flops a byte, against an H100 SXM's ridge of
 * 989 TFLOPS dense BF16 / 3.35 TB/s = 295 (NVIDIA H100 datasheet), so below rank 590;
 * higher ranks are compute-bound, which this does not model. The busiest GPU is found among
 * the first GPU of each pipeline stage, which holds the largest shards (sim/memory.c). */
static double merge_seconds(const struct rf_plan *plan, const struct rf_side *infer,
                            const struct rf_topology *topo, const uint8_t *tensor_mask,
                            int64_t *total)
{
    double worst = 0;
    *total = 0;
    for (int64_t stage = 0; stage < infer->pp; stage++) {
        int64_t coord[RF_MESH_MAX] = {0};
        coord[1] = stage; /* VL_PP (sim/layout.c): an inference side's stage axis */
        int64_t gpu = rf_mesh_gpu(&infer->dense, coord);
        double bytes = 0;
        for (size_t i = 0; i + 1 < plan->n_tensors; i++) {
            const struct rf_tensor *a = &plan->tensors[i], *b = &plan->tensors[i + 1];
            if (a->lora != RF_LORA_A || !a->lora_merge ||
                (tensor_mask && !(tensor_mask[i] || tensor_mask[i + 1])))
                continue;
            struct rf_tensor w;
            struct rf_box wb, ab, bb;
            rf_lora_weight(a, b, &w);
            if (!rf_side_held_box(infer, &w, gpu, &wb) || !rf_side_held_box(infer, a, gpu, &ab) ||
                !rf_side_held_box(infer, b, gpu, &bb))
                continue;
            size_t e = rf_dtype_size(w.dtype);
            bytes += (double)(2 * rf_box_numel(&wb, w.ndim) + rf_box_numel(&ab, a->ndim) +
                              rf_box_numel(&bb, b->ndim)) *
                     (double)e;
        }
        if (bytes <= 0 || gpu < 0 || gpu >= topo->gpus)
            continue;
        *total += (int64_t)bytes;
        double rate = 2 * topo->links[rf_topology_link(topo, RF_LINK_COPY, gpu)].capacity;
        if (bytes / rate > worst)
            worst = bytes / rate;
    }
    return worst;
}

int rf_update_phases(const struct rf_plan *plan, const struct rf_side *train,
                     const struct rf_side *infer, const struct rf_topology *topo,
                     const uint8_t *tensor_mask, struct rf_prediction *out, struct rf_error *err)
{
    (void)train;
    bool delta = false, merge = false;
    for (size_t i = 0; i < plan->n_tensors; i++) {
        bool in = !tensor_mask || tensor_mask[i];
        delta |= in && plan->tensors[i].delta.enc != RF_DELTA_NONE;
        merge |= in && plan->tensors[i].lora_merge;
    }
    double d = 0, s = 0, m = 0, wire_s = out->predicted_s;
    int rc = 0;
    if (delta && (rc = delta_seconds(plan, topo, tensor_mask, out, &d, &s, err)) < 0)
        return rc;
    if (merge) {
        int64_t bytes;
        m = merge_seconds(plan, infer, topo, tensor_mask, &bytes);
        out->phase_bytes[RF_SIM_MERGE] = bytes;
    }
    if (!delta && !merge)
        return 0;
    /* The wire starts once the senders have encoded, and the refit ends with the scatter
     * and then the merge. */
    for (int32_t r = 0; r < out->n_rounds; r++) {
        out->round_start[r] += d;
        out->round_finish[r] += d;
    }
    for (int p = 0; p < RF_SIM_DIFF; p++)
        if (out->phase_bytes[p] > 0) {
            out->phase_start[p] += d;
            out->phase_finish[p] += d;
        }
    out->phase_start[RF_SIM_DIFF] = 0;
    out->phase_finish[RF_SIM_DIFF] = d;
    out->phase_start[RF_SIM_SCATTER] = d + wire_s;
    out->phase_finish[RF_SIM_SCATTER] = d + wire_s + s;
    out->phase_start[RF_SIM_MERGE] = d + wire_s + s;
    out->phase_finish[RF_SIM_MERGE] = d + wire_s + s + m;
    out->predicted_s = d + wire_s + s + m;
    return 0;
}
