-- A dense Llama-family model scaled down for the executor's tests. The embedding and the
-- LM head (4096 x 256 BF16, 2 MiB each) are larger than a 1 MB staging budget, so
-- scenarios that set staging_mb = 1 exercise transfers and broadcasts sent in pieces.
return transformer.dense{
    name = "tiny-llama",
    family = "llama",
    hidden = 256,
    layers = 4,
    vocab = 4096,
    intermediate = 512,
    attention = { kind = "gqa", heads = 8, kv_heads = 2 },
}
