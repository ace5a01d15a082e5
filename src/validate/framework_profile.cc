// Framework profiles: loading data/frameworks.json and picking one for a case.
#include "validate/framework_profile.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string_view>

#include "spec/embedded.h"

namespace trainsim::detail {
namespace {

using nlohmann::json;

// PCIe 5.0 x16, bytes/s per direction: a scale-up link no faster than this is PCIe.
constexpr double kPcie5x16BytesPerS = 64e9;

// A profile's execution keys: host_issue_us_per_kernel, zero3_fetch_us, optimizer_impl (fused |
// foreach | per_tensor), muon_distributed, fused_elementwise, qlora_dequant (fused | torch_unpack),
// grad_set_to_none, eager_modules, loss_bytes_per_logit, loss_fp32_by_autocast,
// deepspeed_reduce_bucket_elems, adam_foreach_temporaries, rl_reference_swap.
void ReadExecution(const json& f, Execution& e) {
  e.host_issue_us_per_kernel = f.value("host_issue_us_per_kernel", 0.0);
  e.zero3_fetch_us = f.value("zero3_fetch_us", 0.0);
  const std::string impl = f.value("optimizer_impl", "fused");
  e.optimizer_impl = impl == "foreach"      ? OptimizerImpl::kForeach
                     : impl == "per_tensor" ? OptimizerImpl::kPerTensor
                                            : OptimizerImpl::kFused;
  e.muon_distributed = f.value("muon_distributed", true);
  e.fused_elementwise = f.value("fused_elementwise", false);
  e.dequant = f.value("qlora_dequant", "fused") == "torch_unpack" ? DequantKernel::kTorchUnpack
                                                                  : DequantKernel::kFused;
  e.grad_set_to_none = f.value("grad_set_to_none", false);
  e.eager_modules = f.value("eager_modules", false);
  e.loss_bytes_per_logit = f.value("loss_bytes_per_logit", 0.0);
  e.loss_fp32_by_autocast = f.value("loss_fp32_by_autocast", false);
  e.zero_reduce_bucket_elems = f.value("deepspeed_reduce_bucket_elems", 0.0);
  e.adam_foreach_temporaries = f.value("adam_foreach_temporaries", 0);
  e.reference_swap = f.value("rl_reference_swap", true);
}

Framework ReadProfile(const json& f) {
  Framework w;
  w.id = f.value("id", "");
  for (const json& m : f.value("match", json::array())) w.match.push_back(m.get<std::string>());
  w.fallback = f.value("fallback", "");
  w.sp = f.value("sp", false);
  w.zero = f.value("zero", 0);
  w.etp_one = f.value("etp_one", false);
  w.overlap_grad = f.value("overlap_grad_reduce", false);
  w.overlap_param = f.value("overlap_param_gather", false);
  w.tp_overlap = f.value("tp_comm_overlap", false);
  w.cp_a2a = f.value("cp_a2a", false);
  w.fused_ce = f.value("fused_cross_entropy", false);
  w.mbs = f.value("mbs", 1);
  w.uneven = f.value("uneven_pipeline", false);
  w.ep_overlap = f.value("ep_comm_overlap", 0.0);
  w.dedup = f.value("moe_dedup_dispatch", false);
  w.flash_attention = f.value("flash_attention", true);
  w.grouped_gemm = f.value("moe_grouped_gemm", true);
  w.permute_fusion = f.value("moe_permute_fusion", true);
  w.router_padding = f.value("moe_router_padding", true);
  const std::string router = f.value("moe_router_dtype", "none");
  w.router_bytes = router == "fp64" ? 8 : router == "fp32" ? 4 : 0;
  // An unknown name in the embedded file is caught by FrameworkProfiles.AttentionNamesParse.
  const Result<AttentionImpl> attention = ParseAttentionImpl(f.value("attention", "fused"));
  w.attention = attention.ok() ? *attention : AttentionImpl::kFused;
  w.attention_sdpa = f.value("attention_sdpa", false);
  w.attention_cudnn_on_blackwell = f.value("attention_cudnn_on_blackwell", false);
  w.pure_bf16 = f.value("pure_bf16", false);
  w.pure_bf16_without_zero = f.value("pure_bf16_without_zero", false);
  w.lora_dropout = f.value("lora_dropout", 0.0);
  w.fsdp_bf16_grads = f.value("fsdp_bf16_grads", false);
  w.recompute = f.value("recompute", "auto");
  w.recompute_megatron = f.value("recompute_megatron", "");
  if (f.contains("sp_megatron")) w.sp_megatron = f.value("sp_megatron", false) ? 1 : 0;
  w.rollout_eager_megatron = f.value("rollout_eager_megatron", false);
  w.selective_modules = f.value("selective_modules", "");
  w.memory_reserved = f.value("memory_reported", "allocated") == "reserved";
  w.memory_device = f.value("memory_reported", "allocated") == "device";
  w.eager_unless_compiled = f.value("eager_unless_compiled", false);
  w.pp_fsdp_unsharded = f.value("pp_fsdp_unsharded", false);
  w.rollout_tp = f.value("rollout_tp", 0);
  w.separate_rollout_logprobs = f.value("separate_rollout_logprobs", false);
  w.schedule = f.value("schedule", "");
  w.separate_rollout_max_age = f.value("separate_rollout_max_age", 0);
  for (const json& n : f.value("frameworks", json::array()))
    w.names.push_back(n.get<std::string>());
  ReadExecution(f, w.exec);
  return w;
}

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

}  // namespace

namespace {

// The profile whose id or `frameworks` list is this lower-case name, or null.
const Framework* Named(const std::string& name) {
  if (name.empty()) return nullptr;
  for (const Framework& f : Frameworks())
    if (Lower(f.id) == name || std::any_of(f.names.begin(), f.names.end(),
                                           [&](const auto& n) { return Lower(n) == name; }))
      return &f;
  return nullptr;
}

// The parts of a stack name split at '+', ',', '/' and spaces, in order, empty parts dropped.
std::vector<std::string> Components(const std::string& name) {
  std::vector<std::string> parts(1);
  for (char ch : name) {
    if (ch == '+' || ch == ',' || ch == '/' || ch == ' ') {
      if (!parts.back().empty()) parts.emplace_back();
    } else {
      parts.back() += ch;
    }
  }
  if (parts.back().empty()) parts.pop_back();
  return parts;
}

}  // namespace

namespace {

// A profile's keys over its base's: the base's keys except its identity and provenance, then the
// profile's own; by_gpu_class entries merge class by class.
json WithBase(const json& base, const json& f) {
  json out = base;
  for (const char* key : {"id", "frameworks", "match", "fallback", "basis"}) out.erase(key);
  for (const auto& [key, value] : f.items()) {
    if (key == "by_gpu_class" && out.contains(key) && value.is_object()) {
      for (const auto& [cls, keys] : value.items())
        if (out[key].contains(cls) && keys.is_object())
          out[key][cls].update(keys);
        else
          out[key][cls] = keys;
    } else {
      out[key] = value;
    }
  }
  out.erase("base");
  return out;
}

// The profile and its per-GPU-class variants (each the profile with the class's keys over it).
Framework ReadProfileWithClasses(const json& f) {
  Framework w = ReadProfile(f);
  if (!f.contains("by_gpu_class") || !f["by_gpu_class"].is_object()) return w;
  for (const auto& [cls, keys] : f["by_gpu_class"].items()) {
    json v = f;
    v.erase("by_gpu_class");
    if (keys.is_object()) v.update(keys);
    Framework variant = ReadProfile(v);
    variant.gpu_class = cls;
    w.by_gpu_class.emplace_back(cls, std::make_shared<const Framework>(std::move(variant)));
  }
  return w;
}

}  // namespace

std::vector<Framework> ParseFrameworks(std::string_view text) {
  std::vector<Framework> out;
  json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (!j.is_object() || !j.contains("frameworks")) return out;
  std::vector<json> resolved;  // each profile's keys after its base's, in file order
  for (const json& f : j["frameworks"]) {
    json keys = f;
    // An unknown base in the embedded file is caught by FrameworkProfiles.BasesAndClassesResolve.
    if (f.contains("base"))
      for (const json& r : resolved)
        if (r.value("id", "") == f.value("base", "")) keys = WithBase(r, f);
    resolved.push_back(keys);
    out.push_back(ReadProfileWithClasses(keys));
  }
  return out;
}

const std::vector<Framework>& Frameworks() {
  static const std::vector<Framework> list = [] {
    const std::string_view* text = FindEmbeddedFile("frameworks.json");
    return text ? ParseFrameworks(*text) : std::vector<Framework>{};
  }();
  return list;
}

const std::vector<std::string_view>& GpuClassNames() {
  static const std::vector<std::string_view> names = {"fp4-rack", "fp4-node", "fp8", "pre-fp8"};
  return names;
}

std::string_view GpuClassOf(const HardwareSpec& hw) {
  if (hw.peak_fp4_flops > 0) return hw.scaleup_domain >= kRackScaleUpGpus ? "fp4-rack" : "fp4-node";
  return hw.peak_fp8_flops > 0 ? "fp8" : "pre-fp8";
}

const Framework& ForHardware(const Framework& fw, const HardwareSpec& hw) {
  const std::string_view cls = GpuClassOf(hw);
  for (const auto& [name, variant] : fw.by_gpu_class)
    if (name == cls) return *variant;
  return fw;
}

bool LooksLikeSmallScriptRun(const RunShape& shape) {
  return shape.params > 0 && shape.params <= kSmallRunMaxParams && !shape.moe && shape.tp == 1 &&
         shape.pp == 1 && shape.cp == 1 && !shape.sharded;
}

bool LooksLikeFsdpRun(const RunShape& shape) {
  return shape.fully_sharded && !shape.rl && shape.tp == 1 && shape.pp == 1 && shape.cp == 1 &&
         shape.ep == 1;
}

namespace {

// The fallback profile whose `fallback` is this name, or null.
const Framework* Fallback(const std::string& name) {
  for (const Framework& f : Frameworks())
    if (f.fallback == name) return &f;
  return nullptr;
}

}  // namespace

namespace {

// PickFramework before the GPU-class variant.
ProfilePick PickProfile(const std::string& framework, const std::string& source,
                        const HardwareSpec& hw, bool finetune, const RunShape& shape) {
  // Sources and framework names are compared without case: "NeMo", "nemo" and "NEMO" name the
  // same stack.
  const std::string name = Lower(framework), text = Lower(source);
  if (const Framework* f = Named(name))
    return {f, "profile " + f->id + " (the case's framework is '" + framework + "')"};
  // A stack named by its components ("llama-factory+deepspeed", "megatron-lm + te"): the first
  // component that names a profile, so the training framework wins over the libraries after it.
  for (const std::string& part : Components(name))
    if (const Framework* f = Named(part))
      return {f, "profile " + f->id + " (the case's framework '" + framework + "' names '" + part +
                     "')"};
  // The longest matching substring wins: "NeMo-RL" names nemo-rl, not the "NeMo" of Bridge.
  const Framework* best = nullptr;
  const std::string* best_match = nullptr;
  for (const Framework& f : Frameworks())
    for (const std::string& m : f.match)
      if (text.find(Lower(m)) != std::string::npos &&
          (!best_match || m.size() > best_match->size()))
        best = &f, best_match = &m;
  if (best) return {best, "profile " + best->id + " (source matches '" + *best_match + "')"};
  if (finetune)
    for (const Framework& f : Frameworks())
      if (f.fallback == "finetune")
        return {&f, (name.empty() ? "" : "no profile is named '" + framework + "'; ") +
                        "no profile matches the source: " + f.id +
                        " for a fine-tuning case (the Hugging Face Trainer stacks most "
                        "fine-tuning runs use)"};
  const bool fp8 = hw.peak_fp8_flops > 0;
  const std::string unnamed = name.empty() ? "" : "no profile is named '" + framework + "'; ";
  // Only for a run whose stack nobody named: a named stack without a profile (Megatron-LM
  // itself) keeps the GPU-class recipes.
  // Stated full sharding without model parallelism is how the PyTorch FSDP stacks run; a
  // Megatron-Core run states its tp/pp/ep. Only when no stack is named, as below.
  if (name.empty() && LooksLikeFsdpRun(shape))
    if (const Framework* f = Fallback("fsdp"))
      return {f, "no profile matches the source: " + f->id +
                     ", stack inferred from stated FSDP sharding with tp = pp = cp = ep = 1 (a "
                     "PyTorch-FSDP-style stack: torchtitan, llm-foundry, Accelerate FSDP)"};
  // An RL stage feeds the policy variable-length batches, which TE's userbuffers TP overlap
  // (set up for one fixed sequence shape) cannot take: the RL stacks run without it.
  if (fp8 && name.empty() && shape.rl)
    if (const Framework* f = Fallback("rl"))
      return {f, "no profile matches the source: " + f->id +
                     " for an RL stage on GPUs with FP8 tensor cores (today's recipes without TP "
                     "communication overlap: RL batches have variable sequence lengths)"};
  if (fp8 && name.empty() && LooksLikeSmallScriptRun(shape))
    for (const Framework& f : Frameworks())
      if (f.fallback == "small-script")
        return {&f, "no profile matches the source: " + f.id +
                        " for a small dense model (<= 2 B parameters) trained data-parallel "
                        "only on GPUs with FP8 tensor cores (the nanoGPT lineage of today's "
                        "small-model runs: torch.compile, DDP)"};
  for (const Framework& f : Frameworks())
    if (f.fallback == (fp8 ? "fp8" : "pre-fp8"))
      return {&f, unnamed + "no profile matches the source: " + f.id +
                      (fp8 ? " for GPUs with FP8 tensor cores (today's performance recipes)"
                           : " for GPUs before FP8 tensor cores (2020-21 Megatron-LM habits)")};
  static const Framework none = [] {
    Framework f;
    f.id = "none";
    return f;
  }();
  return {&none, "no profile matches the source (no fallback profile)"};
}

}  // namespace

ProfilePick PickFramework(const std::string& framework, const std::string& source,
                          const HardwareSpec& hw, bool finetune, const RunShape& shape) {
  ProfilePick pick = PickProfile(framework, source, hw, finetune, shape);
  const Framework& variant = ForHardware(*pick.fw, hw);
  if (&variant != pick.fw) {
    pick.why += "; its " + variant.gpu_class + " settings (" + hw.id + ")";
    pick.fw = &variant;
  }
  return pick;
}

const Framework* NamedProfile(const std::string& name) {
  return Named(Lower(name));
}

namespace {

// Whether the preset, or the GPU it derives from (an instance type, an efficiency borrowed from
// a GPU), is one of these GPUs (preset ids start with the GPU's name).
bool IsOneOf(const HardwareSpec& hw, std::initializer_list<std::string_view> gpus) {
  for (std::string_view id : {std::string_view(hw.id), std::string_view(hw.instance_of),
                              std::string_view(hw.efficiency_from)})
    for (std::string_view prefix : gpus)
      if (id.substr(0, prefix.size()) == prefix) return true;
  return false;
}

}  // namespace

bool DatacenterBlackwell(const HardwareSpec& hw) {
  return IsOneOf(hw, {"b200", "b300", "gb200", "gb300"});
}

bool SdpaPrefersCudnn(const HardwareSpec& hw) {
  // check_prefer_cudnn_attention (aten/src/ATen/native/transformers/cuda/sdp_utils.cpp): compute
  // capability 9.0 (H100, H200, H800, H20, GH200), 10.0 and 10.3 (datacenter Blackwell).
  return IsOneOf(hw, {"h100", "h200", "h800", "h20", "gh200"}) || DatacenterBlackwell(hw);
}

AttentionImpl ProfileAttention(const Framework& fw, const HardwareSpec& hw) {
  if (fw.attention_sdpa && SdpaPrefersCudnn(hw)) return AttentionImpl::kFused;
  if (fw.attention_cudnn_on_blackwell && DatacenterBlackwell(hw)) return AttentionImpl::kFused;
  return fw.attention;
}

bool ScaleUpAllowsTpOverlap(const HardwareSpec& hw, int tp) {
  return hw.scaleup_bw_bytes_per_s > kPcie5x16BytesPerS && tp <= hw.scaleup_domain;
}

}  // namespace trainsim::detail
