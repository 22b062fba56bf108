/* Model helpers: enum names, parameter and byte counts. The tensors themselves come from the
 * Lua descriptions (sim/scenario.c). */
#include "model.h"

#include <stdlib.h>
#include <string.h>

static const char *const dtype_names[RF_DT_COUNT] = {"bf16", "fp16", "fp32", "fp8"};
static const size_t dtype_sizes[RF_DT_COUNT] = {2, 2, 4, 1};
static const char *const role_names[RF_ROLE_COUNT] = {
    "embedding", "attention", "dense_ffn", "expert", "shared_expert", "router", "norm", "lm_head"};
static const char *const class_names[RF_CLASS_COUNT] = {
    "column", "row", "vocab", "replicated", "expert_column", "expert_row"};

static int lookup(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0)
            return i;
    return -1;
}

size_t rf_dtype_size(enum rf_dtype dt)
{
    return dtype_sizes[dt];
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
    for (int d = 0; d < t->ndim; d++)
        n *= t->shape[d];
    return n;
}

int64_t rf_model_params(const struct rf_model *m)
{
    int64_t n = 0;
    for (size_t i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].scale_of < 0)
            n += rf_tensor_numel(&m->tensors[i]);
    return n;
}

int64_t rf_model_active_params(const struct rf_model *m)
{
    int64_t n = 0;
    for (size_t i = 0; i < m->n_tensors; i++) {
        const struct rf_tensor *t = &m->tensors[i];
        if (t->scale_of >= 0)
            continue;
        if (t->experts > 0)
            n += rf_tensor_numel(t) / t->experts * m->experts_per_token;
        else
            n += rf_tensor_numel(t);
    }
    return n;
}

int64_t rf_model_bytes(const struct rf_model *m)
{
    int64_t n = 0;
    for (size_t i = 0; i < m->n_tensors; i++)
        if (m->tensors[i].scale_of < 0)
            n += rf_tensor_numel(&m->tensors[i]) * (int64_t)rf_dtype_size(m->tensors[i].dtype);
    return n;
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
