-- A model of 2^40-wide layers is accepted; its tensors hold 2^80 elements (int64 bytes wrap).
return {
  model = transformer.dense{ name = "t", family = "llama", hidden = 1 << 40, layers = 2,
    vocab = 1 << 40, intermediate = 1 << 40, attention = { kind = "gqa", heads = 1 << 20 } },
  cluster = { system = "dgx-h100", nodes = 2 },
  train = { gpus = 8 },
  infer = { gpus = 8, first_gpu = 8 },
}
