-- The same trainer refitting DGX B200 engines: NVLink5 (900 GB/s) on the infer part's GPUs,
-- NVLink4 (450 GB/s) on the trainer's; one fabric of 400 Gb/s rails between them.
-- Hierarchical: a leader a node receives over its NIC and forwards over NVLink, so both
-- parts' NVLink carries bytes.
return {
    model = "../exec/tiny-llama.lua",
    cluster = { train = { system = "dgx-h100", nodes = 1 }, infer = { system = "dgx-b200", nodes = 2 } },
    train = { gpus = 8, tp = 2, pp = 2 },
    infer = { gpus = 8, tp = 4 },
    strategy = "hierarchical",
}
