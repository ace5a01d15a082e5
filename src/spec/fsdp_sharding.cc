// FSDP1 sharding strategies of the Hugging Face stack as trainsim settings, shared by the
// Accelerate reader (fsdp_sharding_strategy) and the HF TrainingArguments readers (`fsdp`).
//
// Source: PyTorch torch/distributed/fsdp/api.py, ShardingStrategy: FULL_SHARD shards
// parameters, gradients and optimizer states (ZeRO-3); SHARD_GRAD_OP keeps the parameters
// gathered between forward and backward (ZeRO-2); NO_SHARD is DDP; HYBRID_SHARD applies
// FULL_SHARD within a node and replicates across nodes; _HYBRID_SHARD_ZERO2 applies
// SHARD_GRAD_OP within a node. Without a process group FSDP builds the intra-node group from
// the GPUs of one node (fsdp/_init_utils.py, _init_intra_and_inter_node_groups).
#include <algorithm>
#include <string>

#include "spec/trainer_keys.h"
#include "trainsim/formats.h"
#include "trainsim/strategy.h"

namespace trainsim::detail {

void ApplyShardingStrategy(TrainerKeys& k, const std::string& key, const std::string& name,
                           int machines) {
  const bool hybrid = name == "HYBRID_SHARD" || name == "HYBRID_SHARD_ZERO2";
  if (name == "FULL_SHARD" || name == "HYBRID_SHARD") {
    k.Set("fsdp", "true");
  } else if (name == "SHARD_GRAD_OP" || name == "HYBRID_SHARD_ZERO2") {
    k.Set("fsdp", "false");
    k.Set("zero_state", "2");
  } else if (name == "NO_SHARD") {
    k.Set("fsdp", "false");
    k.Set("zero_state", "0");
  } else {
    return k.Fail(key,
                  "must be FULL_SHARD, SHARD_GRAD_OP, NO_SHARD, HYBRID_SHARD or "
                  "HYBRID_SHARD_ZERO2 (or 1-5), got '" +
                      name + "'");
  }
  if (!hybrid) return;
  if (machines == 0) {  // the launcher's nodes: ResolveFrameworkLayout
    k.out().hybrid_shard_key = key;
    k.out().hybrid_shard_name = name;
  } else if (machines > 1) {  // HSDP: one replica per node
    k.Set("dist_opt_instances", std::to_string(machines));
  } else {
    k.Assume(key, name, "one machine: sharded over all its GPUs, as without hybrid sharding");
  }
}

}  // namespace trainsim::detail

namespace trainsim {

Status ResolveFrameworkLayout(FrameworkConfig& c, Strategy& s, int gpus_per_node, bool given) {
  if (c.hybrid_shard_key.empty() || given || s.zero < 1) return Status::Ok();
  const std::string& key = c.hybrid_shard_key;
  const long long group = 1LL * s.dp() * s.cp;  // the FSDP ranks
  const long long model_parallel = 1LL * s.tp * s.pp;
  if (gpus_per_node <= 0) {
    c.assumed.push_back({key, c.hybrid_shard_name,
                         "the hardware preset does not record gpus_per_node: sharded over the "
                         "whole DP group, as without hybrid sharding"});
    return Status::Ok();
  }
  // The FSDP ranks of one node (the node's GPUs over the model-parallel ranks it holds).
  const long long per_node = std::max(1LL, gpus_per_node / model_parallel);
  if (group <= per_node) {
    c.assumed.push_back({key, c.hybrid_shard_name,
                         "one node: sharded over all its GPUs, as without hybrid sharding"});
    return Status::Ok();
  }
  if (group % per_node != 0)
    return Status::Invalid(key, c.hybrid_shard_name + " shards within a node: the DP group (" +
                                    std::to_string(group) + " ranks) must be whole nodes of " +
                                    std::to_string(per_node));
  s.dist_opt_instances = static_cast<int>(group / per_node);
  c.assumed.push_back({key, c.hybrid_shard_name,
                       "sharded within each node (" + std::to_string(per_node) +
                           " ranks), replicated across " + std::to_string(s.dist_opt_instances) +
                           " nodes: dist_opt_instances " + std::to_string(s.dist_opt_instances)});
  s = NormaliseStrategy(s);
  return Status::Ok();
}

}  // namespace trainsim
