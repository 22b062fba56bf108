-- A hybrid policy whose gsub backtracks without end, once per tensor: stopped at line 9.
return {
    model = "qwen3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    train = { gpus = 8, tp = 4, pp = 2 },
    infer = { gpus = 8, first_gpu = 8, tp = 2 },
    strategy = "hybrid",
    policy = function(tensor)
        local name = (tensor.name .. string.rep("x", 20000)):gsub(string.rep("x-", 25) .. "y", "")
        return name and "reshard"
    end,
}
