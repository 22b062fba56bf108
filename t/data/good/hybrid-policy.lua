-- The hybrid strategy with a policy of the scenario's own.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 4, pp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    strategy = "hybrid",
    policy = function(tensor)
        if tensor.name:find("mlp", 1, true) then
            return "reshard"
        end
        return "broadcast"
    end,
}
