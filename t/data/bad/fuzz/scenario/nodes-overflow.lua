-- nodes * gpus_per_node wraps: the error counts -9223372036854775808 GPUs.
return {
  model = "qwen3-8b",
  cluster = { system = "dgx-h100", nodes = 1 << 60 },
  train = { gpus = 8 },
  infer = { gpus = 8, first_gpu = 8 },
}
