/* SQLite store. Every write of a run happens inside one transaction with prepared
 * statements reused row by row (bind, step, reset); any failure rolls the run back. */
#include "store.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* Version 7, placement (issue 12): how the inference side's engines sit on the NVLink
 * domains (rf_engine_place), so refit-exec and calibrate rebuild the same side. `placement`
 * 'domain' or 'packed', `domain_gpus` the domain size placed against (0 packed), `span` the
 * GPUs from first_gpu the side covers, idle ones included (gpus when there are none). Runs
 * stored before have NULLs: packed, as every side was then. A block of its own, so the
 * version's other columns (the stored scenario) join it in one migration. */
#define MIGRATION_V7_PLACEMENT                                                                     \
    "ALTER TABLE side ADD COLUMN placement TEXT;\n"                                                \
    "ALTER TABLE side ADD COLUMN domain_gpus INTEGER;\n"                                           \
    "ALTER TABLE side ADD COLUMN span INTEGER;\n"

/* Version 7 (issue 12): capacity planning and runs that describe themselves. */
static const char migration_v7[] =
    /* ---- describe (issue 12): the resolved scenario of every run as JSON (sim/describe.h:
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

/* Version 8 (issue 13): the whole refit step as phases (sim/step.h) under a framework
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
    ") WITHOUT ROWID;\n"
    /* A run's phases as a user compares them: the framework from the stored scenario, each
     * phase's share of the step (phases that overlap have shares summing past 1). */
    "CREATE VIEW run_phases AS\n"
    "SELECT r.id AS run_id, r.label, r.model, r.strategy,\n"
    "  CASE WHEN json_valid(r.scenario_json)\n"
    "       THEN json_extract(r.scenario_json, '$.framework.name') END AS framework,\n"
    "  s.seq, s.part, s.phase, s.seconds, p.step_seconds,\n"
    "  CASE WHEN p.step_seconds > 0 THEN s.seconds / p.step_seconds END AS share_of_step,\n"
    "  s.bytes, s.calls, s.mechanism, p.step_composition\n"
    "FROM predicted_step_phase s JOIN run r ON r.id = s.run_id\n"
    "LEFT JOIN prediction p ON p.run_id = s.run_id;\n";

/* migrations[v] takes a file from version v to v + 1; a new file runs them all. */
static const char *const migrations[RF_STORE_SCHEMA_VERSION] = {
    schema_v1,    migration_v2, migration_v3, migration_v4,
    migration_v5, migration_v6, migration_v7, migration_v8};

/* SQLite's "unable to open database file" says neither what is missing nor what is not
 * allowed: the file system does. */
static int cannot_open(struct rf_store *st, struct rf_error *err, const char *msg)
{
    char dir[4096];
    const char *slash = strrchr(st->path, '/');
    if (access(st->path, F_OK) == 0) {
        if (access(st->path, R_OK | W_OK) != 0)
            return rf_error_set(err, RF_EIO, "%s: %s", st->path, strerror(errno));
        return rf_error_set(err, RF_EDB, "%s: %s", st->path, msg);
    }
    snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash > st->path ? slash - st->path : 1) : 1,
             slash ? st->path : ".");
    struct stat sb;
    int e = stat(dir, &sb) != 0             ? errno
            : !S_ISDIR(sb.st_mode)          ? ENOTDIR
            : access(dir, W_OK | X_OK) != 0 ? errno
                                            : 0;
    if (e)
        return rf_error_set(err, RF_EIO, "%s: cannot create it: %s: %s", st->path, dir,
                            strerror(e));
    return rf_error_set(err, RF_EDB, "%s: cannot create it (%s)", st->path, msg);
}

/* Every SQLite error names the file, and a lock says what it is and how long we waited: a
 * bare "database is locked" leaves the user guessing which file and why. */
static int db_error(struct rf_store *st, struct rf_error *err, const char *what)
{
    int code = st->db ? sqlite3_errcode(st->db) : SQLITE_CANTOPEN;
    const char *msg = st->db ? sqlite3_errmsg(st->db) : "cannot open";
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED)
        return rf_error_set(err, RF_EBUSY,
                            "%s: database is locked (another refit is writing it; waited %g s)",
                            st->path, st->busy_seconds);
    if (code == SQLITE_NOTADB)
        return rf_error_set(err, RF_EDB, "%s: not a refit database (%s)", st->path, msg);
    if (code == SQLITE_READONLY)
        return rf_error_set(err, RF_EDB,
                            "%s: cannot write it (%s): the file or its folder is "
                            "read-only",
                            st->path, msg);
    if (code == SQLITE_CANTOPEN || code == SQLITE_PERM)
        return cannot_open(st, err, msg);
    if (what)
        return rf_error_set(err, RF_EDB, "%s: %s: %s", st->path, what, msg);
    return rf_error_set(err, RF_EDB, "%s: %s", st->path, msg);
}

static int exec(struct rf_store *st, const char *sql, struct rf_error *err)
{
    if (sqlite3_exec(st->db, sql, NULL, NULL, NULL) != SQLITE_OK)
        return db_error(st, err, NULL);
    return 0;
}

static int pragma_int(struct rf_store *st, const char *sql, int64_t *out, struct rf_error *err)
{
    sqlite3_stmt *s = NULL;
    int rc = 0;
    if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK)
        return db_error(st, err, NULL);
    if (sqlite3_step(s) == SQLITE_ROW)
        *out = sqlite3_column_int64(s, 0);
    else
        rc = db_error(st, err, NULL);
    sqlite3_finalize(s);
    return rc;
}

/* What a file says it is: application_id, user_version and whether it holds anything. */
struct identity {
    int64_t app, version, objects;
};

static int read_identity(struct rf_store *st, struct identity *id, struct rf_error *err)
{
    int rc;
    if ((rc = pragma_int(st, "PRAGMA application_id", &id->app, err)) < 0 ||
        (rc = pragma_int(st, "PRAGMA user_version", &id->version, err)) < 0 ||
        (rc = pragma_int(st, "SELECT count(*) FROM sqlite_schema", &id->objects, err)) < 0)
        return rc;
    return 0;
}

/* Refuses what refit must not read or migrate into. A file with tables but user_version 0
 * is someone else's (refit sets the version in the transaction that creates its tables),
 * so it is never mixed with ours, whatever its application_id says. */
static int check_identity(struct rf_store *st, const struct identity *id, bool existing,
                          struct rf_error *err)
{
    if (id->objects > 0 && id->version == 0)
        return rf_error_set(err, RF_EDB, "%s: has tables but is not a refit database", st->path);
    if (id->objects > 0 && id->app != RF_STORE_APPLICATION_ID)
        return rf_error_set(err, RF_EDB, "%s: not a refit database (application_id %lld)", st->path,
                            (long long)id->app);
    if (id->objects == 0 && existing)
        return rf_error_set(err, RF_EDB,
                            "%s: empty, not a refit database (refit plan or sim creates one)",
                            st->path);
    if (id->version > RF_STORE_SCHEMA_VERSION)
        return rf_error_set(err, RF_EDB,
                            "%s: schema version %lld is newer than this refit (%d); upgrade refit",
                            st->path, (long long)id->version, RF_STORE_SCHEMA_VERSION);
    return 0;
}

/* "file:" URI of path with immutable=1, for a read-only open that cannot create the -shm
 * file a WAL database needs (a read-only folder). */
static void immutable_uri(const char *path, char *uri, size_t size)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = (size_t)snprintf(uri, size, "file:");
    for (const unsigned char *p = (const unsigned char *)path; *p && n + 4 < size; p++) {
        if (*p == '%' || *p == '?' || *p == '#' || *p < 0x20 || *p >= 0x7f) {
            uri[n++] = '%';
            uri[n++] = hex[*p >> 4];
            uri[n++] = hex[*p & 15];
        } else {
            uri[n++] = (char)*p;
        }
    }
    snprintf(uri + n, size - n, "?immutable=1");
}

static int open_db(struct rf_store *st, const char *name, int flags, struct rf_error *err)
{
    /* One connection per thread (NOMUTEX): the mutexes of serialized mode cost 5% of
     * storing a Kimi K3 plan. */
    if (sqlite3_open_v2(name, &st->db, flags | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
        int rc = db_error(st, err, NULL);
        sqlite3_close(st->db);
        st->db = NULL;
        return rc;
    }
    sqlite3_busy_timeout(st->db, (int)(st->busy_seconds * 1000));
    return 0;
}

/* Brings a writable file to the current schema: forward-only migrations in one
 * transaction, the identity read again inside it in case another process created or
 * migrated the file meanwhile. */
static int migrate(struct rf_store *st, struct rf_error *err)
{
    struct identity id;
    char sql[128];
    int rc;
    if ((rc = exec(st, "BEGIN IMMEDIATE", err)) < 0)
        return rc;
    if ((rc = read_identity(st, &id, err)) < 0 || (rc = check_identity(st, &id, false, err)) < 0)
        goto out;
    for (int64_t v = id.version; v < RF_STORE_SCHEMA_VERSION; v++)
        if ((rc = exec(st, migrations[v], err)) < 0)
            goto out;
    snprintf(sql, sizeof(sql), "PRAGMA application_id=%d; PRAGMA user_version=%d;",
             RF_STORE_APPLICATION_ID, RF_STORE_SCHEMA_VERSION);
    if ((rc = exec(st, sql, err)) < 0 || (rc = exec(st, "COMMIT", err)) < 0)
        goto out;
    return 0;
out:
    sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    return rc;
}

int rf_store_open(struct rf_store *st, const char *path, int flags, struct rf_error *err)
{
    bool readonly = (flags & RF_STORE_READONLY) != 0;
    bool existing = readonly || (flags & RF_STORE_EXISTING) != 0;
    struct identity id;
    struct stat sb;
    int rc;

    memset(st, 0, sizeof(*st));
    st->busy_seconds = RF_STORE_BUSY_SECONDS;
    if (existing == ((flags & RF_STORE_CREATE) != 0))
        return rf_error_set(err, RF_EINVAL,
                            "%s: open it with one of RF_STORE_CREATE, _EXISTING, _READONLY", path);
    if (!(st->path = strdup(path)))
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    /* SQLite's "unable to open database file" does not say that the file is missing. */
    if (existing && stat(path, &sb) != 0) {
        rc = rf_error_set(err, RF_EIO, "%s: %s", path,
                          errno == ENOENT ? "no such file" : strerror(errno));
        goto fail;
    }
    if (existing && S_ISDIR(sb.st_mode)) {
        rc = rf_error_set(err, RF_EIO, "%s: is a directory, not a refit database", path);
        goto fail;
    }
    if ((rc = open_db(st, path,
                      readonly ? SQLITE_OPEN_READONLY
                               : SQLITE_OPEN_READWRITE | (existing ? 0 : SQLITE_OPEN_CREATE),
                      err)) < 0)
        goto fail;
    rc = read_identity(st, &id, err);
    if (rc < 0 && readonly &&
        (sqlite3_errcode(st->db) == SQLITE_READONLY ||
         sqlite3_errcode(st->db) == SQLITE_CANTOPEN)) {
        /* A WAL file in a folder we cannot write: SQLite cannot create its -shm file. With no
         * -wal file beside it (or an empty one) every commit is in the file itself, so it is
         * read as immutable; with one, a writer is active (or died) and the file alone would
         * be stale. */
        char wal[4096 + 8], uri[3 * 4096 + 32];
        struct stat ws;
        snprintf(wal, sizeof(wal), "%s-wal", path);
        if (stat(wal, &ws) == 0 && ws.st_size > 0) {
            rc = rf_error_set(err, RF_EDB,
                              "%s: cannot read it: %s exists (a writer is active or died) and "
                              "the folder is not writable",
                              path, wal);
            goto fail;
        }
        sqlite3_close(st->db);
        st->db = NULL;
        immutable_uri(path, uri, sizeof(uri));
        if ((rc = open_db(st, uri, SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, err)) < 0)
            goto fail;
        rc = read_identity(st, &id, err);
    }
    if (rc < 0 || (rc = check_identity(st, &id, existing, err)) < 0)
        goto fail;
    if (readonly) {
        if (id.version < RF_STORE_SCHEMA_VERSION) {
            rc = rf_error_set(err, RF_EDB,
                              "%s: schema version %lld is older than this refit (%d): run refit "
                              "plan/sim on it once to upgrade, or open it writable",
                              path, (long long)id.version, RF_STORE_SCHEMA_VERSION);
            goto fail;
        }
        return 0;
    }
    if ((rc = exec(st,
                   "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                   "PRAGMA foreign_keys=ON;",
                   err)) < 0)
        goto fail;
    if (id.version < RF_STORE_SCHEMA_VERSION && (rc = migrate(st, err)) < 0)
        goto fail;
    return 0;
fail:
    rf_store_close(st);
    return rc;
}

void rf_store_set_busy_timeout(struct rf_store *st, double seconds)
{
    st->busy_seconds = seconds;
    if (st->db)
        sqlite3_busy_timeout(st->db, (int)(seconds * 1000));
}

void rf_store_close(struct rf_store *st)
{
    if (!st)
        return;
    if (st->db)
        sqlite3_close(st->db);
    st->db = NULL;
    free(st->path);
    st->path = NULL;
}

enum {
    S_RUN,
    S_TENSOR,
    S_BOX,
    S_TRANSFER,
    S_COLL,
    S_ROLE,
    S_SIDE,
    S_ROUND,
    S_PRED,
    S_LINK,
    S_PROUND,
    S_PPHASE,
    S_DESCRIBE, /* issue 12: the run's description and memory */
    S_MEMORY,
    S_STEP, /* issue 13: the step's phases */
    S_COUNT
};

static const char *const insert_sql[S_COUNT] = {
    "INSERT INTO run (label, scenario, model, strategy, cluster_system, cluster_nodes,"
    " train_gpus, train_first_gpu, train_layout, train_dtype, infer_gpus, infer_first_gpu,"
    " infer_layout, infer_dtype, model_params, model_bytes, payload_bytes, moved_bytes,"
    " logical_bytes, local_bytes, transfers, collectives, plan_seconds, staging_bytes, rounds,"
    " chunk_bytes, relay_ring, relay_fanout, relay_depth, net_channels_per_peer)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO tensor VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO box VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO transfer (run_id, id, box_id, src_gpu, dst_gpu, dst_count, dst_stride, phase,"
    " bytes, round, after_id, hop, chain) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO collective (run_id, id, kind, tensor_id, root_gpu, first_gpu, gpu_count,"
    " gpu_stride, bytes, round) VALUES (?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO role_summary VALUES (?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO side (run_id, side, kind, gpus, first_gpu, tp, cp, pp, dp, ep, etp, edp,"
    " replicas, fsdp, dtype, stage_layers, placement, domain_gpus, span)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO round VALUES (?,?,?,?,?,?)",
    "INSERT INTO prediction (run_id, cluster, cluster_source, nodes, gpus_per_node, seconds,"
    " lower_bound_seconds, nvlink_bytes, fabric_bytes, bottleneck, bottleneck_link_id, messages,"
    " flows, events, sim_seconds, step_seconds, step_composition)"
    " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO link_load VALUES (?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO predicted_round VALUES (?,?,?,?)",
    "INSERT INTO predicted_phase VALUES (?,?,?,?,?)",
    "UPDATE run SET scenario_json = ? WHERE id = ?",
    "INSERT INTO memory VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
    "INSERT INTO predicted_step_phase (run_id, seq, part, phase, seconds, bytes, calls,"
    " mechanism) VALUES (?,?,?,?,?,?,?,?)",
};

static void bind_text(sqlite3_stmt *s, int i, const char *v)
{
    if (v)
        sqlite3_bind_text(s, i, v, -1, SQLITE_TRANSIENT);
    else
        sqlite3_bind_null(s, i);
}

/* Steps and resets a bound statement. */
static int step(struct rf_store *st, sqlite3_stmt *s, struct rf_error *err, const char *what)
{
    int rc = sqlite3_step(s);
    sqlite3_reset(s);
    if (rc != SQLITE_DONE)
        return db_error(st, err, what);
    return 0;
}

static void shape_text(const struct rf_tensor *t, char *buf, size_t size)
{
    size_t n = 0;
    n += (size_t)snprintf(buf + n, size - n, "[");
    for (int d = 0; d < t->ndim && n < size; d++)
        n += (size_t)snprintf(buf + n, size - n, d ? ", %lld" : "%lld", (long long)t->shape[d]);
    if (n < size)
        snprintf(buf + n, size - n, "]");
}

static int insert_run(struct rf_store *st, sqlite3_stmt *s, const struct rf_run_info *info,
                      const struct rf_plan *plan, struct rf_error *err)
{
    char tl[128], il[128];
    int i = 1;
    rf_side_describe(info->train, tl, sizeof(tl));
    rf_side_describe(info->infer, il, sizeof(il));
    bind_text(s, i++, info->label);
    bind_text(s, i++, info->scenario);
    bind_text(s, i++, info->model);
    bind_text(s, i++, rf_strategy_name(plan->strategy));
    bind_text(s, i++, info->cluster_system);
    if (info->cluster_nodes > 0)
        sqlite3_bind_int64(s, i++, info->cluster_nodes);
    else
        sqlite3_bind_null(s, i++);
    sqlite3_bind_int64(s, i++, info->train->gpus);
    sqlite3_bind_int64(s, i++, info->train->first_gpu);
    bind_text(s, i++, tl);
    bind_text(s, i++, rf_dtype_name(info->train->dtype));
    sqlite3_bind_int64(s, i++, info->infer->gpus);
    sqlite3_bind_int64(s, i++, info->infer->first_gpu);
    bind_text(s, i++, il);
    bind_text(s, i++, rf_dtype_name(info->infer->dtype));
    sqlite3_bind_int64(s, i++, plan->model_params);
    sqlite3_bind_int64(s, i++, plan->model_bytes);
    sqlite3_bind_int64(s, i++, plan->total.payload_bytes);
    sqlite3_bind_int64(s, i++, plan->total.moved_bytes);
    sqlite3_bind_int64(s, i++, plan->total.logical_bytes);
    sqlite3_bind_int64(s, i++, plan->total.local_bytes);
    sqlite3_bind_int64(s, i++, plan->total.transfers);
    sqlite3_bind_int64(s, i++, plan->total.collectives);
    sqlite3_bind_double(s, i++, info->plan_seconds);
    sqlite3_bind_int64(s, i++, plan->staging_bytes);
    sqlite3_bind_int(s, i++, plan->n_rounds);
    sqlite3_bind_int64(s, i++, plan->chunk_bytes);
    sqlite3_bind_int(s, i++, plan->relay.ring);
    sqlite3_bind_int(s, i++, plan->relay.fanout);
    sqlite3_bind_int(s, i++, plan->relay.depth);
    sqlite3_bind_int(s, i++, plan->net_channels_per_peer);
    return step(st, s, err, "run");
}

static int insert_side(struct rf_store *st, sqlite3_stmt *q, int64_t run, const char *name,
                       const struct rf_side *sd, struct rf_error *err)
{
    char layers[4096];
    size_t n = 0;
    layers[0] = '\0';
    for (int64_t i = 0; i < sd->pp && n < sizeof(layers); i++)
        n +=
            (size_t)snprintf(layers + n, sizeof(layers) - n, i ? ",%d" : "%d", sd->stage_layers[i]);
    if (n >= sizeof(layers))
        return rf_error_set(err, RF_EINVAL, "%s: too many pipeline stages to store", name);
    int64_t v[] = {sd->gpus, sd->first_gpu, sd->tp,  sd->cp,       sd->pp,  sd->dp,
                   sd->ep,   sd->etp,       sd->edp, sd->replicas, sd->fsdp};
    sqlite3_bind_int64(q, 1, run);
    bind_text(q, 2, name);
    bind_text(q, 3, sd->kind == RF_SIDE_MEGATRON ? "megatron" : "vllm");
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
        sqlite3_bind_int64(q, 4 + (int)i, v[i]);
    bind_text(q, 15, rf_dtype_name(sd->dtype));
    bind_text(q, 16, layers);
    bind_text(q, 17, sd->domain_gpus > 0 ? "domain" : "packed");
    sqlite3_bind_int64(q, 18, sd->domain_gpus);
    sqlite3_bind_int64(q, 19, sd->place.span);
    return step(st, q, err, "side");
}

/* Per-round totals: transfer runs, single transfers, collectives and bytes leaving a GPU. */
static int insert_rounds(struct rf_store *st, sqlite3_stmt *q, int64_t run,
                         const struct rf_plan *plan, struct rf_error *err)
{
    int64_t(*tot)[4] = calloc((size_t)plan->n_rounds + 1, sizeof(*tot));
    int rc = 0;
    if (!tot)
        return rf_error_set(err, RF_ENOMEM, "out of memory");
    for (size_t k = 0; k < plan->n_transfers; k++) {
        const struct rf_transfer *t = &plan->transfers[k];
        tot[t->round][0]++;
        tot[t->round][1] += t->dst_count;
        if (t->src != t->dst || t->dst_count > 1)
            tot[t->round][3] += t->bytes * t->dst_count;
    }
    for (size_t k = 0; k < plan->n_collectives; k++) {
        const struct rf_collective *c = &plan->collectives[k];
        tot[c->round][2]++;
        tot[c->round][3] +=
            c->bytes * (c->gpu_count -
                        (c->root >= c->first_gpu && c->root < c->first_gpu + c->gpu_count ? 1 : 0));
    }
    for (int32_t r = 0; r < plan->n_rounds && rc == 0; r++) {
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int(q, 2, r);
        for (int i = 0; i < 4; i++)
            sqlite3_bind_int64(q, 3 + i, tot[r][i]);
        rc = step(st, q, err, "round");
    }
    free(tot);
    return rc;
}

/* The step's phases (schema 8), in the order the step lists them. A name outside the enums
 * is "?", which the table's CHECK refuses: the run's transaction is rolled back whole. */
static int insert_step(struct rf_store *st, sqlite3_stmt *q, int64_t run, const struct rf_step *stp,
                       struct rf_error *err)
{
    char what[64];
    int rc;
    for (size_t i = 0; i < stp->n; i++) {
        const struct rf_step_phase *ph = &stp->phase[i];
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int64(q, 2, (int64_t)i);
        bind_text(q, 3, rf_step_part_name(ph->part));
        bind_text(q, 4, rf_step_phase_name(ph->phase));
        sqlite3_bind_double(q, 5, ph->seconds);
        sqlite3_bind_int64(q, 6, ph->bytes);
        sqlite3_bind_int64(q, 7, ph->calls);
        sqlite3_bind_text(q, 8, ph->mechanism, (int)strnlen(ph->mechanism, RF_STEP_MECHANISM_MAX),
                          SQLITE_TRANSIENT);
        snprintf(what, sizeof(what), "predicted_step_phase (step phase %zu)", i);
        if ((rc = step(st, q, err, what)) < 0)
            return rc;
    }
    return 0;
}

static int insert_prediction(struct rf_store *st, sqlite3_stmt **s, int64_t run,
                             const struct rf_topology *topo, const struct rf_prediction *p,
                             const struct rf_step *stp, struct rf_error *err)
{
    const struct rf_cluster *c = topo->cluster;
    sqlite3_stmt *q = s[S_PRED];
    char name[96];
    int rc;
    sqlite3_bind_int64(q, 1, run);
    bind_text(q, 2, c->name);
    bind_text(q, 3, c->source);
    sqlite3_bind_int64(q, 4, c->nodes);
    sqlite3_bind_int64(q, 5, c->gpus_per_node);
    sqlite3_bind_double(q, 6, p->predicted_s);
    sqlite3_bind_double(q, 7, p->lower_bound_s);
    sqlite3_bind_int64(q, 8, p->nvlink_bytes);
    sqlite3_bind_int64(q, 9, p->fabric_bytes);
    if (p->bottleneck >= 0) {
        rf_link_describe(topo, (size_t)p->bottleneck, name, sizeof(name));
        bind_text(q, 10, name);
        sqlite3_bind_int(q, 11, p->bottleneck);
    } else {
        sqlite3_bind_null(q, 10);
        sqlite3_bind_null(q, 11);
    }
    sqlite3_bind_int64(q, 12, p->messages);
    sqlite3_bind_int64(q, 13, p->flows);
    sqlite3_bind_int64(q, 14, p->events);
    sqlite3_bind_double(q, 15, p->sim_seconds);
    if (stp) {
        sqlite3_bind_double(q, 16, stp->total_s);
        sqlite3_bind_text(q, 17, stp->composition,
                          (int)strnlen(stp->composition, RF_STEP_MECHANISM_MAX), SQLITE_TRANSIENT);
    } else {
        sqlite3_bind_null(q, 16);
        sqlite3_bind_null(q, 17);
    }
    if ((rc = step(st, q, err, "prediction")) < 0)
        return rc;
    /* Only links that carried bytes or were busy get a row (a missing row means zero): a
     * 2-GPU plan on a 100000-node cluster has 4.85 M links, of which 4 carry anything. */
    for (size_t l = 0; l < p->n_links; l++) {
        const struct rf_link *k = &topo->links[l];
        int64_t bytes = (int64_t)(p->link_bytes[l] + 0.5);
        if (bytes == 0 && !(p->link_busy[l] > 0))
            continue;
        q = s[S_LINK];
        rf_link_describe(topo, l, name, sizeof(name));
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int64(q, 2, (int64_t)l);
        bind_text(q, 3, rf_link_kind_name(k->kind));
        bind_text(q, 4, name);
        sqlite3_bind_int(q, 5, k->a);
        sqlite3_bind_int(q, 6, k->b);
        sqlite3_bind_double(q, 7, k->capacity / 1e9);
        sqlite3_bind_int64(q, 8, bytes);
        sqlite3_bind_double(q, 9, p->link_busy[l]);
        sqlite3_bind_double(
            q, 10, p->predicted_s > 0 ? p->link_bytes[l] / (k->capacity * p->predicted_s) : 0);
        if ((rc = step(st, q, err, "link_load")) < 0)
            return rc;
    }
    for (int32_t r = 0; r < p->n_rounds; r++) {
        q = s[S_PROUND];
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int(q, 2, r);
        sqlite3_bind_double(q, 3, p->round_start[r]);
        sqlite3_bind_double(q, 4, p->round_finish[r]);
        if ((rc = step(st, q, err, "predicted_round")) < 0)
            return rc;
    }
    for (int ph = 0; ph < RF_SIM_PHASE_COUNT; ph++) {
        if (p->phase_bytes[ph] == 0)
            continue;
        q = s[S_PPHASE];
        sqlite3_bind_int64(q, 1, run);
        bind_text(q, 2, rf_sim_phase_name((enum rf_sim_phase)ph));
        sqlite3_bind_double(q, 3, p->phase_start[ph]);
        sqlite3_bind_double(q, 4, p->phase_finish[ph]);
        sqlite3_bind_int64(q, 5, p->phase_bytes[ph]);
        if ((rc = step(st, q, err, "predicted_phase")) < 0)
            return rc;
    }
    return stp ? insert_step(st, s[S_STEP], run, stp, err) : 0;
}

static int insert_rows(struct rf_store *st, sqlite3_stmt **s, int64_t run,
                       const struct rf_plan *plan, struct rf_error *err)
{
    int rc;
    for (size_t k = 0; k < plan->n_tensors; k++) {
        const struct rf_tensor *t = &plan->tensors[k];
        char shape[96];
        sqlite3_stmt *q = s[S_TENSOR];
        shape_text(t, shape, sizeof(shape));
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int64(q, 2, (int64_t)k);
        bind_text(q, 3, t->name);
        bind_text(q, 4, rf_role_name(t->role));
        sqlite3_bind_int(q, 5, t->layer);
        bind_text(q, 6, rf_class_name(t->cls));
        bind_text(q, 7, shape);
        sqlite3_bind_int64(q, 8, rf_tensor_numel(t));
        bind_text(q, 9, rf_dtype_name(t->dtype));
        bind_text(q, 10, rf_dtype_name(plan->wire_dtype[k]));
        sqlite3_bind_int64(q, 11, rf_tensor_numel(t) * (int64_t)rf_dtype_size(plan->wire_dtype[k]));
        bind_text(q, 12, rf_strategy_name(plan->tensor_strategy[k]));
        if (t->scale_of >= 0)
            sqlite3_bind_int(q, 13, t->scale_of);
        else
            sqlite3_bind_null(q, 13);
        if ((rc = step(st, q, err, "tensor")) < 0)
            return rc;
    }
    for (size_t k = 0; k < plan->n_boxes; k++) {
        const struct rf_plan_box *b = &plan->boxes[k];
        sqlite3_stmt *q = s[S_BOX];
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int64(q, 2, (int64_t)k);
        sqlite3_bind_int(q, 3, b->tensor);
        for (int d = 0; d < RF_MAX_DIMS; d++) {
            sqlite3_bind_int64(q, 4 + d, b->box.off[d]);
            sqlite3_bind_int64(q, 8 + d, b->box.len[d]);
        }
        sqlite3_bind_int64(q, 12, rf_box_numel(&b->box, RF_MAX_DIMS));
        if ((rc = step(st, q, err, "box")) < 0)
            return rc;
    }
    for (size_t k = 0; k < plan->n_transfers; k++) {
        const struct rf_transfer *t = &plan->transfers[k];
        sqlite3_stmt *q = s[S_TRANSFER];
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int64(q, 2, (int64_t)k);
        sqlite3_bind_int(q, 3, t->box);
        sqlite3_bind_int(q, 4, t->src);
        sqlite3_bind_int(q, 5, t->dst);
        sqlite3_bind_int(q, 6, t->dst_count);
        sqlite3_bind_int(q, 7, t->dst_stride);
        sqlite3_bind_text(q, 8, t->phase == RF_PHASE_GATHER ? "gather" : "deliver", -1,
                          SQLITE_STATIC);
        sqlite3_bind_int64(q, 9, t->bytes);
        sqlite3_bind_int(q, 10, t->round);
        if (t->after >= 0)
            sqlite3_bind_int(q, 11, t->after);
        else
            sqlite3_bind_null(q, 11);
        sqlite3_bind_int(q, 12, t->hop);
        sqlite3_bind_int(q, 13, t->chain);
        if ((rc = step(st, q, err, "transfer")) < 0)
            return rc;
    }
    for (size_t k = 0; k < plan->n_collectives; k++) {
        const struct rf_collective *c = &plan->collectives[k];
        sqlite3_stmt *q = s[S_COLL];
        sqlite3_bind_int64(q, 1, run);
        sqlite3_bind_int64(q, 2, (int64_t)k);
        sqlite3_bind_text(q, 3, "broadcast", -1, SQLITE_STATIC);
        sqlite3_bind_int(q, 4, c->tensor);
        sqlite3_bind_int(q, 5, c->root);
        sqlite3_bind_int(q, 6, c->first_gpu);
        sqlite3_bind_int(q, 7, c->gpu_count);
        sqlite3_bind_int(q, 8, c->gpu_stride);
        sqlite3_bind_int64(q, 9, c->bytes);
        sqlite3_bind_int(q, 10, c->round);
        if ((rc = step(st, q, err, "collective")) < 0)
            return rc;
    }
    for (int r = 0; r < RF_ROLE_COUNT; r++) {
        const struct rf_tally *t = &plan->role[r];
        sqlite3_stmt *q = s[S_ROLE];
        if (t->tensors == 0)
            continue;
        sqlite3_bind_int64(q, 1, run);
        bind_text(q, 2, rf_role_name((enum rf_role)r));
        sqlite3_bind_int64(q, 3, t->tensors);
        sqlite3_bind_int64(q, 4, t->params);
        sqlite3_bind_int64(q, 5, t->payload_bytes);
        sqlite3_bind_int64(q, 6, t->moved_bytes);
        sqlite3_bind_int64(q, 7, t->logical_bytes);
        sqlite3_bind_int64(q, 8, t->local_bytes);
        sqlite3_bind_int64(q, 9, t->transfers);
        sqlite3_bind_int64(q, 10, t->collectives);
        if ((rc = step(st, q, err, "role_summary")) < 0)
            return rc;
    }
    return 0;
}

/* The run's description (sim/describe.h) and each side's memory line, when given. */
static int insert_description(struct rf_store *st, sqlite3_stmt **s, int64_t run,
                              const struct rf_run_info *info, struct rf_error *err)
{
    int rc;
    if (info->scenario_json) {
        bind_text(s[S_DESCRIBE], 1, info->scenario_json);
        sqlite3_bind_int64(s[S_DESCRIBE], 2, run);
        if ((rc = step(st, s[S_DESCRIBE], err, "run.scenario_json")) < 0)
            return rc;
    }
    const struct rf_side_memory *mem[2] = {info->mem_train, info->mem_infer};
    for (int k = 0; k < 2; k++) {
        const struct rf_side_memory *m = mem[k];
        sqlite3_stmt *q = s[S_MEMORY];
        if (!m)
            continue;
        int64_t v[] = {m->worst.gpu,       m->worst.stage,    m->worst.weights, m->worst.grads,
                       m->worst.optimizer, m->worst.staging,  m->worst.total,   m->hbm_bytes,
                       m->budget_bytes,    m->headroom_bytes, m->fits};
        sqlite3_bind_int64(q, 1, run);
        bind_text(q, 2, k == 0 ? "train" : "infer");
        for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
            sqlite3_bind_int64(q, 3 + (int)i, v[i]);
        if ((rc = step(st, q, err, "memory")) < 0)
            return rc;
    }
    return 0;
}

/* The references a plan's rows make to each other, checked before anything is written. */
static int check_refs(const struct rf_plan *plan, struct rf_error *err)
{
    for (size_t i = 0; i < plan->n_boxes; i++)
        if (plan->boxes[i].tensor < 0 || (size_t)plan->boxes[i].tensor >= plan->n_tensors)
            return rf_error_set(err, RF_EINVAL, "box %zu: tensor %d does not exist (%zu tensors)",
                                i, (int)plan->boxes[i].tensor, plan->n_tensors);
    for (size_t i = 0; i < plan->n_transfers; i++) {
        const struct rf_transfer *t = &plan->transfers[i];
        if (t->box < 0 || (size_t)t->box >= plan->n_boxes)
            return rf_error_set(err, RF_EINVAL, "transfer %zu: box %d does not exist (%zu boxes)",
                                i, (int)t->box, plan->n_boxes);
        if (t->after >= (int32_t)i)
            return rf_error_set(err, RF_EINVAL, "transfer %zu: depends on later transfer %d", i,
                                (int)t->after);
    }
    for (size_t i = 0; i < plan->n_collectives; i++)
        if (plan->collectives[i].tensor < 0 ||
            (size_t)plan->collectives[i].tensor >= plan->n_tensors)
            return rf_error_set(err, RF_EINVAL,
                                "collective %zu: tensor %d does not exist (%zu tensors)", i,
                                (int)plan->collectives[i].tensor, plan->n_tensors);
    return 0;
}

/* A step is part of a prediction (its transfer phase is the simulated wire) and its phases
 * fit their array: checked before anything is written. */
static int check_step(const struct rf_run_info *info, struct rf_error *err)
{
    if (!info->step)
        return 0;
    if (!info->prediction)
        return rf_error_set(err, RF_EINVAL,
                            "rf_run_info.step: a step needs the prediction it extends "
                            "(rf_run_info.prediction is NULL)");
    if (info->step->n > RF_STEP_PHASES_MAX)
        return rf_error_set(err, RF_EINVAL, "rf_run_info.step: %zu phases, at most %d",
                            info->step->n, RF_STEP_PHASES_MAX);
    return 0;
}

int rf_store_save_plan(struct rf_store *st, const struct rf_run_info *info,
                       const struct rf_plan *plan, int64_t *run_id, struct rf_error *err)
{
    sqlite3_stmt *s[S_COUNT] = {NULL};
    bool in_tx = false, fk_off = false;
    int rc;

    /* The rows written here reference only rows written here, by ids assigned here and
     * checked by check_refs, so the per-row foreign key lookups (a fifth of the time for
     * 1.2 M Kimi K3 transfers) are skipped for this transaction; the schema keeps its keys
     * and they are back on for every other write. The pragma is a no-op inside a
     * transaction and is compiled into statements, hence before BEGIN and before they are
     * prepared. */
    if ((rc = check_refs(plan, err)) < 0 || (rc = check_step(info, err)) < 0)
        return rc;
    if ((rc = exec(st, "PRAGMA foreign_keys=OFF", err)) < 0)
        goto out;
    fk_off = true;
    for (int i = 0; i < S_COUNT; i++)
        if (sqlite3_prepare_v2(st->db, insert_sql[i], -1, &s[i], NULL) != SQLITE_OK) {
            rc = db_error(st, err, "prepare");
            goto out;
        }
    if ((rc = exec(st, "BEGIN IMMEDIATE", err)) < 0)
        goto out;
    in_tx = true;
    if ((rc = insert_run(st, s[S_RUN], info, plan, err)) < 0)
        goto out;
    *run_id = sqlite3_last_insert_rowid(st->db);
    if ((rc = insert_rows(st, s, *run_id, plan, err)) < 0 ||
        (rc = insert_side(st, s[S_SIDE], *run_id, "train", info->train, err)) < 0 ||
        (rc = insert_side(st, s[S_SIDE], *run_id, "infer", info->infer, err)) < 0 ||
        (rc = insert_rounds(st, s[S_ROUND], *run_id, plan, err)) < 0)
        goto out;
    if (info->prediction &&
        (rc = insert_prediction(st, s, *run_id, info->topo, info->prediction, info->step, err)) < 0)
        goto out;
    if ((rc = insert_description(st, s, *run_id, info, err)) < 0)
        goto out;
    if ((rc = exec(st, "COMMIT", err)) < 0)
        goto out;
    in_tx = false;
out:
    if (in_tx)
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    if (fk_off)
        sqlite3_exec(st->db, "PRAGMA foreign_keys=ON", NULL, NULL, NULL);
    for (int i = 0; i < S_COUNT; i++)
        sqlite3_finalize(s[i]);
    return rc;
}

/* Parses "[a, b, c]" into shape; returns the number of dims or -1. */
static int parse_shape(const char *text, int64_t *shape)
{
    int n = 0;
    const char *p = text;
    if (*p++ != '[')
        return -1;
    while (*p && *p != ']' && n < RF_MAX_DIMS) {
        char *end;
        long long v = strtoll(p, &end, 10);
        if (end == p)
            return -1;
        shape[n++] = v;
        p = end;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return *p == ']' ? n : -1;
}

static int enum_col(sqlite3_stmt *q, int col, int (*parse)(const char *, void *), void *out)
{
    const char *s = (const char *)sqlite3_column_text(q, col);
    return s && parse(s, out) == 0 ? 0 : -1;
}

static int p_dtype(const char *s, void *o)
{
    return rf_dtype_parse(s, o);
}
static int p_role(const char *s, void *o)
{
    return rf_role_parse(s, o);
}
static int p_class(const char *s, void *o)
{
    return rf_class_parse(s, o);
}
static int p_strategy(const char *s, void *o)
{
    return rf_strategy_parse(s, o);
}

static int load_side(struct rf_store *st, int64_t id, const char *name, struct rf_side *sd,
                     struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int rc;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT kind, gpus, first_gpu, tp, cp, pp, dp, ep, etp, edp, replicas,"
                           " fsdp, dtype, stage_layers, coalesce(domain_gpus, 0), span"
                           " FROM side WHERE run_id = ? AND side = ?",
                           -1, &q, NULL) != SQLITE_OK)
        return db_error(st, err, "side");
    sqlite3_bind_int64(q, 1, id);
    sqlite3_bind_text(q, 2, name, -1, SQLITE_STATIC);
    if (sqlite3_step(q) != SQLITE_ROW) {
        rc = rf_error_set(err, RF_EINVAL, "run %lld has no %s side (planned before schema 2?)",
                          (long long)id, name);
        goto out;
    }
    memset(sd, 0, sizeof(*sd));
    const char *kind = (const char *)sqlite3_column_text(q, 0);
    sd->kind = kind && strcmp(kind, "megatron") == 0 ? RF_SIDE_MEGATRON : RF_SIDE_VLLM;
    int64_t *v[] = {&sd->gpus, &sd->first_gpu, &sd->tp,  &sd->cp,  &sd->pp,
                    &sd->dp,   &sd->ep,        &sd->etp, &sd->edp, &sd->replicas};
    for (int i = 0; i < 10; i++)
        *v[i] = sqlite3_column_int64(q, 1 + i);
    sd->fsdp = sqlite3_column_int(q, 11) != 0;
    sd->domain_gpus = sqlite3_column_int64(q, 14);
    if (enum_col(q, 12, p_dtype, &sd->dtype) < 0 || sd->pp < 1) {
        rc = rf_error_set(err, RF_EINVAL, "run %lld: malformed %s side", (long long)id, name);
        goto out;
    }
    sd->stage_layers = calloc((size_t)sd->pp, sizeof(int));
    if (!sd->stage_layers) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    const char *p = (const char *)sqlite3_column_text(q, 13);
    int layers = 0;
    for (int64_t i = 0; i < sd->pp; i++) {
        char *end;
        sd->stage_layers[i] = p ? (int)strtol(p, &end, 10) : 0;
        layers += sd->stage_layers[i];
        p = p && *end == ',' ? end + 1 : NULL;
    }
    if ((rc = rf_side_init(sd, layers, err)) < 0)
        goto out;
    /* The stored span is what the planner used; one rebuilt otherwise would replay on other
     * GPUs. */
    if (sqlite3_column_type(q, 15) != SQLITE_NULL && sqlite3_column_int64(q, 15) != sd->place.span)
        rc = rf_error_set(
            err, RF_EINVAL, "run %lld: the %s side spans %lld GPUs, rebuilt it spans %lld",
            (long long)id, name, (long long)sqlite3_column_int64(q, 15), (long long)sd->place.span);
out:
    sqlite3_finalize(q);
    return rc;
}

/* The run's description, NULL when it was stored before schema 7. */
static int load_description(struct rf_store *st, int64_t id, char **out, struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int rc = 0;
    *out = NULL;
    if (sqlite3_prepare_v2(st->db, "SELECT scenario_json FROM run WHERE id = ?", -1, &q, NULL) !=
        SQLITE_OK)
        return db_error(st, err, "run.scenario_json");
    sqlite3_bind_int64(q, 1, id);
    if (sqlite3_step(q) == SQLITE_ROW && sqlite3_column_type(q, 0) != SQLITE_NULL &&
        !(*out = strdup((const char *)sqlite3_column_text(q, 0))))
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
    sqlite3_finalize(q);
    return rc;
}

/* Runs one query and hands each row to `row`; counts rows first to size arrays. */
static int load_rows(struct rf_store *st, const char *sql, int64_t id, void *ctx,
                     int (*row)(sqlite3_stmt *, void *, size_t), size_t *n, const char *what,
                     struct rf_error *err)
{
    sqlite3_stmt *q = NULL;
    int rc = 0, s;
    size_t i = 0;
    if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_error(st, err, what);
    sqlite3_bind_int64(q, 1, id);
    while ((s = sqlite3_step(q)) == SQLITE_ROW && i < *n) {
        if (sqlite3_column_int64(q, 0) != (int64_t)i) {
            rc =
                rf_error_set(err, RF_EINVAL, "run %lld: %s ids are not dense", (long long)id, what);
            goto out;
        }
        if ((rc = row(q, ctx, i++)) < 0) {
            rc = rf_error_set(err, RF_EINVAL, "run %lld: malformed %s %zu", (long long)id, what,
                              i - 1);
            goto out;
        }
    }
    if (s != SQLITE_ROW && s != SQLITE_DONE)
        rc = db_error(st, err, what);
    *n = i;
out:
    sqlite3_finalize(q);
    return rc;
}

static int row_tensor(sqlite3_stmt *q, void *ctx, size_t i)
{
    struct rf_plan *p = ctx;
    struct rf_tensor *t = &p->tensors[i];
    const char *name = (const char *)sqlite3_column_text(q, 1);
    t->name = strdup(name ? name : "");
    t->layer = sqlite3_column_int(q, 3);
    t->ndim = parse_shape((const char *)sqlite3_column_text(q, 5), t->shape);
    t->scale_of = sqlite3_column_type(q, 9) == SQLITE_NULL ? -1 : sqlite3_column_int(q, 9);
    if (!t->name || t->ndim < 1 || enum_col(q, 2, p_role, &t->role) < 0 ||
        enum_col(q, 4, p_class, &t->cls) < 0 || enum_col(q, 6, p_dtype, &t->dtype) < 0 ||
        enum_col(q, 7, p_dtype, &p->wire_dtype[i]) < 0 ||
        enum_col(q, 8, p_strategy, &p->tensor_strategy[i]) < 0)
        return -1;
    if (t->cls == RF_CLASS_EXPERT_COLUMN || t->cls == RF_CLASS_EXPERT_ROW)
        t->experts = t->shape[0];
    return 0;
}

static int row_box(sqlite3_stmt *q, void *ctx, size_t i)
{
    struct rf_plan *p = ctx;
    struct rf_plan_box *b = &p->boxes[i];
    b->tensor = sqlite3_column_int(q, 1);
    for (int d = 0; d < RF_MAX_DIMS; d++) {
        b->box.off[d] = sqlite3_column_int64(q, 2 + d);
        b->box.len[d] = sqlite3_column_int64(q, 6 + d);
    }
    return b->tensor >= 0 && (size_t)b->tensor < p->n_tensors ? 0 : -1;
}

static int row_transfer(sqlite3_stmt *q, void *ctx, size_t i)
{
    struct rf_plan *p = ctx;
    struct rf_transfer *t = &p->transfers[i];
    const char *phase = (const char *)sqlite3_column_text(q, 7);
    t->box = sqlite3_column_int(q, 1);
    t->src = sqlite3_column_int(q, 2);
    t->dst = sqlite3_column_int(q, 3);
    t->dst_count = sqlite3_column_int(q, 4);
    t->dst_stride = sqlite3_column_int(q, 5);
    t->bytes = sqlite3_column_int64(q, 6);
    t->phase = phase && strcmp(phase, "gather") == 0 ? RF_PHASE_GATHER : RF_PHASE_DELIVER;
    if (sqlite3_column_type(q, 8) == SQLITE_NULL)
        return -1; /* unscheduled */
    t->round = sqlite3_column_int(q, 8);
    t->after = sqlite3_column_type(q, 9) == SQLITE_NULL ? -1 : sqlite3_column_int(q, 9);
    t->hop = sqlite3_column_type(q, 10) == SQLITE_NULL ? 0 : sqlite3_column_int(q, 10);
    t->chain = sqlite3_column_int(q, 11) != 0;
    if (t->round + 1 > p->n_rounds)
        p->n_rounds = t->round + 1;
    return t->box >= 0 && (size_t)t->box < p->n_boxes && t->dst_count >= 1 ? 0 : -1;
}

static int row_collective(sqlite3_stmt *q, void *ctx, size_t i)
{
    struct rf_plan *p = ctx;
    struct rf_collective *c = &p->collectives[i];
    c->kind = RF_COLL_BROADCAST;
    c->tensor = sqlite3_column_int(q, 1);
    c->root = sqlite3_column_int(q, 2);
    c->first_gpu = sqlite3_column_int(q, 3);
    c->gpu_count = sqlite3_column_int(q, 4);
    c->gpu_stride = sqlite3_column_int(q, 5);
    c->bytes = sqlite3_column_int64(q, 6);
    if (sqlite3_column_type(q, 7) == SQLITE_NULL)
        return -1;
    c->round = sqlite3_column_int(q, 7);
    if (c->round + 1 > p->n_rounds)
        p->n_rounds = c->round + 1;
    return c->tensor >= 0 && (size_t)c->tensor < p->n_tensors ? 0 : -1;
}

static int count_rows(struct rf_store *st, const char *table, int64_t id, size_t *n,
                      struct rf_error *err)
{
    char sql[128];
    sqlite3_stmt *q = NULL;
    snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s WHERE run_id = ?", table);
    if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_error(st, err, table);
    sqlite3_bind_int64(q, 1, id);
    int rc = sqlite3_step(q) == SQLITE_ROW ? 0 : db_error(st, err, table);
    *n = (size_t)sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return rc;
}

int rf_store_load_run(struct rf_store *st, int64_t id, struct rf_stored_run *run,
                      struct rf_error *err)
{
    struct rf_plan *p = &run->plan;
    sqlite3_stmt *q = NULL;
    int rc;

    memset(run, 0, sizeof(*run));
    run->id = id;
    if (sqlite3_prepare_v2(st->db,
                           "SELECT model, strategy, staging_bytes, rounds, model_params,"
                           " model_bytes, chunk_bytes, relay_ring, relay_fanout, relay_depth,"
                           " net_channels_per_peer FROM run WHERE id = ?",
                           -1, &q, NULL) != SQLITE_OK) {
        rc = db_error(st, err, "run");
        goto out;
    }
    sqlite3_bind_int64(q, 1, id);
    if (sqlite3_step(q) != SQLITE_ROW) {
        rc = rf_error_set(err, RF_EINVAL, "no run %lld in this database", (long long)id);
        goto out;
    }
    if (sqlite3_column_type(q, 3) == SQLITE_NULL) {
        rc = rf_error_set(err, RF_EINVAL,
                          "run %lld has no schedule (planned before schema 2); plan it again",
                          (long long)id);
        goto out;
    }
    run->model = strdup((const char *)sqlite3_column_text(q, 0));
    if (!run->model || enum_col(q, 1, p_strategy, &p->strategy) < 0) {
        rc = rf_error_set(err, RF_EINVAL, "run %lld: malformed run row", (long long)id);
        goto out;
    }
    p->staging_bytes = sqlite3_column_int64(q, 2);
    p->model_params = sqlite3_column_int64(q, 4);
    p->model_bytes = sqlite3_column_int64(q, 5);
    /* Before schema 5 nothing relayed within a round: the chunk never applied. */
    p->chunk_bytes =
        sqlite3_column_type(q, 6) == SQLITE_NULL ? p->staging_bytes : sqlite3_column_int64(q, 6);
    p->relay.ring = sqlite3_column_int(q, 7) != 0;
    p->relay.fanout = sqlite3_column_type(q, 8) == SQLITE_NULL ? 1 : sqlite3_column_int(q, 8);
    p->relay.depth = sqlite3_column_int(q, 9);
    p->net_channels_per_peer = sqlite3_column_int(q, 10); /* NULL (before 5): 0, none given */
    sqlite3_finalize(q);
    q = NULL;

    if ((rc = load_description(st, id, &run->scenario_json, err)) < 0 ||
        (rc = load_side(st, id, "train", &run->train, err)) < 0 ||
        (rc = load_side(st, id, "infer", &run->infer, err)) < 0 ||
        (rc = count_rows(st, "tensor", id, &p->n_tensors, err)) < 0 ||
        (rc = count_rows(st, "box", id, &p->n_boxes, err)) < 0 ||
        (rc = count_rows(st, "transfer", id, &p->n_transfers, err)) < 0 ||
        (rc = count_rows(st, "collective", id, &p->n_collectives, err)) < 0)
        goto out;
    p->tensors = calloc(p->n_tensors + 1, sizeof(*p->tensors));
    p->wire_dtype = calloc(p->n_tensors + 1, sizeof(*p->wire_dtype));
    p->tensor_strategy = calloc(p->n_tensors + 1, sizeof(*p->tensor_strategy));
    p->boxes = calloc(p->n_boxes + 1, sizeof(*p->boxes));
    p->transfers = calloc(p->n_transfers + 1, sizeof(*p->transfers));
    p->collectives = calloc(p->n_collectives + 1, sizeof(*p->collectives));
    if (!p->tensors || !p->wire_dtype || !p->tensor_strategy || !p->boxes || !p->transfers ||
        !p->collectives) {
        rc = rf_error_set(err, RF_ENOMEM, "out of memory");
        goto out;
    }
    p->cap_boxes = p->n_boxes;
    p->cap_transfers = p->n_transfers;
    p->cap_collectives = p->n_collectives;
    if ((rc = load_rows(st,
                        "SELECT id, name, role, layer, class, shape, dtype, wire_dtype, strategy,"
                        " scale_of FROM tensor WHERE run_id = ? ORDER BY id",
                        id, p, row_tensor, &p->n_tensors, "tensor", err)) < 0 ||
        (rc = load_rows(st,
                        "SELECT id, tensor_id, off0, off1, off2, off3, len0, len1, len2, len3"
                        " FROM box WHERE run_id = ? ORDER BY id",
                        id, p, row_box, &p->n_boxes, "box", err)) < 0 ||
        (rc = load_rows(st,
                        "SELECT id, box_id, src_gpu, dst_gpu, dst_count, dst_stride, bytes,"
                        " phase, round, after_id, hop, chain FROM transfer WHERE run_id = ?"
                        " ORDER BY id",
                        id, p, row_transfer, &p->n_transfers, "transfer", err)) < 0 ||
        (rc = load_rows(st,
                        "SELECT id, tensor_id, root_gpu, first_gpu, gpu_count, gpu_stride, bytes,"
                        " round FROM collective WHERE run_id = ? ORDER BY id",
                        id, p, row_collective, &p->n_collectives, "collective", err)) < 0)
        goto out;
    rc = 0;
out:
    sqlite3_finalize(q);
    if (rc < 0)
        rf_stored_run_release(run);
    return rc;
}

void rf_stored_run_release(struct rf_stored_run *run)
{
    if (!run)
        return;
    free(run->model);
    free(run->scenario_json);
    rf_plan_release(&run->plan);
    rf_side_release(&run->train);
    rf_side_release(&run->infer);
    memset(run, 0, sizeof(*run));
}

/* Binds the columns every measurement statement shares, from parameter 1 on, in the order
 * of measurement_columns. */
static const char measurement_columns[] =
    "run_id, backend, world_size, iters, warmup, seconds, seconds_min, seconds_max,"
    " bytes_verified, errors, status, error_text, hosts, gpu_model, nccl_version, mpi_version,"
    " exec_config";
enum { MEASUREMENT_COLUMNS = 17 };

static void bind_seconds(sqlite3_stmt *q, int i, double v)
{
    if (v >= 0)
        sqlite3_bind_double(q, i, v);
    else
        sqlite3_bind_null(q, i);
}

static void bind_measurement(sqlite3_stmt *q, const struct rf_measurement *m)
{
    sqlite3_bind_int64(q, 1, m->run_id);
    bind_text(q, 2, m->backend);
    sqlite3_bind_int64(q, 3, m->world_size);
    sqlite3_bind_int64(q, 4, m->iters);
    sqlite3_bind_int64(q, 5, m->warmup);
    bind_seconds(q, 6, m->seconds);
    bind_seconds(q, 7, m->seconds_min);
    bind_seconds(q, 8, m->seconds_max);
    sqlite3_bind_int64(q, 9, m->bytes_verified);
    sqlite3_bind_int64(q, 10, m->errors);
    bind_text(q, 11, m->status);
    bind_text(q, 12, m->error_text);
    bind_text(q, 13, m->hosts);
    bind_text(q, 14, m->gpu_model);
    bind_text(q, 15, m->nccl_version);
    bind_text(q, 16, m->mpi_version);
    bind_text(q, 17, m->exec_config);
}

int rf_store_measurement_begin(struct rf_store *st, const struct rf_measurement *m, int64_t *id,
                               struct rf_error *err)
{
    char sql[512];
    sqlite3_stmt *q = NULL;
    int rc;
    snprintf(sql, sizeof(sql),
             "INSERT INTO measurement (%s) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
             measurement_columns);
    if (sqlite3_prepare_v2(st->db, sql, -1, &q, NULL) != SQLITE_OK)
        return db_error(st, err, "measurement");
    bind_measurement(q, m);
    /* One statement outside BEGIN is its own transaction. */
    if ((rc = step(st, q, err, "measurement")) == 0)
        *id = sqlite3_last_insert_rowid(st->db);
    sqlite3_finalize(q);
    return rc;
}

int rf_store_measurement_finish(struct rf_store *st, int64_t id, const struct rf_measurement *m,
                                struct rf_error *err)
{
    char sql[512];
    sqlite3_stmt *up = NULL, *ins = NULL;
    bool in_tx = false;
    int rc;

    snprintf(sql, sizeof(sql),
             "UPDATE measurement SET (%s) = (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?) WHERE id = ?",
             measurement_columns);
    if (sqlite3_prepare_v2(st->db, sql, -1, &up, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(st->db,
                           "INSERT OR REPLACE INTO measured_round (measurement_id, round, seconds)"
                           " VALUES (?,?,?)",
                           -1, &ins, NULL) != SQLITE_OK) {
        rc = db_error(st, err, "measurement");
        goto out;
    }
    if ((rc = exec(st, "BEGIN IMMEDIATE", err)) < 0)
        goto out;
    in_tx = true;
    bind_measurement(up, m);
    sqlite3_bind_int64(up, MEASUREMENT_COLUMNS + 1, id);
    if ((rc = step(st, up, err, "measurement")) < 0)
        goto out;
    if (sqlite3_changes(st->db) != 1) {
        rc = rf_error_set(err, RF_EINVAL, "no measurement %lld in this database", (long long)id);
        goto out;
    }
    for (int32_t r = 0; m->round_seconds && r < m->n_rounds; r++) {
        sqlite3_bind_int64(ins, 1, id);
        sqlite3_bind_int(ins, 2, r);
        sqlite3_bind_double(ins, 3, m->round_seconds[r]);
        if ((rc = step(st, ins, err, "measured_round")) < 0)
            goto out;
    }
    if ((rc = exec(st, "COMMIT", err)) < 0)
        goto out;
    in_tx = false;
out:
    if (in_tx)
        sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
    sqlite3_finalize(up);
    sqlite3_finalize(ins);
    return rc;
}
