// MegatronArgs() and DescribeStrategy(): a strategy as Megatron-LM arguments and as one line.
#include <sstream>
#include <string>
#include <utility>

#include "trainsim/search.h"

namespace trainsim {

std::string MegatronArgs(const Strategy& s) {
  std::ostringstream o;
  o << "--tensor-model-parallel-size " << s.tp << " --pipeline-model-parallel-size " << s.pp;
  if (s.vpp > 1) o << " --virtual-pipeline-model-parallel-size " << s.vpp;
  if (s.cp > 1) o << " --context-parallel-size " << s.cp;
  if (s.ep > 1) o << " --expert-model-parallel-size " << s.ep;
  if (s.ep > 1) o << " --expert-tensor-parallel-size " << s.expert_tp();
  if (s.sp && s.tp > 1) o << " --sequence-parallel";
  if (s.zero >= 1 && s.zero <= 2) o << " --use-distributed-optimizer";
  if (s.zero >= 3) o << " --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads_params";
  if (s.overlap_grad_reduce) o << " --overlap-grad-reduce";
  if (s.overlap_param_gather && s.zero >= 1) o << " --overlap-param-gather";
  if (s.tp_comm_overlap) o << " --tp-comm-overlap";
  o << " --micro-batch-size " << s.mbs << " --global-batch-size " << s.gbs << " --seq-length "
    << s.seq;
  if (s.recompute == Recompute::kFull) {
    if (s.recompute_layers > 0)
      o << " --recompute-granularity full --recompute-method block --recompute-num-layers "
        << s.recompute_layers;
    else
      o << " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1";
  } else if (s.recompute == Recompute::kSelective) {
    o << " --recompute-granularity selective --recompute-modules";
    const std::pair<int, const char*> names[] = {{kRecomputeCoreAttn, "core_attn"},
                                                 {kRecomputeLayerNorm, "layernorm"},
                                                 {kRecomputeMlaUpProj, "mla_up_proj"},
                                                 {kRecomputeMlp, "mlp"},
                                                 {kRecomputeMoeAct, "moe_act"},
                                                 {kRecomputeMoe, "moe"},
                                                 {kRecomputeSharedExperts, "shared_experts"}};
    for (const auto& [bit, name] : names)
      if (s.recompute_modules & bit) o << " " << name;
  }
  if (s.uneven_pipeline)
    o << " --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split";
  if (s.offload_optimizer) o << " --optimizer-cpu-offload";
  // ZB-H1 and DualPipe have no Megatron-LM flag; DescribeStrategy names them.
  switch (s.dtype) {
    case DType::kFp16:
      o << " --fp16";
      break;
    case DType::kFp8:
      o << " --bf16 --fp8-format hybrid";
      break;
    case DType::kMxfp8:
      o << " --bf16 --fp8-format e4m3 --fp8-recipe mxfp8";
      break;
    case DType::kFp4:
      o << " --bf16 --fp4-format e2m1";
      break;
    default:
      o << " --bf16";
      break;
  }
  return o.str();
}

std::string DescribeStrategy(const Strategy& s) {
  std::ostringstream o;
  o << "tp " << s.tp << " pp " << s.pp << " vpp " << s.vpp << " cp " << s.cp;
  if (s.ep > 1) o << " ep " << s.ep << " etp " << s.expert_tp();
  o << " dp " << s.dp() << " mbs " << s.mbs << " zero " << s.zero << (s.sp && s.tp > 1 ? " sp" : "")
    << (s.recompute == Recompute::kNone ? ""
        : s.recompute == Recompute::kSelective
            ? (s.recompute_modules == kRecomputeCoreAttn ? " rc=selective" : " rc=selective+")
        : s.recompute_layers > 0 ? " rc=full/" + std::to_string(s.recompute_layers)
                                 : std::string(" rc=full"))
    << (s.offload_optimizer ? " offload" : "")
    << (s.schedule == PipelineSchedule::kZeroBubbleH1 ? " zb-h1"
        : s.schedule == PipelineSchedule::kDualPipe   ? " dualpipe"
                                                      : "")
    << (s.order != RankOrder::kTpCpDpPp ? " order=" + std::string(RankOrderName(s.order)) : "");
  return o.str();
}

}  // namespace trainsim
