/* Per-GPU memory at refit time (sim/memory.c): hand-computed lines, to the byte, for a small
 * dense and a small MoE model on both sides (Adam's state with and without the distributed
 * optimizer, FSDP, FP8 with its block scales), the worst GPU found, the refusal's text. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures.h"
#include "memory.h"

/* staging 1000 bytes x 2 streams; 1 MB "GPUs" (the engine takes 90%: 900000). */
static const struct rf_memory_opts opts = {.hbm_gb = 0.001, .staging_bytes = 1000, .streams = 2};

/* Two layers of hidden 64: embedding [1000, 64], per layer qkv [192, 64], o [64, 64], up
 * [256, 64], down [64, 256] and a norm [64], then the final norm and lm_head [1000, 64]. */
static struct rf_model dense_model(struct rf_tensor *t)
{
    size_t n = 0;
    t[n++] = tensor("embed", RF_CLASS_VOCAB, RF_ROLE_EMBEDDING, -1, 1000, 64, 0);
    for (int l = 0; l < 2; l++) {
        t[n++] = tensor("qkv", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, l, 192, 64, 0);
        t[n++] = tensor("o", RF_CLASS_ROW, RF_ROLE_ATTENTION, l, 64, 64, 0);
        t[n++] = tensor("up", RF_CLASS_COLUMN, RF_ROLE_DENSE_FFN, l, 256, 64, 0);
        t[n++] = tensor("down", RF_CLASS_ROW, RF_ROLE_DENSE_FFN, l, 64, 256, 0);
        t[n++] = tensor("norm", RF_CLASS_REPLICATED, RF_ROLE_NORM, l, 64, 0, 0);
    }
    t[n++] = tensor("final_norm", RF_CLASS_REPLICATED, RF_ROLE_NORM, 2, 64, 0, 0);
    t[n++] = tensor("lm_head", RF_CLASS_VOCAB, RF_ROLE_LM_HEAD, 2, 1000, 64, 0);
    return (struct rf_model){.name = "dense", .layers = 2, .tensors = t, .n_tensors = n};
}

/* Training TP2 PP2 DP2: stage 0 (GPU 0) holds half the embedding (32000) and layer 0's
 * shards (6144 + 2048 + 8192 + 8192 + 64 = 24640): 56640 parameters; stage 1 (GPU 4, PP's
 * stride tp*cp*dp) layer 1, the final norm and half of lm_head: 24640 + 64 + 32000 = 56704,
 * the worst. Weights and gradients 2 bytes each, Adam 12 bytes over DP2 (ceil(56704 / 2) =
 * 28352): 113408 + 113408 + 340224 + 2000 staging = 569040. Inference TP2 x 2 engines from
 * GPU 8: everything at half, 113344 parameters, 226688 bytes + 2000 = 228688 of 900000. */
static void dense_sides_to_the_byte(void **state)
{
    (void)state;
    struct rf_tensor t[16];
    struct rf_model m = dense_model(t);
    struct rf_side tr = train_side(2, 1, 2, 2, 1, 1, false, 0, 2);
    struct rf_side in = infer_side(2, 1, 1, 1, 2, 8, 2, RF_DT_BF16);
    struct rf_side_memory mt, mi;
    tr.distributed_optimizer = true;
    rf_memory_of(&m, &tr, &in, &opts, &mt, &mi);
    assert_int_equal(mt.worst.gpu, 4);
    assert_int_equal(mt.worst.stage, 1);
    assert_int_equal(mt.worst.weights, 113408);
    assert_int_equal(mt.worst.grads, 113408);
    assert_int_equal(mt.worst.optimizer, 340224);
    assert_int_equal(mt.worst.staging, 2000);
    assert_int_equal(mt.worst.total, 569040);
    assert_int_equal(mt.budget_bytes, 1000000);
    assert_int_equal(mt.headroom_bytes, 1000000 - 569040);
    assert_true(mt.fits);
    assert_int_equal(mi.worst.gpu, 8);
    assert_int_equal(mi.worst.weights, 226688);
    assert_int_equal(mi.worst.grads + mi.worst.optimizer, 0);
    assert_int_equal(mi.worst.total, 228688);
    assert_int_equal(mi.budget_bytes, 900000);
    assert_int_equal(mi.headroom_bytes, 900000 - 228688);
    assert_true(mi.fits);

    /* Without the distributed optimizer every DP rank keeps all of Adam's state: 56704 x 12
     * = 680448, twice as much. */
    tr.distributed_optimizer = false;
    rf_memory_of(&m, &tr, &in, &opts, &mt, &mi);
    assert_int_equal(mt.worst.optimizer, 680448);
    assert_int_equal(mt.worst.total, 113408 * 2 + 680448 + 2000);
    assert_int_equal(mt.headroom_bytes, 1000000 - 909264);
    rf_side_release(&tr);

    /* FSDP (TP2 PP2 DP2) shards each TP shard again over DP on dim 0, and Adam's state
     * follows the parameters (no second division). Stage 1: layer 1's TP shards at half
     * (24576 / 2 = 12288, the norm 64 / 2 = 32), the final norm 32, lm_head 32000 / 2 =
     * 16000: 28352 parameters. */
    tr = train_side(2, 1, 2, 2, 1, 1, true, 0, 2);
    tr.distributed_optimizer = true;
    rf_memory_of(&m, &tr, &in, &opts, &mt, &mi);
    assert_int_equal(mt.worst.gpu, 4);
    assert_int_equal(mt.worst.weights, 28352 * 2);
    assert_int_equal(mt.worst.optimizer, 28352 * 12);
    assert_int_equal(mt.worst.total, 28352 * 16 + 2000);
    rf_side_release(&tr);
    rf_side_release(&in);
}

/* One layer: attention [64, 64] (column), a norm [64], experts up [8, 128, 64] and down
 * [8, 64, 128]. Training TP1 DP4 EP4: each GPU 2 experts of each (2 x 8192 x 2 = 32768
 * parameters) and all the attention (4096) and the norm (64). EP4 over DP4 leaves an expert
 * data parallelism of 1, so the experts' Adam state is not sharded: (ceil(4160 / 4) +
 * 32768) x 12 = (1040 + 32768) x 12 = 405696. Inference TP2 EP2 (EP spans the engine's
 * DP x TP), FP8: 4 experts of each at 1 byte (2 x 4 x 8192 = 65536), half the attention
 * (2048), the norm in BF16 (128), and FP32 block scales: experts [8, 1, 1] -> 4 each (2 x 4
 * x 4 = 32), attention [1, 1] -> chunk(1, 2)[0] = 1 (4): 67748 bytes. */
static void moe_sides_to_the_byte(void **state)
{
    (void)state;
    struct rf_tensor t[4] = {
        tensor("attn", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 64, 64, 0),
        tensor("norm", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 64, 0, 0),
        tensor("experts.up", RF_CLASS_EXPERT_COLUMN, RF_ROLE_EXPERT, 0, 8, 128, 64),
        tensor("experts.down", RF_CLASS_EXPERT_ROW, RF_ROLE_EXPERT, 0, 8, 64, 128),
    };
    struct rf_model m = {.name = "moe", .layers = 1, .experts = 8, .tensors = t, .n_tensors = 4};
    struct rf_side tr = train_side(1, 1, 1, 4, 4, 1, false, 0, 1);
    struct rf_side in = infer_side(2, 1, 1, 2, 2, 4, 1, RF_DT_FP8);
    struct rf_side_memory mt, mi;
    tr.distributed_optimizer = true;
    rf_memory_of(&m, &tr, &in, &opts, &mt, &mi);
    assert_int_equal(tr.edp, 1);
    assert_int_equal(mt.worst.gpu, 0);
    assert_int_equal(mt.worst.weights, (32768 + 4160) * 2);
    assert_int_equal(mt.worst.grads, (32768 + 4160) * 2);
    assert_int_equal(mt.worst.optimizer, 405696);
    assert_int_equal(mi.worst.gpu, 4);
    assert_int_equal(mi.worst.weights, 67748);
    assert_int_equal(mi.worst.total, 67748 + 2000);

    /* In BF16 the same engine holds 2 x 65536 + 4096 + 128 = 135296 bytes, no scales. */
    rf_side_release(&in);
    in = infer_side(2, 1, 1, 2, 2, 4, 1, RF_DT_BF16);
    rf_memory_of(&m, &tr, &in, &opts, &mt, &mi);
    assert_int_equal(mi.worst.weights, 135296);
    rf_side_release(&tr);
    rf_side_release(&in);
}

/* The worst GPU is the heaviest stage's first: an uneven split (3 layers over PP2: 2 + 1)
 * puts it on stage 0 even though lm_head is on stage 1; and the refusal names the side, the
 * GPU, the parts, the budget and the way out. */
static void the_worst_stage_and_the_refusal(void **state)
{
    (void)state;
    struct rf_tensor t[8];
    size_t n = 0;
    for (int l = 0; l < 3; l++)
        t[n++] = tensor("up", RF_CLASS_COLUMN, RF_ROLE_DENSE_FFN, l, 4096, 65536, 0);
    t[n++] = tensor("lm_head", RF_CLASS_VOCAB, RF_ROLE_LM_HEAD, 3, 1000, 64, 0);
    struct rf_model m = {.name = "uneven", .layers = 3, .tensors = t, .n_tensors = n};
    struct rf_side tr = train_side(1, 1, 2, 1, 1, 1, false, 0, 3);
    struct rf_side in = infer_side(1, 2, 1, 1, 1, 2, 3, RF_DT_BF16);
    struct rf_side_memory mt, mi;
    struct rf_memory_opts gb1 = {.hbm_gb = 1, .staging_bytes = 1000, .streams = 2};
    tr.distributed_optimizer = true;
    rf_memory_of(&m, &tr, &in, &gb1, &mt, &mi);
    assert_int_equal(mt.worst.stage, 0);
    assert_int_equal(mt.worst.gpu, 0);
    assert_int_equal(mt.worst.weights, 2 * 4096 * 65536 * 2);
    /* vLLM gives the remainder to the stages before the last: 2 + 1 as well. */
    assert_int_equal(mi.worst.gpu, 2);
    assert_int_equal(mi.worst.weights, 2 * 4096 * 65536 * 2);
    assert_false(mi.fits);

    struct rf_error err = {0};
    assert_int_equal(rf_memory_refuse(&mi, false, "s.lua:4: infer", NULL, &err), RF_EINVAL);
    assert_string_equal(err.msg,
                        "s.lua:4: infer: the layout does not fit: GPU 2 (stage 0) needs 1.1 GB of "
                        "0.9 (weights 1.1, staging 0.0), KV cache headroom -0.2 GB (the engine's "
                        "share is infer.gpu_memory_utilization of hbm_gb); shard further (more "
                        "tp, ep or pp, or more GPUs), or set allow_overcommit = true for a "
                        "what-if");
    /* Where a config set the engine's share, the message says which key. */
    assert_int_equal(rf_memory_refuse(&mi, false, "v.yaml:38: rollout.tp: refit's infer",
                                      "rollout.gpu_memory_utilization at v.yaml:40", &err),
                     RF_EINVAL);
    assert_non_null(strstr(err.msg, "v.yaml:38: rollout.tp: refit's infer: the layout does "
                                    "not fit: GPU 2"));
    assert_non_null(strstr(err.msg, "of hbm_gb, set by rollout.gpu_memory_utilization at "
                                    "v.yaml:40); shard further"));
    rf_side_release(&tr);
    rf_side_release(&in);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(dense_sides_to_the_byte),
        cmocka_unit_test(moe_sides_to_the_byte),
        cmocka_unit_test(the_worst_stage_and_the_refusal),
    };
    return cmocka_run_group_tests_name("memory", tests, NULL, NULL);
}
