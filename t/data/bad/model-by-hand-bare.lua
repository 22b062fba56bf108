-- Only the tag of a model: the C side read it as a model with no fields.
return {
    model = { kind = "model", name = "hand", family = "llama", layers = 2,
              attention = { kind = "gqa", heads = 1, kv_heads = 1 } },
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
