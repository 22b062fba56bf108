/* A framework's point-to-point path (sim/step_int.h; a profile's p2p section), as
 * doc/research/p2p-paths.md reads each from its code: miles' writes from a CPU replica
 * (§1), NeMo RL's NIXL reads into the engine's buffers (§2), Perplexity's writes from the
 * trainers' GPUs into the engines' weights (§4). checkpoint-engine's reads before its
 * broadcasts (§3) are the broadcast path's (sim/step.c), with the registration here. */
#include <stdio.h>
#include <stdlib.h>

#include "step_int.h"

static int64_t ceil_div(int64_t a, int64_t b)
{
    return b > 0 ? (a + b - 1) / b : a;
}

double step_p2p_register(const struct rf_step_input *in, int64_t params, int64_t *regions)
{
    const struct rf_fw_p2p *p = &in->fw->p2p;
    *regions = 0;
    if (!in->fw->first_refit && !p->register_every_refit)
        return 0;
    if (p->reg == RF_FW_P2P_REG_REPLICA_PARAMS)
        *regions = params;
    else if (p->reg == RF_FW_P2P_REG_BUFFERS)
        *regions = p->register_regions;
    return (double)*regions * in->topo->cluster->cal.reg_region_us * 1e-6;
}

/* The prepare phase of a registration of `regions` regions taking reg seconds. */
static void add_register(struct rf_step *st, const struct rf_step_input *in, double reg,
                         int64_t regions)
{
    const char *what = in->fw->p2p.reg == RF_FW_P2P_REG_REPLICA_PARAMS
                           ? "the CPU replica's parameters"
                           : "the transfer buffers";
    if (reg > 0)
        step_add_phase(st, RF_STEP_ALL, RF_STEP_PREPARE, reg, 0, regions,
                       "%s: %s registered with the NIC, %lld region(s)",
                       in->fw->first_refit ? "first refit" : "every refit", what,
                       (long long)regions);
    else
        step_add_phase(st, RF_STEP_ALL, RF_STEP_PREPARE, 0, 0, 0,
                       "steady refit: nothing to set up");
}

/* Per training stage: what each of its senders does before it writes. */
struct stage_work {
    int64_t hf, gcalls, bytes, shard, qbytes;
    double gather_s;
};

/* miles: every rank of a stage gathers the stage's whole tensors; each sender converts
 * them, runs the engine's loader on a CPU replica of each distinct target rank (a blocking
 * D2H copy of the target's slice per tensor) and writes the replica's bytes over RDMA into
 * the engine's live weights. */
static double cpu_replica_part(const struct rf_step_input *in, struct rf_step *st,
                               struct rf_error *err, int *rcp)
{
    const struct rf_framework *fw = in->fw;
    const struct rf_fw_p2p *p = &fw->p2p;
    const struct rf_plan *plan = in->plan;
    const struct rf_side *train = in->train, *infer = in->infer;
    const struct rf_cluster *c = in->topo->cluster;
    double tensor_s = c->cal.tensor_overhead_us * 1e-6, nccl_s = c->cal.nccl_call_us * 1e-6;
    /* The senders' device work at the training GPUs' rates (rf_cluster_rates). */
    struct rf_gpu_rates tr = rf_cluster_rates(c, train->first_gpu);
    double d2h = tr.d2h_gbps;
    bool fp8 = infer->dtype == RF_DT_FP8;
    bool gather = p->gather == RF_FW_P2P_GATHER_STAGE;
    struct step_export_rings x;
    int64_t weights = 0;

    *rcp = 0;
    struct stage_work *sw = calloc((size_t)train->pp, sizeof(*sw));
    if (!sw) {
        *rcp = rf_error_set(err, RF_ENOMEM, "out of memory");
        return 0;
    }
    if (gather && (*rcp = step_export_rings_init(&x, in->topo, train, err)) < 0) {
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
        if (gather)
            w->gather_s += step_export_gather(in, &x, t, true, &w->gcalls);
    }
    if (gather)
        step_export_rings_release(&x);

    /* Senders of a stage: its gathered data-parallel ranks, world / pp; each pairs with
     * rollout rank r first, then takes targets of the engine ranks it already holds: a source
     * loads ceil(engine / senders) distinct target ranks (p2p_transfer_utils.py plan_p2p). */
    int64_t senders = train->gpus / (train->pp > 0 ? train->pp : 1);
    int64_t engine = infer->gpus / (infer->replicas > 0 ? infer->replicas : 1);
    int64_t ranks = ceil_div(engine, senders);
    if (ranks < 1)
        ranks = 1;
    int64_t entries = p->loader == RF_FW_LOADER_SGLANG ? step_scan_entries(plan) : 0;

    /* Stages send side by side: the slowest stage's sender sets the export. */
    double e = 0, host_e = 0, gather_e = 0, load_e = 0, d2h_e = 0;
    int64_t hf_e = 0, calls_e = 0, bytes_e = 0, buckets = 1, received = 0;
    for (int64_t s = 0; s < train->pp; s++) {
        const struct stage_work *w = &sw[s];
        received += w->shard; /* an engine GPU receives its shard of every stage */
        double host = (double)w->gcalls * nccl_s + (double)w->hf * p->export_calls * tensor_s;
        double dev = w->gather_s + (double)w->qbytes / (tr.quant_gbps * 1e9);
        /* The CPU replica's loader per distinct target rank: per tensor its calls and the
         * mapping scan on the host, and a blocking copy of the target's slice to pinned host
         * memory, one after another. */
        double load = (double)ranks * (double)w->hf *
                      (p->load_calls * tensor_s + (double)entries * c->cal.loader_scan_us * 1e-6);
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
    int64_t regions;
    double reg = step_p2p_register(in, weights, &regions);
    add_register(st, in, reg, regions);
    step_add_phase(st, RF_STEP_ALL, RF_STEP_EXPORT, e, bytes_e, calls_e,
                   "%lld HF tensors: gathers, conversion %.3g s (host %.3g s); CPU loader x %lld "
                   "rank(s) %.3g s; blocking D2H %.3g s",
                   (long long)hf_e, gather_e > host_e ? gather_e : host_e, host_e, (long long)ranks,
                   load_e, d2h_e);
    step_add_phase(st, RF_STEP_ALL, RF_STEP_TRANSFER, in->wire_all_s, received, buckets,
                   "RDMA writes from pinned host memory into the engines' weights (the plan "
                   "simulated)%s",
                   p->wait_nonlast && ranks > 1 ? "; all but the last rank's waited" : "");
    step_add_phase(st, RF_STEP_ALL, RF_STEP_LOAD, 0, 0, 0,
                   "written into the engine's live weights: no receiver copy");
    /* Per bucket: the sender's work and its waited writes, then the last rank's writes
     * under the next bucket's work: a two-stage pipeline. */
    double waited = p->wait_nonlast ? in->wire_all_s * (double)(ranks - 1) / (double)ranks : 0;
    double a = e + waited, b = in->wire_all_s - waited, n = (double)buckets;
    snprintf(st->composition, sizeof(st->composition),
             "%s%lld bucket(s): the sender's gathers, loads and waited writes, then the last "
             "rank's writes under the next bucket's (a 2-stage pipeline)",
             reg > 0 ? "registration, then " : "", (long long)buckets);
    return reg + (a > b ? a : b) * (n - 1) / n + (a + b) / n;
}

/* One group of tensors (all, or the dense ones then the experts) as a paired path moves
 * it: what the busiest sender and receiver do. */
struct group_work {
    int64_t hf, gcalls, dense_hf, expert_tensors;
    int64_t received;   /* bytes an engine GPU receives (its first GPU: the busiest) */
    int64_t expert_rcv; /* of which experts */
    int64_t sent;       /* bytes the busiest sender sends */
    int64_t qbytes;     /* BF16 bytes the sender quantises to FP8 */
    double gather_s, nic_s;
};

/* The groups' work: for NeMo RL's pairs (policy rank i feeds rollout rank i) a sender sends
 * what its receiver gets; for Perplexity's schedule (every shard one source, balanced by
 * bytes) the trainers share what all receivers get. */
static int group_work(const struct rf_step_input *in, struct group_work *g, int groups,
                      struct rf_error *err)
{
    const struct rf_fw_p2p *p = &in->fw->p2p;
    const struct rf_plan *plan = in->plan;
    const struct rf_side *train = in->train, *infer = in->infer;
    bool fp8 = infer->dtype == RF_DT_FP8;
    bool gather = p->gather == RF_FW_P2P_GATHER_EXPORT || p->gather == RF_FW_P2P_GATHER_FSDP ||
                  p->gather == RF_FW_P2P_GATHER_STAGE;
    struct step_export_rings x;
    int rc;
    if (gather && (rc = step_export_rings_init(&x, in->topo, train, err)) < 0)
        return rc;
    int64_t total[2] = {0, 0};
    for (size_t i = 0; i < plan->n_tensors; i++) {
        const struct rf_tensor *t = &plan->tensors[i];
        const struct rf_tensor *w = step_weight_of(plan, i);
        bool ex = step_is_expert(w);
        struct group_work *k = &g[groups > 1 && ex ? 1 : 0];
        size_t es = rf_dtype_size(plan->wire_dtype[i]);
        int64_t shard = step_first_numel(infer, t, NULL) * (int64_t)es;
        /* NeMo RL's select: dense tensors whole to every rank (of the stages it holds),
         * experts narrowed to its shard. */
        int64_t got = p->dense_whole && !ex ? rf_tensor_numel(t) * (int64_t)es : shard;
        k->received += got;
        if (ex)
            k->expert_rcv += got;
        total[k - g] += got;
        if (t->scale_of >= 0)
            continue;
        k->hf += step_hf_tensors(t);
        if (ex)
            k->expert_tensors++;
        else
            k->dense_hf += step_hf_tensors(t);
        if (fp8 && t->quant && plan->wire_dtype[i] == RF_DT_FP8 && p->quant == RF_FW_QUANT_SENDER)
            k->qbytes += got; /* FP8 bytes: as many BF16 pairs read */
        if (gather) {
            double before = x.nic_s;
            k->gather_s +=
                step_export_gather(in, &x, t, p->gather != RF_FW_P2P_GATHER_EXPORT, &k->gcalls);
            k->nic_s += x.nic_s - before;
        }
    }
    if (gather)
        step_export_rings_release(&x);
    for (int j = 0; j < groups; j++) {
        if (p->dense_whole) {
            g[j].sent = g[j].received;
        } else {
            /* Balanced by bytes over every training GPU: all receivers' bytes shared out. */
            int64_t all = total[j] * (int64_t)infer->gpus;
            g[j].sent = ceil_div(all, train->gpus > 0 ? train->gpus : 1);
            g[j].qbytes =
                g[j].received > 0
                    ? (int64_t)((double)g[j].qbytes * (double)g[j].sent / (double)g[j].received)
                    : 0;
        }
        g[j].qbytes *= 2;
    }
    return 0;
}

/* The wire of a group moved by pairs whose bytes are not the plan's (NeMo RL's dense
 * tensors whole): each pair on its own NIC, one transfer a bucket, at the NIC's achieved
 * rate, each paying a message's fixed costs. */
static double pair_wire(const struct rf_step_input *in, int64_t bytes, int64_t buckets)
{
    const struct rf_cluster *c = in->topo->cluster;
    double share = c->nic.per_node > 0 && c->gpus_per_node > c->nic.per_node
                       ? (double)c->nic.per_node / (double)c->gpus_per_node
                       : 1;
    /* A pair is as fast as its slower end's NIC (a mixed cluster's parts may differ). */
    double rate = rf_cluster_min_nic_gbps(c) * c->cal.nic_efficiency * share * 1e9;
    double fixed =
        (c->cal.message_latency_us + c->nic.latency_us + 2 * c->fabric.switch_latency_us) * 1e-6;
    return (rate > 0 ? (double)bytes / rate : 0) + (double)buckets * fixed;
}

/* NeMo RL's NIXL reads and Perplexity's writes: per group the senders' export (gathers,
 * conversion, FP8, the copy into the registered buffer), the wire, the receivers' load,
 * composed as the path overlaps them. */
static double paired_part(const struct rf_step_input *in, struct rf_step *st, struct rf_error *err,
                          int *rcp)
{
    const struct rf_framework *fw = in->fw;
    const struct rf_fw_p2p *p = &fw->p2p;
    const struct rf_plan *plan = in->plan;
    const struct rf_cluster *c = in->topo->cluster;
    double tensor_s = c->cal.tensor_overhead_us * 1e-6, nccl_s = c->cal.nccl_call_us * 1e-6;
    /* Sender work at the training GPUs' rates, the engine's load at its own. */
    struct rf_gpu_rates tr = rf_cluster_rates(c, in->train->first_gpu);
    double launch_s = c->cal.kernel_launch_us * 1e-6, mem = tr.memcpy_gbps * 1e9;
    double imem = rf_cluster_rates(c, in->infer->first_gpu).memcpy_gbps * 1e9;
    struct group_work g[2] = {{0}};
    int groups = p->experts_after ? 2 : 1;

    *rcp = 0;
    if ((*rcp = group_work(in, g, groups, err)) < 0)
        return 0;
    int64_t weights = 0;
    for (size_t i = 0; i < plan->n_tensors; i++)
        weights += plan->tensors[i].scale_of < 0;
    int64_t regions;
    double reg = step_p2p_register(in, weights, &regions);
    add_register(st, in, reg, regions);

    double total = reg;
    int64_t all_buckets = 0;
    for (int j = 0; j < groups; j++) {
        const struct group_work *k = &g[j];
        enum rf_step_part part = groups > 1 ? (j ? RF_STEP_BULK : RF_STEP_MISC) : RF_STEP_ALL;
        const char *name = groups > 1 ? (j ? "experts: " : "dense tensors: ") : "";
        if (k->received == 0 && k->hf == 0)
            continue;
        int64_t buckets = in->bucket > 0 ? ceil_div(k->received, in->bucket) : 1;
        if (buckets < 1)
            buckets = 1;
        all_buckets += buckets;

        /* Export on each sender: the gathers (their launches on the host beside them), the
         * framework's conversion per HF tensor, FP8 quantisation and the copy of what it
         * sends into the registered buffer on the device. */
        double host = (double)k->gcalls * nccl_s + (double)k->hf * p->export_calls * tensor_s;
        double quant = (double)k->qbytes / (tr.quant_gbps * 1e9);
        double pack = p->pack_copy ? (double)k->sent / mem : 0;
        double e = step_issued(host, k->gather_s + quant + pack, k->gcalls > 0 ? nccl_s : 0);
        step_add_phase(st, part, RF_STEP_EXPORT, e, k->sent, k->gcalls + k->hf,
                       "%s%s: %lld collectives %.3g s, FP8 %.3g s, pack %.3g s; host %.3g s (%lld "
                       "HF tensors x %.3g calls)",
                       name,
                       p->gather == RF_FW_P2P_GATHER_EXPORT ? "Bridge export on every rank"
                       : p->gather == RF_FW_P2P_GATHER_FSDP ? "full_tensor() per parameter"
                                                            : "gathers within each stage",
                       (long long)k->gcalls, k->gather_s, quant, pack, host, (long long)k->hf,
                       p->export_calls);

        /* The wire: the plan simulated where its bytes are the path's (each receiver its
         * shard); NeMo RL's dense tensors go whole, more than the plan moves: pairs. */
        double w;
        if (p->dense_whole)
            w = pair_wire(in, k->received, buckets);
        else
            w = groups > 1 ? (j ? in->wire_expert_s : in->wire_dense_s) : in->wire_all_s;
        step_add_phase(st, part, RF_STEP_TRANSFER, w, k->received, buckets, "%s%s %s %s, %s", name,
                       p->read ? "RDMA reads" : "RDMA writes",
                       p->from_host ? "from pinned host memory" : "GPU to GPU",
                       p->into_weights ? "into the engines' weights" : "into the engine's buffer",
                       p->dense_whole ? "pairs (rank i -> i) at the NIC's rate, dense tensors whole"
                                      : "the plan simulated");

        /* The engine's load from its buffer: vLLM's loader per dense HF tensor, the
         * experts stacked and copied per (parameter, projection) group and bucket (NeMo RL's
         * refit_loader: one torch.stack and one copy_), the dense copies beside. */
        double l = 0;
        if (!p->into_weights) {
            double lhost = (double)k->dense_hf * p->load_calls * tensor_s +
                           (double)(k->expert_tensors * 2 * buckets) * launch_s;
            double dev =
                (double)(k->received - k->expert_rcv) / imem + 2.0 * (double)k->expert_rcv / imem;
            l = step_issued(lhost, dev, 0);
            step_add_phase(st, part, RF_STEP_LOAD, l, k->received, k->dense_hf + k->expert_tensors,
                           "%s%s loader: %lld dense HF tensors x %.3g calls; experts stacked and "
                           "copied (%lld tensors, 2 copies)",
                           name, rf_fw_loader_name(p->loader), (long long)k->dense_hf,
                           p->load_calls, (long long)k->expert_tensors);
        } else {
            step_add_phase(st, part, RF_STEP_LOAD, 0, 0, 0,
                           "%swritten into the engine's live weights: no receiver copy", name);
        }

        /* Composition per bucket. NeMo RL: the sender packs bucket k + 1 while the receiver
         * reads and loads bucket k (read k, load k, then read k + 1): a 2-stage pipeline of
         * the sender and the receiver. Perplexity: export, writes and (nothing to load)
         * overlap per task. One buffer: each bucket in turn. */
        bool overlap = p->buffers >= 2;
        double t;
        if (overlap && p->receiver_serial) {
            double a = e, b = w + l, n = (double)buckets;
            t = (a > b ? a : b) * (n - 1) / n + (a + b) / n;
        } else {
            t = step_compose(e, w, l, buckets, overlap);
        }
        /* The export's collectives and the writes share the training NICs when both run
         * at once: the group takes at least their sum on the busiest one. */
        if (overlap && !p->dense_whole && k->nic_s > 0 && t < k->nic_s)
            t = k->nic_s;
        total += t;
    }
    const char *how = p->buffers < 2       ? "each bucket's export, wire and load in turn"
                      : p->receiver_serial ? "the sender one bucket ahead of the receiver's read "
                                             "and load (a 2-stage pipeline)"
                                           : "export and writes overlapped per task";
    snprintf(st->composition, sizeof(st->composition), "%s%s%lld bucket(s): %s",
             reg > 0 ? "registration, then " : "",
             groups > 1 ? "the dense tensors, then the experts (a barrier between), " : "",
             (long long)all_buckets, how);
    if (p->buffers >= 2)
        step_cite_overlap(st, p->overlap_why);
    return total;
}

double step_p2p_part(const struct rf_step_input *in, struct rf_step *st, struct rf_error *err,
                     int *rcp)
{
    if (in->fw->p2p.cpu_loader)
        return cpu_replica_part(in, st, err, rcp);
    return paired_part(in, st, err, rcp);
}
