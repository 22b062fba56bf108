-- staging_mb * 1e6 wraps negative; the C contract check answers without file or line:
-- "scenario.staging_bytes: must be positive".
return {
  model = "qwen3-8b",
  cluster = { system = "dgx-h100", nodes = 2 },
  train = { gpus = 8 },
  infer = { gpus = 8, first_gpu = 8 },
  staging_mb = math.maxinteger,
}
