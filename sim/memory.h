/* What one GPU of each side holds when the refit runs, from the layout's own shards, against
 * the GPU's memory: the first question of capacity planning ("does this layout fit"). */
#ifndef RF_MEMORY_H
#define RF_MEMORY_H

#include "layout.h"

/* The parts of one GPU's memory, in bytes. */
struct rf_gpu_memory {
    int64_t gpu;       /* the GPU (plan numbering) */
    int64_t stage;     /* its pipeline stage */
    int64_t weights;   /* its shards: BF16 parameters (training, with a delta update's last
                        * sent copy in the wire dtype), wire dtype with FP8 scales
                        * (inference) */
    int64_t grads;     /* training: BF16 gradients, one per parameter */
    int64_t optimizer; /* training: FP32 master weights and two Adam moments (12 bytes a
                        * parameter) over the distributed optimizer's data-parallel shards */
    int64_t staging;   /* the refit's staging: staging_bytes x streams in flight */
    int64_t total;
};

/* One side: its worst GPU against the budget. */
struct rf_side_memory {
    struct rf_gpu_memory worst; /* the GPU needing the most (ties: the lowest GPU) */
    int64_t hbm_bytes;          /* each GPU's memory (cluster hbm_gb) */
    int64_t budget_bytes;       /* what the side may use: hbm (training); hbm x
                                 * gpu_memory_utilization (inference: the engine's share) */
    int64_t headroom_bytes;     /* budget - worst.total: the KV cache's room (inference) */
    bool fits;                  /* worst.total <= budget (inference: and headroom > 0) */
    /* Gradients / optimizer state left on the host (training, verl's offload flags): counted
     * as 0, and the description says so. */
    bool offload_params, offload_optimizer;
};

struct rf_memory_opts {
    /* Each GPU's memory; infer_hbm_gb, where > 0, the inference side's (a mixed cluster). */
    double hbm_gb, infer_hbm_gb;
    int64_t staging_bytes, streams;
    /* Weights held beside the model's, frozen (a LoRA update's base model): their bytes
     * count, without gradients or optimizer state; NULL: none. */
    const struct rf_model *frozen;
    /* An overlapped refit's landing buffer on each inference GPU (sim/overlap.h), counted
     * with its weights: RF_LANDING_MODEL a second copy of its shard, RF_LANDING_LAYER its
     * largest layer's; 0: none. */
    int landing;
};

enum { RF_LANDING_NONE, RF_LANDING_MODEL, RF_LANDING_LAYER };

/* Memory of both sides of model between train and infer (sides initialised). The worst GPU
 * of a side is found among the first GPUs of its pipeline stages: torch.chunk's first chunk
 * is the largest along every sharded axis, so the GPU at coordinate 0 of every axis but PP
 * holds the largest shard of every tensor of its stage at once. */
void rf_memory_of(const struct rf_model *model, const struct rf_side *train,
                  const struct rf_side *infer, const struct rf_memory_opts *opts,
                  struct rf_side_memory *train_mem, struct rf_side_memory *infer_mem);

/* One line per side, e.g. "train  GPU 0 (stage 0): 60.1 GB of 80.0 (weights 10.0, grads
 * 10.0, optimizer 40.0, staging 0.1)"; what the command prints and errors quote. */
void rf_memory_describe(const struct rf_side_memory *m, bool training, char *buf, size_t size);

/* The refusal of a side that does not fit: names where the side was written (`site`,
 * "file:line: field"; NULL: "scenario: train"), its worst GPU, what it needs by part and
 * what it has, and the way out (RF_EINVAL). `share` (or NULL) says where the engine's
 * memory share was set. */
int rf_memory_refuse(const struct rf_side_memory *m, bool training, const char *site,
                     const char *share, struct rf_error *err);

#endif
