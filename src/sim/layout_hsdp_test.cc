// Layouts in the simulator: a --pipeline-model-parallel-layout sets each stage's layers, memory
// and time; HSDP (distributed-optimizer instances, torchtitan replicate x shard) shards within a
// replica and all-reduces across replicas.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

HardwareSpec H100() {
  return LoadHardware("h100_sxm_80gb").value();
}

Strategy Llama8bPp4() {
  Strategy s;
  s.world_size = 8;
  s.pp = 4;
  s.gbs = 16;
  return s;
}

// Stage layers, weights and forward time follow the layout (Llama-3-8B: 32 layers).
TEST(PipelineLayoutSim, StagesFollowTheLayout) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s = Llama8bPp4();
  s.pipeline_layout = "Et*2|t*10|t*10|t*10L";
  auto r = Simulate(m, H100(), s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->stages.size(), 4u);
  EXPECT_EQ(r->stages[0].layers, 2);
  EXPECT_EQ(r->stages[1].layers, 10);
  EXPECT_EQ(r->stages[3].layers, 10);
  EXPECT_DOUBLE_EQ(r->stages[1].weight_bytes, r->stages[2].weight_bytes);
  EXPECT_LT(r->stages[0].weight_bytes, r->stages[1].weight_bytes);  // 2 layers + embedding
  EXPECT_GT(r->stages[3].weight_bytes, r->stages[2].weight_bytes);  // + output layer
  EXPECT_NEAR(r->stages[1].fwd_per_mb_s / r->stages[0].fwd_per_mb_s, 5.0, 1.0);
  // The same model evenly split: 8 layers per stage.
  auto even = Simulate(m, H100(), Llama8bPp4());
  ASSERT_TRUE(even.ok());
  EXPECT_EQ(even->stages[1].layers, 8);
  EXPECT_GT(r->step_time_s, even->step_time_s);  // the unbalanced layout is slower
}

// Virtual stages: "Et*2|t*6|t*6|t*18L" over pp 2 gives vpp 2, stage 0 = chunks 0 and 2.
TEST(PipelineLayoutSim, VirtualStagesSumPerRank) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s = Llama8bPp4();
  s.pp = 2;
  s.pipeline_layout = "Et*2|t*6|t*6|t*18L";
  auto r = Simulate(m, H100(), s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->stages[0].layers, 8);
  EXPECT_EQ(r->stages[1].layers, 24);
}

// A standalone MTP stage (Megatron-LM docs: "E|t*3|(t|)*3tt|m|L" style): the m runs on its
// rank with an embedding and an output layer of its own.
TEST(PipelineLayoutSim, MtpRunsWhereTheLayoutPutsIt) {
  ModelSpec m = LoadModel("llama3-8b").value();
  m.mtp_layers = 1;
  Strategy s = Llama8bPp4();
  s.pipeline_layout = "Et*10|t*11|t*11m|L";  // the m on rank 2, the loss alone on rank 3
  auto r = Simulate(m, H100(), s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double vocab_rows = static_cast<double>(m.vocab) * m.hidden;
  // Stage 2 holds one more block, its projection and the embedding and output-layer copies.
  EXPECT_GT(r->stages[2].params - r->stages[1].params, 2 * vocab_rows);
  EXPECT_GT(r->stages[2].fwd_per_mb_s, r->stages[1].fwd_per_mb_s);
  // Without a layout the MTP module sits on the last stage.
  Strategy d = Llama8bPp4();
  auto last = Simulate(m, H100(), d);
  ASSERT_TRUE(last.ok());
  EXPECT_DOUBLE_EQ(last->stages[1].params, last->stages[2].params);
  EXPECT_GT(last->stages[3].params, r->stages[3].params);
}

// A layout that does not match the model is an error naming the key.
TEST(PipelineLayoutSim, WrongLayoutIsAnError) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s = Llama8bPp4();
  s.pipeline_layout = "Et*2|t*10|t*10|t*9L";
  auto r = Simulate(m, H100(), s);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().field(), "pipeline_model_parallel_layout");
  s.pipeline_layout = "Et*2|t*10|t*10|t*10L";
  s.first_stage_layers = 2;
  EXPECT_EQ(Simulate(m, H100(), s).status().field(), "pipeline_model_parallel_layout");
}

// HSDP regressions, one row per bug: Llama-3-8B on 64 GPUs, dp 64.
struct HsdpRow {
  const char* bug;
  int zero;
  bool fsdp;
};

Result<StepReport> RunDp(int zero, bool fsdp, int instances) {
  Strategy s;
  s.world_size = 64;
  s.gbs = 128;
  s.zero = zero;
  s.fsdp = fsdp;
  s.dist_opt_instances = instances;
  return Simulate(LoadModel("llama3-8b").value(), H100(), s);
}

TEST(Hsdp, ShardsWithinAReplicaAndAllReducesAcross) {
  const HsdpRow rows[] = {
      {"distributed optimizer: optimizer step over dp/N shards", 1, false},
      {"FSDP HSDP: parameters sharded within the replica", 3, true},
  };
  for (const HsdpRow& row : rows) {
    SCOPED_TRACE(row.bug);
    auto one = RunDp(row.zero, row.fsdp, 1), four = RunDp(row.zero, row.fsdp, 4);
    ASSERT_TRUE(one.ok() && four.ok()) << four.status().message();
    const StageReport &a = one->stages[0], &b = four->stages[0];
    EXPECT_NEAR(b.optimizer_bytes / a.optimizer_bytes, 4.0, 1e-9);
    // Bug: the optimizer step updated a 1/dp shard whatever the instances.
    EXPECT_GT(four->time.optimizer_s, 1.2 * one->time.optimizer_s);
    if (row.fsdp) {  // Bug: ZeRO-3 weights were sharded over all of dp.
      const double shard_delta = a.params * 2.0 * (1.0 / 16 - 1.0 / 64);  // bf16, 64 -> 16 ranks
      EXPECT_NEAR((b.weight_bytes - a.weight_bytes) / shard_delta, 1.0, 1e-9);
    }
  }
  // Bug: the cross-instance all-reduce was not costed. With one rank per instance (N = dp) the
  // reduce-scatter and gather are local and the all-reduce spans dp: ZeRO-0's all-reduce.
  auto ddp = RunDp(0, false, 1), all = RunDp(1, false, 64), none = RunDp(1, false, 1);
  ASSERT_TRUE(ddp.ok() && all.ok() && none.ok()) << all.status().message();
  EXPECT_NEAR(all->stages[0].dp_grad_comm_s / ddp->stages[0].dp_grad_comm_s, 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(all->stages[0].dp_param_gather_s, 0.0);
  EXPECT_GT(none->stages[0].dp_param_gather_s, 0.0);
  // dist_opt_instances must divide dp*cp and the expert-DP size (Megatron-LM's rule).
  auto bad = RunDp(1, false, 3);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "dist_opt_instances");
}

// Inside one PCIe node the DP gradient all-reduce and the backward's TP all-reduces share the
// GPUs' links: the DP collective hides only behind the backward's compute, not behind its TP
// communication (bug: it was hidden behind the whole backward, TP traffic included).
TEST(DataParallelOverlap, SharedScaleupLinksHideNothingBehindTpTraffic) {
  const HardwareSpec pcie = LoadHardware("a100_pcie_80gb").value();
  Strategy s;
  s.world_size = 8;
  s.tp = 2;
  s.mbs = 4;
  s.gbs = 16;  // one micro-batch per rank
  s.seq = 4096;
  s.zero = 0;
  s.overlap_grad_reduce = true;
  auto r = Simulate(LoadModel("llama3-8b").value(), pcie, s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const StageReport& st = r->stages[0];
  const double ovl = pcie.eff.comm_overlap;
  const double whole_backward =
      std::max(st.dp_grad_comm_s * (1 - ovl), st.dp_grad_comm_s - st.bwd_per_mb_s * ovl);
  ASSERT_GT(r->time.exposed_tp_comm_s, 0);
  // The backward carries about half of the step's TP traffic (its mirror of the forward's).
  EXPECT_GT(r->time.exposed_dp_comm_s, whole_backward + 0.4 * ovl * r->time.exposed_tp_comm_s);
}

// Megatron's interleaved schedule starts each model chunk's grad sync after that chunk's last
// backward, so the once-per-step reduce hides behind p(v-1)/v + 1/v stage passes, not one: with
// the same gradients to reduce, interleaving exposes less of it.
TEST(DataParallelOverlap, InterleavedChunksHideTheGradientReduceLonger) {
  Strategy s;
  s.world_size = 64;
  s.tp = 2;
  s.pp = 4;
  s.gbs = 64;
  s.zero = 1;
  s.overlap_grad_reduce = true;
  s.overlap_param_gather = true;
  const ModelSpec m = LoadModel("llama3-70b").value();
  HardwareSpec hw = H100();
  hw.nic_bw_bytes_per_s = 5e9;  // a slow fabric: the reduce outlasts one backward pass
  auto plain = Simulate(m, hw, s);
  s.vpp = 5;
  s.schedule = PipelineSchedule::kInterleaved;
  auto inter = Simulate(m, hw, s);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  ASSERT_TRUE(inter.ok()) << inter.status().message();
  const StageReport& p0 = plain->stages[0];
  const StageReport& i0 = inter->stages[0];
  ASSERT_GT(p0.dp_grad_comm_s, p0.bwd_per_mb_s);  // one backward pass cannot hide it all
  EXPECT_NEAR(i0.dp_grad_comm_s, p0.dp_grad_comm_s, 0.02 * p0.dp_grad_comm_s);
  // p = 4, v = 5: 3.4 backward passes instead of one, at least two more hidden.
  const double ovl = hw.eff.comm_overlap;
  EXPECT_LT(inter->time.exposed_dp_comm_s,
            plain->time.exposed_dp_comm_s - 2 * ovl * i0.bwd_per_mb_s);
}

}  // namespace
}  // namespace trainsim
