-- hidden = 2^30, vocab = 2^32: the embedding's 2^62 elements fit, its bytes (and the
-- model's parameter total) do not; this once stored negative totals with exit 0
-- (t/sizes.sh).
return {
    model = transformer.dense{
        name = "huge", family = "llama", hidden = 1073741824, vocab = 4294967296,
        layers = 1,
        intermediate = 128, attention = { kind = "gqa", heads = 4 },
    },
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 2 },
    infer = { gpus = 2 },
}
