-- A scenario whose cluster file is at fault: the error names the cluster file.
return {
    model = "qwen3-8b",
    cluster = { system = "cluster-file-domain.lua", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
