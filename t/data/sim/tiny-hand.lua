-- The run computed by hand (t/sim.sh states the figures; t/report.sh and t/traffic.sh
-- check theirs against it): tiny-llama from GPU 0 to GPU 1 on the localhost preset, its
-- 8655360 bytes of BF16 in one round.
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "localhost" },
    train = { gpus = 1 },
    infer = { gpus = 1, first_gpu = 1 },
    staging_mb = 64,
    strategy = "reshard",
}
