// Preset-only loaders never read files; file loaders read only files; LoadModel/LoadHardware
// keep doing both for the command line.
#include "trainsim/presets.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "trainsim/hardware.h"
#include "trainsim/model.h"

namespace trainsim {
namespace {

bool Contains(const std::string& text, const std::string& sub) {
  return text.find(sub) != std::string::npos;
}

// A copy of an embedded preset as a file in the test's temporary directory.
std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

const char* kSmallModel = R"({"model_type": "llama", "hidden_size": 1024,
  "intermediate_size": 4096, "num_attention_heads": 8, "num_hidden_layers": 4,
  "vocab_size": 32000})";

TEST(LoadModelPreset, LoadsAnEmbeddedPresetNamedByItsId) {
  auto m = LoadModelPreset("llama3-8b");
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->name, "llama3-8b");
  EXPECT_EQ(m->layers, 32);
}

TEST(LoadModelPreset, NeverReadsAFile) {
  const std::string path = WriteTemp("preset_test_model.json", kSmallModel);
  ASSERT_TRUE(LoadModelFile(path).ok());
  auto m = LoadModelPreset(path);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(m.status().message(), "model: unknown preset"));
  EXPECT_TRUE(Contains(m.status().message(), "llama3-8b"));  // the list of ids
  EXPECT_FALSE(Contains(m.status().message(), "file path"));
  EXPECT_FALSE(LoadModelPreset("../models/llama3-8b").ok());
}

TEST(LoadModelFile, ReadsAFileAndNamesAMissingOne) {
  const std::string path = WriteTemp("preset_test_model2.json", kSmallModel);
  auto m = LoadModelFile(path);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->hidden, 1024);
  auto none = LoadModelFile("/nonexistent/model.json");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(none.status().message(), "/nonexistent/model.json"));
  EXPECT_FALSE(LoadModelFile("llama3-8b").ok());  // an id is not a file
}

TEST(LoadModel, StillTakesAnIdOrAPath) {
  EXPECT_TRUE(LoadModel("llama3-8b").ok());
  EXPECT_TRUE(LoadModel(WriteTemp("preset_test_model3.json", kSmallModel)).ok());
  auto bad = LoadModel("no-such-model");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(Contains(bad.status().message(), "or give a file path"));
}

TEST(LoadHardwarePreset, InheritsEfficiencyFromTheNamedPreset) {
  auto pcie = LoadHardwarePreset("h100_pcie_80gb");
  auto sxm = LoadHardwarePreset("h100_sxm_80gb");
  ASSERT_TRUE(pcie.ok() && sxm.ok());
  // gemm_max times the file's efficiency_gemm_scale (the measured PCIe/SXM matmul ratio).
  EXPECT_NEAR(pcie->eff.gemm_max, sxm->eff.gemm_max * 0.8253, 1e-12);
  EXPECT_DOUBLE_EQ(pcie->eff.layer_overhead_us, sxm->eff.layer_overhead_us);
  auto h200 = LoadHardwarePreset("h200_sxm_141gb");  // borrows the block unscaled
  ASSERT_TRUE(h200.ok());
  EXPECT_DOUBLE_EQ(h200->eff.gemm_max, sxm->eff.gemm_max);
  EXPECT_LT(pcie->peak_bf16_flops, sxm->peak_bf16_flops);
}

// The TPU datasheet figures that the TPU7x page's comparison table gives
// (docs.cloud.google.com/tpu/docs/tpu7x): DCN 100 Gb/s per chip on v6e and TPU7x, 50 on v5p;
// HBM 7,380 GB/s and ICI 1,200 GB/s bidirectional on TPU7x; v5e per the v5e page.
TEST(LoadHardwarePreset, TpuDatasheetFigures) {
  const auto get = [](const char* id) {
    auto hw = LoadHardwarePreset(id);
    EXPECT_TRUE(hw.ok()) << id;
    return hw.value();
  };
  const HardwareSpec v5e = get("tpu_v5e"), v5p = get("tpu_v5p"), v6e = get("tpu_v6e"),
                     v7 = get("tpu7x");
  EXPECT_NEAR(v5e.peak_bf16_flops, 197e12, 1e-9 * 197e12);
  EXPECT_NEAR(v5e.hbm_bw_bytes_per_s, 0.819e12, 1e-9 * 0.819e12);
  EXPECT_NEAR(v5e.nic_bw_bytes_per_s, 25e9 / 8, 1e-9 * 25e9 / 8);
  EXPECT_NEAR(v5p.peak_bf16_flops, 459e12, 1e-9 * 459e12);
  EXPECT_NEAR(v5p.hbm_bw_bytes_per_s, 2.765e12, 1e-9 * 2.765e12);
  EXPECT_NEAR(v5p.nic_bw_bytes_per_s, 50e9 / 8, 1e-9 * 50e9 / 8);
  EXPECT_NEAR(v6e.peak_bf16_flops, 918e12, 1e-9 * 918e12);
  EXPECT_NEAR(v6e.nic_bw_bytes_per_s, 100e9 / 8, 1e-9 * 100e9 / 8);
  EXPECT_NEAR(v7.peak_bf16_flops, 2307e12, 1e-9 * 2307e12);
  EXPECT_NEAR(v7.hbm_bw_bytes_per_s, 7.38e12, 1e-9 * 7.38e12);
  EXPECT_NEAR(v7.nic_bw_bytes_per_s, 100e9 / 8, 1e-9 * 100e9 / 8);
  EXPECT_NEAR(v7.scaleup_bw_bytes_per_s, 600e9, 1e-9 * 600e9);
}

TEST(LoadHardwarePreset, NeverReadsAFile) {
  auto h100 = LoadHardwarePreset("h100_sxm_80gb");
  ASSERT_TRUE(h100.ok());
  const std::string path =
      WriteTemp("preset_test_hw.json",
                R"({"id": "x", "peak_tflops": {"bf16": 100}, "hbm_gib": 10, "hbm_tbps": 1,
          "scaleup_gbps_per_dir": 100, "nic_gbps_per_gpu": 100})");
  ASSERT_TRUE(LoadHardwareFile(path).ok());
  auto hw = LoadHardwarePreset(path);
  ASSERT_FALSE(hw.ok());
  EXPECT_EQ(hw.status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(Contains(hw.status().message(), "h100_sxm_80gb"));
  EXPECT_FALSE(LoadHardwareFile("/nonexistent/hw.json").ok());
  EXPECT_TRUE(LoadHardware(path).ok());
}

TEST(ParseHardwareJson, ResolvesEfficiencyFromAgainstEmbeddedPresets) {
  const std::string base = R"({"id": "x", "peak_tflops": {"bf16": 100}, "hbm_gib": 10,
      "hbm_tbps": 1, "scaleup_gbps_per_dir": 100, "nic_gbps_per_gpu": 100)";
  auto hw = ParseHardwareJson(base + R"(, "efficiency_from": "a100_sxm_80gb"})", "req");
  ASSERT_TRUE(hw.ok()) << hw.status().message();
  EXPECT_DOUBLE_EQ(hw->eff.gemm_max, LoadHardwarePreset("a100_sxm_80gb")->eff.gemm_max);
  auto unknown = ParseHardwareJson(base + R"(, "efficiency_from": "/etc/hw"})", "req");
  ASSERT_FALSE(unknown.ok());
  EXPECT_TRUE(Contains(unknown.status().message(), "req: efficiency_from: unknown preset"));
  auto number = ParseHardwareJson(base + R"(, "efficiency_from": 5})", "req");
  ASSERT_FALSE(number.ok());
  EXPECT_TRUE(Contains(number.status().message(), "efficiency_from"));
  // An own efficiency block wins.
  auto own = ParseHardwareJson(
      base + R"(, "efficiency": {"gemm_max": 0.5}, "efficiency_from": "a100_sxm_80gb"})", "req");
  ASSERT_TRUE(own.ok());
  EXPECT_DOUBLE_EQ(own->eff.gemm_max, 0.5);
}

}  // namespace
}  // namespace trainsim
