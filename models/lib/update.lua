-- update.lua: what a refit moves, a scenario's `update` field. `full` (the default) moves the
-- model's weights; `lora` moves only the LoRA adapters of the target linear layers, which
-- the planner, the simulator, the store and refit-exec then treat as the model's tensors
-- (each adapter a tensor of its own, sharded as the inference engine shards it).
--
--   update = { kind = "lora", rank = 64, targets = { "q_proj", "v_proj" }, merge = true }
--
-- Adapters of a weight W [out, in] (PEFT's LoRA, huggingface/peft src/peft/tuners/lora/
-- layer.py, Linear.update_layer: lora_A is nn.Linear(in, r), lora_B nn.Linear(r, out), so
-- their weights are A [r, in] and B [out, r]; delta W = B A). vLLM shards them by the base
-- layer (vllm-project/vllm vllm/lora/layers/):
-- - a column-parallel W (TP splits out): B is split as W is, A is whole on every rank
--   (column_parallel_linear.py @ 4f54575c, ColumnParallelLinearWithLoRA.slice_lora_a returns
--   lora_a unsliced, slice_lora_b takes the rank's rows);
-- - a row-parallel W (TP splits in): A is split as W is, B is whole (row_parallel_linear.py
--   @ 7626577c, RowParallelLinearWithLoRA.slice_lora_a takes the rank's input columns).
-- The training side is taken to hold them sharded the same way (refit has no LoRA layout of
-- Megatron's to read); adapters travel in the weight's dtype, never quantised (vLLM keeps
-- LoRA weights in lora_dtype, the model's dtype by default).
--
-- targets: module names (the name's last part before `.weight`: q_proj, o_proj, down_proj,
-- the model's own names) or "all-linear" (PEFT's and verl's default target_modules: every
-- linear layer but the output layer; here every 2-D column- or row-parallel weight of the
-- attention, dense MLP and shared experts, and the routed experts' stacked weights). vLLM
-- runs LoRA on fused MoE layers without expert parallelism only (FusedMoEWithLoRA asserts
-- `not base_layer.use_ep`), so adapters of the routed experts onto engines with ep > 1 are
-- refused (models/lib/scenario.lua).
-- `merge`: the engine folds W + B A into its weights after each refit, each GPU its own
-- shard of W (a column W's rows need B's rows and all of A, a row W's columns A's columns
-- and all of B: the shards vLLM gives it), a phase after the wire (sim/update_phases.c).
--
--   update = { kind = "delta", density = 0.05, encoding = "auto" }
--   update = { kind = "delta", density = { expert = 0.01, default = 0.05 } }
--
-- A delta moves only the elements that changed since the last refit, with their positions
-- (sim/delta.h has the encodings' exact sizes): `density` is the changed share of each box,
-- one number or one per role (the model's roles: embedding, attention, dense_ffn, expert,
-- shared_expert, router, norm, lm_head) with `default` for the rest, in steps of one part
-- per million (RL changes few elements per step: arXiv 2505.11711 finds most BF16 weights
-- unchanged after an update). `encoding` is "bitmap" (a bit per element and the changed
-- values), "coo" (a 4-byte index and a value per changed element) or "auto" (the smaller
-- of the two for each box, the default). `values` is the changed values' dtype, which is the
-- wire's (infer.dtype for quantised weights, else the weight's); it is checked, not chosen,
-- since a narrower value than the engine holds is a lossy residual, which refit does not
-- model. FP8 block scales travel whole: every 128 x 128 block changes at these densities.

local schema = require("schema")

local update = {}

update.SPEC = { type = "record", fields = {
    kind = { type = "string", values = { "full", "lora", "delta" }, default = "full" },
    rank = { type = "integer", min = 1, max = 65536 },
    targets = { type = "list", min_items = 1, max_items = 256, items = { type = "string" } },
    merge = { type = "boolean" },
    density = { type = { "number", "table" } },
    encoding = { type = "string", values = { "auto", "bitmap", "coo" } },
    values = { type = "string", values = { "bf16", "fp8" } },
} }

-- The fields each kind takes.
local KIND_FIELDS = {
    full = {},
    lora = { rank = true, targets = true, merge = true },
    delta = { density = true, encoding = true, values = true },
}

local ROLES = { "embedding", "attention", "dense_ffn", "expert", "shared_expert", "router",
    "norm", "lm_head" }

-- A density as parts per million: a number in (0, 1], a whole number of millionths.
local function ppm_of(v, site, at)
    local ppm = type(v) == "number" and v == v and v * 1e6 or nil
    local n = ppm and math.tointeger(math.floor(ppm + 0.5))
    if not n or v <= 0 or v > 1 or n < 1 or math.abs(ppm - n) > 1e-6 * math.max(1, ppm) then
        schema.raise(site, at, string.format("expected a number from 0.000001 to 1 in steps of "
            .. "0.000001 (the changed share of each box), got %s", schema.describe(v)))
    end
    return n
end

-- The density of each role in parts per million, from one number or a table of roles.
local function densities(spec, site, field)
    local d = spec.density
    local at = field .. ".density"
    if d == nil then
        schema.raise(site, at, "required for kind 'delta' (the changed share of each box, "
            .. "0.000001 to 1)")
    end
    local out = {}
    if type(d) == "number" then
        local n = ppm_of(d, site, at)
        for _, r in ipairs(ROLES) do
            out[r] = n
        end
        return out
    end
    local known = { default = true }
    for _, r in ipairs(ROLES) do
        known[r] = true
    end
    for k in pairs(d) do
        if type(k) ~= "string" or not known[k] then
            local names = { "default" }
            for _, r in ipairs(ROLES) do
                names[#names + 1] = r
            end
            schema.raise(site, at .. "." .. tostring(k), "not a role; the keys are "
                .. table.concat(names, ", "))
        end
    end
    for _, r in ipairs(ROLES) do
        local v = d[r] ~= nil and d[r] or d.default
        if v == nil then
            schema.raise(site, at, string.format("no density for role '%s': give it, or "
                .. "`default`", r))
        end
        out[r] = ppm_of(v, site, at .. "." .. (d[r] ~= nil and r or "default"))
    end
    return out
end

-- The module a weight belongs to: "model.layers.0.self_attn.q_proj.weight" -> "q_proj".
local function module_of(name)
    return (name:gsub("%.weight$", "")):match("([^.]+)$")
end

local function linear(t)
    return #t.shape == 2 and (t.class == "column" or t.class == "row")
        and (t.role == "attention" or t.role == "dense_ffn" or t.role == "shared_expert")
end

-- A stacked expert weight [E, out, in] of the routed experts.
local function expert_linear(t)
    return #t.shape == 3 and (t.class == "expert_column" or t.class == "expert_row")
end

-- The adapters of weight t at rank r: A [r, in] and B [out, r], classed as vLLM shards them.
-- A comes first and B right after it (rf_model_check holds the C side to that pairing);
-- `merge` marks both when the engine folds B A into W after the refit. A stacked expert
-- weight [E, out, in] has stacked adapters A [E, r, in] and B [E, out, r], one pair per
-- expert, classed as vLLM's FusedMoEWithLoRA shards them (vllm/lora/layers/fused_moe.py @
-- 0002540c: _slice_w13_a keeps w13's A whole and _slice_w13_b takes the rank's rows of B;
-- _slice_w2_a takes w2's A columns, _slice_w2_b keeps B whole), experts split as W's.
local function adapters(t, r, merge)
    local base = t.name:gsub("%.weight$", "")
    local n = #t.shape
    local out, inn = t.shape[n - 1], t.shape[n]
    local expert = n == 3
    local column = t.class == "column" or t.class == "expert_column"
    local whole = expert and "expert_replicated" or "replicated"
    local function adapter(suffix, shape, class, part)
        if expert then
            table.insert(shape, 1, t.shape[1])
        end
        return { name = base .. suffix, shape = shape, dtype = t.dtype, role = t.role,
                 layer = t.layer, class = class, experts = expert and t.shape[1] or 0,
                 quant = false, lora = part, lora_merge = merge }
    end
    return adapter(".lora_A.weight", { r, inn }, column and whole or t.class, "A"),
        adapter(".lora_B.weight", { out, r }, column and t.class or whole, "B")
end

-- The model a refit of `spec` moves: `model` itself for a full update, else a model of the
-- same architecture whose tensors are the adapters, named "<model>+lora<r>". Faults are
-- raised at `field` of `site`.
function update.apply(model, spec, site, field)
    for _, k in ipairs({ "rank", "targets", "merge", "density", "encoding", "values" }) do
        if spec[k] ~= nil and not KIND_FIELDS[spec.kind][k] then
            local owner = KIND_FIELDS.lora[k] and "lora" or "delta"
            schema.raise(site, field .. "." .. k, string.format("set for kind '%s'; it is a "
                .. "field of kind '%s'", spec.kind, owner))
        end
    end
    if spec.kind == "full" then
        return model
    end
    if spec.kind == "delta" then
        local ppm = densities(spec, site, field)
        local out = {}
        for k, v in pairs(model) do
            out[k] = v
        end
        out.tensors = {}
        for i, t in ipairs(model.tensors) do
            local x = {}
            for k, v in pairs(t) do
                x[k] = v
            end
            x.delta = { encoding = spec.encoding or "auto", ppm = ppm[t.role] }
            out.tensors[i] = x
        end
        return out
    end
    if spec.rank == nil then
        schema.raise(site, field .. ".rank", "required for kind 'lora' (the adapters' rank r)")
    end
    local targets = spec.targets or { "all-linear" }
    local wanted, all = {}, false
    for _, name in ipairs(targets) do
        if name == "all-linear" then
            all = true
        else
            wanted[name] = false
        end
    end
    local tensors, modules = {}, {}
    for _, t in ipairs(model.tensors) do
        local m = module_of(t.name)
        if linear(t) or expert_linear(t) then
            modules[m] = true
            if all or wanted[m] ~= nil then
                wanted[m] = true
                local a, b = adapters(t, spec.rank, spec.merge == true)
                tensors[#tensors + 1] = a
                tensors[#tensors + 1] = b
            end
        end
    end
    for i, name in ipairs(targets) do
        -- The field a fault names: the target as written, or `targets` left to its default.
        local at = spec.targets and string.format("%s.targets.%d", field, i)
            or field .. ".targets"
        if name ~= "all-linear" and not wanted[name] then
            local names = {}
            for m in pairs(modules) do
                names[#names + 1] = m
            end
            table.sort(names)
            schema.raise(site, at, string.format(
                "'%s' names no linear module of %s; its linear modules are %s, or "
                .. "'all-linear'", name, model.name, table.concat(names, ", ")))
        end
    end
    if #tensors == 0 then
        schema.raise(site, field .. ".targets", model.name .. " has no linear module to adapt")
    end
    local out = {}
    for k, v in pairs(model) do
        out[k] = v
    end
    out.name = string.format("%s+lora%d", model.name, spec.rank)
    out.tensors = tensors
    return out
end

-- The update as the run's description records it ("lora rank 64 on q_proj, v_proj, merged"),
-- nil for a full one.
function update.note(spec)
    if spec.kind == "full" then
        return nil
    end
    if spec.kind == "delta" then
        local d = spec.density
        local parts = {}
        if type(d) == "number" then
            parts[1] = string.format("%.6g", d)
        else
            for _, r in ipairs(ROLES) do
                if d[r] ~= nil then
                    parts[#parts + 1] = string.format("%s %.6g", r, d[r])
                end
            end
            if d.default ~= nil then
                parts[#parts + 1] = string.format("default %.6g", d.default)
            end
        end
        return string.format("delta at density %s, %s encoding", table.concat(parts, ", "),
            spec.encoding or "auto")
    end
    return string.format("lora rank %d on %s%s", spec.rank,
        table.concat(spec.targets or { "all-linear" }, ", "), spec.merge and ", merged" or "")
end

return update
