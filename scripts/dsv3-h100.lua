-- DeepSeek-V3 refit on DGX H100 with the layout of NeMo-RL's H100 recipes: Megatron TP1 PP16
-- EP16 on 256 GPUs (stages of 3, 4 x 14, 2 layers; MTP off), vLLM TP32 on 256 other GPUs.
-- Source: NVIDIA-NeMo/RL grpo-deepseek-v3-32n8g.yaml and -64n8g-async-1off.yaml in
-- https://github.com/NVIDIA-NeMo/RL/blob/main/examples/configs/recipes/llm/performance/
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, first_gpu = 0, tp = 1, pp = 16, ep = 16, etp = 1, cp = 1,
              dtype = "bf16" },
    infer = { gpus = 256, first_gpu = 256, tp = 32, ep = 1, dtype = "bf16" },
    strategy = "reshard",
}
