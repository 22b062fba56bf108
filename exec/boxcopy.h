/* Geometry of the executor's copies: a box of a tensor copied between two strided views
 * (a shard, a packed staging region, a piece of a broadcast), and linear ranges as boxes. */
#ifndef RF_BOXCOPY_H
#define RF_BOXCOPY_H

#include "layout.h"

/* Where the elements of a tensor live in one buffer: the element at global coordinate c
 * is at index off + sum(c[d] * stride[d]) of the buffer. */
struct rf_view {
    int64_t off;
    int64_t stride[RF_MAX_DIMS];
};

/* A buffer holding box `layout` of a tensor densely, in row-major order (a shard, or a
 * packed region of staging). */
void rf_view_of_box(struct rf_view *v, const struct rf_box *layout, int ndim);
/* A buffer holding the row-major elements [lo, ...) of the whole tensor of `shape` (a piece
 * of a broadcast, which travels the flattened tensor in order). */
void rf_view_of_range(struct rf_view *v, const int64_t *shape, int ndim, int64_t lo);

/* One copy, normalised: ndim dims (1 to RF_MAX_DIMS, outermost first) of count[d] elements;
 * the innermost dim is contiguous on both sides (stride 1), dims that are contiguous with
 * the next are merged and single-element dims dropped, so a shard-to-shard copy of whole
 * rows is one contiguous run. Offsets and strides are in elements of `elem` bytes. */
struct rf_copy {
    int ndim;
    int64_t count[RF_MAX_DIMS];
    int64_t dst_stride[RF_MAX_DIMS], src_stride[RF_MAX_DIMS];
    int64_t dst_off, src_off;
    size_t elem;
};

/* The copy of `region` (global coordinates, inside both views' buffers) from src to dst. */
void rf_copy_make(struct rf_copy *c, const struct rf_view *dst, const struct rf_view *src,
                  const struct rf_box *region, int ndim, size_t elem);
int64_t rf_copy_numel(const struct rf_copy *c);
/* Runs the copy with memcpy, row by row (host memory). */
void rf_copy_host(void *dst, const void *src, const struct rf_copy *c);

/* At most this many boxes make up any linear range of a 4-d box. */
#define RF_RANGE_BOXES (2 * RF_MAX_DIMS - 1)

/* The row-major elements [lo, hi) of box b, as boxes in row-major order: packing them one
 * after another gives exactly those elements in order. Returns how many (0 when lo >= hi);
 * out must hold RF_RANGE_BOXES. */
int rf_range_boxes(const struct rf_box *b, int ndim, int64_t lo, int64_t hi, struct rf_box *out);

#endif
