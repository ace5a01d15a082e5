// Search(): evaluate every index of the space on all cores, keep the top K and the Pareto front.
// Indices are split statically (i % threads), candidates are ordered by (objective, index), so
// the result does not depend on the thread or shard count.
#include "trainsim/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <sstream>
#include <thread>

#include "layer_cost.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

double Score(const Candidate& c, Objective o) {
  switch (o) {
    case Objective::kTime:
      return c.step_time_s;
    case Objective::kCost:
      return c.usd_per_million_tokens;
    case Objective::kMemory:
      return c.peak_mem_bytes;
  }
  return c.step_time_s;
}

struct Better {
  Objective o;
  bool operator()(const Candidate& a, const Candidate& b) const {
    const double x = Score(a, o), y = Score(b, o);
    return x != y ? x < y : a.index < b.index;
  }
};

// Keeps the non-dominated set in (time, memory); ties resolved by index.
void ParetoInsert(std::vector<Candidate>& front, const Candidate& c) {
  for (const Candidate& f : front)
    if (f.step_time_s <= c.step_time_s && f.peak_mem_bytes <= c.peak_mem_bytes &&
        (f.step_time_s < c.step_time_s || f.peak_mem_bytes < c.peak_mem_bytes || f.index < c.index))
      return;
  front.erase(std::remove_if(front.begin(), front.end(),
                             [&](const Candidate& f) {
                               return c.step_time_s <= f.step_time_s &&
                                      c.peak_mem_bytes <= f.peak_mem_bytes;
                             }),
              front.end());
  front.push_back(c);
}

void TopInsert(std::vector<Candidate>& top, const Candidate& c, int k, Objective o) {
  Better better{o};
  if (static_cast<int>(top.size()) == k && !better(c, top.back())) return;
  top.insert(std::upper_bound(top.begin(), top.end(), c, better), c);
  if (static_cast<int>(top.size()) > k) top.pop_back();
}

bool SamePlacement(const Placements& a, const Placements& b) {
  auto eq = [](const cost::Placement& x, const cost::Placement& y) {
    return x.size == y.size && x.local == y.local;
  };
  return eq(a.tp, b.tp) && eq(a.cp, b.cp) && eq(a.dp_cp, b.dp_cp) && eq(a.pp, b.pp) &&
         eq(a.ep, b.ep) && eq(a.etp, b.etp) && eq(a.edp, b.edp);
}

// A cheap lower bound of the resident model states per rank (weights, grads, optimizer), to
// reject what cannot fit before simulating.
double StatesLowerBound(const ParamCounts& pc, const ModelSpec& m, const Strategy& s) {
  const double per_rank = static_cast<double>(pc.total) / (static_cast<double>(s.tp) * s.pp) /
                          (m.is_moe() ? static_cast<double>(s.ep) : 1.0);
  const double shard = static_cast<double>(s.dp()) * s.cp;
  double bytes = 2.0 * (s.zero >= 3 ? per_rank / shard : per_rank);
  bytes += (s.main_grad_fp32 ? 4.0 : 2.0) * (s.zero >= 2 ? per_rank / shard : per_rank);
  if (!s.offload_optimizer) bytes += 12.0 * (s.zero >= 1 ? per_rank / shard : per_rank);
  return 0.5 * bytes;  // generous: MoE and embedding sharding make the exact figure uneven
}

}  // namespace

Result<SearchResult> Search(const ModelSpec& m, const HardwareSpec& hw, const SearchOptions& o) {
  if (o.gpus < 1) return Status::Invalid("gpus: must be >= 1");
  if (o.gbs < 1) return Status::Invalid("gbs: give a global batch size >= 1");
  if (o.seq < 1) return Status::Invalid("seq: must be >= 1");
  if (o.top_k < 1) return Status::Invalid("top: must be >= 1");
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards)
    return Status::Invalid("shard: must be in [0, shards)");
  if (o.memory_margin < 0 || o.memory_margin >= 1)
    return Status::Invalid("memory_margin: must be in [0, 1)");
  if (Status st = ValidateModel(m); !st.ok()) return st;
  if (hw.PeakFlops(o.dtype) <= 0)
    return Status::Invalid("dtype: " + hw.id + " has no " + std::string(DTypeName(o.dtype)) +
                           " tensor-core throughput");
  const auto t0 = std::chrono::steady_clock::now();
  const SearchSpace space(m, hw, o);
  const ParamCounts pc = CountParams(m);
  const double capacity = hw.hbm_bytes * (1 - o.memory_margin);
  const int threads = o.threads > 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  const double tokens = static_cast<double>(o.gbs) * o.seq;

  struct Local {
    SearchResult r;
  };
  std::vector<Local> locals(threads);
  std::atomic<uint64_t> done{0};
  const uint64_t n = space.size();
  auto work = [&](int t) {
    SearchResult& r = locals[t].r;
    uint64_t count = 0;
    auto last_report = std::chrono::steady_clock::now();
    // Index i belongs to shard i % shards, and within it to thread (i / shards) % threads.
    for (uint64_t i = static_cast<uint64_t>(o.shard) + static_cast<uint64_t>(t) * o.shards; i < n;
         i += static_cast<uint64_t>(o.shards) * threads) {
      ++r.evaluated;
      if (++count % 4096 == 0) {
        done.fetch_add(4096, std::memory_order_relaxed);
        if (t == 0 && o.progress) {
          const auto now = std::chrono::steady_clock::now();
          if (now - last_report > std::chrono::milliseconds(50)) {
            last_report = now;
            o.progress(static_cast<double>(done.load()) * o.shards / n);
          }
        }
      }
      const char* dup = nullptr;
      const Strategy s = space.At(i, &dup);
      if (dup) {
        ++r.rejected[dup];
        continue;
      }
      if (Status st = ValidateStrategy(s, m); !st.ok()) {
        const std::string msg = st.message();
        ++r.rejected["does not divide: " + msg.substr(0, msg.find(':'))];
        continue;
      }
      if (s.order != RankOrder::kTpCpDpPp) {
        Strategy def = s;
        def.order = RankOrder::kTpCpDpPp;
        if (SamePlacement(PlaceGroups(s, hw.scaleup_domain), PlaceGroups(def, hw.scaleup_domain))) {
          ++r.rejected["duplicate"];
          continue;
        }
      }
      if (StatesLowerBound(pc, m, s) > capacity) {
        ++r.rejected["out of memory"];
        continue;
      }
      auto rep = Simulate(m, hw, s);
      if (!rep.ok()) {
        const std::string msg = rep.status().message();
        ++r.rejected["invalid: " + msg.substr(0, msg.find(':'))];
        continue;
      }
      double reserved = 0;
      for (const StageReport& st : rep->stages) reserved = std::max(reserved, st.reserved_bytes);
      if (reserved > capacity) {
        ++r.rejected["out of memory"];
        continue;
      }
      ++r.feasible;
      Candidate c;
      c.index = i;
      c.strategy = s;
      c.step_time_s = rep->step_time_s;
      c.mfu = rep->mfu;
      c.tokens_per_s_per_gpu = rep->tokens_per_s_per_gpu;
      c.peak_mem_bytes = rep->peak_mem_bytes;
      c.reserved_bytes = reserved;
      c.usd_per_million_tokens =
          rep->step_time_s * o.gpus * hw.price_usd_per_gpu_hour / 3600.0 / (tokens / 1e6);
      TopInsert(r.top, c, o.top_k, o.objective);
      ParetoInsert(r.pareto, c);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(work, t);
  work(0);
  for (std::thread& th : pool) th.join();
  std::vector<SearchResult> parts;
  for (Local& l : locals) parts.push_back(std::move(l.r));
  SearchResult out = MergeSearchResults(parts, o.top_k, o.objective);
  out.space_size = out.evaluated;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.progress) o.progress(1.0);
  return out;
}

SearchResult MergeSearchResults(const std::vector<SearchResult>& parts, int top_k, Objective obj) {
  SearchResult out;
  for (const SearchResult& p : parts) {
    out.space_size += p.space_size;
    out.evaluated += p.evaluated;
    out.feasible += p.feasible;
    out.seconds = std::max(out.seconds, p.seconds);
    for (const auto& [k, v] : p.rejected) out.rejected[k] += v;
    for (const Candidate& c : p.top) TopInsert(out.top, c, top_k, obj);
  }
  std::vector<Candidate> all;
  for (const SearchResult& p : parts) all.insert(all.end(), p.pareto.begin(), p.pareto.end());
  std::sort(all.begin(), all.end(),
            [](const Candidate& a, const Candidate& b) { return a.index < b.index; });
  for (const Candidate& c : all) ParetoInsert(out.pareto, c);
  std::sort(out.pareto.begin(), out.pareto.end(), [](const Candidate& a, const Candidate& b) {
    return a.step_time_s != b.step_time_s ? a.step_time_s < b.step_time_s : a.index < b.index;
  });
  return out;
}

std::string MegatronArgs(const Strategy& s) {
  return FormatMegatronArgs(s);  // driven by the Strategy schema (trainsim/schema.h)
}

std::string DescribeStrategy(const Strategy& s) {
  std::ostringstream o;
  o << "tp " << s.tp << " pp " << s.pp << " vpp " << s.vpp << " cp " << s.cp;
  if (s.ep > 1) o << " ep " << s.ep << " etp " << s.expert_tp();
  o << " dp " << s.dp() << " mbs " << s.mbs << " zero " << s.zero << (s.sp && s.tp > 1 ? " sp" : "")
    << (s.recompute == Recompute::kNone ? ""
        : s.recompute == Recompute::kSelective
            ? (s.recompute_modules == kRecomputeCoreAttn ? " rc=selective" : " rc=selective+")
        : s.recompute_layers > 0 ? " rc=full/" + std::to_string(s.recompute_layers)
                                 : std::string(" rc=full"))
    << (s.offload_optimizer ? " offload" : "")
    << (s.schedule == PipelineSchedule::kZeroBubbleH1 ? " zb-h1"
        : s.schedule == PipelineSchedule::kDualPipe   ? " dualpipe"
                                                      : "")
    << (s.order != RankOrder::kTpCpDpPp ? " order=" + std::string(RankOrderName(s.order)) : "");
  return o.str();
}

}  // namespace trainsim
