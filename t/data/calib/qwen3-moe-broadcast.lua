-- Calibration data (t/calibrate.sh): tiny Qwen3 MoE broadcast from one rank to another,
-- many small tensors: per-tensor costs weigh.
return {
    model = "../exec/tiny-qwen3-moe.lua",
    cluster = { system = "localhost" },
    train = { gpus = 1 },
    infer = { gpus = 1, first_gpu = 1 },
    staging_mb = 2,
    strategy = "broadcast",
}
