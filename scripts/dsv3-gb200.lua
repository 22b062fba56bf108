-- DeepSeek-V3 refit on GB200 NVL72 with NeMo-RL's GB200 layout: Megatron TP1 EP16 PP8 on 128
-- GPUs (32 compute trays of 4; stages of 7, 6 x 8 ... 6 layers), vLLM TP32 on 128 other GPUs (4
-- replicas). All 256 GPUs fit in 4 NVL72 racks; each rack is one NVLink domain. TP32 does not
-- divide 72: the engines are placed rack by rack (infer.placement = "domain", the default), two
-- per rack on GPUs 144-207 and 216-279, GPUs 208-215 idle; packed, the third would straddle
-- racks 2 and 3 (1.093 s predicted packed, 1.058 s placed).
-- Source: NVIDIA-NeMo/RL
-- https://github.com/NVIDIA-NeMo/RL/blob/main/examples/configs/recipes/llm/performance/grpo-deepseek-v3-32n4g.yaml
-- and docs/about/performance-summary.md.
return {
    model = "deepseek-v3",
    cluster = { system = "gb200-nvl72", nodes = 72 },
    train = { gpus = 128, first_gpu = 0, tp = 1, pp = 8, ep = 16, etp = 1, dtype = "bf16" },
    infer = { gpus = 128, first_gpu = 144, tp = 32, ep = 1, dtype = "bf16" },
    strategy = "reshard",
}
