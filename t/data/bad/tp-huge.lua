-- tp*cp*pp would wrap: the size is refused before any product.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 1 << 62 },
    infer = { gpus = 8, first_gpu = 8 },
}
