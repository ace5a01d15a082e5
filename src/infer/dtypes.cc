// Weight and KV-cache precisions, bytes per stored parameter and per cached token, and the
// expected number of distinct experts a batch touches (docs/INFERENCE.md).
#include <cmath>
#include <string>

#include "trainsim/infer.h"

namespace trainsim {
namespace {

// Bits of one FP16 scale; AWQ (llm-awq, AutoAWQ) and GPTQ (AutoGPTQ) store an FP16 scale and a
// zero point packed at the weight's bit width per group of `group` input elements per output
// column (AutoAWQ WQLinear_GEMM: qweight int32-packed, qzeros packed, scales fp16).
constexpr double kScaleBits = 16;
// NVFP4: E2M1 values with one FP8 (E4M3) scale per 16 elements, plus a per-tensor FP32 scale
// (NVIDIA, "Introducing NVFP4", 2025): 4 + 8/16 = 4.5 bits per element.
constexpr double kNvfp4Bits = 4.0 + 8.0 / 16.0;

double WeightBits(WeightDType d) {
  switch (d) {
    case WeightDType::kBf16:
    case WeightDType::kFp16:
      return 16;
    case WeightDType::kFp8:
    case WeightDType::kInt8:
      return 8;
    case WeightDType::kInt4:
      return 4;
    case WeightDType::kNvfp4:
      return kNvfp4Bits;
  }
  return 16;
}

}  // namespace

std::string_view WeightDTypeName(WeightDType d) {
  switch (d) {
    case WeightDType::kBf16:
      return "bf16";
    case WeightDType::kFp16:
      return "fp16";
    case WeightDType::kFp8:
      return "fp8";
    case WeightDType::kInt8:
      return "int8";
    case WeightDType::kInt4:
      return "int4";
    case WeightDType::kNvfp4:
      return "nvfp4";
  }
  return "bf16";
}

std::string_view KvDTypeName(KvDType d) {
  switch (d) {
    case KvDType::kBf16:
      return "bf16";
    case KvDType::kFp16:
      return "fp16";
    case KvDType::kFp8:
      return "fp8";
    case KvDType::kInt8:
      return "int8";
    case KvDType::kInt4:
      return "int4";
  }
  return "bf16";
}

Result<WeightDType> ParseWeightDType(std::string_view s) {
  if (s == "bf16" || s == "bfloat16") return WeightDType::kBf16;
  if (s == "fp16" || s == "float16") return WeightDType::kFp16;
  if (s == "fp8" || s == "e4m3") return WeightDType::kFp8;
  if (s == "int8" || s == "w8a16") return WeightDType::kInt8;
  if (s == "int4" || s == "nf4" || s == "w4a16") return WeightDType::kInt4;
  if (s == "nvfp4" || s == "fp4") return WeightDType::kNvfp4;
  return Status::Invalid("weight_dtype", "must be bf16, fp16, fp8, int8, int4, nf4 or nvfp4");
}

Result<KvDType> ParseKvDType(std::string_view s) {
  if (s == "bf16" || s == "bfloat16") return KvDType::kBf16;
  if (s == "fp16" || s == "float16") return KvDType::kFp16;
  if (s == "fp8" || s == "e4m3" || s == "fp8_e4m3" || s == "fp8_e5m2") return KvDType::kFp8;
  if (s == "int8") return KvDType::kInt8;
  if (s == "int4") return KvDType::kInt4;
  return Status::Invalid("kv_dtype", "must be bf16, fp16, fp8, int8 or int4");
}

double WeightBytesPerParam(WeightDType d, QuantMethod q, int group) {
  double bits = WeightBits(d);
  // Weight-only integer formats carry a scale and a zero point per group.
  if ((d == WeightDType::kInt4 || d == WeightDType::kInt8) && q != QuantMethod::kNone && group > 0)
    bits += (kScaleBits + WeightBits(d)) / group;
  else if ((d == WeightDType::kInt4 || d == WeightDType::kInt8) && group > 0)
    bits += kScaleBits / group;  // unnamed scheme: a scale per group, symmetric
  return bits / 8.0;
}

double KvBytesPerToken(const ModelSpec& m, KvDType d) {
  const double elem = d == KvDType::kBf16 || d == KvDType::kFp16 ? 2.0
                      : d == KvDType::kInt4                      ? 0.5
                                                                 : 1.0;
  // MLA (DeepSeek-V2 paper, section 2.1.2; vLLM/SGLang MLA backends) caches the compressed
  // latent c_KV (kv_lora_rank) and the decoupled rope key (qk_rope_head_dim) per layer, shared
  // by all heads. MHA/GQA cache K and V of every KV head.
  const double per_layer = m.is_mla()
                               ? static_cast<double>(m.mla.kv_lora_rank + m.mla.qk_rope_head_dim)
                               : 2.0 * m.kv_heads * static_cast<double>(m.head_dim);
  return per_layer * elem * m.layers;
}

double ExpectedDistinctExperts(int experts, int top_k, double tokens) {
  if (experts <= 0 || top_k <= 0 || tokens <= 0) return 0;
  // Each expert is missed by one token with probability 1 - k/E (uniform routing), by all
  // `tokens` tokens independently with (1 - k/E)^tokens.
  const double miss = std::pow(1.0 - static_cast<double>(top_k) / experts, tokens);
  return experts * (1.0 - miss);
}

}  // namespace trainsim
