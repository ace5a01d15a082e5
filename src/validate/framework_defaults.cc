// `simulate --framework NAME`: a framework profile's defaults (data/frameworks.json) for the
// strategy settings no input gave, as validate fills a case's null fields from its source's
// profile, each listed as an assumption.
#include <map>
#include <string>

#include "spec/field_text.h"
#include "trainsim/front_end.h"
#include "validate/framework_profile.h"

namespace trainsim {
namespace {

std::string Bool(bool b) {
  return b ? "true" : "false";
}

// The profile's value of every strategy key it decides (canonical key -> text).
std::map<std::string, std::string> ProfileSettings(const detail::Framework& fw,
                                                   const HardwareSpec& hw, const Strategy& s) {
  std::map<std::string, std::string> out = {
      {"enable_sequence_parallel", Bool(fw.sp)},
      {"zero_state", std::to_string(fw.zero)},
      {"overlap_grad_reduce", Bool(fw.overlap_grad)},
      {"overlap_param_gather", Bool(fw.overlap_param)},
      {"tp_comm_overlap", Bool(fw.tp_overlap && detail::ScaleUpAllowsTpOverlap(hw, s.tp))},
      {"cp_comm_type", fw.cp_a2a ? "a2a" : "p2p"},
      {"fused_cross_entropy", Bool(fw.fused_ce)},
      {"uneven_pipeline", Bool(fw.uneven)},
      {"ep_comm_overlap", detail::NumberText(fw.ep_overlap)},
      {"moe_dedup_dispatch", Bool(fw.dedup)},
      {"attention_kernel", std::string(AttentionImplName(fw.attention))},
      {"use_flash_sdp", Bool(fw.flash_attention)},
      {"host_issue_us_per_kernel", detail::NumberText(fw.exec.host_issue_us_per_kernel)},
  };
  if (fw.exec.zero3_fetch_us > 0)
    out["zero3_fetch_us"] = detail::NumberText(fw.exec.zero3_fetch_us);
  if (fw.recompute == "full" || fw.recompute == "none") out["recompute"] = fw.recompute;
  if (!fw.schedule.empty() && s.pp > 1 && s.vpp <= 1) out["pipeline_schedule"] = fw.schedule;
  if (fw.etp_one) out["etp_size"] = "1";
  return out;
}

// The execution habits that have no strategy key (no input can give them).
void ApplyExecution(const detail::Framework& fw, Strategy& s) {
  s.exec.optimizer_impl = fw.exec.optimizer_impl;
  s.exec.muon_distributed = fw.exec.muon_distributed;
  s.exec.fused_elementwise = fw.exec.fused_elementwise;
  s.exec.dequant = fw.exec.dequant;
  s.exec.grad_set_to_none = fw.exec.grad_set_to_none;
  s.exec.eager_modules = fw.exec.eager_modules;
}

// Whether a setting changes this strategy's step, so that the report lists it (as validate's
// recorder does); every setting is applied either way.
bool Matters(const std::string& key, const std::string& value, const Strategy& s) {
  if (key == "cp_comm_type") return s.cp > 1;
  if (key == "ep_comm_overlap" || key == "moe_dedup_dispatch") return s.ep > 1;
  if (key == "tp_comm_overlap" || key == "enable_sequence_parallel") return s.tp > 1;
  if (key == "uneven_pipeline" || key == "pipeline_schedule") return s.pp > 1;
  if (key == "overlap_grad_reduce") return s.dp() > 1;
  if (key == "overlap_param_gather") return s.dp() > 1 && s.zero >= 1;
  if (key == "use_flash_sdp") return value == "false";
  return true;
}

}  // namespace

std::vector<std::string> FrameworkProfileIds() {
  std::vector<std::string> ids;
  for (const detail::Framework& f : detail::Frameworks()) ids.push_back(f.id);
  return ids;
}

Result<std::vector<Assumption>> ApplyFrameworkProfile(std::string_view name, const HardwareSpec& hw,
                                                      Strategy& s, StrategyKeys& given) {
  const detail::Framework* fw = nullptr;
  for (const detail::Framework& f : detail::Frameworks())
    if (f.id == name) fw = &f;
  if (!fw) {
    std::string ids;
    for (const std::string& id : FrameworkProfileIds()) ids += (ids.empty() ? "" : ", ") + id;
    return Status::Invalid("framework", "unknown framework profile '" + std::string(name) +
                                            "' (profiles: " + ids + ")");
  }
  const std::string why = "profile " + fw->id + " (--framework)";
  std::map<std::string, std::string> take;
  std::vector<Assumption> out;
  for (const auto& [key, value] : ProfileSettings(*fw, hw, s)) {
    if (given.count(key)) continue;
    take[key] = value;
  }
  if (Status st = ApplyStrategySettings(s, take, false); !st.ok()) return st;
  for (const auto& [key, value] : take)
    if (Matters(key, value, s)) out.push_back({key, value, why});
  for (const auto& [key, value] : take) given.insert(key);
  ApplyExecution(*fw, s);
  const char* impl = fw->exec.optimizer_impl == OptimizerImpl::kForeach     ? "foreach"
                     : fw->exec.optimizer_impl == OptimizerImpl::kPerTensor ? "per-tensor"
                                                                            : "fused";
  out.push_back({"execution", fw->id,
                 why + ": optimizer " + impl + ", fused element-wise " +
                     Bool(fw->exec.fused_elementwise) + ", eager module code " +
                     Bool(fw->exec.eager_modules) + ", gradients freed each step " +
                     Bool(fw->exec.grad_set_to_none)});
  s = NormaliseStrategy(s);
  return out;
}

}  // namespace trainsim
