-- Calibration data (t/calibrate.sh): tiny Llama from one rank to another on the localhost
-- preset, many small rounds (1 MB staging): fixed costs dominate.
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "localhost" },
    train = { gpus = 1 },
    infer = { gpus = 1, first_gpu = 1 },
    staging_mb = 1,
    strategy = "reshard",
}
