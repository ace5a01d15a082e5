// `simulate --framework NAME`: a framework profile's defaults (data/frameworks.json) for the
// strategy settings no input gave, as validate fills a case's null fields from its source's
// profile, each listed as an assumption.
#include <algorithm>
#include <cctype>
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
      {"attention_kernel", std::string(AttentionImplName(detail::ProfileAttention(fw, hw)))},
      {"use_flash_sdp", Bool(fw.flash_attention)},
      {"host_issue_us_per_kernel", detail::NumberText(fw.exec.host_issue_us_per_kernel)},
  };
  if (fw.exec.zero3_fetch_us > 0)
    out["zero3_fetch_us"] = detail::NumberText(fw.exec.zero3_fetch_us);
  if (fw.recompute == "full" || fw.recompute == "none") out["recompute"] = fw.recompute;
  // mbs 0 (MaxText, gradient_accumulation_steps 1): the local batch in one micro-batch.
  if (fw.mbs == 0 && s.gbs > 0 && s.dp() > 0 && s.gbs % s.dp() == 0) {
    out["micro_batch_size"] = std::to_string(s.gbs / s.dp());
    out["micro_batch_num"] = "1";
  }
  if (!fw.schedule.empty() && s.pp > 1 && s.vpp <= 1) out["pipeline_schedule"] = fw.schedule;
  if (fw.etp_one) out["etp_size"] = "1";
  // Eager module code: the profile's, or its stack's eager default (torchtitan compiles only
  // when asked: eager_unless_compiled).
  out["eager_modules"] = Bool(fw.exec.eager_modules || fw.eager_unless_compiled);
  if (s.pp > 1 && fw.pp_fsdp_unsharded && fw.zero >= 2) out["zero_state"] = "1";
  if (fw.router_bytes > 0) out["moe_router_dtype"] = fw.router_bytes == 8 ? "fp64" : "fp32";
  if (!fw.grouped_gemm) out["moe_grouped_gemm"] = "false";
  if (!fw.permute_fusion) out["moe_permute_fusion"] = "false";
  // What "selective" means in the stack (torchtitan: its per-op policy).
  if (s.recompute == Recompute::kSelective && !fw.selective_modules.empty())
    out["recompute_modules"] = fw.selective_modules;
  return out;
}

// The execution habits that have no strategy key (no input can give them).
void ApplyExecution(const detail::Framework& fw, Strategy& s) {
  s.exec.optimizer_impl = fw.exec.optimizer_impl;
  s.exec.muon_distributed = fw.exec.muon_distributed;
  s.exec.fused_elementwise = fw.exec.fused_elementwise;
  s.exec.dequant = fw.exec.dequant;
  s.exec.grad_set_to_none = fw.exec.grad_set_to_none;
  s.exec.loss_bytes_per_logit = fw.exec.loss_bytes_per_logit;
  s.exec.loss_fp32_by_autocast = fw.exec.loss_fp32_by_autocast;
  s.exec.zero_reduce_bucket_elems = fw.exec.zero_reduce_bucket_elems;
  s.exec.adam_foreach_temporaries = fw.exec.adam_foreach_temporaries;
  s.exec.reference_swap = fw.exec.reference_swap;
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
  if (key == "eager_modules") return value == "true";
  return true;
}

}  // namespace

std::vector<std::string> FrameworkProfileIds() {
  std::vector<std::string> ids;
  for (const detail::Framework& f : detail::Frameworks()) ids.push_back(f.id);
  return ids;
}

std::vector<std::string> FrameworkProfileNames() {
  std::vector<std::string> names = FrameworkProfileIds();
  for (const detail::Framework& f : detail::Frameworks())
    for (std::string n : f.names) {
      std::transform(n.begin(), n.end(), n.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      if (std::find(names.begin(), names.end(), n) == names.end()) names.push_back(n);
    }
  return names;
}

Result<std::vector<Assumption>> ApplyFrameworkProfile(std::string_view name, const HardwareSpec& hw,
                                                      Strategy& s, StrategyKeys& given) {
  // An id or a name of its `frameworks` list (a release: megatron-bridge-26.04.01).
  const detail::Framework* fw = detail::NamedProfile(std::string(name));
  if (!fw) {
    std::string ids;
    for (const std::string& id : FrameworkProfileIds()) ids += (ids.empty() ? "" : ", ") + id;
    return Status::Invalid("framework", "unknown framework profile '" + std::string(name) +
                                            "' (profiles: " + ids + ")");
  }
  // Its settings for the GPU's class where the profile has them (by_gpu_class).
  fw = &detail::ForHardware(*fw, hw);
  const std::string why =
      "profile " + fw->id + " (--framework" +
      (fw->gpu_class.empty() ? "" : "; its " + fw->gpu_class + " settings, " + hw.id) + ")";
  std::map<std::string, std::string> take;
  std::vector<Assumption> out;
  for (const auto& [key, value] : ProfileSettings(*fw, hw, s)) {
    if (given.count(key)) continue;
    take[key] = value;
  }
  // One micro-batch (profile mbs 0) only where neither the micro-batch size nor their number
  // was given: either one keeps the given or default global batch.
  if (!take.count("micro_batch_size") || !take.count("micro_batch_num")) {
    take.erase("micro_batch_size");
    take.erase("micro_batch_num");
  }
  if (Status st = ApplyStrategySettings(s, take, false); !st.ok()) return st;
  for (const auto& [key, value] : take)
    if (Matters(key, value, s)) out.push_back({key, value, why});
  // Given by the profile: "profile:<key>" tells the report's inert-settings check
  // (front_end.cc, ListInertSettings) that the stack, not the user, chose the value.
  for (const auto& [key, value] : take) {
    given.insert(key);
    given.insert("profile:" + key);
  }
  ApplyExecution(*fw, s);
  const char* impl = fw->exec.optimizer_impl == OptimizerImpl::kForeach     ? "foreach"
                     : fw->exec.optimizer_impl == OptimizerImpl::kPerTensor ? "per-tensor"
                                                                            : "fused";
  out.push_back({"execution", fw->id,
                 why + ": optimizer " + impl + ", fused element-wise " +
                     Bool(fw->exec.fused_elementwise) + ", gradients freed each step " +
                     Bool(fw->exec.grad_set_to_none)});
  // Its memory habits (data/frameworks.json derives each from the stack's code).
  if (fw->exec.loss_bytes_per_logit > 0)
    out.push_back({"loss_bytes_per_logit", detail::NumberText(fw->exec.loss_bytes_per_logit),
                   why + (fw->exec.loss_fp32_by_autocast
                              ? ": the unfused loss under autocast (6 under DeepSpeed ZeRO)"
                              : ": the unfused loss at its peak")});
  if (fw->exec.zero_reduce_bucket_elems > 0)
    out.push_back({"deepspeed_reduce_bucket_elems",
                   detail::NumberText(fw->exec.zero_reduce_bucket_elems),
                   why + ": two 16-bit gradient buckets under ZeRO-1/2"});
  if (fw->exec.adam_foreach_temporaries > 0)
    out.push_back({"adam_foreach_temporaries", std::to_string(fw->exec.adam_foreach_temporaries),
                   why + ": torch AdamW's foreach temporaries at the step"});
  s = NormaliseStrategy(s);
  return out;
}

}  // namespace trainsim
