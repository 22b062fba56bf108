-- The relay benchmark's scenario A (scripts/bench-relay): DeepSeek-V3 on GB200 NVL72, 64 training GPUs (Megatron PP4 EP16) in
-- NVLink domain 0 refit to 18 vLLM TP8 replicas in domains 1 and 2. Its floor is on the
-- source side: 1342 GB must leave the 64 trainers' NICs at least once (0.44 s at the
-- preset's 48 GB/s per NIC); reaching it takes relays spread over every inference NIC,
-- nine replicas per domain sharing what crossed the fabric once.
-- A what-if on both sides (refit's memory lines): 64 training GPUs hold DeepSeek-V3's BF16
-- weights but not its Adam state (205 GB per 186 GB GPU with EP16's expert data
-- parallelism of 1), and a BF16 TP8 engine needs 177 GB per GPU against the engine's 167 GB
-- (served in FP8 it would fit). Planned with allow_overcommit; it stays as it was so the
-- benchmark's figures compare across versions.
return {
  allow_overcommit = true,
  model    = "deepseek-v3",
  cluster  = { system = "gb200-nvl72", nodes = 54 },
  train    = { gpus = 64,  first_gpu = 0,  tp = 1, pp = 4, ep = 16, dtype = "bf16" },
  infer    = { gpus = 144, first_gpu = 72, tp = 8, dtype = "bf16" },
  strategy = "auto",
}
