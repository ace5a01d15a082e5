// SimuMax's shipped files (src/spec/testdata/simumax/, README there): read with SimuMax's
// meaning, and the model + strategy pairs SimuMax measured on B200 predicted within the
// validation band of the measured runs (shared/validation/cases/public.jsonl, simumax_b200).
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "trainsim/formats.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using nlohmann::json;

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string Data(const std::string& rel) {
  return Read(std::string(TRAINSIM_SOURCE_DIR) + "/src/spec/testdata/simumax/" + rel);
}

Strategy StrategyFile(const std::string& name, const json& patch = json::object()) {
  json j = json::parse(Data("strategy/" + name));
  j.merge_patch(patch);
  auto s = ParseStrategyJson(j.dump(), name);
  EXPECT_TRUE(s.ok()) << name << ": " << s.status().message();
  return s.ok() ? s.value() : Strategy{};
}

ModelSpec ModelFile(const std::string& name, const json& patch = json::object()) {
  json j = json::parse(Data("models/" + name));
  j.merge_patch(patch);
  auto m = ParseModelJson(j.dump(), name);
  EXPECT_TRUE(m.ok()) << name << ": " << m.status().message();
  return m.ok() ? m.value() : ModelSpec{};
}

// SimuMax config.py: recompute needs a granularity and recompute_layer_num > 0; the shipped
// "enable_recompute": true files recompute nothing.
TEST(SimuMaxStrategy, EnableRecomputeWithoutGranularityIsNone) {
  for (const char* f : {"tp1_pp2_dp4_mbs1.json", "tp2_pp1_dp4_mbs1.json", "tp4_pp1_dp2_mbs1.json",
                        "tp8_pp1_dp1_mbs1.json", "ep8_pp1_dp8_mbs1.json", "ep4_pp2_dp4_mbs1.json",
                        "tp1_pp4_vp2_sync_mbs1_mbc8_no_ckpt.json"})
    EXPECT_EQ(StrategyFile(f).recompute, Recompute::kNone) << f;
  // full_block without recompute_layer_num: SimuMax's default 0 layers.
  EXPECT_EQ(
      StrategyFile("tp1_pp2_dp4_mbs1.json", {{"recompute_granularity", "full_block"}}).recompute,
      Recompute::kNone);
}

// grad_reduce_in_bf16 was accepted and ignored; SimuMax (perf_llm.py) halves the gradient
// bytes and the DP reduce-scatter with it. skip_ckpt_micro_batch_num has no effect in SimuMax
// (never read) and none here, with recompute on.
TEST(SimuMaxStrategy, GradReduceInBf16AndSkipCkpt) {
  EXPECT_TRUE(StrategyFile("tp2_pp1_dp4_mbs1.json").main_grad_fp32);
  EXPECT_FALSE(
      StrategyFile("tp2_pp1_dp4_mbs1.json", {{"grad_reduce_in_bf16", true}}).main_grad_fp32);
  EXPECT_EQ(
      StrategyFile("tp2_pp1_dp4_mbs1.json", {{"grad_reduce_in_bf16", true}}).grad_bytes_per_param(),
      2.0);
  const json full = {{"recompute_granularity", "full_block"}, {"recompute_layer_num", 4}};
  json skip = full;
  skip["skip_ckpt_micro_batch_num"] = 2;
  const Strategy a = StrategyFile("tp2_pp1_dp4_mbs1.json", full);
  const Strategy b = StrategyFile("tp2_pp1_dp4_mbs1.json", skip);
  EXPECT_EQ(a.recompute, Recompute::kFull);
  EXPECT_EQ(b.recompute, a.recompute);
  EXPECT_EQ(b.recompute_layers, a.recompute_layers);
}

TEST(SimuMaxStrategy, GranularitiesWithLayers) {
  const Strategy full = StrategyFile("deepseek_r1_optimal_mfu_zb_h2.json");
  EXPECT_EQ(full.recompute, Recompute::kFull);
  EXPECT_EQ(full.recompute_layers, 4);
  EXPECT_EQ(full.last_stage_layers, 1);
  const json sel = {{"recompute_granularity", "selective_recompute"},
                    {"recompute_layer_num", 2},
                    {"attn_recompute", true}};
  Strategy s = StrategyFile("tp1_pp2_dp4_mbs1.json", sel);
  EXPECT_EQ(s.recompute, Recompute::kSelective);
  EXPECT_TRUE(s.recompute_modules & kRecomputeCoreAttn);
  // selective_recompute with no switch recomputes nothing (is_recompute is false).
  s = StrategyFile("tp1_pp2_dp4_mbs1.json",
                   {{"recompute_granularity", "selective_recompute"}, {"recompute_layer_num", 2}});
  EXPECT_EQ(s.recompute, Recompute::kNone);
  s = StrategyFile("tp1_pp2_dp4_mbs1.json",
                   {{"recompute_granularity", "sdp_only"}, {"recompute_layer_num", 2}});
  EXPECT_EQ(s.recompute, Recompute::kSelective);
  EXPECT_EQ(s.recompute_modules, kRecomputeCoreAttn);
  s = StrategyFile("tp1_pp2_dp4_mbs1.json", {{"recompute_granularity", "full_block"},
                                             {"recompute_layer_num", 3},
                                             {"enable_recompute", false}});
  EXPECT_EQ(s.recompute, Recompute::kNone);
}

TEST(SimuMaxStrategy, MegatronRecomputeModules) {
  const Strategy s = StrategyFile("megatron_recompute_doc_example.json");
  EXPECT_EQ(s.recompute, Recompute::kSelective);
  EXPECT_EQ(s.recompute_modules, kRecomputeLayerNorm | kRecomputeMlp);
}

TEST(SimuMaxStrategy, NetworkKeysAreAcceptedAndListed) {
  const Strategy s = StrategyFile("tp1_pp4_vp2_sync_mbs1_mbc8_no_ckpt.json");
  EXPECT_EQ(s.pp, 4);
  EXPECT_EQ(s.vpp, 2);
  EXPECT_EQ(s.schedule, PipelineSchedule::kInterleaved);
  const auto ignored =
      IgnoredStrategyJsonKeys(Data("strategy/tp1_pp4_vp2_sync_mbs1_mbc8_no_ckpt.json"));
  std::map<std::string, std::string> keys;
  for (const Assumption& a : ignored) keys[a.field] = a.value;
  EXPECT_EQ(keys.count("pp_net"), 1u);
  EXPECT_EQ(keys.count("dp_net"), 1u);
  EXPECT_EQ(keys["pp_comm_async"], "false");
  // "auto" tiers say nothing and are not listed.
  EXPECT_TRUE(IgnoredStrategyJsonKeys(R"({"tp_net": "auto"})").empty());
  const Strategy o =
      StrategyFile("tp1_pp2_dp4_mbs1.json",
                   {{"order_of_paralielism", "tp-cp-ep-dp-pp"}, {"pp_schedule", "gpipe"}});
  EXPECT_EQ(o.order, RankOrder::kTpCpDpPp);
  EXPECT_EQ(o.schedule, PipelineSchedule::kGPipe);
}

// enable_cuda_graph true is Megatron-LM's --enable-cuda-graph: no host launch cost per kernel
// (host_issue_us_per_kernel 0, the code the Megatron-LM flags use); it was ignored before.
TEST(SimuMaxStrategy, EnableCudaGraphZeroesHostIssue) {
  const Strategy off = StrategyFile("tp1_pp2_dp4_mbs1.json", {{"host_issue_us_per_kernel", 30}});
  EXPECT_EQ(off.exec.host_issue_us_per_kernel, 30);
  const Strategy on = StrategyFile("tp1_pp2_dp4_mbs1.json",
                                   {{"enable_cuda_graph", true}, {"host_issue_us_per_kernel", 30}});
  EXPECT_EQ(on.exec.host_issue_us_per_kernel, 0);
  const Strategy no = StrategyFile(
      "tp1_pp2_dp4_mbs1.json", {{"enable_cuda_graph", false}, {"host_issue_us_per_kernel", 30}});
  EXPECT_EQ(no.exec.host_issue_us_per_kernel, 30);
  // Read, so no longer listed as ignored.
  EXPECT_TRUE(IgnoredStrategyJsonKeys(R"({"enable_cuda_graph": true})").empty());
}

TEST(SimuMaxModel, ShippedModelsLoad) {
  const ModelSpec mix = ModelFile("mixtral-8x7b.json");  // no moe_ffn_hidden_size
  EXPECT_EQ(mix.moe.num_experts, 8);
  EXPECT_EQ(mix.moe.expert_ffn, 14336);  // SimuMax's default: intermediate_size
  EXPECT_FALSE(mix.tied_embeddings);
  // Mixtral-8x7B: 46.7 B parameters (mistral.ai announcement, 2023-12-11) with 8 kv heads;
  // SimuMax's file gives 32, which adds 32 layers x 2 x 4096 x (4096 - 1024) = 0.805 B.
  EXPECT_NEAR(CountParams(mix).total / 1e9, 46.7 + 0.805, 0.1);
  const ModelSpec v3 = ModelFile("deepseekv3.json");
  EXPECT_EQ(v3.moe.num_experts, 256);
  EXPECT_EQ(v3.moe.first_k_dense, 3);
  EXPECT_EQ(v3.mla.kv_lora_rank, 512);
  // DeepSeek-V3: 671 B total without the 14 B MTP module (DeepSeek-V3 technical report, §1).
  EXPECT_NEAR(CountParams(v3).total / 1e9, 671, 10);
  const ModelSpec dense = ModelFile("llama3-70b.json");
  EXPECT_EQ(dense.moe.num_experts, 0);
  EXPECT_NEAR(CountParams(dense).total / 1e9, 70.6, 0.5);  // Meta: 70.6 B
  EXPECT_EQ(ModelFile("qwen3-235b-a22b.json").moe.num_experts, 128);
  // expert_num 1 (SimuMax's default) is a dense model; vocab padded to a multiple of 128.
  const ModelSpec one = ModelFile("llama3-70b.json", {{"expert_num", 1}, {"vocab_size", 32001}});
  EXPECT_EQ(one.moe.num_experts, 0);
  EXPECT_EQ(one.vocab, 32128);
}

// A key the SimuMax reader does not read is named in ignored_keys (the CLI warns, the report
// lists it), not dropped; the shipped files list nothing, and an unset extra is not listed.
TEST(SimuMaxModel, UnreadKeysAreListed) {
  for (const char* f : {"mixtral-8x7b.json", "deepseekv3.json", "llama3-70b.json",
                        "qwen3-235b-a22b.json", "deepseekv2.json"})
    EXPECT_TRUE(ModelFile(f).ignored_keys.empty()) << f;
  const ModelSpec m = ModelFile("llama3-70b.json", {{"sliding_window", 4096}, {"use_bias", false}});
  ASSERT_EQ(m.ignored_keys.size(), 1u);
  EXPECT_EQ(m.ignored_keys[0].key, "sliding_window");
  EXPECT_EQ(m.ignored_keys[0].value, "4096");
  EXPECT_NE(m.ignored_keys[0].why.find("SimuMax"), std::string::npos);
}

TEST(SimuMaxSystem, B200FileLoadsAsHardware) {
  auto hw = ParseHardwareJson(Data("system/b200_bf16_ceperm.json"), "b200_bf16_ceperm.json");
  ASSERT_TRUE(hw.ok()) << hw.status().message();
  EXPECT_EQ(hw->id, "b200_bf16_ceperm");
  EXPECT_DOUBLE_EQ(hw->peak_bf16_flops, 2250e12);
  EXPECT_EQ(hw->scaleup_domain, 8);
  EXPECT_NEAR(hw->scaleup_bw_bytes_per_s, 900.0 * (1 << 30), 1);
  // The NVLink tier's fitted ring efficiencies (all_reduce .7424, all_gather .6735,
  // reduce_scatter .6731) and all-to-all .5968; grouped / dense GEMM .302 / .488.
  EXPECT_NEAR(hw->eff.scaleup_bus, (0.7424 + 0.6735 + 0.6731) / 3, 1e-9);
  EXPECT_NEAR(hw->eff.a2a_scaleup, 0.5968, 1e-9);
  EXPECT_GT(hw->eff.gemm_max, 0.3);
  EXPECT_LE(hw->eff.gemm_max, 1.0);
  EXPECT_NEAR(hw->eff.mem, 0.666, 1e-9);
  const auto notes = HardwareFileAssumptions(Data("system/b200_bf16_ceperm.json"), "b200");
  std::map<std::string, std::string> by_field;
  for (const Assumption& a : notes) by_field[a.field] = a.value;
  EXPECT_EQ(by_field["efficiency"], "b200_sxm_180gb");  // nearest BF16 peak
  EXPECT_EQ(by_field.count("peak_tflops.fp8"), 1u);     // no measured FP8 GEMM
  EXPECT_TRUE(HardwareFileAssumptions(R"({"id": "x"})", "x").empty());
}

// SimuMax's inter_node gbps is the node's NICs together: compute_net_op_time divides it by
// num_per_node for p2p and EP all-to-all and by min(8, tp) for DP. Regression: it was taken as one
// GPU's NIC (the B200 file's 200 GiB/s became 1,718 Gb/s per GPU, 8x the node's share).
TEST(SimuMaxSystem, InterNodeBandwidthIsTheNodes) {
  auto b200 = ParseHardwareJson(Data("system/b200_bf16_ceperm.json"), "b200");
  ASSERT_TRUE(b200.ok()) << b200.status().message();
  EXPECT_EQ(b200->scaleup_domain, 8);
  EXPECT_DOUBLE_EQ(b200->nic_bw_bytes_per_s, 200.0 * 1024 * 1024 * 1024 / 8);
  auto pcie = ParseHardwareJson(Data("system/a100_pcie.json"), "a100_pcie.json");
  ASSERT_TRUE(pcie.ok()) << pcie.status().message();
  EXPECT_DOUBLE_EQ(pcie->nic_bw_bytes_per_s, 25.0 * 1024 * 1024 * 1024 / 8);
  // Without num_per_node, SystemConfig's 8 GPUs per node (not the nearest preset's domain).
  json j = json::parse(Data("system/b200_bf16_ceperm.json"));
  j.erase("num_per_node");
  j["networks"]["inter_node"]["bandwidth"]["gbps"] = 400;
  auto dflt = ParseHardwareJson(j.dump(), "b200-no-num");
  ASSERT_TRUE(dflt.ok()) << dflt.status().message();
  EXPECT_EQ(dflt->scaleup_domain, 8);
  EXPECT_DOUBLE_EQ(dflt->nic_bw_bytes_per_s, 400.0 * 1024 * 1024 * 1024 / 8);
}

TEST(SimuMaxSystem, PcieFileHasAGroupTable) {
  auto hw = ParseHardwareJson(Data("system/a100_pcie.json"), "a100_pcie.json");
  ASSERT_TRUE(hw.ok()) << hw.status().message();
  EXPECT_EQ(hw->scaleup_topology, "pcie");
  ASSERT_FALSE(hw->scaleup_bus_by_group.empty());
  EXPECT_DOUBLE_EQ(hw->peak_bf16_flops, 312e12);
}

// The B200 runs SimuMax measured with its shipped files
// (tools/b200/run_megatron_perf_real_pipeline.py: model file, strategy file, trimmed layer_num,
// micro-batch count) against shared/validation/cases/public.jsonl.
struct Run {
  const char* id;
  const char* model;
  const char* strategy;
  int layers, mbc;
};
constexpr Run kRuns[] = {
    {"simumax_b200-001", "llama3-70b.json", "tp1_pp2_dp4_mbs1.json", 12, 4},
    {"simumax_b200-002", "llama3-70b.json", "tp2_pp1_dp4_mbs1.json", 12, 4},
    {"simumax_b200-003", "llama3-70b.json", "tp4_pp1_dp2_mbs1.json", 12, 4},
    {"simumax_b200-004", "llama3-70b.json", "tp8_pp1_dp1_mbs1.json", 12, 4},
    {"simumax_b200-005", "deepseekv2.json", "ep8_pp1_dp8_mbs1.json", 4, 4},
    {"simumax_b200-006", "deepseekv2.json", "ep4_pp2_dp4_mbs1.json", 4, 4},
    {"simumax_b200-007", "deepseekv3.json", "ep8_pp1_dp8_mbs1.json", 4, 4},
    {"simumax_b200-008", "deepseekv3.json", "ep4_pp2_dp4_mbs1.json", 4, 4},
    {"simumax_b200-009", "llama3-70b.json", "tp1_pp2_dp4_mbs1.json", 12, 8},
    {"simumax_b200-010", "llama3-70b.json", "tp2_pp1_dp4_mbs1.json", 12, 8},
    {"simumax_b200-011", "llama3-70b.json", "tp4_pp1_dp2_mbs1.json", 12, 8},
    {"simumax_b200-012", "llama3-70b.json", "tp8_pp1_dp1_mbs1.json", 12, 8},
    {"simumax_b200-013", "deepseekv2.json", "ep8_pp1_dp8_mbs1.json", 4, 8},
    {"simumax_b200-014", "deepseekv2.json", "ep4_pp2_dp4_mbs1.json", 4, 8},
    {"simumax_b200-015", "deepseekv3.json", "ep8_pp1_dp8_mbs1.json", 4, 8},
    {"simumax_b200-016", "deepseekv3.json", "ep4_pp2_dp4_mbs1.json", 4, 8},
    {"simumax_b200-017", "llama3-70b.json", "tp1_pp2_dp4_mbs1.json", 12, 32},
    {"simumax_b200-018", "llama3-70b.json", "tp2_pp1_dp4_mbs1.json", 12, 32},
    {"simumax_b200-019", "llama3-70b.json", "tp4_pp1_dp2_mbs1.json", 12, 32},
    {"simumax_b200-020", "llama3-70b.json", "tp8_pp1_dp1_mbs1.json", 12, 32},
    {"simumax_b200-021", "deepseekv2.json", "ep8_pp1_dp8_mbs1.json", 4, 32},
    {"simumax_b200-022", "deepseekv2.json", "ep4_pp2_dp4_mbs1.json", 4, 32},
    {"simumax_b200-023", "deepseekv3.json", "ep8_pp1_dp8_mbs1.json", 4, 32},
    {"simumax_b200-024", "deepseekv3.json", "ep4_pp2_dp4_mbs1.json", 4, 32},
};

std::map<std::string, double> MeasuredTimes() {
  std::map<std::string, double> out;
  std::istringstream in(Read(std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/public.jsonl"));
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line, nullptr, false);
    if (j.is_object() && j.value("id", "").rfind("simumax_b200", 0) == 0)
      out[j["id"]] = j["measured"]["iter_time_s"].get<double>();
  }
  return out;
}

// Mean absolute error of the shipped pairs, and how many measured times fall in the band (at
// least `min_in_band` of them).
void CheckRuns(const HardwareSpec& hw, double max_mape, double min_in_band, const char* label) {
  const auto measured = MeasuredTimes();
  double sum = 0;
  int n = 0, in_band = 0;
  for (const Run& r : kRuns) {
    auto it = measured.find(r.id);
    if (it == measured.end()) continue;  // the shared validation set is not checked out
    const ModelSpec m = ModelFile(r.model, {{"layer_num", r.layers}});
    const Strategy s = StrategyFile(r.strategy, {{"micro_batch_num", r.mbc}});
    auto rep = Simulate(m, hw, s, SimOptions{});
    ASSERT_TRUE(rep.ok()) << r.id << ": " << rep.status().message();
    const double err = std::abs(rep->step_time_s / it->second - 1);
    in_band += it->second >= rep->step_time_s_low && it->second <= rep->step_time_s_high;
    sum += err;
    ++n;
    std::printf("%s %-18s %s %s l%d mbc%d: predicted %.4f s, measured %.4f s, error %.1f %%\n",
                label, r.id, r.model, r.strategy, r.layers, r.mbc, rep->step_time_s, it->second,
                100 * err);
  }
  if (n == 0) GTEST_SKIP() << "no simumax_b200 cases in the shared validation set";
  std::printf("%s: %d runs, mean error %.1f %%, %d inside the uncertainty band\n", label, n,
              100 * sum / n, in_band);
  EXPECT_LE(sum / n, max_mape) << label;
  EXPECT_GE(in_band, n * min_in_band) << label << ": measured times inside the predicted band";
}

TEST(SimuMaxPairs, ShippedFilesPredictTheMeasuredB200Runs) {
  CheckRuns(LoadHardware("b200_sxm_180gb").value(), 0.15, 0.75, "preset b200_sxm_180gb");
}

// The same pairs on SimuMax's own B200 system file converted to a hardware profile.
TEST(SimuMaxPairs, ShippedSystemFileAsHardware) {
  auto hw = ParseHardwareJson(Data("system/b200_bf16_ceperm.json"), "b200_bf16_ceperm.json");
  ASSERT_TRUE(hw.ok()) << hw.status().message();
  // 16.1 % mean error on 2026-11-23 (the preset's 7.5 %): SimuMax's tables come from kernel
  // microbenchmarks, the preset is fitted on measured steps; the converted file runs fast, so its
  // systematic error leaves fewer measured times inside the Blackwell band (16 of 24 after the
  // 2026-11-23 refit of data/uncertainty.json, 18 before): half is required.
  CheckRuns(hw.value(), 0.20, 0.5, "SimuMax b200_bf16_ceperm.json");
}

}  // namespace
}  // namespace trainsim
