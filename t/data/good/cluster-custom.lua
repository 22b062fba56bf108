-- A cluster file of one's own: 4 GPUs per node on PCIe pairs bridged by NVLink, two NICs.
return cluster.system{
    name = "pcie-pairs",
    gpus_per_node = 4,
    hbm_gb = 48,
    nvlink = { domain_gpus = 2, gbps = 56 },
    nic = { per_node = 2, gbps = 25 },
    pcie = { gbps = 32 },
    fabric = { nodes_per_leaf = 16, oversubscription = 1.5 },
    calibration = { memcpy_gbps = 300, quant_gbps = 300, net_channels_per_peer = 2 },
}
