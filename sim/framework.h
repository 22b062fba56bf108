/* Framework profiles: how one RL framework (NeMo RL, verl, slime, miles, NCCL M2N,
 * checkpoint-engine) runs the refit step, read from models/frameworks/<name>.lua. */
#ifndef RF_FRAMEWORK_H
#define RF_FRAMEWORK_H

#include <stdbool.h>
#include <stdint.h>

#include "error.h"

/* Who is in the broadcast communicator. */
enum rf_fw_comm {
    RF_FW_COMM_RECEIVERS, /* the root and the inference side's span (refit's own plan) */
    RF_FW_COMM_ALL,       /* every training and every inference GPU (NeMo RL's
                             model_update_group, verl one-step-off) */
};

/* Which GPU broadcasts a tensor. */
enum rf_fw_root {
    RF_FW_ROOT_FIRST, /* the first training GPU, for every tensor (NeMo RL, verl) */
    RF_FW_ROOT_STAGE, /* the first GPU of the tensor's training PP stage (slime, miles) */
    RF_FW_ROOT_OWNER, /* the training GPU holding the tensor's first element: roots rotate
                         over the owners (checkpoint-engine's per-bucket owners) */
};

/* How the root comes to hold whole tensors before it broadcasts them. */
enum rf_fw_gather {
    RF_FW_GATHER_P2P,    /* refit's own: every shard sent point-to-point to the root */
    RF_FW_GATHER_EXPORT, /* Megatron-Bridge export on every training rank: per tensor a PP
                            broadcast of the stage's TP-local piece, a TP all-gather, and for
                            experts one EP all-gather per local expert */
    RF_FW_GATHER_STAGE,  /* within the tensor's PP stage only: TP all-gather per tensor, EP
                            all-gather per expert bucket (slime, miles) */
    RF_FW_GATHER_HOST,   /* whole tensors already in pinned host memory on their owner: one
                            H2D copy (checkpoint-engine) */
};

/* Where BF16 weights become FP8 when the inference side is FP8. */
enum rf_fw_quant {
    RF_FW_QUANT_SENDER,        /* once on the sender, FP8 on the wire (refit, slime) */
    RF_FW_QUANT_RECEIVER_FULL, /* every receiver quantises every whole tensor it receives,
                                  BF16 on the wire (NeMo RL broadcast, verl) */
    RF_FW_QUANT_RECEIVER_SHARD /* each receiver quantises only its own shard (NeMo RL
                                  nccl_reshard's MXFP8 post step) */
};

/* The engine's loader, for its per-tensor cost on every receiver. */
enum rf_fw_loader {
    RF_FW_LOADER_VLLM,  /* one weight_loader call per HF tensor (FusedMoE: per expert and
                           projection): load_calls x tensor_overhead_us */
    RF_FW_LOADER_SGLANG /* as vLLM, and each tensor scans the model's parameter-name mapping
                           linearly: entries x loader_scan_us (sgl-project/sglang#19299) */
};

/* How a colocated framework puts whole tensors on every GPU before the engine's copy. */
enum rf_fw_colo_export {
    RF_FW_COLO_EXPORT_BRIDGE, /* Megatron-Bridge on every rank: PP broadcast, TP all-gather,
                                 experts an EP all-gather per local expert (as gather = export) */
    RF_FW_COLO_EXPORT_FSDP    /* FSDP's full_tensor(): one all-gather per parameter over the
                                 data-parallel (expert data-parallel) group, then TP/EP */
};

/* The longest reason a profile gives for an overlap (the `says` of its citation). */
#define RF_FW_WHY_MAX 240

/* How a point-to-point path's senders come to hold what they send. */
enum rf_fw_p2p_gather {
    RF_FW_P2P_GATHER_STAGE,  /* every rank of a training stage gathers the stage's whole
                                tensors (TP all-gather per tensor, EP per bucket: miles) */
    RF_FW_P2P_GATHER_EXPORT, /* Megatron-Bridge's export on every rank, every stage's tensors
                                (PP broadcast, TP all-gather, EP per local expert: NeMo RL) */
    RF_FW_P2P_GATHER_FSDP,   /* FSDP's full_tensor(): one all-gather per parameter over its
                                data-parallel group, on every rank (Perplexity) */
    RF_FW_P2P_GATHER_HOST    /* nothing: the bytes sit in pinned host memory on their owner
                                (checkpoint-engine's registered pools) */
};

/* What the framework registers with the NIC before it can move bytes point to point. */
enum rf_fw_p2p_register {
    RF_FW_P2P_REG_NONE,
    RF_FW_P2P_REG_REPLICA_PARAMS, /* every parameter of the sender's CPU replica, one region
                                     each (miles' register_cpu_memory) */
    RF_FW_P2P_REG_BUFFERS         /* `register_regions` buffers a worker (NeMo RL's two NIXL
                                     buckets; checkpoint-engine's H2D buffer) */
};

/* A framework's point-to-point path (a profile's `p2p` section, a scenario's strategy
 * "p2p"): the senders gather, convert and stage, the bytes move by RDMA writes or reads
 * between pairs, and the receivers load (doc/research/p2p-paths.md). */
struct rf_fw_p2p {
    bool present;
    bool broadcast_plan; /* planned as broadcast: the receiver reads, then broadcasts to the
                            engine's group (checkpoint-engine); else as reshard */
    enum rf_fw_p2p_gather gather;
    bool dense_whole;     /* each receiver gets every dense tensor whole, experts as its shard
                             (NeMo RL's select_hf_weight_for_vllm_target); else its shard */
    bool from_host;       /* the bytes leave pinned host memory (miles' CPU replica,
                             checkpoint-engine's pools); else the sender's GPU */
    bool read;            /* the receiver reads (NIXL, Mooncake READ); else the sender writes */
    bool into_weights;    /* written into the engine's live weights: no receiver copy, no
                             loader (miles, Perplexity); else into a buffer the engine loads */
    bool cpu_loader;      /* each sender runs the engine's loader on a CPU replica per
                             distinct target rank, a blocking D2H of its slice per tensor */
    bool wait_nonlast;    /* writes to every target rank but the last are waited */
    bool receiver_serial; /* a receiver loads bucket k before it reads k + 1 */
    bool pack_copy;       /* the sender copies what it sends into the registered buffer */
    bool experts_after;   /* the experts move as a second group after the dense tensors, a
                             barrier between (Perplexity's mesh groups) */
    enum rf_fw_quant quant;
    enum rf_fw_loader loader;
    double export_calls, load_calls;
    double bucket_hbm_fraction;
    int64_t bucket_max_bytes, bucket_bytes;
    int32_t buffers; /* 2: the sender works one bucket ahead of the wire and the receiver */
    enum rf_fw_p2p_register reg;
    int32_t register_regions;  /* with RF_FW_P2P_REG_BUFFERS: regions a worker */
    bool register_every_refit; /* registered at every refit, not the first only */
    char overlap_why[RF_FW_WHY_MAX];
};

struct rf_framework {
    bool present; /* false: no profile, the plan refit would run itself */
    char *name, *source;
    /* Strategies the framework runs, as a mask of 1 << enum rf_strategy. */
    uint32_t strategies;

    /* The broadcast path (strategy broadcast, and the misc part of hybrid), when the
     * framework has one (M2N has none: the fields below are then zero). */
    bool broadcast;
    enum rf_fw_comm comm;
    enum rf_fw_root root;
    enum rf_fw_gather gather;
    /* Bucket: bucket_hbm_fraction x the GPU's memory, at most bucket_max_bytes, when the
     * fraction is > 0; else bucket_bytes. */
    double bucket_hbm_fraction;
    int64_t bucket_max_bytes, bucket_bytes;
    int32_t buffers;           /* 2: export, wire and load of consecutive buckets overlap */
    bool broadcast_per_tensor; /* one NCCL broadcast per tensor, not per bucket (slime) */
    bool wait_load;            /* the sender waits for the engine's load before the next
                                  bucket (slime's lock): nothing overlaps */
    bool pack_copy;            /* the root packs each bucket with one HBM copy (torch.cat) */
    enum rf_fw_quant quant;
    /* Framework calls per Hugging Face tensor (a stacked expert tensor is `experts` HF
     * tensors), each costing the cluster's calibration.tensor_overhead_us: on the sender
     * (conversion, naming) and on every receiver (the engine's loader). */
    double export_calls, load_calls;
    double finalize_s; /* once per refit on the engine (process_weights_after_loading) */

    /* The reshard bulk path (hybrid's reshard tensors), when the framework has one. */
    bool reshard;
    bool reshard_relay;           /* the bulk is planned hierarchical (M2N's relays through
                                     per-domain leaders), else reshard */
    int32_t reshard_stage_groups; /* training PP stages the receivers take at a time; 0: all */
    bool misc_after_bulk;         /* the broadcast part starts once the bulk has ended */
    bool stack_experts;           /* each sender copies its local experts into one stacked
                                     tensor per call (one HBM copy of its expert bytes) */
    bool fused_copy;              /* receivers land fused gate/up targets in a temporary and
                                     copy them into the parameter (one HBM copy) */
    double reshard_calls;         /* framework calls per bulk tensor (host side) */
    /* Barriers over the communicator each bulk call's device kernel runs (M2N: one at its
     * start, one at its end, each barrier_us); each call is one kernel launch from the
     * engine's single host thread. 0: no per-call kernel is modelled. */
    int32_t reshard_barriers;
    /* The calls' times add up: each runs alone, none overlapping the next (M2N's
     * reshard_model_bench reports the slowest rank's sum of per-pattern timings). */
    bool reshard_serial;
    /* The scenario's refit = "first": the step pays what the framework sets up once. */
    bool first_refit;

    /* The point-to-point path, when the profile has one; p2p_run says this run is it (the
     * scenario's strategy "p2p", planned as p2p.broadcast_plan says). */
    struct rf_fw_p2p p2p;
    bool p2p_run;

    /* The broadcast path's engine loader. */
    enum rf_fw_loader loader;
    /* Why the broadcast path's buffers overlap export, wire and load (the citation of
     * broadcast.buffers, empty when buffers = 1). */
    char overlap_why[RF_FW_WHY_MAX];

    /* The colocated path (training and the engine on the same GPUs: verl's hybrid engine,
     * NeMo RL's colocated IPC path), when the profile has one. colocated_run says whether
     * this run's sides are colocated, which selects it. */
    bool colocated, colocated_run;
    enum rf_fw_colo_export colo_export;
    double colo_bucket_hbm_fraction;
    int64_t colo_bucket_max_bytes, colo_bucket_bytes;
    int32_t colo_buffers;        /* 2: the sender fills one IPC buffer while the engine loads
                                    the other; 1: it waits for the engine's ACK */
    bool colo_clone;             /* the engine clones each tensor out of the IPC buffer */
    enum rf_fw_quant colo_quant; /* where FP8 happens for an FP8 engine */
    double colo_export_calls, colo_load_calls;
    bool colo_offload_optimizer; /* optimizer state to host before the refit */
    bool colo_wake_weights;      /* the engine's weights come back from host (sleep level 1) */
    bool colo_offload_weights;   /* the training weights go to host after the refit */
    char colo_overlap_why[RF_FW_WHY_MAX];
};

void rf_framework_release(struct rf_framework *fw);

/* The names profiles use for each enum ("all", "stage", "export", "receiver_full"), and
 * back (-1 when unknown). */
const char *rf_fw_comm_name(enum rf_fw_comm v);
const char *rf_fw_root_name(enum rf_fw_root v);
const char *rf_fw_gather_name(enum rf_fw_gather v);
const char *rf_fw_quant_name(enum rf_fw_quant v);
int rf_fw_comm_parse(const char *s, enum rf_fw_comm *out);
int rf_fw_root_parse(const char *s, enum rf_fw_root *out);
int rf_fw_gather_parse(const char *s, enum rf_fw_gather *out);
int rf_fw_quant_parse(const char *s, enum rf_fw_quant *out);
const char *rf_fw_loader_name(enum rf_fw_loader v);
const char *rf_fw_colo_export_name(enum rf_fw_colo_export v);
/* The broadcast path's and the colocated path's buckets in bytes on a GPU of hbm_gb. */
int64_t rf_framework_bucket(const struct rf_framework *fw, double hbm_gb);
int64_t rf_framework_colo_bucket(const struct rf_framework *fw, double hbm_gb);
int64_t rf_framework_p2p_bucket(const struct rf_framework *fw, double hbm_gb);
const char *rf_fw_p2p_gather_name(enum rf_fw_p2p_gather v);
const char *rf_fw_p2p_register_name(enum rf_fw_p2p_register v);
int rf_fw_p2p_gather_parse(const char *s, enum rf_fw_p2p_gather *out);
int rf_fw_p2p_register_parse(const char *s, enum rf_fw_p2p_register *out);
int rf_fw_loader_parse(const char *s, enum rf_fw_loader *out);

/* Reads the normalised profile models/lib/framework.lua builds (the Lua -> C contract: every
 * field present, absent sections false) at stack index t into fw, which it initialises;
 * a broken contract is named by field ("framework.broadcast.buffers: 3 outside 1..2"). On
 * failure fw holds nothing to release. */
/* Whether the simulator leaves the plan's point-to-point gathers out of the wire: the
 * profile's export puts whole tensors on the root itself (gather = export, stage or host);
 * the plan keeps them so refit-exec can replay and verify the run. */
bool rf_framework_skips_gather(const struct rf_framework *fw);

struct lua_State;
int rf_framework_read(struct lua_State *L, int t, struct rf_framework *fw, struct rf_error *err);

#endif
