// The report's assumptions for the strategy settings no source gave (AssumedStrategyDefaults)
// and the keys each reader says it gave.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "trainsim/schema.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

std::map<std::string, Assumption> ByField(const std::vector<Assumption>& list) {
  std::map<std::string, Assumption> out;
  for (const Assumption& a : list) out[a.field] = a;
  return out;
}

TEST(AssumedStrategyDefaults, OnlyModelAndGpusListsTheRecipeDefaults) {
  Strategy s;
  s.world_size = 16;
  ApplyDefaultBatch(s);
  const auto a = ByField(AssumedStrategyDefaults(s, {"world_size"}));
  for (const char* k : {"seq_len", "micro_batch_size", "global_batch_size", "zero_state", "dtype",
                        "overlap_grad_reduce", "overlap_param_gather", "recompute",
                        "fused_cross_entropy", "attention_kernel"}) {
    ASSERT_TRUE(a.count(k)) << k;
    EXPECT_FALSE(a.at(k).why.empty()) << k;
  }
  EXPECT_EQ(a.at("global_batch_size").value, "128");  // 8 micro-batches x dp 16
  EXPECT_EQ(a.at("zero_state").value, "1");
  // What does not matter here is not listed: sp without TP, the schedule without PP, sizes.
  for (const char* k : {"enable_sequence_parallel", "pipeline_schedule", "tp_comm_overlap",
                        "world_size", "tp_size", "ep_comm_overlap"})
    EXPECT_FALSE(a.count(k)) << k;
  s.tp = 2;
  s.pp = 2;
  const auto b = ByField(AssumedStrategyDefaults(s, {"world_size", "tp_size", "pp_size"}));
  EXPECT_EQ(b.at("enable_sequence_parallel").value, "true");
  EXPECT_EQ(b.at("tp_comm_overlap").value, "false");
  EXPECT_EQ(b.at("pipeline_schedule").value, "1f1b");
}

TEST(AssumedStrategyDefaults, MicroBatchCountGivesTheGlobalBatch) {
  Strategy s;
  s.micro_batch_num = 4;
  const auto a = ByField(AssumedStrategyDefaults(s, {"micro_batch_num"}));
  EXPECT_FALSE(a.count("global_batch_size"));
}

TEST(AssumedStrategyDefaults, ReadersRecordTheKeysTheyGive) {
  Strategy s;
  StrategyKeys given;
  ASSERT_TRUE(ApplyStrategyJson(R"({"tp_size": 2, "cross_entropy_loss_fusion": true, "fp8": true,
                                    "enable_recompute": false, "dp": 4})",
                                "s.json", s, &given)
                  .ok());
  for (const char* k : {"tp_size", "fused_cross_entropy", "dtype", "recompute"})
    EXPECT_TRUE(given.count(k)) << k;
  EXPECT_FALSE(given.count("zero_state"));
}

TEST(AssumedStrategyDefaults, MegatronDefaultsAreNotAssumptions) {
  // An argument absent from a Megatron-LM command line keeps Megatron's own default: given,
  // including the batch (one micro-batch per DP rank) and no EP overlap. dtype and seq_len keep
  // trainsim's default without their argument.
  Strategy s;
  StrategyKeys given;
  ASSERT_TRUE(ApplyMegatronArgs("--tensor-model-parallel-size 2", s, &given).ok());
  for (const char* k : {"tp_size", "enable_sequence_parallel", "zero_state", "overlap_grad_reduce",
                        "tp_comm_overlap", "fused_cross_entropy", "micro_batch_size",
                        "global_batch_size", "ep_comm_overlap"})
    EXPECT_TRUE(given.count(k)) << k;
  for (const char* k : {"dtype", "seq_len", "world_size"}) EXPECT_FALSE(given.count(k)) << k;
  StrategyKeys bf16;
  ASSERT_TRUE(ApplyMegatronArgs("--bf16 --seq-length 2048", s, &bf16).ok());
  EXPECT_TRUE(bf16.count("dtype") && bf16.count("seq_len"));
}

TEST(AssumedStrategyDefaults, SimulateReportsTheSplitItChose) {
  const ModelSpec m = LoadModelPreset("deepseek-v3").value();
  const HardwareSpec hw = LoadHardwarePreset("h800_sxm_80gb").value();
  Strategy s;
  s.world_size = 512;
  s.pp = 8;
  s.ep = 64;
  s.gbs = 512;
  auto r = Simulate(m, hw, s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->assumed.size(), 1u);
  EXPECT_EQ(r->assumed[0].field, "pipeline_split");
  EXPECT_EQ(r->assumed[0].value, "7,8,8,8,8,8,8,6");
  EXPECT_EQ(r->stages.front().layers, 7);
  EXPECT_EQ(r->stages.back().layers, 6);
  SimOptions quiet;
  quiet.assumptions = false;
  EXPECT_TRUE(Simulate(m, hw, s, quiet)->assumed.empty());
}

}  // namespace
}  // namespace trainsim
