-- This machine, for the executor's MPI host backend: one node whose "GPUs" are up to 8 MPI
-- ranks (processes) on a 2-core AMD EPYC VM with 23 GB of memory; "NVLink" is MPI's
-- shared-memory transport between processes, and there is no NIC and no fabric.
-- Figures are rough measurements taken once on this VM (Open MPI 4.1.4, gcc -O2): a
-- starting point that `refit calibrate` will fit from the executor's own runs. They vary
-- by 2x between runs on this VM.
return cluster.system{
    name = "localhost",
    nodes = 1,
    gpus_per_node = 8,              -- up to 8 ranks (mpirun --oversubscribe on 2 cores)
    -- Assumption: 23 GB of RAM over 8 ranks, ~30% kept for the OS and MPI buffers.
    hbm_gb = 2,
    nvlink = {
        domain_gpus = 8,            -- every rank reaches every other through shared memory
        -- Measured: MPI_Send/MPI_Recv ping-pong of 64 MiB between 2 ranks, 1.6-3.8 GB/s one
        -- way over 10 runs (default transport; ob1/vader with and without CMA single copy).
        gbps = 2.5,
        latency_us = 0,             -- no wire; the per-message cost is message_latency_us
    },
    nic = { per_node = 0, gbps = 0, latency_us = 0 },   -- no NIC: one node
    pcie = { gbps = 8.5 },          -- no PCIe: "host" copies run at memcpy speed (below)
    fabric = { nodes_per_leaf = 1, switch_latency_us = 0, pxn = false },   -- no fabric
    calibration = {
        nvlink_efficiency = 1.0,    -- nvlink.gbps above is already an achieved rate
        -- Measured: one-way latency of 8-byte MPI messages, 0.23-1.6 us (same runs).
        message_latency_us = 1,
        nvl_channels_per_peer = 1,  -- MPI moves a message as one stream, not NCCL channels
        memcpy_gbps = 8.5,          -- measured: memcpy of 256 MiB in one process, 8.4-8.6 GB/s
        -- Measured: scalar C BF16 -> FP8 e4m3 with 128-element block scales on one core,
        -- 0.22-0.24 GB/s of BF16 read.
        quant_gbps = 0.2,
        streams = 1,                -- one thread per rank
    },
}
