-- Qwen3-30B-A3B broadcast the way slime runs it (models/frameworks/slime.lua): SGLang engines,
-- whose loader scans its expert mapping (3 entries an expert, 128 routed + 1) per tensor.
return {
    model = "qwen3-30b-a3b",
    cluster = { system = "dgx-h100", nodes = 4 },
    train = { gpus = 16, tp = 2, pp = 2, ep = 4 },
    infer = { gpus = 16, first_gpu = 16, tp = 4 },
    framework = "slime",
}
