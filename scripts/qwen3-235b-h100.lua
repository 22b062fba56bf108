-- Qwen3-235B-A22B refit on DGX H100 with NeMo-RL's H100 layout: Megatron TP2 CP2 EP16 PP8 on
-- 256 GPUs (32 nodes; DP 8, expert DP 2), vLLM TP16 on 256 other GPUs (16 replicas).
-- Source: NVIDIA-NeMo/RL
-- https://github.com/NVIDIA-NeMo/RL/blob/main/examples/configs/recipes/llm/performance/grpo-qwen3-235b-32n8g.yaml
-- and docs/about/performance-summary.md.
return {
    model = "qwen3-235b-a22b",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, first_gpu = 0, tp = 2, cp = 2, pp = 8, ep = 16, etp = 1,
              dtype = "bf16" },
    infer = { gpus = 256, first_gpu = 256, tp = 16, dtype = "bf16" },
    strategy = "reshard",
}
