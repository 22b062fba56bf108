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
