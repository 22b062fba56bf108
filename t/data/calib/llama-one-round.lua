-- Calibration data (t/calibrate.sh): tiny Llama from one rank to another in one round
-- (8 MB staging): bandwidth dominates. Every calibration case runs on 2 ranks, as many as
-- the CI machine's cores, so no rank waits for a core (which the model does not describe).
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "localhost" },
    train = { gpus = 1 },
    infer = { gpus = 1, first_gpu = 1 },
    staging_mb = 8,
    strategy = "reshard",
}
