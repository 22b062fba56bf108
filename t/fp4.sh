#!/bin/sh
# End to end: 4-bit engines (infer.dtype "mxfp4" or "nvfp4", sim/model.h). Quantised weights
# travel as packed pairs, half a byte an element, with their block scales as tensors of
# their own (MXFP4: an E8M0 byte per 32 along the last dim; NVFP4: an FP8 byte per 16); the
# senders' conversion is a quantiser that writes a quarter of what it reads; refit-exec
# replays reshard, broadcast (the root converts gathered BF16 pairs) and hierarchical plans
# and checks every packed byte.
. "${SRCDIR:-.}/t/lib.sh"
data=$SRCDIR/t/data/fp4
db=$tmp/fp4.db

"$REFIT" sim "$data/tiny-mxfp4.lua" --db "$db" >/dev/null
ok $? "refit sim: tiny Llama onto MXFP4 engines"
is "$(sql "$db" "SELECT count(*), sum(wire_bytes * 2 = numel) FROM tensor
                 WHERE run_id = 1 AND wire_dtype = 'mxfp4'")" "28|28" \
    "every quantised weight travels in half a byte an element"
is "$(sql "$db" "SELECT s.shape, s.wire_dtype, s.wire_bytes FROM tensor s JOIN tensor w
                 ON w.run_id = s.run_id AND w.id = s.scale_of WHERE s.run_id = 1 AND
                 w.name = 'model.layers.0.mlp.down_proj.weight'")" "[256, 16]|e8m0|4096" \
    "down_proj [256, 512] gains an E8M0 scale per 32 of its last dim"
is "$(sql "$db" "SELECT count(*), sum(t.bytes * 2 = b.len0 * b.len1 * b.len2 * b.len3) FROM
                 transfer t JOIN box b ON b.run_id = t.run_id AND b.id = t.box_id
                 JOIN tensor x ON x.run_id = b.run_id AND x.id = b.tensor_id
                 WHERE t.run_id = 1 AND x.wire_dtype = 'mxfp4'")" "112|112" \
    "every transfer of a 4-bit weight carries half a byte an element"
is "$(sql "$db" "SELECT group_concat(kind, ' ') FROM (SELECT DISTINCT kind FROM link_load
                 WHERE run_id = 1 AND kind LIKE 'quant%')")" "quant4" \
    "the senders' conversion passes the 4-bit quantiser, not the FP8 one"
is "$(sql "$db" "SELECT seconds >= lower_bound_seconds FROM prediction WHERE run_id = 1")" 1 \
    "the prediction stays above the bound"
sed 's/dtype = "mxfp4"/dtype = "fp8"/; s|"../exec/tiny-llama.lua"|"'"$SRCDIR"'/t/data/exec/tiny-llama.lua"|' \
    "$data/tiny-mxfp4.lua" >"$tmp/fp8.lua"
"$REFIT" sim "$tmp/fp8.lua" --db "$db" >/dev/null
ok $? "refit sim: the same onto FP8 engines"
is "$(sql "$db" "SELECT m.weights_bytes < f.weights_bytes, m4.payload_bytes * 10 < f4.payload_bytes * 9
                 FROM memory m, memory f, run m4, run f4 WHERE m.run_id = 1 AND f.run_id = 2
                 AND m.side = 'infer' AND f.side = 'infer' AND m4.id = 1 AND f4.id = 2")" "1|1" \
    "MXFP4 engines hold and receive less than FP8 ones"

"$REFIT" sim "$data/tiny-nvfp4.lua" --db "$db" >/dev/null
ok $? "refit sim: tiny Llama onto NVFP4 engines"
is "$(sql "$db" "SELECT s.shape, s.wire_dtype FROM tensor s JOIN tensor w ON w.run_id = s.run_id
                 AND w.id = s.scale_of WHERE s.run_id = 3 AND
                 w.name = 'model.layers.0.mlp.down_proj.weight'")" "[256, 32]|fp8" \
    "NVFP4: an FP8 scale per 16 of the last dim"

# The replays: every packed byte checked.
"$REFIT" plan "$data/tiny-mxfp4.lua" --db "$tmp/r.db" >/dev/null
replay_checked "$tmp/r.db" 1 6 "MXFP4 reshard"
sed 's/strategy = "reshard"/strategy = "broadcast"/;
     s|"../exec/tiny-llama.lua"|"'"$SRCDIR"'/t/data/exec/tiny-llama.lua"|' \
    "$data/tiny-mxfp4.lua" >"$tmp/bcast.lua"
"$REFIT" plan "$tmp/bcast.lua" --db "$tmp/r.db" >/dev/null
is "$(sql "$tmp/r.db" "SELECT count(*) > 0 FROM transfer WHERE run_id = 2 AND phase = 'gather'")" 1 \
    "the broadcast gathers BF16 to its root, which converts"
replay_checked "$tmp/r.db" 2 6 "MXFP4 broadcast"
sed 's/strategy = "reshard"/strategy = "hierarchical"/;
     s|"../exec/tiny-llama.lua"|"'"$SRCDIR"'/t/data/exec/tiny-llama.lua"|' \
    "$data/tiny-nvfp4.lua" >"$tmp/hier.lua"
"$REFIT" plan "$tmp/hier.lua" --db "$tmp/r.db" >/dev/null
replay_checked "$tmp/r.db" 3 6 "NVFP4 hierarchical"

# Faults, at the scenario's line and field (t/lua/errors.lua): nothing stored.
for f in fp4-delta fp4-profile; do
    "$REFIT" plan "$SRCDIR/t/data/bad/$f.lua" --db "$tmp/bad.db" >/dev/null 2>&1
    is "$? $(test -e "$tmp/bad.db"; echo $?)" "1 1" "$f.lua is refused, nothing stored"
done
done_testing
