-- The relay benchmark's scenario B (scripts/bench-relay): Kimi K3 on DGX H100, 2048 training GPUs (Megatron TP8 PP16 EP64)
-- refit to 4096 inference GPUs in FP8 as engines of 64 (vLLM TP8 DP8 EP64): 64 replicas fed
-- from the sources directly make the sources' NIC egress the floor, unless replicas relay.
return {
  model    = "kimi-k3",
  cluster  = { system = "dgx-h100", nodes = 768 },
  train    = { gpus = 2048, first_gpu = 0,    tp = 8, pp = 16, ep = 64, etp = 1, dtype = "bf16" },
  infer    = { gpus = 4096, first_gpu = 2048, tp = 8, dp = 8, ep = 64, dtype = "fp8" },
  strategy = "auto",
}
