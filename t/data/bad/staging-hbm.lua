-- Two streams of 50 GB staging do not fit in an 80 GB H100.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    staging_mb = 50000,
}
