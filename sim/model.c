/* Model helpers: enum names, parameter and byte counts. The tensors themselves come from the
 * Lua descriptions (sim/scenario.c). */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"

static const char *const dtype_names[RF_DT_COUNT] = {"bf16",  "fp32",  "fp8",
                                                     "mxfp4", "nvfp4", "e8m0"};
static const int dtype_bits[RF_DT_COUNT] = {16, 32, 8, 4, 4, 8};
static const char *const role_names[RF_ROLE_COUNT] = {
    "embedding", "attention", "dense_ffn", "expert", "shared_expert", "router", "norm", "lm_head"};
static const char *const class_names[RF_CLASS_COUNT] = {
    "column", "row", "vocab", "replicated", "expert_column", "expert_row", "expert_replicated"};

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

bool rf_tensor_scale(const struct rf_tensor *w, enum rf_dtype infer, struct rf_tensor *scale)
{
    if (!w->quant || w->ndim < 2 || !rf_dtype_quantised(infer))
        return false;
    *scale = *w;
    scale->name = NULL;
    scale->quant = false;
    scale->scale_of = -1;
    scale->delta = (struct rf_delta){0}; /* a block's scale changes with any of its elements */
    scale->lora = RF_LORA_NONE;
    scale->lora_merge = false;
    int last = w->ndim - 1;
    if (infer == RF_DT_FP8) {
        scale->dtype = RF_DT_FP32;
        for (int d = last - 1; d <= last; d++)
            scale->shape[d] = (w->shape[d] + RF_FP8_BLOCK - 1) / RF_FP8_BLOCK;
        return true;
    }
    int64_t block = infer == RF_DT_MXFP4 ? RF_MXFP4_BLOCK : RF_NVFP4_BLOCK;
    scale->dtype = infer == RF_DT_MXFP4 ? RF_DT_E8M0 : RF_DT_FP8;
    scale->shape[last] = (w->shape[last] + block - 1) / block;
    return true;
}

bool rf_dtype_quantised(enum rf_dtype dt)
{
    return dt == RF_DT_FP8 || rf_dtype_4bit(dt);
}

bool rf_dtype_4bit(enum rf_dtype dt)
{
    return dt == RF_DT_MXFP4 || dt == RF_DT_NVFP4;
}

int rf_dtype_bits(enum rf_dtype dt)
{
    return dtype_bits[dt];
}

int64_t rf_dtype_bytes(enum rf_dtype dt, int64_t n)
{
    /* Without n x bits overflowing: rf_model_check keeps n x RF_DTYPE_MAX_SIZE in int64. */
    return n / 8 * dtype_bits[dt] + (n % 8 * dtype_bits[dt] + 7) / 8;
}

size_t rf_dtype_size(enum rf_dtype dt)
{
    return dtype_bits[dt] < 8 ? 1 : (size_t)dtype_bits[dt] / 8;
}
const char *rf_dtype_name(enum rf_dtype dt)
{
    return dtype_names[dt];
}
const char *rf_role_name(enum rf_role role)
{
    return role_names[role];
}
const char *rf_class_name(enum rf_class cls)
{
    return class_names[cls];
}

bool rf_class_expert(enum rf_class cls)
{
    return cls == RF_CLASS_EXPERT_COLUMN || cls == RF_CLASS_EXPERT_ROW ||
           cls == RF_CLASS_EXPERT_REPLICATED;
}

int rf_dtype_parse(const char *s, enum rf_dtype *out)
{
    int i = lookup(dtype_names, RF_DT_COUNT, s);
    if (i < 0)
        return -1;
    *out = (enum rf_dtype)i;
    return 0;
}

int rf_role_parse(const char *s, enum rf_role *out)
{
    int i = lookup(role_names, RF_ROLE_COUNT, s);
    if (i < 0)
        return -1;
    *out = (enum rf_role)i;
    return 0;
}

int rf_class_parse(const char *s, enum rf_class *out)
{
    int i = lookup(class_names, RF_CLASS_COUNT, s);
    if (i < 0)
        return -1;
    *out = (enum rf_class)i;
    return 0;
}

int64_t rf_tensor_numel(const struct rf_tensor *t)
{
    int64_t n = 1;
    if (t->ndim < 0 || t->ndim > RF_MAX_DIMS)
        return -1;
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] < 1 || rf_mul_overflow(n, t->shape[d], &n))
            return -1;
    return n;
}

/* The model's totals, each -1 once it overflows (all three when a tensor is not a size);
 * bad is the first tensor that made one overflow, else NULL. */
struct totals {
    int64_t params, active, bytes;
    const struct rf_tensor *bad;
};

/* *acc += v unless *acc already overflowed; returns true when this sum overflows. */
static bool sum(int64_t *acc, int64_t v)
{
    if (*acc < 0)
        return false;
    if (rf_add_overflow(*acc, v, acc)) {
        *acc = -1;
        return true;
    }
    return false;
}

static void totals(const struct rf_model *m, struct totals *o)
{
    *o = (struct totals){0};
    for (size_t i = 0; i < m->n_tensors; i++) {
        const struct rf_tensor *t = &m->tensors[i];
        if (t->scale_of >= 0)
            continue;
        int64_t n = rf_tensor_numel(t), active = n, bytes = -1;
        bool size =
            n >= 0 && (unsigned)t->dtype < RF_DT_COUNT && n <= INT64_MAX / RF_DTYPE_MAX_SIZE &&
            (bytes = rf_dtype_bytes(t->dtype, n)) >= 0 &&
            !(t->experts > 0 && rf_mul_overflow(n / t->experts, m->experts_per_token, &active)) &&
            active >= 0;
        if (!size)
            o->params = o->active = o->bytes = -1;
        bool over = !size;
        if (size) {
            over |= sum(&o->params, n);
            over |= sum(&o->active, active);
            over |= sum(&o->bytes, bytes);
        }
        if (over && !o->bad)
            o->bad = t;
    }
}

int64_t rf_model_params(const struct rf_model *m)
{
    struct totals o;
    totals(m, &o);
    return o.params;
}

int64_t rf_model_active_params(const struct rf_model *m)
{
    struct totals o;
    totals(m, &o);
    return o.active;
}

int64_t rf_model_bytes(const struct rf_model *m)
{
    struct totals o;
    totals(m, &o);
    return o.bytes;
}

/* "4294967296 x 4294967296", for messages. */
static void describe_shape(const struct rf_tensor *t, char *buf, size_t size)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int d = 0; d < t->ndim && at < size; d++)
        at +=
            (size_t)snprintf(buf + at, size - at, "%s%lld", d ? " x " : "", (long long)t->shape[d]);
}

static int check_tensor(const struct rf_model *m, const struct rf_tensor *t, struct rf_error *err)
{
    const char *name = t->name;
    if (t->ndim < 1 || t->ndim > RF_MAX_DIMS)
        return rf_error_set(err, RF_EINVAL, "%s.shape: %d dims, expected 1 to %d", name, t->ndim,
                            RF_MAX_DIMS);
    for (int d = 0; d < t->ndim; d++)
        if (t->shape[d] < 1)
            return rf_error_set(err, RF_EINVAL, "%s.shape[%d]: %lld is not a positive size", name,
                                d + 1, (long long)t->shape[d]);
    int64_t n = rf_tensor_numel(t), bytes;
    if (n < 0 || rf_mul_overflow(n, RF_DTYPE_MAX_SIZE, &bytes)) {
        char shape[128];
        describe_shape(t, shape, sizeof(shape));
        if (n < 0)
            return rf_error_set(err, RF_EINVAL, "%s.shape: %s elements overflow 64-bit counts",
                                name, shape);
        return rf_error_set(err, RF_EINVAL,
                            "%s.shape: %s = %lld elements, whose FP32 bytes overflow 64-bit "
                            "counts",
                            name, shape, (long long)n);
    }
    if ((unsigned)t->dtype >= RF_DT_COUNT)
        return rf_error_set(err, RF_EINVAL, "%s.dtype: %d is not a dtype", name, (int)t->dtype);
    if ((unsigned)t->role >= RF_ROLE_COUNT)
        return rf_error_set(err, RF_EINVAL, "%s.role: %d is not a role", name, (int)t->role);
    if ((unsigned)t->cls >= RF_CLASS_COUNT)
        return rf_error_set(err, RF_EINVAL, "%s.class: %d is not a class", name, (int)t->cls);
    if (t->layer < -1 || t->layer > m->layers)
        return rf_error_set(err, RF_EINVAL, "%s.layer: %d outside -1..%d", name, t->layer,
                            m->layers);
    bool expert = rf_class_expert(t->cls);
    if (expert && (t->ndim != 3 || t->experts != t->shape[0]))
        return rf_error_set(err, RF_EINVAL,
                            "%s.experts: %lld, expected an [E, out, in] tensor with experts = E",
                            name, (long long)t->experts);
    if (t->experts < 0)
        return rf_error_set(err, RF_EINVAL, "%s.experts: %lld is negative", name,
                            (long long)t->experts);
    if (t->cls == RF_CLASS_ROW && t->ndim < 2)
        return rf_error_set(err, RF_EINVAL, "%s: a row-parallel tensor needs 2 dims", name);
    /* rf_delta_changed multiplies a box's elements by the density in parts per million. */
    if ((unsigned)t->delta.enc >= RF_DELTA_COUNT ||
        (t->delta.enc != RF_DELTA_NONE &&
         (t->delta.ppm < 1 || t->delta.ppm > RF_DELTA_PPM || n > INT64_MAX / RF_DELTA_PPM)))
        return rf_error_set(err, RF_EINVAL,
                            "%s.delta: encoding %d at %d parts per million, expected an encoding "
                            "and 1 to 10^6 of a tensor below 2^43 elements",
                            name, (int)t->delta.enc, (int)t->delta.ppm);
    if (t->scale_of >= 0 && (size_t)t->scale_of >= m->n_tensors)
        return rf_error_set(err, RF_EINVAL, "%s.scale_of: %d is not a tensor of the model", name,
                            t->scale_of);
    return 0;
}

/* An adapter pair: A [r, in] (replicated or row) right before its B [out, r] (column or
 * replicated), the other class of the two replicated, both merged or neither; of stacked
 * experts, A [E, r, in] and B [E, out, r] in the expert classes. */
static int check_lora(const struct rf_model *m, size_t i, struct rf_error *err)
{
    const struct rf_tensor *t = &m->tensors[i];
    if (t->lora == RF_LORA_NONE)
        return t->lora_merge ? rf_error_set(err, RF_EINVAL,
                                            "%s.lora_merge: set on a tensor that "
                                            "is no LoRA adapter",
                                            t->name)
                             : 0;
    if (t->lora > RF_LORA_B)
        return rf_error_set(err, RF_EINVAL, "%s.lora: %d is not an adapter part", t->name,
                            (int)t->lora);
    const struct rf_tensor *a = t->lora == RF_LORA_A ? t : i > 0 ? &m->tensors[i - 1] : NULL;
    const struct rf_tensor *b = t->lora == RF_LORA_A && i + 1 < m->n_tensors ? &m->tensors[i + 1]
                                : t->lora == RF_LORA_B                       ? t
                                                                             : NULL;
    int n = a ? a->ndim : 0;
    bool ok =
        a && b && a->lora == RF_LORA_A && b->lora == RF_LORA_B && (n == 2 || n == 3) &&
        b->ndim == n && a->shape[n - 2] == b->shape[n - 1] && a->lora_merge == b->lora_merge &&
        (n == 2 || a->shape[0] == b->shape[0]) &&
        ((n == 2 && ((a->cls == RF_CLASS_REPLICATED && b->cls == RF_CLASS_COLUMN) ||
                     (a->cls == RF_CLASS_ROW && b->cls == RF_CLASS_REPLICATED))) ||
         (n == 3 && ((a->cls == RF_CLASS_EXPERT_REPLICATED && b->cls == RF_CLASS_EXPERT_COLUMN) ||
                     (a->cls == RF_CLASS_EXPERT_ROW && b->cls == RF_CLASS_EXPERT_REPLICATED))));
    return ok ? 0
              : rf_error_set(err, RF_EINVAL,
                             "%s.lora: an adapter pair is A [r, in] (replicated or row) right "
                             "before its B [out, r] (column or replicated), or stacked: A [E, "
                             "r, in] (expert_replicated or expert_row), B [E, out, r] "
                             "(expert_column or expert_replicated)",
                             t->name);
}

int rf_model_check(const struct rf_model *m, struct rf_error *err)
{
    const char *model = m->name ? m->name : "model";
    int rc;
    if (m->layers < 0)
        return rf_error_set(err, RF_EINVAL, "%s.layers: %d is negative", model, m->layers);
    if (m->experts < 0 || m->experts_per_token < 0 || m->experts_per_token > m->experts)
        return rf_error_set(err, RF_EINVAL,
                            "%s.experts_per_token: %lld, expected 0 to the %lld experts", model,
                            (long long)m->experts_per_token, (long long)m->experts);
    /* Tensor indices are int32 in the plan, and an FP8 side adds a scale per weight. */
    if (m->n_tensors > INT32_MAX / 2)
        return rf_error_set(err, RF_EINVAL, "%s.tensors: %zu tensors, more than 2^30", model,
                            m->n_tensors);
    if (m->n_tensors > 0 && !m->tensors)
        return rf_error_set(err, RF_EINVAL, "%s.tensors: missing", model);
    for (size_t i = 0; i < m->n_tensors; i++) {
        if (!m->tensors[i].name)
            return rf_error_set(err, RF_EINVAL, "%s.tensors[%zu].name: missing", model, i + 1);
        if ((rc = check_tensor(m, &m->tensors[i], err)) < 0)
            return rc;
        if ((rc = check_lora(m, i, err)) < 0)
            return rc;
    }
    struct totals o;
    totals(m, &o);
    if (o.bad)
        return rf_error_set(err, RF_EINVAL,
                            "%s: model %s's %s overflow 64 bits when this tensor is added",
                            o.bad->name, model,
                            o.params < 0   ? "parameters"
                            : o.active < 0 ? "active parameters"
                                           : "bytes");
    return 0;
}

void rf_lora_weight(const struct rf_tensor *a, const struct rf_tensor *b, struct rf_tensor *w)
{
    *w = *b;
    w->name = NULL;
    w->shape[w->ndim - 1] = a->shape[a->ndim - 1];
    bool whole = a->cls == RF_CLASS_REPLICATED || a->cls == RF_CLASS_EXPERT_REPLICATED;
    if (rf_class_expert(a->cls))
        w->cls = whole ? RF_CLASS_EXPERT_COLUMN : RF_CLASS_EXPERT_ROW;
    else
        w->cls = whole ? RF_CLASS_COLUMN : RF_CLASS_ROW;
    w->lora = RF_LORA_NONE;
    w->lora_merge = false;
}

bool rf_model_has_delta(const struct rf_model *m)
{
    for (size_t i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].delta.enc != RF_DELTA_NONE)
            return true;
    return false;
}

void rf_model_release(struct rf_model *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n_tensors; i++)
        free(m->tensors[i].name);
    free(m->tensors);
    free(m->name);
    free(m->family);
    free(m->source);
    memset(m, 0, sizeof(*m));
}
