/* Test fixtures shared by the C unit tests: sides and tensors built directly in C. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "fixtures.h"

static int *even_stages(int64_t pp, int layers)
{
    int *s = calloc((size_t)pp, sizeof(int));
    for (int64_t i = 0; i < pp; i++)
        s[i] = (int)(layers / pp + (i < layers % pp ? 1 : 0));
    return s;
}

struct rf_side train_side(int64_t tp, int64_t cp, int64_t pp, int64_t dp, int64_t ep, int64_t etp,
                          bool fsdp, int64_t first, int layers)
{
    struct rf_side s = {.kind = RF_SIDE_MEGATRON,
                        .tp = tp,
                        .cp = cp,
                        .pp = pp,
                        .dp = dp,
                        .ep = ep,
                        .etp = etp,
                        .edp = tp * cp * dp / (ep * etp),
                        .fsdp = fsdp,
                        .gpus = tp * cp * pp * dp,
                        .first_gpu = first,
                        .replicas = 1,
                        .dtype = RF_DT_BF16,
                        .stage_layers = even_stages(pp, layers)};
    struct rf_error err;
    assert_int_equal(rf_side_init(&s, layers, &err), 0);
    return s;
}

struct rf_side infer_side(int64_t tp, int64_t pp, int64_t dp, int64_t ep, int64_t replicas,
                          int64_t first, int layers, enum rf_dtype dt)
{
    struct rf_side s = {.kind = RF_SIDE_VLLM,
                        .tp = tp,
                        .pp = pp,
                        .dp = dp,
                        .ep = ep,
                        .cp = 1,
                        .etp = 1,
                        .edp = 1,
                        .replicas = replicas,
                        .gpus = tp * pp * dp * replicas,
                        .first_gpu = first,
                        .dtype = dt,
                        .stage_layers = even_stages(pp, layers)};
    struct rf_error err;
    assert_int_equal(rf_side_init(&s, layers, &err), 0);
    return s;
}

struct rf_tensor tensor(const char *name, enum rf_class cls, enum rf_role role, int layer,
                        int64_t a, int64_t b, int64_t c)
{
    struct rf_tensor t = {.name = (char *)name,
                          .cls = cls,
                          .role = role,
                          .layer = layer,
                          .dtype = RF_DT_BF16,
                          .scale_of = -1,
                          .quant = true};
    t.ndim = c ? 3 : b ? 2 : 1;
    t.shape[0] = a;
    t.shape[1] = b;
    t.shape[2] = c;
    if (c)
        t.experts = a;
    if (cls == RF_CLASS_REPLICATED)
        t.quant = false;
    return t;
}
