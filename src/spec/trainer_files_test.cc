// LLaMA-Factory YAML and TRL / TrainingArguments JSON readers (trainsim/formats.h) on files
// modelled on the frameworks' examples (src/spec/testdata/llamafactory/, .../trl/, sources in
// their READMEs). Refusals are rows of src/spec/testdata/parse_errors.jsonl.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "spec/spec_test_util.h"
#include "trainsim/export.h"
#include "trainsim/formats.h"
#include "trainsim/presets.h"
#include "trainsim/schema.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using spec_test::Apply;
using spec_test::Data;
using spec_test::Fields;

FrameworkConfig Lf(const std::string& file, int layers = 32) {
  auto c = ParseLlamaFactoryYaml(Data("llamafactory/" + file), file, layers);
  EXPECT_TRUE(c.ok()) << c.status().message();
  return c.ok() ? c.value() : FrameworkConfig{};
}

TEST(LlamaFactoryYaml, LoraSftExample) {
  FrameworkConfig c = Lf("llama3_lora_sft.yaml");
  Strategy s = Apply(c, {{"world_size", "8"}});
  EXPECT_EQ(s.stage, TrainStage::kSft);
  EXPECT_EQ(s.method, FtMethod::kLora);
  EXPECT_EQ(s.lora_rank, 8);
  EXPECT_DOUBLE_EQ(s.lora_alpha, 16);   // LLaMA-Factory: lora_rank * 2
  EXPECT_DOUBLE_EQ(s.lora_dropout, 0);  // LLaMA-Factory's default, listed
  EXPECT_EQ(Fields(c.assumed).count("lora_dropout"), 1u);
  EXPECT_EQ(s.lora_targets, kLoraAllLinear);
  EXPECT_EQ(s.seq, 2048);
  EXPECT_FALSE(s.packing);                   // packing only for stage pt
  EXPECT_EQ(s.recompute, Recompute::kFull);  // LLaMA-Factory checkpoints by default
  EXPECT_EQ(s.zero, 0);                      // plain DDP without a deepspeed key
  EXPECT_EQ(s.exec.optimizer, OptimizerKind::kAdam);
  EXPECT_EQ(s.dtype, DType::kBf16);
  EXPECT_TRUE(s.master_weights);
  EXPECT_EQ(s.gbs, 1 * 8 * 8);  // per_device x grad_accum x dp
  EXPECT_EQ(c.model_path, "meta-llama/Meta-Llama-3-8B-Instruct");
  auto a = Fields(c.assumed);
  ASSERT_TRUE(a.count("(not simulated)"));
  EXPECT_NE(a["(not simulated)"].find("logging_steps"), std::string::npos);
  EXPECT_NE(a["(not simulated)"].find("learning_rate"), std::string::npos);
  EXPECT_TRUE(a.count("optim"));
  EXPECT_TRUE(a.count("disable_gradient_checkpointing"));
}

TEST(LlamaFactoryYaml, QloraDpoFreezeExamples) {
  Strategy q = Apply(Lf("llama3_lora_sft_otfq.yaml"));
  EXPECT_EQ(q.method, FtMethod::kQlora);
  EXPECT_DOUBLE_EQ(q.lora_alpha, 16);
  EXPECT_EQ(Apply(Lf("llama3_lora_dpo.yaml")).stage, TrainStage::kDpo);
  Strategy f = Apply(Lf("llama3_freeze_sft.yaml", 32));
  EXPECT_EQ(f.method, FtMethod::kFreeze);
  EXPECT_EQ(f.freeze_layers, 32 - 8);  // the last 8 layers train
}

TEST(LlamaFactoryYaml, PrefLossPicksTheStage) {
  for (const auto& [loss, stage] :
       std::map<std::string, TrainStage>{{"ipo", TrainStage::kIpo},
                                         {"simpo", TrainStage::kSimpo},
                                         {"orpo", TrainStage::kOrpo},
                                         {"sigmoid", TrainStage::kDpo}}) {
    auto c = ParseLlamaFactoryYaml("stage: dpo\npref_loss: " + loss + "\n", "t.yaml");
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(Apply(c.value()).stage, stage) << loss;
  }
}

// LLaMA-Factory checkpoints unless disable_gradient_checkpointing (model_utils/checkpointing.py):
// a TrainingArguments gradient_checkpointing false turned recompute off. enable_liger_kernel
// gives pt / sft Liger's fused linear cross-entropy (liger_kernel.py, require_logits), listed
// as ignored before.
TEST(LlamaFactoryYaml, CheckpointingAndLiger) {
  struct Row {
    const char* yaml;
    Recompute recompute;
    bool fused;
  };
  for (const Row& r :
       std::vector<Row>{{"gradient_checkpointing: false\n", Recompute::kFull, false},
                        {"disable_gradient_checkpointing: true\n", Recompute::kNone, false},
                        {"disable_gradient_checkpointing: true\ngradient_checkpointing: true\n",
                         Recompute::kFull, false},
                        {"enable_liger_kernel: true\n", Recompute::kFull, true},
                        {"stage: dpo\nenable_liger_kernel: true\n", Recompute::kFull, false}}) {
    auto c = ParseLlamaFactoryYaml(r.yaml, "t.yaml");
    ASSERT_TRUE(c.ok()) << r.yaml << c.status().message();
    Strategy s = Apply(c.value());
    EXPECT_EQ(s.recompute, r.recompute) << r.yaml;
    EXPECT_EQ(s.fused_cross_entropy, r.fused) << r.yaml;
  }
}

TEST(LlamaFactoryYaml, DeepSpeedFileIsNotedThenMerged) {
  FrameworkConfig c = Lf("llama3_full_sft.yaml");
  EXPECT_EQ(c.deepspeed_file, "../deepspeed/ds_z3_config.json");
  EXPECT_TRUE(Fields(c.assumed).count("deepspeed"));  // the library never opens it
  auto ds = ParseDeepSpeedConfig(Data("deepspeed/ds_z3_config.json"), "ds_z3_config.json");
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  MergeDeepSpeedConfig(ds.value(), c);
  Strategy s = Apply(c, {{"world_size", "8"}});
  EXPECT_EQ(s.zero, 3);
  EXPECT_EQ(s.mbs, 1);  // the YAML's batch, not DeepSpeed's "auto"
  EXPECT_EQ(s.num_micro_batches(), 2);
  EXPECT_FALSE(Fields(c.assumed).count("deepspeed"));
}

// The exporter's YAML reads back to the strategy it wrote.
TEST(LlamaFactoryYaml, ReadsBackTheExport) {
  auto m = LoadModel("llama3-8b");
  ASSERT_TRUE(m.ok());
  Strategy s;
  s.world_size = 1;
  s.seq = 4096;
  s.mbs = 2;
  s.gbs = 16;
  s.stage = TrainStage::kSimpo;
  s.method = FtMethod::kQlora;
  s.lora_rank = 64;
  s.lora_alpha = 32;
  s.lora_dropout = 0.05;
  s.lora_targets = kLoraQ | kLoraV;
  s.recompute = Recompute::kFull;
  s.exec.optimizer = OptimizerKind::kPagedAdamW8bit;
  s = NormaliseStrategy(s);
  auto f = ExportStrategy(ExportFormat::kLlamaFactory, m.value(), s, ExportTarget{});
  ASSERT_TRUE(f.ok()) << f.status().message();
  auto c = ParseLlamaFactoryYaml(f->text, "export.yaml", m->layers);
  ASSERT_TRUE(c.ok()) << c.status().message();
  Strategy r = Apply(c.value(), {{"world_size", "1"}});
  EXPECT_EQ(r.stage, s.stage);
  EXPECT_EQ(r.method, s.method);
  EXPECT_EQ(r.lora_rank, s.lora_rank);
  EXPECT_DOUBLE_EQ(r.lora_alpha, s.lora_alpha);
  EXPECT_DOUBLE_EQ(r.lora_dropout, s.lora_dropout);
  EXPECT_EQ(r.lora_targets, s.lora_targets);
  EXPECT_EQ(r.seq, s.seq);
  EXPECT_EQ(r.mbs, s.mbs);
  EXPECT_EQ(r.gbs, s.gbs);
  EXPECT_EQ(r.recompute, s.recompute);
  EXPECT_EQ(r.exec.optimizer, s.exec.optimizer);
  EXPECT_EQ(r.packing, s.packing);
}

TEST(TrlArgsJson, SftAndDpo) {
  auto sft = ParseTrlArgsJson(Data("trl/sft_config.json"), "sft_config.json");
  ASSERT_TRUE(sft.ok()) << sft.status().message();
  Strategy s = Apply(sft.value(), {{"world_size", "8"}});
  EXPECT_EQ(s.stage, TrainStage::kSft);
  EXPECT_EQ(s.seq, 2048);
  EXPECT_TRUE(s.packing);
  EXPECT_EQ(s.recompute, Recompute::kFull);
  EXPECT_EQ(s.gbs, 4 * 4 * 8);
  EXPECT_EQ(Fields(sft->assumed)["stage"], "sft");
  auto dpo = ParseTrlArgsJson(Data("trl/dpo_config.json"), "dpo_config.json");
  ASSERT_TRUE(dpo.ok()) << dpo.status().message();
  Strategy d = Apply(dpo.value(), {{"world_size", "8"}});
  EXPECT_EQ(d.stage, TrainStage::kDpo);
  EXPECT_EQ(d.seq, 1024);
  EXPECT_EQ(d.gbs, 2 * 8 * 8);  // pairs, as TRL counts them
  auto ipo = ParseTrlArgsJson(R"({"loss_type": "ipo", "precompute_ref_log_probs": true})", "t");
  ASSERT_TRUE(ipo.ok()) << ipo.status().message();
  Strategy i = Apply(ipo.value());
  EXPECT_EQ(i.stage, TrainStage::kIpo);
  EXPECT_TRUE(i.precompute_ref);
}

TEST(TrlArgsJson, GrpoCountsCompletions) {
  auto c = ParseTrlArgsJson(Data("trl/grpo_config.json"), "grpo_config.json");
  ASSERT_TRUE(c.ok()) << c.status().message();
  Strategy s = Apply(c.value(), {{"world_size", "8"}});
  EXPECT_EQ(s.stage, TrainStage::kGrpo);
  EXPECT_EQ(s.group_size, 8);
  EXPECT_EQ(s.seq, 512 + 1024);
  EXPECT_EQ(s.max_response_len, 1024);
  EXPECT_EQ(s.kl_reference, 1);
  EXPECT_FALSE(s.rollout_separate);
  EXPECT_DOUBLE_EQ(s.rollout_mem_fraction, 0.3);
  EXPECT_EQ(c->completions_per_rank, 8 * 2);
  ASSERT_TRUE(ResolveFrameworkBatch(c.value(), s, false).ok());
  EXPECT_EQ(s.gbs, 8 * 2 * 8 / 8);  // 128 completions = 16 prompts of 8
  auto odd = ParseTrlArgsJson(R"({"num_generations": 8, "per_device_train_batch_size": 3})", "t");
  ASSERT_TRUE(odd.ok()) << odd.status().message();
  Strategy o = Apply(odd.value(), {{"world_size", "2"}});
  Status st = ResolveFrameworkBatch(odd.value(), o, false);  // 3 x 1 x 2 completions
  EXPECT_EQ(st.field(), "per_device_train_batch_size") << st.message();
  auto no_kl = ParseTrlArgsJson(R"({"num_generations": 4, "beta": 0.0})", "t");
  ASSERT_TRUE(no_kl.ok());
  EXPECT_EQ(Apply(no_kl.value()).kl_reference, 0);  // beta 0: no reference model
}

// GRPOConfig's vLLM modes (grpo_config.py): use_vllm without vllm_mode is "server", a
// `trl vllm-serve` engine on GPUs of its own (read as colocated before); colocate's engine takes
// 0.3 of HBM and TP 1 (read as 0.6 and the smallest TP that fits); the server's memory flag is
// the server's own; the trainer waits for its completions (no async rollout); beta absent is 0.0,
// no reference model (read as the stage's reference forward), 0.04 in the vllm_device releases.
TEST(TrlArgsJson, GrpoVllmModesAndBeta) {
  struct Row {
    const char* json;
    bool separate;
    int gpus, tp;
    double mem;
    int kl;
  };
  for (const Row& r : std::vector<Row>{
           {R"({"num_generations": 8, "use_vllm": true})", true, 1, 1, 0, 0},
           {R"({"use_vllm": true, "vllm_mode": "colocate"})", false, 0, 1, 0.3, 0},
           {R"({"use_vllm": true, "vllm_mode": "colocate", "vllm_gpu_memory_utilization": 0.5,
                "vllm_tensor_parallel_size": 2, "beta": 0.01})",
            false, 0, 2, 0.5, 1},
           {R"({"use_vllm": true, "vllm_mode": "server", "vllm_gpu_memory_utilization": 0.5})",
            true, 1, 1, 0, 0},
           {R"({"num_generations": 4})", false, 0, 0, 0, 0},
           {R"({"use_vllm": true, "vllm_device": "auto"})", true, 1, 1, 0, 1}}) {
    auto c = ParseTrlArgsJson(r.json, "t");
    ASSERT_TRUE(c.ok()) << r.json << ": " << c.status().message();
    Strategy s = Apply(c.value(), {{"world_size", "8"}});
    EXPECT_EQ(s.stage, TrainStage::kGrpo) << r.json;
    EXPECT_EQ(s.rollout_separate, r.separate) << r.json;
    EXPECT_EQ(s.rollout_gpus, r.gpus) << r.json;
    EXPECT_EQ(s.rollout_tp, r.tp) << r.json;
    EXPECT_DOUBLE_EQ(s.rollout_mem_fraction, r.mem) << r.json;
    EXPECT_EQ(s.kl_reference, r.kl) << r.json;
    EXPECT_FALSE(s.async_rollout) << r.json;  // GRPOTrainer waits for its completions
  }
}

// GRPOConfig steps_per_generation / generation_batch_size: a generation batch of k optimizer
// steps was listed as ignored and costed as one update's generation; now k updates per RL step.
TEST(TrlArgsJson, GenerationBatchSpansUpdates) {
  const std::string base =
      R"("num_generations": 8, "per_device_train_batch_size": 8, "gradient_accumulation_steps": 2)";
  struct Row {
    std::string extra;
    int gbs, rl_minibatch;
  };
  for (const Row& r : std::vector<Row>{{"", 16, 0},
                                       {R"(, "steps_per_generation": 8)", 64, 16},
                                       {R"(, "generation_batch_size": 512)", 64, 16},
                                       {R"(, "steps_per_generation": 3)", 16, 0},
                                       {R"(, "generation_batch_size": 64)", 16, 0}}) {
    auto c = ParseTrlArgsJson("{" + base + r.extra + "}", "t");
    ASSERT_TRUE(c.ok()) << r.extra << c.status().message();
    Strategy s = Apply(c.value(), {{"world_size", "8"}});
    ASSERT_TRUE(ResolveFrameworkBatch(c.value(), s, false).ok()) << r.extra;
    EXPECT_EQ(s.gbs, r.gbs) << r.extra;  // 8 x 2 x 8 = 128 completions an update, 16 prompts
    EXPECT_EQ(s.rl_minibatch, r.rl_minibatch) << r.extra;  // 0: one update (gbs)
  }
  auto odd = ParseTrlArgsJson("{" + base + R"(, "generation_batch_size": 100})", "t");
  ASSERT_TRUE(odd.ok());
  Strategy o = Apply(odd.value(), {{"world_size", "8"}});
  EXPECT_EQ(ResolveFrameworkBatch(odd.value(), o, false).field(), "generation_batch_size");
}

// A DPOConfig may give max_completion_length (the completion's cap) beside max_length: it was
// read as GRPO and then refused max_length as an unknown key. KTOConfig's weights name KTO.
TEST(TrlArgsJson, PreferenceFilesWithACompletionCap) {
  auto d = ParseTrlArgsJson(R"({"max_length": 1024, "max_prompt_length": 512,
      "max_completion_length": 512, "beta": 0.1, "per_device_train_batch_size": 2})",
                            "t");
  ASSERT_TRUE(d.ok()) << d.status().message();
  Strategy s = Apply(d.value());
  EXPECT_EQ(s.stage, TrainStage::kDpo);
  EXPECT_EQ(s.seq, 1024);
  auto g = ParseTrlArgsJson(R"({"max_prompt_length": 256, "max_completion_length": 768})", "t");
  ASSERT_TRUE(g.ok()) << g.status().message();
  EXPECT_EQ(Apply(g.value()).stage, TrainStage::kGrpo);  // GRPOConfig has no max_length
  auto kto = ParseTrlArgsJson(
      R"({"desirable_weight": 1.0, "undesirable_weight": 1.33, "max_length": 512})", "t");
  ASSERT_TRUE(kto.ok()) << kto.status().message();
  EXPECT_EQ(Apply(kto.value()).stage, TrainStage::kKto);
  EXPECT_EQ(Apply(kto.value()).seq, 512);
  auto apo = ParseTrlArgsJson(R"({"loss_type": "apo_zero_unpaired"})", "t");
  ASSERT_TRUE(apo.ok()) << apo.status().message();
  EXPECT_EQ(Apply(apo.value()).stage, TrainStage::kKto);
  EXPECT_TRUE(Fields(apo->assumed).count("loss_type"));
}

// SFTConfig max_length None (null: no truncation) was dropped as absent and read as TRL's 1024.
TEST(TrlArgsJson, MaxLengthNullIsNoTruncation) {
  auto c = ParseTrlArgsJson(R"({"max_length": null, "packing": true})", "t");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->settings.count("seq_len"), 0u);  // trainsim's default or --seq, assumed there
  EXPECT_EQ(Fields(c->assumed)["max_length"], "null");
  EXPECT_TRUE(Apply(c.value()).packing);
}

// `trl grpo|sft --config FILE` and open-r1's recipes are YAML (TrlParser): they were refused as
// malformed JSON. The open-r1 demos: GRPO on a vLLM GPU of its own (vllm_device, beta 0.04 in
// those releases), SFT with the older use_liger (the loss without whole logits).
TEST(TrlArgsYaml, OpenR1Recipes) {
  auto g = ParseTrlArgsJson(Data("trl/open_r1_grpo_demo.yaml"), "open_r1_grpo_demo.yaml");
  ASSERT_TRUE(g.ok()) << g.status().message();
  Strategy s = Apply(g.value(), {{"world_size", "7"}});
  EXPECT_EQ(s.stage, TrainStage::kGrpo);
  EXPECT_EQ(s.group_size, 7);
  EXPECT_EQ(s.seq, 512 + 1024);
  EXPECT_TRUE(s.rollout_separate);
  EXPECT_EQ(s.rollout_gpus, 1);
  EXPECT_DOUBLE_EQ(s.rollout_mem_fraction, 0.7);
  EXPECT_EQ(s.kl_reference, 1);
  EXPECT_EQ(s.recompute, Recompute::kFull);
  ASSERT_TRUE(ResolveFrameworkBatch(g.value(), s, false).ok());
  EXPECT_EQ(s.gbs, 16 * 16 * 7 / 7);  // completions per step / num_generations
  EXPECT_EQ(Fields(g->ignored).count("num_processes"), 1u);
  auto f = ParseTrlArgsJson(Data("trl/open_r1_sft_demo.yaml"), "open_r1_sft_demo.yaml");
  ASSERT_TRUE(f.ok()) << f.status().message();
  Strategy t = Apply(f.value(), {{"world_size", "8"}});
  EXPECT_EQ(t.stage, TrainStage::kSft);
  EXPECT_EQ(t.seq, 32768);
  EXPECT_TRUE(t.packing);
  EXPECT_TRUE(t.fused_cross_entropy);  // use_liger
  EXPECT_EQ(t.gbs, 2 * 1 * 8);
  auto bad = ParseTrlArgsJson("per_device_train_batch_size: [1, 2\n", "t.yaml");
  EXPECT_FALSE(bad.ok());
}

// `accelerate launch --config_file A train.py FILE`, the way TRL and LLaMA-Factory run on several
// GPUs, was refused ("give one of"). The launcher gives the processes and its FSDP / DeepSpeed
// plugin; the training file's precision, batch and checkpointing win; a 16-bit load under
// DeepSpeed keeps fp32 master partitions.
TEST(TrainerArgs, UnderAccelerateLaunch) {
  auto ds3 = ParseAccelerateConfig(Data("accelerate/deepspeed_zero3.yaml"), "ds3.yaml");
  ASSERT_TRUE(ds3.ok()) << ds3.status().message();
  auto sft = ParseTrlArgsJson(Data("trl/open_r1_sft_demo.yaml"), "sft.yaml");
  ASSERT_TRUE(sft.ok()) << sft.status().message();
  FrameworkConfig c = sft.value();
  MergeAccelerateUnderTrainer(ds3.value(), c);
  Strategy s = Apply(c);
  EXPECT_EQ(s.world_size, 8);
  EXPECT_EQ(s.zero, 3);
  EXPECT_TRUE(s.offload_optimizer);
  EXPECT_EQ(s.micro_batch_num, 1);  // the Trainer's gradient_accumulation_steps, not the plugin's
  EXPECT_EQ(s.mbs, 2);
  EXPECT_TRUE(s.master_weights);  // torch_dtype bfloat16 under DeepSpeed: fp32 partitions
  EXPECT_EQ(s.recompute, Recompute::kFull);
  // A LLaMA-Factory file without bf16 / fp16 takes the launcher's mixed_precision; its own
  // deepspeed wins over the launcher's plugin.
  auto lf = ParseLlamaFactoryYaml("stage: sft\nfinetuning_type: lora\n", "t.yaml");
  ASSERT_TRUE(lf.ok());
  FrameworkConfig l = lf.value();
  MergeAccelerateUnderTrainer(ds3.value(), l);
  EXPECT_EQ(Apply(l).dtype, DType::kBf16);
  EXPECT_EQ(Fields(l.assumed).count("bf16"), 0u);
  auto own = ParseLlamaFactoryYaml("bf16: true\ndeepspeed:\n  zero_optimization:\n    stage: 2\n",
                                   "t.yaml");
  ASSERT_TRUE(own.ok()) << own.status().message();
  FrameworkConfig o = own.value();
  MergeAccelerateUnderTrainer(ds3.value(), o);
  EXPECT_EQ(Apply(o).zero, 2);
  EXPECT_EQ(Apply(o).world_size, 8);
}

TEST(TrlArgsJson, DeepSpeedObjectIsRead) {
  auto c =
      ParseTrlArgsJson(R"({"deepspeed": {"zero_optimization": {"stage": 2}}, "bf16": true})", "t");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(Apply(c.value(), {{"world_size", "8"}}).zero, 2);
}

// TrainingArguments torch_compile_mode / torch_compile_backend were refused as unknown keys;
// the CUDA-graph modes cost no host launch per kernel (as Accelerate's dynamo_config). The eager
// Trainer was costed at Megatron-LM's 30 us per kernel: now the measured eager rate (81 us), and
// 70 us compiled without graphs.
TEST(TrlArgsJson, TorchCompileModes) {
  struct Row {
    const char* json;
    const char* host_us;
    const char* listed;  // the key listed as ignored (Inductor's fusion), or ""
  };
  for (const Row& r :
       {Row{R"({"torch_compile": true, "torch_compile_mode": "reduce-overhead"})", "0", ""},
        Row{R"({"torch_compile_mode": "max-autotune"})", "0", ""},
        Row{R"({"torch_compile_backend": "cudagraphs"})", "0", ""},
        Row{R"({"torch_compile_mode": "max-autotune-no-cudagraphs"})", "70", "torch_compile_mode"},
        Row{R"({"torch_compile": true})", "70", "torch_compile"},
        Row{R"({"torch_compile": false})", "81", ""}, Row{R"({})", "81", ""}}) {
    auto c = ParseTrlArgsJson(r.json, "t");
    ASSERT_TRUE(c.ok()) << r.json << ": " << c.status().message();
    EXPECT_EQ(c->settings.at("host_issue_us_per_kernel"), r.host_us) << r.json;
    for (const char* key : {"torch_compile", "torch_compile_mode"})
      EXPECT_EQ(Fields(c->ignored).count(key), std::string(r.listed) == key ? 1u : 0u)
          << r.json << " " << key;
  }
}

// fsdp_config's activation_checkpointing (with or without the fsdp_ prefix) checkpoints every
// layer; it was listed as ignored and costed without recompute. LLaMA-Factory takes
// fsdp_config and deepspeed as YAML mappings (they were refused).
TEST(TrainerArgs, FsdpConfigAndMappings) {
  auto t = ParseTrlArgsJson(
      R"({"fsdp": "full_shard", "fsdp_config": {"fsdp_activation_checkpointing": true,
          "backward_prefetch": "backward_pre"}})",
      "t");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(Apply(t.value(), {{"world_size", "8"}}).recompute, Recompute::kFull);
  EXPECT_EQ(Fields(t->ignored).at("fsdp_config"), "backward_prefetch");
  auto lf = ParseLlamaFactoryYaml(
      "stage: sft\nfinetuning_type: full\ndisable_gradient_checkpointing: true\n"
      "fsdp: full_shard auto_wrap\nfsdp_config:\n  activation_checkpointing: true\n",
      "lf.yaml", 32);
  ASSERT_TRUE(lf.ok()) << lf.status().message();
  const Strategy s = Apply(lf.value(), {{"world_size", "8"}});
  EXPECT_EQ(s.recompute, Recompute::kFull);
  EXPECT_EQ(s.zero, 3);
  auto ds = ParseLlamaFactoryYaml(
      "stage: sft\nfinetuning_type: full\ndeepspeed:\n  zero_optimization:\n    stage: 2\n",
      "lf.yaml", 32);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  EXPECT_EQ(Apply(ds.value(), {{"world_size", "8"}}).zero, 2);
  EXPECT_TRUE(ds->deepspeed_file.empty());
}

// TRL ModelConfig keys (the `trl sft --config` files) were refused as unknown keys: use_peft and
// its LoRA keys with TRL's defaults, load_in_4bit as QLoRA, attn_implementation.
TEST(TrlArgsJson, ModelConfigKeys) {
  auto c = ParseTrlArgsJson(
      R"({"model_name_or_path": "Qwen/Qwen2-0.5B", "use_peft": true, "lora_r": 32,
          "lora_target_modules": ["q_proj", "k_proj", "v_proj"], "attn_implementation": "eager",
          "dtype": "bfloat16"})",
      "t");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->model_path, "Qwen/Qwen2-0.5B");
  EXPECT_EQ(c->settings.at("method"), "lora");
  EXPECT_EQ(c->settings.at("lora_rank"), "32");
  EXPECT_EQ(c->settings.at("lora_alpha"), "32");      // TRL's default, not 2 x r
  EXPECT_EQ(c->settings.at("lora_dropout"), "0.05");  // TRL's ModelConfig default, listed
  EXPECT_EQ(Fields(c->assumed).at("lora_dropout"), "0.05");
  EXPECT_EQ(c->settings.at("lora_targets"), "q_proj,k_proj,v_proj");
  EXPECT_FALSE(Apply(c.value()).flash_attention);
  EXPECT_FALSE(Apply(c.value()).master_weights);  // a bf16 load: see LoadDtypeDecidesPrecision
  auto q = ParseTrlArgsJson(R"({"use_peft": true, "load_in_4bit": true})", "t");
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->settings.at("method"), "qlora");
  EXPECT_EQ(q->settings.at("lora_rank"), "16");
  EXPECT_EQ(Fields(q->assumed).at("lora_target_modules"), "q_proj,v_proj");
  auto off = ParseTrlArgsJson(R"({"lora_r": 8})", "t");  // use_peft false: full fine-tuning
  ASSERT_TRUE(off.ok()) << off.status().message();
  EXPECT_EQ(off->settings.count("method"), 0u);
  EXPECT_EQ(Fields(off->ignored).count("lora_r"), 1u);
  auto eight = ParseTrlArgsJson(R"({"use_peft": true, "load_in_8bit": true})", "t");
  EXPECT_EQ(eight.status().field(), "load_in_8bit");
}

// loss_type belongs to SFTConfig and GRPOConfig too: an SFT file with loss_type chunked_nll
// (SFTConfig's own default) was read as DPO, with a reference model.
TEST(TrlArgsJson, LossTypeOfEachTrainer) {
  const std::pair<const char*, const char*> rows[] = {
      {R"({"loss_type": "chunked_nll"})", "sft"}, {R"({"loss_type": "nll"})", "sft"},
      {R"({"loss_type": "dft"})", "sft"},         {R"({"loss_type": "dr_grpo"})", "grpo"},
      {R"({"loss_type": "dapo"})", "grpo"},       {R"({"loss_type": "sigmoid"})", "dpo"},
      {R"({"loss_type": "ipo"})", "ipo"},         {R"({"loss_type": "hinge"})", "dpo"},
  };
  for (const auto& [json, stage] : rows) {
    auto c = ParseTrlArgsJson(json, "t");
    ASSERT_TRUE(c.ok()) << json << ": " << c.status().message();
    EXPECT_EQ(c->settings.at("stage"), stage) << json;
  }
  auto chunked = ParseTrlArgsJson(R"({"loss_type": "chunked_nll"})", "t");
  EXPECT_TRUE(Apply(chunked.value()).fused_cross_entropy);  // logits never held whole
  EXPECT_FALSE(Apply(ParseTrlArgsJson(R"({"loss_type": "nll"})", "t").value()).fused_cross_entropy);
  auto off = ParseTrlArgsJson(R"({"activation_offloading": true})", "t");
  EXPECT_EQ(off.status().field(), "activation_offloading");
  EXPECT_TRUE(ParseTrlArgsJson(R"({"activation_offloading": false})", "t").ok());
}

// TRL's configs override two TrainingArguments defaults (trl/trainer/base_config.py):
// gradient_checkpointing true and bf16 = not fp16. A file without them was read with HF's
// defaults (fp32, no recompute): 2-4x the step time and no recompute.
TEST(TrlArgsJson, TrlDefaultsBf16AndCheckpointing) {
  struct Row {
    const char* json;
    DType dtype;
    Recompute recompute;
  };
  const Row rows[] = {
      {"{}", DType::kBf16, Recompute::kFull},
      {R"({"fp16": true})", DType::kFp16, Recompute::kFull},
      {R"({"bf16": false})", DType::kFp32, Recompute::kFull},
      // tf32 puts fp32 matmuls on the TF32 tensor cores; under bf16 autocast it changes nothing.
      {R"({"bf16": false, "tf32": true})", DType::kTf32, Recompute::kFull},
      {R"({"tf32": true})", DType::kBf16, Recompute::kFull},
      {R"({"gradient_checkpointing": false})", DType::kBf16, Recompute::kNone},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.json);
    auto c = ParseTrlArgsJson(r.json, "t");
    ASSERT_TRUE(c.ok()) << c.status().message();
    const Strategy s = Apply(c.value());
    EXPECT_EQ(s.dtype, r.dtype);
    EXPECT_EQ(s.recompute, r.recompute);
    EXPECT_TRUE(s.master_weights);
  }
  auto c = ParseTrlArgsJson("{}", "t");
  const auto a = Fields(c->assumed);
  EXPECT_EQ(a.at("bf16"), "true");
  EXPECT_EQ(a.at("gradient_checkpointing"), "true");
}

// DeepSpeed ZeRO reduces and keeps the gradients in the training dtype unless
// communication_data_type (or ZeRO-1's bf16 grad_accum_dtype fp32) says fp32 (engine.py
// communication_data_type); they were costed as fp32 main gradients, a 2x DP reduce. "auto"
// precision takes the trainer's.
TEST(DeepSpeedConfig, GradientDtypeFollowsTheEngine) {
  struct Row {
    const char* json;
    bool fp32_grads;
  };
  const Row rows[] = {
      {R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 2}})", false},
      {R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 3}})", false},
      {R"({"fp16": {"enabled": true}, "zero_optimization": {"stage": 1}})", false},
      {R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 0}})", true},
      {R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 2},
           "communication_data_type": "fp32"})",
       true},
      {R"({"bf16": {"enabled": true}, "zero_optimization": {"stage": 1},
           "data_types": {"grad_accum_dtype": "fp32"}})",
       true},
      {R"({"bf16": {"enabled": false}, "fp16": {"enabled": false},
           "zero_optimization": {"stage": 2}})",
       true},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.json);
    auto c = ParseDeepSpeedConfig(r.json, "ds.json");
    ASSERT_TRUE(c.ok()) << c.status().message();
    EXPECT_EQ(Apply(c.value(), {{"world_size", "8"}}).main_grad_fp32, r.fp32_grads);
    EXPECT_TRUE(c->ignored.empty());
  }
  // "auto" precision inside a TRL file: the trainer's bf16 decides.
  auto trl = ParseTrlArgsJson(
      R"({"bf16": true, "deepspeed": {"bf16": {"enabled": "auto"}, "zero_optimization": {"stage": 2}}})",
      "t");
  ASSERT_TRUE(trl.ok()) << trl.status().message();
  EXPECT_FALSE(Apply(trl.value(), {{"world_size", "8"}}).main_grad_fp32);
}

// The load dtype (ModelConfig dtype / torch_dtype / model_init_kwargs) decides what trains:
// weights loaded in 16 bits train in place (no fp32 master, 16-bit gradients and AdamW
// states) whatever bf16 / fp16 say; float32 (TRL's default) with bf16 is AMP. The dtype was
// listed as ignored and every file read as AMP: 18 B of model state per parameter instead of 8.
TEST(TrlArgsJson, LoadDtypeDecidesPrecision) {
  struct Row {
    const char* json;
    DType dtype;
    bool master;
    double state_bytes;  // weights + gradients + optimizer, per parameter (DDP, no sharding)
  };
  const Row rows[] = {
      {R"({"bf16": true})", DType::kBf16, true, 18},
      {R"({"bf16": true, "dtype": "float32"})", DType::kBf16, true, 18},
      {R"({"bf16": true, "dtype": "bfloat16"})", DType::kBf16, false, 8},
      {R"({"dtype": "bfloat16"})", DType::kBf16, false, 8},
      {R"({"bf16": true, "torch_dtype": "bfloat16"})", DType::kBf16, false, 8},
      {R"({"bf16": true, "model_init_kwargs": {"dtype": "bfloat16"}})", DType::kBf16, false, 8},
      {R"({"model_init_kwargs": "{\"torch_dtype\": \"bfloat16\"}"})", DType::kBf16, false, 8},
      {R"({"bf16": true, "dtype": "auto"})", DType::kBf16, false, 8},
      {R"({"dtype": "float16"})", DType::kBf16, false, 8},  // TRL's bf16 autocast
      {R"({"dtype": "float16", "bf16": false})", DType::kFp16, false, 8},
      {R"({"fp16": true, "dtype": "bfloat16"})", DType::kFp16, false, 8},
      // Accelerate upcasts a 16-bit model under FSDP with mixed precision, DeepSpeed keeps fp32
      // partitions: AMP again (ZeRO-3 / FSDP shard the 18 B over the 8 ranks; + 0.125 B for
      // the two gathered layers of 32).
      {R"({"bf16": true, "dtype": "bfloat16", "fsdp": "full_shard"})", DType::kBf16, true, 2.375},
      {R"({"dtype": "bfloat16", "bf16": false, "fsdp": "full_shard"})", DType::kBf16, false, 1.125},
      {R"({"bf16": true, "dtype": "bfloat16", "deepspeed": {"zero_optimization": {"stage": 3},
          "bf16": {"enabled": true}}})",
       DType::kBf16, true, 2.125},  // ZeRO keeps bf16 gradients: 16 B / 8
      {R"({"fp16": true, "dtype": "float16", "fsdp": "full_shard"})", DType::kFp16, true, 2.375},
  };
  auto m = LoadModel("llama3-8b");
  auto hw = LoadHardware("h100_sxm_80gb");
  ASSERT_TRUE(m.ok() && hw.ok());
  for (const Row& row : rows) {
    SCOPED_TRACE(row.json);
    auto c = ParseTrlArgsJson(row.json, "t");
    ASSERT_TRUE(c.ok()) << c.status().message();
    Strategy s = Apply(c.value(), {{"world_size", "8"}});
    EXPECT_EQ(s.dtype, row.dtype);
    EXPECT_EQ(s.master_weights, row.master);
    auto r = Simulate(m.value(), hw.value(), s);
    ASSERT_TRUE(r.ok()) << r.status().message();
    const StageReport& st = r->stages.at(0);
    EXPECT_NEAR((st.weight_bytes + st.grad_bytes + st.optimizer_bytes) / st.params, row.state_bytes,
                0.01);
  }
  auto a = ParseTrlArgsJson(R"({"bf16": true, "dtype": "auto"})", "t");
  EXPECT_EQ(Fields(a->assumed).at("dtype"), "bfloat16");  // the last note names the reading
  // LoRA over an fp32 load: the frozen fp32 base is noted (costed at 2 B).
  auto lora = ParseTrlArgsJson(R"({"bf16": true, "use_peft": true})", "t");
  ASSERT_TRUE(lora.ok()) << lora.status().message();
  EXPECT_EQ(Fields(lora->assumed).count("dtype"), 1u);
}

// pure_bf16 under DeepSpeed ZeRO-1/2 was read as pure bf16, but DeepSpeed's bf16 optimizer keeps
// fp32 master partitions (ZeRO-3 is refused, parse_errors.jsonl); without DeepSpeed it stays pure.
TEST(LlamaFactoryYaml, PureBf16UnderDeepSpeedKeepsMasterWeights) {
  const std::string base = "stage: sft\nfinetuning_type: full\npure_bf16: true\n";
  auto plain = ParseLlamaFactoryYaml(base, "lf.yaml", 32);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_FALSE(Apply(plain.value()).master_weights);
  auto ds = ParseLlamaFactoryYaml(base + "deepspeed:\n  zero_optimization:\n    stage: 2\n",
                                  "lf.yaml", 32);
  ASSERT_TRUE(ds.ok()) << ds.status().message();
  EXPECT_TRUE(Apply(ds.value()).master_weights);
  EXPECT_EQ(Fields(ds->assumed).count("pure_bf16"), 1u);
}

// LoRA from a LLaMA-Factory file simulates, and holds less than full fine-tuning.
TEST(LlamaFactoryYaml, LoraNeedsLessMemoryThanFull) {
  auto m = LoadModel("llama3-8b");
  auto hw = LoadHardware("h100_sxm_80gb");
  ASSERT_TRUE(m.ok() && hw.ok());
  Strategy lora = Apply(Lf("llama3_lora_sft.yaml"), {{"world_size", "8"}});
  Strategy full = lora;
  full.method = FtMethod::kFull;
  auto rl = Simulate(m.value(), hw.value(), lora);
  auto rf = Simulate(m.value(), hw.value(), full);
  ASSERT_TRUE(rl.ok() && rf.ok()) << rl.status().message() << rf.status().message();
  EXPECT_LT(rl->peak_mem_bytes, rf->peak_mem_bytes);
  EXPECT_LT(rl->step_time_s, rf->step_time_s);
}

}  // namespace
}  // namespace trainsim
