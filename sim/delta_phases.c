/* A delta update's diff and scatter phases (sim/delta_phases.h): per GPU, the HBM bytes of
 * encoding each box it sends and of scattering each box it receives, at its HBM rate. */
#include "delta_phases.h"

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

int rf_delta_phases(const struct rf_plan *plan, const struct rf_topology *topo,
                    const uint8_t *tensor_mask, struct rf_prediction *out, struct rf_error *err)
{
    bool any = false;
    for (size_t i = 0; i < plan->n_tensors && !any; i++)
        any = plan->tensors[i].delta.enc != RF_DELTA_NONE && (!tensor_mask || tensor_mask[i]);
    if (!any)
        return 0;
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
    double d = slowest(topo, diff), s = slowest(topo, scatter), wire_s = out->predicted_s;
    /* The wire starts once the senders have encoded, and the refit ends with the scatter. */
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
    out->phase_bytes[RF_SIM_DIFF] = diff_total;
    out->phase_start[RF_SIM_SCATTER] = d + wire_s;
    out->phase_finish[RF_SIM_SCATTER] = d + wire_s + s;
    out->phase_bytes[RF_SIM_SCATTER] = scatter_total;
    out->predicted_s = d + wire_s + s;
out:
    free(diff);
    free(scatter);
    free(sent);
    return rc;
}
