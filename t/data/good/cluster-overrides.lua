-- A preset with overrides: a 2:1 oversubscribed fabric, 800 Gb/s NICs, a lower NIC
-- efficiency. Fields not overridden keep the preset's values.
return {
    model = "qwen3-8b",
    cluster = {
        system = "dgx-h100",
        nodes = 4,
        fabric = { oversubscription = 2 },
        nic = { gbps = 100 },
        calibration = { nic_efficiency = 0.9 },
    },
    train = { gpus = 16, tp = 8 },
    infer = { gpus = 16, first_gpu = 16, tp = 4 },
}
