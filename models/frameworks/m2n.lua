-- NCCL M2N (NVIDIA/nccl-extensions): reshard every parameter directly from the training
-- shards to the inference shards, or hierarchically (a leader per NVLink domain, a ring
-- between domains, NVLink fan-out), as its reshard_model_bench runs it: one call per
-- parameter, no broadcast part. Read from NVIDIA/nccl-extensions @ 44d2de0d
-- (https://github.com/NVIDIA/nccl-extensions: nccl_m2n/README.md, src/reshard_mesh.cc,
-- src/reshard_loadbalance.cc; doc/research/frameworks.md §6, §11). Not
-- modelled: the first refit's lazy window and staging-pool setup.
local M2N, AT = "NVIDIA/nccl-extensions", "44d2de0d"

return framework.profile{
    name = "m2n",
    -- Direct P2P (UNIFORM) and hierarchical (ring, NODE_AWARE), the two algorithms of the
    -- README's Reference Performance table.
    strategies = { "reshard", "hierarchical" },
    finalize_s = 0, -- the bench has no engine to finalise
    reshard = {
        -- M2N's hierarchical path: leaders per NVLink domain, a ring of domains (§2.4).
        plan = "hierarchical",
        -- The bench moves all stages at once (no generator-side stream cap).
        stage_groups = 0,
        -- It keeps one buffer per parameter: no stacking, no fused temporaries, and there
        -- is no misc part (every parameter is resharded).
        calls = 1,
        -- Each call is one device kernel that starts with a barrier over the communicator
        -- and ends with a fence and a barrier (GIN), launched from one host thread.
        barriers = 2,
        -- The bench's "max latency" is the slowest rank's sum of its per-pattern timings:
        -- no overlap between calls is counted (frameworks.md §6).
        serial_calls = true,
    },
    sources = {
        { field = "strategies", repo = M2N, commit = AT, file = "nccl_m2n/README.md",
          func = "Reference Performance (reshard_model_bench)",
          says = "hierarchical (ring, NODE_AWARE) vs direct P2P (UNIFORM) on DSV3 and "
              .. "Qwen3-235B, GB200 NVL72" },
        { field = "reshard.plan", repo = M2N, commit = AT, file = "nccl_m2n/README.md",
          func = "Reference Performance (reshard_model_bench)",
          says = "the hierarchical path: leaders per NVLink domain, a ring of domains" },
        { field = "reshard.stage_groups", repo = M2N, commit = AT, file = "nccl_m2n/README.md",
          func = "Reference Performance (reshard_model_bench)",
          says = "every parameter moved by reshard, one buffer per parameter" },
        { field = "reshard.calls", repo = M2N, commit = AT, file = "nccl_m2n/RELEASE.md",
          func = "limitations", says = "one reshard in flight per (communicator, stream); the "
              .. "host serialises M2N calls (l.245-246)" },
        { field = "reshard.serial_calls", repo = M2N, commit = AT,
          file = "nccl_m2n/benchmarks/reshard_model_bench.cu",
          func = "main: pattern groups, timed iterations",
          says = "groups by the name with layers.N -> layers.X; per group a barrier, runGroup, "
              .. "timed; cumulativeLatencyMs sums the groups (reshard_model_bench.cu "
              .. "l.894-907, 1136-1160, 1224-1232)" },
        { field = "reshard.barriers", repo = M2N, commit = AT, file = "src/reshard_mesh.cc",
          func = "the reshard kernel (8 CTAs x 512 threads on 4 GIN contexts)",
          says = "an initial barrier, then a final fence and barrier over the communicator "
              .. "(the reshard kernel's launch)" },
    },
}
