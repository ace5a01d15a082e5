// Strategy: how one training step is laid over the GPUs (Megatron-LM / torchtitan semantics).
#pragma once

#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/execution.h"
#include "trainsim/finetune.h"
#include "trainsim/hardware.h"
#include "trainsim/status.h"

namespace trainsim {

struct ModelSpec;

enum class Recompute { kNone, kSelective, kFull };

std::string_view RecomputeName(Recompute r);  // "none", "selective", "full"
Result<Recompute> ParseRecompute(std::string_view s);

// Modules recomputed by Recompute::kSelective (Megatron-LM --recompute-modules names).
enum RecomputeModule : int {
  kRecomputeCoreAttn = 1,        // core_attn: attention scores/softmax (the default)
  kRecomputeLayerNorm = 2,       // layernorm: norm outputs feeding QKV / FC1
  kRecomputeMlaUpProj = 4,       // mla_up_proj: MLA q/kv up-projections (q, k, v not kept)
  kRecomputeMlp = 8,             // mlp: dense MLP (activation and FC2 input)
  kRecomputeMoeAct = 16,         // moe_act: expert activation function
  kRecomputeMoe = 32,            // moe: the whole routed-expert block
  kRecomputeSharedExperts = 64,  // shared_experts
  // op_sac: torchtitan's per-op selective checkpointing (selective_ac_option "op"): the outputs
  // of matmuls are saved except every second one, attention's output is saved, everything else
  // is recomputed. Not a Megatron-LM module; exclusive of the others.
  kRecomputeOpSac = 128
};
// Parses "core_attn,layernorm,..." into a RecomputeModule mask; the error names the module.
Result<int> ParseRecomputeModules(std::string_view list);
// The mask as "core_attn,layernorm,..." (RecomputeModule order); "" for 0.
std::string RecomputeModulesName(int mask);

// Modules whose saved inputs Megatron-Core's fine-grained activation offloading moves to host
// memory (--fine-grained-activation-offloading --offload-modules; Megatron-LM
// docs/source/api-guide/fine_grained_activation_offloading.md): each module offloads the tensors
// its forward saves for the backward.
enum OffloadModule : int {
  kOffloadAttnNorm = 1,    // attn_norm: the layer input saved by the attention norm
  kOffloadQkvLinear = 2,   // qkv_linear: the normed input of the QKV (or MLA down) projections
  kOffloadCoreAttn = 4,    // core_attn: q, k, v, output and softmax statistics of attention
  kOffloadAttnProj = 8,    // attn_proj: the input of the attention output projection
  kOffloadMlpNorm = 16,    // mlp_norm: the residual saved by the MLP norm
  kOffloadExpertFc1 = 32,  // expert_fc1: the dispatched tokens entering the experts
  kOffloadMoeAct = 64,     // moe_act: the expert FC1 output entering the activation
  kOffloadAll = 127
};
// Parses "core_attn,expert_fc1,..." into an OffloadModule mask; the error names the module.
Result<int> ParseOffloadModules(std::string_view list);
// The mask as "attn_norm,core_attn,..." (OffloadModule order); "" for 0.
std::string OffloadModulesName(int mask);

// kZeroBubbleH1: ZB-H1 of Qi et al. 2023 (backward split into B and W, 1F1B memory);
// kDualPipe: DeepSeek-V3's bidirectional schedule (two chunks per rank, two model copies).
// Both have closed forms in Simulate and are simulated event by event (trainsim/timeline.h).
enum class PipelineSchedule { k1F1B, kInterleaved, kGPipe, kZeroBubbleH1, kDualPipe };
// "1f1b", "interleaved_1f1b", "gpipe", "zb_h1", "dualpipe" (the strategy file's names).
std::string_view ScheduleName(PipelineSchedule s);
Result<PipelineSchedule> ParseSchedule(std::string_view s);

// How ranks are laid over the GPUs, innermost first (Megatron-Core `order`); the innermost groups
// get the scale-up domain (NVLink / NVL72).
// The flash-attention implementation (strategy `attention_kernel`; docs/MODEL.md, "Attention").
enum class AttentionImpl : uint8_t {
  kFused,  // TE / cuDNN fused attention (FlashAttention-3 class kernels on Hopper and Blackwell)
  kFa2,    // the flash-attn 2 package
  kFa1,    // FlashAttention 1 or the Triton flash kernels of 2022-23 stacks
};
std::string_view AttentionImplName(AttentionImpl a);  // "fused", "fa2", "fa1"
Result<AttentionImpl> ParseAttentionImpl(std::string_view s);

enum class RankOrder { kTpCpDpPp, kTpDpCpPp, kTpCpPpDp, kTpPpCpDp };
std::string_view RankOrderName(RankOrder o);  // "tp-cp-dp-pp", ...
Result<RankOrder> ParseRankOrder(std::string_view s);

// What is trained: the sequence and batch shape of one step. Independent of the layout, so one
// workload can be simulated under several layouts (Combine).
struct Workload {
  int seq = 4096;           // sequence length in tokens
  int mbs = 1;              // micro-batch size in sequences
  int gbs = 0;              // global batch in sequences; 0 = derive from micro_batch_num
  int micro_batch_num = 0;  // micro-batches per step per DP rank; 0 = derive from gbs
  // Fine-tuning and post-training (trainsim/finetune.h, docs/FINETUNE.md). For the paired
  // preference stages gbs and mbs count (chosen, rejected) pairs, as TRL and LLaMA-Factory do.
  TrainStage stage = TrainStage::kPretrain;
  FtMethod method = FtMethod::kFull;
  int lora_rank = 8;       // adapter rank r (PEFT LoraConfig default); VeRA's shared rank
  double lora_alpha = 16;  // LoRA scaling numerator (no effect on time or memory)
  int lora_targets = kLoraAllLinear;  // LoraTarget mask of the adapted linear modules
  // LoRA-family dropout on the adapter input (PEFT LoraConfig lora_dropout, default 0.0): above 0
  // every adapted module runs its own dropout kernel on its input, forward and backward, and
  // saves the dropped input and the mask for lora_A's weight gradient.
  double lora_dropout = 0;
  // method freeze: transformer layers frozen, counted from the first; -1 = all but the last 2
  // (LLaMA-Factory freeze_trainable_layers default 2).
  int freeze_layers = -1;
  bool train_embeddings = false;  // PEFT methods: embedding and output layer trained in full
  // Virtual tokens of prefix, prompt and p-tuning (PEFT num_virtual_tokens; 20 in its examples).
  int virtual_tokens = 20;
  // Samples are packed into rows of seq tokens (true) or each padded to seq (false); with
  // packing, mean_seq (> 0: mean tokens per sample) shrinks the rows a step computes.
  bool packing = true;
  int mean_seq = 0;  // 0 = every sample is seq tokens long
  // Batches padded to their longest sample: seq is what a step computes (the mean padded
  // length), max_seq (> seq) the longest sample, where the memory peak is taken; 0 = seq.
  int max_seq = 0;
  // Reference log-probs computed once before training (TRL precompute_ref_log_probs): no
  // reference forward per step.
  bool precompute_ref = false;
  // RL stages (ppo, grpo, dapo, rloo, remax; src/rl, docs/FINETUNE.md "RL"): gbs counts prompts,
  // each answered group_size times; seq is the longest sequence (prompt + response cap). Zero /
  // negative values are filled by the stage's default and listed in the report's `assumed`.
  int group_size = 0;        // responses per prompt; 0 = the stage's default
  int prompt_len = 0;        // mean prompt tokens; 0 = 256
  int response_len = 0;      // mean response tokens; 0 = from the cap
  int max_response_len = 0;  // response cap (max_tokens); 0 = seq - prompt_len
  int rl_minibatch = 0;      // prompts per optimizer update (ppo_mini_batch_size); 0 = gbs
  // Generation on its own GPUs (rollout_gpus besides world_size, weights sent over the network)
  // instead of time-sharing the training GPUs (colocated, weights resharded in place).
  bool rollout_separate = false;
  int rollout_gpus = 0;  // separate: generation GPUs; 0 = as many as train (world_size)
  int rollout_tp = 0;    // generation engine tensor parallel; 0 = the smallest that fits
  int rollout_pp = 1;    // generation engine pipeline parallel
  // Separate pools: generation of step k+1 runs while step k trains (one-step off-policy).
  bool async_rollout = true;
  // Separate async pools: steps the rollout may run ahead of training (NeMo RL
  // grpo.async_grpo.max_trajectory_age_steps). With 2 or more the engines stream: a step's
  // straggler decodes beside the next steps' prompts, so generation is bounded by throughput.
  int rollout_max_age = 1;
  double rollout_mem_fraction = 0;  // generation engine's HBM fraction; 0 = 0.6
  // The generation engine runs eager (vLLM enforce_eager: no CUDA graphs): every decode kernel
  // is issued from the host at exec.host_issue_us_per_kernel, a floor under each layer's time.
  bool rollout_eager = false;
  int kl_reference = -1;  // reference forward each step: -1 = the stage's (not dapo), 0, 1
  int reward_model = -1;  // learned reward-model forward: -1 = the stage's (ppo, rloo, remax)
  // The ratio's old-policy log-probs come from the generation engine (verl fully_async
  // use_rollout_log_probs) instead of a forward on the trainer: -1 = no (recomputed), 0, 1.
  int rollout_logprobs = -1;
};

// How the work is laid over the GPUs: parallel sizes, precision, memory policy, schedule.
struct Layout {
  int world_size = 8;
  int tp = 1;         // tensor parallel
  int pp = 1;         // pipeline parallel
  int vpp = 1;        // virtual pipeline chunks per stage (interleaving); 1 = none
  int cp = 1;         // context parallel
  int ep = 1;         // expert parallel
  int etp = 0;        // expert tensor parallel; 0 = same as tp
  bool sp = true;     // sequence parallel (meaningful when tp > 1)
  int zero = 1;       // ZeRO stage 0-3 over the DP group (1 = Megatron distributed optimizer)
  bool fsdp = false;  // FSDP / Megatron-FSDP (parameter sharding, implies zero 3)
  Recompute recompute = Recompute::kNone;
  int recompute_layers = -1;                   // with kFull: layers per stage recomputed; -1 = all
  int recompute_modules = kRecomputeCoreAttn;  // with kSelective: RecomputeModule mask
  DType dtype = DType::kBf16;  // training GEMM precision (kFp8, kMxfp8, kFp4 for low precision)
  bool main_grad_fp32 = true;  // fp32 gradient buffers (Megatron default for bf16)
  double grad_bytes_per_param() const { return main_grad_fp32 && master_weights ? 4.0 : 2.0; }
  // fp32 master weights and fp32 optimizer states (mixed precision); false: pure 16-bit
  // training whose optimizer states are in the parameter dtype (torchtune, Hugging Face models
  // loaded in bf16 without autocast).
  bool master_weights = true;
  bool offload_optimizer = false;  // optimizer states in host memory, Adam step on the CPU
  // With offload_optimizer: the share of the optimizer states (and of the update) on the host;
  // the rest stays in HBM and steps on the GPU (Megatron-LM --optimizer-offload-fraction,
  // default 1.0; DeepSpeed ZeRO-3 offload_optimizer.ratio).
  double optimizer_offload_fraction = 1.0;
  // The share of the optimizer states held in host memory (0 without offload).
  double host_optimizer_share() const { return offload_optimizer ? optimizer_offload_fraction : 0; }
  bool overlap_grad_reduce = true;   // DP gradient reduce overlapped with backward
  bool overlap_param_gather = true;  // ZeRO parameter all-gather overlapped with forward
  bool tp_comm_overlap = false;      // TP collectives overlapped with GEMMs (TE userbuffers)
  // Fraction of the EP all-to-all hidden behind other micro-batches' compute (Megatron-LM
  // --overlap-moe-expert-parallel-comm / shared-expert overlap); 0 = fully exposed.
  double ep_comm_overlap = 0;
  // MoE dispatch sends each token once per destination node and fans out over the scale-up
  // fabric (DeepEP, Megatron's "flex" dispatcher) instead of once per selected expert.
  bool moe_dedup_dispatch = false;
  // Megatron-Core MoE expert and router settings (schema rows moe_*; docs/MODEL.md, "MoE").
  // Grouped GEMM over the local experts (--moe-grouped-gemm: TEGroupedMLP); false: SequentialMLP,
  // one GEMM set (and host issue) per local expert, Megatron-LM's default without the switch
  // (ReadMegatronArgs); true here as the performance recipes run it.
  bool moe_grouped_gemm = true;
  // Fused permute/unpermute kernels (--moe-permute-fusion, TE moe_permute); false: the index
  // sort, gather and scatter-add of moe_utils.permute/unpermute in plain PyTorch (Megatron-LM's
  // default without the switch).
  bool moe_permute_fusion = true;
  // Router logits, scores and the combine's probability weighting in this many bytes per element
  // (--moe-router-dtype fp32: 4, fp64: 8); 0 = the parameter dtype (Megatron's None).
  int moe_router_bytes = 0;
  // --moe-expert-capacity-factor (0 = none: no token dropping) and
  // --moe-pad-expert-input-to-capacity (every expert's input padded to its capacity).
  double moe_capacity_factor = 0;
  bool moe_pad_to_capacity = false;
  // --moe-router-padding-for-fp8 / -quantization: each expert's rows padded to a multiple of 16
  // (32 for MXFP8) for the low-precision GEMM.
  bool moe_router_padding = false;
  bool flash_attention = true;
  AttentionImpl attention_kernel = AttentionImpl::kFused;
  bool cp_a2a = false;  // context parallel via all-to-all (Ulysses) instead of ring p2p
  bool fused_cross_entropy = false;  // TE fused cross-entropy: no fp32 logits copy
  PipelineSchedule schedule = PipelineSchedule::k1F1B;
  RankOrder order = RankOrder::kTpCpDpPp;  // Megatron-LM's default tp-cp-ep-dp-pp
  // Megatron-LM's --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-
  // split: layers not divisible by pp*vpp are balanced over the virtual chunks with the
  // embedding and the loss (and MTP modules) counted as one layer each. That is also the split
  // taken when this is false (PipelineChunkLayers); kept for the files and arguments that say it.
  bool uneven_pipeline = false;
  Execution exec;  // host issue rate and optimizer (trainsim/execution.h)
  // Transformer layers on the first / last pipeline stage (Megatron-LM
  // --decoder-first-pipeline-num-layers / --decoder-last-pipeline-num-layers); 0 = not given.
  // The other layers are spread evenly over the middle stages; with vpp > 1 every stage's
  // layers are spread evenly over its chunks.
  int first_stage_layers = 0;
  int last_stage_layers = 0;
  // Megatron-LM's --pipeline-model-parallel-layout, e.g. "Et|(tt|)*30mL" (trainsim/megatron.h,
  // ParsePipelineLayout): the decoder and MTP layers of every virtual chunk; "" = none. Its
  // stage count is pp*vpp (NormaliseStrategy derives vpp from it). Megatron-LM refuses it with
  // first / last stage layers and with uneven_pipeline, and so does ValidateStrategy.
  std::string pipeline_layout;
  // Megatron-LM memory settings (schema rows of the Megatron block).
  // Optimizer state bytes per trainable parameter: fp32 master weights, momentum and variance
  // (ZeRO paper's K = 12); Megatron-LM's --use-precision-aware-optimizer with 16-bit
  // --exp-avg-dtype / --exp-avg-sq-dtype / --main-params-dtype lowers it.
  double optimizer_state_bytes = 12;
  // FP8 runs keep the parameters in FP8 only (--fp8-param-gather): 1 B per parameter instead of a
  // 16-bit copy plus an FP8 cache.
  bool fp8_param_gather = false;
  // Distributed-optimizer instances (--num-distributed-optimizer-instances): optimizer states
  // (and ZeRO-2 gradients) are sharded within each of the N replicas of dp/N ranks (HSDP-like).
  int dist_opt_instances = 1;
  // DeepSpeed ZeRO++ (arXiv 2306.10209), with ZeRO stage 3. hpZ: a secondary copy of the 16-bit
  // weights sharded over groups of this many consecutive DP ranks (one node), so the backward
  // all-gather stays inside the group; 1 = off. qwZ: the forward all-gather in int8. qgZ: the
  // gradient reduce-scatter as an int4 all-to-all.
  int zero_hpz_size = 1;
  bool zero_quant_weights = false;
  bool zero_quant_grads = false;
};

// A workload under a layout. An aggregate: `Strategy{workload, layout}` combines the two, and
// `s.tp`, `s.seq` name the parts' fields directly.
struct Strategy : Workload, Layout {
  int dp() const { return world_size / (tp * pp * cp); }
  int expert_tp() const { return etp > 0 ? etp : tp; }
  int expert_dp() const { return world_size / (pp * ep * expert_tp()); }
  int num_micro_batches() const {
    return micro_batch_num > 0 ? micro_batch_num : gbs / (mbs * dp());
  }
  const Workload& workload() const { return *this; }
  const Layout& layout() const { return *this; }
};

inline Strategy Combine(const Workload& w, const Layout& l) {
  return Strategy{w, l};
}

// Applies the defaults and implied settings, so that equal meanings have equal values (the
// report echoes the normalised strategy, and a file read back gives the same one):
//   fsdp with zero < 2 -> zero 3;  etp 0 -> tp;  sp off when tp is 1;
//   vpp 1 with a pipeline_layout of pp*v stages -> vpp v (Megatron-LM's rule);
//   vpp > 1 with 1f1b -> interleaved_1f1b, interleaved with vpp 1 -> 1f1b;
//   full recompute of 0 layers -> none; recompute_layers -1 unless full; recompute_modules
//   core_attn unless selective;
//   gbs <-> micro_batch_num: the missing one is derived when dp is defined and divides.
// Simulate gives the same result for a strategy and its normalised form. No rule depends on the
// model; broken rules are left for ValidateStrategy to report.
Strategy NormaliseStrategy(Strategy s);

// Transformer layers of each virtual pipeline chunk, chunk index j*pp + stage (Megatron's
// interleaved order), as the frameworks split them:
//  * pipeline_layout given: its t per chunk;
//  * first_stage_layers / last_stage_layers given: as Megatron-LM splits them (the first / last
//    stage holds those, the middle stages the rest evenly, each stage's layers evenly over its
//    vpp chunks);
//  * else layers divisible by pp*vpp: evenly;
//  * else: the embedding, the loss and each MTP module count as one layer, and these slots are
//    balanced over the chunks (Megatron-LM --account-for-embedding-in-pipeline-split
//    --account-for-loss-in-pipeline-split; DeepSpeed's partition_method
//    type:transformer|embedding), whether uneven_pipeline is set or not.
// REQUIRES: ValidateStrategy(s, model) is ok for a model of `layers` layers and `mtp_layers`
// MTP modules.
std::vector<int> PipelineChunkLayers(const Strategy& s, int layers, int mtp_layers);
// The same summed per pipeline stage.
std::vector<int> PipelineStageLayers(const Strategy& s, int layers, int mtp_layers);
// The pipeline stage that runs the MTP modules: the layout's (Megatron-LM builds them, with an
// embedding and an output layer, on the rank whose last chunk holds the m), else the last one.
int PipelineMtpStage(const Strategy& s);

// Checks the strategy against the model: divisibility and ranges. The message names the field
// and the rule, e.g. "tp: num_attention_heads (32) must be divisible by tp (3)".
Status ValidateStrategy(const Strategy& s, const ModelSpec& m);

// Canonical keys of the Strategy schema (trainsim/schema.h) that a source gave: a strategy
// file's keys, Megatron-LM arguments, CLI flags. What no source gives is a default, listed as
// assumed in the report (AssumedStrategyDefaults).
using StrategyKeys = std::set<std::string, std::less<>>;

// Parses a SimuMax strategy JSON (its field names) plus trainsim's extensions (cp_size, zero 2/3,
// fsdp, global_batch_size, offload and overlap switches; every key of StrategySchema() in
// trainsim/schema.h). Unknown keys are errors. The result is normalised (NormaliseStrategy).
Result<Strategy> ParseStrategyJson(std::string_view text, std::string_view origin);
// Applies the keys present in a strategy JSON object onto `s`, without normalising: for layering
// sources (a file, then flags). A source that gives only one of global_batch_size and
// micro_batch_num clears the other; one that gives both keeps global_batch_size (and checks them).
// `given` (optional) receives the canonical keys the text sets (an alias counts for its key).
Status ApplyStrategyJson(std::string_view text, std::string_view origin, Strategy& s,
                         StrategyKeys* given = nullptr);

// Reads a Megatron-LM command line ("--tensor-model-parallel-size 8 --pipeline-... ", quoted as
// the shell reads it; a launch script works too, trainsim/megatron.h) on top of `base`, first
// resetting sp, zero and the DP overlaps to Megatron's defaults (off). Normalised.
Result<Strategy> ParseMegatronArgs(std::string_view args, Strategy base);
// The same without normalising, onto `s`. `given` (optional) receives every key that has a
// Megatron-LM argument (an absent argument keeps Megatron-LM's own default, which is no
// assumption), except dtype and seq_len unless their arguments appear (Megatron-LM alone would
// train in fp32 and needs --seq-length). Without --global-batch-size the batch is Megatron-LM's:
// one micro-batch per DP rank. The model-shape and ignored arguments are dropped (use
// ReadMegatronArgs for them).
Status ApplyMegatronArgs(std::string_view args, Strategy& s, StrategyKeys* given = nullptr);
// The strategy as Megatron-LM arguments (the normalised strategy; world size, rank order,
// ZB-H1/DualPipe and the EP overlap fraction have no Megatron-LM argument).
std::string FormatMegatronArgs(const Strategy& s);

}  // namespace trainsim
