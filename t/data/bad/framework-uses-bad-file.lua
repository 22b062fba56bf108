-- Names a profile file with a fault: the error names that file's line.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
    framework = "framework-file-uncited.lua",
}
