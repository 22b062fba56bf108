-- Published row 16 (doc/research/refit-costs.md Part 2; frameworks.md §2.5): NeMo RL's
-- nccl_reshard refit (hybrid), DeepSeek-V3 BF16, "PP16xEP16 -> TP32xDP8" on GB200, "Refit
-- time" 1.93 s-2.59 s, 97.6% of the bytes by the bulk path (a range; the midpoint is the figure).
-- Source: NVIDIA-NeMo/RL docs/design-docs/nccl-reshard-refit.md, "Expected Performance". The
-- doc does not say which xferdtensor transport timed it, nor the GB200 system; GB200 NVL72
-- racks (4-GPU trays, 72-GPU NVLink domains) are assumed.
-- GPUs: PP16 x EP16 is 256 training GPUs (TP1, DP16, expert DP1) from GPU 0 (racks 0-3, the
-- last one partly); TP32 x DP8 is 256 generation GPUs, two TP32 engines per 72-GPU rack (TP32
-- does not divide 72; refit's default placement, rack by rack, 8 GPUs idle in each) from the
-- next rack boundary, GPU 288: racks 4-7. 8 racks, 144 trays.
-- published: row=16b strategy=hybrid s=2.260 lo=1.93 hi=2.59 source=NeMo RL reshard design doc
return {
    model = "deepseek-v3",
    cluster = { system = "gb200-nvl72", nodes = 144 },
    train = { gpus = 256, first_gpu = 0, tp = 1, pp = 16, ep = 16, etp = 1, cp = 1,
              dtype = "bf16" },
    infer = { gpus = 256, first_gpu = 288, tp = 32, ep = 1, dtype = "bf16" },
    framework = "nemo-rl",
    strategy = "hybrid",
}
