-- 6 heads do not share 4 KV heads evenly.
return transformer.dense{
    name = "bad", family = "llama", hidden = 96, layers = 2, vocab = 100, intermediate = 128,
    attention = { kind = "gqa", heads = 6, kv_heads = 4 },
}
