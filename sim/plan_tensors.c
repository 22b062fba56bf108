/* The plan's tensors: the model's, each with its strategy and wire dtype, and for an FP8
 * inference side the FP32 scale tensors its quantised weights gain. */
#include <stdlib.h>
#include <string.h>

#include "plan_int.h"

/* Copies the model's tensors into the plan and, for a quantising inference side (FP8, MXFP4,
 * NVFP4), adds one block-scale tensor per quantised weight (rf_tensor_scale). */
int planner_tensors(struct planner *p, const struct rf_model *model, const struct rf_side *infer,
                    enum rf_strategy strategy, const enum rf_strategy *tensor_strategy)
{
    struct rf_plan *plan = p->plan;
    /* The inference side's quantised dtype, which weights travel in unless the receivers
     * quantise (RF_DT_BF16 then: no quantisation on the wire). */
    enum rf_dtype quant =
        rf_dtype_quantised(infer->dtype) && !p->wire_native ? infer->dtype : RF_DT_BF16;
    size_t n = model->n_tensors;
    struct rf_tensor scale;
    for (size_t i = 0; i < model->n_tensors; i++)
        if (rf_tensor_scale(&model->tensors[i], quant, &scale))
            n++;
    plan->tensors = calloc(n, sizeof(*plan->tensors));
    plan->wire_dtype = calloc(n, sizeof(*plan->wire_dtype));
    plan->tensor_strategy = calloc(n, sizeof(*plan->tensor_strategy));
    if (!plan->tensors || !plan->wire_dtype || !plan->tensor_strategy)
        return rf_error_set(p->err, RF_ENOMEM, "out of memory");
    plan->n_tensors = n; /* names start NULL, so a release on error frees what was set */

    size_t k = model->n_tensors;
    for (size_t i = 0; i < model->n_tensors; i++) {
        const struct rf_tensor *src = &model->tensors[i];
        struct rf_tensor *t = &plan->tensors[i];
        *t = *src;
        t->scale_of = -1;
        t->name = strdup(src->name);
        if (!t->name)
            return rf_error_set(p->err, RF_ENOMEM, "out of memory");
        enum rf_strategy s = tensor_strategy ? tensor_strategy[i] : strategy;
        if ((unsigned)s >= RF_STRAT_COUNT)
            return rf_error_set(p->err, RF_EINVAL, "%s: strategy %d is not a strategy", src->name,
                                (int)s);
        if (s == RF_STRAT_HYBRID || s == RF_STRAT_AUTO)
            return rf_error_set(p->err, RF_EINVAL,
                                "%s: %s needs a per-tensor choice (broadcast, reshard or "
                                "hierarchical)",
                                src->name, rf_strategy_name(s));
        if (s == RF_STRAT_HIERARCHICAL && !p->topo)
            return rf_error_set(p->err, RF_EINVAL,
                                "hierarchical needs a cluster (its NVLink domains)");
        if (s == RF_STRAT_BROADCAST && src->delta.enc != RF_DELTA_NONE)
            return rf_error_set(p->err, RF_EINVAL,
                                "%s: a delta update travels point to point (reshard or "
                                "hierarchical); a broadcast moves whole tensors",
                                src->name);
        plan->tensor_strategy[i] = s;
        plan->wire_dtype[i] = src->quant && quant != RF_DT_BF16 ? quant : src->dtype;
        /* 4-bit weights travel as packed pairs along the last dim. */
        if (rf_dtype_4bit(plan->wire_dtype[i]) && src->shape[src->ndim - 1] % 2)
            return rf_error_set(p->err, RF_EINVAL,
                                "%s: %s packs two elements a byte along the last dim, which is "
                                "%lld (odd)",
                                src->name, rf_dtype_name(plan->wire_dtype[i]),
                                (long long)src->shape[src->ndim - 1]);
        if (rf_dtype_4bit(plan->wire_dtype[i]) && src->delta.enc != RF_DELTA_NONE)
            return rf_error_set(p->err, RF_EINVAL,
                                "%s: a delta of %s values (half a byte each) is not modelled; "
                                "its values travel in whole bytes",
                                src->name, rf_dtype_name(plan->wire_dtype[i]));
        struct rf_tensor *sc = &plan->tensors[k];
        if (!rf_tensor_scale(src, quant, sc))
            continue;
        sc->scale_of = (int)i;
        size_t len = strlen(src->name);
        /* Hugging Face's names: an FP8 checkpoint's `_scale_inv`, the 4-bit ones' `_scale`. */
        const char *suffix = quant == RF_DT_FP8 ? "_scale_inv" : "_scale";
        sc->name = malloc(len + strlen(suffix) + 1);
        if (!sc->name)
            return rf_error_set(p->err, RF_ENOMEM, "out of memory");
        memcpy(sc->name, src->name, len);
        strcpy(sc->name + len, suffix);
        plan->wire_dtype[k] = sc->dtype;
        plan->tensor_strategy[k] = s;
        k++;
    }
    return 0;
}
