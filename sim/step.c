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

#include "ring.h"
#include "simulate.h"
#include "step_int.h"
#include "topology.h"

void step_add_phase(struct rf_step *st, enum rf_step_part part, enum rf_step_phase_kind kind,
                    double seconds, int64_t bytes, int64_t calls, const char *fmt, ...)
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
double step_issued(double host_s, double device_s, double first_s)
{
    return (host_s > device_s ? host_s : device_s) + first_s;
}

/* Entries an SGLang loader scans per tensor: its expert-parameter mapping, one entry per
 * expert and projection (w1, w2, w3) of the routed experts and the fused shared one
 * (sgl-project/sglang PR #19299: 771 = 257 x 3 for DeepSeek); 0 for a dense model. */
int64_t step_scan_entries(const struct rf_plan *plan)
{
    int64_t experts = 0;
    for (size_t i = 0; i < plan->n_tensors; i++)
        if (plan->tensors[i].experts > experts)
            experts = plan->tensors[i].experts;
    return experts > 0 ? 3 * (experts + 1) : 0;
}

/* Appends the citation of an overlap to the composition line. */
void step_cite_overlap(struct rf_step *st, const char *why)
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
double step_compose(double e, double w, double l, int64_t buckets, bool overlap)
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
    /* The trainer's device work at its GPUs' rates, the engine's at its own (a mixed
     * cluster's parts differ; rf_cluster_rates). */
    struct rf_gpu_rates tr = rf_cluster_rates(c, in->train->first_gpu);
    struct rf_gpu_rates ir = rf_cluster_rates(c, in->infer->first_gpu);
    double tensor_s = c->cal.tensor_overhead_us * 1e-6;
    struct step_export_rings x;
    int64_t hf = 0, gcalls = 0, bytes = 0, shard = 0, qbytes = 0, sbytes = 0;
    double gather_s = 0;
    bool fp8 = in->infer->dtype == RF_DT_FP8;

    *rcp = 0;
    bool export_all = fw->gather == RF_FW_GATHER_EXPORT || fw->gather == RF_FW_GATHER_STAGE;
    if (export_all && (*rcp = step_export_rings_init(&x, in->topo, in->train, err)) < 0)
        return 0;
    for (size_t i = 0; i < plan->n_tensors; i++) {
        if (!mask[i])
            continue;
        const struct rf_tensor *t = &plan->tensors[i];
        int64_t wb = rf_tensor_numel(t) * (int64_t)rf_dtype_size(plan->wire_dtype[i]);
        hf += step_hf_tensors(t);
        bytes += wb;
        shard += step_first_numel(in->infer, t, NULL) * (int64_t)rf_dtype_size(plan->wire_dtype[i]);
        /* Receivers quantise what came as BF16: every whole tensor (receiver_full), or
         * their own shard (receiver_shard). */
        if (fp8 && t->quant && plan->wire_dtype[i] != RF_DT_FP8)
            qbytes += fw->quant == RF_FW_QUANT_RECEIVER_SHARD
                          ? step_first_numel(in->infer, t, NULL) * 2
                          : rf_tensor_numel(t) * 2;
        /* The sender block-quantises each whole BF16 tensor it puts on the wire as FP8
         * (slime's and miles' quantize_params_fp8); checkpoint-engine's host copies are
         * already in the engine's dtype. */
        if (fp8 && t->quant && t->scale_of < 0 && plan->wire_dtype[i] == RF_DT_FP8 &&
            fw->gather != RF_FW_GATHER_HOST)
            sbytes += rf_tensor_numel(t) * 2;
        if (export_all && t->scale_of < 0)
            gather_s += step_export_gather(in, &x, step_weight_of(plan, i),
                                           fw->gather == RF_FW_GATHER_STAGE, &gcalls);
    }
    double export_nic_s = export_all ? x.nic_s : 0;
    if (export_all)
        step_export_rings_release(&x);
    if (bytes == 0)
        return 0;

    /* Export on the root: the framework's conversion calls and the collectives' launches
     * on the host, the collectives, the pack and the H2D copies on the device. */
    double nccl_s = c->cal.nccl_call_us * 1e-6;
    double host = (double)gcalls * nccl_s + (double)hf * fw->export_calls * tensor_s;
    double pack = fw->pack_copy ? (double)bytes / (tr.memcpy_gbps * 1e9) : 0;
    /* checkpoint-engine: every owner copies its own buckets from pinned host memory at
     * once, each by its own copy engine over its own PCIe link. */
    double h2d = fw->gather == RF_FW_GATHER_HOST
                     ? (double)bytes / (double)(in->roots > 0 ? in->roots : 1) / (tr.h2d_gbps * 1e9)
                     : 0;
    /* checkpoint-engine's P2P mode: the H2D copy becomes a remote RDMA read from the
     * owner's pinned memory into a reader GPU, one reader per NIC of the updated ranks and
     * never two reads from one owner's NIC in a round (ps.py _assign_receiver_ranks), each
     * at the NIC's achieved rate, one batched read a bucket. */
    bool remote = fw->p2p_run && fw->p2p.read && fw->p2p.from_host;
    if (remote) {
        int64_t readers = 0, last = -1;
        for (int64_t gpu = in->infer->first_gpu; gpu < in->infer->first_gpu + in->infer->gpus;
             gpu++) {
            int64_t nic = rf_topology_nic(in->topo, gpu);
            readers += nic >= 0 && nic != last;
            last = nic >= 0 ? nic : last;
        }
        int64_t owners = in->roots > 0 ? in->roots : 1;
        int64_t par = readers < owners ? readers : owners;
        double rate = ir.nic_gbps * c->cal.nic_efficiency * 1e9;
        h2d = rate > 0 ? (double)bytes / (double)(par > 0 ? par : 1) / rate : 0;
    }
    double squant = (double)sbytes / (tr.quant_gbps * 1e9);
    double device = gather_s + pack + h2d + squant;
    double e = step_issued(host, device, gcalls > 0 ? nccl_s : 0);
    const char *how = fw->gather == RF_FW_GATHER_EXPORT  ? "Bridge export on every trainer"
                      : fw->gather == RF_FW_GATHER_STAGE ? "gathers within each stage"
                      : remote ? "RDMA reads from the owners' pinned memory"
                      : fw->gather == RF_FW_GATHER_HOST ? "H2D copy from pinned host memory"
                                                        : "point-to-point gather (simulated)";
    step_add_phase(st, part, RF_STEP_EXPORT, e, bytes, gcalls + hf,
                   "%s: %lld collectives %.3g s, pack %.3g s%s%s on the device; host %.3g s "
                   "(%lld HF tensors x %.3g calls)",
                   how, (long long)gcalls, gather_s, pack,
                   h2d > 0 ? (remote ? ", reads" : ", H2D") : "",
                   squant > 0 ? ", FP8 quantisation" : "", host, (long long)hf, fw->export_calls);

    /* The wire: the simulated broadcasts, and NCCL's launch latency per tensor when the
     * framework broadcasts tensor by tensor (each call's launch on the host beside it). */
    double w = wire_s;
    if (fw->broadcast_per_tensor)
        w = step_issued((double)hf * nccl_s, wire_s + (double)hf * in->bcast_latency_s, 0);
    step_add_phase(st, part, RF_STEP_TRANSFER, w, bytes,
                   fw->broadcast_per_tensor ? hf : in->buckets,
                   "NCCL broadcast over %lld ranks on %d channels, %s%s", (long long)in->comm_ranks,
                   in->comm_rings, fw->broadcast_per_tensor ? "one per tensor" : "one per bucket",
                   fw->gather == RF_FW_GATHER_P2P ? ", gathers included" : "");

    /* The engine's load on each receiver: loader calls (and SGLang's mapping scan) on the
     * host, the stream-ordered copies and quantisation on the device. */
    double copy = (double)shard / (ir.memcpy_gbps * 1e9);
    double quant = 0;
    if (qbytes > 0)
        quant = (double)qbytes / (ir.quant_gbps * 1e9);
    int64_t entries = fw->loader == RF_FW_LOADER_SGLANG ? step_scan_entries(plan) : 0;
    double scan = (double)hf * (double)entries * c->cal.loader_scan_us * 1e-6;
    double lhost = (double)hf * fw->load_calls * tensor_s + scan;
    double l = step_issued(lhost, copy + quant, 0);
    char qs[64] = "", ss[80] = "";
    if (quant > 0)
        snprintf(qs, sizeof(qs), ", quantises %s %.3f s",
                 fw->quant == RF_FW_QUANT_RECEIVER_SHARD ? "its shard" : "whole tensors", quant);
    if (scan > 0)
        snprintf(ss, sizeof(ss), ", SGLang scans %lld mapping entries a tensor %.3g s",
                 (long long)entries, scan);
    step_add_phase(st, part, RF_STEP_LOAD, l, shard, hf,
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
        step_cite_overlap(st, fw->overlap_why);
    double t = step_compose(e, w, l, buckets, overlap);
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
    struct rf_gpu_rates tr = rf_cluster_rates(c, in->train->first_gpu);
    struct rf_gpu_rates ir = rf_cluster_rates(c, in->infer->first_gpu);
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
        if (fw->stack_experts && step_is_expert(t))
            stack += step_first_numel(in->train, t, NULL) * (int64_t)es;
        if (in->infer->dtype == RF_DT_FP8 && t->quant && plan->wire_dtype[i] != RF_DT_FP8)
            qshard += step_first_numel(in->infer, t, NULL) * 2; /* BF16 in, the engine quantises */
        if (fw->fused_copy && t->scale_of < 0 &&
            (strstr(t->name, "gate_proj") || strstr(t->name, "up_proj")))
            fused += step_first_numel(in->infer, t, NULL) * (int64_t)es;
    }
    if (bytes == 0)
        return 0;
    double e =
        (double)stack / (tr.memcpy_gbps * 1e9) + (double)calls * fw->reshard_calls * tensor_s;
    step_add_phase(st, part, RF_STEP_EXPORT, e, stack, calls,
                   "%lld reshard calls x %.3g framework calls%s", (long long)calls,
                   fw->reshard_calls, stack > 0 ? ", local experts stacked (one HBM copy)" : "");
    const char *how = relayed ? "hierarchical (M2N's relays)" : "reshard";
    /* M2N: each call is one device kernel with barriers over the communicator at its start
     * and end, so the calls' barriers follow each other on the device; the engine's one host
     * thread launches them (kernel_launch_us each) ahead of the device. */
    double barriers = (double)calls * fw->reshard_barriers * c->cal.barrier_us * 1e-6;
    double launches = fw->reshard_barriers > 0 ? (double)calls * c->cal.kernel_launch_us * 1e-6 : 0;
    double w = step_issued(launches, wire_s + barriers, 0);
    char bs[96] = "";
    if (fw->reshard_barriers > 0)
        snprintf(bs, sizeof(bs), "; %lld kernels x %d barriers %.3g s", (long long)calls,
                 (int)fw->reshard_barriers, barriers);
    if (groups > 1)
        step_add_phase(st, part, RF_STEP_TRANSFER, w, bytes, calls,
                       "%s, %d groups of training stages one after another%s", how, groups, bs);
    else
        step_add_phase(st, part, RF_STEP_TRANSFER, w, bytes, calls,
                       "%s, every training stage at once%s", how, bs);
    double q = (double)qshard / (ir.quant_gbps * 1e9);
    double l = (double)fused / (ir.memcpy_gbps * 1e9) + q;
    step_add_phase(st, part, RF_STEP_LOAD, l, fused + qshard, fused > 0 ? 1 : 0, "%s%s",
                   fused > 0 ? "fused gate/up land in a temporary, copied in (one HBM copy)"
                             : "received in place",
                   q > 0 ? "; BF16 shards quantised to FP8" : "");
    /* The trainer stacks and sends on one stream, the engine copies after each receive:
     * the three follow each other. */
    return e + w + l;
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
        total = step_colocated_part(in, st, err, &rc);
    } else if (plan->strategy == RF_STRAT_BROADCAST) {
        memset(mask, 1, plan->n_tensors);
        /* checkpoint-engine's P2P mode registers its H2D buffer with the NIC every update. */
        double reg = 0;
        if (fw->p2p_run) {
            int64_t regions;
            reg = step_p2p_register(in, 0, &regions);
            step_add_phase(st, RF_STEP_ALL, RF_STEP_PREPARE, reg, 0, regions, "%s",
                           reg > 0 ? "the read buffer registered with the NIC"
                                   : "nothing registered this refit");
        }
        total = reg + broadcast_part(in, mask, RF_STEP_ALL, in->wire_all_s, in->wire_all_nic_s, st,
                                     err, &rc);
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
    } else if (fw->p2p_run && plan->strategy == RF_STRAT_RESHARD) {
        total = step_p2p_part(in, st, err, &rc);
    } else {
        memset(mask, 1, plan->n_tensors);
        total = bulk_part(in, mask, RF_STEP_ALL, in->wire_all_s, 1, st);
        snprintf(st->composition, sizeof(st->composition), "export, wire, load, finalize");
    }
    free(mask);
    if (rc < 0)
        return rc;
    step_add_phase(st, RF_STEP_ALL, RF_STEP_FINALIZE, fw->finalize_s, 0, fw->finalize_s > 0 ? 1 : 0,
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

/* Whether two parameter names differ only in their layer index ("layers.<n>."). */
static bool same_pattern(const char *a, const char *b)
{
    while (*a && *b) {
        if (strncmp(a, "layers.", 7) == 0 && strncmp(b, "layers.", 7) == 0) {
            a += 7;
            b += 7;
            while (*a >= '0' && *a <= '9')
                a++;
            while (*b >= '0' && *b <= '9')
                b++;
            continue;
        }
        if (*a++ != *b++)
            return false;
    }
    return *a == *b;
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
                               .bucket = fw->p2p_run
                                             ? rf_framework_p2p_bucket(fw, topo->cluster->hbm_gb)
                                             : rf_framework_bucket(fw, topo->cluster->hbm_gb),
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
                (void)step_first_numel(train, step_weight_of(plan, i), &stage);
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
    /* A framework whose calls' times add up (M2N's reshard_model_bench): the parameters
     * whose names differ only in their layer index ("model.layers.X.mlp.down_proj.weight")
     * are one pattern group, launched together and synchronised, each group timed alone
     * after a barrier, and the bench reports the sum over groups: the wire is the sum of
     * each group simulated alone. */
    if (fw->reshard && fw->reshard_serial && plan->strategy != RF_STRAT_BROADCAST &&
        plan->strategy != RF_STRAT_HYBRID) {
        struct rf_sim_options o = opts ? *opts : (struct rf_sim_options){0};
        size_t *group = malloc((plan->n_tensors + 1) * sizeof(size_t));
        if (!group || !(mask = calloc(plan->n_tensors + 1, 1))) {
            free(group);
            return rf_error_set(err, RF_ENOMEM, "out of memory");
        }
        /* Each tensor's group: the first weight of the same pattern (the scales their
         * weight's). */
        for (size_t i = 0; i < plan->n_tensors; i++) {
            const struct rf_tensor *w = step_weight_of(plan, i);
            group[i] = i;
            for (size_t j = 0; j < i; j++)
                if (same_pattern(step_weight_of(plan, j)->name, w->name)) {
                    group[i] = group[j];
                    break;
                }
        }
        in.wire_all_s = 0;
        for (size_t g = 0; g < plan->n_tensors && rc == 0; g++) {
            if (group[g] != g)
                continue;
            for (size_t i = 0; i < plan->n_tensors; i++)
                mask[i] = group[i] == g;
            double t = 0;
            if ((rc = wire_of(plan, train, infer, topo, &o, mask, bound, &t, NULL, err)) == 0)
                in.wire_all_s += t;
        }
        free(group);
        if (rc < 0)
            goto out;
    }
    /* A point-to-point path that moves its mesh groups in turn (Perplexity: the dense
     * tensors, a barrier, then the experts): each group's wire alone. */
    if (fw->p2p_run && fw->p2p.experts_after && plan->strategy == RF_STRAT_RESHARD) {
        struct rf_sim_options o = opts ? *opts : (struct rf_sim_options){0};
        if (!(mask = calloc(plan->n_tensors + 1, 1)))
            return rf_error_set(err, RF_ENOMEM, "out of memory");
        for (int g = 0; g < 2 && rc == 0; g++) {
            bool any = false;
            for (size_t i = 0; i < plan->n_tensors; i++) {
                mask[i] = step_is_expert(step_weight_of(plan, i)) == (g == 1);
                any |= mask[i];
            }
            if (any)
                rc = wire_of(plan, train, infer, topo, &o, mask, bound,
                             g ? &in.wire_expert_s : &in.wire_dense_s, NULL, err);
        }
        if (rc < 0)
            goto out;
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
