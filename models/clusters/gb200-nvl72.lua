-- NVIDIA GB200 NVL72: one rack of 18 compute trays x 4 Blackwell GPUs (and 2 Grace CPUs), one
-- NVLink5 domain of 72 GPUs through 9 NVLink switch trays, 4 InfiniBand compute ports per tray
-- (one per GPU). A node here is a compute tray: an NVLink domain spans 18 nodes.
-- Sources: DGX GB200 user guide, networking
-- (https://docs.nvidia.com/dgx/dgxgb200-user-guide/networking.html); MLCommons inference v6.1
-- system Crusoe GB200-NVL72_GB200-186GB_aarch64x16_Dynamo.json (186 GB per GPU, 4 GPUs per
-- node, ConnectX-7). Calibration defaults: models/lib/cluster.lua.
return cluster.system{
    name = "gb200-nvl72",
    gpus_per_node = 4,              -- a compute tray: 2 GB200 superchips of 1 Grace + 2 GPUs
    hbm_gb = 186,                   -- GB200 186 GB HBM3e (MLCommons system description)
    nvlink = {
        domain_gpus = 72,           -- 18 trays x 4 GPUs in one NVLink5 domain
        gbps = 900,                 -- 1.8 TB/s bidir per GPU = 900 per direction
    },
    nic = {
        per_node = 4,               -- 4 OSFP InfiniBand compute ports, one per GPU
        gbps = 50,                  -- ConnectX-7 400 Gb/s (setloop.io/blog/gb200-nvl72-architecture)
    },
    -- The GPUs reach Grace over NVLink-C2C; the NICs hang off PCIe Gen5 x16 (assumption:
    -- ConnectX-7 is a PCIe Gen5 device, 64 GB/s).
    pcie = { gbps = 64 },
    fabric = {
        -- [derived] the same 400 Gb/s rail leaf as DGX H100 (see dgx-h100.lua): 32 trays.
        nodes_per_leaf = 32,
    },
    calibration = {
        nvlink_efficiency = 0.80,   -- NCCL's Blackwell NVLink model, 721.8 of 900 (topo.h)
        -- NCCL doubles NCCL_P2P_NET_CHUNKSIZE on ARM Blackwell (GB) hosts, which have 4 GPUs
        -- per host (https://github.com/NVIDIA/nccl src/init.cc computeBuffSizes).
        net_chunk_kib = 256,
        -- [derived] 8 TB/s HBM3e per GPU (gpu.blog/gpus/nvidia-gb200-nvl72): copy
        -- 0.8 x 8000 / 2 = 3200 GB/s; quantisation 0.4 x 8000 = 3200 GB/s of BF16 read.
        memcpy_gbps = 3200,
        quant_gbps = 3200,
    },
}
