// The search space: per-dimension choices and the mixed-radix index that enumerates them.
#include <algorithm>
#include <string>
#include <vector>

#include "trainsim/search.h"

namespace trainsim {
namespace {

// A list given twice ("--method lora,lora") is searched once: the first occurrence keeps its place.
template <typename T>
std::vector<T> Distinct(const std::vector<T>& v) {
  std::vector<T> out;
  for (const T& x : v)
    if (std::find(out.begin(), out.end(), x) == out.end()) out.push_back(x);
  return out;
}

constexpr int kOrderChoices = 4;
constexpr int kScheduleChoices = 3;  // 1F1B (interleaved when vpp > 1), ZB-H1, DualPipe

std::vector<int> Divisors(int n, int cap) {
  std::vector<int> out;
  for (int d = 1; d <= std::min(n, cap); ++d)
    if (n % d == 0) out.push_back(d);
  return out;
}

}  // namespace

Result<Objective> ParseObjective(std::string_view s) {
  if (s == "time") return Objective::kTime;
  if (s == "cost") return Objective::kCost;
  if (s == "memory") return Objective::kMemory;
  return Status::Invalid("objective: must be time, cost or memory, got '" + std::string(s) + "'");
}

SearchSpace::SearchSpace(const ModelSpec& m, const HardwareSpec& hw, const SearchOptions& o)
    : moe_(m.is_moe()), offload_(o.offload), orders_(o.orders), layers_(m.layers) {
  const int g = std::max(1, o.gpus);
  // TP stays inside the scale-up domain (Megatron practice) and divides the heads.
  for (int d : Divisors(g, std::min(hw.scaleup_domain, 64)))
    if (m.heads % d == 0 && (m.is_mla() || m.kv_heads % d == 0)) tp_.push_back(d);
  for (int d : {1, 2, 4, 8, 16, 32})
    if (g % d == 0 && (d == 1 || o.seq % (2 * d) == 0)) cp_.push_back(d);
  pp_ = Divisors(g, std::min(m.layers, 128));
  for (int v = 1; v <= std::max(1, o.max_vpp); ++v) vpp_.push_back(v);
  ep_ = moe_ ? Divisors(m.moe.num_experts, std::min(g, 512)) : std::vector<int>{1};
  if (moe_) {
    std::vector<int> keep;
    for (int e : ep_)
      if (g % e == 0) keep.push_back(e);
    ep_ = keep;
  }
  for (int b : {1, 2, 4, 8, 16})
    if (o.gbs % b == 0 && (!o.coarse || b <= 2)) mbs_.push_back(b);
  if (mbs_.empty()) mbs_.push_back(1);
  if (o.coarse) {  // SearchOptions::coarse
    zero_ = {1, 3};
    recompute_ = {0, 1, 3};
    sp_choices_ = 1;
    schedule_choices_ = 1;
  }
  methods_ = Distinct(o.methods.empty() ? std::vector<FtMethod>{o.workload.method} : o.methods);
  ranks_ = Distinct(o.lora_ranks.empty() ? std::vector<int>{o.workload.lora_rank} : o.lora_ranks);
  base_ = Combine(o.workload, Layout{});
  base_.micro_batch_num = 0;
  base_.exec.optimizer = o.optimizer;
  base_.master_weights = o.master_weights;
  base_.world_size = g;
  base_.gbs = o.gbs;
  base_.seq = o.seq;
  base_.dtype = o.dtype;
  size_ = 1;
  for (size_t n : {tp_.size(), cp_.size(), pp_.size(), vpp_.size(), ep_.size(), mbs_.size(),
                   methods_.size(), ranks_.size()})
    size_ *= n;
  size_ *= (moe_ ? 2 : 1) * zero_.size() * recompute_.size() * sp_choices_ * (offload_ ? 2 : 1) *
           (orders_ ? kOrderChoices : 1) * schedule_choices_;
}

Strategy SearchSpace::At(uint64_t index, const char** duplicate) const {
  *duplicate = nullptr;
  auto take = [&](uint64_t n) {
    const uint64_t d = index % n;
    index /= n;
    return static_cast<int>(d);
  };
  Strategy s = base_;
  s.tp = tp_[take(tp_.size())];
  s.cp = cp_[take(cp_.size())];
  s.pp = pp_[take(pp_.size())];
  s.vpp = vpp_[take(vpp_.size())];
  s.ep = ep_[take(ep_.size())];
  const int etp_choice = moe_ ? take(2) : 0;
  s.mbs = mbs_[take(mbs_.size())];
  s.zero = zero_[take(zero_.size())];
  const int rc = recompute_[take(recompute_.size())];
  const bool sp_off = sp_choices_ > 1 && take(2) == 1;
  s.offload_optimizer = offload_ ? take(2) == 1 : false;
  const int order = orders_ ? take(kOrderChoices) : 0;
  const int sched = schedule_choices_ > 1 ? take(kScheduleChoices) : 0;
  // The fine-tuning dimensions vary slowest: each method's strategies stay together.
  s.method = methods_[take(methods_.size())];
  const size_t rank = take(ranks_.size());
  s.lora_rank = ranks_[rank];

  s.etp = etp_choice == 0 ? 1 : s.tp;
  s.sp = s.tp > 1 && !sp_off;
  s.fsdp = false;
  s.schedule = s.vpp > 1    ? PipelineSchedule::kInterleaved
               : sched == 1 ? PipelineSchedule::kZeroBubbleH1
               : sched == 2 ? PipelineSchedule::kDualPipe
                            : PipelineSchedule::k1F1B;
  s.uneven_pipeline = layers_ % (s.pp * s.vpp) != 0;
  s.order = static_cast<RankOrder>(order);
  switch (rc) {
    case 0:
      s.recompute = Recompute::kNone;
      break;
    case 1:
      s.recompute = Recompute::kSelective;
      s.recompute_modules = kRecomputeCoreAttn;
      break;
    case 2:
      s.recompute = Recompute::kSelective;
      s.recompute_modules =
          kRecomputeCoreAttn | kRecomputeLayerNorm | kRecomputeMlaUpProj | kRecomputeMoeAct;
      break;
    case 3:
      s.recompute = Recompute::kFull;
      s.recompute_layers = -1;
      break;
    default:
      s.recompute = Recompute::kFull;
      s.recompute_layers = std::max(1, layers_ / s.pp / 2);
      break;
  }
  if (sp_off && s.tp == 1) *duplicate = "duplicate";
  if (etp_choice == 1 && s.tp == 1) *duplicate = "duplicate";
  if (rc == 4 && layers_ / s.pp < 2) *duplicate = "duplicate";
  if (s.offload_optimizer && s.zero == 0) *duplicate = "duplicate";  // offload needs ZeRO >= 1
  if (sched != 0 && (s.vpp > 1 || s.pp == 1)) *duplicate = "duplicate";
  if (rank != 0 && !UsesLoraRank(s.method)) *duplicate = "duplicate";
  return s;
}

}  // namespace trainsim
