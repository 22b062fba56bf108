-- A refit database written by schema version 1 (refit 0.1.0): sqlite3 .dump of one tiny run.
PRAGMA application_id = 1380271700;
PRAGMA user_version = 1;
PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE run (
  id INTEGER PRIMARY KEY,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  label TEXT,
  scenario TEXT,
  model TEXT NOT NULL,
  strategy TEXT NOT NULL,
  cluster_system TEXT,
  cluster_nodes INTEGER,
  train_gpus INTEGER NOT NULL, train_first_gpu INTEGER NOT NULL,
  train_layout TEXT NOT NULL, train_dtype TEXT NOT NULL,
  infer_gpus INTEGER NOT NULL, infer_first_gpu INTEGER NOT NULL,
  infer_layout TEXT NOT NULL, infer_dtype TEXT NOT NULL,
  model_params INTEGER NOT NULL, model_bytes INTEGER NOT NULL,
  payload_bytes INTEGER NOT NULL, moved_bytes INTEGER NOT NULL,
  logical_bytes INTEGER NOT NULL, local_bytes INTEGER NOT NULL,
  transfers INTEGER NOT NULL, collectives INTEGER NOT NULL,
  plan_seconds REAL
);
INSERT INTO run VALUES(1,'2026-11-30T12:16:52Z',NULL,'/tmp/tiny-scen.lua','tiny','reshard','dgx-h100',1,2,0,'tp2 cp1 pp1 dp1 ep1 etp1','bf16',2,2,'tp1 pp1 dp1 ep1 x2 replicas','bf16',95040,190080,380160,380160,380160,0,74,0,0.0031406809998770768288);
CREATE TABLE tensor (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  id INTEGER NOT NULL,
  name TEXT NOT NULL, role TEXT NOT NULL, layer INTEGER NOT NULL, class TEXT NOT NULL,
  shape TEXT NOT NULL, numel INTEGER NOT NULL,
  dtype TEXT NOT NULL, wire_dtype TEXT NOT NULL, wire_bytes INTEGER NOT NULL,
  strategy TEXT NOT NULL, scale_of INTEGER,
  PRIMARY KEY (run_id, id)
) WITHOUT ROWID;
INSERT INTO tensor VALUES(1,0,'model.embed_tokens.weight','embedding',-1,'vocab','[100, 64]',6400,'bf16','bf16',12800,'reshard',NULL);
INSERT INTO tensor VALUES(1,1,'model.layers.0.self_attn.q_proj.weight','attention',0,'column','[64, 64]',4096,'bf16','bf16',8192,'reshard',NULL);
INSERT INTO tensor VALUES(1,2,'model.layers.0.self_attn.k_proj.weight','attention',0,'column','[64, 64]',4096,'bf16','bf16',8192,'reshard',NULL);
INSERT INTO tensor VALUES(1,3,'model.layers.0.self_attn.v_proj.weight','attention',0,'column','[64, 64]',4096,'bf16','bf16',8192,'reshard',NULL);
INSERT INTO tensor VALUES(1,4,'model.layers.0.self_attn.o_proj.weight','attention',0,'row','[64, 64]',4096,'bf16','bf16',8192,'reshard',NULL);
INSERT INTO tensor VALUES(1,5,'model.layers.0.mlp.gate_proj.weight','dense_ffn',0,'column','[128, 64]',8192,'bf16','bf16',16384,'reshard',NULL);
INSERT INTO tensor VALUES(1,6,'model.layers.0.mlp.up_proj.weight','dense_ffn',0,'column','[128, 64]',8192,'bf16','bf16',16384,'reshard',NULL);
INSERT INTO tensor VALUES(1,7,'model.layers.0.mlp.down_proj.weight','dense_ffn',0,'row','[64, 128]',8192,'bf16','bf16',16384,'reshard',NULL);
INSERT INTO tensor VALUES(1,8,'model.layers.0.input_layernorm.weight','norm',0,'replicated','[64]',64,'bf16','bf16',128,'reshard',NULL);
INSERT INTO tensor VALUES(1,9,'model.layers.0.post_attention_layernorm.weight','norm',0,'replicated','[64]',64,'bf16','bf16',128,'reshard',NULL);
INSERT INTO tensor VALUES(1,10,'model.layers.1.self_attn.q_proj.weight','attention',1,'column','[64, 64]',4096,'bf16','bf16',8192,'reshard',NULL);
INSERT INTO tensor VALUES(1,11,'model.layers.1.self_attn.k_proj.weight','attention',1,'column','[64, 64]',4096,'bf16','bf16',8192,'reshard',NULL);
INSERT INTO tensor VALUES(1,12,'model.layers.1.self_attn.v_proj.weight','attention',1,'column','[64, 64]',4096,'bf16','bf16',8192,'reshard',NULL);
INSERT INTO tensor VALUES(1,13,'model.layers.1.self_attn.o_proj.weight','attention',1,'row','[64, 64]',4096,'bf16','bf16',8192,'reshard',NULL);
INSERT INTO tensor VALUES(1,14,'model.layers.1.mlp.gate_proj.weight','dense_ffn',1,'column','[128, 64]',8192,'bf16','bf16',16384,'reshard',NULL);
INSERT INTO tensor VALUES(1,15,'model.layers.1.mlp.up_proj.weight','dense_ffn',1,'column','[128, 64]',8192,'bf16','bf16',16384,'reshard',NULL);
INSERT INTO tensor VALUES(1,16,'model.layers.1.mlp.down_proj.weight','dense_ffn',1,'row','[64, 128]',8192,'bf16','bf16',16384,'reshard',NULL);
INSERT INTO tensor VALUES(1,17,'model.layers.1.input_layernorm.weight','norm',1,'replicated','[64]',64,'bf16','bf16',128,'reshard',NULL);
INSERT INTO tensor VALUES(1,18,'model.layers.1.post_attention_layernorm.weight','norm',1,'replicated','[64]',64,'bf16','bf16',128,'reshard',NULL);
INSERT INTO tensor VALUES(1,19,'model.norm.weight','norm',2,'replicated','[64]',64,'bf16','bf16',128,'reshard',NULL);
INSERT INTO tensor VALUES(1,20,'lm_head.weight','lm_head',2,'vocab','[100, 64]',6400,'bf16','bf16',12800,'reshard',NULL);
CREATE TABLE box (
  run_id INTEGER NOT NULL, id INTEGER NOT NULL, tensor_id INTEGER NOT NULL,
  off0 INTEGER NOT NULL, off1 INTEGER NOT NULL, off2 INTEGER NOT NULL,
  off3 INTEGER NOT NULL,
  len0 INTEGER NOT NULL, len1 INTEGER NOT NULL, len2 INTEGER NOT NULL,
  len3 INTEGER NOT NULL,
  numel INTEGER NOT NULL,
  PRIMARY KEY (run_id, id),
  FOREIGN KEY (run_id, tensor_id) REFERENCES tensor(run_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO box VALUES(1,0,0,0,0,0,0,50,64,1,1,3200);
INSERT INTO box VALUES(1,1,0,50,0,0,0,50,64,1,1,3200);
INSERT INTO box VALUES(1,2,1,0,0,0,0,32,64,1,1,2048);
INSERT INTO box VALUES(1,3,1,32,0,0,0,32,64,1,1,2048);
INSERT INTO box VALUES(1,4,2,0,0,0,0,32,64,1,1,2048);
INSERT INTO box VALUES(1,5,2,32,0,0,0,32,64,1,1,2048);
INSERT INTO box VALUES(1,6,3,0,0,0,0,32,64,1,1,2048);
INSERT INTO box VALUES(1,7,3,32,0,0,0,32,64,1,1,2048);
INSERT INTO box VALUES(1,8,4,0,0,0,0,64,32,1,1,2048);
INSERT INTO box VALUES(1,9,4,0,32,0,0,64,32,1,1,2048);
INSERT INTO box VALUES(1,10,5,0,0,0,0,64,64,1,1,4096);
INSERT INTO box VALUES(1,11,5,64,0,0,0,64,64,1,1,4096);
INSERT INTO box VALUES(1,12,6,0,0,0,0,64,64,1,1,4096);
INSERT INTO box VALUES(1,13,6,64,0,0,0,64,64,1,1,4096);
INSERT INTO box VALUES(1,14,7,0,0,0,0,64,64,1,1,4096);
INSERT INTO box VALUES(1,15,7,0,64,0,0,64,64,1,1,4096);
INSERT INTO box VALUES(1,16,8,0,0,0,0,64,1,1,1,64);
INSERT INTO box VALUES(1,17,9,0,0,0,0,64,1,1,1,64);
INSERT INTO box VALUES(1,18,10,0,0,0,0,32,64,1,1,2048);
INSERT INTO box VALUES(1,19,10,32,0,0,0,32,64,1,1,2048);
INSERT INTO box VALUES(1,20,11,0,0,0,0,32,64,1,1,2048);
INSERT INTO box VALUES(1,21,11,32,0,0,0,32,64,1,1,2048);
INSERT INTO box VALUES(1,22,12,0,0,0,0,32,64,1,1,2048);
INSERT INTO box VALUES(1,23,12,32,0,0,0,32,64,1,1,2048);
INSERT INTO box VALUES(1,24,13,0,0,0,0,64,32,1,1,2048);
INSERT INTO box VALUES(1,25,13,0,32,0,0,64,32,1,1,2048);
INSERT INTO box VALUES(1,26,14,0,0,0,0,64,64,1,1,4096);
INSERT INTO box VALUES(1,27,14,64,0,0,0,64,64,1,1,4096);
INSERT INTO box VALUES(1,28,15,0,0,0,0,64,64,1,1,4096);
INSERT INTO box VALUES(1,29,15,64,0,0,0,64,64,1,1,4096);
INSERT INTO box VALUES(1,30,16,0,0,0,0,64,64,1,1,4096);
INSERT INTO box VALUES(1,31,16,0,64,0,0,64,64,1,1,4096);
INSERT INTO box VALUES(1,32,17,0,0,0,0,64,1,1,1,64);
INSERT INTO box VALUES(1,33,18,0,0,0,0,64,1,1,1,64);
INSERT INTO box VALUES(1,34,19,0,0,0,0,64,1,1,1,64);
INSERT INTO box VALUES(1,35,20,0,0,0,0,50,64,1,1,3200);
INSERT INTO box VALUES(1,36,20,50,0,0,0,50,64,1,1,3200);
CREATE TABLE transfer (
  run_id INTEGER NOT NULL, id INTEGER NOT NULL, box_id INTEGER NOT NULL,
  src_gpu INTEGER NOT NULL, dst_gpu INTEGER NOT NULL,
  dst_count INTEGER NOT NULL CHECK (dst_count >= 1), dst_stride INTEGER NOT NULL,
  phase TEXT NOT NULL CHECK (phase IN ('gather', 'deliver')),
  bytes INTEGER NOT NULL,
  PRIMARY KEY (run_id, id),
  FOREIGN KEY (run_id, box_id) REFERENCES box(run_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO transfer VALUES(1,0,0,0,2,2,1,'deliver',6400);
INSERT INTO transfer VALUES(1,1,1,1,2,2,1,'deliver',6400);
INSERT INTO transfer VALUES(1,2,2,0,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,3,3,1,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,4,4,0,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,5,5,1,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,6,6,0,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,7,7,1,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,8,8,0,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,9,9,1,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,10,10,0,2,2,1,'deliver',8192);
INSERT INTO transfer VALUES(1,11,11,1,2,2,1,'deliver',8192);
INSERT INTO transfer VALUES(1,12,12,0,2,2,1,'deliver',8192);
INSERT INTO transfer VALUES(1,13,13,1,2,2,1,'deliver',8192);
INSERT INTO transfer VALUES(1,14,14,0,2,2,1,'deliver',8192);
INSERT INTO transfer VALUES(1,15,15,1,2,2,1,'deliver',8192);
INSERT INTO transfer VALUES(1,16,16,0,2,1,0,'deliver',128);
INSERT INTO transfer VALUES(1,17,16,1,3,1,0,'deliver',128);
INSERT INTO transfer VALUES(1,18,17,0,2,1,0,'deliver',128);
INSERT INTO transfer VALUES(1,19,17,1,3,1,0,'deliver',128);
INSERT INTO transfer VALUES(1,20,18,0,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,21,19,1,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,22,20,0,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,23,21,1,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,24,22,0,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,25,23,1,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,26,24,0,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,27,25,1,2,2,1,'deliver',4096);
INSERT INTO transfer VALUES(1,28,26,0,2,2,1,'deliver',8192);
INSERT INTO transfer VALUES(1,29,27,1,2,2,1,'deliver',8192);
INSERT INTO transfer VALUES(1,30,28,0,2,2,1,'deliver',8192);
INSERT INTO transfer VALUES(1,31,29,1,2,2,1,'deliver',8192);
INSERT INTO transfer VALUES(1,32,30,0,2,2,1,'deliver',8192);
INSERT INTO transfer VALUES(1,33,31,1,2,2,1,'deliver',8192);
INSERT INTO transfer VALUES(1,34,32,0,2,1,0,'deliver',128);
INSERT INTO transfer VALUES(1,35,32,1,3,1,0,'deliver',128);
INSERT INTO transfer VALUES(1,36,33,0,2,1,0,'deliver',128);
INSERT INTO transfer VALUES(1,37,33,1,3,1,0,'deliver',128);
INSERT INTO transfer VALUES(1,38,34,0,2,1,0,'deliver',128);
INSERT INTO transfer VALUES(1,39,34,1,3,1,0,'deliver',128);
INSERT INTO transfer VALUES(1,40,35,0,2,2,1,'deliver',6400);
INSERT INTO transfer VALUES(1,41,36,1,2,2,1,'deliver',6400);
CREATE TABLE collective (
  run_id INTEGER NOT NULL, id INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('broadcast')),
  tensor_id INTEGER NOT NULL, root_gpu INTEGER NOT NULL,
  first_gpu INTEGER NOT NULL, gpu_count INTEGER NOT NULL, gpu_stride INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (run_id, id),
  FOREIGN KEY (run_id, tensor_id) REFERENCES tensor(run_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
CREATE TABLE role_summary (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  role TEXT NOT NULL, tensors INTEGER NOT NULL, params INTEGER NOT NULL,
  payload_bytes INTEGER NOT NULL, moved_bytes INTEGER NOT NULL,
  logical_bytes INTEGER NOT NULL, local_bytes INTEGER NOT NULL,
  transfers INTEGER NOT NULL, collectives INTEGER NOT NULL,
  PRIMARY KEY (run_id, role)
) WITHOUT ROWID;
INSERT INTO role_summary VALUES(1,'attention',8,32768,131072,131072,131072,0,32,0);
INSERT INTO role_summary VALUES(1,'dense_ffn',6,49152,196608,196608,196608,0,24,0);
INSERT INTO role_summary VALUES(1,'embedding',1,6400,25600,25600,25600,0,4,0);
INSERT INTO role_summary VALUES(1,'lm_head',1,6400,25600,25600,25600,0,4,0);
INSERT INTO role_summary VALUES(1,'norm',5,320,1280,1280,1280,0,10,0);
CREATE VIEW transfer_each AS
WITH RECURSIVE k(run_id, transfer_id, i) AS (
  SELECT run_id, id, 0 FROM transfer
  UNION ALL
  SELECT k.run_id, k.transfer_id, k.i + 1 FROM k
  JOIN transfer t ON t.run_id = k.run_id AND t.id = k.transfer_id
  WHERE k.i + 1 < t.dst_count)
SELECT t.run_id, t.id AS transfer_id, tn.id AS tensor_id, tn.name AS tensor, t.phase,
  t.src_gpu, t.dst_gpu + k.i * t.dst_stride AS dst_gpu,
  b.off0, b.off1, b.off2, b.off3, b.len0, b.len1, b.len2, b.len3, t.bytes
FROM k JOIN transfer t ON t.run_id = k.run_id AND t.id = k.transfer_id
JOIN box b ON b.run_id = t.run_id AND b.id = t.box_id
JOIN tensor tn ON tn.run_id = b.run_id AND tn.id = b.tensor_id;
COMMIT;
