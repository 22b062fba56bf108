-- first_gpu + gpus wraps past 2^63: a range check that wrapped once let the planner store
-- dst_gpu = -1 and crash (t/sizes.sh).
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8 },
    infer = { gpus = 8, first_gpu = 9223372036854775804 },
}
