/* The run reader (sim/store.h): a stored run's plan and sides rebuilt for its replay, so
 * every shard can be recomputed with the layout algebra (sim/layout.h). */
#include "store_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Parses "[a, b, c]" into shape; returns the number of dims or -1. */
static int parse_shape(const char *text, int64_t *shape)
{
    int n = 0;
    const char *p = text;
    if (*p++ != '[')
        return -1;
    while (*p && *p != ']' && n < RF_MAX_DIMS) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p)
            return -1;
        shape[n++] = v;
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return *p == ']' ? n : -1;
}

static int enum_col(sqlite3_stmt *q, int col, int (*parse)(const char *, void *), void *out)
{
    const char *s = (const char *)sqlite3_column_text(q, col);
    return s && parse(s, out) == 0 ? 0 : -1;
}

static int p_dtype(const char *s, void *o)
{
    return rf_dtype_parse(s, o);
}
static int p_role(const char *s, void *o)
{
    return rf_role_parse(s, o);
}
static int p_class(const char *s, void *o)
{
    return rf_class_parse(s, o);
}
static int p_strategy(const char *s, void *o)
{
    return rf_strategy_parse(s, o);
}

static int load_side(struct rf_store *st, int64_t id, const char *name, struct rf_side *sd,
                     struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int rc;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT kind, gpus, first_gpu, tp, cp, pp, dp, ep, etp, edp, replicas,"
                           " fsdp, dtype, stage_layers, coalesce(domain_gpus, 0), span"
                           " FROM side WHERE run_id = ? AND side = ?",
                           -1, &q, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, "side");
    sqlite3_bind_int64(q, 1, id);
    sqlite3_bind_text(q, 2, name, -1, SQLITE_STATIC);
    if (sqlite3_step(q) != SQLITE_ROW) {
        rc = rf_error_set(err, RF_EINVAL, "run %lld has no %s side (planned before schema 2?)",
                          (long long)id, name);
        goto out;
    }
    memset(sd, 0, sizeof(*sd));
    const char *kind = (const char *)sqlite3_column_text(q, 0);
    sd->kind = kind && strcmp(kind, "megatron") == 0 ? RF_SIDE_MEGATRON : RF_SIDE_VLLM;
    int64_t *v[] = {&sd->gpus, &sd->first_gpu, &sd->tp,  &sd->cp,  &sd->pp,
                    &sd->dp,   &sd->ep,        &sd->etp, &sd->edp, &sd->replicas};
    for (int i = 0; i < 10; i++)
        *v[i] = sqlite3_column_int64(q, 1 + i);
    sd->fsdp = sqlite3_column_int(q, 11) != 0;
    sd->domain_gpus = sqlite3_column_int64(q, 14);
    if (enum_col(q, 12, p_dtype, &sd->dtype) < 0 || sd->pp < 1) {
        rc = rf_error_set(err, RF_EINVAL, "run %lld: malformed %s side", (long long)id, name);
        goto out;
    }
    sd->stage_layers = calloc((size_t)sd->pp, sizeof(int));
    if (!sd->stage_layers) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    const char *p = (const char *)sqlite3_column_text(q, 13);
    int layers = 0;
    for (int64_t i = 0; i < sd->pp; i++) {
        char *end;
        sd->stage_layers[i] = p ? (int)strtol(p, &end, 10) : 0;
        layers += sd->stage_layers[i];
        p = p && *end == ',' ? end + 1 : NULL;
    }
    if ((rc = rf_side_init(sd, layers, err)) < 0)
        goto out;
    /* The stored span is what the planner used; one rebuilt otherwise would replay on other
     * GPUs. */
    if (sqlite3_column_type(q, 15) != SQLITE_NULL && sqlite3_column_int64(q, 15) != sd->place.span)
        rc = rf_error_set(
            err, RF_EINVAL, "run %lld: the %s side spans %lld GPUs, rebuilt it spans %lld",
            (long long)id, name, (long long)sqlite3_column_int64(q, 15), (long long)sd->place.span);
out:
    sqlite3_finalize(q);
    return rc;
}

/* The run's description, NULL when it was stored before schema 7. */
static int load_description(struct rf_store *st, int64_t id, char **out, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int rc = 0;
    *out = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT scenario_json FROM run WHERE id = ?", -1, &q, NULL) !=
        SQLITE_OK)
        return rf_store_db_error(st, err, "run.scenario_json");
    sqlite3_bind_int64(q, 1, id);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL &&
        !(*out = strdup((const char *)sqlite3_column_text(q, 0))))
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
    sqlite3_finalize(q);
    return rc;
}

/* Runs one query and hands each row to `row`; counts rows first to size arrays. A row that
 * returns RF_ENOMEM ran out of memory; any other negative code means a malformed row. */
static int load_rows(struct rf_store *st, const char *sql, int64_t id, void *ctx,
                     int (*row)(sqlite3_stmt *, void *, size_t), size_t *n, const char *what,
                     struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int rc = 0, s;
    size_t i = 0;
    if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, what);
    sqlite3_bind_int64(q, 1, id);
    while ((s = sqlite3_step(q)) == SQLITE_ROW && i < *n) {
        if (sqlite3_column_int64(q, 0) != (int64_t)i) {
            rc =
                rf_error_set(err, RF_EINVAL, "run %lld: %s ids are not dense", (long long)id, what);
            goto out;
        }
        if ((rc = row(q, ctx, i++)) < 0) {
            rc = rc == RF_ENOMEM ? rf_error_set(err, RF_ENOMEM, "out of memory")
                                 : rf_error_set(err, RF_EINVAL, "run %lld: malformed %s %zu",
                                                (long long)id, what, i - 1);
            goto out;
        }
    }
    if (s != SQLITE_ROW && s != SQLITE_DONE)
        rc = rf_store_db_error(st, err, what);
    *n = i;
out:
    sqlite3_finalize(q);
    return rc;
}

static int row_tensor(sqlite3_stmt *q, void *ctx, size_t i)
{
    struct rf_plan *p = ctx;
    struct rf_tensor *t = &p->tensors[i];
    const char *name = (const char *)sqlite3_column_text(q, 1);
    if (!(t->name = strdup(name ? name : "")))
        return RF_ENOMEM;
    t->layer = sqlite3_column_int(q, 3);
    t->ndim = parse_shape((const char *)sqlite3_column_text(q, 5), t->shape);
    t->scale_of = sqlite3_column_type(q, 9) == SQLITE_NULL ? -1 : sqlite3_column_int(q, 9);
    if (t->ndim < 1 || enum_col(q, 2, p_role, &t->role) < 0 ||
        enum_col(q, 4, p_class, &t->cls) < 0 || enum_col(q, 6, p_dtype, &t->dtype) < 0 ||
        enum_col(q, 7, p_dtype, &p->wire_dtype[i]) < 0 ||
        enum_col(q, 8, p_strategy, &p->tensor_strategy[i]) < 0)
        return -1;
    if (rf_class_expert(t->cls))
        t->experts = t->shape[0];
    const char *enc = (const char *)sqlite3_column_text(q, 10);
    if (enc && (rf_delta_enc_parse(enc, &t->delta.enc) < 0 ||
                sqlite3_column_type(q, 11) != SQLITE_INTEGER))
        return -1;
    t->delta.ppm = enc ? sqlite3_column_int(q, 11) : 0;
    const char *part = (const char *)sqlite3_column_text(q, 12);
    t->lora = !part ? RF_LORA_NONE : strcmp(part, "A") == 0 ? RF_LORA_A : RF_LORA_B;
    t->lora_merge = sqlite3_column_int(q, 13) != 0;
    return 0;
}

static int row_box(sqlite3_stmt *q, void *ctx, size_t i)
{
    struct rf_plan *p = ctx;
    struct rf_plan_box *b = &p->boxes[i];
    b->tensor = sqlite3_column_int(q, 1);
    for (int d = 0; d < RF_MAX_DIMS; d++) {
        b->box.off[d] = sqlite3_column_int64(q, 2 + d);
        b->box.len[d] = sqlite3_column_int64(q, 6 + d);
    }
    return b->tensor >= 0 && (size_t)b->tensor < p->n_tensors ? 0 : -1;
}

static int row_transfer(sqlite3_stmt *q, void *ctx, size_t i)
{
    struct rf_plan *p = ctx;
    struct rf_transfer *t = &p->transfers[i];
    const char *phase = (const char *)sqlite3_column_text(q, 7);
    t->box = sqlite3_column_int(q, 1);
    t->src = sqlite3_column_int(q, 2);
    t->dst = sqlite3_column_int(q, 3);
    t->dst_count = sqlite3_column_int(q, 4);
    t->dst_stride = sqlite3_column_int(q, 5);
    t->bytes = sqlite3_column_int64(q, 6);
    t->phase = phase && strcmp(phase, "gather") == 0 ? RF_PHASE_GATHER : RF_PHASE_DELIVER;
    if (sqlite3_column_type(q, 8) == SQLITE_NULL)
        return -1; /* unscheduled */
    t->round = sqlite3_column_int(q, 8);
    t->after = sqlite3_column_type(q, 9) == SQLITE_NULL ? -1 : sqlite3_column_int(q, 9);
    t->hop = sqlite3_column_type(q, 10) == SQLITE_NULL ? 0 : sqlite3_column_int(q, 10);
    t->chain = sqlite3_column_int(q, 11) != 0;
    if (t->round + 1 > p->n_rounds)
        p->n_rounds = t->round + 1;
    return t->box >= 0 && (size_t)t->box < p->n_boxes && t->dst_count >= 1 ? 0 : -1;
}

static int row_collective(sqlite3_stmt *q, void *ctx, size_t i)
{
    struct rf_plan *p = ctx;
    struct rf_collective *c = &p->collectives[i];
    c->kind = RF_COLL_BROADCAST;
    c->tensor = sqlite3_column_int(q, 1);
    c->root = sqlite3_column_int(q, 2);
    c->first_gpu = sqlite3_column_int(q, 3);
    c->gpu_count = sqlite3_column_int(q, 4);
    c->gpu_stride = sqlite3_column_int(q, 5);
    c->bytes = sqlite3_column_int64(q, 6);
    if (sqlite3_column_type(q, 7) == SQLITE_NULL)
        return -1;
    c->round = sqlite3_column_int(q, 7);
    if (c->round + 1 > p->n_rounds)
        p->n_rounds = c->round + 1;
    return c->tensor >= 0 && (size_t)c->tensor < p->n_tensors ? 0 : -1;
}

static int count_rows(struct rf_store *st, const char *table, int64_t id, size_t *n,
                      struct rf_error *err)
{
    char sql[128];
    sqlite3_stmt *q = NULL;
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE run_id = ?", table);
    if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK)
        return rf_store_db_error(st, err, table);
    sqlite3_bind_int64(q, 1, id);
    int rc = sqlite3_step(q) == SQLITE_ROW ? 0 : rf_store_db_error(st, err, table);
    *n = (size_t)sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return rc;
}

int rf_store_load_run(struct rf_store *st, int64_t id, struct rf_stored_run *run,
                      struct rf_error *err)
{
    struct rf_plan *p = &run->plan;
    sqlite3_stmt *q = NULL;
    int rc;

    memset(run, 0, sizeof(*run));
    run->id = id;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT model, strategy, staging_bytes, rounds, model_params,"
                           " model_bytes, chunk_bytes, relay_ring, relay_fanout, relay_depth,"
                           " net_channels_per_peer, stored, scenario FROM run WHERE id = ?",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = rf_store_db_error(st, err, "run");
        goto out;
    }
    sqlite3_bind_int64(q, 1, id);
    if (sqlite3_step(q) != SQLITE_ROW) {
        rc = rf_error_set(err, RF_EINVAL, "no run %lld in this database", (long long)id);
        goto out;
    }
    if (sqlite3_column_text(q, 11) &&
        strcmp((const char *)sqlite3_column_text(q, 11), "summary") == 0) {
        const char *scenario = (const char *)sqlite3_column_text(q, 12);
        rc = rf_error_set(err, RF_EINVAL,
                          "run %lld was stored as a summary (no plan): plan it again with refit "
                          "sim %s --store full",
                          (long long)id, scenario ? scenario : "SCENARIO");
        goto out;
    }
    if (sqlite3_column_type(q, 3) == SQLITE_NULL) {
        rc = rf_error_set(err, RF_EINVAL,
                          "run %lld has no schedule (planned before schema 2); plan it again",
                          (long long)id);
        goto out;
    }
    const char *model = (const char *)sqlite3_column_text(q, 0);
    if (!model || enum_col(q, 1, p_strategy, &p->strategy) < 0) {
        rc = rf_error_set(err, RF_EINVAL, "run %lld: malformed run row", (long long)id);
        goto out;
    }
    if (!(run->model = strdup(model))) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    p->staging_bytes = sqlite3_column_int64(q, 2);
    p->model_params = sqlite3_column_int64(q, 4);
    p->model_bytes = sqlite3_column_int64(q, 5);
    /* Before schema 5 nothing relayed within a round: the chunk never applied. */
    p->chunk_bytes =
        sqlite3_column_type(q, 6) == SQLITE_NULL ? p->staging_bytes : sqlite3_column_int64(q, 6);
    p->relay.ring = sqlite3_column_int(q, 7) != 0;
    p->relay.fanout = sqlite3_column_type(q, 8) == SQLITE_NULL ? 1 : sqlite3_column_int(q, 8);
    p->relay.depth = sqlite3_column_int(q, 9);
    p->net_channels_per_peer = sqlite3_column_int(q, 10); /* NULL (before 5): 0, none given */
    sqlite3_finalize(q);
    q = NULL;

    if ((rc = load_description(st, id, &run->scenario_json, err)) < 0 ||
        (rc = load_side(st, id, "train", &run->train, err)) < 0 ||
        (rc = load_side(st, id, "infer", &run->infer, err)) < 0 ||
        (rc = count_rows(st, "tensor", id, &p->n_tensors, err)) < 0 ||
        (rc = count_rows(st, "box", id, &p->n_boxes, err)) < 0 ||
        (rc = count_rows(st, "transfer", id, &p->n_transfers, err)) < 0 ||
        (rc = count_rows(st, "collective", id, &p->n_collectives, err)) < 0)
        goto out;
    p->tensors = calloc(p->n_tensors + 1, sizeof(*p->tensors));
    p->wire_dtype = calloc(p->n_tensors + 1, sizeof(*p->wire_dtype));
    p->tensor_strategy = calloc(p->n_tensors + 1, sizeof(*p->tensor_strategy));
    p->boxes = calloc(p->n_boxes + 1, sizeof(*p->boxes));
    p->transfers = calloc(p->n_transfers + 1, sizeof(*p->transfers));
    p->collectives = calloc(p->n_collectives + 1, sizeof(*p->collectives));
    if (!p->tensors || !p->wire_dtype || !p->tensor_strategy || !p->boxes || !p->transfers ||
        !p->collectives) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    p->cap_boxes = p->n_boxes;
    p->cap_transfers = p->n_transfers;
    p->cap_collectives = p->n_collectives;
    if ((rc = load_rows(st,
                        "SELECT id, name, role, layer, class, shape, dtype, wire_dtype, strategy,"
                        " scale_of, delta_encoding, delta_ppm, lora, lora_merge FROM tensor"
                        " WHERE run_id = ? ORDER BY id",
                        id, p, row_tensor, &p->n_tensors, "tensor", err)) < 0 ||
        (rc = load_rows(st,
                        "SELECT id, tensor_id, off0, off1, off2, off3, len0, len1, len2, len3"
                        " FROM box WHERE run_id = ? ORDER BY id",
                        id, p, row_box, &p->n_boxes, "box", err)) < 0 ||
        (rc = load_rows(st,
                        "SELECT id, box_id, src_gpu, dst_gpu, dst_count, dst_stride, bytes,"
                        " phase, round, after_id, hop, chain FROM transfer WHERE run_id = ?"
                        " ORDER BY id",
                        id, p, row_transfer, &p->n_transfers, "transfer", err)) < 0 ||
        (rc = load_rows(st,
                        "SELECT id, tensor_id, root_gpu, first_gpu, gpu_count, gpu_stride, bytes,"
                        " round FROM collective WHERE run_id = ? ORDER BY id",
                        id, p, row_collective, &p->n_collectives, "collective", err)) < 0)
        goto out;
    rc = 0;
out:
    sqlite3_finalize(q);
    if (rc < 0)
        rf_stored_run_release(run);
    return rc;
}

void rf_stored_run_release(struct rf_stored_run *run)
{
    if (!run)
        return;
    free(run->model);
    free(run->scenario_json);
    rf_plan_release(&run->plan);
    rf_side_release(&run->train);
    rf_side_release(&run->infer);
    memset(run, 0, sizeof(*run));
}
