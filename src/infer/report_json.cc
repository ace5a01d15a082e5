// InferenceReport as JSON: the issue-15 keys at the top level, then the breakdowns.
#include <nlohmann/json.hpp>

#include "trainsim/infer.h"

namespace trainsim {
namespace {

using nlohmann::json;

json PhaseJson(const PhaseBreakdown& b) {
  return {{"compute_s", b.compute_s}, {"hbm_s", b.hbm_s},     {"comm_s", b.comm_s},
          {"launch_s", b.launch_s},   {"total_s", b.total_s}, {"bound", b.bound}};
}

}  // namespace

std::string InferenceReportJson(const InferenceReport& r, int indent) {
  json j;
  j["ttft_s"] = r.ttft_s;
  j["tpot_s"] = r.tpot_s;
  j["output_tokens_per_s"] = r.output_tokens_per_s;
  j["output_tokens_per_s_per_gpu"] = r.output_tokens_per_s_per_gpu;
  j["output_tokens_per_s_low"] = r.output_tokens_per_s_low;
  j["output_tokens_per_s_high"] = r.output_tokens_per_s_high;
  j["ttft_s_low"] = r.ttft_s_low;
  j["ttft_s_high"] = r.ttft_s_high;
  j["tpot_s_low"] = r.tpot_s_low;
  j["tpot_s_high"] = r.tpot_s_high;
  j["uncertainty"] = {{"regime", r.band.regime},
                      {"cases", r.band.cases},
                      {"rel_below", r.band.rel_below},
                      {"rel_above", r.band.rel_above}};
  j["weights_bytes"] = r.weights_bytes;
  j["kv_cache_bytes"] = r.kv_cache_bytes;
  j["max_concurrent_sequences"] = r.max_concurrent_sequences;
  j["fits"] = r.fits;
  if (!r.fits) j["why_not"] = r.why_not;
  j["batch"] = r.batch;
  j["replicas"] = r.replicas;
  j["memory"] = {{"weights_bytes_per_gpu", r.weights_bytes},
                 {"activation_bytes_per_gpu", r.activation_bytes},
                 {"kv_pool_bytes_per_gpu", r.kv_pool_bytes},
                 {"cuda_graph_bytes_per_gpu", r.profile.cuda_graph_bytes},
                 {"kv_bytes_per_token", r.kv_bytes_per_token}};
  j["prefill"] = PhaseJson(r.prefill);
  j["decode"] = PhaseJson(r.decode);
  j["crossover_batch"] = r.crossover_batch;
  if (r.online) {
    const ServingLatency& v = r.serving;
    j["serving"] = {{"request_rate", v.rate},           {"concurrency", v.concurrency},
                    {"ttft_p50_s", v.ttft_p50_s},       {"ttft_p99_s", v.ttft_p99_s},
                    {"tpot_p50_s", v.tpot_p50_s},       {"tpot_p99_s", v.tpot_p99_s},
                    {"e2e_latency_p50_s", v.e2e_p50_s}, {"saturated", v.saturated}};
  }
  if (r.spec_tokens > 0)
    j["speculative"] = {{"draft_model", r.draft_model},
                        {"spec_tokens", r.spec_tokens},
                        {"acceptance_rate", r.acceptance_rate},
                        {"tokens_per_target_step", r.spec_tokens_per_step}};
  if (r.disaggregated) {
    const DisaggregatedServing& d = r.disagg;
    j["disaggregation"] = {{"prefill_instances", d.prefill_instances},
                           {"decode_instances", d.decode_instances},
                           {"prefill_tp", d.prefill_tp},
                           {"decode_tp", d.decode_tp},
                           {"prefill_gpus", d.prefill_gpus},
                           {"decode_gpus", d.decode_gpus},
                           {"prefill_s", d.prefill_s},
                           {"kv_transfer_bytes", d.kv_transfer_bytes},
                           {"kv_transfer_bytes_per_gpu", d.kv_transfer_bytes_per_gpu},
                           {"kv_transfer_s", d.kv_transfer_s},
                           {"nic_bw_bytes_per_s", d.nic_bw_bytes_per_s},
                           {"nic_latency_s", d.nic_latency_s},
                           {"prefill_utilization", d.prefill_utilization},
                           {"decode_utilization", d.decode_utilization},
                           {"requests_per_s", d.requests_per_s},
                           {"meets_slo", d.meets_slo},
                           {"goodput_requests_per_s_per_gpu", d.goodput_requests_per_s_per_gpu},
                           {"goodput_tokens_per_s_per_gpu", d.goodput_tokens_per_s_per_gpu}};
  }
  j["engine"] = r.profile.id;
  j["launch_command"] = r.launch_command;
  j["assumed"] = json::array();
  for (const Assumption& a : r.assumed)
    j["assumed"].push_back({{"field", a.field}, {"value", a.value}, {"why", a.why}});
  return j.dump(indent);
}

}  // namespace trainsim
