// Disaggregated prefill/decode (DistServe, Zhong et al., OSDI 2024; vLLM "Disaggregated
// Prefilling", SGLang "PD Disaggregation", NVIDIA Dynamo): prefill instances prefill every
// prompt and send its KV cache over the NIC (NIXL / Mooncake RDMA, GPU memory to GPU memory) to
// a decode instance that only decodes. Each pool is simulated as its own single-instance layout.
#include "infer/disagg.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <string>

#include "infer/rate.h"
#include "infer/step.h"

namespace trainsim {
namespace infer {
namespace {

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

Status CheckDisagg(const ModelSpec& m, const HardwareSpec& hw, const InferenceSpec& s) {
  if (s.prefill_instances < 1 || s.decode_instances < 1)
    return Status::Invalid("disaggregate", "needs >= 1 prefill and >= 1 decode instance");
  if (s.prefill_tp < 1) return Status::Invalid("prefill_tp", "must be >= 1");
  if (s.decode_tp < 1) return Status::Invalid("decode_tp", "must be >= 1");
  if (m.heads % s.prefill_tp != 0)
    return Status::Invalid("prefill_tp", "must divide the attention heads");
  if (m.heads % s.decode_tp != 0)
    return Status::Invalid("decode_tp", "must divide the attention heads");
  if (s.pp < 1) return Status::Invalid("pp", "must be >= 1");
  const long need =
      static_cast<long>(s.pp) * (static_cast<long>(s.prefill_instances) * s.prefill_tp +
                                 static_cast<long>(s.decode_instances) * s.decode_tp);
  if (s.gpus != need)
    return Status::Invalid("gpus",
                           "must equal pp x (prefill instances x prefill_tp + decode "
                           "instances x decode_tp) = " +
                               std::to_string(need));
  if (s.spec_tokens > 0)
    return Status::Invalid("disaggregate", "excludes speculative decoding (not modelled)");
  if (!(hw.nic_bw_bytes_per_s > 0))
    return Status::Invalid("hardware",
                           "needs a NIC bandwidth (nic_gbps_per_gpu) for the KV "
                           "transfer");
  if (!(s.slo_ttft_s >= 0) || !(s.slo_tpot_s >= 0)) return Status::Invalid("slo", "must be >= 0");
  return Status::Ok();
}

// One instance of a pool: the spec's model settings on tp x pp GPUs, colocated.
InferenceSpec PoolSpec(const InferenceSpec& s, int tp) {
  InferenceSpec x = s;
  x.prefill_instances = x.decode_instances = 0;
  x.prefill_tp = x.decode_tp = 0;
  x.tp = tp;
  x.gpus = tp * s.pp;
  x.request_rate = 0;
  return x;
}

// What both pools share: the prefill of one prompt, the decode pool's limits, the KV hand-off.
struct Pools {
  InferenceSpec ps, ds;     // one prefill / decode instance
  InferenceReport pre_one;  // prefill instance, one prompt
  InferenceReport probe;    // decode instance at offline maximum load: its batch limit
  double bytes_gpu = 0;     // KV bytes one prefill GPU sends per request
  double xfer_s = 0;        // one request's KV transfer
  double bmax = 0;          // decode sequences per instance: min(max_num_seqs, KV pool)
};

Result<Pools> MakePools(const ModelSpec& m, const HardwareSpec& hw, const InferenceSpec& s) {
  Pools p;
  p.ps = PoolSpec(s, s.prefill_tp);
  p.ps.output_len = 1;  // a prefill instance holds the prompt's KV only until it is sent
  p.ps.batch = 1;
  auto pre = SimulateInference(m, hw, p.ps);
  if (!pre.ok()) return pre.status();
  p.pre_one = pre.value();
  p.ds = PoolSpec(s, s.decode_tp);
  p.ds.batch = 0;
  auto probe = SimulateInference(m, hw, p.ds);
  if (!probe.ok()) return probe.status();
  p.probe = probe.value();
  p.bmax = p.probe.batch;
  // Per-GPU KV of the prefill instance's heaviest stage (kv_bytes_per_token sums tp x pp GPUs).
  const double kv_tok_gpu = p.pre_one.kv_bytes_per_token / (s.prefill_tp * s.pp);
  p.bytes_gpu = s.prompt_len * kv_tok_gpu;
  p.xfer_s = KvTransferSeconds(hw, p.bytes_gpu);
  // Later decode runs reuse the resolved engine (no reload; max_num_seqs as the probe had it).
  p.ds.profile = p.probe.profile;
  p.ds.profile_given = true;
  return p;
}

Result<InferenceReport> DecodeAt(const ModelSpec& m, const HardwareSpec& hw, const Pools& p,
                                 double batch) {
  InferenceSpec x = p.ds;
  x.batch = std::max(1.0, batch);
  return SimulateInference(m, hw, x);
}

// Fixed batch B per decode instance (or the offline maximum): the batch's prompts arrive as a
// wave spread over the prefill instances; while the decode pool decodes one wave the prefill
// pool prefills and sends the next, so a cycle takes the longer of the two.
struct Cycle {
  double ttft = 0, tpot = 0, cycle = 0, prefill_busy = 0, decode_busy = 0, prefill_s = 0;
  PhaseBreakdown prefill;
  InferenceReport dec;
};

Result<Cycle> WaveCycle(const ModelSpec& m, const HardwareSpec& hw, const Pools& p,
                        const InferenceSpec& s, double B, bool offline) {
  Cycle c;
  auto dec = DecodeAt(m, hw, p, B);
  if (!dec.ok()) return dec.status();
  c.dec = dec.value();
  c.tpot = c.dec.decode.total_s;
  const double wave = std::ceil(s.decode_instances * B / s.prefill_instances);
  InferenceSpec x = p.ps;
  x.batch = wave;
  auto pre = SimulateInference(m, hw, x);
  if (!pre.ok()) return pre.status();
  c.prefill = pre->prefill;
  // The NIC streams each prompt's KV while the next one prefills: the pool is busy for the
  // longer of the two, plus one transfer's start-up.
  const double send = wave * p.bytes_gpu / hw.nic_bw_bytes_per_s;
  c.prefill_busy = std::max(c.prefill.total_s, send) + hw.nic_latency_s;
  c.prefill_s = offline ? p.pre_one.prefill.total_s : c.prefill.total_s;
  c.ttft = c.prefill_s + p.xfer_s;
  c.decode_busy = s.output_len * c.tpot;
  c.cycle = std::max(c.decode_busy, c.prefill_busy);
  return c;
}

// The shape of the report: memory of the decode pool (where the KV lives), layout, assumptions.
void FillCommon(const Pools& p, const InferenceSpec& s, const InferenceReport& dec,
                InferenceReport& r) {
  r = dec;
  // The decode runs reuse a resolved engine: the probe's list names every default.
  r.assumed.clear();
  for (const Assumption& a : p.probe.assumed)
    if (a.field != "batch") r.assumed.push_back(a);
  r.weights_bytes = std::max(dec.weights_bytes, p.pre_one.weights_bytes);
  r.activation_bytes = std::max(dec.activation_bytes, p.pre_one.activation_bytes);
  r.kv_cache_bytes = dec.kv_cache_bytes * s.decode_instances;
  r.replicas = s.decode_instances;
  r.fits = p.pre_one.fits && dec.fits;
  if (!p.pre_one.fits) r.why_not = "prefill instance: " + p.pre_one.why_not;
  r.disaggregated = true;
  DisaggregatedServing& d = r.disagg;
  d.prefill_instances = s.prefill_instances;
  d.decode_instances = s.decode_instances;
  d.prefill_tp = s.prefill_tp;
  d.decode_tp = s.decode_tp;
  d.prefill_gpus = s.prefill_instances * s.prefill_tp * s.pp;
  d.decode_gpus = s.decode_instances * s.decode_tp * s.pp;
  d.kv_transfer_bytes_per_gpu = p.bytes_gpu;
  d.kv_transfer_bytes = p.bytes_gpu * s.prefill_tp * s.pp;
  d.kv_transfer_s = p.xfer_s;
  for (const Assumption& a : p.pre_one.assumed) {
    const bool same = std::any_of(r.assumed.begin(), r.assumed.end(), [&a](const Assumption& b) {
      return b.field == a.field && b.value == a.value;
    });
    if (!same) r.assumed.push_back({"prefill." + a.field, a.value, a.why});
  }
  r.assumed.push_back({"kv_transfer", "NIC",
                       "each prefill GPU sends its KV shard to the decode instance over its own "
                       "NIC at the preset's nominal bandwidth (GPUDirect RDMA via NIXL/Mooncake)"});
}

void Goodput(const InferenceSpec& s, InferenceReport& r) {
  DisaggregatedServing& d = r.disagg;
  d.meets_slo = r.fits && std::isfinite(r.ttft_s) &&
                (s.slo_ttft_s <= 0 || r.ttft_s <= s.slo_ttft_s) &&
                (s.slo_tpot_s <= 0 || r.tpot_s <= s.slo_tpot_s);
  d.goodput_requests_per_s_per_gpu = d.meets_slo ? d.requests_per_s / s.gpus : 0;
  d.goodput_tokens_per_s_per_gpu = d.goodput_requests_per_s_per_gpu * s.output_len;
}

Status FillFixed(const ModelSpec& m, const HardwareSpec& hw, const Pools& p, const InferenceSpec& s,
                 InferenceReport& r) {
  const bool offline = s.batch == 0;
  const double B = offline ? p.bmax : s.batch;
  if (B < 1) {
    FillCommon(p, s, p.probe, r);
    r.fits = false;
    return Status::Ok();
  }
  auto c = WaveCycle(m, hw, p, s, B, offline);
  if (!c.ok()) return c.status();
  FillCommon(p, s, c->dec, r);
  if (offline)
    r.assumed.push_back({"batch", Num(B),
                         "offline maximum load per decode instance: min(max_num_seqs, KV pool / "
                         "KV per sequence at prompt + output)"});
  r.ttft_s = c->ttft;
  r.tpot_s = c->tpot;
  r.prefill = c->prefill;
  r.disagg.prefill_s = c->prefill_s;
  r.disagg.requests_per_s = s.decode_instances * B / c->cycle;
  r.output_tokens_per_s = r.disagg.requests_per_s * s.output_len;
  r.disagg.prefill_utilization = c->prefill_busy / c->cycle;
  r.disagg.decode_utilization = c->decode_busy / c->cycle;
  return Status::Ok();
}

Status FillRate(const ModelSpec& m, const HardwareSpec& hw, const Pools& p, const InferenceSpec& s,
                InferenceReport& r) {
  DisaggRateInputs in;
  in.rate = s.request_rate;
  in.prefill_instances = s.prefill_instances;
  in.decode_instances = s.decode_instances;
  in.output_len = s.output_len;
  in.max_seqs = p.bmax;
  in.prefill_one_s = p.pre_one.prefill.total_s;
  in.prefill_busy_one_s =
      std::max(in.prefill_one_s, p.bytes_gpu / hw.nic_bw_bytes_per_s) + hw.nic_latency_s;
  in.kv_transfer_s = p.xfer_s;
  in.decode_step = [&](double n) {
    auto d = DecodeAt(m, hw, p, n);
    return d.ok() ? d->decode.total_s : INFINITY;
  };
  double prefill_util = 0;
  const ServingLatency v = DisaggServeAtRate(in, &prefill_util);
  auto dec = DecodeAt(m, hw, p, std::min(v.concurrency, std::max(1.0, p.bmax)));
  if (!dec.ok()) return dec.status();
  FillCommon(p, s, dec.value(), r);
  r.online = true;
  r.serving = v;
  r.batch = std::min(v.concurrency, p.bmax);
  r.kv_cache_bytes *= r.batch / std::max(1.0, dec->batch);
  r.prefill = p.pre_one.prefill;
  r.ttft_s = v.ttft_p50_s;
  r.tpot_s = v.tpot_p50_s;
  r.disagg.prefill_s = p.pre_one.prefill.total_s;
  r.disagg.prefill_utilization = prefill_util;
  // The most the pools sustain (the wave cycle at the decode pool's batch limit).
  double capacity = 0;
  if (p.bmax >= 1) {
    auto c = WaveCycle(m, hw, p, s, p.bmax, true);
    if (!c.ok()) return c.status();
    capacity = s.decode_instances * p.bmax / c->cycle;
    r.disagg.decode_utilization =
        std::min(1.0, s.request_rate * s.output_len * c->tpot / (s.decode_instances * p.bmax));
  }
  r.disagg.requests_per_s = v.saturated ? capacity : s.request_rate;
  r.output_tokens_per_s = r.disagg.requests_per_s * s.output_len;
  return Status::Ok();
}

// The engines' spelling of the two roles (vLLM --kv-transfer-config kv_role, SGLang
// --disaggregation-mode, TensorRT-LLM context / generation servers of `trtllm-serve
// disaggregated`).
std::string RoleFlags(const std::string& engine, bool prefill) {
  if (engine == "vllm")
    return std::string(
               " --kv-transfer-config '{\"kv_connector\": \"NixlConnector\", "
               "\"kv_role\": \"") +
           (prefill ? "kv_producer" : "kv_consumer") + "\"}'";
  if (engine == "sglang")
    return std::string(" --disaggregation-mode ") + (prefill ? "prefill" : "decode") +
           " --disaggregation-transfer-backend nixl";
  if (engine == "tensorrt-llm")
    return prefill ? "  # context server (trtllm-serve disaggregated -c CONFIG)"
                   : "  # generation server (trtllm-serve disaggregated -c CONFIG)";
  return "  # " + engine + ": no disaggregated serving";
}

std::string LaunchLines(const ModelSpec& m, const Pools& p, const InferenceSpec& s,
                        const InferenceReport& r) {
  InferenceReport pre = p.pre_one, dec = r;
  pre.profile.max_num_seqs = p.probe.profile.max_num_seqs;
  dec.replicas = 1;  // one line per instance; the comment above it counts them
  const std::string& id = r.profile.id;
  return "# " + std::to_string(s.prefill_instances) + " prefill instance(s):\n" +
         LaunchCommand(m.name, pre) + RoleFlags(id, true) + "\n# " +
         std::to_string(s.decode_instances) + " decode instance(s):\n" +
         LaunchCommand(m.name, dec) + RoleFlags(id, false);
}

}  // namespace

}  // namespace infer

Status ParseDisaggregation(std::string_view text, InferenceSpec& s) {
  const Status bad = Status::Invalid("disaggregate",
                                     "must be P:D or xPyD (prefill and decode "
                                     "instances, both >= 1), e.g. 1:3 or 1P3D");
  std::string t(text);
  for (char& c : t) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  int p = 0, d = 0, used = 0;
  if (std::sscanf(t.c_str(), "%d:%d%n", &p, &d, &used) != 2 &&
      std::sscanf(t.c_str(), "%dp%dd%n", &p, &d, &used) != 2)
    return bad;
  if (used != static_cast<int>(t.size()) || p < 1 || d < 1 || p > (1 << 20) || d > (1 << 20))
    return bad;
  s.prefill_instances = p;
  s.decode_instances = d;
  return Status::Ok();
}

namespace infer {

double KvTransferSeconds(const HardwareSpec& hw, double bytes_per_gpu) {
  return bytes_per_gpu / hw.nic_bw_bytes_per_s + hw.nic_latency_s;
}

Result<InferenceReport> SimulateDisaggregated(const ModelSpec& m, const HardwareSpec& hw,
                                              const InferenceSpec& spec) {
  InferenceSpec s = spec;
  if (s.prefill_tp == 0) s.prefill_tp = s.tp;
  if (s.decode_tp == 0) s.decode_tp = s.tp;
  if (Status st = CheckDisagg(m, hw, s); !st.ok()) return st;
  auto pools = MakePools(m, hw, s);
  if (!pools.ok()) return pools.status();
  InferenceReport r;
  Status st = s.request_rate > 0 ? FillRate(m, hw, pools.value(), s, r)
                                 : FillFixed(m, hw, pools.value(), s, r);
  if (!st.ok()) return st;
  r.disagg.nic_bw_bytes_per_s = hw.nic_bw_bytes_per_s;
  r.disagg.nic_latency_s = hw.nic_latency_s;
  r.output_tokens_per_s_per_gpu = r.output_tokens_per_s / s.gpus;
  Goodput(s, r);
  r.launch_command = LaunchLines(m, pools.value(), s, r);
  ApplyInferenceBand(r, m.is_moe());  // the colocated residuals' band: none measured disaggregated
  return r;
}

}  // namespace infer
}  // namespace trainsim
