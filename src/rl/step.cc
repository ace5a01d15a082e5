// One RL step = rollout (generation) + scoring forwards + training passes + weight sync, with
// the memory resident in each phase (docs/FINETUNE.md, "RL").
#include <algorithm>
#include <cmath>
#include <string>

// clang-format off: infer/step.h is not this file's own header (its stem only matches).
#include "infer/step.h"
// clang-format on
#include "rl/rl.h"
#include "sim/step.h"
#include "spec/field_text.h"
#include "trainsim/limits.h"
#include "trainsim/uncertainty.h"
#include "util/units.h"

namespace trainsim::rl {
namespace {

using detail::NumberText;

// The optimizer update the training engine runs: the policy-gradient pass over minibatch x
// group samples, packed into rows of seq tokens (NeMo RL sequence packing, verl
// use_remove_padding) with the mean sample of prompt + mean response tokens.
Result<Strategy> TrainingStrategy(const Strategy& s, const RlPlan& p, std::vector<Assumption>& a) {
  Strategy t = s;
  t.stage = TrainStage::kSft;  // a loss-masked forward + backward over prompt + response
  // gbs counts samples from here: a group kept beside it would multiply them again in the
  // strategy's group_size x gbs bound (64 prompts x 100000 gave "3.4e11 responses").
  t.group_size = 0;
  const double samples = static_cast<double>(p.minibatch) * p.group;
  // mbs x dp in 64 bits (each is bounded, their product is not; issue 11): the update's
  // samples round up to whole rounds of it, which must stay a global batch trainsim takes.
  const long long per_round = std::max(1LL, 1LL * t.mbs * t.dp());
  const long long rounds = std::max(1LL, static_cast<long long>(std::ceil(samples / per_round)));
  if (rounds * per_round > limits::kMaxGlobalBatch)
    return Status::Invalid(
        "mbs", "x data-parallel size (" + std::to_string(per_round) +
                   " sequences a round) must be <= " + std::to_string(limits::kMaxGlobalBatch));
  t.micro_batch_num = static_cast<int>(rounds);
  t.gbs = static_cast<int>(rounds * per_round);
  // Packed: each DP rank's tokens fill ceil(tokens / seq) rows of equal length (the last row
  // is not padded to seq: NeMo RL packs into bins, verl's dynamic batch size by tokens).
  const double mean = p.prompt + p.response;
  t.max_seq = 0;
  t.mean_seq = 0;
  if (t.packing && mean < t.seq) {
    const double rank_tokens = samples / t.dp() * mean;
    // rows <= rounds (mean < seq), so rows x per_round is bounded as above.
    const int rows = std::max(
        1, static_cast<int>(std::ceil(rank_tokens / (static_cast<double>(t.seq) * t.mbs))));
    // Rows a multiple of 128 tp cp tokens (sequence parallel splits over tp, CP chunks in 2 cp).
    const long long align = 128LL * t.tp * t.cp;
    const long long row_seq =
        align * static_cast<long long>(std::ceil(rank_tokens / (1.0 * rows * t.mbs) / align));
    if (row_seq > limits::kMaxSeqLen)
      return Status::Invalid("seq_len", "a packed row, a multiple of 128 x tp x cp tokens (" +
                                            std::to_string(row_seq) +
                                            "), must be <= " + std::to_string(limits::kMaxSeqLen));
    t.seq = static_cast<int>(row_seq);
    t.micro_batch_num = rows;
    t.gbs = static_cast<int>(rows * per_round);
    a.push_back({"train_rows_per_update", std::to_string(rows) + " x " + std::to_string(t.seq),
                 "packed micro-batches per DP rank x tokens per row: the rank's " +
                     NumberText(samples / t.dp()) + " samples of " + NumberText(mean) +
                     " tokens in rows of at most seq_len"});
  } else if (t.gbs != samples) {
    a.push_back({"train_samples_per_update", std::to_string(t.gbs),
                 NumberText(samples) + " samples rounded up to whole micro-batches per DP rank"});
  }
  return t;
}

// Forward-only pass of one model over one update's samples: the micro-batches through the
// pipeline (fill + one slot per micro-batch) at the slowest stage's forward.
double ForwardPass(const StepReport& tr, int pp) {
  double fwd = 0;
  for (const StageReport& st : tr.stages) fwd = std::max(fwd, st.fwd_per_mb_s);
  return (tr.micro_batches + pp - 1) * fwd;
}

struct Sync {
  double refit_s = 0, offload_s = 0;
  double orchestration_s = 0;  // host work outside the phases (kStepOrchestrationS, scaled)
  std::string host_cpu = "x86";
};

// Refit rates measured by NeMo RL on DeepSeek-V3 (1.342 TB of BF16 weights; training EP64 PP8,
// generation vLLM TP64): "NeMo-RL: Journey of Optimizing Weight Transfer in Large MoE Models by
// 10x" (NVIDIA NeMo blog, 2025-08-12), Table 1, NeMo-RL v0.3: step 1, policy parameter gather
// (every policy worker materialises the full model, bucket by bucket), 12.2 s; step 2, CUDA-IPC
// handle transfer to the colocated vLLM executors, 33.5 s; step 3, vLLM load_weights, 1.5 s
// (47.2 s in all; speed of light 3.3 s). Both rates are per byte of the full BF16 model.
constexpr double kRefitGatherBytesPerS = 1.342e12 / 12.2;
constexpr double kRefitIpcBytesPerS = 1.342e12 / (33.5 + 1.5);
// Rate of the trainer's offload: NeMo RL moves its states with Tensor.to("cpu") into pageable
// memory. A pageable copy is staged: the copy engine fills a pinned bounce buffer and the host
// CPU copies it into the pageable pages (CUDA C++ Best Practices Guide, "Pinned Memory"), so
// its rate is the host's, not the link's: a faster link (NVLink-C2C on Grace) does not speed
// it up. From the NeMo RL v0.3 blog's GRPO breakdown (2025-07-21; Llama-3.1-8B Instruct,
// 8 H100, data parallel only): refit 5 s, of which the refit transfer of 16 GB at the rates
// above is 0.6 s, so 4.4 s moved the 60 GB of weights, fp32 gradients and optimizer shards
// that this simulator counts per GPU: 13.6 GB/s, 0.21 of that host's 64 GB/s PCIe 5 x16 link.
// A slower link bounds it (the copy engine's side).
constexpr double kPageableHostCopyBytesPerS = 0.21 * 64e9;
// Per-step work outside the timed phases (batch processing, rule-based rewards, advantages,
// Ray object transfers): the NeMo RL v0.3 blog's total step time minus the sum of its phases,
// 3, 3, 2 and 4 s for Llama-3.1-8B, Llama-3.1-70B, Qwen3-32B and Qwen3-30B-A3B, on x86 hosts.
// It is Python on the host: another host CPU takes its measured factor on the engines' host
// work (data/inference_engines.json host_cpus: Grace 1.43).
constexpr double kStepOrchestrationS = 3.0;

// Weight sync (refit), each step, of the full BF16 model (2 bytes per parameter):
// * colocated (NeMo RL, verl hybrid engine): the trainer gathers the full model and hands it to
//   the vLLM executors on the same GPUs (CUDA IPC), at the measured rates above;
// * separate pools: the trainer gathers it the same way and broadcasts every tensor to every
//   generation worker (NeMo RL packed_broadcast_producer over a NCCL group of the trainer's
//   rank 0 and all vLLM workers): the full model crosses the scale-out fabric once, at the
//   NICs of one node (NCCL spreads a broadcast over one ring per NIC), or the scale-up fabric
//   when both pools sit in one domain.
// Colocated, the training states leave the GPUs while vLLM generates and come back for the
// scoring and training passes (NeMo RL megatron/dtensor policy workers: offload_before_refit
// moves the optimizer states to the host, offload_after_refit the model; prepare_for_training
// moves both back): every static byte of the trainer crosses the host link twice per step.
Sync WeightSync(const HardwareSpec& hw, const Strategy& s, const RlPlan& p, const StepReport& tr) {
  Sync out;
  const infer::HostCpu cpu = infer::HostCpuOf(hw);
  out.orchestration_s = kStepOrchestrationS * cpu.time_factor;
  out.host_cpu = cpu.cpu;
  const double model_bytes = 2.0 * tr.params_total;
  out.refit_s = model_bytes / kRefitGatherBytesPerS;
  if (p.separate) {
    const int domain = std::max(1, hw.scaleup_domain);
    const int node = hw.gpus_per_node > 0 ? std::min(hw.gpus_per_node, domain) : domain;
    const double bw = s.world_size + p.gen_gpus <= domain
                          ? hw.scaleup_bw_bytes_per_s * hw.eff.scaleup_bus
                          : node * hw.nic_bw_bytes_per_s * hw.eff.nic_bus;
    if (bw > 0) out.refit_s += model_bytes / bw;
    return out;
  }
  out.refit_s += model_bytes / kRefitIpcBytesPerS;
  double train_static = 0;
  for (const StageReport& st : tr.stages) train_static = std::max(train_static, st.static_bytes);
  const double pageable = std::min(kPageableHostCopyBytesPerS, hw.host_link_bw_bytes_per_s);
  out.offload_s = pageable > 0 ? 2 * train_static / pageable : 0;
  return out;
}

// The reference policy's weights live on the host. NeMo RL swaps them in for its forward
// (megatron/dtensor policy workers, use_reference_model: the policy's state dict to pinned host
// memory, the reference's in, the policy's back): three copies of the trainer's weight shard
// over the host link, once per step. verl's reference is a module of its own with offloaded
// parameters (ref.fsdp_config.param_offload): its shard comes in for the forward, one copy (a
// lower bound: FSDP's CPU offload brings it in for every micro-batch of that forward).
double ReferenceSwap(const HardwareSpec& hw, const StepReport& tr, const RlPlan& p) {
  double weights = 0;
  for (const StageReport& st : tr.stages) weights = std::max(weights, st.weight_bytes);
  const double copies = p.reference_swap ? 3 : 1;
  return hw.host_link_bw_bytes_per_s > 0 ? copies * weights / hw.host_link_bw_bytes_per_s : 0;
}

// The weight-sync defaults, each with its source.
void AssumeSync(const RlPlan& p, const Sync& sync, std::vector<Assumption>& a) {
  a.push_back({"refit_rate",
               std::to_string(std::lround(kRefitGatherBytesPerS / 1e9)) + " GB/s gather" +
                   (p.separate ? std::string(" + NCCL broadcast of the full model")
                               : " + " + std::to_string(std::lround(kRefitIpcBytesPerS / 1e9)) +
                                     " GB/s CUDA IPC"),
               "per byte of the full BF16 model each step: NeMo RL v0.3's measured DeepSeek-V3 "
               "refit (12.2 s gather, 33.5 + 1.5 s IPC transfer and load, NeMo blog 2025-08-12)"});
  if (!p.separate)
    a.push_back({"colocated_offload", NumberText(std::round(sync.offload_s * 1000) / 1000) + " s",
                 "the trainer's weights, gradients and optimizer states go to the host while "
                 "vLLM generates and come back (NeMo RL offload_before_refit / "
                 "offload_after_refit), twice, in pageable copies at 13.4 GB/s, the host's "
                 "staging rate, at most the host link (NeMo RL v0.3 blog, Llama-3.1-8B refit "
                 "5 s on H100)"});
  if (!p.separate)
    a.push_back({"rollout_sleep", "vLLM sleep level 1",
                 "between rollouts the colocated engine backs its weight shard up in pinned host "
                 "memory (NeMo RL VllmGenerationWorker.sleep, verl VLLM_SLEEP_LEVEL = 1), counted "
                 "in host_mem.engine_bytes; vLLM's --swap-space (4 GiB per GPU) is not counted: "
                 "the V1 engine preempts by recompute and allocates no CPU KV cache"});
  if (p.kl_reference && p.reference_swap)
    a.push_back({"reference_swap", "3 x the trainer's weight shard over the host link",
                 "the reference weights live in pinned host memory (host_mem.reference_bytes) "
                 "and are swapped in for its forward, once per step, the policy's swapped out "
                 "meanwhile (NeMo RL use_reference_model), counted in scoring"});
  else if (p.kl_reference)
    a.push_back({"reference_swap", "1 x the trainer's weight shard over the host link",
                 "the reference is a module of its own whose weights live in host memory "
                 "(host_mem.reference_bytes) and come in for its forward, the policy stays in "
                 "HBM (verl ref.fsdp_config.param_offload), counted in scoring"});
  a.push_back({"step_orchestration",
               NumberText(std::round(sync.orchestration_s * 100) / 100) + " s",
               "per-step work outside the phases (rewards, advantages, Ray transfers), counted "
               "in weight_sync: NeMo RL v0.3 blog, total minus phases = 2-4 s over 4 models (3 s "
               "on x86 hosts; " +
                   sync.host_cpu + " host work x its host_cpus factor)"});
}

// Throughput over every GPU of the step: NeMo RL's tokens/s/GPU (prompt + response tokens of
// all generated samples over step time x GPUs) and the model FLOPs of all phases.
void FillRlThroughput(const HardwareSpec& hw, const RlPlan& p, int forwards, int trains,
                      const StepReport& tr, int gpus, StepReport& r) {
  const double tokens = p.generated() * (p.prompt + p.response);
  const double gen_flops = 2.0 * tr.params_active * tokens;
  const double fwd_model = tr.model_flops / 3;  // one forward of one update's samples
  r.model_flops = gen_flops + p.updates * (trains * tr.model_flops + forwards * fwd_model);
  r.hardware_flops = gen_flops + p.updates * (trains * tr.hardware_flops + forwards * fwd_model);
  const double peak =
      hw.PeakFlops(DType::kBf16) > 0 ? hw.PeakFlops(DType::kBf16) : hw.PeakFlops(DType::kFp16);
  const double denom = r.step_time_s * gpus;
  r.mfu = r.model_flops / (denom * peak);
  r.hfu = r.hardware_flops / (denom * peak);
  r.tflops_per_gpu = r.model_flops / denom / 1e12;
  r.tokens_per_s_per_gpu = tokens / denom;
}

}  // namespace

Result<StepReport> SimulateRlStep(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s,
                                  const SimOptions& opt) {
  std::vector<Assumption> assumed;
  auto plan = ResolveRl(m, hw, s, assumed);
  if (!plan.ok()) return plan.status();
  const RlPlan& p = plan.value();
  auto strategy = TrainingStrategy(s, p, assumed);
  if (!strategy.ok()) return strategy.status();
  const Strategy& t = strategy.value();
  // Packed samples attend only within themselves (varlen flash attention over cu_seqlens in
  // NeMo RL's sequence packing and verl's use_remove_padding).
  ModelSpec tm = m;
  if (t.packing && p.prompt + p.response < s.seq) {
    tm.attention.document_masking = true;
    tm.attention.mean_document_tokens = p.prompt + p.response;
  }
  auto train = Simulate(tm, hw, t, opt);
  if (!train.ok()) return train.status();
  const StepReport& tr = train.value();
  auto gen = RolloutTime(m, hw, p);
  if (!gen.ok()) return gen.status();
  const Generation& g = gen.value();

  // Scoring: the policy's log-probs of the samples (the ratio's old policy, unless the
  // generation engine returned them), the reference
  // (KL), the critic's values (PPO) and the reward model, each a forward of the policy's size.
  const int forwards = !p.rollout_logprobs + p.kl_reference + p.critic + p.reward_model;
  const int trains = 1 + p.critic;  // actor, and PPO's critic
  const double scoring_s = p.updates * forwards * ForwardPass(tr, t.pp) +
                           (p.kl_reference ? ReferenceSwap(hw, tr, p) : 0);
  const double training_s = p.updates * trains * tr.step_time_s;
  const Sync sync = WeightSync(hw, s, p, tr);
  const double sync_s = sync.refit_s + sync.offload_s + sync.orchestration_s;
  const double generation_s = g.total_s();
  const bool overlap = p.separate && p.async;

  StepReport r = tr;
  r.step_time_s = (overlap ? std::max(generation_s, scoring_s + training_s)
                           : generation_s + scoring_s + training_s) +
                  sync_s;
  // Memory per phase, per GPU: the engine's HBM share (weights + KV pool; colocated, the
  // training states are on the host meanwhile); the training peak; scoring holds the training
  // states and the forward's working set (below the training peak).
  const double gen_mem = p.mem_fraction * hw.hbm_bytes;
  r.phases = {{"generation", generation_s, 0, gen_mem},
              {"scoring", scoring_s, 0, tr.peak_mem_bytes},
              {"training", training_s, 0, tr.peak_mem_bytes},
              {"weight_sync", sync_s, 0, gen_mem}};
  for (PhaseReport& ph : r.phases) ph.share = ph.time_s / r.step_time_s;
  r.peak_mem_bytes = std::max(tr.peak_mem_bytes, p.separate ? 0.0 : gen_mem);
  r.fits = tr.fits && g.fits && r.peak_mem_bytes <= hw.hbm_bytes;
  RlHostMemory(hw, s, p, g, tr, trains, r);  // host RAM per node (docs/FINETUNE.md)
  const int gpus = s.world_size + (p.separate ? p.gen_gpus : 0);
  FillRlThroughput(hw, p, forwards, trains, tr, gpus, r);
  EstimateUncertainty(r, m, hw, s);  // the "rl" regime of data/uncertainty.json
  assumed.push_back({"rollout_batch", NumberText(g.batch),
                     "sequences decoding together per engine: min(sequences per engine, "
                     "max_num_seqs, KV pool / KV of prompt + mean response)"});
  AssumeSync(p, sync, assumed);
  r.assumed.insert(r.assumed.end(), assumed.begin(), assumed.end());
  RlReport& x = r.rl;
  x.samples = p.generated();
  x.updates = p.updates;
  x.replicas = p.replicas;
  x.gen_tp = p.gen_tp;
  x.gen_pp = p.gen_pp;
  x.batch = g.batch;
  x.decode_steps = g.decode_steps;
  x.prefill_s = g.prefill_s;
  x.decode_s = g.decode_s;
  x.kv_pool_bytes = g.kv_pool_bytes;
  x.gen_weight_bytes = g.weight_bytes;
  x.refit_s = sync.refit_s;
  x.offload_s = sync.offload_s;
  x.separate = p.separate;
  x.overlapped = overlap;
  return r;
}

}  // namespace trainsim::rl
