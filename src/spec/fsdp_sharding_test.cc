// FSDP sharding strategies of the HF stack (spec/fsdp_sharding.cc): the HF TrainingArguments
// `fsdp` words take the Accelerate reader's mapping, and the hybrid ones shard within a node
// (ResolveFrameworkLayout) instead of being costed as full sharding over the whole DP group.
#include <gtest/gtest.h>

#include <string>

#include "spec/spec_test_util.h"
#include "trainsim/formats.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using spec_test::Apply;
using spec_test::Fields;

struct Row {
  const char* fsdp;  // the TrainingArguments value
  int world, gpus_per_node;
  bool fsdp_on;
  int zero, instances;
};

TEST(HfTrainerFsdp, WordsAndHybridLayout) {
  const Row rows[] = {
      {"full_shard auto_wrap", 16, 8, true, 3, 1},
      {"true", 16, 8, true, 3, 1},
      {"shard_grad_op", 16, 8, false, 2, 1},
      {"no_shard", 16, 8, false, 0, 1},
      {"auto_wrap", 16, 8, true, 3, 1},  // no sharding word: Accelerate's FULL_SHARD
      {"hybrid_shard auto_wrap", 16, 8, true, 3, 2},  // was full sharding over 16 ranks
      {"hybrid_shard_zero2 auto_wrap", 32, 8, false, 2, 4},
      {"full_shard,hybrid_shard", 16, 8, true, 3, 2},  // a list; the last word wins
      {"hybrid_shard", 8, 8, true, 3, 1},              // one node: sharded over all of it
      {"hybrid_shard", 16, 0, true, 3, 1},             // the preset does not count its GPUs
  };
  for (const Row& r : rows) {
    const std::string json = std::string(R"({"fsdp": ")") + r.fsdp + "\"}";
    auto c = ParseTrlArgsJson(json, "args.json");
    ASSERT_TRUE(c.ok()) << r.fsdp << ": " << c.status().message();
    Strategy s = Apply(c.value(), {{"world_size", std::to_string(r.world)}});
    FrameworkConfig fw = c.value();
    ASSERT_TRUE(ResolveFrameworkLayout(fw, s, r.gpus_per_node, false).ok()) << r.fsdp;
    EXPECT_EQ(s.fsdp, r.fsdp_on) << r.fsdp;
    EXPECT_EQ(s.zero, r.zero) << r.fsdp;
    EXPECT_EQ(s.dist_opt_instances, r.instances) << r.fsdp;
    const bool hybrid = std::string(r.fsdp).find("hybrid") != std::string::npos;
    EXPECT_EQ(Fields(fw.assumed).count("fsdp"), hybrid ? 1u : 0u) << r.fsdp;
  }
}

TEST(HfTrainerFsdp, HybridNeedsWholeNodesAndYieldsToTheFlag) {
  auto c = ParseTrlArgsJson(R"({"fsdp": "hybrid_shard"})", "args.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  Strategy s = Apply(c.value(), {{"world_size", "12"}});
  FrameworkConfig fw = c.value();
  Status st = ResolveFrameworkLayout(fw, s, 8, false);
  EXPECT_EQ(st.field(), "fsdp") << st.message();
  Strategy g = Apply(c.value(), {{"world_size", "16"}, {"dist_opt_instances", "4"}});
  ASSERT_TRUE(ResolveFrameworkLayout(fw, g, 8, true).ok());
  EXPECT_EQ(g.dist_opt_instances, 4);  // the command line's value wins
  // LLaMA-Factory takes the same TrainingArguments key.
  auto lf = ParseLlamaFactoryYaml("stage: sft\nfinetuning_type: full\nfsdp: hybrid_shard\n",
                                  "lf.yaml", 32);
  ASSERT_TRUE(lf.ok()) << lf.status().message();
  EXPECT_EQ(lf->hybrid_shard_name, "HYBRID_SHARD");
}

}  // namespace
}  // namespace trainsim
