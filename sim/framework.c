/* Framework profiles (sim/framework.h): the normalised Lua profile read into struct
 * rf_framework, the names of its enums, and its release. Validation is models/lib's
 * (framework.lua); a failure here is a broken contract, named by field. */
#include "framework.h"

#include <lauxlib.h>
#include <lua.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

static const char *const comm_names[] = {"receivers", "all"};
static const char *const root_names[] = {"first", "stage", "owner"};
static const char *const gather_names[] = {"p2p", "export", "stage", "host"};
static const char *const quant_names[] = {"sender", "receiver_full", "receiver_shard"};
static const char *const loader_names[] = {"vllm", "sglang"};
static const char *const colo_export_names[] = {"export", "fsdp"};
static const char *const p2p_gather_names[] = {"stage", "export", "fsdp", "host"};
static const char *const p2p_register_names[] = {"none", "replica_params", "buffers"};

#define N_OF(a) ((int)(sizeof(a) / sizeof((a)[0])))

static int parse_name(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

static const char *name_of(int v, const char *const *names, int n)
{
    return v >= 0 && v < n ? names[v] : "?";
}

const char *rf_fw_comm_name(enum rf_fw_comm v)
{
    return name_of((int)v, comm_names, N_OF(comm_names));
}
const char *rf_fw_root_name(enum rf_fw_root v)
{
    return name_of((int)v, root_names, N_OF(root_names));
}
const char *rf_fw_gather_name(enum rf_fw_gather v)
{
    return name_of((int)v, gather_names, N_OF(gather_names));
}
const char *rf_fw_quant_name(enum rf_fw_quant v)
{
    return name_of((int)v, quant_names, N_OF(quant_names));
}

const char *rf_fw_loader_name(enum rf_fw_loader v)
{
    return name_of((int)v, loader_names, N_OF(loader_names));
}
const char *rf_fw_colo_export_name(enum rf_fw_colo_export v)
{
    return name_of((int)v, colo_export_names, N_OF(colo_export_names));
}

const char *rf_fw_p2p_gather_name(enum rf_fw_p2p_gather v)
{
    return name_of((int)v, p2p_gather_names, N_OF(p2p_gather_names));
}
const char *rf_fw_p2p_register_name(enum rf_fw_p2p_register v)
{
    return name_of((int)v, p2p_register_names, N_OF(p2p_register_names));
}
int rf_fw_p2p_gather_parse(const char *s, enum rf_fw_p2p_gather *out)
{
    int i = parse_name(s, p2p_gather_names, N_OF(p2p_gather_names));
    if (i >= 0)
        *out = (enum rf_fw_p2p_gather)i;
    return i < 0 ? -1 : 0;
}
int rf_fw_p2p_register_parse(const char *s, enum rf_fw_p2p_register *out)
{
    int i = parse_name(s, p2p_register_names, N_OF(p2p_register_names));
    if (i >= 0)
        *out = (enum rf_fw_p2p_register)i;
    return i < 0 ? -1 : 0;
}
int rf_fw_loader_parse(const char *s, enum rf_fw_loader *out)
{
    int i = parse_name(s, loader_names, N_OF(loader_names));
    if (i >= 0)
        *out = (enum rf_fw_loader)i;
    return i < 0 ? -1 : 0;
}

int rf_fw_comm_parse(const char *s, enum rf_fw_comm *out)
{
    int i = parse_name(s, comm_names, N_OF(comm_names));
    if (i >= 0)
        *out = (enum rf_fw_comm)i;
    return i < 0 ? -1 : 0;
}
int rf_fw_root_parse(const char *s, enum rf_fw_root *out)
{
    int i = parse_name(s, root_names, N_OF(root_names));
    if (i >= 0)
        *out = (enum rf_fw_root)i;
    return i < 0 ? -1 : 0;
}
int rf_fw_gather_parse(const char *s, enum rf_fw_gather *out)
{
    int i = parse_name(s, gather_names, N_OF(gather_names));
    if (i >= 0)
        *out = (enum rf_fw_gather)i;
    return i < 0 ? -1 : 0;
}
int rf_fw_quant_parse(const char *s, enum rf_fw_quant *out)
{
    int i = parse_name(s, quant_names, N_OF(quant_names));
    if (i >= 0)
        *out = (enum rf_fw_quant)i;
    return i < 0 ? -1 : 0;
}

void rf_framework_release(struct rf_framework *fw)
{
    if (!fw)
        return;
    free(fw->name);
    free(fw->source);
    memset(fw, 0, sizeof(*fw));
}

/* Field readers: sim/scenario.c's are static to it, and these name the profile's dotted
 * fields ("framework.broadcast.buffers"). Each leaves the stack as it found it. */
static int fail(struct rf_error *err, const char *ctx, const char *key, const char *what)
{
    return rf_error_set(err, RF_EINVAL, "framework%s%s.%s: %s", *ctx ? "." : "", ctx, key, what);
}

static int get_num(lua_State *L, int t, const char *ctx, const char *key, double lo, double hi,
                   double *out, struct rf_error *err)
{
    int isnum;
    lua_getfield(L, t, key);
    double v = (double)lua_tonumberx(L, -1, &isnum);
    lua_pop(L, 1);
    if (!isnum || !isfinite(v) || v < lo || v > hi) {
        char what[96];
        snprintf(what, sizeof(what), "expected a number from %g to %g", lo, hi);
        return fail(err, ctx, key, what);
    }
    *out = v;
    return 0;
}

static int get_int(lua_State *L, int t, const char *ctx, const char *key, int64_t lo, int64_t hi,
                   int64_t *out, struct rf_error *err)
{
    int isnum;
    lua_getfield(L, t, key);
    int64_t v = (int64_t)lua_tointegerx(L, -1, &isnum);
    lua_pop(L, 1);
    if (!isnum || v < lo || v > hi) {
        char what[96];
        snprintf(what, sizeof(what), "expected an integer from %lld to %lld", (long long)lo,
                 (long long)hi);
        return fail(err, ctx, key, what);
    }
    *out = v;
    return 0;
}

static bool get_bool(lua_State *L, int t, const char *key)
{
    lua_getfield(L, t, key);
    bool v = lua_toboolean(L, -1);
    lua_pop(L, 1);
    return v;
}

static int get_str(lua_State *L, int t, const char *key, char **out, struct rf_error *err)
{
    lua_getfield(L, t, key);
    const char *s = lua_tostring(L, -1);
    *out = s ? strdup(s) : NULL;
    lua_pop(L, 1);
    if (!s)
        return fail(err, "", key, "expected a string");
    return *out ? 0 : rf_error_set(err, RF_ENOMEM, "out of memory");
}

/* A string field mapped through parse (one of the rf_fw_*_parse functions). */
static int get_enum(lua_State *L, int t, const char *ctx, const char *key,
                    int (*parse)(const char *, void *), void *out, struct rf_error *err)
{
    lua_getfield(L, t, key);
    const char *s = lua_tostring(L, -1);
    int bad = !s || parse(s, out) < 0;
    char what[96];
    if (bad)
        snprintf(what, sizeof(what), "unknown value '%s'", s ? s : "nil");
    lua_pop(L, 1);
    return bad ? fail(err, ctx, key, what) : 0;
}

static int parse_comm(const char *s, void *out)
{
    return rf_fw_comm_parse(s, out);
}
static int parse_root(const char *s, void *out)
{
    return rf_fw_root_parse(s, out);
}
static int parse_gather(const char *s, void *out)
{
    return rf_fw_gather_parse(s, out);
}
static int parse_quant(const char *s, void *out)
{
    return rf_fw_quant_parse(s, out);
}
static int parse_loader(const char *s, void *out)
{
    return rf_fw_loader_parse(s, out);
}
static int parse_p2p_gather(const char *s, void *out)
{
    return rf_fw_p2p_gather_parse(s, out);
}
static int parse_p2p_register(const char *s, void *out)
{
    return rf_fw_p2p_register_parse(s, out);
}
static int parse_colo_export(const char *s, void *out)
{
    int i = parse_name(s, colo_export_names, N_OF(colo_export_names));
    if (i >= 0)
        *(enum rf_fw_colo_export *)out = (enum rf_fw_colo_export)i;
    return i < 0 ? -1 : 0;
}

/* An optional string field copied into buf (empty when absent). */
static void get_text(lua_State *L, int t, const char *key, char *buf, size_t size)
{
    lua_getfield(L, t, key);
    const char *s = lua_tostring(L, -1);
    snprintf(buf, size, "%s", s ? s : "");
    lua_pop(L, 1);
}

/* A bucket table { hbm_fraction, max_mib, mib } at the top of the stack: one form or the
 * other (framework.lua checks it; the step model relies on it). */
static int read_bucket(lua_State *L, const char *section, double *fraction, int64_t *max_bytes,
                       int64_t *bytes, struct rf_error *err);

/* Counts of calls per tensor and MiB bounds as framework.lua sets them. */
#define RF_FW_MAX_CALLS 1e6
#define RF_FW_MAX_MIB ((int64_t)1 << 20)
#define RF_MIB ((int64_t)1 << 20)

static int read_strategies(lua_State *L, int t, struct rf_framework *fw, struct rf_error *err)
{
    int rc = 0;
    lua_getfield(L, t, "strategies");
    size_t n = lua_istable(L, -1) ? (size_t)lua_rawlen(L, -1) : 0;
    if (n == 0)
        rc = fail(err, "", "strategies", "expected a list of at least 1 strategy");
    for (size_t i = 0; rc == 0 && i < n; i++) {
        enum rf_strategy s;
        lua_rawgeti(L, -1, (lua_Integer)i + 1);
        const char *name = lua_tostring(L, -1);
        /* "p2p" is a framework's point-to-point path, planned as its p2p section says. */
        if (name && strcmp(name, "p2p") == 0) {
            lua_pop(L, 1);
            continue;
        }
        if (!name || rf_strategy_parse(name, &s) < 0 || s == RF_STRAT_AUTO)
            rc = rf_error_set(err, RF_EINVAL,
                              "framework.strategies[%zu]: '%s' is not a "
                              "strategy a framework runs",
                              i + 1, name ? name : "nil");
        else
            fw->strategies |= 1u << s;
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return rc;
}

static int read_broadcast(lua_State *L, int b, struct rf_framework *fw, struct rf_error *err)
{
    int rc;
    int64_t buffers;
    const char *ctx = "broadcast";
    if ((rc = get_enum(L, b, ctx, "communicator", parse_comm, &fw->comm, err)) < 0 ||
        (rc = get_enum(L, b, ctx, "root", parse_root, &fw->root, err)) < 0 ||
        (rc = get_enum(L, b, ctx, "gather", parse_gather, &fw->gather, err)) < 0 ||
        (rc = get_enum(L, b, ctx, "quantize", parse_quant, &fw->quant, err)) < 0 ||
        (rc = get_int(L, b, ctx, "buffers", 1, 2, &buffers, err)) < 0 ||
        (rc = get_num(L, b, ctx, "export_calls", 0, RF_FW_MAX_CALLS, &fw->export_calls, err)) < 0 ||
        (rc = get_num(L, b, ctx, "load_calls", 0, RF_FW_MAX_CALLS, &fw->load_calls, err)) < 0)
        return rc;
    fw->buffers = (int32_t)buffers;
    fw->broadcast_per_tensor = get_bool(L, b, "per_tensor");
    fw->wait_load = get_bool(L, b, "wait_load");
    fw->pack_copy = get_bool(L, b, "pack_copy");
    lua_getfield(L, b, "bucket");
    rc = read_bucket(L, "broadcast", &fw->bucket_hbm_fraction, &fw->bucket_max_bytes,
                     &fw->bucket_bytes, err);
    get_text(L, b, "overlap_why", fw->overlap_why, sizeof(fw->overlap_why));
    if (rc == 0 && (rc = get_enum(L, b, ctx, "loader", parse_loader, &fw->loader, err)) < 0) {
        lua_pop(L, 1);
        return rc;
    }
    lua_pop(L, 1);
    return rc;
}

static int read_bucket(lua_State *L, const char *section, double *fraction, int64_t *max_bytes,
                       int64_t *bytes, struct rf_error *err)
{
    int rc;
    int64_t max_mib, mib;
    int k = lua_gettop(L);
    char ctx[64];
    snprintf(ctx, sizeof(ctx), "%s.bucket", section);
    if (!lua_istable(L, k))
        return fail(err, section, "bucket", "expected a table");
    if ((rc = get_num(L, k, ctx, "hbm_fraction", 0, 1, fraction, err)) < 0 ||
        (rc = get_int(L, k, ctx, "max_mib", 0, RF_FW_MAX_MIB, &max_mib, err)) < 0 ||
        (rc = get_int(L, k, ctx, "mib", 0, RF_FW_MAX_MIB, &mib, err)) < 0)
        return rc;
    bool by_fraction = *fraction > 0;
    if (by_fraction ? max_mib < 1 || mib != 0 : mib < 1 || max_mib != 0)
        return fail(err, section, "bucket",
                    "expected mib > 0 alone, or hbm_fraction > 0 with max_mib > 0");
    *max_bytes = max_mib * RF_MIB;
    *bytes = mib * RF_MIB;
    return 0;
}

static int read_colocated(lua_State *L, int c, struct rf_framework *fw, struct rf_error *err)
{
    int rc;
    int64_t buffers;
    const char *ctx = "colocated";
    if ((rc = get_enum(L, c, ctx, "export", parse_colo_export, &fw->colo_export, err)) < 0 ||
        (rc = get_enum(L, c, ctx, "quantize", parse_quant, &fw->colo_quant, err)) < 0 ||
        (rc = get_int(L, c, ctx, "buffers", 1, 2, &buffers, err)) < 0 ||
        (rc = get_num(L, c, ctx, "export_calls", 0, RF_FW_MAX_CALLS, &fw->colo_export_calls, err)) <
            0 ||
        (rc = get_num(L, c, ctx, "load_calls", 0, RF_FW_MAX_CALLS, &fw->colo_load_calls, err)) < 0)
        return rc;
    fw->colo_buffers = (int32_t)buffers;
    fw->colo_clone = get_bool(L, c, "clone");
    fw->colo_offload_optimizer = get_bool(L, c, "offload_optimizer");
    fw->colo_wake_weights = get_bool(L, c, "wake_weights");
    fw->colo_offload_weights = get_bool(L, c, "offload_weights");
    get_text(L, c, "overlap_why", fw->colo_overlap_why, sizeof(fw->colo_overlap_why));
    lua_getfield(L, c, "bucket");
    rc = read_bucket(L, "colocated", &fw->colo_bucket_hbm_fraction, &fw->colo_bucket_max_bytes,
                     &fw->colo_bucket_bytes, err);
    lua_pop(L, 1);
    if (rc == 0)
        fw->colocated = true;
    return rc;
}

static int read_reshard(lua_State *L, int r, struct rf_framework *fw, struct rf_error *err)
{
    int rc;
    int64_t groups;
    const char *ctx = "reshard";
    if ((rc = get_int(L, r, ctx, "stage_groups", 0, (int64_t)1 << 20, &groups, err)) < 0 ||
        (rc = get_num(L, r, ctx, "calls", 0, RF_FW_MAX_CALLS, &fw->reshard_calls, err)) < 0)
        return rc;
    lua_getfield(L, r, "plan");
    const char *plan = lua_tostring(L, -1);
    bool relay = plan && strcmp(plan, "hierarchical") == 0;
    bool known = plan && (relay || strcmp(plan, "reshard") == 0);
    lua_pop(L, 1);
    if (!known)
        return fail(err, ctx, "plan", "expected \"reshard\" or \"hierarchical\"");
    fw->reshard = true;
    fw->reshard_relay = relay;
    fw->reshard_stage_groups = (int32_t)groups;
    fw->misc_after_bulk = get_bool(L, r, "misc_after_bulk");
    fw->stack_experts = get_bool(L, r, "stack_experts");
    fw->fused_copy = get_bool(L, r, "fused_copy");
    int64_t barriers;
    if ((rc = get_int(L, r, ctx, "barriers", 0, 16, &barriers, err)) < 0)
        return rc;
    fw->reshard_barriers = (int32_t)barriers;
    fw->reshard_serial = get_bool(L, r, "serial_calls");
    return 0;
}

/* A string field of two values: *second says whether it is the second. */
static int get_choice(lua_State *L, int t, const char *ctx, const char *key, const char *first,
                      const char *second, bool *is_second, struct rf_error *err)
{
    char text[32], what[96];
    get_text(L, t, key, text, sizeof(text));
    if (strcmp(text, first) != 0 && strcmp(text, second) != 0) {
        snprintf(what, sizeof(what), "expected \"%s\" or \"%s\"", first, second);
        return fail(err, ctx, key, what);
    }
    *is_second = strcmp(text, second) == 0;
    return 0;
}

static int read_p2p(lua_State *L, int t, struct rf_framework *fw, struct rf_error *err)
{
    int rc;
    int64_t buffers, regions;
    struct rf_fw_p2p *p = &fw->p2p;
    const char *ctx = "p2p";
    if ((rc = get_enum(L, t, ctx, "gather", parse_p2p_gather, &p->gather, err)) < 0 ||
        (rc = get_enum(L, t, ctx, "quantize", parse_quant, &p->quant, err)) < 0 ||
        (rc = get_enum(L, t, ctx, "loader", parse_loader, &p->loader, err)) < 0 ||
        (rc = get_enum(L, t, ctx, "register", parse_p2p_register, &p->reg, err)) < 0 ||
        (rc = get_int(L, t, ctx, "buffers", 1, 2, &buffers, err)) < 0 ||
        (rc = get_int(L, t, ctx, "register_regions", 0, 1 << 20, &regions, err)) < 0 ||
        (rc = get_num(L, t, ctx, "export_calls", 0, RF_FW_MAX_CALLS, &p->export_calls, err)) < 0 ||
        (rc = get_num(L, t, ctx, "load_calls", 0, RF_FW_MAX_CALLS, &p->load_calls, err)) < 0)
        return rc;
    p->buffers = (int32_t)buffers;
    p->register_regions = (int32_t)regions;
    if ((rc = get_choice(L, t, ctx, "plan", "reshard", "broadcast", &p->broadcast_plan, err)) < 0 ||
        (rc = get_choice(L, t, ctx, "select", "shard", "dense_whole", &p->dense_whole, err)) < 0 ||
        (rc = get_choice(L, t, ctx, "from", "gpu", "host", &p->from_host, err)) < 0 ||
        (rc = get_choice(L, t, ctx, "verb", "write", "read", &p->read, err)) < 0 ||
        (rc = get_choice(L, t, ctx, "into", "buffer", "weights", &p->into_weights, err)) < 0)
        return rc;
    p->cpu_loader = get_bool(L, t, "cpu_loader");
    p->wait_nonlast = get_bool(L, t, "wait_nonlast");
    p->receiver_serial = get_bool(L, t, "receiver_serial");
    p->pack_copy = get_bool(L, t, "pack_copy");
    p->experts_after = get_bool(L, t, "experts_after");
    p->register_every_refit = get_bool(L, t, "register_every_refit");
    get_text(L, t, "overlap_why", p->overlap_why, sizeof(p->overlap_why));
    lua_getfield(L, t, "bucket");
    rc =
        read_bucket(L, "p2p", &p->bucket_hbm_fraction, &p->bucket_max_bytes, &p->bucket_bytes, err);
    lua_pop(L, 1);
    if (rc == 0)
        p->present = true;
    return rc;
}

int rf_framework_read(lua_State *L, int t, struct rf_framework *fw, struct rf_error *err)
{
    int rc;
    int top = lua_gettop(L);
    t = lua_absindex(L, t);
    memset(fw, 0, sizeof(*fw));
    if (!lua_istable(L, t)) {
        rc = rf_error_set(err, RF_EINVAL, "framework: expected a table");
        goto out;
    }
    if ((rc = get_str(L, t, "name", &fw->name, err)) < 0 ||
        (rc = get_str(L, t, "source", &fw->source, err)) < 0 ||
        (rc = read_strategies(L, t, fw, err)) < 0 ||
        (rc = get_num(L, t, "", "finalize_s", 0, 3600, &fw->finalize_s, err)) < 0)
        goto out;
    lua_getfield(L, t, "broadcast");
    if (lua_istable(L, -1)) {
        fw->broadcast = true;
        rc = read_broadcast(L, lua_gettop(L), fw, err);
    }
    lua_pop(L, 1);
    if (rc < 0)
        goto out;
    lua_getfield(L, t, "reshard");
    if (lua_istable(L, -1))
        rc = read_reshard(L, lua_gettop(L), fw, err);
    lua_pop(L, 1);
    if (rc < 0)
        goto out;
    lua_getfield(L, t, "colocated");
    if (lua_istable(L, -1))
        rc = read_colocated(L, lua_gettop(L), fw, err);
    lua_pop(L, 1);
    if (rc < 0)
        goto out;
    lua_getfield(L, t, "p2p");
    if (lua_istable(L, -1))
        rc = read_p2p(L, lua_gettop(L), fw, err);
    lua_pop(L, 1);
    if (rc < 0)
        goto out;
    fw->colocated_run = get_bool(L, t, "colocated_run");
    fw->p2p_run = get_bool(L, t, "p2p_run");
    if (fw->p2p_run && !fw->p2p.present) {
        rc = fail(err, "", "p2p", "missing for a run of strategy p2p");
        goto out;
    }
    char refit[16];
    get_text(L, t, "refit", refit, sizeof(refit));
    fw->first_refit = strcmp(refit, "first") == 0;
    if (fw->colocated_run && !fw->colocated) {
        rc = fail(err, "", "colocated", "missing for a run whose sides are colocated");
        goto out;
    }
    /* The relations the step model relies on, checked again (framework.lua's finish). */
    uint32_t wants_bc = (1u << RF_STRAT_BROADCAST) | (1u << RF_STRAT_HYBRID);
    uint32_t wants_rs =
        (1u << RF_STRAT_RESHARD) | (1u << RF_STRAT_HIERARCHICAL) | (1u << RF_STRAT_HYBRID);
    if ((fw->strategies & wants_bc) && !fw->broadcast)
        rc = fail(err, "", "broadcast", "missing for strategies broadcast or hybrid");
    else if ((fw->strategies & wants_rs) && !fw->reshard)
        rc = fail(err, "", "reshard", "missing for strategies reshard, hierarchical or hybrid");
    if (rc == 0)
        fw->present = true;
out:
    if (rc < 0)
        rf_framework_release(fw);
    lua_settop(L, top);
    return rc;
}

/* A bucket of either form in bytes on a GPU of hbm_gb: the fraction of its memory, at most
 * max_bytes, when the fraction is > 0; else the fixed size. */
static int64_t bucket_bytes(double fraction, int64_t max_bytes, int64_t bytes, double hbm_gb)
{
    if (fraction > 0) {
        double b = fraction * hbm_gb * 1e9;
        if (max_bytes > 0 && b > (double)max_bytes)
            b = (double)max_bytes;
        return (int64_t)b;
    }
    return bytes;
}

int64_t rf_framework_bucket(const struct rf_framework *fw, double hbm_gb)
{
    return bucket_bytes(fw->bucket_hbm_fraction, fw->bucket_max_bytes, fw->bucket_bytes, hbm_gb);
}

int64_t rf_framework_p2p_bucket(const struct rf_framework *fw, double hbm_gb)
{
    return bucket_bytes(fw->p2p.bucket_hbm_fraction, fw->p2p.bucket_max_bytes, fw->p2p.bucket_bytes,
                        hbm_gb);
}

int64_t rf_framework_colo_bucket(const struct rf_framework *fw, double hbm_gb)
{
    return bucket_bytes(fw->colo_bucket_hbm_fraction, fw->colo_bucket_max_bytes,
                        fw->colo_bucket_bytes, hbm_gb);
}

bool rf_framework_skips_gather(const struct rf_framework *fw)
{
    return fw->present && fw->gather != RF_FW_GATHER_P2P;
}
