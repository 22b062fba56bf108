-- NVIDIA DGX B200: 8 B200 180 GB per node on NVLink5 through NVSwitch, 8 single-port 400 Gb/s
-- ConnectX-7 (one per GPU) plus 2 BlueField-3 for storage.
-- Sources: DGX BasePOD reference architecture, core components
-- (https://docs.nvidia.com/dgx-basepod/reference-architecture-infrastructure-foundation-enterprise-ai/latest/core-components.html);
-- MLCommons inference v6.0 system nebius_b200_n1.json (B200-SXM-180GB, 8 x ConnectX-7 NDR 400
-- Gb/s, PCIe Gen5 x16). Calibration defaults: models/lib/cluster.lua.
return cluster.system{
    name = "dgx-b200",
    gpus_per_node = 8,
    hbm_gb = 180,                   -- 1.44 TB / 8 (DGX BasePOD); B200-SXM-180GB (MLCommons)
    nvlink = {
        domain_gpus = 8,
        gbps = 900,                 -- NVLink5: 1.8 TB/s bidir per GPU = 900 per direction
    },
    nic = {
        per_node = 8,               -- 8 x ConnectX-7 400 Gb/s, one per GPU
        gbps = 50,
    },
    pcie = { gbps = 64 },           -- PCIe Gen5 x16 (MLCommons system description)
    fabric = {
        nodes_per_leaf = 32,        -- 400 Gb/s rail leaf as DGX H100 (see dgx-h100.lua)
    },
    calibration = {
        -- NCCL models a Blackwell NVLink as 40.1 GB/s, 18 x 40.1 = 721.8 of 900 GB/s
        -- (https://github.com/NVIDIA/nccl src/graph/topo.h SM100_NVLINK_BW).
        nvlink_efficiency = 0.80,
        -- [derived] B200 HBM3e 8 TB/s (modal.com/gpu-glossary/perf/memory-bandwidth):
        -- copy 0.8 x 8000 / 2 = 3200 GB/s; quantisation 0.4 x 8000 = 3200 GB/s of BF16 read.
        memcpy_gbps = 3200,
        quant_gbps = 3200,
    },
}
