// The Efficiency schema: one row per field of a hardware preset's "efficiency" block, used by
// the preset reader, --hw-override, EfficiencyToJson and the docs (trainsim/schema.h).
#include <string>

#include "spec/efficiency_read.h"
#include "spec/field_text.h"
#include "spec/json_fields.h"
#include "trainsim/schema.h"

namespace trainsim {
namespace {

constexpr double kNotFitted = -1;  // fit_lo > fit_hi
using R = EfficiencyRule;

constexpr EfficiencyField kFields[] = {
    // Fitted by `trainsim calibrate`, in this order.
    {"gemm_max", &Efficiency::gemm_max, R::kFraction, 0.30, 0.85,
     "GEMM efficiency of large, well-shaped matmuls"},
    {"grouped_gemm", &Efficiency::grouped_gemm, R::kFraction, 0.30, 1.00,
     "grouped (expert) GEMM efficiency relative to dense"},
    {"attn_fwd", &Efficiency::attn_fwd, R::kFraction, 0.15, 0.90,
     "fused flash-attention forward, fraction of the BF16 peak"},
    {"attn_bwd", &Efficiency::attn_bwd, R::kFraction, 0.15, 0.90,
     "fused flash-attention backward, fraction of the BF16 peak"},
    {"attn_fa2_fwd", &Efficiency::attn_fa2_fwd, R::kFractionOrUnset, 0.10, 0.90,
     "FlashAttention-2 forward (attention_kernel fa2; fa1 at half); unset: attn_fwd x FA2's "
     "relative speed"},
    {"attn_fa2_bwd", &Efficiency::attn_fa2_bwd, R::kFractionOrUnset, 0.10, 0.90,
     "FlashAttention-2 backward; unset: attn_bwd x FA2's relative speed"},
    {"mem", &Efficiency::mem, R::kFraction, 0.30, 0.95,
     "memory-bound kernels, fraction of HBM bandwidth"},
    {"nic_bus", &Efficiency::nic_bus, R::kFraction, 0.30, 1.00,
     "NCCL bus bandwidth / nominal, across NICs"},
    {"a2a_scaleup", &Efficiency::a2a_scaleup, R::kFraction, 0.15, 0.95,
     "all-to-all bandwidth / nominal, scale-up domain"},
    {"a2a_nic", &Efficiency::a2a_nic, R::kFraction, 0.10, 0.95,
     "all-to-all bandwidth / nominal, across NICs"},
    {"fp8_gemm_speedup", &Efficiency::fp8_gemm_speedup, R::kPositive, 1, 2,
     "achieved FP8 / BF16 GEMM speed ratio"},
    {"mxfp8_gemm_speedup", &Efficiency::mxfp8_gemm_speedup, R::kPositiveOrUnset, 1, 2,
     "same for MXFP8; unset: fp8_gemm_speedup"},
    {"fp4_gemm_speedup", &Efficiency::fp4_gemm_speedup, R::kPositive, 1, 4,
     "achieved FP4 / BF16 GEMM speed ratio"},
    {"layer_overhead_us", &Efficiency::layer_overhead_us, R::kNonNegative, 0, 400,
     "host/launch overhead per layer per micro-batch (fwd+bwd), µs"},
    // Not fitted.
    {"gemm_k_half", &Efficiency::gemm_k_half, R::kNonNegative, 0, kNotFitted,
     "reduction depth k at which a GEMM reaches half its rate: factor k/(k+half) (measured)"},
    {"gemm_half_dim", &Efficiency::gemm_half_dim, R::kNonNegative, 0, kNotFitted,
     "optional factor x/(x+half) on the output dimensions m, n; 0 = none"},
    {"attn_flex_fwd", &Efficiency::attn_flex_fwd, R::kFractionOrUnset, 0, kNotFitted,
     "FlexAttention block-sparse forward (measured); unset: attn_fwd"},
    {"attn_flex_bwd", &Efficiency::attn_flex_bwd, R::kFractionOrUnset, 0, kNotFitted,
     "FlexAttention block-sparse backward (measured); unset: attn_bwd"},
    {"mem_fused", &Efficiency::mem_fused, R::kFractionOrUnset, 0, kNotFitted,
     "memory-bound kernels of compiled / hand-fused stacks (measured); unset: mem"},
    {"kernel_floor_us", &Efficiency::kernel_floor_us, R::kNonNegative, 0, kNotFitted,
     "shortest time one kernel occupies the GPU back to back (measured), µs"},
    {"scaleup_bus", &Efficiency::scaleup_bus, R::kFraction, 0, kNotFitted,
     "NCCL bus bandwidth / nominal, scale-up domain"},
    {"step_overhead_s", &Efficiency::step_overhead_s, R::kNonNegative, 0, kNotFitted,
     "fixed per-step overhead, s"},
    {"comm_overlap", &Efficiency::comm_overlap, R::kFraction, 0, kNotFitted,
     "fraction of overlappable communication hidden"},
};

}  // namespace

std::span<const EfficiencyField> EfficiencySchema() {
  return kFields;
}

// The rules' bounds: below 0.001 a fraction or a speed-up divides a time into infinity; the
// upper bounds are far beyond any measured value (fp4_gemm_speedup <= 4, overheads < 1 ms).
std::string_view EfficiencyRuleText(EfficiencyRule r) {
  switch (r) {
    case EfficiencyRule::kFraction:
      return "in [0.001, 1]";
    case EfficiencyRule::kFractionOrUnset:
      return "in [0.001, 1]; [-1, 0) = unset";
    case EfficiencyRule::kPositive:
      return "in [0.001, 100]";
    case EfficiencyRule::kPositiveOrUnset:
      return "in [0.001, 100]; [-1, 0) = unset";
    case EfficiencyRule::kNonNegative:
      return "in [0, 1e6]";
  }
  return "?";
}

nlohmann::ordered_json EfficiencyToJson(const Efficiency& e) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const EfficiencyField& f : EfficiencySchema()) j[std::string(f.key)] = e.*f.field;
  if (!e.fitted_date.empty()) j["fitted_date"] = e.fitted_date;
  return j;
}

namespace detail {
namespace {

bool Unsettable(EfficiencyRule r) {
  return r == EfficiencyRule::kFractionOrUnset || r == EfficiencyRule::kPositiveOrUnset;
}

bool Breaks(EfficiencyRule r, double v) {
  const bool unset = Unsettable(r) && v >= -1 && v < 0;
  switch (r) {
    case EfficiencyRule::kFraction:
    case EfficiencyRule::kFractionOrUnset:
      return !unset && !(v >= 1e-3 && v <= 1);  // NaN breaks every rule
    case EfficiencyRule::kPositive:
    case EfficiencyRule::kPositiveOrUnset:
      return !unset && !(v >= 1e-3 && v <= 100);
    case EfficiencyRule::kNonNegative:
      return !(v >= 0 && v <= 1e6);
  }
  return true;
}

}  // namespace

Status ReadEfficiencyBlock(const nlohmann::json& block, Efficiency& e, const std::string& origin) {
  FieldReader r(block, origin + ": efficiency");
  Efficiency out = e;
  for (const EfficiencyField& f : EfficiencySchema()) {
    const std::string key(f.key);
    r.Double(key.c_str(), out.*f.field, Unsettable(f.rule) ? -1.0 : 0.0);
  }
  r.String("fitted_date", out.fitted_date);
  r.Ignore("fitted_on");
  if (Status st = r.Finish(true); !st.ok()) return st;
  if (Status st = CheckEfficiency(out); !st.ok()) return st.WithContext(origin + ": efficiency");
  e = out;
  return Status::Ok();
}

Status CheckEfficiency(const Efficiency& e) {
  for (const EfficiencyField& f : EfficiencySchema())
    if (Breaks(f.rule, e.*f.field))
      return Status::Invalid(
          std::string(f.key),
          "must be " + std::string(EfficiencyRuleText(f.rule)) + ", got " + NumberText(e.*f.field));
  return Status::Ok();
}

}  // namespace detail
}  // namespace trainsim
