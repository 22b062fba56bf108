-- Qwen3-8B's delta, 1% of the attention and MLP weights and 5% of the rest changed, in
-- whichever encoding is smaller per box, TP2 onto TP2 on another node: the sender's diff,
-- the wire and the receiver's scatter.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    strategy = "reshard",
    update = { kind = "delta", density = { attention = 0.01, dense_ffn = 0.01, default = 0.05 } },
}
