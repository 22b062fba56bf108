/* Schedule: rounds respect the per-GPU staging budget, dependencies and the gather-before-
 * broadcast order, on hand cases and on real plans of random layouts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures.h"
#include "random.h"
#include "schedule.h"

/* Checks every round against the budget: per GPU, sends and receives (a transfer larger than
 * the budget counts as exactly the budget, so it must be alone on its GPUs). */
static void check_budget(const struct rf_plan *p, int64_t budget)
{
    int64_t n_gpus = 0;
    for (size_t i = 0; i < p->n_transfers; i++) {
        const struct rf_transfer *t = &p->transfers[i];
        int64_t hi = t->dst + (int64_t)(t->dst_count - 1) * t->dst_stride;
        n_gpus = t->src + 1 > n_gpus ? t->src + 1 : n_gpus;
        n_gpus = hi + 1 > n_gpus ? hi + 1 : n_gpus;
        assert_true(t->round >= 0 && t->round < p->n_rounds);
        if (t->after >= 0)
            assert_true(t->round > p->transfers[t->after].round);
    }
    int64_t *send = calloc((size_t)(n_gpus * p->n_rounds), sizeof(int64_t));
    int64_t *recv = calloc((size_t)(n_gpus * p->n_rounds), sizeof(int64_t));
    for (size_t i = 0; i < p->n_transfers; i++) {
        const struct rf_transfer *t = &p->transfers[i];
        if (t->src == t->dst && t->dst_count == 1)
            continue;
        int64_t s = t->bytes * t->dst_count, r = t->bytes;
        send[t->round * n_gpus + t->src] += s < budget ? s : budget;
        for (int32_t k = 0; k < t->dst_count; k++)
            recv[t->round * n_gpus + t->dst + k * t->dst_stride] += r < budget ? r : budget;
    }
    for (int64_t i = 0; i < n_gpus * p->n_rounds; i++) {
        assert_true(send[i] <= budget);
        assert_true(recv[i] <= budget);
    }
    free(send);
    free(recv);
}

static void four_transfers_two_rounds(void **state)
{
    (void)state;
    /* One source, 4 rows of 512 KiB each to 4 destinations: a 1 MiB budget fits 2 a round. */
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 4, 262144, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 1};
    struct rf_side tr = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(4, 1, 1, 1, 1, 1, 1, RF_DT_BF16);
    struct rf_plan p;
    struct rf_error err;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
    assert_int_equal(rf_schedule(&p, &(struct rf_schedule_opts){.staging_bytes = 1 << 20}, &err),
                     0);
    assert_int_equal(p.n_rounds, 2);
    check_budget(&p, 1 << 20);
    rf_plan_release(&p);
    rf_side_release(&tr);
    rf_side_release(&in);
}

static void oversized_transfer_is_alone(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("big", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 4096, 0, 0),
                             tensor("small", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 16, 0, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 2};
    struct rf_side tr = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(1, 1, 1, 1, 1, 1, 1, RF_DT_BF16);
    struct rf_plan p;
    struct rf_error err;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
    assert_int_equal(rf_schedule(&p, &(struct rf_schedule_opts){.staging_bytes = 1024}, &err), 0);
    assert_int_equal(p.n_rounds, 2);
    assert_int_not_equal(p.transfers[0].round, p.transfers[1].round);
    rf_plan_release(&p);
    rf_side_release(&tr);
    rf_side_release(&in);
}

static void broadcast_follows_its_gather(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("a", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 64, 64, 0),
                             tensor("e", RF_CLASS_EXPERT_ROW, RF_ROLE_EXPERT, 1, 8, 16, 32)};
    struct rf_model m = {.name = "m", .layers = 2, .tensors = ts, .n_tensors = 2};
    struct rf_side tr = train_side(2, 1, 2, 2, 4, 1, false, 0, 2);
    struct rf_side in = infer_side(2, 1, 1, 1, 2, 8, 2, RF_DT_BF16);
    struct rf_plan p;
    struct rf_error err;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_BROADCAST, NULL, NULL, &err), 0);
    assert_int_equal(rf_schedule(&p, &(struct rf_schedule_opts){.staging_bytes = 4096}, &err), 0);
    for (size_t c = 0; c < p.n_collectives; c++)
        for (size_t i = 0; i < p.n_transfers; i++)
            if (p.boxes[p.transfers[i].box].tensor == p.collectives[c].tensor)
                assert_true(p.collectives[c].round > p.transfers[i].round);
    check_budget(&p, 4096);
    rf_plan_release(&p);
    rf_side_release(&tr);
    rf_side_release(&in);
}

static void dependent_transfer_waits(void **state)
{
    (void)state;
    /* Forwarding: GPU 1 passes on what it received from GPU 0, pipelined in the same round
     * (hop 1), while GPU 3's plain transfer goes to a plain round of its own. The schedule
     * replaces the transfer array (it may split runs), so it lives on the heap. */
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 64, 0, 0)};
    struct rf_plan_box boxes[2] = {{.tensor = 0, .box = {.off = {0}, .len = {64, 1, 1, 1}}},
                                   {.tensor = 0, .box = {.off = {0}, .len = {64, 1, 1, 1}}}};
    struct rf_transfer *tr = malloc(4 * sizeof(*tr));
    tr[0] = (struct rf_transfer){
        .box = 0, .src = 0, .dst = 1, .dst_count = 1, .after = -1, .bytes = 128};
    tr[1] = (struct rf_transfer){
        .box = 0, .src = 1, .dst = 2, .dst_count = 1, .after = 0, .bytes = 128};
    tr[2] = (struct rf_transfer){
        .box = 0, .src = 2, .dst = 4, .dst_count = 2, .dst_stride = 1, .after = 1, .bytes = 128};
    tr[3] = (struct rf_transfer){
        .box = 1, .src = 3, .dst = 6, .dst_count = 1, .after = -1, .bytes = 128};
    struct rf_plan p = {.tensors = ts,
                        .n_tensors = 1,
                        .boxes = boxes,
                        .n_boxes = 2,
                        .transfers = tr,
                        .n_transfers = 4};
    struct rf_error err;
    assert_int_equal(rf_schedule(&p, &(struct rf_schedule_opts){.staging_bytes = 1 << 20}, &err),
                     0);
    assert_int_equal(p.n_rounds, 2);
    /* Source progress orders the boxes: GPU 0's and GPU 3's first boxes both at 0 bytes,
     * GPU 0 first; the kinds interleave plain 0, pipelined 0. */
    for (int i = 0; i < 4; i++)
        assert_int_equal(p.transfers[i].hop, i < 3 ? i : 0);
    assert_int_equal(p.transfers[0].round, p.transfers[2].round);
    assert_int_not_equal(p.transfers[0].round, p.transfers[3].round);
    /* The default chunk, capped at the budget. */
    assert_int_equal(p.chunk_bytes, 1 << 20);
    free(p.transfers);
}

/* A relay whose GPU has no room left in its feed's round waits past the stream window
 * (hop 0 there), and a pipelined round stages a chunk per item, not its bytes. */
static void relays_spill_past_the_stream_window(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 1 << 20, 0, 0)};
    struct rf_plan_box boxes[3];
    for (int b = 0; b < 3; b++)
        boxes[b] =
            (struct rf_plan_box){.tensor = 0, .box = {.off = {0}, .len = {1 << 20, 1, 1, 1}}};
    /* 8 MiB boxes, 1 MiB chunks, a 2 MiB budget: two items per GPU, direction and round,
     * 16 MiB of bytes. Sources 0 and 3 come first (source order), fill GPU 2's receive side
     * with their feeds, and so box 0's relay into GPU 2 cannot share its feed's round. */
    int32_t src[3] = {5, 0, 3}, mid[3] = {1, 2, 2}, end[3] = {2, 4, 6};
    struct rf_transfer *tr = malloc(6 * sizeof(*tr));
    for (int b = 0; b < 3; b++) {
        tr[2 * b] = (struct rf_transfer){
            .box = b, .src = src[b], .dst = mid[b], .dst_count = 1, .after = -1, .bytes = 8 << 20};
        tr[2 * b + 1] = (struct rf_transfer){.box = b,
                                             .src = mid[b],
                                             .dst = end[b],
                                             .dst_count = 1,
                                             .after = 2 * b,
                                             .bytes = 8 << 20};
    }
    struct rf_plan p = {.tensors = ts,
                        .n_tensors = 1,
                        .boxes = boxes,
                        .n_boxes = 3,
                        .transfers = tr,
                        .n_transfers = 6};
    struct rf_error err;
    struct rf_schedule_opts o = {.staging_bytes = 2 << 20, .chunk_bytes = 1 << 20, .streams = 2};
    assert_int_equal(rf_schedule(&p, &o, &err), 0);
    /* Scheduled in source order: box 1 (0 -> 2 -> 4), box 2 (3 -> 2 -> 6), box 0. */
    const struct rf_transfer *x = p.transfers;
    assert_int_equal(x[0].src, 0);
    assert_int_equal(x[2].src, 3);
    assert_int_equal(x[4].src, 5);
    for (int i = 0; i < 5; i++)
        assert_int_equal(x[i].round, 0);
    assert_int_equal(x[1].hop, 1);
    assert_int_equal(x[3].hop, 1);
    assert_int_equal(x[5].after, 4);
    assert_int_equal(x[5].round, 2);
    assert_int_equal(x[5].hop, 0);
    assert_int_equal(p.n_rounds, 3);
    free(p.transfers);
}

static void long_runs_are_split_to_fit(void **state)
{
    (void)state;
    /* One source, 64 KiB to 8 replicas, a 128 KiB budget: 4 runs of 2 destinations. */
    struct rf_tensor ts[] = {tensor("n", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 32768, 0, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 1};
    struct rf_side tr = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(1, 1, 1, 1, 8, 1, 1, RF_DT_BF16);
    struct rf_plan p;
    struct rf_error err;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
    assert_int_equal(p.n_transfers, 1);
    assert_int_equal(rf_schedule(&p, &(struct rf_schedule_opts){.staging_bytes = 131072}, &err), 0);
    assert_int_equal(p.n_transfers, 4);
    assert_int_equal(p.n_rounds, 4);
    for (size_t i = 0; i < p.n_transfers; i++)
        assert_int_equal(p.transfers[i].dst_count, 2);
    check_budget(&p, 131072);
    rf_plan_release(&p);
    rf_side_release(&tr);
    rf_side_release(&in);
}

/* Five tensors of every class, their sizes varied by iter (the random plans' model). */
static void random_tensors(struct rf_tensor ts[5], int iter)
{
    ts[0] = tensor("emb", RF_CLASS_VOCAB, RF_ROLE_EMBEDDING, -1, 40 + iter, 8, 0);
    ts[1] = tensor("c", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 12 + iter % 5, 7, 0);
    ts[2] = tensor("r", RF_CLASS_ROW, RF_ROLE_ATTENTION, 1, 9, 30 + iter % 3, 0);
    ts[3] = tensor("e", RF_CLASS_EXPERT_COLUMN, RF_ROLE_EXPERT, 1, 8, 6, 5 + iter % 4);
    ts[4] = tensor("n", RF_CLASS_REPLICATED, RF_ROLE_NORM, 1, 33, 0, 0);
}

static void random_plans_respect_the_budget(void **state)
{
    (void)state;
    static const int64_t budgets[] = {64, 256, 1000, 4096, 1 << 20};
    for (int iter = 0; iter < 30; iter++) {
        struct rf_tensor ts[5];
        random_tensors(ts, iter);
        struct rf_model m = {.name = "m", .layers = 2, .tensors = ts, .n_tensors = 5};
        struct rf_side tr = train_side(1 + iter % 2, 1, 1 + iter % 2, 2, 2, 1, iter % 3 == 0, 0, 2);
        struct rf_side in = infer_side(1 + iter % 4, 1, 1, 1, 1 + iter % 3, tr.gpus, 2,
                                       iter % 2 ? RF_DT_FP8 : RF_DT_BF16);
        int64_t budget = budgets[iter % 5];
        for (int s = RF_STRAT_BROADCAST; s <= RF_STRAT_RESHARD; s++) {
            struct rf_plan p;
            struct rf_error err;
            assert_int_equal(rf_plan_build(&p, &m, &tr, &in, s, NULL, NULL, &err), 0);
            assert_int_equal(
                rf_schedule(&p, &(struct rf_schedule_opts){.staging_bytes = budget}, &err), 0);
            check_budget(&p, budget);
            rf_plan_release(&p);
        }
        rf_side_release(&tr);
        rf_side_release(&in);
    }
}

/* Each broadcast takes the first round, after its gathers, where its root can send and
 * every member receive and send within the budget, given the transfers and the broadcasts
 * before it: checked against a dense replay of first fit on random layouts. Uniform
 * broadcasts (members nothing else touches: one member stands for all, schedule.c's
 * members_alike) and hybrids whose resharded experts land on the same members (checked
 * member by member) both. */
static void broadcasts_take_their_first_fitting_round(void **state)
{
    (void)state;
    static const int64_t budgets[] = {64, 300, 1000, 4096};
    for (int iter = 0; iter < 24; iter++) {
        struct rf_tensor ts[5];
        random_tensors(ts, iter);
        enum rf_strategy mix[] = {RF_STRAT_BROADCAST, RF_STRAT_BROADCAST, RF_STRAT_BROADCAST,
                                  RF_STRAT_RESHARD, RF_STRAT_BROADCAST};
        struct rf_model m = {.name = "m", .layers = 2, .tensors = ts, .n_tensors = 5};
        struct rf_side tr = train_side(1 + iter % 2, 1, 1 + iter % 2, 2, 2, 1, false, 0, 2);
        struct rf_side in = infer_side(1 + iter % 4, 1, 1, 1, 1 + iter % 3, tr.gpus, 2, RF_DT_BF16);
        int64_t budget = budgets[iter % 4];
        for (int hybrid = 0; hybrid < 2; hybrid++) {
            struct rf_plan p;
            struct rf_error err;
            assert_int_equal(rf_plan_build(&p, &m, &tr, &in,
                                           hybrid ? RF_STRAT_AUTO : RF_STRAT_BROADCAST,
                                           hybrid ? mix : NULL, NULL, &err),
                             0);
            assert_int_equal(
                rf_schedule(&p, &(struct rf_schedule_opts){.staging_bytes = budget}, &err), 0);
            assert_true(p.n_collectives > 0);
            int64_t n_gpus = tr.gpus + in.gpus, nr = p.n_rounds + 1;
            int64_t *send = calloc((size_t)(n_gpus * nr), sizeof(int64_t));
            int64_t *recv = calloc((size_t)(n_gpus * nr), sizeof(int64_t));
            int32_t *gather = malloc(m.n_tensors * sizeof(int32_t));
            for (size_t t = 0; t < m.n_tensors; t++)
                gather[t] = -1;
            for (size_t i = 0; i < p.n_transfers; i++) {
                const struct rf_transfer *t = &p.transfers[i];
                assert_false(t->chain); /* no relays: one lane, rounds as numbered */
                int32_t tensor = p.boxes[t->box].tensor;
                if (t->phase == RF_PHASE_GATHER && t->round > gather[tensor])
                    gather[tensor] = t->round;
                if (t->src == t->dst && t->dst_count == 1)
                    continue;
                int64_t sb = t->bytes * t->dst_count, rb = t->bytes;
                send[t->round * n_gpus + t->src] += sb < budget ? sb : budget;
                for (int32_t k = 0; k < t->dst_count; k++)
                    recv[t->round * n_gpus + t->dst + k * t->dst_stride] +=
                        rb < budget ? rb : budget;
            }
            for (size_t i = 0; i < p.n_collectives; i++) {
                const struct rf_collective *c = &p.collectives[i];
                int64_t need = c->bytes < budget ? c->bytes : budget;
                int32_t r = gather[c->tensor] + 1;
                for (;; r++) {
                    assert_true(r < nr);
                    bool fits = send[r * n_gpus + c->root] + need <= budget;
                    for (int32_t k = 0; k < c->gpu_count && fits; k++) {
                        int64_t g = c->first_gpu + (int64_t)k * c->gpu_stride;
                        fits = g == c->root || (recv[r * n_gpus + g] + need <= budget &&
                                                send[r * n_gpus + g] + need <= budget);
                    }
                    if (fits)
                        break;
                }
                assert_int_equal(c->round, r);
                send[r * n_gpus + c->root] += need;
                for (int32_t k = 0; k < c->gpu_count; k++) {
                    int64_t g = c->first_gpu + (int64_t)k * c->gpu_stride;
                    if (g != c->root) {
                        recv[r * n_gpus + g] += need;
                        send[r * n_gpus + g] += need;
                    }
                }
            }
            free(send);
            free(recv);
            free(gather);
            rf_plan_release(&p);
        }
        rf_side_release(&tr);
        rf_side_release(&in);
    }
}

/* A run of tiny boxes under the largest budget: budget / bytes = 2^31.3 destinations would
 * fit, which once wrapped int32 into a negative piece size (pieces of negative counts). */
static void tiny_boxes_under_a_huge_budget_stay_one_run(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("n", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 1, 0, 0)};
    struct rf_model m = {.name = "m", .layers = 1, .tensors = ts, .n_tensors = 1};
    struct rf_side tr = train_side(1, 1, 1, 1, 1, 1, false, 0, 1);
    struct rf_side in = infer_side(1, 1, 1, 1, 8, 1, 1, RF_DT_BF16);
    struct rf_plan p;
    struct rf_error err;
    assert_int_equal(rf_plan_build(&p, &m, &tr, &in, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
    assert_int_equal(p.n_transfers, 1);
    assert_int_equal(p.transfers[0].bytes, 2);
    assert_int_equal(
        rf_schedule(&p, &(struct rf_schedule_opts){.staging_bytes = RF_STAGING_MAX_BYTES}, &err),
        0);
    assert_int_equal(p.n_transfers, 1);
    assert_int_equal(p.transfers[0].dst_count, 8);
    assert_int_equal(p.n_rounds, 1);
    check_budget(&p, RF_STAGING_MAX_BYTES);
    rf_plan_release(&p);
    rf_side_release(&tr);
    rf_side_release(&in);
}

/* A budget near INT64_MAX: usage + need once overflowed into "fits", so two 2^62-byte
 * transfers to one GPU shared a round whose usage then wrapped. */
static void budgets_near_int64_max_do_not_wrap(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 64, 0, 0)};
    struct rf_plan_box boxes[1] = {{.tensor = 0, .box = {.off = {0}, .len = {64, 1, 1, 1}}}};
    struct rf_transfer *tr = malloc(2 * sizeof(*tr));
    for (int i = 0; i < 2; i++)
        tr[i] = (struct rf_transfer){
            .box = 0, .src = i, .dst = 2, .dst_count = 1, .after = -1, .bytes = INT64_C(1) << 62};
    struct rf_plan p = {.tensors = ts,
                        .n_tensors = 1,
                        .boxes = boxes,
                        .n_boxes = 1,
                        .transfers = tr,
                        .n_transfers = 2};
    struct rf_error err;
    assert_int_equal(rf_schedule(&p, &(struct rf_schedule_opts){.staging_bytes = INT64_MAX}, &err),
                     0);
    assert_int_equal(p.transfers[0].round, 0);
    assert_int_equal(p.transfers[1].round, 1);
    free(p.transfers);
}

/* rf_schedule indexes per-GPU arrays by the GPUs a plan names: out-of-range ones (a plan
 * not made by the planner) are refused, not written past. */
static void plans_naming_bad_gpus_are_refused(void **state)
{
    (void)state;
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 64, 0, 0)};
    struct rf_plan_box boxes[1] = {{.tensor = 0, .box = {.off = {0}, .len = {64, 1, 1, 1}}}};
    static const struct rf_transfer bad[] = {
        {.src = 0, .dst = -1, .dst_count = 1, .after = -1, .bytes = 128},
        {.src = 0, .dst = 1, .dst_count = 3, .dst_stride = INT32_MAX, .after = -1, .bytes = 128},
        {.src = -5, .dst = 1, .dst_count = 1, .after = -1, .bytes = 128},
        {.src = 0, .dst = 1, .dst_count = 1, .after = -1, .bytes = -1},
        {.box = 7, .src = 0, .dst = 1, .dst_count = 1, .after = -1, .bytes = 128},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct rf_transfer *tr = malloc(sizeof(*tr));
        *tr = bad[i];
        struct rf_plan p = {.tensors = ts,
                            .n_tensors = 1,
                            .boxes = boxes,
                            .n_boxes = 1,
                            .transfers = tr,
                            .n_transfers = 1};
        struct rf_error err;
        assert_int_equal(
            rf_schedule(&p, &(struct rf_schedule_opts){.staging_bytes = 1 << 20}, &err), RF_EINVAL);
        assert_string_equal(err.msg, "transfer 0: GPUs, bytes or box outside the plan's ranges");
        free(p.transfers);
    }
}

/* A GPU's usage changes form as it fills (sim/schedule.c: dense while it is busy in most
 * rounds it spans, sparse when it reaches far past them) and keeps every byte through each
 * change: first fit answers as it would over one count per round. GPU 0 sends 700 of 1000
 * bytes in each of rounds 0..19 (dense from 16 on), then 100 bytes to GPU 2, which 300
 * sources fill until round 300 (GPU 0 turns sparse to reach it), then 700 bytes 5 times
 * (rounds 20..24, past its 20 busy rounds), 250 bytes (still room in round 0: 950) and 300
 * bytes (round 0 is full for it, round 1 not: its 700 survived both changes). */
/* A plan of one tensor's n boxes and runs, as given, scheduled under budget. */
static struct rf_plan scheduled(struct rf_tensor *ts, struct rf_plan_box *boxes,
                                struct rf_transfer *tr, size_t n, int64_t budget)
{
    struct rf_plan p = {.tensors = ts,
                        .n_tensors = 1,
                        .boxes = boxes,
                        .n_boxes = n,
                        .transfers = tr,
                        .n_transfers = n};
    struct rf_error err;
    assert_int_equal(rf_schedule(&p, &(struct rf_schedule_opts){.staging_bytes = budget}, &err), 0);
    return p;
}

static void usage_keeps_its_rounds_through_each_form(void **state)
{
    (void)state;
    enum { N = 328 };
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 64, 0, 0)};
    struct rf_plan_box *boxes = calloc(N, sizeof(*boxes));
    struct rf_transfer *tr = calloc(N, sizeof(*tr));
    int32_t want[N];
    size_t n = 0;
    for (int32_t i = 0; i < 20; i++, n++) {
        tr[n] = (struct rf_transfer){.src = 0, .dst = 10 + i, .bytes = 700};
        want[n] = i;
    }
    for (int32_t j = 0; j < 300; j++, n++) {
        tr[n] = (struct rf_transfer){.src = 100 + j, .dst = 2, .bytes = 1000};
        want[n] = j;
    }
    tr[n] = (struct rf_transfer){.src = 0, .dst = 2, .bytes = 100};
    want[n++] = 300;
    for (int32_t k = 0; k < 5; k++, n++) {
        tr[n] = (struct rf_transfer){.src = 0, .dst = 30 + k, .bytes = 700};
        want[n] = 20 + k;
    }
    tr[n] = (struct rf_transfer){.src = 0, .dst = 40, .bytes = 250};
    want[n++] = 0;
    tr[n] = (struct rf_transfer){.src = 0, .dst = 41, .bytes = 300};
    want[n++] = 1;
    assert_int_equal(n, N);
    for (size_t i = 0; i < N; i++) {
        tr[i].box = (int32_t)i;
        tr[i].dst_count = 1;
        tr[i].after = -1;
        boxes[i] = (struct rf_plan_box){.tensor = 0, .box = {.off = {0}, .len = {64, 1, 1, 1}}};
    }
    struct rf_transfer ref[N];
    memcpy(ref, tr, sizeof(ref));
    struct rf_plan p = scheduled(ts, boxes, tr, N, 1000);
    assert_int_equal(p.n_transfers, N);
    /* The runs come out in placement order; each (source, destination) is one of them. */
    for (size_t i = 0; i < N; i++) {
        const struct rf_transfer *t = &p.transfers[i];
        size_t k = 0;
        while (k < N && !(ref[k].src == t->src && ref[k].dst == t->dst))
            k++;
        assert_true(k < N);
        assert_int_equal(t->round, want[k]);
    }
    assert_int_equal(p.n_rounds, 301);
    check_budget(&p, 1000);
    free(p.transfers);
    free(boxes);
}

/* First fit replayed densely over random runs: hundreds of rounds per GPU, most of them
 * nearly full, so the dense usage's block minimums (sim/schedule.c) skip blocks, and every
 * run must still land in the first round where its source and destination both have room. */
static void runs_take_their_first_fitting_round(void **state)
{
    (void)state;
    enum { N = 4000, GPUS = 12, BUDGET = 1000 };
    struct rf_tensor ts[] = {tensor("w", RF_CLASS_REPLICATED, RF_ROLE_NORM, 0, 64, 0, 0)};
    seed_rng();
    for (int iter = 0; iter < 4; iter++) {
        struct rf_plan_box *boxes = calloc(N, sizeof(*boxes));
        struct rf_transfer *tr = calloc(N, sizeof(*tr));
        int32_t src[N], dst[N];
        int64_t bytes;
        for (int32_t i = 0; i < N; i++) {
            /* Skewed: GPU 0 sends a third of the runs; sizes from tiny to the budget. */
            src[i] = rnd() % 3 == 0 ? 0 : (int32_t)(rnd() % 6);
            dst[i] = 6 + (int32_t)(rnd() % 6);
            bytes = rnd() % 10 == 0 ? 1 + (int64_t)(rnd() % 20) : 1 + (int64_t)(rnd() % BUDGET);
            tr[i] = (struct rf_transfer){.box = i,
                                         .src = src[i],
                                         .dst = dst[i],
                                         .dst_count = 1,
                                         .after = -1,
                                         .bytes = bytes};
            boxes[i] = (struct rf_plan_box){.tensor = 0, .box = {.len = {64, 1, 1, 1}}};
        }
        struct rf_plan p = scheduled(ts, boxes, tr, N, BUDGET);
        assert_int_equal(p.n_transfers, N);
        /* The runs come out in placement order (interleaved by box): replayed in it. */
        int64_t *use = calloc((size_t)N * GPUS * 2, sizeof(int64_t)); /* [round][gpu][dir] */
        int32_t rounds = 0;
        for (size_t i = 0; i < N; i++) {
            const struct rf_transfer *t = &p.transfers[i];
            int32_t b = t->box, r = 0;
            assert_int_equal(t->src, src[b]);
            assert_int_equal(t->dst, dst[b]);
            while (use[((size_t)r * GPUS + (size_t)t->src) * 2] + t->bytes > BUDGET ||
                   use[((size_t)r * GPUS + (size_t)t->dst) * 2 + 1] + t->bytes > BUDGET)
                r++;
            if (t->round != r)
                fail_msg("run %d (%d -> %d, %lld bytes): round %d, first fit %d", b, t->src, t->dst,
                         (long long)t->bytes, t->round, r);
            use[((size_t)r * GPUS + (size_t)t->src) * 2] += t->bytes;
            use[((size_t)r * GPUS + (size_t)t->dst) * 2 + 1] += t->bytes;
            if (r + 1 > rounds)
                rounds = r + 1;
        }
        assert_true(rounds > 2 * 64); /* past several blocks of the dense usage */
        assert_int_equal(p.n_rounds, rounds);
        free(use);
        free(p.transfers);
        free(boxes);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(four_transfers_two_rounds),
        cmocka_unit_test(oversized_transfer_is_alone),
        cmocka_unit_test(broadcast_follows_its_gather),
        cmocka_unit_test(dependent_transfer_waits),
        cmocka_unit_test(relays_spill_past_the_stream_window),
        cmocka_unit_test(long_runs_are_split_to_fit),
        cmocka_unit_test(random_plans_respect_the_budget),
        cmocka_unit_test(broadcasts_take_their_first_fitting_round),
        cmocka_unit_test(tiny_boxes_under_a_huge_budget_stay_one_run),
        cmocka_unit_test(budgets_near_int64_max_do_not_wrap),
        cmocka_unit_test(plans_naming_bad_gpus_are_refused),
        cmocka_unit_test(usage_keeps_its_rounds_through_each_form),
        cmocka_unit_test(runs_take_their_first_fitting_round),
    };
    return cmocka_run_group_tests_name("schedule", tests, NULL, NULL);
}
