/* Checked size arithmetic and the size limits C enforces on its own, whatever models/lib
 * checked first: every product or sum of sizes that grows with input goes through here. */
#ifndef RF_CHECKED_H
#define RF_CHECKED_H

#include <stdbool.h>
#include <stdint.h>

/* GPUs of a cluster, and the highest GPU number + 1 a side may reach. Transfers store GPUs
 * as int32 and the planner keeps per-GPU arrays, so a bound far below 2^31 keeps every
 * GPU product (count x stride, first_gpu + gpus) exact; 2^20 is 170 x the largest cluster
 * refit models (6,144 GPUs) and the bound models/lib puts on GPU counts. */
#define RF_GPUS_MAX (INT64_C(1) << 20)

/* *out = a * b; returns true (and leaves *out unspecified) when the product overflows. */
static inline bool rf_mul_overflow(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_mul_overflow(a, b, out);
}

/* *out = a + b; returns true when the sum overflows. */
static inline bool rf_add_overflow(int64_t a, int64_t b, int64_t *out)
{
    return __builtin_add_overflow(a, b, out);
}

/* acc += a * b; returns true, with acc unchanged, when the product or the sum overflows. */
static inline bool rf_muladd_overflow(int64_t *acc, int64_t a, int64_t b)
{
    int64_t p, s;
    if (__builtin_mul_overflow(a, b, &p) || __builtin_add_overflow(*acc, p, &s))
        return true;
    *acc = s;
    return false;
}

#endif
