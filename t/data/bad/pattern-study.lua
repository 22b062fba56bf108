-- A study whose gmatch backtracks without end after its first plan: stopped at line 4.
refit.plan("../sim/qwen3-30b.lua")
local n = 0
for w in string.rep("ab", 15000):gmatch(string.rep("[ab]*", 20) .. "c") do n = n + 1 end
print(n)
