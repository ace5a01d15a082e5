// Hardware presets: data/hardware/*.json (keys in data/hardware/README.md), and overrides in the
// same keys. Units in the file: TFLOP/s, GiB, TB/s, GB/s (bytes), Gb/s (bits), microseconds.
#include "trainsim/hardware.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "spec/efficiency_read.h"
#include "spec/embedded.h"
#include "spec/field_text.h"
#include "spec/hardware_default.h"
#include "spec/json_fields.h"
#include "spec/simumax.h"
#include "trainsim/hardware_figures.h"
#include "trainsim/limits.h"
#include "trainsim/schema.h"
#include "util/parse_number.h"
#include "util/units.h"

namespace trainsim {
namespace {

// Fields where 0 means none take, when not 0, at least a physical floor (1 ns, 1 W, 0.1 cent):
// a denormal such as 1e-320 is a typo or an attack, not a latency, a TDP or a price (issue 11).
constexpr double kMinUs = 1e-3;
constexpr double kMinUsd = 1e-3;
// Host memory of one server, GiB: at least 1 GiB; at most 1e5 GiB (~100 TiB, twice the largest
// single-system memory on sale in 2026, 48 TiB HPE Superdome Flex class), so a typo in TiB or in
// bytes is refused, not simulated.
constexpr double kMinHostMemGiB = 1;
constexpr double kMaxHostMemGiB = 1e5;

using detail::FieldReader;
using nlohmann::json;
using namespace units;

// SM count assumed when a preset gives none (H100 SXM5: 132 SMs); the GEMM and attention wave
// quantization in src/cost/cost.cc divide by it.
constexpr int kDefaultSmCount = 132;

constexpr const char* kNoSource = "no source found";
using detail::kDefaultedField;
constexpr const char* kPeakKeys[] = {"bf16", "fp16", "fp8", "fp4", "fp32", "tf32"};

// A null peak is a figure without a findable source (data/hardware/README.md): it reads as 0 and
// is recorded in `sources` as "peak_tflops.<key>": "no source found", which CheckPeakSourced
// refuses by name; a number (an override) clears the mark.
void MarkUnknownPeaks(const json& j, HardwareSpec& hw) {
  if (!j.is_object()) return;
  for (const char* key : kPeakKeys) {
    if (!j.contains(key)) continue;
    const std::string field = std::string("peak_tflops.") + key;
    auto& v = hw.sources;
    v.erase(std::remove_if(v.begin(), v.end(),
                           [&](const HardwareSpec::FieldSource& f) {
                             return f.field == field && f.document == kNoSource;
                           }),
            v.end());
    if (!j[key].is_null()) continue;
    v.erase(std::remove_if(v.begin(), v.end(),
                           [&](const HardwareSpec::FieldSource& f) { return f.field == field; }),
            v.end());
    v.push_back({field, kNoSource, ""});
  }
}

// peak_tflops: {"bf16": ..., "fp8": ...} in TFLOP/s; null = no source found (0, marked).
Status ReadPeaks(const json& j, HardwareSpec& hw, const std::string& origin) {
  MarkUnknownPeaks(j, hw);
  FieldReader p(j, origin);
  double bf16 = FlopsToTflops(hw.peak_bf16_flops), fp16 = FlopsToTflops(hw.peak_fp16_flops);
  double fp8 = FlopsToTflops(hw.peak_fp8_flops), fp4 = FlopsToTflops(hw.peak_fp4_flops);
  double fp32 = FlopsToTflops(hw.peak_fp32_flops), tf32 = FlopsToTflops(hw.peak_tf32_flops);
  p.Double("bf16", bf16);
  p.Double("fp16", fp16);
  p.Double("fp8", fp8);
  p.Double("fp4", fp4);
  p.Double("fp32", fp32);
  p.Ignore("fp64");
  p.Double("tf32", tf32);
  if (Status s = p.Finish(true); !s.ok()) return s;
  for (auto [key, v] : {std::pair{"bf16", &bf16},
                        {"fp16", &fp16},
                        {"fp8", &fp8},
                        {"fp4", &fp4},
                        {"fp32", &fp32},
                        {"tf32", &tf32}})
    if (j.contains(key) && j[key].is_null()) *v = 0;
  hw.peak_bf16_flops = TflopsToFlops(bf16);
  hw.peak_fp16_flops = TflopsToFlops(fp16);
  hw.peak_fp8_flops = TflopsToFlops(fp8);
  hw.peak_fp4_flops = TflopsToFlops(fp4);
  hw.peak_fp32_flops = TflopsToFlops(fp32);
  hw.peak_tf32_flops = TflopsToFlops(tf32);
  return Status::Ok();
}

// One physical range per number of a hardware spec, in the file's units (docs/INPUTS.md, "Input
// limits"). Every door (preset file, --hw-override, sweep --vary, a validation case's overrides,
// a library caller) meets the same ranges through ValidateHardware. Lower bounds keep every
// division finite (a denormal bandwidth would give an infinite time); upper bounds are three
// orders of magnitude above any GPU of 2026 (B300: 2.5 PFLOP/s dense FP8... 288 GiB, 8 TB/s).
struct HwRange {
  const char* key;
  double value;     // in the file's units
  double lo, hi;    // inclusive
  bool zero_ok;     // 0 = not supported / none
  const char* ctx;  // nested under this key ("" = top level)
};

std::vector<HwRange> RangesOf(const HardwareSpec& hw) {
  return {
      {"bf16", FlopsToTflops(hw.peak_bf16_flops), 1e-3, 1e6, true, "peak_tflops"},
      {"fp16", FlopsToTflops(hw.peak_fp16_flops), 1e-3, 1e6, true, "peak_tflops"},
      {"fp8", FlopsToTflops(hw.peak_fp8_flops), 1e-3, 1e6, true, "peak_tflops"},
      {"fp4", FlopsToTflops(hw.peak_fp4_flops), 1e-3, 1e6, true, "peak_tflops"},
      {"fp32", FlopsToTflops(hw.peak_fp32_flops), 1e-3, 1e6, true, "peak_tflops"},
      {"tf32", FlopsToTflops(hw.peak_tf32_flops), 1e-3, 1e6, true, "peak_tflops"},
      {"hbm_gib", BytesToGiB(hw.hbm_bytes), 1e-3, 1e6, false, ""},
      {"hbm_tbps", BytesPerSToTBps(hw.hbm_bw_bytes_per_s), 1e-3, 1e4, false, ""},
      {"scaleup_gbps_per_dir", BytesPerSToGBps(hw.scaleup_bw_bytes_per_s), 1e-3, 1e6, false, ""},
      {"nic_gbps_per_gpu", BytesPerSToGbps(hw.nic_bw_bytes_per_s), 1e-3, 1e7, false, ""},
      {"host_link_gbps_per_dir", BytesPerSToGBps(hw.host_link_bw_bytes_per_s), 1e-3, 1e6, false,
       ""},
      {"host_mem_gib", BytesToGiB(hw.host_mem_bytes), kMinHostMemGiB, kMaxHostMemGiB, true, ""},
      {"scaleup_latency_us", SToUs(hw.scaleup_latency_s), kMinUs, 1e6, true, ""},
      {"scaleup_hop_latency_us", SToUs(hw.scaleup_hop_latency_s), kMinUs, 1e6, true, ""},
      {"nic_latency_us", SToUs(hw.nic_latency_s), kMinUs, 1e6, true, ""},
      {"nic_hop_latency_us", SToUs(hw.nic_hop_latency_s), kMinUs, 1e6, true, ""},
      {"nic_tree_level_latency_us", SToUs(hw.nic_tree_level_latency_s), kMinUs, 1e6, true, ""},
      {"sm_count", static_cast<double>(hw.sm_count), 1, 1e6, true, ""},
      {"scaleup_domain", static_cast<double>(hw.scaleup_domain), 1, limits::kMaxWorldSize, false,
       ""},
      {"tdp_w", hw.tdp_w, 1, 1e6, true, ""},
      {"price_usd_per_gpu_hour", hw.price_usd_per_gpu_hour, kMinUsd, 1e6, true, ""},
      {"price_reserved_usd_per_gpu_hour", hw.price_reserved_usd_per_gpu_hour, kMinUsd, 1e6, true,
       ""},
      {"gpus_per_node", static_cast<double>(hw.gpus_per_node), 1, 1e6, true, ""},
      {"rails", static_cast<double>(hw.rails), 1, 1e6, true, ""},
  };
}

// Unit conversions that overflow: finite in the file's units, not in bytes (hbm_gib 1e300).
// Named with the field's range (it said "value too large", which hid the rule; issue 11).
Status CheckFinite(const HardwareSpec& hw, const std::string& origin) {
  for (const HwRange& r : RangesOf(hw))
    if (std::isinf(r.value))
      return Status::Invalid(r.key, "must be in [" + detail::NumberText(r.lo) + ", " +
                                        detail::NumberText(r.hi) + "]" +
                                        (r.zero_ok ? " or 0" : "") + ", got a larger value")
          .WithContext(*r.ctx ? origin + ": " + r.ctx : origin);
  return Status::Ok();
}

// Reads every preset key present in `j` into `hw`; absent keys keep their value.
// {"2": 0.63, "4": 0.65, "8": 0.39}: efficiency by group size, sorted by size.
Status ReadGroupTable(const json& j, const char* key, std::vector<std::pair<int, double>>& out) {
  if (!j.is_object() || j.empty())
    return Status::Invalid(key, "must be an object of group size -> efficiency");
  std::vector<std::pair<int, double>> t;
  for (const auto& [k, v] : j.items()) {
    const std::optional<int> g = util::ParseInt<int>(k);
    if (!g || *g < 2 || *g > 1 << 20)
      return Status::Invalid(key, "group sizes must be integers >= 2, got '" + k + "'");
    if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 1)
      return Status::Invalid(key, "efficiency of group " + k + " must be in (0, 1]");
    t.emplace_back(*g, v.get<double>());
  }
  std::sort(t.begin(), t.end());
  out = std::move(t);
  return Status::Ok();
}

// ["gemm_max", "gemm_k_half"]: names of efficiency fields measured on this hardware.
Status ReadPinned(const json& j, std::vector<std::string>& out) {
  constexpr const char* kKey = "efficiency_pinned";
  if (!j.is_array()) return Status::Invalid(kKey, "must be an array of efficiency field names");
  std::vector<std::string> names;
  for (const json& v : j) {
    if (!v.is_string()) return Status::Invalid(kKey, "must be an array of efficiency field names");
    const std::string name = v.get<std::string>();
    bool known = false;
    for (const EfficiencyField& f : EfficiencySchema()) known = known || name == f.key;
    if (!known) return Status::Invalid(kKey, "unknown efficiency field '" + name + "'");
    names.push_back(name);
  }
  out = std::move(names);
  return Status::Ok();
}

// "sources": {"peak_tflops": {"document": "...", "date": "2023-07"}, ...}: the document and date
// of each group of figures; a figure without one says {"document": "no source found",
// "date": null} (data/hardware/README.md).
Status ReadSources(const json& j, std::vector<HardwareSpec::FieldSource>& out) {
  constexpr const char* kKey = "sources";
  if (!j.is_object())
    return Status::Invalid(kKey, "must be an object of field -> {document, date}");
  std::vector<HardwareSpec::FieldSource> v;
  for (const auto& [field, src] : j.items()) {
    if (!src.is_object() || !src.contains("document") || !src["document"].is_string())
      return Status::Invalid(kKey, "'" + field + "' must be an object with a document (string)");
    for (const auto& [k, unused] : src.items())
      if (k != "document" && k != "date")
        return Status::Invalid(kKey, "'" + field + "': unknown key '" + k + "' (document, date)");
    const json& date = src.contains("date") ? src["date"] : json();
    if (!date.is_null() && !date.is_string())
      return Status::Invalid(kKey, "'" + field + "': date must be a string or null");
    v.push_back(
        {field, src["document"].get<std::string>(), date.is_null() ? "" : date.get<std::string>()});
  }
  out = std::move(v);
  return Status::Ok();
}

// The catalogue's provenance keys: sources, dates, prices other than the on-demand one, the
// server shape. None of them changes a simulated number.
Status ReadMetadata(const json& j, FieldReader& r, HardwareSpec& hw, const std::string& origin) {
  r.String("source", hw.source);
  r.String("source_date", hw.source_date);
  r.String("price_source", hw.price_source);
  r.String("price_date", hw.price_date);
  r.Double("price_reserved_usd_per_gpu_hour", hw.price_reserved_usd_per_gpu_hour);
  r.String("price_reserved_source", hw.price_reserved_source);
  r.String("price_reserved_date", hw.price_reserved_date);
  r.Int("gpus_per_node", hw.gpus_per_node);
  r.Int("rails", hw.rails);
  r.String("instance_of", hw.instance_of);
  r.Ignore("notes");
  // The datasheet's "with sparsity" figures, kept to check that peak_tflops is the dense half
  // (data/hardware/README.md); never simulated.
  r.Ignore("peak_tflops_sparse");
  if (r.Has("sources")) {
    if (Status s = ReadSources(j["sources"], hw.sources); !s.ok()) return s.WithContext(origin);
    r.Ignore("sources");
  }
  return Status::Ok();
}

Status ReadHardwareFields(const json& j, HardwareSpec& hw, const std::string& origin, bool strict) {
  FieldReader r(j, origin);
  r.String("id", hw.id);
  r.String("name", hw.name);
  if (Status s = ReadMetadata(j, r, hw, origin); !s.ok()) return s;
  r.Ignore("efficiency_from");  // resolved by ParseHardwareJson
  if (r.Has("efficiency_gemm_scale") && (!r.Has("efficiency_from") || r.Has("efficiency")))
    return Status::Invalid("efficiency_gemm_scale",
                           "scales a borrowed block: needs efficiency_from and no efficiency")
        .WithContext(origin);
  r.Ignore("efficiency_gemm_scale");  // applied by InheritEfficiency
  if (r.Has("peak_tflops")) {
    if (Status s = ReadPeaks(j["peak_tflops"], hw, origin + ": peak_tflops"); !s.ok()) return s;
  }
  r.Ignore("peak_tflops");
  // The file's units (GiB, TB/s, GB/s, Gb/s, us); absent keys keep the current value.
  double hbm_gib = BytesToGiB(hw.hbm_bytes), hbm_tbps = BytesPerSToTBps(hw.hbm_bw_bytes_per_s);
  double su_gbps = BytesPerSToGBps(hw.scaleup_bw_bytes_per_s), su_lat = SToUs(hw.scaleup_latency_s);
  double nic_gbps = BytesPerSToGbps(hw.nic_bw_bytes_per_s), nic_lat = SToUs(hw.nic_latency_s);
  double host = BytesPerSToGBps(hw.host_link_bw_bytes_per_s);
  double host_mem = BytesToGiB(hw.host_mem_bytes);
  double su_hop = SToUs(hw.scaleup_hop_latency_s), nic_hop = SToUs(hw.nic_hop_latency_s);
  double nic_tree = SToUs(hw.nic_tree_level_latency_s);
  r.Double("scaleup_hop_latency_us", su_hop);
  r.Double("nic_hop_latency_us", nic_hop);
  r.Double("nic_tree_level_latency_us", nic_tree);
  r.Ignore("latency_source");
  r.Ignore("efficiency_measured");
  if (r.Has("efficiency_pinned")) {
    if (Status s = ReadPinned(j["efficiency_pinned"], hw.efficiency_pinned); !s.ok())
      return s.WithContext(origin);
    r.Ignore("efficiency_pinned");
  }
  r.Double("hbm_gib", hbm_gib);
  r.Double("hbm_tbps", hbm_tbps);
  r.Int("sm_count", hw.sm_count);
  r.Int("scaleup_domain", hw.scaleup_domain);
  r.Double("scaleup_gbps_per_dir", su_gbps);
  r.Double("scaleup_latency_us", su_lat);
  r.Double("nic_gbps_per_gpu", nic_gbps);
  r.Double("nic_latency_us", nic_lat);
  r.Double("host_link_gbps_per_dir", host);
  r.Double("host_mem_gib", host_mem, kMinHostMemGiB);  // given: a capacity (absent: 0)
  r.Double("tdp_w", hw.tdp_w);
  r.Double("price_usd_per_gpu_hour", hw.price_usd_per_gpu_hour);
  r.String("scaleup_topology", hw.scaleup_topology);
  for (auto [key, table] : {std::pair{"scaleup_bus_by_group", &hw.scaleup_bus_by_group},
                            std::pair{"scaleup_a2a_by_group", &hw.scaleup_a2a_by_group}}) {
    if (!r.Has(key)) continue;
    if (Status s = ReadGroupTable(j[key], key, *table); !s.ok()) return s.WithContext(origin);
    r.Ignore(key);
  }
  if (r.Has("efficiency"))
    if (Status s = detail::ReadEfficiencyBlock(j["efficiency"], hw.eff, origin); !s.ok()) return s;
  r.Ignore("efficiency");
  if (Status s = r.Finish(strict); !s.ok()) return s;
  // Host memory absent is "not recorded" (0: HostMemBytesPerNode's default); given, it is a
  // capacity: r.Double refuses 0 and below, this its upper bound, in the file's units.
  if (r.Has("host_mem_gib") && !(host_mem <= kMaxHostMemGiB))
    return Status::Invalid("host_mem_gib", "must be in [" + detail::NumberText(kMinHostMemGiB) +
                                               ", " + detail::NumberText(kMaxHostMemGiB) +
                                               "] GiB per node, got " +
                                               detail::NumberText(host_mem))
        .WithContext(origin);
  // A latency below the floor would reach CheckRanges as 0 s once converted (1e-320 us
  // underflows), read silently as "none": refuse it here, in the file's units.
  for (auto [key, us] : {std::pair{"scaleup_latency_us", su_lat},
                         {"nic_latency_us", nic_lat},
                         {"scaleup_hop_latency_us", su_hop},
                         {"nic_hop_latency_us", nic_hop},
                         {"nic_tree_level_latency_us", nic_tree}})
    if (us != 0 && std::abs(us) < kMinUs)
      return Status::Invalid(key, "must be in [" + detail::NumberText(kMinUs) + ", " +
                                      detail::NumberText(1e6) + "] or 0, got " +
                                      detail::NumberText(us))
          .WithContext(origin);
  hw.hbm_bytes = GiBToBytes(hbm_gib);
  hw.hbm_bw_bytes_per_s = TBpsToBytesPerS(hbm_tbps);
  hw.scaleup_bw_bytes_per_s = GBpsToBytesPerS(su_gbps);
  hw.scaleup_latency_s = UsToS(su_lat);
  hw.nic_bw_bytes_per_s = GbpsToBytesPerS(nic_gbps);
  hw.nic_latency_s = UsToS(nic_lat);
  hw.scaleup_hop_latency_s = UsToS(su_hop);
  hw.nic_hop_latency_s = UsToS(nic_hop);
  hw.nic_tree_level_latency_s = UsToS(nic_tree);
  hw.host_link_bw_bytes_per_s = GBpsToBytesPerS(host);
  hw.host_mem_bytes = GiBToBytes(host_mem);
  return CheckFinite(hw, origin);
}

Status CheckRanges(const HardwareSpec& hw) {
  for (const HwRange& r : RangesOf(hw)) {
    if (r.zero_ok && r.value == 0) continue;
    if (r.value >= r.lo && r.value <= r.hi) continue;  // false for NaN
    const std::string rule = "must be in [" + detail::NumberText(r.lo) + ", " +
                             detail::NumberText(r.hi) + "]" + (r.zero_ok ? " or 0" : "") +
                             ", got " + detail::NumberText(r.value);
    return *r.ctx ? Status::Invalid(r.key, rule).WithContext(r.ctx) : Status::Invalid(r.key, rule);
  }
  // A profile whose 16-bit peaks are both unknown (null, no source found) still loads: runs that
  // need them are refused by CheckPeakSourced. One null next to a 0 (= no such path) does not.
  if (hw.peak_bf16_flops <= 0 && hw.peak_fp16_flops <= 0 &&
      !(PeakUnknown(hw, "bf16") && PeakUnknown(hw, "fp16")))
    return Status::Invalid("peak_tflops",
                           "bf16 or fp16 must be > 0, or both null (no source found)");
  if (hw.scaleup_topology != "nvlink" && hw.scaleup_topology != "pcie")
    return Status::Invalid("scaleup_topology",
                           "must be nvlink or pcie, got '" + hw.scaleup_topology + "'");
  return Status::Ok();
}

double GroupEfficiency(const std::vector<std::pair<int, double>>& table, int group,
                       double fallback) {
  if (table.empty()) return fallback;
  for (const auto& [g, e] : table)
    if (g >= group) return e;
  return table.back().second;
}

}  // namespace

double HardwareSpec::ScaleupBusEfficiency(int group) const {
  return GroupEfficiency(scaleup_bus_by_group, group, eff.scaleup_bus);
}

double HardwareSpec::ScaleupA2aEfficiency(int group) const {
  return GroupEfficiency(scaleup_a2a_by_group, group, eff.a2a_scaleup);
}

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
  if (s == "tf32") return DType::kTf32;
  if (s == "fp8" || s == "e4m3" || s == "hybrid") return DType::kFp8;
  if (s == "mxfp8") return DType::kMxfp8;
  if (s == "nvfp4" || s == "fp4" || s == "mxfp4") return DType::kFp4;
  return Status::Invalid("dtype: unknown precision '" + std::string(s) +
                         "' (bf16, fp16, fp32, tf32, fp8, mxfp8, nvfp4)");
}

double HardwareSpec::PeakFlops(DType d) const {
  switch (d) {
    case DType::kFp32:
      return peak_fp32_flops;
    case DType::kTf32:  // TF32 tensor cores where the GPU has them, else fp32 units
      if (peak_tf32_flops > 0) return peak_tf32_flops;
      return PeakUnknown(*this, "tf32") ? 0 : peak_fp32_flops;
    case DType::kFp16:  // never another precision's figure in place of an unknown one
      if (peak_fp16_flops > 0) return peak_fp16_flops;
      return PeakUnknown(*this, "fp16") ? 0 : peak_bf16_flops;
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

bool PeakUnknown(const HardwareSpec& hw, std::string_view precision) {
  for (const HardwareSpec::FieldSource& f : hw.sources)
    if (f.document == kNoSource && f.field.size() == 12 + precision.size() &&
        f.field.compare(0, 12, "peak_tflops.") == 0 &&
        f.field.compare(12, f.field.npos, precision) == 0)
      return true;
  return false;
}

std::string_view PeakKey(const HardwareSpec& hw, DType d) {
  switch (d) {
    case DType::kFp32:
      return "fp32";
    case DType::kTf32:
      return hw.peak_tf32_flops > 0 || PeakUnknown(hw, "tf32") ? "tf32" : "fp32";
    case DType::kFp16:
      return hw.peak_fp16_flops > 0 || PeakUnknown(hw, "fp16") ? "fp16" : "bf16";
    case DType::kBf16:
      return "bf16";
    case DType::kFp8:
    case DType::kMxfp8:
      return "fp8";
    case DType::kFp4:
      return "fp4";
  }
  return "bf16";
}

Status CheckPeakSourced(const HardwareSpec& hw, DType d) {
  const std::string key(PeakKey(hw, d));
  if (!PeakUnknown(hw, key)) return Status::Ok();
  return Status::Invalid(
      "peak_tflops." + key,
      hw.id + " gives it as null (no source found) and a " + std::string(DTypeName(d)) +
          " run needs it: a catalogue figure is never invented; give it with --hw-override "
          "'{\"peak_tflops\": {\"" +
          key + "\": TFLOPS}}' or choose a precision the profile has a figure for");
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
    return Status::Invalid("efficiency_from", "must be a hardware preset id (string)")
        .WithContext(origin);
  const std::string from = j["efficiency_from"].get<std::string>();
  const std::string_view* parent = detail::FindEmbeddedFile("hardware/" + from + ".json");
  if (!parent)
    return Status::Invalid("efficiency_from", "unknown preset '" + from + "'").WithContext(origin);
  if (depth >= 5)
    return Status::Invalid("efficiency_from", "a chain of more than 5 presets").WithContext(origin);
  auto base = ParseHardwareAt(*parent, from, depth + 1);
  if (!base.ok()) return base.status();
  hw.eff = base->eff;
  // A GPU of the same family whose best measured GEMM reaches another fraction of its datasheet
  // peak than the donor's (a power-limited PCIe card): the donor's gemm_max times the ratio of
  // the two measured fractions (provenance in the file's notes).
  if (j.contains("efficiency_gemm_scale")) {
    const json& k = j["efficiency_gemm_scale"];
    if (!k.is_number() || !(k.get<double>() > 0 && k.get<double>() <= 1.5))
      return Status::Invalid("efficiency_gemm_scale", "must be a number in (0, 1.5]")
          .WithContext(origin);
    hw.eff.gemm_max *= k.get<double>();
  }
  return Status::Ok();
}

// Calibrated = the file's own efficiency block, fitted (fitted_date set) by `trainsim calibrate`
// on public measured runs of this preset; borrowed (efficiency_from) or default efficiencies are
// not.
void MarkCalibration(const json& j, HardwareSpec& hw) {
  const bool own = j.contains("efficiency") && j["efficiency"].is_object();
  hw.calibrated = own && !hw.eff.fitted_date.empty();
  hw.efficiency_measured = own && !hw.calibrated && j.contains("efficiency_measured");
  hw.efficiency_from.clear();
  if (!own && j.contains("efficiency_from") && j["efficiency_from"].is_string())
    hw.efficiency_from = j["efficiency_from"].get<std::string>();
}

Result<HardwareSpec> ParseHardwareAt(std::string_view text, const std::string& origin, int depth) {
  auto parsed = detail::ParseJsonText(text, origin);
  if (!parsed.ok()) return parsed.status();
  if (detail::IsSimuMaxSystem(parsed.value())) {  // a SimuMax system file (simumax_system.cc)
    auto converted = detail::ParseSimuMaxSystem(parsed.value(), origin, nullptr);
    if (converted.ok())
      if (Status s = ValidateHardware(converted.value()); !s.ok()) return s.WithContext(origin);
    return converted;
  }
  HardwareSpec hw;
  if (Status s = ReadHardwareFields(parsed.value(), hw, origin, true); !s.ok()) return s;
  // The host link's default (32 GB/s) is marked, so that the reports list it as assumed; a
  // null value ("not published") takes the same default.
  if (!parsed.value().contains("host_link_gbps_per_dir") ||
      parsed.value()["host_link_gbps_per_dir"].is_null())
    hw.sources.push_back({"host_link_gbps_per_dir", std::string(kDefaultedField), ""});
  if (hw.sm_count <= 0) {
    hw.sm_count = kDefaultSmCount;
    hw.sources.push_back({"sm_count", std::string(kDefaultedField), ""});
  }
  if (Status s = InheritEfficiency(parsed.value(), hw, origin, depth); !s.ok()) return s;
  MarkCalibration(parsed.value(), hw);
  if (Status s = ValidateHardware(hw); !s.ok()) return s.WithContext(origin);
  return hw;
}

}  // namespace

std::string UncalibratedNote(const HardwareSpec& hw) {
  const std::string what = !hw.efficiency_from.empty()
                               ? "efficiencies borrowed from " + hw.efficiency_from
                           : hw.efficiency_measured ? "efficiencies from microbenchmarks (no fit)"
                                                    : "nominal efficiencies (no fit)";
  return "UNCALIBRATED hardware: " + what + ", not fitted on measured runs of " + hw.id +
         "; the uncertainty band is widened (docs/VALIDATION.md)";
}

std::string CalibrationStatus(const HardwareSpec& hw) {
  if (hw.calibrated) return "calibrated " + hw.eff.fitted_date;
  if (!hw.efficiency_from.empty()) return "uncalibrated (from " + hw.efficiency_from + ")";
  return hw.efficiency_measured ? "uncalibrated (measured)" : "uncalibrated (nominal)";
}

Status ValidateHardware(const HardwareSpec& hw) {
  if (Status s = CheckRanges(hw); !s.ok()) return s;
  for (const auto* table : {&hw.scaleup_bus_by_group, &hw.scaleup_a2a_by_group})
    for (const auto& [g, e] : *table)
      if (!(e >= 1e-3 && e <= 1) || g < 2)
        return Status::Invalid(
            table == &hw.scaleup_bus_by_group ? "scaleup_bus_by_group" : "scaleup_a2a_by_group",
            "efficiencies must be in [0.001, 1] for groups >= 2");
  return detail::CheckEfficiency(hw.eff).WithContext("efficiency");
}

Result<HardwareSpec> ParseHardwareJson(std::string_view text, std::string_view origin) {
  return ParseHardwareAt(text, std::string(origin), 0);
}

namespace {

// A power cap below the rated TDP lowers the clocks under sustained tensor load, and every tensor
// peak with them. Dynamic power goes as f·V² with V roughly following f, so the clock falls with
// about the cube root of the power; NVIDIA's datasheets for one die at two TDPs give the
// exponent: H100 SXM5 989.5 TFLOP/s BF16 dense at 700 W, H100 NVL 835.5 at 400 W (per GPU),
// ln(835.5/989.5) / ln(400/700) = 0.30. Memory and link bandwidths keep their clocks.
constexpr double kPowerCapExponent = 0.30;

// The lowest power limit a data-center GPU accepts, as a fraction of its rated TDP (nvidia-smi -q
// "Min Power Limit": A100 SXM4 100 of 400 W, H100 SXM5 200 of 700 W). The clock law above is
// measured between 57 % and 100 %; below a quarter no GPU runs, and a 1 W cap was costed.
constexpr double kMinPowerCapFraction = 0.25;

// A tdp_w override of a GPU with a rated TDP is a power cap: 0 would read as "no TDP" (energy
// dropped from `plan` without a word), one above the rated figure raises neither the clocks nor
// the draw (plan's energy grew with it), one below the lowest limit cannot be set.
Status CheckPowerCap(const HardwareSpec& rated, const json& overrides, const HardwareSpec& hw) {
  if (!overrides.contains("tdp_w") || overrides["tdp_w"].is_null() || !(rated.tdp_w >= 1))
    return Status::Ok();
  // Outside the field's own range ValidateHardware names the range.
  if (hw.tdp_w != 0 && !(hw.tdp_w >= 1 && hw.tdp_w <= 1e6)) return Status::Ok();
  // A spec capped before keeps its rated figure in rated_tdp_w.
  const double max_w = rated.rated_tdp_w > 0 ? rated.rated_tdp_w : rated.tdp_w;
  const double lo = kMinPowerCapFraction * max_w;
  if (hw.tdp_w >= lo && hw.tdp_w <= max_w) return Status::Ok();
  return Status::Invalid(
      "tdp_w", "a power cap of " + rated.id + " (rated " + detail::NumberText(max_w) +
                   " W) must be in [" + detail::NumberText(lo) + ", " + detail::NumberText(max_w) +
                   "] W (a quarter of rated: the lowest limit nvidia-smi "
                   "accepts), got " +
                   detail::NumberText(hw.tdp_w) + " (a different rated power is a hardware file)");
}

void ApplyPowerCap(const HardwareSpec& rated, const json& overrides, HardwareSpec& hw) {
  if (!overrides.contains("tdp_w") || overrides.contains("peak_tflops")) return;
  // A tdp_w outside its range is refused (CheckPowerCap, ValidateHardware), not scaled by.
  if (!(hw.tdp_w >= 1 && rated.tdp_w >= 1 && hw.tdp_w < rated.tdp_w)) return;
  const double f = std::pow(hw.tdp_w / rated.tdp_w, kPowerCapExponent);
  for (double* p : {&hw.peak_bf16_flops, &hw.peak_fp16_flops, &hw.peak_fp8_flops,
                    &hw.peak_fp4_flops, &hw.peak_fp32_flops, &hw.peak_tf32_flops})
    *p *= f;
  hw.power_cap_clock = rated.power_cap_clock * f;
  hw.rated_tdp_w = rated.rated_tdp_w > 0 ? rated.rated_tdp_w : rated.tdp_w;
}

}  // namespace

Status ApplyHardwareOverrides(HardwareSpec& hw, std::string_view json_object,
                              std::string_view origin_sv) {
  const std::string origin(origin_sv);
  auto parsed = detail::ParseJsonText(json_object, origin);
  if (!parsed.ok()) return parsed.status();
  if (parsed.value().is_null()) return Status::Ok();
  HardwareSpec copy = hw;
  if (Status s = ReadHardwareFields(parsed.value(), copy, origin, true); !s.ok()) return s;
  for (const char* key : {"host_link_gbps_per_dir", "sm_count"})
    if (parsed.value().contains(key) && !parsed.value()[key].is_null())
      std::erase_if(copy.sources, [&](const HardwareSpec::FieldSource& f) {
        return f.field == key && f.document == kDefaultedField;
      });
  if (Status s = CheckPowerCap(hw, parsed.value(), copy); !s.ok()) return s.WithContext(origin);
  ApplyPowerCap(hw, parsed.value(), copy);
  if (parsed.value().contains("efficiency_from"))
    if (Status s = InheritEfficiency(parsed.value(), copy, origin, 0); !s.ok()) return s;
  // Efficiencies set by hand are not the fitted ones: the spec is no longer calibrated.
  if (parsed.value().contains("efficiency_from") && !parsed.value().contains("efficiency"))
    MarkCalibration(parsed.value(), copy);
  else if (parsed.value().contains("efficiency"))
    copy.calibrated = copy.efficiency_measured = false;
  if (Status s = ValidateHardware(copy); !s.ok()) return s.WithContext(origin);
  hw = copy;
  return Status::Ok();
}

}  // namespace trainsim
