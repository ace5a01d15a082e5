// `trainsim infer`: prefill / decode latency and serving throughput of one layout.
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_util.h"
#include "commands.h"
#include "trainsim/infer.h"
#include "trainsim/trainsim.h"

namespace trainsim::cli {

void AddInfer(CLI::App& app, InferArgs& a) {
  CLI::App* c = app.add_subcommand("infer", "predict serving latency and throughput");
  c->add_option("--model", a.model, "model preset id or config.json path")->capture_default_str();
  c->add_option("--hardware", a.hardware, "hardware preset id or JSON path")->capture_default_str();
  c->add_option("--hw-override", a.hw_override, "JSON object of hardware fields to override");
  c->add_option("--gpus", a.req.gpus, "GPUs in all (replicas = gpus / (tp x pp))")
      ->check(CLI::Range(1, 1 << 20));
  c->add_option("--tp", a.req.tp, "tensor-parallel size")->check(CLI::Range(1, 1 << 20));
  c->add_option("--pp", a.req.pp, "pipeline-parallel size")->check(CLI::Range(1, 1 << 20));
  c->add_option("--ep", a.req.ep, "expert-parallel size (0: tp for MoE models)")
      ->check(CLI::Range(0, 1 << 20));
  c->add_option("--prompt-len", a.req.prompt_len, "prompt tokens per request")->required();
  c->add_option("--output-len", a.req.output_len, "generated tokens per request")->required();
  CLI::Option* batch = c->add_option(
      "--batch", a.req.batch,
      "concurrent sequences per replica; 0 = offline maximum load (all requests queued)");
  c->add_option("--rate", a.req.rate,
                "requests/s (Poisson) for online serving: p50/p99 TTFT and TPOT")
      ->excludes(batch);
  c->add_option("--weight-dtype", a.req.weight_dtype, "bf16|fp16|fp8|int8|int4|nvfp4");
  c->add_option("--quant", a.req.quant, "weight-only scheme for int8/int4: gptq|awq");
  c->add_option("--kv-dtype", a.req.kv_dtype, "bf16|fp16|fp8|int8|int4 (default: see assumed)");
  c->add_option("--engine", a.req.engine, "vllm|sglang|tensorrt-llm|transformers")
      ->capture_default_str();
  c->add_option("--gpu-memory-utilization", a.req.gpu_memory_utilization, "engine memory fraction")
      ->check(CLI::Range(1e-3, 1.0));
  c->add_option("--prefix-cache-hit", a.req.prefix_cache_hit,
                "fraction of each prompt already in the prefix cache (not prefilled again)")
      ->check(CLI::Range(0.0, kMaxPrefixCacheHit));
  c->add_option("--max-num-seqs", a.req.max_num_seqs, "scheduler batch limit")
      ->check(CLI::Range(1, 1000000));
  c->add_flag("--json", a.json, "print the report as JSON");
  c->add_option("--draft-model", a.draft_model, "speculative decoding: draft model (preset/path)");
  c->add_option("--spec-tokens", a.req.spec_tokens,
                "speculative decoding: tokens drafted per step");
  c->add_option("--acceptance-rate", a.req.acceptance_rate,
                "speculative decoding: probability each drafted token is accepted");
  c->add_option("--disaggregate", a.req.disaggregate,
                "disaggregated prefill/decode: P:D (or xPyD) prefill and decode instances, the "
                "KV cache sent over the NIC; --gpus = pp x (P x prefill-tp + D x decode-tp)");
  c->add_option("--prefill-tp", a.req.prefill_tp,
                "--disaggregate: prefill instance tp (default --tp)")
      ->check(CLI::Range(1, 1 << 20));
  c->add_option("--decode-tp", a.req.decode_tp, "--disaggregate: decode instance tp (default --tp)")
      ->check(CLI::Range(1, 1 << 20));
  c->add_flag("--search-disaggregate", a.req.search_disaggregate,
              "--search: also try disaggregated prefill/decode layouts (P:D, their tp)");
  c->add_flag("--search", a.req.search,
              "find the best layout (tp, pp, replicas, batch, dtypes) over --gpus under the SLO");
  c->add_option("--slo-ttft-ms", a.req.slo_ttft_ms,
                "time-to-first-token bound (ms): --search, and the goodput of --disaggregate");
  c->add_option("--slo-tpot-ms", a.req.slo_tpot_ms,
                "time-per-output-token bound (ms): --search, and the goodput of --disaggregate");
  c->add_option("--objective", a.req.objective, "--search: throughput | cost")
      ->capture_default_str();
  c->add_option("--price", a.req.price, "--search: USD per GPU-hour (default: the hardware's)");
  c->add_option("--search-weight-dtypes", a.req.search_weight_dtypes,
                "--search: comma list of weight dtypes to try (default: --weight-dtype)");
  c->add_option("--search-kv-dtypes", a.req.search_kv_dtypes,
                "--search: comma list of KV dtypes to try (default: the engine's)");
  c->add_option("--top", a.req.top, "--search: layouts to print")->capture_default_str();
  c->add_option("--export", a.export_format,
                "print only the engine's launch line for the layout (vllm | sglang | "
                "tensorrt-llm: the engine named by --engine)");
}

namespace {

void PrintPhase(const char* name, const PhaseBreakdown& b) {
  std::printf("  %-8s %10.3f ms  (compute %.3f, hbm %.3f, comm %.3f, launch %.3f ms) bound: %s\n",
              name, 1e3 * b.total_s, 1e3 * b.compute_s, 1e3 * b.hbm_s, 1e3 * b.comm_s,
              1e3 * b.launch_s, b.bound.c_str());
}

}  // namespace

// Seconds as milliseconds with `digits` decimals; a saturated queue's latency grows without
// bound (null in the JSON report): "unbounded", never "inf".
std::string Ms(double s, int digits) {
  if (!std::isfinite(s)) return "unbounded";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, 1e3 * s);
  return buf;
}

void PrintInferenceText(const InferenceReport& r) {
  std::printf("TTFT %s ms   TPOT %s ms   output %.1f tokens/s (%.1f per GPU)\n",
              Ms(r.ttft_s, 3).c_str(), Ms(r.tpot_s, 3).c_str(), r.output_tokens_per_s,
              r.output_tokens_per_s_per_gpu);
  if (!r.band.regime.empty())
    std::printf(
        "80 %% band (%s regime, %d held-out cases): output %.1f - %.1f tokens/s (-%.0f %% / +%.0f "
        "%%), TTFT %s - %s ms, TPOT %s - %s ms\n",
        r.band.regime.c_str(), r.band.cases, r.output_tokens_per_s_low, r.output_tokens_per_s_high,
        100 * r.band.rel_below, 100 * r.band.rel_above, Ms(r.ttft_s_low, 3).c_str(),
        Ms(r.ttft_s_high, 3).c_str(), Ms(r.tpot_s_low, 3).c_str(), Ms(r.tpot_s_high, 3).c_str());
  std::printf("batch %g per replica x %d replicas; engine %s; fits: %s%s%s\n", r.batch, r.replicas,
              r.profile.id.c_str(), r.fits ? "yes" : "no", r.fits ? "" : " - ", r.why_not.c_str());
  std::printf(
      "Memory per GPU: weights %.2f GiB, activations %.2f GiB, CUDA graphs %.2f GiB, KV pool "
      "%.2f GiB; KV %.0f B/token (replica), batch KV %.2f GiB (all GPUs); max concurrent "
      "sequences %g\n",
      ((r.weights_bytes) / 1073741824.0), ((r.activation_bytes) / 1073741824.0),
      ((r.profile.cuda_graph_bytes) / 1073741824.0), ((r.kv_pool_bytes) / 1073741824.0),
      r.kv_bytes_per_token, ((r.kv_cache_bytes) / 1073741824.0), r.max_concurrent_sequences);
  std::printf("Phases (per replica):\n");
  PrintPhase("prefill", r.prefill);
  PrintPhase("decode", r.decode);
  std::printf("  decode compute/weight-read crossover at batch %.0f\n", r.crossover_batch);
  if (r.online)
    std::printf(
        "At %g requests/s: concurrency %.1f per replica, TTFT p50 %s ms p99 %s ms, "
        "TPOT p50 %s ms p99 %s ms, end-to-end p50 %s s%s\n",
        r.serving.rate, r.serving.concurrency, Ms(r.serving.ttft_p50_s, 1).c_str(),
        Ms(r.serving.ttft_p99_s, 1).c_str(), Ms(r.serving.tpot_p50_s, 2).c_str(),
        Ms(r.serving.tpot_p99_s, 2).c_str(), Ms(r.serving.e2e_p50_s / 1e3, 2).c_str(),
        r.serving.saturated ? " - SATURATED: the layout cannot sustain this rate" : "");
  if (r.spec_tokens > 0)
    std::printf(
        "Speculative: draft %s, %d tokens per step at acceptance %g: %.2f tokens per "
        "target step\n",
        r.draft_model.c_str(), r.spec_tokens, r.acceptance_rate, r.spec_tokens_per_step);
  if (r.disaggregated) {
    const DisaggregatedServing& d = r.disagg;
    std::printf(
        "Disaggregated: %d prefill x tp %d (%d GPUs, %.0f %% busy) -> %d decode x tp %d (%d "
        "GPUs, %.0f %% busy); KV %.2f MB per request over the NIC in %.3f ms; %.2f requests/s, "
        "goodput %.3f requests/s per GPU (%s)\n",
        d.prefill_instances, d.prefill_tp, d.prefill_gpus, 100 * d.prefill_utilization,
        d.decode_instances, d.decode_tp, d.decode_gpus, 100 * d.decode_utilization,
        d.kv_transfer_bytes / 1e6, 1e3 * d.kv_transfer_s, d.requests_per_s,
        d.goodput_requests_per_s_per_gpu, d.meets_slo ? "SLO met" : "SLO missed");
  }
  std::printf("Launch: %s\n", r.launch_command.c_str());
  if (!r.assumed.empty()) std::printf("Assumed:\n");
  for (const Assumption& x : r.assumed)
    std::printf("  %s = %s (%s)\n", x.field.c_str(), x.value.c_str(), x.why.c_str());
}

int RunInfer(const InferArgs& a) {
  auto model = LoadModelArg(a.model);
  if (!model.ok()) return Fail(model.status());
  auto hw = LoadHardwareWithOverride(a.hardware, a.hw_override);
  if (!hw.ok()) return Fail(hw.status());
  InferRequest req = a.req;
  if (req.spec_tokens <= 0 && req.acceptance_rate > 0)
    std::fprintf(stderr,
                 "trainsim: warning: acceptance_rate has no effect without --spec-tokens (the "
                 "report's assumed list says why)\n");
  if (!a.draft_model.empty()) {
    auto draft = LoadModelArg(a.draft_model);
    if (!draft.ok()) return Fail(draft.status());
    req.draft_model = draft.value();
  }
  if (req.search)
    return RunInferSearch(
        {a.model, a.hardware, a.hw_override, a.draft_model, a.export_format, a.json, req},
        model.value(), hw.value());
  if (a.json && a.export_format.empty()) {
    auto doc = InferJson(model.value(), hw.value(), req);
    if (!doc.ok()) return Fail(doc.status());
    std::printf("%s\n", doc->c_str());
    return 0;
  }
  auto spec = MakeInferenceSpec(req);
  if (!spec.ok()) return Fail(spec.status());
  auto r = SimulateInference(model.value(), hw.value(), spec.value());
  if (!r.ok()) return Fail(r.status());
  if (!a.export_format.empty()) {
    if (a.export_format != r->profile.id)
      return Fail(
          Status::Invalid("export", "must name the engine of --engine (" + r->profile.id + ")"));
    std::printf("%s\n", r->launch_command.c_str());
    return 0;
  }
  if (!hw->calibrated) std::printf("%s\n", UncalibratedNote(hw.value()).c_str());
  PrintInferenceText(r.value());
  return 0;
}

}  // namespace trainsim::cli
