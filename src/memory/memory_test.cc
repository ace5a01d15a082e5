// Closed-form memory checks from the papers (Korthikanti et al. 2022; Rajbhandari et al. 2020).
#include "memory/memory.h"

#include <gtest/gtest.h>

#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

// A GPT layer as in Korthikanti et al.: 4h GELU MLP, LayerNorm, dropout, MHA, no flash attention.
ModelSpec Gpt() {
  auto m = ParseModelJson(
      R"({"n_embd": 6144, "n_layer": 8, "n_head": 64, "vocab_size": 51200, "n_positions": 2048})",
      "gpt");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.value();
}

Strategy Base(int tp, bool sp) {
  Strategy s;
  s.world_size = tp;
  s.tp = tp;
  s.sp = sp;
  s.seq = 2048;
  s.mbs = 1;
  s.gbs = 1;
  s.flash_attention = false;
  return s;
}

double LayerActivationBytes(const ModelSpec& m, const Strategy& s) {
  SimOptions o;
  o.detail = true;
  auto r = Simulate(m, LoadHardware("a100_sxm_80gb").value(), s, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r->layers.at(0).activation_bytes : 0;
}

class Korthikanti : public ::testing::Test {
 protected:
  ModelSpec m = Gpt();
  double s = 2048, b = 1, h = 6144, a = 64;
  double sbh() const { return s * b * h; }
};

TEST_F(Korthikanti, NoParallelism) {
  // Eq. (1): s*b*h*(34 + 5*a*s/h)
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, Base(1, false)), sbh() * (34 + 5 * a * s / h));
}

TEST_F(Korthikanti, TensorParallel) {
  // Eq. (2): s*b*h*(10 + 24/t + 5*a*s/(h*t))
  const double t = 8;
  EXPECT_NEAR(LayerActivationBytes(m, Base(8, false)), sbh() * (10 + 24 / t + 5 * a * s / (h * t)),
              1.0);
}

TEST_F(Korthikanti, TensorAndSequenceParallel) {
  // Eq. (4): s*b*h/t*(34 + 5*a*s/h)
  const double t = 8;
  EXPECT_NEAR(LayerActivationBytes(m, Base(8, true)), sbh() / t * (34 + 5 * a * s / h), 1.0);
}

TEST_F(Korthikanti, SelectiveRecompute) {
  // Eq. (6): 34*s*b*h/t with TP + SP + selective recompute of the attention core.
  Strategy st = Base(8, true);
  st.recompute = Recompute::kSelective;
  EXPECT_NEAR(LayerActivationBytes(m, st), 34 * sbh() / 8, 1.0);
}

TEST_F(Korthikanti, FullRecompute) {
  // Section 4.1: only the layer input, 2*s*b*h.
  Strategy st = Base(1, false);
  st.recompute = Recompute::kFull;
  EXPECT_DOUBLE_EQ(LayerActivationBytes(m, st), 2 * sbh());
}

// ZeRO paper, Figure 1 / section 5: a 7.5B model on 64 GPUs with K = 12 needs 120 GB (baseline),
// 31.4 GB (Pos), 16.6 GB (Pos+g) and 1.9 GB (Pos+g+p) of model states per GPU.
TEST(ZeroPaper, ModelStatesOf7_5BOn64Gpus) {
  const double expected_gb[] = {120.0, 31.4, 16.6, 1.875};
  for (int stage = 0; stage <= 3; ++stage) {
    Strategy s;
    s.zero = stage;
    s.main_grad_fp32 = false;  // the paper's fp16 gradients
    memory::StageInput in;
    const std::vector<graph::ParamGroup> groups = {
        graph::ParamGroup{"layers", 7.5e9, false, true, 2.0}};
    in.params = groups;
    in.dense_shard = 64;
    StageReport out;
    memory::StageMemory(in, s, out);
    const double states = out.weight_bytes + out.grad_bytes + out.optimizer_bytes;
    EXPECT_NEAR(states / 1e9, expected_gb[stage], 0.05) << "stage " << stage;
  }
}

TEST(MemoryInvariants, DoublingTpHalvesWeightBytes) {
  const ModelSpec m = LoadModel("llama3-70b").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  Strategy s;
  s.world_size = 64;
  s.pp = 4;
  s.gbs = 64;
  s.tp = 2;
  const double w2 = Simulate(m, hw, s)->stages[1].weight_bytes;
  s.tp = 4;
  const double w4 = Simulate(m, hw, s)->stages[1].weight_bytes;
  EXPECT_NEAR(w4 / w2, 0.5, 0.002);  // only the replicated norms do not halve
}

TEST(MemoryInvariants, RecomputeLowersActivationsAndRaisesTime) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  Strategy s;
  s.world_size = 8;
  s.gbs = 64;
  double last_act = 1e30, last_time = 0;
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull}) {
    s.recompute = r;
    if (r == Recompute::kSelective) s.recompute_modules = kRecomputeCoreAttn | kRecomputeLayerNorm;
    auto rep = Simulate(m, hw, s);
    ASSERT_TRUE(rep.ok());
    EXPECT_LT(rep->stages[0].activation_bytes, last_act);
    EXPECT_GT(rep->step_time_s, last_time);
    last_act = rep->stages[0].activation_bytes;
    last_time = rep->step_time_s;
  }
}

TEST(MemoryInvariants, FirstStageHoldsPMicroBatchesIn1F1B) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s;
  s.world_size = 8;
  s.pp = 4;
  s.gbs = 16;
  auto r = Simulate(m, LoadHardware("h100_sxm_80gb").value(), s);
  ASSERT_TRUE(r.ok());
  EXPECT_DOUBLE_EQ(r->stages[0].inflight_micro_batches, 4);
  EXPECT_DOUBLE_EQ(r->stages[3].inflight_micro_batches, 1);
}

// Torch-native loops (torchtune, a plain PEFT script): the training state of a pure-bf16 full
// fine-tune of 10 layers in round numbers, so that the phase
// peak can be read off: weights W = 2 GB, gradients G = 2 GB, AdamW states O = 4 GB.
class LoopMemory : public ::testing::Test {
 protected:
  graph::ParamGroup group{"layers", 1e9, false, true, 2};
  memory::StageInput in;
  Strategy s;
  void SetUp() override {
    in.params = std::span<const graph::ParamGroup>(&group, 1);
    in.layers = 10;
    in.act_per_mb = 3e9;  // 1 GB of layer checkpoints + 2 GB of saved logits
    in.head_saved = 2e9;
    in.transient = 0.5e9;
    in.layer_transient = 0.5e9;
    in.loss_transient = 0;
    in.single_micro_batch = true;
    s.master_weights = false;
    s.main_grad_fp32 = false;
  }
  StageReport Run() {
    StageReport r;
    memory::StageMemory(in, s, r);
    return r;
  }
};

TEST_F(LoopMemory, PersistentGradientBuffersAddEverything) {
  // Megatron / DeepSpeed: W + G + O + activations + transient.
  EXPECT_DOUBLE_EQ(Run().peak_mem_bytes, 2e9 + 2e9 + 4e9 + 3e9 + 0.5e9);
}

// --optimizer-offload-fraction (rows: offload, fraction, optimizer bytes left in HBM).
TEST_F(LoopMemory, OptimizerOffloadFractionLeavesTheRestInHbm) {
  const struct {
    bool offload;
    double fraction, hbm;
  } rows[] = {{false, 1.0, 4e9},
              {true, 1.0, 0},
              {true, 0.5, 2e9},
              {true, 0.25, 3e9},
              {false, 0.5, 4e9}};  // a fraction without offload changes nothing
  for (const auto& r : rows) {
    s.offload_optimizer = r.offload;
    s.optimizer_offload_fraction = r.fraction;
    EXPECT_DOUBLE_EQ(Run().optimizer_bytes, r.hbm) << r.offload << " " << r.fraction;
  }
}

TEST_F(LoopMemory, GradientsFreedEachStepPeakAtTheLargerPhase) {
  s.exec.grad_set_to_none = true;
  // max(forward: 3 GB of activations, backward: max(G 2, layers 1) + 0.5) over W + O.
  EXPECT_DOUBLE_EQ(Run().peak_mem_bytes, 2e9 + 4e9 + 3e9);
  // Gradient accumulation keeps the gradients through the next micro-batch's forward.
  in.single_micro_batch = false;
  EXPECT_DOUBLE_EQ(Run().peak_mem_bytes, 2e9 + 2e9 + 4e9 + 3e9 + 0.5e9);
}

TEST_F(LoopMemory, OptimizerInBackwardKeepsOneLayersGradients) {
  s.exec.grad_set_to_none = true;
  s.exec.optimizer_in_backward = true;
  in.act_per_mb = in.head_saved = 0;  // only the backward phase left
  const StageReport r = Run();
  EXPECT_DOUBLE_EQ(r.grad_bytes, 2e9 / 10);
  EXPECT_DOUBLE_EQ(r.peak_mem_bytes, 2e9 + 4e9 + 2e9 / 10 + 0.5e9);
}

// The layer costs take the offloaded bytes out of act_per_mb (layer_cost.cc, ApplyOffload);
// two layers' worth of them stay in HBM, once for the stage.
TEST_F(LoopMemory, OffloadedActivationsLeaveTwoLayersAndTheLoss) {
  in.act_per_mb = in.head_saved;  // every layer's saved bytes offloaded
  in.offload_per_layer = 1e9 / 10;
  EXPECT_DOUBLE_EQ(Run().activation_bytes, 2e9 + 2 * 1e9 / 10);
}

TEST_F(LoopMemory, FsdpCpuOffloadHoldsOnlyTheGatheredLayers) {
  s.zero = 3;
  in.dense_shard = 8;
  in.fsdp_unsharded = 2e8;  // two layers of 1e8 parameters
  EXPECT_DOUBLE_EQ(Run().weight_bytes, 1e9 * 2 / 8 + 2e8 * 2);
  s.exec.offload_params = true;
  EXPECT_DOUBLE_EQ(Run().weight_bytes, 2e8 * 2);
  EXPECT_DOUBLE_EQ(Run().grad_bytes, 1e9 * 2 / 8 / 10);
}

TEST_F(LoopMemory, Zero3GathersNf4WeightsPacked) {
  s.zero = 3;
  in.dense_shard = 8;
  in.fsdp_unsharded = 2e8;
  group.bytes_per_param = 0.5;  // a 4-bit base (QLoRA): gathered as stored
  EXPECT_DOUBLE_EQ(Run().weight_bytes, 1e9 * 0.5 / 8 + 2e8 * 0.5);
}

// The unfused loss holds the stack's bytes per logit at its peak (Execution::loss_bytes_per_logit:
// 12 for Transformers code under autocast, 6 by default, Megatron-LM's path), except when the
// model code leaves its logits 16-bit and DeepSpeed ZeRO runs it without autocast.
TEST(LossMemory, UnfusedLossTakesTheStacksBytesPerLogit) {
  const ModelSpec m = Gpt();
  const HardwareSpec hw = LoadHardware("a100_sxm_80gb").value();
  Strategy s = Base(1, false);
  s.flash_attention = true;  // no materialised scores: the loss is the largest transient
  s.fused_cross_entropy = false;
  auto peak = [&](const Strategy& st) { return Simulate(m, hw, st)->stages[0].peak_mem_bytes; };
  const double logits = 2048.0 * 51200;
  const double six = peak(s);
  s.exec.loss_bytes_per_logit = 12;
  EXPECT_NEAR(peak(s) - six, 6 * logits, 1e3);
  s.zero = 2;
  s.exec.loss_fp32_by_autocast = true;  // Qwen1 under DeepSpeed: the 16-bit loss
  Strategy z = s;
  z.exec.loss_bytes_per_logit = 0;
  EXPECT_NEAR(peak(s), peak(z), 1e3);
  s.exec.loss_fp32_by_autocast = false;  // upcast in the model code: DeepSpeed changes nothing
  EXPECT_NEAR(peak(s) - peak(z), 6 * logits, 1e3);
  s.fused_cross_entropy = true;  // fused: the stack's unfused figure does not apply
  z.fused_cross_entropy = true;
  EXPECT_NEAR(peak(s), peak(z), 1e3);
}

// DeepSpeed ZeRO-1/2: two reduce_bucket_size buffers of the 16-bit dtype, whatever the number of
// trainable parameters; not under ZeRO-0/3 or FSDP.
TEST(DeepSpeedBuckets, ZeroOneAndTwoHoldTwoReduceBuckets) {
  const std::vector<graph::ParamGroup> groups = {
      graph::ParamGroup{"layers", 1e6, false, true, 2.0}};
  for (int stage = 0; stage <= 3; ++stage) {
    Strategy s;
    s.zero = stage;
    memory::StageInput in;
    in.params = groups;
    StageReport plain, buckets;
    memory::StageMemory(in, s, plain);
    s.exec.zero_reduce_bucket_elems = 2e8;
    memory::StageMemory(in, s, buckets);
    const double expected = (stage == 1 || stage == 2) ? 2 * 2e8 * 2 : 0;
    EXPECT_DOUBLE_EQ(buckets.grad_bytes - plain.grad_bytes, expected) << "stage " << stage;
  }
}

// torch AdamW's foreach update holds parameter-sized temporaries at the step (PyTorch 2.0: two),
// when no activation is left: with many trained parameters and few activations that step is the
// peak. Not under DeepSpeed ZeRO (its own optimizer) or with a fused update.
TEST(ForeachAdam, TemporariesAtTheStepCanSetThePeak) {
  const std::vector<graph::ParamGroup> groups = {
      graph::ParamGroup{"layers", 1e9, false, true, 2.0}};
  Strategy s;
  s.zero = 0;
  s.master_weights = false;  // bf16 parameters and states: 2 + 2 + 4 bytes per parameter
  memory::StageInput in;
  in.params = groups;
  in.act_per_mb = 1e9;
  StageReport fused, foreach;
  memory::StageMemory(in, s, fused);
  EXPECT_DOUBLE_EQ(fused.peak_mem_bytes, 8e9 + 1e9);
  s.exec.adam_foreach_temporaries = 2;
  memory::StageMemory(in, s, foreach);
  EXPECT_DOUBLE_EQ(foreach.peak_mem_bytes, 8e9 + 2 * 2e9);
  EXPECT_DOUBLE_EQ(foreach.weight_bytes + foreach.grad_bytes + foreach.optimizer_bytes +
                       foreach.activation_bytes + foreach.transient_bytes,
                   foreach.peak_mem_bytes);
  s.zero = 2;  // DeepSpeed steps its own optimizer
  memory::StageMemory(in, s, foreach);
  EXPECT_DOUBLE_EQ(foreach.peak_mem_bytes, fused.peak_mem_bytes);
}

// The stacks' habits apply where their code runs (memory.h): the 16-bit loss of autocast model
// code under DeepSpeed, the reduce buckets of ZeRO-1/2 only, the foreach temporaries of torch's
// own AdamW step only. validate's assumed list reads the same rules.
TEST(MemoryHabits, EachAppliesOnlyWhereItsStackRunsIt) {
  Strategy s;
  s.exec.loss_bytes_per_logit = 12;
  s.exec.loss_fp32_by_autocast = true;
  s.exec.zero_reduce_bucket_elems = 2e8;
  s.exec.adam_foreach_temporaries = 2;
  s.zero = 0;
  EXPECT_EQ(memory::LossBytesPerLogit(s), 12);
  EXPECT_FALSE(memory::HoldsReduceBuckets(s));
  EXPECT_TRUE(memory::TorchForeachStep(s));
  s.zero = 2;  // DeepSpeed ZeRO-2: no autocast, its own optimizer, two buckets
  EXPECT_EQ(memory::LossBytesPerLogit(s), 6);
  EXPECT_TRUE(memory::HoldsReduceBuckets(s));
  EXPECT_FALSE(memory::TorchForeachStep(s));
  s.zero = 3;
  EXPECT_FALSE(memory::HoldsReduceBuckets(s));
  s.fsdp = true;  // FSDP: torch's optimizer, autocast
  EXPECT_EQ(memory::LossBytesPerLogit(s), 12);
  EXPECT_TRUE(memory::TorchForeachStep(s));
  s.exec.optimizer = OptimizerKind::kLion;
  EXPECT_FALSE(memory::TorchForeachStep(s));
  s.fused_cross_entropy = true;
  EXPECT_EQ(memory::LossBytesPerLogit(s), 2);
}
}  // namespace
}  // namespace trainsim
