-- A profile whose two buffers overlap export, wire and load without citing the code that lets
-- them (framework.lua: overlap only where the code overlaps).
return framework.profile{
    name = "overlap",
    strategies = { "broadcast" },
    broadcast = {
        communicator = "receivers", root = "first", gather = "p2p", bucket = { mib = 64 },
        buffers = 2,
        quantize = "sender", export_calls = 1, load_calls = 1,
    },
    sources = {
        { field = "broadcast", repo = "example/rl", commit = "0000000", file = "a.py",
          func = "f", says = "a broadcast per bucket" },
    },
}
