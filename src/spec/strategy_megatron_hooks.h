// Megatron-LM hooks of the Strategy schema rows whose arguments do not map one to one
// (trainsim/schema.h). "In" hooks read one argument; "Out" hooks append arguments for a
// normalised strategy.
#pragma once

#include <string>
#include <string_view>

#include "trainsim/strategy.h"

namespace trainsim::megatron_hooks {

inline constexpr char kVppArg[] = "--virtual-pipeline-model-parallel-size";
inline constexpr char kCpArg[] = "--context-parallel-size";
inline constexpr char kEpArg[] = "--expert-model-parallel-size";
inline constexpr char kDistOptArg[] = "--num-distributed-optimizer-instances";

// " --arg v" when v > 1 (Megatron's default is 1).
template <auto M, const char* Arg>
void EmitAbove1(const Strategy& s, std::string& out) {
  if (s.*M > 1) out += std::string(" ") + Arg + " " + std::to_string(s.*M);
}

// --virtual-pipeline-model-parallel-size, unless a layout gives vpp (Megatron-LM refuses both).
void VppOut(const Strategy& s, std::string& out);
// --pipeline-model-parallel-layout, single-quoted for the shell.
void LayoutOut(const Strategy& s, std::string& out);
void EtpOut(const Strategy& s, std::string& out);
void FsdpOut(const Strategy& s, std::string& out);
Status ZeroIn(Strategy& s, std::string_view arg, std::string_view value);
void ZeroOut(const Strategy& s, std::string& out);
Status DTypeIn(Strategy& s, std::string_view arg, std::string_view value);
void DTypeOut(const Strategy& s, std::string& out);
Status MainGradIn(Strategy& s, std::string_view arg, std::string_view value);
void MainGradOut(const Strategy& s, std::string& out);
Status PrecisionAwareIn(Strategy& s, std::string_view arg, std::string_view value);
void PrecisionAwareOut(const Strategy& s, std::string& out);
void RecomputeModulesOut(const Strategy& s, std::string& out);
// --fine-grained-activation-offloading --offload-modules a b (exec.offload_modules).
void OffloadModulesOut(const Strategy& s, std::string& out);
void RecomputeOut(const Strategy& s, std::string& out);
Status RecomputeLayersIn(Strategy& s, std::string_view arg, std::string_view value);
void RecomputeLayersOut(const Strategy& s, std::string& out);
void UnevenOut(const Strategy& s, std::string& out);
void ParamGatherOut(const Strategy& s, std::string& out);
Status OptimizerIn(Strategy& s, std::string_view arg, std::string_view value);
void OptimizerOut(const Strategy& s, std::string& out);
Status DispatcherIn(Strategy& s, std::string_view arg, std::string_view value);
void DispatcherOut(const Strategy& s, std::string& out);
Status AttentionIn(Strategy& s, std::string_view arg, std::string_view value);
void AttentionOut(const Strategy& s, std::string& out);
Status CpCommIn(Strategy& s, std::string_view arg, std::string_view value);
void CpCommOut(const Strategy& s, std::string& out);

}  // namespace trainsim::megatron_hooks
