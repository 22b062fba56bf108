/* The Lua bridge. models/lib validates and normalises every description and raises errors
 * that already name file:line and the dotted field; this file only converts the normalised
 * tables (see doc/architecture.md, "Contract: Lua -> C") into C structs, checking the
 * invariants the planner relies on. */
#include "scenario.h"

#include "json.h"

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "checked.h"
#include "lua_int.h"
#include "sandbox.h"
#include "yaml_lua.h"

int rf_lua_open(struct rf_lua **out, const char *models_dir, struct rf_error *err)
{
    struct rf_lua *R = calloc(1, sizeof(*R));
    char msg[sizeof(err->msg)];
    int rc;
    struct stat st;
    if (!R)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    /* Said plainly here: otherwise Lua's require reports every place it did not find the
     * first module in, on one long line. */
    snprintf(R->lib, sizeof(R->lib), "%s/lib/refit.lua", models_dir);
    if (stat(R->lib, &st) != 0 || !S_ISREG(st.st_mode)) {
        free(R);
        return rf_error_set(err, RF_EINVAL,
                            "%s: not refit's models folder (it has no lib/refit.lua); set "
                            "REFIT_MODELS to the models folder of refit's source or installation",
                            models_dir);
    }
    R->module = R->handler = LUA_NOREF;
    snprintf(R->lib, sizeof(R->lib), "%s/lib", models_dir);
    if ((rc = rf_sandbox_open(&R->sb, R->lib, err)) < 0) {
        free(R);
        return rc;
    }
    lua_State *L = R->L = R->sb.L;
    luaL_requiref(L, "refit.json", rf_luaopen_json, 0);
    lua_pop(L, 1);
    /* Internal, like refit.json: models/lib/rlconfig.lua reads a scenario's `sides` YAML
     * with it; scenario files never see it. */
    luaL_requiref(L, "refit.yaml", rf_luaopen_yaml, 0);
    lua_pop(L, 1);

    lua_getglobal(L, "package");
    lua_pushfstring(L, "%s/?.lua", R->lib);
    lua_setfield(L, -2, "path");
    lua_pop(L, 1);

    /* The message handler first, so errors of the library itself are reported through it. */
    lua_getglobal(L, "require");
    lua_pushstring(L, "sandbox");
    if ((rc = rf_sandbox_pcall(&R->sb, 1, 1, LUA_NOREF, R->lib, err)) < 0)
        goto fail;
    lua_getfield(L, -1, "message");
    R->handler = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pop(L, 1);

    lua_getglobal(L, "require");
    lua_pushstring(L, "refit");
    if ((rc = rf_sandbox_pcall(&R->sb, 1, 1, R->handler, R->lib, err)) < 0)
        goto fail;
    lua_pushstring(L, models_dir);
    lua_setfield(L, -2, "models_dir");
    R->module = luaL_ref(L, LUA_REGISTRYINDEX);
    *out = R;
    return 0;
fail:
    snprintf(msg, sizeof(msg), "%s", err->msg);
    rf_error_set(err, rc, "%s: %s", R->lib, msg);
    rf_lua_close(R);
    return rc;
}

void rf_lua_close(struct rf_lua *R)
{
    if (!R)
        return;
    rf_sandbox_close(&R->sb);
    free(R);
}

void rf_lua_set_hf_cache(struct rf_lua *R, const char *dir)
{
    lua_State *L = R->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, R->module);
    if (dir)
        lua_pushstring(L, dir);
    else
        lua_pushnil(L);
    lua_setfield(L, -2, "hf_cache");
    lua_pop(L, 1);
}

void rf_lua_set_limits(struct rf_lua *R, const struct rf_lua_limits *limits)
{
    R->sb.limits = *limits;
}

void rf_lua_set_observer(struct rf_lua *R, rf_lua_observer observe)
{
    R->sb.observe = observe;
    rf_sandbox_reset(&R->sb);
}

void rf_lua_usage(const struct rf_lua *R, uint64_t *peak_bytes, uint64_t *peak_instructions)
{
    *peak_bytes = R->sb.peak;
    *peak_instructions = rf_sandbox_instructions_peak(&R->sb);
}

/* Calls refit.<fn>(arg [, { strategy = strategy }]) and leaves its result on the stack. */
static int call(struct rf_lua *R, const char *fn, const char *arg, int ref, const char *strategy,
                struct rf_error *err)
{
    lua_State *L = R->L;
    lua_rawgeti(L, LUA_REGISTRYINDEX, R->module);
    lua_getfield(L, -1, fn);
    lua_remove(L, -2);
    if (arg)
        lua_pushstring(L, arg);
    else
        lua_rawgeti(L, LUA_REGISTRYINDEX, ref);
    if (strategy) {
        lua_createtable(L, 0, 1);
        lua_pushstring(L, strategy);
        lua_setfield(L, -2, "strategy");
    }
    return rf_sandbox_pcall(&R->sb, strategy ? 2 : 1, 1, R->handler, arg ? arg : "scenario", err);
}

/* Bounds that keep the planner's int64 arithmetic exact: a tensor's element count, a
 * model's bytes times the GPUs of a scenario, the GPU numbers of a cluster. */
#define RF_MAX_ELEMENTS_LOG2 48
#define RF_MAX_ELEMENTS ((int64_t)1 << RF_MAX_ELEMENTS_LOG2)
#define RF_MAX_GPUS ((int64_t)1 << 31)

/* Field readers for the normalised tables. A failure here is a broken contract between
 * models/lib and C, reported with the field's name. */
static int get_int(lua_State *L, int t, const char *key, int64_t *out, const char *ctx,
                   struct rf_error *err)
{
    int isnum;
    lua_getfield(L, t, key);
    *out = (int64_t)lua_tointegerx(L, -1, &isnum);
    lua_pop(L, 1);
    if (!isnum)
        return rf_error_set(err, RF_EINVAL, "%s.%s: expected an integer", ctx, key);
    return 0;
}

static int get_num(lua_State *L, int t, const char *key, double *out, const char *ctx,
                   struct rf_error *err)
{
    int isnum;
    lua_getfield(L, t, key);
    *out = (double)lua_tonumberx(L, -1, &isnum);
    lua_pop(L, 1);
    if (!isnum)
        return rf_error_set(err, RF_EINVAL, "%s.%s: expected a number", ctx, key);
    return 0;
}

static int get_str(lua_State *L, int t, const char *key, char **out, const char *ctx,
                   struct rf_error *err)
{
    lua_getfield(L, t, key);
    const char *s = lua_tostring(L, -1);
    *out = s ? strdup(s) : NULL;
    lua_pop(L, 1);
    if (!s)
        return rf_error_set(err, RF_EINVAL, "%s.%s: expected a string", ctx, key);
    if (!*out)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    return 0;
}

/* Reads an optional string field: NULL when it is not a string. */
static int opt_str(lua_State *L, int t, const char *key, char **out, struct rf_error *err)
{
    lua_getfield(L, t, key);
    const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : NULL;
    *out = s ? strdup(s) : NULL;
    lua_pop(L, 1);
    return s && !*out ? rf_error_set(err, RF_ENOMEM, "out of memory") : 0;
}

/* Reads a string field and maps it through parse(). */
static int get_enum(lua_State *L, int t, const char *key, int (*parse)(const char *, void *),
                    void *out, const char *ctx, struct rf_error *err)
{
    lua_getfield(L, t, key);
    const char *s = lua_tostring(L, -1);
    int bad = !s || parse(s, out) < 0;
    if (bad)
        rf_error_set(err, RF_EINVAL, "%s.%s: unknown value '%s'", ctx, key, s ? s : "nil");
    lua_pop(L, 1);
    return bad ? RF_EINVAL : 0;
}

static int parse_dtype(const char *s, void *out)
{
    return rf_dtype_parse(s, out);
}
static int parse_role(const char *s, void *out)
{
    return rf_role_parse(s, out);
}
static int parse_class(const char *s, void *out)
{
    return rf_class_parse(s, out);
}
static int parse_strategy(const char *s, void *out)
{
    return rf_strategy_parse(s, out);
}
static int parse_sources(const char *s, void *out)
{
    return rf_sources_parse(s, out);
}

static int read_tensor(lua_State *L, int t, struct rf_tensor *x, struct rf_error *err)
{
    int64_t v;
    int rc;
    if ((rc = get_str(L, t, "name", &x->name, "tensor", err)) < 0)
        return rc;
    const char *ctx = x->name;
    lua_getfield(L, t, "shape");
    x->ndim = (int)lua_rawlen(L, -1);
    if (x->ndim < 1 || x->ndim > RF_MAX_DIMS) {
        lua_pop(L, 1);
        return rf_error_set(err, RF_EINVAL, "%s.shape: 1 to %d dims, got %d", ctx, RF_MAX_DIMS,
                            x->ndim);
    }
    for (int d = 0; d < x->ndim; d++) {
        lua_rawgeti(L, -1, d + 1);
        x->shape[d] = (int64_t)lua_tointeger(L, -1);
        lua_pop(L, 1);
        if (x->shape[d] < 1) {
            lua_pop(L, 1);
            return rf_error_set(err, RF_EINVAL, "%s.shape[%d]: expected a positive integer", ctx,
                                d + 1);
        }
    }
    lua_pop(L, 1);
    /* Every byte count the planner derives is a multiple of a tensor's: 2^80 elements must
     * be refused here, not wrap there. */
    int64_t numel = 1;
    for (int d = 0; d < x->ndim; d++)
        if (__builtin_mul_overflow(numel, x->shape[d], &numel) || numel > RF_MAX_ELEMENTS)
            return rf_error_set(err, RF_EINVAL, "%s.shape: more than 2^%d elements", ctx,
                                RF_MAX_ELEMENTS_LOG2);
    if ((rc = get_enum(L, t, "dtype", parse_dtype, &x->dtype, ctx, err)) < 0 ||
        (rc = get_enum(L, t, "role", parse_role, &x->role, ctx, err)) < 0 ||
        (rc = get_enum(L, t, "class", parse_class, &x->cls, ctx, err)) < 0 ||
        (rc = get_int(L, t, "layer", &v, ctx, err)) < 0)
        return rc;
    x->layer = (int)v;
    if ((rc = get_int(L, t, "experts", &x->experts, ctx, err)) < 0)
        return rc;
    lua_getfield(L, t, "quant");
    x->quant = lua_toboolean(L, -1);
    lua_pop(L, 1);
    x->scale_of = -1;
    /* A LoRA adapter's part and merge (models/lib/update.lua; rf_model_check pairs them). */
    lua_getfield(L, t, "lora");
    const char *part = lua_tostring(L, -1);
    x->lora = !part ? RF_LORA_NONE : strcmp(part, "A") == 0 ? RF_LORA_A : RF_LORA_B;
    lua_pop(L, 1);
    lua_getfield(L, t, "lora_merge");
    x->lora_merge = lua_toboolean(L, -1);
    lua_pop(L, 1);
    /* A delta update's encoding and density (models/lib/update.lua), checked there. */
    lua_getfield(L, t, "delta");
    if (lua_istable(L, -1)) {
        lua_getfield(L, -1, "encoding");
        lua_getfield(L, -2, "ppm");
        const char *enc = lua_tostring(L, -2);
        int64_t ppm = lua_isinteger(L, -1) ? (int64_t)lua_tointeger(L, -1) : 0;
        lua_pop(L, 2);
        if (!enc || rf_delta_enc_parse(enc, &x->delta.enc) < 0 || ppm < 1 || ppm > RF_DELTA_PPM) {
            lua_pop(L, 1);
            return rf_error_set(err, RF_EINVAL,
                                "%s.delta: expected an encoding and 1 to 10^6 "
                                "parts per million",
                                ctx);
        }
        x->delta.ppm = (int32_t)ppm;
    }
    lua_pop(L, 1);
    bool expert = rf_class_expert(x->cls);
    if (expert && (x->ndim != 3 || x->experts != x->shape[0]))
        return rf_error_set(err, RF_EINVAL, "%s: expert tensors are [E, out, in] with experts = E",
                            ctx);
    if ((x->cls == RF_CLASS_ROW && x->ndim < 2))
        return rf_error_set(err, RF_EINVAL, "%s: a row-parallel tensor needs 2 dims", ctx);
    return 0;
}

/* Reads the normalised model at stack index t. */
static int read_model(lua_State *L, int t, struct rf_model *m, struct rf_error *err)
{
    int64_t v;
    int rc;
    memset(m, 0, sizeof(*m));
    if ((rc = get_str(L, t, "name", &m->name, "model", err)) < 0 ||
        (rc = get_str(L, t, "family", &m->family, "model", err)) < 0 ||
        (rc = get_str(L, t, "source", &m->source, "model", err)) < 0 ||
        (rc = get_int(L, t, "layers", &v, "model", err)) < 0 ||
        (rc = get_int(L, t, "experts", &m->experts, "model", err)) < 0 ||
        (rc = get_int(L, t, "experts_per_token", &m->experts_per_token, "model", err)) < 0)
        goto fail;
    m->layers = (int)v;
    lua_getfield(L, t, "tensors");
    size_t n = (size_t)lua_rawlen(L, -1);
    m->tensors = calloc(n ? n : 1, sizeof(*m->tensors));
    if (!m->tensors) {
        lua_pop(L, 1);
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto fail;
    }
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, -1, (lua_Integer)i + 1);
        m->n_tensors = i + 1;
        rc = read_tensor(L, lua_gettop(L), &m->tensors[i], err);
        lua_pop(L, 1);
        if (rc < 0) {
            lua_pop(L, 1);
            goto fail;
        }
        if (m->tensors[i].layer < -1 || m->tensors[i].layer > m->layers) {
            lua_pop(L, 1);
            rc = rf_error_set(err, RF_EINVAL, "%s.layer: %d outside -1..%d", m->tensors[i].name,
                              m->tensors[i].layer, m->layers);
            goto fail;
        }
    }
    lua_pop(L, 1);
    /* The model's own checks (checked products, enums) come first: past them every numel
     * below is exact. */
    if ((rc = rf_model_check(m, err)) < 0)
        goto fail;
    int64_t bytes = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t b = rf_tensor_numel(&m->tensors[i]) * (int64_t)rf_dtype_size(m->tensors[i].dtype);
        if (__builtin_add_overflow(bytes, b, &bytes) || bytes > RF_MAX_ELEMENTS * 4) {
            rc = rf_error_set(err, RF_EINVAL, "model %s: more than 2^%d bytes", m->name,
                              RF_MAX_ELEMENTS_LOG2 + 2);
            goto fail;
        }
    }
    return 0;
fail:
    return rc;
}

/* The upper part of a mixed cluster (cluster.lua: cluster.upper), if it has one. */
static int read_upper(lua_State *L, int t, struct rf_cluster *c, struct rf_error *err)
{
    struct rf_cluster_part *u = &c->upper;
    int rc = 0;
    lua_getfield(L, t, "upper");
    int p = lua_gettop(L);
    if (!lua_istable(L, p))
        goto out;
    u->present = true;
    if ((rc = get_str(L, p, "name", &u->name, "cluster.upper", err)) < 0 ||
        (rc = get_str(L, p, "source", &u->source, "cluster.upper", err)) < 0 ||
        (rc = get_int(L, p, "first_node", &u->first_node, "cluster.upper", err)) < 0)
        goto out;
    const struct {
        const char *key;
        double *out;
    } f[] = {{"hbm_gb", &u->hbm_gb},           {"nvlink_gbps", &u->nvlink_gbps},
             {"nic_gbps", &u->nic_gbps},       {"pcie_gbps", &u->pcie_gbps},
             {"memcpy_gbps", &u->memcpy_gbps}, {"quant_gbps", &u->quant_gbps},
             {"h2d_gbps", &u->h2d_gbps},       {"d2h_gbps", &u->d2h_gbps}};
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]) && rc == 0; i++)
        rc = get_num(L, p, f[i].key, f[i].out, "cluster.upper", err);
    if (rc == 0 &&
        (u->first_node < 1 || u->first_node >= c->nodes || u->hbm_gb <= 0 || u->nvlink_gbps <= 0 ||
         u->memcpy_gbps <= 0 || u->quant_gbps <= 0 || (c->nic.per_node > 0 && u->nic_gbps <= 0)))
        rc = rf_error_set(err, RF_EINVAL,
                          "cluster %s: the upper part's sizes and rates must "
                          "be positive, from a node inside the cluster",
                          c->name);
out:
    lua_pop(L, 1);
    return rc;
}

/* Reads the normalised cluster at stack index t (every field present, see the contract). */
static int read_cluster(lua_State *L, int t, struct rf_cluster *c, struct rf_error *err)
{
    int rc;
    memset(c, 0, sizeof(*c));
    if ((rc = get_str(L, t, "name", &c->name, "cluster", err)) < 0 ||
        (rc = get_str(L, t, "source", &c->source, "cluster", err)) < 0)
        return rc;
    /* Every numeric field, from the one list (topology.h) the description also uses. */
    for (size_t i = 0; i < rf_cluster_n_fields; i++) {
        const struct rf_cluster_field *f = &rf_cluster_fields[i];
        char ctx[64];
        snprintf(ctx, sizeof(ctx), "cluster%s%s", f->table ? "." : "", f->table ? f->table : "");
        int sub = t;
        if (f->table) {
            lua_getfield(L, t, f->table);
            sub = lua_gettop(L);
        }
        void *out = (char *)c + f->offset;
        rc = f->integer ? get_int(L, sub, f->key, out, ctx, err)
                        : get_num(L, sub, f->key, out, ctx, err);
        if (f->table)
            lua_pop(L, 1);
        if (rc < 0)
            return rc;
    }
    lua_getfield(L, t, "fabric");
    lua_getfield(L, -1, "pxn");
    c->fabric.pxn = lua_toboolean(L, -1);
    lua_pop(L, 2);
    if ((rc = read_upper(L, t, c, err)) < 0)
        return rc;
    /* A cluster without NICs (localhost) is one NVLink domain; models/lib checks that. */
    if (c->nodes < 1 || c->gpus_per_node < 1 || c->nvlink.domain_gpus < 1 || c->nic.per_node < 0 ||
        c->fabric.nodes_per_leaf < 1 || c->cal.streams < 1 || c->nvlink.gbps <= 0 ||
        (c->nic.per_node > 0 && c->nic.gbps <= 0) || c->cal.memcpy_gbps <= 0 ||
        c->cal.quant_gbps <= 0 || c->fabric.oversubscription <= 0)
        return rf_error_set(err, RF_EINVAL, "cluster %s: sizes and rates must be positive",
                            c->name);
    int64_t gpus;
    if (__builtin_mul_overflow(c->nodes, c->gpus_per_node, &gpus) || gpus > RF_MAX_GPUS)
        return rf_error_set(err, RF_EINVAL, "cluster %s: more than 2^31 GPUs", c->name);
    return 0;
}

static int read_side(lua_State *L, int t, const char *ctx, enum rf_side_kind kind,
                     struct rf_side *s, struct rf_error *err)
{
    int rc;
    memset(s, 0, sizeof(*s));
    s->kind = kind;
    if ((rc = get_int(L, t, "gpus", &s->gpus, ctx, err)) < 0 ||
        (rc = get_int(L, t, "first_gpu", &s->first_gpu, ctx, err)) < 0 ||
        (rc = get_int(L, t, "tp", &s->tp, ctx, err)) < 0 ||
        (rc = get_int(L, t, "pp", &s->pp, ctx, err)) < 0 ||
        (rc = get_int(L, t, "dp", &s->dp, ctx, err)) < 0 ||
        (rc = get_int(L, t, "ep", &s->ep, ctx, err)) < 0 ||
        (rc = get_enum(L, t, "dtype", parse_dtype, &s->dtype, ctx, err)) < 0)
        return rc;
    if (kind == RF_SIDE_MEGATRON) {
        if ((rc = get_int(L, t, "cp", &s->cp, ctx, err)) < 0 ||
            (rc = get_int(L, t, "etp", &s->etp, ctx, err)) < 0 ||
            (rc = get_int(L, t, "edp", &s->edp, ctx, err)) < 0)
            return rc;
        lua_getfield(L, t, "fsdp");
        s->fsdp = lua_toboolean(L, -1);
        lua_getfield(L, t, "distributed_optimizer");
        s->distributed_optimizer = lua_toboolean(L, -1);
        lua_getfield(L, t, "offload_params");
        s->offload_params = lua_toboolean(L, -1);
        lua_getfield(L, t, "offload_optimizer");
        s->offload_optimizer = lua_toboolean(L, -1);
        lua_pop(L, 4);
        s->replicas = 1;
    } else {
        if ((rc = get_int(L, t, "replicas", &s->replicas, ctx, err)) < 0 ||
            (rc = get_num(L, t, "gpu_memory_utilization", &s->memory_utilization, ctx, err)) < 0 ||
            (rc = get_int(L, t, "domain_gpus", &s->domain_gpus, ctx, err)) < 0)
            return rc;
        s->cp = s->etp = s->edp = 1;
    }
    int64_t sizes[] = {s->gpus, s->tp, s->cp, s->pp, s->dp, s->ep, s->etp, s->edp, s->replicas};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
        if (sizes[i] < 1)
            return rf_error_set(err, RF_EINVAL, "%s: parallel sizes must be positive", ctx);
    if (s->first_gpu < 0)
        return rf_error_set(err, RF_EINVAL, "%s.first_gpu: must not be negative", ctx);
    if (s->gpus > RF_MAX_GPUS || s->first_gpu > RF_MAX_GPUS - s->gpus)
        return rf_error_set(err, RF_EINVAL, "%s: GPUs beyond 2^31", ctx);
    int64_t prod = kind == RF_SIDE_MEGATRON ? s->tp * s->cp * s->dp * s->pp
                                            : s->tp * s->dp * s->pp * s->replicas;
    if (prod != s->gpus)
        return rf_error_set(err, RF_EINVAL, "%s: gpus %lld != product of parallel sizes %lld", ctx,
                            (long long)s->gpus, (long long)prod);
    if (kind == RF_SIDE_MEGATRON && s->edp * s->ep * s->etp != s->tp * s->cp * s->dp)
        return rf_error_set(err, RF_EINVAL, "%s: edp*ep*etp != tp*cp*dp", ctx);
    if (kind == RF_SIDE_VLLM && s->ep != 1 && s->ep != s->tp * s->dp)
        return rf_error_set(err, RF_EINVAL, "%s.ep: must be 1 or tp*dp", ctx);

    lua_getfield(L, t, "stage_layers");
    if ((int64_t)lua_rawlen(L, -1) != s->pp) {
        lua_pop(L, 1);
        return rf_error_set(err, RF_EINVAL, "%s.stage_layers: expected pp = %lld entries", ctx,
                            (long long)s->pp);
    }
    s->stage_layers = calloc((size_t)s->pp, sizeof(int));
    if (!s->stage_layers) {
        lua_pop(L, 1);
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    }
    for (int64_t i = 0; i < s->pp; i++) {
        lua_rawgeti(L, -1, (lua_Integer)i + 1);
        s->stage_layers[i] = (int)lua_tointeger(L, -1);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return 0;
}

/* The readers run inside lua_pcall (a Lua API call on a value of the wrong type raises),
 * with their C results in this context. Structs stay consistent at every step (pointers
 * NULL or owned, counts bumped before filling), so the caller releases them on failure. */
struct reader {
    void *out;
    struct rf_error *err;
    int rc;
    const char *what; /* the input, for errors before its source is known */
};

static int read_scenario(lua_State *L, int t, struct rf_scenario *sc, struct rf_error *err);

/* A broken contract is reported with the file the table came from, as every error is. */
static void name_source(struct reader *r, const char *source)
{
    char msg[sizeof(r->err->msg)];
    if (r->rc >= 0 || !source || !r->err)
        return;
    snprintf(msg, sizeof(msg), "%s", r->err->msg);
    rf_error_set(r->err, r->rc, "%s: %s", source, msg);
}

static int l_read_cluster(lua_State *L)
{
    struct reader *r = lua_touserdata(L, 1);
    struct rf_cluster *c = r->out;
    r->rc = read_cluster(L, 2, c, r->err);
    name_source(r, c->source ? c->source : r->what);
    return 0;
}

static int l_read_model(lua_State *L)
{
    struct reader *r = lua_touserdata(L, 1);
    struct rf_model *m = r->out;
    r->rc = read_model(L, 2, m, r->err);
    name_source(r, m->source ? m->source : r->what);
    return 0;
}

static int l_read_scenario(lua_State *L)
{
    struct reader *r = lua_touserdata(L, 1);
    struct rf_scenario *sc = r->out;
    r->rc = read_scenario(L, 2, sc, r->err);
    name_source(r, sc->source ? sc->source : r->what);
    return 0;
}

/* Calls refit.<fn>(arg), then converts its result with reader under protection. */
static int load(struct rf_lua *R, const char *fn, const char *arg, int ref, const char *strategy,
                lua_CFunction reader, void *out, struct rf_error *err)
{
    lua_State *L = R->L;
    struct reader r = {out, err, 0, arg ? arg : "scenario"};
    int rc = call(R, fn, arg, ref, strategy, err);
    if (rc < 0)
        return rc;
    lua_pushcfunction(L, reader);
    lua_pushlightuserdata(L, &r);
    lua_rotate(L, -3, 2); /* reader, ctx, result */
    if (lua_pcall(L, 2, 0, 0) != LUA_OK) {
        rf_error_set(err, RF_EINVAL, "%s: malformed result from models/lib: %s",
                     arg ? arg : "scenario", lua_tostring(L, -1));
        lua_pop(L, 1);
        return RF_EINVAL;
    }
    return r.rc;
}

int rf_lua_load_model(struct rf_lua *R, const char *spec, struct rf_model *model,
                      struct rf_error *err)
{
    memset(model, 0, sizeof(*model));
    int rc = load(R, "load_model", spec, LUA_NOREF, NULL, l_read_model, model, err);
    if (rc < 0)
        rf_model_release(model);
    return rc;
}

int rf_lua_load_cluster(struct rf_lua *R, const char *spec, struct rf_cluster *cluster,
                        struct rf_error *err)
{
    memset(cluster, 0, sizeof(*cluster));
    int rc = load(R, "load_cluster", spec, LUA_NOREF, NULL, l_read_cluster, cluster, err);
    if (rc < 0)
        rf_cluster_release(cluster);
    return rc;
}

int rf_lua_load_scenario(struct rf_lua *R, const struct rf_scenario_src *src, const char *strategy,
                         struct rf_scenario *sc, struct rf_error *err)
{
    memset(sc, 0, sizeof(*sc));
    int rc =
        src->path
            ? load(R, "load_scenario", src->path, LUA_NOREF, strategy, l_read_scenario, sc, err)
            : load(R, "load_scenario_table", NULL, src->ref, strategy, l_read_scenario, sc, err);
    if (rc < 0)
        rf_scenario_release(sc);
    return rc;
}

static int read_scenario(lua_State *L, int t, struct rf_scenario *sc, struct rf_error *err)
{
    int rc;
    if ((rc = get_str(L, t, "source", &sc->source, "scenario", err)) < 0 ||
        (rc = get_enum(L, t, "strategy", parse_strategy, &sc->strategy, "scenario", err)) < 0)
        goto out;
    if ((rc = opt_str(L, t, "sides", &sc->sides, err)) < 0 ||
        (rc = opt_str(L, t, "update", &sc->update, err)) < 0)
        goto out;
    lua_getfield(L, t, "fit_sites");
    if (lua_istable(L, -1)) {
        int f = lua_gettop(L);
        if ((rc = opt_str(L, f, "train", &sc->fit_site[0], err)) < 0 ||
            (rc = opt_str(L, f, "infer", &sc->fit_site[1], err)) < 0 ||
            (rc = opt_str(L, f, "share", &sc->share_site, err)) < 0) {
            lua_pop(L, 1);
            goto out;
        }
    }
    lua_pop(L, 1);

    if ((rc = get_int(L, t, "staging_bytes", &sc->staging_bytes, "scenario", err)) < 0 ||
        (rc = get_int(L, t, "chunk_bytes", &sc->chunk_bytes, "scenario", err)) < 0)
        goto out;
    lua_getfield(L, t, "relay");
    if (lua_istable(L, -1)) {
        int64_t fanout = 1, depth = 0;
        lua_getfield(L, -1, "ring");
        sc->relay.ring = lua_toboolean(L, -1);
        lua_pop(L, 1);
        if ((rc = get_int(L, lua_gettop(L), "fanout", &fanout, "scenario.relay", err)) < 0 ||
            (rc = get_int(L, lua_gettop(L), "depth", &depth, "scenario.relay", err)) < 0) {
            lua_pop(L, 1);
            goto out;
        }
        /* models/lib bounds both; C checks again (the planner sizes trees with them). */
        if (fanout < 1 || fanout > 64 || depth < 0 || depth > RF_GPUS_MAX) {
            lua_pop(L, 1);
            rc = rf_error_set(err, RF_EINVAL,
                              "scenario.relay: fanout %lld (1..64) or depth %lld (0..2^20) "
                              "out of range",
                              (long long)fanout, (long long)depth);
            goto out;
        }
        sc->relay.fanout = (int32_t)fanout;
        sc->relay.depth = (int32_t)depth;
    }
    lua_pop(L, 1);
    if (sc->chunk_bytes < 0) {
        rc = rf_error_set(err, RF_EINVAL, "scenario.chunk_bytes: must not be negative");
        goto out;
    }
    /* policy.lua's schema rejects other values with file:line; this is the C side's own
     * check, so no value can silently mean balanced. */
    if ((rc = get_enum(L, t, "sources", parse_sources, &sc->sources, "scenario", err)) < 0)
        goto out;
    lua_getfield(L, t, "allow_overcommit");
    sc->allow_overcommit = lua_toboolean(L, -1);
    lua_pop(L, 1);
    if (sc->staging_bytes < 1) {
        rc = rf_error_set(err, RF_EINVAL, "scenario.staging_bytes: must be positive");
        goto out;
    }
    lua_getfield(L, t, "model");
    rc = read_model(L, lua_gettop(L), &sc->model, err);
    lua_pop(L, 1);
    if (rc < 0)
        goto out;
    /* `overlap` (models/lib/scenario.lua), checked there. */
    lua_getfield(L, t, "overlap");
    if (lua_istable(L, -1)) {
        int o = lua_gettop(L);
        sc->overlap.on = true;
        lua_getfield(L, o, "engines");
        sc->overlap.rolling = lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "rolling") == 0;
        lua_getfield(L, o, "granularity");
        sc->overlap.layer = lua_isstring(L, -1) && strcmp(lua_tostring(L, -1), "layer") == 0;
        lua_getfield(L, o, "generation_gbps");
        sc->overlap.generation_bps = lua_tonumber(L, -1) * 1e9;
        lua_pop(L, 3);
    }
    lua_pop(L, 1);
    lua_getfield(L, t, "frozen_model");
    rc = lua_istable(L, -1) ? read_model(L, lua_gettop(L), &sc->frozen, err) : 0;
    lua_pop(L, 1);
    if (rc < 0)
        goto out;
    lua_getfield(L, t, "train");
    rc = read_side(L, lua_gettop(L), "train", RF_SIDE_MEGATRON, &sc->train, err);
    lua_pop(L, 1);
    if (rc < 0)
        goto out;
    lua_getfield(L, t, "infer");
    rc = read_side(L, lua_gettop(L), "infer", RF_SIDE_VLLM, &sc->infer, err);
    lua_pop(L, 1);
    if (rc < 0)
        goto out;

    lua_getfield(L, t, "cluster");
    rc = read_cluster(L, lua_gettop(L), &sc->cluster, err);
    lua_pop(L, 1);
    if (rc < 0)
        goto out;
    if (!(sc->cluster_system = strdup(sc->cluster.name))) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    sc->cluster_nodes = sc->cluster.nodes;
    /* models/lib checks both; the planner indexes GPUs with them, so C checks again. The
     * inference side covers its idle GPUs too (span: rf_engine_place), placed on the
     * cluster's own domains. */
    int64_t total = sc->cluster.nodes * sc->cluster.gpus_per_node;
    struct rf_engine_place pl;
    if (sc->infer.domain_gpus != 0 && sc->infer.domain_gpus != sc->cluster.nvlink.domain_gpus) {
        rc = rf_error_set(err, RF_EINVAL,
                          "infer.domain_gpus: %lld, but the cluster's NVLink domains hold %lld "
                          "GPUs",
                          (long long)sc->infer.domain_gpus,
                          (long long)sc->cluster.nvlink.domain_gpus);
        goto out;
    }
    if ((rc = rf_engine_place(sc->infer.tp * sc->infer.dp * sc->infer.pp, sc->infer.replicas,
                              sc->infer.first_gpu, sc->infer.domain_gpus, "infer", &pl, err)) < 0)
        goto out;
    if (sc->train.first_gpu + sc->train.gpus > total || sc->infer.first_gpu + pl.span > total) {
        rc = rf_error_set(err, RF_EINVAL, "train, infer: GPUs outside the cluster's %lld",
                          (long long)total);
        goto out;
    }
    int64_t bytes = rf_model_bytes(&sc->model), prod;
    if (__builtin_mul_overflow(bytes, 2 * (sc->train.gpus + pl.span), &prod)) {
        rc = rf_error_set(err, RF_EINVAL,
                          "model: %lld bytes to %lld GPUs overflow the planner's "
                          "byte counts",
                          (long long)bytes, (long long)(sc->train.gpus + pl.span));
        goto out;
    }

    lua_getfield(L, t, "framework");
    rc = lua_isnil(L, -1) ? 0 : rf_framework_read(L, lua_gettop(L), &sc->framework, err);
    lua_pop(L, 1);
    if (rc < 0)
        goto out;

    lua_getfield(L, t, "tensor_strategy");
    size_t n = (size_t)lua_rawlen(L, -1);
    if (n != sc->model.n_tensors) {
        lua_pop(L, 1);
        rc = rf_error_set(err, RF_EINVAL, "tensor_strategy: %zu entries for %zu tensors", n,
                          sc->model.n_tensors);
        goto out;
    }
    sc->tensor_strategy = calloc(n ? n : 1, sizeof(*sc->tensor_strategy));
    if (!sc->tensor_strategy) {
        lua_pop(L, 1);
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        lua_rawgeti(L, -1, (lua_Integer)i + 1);
        const char *s = lua_tostring(L, -1);
        int bad = !s || rf_strategy_parse(s, &sc->tensor_strategy[i]) < 0 ||
                  sc->tensor_strategy[i] == RF_STRAT_HYBRID ||
                  sc->tensor_strategy[i] == RF_STRAT_AUTO;
        lua_pop(L, 1);
        if (bad) {
            lua_pop(L, 1);
            rc = rf_error_set(err, RF_EINVAL,
                              "tensor_strategy[%zu]: '%s' is not broadcast, reshard or "
                              "hierarchical",
                              i + 1, s ? s : "nil");
            goto out;
        }
    }
    lua_pop(L, 1);
    rc = 0;
out:
    lua_settop(L, t);
    return rc;
}

int rf_scenario_init_sides(struct rf_scenario *sc, struct rf_error *err)
{
    int rc;
    if ((rc = rf_side_init(&sc->train, sc->model.layers, err)) < 0 ||
        (rc = rf_side_init(&sc->infer, sc->model.layers, err)) < 0)
        return rc;
    struct rf_memory_opts mo = {
        .hbm_gb = sc->cluster.hbm_gb,
        .infer_hbm_gb =
            rf_cluster_is_upper(&sc->cluster, sc->infer.first_gpu) ? sc->cluster.upper.hbm_gb : 0,
        .staging_bytes = sc->staging_bytes,
        .streams = sc->cluster.cal.streams,
        .frozen = sc->frozen.n_tensors ? &sc->frozen : NULL,
        .landing = rf_overlap_landing(&sc->overlap)};
    rf_memory_of(&sc->model, &sc->train, &sc->infer, &mo, &sc->mem_train, &sc->mem_infer);
    const struct rf_side_memory *side[2] = {&sc->mem_train, &sc->mem_infer};
    for (int i = 0; i < 2; i++) {
        if (side[i]->fits)
            continue;
        if (!sc->allow_overcommit)
            return rf_memory_refuse(side[i], i == 0, sc->fit_site[i], sc->share_site, err);
        sc->overcommitted = true;
    }
    return 0;
}

void rf_scenario_release(struct rf_scenario *sc)
{
    if (!sc)
        return;
    free(sc->source);
    free(sc->sides);
    free(sc->update);
    free(sc->fit_site[0]);
    free(sc->fit_site[1]);
    free(sc->share_site);
    rf_model_release(&sc->model);
    rf_model_release(&sc->frozen);
    rf_side_release(&sc->train);
    rf_side_release(&sc->infer);
    free(sc->tensor_strategy);
    free(sc->cluster_system);
    rf_cluster_release(&sc->cluster);
    rf_framework_release(&sc->framework);
    memset(sc, 0, sizeof(*sc));
}
