// `trainsim infer`: prefill / decode latency and serving throughput of one layout.
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
  c->add_option("--gpus", a.gpus, "GPUs in all (replicas = gpus / (tp x pp))")
      ->check(CLI::Range(1, 1 << 20));
  c->add_option("--tp", a.tp, "tensor-parallel size")->check(CLI::Range(1, 1 << 20));
  c->add_option("--pp", a.pp, "pipeline-parallel size")->check(CLI::Range(1, 1 << 20));
  c->add_option("--ep", a.ep, "expert-parallel size (0: tp for MoE models)")
      ->check(CLI::Range(0, 1 << 20));
  c->add_option("--prompt-len", a.prompt_len, "prompt tokens per request")->required();
  c->add_option("--output-len", a.output_len, "generated tokens per request")->required();
  CLI::Option* batch = c->add_option(
      "--batch", a.batch,
      "concurrent sequences per replica; 0 = offline maximum load (all requests queued)");
  c->add_option("--rate", a.rate, "requests/s (Poisson) for online serving: p50/p99 TTFT and TPOT")
      ->excludes(batch);
  c->add_option("--weight-dtype", a.weight_dtype, "bf16|fp16|fp8|int8|int4|nvfp4");
  c->add_option("--quant", a.quant, "weight-only scheme for int8/int4: gptq|awq");
  c->add_option("--kv-dtype", a.kv_dtype, "bf16|fp16|fp8|int8|int4 (default: see assumed)");
  c->add_option("--engine", a.engine, "vllm|sglang|tensorrt-llm|transformers")
      ->capture_default_str();
  c->add_option("--gpu-memory-utilization", a.gpu_mem_util, "engine memory fraction")
      ->check(CLI::Range(1e-3, 1.0));
  c->add_option("--max-num-seqs", a.max_num_seqs, "scheduler batch limit")
      ->check(CLI::Range(1, 1000000));
  c->add_flag("--json", a.json, "print the report as JSON");
  c->add_option("--draft-model", a.draft_model, "speculative decoding: draft model (preset/path)");
  c->add_option("--spec-tokens", a.spec_tokens, "speculative decoding: tokens drafted per step");
  c->add_option("--acceptance-rate", a.acceptance_rate,
                "speculative decoding: probability each drafted token is accepted");
  c->add_flag("--search", a.search,
              "find the best layout (tp, pp, replicas, batch, dtypes) over --gpus under the SLO");
  c->add_option("--slo-ttft-ms", a.slo_ttft_ms, "--search: time-to-first-token bound (ms)");
  c->add_option("--slo-tpot-ms", a.slo_tpot_ms, "--search: time-per-output-token bound (ms)");
  c->add_option("--objective", a.objective, "--search: throughput | cost")->capture_default_str();
  c->add_option("--price", a.price, "--search: USD per GPU-hour (default: the hardware's)");
  c->add_option("--search-weight-dtypes", a.search_weight_dtypes,
                "--search: comma list of weight dtypes to try (default: --weight-dtype)");
  c->add_option("--search-kv-dtypes", a.search_kv_dtypes,
                "--search: comma list of KV dtypes to try (default: the engine's)");
  c->add_option("--top", a.top, "--search: layouts to print")->capture_default_str();
  c->add_option("--export", a.export_format,
                "print only the engine's launch line for the layout (vllm | sglang | "
                "tensorrt-llm: the engine named by --engine)");
}

namespace {

Result<InferenceSpec> BuildSpec(const InferArgs& a) {
  InferenceSpec s;
  s.gpus = a.gpus > 0 ? a.gpus : a.tp * a.pp;
  s.tp = a.tp;
  s.pp = a.pp;
  s.ep = a.ep;
  s.prompt_len = a.prompt_len;
  s.output_len = a.output_len;
  s.batch = a.rate > 0 ? 0 : a.batch;
  s.request_rate = a.rate;
  auto wd = ParseWeightDType(a.weight_dtype);
  if (!wd.ok()) return wd.status();
  s.weight_dtype = wd.value();
  if (!a.kv_dtype.empty()) {
    auto kd = ParseKvDType(a.kv_dtype);
    if (!kd.ok()) return kd.status();
    s.kv_dtype = kd.value();
    s.kv_dtype_given = true;
  }
  if (a.quant == "awq")
    s.quant = QuantMethod::kAwq;
  else if (a.quant == "gptq")
    s.quant = QuantMethod::kGptq;
  else if (!a.quant.empty())
    return Status::Invalid("quant", "must be gptq or awq");
  if (s.quant != QuantMethod::kNone && s.weight_dtype != WeightDType::kInt4 &&
      s.weight_dtype != WeightDType::kInt8)
    return Status::Invalid("quant", "applies to weight-only int4/int8 (give --weight-dtype int4 "
                                    "or int8), not " + std::string(WeightDTypeName(s.weight_dtype)));
  s.engine = a.engine;
  s.gpu_memory_utilization = a.gpu_mem_util;
  s.max_num_seqs = a.max_num_seqs;
  s.spec_tokens = a.spec_tokens;
  s.acceptance_rate = a.acceptance_rate;
  return s;
}

void PrintPhase(const char* name, const PhaseBreakdown& b) {
  std::printf("  %-8s %10.3f ms  (compute %.3f, hbm %.3f, comm %.3f, launch %.3f ms) bound: %s\n",
              name, 1e3 * b.total_s, 1e3 * b.compute_s, 1e3 * b.hbm_s, 1e3 * b.comm_s,
              1e3 * b.launch_s, b.bound.c_str());
}

void PrintText(const InferenceReport& r) {
  std::printf("TTFT %.3f ms   TPOT %.3f ms   output %.1f tokens/s (%.1f per GPU)\n", 1e3 * r.ttft_s,
              1e3 * r.tpot_s, r.output_tokens_per_s, r.output_tokens_per_s_per_gpu);
  std::printf("batch %g per replica x %d replicas; engine %s; fits: %s%s%s\n", r.batch, r.replicas,
              r.profile.id.c_str(), r.fits ? "yes" : "no", r.fits ? "" : " - ", r.why_not.c_str());
  std::printf(
      "Memory per GPU: weights %.2f GiB, activations %.2f GiB, KV pool %.2f GiB; KV %.0f "
      "B/token (replica), batch KV %.2f GiB (all GPUs); max concurrent sequences %g\n",
      ((r.weights_bytes) / 1073741824.0), ((r.activation_bytes) / 1073741824.0),
      ((r.kv_pool_bytes) / 1073741824.0), r.kv_bytes_per_token, ((r.kv_cache_bytes) / 1073741824.0),
      r.max_concurrent_sequences);
  std::printf("Phases (per replica):\n");
  PrintPhase("prefill", r.prefill);
  PrintPhase("decode", r.decode);
  std::printf("  decode compute/weight-read crossover at batch %.0f\n", r.crossover_batch);
  if (r.online)
    std::printf(
        "At %g requests/s: concurrency %.1f per replica, TTFT p50 %.1f ms p99 %.1f ms, "
        "TPOT p50 %.2f ms p99 %.2f ms, end-to-end p50 %.2f s%s\n",
        r.serving.rate, r.serving.concurrency, 1e3 * r.serving.ttft_p50_s,
        1e3 * r.serving.ttft_p99_s, 1e3 * r.serving.tpot_p50_s, 1e3 * r.serving.tpot_p99_s,
        r.serving.e2e_p50_s,
        r.serving.saturated ? " - SATURATED: the layout cannot sustain this rate" : "");
  if (r.spec_tokens > 0)
    std::printf(
        "Speculative: draft %s, %d tokens per step at acceptance %g: %.2f tokens per "
        "target step\n",
        r.draft_model.c_str(), r.spec_tokens, r.acceptance_rate, r.spec_tokens_per_step);
  std::printf("Launch: %s\n", r.launch_command.c_str());
  if (!r.assumed.empty()) std::printf("Assumed:\n");
  for (const Assumption& x : r.assumed)
    std::printf("  %s = %s (%s)\n", x.field.c_str(), x.value.c_str(), x.why.c_str());
}

}  // namespace

int RunInfer(const InferArgs& a) {
  auto model = LoadModel(a.model);
  if (!model.ok()) return Fail(model.status());
  auto hw = LoadHardwareWithOverride(a.hardware, a.hw_override);
  if (!hw.ok()) return Fail(hw.status());
  auto built = BuildSpec(a);
  if (!built.ok()) return Fail(built.status());
  InferenceSpec spec = built.value();
  if (!a.draft_model.empty()) {
    auto draft = LoadModel(a.draft_model);
    if (!draft.ok()) return Fail(draft.status());
    spec.draft = draft.value();
  }
  if (a.search) return RunInferSearch(a, model.value(), hw.value(), spec);
  auto r = SimulateInference(model.value(), hw.value(), spec);
  if (!r.ok()) return Fail(r.status());
  if (!a.export_format.empty()) {
    if (a.export_format != r->profile.id)
      return Fail(
          Status::Invalid("export", "must name the engine of --engine (" + r->profile.id + ")"));
    std::printf("%s\n", r->launch_command.c_str());
    return 0;
  }
  if (a.json) {
    // Which hardware, and whether its efficiencies were fitted on it (uncalibrated hardware is
    // marked in every report).
    nlohmann::ordered_json j = nlohmann::ordered_json::parse(InferenceReportJson(r.value()));
    j["hardware"] = hw->id;
    j["hardware_calibrated"] = hw->calibrated;
    j["hardware_calibration_status"] = CalibrationStatus(hw.value());
    std::printf("%s\n", j.dump(2).c_str());
    return 0;
  }
  if (!hw->calibrated) std::printf("%s\n", UncalibratedNote(hw.value()).c_str());
  PrintText(r.value());
  return 0;
}

}  // namespace trainsim::cli
