/* The planner's cells: each side's distinct shards of a tensor with their holders, the
 * source grid, and the boxes where destination cells intersect it (each then assigned). */
#include <stdlib.h>

#include "plan_int.h"

int planner_cells_reserve(struct planner *p, struct cells *c, size_t n, size_t nh)
{
    int rc;
    if ((rc = RF_GROW(c->box, c->cap, n, p->err)) < 0 ||
        (rc = RF_GROW(c->hstart, c->cap_hstart, n + 1, p->err)) < 0 ||
        (rc = RF_GROW(c->holders, c->caph, nh, p->err)) < 0)
        return rc;
    return 0;
}

void planner_cells_release(struct cells *c)
{
    free(c->box);
    free(c->hstart);
    free(c->holders);
}

int planner_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Advances an odometer over the given axes; returns false after the last coordinate. */
static bool odometer(int64_t *coord, const int *axes, int n, const struct rf_mesh *m)
{
    for (int i = n - 1; i >= 0; i--) {
        if (++coord[axes[i]] < m->size[axes[i]])
            return true;
        coord[axes[i]] = 0;
    }
    return false;
}

/* Whether h[0..n) is ascending: holders come from the odometer in mesh order, which for
 * most layouts is GPU order already (the sort then took 71% of estimating Kimi K3 onto
 * 65,536 GPUs). */
static bool ascending(const int32_t *h, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (h[i] < h[i - 1])
            return false;
    return true;
}

int planner_collect_cells(struct planner *p, const struct rf_side *side, const struct rf_tensor *t,
                          struct cells *c)
{
    return planner_collect_cells_as(p, side, t, c, true);
}

int planner_collect_cells_as(struct planner *p, const struct rf_side *side,
                             const struct rf_tensor *t, struct cells *c, bool holders)
{
    struct rf_placement pl;
    const struct rf_mesh *m = rf_side_placement(side, t, &pl);
    bool sharding[RF_MESH_MAX] = {false};
    int sax[RF_MESH_MAX], rax[RF_MESH_MAX], ns = 0, nr = 0;
    int64_t coord[RF_MESH_MAX] = {0};
    int64_t replicas = 1;
    int rc;

    for (int i = 0; i < pl.n; i++)
        sharding[pl.shard[i].axis] = true;
    for (int a = 0; a < m->ndim; a++) {
        if (a == pl.stage_axis)
            continue;
        if (sharding[a])
            sax[ns++] = a;
        else {
            rax[nr++] = a;
            replicas *= m->size[a];
        }
    }
    if (pl.stage_axis >= 0)
        coord[pl.stage_axis] = pl.stage;

    c->n = 0;
    c->nh = 0;
    /* hstart[n] is written even when every box is empty. */
    if ((rc = planner_cells_reserve(p, c, 0, 0)) < 0)
        return rc;
    do {
        struct rf_box b;
        rf_placement_box(&pl, m, t->ndim, t->shape, coord, &b);
        if (rf_box_numel(&b, t->ndim) == 0)
            continue;
        if ((rc = planner_cells_reserve(p, c, c->n + 1, holders ? c->nh + (size_t)replicas : 0)) <
            0)
            return rc;
        c->box[c->n] = b;
        c->hstart[c->n] = c->nh;
        c->n++;
        if (!holders) { /* counted: every cell has `replicas` holders */
            c->nh += (size_t)replicas;
            continue;
        }
        size_t first = c->nh;
        do {
            c->holders[c->nh++] = (int32_t)rf_mesh_gpu(m, coord);
        } while (odometer(coord, rax, nr, m));
        if (!ascending(c->holders + first, c->nh - first))
            qsort(c->holders + first, c->nh - first, sizeof(int32_t), planner_cmp_i32);
    } while (odometer(coord, sax, ns, m));
    c->hstart[c->n] = c->nh;
    return 0;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Index of the interval of `starts` containing x (the last start <= x). */
static size_t find_interval(const int64_t *starts, size_t n, int64_t x)
{
    size_t lo = 0, hi = n;
    while (hi - lo > 1) {
        size_t mid = (lo + hi) / 2;
        if (starts[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Builds the per-dim partitions of the source cells and the cell index of every grid
 * position. Layouts whose shards do not form a grid are rejected: every destination byte
 * must be found in exactly one source cell. */
int planner_build_grid(struct planner *p, const struct rf_tensor *t)
{
    const struct cells *c = &p->src;
    size_t total = 1;
    int rc;
    for (int d = 0; d < t->ndim; d++) {
        int64_t *s = malloc(sizeof(int64_t) * c->n);
        if (!s)
            return rf_error_set(p->err, RF_ENOMEM, "out of memory");
        for (size_t i = 0; i < c->n; i++)
            s[i] = c->box[i].off[d];
        qsort(s, c->n, sizeof(int64_t), cmp_i64);
        size_t u = 0;
        for (size_t i = 0; i < c->n; i++)
            if (u == 0 || s[i] != s[u - 1])
                s[u++] = s[i];
        free(p->starts[d]);
        p->starts[d] = s;
        p->nstart[d] = u;
        /* A grid has one cell per position; more positions than cells leave a gap, and
         * refusing them here keeps the product from overflowing. */
        if (__builtin_mul_overflow(total, u, &total) || total > c->n)
            return rf_error_set(p->err, RF_EINVAL, "%s: source shards leave a gap", t->name);
    }
    if ((rc = RF_GROW(p->cell_of, p->cap_cell_of, total, p->err)) < 0)
        return rc;
    for (size_t i = 0; i < total; i++)
        p->cell_of[i] = -1;
    for (size_t i = 0; i < c->n; i++) {
        size_t flat = 0;
        for (int d = 0; d < t->ndim; d++) {
            size_t k = find_interval(p->starts[d], p->nstart[d], c->box[i].off[d]);
            int64_t end = k + 1 < p->nstart[d] ? p->starts[d][k + 1] : t->shape[d];
            if (end - p->starts[d][k] != c->box[i].len[d])
                return rf_error_set(p->err, RF_EINVAL,
                                    "%s: source shards do not form a grid on dim %d", t->name, d);
            flat = flat * p->nstart[d] + k;
        }
        p->cell_of[flat] = (int32_t)i;
    }
    for (size_t i = 0; i < total; i++)
        if (p->cell_of[i] < 0)
            return rf_error_set(p->err, RF_EINVAL, "%s: source shards leave a gap", t->name);
    return 0;
}

static int push_box(struct planner *p, int32_t tensor, const struct rf_box *b)
{
    struct rf_plan *plan = p->plan;
    if (plan->n_boxes >= INT32_MAX)
        return rf_error_set(p->err, RF_EINVAL, "%s: the plan exceeds 2^31 boxes",
                            plan->tensors[tensor].name);
    int rc;
    if ((rc = RF_GROW(plan->boxes, plan->cap_boxes, plan->n_boxes + 1, p->err)) < 0)
        return rc;
    plan->boxes[plan->n_boxes].tensor = tensor;
    plan->boxes[plan->n_boxes].box = *b;
    plan->n_boxes++;
    return 0;
}

/* The bytes of box `piece` of tensor t in dtype dt: a delta box's encoding (sim/delta.h), a
 * 4-bit box's packed pairs, which must not split a pair (an even offset and length along the
 * last dim: the executor packs boxes pair by pair), else its elements' bytes. */
static int box_bytes(struct planner *p, int32_t ti, const struct rf_box *piece, enum rf_dtype dt,
                     uint8_t phase, int64_t *bytes)
{
    const struct rf_tensor *t = &p->plan->tensors[ti];
    int64_t numel = rf_box_numel(piece, t->ndim);
    int last = t->ndim - 1;
    /* rf_model_check keeps a delta's formula within int64. */
    if (phase == RF_PHASE_DELIVER && t->delta.enc != RF_DELTA_NONE) {
        *bytes = rf_delta_bytes(&t->delta, numel, rf_dtype_size(dt));
        return 0;
    }
    if (rf_dtype_4bit(dt)) {
        if (piece->off[last] % 2 || piece->len[last] % 2)
            return rf_error_set(p->err, RF_EINVAL,
                                "%s: a %s box from element %lld of the last dim, %lld long, "
                                "splits a packed pair; shard the last dim (%lld) into even parts",
                                t->name, rf_dtype_name(dt), (long long)piece->off[last],
                                (long long)piece->len[last], (long long)t->shape[last]);
        *bytes = rf_dtype_bytes(dt, numel);
        return 0;
    }
    *bytes = 0;
    return planner_add_bytes(p, ti, bytes, numel, (int64_t)rf_dtype_size(dt), "a box's bytes");
}

/* Delivers every destination cell of tensor ti (already in p->dst) from the source cells in
 * p->src, in dtype dt. */
int planner_plan_cells(struct planner *p, int32_t ti, enum rf_dtype dt, uint8_t phase,
                       bool count_logical)
{
    bool hier = p->plan->tensor_strategy[ti] == RF_STRAT_HIERARCHICAL && phase == RF_PHASE_DELIVER;
    const struct rf_tensor *t = &p->plan->tensors[ti];
    int rc;
    if ((rc = planner_build_grid(p, t)) < 0)
        return rc;
    for (size_t di = 0; di < p->dst.n; di++) {
        const struct rf_box *b = &p->dst.box[di];
        size_t lo[RF_MAX_DIMS], hi[RF_MAX_DIMS], k[RF_MAX_DIMS];
        for (int d = 0; d < t->ndim; d++) {
            lo[d] = find_interval(p->starts[d], p->nstart[d], b->off[d]);
            hi[d] = find_interval(p->starts[d], p->nstart[d], b->off[d] + b->len[d] - 1);
            k[d] = lo[d];
        }
        for (;;) {
            size_t flat = 0;
            for (int d = 0; d < t->ndim; d++)
                flat = flat * p->nstart[d] + k[d];
            int32_t ci = p->cell_of[flat];
            struct rf_box piece;
            if (rf_box_intersect(b, &p->src.box[ci], t->ndim, &piece)) {
                int64_t bytes;
                if ((rc = box_bytes(p, ti, &piece, dt, phase, &bytes)) < 0 ||
                    (rc = push_box(p, ti, &piece)) < 0)
                    return rc;
                int32_t box = (int32_t)(p->plan->n_boxes - 1);
                const int32_t *h = p->src.holders + p->src.hstart[ci];
                const int32_t *d = p->dst.holders + p->dst.hstart[di];
                size_t nh = p->src.hstart[ci + 1] - p->src.hstart[ci];
                size_t nd = p->dst.hstart[di + 1] - p->dst.hstart[di];
                rc = hier ? planner_assign_hierarchical(p, box, h, nh, d, nd, bytes)
                          : planner_assign(p, box, h, nh, d, nd, phase, bytes, count_logical);
                if (rc < 0)
                    return rc;
            }
            int d = t->ndim - 1;
            while (d >= 0 && ++k[d] > hi[d]) {
                k[d] = lo[d];
                d--;
            }
            if (d < 0)
                break;
        }
    }
    return 0;
}

int planner_count_cells(struct planner *p, const struct rf_tensor *t, int64_t *boxes,
                        int64_t *deliveries)
{
    int rc;
    if ((rc = planner_build_grid(p, t)) < 0)
        return rc;
    for (size_t di = 0; di < p->dst.n; di++) {
        const struct rf_box *b = &p->dst.box[di];
        int64_t n = 1;
        for (int d = 0; d < t->ndim; d++) {
            size_t lo = find_interval(p->starts[d], p->nstart[d], b->off[d]);
            size_t hi = find_interval(p->starts[d], p->nstart[d], b->off[d] + b->len[d] - 1);
            n *= (int64_t)(hi - lo + 1); /* at most the source cells: no overflow */
        }
        int64_t nd = (int64_t)(p->dst.hstart[di + 1] - p->dst.hstart[di]);
        *boxes += n;
        *deliveries += n * nd;
    }
    return 0;
}
