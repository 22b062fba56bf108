-- cluster.lua: cluster descriptions. cluster.system{...} validates a cluster file
-- (models/clusters/<name>.lua); cluster.load turns a scenario's `cluster` table into the
-- normalised cluster of the Lua -> C contract (doc/architecture.md).

-- Units: bandwidths in GB/s per direction (1 GB = 1e9 B), latencies in microseconds, HBM
-- in GB. A scenario names a preset (or a cluster file) and may override any of its fields:
--   cluster = { system = "dgx-h100", nodes = 64, fabric = { oversubscription = 2 } }
-- Overrides are checked with the same schema, with every field optional; problems in them
-- are reported at the scenario's line as `cluster.<field>`.
--
-- Figures and defaults come from the public sources cited beside each: the NCCL sources
-- (https://github.com/NVIDIA/nccl, cited as "NVIDIA/nccl src/..."), published nccl-tests and
-- simulator validation results, and NeMo RL's refit guide and design doc
-- (https://github.com/NVIDIA-NeMo/RL). Where no figure exists the default is an assumption, said
-- so, with the measurement that calibrates it. Each knob is a mechanism the simulator models (a
-- channel count, a chunk size, a per-message cost), not a free fudge factor.

local schema = require("schema")
local sandbox = require("sandbox")
local file = require("file")

local cluster = {}

-- Counts (GPUs, nodes, NICs, channels, streams, chunk KiB) are at most schema.MAX_GPUS
-- (2^20); rates are finite, > 0 and at most schema.MAX_GBPS (1e6 GB/s); latencies and
-- overheads finite, >= 0 and at most schema.MAX_US (1e7 us). NaN is never a number.
local function positive(required, default)
    return { type = "integer", min = 1, max = schema.MAX_GPUS, required = required,
             default = default }
end

local function rate(required, default)
    return { type = "number", above = 0, max = schema.MAX_GBPS, required = required,
             default = default }
end

local function latency(default)
    return { type = "number", min = 0, max = schema.MAX_US, default = default }
end

local function efficiency(default)
    return { type = "number", above = 0, max = 1, default = default }
end

-- Calibration knobs. Defaults are NVIDIA Hopper figures; each preset states its own where
-- its hardware differs. memcpy_gbps and quant_gbps depend on the GPU's memory, so every
-- cluster file gives them.
local CALIBRATION = {
    -- Achieved fraction of NVLink line rate. 0.82: ring all-reduce on HGX H100 peaked at ~370 GB/s
    -- per direction of 450 (ASTRA-sim's HGX H100 validation,
    -- https://astra-sim.github.io/astra-sim-docs/validation/hardware/gpu-validation-hgx-h100.html),
    -- and NCCL models Hopper NVLink as 18 x 20.6 = 370.8 GB/s (NVIDIA/nccl src/graph/topo.h
    -- SM90_NVLINK_BW).
    nvlink_efficiency = efficiency(0.82),
    -- Achieved fraction of NIC line rate. 0.96: inter-node all-reduce busbw of 384-393 GB/s
    -- on 8 x 50 GB/s NICs (https://github.com/coreweave/nccl-tests README.md).
    nic_efficiency = efficiency(0.96),
    -- Fixed cost of one point-to-point message (post, kernel work, completion) on top of link and
    -- switch latencies. 6 us: SimAI's per-send latency AS_SEND_LAT default, a simulator calibrated
    -- against NCCL (https://github.com/aliyun/SimAI); NCCL's own Simple-protocol base latency is
    -- 8.4 us (NVIDIA/nccl src/graph/tuning.cc). Calibrate from the intercept of time vs bytes of
    -- single sends.
    message_latency_us = latency(6),
    -- NCCL's point-to-point channels (CTAs, each with its own buffers and network
    -- connection). NCCL fixes one count per communicator at init (NVIDIA/nccl
    -- src/graph/paths.cc ncclTopoGetNchannels, ncclTopoComputeP2pChannelsPerPeer,
    -- ncclTopoComputeP2pChannels; sim/topology.c rf_topology_p2p applies the same rule):
    -- per peer it asks 2 x (path / link bandwidth) over NVLink (nvl_channels_per_peer) and
    -- net_channels_per_peer over the network, takes the minimum over every peer of the
    -- communicator, rounds it up to a power of two and, across NVLink domains with
    -- net_channels_per_peer unset, halves it while channels x ceil(ranks / 8) exceeds
    -- p2p_channels; each send then uses 1 to that many channels by its size (enqueue.cc
    -- addP2pToPlan). The simulator caps a network send at its channels x channel_gbps, from
    -- the replay's communicator (every GPU of the plan), not from the peers of one round.
    -- NVLink sends are not capped: refit has no measured rate of one NVLink channel.
    --
    -- Over NVLink: 2 x 18 links = 36, capped by the communicator's p2p channels: 32 where
    -- the ring search finds 17-32 channels, as on 8-GPU NVSwitch nodes (an H100 log in
    -- NVIDIA/nccl#1259 shows channels 0-22; 8-link H800 logs 16 per peer in
    -- NVIDIA/nccl#892). It only lowers the count where it is below the network's.
    nvl_channels_per_peer = positive(false, 32),
    -- Over the network: NCCL_NCHANNELS_PER_NET_PEER as the runs set it (then NCCL does not halve
    -- it). Left out, the normalised cluster holds 0, NCCL's default: max(NICs of the GPU, ceil(NIC
    -- GB/s / channel_gbps)) (NVIDIA/nccl src/graph/paths.cc; 4 for a 50 GB/s NIC, 8 for 100 GB/s),
    -- halved with the communicator's size (4 up to 64 ranks, 2 up to 128, then 1, at 32 p2p
    -- channels).
    net_channels_per_peer = positive(false),
    -- The communicator's p2p channels, p2pnChannels = min(ring channels, 64) rounded up to a
    -- power of two (paths.cc ncclTopoComputeP2pChannels): 32 for 17-32 ring channels, as
    -- on 8-GPU NVSwitch nodes (NVIDIA/nccl#1259 above). Calibrate from NCCL_DEBUG=INFO's
    -- "p2p channels" line of the replay.
    p2p_channels = positive(false, 32),
    -- Throughput NCCL assumes for one network channel: NCCL_P2P_PER_CHANNEL_NET_BW, default 14 GB/s
    -- (NVIDIA/nccl src/graph/paths.cc). A network send's rate is at most its channels x
    -- channel_gbps; calibrate with one large send between two nodes in a large communicator.
    channel_gbps = rate(false, 14),
    -- NCCL p2p chunk sizes: NCCL_P2P_NVL_CHUNKSIZE 512 KiB inside a node, and
    -- NCCL_P2P_NET_CHUNKSIZE 128 KiB for every p2p of a communicator that spans nodes, doubled
    -- on ARM Blackwell (GB) systems (NVIDIA/nccl src/init.cc computeBuffSizes).
    nvl_chunk_kib = positive(false, 512),
    net_chunk_kib = positive(false, 128),
    -- Bytes per second a device-to-device copy moves (each byte read and written once), for
    -- pack/unpack of non-contiguous boxes. No measured figure in the references: the presets
    -- take [derived] 80% of HBM bandwidth / 2 (assumption: 80% of peak, as STREAM-like copy
    -- kernels reach); calibrate with cudaMemcpyAsync device-to-device of 1 GiB, or
    -- nvbandwidth's device_local_copy.
    memcpy_gbps = rate(true),
    -- BF16 -> FP8 (e4m3, 128 x 128 block scales) quantisation throughput in GB/s of BF16
    -- read. Assumption: a fused kernel moves 3 bytes per element (2 read, 1 written) at 60% of
    -- HBM peak, 0.6 x 2/3 = 0.4 x HBM bandwidth; calibrate by timing the executor's
    -- quantisation of one large expert tensor.
    quant_gbps = rate(true),
    -- Per-tensor framework cost (metadata walk, views, launch) on each side. Assumption:
    -- 10 us, a few PyTorch op dispatches; calibrate from the slope of refit time against the
    -- number of tensors at a fixed number of bytes.
    tensor_overhead_us = latency(10),
    -- Per-round cost (group start/end, stream synchronisation, buffer swap). Assumption:
    -- 50 us; calibrate from the slope of refit time against the number of buckets.
    bucket_overhead_us = latency(50),
    -- Concurrent streams on the receiving side: NeMo-RL's NRL_REFIT_NUM_STREAMS default 2
    -- (NVIDIA-NeMo/RL docs/design-docs/nccl-reshard-refit.md; its broadcast path also
    -- alternates 2 buffers, https://docs.nvidia.com/nemo/rl/latest/guides/refit.html).
    streams = positive(false, 2),

    -- Per-call costs of the step's mechanisms (sim/step.c, README "The refit step: phases"),
    -- each the published figure below; doc/research/refit-costs.md holds the reading, and
    -- `refit calibrate` fits them to a user's own measurements. sim/topology.h repeats the
    -- defaults (RF_DEFAULT_*) for run descriptions stored before these fields.
    --
    -- One CUDA kernel launch from the host (cuLaunchKernel's host side), what a loop of
    -- per-parameter kernels pays per call when the kernels themselves are short: 3.0 us
    -- (pytorch-labs/tritonbench PR #1017, GB200). No H100 figure was published; launch plus
    -- wait measured 6.5 us on an RTX 5070 Ti (ahrefs/ocannl#488). The GPU check measures it.
    kernel_launch_us = latency(3.0),
    -- One NCCL call's launch beside its device work: a 1 KiB all-reduce inside a node without
    -- CUDA graphs took 3.5 us, a send/recv 3.7 us (NVIDIA/nccl#1984, 4 x H800). The device
    -- work itself is NCCL's tuner model (sim/ring.c); the host launches overlap it.
    nccl_call_us = latency(3.5),
    -- A barrier across a communicator (M2N's start and end barriers of each per-parameter
    -- kernel): the GIN small-message round trip, 16.7 us (arXiv 2511.15076, H100, NCCL 2.28
    -- GDAKI backend, 8-64 GPUs).
    barrier_us = latency(16.7),
    -- Pinned host <-> device copies by the copy engines (tensor.copy_(non_blocking=True),
    -- cudaMemcpyAsync) on H100's PCIe Gen5 x16: H2D 57 GB/s (NVIDIA/nvbandwidth#6, NUMA-local);
    -- D2H 52.8 GB/s, measured with SM copy kernels, the only published H100 D2H figure
    -- (NVIDIA/nvbandwidth#24). GH200's NVLink-C2C reaches 346 GB/s H2D (nvbandwidth#23).
    h2d_gbps = rate(false, 57),
    d2h_gbps = rate(false, 52.8),
    -- Registering one memory region with the NIC (ibv_reg_mr) without a registration cache:
    -- 1,265 tensors (51 GB) took 2.4 s, 1.9 ms a region (ai-dynamo/nixl PR #1498; 17 ms in all
    -- with a range cache). A first refit pays it for every region its transport registers.
    reg_region_us = latency(1897),
    -- One entry of SGLang's linear scan of its expert-parameter mapping, per tensor loaded:
    -- 36.9 us a tensor at 771 entries (3 per expert and projection, 256 routed + 1 shared
    -- expert), 0.0479 us an entry (sgl-project/sglang PR #19299; 0.7 us a tensor with the
    -- dict that PR introduces).
    loader_scan_us = latency(0.0479),
}

-- What cluster.system{...} accepts. nodes defaults to 1: a preset describes one node (a
-- scenario says how many); the localhost preset is one node by construction.
cluster.SYSTEM = { type = "record", fields = {
    name = { type = "string", required = true },
    nodes = positive(false, 1),
    gpus_per_node = positive(true),
    hbm_gb = { type = "number", above = 0, max = schema.MAX_GB, required = true },
    nvlink = { type = "record", required = true, fields = {
        -- GPUs sharing one NVLink/NVSwitch domain: gpus_per_node on DGX, 72 on NVL72, where
        -- a domain spans 18 compute trays (nodes).
        domain_gpus = positive(true),
        gbps = rate(true),
        -- One NVLink hop through NVSwitch. 0.6 us: NCCL's per-step NVLink latency for the LL
        -- protocol, the smallest it models (NVIDIA/nccl src/graph/tuning.cc hwLatencies); the
        -- Simple protocol's 3.4 us adds synchronisation that message_latency_us covers.
        latency_us = latency(0.6),
    } },
    nic = { type = "record", required = true, fields = {
        -- Scale-out NICs per node; NIC i serves GPUs i*g/per_node .. (i+1)*g/per_node - 1
        -- (g = gpus_per_node), one per GPU on rail-optimised systems. 0: no NIC (one node).
        per_node = { type = "integer", min = 0, max = schema.MAX_GPUS, required = true },
        gbps = { type = "number", min = 0, max = schema.MAX_GBPS, required = true },
        -- NIC to NIC, switches excluded. [derived] 2.2 us: NCCL's per-step network latency (NET
        -- Ring LL, 2.7 us, NVIDIA/nccl src/graph/tuning.cc) less one leaf hop of switch_latency_us.
        latency_us = latency(2.2),
    } },
    -- GPU <-> host and GPU <-> NIC when GPUDirect is unavailable; used for
    -- checkpoint-engine's H2D copy of each owner's buckets (sim/step.c).
    pcie = { type = "record", required = true, fields = { gbps = rate(true) } },
    -- Rail-optimised leaf/spine: NIC i of every node in a group of nodes_per_leaf nodes
    -- connects to rail leaf i; cross-rail or cross-group traffic climbs to the spine. Leaf
    -- uplinks carry (downlink bandwidth / oversubscription).
    fabric = { type = "record", required = true, fields = {
        nodes_per_leaf = positive(true),
        -- 1: non-blocking, as NVIDIA's reference architectures build the compute fabric
        -- ("full non-blocking fat tree", docs.nvidia.com enterprise-reference-architectures
        -- hgx-ai-factory-h100-h200-b200, networking physical topologies).
        -- A ratio; 1e6 leaves an uplink of a millionth of the downlinks, past any real fabric.
        oversubscription = { type = "number", min = 1, max = 1e6, default = 1 },
        -- Assumption: 0.5 us per switch traversal. No figure in the references (ASTRA-sim's example
        -- network uses 0.5 us for its middle tier, github.com/astra-sim/astra-network-analytical: a
        -- convention, not a measurement); calibrate with ib_write_lat between two nodes on one rail
        -- leaf and on two leaves.
        switch_latency_us = latency(0.5),
        -- PXN: a GPU reaches another rail's NIC over NVLink through the GPU that owns it, so
        -- cross-rail traffic stays on the destination's rail (NCCL_PXN_DISABLE=0 by default,
        -- src/graph/paths.cc).
        pxn = { type = "boolean", default = true },
    } },
    calibration = { type = "record", required = true, fields = CALIBRATION },
} }

-- The schema of overrides: the same fields, all optional, no defaults.
local function optional(spec)
    local out = {}
    for k, v in pairs(spec) do
        out[k] = v
    end
    out.required, out.default = nil, nil
    if spec.fields then
        out.fields = {}
        for name, sub in pairs(spec.fields) do
            out.fields[name] = optional(sub)
        end
    end
    return out
end

-- A scenario's `cluster` table: `system` (a preset name or a path to a cluster file) plus
-- any field of cluster.SYSTEM as an override.
cluster.SPEC = optional(cluster.SYSTEM)
cluster.SPEC.required = true
cluster.SPEC.fields.system = { type = "string" }
-- A mixed cluster (cluster.load_mixed): each side's nodes from a preset of its own.
cluster.SPEC.fields.train = { type = { "string", "table" } }
cluster.SPEC.fields.infer = { type = { "string", "table" } }

-- Tables built by cluster.system, with where they were written and the validated fields
-- before derivation, so overrides can be applied and the derivation redone.
local built = setmetatable({}, { __mode = "k" })

local function copy(t)
    if type(t) ~= "table" then
        return t
    end
    local out = {}
    for k, v in pairs(t) do
        out[k] = copy(v)
    end
    return out
end

-- Applies the overrides (a validated cluster.SPEC table) onto a copy of `base`.
local function merge(base, overrides)
    local out = copy(base)
    for k, v in pairs(overrides) do
        if k ~= "system" then
            if type(v) == "table" then
                for name, sub in pairs(v) do
                    out[k][name] = sub
                end
            else
                out[k] = v
            end
        end
    end
    return out
end

-- Fills derived fields and checks relations between fields. blame(fields, message) raises
-- the error at the first of `fields` (dotted names) the user should change.
local function finish(c, blame)
    local g, d = c.gpus_per_node, c.nvlink.domain_gpus
    if d % g ~= 0 and g % d ~= 0 then
        blame({ "nvlink.domain_gpus", "gpus_per_node" }, string.format(
            "%d GPUs per NVLink domain neither divide nor are a multiple of the %d GPUs of a "
            .. "node", d, g))
    end
    local nics = c.nic.per_node
    if nics > g or nics > 0 and g % nics ~= 0 then
        blame({ "nic.per_node", "gpus_per_node" }, string.format(
            "%d NICs do not split the %d GPUs of a node evenly", nics, g))
    end
    if nics > 0 and c.nic.gbps == 0 then
        blame({ "nic.gbps", "nic.per_node" }, string.format(
            "0 GB/s for %d NICs per node; expected a number > 0", nics))
    end
    -- Both are at most 2^20, so the product is exact; the cluster is held to 2^20 GPUs too.
    if c.nodes * g > schema.MAX_GPUS then
        blame({ "nodes", "gpus_per_node" }, string.format(
            "%d nodes x %d GPUs = %d GPUs, more than %d", c.nodes, g, c.nodes * g,
            schema.MAX_GPUS))
    end
    if nics == 0 and c.nodes * g > d then
        blame({ "nodes", "nic.per_node" }, string.format(
            "%d nodes x %d GPUs need NICs: nic.per_node is 0 and one NVLink domain holds %d "
            .. "GPUs", c.nodes, g, d))
    end
    local cal = c.calibration
    if cal.net_channels_per_peer == nil then
        -- NCCL's default, which depends on the communicator: the simulator derives it. A
        -- ratio that needs more channels than any count holds is refused here, in floating
        -- point.
        local per_nic = nics > 0 and math.ceil(c.nic.gbps / cal.channel_gbps) or 1
        if per_nic > schema.MAX_GPUS then
            blame({ "calibration.channel_gbps", "nic.gbps" }, string.format(
                "nic.gbps / channel_gbps = %g / %g needs %.4g network channels per peer, more "
                .. "than %d; set calibration.net_channels_per_peer", c.nic.gbps,
                cal.channel_gbps, per_nic, schema.MAX_GPUS))
        end
        cal.net_channels_per_peer = 0
    end
    return c
end

-- cluster.system{...} in a cluster file: validates and returns the normalised cluster.
function cluster.system(spec)
    local site = sandbox.caller()
    if type(spec) ~= "table" then
        schema.raise(site, "cluster.system", "expected a table of fields, got "
            .. schema.describe(spec))
    end
    local base = schema.validate(spec, cluster.SYSTEM, site, "")
    local c = finish(copy(base), function(fields, message)
        schema.raise(site, fields[1], message)
    end)
    c.source = site.file
    built[c] = { site = site, base = base }
    return c
end

-- True when the dotted `field` is written in the overrides.
local function given(overrides, field)
    local t = overrides
    for part in field:gmatch("[^.]+") do
        if type(t) ~= "table" or t[part] == nil then
            return false
        end
        t = t[part]
    end
    return true
end

-- Path of a cluster spec: a bare name is <models>/clusters/<name>.lua (file.spec_path).
local function resolve(system, dirs)
    return file.spec_path(system, "clusters", dirs)
end

-- What cluster files see besides the safe standard library.
local function globals()
    return { cluster = { system = cluster.system } }
end

-- Loads the cluster `spec` (a preset name or path, or a scenario's cluster table with
-- overrides) and returns the normalised cluster. Faults in `spec` are raised at `site` as
-- `field`...; dirs = { models = <models dir>, base = <directory of the naming file> }.
function cluster.load(spec, site, field, dirs)
    dirs = dirs or {}
    local named = type(spec) == "string"
    local s = schema.validate(named and { system = spec } or spec, cluster.SPEC, site, field)
    if s.train ~= nil or s.infer ~= nil then
        schema.raise(site, field .. (s.train ~= nil and ".train" or ".infer"), "a mixed "
            .. "cluster belongs in a scenario (cluster = { train = ..., infer = ... })")
    elseif s.system == nil then
        schema.raise(site, field .. ".system", "missing")
    end
    local path = resolve(s.system, dirs)
    local system_field = named and field or field .. ".system"
    -- A preset name that names no file lists the presets, the nearest first.
    if file.is_preset(s.system) then
        local folder = (dirs.models or "models") .. "/clusters"
        local unknown = file.unknown_preset("cluster", s.system, path, folder, schema.suggest)
        if unknown then
            schema.raise(site, system_field, unknown)
        end
    end
    local preset = sandbox.run(path, globals(), site, system_field)
    local info = type(preset) == "table" and built[preset]
    if not info then
        schema.raise({ file = path }, "return", "expected the file to return a cluster built by "
            .. "cluster.system{...}, got " .. schema.describe(preset))
    end
    local c = finish(merge(info.base, s), function(fields, message)
        for _, f in ipairs(fields) do
            if given(s, f) then
                schema.raise(site, field .. "." .. f, message)
            end
        end
        schema.raise(info.site, fields[1], message)
    end)
    c.source = path
    return c
end

-- A mixed cluster: cluster = { train = <part>, infer = <part> }, each part a preset name or
-- { system = ..., nodes = N, overrides }: the training side's nodes are the train part's,
-- the inference side's the infer part's, numbered after them, on one fabric (an H100
-- trainer refitting H200 engines, the usual upgrade path). What differs per part is what
-- the GPU is: its HBM, NVLink and NIC rates, PCIe, and the calibration constants that
-- depend on its memory (memcpy, quant, h2d, d2h); the rest (the fabric, the NCCL and
-- framework constants) is the train part's, and an infer part that sets it is refused, so
-- no override is silently dropped. Both parts must have one node shape (GPUs and NICs per
-- node, NVLink domain), since the simulator numbers GPUs and NICs uniformly, and the
-- boundary falls on an NVLink domain. A part's nodes default to what its side needs
-- (cluster.close_mixed). The result is the train part's normalised cluster with
-- `upper` = { name, source, first_node, hbm_gb, <rates> } for the infer part's nodes
-- (sim/topology.h struct rf_cluster_part).
local PER_PART = { hbm_gb = true, nvlink = { gbps = true }, nic = { gbps = true },
    pcie = { gbps = true }, nodes = true, system = true,
    calibration = { memcpy_gbps = true, quant_gbps = true, h2d_gbps = true, d2h_gbps = true } }

function cluster.is_mixed(spec)
    return type(spec) == "table" and (spec.train ~= nil or spec.infer ~= nil)
end

-- spec: the scenario's validated cluster table; train: its validated training side
-- ({ gpus, first_gpu }), which sizes the train part when that part gives no nodes.
function cluster.load_mixed(spec, site, field, dirs, train)
    for k in pairs(spec) do
        if k ~= "train" and k ~= "infer" then
            schema.raise(site, field .. "." .. k, string.format("a mixed cluster sets its "
                .. "fields per part: %s.train.%s (the trainer's nodes) or %s.infer.%s",
                field, k, field, k))
        end
    end
    for _, side in ipairs({ "train", "infer" }) do
        if spec[side] == nil then
            schema.raise(site, field .. "." .. side, "missing (a mixed cluster names a preset "
                .. "for each side: { train = 'dgx-h100', infer = 'dgx-h200' })")
        end
    end
    local parts = {}
    for _, side in ipairs({ "train", "infer" }) do
        local p = spec[side]
        p = type(p) == "string" and { system = p } or p
        local s = schema.validate(p, cluster.SPEC, site, field .. "." .. side)
        if s.system == nil then
            schema.raise(site, field .. "." .. side .. ".system", "missing")
        elseif cluster.is_mixed(s) then
            schema.raise(site, field .. "." .. side .. (s.train and ".train" or ".infer"),
                "a part of a mixed cluster is one preset")
        end
        if side == "infer" then
            local function refuse(f)
                schema.raise(site, field .. ".infer." .. f, string.format("one fabric and one "
                    .. "set of NCCL and framework constants serve both parts: set %s.train.%s",
                    field, f))
            end
            for k, v in pairs(s) do
                local per = PER_PART[k]
                if not per then
                    refuse(k)
                elseif type(per) == "table" then
                    for name in pairs(v) do
                        if not per[name] then
                            refuse(k .. "." .. name)
                        end
                    end
                end
            end
        end
        parts[side] = s
    end
    -- A part without nodes is loaded with one to learn its node shape, then again with the
    -- nodes its side needs.
    local function load(side)
        local s = parts[side]
        if s.nodes == nil then
            s = {}
            for k, v in pairs(parts[side]) do
                s[k] = v
            end
            s.nodes = 1
        end
        return cluster.load(s, site, field .. "." .. side, dirs)
    end
    local lower, upper = load("train"), load("infer")
    local g = lower.gpus_per_node
    for _, f in ipairs({ "gpus_per_node", "nic.per_node", "nvlink.domain_gpus" }) do
        local a, b = lower, upper
        for part in f:gmatch("[^.]+") do
            a, b = a[part], b[part]
        end
        if a ~= b then
            schema.raise(site, field .. ".infer.system", string.format("%s has %s = %d, %s "
                .. "%d: a mixed cluster's parts share one node shape (GPUs and NICs per node, "
                .. "NVLink domain)", upper.name, f, b, lower.name, a))
        end
    end
    if parts.train.nodes == nil then
        local need = -((train.first_gpu + train.gpus) // -g)
        -- The boundary falls on an NVLink domain (NVL72: 18 trays of 4).
        local d = lower.nvlink.domain_gpus
        if d > g then
            need = -((need * g) // -d) * d // g
        end
        local t = {}
        for k, v in pairs(parts.train) do
            t[k] = v
        end
        t.nodes = need
        lower = cluster.load(t, site, field .. ".train", dirs)
    end
    if lower.nodes * g % lower.nvlink.domain_gpus ~= 0 then
        schema.raise(site, field .. ".train.nodes", string.format("%d nodes of %d GPUs end "
            .. "inside an NVLink domain of %d GPUs: a mixed cluster's parts are whole domains",
            lower.nodes, g, lower.nvlink.domain_gpus))
    end
    local c, train_name = lower, lower.name
    c.name = train_name .. "+" .. upper.name
    c.upper = { name = upper.name, source = upper.source, first_node = lower.nodes,
        train_name = train_name,
        nodes = parts.infer.nodes, hbm_gb = upper.hbm_gb, nvlink_gbps = upper.nvlink.gbps,
        nic_gbps = upper.nic.gbps, pcie_gbps = upper.pcie.gbps,
        memcpy_gbps = upper.calibration.memcpy_gbps, quant_gbps = upper.calibration.quant_gbps,
        h2d_gbps = upper.calibration.h2d_gbps, d2h_gbps = upper.calibration.d2h_gbps }
    c.nodes = lower.nodes + (parts.infer.nodes or 1)
    return c
end

-- Completes a mixed cluster once the inference side is placed: the infer part's nodes
-- (when it gave none, what the side spans) and each side inside its own part.
function cluster.close_mixed(c, train, infer, site, field)
    local g, first = c.gpus_per_node, c.upper.first_node
    local boundary = first * g
    if train.first_gpu + train.gpus > boundary then
        schema.raise(site, "train.gpus", string.format("GPUs %d..%d reach past the train "
            .. "part's %d GPUs (%s, %d node%s; cluster.train.nodes) of the mixed cluster",
            train.first_gpu, train.first_gpu + train.gpus - 1, boundary, c.upper.train_name,
            first, first == 1 and "" or "s"))
    end
    if infer.first_gpu < boundary then
        schema.raise(site, "infer.first_gpu", string.format("%d is a GPU of the train part "
            .. "(%s, GPUs 0..%d); the inference side starts at or after GPU %d, the infer "
            .. "part's first (%s)", infer.first_gpu, c.upper.train_name, boundary - 1,
            boundary, c.upper.name))
    end
    if c.upper.nodes == nil then
        local span = infer.span or infer.gpus
        c.nodes = -((infer.first_gpu + span) // -g)
        local d = c.nvlink.domain_gpus
        if d > g then
            c.nodes = first + -(((c.nodes - first) * g) // -d) * d // g
        end
        if c.nodes * g > schema.MAX_GPUS then
            schema.raise(site, field .. ".infer.nodes", string.format("%d nodes x %d GPUs "
                .. "are more than %d GPUs", c.nodes, g, schema.MAX_GPUS))
        end
    end
    c.upper.nodes = nil
end

-- Raises at `prefix`.gpus when the GPUs first_gpu .. first_gpu + span - 1 of a normalised
-- side (span: its GPUs with the idle ones between its engines, layout.place; gpus when it
-- has none) do not exist in cluster `c`.
function cluster.fit(c, side, site, prefix)
    local total = c.nodes * c.gpus_per_node
    local span = side.span or side.gpus
    local last = side.first_gpu + span - 1
    if last >= total then
        local idle = span > side.gpus and string.format(" (%d of them idle between engines: "
            .. "placement 'domain' keeps an engine inside one NVLink domain; 'packed' puts them "
            .. "back to back)", span - side.gpus) or ""
        schema.raise(site, prefix .. ".gpus", string.format(
            "GPUs %d..%d%s do not fit in the cluster's %d GPUs (%s: %d node%s x %d GPUs)",
            side.first_gpu, last, idle, total, c.name, c.nodes, c.nodes == 1 and "" or "s",
            c.gpus_per_node))
    end
end

return cluster
