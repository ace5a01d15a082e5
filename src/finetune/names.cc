// Names of the fine-tuning enums: stages, methods, adapter targets and optimizers.
#include <array>
#include <string>
#include <utility>

#include "trainsim/finetune.h"

namespace trainsim {
namespace {

template <typename E, size_t N>
using Names = std::array<std::pair<E, std::string_view>, N>;

template <typename E, size_t N>
std::string_view NameOf(const Names<E, N>& names, E e) {
  for (const auto& [v, name] : names)
    if (v == e) return name;
  return "?";
}

template <typename E, size_t N>
std::string Choices(const Names<E, N>& names) {
  std::string out;
  for (size_t i = 0; i < N; ++i) {
    out += i == 0 ? "" : i + 1 == N ? " or " : ", ";
    out += names[i].second;
  }
  return out;
}

template <typename E, size_t N>
Result<E> Lookup(const Names<E, N>& names, std::string_view s, const char* field) {
  for (const auto& [v, name] : names)
    if (name == s) return v;
  return Status::Invalid(std::string(field) + ": must be " + Choices(names) + ", got '" +
                         std::string(s) + "'");
}

constexpr Names<TrainStage, 13> kStages{{
    {TrainStage::kPretrain, "pretrain"},
    {TrainStage::kSft, "sft"},
    {TrainStage::kDpo, "dpo"},
    {TrainStage::kIpo, "ipo"},
    {TrainStage::kSimpo, "simpo"},
    {TrainStage::kOrpo, "orpo"},
    {TrainStage::kKto, "kto"},
    {TrainStage::kRm, "rm"},
    {TrainStage::kPpo, "ppo"},
    {TrainStage::kGrpo, "grpo"},
    {TrainStage::kDapo, "dapo"},
    {TrainStage::kRloo, "rloo"},
    {TrainStage::kRemax, "remax"},
}};

constexpr Names<FtMethod, 16> kMethods{{
    {FtMethod::kFull, "full"},
    {FtMethod::kFreeze, "freeze"},
    {FtMethod::kLora, "lora"},
    {FtMethod::kQlora, "qlora"},
    {FtMethod::kDora, "dora"},
    {FtMethod::kPissa, "pissa"},
    {FtMethod::kIa3, "ia3"},
    {FtMethod::kAdalora, "adalora"},
    {FtMethod::kVera, "vera"},
    {FtMethod::kLoha, "loha"},
    {FtMethod::kLokr, "lokr"},
    {FtMethod::kOft, "oft"},
    {FtMethod::kBoft, "boft"},
    {FtMethod::kPrefixTuning, "prefix_tuning"},
    {FtMethod::kPromptTuning, "prompt_tuning"},
    {FtMethod::kPTuning, "p_tuning"},
}};

constexpr Names<OptimizerKind, 8> kOptimizers{{
    {OptimizerKind::kAdam, "adamw"},
    {OptimizerKind::kAdamW8bit, "adamw8bit"},
    {OptimizerKind::kPagedAdamW8bit, "paged_adamw8bit"},
    {OptimizerKind::kPagedAdamW32bit, "paged_adamw32bit"},
    {OptimizerKind::kAdafactor, "adafactor"},
    {OptimizerKind::kSgd, "sgd"},
    {OptimizerKind::kLion, "lion"},
    {OptimizerKind::kMuon, "muon"},
}};

// Module names per target bit, as PEFT (Llama/Qwen2 names), Qwen-1, torchtune, GPT-NeoX and
// Megatron spell them. Qwen-1's "c_proj" names both attn.c_proj and mlp.c_proj, and PEFT matches
// target_modules by name suffix, so it adapts the output and the down projection.
constexpr std::pair<std::string_view, int> kTargetNames[] = {
    {"q_proj", kLoraQ},
    {"k_proj", kLoraK},
    {"v_proj", kLoraV},
    {"o_proj", kLoraO},
    {"gate_proj", kLoraGate},
    {"up_proj", kLoraUp},
    {"down_proj", kLoraDown},
    {"qkv_proj", kLoraQ | kLoraK | kLoraV | kLoraQkvFused},
    {"gate_up_proj", kLoraGate | kLoraUp | kLoraFc1Fused},
    {"qkv", kLoraQ | kLoraK | kLoraV | kLoraQkvFused},
    {"c_attn", kLoraQ | kLoraK | kLoraV | kLoraQkvFused},
    {"query_key_value", kLoraQ | kLoraK | kLoraV | kLoraQkvFused},
    {"linear_qkv", kLoraQ | kLoraK | kLoraV | kLoraQkvFused},
    {"c_proj", kLoraO | kLoraDown},
    {"output_proj", kLoraO},
    {"dense", kLoraO},
    {"linear_proj", kLoraO},
    {"w1", kLoraGate},
    {"w3", kLoraUp},
    {"w2", kLoraDown},
    {"mlp", kLoraGate | kLoraUp | kLoraDown},
    {"dense_h_to_4h", kLoraGate | kLoraUp | kLoraFc1Fused},
    {"linear_fc1", kLoraGate | kLoraUp | kLoraFc1Fused},
    {"dense_4h_to_h", kLoraDown},
    {"linear_fc2", kLoraDown},
    {"all-linear", kLoraAllLinear},
    {"all", kLoraAllLinear},
};

}  // namespace

std::string_view TrainStageName(TrainStage s) {
  return NameOf(kStages, s);
}
Result<TrainStage> ParseTrainStage(std::string_view s) {
  return Lookup(kStages, s, "stage");
}
bool IsPairedStage(TrainStage s) {
  return s == TrainStage::kDpo || s == TrainStage::kIpo || s == TrainStage::kSimpo ||
         s == TrainStage::kOrpo || s == TrainStage::kRm;
}
bool HasReferenceModel(TrainStage s) {
  return s == TrainStage::kDpo || s == TrainStage::kIpo || s == TrainStage::kKto;
}
bool IsRlStage(TrainStage s) {
  return s >= TrainStage::kPpo;
}

std::string_view FtMethodName(FtMethod m) {
  return NameOf(kMethods, m);
}
Result<FtMethod> ParseFtMethod(std::string_view s) {
  if (s.starts_with("other:")) s.remove_prefix(6);
  if (s == "galore")
    return Status::Invalid("method: " + std::string(s) +
                           " is not modelled (its gradient projections are not costed); use "
                           "full, lora or another listed method");
  return Lookup(kMethods, s, "method");
}
bool IsPeftMethod(FtMethod m) {
  return m != FtMethod::kFull && m != FtMethod::kFreeze;
}

bool HasLoraDropout(FtMethod m) {
  switch (m) {
    case FtMethod::kLora:
    case FtMethod::kQlora:
    case FtMethod::kPissa:
    case FtMethod::kDora:
    case FtMethod::kAdalora:
      return true;
    default:
      return false;
  }
}

bool UsesLoraRank(FtMethod m) {
  switch (m) {
    case FtMethod::kLora:
    case FtMethod::kQlora:
    case FtMethod::kDora:
    case FtMethod::kPissa:
    case FtMethod::kAdalora:
    case FtMethod::kVera:
    case FtMethod::kLoha:
    case FtMethod::kLokr:
    case FtMethod::kOft:
      return true;
    default:
      return false;
  }
}

Result<int> ParseLoraTargets(std::string_view list) {
  int mask = 0;
  // Qwen-1 names its MLP halves w1 and w2 and the down projection c_proj (Llama-style
  // torchtune names: w1 gate, w3 up, w2 down).
  const bool qwen1 = list.find("c_attn") != std::string_view::npos;
  while (!list.empty()) {
    const size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    // torchtune's "mlp (w1,w2,w3)" as the cases write it.
    if (name.starts_with("mlp (")) name = "mlp";
    bool found = name.empty();
    if (qwen1 && name == "w2") name = "up_proj";
    for (const auto& [n, bits] : kTargetNames)
      if (n == name) mask |= bits, found = true;
    if (!found)
      return Status::Invalid("lora_targets: unknown module '" + std::string(name) +
                             "' (q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj "
                             "or all-linear)");
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
    if (list.starts_with("w2,w3)") || list.starts_with("w2, w3)"))  // rest of "mlp (w1,w2,w3)"
      list.remove_prefix(list.find(')') + 1);
  }
  if (mask == 0) return Status::Invalid("lora_targets: must name at least one module");
  return mask;
}

std::string LoraTargetsName(int mask) {
  if (mask == kLoraAllLinear) return "all-linear";
  std::string out;
  // kTargetNames[7] and [8]: the fused q,k,v and gate,up names.
  for (int i = 0; i < 9; ++i) {
    const int bits = kTargetNames[i].second;
    if ((mask & bits) != bits) continue;
    if (i < 7 && (mask & kLoraQkvFused) && (bits & (kLoraQ | kLoraK | kLoraV))) continue;
    if (i < 7 && (mask & kLoraFc1Fused) && (bits & (kLoraGate | kLoraUp))) continue;
    if (!out.empty()) out += ',';
    out += kTargetNames[i].first;
  }
  return out;
}

std::string_view OptimizerName(OptimizerKind k) {
  return NameOf(kOptimizers, k);
}
Result<OptimizerKind> ParseOptimizer(std::string_view s) {
  if (s == "adam" || s == "adamw_torch" || s == "adamw_torch_fused") return OptimizerKind::kAdam;
  if (s == "adamw_bnb_8bit") return OptimizerKind::kAdamW8bit;
  return Lookup(kOptimizers, s, "optimizer");
}

}  // namespace trainsim
