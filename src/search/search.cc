// Search(): evaluate every index of the space on all cores, keep the top K and the Pareto front.
// Indices are split statically (i % threads), candidates are ordered by (objective, index), so
// the result does not depend on the thread or shard count.
#include "trainsim/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <string>
#include <system_error>
#include <thread>

#include "layer_cost.h"
#include "trainsim/hardware_figures.h"
#include "trainsim/limits.h"
#include "trainsim/trainsim.h"
#include "workload_rules.h"

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

// Two strategies whose predictions agree in step time, peak and reserved memory to 1e-9
// (relative) differ only in settings that change nothing the search ranks by (ZeRO 1 vs 2
// where the gradient buffer is not sharded, rank orders that place the groups alike): the
// top list keeps one of them, the lowest index, and counts the others as its variants.
bool SameResult(const Candidate& a, const Candidate& b) {
  auto eq = [](double x, double y) {
    return std::abs(x - y) <= 1e-9 * std::max(std::abs(x), std::abs(y));
  };
  return eq(a.step_time_s, b.step_time_s) && eq(a.peak_mem_bytes, b.peak_mem_bytes) &&
         eq(a.reserved_bytes, b.reserved_bytes);
}

// Inserts c into the top k (best first), collapsing it into an entry with the same result.
// A class's score is shared by its members, so once a class falls out of a top list no later
// member (higher index) can re-enter: the variant counts of the final top are exact.
void TopInsert(std::vector<Candidate>& top, const Candidate& c, int k, Objective o) {
  Better better{o};
  for (auto it = top.begin(); it != top.end(); ++it) {
    if (!SameResult(*it, c)) continue;
    Candidate kept = it->index <= c.index ? *it : c;
    kept.variants = it->variants + c.variants + 1;
    top.erase(it);
    top.insert(std::upper_bound(top.begin(), top.end(), kept, better), kept);
    return;
  }
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
// Under a PEFT method only the frozen base is counted (its adapters' gradients and states are
// small); a 4-bit QLoRA base takes 4.127 bits per parameter (docs/FINETUNE.md); freeze trains
// an unknown share, so it is bounded as full training's weights only.
double StatesLowerBound(const ParamCounts& pc, const ModelSpec& m, const Strategy& s) {
  const double per_rank = static_cast<double>(pc.total) / (static_cast<double>(s.tp) * s.pp) /
                          (m.is_moe() ? static_cast<double>(s.ep) : 1.0);
  const double shard = static_cast<double>(s.dp()) * s.cp;
  const double weight_bytes = s.method == FtMethod::kQlora ? 4.127 / 8 : 2.0;
  double bytes = weight_bytes * (s.zero >= 3 ? per_rank / shard : per_rank);
  if (s.method != FtMethod::kFull) return 0.5 * bytes;
  bytes += s.grad_bytes_per_param() * (s.zero >= 2 ? per_rank / shard : per_rank);
  bytes += (1 - s.host_optimizer_share()) * 12.0 * (s.zero >= 1 ? per_rank / shard : per_rank);
  return 0.5 * bytes;  // generous: MoE and embedding sharding make the exact figure uneven
}

// The workload every candidate trains, under simulate's rules (CheckWorkloadRules): a bound it
// breaks is the input's error, not a rejection of each layout (issue 11: an adapter rank past
// the hidden size answered "0 feasible" with exit 0). Each searched method and rank is checked.
Status CheckSearchWorkload(const ModelSpec& m, const SearchOptions& o) {
  Strategy s = Combine(o.workload, Layout{});
  s.exec.optimizer = o.optimizer;
  s.master_weights = o.master_weights;
  s.world_size = o.gpus;
  s.gbs = o.gbs;
  s.seq = o.seq;
  s.dtype = o.dtype;
  const std::vector<FtMethod> methods =
      o.methods.empty() ? std::vector<FtMethod>{o.workload.method} : o.methods;
  const std::vector<int> ranks =
      o.lora_ranks.empty() ? std::vector<int>{o.workload.lora_rank} : o.lora_ranks;
  for (FtMethod method : methods)
    for (int rank : ranks) {
      s.method = method;
      s.lora_rank = rank;
      if (Status st = CheckWorkloadRules(m, s); !st.ok()) return st;
    }
  return Status::Ok();
}

// Checked before the first index and then every kCheckEvery indices per thread.
constexpr uint64_t kCheckEvery = 1024;

Status CheckOptions(const ModelSpec& m, const HardwareSpec& hw, const SearchOptions& o) {
  if (o.gpus < 1 || o.gpus > limits::kMaxWorldSize)
    return Status::Invalid("gpus", "must be in [1, " + std::to_string(limits::kMaxWorldSize) +
                                       "], got " + std::to_string(o.gpus));
  if (o.gbs < 1 || o.gbs > limits::kMaxGlobalBatch)
    return Status::Invalid(
        "gbs", "give a global batch size in [1, " + std::to_string(limits::kMaxGlobalBatch) + "]");
  if (o.seq < 1 || o.seq > limits::kMaxSeqLen)
    return Status::Invalid("seq", "must be in [1, " + std::to_string(limits::kMaxSeqLen) + "]");
  if (o.max_vpp < 1 || o.max_vpp > 64) return Status::Invalid("max_vpp", "must be in [1, 64]");
  if (o.top_k < 1) return Status::Invalid("top: must be >= 1");
  if (o.shards < 1 || o.shard < 0 || o.shard >= o.shards)
    return Status::Invalid("shard: must be in [0, shards)");
  if (!(o.memory_margin >= 0 && o.memory_margin < 1))  // NaN fails too
    return Status::Invalid("memory_margin: must be in [0, 1)");
  if (o.threads < 0 || o.threads > kMaxSearchThreads)
    return Status::Invalid("threads: must be in [0, " + std::to_string(kMaxSearchThreads) +
                           "] (0 = all hardware threads)");
  if (!(o.progress_interval_s >= 0)) return Status::Invalid("progress_interval_s: must be >= 0");
  if (Status st = ValidateModel(m); !st.ok()) return st;
  if (Status st = CheckSearchWorkload(m, o); !st.ok()) return st;
  if (Status st = ValidateHardware(hw); !st.ok()) return st.WithContext("hardware " + hw.id);
  if (Status st = CheckPeakSourced(hw, o.dtype); !st.ok()) return st.WithContext("hardware");
  if (hw.PeakFlops(o.dtype) <= 0)
    return Status::Invalid("dtype: " + hw.id + " has no " + std::string(DTypeName(o.dtype)) +
                           " tensor-core throughput");
  return Status::Ok();
}

// What every worker reads.
struct Ctx {
  const ModelSpec& m;
  const HardwareSpec& hw;
  const SearchOptions& o;
  SearchSpace space;
  ParamCounts pc;
  double capacity, tokens;
  std::chrono::steady_clock::time_point t0;
  uint64_t shard_size;  // indices of this shard
};

// What the workers update for progress reports.
struct Shared {
  std::atomic<uint64_t> done{0}, feasible{0};
};

// Evaluates index i into r: rejected with a reason, or feasible and offered to top and front.
void Evaluate(const Ctx& c, uint64_t i, SearchResult& r) {
  const ModelSpec& m = c.m;
  const HardwareSpec& hw = c.hw;
  ++r.evaluated;
  const char* dup = nullptr;
  const Strategy s = c.space.At(i, &dup);
  if (dup) {
    ++r.rejected[dup];
    return;
  }
  if (Status st = ValidateStrategy(s, m); !st.ok()) {
    ++r.rejected["does not divide: " + st.field()];
    return;
  }
  if (s.order != RankOrder::kTpCpDpPp) {
    Strategy def = s;
    def.order = RankOrder::kTpCpDpPp;
    if (SamePlacement(PlaceGroups(s, hw.scaleup_domain), PlaceGroups(def, hw.scaleup_domain))) {
      ++r.rejected["duplicate"];
      return;
    }
  }
  if (StatesLowerBound(c.pc, m, s) > c.capacity) {
    ++r.rejected["out of memory"];
    return;
  }
  SimOptions quiet;
  quiet.assumptions = false;
  auto rep = Simulate(m, hw, s, quiet);
  if (!rep.ok()) {
    ++r.rejected["invalid: " + rep.status().field()];
    return;
  }
  double reserved = 0;
  for (const StageReport& st : rep->stages) reserved = std::max(reserved, st.reserved_bytes);
  if (reserved > c.capacity) {
    ++r.rejected["out of memory"];
    return;
  }
  // What the offloads keep on the host exceeds the server's memory (docs/FINETUNE.md, "Host
  // memory").
  if (!rep->host_mem.fits) {
    ++r.rejected["out of host memory"];
    return;
  }
  ++r.feasible;
  Candidate cand;
  cand.index = i;
  cand.strategy = s;
  cand.step_time_s = rep->step_time_s;
  cand.mfu = rep->mfu;
  cand.tokens_per_s_per_gpu = rep->tokens_per_s_per_gpu;
  cand.peak_mem_bytes = rep->peak_mem_bytes;
  cand.reserved_bytes = reserved;
  cand.usd_per_million_tokens =
      rep->step_time_s * c.o.gpus * hw.price_usd_per_gpu_hour / 3600.0 / (c.tokens / 1e6);
  TopInsert(r.top, cand, c.o.top_k, c.o.objective);
  ParetoInsert(r.pareto, cand);
}

// Why the search must stop now, or nullptr.
const char* StopReason(const SearchOptions& o) {
  if (o.cancel && o.cancel->load(std::memory_order_relaxed)) return "cancelled";
  if (o.deadline != std::chrono::steady_clock::time_point::max() &&
      std::chrono::steady_clock::now() >= o.deadline)
    return "deadline";
  return nullptr;
}

SearchProgress MakeProgress(const Ctx& c, uint64_t evaluated, uint64_t feasible) {
  SearchProgress p;
  p.evaluated = evaluated;
  p.feasible = feasible;
  p.fraction = c.shard_size ? std::min(1.0, static_cast<double>(evaluated) / c.shard_size) : 1.0;
  p.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c.t0).count();
  return p;
}

// Thread t of `threads`: index i belongs to shard i % shards, and within it to thread
// (i / shards) % threads. Thread 0 reports progress.
void Work(const Ctx& c, int t, int threads, SearchResult& r, Shared& sh) {
  const SearchOptions& o = c.o;
  const uint64_t step = static_cast<uint64_t>(o.shards) * threads;
  uint64_t feasible_told = 0;
  auto last_report = c.t0;
  const auto interval = std::chrono::duration<double>(o.progress_interval_s);
  for (uint64_t i = static_cast<uint64_t>(o.shard) + static_cast<uint64_t>(t) * o.shards;
       i < c.space.size(); i += step) {
    if (r.evaluated % kCheckEvery == 0) {
      if (r.evaluated > 0) {
        sh.done.fetch_add(kCheckEvery, std::memory_order_relaxed);
        sh.feasible.fetch_add(r.feasible - feasible_told, std::memory_order_relaxed);
        feasible_told = r.feasible;
      }
      if (const char* why = StopReason(o)) {
        r.complete = false;
        r.stopped = why;
        return;
      }
      if (t == 0 && o.progress) {
        const auto now = std::chrono::steady_clock::now();
        if (now - last_report >= interval) {
          last_report = now;
          o.progress(MakeProgress(c, sh.done.load(), sh.feasible.load()));
        }
      }
    }
    Evaluate(c, i, r);
  }
}

}  // namespace

Status CheckSearchOptions(const ModelSpec& m, const HardwareSpec& hw, const SearchOptions& o) {
  return CheckOptions(m, hw, o);
}

Result<SearchResult> Search(const ModelSpec& m, const HardwareSpec& hw, const SearchOptions& o) {
  if (Status st = CheckOptions(m, hw, o); !st.ok()) return st;
  Ctx c{m,
        hw,
        o,
        SearchSpace(m, hw, o),
        CountParams(m),
        hw.hbm_bytes * (1 - o.memory_margin),
        static_cast<double>(o.gbs) * o.seq,
        std::chrono::steady_clock::now(),
        0};
  // Counted before enumerating: a space over the limit is refused with its size.
  if (c.space.size() > static_cast<uint64_t>(limits::kMaxSearchSpace))
    return Status::Invalid("gpus", "the search space has " + std::to_string(c.space.size()) +
                                       " strategies; at most " +
                                       std::to_string(limits::kMaxSearchSpace) +
                                       " are searched (fewer GPUs, a smaller max vpp)");
  const uint64_t n = c.space.size(), shard = static_cast<uint64_t>(o.shard);
  c.shard_size = n > shard ? (n - 1 - shard) / o.shards + 1 : 0;
  const int threads = o.threads > 0
                          ? o.threads
                          : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::vector<SearchResult> parts(threads);
  Shared shared;
  std::vector<std::thread> pool;
  std::vector<int> here;  // workers the system would not start a thread for run on this one
  for (int t = 1; t < threads; ++t) {
    try {
      pool.emplace_back(Work, std::cref(c), t, threads, std::ref(parts[t]), std::ref(shared));
    } catch (const std::system_error&) {
      here.push_back(t);
    }
  }
  Work(c, 0, threads, parts[0], shared);
  for (int t : here) Work(c, t, threads, parts[t], shared);
  for (std::thread& th : pool) th.join();
  SearchResult out = MergeSearchResults(parts, o.top_k, o.objective);
  out.space_size = c.shard_size;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - c.t0).count();
  if (o.progress) o.progress(MakeProgress(c, out.evaluated, out.feasible));
  return out;
}

SearchResult MergeSearchResults(const std::vector<SearchResult>& parts, int top_k, Objective obj) {
  SearchResult out;
  for (const SearchResult& p : parts) {
    out.space_size += p.space_size;
    out.evaluated += p.evaluated;
    out.feasible += p.feasible;
    out.seconds = std::max(out.seconds, p.seconds);
    if (!p.complete) {
      if (out.complete) out.stopped = p.stopped;
      out.complete = false;
    }
    for (const auto& [k, v] : p.rejected) out.rejected[k] += v;
    for (const Candidate& c : p.top) TopInsert(out.top, c, top_k, obj);
  }
  for (const Candidate& c : out.top) out.collapsed += c.variants;
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

}  // namespace trainsim
