-- Generation traffic past what an H100's NIC carries (50 GB/s): nothing left for the refit.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    overlap = { generation_gbps = 60 },
}
