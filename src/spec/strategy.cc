// Strategy validation: Megatron-LM's divisibility rules, each failure naming the field.
#include "trainsim/strategy.h"

#include <algorithm>
#include <string>

#include "spec/pipeline_split.h"
#include "spec/workload_bounds.h"
#include "trainsim/limits.h"
#include "trainsim/model.h"

namespace trainsim {
namespace {

std::string S(long long x) {
  return std::to_string(x);
}

struct Max {
  const char* name;
  long long v, max;
};

}  // namespace

namespace detail {

// The sizes of what is trained (issue 11: 2^31 - 1 of these were costed, or wrapped the sums
// formed from them): lengths as seq, generation GPUs as world_size. search checks them once
// for every layout it enumerates (CheckWorkloadRules), simulate through ValidateStrategy.
Status CheckWorkloadBounds(const Strategy& s) {
  for (Max x : {Max{"seq", s.seq, limits::kMaxSeqLen}, Max{"gbs", s.gbs, limits::kMaxGlobalBatch},
                Max{"prompt_len", s.prompt_len, limits::kMaxSeqLen},
                Max{"response_len", s.response_len, limits::kMaxSeqLen},
                Max{"max_response_len", s.max_response_len, limits::kMaxSeqLen},
                Max{"mean_seq", s.mean_seq, limits::kMaxSeqLen},
                Max{"max_seq", s.max_seq, limits::kMaxSeqLen},
                Max{"virtual_tokens", s.virtual_tokens, limits::kMaxSeqLen},
                Max{"group_size", s.group_size, limits::kMaxGlobalBatch},
                Max{"rollout_gpus", s.rollout_gpus, limits::kMaxWorldSize},
                Max{"rollout_tp", s.rollout_tp, limits::kMaxParallelDegree},
                Max{"rollout_pp", s.rollout_pp, limits::kMaxParallelDegree}})
    if (x.v > x.max) return Status::Invalid(x.name, "must be <= " + S(x.max) + ", got " + S(x.v));
  if (1LL * s.group_size * s.gbs > limits::kMaxGlobalBatch)
    return Status::Invalid("group_size",
                           "x global_batch_size (" + S(1LL * s.group_size * s.gbs) +
                               " responses a step) must be <= " + S(limits::kMaxGlobalBatch));
  return Status::Ok();
}

}  // namespace detail

namespace {

// The input limits of trainsim/limits.h: with every degree <= 2^20, world_size <= 2^24 and the
// batch sizes bounded, every product below (tp*pp*cp, mbs*dp, micro_batch_num*mbs*dp) is
// formed in int64 without overflow, and the derived global batch fits an int.
Status CheckUpperBounds(const Strategy& s) {
  for (Max x :
       {Max{"world_size", s.world_size, limits::kMaxWorldSize},
        Max{"tp", s.tp, limits::kMaxParallelDegree}, Max{"pp", s.pp, limits::kMaxParallelDegree},
        Max{"vpp", s.vpp, limits::kMaxParallelDegree}, Max{"cp", s.cp, limits::kMaxParallelDegree},
        Max{"ep", s.ep, limits::kMaxParallelDegree}, Max{"etp", s.etp, limits::kMaxParallelDegree},
        Max{"mbs", s.mbs, limits::kMaxMicroBatch},
        Max{"micro_batch_num", s.micro_batch_num, limits::kMaxMicroBatchNum}})
    if (x.v > x.max) return Status::Invalid(x.name, "must be <= " + S(x.max) + ", got " + S(x.v));
  if (Status st = detail::CheckWorkloadBounds(s); !st.ok()) return st;
  const double host_us = s.exec.host_issue_us_per_kernel;
  if (!(host_us >= 0 && host_us <= 1e6))
    return Status::Invalid("host_issue_us_per_kernel", "must be in [0, 1e6]");
  if (s.exec.muon_ns_steps < 0 || s.exec.muon_ns_steps > 1000)
    return Status::Invalid("muon_ns_steps", "must be in [0, 1000], got " + S(s.exec.muon_ns_steps));
  return Status::Ok();
}

}  // namespace

Status ValidateStrategy(const Strategy& s, const ModelSpec& m) {
  auto bad = [](const std::string& field, const std::string& rule) {
    return Status::Invalid(field + ": " + rule);
  };
  struct Pos {
    const char* name;
    long long v;
  };
  for (Pos p :
       {Pos{"world_size", s.world_size}, Pos{"tp", s.tp}, Pos{"pp", s.pp}, Pos{"vpp", s.vpp},
        Pos{"cp", s.cp}, Pos{"ep", s.ep}, Pos{"seq", s.seq}, Pos{"mbs", s.mbs}})
    if (p.v < 1) return bad(p.name, "must be >= 1, got " + S(p.v));
  if (s.etp < 0) return bad("etp", "must be >= 1 (0 = same as tp), got " + S(s.etp));
  if (Status st = CheckUpperBounds(s); !st.ok()) return st;
  // Megatron-LM's TransformerConfig refuses --moe-pad-expert-input-to-capacity without
  // --moe-expert-capacity-factor (there is no capacity to pad to): not dropped without a word.
  if (s.moe_pad_to_capacity && !(s.moe_capacity_factor > 0))
    return bad("moe_pad_to_capacity", "needs moe_capacity_factor (no capacity to pad to)");
  if (s.gbs < 0) return bad("gbs", "must be >= 1, got " + S(s.gbs));
  if (s.micro_batch_num < 0) return bad("micro_batch_num", "must be >= 1");
  if (!(s.ep_comm_overlap >= 0 && s.ep_comm_overlap <= 1))
    return bad("ep_comm_overlap", "must be a fraction in [0, 1]");
  if (!(s.optimizer_offload_fraction > 0 && s.optimizer_offload_fraction <= 1))
    return bad("optimizer_offload_fraction", "must be a fraction in (0, 1]");
  if (s.zero < 0 || s.zero > 3) return bad("zero", "must be 0, 1, 2 or 3, got " + S(s.zero));
  if (s.fsdp && s.zero < 2) return bad("fsdp", "FSDP shards parameters: zero must be 2 or 3");
  // tp*pp*cp step by step, stopping once it exceeds the world size (the full product of three
  // ints can overflow even 64 bits, and a wrapped 0 would divide by zero).
  long long model_par = 1;
  for (int x : {s.tp, s.pp, s.cp}) {
    model_par *= x;
    if (model_par > s.world_size)
      return bad("world_size", "must be divisible by tp*pp*cp (" + S(s.world_size) +
                                   " < tp*pp*cp = " + S(s.tp) + "*" + S(s.pp) + "*" + S(s.cp) +
                                   ")");
  }
  if (s.world_size % model_par != 0)
    return bad("world_size",
               "must be divisible by tp*pp*cp (" + S(s.world_size) + " vs " + S(model_par) + ")");
  if (m.heads % s.tp != 0)
    return bad(
        "tp", "num_attention_heads (" + S(m.heads) + ") must be divisible by tp (" + S(s.tp) + ")");
  if (!m.is_mla() && m.kv_heads % s.tp != 0)
    return bad("tp", "num_key_value_heads (" + S(m.kv_heads) + ") must be divisible by tp (" +
                         S(s.tp) + ")");
  if (s.vpp > 1 && s.pp == 1) return bad("vpp", "interleaving needs pp > 1");
  if (Status st = detail::CheckPipelineSplit(s, m); !st.ok()) return st;
  if (s.ep > 1 && !m.is_moe()) return bad("ep", "expert parallelism needs an MoE model");
  if (m.is_moe()) {
    if (m.moe.num_experts % s.ep != 0)
      return bad("ep", "num_experts (" + S(m.moe.num_experts) + ") must be divisible by ep (" +
                           S(s.ep) + ")");
    const long long dense_ranks = 1LL * s.tp * s.cp * s.dp();
    const long long expert_ranks = 1LL * s.ep * s.expert_tp();
    if (dense_ranks % expert_ranks != 0)
      return bad("ep", "tp*cp*dp (" + S(dense_ranks) + ") must be divisible by ep*etp (" +
                           S(expert_ranks) + ")");
  } else if (s.etp > 0 && (1LL * s.tp * s.cp * s.dp()) % s.etp != 0) {
    // Megatron builds the expert groups (world / (pp*ep*etp)) for dense models too.
    return bad("etp", "tp*cp*dp (" + S(1LL * s.tp * s.cp * s.dp()) +
                          ") must be divisible by etp (" + S(s.etp) + ")");
  }
  if (s.seq % s.cp != 0) return bad("cp", "seq (" + S(s.seq) + ") must be divisible by cp");
  if (s.cp > 1 && s.seq % (2LL * s.cp) != 0)
    return bad("cp", "seq must be divisible by 2*cp for causal load balancing");
  if (s.sp && s.tp > 1 && (s.seq / s.cp) % s.tp != 0)
    return bad("sp", "seq/cp must be divisible by tp with sequence parallelism");
  if (s.gbs == 0 && s.micro_batch_num == 0)
    return bad("gbs", "give a global batch size (gbs) or micro_batch_num");
  if (s.gbs > 0 && s.micro_batch_num == 0 && s.gbs % (1LL * s.mbs * s.dp()) != 0)
    return bad("gbs",
               "must be divisible by mbs*dp (" + S(s.gbs) + " vs " + S(1LL * s.mbs * s.dp()) + ")");
  // The global batch derived from micro_batch_num (each factor is bounded; their product may
  // still pass 2^63, so the bound is checked in double first).
  if (s.micro_batch_num > 0 &&
      static_cast<double>(s.micro_batch_num) * s.mbs * s.dp() > limits::kMaxGlobalBatch)
    return bad("micro_batch_num",
               "micro_batch_num*mbs*dp must be <= " + S(limits::kMaxGlobalBatch));
  if (s.gbs > 0 && s.micro_batch_num > 0 && 1LL * s.micro_batch_num * s.mbs * s.dp() != s.gbs)
    return bad("gbs", "must equal micro_batch_num*mbs*dp");
  if ((s.schedule == PipelineSchedule::kZeroBubbleH1 ||
       s.schedule == PipelineSchedule::kDualPipe) &&
      s.vpp > 1)
    return bad("schedule", "zb_h1 and dualpipe need vpp 1, got vpp " + S(s.vpp));
  if (s.schedule == PipelineSchedule::kDualPipe &&
      (s.pp % 2 != 0 || s.num_micro_batches() < 2LL * s.pp))
    return bad("schedule", "dualpipe needs an even pp and at least 2*pp micro-batches (pp " +
                               S(s.pp) + ", micro-batches " + S(s.num_micro_batches()) + ")");
  if (s.vpp > 1 && s.num_micro_batches() % s.pp != 0)
    return bad("vpp", "interleaving needs the micro-batch count (" + S(s.num_micro_batches()) +
                          ") to be divisible by pp");
  // Megatron-LM: the DP x CP group and the expert-DP group split into
  // --num-distributed-optimizer-instances replicas (parallel_state.py: intra_partial_data_
  // parallel_size = dp*cp // N; "Expert data parallel size should be divisible by partial
  // DistOpt shard factor").
  if (s.dist_opt_instances < 1 || (1LL * s.dp() * s.cp) % s.dist_opt_instances != 0)
    return bad("dist_opt_instances", "must divide dp*cp (" + S(1LL * s.dp() * s.cp) + "), got " +
                                         S(s.dist_opt_instances));
  if (s.expert_dp() % s.dist_opt_instances != 0)
    return bad("dist_opt_instances", "must divide the expert-DP size (" + S(s.expert_dp()) +
                                         "), got " + S(s.dist_opt_instances));
  // ZeRO++ (DeepSpeed runtime/zero/stage3.py): hpZ's secondary partition and the quantized
  // collectives act on ZeRO stage 3; the secondary group lies within one sharding group.
  const long long shard_group = 1LL * s.dp() * s.cp / std::max(1, s.dist_opt_instances);
  if (s.zero_hpz_size < 1 || (s.zero_hpz_size > 1 && shard_group % s.zero_hpz_size != 0))
    return bad("zero_hpz_size", "must divide the sharding group (dp*cp / dist_opt_instances = " +
                                    S(shard_group) + "), got " + S(s.zero_hpz_size));
  if ((s.zero_hpz_size > 1 || s.zero_quant_weights || s.zero_quant_grads) && s.zero < 3)
    return bad(s.zero_hpz_size > 1    ? "zero_hpz_size"
               : s.zero_quant_weights ? "zero_quant_weights"
                                      : "zero_quant_grads",
               "ZeRO++ acts on ZeRO stage 3 (zero_state 3 or fsdp), got zero_state " + S(s.zero));
  if (!(s.optimizer_state_bytes > 0)) return bad("optimizer_state_bytes", "must be > 0");
  if (s.recompute_layers > m.layers / s.pp)
    return bad("recompute_layers", "must be <= layers per stage (" + S(m.layers / s.pp) + ")");
  return Status::Ok();
}

}  // namespace trainsim
