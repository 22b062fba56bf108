-- policy.lua: the refit strategies and the default per-tensor policy of the hybrid strategy.
-- A scenario's `policy` function replaces `default`; it gets a copy of one tensor.

local policy = {}

-- Every strategy a scenario may name; add a new one here and nowhere else.
-- hierarchical: one leader per NVLink domain receives, then fans out; auto: refit searches
-- per role for the mix with the least predicted time.
policy.strategies = { "broadcast", "reshard", "hierarchical", "hybrid", "auto" }

-- What a hybrid policy may answer for one tensor ("reshard" means the scenario's
-- hybrid_bulk, reshard or hierarchical).
policy.per_tensor = { "reshard", "broadcast", "hierarchical" }

-- How replicated sources are chosen (sim/plan.h, enum rf_sources).
policy.sources = { "balanced", "local" }

-- NeMo-RL's nccl_reshard bulk path moves only FFN projections (dense and routed experts;
-- nemo_rl/weight_sync/nccl_reshard_utils.py:is_nccl_reshard_param); everything else,
-- shared experts included, goes by packed broadcast afterwards.
function policy.default(tensor)
    if tensor.role == "dense_ffn" or tensor.role == "expert" then
        return "reshard"
    end
    return "broadcast"
end

return policy
