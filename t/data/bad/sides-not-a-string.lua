-- A sides field whose file is not a string.
return {
    model = "llama3-8b",
    cluster = { system = "dgx-h100", nodes = 2 },
    sides = { nemo_rl = 3 },
}
