-- An error whose text holds a terminal escape (clear the screen) and a line break: the
-- message refit prints is one line, the control bytes written \xNN.
local model = "qwen3-8b"
error("bad \27[2J" .. model .. "\nsecond line")
