/* Model architectures as the planner sees them: a flat array of weight tensors, each with
 * its Hugging Face name, global shape, dtype, role, layer and placement class. */
#ifndef RF_MODEL_H
#define RF_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "delta.h"
#include "error.h"

#define RF_MAX_DIMS 4

/* Element types. MXFP4 and NVFP4 are 4-bit (E2M1 values, two to a byte, the lower nibble
 * first) with block scales of their own (rf_tensor_scale); E8M0 is MXFP4's scale byte. */
enum rf_dtype {
    RF_DT_BF16,
    RF_DT_FP32,
    RF_DT_FP8,
    RF_DT_MXFP4,
    RF_DT_NVFP4,
    RF_DT_E8M0,
    RF_DT_COUNT
};

/* What a tensor is for; summaries are given per role. */
enum rf_role {
    RF_ROLE_EMBEDDING,
    RF_ROLE_ATTENTION,
    RF_ROLE_DENSE_FFN,
    RF_ROLE_EXPERT,
    RF_ROLE_SHARED_EXPERT,
    RF_ROLE_ROUTER,
    RF_ROLE_NORM,
    RF_ROLE_LM_HEAD,
    RF_ROLE_COUNT
};

/* How the tensor is split by tensor and expert parallelism (see doc/architecture.md).
 * Placements per side are derived from the class, so no per-shard spec is ever stored. */
enum rf_class {
    RF_CLASS_COLUMN,        /* [out, in]: TP shards dim 0 */
    RF_CLASS_ROW,           /* [out, in]: TP shards dim 1 */
    RF_CLASS_VOCAB,         /* [vocab, hidden]: TP shards dim 0 */
    RF_CLASS_REPLICATED,    /* whole on every rank of its stage */
    RF_CLASS_EXPERT_COLUMN, /* [E, out, in]: EP shards dim 0, TP/ETP dim 1 */
    RF_CLASS_EXPERT_ROW,    /* [E, out, in]: EP shards dim 0, TP/ETP dim 2 */
    /* [E, r, n]: EP shards dim 0, whole on every TP/ETP rank (a LoRA adapter of stacked
     * experts: A of a column expert weight, B of a row one) */
    RF_CLASS_EXPERT_REPLICATED,
    RF_CLASS_COUNT
};

struct rf_tensor {
    char *name;
    int ndim;
    int64_t shape[RF_MAX_DIMS];
    enum rf_dtype dtype;
    enum rf_role role;
    enum rf_class cls;
    int layer;       /* -1 embedding, 0..layers-1 decoder layers, layers = final norm/lm_head */
    int64_t experts; /* E for a stacked [E, out, in] expert tensor, else 0 */
    bool quant;      /* becomes FP8 (with block scales) when the inference side is FP8 */
    int scale_of;    /* for a derived FP8 scale tensor: index of its weight, else -1 */
    /* A delta update's encoding and density (models/lib/update.lua); zeroed: the whole
     * tensor moves. */
    struct rf_delta delta;
    /* A LoRA adapter (models/lib/update.lua): RF_LORA_A, the A [r, in] of a weight W, is
     * followed in the model by its RF_LORA_B, B [out, r]; lora_merge on both when the
     * engine folds B A into W after the refit. */
    uint8_t lora;
    bool lora_merge;
};

enum { RF_LORA_NONE, RF_LORA_A, RF_LORA_B };

/* The weight W [out, in] adapter pair a (A) and b (B) of a merged LoRA update folds into,
 * classed as the engine shards it (A replicated: a column W; A row: a row W). */
void rf_lora_weight(const struct rf_tensor *a, const struct rf_tensor *b, struct rf_tensor *w);

struct rf_model {
    char *name;
    char *family;
    char *source;
    int layers;
    int64_t experts;
    int64_t experts_per_token;
    struct rf_tensor *tensors;
    size_t n_tensors;
};

/* DeepSeek-V3's FP8 checkpoints (and vLLM's block-quantised FP8): one FP32 scale per
 * RF_FP8_BLOCK x RF_FP8_BLOCK block of a weight's last two dims (weight_block_size
 * [128, 128] in config.json). */
#define RF_FP8_BLOCK 128

/* The 4-bit formats' blocks along a weight's last dim: MXFP4 (the OCP Microscaling Formats
 * (MX) Specification v1.0, 2023: 32 E2M1 values share one E8M0 scale; gpt-oss ships its
 * experts so) and NVFP4 (NVIDIA, "Introducing NVFP4 for Efficient and Accurate Low-Precision
 * Inference", 2025: 16 E2M1 values share one FP8 E4M3 scale). NVFP4's FP32 per-tensor scale
 * (4 bytes a weight, under a millionth of its bytes) is not counted. */
#define RF_MXFP4_BLOCK 32
#define RF_NVFP4_BLOCK 16

/* The block-scale tensor an inference side of dtype `infer` gains for quantised weight w
 * (placed as w): FP8, FP32 scales of RF_FP8_BLOCK-square blocks over the last two dims
 * (Hugging Face's `<w>_scale_inv`); MXFP4, E8M0 scales of RF_MXFP4_BLOCK along the last dim;
 * NVFP4, FP8 scales of RF_NVFP4_BLOCK along it (both named `<w>_scale`). Fills scale (name
 * NULL, scale_of -1) and returns true, or returns false when w gains none. The planner and
 * memory count scales through it (and the description and the executor see the planned
 * ones: the store holds their shapes). */
bool rf_tensor_scale(const struct rf_tensor *w, enum rf_dtype infer, struct rf_tensor *scale);
/* Whether an inference side of this dtype quantises weights (FP8 or a 4-bit format), and
 * whether the dtype is 4-bit (two elements a byte). */
bool rf_dtype_quantised(enum rf_dtype dt);
bool rf_dtype_4bit(enum rf_dtype dt);

/* Bits of one element, and the bytes of n elements (n x bits / 8, rounded up: the planner
 * keeps 4-bit boxes to an even count). rf_dtype_size is the bytes of one element of a dtype
 * of whole bytes (1 for a 4-bit one, its packed pair: only the executor's packed view uses
 * that). */
int rf_dtype_bits(enum rf_dtype dt);
int64_t rf_dtype_bytes(enum rf_dtype dt, int64_t n);
size_t rf_dtype_size(enum rf_dtype dt);
const char *rf_dtype_name(enum rf_dtype dt);
int rf_dtype_parse(const char *s, enum rf_dtype *out);
const char *rf_role_name(enum rf_role role);
int rf_role_parse(const char *s, enum rf_role *out);
const char *rf_class_name(enum rf_class cls);
/* Whether tensors of the class are stacked experts [E, ...] (EP shards dim 0). */
bool rf_class_expert(enum rf_class cls);
int rf_class_parse(const char *s, enum rf_class *out);

/* The widest dtype's bytes: rf_model_check keeps numel x this within int64, so a checked
 * tensor's bytes are exact in any dtype it may travel as. */
#define RF_DTYPE_MAX_SIZE 4

/* Validates a model whoever built it (the Lua bridge, a test, a stored run): enums in
 * range, 1 to RF_MAX_DIMS positive dims, layer within -1..layers, expert tensors [E, out,
 * in] with experts = E, and every element count, byte count (in any dtype) and total
 * within int64. Errors name the tensor and field. The planner calls it on entry; after it
 * succeeds the counts below are exact. */
int rf_model_check(const struct rf_model *m, struct rf_error *err);

/* Elements of t; -1 when a dim is not positive or the product overflows int64 (never for
 * a tensor of a model rf_model_check accepted). */
int64_t rf_tensor_numel(const struct rf_tensor *t);
/* Totals over the model's own tensors (FP8 scales excluded); -1 where a count overflows. */
int64_t rf_model_params(const struct rf_model *m);
/* Parameters touched per token: every non-expert weight plus experts_per_token/experts of
 * each stacked expert tensor. */
int64_t rf_model_active_params(const struct rf_model *m);
/* Bytes of the model in its native dtypes (BF16 weights, FP32 where the model keeps it). */
int64_t rf_model_bytes(const struct rf_model *m);
/* Whether any tensor of m travels as a delta (its boxes encoded, sim/delta.h). */
bool rf_model_has_delta(const struct rf_model *m);
void rf_model_release(struct rf_model *m);

#endif
