/* Random models, sides and clusters for the C property tests (t/bound-t, t/auto-t), drawn
 * from a seed the test prints (REFIT_SEED=<n> replays one). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fixtures.h"
#include "random.h"

/* nodes of `per_node` GPUs with a NIC each, NVLink domains of `domain` GPUs; no
 * efficiency losses, so every capacity is its nominal rate. */
struct rf_cluster test_cluster(int64_t nodes, int64_t per_node, int64_t domain, int64_t nics)
{
    struct rf_cluster c = {
        .name = "test", .source = "t", .nodes = nodes, .gpus_per_node = per_node, .hbm_gb = 80};
    c.nvlink.domain_gpus = domain;
    c.nvlink.gbps = 400;
    c.nvlink.latency_us = 1;
    c.nic.per_node = nics;
    c.nic.gbps = 50;
    c.nic.latency_us = 2;
    c.fabric.nodes_per_leaf = 4;
    c.fabric.oversubscription = 1;
    c.fabric.switch_latency_us = 0.5;
    c.fabric.pxn = true;
    c.cal.nvlink_efficiency = 1;
    c.cal.nic_efficiency = 1;
    c.cal.net_channels_per_peer = 8;
    c.cal.channel_gbps = 14;
    c.cal.nvl_chunk_kib = 512;
    c.cal.net_chunk_kib = 128;
    c.cal.memcpy_gbps = 1000;
    c.cal.quant_gbps = 1000;
    c.cal.message_latency_us = 3;
    c.cal.streams = 1;
    return c;
}

uint64_t rng_state;

uint64_t rnd(void)
{
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

int64_t pick(const int64_t *v, size_t n)
{
    return v[rnd() % n];
}

/* A random dense (experts = 0) or MoE model with uneven sizes. */
void random_model(struct rf_model *m, struct rf_tensor *ts, int layers, bool moe)
{
    static const int64_t dims[] = {3, 8, 16, 30, 64, 130, 256};
    static const int64_t experts[] = {2, 4, 8, 12};
    int64_t e = pick(experts, 4);
    int n = 0;
    ts[n++] =
        tensor("emb", RF_CLASS_VOCAB, RF_ROLE_EMBEDDING, -1, pick(dims, 7) + 10, pick(dims, 7), 0);
    for (int l = 0; l < layers; l++) {
        ts[n++] =
            tensor("col", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, l, pick(dims, 7), pick(dims, 7), 0);
        ts[n++] =
            tensor("row", RF_CLASS_ROW, RF_ROLE_ATTENTION, l, pick(dims, 7), pick(dims, 7), 0);
        ts[n++] = tensor("norm", RF_CLASS_REPLICATED, RF_ROLE_NORM, l, pick(dims, 7), 0, 0);
        if (moe) {
            ts[n++] = tensor("ecol", RF_CLASS_EXPERT_COLUMN, RF_ROLE_EXPERT, l, e, pick(dims, 7),
                             pick(dims, 7));
            ts[n++] = tensor("erow", RF_CLASS_EXPERT_ROW, RF_ROLE_EXPERT, l, e, pick(dims, 7),
                             pick(dims, 7));
        } else {
            ts[n++] = tensor("up", RF_CLASS_COLUMN, RF_ROLE_DENSE_FFN, l, pick(dims, 7),
                             pick(dims, 7), 0);
        }
    }
    ts[n++] = tensor("head", RF_CLASS_VOCAB, RF_ROLE_LM_HEAD, layers, pick(dims, 7) + 3,
                     pick(dims, 7), 0);
    *m = (struct rf_model){.name = "random",
                           .layers = layers,
                           .tensors = ts,
                           .n_tensors = (size_t)n,
                           .experts = moe ? e : 0,
                           .experts_per_token = moe ? 1 : 0};
}

/* Random sides within gpus GPUs: disjoint in either order (with a gap) or colocated. */
void random_sides(struct rf_side *tr, struct rf_side *in, int layers, bool moe, int64_t gpus)
{
    static const int64_t small[] = {1, 1, 2, 2, 4};
    for (;;) {
        int64_t tp = pick(small, 5), pp = 1 + (int64_t)(rnd() % 3), dp = pick(small, 5);
        int64_t world = tp * dp, ep = 1, etp = 1;
        for (int64_t cand = world; moe && cand >= 1; cand--)
            if (world % cand == 0 && rnd() % 2 == 0) {
                ep = cand;
                break;
            }
        if (moe && (world / ep) % 2 == 0 && rnd() % 2)
            etp = 2;
        bool fsdp = rnd() % 4 == 0;
        int64_t itp = pick(small, 5), ipp = 1 + (int64_t)(rnd() % 2);
        int64_t idp = 1 + (int64_t)(rnd() % 2), rep = 1 + (int64_t)(rnd() % 4);
        int64_t iep = moe && rnd() % 2 ? itp * idp : 1;
        int64_t tg = tp * pp * dp, ig = itp * ipp * idp * rep;
        int kind = (int)(rnd() % 4);
        int64_t gap = (int64_t)(rnd() % 12);
        int64_t tfirst = kind == 1 ? ig + gap : 0, ifirst = kind == 1 ? 0 : tg + gap;
        if (kind == 3)
            tfirst = ifirst = 0; /* colocated */
        if (tfirst + tg > gpus || ifirst + ig > gpus)
            continue;
        *tr = train_side(tp, 1, pp, dp, ep, etp, fsdp, tfirst, layers);
        *in =
            infer_side(itp, ipp, idp, iep, rep, ifirst, layers, rnd() % 3 ? RF_DT_BF16 : RF_DT_FP8);
        return;
    }
}

/* A DGX-like cluster (8-GPU nodes and domains, a NIC per GPU), an NVL72-like one (domains
 * of 4 nodes of 4), or one whose 2-GPU domains share a NIC per 4-GPU node. */
struct rf_cluster random_cluster(void)
{
    switch (rnd() % 3) {
    case 0: return test_cluster(16, 8, 8, 8);
    case 1: {
        struct rf_cluster c = test_cluster(32, 4, 16, 4);
        c.nvlink.gbps = 900;
        return c;
    }
    default: return test_cluster(32, 4, 2, 1);
    }
}

void seed_rng(void)
{
    const char *s = getenv("REFIT_SEED");
    uint64_t v = s ? strtoull(s, NULL, 10) : (uint64_t)time(NULL);
    printf("# seed %llu (REFIT_SEED to replay)\n", (unsigned long long)v);
    rng_state = v;
}
