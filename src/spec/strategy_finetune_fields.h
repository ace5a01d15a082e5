// Setters and getters of the fine-tuning rows of the Strategy schema (strategy_schema.cc; the
// fields are documented in trainsim/strategy.h and docs/FINETUNE.md).
#pragma once

#include <string>
#include <string_view>

#include "trainsim/strategy.h"

namespace trainsim::detail::finetune_fields {

Status SetStage(Strategy& s, std::string_view t);
std::string GetStage(const Strategy& s);
Status SetMethod(Strategy& s, std::string_view t);
std::string GetMethod(const Strategy& s);
Status SetLoraAlpha(Strategy& s, std::string_view t);
std::string GetLoraAlpha(const Strategy& s);
Status SetLoraDropout(Strategy& s, std::string_view t);
std::string GetLoraDropout(const Strategy& s);
Status SetLoraTargets(Strategy& s, std::string_view t);
std::string GetLoraTargets(const Strategy& s);
Status SetFreezeLayers(Strategy& s, std::string_view t);
std::string GetFreezeLayers(const Strategy& s);  // "" (null) for -1
Status SetOptimizer(Strategy& s, std::string_view t);
std::string GetOptimizer(const Strategy& s);
Status SetMeanSeq(Strategy& s, std::string_view t);
std::string GetMeanSeq(const Strategy& s);  // "" (null) for 0
Status SetMaxSeq(Strategy& s, std::string_view t);
std::string GetMaxSeq(const Strategy& s);  // "" (null) for 0
// RL rows (src/rl): "0" / "" are the stage's defaults.
bool IsRl(const Strategy& s);
bool HasLoraDropoutField(const Strategy& s);  // the method has PEFT's lora_dropout
bool IsSeparateRl(const Strategy& s);
Status SetRollout(Strategy& s, std::string_view t);  // colocated | separate
std::string GetRollout(const Strategy& s);
Status SetKlReference(Strategy& s, std::string_view t);      // true | false
std::string GetKlReference(const Strategy& s);               // "" (null) for the stage's default
Status SetRolloutLogprobs(Strategy& s, std::string_view t);  // true | false
std::string GetRolloutLogprobs(const Strategy& s);           // "" (null): recomputed
Status SetRewardModel(Strategy& s, std::string_view t);
std::string GetRewardModel(const Strategy& s);
Status SetRolloutMemFraction(Strategy& s, std::string_view t);  // (0, 1]
std::string GetRolloutMemFraction(const Strategy& s);           // "" (null) for 0

}  // namespace trainsim::detail::finetune_fields
