-- search.lua: the inference layouts `refit search` considers for a scenario (sim/search.c
-- ranks them): every TP x DP x PP x EP split of the requested GPU counts that vLLM accepts.

-- The rules are layout.infer's own (each candidate is normalised by it, so no rule is
-- written twice), plus three of the search's: experts split whole over EP (every EP rank
-- holds as many), attention data parallelism only with expert parallelism (without it a DP
-- rank holds what a replica holds: the same layout as more replicas), and engines aligned to
-- the NVLink domains. Memory fit is C's (sim/memory.c): it needs the layout algebra.

local schema = require("schema")
local layout = require("layout")
local cluster = require("cluster")
local policy = require("policy")

local search = {}

search.DTYPES = { "bf16", "fp8" }

-- What refit.search (a study) accepts; the command checks its flags to the same ranges.
search.OPTIONS = { type = "record", fields = {
    gpus = { type = "list", min_items = 1, max_items = 64,
             items = { type = "integer", min = 1, max = schema.MAX_GPUS } },
    dtypes = { type = "list", min_items = 1, max_items = 2,
               items = { type = "string", values = search.DTYPES } },
    -- Pipeline sizes to consider (default: every one that divides the GPU count).
    pp = { type = "list", min_items = 1, max_items = 64,
           items = { type = "integer", min = 1, max = schema.MAX_GPUS } },
    top = { type = "integer", min = 0, max = schema.MAX_GPUS, default = 5 },
    label = { type = "string" },
    strategy = { type = "string", values = policy.strategies },
    -- Also packed engines that cross NVLink domains, marked as such, where domain placement
    -- cannot place them (infer.placement: the first GPU off a domain boundary, or engines
    -- that do not fill whole domains).
    spanning = { type = "boolean", default = false },
} }

-- How `replicas` engines of `size` GPUs from `first` sit in NVLink domains of `domain` GPUs.
-- infer.placement = "domain" (the default, models/lib/layout.lua engine_place) keeps every
-- engine inside one domain, the GPUs left over idle: "aligned", no field to set, and the
-- span the engines cover. Where it cannot (the first GPU off a domain boundary, or not a
-- whole number of domains' worth of engines) only packed engines remain, which cross
-- domains: "spans", placement = "packed", offered with `spanning` only.
local function alignment(size, replicas, first, domain)
    local place = layout.engine_place(size, replicas, first, domain)
    if place then
        return "aligned", {}, place.span
    end
    return "spans", { placement = "packed" }, size * replicas
end

-- The divisors of n in increasing order (pairs up to its square root: n may be 2^20).
local function divisors(n)
    local low, high = {}, {}
    local d = 1
    while d * d <= n do
        if n % d == 0 then
            low[#low + 1] = d
            if d * d ~= n then
                table.insert(high, 1, n // d)
            end
        end
        d = d + 1
    end
    return table.move(high, 1, #high, #low + 1, low)
end

local function copy(t)
    local c = {}
    for k, v in pairs(t) do
        c[k] = v
    end
    return c
end

-- The cluster field of a raw scenario with at least `nodes` nodes: a search over more GPUs
-- than the scenario's cluster holds grows it (idle nodes carry nothing, so the figures of
-- the smaller counts do not change).
-- A mixed cluster grows its infer part (cluster.load_mixed), which sizes itself to the side
-- unless it gives its nodes; `first` is its first node.
local function with_nodes(spec, nodes, first)
    local c = type(spec) == "string" and { system = spec } or copy(spec)
    if cluster.is_mixed(c) then
        if type(c.infer) == "table" and c.infer.nodes ~= nil then
            c.infer = copy(c.infer)
            c.infer.nodes = nodes - first
        end
        return c
    end
    c.nodes = nodes
    return c
end

-- Candidate layouts of scenario `raw` (as written; `base` is it normalised) for `request`
-- ({ gpus = {...}, dtypes = {...}, pp = {...}, spanning = bool }, validated; absent gpus and
-- dtypes mean the scenario's, absent pp every size). Each is { table = raw with infer (and
-- cluster.nodes) replaced, gpus, tp, dp, pp, ep, dtype, replicas, nodes, spans }, in order
-- of GPU count, dtype, pp, tp, dp.
function search.layouts(raw, base, request)
    local model, c, infer = base.model, base.cluster, base.infer
    local gpus = request.gpus or { infer.gpus }
    local dtypes = request.dtypes or { infer.dtype }
    local domain, first = c.nvlink.domain_gpus, infer.first_gpu
    local site = { file = base.source, line = 0, scan = false }
    local pps
    if request.pp then
        pps = {}
        for _, p in ipairs(request.pp) do
            pps[p] = true
        end
    end
    local out = {}
    for _, n in ipairs(gpus) do
        for _, dtype in ipairs(dtypes) do
            for _, pp in ipairs(divisors(n)) do
                for _, tp in ipairs(pps and not pps[pp] and {} or divisors(n // pp)) do
                    for _, dp in ipairs(divisors(n // (pp * tp))) do
                        -- EP off (dp 1 only: see the header) and on (over tp x dp).
                        local eps = {}
                        if dp == 1 then
                            eps[#eps + 1] = 1
                        end
                        if model.experts > 0 and tp * dp > 1 and model.experts % (tp * dp) == 0 then
                            eps[#eps + 1] = tp * dp
                        end
                        for _, ep in ipairs(eps) do
                            local t = { gpus = n, first_gpu = first, tp = tp, pp = pp, dp = dp,
                                        ep = ep, dtype = dtype,
                                        gpu_memory_utilization = infer.gpu_memory_utilization }
                            local valid = pcall(layout.infer, t, model, site, "infer")
                            local fit, fields, span = alignment(tp * dp * pp,
                                n // (tp * dp * pp), first, domain)
                            -- Domain placement may leave GPUs idle: the cluster grows to
                            -- the span the engines cover.
                            local nodes = math.max(c.nodes,
                                (first + span + c.gpus_per_node - 1) // c.gpus_per_node)
                            if valid and (fit == "aligned" or request.spanning) then
                                local i = copy(raw.infer)
                                i.gpus, i.tp, i.pp, i.dp, i.ep, i.dtype = n, tp, pp, dp, ep, dtype
                                i.replicas = nil
                                for k, v in pairs(fields) do
                                    i[k] = v
                                end
                                -- The model normalised once: each candidate's load checks
                                -- it instead of running its file again (half the load time
                                -- of Kimi K3, 14 ms a candidate).
                                local r = copy(raw)
                                r.model = model
                                r.infer = i
                                if nodes > c.nodes then
                                    r.cluster = with_nodes(raw.cluster, nodes,
                                        c.upper and c.upper.first_node)
                                end
                                out[#out + 1] = { table = r, gpus = n, tp = tp, dp = dp, pp = pp,
                                                  ep = ep, dtype = dtype,
                                                  replicas = n // (tp * dp * pp), nodes = nodes,
                                                  spans = fit == "spans" }
                            end
                        end
                    end
                end
            end
        end
    end
    return out
end

return search
