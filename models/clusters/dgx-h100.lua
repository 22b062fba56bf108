-- NVIDIA DGX H100: 8 H100 SXM 80 GB per node on four NVSwitch chips (NVLink4), one single-port
-- 400 Gb/s ConnectX-7 per GPU on a rail-optimised compute fabric.
-- Sources: DGX BasePOD reference architecture, core components
-- (https://docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/latest/core-components.html),
-- DGX H100 User Guide table 6 (NIC i paired with GPU i). Calibration defaults:
-- models/lib/cluster.lua.
return cluster.system{
    name = "dgx-h100",
    gpus_per_node = 8,
    hbm_gb = 80,                    -- 8 x H100 80 GB = 640 GB per node (DGX BasePOD)
    nvlink = {
        domain_gpus = 8,            -- all 8 GPUs of a node through NVSwitch, none beyond
        gbps = 450,                 -- 18 links x 25 GB/s = 450 GB/s per direction (900 bidir)
    },
    nic = {
        per_node = 8,               -- 8 x ConnectX-7, one per GPU (rail-optimised)
        gbps = 50,                  -- 400 Gb/s = 50 GB/s per direction [derived]
    },
    pcie = { gbps = 64 },           -- PCIe 5.0 x16 (Xeon 8480C host; 64 GB/s, DGX BasePOD)
    fabric = {
        -- [derived] a 64-port 400 Gb/s Quantum-2 QM9700 rail leaf (itctshop.com/infiniband-
        -- switch-guide) split 32 down / 32 up is non-blocking for 32 nodes, the DGX SuperPOD
        -- unit of up to 32 DGX systems (introl.com/ja/blog/gpu-cluster-network-topology-
        -- fat-tree-dragonfly-rail-optimized-2025). Calibrate from the site's cabling.
        nodes_per_leaf = 32,
    },
    calibration = {
        -- [derived] H100 SXM HBM3 3.35 TB/s (pingdo.net/ai-infrastructure/h100-vs-h200-hbm3e):
        -- copy 0.8 x 3350 / 2 = 1340 GB/s; quantisation 0.4 x 3350 = 1340 GB/s of BF16 read.
        memcpy_gbps = 1340,
        quant_gbps = 1340,
    },
}
