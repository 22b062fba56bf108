-- NVIDIA DGX H200: the DGX H100 system with 8 H200 141 GB (HBM3e): same NVLink4/NVSwitch and
-- the same 8 x 400 Gb/s ConnectX-7 rails.
-- Sources: DGX BasePOD reference architecture, core components
-- (https://docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/latest/core-components.html);
-- calibration defaults: models/lib/cluster.lua.
return cluster.system{
    name = "dgx-h200",
    gpus_per_node = 8,
    hbm_gb = 141,                   -- 8 x 141 GB = 1,128 GB per node (DGX BasePOD)
    nvlink = {
        domain_gpus = 8,
        gbps = 450,                 -- NVLink4 as DGX H100: 450 GB/s per direction
    },
    nic = {
        per_node = 8,               -- 8 x ConnectX-7 400 Gb/s, one per GPU
        gbps = 50,
    },
    pcie = { gbps = 64 },           -- PCIe 5.0 x16
    fabric = {
        nodes_per_leaf = 32,        -- 400 Gb/s rail leaf as DGX H100 (see dgx-h100.lua)
    },
    calibration = {
        -- [derived] H200 HBM3e 4.8 TB/s (pingdo.net/ai-infrastructure/h100-vs-h200-hbm3e):
        -- copy 0.8 x 4800 / 2 = 1920 GB/s; quantisation 0.4 x 4800 = 1920 GB/s of BF16 read.
        memcpy_gbps = 1920,
        quant_gbps = 1920,
    },
}
