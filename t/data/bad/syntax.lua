-- A missing comma.
return transformer.dense{
    name = "bad" family = "llama",
}
