// MegatronArgs() and DescribeStrategy(): a strategy as Megatron-LM arguments and as one line.
#include <sstream>
#include <string>
#include <utility>

#include "trainsim/schema.h"
#include "trainsim/search.h"

namespace trainsim {

std::string MegatronArgs(const Strategy& s) {
  return FormatMegatronArgs(s);  // driven by the Strategy schema (trainsim/schema.h)
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
  // What trains (fine-tuning; pre-training and full fine-tuning print nothing).
  if (s.method != FtMethod::kFull) {
    o << " " << FtMethodName(s.method);
    if (UsesLoraRank(s.method)) o << " r" << s.lora_rank;
  }
  return o.str();
}

}  // namespace trainsim
