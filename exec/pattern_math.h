/* The pattern's arithmetic, defined once for the host (pattern.c) and the GPU (kernels.cu):
 * the hash of an element's index in its tensor, the emulated BF16 -> FP8 conversion, and the
 * walk from an element of a box to its index in the whole tensor. C11 and CUDA C++ alike. */
#ifndef RF_PATTERN_MATH_H
#define RF_PATTERN_MATH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define RF_HD __host__ __device__ static inline
#else
#include <stdbool.h>
#define RF_HD static inline
#endif

/* Dims of a tensor (layout.h's RF_MAX_DIMS; pattern.c checks that they agree). */
#define RF_PATTERN_DIMS 4

/* splitmix64's finaliser: every input bit changes about half of the output bits, so a
 * shifted, swapped or stale element is caught with probability 1 - 2^-(8 * elem). */
RF_HD uint64_t rf_pattern_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* The emulated quantisation BF16 -> FP8 e4m3: the high byte of the 16-bit value (sign and
 * seven exponent bits). It is not e4m3 arithmetic, only a deterministic, byte-shrinking
 * function of the gathered value that a copy engine can apply (a strided 1-byte copy) and a
 * kernel computes at memory speed. */
RF_HD uint8_t rf_fp8_of_bf16(uint16_t v)
{
    return (uint8_t)(v >> 8);
}

/* The emulated quantisation BF16 -> 4-bit E2M1 (MXFP4, NVFP4): the top nibble (sign and
 * three exponent bits), a deterministic, byte-shrinking function like the FP8 one. */
RF_HD uint8_t rf_fp4_of_bf16(uint16_t v)
{
    return (uint8_t)(v >> 12);
}

/* Value of element `index` (row-major in the whole tensor) of tensor `tensor`, in the low
 * `elem` bytes (1, 2, 4 or 8). A 1-byte (FP8) value is the conversion of the 2-byte value,
 * so an FP8 element is right whoever converted it (the training sender or the root). */
RF_HD uint64_t rf_pattern_value(int32_t tensor, int64_t index, size_t elem)
{
    uint64_t v = rf_pattern_mix(((uint64_t)(uint32_t)tensor << 40) ^ (uint64_t)index);
    if (elem == 1)
        return rf_fp8_of_bf16((uint16_t)v);
    if (elem >= 8)
        return v;
    return v & ((1ULL << (8 * elem)) - 1);
}

/* Element q of a packed tensor (a 4-bit wire's pairs along the last dim: the pair of
 * elements 2q and 2q + 1 of the tensor, row-major, since the last dim is even) in `elem`
 * bytes: 4, the two BF16 values, the lower first (what a broadcast gathers); 1, their
 * 4-bit conversions in one byte, the lower nibble first (what travels and lands). */
RF_HD uint64_t rf_pattern_pair(int32_t tensor, int64_t q, size_t elem)
{
    uint64_t lo = rf_pattern_value(tensor, 2 * q, 2), hi = rf_pattern_value(tensor, 2 * q + 1, 2);
    if (elem == 1)
        return (uint64_t)rf_fp4_of_bf16((uint16_t)lo) | (uint64_t)rf_fp4_of_bf16((uint16_t)hi) << 4;
    return lo | hi << 16;
}

/* Where the elements of a box sit in their tensor: element j of the box (row-major within
 * it) is element rf_pattern_index(g, j) of the tensor (row-major within the tensor).
 * `packed`: the tensor is a 4-bit wire's packed pairs (rf_pattern_pair's values). */
struct rf_pattern_geom {
    int ndim;
    int packed;
    int64_t len[RF_PATTERN_DIMS];     /* the box's extent per dim */
    int64_t gstride[RF_PATTERN_DIMS]; /* the tensor's row-major strides */
    int64_t base;                     /* the tensor index of the box's first element */
};

RF_HD void rf_pattern_geom_init(struct rf_pattern_geom *g, int ndim, const int64_t *shape,
                                const int64_t *off, const int64_t *len)
{
    int64_t stride = 1;
    g->ndim = ndim;
    g->packed = 0;
    g->base = 0;
    for (int d = ndim - 1; d >= 0; d--) {
        g->len[d] = len[d];
        g->gstride[d] = stride;
        g->base += off[d] * stride;
        stride *= shape[d];
    }
}

/* x / y and x % y, in 32 bits when both fit: a GPU has no 64-bit divider, and the 64-bit
 * routine costs several times the 32-bit one (boxes of up to 4 G elements stay in 32). */
RF_HD int64_t rf_pattern_divmod(int64_t x, int64_t y, int64_t *rem)
{
    if (((uint64_t)x | (uint64_t)y) >> 32 == 0) {
        uint32_t q = (uint32_t)x / (uint32_t)y;
        *rem = (int64_t)((uint32_t)x - q * (uint32_t)y);
        return q;
    }
    int64_t q = x / y;
    *rem = x - q * y;
    return q;
}

/* The tensor index of element j of the box: its coordinates within the box, innermost
 * first, offset by the box's origin (in base). The loop has a fixed trip count, so nvcc
 * unrolls it and keeps the geometry in registers (a loop to ndim put it on the stack). */
RF_HD int64_t rf_pattern_index(const struct rf_pattern_geom *g, int64_t j)
{
    int64_t at = g->base, rest = j, c;
    for (int d = RF_PATTERN_DIMS - 1; d > 0; d--) {
        if (d >= g->ndim)
            continue;
        rest = rf_pattern_divmod(rest, g->len[d], &c);
        at += c * g->gstride[d];
    }
    return at + rest * g->gstride[0];
}

/* What element j of a buffer holding the box must hold: the pattern, or with `poison` its
 * complement (so an element that is never overwritten cannot pass a check), in the low
 * `elem` bytes. The device fill and check compute each element with this. */
RF_HD uint64_t rf_pattern_expect(const struct rf_pattern_geom *g, int32_t tensor, size_t elem,
                                 int64_t j, bool poison)
{
    int64_t at = rf_pattern_index(g, j);
    uint64_t v = g->packed ? rf_pattern_pair(tensor, at, elem) : rf_pattern_value(tensor, at, elem);
    return poison ? ~v : v;
}

#endif
