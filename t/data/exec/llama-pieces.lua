-- Tiny Llama: Megatron TP2 with FSDP on GPUs 0-1 to two vLLM TP1 replicas on GPUs 2-3,
-- FP8, with a 1 MB staging budget: the 2 MiB embedding and LM head exceed it, so they
-- travel in pieces (reshard) or are broadcast in pieces after the root's FP8 conversion.
return {
    model = "tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 1 },
    train = { gpus = 2, tp = 2, fsdp = true },
    infer = { gpus = 2, first_gpu = 2, dtype = "fp8" },
    staging_mb = 1,
    strategy = "broadcast",
}
