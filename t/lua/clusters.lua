-- clusters.lua: TAP tests of the cluster presets, the normalised cluster of the Lua -> C
-- contract, scenario overrides and custom cluster files. Errors are in errors.lua.
-- Usage: lua5.4 t/lua/clusters.lua <models-dir>

package.path = (arg[0]:match("^(.*)/[^/]*$") or ".") .. "/?.lua;" .. package.path
local tap = require("tap")
local refit, data = tap.setup()

-- The contract (doc/architecture.md): every field, its Lua type, nothing else.
local CONTRACT = {
    name = "string", source = "string", nodes = "integer", gpus_per_node = "integer",
    hbm_gb = "number",
    nvlink = { domain_gpus = "integer", gbps = "number", latency_us = "number" },
    nic = { per_node = "integer", gbps = "number", latency_us = "number" },
    pcie = { gbps = "number" },
    fabric = { nodes_per_leaf = "integer", oversubscription = "number",
               switch_latency_us = "number", pxn = "boolean" },
    calibration = { nvlink_efficiency = "number", nic_efficiency = "number",
                    message_latency_us = "number", nvl_channels_per_peer = "integer",
                    net_channels_per_peer = "integer", p2p_channels = "integer",
                    channel_gbps = "number",
                    nvl_chunk_kib = "integer", net_chunk_kib = "integer",
                    memcpy_gbps = "number", quant_gbps = "number",
                    tensor_overhead_us = "number", bucket_overhead_us = "number",
                    streams = "integer", kernel_launch_us = "number",
                    nccl_call_us = "number", barrier_us = "number", h2d_gbps = "number",
                    d2h_gbps = "number", reg_region_us = "number", loader_scan_us = "number" },
}

-- Returns nil when `value` has exactly the fields of `shape`, else what is wrong.
local function mismatch(value, shape, prefix)
    for key, want in pairs(shape) do
        local v, field = value[key], prefix .. key
        if type(want) == "table" then
            if type(v) ~= "table" then
                return field .. " is not a table"
            end
            local problem = mismatch(v, want, field .. ".")
            if problem then
                return problem
            end
        elseif want == "integer" and math.type(v) ~= "integer"
            or want ~= "integer" and type(v) ~= want then
            return string.format("%s is %s, want %s", field, tostring(v), want)
        end
    end
    for key in pairs(value) do
        if shape[key] == nil then
            return "unexpected field " .. prefix .. tostring(key)
        end
    end
    return nil
end

local PRESETS = { "dgx-h100", "dgx-h200", "dgx-b200", "gb200-nvl72", "gb300-nvl72", "localhost" }
local presets = {}
for _, name in ipairs(PRESETS) do
    local ok, c = pcall(refit.load_cluster, name)
    if tap.ok(ok, name .. ": loads", c) then
        presets[name] = c
        tap.ok(c.name == name and c.source == refit.models_dir .. "/clusters/" .. name .. ".lua",
            name .. ": name and source")
        tap.ok(mismatch(c, CONTRACT, "") == nil, name .. ": every contract field, nothing else",
            mismatch(c, CONTRACT, ""))
        tap.ok(c.nodes * c.gpus_per_node >= 1 and c.nvlink.gbps > 0 and c.pcie.gbps > 0
            and c.calibration.memcpy_gbps > 0 and c.calibration.quant_gbps > 0,
            name .. ": positive sizes and rates")
    end
end

local h100, h200, b200 = presets["dgx-h100"], presets["dgx-h200"], presets["dgx-b200"]
local gb200, gb300, here = presets["gb200-nvl72"], presets["gb300-nvl72"], presets["localhost"]
tap.ok(h100.nvlink.gbps == 450 and h100.nvlink.domain_gpus == 8 and h100.gpus_per_node == 8,
    "dgx-h100: NVLink4 450 GB/s per direction in a domain of the node's 8 GPUs")
tap.ok(h100.nic.per_node == 8 and h100.nic.gbps == 50, "dgx-h100: 8 NICs of 50 GB/s (rails)")
tap.ok(h100.hbm_gb == 80 and h100.pcie.gbps == 64 and h100.fabric.nodes_per_leaf == 32
    and h100.fabric.oversubscription == 1 and h100.fabric.pxn == true,
    "dgx-h100: 80 GB, PCIe 5.0 x16, 32 nodes per non-blocking rail leaf, PXN")
tap.ok(h100.calibration.nvl_chunk_kib == 512 and h100.calibration.net_chunk_kib == 128
    and h100.calibration.channel_gbps == 14 and h100.calibration.streams == 2,
    "defaults: NCCL chunk sizes 512/128 KiB, 14 GB/s per channel, 2 streams")
tap.ok(h100.calibration.net_channels_per_peer == 0 and h100.calibration.p2p_channels == 32
    and h100.calibration.nvl_channels_per_peer == 32,
    "dgx-h100: network channels per peer are NCCL's default (0: derived per communicator), "
    .. "32 p2p channels, 32 per NVLink peer")
tap.ok(h100.calibration.nvlink_efficiency >= 0.80 and h100.calibration.nvlink_efficiency <= 0.85
    and h100.calibration.nic_efficiency >= 0.90 and h100.calibration.nic_efficiency <= 0.97,
    "dgx-h100: efficiencies in the measured ranges")
tap.ok(h200.hbm_gb == 141 and h200.nvlink.gbps == 450 and h200.nic.gbps == 50
    and h200.calibration.memcpy_gbps > h100.calibration.memcpy_gbps,
    "dgx-h200: 141 GB, H100's links, faster HBM")
tap.ok(b200.nvlink.gbps == 900 and b200.nvlink.domain_gpus == 8 and b200.hbm_gb == 180,
    "dgx-b200: NVLink5 900 GB/s per direction, 8-GPU domain, 180 GB")
tap.ok(gb200.nvlink.domain_gpus == 72 and gb200.gpus_per_node == 4
    and gb200.nic.per_node == 4 and gb200.nvlink.gbps == 900,
    "gb200-nvl72: a node is a 4-GPU tray; one NVLink domain of 72 GPUs (18 trays)")
tap.is(gb200.calibration.net_chunk_kib, 256, "gb200-nvl72: NCCL doubles the NET chunk on GB")
tap.ok(gb300.nic.gbps == 100 and gb300.calibration.net_channels_per_peer == 0
    and gb300.nvlink.domain_gpus == 72 and gb300.hbm_gb == 288,
    "gb300-nvl72: ConnectX-8 100 GB/s, NCCL's default channels, 72-GPU domain, 288 GB")
tap.ok(here.nodes == 1 and here.gpus_per_node == 8 and here.nic.per_node == 0
    and here.nvlink.domain_gpus == 8, "localhost: one node of up to 8 ranks, no NIC")

-- A preset in a scenario, as written in scripts/ and t/data.
local dsv3 = refit.load_scenario(data .. "/../../scripts/dsv3-h100.lua")
tap.ok(dsv3.cluster.name == "dgx-h100" and dsv3.cluster.nodes == 64
    and dsv3.cluster.nvlink.gbps == 450, "a scenario's cluster is the normalised preset")

-- Overrides: nested fields replace the preset's; the rest is kept; derived fields follow.
local over = refit.load_scenario(data .. "/good/cluster-overrides.lua").cluster
tap.ok(over.nodes == 4 and over.fabric.oversubscription == 2
    and over.calibration.nic_efficiency == 0.9 and over.nic.gbps == 100,
    "overrides: nodes, fabric.oversubscription, calibration.nic_efficiency, nic.gbps")
tap.ok(over.fabric.nodes_per_leaf == 32 and over.nic.per_node == 8 and over.fabric.pxn
    and over.calibration.nvlink_efficiency == h100.calibration.nvlink_efficiency,
    "overrides: fields not overridden keep the preset's values")
tap.is(over.calibration.net_channels_per_peer, 0,
    "overrides: network channels stay NCCL's default, derived from the new NIC rate")
tap.ok(mismatch(over, CONTRACT, "") == nil, "overrides: the contract still holds",
    mismatch(over, CONTRACT, ""))
local again = refit.load_cluster("dgx-h100")
tap.ok(again.fabric.oversubscription == 1 and again.nic.gbps == 50 and again.nodes == 1,
    "overrides do not alter the preset")

-- Custom cluster files: by path from a scenario (relative to it) or directly.
local custom = refit.load_cluster(data .. "/good/cluster-custom.lua")
tap.ok(custom.name == "pcie-pairs" and custom.nvlink.domain_gpus == 2
    and custom.calibration.net_channels_per_peer == 2
    and custom.source == data .. "/good/cluster-custom.lua",
    "a cluster file by path; a written net_channels_per_peer is kept")
local path = refit.load_scenario(data .. "/good/cluster-path.lua").cluster
tap.ok(path.name == "pcie-pairs" and path.nodes == 4 and path.calibration.streams == 4
    and path.source == data .. "/good/cluster-custom.lua",
    "a scenario's cluster path is read from the scenario's directory")

local gb = refit.load_scenario(data .. "/good/gb200.lua")
tap.ok(gb.cluster.nodes == 36 and gb.cluster.nodes * gb.cluster.gpus_per_node == 144
    and gb.infer.first_gpu == 72, "gb200-nvl72: two racks of 18 trays hold GPUs 0..143")
local lh = refit.load_scenario(data .. "/good/localhost.lua")
tap.ok(lh.cluster.name == "localhost" and lh.cluster.nodes == 1,
    "localhost: a scenario may leave nodes to the preset")

tap.done()
