/* Runs that describe themselves (sim/describe.h): canonical JSON reads back to the same
 * bits, a cluster survives JSON field by field, auto's PXN wins over the scenario's, and
 * two documents compare leaf by leaf in path order. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "describe.h"
#include "json.h"

/* Keys sorted at every level, arrays kept in order, reals in their shortest exact form and
 * always with a '.' or an exponent, strings escaped by jansson. */
static void canonical_text_is_sorted_and_exact(void **state)
{
    (void)state;
    json_t *v = json_pack("{sf s[ii] s{sb sn} sf sf ss sI}", "b", 0.82, "a", 1, 2, "c", "z", 1, "y",
                          "d", 2.0, "e", 1e-300, "s", "\xc3\xa9\"\n", "i", (json_int_t)-7);
    char *text = rf_json_canonical(v, 0);
    assert_string_equal(
        text, "{\"a\":[1,2],\"b\":0.82,\"c\":{\"y\":null,\"z\":true},\"d\":2.0,\"e\":1e-300,"
              "\"i\":-7,\"s\":\"\xc3\xa9\\\"\\n\"}");
    json_t *back = json_loads(text, 0, NULL);
    assert_true(json_equal(v, back));
    assert_true(json_is_real(json_object_get(back, "d")));
    free(text);
    text = rf_json_canonical(v, 2);
    assert_string_equal(text,
                        "{\n  \"a\": [1, 2],\n  \"b\": 0.82,\n  \"c\": {\n    \"y\": null,\n"
                        "    \"z\": true\n  },\n  \"d\": 2.0,\n  \"e\": 1e-300,\n  \"i\": -7,\n"
                        "  \"s\": \"\xc3\xa9\\\"\\n\"\n}");
    free(text);
    json_decref(back);
    json_decref(v);
    json_t *empty = json_object();
    text = rf_json_canonical(empty, 2);
    assert_string_equal(text, "{}");
    free(text);
    json_decref(empty);
}

/* Random finite doubles of every magnitude (random bit patterns) read back bit for bit. */
static void canonical_reals_round_trip(void **state)
{
    (void)state;
    unsigned seed = (unsigned)time(NULL);
    printf("# seed %u\n", seed);
    srand(seed);
    for (int i = 0; i < 20000; i++) {
        uint64_t bits = 0;
        for (int k = 0; k < 4; k++)
            bits = bits << 16 | (uint64_t)(rand() & 0xffff);
        double x;
        memcpy(&x, &bits, sizeof(x));
        if (x != x || x - x != 0)
            continue; /* NaN, infinities: JSON has none */
        json_t *v = json_real(x);
        char *text = rf_json_canonical(v, 0);
        json_t *back = json_loads(text, JSON_DECODE_ANY, NULL);
        assert_non_null(back);
        double y = json_real_value(back);
        if (memcmp(&x, &y, sizeof(x)) != 0 && !(x == 0 && y == 0))
            fail_msg("seed %u: %.17g written as %s read back as %.17g", seed, x, text, y);
        free(text);
        json_decref(back);
        json_decref(v);
    }
}

/* The numeric fields of a cluster, as pointers into it. */
enum { N_INTS = 11, N_REALS = 23 };
static void fields(struct rf_cluster *c, int64_t **ints, double **reals)
{
    int64_t *i[N_INTS] = {&c->nodes,
                          &c->gpus_per_node,
                          &c->nvlink.domain_gpus,
                          &c->nic.per_node,
                          &c->fabric.nodes_per_leaf,
                          &c->cal.nvl_channels_per_peer,
                          &c->cal.net_channels_per_peer,
                          &c->cal.p2p_channels,
                          &c->cal.nvl_chunk_kib,
                          &c->cal.net_chunk_kib,
                          &c->cal.streams};
    double *r[N_REALS] = {&c->hbm_gb,
                          &c->nvlink.gbps,
                          &c->nvlink.latency_us,
                          &c->nic.gbps,
                          &c->nic.latency_us,
                          &c->pcie_gbps,
                          &c->fabric.oversubscription,
                          &c->fabric.switch_latency_us,
                          &c->cal.nvlink_efficiency,
                          &c->cal.nic_efficiency,
                          &c->cal.message_latency_us,
                          &c->cal.channel_gbps,
                          &c->cal.memcpy_gbps,
                          &c->cal.quant_gbps,
                          &c->cal.tensor_overhead_us,
                          &c->cal.bucket_overhead_us,
                          &c->cal.kernel_launch_us,
                          &c->cal.nccl_call_us,
                          &c->cal.barrier_us,
                          &c->cal.h2d_gbps,
                          &c->cal.d2h_gbps,
                          &c->cal.reg_region_us,
                          &c->cal.loader_scan_us};
    memcpy(ints, i, sizeof(i));
    memcpy(reals, r, sizeof(r));
}

/* A cluster with a different value in every field: a field written under another's name, or
 * read into another's place, changes some value. */
static struct rf_cluster odd_cluster(void)
{
    struct rf_cluster c = {0};
    int64_t *ints[N_INTS];
    double *reals[N_REALS];
    c.name = "odd";
    c.source = "clusters/odd.lua";
    fields(&c, ints, reals);
    for (size_t i = 0; i < N_INTS; i++)
        *ints[i] = 3 + (int64_t)i;
    for (size_t i = 0; i < N_REALS; i++)
        *reals[i] = 0.1 * (double)(i + 1) + 1.0 / 3.0;
    c.fabric.pxn = false;
    return c;
}

static void cluster_survives_json(void **state)
{
    (void)state;
    struct rf_cluster c = odd_cluster(), d;
    struct rf_error err;
    json_t *o = rf_cluster_json(&c);
    char *text = rf_json_canonical(o, 0);
    json_t *back = json_loads(text, 0, NULL);
    assert_int_equal(rf_cluster_from_json(back, &d, &err), 0);
    assert_string_equal(d.name, "odd");
    assert_string_equal(d.source, "clusters/odd.lua");
    int64_t *ci[N_INTS], *di[N_INTS];
    double *cr[N_REALS], *dr[N_REALS];
    fields(&c, ci, cr);
    fields(&d, di, dr);
    for (size_t i = 0; i < N_INTS; i++)
        assert_int_equal(*ci[i], *di[i]);
    for (size_t i = 0; i < N_REALS; i++)
        assert_true(*cr[i] == *dr[i]); /* exactly: the text is the shortest exact form */
    assert_false(d.fabric.pxn);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(back, "calibration"), "streams")),
        c.cal.streams);
    rf_cluster_release(&d);
    /* A missing or mistyped field is named. */
    json_object_del(json_object_get(back, "fabric"), "oversubscription");
    assert_int_equal(rf_cluster_from_json(back, &d, &err), RF_EINVAL);
    assert_string_equal(err.msg, "cluster.fabric.oversubscription: expected a number");
    json_object_set_new(json_object_get(back, "fabric"), "oversubscription", json_real(2));
    json_object_set_new(json_object_get(back, "nic"), "per_node", json_real(8));
    assert_int_equal(rf_cluster_from_json(back, &d, &err), RF_EINVAL);
    assert_string_equal(err.msg, "cluster.nic.per_node: expected an integer");
    json_object_set_new(json_object_get(back, "nic"), "per_node", json_integer(8));
    json_object_set_new(json_object_get(back, "fabric"), "pxn", json_string("no"));
    assert_int_equal(rf_cluster_from_json(back, &d, &err), RF_EINVAL);
    assert_string_equal(err.msg, "cluster.fabric.pxn: expected a boolean");
    free(text);
    json_decref(back);
    json_decref(o);
}

/* The PXN the prediction assumed: auto's choice, else the scenario's cluster. */
static void auto_pxn_wins(void **state)
{
    (void)state;
    struct rf_cluster c = odd_cluster(), d;
    struct rf_error err;
    c.fabric.pxn = true;
    json_t *doc = json_pack("{si so}", "version", 1, "cluster", rf_cluster_json(&c));
    assert_int_equal(rf_describe_pxn(doc), 1);
    json_object_set_new(doc, "auto", json_pack("{sb}", "pxn", 0));
    assert_int_equal(rf_describe_pxn(doc), 0);
    assert_int_equal(rf_describe_cluster(doc, &d, &err), 0);
    assert_false(d.fabric.pxn);
    rf_cluster_release(&d);
    json_t *none = json_pack("{si}", "version", 1);
    assert_int_equal(rf_describe_pxn(none), -1);
    json_decref(none);
    json_decref(doc);
}

static void parse_refuses_what_is_not_a_description(void **state)
{
    (void)state;
    json_t *doc;
    struct rf_error err;
    assert_int_equal(rf_describe_parse("{\"version\": 1}", &doc, &err), 0);
    json_decref(doc);
    assert_int_equal(rf_describe_parse("[1]", &doc, &err), RF_EINVAL);
    assert_string_equal(err.msg, "scenario_json: not a refit scenario (no version)");
    assert_int_equal(rf_describe_parse("{\"version\": 99}", &doc, &err), RF_EINVAL);
    assert_string_equal(err.msg,
                        "scenario_json: version 99 is newer than this refit (1); upgrade refit");
    assert_int_equal(rf_describe_parse("{", &doc, &err), RF_EINVAL);
    assert_null(doc);
}

/* Leaves in path order ("x" before "x_c": components compare, not whole paths), arrays as
 * one leaf, skipped top-level members left out; the diff says what each side holds. */
static void documents_compare_leaf_by_leaf(void **state)
{
    (void)state;
    json_t *a = json_loads(
        "{\"x\":{\"a\":1,\"b\":[1,2]},\"x_c\":true,\"y\":\"s\",\"skip\":{\"q\":1}}", 0, NULL);
    json_t *b = json_loads(
        "{\"x\":{\"a\":2.5,\"b\":[1,2]},\"x_c\":true,\"z\":1,\"skip\":{\"q\":2}}", 0, NULL);
    static const char *const skip[] = {"skip", NULL};
    struct rf_json_leaf *la, *lb;
    size_t na, nb, n;
    struct rf_json_change *c;
    struct rf_error err;
    assert_int_equal(rf_json_leaves(a, skip, &la, &na, &err), 0);
    assert_int_equal(rf_json_leaves(b, skip, &lb, &nb, &err), 0);
    assert_int_equal(na, 4);
    assert_string_equal(la[0].path, "x.a");
    assert_string_equal(la[1].path, "x.b");
    assert_string_equal(la[1].value, "[1,2]");
    assert_string_equal(la[2].path, "x_c");
    assert_string_equal(la[3].path, "y");
    assert_int_equal(rf_json_diff(la, na, lb, nb, &c, &n, &err), 0);
    assert_int_equal(n, 3);
    assert_string_equal(c[0].path, "x.a");
    assert_string_equal(c[0].a, "1");
    assert_string_equal(c[0].b, "2.5");
    assert_string_equal(c[1].path, "y");
    assert_string_equal(c[1].a, "\"s\"");
    assert_null(c[1].b);
    assert_string_equal(c[2].path, "z");
    assert_null(c[2].a);
    assert_string_equal(c[2].b, "1");
    free(c);
    rf_json_leaves_free(la, na);
    rf_json_leaves_free(lb, nb);
    json_decref(a);
    json_decref(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(canonical_text_is_sorted_and_exact),
        cmocka_unit_test(canonical_reals_round_trip),
        cmocka_unit_test(cluster_survives_json),
        cmocka_unit_test(auto_pxn_wins),
        cmocka_unit_test(parse_refuses_what_is_not_a_description),
        cmocka_unit_test(documents_compare_leaf_by_leaf),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
