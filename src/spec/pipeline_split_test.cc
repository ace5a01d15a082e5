// The pipeline split the frameworks choose (PipelineChunkLayers) and its rules.
#include "spec/pipeline_split.h"

#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "trainsim/presets.h"
#include "trainsim/strategy.h"

namespace trainsim {
namespace {

Strategy Pipeline(int pp, int vpp, int first = 0, int last = 0) {
  Strategy s;
  s.pp = pp;
  s.vpp = vpp;
  s.first_stage_layers = first;
  s.last_stage_layers = last;
  return s;
}

std::vector<int> Stages(int layers, int pp, int vpp, int mtp = 0, int first = 0, int last = 0) {
  return PipelineStageLayers(Pipeline(pp, vpp, first, last), layers, mtp);
}

TEST(PipelineSplit, EvenWhenDivisible) {
  EXPECT_EQ(PipelineChunkLayers(Pipeline(4, 2), 32, 0), std::vector<int>(8, 4));
  EXPECT_EQ(Stages(80, 4, 5), std::vector<int>(4, 20));
}

TEST(PipelineSplit, DeepSeekV3At61LayersPp8) {
  // 61 + embedding + loss = 63 slots over 8 stages: the remainder goes to the middle stages
  // first, then the last one, so no stage holds two extra layers.
  EXPECT_EQ(Stages(61, 8, 1), (std::vector<int>{6, 8, 8, 8, 8, 8, 8, 7}));
  // With its MTP module (one more slot on the last stage): 64 slots, 8 each.
  EXPECT_EQ(Stages(61, 8, 1, 1), (std::vector<int>{7, 8, 8, 8, 8, 8, 8, 6}));
  EXPECT_EQ(Stages(61, 4, 1, 1), (std::vector<int>{15, 16, 16, 14}));
  EXPECT_EQ(Stages(61, 16, 1, 1),
            (std::vector<int>{3, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 2}));
}

TEST(PipelineSplit, Llama405BAt126LayersPp8Vpp8) {
  // Megatron-LM --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split:
  // 128 slots over 64 chunks, 2 each; the first chunk holds the embedding and 1 layer, the
  // last the loss and 1 layer.
  const std::vector<int> c = PipelineChunkLayers(Pipeline(8, 8), 126, 0);
  ASSERT_EQ(c.size(), 64u);
  EXPECT_EQ(c.front(), 1);
  EXPECT_EQ(c.back(), 1);
  EXPECT_EQ(std::accumulate(c.begin(), c.end(), 0), 126);
  for (size_t i = 1; i + 1 < c.size(); ++i) EXPECT_EQ(c[i], 2) << i;
  EXPECT_EQ(Stages(126, 8, 8), (std::vector<int>{15, 16, 16, 16, 16, 16, 16, 15}));
}

TEST(PipelineSplit, Qwen3At94LayersAndBloomAt70) {
  EXPECT_EQ(Stages(94, 8, 4), (std::vector<int>{11, 12, 12, 12, 12, 12, 12, 11}));
  // BLOOM-176B on Megatron-DeepSpeed, partition type:transformer|embedding: 72 slots over 12.
  EXPECT_EQ(Stages(70, 12, 1), (std::vector<int>{5, 6, 6, 6, 6, 6, 6, 6, 6, 6, 6, 5}));
}

TEST(PipelineSplit, FirstAndLastStageLayersAsMegatron) {
  EXPECT_EQ(Stages(61, 8, 1, 0, 7, 6), (std::vector<int>{7, 8, 8, 8, 8, 8, 8, 6}));
  // Only the first given: the last stage is a middle stage.
  EXPECT_EQ(Stages(61, 4, 1, 0, 4), (std::vector<int>{4, 19, 19, 19}));
  // vpp 2: every stage's layers spread evenly over its chunks (chunk j*pp + stage).
  EXPECT_EQ(PipelineChunkLayers(Pipeline(4, 2, 14, 16), 62, 0),
            (std::vector<int>{7, 8, 8, 8, 7, 8, 8, 8}));
}

TEST(PipelineSplit, RulesRefuseOnlyWhatNoFrameworkRuns) {
  ModelSpec m = LoadModelPreset("llama3-8b").value();  // 32 layers
  Strategy s = Pipeline(3, 1);
  s.world_size = 24;
  s.gbs = 64;
  EXPECT_TRUE(ValidateStrategy(s, m).ok());  // 10, 12, 10: not refused any more
  s = Pipeline(40, 1);
  s.world_size = 40;
  s.gbs = 40;
  Status st = ValidateStrategy(s, m);
  EXPECT_EQ(st.field(), "pp") << st.message();
  for (auto [first, last, field] :
       {std::tuple{6, 0, "first_pipeline_num_layers"}, std::tuple{0, 6, "last_pipeline_num_layers"},
        std::tuple{20, 20, "first_pipeline_num_layers"}}) {
    s = Pipeline(4, 1, first, last);
    s.world_size = 8;
    s.gbs = 64;
    st = ValidateStrategy(s, m);
    EXPECT_EQ(st.field(), field) << first << " " << last << ": " << st.message();
  }
  s = Pipeline(4, 2, 8, 8);
  s.world_size = 8;
  s.gbs = 64;
  EXPECT_TRUE(ValidateStrategy(s, m).ok());  // 8 / 2 chunks; 16 over 2 stages x 2 chunks
  s.first_stage_layers = 6;  // 6 / 2 chunks is fine, but 18 do not divide over 2 x 2
  EXPECT_EQ(ValidateStrategy(s, m).field(), "first_pipeline_num_layers");
  s.first_stage_layers = 7;  // 7 layers over 2 chunks
  EXPECT_EQ(ValidateStrategy(s, m).field(), "first_pipeline_num_layers");
}

TEST(PipelineSplit, AssumptionOnlyForTheAutomaticSplit) {
  ModelSpec m = LoadModelPreset("llama3.1-405b").value();
  auto a = detail::PipelineSplitAssumption(Pipeline(8, 8), m);
  ASSERT_TRUE(a.has_value());
  EXPECT_EQ(a->field, "pipeline_split");
  EXPECT_EQ(a->value, "15,16,16,16,16,16,16,15");
  EXPECT_NE(a->why.find("account-for-embedding"), std::string::npos);
  EXPECT_FALSE(detail::PipelineSplitAssumption(Pipeline(7, 2), m).has_value());  // 126 / 14
  EXPECT_FALSE(detail::PipelineSplitAssumption(Pipeline(8, 1, 14, 14), m).has_value());
}

}  // namespace
}  // namespace trainsim
