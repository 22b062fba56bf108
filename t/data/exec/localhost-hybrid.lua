-- Tiny DeepSeek-V3 on this machine's MPI ranks (the localhost cluster preset: 8 ranks on
-- one node, shared memory for "NVLink"): `refit sim` predicts the host backend's replay,
-- `refit-exec --backend mpi` measures it.
return {
    model = "tiny-dsv3.lua",
    cluster = { system = "localhost" },
    train = { gpus = 4, pp = 2, ep = 2 },
    infer = { gpus = 4, first_gpu = 4, tp = 2, ep = 2 },
    staging_mb = 1,
    strategy = "hybrid",
}
