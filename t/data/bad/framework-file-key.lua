-- A profile with a misspelt key inside its broadcast section.
return framework.profile{
    name = "typo",
    strategies = { "broadcast" },
    broadcast = { communicator = "receivers", root = "first", gather = "p2p",
                  bucket = { mib = 64 }, buffers = 1, quantize = "sender",
                  export_calls = 0, load_calls = 1, pack_cpy = true },
    sources = {
        { field = "broadcast", repo = "example/rl", commit = "0000000", file = "a.py",
          func = "f", says = "broadcast" },
    },
}
