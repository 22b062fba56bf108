-- A dense model has no experts to spread.
return {
    model = "llama3-8b",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 8, ep = 8 },
    infer = { gpus = 8 },
}
