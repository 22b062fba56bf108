/* The store's schema (sim/store.h): version 1's tables and views and every forward
 * migration since, as SQL text; sim/store.c runs them when it opens an older file. */
#include "store_int.h"

static const char schema_v1[] =
    "CREATE TABLE run (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),\n"
    "  label TEXT,\n"
    "  scenario TEXT,\n"
    "  model TEXT NOT NULL,\n"
    "  strategy TEXT NOT NULL,\n"
    "  cluster_system TEXT,\n"
    "  cluster_nodes INTEGER,\n"
    "  train_gpus INTEGER NOT NULL, train_first_gpu INTEGER NOT NULL,\n"
    "  train_layout TEXT NOT NULL, train_dtype TEXT NOT NULL,\n"
    "  infer_gpus INTEGER NOT NULL, infer_first_gpu INTEGER NOT NULL,\n"
    "  infer_layout TEXT NOT NULL, infer_dtype TEXT NOT NULL,\n"
    "  model_params INTEGER NOT NULL, model_bytes INTEGER NOT NULL,\n"
    "  payload_bytes INTEGER NOT NULL, moved_bytes INTEGER NOT NULL,\n"
    "  logical_bytes INTEGER NOT NULL, local_bytes INTEGER NOT NULL,\n"
    "  transfers INTEGER NOT NULL, collectives INTEGER NOT NULL,\n"
    "  plan_seconds REAL\n"
    ");\n"
    "CREATE TABLE tensor (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  id INTEGER NOT NULL,\n"
    "  name TEXT NOT NULL, role TEXT NOT NULL, layer INTEGER NOT NULL, class TEXT NOT NULL,\n"
    "  shape TEXT NOT NULL, numel INTEGER NOT NULL,\n"
    "  dtype TEXT NOT NULL, wire_dtype TEXT NOT NULL, wire_bytes INTEGER NOT NULL,\n"
    "  strategy TEXT NOT NULL, scale_of INTEGER,\n"
    "  PRIMARY KEY (run_id, id)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE box (\n"
    "  run_id INTEGER NOT NULL, id INTEGER NOT NULL, tensor_id INTEGER NOT NULL,\n"
    "  off0 INTEGER NOT NULL, off1 INTEGER NOT NULL, off2 INTEGER NOT NULL,\n"
    "  off3 INTEGER NOT NULL,\n"
    "  len0 INTEGER NOT NULL, len1 INTEGER NOT NULL, len2 INTEGER NOT NULL,\n"
    "  len3 INTEGER NOT NULL,\n"
    "  numel INTEGER NOT NULL,\n"
    "  PRIMARY KEY (run_id, id),\n"
    "  FOREIGN KEY (run_id, tensor_id) REFERENCES tensor(run_id, id) ON DELETE CASCADE\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE transfer (\n"
    "  run_id INTEGER NOT NULL, id INTEGER NOT NULL, box_id INTEGER NOT NULL,\n"
    "  src_gpu INTEGER NOT NULL, dst_gpu INTEGER NOT NULL,\n"
    "  dst_count INTEGER NOT NULL CHECK (dst_count >= 1), dst_stride INTEGER NOT NULL,\n"
    "  phase TEXT NOT NULL CHECK (phase IN ('gather', 'deliver')),\n"
    "  bytes INTEGER NOT NULL,\n"
    "  PRIMARY KEY (run_id, id),\n"
    "  FOREIGN KEY (run_id, box_id) REFERENCES box(run_id, id) ON DELETE CASCADE\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE collective (\n"
    "  run_id INTEGER NOT NULL, id INTEGER NOT NULL,\n"
    "  kind TEXT NOT NULL CHECK (kind IN ('broadcast')),\n"
    "  tensor_id INTEGER NOT NULL, root_gpu INTEGER NOT NULL,\n"
    "  first_gpu INTEGER NOT NULL, gpu_count INTEGER NOT NULL, gpu_stride INTEGER NOT NULL,\n"
    "  bytes INTEGER NOT NULL,\n"
    "  PRIMARY KEY (run_id, id),\n"
    "  FOREIGN KEY (run_id, tensor_id) REFERENCES tensor(run_id, id) ON DELETE CASCADE\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE role_summary (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  role TEXT NOT NULL, tensors INTEGER NOT NULL, params INTEGER NOT NULL,\n"
    "  payload_bytes INTEGER NOT NULL, moved_bytes INTEGER NOT NULL,\n"
    "  logical_bytes INTEGER NOT NULL, local_bytes INTEGER NOT NULL,\n"
    "  transfers INTEGER NOT NULL, collectives INTEGER NOT NULL,\n"
    "  PRIMARY KEY (run_id, role)\n"
    ") WITHOUT ROWID;\n"
    /* One row per individual transfer: runs expanded, box and tensor joined in. */
    "CREATE VIEW transfer_each AS\n"
    "WITH RECURSIVE k(run_id, transfer_id, i) AS (\n"
    "  SELECT run_id, id, 0 FROM transfer\n"
    "  UNION ALL\n"
    "  SELECT k.run_id, k.transfer_id, k.i + 1 FROM k\n"
    "  JOIN transfer t ON t.run_id = k.run_id AND t.id = k.transfer_id\n"
    "  WHERE k.i + 1 < t.dst_count)\n"
    "SELECT t.run_id, t.id AS transfer_id, tn.id AS tensor_id, tn.name AS tensor, t.phase,\n"
    "  t.src_gpu, t.dst_gpu + k.i * t.dst_stride AS dst_gpu,\n"
    "  b.off0, b.off1, b.off2, b.off3, b.len0, b.len1, b.len2, b.len3, t.bytes\n"
    "FROM k JOIN transfer t ON t.run_id = k.run_id AND t.id = k.transfer_id\n"
    "JOIN box b ON b.run_id = t.run_id AND b.id = t.box_id\n"
    "JOIN tensor tn ON tn.run_id = b.run_id AND tn.id = b.tensor_id;\n";

/* Version 2: the schedule (a round per transfer and collective), the two sides' layouts so
 * the executor can rebuild every shard, and per-round totals. Runs planned before version 2
 * keep NULL rounds. */
static const char migration_v2[] =
    "ALTER TABLE run ADD COLUMN staging_bytes INTEGER;\n"
    "ALTER TABLE run ADD COLUMN rounds INTEGER;\n"
    "ALTER TABLE transfer ADD COLUMN round INTEGER;\n"
    "ALTER TABLE transfer ADD COLUMN after_id INTEGER;\n"
    "ALTER TABLE collective ADD COLUMN round INTEGER;\n"
    "CREATE TABLE side (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  side TEXT NOT NULL CHECK (side IN ('train', 'infer')),\n"
    "  kind TEXT NOT NULL CHECK (kind IN ('megatron', 'vllm')),\n"
    "  gpus INTEGER NOT NULL, first_gpu INTEGER NOT NULL,\n"
    "  tp INTEGER NOT NULL, cp INTEGER NOT NULL, pp INTEGER NOT NULL, dp INTEGER NOT NULL,\n"
    "  ep INTEGER NOT NULL, etp INTEGER NOT NULL, edp INTEGER NOT NULL,\n"
    "  replicas INTEGER NOT NULL, fsdp INTEGER NOT NULL, dtype TEXT NOT NULL,\n"
    "  stage_layers TEXT NOT NULL,\n"
    "  PRIMARY KEY (run_id, side)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE round (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  round INTEGER NOT NULL,\n"
    "  transfer_runs INTEGER NOT NULL, transfers INTEGER NOT NULL,\n"
    "  collectives INTEGER NOT NULL,\n"
    "  bytes INTEGER NOT NULL,\n"
    "  PRIMARY KEY (run_id, round)\n"
    ") WITHOUT ROWID;\n"
    "DROP VIEW transfer_each;\n"
    "CREATE VIEW transfer_each AS\n"
    "WITH RECURSIVE k(run_id, transfer_id, i) AS (\n"
    "  SELECT run_id, id, 0 FROM transfer\n"
    "  UNION ALL\n"
    "  SELECT k.run_id, k.transfer_id, k.i + 1 FROM k\n"
    "  JOIN transfer t ON t.run_id = k.run_id AND t.id = k.transfer_id\n"
    "  WHERE k.i + 1 < t.dst_count)\n"
    "SELECT t.run_id, t.id AS transfer_id, t.round, tn.id AS tensor_id, tn.name AS tensor,\n"
    "  t.phase, t.src_gpu, t.dst_gpu + k.i * t.dst_stride AS dst_gpu,\n"
    "  b.off0, b.off1, b.off2, b.off3, b.len0, b.len1, b.len2, b.len3, t.bytes\n"
    "FROM k JOIN transfer t ON t.run_id = k.run_id AND t.id = k.transfer_id\n"
    "JOIN box b ON b.run_id = t.run_id AND b.id = t.box_id\n"
    "JOIN tensor tn ON tn.run_id = b.run_id AND tn.id = b.tensor_id;\n";

/* Version 3: predictions of the simulator: one per run, with the load of every link of the
 * cluster and the times of rounds and phases. */
static const char migration_v3[] =
    "CREATE TABLE prediction (\n"
    "  run_id INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,\n"
    "  cluster TEXT NOT NULL, cluster_source TEXT NOT NULL,\n"
    "  nodes INTEGER NOT NULL, gpus_per_node INTEGER NOT NULL,\n"
    "  seconds REAL NOT NULL, lower_bound_seconds REAL NOT NULL,\n"
    "  nvlink_bytes INTEGER NOT NULL, fabric_bytes INTEGER NOT NULL,\n"
    "  bottleneck TEXT, bottleneck_link_id INTEGER,\n"
    "  messages INTEGER NOT NULL, flows INTEGER NOT NULL, events INTEGER NOT NULL,\n"
    "  sim_seconds REAL NOT NULL\n"
    ");\n"
    "CREATE TABLE link_load (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  link_id INTEGER NOT NULL,\n"
    "  kind TEXT NOT NULL, name TEXT NOT NULL, endpoint_a INTEGER NOT NULL,\n"
    "  endpoint_b INTEGER NOT NULL,\n"
    "  capacity_gbps REAL NOT NULL, bytes INTEGER NOT NULL, busy_seconds REAL NOT NULL,\n"
    "  utilization REAL NOT NULL,\n"
    "  PRIMARY KEY (run_id, link_id)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE predicted_round (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  round INTEGER NOT NULL, start_seconds REAL NOT NULL, finish_seconds REAL NOT NULL,\n"
    "  PRIMARY KEY (run_id, round)\n"
    ") WITHOUT ROWID;\n"
    "CREATE TABLE predicted_phase (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  phase TEXT NOT NULL, start_seconds REAL NOT NULL, finish_seconds REAL NOT NULL,\n"
    "  bytes INTEGER NOT NULL,\n"
    "  PRIMARY KEY (run_id, phase)\n"
    ") WITHOUT ROWID;\n";

/* Version 4: what refit-exec measured when it replayed a run. A replay writes its
 * measurement row as failed ("did not finish") before it starts and completes it at the
 * end, so a job that dies midway leaves a failed row, never a measurement. */
static const char migration_v4[] =
    "CREATE TABLE measurement (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),\n"
    "  backend TEXT NOT NULL CHECK (backend IN ('nccl', 'mpi')),\n"
    "  world_size INTEGER NOT NULL,\n"
    "  iters INTEGER NOT NULL, warmup INTEGER NOT NULL,\n"
    "  seconds REAL, seconds_min REAL, seconds_max REAL,\n"
    "  bytes_verified INTEGER NOT NULL DEFAULT 0,\n"
    "  errors INTEGER NOT NULL DEFAULT 0,\n"
    "  status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'unverified')),\n"
    "  error_text TEXT,\n"
    "  hosts TEXT, gpu_model TEXT, nccl_version TEXT, mpi_version TEXT\n"
    ");\n"
    "CREATE INDEX measurement_run ON measurement(run_id);\n"
    "CREATE TABLE measured_round (\n"
    "  measurement_id INTEGER NOT NULL REFERENCES measurement(id) ON DELETE CASCADE,\n"
    "  round INTEGER NOT NULL,\n"
    "  seconds REAL NOT NULL,\n"
    "  PRIMARY KEY (measurement_id, round)\n"
    ") WITHOUT ROWID;\n"
    /* A run beside each of its good measurements: what was planned, what was measured. */
    "CREATE VIEW measured_run AS\n"
    "SELECT r.id AS run_id, r.label, r.model, r.strategy, r.train_gpus, r.train_layout,\n"
    "  r.train_dtype, r.infer_gpus, r.infer_layout, r.infer_dtype, r.payload_bytes,\n"
    "  r.moved_bytes, r.rounds, m.id AS measurement_id, m.created_at AS measured_at,\n"
    "  m.backend, m.world_size, m.iters, m.warmup, m.seconds, m.seconds_min, m.seconds_max,\n"
    "  r.payload_bytes / m.seconds / 1e9 AS payload_gb_per_second, m.bytes_verified,\n"
    "  m.hosts, m.gpu_model, m.nccl_version, m.mpi_version\n"
    "FROM measurement m JOIN run r ON r.id = m.run_id WHERE m.status = 'ok';\n"
    /* Prediction beside measurement, per run and per round: the check of the simulator. */
    "CREATE VIEW predicted_vs_measured AS\n"
    "SELECT r.id AS run_id, r.label, r.model, r.strategy, p.cluster,\n"
    "  p.seconds AS predicted_seconds, p.lower_bound_seconds, m.id AS measurement_id,\n"
    "  m.backend, m.world_size, m.seconds AS measured_seconds,\n"
    "  m.seconds / p.seconds AS measured_over_predicted\n"
    "FROM prediction p JOIN run r ON r.id = p.run_id\n"
    "JOIN measurement m ON m.run_id = p.run_id AND m.status = 'ok';\n"
    "CREATE VIEW predicted_vs_measured_round AS\n"
    "SELECT m.run_id, m.id AS measurement_id, pr.round,\n"
    "  pr.finish_seconds - pr.start_seconds AS predicted_seconds,\n"
    "  mr.seconds AS measured_seconds\n"
    "FROM measurement m JOIN measured_round mr ON mr.measurement_id = m.id\n"
    "JOIN predicted_round pr ON pr.run_id = m.run_id AND pr.round = mr.round\n"
    "WHERE m.status = 'ok';\n";

/* Version 5: pipelined relays (sim/schedule.h). A transfer's hop (0, or its dependency's
 * hop + 1 when it forwards within that round), the run's pipeline chunk and hierarchical's
 * relay structure. Runs stored before have NULLs: every relay there sits in a later round
 * than what it forwards (hop 0), and nothing relays within a round. */
static const char migration_v5[] =
    "ALTER TABLE transfer ADD COLUMN hop INTEGER;\n"
    "ALTER TABLE transfer ADD COLUMN chain INTEGER;\n"
    "ALTER TABLE run ADD COLUMN chunk_bytes INTEGER;\n"
    "ALTER TABLE run ADD COLUMN relay_ring INTEGER;\n"
    "ALTER TABLE run ADD COLUMN relay_fanout INTEGER;\n"
    "ALTER TABLE run ADD COLUMN relay_depth INTEGER;\n"
    "ALTER TABLE run ADD COLUMN net_channels_per_peer INTEGER;\n"
    /* A chain run's destination k receives from the member before it (plan.h). */
    "DROP VIEW transfer_each;\n"
    "CREATE VIEW transfer_each AS\n"
    "WITH RECURSIVE k(run_id, transfer_id, i) AS (\n"
    "  SELECT run_id, id, 0 FROM transfer\n"
    "  UNION ALL\n"
    "  SELECT k.run_id, k.transfer_id, k.i + 1 FROM k\n"
    "  JOIN transfer t ON t.run_id = k.run_id AND t.id = k.transfer_id\n"
    "  WHERE k.i + 1 < t.dst_count)\n"
    "SELECT t.run_id, t.id AS transfer_id, t.round, tn.id AS tensor_id, tn.name AS tensor,\n"
    "  t.phase,\n"
    "  CASE WHEN t.chain AND k.i > 0 THEN t.dst_gpu + (k.i - 1) * t.dst_stride\n"
    "       ELSE t.src_gpu END AS src_gpu,\n"
    "  t.dst_gpu + k.i * t.dst_stride AS dst_gpu,\n"
    "  b.off0, b.off1, b.off2, b.off3, b.len0, b.len1, b.len2, b.len3, t.bytes,\n"
    "  coalesce(t.hop, 0) + CASE WHEN t.chain THEN k.i ELSE 0 END AS hop\n"
    "FROM k JOIN transfer t ON t.run_id = k.run_id AND t.id = k.transfer_id\n"
    "JOIN box b ON b.run_id = t.run_id AND b.id = t.box_id\n"
    "JOIN tensor tn ON tn.run_id = b.run_id AND tn.id = b.tensor_id;\n";

/* Version 6: how refit-exec ran a measurement (backend, communicator mode, FP8 conversion,
 * fill: rf_measurement.exec_config), shown beside the times in measured_run. Measurements
 * stored before have NULL: the NCCL backend then ran non-blocking communicators, converted
 * FP8 with a strided copy and filled through host memory. */
static const char migration_v6[] =
    "ALTER TABLE measurement ADD COLUMN exec_config TEXT;\n"
    "DROP VIEW measured_run;\n"
    "CREATE VIEW measured_run AS\n"
    "SELECT r.id AS run_id, r.label, r.model, r.strategy, r.train_gpus, r.train_layout,\n"
    "  r.train_dtype, r.infer_gpus, r.infer_layout, r.infer_dtype, r.payload_bytes,\n"
    "  r.moved_bytes, r.rounds, m.id AS measurement_id, m.created_at AS measured_at,\n"
    "  m.backend, m.world_size, m.iters, m.warmup, m.seconds, m.seconds_min, m.seconds_max,\n"
    "  r.payload_bytes / m.seconds / 1e9 AS payload_gb_per_second, m.bytes_verified,\n"
    "  m.hosts, m.gpu_model, m.nccl_version, m.mpi_version, m.exec_config\n"
    "FROM measurement m JOIN run r ON r.id = m.run_id WHERE m.status = 'ok';\n";

/* Version 7, placement: how the inference side's engines sit on the NVLink
 * domains (rf_engine_place), so refit-exec and calibrate rebuild the same side. `placement`
 * 'domain' or 'packed', `domain_gpus` the domain size placed against (0 packed), `span` the
 * GPUs from first_gpu the side covers, idle ones included (gpus when there are none). Runs
 * stored before have NULLs: packed, as every side was then. A block of its own, so the
 * version's other columns (the stored scenario) join it in one migration. */
#define MIGRATION_V7_PLACEMENT                                                                     \
    "ALTER TABLE side ADD COLUMN placement TEXT;\n"                                                \
    "ALTER TABLE side ADD COLUMN domain_gpus INTEGER;\n"                                           \
    "ALTER TABLE side ADD COLUMN span INTEGER;\n"

/* Version 7: capacity planning and runs that describe themselves. */
static const char migration_v7[] =
    /* ---- describe: the resolved scenario of every run as JSON (sim/describe.h:
     * cluster overrides, calibration, pxn, sources, auto's choices), and each side's memory
     * at refit time (sim/memory.h: its worst GPU by part against its budget). Runs stored
     * before have NULL scenario_json and no memory rows. */
    "ALTER TABLE run ADD COLUMN scenario_json TEXT;\n"
    "CREATE TABLE memory (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  side TEXT NOT NULL CHECK (side IN ('train', 'infer')),\n"
    "  gpu INTEGER NOT NULL, stage INTEGER NOT NULL,\n"
    "  weights_bytes INTEGER NOT NULL, grads_bytes INTEGER NOT NULL,\n"
    "  optimizer_bytes INTEGER NOT NULL, staging_bytes INTEGER NOT NULL,\n"
    "  total_bytes INTEGER NOT NULL, hbm_bytes INTEGER NOT NULL, budget_bytes INTEGER NOT NULL,\n"
    "  headroom_bytes INTEGER NOT NULL, fits INTEGER NOT NULL,\n"
    "  PRIMARY KEY (run_id, side)\n"
    ") WITHOUT ROWID;\n"
    /* A run's memory in one row: what each side's worst GPU needs, the KV cache's room, and
     * whether the run is an overcommitted what-if (allow_overcommit). */
    "CREATE VIEW run_memory AS\n"
    "SELECT r.id AS run_id, r.label, r.model, r.train_layout, r.infer_layout,\n"
    "  t.total_bytes AS train_memory_bytes, t.budget_bytes AS train_budget_bytes,\n"
    "  i.total_bytes AS infer_memory_bytes, i.budget_bytes AS infer_budget_bytes,\n"
    "  i.headroom_bytes AS infer_kv_headroom_bytes,\n"
    "  CASE WHEN t.fits IS NULL THEN NULL ELSE NOT (t.fits AND i.fits) END\n"
    "    AS memory_overcommitted\n"
    "FROM run r LEFT JOIN memory t ON t.run_id = r.id AND t.side = 'train'\n"
    "LEFT JOIN memory i ON i.run_id = r.id AND i.side = 'infer';\n"
    /* ---- end describe */
    MIGRATION_V7_PLACEMENT;

/* A run's phases as a user compares them: the framework from the stored scenario, each phase's
 * share of the step (phases that overlap have shares summing past 1). Version 8 made it;
 * version 12 makes it again over the rebuilt table. */
#define RUN_PHASES_VIEW                                                                            \
    "CREATE VIEW run_phases AS\n"                                                                  \
    "SELECT r.id AS run_id, r.label, r.model, r.strategy,\n"                                       \
    "  CASE WHEN json_valid(r.scenario_json)\n"                                                    \
    "       THEN json_extract(r.scenario_json, '$.framework.name') END AS framework,\n"            \
    "  s.seq, s.part, s.phase, s.seconds, p.step_seconds,\n"                                       \
    "  CASE WHEN p.step_seconds > 0 THEN s.seconds / p.step_seconds END AS share_of_step,\n"       \
    "  s.bytes, s.calls, s.mechanism, p.step_composition\n"                                        \
    "FROM predicted_step_phase s JOIN run r ON r.id = s.run_id\n"                                  \
    "LEFT JOIN prediction p ON p.run_id = s.run_id;\n"

/* Version 8: the whole refit step as phases (sim/step.h) under a framework
 * profile: per phase its part, its time on its own, the bytes and calls of its busiest GPU
 * and its mechanism, in the order the step lists them (seq); the step's time and how the
 * phases compose into it on the prediction row. predicted_phase (version 3) keeps the wire's
 * own phases (gather, deliver, ...): a step's transfer phase is that whole timeline. Runs
 * without a profile, and runs stored before, have no step: NULL step_seconds, no rows. */
static const char migration_v8[] =
    "ALTER TABLE prediction ADD COLUMN step_seconds REAL;\n"
    "ALTER TABLE prediction ADD COLUMN step_composition TEXT;\n"
    "CREATE TABLE predicted_step_phase (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  seq INTEGER NOT NULL,\n"
    "  part TEXT NOT NULL CHECK (part IN ('all', 'bulk', 'misc')),\n"
    "  phase TEXT NOT NULL CHECK (phase IN ('export', 'transfer', 'load', 'finalize')),\n"
    "  seconds REAL NOT NULL CHECK (seconds >= 0),\n"
    "  bytes INTEGER NOT NULL CHECK (bytes >= 0), calls INTEGER NOT NULL CHECK (calls >= 0),\n"
    "  mechanism TEXT NOT NULL,\n"
    "  PRIMARY KEY (run_id, seq),\n"
    "  UNIQUE (run_id, part, phase)\n"
    ") WITHOUT ROWID;\n" RUN_PHASES_VIEW;

/* Version 9: a database that stays fast with many large runs. Every foreign key of a child
 * table leads its primary key (run_id, ...), so deleting a run finds its rows there; the three
 * that reference a tensor or a box by (run_id, tensor_id | box_id) had no index, and a
 * cascading DELETE scanned every box and transfer of the file once per deleted tensor (over
 * ten minutes on a 172 MB file). transfer_each expanded the runs of every transfer of every
 * run before its WHERE run_id = N could apply (a recursive CTE is never filtered from
 * outside): it now joins each transfer to `ordinal`, the integers 0 .. the largest dst_count
 * stored (the writer adds what a new run needs), so a run's rows are found by the primary
 * key and each transfer reads only its own destinations' range. `stored` says whether a run kept
 * its plan ('full') or only its description and prediction ('summary': refit sim --store summary);
 * runs stored before are 'full'. */
static const char migration_v9[] =
    "CREATE INDEX box_tensor ON box(run_id, tensor_id);\n"
    "CREATE INDEX transfer_box ON transfer(run_id, box_id);\n"
    "CREATE INDEX collective_tensor ON collective(run_id, tensor_id);\n"
    "ALTER TABLE run ADD COLUMN stored TEXT NOT NULL DEFAULT 'full'\n"
    "  CHECK (stored IN ('full', 'summary'));\n"
    "CREATE INDEX run_label ON run(label);\n"
    "CREATE TABLE ordinal (i INTEGER PRIMARY KEY);\n"
    "WITH RECURSIVE k(i) AS (\n"
    "  SELECT 0 UNION ALL SELECT i + 1 FROM k\n"
    "  WHERE i + 1 < (SELECT max(dst_count) FROM transfer))\n"
    "INSERT INTO ordinal SELECT i FROM k WHERE EXISTS (SELECT 1 FROM transfer);\n"
    "DROP VIEW transfer_each;\n"
    "CREATE VIEW transfer_each AS\n"
    "SELECT t.run_id, t.id AS transfer_id, t.round, tn.id AS tensor_id, tn.name AS tensor,\n"
    "  t.phase,\n"
    "  CASE WHEN t.chain AND k.i > 0 THEN t.dst_gpu + (k.i - 1) * t.dst_stride\n"
    "       ELSE t.src_gpu END AS src_gpu,\n"
    "  t.dst_gpu + k.i * t.dst_stride AS dst_gpu,\n"
    "  b.off0, b.off1, b.off2, b.off3, b.len0, b.len1, b.len2, b.len3, t.bytes,\n"
    "  coalesce(t.hop, 0) + CASE WHEN t.chain THEN k.i ELSE 0 END AS hop\n"
    "FROM transfer t JOIN ordinal k ON k.i < t.dst_count\n"
    "JOIN box b ON b.run_id = t.run_id AND b.id = t.box_id\n"
    "JOIN tensor tn ON tn.run_id = b.run_id AND tn.id = b.tensor_id;\n";

/* Version 10: studies (refit run STUDY.lua). `study` is one run of a study script: the path
 * as given, its name (the basename without .lua), when it started and the refit that ran
 * it (NULL when the build has no version); `study_table` every refit.table it printed, in
 * order: the title, the headers and the rows as JSON arrays of the printed cell strings,
 * and the aligned text exactly as printed. run.study_id says which study stored a run;
 * runs stored before, and runs of refit plan, sim and search, have NULL. */
static const char migration_v10[] =
    "CREATE TABLE study (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  path TEXT NOT NULL, name TEXT NOT NULL,\n"
    "  started_at TEXT NOT NULL,\n"
    "  refit_version TEXT\n"
    ");\n"
    "CREATE TABLE study_table (\n"
    "  study_id INTEGER NOT NULL REFERENCES study(id) ON DELETE CASCADE,\n"
    "  ordinal INTEGER NOT NULL CHECK (ordinal >= 1),\n"
    "  title TEXT,\n"
    "  columns_json TEXT NOT NULL, rows_json TEXT NOT NULL,\n"
    "  text TEXT NOT NULL,\n"
    "  PRIMARY KEY (study_id, ordinal)\n"
    ") WITHOUT ROWID;\n"
    "ALTER TABLE run ADD COLUMN study_id INTEGER REFERENCES study(id);\n"
    "CREATE INDEX run_study ON run(study_id);\n";

/* Version 11: what each GPU sends and receives, per run. "Bytes each inference GPU receives"
 * summed from transfer_each reads every single transfer of the run (12 M rows for Kimi K3,
 * seconds); the writer already holds the plan, so it adds one row per GPU that moves
 * anything, for summary runs too. Point-to-point bytes as transfer_each lists them (a chain
 * member forwards what it received), copies within a GPU apart, and what a GPU receives
 * through broadcasts as a non-root member (the tensor once, whatever NCCL's algorithm; what
 * a member sends in a broadcast depends on that algorithm, so it is not a column). Runs
 * stored before are filled by rf_store_fill_traffic (sim/store_write.c) in the same
 * transaction, with the writer's own code: SQL's GROUP BY sorts every single transfer (170 s
 * on a 1.1 GB file of 50 runs), the C pass reads each run's runs of transfers once. Summary
 * runs stored before kept no transfers and get no rows. transfer_each filtered by tensor
 * name starts from the run's tensor of that name. */
static const char migration_v11[] =
    "CREATE INDEX tensor_name ON tensor(run_id, name);\n"
    "CREATE TABLE gpu_traffic (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  gpu INTEGER NOT NULL,\n"
    "  sent_bytes INTEGER NOT NULL, received_bytes INTEGER NOT NULL,\n"
    "  local_bytes INTEGER NOT NULL, broadcast_bytes INTEGER NOT NULL,\n"
    "  transfers_out INTEGER NOT NULL, transfers_in INTEGER NOT NULL,\n"
    "  PRIMARY KEY (run_id, gpu)\n"
    ") WITHOUT ROWID;\n"
    /* The ordinals reach every broadcast's members too (the writer keeps them so). */
    "WITH RECURSIVE k(i) AS (\n"
    "  SELECT 0 UNION ALL SELECT i + 1 FROM k\n"
    "  WHERE i + 1 < (SELECT max(gpu_count) FROM collective))\n"
    "INSERT OR IGNORE INTO ordinal SELECT i FROM k WHERE EXISTS (SELECT 1 FROM collective);\n";

/* Version 12: the step's phases of a colocated refit (sim/step.h): 'prepare' (optimizer
 * state to host, the engine's weights back) and 'resume' (the training weights to host).
 * SQLite cannot alter a CHECK constraint, so predicted_step_phase is rebuilt with its rows
 * (and run_phases, which reads it, dropped and made again unchanged). */
static const char migration_v12[] =
    "DROP VIEW run_phases;\n"
    "CREATE TABLE predicted_step_phase_v12 (\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  seq INTEGER NOT NULL,\n"
    "  part TEXT NOT NULL CHECK (part IN ('all', 'bulk', 'misc')),\n"
    "  phase TEXT NOT NULL CHECK (phase IN ('export', 'transfer', 'load', 'finalize', 'prepare', "
    "'resume')),\n"
    "  seconds REAL NOT NULL CHECK (seconds >= 0),\n"
    "  bytes INTEGER NOT NULL CHECK (bytes >= 0), calls INTEGER NOT NULL CHECK (calls >= 0),\n"
    "  mechanism TEXT NOT NULL,\n"
    "  PRIMARY KEY (run_id, seq),\n"
    "  UNIQUE (run_id, part, phase)\n"
    ") WITHOUT ROWID;\n"
    "INSERT INTO predicted_step_phase_v12 SELECT * FROM predicted_step_phase;\n"
    "DROP TABLE predicted_step_phase;\n"
    "ALTER TABLE predicted_step_phase_v12 RENAME TO predicted_step_phase;\n" RUN_PHASES_VIEW;

/* Version 13: refit steps read from a framework's own log (refit measure). A measurement's
 * backend may be 'log': its seconds are the step as the framework printed it, nothing
 * replayed or verified (bytes_verified 0, iters 1, world_size 0); `source` says where the
 * figure came from, as the user wrote it (NULL for refit-exec's). measured_phase holds the
 * step's phases the log printed, by the step's names. SQLite cannot alter a CHECK, so the
 * measurement table is rebuilt in this transaction with its ids and rows: copied aside,
 * the two tables and the views over them dropped (measured_round first, so dropping
 * measurement cascades over nothing), created anew and filled back. The views compare a
 * log measurement with the step (prediction.step_seconds) where the run has one. */
static const char migration_v13[] =
    "CREATE TEMP TABLE keep_measurement AS SELECT * FROM measurement;\n"
    "CREATE TEMP TABLE keep_measured_round AS SELECT * FROM measured_round;\n"
    "DROP VIEW measured_run;\n"
    "DROP VIEW predicted_vs_measured;\n"
    "DROP VIEW predicted_vs_measured_round;\n"
    "DROP TABLE measured_round;\n"
    "DROP TABLE measurement;\n"
    "CREATE TABLE measurement (\n"
    "  id INTEGER PRIMARY KEY,\n"
    "  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,\n"
    "  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),\n"
    "  backend TEXT NOT NULL CHECK (backend IN ('nccl', 'mpi', 'log')),\n"
    "  world_size INTEGER NOT NULL,\n"
    "  iters INTEGER NOT NULL, warmup INTEGER NOT NULL,\n"
    "  seconds REAL, seconds_min REAL, seconds_max REAL,\n"
    "  bytes_verified INTEGER NOT NULL DEFAULT 0,\n"
    "  errors INTEGER NOT NULL DEFAULT 0,\n"
    "  status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'unverified')),\n"
    "  error_text TEXT,\n"
    "  hosts TEXT, gpu_model TEXT, nccl_version TEXT, mpi_version TEXT,\n"
    "  exec_config TEXT,\n"
    "  source TEXT\n"
    ");\n"
    "INSERT INTO measurement (id, run_id, created_at, backend, world_size, iters, warmup,\n"
    "  seconds, seconds_min, seconds_max, bytes_verified, errors, status, error_text, hosts,\n"
    "  gpu_model, nccl_version, mpi_version, exec_config)\n"
    "SELECT id, run_id, created_at, backend, world_size, iters, warmup, seconds, seconds_min,\n"
    "  seconds_max, bytes_verified, errors, status, error_text, hosts, gpu_model, nccl_version,\n"
    "  mpi_version, exec_config FROM temp.keep_measurement;\n"
    "CREATE INDEX measurement_run ON measurement(run_id);\n"
    "CREATE TABLE measured_round (\n"
    "  measurement_id INTEGER NOT NULL REFERENCES measurement(id) ON DELETE CASCADE,\n"
    "  round INTEGER NOT NULL,\n"
    "  seconds REAL NOT NULL,\n"
    "  PRIMARY KEY (measurement_id, round)\n"
    ") WITHOUT ROWID;\n"
    "INSERT INTO measured_round (measurement_id, round, seconds)\n"
    "SELECT measurement_id, round, seconds FROM temp.keep_measured_round;\n"
    "DROP TABLE temp.keep_measurement;\n"
    "DROP TABLE temp.keep_measured_round;\n"
    "CREATE TABLE measured_phase (\n"
    "  measurement_id INTEGER NOT NULL REFERENCES measurement(id) ON DELETE CASCADE,\n"
    "  phase TEXT NOT NULL CHECK (phase IN ('export', 'transfer', 'load', 'finalize', 'prepare',\n"
    "    'resume')),\n"
    "  seconds REAL NOT NULL CHECK (seconds >= 0),\n"
    "  PRIMARY KEY (measurement_id, phase)\n"
    ") WITHOUT ROWID;\n"
    "CREATE VIEW measured_run AS\n"
    "SELECT r.id AS run_id, r.label, r.model, r.strategy, r.train_gpus, r.train_layout,\n"
    "  r.train_dtype, r.infer_gpus, r.infer_layout, r.infer_dtype, r.payload_bytes,\n"
    "  r.moved_bytes, r.rounds, m.id AS measurement_id, m.created_at AS measured_at,\n"
    "  m.backend, m.world_size, m.iters, m.warmup, m.seconds, m.seconds_min, m.seconds_max,\n"
    "  r.payload_bytes / m.seconds / 1e9 AS payload_gb_per_second, m.bytes_verified,\n"
    "  m.hosts, m.gpu_model, m.nccl_version, m.mpi_version, m.exec_config, m.source\n"
    "FROM measurement m JOIN run r ON r.id = m.run_id WHERE m.status = 'ok';\n"
    /* A replay measures the wire (prediction.seconds); a log the step where there is one. */
    "CREATE VIEW predicted_vs_measured AS\n"
    "SELECT r.id AS run_id, r.label, r.model, r.strategy, p.cluster,\n"
    "  CASE WHEN m.backend = 'log' THEN coalesce(p.step_seconds, p.seconds)\n"
    "       ELSE p.seconds END AS predicted_seconds,\n"
    "  p.lower_bound_seconds, m.id AS measurement_id,\n"
    "  m.backend, m.world_size, m.seconds AS measured_seconds,\n"
    "  m.seconds / CASE WHEN m.backend = 'log' THEN coalesce(p.step_seconds, p.seconds)\n"
    "                   ELSE p.seconds END AS measured_over_predicted,\n"
    "  CASE WHEN m.backend = 'log' AND p.step_seconds IS NOT NULL THEN 'step'\n"
    "       ELSE 'wire' END AS compared_with,\n"
    "  m.source\n"
    "FROM prediction p JOIN run r ON r.id = p.run_id\n"
    "JOIN measurement m ON m.run_id = p.run_id AND m.status = 'ok';\n"
    "CREATE VIEW predicted_vs_measured_round AS\n"
    "SELECT m.run_id, m.id AS measurement_id, pr.round,\n"
    "  pr.finish_seconds - pr.start_seconds AS predicted_seconds,\n"
    "  mr.seconds AS measured_seconds\n"
    "FROM measurement m JOIN measured_round mr ON mr.measurement_id = m.id\n"
    "JOIN predicted_round pr ON pr.run_id = m.run_id AND pr.round = mr.round\n"
    "WHERE m.status = 'ok';\n"
    /* A phase a log printed beside the step's phase of that name, summed over the parts
     * (a hybrid step has a bulk and a misc export, transfer and load). */
    "CREATE VIEW predicted_vs_measured_phase AS\n"
    "SELECT m.run_id, m.id AS measurement_id, mp.phase,\n"
    "  (SELECT sum(s.seconds) FROM predicted_step_phase s\n"
    "   WHERE s.run_id = m.run_id AND s.phase = mp.phase) AS predicted_seconds,\n"
    "  mp.seconds AS measured_seconds\n"
    "FROM measurement m JOIN measured_phase mp ON mp.measurement_id = m.id\n"
    "WHERE m.status = 'ok';\n";

/* Version 14: a delta update's tensors (models/lib/update.lua): their boxes travel as the
 * encoding says (sim/delta.h), at delta_ppm changed elements per million; NULL for a tensor
 * that moves whole. wire_bytes is then the boxes' encoded bytes. */
static const char migration_v14[] = "ALTER TABLE tensor ADD COLUMN delta_encoding TEXT\n"
                                    "  CHECK (delta_encoding IN ('bitmap', 'coo', 'auto'));\n"
                                    "ALTER TABLE tensor ADD COLUMN delta_ppm INTEGER\n"
                                    "  CHECK (delta_ppm BETWEEN 1 AND 1000000);\n";

/* Version 15: a LoRA update's adapters say which part they are (A, then its B) and whether
 * the engine merges them into W; NULL for a tensor that is no adapter. */
static const char migration_v15[] =
    "ALTER TABLE tensor ADD COLUMN lora TEXT CHECK (lora IN ('A', 'B'));\n"
    "ALTER TABLE tensor ADD COLUMN lora_merge INTEGER CHECK (lora_merge IN (0, 1));\n";

/* Version 16: a refit overlapped with generation (a scenario's `overlap`, sim/overlap.h):
 * the refit as the engines share it, the longest an engine stalls, and when the last engine
 * has the new weights; NULL for a run without one (its stall and staleness are `seconds`). */
static const char migration_v16[] =
    "ALTER TABLE prediction ADD COLUMN overlap_refit_seconds REAL;\n"
    "ALTER TABLE prediction ADD COLUMN stall_seconds REAL;\n"
    "ALTER TABLE prediction ADD COLUMN staleness_seconds REAL;\n";

/* What a migration computes in C after its SQL, in its transaction (NULL: nothing). */
int (*const rf_store_migration_fill[RF_STORE_SCHEMA_VERSION])(struct rf_store *,
                                                              struct rf_error *) = {
    [10] = rf_store_fill_traffic,
};

/* rf_store_migrations[v] takes a file from version v to v + 1; a new file runs them all. */
const char *const rf_store_migrations[RF_STORE_SCHEMA_VERSION] = {
    schema_v1,     migration_v2,  migration_v3,  migration_v4,  migration_v5,  migration_v6,
    migration_v7,  migration_v8,  migration_v9,  migration_v10, migration_v11, migration_v12,
    migration_v13, migration_v14, migration_v15, migration_v16};
