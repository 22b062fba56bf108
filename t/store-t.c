/* Store: schema version and identity, one transaction per run, refusal of foreign or newer
 * files, and no partial run after a failure. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "store.h"

static char path[64];

static int setup(void **state)
{
    (void)state;
    snprintf(path, sizeof(path), "/tmp/refit-store-t-%d.db", (int)getpid());
    unlink(path);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    char p[80];
    unlink(path);
    snprintf(p, sizeof(p), "%s-wal", path);
    unlink(p);
    snprintf(p, sizeof(p), "%s-shm", path);
    unlink(p);
    return 0;
}

static int64_t query(const char *sql)
{
    sqlite3 *db;
    sqlite3_stmt *s;
    int64_t v = -1;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    if (sqlite3_step(s) == SQLITE_ROW)
        v = sqlite3_column_int64(s, 0);
    sqlite3_finalize(s);
    sqlite3_close(db);
    return v;
}

/* A small real plan: two tensors from TP2 to two TP1 replicas. */
struct fixture {
    struct rf_tensor ts[2];
    struct rf_model m;
    struct rf_side tr, in;
    struct rf_plan plan;
    struct rf_run_info info;
};

static void fixture_init(struct fixture *f)
{
    static int one[1] = {1};
    struct rf_error err;
    memset(f, 0, sizeof(*f));
    f->ts[0] = (struct rf_tensor){.name = "a.weight",
                                  .ndim = 2,
                                  .shape = {8, 4},
                                  .cls = RF_CLASS_COLUMN,
                                  .role = RF_ROLE_ATTENTION,
                                  .scale_of = -1};
    f->ts[1] = (struct rf_tensor){.name = "b.weight",
                                  .ndim = 1,
                                  .shape = {4},
                                  .cls = RF_CLASS_REPLICATED,
                                  .role = RF_ROLE_NORM,
                                  .scale_of = -1};
    f->m = (struct rf_model){.name = "tiny", .layers = 1, .tensors = f->ts, .n_tensors = 2};
    f->tr = (struct rf_side){.kind = RF_SIDE_MEGATRON,
                             .gpus = 2,
                             .tp = 2,
                             .cp = 1,
                             .pp = 1,
                             .dp = 1,
                             .ep = 1,
                             .etp = 1,
                             .edp = 2,
                             .replicas = 1,
                             .stage_layers = one};
    f->in = (struct rf_side){.kind = RF_SIDE_VLLM,
                             .gpus = 2,
                             .first_gpu = 2,
                             .tp = 1,
                             .cp = 1,
                             .pp = 1,
                             .dp = 1,
                             .ep = 1,
                             .etp = 1,
                             .edp = 1,
                             .replicas = 2,
                             .stage_layers = one};
    assert_int_equal(rf_side_init(&f->tr, 1, &err), 0);
    assert_int_equal(rf_side_init(&f->in, 1, &err), 0);
    assert_int_equal(
        rf_plan_build(&f->plan, &f->m, &f->tr, &f->in, RF_STRAT_RESHARD, NULL, NULL, &err), 0);
    f->info =
        (struct rf_run_info){.scenario = "t", .model = "tiny", .train = &f->tr, .infer = &f->in};
}

static void fixture_release(struct fixture *f)
{
    rf_plan_release(&f->plan);
    free(f->tr.layer_stage);
    free(f->in.layer_stage);
}

static void new_file_gets_schema_v1(void **state)
{
    (void)state;
    struct rf_store st;
    struct rf_error err;
    assert_int_equal(rf_store_open(&st, path, &err), 0);
    rf_store_close(&st);
    assert_int_equal(query("PRAGMA application_id"), RF_STORE_APPLICATION_ID);
    assert_int_equal(query("PRAGMA user_version"), RF_STORE_SCHEMA_VERSION);
    assert_int_equal(query("SELECT count(*) FROM sqlite_schema WHERE name IN "
                           "('run','tensor','box','transfer','collective','role_summary',"
                           "'transfer_each','measurement','measured_round','measured_run')"),
                     10);
}

static void run_is_stored_whole(void **state)
{
    (void)state;
    struct fixture f;
    struct rf_store st;
    struct rf_error err;
    int64_t run = 0;
    fixture_init(&f);
    assert_int_equal(rf_store_open(&st, path, &err), 0);
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), 0);
    rf_store_close(&st);
    assert_int_equal(run, 1);
    assert_int_equal(query("SELECT count(*) FROM tensor"), 2);
    assert_int_equal(query("SELECT count(*) FROM transfer"), (int64_t)f.plan.n_transfers);
    /* The view expands runs into one row per transfer; bytes add up to the payload. */
    assert_int_equal(query("SELECT count(*) FROM transfer_each"), f.plan.total.transfers);
    assert_int_equal(query("SELECT sum(bytes) FROM transfer_each WHERE src_gpu != dst_gpu"),
                     f.plan.total.payload_bytes);
    assert_int_equal(query("SELECT payload_bytes FROM run WHERE id = 1"), (8 * 4 + 4) * 2 * 2);
    assert_int_equal(query("SELECT sum(payload_bytes) FROM role_summary"),
                     f.plan.total.payload_bytes);
    fixture_release(&f);
}

static void failure_leaves_no_partial_run(void **state)
{
    (void)state;
    struct fixture f;
    struct rf_store st;
    struct rf_error err;
    int64_t run = 0;
    fixture_init(&f);
    assert_int_equal(rf_store_open(&st, path, &err), 0);
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), 0);
    /* Break the last transfer: no destinations, so its CHECK fails after the run, tensors
     * and boxes were inserted. */
    f.plan.transfers[f.plan.n_transfers - 1].dst_count = 0;
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), RF_EDB);
    assert_non_null(strstr(err.msg, "CHECK constraint failed"));
    f.plan.transfers[f.plan.n_transfers - 1].dst_count = 1;
    /* A dangling reference is refused before anything is written, naming the row. */
    f.plan.transfers[f.plan.n_transfers - 1].box = 999;
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), RF_EINVAL);
    assert_non_null(strstr(err.msg, "box 999 does not exist"));
    rf_store_close(&st);
    assert_int_equal(query("SELECT count(*) FROM run"), 1);
    assert_int_equal(query("SELECT count(*) FROM box WHERE run_id = 2"), 0);
    assert_int_equal(query("SELECT count(*) FROM tensor WHERE run_id = 2"), 0);
    assert_int_equal(query("SELECT count(*) FROM transfer WHERE run_id = 2"), 0);
    fixture_release(&f);
}

static void newer_or_foreign_files_are_refused(void **state)
{
    (void)state;
    struct rf_store st;
    struct rf_error err;
    sqlite3 *db;
    assert_int_equal(rf_store_open(&st, path, &err), 0);
    rf_store_close(&st);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_int_equal(rf_store_open(&st, path, &err), RF_EDB);
    assert_non_null(strstr(err.msg, "schema version 99 is newer than this refit"));
    teardown(NULL);

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE x(y)", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_int_equal(rf_store_open(&st, path, &err), RF_EDB);
    assert_non_null(strstr(err.msg, "not a refit database"));
}

/* What is stored loads back identical: the executor replays exactly the planned schedule. */
static void saved_run_loads_back(void **state)
{
    (void)state;
    struct fixture f;
    struct rf_store st;
    struct rf_error err;
    struct rf_stored_run r;
    int64_t run = 0;
    fixture_init(&f);
    assert_int_equal(rf_store_open(&st, path, &err), 0);
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), 0);
    if (rf_store_load_run(&st, run, &r, &err) < 0)
        fail_msg("%s", err.msg);
    assert_string_equal(r.model, "tiny");
    assert_int_equal(r.plan.n_tensors, f.plan.n_tensors);
    assert_int_equal(r.plan.n_boxes, f.plan.n_boxes);
    assert_int_equal(r.plan.n_transfers, f.plan.n_transfers);
    for (size_t i = 0; i < f.plan.n_tensors; i++) {
        assert_string_equal(r.plan.tensors[i].name, f.plan.tensors[i].name);
        assert_memory_equal(r.plan.tensors[i].shape, f.plan.tensors[i].shape,
                            sizeof(f.plan.tensors[i].shape[0]) * (size_t)f.plan.tensors[i].ndim);
        assert_int_equal(r.plan.tensors[i].cls, f.plan.tensors[i].cls);
    }
    for (size_t i = 0; i < f.plan.n_boxes; i++) {
        assert_int_equal(r.plan.boxes[i].tensor, f.plan.boxes[i].tensor);
        assert_memory_equal(&r.plan.boxes[i].box, &f.plan.boxes[i].box, sizeof(struct rf_box));
    }
    for (size_t i = 0; i < f.plan.n_transfers; i++) {
        const struct rf_transfer *a = &r.plan.transfers[i], *b = &f.plan.transfers[i];
        assert_true(a->box == b->box && a->src == b->src && a->dst == b->dst &&
                    a->dst_count == b->dst_count && a->dst_stride == b->dst_stride &&
                    a->phase == b->phase && a->after == b->after && a->round == b->round &&
                    a->bytes == b->bytes);
    }
    assert_int_equal(r.train.tp, 2);
    assert_int_equal(r.infer.replicas, 2);
    assert_int_equal(r.infer.dense.stride[0], 1);
    rf_stored_run_release(&r);
    assert_int_equal(rf_store_load_run(&st, 99, &r, &err), RF_EINVAL);
    assert_string_equal(err.msg, "no run 99 in this database");
    rf_stored_run_release(&r);
    rf_store_close(&st);
    fixture_release(&f);
}

/* A file written by schema version 1 (t/data/store/v1.sql, dumped from refit 0.1.0) is
 * migrated in place: its run survives with no schedule, and new runs get one. */
static void version_1_file_is_migrated(void **state)
{
    (void)state;
    char sqlpath[4096];
    const char *srcdir = getenv("SRCDIR");
    snprintf(sqlpath, sizeof(sqlpath), "%s/t/data/store/v1.sql", srcdir ? srcdir : ".");
    FILE *f = fopen(sqlpath, "rb");
    assert_non_null(f);
    static char sql[1 << 20];
    size_t n = fread(sql, 1, sizeof(sql) - 1, f);
    fclose(f);
    sql[n] = '\0';
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(query("PRAGMA user_version"), 1);

    struct fixture fx;
    struct rf_store st;
    struct rf_error err;
    int64_t run = 0;
    assert_int_equal(rf_store_open(&st, path, &err), 0);
    assert_int_equal(query("PRAGMA user_version"), RF_STORE_SCHEMA_VERSION);
    assert_int_equal(query("SELECT count(*) FROM run WHERE rounds IS NULL"), 1);
    assert_int_equal(query("SELECT count(*) FROM transfer_each WHERE run_id = 1"),
                     query("SELECT transfers FROM run WHERE id = 1"));
    fixture_init(&fx);
    assert_int_equal(rf_store_save_plan(&st, &fx.info, &fx.plan, &run, &err), 0);
    rf_store_close(&st);
    assert_int_equal(run, 2);
    assert_int_equal(query("SELECT count(*) FROM side WHERE run_id = 2"), 2);
    fixture_release(&fx);
}

/* refit-exec's rows: written as failed before a replay starts, completed after; only ok
 * rows appear in measured_run; round times land in measured_round, in one transaction. */
static void measurements_are_stored(void **state)
{
    (void)state;
    struct fixture f;
    struct rf_store st;
    struct rf_error err;
    int64_t run = 0, id = 0, id2 = 0;
    double rounds[] = {0.25, 0.5};
    fixture_init(&f);
    assert_int_equal(rf_store_open(&st, path, &err), 0);
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), 0);
    struct rf_measurement m = {.run_id = run,
                               .backend = "mpi",
                               .world_size = 4,
                               .iters = 5,
                               .warmup = 1,
                               .status = "failed",
                               .error_text = "did not finish",
                               .seconds = -1,
                               .seconds_min = -1,
                               .seconds_max = -1,
                               .mpi_version = "Open MPI v4.1.4"};
    assert_int_equal(rf_store_measurement_begin(&st, &m, &id, &err), 0);
    assert_int_equal(query("SELECT count(*) FROM measurement WHERE status = 'failed' AND "
                           "seconds IS NULL AND error_text = 'did not finish'"),
                     1);
    assert_int_equal(query("SELECT count(*) FROM measured_run"), 0);
    m.status = "ok";
    m.error_text = NULL;
    m.seconds = 0.75;
    m.seconds_min = 0.7;
    m.seconds_max = 0.9;
    m.bytes_verified = 1234;
    m.round_seconds = rounds;
    m.n_rounds = 2;
    assert_int_equal(rf_store_measurement_finish(&st, id, &m, &err), 0);
    assert_int_equal(query("SELECT count(*) FROM measured_run WHERE seconds = 0.75 AND "
                           "bytes_verified = 1234 AND measurement_id = 1 AND run_id = 1"),
                     1);
    assert_int_equal(query("SELECT sum(seconds) * 4 FROM measured_round WHERE measurement_id = 1"),
                     3);
    /* An unverified replay keeps its times but is no measurement. */
    m.status = "unverified";
    m.round_seconds = NULL;
    assert_int_equal(rf_store_measurement_begin(&st, &m, &id2, &err), 0);
    assert_int_equal(rf_store_measurement_finish(&st, id2, &m, &err), 0);
    assert_int_equal(id2, 2);
    assert_int_equal(query("SELECT count(*) FROM measured_run"), 1);
    assert_int_equal(query("SELECT count(*) FROM measured_round WHERE measurement_id = 2"), 0);
    /* The schema refuses a status it does not know, and the row stays as it was. */
    m.status = "great";
    assert_int_equal(rf_store_measurement_finish(&st, id2, &m, &err), RF_EDB);
    assert_int_equal(query("SELECT count(*) FROM measurement WHERE status = 'unverified'"), 1);
    m.status = "ok";
    assert_int_equal(rf_store_measurement_finish(&st, 99, &m, &err), RF_EINVAL);
    assert_string_equal(err.msg, "no measurement 99 in this database");
    rf_store_close(&st);
    fixture_release(&f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(new_file_gets_schema_v1, setup, teardown),
        cmocka_unit_test_setup_teardown(run_is_stored_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(failure_leaves_no_partial_run, setup, teardown),
        cmocka_unit_test_setup_teardown(newer_or_foreign_files_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(version_1_file_is_migrated, setup, teardown),
        cmocka_unit_test_setup_teardown(saved_run_loads_back, setup, teardown),
        cmocka_unit_test_setup_teardown(measurements_are_stored, setup, teardown),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
