/* The deterministic pattern the executor writes into every source shard and expects in
 * every destination element, and the emulated BF16 -> FP8 conversion of the wire, on host
 * memory; the values themselves are pattern_math.h's (shared with the GPU kernels). */
#ifndef RF_PATTERN_H
#define RF_PATTERN_H

#include "layout.h"
#include "pattern_math.h"

/* Which elements of a tensor a buffer holds: box `box` of tensor `tensor` of shape
 * `shape`, stored densely in row-major order, `elem` bytes per element little-endian. */
struct rf_pattern_buf {
    int32_t tensor;
    int ndim;
    const int64_t *shape;
    const struct rf_box *box;
    size_t elem;
    bool packed; /* a 4-bit wire's packed pairs (rf_pattern_pair) */
};

/* An unsigned integer of n bytes (1 to 8) little-endian at p, and its store: how the
 * executor's host code reads and writes elements, indices and sums. */
static inline uint64_t rf_le_load(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t k = 0; k < n; k++)
        v |= (uint64_t)p[k] << (8 * k);
    return v;
}

static inline void rf_le_store(uint8_t *p, uint64_t v, size_t n)
{
    for (size_t k = 0; k < n; k++)
        p[k] = (uint8_t)(v >> (8 * k));
}

/* The buffer's box as the element walk of pattern_math.h sees it. */
void rf_pattern_geom_of(struct rf_pattern_geom *g, const struct rf_pattern_buf *b);

/* Writes elements [lo, hi) of the buffer (row-major indices within the box) into out,
 * which holds (hi - lo) * elem bytes. With `poison` every element is written as the
 * complement of its pattern, so one that is never overwritten cannot pass a check. */
void rf_pattern_fill(void *out, const struct rf_pattern_buf *b, int64_t lo, int64_t hi,
                     bool poison);
/* Counts the elements of [lo, hi) (in `in`, laid out as for rf_pattern_fill) that differ
 * from the pattern; the first wrong one's index within the box goes to *first_bad when it
 * is still negative. */
int64_t rf_pattern_check(const void *in, const struct rf_pattern_buf *b, int64_t lo, int64_t hi,
                         int64_t *first_bad);

/* The root's conversion of n gathered 2-byte elements into n 1-byte elements. */
void rf_fp8_narrow(uint8_t *dst, const uint8_t *src, int64_t n);
/* ... and of n gathered pairs of 2-byte elements (4 bytes each) into n bytes of two 4-bit
 * values (rf_fp4_of_bf16 of each, the lower nibble first). */
void rf_fp4_narrow(uint8_t *dst, const uint8_t *src, int64_t n);

#endif
