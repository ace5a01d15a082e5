// Framework profiles (data/frameworks.json): the defaults a framework applies to what a
// validation case leaves null, and which profile a case gets.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainsim/execution.h"
#include "trainsim/hardware.h"
#include "trainsim/strategy.h"

namespace trainsim::detail {

struct Framework {
  std::string id;
  std::vector<std::string> match;  // substrings of a case's `source`
  std::vector<std::string> names;  // case `framework` values this profile stands for
  std::string fallback;            // "fp8" / "pre-fp8": the GPU class it serves when none matches;
                                   // "finetune": fine-tuning cases that match nothing
  bool sp = false, etp_one = false, overlap_grad = false, overlap_param = false;
  bool tp_overlap = false, cp_a2a = false, fused_ce = false, uneven = false;
  AttentionImpl attention = AttentionImpl::kFused;  // profile "attention": fused, fa2 or fa1
  // The stack's attention is torch.nn.functional.scaled_dot_product_attention (profile key
  // attention_sdpa): where PyTorch prefers cuDNN's fused kernel (SdpaPrefersCudnn), `attention`
  // gives way to fused.
  bool attention_sdpa = false;
  // The stack's attention is FlashAttention-2 (the flash-attn package) or torch SDPA (profile
  // key attention_cudnn_on_blackwell): on datacenter Blackwell, which FlashAttention-2 does not
  // support, both come to cuDNN's fused attention, so there `attention` gives way to fused.
  bool attention_cudnn_on_blackwell = false;
  double ep_overlap = 0;
  bool dedup = false;
  // The stack's attention has a flash kernel (profile key flash_attention; false: the scores
  // are materialised, Megatron-LM's core attention before FlashAttention).
  bool flash_attention = true;
  // MoE expert and router settings (profile keys moe_grouped_gemm, moe_permute_fusion: true
  // unless the profile says otherwise, as today's recipes run them; moe_router_dtype: none,
  // fp32 or fp64, as bytes, 0 = none).
  // moe_router_padding: true unless the profile says otherwise, as the Megatron-Bridge FP8 MoE
  // recipes set moe_router_padding_for_fp8 (it acts only under FP8/FP4).
  bool grouped_gemm = true, permute_fusion = true, router_padding = true;
  int router_bytes = 0;
  bool pure_bf16 = false;  // bf16 weights and optimizer states, no fp32 master (torchtune, PEFT)
  // The same unless DeepSpeed ZeRO runs the step (its fp32 master partitions): Qwen1's
  // finetune.py trains the bf16 module under the Trainer's autocast (profile key
  // pure_bf16_without_zero).
  bool pure_bf16_without_zero = false;
  // LoRA-family dropout of the stack's fine-tuning script when a case does not state one
  // (profile key lora_dropout; 0: PEFT LoraConfig's default).
  double lora_dropout = 0;
  bool fsdp_bf16_grads = false;    // FSDP runs reduce gradients in bf16 (Megatron-FSDP's guide)
  std::string recompute = "auto";  // default for null: auto = lightest policy that fits
  // What a case's "selective" recompute means in this stack (profile key selective_modules, a
  // recompute_modules list; empty: Megatron-LM's core_attn). torchtitan: op_sac.
  std::string selective_modules;
  // The stack logs the caching allocator's max_memory_reserved (profile key memory_reported
  // "reserved"; torchtitan's metrics line): memory is scored as the validate notes rule says.
  bool memory_reserved = false;
  // The stack's figures are the GPU's used memory, as nvidia-smi shows it (profile key
  // memory_reported "device").
  bool memory_device = false;
  // The model runs eagerly unless the case notes name torch.compile (profile key
  // eager_unless_compiled; torchtitan's [compile] enable defaults to false).
  bool eager_unless_compiled = false;
  // With pp > 1, FSDP keeps the stage's parameters gathered from the first forward to the last
  // backward and accumulates unsharded gradients until the last micro-batch (profile key
  // pp_fsdp_unsharded): costed as ZeRO-1 (one all-gather and one reduce-scatter per step).
  bool pp_fsdp_unsharded = false;
  // Default for null when the case trains without FSDP (the stack's Megatron backend); empty:
  // `recompute` for every case.
  std::string recompute_megatron;
  // Sequence parallel when the case trains without FSDP (the stack's Megatron backend) and
  // leaves `sp` null (profile key sp_megatron); -1: `sp` for every case.
  int sp_megatron = -1;
  // RL: the generation engine runs eager (vLLM enforce_eager) when the case trains without FSDP
  // (the stack's Megatron backend; profile key rollout_eager_megatron).
  bool rollout_eager_megatron = false;
  int zero = 0, mbs = 1;
  // RL: separate pools take the old policy's log-probs from the generation engine.
  bool separate_rollout_logprobs = false;
  int rollout_tp = 0;  // RL: the generation engine's TP when a case leaves it null; 0 = none
  // Pipeline schedule with pp > 1 (profile key "schedule"; empty: Megatron's 1F1B).
  std::string schedule;
  // RL: separate pools stream (partial rollout carries unfinished samples across the weight
  // sync), as rollout_max_age; 0 = the straggler-bound one-step-off rollout.
  int separate_rollout_max_age = 0;
  Execution exec;  // host issue rate, optimizer implementation
  // The GPU class this variant's settings are for ("" = the profile's own settings).
  std::string gpu_class;
  // The profile's settings per GPU class (profile key by_gpu_class: class name -> keys that
  // replace the profile's own on that class), each a complete profile; ForHardware picks one.
  std::vector<std::pair<std::string, std::shared_ptr<const Framework>>> by_gpu_class;
};

// The embedded profiles, in file order. A profile with "base": "<id>" (an earlier profile)
// starts from that profile's keys (all but id, frameworks, match, fallback and basis) and
// replaces them with its own; its by_gpu_class entries are merged class by class.
const std::vector<Framework>& Frameworks();
// The profiles of a frameworks.json text (Frameworks() parses the embedded one); empty when it
// is not an object with a "frameworks" list.
std::vector<Framework> ParseFrameworks(std::string_view text);

// The GPU classes a profile's by_gpu_class may name, from the hardware's physical figures:
// "fp4-rack" (FP4 tensor cores and a scale-up domain of at least kRackScaleUpGpus GPUs: GB200 /
// GB300 NVL72 and their cloud shapes), "fp4-node" (FP4 tensor cores, a node-sized domain: B200,
// B300 HGX), "fp8" (FP8 but no FP4 tensor cores: Hopper, Ada, MI300) and "pre-fp8" (A100, V100).
inline constexpr int kRackScaleUpGpus = 36;
const std::vector<std::string_view>& GpuClassNames();
std::string_view GpuClassOf(const HardwareSpec& hw);

// The profile's settings on this hardware: its by_gpu_class variant for the GPU's class, else the
// profile itself.
const Framework& ForHardware(const Framework& fw, const HardwareSpec& hw);

// The profile whose id or `frameworks` list is `name` (ignoring case), or null.
const Framework* NamedProfile(const std::string& name);

struct ProfilePick {
  const Framework* fw = nullptr;  // never null; the variant for the run's GPU class
  std::string why;  // "profile X (source matches 'Y')" or why a fallback profile was taken
};

// What a run looks like, for choosing defaults when no profile names or matches its stack.
struct RunShape {
  double params = 0;  // total parameters; 0: unknown
  int tp = 1, pp = 1, cp = 1, ep = 1;
  bool moe = false;
  bool sharded = false;        // the case states FSDP or ZeRO >= 2
  bool fully_sharded = false;  // the case states FSDP or ZeRO 3
  bool rl = false;             // an RL stage (ppo, grpo, dapo, rloo, remax)
};

// Largest model the small-run fallback serves: the 100 M - 2 B parameter regime of issue 9
// (GPT-2 / Pythia-class models), which train in plain DDP (16-18 B of states per parameter
// fit on one GPU) without model parallelism.
inline constexpr double kSmallRunMaxParams = 2e9;

// Whether no profile named or matched: the run looks like a single-script PyTorch pre-training
// run (a dense model of at most kSmallRunMaxParams, no tensor, pipeline or context parallelism,
// no sharded states).
bool LooksLikeSmallScriptRun(const RunShape& shape);

// Whether no profile named or matched: the run states full sharding (FSDP or ZeRO 3) and no
// tensor, pipeline, context or expert parallelism, the shape of the PyTorch FSDP stacks
// (torchtitan, llm-foundry, Accelerate FSDP) rather than of a Megatron-Core run. RL stages are
// left out (their rollout engines and trainer settings come with their own stacks).
bool LooksLikeFsdpRun(const RunShape& shape);

// The profile the case's `framework` field names (by id or `frameworks` list; a stack written as
// components, "llama-factory+deepspeed", takes the first component that names one); else the
// profile with the longest `match` substring in `source` (both ignore case); else the fallback
// profile of the GPU's class: "fp8" when it has FP8 tensor cores (Hopper, Ada, Blackwell, MI300:
// today's recipes), "pre-fp8" otherwise (V100, A100: the 2020-21 Megatron-LM habits). A fine-tuning
// case (a supervised or preference stage, or a PEFT method) that matches nothing takes the
// "finetune" fallback profile before the GPU-class one. On GPUs with FP8 tensor cores, a
// pre-training run with no framework named that LooksLikeSmallScriptRun takes the
// "small-script" fallback profile (the nanoGPT lineage of today's small-model runs:
// torch.compile, DDP) before the GPU-class one. Before that, on any GPU, a pre-training run with no
// framework named that LooksLikeFsdpRun takes the "fsdp" fallback profile (the PyTorch FSDP
// stacks' shared defaults). On GPUs with FP8 tensor cores an RL stage with no framework named takes
// the "rl" fallback profile (today's recipes without TP communication overlap). The profile's
// by_gpu_class variant for `hw` is returned (ForHardware), and `why` names the class.
ProfilePick PickFramework(const std::string& framework, const std::string& source,
                          const HardwareSpec& hw, bool finetune = false,
                          const RunShape& shape = {});

// Whether PyTorch's SDPA dispatch prefers the cuDNN attention backend on this GPU: datacenter
// Hopper (sm90) and Blackwell (sm100, pytorch/pytorch#162073) and Blackwell Ultra (sm103,
// pytorch/pytorch#170800), gated on cuDNN newer than 9.15: the default of the wheels from 2.11
// on, whose bundled cuDNN passes the gate; elsewhere it keeps the FlashAttention-2
// kernel first.
bool SdpaPrefersCudnn(const HardwareSpec& hw);

// Whether the GPU is a datacenter Blackwell part (B200, GB200: sm100; B300, GB300: sm103).
bool DatacenterBlackwell(const HardwareSpec& hw);

// The profile's attention kernel on this GPU: `attention`, or fused where attention_sdpa meets
// SdpaPrefersCudnn or attention_cudnn_on_blackwell meets DatacenterBlackwell.
AttentionImpl ProfileAttention(const Framework& fw, const HardwareSpec& hw);

// Whether TP collectives can overlap GEMMs (TE userbuffers): the TP group is inside a scale-up
// domain faster than a PCIe 5.0 x16 link (NVLink / NVSwitch / Infinity Fabric).
bool ScaleUpAllowsTpOverlap(const HardwareSpec& hw, int tp);

}  // namespace trainsim::detail
