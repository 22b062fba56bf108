-- DeepSeek-V3 from 256 H100 (TP1 PP16 EP16) onto 8 engines of TP32 (256 H100), rolling:
-- one engine at a time leaves generation and is refitted in place while the others serve.
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, tp = 1, pp = 16, ep = 16 },
    infer = { gpus = 256, first_gpu = 256, tp = 32 },
    strategy = "reshard",
    overlap = { engines = "rolling" },
}
