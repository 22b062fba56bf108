-- An NVLink domain of 3 GPUs in 8-GPU nodes.
return cluster.system{
    name = "broken",
    gpus_per_node = 8,
    hbm_gb = 80,
    nvlink = { gbps = 450,
               domain_gpus = 3 },
    nic = { per_node = 8, gbps = 50 },
    pcie = { gbps = 64 },
    fabric = { nodes_per_leaf = 32 },
    calibration = { memcpy_gbps = 1000, quant_gbps = 1000 },
}
