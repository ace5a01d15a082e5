// What a fine-tuning or post-training step trains: the training stage, the fine-tuning method
// (which parameters are trained, what extra work the adapters add) and the optimizer's names
// (docs/FINETUNE.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "trainsim/execution.h"
#include "trainsim/status.h"

namespace trainsim {

// The training stage. pretrain and sft run one sequence per sample; the preference stages run
// chosen and rejected sequences through the policy (dpo, ipo, kto, orpo, simpo, rm) and, for
// dpo, ipo and kto, a frozen reference forward; the RL stages (ppo ... remax) also generate.
enum class TrainStage : uint8_t {
  kPretrain,
  kSft,
  kDpo,
  kIpo,
  kSimpo,
  kOrpo,
  kKto,
  kRm,
  kPpo,
  kGrpo,
  kDapo,
  kRloo,
  kRemax,
};
std::string_view TrainStageName(TrainStage s);  // "pretrain", "sft", ...
Result<TrainStage> ParseTrainStage(std::string_view s);
// DPO, IPO, SimPO, ORPO and RM: one sample is a (chosen, rejected) pair, both run through the
// policy (TRL's concatenated forward). KTO is unpaired.
bool IsPairedStage(TrainStage s);
// DPO, IPO and KTO score the batch with a frozen reference model (TRL DPOTrainer, KTOTrainer).
bool HasReferenceModel(TrainStage s);
bool IsRlStage(TrainStage s);  // ppo, grpo, dapo, rloo, remax

// The fine-tuning method: which parameters train, and the adapters' extra parameters and work.
enum class FtMethod : uint8_t {
  kFull,          // every parameter
  kFreeze,        // the last layers (Workload::freeze_layers frozen from the first)
  kLora,          // LoRA adapters r*(d_in + d_out) per adapted matrix, base frozen
  kQlora,         // LoRA on a 4-bit NF4 base, dequantised for every GEMM
  kDora,          // LoRA + a magnitude vector and the weight-norm pass (Liu et al. 2024)
  kPissa,         // LoRA initialised from the SVD of the weight (same run-time cost)
  kIa3,           // learned scaling vectors on k, v and the down-projection input
  kAdalora,       // SVD-form LoRA P diag(E) Q at the initial rank
  kVera,          // frozen shared random A, B; trained vectors d (r) and b (d_out)
  kLoha,          // Hadamard product of two low-rank pairs, materialised delta weight
  kLokr,          // Kronecker product delta weight, materialised
  kOft,           // orthogonal block-diagonal rotation of the weight (Cayley)
  kBoft,          // butterfly OFT: a dense rotation built and applied to the weight each step
  kPrefixTuning,  // trained key/value prefixes in every layer
  kPromptTuning,  // trained virtual tokens prepended to the input
  kPTuning,       // virtual tokens from a trained prompt encoder (MLP)
};
std::string_view FtMethodName(FtMethod m);  // "full", "lora", "prefix_tuning", ...
// Also accepts the validation cases' "other:<name>"; names the method not modelled (galore)
// in the error.
Result<FtMethod> ParseFtMethod(std::string_view s);
// The base weights are frozen and the trained parameters are adapters (every method except
// full and freeze).
bool IsPeftMethod(FtMethod m);
// The method has an adapter rank r (Workload::lora_rank): the LoRA family, AdaLoRA, VeRA, LoHa,
// LoKr and OFT (its blocks per matrix).
bool UsesLoraRank(FtMethod m);
// The method has PEFT's lora_dropout on its adapters' input (Workload::lora_dropout): LoRA,
// QLoRA, PiSSA, DoRA and AdaLoRA.
bool HasLoraDropout(FtMethod m);

// Linear modules of a transformer layer an adapter can target (PEFT target_modules).
enum LoraTarget : int {
  kLoraQ = 1,
  kLoraK = 2,
  kLoraV = 4,
  kLoraO = 8,
  kLoraGate = 16,
  kLoraUp = 32,
  kLoraDown = 64,
  kLoraAllLinear = 127,
  // The model fuses q, k, v (Qwen-1 c_attn, GPT-NeoX query_key_value, Megatron linear_qkv) or
  // gate and up (Megatron linear_fc1) into one linear: one adapter for the fused matrix.
  kLoraQkvFused = 128,
  kLoraFc1Fused = 256,
};
// Parses a comma-separated list of module names: q_proj, k_proj, v_proj, o_proj, gate_proj,
// up_proj, down_proj, the fused and framework spellings (qkv, c_attn = q,k,v; c_proj = o and
// down as PEFT's suffix match finds both in Qwen-1; w1, w2, w3; output_proj; dense_h_to_4h, ...)
// and all-linear / all.
Result<int> ParseLoraTargets(std::string_view list);
std::string LoraTargetsName(int mask);  // "q_proj,v_proj"; "all-linear" for every module

// Optimizer names (the strategy's "optimizer" key, the validation cases' "optimizer").
std::string_view OptimizerName(OptimizerKind k);  // "adamw", "adamw8bit", ...
Result<OptimizerKind> ParseOptimizer(std::string_view s);

}  // namespace trainsim
