-- The sides read from a framework's config and written by hand as well.
return {
    model = "llama3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    sides = { verl = "../yaml/verl-qwen3-30b.yaml" },
    infer = { gpus = 8 },
}
