// The rollout of an RL step: prefill of the prompts and decode of the responses on each
// generation replica, with the response lengths of a batch spread out (the longest one sets
// the end) and continuous batching bounded by the KV pool and max_num_seqs.
#include <algorithm>
#include <cmath>
#include <limits>

#include "rl/rl.h"
#include "trainsim/infer.h"
#include "util/units.h"

namespace trainsim::rl {
namespace {

// Engine memory besides weights and KV: CUDA context, NCCL and allocator slack (1 GiB, as
// src/infer/serve.cc) and the activations of one max_num_batched_tokens iteration (1 GiB).
constexpr double kEngineOverheadBytes = 2.0 * units::kGiB;
// Points of the trapezoid rule over the decode tail.
constexpr int kTailPoints = 64;

// Expected maximum of n exponentials of scale 1: the harmonic number H(n).
double Harmonic(double n) {
  return std::log(std::max(1.0, n)) + 0.5772156649 + 0.5 / std::max(1.0, n);
}

}  // namespace

double ExponentialScaleForMean(double mean, double cap) {
  if (mean >= cap * (1 - 1e-9)) return std::numeric_limits<double>::infinity();
  // mu (1 - exp(-cap/mu)) rises from 0 to cap with mu: bisection in log space.
  double lo = mean, hi = mean * 1e9;
  for (int i = 0; i < 200; ++i) {
    const double mid = std::sqrt(lo * hi);
    (mid * (1 - std::exp(-cap / mid)) < mean ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

Result<Generation> RolloutTime(const ModelSpec& m, const HardwareSpec& hw, const RlPlan& p) {
  Generation g;
  DecodeLayout layout{p.gen_tp, p.gen_pp, 0};
  layout.eager_host_us_per_kernel = p.eager_host_us;
  auto mem = DecodeReplicaMemory(m, hw, layout);
  if (!mem.ok()) return mem.status();
  g.weight_bytes = mem->weight_bytes;
  g.kv_pool_bytes =
      std::max(0.0, p.mem_fraction * hw.hbm_bytes - g.weight_bytes - kEngineOverheadBytes);
  // Sequences per replica; the KV a running sequence holds on average (prompt + mean response:
  // vLLM allocates blocks as tokens are generated).
  const double n = std::ceil(p.generated() / p.replicas);
  // Streaming (the pool runs up to max_age steps ahead): the engine holds the sequences of
  // max_age steps at once, not only this step's.
  const double waiting = p.streaming() ? n * p.max_age : n;
  const double kv_seq = mem->kv_bytes_per_token * (p.prompt + p.response);
  const double by_kv = kv_seq > 0 ? std::floor(g.kv_pool_bytes / kv_seq) : waiting;
  g.batch = std::min({waiting, static_cast<double>(p.max_num_seqs), by_kv});
  if (g.batch < 1) {
    // The weights leave no room for one sequence: flagged, and timed as the layout would run
    // with room (issue 12: a plan that does not fit still gets the time it would have).
    g.fits = false;
    g.batch = std::min(waiting, static_cast<double>(p.max_num_seqs));
  }
  auto step = [&](double batch, double ctx) {
    return DecodeStepTime(m, hw, layout, std::max(1.0, batch), ctx);
  };
  auto prefill = PrefillTime(m, hw, layout, n, p.prompt);
  if (!prefill.ok()) return prefill.status();
  g.prefill_s = prefill.value();
  if (p.streaming()) {
    // Continuous batching in steady state: every iteration emits one token per running
    // sequence, whose context is on average halfway through its response; a step's share is
    // its n x mean response tokens. The longest response of the step decodes beside the next
    // steps' prompts (NeMo RL async GRPO with max_trajectory_age_steps >= 2, verl fully_async
    // streaming), so it adds no drain tail.
    auto full = step(g.batch, p.prompt + 0.5 * p.response);
    if (!full.ok()) return full.status();
    g.decode_steps = n * p.response / g.batch;
    g.decode_s = g.decode_steps * full.value();
    return g;
  }
  // While sequences queue, the batch stays full: (n - B) * mean response tokens at batch B.
  if (n > g.batch) {
    auto full = step(g.batch, p.prompt + p.response);
    if (!full.ok()) return full.status();
    const double steps = (n - g.batch) * p.response / g.batch;
    g.decode_s += steps * full.value();
    g.decode_steps += steps;
  }
  // The last batch drains: lengths min(X, cap), X exponential with the mean response; the
  // longest of all generated responses ends the rollout (every replica waits for it).
  const double mu = ExponentialScaleForMean(p.response, p.max_response);
  const double end =
      std::isinf(mu) ? p.max_response : std::min(p.max_response, mu * Harmonic(p.generated()));
  const double b0 = std::min(n, g.batch);
  double prev = 0;
  for (int i = 0; i <= kTailPoints; ++i) {
    const double t = end * i / kTailPoints;
    const double alive = std::isinf(mu) ? 1.0 : std::exp(-t / mu);
    auto s = step(std::max(1.0, b0 * alive), p.prompt + t);
    if (!s.ok()) return s.status();
    if (i > 0) g.decode_s += 0.5 * (prev + s.value()) * end / kTailPoints;
    prev = s.value();
  }
  g.decode_steps += end;
  return g;
}

}  // namespace trainsim::rl
