// SimulateInference: memory (weights, activations, KV pool), prefill and decode iterations, and
// fixed-batch or offline (maximum-load) throughput of one replica, times the replicas.
#include <algorithm>
#include <cmath>
#include <string>

#include "cost/cost.h"
#include "graph/attention_pattern.h"
#include "infer/disagg.h"
#include "infer/rate.h"
#include "infer/step.h"
#include "trainsim/hardware_figures.h"
#include "trainsim/infer.h"
#include "util/units.h"

namespace trainsim {
namespace {

using infer::Layout;
using infer::StageShape;
using infer::Work;

// Memory outside weights, activations and KV: CUDA context, NCCL and allocator slack, as vLLM's
// profiler counts "non-torch memory" (about 0.5-1 GiB on one GPU; 1 GiB taken).
constexpr double kRuntimeOverheadBytes = 1.0 * units::kGiB;

// Input ranges: a fixed batch and a request rate at most 1e9 (sequences, requests/s), a rate at
// least one request in 1e6 s (11.6 days).
constexpr double kMaxBatchOrRate = 1e9;
constexpr double kMinRequestRate = 1e-6;

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Status CheckSpeculation(const InferenceSpec& s) {
  if (s.spec_tokens < 0 || s.spec_tokens > 64)
    return Status::Invalid("spec_tokens", "must be in [0, 64]");
  if (s.spec_tokens == 0) return Status::Ok();
  if (!s.draft) return Status::Invalid("draft_model", "is required with spec_tokens");
  if (!(s.acceptance_rate >= 0 && s.acceptance_rate <= 1))
    return Status::Invalid("acceptance_rate", "must be in [0, 1]");
  if (s.draft->heads % s.tp != 0) return Status::Invalid("tp", "must divide the draft's heads");
  if (s.pp > s.draft->layers) return Status::Invalid("pp", "must not exceed the draft's layers");
  if (s.batch == 0 && s.request_rate == 0)
    return Status::Invalid("spec_tokens", "needs a fixed batch or a rate (not offline load)");
  return Status::Ok();
}

Status CheckSpec(const ModelSpec& m, const InferenceSpec& s) {
  if (s.tp < 1) return Status::Invalid("tp", "must be >= 1");
  if (s.pp < 1) return Status::Invalid("pp", "must be >= 1");
  if (s.gpus < 1 || s.gpus % (s.tp * s.pp) != 0)
    return Status::Invalid("gpus", "must be a positive multiple of tp x pp");
  if (m.heads % s.tp != 0) return Status::Invalid("tp", "must divide the attention heads");
  if (s.pp > m.layers) return Status::Invalid("pp", "must not exceed the layers");
  // 1e8 tokens bounds the longest context any engine serves (10 M for Llama 4 Scout) with room.
  if (!(s.prompt_len >= 1 && s.prompt_len <= 1e8))
    return Status::Invalid("prompt_len", "must be in [1, 1e8] tokens");
  if (!(s.output_len >= 1 && s.output_len <= 1e8))
    return Status::Invalid("output_len", "must be in [1, 1e8] tokens");
  if (!m.is_moe() && s.ep > 1)
    return Status::Invalid("ep", "needs an MoE model (" + m.name + " is dense)");
  // A batch is whole sequences (a denormal one costed 1e-19 of a sequence) and a rate a
  // physical arrival rate (at 1e300 requests/s the report printed inf): 1e9 bounds both.
  if (!(s.batch == 0 || (s.batch >= 1 && s.batch <= kMaxBatchOrRate)))
    return Status::Invalid("batch", "must be 0 (offline maximum load) or in [1, 1e9] sequences");
  if (s.quant_group < 1) return Status::Invalid("quant_group", "must be >= 1");
  if (!(s.request_rate == 0 ||
        (s.request_rate >= kMinRequestRate && s.request_rate <= kMaxBatchOrRate)))
    return Status::Invalid("request_rate", "must be 0 (none) or in [1e-06, 1e9] requests/s");
  if (s.request_rate > 0 && s.batch > 0)
    return Status::Invalid("request_rate",
                           "excludes a fixed batch (the rate sets the concurrency)");
  if (s.gpu_memory_utilization < 0 || s.gpu_memory_utilization > 1)
    return Status::Invalid("gpu_memory_utilization", "must be in (0, 1]");
  if (s.prefix_cache_hit != -1 &&
      !(s.prefix_cache_hit >= 0 && s.prefix_cache_hit <= kMaxPrefixCacheHit))
    return Status::Invalid("prefix_cache_hit",
                           "must be in [0, " + Num(kMaxPrefixCacheHit) +
                               "] (a fraction of the prompt; one token is always computed)");
  if (m.is_moe() && s.ep > 0 && m.moe.num_experts % s.ep != 0)
    return Status::Invalid("ep", "must divide the routed experts");
  return CheckSpeculation(s);
}

// The peaks a serving step computes at are sourced (a catalogue figure given as null, "no
// source found", is never filled in): the 16-bit one (attention, and GEMMs of 16-bit or
// weight-only int checkpoints), and FP8 / FP4 for such checkpoints.
Status CheckPeaks(const HardwareSpec& hw, WeightDType d) {
  if (Status st = CheckPeakSourced(hw, DType::kBf16); !st.ok()) return st;
  if (d == WeightDType::kFp8 && PeakUnknown(hw, "fp8")) return CheckPeakSourced(hw, DType::kFp8);
  if (d == WeightDType::kNvfp4 && PeakUnknown(hw, "fp4")) return CheckPeakSourced(hw, DType::kFp4);
  return Status::Ok();
}

// Fills what the spec leaves open and records it.
Status ResolveDefaults(const ModelSpec& m, const HardwareSpec& hw, InferenceSpec& s,
                       std::vector<Assumption>& assumed) {
  if (Status st = CheckPeaks(hw, s.weight_dtype); !st.ok()) return st;
  if (!s.profile_given) {
    auto p = LoadEngineProfile(s.engine);
    if (!p.ok()) return p.status();
    s.profile = p.value();
    assumed.push_back({"engine_profile", s.profile.id, s.profile.provenance});
    const std::string fitted = infer::ApplyHardwareCalibration(s.profile, hw);
    if (m.is_moe())
      assumed.push_back({"moe_calibration", fitted.empty() ? "shared" : fitted,
                         fitted.empty() ? "the engine's MoE constants fitted on every GPU's rows "
                                          "(none fitted for this hardware: borrowed)"
                                        : "the engine's MoE constants fitted on this GPU's rows "
                                          "(or, where it has none, on a preset of the same GPU "
                                          "die: gpu_dies)"});
  }
  EngineProfile& e = s.profile;
  // Inert without drafted tokens (issue 11: taken without a word); the CLI also warns.
  if (s.spec_tokens <= 0 && s.acceptance_rate > 0)
    assumed.push_back({"acceptance_rate", "ignored (" + Num(s.acceptance_rate) + ")",
                       "no speculative decoding without spec_tokens: no drafted token to accept"});
  if (s.gpu_memory_utilization > 0)
    e.gpu_memory_utilization = s.gpu_memory_utilization;
  else
    assumed.push_back({"gpu_memory_utilization", Num(e.gpu_memory_utilization),
                       e.kv_fraction_of_free ? "engine default: KV pool fraction of free memory"
                                             : "engine default"});
  if (s.prefix_cache_hit < 0) {
    s.prefix_cache_hit = 0;
    assumed.push_back({"prefix_cache_hit", "0",
                       "no prompt prefix found in the cache: every prompt token is prefilled "
                       "(the hit rate depends on the traffic; --prefix-cache-hit)"});
  }
  if (s.max_num_seqs > 0)
    e.max_num_seqs = s.max_num_seqs;
  else if (s.batch == 0)
    assumed.push_back({"max_num_seqs", std::to_string(e.max_num_seqs), "engine default"});
  if (!s.kv_dtype_given) {
    // ModelOpt FP8 / NVFP4 checkpoints quantise the KV cache to FP8 (kv_cache_quant_algo FP8 in
    // hf_quant_config.json) and TensorRT-LLM follows the checkpoint; other engines keep the
    // model's activation dtype unless asked (vLLM kv_cache_dtype "auto").
    const bool fp_ckpt =
        s.weight_dtype == WeightDType::kFp8 || s.weight_dtype == WeightDType::kNvfp4;
    s.kv_dtype = fp_ckpt && e.id == "tensorrt-llm" ? KvDType::kFp8 : KvDType::kBf16;
    assumed.push_back({"kv_dtype", std::string(KvDTypeName(s.kv_dtype)),
                       fp_ckpt && e.id == "tensorrt-llm"
                           ? "TensorRT-LLM with a ModelOpt FP8/FP4 checkpoint: FP8 KV cache"
                           : "the model's activation precision (kv_cache_dtype auto)"});
  }
  if (s.prefix_cache_hit > 0)
    assumed.push_back({"prefix_sharing", "one prefix shared by every sequence",
                       "the cached prefix's KV blocks are held once for all concurrent sequences "
                       "(a common system prompt); per-conversation prefixes share less"});
  if (m.windowed_layers() > 0)
    assumed.push_back({"windowed_kv", e.windowed_kv_trim ? "window only" : "whole sequence",
                       e.windowed_kv_trim
                           ? "the engine frees KV outside the window / current chunk of the "
                             "windowed layers (vLLM hybrid KV cache manager)"
                           : "the engine caches every layer's whole sequence"});
  if (m.is_moe() && s.ep == 0) {
    s.ep = s.tp;
    assumed.push_back({"ep", std::to_string(s.ep), "experts spread over the tp GPUs (ep = tp)"});
  }
  if (s.attention_dp < 0) {
    s.attention_dp = m.is_moe() && s.tp > 1 && e.moe_attention_dp ? 1 : 0;
    if (s.attention_dp == 1)
      assumed.push_back({"attention_dp", "true",
                         "engine default for MoE: attention data-parallel, experts over ep = tp"});
  }
  const bool wonly = s.weight_dtype == WeightDType::kInt4 || s.weight_dtype == WeightDType::kInt8;
  if (wonly && s.quant == QuantMethod::kNone) {
    s.quant = QuantMethod::kGptq;
    assumed.push_back(
        {"quant", "gptq",
         "weight-only integer weights: GPTQ-style groups of " + std::to_string(s.quant_group)});
  }
  return Status::Ok();
}

// Peak working set of one iteration of `tokens` tokens on one GPU: the residual stream, the QKV
// and MLP intermediates (BF16) and the FP32 logits of the sequences that sample.
double ActivationBytes(const ModelSpec& m, int tp, double tokens, double sampling_seqs) {
  const double ffn = std::max<double>(m.ffn, m.moe.expert_ffn * std::max(1, m.moe.top_k));
  const double per_token =
      4.0 * m.hidden + 3.0 * ffn / tp + (m.heads + 2.0 * m.kv_heads) * m.head_dim / tp;
  return 2.0 * tokens * per_token + 4.0 * sampling_seqs * m.vocab / tp;
}

struct Plan {
  Layout l;
  StageShape st;
  double weights = 0, act = 0, pool = 0, kv_tok_gpu = 0, kv_seq_gpu = 0;
  double max_seqs = 0;
  double prefix_hit = 0;   // fraction of each prompt already cached (not prefilled)
  double host_factor = 1;  // the host CPU's time for the engine's host work / x86's
  // KV bytes per GPU of one sequence at prompt + output beyond the shared prefix, and of the
  // shared prefix (held once for every sequence).
  double seq_bytes = 0, shared_bytes = 0;
};

double RoundUp(double x, double block) {
  return std::ceil(x / block) * block;
}

// Sequences the KV pool holds: the shared prefix once, then each sequence's own blocks.
double MaxSeqs(const Plan& p) {
  return p.seq_bytes > 0 ? std::floor(std::max(0.0, p.pool - p.shared_bytes) / p.seq_bytes) : 0;
}

// KV per GPU of a sequence of `len` tokens, `prefix` of them a prompt prefix that every
// sequence shares. Paged blocks: positions round up to whole blocks. With windowed_kv_trim the
// sliding-window / chunked-local layers keep only their window / current chunk
// (graph::HeldKvTokens). Prefix caching (vLLM automatic prefix caching, TensorRT-LLM KV block
// reuse) shares only full blocks, by hash of their tokens; the shared blocks are counted in the
// full-attention layers only (a windowed layer may drop the prefix's blocks once out of its
// window, so its share is not assumed).
void SetSequenceKv(Plan& p, const EngineProfile& e, double len, double prefix) {
  const ModelSpec& m = *p.l.m;
  const double block = e.kv_block_tokens;
  const bool trim = e.windowed_kv_trim && m.windowed_layers() > 0;
  const double held = RoundUp(trim ? graph::HeldKvTokens(m, len) : len, block);
  const double full_layers =
      trim ? 1.0 - static_cast<double>(m.windowed_layers()) / std::max(1, m.layers) : 1.0;
  const double shared = std::floor(prefix / block) * block * full_layers;
  p.shared_bytes = shared * p.kv_tok_gpu;
  p.seq_bytes = std::max(block, held - shared) * p.kv_tok_gpu;
  p.max_seqs = MaxSeqs(p);
}

Plan MakePlan(const ModelSpec& m, const HardwareSpec& hw, const InferenceSpec& s) {
  Plan p;
  p.l = {&m,         &hw,
         &s.profile, s.tp,
         s.pp,       s.weight_dtype,
         s.quant,    s.quant_group,
         s.kv_dtype, s.attention_dp == 1};
  p.st = infer::HeaviestStage(m, s.pp);
  p.prefix_hit = std::max(0.0, s.prefix_cache_hit);
  p.host_factor = infer::HostCpuOf(hw).time_factor;
  p.weights = infer::StageWeightBytes(p.l, p.st).bytes;
  const EngineProfile& e = s.profile;
  const double budget =
      std::min<double>(e.max_num_batched_tokens, std::max(1.0, s.batch) * s.prompt_len);
  p.act = ActivationBytes(m, s.tp, budget, s.batch > 0 ? s.batch : e.max_num_seqs);
  // CUDA graphs: vLLM captures after sizing the KV pool, out of the (1 - utilization) headroom
  // ("If out-of-memory error occurs during cudagraph capture, consider decreasing
  // gpu_memory_utilization", vLLM's capture log); an engine sizing KV from free memory sees them.
  const double free = hw.hbm_bytes - p.weights - p.act - kRuntimeOverheadBytes - e.cuda_graph_bytes;
  p.pool = e.kv_fraction_of_free ? e.gpu_memory_utilization * free
                                 : e.gpu_memory_utilization * hw.hbm_bytes - p.weights - p.act -
                                       kRuntimeOverheadBytes;
  p.pool = std::max(0.0, p.pool);
  p.kv_tok_gpu = infer::StageKvBytesPerToken(p.l, p.st);
  const double len = s.prompt_len + s.output_len;
  const double held = e.reserve_full_sequence ? len : s.prompt_len + s.output_len / 2;
  p.kv_seq_gpu = RoundUp(held, e.kv_block_tokens) * p.kv_tok_gpu;
  SetSequenceKv(p, e, len, s.prompt_len * p.prefix_hit);
  return p;
}

// One stage-to-stage activation transfer of `tokens` tokens.
double P2p(const Plan& p, double tokens) {
  if (p.l.pp <= 1) return 0;
  const cost::Placement pl = cost::Place(2, p.l.tp, p.l.hw->scaleup_domain);
  return cost::CollectiveTime(*p.l.hw, graph::Coll::kP2P, pl, tokens * p.l.m->hidden * 2.0);
}

// Whether the host's work of one iteration hides behind the GPU's: the overlap scheduler runs
// only without pipeline parallelism (TensorRT-LLM 1.0 PyExecutor: pp_size > 1 selects
// _executor_loop_pp whatever disable_overlap_scheduler says; _executor_loop_overlap is the
// pp_size == 1 loop; tensorrt_llm/_torch/pyexecutor/py_executor.py).
bool HostOverlapped(const Plan& p) {
  return p.l.engine->overlap_scheduler && p.l.pp == 1;
}

// The engine's host work for one iteration over `seqs` sequences on one rank (under attention
// DP each rank schedules its own share), added to the GPU time or, with an overlap scheduler,
// hidden behind it: the iteration takes the longer of the two. Host work scales with the host
// CPU's time factor (HostCpuOf: Grace vs the x86 hosts the constants were fitted on).
void AddHost(const Plan& p, double seqs, PhaseBreakdown& r) {
  const EngineProfile& e = *p.l.engine;
  const double host = p.host_factor * (e.step_overhead_s + seqs / p.l.attn_dp() * e.seq_overhead_s);
  const double gpu = r.compute_s + r.hbm_s + r.comm_s + r.launch_s;
  r.launch_s += HostOverlapped(p) ? std::max(0.0, host - gpu) : host;
  r.total_s = r.compute_s + r.hbm_s + r.comm_s + r.launch_s;
}

// One iteration of the whole pipeline over `w`: with pipelining the work is split into pp
// micro-batches that keep all stages busy; otherwise stages run in turn.
PhaseBreakdown Round(const Plan& p, const Work& w) {
  const double seqs = w.dec_seqs + w.pre_seqs;
  const int micro = p.l.engine->pipelined_pp
                        ? static_cast<int>(std::max(1.0, std::min<double>(p.l.pp, seqs)))
                        : 1;
  Work part = w;
  part.dec_seqs /= micro;
  part.pre_seqs /= micro;
  PhaseBreakdown b = infer::StageIteration(p.l, p.st, part);
  const double pp = p.l.pp;
  PhaseBreakdown r;
  r.compute_s = pp * b.compute_s;
  r.hbm_s = pp * b.hbm_s;
  r.comm_s = pp * b.comm_s + pp * P2p(p, part.tokens());
  r.launch_s = pp * b.launch_s;
  AddHost(p, seqs, r);
  return r;
}

// Every sequence of the batch advances one token.
PhaseBreakdown DecodeRound(const Plan& p, double batch, double ctx) {
  Work w;
  w.dec_seqs = batch;
  w.dec_ctx = ctx;
  return Round(p, w);
}

// Speculative decoding: the draft's plan (same GPUs and layout), tokens proposed, acceptance.
struct Speculation {
  const Plan* draft = nullptr;
  int k = 0;
  double a = 0;
  // Expected tokens a target step yields (Leviathan et al. 2023, eq. 1).
  double TokensPerStep() const { return a >= 1 ? k + 1.0 : (1 - std::pow(a, k + 1)) / (1 - a); }
};

// Time per output token of every sequence of the batch: one decode step, or with speculation
// k draft decode steps plus one target forward verifying k + 1 tokens per sequence (its weights
// and KV cache read once, the GEMMs over batch x (k + 1) tokens, attention of the k drafted
// tokens over the context), divided by the expected tokens per round.
PhaseBreakdown DecodeToken(const Plan& p, const Speculation& sp, double batch, double ctx) {
  if (sp.draft == nullptr) return DecodeRound(p, batch, ctx);
  Work w;
  w.dec_seqs = batch;
  w.dec_ctx = ctx;
  w.pre_seqs = batch;
  w.pre_len = sp.k;
  w.pre_cached = ctx;
  const PhaseBreakdown verify = Round(p, w);
  const PhaseBreakdown draft = DecodeRound(*sp.draft, batch, ctx);
  const double per = 1.0 / sp.TokensPerStep();
  PhaseBreakdown r;
  r.compute_s = per * (verify.compute_s + sp.k * draft.compute_s);
  r.hbm_s = per * (verify.hbm_s + sp.k * draft.hbm_s);
  r.comm_s = per * (verify.comm_s + sp.k * draft.comm_s);
  r.launch_s = per * (verify.launch_s + sp.k * draft.launch_s);
  r.total_s = per * (verify.total_s + sp.k * draft.total_s);
  return r;
}

// The draft's weights and KV share the target's GPUs: less room for the KV pool.
void AddDraft(Plan& p, const Plan& d) {
  p.weights += d.weights;
  p.pool = std::max(0.0, p.pool - d.weights);
  p.kv_tok_gpu += d.kv_tok_gpu;
  p.kv_seq_gpu += d.kv_seq_gpu;
  p.seq_bytes += d.seq_bytes;
  p.shared_bytes += d.shared_bytes;
  p.max_seqs = MaxSeqs(p);
}

// The sequences one replica's schedulers admit: under attention DP every rank runs its own
// scheduler with the engine's caps (TensorRT-LLM's attention-DP ranks each take max_batch_size
// requests and max_num_tokens tokens an iteration: its DeepSeek-R1 perf commands run
// --concurrency 8 x --max_batch_size over 8 ranks), so the replica holds attn_dp times them.
double ReplicaSeqCap(const Plan& p) {
  return static_cast<double>(p.l.engine->max_num_seqs) * p.l.attn_dp();
}

// Offline maximum load (every request queued): in steady state the batch decodes while the
// requests that replace finished ones prefill in the same iterations (in-flight batching fuses
// prefill chunks and decode tokens; one weight read serves both). A period of `output` tokens
// per sequence holds batch x (prompt + output) tokens in at least `output` iterations of at
// most max_num_batched_tokens each. Returns the seconds of one period.
PhaseBreakdown OfflinePeriod(const Plan& p, double batch, double prompt, double output) {
  const double budget = p.l.engine->max_num_batched_tokens;              // per scheduler (rank)
  const double cached = prompt * p.prefix_hit, fresh = prompt - cached;  // prefix-cache hits
  const double iters = std::max(output, batch * (fresh + output) / (budget * p.l.attn_dp()));
  Work w;
  w.dec_seqs = batch * output / iters;
  w.dec_ctx = prompt + output / 2;
  w.pre_len = std::min(fresh, budget);
  w.pre_seqs = batch * fresh / iters / w.pre_len;
  w.pre_cached = cached + (fresh - w.pre_len) / 2;
  PhaseBreakdown r = Round(p, w);
  r.compute_s *= iters;
  r.hbm_s *= iters;
  r.comm_s *= iters;
  r.launch_s *= iters;
  r.total_s *= iters;
  return r;
}

// Prefill of `seqs` prompts of `prompt` tokens in iterations of at most max_num_batched_tokens
// (chunked prefill); `exact` counts fractional iterations (throughput) instead of whole ones.
// A prefix-cache hit leaves only the uncached tail to compute, attending over the cached head
// (vLLM's scheduler schedules num_tokens - num_computed_tokens of a request).
PhaseBreakdown Prefill(const Plan& p, double seqs, double prompt, bool exact) {
  const double budget = p.l.engine->max_num_batched_tokens;
  const double cached = prompt * p.prefix_hit, len = prompt - cached;
  Work w;
  w.pre_cached = cached;
  if (len <= budget) {
    w.pre_seqs = std::min(seqs, std::floor(budget / len));
    w.pre_len = len;
  } else {
    w.pre_seqs = 1;
    w.pre_len = budget;
    w.pre_cached += (len - budget) / 2;
  }
  double iters = seqs * len / w.tokens();
  if (!exact) iters = std::ceil(iters);
  const PhaseBreakdown b = infer::StageIteration(p.l, p.st, w);
  // Pipelined: iterations stream through the stages (fill + one stage time per iteration).
  const double pp = p.l.pp;
  const double stage_times = p.l.engine->pipelined_pp ? iters + pp - 1 : iters * pp;
  PhaseBreakdown r;
  r.compute_s = stage_times * b.compute_s;
  r.hbm_s = stage_times * b.hbm_s;
  r.comm_s = stage_times * (b.comm_s + P2p(p, w.tokens()));
  r.launch_s = stage_times * b.launch_s;
  // Host work per iteration (each iteration schedules w.pre_seqs prompts).
  PhaseBreakdown host;
  AddHost(p, w.pre_seqs, host);
  if (HostOverlapped(p))
    r.launch_s += iters * std::max(0.0, host.total_s - b.total_s * (stage_times / iters));
  else
    r.launch_s += iters * host.total_s;
  r.total_s = r.compute_s + r.hbm_s + r.comm_s + r.launch_s;
  return r;
}

void NameBound(PhaseBreakdown& b) {
  const double m = std::max({b.compute_s, b.hbm_s, b.comm_s, b.launch_s});
  b.bound = m == b.compute_s ? "compute" : m == b.hbm_s ? "hbm" : m == b.comm_s ? "comm" : "launch";
}

double CrossoverBatch(const Plan& p) {
  const ModelSpec& m = *p.l.m;
  const HardwareSpec& hw = *p.l.hw;
  const double shape = cost::GemmEfficiency(hw, 1e9, m.hidden, m.hidden, 1) / hw.eff.gemm_max;
  const double rate = infer::ComputePeak(hw, p.l.wdtype) * p.l.engine->gemm_efficiency * shape;
  const double bw = hw.hbm_bw_bytes_per_s * p.l.engine->decode_hbm_fraction;
  return rate * WeightBytesPerParam(p.l.wdtype, p.l.quant, p.l.group) / (2.0 * bw);
}

// Online serving: concurrency, latencies and throughput at the spec's request rate; beyond
// the layout's capacity the report is saturated and carries the offline (maximum) throughput.
void ServeOnline(const Plan& p, const Speculation& sp, const InferenceSpec& s, double max_batch,
                 InferenceReport& r) {
  infer::RateInputs in;
  in.rate = s.request_rate;
  in.replicas = r.replicas;
  in.output_len = s.output_len;
  in.max_seqs = max_batch;
  const PhaseBreakdown one = Prefill(p, 1, s.prompt_len, false);
  in.prefill_one_s = one.total_s;
  in.prefill_iters_one = std::max(
      1.0, std::ceil(s.prompt_len * (1 - p.prefix_hit) / p.l.engine->max_num_batched_tokens));
  in.prefill_iter_s = one.total_s / in.prefill_iters_one;
  const double ctx = s.prompt_len + s.output_len / 2;
  in.decode_step = [&p, &sp, ctx](double n) { return DecodeToken(p, sp, n, ctx).total_s; };
  r.online = true;
  r.serving = infer::ServeAtRate(in);
  r.batch = std::min(r.serving.concurrency, max_batch);
  r.decode = DecodeToken(p, sp, std::max(1.0, r.batch), ctx);
  r.prefill = one;
  r.ttft_s = r.serving.ttft_p50_s;
  r.tpot_s = r.serving.tpot_p50_s;
  if (!r.serving.saturated) {
    r.output_tokens_per_s = s.request_rate * s.output_len;
    return;
  }
  const double period = OfflinePeriod(p, max_batch, s.prompt_len, s.output_len).total_s;
  r.output_tokens_per_s = max_batch * s.output_len / period * r.replicas;
}

}  // namespace

Result<InferenceReport> SimulateInference(const ModelSpec& m, const HardwareSpec& hw,
                                          InferenceSpec s) {
  if (s.disaggregated()) return infer::SimulateDisaggregated(m, hw, s);
  if (Status st = CheckSpec(m, s); !st.ok()) return st;
  InferenceReport r;
  if (Status st = ResolveDefaults(m, hw, s, r.assumed); !st.ok()) return st;
  Plan p = MakePlan(m, hw, s);
  const infer::HostCpu cpu = infer::HostCpuOf(hw);
  r.assumed.push_back({"host_cpu", cpu.cpu + " (host work x" + Num(cpu.time_factor) + ")",
                       cpu.provenance.empty() ? "x86 host: the engines' host constants' reference"
                                              : cpu.provenance});
  // The draft: same layout, precisions and engine (its own plan over the same GPUs).
  InferenceSpec ds = s;
  if (ds.draft && !ds.draft->is_moe()) ds.attention_dp = 0;
  Plan draft;
  Speculation sp;
  if (s.spec_tokens > 0) {
    draft = MakePlan(*ds.draft, hw, ds);
    AddDraft(p, draft);
    sp = {&draft, s.spec_tokens, s.acceptance_rate};
    r.spec_tokens_per_step = sp.TokensPerStep();
    r.spec_tokens = s.spec_tokens;
    r.acceptance_rate = s.acceptance_rate;
    r.draft_model = ds.draft->name;
  }
  r.profile = s.profile;
  r.replicas = s.gpus / (s.tp * s.pp);
  r.tp = s.tp;
  r.pp = s.pp;
  r.kv_dtype = s.kv_dtype;
  r.weight_dtype = s.weight_dtype;
  r.expert_parallel = s.attention_dp == 1;
  r.weights_bytes = p.weights;
  r.activation_bytes = p.act;
  r.kv_pool_bytes = p.pool;
  r.kv_bytes_per_token = p.kv_tok_gpu * s.tp * s.pp;
  r.max_concurrent_sequences = p.max_seqs;
  r.crossover_batch = CrossoverBatch(p);
  const double B = s.batch > 0 ? s.batch : std::min(ReplicaSeqCap(p), p.max_seqs);
  if (s.batch == 0 && s.request_rate == 0)
    r.assumed.push_back(
        {"batch", Num(B),
         "offline maximum load: min(max_num_seqs (per attention-DP rank), KV pool / "
         "KV per sequence at prompt + output)"});
  r.batch = B;
  const double len = s.prompt_len + s.output_len;
  r.kv_cache_bytes = (B * p.seq_bytes + p.shared_bytes) * s.tp * s.pp * r.replicas;
  const bool pool_limited = s.profile.id != "transformers";
  const double fixed = p.weights + p.act + kRuntimeOverheadBytes + s.profile.cuda_graph_bytes;
  r.fits = fixed < hw.hbm_bytes && B >= 1 &&
           (!pool_limited || B <= std::max(p.max_seqs, 0.0) || s.batch == 0);
  if (!pool_limited) r.fits = r.fits && fixed + B * len * p.kv_tok_gpu <= hw.hbm_bytes;
  if (!r.fits) {
    r.why_not = "weights " + Num(units::BytesToGiB(p.weights)) + " GiB + activations " +
                Num(units::BytesToGiB(p.act)) + " GiB leave room for " + Num(p.max_seqs) +
                " sequences of " + Num(len) + " tokens per GPU of " +
                Num(units::BytesToGiB(hw.hbm_bytes)) + " GiB";
    if (B < 1) return r;
  }
  if (s.request_rate > 0) {
    ServeOnline(p, sp, s, std::min(ReplicaSeqCap(p), p.max_seqs), r);
    r.kv_cache_bytes *= r.batch / B;  // the concurrency the rate sustains
  } else if (s.batch > 0) {
    // The scheduler cap that serves this batch (the launch line's --max-num-seqs).
    r.profile.max_num_seqs = static_cast<int>(std::ceil(B));
    r.decode = DecodeToken(p, sp, B, s.prompt_len + s.output_len / 2);
    r.tpot_s = r.decode.total_s;
    r.prefill = Prefill(p, B, s.prompt_len, false);
    r.ttft_s = r.prefill.total_s;
    r.output_tokens_per_s = B * s.output_len / (r.ttft_s + s.output_len * r.tpot_s) * r.replicas;
  } else {
    // Offline: every admitted sequence is prefilled (chunks interleaved with decode steps) and
    // decoded for output_len steps; the batch stays full while requests are queued.
    r.decode = DecodeRound(p, B, s.prompt_len + s.output_len / 2);
    r.tpot_s = r.decode.total_s;
    r.prefill = Prefill(p, B, s.prompt_len, true);
    r.ttft_s = Prefill(p, 1, s.prompt_len, false).total_s;
    const double period = OfflinePeriod(p, B, s.prompt_len, s.output_len).total_s;
    r.output_tokens_per_s = B * s.output_len / period * r.replicas;
    r.tpot_s = period / s.output_len;
  }
  NameBound(r.decode);
  NameBound(r.prefill);
  r.output_tokens_per_s_per_gpu = r.output_tokens_per_s / s.gpus;
  r.launch_command = LaunchCommand(m.name, r);
  infer::ApplyInferenceBand(r, m.is_moe());
  return r;
}

namespace {
// The plan of one replica of `layout` (the RL rollout engines): a request of `prompt_len` tokens,
// `batch` sequences.
Result<Plan> LayoutPlan(const ModelSpec& m, const HardwareSpec& hw, const DecodeLayout& layout,
                        InferenceSpec& s, double prompt_len, double batch = 1) {
  s.tp = layout.tp;
  s.pp = layout.pp;
  s.ep = layout.ep;
  s.gpus = s.tp * s.pp;
  s.weight_dtype = layout.weight_dtype;
  s.kv_dtype = layout.kv_dtype;
  s.kv_dtype_given = true;
  s.engine = layout.engine;
  s.prompt_len = std::max(1.0, prompt_len);
  s.output_len = 1;
  s.batch = batch;
  if (Status st = CheckSpec(m, s); !st.ok()) return st;
  std::vector<Assumption> ignored;
  if (Status st = ResolveDefaults(m, hw, s, ignored); !st.ok()) return st;
  if (layout.eager_host_us_per_kernel > 0) {
    // enforce_eager: no CUDA graphs (nor their memory); the host issues every kernel.
    s.profile.cuda_graphs = false;
    s.profile.cuda_graph_bytes = 0;
    s.profile.eager_host_s_per_kernel = layout.eager_host_us_per_kernel * 1e-6;
  }
  return MakePlan(m, hw, s);
}
}  // namespace

Result<double> DecodeStepTime(const ModelSpec& m, const HardwareSpec& hw,
                              const DecodeLayout& layout, double batch, double context_len) {
  if (!(batch >= 1)) return Status::Invalid("batch", "must be >= 1");
  InferenceSpec s;
  auto p = LayoutPlan(m, hw, layout, s, context_len, batch);
  if (!p.ok()) return p.status();
  return DecodeRound(p.value(), batch, context_len).total_s;
}

Result<double> PrefillTime(const ModelSpec& m, const HardwareSpec& hw, const DecodeLayout& layout,
                           double seqs, double prompt_len) {
  if (!(seqs >= 1)) return Status::Invalid("seqs", "must be >= 1");
  InferenceSpec s;
  auto p = LayoutPlan(m, hw, layout, s, prompt_len);
  if (!p.ok()) return p.status();
  return Prefill(p.value(), seqs, s.prompt_len, true).total_s;
}

Result<ReplicaMemory> DecodeReplicaMemory(const ModelSpec& m, const HardwareSpec& hw,
                                          const DecodeLayout& layout) {
  InferenceSpec s;
  auto p = LayoutPlan(m, hw, layout, s, 1);
  if (!p.ok()) return p.status();
  return ReplicaMemory{p->weights, p->kv_tok_gpu};
}

}  // namespace trainsim
