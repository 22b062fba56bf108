-- nvlink.gbps is required.
return cluster.system{
    name = "broken",
    gpus_per_node = 8,
    hbm_gb = 80,
    nvlink = {
        domain_gpus = 8,
    },
    nic = { per_node = 8, gbps = 50 },
    pcie = { gbps = 64 },
    fabric = { nodes_per_leaf = 32 },
    calibration = { memcpy_gbps = 1000, quant_gbps = 1000 },
}
