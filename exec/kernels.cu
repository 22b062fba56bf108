/* The NCCL backend's kernels: BF16 -> FP8 conversion, pattern fill and check, and an empty
 * one whose launches --probe times. Each thread walks a grid-stride loop, so any size runs
 * with one launch; a warp touches consecutive elements, so every load and store is
 * coalesced. The values come from pattern_math.h, the definition the host fill and check
 * (pattern.c) and the host tests use. */
#include <cuda_runtime.h>
#include <limits.h>

#include "kernels.h"

enum { THREADS = 256 };

/* Enough blocks to fill any GPU several times over (a grid-stride loop does the rest). */
static unsigned blocks_for(int64_t n)
{
    int64_t b = (n + THREADS - 1) / THREADS;
    return b > 65535 ? 65535u : b < 1 ? 1u : (unsigned)b;
}

static __device__ int64_t first_index()
{
    return (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
}

static __device__ int64_t grid_stride()
{
    return (int64_t)gridDim.x * blockDim.x;
}

/* Four 2-byte elements (two little-endian words) to four bytes. */
static __device__ uint32_t narrow4(uint32_t lo, uint32_t hi)
{
    return (uint32_t)rf_fp8_of_bf16((uint16_t)lo) |
           (uint32_t)rf_fp8_of_bf16((uint16_t)(lo >> 16)) << 8 |
           (uint32_t)rf_fp8_of_bf16((uint16_t)hi) << 16 |
           (uint32_t)rf_fp8_of_bf16((uint16_t)(hi >> 16)) << 24;
}

/* Eight elements a thread: one 16-byte load, one 8-byte store. */
static __global__ void narrow8(uint2 *dst, const uint4 *src, int64_t n8)
{
    for (int64_t i = first_index(); i < n8; i += grid_stride()) {
        uint4 v = src[i];
        dst[i] = make_uint2(narrow4(v.x, v.y), narrow4(v.z, v.w));
    }
}

static __global__ void narrow1(uint8_t *dst, const uint8_t *src, int64_t n)
{
    for (int64_t i = first_index(); i < n; i += grid_stride())
        dst[i] = rf_fp8_of_bf16((uint16_t)(src[2 * i] | src[2 * i + 1] << 8));
}

/* A gathered pair of BF16 values (one little-endian word) to a byte of two 4-bit ones. */
static __global__ void narrow_fp4(uint8_t *dst, const uint32_t *src, int64_t n)
{
    for (int64_t i = first_index(); i < n; i += grid_stride()) {
        uint32_t v = src[i];
        dst[i] = (uint8_t)(rf_fp4_of_bf16((uint16_t)v) | rf_fp4_of_bf16((uint16_t)(v >> 16)) << 4);
    }
}

extern "C" int rf_kernel_narrow_fp4(void *stream, uint8_t *dst, const uint8_t *src, int64_t n)
{
    narrow_fp4<<<blocks_for(n), THREADS, 0, (cudaStream_t)stream>>>(dst, (const uint32_t *)src, n);
    return (int)cudaGetLastError();
}

extern "C" int rf_kernel_narrow(void *stream, uint8_t *dst, const uint8_t *src, int64_t n)
{
    cudaStream_t s = (cudaStream_t)stream;
    int64_t done = 0;
    if (n <= 0)
        return 0;
    /* Buffers from cudaMalloc are aligned; the vector loop needs 16 bytes in, 8 out. */
    if ((uintptr_t)dst % 8 == 0 && (uintptr_t)src % 16 == 0 && n >= 8) {
        int64_t n8 = n / 8;
        narrow8<<<blocks_for(n8), THREADS, 0, s>>>((uint2 *)dst, (const uint4 *)src, n8);
        done = n8 * 8;
    }
    if (done < n)
        narrow1<<<blocks_for(n - done), THREADS, 0, s>>>(dst + done, src + 2 * done, n - done);
    return (int)cudaGetLastError();
}

template <typename T>
static __global__ void fill(T *buf, struct rf_pattern_geom g, int32_t tensor, int64_t numel,
                            bool poison)
{
    for (int64_t j = first_index(); j < numel; j += grid_stride())
        buf[j] = (T)rf_pattern_expect(&g, tensor, sizeof(T), j, poison);
}

/* Each thread counts its wrong elements and keeps its first; a block adds them up in shared
 * memory and makes one atomic update of the result, so a buffer that is wrong everywhere
 * (a poisoned one never written) costs no more than a right one. */
template <typename T>
static __global__ void check(const T *buf, struct rf_pattern_geom g, int32_t tensor, int64_t numel,
                             unsigned long long *result)
{
    __shared__ unsigned long long bad, first;
    unsigned long long my_bad = 0, my_first = ULLONG_MAX;
    if (threadIdx.x == 0) {
        bad = 0;
        first = ULLONG_MAX;
    }
    __syncthreads();
    for (int64_t j = first_index(); j < numel; j += grid_stride())
        if (buf[j] != (T)rf_pattern_expect(&g, tensor, sizeof(T), j, false) && my_bad++ == 0)
            my_first = (unsigned long long)j;
    if (my_bad) {
        atomicAdd(&bad, my_bad);
        atomicMin(&first, my_first);
    }
    __syncthreads();
    if (threadIdx.x == 0 && bad) {
        atomicAdd(&result[0], bad);
        atomicMin(&result[1], first);
    }
}

extern "C" int rf_kernel_fill(void *stream, void *buf, const struct rf_pattern_geom *g,
                              int32_t tensor, size_t elem, int64_t numel, bool poison)
{
    cudaStream_t s = (cudaStream_t)stream;
    unsigned b = blocks_for(numel);
    if (numel <= 0)
        return 0;
    switch (elem) {
    case 1: fill<uint8_t><<<b, THREADS, 0, s>>>((uint8_t *)buf, *g, tensor, numel, poison); break;
    case 2: fill<uint16_t><<<b, THREADS, 0, s>>>((uint16_t *)buf, *g, tensor, numel, poison); break;
    case 4: fill<uint32_t><<<b, THREADS, 0, s>>>((uint32_t *)buf, *g, tensor, numel, poison); break;
    case 8: fill<uint64_t><<<b, THREADS, 0, s>>>((uint64_t *)buf, *g, tensor, numel, poison); break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

extern "C" int rf_kernel_check(void *stream, const void *buf, const struct rf_pattern_geom *g,
                               int32_t tensor, size_t elem, int64_t numel,
                               unsigned long long *result)
{
    cudaStream_t s = (cudaStream_t)stream;
    unsigned b = blocks_for(numel);
    if (numel <= 0)
        return 0;
    switch (elem) {
    case 1:
        check<uint8_t><<<b, THREADS, 0, s>>>((const uint8_t *)buf, *g, tensor, numel, result);
        break;
    case 2:
        check<uint16_t><<<b, THREADS, 0, s>>>((const uint16_t *)buf, *g, tensor, numel, result);
        break;
    case 4:
        check<uint32_t><<<b, THREADS, 0, s>>>((const uint32_t *)buf, *g, tensor, numel, result);
        break;
    case 8:
        check<uint64_t><<<b, THREADS, 0, s>>>((const uint64_t *)buf, *g, tensor, numel, result);
        break;
    default: return (int)cudaErrorInvalidValue;
    }
    return (int)cudaGetLastError();
}

/* Nothing: what a launch costs when the kernel does no work. */
static __global__ void empty() {}

extern "C" int rf_kernel_empty(void *stream, int64_t n)
{
    cudaStream_t s = (cudaStream_t)stream;
    for (int64_t i = 0; i < n; i++)
        empty<<<1, 1, 0, s>>>();
    return (int)cudaGetLastError();
}

extern "C" int rf_kernels_usable(void)
{
    struct cudaFuncAttributes a;
    return (int)cudaFuncGetAttributes(&a, narrow8);
}

#define RF_STR2(x) #x
#define RF_STR(x) RF_STR2(x)

extern "C" const char *rf_kernels_nvcc(void)
{
    return RF_STR(__CUDACC_VER_MAJOR__) "." RF_STR(__CUDACC_VER_MINOR__);
}
