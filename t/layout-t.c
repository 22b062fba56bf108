/* Layout algebra: torch.chunk semantics, nested shards, Megatron and vLLM meshes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

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
    };
    return cmocka_run_group_tests_name("layout", tests, NULL, NULL);
}
