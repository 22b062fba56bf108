-- A citation naming a field the profile does not have.
return framework.profile{
    name = "misfield",
    strategies = { "broadcast" },
    broadcast = { communicator = "receivers", root = "first", gather = "p2p",
                  bucket = { mib = 64 }, buffers = 1, quantize = "sender",
                  export_calls = 0, load_calls = 1 },
    sources = {
        { field = "strategies", repo = "example/rl", commit = "0000000", file = "a.py",
          func = "f", says = "broadcast only" },
        { field = "broadcast.bufers", repo = "example/rl", commit = "0000000", file = "a.py",
          func = "f", says = "one buffer" },
    },
}
