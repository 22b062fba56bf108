/* The NCCL backend's CUDA kernels (kernels.cu, built when configure finds nvcc): the root's
 * BF16 -> FP8 conversion and the pattern's fill and check on the GPU, with pattern_math.h's
 * values, and an empty kernel whose launches --probe times. A C interface: each launches on
 * `stream` (a cudaStream_t) and returns the cudaError_t of the launch (0 when queued). */
#ifndef RF_KERNELS_H
#define RF_KERNELS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pattern_math.h"

#ifdef __cplusplus
extern "C" {
#endif

/* dst[i] = rf_fp8_of_bf16(element i of src) for i < n (src: n little-endian 2-byte
 * elements). */
int rf_kernel_narrow(void *stream, uint8_t *dst, const uint8_t *src, int64_t n);

/* dst[i] = the byte of rf_fp4_of_bf16 of the two 2-byte elements of 4-byte pair i of src,
 * the lower nibble first, for i < n (src 4-byte aligned). */
int rf_kernel_narrow_fp4(void *stream, uint8_t *dst, const uint8_t *src, int64_t n);

/* Writes rf_pattern_expect(g, tensor, elem, j, poison) into element j < numel of buf
 * (elem 1, 2, 4 or 8 bytes). */
int rf_kernel_fill(void *stream, void *buf, const struct rf_pattern_geom *g, int32_t tensor,
                   size_t elem, int64_t numel, bool poison);

/* Compares element j < numel of buf with the pattern: result[0] += the number of wrong
 * elements, result[1] = min(result[1], the first wrong one's j). result is device memory
 * the caller initialised ({0, UINT64_MAX} for one check). */
int rf_kernel_check(void *stream, const void *buf, const struct rf_pattern_geom *g, int32_t tensor,
                    size_t elem, int64_t numel, unsigned long long *result);

/* n launches of an empty kernel (one thread), back to back; the cudaError_t of the last
 * launch error, if any. */
int rf_kernel_empty(void *stream, int64_t n);

/* The nvcc that compiled them, as "13.0". */
const char *rf_kernels_nvcc(void);

/* 0 when the current device can run them (the binary holds SASS for its architecture, or
 * PTX it can compile), else the cudaError_t that says why not. */
int rf_kernels_usable(void);

#ifdef __cplusplus
}
#endif

#endif
