-- NeMo RL with one buffer and fixed 256 MiB buckets: the bucket's form is replaced whole,
-- every other field is the preset's.
return {
    model = "../exec/tiny-llama.lua",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 4 },
    strategy = "broadcast",
    framework = {
        profile = "nemo-rl",
        broadcast = { buffers = 1, bucket = { mib = 256 } },
        sources = {
            { field = "broadcast.buffers", repo = "NVIDIA-NeMo/RL", commit = "7ea279ab",
              file = "nemo_rl/utils/packed_tensor.py", func = "packed_broadcast_producer",
              says = "NRL_REFIT_NUM_BUFFERS=1 runs one bucket at a time" },
        },
    },
}
