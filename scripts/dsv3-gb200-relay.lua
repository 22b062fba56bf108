-- Issue 10, scenario A: DeepSeek-V3 on GB200 NVL72, 64 training GPUs (Megatron PP4 EP16) in
-- NVLink domain 0 refit to 18 vLLM TP8 replicas in domains 1 and 2. Its floor is on the
-- source side: 1342 GB must leave the 64 trainers' NICs at least once (0.44 s at the
-- preset's 48 GB/s per NIC); reaching it takes relays spread over every inference NIC,
-- nine replicas per domain sharing what crossed the fabric once.
return {
  model    = "deepseek-v3",
  cluster  = { system = "gb200-nvl72", nodes = 54 },
  train    = { gpus = 64,  first_gpu = 0,  tp = 1, pp = 4, ep = 16, dtype = "bf16" },
  infer    = { gpus = 144, first_gpu = 72, tp = 8, dtype = "bf16" },
  strategy = "auto",
}
