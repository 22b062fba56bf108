-- memcpy_gbps and quant_gbps depend on the GPU: every cluster file gives them.
return cluster.system{
    name = "broken",
    gpus_per_node = 8,
    hbm_gb = 80,
    nvlink = { domain_gpus = 8, gbps = 450 },
    nic = { per_node = 8, gbps = 50 },
    pcie = { gbps = 64 },
    fabric = { nodes_per_leaf = 32 },
}
