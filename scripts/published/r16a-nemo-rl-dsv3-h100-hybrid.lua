-- Published row 16 (doc/research/refit-costs.md Part 2; frameworks.md §2.5): NeMo RL's
-- nccl_reshard refit (hybrid), DeepSeek-V3 BF16, "PP16xEP16 -> TP32xDP8" on H100, "Refit time"
-- 2.39 s-2.83 s, 97.6% of the bytes by the bulk path (a range; the midpoint is the figure).
-- Source: NVIDIA-NeMo/RL docs/design-docs/nccl-reshard-refit.md, "Expected Performance". The
-- doc does not say which xferdtensor transport (nccl.m2n or the Python fallback) timed it.
-- GPUs: PP16 x EP16 is 256 training GPUs (TP1, DP16, expert DP1) and TP32 x DP8 is 256
-- generation GPUs, 64 DGX H100 nodes: NeMo RL's H100 DeepSeek-V3 layout
-- (grpo-deepseek-v3-32n8g.yaml), as scripts/dsv3-h100.lua. Layers over PP16: 3, 4 x 14, 2.
-- published: row=16a strategy=hybrid s=2.610 lo=2.39 hi=2.83 source=NeMo RL reshard design doc
return {
    model = "deepseek-v3",
    cluster = { system = "dgx-h100", nodes = 64 },
    train = { gpus = 256, first_gpu = 0, tp = 1, pp = 16, ep = 16, etp = 1, cp = 1,
              dtype = "bf16" },
    infer = { gpus = 256, first_gpu = 256, tp = 32, ep = 1, dtype = "bf16" },
    framework = "nemo-rl",
    strategy = "hybrid",
}
