-- NVIDIA GB300 NVL72: one rack of 18 compute trays x 4 Blackwell Ultra GPUs, one NVLink5 domain
-- of 72 GPUs through 9 NVSwitch trays (130 TB/s), 4 ConnectX-8 800 Gb/s SuperNICs per tray on a
-- rail-optimised compute fabric. A node here is a compute tray.
-- Sources: NVL72 AI factory reference architecture, components
-- (https://docs.nvidia.com/enterprise-reference-architectures/nvl72-ai-factory/latest/components.html);
-- https://glennklockwood.com/garden/processors/B300 (288 GB HBM3e, 8 TB/s, PCIe Gen6, 72
-- ConnectX-8 per GB300 NVL72). Calibration defaults: models/lib/cluster.lua.
return cluster.system{
    name = "gb300-nvl72",
    gpus_per_node = 4,
    hbm_gb = 288,                   -- 288 GB HBM3e per Blackwell Ultra GPU
    nvlink = {
        domain_gpus = 72,           -- 18 trays x 4 GPUs in one NVLink5 domain
        gbps = 900,                 -- NVLink5: 1.8 TB/s bidir per GPU = 900 per direction
    },
    nic = {
        per_node = 4,               -- 4 x ConnectX-8 per tray, one per GPU
        gbps = 100,                 -- 800 Gb/s = 100 GB/s per direction [derived]
    },
    -- [derived] PCIe Gen6 x16, twice Gen5's 64 GB/s: ConnectX-8 is a PCIe Gen6 device
    -- (quantum-computing.news/what-is-nvidia-quantum-x800-how-it-works).
    pcie = { gbps = 128 },
    fabric = {
        -- [derived] a 144-port 800 Gb/s Quantum-X800 Q3400 rail leaf (same page) split
        -- 72 down / 72 up is non-blocking for 72 trays.
        nodes_per_leaf = 72,
    },
    calibration = {
        nvlink_efficiency = 0.80,   -- NCCL's Blackwell NVLink model, 721.8 of 900 (topo.h)
        net_chunk_kib = 256,        -- doubled on ARM Blackwell hosts (src/init.cc)
        -- net_channels_per_peer is NCCL's default: ceil(100 / 14) = 8 channels per 800 Gb/s
        -- NIC, halved in large communicators (models/lib/cluster.lua).
        -- [derived] 8 TB/s HBM3e: copy 0.8 x 8000 / 2 = 3200 GB/s; quantisation
        -- 0.4 x 8000 = 3200 GB/s of BF16 read.
        memcpy_gbps = 3200,
        quant_gbps = 3200,
    },
}
