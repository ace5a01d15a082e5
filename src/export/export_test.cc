// trainsim export (trainsim/export.h): every format trainsim reads back (Megatron-LM arguments
// and the launch commands around them, DeepSpeed JSON, torchtitan TOML) gives the exported
// strategy again, field by field; what a format cannot say is listed. The text formats are
// parsed by Python's json / tomllib / yaml in tests/export_parse_test.py.
#include "trainsim/export.h"

#include <gtest/gtest.h>

#include "trainsim/formats.h"
#include "trainsim/megatron.h"
#include "trainsim/schema.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

struct Case {
  const char* name;
  const char* model;
  const char* strategy;  // strategy JSON
};

Strategy Make(const Case& c, const ModelSpec& m) {
  auto s = ParseStrategyJson(c.strategy, c.name);
  EXPECT_TRUE(s.ok()) << s.status().message();
  EXPECT_TRUE(ValidateStrategy(s.value(), m).ok()) << ValidateStrategy(s.value(), m).message();
  return s.value();
}

ExportFile Export(ExportFormat f, const ModelSpec& m, const Strategy& s, int gpus_per_node = 8) {
  ExportTarget t;
  t.gpus_per_node = gpus_per_node;
  auto e = ExportStrategy(f, m, s, t);
  EXPECT_TRUE(e.ok()) << e.status().message();
  return e.ok() ? e.value() : ExportFile{};
}

// Every canonical key equal (the dump names the first difference).
void ExpectSameStrategy(const Strategy& want, const Strategy& got) {
  const nlohmann::json a = StrategyToJson(want), b = StrategyToJson(got);
  for (const auto& [key, value] : a.items()) EXPECT_EQ(value, b[key]) << key;
}

// Strategies each format can say in full.
const Case kMegatronCases[] = {
    {"dense_interleaved_fp8", "llama3-70b",
     R"({"world_size": 64, "tp_size": 8, "pp_size": 4, "interleaving_size": 2, "seq_len": 8192,
         "global_batch_size": 128, "dtype": "fp8", "tp_comm_overlap": true,
         "recompute_modules": "core_attn,mlp", "fused_cross_entropy": true})"},
    {"moe_first_last_full_recompute", "deepseek-v3",
     R"({"world_size": 1024, "tp_size": 2, "pp_size": 16, "ep_size": 64, "etp_size": 1,
         "global_batch_size": 1024, "first_pipeline_num_layers": 3,
         "last_pipeline_num_layers": 2, "recompute": "full", "recompute_layer_num": 2,
         "moe_dedup_dispatch": true, "ep_comm_overlap": 0.3, "dtype": "mxfp8"})"},
    {"gpt_cp_fsdp_fp16", "gpt3-175b",
     R"({"world_size": 128, "tp_size": 8, "cp_size": 2, "cp_comm_type": "a2a", "fsdp": true,
         "seq_len": 4096, "global_batch_size": 64, "dtype": "fp16", "attention_kernel": "fa2",
         "overlap_grad_reduce": false})"},
    {"uneven_offload", "llama3-8b",
     R"({"world_size": 24, "pp_size": 3, "uneven_pipeline": true, "offload_optimizer": true,
         "global_batch_size": 48, "dist_opt_instances": 2})"},
};

TEST(Export, FormatNamesRoundTrip) {
  for (ExportFormat f : ExportFormats())
    EXPECT_EQ(ParseExportFormat(ExportFormatName(f)).value(), f);
  auto bad = ParseExportFormat("nemo");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("megatron, bridge"), std::string::npos);
}

TEST(Export, MegatronArgumentsReadBackToTheStrategyAndModel) {
  for (const Case& c : kMegatronCases) {
    SCOPED_TRACE(c.name);
    const ModelSpec m = LoadModel(c.model).value();
    const Strategy s = Make(c, m);
    const ExportFile e = Export(ExportFormat::kMegatron, m, s);
    EXPECT_TRUE(e.notes.empty()) << e.notes.front();
    Strategy back;
    back.world_size = s.world_size;  // the launcher's
    auto cmd = ParseMegatronScript(e.text);
    ASSERT_TRUE(cmd.ok()) << cmd.status().message();
    MegatronReading reading;
    ASSERT_TRUE(ReadMegatronArgs(cmd->args, back, nullptr, reading).ok());
    EXPECT_TRUE(reading.ignored.empty()) << reading.ignored.front().field;
    Strategy want = s;
    if (s.uneven_pipeline && s.pipeline_layout.empty() && !back.pipeline_layout.empty()) {
      // An uneven split the --account-for-* flags cannot give is written as its layout.
      EXPECT_EQ(PipelineStageLayers(NormaliseStrategy(back), m.layers, m.mtp_layers),
                PipelineStageLayers(s, m.layers, m.mtp_layers));
      want.pipeline_layout = back.pipeline_layout;
      want.uneven_pipeline = false;
    }
    ExpectSameStrategy(want, NormaliseStrategy(back));
    // The model-shape arguments describe the same architecture.
    auto built = ModelFromMegatronShape(reading.shape);
    ASSERT_TRUE(built.ok()) << built.status().message();
    EXPECT_EQ(CountParams(built.value()).total, CountParams(m).total);
    EXPECT_EQ(CountParams(built.value()).active, CountParams(m).active);
    EXPECT_EQ(built->kv_heads, m.kv_heads);
    EXPECT_EQ(built->head_dim, m.head_dim);
    EXPECT_EQ(built->mtp_layers, m.mtp_layers);
    EXPECT_EQ(built->moe.first_k_dense, m.moe.first_k_dense);
    Strategy resolved = back;
    EXPECT_TRUE(ResolveMegatronModel(reading, &m, resolved).ok());
  }
}

TEST(Export, LaunchCommandsCarryTheGpuCount) {
  const Case& c = kMegatronCases[0];
  const ModelSpec m = LoadModel(c.model).value();
  const Strategy s = Make(c, m);
  for (ExportFormat f : {ExportFormat::kTorchrun, ExportFormat::kSlurm}) {
    SCOPED_TRACE(std::string(ExportFormatName(f)));
    const ExportFile e = Export(f, m, s, 8);
    auto cmd = ParseMegatronScript(e.text);
    ASSERT_TRUE(cmd.ok()) << cmd.status().message();
    EXPECT_EQ(cmd->program, "pretrain_gpt.py");
    EXPECT_EQ(cmd->launcher_gpus, 64);
    Strategy back;
    back.world_size = cmd->launcher_gpus;
    MegatronReading reading;
    ASSERT_TRUE(ReadMegatronArgs(cmd->args, back, nullptr, reading).ok());
    ExpectSameStrategy(s, NormaliseStrategy(back));
  }
  // One node: torchrun --standalone.
  Strategy one = s;
  one.world_size = 8, one.pp = 1, one.vpp = 1, one.gbs = 16;
  one = NormaliseStrategy(one);
  EXPECT_EQ(ParseMegatronScript(Export(ExportFormat::kTorchrun, m, one).text)->launcher_gpus, 8);
  auto uneven = ExportStrategy(ExportFormat::kSlurm, m, s,
                               ExportTarget{.gpus_per_node = 6, .model_path = ""});
  ASSERT_FALSE(uneven.ok());
  EXPECT_EQ(uneven.status().message(), "gpus-per-node: must divide the GPU count (64), got 6");
}

TEST(Export, MegatronListsWhatItCannotSay) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  const Strategy s = Make({"zb", "llama3-8b",
                           R"({"world_size": 8, "pp_size": 4, "pipeline_schedule": "zb_h1",
                               "global_batch_size": 32, "stage": "sft"})"},
                          m);
  const ExportFile e = Export(ExportFormat::kMegatron, m, s);
  std::string all;
  for (const std::string& n : e.notes) all += n + "\n";
  EXPECT_NE(all.find("pipeline_schedule zb_h1"), std::string::npos) << all;
  EXPECT_NE(all.find("stage sft"), std::string::npos) << all;
  EXPECT_NE(e.text.find("# not expressed in Megatron-LM arguments: pipeline_schedule zb_h1"),
            std::string::npos);
}

// DeepSpeed: ZeRO stage, offload, batch, precision; read back with ParseDeepSpeedConfig (stage 3
// brings DeepSpeed's module-hook cost, zero3_fetch_us).
TEST(Export, DeepSpeedConfigReadsBackToTheStrategy) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  const Case cases[] = {
      {"z3_offload_bf16", "llama3-8b",
       R"({"world_size": 16, "zero_state": 3, "zero3_fetch_us": 500, "offload_optimizer": true, "micro_batch_size": 2,
           "global_batch_size": 128})"},
      {"z0_fp16_no_overlap", "llama3-8b",
       R"({"world_size": 8, "zero_state": 0, "dtype": "fp16", "global_batch_size": 32,
           "overlap_grad_reduce": false, "overlap_param_gather": false})"},
      {"z2_fp32", "llama3-8b",
       R"({"world_size": 4, "zero_state": 2, "dtype": "fp32", "global_batch_size": 8,
           "overlap_grad_reduce": false, "overlap_param_gather": false,
           "deepspeed_reduce_bucket_elems": 2e8})"},
      {"z3_zeropp", "llama3-8b",
       R"({"world_size": 16, "zero_state": 3, "zero3_fetch_us": 500, "zero_hpz_size": 8, "zero_quant_weights": true,
           "zero_quant_grads": true, "global_batch_size": 32})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Strategy s = Make(c, m);
    const ExportFile e = Export(ExportFormat::kDeepSpeed, m, s);
    EXPECT_TRUE(e.notes.empty()) << e.notes.front();
    auto fw = ParseDeepSpeedConfig(e.text, "test");
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    EXPECT_TRUE(fw->ignored.empty());
    Strategy back;
    back.world_size = s.world_size, back.seq = s.seq;
    ASSERT_TRUE(ApplyStrategySettings(back, fw->settings, false).ok());
    back = NormaliseStrategy(back);
    EXPECT_TRUE(CheckFrameworkBatch(fw.value(), back).ok());
    ExpectSameStrategy(s, back);
  }
  const Strategy tp =
      Make({"tp", "llama3-8b", R"({"world_size": 8, "tp_size": 2, "global_batch_size": 16})"}, m);
  const ExportFile e = Export(ExportFormat::kDeepSpeed, m, tp);
  ASSERT_FALSE(e.notes.empty());
  ASSERT_EQ(e.notes.size(), 1u);
  EXPECT_EQ(e.notes.front().rfind("tp_size 2 (set by the model code", 0), 0u) << e.notes.front();
}

// torchtitan: parallel degrees, batch, checkpointing, float8, model flavor.
TEST(Export, TorchtitanTomlReadsBackToTheStrategy) {
  const Case cases[] = {
      {"fsdp_tp_pp_fp8", "llama3.1-70b",
       R"({"world_size": 64, "tp_size": 4, "pp_size": 2, "fsdp": true, "seq_len": 8192,
           "global_batch_size": 64, "micro_batch_size": 1, "dtype": "fp8", "recompute": "full",
           "enable_sequence_parallel": true, "overlap_grad_reduce": true, "overlap_param_gather": true,
           "attention_kernel": "fa2"})"},
      {"ddp_interleaved_every_2nd", "llama3.1-8b",
       R"({"world_size": 16, "pp_size": 2, "interleaving_size": 2, "zero_state": 0,
           "global_batch_size": 64, "recompute": "full", "recompute_layer_num": 8,
           "attention_kernel": "fa2"})"},
      {"zero1_pp", "llama3.1-8b",
       R"({"world_size": 16, "pp_size": 2, "zero_state": 1, "global_batch_size": 64,
           "micro_batch_size": 1, "recompute": "full", "attention_kernel": "fa2"})"},
      {"zero2", "llama3.1-8b",
       R"({"world_size": 16, "zero_state": 2, "global_batch_size": 64,
           "micro_batch_size": 1, "recompute": "full", "attention_kernel": "fa2"})"},
  };
  // torchtitan's models call SDPA (attention_kernel fa2 when read back), so the cases run it.
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const ModelSpec m = LoadModel(c.model).value();
    const Strategy s = Make(c, m);
    const ExportFile e = Export(ExportFormat::kTorchtitan, m, s);
    for (const std::string& n : e.notes) ADD_FAILURE() << n;
    auto fw = ParseTorchtitanToml(e.text, "test", 0);
    ASSERT_TRUE(fw.ok()) << fw.status().message();
    EXPECT_EQ(fw->model, c.model);
    Strategy back;
    back.world_size = s.world_size;
    ASSERT_TRUE(ApplyStrategySettings(back, fw->settings, false).ok());
    ExpectSameStrategy(s, NormaliseStrategy(back));
  }
  // Under PP torchtitan's FSDP keeps gradients unsharded until the last micro-batch: ZeRO-2
  // has no spelling there and reads back as ZeRO-1, with a note.
  const ModelSpec m8 = LoadModel("llama3.1-8b").value();
  const Strategy z2pp = Make({"zero2_pp", "llama3.1-8b",
                              R"({"world_size": 16, "pp_size": 2, "zero_state": 2,
                                  "global_batch_size": 64, "micro_batch_size": 1,
                                  "recompute": "full", "attention_kernel": "fa2"})"},
                             m8);
  const ExportFile z2 = Export(ExportFormat::kTorchtitan, m8, z2pp);
  ASSERT_EQ(z2.notes.size(), 1u);
  EXPECT_NE(z2.notes.front().find("zero_state 2"), std::string::npos) << z2.notes.front();
}

TEST(Export, LlamaFactoryRefusesWhatItHasNoStageOrMethodFor) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  Strategy s;
  s.world_size = 1, s.gbs = 8;
  s.stage = TrainStage::kGrpo;
  auto e = ExportStrategy(ExportFormat::kLlamaFactory, m, s, ExportTarget{});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message().rfind("stage: grpo has no LLaMA-Factory stage", 0), 0u);
  s.stage = TrainStage::kSft;
  s.method = FtMethod::kIa3;
  e = ExportStrategy(ExportFormat::kLlamaFactory, m, s, ExportTarget{});
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(e.status().message().rfind("method: ia3 has no LLaMA-Factory", 0), 0u);
  s.method = FtMethod::kQlora;
  s.world_size = 2, s.tp = 2;
  const ExportFile ok = Export(ExportFormat::kLlamaFactory, m, s);
  ASSERT_EQ(ok.notes.size(), 1u);
  EXPECT_EQ(ok.notes[0].rfind("tp_size 2", 0), 0u);
  EXPECT_NE(ok.text.find("quantization_bit: 4"), std::string::npos);
}

TEST(Export, DefaultGpusPerNode) {
  HardwareSpec hw;
  hw.scaleup_domain = 8;
  EXPECT_EQ(DefaultGpusPerNode(hw, 64), 8);
  EXPECT_EQ(DefaultGpusPerNode(hw, 2), 2);
  hw.scaleup_domain = 72;  // NVL72: 4-GPU trays
  EXPECT_EQ(DefaultGpusPerNode(hw, 144), 4);
}

}  // namespace
}  // namespace trainsim
