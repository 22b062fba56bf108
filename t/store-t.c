/* Store: schema version and identity, one transaction per run, refusal of foreign or newer
 * files, and no partial run after a failure; open modes (create, existing, read-only), and
 * errors that name the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "runview.h"
#include "store.h"
#include "store_prediction.h"

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
    struct rf_run_sim sim; /* the simulator's rows, zeroed: none */
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

/* A new file is schema 16 as a user queries it: every table and view, by name and by column in
 * order. A table, view or column added, renamed or dropped without a migration fails here. */
static void new_file_gets_schema_16_with_every_table_and_view(void **state)
{
    (void)state;
    static const char want[] =
        "table box: run_id,id,tensor_id,off0,off1,off2,off3,len0,len1,len2,len3,numel\n"
        "table collective: run_id,id,kind,tensor_id,root_gpu,first_gpu,gpu_count,gpu_stride,"
        "bytes,round\n"
        "table gpu_traffic: run_id,gpu,sent_bytes,received_bytes,local_bytes,broadcast_bytes,"
        "transfers_out,transfers_in\n"
        "table link_load: run_id,link_id,kind,name,endpoint_a,endpoint_b,capacity_gbps,bytes,"
        "busy_seconds,utilization\n"
        "table measured_phase: measurement_id,phase,seconds\n"
        "table measured_round: measurement_id,round,seconds\n"
        "table measurement: id,run_id,created_at,backend,world_size,iters,warmup,seconds,"
        "seconds_min,seconds_max,bytes_verified,errors,status,error_text,hosts,gpu_model,"
        "nccl_version,mpi_version,exec_config,source\n"
        "table memory: run_id,side,gpu,stage,weights_bytes,grads_bytes,optimizer_bytes,"
        "staging_bytes,total_bytes,hbm_bytes,budget_bytes,headroom_bytes,fits\n"
        "table ordinal: i\n"
        "table predicted_phase: run_id,phase,start_seconds,finish_seconds,bytes\n"
        "table predicted_round: run_id,round,start_seconds,finish_seconds\n"
        "table predicted_step_phase: run_id,seq,part,phase,seconds,bytes,calls,mechanism\n"
        "table prediction: run_id,cluster,cluster_source,nodes,gpus_per_node,seconds,"
        "lower_bound_seconds,nvlink_bytes,fabric_bytes,bottleneck,bottleneck_link_id,"
        "messages,flows,events,sim_seconds,step_seconds,step_composition,overlap_refit_seconds,"
        "stall_seconds,staleness_seconds\n"
        "table role_summary: run_id,role,tensors,params,payload_bytes,moved_bytes,"
        "logical_bytes,local_bytes,transfers,collectives\n"
        "table round: run_id,round,transfer_runs,transfers,collectives,bytes\n"
        "table run: id,created_at,label,scenario,model,strategy,cluster_system,cluster_nodes,"
        "train_gpus,train_first_gpu,train_layout,train_dtype,infer_gpus,infer_first_gpu,"
        "infer_layout,infer_dtype,model_params,model_bytes,payload_bytes,moved_bytes,"
        "logical_bytes,local_bytes,transfers,collectives,plan_seconds,staging_bytes,rounds,"
        "chunk_bytes,relay_ring,relay_fanout,relay_depth,net_channels_per_peer,"
        "scenario_json,stored,study_id\n"
        "table side: run_id,side,kind,gpus,first_gpu,tp,cp,pp,dp,ep,etp,edp,replicas,fsdp,"
        "dtype,stage_layers,placement,domain_gpus,span\n"
        "table study: id,path,name,started_at,refit_version\n"
        "table study_table: study_id,ordinal,title,columns_json,rows_json,text\n"
        "table tensor: run_id,id,name,role,layer,class,shape,numel,dtype,wire_dtype,"
        "wire_bytes,strategy,scale_of,delta_encoding,delta_ppm,lora,lora_merge\n"
        "table transfer: run_id,id,box_id,src_gpu,dst_gpu,dst_count,dst_stride,phase,bytes,"
        "round,after_id,hop,chain\n"
        "view measured_run: run_id,label,model,strategy,train_gpus,train_layout,train_dtype,"
        "infer_gpus,infer_layout,infer_dtype,payload_bytes,moved_bytes,rounds,measurement_id,"
        "measured_at,backend,world_size,iters,warmup,seconds,seconds_min,seconds_max,"
        "payload_gb_per_second,bytes_verified,hosts,gpu_model,nccl_version,mpi_version,"
        "exec_config,source\n"
        "view predicted_vs_measured: run_id,label,model,strategy,cluster,predicted_seconds,"
        "lower_bound_seconds,measurement_id,backend,world_size,measured_seconds,"
        "measured_over_predicted,compared_with,source\n"
        "view predicted_vs_measured_phase: run_id,measurement_id,phase,predicted_seconds,"
        "measured_seconds\n"
        "view predicted_vs_measured_round: run_id,measurement_id,round,predicted_seconds,"
        "measured_seconds\n"
        "view run_memory: run_id,label,model,train_layout,infer_layout,train_memory_bytes,"
        "train_budget_bytes,infer_memory_bytes,infer_budget_bytes,infer_kv_headroom_bytes,"
        "memory_overcommitted\n"
        "view run_phases: run_id,label,model,strategy,framework,seq,part,phase,seconds,"
        "step_seconds,share_of_step,bytes,calls,mechanism,step_composition\n"
        "view transfer_each: run_id,transfer_id,round,tensor_id,tensor,phase,src_gpu,dst_gpu,"
        "off0,off1,off2,off3,len0,len1,len2,len3,bytes,hop\n";
    struct rf_store st;
    struct rf_error err;
    sqlite3 *db;
    sqlite3_stmt *s;
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    rf_store_close(&st);
    assert_int_equal(query("PRAGMA application_id"), RF_STORE_APPLICATION_ID);
    assert_int_equal(query("PRAGMA user_version"), RF_STORE_SCHEMA_VERSION);
    assert_int_equal(RF_STORE_SCHEMA_VERSION, 16);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT type || ' ' || name || ': ' || (SELECT "
                                        "group_concat(name, ',') FROM pragma_table_info(m.name)) "
                                        "FROM sqlite_schema m WHERE type IN ('table', 'view') "
                                        "AND name NOT LIKE 'sqlite_%' ORDER BY type, name",
                                        -1, &s, NULL),
                     SQLITE_OK);
    char got[sizeof(want) + 4096] = "";
    size_t len = 0;
    while (sqlite3_step(s) == SQLITE_ROW && len < sizeof(got))
        len += (size_t)snprintf(got + len, sizeof(got) - len, "%s\n",
                                (const char *)sqlite3_column_text(s, 0));
    sqlite3_finalize(s);
    sqlite3_close(db);
    assert_string_equal(got, want);
}

static void run_is_stored_whole(void **state)
{
    (void)state;
    struct fixture f;
    struct rf_store st;
    struct rf_error err;
    int64_t run = 0;
    fixture_init(&f);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
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
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), 0);
    /* Break the last transfer: no destinations, so its CHECK fails after the run, tensors
     * and boxes were inserted. */
    f.plan.transfers[f.plan.n_transfers - 1].dst_count = 0;
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), RF_EDB);
    assert_non_null(strstr(err.msg, "CHECK constraint failed"));
    assert_non_null(strstr(err.msg, path));
    assert_non_null(strstr(err.msg, "transfer"));
    f.plan.transfers[f.plan.n_transfers - 1].dst_count = 1;
    /* A dangling reference is refused before anything is written, naming the row. */
    int32_t box = f.plan.transfers[f.plan.n_transfers - 1].box;
    f.plan.transfers[f.plan.n_transfers - 1].box = 999;
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), RF_EINVAL);
    assert_non_null(strstr(err.msg, "box 999 does not exist"));
    rf_store_close(&st);
    assert_int_equal(query("SELECT count(*) FROM run"), 1);
    assert_int_equal(query("SELECT count(*) FROM box WHERE run_id = 2"), 0);
    assert_int_equal(query("SELECT count(*) FROM tensor WHERE run_id = 2"), 0);
    assert_int_equal(query("SELECT count(*) FROM transfer WHERE run_id = 2"), 0);
    /* The rolled-back statement left the connection usable: the mended plan is stored whole. */
    f.plan.transfers[f.plan.n_transfers - 1].box = box;
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), 0);
    f.plan.transfers[f.plan.n_transfers - 1].dst_count = 0;
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), RF_EDB);
    f.plan.transfers[f.plan.n_transfers - 1].dst_count = 1;
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), 0);
    rf_store_close(&st);
    assert_int_equal(query("SELECT count(*) FROM run"), 3);
    assert_int_equal(query("SELECT count(*) FROM transfer WHERE run_id = 3"),
                     (int64_t)f.plan.n_transfers);
    assert_int_equal(query("SELECT count(*) FROM box WHERE run_id = 3"), (int64_t)f.plan.n_boxes);
    fixture_release(&f);
}

/* rf_run_info.more writes inside the run's transaction: it sees the run's id and its rows
 * are kept with the run; when it fails, the run and every row of it are rolled back. */
struct more_ctx {
    int64_t seen_run;
    int fail;
};

static int write_more(struct rf_store *st, int64_t run, void *ctx, struct rf_error *err)
{
    struct more_ctx *m = ctx;
    char sql[160];
    m->seen_run = run;
    snprintf(sql, sizeof(sql), "UPDATE run SET label = 'more' WHERE id = %lld", (long long)run);
    if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return rf_error_set(err, RF_EDB, "update failed");
    if (m->fail)
        return rf_error_set(err, RF_EINVAL, "more: refused on purpose");
    return 0;
}

static void more_rows_share_the_run_transaction(void **state)
{
    (void)state;
    struct fixture f;
    struct rf_store st;
    struct rf_error err;
    struct more_ctx m = {0};
    struct rf_store_rows more = {.write = write_more, .ctx = &m};
    int64_t run = 0;
    fixture_init(&f);
    f.info.more = &more;
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), 0);
    assert_int_equal(m.seen_run, run);
    m.fail = 1;
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), RF_EINVAL);
    assert_string_equal(err.msg, "more: refused on purpose");
    assert_int_equal(m.seen_run, 2);
    rf_store_close(&st);
    assert_int_equal(query("SELECT count(*) FROM run"), 1);
    assert_int_equal(query("SELECT count(*) FROM run WHERE id = 1 AND label = 'more'"), 1);
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
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    rf_store_close(&st);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA user_version = 99", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), RF_EDB);
    assert_non_null(strstr(err.msg, "schema version 99 is newer than this refit"));
    teardown(NULL);

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "CREATE TABLE x(y)", NULL, NULL, NULL);
    sqlite3_close(db);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), RF_EDB);
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
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
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

/* A side placed domain by domain (schema 7) round-trips: engines of 2 in domains of 3 from
 * GPU 3 (GPUs 3-4 and 6-7, 5 idle) store placement 'domain', domain_gpus 3 and span 5, and
 * load back with the same mesh; a span edited since is refused rather than replayed on
 * other GPUs. */
static void placement_is_stored_and_rebuilt(void **state)
{
    (void)state;
    struct fixture f;
    struct rf_store st;
    struct rf_error err;
    struct rf_stored_run r;
    int64_t run = 0;
    fixture_init(&f);
    rf_plan_release(&f.plan);
    free(f.in.layer_stage);
    f.in.tp = 2;
    f.in.gpus = 4;
    f.in.first_gpu = 3;
    f.in.domain_gpus = 3;
    assert_int_equal(rf_side_init(&f.in, 1, &err), 0);
    assert_int_equal(rf_plan_build(&f.plan, &f.m, &f.tr, &f.in, RF_STRAT_RESHARD, NULL, NULL, &err),
                     0);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    assert_int_equal(rf_store_save_run(&st, &f.info, &f.plan, &f.sim, &run, &err), 0);
    assert_int_equal(query("SELECT count(*) FROM side WHERE side = 'infer' AND "
                           "placement = 'domain' AND domain_gpus = 3 AND span = 5 AND gpus = 4"),
                     1);
    assert_int_equal(query("SELECT count(*) FROM side WHERE side = 'train' AND "
                           "placement = 'packed' AND domain_gpus = 0 AND span = 2"),
                     1);
    assert_int_equal(query("SELECT count(*) FROM transfer_each WHERE dst_gpu = 5"), 0);
    if (rf_store_load_run(&st, run, &r, &err) < 0)
        fail_msg("%s", err.msg);
    assert_int_equal(r.infer.domain_gpus, 3);
    assert_true(r.infer.place.gaps);
    assert_int_equal(r.infer.place.span, 5);
    assert_int_equal(r.infer.dense.ndim, 4);
    assert_int_equal(r.infer.dense.stride[0], 3);
    assert_int_equal(r.infer.dense.size[0], 2);
    rf_stored_run_release(&r);
    rf_store_close(&st);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(
        sqlite3_exec(db, "UPDATE side SET span = 4 WHERE side = 'infer'", NULL, NULL, NULL),
        SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_EXISTING, &err), 0);
    assert_int_equal(rf_store_load_run(&st, run, &r, &err), RF_EINVAL);
    assert_string_equal(err.msg, "run 1: the infer side spans 4 GPUs, rebuilt it spans 5");
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
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    assert_int_equal(query("PRAGMA user_version"), RF_STORE_SCHEMA_VERSION);
    assert_int_equal(query("SELECT count(*) FROM run WHERE rounds IS NULL"), 1);
    assert_int_equal(query("SELECT count(*) FROM transfer_each WHERE run_id = 1"),
                     query("SELECT transfers FROM run WHERE id = 1"));
    fixture_init(&fx);
    assert_int_equal(rf_store_save_run(&st, &fx.info, &fx.plan, &fx.sim, &run, &err), 0);
    rf_store_close(&st);
    assert_int_equal(run, 2);
    assert_int_equal(query("SELECT count(*) FROM side WHERE run_id = 2"), 2);
    fixture_release(&fx);
}

/* A file written by schema version 5 (t/data/store/v5.sql: a simulated run and refit-exec's
 * measurement of it, before exec_config) is migrated in place: the old measurement keeps
 * its times with exec_config NULL, measured_run shows the new column, and a new measurement
 * stores how it ran. */
static void version_5_file_is_migrated(void **state)
{
    (void)state;
    char sqlpath[4096];
    const char *srcdir = getenv("SRCDIR");
    snprintf(sqlpath, sizeof(sqlpath), "%s/t/data/store/v5.sql", srcdir ? srcdir : ".");
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
    assert_int_equal(query("PRAGMA user_version"), 5);
    assert_int_equal(query("SELECT count(*) FROM pragma_table_info('measurement') "
                           "WHERE name = 'exec_config'"),
                     0);

    struct rf_store st;
    struct rf_error err;
    int64_t id = 0;
    assert_int_equal(rf_store_open(&st, path, RF_STORE_EXISTING, &err), 0);
    assert_int_equal(query("PRAGMA user_version"), RF_STORE_SCHEMA_VERSION);
    assert_int_equal(query("SELECT count(*) FROM measured_run WHERE measurement_id = 1 AND "
                           "exec_config IS NULL AND seconds > 0 AND bytes_verified = 8655360"),
                     1);
    assert_int_equal(query("SELECT count(*) FROM measured_round WHERE measurement_id = 1"), 7);
    /* Sides stored before schema 7 have no placement: packed, as every side was then. */
    assert_int_equal(query("SELECT count(*) FROM side WHERE run_id = 1 AND placement IS NULL "
                           "AND domain_gpus IS NULL AND span IS NULL"),
                     2);
    struct rf_stored_run old;
    if (rf_store_load_run(&st, 1, &old, &err) < 0)
        fail_msg("%s", err.msg);
    assert_true(old.infer.domain_gpus == 0 && !old.infer.place.gaps &&
                old.infer.place.span == old.infer.gpus);
    rf_stored_run_release(&old);
    struct rf_measurement m = {.run_id = 1,
                               .backend = "nccl",
                               .world_size = 2,
                               .iters = 3,
                               .warmup = 1,
                               .status = "ok",
                               .seconds = 0.5,
                               .seconds_min = 0.4,
                               .seconds_max = 0.6,
                               .exec_config = "nccl blocking=1 fp8=kernel fill=device nvcc=13.0"};
    assert_int_equal(rf_store_measurement_begin(&st, &m, &id, &err), 0);
    assert_int_equal(rf_store_measurement_finish(&st, id, &m, &err), 0);
    rf_store_close(&st);
    assert_int_equal(id, 2);
    assert_int_equal(query("SELECT count(*) FROM measured_run WHERE measurement_id = 2 AND "
                           "exec_config = 'nccl blocking=1 fp8=kernel fill=device nvcc=13.0'"),
                     1);
}

/* A file written by schema version 6 (t/data/store/v6.sql: a simulated run and a
 * measurement of it, before runs described themselves) is migrated in place: its run has no
 * description and no memory rows (run_memory shows NULLs and loads NULL), and a new run stores
 * both. */
static void version_6_file_is_migrated(void **state)
{
    (void)state;
    char sqlpath[4096];
    const char *srcdir = getenv("SRCDIR");
    snprintf(sqlpath, sizeof(sqlpath), "%s/t/data/store/v6.sql", srcdir ? srcdir : ".");
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
    assert_int_equal(query("PRAGMA user_version"), 6);

    struct rf_store st;
    struct rf_error err;
    struct rf_stored_run r;
    struct fixture fx;
    int64_t run = 0;
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    assert_int_equal(query("PRAGMA user_version"), RF_STORE_SCHEMA_VERSION);
    assert_int_equal(query("SELECT count(*) FROM run_memory WHERE run_id = 1 AND "
                           "train_memory_bytes IS NULL AND memory_overcommitted IS NULL"),
                     1);
    assert_int_equal(query("SELECT count(*) FROM measured_run WHERE run_id = 1 AND "
                           "exec_config = 'mpi fill=host'"),
                     1);
    assert_int_equal(rf_store_load_run(&st, 1, &r, &err), 0);
    assert_null(r.scenario_json);
    rf_stored_run_release(&r);
    fixture_init(&fx);
    struct rf_side_memory mt = {
        .worst = {.gpu = 0, .weights = 10, .grads = 10, .optimizer = 60, .staging = 4, .total = 84},
        .hbm_bytes = 100,
        .budget_bytes = 100,
        .headroom_bytes = 16,
        .fits = true};
    struct rf_side_memory mi = {.worst = {.gpu = 3, .weights = 95, .staging = 4, .total = 99},
                                .hbm_bytes = 100,
                                .budget_bytes = 90,
                                .headroom_bytes = -9,
                                .fits = false};
    fx.info.scenario_json = "{\"version\":1}";
    fx.sim.mem_train = &mt;
    fx.sim.mem_infer = &mi;
    assert_int_equal(rf_store_save_run(&st, &fx.info, &fx.plan, &fx.sim, &run, &err), 0);
    assert_int_equal(run, 2);
    assert_int_equal(query("SELECT count(*) FROM run_memory WHERE run_id = 2 AND "
                           "train_memory_bytes = 84 AND train_budget_bytes = 100 AND "
                           "infer_memory_bytes = 99 AND infer_budget_bytes = 90 AND "
                           "infer_kv_headroom_bytes = -9 AND memory_overcommitted = 1"),
                     1);
    assert_int_equal(query("SELECT optimizer_bytes + 1000 * gpu FROM memory WHERE run_id = 2 "
                           "AND side = 'train'"),
                     60);
    assert_int_equal(query("SELECT weights_bytes + 1000 * gpu + 100000 * fits FROM memory "
                           "WHERE run_id = 2 AND side = 'infer'"),
                     3095);
    assert_int_equal(rf_store_load_run(&st, 2, &r, &err), 0);
    assert_string_equal(r.scenario_json, "{\"version\":1}");
    rf_stored_run_release(&r);
    rf_store_close(&st);
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
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
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
                               .mpi_version = "Open MPI v4.1.4",
                               .exec_config = "mpi fill=host"};
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
                           "bytes_verified = 1234 AND measurement_id = 1 AND run_id = 1 AND "
                           "exec_config = 'mpi fill=host'"),
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

static void write_file(const char *p, const char *text)
{
    FILE *f = fopen(p, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static bool exists(const char *suffix)
{
    char p[96];
    snprintf(p, sizeof(p), "%s%s", path, suffix);
    return access(p, F_OK) == 0;
}

/* rf_error_set may wrap the message it overwrites (formatted aside, not into itself). */
static void error_may_wrap_its_own_message(void **state)
{
    (void)state;
    struct rf_error err;
    rf_error_set(&err, RF_EDB, "file is not a database");
    assert_int_equal(rf_error_set(&err, RF_EINVAL, "x.db: not a refit database (%s)", err.msg),
                     RF_EINVAL);
    assert_string_equal(err.msg, "x.db: not a refit database (file is not a database)");
    assert_int_equal(err.code, RF_EINVAL);
}

/* A text file given as the database: one clear line naming it, and the file untouched. */
static void text_file_is_not_a_refit_database(void **state)
{
    (void)state;
    struct rf_store st;
    struct rf_error err;
    char want[160];
    write_file(path, "name,value\nnot,sqlite\n");
    snprintf(want, sizeof(want), "%s: not a refit database (file is not a database)", path);
    for (int flags = RF_STORE_CREATE; flags <= RF_STORE_READONLY; flags <<= 1) {
        assert_int_equal(rf_store_open(&st, path, flags, &err), RF_EDB);
        assert_string_equal(err.msg, want);
        assert_null(st.db);
    }
    struct stat sb;
    assert_int_equal(stat(path, &sb), 0);
    assert_int_equal(sb.st_size, (int64_t)strlen("name,value\nnot,sqlite\n"));
    assert_false(exists("-wal"));
}

/* Tables but user_version 0: someone else's file (even with refit's application_id), never
 * migrated into. An empty file is initialised. */
static void foreign_tables_are_never_migrated_into(void **state)
{
    (void)state;
    struct rf_store st;
    struct rf_error err;
    char want[160];
    sqlite3 *db;
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db,
                                  "CREATE TABLE run(id, note); PRAGMA application_id = 1380271700;",
                                  NULL, NULL, NULL),
                     SQLITE_OK);
    sqlite3_close(db);
    snprintf(want, sizeof(want), "%s: has tables but is not a refit database", path);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), RF_EDB);
    assert_string_equal(err.msg, want);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_EXISTING, &err), RF_EDB);
    assert_string_equal(err.msg, want);
    assert_int_equal(query("SELECT count(*) FROM sqlite_schema"), 1);
    assert_int_equal(query("PRAGMA user_version"), 0);
    teardown(NULL);

    write_file(path, "");
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    rf_store_close(&st);
    assert_int_equal(query("PRAGMA user_version"), RF_STORE_SCHEMA_VERSION);
}

/* EXISTING and READONLY never create a file: a typo is an error naming it. */
static void existing_file_is_required(void **state)
{
    (void)state;
    struct rf_store st;
    struct rf_error err;
    char want[160];
    snprintf(want, sizeof(want), "%s: no such file", path);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_EXISTING, &err), RF_EIO);
    assert_string_equal(err.msg, want);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_READONLY, &err), RF_EIO);
    assert_string_equal(err.msg, want);
    assert_false(exists(""));
    write_file(path, "");
    snprintf(want, sizeof(want), "%s: empty, not a refit database (refit plan or sim creates one)",
             path);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_EXISTING, &err), RF_EDB);
    assert_string_equal(err.msg, want);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE | RF_STORE_READONLY, &err),
                     RF_EINVAL);
}

/* A read-only open sets no journal mode and migrates nothing: a database in DELETE mode
 * keeps its bytes and mtime and gets no -wal or -shm file; one that needs a migration says
 * how to get it; nothing can be written through it. */
static void readonly_open_changes_nothing(void **state)
{
    (void)state;
    struct fixture f;
    struct rf_store st;
    struct rf_error err;
    struct rf_stored_run r;
    struct stat before, after;
    int64_t run = 0;
    char want[256];
    sqlite3 *db;
    static char bytes0[1 << 16], bytes1[1 << 16];
    fixture_init(&f);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), 0);
    rf_store_close(&st);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_false(exists("-wal"));
    assert_int_equal(stat(path, &before), 0);
    FILE *fp = fopen(path, "rb");
    size_t n0 = fread(bytes0, 1, sizeof(bytes0), fp);
    fclose(fp);

    assert_int_equal(rf_store_open(&st, path, RF_STORE_READONLY, &err), 0);
    assert_int_equal(rf_store_load_run(&st, run, &r, &err), 0);
    assert_int_equal(r.plan.n_transfers, f.plan.n_transfers);
    rf_stored_run_release(&r);
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), RF_EDB);
    snprintf(want, sizeof(want),
             "%s: cannot write it (attempt to write a readonly database): the file or its "
             "folder is read-only",
             path);
    assert_string_equal(err.msg, want);
    rf_store_close(&st);
    assert_false(exists("-wal"));
    assert_false(exists("-shm"));
    assert_false(exists("-journal"));
    assert_int_equal(stat(path, &after), 0);
    assert_int_equal(after.st_mtim.tv_sec, before.st_mtim.tv_sec);
    assert_int_equal(after.st_mtim.tv_nsec, before.st_mtim.tv_nsec);
    fp = fopen(path, "rb");
    size_t n1 = fread(bytes1, 1, sizeof(bytes1), fp);
    fclose(fp);
    assert_int_equal(n0, n1);
    assert_memory_equal(bytes0, bytes1, n0);

    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    sqlite3_exec(db, "PRAGMA user_version = 3", NULL, NULL, NULL);
    sqlite3_close(db);
    snprintf(want, sizeof(want),
             "%s: schema version 3 is older than this refit (%d): run refit plan/sim on it once "
             "to upgrade, or open it writable",
             path, RF_STORE_SCHEMA_VERSION);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_READONLY, &err), RF_EDB);
    assert_string_equal(err.msg, want);
    assert_int_equal(query("PRAGMA user_version"), 3);
    fixture_release(&f);
}

/* Another process holding the write lock past the busy timeout: the error names the file,
 * the cause and the wait, with its own code (refit-exec retries on it). */
static void lock_error_names_the_file(void **state)
{
    (void)state;
    struct fixture f;
    struct rf_store st;
    struct rf_error err;
    int64_t run = 0, id = 0;
    char want[256];
    sqlite3 *db;
    fixture_init(&f);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    assert_true(st.busy_seconds == RF_STORE_BUSY_SECONDS);
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), 0);
    struct rf_measurement m = {.run_id = run,
                               .backend = "mpi",
                               .world_size = 2,
                               .iters = 1,
                               .status = "failed",
                               .seconds = -1,
                               .seconds_min = -1,
                               .seconds_max = -1};
    assert_int_equal(rf_store_measurement_begin(&st, &m, &id, &err), 0);
    assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
    rf_store_set_busy_timeout(&st, 0.2);
    snprintf(want, sizeof(want),
             "%s: database is locked (another refit is writing it; waited 0.2 s)", path);
    assert_int_equal(rf_store_save_plan(&st, &f.info, &f.plan, &run, &err), RF_EBUSY);
    assert_string_equal(err.msg, want);
    m.status = "ok";
    assert_int_equal(rf_store_measurement_finish(&st, id, &m, &err), RF_EBUSY);
    assert_string_equal(err.msg, want);
    assert_int_equal(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);
    assert_int_equal(rf_store_measurement_finish(&st, id, &m, &err), 0);
    rf_store_close(&st);
    assert_int_equal(query("SELECT count(*) FROM run"), 1);
    fixture_release(&f);
}

/* link_load keeps only links that carried bytes or were busy: a missing row means zero. */
static void idle_links_have_no_row(void **state)
{
    (void)state;
    struct fixture f;
    struct rf_store st;
    struct rf_error err;
    int64_t run = 0;
    struct rf_cluster c = {.name = "t", .source = "t", .nodes = 1, .gpus_per_node = 4};
    struct rf_link links[6] = {{RF_LINK_NVL_OUT, 0, 0, 1e9}, {RF_LINK_NVL_OUT, 1, 0, 1e9},
                               {RF_LINK_NVL_IN, 2, 0, 1e9},  {RF_LINK_NVL_IN, 3, 0, 1e9},
                               {RF_LINK_COPY, 0, 0, 1e9},    {RF_LINK_COPY, 1, 0, 1e9}};
    struct rf_topology topo = {.cluster = &c, .links = links, .n_links = 6};
    double bytes[6] = {100, 0, 100, 0.2, 0, 0}, busy[6] = {1e-7, 0, 1e-7, 0, 0, 3e-9};
    struct rf_prediction p = {.predicted_s = 1e-6,
                              .bottleneck = -1,
                              .n_links = 6,
                              .link_bytes = bytes,
                              .link_busy = busy};
    fixture_init(&f);
    f.sim.prediction = &p;
    f.sim.topo = &topo;
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    assert_int_equal(rf_store_save_run(&st, &f.info, &f.plan, &f.sim, &run, &err), 0);
    rf_store_close(&st);
    assert_int_equal(query("SELECT count(*) FROM link_load"), 3);
    assert_int_equal(query("SELECT sum(link_id) FROM link_load"), 0 + 2 + 5);
    assert_int_equal(query("SELECT sum(bytes) FROM link_load"), 200);
    fixture_release(&f);
}

/* Loads t/data/store/NAME (a sqlite3 .dump) into path. */
static void load_dump(const char *name)
{
    char sqlpath[4096];
    const char *srcdir = getenv("SRCDIR");
    snprintf(sqlpath, sizeof(sqlpath), "%s/t/data/store/%s", srcdir ? srcdir : ".", name);
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
}

/* A prediction on a one-node cluster with no link rows, for the step tests. */
struct step_fixture {
    struct rf_cluster c;
    struct rf_topology topo;
    struct rf_prediction p;
    struct rf_step s;
};

static void add_phase(struct rf_step *s, enum rf_step_part part, enum rf_step_phase_kind kind,
                      double seconds, int64_t bytes, int64_t calls, const char *mechanism)
{
    struct rf_step_phase *p = &s->phase[s->n++];
    *p = (struct rf_step_phase){
        .part = part, .phase = kind, .seconds = seconds, .bytes = bytes, .calls = calls};
    snprintf(p->mechanism, sizeof(p->mechanism), "%s", mechanism);
}

/* A hybrid step as a profile would give it: the bulk's three phases, the rest's transfer, and
 * finalize listed last although its part ("all") sorts first. */
static void step_fixture_init(struct step_fixture *sf)
{
    memset(sf, 0, sizeof(*sf));
    sf->c = (struct rf_cluster){.name = "t", .source = "t", .nodes = 1, .gpus_per_node = 4};
    sf->topo = (struct rf_topology){.cluster = &sf->c};
    sf->p = (struct rf_prediction){.predicted_s = 0.5, .lower_bound_s = 0.25, .bottleneck = -1};
    add_phase(&sf->s, RF_STEP_BULK, RF_STEP_EXPORT, 0.125, 1000, 3, "stack local experts");
    add_phase(&sf->s, RF_STEP_BULK, RF_STEP_TRANSFER, 0.5, 2000, 2, "reshard p2p");
    add_phase(&sf->s, RF_STEP_BULK, RF_STEP_LOAD, 0.25, 2000, 4, "fused gate/up copy");
    add_phase(&sf->s, RF_STEP_MISC, RF_STEP_TRANSFER, 0.375, 500, 1, "broadcast of the rest");
    add_phase(&sf->s, RF_STEP_ALL, RF_STEP_FINALIZE, 0.25, 0, 1, "process_weights_after_loading");
    snprintf(sf->s.composition, sizeof(sf->s.composition), "bulk, then misc, then finalize");
    sf->s.total_s = 2;
}

/* The names the store writes are the ones it parses back; anything else is -1. */
static void step_names_round_trip(void **state)
{
    (void)state;
    static const char *const phases[] = {"export",   "transfer", "load",
                                         "finalize", "prepare",  "resume"};
    static const char *const parts[] = {"all", "bulk", "misc"};
    for (int i = 0; i < RF_STEP_PHASE_COUNT; i++) {
        assert_string_equal(rf_step_phase_name((enum rf_step_phase_kind)i), phases[i]);
        assert_int_equal(rf_step_phase_parse(phases[i]), i);
    }
    for (int i = 0; i < RF_STEP_PART_COUNT; i++) {
        assert_string_equal(rf_step_part_name((enum rf_step_part)i), parts[i]);
        assert_int_equal(rf_step_part_parse(parts[i]), i);
    }
    assert_string_equal(rf_step_phase_name(RF_STEP_PHASE_COUNT), "?");
    assert_string_equal(rf_step_part_name((enum rf_step_part) - 1), "?");
    assert_int_equal(rf_step_phase_parse("gather"), -1);
    assert_int_equal(rf_step_phase_parse(NULL), -1);
    assert_int_equal(rf_step_part_parse("All"), -1);
}

/* A step saved with its prediction reads back as it was given (order, every field), the
 * view run_phases gives each phase's share of the step and the framework of the stored
 * scenario, and a profile-free run beside it has no step. */
static void step_is_stored_and_read_back(void **state)
{
    (void)state;
    struct fixture f;
    struct step_fixture sf;
    struct rf_store st;
    struct rf_run_view v;
    struct rf_error err;
    int64_t run = 0, plain = 0;
    fixture_init(&f);
    step_fixture_init(&sf);
    f.sim.prediction = &sf.p;
    f.sim.topo = &sf.topo;
    f.info.scenario_json = "{\"version\": 1, \"framework\": {\"name\": \"nemo-rl\"}}";
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    assert_int_equal(rf_store_save_run(&st, &f.info, &f.plan, &f.sim, &plain, &err), 0);
    f.sim.step = &sf.s;
    assert_int_equal(rf_store_save_run(&st, &f.info, &f.plan, &f.sim, &run, &err), 0);
    rf_store_close(&st);
    assert_int_equal(query("SELECT count(*) FROM predicted_step_phase"), 5);
    assert_int_equal(query("SELECT count(*) FROM prediction WHERE run_id = 1 AND "
                           "step_seconds IS NULL AND step_composition IS NULL"),
                     1);
    assert_int_equal(query("SELECT count(*) FROM prediction WHERE run_id = 2 AND step_seconds = 2 "
                           "AND step_composition = 'bulk, then misc, then finalize'"),
                     1);
    /* 0.375 / 2 = 0.1875 exactly; the framework from run.scenario_json. */
    assert_int_equal(query("SELECT count(*) FROM run_phases WHERE run_id = 2 AND part = 'misc' AND "
                           "phase = 'transfer' AND share_of_step = 0.1875 AND seq = 3 AND "
                           "framework = 'nemo-rl' AND mechanism = 'broadcast of the rest'"),
                     1);
    assert_int_equal(query("SELECT count(*) FROM run_phases WHERE run_id = 1"), 0);

    assert_int_equal(rf_store_open(&st, path, RF_STORE_READONLY, &err), 0);
    assert_int_equal(rf_run_view_load(&st, run, &v, &err), 0);
    assert_true(v.has_step);
    assert_int_equal(v.step.n, sf.s.n);
    assert_true(v.step.total_s == 2);
    assert_string_equal(v.step.composition, sf.s.composition);
    for (size_t i = 0; i < sf.s.n; i++) {
        const struct rf_step_phase *a = &v.step.phase[i], *b = &sf.s.phase[i];
        assert_int_equal(a->part, b->part);
        assert_int_equal(a->phase, b->phase);
        assert_true(a->seconds == b->seconds);
        assert_int_equal(a->bytes, b->bytes);
        assert_int_equal(a->calls, b->calls);
        assert_string_equal(a->mechanism, b->mechanism);
    }
    rf_run_view_release(&v);
    assert_int_equal(rf_run_view_load(&st, plain, &v, &err), 0);
    assert_true(v.has_prediction);
    assert_false(v.has_step);
    assert_int_equal(v.step.n, 0);
    rf_run_view_release(&v);
    rf_store_close(&st);
    fixture_release(&f);
}

/* A bad phase fails inside the run's transaction and leaves nothing of the run: a kind
 * outside the enum (stored as "?", refused by the CHECK), a (part, phase) given twice, a
 * negative time. A step without its prediction, or with more phases than fit, is refused
 * before anything is written. */
static void bad_step_leaves_nothing(void **state)
{
    (void)state;
    struct fixture f;
    struct step_fixture sf;
    struct rf_store st;
    struct rf_error err;
    int64_t run = 0;
    char want[256];
    fixture_init(&f);
    step_fixture_init(&sf);
    f.sim.prediction = &sf.p;
    f.sim.topo = &sf.topo;
    f.sim.step = &sf.s;
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);

    sf.s.phase[1].phase = (enum rf_step_phase_kind)7;
    assert_int_equal(rf_store_save_run(&st, &f.info, &f.plan, &f.sim, &run, &err), RF_EDB);
    snprintf(want, sizeof(want),
             "%s: predicted_step_phase (step phase 1): CHECK constraint failed: phase IN "
             "('export', 'transfer', 'load', 'finalize', 'prepare', 'resume')",
             path);
    assert_string_equal(err.msg, want);
    sf.s.phase[1].phase = RF_STEP_EXPORT; /* bulk export twice */
    assert_int_equal(rf_store_save_run(&st, &f.info, &f.plan, &f.sim, &run, &err), RF_EDB);
    snprintf(want, sizeof(want),
             "%s: predicted_step_phase (step phase 1): UNIQUE constraint failed: "
             "predicted_step_phase.run_id, predicted_step_phase.part, predicted_step_phase.phase",
             path);
    assert_string_equal(err.msg, want);
    sf.s.phase[1].phase = RF_STEP_TRANSFER;
    sf.s.phase[4].seconds = -1;
    assert_int_equal(rf_store_save_run(&st, &f.info, &f.plan, &f.sim, &run, &err), RF_EDB);
    assert_non_null(strstr(err.msg, "(step phase 4): CHECK constraint failed: seconds >= 0"));
    sf.s.phase[4].seconds = 0.25;

    sf.s.n = RF_STEP_PHASES_MAX + 1;
    assert_int_equal(rf_store_save_run(&st, &f.info, &f.plan, &f.sim, &run, &err), RF_EINVAL);
    assert_string_equal(err.msg, "rf_run_sim.step: 17 phases, at most 16");
    sf.s.n = 5;
    f.sim.prediction = NULL;
    assert_int_equal(rf_store_save_run(&st, &f.info, &f.plan, &f.sim, &run, &err), RF_EINVAL);
    assert_string_equal(err.msg, "rf_run_sim.step: a step needs the prediction it extends "
                                 "(rf_run_sim.prediction is NULL)");
    rf_store_close(&st);
    static const char *const tables[] = {"run",
                                         "tensor",
                                         "transfer",
                                         "side",
                                         "prediction",
                                         "predicted_round",
                                         "predicted_step_phase"};
    for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
        char sql[96];
        snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", tables[i]);
        assert_int_equal(query(sql), 0);
    }
    fixture_release(&f);
}

/* A file written by schema version 7 (t/data/store/v7.sql: a simulated, described and
 * measured run, before the step's phases) is migrated in place: its run keeps its prediction,
 * memory, description and measurement and has no step; a new run stores one. */
static void version_7_file_is_migrated(void **state)
{
    (void)state;
    struct fixture f;
    struct step_fixture sf;
    struct rf_store st;
    struct rf_run_view v;
    struct rf_error err;
    int64_t run = 0;
    load_dump("v7.sql");
    assert_int_equal(query("PRAGMA user_version"), 7);
    int64_t pred = query("SELECT CAST(seconds * 1e12 AS INTEGER) FROM prediction WHERE run_id = 1");
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    assert_int_equal(query("PRAGMA user_version"), RF_STORE_SCHEMA_VERSION);
    assert_int_equal(query("SELECT CAST(seconds * 1e12 AS INTEGER) FROM prediction WHERE run_id = "
                           "1 AND step_seconds IS NULL AND step_composition IS NULL"),
                     pred);
    assert_int_equal(query("SELECT count(*) FROM memory WHERE run_id = 1"), 2);
    assert_int_equal(query("SELECT count(*) FROM measured_run WHERE run_id = 1 AND "
                           "exec_config = 'mpi fill=host'"),
                     1);
    assert_int_equal(query("SELECT count(*) FROM run WHERE id = 1 AND "
                           "json_extract(scenario_json, '$.model.name') = 'tiny-llama'"),
                     1);
    assert_int_equal(query("SELECT count(*) FROM run_phases"), 0);
    assert_int_equal(rf_run_view_load(&st, 1, &v, &err), 0);
    assert_true(v.has_prediction && v.has_memory && v.doc != NULL && v.n_meas == 1);
    assert_false(v.has_step);
    rf_run_view_release(&v);
    fixture_init(&f);
    step_fixture_init(&sf);
    f.sim.prediction = &sf.p;
    f.sim.topo = &sf.topo;
    f.sim.step = &sf.s;
    assert_int_equal(rf_store_save_run(&st, &f.info, &f.plan, &f.sim, &run, &err), 0);
    assert_int_equal(run, 2);
    rf_store_close(&st);
    /* No scenario_json: the view's framework is NULL. */
    assert_int_equal(query("SELECT count(*) FROM run_phases WHERE run_id = 2 AND "
                           "framework IS NULL AND step_seconds = 2"),
                     5);
    fixture_release(&f);
}

/* Schema version 9 (reached here from a version 7 file, through 8): every foreign key that
 * does not lead its table's primary key has an index, so deleting a run never scans another
 * run's rows; old runs are stored 'full'; transfer_each expands through `ordinal`, filled to
 * the largest dst_count stored, and still gives every destination once. */
static void version_9_indexes_foreign_keys(void **state)
{
    (void)state;
    struct rf_store st;
    struct rf_error err;
    load_dump("v7.sql");
    int64_t want = query("SELECT sum(dst_count) FROM transfer WHERE run_id = 1");
    assert_true(want > 1);
    assert_int_equal(rf_store_open(&st, path, RF_STORE_CREATE, &err), 0);
    rf_store_close(&st);
    assert_int_equal(query("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN "
                           "('box_tensor', 'transfer_box', 'collective_tensor', 'run_label')"),
                     4);
    assert_int_equal(query("SELECT count(*) FROM run WHERE stored = 'full'"),
                     query("SELECT count(*) FROM run"));
    assert_int_equal(query("SELECT count(*) FROM ordinal"),
                     query("SELECT max(dst_count) FROM transfer"));
    assert_int_equal(query("SELECT count(*) FROM transfer_each WHERE run_id = 1"), want);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(new_file_gets_schema_16_with_every_table_and_view, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(run_is_stored_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(failure_leaves_no_partial_run, setup, teardown),
        cmocka_unit_test_setup_teardown(more_rows_share_the_run_transaction, setup, teardown),
        cmocka_unit_test_setup_teardown(newer_or_foreign_files_are_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(version_1_file_is_migrated, setup, teardown),
        cmocka_unit_test_setup_teardown(version_5_file_is_migrated, setup, teardown),
        cmocka_unit_test_setup_teardown(version_6_file_is_migrated, setup, teardown),
        cmocka_unit_test_setup_teardown(placement_is_stored_and_rebuilt, setup, teardown),
        cmocka_unit_test_setup_teardown(saved_run_loads_back, setup, teardown),
        cmocka_unit_test_setup_teardown(measurements_are_stored, setup, teardown),
        cmocka_unit_test(error_may_wrap_its_own_message),
        cmocka_unit_test_setup_teardown(text_file_is_not_a_refit_database, setup, teardown),
        cmocka_unit_test_setup_teardown(foreign_tables_are_never_migrated_into, setup, teardown),
        cmocka_unit_test_setup_teardown(existing_file_is_required, setup, teardown),
        cmocka_unit_test_setup_teardown(readonly_open_changes_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(lock_error_names_the_file, setup, teardown),
        cmocka_unit_test_setup_teardown(idle_links_have_no_row, setup, teardown),
        cmocka_unit_test(step_names_round_trip),
        cmocka_unit_test_setup_teardown(step_is_stored_and_read_back, setup, teardown),
        cmocka_unit_test_setup_teardown(bad_step_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(version_7_file_is_migrated, setup, teardown),
        cmocka_unit_test_setup_teardown(version_9_indexes_foreign_keys, setup, teardown),
    };
    return cmocka_run_group_tests_name("store", tests, NULL, NULL);
}
