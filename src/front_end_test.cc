// The front-ends' shared path (trainsim/front_end.h): strategy fields by key or short name, and
// the settings -> strategy -> report path the CLI, the service and the Python module share.
#include "trainsim/front_end.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace trainsim {
namespace {

TEST(FrontEnd, EveryFieldIsFoundByKeyAndByFlag) {
  for (const StrategyField& f : StrategySchema()) {
    EXPECT_EQ(FindStrategyFieldByName(f.key), &f) << f.key;
    if (f.flag.empty()) continue;
    std::string dashed(f.flag.substr(2)), underscored = dashed;
    for (char& c : underscored)
      if (c == '-') c = '_';
    // No flag's short name is another field's key: a name means one field.
    EXPECT_EQ(FindStrategyFieldByName(dashed), &f) << dashed;
    EXPECT_EQ(FindStrategyFieldByName(underscored), &f) << underscored;
  }
  EXPECT_EQ(FindStrategyFieldByName("tp")->key, "tp_size");
  EXPECT_EQ(FindStrategyFieldByName("main_grad_fp32")->key, "use_fp32_accum_grad");
  EXPECT_EQ(FindStrategyFieldByName("tensor_parallel"), nullptr);
  EXPECT_EQ(FindStrategyFieldByName("--tp"), nullptr);
  EXPECT_EQ(FindStrategyFieldByName(""), nullptr);
}

TEST(FrontEnd, FinishStrategyNamesTheFlagAndFillsTheBatch) {
  StrategyKeys given;
  auto bad = FinishStrategy(Strategy{}, {{"tp_size", "0"}}, given);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "--tp: must be >= 1, got 0");
  EXPECT_TRUE(given.empty());
  auto s = FinishStrategy(Strategy{}, {{"tp_size", "2"}, {"world_size", "8"}}, given);
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->tp, 2);
  EXPECT_EQ(s->gbs, kDefaultMicroBatchesPerDpRank * 4);  // 8 micro-batches per DP rank, dp 4
  EXPECT_EQ(given, (StrategyKeys{"tp_size", "world_size"}));
}

TEST(FrontEnd, AssumptionsComeFirstAndSkipWhatWasGiven) {
  auto m = LoadModelPreset("llama3-8b");
  auto hw = LoadHardwarePreset("h100_sxm_80gb");
  ASSERT_TRUE(m.ok() && hw.ok());
  StrategyKeys given;
  auto s = FinishStrategy(Strategy{}, {{"dtype", "bf16"}}, given);
  ASSERT_TRUE(s.ok());
  auto r = SimulateWithAssumptions(m.value(), hw.value(), s.value(), given);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::vector<Assumption> defaults = AssumedStrategyDefaults(s.value(), given);
  auto plain = Simulate(m.value(), hw.value(), s.value());
  ASSERT_TRUE(plain.ok());
  ASSERT_EQ(r->assumed.size(), defaults.size() + plain->assumed.size());
  ASSERT_FALSE(defaults.empty());
  EXPECT_EQ(r->assumed.front().field, "seq_len");  // schema order: the first field not given
  for (size_t i = 0; i < defaults.size(); ++i) EXPECT_EQ(r->assumed[i].field, defaults[i].field);
  for (const Assumption& a : r->assumed) EXPECT_NE(a.field, "dtype");
}

// An MoE model lists the expert and router settings it assumes (the recipes' grouped GEMM and
// fused permute, a bf16 router, no capacity; FP8 adds the router's padding), and none it was
// given; a dense model lists none of them.
TEST(FrontEnd, MoeListsItsExpertAndRouterAssumptions) {
  auto moe = LoadModelPreset("qwen3-30b-a3b");
  auto dense = LoadModelPreset("llama3-8b");
  ASSERT_TRUE(moe.ok() && dense.ok());
  StrategyKeys given{"moe_permute_fusion"};
  Strategy s;
  s.dtype = DType::kFp8;
  std::set<std::string> fields;
  for (const Assumption& x : ApplyModelDefaults(moe.value(), s, given)) fields.insert(x.field);
  EXPECT_EQ(fields, (std::set<std::string>{"moe_grouped_gemm", "moe_router_dtype",
                                           "moe_capacity_factor", "moe_router_padding"}));
  EXPECT_TRUE(s.moe_router_padding);
  Strategy d;
  EXPECT_TRUE(ApplyModelDefaults(dense.value(), d, {}).empty());
}

// An MoE model without an expert TP size runs at etp 1, as the MoE recipes do, and says so; a
// given etp and a dense model are left alone (issue 9: runs the frameworks accept are not refused).
TEST(FrontEnd, MoeWithoutExpertTpAssumesTheRecipesEtpOne) {
  auto moe = LoadModelPreset("qwen3-30b-a3b");
  auto dense = LoadModelPreset("llama3-8b");
  ASSERT_TRUE(moe.ok() && dense.ok());
  StrategyKeys given;
  auto s =
      FinishStrategy(Strategy{}, {{"tp_size", "2"}, {"ep_size", "4"}, {"world_size", "8"}}, given);
  ASSERT_TRUE(s.ok());
  Strategy m = s.value();
  const auto a = ApplyModelDefaults(moe.value(), m, given);
  ASSERT_FALSE(a.empty());
  EXPECT_EQ(a[0].field, "etp_size");
  EXPECT_EQ(m.etp, 1);
  Strategy d = s.value();
  EXPECT_TRUE(ApplyModelDefaults(dense.value(), d, given).empty());
  EXPECT_EQ(d.etp, 2);
  StrategyKeys with_etp = given;
  with_etp.insert("etp_size");
  Strategy g = s.value();
  for (const Assumption& x : ApplyModelDefaults(moe.value(), g, with_etp))
    EXPECT_NE(x.field, "etp_size");
  EXPECT_EQ(g.etp, 2);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// `simulate --framework`: the profile fills only what no input gave, says so, and changes the
// step the way the framework runs it; an unknown name lists the profiles.
TEST(FrontEnd, FrameworkProfileFillsOnlyWhatNoInputGave) {
  const HardwareSpec hw = LoadHardwarePreset("h100_sxm_80gb").value();
  StrategyKeys given;
  Strategy s =
      FinishStrategy(Strategy{}, {{"world_size", "8"}, {"zero_state", "1"}}, given).value();
  auto a = ApplyFrameworkProfile("torchtitan", hw, s, given);
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(s.zero, 1);  // given: the profile's zero 3 does not replace it
  EXPECT_EQ(s.attention_kernel, AttentionImpl::kFa2);
  EXPECT_FALSE(s.fused_cross_entropy);
  bool listed = false;
  for (const Assumption& x : a.value()) {
    EXPECT_NE(x.field, "zero_state");
    EXPECT_NE(x.why.find("torchtitan"), std::string::npos);
    listed = listed || x.field == "attention_kernel";
  }
  EXPECT_TRUE(listed);
  EXPECT_TRUE(given.count("attention_kernel"));
  Strategy t;
  StrategyKeys none;
  auto bad = ApplyFrameworkProfile("megatron", hw, t, none);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("megatron-bridge"), std::string::npos);
}

// `simulate --framework` takes a release name of a profile's `frameworks` list and the profile's
// settings for the GPU's class: Megatron-Bridge 26.04.01 on GB200 NVL72 runs the EP all-to-all
// exposed, on B200 with the profile's overlap (data/frameworks.json, megatron-bridge-26.04).
TEST(FrontEnd, FrameworkReleaseNameTakesTheGpuClassSettings) {
  const auto ep_overlap = [](const char* preset, std::string& why) {
    const HardwareSpec hw = LoadHardwarePreset(preset).value();
    StrategyKeys given;
    Strategy s = FinishStrategy(Strategy{}, {{"world_size", "8"}, {"ep_size", "8"}}, given).value();
    auto a = ApplyFrameworkProfile("megatron-bridge-26.04.01", hw, s, given);
    EXPECT_TRUE(a.ok()) << a.status().message();
    for (const Assumption& x : a.value())
      if (x.field == "ep_comm_overlap") why = x.why;
    return s.ep_comm_overlap;
  };
  std::string rack_why, node_why;
  EXPECT_EQ(ep_overlap("gb200_nvl72", rack_why), 0.0);
  EXPECT_GT(ep_overlap("b200_sxm_180gb", node_why), 0.0);
  EXPECT_NE(rack_why.find("megatron-bridge-26.04"), std::string::npos) << rack_why;
  EXPECT_NE(rack_why.find("fp4-rack"), std::string::npos) << rack_why;
  EXPECT_EQ(node_why.find("fp4-rack"), std::string::npos) << node_why;
}

}  // namespace
}  // namespace trainsim
