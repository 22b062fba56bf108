/* A sparse-delta update's wire encodings: which elements of a box changed, and the exact
 * bytes a box of n elements takes as a bitmap or as coordinates (COO). The planner, the bound,
 * the simulator's diff and scatter phases and refit-exec all count bytes through it. */
#ifndef RF_DELTA_H
#define RF_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How a tensor's boxes travel: whole (no delta), or only the changed elements, as a bitmap
 * of every element beside the changed values, as (index, value) pairs, or whichever of the
 * two is smaller for the box (auto). The names are models/lib/update.lua's encodings. */
enum rf_delta_enc { RF_DELTA_NONE, RF_DELTA_BITMAP, RF_DELTA_COO, RF_DELTA_AUTO, RF_DELTA_COUNT };

/* Density is in parts per million (1 to 10^6), so that the count of changed elements is an
 * integer formula that the store, SQL and the executor compute alike. */
#define RF_DELTA_PPM 1000000

struct rf_delta {
    enum rf_delta_enc enc; /* RF_DELTA_NONE (zeroed): a full update */
    int32_t ppm;           /* changed elements per million */
};

/* The changed elements of a box of n: ceil(n * ppm / 10^6), the density's share rounded up,
 * so at least one in every box. */
int64_t rf_delta_changed(int32_t ppm, int64_t n);

/* A COO index: the element's row-major position in its box, 4 bytes (uint32) where the box
 * has at most 2^32 elements, else 8. */
size_t rf_delta_index_size(int64_t n);

/* The encoding a box of n elements of `value` bytes travels in (auto resolved: the smaller
 * of the two, bitmap on a tie). */
enum rf_delta_enc rf_delta_pick(const struct rf_delta *d, int64_t n, size_t value);

/* A box's bytes on the wire:
 *   bitmap  ceil(n / 8) + k * value          (bit j of byte j / 8, LSB first: element j changed)
 *   coo     k * (index + value)              (k indices ascending, then the k values)
 * with k = rf_delta_changed(ppm, n); n * value for RF_DELTA_NONE. */
int64_t rf_delta_bytes(const struct rf_delta *d, int64_t n, size_t value);

/* A floor of the bytes of any split of n elements into boxes: n * min(rate) with the
 * per-element rates 1/8 + ppm * value / 10^6 (bitmap) and ppm * (4 + value) / 10^6 (coo),
 * rounded down. The lower bound counts a destination shard's bytes with it. */
int64_t rf_delta_floor_bytes(const struct rf_delta *d, int64_t n, size_t value);

/* Whether element j (row-major in its box of n) is one of the box's k changed elements: the
 * k are spread evenly, element j changed when floor((j + 1) k / n) > floor(j k / n). */
bool rf_delta_is_changed(int64_t j, int64_t k, int64_t n);

const char *rf_delta_enc_name(enum rf_delta_enc e);
/* 0, or -1 for a name that is not an encoding ("none" is not one). */
int rf_delta_enc_parse(const char *s, enum rf_delta_enc *out);

#endif
