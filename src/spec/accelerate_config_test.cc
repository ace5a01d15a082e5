// Accelerate config YAML reader (ParseAccelerateConfig) on files as `accelerate config` writes
// them (src/spec/testdata/accelerate/), the FSDP sharding strategies as data rows, and the
// HSDP / ZeRO++ layouts they map to. Refusals are rows of src/spec/testdata/parse_errors.jsonl.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "spec/spec_test_util.h"
#include "trainsim/formats.h"
#include "trainsim/presets.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using spec_test::Apply;
using spec_test::Data;
using spec_test::Fields;

FrameworkConfig Acc(const std::string& file) {
  auto c = ParseAccelerateConfig(Data("accelerate/" + file), file);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? c.value() : FrameworkConfig{};
}

TEST(AccelerateConfig, Fsdp1HybridShardIsHsdpOverMachines) {
  FrameworkConfig c = Acc("fsdp1_hybrid.yaml");
  Strategy s = Apply(c, {{"global_batch_size", "32"}});
  EXPECT_EQ(s.world_size, 16);
  EXPECT_TRUE(s.fsdp);
  EXPECT_EQ(s.zero, 3);
  EXPECT_EQ(s.dist_opt_instances, 2);  // sharded within each machine, replicated across two
  EXPECT_EQ(s.recompute, Recompute::kFull);
  EXPECT_EQ(s.dtype, DType::kBf16);
  EXPECT_TRUE(c.ignored.empty()) << c.ignored.front().field;
  auto a = Fields(c.assumed);
  ASSERT_TRUE(a.count("(not simulated)"));
  EXPECT_NE(a["(not simulated)"].find("fsdp_config.fsdp_auto_wrap_policy"), std::string::npos);
  EXPECT_NE(a["(not simulated)"].find("main_process_ip"), std::string::npos);
}

// fsdp_sharding_strategy as names, older releases' numbers (torch ShardingStrategy values) and
// FSDP2 booleans in an FSDP1 file, on 1 or 2 machines of 8 GPUs.
struct ShardRow {
  std::string value;
  int machines;
  bool fsdp;
  int zero;
  int instances;
};

TEST(AccelerateConfig, ShardingStrategyRows) {
  const ShardRow rows[] = {
      {"FULL_SHARD", 2, true, 3, 1},
      {"1", 2, true, 3, 1},
      {"SHARD_GRAD_OP", 2, false, 2, 1},
      {"2", 1, false, 2, 1},
      {"NO_SHARD", 2, false, 0, 1},
      {"3", 2, false, 0, 1},
      {"HYBRID_SHARD", 2, true, 3, 2},
      {"4", 4, true, 3, 4},
      {"hybrid_shard", 2, true, 3, 2},
      {"HYBRID_SHARD", 1, true, 3, 1},
      {"HYBRID_SHARD_ZERO2", 2, false, 2, 2},
      {"_HYBRID_SHARD_ZERO2", 2, false, 2, 2},
      {"5", 2, false, 2, 2},
      {"true", 2, true, 3, 1},
      {"false", 2, false, 2, 1},
  };
  for (const ShardRow& r : rows) {
    const std::string yaml =
        "distributed_type: FSDP\nnum_processes: " + std::to_string(8 * r.machines) +
        "\nnum_machines: " + std::to_string(r.machines) +
        "\nfsdp_config:\n  fsdp_sharding_strategy: " + r.value + "\n";
    auto c = ParseAccelerateConfig(yaml, "row");
    ASSERT_TRUE(c.ok()) << r.value << ": " << c.status().message();
    Strategy s = Apply(c.value(), {{"global_batch_size", "64"}});
    EXPECT_EQ(s.fsdp, r.fsdp) << r.value;
    EXPECT_EQ(s.zero, r.zero) << r.value;
    EXPECT_EQ(s.dist_opt_instances, r.instances) << r.value << " on " << r.machines;
    EXPECT_TRUE(ValidateStrategy(s, LoadModel("llama3-8b").value()).ok()) << r.value;
  }
}

TEST(AccelerateConfig, Fsdp2ReshardAndParallelismConfig) {
  Strategy s = Apply(Acc("fsdp2_single_node.yaml"), {{"global_batch_size", "16"}});
  EXPECT_FALSE(s.fsdp);  // reshard_after_forward false: SHARD_GRAD_OP, ZeRO-2
  EXPECT_EQ(s.zero, 2);
  EXPECT_EQ(s.recompute, Recompute::kNone);
  FrameworkConfig c = Acc("fsdp2_hsdp_parallelism.yaml");
  Strategy h = Apply(c, {{"global_batch_size", "32"}});
  EXPECT_TRUE(h.fsdp);
  EXPECT_EQ(h.tp, 2);
  EXPECT_EQ(h.dp(), 8);
  EXPECT_EQ(h.dist_opt_instances, 2);  // 2 replicas of 4 shards
  EXPECT_TRUE(ValidateStrategy(h, LoadModel("llama3-8b").value()).ok());
}

TEST(AccelerateConfig, DeepSpeedKeysAndFile) {
  FrameworkConfig c = Acc("deepspeed_zero3.yaml");
  Strategy s = Apply(c, {{"micro_batch_size", "1"}});
  EXPECT_EQ(s.zero, 3);
  EXPECT_TRUE(s.offload_optimizer);
  EXPECT_EQ(s.micro_batch_num, 4);
  EXPECT_EQ(s.dtype, DType::kBf16);  // from mixed_precision, as Accelerate fills DeepSpeed's
  EXPECT_FALSE(s.main_grad_fp32);    // ZeRO keeps and reduces bf16 gradients (was fp32)
  EXPECT_TRUE(s.master_weights);
  EXPECT_TRUE(s.overlap_grad_reduce);
  FrameworkConfig f = Acc("deepspeed_file.yaml");
  EXPECT_EQ(f.deepspeed_file, "../deepspeed/ds_z3_config.json");
  EXPECT_EQ(f.settings.count("micro_batch_num"), 0u);
}

TEST(AccelerateConfig, MegatronLmPlugin) {
  Strategy s = Apply(Acc("megatron_lm.yaml"));
  EXPECT_EQ(s.tp, 2);
  EXPECT_EQ(s.pp, 2);
  EXPECT_TRUE(s.sp);
  EXPECT_EQ(s.recompute, Recompute::kSelective);
  EXPECT_EQ(s.zero, 1);
  EXPECT_EQ(s.micro_batch_num, 4);
  EXPECT_EQ(s.attention_kernel, AttentionImpl::kFused);  // Megatron-LM's TE attention
  EXPECT_EQ(s.exec.host_issue_us_per_kernel, Strategy{}.exec.host_issue_us_per_kernel);
}

// Without dynamo_config a Transformers script runs eager: the measured eager host issue, assumed
// (it was Megatron-LM's 30 us per kernel before).
TEST(AccelerateConfig, EagerScriptHostIssueAssumed) {
  for (const char* f : {"fsdp1_hybrid.yaml", "deepspeed_zero3.yaml"}) {
    FrameworkConfig c = Acc(f);
    EXPECT_EQ(Apply(c).exec.host_issue_us_per_kernel, kEagerHostIssueUs) << f;
    EXPECT_EQ(Fields(c.assumed).at("host_issue_us_per_kernel"), "81") << f;
  }
}

// The script's attention is not in the config: a Transformers model's SDPA (FlashAttention-2),
// assumed; it was costed as Megatron-LM's TE fused attention before.
TEST(AccelerateConfig, AttentionIsSdpaFlashAssumed) {
  for (const char* f : {"fsdp1_hybrid.yaml", "deepspeed_zero3.yaml", "multi_gpu_compile.yaml"}) {
    FrameworkConfig c = Acc(f);
    EXPECT_EQ(Apply(c).attention_kernel, AttentionImpl::kFa2) << f;
    EXPECT_EQ(Fields(c.assumed).at("attention_kernel"), "fa2") << f;
  }
}

TEST(AccelerateConfig, DdpWithCudaGraphsListsWhatItIgnores) {
  FrameworkConfig c = Acc("multi_gpu_compile.yaml");
  Strategy s = Apply(c);
  EXPECT_EQ(s.world_size, 4);
  EXPECT_EQ(s.zero, 0);
  EXPECT_FALSE(s.fsdp);
  EXPECT_EQ(s.dtype, DType::kFp16);
  EXPECT_EQ(s.exec.host_issue_us_per_kernel, 0);  // reduce-overhead replays CUDA graphs
  auto ig = Fields(c.ignored);
  EXPECT_EQ(ig["fsdp_config.fsdp_sharding_strategy"], "FULL_SHARD");
  EXPECT_TRUE(ig.count("some_future_key"));
  for (const Assumption& a : c.ignored) {
    if (a.field == "some_future_key") {
      EXPECT_NE(a.why.find("unknown"), std::string::npos);
    }
  }
  EXPECT_TRUE(Fields(c.assumed).count("dynamo_config.dynamo_mode"));
}

// HYBRID_SHARD is a layout, not a label: on 2 machines it keeps twice the optimizer bytes of
// FULL_SHARD (sharded over 8 ranks, not 16) and all-reduces the shards across the machines.
TEST(AccelerateConfig, HybridShardSimulatesAsHsdp) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  auto run = [&](const std::string& strategy) {
    auto c = ParseAccelerateConfig(
        "distributed_type: FSDP\nnum_processes: 16\nnum_machines: 2\nmixed_precision: bf16\n"
        "fsdp_config:\n  fsdp_sharding_strategy: " +
            strategy + "\n",
        "t");
    EXPECT_TRUE(c.ok());
    auto r = Simulate(m, hw, Apply(c.value(), {{"global_batch_size", "32"}}));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.value();
  };
  const StepReport full = run("FULL_SHARD"), hybrid = run("HYBRID_SHARD");
  EXPECT_NEAR(hybrid.stages[0].optimizer_bytes, 2 * full.stages[0].optimizer_bytes,
              1e-6 * full.stages[0].optimizer_bytes);
  EXPECT_NE(hybrid.step_time_s, full.step_time_s);
}

}  // namespace
}  // namespace trainsim
