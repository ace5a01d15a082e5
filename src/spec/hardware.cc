// Hardware presets: data/hardware/*.json (keys in data/hardware/README.md), and overrides in the
// same keys. Units in the file: TFLOP/s, GiB, TB/s, GB/s (bytes), Gb/s (bits), microseconds.
#include "trainsim/hardware.h"

#include <cmath>
#include <string>

#include "spec/embedded.h"
#include "spec/json_fields.h"

namespace trainsim {
namespace {

using detail::FieldReader;
using nlohmann::json;

constexpr double kTera = 1e12;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// Reads every preset key present in `j` into `hw`; absent keys keep their value.
Status ReadHardwareFields(const json& j, HardwareSpec& hw, const std::string& origin, bool strict) {
  FieldReader r(j, origin);
  r.String("id", hw.id);
  r.String("name", hw.name);
  r.Ignore("source");
  r.Ignore("price_date");
  r.Ignore("price_source");
  r.Ignore("notes");
  r.Ignore("efficiency_from");  // resolved by ParseHardwareJson
  if (r.Has("peak_tflops")) {
    FieldReader p(j["peak_tflops"], origin + ": peak_tflops");
    double bf16 = hw.peak_bf16_flops / kTera, fp16 = hw.peak_fp16_flops / kTera;
    double fp8 = hw.peak_fp8_flops / kTera, fp4 = hw.peak_fp4_flops / kTera;
    double fp32 = hw.peak_fp32_flops / kTera;
    p.Double("bf16", bf16);
    p.Double("fp16", fp16);
    p.Double("fp8", fp8);
    p.Double("fp4", fp4);
    p.Double("fp32", fp32);
    p.Ignore("fp64");
    p.Ignore("tf32");
    if (Status s = p.Finish(true); !s.ok()) return s;
    hw.peak_bf16_flops = bf16 * kTera;
    hw.peak_fp16_flops = fp16 * kTera;
    hw.peak_fp8_flops = fp8 * kTera;
    hw.peak_fp4_flops = fp4 * kTera;
    hw.peak_fp32_flops = fp32 * kTera;
  }
  r.Ignore("peak_tflops");
  double hbm_gib = hw.hbm_bytes / kGiB, hbm_tbps = hw.hbm_bw_bytes_per_s / kTera;
  double su_gbps = hw.scaleup_bw_bytes_per_s / 1e9, su_lat = hw.scaleup_latency_s * 1e6;
  double nic_gbps = hw.nic_bw_bytes_per_s * 8 / 1e9, nic_lat = hw.nic_latency_s * 1e6;
  double host = hw.host_link_bw_bytes_per_s / 1e9;
  r.Double("hbm_gib", hbm_gib);
  r.Double("hbm_tbps", hbm_tbps);
  r.Int("sm_count", hw.sm_count);
  r.Int("scaleup_domain", hw.scaleup_domain);
  r.Double("scaleup_gbps_per_dir", su_gbps);
  r.Double("scaleup_latency_us", su_lat);
  r.Double("nic_gbps_per_gpu", nic_gbps);
  r.Double("nic_latency_us", nic_lat);
  r.Double("host_link_gbps_per_dir", host);
  r.Double("tdp_w", hw.tdp_w);
  r.Double("price_usd_per_gpu_hour", hw.price_usd_per_gpu_hour);
  if (r.Has("efficiency")) {
    FieldReader e(j["efficiency"], origin + ": efficiency");
    Efficiency& f = hw.eff;
    e.Double("gemm_max", f.gemm_max);
    e.Double("gemm_half_dim", f.gemm_half_dim);
    e.Double("grouped_gemm", f.grouped_gemm);
    e.Double("attn_fwd", f.attn_fwd);
    e.Double("attn_bwd", f.attn_bwd);
    e.Double("attn_fa2_fwd", f.attn_fa2_fwd, -1);
    e.Double("attn_fa2_bwd", f.attn_fa2_bwd, -1);
    e.Double("mem", f.mem);
    e.Double("scaleup_bus", f.scaleup_bus);
    e.Double("nic_bus", f.nic_bus);
    e.Double("a2a_scaleup", f.a2a_scaleup);
    e.Double("a2a_nic", f.a2a_nic);
    e.Double("fp8_gemm_speedup", f.fp8_gemm_speedup);
    e.Double("mxfp8_gemm_speedup", f.mxfp8_gemm_speedup, -1);
    e.Double("fp4_gemm_speedup", f.fp4_gemm_speedup);
    e.Double("layer_overhead_us", f.layer_overhead_us);
    e.Double("step_overhead_s", f.step_overhead_s);
    e.Double("comm_overlap", f.comm_overlap);
    e.Ignore("fitted_on");
    e.Ignore("fitted_date");
    if (Status s = e.Finish(true); !s.ok()) return s;
    struct Frac {
      const char* name;
      double v;
    };
    for (Frac x :
         {Frac{"gemm_max", f.gemm_max}, Frac{"attn_fwd", f.attn_fwd}, Frac{"attn_bwd", f.attn_bwd},
          Frac{"mem", f.mem}, Frac{"scaleup_bus", f.scaleup_bus}, Frac{"nic_bus", f.nic_bus},
          Frac{"a2a_scaleup", f.a2a_scaleup}, Frac{"a2a_nic", f.a2a_nic},
          Frac{"comm_overlap", f.comm_overlap}, Frac{"grouped_gemm", f.grouped_gemm}})
      if (x.v <= 0 || x.v > 1)
        return Status::Invalid(origin + ": efficiency: " + x.name +
                               ": must be a fraction in (0, 1], got " + std::to_string(x.v));
    for (Frac x : {Frac{"attn_fa2_fwd", f.attn_fa2_fwd}, Frac{"attn_fa2_bwd", f.attn_fa2_bwd}})
      if (x.v == 0 || x.v > 1)  // negative = same as the fused-attention efficiency
        return Status::Invalid(origin + ": efficiency: " + x.name +
                               ": must be in (0, 1] or negative (unset), got " +
                               std::to_string(x.v));
    if (f.mxfp8_gemm_speedup == 0)
      return Status::Invalid(origin +
                             ": efficiency: mxfp8_gemm_speedup: must be > 0 or negative (unset)");
    if (f.gemm_half_dim < 0)
      return Status::Invalid(origin + ": efficiency: gemm_half_dim: must be >= 0");
    for (Frac x : {Frac{"fp8_gemm_speedup", f.fp8_gemm_speedup},
                   Frac{"fp4_gemm_speedup", f.fp4_gemm_speedup}})
      if (x.v <= 0)  // GEMM time is divided by it
        return Status::Invalid(origin + ": efficiency: " + x.name + ": must be > 0");
  }
  r.Ignore("efficiency");
  if (Status s = r.Finish(strict); !s.ok()) return s;
  hw.hbm_bytes = hbm_gib * kGiB;
  hw.hbm_bw_bytes_per_s = hbm_tbps * kTera;
  hw.scaleup_bw_bytes_per_s = su_gbps * 1e9;
  hw.scaleup_latency_s = su_lat * 1e-6;
  hw.nic_bw_bytes_per_s = nic_gbps * 1e9 / 8;
  hw.nic_latency_s = nic_lat * 1e-6;
  hw.host_link_bw_bytes_per_s = host * 1e9;
  // Finite in the file's units can still overflow once converted (hbm_gib 1e300).
  struct Conv {
    const char* name;
    double v;
  };
  for (Conv c :
       {Conv{"peak_tflops: bf16", hw.peak_bf16_flops},
        Conv{"peak_tflops: fp16", hw.peak_fp16_flops}, Conv{"peak_tflops: fp8", hw.peak_fp8_flops},
        Conv{"peak_tflops: fp4", hw.peak_fp4_flops}, Conv{"peak_tflops: fp32", hw.peak_fp32_flops},
        Conv{"hbm_gib", hw.hbm_bytes}, Conv{"hbm_tbps", hw.hbm_bw_bytes_per_s},
        Conv{"scaleup_gbps_per_dir", hw.scaleup_bw_bytes_per_s},
        Conv{"nic_gbps_per_gpu", hw.nic_bw_bytes_per_s},
        Conv{"host_link_gbps_per_dir", hw.host_link_bw_bytes_per_s}})
    if (!std::isfinite(c.v)) return Status::Invalid(origin + ": " + c.name + ": value too large");
  return Status::Ok();
}

}  // namespace

std::string_view DTypeName(DType d) {
  switch (d) {
    case DType::kFp32:
      return "fp32";
    case DType::kTf32:
      return "tf32";
    case DType::kFp16:
      return "fp16";
    case DType::kBf16:
      return "bf16";
    case DType::kFp8:
      return "fp8";
    case DType::kMxfp8:
      return "mxfp8";
    case DType::kFp4:
      return "nvfp4";
  }
  return "?";
}

Result<DType> ParseDType(std::string_view s) {
  if (s == "bf16" || s == "bfloat16") return DType::kBf16;
  if (s == "fp16" || s == "float16") return DType::kFp16;
  if (s == "fp32" || s == "float32") return DType::kFp32;
  if (s == "fp8" || s == "e4m3" || s == "hybrid") return DType::kFp8;
  if (s == "mxfp8") return DType::kMxfp8;
  if (s == "nvfp4" || s == "fp4" || s == "mxfp4") return DType::kFp4;
  return Status::Invalid("dtype: unknown precision '" + std::string(s) +
                         "' (bf16, fp16, fp32, fp8, mxfp8, nvfp4)");
}

double HardwareSpec::PeakFlops(DType d) const {
  switch (d) {
    case DType::kFp32:
    case DType::kTf32:
      return peak_fp32_flops;
    case DType::kFp16:
      return peak_fp16_flops > 0 ? peak_fp16_flops : peak_bf16_flops;
    case DType::kBf16:
      return peak_bf16_flops;
    case DType::kFp8:
    case DType::kMxfp8:
      return peak_fp8_flops;
    case DType::kFp4:
      return peak_fp4_flops;
  }
  return 0;
}

namespace {

Result<HardwareSpec> ParseHardwareAt(std::string_view text, const std::string& origin, int depth);

// A preset without its own efficiency block may name a calibrated embedded preset of the same
// silicon ("efficiency_from": "h100_sxm_80gb") whose efficiencies it borrows.
Status InheritEfficiency(const json& j, HardwareSpec& hw, const std::string& origin, int depth) {
  if (!j.is_object() || j.contains("efficiency") || !j.contains("efficiency_from") ||
      j["efficiency_from"].is_null())
    return Status::Ok();
  if (!j["efficiency_from"].is_string())
    return Status::Invalid(origin + ": efficiency_from: must be a hardware preset id (string)");
  const std::string from = j["efficiency_from"].get<std::string>();
  const std::string_view* parent = detail::FindEmbeddedFile("hardware/" + from + ".json");
  if (!parent) return Status::Invalid(origin + ": efficiency_from: unknown preset '" + from + "'");
  if (depth >= 5)
    return Status::Invalid(origin + ": efficiency_from: a chain of more than 5 presets");
  auto base = ParseHardwareAt(*parent, from, depth + 1);
  if (!base.ok()) return base.status();
  hw.eff = base->eff;
  return Status::Ok();
}

Result<HardwareSpec> ParseHardwareAt(std::string_view text, const std::string& origin, int depth) {
  auto parsed = detail::ParseJsonText(text, origin);
  if (!parsed.ok()) return parsed.status();
  HardwareSpec hw;
  if (Status s = ReadHardwareFields(parsed.value(), hw, origin, true); !s.ok()) return s;
  if (hw.peak_bf16_flops <= 0 && hw.peak_fp16_flops <= 0)
    return Status::Invalid(origin + ": peak_tflops: bf16 or fp16 must be > 0");
  if (hw.hbm_bytes <= 0) return Status::Invalid(origin + ": hbm_gib: must be > 0");
  if (hw.hbm_bw_bytes_per_s <= 0) return Status::Invalid(origin + ": hbm_tbps: must be > 0");
  if (hw.scaleup_domain < 1) return Status::Invalid(origin + ": scaleup_domain: must be >= 1");
  if (hw.scaleup_bw_bytes_per_s <= 0)
    return Status::Invalid(origin + ": scaleup_gbps_per_dir: must be > 0");
  if (hw.nic_bw_bytes_per_s <= 0)
    return Status::Invalid(origin + ": nic_gbps_per_gpu: must be > 0");
  if (hw.sm_count <= 0) hw.sm_count = 132;
  if (Status s = InheritEfficiency(parsed.value(), hw, origin, depth); !s.ok()) return s;
  return hw;
}

}  // namespace

Result<HardwareSpec> ParseHardwareJson(std::string_view text, std::string_view origin) {
  return ParseHardwareAt(text, std::string(origin), 0);
}

Status ApplyHardwareOverrides(HardwareSpec& hw, std::string_view json_object,
                              std::string_view origin_sv) {
  const std::string origin(origin_sv);
  auto parsed = detail::ParseJsonText(json_object, origin);
  if (!parsed.ok()) return parsed.status();
  if (parsed.value().is_null()) return Status::Ok();
  HardwareSpec copy = hw;
  if (Status s = ReadHardwareFields(parsed.value(), copy, origin, true); !s.ok()) return s;
  if (copy.hbm_bytes <= 0) return Status::Invalid(origin + ": hbm_gib: must be > 0");
  if (copy.hbm_bw_bytes_per_s <= 0) return Status::Invalid(origin + ": hbm_tbps: must be > 0");
  if (copy.scaleup_domain < 1) return Status::Invalid(origin + ": scaleup_domain: must be >= 1");
  if (copy.scaleup_bw_bytes_per_s <= 0)
    return Status::Invalid(origin + ": scaleup_gbps_per_dir: must be > 0");
  if (copy.nic_bw_bytes_per_s <= 0)
    return Status::Invalid(origin + ": nic_gbps_per_gpu: must be > 0");
  hw = copy;
  return Status::Ok();
}

}  // namespace trainsim
