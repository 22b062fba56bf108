/* DTensor layout algebra and the Megatron / vLLM sides. Everything here is arithmetic on
 * coordinates: no shard is ever stored, every box is recomputed from (mesh, placement). */
#include "layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checked.h"

void rf_chunk(int64_t n, int64_t k, int64_t i, int64_t *off, int64_t *len)
{
    int64_t c = (n + k - 1) / k;
    int64_t lo = i * c, hi = lo + c;
    if (lo > n)
        lo = n;
    if (hi > n)
        hi = n;
    *off = lo;
    *len = hi - lo;
}

void rf_placement_box(const struct rf_placement *pl, const struct rf_mesh *mesh, int ndim,
                      const int64_t *shape, const int64_t *coord, struct rf_box *box)
{
    for (int d = 0; d < RF_MAX_DIMS; d++) {
        box->off[d] = 0;
        box->len[d] = d < ndim ? shape[d] : 1;
    }
    for (int s = 0; s < pl->n; s++) {
        int a = pl->shard[s].axis, d = pl->shard[s].dim;
        int64_t off, len;
        rf_chunk(box->len[d], mesh->size[a], coord[a], &off, &len);
        box->off[d] += off;
        box->len[d] = len;
    }
}

int64_t rf_box_numel(const struct rf_box *box, int ndim)
{
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        if (box->len[d] < 0 || rf_mul_overflow(n, box->len[d], &n))
            return -1;
    return n;
}

int64_t rf_mesh_gpu(const struct rf_mesh *mesh, const int64_t *coord)
{
    int64_t g = mesh->first_gpu;
    for (int a = 0; a < mesh->ndim; a++)
        g += coord[a] * mesh->stride[a];
    return g;
}

/* Meshes are mixed-radix with every stride past the extent of the axes below it
 * (rf_side_init), so dividing by the strides from the largest recovers the coordinate; the
 * final rf_mesh_gpu check refuses a GPU that falls between a mesh's points. */
bool rf_mesh_coord(const struct rf_mesh *m, int64_t gpu, int64_t *coord)
{
    int axes[RF_MESH_MAX], n = 0;
    int64_t rel = gpu - m->first_gpu;
    for (int a = 0; a < m->ndim; a++) {
        coord[a] = 0;
        if (m->size[a] > 1)
            axes[n++] = a;
    }
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && m->stride[axes[j]] > m->stride[axes[j - 1]]; j--) {
            int t = axes[j];
            axes[j] = axes[j - 1];
            axes[j - 1] = t;
        }
    if (rel < 0)
        return false;
    for (int i = 0; i < n; i++) {
        int a = axes[i];
        coord[a] = rel / m->stride[a];
        if (coord[a] >= m->size[a])
            return false;
        rel -= coord[a] * m->stride[a];
    }
    return rel == 0 && rf_mesh_gpu(m, coord) == gpu;
}

bool rf_box_intersect(const struct rf_box *a, const struct rf_box *b, int ndim, struct rf_box *out)
{
    for (int d = 0; d < RF_MAX_DIMS; d++) {
        if (d >= ndim) {
            out->off[d] = 0;
            out->len[d] = 1;
            continue;
        }
        int64_t lo = a->off[d] > b->off[d] ? a->off[d] : b->off[d];
        int64_t ea = a->off[d] + a->len[d], eb = b->off[d] + b->len[d];
        int64_t hi = ea < eb ? ea : eb;
        if (hi <= lo)
            return false;
        out->off[d] = lo;
        out->len[d] = hi - lo;
    }
    return true;
}

/* Axis indices of the meshes built below. */
enum { MG_PP, MG_DP, MG_CP, MG_TP };        /* Megatron dense mesh */
enum { MG_EDP = 1, MG_EP = 2, MG_ETP = 3 }; /* Megatron expert mesh (axis 0 is PP) */
/* vLLM / SGLang engine replicas. Placed with gaps (rf_engine_place), VL_REPLICA steps from
 * one domain to the next and VL_SLOT, last so that the other indices stay as they were
 * (sim/memory.c reads VL_PP's), from one engine to the next inside a domain. */
enum { VL_REPLICA, VL_PP, VL_DP, VL_TP, VL_SLOT };

static void mesh_set(struct rf_mesh *m, int64_t first_gpu, int ndim, const char *const *names,
                     const int64_t *size, const int64_t *stride)
{
    m->ndim = ndim;
    m->first_gpu = first_gpu;
    for (int a = 0; a < ndim; a++) {
        m->name[a] = names[a];
        m->size[a] = size[a];
        m->stride[a] = stride[a];
    }
}

static const char *side_name(enum rf_side_kind kind)
{
    return kind == RF_SIDE_MEGATRON ? "train" : "infer";
}

/* *out = the product of n sizes; false when it overflows. */
static bool product(const int64_t *v, int n, int64_t *out)
{
    *out = 1;
    for (int i = 0; i < n; i++)
        if (rf_mul_overflow(*out, v[i], out))
            return false;
    return true;
}

/* The mesh's last GPU (every coordinate at size - 1) must lie in the side's range; then
 * every coordinate's GPU does, and rf_mesh_gpu cannot overflow. */
static int check_mesh(const struct rf_side *s, const struct rf_mesh *m, const char *name,
                      const char *what, struct rf_error *err)
{
    int64_t last = m->first_gpu;
    bool ok = m->ndim >= 0 && m->ndim <= RF_MESH_MAX && m->first_gpu == s->first_gpu;
    for (int a = 0; ok && a < m->ndim; a++)
        ok = m->size[a] >= 1 && m->stride[a] >= 0 &&
             !rf_muladd_overflow(&last, m->size[a] - 1, m->stride[a]);
    if (!ok || last >= s->first_gpu + s->place.span)
        return rf_error_set(err, RF_EINVAL, "%s: the %s mesh reaches beyond its GPUs %lld..%lld",
                            name, what, (long long)s->first_gpu,
                            (long long)(s->first_gpu + s->place.span - 1));
    return 0;
}

/* Whether engines packed back to back from first_gpu split one across two domains (an
 * engine smaller than a domain crossing a boundary, a larger one starting off a boundary).
 * Engine r starts at f + r x e modulo d, which repeats after d / gcd(e, d) engines, so at
 * most d of them are looked at. */
static bool packed_splits(int64_t e, int64_t r, int64_t f, int64_t d)
{
    if (e > d)
        return f % d != 0 || (r > 1 && e % d != 0);
    int64_t n = r < d ? r : d;
    for (int64_t i = 0; i < n; i++)
        if ((f + i * e) % d > d - e)
            return true;
    return false;
}

int rf_engine_place(int64_t e, int64_t r, int64_t f, int64_t d, const char *side,
                    struct rf_engine_place *out, struct rf_error *err)
{
    /* Sizes within RF_GPUS_MAX (rf_side_check's first checks): no product below passes
     * 2^41. */
    *out = (struct rf_engine_place){.per_domain = 1, .stride = e, .span = e * r};
    if (d == 0 || !packed_splits(e, r, f, d))
        return 0;
    if (f % d != 0)
        return rf_error_set(err, RF_EINVAL,
                            "%s.first_gpu: %lld is not at an NVLink domain boundary, so engines "
                            "of %lld GPUs would be split across domains of %lld GPUs; start at a "
                            "multiple of %lld (%lld), or set %s.placement = 'packed'",
                            side, (long long)f, (long long)e, (long long)d, (long long)d,
                            (long long)((f + d - 1) / d * d), side);
    out->gaps = true;
    if (e < d) {
        int64_t k = d / e;
        if (r % k != 0)
            return rf_error_set(err, RF_EINVAL,
                                "%s.gpus: %lld engines of %lld GPUs do not fill domains of %lld "
                                "GPUs evenly (%lld engines per domain); use a multiple of %lld "
                                "engines (%lld GPUs), or set %s.placement = 'packed'",
                                side, (long long)r, (long long)e, (long long)d, (long long)k,
                                (long long)k, (long long)(k * e), side);
        out->per_domain = k;
        out->stride = d;
        out->span = (r / k - 1) * d + k * e;
    } else {
        out->stride = (e + d - 1) / d * d;
        out->span = (r - 1) * out->stride + e;
    }
    return 0;
}

int rf_side_check(const struct rf_side *s, const char *name, struct rf_error *err)
{
    if (s->kind != RF_SIDE_MEGATRON && s->kind != RF_SIDE_VLLM)
        return rf_error_set(err, RF_EINVAL, "%s: %d is not a kind of side", name, (int)s->kind);
    if (s->gpus < 1 || s->gpus > RF_GPUS_MAX)
        return rf_error_set(err, RF_EINVAL, "%s.gpus: %lld, expected 1 to %lld", name,
                            (long long)s->gpus, (long long)RF_GPUS_MAX);
    if (s->first_gpu < 0)
        return rf_error_set(err, RF_EINVAL, "%s.first_gpu: %lld is negative", name,
                            (long long)s->first_gpu);
    int64_t end;
    if (rf_add_overflow(s->first_gpu, s->gpus, &end) || end > RF_GPUS_MAX)
        return rf_error_set(err, RF_EINVAL,
                            "%s.first_gpu: %lld + %lld GPUs ends beyond the %lld GPUs refit "
                            "supports",
                            name, (long long)s->first_gpu, (long long)s->gpus,
                            (long long)RF_GPUS_MAX);
    const char *field[] = {"tp", "cp", "pp", "dp", "ep", "etp", "edp", "replicas"};
    const int64_t size[] = {s->tp, s->cp, s->pp, s->dp, s->ep, s->etp, s->edp, s->replicas};
    for (int i = 0; i < 8; i++)
        if (size[i] < 1 || size[i] > RF_GPUS_MAX)
            return rf_error_set(err, RF_EINVAL, "%s.%s: %lld, expected 1 to %lld", name, field[i],
                                (long long)size[i], (long long)RF_GPUS_MAX);
    if ((unsigned)s->dtype >= RF_DT_COUNT)
        return rf_error_set(err, RF_EINVAL, "%s.dtype: %d is not a dtype", name, (int)s->dtype);
    bool mg = s->kind == RF_SIDE_MEGATRON;
    const char *what = mg ? "tp x cp x dp x pp" : "tp x dp x pp x replicas";
    int64_t prod, stage;
    if (!(mg ? product((int64_t[]){s->tp, s->cp, s->dp, s->pp}, 4, &prod)
             : product((int64_t[]){s->tp, s->dp, s->pp, s->replicas}, 4, &prod)))
        return rf_error_set(err, RF_EINVAL, "%s.gpus: %lld, but %s overflows 64 bits", name,
                            (long long)s->gpus, what);
    if (prod != s->gpus)
        return rf_error_set(err, RF_EINVAL, "%s.gpus: %lld, but %s = %lld", name,
                            (long long)s->gpus, what, (long long)prod);
    /* tp x cp x dp divides gpus, so it fits; edp x ep x etp may not. */
    stage = s->tp * s->cp * s->dp;
    if (mg && (!product((int64_t[]){s->edp, s->ep, s->etp}, 3, &prod) || prod != stage))
        return rf_error_set(err, RF_EINVAL, "%s.edp: edp x ep x etp must equal tp x cp x dp = %lld",
                            name, (long long)stage);
    if (!mg && s->ep != 1 && s->ep != s->tp * s->dp)
        return rf_error_set(err, RF_EINVAL, "%s.ep: %lld, expected 1 or tp x dp = %lld", name,
                            (long long)s->ep, (long long)(s->tp * s->dp));
    if (s->domain_gpus < 0 || s->domain_gpus > RF_GPUS_MAX || (mg && s->domain_gpus != 0))
        return rf_error_set(err, RF_EINVAL, "%s.placement: domains of %lld GPUs, expected %s", name,
                            (long long)s->domain_gpus,
                            mg ? "0 (a Megatron side is packed)" : "0 (packed) to 2^20");
    struct rf_engine_place pl;
    int rc;
    if ((rc = rf_engine_place(mg ? s->gpus : s->tp * s->dp * s->pp, mg ? 1 : s->replicas,
                              s->first_gpu, s->domain_gpus, name, &pl, err)) < 0)
        return rc;
    if (s->first_gpu + pl.span > RF_GPUS_MAX)
        return rf_error_set(err, RF_EINVAL,
                            "%s.first_gpu: %lld + %lld GPUs (idle ones included) ends beyond the "
                            "%lld GPUs refit supports",
                            name, (long long)s->first_gpu, (long long)pl.span,
                            (long long)RF_GPUS_MAX);
    if (!s->stage_layers)
        return rf_error_set(err, RF_EINVAL, "%s.stage_layers: missing", name);
    for (int64_t i = 0; i < s->pp; i++)
        if (s->stage_layers[i] < 0)
            return rf_error_set(err, RF_EINVAL, "%s.stage_layers[%lld]: %d layers is negative",
                                name, (long long)i + 1, s->stage_layers[i]);
    if (!s->layer_stage)
        return 0; /* not built yet */
    if (pl.gaps != s->place.gaps || pl.per_domain != s->place.per_domain ||
        pl.stride != s->place.stride || pl.span != s->place.span)
        return rf_error_set(err, RF_EINVAL, "%s: the placement was built for other sizes", name);
    if ((rc = check_mesh(s, &s->dense, name, mg ? "dense" : "engine", err)) < 0 ||
        (rc = check_mesh(s, &s->expert, name, mg ? "expert" : "engine", err)) < 0)
        return rc;
    return 0;
}

int rf_side_init(struct rf_side *s, int n_layers, struct rf_error *err)
{
    const char *name = side_name(s->kind);
    int rc;
    s->layer_stage = NULL; /* checks sizes only: the meshes are built below */
    if ((rc = rf_side_check(s, name, err)) < 0)
        return rc;
    int64_t sum = 0;
    for (int64_t i = 0; i < s->pp; i++)
        sum += s->stage_layers[i];
    if (sum != n_layers)
        return rf_error_set(err, RF_EINVAL, "%s.stage_layers: sum to %lld, the model has %d layers",
                            name, (long long)sum, n_layers);
    /* Checked above: cannot fail. */
    if ((rc = rf_engine_place(s->kind == RF_SIDE_MEGATRON ? s->gpus : s->tp * s->dp * s->pp,
                              s->kind == RF_SIDE_MEGATRON ? 1 : s->replicas, s->first_gpu,
                              s->domain_gpus, name, &s->place, err)) < 0)
        return rc;
    s->n_layers = n_layers;
    s->layer_stage = malloc(sizeof(int) * (size_t)(n_layers > 0 ? n_layers : 1));
    if (!s->layer_stage)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    int l = 0;
    for (int64_t st = 0; st < s->pp; st++)
        for (int k = 0; k < s->stage_layers[st]; k++)
            s->layer_stage[l++] = (int)st;

    if (s->kind == RF_SIDE_MEGATRON) {
        /* Megatron rank order tp-cp-ep-dp-pp: TP fastest. Experts refactor the ranks of one
         * stage as (edp, ep, etp) with etp fastest. */
        int64_t per_stage = s->tp * s->cp * s->dp;
        static const char *const dn[] = {"pp", "dp", "cp", "tp"};
        static const char *const en[] = {"pp", "edp", "ep", "etp"};
        mesh_set(&s->dense, s->first_gpu, 4, dn, (int64_t[]){s->pp, s->dp, s->cp, s->tp},
                 (int64_t[]){per_stage, s->tp * s->cp, s->tp, 1});
        mesh_set(&s->expert, s->first_gpu, 4, en, (int64_t[]){s->pp, s->edp, s->ep, s->etp},
                 (int64_t[]){per_stage, s->ep * s->etp, s->etp, 1});
    } else {
        /* Engines in a row (VL_REPLICA at stride e); placed with gaps, one domain (or the
         * whole domains of one engine) after another at the placement's stride, and inside a
         * domain its per_domain engines in a row (VL_SLOT). */
        static const char *const vn[] = {"replica", "pp", "dp", "tp", "slot"};
        const struct rf_engine_place *pl = &s->place;
        int64_t e = s->tp * s->dp * s->pp, k = pl->per_domain;
        int ndim = k > 1 ? 5 : 4;
        mesh_set(&s->dense, s->first_gpu, ndim, vn,
                 (int64_t[]){s->replicas / k, s->pp, s->dp, s->tp, k},
                 (int64_t[]){pl->stride, s->tp * s->dp, s->tp, 1, e});
        s->expert = s->dense;
    }
    return rf_side_check(s, name, err);
}

void rf_side_release(struct rf_side *s)
{
    if (!s)
        return;
    free(s->stage_layers);
    free(s->layer_stage);
    s->stage_layers = NULL;
    s->layer_stage = NULL;
}

int64_t rf_side_stage_of(const struct rf_side *s, int layer)
{
    if (layer < 0)
        return 0;
    if (layer >= s->n_layers)
        return s->pp - 1;
    return s->layer_stage[layer];
}

static void add(struct rf_placement *pl, int axis, int dim)
{
    pl->shard[pl->n].axis = (int8_t)axis;
    pl->shard[pl->n].dim = (int8_t)dim;
    pl->n++;
}

const struct rf_mesh *rf_side_placement(const struct rf_side *s, const struct rf_tensor *t,
                                        struct rf_placement *pl)
{
    bool expert = rf_class_expert(t->cls);
    /* The TP dim inside one expert; -1: none (whole on every TP rank). */
    int inner = t->cls == RF_CLASS_EXPERT_COLUMN ? 1 : t->cls == RF_CLASS_EXPERT_ROW ? 2 : -1;
    pl->n = 0;
    pl->stage = rf_side_stage_of(s, t->layer);

    if (s->kind == RF_SIDE_MEGATRON) {
        pl->stage_axis = MG_PP;
        if (expert) {
            add(pl, MG_EP, 0);
            /* FSDP2 shards the local (post-EP) expert block again on dim 0. */
            if (s->fsdp)
                add(pl, MG_EDP, 0);
            if (inner > 0)
                add(pl, MG_ETP, inner);
            return &s->expert;
        }
        switch (t->cls) {
        case RF_CLASS_COLUMN:
        case RF_CLASS_VOCAB: add(pl, MG_TP, 0); break;
        case RF_CLASS_ROW: add(pl, MG_TP, 1); break;
        default: break;
        }
        /* FSDP2's Shard(0) applies to the local TP shard, hence after TP. */
        if (s->fsdp)
            add(pl, MG_DP, 0);
        return &s->dense;
    }

    pl->stage_axis = VL_PP;
    if (expert) {
        if (s->ep > 1) {
            /* vLLM expert parallelism spans the engine's DP x TP ranks, whole experts. */
            add(pl, VL_DP, 0);
            add(pl, VL_TP, 0);
        } else if (inner > 0) {
            add(pl, VL_TP, inner);
        }
        return &s->expert;
    }
    switch (t->cls) {
    case RF_CLASS_COLUMN:
    case RF_CLASS_VOCAB: add(pl, VL_TP, 0); break;
    case RF_CLASS_ROW: add(pl, VL_TP, 1); break;
    default: break;
    }
    return &s->dense;
}

bool rf_side_has_gpu(const struct rf_side *s, int64_t g)
{
    int64_t rel = g - s->first_gpu;
    if (rel < 0 || rel >= s->place.span)
        return false;
    /* A stride starts with its engines, the idle GPUs after them (packed: the stride is one
     * engine and none is idle). */
    int64_t e = s->kind == RF_SIDE_MEGATRON ? s->gpus : s->tp * s->dp * s->pp;
    return rel % s->place.stride < s->place.per_domain * e;
}

bool rf_side_held_box(const struct rf_side *s, const struct rf_tensor *t, int64_t g,
                      struct rf_box *box)
{
    struct rf_placement pl;
    int64_t coord[RF_MESH_MAX];
    const struct rf_mesh *m = rf_side_placement(s, t, &pl);
    if (!rf_mesh_coord(m, g, coord))
        return false;
    if (pl.stage_axis >= 0 && coord[pl.stage_axis] != pl.stage)
        return false;
    rf_placement_box(&pl, m, t->ndim, t->shape, coord, box);
    return rf_box_numel(box, t->ndim) > 0;
}

void rf_side_describe(const struct rf_side *s, char *buf, size_t size)
{
    if (s->kind == RF_SIDE_MEGATRON) {
        snprintf(buf, size, "tp%lld cp%lld pp%lld dp%lld ep%lld etp%lld%s", (long long)s->tp,
                 (long long)s->cp, (long long)s->pp, (long long)s->dp, (long long)s->ep,
                 (long long)s->etp, s->fsdp ? " fsdp" : "");
        return;
    }
    int n = snprintf(buf, size, "tp%lld pp%lld dp%lld ep%lld x%lld replicas", (long long)s->tp,
                     (long long)s->pp, (long long)s->dp, (long long)s->ep, (long long)s->replicas);
    /* Only a placement that differs from packing says so: the text is the run's
     * infer_layout, the same as before for every layout packing never split. */
    if (!s->place.gaps || n < 0 || (size_t)n >= size)
        return;
    if (s->place.stride == s->domain_gpus)
        snprintf(buf + n, size - (size_t)n, ", %lld per %lld-GPU domain",
                 (long long)s->place.per_domain, (long long)s->domain_gpus);
    else
        snprintf(buf + n, size - (size_t)n, ", each on %lld %lld-GPU domains",
                 (long long)(s->place.stride / s->domain_gpus), (long long)s->domain_gpus);
}
