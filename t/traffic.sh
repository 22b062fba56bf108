#!/bin/sh
# gpu_traffic (schema version 11): what each GPU sends and receives per run, written from the
# plan in memory, checked against a hand computation, against transfer_each and collective
# (the rows it summarises), for summary runs, through the migration, and by refit rm.
. "${SRCDIR:-.}/t/lib.sh"

# By hand (t/sim.sh): tiny-llama from GPU 0 to GPU 1 on the localhost preset moves its
# 8655360 bytes once, all of it from GPU 0 to GPU 1.
hand=$SRCDIR/t/data/sim/tiny-hand.lua
"$REFIT" sim "$hand" --db "$tmp/hand.db" >/dev/null
ok $? "refit sim of the hand-computed run"
is "$(sql "$tmp/hand.db" "SELECT group_concat(printf('%d %d %d %d %d', gpu, sent_bytes,
      received_bytes, local_bytes, broadcast_bytes), ', ') FROM gpu_traffic WHERE run_id = 1")" \
    "0 8655360 0 0 0, 1 0 8655360 0 0" "GPU 0 sends the model, GPU 1 receives it"
is "$(sql "$tmp/hand.db" "SELECT sum(transfers_in) = (SELECT transfers FROM run WHERE id = 1)
      AND sum(transfers_out) = sum(transfers_in) FROM gpu_traffic")" 1 \
    "each single transfer is counted out once and in once"

# Every strategy on a MoE model (broadcasts, relay chains, gathers, local copies): each
# GPU's row equals the sums over the single transfers transfer_each lists and over the
# broadcasts' non-root members.
db=$tmp/cmp.db
"$REFIT" sim "$SRCDIR/t/data/sim/qwen3-30b.lua" --db "$db" --compare >/dev/null
ok $? "refit sim --compare stores five runs"
from_rows="
  SELECT run_id, gpu, sum(s) s, sum(r) r, sum(l) l, sum(b) b, sum(o) o, sum(i) i FROM (
    SELECT run_id, src_gpu gpu, iif(src_gpu != dst_gpu, bytes, 0) s, 0 r,
      iif(src_gpu = dst_gpu, bytes, 0) l, 0 b, src_gpu != dst_gpu o, 0 i FROM transfer_each
    UNION ALL SELECT run_id, dst_gpu, 0, bytes, 0, 0, 0, 1 FROM transfer_each
      WHERE src_gpu != dst_gpu
    UNION ALL SELECT c.run_id, c.first_gpu + k.i * c.gpu_stride, 0, 0, 0, c.bytes, 0, 0
      FROM collective c JOIN ordinal k ON k.i < c.gpu_count
      WHERE c.first_gpu + k.i * c.gpu_stride != c.root_gpu)
  GROUP BY run_id, gpu"
stored="SELECT run_id, gpu, sent_bytes, received_bytes, local_bytes, broadcast_bytes,
  transfers_out, transfers_in FROM gpu_traffic"
is "$(sql "$db" "SELECT count(*) FROM ($from_rows EXCEPT $stored)") \
$(sql "$db" "SELECT count(*) FROM ($stored EXCEPT $from_rows)")" "0 0" \
    "every GPU's row equals the sums over transfer_each and collective"
is "$(sql "$db" "SELECT count(DISTINCT run_id) FROM gpu_traffic")" 5 "every run has its rows"
is "$(sql "$db" "SELECT count(DISTINCT run_id) FROM gpu_traffic WHERE broadcast_bytes > 0")" \
    "$(sql "$db" "SELECT count(DISTINCT run_id) FROM collective")" \
    "the runs with broadcasts have broadcast bytes"
is "$(sql "$db" "SELECT count(*) FROM run r WHERE (SELECT sum(received_bytes + broadcast_bytes)
      FROM gpu_traffic g WHERE g.run_id = r.id AND g.gpu >= r.infer_first_gpu
      AND g.gpu < r.infer_first_gpu + r.infer_gpus) < r.payload_bytes")" 0 \
    "the inference GPUs receive at least the run's payload"

# A summary run keeps the rows: the same as the full run of the same scenario.
"$REFIT" sim "$SRCDIR/t/data/sim/qwen3-30b.lua" --db "$db" --strategy hierarchical \
    --store summary >/dev/null
ok $? "a summary run"
s=$(sql "$db" "SELECT max(id) FROM run")
f=$(sql "$db" "SELECT min(id) FROM run WHERE strategy = 'hierarchical'")
is "$(sql "$db" "SELECT count(*) FROM (SELECT gpu, sent_bytes, received_bytes, local_bytes,
      broadcast_bytes FROM gpu_traffic WHERE run_id = $s EXCEPT SELECT gpu, sent_bytes,
      received_bytes, local_bytes, broadcast_bytes FROM gpu_traffic WHERE run_id = $f)")
$(sql "$db" "SELECT count(*) FROM gpu_traffic WHERE run_id = $s") " \
    "0
$(sql "$db" "SELECT count(*) FROM gpu_traffic WHERE run_id = $f") " \
    "has the full run's traffic rows without its transfers"

# The migration from version 10 fills old runs from their stored transfers and collectives
# exactly as the writer does.
cp "$db" "$tmp/old.db"
before=$(sql "$db" "$stored WHERE run_id != $s ORDER BY 1, 2" | md5sum)
# What versions 11, 13, 14, 15 and 16 added goes too (12 only rebuilt a table).
sql "$tmp/old.db" "DROP TABLE gpu_traffic; DROP INDEX tensor_name; DROP VIEW
                   predicted_vs_measured_phase; DROP TABLE measured_phase;
                   ALTER TABLE tensor DROP COLUMN delta_encoding;
                   ALTER TABLE tensor DROP COLUMN delta_ppm; ALTER TABLE tensor DROP COLUMN lora;
                   ALTER TABLE tensor DROP COLUMN lora_merge;
                   ALTER TABLE prediction DROP COLUMN overlap_refit_seconds;
                   ALTER TABLE prediction DROP COLUMN stall_seconds;
                   ALTER TABLE prediction DROP COLUMN staleness_seconds; PRAGMA user_version = 10"
"$REFIT" sim "$hand" --db "$tmp/old.db" >/dev/null
ok $? "a version 10 file takes a new run"
is "$(sql "$tmp/old.db" "PRAGMA user_version")" 16 "and is migrated to the current version (16)"
is "$(sql "$tmp/old.db" "$stored WHERE run_id != $s AND run_id <= $s ORDER BY 1, 2" | md5sum)" \
    "$before" "its full runs have the rows the writer gave them"
is "$(sql "$tmp/old.db" "SELECT count(*) FROM sqlite_master WHERE name = 'tensor_name'")" 1 \
    "it indexes tensors by name"
is "$(sql "$tmp/old.db" "SELECT count(*) FROM sqlite_stat1 WHERE tbl = 'transfer'")" 2 \
    "and the run stored refreshed the planner's statistics (transfer's two indexes)"
is "$(sql "$tmp/old.db" "SELECT count(*) FROM gpu_traffic WHERE run_id = $s")" 0 \
    "a version 10 summary run kept no transfers, so it has none"

# refit rm takes a run's rows with it.
"$REFIT" rm 1 --db "$db" >/dev/null
ok $? "refit rm 1"
is "$(sql "$db" "SELECT count(*) FROM gpu_traffic WHERE run_id = 1")" 0 "run 1 has no rows left"
done_testing
