// Closed forms and invariants of the fine-tuning methods and stages (issue 12, "Tests").
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "cost/cost.h"
#include "finetune/method.h"
#include "finetune/modules.h"
#include "graph/graph.h"
#include "memory/optimizer_states.h"
#include "trainsim/schema.h"
#include "trainsim/trainsim.h"
#include "trainsim/validate.h"

namespace trainsim {
namespace {

ModelSpec Model(const char* id) {
  auto m = LoadModelPreset(id);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.value();
}

// Llama-3.2-3B as the PEFT method-comparison cases give it (HF config.json).
ModelSpec Llama32_3B() {
  auto m = ParseModelJson(R"({"name": "Llama-3.2-3B", "hidden_size": 3072,
      "num_hidden_layers": 28, "num_attention_heads": 24, "num_key_value_heads": 8,
      "head_dim": 128, "intermediate_size": 8192, "vocab_size": 128256, "hidden_act": "silu",
      "tie_word_embeddings": true})",
                          "test");
  EXPECT_TRUE(m.ok()) << m.status().message();
  return m.value();
}

// Trainable parameters of the whole model on one rank.
double Trainable(const ModelSpec& m, const Strategy& s) {
  graph::StageLayers sl;
  sl.dense = m.layers;
  sl.first = sl.last = true;
  double n = 0;
  for (const graph::ParamGroup& g : graph::StageParamGroups(m, s, sl))
    if (g.trainable) n += g.count;
  return n;
}

Strategy OneGpu(FtMethod method, int rank = 8, int targets = kLoraAllLinear) {
  Strategy s;
  s.world_size = 1;
  s.seq = 1024;
  s.mbs = 1;
  s.gbs = 8;
  s.stage = TrainStage::kSft;
  s.method = method;
  s.lora_rank = rank;
  s.lora_targets = targets;
  return NormaliseStrategy(s);
}

// PEFT's print_trainable_parameters for Meta-Llama-3-8B with LoRA on q,k,v,o,gate,up,down:
// 20,971,520 at r 8 (the figure published with the PEFT / Unsloth Llama-3 notebooks), and r
// times that over 8 at r 16 and 64.
TEST(Lora, Llama3_8BAdapterCountsMatchPeft) {
  const ModelSpec m = Model("llama3-8b");
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kLora, 8)), 20971520.0);
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kLora, 16)), 41943040.0);
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kLora, 64)), 167772160.0);
  // r * (d_in + d_out) per matrix: q and v only, r 8: 32 * 8 * ((4096 + 4096) + (4096 + 1024)).
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kLora, 8, kLoraQ | kLoraV)), 3407872.0);
}

// The trainable counts the PEFT method-comparison harness printed for Llama-3.2-3B
// (shared/validation/cases/finetune.jsonl, ft_peft notes).
TEST(Peft, MethodComparisonTrainableCounts) {
  const ModelSpec m = Llama32_3B();
  const int qv = kLoraQ | kLoraV;
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kLora, 32, qv)), 9175040.0);
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kDora, 32, qv)), 9289728.0);
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kAdalora, 64, qv)), 18353664.0);
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kLoha, 32, qv)), 18350080.0);
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kVera, 256, qv)), 129024.0);
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kOft, 32, qv)), 8171520.0);
  // BOFT at PEFT's default block size 4: boft_R (d_in/4 blocks of 4 x 4) + boft_s (d_out).
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kBoft, 8, qv)), 802816.0);
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kLora, 10, kLoraGate | kLoraUp | kLoraDown)),
                   9461760.0);
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kIa3, 8, kLoraK | kLoraV | kLoraDown)), 286720.0);
  EXPECT_DOUBLE_EQ(Trainable(m, OneGpu(FtMethod::kIa3, 8, kLoraAllLinear)), 630784.0);
  Strategy s = OneGpu(FtMethod::kPrefixTuning);
  s.virtual_tokens = 200;
  EXPECT_DOUBLE_EQ(Trainable(m, s), 11468800.0);
  s.method = FtMethod::kPromptTuning;
  EXPECT_DOUBLE_EQ(Trainable(m, s), 614400.0);
  s.method = FtMethod::kPTuning;
  s.virtual_tokens = 20;
  EXPECT_DOUBLE_EQ(Trainable(m, s), 28382208.0);
}

TEST(Qlora, BaseWeightsInNf4WithDoubleQuantisation) {
  // 4 + 8/64 + 32/(64*256) = 4.127 bits (QLoRA paper, section 3).
  EXPECT_NEAR(finetune::kNf4BytesPerParam * 8, 4.127, 1e-3);
  const ModelSpec m = Model("llama3-8b");
  const Strategy s = OneGpu(FtMethod::kQlora);
  graph::StageLayers sl;
  sl.dense = m.layers;
  sl.first = sl.last = true;
  double weights = 0, base = 0;
  for (const graph::ParamGroup& g : graph::StageParamGroups(m, s, sl)) {
    weights += g.count * g.bytes_per_param;
    if (std::string(g.name) == "layers") base = g.count;
  }
  const double vocab = 2.0 * m.vocab * m.hidden;  // untied embedding and head stay bf16
  EXPECT_NEAR(weights, base * finetune::kNf4BytesPerParam + vocab * 2 + 20971520.0 * 2, 1e6);
  EXPECT_LT(weights / 1e9, 6.0);  // an 8 B model in under 6 GB
}

TEST(Optimizer, BytesPerParameter) {
  Strategy s;
  EXPECT_DOUBLE_EQ(memory::OptimizerBytesPerParam(s), 12.0);  // fp32 master, m, v
  EXPECT_DOUBLE_EQ(memory::OptimizerTrafficBytesPerParam(s), 30.0);
  s.master_weights = false;
  EXPECT_DOUBLE_EQ(memory::OptimizerBytesPerParam(s), 4.0);  // bf16 m, v
  s.exec.optimizer = OptimizerKind::kAdamW8bit;
  EXPECT_NEAR(memory::OptimizerBytesPerParam(s), 2.0, 0.01);
  s.exec.optimizer = OptimizerKind::kPagedAdamW8bit;
  EXPECT_DOUBLE_EQ(memory::OptimizerBytesPerParam(s), 0.0);  // outside the torch allocator
  EXPECT_NEAR(memory::PagedOptimizerBytesPerParam(s), 2.0, 0.01);
  s.exec.optimizer = OptimizerKind::kLion;
  EXPECT_DOUBLE_EQ(memory::OptimizerBytesPerParam(s), 2.0);
  s.master_weights = true;
  EXPECT_DOUBLE_EQ(memory::OptimizerBytesPerParam(s), 8.0);
  s.exec.optimizer = OptimizerKind::kSgd;
  EXPECT_DOUBLE_EQ(memory::OptimizerBytesPerParam(s), 8.0);
  s.exec.optimizer = OptimizerKind::kAdafactor;
  EXPECT_LT(memory::OptimizerBytesPerParam(s), 4.1);
}

HardwareSpec H100() {
  auto hw = LoadHardwarePreset("h100_sxm_80gb");
  EXPECT_TRUE(hw.ok());
  return hw.value();
}

StepReport Step(const ModelSpec& m, const Strategy& s) {
  auto r = Simulate(m, H100(), s);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : StepReport{};
}

TEST(Lora, UsesLessMemoryAndSkipsWeightGradients) {
  const ModelSpec m = Model("llama3-8b");
  const StepReport full = Step(m, OneGpu(FtMethod::kFull));
  const StepReport lora = Step(m, OneGpu(FtMethod::kLora));
  EXPECT_LT(lora.peak_mem_bytes, 0.5 * full.peak_mem_bytes);
  EXPECT_LT(lora.stages[0].bwd_weight_per_mb_s, 0.1 * full.stages[0].bwd_weight_per_mb_s);
  // Unmerged adapters re-read each adapted GEMM's input and add into its output (memory-bound):
  // about a third more forward time on Llama-3-8B's projections at the measured GEMM rates.
  EXPECT_LT(lora.stages[0].fwd_per_mb_s, 1.45 * full.stages[0].fwd_per_mb_s);
  EXPECT_GT(lora.stages[0].fwd_per_mb_s, full.stages[0].fwd_per_mb_s);
  EXPECT_LT(lora.step_time_s, full.step_time_s);
}

// PEFT modules_to_save (LoRA with trained embeddings): ModulesToSaveWrapper keeps the frozen
// original beside the trained copy, so the embedding and output layer are held twice.
TEST(Lora, TrainedEmbeddingsKeepTheFrozenOriginal) {
  const ModelSpec m = Model("llama3-8b");
  Strategy s = OneGpu(FtMethod::kLora);
  const StepReport plain = Step(m, s);
  s.train_embeddings = true;
  const StepReport emb = Step(m, s);
  const double table = static_cast<double>(m.vocab) * m.hidden;  // untied: embedding and head
  // (The head group also holds the final norm, h weights.)
  EXPECT_NEAR(emb.stages[0].weight_bytes - plain.stages[0].weight_bytes, 2 * table * 2,
              2.0 * m.hidden);
}

TEST(Freeze, FreezingMoreLayersNeverSlowsAStep) {
  const ModelSpec m = Model("llama3-8b");
  Strategy s = OneGpu(FtMethod::kFreeze);
  double last = 1e30;
  for (int frozen = 0; frozen <= m.layers; frozen += 4) {
    s.freeze_layers = frozen;
    const StepReport r = Step(m, s);
    EXPECT_LE(r.step_time_s, last * (1 + 1e-12)) << frozen << " frozen layers";
    last = r.step_time_s;
  }
  s.freeze_layers = m.layers + 1;
  EXPECT_FALSE(Simulate(m, H100(), s).ok());
}

// DPO: chosen and rejected through the policy (an SFT step on twice the sequences) plus the
// reference forward; SimPO has no reference.
TEST(Dpo, TwoPolicySequencesPlusAReferenceForward) {
  const ModelSpec m = Model("llama3-8b");
  Strategy sft = OneGpu(FtMethod::kLora);
  sft.mbs = 2;
  sft.gbs = 16;
  Strategy dpo = OneGpu(FtMethod::kLora);
  dpo.stage = TrainStage::kDpo;  // mbs 1 and gbs 8 pairs
  const StepReport a = Step(m, sft), b = Step(m, dpo);
  ASSERT_EQ(b.phases.size(), 2u);
  EXPECT_EQ(b.phases[0].name, "scoring");
  const double scoring = b.phases[0].time_s;
  EXPECT_GT(scoring, 0.15 * b.step_time_s);
  EXPECT_NEAR(b.step_time_s - scoring, a.step_time_s, 1e-9 * a.step_time_s);
  dpo.stage = TrainStage::kSimpo;
  const StepReport c = Step(m, dpo);
  EXPECT_NEAR(c.step_time_s, a.step_time_s, 1e-9 * a.step_time_s);
  EXPECT_TRUE(c.phases.empty());
  // A full-parameter DPO policy holds a frozen reference copy; precomputed log-probs skip its
  // forward.
  dpo = OneGpu(FtMethod::kFull);
  dpo.stage = TrainStage::kDpo;
  const StepReport d = Step(m, dpo);
  dpo.precompute_ref = true;
  const StepReport e = Step(m, dpo);
  EXPECT_LT(e.step_time_s, d.step_time_s);
  EXPECT_DOUBLE_EQ(e.peak_mem_bytes, d.peak_mem_bytes);
}

TEST(Stages, RlStagesRunTheRolloutPhases) {
  // Was refused until the decode model landed (src/rl/rl_test.cc tests the RL step itself).
  Strategy s = OneGpu(FtMethod::kFull);
  s.stage = TrainStage::kGrpo;
  auto r = Simulate(Model("llama3-8b"), H100(), s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_FALSE(r->phases.empty());
  EXPECT_EQ(r->phases.front().name, "generation");
  EXPECT_FALSE(ParseFtMethod("other:galore").ok());
  EXPECT_EQ(ParseFtMethod("other:ia3").value(), FtMethod::kIa3);
}

TEST(Packing, MeanLengthShrinksThePackedRows) {
  const ModelSpec m = Model("llama3-8b");
  Strategy s = OneGpu(FtMethod::kLora);
  const StepReport full_rows = Step(m, s);
  s.mean_seq = 256;  // 8 samples of 256 tokens fill 2 rows of 1024
  const StepReport packed = Step(m, s);
  s.packing = false;  // padded: 8 rows of 1024 as before
  const StepReport padded = Step(m, s);
  EXPECT_LT(packed.step_time_s, 0.4 * full_rows.step_time_s);
  EXPECT_DOUBLE_EQ(padded.step_time_s, full_rows.step_time_s);
}

// BOFT builds a dense d_in x d_in rotation every step (three d_in^3 products and the weight
// rotation, all on the gradient path): per adapted q/v pair of Llama-3.2-3B about
// 3 * (3 * 2 * 3072^3 + 2 * 3072^2 * (3072 + 1024)) = 1.27 TFLOP per layer and step, whatever
// the batch; OFT rotates the tokens' inputs block by block and costs a few percent of that.
TEST(Boft, DenseRotationDominatesTheStepAtSmallBatches) {
  const ModelSpec m = Llama32_3B();
  const HardwareSpec hw = LoadHardware("l40s_48gb").value();
  Strategy s = OneGpu(FtMethod::kBoft, 8, kLoraQ | kLoraV);
  s.seq = 256;  // 8 micro-batches of 256 tokens: the rotation is rebuilt in every forward
  auto boft = Simulate(m, hw, s);
  s.method = FtMethod::kOft;
  s.lora_rank = 32;
  auto oft = Simulate(m, hw, s);
  ASSERT_TRUE(boft.ok()) << boft.status().message();
  ASSERT_TRUE(oft.ok()) << oft.status().message();
  const double extra_flops = 28 * 3 * (3 * 2 * std::pow(3072.0, 3) + 2 * 3072.0 * 3072 * 4096);
  // At most the peak rate: the extra time is at least the extra FLOPs over the bf16 peak.
  EXPECT_GT(boft->step_time_s - oft->step_time_s, 8 * 0.9 * extra_flops / hw.peak_bf16_flops);
  EXPECT_TRUE(ParseFtMethod("other:boft").ok());
  EXPECT_FALSE(ParseFtMethod("galore").ok());
}

// OFT trains one tensor per adapted module (oft_r holds every block's skew parameters): the
// optimizer launches once per module, not once per block of the batched Cayley and rotation
// GEMMs (a bug counted 3r tensors per module: 96 at r 32, the step's largest term on one L40S).
TEST(Oft, OptimizerStepsOneTensorPerModule) {
  const ModelSpec m = Llama32_3B();
  const HardwareSpec hw = LoadHardware("l40s_48gb").value();
  Strategy s = OneGpu(FtMethod::kOft, 8, kLoraQ | kLoraV);
  s.lora_rank = 32;
  auto r32 = Simulate(m, hw, s);
  s.lora_rank = 8;  // 4x fewer, larger blocks (4x the parameters): the same two tensors per layer
  auto r8 = Simulate(m, hw, s);
  ASSERT_TRUE(r32.ok() && r8.ok());
  // Counting a tensor per block made r 32 launch 4x more and step slower than r 8.
  EXPECT_LE(r32->time.optimizer_s, r8->time.optimizer_s);
}

TEST(FinetuneValidation, StaysUnderItsRatchet) {
  const std::string cases = std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/finetune.jsonl";
  if (!std::filesystem::exists(cases)) GTEST_SKIP() << "no " << cases;
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation_ratchet.json");
  const nlohmann::json ratchet = nlohmann::json::parse(in);
  auto res = RunValidation({cases});
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_LE(res->skipped, ratchet["finetune_skipped_max"].get<int>());
  EXPECT_LE(res->mape, ratchet["finetune_time_mape_max"].get<double>());
  EXPECT_LE(res->mem_mape, ratchet["finetune_memory_mape_max"].get<double>());
  EXPECT_GE(res->band_coverage, ratchet["finetune_band_coverage_min"].get<double>());
}

// The LoRA adapter's ops count PEFT's eager kernels one by one (A, B, scale, add forward; data
// grad, weight grad and .grad accumulation per thin GEMM backward), so each is charged
// 1 / kEagerKernelsPerGraphKernel of a cost-graph kernel; they were charged a whole one.
TEST(HostIssue, AdapterKernelsAreChargedPerEagerKernel) {
  const Strategy s = OneGpu(FtMethod::kLora, 64);
  std::vector<graph::Op> ops;
  finetune::AppendModuleAdapter(s, finetune::Linear{.d_in = 2048, .d_out = 6144}, 256, ops);
  ASSERT_EQ(ops.size(), 3u);
  int fwd = 0, bwd = 0;
  for (const graph::Op& op : ops) {
    EXPECT_DOUBLE_EQ(op.host_weight, 1 / cost::kEagerKernelsPerGraphKernel) << op.name;
    fwd += op.fwd_kernels, bwd += op.bwd_kernels;
  }
  EXPECT_EQ(fwd, 4);
  EXPECT_EQ(bwd, 8);
  EXPECT_EQ(ops[0].weight_matrices + ops[1].weight_matrices, 2);  // A and B, gathered by ZeRO-3
  // Gradients freed each step and one micro-batch per step: AccumulateGrad hands A's and B's
  // gradients over as .grad without a kernel.
  Strategy freed = s;
  freed.exec.grad_set_to_none = true;
  freed.gbs = freed.mbs;
  freed.micro_batch_num = 0;
  freed = NormaliseStrategy(freed);
  ASSERT_EQ(freed.num_micro_batches(), 1);
  std::vector<graph::Op> once;
  finetune::AppendModuleAdapter(freed, finetune::Linear{.d_in = 2048, .d_out = 6144}, 256, once);
  int bwd_once = 0;
  for (const graph::Op& op : once) bwd_once += op.bwd_kernels;
  EXPECT_EQ(bwd_once, 6);
}

// auto-gptq's torch unpack (Qwen1's Q-LoRA): per weight, the shift over the expanded int32
// qweight, the int8 cast, the mask, the two g_idx gathers that write full-size zeros and scales,
// the subtraction and the scaling (22.5 bytes, 13 kernels; the gathers were missing before:
// ft_qwen1's 14B / 72B Int4 rows were 26-36 % fast); each kernel at a plain op's host cost
// (12.8 / 36.5 of an eager training kernel, data/measurements/h100_small_kernels.csv).
TEST(Qlora, GptqTorchUnpackWritesTheGatheredZerosAndScales) {
  const ModelSpec m = Model("llama3-8b");
  Strategy s = OneGpu(FtMethod::kQlora, 64);
  s.exec.dequant = DequantKernel::kTorchUnpack;
  std::vector<graph::Op> ops;
  finetune::BuildTrainLayer(m, s, false, ops);
  double bytes = 0;
  int unpacks = 0;
  for (const graph::Op& op : ops) {
    if (std::string(op.name) != "gptq_unpack") continue;
    ++unpacks;
    bytes += op.bytes;
    EXPECT_EQ(op.fwd_kernels, 13);
    EXPECT_EQ(op.bwd_kernels, 0);
    EXPECT_DOUBLE_EQ(op.host_weight, 12.8 / 36.5 / cost::kEagerKernelsPerGraphKernel);
  }
  // Llama-3-8B's layer: q, k, v (4096 x 6144 fused), o (4096 x 4096), gate + up (4096 x 28672),
  // down (14336 x 4096).
  const double weights = 4096.0 * 6144 + 4096.0 * 4096 + 4096.0 * 28672 + 14336.0 * 4096;
  EXPECT_GE(unpacks, 4);
  EXPECT_NEAR(bytes, 22.5 * weights, 1e-6 * bytes);
}

// LoHa's HadaWeight backward recomputes both factor products and scales the gradient by each
// (6 GEMMs, 3 element-wise kernels); LoKr's kron backs through a broadcast multiply and a
// reduction per factor; both deltas are applied by a full F.linear whose weight is no
// parameter: the optimizer steps the factors (4 for LoHa, 2 for LoKr). ft_peft-007/008 were
// -21 / -23 % with 3 backward kernels for the factors and 1 for the Hadamard product.
TEST(Loha, HadaWeightBackwardRecomputesTheProducts) {
  const finetune::Linear l{.d_in = 3072, .d_out = 3072};
  Strategy s = OneGpu(FtMethod::kLoha, 32);
  auto count = [&](const Strategy& st) {
    std::vector<graph::Op> ops;
    finetune::AppendModuleAdapter(st, l, 840, ops);
    int fwd = 0, bwd = 0;
    double params = 0, bwd_bytes = 0;
    for (const graph::Op& op : ops) {
      fwd += op.fwd_kernels, bwd += op.bwd_kernels, params += op.param_tensors;
      if (op.kind == graph::OpKind::kMemory) bwd_bytes += op.bytes * op.bwd_bytes_factor;
    }
    return std::tuple{fwd, bwd, params, bwd_bytes};
  };
  const auto [fwd, bwd, params, bytes] = count(s);
  EXPECT_EQ(fwd, 2 + 2 + 1 + 1);    // two products, Hadamard and scale, F.linear, add
  EXPECT_EQ(bwd, (6 + 4) + 3 + 2);  // GEMMs + AccumulateGrad, element-wise, F.linear
  EXPECT_DOUBLE_EQ(params, 4);
  const double w = 3072.0 * 3072;
  EXPECT_GT(bytes, (6 + 8) * w * 2);  // 6 full-size GEMM passes + 8 element-wise passes
  s.method = FtMethod::kLokr;
  const auto [kf, kb, kp, kbytes] = count(s);
  EXPECT_EQ(kf, 2 + 1 + 1);
  EXPECT_EQ(kb, (5 + 2) + 2);
  EXPECT_DOUBLE_EQ(kp, 2);
  EXPECT_DOUBLE_EQ(kbytes, 8 * w * 2);
}

// Full fine-tuning at 256 tokens per micro-batch is host-bound: DeepSpeed ZeRO-3's hooks add
// zero3_fetch_us per gathered matrix and pass (28 layers x 5 matrices (q/k/v fused, o, gate, up,
// down) x 3 passes (forward, recompute, backward) x 8 micro-batches, plus the LM head), and
// nothing below stage 3.
TEST(HostIssue, Zero3HooksAddHostTimeAtStage3Only) {
  const ModelSpec m = Llama32_3B();
  Strategy s = OneGpu(FtMethod::kFull);
  s.seq = 256;
  s.recompute = Recompute::kFull;
  s.exec.host_issue_us_per_kernel = kEagerHostIssueUs;
  auto step = [&](int zero, double fetch_us) {
    Strategy t = s;
    t.zero = zero;
    t.exec.zero3_fetch_us = fetch_us;
    return Step(m, NormaliseStrategy(t)).step_time_s;
  };
  const double hooks = (28 * 5 + 1) * 3 * 8 * 500e-6;
  EXPECT_NEAR(step(3, 500) - step(3, 0), hooks, 0.02 * hooks);
  EXPECT_DOUBLE_EQ(step(2, 500), step(2, 0));
}

// ZeRO-3 gathers run on their own stream while the host issues kernels: a host-bound pass hides
// them as a compute-bound one does. Before, the exposed gather was charged on top of the
// host-bound stretch and 256 tokens per micro-batch came out slower than 512.
TEST(HostIssue, HostBoundPassesHideZero3Gathers) {
  const ModelSpec m = Model("llama3-8b");
  Strategy s = OneGpu(FtMethod::kFull);
  s.world_size = 2;
  s.gbs = 16;
  s.zero = 3;
  s.recompute = Recompute::kFull;
  s.exec.host_issue_us_per_kernel = kEagerHostIssueUs;
  s.exec.zero3_fetch_us = kDeepSpeedZero3FetchUs;
  double last = 0;
  for (int seq : {256, 512, 1024}) {
    Strategy t = s;
    t.seq = seq;
    const double step = Step(m, NormaliseStrategy(t)).step_time_s;
    EXPECT_GE(step, last) << seq;
    last = step;
  }
}

// lora_dropout (PEFT LoraConfig): one dropout kernel per adapted module on its input, forward and
// backward (5 bytes per element each way), its output and 1-byte mask saved in place of the
// input; DoRA also recomputes the base GEMM on the dropped input. Methods without PEFT's
// lora_dropout (IA3) are unchanged.
TEST(Lora, DropoutAddsAKernelPerModuleAndSavesTheDroppedInput) {
  const finetune::Linear l{.d_in = 2048, .d_out = 6144};
  Strategy s = OneGpu(FtMethod::kLora, 64);
  std::vector<graph::Op> plain, dropped;
  finetune::AppendModuleAdapter(s, l, 256, plain);
  s.lora_dropout = 0.05;
  finetune::AppendModuleAdapter(s, l, 256, dropped);
  ASSERT_EQ(dropped.size(), plain.size() + 1);
  const graph::Op& d = dropped[0];
  EXPECT_EQ(std::string(d.name), "lora_dropout");
  EXPECT_DOUBLE_EQ(d.bytes, 256 * 2048 * 5.0);
  EXPECT_DOUBLE_EQ(d.bytes * d.bwd_bytes_factor, 256 * 2048 * 5.0);
  EXPECT_DOUBLE_EQ(d.saved_bytes, 256 * 2048 * 3.0);
  EXPECT_EQ(d.fwd_kernels, 1);
  EXPECT_EQ(d.bwd_kernels, 1);
  s.method = FtMethod::kDora;
  std::vector<graph::Op> dora;
  finetune::AppendModuleAdapter(s, l, 256, dora);
  int base = 0;
  for (const graph::Op& op : dora) base += std::string(op.name) == "dora_base_on_dropped";
  EXPECT_EQ(base, 1);
  s.method = FtMethod::kIa3;
  std::vector<graph::Op> ia3;
  finetune::AppendModuleAdapter(s, l, 256, ia3);
  EXPECT_EQ(ia3.size(), 1u);

  const ModelSpec m = Model("llama3-8b");
  Strategy run = OneGpu(FtMethod::kLora, 64);
  const StepReport off = Step(m, run);
  run.lora_dropout = 0.1;
  const StepReport on = Step(m, run);
  EXPECT_GT(on.step_time_s, off.step_time_s);
  EXPECT_GT(on.peak_mem_bytes, off.peak_mem_bytes);
  run.lora_dropout = 0.5;  // the rate changes nothing but the mask's values
  EXPECT_DOUBLE_EQ(Step(m, run).step_time_s, on.step_time_s);
  // Not given: PEFT's 0 is listed under "Assumed" for the methods that have the setting.
  auto listed = [](const Strategy& st) {
    for (const Assumption& a : AssumedStrategyDefaults(st, {}))
      if (a.field == "lora_dropout") return true;
    return false;
  };
  EXPECT_TRUE(listed(OneGpu(FtMethod::kLora)));
  EXPECT_TRUE(listed(OneGpu(FtMethod::kDora)));
  EXPECT_FALSE(listed(OneGpu(FtMethod::kFull)));
  EXPECT_FALSE(listed(OneGpu(FtMethod::kIa3)));
}

// Execution::eager_modules: RMSNorm as eager PyTorch runs it (36 bytes per element forward in 8
// kernels, 64 backward in 10, the fp32 input saved), the rotary embedding on q and k (20 / 22
// bytes, 10 / 14 kernels) and SiLU * up as two kernels (10 / 18 bytes per element of the FFN);
// each kernel is an eager one for the host. Inference passes and LayerNorm models keep the
// fused ops.
TEST(EagerModules, NormRotaryAndGateChainsAreCostedAsEagerRunsThem) {
  const ModelSpec m = Llama32_3B();
  Strategy s = OneGpu(FtMethod::kFull);
  s.seq = 512;
  std::vector<graph::Op> fused, eager;
  graph::BuildLayer(m, s, false, fused);
  s.exec.eager_modules = true;
  graph::BuildLayer(m, s, false, eager);
  ASSERT_EQ(eager.size(), fused.size() + 1);
  const double n = 512.0 * 3072, f = 512.0 * 8192, qk = 512.0 * (3072 + 1024);
  for (const graph::Op& op : eager) {
    const std::string name = op.name;
    if (name == "attn_norm" || name == "mlp_norm") {
      EXPECT_DOUBLE_EQ(op.bytes, 36 * n);
      EXPECT_DOUBLE_EQ(op.bytes * op.bwd_bytes_factor, 64 * n);
      EXPECT_EQ(op.fwd_kernels, 8);
      EXPECT_DOUBLE_EQ(op.saved_bytes + op.saved_extra_bytes, 4 * n);
      EXPECT_DOUBLE_EQ(op.host_weight, 1 / cost::kEagerKernelsPerGraphKernel);
    } else if (name == "rotary") {
      EXPECT_DOUBLE_EQ(op.bytes, 20 * qk);
      EXPECT_DOUBLE_EQ(op.bytes * op.bwd_bytes_factor, 22 * qk);
      EXPECT_EQ(op.saved_bytes, 0);
    } else if (name == "mlp_act") {
      EXPECT_DOUBLE_EQ(op.bytes, 10 * f);
      EXPECT_DOUBLE_EQ(op.bytes * op.bwd_bytes_factor, 18 * f);
      // gate and up (the fused kernel's inputs) + SiLU's output (the chain's own).
      EXPECT_DOUBLE_EQ(op.saved_bytes, 4 * f);
      EXPECT_DOUBLE_EQ(op.saved_bytes + op.saved_extra_bytes, 6 * f);
    }
  }
  const HardwareSpec hw = LoadHardware("l40s_48gb").value();
  auto eager_step = Simulate(m, hw, s);
  s.exec.eager_modules = false;
  auto fused_step = Simulate(m, hw, s);
  ASSERT_TRUE(eager_step.ok() && fused_step.ok());
  EXPECT_GT(eager_step->step_time_s, fused_step->step_time_s);
  EXPECT_GT(eager_step->peak_mem_bytes, fused_step->peak_mem_bytes);
  // A GPT-style LayerNorm model: nn.LayerNorm is one kernel, positions are learned.
  const ModelSpec gpt = Model("megatron-gpt-22b");
  std::vector<graph::Op> a, b;
  graph::BuildLayer(gpt, s, false, a);
  s.exec.eager_modules = true;
  graph::BuildLayer(gpt, s, false, b);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_DOUBLE_EQ(a[i].bytes, b[i].bytes) << a[i].name;
}

}  // namespace
}  // namespace trainsim
