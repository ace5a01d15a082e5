// Closed-form checks of the inference model (docs/INFERENCE.md) and its invariants.
#include "trainsim/infer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "infer/step.h"
#include "trainsim/trainsim.h"
#include "validate/inference_case.h"

namespace trainsim {
namespace {

ModelSpec Model(const char* id) {
  return LoadModelPreset(id).value();
}
HardwareSpec Hw(const char* id) {
  return LoadHardwarePreset(id).value();
}

// An engine with no host or launch cost and the full nominal HBM bandwidth: the roofline alone.
EngineProfile IdealEngine() {
  EngineProfile e;
  e.id = "ideal";
  e.step_overhead_s = e.layer_overhead_s = e.kernel_latency_s = 0;
  e.decode_hbm_fraction = 1.0;
  e.kv_block_tokens = 1;
  return e;
}

InferenceSpec Spec(double batch, double prompt, double output) {
  InferenceSpec s;
  s.batch = batch;
  s.prompt_len = prompt;
  s.output_len = output;
  s.profile = IdealEngine();
  s.profile_given = true;
  return s;
}

TEST(Infer, KvBytesPerTokenLlama3_70bGqa) {
  // 2 (K, V) x 80 layers x 8 KV heads x 128 x 2 bytes.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Model("llama3-70b"), KvDType::kBf16), 327680.0);
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Model("llama3-70b"), KvDType::kFp8), 163840.0);
}

// Prefix caching: a prompt half in the cache prefills half its tokens. The GEMMs halve; the
// attention of the fresh half still reads the cached half's keys, so the time falls to a bit
// more than half, never below it. Not given: 0 is assumed and listed.
TEST(Infer, PrefixCacheHitsPrefillOnlyTheUncachedTail) {
  const ModelSpec m = Model("llama3.1-8b");
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  InferenceSpec s = Spec(1, 4096, 64);
  auto cold = SimulateInference(m, hw, s);
  ASSERT_TRUE(cold.ok()) << cold.status().message();
  bool listed = false;
  for (const Assumption& a : cold->assumed) listed |= a.field == "prefix_cache_hit";
  EXPECT_TRUE(listed);
  s.prefix_cache_hit = 0.5;
  auto warm = SimulateInference(m, hw, s);
  ASSERT_TRUE(warm.ok()) << warm.status().message();
  EXPECT_GT(warm->ttft_s, 0.5 * cold->ttft_s);
  EXPECT_LT(warm->ttft_s, 0.6 * cold->ttft_s);
  EXPECT_DOUBLE_EQ(warm->tpot_s, cold->tpot_s);  // decode reads the whole context either way
  s.prefix_cache_hit = 1.0;                      // nothing left to compute: refused by name
  auto all = SimulateInference(m, hw, s);
  ASSERT_FALSE(all.ok());
  EXPECT_EQ(all.status().field(), "prefix_cache_hit");
}

// CUDA graphs keep their own pool: an engine sizing KV from free memory (TensorRT-LLM) loses
// fraction x graph bytes of pool; vLLM captures out of its utilization headroom (pool unchanged).
TEST(Infer, CudaGraphMemoryComesOutOfFreeMemoryNotVllmsBudget) {
  const ModelSpec m = Model("llama3.1-8b");
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  for (const char* id : {"tensorrt-llm", "vllm"}) {
    InferenceSpec s = Spec(1, 1024, 64);
    s.profile = LoadEngineProfile(id).value();
    ASSERT_GT(s.profile.cuda_graph_bytes, 0) << id;
    auto with = SimulateInference(m, hw, s);
    s.profile.cuda_graph_bytes = 0;
    auto without = SimulateInference(m, hw, s);
    ASSERT_TRUE(with.ok() && without.ok()) << id;
    const EngineProfile e = LoadEngineProfile(id).value();
    const double lost = e.kv_fraction_of_free ? e.gpu_memory_utilization * e.cuda_graph_bytes : 0;
    EXPECT_NEAR(without->kv_pool_bytes - with->kv_pool_bytes, lost, 1.0) << id;
  }
}

TEST(Infer, KvBytesPerTokenDeepSeekV3MlaLatent) {
  // MLA caches the latent (kv_lora_rank 512) and the rope key (64) per layer: 576 x 61 x 2 B.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Model("deepseek-v3"), KvDType::kBf16), 576.0 * 61 * 2);
}

TEST(Infer, ExpectedDistinctExperts) {
  EXPECT_NEAR(ExpectedDistinctExperts(256, 8, 1), 8.0, 1e-9);
  const double two = 256 * (1 - std::pow(1 - 8.0 / 256, 2));
  EXPECT_NEAR(ExpectedDistinctExperts(256, 8, 2), two, 1e-9);
  // At batch 256 nearly every expert is read (the GenZ trap: it reads top-k whatever the batch).
  EXPECT_GT(ExpectedDistinctExperts(256, 8, 256), 0.99 * 256);
  double prev = 0;
  for (double b : {1, 2, 4, 16, 64, 256}) {
    const double d = ExpectedDistinctExperts(128, 8, b);
    EXPECT_GT(d, prev);
    EXPECT_LE(d, 128);
    prev = d;
  }
}

TEST(Infer, WeightBytesPerParamWithGroupScales) {
  EXPECT_DOUBLE_EQ(WeightBytesPerParam(WeightDType::kBf16, QuantMethod::kNone, 128), 2.0);
  // GPTQ / AWQ int4, group 128: a 16-bit scale and a 4-bit zero point per 128 weights.
  EXPECT_DOUBLE_EQ(WeightBytesPerParam(WeightDType::kInt4, QuantMethod::kAwq, 128),
                   (4 + 20.0 / 128) / 8);
  EXPECT_DOUBLE_EQ(WeightBytesPerParam(WeightDType::kNvfp4, QuantMethod::kNone, 128), 4.5 / 8);
  EXPECT_LT(WeightBytesPerParam(WeightDType::kInt4, QuantMethod::kGptq, 128),
            WeightBytesPerParam(WeightDType::kFp8, QuantMethod::kNone, 128));
}

TEST(Infer, DecodeAtBatchOneIsWeightBytesOverBandwidth) {
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  auto r = SimulateInference(Model("llama3-8b"), hw, Spec(1, 1, 16));
  ASSERT_TRUE(r.ok()) << r.status().message();
  const double weight_read_s = r->weights_bytes / hw.hbm_bw_bytes_per_s;
  // The embedding table is stored but not read per token: the step reads slightly less.
  EXPECT_NEAR(r->decode.total_s, weight_read_s, 0.08 * weight_read_s);
  EXPECT_EQ(r->decode.bound, "hbm");
}

TEST(Infer, WeightOnlyInt4ComputesInBf16ButReadsFewerBytes) {
  const HardwareSpec hw = Hw("a100_sxm_80gb");
  InferenceSpec bf = Spec(1, 1, 16), q = Spec(1, 1, 16);
  q.weight_dtype = WeightDType::kInt4;
  auto a = SimulateInference(Model("qwen2.5-7b"), hw, bf);
  auto b = SimulateInference(Model("qwen2.5-7b"), hw, q);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_LT(b->weights_bytes, 0.45 * a->weights_bytes);
  EXPECT_LT(b->decode.total_s, 0.5 * a->decode.total_s);
  // Prefill of a long prompt is compute-bound and costs the same BF16 FLOPs.
  InferenceSpec bf_long = Spec(1, 8192, 1), q_long = Spec(1, 8192, 1);
  q_long.weight_dtype = WeightDType::kInt4;
  auto c = SimulateInference(Model("qwen2.5-7b"), hw, bf_long);
  auto d = SimulateInference(Model("qwen2.5-7b"), hw, q_long);
  EXPECT_NEAR(d->prefill.compute_s, c->prefill.compute_s, 1e-9);
}

TEST(Infer, MonotoneInBatchAndContext) {
  const ModelSpec m = Model("llama3-8b");
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  double prev_tpot = 0, prev_tps = 0;
  for (double b : {1, 4, 16, 64, 256}) {
    auto r = SimulateInference(m, hw, Spec(b, 512, 256));
    ASSERT_TRUE(r.ok());
    EXPECT_GE(r->tpot_s, prev_tpot);
    EXPECT_GT(r->output_tokens_per_s, prev_tps);
    prev_tpot = r->tpot_s;
    prev_tps = r->output_tokens_per_s;
  }
  double prev_seqs = 1e18;
  prev_tpot = 0;
  for (double p : {1024, 4096, 16384}) {
    auto r = SimulateInference(m, hw, Spec(8, p, 256));
    ASSERT_TRUE(r.ok());
    EXPECT_GT(r->tpot_s, prev_tpot);
    EXPECT_LT(r->max_concurrent_sequences, prev_seqs);
    prev_tpot = r->tpot_s;
    prev_seqs = r->max_concurrent_sequences;
  }
}

TEST(Infer, FixedBatchThroughputFollowsTheInterfaceFormula) {
  InferenceSpec s = Spec(8, 1000, 200);
  s.gpus = 2;  // two replicas
  auto r = SimulateInference(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  ASSERT_TRUE(r.ok());
  EXPECT_NEAR(r->output_tokens_per_s, 2 * 8 * 200 / (r->ttft_s + 200 * r->tpot_s), 1e-6);
  EXPECT_NEAR(r->kv_cache_bytes, 2 * 8 * 1200 * 131072.0, 1.0);  // llama3-8b: 128 KiB/token
}

TEST(Infer, MoeDecodeReadsMoreExpertsAtLargerBatch) {
  const ModelSpec m = Model("qwen3-30b-a3b");
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  auto one = SimulateInference(m, hw, Spec(1, 128, 16));
  auto many = SimulateInference(m, hw, Spec(64, 128, 16));
  ASSERT_TRUE(one.ok() && many.ok());
  // Batch 1 reads top-8 of 128 experts; batch 64 nearly all of them: the step is several times
  // longer although each token still activates 8 experts.
  EXPECT_GT(many->decode.hbm_s + many->decode.compute_s,
            4 * (one->decode.hbm_s + one->decode.compute_s));
}

// TensorRT-LLM's PyExecutor has no overlap scheduler when pp > 1 (_executor_loop_pp): the host
// work of an iteration is hidden behind the GPU's at pp 1 only.
TEST(Infer, HostWorkIsNotHiddenUnderPipelineParallelism) {
  const ModelSpec m = Model("llama3-8b");
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  InferenceSpec s = Spec(64, 128, 128);
  s.profile.overlap_scheduler = true;
  s.profile.step_overhead_s = 0.010;
  auto one = SimulateInference(m, hw, s);
  s.gpus = s.pp = 2;
  auto two = SimulateInference(m, hw, s);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_LT(one->decode.launch_s, 0.010 - 1e-4);  // the GPU's share of it is hidden
  EXPECT_NEAR(two->decode.launch_s, 0.010, 1e-9);
}

// MoE under attention DP all-gathers each token once (quantised first where the engine does)
// and reduce-scatters the outputs: the traffic does not grow with top-k (an all-to-all's would).
TEST(Infer, MoeDispatchUnderAttentionDpGathersEachTokenOnce) {
  ModelSpec m = Model("qwen3-30b-a3b");
  const HardwareSpec hw = Hw("b200_sxm_180gb");
  InferenceSpec s = Spec(256, 128, 128);
  s.gpus = s.tp = 4;
  s.attention_dp = 1;
  s.weight_dtype = WeightDType::kNvfp4;
  auto bf16 = SimulateInference(m, hw, s);
  s.profile.moe_quantized_dispatch = true;
  auto fp4 = SimulateInference(m, hw, s);
  m.moe.top_k = 2;
  auto top2 = SimulateInference(m, hw, s);
  ASSERT_TRUE(bf16.ok() && fp4.ok() && top2.ok());
  EXPECT_LT(fp4->decode.comm_s, bf16->decode.comm_s);
  EXPECT_GT(fp4->decode.comm_s, 0);
  EXPECT_DOUBLE_EQ(top2->decode.comm_s, fp4->decode.comm_s);
}

// The grouped MoE expert GEMMs take the engine's moe_gemm_efficiency (unset: gemm_efficiency).
TEST(Infer, MoeExpertGemmsTakeTheirOwnEfficiency) {
  const ModelSpec m = Model("qwen3-30b-a3b");
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  InferenceSpec s = Spec(8, 4096, 16);
  auto same = SimulateInference(m, hw, s);
  s.profile.moe_gemm_efficiency = 0.5 * s.profile.gemm_efficiency;
  auto slow = SimulateInference(m, hw, s);
  ASSERT_TRUE(same.ok() && slow.ok());
  EXPECT_GT(slow->prefill.compute_s, 1.2 * same->prefill.compute_s);
}

TEST(Infer, OfflineBatchIsBoundedByTheKvPool) {
  InferenceSpec s = Spec(0, 4096, 4096);
  s.profile.max_num_seqs = 100000;
  auto r = SimulateInference(Model("llama3-70b"), Hw("h100_sxm_80gb"), [&] {
    s.tp = s.gpus = 4;
    return s;
  }());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->batch, r->max_concurrent_sequences);
  EXPECT_LE(r->batch * 8192 * r->kv_bytes_per_token / 4, r->kv_pool_bytes * 1.0001);
}

// Prefix caching shares the cached prefix's KV blocks: the pool holds the prefix once, then
// each sequence's own tokens, so more sequences fit (and the batch's KV is smaller).
TEST(Infer, PrefixCacheSharesKvBlocksAcrossSequences) {
  InferenceSpec s = Spec(0, 4096, 1024);
  s.profile.max_num_seqs = 100000;
  const ModelSpec m = Model("llama3.1-8b");
  auto cold = SimulateInference(m, Hw("h100_sxm_80gb"), s);
  s.prefix_cache_hit = 0.75;  // 3072 of 4096 prompt tokens shared
  auto warm = SimulateInference(m, Hw("h100_sxm_80gb"), s);
  ASSERT_TRUE(cold.ok() && warm.ok());
  const double t = warm->kv_bytes_per_token, pool = warm->kv_pool_bytes;
  EXPECT_DOUBLE_EQ(cold->max_concurrent_sequences, std::floor(pool / (5120 * t)));
  EXPECT_DOUBLE_EQ(warm->max_concurrent_sequences, std::floor((pool - 3072 * t) / (2048 * t)));
  EXPECT_GT(warm->max_concurrent_sequences, 2 * cold->max_concurrent_sequences);
}

// Llama-4 iRoPE: with an engine that frees past chunks (vLLM's hybrid KV cache manager) a
// chunked layer holds at most one chunk per sequence; decode reads only the current chunk.
TEST(Infer, ChunkedLocalAttentionHoldsOneChunkOfKv) {
  ModelSpec m = Model("llama3.1-8b");  // 32 layers
  m.attention.kind = AttentionKind::kChunkedLocal;
  m.attention.window = 8192;
  m.attention.window_layers = 24;
  InferenceSpec s = Spec(0, 30000, 2000);
  s.profile.max_num_seqs = 100000;
  auto whole = SimulateInference(m, Hw("h100_sxm_80gb"), s);
  s.profile.windowed_kv_trim = true;
  auto trimmed = SimulateInference(m, Hw("h100_sxm_80gb"), s);
  ASSERT_TRUE(whole.ok() && trimmed.ok());
  const double t = trimmed->kv_bytes_per_token, pool = trimmed->kv_pool_bytes;
  EXPECT_DOUBLE_EQ(whole->max_concurrent_sequences, std::floor(pool / (32000 * t)));
  EXPECT_DOUBLE_EQ(trimmed->max_concurrent_sequences,
                   std::floor(pool / ((8 * 32000.0 + 24 * 8192) / 32 * t)));
  InferenceSpec one = Spec(1, 30000, 2000);
  ModelSpec dense = Model("llama3.1-8b");
  auto local = SimulateInference(m, Hw("h100_sxm_80gb"), one);
  auto global = SimulateInference(dense, Hw("h100_sxm_80gb"), one);
  ASSERT_TRUE(local.ok() && global.ok());
  EXPECT_LT(local->ttft_s, 0.9 * global->ttft_s);  // the GEMMs are unchanged
  EXPECT_LT(local->tpot_s, global->tpot_s);
}

TEST(Infer, BadLayoutsNameTheField) {
  InferenceSpec s = Spec(1, 128, 128);
  s.gpus = 3;
  s.tp = 2;
  auto r = SimulateInference(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("gpus"), std::string::npos);
  s.gpus = 3;
  s.tp = 3;  // 32 heads
  r = SimulateInference(Model("llama3-8b"), Hw("h100_sxm_80gb"), s);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("tp"), std::string::npos);
  EXPECT_FALSE(ParseWeightDType("int3").ok());
  EXPECT_FALSE(LoadEngineProfile("no-such-engine").ok());
}

TEST(Infer, EngineProfilesAreEmbeddedAndMatchedByName) {
  EXPECT_EQ(LoadEngineProfile("vllm 0.6.3")->id, "vllm");
  EXPECT_EQ(LoadEngineProfile("tensorrt-llm 1.0 (pytorch backend)")->id, "tensorrt-llm");
  EXPECT_EQ(LoadEngineProfile("hf transformers 4.46.0")->id, "transformers");
  EXPECT_FALSE(LoadEngineProfile("transformers")->cuda_graphs);
}

TEST(Infer, LaunchCommandCarriesTheLayout) {
  InferenceSpec s = Spec(8, 1000, 200);
  s.gpus = 8;
  s.tp = 4;
  s.engine = "vllm";
  s.profile_given = false;
  s.kv_dtype = KvDType::kFp8;
  s.kv_dtype_given = true;
  auto r = SimulateInference(Model("llama3-70b"), Hw("h100_sxm_80gb"), s);
  ASSERT_TRUE(r.ok());
  const std::string& cmd = r->launch_command;
  EXPECT_EQ(cmd.rfind("vllm serve llama3-70b", 0), 0u) << cmd;
  EXPECT_NE(cmd.find("--tensor-parallel-size 4"), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("--kv-cache-dtype fp8"), std::string::npos) << cmd;
  EXPECT_NE(cmd.find("x2 replicas"), std::string::npos) << cmd;
}

TEST(Infer, ServingAtARateQueuesAndSaturates) {
  const ModelSpec m = Model("llama3-8b");
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  auto at = [&](double rate) {
    InferenceSpec s = Spec(0, 1000, 200);
    s.request_rate = rate;
    return SimulateInference(m, hw, s).value();
  };
  const InferenceReport low = at(0.1), mid = at(5), high = at(1e6);
  ASSERT_TRUE(low.online);
  EXPECT_FALSE(low.serving.saturated);
  EXPECT_NEAR(low.output_tokens_per_s, 0.1 * 200, 1e-9);
  // Nearly idle: TTFT is the prompt's prefill plus one step, concurrency below one sequence.
  EXPECT_NEAR(low.serving.ttft_p50_s, low.prefill.total_s + low.decode.total_s,
              0.05 * low.serving.ttft_p50_s);
  EXPECT_LT(low.serving.concurrency, 1);
  EXPECT_GT(mid.serving.concurrency, low.serving.concurrency);
  EXPECT_GE(mid.serving.ttft_p99_s, mid.serving.ttft_p50_s);
  EXPECT_GE(mid.serving.tpot_p50_s, low.serving.tpot_p50_s);
  EXPECT_TRUE(high.serving.saturated);
  InferenceSpec both = Spec(4, 100, 100);
  both.request_rate = 1;
  EXPECT_FALSE(SimulateInference(m, hw, both).ok());
}

TEST(Infer, DecodeStepTimeForRlGeneration) {
  DecodeLayout l;
  l.tp = 2;
  auto small = DecodeStepTime(Model("llama3-8b"), Hw("h100_sxm_80gb"), l, 8, 1024);
  auto large = DecodeStepTime(Model("llama3-8b"), Hw("h100_sxm_80gb"), l, 256, 4096);
  ASSERT_TRUE(small.ok() && large.ok());
  EXPECT_GT(small.value(), 0);
  EXPECT_GT(large.value(), small.value());
  EXPECT_FALSE(DecodeStepTime(Model("llama3-8b"), Hw("h100_sxm_80gb"), l, 0, 10).ok());
}

TEST(Infer, ValidationCaseLineIsScored) {
  const char* line =
      R"({"id": "inf_t-001", "model": {"name": "q", "hidden_size": 896, "num_hidden_layers": 24,
      "num_attention_heads": 14, "num_key_value_heads": 2, "head_dim": 64,
      "intermediate_size": 4864, "vocab_size": 151936, "hidden_act": "silu",
      "tie_word_embeddings": true, "moe": null, "mla": null, "mtp_layers": 0},
      "hardware": "a100_sxm_80gb", "hardware_overrides": null, "gpus": 1,
      "parallel": {"tp": 1, "pp": 1, "ep": null, "dp": 1}, "engine": "vllm 0.6.3",
      "weight_dtype": "int4", "kv_dtype": null, "batch": 1, "prompt_len": 1, "output_len": 2048,
      "request_rate": null, "measured": {}, "target": {"metric": "output_tokens_per_s",
      "value": 260.0}, "notes": "Qwen2.5-0.5B-Instruct, AWQ, vLLM"})";
  ASSERT_TRUE(detail::IsInferenceCaseText(line));
  auto c = detail::ParseInferenceCase(line, "test");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->spec.quant, QuantMethod::kAwq);
  const CaseResult r = detail::ScoreInferenceCase(c.value());
  EXPECT_FALSE(r.skipped) << r.reason;
  EXPECT_GT(r.predicted_s, 0);
}

// The accuracy ratchet for the inference cases (tests/validation_ratchet.json, inference_*):
// every case scored, MAPE of the target metric under the bound.
TEST(Infer, InferenceCasesStayUnderTheRatchet) {
  const std::string cases = std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/inference.jsonl";
  if (!std::filesystem::exists(cases)) GTEST_SKIP() << "no " << cases;
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/tests/validation_ratchet.json");
  const nlohmann::json ratchet = nlohmann::json::parse(in);
  auto res = RunValidation({cases});
  ASSERT_TRUE(res.ok()) << res.status().message();
  EXPECT_EQ(res->skipped, ratchet["inference_skipped_max"].get<int>());
  EXPECT_LE(res->mape, ratchet["inference_time_mape_max"].get<double>());
  for (const FamilyStats& f : res->families)
    EXPECT_LE(f.mape, ratchet["inference_family_mape_max"].get<double>()) << f.family;
  // Every case carries the 80 % band of its regime, and the band holds the measurement often
  // enough (held-out residuals: in-sample it should cover at least 80 %).
  EXPECT_EQ(res->band_n, res->n);
  EXPECT_GE(res->band_coverage, ratchet["inference_band_coverage_min"].get<double>());
}

// The band (data/inference_engines.json "uncertainty", docs/VALIDATION.md): an engine's regime
// by MoE / dense, falling back to that kind over every engine and to "all"; a throughput's low
// end is the slow end of the same prediction as its latencies' high ends.
TEST(Infer, BandBracketsTheHeadlineFiguresByRegime) {
  const ModelSpec m = Model("llama3-70b");
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  InferenceSpec s;
  s.gpus = s.tp = 4;
  s.batch = 16;
  s.prompt_len = 1024;
  s.output_len = 256;
  s.engine = "tensorrt-llm";
  auto r = SimulateInference(m, hw, s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->band.regime, "tensorrt-llm/dense");
  EXPECT_GE(r->band.cases, 15);
  EXPECT_GT(r->band.rel_below, 0.01);
  EXPECT_NEAR(r->output_tokens_per_s_low, r->output_tokens_per_s * (1 - r->band.rel_below), 1e-9);
  EXPECT_NEAR(r->output_tokens_per_s_high, r->output_tokens_per_s * (1 + r->band.rel_above), 1e-9);
  EXPECT_NEAR(r->ttft_s_high, r->ttft_s / (1 - r->band.rel_below), 1e-12);
  EXPECT_NEAR(r->tpot_s_low, r->tpot_s / (1 + r->band.rel_above), 1e-12);
  EXPECT_LT(r->tpot_s_low, r->tpot_s);
  EXPECT_GT(r->tpot_s_high, r->tpot_s);
  // At a rate the layout sustains, the throughput is the offered load: no band on it.
  s.batch = 0;
  s.request_rate = 1;
  auto served = SimulateInference(m, hw, s);
  ASSERT_TRUE(served.ok()) << served.status().message();
  ASSERT_FALSE(served->serving.saturated);
  EXPECT_EQ(served->output_tokens_per_s_low, served->output_tokens_per_s);
  EXPECT_EQ(served->output_tokens_per_s_high, served->output_tokens_per_s);
  EXPECT_LT(served->tpot_s_low, served->tpot_s);
  EXPECT_EQ(infer::InferenceBandOf("tensorrt-llm", true).regime, "tensorrt-llm/moe");
  // No SGLang case and no vLLM MoE case: every engine's residuals of that kind.
  EXPECT_EQ(infer::InferenceBandOf("sglang", false).regime, "dense");
  EXPECT_EQ(infer::InferenceBandOf("vllm", true).regime, "moe");
}

TEST(Infer, SpeculativeDecodingTokensPerStepAndCost) {
  const ModelSpec target = Model("llama3-70b");
  const HardwareSpec hw = Hw("h100_sxm_80gb");
  InferenceSpec s = Spec(8, 1024, 256);
  s.gpus = s.tp = 4;
  const double plain = SimulateInference(target, hw, s)->tpot_s;
  s.draft = Model("llama3-8b");
  s.spec_tokens = 4;
  s.acceptance_rate = 0.8;
  auto r = SimulateInference(target, hw, s);
  ASSERT_TRUE(r.ok());
  // Leviathan et al. 2023: (1 - a^(k+1)) / (1 - a) tokens per target step.
  EXPECT_NEAR(r->spec_tokens_per_step, (1 - std::pow(0.8, 5)) / 0.2, 1e-12);
  EXPECT_LT(r->tpot_s, plain);  // memory-bound batch 8: verifying 5 tokens costs about one step
  s.acceptance_rate = 0;        // every draft rejected: one token per round, the draft wasted
  EXPECT_GT(SimulateInference(target, hw, s)->tpot_s, plain);
  s.batch = 0;  // offline maximum load is not modelled with speculation
  EXPECT_FALSE(SimulateInference(target, hw, s).ok());
  s.batch = 8;
  s.acceptance_rate = 1.5;
  EXPECT_FALSE(SimulateInference(target, hw, s).ok());
}

// Host CPUs (issue 15): Grace hosts (GB200 NVL72, and the cloud instances built on it) run the
// engines' host work slower than the x86 hosts the constants were fitted on; listed in assumed.
TEST(Infer, GraceHostScalesTheEnginesHostWork) {
  const HardwareSpec gb = Hw("gb200_nvl72");
  const infer::HostCpu grace = infer::HostCpuOf(gb);
  EXPECT_EQ(grace.cpu, "grace");
  EXPECT_GT(grace.time_factor, 1.0);
  EXPECT_FALSE(grace.provenance.empty());
  EXPECT_EQ(infer::HostCpuOf(Hw("gcp_a4x_highgpu_4g")).cpu, "grace");  // instance_of gb200
  EXPECT_EQ(infer::HostCpuOf(Hw("b200_sxm_180gb")).cpu, "x86");
  EXPECT_DOUBLE_EQ(infer::HostCpuOf(Hw("b200_sxm_180gb")).time_factor, 1.0);
  const ModelSpec m = Model("llama3.1-8b");
  InferenceSpec s = Spec(1, 128, 128);
  auto gpu_only = SimulateInference(m, gb, s);
  s.profile.step_overhead_s = 0.010;  // no overlap scheduler: added to every iteration
  auto with_host = SimulateInference(m, gb, s);
  ASSERT_TRUE(gpu_only.ok() && with_host.ok());
  EXPECT_NEAR(with_host->tpot_s - gpu_only->tpot_s, grace.time_factor * 0.010, 1e-9);
  bool listed = false;
  for (const Assumption& a : with_host->assumed) listed |= a.field == "host_cpu";
  EXPECT_TRUE(listed);
}

// MoE constants per GPU (issue 15): a preset with its own fit (or an instance of one) takes it,
// any other borrows the shared values; the report says which.
TEST(Infer, MoeCalibrationPerHardwareOrBorrowed) {
  const EngineProfile shared = LoadEngineProfile("tensorrt-llm").value();
  EngineProfile h100 = shared;
  EXPECT_EQ(infer::ApplyHardwareCalibration(h100, Hw("h100_sxm_80gb")), "h100_sxm_80gb");
  EXPECT_TRUE(h100.moe_gemm_efficiency != shared.moe_gemm_efficiency ||
              h100.moe_hbm_fraction != shared.moe_hbm_fraction);
  EngineProfile a3 = shared;
  EXPECT_EQ(infer::ApplyHardwareCalibration(a3, Hw("gcp_a3_highgpu_8g")), "h100_sxm_80gb");
  EXPECT_DOUBLE_EQ(a3.moe_gemm_efficiency, h100.moe_gemm_efficiency);
  EXPECT_DOUBLE_EQ(a3.moe_hbm_fraction, h100.moe_hbm_fraction);
  // No fit of its own, but the die of a preset that has one (gpu_dies): that fit.
  EngineProfile h800 = shared;
  EXPECT_EQ(infer::ApplyHardwareCalibration(h800, Hw("h800_sxm_80gb")),
            "h100_sxm_80gb (same GPU die)");
  EXPECT_DOUBLE_EQ(h800.moe_hbm_fraction, h100.moe_hbm_fraction);
  EngineProfile h20 = shared;  // a cut-down die: listed nowhere, the shared values
  EXPECT_EQ(infer::ApplyHardwareCalibration(h20, Hw("h20_96gb")), "");
  EXPECT_DOUBLE_EQ(h20.moe_gemm_efficiency, shared.moe_gemm_efficiency);
  EXPECT_DOUBLE_EQ(h20.moe_hbm_fraction, shared.moe_hbm_fraction);
  InferenceSpec s;
  s.engine = "tensorrt-llm";
  s.batch = 8;
  s.prompt_len = 128;
  s.output_len = 128;
  s.weight_dtype = WeightDType::kFp8;
  auto r = SimulateInference(Model("qwen3-30b-a3b"), Hw("h20_96gb"), s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  std::string value;
  for (const Assumption& a : r->assumed)
    if (a.field == "moe_calibration") value = a.value;
  EXPECT_EQ(value, "shared");
}

// Attention DP (issue 15): every rank runs its own scheduler, so offline the replica admits
// max_num_seqs per rank (TensorRT-LLM max_batch_size per attention-DP rank), KV permitting.
TEST(Infer, AttentionDpRanksEachScheduleMaxNumSeqs) {
  InferenceSpec s;
  s.engine = "tensorrt-llm";
  s.gpus = s.tp = 4;
  s.batch = 0;
  s.prompt_len = 128;
  s.output_len = 128;
  s.weight_dtype = WeightDType::kFp8;
  auto r = SimulateInference(Model("qwen3-30b-a3b"), Hw("h200_sxm_141gb"), s);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->expert_parallel);  // attention DP over the 4 GPUs
  const double cap = 4.0 * r->profile.max_num_seqs;
  EXPECT_DOUBLE_EQ(r->batch, std::min(cap, r->max_concurrent_sequences));
  EXPECT_GT(r->batch, r->profile.max_num_seqs);
}

// vLLM's own cases (inf_qwen25) are dense at batch 1: the host work per running sequence and the
// fused-MoE fractions are borrowed from the TensorRT-LLM fit, not left free (issue 12: RL
// generation at batch 128-1024 on MoE models was 40-70 % too fast), so a vLLM decode step at
// batch 256 carries at least 256 sequences' host work more than at batch 1.
TEST(Infer, VllmPaysHostWorkPerSequenceAndTheFusedMoeFractions) {
  const EngineProfile v = LoadEngineProfile("vllm").value();
  const EngineProfile t = LoadEngineProfile("tensorrt-llm").value();
  EXPECT_DOUBLE_EQ(v.seq_overhead_s, t.seq_overhead_s);
  EXPECT_DOUBLE_EQ(v.moe_hbm_fraction, t.moe_hbm_fraction);
  EXPECT_DOUBLE_EQ(v.moe_gemm_efficiency, t.moe_gemm_efficiency);
  EXPECT_FALSE(v.overlap_scheduler);  // the host work adds to the GPU's iteration
  const DecodeLayout l{1, 1, 0};
  const double one = DecodeStepTime(Model("llama3-8b"), Hw("h100_sxm_80gb"), l, 1, 1024).value();
  const double many = DecodeStepTime(Model("llama3-8b"), Hw("h100_sxm_80gb"), l, 256, 1024).value();
  EXPECT_GE(many - one, 255 * v.seq_overhead_s);
}

}  // namespace
}  // namespace trainsim
