/* Box copies between strided views, normalised so that a backend issues as few and as long
 * contiguous runs as the layouts allow; linear ranges of a box split into boxes. */
#include "boxcopy.h"

#include <string.h>

void rf_view_of_box(struct rf_view *v, const struct rf_box *layout, int ndim)
{
    int64_t s = 1;
    v->off = 0;
    for (int d = RF_MAX_DIMS - 1; d >= 0; d--) {
        if (d >= ndim) {
            v->stride[d] = 0;
            continue;
        }
        v->stride[d] = s;
        v->off -= layout->off[d] * s;
        s *= layout->len[d];
    }
}

void rf_view_of_range(struct rf_view *v, const int64_t *shape, int ndim, int64_t lo)
{
    struct rf_box whole;
    for (int d = 0; d < RF_MAX_DIMS; d++) {
        whole.off[d] = 0;
        whole.len[d] = d < ndim ? shape[d] : 1;
    }
    rf_view_of_box(v, &whole, ndim);
    v->off = -lo;
}

void rf_copy_make(struct rf_copy *c, const struct rf_view *dst, const struct rf_view *src,
                  const struct rf_box *region, int ndim, size_t elem)
{
    int64_t cnt[RF_MAX_DIMS], ds[RF_MAX_DIMS], ss[RF_MAX_DIMS];
    int n = 0;

    c->elem = elem;
    c->dst_off = dst->off;
    c->src_off = src->off;
    for (int d = 0; d < ndim; d++) {
        c->dst_off += region->off[d] * dst->stride[d];
        c->src_off += region->off[d] * src->stride[d];
        /* Single-element dims carry no loop; the innermost stays, as it is the run. */
        if (region->len[d] == 1 && d != ndim - 1)
            continue;
        cnt[n] = region->len[d];
        ds[n] = dst->stride[d];
        ss[n] = src->stride[d];
        n++;
    }
    /* Merge from the inside out: an outer dim whose stride is exactly the extent of the
     * (merged) dim inside it on both sides continues the same run of memory. */
    int m = 0;
    int64_t mc[RF_MAX_DIMS], md[RF_MAX_DIMS], ms[RF_MAX_DIMS];
    for (int i = n - 1; i >= 0; i--) {
        if (m > 0 && ds[i] == mc[m - 1] * md[m - 1] && ss[i] == mc[m - 1] * ms[m - 1]) {
            mc[m - 1] *= cnt[i];
            continue;
        }
        mc[m] = cnt[i];
        md[m] = ds[i];
        ms[m] = ss[i];
        m++;
    }
    c->ndim = m;
    for (int i = 0; i < RF_MAX_DIMS; i++) {
        bool in = i < m;
        c->count[i] = in ? mc[m - 1 - i] : 1;
        c->dst_stride[i] = in ? md[m - 1 - i] : 0;
        c->src_stride[i] = in ? ms[m - 1 - i] : 0;
    }
}

int64_t rf_copy_numel(const struct rf_copy *c)
{
    int64_t n = 1;
    for (int i = 0; i < c->ndim; i++)
        n *= c->count[i];
    return n;
}

void rf_copy_host(void *dst, const void *src, const struct rf_copy *c)
{
    int64_t idx[RF_MAX_DIMS] = {0};
    int inner = c->ndim - 1;
    size_t width = (size_t)c->count[inner] * c->elem;
    if (rf_copy_numel(c) == 0)
        return;
    for (;;) {
        int64_t d = c->dst_off, s = c->src_off;
        for (int i = 0; i < inner; i++) {
            d += idx[i] * c->dst_stride[i];
            s += idx[i] * c->src_stride[i];
        }
        memcpy((char *)dst + d * (int64_t)c->elem, (const char *)src + s * (int64_t)c->elem, width);
        int i = inner - 1;
        while (i >= 0 && ++idx[i] == c->count[i])
            idx[i--] = 0;
        if (i < 0)
            break;
    }
}

/* Emits the range [lo, hi) of the sub-block of b below the fixed coordinates pre[0..d). */
static int range(const struct rf_box *b, int ndim, int d, int64_t *pre, int64_t lo, int64_t hi,
                 struct rf_box *out, int n)
{
    if (lo >= hi)
        return n;
    int64_t inner = 1;
    for (int k = d + 1; k < ndim; k++)
        inner *= b->len[k];
    int64_t first = lo / inner, last = (hi - 1) / inner;
    if (d == ndim - 1 || first == last) {
        if (d == ndim - 1) {
            struct rf_box *o = &out[n];
            *o = *b;
            for (int k = 0; k < d; k++) {
                o->off[k] = b->off[k] + pre[k];
                o->len[k] = 1;
            }
            o->off[d] = b->off[d] + lo;
            o->len[d] = hi - lo;
            return n + 1;
        }
        pre[d] = first;
        return range(b, ndim, d + 1, pre, lo - first * inner, hi - first * inner, out, n);
    }
    if (lo % inner) {
        pre[d] = first;
        n = range(b, ndim, d + 1, pre, lo % inner, inner, out, n);
        first++;
    }
    int64_t end = hi / inner; /* slabs [first, end) are whole */
    if (first < end) {
        struct rf_box *o = &out[n++];
        *o = *b;
        for (int k = 0; k < d; k++) {
            o->off[k] = b->off[k] + pre[k];
            o->len[k] = 1;
        }
        o->off[d] = b->off[d] + first;
        o->len[d] = end - first;
    }
    if (hi % inner) {
        pre[d] = end;
        n = range(b, ndim, d + 1, pre, 0, hi % inner, out, n);
    }
    return n;
}

int rf_range_boxes(const struct rf_box *b, int ndim, int64_t lo, int64_t hi, struct rf_box *out)
{
    int64_t pre[RF_MAX_DIMS] = {0};
    if (ndim < 1)
        return 0;
    return range(b, ndim, 0, pre, lo, hi, out, 0);
}
