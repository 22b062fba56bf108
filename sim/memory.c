/* Per-GPU memory of both sides at refit time (sim/memory.h): shards from the layout
 * algebra, Megatron's training state, vLLM's engine share. */
#include "memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Megatron with Adam in mixed precision (Megatron-LM docs, "distributed optimizer"): BF16
 * parameters (2 bytes) and gradients (2), and FP32 master weights plus two moments (4 + 4 +
 * 4 = 12 bytes a parameter). The distributed optimizer shards those 12 bytes over the
 * data-parallel group (with context parallelism folded in: dp x cp for dense parameters,
 * the expert data-parallel group for experts); FSDP has sharded the parameters already, so
 * their state follows them. Activations are out of scope: they depend on micro-batch and
 * recomputation, which a refit layout does not describe. */
enum { GRAD_BYTES = 2, ADAM_BYTES = 12 };

/* vLLM's default gpu_memory_utilization: the engine takes 90% of the GPU. */
#define DEFAULT_UTILIZATION 0.9

static bool is_expert(const struct rf_tensor *t)
{
    return rf_class_expert(t->cls);
}

/* Elements GPU (coordinate 0 on every axis but PP = stage) holds of tensor shape `shape`
 * placed as t on side s; 0 where the tensor lives on another stage. */
static int64_t first_numel(const struct rf_side *s, const struct rf_tensor *t, const int64_t *shape,
                           int64_t stage)
{
    struct rf_placement pl;
    const struct rf_mesh *mesh = rf_side_placement(s, t, &pl);
    if (pl.stage != stage)
        return 0;
    int64_t coord[RF_MESH_MAX] = {0};
    coord[pl.stage_axis] = stage;
    struct rf_box box;
    rf_placement_box(&pl, mesh, t->ndim, shape, coord, &box);
    return rf_box_numel(&box, t->ndim);
}

static int64_t stage_gpu(const struct rf_side *s, int64_t stage)
{
    int64_t coord[RF_MESH_MAX] = {0};
    coord[s->kind == RF_SIDE_MEGATRON ? 0 : 1] = stage; /* MG_PP, VL_PP (sim/layout.c) */
    return rf_mesh_gpu(&s->dense, coord);
}

static int64_t ceil_div(int64_t a, int64_t b)
{
    return b > 1 ? (a + b - 1) / b : a;
}

/* infer: the inference side's dtype, which quantised weights travel in (and a delta's last
 * sent copy is kept in). */
static void train_stage(const struct rf_model *model, const struct rf_side *s, int64_t stage,
                        enum rf_dtype infer, struct rf_gpu_memory *g)
{
    int64_t dense = 0, expert = 0;
    for (size_t i = 0; i < model->n_tensors; i++) {
        const struct rf_tensor *t = &model->tensors[i];
        int64_t n = first_numel(s, t, t->shape, stage);
        g->weights += n * (int64_t)rf_dtype_size(s->dtype);
        /* A delta's sender diffs against the weights it sent last, a copy it keeps in the
         * wire's dtype (sim/update_phases.c): counted with the weights. */
        if (t->delta.enc != RF_DELTA_NONE)
            g->weights +=
                rf_dtype_bytes(t->quant && rf_dtype_quantised(infer) ? infer : t->dtype, n);
        *(is_expert(t) ? &expert : &dense) += n;
    }
    g->grads = s->offload_params ? 0 : (dense + expert) * GRAD_BYTES;
    if (s->offload_optimizer)
        g->optimizer = 0;
    else if (s->distributed_optimizer && !s->fsdp)
        g->optimizer = (ceil_div(dense, s->dp * s->cp) + ceil_div(expert, s->edp)) * ADAM_BYTES;
    else
        g->optimizer = (dense + expert) * ADAM_BYTES;
}

/* The shard's bytes of each layer go to layer[t->layer + 1] when layer is not NULL. */
static int64_t infer_weights(const struct rf_model *model, const struct rf_side *s, int64_t stage,
                             enum rf_dtype infer, int64_t *layer)
{
    int64_t total = 0;
    for (size_t i = 0; i < model->n_tensors; i++) {
        const struct rf_tensor *t = &model->tensors[i];
        enum rf_dtype wire = t->quant ? infer : t->dtype;
        int64_t b = rf_dtype_bytes(wire, first_numel(s, t, t->shape, stage));
        struct rf_tensor scale;
        if (rf_tensor_scale(t, infer, &scale))
            b += rf_dtype_bytes(scale.dtype, first_numel(s, &scale, scale.shape, stage));
        total += b;
        if (layer && t->layer >= -1 && t->layer <= model->layers)
            layer[t->layer + 1] += b;
    }
    return total;
}

static void infer_stage(const struct rf_model *model, const struct rf_side *s, int64_t stage,
                        enum rf_dtype infer, struct rf_gpu_memory *g)
{
    g->weights += infer_weights(model, s, stage, infer, NULL);
}

/* An overlapped refit's landing buffer on the stage's first GPU (rf_memory_opts.landing):
 * its shard again, or its largest layer's (its whole shard if the per-layer sums cannot be
 * had: an upper bound). */
static int64_t landing_bytes(const struct rf_model *model, const struct rf_side *s, int64_t stage,
                             enum rf_dtype infer, int landing)
{
    if (landing == RF_LANDING_NONE)
        return 0;
    int64_t *layer =
        landing == RF_LANDING_LAYER ? calloc((size_t)model->layers + 2, sizeof(int64_t)) : NULL;
    int64_t total = infer_weights(model, s, stage, infer, layer), most = total;
    if (layer) {
        most = 0;
        for (int l = 0; l < model->layers + 2; l++)
            if (layer[l] > most)
                most = layer[l];
    }
    free(layer);
    return most;
}

static void side_memory(const struct rf_model *model, const struct rf_side *s, bool training,
                        enum rf_dtype infer, const struct rf_memory_opts *o,
                        struct rf_side_memory *m)
{
    memset(m, 0, sizeof(*m));
    m->offload_params = training && s->offload_params;
    m->offload_optimizer = training && s->offload_optimizer;
    m->hbm_bytes =
        (int64_t)((!training && o->infer_hbm_gb > 0 ? o->infer_hbm_gb : o->hbm_gb) * 1e9);
    double share = s->memory_utilization > 0 ? s->memory_utilization : DEFAULT_UTILIZATION;
    m->budget_bytes = training ? m->hbm_bytes : (int64_t)((double)m->hbm_bytes * share);
    m->worst.gpu = -1;
    for (int64_t stage = 0; stage < s->pp; stage++) {
        struct rf_gpu_memory g = {.gpu = stage_gpu(s, stage), .stage = stage};
        (training ? train_stage : infer_stage)(model, s, stage, infer, &g);
        if (!training)
            g.weights += landing_bytes(model, s, stage, infer, o->landing);
        /* Frozen weights: their bytes as the side holds them, and nothing else. */
        if (o->frozen) {
            struct rf_gpu_memory f = {0};
            (training ? train_stage : infer_stage)(o->frozen, s, stage, infer, &f);
            g.weights += f.weights;
        }
        g.staging = o->staging_bytes * (o->streams > 0 ? o->streams : 1);
        g.total = g.weights + g.grads + g.optimizer + g.staging;
        if (m->worst.gpu < 0 || g.total > m->worst.total)
            m->worst = g;
    }
    m->headroom_bytes = m->budget_bytes - m->worst.total;
    m->fits = training ? m->headroom_bytes >= 0 : m->headroom_bytes > 0;
}

void rf_memory_of(const struct rf_model *model, const struct rf_side *train,
                  const struct rf_side *infer, const struct rf_memory_opts *opts,
                  struct rf_side_memory *train_mem, struct rf_side_memory *infer_mem)
{
    side_memory(model, train, true, infer->dtype, opts, train_mem);
    side_memory(model, infer, false, infer->dtype, opts, infer_mem);
}

static double gb(int64_t b)
{
    return (double)b / 1e9;
}

void rf_memory_describe(const struct rf_side_memory *m, bool training, char *buf, size_t size)
{
    const struct rf_gpu_memory *g = &m->worst;
    if (training)
        snprintf(buf, size,
                 "GPU %lld (stage %lld) needs %.1f GB of %.1f (weights %.1f, grads %.1f%s, "
                 "optimizer %.1f%s, staging %.1f; activations not counted)",
                 (long long)g->gpu, (long long)g->stage, gb(g->total), gb(m->budget_bytes),
                 gb(g->weights), gb(g->grads), m->offload_params ? " offloaded to the host" : "",
                 gb(g->optimizer), m->offload_optimizer ? " offloaded to the host" : "",
                 gb(g->staging));
    else
        snprintf(buf, size,
                 "GPU %lld (stage %lld) needs %.1f GB of %.1f (weights %.1f, staging %.1f), "
                 "KV cache headroom %.1f GB",
                 (long long)g->gpu, (long long)g->stage, gb(g->total), gb(m->budget_bytes),
                 gb(g->weights), gb(g->staging), gb(m->headroom_bytes));
}

int rf_memory_refuse(const struct rf_side_memory *m, bool training, const char *site,
                     const char *share, struct rf_error *err)
{
    char line[256], why[256] = "";
    rf_memory_describe(m, training, line, sizeof(line));
    if (!training)
        snprintf(why, sizeof(why),
                 " (the engine's share is infer.gpu_memory_utilization of hbm_gb%s%s)",
                 share ? ", set by " : "", share ? share : "");
    return rf_error_set(err, RF_EINVAL,
                        "%s%s: the layout does not fit: %s%s; shard further (more tp, ep or "
                        "pp, or more GPUs), or set allow_overcommit = true for a what-if",
                        site ? site : "scenario: ",
                        site       ? ""
                        : training ? "train"
                                   : "infer",
                        line, why);
}
