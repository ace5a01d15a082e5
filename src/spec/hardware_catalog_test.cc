// The hardware catalogue (data/hardware/, README there): every profile loads, carries a source
// and a date for every figure (or null with "no source found"), quotes dense peaks (never the
// 2:4 sparsity figure), and simulates a small model; uncalibrated profiles are marked as such.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <string>

#include "spec/embedded.h"
#include "trainsim/hardware_figures.h"
#include "trainsim/presets.h"
#include "trainsim/search.h"
#include "trainsim/trainsim.h"
#include "trainsim/uncertainty.h"

namespace trainsim {
namespace {

using nlohmann::json;

constexpr const char* kNoSource = "no source found";

// The raw file of an embedded preset (nulls and provenance keys are not in HardwareSpec).
json Raw(const std::string& id) {
  const std::string_view* text = detail::FindEmbeddedFile("hardware/" + id + ".json");
  if (!text) return json();
  return json::parse(text->begin(), text->end());
}

// "2023", "2023-07" or "2023-07-14".
bool IsDate(const json& v) {
  static const std::regex kDate(R"(\d{4}(-\d{2}(-\d{2})?)?)");
  return v.is_string() && std::regex_match(v.get<std::string>(), kDate);
}

// The groups of "sources" and the keys each one covers; a group whose document is "no source
// found" must leave its keys null (or absent).
struct Group {
  const char* name;
  std::vector<const char*> keys;
  bool may_be_unsourced;  // false: the simulator cannot run without it
};
const std::vector<Group>& Groups() {
  static const std::vector<Group> g = {
      {"peak_tflops", {"peak_tflops"}, false},
      {"hbm", {"hbm_gib", "hbm_tbps"}, false},
      {"sm_count", {"sm_count"}, true},
      {"scaleup", {"scaleup_domain", "scaleup_gbps_per_dir"}, false},
      {"nic", {"nic_gbps_per_gpu"}, false},
      {"host_link", {"host_link_gbps_per_dir"}, true},
      {"host_mem", {"host_mem_gib"}, true},
      {"tdp_w", {"tdp_w"}, true},
  };
  return g;
}

// A price key with its source and date: a positive number with both, or null with "no source
// found" and a null date.
void ExpectPriceSourced(const std::string& id, const json& j, const std::string& price,
                        const std::string& source, const std::string& date) {
  SCOPED_TRACE(id + ": " + price);
  ASSERT_TRUE(j.contains(price)) << "missing key";
  ASSERT_TRUE(j.contains(source)) << "missing " << source;
  ASSERT_TRUE(j.contains(date)) << "missing " << date;
  if (j[price].is_null()) {
    EXPECT_EQ(j[source], kNoSource);
    EXPECT_TRUE(j[date].is_null());
    return;
  }
  ASSERT_TRUE(j[price].is_number());
  EXPECT_GT(j[price].get<double>(), 0);
  ASSERT_TRUE(j[source].is_string());
  EXPECT_GT(j[source].get<std::string>().size(), 10u);
  EXPECT_TRUE(IsDate(j[date])) << j[date];
}

double Peak(const json& j, const char* k) {
  const json& p = j["peak_tflops"];
  return p.contains(k) && p[k].is_number() ? p[k].get<double>() : 0.0;
}

TEST(HardwareCatalog, HasAtLeastSixtyProfilesThatAllLoad) {
  const std::vector<std::string> ids = ListHardwarePresets();
  EXPECT_GE(ids.size(), 60u);
  for (const std::string& id : ids) {
    auto hw = LoadHardwarePreset(id);
    ASSERT_TRUE(hw.ok()) << id << ": " << hw.status().message();
    EXPECT_EQ(hw->id, id);
  }
}

TEST(HardwareCatalog, EveryFigureHasASourceAndADateOrSaysNoSourceFound) {
  for (const std::string& id : ListHardwarePresets()) {
    SCOPED_TRACE(id);
    const json j = Raw(id);
    ASSERT_TRUE(j.is_object());
    ASSERT_TRUE(j.contains("source") && j["source"].is_string());
    EXPECT_GT(j["source"].get<std::string>().size(), 10u);
    EXPECT_TRUE(IsDate(j.value("source_date", json()))) << "source_date";
    ASSERT_TRUE(j.contains("sources") && j["sources"].is_object());
    for (const Group& g : Groups()) {
      SCOPED_TRACE(g.name);
      ASSERT_TRUE(j["sources"].contains(g.name)) << "no source entry";
      const json& s = j["sources"][g.name];
      ASSERT_TRUE(s["document"].is_string());
      const std::string doc = s["document"].get<std::string>();
      if (doc == kNoSource) {
        EXPECT_TRUE(g.may_be_unsourced) << "the simulator needs this figure";
        EXPECT_TRUE(s["date"].is_null());
        for (const char* k : g.keys) EXPECT_TRUE(!j.contains(k) || j[k].is_null()) << k;
        continue;
      }
      EXPECT_GT(doc.size(), 10u);
      EXPECT_TRUE(IsDate(s["date"])) << s["date"];
      for (const char* k : g.keys) EXPECT_TRUE(j.contains(k) && !j[k].is_null()) << k;
    }
    ExpectPriceSourced(id, j, "price_usd_per_gpu_hour", "price_source", "price_date");
    ExpectPriceSourced(id, j, "price_reserved_usd_per_gpu_hour", "price_reserved_source",
                       "price_reserved_date");
    for (const char* k : {"tdp_w", "gpus_per_node", "rails"}) EXPECT_TRUE(j.contains(k)) << k;
  }
}

// A peak without a findable source is null, with "peak_tflops.<key>": "no source found" (date
// null) in sources; the loader marks it unknown (0, never a figure borrowed from another card).
TEST(HardwareCatalog, NullPeaksSayNoSourceFoundAndLoadAsUnknown) {
  int nulls = 0;
  for (const std::string& id : ListHardwarePresets()) {
    SCOPED_TRACE(id);
    const json j = Raw(id);
    auto hw = LoadHardwarePreset(id);
    ASSERT_TRUE(hw.ok());
    for (const auto& [k, v] : j["peak_tflops"].items()) {
      const std::string field = "peak_tflops." + k;
      if (!v.is_null()) {
        EXPECT_TRUE(v.is_number()) << field;
        if (k != "fp64") {
          EXPECT_FALSE(PeakUnknown(hw.value(), k)) << field;
        }
        continue;
      }
      ++nulls;
      ASSERT_TRUE(j["sources"].contains(field)) << field << " is null without a sources entry";
      EXPECT_EQ(j["sources"][field]["document"], kNoSource) << field;
      EXPECT_TRUE(j["sources"][field]["date"].is_null()) << field;
      if (k != "fp64") {
        EXPECT_TRUE(PeakUnknown(hw.value(), k)) << field;
      }
    }
  }
  EXPECT_GE(nulls, 5);  // a10g_24gb and its shape
}

// One row per behaviour of a null (unknown) peak: the run in `dtype` uses the figure sourced for
// that very precision, or is refused with one line naming peak_tflops.<key> and the rule, in
// simulate and in search alike (CLI exit 2, server 4xx, Python ValueError follow the Status).
struct UnknownPeakRow {
  const char* peaks;  // peak_tflops of a copy of a10_24gb
  DType dtype;
  const char* refused_field;  // "" = runs
};

TEST(HardwareCatalog, NullPeakRunsOnItsOwnPrecisionOrIsRefusedByName) {
  const UnknownPeakRow rows[] = {
      {R"({"bf16": null, "fp16": 125})", DType::kFp16, ""},
      {R"({"bf16": null, "fp16": 125})", DType::kBf16, "peak_tflops.bf16"},
      {R"({"bf16": 125, "fp16": null})", DType::kFp16, "peak_tflops.fp16"},  // not bf16's figure
      {R"({"bf16": 125, "fp16": null})", DType::kBf16, ""},
      {R"({"bf16": 125, "tf32": null})", DType::kTf32, "peak_tflops.tf32"},  // not fp32's figure
      {R"({"bf16": 125, "fp32": null})", DType::kFp32, "peak_tflops.fp32"},
      {R"({"bf16": null, "fp16": null})", DType::kFp16, "peak_tflops.fp16"},
  };
  const ModelSpec m = LoadModelPreset("llama3-8b").value();
  for (const UnknownPeakRow& row : rows) {
    SCOPED_TRACE(std::string(row.peaks) + " " + std::string(DTypeName(row.dtype)));
    json j = Raw("a10_24gb");
    const json peaks = json::parse(row.peaks);
    for (const auto& [k, v] : peaks.items()) j["peak_tflops"][k] = v;
    auto hw = ParseHardwareJson(j.dump(), "row");
    ASSERT_TRUE(hw.ok()) << hw.status().message();
    Strategy s;
    s.world_size = 8;
    s.tp = 8;
    s.seq = 1024;
    s.mbs = 1;
    s.gbs = 8;
    s.dtype = row.dtype;
    auto r = Simulate(m, hw.value(), s);
    SearchOptions so;
    so.gpus = 8;
    so.gbs = 8;
    so.seq = 1024;
    so.dtype = row.dtype;
    so.threads = 1;
    so.top_k = 1;
    auto sr = Search(m, hw.value(), so);
    if (!*row.refused_field) {
      EXPECT_TRUE(r.ok()) << r.status().message();
      EXPECT_TRUE(sr.ok()) << sr.status().message();
      continue;
    }
    for (const Status& st : std::vector<Status>{r.status(), sr.status()}) {
      ASSERT_FALSE(st.ok());
      EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
      EXPECT_NE(st.message().find(row.refused_field), std::string::npos) << st.message();
      EXPECT_NE(st.message().find("no source found"), std::string::npos) << st.message();
      EXPECT_EQ(st.message().find('\n'), std::string::npos) << "one line";
    }
  }
}

// An override with a number clears the mark (--hw-override covers a missing figure); an explicit
// 0/0 (no 16-bit tensor path at all), or a null next to a 0, is still refused at load.
TEST(HardwareCatalog, OverrideFillsANullPeak) {
  HardwareSpec hw = LoadHardwarePreset("a10g_24gb").value();
  ASSERT_TRUE(PeakUnknown(hw, "bf16"));
  ASSERT_TRUE(ApplyHardwareOverrides(hw, R"({"peak_tflops": {"bf16": 70}})", "override").ok());
  EXPECT_FALSE(PeakUnknown(hw, "bf16"));
  EXPECT_TRUE(PeakUnknown(hw, "fp16"));
  EXPECT_TRUE(CheckPeakSourced(hw, DType::kBf16).ok());
  json j = Raw("a10_24gb");
  j["peak_tflops"]["bf16"] = 0;
  j["peak_tflops"]["fp16"] = 0;
  EXPECT_FALSE(ParseHardwareJson(j.dump(), "zero").ok());
  j["peak_tflops"]["bf16"] = nullptr;  // one null next to a 0 (no fp16 path): no 16-bit peak
  EXPECT_FALSE(ParseHardwareJson(j.dump(), "null and zero").ok());
}

// Where a datasheet prints a "with sparsity" figure the file keeps it in peak_tflops_sparse:
// the dense peak is its half (NVIDIA and AMD 2:4 structured sparsity doubles the rate). The
// tolerance covers NVIDIA's own rounding (L40S: BF16 362.05 dense, 733 sparse).
TEST(HardwareCatalog, DensePeaksAreHalfTheSparsityFigures) {
  int checked = 0;
  for (const std::string& id : ListHardwarePresets()) {
    const json j = Raw(id);
    if (!j.contains("peak_tflops_sparse")) continue;
    for (const auto& [k, sparse] : j["peak_tflops_sparse"].items()) {
      SCOPED_TRACE(id + " " + k);
      const double dense = Peak(j, k.c_str());
      EXPECT_NEAR(2 * dense, sparse.get<double>(), 0.015 * sparse.get<double>());
      ++checked;
    }
  }
  EXPECT_GE(checked, 40);
}

// On NVIDIA and AMD GPUs the dense FP8 tensor rate is exactly twice the dense BF16 rate
// (Hopper, Ada, Blackwell, CDNA3/4; 2.02 for the L40S datasheet's rounding): a sparse FP8 next to
// a dense BF16 would be 4x, a sparse BF16 next to a dense FP8 1x. TPU, Gaudi and Trainium
// document dense rates only, with other ratios (TPU v5p / v6e and Gaudi 3 run FP8 at the BF16
// rate; Trainium3 MXFP8 is 3.75x BF16): FP8 between 1x and 4x. FP4 is 1x to 3x FP8 (Trainium3
// MXFP4 = MXFP8; Blackwell Ultra 15 vs 5 PFLOPS dense); TF32 is at most BF16.
TEST(HardwareCatalog, PrecisionRatiosAreThoseOfDenseRates) {
  const std::set<std::string> engines = {"tpu", "gaudi", "trainium"};
  for (const std::string& id : ListHardwarePresets()) {
    SCOPED_TRACE(id);
    const json j = Raw(id);
    auto hw = LoadHardwarePreset(id);
    ASSERT_TRUE(hw.ok());
    const bool gpu = engines.count(std::string(HardwareGeneration(hw.value()))) == 0;
    const double bf16 = std::max(Peak(j, "bf16"), Peak(j, "fp16"));
    const double fp8 = Peak(j, "fp8"), fp4 = Peak(j, "fp4"), tf32 = Peak(j, "tf32");
    if (PeakUnknown(hw.value(), "bf16") && PeakUnknown(hw.value(), "fp16")) continue;
    ASSERT_GT(bf16, 0);
    if (fp8 > 0) {
      EXPECT_GE(fp8, (gpu ? 1.99 : 0.999) * bf16);
      EXPECT_LE(fp8, (gpu ? 2.03 : 4.0) * bf16);
    }
    if (fp4 > 0) {
      EXPECT_GE(fp4, 0.999 * fp8);
      EXPECT_LE(fp4, 3.02 * fp8);
    }
    EXPECT_LE(tf32, 1.001 * bf16);
  }
}

// Per streaming multiprocessor (NVIDIA) or compute unit (AMD), dense BF16/FP16 tensor rates are
// 256 to 8,192 FLOP per clock (GeForce FP32-accumulate 512, Ampere GA100 2,048, Hopper 4,096,
// Blackwell 8,192) at boost clocks of 1.0 to 2.7 GHz: 0.256 to 22.1 TFLOP/s per SM. A sparse
// Blackwell figure (30 TFLOP/s per SM) falls outside. TPU, Gaudi and Trainium count matrix
// engines in sm_count (a different unit) and are not checked.
TEST(HardwareCatalog, PeakPerSmPerClockIsPlausible) {
  const std::set<std::string> engines = {"tpu", "gaudi", "trainium"};
  int checked = 0;
  for (const std::string& id : ListHardwarePresets()) {
    auto hw = LoadHardwarePreset(id);
    ASSERT_TRUE(hw.ok());
    if (engines.count(std::string(HardwareGeneration(hw.value())))) continue;
    SCOPED_TRACE(id);
    if (PeakUnknown(hw.value(), "bf16") && PeakUnknown(hw.value(), "fp16")) continue;
    const double peak = std::max(hw->peak_bf16_flops, hw->peak_fp16_flops);
    const double per_sm_tflops = peak / hw->sm_count / 1e12;
    EXPECT_GE(per_sm_tflops, 256 * 1.0e9 / 1e12);
    EXPECT_LE(per_sm_tflops, 8192 * 2.7e9 / 1e12);
    ++checked;
  }
  EXPECT_GE(checked, 40);
}

// An instance shape copies its chip's peaks and power from the silicon preset it names.
TEST(HardwareCatalog, InstanceShapesKeepTheirSiliconPeaks) {
  int shapes = 0;
  for (const std::string& id : ListHardwarePresets()) {
    auto hw = LoadHardwarePreset(id);
    ASSERT_TRUE(hw.ok());
    if (hw->instance_of.empty()) continue;
    SCOPED_TRACE(id);
    auto base = LoadHardwarePreset(hw->instance_of);
    ASSERT_TRUE(base.ok()) << hw->instance_of;
    EXPECT_EQ(hw->peak_bf16_flops, base->peak_bf16_flops);
    EXPECT_EQ(hw->peak_fp16_flops, base->peak_fp16_flops);
    EXPECT_EQ(hw->peak_fp8_flops, base->peak_fp8_flops);
    EXPECT_EQ(hw->peak_fp4_flops, base->peak_fp4_flops);
    EXPECT_EQ(hw->tdp_w, base->tdp_w);
    EXPECT_FALSE(hw->calibrated);
    ++shapes;
  }
  EXPECT_GE(shapes, 15);
}

// Calibrated = the preset's own efficiency block fitted on public measured runs; everything
// else borrows (efficiency_from, named in reports) or runs on nominal efficiencies.
TEST(HardwareCatalog, OnlyFittedPresetsAreCalibrated) {
  const std::set<std::string> fitted = {"a100_sxm_40gb",  "a100_sxm_80gb", "b200_sxm_180gb",
                                        "b300_sxm_288gb", "gb200_nvl72",   "gb300_nvl72",
                                        "h100_sxm_80gb",  "v100_sxm_32gb"};
  const std::set<std::string> measured = {"l40s_48gb", "mi300x_192gb", "mi325x_256gb"};
  for (const std::string& id : ListHardwarePresets()) {
    SCOPED_TRACE(id);
    auto hw = LoadHardwarePreset(id);
    ASSERT_TRUE(hw.ok());
    EXPECT_EQ(hw->calibrated, fitted.count(id) == 1);
    if (hw->calibrated) {
      EXPECT_FALSE(hw->eff.fitted_date.empty());
      EXPECT_EQ(CalibrationStatus(hw.value()), "calibrated " + hw->eff.fitted_date);
      continue;
    }
    EXPECT_NE(UncalibratedNote(hw.value()).find("UNCALIBRATED"), std::string::npos);
    if (measured.count(id) == 1) {  // own block from microbenchmarks, not fitted
      EXPECT_TRUE(hw->efficiency_measured);
      EXPECT_EQ(CalibrationStatus(hw.value()), "uncalibrated (measured)");
      EXPECT_NE(UncalibratedNote(hw.value()).find("microbenchmarks"), std::string::npos);
      continue;
    }
    EXPECT_FALSE(hw->efficiency_measured);
    if (id == "mi355x_288gb") continue;  // nominal (no measurement found)
    EXPECT_FALSE(hw->efficiency_from.empty());
  }
}

// Every efficiency block a preset carries says where it comes from: fitted by `trainsim
// calibrate` (fitted_date) or measured on this hardware (efficiency_measured, a non-empty text).
// Power-limited PCIe cards reach a lower fraction of their datasheet GEMM peak than the SXM
// donor whose block they borrow (mag-/gpu_benchmark best-shape bf16 matmul: H100 PCIe 499.5 of
// 756, H100 SXM 792.1 of 989.4): the borrowed gemm_max is scaled by the ratio, and only a
// borrowed block can be scaled.
TEST(HardwareCatalog, BorrowedGemmCeilingFollowsTheMeasuredRatio) {
  const HardwareSpec pcie = LoadHardware("h100_pcie_80gb").value();
  const HardwareSpec sxm = LoadHardware("h100_sxm_80gb").value();
  EXPECT_NEAR(pcie.eff.gemm_max / sxm.eff.gemm_max, (499.5 / 756) / (792.1 / 989.4), 1e-4);
  EXPECT_DOUBLE_EQ(pcie.eff.mem, sxm.eff.mem);  // nothing else moves
  EXPECT_EQ(CalibrationStatus(pcie), "uncalibrated (from h100_sxm_80gb)");
  json own = Raw("h100_sxm_80gb");
  own["efficiency_gemm_scale"] = 0.9;
  auto refused = ParseHardwareJson(own.dump(), "own");
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().field(), "efficiency_gemm_scale");
  json out_of_range = Raw("h100_pcie_80gb");
  out_of_range["efficiency_gemm_scale"] = 0;
  auto zero = ParseHardwareJson(out_of_range.dump(), "zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().field(), "efficiency_gemm_scale");
}

TEST(HardwareCatalog, EveryEfficiencyBlockHasProvenance) {
  int blocks = 0;
  for (const std::string& id : ListHardwarePresets()) {
    SCOPED_TRACE(id);
    const json raw = Raw(id);
    if (!raw.contains("efficiency")) continue;
    ++blocks;
    const bool fitted = raw["efficiency"].contains("fitted_date");
    const bool measured = raw.contains("efficiency_measured") &&
                          raw["efficiency_measured"].is_string() &&
                          raw["efficiency_measured"].get<std::string>().size() > 40;
    EXPECT_TRUE(fitted || measured);
  }
  EXPECT_GE(blocks, 10);
}

// The MI300X block is the public MI300X microbenchmarks (AMD MAF blog, RCCL/xGMI blog, CVS
// BabelStream figures): measured, not fitted, and far below the nominal defaults.
TEST(HardwareCatalog, Mi300xEfficienciesAreMeasuredWithSources) {
  auto hw = LoadHardwarePreset("mi300x_192gb");
  ASSERT_TRUE(hw.ok());
  EXPECT_FALSE(hw->calibrated);
  EXPECT_TRUE(hw->efficiency_measured);
  EXPECT_TRUE(hw->eff.fitted_date.empty());
  const std::string text = Raw("mi300x_192gb")["efficiency_measured"].get<std::string>();
  for (const char* cite : {"Measuring Max-Achievable FLOPs", "Understanding RCCL Bandwidth",
                           "BabelStream", "708 TFLOP/s", "318.98 GB/s"})
    EXPECT_NE(text.find(cite), std::string::npos) << cite;
  // 708 TFLOP/s of 1307.4 at a shape whose cost.cc factors are 0.997 and 1.
  EXPECT_NEAR(hw->eff.gemm_max, 708.0 / 1307.4 / (32896.0 / 32996.0), 1e-3);
  EXPECT_NEAR(hw->eff.scaleup_bus, 318.98 / 448, 1e-3);
  EXPECT_NEAR(hw->ScaleupBusEfficiency(2), 46.55 / 448, 1e-3);  // one direct xGMI link
  EXPECT_NEAR(hw->ScaleupBusEfficiency(8), 318.98 / 448, 1e-3);
  // The Azure shape borrows the block and keeps the same xGMI tables.
  auto azure = LoadHardwarePreset("azure_nd_mi300x_v5");
  ASSERT_TRUE(azure.ok());
  EXPECT_EQ(azure->eff.gemm_max, hw->eff.gemm_max);
  EXPECT_EQ(azure->scaleup_bus_by_group, hw->scaleup_bus_by_group);
  EXPECT_EQ(azure->scaleup_a2a_by_group, hw->scaleup_a2a_by_group);
  EXPECT_EQ(CalibrationStatus(azure.value()), "uncalibrated (from mi300x_192gb)");
  // Efficiencies set by hand are neither fitted nor the measured ones.
  HardwareSpec edited = hw.value();
  ASSERT_TRUE(ApplyHardwareOverrides(edited, R"({"efficiency": {"gemm_max": 0.5}})", "req").ok());
  EXPECT_FALSE(edited.efficiency_measured);
  EXPECT_EQ(CalibrationStatus(edited), "uncalibrated (nominal)");
}

// Every profile simulates a small dense model on 8 accelerators (a layout every profile holds,
// whatever its scale-up domain), and the report marks uncalibrated hardware with a band at
// least as wide as the calibrated ones' "all" band.
// Half-widths of the "uncalibrated" band of the embedded data/uncertainty.json; 0 if absent.
double UncalibratedBandWidth() {
  const std::string_view* text = detail::FindEmbeddedFile("uncertainty.json");
  if (!text) return 0;
  const json table = json::parse(text->begin(), text->end());
  for (const json& r : table["regimes"])
    if (r["regime"] == kUncalibratedRegime)
      return r["rel_below"].get<double>() + r["rel_above"].get<double>();
  return 0;
}

TEST(HardwareCatalog, EveryProfileSimulatesASmallModel) {
  const double uncalibrated_width = UncalibratedBandWidth();
  EXPECT_GT(uncalibrated_width, 0) << "data/uncertainty.json has no uncalibrated regime";
  auto m = ParseModelJson(R"({"model_type": "llama", "hidden_size": 1024,
    "intermediate_size": 4096, "num_attention_heads": 8, "num_hidden_layers": 4,
    "vocab_size": 32000})",
                          "small");
  ASSERT_TRUE(m.ok());
  for (const std::string& id : ListHardwarePresets()) {
    SCOPED_TRACE(id);
    auto hw = LoadHardwarePreset(id);
    ASSERT_TRUE(hw.ok());
    Strategy s;
    s.world_size = 8;
    s.seq = 1024;
    s.mbs = 1;
    s.gbs = 16;
    s.dtype = hw->peak_bf16_flops > 0 ? DType::kBf16 : DType::kFp16;
    if (!CheckPeakSourced(hw.value(), s.dtype).ok()) {  // no sourced 16-bit peak: refused by name
      auto refused = Simulate(m.value(), hw.value(), s);
      ASSERT_FALSE(refused.ok());
      EXPECT_NE(refused.status().message().find("peak_tflops.fp16"), std::string::npos)
          << refused.status().message();
      EXPECT_NE(refused.status().message().find("no source found"), std::string::npos);
      continue;
    }
    auto r = Simulate(m.value(), hw.value(), s);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(std::isfinite(r->step_time_s) && r->step_time_s > 0);
    EXPECT_EQ(r->uncertainty.uncalibrated_hardware, !hw->calibrated);
    EXPECT_LE(r->step_time_s_low, r->step_time_s);
    EXPECT_GE(r->step_time_s_high, r->step_time_s);
    if (!hw->calibrated) {
      EXPECT_GE(r->uncertainty.rel_below + r->uncertainty.rel_above, uncalibrated_width - 1e-12);
    }
    const std::string json_report = FormatReportJson(r.value(), m.value(), hw.value(), s);
    const json j = json::parse(json_report);
    EXPECT_EQ(j["hardware_calibrated"], hw->calibrated);
    const std::string text = FormatReportText(r.value(), m.value(), hw.value(), s);
    EXPECT_EQ(text.find("UNCALIBRATED") != std::string::npos, !hw->calibrated);
  }
}

}  // namespace
}  // namespace trainsim
