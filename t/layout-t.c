/* Layout algebra: torch.chunk semantics, nested shards, Megatron and vLLM meshes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "checked.h"
#include "layout.h"

static void chunk_matches_torch(void **state)
{
    (void)state;
    int64_t off, len;
    /* torch.chunk(torch.arange(10), 4) -> sizes 3, 3, 3, 1 */
    int64_t want[4][2] = {{0, 3}, {3, 3}, {6, 3}, {9, 1}};
    for (int i = 0; i < 4; i++) {
        rf_chunk(10, 4, i, &off, &len);
        assert_int_equal(off, want[i][0]);
        assert_int_equal(len, want[i][1]);
    }
    /* torch.chunk(torch.arange(5), 4) -> sizes 2, 2, 1 and an empty fourth chunk */
    rf_chunk(5, 4, 2, &off, &len);
    assert_int_equal(off, 4);
    assert_int_equal(len, 1);
    rf_chunk(5, 4, 3, &off, &len);
    assert_int_equal(len, 0);
}

static void nested_shards_apply_in_order(void **state)
{
    (void)state;
    /* Mesh (a=2, b=3); dim 0 of 12 rows sharded by a, then b inside a's chunk. */
    struct rf_mesh m = {.ndim = 2, .size = {2, 3}, .stride = {3, 1}};
    struct rf_placement pl = {.n = 2, .shard = {{0, 0}, {1, 0}}, .stage_axis = -1};
    int64_t shape[2] = {12, 5};
    struct rf_box b;
    rf_placement_box(&pl, &m, 2, shape, (int64_t[]){1, 2}, &b);
    assert_int_equal(b.off[0], 6 + 4);
    assert_int_equal(b.len[0], 2);
    assert_int_equal(b.len[1], 5);
    /* Reversed order: b outer, a inner. */
    pl.shard[0].axis = 1;
    pl.shard[1].axis = 0;
    rf_placement_box(&pl, &m, 2, shape, (int64_t[]){1, 2}, &b);
    assert_int_equal(b.off[0], 8 + 2);
    assert_int_equal(b.len[0], 2);
}

static struct rf_side megatron(int64_t tp, int64_t cp, int64_t pp, int64_t dp, int64_t ep,
                               int64_t etp, int *stages)
{
    struct rf_side s = {.kind = RF_SIDE_MEGATRON,
                        .tp = tp,
                        .cp = cp,
                        .pp = pp,
                        .dp = dp,
                        .ep = ep,
                        .etp = etp,
                        .edp = tp * cp * dp / (ep * etp),
                        .gpus = tp * cp * pp * dp,
                        .replicas = 1,
                        .stage_layers = stages};
    return s;
}

static void megatron_rank_order(void **state)
{
    (void)state;
    int stages[2] = {2, 2};
    struct rf_side s = megatron(2, 1, 2, 4, 4, 1, stages);
    struct rf_error err;
    assert_int_equal(rf_side_init(&s, 4, &err), 0);
    /* Dense: tp fastest, then dp, then pp. */
    assert_int_equal(rf_mesh_gpu(&s.dense, (int64_t[]){1, 3, 0, 1}), 8 + 6 + 1);
    /* Experts of one stage: etp fastest, then ep, then edp (edp = 2*4/4 = 2). */
    assert_int_equal(s.expert.size[1], 2);
    assert_int_equal(rf_mesh_gpu(&s.expert, (int64_t[]){0, 1, 3, 0}), 4 + 3);
    /* Layer 3 lives on stage 1; embedding (-1) on 0; lm_head (layers) on the last. */
    assert_int_equal(rf_side_stage_of(&s, 3), 1);
    assert_int_equal(rf_side_stage_of(&s, -1), 0);
    assert_int_equal(rf_side_stage_of(&s, 4), 1);
    s.stage_layers = NULL; /* stack-owned */
    rf_side_release(&s);
}

static void expert_placements(void **state)
{
    (void)state;
    int stages[1] = {1};
    struct rf_side s = megatron(1, 1, 1, 16, 4, 2, stages);
    struct rf_error err;
    assert_int_equal(rf_side_init(&s, 1, &err), 0);
    struct rf_tensor t = {.name = "e",
                          .ndim = 3,
                          .shape = {16, 64, 32},
                          .layer = 0,
                          .cls = RF_CLASS_EXPERT_ROW,
                          .experts = 16};
    struct rf_placement pl;
    const struct rf_mesh *m = rf_side_placement(&s, &t, &pl);
    struct rf_box b;
    /* edp 1, ep 3, etp 1: experts 12..15, second half of dim 2. */
    rf_placement_box(&pl, m, 3, t.shape, (int64_t[]){0, 1, 3, 1}, &b);
    assert_int_equal(b.off[0], 12);
    assert_int_equal(b.len[0], 4);
    assert_int_equal(b.off[2], 16);
    assert_int_equal(b.len[2], 16);
    assert_int_equal(rf_mesh_gpu(m, (int64_t[]){0, 1, 3, 1}), 8 + 6 + 1);
    s.stage_layers = NULL;
    rf_side_release(&s);

    /* vLLM with EP = TP*DP: whole experts, DP outer, TP inner. */
    int one[1] = {1};
    struct rf_side v = {.kind = RF_SIDE_VLLM,
                        .tp = 4,
                        .dp = 2,
                        .pp = 1,
                        .ep = 8,
                        .cp = 1,
                        .etp = 1,
                        .edp = 1,
                        .replicas = 2,
                        .gpus = 16,
                        .stage_layers = one};
    assert_int_equal(rf_side_init(&v, 1, &err), 0);
    m = rf_side_placement(&v, &t, &pl);
    rf_placement_box(&pl, m, 3, t.shape, (int64_t[]){1, 0, 1, 2}, &b);
    assert_int_equal(b.off[0], 12);
    assert_int_equal(b.len[0], 2);
    assert_int_equal(b.len[2], 32);
    v.stage_layers = NULL;
    rf_side_release(&v);
}

/* A side whose sizes would overflow or wrap its GPU range is refused by C itself, whatever
 * models/lib checked first: each row edits one int64 field of a valid side and names the
 * exact message. */
static void side_sizes_are_checked_in_c(void **state)
{
    (void)state;
    static const struct {
        bool vllm;
        size_t field;
        int64_t value;
        const char *want;
    } rows[] = {
        /* The wrapped range check behind a stored dst_gpu = -1: first_gpu + gpus overflows. */
        {true, offsetof(struct rf_side, first_gpu), INT64_MAX - 3,
         "infer.first_gpu: 9223372036854775804 + 8 GPUs ends beyond the 1048576 GPUs refit "
         "supports"},
        {true, offsetof(struct rf_side, first_gpu), RF_GPUS_MAX - 7,
         "infer.first_gpu: 1048569 + 8 GPUs ends beyond the 1048576 GPUs refit supports"},
        {true, offsetof(struct rf_side, first_gpu), -1, "infer.first_gpu: -1 is negative"},
        {false, offsetof(struct rf_side, gpus), INT64_C(1) << 21,
         "train.gpus: 2097152, expected 1 to 1048576"},
        {false, offsetof(struct rf_side, tp), INT64_C(1) << 32,
         "train.tp: 4294967296, expected 1 to 1048576"},
        {false, offsetof(struct rf_side, edp), 0, "train.edp: 0, expected 1 to 1048576"},
        {true, offsetof(struct rf_side, replicas), -8, "infer.replicas: -8, expected 1 to 1048576"},
        {false, offsetof(struct rf_side, tp), 4, "train.gpus: 8, but tp x cp x dp x pp = 16"},
        {false, offsetof(struct rf_side, ep), 4,
         "train.edp: edp x ep x etp must equal tp x cp x dp = 4"},
        {true, offsetof(struct rf_side, ep), 2, "infer.ep: 2, expected 1 or tp x dp = 4"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int stages[2] = {1, 1};
        struct rf_side s = rows[i].vllm ? (struct rf_side){.kind = RF_SIDE_VLLM,
                                                           .tp = 2,
                                                           .dp = 2,
                                                           .pp = 1,
                                                           .ep = 1,
                                                           .cp = 1,
                                                           .etp = 1,
                                                           .edp = 1,
                                                           .replicas = 2,
                                                           .gpus = 8,
                                                           .stage_layers = stages}
                                        : megatron(2, 1, 2, 2, 2, 1, stages);
        struct rf_error err = {0};
        *(int64_t *)((char *)&s + rows[i].field) = rows[i].value;
        assert_int_equal(rf_side_init(&s, rows[i].vllm ? 1 : 2, &err), RF_EINVAL);
        assert_string_equal(err.msg, rows[i].want);
        s.stage_layers = NULL;
        rf_side_release(&s);
    }
    /* The last GPU refit supports is still a GPU. */
    int stages[1] = {1};
    struct rf_side s = {.kind = RF_SIDE_VLLM,
                        .tp = 8,
                        .dp = 1,
                        .pp = 1,
                        .ep = 1,
                        .cp = 1,
                        .etp = 1,
                        .edp = 1,
                        .replicas = 1,
                        .gpus = 8,
                        .first_gpu = RF_GPUS_MAX - 8,
                        .stage_layers = stages};
    struct rf_error err = {0};
    assert_int_equal(rf_side_init(&s, 1, &err), 0);
    assert_int_equal(rf_mesh_gpu(&s.dense, (int64_t[]){0, 0, 0, 7}), RF_GPUS_MAX - 1);
    s.stage_layers = NULL;
    rf_side_release(&s);
}

/* A product of four sizes within 2^20 each can pass 2^63: it must not wrap into a match. */
static void size_products_do_not_wrap(void **state)
{
    (void)state;
    int stages[1] = {1};
    /* Each size within 2^20, their product 2^80: wrapped, it could have matched gpus. */
    struct rf_side s = megatron(1, 1, 1, 1, 1, 1, stages);
    s.tp = s.cp = s.dp = s.pp = RF_GPUS_MAX;
    s.gpus = 8;
    struct rf_error err = {0};
    assert_int_equal(rf_side_init(&s, 1, &err), RF_EINVAL);
    assert_string_equal(err.msg, "train.gpus: 8, but tp x cp x dp x pp overflows 64 bits");
    /* A negative stage once made the layer map write past its end. */
    int bad[2] = {3, -2};
    s = megatron(1, 1, 2, 1, 1, 1, bad);
    assert_int_equal(rf_side_init(&s, 1, &err), RF_EINVAL);
    assert_string_equal(err.msg, "train.stage_layers[2]: -2 layers is negative");
}

/* Box and mesh arithmetic: an element count past int64 is -1, never a wrapped number. */
static void box_numel_overflow_is_refused(void **state)
{
    (void)state;
    struct rf_box b = {.len = {INT64_C(1) << 32, INT64_C(1) << 32, 1, 1}};
    assert_int_equal(rf_box_numel(&b, 2), -1);
    b.len[1] = (INT64_C(1) << 31) - 1;
    assert_int_equal(rf_box_numel(&b, 2), (INT64_C(1) << 32) * ((INT64_C(1) << 31) - 1));
    b.len[1] = -1;
    assert_int_equal(rf_box_numel(&b, 2), -1);
    /* A built side's meshes are checked again: one edited since rf_side_init is refused. */
    int stages[1] = {1};
    struct rf_side s = megatron(2, 1, 1, 2, 2, 1, stages);
    struct rf_error err = {0};
    assert_int_equal(rf_side_init(&s, 1, &err), 0);
    assert_int_equal(rf_side_check(&s, "train", &err), 0);
    s.dense.stride[3] = INT64_MAX;
    assert_int_equal(rf_side_check(&s, "train", &err), RF_EINVAL);
    assert_string_equal(err.msg, "train: the dense mesh reaches beyond its GPUs 0..3");
    s.stage_layers = NULL;
    rf_side_release(&s);
}

/* Engines placed on NVLink domains (rf_engine_place): rows of (engine, engines, first GPU,
 * domain) and what they give, checked against a hand count; the errors name the field and
 * both ways out. */
static void engines_are_placed_domain_by_domain(void **state)
{
    (void)state;
    static const struct {
        int64_t e, r, f, d;
        bool gaps;
        int64_t per_domain, stride, span;
        const char *want;
    } rows[] = {
        /* Kimi K3 on GB200: 64 engines of 64, one per 72-GPU rack from rack 29: the last
         * starts at 2088 + 63 x 72 and ends 64 GPUs later, 4600 GPUs from the first. */
        {64, 64, 2088, 72, true, 1, 72, 4600, NULL},
        /* TP16 engines: 4 per rack (64 GPUs), 8 idle; 256 engines fill 64 racks. */
        {16, 256, 2088, 72, true, 4, 72, 63 * 72 + 64, NULL},
        /* DeepSeek-V3 TP32 x4 from GPU 144: 2 per rack, 2 racks: 72 + 64. */
        {32, 4, 144, 72, true, 2, 72, 136, NULL},
        /* Engines of 96: two racks each (48 GPUs idle), 3 of them: 2 x 144 + 96. */
        {96, 3, 0, 72, true, 1, 144, 384, NULL},
        /* Packing splits none: the engine divides the domain, is a multiple of it, or the
         * engines fit in the first domain; and packed (domain 0) is packed. */
        {8, 16, 144, 72, false, 1, 8, 128, NULL},
        {144, 3, 72, 72, false, 1, 144, 432, NULL},
        {16, 3, 0, 72, false, 1, 16, 48, NULL},
        {64, 1, 72, 72, false, 1, 64, 64, NULL},
        {64, 4, 0, 0, false, 1, 64, 256, NULL},
        {64, 4, 36, 0, false, 1, 64, 256, NULL},
        /* The executor's test: engines of 4 in domains of 6. */
        {4, 2, 0, 6, true, 1, 6, 10, NULL},
        {8, 16, 4, 72, false, 0, 0, 0,
         "infer.first_gpu: 4 is not at an NVLink domain boundary, so engines of 8 GPUs would "
         "be split across domains of 72 GPUs; start at a multiple of 72 (72), or set "
         "infer.placement = 'packed'"},
        {64, 2, 36, 72, false, 0, 0, 0,
         "infer.first_gpu: 36 is not at an NVLink domain boundary, so engines of 64 GPUs would "
         "be split across domains of 72 GPUs; start at a multiple of 72 (72), or set "
         "infer.placement = 'packed'"},
        {16, 6, 0, 72, false, 0, 0, 0,
         "infer.gpus: 6 engines of 16 GPUs do not fill domains of 72 GPUs evenly (4 engines "
         "per domain); use a multiple of 4 engines (64 GPUs), or set infer.placement = "
         "'packed'"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        struct rf_engine_place pl;
        struct rf_error err = {0};
        int rc = rf_engine_place(rows[i].e, rows[i].r, rows[i].f, rows[i].d, "infer", &pl, &err);
        if (rows[i].want) {
            assert_int_equal(rc, RF_EINVAL);
            assert_string_equal(err.msg, rows[i].want);
            continue;
        }
        assert_int_equal(rc, 0);
        assert_int_equal(pl.gaps, rows[i].gaps);
        assert_int_equal(pl.per_domain, rows[i].per_domain);
        assert_int_equal(pl.stride, rows[i].stride);
        assert_int_equal(pl.span, rows[i].span);
    }
}

/* Every GPU of a domain-placed vLLM side, by enumerating its mesh: distinct, `gpus` of them,
 * each engine's (the coordinate on VL_REPLICA and VL_SLOT) inside one domain, or for an
 * engine larger than a domain on whole domains of its own; the GPUs no coordinate reaches
 * are exactly those rf_side_has_gpu calls idle, and a stacked expert tensor has a shard on
 * each engine GPU. */
static void placed_engines_never_span_domains(void **state)
{
    (void)state;
    static const struct {
        int64_t tp, dp, replicas, first, domain;
        const char *describe;
    } rows[] = {
        {8, 8, 6, 2088, 72, "tp8 pp1 dp8 ep64 x6 replicas, 1 per 72-GPU domain"},
        {8, 2, 8, 144, 72, "tp8 pp1 dp2 ep16 x8 replicas, 4 per 72-GPU domain"},
        {8, 4, 4, 144, 72, "tp8 pp1 dp4 ep32 x4 replicas, 2 per 72-GPU domain"},
        {8, 12, 3, 0, 72, "tp8 pp1 dp12 ep96 x3 replicas, each on 2 72-GPU domains"},
        {8, 8, 4, 0, 64, "tp8 pp1 dp8 ep64 x4 replicas"},
    };
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int stages[1] = {1};
        int64_t e = rows[i].tp * rows[i].dp, d = rows[i].domain;
        struct rf_side s = {.kind = RF_SIDE_VLLM,
                            .tp = rows[i].tp,
                            .dp = rows[i].dp,
                            .pp = 1,
                            .ep = e,
                            .cp = 1,
                            .etp = 1,
                            .edp = 1,
                            .replicas = rows[i].replicas,
                            .gpus = e * rows[i].replicas,
                            .first_gpu = rows[i].first,
                            .domain_gpus = d,
                            .stage_layers = stages};
        struct rf_error err = {0};
        assert_int_equal(rf_side_init(&s, 1, &err), 0);
        char text[128];
        rf_side_describe(&s, text, sizeof(text));
        assert_string_equal(text, rows[i].describe);
        int64_t span = s.place.span;
        int64_t *engine_of = malloc(sizeof(int64_t) * (size_t)span);
        for (int64_t g = 0; g < span; g++)
            engine_of[g] = -1;
        struct rf_tensor t = {.name = "e",
                              .ndim = 3,
                              .shape = {e * 2, 16, 8},
                              .layer = 0,
                              .cls = RF_CLASS_EXPERT_COLUMN,
                              .experts = e * 2};
        struct rf_placement pl;
        const struct rf_mesh *m = rf_side_placement(&s, &t, &pl);
        int64_t n = 1, coord[RF_MESH_MAX];
        for (int a = 0; a < m->ndim; a++)
            n *= m->size[a];
        assert_int_equal(n, s.gpus);
        for (int64_t k = 0; k < n; k++) {
            int64_t r = k;
            for (int a = m->ndim - 1; a >= 0; a--) {
                coord[a] = r % m->size[a];
                r /= m->size[a];
            }
            int64_t g = rf_mesh_gpu(m, coord) - s.first_gpu;
            assert_true(g >= 0 && g < span);
            assert_int_equal(engine_of[g], -1); /* distinct */
            /* The engine: its domain group and its slot in the domain (axis 4, when built). */
            engine_of[g] = coord[0] * s.place.per_domain + (m->ndim > 4 ? coord[4] : 0);
            struct rf_box b;
            rf_placement_box(&pl, m, 3, t.shape, coord, &b);
            assert_int_equal(b.len[0], 2); /* two whole experts on every engine GPU */
        }
        for (int64_t g = 0; g < span; g++) {
            assert_int_equal(engine_of[g] >= 0, rf_side_has_gpu(&s, s.first_gpu + g));
            if (engine_of[g] < 0)
                continue;
            /* An engine's GPUs are e in a row from a start inside one domain, or from a
             * domain boundary when it is larger than one. */
            int64_t start = g - (g % s.place.stride) % e, abs = s.first_gpu + start;
            assert_int_equal(engine_of[start], engine_of[g]);
            if (e <= d)
                assert_int_equal(abs / d, (s.first_gpu + g) / d);
            else
                assert_int_equal(abs % d, 0);
        }
        assert_false(rf_side_has_gpu(&s, s.first_gpu - 1));
        assert_false(rf_side_has_gpu(&s, s.first_gpu + span));
        free(engine_of);
        s.stage_layers = NULL;
        rf_side_release(&s);
    }
    /* A Megatron side is packed; C refuses any other placement of it. */
    int stages[1] = {1};
    struct rf_side s = megatron(2, 1, 1, 2, 2, 1, stages);
    s.domain_gpus = 72;
    struct rf_error err = {0};
    assert_int_equal(rf_side_init(&s, 1, &err), RF_EINVAL);
    assert_string_equal(err.msg,
                        "train.placement: domains of 72 GPUs, expected 0 (a Megatron side is "
                        "packed)");
}

/* rf_mesh_coord inverts rf_mesh_gpu: every coordinate of a Megatron side's meshes comes
 * back from its GPU; a GPU off the mesh (before it, past it) has none. */
static void mesh_coord_inverts_mesh_gpu(void **state)
{
    (void)state;
    int stages[2] = {2, 2};
    struct rf_side s = megatron(2, 1, 2, 4, 4, 1, stages);
    struct rf_error err;
    s.first_gpu = 8;
    assert_int_equal(rf_side_init(&s, 4, &err), 0);
    const struct rf_mesh *ms[2] = {&s.dense, &s.expert};
    for (int k = 0; k < 2; k++) {
        const struct rf_mesh *m = ms[k];
        int64_t n = 0, coord[RF_MESH_MAX], back[RF_MESH_MAX];
        for (int64_t g = 8; g < 8 + 16; g++) {
            assert_true(rf_mesh_coord(m, g, coord));
            for (int a = 0; a < m->ndim; a++)
                assert_true(coord[a] >= 0 && coord[a] < m->size[a]);
            assert_int_equal(rf_mesh_gpu(m, coord), g);
            n++;
        }
        assert_int_equal(n, 16);
        assert_false(rf_mesh_coord(m, 7, back));
        assert_false(rf_mesh_coord(m, 24, back));
    }
    /* GPU 8 + 13 = tp 1, dp 2, pp 1 (tp fastest, then dp, then pp: 1 + 2 * 2 + 8). */
    int64_t c[RF_MESH_MAX];
    assert_true(rf_mesh_coord(&s.dense, 8 + 13, c));
    assert_int_equal(c[0], 1); /* pp */
    assert_int_equal(c[1], 2); /* dp */
    assert_int_equal(c[2], 0); /* cp */
    assert_int_equal(c[3], 1); /* tp */
    s.stage_layers = NULL;
    rf_side_release(&s);
}

/* Engines placed with gaps: 2 engines of 16 GPUs per 36-GPU domain leave GPUs 32..35 of
 * each domain idle. Those have no coordinate and hold nothing; every engine GPU holds the
 * box rf_placement_box gives at its coordinate. */
static void held_box_follows_the_placement(void **state)
{
    (void)state;
    int one[1] = {1};
    struct rf_side v = {.kind = RF_SIDE_VLLM,
                        .tp = 8,
                        .dp = 2,
                        .pp = 1,
                        .ep = 16,
                        .cp = 1,
                        .etp = 1,
                        .edp = 1,
                        .replicas = 4,
                        .gpus = 64,
                        .domain_gpus = 36,
                        .stage_layers = one};
    struct rf_error err = {0};
    assert_int_equal(rf_side_init(&v, 1, &err), 0);
    assert_int_equal(v.place.span, 68); /* the last domain's idle GPUs are past it */
    struct rf_tensor t = {
        .name = "w", .ndim = 2, .shape = {64, 32}, .layer = 0, .cls = RF_CLASS_COLUMN};
    struct rf_placement pl;
    const struct rf_mesh *m = rf_side_placement(&v, &t, &pl);
    int held = 0;
    for (int64_t g = 0; g < 72; g++) {
        struct rf_box b, want;
        int64_t coord[RF_MESH_MAX];
        bool idle = g % 36 >= 32;
        assert_int_equal(rf_side_held_box(&v, &t, g, &b), !idle);
        assert_int_equal(rf_mesh_coord(m, g, coord), !idle);
        assert_int_equal(rf_side_has_gpu(&v, g), !idle);
        if (idle)
            continue;
        rf_placement_box(&pl, m, 2, t.shape, coord, &want);
        /* Column-parallel over tp 8: rows of 8, whole columns; tp is the fastest axis. */
        assert_int_equal(b.off[0], (g % 36 % 16 % 8) * 8);
        assert_int_equal(b.len[0], 8);
        assert_int_equal(b.len[1], 32);
        assert_memory_equal(&b, &want, sizeof(b));
        held++;
    }
    assert_int_equal(held, 64);
    struct rf_box b;
    assert_false(rf_side_held_box(&v, &t, 72, &b));
    v.stage_layers = NULL;
    rf_side_release(&v);

    /* Pipeline stages: a layer-1 tensor is held on stage 1's GPUs only (tp 2, dp 1, pp 2:
     * GPUs 2 and 3). */
    int stages[2] = {1, 1};
    struct rf_side s = megatron(2, 1, 2, 1, 1, 1, stages);
    assert_int_equal(rf_side_init(&s, 2, &err), 0);
    t.layer = 1;
    for (int64_t g = 0; g < 4; g++)
        assert_int_equal(rf_side_held_box(&s, &t, g, &b), g >= 2);
    s.stage_layers = NULL;
    rf_side_release(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(chunk_matches_torch),
        cmocka_unit_test(nested_shards_apply_in_order),
        cmocka_unit_test(megatron_rank_order),
        cmocka_unit_test(expert_placements),
        cmocka_unit_test(side_sizes_are_checked_in_c),
        cmocka_unit_test(size_products_do_not_wrap),
        cmocka_unit_test(box_numel_overflow_is_refused),
        cmocka_unit_test(engines_are_placed_domain_by_domain),
        cmocka_unit_test(placed_engines_never_span_domains),
        cmocka_unit_test(mesh_coord_inverts_mesh_gpu),
        cmocka_unit_test(held_box_follows_the_placement),
    };
    return cmocka_run_group_tests_name("layout", tests, NULL, NULL);
}
