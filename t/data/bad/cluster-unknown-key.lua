-- cluster.fabric.oversubscripton is a typo of oversubscription.
return {
    model = "qwen3-8b",
    cluster = {
        system = "dgx-h100",
        nodes = 2,
        fabric = { oversubscripton = 2 },
    },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 8 },
}
