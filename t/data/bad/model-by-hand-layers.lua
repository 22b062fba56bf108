-- A hand-built model whose layer count would wrap in C.
return {
    model = { kind = "model", name = "hand", family = "llama",
              layers = 1 << 40,
              attention = { kind = "gqa", heads = 1, kv_heads = 1 },
              tensors = {} },
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
