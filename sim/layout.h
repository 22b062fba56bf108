/* DTensor layout algebra: device meshes mapped onto GPUs, per-tensor placements
 * (Shard(d) or Replicate per mesh axis, nested torch.chunk splits, PP-stage presence), and
 * the two kinds of sides refit knows (Megatron training, vLLM/SGLang inference). */
#ifndef RF_LAYOUT_H
#define RF_LAYOUT_H

#include "error.h"
#include "model.h"

#define RF_MESH_MAX 6

/* A device mesh: GPU of coordinate c = first_gpu + sum(c[a] * stride[a]). Strides let two
 * meshes (Megatron's dense and expert meshes) factor the same GPUs differently. */
struct rf_mesh {
    int ndim;
    int64_t size[RF_MESH_MAX];
    int64_t stride[RF_MESH_MAX];
    int64_t first_gpu;
    const char *name[RF_MESH_MAX];
};

/* Placement of one tensor on a mesh. Axes listed in `shard` split a tensor dim, applied in
 * list order (the later axis chunks the range the earlier one left, torch.chunk semantics);
 * axes not listed replicate. When stage_axis >= 0 the tensor exists only on the mesh slice
 * whose coordinate on that axis equals `stage` (its pipeline stage). */
struct rf_placement {
    int n;
    struct {
        int8_t axis;
        int8_t dim;
    } shard[RF_MESH_MAX];
    int stage_axis;
    int64_t stage;
};

/* A box of a global tensor, in elements: [off, off + len) per dim. */
struct rf_box {
    int64_t off[RF_MAX_DIMS];
    int64_t len[RF_MAX_DIMS];
};

/* torch.chunk(n, k)[i]: chunks of ceil(n / k) elements; trailing chunks may be short or
 * empty (len 0). */
void rf_chunk(int64_t n, int64_t k, int64_t i, int64_t *off, int64_t *len);

/* Box held at mesh coordinate `coord` (stage presence is not checked here). */
void rf_placement_box(const struct rf_placement *pl, const struct rf_mesh *mesh, int ndim,
                      const int64_t *shape, const int64_t *coord, struct rf_box *box);
/* Elements of the box; -1 when a length is negative or the product overflows int64 (never
 * for a box of a tensor rf_model_check accepted). */
int64_t rf_box_numel(const struct rf_box *box, int ndim);
/* GPU of a coordinate within the mesh's sizes: exact for the meshes of a side
 * rf_side_init accepted, whose last GPU it checked. */
int64_t rf_mesh_gpu(const struct rf_mesh *mesh, const int64_t *coord);
/* The inverse: the coordinate of gpu on the mesh into coord (mesh->ndim entries), or false
 * when the mesh does not contain it. */
bool rf_mesh_coord(const struct rf_mesh *mesh, int64_t gpu, int64_t *coord);
/* Intersection of a and b into out; returns false when empty. */
bool rf_box_intersect(const struct rf_box *a, const struct rf_box *b, int ndim, struct rf_box *out);

enum rf_side_kind { RF_SIDE_MEGATRON, RF_SIDE_VLLM };

/* Where `replicas` engines of `engine` GPUs go from first_gpu on NVLink domains of
 * domain_gpus GPUs. Packed back to back they may split an engine across two domains (64-GPU
 * engines in 72-GPU GB200 racks: the second takes GPUs 64..127 of racks 0 and 1); then they
 * are placed domain by domain: an engine smaller than a domain never crosses one
 * (per_domain = domain / engine of them in each, the rest idle), a larger one takes
 * ceil(engine / domain) whole domains. When packing splits none (the engine divides the
 * domain or is a multiple of it, from an aligned first GPU) both placements are the same. */
struct rf_engine_place {
    bool gaps;          /* placed domain by domain, idle GPUs between engines */
    int64_t per_domain; /* engines in one domain (gaps, engine < domain); else 1 */
    int64_t stride;     /* GPUs from one domain's first engine to the next domain's (gaps);
                         * from one engine to the next when packed (the engine) */
    int64_t span;       /* GPUs from first_gpu to the last engine's last GPU, idle ones
                         * included: engines x engine GPUs when packed */
};

/* Places the engines (domain_gpus 0: packed); side names the side in errors. A domain
 * placement with gaps needs first_gpu at a domain boundary and, for engines smaller than a
 * domain, a whole number of domains' worth of engines: otherwise RF_EINVAL naming
 * "<side>.first_gpu" or "<side>.gpus", the domain size and the two ways out. */
int rf_engine_place(int64_t engine, int64_t replicas, int64_t first_gpu, int64_t domain_gpus,
                    const char *side, struct rf_engine_place *out, struct rf_error *err);

/* One side of a refit with every size resolved (the Lua presets validate and derive them). */
struct rf_side {
    enum rf_side_kind kind;
    int64_t gpus, first_gpu;
    int64_t tp, cp, pp, dp, ep, etp, edp, replicas;
    bool fsdp;
    enum rf_dtype dtype;
    /* Memory (sim/memory.h): Megatron's distributed optimizer shards Adam's state over data
     * parallelism (training); the engine's share of the GPU, vLLM's gpu_memory_utilization
     * (inference; 0: its default 0.9). */
    bool distributed_optimizer;
    /* Training state offloaded to the host between steps (verl's param_offload and
     * optimizer_offload): at the sync the parameters come back, gradients and optimizer
     * state stay on the host (sim/memory.c). */
    bool offload_params, offload_optimizer;
    double memory_utilization;
    /* How a vLLM side's engines sit on the GPUs (infer.placement): 0 packs them back to back
     * from first_gpu ("packed"); D > 0 places them NVLink domain by domain on domains of D
     * GPUs, never splitting an engine across two, the GPUs left over idle ("domain",
     * rf_engine_place). Megatron sides are packed (0). */
    int64_t domain_gpus;
    int *stage_layers; /* decoder layers per PP stage, pp entries */
    /* Derived by rf_side_init: */
    struct rf_mesh dense, expert;
    struct rf_engine_place place; /* where the engines went (packed: no gaps, span = gpus) */
    int *layer_stage;             /* stage of decoder layer l */
    int n_layers;
};

/* Checks a side's sizes whoever filled them (Lua, the store, a test), so no product of
 * them overflows: every parallel size and gpus within 1..RF_GPUS_MAX, their product equal
 * to gpus, first_gpu + span <= RF_GPUS_MAX, Megatron's expert factorisation, the placement
 * (rf_engine_place), stage_layers non-negative. Once rf_side_init has built the meshes, also
 * that each mesh's last GPU lies in the side's range. Messages start with the field:
 * "<name>.first_gpu: ...". */
int rf_side_check(const struct rf_side *side, const char *name, struct rf_error *err);
/* Checks the side (named "train" for Megatron, "infer" for vLLM), builds the meshes and
 * the layer -> stage map; checks that stage_layers sums to layers. */
int rf_side_init(struct rf_side *side, int n_layers, struct rf_error *err);
void rf_side_release(struct rf_side *side);
int64_t rf_side_stage_of(const struct rf_side *side, int layer);
/* Mesh and placement of tensor t on this side. */
const struct rf_mesh *rf_side_placement(const struct rf_side *side, const struct rf_tensor *t,
                                        struct rf_placement *pl);
/* Whether GPU g holds a shard of the side: in its range and, placed with gaps, on an
 * engine rather than an idle GPU. */
bool rf_side_has_gpu(const struct rf_side *side, int64_t g);
/* The box GPU g holds of tensor t on the side (its stage's shard), or false when it holds
 * none (not on the side, another stage, or an empty chunk). */
bool rf_side_held_box(const struct rf_side *side, const struct rf_tensor *t, int64_t g,
                      struct rf_box *box);
/* Short human description, e.g. "tp8 cp1 pp16 dp16 ep64 etp1"; a placement with gaps says
 * so: "tp8 pp1 dp8 ep64 x4 replicas, 1 per 72-GPU domain". */
void rf_side_describe(const struct rf_side *side, char *buf, size_t size);

#endif
