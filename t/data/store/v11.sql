-- A refit database written by schema version 11 (refit at 2653b6b): sqlite3 .dump of
-- t/data/exec/llama-pair.lua simulated and replayed three times by refit-exec --backend mpi
-- --check on 2 ranks, the second measurement then deleted (ids 1 and 3 remain, each with
-- its rounds), then t/data/framework/nemo-rl.lua simulated under the nemo-rl profile (run 2,
-- 4 step phases).
PRAGMA application_id = 1380271700;
PRAGMA user_version = 11;
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
, staging_bytes INTEGER, rounds INTEGER, chunk_bytes INTEGER, relay_ring INTEGER, relay_fanout INTEGER, relay_depth INTEGER, net_channels_per_peer INTEGER, scenario_json TEXT, stored TEXT NOT NULL DEFAULT 'full'
  CHECK (stored IN ('full', 'summary')), study_id INTEGER REFERENCES study(id));
INSERT INTO run VALUES(1,'2026-12-05T02:46:12Z',NULL,'t/data/exec/llama-pair.lua','tiny-llama','reshard','dgx-h100',1,1,0,'tp1 cp1 pp1 dp1 ep1 etp1','bf16',1,1,'tp1 pp1 dp1 ep1 x1 replicas','bf16',4327680,8655360,8655360,8655360,8655360,0,39,0,0.0024361830000998452305,1000000,7,1000000,1,1,0,4,'{"allow_overcommit":false,"chunk_bytes":1000000,"cluster":{"calibration":{"bucket_overhead_us":50.0,"channel_gbps":14.0,"memcpy_gbps":1340.0,"message_latency_us":6.0,"net_channels_per_peer":0,"net_chunk_kib":128,"nic_efficiency":0.96,"nvl_channels_per_peer":32,"nvl_chunk_kib":512,"nvlink_efficiency":0.82,"p2p_channels":32,"quant_gbps":1340.0,"streams":2,"tensor_overhead_us":10.0},"fabric":{"nodes_per_leaf":32,"oversubscription":1.0,"pxn":true,"switch_latency_us":0.5},"gpus_per_node":8,"hbm_gb":80.0,"name":"dgx-h100","nic":{"gbps":50.0,"latency_us":2.2,"per_node":8},"nodes":1,"nvlink":{"domain_gpus":8,"gbps":450.0,"latency_us":0.6},"pcie":{"gbps":64.0},"source":"/tmp/old11/b/../models/clusters/dgx-h100.lua"},"cluster_preset":{},"infer":{"domain_gpus":8,"dp":1,"dtype":"bf16","engines_per_domain":1,"ep":1,"first_gpu":1,"gpu_memory_utilization":0.9,"gpus":1,"kind":"vllm","layout":"tp1 pp1 dp1 ep1 x1 replicas","placement":"domain","pp":1,"replicas":1,"span":1,"stage_layers":[4],"tp":1},"model":{"bytes":8655360,"experts":0,"experts_per_token":0,"family":"llama","layers":4,"name":"tiny-llama","params":4327680,"source":"t/data/exec/tiny-llama.lua","tensors":39},"relay":{"depth":0,"fanout":1,"ring":true},"source":"t/data/exec/llama-pair.lua","sources":"balanced","staging_bytes":1000000,"strategy":"reshard","tensor_strategies":{"attention":{"reshard":16},"dense_ffn":{"reshard":12},"embedding":{"reshard":1},"lm_head":{"reshard":1},"norm":{"reshard":9}},"train":{"cp":1,"distributed_optimizer":true,"dp":1,"dtype":"bf16","edp":1,"ep":1,"etp":1,"first_gpu":0,"fsdp":false,"gpus":1,"kind":"megatron","layout":"tp1 cp1 pp1 dp1 ep1 etp1","pp":1,"stage_layers":[4],"tp":1},"version":1}','full',NULL);
INSERT INTO run VALUES(2,'2026-12-05T02:46:13Z',NULL,'t/data/framework/nemo-rl.lua','tiny-llama','broadcast','dgx-h100',2,8,0,'tp2 cp1 pp1 dp4 ep1 etp1','bf16',8,8,'tp4 pp1 dp1 ep1 x2 replicas','bf16',4327680,8655360,69242880,134155776,17310720,4329984,69,39,0.0032447809999212040565,1600000000,2,4194304,1,1,0,4,'{"allow_overcommit":false,"chunk_bytes":4194304,"cluster":{"calibration":{"bucket_overhead_us":50.0,"channel_gbps":14.0,"memcpy_gbps":1340.0,"message_latency_us":6.0,"net_channels_per_peer":0,"net_chunk_kib":128,"nic_efficiency":0.96,"nvl_channels_per_peer":32,"nvl_chunk_kib":512,"nvlink_efficiency":0.82,"p2p_channels":32,"quant_gbps":1340.0,"streams":2,"tensor_overhead_us":10.0},"fabric":{"nodes_per_leaf":32,"oversubscription":1.0,"pxn":true,"switch_latency_us":0.5},"gpus_per_node":8,"hbm_gb":80.0,"name":"dgx-h100","nic":{"gbps":50.0,"latency_us":2.2,"per_node":8},"nodes":2,"nvlink":{"domain_gpus":8,"gbps":450.0,"latency_us":0.6},"pcie":{"gbps":64.0},"source":"/tmp/old11/b/../models/clusters/dgx-h100.lua"},"cluster_preset":{"nodes":1},"framework":{"broadcast":{"bucket":{"bytes":0,"hbm_fraction":0.02,"max_bytes":5368709120},"buffers":2,"communicator":"all","export_calls":1.0,"gather":"export","load_calls":1.0,"pack_copy":true,"per_tensor":false,"quantize":"receiver_full","root":"first","wait_load":false},"finalize_s":0.0,"name":"nemo-rl","reshard":{"calls":1.0,"fused_copy":true,"misc_after_bulk":true,"plan":"hierarchical","stack_experts":true,"stage_groups":2},"source":"/tmp/old11/b/../models/frameworks/nemo-rl.lua","strategies":["broadcast","hybrid"]},"infer":{"domain_gpus":8,"dp":1,"dtype":"bf16","engines_per_domain":1,"ep":1,"first_gpu":8,"gpu_memory_utilization":0.9,"gpus":8,"kind":"vllm","layout":"tp4 pp1 dp1 ep1 x2 replicas","placement":"domain","pp":1,"replicas":2,"span":8,"stage_layers":[4],"tp":4},"model":{"bytes":8655360,"experts":0,"experts_per_token":0,"family":"llama","layers":4,"name":"tiny-llama","params":4327680,"source":"t/data/framework/../exec/tiny-llama.lua","tensors":39},"relay":{"depth":0,"fanout":1,"ring":true},"source":"t/data/framework/nemo-rl.lua","sources":"balanced","staging_bytes":1600000000,"strategy":"broadcast","tensor_strategies":{"attention":{"broadcast":16},"dense_ffn":{"broadcast":12},"embedding":{"broadcast":1},"lm_head":{"broadcast":1},"norm":{"broadcast":9}},"train":{"cp":1,"distributed_optimizer":true,"dp":4,"dtype":"bf16","edp":8,"ep":1,"etp":1,"first_gpu":0,"fsdp":false,"gpus":8,"kind":"megatron","layout":"tp2 cp1 pp1 dp4 ep1 etp1","pp":1,"stage_layers":[4],"tp":2},"version":1}','full',NULL);
CREATE TABLE tensor (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  id INTEGER NOT NULL,
  name TEXT NOT NULL, role TEXT NOT NULL, layer INTEGER NOT NULL, class TEXT NOT NULL,
  shape TEXT NOT NULL, numel INTEGER NOT NULL,
  dtype TEXT NOT NULL, wire_dtype TEXT NOT NULL, wire_bytes INTEGER NOT NULL,
  strategy TEXT NOT NULL, scale_of INTEGER,
  PRIMARY KEY (run_id, id)
) WITHOUT ROWID;
INSERT INTO tensor VALUES(1,0,'model.embed_tokens.weight','embedding',-1,'vocab','[4096, 256]',1048576,'bf16','bf16',2097152,'reshard',NULL);
INSERT INTO tensor VALUES(1,1,'model.layers.0.self_attn.q_proj.weight','attention',0,'column','[256, 256]',65536,'bf16','bf16',131072,'reshard',NULL);
INSERT INTO tensor VALUES(1,2,'model.layers.0.self_attn.k_proj.weight','attention',0,'column','[64, 256]',16384,'bf16','bf16',32768,'reshard',NULL);
INSERT INTO tensor VALUES(1,3,'model.layers.0.self_attn.v_proj.weight','attention',0,'column','[64, 256]',16384,'bf16','bf16',32768,'reshard',NULL);
INSERT INTO tensor VALUES(1,4,'model.layers.0.self_attn.o_proj.weight','attention',0,'row','[256, 256]',65536,'bf16','bf16',131072,'reshard',NULL);
INSERT INTO tensor VALUES(1,5,'model.layers.0.mlp.gate_proj.weight','dense_ffn',0,'column','[512, 256]',131072,'bf16','bf16',262144,'reshard',NULL);
INSERT INTO tensor VALUES(1,6,'model.layers.0.mlp.up_proj.weight','dense_ffn',0,'column','[512, 256]',131072,'bf16','bf16',262144,'reshard',NULL);
INSERT INTO tensor VALUES(1,7,'model.layers.0.mlp.down_proj.weight','dense_ffn',0,'row','[256, 512]',131072,'bf16','bf16',262144,'reshard',NULL);
INSERT INTO tensor VALUES(1,8,'model.layers.0.input_layernorm.weight','norm',0,'replicated','[256]',256,'bf16','bf16',512,'reshard',NULL);
INSERT INTO tensor VALUES(1,9,'model.layers.0.post_attention_layernorm.weight','norm',0,'replicated','[256]',256,'bf16','bf16',512,'reshard',NULL);
INSERT INTO tensor VALUES(1,10,'model.layers.1.self_attn.q_proj.weight','attention',1,'column','[256, 256]',65536,'bf16','bf16',131072,'reshard',NULL);
INSERT INTO tensor VALUES(1,11,'model.layers.1.self_attn.k_proj.weight','attention',1,'column','[64, 256]',16384,'bf16','bf16',32768,'reshard',NULL);
INSERT INTO tensor VALUES(1,12,'model.layers.1.self_attn.v_proj.weight','attention',1,'column','[64, 256]',16384,'bf16','bf16',32768,'reshard',NULL);
INSERT INTO tensor VALUES(1,13,'model.layers.1.self_attn.o_proj.weight','attention',1,'row','[256, 256]',65536,'bf16','bf16',131072,'reshard',NULL);
INSERT INTO tensor VALUES(1,14,'model.layers.1.mlp.gate_proj.weight','dense_ffn',1,'column','[512, 256]',131072,'bf16','bf16',262144,'reshard',NULL);
INSERT INTO tensor VALUES(1,15,'model.layers.1.mlp.up_proj.weight','dense_ffn',1,'column','[512, 256]',131072,'bf16','bf16',262144,'reshard',NULL);
INSERT INTO tensor VALUES(1,16,'model.layers.1.mlp.down_proj.weight','dense_ffn',1,'row','[256, 512]',131072,'bf16','bf16',262144,'reshard',NULL);
INSERT INTO tensor VALUES(1,17,'model.layers.1.input_layernorm.weight','norm',1,'replicated','[256]',256,'bf16','bf16',512,'reshard',NULL);
INSERT INTO tensor VALUES(1,18,'model.layers.1.post_attention_layernorm.weight','norm',1,'replicated','[256]',256,'bf16','bf16',512,'reshard',NULL);
INSERT INTO tensor VALUES(1,19,'model.layers.2.self_attn.q_proj.weight','attention',2,'column','[256, 256]',65536,'bf16','bf16',131072,'reshard',NULL);
INSERT INTO tensor VALUES(1,20,'model.layers.2.self_attn.k_proj.weight','attention',2,'column','[64, 256]',16384,'bf16','bf16',32768,'reshard',NULL);
INSERT INTO tensor VALUES(1,21,'model.layers.2.self_attn.v_proj.weight','attention',2,'column','[64, 256]',16384,'bf16','bf16',32768,'reshard',NULL);
INSERT INTO tensor VALUES(1,22,'model.layers.2.self_attn.o_proj.weight','attention',2,'row','[256, 256]',65536,'bf16','bf16',131072,'reshard',NULL);
INSERT INTO tensor VALUES(1,23,'model.layers.2.mlp.gate_proj.weight','dense_ffn',2,'column','[512, 256]',131072,'bf16','bf16',262144,'reshard',NULL);
INSERT INTO tensor VALUES(1,24,'model.layers.2.mlp.up_proj.weight','dense_ffn',2,'column','[512, 256]',131072,'bf16','bf16',262144,'reshard',NULL);
INSERT INTO tensor VALUES(1,25,'model.layers.2.mlp.down_proj.weight','dense_ffn',2,'row','[256, 512]',131072,'bf16','bf16',262144,'reshard',NULL);
INSERT INTO tensor VALUES(1,26,'model.layers.2.input_layernorm.weight','norm',2,'replicated','[256]',256,'bf16','bf16',512,'reshard',NULL);
INSERT INTO tensor VALUES(1,27,'model.layers.2.post_attention_layernorm.weight','norm',2,'replicated','[256]',256,'bf16','bf16',512,'reshard',NULL);
INSERT INTO tensor VALUES(1,28,'model.layers.3.self_attn.q_proj.weight','attention',3,'column','[256, 256]',65536,'bf16','bf16',131072,'reshard',NULL);
INSERT INTO tensor VALUES(1,29,'model.layers.3.self_attn.k_proj.weight','attention',3,'column','[64, 256]',16384,'bf16','bf16',32768,'reshard',NULL);
INSERT INTO tensor VALUES(1,30,'model.layers.3.self_attn.v_proj.weight','attention',3,'column','[64, 256]',16384,'bf16','bf16',32768,'reshard',NULL);
INSERT INTO tensor VALUES(1,31,'model.layers.3.self_attn.o_proj.weight','attention',3,'row','[256, 256]',65536,'bf16','bf16',131072,'reshard',NULL);
INSERT INTO tensor VALUES(1,32,'model.layers.3.mlp.gate_proj.weight','dense_ffn',3,'column','[512, 256]',131072,'bf16','bf16',262144,'reshard',NULL);
INSERT INTO tensor VALUES(1,33,'model.layers.3.mlp.up_proj.weight','dense_ffn',3,'column','[512, 256]',131072,'bf16','bf16',262144,'reshard',NULL);
INSERT INTO tensor VALUES(1,34,'model.layers.3.mlp.down_proj.weight','dense_ffn',3,'row','[256, 512]',131072,'bf16','bf16',262144,'reshard',NULL);
INSERT INTO tensor VALUES(1,35,'model.layers.3.input_layernorm.weight','norm',3,'replicated','[256]',256,'bf16','bf16',512,'reshard',NULL);
INSERT INTO tensor VALUES(1,36,'model.layers.3.post_attention_layernorm.weight','norm',3,'replicated','[256]',256,'bf16','bf16',512,'reshard',NULL);
INSERT INTO tensor VALUES(1,37,'model.norm.weight','norm',4,'replicated','[256]',256,'bf16','bf16',512,'reshard',NULL);
INSERT INTO tensor VALUES(1,38,'lm_head.weight','lm_head',4,'vocab','[4096, 256]',1048576,'bf16','bf16',2097152,'reshard',NULL);
INSERT INTO tensor VALUES(2,0,'model.embed_tokens.weight','embedding',-1,'vocab','[4096, 256]',1048576,'bf16','bf16',2097152,'broadcast',NULL);
INSERT INTO tensor VALUES(2,1,'model.layers.0.self_attn.q_proj.weight','attention',0,'column','[256, 256]',65536,'bf16','bf16',131072,'broadcast',NULL);
INSERT INTO tensor VALUES(2,2,'model.layers.0.self_attn.k_proj.weight','attention',0,'column','[64, 256]',16384,'bf16','bf16',32768,'broadcast',NULL);
INSERT INTO tensor VALUES(2,3,'model.layers.0.self_attn.v_proj.weight','attention',0,'column','[64, 256]',16384,'bf16','bf16',32768,'broadcast',NULL);
INSERT INTO tensor VALUES(2,4,'model.layers.0.self_attn.o_proj.weight','attention',0,'row','[256, 256]',65536,'bf16','bf16',131072,'broadcast',NULL);
INSERT INTO tensor VALUES(2,5,'model.layers.0.mlp.gate_proj.weight','dense_ffn',0,'column','[512, 256]',131072,'bf16','bf16',262144,'broadcast',NULL);
INSERT INTO tensor VALUES(2,6,'model.layers.0.mlp.up_proj.weight','dense_ffn',0,'column','[512, 256]',131072,'bf16','bf16',262144,'broadcast',NULL);
INSERT INTO tensor VALUES(2,7,'model.layers.0.mlp.down_proj.weight','dense_ffn',0,'row','[256, 512]',131072,'bf16','bf16',262144,'broadcast',NULL);
INSERT INTO tensor VALUES(2,8,'model.layers.0.input_layernorm.weight','norm',0,'replicated','[256]',256,'bf16','bf16',512,'broadcast',NULL);
INSERT INTO tensor VALUES(2,9,'model.layers.0.post_attention_layernorm.weight','norm',0,'replicated','[256]',256,'bf16','bf16',512,'broadcast',NULL);
INSERT INTO tensor VALUES(2,10,'model.layers.1.self_attn.q_proj.weight','attention',1,'column','[256, 256]',65536,'bf16','bf16',131072,'broadcast',NULL);
INSERT INTO tensor VALUES(2,11,'model.layers.1.self_attn.k_proj.weight','attention',1,'column','[64, 256]',16384,'bf16','bf16',32768,'broadcast',NULL);
INSERT INTO tensor VALUES(2,12,'model.layers.1.self_attn.v_proj.weight','attention',1,'column','[64, 256]',16384,'bf16','bf16',32768,'broadcast',NULL);
INSERT INTO tensor VALUES(2,13,'model.layers.1.self_attn.o_proj.weight','attention',1,'row','[256, 256]',65536,'bf16','bf16',131072,'broadcast',NULL);
INSERT INTO tensor VALUES(2,14,'model.layers.1.mlp.gate_proj.weight','dense_ffn',1,'column','[512, 256]',131072,'bf16','bf16',262144,'broadcast',NULL);
INSERT INTO tensor VALUES(2,15,'model.layers.1.mlp.up_proj.weight','dense_ffn',1,'column','[512, 256]',131072,'bf16','bf16',262144,'broadcast',NULL);
INSERT INTO tensor VALUES(2,16,'model.layers.1.mlp.down_proj.weight','dense_ffn',1,'row','[256, 512]',131072,'bf16','bf16',262144,'broadcast',NULL);
INSERT INTO tensor VALUES(2,17,'model.layers.1.input_layernorm.weight','norm',1,'replicated','[256]',256,'bf16','bf16',512,'broadcast',NULL);
INSERT INTO tensor VALUES(2,18,'model.layers.1.post_attention_layernorm.weight','norm',1,'replicated','[256]',256,'bf16','bf16',512,'broadcast',NULL);
INSERT INTO tensor VALUES(2,19,'model.layers.2.self_attn.q_proj.weight','attention',2,'column','[256, 256]',65536,'bf16','bf16',131072,'broadcast',NULL);
INSERT INTO tensor VALUES(2,20,'model.layers.2.self_attn.k_proj.weight','attention',2,'column','[64, 256]',16384,'bf16','bf16',32768,'broadcast',NULL);
INSERT INTO tensor VALUES(2,21,'model.layers.2.self_attn.v_proj.weight','attention',2,'column','[64, 256]',16384,'bf16','bf16',32768,'broadcast',NULL);
INSERT INTO tensor VALUES(2,22,'model.layers.2.self_attn.o_proj.weight','attention',2,'row','[256, 256]',65536,'bf16','bf16',131072,'broadcast',NULL);
INSERT INTO tensor VALUES(2,23,'model.layers.2.mlp.gate_proj.weight','dense_ffn',2,'column','[512, 256]',131072,'bf16','bf16',262144,'broadcast',NULL);
INSERT INTO tensor VALUES(2,24,'model.layers.2.mlp.up_proj.weight','dense_ffn',2,'column','[512, 256]',131072,'bf16','bf16',262144,'broadcast',NULL);
INSERT INTO tensor VALUES(2,25,'model.layers.2.mlp.down_proj.weight','dense_ffn',2,'row','[256, 512]',131072,'bf16','bf16',262144,'broadcast',NULL);
INSERT INTO tensor VALUES(2,26,'model.layers.2.input_layernorm.weight','norm',2,'replicated','[256]',256,'bf16','bf16',512,'broadcast',NULL);
INSERT INTO tensor VALUES(2,27,'model.layers.2.post_attention_layernorm.weight','norm',2,'replicated','[256]',256,'bf16','bf16',512,'broadcast',NULL);
INSERT INTO tensor VALUES(2,28,'model.layers.3.self_attn.q_proj.weight','attention',3,'column','[256, 256]',65536,'bf16','bf16',131072,'broadcast',NULL);
INSERT INTO tensor VALUES(2,29,'model.layers.3.self_attn.k_proj.weight','attention',3,'column','[64, 256]',16384,'bf16','bf16',32768,'broadcast',NULL);
INSERT INTO tensor VALUES(2,30,'model.layers.3.self_attn.v_proj.weight','attention',3,'column','[64, 256]',16384,'bf16','bf16',32768,'broadcast',NULL);
INSERT INTO tensor VALUES(2,31,'model.layers.3.self_attn.o_proj.weight','attention',3,'row','[256, 256]',65536,'bf16','bf16',131072,'broadcast',NULL);
INSERT INTO tensor VALUES(2,32,'model.layers.3.mlp.gate_proj.weight','dense_ffn',3,'column','[512, 256]',131072,'bf16','bf16',262144,'broadcast',NULL);
INSERT INTO tensor VALUES(2,33,'model.layers.3.mlp.up_proj.weight','dense_ffn',3,'column','[512, 256]',131072,'bf16','bf16',262144,'broadcast',NULL);
INSERT INTO tensor VALUES(2,34,'model.layers.3.mlp.down_proj.weight','dense_ffn',3,'row','[256, 512]',131072,'bf16','bf16',262144,'broadcast',NULL);
INSERT INTO tensor VALUES(2,35,'model.layers.3.input_layernorm.weight','norm',3,'replicated','[256]',256,'bf16','bf16',512,'broadcast',NULL);
INSERT INTO tensor VALUES(2,36,'model.layers.3.post_attention_layernorm.weight','norm',3,'replicated','[256]',256,'bf16','bf16',512,'broadcast',NULL);
INSERT INTO tensor VALUES(2,37,'model.norm.weight','norm',4,'replicated','[256]',256,'bf16','bf16',512,'broadcast',NULL);
INSERT INTO tensor VALUES(2,38,'lm_head.weight','lm_head',4,'vocab','[4096, 256]',1048576,'bf16','bf16',2097152,'broadcast',NULL);
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
INSERT INTO box VALUES(1,0,0,0,0,0,0,4096,256,1,1,1048576);
INSERT INTO box VALUES(1,1,1,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(1,2,2,0,0,0,0,64,256,1,1,16384);
INSERT INTO box VALUES(1,3,3,0,0,0,0,64,256,1,1,16384);
INSERT INTO box VALUES(1,4,4,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(1,5,5,0,0,0,0,512,256,1,1,131072);
INSERT INTO box VALUES(1,6,6,0,0,0,0,512,256,1,1,131072);
INSERT INTO box VALUES(1,7,7,0,0,0,0,256,512,1,1,131072);
INSERT INTO box VALUES(1,8,8,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(1,9,9,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(1,10,10,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(1,11,11,0,0,0,0,64,256,1,1,16384);
INSERT INTO box VALUES(1,12,12,0,0,0,0,64,256,1,1,16384);
INSERT INTO box VALUES(1,13,13,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(1,14,14,0,0,0,0,512,256,1,1,131072);
INSERT INTO box VALUES(1,15,15,0,0,0,0,512,256,1,1,131072);
INSERT INTO box VALUES(1,16,16,0,0,0,0,256,512,1,1,131072);
INSERT INTO box VALUES(1,17,17,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(1,18,18,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(1,19,19,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(1,20,20,0,0,0,0,64,256,1,1,16384);
INSERT INTO box VALUES(1,21,21,0,0,0,0,64,256,1,1,16384);
INSERT INTO box VALUES(1,22,22,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(1,23,23,0,0,0,0,512,256,1,1,131072);
INSERT INTO box VALUES(1,24,24,0,0,0,0,512,256,1,1,131072);
INSERT INTO box VALUES(1,25,25,0,0,0,0,256,512,1,1,131072);
INSERT INTO box VALUES(1,26,26,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(1,27,27,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(1,28,28,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(1,29,29,0,0,0,0,64,256,1,1,16384);
INSERT INTO box VALUES(1,30,30,0,0,0,0,64,256,1,1,16384);
INSERT INTO box VALUES(1,31,31,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(1,32,32,0,0,0,0,512,256,1,1,131072);
INSERT INTO box VALUES(1,33,33,0,0,0,0,512,256,1,1,131072);
INSERT INTO box VALUES(1,34,34,0,0,0,0,256,512,1,1,131072);
INSERT INTO box VALUES(1,35,35,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(1,36,36,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(1,37,37,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(1,38,38,0,0,0,0,4096,256,1,1,1048576);
INSERT INTO box VALUES(2,0,0,0,0,0,0,2048,256,1,1,524288);
INSERT INTO box VALUES(2,1,0,2048,0,0,0,2048,256,1,1,524288);
INSERT INTO box VALUES(2,2,1,0,0,0,0,128,256,1,1,32768);
INSERT INTO box VALUES(2,3,1,128,0,0,0,128,256,1,1,32768);
INSERT INTO box VALUES(2,4,2,0,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,5,2,32,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,6,3,0,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,7,3,32,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,8,4,0,0,0,0,256,128,1,1,32768);
INSERT INTO box VALUES(2,9,4,0,128,0,0,256,128,1,1,32768);
INSERT INTO box VALUES(2,10,5,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,11,5,256,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,12,6,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,13,6,256,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,14,7,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,15,7,0,256,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,16,8,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(2,17,9,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(2,18,10,0,0,0,0,128,256,1,1,32768);
INSERT INTO box VALUES(2,19,10,128,0,0,0,128,256,1,1,32768);
INSERT INTO box VALUES(2,20,11,0,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,21,11,32,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,22,12,0,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,23,12,32,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,24,13,0,0,0,0,256,128,1,1,32768);
INSERT INTO box VALUES(2,25,13,0,128,0,0,256,128,1,1,32768);
INSERT INTO box VALUES(2,26,14,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,27,14,256,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,28,15,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,29,15,256,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,30,16,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,31,16,0,256,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,32,17,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(2,33,18,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(2,34,19,0,0,0,0,128,256,1,1,32768);
INSERT INTO box VALUES(2,35,19,128,0,0,0,128,256,1,1,32768);
INSERT INTO box VALUES(2,36,20,0,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,37,20,32,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,38,21,0,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,39,21,32,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,40,22,0,0,0,0,256,128,1,1,32768);
INSERT INTO box VALUES(2,41,22,0,128,0,0,256,128,1,1,32768);
INSERT INTO box VALUES(2,42,23,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,43,23,256,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,44,24,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,45,24,256,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,46,25,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,47,25,0,256,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,48,26,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(2,49,27,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(2,50,28,0,0,0,0,128,256,1,1,32768);
INSERT INTO box VALUES(2,51,28,128,0,0,0,128,256,1,1,32768);
INSERT INTO box VALUES(2,52,29,0,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,53,29,32,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,54,30,0,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,55,30,32,0,0,0,32,256,1,1,8192);
INSERT INTO box VALUES(2,56,31,0,0,0,0,256,128,1,1,32768);
INSERT INTO box VALUES(2,57,31,0,128,0,0,256,128,1,1,32768);
INSERT INTO box VALUES(2,58,32,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,59,32,256,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,60,33,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,61,33,256,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,62,34,0,0,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,63,34,0,256,0,0,256,256,1,1,65536);
INSERT INTO box VALUES(2,64,35,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(2,65,36,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(2,66,37,0,0,0,0,256,1,1,1,256);
INSERT INTO box VALUES(2,67,38,0,0,0,0,2048,256,1,1,524288);
INSERT INTO box VALUES(2,68,38,2048,0,0,0,2048,256,1,1,524288);
CREATE TABLE transfer (
  run_id INTEGER NOT NULL, id INTEGER NOT NULL, box_id INTEGER NOT NULL,
  src_gpu INTEGER NOT NULL, dst_gpu INTEGER NOT NULL,
  dst_count INTEGER NOT NULL CHECK (dst_count >= 1), dst_stride INTEGER NOT NULL,
  phase TEXT NOT NULL CHECK (phase IN ('gather', 'deliver')),
  bytes INTEGER NOT NULL, round INTEGER, after_id INTEGER, hop INTEGER, chain INTEGER,
  PRIMARY KEY (run_id, id),
  FOREIGN KEY (run_id, box_id) REFERENCES box(run_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO transfer VALUES(1,0,0,0,1,1,0,'deliver',2097152,0,NULL,0,0);
INSERT INTO transfer VALUES(1,1,1,0,1,1,0,'deliver',131072,1,NULL,0,0);
INSERT INTO transfer VALUES(1,2,2,0,1,1,0,'deliver',32768,1,NULL,0,0);
INSERT INTO transfer VALUES(1,3,3,0,1,1,0,'deliver',32768,1,NULL,0,0);
INSERT INTO transfer VALUES(1,4,4,0,1,1,0,'deliver',131072,1,NULL,0,0);
INSERT INTO transfer VALUES(1,5,5,0,1,1,0,'deliver',262144,1,NULL,0,0);
INSERT INTO transfer VALUES(1,6,6,0,1,1,0,'deliver',262144,1,NULL,0,0);
INSERT INTO transfer VALUES(1,7,7,0,1,1,0,'deliver',262144,2,NULL,0,0);
INSERT INTO transfer VALUES(1,8,8,0,1,1,0,'deliver',512,1,NULL,0,0);
INSERT INTO transfer VALUES(1,9,9,0,1,1,0,'deliver',512,1,NULL,0,0);
INSERT INTO transfer VALUES(1,10,10,0,1,1,0,'deliver',131072,1,NULL,0,0);
INSERT INTO transfer VALUES(1,11,11,0,1,1,0,'deliver',32768,2,NULL,0,0);
INSERT INTO transfer VALUES(1,12,12,0,1,1,0,'deliver',32768,2,NULL,0,0);
INSERT INTO transfer VALUES(1,13,13,0,1,1,0,'deliver',131072,2,NULL,0,0);
INSERT INTO transfer VALUES(1,14,14,0,1,1,0,'deliver',262144,2,NULL,0,0);
INSERT INTO transfer VALUES(1,15,15,0,1,1,0,'deliver',262144,2,NULL,0,0);
INSERT INTO transfer VALUES(1,16,16,0,1,1,0,'deliver',262144,3,NULL,0,0);
INSERT INTO transfer VALUES(1,17,17,0,1,1,0,'deliver',512,1,NULL,0,0);
INSERT INTO transfer VALUES(1,18,18,0,1,1,0,'deliver',512,1,NULL,0,0);
INSERT INTO transfer VALUES(1,19,19,0,1,1,0,'deliver',131072,3,NULL,0,0);
INSERT INTO transfer VALUES(1,20,20,0,1,1,0,'deliver',32768,3,NULL,0,0);
INSERT INTO transfer VALUES(1,21,21,0,1,1,0,'deliver',32768,3,NULL,0,0);
INSERT INTO transfer VALUES(1,22,22,0,1,1,0,'deliver',131072,3,NULL,0,0);
INSERT INTO transfer VALUES(1,23,23,0,1,1,0,'deliver',262144,3,NULL,0,0);
INSERT INTO transfer VALUES(1,24,24,0,1,1,0,'deliver',262144,4,NULL,0,0);
INSERT INTO transfer VALUES(1,25,25,0,1,1,0,'deliver',262144,4,NULL,0,0);
INSERT INTO transfer VALUES(1,26,26,0,1,1,0,'deliver',512,1,NULL,0,0);
INSERT INTO transfer VALUES(1,27,27,0,1,1,0,'deliver',512,1,NULL,0,0);
INSERT INTO transfer VALUES(1,28,28,0,1,1,0,'deliver',131072,3,NULL,0,0);
INSERT INTO transfer VALUES(1,29,29,0,1,1,0,'deliver',32768,4,NULL,0,0);
INSERT INTO transfer VALUES(1,30,30,0,1,1,0,'deliver',32768,4,NULL,0,0);
INSERT INTO transfer VALUES(1,31,31,0,1,1,0,'deliver',131072,4,NULL,0,0);
INSERT INTO transfer VALUES(1,32,32,0,1,1,0,'deliver',262144,4,NULL,0,0);
INSERT INTO transfer VALUES(1,33,33,0,1,1,0,'deliver',262144,5,NULL,0,0);
INSERT INTO transfer VALUES(1,34,34,0,1,1,0,'deliver',262144,5,NULL,0,0);
INSERT INTO transfer VALUES(1,35,35,0,1,1,0,'deliver',512,1,NULL,0,0);
INSERT INTO transfer VALUES(1,36,36,0,1,1,0,'deliver',512,1,NULL,0,0);
INSERT INTO transfer VALUES(1,37,37,0,1,1,0,'deliver',512,1,NULL,0,0);
INSERT INTO transfer VALUES(1,38,38,0,1,1,0,'deliver',2097152,6,NULL,0,0);
INSERT INTO transfer VALUES(2,0,0,0,0,1,0,'gather',1048576,0,NULL,0,0);
INSERT INTO transfer VALUES(2,1,2,0,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,2,4,0,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,3,6,0,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,4,8,0,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,5,10,0,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,6,12,0,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,7,14,0,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,8,16,0,0,1,0,'gather',512,0,NULL,0,0);
INSERT INTO transfer VALUES(2,9,17,0,0,1,0,'gather',512,0,NULL,0,0);
INSERT INTO transfer VALUES(2,10,18,0,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,11,20,0,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,12,22,0,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,13,24,0,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,14,26,0,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,15,28,0,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,16,30,0,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,17,32,0,0,1,0,'gather',512,0,NULL,0,0);
INSERT INTO transfer VALUES(2,18,33,0,0,1,0,'gather',512,0,NULL,0,0);
INSERT INTO transfer VALUES(2,19,34,0,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,20,36,0,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,21,38,0,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,22,40,0,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,23,42,0,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,24,44,0,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,25,46,0,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,26,48,0,0,1,0,'gather',512,0,NULL,0,0);
INSERT INTO transfer VALUES(2,27,49,0,0,1,0,'gather',512,0,NULL,0,0);
INSERT INTO transfer VALUES(2,28,50,0,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,29,52,0,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,30,54,0,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,31,56,0,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,32,58,0,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,33,60,0,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,34,62,0,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,35,64,0,0,1,0,'gather',512,0,NULL,0,0);
INSERT INTO transfer VALUES(2,36,65,0,0,1,0,'gather',512,0,NULL,0,0);
INSERT INTO transfer VALUES(2,37,66,0,0,1,0,'gather',512,0,NULL,0,0);
INSERT INTO transfer VALUES(2,38,67,0,0,1,0,'gather',1048576,0,NULL,0,0);
INSERT INTO transfer VALUES(2,39,1,1,0,1,0,'gather',1048576,0,NULL,0,0);
INSERT INTO transfer VALUES(2,40,3,3,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,41,5,5,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,42,7,7,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,43,9,5,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,44,11,7,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,45,13,3,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,46,15,5,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,47,19,7,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,48,21,3,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,49,23,3,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,50,25,5,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,51,27,7,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,52,29,3,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,53,31,5,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,54,35,7,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,55,37,3,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,56,39,3,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,57,41,3,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,58,43,5,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,59,45,7,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,60,47,3,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,61,51,5,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,62,53,7,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,63,55,7,0,1,0,'gather',16384,0,NULL,0,0);
INSERT INTO transfer VALUES(2,64,57,7,0,1,0,'gather',65536,0,NULL,0,0);
INSERT INTO transfer VALUES(2,65,59,3,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,66,61,5,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,67,63,7,0,1,0,'gather',131072,0,NULL,0,0);
INSERT INTO transfer VALUES(2,68,68,3,0,1,0,'gather',1048576,0,NULL,0,0);
CREATE TABLE collective (
  run_id INTEGER NOT NULL, id INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('broadcast')),
  tensor_id INTEGER NOT NULL, root_gpu INTEGER NOT NULL,
  first_gpu INTEGER NOT NULL, gpu_count INTEGER NOT NULL, gpu_stride INTEGER NOT NULL,
  bytes INTEGER NOT NULL, round INTEGER,
  PRIMARY KEY (run_id, id),
  FOREIGN KEY (run_id, tensor_id) REFERENCES tensor(run_id, id) ON DELETE CASCADE
) WITHOUT ROWID;
INSERT INTO collective VALUES(2,0,'broadcast',0,0,0,16,1,2097152,1);
INSERT INTO collective VALUES(2,1,'broadcast',1,0,0,16,1,131072,1);
INSERT INTO collective VALUES(2,2,'broadcast',2,0,0,16,1,32768,1);
INSERT INTO collective VALUES(2,3,'broadcast',3,0,0,16,1,32768,1);
INSERT INTO collective VALUES(2,4,'broadcast',4,0,0,16,1,131072,1);
INSERT INTO collective VALUES(2,5,'broadcast',5,0,0,16,1,262144,1);
INSERT INTO collective VALUES(2,6,'broadcast',6,0,0,16,1,262144,1);
INSERT INTO collective VALUES(2,7,'broadcast',7,0,0,16,1,262144,1);
INSERT INTO collective VALUES(2,8,'broadcast',8,0,0,16,1,512,1);
INSERT INTO collective VALUES(2,9,'broadcast',9,0,0,16,1,512,1);
INSERT INTO collective VALUES(2,10,'broadcast',10,0,0,16,1,131072,1);
INSERT INTO collective VALUES(2,11,'broadcast',11,0,0,16,1,32768,1);
INSERT INTO collective VALUES(2,12,'broadcast',12,0,0,16,1,32768,1);
INSERT INTO collective VALUES(2,13,'broadcast',13,0,0,16,1,131072,1);
INSERT INTO collective VALUES(2,14,'broadcast',14,0,0,16,1,262144,1);
INSERT INTO collective VALUES(2,15,'broadcast',15,0,0,16,1,262144,1);
INSERT INTO collective VALUES(2,16,'broadcast',16,0,0,16,1,262144,1);
INSERT INTO collective VALUES(2,17,'broadcast',17,0,0,16,1,512,1);
INSERT INTO collective VALUES(2,18,'broadcast',18,0,0,16,1,512,1);
INSERT INTO collective VALUES(2,19,'broadcast',19,0,0,16,1,131072,1);
INSERT INTO collective VALUES(2,20,'broadcast',20,0,0,16,1,32768,1);
INSERT INTO collective VALUES(2,21,'broadcast',21,0,0,16,1,32768,1);
INSERT INTO collective VALUES(2,22,'broadcast',22,0,0,16,1,131072,1);
INSERT INTO collective VALUES(2,23,'broadcast',23,0,0,16,1,262144,1);
INSERT INTO collective VALUES(2,24,'broadcast',24,0,0,16,1,262144,1);
INSERT INTO collective VALUES(2,25,'broadcast',25,0,0,16,1,262144,1);
INSERT INTO collective VALUES(2,26,'broadcast',26,0,0,16,1,512,1);
INSERT INTO collective VALUES(2,27,'broadcast',27,0,0,16,1,512,1);
INSERT INTO collective VALUES(2,28,'broadcast',28,0,0,16,1,131072,1);
INSERT INTO collective VALUES(2,29,'broadcast',29,0,0,16,1,32768,1);
INSERT INTO collective VALUES(2,30,'broadcast',30,0,0,16,1,32768,1);
INSERT INTO collective VALUES(2,31,'broadcast',31,0,0,16,1,131072,1);
INSERT INTO collective VALUES(2,32,'broadcast',32,0,0,16,1,262144,1);
INSERT INTO collective VALUES(2,33,'broadcast',33,0,0,16,1,262144,1);
INSERT INTO collective VALUES(2,34,'broadcast',34,0,0,16,1,262144,1);
INSERT INTO collective VALUES(2,35,'broadcast',35,0,0,16,1,512,1);
INSERT INTO collective VALUES(2,36,'broadcast',36,0,0,16,1,512,1);
INSERT INTO collective VALUES(2,37,'broadcast',37,0,0,16,1,512,1);
INSERT INTO collective VALUES(2,38,'broadcast',38,0,0,16,1,2097152,1);
CREATE TABLE role_summary (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  role TEXT NOT NULL, tensors INTEGER NOT NULL, params INTEGER NOT NULL,
  payload_bytes INTEGER NOT NULL, moved_bytes INTEGER NOT NULL,
  logical_bytes INTEGER NOT NULL, local_bytes INTEGER NOT NULL,
  transfers INTEGER NOT NULL, collectives INTEGER NOT NULL,
  PRIMARY KEY (run_id, role)
) WITHOUT ROWID;
INSERT INTO role_summary VALUES(1,'attention',16,655360,1310720,1310720,1310720,0,16,0);
INSERT INTO role_summary VALUES(1,'dense_ffn',12,1572864,3145728,3145728,3145728,0,12,0);
INSERT INTO role_summary VALUES(1,'embedding',1,1048576,2097152,2097152,2097152,0,1,0);
INSERT INTO role_summary VALUES(1,'lm_head',1,1048576,2097152,2097152,2097152,0,1,0);
INSERT INTO role_summary VALUES(1,'norm',9,2304,4608,4608,4608,0,9,0);
INSERT INTO role_summary VALUES(2,'attention',16,655360,10485760,20316160,2621440,655360,32,16);
INSERT INTO role_summary VALUES(2,'dense_ffn',12,1572864,25165824,48758784,6291456,1572864,24,12);
INSERT INTO role_summary VALUES(2,'embedding',1,1048576,16777216,32505856,4194304,1048576,2,1);
INSERT INTO role_summary VALUES(2,'lm_head',1,1048576,16777216,32505856,4194304,1048576,2,1);
INSERT INTO role_summary VALUES(2,'norm',9,2304,36864,69120,9216,4608,9,9);
CREATE TABLE side (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  side TEXT NOT NULL CHECK (side IN ('train', 'infer')),
  kind TEXT NOT NULL CHECK (kind IN ('megatron', 'vllm')),
  gpus INTEGER NOT NULL, first_gpu INTEGER NOT NULL,
  tp INTEGER NOT NULL, cp INTEGER NOT NULL, pp INTEGER NOT NULL, dp INTEGER NOT NULL,
  ep INTEGER NOT NULL, etp INTEGER NOT NULL, edp INTEGER NOT NULL,
  replicas INTEGER NOT NULL, fsdp INTEGER NOT NULL, dtype TEXT NOT NULL,
  stage_layers TEXT NOT NULL, placement TEXT, domain_gpus INTEGER, span INTEGER,
  PRIMARY KEY (run_id, side)
) WITHOUT ROWID;
INSERT INTO side VALUES(1,'infer','vllm',1,1,1,1,1,1,1,1,1,1,0,'bf16','4','domain',8,1);
INSERT INTO side VALUES(1,'train','megatron',1,0,1,1,1,1,1,1,1,1,0,'bf16','4','packed',0,1);
INSERT INTO side VALUES(2,'infer','vllm',8,8,4,1,1,1,1,1,1,2,0,'bf16','4','domain',8,8);
INSERT INTO side VALUES(2,'train','megatron',8,0,2,1,1,4,1,1,8,1,0,'bf16','4','packed',0,8);
CREATE TABLE round (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  round INTEGER NOT NULL,
  transfer_runs INTEGER NOT NULL, transfers INTEGER NOT NULL,
  collectives INTEGER NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (run_id, round)
) WITHOUT ROWID;
INSERT INTO round VALUES(1,0,1,1,0,2097152);
INSERT INTO round VALUES(1,1,16,16,0,987648);
INSERT INTO round VALUES(1,2,6,6,0,983040);
INSERT INTO round VALUES(1,3,7,7,0,983040);
INSERT INTO round VALUES(1,4,6,6,0,983040);
INSERT INTO round VALUES(1,5,2,2,0,524288);
INSERT INTO round VALUES(1,6,1,1,0,2097152);
INSERT INTO round VALUES(2,0,69,69,0,4325376);
INSERT INTO round VALUES(2,1,0,0,39,129830400);
CREATE TABLE prediction (
  run_id INTEGER PRIMARY KEY REFERENCES run(id) ON DELETE CASCADE,
  cluster TEXT NOT NULL, cluster_source TEXT NOT NULL,
  nodes INTEGER NOT NULL, gpus_per_node INTEGER NOT NULL,
  seconds REAL NOT NULL, lower_bound_seconds REAL NOT NULL,
  nvlink_bytes INTEGER NOT NULL, fabric_bytes INTEGER NOT NULL,
  bottleneck TEXT, bottleneck_link_id INTEGER,
  messages INTEGER NOT NULL, flows INTEGER NOT NULL, events INTEGER NOT NULL,
  sim_seconds REAL NOT NULL
, step_seconds REAL, step_composition TEXT);
INSERT INTO prediction VALUES(1,'dgx-h100','/tmp/old11/b/../models/clusters/dgx-h100.lua',1,8,0.00042656145257452570459,2.0714746474820143759e-05,8655360,0,'nvl_out[gpu 0]',0,7,7,14,5.1993999477417673915e-05,NULL,NULL);
INSERT INTO prediction VALUES(2,'dgx-h100','/tmp/old11/b/../models/clusters/dgx-h100.lua',2,8,0.0014348203813129472086,2.2494920000000001797e-05,113601600,16228800,'nvl_out[gpu 0]',0,15,8,4,0.000169442999322200194,0.0014348203813129472086,'2 buffers: export, wire and load of 1 buckets overlap (a 3-stage pipeline)');
CREATE TABLE link_load (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  link_id INTEGER NOT NULL,
  kind TEXT NOT NULL, name TEXT NOT NULL, endpoint_a INTEGER NOT NULL,
  endpoint_b INTEGER NOT NULL,
  capacity_gbps REAL NOT NULL, bytes INTEGER NOT NULL, busy_seconds REAL NOT NULL,
  utilization REAL NOT NULL,
  PRIMARY KEY (run_id, link_id)
) WITHOUT ROWID;
INSERT INTO link_load VALUES(1,0,'nvl_out','nvl_out[gpu 0]',0,0,369.0,8655360,2.3456260162601640204e-05,0.054989169839493458324);
INSERT INTO link_load VALUES(1,9,'nvl_in','nvl_in[gpu 1]',1,0,369.0,8655360,2.3456260162601640204e-05,0.054989169839493458324);
INSERT INTO link_load VALUES(1,48,'copy','copy[gpu 0]',0,0,1340.0,8655360,6.459223880597015229e-06,0.015142540052815735632);
INSERT INTO link_load VALUES(1,49,'copy','copy[gpu 1]',1,0,1340.0,8655360,6.459223880597015229e-06,0.015142540052815735632);
INSERT INTO link_load VALUES(2,0,'nvl_out','nvl_out[gpu 0]',0,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,1,'nvl_out','nvl_out[gpu 1]',1,0,369.0,3245760,2.4639999999999980927e-05,0.0061304520590421563569);
INSERT INTO link_load VALUES(2,2,'nvl_out','nvl_out[gpu 2]',2,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,3,'nvl_out','nvl_out[gpu 3]',3,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,4,'nvl_out','nvl_out[gpu 4]',4,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,5,'nvl_out','nvl_out[gpu 5]',5,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,6,'nvl_out','nvl_out[gpu 6]',6,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,7,'nvl_out','nvl_out[gpu 7]',7,0,369.0,4327680,2.2539999999999984093e-05,0.0081739360787228751425);
INSERT INTO link_load VALUES(2,8,'nvl_out','nvl_out[gpu 8]',8,0,369.0,7573440,2.2539999999999984093e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,9,'nvl_out','nvl_out[gpu 9]',9,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,10,'nvl_out','nvl_out[gpu 10]',10,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,11,'nvl_out','nvl_out[gpu 11]',11,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,12,'nvl_out','nvl_out[gpu 12]',12,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,13,'nvl_out','nvl_out[gpu 13]',13,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,14,'nvl_out','nvl_out[gpu 14]',14,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,15,'nvl_out','nvl_out[gpu 15]',15,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,17,'nvl_in','nvl_in[gpu 1]',1,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,18,'nvl_in','nvl_in[gpu 2]',2,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,19,'nvl_in','nvl_in[gpu 3]',3,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,20,'nvl_in','nvl_in[gpu 4]',4,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,21,'nvl_in','nvl_in[gpu 5]',5,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,22,'nvl_in','nvl_in[gpu 6]',6,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,23,'nvl_in','nvl_in[gpu 7]',7,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,24,'nvl_in','nvl_in[gpu 8]',8,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,25,'nvl_in','nvl_in[gpu 9]',9,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,26,'nvl_in','nvl_in[gpu 10]',10,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,27,'nvl_in','nvl_in[gpu 11]',11,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,28,'nvl_in','nvl_in[gpu 12]',12,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,29,'nvl_in','nvl_in[gpu 13]',13,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,30,'nvl_in','nvl_in[gpu 14]',14,0,369.0,7573440,2.4639999999999980927e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,31,'nvl_in','nvl_in[gpu 15]',15,0,369.0,7573440,2.2539999999999984093e-05,0.014304388137765031499);
INSERT INTO link_load VALUES(2,32,'nic_out','nic_out[node 0 nic 0]',0,0,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,33,'nic_out','nic_out[node 0 nic 1]',0,1,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,34,'nic_out','nic_out[node 0 nic 2]',0,2,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,35,'nic_out','nic_out[node 0 nic 3]',0,3,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,36,'nic_out','nic_out[node 0 nic 4]',0,4,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,37,'nic_out','nic_out[node 0 nic 5]',0,5,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,38,'nic_out','nic_out[node 0 nic 6]',0,6,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,39,'nic_out','nic_out[node 0 nic 7]',0,7,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,41,'nic_out','nic_out[node 1 nic 1]',1,1,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,42,'nic_out','nic_out[node 1 nic 2]',1,2,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,43,'nic_out','nic_out[node 1 nic 3]',1,3,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,44,'nic_out','nic_out[node 1 nic 4]',1,4,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,45,'nic_out','nic_out[node 1 nic 5]',1,5,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,46,'nic_out','nic_out[node 1 nic 6]',1,6,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,47,'nic_out','nic_out[node 1 nic 7]',1,7,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,49,'nic_in','nic_in[node 0 nic 1]',0,1,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,50,'nic_in','nic_in[node 0 nic 2]',0,2,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,51,'nic_in','nic_in[node 0 nic 3]',0,3,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,52,'nic_in','nic_in[node 0 nic 4]',0,4,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,53,'nic_in','nic_in[node 0 nic 5]',0,5,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,54,'nic_in','nic_in[node 0 nic 6]',0,6,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,55,'nic_in','nic_in[node 0 nic 7]',0,7,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,56,'nic_in','nic_in[node 1 nic 0]',1,0,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,57,'nic_in','nic_in[node 1 nic 1]',1,1,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,58,'nic_in','nic_in[node 1 nic 2]',1,2,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,59,'nic_in','nic_in[node 1 nic 3]',1,3,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,60,'nic_in','nic_in[node 1 nic 4]',1,4,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,61,'nic_in','nic_in[node 1 nic 5]',1,5,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,62,'nic_in','nic_in[node 1 nic 6]',1,6,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
INSERT INTO link_load VALUES(2,63,'nic_in','nic_in[node 1 nic 7]',1,7,48.0,1081920,2.2539999999999984093e-05,0.015709283401295529025);
CREATE TABLE predicted_round (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  round INTEGER NOT NULL, start_seconds REAL NOT NULL, finish_seconds REAL NOT NULL,
  PRIMARY KEY (run_id, round)
) WITHOUT ROWID;
INSERT INTO predicted_round VALUES(1,0,0.0,7.2283338753387522544e-05);
INSERT INTO predicted_round VALUES(1,1,0.0,0.00021927655284552843633);
INSERT INTO predicted_round VALUES(1,2,7.2283338753387522544e-05,0.00019154740379403792089);
INSERT INTO predicted_round VALUES(1,3,0.00021927655284552843633,0.00034854061788617884736);
INSERT INTO predicted_round VALUES(1,4,0.00019154740379403792089,0.0003108114688346883328);
INSERT INTO predicted_round VALUES(1,5,0.00034854061788617884736,0.00042656145257452570459);
INSERT INTO predicted_round VALUES(1,6,0.0003108114688346883328,0.00038309480758807584179);
INSERT INTO predicted_round VALUES(2,0,0.0,0.0);
INSERT INTO predicted_round VALUES(2,1,0.0,0.00040729999999999997976);
CREATE TABLE predicted_phase (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  phase TEXT NOT NULL, start_seconds REAL NOT NULL, finish_seconds REAL NOT NULL,
  bytes INTEGER NOT NULL,
  PRIMARY KEY (run_id, phase)
) WITHOUT ROWID;
INSERT INTO predicted_phase VALUES(1,'deliver',0.0,0.00042656145257452570459,8655360);
INSERT INTO predicted_phase VALUES(2,'broadcast',0.0,0.00040729999999999997976,129830400);
CREATE TABLE measurement (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  backend TEXT NOT NULL CHECK (backend IN ('nccl', 'mpi')),
  world_size INTEGER NOT NULL,
  iters INTEGER NOT NULL, warmup INTEGER NOT NULL,
  seconds REAL, seconds_min REAL, seconds_max REAL,
  bytes_verified INTEGER NOT NULL DEFAULT 0,
  errors INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'unverified')),
  error_text TEXT,
  hosts TEXT, gpu_model TEXT, nccl_version TEXT, mpi_version TEXT
, exec_config TEXT);
INSERT INTO measurement VALUES(1,1,'2026-12-05T02:46:13Z','mpi',2,3,1,0.0024106339999999991732,0.0022069430000000011399,0.003752079000000005382,8655360,0,'ok',NULL,'vm',NULL,NULL,'Open MPI v4.1.4','mpi fill=host');
INSERT INTO measurement VALUES(3,1,'2026-12-05T02:46:13Z','mpi',2,3,1,0.0024385129999999997918,0.0021893529999999997853,0.0039242599999999988602,8655360,0,'ok',NULL,'vm',NULL,NULL,'Open MPI v4.1.4','mpi fill=host');
CREATE TABLE measured_round (
  measurement_id INTEGER NOT NULL REFERENCES measurement(id) ON DELETE CASCADE,
  round INTEGER NOT NULL,
  seconds REAL NOT NULL,
  PRIMARY KEY (measurement_id, round)
) WITHOUT ROWID;
INSERT INTO measured_round VALUES(1,0,0.00066026299999999947532);
INSERT INTO measured_round VALUES(1,1,0.00030855700000000010202);
INSERT INTO measured_round VALUES(1,2,0.00024472500000000119158);
INSERT INTO measured_round VALUES(1,3,0.00024317199999999983273);
INSERT INTO measured_round VALUES(1,4,0.00024593800000000110017);
INSERT INTO measured_round VALUES(1,5,0.00016148700000000182352);
INSERT INTO measured_round VALUES(1,6,0.00056437999999999974298);
INSERT INTO measured_round VALUES(3,0,0.00062075900000000024114);
INSERT INTO measured_round VALUES(3,1,0.0003250119999999995235);
INSERT INTO measured_round VALUES(3,2,0.00023686300000000035104);
INSERT INTO measured_round VALUES(3,3,0.00024023100000000047193);
INSERT INTO measured_round VALUES(3,4,0.00025328500000000066239);
INSERT INTO measured_round VALUES(3,5,0.00018724400000000133992);
INSERT INTO measured_round VALUES(3,6,0.00058424999999999449595);
CREATE TABLE memory (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  side TEXT NOT NULL CHECK (side IN ('train', 'infer')),
  gpu INTEGER NOT NULL, stage INTEGER NOT NULL,
  weights_bytes INTEGER NOT NULL, grads_bytes INTEGER NOT NULL,
  optimizer_bytes INTEGER NOT NULL, staging_bytes INTEGER NOT NULL,
  total_bytes INTEGER NOT NULL, hbm_bytes INTEGER NOT NULL, budget_bytes INTEGER NOT NULL,
  headroom_bytes INTEGER NOT NULL, fits INTEGER NOT NULL,
  PRIMARY KEY (run_id, side)
) WITHOUT ROWID;
INSERT INTO memory VALUES(1,'infer',1,0,8655360,0,0,2000000,10655360,80000000000,72000000000,71989344640,1);
INSERT INTO memory VALUES(1,'train',0,0,8655360,8655360,51932160,2000000,71242880,80000000000,80000000000,79928757120,1);
INSERT INTO memory VALUES(2,'infer',8,0,2167296,0,0,3200000000,3202167296,80000000000,72000000000,68797832704,1);
INSERT INTO memory VALUES(2,'train',0,0,4329984,4329984,6494976,3200000000,3215154944,80000000000,80000000000,76784845056,1);
CREATE TABLE predicted_step_phase (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,
  part TEXT NOT NULL CHECK (part IN ('all', 'bulk', 'misc')),
  phase TEXT NOT NULL CHECK (phase IN ('export', 'transfer', 'load', 'finalize')),
  seconds REAL NOT NULL CHECK (seconds >= 0),
  bytes INTEGER NOT NULL CHECK (bytes >= 0), calls INTEGER NOT NULL CHECK (calls >= 0),
  mechanism TEXT NOT NULL,
  PRIMARY KEY (run_id, seq),
  UNIQUE (run_id, part, phase)
) WITHOUT ROWID;
INSERT INTO predicted_step_phase VALUES(2,0,'all','export',0.0006359029962383203928,8655360,69,'Bridge export on every trainer: 30 collectives 0.000 s, 39 HF tensors x 1 calls, pack 0.000 s');
INSERT INTO predicted_step_phase VALUES(2,1,'all','transfer',0.00040729999999999997976,8655360,2,'NCCL broadcast over 16 ranks on 16 channels, one per bucket');
INSERT INTO predicted_step_phase VALUES(2,2,'all','load',0.00039161738507462678189,2167296,39,'loader: 39 HF tensors x 1 calls, copy of its shard 0.000 s');
INSERT INTO predicted_step_phase VALUES(2,3,'all','finalize',0.0,0,0,'not measured: 0');
CREATE TABLE ordinal (i INTEGER PRIMARY KEY);
INSERT INTO ordinal VALUES(0);
INSERT INTO ordinal VALUES(1);
INSERT INTO ordinal VALUES(2);
INSERT INTO ordinal VALUES(3);
INSERT INTO ordinal VALUES(4);
INSERT INTO ordinal VALUES(5);
INSERT INTO ordinal VALUES(6);
INSERT INTO ordinal VALUES(7);
INSERT INTO ordinal VALUES(8);
INSERT INTO ordinal VALUES(9);
INSERT INTO ordinal VALUES(10);
INSERT INTO ordinal VALUES(11);
INSERT INTO ordinal VALUES(12);
INSERT INTO ordinal VALUES(13);
INSERT INTO ordinal VALUES(14);
INSERT INTO ordinal VALUES(15);
CREATE TABLE study (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL, name TEXT NOT NULL,
  started_at TEXT NOT NULL,
  refit_version TEXT
);
CREATE TABLE study_table (
  study_id INTEGER NOT NULL REFERENCES study(id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL CHECK (ordinal >= 1),
  title TEXT,
  columns_json TEXT NOT NULL, rows_json TEXT NOT NULL,
  text TEXT NOT NULL,
  PRIMARY KEY (study_id, ordinal)
) WITHOUT ROWID;
CREATE TABLE gpu_traffic (
  run_id INTEGER NOT NULL REFERENCES run(id) ON DELETE CASCADE,
  gpu INTEGER NOT NULL,
  sent_bytes INTEGER NOT NULL, received_bytes INTEGER NOT NULL,
  local_bytes INTEGER NOT NULL, broadcast_bytes INTEGER NOT NULL,
  transfers_out INTEGER NOT NULL, transfers_in INTEGER NOT NULL,
  PRIMARY KEY (run_id, gpu)
) WITHOUT ROWID;
INSERT INTO gpu_traffic VALUES(1,0,8655360,0,0,0,39,0);
INSERT INTO gpu_traffic VALUES(1,1,0,8655360,0,0,0,39);
INSERT INTO gpu_traffic VALUES(2,0,0,4325376,4329984,0,0,30);
INSERT INTO gpu_traffic VALUES(2,1,1048576,0,0,8655360,1,0);
INSERT INTO gpu_traffic VALUES(2,2,0,0,0,8655360,0,0);
INSERT INTO gpu_traffic VALUES(2,3,1769472,0,0,8655360,11,0);
INSERT INTO gpu_traffic VALUES(2,4,0,0,0,8655360,0,0);
INSERT INTO gpu_traffic VALUES(2,5,737280,0,0,8655360,8,0);
INSERT INTO gpu_traffic VALUES(2,6,0,0,0,8655360,0,0);
INSERT INTO gpu_traffic VALUES(2,7,770048,0,0,8655360,10,0);
INSERT INTO gpu_traffic VALUES(2,8,0,0,0,8655360,0,0);
INSERT INTO gpu_traffic VALUES(2,9,0,0,0,8655360,0,0);
INSERT INTO gpu_traffic VALUES(2,10,0,0,0,8655360,0,0);
INSERT INTO gpu_traffic VALUES(2,11,0,0,0,8655360,0,0);
INSERT INTO gpu_traffic VALUES(2,12,0,0,0,8655360,0,0);
INSERT INTO gpu_traffic VALUES(2,13,0,0,0,8655360,0,0);
INSERT INTO gpu_traffic VALUES(2,14,0,0,0,8655360,0,0);
INSERT INTO gpu_traffic VALUES(2,15,0,0,0,8655360,0,0);
ANALYZE sqlite_schema;
INSERT INTO sqlite_stat1 VALUES('predicted_phase','predicted_phase','2 1 1');
INSERT INTO sqlite_stat1 VALUES('ordinal',NULL,'16');
INSERT INTO sqlite_stat1 VALUES('memory','memory','4 2 1');
INSERT INTO sqlite_stat1 VALUES('measured_round','measured_round','14 7 1');
INSERT INTO sqlite_stat1 VALUES('prediction',NULL,'2');
INSERT INTO sqlite_stat1 VALUES('run','run_study','2 2');
INSERT INTO sqlite_stat1 VALUES('run','run_label','2 2');
INSERT INTO sqlite_stat1 VALUES('predicted_round','predicted_round','9 5 1');
INSERT INTO sqlite_stat1 VALUES('tensor','tensor_name','78 39 1');
INSERT INTO sqlite_stat1 VALUES('tensor','tensor','78 39 1');
INSERT INTO sqlite_stat1 VALUES('link_load','link_load','65 33 1');
INSERT INTO sqlite_stat1 VALUES('box','box_tensor','108 54 2');
INSERT INTO sqlite_stat1 VALUES('box','box','108 54 1');
INSERT INTO sqlite_stat1 VALUES('transfer','transfer_box','108 54 1');
INSERT INTO sqlite_stat1 VALUES('transfer','transfer','108 54 1');
INSERT INTO sqlite_stat1 VALUES('gpu_traffic','gpu_traffic','18 9 1');
INSERT INTO sqlite_stat1 VALUES('measurement','measurement_run','2 2');
INSERT INTO sqlite_stat1 VALUES('collective','collective_tensor','39 39 1');
INSERT INTO sqlite_stat1 VALUES('collective','collective','39 39 1');
INSERT INTO sqlite_stat1 VALUES('predicted_step_phase','sqlite_autoindex_predicted_step_phase_2','4 4 4 1');
INSERT INTO sqlite_stat1 VALUES('predicted_step_phase','predicted_step_phase','4 4 1');
INSERT INTO sqlite_stat1 VALUES('role_summary','role_summary','10 5 1');
INSERT INTO sqlite_stat1 VALUES('side','side','4 2 1');
INSERT INTO sqlite_stat1 VALUES('round','round','9 5 1');
CREATE INDEX measurement_run ON measurement(run_id);
CREATE VIEW predicted_vs_measured AS
SELECT r.id AS run_id, r.label, r.model, r.strategy, p.cluster,
  p.seconds AS predicted_seconds, p.lower_bound_seconds, m.id AS measurement_id,
  m.backend, m.world_size, m.seconds AS measured_seconds,
  m.seconds / p.seconds AS measured_over_predicted
FROM prediction p JOIN run r ON r.id = p.run_id
JOIN measurement m ON m.run_id = p.run_id AND m.status = 'ok';
CREATE VIEW predicted_vs_measured_round AS
SELECT m.run_id, m.id AS measurement_id, pr.round,
  pr.finish_seconds - pr.start_seconds AS predicted_seconds,
  mr.seconds AS measured_seconds
FROM measurement m JOIN measured_round mr ON mr.measurement_id = m.id
JOIN predicted_round pr ON pr.run_id = m.run_id AND pr.round = mr.round
WHERE m.status = 'ok';
CREATE VIEW measured_run AS
SELECT r.id AS run_id, r.label, r.model, r.strategy, r.train_gpus, r.train_layout,
  r.train_dtype, r.infer_gpus, r.infer_layout, r.infer_dtype, r.payload_bytes,
  r.moved_bytes, r.rounds, m.id AS measurement_id, m.created_at AS measured_at,
  m.backend, m.world_size, m.iters, m.warmup, m.seconds, m.seconds_min, m.seconds_max,
  r.payload_bytes / m.seconds / 1e9 AS payload_gb_per_second, m.bytes_verified,
  m.hosts, m.gpu_model, m.nccl_version, m.mpi_version, m.exec_config
FROM measurement m JOIN run r ON r.id = m.run_id WHERE m.status = 'ok';
CREATE VIEW run_memory AS
SELECT r.id AS run_id, r.label, r.model, r.train_layout, r.infer_layout,
  t.total_bytes AS train_memory_bytes, t.budget_bytes AS train_budget_bytes,
  i.total_bytes AS infer_memory_bytes, i.budget_bytes AS infer_budget_bytes,
  i.headroom_bytes AS infer_kv_headroom_bytes,
  CASE WHEN t.fits IS NULL THEN NULL ELSE NOT (t.fits AND i.fits) END
    AS memory_overcommitted
FROM run r LEFT JOIN memory t ON t.run_id = r.id AND t.side = 'train'
LEFT JOIN memory i ON i.run_id = r.id AND i.side = 'infer';
CREATE VIEW run_phases AS
SELECT r.id AS run_id, r.label, r.model, r.strategy,
  CASE WHEN json_valid(r.scenario_json)
       THEN json_extract(r.scenario_json, '$.framework.name') END AS framework,
  s.seq, s.part, s.phase, s.seconds, p.step_seconds,
  CASE WHEN p.step_seconds > 0 THEN s.seconds / p.step_seconds END AS share_of_step,
  s.bytes, s.calls, s.mechanism, p.step_composition
FROM predicted_step_phase s JOIN run r ON r.id = s.run_id
LEFT JOIN prediction p ON p.run_id = s.run_id;
CREATE INDEX box_tensor ON box(run_id, tensor_id);
CREATE INDEX transfer_box ON transfer(run_id, box_id);
CREATE INDEX collective_tensor ON collective(run_id, tensor_id);
CREATE INDEX run_label ON run(label);
CREATE VIEW transfer_each AS
SELECT t.run_id, t.id AS transfer_id, t.round, tn.id AS tensor_id, tn.name AS tensor,
  t.phase,
  CASE WHEN t.chain AND k.i > 0 THEN t.dst_gpu + (k.i - 1) * t.dst_stride
       ELSE t.src_gpu END AS src_gpu,
  t.dst_gpu + k.i * t.dst_stride AS dst_gpu,
  b.off0, b.off1, b.off2, b.off3, b.len0, b.len1, b.len2, b.len3, t.bytes,
  coalesce(t.hop, 0) + CASE WHEN t.chain THEN k.i ELSE 0 END AS hop
FROM transfer t JOIN ordinal k ON k.i < t.dst_count
JOIN box b ON b.run_id = t.run_id AND b.id = t.box_id
JOIN tensor tn ON tn.run_id = b.run_id AND tn.id = b.tensor_id;
CREATE INDEX run_study ON run(study_id);
CREATE INDEX tensor_name ON tensor(run_id, name);
COMMIT;
