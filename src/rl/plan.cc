// The defaults of an RL step, each with its source, and the checks of the RL fields.
#include <cmath>
#include <string>

#include "rl/rl.h"
#include "spec/field_text.h"
#include "trainsim/infer.h"
#include "trainsim/limits.h"

namespace trainsim::rl {
namespace {

using detail::NumberText;

// Responses per prompt by stage: GRPO/DAPO 16 (NeMo RL examples/configs/grpo_math_1B.yaml
// num_generations_per_prompt 16; DAPO's recipe samples 16 per prompt, Yu et al. 2025, sec. 4.1);
// RLOO 4 (Ahmadian et al. 2024, "Back to Basics", k = 2 and 4 studied); PPO 1; ReMax 1 sampled
// response plus one greedy response that only serves as the baseline (Li et al. 2023, Alg. 1).
int DefaultGroup(TrainStage st) {
  switch (st) {
    case TrainStage::kGrpo:
    case TrainStage::kDapo:
      return 16;
    case TrainStage::kRloo:
      return 4;
    default:
      return 1;
  }
}

// Mean response when only the cap is known: trainsim's default for reasoning RL (give
// response_len: the rollout's tail depends on the cap, its volume on the mean).
constexpr int kDefaultResponseTokens = 2048;
// vLLM gpu_memory_utilization of the rollout: NeMo RL's grpo_math_1B.yaml vllm_cfg (0.6) and
// verl's example scripts (actor_rollout_ref.rollout.gpu_memory_utilization=0.6).
constexpr double kDefaultRolloutMemFraction = 0.6;
constexpr double kSeparateRolloutMemFraction = 0.9;

void Assume(std::vector<Assumption>& out, std::string field, std::string value, std::string why) {
  out.push_back({std::move(field), std::move(value), std::move(why)});
}

// Lengths: prompt, mean response, cap.
Status ResolveLengths(const Strategy& s, RlPlan& p, std::vector<Assumption>& a) {
  p.prompt = s.prompt_len > 0 ? s.prompt_len : kDefaultPromptTokens;
  if (s.prompt_len <= 0)
    Assume(a, "prompt_len", std::to_string(kDefaultPromptTokens),
           "trainsim's default: a math problem with its instruction template");
  if (s.seq <= p.prompt && s.max_response_len <= 0)
    return Status::Invalid("seq_len", "must exceed prompt_len (" + NumberText(p.prompt) +
                                          ") when max_response_len is not given");
  p.max_response = s.max_response_len > 0 ? s.max_response_len : s.seq - p.prompt;
  if (s.max_response_len <= 0)
    Assume(a, "max_response_len", NumberText(p.max_response),
           "seq_len - prompt_len (the engine's max_tokens is what the sequence cap leaves)");
  // Prompt and response form one sequence of the rollout and of the training pass: the
  // sequence limit of trainsim/limits.h bounds their sum (issue 11: 2^24 + 2^24 was costed).
  const long long longest = 1LL * p.prompt + p.max_response;
  if (longest > limits::kMaxSeqLen)
    return Status::Invalid("max_response_len",
                           "prompt_len + max_response_len (" + std::to_string(longest) +
                               ") must be <= " + std::to_string(limits::kMaxSeqLen));
  if (s.response_len > p.max_response)
    return Status::Invalid("response_len",
                           "must be <= max_response_len (" + NumberText(p.max_response) + ")");
  p.response = s.response_len > 0 ? s.response_len
                                  : std::min<double>(kDefaultResponseTokens, p.max_response / 2);
  if (s.response_len <= 0)
    Assume(a, "response_len", NumberText(p.response),
           "trainsim's default mean response (2048 tokens, at most half the cap): give "
           "response_len, the generated volume depends on it");
  return Status::Ok();
}

// The sizes an RL step multiplies, bounded in 64 bits before any product is formed in int (the
// derived training strategy holds minibatch x group samples; issue 11: 2^31 - 1 responses per
// prompt wrapped into a zero sequence). NeMo RL and verl bound neither max_trajectory_age_steps
// nor the staleness in steps; [1, 1024] is trainsim's range: each step of age holds one more
// step's rollouts in the buffer, and past 1024 steps the policy that generated them is gone.
constexpr int kMaxRolloutAge = 1024;
Status CheckRlBounds(const Strategy& s) {
  const long long group = s.group_size > 0 ? s.group_size : DefaultGroup(s.stage);
  if (group > limits::kMaxGlobalBatch || s.gbs > limits::kMaxGlobalBatch ||
      group * s.gbs > limits::kMaxGlobalBatch)
    return Status::Invalid(
        "group_size",
        "x global_batch_size (" + std::to_string(group) + " x " + std::to_string(s.gbs) +
            " responses a step) must be <= " + std::to_string(limits::kMaxGlobalBatch));
  if (s.rollout_max_age < 1 || s.rollout_max_age > kMaxRolloutAge)
    return Status::Invalid("rollout_max_age", "must be in [1, " + std::to_string(kMaxRolloutAge) +
                                                  "], got " + std::to_string(s.rollout_max_age));
  return Status::Ok();
}

// The batch: prompts per step and per update.
Status ResolveBatch(const Strategy& s, RlPlan& p, std::vector<Assumption>& a) {
  p.group = s.group_size > 0 ? s.group_size : DefaultGroup(s.stage);
  if (s.group_size <= 0)
    Assume(a, "group_size", std::to_string(p.group),
           s.stage == TrainStage::kRloo  ? "RLOO with k = 4 samples (Ahmadian et al. 2024)"
           : s.stage == TrainStage::kPpo ? "PPO: one response per prompt"
           : s.stage == TrainStage::kRemax
               ? "ReMax: one sampled response (Li et al. 2023)"
               : "NeMo RL grpo_math_1B.yaml: 16 generations per prompt");
  if (s.stage == TrainStage::kRemax) p.extra_per_prompt = 1;  // the greedy baseline response
  if (s.gbs <= 0) return Status::Invalid("global_batch_size", "RL: must give the prompts per step");
  p.prompts = s.gbs;
  p.minibatch = s.rl_minibatch > 0 ? s.rl_minibatch : s.gbs;
  if (p.prompts % p.minibatch != 0)
    return Status::Invalid("rl_minibatch", "must divide global_batch_size (" +
                                               std::to_string(p.prompts) + " prompts)");
  p.updates = p.prompts / p.minibatch;
  if (s.rl_minibatch <= 0)
    Assume(a, "rl_minibatch", std::to_string(p.minibatch),
           "global_batch_size: one optimizer update per RL step");
  return Status::Ok();
}

// Which models score and train.
void ResolveModels(const Strategy& s, RlPlan& p, std::vector<Assumption>& a) {
  // DAPO drops the KL term (Yu et al. 2025, sec. 2.3); PPO, GRPO, RLOO and ReMax keep a KL
  // penalty against the reference policy.
  p.kl_reference = s.kl_reference >= 0 ? s.kl_reference == 1 : s.stage != TrainStage::kDapo;
  if (s.kl_reference < 0)
    Assume(a, "kl_reference", p.kl_reference ? "true" : "false",
           s.stage == TrainStage::kDapo ? "DAPO removes the KL penalty (Yu et al. 2025)"
                                        : "KL penalty against the reference policy");
  // RLHF with PPO, RLOO and ReMax scores with a learned reward model (Ouyang et al. 2022;
  // Ahmadian et al. 2024; Li et al. 2023); GRPO/DAPO math recipes with a rule-based verifier.
  const bool rlhf =
      s.stage == TrainStage::kPpo || s.stage == TrainStage::kRloo || s.stage == TrainStage::kRemax;
  p.reward_model = s.reward_model >= 0 ? s.reward_model == 1 : rlhf;
  if (s.reward_model < 0)
    Assume(a, "reward_model", p.reward_model ? "true" : "false",
           p.reward_model ? "RLHF: a learned reward model of the policy's size"
                          : "rule-based reward (verifier), no model forward");
  p.critic = s.stage == TrainStage::kPpo;  // PPO's value model, of the policy's size
  // The old policy's log-probs: recomputed by the trainer (NeMo RL, verl's colocated trainer)
  // unless the engine's own are used (verl fully_async: use_rollout_log_probs).
  p.rollout_logprobs = s.rollout_logprobs == 1;
  p.reference_swap = s.exec.reference_swap;
}

// The generation engines: pool, tensor parallel size, memory share.
Status ResolveEngines(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s, RlPlan& p,
                      std::vector<Assumption>& a) {
  p.separate = s.rollout_separate;
  p.async = s.async_rollout;
  p.max_age = std::max(1, s.rollout_max_age);
  p.gen_gpus = p.separate ? (s.rollout_gpus > 0 ? s.rollout_gpus : s.world_size) : s.world_size;
  if (p.separate && s.rollout_gpus <= 0)
    Assume(a, "rollout_gpus", std::to_string(p.gen_gpus), "as many as train (world_size)");
  // Colocated engines leave room for the trainer's states; a separate pool holds only vLLM,
  // at its own default (gpu_memory_utilization 0.9).
  p.mem_fraction = s.rollout_mem_fraction > 0 ? s.rollout_mem_fraction
                   : p.separate               ? kSeparateRolloutMemFraction
                                              : kDefaultRolloutMemFraction;
  if (s.rollout_mem_fraction <= 0)
    Assume(a, "rollout_mem_fraction", NumberText(p.mem_fraction),
           p.separate ? "vLLM's default gpu_memory_utilization (the pool holds only the engine)"
                      : "vLLM gpu_memory_utilization of NeMo RL's and verl's colocated recipes");
  p.gen_pp = s.rollout_pp;
  p.gen_tp = s.rollout_tp;
  if (p.gen_tp <= 0) {
    // The smallest power of two whose weight shard leaves half the engine's memory for KV.
    for (p.gen_tp = 1;;) {
      const DecodeLayout l{p.gen_tp, p.gen_pp, 0};
      auto mem = DecodeReplicaMemory(m, hw, l);
      if (mem.ok() && mem->weight_bytes <= 0.5 * p.mem_fraction * hw.hbm_bytes) break;
      const int next = 2 * p.gen_tp;
      if (next * p.gen_pp > p.gen_gpus || m.heads % next != 0) break;
      p.gen_tp = next;
    }
    Assume(a, "rollout_tp", std::to_string(p.gen_tp),
           "the smallest tensor parallel size whose weights take at most half the engine's "
           "memory");
  }
  if (m.heads % p.gen_tp != 0)
    return Status::Invalid("rollout_tp",
                           "must divide the attention heads (" + std::to_string(m.heads) + ")");
  if (p.gen_pp > m.layers) return Status::Invalid("rollout_pp", "must not exceed the layers");
  if (p.gen_gpus % (p.gen_tp * p.gen_pp) != 0)
    return Status::Invalid(p.separate ? "rollout_gpus" : "world_size",
                           "must be a multiple of rollout_tp x rollout_pp (" +
                               std::to_string(p.gen_tp * p.gen_pp) + ")");
  p.replicas = p.gen_gpus / (p.gen_tp * p.gen_pp);
  // enforce_eager: the engine's kernels are issued from the host at the stack's eager cost.
  if (s.rollout_eager) p.eager_host_us = s.exec.host_issue_us_per_kernel;
  // verl's rollout config (max_num_seqs 1024) and vLLM's offline default on 70+ GiB GPUs: the
  // whole rollout batch is submitted at once.
  Assume(a, "rollout_engine",
         std::string(s.rollout_eager ? "vllm eager" : "vllm") + ", max_num_seqs " +
             std::to_string(p.max_num_seqs),
         s.rollout_eager
             ? "vLLM without CUDA graphs (enforce_eager), every decode kernel issued from the "
               "host at " +
                   NumberText(p.eager_host_us) + " us; BF16 weights and KV cache"
             : "vLLM with CUDA graphs, BF16 weights and KV cache (the engine of the NeMo RL and "
               "verl recipes)");
  return Status::Ok();
}

}  // namespace

Status CheckRlWorkload(const Strategy& s) {
  if (!IsRlStage(s.stage)) return Status::Ok();
  RlPlan p;
  std::vector<Assumption> unused;
  if (Status st = CheckRlBounds(s); !st.ok()) return st;
  if (Status st = ResolveLengths(s, p, unused); !st.ok()) return st;
  return ResolveBatch(s, p, unused);
}

Result<RlPlan> ResolveRl(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s,
                         std::vector<Assumption>& assumed) {
  RlPlan p;
  if (Status st = CheckRlBounds(s); !st.ok()) return st;
  if (!s.rollout_separate && s.rollout_gpus > 0 && s.rollout_gpus != s.world_size)
    return Status::Invalid("rollout_gpus", "colocated rollout runs on the world_size GPUs");
  if (Status st = ResolveLengths(s, p, assumed); !st.ok()) return st;
  if (Status st = ResolveBatch(s, p, assumed); !st.ok()) return st;
  ResolveModels(s, p, assumed);
  if (Status st = ResolveEngines(m, hw, s, p, assumed); !st.ok()) return st;
  return p;
}

}  // namespace trainsim::rl
