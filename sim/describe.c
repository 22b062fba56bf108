/* Runs that describe themselves (sim/describe.h): the resolved scenario as JSON, built from
 * the structs the planner used (so it says what was planned, auto's choices included), the
 * cluster read back from it, and documents compared leaf by leaf. */
#include "describe.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "array.h"
#include "framework.h"
#include "json.h"

static json_t *field_value(const struct rf_cluster *c, const struct rf_cluster_field *f)
{
    const char *p = (const char *)c + f->offset;
    return f->integer ? json_integer(*(const int64_t *)p) : json_real(*(const double *)p);
}

/* The table of f in o (o itself at top level), created when missing. */
static json_t *field_table(json_t *o, const struct rf_cluster_field *f)
{
    if (!f->table)
        return o;
    json_t *t = json_object_get(o, f->table);
    if (!t && json_object_set_new(o, f->table, json_object()) == 0)
        t = json_object_get(o, f->table);
    return t;
}

json_t *rf_cluster_json(const struct rf_cluster *c)
{
    json_t *o = json_object();
    bool bad = !o || json_object_set_new(o, "name", rf_json_text(c->name)) < 0 ||
               json_object_set_new(o, "source", rf_json_text(c->source)) < 0;
    for (size_t i = 0; i < rf_cluster_n_fields && !bad; i++) {
        json_t *t = field_table(o, &rf_cluster_fields[i]);
        bad = !t || json_object_set_new(t, rf_cluster_fields[i].key,
                                        field_value(c, &rf_cluster_fields[i])) < 0;
    }
    json_t *fabric = bad ? NULL : json_object_get(o, "fabric");
    if (bad || !fabric || json_object_set_new(fabric, "pxn", json_boolean(c->fabric.pxn)) < 0) {
        json_decref(o);
        return NULL;
    }
    /* Only for a mixed cluster: a uniform cluster's document stays as it was. */
    const struct rf_cluster_part *u = &c->upper;
    if (u->present &&
        json_object_set_new(
            o, "upper",
            json_pack("{so so sI sf sf sf sf sf sf sf sf}", "name", rf_json_text(u->name), "source",
                      rf_json_text(u->source), "first_node", (json_int_t)u->first_node, "hbm_gb",
                      u->hbm_gb, "nvlink_gbps", u->nvlink_gbps, "nic_gbps", u->nic_gbps,
                      "pcie_gbps", u->pcie_gbps, "memcpy_gbps", u->memcpy_gbps, "quant_gbps",
                      u->quant_gbps, "h2d_gbps", u->h2d_gbps, "d2h_gbps", u->d2h_gbps)) < 0) {
        json_decref(o);
        return NULL;
    }
    return o;
}

/* A stored mixed cluster's upper part (rf_cluster_json), when the document has one. */
static int upper_from_json(const json_t *o, struct rf_cluster *c, struct rf_error *err)
{
    const json_t *u = json_object_get(o, "upper");
    struct rf_cluster_part *p = &c->upper;
    if (!u)
        return 0;
    const struct {
        const char *key;
        double *out;
    } f[] = {{"hbm_gb", &p->hbm_gb},           {"nvlink_gbps", &p->nvlink_gbps},
             {"nic_gbps", &p->nic_gbps},       {"pcie_gbps", &p->pcie_gbps},
             {"memcpy_gbps", &p->memcpy_gbps}, {"quant_gbps", &p->quant_gbps},
             {"h2d_gbps", &p->h2d_gbps},       {"d2h_gbps", &p->d2h_gbps}};
    const json_t *name = json_object_get(u, "name"), *source = json_object_get(u, "source");
    const json_t *first = json_object_get(u, "first_node");
    if (!json_is_string(name) || !json_is_string(source) || !json_is_integer(first))
        return rf_error_set(err, RF_EINVAL, "cluster.upper: expected name, source, first_node");
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
        const json_t *v = json_object_get(u, f[i].key);
        if (!json_is_number(v))
            return rf_error_set(err, RF_EINVAL, "cluster.upper.%s: expected a number", f[i].key);
        *f[i].out = json_number_value(v);
    }
    p->first_node = json_integer_value(first);
    p->present = true;
    if (!(p->name = strdup(json_string_value(name))) ||
        !(p->source = strdup(json_string_value(source))))
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    return 0;
}

/* The preset's value of every field c changed (the scenario's overrides), nested as in the
 * cluster; an empty object when nothing was overridden. */
static json_t *preset_json(const struct rf_cluster *c, const struct rf_cluster *preset)
{
    json_t *o = json_object();
    bool bad = !o;
    for (size_t i = 0; i < rf_cluster_n_fields && !bad; i++) {
        const struct rf_cluster_field *f = &rf_cluster_fields[i];
        const char *a = (const char *)c + f->offset, *b = (const char *)preset + f->offset;
        bool same = f->integer ? *(const int64_t *)a == *(const int64_t *)b
                               : *(const double *)a == *(const double *)b;
        if (same)
            continue;
        json_t *t = field_table(o, f);
        bad = !t || json_object_set_new(t, f->key, field_value(preset, f)) < 0;
    }
    if (!bad && c->fabric.pxn != preset->fabric.pxn) {
        json_t *t = field_table(o, &(struct rf_cluster_field){"fabric", "pxn", false, 0, 0});
        bad = !t || json_object_set_new(t, "pxn", json_boolean(preset->fabric.pxn)) < 0;
    }
    /* A mixed cluster's name joins its parts' (cluster.lua): not an override. */
    if (!bad && !c->upper.present &&
        strcmp(c->name ? c->name : "", preset->name ? preset->name : "") != 0)
        bad = json_object_set_new(o, "name", rf_json_text(preset->name)) < 0;
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *stage_layers_json(const struct rf_side *s)
{
    json_t *a = json_array();
    for (int64_t i = 0; a && i < s->pp; i++)
        if (json_array_append_new(a, json_integer(s->stage_layers[i])) < 0) {
            json_decref(a);
            return NULL;
        }
    return a;
}

/* Every resolved size of a side, its dtype, stages and memory options. */
static json_t *side_json(const struct rf_side *s)
{
    char layout[128];
    rf_side_describe(s, layout, sizeof(layout));
    bool mg = s->kind == RF_SIDE_MEGATRON;
    json_t *o = json_pack("{ss ss sI sI sI sI sI sI ss so}", "kind", mg ? "megatron" : "vllm",
                          "layout", layout, "gpus", (json_int_t)s->gpus, "first_gpu",
                          (json_int_t)s->first_gpu, "tp", (json_int_t)s->tp, "pp",
                          (json_int_t)s->pp, "dp", (json_int_t)s->dp, "ep", (json_int_t)s->ep,
                          "dtype", rf_dtype_name(s->dtype), "stage_layers", stage_layers_json(s));
    if (!o)
        return NULL;
    int bad;
    if (mg)
        bad =
            json_object_set_new(o, "cp", json_integer(s->cp)) < 0 ||
            json_object_set_new(o, "etp", json_integer(s->etp)) < 0 ||
            json_object_set_new(o, "edp", json_integer(s->edp)) < 0 ||
            json_object_set_new(o, "fsdp", json_boolean(s->fsdp)) < 0 ||
            json_object_set_new(o, "distributed_optimizer",
                                json_boolean(s->distributed_optimizer)) < 0 ||
            (s->offload_params && json_object_set_new(o, "offload_params", json_true()) < 0) ||
            (s->offload_optimizer && json_object_set_new(o, "offload_optimizer", json_true()) < 0);
    else
        /* 0 in the struct is vLLM's default, which sim/memory.c applies: say which. */
        bad = json_object_set_new(o, "replicas", json_integer(s->replicas)) < 0 ||
              json_object_set_new(
                  o, "gpu_memory_utilization",
                  json_real(s->memory_utilization > 0 ? s->memory_utilization : 0.9)) < 0 ||
              /* Where the engines sit (sim/layout.h rf_engine_place): "packed" back to back
               * or "domain" by domain, the span they cover with the idle GPUs. */
              json_object_set_new(o, "placement",
                                  json_string(s->domain_gpus > 0 ? "domain" : "packed")) < 0 ||
              json_object_set_new(o, "domain_gpus", json_integer(s->domain_gpus)) < 0 ||
              json_object_set_new(o, "span", json_integer(s->place.span)) < 0 ||
              json_object_set_new(o, "engines_per_domain", json_integer(s->place.per_domain)) < 0;
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

static json_t *relay_json(const struct rf_relay *r)
{
    return json_pack("{sb sI sI}", "ring", r->ring, "fanout",
                     (json_int_t)(r->fanout > 0 ? r->fanout : 1), "depth", (json_int_t)r->depth);
}

/* Per role, the tensors the plan moves with each strategy ({"norm": {"broadcast": 5}}):
 * hybrid's policy and auto's choice in a few lines, FP8 scale tensors included. */
static json_t *strategies_json(const struct rf_plan *plan)
{
    int64_t count[RF_ROLE_COUNT][RF_STRAT_COUNT] = {{0}};
    for (size_t i = 0; i < plan->n_tensors; i++) {
        int r = (int)plan->tensors[i].role, s = (int)plan->tensor_strategy[i];
        if (r >= 0 && r < RF_ROLE_COUNT && s >= 0 && s < RF_STRAT_COUNT)
            count[r][s]++;
    }
    json_t *o = json_object();
    for (int r = 0; o && r < RF_ROLE_COUNT; r++) {
        json_t *per = NULL;
        for (int s = 0; s < RF_STRAT_COUNT; s++) {
            if (count[r][s] == 0)
                continue;
            if (!per && (!(per = json_object()) ||
                         json_object_set_new(o, rf_role_name((enum rf_role)r), per) < 0))
                goto fail;
            if (json_object_set_new(per, rf_strategy_name((enum rf_strategy)s),
                                    json_integer(count[r][s])) < 0)
                goto fail;
        }
    }
    return o;
fail:
    json_decref(o);
    return NULL;
}

/* The resolved profile (sim/framework.h) under the profile's own field names; a section
 * the framework lacks is left out. Citations stay in the profile file (source). */
static json_t *framework_json(const struct rf_framework *fw)
{
    json_t *strategies = json_array();
    for (int s = 0; strategies && s < RF_STRAT_COUNT; s++)
        if ((fw->strategies & (1u << s)) &&
            json_array_append_new(strategies, json_string(rf_strategy_name((enum rf_strategy)s))) <
                0) {
            json_decref(strategies);
            return NULL;
        }
    json_t *o =
        json_pack("{so so so sf}", "name", rf_json_text(fw->name), "source",
                  rf_json_text(fw->source), "strategies", strategies, "finalize_s", fw->finalize_s);
    bool bad = !o;
    if (!bad && fw->broadcast)
        bad = json_object_set_new(
                  o, "broadcast",
                  json_pack("{ss ss ss s{sf sI sI} si sb sb sb ss sf sf}", "communicator",
                            rf_fw_comm_name(fw->comm), "root", rf_fw_root_name(fw->root), "gather",
                            rf_fw_gather_name(fw->gather), "bucket", "hbm_fraction",
                            fw->bucket_hbm_fraction, "max_bytes", (json_int_t)fw->bucket_max_bytes,
                            "bytes", (json_int_t)fw->bucket_bytes, "buffers", (int)fw->buffers,
                            "per_tensor", fw->broadcast_per_tensor, "wait_load", fw->wait_load,
                            "pack_copy", fw->pack_copy, "quantize", rf_fw_quant_name(fw->quant),
                            "export_calls", fw->export_calls, "load_calls", fw->load_calls)) < 0;
    /* Fields added with the per-call costs: written only where they differ from what a
     * description stored before them means (vLLM's loader, no barriers, not colocated), so
     * earlier runs' documents read the same. */
    if (!bad && fw->broadcast && fw->loader != RF_FW_LOADER_VLLM)
        bad = json_object_set_new(json_object_get(o, "broadcast"), "loader",
                                  json_string(rf_fw_loader_name(fw->loader))) < 0;
    if (!bad && fw->reshard)
        bad = json_object_set_new(o, "reshard",
                                  json_pack("{ss si sb sb sb sf}", "plan",
                                            fw->reshard_relay ? "hierarchical" : "reshard",
                                            "stage_groups", (int)fw->reshard_stage_groups,
                                            "misc_after_bulk", fw->misc_after_bulk, "stack_experts",
                                            fw->stack_experts, "fused_copy", fw->fused_copy,
                                            "calls", fw->reshard_calls)) < 0;
    if (!bad && fw->reshard && fw->reshard_barriers > 0)
        bad = json_object_set_new(json_object_get(o, "reshard"), "barriers",
                                  json_integer(fw->reshard_barriers)) < 0;
    if (!bad && fw->reshard && fw->reshard_serial)
        bad = json_object_set_new(json_object_get(o, "reshard"), "serial_calls", json_true()) < 0;
    /* The point-to-point path under the profile's names (before it had a section of its own,
     * miles' P2P fields were reshard's: rf_framework_from_json reads those too). */
    const struct rf_fw_p2p *q = &fw->p2p;
    if (!bad && q->present)
        bad =
            json_object_set_new(
                o, "p2p",
                json_pack("{ss ss ss ss ss ss sb sb sb sb sb s{sf sI sI} si ss ss sf sf ss si sb "
                          "sb}",
                          "plan", q->broadcast_plan ? "broadcast" : "reshard", "gather",
                          rf_fw_p2p_gather_name(q->gather), "select",
                          q->dense_whole ? "dense_whole" : "shard", "from",
                          q->from_host ? "host" : "gpu", "verb", q->read ? "read" : "write", "into",
                          q->into_weights ? "weights" : "buffer", "cpu_loader", q->cpu_loader,
                          "wait_nonlast", q->wait_nonlast, "receiver_serial", q->receiver_serial,
                          "pack_copy", q->pack_copy, "experts_after", q->experts_after, "bucket",
                          "hbm_fraction", q->bucket_hbm_fraction, "max_bytes",
                          (json_int_t)q->bucket_max_bytes, "bytes", (json_int_t)q->bucket_bytes,
                          "buffers", (int)q->buffers, "quantize", rf_fw_quant_name(q->quant),
                          "loader", rf_fw_loader_name(q->loader), "export_calls", q->export_calls,
                          "load_calls", q->load_calls, "register", rf_fw_p2p_register_name(q->reg),
                          "register_regions", (int)q->register_regions, "register_every_refit",
                          q->register_every_refit, "run", fw->p2p_run)) < 0;
    if (!bad && fw->first_refit)
        bad = json_object_set_new(o, "refit", json_string("first")) < 0;
    if (!bad && fw->colocated)
        bad = json_object_set_new(
                  o, "colocated",
                  json_pack("{ss s{sf sI sI} si sb ss sf sf sb sb sb sb}", "export",
                            rf_fw_colo_export_name(fw->colo_export), "bucket", "hbm_fraction",
                            fw->colo_bucket_hbm_fraction, "max_bytes",
                            (json_int_t)fw->colo_bucket_max_bytes, "bytes",
                            (json_int_t)fw->colo_bucket_bytes, "buffers", (int)fw->colo_buffers,
                            "clone", fw->colo_clone, "quantize", rf_fw_quant_name(fw->colo_quant),
                            "export_calls", fw->colo_export_calls, "load_calls",
                            fw->colo_load_calls, "offload_optimizer", fw->colo_offload_optimizer,
                            "wake_weights", fw->colo_wake_weights, "offload_weights",
                            fw->colo_offload_weights, "run", fw->colocated_run)) < 0;
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

json_t *rf_describe(const struct rf_describe_input *in)
{
    const struct rf_scenario *sc = in->sc;
    const struct rf_plan *plan = in->plan;
    const struct rf_model *m = &sc->model;
    json_t *model =
        json_pack("{so so so sI sI sI sI sI sI}", "name", rf_json_text(m->name), "source",
                  rf_json_text(m->source), "family", rf_json_text(m->family), "layers",
                  (json_int_t)m->layers, "experts", (json_int_t)m->experts, "experts_per_token",
                  (json_int_t)m->experts_per_token, "tensors", (json_int_t)m->n_tensors, "params",
                  (json_int_t)plan->model_params, "bytes", (json_int_t)plan->model_bytes);
    json_t *o = json_pack(
        "{sI so so ss so so so sI sI ss so sb so}", "version", (json_int_t)RF_SCENARIO_JSON_VERSION,
        "source", rf_json_text(sc->source), "model", model, "strategy",
        rf_strategy_name(sc->strategy), "train", side_json(&sc->train), "infer",
        side_json(&sc->infer), "cluster", rf_cluster_json(&sc->cluster), "staging_bytes",
        (json_int_t)sc->staging_bytes, "chunk_bytes", (json_int_t)plan->chunk_bytes, "sources",
        rf_sources_name(sc->sources), "relay", relay_json(&sc->relay), "allow_overcommit",
        sc->allow_overcommit, "tensor_strategies", strategies_json(plan));
    if (!o)
        return NULL;
    bool bad = in->preset &&
               json_object_set_new(o, "cluster_preset", preset_json(&sc->cluster, in->preset)) < 0;
    if (!bad && sc->sides)
        bad = json_object_set_new(o, "sides", rf_json_text(sc->sides)) < 0;
    /* Only when not the full weights: every other run's document stays as it was. */
    if (!bad && sc->update)
        bad = json_object_set_new(o, "update", rf_json_text(sc->update)) < 0;
    /* Only with a profile: a profile-free run's document stays as it was. */
    if (!bad && sc->framework.present)
        bad = json_object_set_new(o, "framework", framework_json(&sc->framework)) < 0;
    if (!bad && in->choice) {
        const struct rf_auto_choice *c = in->choice;
        bool pxn = c->topo ? c->topo->cluster->fabric.pxn : sc->cluster.fabric.pxn;
        bad =
            json_object_set_new(
                o, "auto",
                json_pack("{so sb ss so si si}", "choice", rf_json_text(c->description), "pxn", pxn,
                          "sources", rf_sources_name(c->sources), "relay", relay_json(&plan->relay),
                          "evaluated", c->evaluated, "pruned", c->pruned)) < 0;
        /* Only when it happened: every other run's description stays as it was. */
        if (!bad && c->left_out_bytes > 0)
            bad = json_object_set_new(json_object_get(o, "auto"), "left_out_bytes",
                                      json_integer(c->left_out_bytes)) < 0;
    }
    if (bad) {
        json_decref(o);
        return NULL;
    }
    return o;
}

char *rf_describe_text(const struct rf_describe_input *in)
{
    json_t *o = rf_describe(in);
    char *text = o ? rf_json_canonical(o, 0) : NULL;
    json_decref(o);
    return text;
}

static int dup_string(const json_t *o, const char *key, char **out, struct rf_error *err)
{
    const json_t *v = json_object_get(o, key);
    if (!json_is_string(v))
        return rf_error_set(err, RF_EINVAL, "cluster.%s: expected a string", key);
    if (!(*out = strdup(json_string_value(v))))
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    return 0;
}

int rf_cluster_from_json(const json_t *o, struct rf_cluster *c, struct rf_error *err)
{
    int rc;
    memset(c, 0, sizeof(*c));
    if (!json_is_object(o))
        return rf_error_set(err, RF_EINVAL, "cluster: expected an object");
    if ((rc = dup_string(o, "name", &c->name, err)) < 0 ||
        (rc = dup_string(o, "source", &c->source, err)) < 0)
        goto fail;
    for (size_t i = 0; i < rf_cluster_n_fields; i++) {
        const struct rf_cluster_field *f = &rf_cluster_fields[i];
        const json_t *t = f->table ? json_object_get(o, f->table) : o;
        const json_t *v = json_object_get(t, f->key);
        char *p = (char *)c + f->offset;
        if (!v && f->since_default > 0) {
            *(double *)p = f->since_default;
            continue;
        }
        if (f->integer ? !json_is_integer(v) : !json_is_number(v)) {
            rc = rf_error_set(err, RF_EINVAL, "cluster.%s%s%s: expected %s",
                              f->table ? f->table : "", f->table ? "." : "", f->key,
                              f->integer ? "an integer" : "a number");
            goto fail;
        }
        if (f->integer)
            *(int64_t *)p = json_integer_value(v);
        else
            *(double *)p = json_number_value(v);
    }
    const json_t *pxn = json_object_get(json_object_get(o, "fabric"), "pxn");
    if (!json_is_boolean(pxn)) {
        rc = rf_error_set(err, RF_EINVAL, "cluster.fabric.pxn: expected a boolean");
        goto fail;
    }
    c->fabric.pxn = json_is_true(pxn);
    if ((rc = upper_from_json(o, c, err)) < 0)
        goto fail;
    return 0;
fail:
    rf_cluster_release(c);
    return rc;
}

int rf_describe_cluster(const json_t *doc, struct rf_cluster *c, struct rf_error *err)
{
    int rc = rf_cluster_from_json(json_object_get(doc, "cluster"), c, err);
    if (rc == 0 && rf_describe_pxn(doc) >= 0)
        c->fabric.pxn = rf_describe_pxn(doc) == 1;
    return rc;
}

/* Leaves, collected into a growing array. */
struct leaves {
    struct rf_json_leaf *v;
    size_t n, cap;
};

static bool add_leaf(struct leaves *l, const char *path, const json_t *value)
{
    if (RF_GROW(l->v, l->cap, l->n + 1, NULL) < 0)
        return false;
    struct rf_json_leaf *e = &l->v[l->n];
    e->path = strdup(path);
    e->value = rf_json_canonical(value, 0);
    if (!e->path || !e->value) {
        free(e->path);
        free(e->value);
        return false;
    }
    l->n++;
    return true;
}

static int cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool skipped(const char *key, const char *const *skip)
{
    for (; skip && *skip; skip++)
        if (strcmp(key, *skip) == 0)
            return true;
    return false;
}

/* Walks v below prefix (""), objects' keys in sorted order so leaves come in path order. */
static bool walk(struct leaves *l, const char *prefix, const json_t *v, const char *const *skip)
{
    if (!json_is_object(v))
        return add_leaf(l, prefix, v);
    size_t n = json_object_size(v), i = 0;
    if (n == 0)
        return !*prefix || add_leaf(l, prefix, v);
    const char **keys = malloc(n * sizeof(*keys));
    const char *key;
    json_t *item;
    if (!keys)
        return false;
    json_object_foreach((json_t *)v, key, item)
    {
        keys[i++] = key;
    }
    qsort(keys, n, sizeof(*keys), cmp_key);
    bool ok = true;
    for (i = 0; i < n && ok; i++) {
        if (!*prefix && skipped(keys[i], skip))
            continue;
        size_t len = strlen(prefix) + strlen(keys[i]) + 2;
        char *path = malloc(len);
        if (!path) {
            ok = false;
            break;
        }
        snprintf(path, len, "%s%s%s", prefix, *prefix ? "." : "", keys[i]);
        ok = walk(l, path, json_object_get(v, keys[i]), skip);
        free(path);
    }
    free(keys);
    return ok;
}

int rf_json_leaves(const json_t *v, const char *const *skip, struct rf_json_leaf **out, size_t *n,
                   struct rf_error *err)
{
    struct leaves l = {0};
    *out = NULL;
    *n = 0;
    if (!walk(&l, "", v, skip)) {
        rf_json_leaves_free(l.v, l.n);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    *out = l.v;
    *n = l.n;
    return 0;
}

void rf_json_leaves_free(struct rf_json_leaf *leaves, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(leaves[i].path);
        free(leaves[i].value);
    }
    free(leaves);
}

/* Path order is the walk's: a parent's members sorted by key, which is not plain strcmp
 * order of the dotted paths ("a.b" sorts after "a_c" by strcmp, but the walk visits the
 * member "a" first). Merging compares paths by their components. */
static int cmp_path(const char *a, const char *b)
{
    for (;;) {
        size_t la = strcspn(a, "."), lb = strcspn(b, ".");
        size_t m = la < lb ? la : lb;
        int c = strncmp(a, b, m);
        if (c != 0)
            return c;
        if (la != lb)
            return la < lb ? -1 : 1;
        if (!a[la] || !b[lb])
            return (a[la] != 0) - (b[lb] != 0);
        a += la + 1;
        b += lb + 1;
    }
}

int rf_json_diff(const struct rf_json_leaf *a, size_t na, const struct rf_json_leaf *b, size_t nb,
                 struct rf_json_change **out, size_t *n, struct rf_error *err)
{
    struct rf_json_change *c = calloc(na + nb + 1, sizeof(*c));
    size_t i = 0, j = 0, k = 0;
    *out = NULL;
    *n = 0;
    if (!c)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    while (i < na || j < nb) {
        int d = i == na ? 1 : j == nb ? -1 : cmp_path(a[i].path, b[j].path);
        if (d < 0) {
            c[k++] = (struct rf_json_change){a[i].path, a[i].value, NULL};
            i++;
        } else if (d > 0) {
            c[k++] = (struct rf_json_change){b[j].path, NULL, b[j].value};
            j++;
        } else {
            if (strcmp(a[i].value, b[j].value) != 0)
                c[k++] = (struct rf_json_change){a[i].path, a[i].value, b[j].value};
            i++;
            j++;
        }
    }
    *out = c;
    *n = k;
    return 0;
}

json_t *rf_memory_json(const struct rf_side_memory *m)
{
    const struct rf_gpu_memory *g = &m->worst;
    return json_pack("{sI sI sI sI sI sI sI sI sI sI sb}", "gpu", (json_int_t)g->gpu, "stage",
                     (json_int_t)g->stage, "weights_bytes", (json_int_t)g->weights, "grads_bytes",
                     (json_int_t)g->grads, "optimizer_bytes", (json_int_t)g->optimizer,
                     "staging_bytes", (json_int_t)g->staging, "total_bytes", (json_int_t)g->total,
                     "hbm_bytes", (json_int_t)m->hbm_bytes, "budget_bytes",
                     (json_int_t)m->budget_bytes, "headroom_bytes", (json_int_t)m->headroom_bytes,
                     "fits", m->fits);
}

/* The profile a run's description holds (key "framework", written by sim/describe.c's
 * framework_json under the profile's own field names): what its step is re-predicted with.
 * Every field it writes is read back (a field added there must be added here); a missing or
 * mistyped one is named. The citations of overlaps (overlap_why) are not in the document:
 * they only word the step's composition line, never its time. */
struct fw_reader {
    const json_t *o;
    const char *section; /* "framework", "framework.broadcast", ... */
    struct rf_error *err;
    int rc;
};

static const json_t *fw_get(struct fw_reader *r, const char *key, json_type type)
{
    const json_t *v = json_object_get(r->o, key);
    bool ok = v && (json_typeof(v) == type || (type == JSON_REAL && json_is_integer(v)) ||
                    (type == JSON_TRUE && json_is_boolean(v)));
    if (!ok && r->rc == 0)
        r->rc = rf_error_set(r->err, RF_EINVAL, "%s.%s: %s", r->section, key,
                             v ? "of the wrong type" : "missing");
    return ok ? v : NULL;
}

static double fw_num(struct fw_reader *r, const char *key)
{
    const json_t *v = fw_get(r, key, JSON_REAL);
    return v ? json_number_value(v) : 0;
}

static bool fw_bool(struct fw_reader *r, const char *key)
{
    const json_t *v = fw_get(r, key, JSON_TRUE);
    return v && json_is_true(v);
}

static const char *fw_text(struct fw_reader *r, const char *key)
{
    const json_t *v = fw_get(r, key, JSON_STRING);
    return v ? json_string_value(v) : "";
}

/* An enum field, parsed (0) or not (-1) by its parser. */
static void fw_enum(struct fw_reader *r, const char *key, int parsed)
{
    if (parsed < 0 && r->rc == 0)
        r->rc = rf_error_set(r->err, RF_EINVAL, "%s.%s: unknown value '%s'", r->section, key,
                             fw_text(r, key));
}

int rf_framework_from_json(const json_t *o, struct rf_framework *fw, struct rf_error *err)
{
    struct fw_reader r = {.o = o, .section = "framework", .err = err};
    memset(fw, 0, sizeof(*fw));
    fw->present = true;
    const char *name = fw_text(&r, "name"), *source = fw_text(&r, "source");
    if (!(fw->name = strdup(name)) || !(fw->source = strdup(source))) {
        rf_framework_release(fw);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    const json_t *strategies = fw_get(&r, "strategies", JSON_ARRAY), *s;
    size_t i;
    json_array_foreach(strategies, i, s)
    {
        enum rf_strategy st;
        if (rf_strategy_parse(json_string_value(s) ? json_string_value(s) : "", &st) == 0)
            fw->strategies |= 1u << st;
        else if (r.rc == 0)
            r.rc = rf_error_set(err, RF_EINVAL, "framework.strategies: unknown strategy");
    }
    fw->finalize_s = fw_num(&r, "finalize_s");
    const json_t *b = json_object_get(o, "broadcast"), *rs = json_object_get(o, "reshard");
    if (b && r.rc == 0) {
        struct fw_reader rb = {.o = b, .section = "framework.broadcast", .err = err};
        fw->broadcast = true;
        fw_enum(&rb, "communicator", rf_fw_comm_parse(fw_text(&rb, "communicator"), &fw->comm));
        fw_enum(&rb, "root", rf_fw_root_parse(fw_text(&rb, "root"), &fw->root));
        fw_enum(&rb, "gather", rf_fw_gather_parse(fw_text(&rb, "gather"), &fw->gather));
        fw_enum(&rb, "quantize", rf_fw_quant_parse(fw_text(&rb, "quantize"), &fw->quant));
        const json_t *bucket = fw_get(&rb, "bucket", JSON_OBJECT);
        if (bucket) {
            struct fw_reader rk = {
                .o = bucket, .section = "framework.broadcast.bucket", .err = err};
            fw->bucket_hbm_fraction = fw_num(&rk, "hbm_fraction");
            fw->bucket_max_bytes = (int64_t)fw_num(&rk, "max_bytes");
            fw->bucket_bytes = (int64_t)fw_num(&rk, "bytes");
            rb.rc = rb.rc ? rb.rc : rk.rc;
        }
        fw->buffers = (int32_t)fw_num(&rb, "buffers");
        fw->broadcast_per_tensor = fw_bool(&rb, "per_tensor");
        fw->wait_load = fw_bool(&rb, "wait_load");
        fw->pack_copy = fw_bool(&rb, "pack_copy");
        fw->export_calls = fw_num(&rb, "export_calls");
        fw->load_calls = fw_num(&rb, "load_calls");
        /* Written only when not vLLM's (descriptions stored before it mean vLLM). */
        fw->loader = RF_FW_LOADER_VLLM;
        if (json_object_get(b, "loader")) {
            const char *l = fw_text(&rb, "loader");
            if (strcmp(l, rf_fw_loader_name(RF_FW_LOADER_SGLANG)) == 0)
                fw->loader = RF_FW_LOADER_SGLANG;
            else
                fw_enum(&rb, "loader", strcmp(l, rf_fw_loader_name(RF_FW_LOADER_VLLM)) ? -1 : 0);
        }
        r.rc = rb.rc;
    }
    if (rs && r.rc == 0) {
        struct fw_reader rr = {.o = rs, .section = "framework.reshard", .err = err};
        fw->reshard = true;
        fw->reshard_relay = strcmp(fw_text(&rr, "plan"), "hierarchical") == 0;
        fw->reshard_stage_groups = (int32_t)fw_num(&rr, "stage_groups");
        fw->misc_after_bulk = fw_bool(&rr, "misc_after_bulk");
        fw->stack_experts = fw_bool(&rr, "stack_experts");
        fw->fused_copy = fw_bool(&rr, "fused_copy");
        fw->reshard_calls = fw_num(&rr, "calls");
        /* Written only when > 0. */
        if (json_object_get(rs, "barriers"))
            fw->reshard_barriers = (int32_t)fw_num(&rr, "barriers");
        if (json_object_get(rs, "serial_calls"))
            fw->reshard_serial = fw_bool(&rr, "serial_calls");
        /* miles' P2P path as stored before the p2p section (schema 13 files written then):
         * reshard.cpu_loader and its fields, run as strategy reshard under the profile. */
        if (json_object_get(rs, "cpu_loader") && fw_bool(&rr, "cpu_loader") &&
            !json_object_get(o, "p2p")) {
            struct rf_fw_p2p *q = &fw->p2p;
            q->present = true;
            q->cpu_loader = true;
            q->gather = RF_FW_P2P_GATHER_STAGE;
            q->from_host = true;
            q->into_weights = true;
            q->buffers = 1;
            if (json_object_get(rs, "wait_nonlast"))
                q->wait_nonlast = fw_bool(&rr, "wait_nonlast");
            if (json_object_get(rs, "register") &&
                strcmp(fw_text(&rr, "register"), "replica_params") == 0)
                q->reg = RF_FW_P2P_REG_REPLICA_PARAMS;
            /* Its bucket, calls and loader were the broadcast path's. */
            q->bucket_hbm_fraction = fw->bucket_hbm_fraction;
            q->bucket_max_bytes = fw->bucket_max_bytes;
            q->bucket_bytes = fw->bucket_bytes;
            q->quant = RF_FW_QUANT_SENDER;
            q->loader = fw->loader;
            q->export_calls = fw->export_calls;
            q->load_calls = fw->load_calls;
            fw->p2p_run = true;
        }
        r.rc = rr.rc;
    }
    const json_t *pp = json_object_get(o, "p2p");
    if (pp && r.rc == 0) {
        struct fw_reader rp = {.o = pp, .section = "framework.p2p", .err = err};
        struct rf_fw_p2p *q = &fw->p2p;
        q->present = true;
        q->broadcast_plan = strcmp(fw_text(&rp, "plan"), "broadcast") == 0;
        fw_enum(&rp, "gather", rf_fw_p2p_gather_parse(fw_text(&rp, "gather"), &q->gather));
        q->dense_whole = strcmp(fw_text(&rp, "select"), "dense_whole") == 0;
        q->from_host = strcmp(fw_text(&rp, "from"), "host") == 0;
        q->read = strcmp(fw_text(&rp, "verb"), "read") == 0;
        q->into_weights = strcmp(fw_text(&rp, "into"), "weights") == 0;
        q->cpu_loader = fw_bool(&rp, "cpu_loader");
        q->wait_nonlast = fw_bool(&rp, "wait_nonlast");
        q->receiver_serial = fw_bool(&rp, "receiver_serial");
        q->pack_copy = fw_bool(&rp, "pack_copy");
        q->experts_after = fw_bool(&rp, "experts_after");
        const json_t *bucket = fw_get(&rp, "bucket", JSON_OBJECT);
        if (bucket) {
            struct fw_reader rk = {.o = bucket, .section = "framework.p2p.bucket", .err = err};
            q->bucket_hbm_fraction = fw_num(&rk, "hbm_fraction");
            q->bucket_max_bytes = (int64_t)fw_num(&rk, "max_bytes");
            q->bucket_bytes = (int64_t)fw_num(&rk, "bytes");
            rp.rc = rp.rc ? rp.rc : rk.rc;
        }
        q->buffers = (int32_t)fw_num(&rp, "buffers");
        fw_enum(&rp, "quantize", rf_fw_quant_parse(fw_text(&rp, "quantize"), &q->quant));
        fw_enum(&rp, "loader", rf_fw_loader_parse(fw_text(&rp, "loader"), &q->loader));
        q->export_calls = fw_num(&rp, "export_calls");
        q->load_calls = fw_num(&rp, "load_calls");
        fw_enum(&rp, "register", rf_fw_p2p_register_parse(fw_text(&rp, "register"), &q->reg));
        q->register_regions = (int32_t)fw_num(&rp, "register_regions");
        q->register_every_refit = fw_bool(&rp, "register_every_refit");
        fw->p2p_run = fw_bool(&rp, "run");
        r.rc = rp.rc;
    }
    const json_t *refit = json_object_get(o, "refit");
    fw->first_refit = json_is_string(refit) && strcmp(json_string_value(refit), "first") == 0;
    const json_t *co = json_object_get(o, "colocated");
    if (co && r.rc == 0) {
        struct fw_reader rc = {.o = co, .section = "framework.colocated", .err = err};
        const char *ex = fw_text(&rc, "export");
        fw->colocated = true;
        if (strcmp(ex, rf_fw_colo_export_name(RF_FW_COLO_EXPORT_FSDP)) == 0)
            fw->colo_export = RF_FW_COLO_EXPORT_FSDP;
        else
            fw_enum(&rc, "export",
                    strcmp(ex, rf_fw_colo_export_name(RF_FW_COLO_EXPORT_BRIDGE)) ? -1 : 0);
        const json_t *bucket = fw_get(&rc, "bucket", JSON_OBJECT);
        if (bucket) {
            struct fw_reader rk = {
                .o = bucket, .section = "framework.colocated.bucket", .err = err};
            fw->colo_bucket_hbm_fraction = fw_num(&rk, "hbm_fraction");
            fw->colo_bucket_max_bytes = (int64_t)fw_num(&rk, "max_bytes");
            fw->colo_bucket_bytes = (int64_t)fw_num(&rk, "bytes");
            rc.rc = rc.rc ? rc.rc : rk.rc;
        }
        fw->colo_buffers = (int32_t)fw_num(&rc, "buffers");
        fw->colo_clone = fw_bool(&rc, "clone");
        fw_enum(&rc, "quantize", rf_fw_quant_parse(fw_text(&rc, "quantize"), &fw->colo_quant));
        fw->colo_export_calls = fw_num(&rc, "export_calls");
        fw->colo_load_calls = fw_num(&rc, "load_calls");
        fw->colo_offload_optimizer = fw_bool(&rc, "offload_optimizer");
        fw->colo_wake_weights = fw_bool(&rc, "wake_weights");
        fw->colo_offload_weights = fw_bool(&rc, "offload_weights");
        fw->colocated_run = fw_bool(&rc, "run");
        r.rc = rc.rc;
    }
    if (r.rc < 0)
        rf_framework_release(fw);
    return r.rc;
}
