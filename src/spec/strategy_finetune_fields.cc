// Setters and getters of the fine-tuning rows of the Strategy schema.
#include "spec/strategy_finetune_fields.h"

#include "spec/field_text.h"

namespace trainsim::detail::finetune_fields {
namespace {

// The enum parsers' messages start with their field name; the schema's callers add the key.
Status RuleOnly(const Status& st) {
  const std::string& m = st.message();
  const size_t colon = m.find(": ");
  if (st.ok() || colon == std::string::npos) return st;
  return Status::Invalid(m.substr(colon + 2));
}

}  // namespace

Status SetStage(Strategy& s, std::string_view t) {
  auto r = ParseTrainStage(t);
  if (!r.ok()) return RuleOnly(r.status());
  s.stage = r.value();
  return Status::Ok();
}
std::string GetStage(const Strategy& s) {
  return std::string(TrainStageName(s.stage));
}

Status SetMethod(Strategy& s, std::string_view t) {
  auto r = ParseFtMethod(t);
  if (!r.ok()) return RuleOnly(r.status());
  s.method = r.value();
  return Status::Ok();
}
std::string GetMethod(const Strategy& s) {
  return std::string(FtMethodName(s.method));
}

Status SetLoraAlpha(Strategy& s, std::string_view t) {
  if (Status st = ParseNumberText(t, 1e-9, 1e9, s.lora_alpha); !st.ok())
    return Status::Invalid("must be a number > 0, got '" + std::string(t) + "'");
  return Status::Ok();
}
std::string GetLoraAlpha(const Strategy& s) {
  return NumberText(s.lora_alpha);
}

Status SetLoraDropout(Strategy& s, std::string_view t) {
  if (Status st = ParseNumberText(t, 0.0, 0.99, s.lora_dropout); !st.ok())
    return Status::Invalid("must be a number in [0, 0.99], got '" + std::string(t) + "'");
  return Status::Ok();
}
std::string GetLoraDropout(const Strategy& s) {
  return NumberText(s.lora_dropout);
}

Status SetLoraTargets(Strategy& s, std::string_view t) {
  auto r = ParseLoraTargets(t);
  if (!r.ok()) return RuleOnly(r.status());
  s.lora_targets = r.value();
  return Status::Ok();
}
std::string GetLoraTargets(const Strategy& s) {
  return LoraTargetsName(s.lora_targets);
}

Status SetFreezeLayers(Strategy& s, std::string_view t) {
  return ParseIntText(t, -1, s.freeze_layers);
}
std::string GetFreezeLayers(const Strategy& s) {
  return s.freeze_layers >= 0 ? std::to_string(s.freeze_layers) : std::string();
}

Status SetOptimizer(Strategy& s, std::string_view t) {
  auto r = ParseOptimizer(t);
  if (!r.ok()) return RuleOnly(r.status());
  s.exec.optimizer = r.value();
  return Status::Ok();
}
std::string GetOptimizer(const Strategy& s) {
  return std::string(OptimizerName(s.exec.optimizer));
}

Status SetMeanSeq(Strategy& s, std::string_view t) {
  return ParseIntText(t, 0, s.mean_seq);
}
std::string GetMeanSeq(const Strategy& s) {
  return s.mean_seq > 0 ? std::to_string(s.mean_seq) : std::string();
}

Status SetMaxSeq(Strategy& s, std::string_view t) {
  return ParseIntText(t, 0, s.max_seq);
}
std::string GetMaxSeq(const Strategy& s) {
  return s.max_seq > 0 ? std::to_string(s.max_seq) : std::string();
}

bool HasLoraDropoutField(const Strategy& s) {
  return HasLoraDropout(s.method);
}
bool IsRl(const Strategy& s) {
  return IsRlStage(s.stage);
}
bool IsSeparateRl(const Strategy& s) {
  return IsRlStage(s.stage) && s.rollout_separate;
}

Status SetRollout(Strategy& s, std::string_view t) {
  if (t != "colocated" && t != "separate")
    return Status::Invalid("must be colocated or separate, got '" + std::string(t) + "'");
  s.rollout_separate = t == "separate";
  return Status::Ok();
}
std::string GetRollout(const Strategy& s) {
  return s.rollout_separate ? "separate" : "colocated";
}

namespace {
Status SetTriState(int& out, std::string_view t) {
  bool b = false;
  if (Status st = ParseBoolText(t, b); !st.ok()) return st;
  out = b ? 1 : 0;
  return Status::Ok();
}
std::string GetTriState(int v) {
  return v < 0 ? std::string() : BoolText(v == 1);
}
}  // namespace

Status SetKlReference(Strategy& s, std::string_view t) {
  return SetTriState(s.kl_reference, t);
}
std::string GetKlReference(const Strategy& s) {
  return GetTriState(s.kl_reference);
}
Status SetRolloutLogprobs(Strategy& s, std::string_view t) {
  return SetTriState(s.rollout_logprobs, t);
}
std::string GetRolloutLogprobs(const Strategy& s) {
  return GetTriState(s.rollout_logprobs);
}
Status SetRewardModel(Strategy& s, std::string_view t) {
  return SetTriState(s.reward_model, t);
}
std::string GetRewardModel(const Strategy& s) {
  return GetTriState(s.reward_model);
}

Status SetRolloutMemFraction(Strategy& s, std::string_view t) {
  if (Status st = ParseNumberText(t, 1e-3, 1.0, s.rollout_mem_fraction); !st.ok())
    return Status::Invalid("must be a number in (0, 1], got '" + std::string(t) + "'");
  return Status::Ok();
}
std::string GetRolloutMemFraction(const Strategy& s) {
  return s.rollout_mem_fraction > 0 ? NumberText(s.rollout_mem_fraction) : std::string();
}

}  // namespace trainsim::detail::finetune_fields
