// DeepSpeed config JSON and torchtitan TOML readers (trainsim/formats.h) on published files
// (src/spec/testdata/deepspeed/, src/spec/testdata/torchtitan/, sources in their READMEs).
// Refusals are rows of src/spec/testdata/parse_errors.jsonl.
#include "trainsim/formats.h"

#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "spec/spec_test_util.h"
#include "trainsim/presets.h"
#include "trainsim/schema.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using spec_test::Apply;
using spec_test::Data;
using spec_test::Fields;

TEST(DeepSpeedConfig, LlamaFactoryZero2Offload) {
  auto c = ParseDeepSpeedConfig(Data("deepspeed/ds_z2_offload_config.json"), "z2");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->settings.at("zero_state"), "2");
  EXPECT_EQ(c->settings.at("offload_optimizer"), "true");
  EXPECT_EQ(c->settings.at("overlap_grad_reduce"), "true");
  EXPECT_EQ(c->settings.count("dtype"), 0u);  // bf16/fp16 "auto": unknown
  EXPECT_EQ(c->settings.count("micro_batch_size"), 0u);
  const auto assumed = Fields(c->assumed);
  for (const char* k : {"train_batch_size", "train_micro_batch_size_per_gpu",
                        "gradient_accumulation_steps", "bf16.enabled", "fp16.enabled"})
    EXPECT_EQ(assumed.count(k), 1u) << k;
  const auto ignored = Fields(c->ignored);
  // ZeRO-2's gradient buckets are read (memory, and the reduce in every micro-batch).
  EXPECT_EQ(ignored.count("zero_optimization.reduce_bucket_size"), 0u);
  EXPECT_EQ(c->settings.at("deepspeed_reduce_bucket_elems"), "500000000.0");
  EXPECT_EQ(ignored.count("zero_optimization.allgather_bucket_size"), 1u);
  EXPECT_EQ(ignored.count("gradient_clipping"), 0u);  // does not change a step
}

// A ZeRO-1/2 config without reduce_bucket_size takes DeepSpeed's default, "auto" (HF Trainer's
// hidden_size^2) the same, said in the assumed list; stage 3 does not read it.
TEST(DeepSpeedConfig, ReduceBucketDefaults) {
  auto plain = ParseDeepSpeedConfig(R"({"zero_optimization": {"stage": 2}})", "z2");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->settings.at("deepspeed_reduce_bucket_elems"), "5e+08");
  EXPECT_EQ(Fields(plain->assumed).count("zero_optimization.reduce_bucket_size"), 1u);
  auto autov = ParseDeepSpeedConfig(
      R"({"zero_optimization": {"stage": 1, "reduce_bucket_size": "auto"}})", "z1");
  ASSERT_TRUE(autov.ok()) << autov.status().message();
  EXPECT_EQ(Fields(autov->assumed).count("zero_optimization.reduce_bucket_size"), 1u);
  auto z3 = ParseDeepSpeedConfig(
      R"({"zero_optimization": {"stage": 3, "reduce_bucket_size": "auto"}})", "z3");
  ASSERT_TRUE(z3.ok()) << z3.status().message();
  EXPECT_EQ(z3->settings.count("deepspeed_reduce_bucket_elems"), 0u);
  EXPECT_EQ(Fields(z3->ignored).count("zero_optimization.reduce_bucket_size"), 1u);
}

TEST(DeepSpeedConfig, LlamaFactoryZero3) {
  auto c = ParseDeepSpeedConfig(Data("deepspeed/ds_z3_config.json"), "z3");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const Strategy s = Apply(c.value());
  EXPECT_EQ(s.zero, 3);
  EXPECT_FALSE(s.offload_optimizer);
  EXPECT_TRUE(s.overlap_param_gather);
  // offload_param (ZeRO-Infinity) has no trainsim counterpart: refused by name.
  auto off = ParseDeepSpeedConfig(Data("deepspeed/ds_z3_offload_config.json"), "z3o");
  ASSERT_FALSE(off.ok());
  EXPECT_EQ(off.status().field(), "zero_optimization.offload_param.device");
}

// ZeRO-Offload++'s partial offload (offload_optimizer.ratio) is read; a ratio outside (0, 1]
// is refused by name.
TEST(DeepSpeedConfig, PartialOptimizerOffloadRatio) {
  const std::string head =
      R"({"zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu", "ratio": )";
  auto c = ParseDeepSpeedConfig(head + "0.3}}}", "ratio");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const Strategy s = Apply(c.value());
  EXPECT_TRUE(s.offload_optimizer);
  EXPECT_DOUBLE_EQ(s.optimizer_offload_fraction, 0.3);
  for (const char* bad : {"0}}}", "1.5}}}", "\"x\"}}}"}) {
    auto b = ParseDeepSpeedConfig(head + bad, "ratio");
    ASSERT_FALSE(b.ok()) << bad;
    EXPECT_EQ(b.status().field(), "zero_optimization.offload_optimizer.ratio");
  }
}

// ZeRO++ (DeepSpeed's tutorial snippet): hpZ, qwZ and qgZ read as a layout; below stage 3
// DeepSpeed does not act on them, so they are listed as ignored.
TEST(DeepSpeedConfig, ZeroPlusPlusTutorial) {
  auto c = ParseDeepSpeedConfig(Data("deepspeed/ds_zeropp_config.json"), "zeropp");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const Strategy s = Apply(c.value(), {{"world_size", "64"}});
  EXPECT_EQ(s.zero, 3);
  EXPECT_EQ(s.zero_hpz_size, 16);
  EXPECT_TRUE(s.zero_quant_weights);
  EXPECT_TRUE(s.zero_quant_grads);
  EXPECT_EQ(Fields(c->ignored).count("zero_optimization.zero_hpz_partition_size"), 0u);
  auto z2 = ParseDeepSpeedConfig(
      R"({"zero_optimization": {"stage": 2, "zero_hpz_partition_size": 8,
          "zero_quantized_gradients": true}})",
      "z2");
  ASSERT_TRUE(z2.ok()) << z2.status().message();
  EXPECT_EQ(z2->settings.count("zero_hpz_size"), 0u);
  EXPECT_EQ(Fields(z2->ignored).count("zero_optimization.zero_hpz_partition_size"), 1u);
  EXPECT_EQ(Fields(z2->ignored).count("zero_optimization.zero_quantized_gradients"), 1u);
}

// What each ZeRO++ part changes, on 8 nodes of 8 H100 (llama3-8b, ZeRO-3, one sample per rank):
// hpZ adds the secondary partition's bytes (16-bit weights / 8) and moves the backward
// all-gather into the node; qwZ halves the forward all-gather; qgZ quarters the gradient
// reduce-scatter. Each lowers the exposed DP communication.
TEST(DeepSpeedConfig, ZeroPlusPlusSimulates) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  Strategy base;
  base.world_size = 64;
  base.zero = 3;
  base.gbs = 64;
  base.mbs = 1;
  base.seq = 4096;
  auto run = [&](const Strategy& s) {
    auto r = Simulate(m, hw, NormaliseStrategy(s));
    EXPECT_TRUE(r.ok()) << r.status().message();
    return r.ok() ? r.value() : StepReport{};
  };
  const StepReport b = run(base);
  Strategy hpz = base;
  hpz.zero_hpz_size = 8;
  const StepReport h = run(hpz);
  EXPECT_NEAR(h.stages[0].weight_bytes - b.stages[0].weight_bytes, b.stages[0].params * 2.0 / 8,
              1e-6 * b.stages[0].weight_bytes);
  EXPECT_LT(h.time.exposed_dp_comm_s, b.time.exposed_dp_comm_s);
  Strategy qw = base, qg = base;
  qw.zero_quant_weights = true;
  qg.zero_quant_grads = true;
  EXPECT_LT(run(qw).time.exposed_dp_comm_s, b.time.exposed_dp_comm_s);
  EXPECT_LT(run(qg).time.exposed_dp_comm_s, b.time.exposed_dp_comm_s);
  EXPECT_EQ(run(qw).stages[0].weight_bytes, b.stages[0].weight_bytes);
}

TEST(DeepSpeedConfig, DefaultsAndBatchRule) {
  // No zero_optimization: stage 0; no precision section: fp32; overlap off below stage 3.
  auto c = ParseDeepSpeedConfig(
      R"({"train_micro_batch_size_per_gpu": 2, "gradient_accumulation_steps": 4,
          "train_batch_size": 64})",
      "ds");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->settings.at("zero_state"), "0");
  EXPECT_EQ(c->settings.at("dtype"), "fp32");
  EXPECT_EQ(c->settings.at("overlap_grad_reduce"), "false");
  Strategy s = Apply(c.value(), {{"world_size", "8"}});
  EXPECT_TRUE(CheckFrameworkBatch(c.value(), s).ok());  // 2 x 4 x 8 = 64
  s = Apply(c.value(), {{"world_size", "4"}});
  const Status bad = CheckFrameworkBatch(c.value(), s);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.field(), "train_batch_size");
  EXPECT_NE(bad.message().find("2 x 4 x 4 = 32"), std::string::npos) << bad.message();
  // Only train_batch_size and the micro-batch: the accumulation steps follow.
  auto g = ParseDeepSpeedConfig(R"({"train_micro_batch_size_per_gpu": 2, "train_batch_size": 32,
                                    "bf16": {"enabled": true}})",
                                "ds");
  ASSERT_TRUE(g.ok());
  s = Apply(g.value(), {{"world_size", "8"}});
  EXPECT_EQ(s.num_micro_batches(), 2);
  EXPECT_EQ(s.dtype, DType::kBf16);
}

TEST(TorchtitanConfig, Llama3Presets) {
  auto c8 = ParseTorchtitanToml(Data("torchtitan/llama3_8b.toml"), "llama3_8b.toml");
  ASSERT_TRUE(c8.ok()) << c8.status().message();
  EXPECT_EQ(c8->model, "llama3.1-8b");
  const Strategy s8 = Apply(c8.value(), {{"world_size", "64"}});
  EXPECT_TRUE(s8.fsdp);  // data_parallel_shard_degree -1: FSDP over the rest
  EXPECT_EQ(s8.seq, 8192);
  EXPECT_EQ(s8.mbs, 1);
  EXPECT_EQ(s8.num_micro_batches(), 1);
  EXPECT_EQ(s8.recompute, Recompute::kSelective);  // selective_ac_option "op"
  EXPECT_EQ(Fields(c8->assumed).count("world_size"), 1u);

  auto c70 = ParseTorchtitanToml(Data("torchtitan/llama3_70b.toml"), "llama3_70b.toml");
  ASSERT_TRUE(c70.ok()) << c70.status().message();
  EXPECT_EQ(c70->model, "llama3.1-70b");
  const Strategy s70 = Apply(c70.value(), {{"world_size", "64"}});
  EXPECT_EQ(s70.tp, 8);
  EXPECT_EQ(s70.mbs, 8);
  EXPECT_EQ(s70.recompute, Recompute::kFull);

  auto c405 = ParseTorchtitanToml(Data("torchtitan/llama3_405b.toml"), "llama3_405b.toml");
  ASSERT_TRUE(c405.ok()) << c405.status().message();
  EXPECT_EQ(c405->model, "llama3.1-405b");
  const Strategy s405 = Apply(c405.value(), {{"world_size", "128"}});
  EXPECT_EQ(s405.dtype, DType::kFp8);  // converters = ["float8"]
  EXPECT_TRUE(s405.tp_comm_overlap);   // enable_async_tensor_parallel
  EXPECT_EQ(Fields(c405->ignored).count("training.compile"), 1u);
}

TEST(TorchtitanConfig, NewerKeys) {
  auto c = ParseTorchtitanToml(Data("torchtitan/llama3_70b-8xb200-8k.toml"), "b200.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const Strategy s = Apply(c.value());
  EXPECT_EQ(s.world_size, 8);  // data_parallel_shard_degree 8
  EXPECT_TRUE(s.fsdp);
  EXPECT_EQ(s.mbs, 6);  // local_batch_size
  // training.dtype bfloat16: pure-bf16 parameters, gradients and Adam moments (8 B/param).
  EXPECT_EQ(s.optimizer_state_bytes, 4);
  EXPECT_FALSE(s.main_grad_fp32);
  const auto ignored = Fields(c->ignored);
  EXPECT_EQ(ignored.count("training.dtype"), 0u);
  size_t compile_rows = 0;  // listed once, with its reason
  for (const auto& i : c->ignored) compile_rows += i.field == "compile.enable";
  EXPECT_EQ(compile_rows, 1u);
  EXPECT_EQ(ignored.count("training.mixed_precision_reduce"), 0u);  // read: bf16 reduce
  EXPECT_EQ(ignored.count("compile.enable"), 1u);
  EXPECT_EQ(ignored.count("validation.enable"), 0u);  // harmless section
}

// torchtitan's attention backend is in the flavor: the plain flavors call SDPA (FlashAttention-2
// on Ampere / Hopper, assumed), *_flex* FlexAttention (listed, costed as FA2), *_varlen the
// varlen FA2 kernels; the suffix does not hide the preset (70B_flex_flash was refused before).
TEST(TorchtitanConfig, AttentionBackendFromFlavor) {
  auto sdpa = ParseTorchtitanToml(Data("torchtitan/llama3_8b.toml"), "llama3_8b.toml");
  ASSERT_TRUE(sdpa.ok()) << sdpa.status().message();
  EXPECT_EQ(sdpa->settings.at("attention_kernel"), "fa2");
  EXPECT_EQ(Fields(sdpa->assumed).at("attention_kernel"), "fa2");
  EXPECT_EQ(Apply(sdpa.value(), {{"world_size", "8"}}).attention_kernel, AttentionImpl::kFa2);

  auto flex = ParseTorchtitanToml(Data("torchtitan/llama3_70b_flex_flash.toml"), "flex.toml");
  ASSERT_TRUE(flex.ok()) << flex.status().message();
  EXPECT_EQ(flex->model, "llama3.1-70b");
  EXPECT_EQ(flex->settings.at("attention_kernel"), "fa2");
  EXPECT_EQ(Fields(flex->ignored).at("model.flavor"), "70B_flex_flash");
  EXPECT_EQ(Fields(flex->assumed).count("attention_kernel"), 0u);

  auto varlen = ParseTorchtitanToml(Data("torchtitan/llama3_8b_varlen.toml"), "varlen.toml");
  ASSERT_TRUE(varlen.ok()) << varlen.status().message();
  EXPECT_EQ(varlen->model, "llama3.1-8b");
  EXPECT_EQ(varlen->settings.at("attention_kernel"), "fa2");

  // No [model]: torchtitan's own model code still calls SDPA.
  auto bare = ParseTorchtitanToml("[training]\nseq_len = 4096\n", "bare.toml", 32);
  ASSERT_TRUE(bare.ok()) << bare.status().message();
  EXPECT_EQ(bare->settings.at("attention_kernel"), "fa2");
  // A flex flavor without a preset is still refused by name.
  auto odd = ParseTorchtitanToml("[model]\nname = \"llama3\"\nflavor = \"3B_flex\"\n", "o.toml");
  ASSERT_FALSE(odd.ok());
  EXPECT_EQ(odd.status().field(), "model.flavor");
}

// 2024-layout files ([experimental] pipeline_parallel_degree) split the local batch into
// pipeline_parallel_microbatches, null = pp x stages per rank (build_pipeline_schedule of
// torchtitan 9dec370, the commit of its llama3_h100_202412 benchmarks); the 405B 1F1B row
// (local batch 32, pp 8) ran 8 micro-batches of 4, not 32 of 1.
TEST(TorchtitanConfig, MicrobatchCountOf2024Layout) {
  const std::string base =
      "[training]\nbatch_size = 32\ndata_parallel_shard_degree = 8\n[experimental]\n"
      "pipeline_parallel_degree = 8\n";
  auto old = ParseTorchtitanToml(base, "o.toml", 126);
  ASSERT_TRUE(old.ok()) << old.status().message();
  EXPECT_EQ(old->settings.at("micro_batch_size"), "4");
  EXPECT_EQ(old->settings.at("pp_size"), "8");
  auto inter = ParseTorchtitanToml(base + "pipeline_parallel_schedule = \"Interleaved1F1B\"\n",
                                   "i.toml", 126);
  ASSERT_TRUE(inter.ok()) << inter.status().message();
  EXPECT_EQ(inter->settings.at("micro_batch_size"), "2");
  auto given = ParseTorchtitanToml(base + "pipeline_parallel_microbatches = 32\n", "g.toml", 126);
  ASSERT_TRUE(given.ok()) << given.status().message();
  EXPECT_EQ(given->settings.at("micro_batch_size"), "1");
  auto bad = ParseTorchtitanToml(base + "pipeline_parallel_microbatches = 5\n", "b.toml", 126);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "parallelism.pipeline_parallel_microbatches");
  // Today's layout: pipeline_parallel_microbatch_size, default 1.
  auto now = ParseTorchtitanToml(
      "[training]\nlocal_batch_size = 32\n[parallelism]\npipeline_parallel_degree = 8\n", "n.toml",
      126);
  ASSERT_TRUE(now.ok()) << now.status().message();
  EXPECT_EQ(now->settings.at("micro_batch_size"), "1");
}

// parallelism.fsdp_reshard_after_forward: "never" keeps the gathered parameters from forward to
// backward (ZeRO-2); it was listed as ignored. Under pipeline parallelism ("default" or "never")
// the gradients also stay unsharded until the last micro-batch: ZeRO-1 (it was costed ZeRO-2).
TEST(TorchtitanConfig, ReshardAfterForwardPolicy) {
  struct Row {
    const char* policy;
    int pp;
    bool fsdp;
    int zero;
  };
  for (const Row& r :
       {Row{"always", 1, true, 3}, Row{"default", 1, true, 3}, Row{"never", 1, false, 2},
        Row{"default", 2, false, 1}, Row{"never", 2, false, 1}, Row{"always", 2, true, 3}}) {
    const std::string toml = std::string("[parallelism]\ndata_parallel_shard_degree = 4\n") +
                             "pipeline_parallel_degree = " + std::to_string(r.pp) +
                             "\nfsdp_reshard_after_forward = \"" + r.policy + "\"\n";
    auto c = ParseTorchtitanToml(toml, "r.toml", 32);
    ASSERT_TRUE(c.ok()) << c.status().message();
    const Strategy s = Apply(c.value());
    EXPECT_EQ(s.fsdp, r.fsdp) << r.policy << " pp " << r.pp;
    EXPECT_EQ(s.zero, r.zero) << r.policy << " pp " << r.pp;
    EXPECT_EQ(Fields(c->ignored).count("parallelism.fsdp_reshard_after_forward"), 0u);
  }
  auto bad = ParseTorchtitanToml("[parallelism]\nfsdp_reshard_after_forward = \"sometimes\"\n",
                                 "b.toml", 32);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "parallelism.fsdp_reshard_after_forward");
  // The published DeepSeek-V3 config: float8 tables without their converter are not listed.
  auto ds = ParseTorchtitanToml(Data("torchtitan/deepseek_v3_671b.toml"), "ds.toml");
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  EXPECT_EQ(ds->model, "deepseek-v3");
  const auto ignored = Fields(ds->ignored);
  EXPECT_EQ(ignored.count("quantize.dense.float8.filter_fqns"), 0u);
  EXPECT_EQ(ignored.count("quantize.moe.float8.fqns"), 0u);
  EXPECT_EQ(ignored.at("compile.components"), "loss");
  EXPECT_EQ(Apply(ds.value(), {{"world_size", "256"}}).dtype, DType::kBf16);
}

// training.mixed_precision_reduce (FSDP2's reduce_dtype) was listed as ignored: bfloat16 now
// reduces the gradients in bf16 (use_fp32_accum_grad false, as --grad-reduce-in-bf16), halving
// the FSDP reduce-scatter; without FSDP it has no effect in torchtitan and is listed.
TEST(TorchtitanConfig, MixedPrecisionReduce) {
  struct Row {
    const char* toml;
    bool fp32_grads;
    bool listed;
  };
  const Row rows[] = {
      {"[training]\nmixed_precision_reduce = \"float32\"\n", true, false},
      {"[training]\nmixed_precision_reduce = \"bfloat16\"\n", false, false},
      {"[parallelism]\ndata_parallel_shard_degree = 8\n"
       "[training]\nmixed_precision_reduce = \"bfloat16\"\n",
       false, false},
      {"[parallelism]\ndata_parallel_shard_degree = 1\ndata_parallel_replicate_degree = 8\n"
       "[training]\nmixed_precision_reduce = \"bfloat16\"\n",
       true, true},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.toml);
    auto c = ParseTorchtitanToml(r.toml, "mp.toml", 32);
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(Apply(c.value(), {{"world_size", "8"}}).main_grad_fp32, r.fp32_grads);
    EXPECT_EQ(Fields(c->ignored).count("training.mixed_precision_reduce"), r.listed ? 1u : 0u);
  }
  // The FSDP gradient reduce-scatter moves half the bytes.
  auto m = LoadModel("llama3-8b");
  auto hw = LoadHardware("h100_sxm_80gb");
  ASSERT_TRUE(m.ok() && hw.ok());
  auto fp32 = ParseTorchtitanToml("[parallelism]\ndata_parallel_shard_degree = 16\n", "a", 32);
  auto bf16 = ParseTorchtitanToml(
      "[parallelism]\ndata_parallel_shard_degree = 16\n"
      "[training]\nmixed_precision_reduce = \"bfloat16\"\n",
      "b", 32);
  ASSERT_TRUE(fp32.ok() && bf16.ok());
  auto r32 = Simulate(m.value(), hw.value(), Apply(fp32.value(), {{"world_size", "16"}}));
  auto r16 = Simulate(m.value(), hw.value(), Apply(bf16.value(), {{"world_size", "16"}}));
  ASSERT_TRUE(r32.ok() && r16.ok());
  EXPECT_LT(r16->stages.at(0).fsdp_reduce_per_mb_s, 0.6 * r32->stages.at(0).fsdp_reduce_per_mb_s);
  EXPECT_GT(r16->stages.at(0).fsdp_reduce_per_mb_s, 0);
}

// float8.enable_fsdp_float8_all_gather (set in the published llama3_405b.toml) was accepted
// and dropped: FSDP2 gathers the float8 weights (1 B per parameter), read as fp8_param_gather;
// it needs FSDP, and torchtitan refuses it with a recipe_name. Recipes other than tensorwise
// are listed (costed as tensorwise).
TEST(TorchtitanConfig, Float8AllGatherAndRecipe) {
  auto c405 = ParseTorchtitanToml(Data("torchtitan/llama3_405b.toml"), "llama3_405b.toml");
  ASSERT_TRUE(c405.ok()) << c405.status().message();
  const Strategy s = Apply(c405.value(), {{"world_size", "512"}});
  EXPECT_EQ(s.dtype, DType::kFp8);
  EXPECT_TRUE(s.fp8_param_gather);
  EXPECT_EQ(Fields(c405->ignored).count("float8.enable_fsdp_float8_all_gather"), 0u);
  struct Row {
    const char* toml;
    bool gather;
    const char* listed;  // "" = nothing listed
  };
  const Row rows[] = {
      {"[model]\nconverters = [\"float8\"]\n[float8]\nenable_fsdp_float8_all_gather = true\n", true,
       ""},
      {"[model]\nconverters = [\"quantize.linear.float8\"]\n[quantize.linear.float8]\n"
       "enable_fsdp_float8_all_gather = true\n",
       true, ""},
      {"[model]\nconverters = [\"float8\"]\n[float8]\nenable_fsdp_float8_all_gather = true\n"
       "[parallelism]\ndata_parallel_shard_degree = 1\n",
       false, "float8.enable_fsdp_float8_all_gather"},
      {"[model]\nconverters = [\"float8\"]\n[float8]\nrecipe_name = \"rowwise\"\n", false,
       "float8.recipe_name"},
      {"[model]\nconverters = [\"float8\"]\n[float8]\nrecipe_name = \"tensorwise\"\n", false, ""},
      {"[float8]\nenable_fsdp_float8_all_gather = true\n", false, ""},  // no converter: bf16
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.toml);
    auto c = ParseTorchtitanToml(r.toml, "f8.toml", 32);
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(Apply(c.value(), {{"world_size", "8"}}).fp8_param_gather, r.gather);
    const auto ignored = Fields(c->ignored);
    if (*r.listed) {
      EXPECT_EQ(ignored.count(r.listed), 1u);
    }
    EXPECT_EQ(
        ignored.count("float8.recipe_name") + ignored.count("float8.enable_fsdp_float8_all_gather"),
        *r.listed ? 1u : 0u);
  }
}

// Keys that were accepted without effect and without a word: optimizer.name other than
// Adam / AdamW, optimizer.early_step_in_backward, parallelism.disable_loss_parallel with TP, and
// float8.emulate (FP8 emulated in high precision, which was costed as FP8) are now listed.
TEST(TorchtitanConfig, SilentKeysAreListed) {
  struct Row {
    const char* toml;
    const char* listed;  // "" = nothing listed
  };
  const Row rows[] = {
      {"[optimizer]\nname = \"AdamW\"\n", ""},
      {"[optimizer]\nname = \"Adam\"\n", ""},
      {"[optimizer]\nname = \"Muon\"\n", "optimizer.name"},
      {"[optimizer]\nearly_step_in_backward = true\n", "optimizer.early_step_in_backward"},
      {"[parallelism]\ndisable_loss_parallel = true\n", ""},  // no TP: nothing changes
      {"[parallelism]\ntensor_parallel_degree = 2\ndisable_loss_parallel = true\n",
       "parallelism.disable_loss_parallel"},
      {"[model]\nconverters = [\"float8\"]\n[float8]\nemulate = true\n", "float8.emulate"},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.toml);
    auto c = ParseTorchtitanToml(r.toml, "o.toml", 32);
    ASSERT_TRUE(c.ok()) << c.status().message();
    if (*r.listed) {
      EXPECT_EQ(c->ignored.size(), 1u);
      EXPECT_EQ(Fields(c->ignored).count(r.listed), 1u);
    } else {
      EXPECT_TRUE(c->ignored.empty());
    }
  }
  auto emu = ParseTorchtitanToml("[model]\nconverters = [\"float8\"]\n[float8]\nemulate = true\n",
                                 "e.toml", 32);
  ASSERT_TRUE(emu.ok());
  EXPECT_EQ(Apply(emu.value()).dtype, DType::kBf16);
}

// expert_parallel_comm_backend deepep / hybridep dispatch each token once per node (it was
// listed as ignored).
TEST(TorchtitanConfig, DeepEpBackend) {
  for (const char* b : {"deepep", "hybridep"}) {
    auto c = ParseTorchtitanToml(
        std::string("[parallelism]\nexpert_parallel_comm_backend = \"") + b + "\"\n", "d.toml", 32);
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(c->settings.at("moe_dedup_dispatch"), "true") << b;
    EXPECT_TRUE(c->ignored.empty()) << b;
  }
  auto s = ParseTorchtitanToml("[parallelism]\nexpert_parallel_comm_backend = \"standard\"\n",
                               "s.toml", 32);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->settings.count("moe_dedup_dispatch"), 0u);
}

// torchtitan's deepseek_v3 16B flavor (MLA + 64 experts) has no preset: refused by name, and
// read with the user's --model (before, the refusal said "give --model" and --model did not help).
TEST(TorchtitanConfig, UnknownFlavorRefusedUnlessModelGiven) {
  const std::string toml = Data("torchtitan/deepseek_16b-8xb200-8k.toml");
  auto bad = ParseTorchtitanToml(toml, "ds16.toml", 0);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().field(), "model.flavor");
  auto c = ParseTorchtitanToml(toml, "ds16.toml", 27, /*model_given=*/true);
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_TRUE(c->model.empty());
  EXPECT_EQ(Fields(c->ignored).at("model.flavor"), "deepseek_v3 16B");
  const Strategy s = Apply(c.value());
  EXPECT_EQ(s.world_size, 8);
  EXPECT_TRUE(s.fsdp);
  EXPECT_EQ(s.mbs, 12);
  EXPECT_EQ(s.seq, 8192);
  EXPECT_EQ(s.optimizer_state_bytes, 4);  // training.dtype bfloat16
  EXPECT_EQ(s.recompute, Recompute::kSelective);
}

// "every N-th block" once overflowed for N near 2^63 (ASan + UBSan). torchtitan wraps blocks
// N, 2N, ... (_apply_layer_sac): none when N exceeds the stage's 32 blocks (it was read as one).
TEST(TorchtitanConfig, HugeSelectiveAcEveryCheckpointsNoBlock) {
  auto c = ParseTorchtitanToml(
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[activation_checkpoint]\n"
      "mode = \"selective\"\nselective_ac_option = \"9223372036854775807\"\n",
      "t.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(Apply(c.value()).recompute, Recompute::kNone);
  // 32 blocks, every 3rd: blocks 3, 6, ..., 30 = 10 (ceil gave 11).
  auto three = ParseTorchtitanToml(
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[activation_checkpoint]\n"
      "mode = \"selective\"\nselective_ac_option = \"3\"\n",
      "t.toml");
  ASSERT_TRUE(three.ok()) << three.status().message();
  EXPECT_EQ(Apply(three.value()).recompute_layers, 10);
  // mode memory_budget (torchtitan job_config.py ActivationCheckpoint): read, costed as op SAC.
  auto budget = ParseTorchtitanToml(
      "[activation_checkpoint]\nmode = \"memory_budget\"\nmemory_budget = 0.5\n", "t.toml");
  ASSERT_TRUE(budget.ok()) << budget.status().message();
  EXPECT_EQ(Apply(budget.value()).recompute_modules, kRecomputeOpSac);
  ASSERT_EQ(budget->ignored.size(), 1u);
  EXPECT_EQ(budget->ignored[0].field, "activation_checkpoint.mode");
}

TEST(TorchtitanConfig, ParallelismAndSchedules) {
  auto c = ParseTorchtitanToml(R"(
[model]
name = "llama3"
flavor = "70B"
[training]
local_batch_size = 8
global_batch_size = 64
[parallelism]
data_parallel_shard_degree = 2
tensor_parallel_degree = 4
pipeline_parallel_degree = 4
pipeline_parallel_schedule = "Interleaved1F1B"
pipeline_parallel_microbatch_size = 2
context_parallel_degree = 1
[activation_checkpoint]
mode = "selective"
selective_ac_option = "2"
)",
                               "t.toml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  const Strategy s = Apply(c.value());
  EXPECT_EQ(s.world_size, 32);
  EXPECT_EQ(s.vpp, 2);
  EXPECT_EQ(s.schedule, PipelineSchedule::kInterleaved);
  EXPECT_EQ(s.mbs, 2);
  EXPECT_EQ(s.num_micro_batches(), 64 / (2 * 2));
  EXPECT_EQ(s.recompute, Recompute::kFull);
  EXPECT_EQ(s.recompute_layers, 10);  // 80 layers / 4 stages, every 2nd block
  // DDP: replicate only.
  auto d = ParseTorchtitanToml(
      "[parallelism]\ndata_parallel_replicate_degree = 4\n"
      "data_parallel_shard_degree = 1\n[activation_checkpoint]\n"
      "mode = \"none\"\n",
      "d.toml");
  ASSERT_TRUE(d.ok()) << d.status().message();
  const Strategy sd = Apply(d.value());
  EXPECT_FALSE(sd.fsdp);
  EXPECT_EQ(sd.zero, 0);
  EXPECT_EQ(sd.world_size, 4);
  // HSDP (was refused): FSDP within 4 x cp 2 ranks, replicated twice.
  auto h = ParseTorchtitanToml(
      "[parallelism]\ndata_parallel_replicate_degree = 2\n"
      "data_parallel_shard_degree = 4\ncontext_parallel_degree = 2\n"
      "tensor_parallel_degree = 2\n[activation_checkpoint]\nmode = \"none\"\n",
      "h.toml");
  ASSERT_TRUE(h.ok()) << h.status().message();
  const Strategy sh = Apply(h.value());
  EXPECT_TRUE(sh.fsdp);
  EXPECT_EQ(sh.zero, 3);
  EXPECT_EQ(sh.dist_opt_instances, 2);
  EXPECT_EQ(sh.world_size, 2 * 4 * 2 * 2);
  EXPECT_EQ(sh.dp(), 8);
}

TEST(TorchtitanConfig, SyntaxErrorNamesTheLine) {
  auto c = ParseTorchtitanToml("[parallelism]\ntensor_parallel_degree = = 2\n", "bad.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("line 2"), std::string::npos) << c.status().message();
  EXPECT_NE(c.status().message().find("bad.toml"), std::string::npos) << c.status().message();
}

}  // namespace
}  // namespace trainsim
