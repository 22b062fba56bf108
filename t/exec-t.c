/* Executor pieces that need no MPI world: box copies and linear ranges (pack and unpack in
 * pieces), the pattern and its FP8 emulation, fault parsing and checking, each rank's part of a
 * plan and its memory need, known before anything is allocated, the relay contract, and the
 * steps of a pipelined round, replayed rank after rank in one process; the GPU kernels'
 * per-element arithmetic (pattern_math.h) against the host fill and check, the estimate of
 * NCCL's connection buffers, and the replay's queueing (one round ahead) and timing errors.
 * Property tests print their seed; REFIT_SEED=N repeats one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "boxcopy.h"
#include "fixtures.h"
#include "nccl_mem.h"
#include "part.h"
#include "pattern.h"
#include "replay.h"
#include "schedule.h"

static unsigned seed;

static int64_t rnd(int64_t lo, int64_t hi) /* inclusive */
{
    return lo + (int64_t)(rand() % (int)(hi - lo + 1));
}

/* A random tensor shape of ndim dims and a random non-empty box inside it. */
static void random_box(int ndim, int64_t *shape, struct rf_box *b)
{
    for (int d = 0; d < RF_MAX_DIMS; d++) {
        if (d >= ndim) {
            shape[d] = 1;
            b->off[d] = 0;
            b->len[d] = 1;
            continue;
        }
        shape[d] = rnd(1, 7);
        b->off[d] = rnd(0, shape[d] - 1);
        b->len[d] = rnd(1, shape[d] - b->off[d]);
    }
}

static int64_t linear(const int64_t *shape, int ndim, const int64_t *c)
{
    int64_t g = 0;
    for (int d = 0; d < ndim; d++)
        g = g * shape[d] + c[d];
    return g;
}

/* Row-major coordinates of element j of box b. */
static void coord_in(const struct rf_box *b, int ndim, int64_t j, int64_t *c)
{
    for (int d = ndim - 1; d >= 0; d--) {
        c[d] = b->off[d] + j % b->len[d];
        j /= b->len[d];
    }
}

static void range_boxes_cover_the_range_in_order(void **state)
{
    (void)state;
    for (int iter = 0; iter < 2000; iter++) {
        int ndim = (int)rnd(1, 4);
        int64_t shape[RF_MAX_DIMS], c[RF_MAX_DIMS], want[RF_MAX_DIMS];
        struct rf_box b, q[RF_RANGE_BOXES];
        random_box(ndim, shape, &b);
        int64_t n = rf_box_numel(&b, ndim);
        int64_t lo = rnd(0, n - 1), hi = rnd(lo, n);
        int nq = rf_range_boxes(&b, ndim, lo, hi, q);
        assert_true(nq <= 2 * ndim - 1);
        int64_t j = lo;
        for (int k = 0; k < nq; k++) {
            int64_t m = rf_box_numel(&q[k], ndim);
            assert_true(m > 0);
            for (int64_t e = 0; e < m; e++, j++) {
                coord_in(&q[k], ndim, e, c);
                coord_in(&b, ndim, j, want);
                assert_memory_equal(c, want, sizeof(int64_t) * (size_t)ndim);
            }
        }
        assert_int_equal(j, hi);
    }
}

static void copies_merge_contiguous_dims(void **state)
{
    (void)state;
    struct rf_box whole = {{0, 0, 0, 0}, {4, 6, 8, 1}};
    struct rf_box rows = {{1, 0, 0, 0}, {2, 6, 8, 1}};  /* whole rows: one run */
    struct rf_box inner = {{1, 2, 0, 0}, {2, 3, 8, 1}}; /* 2 x (3 rows of 8) */
    struct rf_box col = {{0, 0, 5, 0}, {4, 6, 1, 1}};   /* one element per row */
    struct rf_view a, b;
    struct rf_copy c;
    rf_view_of_box(&a, &whole, 3);
    rf_view_of_box(&b, &rows, 3);
    rf_copy_make(&c, &b, &a, &rows, 3, 2);
    assert_int_equal(c.ndim, 1);
    assert_int_equal(c.count[0], 96);
    assert_int_equal(c.src_off, 48);
    assert_int_equal(c.dst_off, 0);
    rf_view_of_box(&b, &inner, 3);
    rf_copy_make(&c, &b, &a, &inner, 3, 2);
    assert_int_equal(c.ndim, 2);
    assert_int_equal(c.count[0], 2);
    assert_int_equal(c.count[1], 24);
    assert_int_equal(c.src_stride[0], 48);
    assert_int_equal(c.dst_stride[0], 24);
    rf_view_of_box(&b, &col, 3);
    rf_copy_make(&c, &b, &a, &col, 3, 4);
    /* 24 runs of one element: the 1-element innermost dim stays (it is the run), the two
     * outer dims merge since rows follow rows on both sides. */
    assert_int_equal(c.ndim, 2);
    assert_int_equal(c.count[0], 24);
    assert_int_equal(c.count[1], 1);
    assert_int_equal(c.src_stride[0], 8);
    assert_int_equal(c.dst_stride[0], 1);
    assert_int_equal(rf_copy_numel(&c), 24);
}

/* Fills a buffer holding box `lay` with the global indices of its elements. */
static int64_t *indexed(const int64_t *shape, int ndim, const struct rf_box *lay)
{
    int64_t n = rf_box_numel(lay, ndim), c[RF_MAX_DIMS];
    int64_t *v = malloc(sizeof(int64_t) * (size_t)n);
    for (int64_t j = 0; j < n; j++) {
        coord_in(lay, ndim, j, c);
        v[j] = linear(shape, ndim, c);
    }
    return v;
}

/* Packs `region` out of a buffer of layout `src` in pieces of `piece` elements (as the
 * replay does: each piece a linear range, each range a few boxes), unpacks every piece into
 * a buffer of layout `dst`, and checks that exactly the region arrived. */
static void roundtrip(const int64_t *shape, int ndim, const struct rf_box *src,
                      const struct rf_box *dst, const struct rf_box *region, int64_t piece)
{
    int64_t *a = indexed(shape, ndim, src);
    int64_t nd = rf_box_numel(dst, ndim), n = rf_box_numel(region, ndim), c[RF_MAX_DIMS];
    int64_t *b = malloc(sizeof(int64_t) * (size_t)nd);
    int64_t *stage = malloc(sizeof(int64_t) * (size_t)piece);
    struct rf_view sv, dv, qv;
    struct rf_box q[RF_RANGE_BOXES];
    struct rf_copy cp;
    for (int64_t j = 0; j < nd; j++)
        b[j] = -1;
    rf_view_of_box(&sv, src, ndim);
    rf_view_of_box(&dv, dst, ndim);
    for (int64_t lo = 0; lo < n; lo += piece) {
        int64_t hi = lo + piece < n ? lo + piece : n, at = 0;
        int nq = rf_range_boxes(region, ndim, lo, hi, q);
        for (int k = 0; k < nq; k++) {
            rf_view_of_box(&qv, &q[k], ndim);
            rf_copy_make(&cp, &qv, &sv, &q[k], ndim, sizeof(int64_t));
            rf_copy_host(stage + at, a, &cp);
            at += rf_box_numel(&q[k], ndim);
        }
        assert_int_equal(at, hi - lo);
        at = 0;
        for (int k = 0; k < nq; k++) {
            rf_view_of_box(&qv, &q[k], ndim);
            rf_copy_make(&cp, &dv, &qv, &q[k], ndim, sizeof(int64_t));
            rf_copy_host(b, stage + at, &cp);
            at += rf_box_numel(&q[k], ndim);
        }
    }
    for (int64_t j = 0; j < nd; j++) {
        coord_in(dst, ndim, j, c);
        bool in = true;
        for (int d = 0; d < ndim; d++)
            in &= c[d] >= region->off[d] && c[d] < region->off[d] + region->len[d];
        assert_int_equal(b[j], in ? linear(shape, ndim, c) : -1);
    }
    free(a);
    free(b);
    free(stage);
}

static void boxes_survive_pack_and_unpack_in_pieces(void **state)
{
    (void)state;
    for (int iter = 0; iter < 1000; iter++) {
        int ndim = (int)rnd(1, 4);
        int64_t shape[RF_MAX_DIMS];
        struct rf_box src, dst, region;
        random_box(ndim, shape, &src);
        /* A destination box and a region inside both, from src's box. */
        dst = src;
        region = src;
        for (int d = 0; d < ndim; d++) {
            dst.off[d] = rnd(0, src.off[d]);
            dst.len[d] = rnd(src.off[d] + src.len[d], shape[d]) - dst.off[d];
            region.off[d] = rnd(src.off[d], src.off[d] + src.len[d] - 1);
            region.len[d] = rnd(1, src.off[d] + src.len[d] - region.off[d]);
        }
        roundtrip(shape, ndim, &src, &dst, &region, rnd(1, rf_box_numel(&region, ndim) + 2));
    }
}

/* A broadcast piece is a linear range of the whole tensor; a member unpacks what of its
 * shard the piece covers. All pieces together fill the shard exactly. */
static void broadcast_pieces_fill_a_shard(void **state)
{
    (void)state;
    for (int iter = 0; iter < 500; iter++) {
        int ndim = (int)rnd(1, 4);
        int64_t shape[RF_MAX_DIMS], c[RF_MAX_DIMS];
        struct rf_box shard, whole, q[RF_RANGE_BOXES], cut;
        random_box(ndim, shape, &shard);
        for (int d = 0; d < RF_MAX_DIMS; d++) {
            whole.off[d] = 0;
            whole.len[d] = shape[d];
        }
        int64_t n = rf_box_numel(&whole, ndim), ns = rf_box_numel(&shard, ndim);
        int64_t piece = rnd(1, n);
        int64_t *full = indexed(shape, ndim, &whole);
        int64_t *got = calloc((size_t)ns, sizeof(int64_t));
        struct rf_view dv, sv;
        struct rf_copy cp;
        rf_view_of_box(&dv, &shard, ndim);
        for (int64_t lo = 0; lo < n; lo += piece) {
            int64_t hi = lo + piece < n ? lo + piece : n;
            rf_view_of_range(&sv, shape, ndim, lo);
            int nq = rf_range_boxes(&whole, ndim, lo, hi, q);
            for (int k = 0; k < nq; k++)
                if (rf_box_intersect(&q[k], &shard, ndim, &cut)) {
                    rf_copy_make(&cp, &dv, &sv, &cut, ndim, sizeof(int64_t));
                    rf_copy_host(got, full + lo, &cp);
                }
        }
        for (int64_t j = 0; j < ns; j++) {
            coord_in(&shard, ndim, j, c);
            assert_int_equal(got[j], linear(shape, ndim, c));
        }
        free(full);
        free(got);
    }
}

static void pattern_checks_every_element(void **state)
{
    (void)state;
    int64_t shape[RF_MAX_DIMS] = {5, 7, 3, 1};
    struct rf_box box = {{1, 2, 0, 0}, {3, 4, 3, 1}};
    int64_t n = rf_box_numel(&box, 3), first = -1;
    size_t sizes[] = {1, 2, 4};
    for (size_t k = 0; k < 3; k++) {
        size_t e = sizes[k];
        struct rf_pattern_buf pb = {7, 3, shape, &box, e, false};
        uint8_t *buf = malloc((size_t)n * e);
        rf_pattern_fill(buf, &pb, 0, n, false);
        first = -1;
        assert_int_equal(rf_pattern_check(buf, &pb, 0, n, &first), 0);
        assert_int_equal(first, -1);
        /* Filled in two halves = filled at once. */
        rf_pattern_fill(buf + 10 * e, &pb, 10, n, false);
        rf_pattern_fill(buf, &pb, 0, 10, false);
        assert_int_equal(rf_pattern_check(buf, &pb, 0, n, &first), 0);
        buf[17 * e] ^= 0x40;
        assert_int_equal(rf_pattern_check(buf, &pb, 0, n, &first), 1);
        assert_int_equal(first, 17);
        rf_pattern_fill(buf, &pb, 0, n, true);
        assert_int_equal(rf_pattern_check(buf, &pb, 0, n, &first), n);
        free(buf);
    }
    /* Another tensor's pattern differs; an FP8 element is the conversion of the BF16 one,
     * whether taken from the pattern or converted by a root. */
    struct rf_pattern_buf p2 = {3, 3, shape, &box, 2, false}, p8 = {3, 3, shape, &box, 1, false};
    uint16_t *wide = malloc((size_t)n * 2);
    uint8_t *narrow = malloc((size_t)n);
    rf_pattern_fill(wide, &p2, 0, n, false);
    rf_fp8_narrow(narrow, (const uint8_t *)wide, n);
    first = -1;
    assert_int_equal(rf_pattern_check(narrow, &p8, 0, n, &first), 0);
    struct rf_pattern_buf other = {4, 3, shape, &box, 2, false};
    assert_true(rf_pattern_check(wide, &other, 0, n, &first) > n * 9 / 10);
    for (int64_t i = 0; i < 1000; i++)
        assert_int_equal(rf_pattern_value(9, i, 1),
                         rf_fp8_of_bf16((uint16_t)rf_pattern_value(9, i, 2)));
    free(wide);
    free(narrow);
}

/* A 4-bit wire's packed pairs: the root's conversion of gathered BF16 pairs is the pattern
 * of the packed bytes, each byte two elements of the logical tensor, the lower nibble first;
 * and a byte whose one nibble is wrong is caught. */
static void packed_pairs_convert_to_their_pattern(void **state)
{
    (void)state;
    /* The packed view of a [4, 10] tensor: [4, 5] pairs; a box of rows 1-2, pairs 1-3. */
    int64_t shape[RF_MAX_DIMS] = {4, 5, 1, 1};
    struct rf_box box = {{1, 1, 0, 0}, {2, 3, 1, 1}};
    int64_t n = rf_box_numel(&box, 2), first = -1;
    struct rf_pattern_buf pairs = {5, 2, shape, &box, 4, true}, fp4 = {5, 2, shape, &box, 1, true};
    uint32_t *wide = malloc((size_t)n * 4);
    uint8_t *narrow = malloc((size_t)n);
    rf_pattern_fill(wide, &pairs, 0, n, false);
    /* Pair (row 1, pair 1) is elements 1 * 10 + 2 and + 3 of the logical tensor. */
    assert_int_equal(wide[0], rf_pattern_value(5, 12, 2) | rf_pattern_value(5, 13, 2) << 16);
    rf_fp4_narrow(narrow, (const uint8_t *)wide, n);
    assert_int_equal(narrow[0], rf_fp4_of_bf16((uint16_t)rf_pattern_value(5, 12, 2)) |
                                    rf_fp4_of_bf16((uint16_t)rf_pattern_value(5, 13, 2)) << 4);
    assert_int_equal(rf_pattern_check(narrow, &fp4, 0, n, &first), 0);
    narrow[4] ^= 0x10;
    assert_int_equal(rf_pattern_check(narrow, &fp4, 0, n, &first), 1);
    assert_int_equal(first, 4);
    free(wide);
    free(narrow);
}

static void fault_injection_is_parsed(void **state)
{
    (void)state;
    struct rf_fault f;
    struct rf_error err;
    assert_int_equal(rf_fault_parse(NULL, &f, &err), 0);
    assert_int_equal(f.kind, RF_FAULT_NONE);
    assert_int_equal(rf_fault_parse("3:hang", &f, &err), 0);
    assert_int_equal(f.kind, RF_FAULT_HANG);
    assert_int_equal(f.rank, 3);
    assert_int_equal(f.round, -1);
    assert_int_equal(rf_fault_parse("0:corrupt:4", &f, &err), 0);
    assert_int_equal(f.kind, RF_FAULT_CORRUPT);
    assert_int_equal(f.round, 4);
    assert_int_equal(rf_fault_parse("1:crash", &f, &err), 0);
    assert_int_equal(f.kind, RF_FAULT_CRASH);
    assert_int_equal(rf_fault_parse("x:crash", &f, &err), RF_EINVAL);
    assert_int_equal(rf_fault_parse("1:crash:", &f, &err), RF_EINVAL);
    assert_int_equal(rf_fault_parse("1:melt", &f, &err), RF_EINVAL);
    assert_string_equal(err.msg, "REFIT_EXEC_FAULT=1:melt: unknown kind 'melt' (crash, hang or "
                                 "corrupt)");
    /* Nothing before, between or after the fields: a typo never injects nothing. */
    const char *garbage[] = {"1:crash:2x", "1:crash:1:2",      " 1:crash", "1:crash ",
                             "-1:crash",   "99999999999:hang", "1:",       ":crash",
                             "1:Crash",    "1:crash:-1"};
    for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
        char want[160];
        assert_int_equal(rf_fault_parse(garbage[i], &f, &err), RF_EINVAL);
        assert_int_equal(f.kind, RF_FAULT_NONE);
        snprintf(want, sizeof(want),
                 "REFIT_EXEC_FAULT=%s: expected RANK:KIND[:ROUND], KIND one of crash, hang, "
                 "corrupt",
                 garbage[i]);
        assert_string_equal(err.msg, want);
    }
}

/* A fault that cannot fire as asked in this job is refused. */
static void impossible_faults_are_refused(void **state)
{
    (void)state;
    struct rf_fault f;
    struct rf_error err;
    assert_int_equal(rf_fault_parse("3:crash", &f, &err), 0);
    assert_int_equal(rf_fault_check(&f, "3:crash", 4, 4, 5, 7, &err), 0);
    assert_int_equal(rf_fault_check(&f, "3:crash", 3, 3, 5, 7, &err), RF_EINVAL);
    assert_string_equal(err.msg, "REFIT_EXEC_FAULT=3:crash: rank 3 is not in this world of 3 "
                                 "ranks (0 to 2)");
    assert_int_equal(rf_fault_parse("1:hang:5", &f, &err), 0);
    assert_int_equal(rf_fault_check(&f, "1:hang:5", 2, 2, 5, 7, &err), RF_EINVAL);
    assert_string_equal(err.msg, "REFIT_EXEC_FAULT=1:hang:5: run 7 has 5 rounds (0 to 4), not "
                                 "round 5");
    assert_int_equal(rf_fault_check(&f, "1:hang:5", 2, 2, 6, 7, &err), 0);
    assert_int_equal(rf_fault_parse("2:corrupt", &f, &err), 0);
    assert_int_equal(rf_fault_check(&f, "2:corrupt", 3, 2, 6, 7, &err), RF_EINVAL);
    assert_string_equal(err.msg, "REFIT_EXEC_FAULT=2:corrupt: rank 2 plays no GPU of run 7 (it "
                                 "spans 2): it has nothing to corrupt");
    assert_int_equal(rf_fault_parse(NULL, &f, &err), 0);
    assert_int_equal(rf_fault_check(&f, NULL, 1, 1, 0, 7, &err), 0);
}

/* A planned and scheduled run, kept as rf_store_load_run would return it. */
struct planned {
    struct rf_tensor ts[4];
    struct rf_model m;
    struct rf_stored_run run;
};

static void plan_fixture(struct planned *f, enum rf_strategy strategy, enum rf_dtype infer_dt,
                         int64_t staging)
{
    struct rf_error err;
    f->ts[0] = tensor("embed", RF_CLASS_VOCAB, RF_ROLE_EMBEDDING, -1, 300, 256, 0);
    f->ts[1] = tensor("q", RF_CLASS_COLUMN, RF_ROLE_ATTENTION, 0, 256, 256, 0);
    f->ts[2] = tensor("experts", RF_CLASS_EXPERT_COLUMN, RF_ROLE_EXPERT, 1, 8, 128, 256);
    f->ts[3] = tensor("norm", RF_CLASS_REPLICATED, RF_ROLE_NORM, 2, 256, 0, 0);
    for (int i = 0; i < 3; i++)
        f->ts[i].quant = true;
    f->m = (struct rf_model){.name = "m", .layers = 2, .tensors = f->ts, .n_tensors = 4};
    memset(&f->run, 0, sizeof(f->run));
    f->run.id = 1;
    f->run.train = train_side(2, 1, 2, 1, 2, 1, false, 0, 2);
    f->run.infer = infer_side(2, 1, 1, 2, 2, 4, 2, infer_dt);
    assert_int_equal(rf_plan_build(&f->run.plan, &f->m, &f->run.train, &f->run.infer, strategy,
                                   NULL, NULL, &err),
                     0);
    assert_int_equal(
        rf_schedule(&f->run.plan, &(struct rf_schedule_opts){.staging_bytes = staging}, &err), 0);
}

static void plan_fixture_release(struct planned *f)
{
    rf_plan_release(&f->run.plan);
    rf_side_release(&f->run.train);
    rf_side_release(&f->run.infer);
}

/* Each rank's part: the bytes the part counts are the planner's, every transfer reaches its
 * sender and each of its receivers, and each broadcast every member. */
static void parts_agree_with_the_plan(void **state)
{
    (void)state;
    enum rf_strategy strategies[] = {RF_STRAT_RESHARD, RF_STRAT_BROADCAST};
    enum rf_dtype dts[] = {RF_DT_BF16, RF_DT_FP8};
    for (int s = 0; s < 2; s++)
        for (int d = 0; d < 2; d++) {
            struct planned f;
            struct rf_part p;
            struct rf_error err;
            plan_fixture(&f, strategies[s], dts[d], 100000);
            assert_int_equal(rf_part_derive(&p, &f.run, &err), 0);
            assert_int_equal(p.n_gpus, 8);
            assert_int_equal(rf_part_gpus(&f.run), 8);
            assert_int_equal(p.payload_bytes, f.run.plan.total.payload_bytes);
            assert_int_equal(p.moved_bytes, f.run.plan.total.moved_bytes);
            assert_int_equal(p.n_groups, strategies[s] == RF_STRAT_BROADCAST ? 1 : 0);
            for (size_t i = 0; i < p.n_tensors; i++) {
                const struct rf_part_tensor *pt = &p.tensors[i];
                bool bcast = strategies[s] == RF_STRAT_BROADCAST;
                assert_int_equal(pt->wire_elem, (int)rf_dtype_size(f.run.plan.wire_dtype[i]));
                /* FP8: reshard senders pack FP8; broadcast gathers BF16 for the root. */
                if (bcast && f.run.plan.tensors[i].scale_of < 0)
                    assert_int_equal(pt->gather_elem,
                                     (int)rf_dtype_size(f.run.plan.tensors[i].dtype));
                if (!bcast)
                    assert_int_equal(pt->train_elem, pt->wire_elem);
            }
            int64_t touches = 0, members = 0;
            for (int r = 0; r < p.n_gpus; r++) {
                struct rf_part_transfer *t;
                struct rf_part_collective *c;
                size_t nt, nc;
                assert_int_equal(rf_part_select(&p, r, &t, &nt, &c, &nc, &err), 0);
                for (size_t k = 0; k < nt; k++) {
                    assert_true(t[k].src == r || rf_part_transfer_has_dst(&t[k], r));
                    assert_true(k == 0 || t[k].id > t[k - 1].id);
                }
                for (size_t k = 0; k < nc; k++)
                    assert_true(rf_part_group_has(&p.groups[c[k].group], r));
                touches += (int64_t)nt;
                members += (int64_t)nc;
                free(t);
                free(c);
            }
            int64_t want = 0, want_members = 0;
            for (size_t k = 0; k < f.run.plan.n_transfers; k++) {
                const struct rf_transfer *t = &f.run.plan.transfers[k];
                bool src_is_dst = false;
                for (int32_t i = 0; i < t->dst_count; i++)
                    src_is_dst |= t->dst + i * t->dst_stride == t->src;
                want += t->dst_count + (src_is_dst ? 0 : 1);
            }
            for (size_t k = 0; k < f.run.plan.n_collectives; k++)
                want_members += f.run.plan.collectives[k].gpu_count + 1; /* root is not infer */
            assert_int_equal(touches, want);
            assert_int_equal(members, want_members);
            rf_part_release(&p);
            plan_fixture_release(&f);
        }
}

static void a_relay_reads_what_landed_earlier(void **state)
{
    (void)state;
    struct planned f;
    struct rf_part p;
    struct rf_error err;
    plan_fixture(&f, RF_STRAT_RESHARD, RF_DT_BF16, 1 << 20);
    /* Make transfer 1 forward what transfer 0 delivered, one round later. */
    struct rf_transfer *t = f.run.plan.transfers;
    t[0].dst_count = 1;
    t[1] = t[0];
    t[1].src = t[0].dst;
    t[1].dst = t[0].dst == 7 ? 6 : 7;
    t[1].after = 0;
    t[1].round = t[0].round + 1;
    f.run.plan.n_rounds =
        t[1].round + 1 > f.run.plan.n_rounds ? t[1].round + 1 : f.run.plan.n_rounds;
    assert_int_equal(rf_part_derive(&p, &f.run, &err), 0);
    assert_int_equal(p.transfers[1].src_buf, RF_BUF_INFER);
    assert_int_equal(p.transfers[0].src_buf, RF_BUF_TRAIN);
    rf_part_release(&p);
    /* One that depends on a transfer that did not deliver to its sender is refused. */
    t[1].src = t[0].src == 0 ? 1 : 0;
    assert_int_equal(rf_part_derive(&p, &f.run, &err), RF_EINVAL);
    assert_non_null(strstr(err.msg, "depends on transfer 0"));
    plan_fixture_release(&f);
}

/* A backend that only counts what is allocated. */
static int64_t fake_allocs, fake_bytes;

static int fake_alloc(struct rf_backend *b, void **ptr, size_t bytes, struct rf_error *err)
{
    fake_allocs++;
    fake_bytes += (int64_t)bytes;
    *ptr = calloc(1, bytes ? bytes : 1);
    return *ptr ? 0 : rf_error_set(err, RF_ENOMEM, "out of memory");
}

static void fake_free(struct rf_backend *b, void *ptr)
{
    free(ptr);
}

static int fake_timers(struct rf_backend *b, int n, struct rf_error *err)
{
    return 0;
}

/* The replay sizes every buffer before it allocates any, so refit-exec can refuse a
 * replay that does not fit: rf_replay_new allocates nothing, rf_replay_memory says what
 * rf_replay_alloc then takes, and over all ranks the inference shards hold every replica. */
static void memory_is_known_before_it_is_allocated(void **state)
{
    (void)state;
    struct planned f;
    struct rf_part p;
    struct rf_error err;
    struct rf_backend be = {
        .name = "fake", .alloc = fake_alloc, .free = fake_free, .timers = fake_timers};
    plan_fixture(&f, RF_STRAT_BROADCAST, RF_DT_BF16, 4096);
    assert_int_equal(rf_part_derive(&p, &f.run, &err), 0);
    int64_t infer = 0, root = 0;
    for (int r = 0; r < p.n_gpus; r++) {
        struct rf_replay *rp;
        struct rf_replay_need need;
        fake_allocs = fake_bytes = 0;
        if (rf_replay_new(&rp, &p, r, &be, &err) < 0)
            fail_msg("rank %d: %s", r, err.msg);
        assert_int_equal(fake_allocs, 0);
        rf_replay_memory(rp, &need);
        assert_int_equal(rf_replay_alloc(rp, &err), 0);
        assert_int_equal(fake_bytes, need.train + need.infer + need.root + need.staging);
        assert_true(need.staging <= 2 * 4096 + 256);
        infer += need.infer;
        root += need.root;
        rf_replay_free(rp);
    }
    int64_t want = 0;
    for (size_t i = 0; i < f.run.plan.n_tensors; i++)
        want += rf_tensor_numel(&f.run.plan.tensors[i]) *
                (int64_t)rf_dtype_size(f.run.plan.wire_dtype[i]);
    /* Each replica holds every element at least once (replicated tensors once per rank). */
    assert_true(infer >= want * f.run.infer.replicas);
    assert_true(infer < 2 * want * f.run.infer.replicas);
    assert_true(root > 0);
    rf_part_release(&p);
    plan_fixture_release(&f);
}

/* A world of ranks in one process, for replays run one rank after another in an order in
 * which every sender runs before its receivers: a send is posted with a copy of its bytes,
 * a receive takes the oldest matching send of its pair, which must have been posted in the
 * same round and step (read from the control plane's `where`, as a timeout would name it). */
struct posted {
    int src, dst;
    int32_t round, step;
    size_t bytes;
    const void *from; /* the sender's staging */
    uint8_t *data;
    bool taken;
};
static struct posted *mail;
static size_t n_mail;
static int world_rank;

static int host_upload(struct rf_backend *b, void *dev, const void *host, size_t bytes,
                       struct rf_error *err)
{
    memcpy(dev, host, bytes);
    return 0;
}

static int host_download(struct rf_backend *b, void *host, const void *dev, size_t bytes,
                         struct rf_error *err)
{
    memcpy(host, dev, bytes);
    return 0;
}

static int host_copy(struct rf_backend *b, void *dst, const void *src, const struct rf_copy *c,
                     struct rf_error *err)
{
    rf_copy_host(dst, src, c);
    return 0;
}

static int host_nothing(struct rf_backend *b, struct rf_error *err)
{
    return 0;
}

static int host_mark(struct rf_backend *b, int i, struct rf_error *err)
{
    return 0;
}

static int host_elapsed(struct rf_backend *b, int from, int to, double *seconds,
                        struct rf_error *err)
{
    *seconds = 0;
    return 0;
}

static int mail_exchange(struct rf_backend *b, const struct rf_xfer *sends, size_t n_sends,
                         const struct rf_xfer *recvs, size_t n_recvs, struct rf_error *err)
{
    int32_t round = -1, step = -1;
    if (sscanf(b->ctl->where, "round %d, step %d", &round, &step) != 2)
        return rf_error_set(err, RF_EINVAL, "no round and step in '%s'", b->ctl->where);
    for (size_t i = 0; i < n_sends; i++) {
        mail = realloc(mail, (n_mail + 1) * sizeof(*mail));
        mail[n_mail] = (struct posted){.src = world_rank,
                                       .dst = sends[i].peer,
                                       .round = round,
                                       .step = step,
                                       .bytes = sends[i].bytes,
                                       .from = sends[i].buf,
                                       .data = malloc(sends[i].bytes + 1)};
        memcpy(mail[n_mail].data, sends[i].buf, sends[i].bytes);
        n_mail++;
    }
    for (size_t i = 0; i < n_recvs; i++) {
        struct posted *m = NULL;
        for (size_t j = 0; j < n_mail && !m; j++)
            if (!mail[j].taken && mail[j].src == recvs[i].peer && mail[j].dst == world_rank)
                m = &mail[j];
        if (!m || m->round != round || m->step != step || m->bytes != recvs[i].bytes)
            return rf_error_set(err, RF_EINVAL,
                                "rank %d receives %zu bytes from rank %d in round %d, step %d; "
                                "it sent %zu in round %d, step %d",
                                world_rank, recvs[i].bytes, recvs[i].peer, round, step,
                                m ? m->bytes : 0, m ? m->round : -1, m ? m->step : -1);
        memcpy(recvs[i].buf, m->data, m->bytes);
        m->taken = true;
    }
    return 0;
}

/* Steps of round `round` in which src sent dst a message, and bytes per step (one value
 * when all agree, else -1); *per_step: most messages of that pair in one step. */
static int32_t mail_steps(int src, int dst, int32_t round, int32_t *first, int32_t *last,
                          int64_t *bytes, int *per_step)
{
    int32_t n = 0;
    *first = *last = -1;
    *bytes = 0;
    *per_step = 0;
    for (size_t j = 0; j < n_mail; j++) {
        const struct posted *m = &mail[j];
        if (m->src != src || m->dst != dst || m->round != round)
            continue;
        int same = 0;
        for (size_t k = 0; k < n_mail; k++)
            same += mail[k].src == src && mail[k].dst == dst && mail[k].round == round &&
                    mail[k].step == m->step;
        *per_step = same > *per_step ? same : *per_step;
        *first = *first < 0 ? m->step : *first;
        *last = m->step;
        *bytes = n == 0 || *bytes == (int64_t)m->bytes ? (int64_t)m->bytes : -1;
        n++;
    }
    return n;
}

/* Replaces the plan's transfers of tensor `tensor` by a chain in a round of its own after
 * the others: its first transfer's source feeds GPU 4 (twice, as two transfers, so the pair
 * has two items in the round), 4 forwards to 5, 5 forwards to 6 and 7 (one run), hops 0, 1,
 * 2. Returns the chain's round. */
static int32_t chain_fixture(struct planned *f, int32_t tensor, int64_t chunk)
{
    struct rf_plan *pl = &f->run.plan;
    struct rf_transfer feed;
    size_t n = 0;
    bool found = false;
    for (size_t k = 0; k < pl->n_transfers; k++) {
        if (pl->boxes[pl->transfers[k].box].tensor != tensor) {
            pl->transfers[n++] = pl->transfers[k];
        } else if (!found) {
            feed = pl->transfers[k];
            found = true;
        }
    }
    assert_true(found);
    assert_int_equal(feed.phase, RF_PHASE_DELIVER);
    pl->transfers = realloc(pl->transfers, (n + 4) * sizeof(*pl->transfers));
    pl->cap_transfers = n + 4;
    int32_t round = pl->n_rounds, k0 = (int32_t)n;
    feed.dst = 4;
    feed.dst_count = 1;
    feed.dst_stride = 0;
    feed.round = round;
    feed.after = -1;
    feed.hop = 0;
    struct rf_transfer t = feed;
    pl->transfers[n++] = feed;
    pl->transfers[n++] = feed;
    t.src = 4, t.dst = 5, t.after = k0, t.hop = 1;
    pl->transfers[n++] = t;
    t.src = 5, t.dst = 6, t.dst_count = 2, t.dst_stride = 1, t.after = k0 + 2, t.hop = 2;
    pl->transfers[n++] = t;
    pl->n_transfers = n;
    pl->n_rounds = round + 1;
    pl->chunk_bytes = chunk;
    return round;
}

/* A pipelined round, replayed: each item is a message of its own (two from one sender to
 * GPU 4 in the same step), in chunk-sized pieces, a message of hop h carrying piece k in
 * step h + k, so every forward sends a piece one step after it landed, from the buffer it
 * landed in; a run's two sends share one packed copy. Every byte arrives. Plain rounds
 * keep one message per pair and step, in staging-sized pieces. */
static void pipelined_rounds_forward_each_piece_a_step_after_it_lands(void **state)
{
    (void)state;
    struct planned f;
    struct rf_part p;
    struct rf_error err;
    struct rf_ctl ctl;
    memset(&ctl, 0, sizeof(ctl));
    struct rf_backend be = {.name = "mail",
                            .ctl = &ctl,
                            .alloc = fake_alloc,
                            .free = fake_free,
                            .upload = host_upload,
                            .download = host_download,
                            .copy = host_copy,
                            .exchange = mail_exchange,
                            .sync = host_nothing,
                            .timers = fake_timers,
                            .mark = host_mark,
                            .wait_mark = host_mark,
                            .elapsed = host_elapsed};
    plan_fixture(&f, RF_STRAT_RESHARD, RF_DT_BF16, 4096);
    /* The final norm: 256 BF16 elements, whole on every inference GPU; 8 pieces of 64. */
    int32_t round = chain_fixture(&f, 3, 64);
    int src = f.run.plan.transfers[f.run.plan.n_transfers - 4].src;
    assert_int_equal(f.run.plan.transfers[f.run.plan.n_transfers - 1].bytes, 512);
    if (rf_part_derive(&p, &f.run, &err) < 0)
        fail_msg("%s", err.msg);
    for (int32_t r = 0; r <= round; r++)
        assert_int_equal(p.pipelined[r], r == round);
    n_mail = 0;
    for (world_rank = 0; world_rank < p.n_gpus; world_rank++) {
        struct rf_replay *rp;
        struct rf_check chk;
        double seconds[64], total;
        assert_true(p.n_rounds <= 64);
        if (rf_replay_new(&rp, &p, world_rank, &be, &err) < 0 || rf_replay_alloc(rp, &err) < 0 ||
            rf_replay_fill(rp, &err) < 0 || rf_replay_poison(rp, &err) < 0 ||
            rf_replay_run(rp, seconds, &total, NULL, &err) < 0 || rf_replay_check(rp, &chk, &err))
            fail_msg("rank %d: %s", world_rank, err.msg);
        assert_int_equal(chk.errors, 0);
        assert_true(world_rank < 4 || chk.bytes > 0);
        rf_replay_free(rp);
    }
    int32_t first, last;
    int64_t bytes;
    int per_step;
    /* The feed's two items: 8 pieces each, steps 0 to 7, two messages a step. */
    assert_int_equal(mail_steps(src, 4, round, &first, &last, &bytes, &per_step), 16);
    assert_int_equal(first, 0);
    assert_int_equal(last, 7);
    assert_int_equal(bytes, 64);
    assert_int_equal(per_step, 2);
    /* Hop 1 a step behind, hop 2 two steps behind. */
    assert_int_equal(mail_steps(4, 5, round, &first, &last, &bytes, &per_step), 8);
    assert_int_equal(first, 1);
    assert_int_equal(last, 8);
    for (int d = 6; d <= 7; d++) {
        assert_int_equal(mail_steps(5, d, round, &first, &last, &bytes, &per_step), 8);
        assert_int_equal(first, 2);
        assert_int_equal(last, 9);
        assert_int_equal(bytes, 64);
    }
    /* The run's sends to 6 and 7 in a step are one packed copy. */
    for (size_t j = 0; j < n_mail; j++)
        for (size_t k = 0; k < n_mail; k++)
            if (mail[j].src == 5 && mail[j].dst == 6 && mail[k].src == 5 && mail[k].dst == 7 &&
                mail[j].round == round && mail[j].step == mail[k].step)
                assert_ptr_equal(mail[j].from, mail[k].from);
    /* Plain rounds: one message per pair and step. */
    for (size_t j = 0; j < n_mail; j++)
        if (mail[j].round < round) {
            mail_steps(mail[j].src, mail[j].dst, mail[j].round, &first, &last, &bytes, &per_step);
            assert_int_equal(per_step, 1);
        }
    for (size_t j = 0; j < n_mail; j++)
        free(mail[j].data);
    free(mail);
    mail = NULL;
    n_mail = 0;
    rf_part_release(&p);
    plan_fixture_release(&f);
}

/* The relay contract (sim/schedule.h) is checked when the part is derived, naming the
 * transfer: a forward's hop is its feed's + 1 in the feed's round, 0 otherwise; a local
 * copy cannot copy what its round is still delivering. */
static void relay_hops_are_checked(void **state)
{
    (void)state;
    struct planned f;
    struct rf_part p;
    struct rf_error err;
    plan_fixture(&f, RF_STRAT_RESHARD, RF_DT_BF16, 4096);
    int32_t round = chain_fixture(&f, 3, 64);
    size_t n = f.run.plan.n_transfers;
    struct rf_transfer *t = f.run.plan.transfers;
    char want[256];
    t[n - 2].hop = 0;
    assert_int_equal(rf_part_derive(&p, &f.run, &err), RF_EINVAL);
    snprintf(want, sizeof(want),
             "transfer %zu in round %d has hop 0; the schedule's rule gives 1 (transfer %zu's "
             "hop at GPU %d + 1: it forwards it in that round)",
             n - 2, round, n - 4, (int)t[n - 2].src);
    assert_string_equal(err.msg, want);
    t[n - 2].hop = 1;
    t[n - 1].hop = 1 << 21;
    assert_int_equal(rf_part_derive(&p, &f.run, &err), RF_EINVAL);
    snprintf(want, sizeof(want), "transfer %zu has hop %d, not within 0..2^20", n - 1, 1 << 21);
    assert_string_equal(err.msg, want);
    /* In a later round a forward is store and forward: hop 0. */
    t[n - 1].hop = 2;
    t[n - 4].hop = 1;
    assert_int_equal(rf_part_derive(&p, &f.run, &err), RF_EINVAL);
    snprintf(want, sizeof(want),
             "transfer %zu in round %d has hop 1; the schedule's rule gives 0 (it forwards "
             "nothing)",
             n - 4, round);
    assert_string_equal(err.msg, want);
    t[n - 4].hop = 0;
    /* A same-GPU copy of what 4 receives in the same round. */
    t[n - 2].dst = 4;
    assert_int_equal(rf_part_derive(&p, &f.run, &err), RF_EINVAL);
    snprintf(want, sizeof(want),
             "transfer %zu, a copy on GPU 4, copies in round %d what transfer %zu delivers in "
             "that round: a round's local copies run before its messages",
             n - 2, round, n - 4);
    assert_string_equal(err.msg, want);
    /* Its forward of a local copy has hop 0, and is fine a round later. */
    t[n - 2].round = round + 1;
    t[n - 2].hop = 0;
    t[n - 1].round = round + 1;
    t[n - 1].src = 4;
    t[n - 1].hop = 0;
    f.run.plan.n_rounds = round + 2;
    if (rf_part_derive(&p, &f.run, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(p.pipelined[round + 1], 1);
    rf_part_release(&p);
    t[n - 1].hop = 1;
    assert_int_equal(rf_part_derive(&p, &f.run, &err), RF_EINVAL);
    snprintf(want, sizeof(want),
             "transfer %zu in round %d has hop 1; the schedule's rule gives 0 (transfer %zu, "
             "which it forwards, is a local copy)",
             n - 1, round + 1, n - 2);
    assert_string_equal(err.msg, want);
    plan_fixture_release(&f);
}

/* Little-endian element j of a buffer of elem-byte elements. */
static uint64_t elem_at(const uint8_t *p, size_t elem, int64_t j)
{
    uint64_t v = 0;
    for (size_t k = 0; k < elem; k++)
        v |= (uint64_t)p[(size_t)j * elem + k] << (8 * k);
    return v;
}

static void elem_put(uint8_t *p, size_t elem, int64_t j, uint64_t v)
{
    for (size_t k = 0; k < elem; k++)
        p[(size_t)j * elem + k] = (uint8_t)(v >> (8 * k));
}

/* What the fill kernel does, on the host: each element on its own, from rf_pattern_expect,
 * in an order of threads (a random permutation), not row by row. */
static void emulate_fill(uint8_t *buf, const struct rf_pattern_buf *pb, int64_t n, bool poison,
                         int64_t *order)
{
    struct rf_pattern_geom g;
    rf_pattern_geom_of(&g, pb);
    for (int64_t k = 0; k < n; k++)
        elem_put(buf, pb->elem, order[k],
                 rf_pattern_expect(&g, pb->tensor, pb->elem, order[k], poison));
}

/* What the check kernel does: per thread (a grid-stride loop of `threads`) a count and its
 * first wrong element, then the sum and the minimum. */
static int64_t emulate_check(const uint8_t *buf, const struct rf_pattern_buf *pb, int64_t n,
                             int64_t threads, int64_t *first)
{
    struct rf_pattern_geom g;
    uint64_t mask = pb->elem >= 8 ? ~0ULL : (1ULL << (8 * pb->elem)) - 1;
    int64_t bad = 0;
    *first = -1;
    rf_pattern_geom_of(&g, pb);
    for (int64_t t = 0; t < threads; t++) {
        int64_t mine = 0, mine_first = -1;
        for (int64_t j = t; j < n; j += threads)
            if (elem_at(buf, pb->elem, j) !=
                    (rf_pattern_expect(&g, pb->tensor, pb->elem, j, false) & mask) &&
                mine++ == 0)
                mine_first = j;
        bad += mine;
        if (mine && (*first < 0 || mine_first < *first))
            *first = mine_first;
    }
    return bad;
}

/* The GPU's fill and check compute each element alone, with pattern_math.h's walk from a
 * box's element to its tensor index; the host goes row by row. Both give the same bytes, the
 * same count of wrong elements and the same first wrong index, for random boxes of 1 to 4
 * dims and every element size, poisoned or not. The index walk agrees with the row-major
 * coordinates, and the 32-bit division shortcut with 64-bit division. */
static void device_fill_and_check_compute_the_host_pattern(void **state)
{
    (void)state;
    size_t sizes[] = {1, 2, 4, 8};
    for (int iter = 0; iter < 200; iter++) {
        int ndim = (int)rnd(1, 4);
        int64_t shape[RF_MAX_DIMS], c[RF_MAX_DIMS];
        struct rf_box box;
        random_box(ndim, shape, &box);
        size_t e = sizes[iter % 4];
        bool poison = iter % 3 == 0;
        int64_t n = rf_box_numel(&box, ndim), first = -1, efirst;
        struct rf_pattern_buf pb = {(int32_t)rnd(0, 1000), ndim, shape, &box, e, false};
        struct rf_pattern_geom g;
        uint8_t *host = malloc((size_t)n * e), *dev = malloc((size_t)n * e);
        int64_t *order = malloc((size_t)n * sizeof(int64_t));
        rf_pattern_geom_of(&g, &pb);
        for (int64_t j = 0; j < n; j++) {
            coord_in(&box, ndim, j, c);
            assert_int_equal(rf_pattern_index(&g, j), linear(shape, ndim, c));
            order[j] = j;
        }
        for (int64_t j = n - 1; j > 0; j--) {
            int64_t k = rnd(0, j), t = order[j];
            order[j] = order[k];
            order[k] = t;
        }
        rf_pattern_fill(host, &pb, 0, n, poison);
        memset(dev, 0x5a, (size_t)n * e);
        emulate_fill(dev, &pb, n, poison, order);
        if (memcmp(host, dev, (size_t)n * e) != 0)
            fail_msg("iteration %d: %d dims, %zu-byte elements: the per-element fill differs", iter,
                     ndim, e);
        /* Wrong elements where they are (poisoned: all of them); one more flipped. */
        int64_t at = rnd(0, n - 1);
        dev[(size_t)at * e] ^= 0x21;
        int64_t want = rf_pattern_check(dev, &pb, 0, n, &first);
        assert_int_equal(emulate_check(dev, &pb, n, rnd(1, 9), &efirst), want);
        assert_int_equal(efirst, first);
        assert_int_equal(want, poison ? n : 1);
        assert_int_equal(first, poison ? 0 : at);
        free(host);
        free(dev);
        free(order);
    }
    int64_t rem, xs[] = {0, 7, 4294967295LL, 4294967296LL, 1LL << 40, 123456789012345LL};
    int64_t ys[] = {1, 3, 65536, 4294967295LL, 4294967296LL, 1LL << 33};
    for (size_t i = 0; i < 6; i++)
        for (size_t k = 0; k < 6; k++) {
            assert_int_equal(rf_pattern_divmod(xs[i], ys[k], &rem), xs[i] / ys[k]);
            assert_int_equal(rem, xs[i] % ys[k]);
        }
}

/* Counts of the device ops a backend offers in place of the host path. */
static int dev_fills, dev_checks;

static int dev_fill(struct rf_backend *b, void *buf, const struct rf_pattern_buf *pb, bool poison,
                    struct rf_error *err)
{
    int64_t n = rf_box_numel(pb->box, pb->ndim);
    int64_t *order = malloc((size_t)(n + 1) * sizeof(int64_t));
    for (int64_t j = 0; j < n; j++)
        order[j] = n - 1 - j;
    emulate_fill(buf, pb, n, poison, order);
    free(order);
    dev_fills++;
    return 0;
}

static int dev_check(struct rf_backend *b, const void *buf, const struct rf_pattern_buf *pb,
                     int64_t *errors, int64_t *first_bad, struct rf_error *err)
{
    *errors = emulate_check(buf, pb, rf_box_numel(pb->box, pb->ndim), 5, first_bad);
    dev_checks++;
    return 0;
}

/* A fake backend's log of the calls that order a replay: "m3" mark 3, "w2" wait_mark 2, "s"
 * sync. */
static char call_log[1 << 14];
static int bad_elapsed = -1; /* elapsed fails from this mark on */

static void log_call(const char *what, int i)
{
    size_t n = strlen(call_log);
    snprintf(call_log + n, sizeof(call_log) - n, i >= 0 ? "%s%d " : "%s ", what, i);
}

static int log_mark(struct rf_backend *b, int i, struct rf_error *err)
{
    log_call("m", i);
    return 0;
}

static int log_wait_mark(struct rf_backend *b, int i, struct rf_error *err)
{
    log_call("w", i);
    return 0;
}

static int log_sync(struct rf_backend *b, struct rf_error *err)
{
    log_call("s", -1);
    return 0;
}

static int log_elapsed(struct rf_backend *b, int from, int to, double *seconds,
                       struct rf_error *err)
{
    if (bad_elapsed >= 0 && to >= bad_elapsed)
        return rf_error_set(err, RF_ECOMM, "marks %d to %d: not ready", from, to);
    *seconds = to - from;
    return 0;
}

/* Rank after rank (senders first) on host memory: what the mail backend delivers. */
static void replay_world(struct rf_part *p, struct rf_backend *be, struct rf_check *checks)
{
    struct rf_error err;
    n_mail = 0;
    for (world_rank = 0; world_rank < p->n_gpus; world_rank++) {
        struct rf_replay *rp;
        double seconds[64], total;
        assert_true(p->n_rounds <= 64);
        if (rf_replay_new(&rp, p, world_rank, be, &err) < 0 || rf_replay_alloc(rp, &err) < 0 ||
            rf_replay_fill(rp, &err) < 0 || rf_replay_poison(rp, &err) < 0 ||
            rf_replay_run(rp, seconds, &total, NULL, &err) < 0)
            fail_msg("rank %d: %s", world_rank, err.msg);
        if (rf_replay_check(rp, &checks[world_rank], &err) < 0)
            fail_msg("rank %d: %s", world_rank, err.msg);
        rf_replay_free(rp);
    }
    for (size_t j = 0; j < n_mail; j++)
        free(mail[j].data);
    free(mail);
    mail = NULL;
    n_mail = 0;
}

/* A backend with a fill and a check of its own is used for them (the host path is not), and
 * the verdict is the host path's: nothing wrong after a replay, and one spoiled element found
 * by both, at the same index. */
static void a_device_fill_and_check_replace_the_host_path(void **state)
{
    (void)state;
    struct planned f;
    struct rf_part p;
    struct rf_error err;
    struct rf_ctl ctl;
    struct rf_check checks[8];
    memset(&ctl, 0, sizeof(ctl));
    struct rf_backend be = {.name = "mail",
                            .ctl = &ctl,
                            .alloc = fake_alloc,
                            .free = fake_free,
                            .upload = host_upload,
                            .download = host_download,
                            .copy = host_copy,
                            .fill = dev_fill,
                            .check = dev_check,
                            .exchange = mail_exchange,
                            .sync = host_nothing,
                            .timers = fake_timers,
                            .mark = host_mark,
                            .wait_mark = host_mark,
                            .elapsed = host_elapsed};
    plan_fixture(&f, RF_STRAT_RESHARD, RF_DT_BF16, 4096);
    if (rf_part_derive(&p, &f.run, &err) < 0)
        fail_msg("%s", err.msg);
    dev_fills = dev_checks = 0;
    replay_world(&p, &be, checks);
    int64_t bytes = 0;
    for (int r = 0; r < p.n_gpus; r++) {
        assert_int_equal(checks[r].errors, 0);
        bytes += checks[r].bytes;
    }
    assert_true(bytes > 0);
    assert_true(dev_fills > 0);
    assert_true(dev_checks > 0);
    /* One buffer, both ways: the device path and the host path agree on a spoiled byte. */
    struct rf_box box = {{0, 3, 0, 0}, {5, 4, 1, 1}};
    int64_t shape[RF_MAX_DIMS] = {9, 7, 1, 1}, errors[2], first[2];
    struct rf_pattern_buf pb = {2, 2, shape, &box, 2, false};
    uint8_t buf[40];
    struct rf_backend host_be = be;
    host_be.fill = NULL;
    host_be.check = NULL;
    assert_int_equal(rf_fill_buffer(&be, buf, &pb, false, &err), 0);
    buf[2 * 13 + 1] ^= 0x80;
    assert_int_equal(rf_check_buffer(&be, buf, &pb, &errors[0], &first[0], &err), 0);
    assert_int_equal(rf_check_buffer(&host_be, buf, &pb, &errors[1], &first[1], &err), 0);
    assert_int_equal(errors[0], 1);
    assert_int_equal(errors[1], 1);
    assert_int_equal(first[0], 13);
    assert_int_equal(first[1], 13);
    rf_part_release(&p);
    plan_fixture_release(&f);
}

/* The replay keeps at most one round queued ahead of the device: it marks round r's end,
 * then waits for round r - 1's (mark r), never syncs between rounds, and syncs once at the
 * end; every round is timed from its marks. A backend whose timers fail makes the
 * iteration fail, naming the round, instead of a negative time entering the median. */
static void rounds_run_one_ahead_of_the_device(void **state)
{
    (void)state;
    struct planned f;
    struct rf_part p;
    struct rf_error err;
    struct rf_ctl ctl;
    memset(&ctl, 0, sizeof(ctl));
    struct rf_backend be = {.name = "log",
                            .ctl = &ctl,
                            .alloc = fake_alloc,
                            .free = fake_free,
                            .upload = host_upload,
                            .download = host_download,
                            .copy = host_copy,
                            .exchange = mail_exchange,
                            .sync = log_sync,
                            .timers = fake_timers,
                            .mark = log_mark,
                            .wait_mark = log_wait_mark,
                            .elapsed = log_elapsed};
    plan_fixture(&f, RF_STRAT_RESHARD, RF_DT_BF16, 4096);
    if (rf_part_derive(&p, &f.run, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(p.n_rounds >= 3 && p.n_rounds <= 64);
    n_mail = 0;
    for (world_rank = 0; world_rank < 8; world_rank++) {
        struct rf_replay *rp;
        double seconds[64], total;
        char want[1 << 12];
        size_t n = 0;
        if (rf_replay_new(&rp, &p, world_rank, &be, &err) < 0 || rf_replay_alloc(rp, &err) < 0)
            fail_msg("rank %d: %s", world_rank, err.msg);
        call_log[0] = '\0';
        bad_elapsed = -1;
        if (rf_replay_run(rp, seconds, &total, NULL, &err) < 0)
            fail_msg("rank %d: %s", world_rank, err.msg);
        n += (size_t)snprintf(want + n, sizeof(want) - n, "m0 ");
        for (int32_t rd = 0; rd < p.n_rounds; rd++)
            n += (size_t)snprintf(want + n, sizeof(want) - n, rd ? "m%d w%d " : "m%d ", rd + 1, rd);
        snprintf(want + n, sizeof(want) - n, "s ");
        assert_string_equal(call_log, want);
        for (int32_t rd = 0; rd < p.n_rounds; rd++)
            assert_true(seconds[rd] == 1);
        assert_true(total == p.n_rounds);
        rf_replay_free(rp);
    }
    for (size_t j = 0; j < n_mail; j++)
        free(mail[j].data);
    free(mail);
    mail = NULL;
    n_mail = 0;
    /* Rank 0 sends only, so it replays alone; its round 2's end mark cannot be read. */
    struct rf_replay *rp;
    double seconds[64], total;
    world_rank = 0;
    assert_int_equal(rf_replay_new(&rp, &p, 0, &be, &err), 0);
    assert_int_equal(rf_replay_alloc(rp, &err), 0);
    bad_elapsed = 3;
    assert_int_equal(rf_replay_run(rp, seconds, &total, NULL, &err), RF_ECOMM);
    assert_string_equal(err.msg, "the time of round 2: marks 2 to 3: not ready");
    bad_elapsed = -1;
    rf_replay_free(rp);
    for (size_t j = 0; j < n_mail; j++)
        free(mail[j].data);
    free(mail);
    mail = NULL;
    n_mail = 0;
    rf_part_release(&p);
    plan_fixture_release(&f);
}

/* Each rank names each peer of its messages once (not itself), and counts the broadcast
 * rings it is in: the root's and every member's group, none for a rank outside. */
static void comm_use_names_each_peer_once(void **state)
{
    (void)state;
    enum rf_strategy strategies[] = {RF_STRAT_RESHARD, RF_STRAT_BROADCAST};
    for (int s = 0; s < 2; s++) {
        struct planned f;
        struct rf_part p;
        struct rf_error err;
        struct rf_backend be = {
            .name = "fake", .alloc = fake_alloc, .free = fake_free, .timers = fake_timers};
        plan_fixture(&f, strategies[s], RF_DT_BF16, 4096);
        assert_int_equal(rf_part_derive(&p, &f.run, &err), 0);
        for (int r = 0; r < p.n_gpus; r++) {
            struct rf_replay *rp;
            struct rf_comm_use use;
            bool to[8] = {false}, from[8] = {false};
            for (size_t k = 0; k < f.run.plan.n_transfers; k++) {
                const struct rf_transfer *t = &f.run.plan.transfers[k];
                for (int32_t i = 0; i < t->dst_count; i++) {
                    int32_t d = t->dst + i * t->dst_stride;
                    if (t->src == r && d != r)
                        to[d] = true;
                    if (d == r && t->src != r)
                        from[t->src] = true;
                }
            }
            assert_int_equal(rf_replay_new(&rp, &p, r, &be, &err), 0);
            rf_replay_comm_use(rp, &use);
            size_t want_to = 0, want_from = 0;
            for (int k = 0; k < 8; k++) {
                want_to += to[k];
                want_from += from[k];
            }
            assert_int_equal(use.n_send, want_to);
            assert_int_equal(use.n_recv, want_from);
            for (size_t i = 0; i < use.n_send; i++) {
                assert_true(to[use.send_peers[i]]);
                assert_true(i == 0 || use.send_peers[i] > use.send_peers[i - 1]);
            }
            for (size_t i = 0; i < use.n_recv; i++) {
                assert_true(from[use.recv_peers[i]]);
                assert_true(i == 0 || use.recv_peers[i] > use.recv_peers[i - 1]);
            }
            int32_t rings = 0;
            for (size_t g = 0; g < p.n_groups; g++)
                rings += rf_part_group_has(&p.groups[g], r) || p.groups[g].root == r;
            assert_int_equal(use.rings, rings);
            if (strategies[s] == RF_STRAT_BROADCAST && r >= 4)
                assert_int_equal(use.rings, 1); /* every inference GPU is a member */
            rf_replay_free(rp);
        }
        rf_part_release(&p);
        plan_fixture_release(&f);
    }
}

/* A fake environment for the estimate. */
static const char *const *fake_env;

static char *fake_getenv(const char *name)
{
    for (const char *const *e = fake_env; e && *e; e += 2)
        if (strcmp(e[0], name) == 0)
            return (char *)e[1];
    return NULL;
}

/* NCCL 2.28's figures: per connection the receiver holds LL (512 KiB), LL128 (4800 KiB) and
 * SIMPLE (4 MiB) after a 4 KiB header, the sender its header, each rounded up to 2 MiB; on
 * compute capability 8.0 (P2P read) SIMPLE moves to the sender. The first message connects
 * every channel of a peer (32 assumed), a ring two connections per channel, network peers
 * share 16 slots of 128 KiB per channel and direction. NCCL's variables change it as they
 * change NCCL: buffer sizes, the channel caps, P2P read; values NCCL ignores are ignored. */
static void nccl_connection_buffers_are_estimated(void **state)
{
    (void)state;
    const int64_t MiB = 1 << 20;
    struct rf_nccl_buffers b;
    fake_env = NULL;
    rf_nccl_buffers_init(&b, 90, fake_getenv);
    assert_int_equal(b.simple, 4 * MiB);
    assert_int_equal(b.ll, 512 * 1024);
    assert_int_equal(b.ll128, 4800 * 1024);
    assert_int_equal(b.ring_channels, 32);
    assert_int_equal(b.p2p_channels, 32);
    assert_false(b.read);
    assert_int_equal(rf_nccl_conn_bytes(&b, true), 2 * MiB);
    assert_int_equal(rf_nccl_conn_bytes(&b, false), 10 * MiB);
    struct rf_nccl_use u = {.local_send = 3, .local_recv = 2, .rings = 1};
    /* 32 x (3 x 2 + 2 x 10) MiB for the peers, 32 x (2 + 10) MiB for the ring. */
    assert_int_equal(rf_nccl_lazy_bytes(&b, &u), (32 * 26 + 32 * 12) * MiB);
    struct rf_nccl_use none = {0};
    assert_int_equal(rf_nccl_lazy_bytes(&b, &none), 0);
    struct rf_nccl_use remote = {.remote_send = true, .remote_recv = true};
    assert_int_equal(rf_nccl_lazy_bytes(&b, &remote), 2 * 32 * 16 * 128 * 1024);
    rf_nccl_buffers_init(&b, 80, fake_getenv);
    assert_true(b.read);
    assert_int_equal(rf_nccl_conn_bytes(&b, true), 6 * MiB);
    assert_int_equal(rf_nccl_conn_bytes(&b, false), 6 * MiB);
    static const char *const env[] = {"NCCL_BUFFSIZE",
                                      "1048576",
                                      "NCCL_MAX_NCHANNELS",
                                      "8",
                                      "NCCL_MAX_P2P_NCHANNELS",
                                      "4",
                                      "NCCL_LL128_BUFFSIZE",
                                      "abc",
                                      "NCCL_P2P_READ_ENABLE",
                                      "0",
                                      "NCCL_MAX_CTAS",
                                      "-3",
                                      NULL};
    fake_env = env;
    rf_nccl_buffers_init(&b, 80, fake_getenv);
    assert_int_equal(b.simple, MiB);
    assert_int_equal(b.ll128, 4800 * 1024);
    assert_int_equal(b.ring_channels, 8);
    assert_int_equal(b.p2p_channels, 4);
    assert_false(b.read);
    /* 4 KiB + 512 KiB + 4800 KiB + 1 MiB rounds up to 8 MiB. */
    assert_int_equal(rf_nccl_conn_bytes(&b, false), 8 * MiB);
    assert_int_equal(rf_nccl_lazy_bytes(&b, &u), (4 * (3 * 2 + 2 * 8) + 8 * 10) * MiB);
    fake_env = NULL;
}

int main(void)
{
    const char *s = getenv("REFIT_SEED");
    seed = s ? (unsigned)strtoul(s, NULL, 10) : (unsigned)time(NULL);
    printf("# seed %u (REFIT_SEED=%u repeats it)\n", seed, seed);
    srand(seed);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(range_boxes_cover_the_range_in_order),
        cmocka_unit_test(copies_merge_contiguous_dims),
        cmocka_unit_test(boxes_survive_pack_and_unpack_in_pieces),
        cmocka_unit_test(broadcast_pieces_fill_a_shard),
        cmocka_unit_test(pattern_checks_every_element),
        cmocka_unit_test(packed_pairs_convert_to_their_pattern),
        cmocka_unit_test(fault_injection_is_parsed),
        cmocka_unit_test(impossible_faults_are_refused),
        cmocka_unit_test(memory_is_known_before_it_is_allocated),
        cmocka_unit_test(parts_agree_with_the_plan),
        cmocka_unit_test(a_relay_reads_what_landed_earlier),
        cmocka_unit_test(pipelined_rounds_forward_each_piece_a_step_after_it_lands),
        cmocka_unit_test(relay_hops_are_checked),
        cmocka_unit_test(device_fill_and_check_compute_the_host_pattern),
        cmocka_unit_test(a_device_fill_and_check_replace_the_host_path),
        cmocka_unit_test(rounds_run_one_ahead_of_the_device),
        cmocka_unit_test(comm_use_names_each_peer_once),
        cmocka_unit_test(nccl_connection_buffers_are_estimated),
    };
    return cmocka_run_group_tests_name("exec", tests, NULL, NULL);
}
