/* The run writer (sim/store.h): a run and its plan in one transaction, with prepared
 * statements reused row by row (bind, step, reset); any failure rolls the run back. */
#include "store_int.h"

#include "array.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    S_RUN,
    S_TENSOR,
    S_COLL,
    S_ROLE,
    S_SIDE,
    S_ROUND,
    S_DESCRIBE,
    S_ORDINAL,
    S_TRAFFIC,
    S_COUNT
};

static const char *const insert_sql[S_COUNT] = {
    "INSERT INTO run (label, scenario, model, strategy, cluster_system, cluster_nodes,"
    " train_gpus, train_first_gpu, train_layout, train_dtype, infer_gpus, infer_first_gpu,"
    " infer_layout, infer_dtype, model_params, model_bytes, payload_bytes, moved_bytes,"
    " logical_bytes, local_bytes, transfers, collectives, plan_seconds, staging_bytes, rounds,"
    " chunk_bytes, relay_ring, relay_fanout, relay_depth, net_channels_per_peer, stored,"
    " study_id)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO tensor VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO collective (run_id, id, kind, tensor_id, root_gpu, first_gpu, gpu_count,"
    " gpu_stride, bytes, round) VALUES (?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO role_summary VALUES (?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO side (run_id, side, kind, gpus, first_gpu, tp, cp, pp, dp, ep, etp, edp,"
    " replicas, fsdp, dtype, stage_layers, placement, domain_gpus, span)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO round VALUES (?,?,?,?,?,?)",
    "UPDATE run SET scenario_json = ? WHERE id = ?",
    /* transfer_each's integers (schema version 9): 0 .. the run's largest dst_count - 1. */
    "WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i + 1 < ?1)"
    " INSERT OR IGNORE INTO ordinal SELECT i FROM k WHERE ?1 > 0",
    "INSERT INTO gpu_traffic VALUES (?,?,?,?,?,?,?,?)",
};

static void shape_text(const struct rf_tensor *t, char *buf, size_t size)
{
    size_t n = 0;
    n += (size_t)snprintf(buf + n, size - n, "[");
    for (int d = 0; d < t->ndim && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, d ? ", %lld" : "%lld", (long long)t->shape[d]);
    if (n < size)
        snprintf(buf + n, size - n, "]");
}

static int insert_run(struct rf_store *st, sqlite3_stmt *s, const struct rf_run_info *info,
                      const struct rf_plan *plan, int64_t study_id, struct rf_error *err)
{
    char tl[128], il[128];
    int i = 1;
    rf_side_describe(info->train, tl, sizeof(tl));
    rf_side_describe(info->infer, il, sizeof(il));
    rf_store_bind_text(s, i++, info->label);
    rf_store_bind_text(s, i++, info->scenario);
    rf_store_bind_text(s, i++, info->model);
    rf_store_bind_text(s, i++, rf_strategy_name(plan->strategy));
    rf_store_bind_text(s, i++, info->cluster_system);
    if (info->cluster_nodes > 0)
        sqlite3_bind_int64(s, i++, info->cluster_nodes);
    else
        sqlite3_bind_null(s, i++);
    sqlite3_bind_int64(s, i++, info->train->gpus);
    sqlite3_bind_int64(s, i++, info->train->first_gpu);
    rf_store_bind_text(s, i++, tl);
    rf_store_bind_text(s, i++, rf_dtype_name(info->train->dtype));
    sqlite3_bind_int64(s, i++, info->infer->gpus);
    sqlite3_bind_int64(s, i++, info->infer->first_gpu);
    rf_store_bind_text(s, i++, il);
    rf_store_bind_text(s, i++, rf_dtype_name(info->infer->dtype));
    sqlite3_bind_int64(s, i++, plan->model_params);
    sqlite3_bind_int64(s, i++, plan->model_bytes);
    sqlite3_bind_int64(s, i++, plan->total.payload_bytes);
    sqlite3_bind_int64(s, i++, plan->total.moved_bytes);
    sqlite3_bind_int64(s, i++, plan->total.logical_bytes);
    sqlite3_bind_int64(s, i++, plan->total.local_bytes);
    sqlite3_bind_int64(s, i++, plan->total.transfers);
    sqlite3_bind_int64(s, i++, plan->total.collectives);
    sqlite3_bind_double(s, i++, info->plan_seconds);
    sqlite3_bind_int64(s, i++, plan->staging_bytes);
    sqlite3_bind_int(s, i++, plan->n_rounds);
    sqlite3_bind_int64(s, i++, plan->chunk_bytes);
    sqlite3_bind_int(s, i++, plan->relay.ring);
    sqlite3_bind_int(s, i++, plan->relay.fanout);
    sqlite3_bind_int(s, i++, plan->relay.depth);
    sqlite3_bind_int(s, i++, plan->net_channels_per_peer);
    sqlite3_bind_text(s, i++, info->summary ? "summary" : "full", -1, SQLITE_STATIC);
    if (study_id > 0)
        sqlite3_bind_int64(s, i++, study_id);
    else
        sqlite3_bind_null(s, i++);
    return rf_store_step(st, s, err, "run");
}

static int insert_side(struct rf_store *st, sqlite3_stmt *q, int64_t run, const char *name,
                       const struct rf_side *sd, struct rf_error *err)
{
    char layers[4096];
    size_t n = 0;
    layers[0] = '\0';
    for (int64_t i = 0; i < sd->pp && n < sizeof(layers); i++)
        n +=
            (size_t)snprintf(layers + n, sizeof(layers) - n, i ? ",%d" : "%d", sd->stage_layers[i]);
    if (n >= sizeof(layers))
        return rf_error_set(err, RF_EINVAL, "%s: too many pipeline stages to store", name);
    int64_t v[] = {sd->gpus, sd->first_gpu, sd->tp,  sd->cp,       sd->pp,  sd->dp,
                   sd->ep,   sd->etp,       sd->edp, sd->replicas, sd->fsdp};
    sqlite3_bind_int64(q, 1, run);
    rf_store_bind_text(q, 2, name);
    rf_store_bind_text(q, 3, sd->kind == RF_SIDE_MEGATRON ? "megatron" : "vllm");
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        sqlite3_bind_int64(q, 4 + (int)i, v[i]);
    rf_store_bind_text(q, 15, rf_dtype_name(sd->dtype));
    rf_store_bind_text(q, 16, layers);
    rf_store_bind_text(q, 17, sd->domain_gpus > 0 ? "domain" : "packed");
    sqlite3_bind_int64(q, 18, sd->domain_gpus);
    sqlite3_bind_int64(q, 19, sd->place.span);
    return rf_store_step(st, q, err, "side");
}

/* Per-round totals: transfer runs, single transfers, collectives and bytes leaving a GPU. */
static int insert_rounds(struct rf_store *st, sqlite3_stmt *q, int64_t run,
                         const struct rf_plan *plan, struct rf_error *err)
{
    int64_t(*tot)[4] = calloc((size_t)plan->n_rounds + 1, sizeof(*tot));
    int rc = 0;
    if (!tot)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (size_t k = 0; k < plan->n_transfers; k++) {
        const struct rf_transfer *t = &plan->transfers[k];
        tot[t->round][0]++;
        tot[t->round][1] += t->dst_count;
        if (t->src != t->dst || t->dst_count > 1)
            tot[t->round][3] += t->bytes * t->dst_count;
    }
    for (size_t k = 0; k < plan->n_collectives; k++) {
        const struct rf_collective *c = &plan->collectives[k];
        tot[c->round][2]++;
        tot[c->round][3] +=
            c->bytes * (c->gpu_count -
                        (c->root >= c->first_gpu && c->root < c->first_gpu + c->gpu_count ? 1 : 0));
    }
    for (int32_t r = 0; r < plan->n_rounds && rc == 0; r++) {
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int(q, 2, r);
        for (int i = 0; i < 4; i++)
            sqlite3_bind_int64(q, 3 + i, tot[r][i]);
        rc = rf_store_step(st, q, err, "round");
    }
    free(tot);
    return rc;
}

/* A plan's box and transfer rows, as refit_rows yields them (sim/store_rows.c). */
struct plan_rows {
    const struct rf_plan *plan;
    int64_t run;
};

static void box_row(const void *ctx, size_t k, int64_t *v)
{
    const struct plan_rows *pr = ctx;
    const struct rf_plan_box *b = &pr->plan->boxes[k];
    v[0] = pr->run;
    v[1] = (int64_t)k;
    v[2] = b->tensor;
    for (int d = 0; d < RF_MAX_DIMS; d++) {
        v[3 + d] = b->box.off[d];
        v[7 + d] = b->box.len[d];
    }
    v[11] = rf_box_numel(&b->box, RF_MAX_DIMS);
}

static void transfer_row(const void *ctx, size_t k, int64_t *v)
{
    const struct plan_rows *pr = ctx;
    const struct rf_transfer *t = &pr->plan->transfers[k];
    v[0] = pr->run;
    v[1] = (int64_t)k;
    v[2] = t->box;
    v[3] = t->src;
    v[4] = t->dst;
    v[5] = t->dst_count;
    v[6] = t->dst_stride;
    v[7] = t->phase == RF_PHASE_GATHER;
    v[8] = t->bytes;
    v[9] = t->round;
    v[10] = t->after >= 0 ? t->after : RF_ROWS_NULL;
    v[11] = t->hop;
    v[12] = t->chain;
}

/* The plan's own rows: tensors, boxes, transfers, collectives (none for a summary). */
static int insert_plan_rows(struct rf_store *st, sqlite3_stmt **s, int64_t run,
                            const struct rf_plan *plan, struct rf_error *err)
{
    int rc;
    /* A delta tensor's wire bytes are its boxes' encodings (sim/delta.h), counted once per
     * box as a whole tensor's are. */
    int64_t *encoded = NULL;
    for (size_t k = 0; k < plan->n_tensors && !encoded; k++)
        if (plan->tensors[k].delta.enc != RF_DELTA_NONE &&
            !(encoded = calloc(plan->n_tensors, sizeof(*encoded))))
            return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (size_t i = 0; encoded && i < plan->n_boxes; i++) {
        const struct rf_plan_box *b = &plan->boxes[i];
        const struct rf_tensor *t = &plan->tensors[b->tensor];
        if (t->delta.enc != RF_DELTA_NONE)
            encoded[b->tensor] += rf_delta_bytes(&t->delta, rf_box_numel(&b->box, t->ndim),
                                                 rf_dtype_size(plan->wire_dtype[b->tensor]));
    }
    for (size_t k = 0; k < plan->n_tensors; k++) {
        const struct rf_tensor *t = &plan->tensors[k];
        char shape[96];
        sqlite3_stmt *q = s[S_TENSOR];
        shape_text(t, shape, sizeof(shape));
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int64(q, 2, (int64_t)k);
        rf_store_bind_text(q, 3, t->name);
        rf_store_bind_text(q, 4, rf_role_name(t->role));
        sqlite3_bind_int(q, 5, t->layer);
        rf_store_bind_text(q, 6, rf_class_name(t->cls));
        rf_store_bind_text(q, 7, shape);
        sqlite3_bind_int64(q, 8, rf_tensor_numel(t));
        rf_store_bind_text(q, 9, rf_dtype_name(t->dtype));
        rf_store_bind_text(q, 10, rf_dtype_name(plan->wire_dtype[k]));
        sqlite3_bind_int64(q, 11,
                           t->delta.enc != RF_DELTA_NONE
                               ? encoded[k]
                               : rf_dtype_bytes(plan->wire_dtype[k], rf_tensor_numel(t)));
        rf_store_bind_text(q, 12, rf_strategy_name(plan->tensor_strategy[k]));
        if (t->scale_of >= 0)
            sqlite3_bind_int(q, 13, t->scale_of);
        else
            sqlite3_bind_null(q, 13);
        if (t->delta.enc != RF_DELTA_NONE) {
            rf_store_bind_text(q, 14, rf_delta_enc_name(t->delta.enc));
            sqlite3_bind_int(q, 15, t->delta.ppm);
        } else {
            sqlite3_bind_null(q, 14);
            sqlite3_bind_null(q, 15);
        }
        if (t->lora != RF_LORA_NONE) {
            rf_store_bind_text(q, 16, t->lora == RF_LORA_A ? "A" : "B");
            sqlite3_bind_int(q, 17, t->lora_merge);
        } else {
            sqlite3_bind_null(q, 16);
            sqlite3_bind_null(q, 17);
        }
        if ((rc = rf_store_step(st, q, err, "tensor")) < 0) {
            free(encoded);
            return rc;
        }
    }
    free(encoded);
    struct plan_rows pr = {.plan = plan, .run = run};
    if ((rc = rf_store_insert_rows(st,
                                   "INSERT OR ROLLBACK INTO box SELECT c0, c1, c2, c3, c4, c5,"
                                   " c6, c7, c8, c9, c10, c11 FROM refit_rows",
                                   &(struct rf_rows){plan->n_boxes, 12, box_row, &pr}, "box",
                                   err)) < 0 ||
        (rc = rf_store_insert_rows(
             st,
             "INSERT OR ROLLBACK INTO transfer (run_id, id, box_id, src_gpu, dst_gpu, dst_count,"
             " dst_stride, phase, bytes, round, after_id, hop, chain) SELECT c0, c1, c2, c3, c4,"
             " c5, c6, iif(c7, 'gather', 'deliver'), c8, c9, c10, c11, c12 FROM refit_rows",
             &(struct rf_rows){plan->n_transfers, 13, transfer_row, &pr}, "transfer", err)) < 0)
        return rc;
    for (size_t k = 0; k < plan->n_collectives; k++) {
        const struct rf_collective *c = &plan->collectives[k];
        sqlite3_stmt *q = s[S_COLL];
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int64(q, 2, (int64_t)k);
        sqlite3_bind_text(q, 3, "broadcast", -1, SQLITE_STATIC);
        sqlite3_bind_int(q, 4, c->tensor);
        sqlite3_bind_int(q, 5, c->root);
        sqlite3_bind_int(q, 6, c->first_gpu);
        sqlite3_bind_int(q, 7, c->gpu_count);
        sqlite3_bind_int(q, 8, c->gpu_stride);
        sqlite3_bind_int64(q, 9, c->bytes);
        sqlite3_bind_int(q, 10, c->round);
        if ((rc = rf_store_step(st, q, err, "collective")) < 0)
            return rc;
    }
    return 0;
}

/* The tallies per role, kept by a summary too. */
static int insert_roles(struct rf_store *st, sqlite3_stmt **s, int64_t run,
                        const struct rf_plan *plan, struct rf_error *err)
{
    int rc;
    for (int r = 0; r < RF_ROLE_COUNT; r++) {
        const struct rf_tally *t = &plan->role[r];
        sqlite3_stmt *q = s[S_ROLE];
        if (t->tensors == 0)
            continue;
        sqlite3_bind_int64(q, 1, run);
        rf_store_bind_text(q, 2, rf_role_name((enum rf_role)r));
        sqlite3_bind_int64(q, 3, t->tensors);
        sqlite3_bind_int64(q, 4, t->params);
        sqlite3_bind_int64(q, 5, t->payload_bytes);
        sqlite3_bind_int64(q, 6, t->moved_bytes);
        sqlite3_bind_int64(q, 7, t->logical_bytes);
        sqlite3_bind_int64(q, 8, t->local_bytes);
        sqlite3_bind_int64(q, 9, t->transfers);
        sqlite3_bind_int64(q, 10, t->collectives);
        if ((rc = rf_store_step(st, q, err, "role_summary")) < 0)
            return rc;
    }
    return 0;
}

/* The integers transfer_each expands this plan's transfers with (sim/store_schema.c). */
static int insert_ordinals(struct rf_store *st, sqlite3_stmt *q, const struct rf_plan *plan,
                           struct rf_error *err)
{
    int64_t most = 0;
    for (size_t k = 0; k < plan->n_transfers; k++)
        if (plan->transfers[k].dst_count > most)
            most = plan->transfers[k].dst_count;
    for (size_t k = 0; k < plan->n_collectives; k++)
        if (plan->collectives[k].gpu_count > most)
            most = plan->collectives[k].gpu_count;
    sqlite3_bind_int64(q, 1, most);
    return rf_store_step(st, q, err, "ordinal");
}

/* What each GPU sends and receives (gpu_traffic, schema version 11), from the plan in
 * memory: one pass over the runs of transfers and the broadcasts, as transfer_each would
 * expand them, so a summary run has the rows too. */
struct traffic {
    int64_t sent, received, local, broadcast, out, in;
};

static int insert_traffic(struct rf_store *st, sqlite3_stmt *q, int64_t run,
                          const struct rf_plan *plan, struct rf_error *err)
{
    int32_t n = 0;
    for (size_t k = 0; k < plan->n_transfers; k++) {
        const struct rf_transfer *t = &plan->transfers[k];
        int32_t last = t->dst + (t->dst_count - 1) * t->dst_stride;
        n = t->src >= n ? t->src + 1 : n;
        n = t->dst >= n ? t->dst + 1 : n;
        n = last >= n ? last + 1 : n;
    }
    for (size_t k = 0; k < plan->n_collectives; k++) {
        const struct rf_collective *c = &plan->collectives[k];
        int32_t last = c->first_gpu + (c->gpu_count - 1) * c->gpu_stride;
        n = c->root >= n ? c->root + 1 : n;
        n = c->first_gpu >= n ? c->first_gpu + 1 : n;
        n = last >= n ? last + 1 : n;
    }
    if (n == 0)
        return 0;
    struct traffic *g = calloc((size_t)n, sizeof(*g));
    if (!g)
        return rf_error_set(err, RF_ENOMEM, "out of memory for %d GPUs' traffic", (int)n);
    for (size_t k = 0; k < plan->n_transfers; k++) {
        const struct rf_transfer *t = &plan->transfers[k];
        for (int32_t i = 0; i < t->dst_count; i++) {
            int32_t from = rf_transfer_sender(t, i), to = t->dst + i * t->dst_stride;
            if (from == to) {
                g[to].local += t->bytes;
                continue;
            }
            g[from].sent += t->bytes;
            g[from].out++;
            g[to].received += t->bytes;
            g[to].in++;
        }
    }
    for (size_t k = 0; k < plan->n_collectives; k++) {
        const struct rf_collective *c = &plan->collectives[k];
        for (int32_t i = 0; i < c->gpu_count; i++) {
            int32_t m = c->first_gpu + i * c->gpu_stride;
            if (m != c->root)
                g[m].broadcast += c->bytes;
        }
    }
    int rc = 0;
    for (int32_t i = 0; i < n && rc == 0; i++) {
        const struct traffic *x = &g[i];
        if (!x->sent && !x->received && !x->local && !x->broadcast)
            continue;
        int64_t v[] = {run, i, x->sent, x->received, x->local, x->broadcast, x->out, x->in};
        for (int c = 0; c < 8; c++)
            sqlite3_bind_int64(q, c + 1, v[c]);
        rc = rf_store_step(st, q, err, "gpu_traffic");
    }
    free(g);
    return rc;
}

/* A stored run's transfers and broadcasts, read back as far as insert_traffic needs them. */
static int load_traffic_rows(struct rf_store *st, sqlite3_stmt *tq, sqlite3_stmt *cq, int64_t run,
                             struct rf_plan *p, size_t *cap_t, size_t *cap_c, struct rf_error *err)
{
    int rc;
    p->n_transfers = p->n_collectives = 0;
    sqlite3_bind_int64(tq, 1, run);
    while ((rc = sqlite3_step(tq)) == SQLITE_ROW) {
        if ((rc = RF_GROW(p->transfers, *cap_t, p->n_transfers + 1, err)) < 0) {
            sqlite3_reset(tq);
            return rc;
        }
        p->transfers[p->n_transfers++] = (struct rf_transfer){
            .src = sqlite3_column_int(tq, 0),
            .dst = sqlite3_column_int(tq, 1),
            .dst_count = sqlite3_column_int(tq, 2),
            .dst_stride = sqlite3_column_int(tq, 3),
            .chain = (uint8_t)sqlite3_column_int(tq, 4),
            .bytes = sqlite3_column_int64(tq, 5),
        };
    }
    sqlite3_reset(tq);
    if (rc != SQLITE_DONE)
        return rf_store_db_error(st, err, "transfer");
    sqlite3_bind_int64(cq, 1, run);
    while ((rc = sqlite3_step(cq)) == SQLITE_ROW) {
        if ((rc = RF_GROW(p->collectives, *cap_c, p->n_collectives + 1, err)) < 0) {
            sqlite3_reset(cq);
            return rc;
        }
        p->collectives[p->n_collectives++] = (struct rf_collective){
            .root = sqlite3_column_int(cq, 0),
            .first_gpu = sqlite3_column_int(cq, 1),
            .gpu_count = sqlite3_column_int(cq, 2),
            .gpu_stride = sqlite3_column_int(cq, 3),
            .bytes = sqlite3_column_int64(cq, 4),
        };
    }
    sqlite3_reset(cq);
    return rc == SQLITE_DONE ? 0 : rf_store_db_error(st, err, "collective");
}

int rf_store_fill_traffic(struct rf_store *st, struct rf_error *err)
{
    static const char *const sql[] = {
        "SELECT id FROM run ORDER BY id",
        "SELECT src_gpu, dst_gpu, dst_count, dst_stride, coalesce(chain, 0), bytes"
        " FROM transfer WHERE run_id = ?",
        "SELECT root_gpu, first_gpu, gpu_count, gpu_stride, bytes FROM collective"
        " WHERE run_id = ?",
        "INSERT INTO gpu_traffic VALUES (?,?,?,?,?,?,?,?)",
    };
    sqlite3_stmt *q[4] = {NULL};
    struct rf_plan p = {0};
    size_t cap_t = 0, cap_c = 0;
    int rc = 0;
    for (int i = 0; i < 4; i++)
        if (sqlite3_prepare_v2(st->db, sql[i], -1, &q[i], NULL) != SQLITE_OK) {
            rc = rf_store_db_error(st, err, "gpu_traffic");
            goto out;
        }
    while ((rc = sqlite3_step(q[0])) == SQLITE_ROW) {
        int64_t run = sqlite3_column_int64(q[0], 0);
        if ((rc = load_traffic_rows(st, q[1], q[2], run, &p, &cap_t, &cap_c, err)) < 0 ||
            (rc = insert_traffic(st, q[3], run, &p, err)) < 0)
            goto out;
    }
    rc = rc == SQLITE_DONE ? 0 : rf_store_db_error(st, err, "run");
out:
    for (int i = 0; i < 4; i++)
        sqlite3_finalize(q[i]);
    free(p.transfers);
    free(p.collectives);
    return rc;
}

/* The run's description (sim/describe.h), when given. */
static int insert_description(struct rf_store *st, sqlite3_stmt *q, int64_t run,
                              const struct rf_run_info *info, struct rf_error *err)
{
    if (!info->scenario_json)
        return 0;
    rf_store_bind_text(q, 1, info->scenario_json);
    sqlite3_bind_int64(q, 2, run);
    return rf_store_step(st, q, err, "run.scenario_json");
}

/* The references a plan's rows make to each other, checked before anything is written. */
static int check_refs(const struct rf_plan *plan, struct rf_error *err)
{
    for (size_t i = 0; i < plan->n_boxes; i++)
        if (plan->boxes[i].tensor < 0 || (size_t)plan->boxes[i].tensor >= plan->n_tensors)
            return rf_error_set(err, RF_EINVAL, "box %zu: tensor %d does not exist (%zu tensors)",
                                i, (int)plan->boxes[i].tensor, plan->n_tensors);
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        if (t->box < 0 || (size_t)t->box >= plan->n_boxes)
            return rf_error_set(err, RF_EINVAL, "transfer %zu: box %d does not exist (%zu boxes)",
                                i, (int)t->box, plan->n_boxes);
        if (t->after >= (int32_t)i)
            return rf_error_set(err, RF_EINVAL, "transfer %zu: depends on later transfer %d", i,
                                (int)t->after);
    }
    for (size_t i = 0; i < plan->n_collectives; i++)
        if (plan->collectives[i].tensor < 0 ||
            (size_t)plan->collectives[i].tensor >= plan->n_tensors)
            return rf_error_set(err, RF_EINVAL,
                                "collective %zu: tensor %d does not exist (%zu tensors)", i,
                                (int)plan->collectives[i].tensor, plan->n_tensors);
    return 0;
}

int rf_store_save_plan(struct rf_store *st, const struct rf_run_info *info,
                       const struct rf_plan *plan, int64_t *run_id, struct rf_error *err)
{
    sqlite3_stmt *s[S_COUNT] = {NULL};
    bool in_tx = false, fk_off = false;
    int64_t study_id = info->study ? info->study->id : 0;
    int rc;

    /* The rows written here reference only rows written here, by ids assigned here and
     * checked by check_refs, so the per-row foreign key lookups (a fifth of the time for
     * 1.2 M Kimi K3 transfers) are skipped for this transaction; the schema keeps its keys
     * and they are back on for every other write. The pragma is a no-op inside a
     * transaction and is compiled into statements, hence before BEGIN and before they are
     * prepared. */
    if ((rc = check_refs(plan, err)) < 0)
        return rc;
    if ((rc = rf_store_exec(st, "PRAGMA foreign_keys=OFF", err)) < 0)
        goto out;
    fk_off = true;
    for (int i = 0; i < S_COUNT; i++)
        if (sqlite3_prepare_v2(st->db, insert_sql[i], -1, &s[i], NULL) != SQLITE_OK) {
            rc = rf_store_db_error(st, err, "prepare");
            goto out;
        }
    if ((rc = rf_store_exec(st, "BEGIN IMMEDIATE", err)) < 0)
        goto out;
    in_tx = true;
    /* A study's first run writes the study's row (sim/store_study.c says why). */
    if (info->study && study_id == 0 &&
        (rc = rf_store_insert_study(st, info->study, &study_id, err)) < 0)
        goto out;
    if ((rc = insert_run(st, s[S_RUN], info, plan, study_id, err)) < 0)
        goto out;
    *run_id = sqlite3_last_insert_rowid(st->db);
    if ((rc = insert_roles(st, s, *run_id, plan, err)) < 0 ||
        (rc = insert_side(st, s[S_SIDE], *run_id, "train", info->train, err)) < 0 ||
        (rc = insert_side(st, s[S_SIDE], *run_id, "infer", info->infer, err)) < 0)
        goto out;
    if (!info->summary && ((rc = insert_plan_rows(st, s, *run_id, plan, err)) < 0 ||
                           (rc = insert_rounds(st, s[S_ROUND], *run_id, plan, err)) < 0 ||
                           (rc = insert_ordinals(st, s[S_ORDINAL], plan, err)) < 0))
        goto out;
    if ((rc = insert_traffic(st, s[S_TRAFFIC], *run_id, plan, err)) < 0 ||
        (rc = insert_description(st, s[S_DESCRIBE], *run_id, info, err)) < 0)
        goto out;
    if (info->more && (rc = info->more->write(st, *run_id, info->more->ctx, err)) < 0)
        goto out;
    if ((rc = rf_store_exec(st, "COMMIT", err)) < 0)
        goto out;
    in_tx = false;
    /* Only now: a run rolled back takes its study's new row with it. */
    if (info->study)
        info->study->id = study_id;
    /* SQLite's planner joins a view's tables in the order its statistics favour; without
     * them it reads transfer_each filtered by tensor name through all of a run's transfers
     * (1.1 s for Kimi K3's 12 M) instead of the tensor's boxes (7 ms). Sampling at most 1000
     * rows of each index keeps the cost bounded (0.3 s on a 1.1 GB file). The statistics
     * only advise the planner and the run is committed: a failure here changes nothing
     * stored, so it is not the caller's error. */
    sqlite3_exec(st->db, "PRAGMA analysis_limit=1000; ANALYZE", NULL, NULL, NULL);
out:
    if (in_tx)
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    if (fk_off)
        sqlite3_exec(st->db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(s[i]);
    return rc;
}
