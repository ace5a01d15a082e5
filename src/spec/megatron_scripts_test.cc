// More published Megatron-LM launch scripts (src/spec/testdata/megatron_scripts/README.md), each
// read as bash would run it and its arguments with Megatron-LM's meaning; and the shell and
// argument constructs they needed, one regression test each.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "spec/megatron_script_test_util.h"
#include "spec/megatron_shell.h"
#include "trainsim/megatron.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using testing::IgnoredNames;
using testing::Loaded;
using testing::LoadScript;
using testing::LoadText;
using testing::ReadScript;

// PAI's MTP flag without its module count is refused by name, not given a guessed count.
TEST(MegatronScripts, PaiMtpNeedsItsCount) {
  const std::string shape =
      "python pretrain_gpt.py --num-layers 2 --hidden-size 64 --num-attention-heads 4 "
      "--vocab-size 128 --seq-length 64 --max-position-embeddings 64 --use-multi-token-prediction";
  Loaded l = LoadText(shape + "\n");
  auto m = ResolveMegatronModel(l.r, nullptr, l.s);
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().field(), "--num-mtp-predictor");
  Loaded two = LoadText(shape + " --num-mtp-predictor 2\n");
  auto m2 = ResolveMegatronModel(two.r, nullptr, two.s);
  ASSERT_TRUE(m2.ok()) << m2.status().message();
  EXPECT_EQ(m2->mtp_layers, 2);
}

// NVIDIA's Llama-3-8B FP8 current-scaling recipe for H200: comments inside array literals, FP8
// with the first and last layers in BF16 (listed: not modelled), --sequence-parallel at TP 1
// (Megatron-LM turns it off), bf16 gradient reduce and FP8 parameters.
TEST(MegatronScripts, Llama3_8bH200Fp8CurrentScaling1F1L) {
  Loaded l = LoadScript("train_llama3_8b_h200_fp8_cs_1F1L.sh");
  EXPECT_EQ(l.cmd.program, "pretrain_gpt.py");
  EXPECT_EQ(l.cmd.launcher_gpus, 8);
  const Strategy s = NormaliseStrategy(l.s);
  EXPECT_EQ(s.tp, 1);
  EXPECT_FALSE(s.sp);
  EXPECT_EQ(s.dtype, DType::kFp8);
  EXPECT_TRUE(s.fp8_param_gather);
  EXPECT_FALSE(s.main_grad_fp32);
  EXPECT_EQ(s.zero, 1);
  EXPECT_TRUE(s.overlap_grad_reduce && s.overlap_param_gather);
  EXPECT_TRUE(s.fused_cross_entropy);
  EXPECT_EQ(s.seq, 8192);
  EXPECT_EQ(s.gbs, 128);
  EXPECT_EQ(
      IgnoredNames(l.r),
      (std::vector<std::string>{"--empty-unused-memory-level", "--first-last-layers-bf16",
                                "--num-layers-at-start-in-bf16", "--num-layers-at-end-in-bf16"}));
  auto m = ResolveMegatronModel(l.r, nullptr, l.s);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->layers, 32);
  EXPECT_EQ(m->kv_heads, 8);
  EXPECT_EQ(m->ffn, 14336);
  EXPECT_FALSE(m->tied_embeddings);
  EXPECT_TRUE(m->layernorm);  // --apply-layernorm-1p without --normalization: LayerNorm
}

// BigScience's BLOOM-176B run (Megatron-DeepSpeed under Slurm): the node count is sbatch's
// (#SBATCH --nodes=48 sets SLURM_NNODES), the launcher runs inside `srun bash -c "..."`, and the
// padded vocabulary is --pad-vocab-size-to.
TEST(MegatronScripts, Bloom176bSlurm) {
  Loaded l = LoadScript("bigscience_tr11_176b_ml.slurm");
  EXPECT_EQ(l.cmd.program, "pretrain_gpt.py");
  EXPECT_EQ(l.cmd.launcher_gpus, 384);  // 48 nodes x 8
  EXPECT_EQ(l.s.tp, 4);
  EXPECT_EQ(l.s.pp, 12);
  EXPECT_EQ(l.s.mbs, 2);
  EXPECT_EQ(l.s.gbs, 2048);
  EXPECT_EQ(l.s.seq, 2048);
  EXPECT_EQ(l.s.dtype, DType::kBf16);
  EXPECT_EQ(l.s.recompute, Recompute::kFull);  // --checkpoint-activations
  EXPECT_EQ(l.s.zero, 0);  // DeepSpeed's own (BF16 optimizer) sharding is listed as ignored
  EXPECT_EQ(IgnoredNames(l.r),
            (std::vector<std::string>{"--pp-partition-method", "--deepspeed", "--deepspeed_config",
                                      "--zero-stage", "--deepspeed-activation-checkpointing"}));
  auto m = ResolveMegatronModel(l.r, nullptr, l.s);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->layers, 70);
  EXPECT_EQ(m->hidden, 14336);
  EXPECT_EQ(m->vocab, 250880);
  EXPECT_EQ(m->learned_pos_emb, 0);                             // ALiBi
  EXPECT_NEAR(CountParams(m.value()).total / 1e9, 176.2, 0.5);  // BLOOM: 176 247 271 424
}

// PAI-Megatron-Patch's DeepSeek-V3 script, 26 positional arguments; its comm_overlap_option is
// built but never put on the command line, so no overlap flag reaches Megatron.
TEST(MegatronScripts, PaiDeepSeekV3) {
  Loaded l = LoadScript("pai_run_mcore_deepseek_v3.sh",
                        "dlc A37B 1 256 1e-5 1e-6 4096 4096 fp8 4 8 1 8 true true false false "
                        "full 0.5 100 /d /d none 10000000000 100000000 /out");
  EXPECT_EQ(l.cmd.program, "pretrain_deepseek.py");
  EXPECT_EQ(l.cmd.launcher_gpus, 0);  // dlc: NNODES=${WORLD_SIZE}, from the job's environment
  EXPECT_EQ(l.s.tp, 4);
  EXPECT_EQ(l.s.pp, 8);
  EXPECT_EQ(l.s.cp, 1);
  EXPECT_EQ(l.s.ep, 8);
  EXPECT_EQ(l.s.etp, 1);
  EXPECT_TRUE(l.s.sp);
  EXPECT_EQ(l.s.mbs, 1);
  EXPECT_EQ(l.s.gbs, 256);
  EXPECT_EQ(l.s.seq, 4096);
  EXPECT_EQ(l.s.dtype, DType::kFp8);
  EXPECT_EQ(l.s.zero, 1);
  EXPECT_EQ(l.s.recompute, Recompute::kFull);
  EXPECT_TRUE(l.s.offload_optimizer);
  EXPECT_DOUBLE_EQ(l.s.optimizer_offload_fraction, 0.5);
  EXPECT_FALSE(l.s.tp_comm_overlap);
  EXPECT_FALSE(l.s.overlap_grad_reduce);
  EXPECT_EQ(IgnoredNames(l.r),
            (std::vector<std::string>{"--max-padding-length", "--extra-vocab-size",
                                      "--no-rope-fusion", "--no-masked-softmax-fusion"}));
  auto shape = l.r.shape;
  shape["--vocab-size"] = "129280";
  auto m = ModelFromMegatronShape(shape);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->mla.q_lora_rank, 1536);
  EXPECT_EQ(m->mla.qk_nope_head_dim, 128);  // --qk-nope-head-dim
  EXPECT_EQ(m->mla.qk_rope_head_dim, 64);   // --qk-rope-head-dim
  EXPECT_EQ(m->mtp_layers, 1);              // --use-multi-token-prediction --num-mtp-predictor 1
  EXPECT_EQ(m->moe.num_experts, 256);
  EXPECT_EQ(m->moe.first_k_dense, 3);
  auto v3 = LoadModel("deepseek-v3");
  ASSERT_TRUE(v3.ok());
  EXPECT_TRUE(ResolveMegatronModel(l.r, &v3.value(), l.s).ok());
}

// PAI-Megatron-Patch's Qwen3 script, the MoE A3B size: 27 positional arguments; AC=sel adds
// --recompute-activations after the script's own --recompute-modules moe (selective, moe);
// FP8 with the blockwise recipe; TE CUDA graphs of attention.
TEST(MegatronScripts, PaiQwen3MoeA3b) {
  Loaded l = LoadScript("pai_run_mcore_qwen3.sh",
                        "dsw A3B 1 64 1e-5 1e-6 4096 4096 fp8 2 1 1 1 8 true true false false sel "
                        "false 100 /d /d none 10000000000 100000000 /out");
  EXPECT_EQ(l.cmd.program, "pretrain_qwen.py");
  EXPECT_EQ(l.cmd.launcher_gpus, 0);  // dsw: GPUS_PER_NODE from python -c
  EXPECT_EQ(l.s.tp, 2);
  EXPECT_EQ(l.s.etp, 1);
  EXPECT_EQ(l.s.ep, 8);
  EXPECT_TRUE(l.s.sp);
  EXPECT_EQ(l.s.gbs, 64);
  EXPECT_EQ(l.s.dtype, DType::kFp8);
  EXPECT_EQ(l.s.zero, 1);
  EXPECT_EQ(l.s.recompute, Recompute::kSelective);
  EXPECT_EQ(l.s.recompute_modules, kRecomputeMoe);
  EXPECT_EQ(l.s.attention_kernel, AttentionImpl::kFused);  // FL=false: --attention-backend fused
  EXPECT_DOUBLE_EQ(l.s.exec.host_issue_us_per_kernel, 0);  // --external-cuda-graph
  EXPECT_FALSE(l.s.overlap_grad_reduce);  // comm_overlap_option is not on the command line
  EXPECT_EQ(IgnoredNames(l.r),
            (std::vector<std::string>{"--max-padding-length", "--extra-vocab-size"}));
  auto shape = l.r.shape;
  shape["--vocab-size"] = "151936";
  auto m = ModelFromMegatronShape(shape);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->moe.num_experts, 128);
  EXPECT_EQ(m->moe.expert_ffn, 768);
  EXPECT_EQ(m->kv_heads, 4);
  EXPECT_EQ(m->head_dim, 128);
  auto preset = LoadModel("qwen3-30b-a3b");
  ASSERT_TRUE(preset.ok());
  EXPECT_TRUE(ResolveMegatronModel(l.r, &preset.value(), l.s).ok());
}

// ROCm's Mixtral script: defaults from ${VAR:-...}, "[$X = true]" (bash: command "[0" not
// found, the branch not taken), and a "( ... )" subshell in the condition after the launch.
TEST(MegatronScripts, RocmMixtralMoe) {
  Loaded l = LoadScript("rocm_train_mixtral_moe.sh");
  EXPECT_EQ(l.cmd.launcher_gpus, 0);  // GPUS_PER_NODE from python3 -c
  EXPECT_EQ(l.s.tp, 8);
  EXPECT_EQ(l.s.ep, 8);
  EXPECT_EQ(l.s.etp, 1);
  EXPECT_TRUE(l.s.sp);
  EXPECT_EQ(l.s.mbs, 4);
  EXPECT_EQ(l.s.gbs, 64);
  EXPECT_EQ(l.s.seq, 4096);
  EXPECT_EQ(l.s.dtype, DType::kBf16);
  EXPECT_EQ(l.s.zero, 1);
  EXPECT_EQ(l.s.recompute, Recompute::kNone);
  EXPECT_TRUE(l.s.overlap_grad_reduce);
  EXPECT_EQ(l.s.attention_kernel, AttentionImpl::kFa2);
  EXPECT_EQ(IgnoredNames(l.r),
            (std::vector<std::string>{"--no-masked-softmax-fusion", "--moe-use-legacy-grouped-gemm",
                                      "--no-gradient-accumulation-fusion"}));
  auto preset = LoadModel("mixtral-8x7b");
  ASSERT_TRUE(preset.ok());
  EXPECT_TRUE(ResolveMegatronModel(l.r, &preset.value(), l.s).ok());
}

// ROCm's Llama-2 script: environment defaults, `if ! [ -d ... ]`, eval of a command string.
TEST(MegatronScripts, RocmLlama2_70b) {
  Loaded l = LoadScript("rocm_train_llama2.sh");
  EXPECT_EQ(l.s.tp, 8);
  EXPECT_EQ(l.s.pp, 1);
  EXPECT_EQ(l.s.mbs, 2);
  EXPECT_EQ(l.s.gbs, 8);
  EXPECT_EQ(l.s.seq, 4096);
  EXPECT_TRUE(l.s.sp);
  EXPECT_EQ(l.s.zero, 1);
  EXPECT_TRUE(l.s.overlap_param_gather);
  EXPECT_EQ(l.s.attention_kernel, AttentionImpl::kFa2);
  EXPECT_EQ(l.r.shape.at("--num-query-groups"), "8");
  auto preset = LoadModel("llama2-70b");
  ASSERT_TRUE(preset.ok());
  EXPECT_TRUE(ResolveMegatronModel(l.r, &preset.value(), l.s).ok());
  // Its KEY=VALUE arguments are read by a for loop, which is not run: refused, naming the line,
  // rather than read as the defaults.
  auto with_args = ParseMegatronScript(ReadScript("rocm_train_llama2.sh"), {"TP=4"});
  ASSERT_FALSE(with_args.ok());
  EXPECT_NE(with_args.status().message().find("line 25"), std::string::npos)
      << with_args.status().message();
  auto implicit = ParseMegatronScript("for a; do X=1; done\npython pretrain_gpt.py\n", {"x"});
  EXPECT_FALSE(implicit.ok());
  EXPECT_TRUE(
      ParseMegatronScript("for a in 1 2; do X=1; done\npython pretrain_gpt.py\n", {"x"}).ok());
}

// NVIDIA's DeepSeek2-Lite recipe: quoted multi-word array elements split again when expanded
// unquoted, a here-string in an untaken branch, MLA + MoE from the script, and Megatron's
// vocabulary padding to a multiple of --make-vocab-size-divisible-by x tp (3200 x 8).
TEST(MegatronScripts, DeepSeek2LiteFromTheScript) {
  Loaded l = LoadScript("train_deepseek2_lite_h100_fp8.sh");
  EXPECT_EQ(l.cmd.launcher_gpus, 8);
  EXPECT_EQ(l.s.tp, 8);
  EXPECT_TRUE(l.s.sp);
  EXPECT_EQ(l.s.mbs, 1);
  EXPECT_EQ(l.s.gbs, 64);
  EXPECT_EQ(l.s.seq, 1024);
  EXPECT_EQ(l.s.dtype, DType::kBf16);  // DTYPE="bf16": the FP8 branch is not taken
  EXPECT_EQ(l.s.zero, 1);
  EXPECT_FALSE(l.s.main_grad_fp32);  // --grad-reduce-in-bf16
  auto m = ResolveMegatronModel(l.r, nullptr, l.s);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->layers, 16);
  EXPECT_EQ(m->vocab, 153600);
  EXPECT_EQ(m->mla.kv_lora_rank, 512);
  EXPECT_EQ(m->mla.q_lora_rank, 0);
  EXPECT_EQ(m->moe.num_experts, 64);
  EXPECT_EQ(m->moe.top_k, 6);
  EXPECT_EQ(m->moe.first_k_dense, 1);
  EXPECT_EQ(m->moe.shared_ffn, 2816);
  EXPECT_FALSE(m->tied_embeddings);
}

// epfLLM/Megatron-LLM's finetune.sh: a `while [[ $# -gt 0 ]]; case $1 ...; shift` argument loop,
// `(( $SIZE > 13 ))`, finetune.py, and underscore flag spellings (--tensor_model_parallel_size).
TEST(MegatronScripts, EpflMegatronLlmFinetune) {
  Loaded l = LoadScript("epfllm_finetune.sh",
                        "llama2 --size 7 --tp 4 --pp 2 --micro-batch 2 --global-batch 64 "
                        "--nodes 2");
  EXPECT_EQ(l.cmd.program, "finetune.py");
  EXPECT_EQ(l.cmd.launcher_gpus, 16);
  EXPECT_EQ(l.s.tp, 4);
  EXPECT_EQ(l.s.pp, 2);
  EXPECT_EQ(l.s.mbs, 2);
  EXPECT_EQ(l.s.gbs, 64);
  EXPECT_EQ(l.s.seq, 4096);  // llama2's default
  EXPECT_EQ(l.s.dtype, DType::kBf16);
  EXPECT_EQ(l.s.recompute, Recompute::kSelective);
  EXPECT_TRUE(l.s.sp);
  EXPECT_EQ(l.s.attention_kernel, AttentionImpl::kFa2);
  EXPECT_EQ(IgnoredNames(l.r),
            (std::vector<std::string>{"--no-bias-gelu-fusion", "--no-bias-dropout-fusion"}));
  EXPECT_EQ(l.r.shape.count("--use-rms-norm"), 1u);
  EXPECT_EQ(l.r.shape.at("--glu-activation"), "swiglu");
  auto preset = LoadModel("llama2-7b");
  ASSERT_TRUE(preset.ok());
  EXPECT_TRUE(ResolveMegatronModel(l.r, &preset.value(), l.s).ok());
  // The defaults when only the model is given: tp 8 on one node of 8.
  Loaded d = LoadScript("epfllm_finetune.sh", "llama2");
  EXPECT_EQ(d.s.tp, 8);
  EXPECT_EQ(d.cmd.launcher_gpus, 8);
  EXPECT_EQ(d.s.gbs, 12);
}

// NVIDIA's Mamba example trains a hybrid Mamba stack: refused by name, never costed as a
// transformer (with or without --model).
TEST(MegatronScripts, MambaHybridIsRefusedByName) {
  Loaded l = LoadScript("mamba_train.sh");
  EXPECT_EQ(l.cmd.program, "pretrain_mamba.py");
  EXPECT_EQ(l.s.tp, 1);
  EXPECT_EQ(l.s.gbs, 32);
  auto m = ResolveMegatronModel(l.r, nullptr, l.s);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find("--hybrid-attention-ratio"), std::string::npos);
  auto preset = LoadModel("llama3-8b");
  ASSERT_TRUE(preset.ok());
  EXPECT_FALSE(ResolveMegatronModel(l.r, &preset.value(), l.s).ok());
}

// Megatron-MoE-ModelZoo's best-practice files run `bash sbatch_benchmarking.sh` with variables:
// the command is in that script; the error says so.
TEST(MegatronScripts, ModelZooBestPracticeNamesTheScriptItRuns) {
  auto cmd = ParseMegatronScript(ReadScript("modelzoo_best_practice_deepseek_v3_run.sh"));
  ASSERT_FALSE(cmd.ok());
  EXPECT_NE(cmd.status().message().find("'bash sbatch_benchmarking.sh' (line 22)"),
            std::string::npos)
      << cmd.status().message();
}

// Swiss AI's Llama-3-8B job on Clariden: the GPU count is sbatch's (#SBATCH --nodes=16,
// --gpus-per-node=4 → $SLURM_NNODES, $SLURM_GPUS_PER_NODE), the command runs inside
// `srun ... bash -c "$CMD_PREFIX $TRAINING_CMD"` after another `srun bash -c 'echo ...'`, and
// `JOB_EXIT_CODE=$?` is 0.
TEST(MegatronScripts, SwissAiLlama3_8bOnSlurm) {
  Loaded l = LoadScript("swissai_submit_llama3_8b.sh");
  EXPECT_EQ(l.cmd.program, "pretrain_gpt.py");
  EXPECT_EQ(l.cmd.launcher_gpus, 64);
  EXPECT_EQ(l.s.tp, 1);
  EXPECT_EQ(l.s.pp, 1);
  EXPECT_EQ(l.s.mbs, 1);
  EXPECT_EQ(l.s.gbs, 128);
  EXPECT_EQ(l.s.seq, 8192);
  EXPECT_EQ(l.s.dtype, DType::kBf16);
  EXPECT_EQ(l.s.zero, 1);
  EXPECT_FALSE(l.s.main_grad_fp32);  // --main-grads-dtype bf16
  EXPECT_TRUE(l.s.fused_cross_entropy);
  EXPECT_TRUE(l.r.ignored.empty());
  auto preset = LoadModel("llama3.1-8b");
  ASSERT_TRUE(preset.ok());
  EXPECT_TRUE(ResolveMegatronModel(l.r, &preset.value(), l.s).ok());
}

// --- The constructs, one regression each. ---

TEST(MegatronScript, SbatchNodesSetSlurmNnodes) {
  const std::string launch =
      "torchrun --nproc_per_node 8 --nnodes $SLURM_NNODES pretrain_gpt.py --micro-batch-size 1\n";
  EXPECT_EQ(LoadText("#!/bin/bash\n#SBATCH --nodes=4  # four\n#SBATCH --gres=gpu:8\n" + launch)
                .cmd.launcher_gpus,
            32);
  EXPECT_EQ(LoadText("#SBATCH -N 2\n" + launch).cmd.launcher_gpus, 16);
  // After the first command sbatch reads no directive; a range leaves the count unknown.
  EXPECT_EQ(LoadText("echo hi\n#SBATCH --nodes=4\n" + launch).cmd.launcher_gpus, 0);
  EXPECT_EQ(LoadText("#SBATCH --nodes=2-4\n" + launch).cmd.launcher_gpus, 0);
  EXPECT_EQ(LoadText("#SBATCH --nodes=3\n#SBATCH --gpus-per-node=h100:4\n"
                     "torchrun --nproc-per-node $SLURM_GPUS_PER_NODE --nnodes $SLURM_NNODES "
                     "pretrain_gpt.py --micro-batch-size 1\n")
                .cmd.launcher_gpus,
            12);
  // The job's own assignment wins.
  EXPECT_EQ(LoadText("#SBATCH --nodes=4\nSLURM_NNODES=1\n" + launch).cmd.launcher_gpus, 8);
}

TEST(MegatronScript, SubshellsAndMissingSpaceAfterBracketInConditions) {
  Loaded l = LoadText(
      "E=0\n"
      "if [$E = true]; then T=2; else T=4; fi\n"  // bash: "[0: command not found", false
      "if [ a = b ] || ( [ a = a ] && [ \"\" = \"\" ] ); then P=2; else P=1; fi\n"
      "python pretrain_gpt.py --tensor-model-parallel-size $T --pipeline-model-parallel-size $P\n");
  EXPECT_EQ(l.s.tp, 4);
  EXPECT_EQ(l.s.pp, 2);
}

TEST(MegatronScript, ArithmeticCommandsAndHereStrings) {
  Loaded l = LoadText(
      "S=70\n"
      "if (( $S > 13 )); then T=8; else T=1; fi\n"
      "if [ 1 = 2 ] || (( S % 7 )); then P=4; elif ! (( 0 )); then P=2; fi\n"
      "grep -q a <<< \"a b\"\n"
      "python pretrain_gpt.py --tensor-model-parallel-size $T --pipeline-model-parallel-size $P\n");
  EXPECT_EQ(l.s.tp, 8);
  EXPECT_EQ(l.s.pp, 2);
}

TEST(MegatronScript, WhileLoopsWithShiftReadTheArguments) {
  const std::string text =
      "M=$1; shift\n"
      "TP=1; N=0\n"
      "while [[ $# -gt 0 ]]; do\n"
      "  case $1 in\n"
      "    --tp) TP=$2; shift 2;;\n"
      "    *) shift;;\n"
      "  esac\n"
      "done\n"
      "until [ $N -ge 3 ]; do N=$((N + 1)); done\n"
      "python pretrain_gpt.py --tensor-model-parallel-size $TP --micro-batch-size $N\n";
  Loaded l = LoadText(text, "llama --x --tp 4 --y");
  EXPECT_EQ(l.s.tp, 4);
  EXPECT_EQ(l.s.mbs, 3);
  // A loop that never ends is refused, naming its line.
  auto forever = ParseMegatronScript("while true; do A=1; done\npython pretrain_gpt.py\n");
  ASSERT_FALSE(forever.ok());
  EXPECT_NE(forever.status().message().find("line 1"), std::string::npos);
  // A loop over input (while read ...) is not run.
  EXPECT_TRUE(ParseMegatronScript("while read l; do T=9; done < f\npython pretrain_gpt.py\n").ok());
}

// "VAR=x cmd": the command's words expand before the assignment, which holds for that command
// only (it was kept for the rest of the script: TP=8 below then read as tp 8).
TEST(MegatronScript, PrefixAssignmentsHoldForTheirCommandOnly) {
  Loaded l = LoadText(
      "TP=2\n"
      "TP=8 PP=4 bash other.sh\n"
      "TP=8 python pretrain_gpt.py --tensor-model-parallel-size $TP "
      "--pipeline-model-parallel-size ${PP:-1}\n");
  EXPECT_EQ(l.s.tp, 2);
  EXPECT_EQ(l.s.pp, 1);
  // An eval / sh -c run by the command sees them.
  EXPECT_EQ(LoadText("T=4 sh -c 'python pretrain_gpt.py --tensor-model-parallel-size $T'\n").s.tp,
            4);
}

TEST(MegatronArgs, UnderscoreSpellingsOfForks) {
  MegatronReading r;
  Strategy s;
  ASSERT_TRUE(ReadMegatronArgs({"--tensor_model_parallel_size", "2", "--micro_batch_size=3",
                                "--deepspeed_config", "x.json"},
                               s, nullptr, r)
                  .ok());
  EXPECT_EQ(s.tp, 2);
  EXPECT_EQ(s.mbs, 3);
  // An unknown flag keeps its own spelling in the ignored list.
  EXPECT_EQ(IgnoredNames(r), std::vector<std::string>{"--deepspeed_config"});
}

TEST(MegatronArgs, VocabularyPaddedToDivisibleTimesTp) {
  MegatronReading r;
  Strategy s;
  ASSERT_TRUE(
      ReadMegatronArgs({"--num-layers", "2", "--hidden-size", "256", "--num-attention-heads", "4",
                        "--vocab-size", "50257", "--tensor-model-parallel-size", "2"},
                       s, nullptr, r)
          .ok());
  auto m = ResolveMegatronModel(r, nullptr, s);
  ASSERT_TRUE(m.ok()) << m.status().message();
  EXPECT_EQ(m->vocab, 50432);  // a multiple of 128 x 2
}

}  // namespace
}  // namespace trainsim
