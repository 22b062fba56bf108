/* The delta encodings' sizes and the evenly spread changed elements (sim/delta.h). */
#include "delta.h"

#include <string.h>

static const char *const enc_names[RF_DELTA_COUNT] = {"none", "bitmap", "coo", "auto"};

int64_t rf_delta_changed(int32_t ppm, int64_t n)
{
    /* n * ppm fits: n is a box's element count, below 2^43 for any tensor of an int64 byte
     * count, and ppm at most 10^6 < 2^20. */
    return (n * (int64_t)ppm + RF_DELTA_PPM - 1) / RF_DELTA_PPM;
}

size_t rf_delta_index_size(int64_t n)
{
    return n <= ((int64_t)1 << 32) ? 4 : 8;
}

static int64_t bitmap_bytes(int64_t n, int64_t k, size_t value)
{
    return (n + 7) / 8 + k * (int64_t)value;
}

static int64_t coo_bytes(int64_t n, int64_t k, size_t value)
{
    return k * (int64_t)(rf_delta_index_size(n) + value);
}

enum rf_delta_enc rf_delta_pick(const struct rf_delta *d, int64_t n, size_t value)
{
    if (d->enc != RF_DELTA_AUTO)
        return d->enc;
    int64_t k = rf_delta_changed(d->ppm, n);
    return coo_bytes(n, k, value) < bitmap_bytes(n, k, value) ? RF_DELTA_COO : RF_DELTA_BITMAP;
}

int64_t rf_delta_bytes(const struct rf_delta *d, int64_t n, size_t value)
{
    int64_t k = rf_delta_changed(d->ppm, n);
    switch (rf_delta_pick(d, n, value)) {
    case RF_DELTA_BITMAP: return bitmap_bytes(n, k, value);
    case RF_DELTA_COO: return coo_bytes(n, k, value);
    default: return n * (int64_t)value;
    }
}

int64_t rf_delta_floor_bytes(const struct rf_delta *d, int64_t n, size_t value)
{
    /* Rates in millionths of a byte per element: bitmap 125000 + ppm * value, coo
     * ppm * (4 + value); each box's bytes are at least its elements times its rate, since
     * ceil(n_b / 8) >= n_b / 8 and k_b >= n_b * ppm / 10^6. */
    int64_t bitmap = RF_DELTA_PPM / 8 + (int64_t)d->ppm * (int64_t)value;
    int64_t coo = (int64_t)d->ppm * (int64_t)(4 + value), rate;
    switch (d->enc) {
    case RF_DELTA_BITMAP: rate = bitmap; break;
    case RF_DELTA_COO: rate = coo; break;
    case RF_DELTA_AUTO: rate = bitmap < coo ? bitmap : coo; break;
    default: return n * (int64_t)value;
    }
    /* n * rate / 10^6 without overflow: rate < 2^23, so split n. */
    return n / RF_DELTA_PPM * rate + n % RF_DELTA_PPM * rate / RF_DELTA_PPM;
}

bool rf_delta_is_changed(int64_t j, int64_t k, int64_t n)
{
    /* (j + 1) * k stays below 2^63 for boxes of up to 2^31 elements; larger boxes take the
     * 128-bit product. */
    if (n <= INT32_MAX)
        return ((j + 1) * k) / n > (j * k) / n;
    unsigned __int128 a = (unsigned __int128)(uint64_t)(j + 1) * (uint64_t)k;
    unsigned __int128 b = (unsigned __int128)(uint64_t)j * (uint64_t)k;
    return a / (uint64_t)n > b / (uint64_t)n;
}

const char *rf_delta_enc_name(enum rf_delta_enc e)
{
    return (unsigned)e < RF_DELTA_COUNT ? enc_names[e] : "?";
}

int rf_delta_enc_parse(const char *s, enum rf_delta_enc *out)
{
    for (int i = RF_DELTA_BITMAP; i < RF_DELTA_COUNT; i++)
        if (strcmp(enc_names[i], s) == 0) {
            *out = (enum rf_delta_enc)i;
            return 0;
        }
    return -1;
}
