// Inference: prefill and decode over a KV cache, the KV pool and offline / fixed-batch serving
// throughput (docs/INFERENCE.md). One representative GPU per pipeline stage, as for training.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainsim/hardware.h"
#include "trainsim/model.h"
#include "trainsim/report.h"
#include "trainsim/status.h"

namespace trainsim {

// Stored weight precision. Weight-only formats (int8, int4) dequantise to BF16 inside the GEMM:
// compute stays BF16, only the bytes read shrink. fp8 / nvfp4 also compute in that precision.
enum class WeightDType { kBf16, kFp16, kFp8, kInt8, kInt4, kNvfp4 };
// KV-cache element precision (int4 where engines support it).
enum class KvDType { kBf16, kFp16, kFp8, kInt8, kInt4 };

std::string_view WeightDTypeName(WeightDType d);
std::string_view KvDTypeName(KvDType d);
// "bf16", "bfloat16", "fp16", "float16", "fp8", "int8", "int4", "nf4" (= int4 storage),
// "nvfp4", "fp4".
Result<WeightDType> ParseWeightDType(std::string_view s);
// "bf16", "fp16", "fp8", "int8", "int4", "auto" is not accepted (the caller picks a default).
Result<KvDType> ParseKvDType(std::string_view s);

// An inference engine as people run it: launch mode and the scheduler/KV defaults that change
// the answer, plus its calibrated per-step costs (data/inference_engines.json, with provenance).
struct EngineProfile {
  std::string id;           // tensorrt-llm | vllm | sglang | transformers
  bool cuda_graphs = true;  // decode steps replayed from CUDA graphs (else eager launches)
  // Memory the captured CUDA graphs keep (their private pool), per GPU; vLLM takes it outside
  // gpu_memory_utilization's budget, engines sizing KV from free memory before it.
  double cuda_graph_bytes = 0;
  double step_overhead_s = 0;  // host work per iteration (scheduler, sampling, detokenise)
  // Host work per sequence per iteration (request bookkeeping, sampling and stop checks in the
  // engine's Python loop): bounds small models at large batch.
  double seq_overhead_s = 0;
  // The host prepares iteration i+1 while the GPU runs i (TensorRT-LLM's overlap scheduler,
  // SGLang's overlap schedule): an iteration takes max(GPU, host) instead of their sum.
  bool overlap_scheduler = false;
  double layer_overhead_s = 0;  // eager host issue per transformer layer (0 under graphs)
  // Eager engines: host issue per kernel of the layer (0: layer_overhead_s alone bounds it).
  double eager_host_s_per_kernel = 0;
  // Extra time per weight-only-quantised GEMM kernel (dequantisation, host work of the quant
  // library), by scheme: GPTQ int4 and int8 use different kernels (AutoGPTQ: ExLlama v2 for
  // 4 bits, the CUDA/Triton fallback for 8), AWQ its own.
  double gptq4_gemm_overhead_s = 0;
  double gptq8_gemm_overhead_s = 0;
  double awq_gemm_overhead_s = 0;
  double kernel_latency_s = 4e-6;  // fixed cost per kernel on top of its roofline time
  // Grouped KV heads expanded to every query head before attention and the cache appended by
  // concatenation (transformers' repeat_kv + DynamicCache): a decode step moves the cache
  // 3 + 2 x heads/kv_heads times instead of once.
  bool repeat_kv = false;
  double decode_hbm_fraction = 0.8;  // achieved HBM bandwidth / nominal in decode GEMMs (weights)
  // Achieved HBM bandwidth / nominal of the paged-attention decode kernel reading the KV cache
  // (its own kernel: XQA / FlashInfer / PagedAttention); unset (<= 0): decode_hbm_fraction.
  double attention_hbm_fraction = 0;
  // Achieved HBM bandwidth / nominal of the grouped MoE expert GEMMs reading their weights (the
  // engine's fused-MoE kernels: few tokens per expert, per-expert tiles and scales); unset
  // (<= 0): decode_hbm_fraction.
  double moe_hbm_fraction = 0;
  // Achieved fraction of the precision's peak by the grouped MoE expert GEMMs on large problems
  // (the fused-MoE kernels: routing, per-expert tiles and scales); unset (<= 0): gemm_efficiency.
  double moe_gemm_efficiency = 0;
  // Achieved fraction of the datasheet dense tensor peak of the GEMM's compute precision (BF16,
  // FP8 or FP4) by the engine's GEMM kernels on large, well-shaped problems; the preset's shape
  // law (cost::GemmEfficiency / gemm_max) scales it for small n, k and grouped GEMMs.
  double gemm_efficiency = 0.6;
  // The KV pool keeps, in sliding-window and chunked-local layers, only the blocks the window
  // or current chunk still needs (vLLM's hybrid KV cache manager, SlidingWindowSpec /
  // ChunkedLocalAttentionSpec); else every layer caches the whole sequence.
  bool windowed_kv_trim = false;
  int kv_block_tokens = 16;           // paged-KV block size
  int max_num_seqs = 256;             // concurrent sequences (max_batch_size)
  int max_num_batched_tokens = 8192;  // tokens per iteration (chunked-prefill budget)
  // Memory for weights + KV + activations: a fraction of HBM (vLLM gpu_memory_utilization) or,
  // when kv_fraction_of_free, the KV pool = fraction x memory left after weights and
  // activations (TensorRT-LLM kv_cache_free_gpu_mem_fraction).
  double gpu_memory_utilization = 0.9;
  bool kv_fraction_of_free = false;
  bool reserve_full_sequence = true;  // KV reserved for prompt + output at admission (no evict)
  bool pipelined_pp = true;           // pipeline stages work on different micro-batches at once
  // MoE models: attention (and dense layers) data-parallel over the tp GPUs, routed experts
  // expert-parallel (TensorRT-LLM enable_attention_dp, SGLang --enable-dp-attention).
  bool moe_attention_dp = false;
  // Under attention DP the MoE dispatch gathers the tokens already quantised to the checkpoint's
  // FP8 / NVFP4 (TensorRT-LLM's post-quant dispatch); else in BF16.
  bool moe_quantized_dispatch = false;
  std::string provenance;
};

// The engine profile whose id (or one of its aliases) occurs in `engine` ("vllm 0.6.3",
// "tensorrt-llm 1.0 (pytorch backend)", "hf transformers 4.46.0"); NotFound lists the ids.
Result<EngineProfile> LoadEngineProfile(std::string_view engine);
std::vector<std::string> ListEngineProfiles();

// Weight-only quantisation scheme (group scales): AWQ and GPTQ store an FP16 scale and a
// packed zero point per group of `group_size` input elements.
enum class QuantMethod { kNone, kGptq, kAwq };

// The largest prefix-cache hit fraction accepted: at least one prompt token is always computed
// (vLLM recomputes the last token of a fully cached prompt to produce its logits).
inline constexpr double kMaxPrefixCacheHit = 0.999;

// What is served and how it is laid out. Zero / negative values mean "assume" (listed in the
// report's `assumed`).
struct InferenceSpec {
  int gpus = 1;
  int tp = 1, pp = 1;
  int ep = 0;  // expert parallel size over the tp x (dp) GPUs of a replica; 0 = tp for MoE
  // -1 = the engine's default (EngineProfile::moe_attention_dp for MoE models), 0 = off, 1 = on:
  // attention and dense layers data-parallel over the tp GPUs, experts expert-parallel.
  int attention_dp = -1;
  double prompt_len = 0;
  double output_len = 0;
  // Concurrent sequences per replica; 0 = offline maximum load (all requests queued, the
  // scheduler's batch bounded by max_num_seqs, the KV pool and max_num_batched_tokens).
  double batch = 0;
  WeightDType weight_dtype = WeightDType::kBf16;
  QuantMethod quant = QuantMethod::kNone;
  int quant_group = 128;
  bool kv_dtype_given = false;
  KvDType kv_dtype = KvDType::kBf16;
  std::string engine = "vllm";
  EngineProfile profile;  // filled by SimulateInference from `engine` unless profile_given
  bool profile_given = false;
  // Requests per second arriving at the whole system (Poisson); > 0 selects online serving with
  // continuous batching (batch is then the concurrency that results, not an input).
  double request_rate = 0;
  double gpu_memory_utilization = 0;  // 0 = the engine's default
  // Fraction of each prompt whose KV is already in the engine's prefix cache (vLLM automatic
  // prefix caching, SGLang RadixAttention): only the rest is prefilled, attending over the cached
  // prefix. -1 = not given (0 assumed). The KV of the cached part is still held per sequence.
  double prefix_cache_hit = -1;
  int max_num_seqs = 0;  // 0 = the engine's default
  // Speculative decoding (Leviathan et al. 2023): a draft model proposes spec_tokens tokens per
  // sequence, the target verifies them in one forward and keeps each with acceptance_rate; a
  // target step then yields (1 - a^(k+1)) / (1 - a) tokens. The draft runs on the same GPUs with
  // the same tp / pp and precisions. Needs a fixed batch or a rate.
  std::optional<ModelSpec> draft;
  int spec_tokens = 0;
  double acceptance_rate = 0;
  // Disaggregated prefill/decode (DistServe, Zhong et al. OSDI 2024; vLLM / SGLang "PD
  // disaggregation", NVIDIA Dynamo): prefill_instances instances of prefill_tp x pp GPUs prefill
  // every prompt and send its KV cache over the NIC to one of decode_instances instances of
  // decode_tp x pp GPUs that only decode. 0 instances = colocated (the default). Then gpus must
  // be pp x (prefill_instances x prefill_tp + decode_instances x decode_tp) and batch is per
  // decode instance. prefill_tp / decode_tp 0 = tp.
  int prefill_instances = 0, decode_instances = 0;
  int prefill_tp = 0, decode_tp = 0;
  // Latency SLO for the goodput of a disaggregated report (0 = no bound): requests count as
  // good when the report's TTFT and TPOT (p50 under a rate) meet it.
  double slo_ttft_s = 0, slo_tpot_s = 0;
  bool disaggregated() const { return prefill_instances > 0 || decode_instances > 0; }
};

// The two pools of a disaggregated layout and the KV hand-off between them.
struct DisaggregatedServing {
  int prefill_instances = 0, decode_instances = 0;
  int prefill_tp = 1, decode_tp = 1;
  int prefill_gpus = 0, decode_gpus = 0;
  double kv_transfer_bytes = 0;          // one request's prompt KV, summed over the prefill GPUs
  double kv_transfer_bytes_per_gpu = 0;  // what each prefill GPU sends on its own NIC
  double kv_transfer_s = 0;              // per request: bytes per GPU / NIC bandwidth + latency
  double nic_bw_bytes_per_s = 0;         // per GPU per direction (hardware preset)
  double nic_latency_s = 0;
  double prefill_s = 0;            // the prefill part of TTFT (queue excluded)
  double prefill_utilization = 0;  // busy fraction of the prefill pool
  double decode_utilization = 0;   // served rate / the decode pool's maximum rate
  double requests_per_s = 0;       // whole system
  bool meets_slo = true;
  double goodput_requests_per_s_per_gpu = 0;  // requests/s per GPU when the SLO is met, else 0
  double goodput_tokens_per_s_per_gpu = 0;    // the same in output tokens
};

// Where a phase's time goes: the largest of these names its bound.
struct PhaseBreakdown {
  double compute_s = 0;  // GEMM/attention ops bounded by FLOPs
  double hbm_s = 0;      // ops bounded by HBM bytes (weights, KV, activations)
  double comm_s = 0;     // TP all-reduce, EP all-to-all, PP point-to-point
  double launch_s = 0;   // kernel floors and host overhead
  double total_s = 0;
  std::string bound;  // compute | hbm | comm | launch
};

// Online serving at a request rate (docs/INFERENCE.md, "Serving at a rate").
struct ServingLatency {
  double rate = 0;         // requests/s, whole system
  double concurrency = 0;  // sequences decoding together per replica (Little's law)
  double ttft_p50_s = 0, ttft_p99_s = 0;
  double tpot_p50_s = 0, tpot_p99_s = 0;  // inter-token latency
  double e2e_p50_s = 0;
  bool saturated = false;  // the rate exceeds what the layout sustains: queues grow without bound
};

// 80 % band of an inference prediction (docs/VALIDATION.md, "Inference band"): the headline
// figures x (1 - rel_below) .. x (1 + rel_above) = x e^-b .. x e^b, b the 80th percentile of
// |ln(measured / predicted)| over the held-out inference cases of `regime` (the
// "uncertainty" table of data/inference_engines.json); cases = how many. Empty regime: none.
struct InferenceBand {
  std::string regime;
  double rel_below = 0, rel_above = 0;
  int cases = 0;
};

struct InferenceReport {
  double ttft_s = 0;  // prefill of one admitted batch (fixed batch) / mean over the run (offline)
  double tpot_s = 0;  // mean time between output tokens of one sequence
  double output_tokens_per_s = 0;  // whole system (all replicas)
  double output_tokens_per_s_per_gpu = 0;
  double batch = 0;               // sequences decoded together per replica
  double weights_bytes = 0;       // per GPU (largest stage)
  double kv_bytes_per_token = 0;  // whole model, all layers, summed over the GPUs of a replica
  double kv_cache_bytes = 0;      // KV of the batch at prompt + output, summed over GPUs
  double kv_pool_bytes = 0;       // per GPU
  double activation_bytes = 0;    // per GPU, peak working set of one iteration
  double max_concurrent_sequences = 0;  // per replica, at prompt + output length
  bool fits = true;
  std::string why_not;
  PhaseBreakdown prefill, decode;  // prefill of the batch; one decode step at mean context
  double crossover_batch = 0;      // decode batch where FLOPs time reaches weight-read time
  bool online = false;             // request_rate > 0: `serving` holds the latencies
  ServingLatency serving;
  int replicas = 1;
  int tp = 1, pp = 1;  // the layout simulated (after defaults)
  KvDType kv_dtype = KvDType::kBf16;
  WeightDType weight_dtype = WeightDType::kBf16;
  // Speculative decoding: expected tokens per target step (0 = off), the draft and its settings.
  double spec_tokens_per_step = 0;
  int spec_tokens = 0;
  double acceptance_rate = 0;
  std::string draft_model;
  bool expert_parallel = false;  // MoE experts over the tp GPUs with data-parallel attention
  std::string launch_command;    // LaunchCommand for the engine (model name as given)
  bool disaggregated = false;    // `disagg` holds the pools (prefill / decode are theirs)
  DisaggregatedServing disagg;
  EngineProfile profile;
  std::vector<Assumption> assumed;
  // The band of the headline throughput and latencies (InferenceBand): a throughput's low end
  // is its value x (1 - rel_below); a latency's low end is its value / (1 + rel_above), so the
  // slow end of each is the same prediction.
  InferenceBand band;
  double output_tokens_per_s_low = 0, output_tokens_per_s_high = 0;
  double ttft_s_low = 0, ttft_s_high = 0;
  double tpot_s_low = 0, tpot_s_high = 0;
};

// "P:D" or the xPyD spelling ("2P4D", "1p1d"): P prefill and D decode instances, both >= 1;
// Invalid names `disaggregate`.
Status ParseDisaggregation(std::string_view text, InferenceSpec& s);

// Serving prediction; Invalid names the field and the rule. A layout that does not fit is an
// ordinary report with fits = false.
Result<InferenceReport> SimulateInference(const ModelSpec& m, const HardwareSpec& hw,
                                          InferenceSpec spec);

// KV-cache bytes per token of the whole model (all layers, one copy; MLA caches the compressed
// latent plus the rope key: (kv_lora_rank + qk_rope_head_dim) elements per layer).
double KvBytesPerToken(const ModelSpec& m, KvDType d);
// Expected distinct experts touched by `tokens` tokens routing top-k of E uniformly:
// E (1 - (1 - k/E)^tokens).
double ExpectedDistinctExperts(int experts, int top_k, double tokens);
// Stored bytes per parameter of a GEMM weight (scales included).
double WeightBytesPerParam(WeightDType d, QuantMethod q, int group);

// The layout RL generation needs: seconds of one decode step of `batch` sequences over a KV cache
// of `context_len` positions on one replica (tp x pp GPUs), with the engine's launch costs.
struct DecodeLayout {
  int tp = 1, pp = 1, ep = 0;
  WeightDType weight_dtype = WeightDType::kBf16;
  KvDType kv_dtype = KvDType::kBf16;
  std::string engine = "vllm";
  // > 0: the engine runs eager (vLLM enforce_eager, no CUDA graphs) and issues each kernel
  // from the host at this cost (microseconds), a floor under every layer's time.
  double eager_host_us_per_kernel = 0;
};
Result<double> DecodeStepTime(const ModelSpec& m, const HardwareSpec& hw,
                              const DecodeLayout& layout, double batch, double context_len);
// Seconds to prefill `seqs` prompts of `prompt_len` tokens on one replica, in chunked-prefill
// iterations of the engine's max_num_batched_tokens (RL generation's prefill phase).
Result<double> PrefillTime(const ModelSpec& m, const HardwareSpec& hw, const DecodeLayout& layout,
                           double seqs, double prompt_len);
// Bytes of the weights one GPU of the replica holds (the heaviest pipeline stage), and the KV
// bytes per cached token on that GPU.
struct ReplicaMemory {
  double weight_bytes = 0;
  double kv_bytes_per_token = 0;
};
Result<ReplicaMemory> DecodeReplicaMemory(const ModelSpec& m, const HardwareSpec& hw,
                                          const DecodeLayout& layout);

}  // namespace trainsim

namespace trainsim {
// The report as JSON (indent as nlohmann::json::dump): ttft_s, tpot_s, output_tokens_per_s,
// output_tokens_per_s_per_gpu, weights_bytes, kv_cache_bytes, max_concurrent_sequences, fits,
// memory {...}, prefill / decode {compute_s, hbm_s, comm_s, launch_s, total_s, bound}, engine,
// assumed [{field, value, why}].
std::string InferenceReportJson(const InferenceReport& r, int indent = 2);
// The engine's launch line for the report's layout and settings: `vllm serve MODEL
// --tensor-parallel-size ...`, SGLang `launch_server`, `trtllm-serve`; a comment for engines
// without a server (transformers).
std::string LaunchCommand(const std::string& model, const InferenceReport& r);
}  // namespace trainsim
