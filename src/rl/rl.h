// RL post-training steps (ppo, grpo, dapo, rloo, remax; docs/FINETUNE.md, "RL"): generation
// (prefill + decode over a KV cache on the rollout engines), scoring forwards, training passes
// and the weight sync between the training and generation engines.
#pragma once

#include <vector>

#include "trainsim/trainsim.h"

namespace trainsim::rl {

// Mean prompt tokens when none is given: a math problem with its instruction template
// (trainsim's default; OpenMathInstruct-2 and DAPO-Math-17k prompts are some hundred tokens).
constexpr int kDefaultPromptTokens = 256;

// The RL settings of a strategy with every default resolved.
struct RlPlan {
  int group = 1;             // responses per prompt (trained)
  int extra_per_prompt = 0;  // responses generated but not trained (ReMax's greedy baseline)
  int prompts = 0;           // per RL step (gbs)
  int minibatch = 0;         // prompts per optimizer update
  int updates = 1;           // optimizer updates per RL step
  double prompt = 0, response = 0, max_response = 0;  // tokens (means; cap)
  bool kl_reference = true, reward_model = false, critic = false;
  bool rollout_logprobs = false;  // old-policy log-probs from the engine: no trainer forward
  // The reference's forward swaps the policy's weights out to the host (NeMo RL); false: the
  // reference's own weights stream in from the host (verl). Execution::reference_swap.
  bool reference_swap = true;
  bool separate = false, async = true;
  // Steps the rollout may run ahead (separate async pools); >= 2: streaming generation.
  int max_age = 1;
  bool streaming() const { return separate && async && max_age >= 2; }
  int gen_gpus = 0, gen_tp = 1, gen_pp = 1, replicas = 1;
  double mem_fraction = 0.6;  // generation engine's share of HBM
  double eager_host_us = 0;   // > 0: eager engine (enforce_eager), host issue per kernel
  int max_num_seqs = 1024;    // concurrent sequences per engine
  double generated() const { return static_cast<double>(prompts) * (group + extra_per_prompt); }
  double trained() const { return static_cast<double>(prompts) * group; }
};

// The RL rules on what is trained, whatever the layout (group_size x gbs, rollout_max_age,
// prompt and response lengths, rl_minibatch dividing gbs): those ResolveRl applies first. Ok for
// a stage that is not RL.
Status CheckRlWorkload(const Strategy& s);

// Resolves the defaults of an RL strategy (appending what it assumed to `assumed`) and checks
// the RL fields; Invalid names the field and the rule.
Result<RlPlan> ResolveRl(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s,
                         std::vector<Assumption>& assumed);

// The rollout of one RL step on one generation replica (the slowest).
struct Generation {
  double prefill_s = 0, decode_s = 0;
  double batch = 0;          // concurrent sequences per replica at the start
  double decode_steps = 0;   // iterations until the longest response ends
  double weight_bytes = 0;   // per generation GPU
  double kv_pool_bytes = 0;  // per generation GPU
  bool fits = true;          // weights and one sequence's KV fit in the engine's memory
  double total_s() const { return prefill_s + decode_s; }
};
Result<Generation> RolloutTime(const ModelSpec& m, const HardwareSpec& hw, const RlPlan& p);

// Mean of an exponential with rate 1/mu truncated at `cap` equals `mean`: the response-length
// law (lengths min(X, cap), X exponential), the scale mu; +inf when mean >= cap.
double ExponentialScaleForMean(double mean, double cap);

// Host RAM of an RL step per node (src/rl/host_memory.cc; docs/FINETUNE.md, "Host memory"),
// for `gpus` training GPUs on one server: the training plan's own host bytes and the reference
// weights (kl_reference) in every phase; colocated, the trainer's HBM states (the critic's too)
// during generation, the sleeping engine's weights during scoring and training; the reference
// forward's swapped-out policy weights. Returns the phase with the most (phase names it), with
// bytes_per_node their sum; capacity, link and verdict not filled.
HostMemReport RlHostBytes(const RlPlan& p, const Generation& g, const StepReport& tr, int gpus);
// Fills r.host_mem of the RL step from the training report `tr` (trains: models trained a
// step): bytes, capacity, the training passes' host-link copies per RL step, the verdict (fits
// false when host RAM is exceeded; a note above 70 %, Ray's object store's share), and the
// assumed host_mem_gib.
void RlHostMemory(const HardwareSpec& hw, const Strategy& s, const RlPlan& p, const Generation& g,
                  const StepReport& tr, int trains, StepReport& r);

// The step of an RL stage (Simulate's path for IsRlStage).
Result<StepReport> SimulateRlStep(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s,
                                  const SimOptions& opt);

}  // namespace trainsim::rl
