/* Pattern fill and check on host memory, row by row: the tensor index of a row's first
 * element is computed once, then consecutive elements follow, so a check costs one hash per
 * element. The values are pattern_math.h's, which the GPU kernels compute too. */
#include "pattern.h"

_Static_assert(RF_PATTERN_DIMS == RF_MAX_DIMS, "pattern_math.h walks tensors of RF_MAX_DIMS dims");

void rf_pattern_geom_of(struct rf_pattern_geom *g, const struct rf_pattern_buf *b)
{
    rf_pattern_geom_init(g, b->ndim, b->shape, b->box->off, b->box->len);
    g->packed = b->packed;
}

/* Calls row(ctx, j, g, n) for each run of the box's row-major elements [lo, hi) that is
 * contiguous in the tensor: j is the first element's index in the box, g in the tensor (the
 * walk of pattern_math.h, which the GPU kernels take per element). */
static int64_t rows(const struct rf_pattern_buf *b, int64_t lo, int64_t hi,
                    int64_t (*row)(void *, int64_t, int64_t, int64_t), void *ctx)
{
    struct rf_pattern_geom geom;
    int64_t width = b->box->len[b->ndim - 1], total = 0;
    rf_pattern_geom_of(&geom, b);
    for (int64_t j = lo; j < hi;) {
        int64_t n = width - j % width;
        if (n > hi - j)
            n = hi - j;
        total += row(ctx, j - lo, rf_pattern_index(&geom, j), n);
        j += n;
    }
    return total;
}

struct fill_ctx {
    uint8_t *out;
    const struct rf_pattern_buf *b;
    bool poison;
};

static int64_t fill_row(void *vc, int64_t at, int64_t g, int64_t n)
{
    struct fill_ctx *c = vc;
    size_t e = c->b->elem;
    uint8_t *p = c->out + at * (int64_t)e;
    for (int64_t k = 0; k < n; k++, p += e) {
        uint64_t v = c->b->packed ? rf_pattern_pair(c->b->tensor, g + k, e)
                                  : rf_pattern_value(c->b->tensor, g + k, e);
        rf_le_store(p, c->poison ? ~v : v, e);
    }
    return 0;
}

void rf_pattern_fill(void *out, const struct rf_pattern_buf *b, int64_t lo, int64_t hi, bool poison)
{
    struct fill_ctx c = {out, b, poison};
    rows(b, lo, hi, fill_row, &c);
}

struct check_ctx {
    const uint8_t *in;
    const struct rf_pattern_buf *b;
    int64_t lo;
    int64_t *first_bad;
};

static int64_t check_row(void *vc, int64_t at, int64_t g, int64_t n)
{
    struct check_ctx *c = vc;
    size_t e = c->b->elem;
    const uint8_t *p = c->in + at * (int64_t)e;
    int64_t bad = 0;
    for (int64_t k = 0; k < n; k++, p += e) {
        if (rf_le_load(p, e) == (c->b->packed ? rf_pattern_pair(c->b->tensor, g + k, e)
                                              : rf_pattern_value(c->b->tensor, g + k, e)))
            continue;
        if (bad++ == 0 && *c->first_bad < 0)
            *c->first_bad = c->lo + at + k;
    }
    return bad;
}

int64_t rf_pattern_check(const void *in, const struct rf_pattern_buf *b, int64_t lo, int64_t hi,
                         int64_t *first_bad)
{
    struct check_ctx c = {in, b, lo, first_bad};
    return rows(b, lo, hi, check_row, &c);
}

void rf_fp8_narrow(uint8_t *dst, const uint8_t *src, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = rf_fp8_of_bf16((uint16_t)rf_le_load(src + 2 * i, 2));
}

void rf_fp4_narrow(uint8_t *dst, const uint8_t *src, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        dst[i] = (uint8_t)(rf_fp4_of_bf16((uint16_t)rf_le_load(src + 4 * i, 2)) |
                           rf_fp4_of_bf16((uint16_t)rf_le_load(src + 4 * i + 2, 2)) << 4);
}
