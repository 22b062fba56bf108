-- A normalised-looking model built by hand: checked like any other.
return {
    model = { kind = "model", name = "hand", family = "llama", layers = 1,
              attention = { kind = "gqa", heads = 1, kv_heads = 1 },
              tensors = {
                  { name = "w", shape = { 2^31, 2^31 }, dtype = "bf16", role = "dense_ffn",
                    layer = 0, class = "column" },
              } },
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
