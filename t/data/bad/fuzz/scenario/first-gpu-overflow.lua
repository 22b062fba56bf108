-- first_gpu near the integer limit: first_gpu + gpus wraps, cluster.fit accepts it and
-- plan.c:800 overflows (UBSan: 9223372036854775807 + 8).
return {
  model = "qwen3-8b",
  cluster = { system = "dgx-h100", nodes = 2 },
  train = { gpus = 8 },
  infer = { gpus = 8, first_gpu = math.maxinteger },
}
