-- Qwen3-235B-A22B refit on GB200 NVL72 with NeMo-RL's GB200 layout: Megatron TP2 CP2 EP16 PP4
-- on 128 GPUs, vLLM TP8 on 128 GPUs (16 replicas, several per NVLink domain, where hierarchical
-- delivery pays off).
-- Source: NVIDIA-NeMo/RL
-- https://github.com/NVIDIA-NeMo/RL/blob/main/examples/configs/recipes/llm/performance/grpo-qwen3-235b-16n4g.yaml
-- and docs/about/performance-summary.md.
return {
    model = "qwen3-235b-a22b",
    cluster = { system = "gb200-nvl72", nodes = 72 },
    train = { gpus = 128, first_gpu = 0, tp = 2, cp = 2, pp = 4, ep = 16, etp = 1,
              dtype = "bf16" },
    infer = { gpus = 128, first_gpu = 144, tp = 8, dtype = "bf16" },
    strategy = "reshard",
}
