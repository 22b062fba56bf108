/* The whole refit step as a framework profile runs it: the sender's export, the wire (the
 * plan simulated, part by part), the engine's load and finalisation, composed as the
 * framework overlaps them. Each phase is a mechanism with its cost (doc/architecture.md,
 * Step); no figure here is fitted to a published refit time. */
#include "step.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory.h"
#include "ring.h"
#include "simulate.h"

static bool is_expert(const struct rf_tensor *t)
{
    return t->cls == RF_CLASS_EXPERT_COLUMN || t->cls == RF_CLASS_EXPERT_ROW;
}

/* Hugging Face tensors a model tensor stands for: a stacked expert tensor is one per
 * expert (what the exporters and the engines' loaders walk). */
static int64_t hf_tensors(const struct rf_tensor *t)
{
    return t->experts > 0 ? t->experts : 1;
}

/* The weight a tensor belongs to (an FP8 scale tensor's weight, else itself). */
static const struct rf_tensor *weight_of(const struct rf_plan *plan, size_t i)
{
    const struct rf_tensor *t = &plan->tensors[i];
    return t->scale_of >= 0 ? &plan->tensors[t->scale_of] : t;
}

/* Elements the first GPU of the tensor's stage holds on side s (coordinate 0 on every other
 * axis: torch.chunk's first chunk is the largest, so this is the busiest GPU's share). */
static int64_t first_numel(const struct rf_side *s, const struct rf_tensor *t, int64_t *stage)
{
    struct rf_placement pl;
    const struct rf_mesh *mesh = rf_side_placement(s, t, &pl);
    int64_t coord[RF_MESH_MAX] = {0};
    if (pl.stage_axis >= 0)
        coord[pl.stage_axis] = pl.stage;
    if (stage)
        *stage = pl.stage_axis >= 0 ? pl.stage : 0;
    struct rf_box box;
    rf_placement_box(&pl, mesh, t->ndim, t->shape, coord, &box);
    return rf_box_numel(&box, t->ndim);
}

/* The GPUs of one mesh axis through the mesh's first GPU (the root's group on that axis). */
static int axis_ring(const struct rf_topology *topo, const struct rf_mesh *mesh, int axis,
                     struct rf_ring *ring, bool *have, struct rf_error *err)
{
    *have = false;
    if (axis < 0 || axis >= mesh->ndim || mesh->size[axis] < 2)
        return 0;
    int64_t n = mesh->size[axis];
    int32_t *gpus = malloc((size_t)n * sizeof(int32_t));
    if (!gpus)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (int64_t k = 0; k < n; k++)
        gpus[k] = (int32_t)(mesh->first_gpu + k * mesh->stride[axis]);
    int rc = rf_ring_init(ring, topo, gpus, (size_t)n, err);
    free(gpus);
    if (rc == 0)
        *have = true;
    return rc;
}

/* Megatron's mesh axes (sim/layout.c): dense (pp, dp, cp, tp), expert (pp, edp, ep, etp). */
enum { MG_PP = 0, MG_DP = 1, MG_EDP = 1, MG_TP = 3, MG_EP = 2, MG_ETP = 3 };

struct export_rings {
    struct rf_ring pp, tp, ep, etp, dp, edp;
    bool has_pp, has_tp, has_ep, has_etp, has_dp, has_edp;
    /* Per ring: seconds a byte of one call (a broadcast's buffer, an all-gather's output)
     * keeps its busiest NIC port busy. */
    double nic_pp, nic_tp, nic_ep, nic_etp, nic_dp, nic_edp;
    double nic_s; /* the export's busy time on that port so far */
};

/* The seconds per byte a call on ring puts on its busiest NIC port: each distinct ring
 * carries bytes / C_g (an all-gather (N - 1) / N of that) over its links, and a port
 * several rings cross carries their sum. 0 when the rings stay inside one NVLink domain. */
static int nic_rate(const struct rf_ring *ring, const struct rf_topology *topo, enum rf_coll_op op,
                    double *out, struct rf_error *err)
{
    struct rf_ring_paths ps;
    *out = 0;
    int rc = rf_ring_paths_init(&ps, ring, topo, op, ring->gpus[0], err);
    if (rc < 0)
        return rc;
    double *load = calloc(topo->n_links, sizeof(double));
    if (!load) {
        rf_ring_paths_release(&ps);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    double per = 1.0 / ring->search_channels;
    if (op == RF_COLL_OP_ALLGATHER)
        per *= (ring->n_ranks - 1.0) / ring->n_ranks;
    for (int c = 0; c < ps.n; c++)
        for (size_t k = ps.start[c]; k < ps.start[c + 1]; k++) {
            const struct rf_link *l = &topo->links[ps.links[k]];
            if (l->kind != RF_LINK_NIC_OUT && l->kind != RF_LINK_NIC_IN)
                continue;
            load[ps.links[k]] += per / l->capacity;
            if (load[ps.links[k]] > *out)
                *out = load[ps.links[k]];
        }
    free(load);
    rf_ring_paths_release(&ps);
    return 0;
}

static void export_rings_release(struct export_rings *x)
{
    if (x->has_pp)
        rf_ring_release(&x->pp);
    if (x->has_tp)
        rf_ring_release(&x->tp);
    if (x->has_ep)
        rf_ring_release(&x->ep);
    if (x->has_etp)
        rf_ring_release(&x->etp);
    if (x->has_dp)
        rf_ring_release(&x->dp);
    if (x->has_edp)
        rf_ring_release(&x->edp);
}

static int export_rings_init(struct export_rings *x, const struct rf_topology *topo,
                             const struct rf_side *train, struct rf_error *err)
{
    int rc;
    memset(x, 0, sizeof(*x));
    if ((rc = axis_ring(topo, &train->dense, MG_PP, &x->pp, &x->has_pp, err)) < 0 ||
        (rc = axis_ring(topo, &train->dense, MG_TP, &x->tp, &x->has_tp, err)) < 0 ||
        (rc = axis_ring(topo, &train->expert, MG_EP, &x->ep, &x->has_ep, err)) < 0 ||
        (rc = axis_ring(topo, &train->expert, MG_ETP, &x->etp, &x->has_etp, err)) < 0 ||
        (x->has_pp && (rc = nic_rate(&x->pp, topo, RF_COLL_OP_BROADCAST, &x->nic_pp, err)) < 0) ||
        (x->has_tp && (rc = nic_rate(&x->tp, topo, RF_COLL_OP_ALLGATHER, &x->nic_tp, err)) < 0) ||
        (x->has_ep && (rc = nic_rate(&x->ep, topo, RF_COLL_OP_ALLGATHER, &x->nic_ep, err)) < 0) ||
        (x->has_etp && (rc = nic_rate(&x->etp, topo, RF_COLL_OP_ALLGATHER, &x->nic_etp, err)) < 0))
        export_rings_release(x);
    /* FSDP's groups: its shards are whole only after an all-gather over data parallelism. */
    else if (train->fsdp &&
             ((rc = axis_ring(topo, &train->dense, MG_DP, &x->dp, &x->has_dp, err)) < 0 ||
              (rc = axis_ring(topo, &train->expert, MG_EDP, &x->edp, &x->has_edp, err)) < 0 ||
              (x->has_dp &&
               (rc = nic_rate(&x->dp, topo, RF_COLL_OP_ALLGATHER, &x->nic_dp, err)) < 0) ||
              (x->has_edp &&
               (rc = nic_rate(&x->edp, topo, RF_COLL_OP_ALLGATHER, &x->nic_edp, err)) < 0)))
        export_rings_release(x);
    return rc;
}

/* calls collectives of `bytes` each on ring (0 when there is no such group); their busy
 * time on the busiest NIC port (nic s/B) is added to *nic_s. */
static double coll(const struct rf_ring *ring, bool have, const struct rf_topology *topo,
                   enum rf_coll_op op, int64_t calls, double bytes, double nic, double *nic_s,
                   int64_t *n_calls)
{
    if (!have || calls <= 0 || bytes <= 0)
        return 0;
    enum rf_nccl_proto proto;
    *n_calls += calls;
    *nic_s += (double)calls * bytes * nic;
    return (double)calls * rf_ring_time(ring, topo, op, (int64_t)ceil(bytes), &proto);
}

/* Megatron-Bridge's export of one weight on every training rank (frameworks.md 2.1): the
 * owning stage broadcasts its TP-local piece over the PP group, then a TP all-gather, and
 * experts go one local expert index at a time (PP broadcast and EP all-gather per index).
 * slime gathers within the stage only: no PP broadcast, experts by bucket. */
static double export_gather(const struct rf_step_input *in, struct export_rings *x,
                            const struct rf_tensor *t, int64_t *calls)
{
    const struct rf_side *train = in->train;
    enum rf_dtype dt = t->quant ? train->dtype : t->dtype;
    double piece = (double)first_numel(train, t, NULL) * (double)rf_dtype_size(dt);
    double full = (double)rf_tensor_numel(t) * (double)rf_dtype_size(dt);
    const struct rf_topology *topo = in->topo;
    bool stage_only = in->fw->gather == RF_FW_GATHER_STAGE && !in->fw->colocated_run;
    double s = 0;
    /* FSDP (verl's default, full_tensor()): one all-gather per parameter over its data-
     * parallel group makes the TP-local piece whole first. */
    if (train->fsdp) {
        bool ex = is_expert(t);
        int64_t n = ex ? train->edp : train->dp;
        if (n > 1) {
            piece *= (double)n;
            s += ex ? coll(&x->edp, x->has_edp, topo, RF_COLL_OP_ALLGATHER, 1, piece, x->nic_edp,
                           &x->nic_s, calls)
                    : coll(&x->dp, x->has_dp, topo, RF_COLL_OP_ALLGATHER, 1, piece, x->nic_dp,
                           &x->nic_s, calls);
        }
    }
    if (is_expert(t)) {
        int64_t local = t->experts / (train->ep > 0 ? train->ep : 1);
        if (local < 1)
            local = 1;
        int64_t idx = local;
        if (stage_only) { /* slime: expert buckets of bucket / EP bytes per rank */
            double b = (double)in->bucket / (double)(train->ep > 0 ? train->ep : 1);
            idx = (int64_t)ceil(piece / (b > 0 ? b : piece));
        }
        double per = piece / (double)idx;
        if (!stage_only)
            s += coll(&x->pp, x->has_pp, topo, RF_COLL_OP_BROADCAST, idx, per, x->nic_pp, &x->nic_s,
                      calls);
        s += coll(&x->etp, x->has_etp, topo, RF_COLL_OP_ALLGATHER, idx, per * (double)train->etp,
                  x->nic_etp, &x->nic_s, calls);
        s += coll(&x->ep, x->has_ep, topo, RF_COLL_OP_ALLGATHER, idx,
                  per * (double)train->etp * (double)train->ep, x->nic_ep, &x->nic_s, calls);
        return s;
    }
    if (!stage_only)
        s += coll(&x->pp, x->has_pp, topo, RF_COLL_OP_BROADCAST, 1, piece, x->nic_pp, &x->nic_s,
                  calls);
    if (t->cls != RF_CLASS_REPLICATED)
        s += coll(&x->tp, x->has_tp, topo, RF_COLL_OP_ALLGATHER, 1, full, x->nic_tp, &x->nic_s,
                  calls);
    return s;
}

__attribute__((format(printf, 7, 8))) static void
add_phase(struct rf_step *st, enum rf_step_part part, enum rf_step_phase_kind kind, double seconds,
          int64_t bytes, int64_t calls, const char *fmt, ...)
{
    if (st->n >= RF_STEP_PHASES_MAX)
        return;
    struct rf_step_phase *p = &st->phase[st->n++];
    p->part = part;
    p->phase = kind;
    p->seconds = seconds;
    p->bytes = bytes;
    p->calls = calls;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(p->mechanism, sizeof(p->mechanism), fmt, ap);
    va_end(ap);
}

/* Calls one host thread issues onto the device: each returns once enqueued (NCCL collectives
 * through torch.distributed, tensor.copy_, kernel launches), so the host runs ahead of the
 * device until the part's synchronisation. The longer of the host's and the device's work,
 * and the first launch before the device has anything to do. */
static double issued(double host_s, double device_s, double first_s)
{
    return (host_s > device_s ? host_s : device_s) + first_s;
}

/* Entries an SGLang loader scans per tensor: its expert-parameter mapping, one entry per
 * expert and projection (w1, w2, w3) of the routed experts and the fused shared one
 * (sgl-project/sglang PR #19299: 771 = 257 x 3 for DeepSeek); 0 for a dense model. */
static int64_t scan_entries(const struct rf_plan *plan)
{
    int64_t experts = 0;
    for (size_t i = 0; i < plan->n_tensors; i++)
        if (plan->tensors[i].experts > experts)
            experts = plan->tensors[i].experts;
    return experts > 0 ? 3 * (experts + 1) : 0;
}

/* Appends the citation of an overlap to the composition line. */
static void cite_overlap(struct rf_step *st, const char *why)
{
    size_t len = strlen(st->composition);
    if (why && why[0] && len < sizeof(st->composition))
        snprintf(st->composition + len, sizeof(st->composition) - len, ", as %s", why);
}

/* The time of a part from its phases' own times. With two buffers the framework exports
 * bucket k + 1 while bucket k is on the wire and the engine loads bucket k - 1: a
 * three-stage pipeline over n equal buckets, (n - 1) x its slowest stage's share plus one
 * bucket through all three, max(E, W, L) (n - 1) / n + (E + W + L) / n. With one buffer
 * (or a sender waiting for the engine) the phases follow each other. */
static double compose(double e, double w, double l, int64_t buckets, bool overlap)
{
    if (!overlap)
        return e + w + l;
    double m = e > w ? e : w;
    m = m > l ? m : l;
    double n = buckets > 0 ? (double)buckets : 1;
    return m * (n - 1) / n + (e + w + l) / n;
}

/* The broadcast path over the tensors of mask (part ALL or MISC): export, wire (wire_s,
 * simulated by the caller), load. */
static double broadcast_part(const struct rf_step_input *in, const uint8_t *mask,
                             enum rf_step_part part, double wire_s, double wire_nic_s,
                             struct rf_step *st, struct rf_error *err, int *rcp)
{
    const struct rf_framework *fw = in->fw;
    const struct rf_plan *plan = in->plan;
    const struct rf_cluster *c = in->topo->cluster;
    double tensor_s = c->cal.tensor_overhead_us * 1e-6;
    struct export_rings x;
    int64_t hf = 0, gcalls = 0, bytes = 0, shard = 0, qbytes = 0;
    double gather_s = 0;
    bool fp8 = in->infer->dtype == RF_DT_FP8;

    *rcp = 0;
    bool export_all = fw->gather == RF_FW_GATHER_EXPORT || fw->gather == RF_FW_GATHER_STAGE;
    if (export_all && (*rcp = export_rings_init(&x, in->topo, in->train, err)) < 0)
        return 0;
    for (size_t i = 0; i < plan->n_tensors; i++) {
        if (!mask[i])
            continue;
        const struct rf_tensor *t = &plan->tensors[i];
        int64_t wb = rf_tensor_numel(t) * (int64_t)rf_dtype_size(plan->wire_dtype[i]);
        hf += hf_tensors(t);
        bytes += wb;
        shard += first_numel(in->infer, t, NULL) * (int64_t)rf_dtype_size(plan->wire_dtype[i]);
        /* Receivers quantise what came as BF16: every whole tensor (receiver_full), or
         * their own shard (receiver_shard). */
        if (fp8 && t->quant && plan->wire_dtype[i] != RF_DT_FP8)
            qbytes += fw->quant == RF_FW_QUANT_RECEIVER_SHARD ? first_numel(in->infer, t, NULL) * 2
                                                              : rf_tensor_numel(t) * 2;
        if (export_all && t->scale_of < 0)
            gather_s += export_gather(in, &x, weight_of(plan, i), &gcalls);
    }
    double export_nic_s = export_all ? x.nic_s : 0;
    if (export_all)
        export_rings_release(&x);
    if (bytes == 0)
        return 0;

    /* Export on the root: the framework's conversion calls and the collectives' launches
     * on the host, the collectives, the pack and the H2D copies on the device. */
    double nccl_s = c->cal.nccl_call_us * 1e-6;
    double host = (double)gcalls * nccl_s + (double)hf * fw->export_calls * tensor_s;
    double pack = fw->pack_copy ? (double)bytes / (c->cal.memcpy_gbps * 1e9) : 0;
    /* checkpoint-engine: every owner copies its own buckets from pinned host memory at
     * once, each by its own copy engine over its own PCIe link. */
    double h2d_gbps = c->cal.h2d_gbps > 0 ? c->cal.h2d_gbps : c->pcie_gbps;
    double h2d = fw->gather == RF_FW_GATHER_HOST
                     ? (double)bytes / (double)(in->roots > 0 ? in->roots : 1) / (h2d_gbps * 1e9)
                     : 0;
    double device = gather_s + pack + h2d;
    double e = issued(host, device, gcalls > 0 ? nccl_s : 0);
    const char *how = fw->gather == RF_FW_GATHER_EXPORT  ? "Bridge export on every trainer"
                      : fw->gather == RF_FW_GATHER_STAGE ? "gathers within each stage"
                      : fw->gather == RF_FW_GATHER_HOST  ? "H2D copy from pinned host memory"
                                                         : "point-to-point gather (simulated)";
    add_phase(st, part, RF_STEP_EXPORT, e, bytes, gcalls + hf,
              "%s: %lld collectives %.3g s, pack %.3g s%s on the device; host %.3g s "
              "(%lld HF tensors x %.3g calls)",
              how, (long long)gcalls, gather_s, pack, h2d > 0 ? ", H2D" : "", host, (long long)hf,
              fw->export_calls);

    /* The wire: the simulated broadcasts, and NCCL's launch latency per tensor when the
     * framework broadcasts tensor by tensor (each call's launch on the host beside it). */
    double w = wire_s;
    if (fw->broadcast_per_tensor)
        w = issued((double)hf * nccl_s, wire_s + (double)hf * in->bcast_latency_s, 0);
    add_phase(st, part, RF_STEP_TRANSFER, w, bytes, fw->broadcast_per_tensor ? hf : in->buckets,
              "NCCL broadcast over %lld ranks on %d channels, %s%s", (long long)in->comm_ranks,
              in->comm_rings, fw->broadcast_per_tensor ? "one per tensor" : "one per bucket",
              fw->gather == RF_FW_GATHER_P2P ? ", gathers included" : "");

    /* The engine's load on each receiver: loader calls (and SGLang's mapping scan) on the
     * host, the stream-ordered copies and quantisation on the device. */
    double copy = (double)shard / (c->cal.memcpy_gbps * 1e9);
    double quant = 0;
    if (qbytes > 0)
        quant = (double)qbytes / (c->cal.quant_gbps * 1e9);
    int64_t entries = fw->loader == RF_FW_LOADER_SGLANG ? scan_entries(plan) : 0;
    double scan = (double)hf * (double)entries * c->cal.loader_scan_us * 1e-6;
    double lhost = (double)hf * fw->load_calls * tensor_s + scan;
    double l = issued(lhost, copy + quant, 0);
    char qs[64] = "", ss[80] = "";
    if (quant > 0)
        snprintf(qs, sizeof(qs), ", quantises %s %.3f s",
                 fw->quant == RF_FW_QUANT_RECEIVER_SHARD ? "its shard" : "whole tensors", quant);
    if (scan > 0)
        snprintf(ss, sizeof(ss), ", SGLang scans %lld mapping entries a tensor %.3g s",
                 (long long)entries, scan);
    add_phase(st, part, RF_STEP_LOAD, l, shard, hf,
              "%s loader: %lld HF tensors x %.3g calls%s, copy of its shard %.3g s%s",
              rf_fw_loader_name(fw->loader), (long long)hf, fw->load_calls, ss, copy, qs);

    int64_t buckets = in->bucket > 0 ? (bytes + in->bucket - 1) / in->bucket : 1;
    bool overlap = fw->buffers >= 2 && !fw->wait_load;
    if (part == RF_STEP_ALL)
        snprintf(st->composition, sizeof(st->composition),
                 overlap ? "%d buffers: export, wire and load of %lld buckets overlap (a "
                           "3-stage pipeline)"
                         : "%d buffer: export, wire and load of each of %lld buckets in turn",
                 fw->buffers, (long long)buckets);
    if (part == RF_STEP_ALL && overlap)
        cite_overlap(st, fw->overlap_why);
    double t = compose(e, w, l, buckets, overlap);
    /* Overlapped, the export's collectives and the broadcast share the training nodes'
     * NICs (NeMo RL's ring crosses every node of both sides): the part takes at least the
     * busiest training NIC port's time under both. */
    double shared = export_nic_s + wire_nic_s;
    if (overlap && shared > t) {
        t = shared;
        if (part == RF_STEP_ALL) {
            size_t len = strlen(st->composition);
            snprintf(st->composition + len, sizeof(st->composition) - len,
                     "; bound by a training NIC both share (%.3f s)", shared);
        }
    }
    return t;
}

/* The reshard bulk (hybrid's reshard tensors, or a reshard-only framework's whole plan). */
static double bulk_part(const struct rf_step_input *in, const uint8_t *mask, enum rf_step_part part,
                        double wire_s, int groups, struct rf_step *st)
{
    const struct rf_framework *fw = in->fw;
    const struct rf_plan *plan = in->plan;
    const struct rf_cluster *c = in->topo->cluster;
    double tensor_s = c->cal.tensor_overhead_us * 1e-6;
    int64_t calls = 0, stack = 0, fused = 0, bytes = 0, qshard = 0;
    bool relayed = false;
    for (size_t i = 0; i < plan->n_tensors; i++) {
        if (!mask[i])
            continue;
        const struct rf_tensor *t = &plan->tensors[i];
        size_t es = rf_dtype_size(plan->wire_dtype[i]);
        calls++;
        bytes += rf_tensor_numel(t) * (int64_t)es;
        relayed |= plan->tensor_strategy[i] == RF_STRAT_HIERARCHICAL;
        if (fw->stack_experts && is_expert(t))
            stack += first_numel(in->train, t, NULL) * (int64_t)es;
        if (in->infer->dtype == RF_DT_FP8 && t->quant && plan->wire_dtype[i] != RF_DT_FP8)
            qshard += first_numel(in->infer, t, NULL) * 2; /* BF16 in, the engine quantises */
        if (fw->fused_copy && t->scale_of < 0 &&
            (strstr(t->name, "gate_proj") || strstr(t->name, "up_proj")))
            fused += first_numel(in->infer, t, NULL) * (int64_t)es;
    }
    if (bytes == 0)
        return 0;
    double e =
        (double)stack / (c->cal.memcpy_gbps * 1e9) + (double)calls * fw->reshard_calls * tensor_s;
    add_phase(st, part, RF_STEP_EXPORT, e, stack, calls,
              "%lld reshard calls x %.3g framework calls%s", (long long)calls, fw->reshard_calls,
              stack > 0 ? ", local experts stacked (one HBM copy)" : "");
    const char *how = relayed ? "hierarchical (M2N's relays)" : "reshard";
    /* M2N: each call is one device kernel with barriers over the communicator at its start
     * and end, so the calls' barriers follow each other on the device; the engine's one host
     * thread launches them (kernel_launch_us each) ahead of the device. */
    double barriers = (double)calls * fw->reshard_barriers * c->cal.barrier_us * 1e-6;
    double launches = fw->reshard_barriers > 0 ? (double)calls * c->cal.kernel_launch_us * 1e-6 : 0;
    double w = issued(launches, wire_s + barriers, 0);
    char bs[96] = "";
    if (fw->reshard_barriers > 0)
        snprintf(bs, sizeof(bs), "; %lld kernels x %d barriers %.3g s", (long long)calls,
                 (int)fw->reshard_barriers, barriers);
    if (groups > 1)
        add_phase(st, part, RF_STEP_TRANSFER, w, bytes, calls,
                  "%s, %d groups of training stages one after another%s", how, groups, bs);
    else
        add_phase(st, part, RF_STEP_TRANSFER, w, bytes, calls, "%s, every training stage at once%s",
                  how, bs);
    double q = (double)qshard / (c->cal.quant_gbps * 1e9);
    double l = (double)fused / (c->cal.memcpy_gbps * 1e9) + q;
    add_phase(st, part, RF_STEP_LOAD, l, fused + qshard, fused > 0 ? 1 : 0, "%s%s",
              fused > 0 ? "fused gate/up land in a temporary, copied in (one HBM copy)"
                        : "received in place",
              q > 0 ? "; BF16 shards quantised to FP8" : "");
    /* The trainer stacks and sends on one stream, the engine copies after each receive:
     * the three follow each other. */
    return e + w + l;
}

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
static double colocated_part(const struct rf_step_input *in, struct rf_step *st,
                             struct rf_error *err, int *rcp)
{
    const struct rf_framework *fw = in->fw;
    const struct rf_plan *plan = in->plan;
    const struct rf_cluster *c = in->topo->cluster;
    double tensor_s = c->cal.tensor_overhead_us * 1e-6, nccl_s = c->cal.nccl_call_us * 1e-6;
    double d2h = c->cal.d2h_gbps > 0 ? c->cal.d2h_gbps : c->pcie_gbps;
    double h2d = c->cal.h2d_gbps > 0 ? c->cal.h2d_gbps : c->pcie_gbps;
    struct export_rings x;
    int64_t hf = 0, gcalls = 0, bytes = 0, shard = 0, qbytes = 0;
    double gather_s = 0;
    bool fp8 = in->infer->dtype == RF_DT_FP8;

    if ((*rcp = export_rings_init(&x, in->topo, in->train, err)) < 0)
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
            hf += hf_tensors(t);
            gather_s += export_gather(in, &x, t, &gcalls);
            if (fp8 && t->quant && !q8)
                qbytes += fw->colo_quant == RF_FW_QUANT_RECEIVER_SHARD
                              ? first_numel(in->infer, t, NULL) * 2
                              : rf_tensor_numel(t) * 2;
        }
        bytes += rf_tensor_numel(t) * (int64_t)es;
        shard += first_numel(in->infer, t, NULL) * (int64_t)es;
    }
    export_rings_release(&x);
    if (bytes == 0)
        return 0;

    struct rf_side_memory mt, mi;
    gpu_memory(in, &mt, &mi);
    double opt = fw->colo_offload_optimizer ? (double)mt.worst.optimizer / (d2h * 1e9) : 0;
    double wake = fw->colo_wake_weights ? (double)mi.worst.weights / (h2d * 1e9) : 0;
    add_phase(st, RF_STEP_ALL, RF_STEP_PREPARE, opt + wake,
              (fw->colo_offload_optimizer ? mt.worst.optimizer : 0) +
                  (fw->colo_wake_weights ? mi.worst.weights : 0),
              (fw->colo_offload_optimizer ? 1 : 0) + (fw->colo_wake_weights ? 1 : 0),
              "optimizer state to host %.3g s (D2H), the engine's weights back %.3g s (H2D)", opt,
              wake);

    double host = (double)gcalls * nccl_s + (double)hf * fw->colo_export_calls * tensor_s;
    double e = issued(host, gather_s, gcalls > 0 ? nccl_s : 0);
    add_phase(st, RF_STEP_ALL, RF_STEP_EXPORT, e, bytes, gcalls + hf,
              "%s on every GPU: %lld collectives %.3g s on the device; host %.3g s (%lld HF "
              "tensors x %.3g calls)",
              fw->colo_export == RF_FW_COLO_EXPORT_FSDP ? "FSDP full_tensor()" : "Bridge export",
              (long long)gcalls, gather_s, host, (long long)hf, fw->colo_export_calls);

    int64_t bucket = in->colo_bucket > 0 ? in->colo_bucket : bytes;
    int64_t buckets = (bytes + bucket - 1) / bucket;
    double fill = (double)bytes / (c->cal.memcpy_gbps * 1e9);
    double hand = (double)buckets * c->cal.bucket_overhead_us * 1e-6;
    add_phase(st, RF_STEP_ALL, RF_STEP_TRANSFER, fill + hand, bytes, buckets,
              "CUDA IPC on each GPU: whole tensors copied into %lld buffer(s) %.3g s, a "
              "handshake each (sync, ZMQ, ACK) %.3g s; no NIC",
              (long long)buckets, fill, hand);

    double clone = fw->colo_clone ? (double)bytes / (c->cal.memcpy_gbps * 1e9) : 0;
    double copy = (double)shard / (c->cal.memcpy_gbps * 1e9);
    double quant = qbytes > 0 ? (double)qbytes / (c->cal.quant_gbps * 1e9) : 0;
    double lhost = (double)hf * fw->colo_load_calls * tensor_s;
    double l = issued(lhost, clone + copy + quant, 0);
    double l_after_clone = issued(lhost, copy + quant, 0);
    add_phase(st, RF_STEP_ALL, RF_STEP_LOAD, l, shard + (fw->colo_clone ? bytes : 0), hf,
              "vllm loader: %lld HF tensors x %.3g calls, %scopy of its shard %.3g s%s",
              (long long)hf, fw->colo_load_calls,
              fw->colo_clone ? "clone out of the IPC buffer, " : "", copy,
              quant > 0 ? ", quantised" : "");

    double off = fw->colo_offload_weights ? (double)mt.worst.weights / (d2h * 1e9) : 0;
    add_phase(st, RF_STEP_ALL, RF_STEP_RESUME, off, fw->colo_offload_weights ? mt.worst.weights : 0,
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
        body = compose(e, fill + hand, l, buckets, true);
        snprintf(st->composition, sizeof(st->composition),
                 "colocated: prepare, then %d IPC buffers: export, copy and load of %lld "
                 "bucket(s) overlap (a 3-stage pipeline), then resume",
                 (int)fw->colo_buffers, (long long)buckets);
        cite_overlap(st, fw->colo_overlap_why);
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

static int step_model(const struct rf_step_input *in, struct rf_step *st, struct rf_error *err)
{
    const struct rf_plan *plan = in->plan;
    const struct rf_framework *fw = in->fw;
    memset(st, 0, sizeof(*st));
    uint8_t *mask = calloc(plan->n_tensors + 1, 1);
    if (!mask)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    int rc = 0;
    double total = 0;
    if (fw->colocated_run) {
        total = colocated_part(in, st, err, &rc);
    } else if (plan->strategy == RF_STRAT_BROADCAST) {
        memset(mask, 1, plan->n_tensors);
        total =
            broadcast_part(in, mask, RF_STEP_ALL, in->wire_all_s, in->wire_all_nic_s, st, err, &rc);
    } else if (plan->strategy == RF_STRAT_HYBRID && fw->reshard) {
        /* The bulk's phases first, in the order they run. */
        for (size_t i = 0; i < plan->n_tensors; i++)
            mask[i] = plan->tensor_strategy[i] != RF_STRAT_BROADCAST;
        double bulk = bulk_part(in, mask, RF_STEP_BULK, in->wire_bulk_s, in->bulk_groups, st);
        for (size_t i = 0; i < plan->n_tensors; i++)
            mask[i] = !mask[i];
        double misc = broadcast_part(in, mask, RF_STEP_MISC, in->wire_misc_s, in->wire_misc_nic_s,
                                     st, err, &rc);
        total = fw->misc_after_bulk ? bulk + misc : (bulk > misc ? bulk : misc);
        snprintf(st->composition, sizeof(st->composition), "%s",
                 fw->misc_after_bulk ? "bulk, then misc (broadcast of the rest), then finalize"
                                     : "bulk and misc at once, then finalize");
    } else {
        memset(mask, 1, plan->n_tensors);
        total = bulk_part(in, mask, RF_STEP_ALL, in->wire_all_s, 1, st);
        snprintf(st->composition, sizeof(st->composition), "export, wire, load, finalize");
    }
    free(mask);
    if (rc < 0)
        return rc;
    add_phase(st, RF_STEP_ALL, RF_STEP_FINALIZE, fw->finalize_s, 0, fw->finalize_s > 0 ? 1 : 0,
              "%s", fw->finalize_s > 0 ? "the engine's post-load pass" : "not measured: 0");
    st->total_s = total + fw->finalize_s;
    return 0;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The busiest NIC port of the training side's GPUs in a prediction: seconds busy. */
static double train_nic_busy(const struct rf_prediction *p, const struct rf_topology *topo,
                             const struct rf_side *train)
{
    double worst = 0;
    if (!p->link_busy)
        return 0;
    for (int64_t g = train->first_gpu; g < train->first_gpu + train->place.span; g++) {
        int64_t nic = rf_topology_nic(topo, g);
        if (nic < 0)
            continue;
        for (int k = 0; k < 2; k++) {
            int32_t l = rf_topology_link(topo, k ? RF_LINK_NIC_IN : RF_LINK_NIC_OUT, nic);
            if (l >= 0 && (size_t)l < p->n_links && p->link_busy[l] > worst)
                worst = p->link_busy[l];
        }
    }
    return worst;
}

/* The wire time of the tensors of mask, simulated alone, and its busiest training NIC. With
 * bound, the simulator's bound-mode estimate instead: it keeps no link's busy time, so the
 * NIC's is 0. */
static int wire_of(const struct rf_plan *plan, const struct rf_side *train,
                   const struct rf_side *infer, const struct rf_topology *topo,
                   const struct rf_sim_options *base, const uint8_t *mask, bool bound,
                   double *seconds, double *nic_s, struct rf_error *err)
{
    struct rf_sim_options o = base ? *base : (struct rf_sim_options){0};
    struct rf_prediction p;
    o.tensor_mask = mask;
    if (bound) {
        const struct rf_topology *topos[1] = {topo};
        if (nic_s)
            *nic_s = 0;
        return rf_simulate_bound(plan, train, infer, topos, 1, &o, &(double){0}, seconds, err);
    }
    int rc = rf_simulate(plan, train, infer, topo, &o, &p, err);
    if (rc == 0) {
        *seconds = p.predicted_s;
        if (nic_s)
            *nic_s = train_nic_busy(&p, topo, train);
    }
    rf_prediction_release(&p);
    return rc;
}

/* The step with the whole plan's wire given (wire_all_s, its busiest training NIC's busy
 * time) and the parts a hybrid step needs simulated, or with bound estimated in bound mode. */
static int step_of(const struct rf_plan *plan, const struct rf_side *train,
                   const struct rf_side *infer, const struct rf_topology *topo,
                   const struct rf_framework *fw, const struct rf_sim_options *opts,
                   double wire_all_s, double wire_all_nic_s, bool bound, struct rf_step *out,
                   struct rf_error *err)
{
    struct rf_step_input in = {.plan = plan,
                               .train = train,
                               .infer = infer,
                               .topo = topo,
                               .fw = fw,
                               .bucket = rf_framework_bucket(fw, topo->cluster->hbm_gb),
                               .colo_bucket = rf_framework_colo_bucket(fw, topo->cluster->hbm_gb),
                               .wire_all_s = wire_all_s,
                               .wire_all_nic_s = wire_all_nic_s,
                               .bulk_groups = 1};
    uint8_t *mask = NULL;
    int rc = 0;

    memset(out, 0, sizeof(*out));
    if (plan->n_collectives > 0) {
        /* The communicator of the first broadcast (root and members, as the simulator
         * builds it): its channels and one call's launch latency. */
        const struct rf_collective *col = &plan->collectives[0];
        struct rf_ring_set set = {0};
        const struct rf_ring_entry *e;
        if ((rc = rf_ring_set_get(&set, topo, col->root, col->first_gpu, col->gpu_count,
                                  col->gpu_stride, &e, err)) < 0) {
            rf_ring_set_release(&set);
            return rc;
        }
        enum rf_nccl_proto proto;
        in.comm_ranks = e->ring.n_ranks;
        in.comm_rings = e->ring.channels;
        in.bcast_latency_s = rf_ring_nccl_time(&e->ring, RF_COLL_OP_BROADCAST, 0, &proto);
        rf_ring_set_release(&set);
        /* Distinct roots: owners that each copy their own buckets to the GPU at once. */
        int32_t *roots = malloc(plan->n_collectives * sizeof(int32_t));
        if (!roots)
            return rf_error_set(err, RF_ENOMEM, "out of memory");
        for (size_t i = 0; i < plan->n_collectives; i++)
            roots[i] = plan->collectives[i].root;
        qsort(roots, plan->n_collectives, sizeof(int32_t), cmp_i32);
        for (size_t i = 0; i < plan->n_collectives; i++)
            in.roots += i == 0 || roots[i] != roots[i - 1];
        free(roots);
    }
    if (plan->strategy == RF_STRAT_HYBRID && fw->reshard) {
        struct rf_sim_options o = opts ? *opts : (struct rf_sim_options){0};
        o.skip_gather = rf_framework_skips_gather(fw);
        if (!(mask = calloc(plan->n_tensors + 1, 1)))
            return rf_error_set(err, RF_ENOMEM, "out of memory");
        for (size_t i = 0; i < plan->n_tensors; i++)
            mask[i] = plan->tensor_strategy[i] == RF_STRAT_BROADCAST;
        if ((rc = wire_of(plan, train, infer, topo, &o, mask, bound, &in.wire_misc_s,
                          &in.wire_misc_nic_s, err)) < 0)
            goto out;
        /* NeMo RL's engine takes the training stages reshard_stage_groups at a time
         * (NRL_REFIT_NUM_STREAMS, frameworks.md 2.2): each group's tensors are a wire of
         * their own, one group after another. */
        int64_t per = fw->reshard_stage_groups > 0 ? fw->reshard_stage_groups : train->pp;
        int64_t groups = (train->pp + per - 1) / per;
        in.bulk_groups = (int)groups;
        in.wire_bulk_s = 0;
        for (int64_t g = 0; g < groups; g++) {
            bool any = false;
            for (size_t i = 0; i < plan->n_tensors; i++) {
                int64_t stage = 0;
                (void)first_numel(train, weight_of(plan, i), &stage);
                mask[i] = plan->tensor_strategy[i] != RF_STRAT_BROADCAST && stage >= g * per &&
                          stage < (g + 1) * per;
                any |= mask[i];
            }
            double w = 0;
            if (any && (rc = wire_of(plan, train, infer, topo, &o, mask, bound, &w, NULL, err)) < 0)
                goto out;
            in.wire_bulk_s += w;
        }
    }
    for (size_t i = 0; i < plan->n_collectives; i++)
        in.buckets = plan->collectives[i].round + 1 > in.buckets ? plan->collectives[i].round + 1
                                                                 : in.buckets;
    rc = step_model(&in, out, err);
out:
    free(mask);
    return rc;
}

int rf_step_predict(const struct rf_plan *plan, const struct rf_side *train,
                    const struct rf_side *infer, const struct rf_topology *topo,
                    const struct rf_framework *fw, const struct rf_sim_options *opts,
                    const struct rf_prediction *whole, struct rf_step *out, struct rf_error *err)
{
    return step_of(plan, train, infer, topo, fw, opts, whole->predicted_s,
                   train_nic_busy(whole, topo, train), false, out, err);
}

int rf_step_estimate(const struct rf_plan *plan, const struct rf_side *train,
                     const struct rf_side *infer, const struct rf_topology *topo,
                     const struct rf_framework *fw, const struct rf_sim_options *opts,
                     double wire_s, struct rf_step *out, struct rf_error *err)
{
    return step_of(plan, train, infer, topo, fw, opts, wire_s, 0, true, out, err);
}
