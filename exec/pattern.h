/* The deterministic pattern the executor writes into every source shard and expects in
 * every destination element, and the emulated BF16 -> FP8 conversion of the wire. */
#ifndef RF_PATTERN_H
#define RF_PATTERN_H

#include "layout.h"

/* Value of element `index` (row-major in the whole tensor) of tensor `tensor`, in the low
 * `elem` bytes (1, 2, 4 or 8). A 1-byte (FP8) value is the conversion of the 2-byte value:
 * rf_pattern_value(t, i, 1) == rf_fp8_of_bf16(rf_pattern_value(t, i, 2)), so an FP8
 * element is right whoever converted it (the training sender or the broadcast root). */
uint64_t rf_pattern_value(int32_t tensor, int64_t index, size_t elem);

/* The emulated quantisation BF16 -> FP8 e4m3: the high byte of the 16-bit value (sign and
 * seven exponent bits). It is not e4m3 arithmetic, only a deterministic, byte-shrinking
 * function of the gathered value that a copy engine can apply (a strided 1-byte copy). */
static inline uint8_t rf_fp8_of_bf16(uint16_t v)
{
    return (uint8_t)(v >> 8);
}

/* Which elements of a tensor a buffer holds: box `box` of tensor `tensor` of shape
 * `shape`, stored densely in row-major order, `elem` bytes per element little-endian. */
struct rf_pattern_buf {
    int32_t tensor;
    int ndim;
    const int64_t *shape;
    const struct rf_box *box;
    size_t elem;
};

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

#endif
