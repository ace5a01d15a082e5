#include "trainsim/search.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <set>
#include <thread>

#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

struct Fixture {
  ModelSpec m = LoadModel("llama3-8b").value();
  HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  SearchOptions o;
  Fixture() {
    o.gpus = 16;
    o.gbs = 32;
    o.seq = 4096;
    o.top_k = 5;
    o.threads = 1;
  }
};

TEST(Search, FindsTheTrueOptimumOfASmallSpace) {
  Fixture f;
  auto r = Search(f.m, f.hw, f.o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_FALSE(r->top.empty());
  // Brute force: every index of the space, the same feasibility rule, the minimum step time.
  const SearchSpace space(f.m, f.hw, f.o);
  double best = 1e30;
  uint64_t feasible = 0;
  for (uint64_t i = 0; i < space.size(); ++i) {
    const char* dup = nullptr;
    const Strategy s = space.At(i, &dup);
    if (dup || !ValidateStrategy(s, f.m).ok()) continue;
    auto rep = Simulate(f.m, f.hw, s);
    if (!rep.ok()) continue;
    double reserved = 0;
    for (const StageReport& st : rep->stages) reserved = std::max(reserved, st.reserved_bytes);
    if (reserved > f.hw.hbm_bytes * (1 - f.o.memory_margin)) continue;
    ++feasible;
    best = std::min(best, rep->step_time_s);
  }
  EXPECT_DOUBLE_EQ(r->top.front().step_time_s, best);
  // The search may drop order duplicates the brute force keeps; the optimum is not one.
  EXPECT_LE(r->feasible, feasible);
  EXPECT_GT(r->feasible, 0u);
}

TEST(Search, RejectionCountsAddUpToTheSpace) {
  Fixture f;
  auto r = Search(f.m, f.hw, f.o);
  ASSERT_TRUE(r.ok());
  uint64_t sum = r->feasible;
  for (const auto& [reason, n] : r->rejected) sum += n;
  EXPECT_EQ(sum, r->evaluated);
  EXPECT_EQ(r->evaluated, SearchSpace(f.m, f.hw, f.o).size());
  EXPECT_GT(r->rejected.count("out of memory") + r->rejected.count("duplicate"), 0u);
}

std::vector<uint64_t> Indices(const std::vector<Candidate>& v) {
  std::vector<uint64_t> out;
  for (const Candidate& c : v) out.push_back(c.index);
  return out;
}

TEST(Search, SameResultWithOneAndTwoThreadsAndShards) {
  Fixture f;
  auto one = Search(f.m, f.hw, f.o);
  f.o.threads = 2;
  auto two = Search(f.m, f.hw, f.o);
  ASSERT_TRUE(one.ok() && two.ok());
  EXPECT_EQ(Indices(one->top), Indices(two->top));
  EXPECT_EQ(Indices(one->pareto), Indices(two->pareto));
  EXPECT_EQ(one->rejected, two->rejected);
  // Two shards (as two MPI ranks would run them), merged.
  std::vector<SearchResult> parts;
  for (int shard = 0; shard < 2; ++shard) {
    SearchOptions o = f.o;
    o.shards = 2;
    o.shard = shard;
    parts.push_back(Search(f.m, f.hw, o).value());
  }
  const SearchResult merged = MergeSearchResults(parts, f.o.top_k, f.o.objective);
  EXPECT_EQ(Indices(one->top), Indices(merged.top));
  EXPECT_EQ(Indices(one->pareto), Indices(merged.pareto));
  EXPECT_EQ(one->feasible, merged.feasible);
  EXPECT_EQ(one->evaluated, merged.evaluated);
}

TEST(Search, ParetoFrontIsNonDominated) {
  Fixture f;
  auto r = Search(f.m, f.hw, f.o);
  ASSERT_TRUE(r.ok());
  ASSERT_GE(r->pareto.size(), 2u);
  for (size_t i = 1; i < r->pareto.size(); ++i) {
    EXPECT_GE(r->pareto[i].step_time_s, r->pareto[i - 1].step_time_s);
    EXPECT_LT(r->pareto[i].peak_mem_bytes, r->pareto[i - 1].peak_mem_bytes);
  }
}

TEST(Search, MemoryObjectiveRanksByPeakMemory) {
  Fixture f;
  f.o.objective = Objective::kMemory;
  auto r = Search(f.m, f.hw, f.o);
  ASSERT_TRUE(r.ok());
  for (size_t i = 1; i < r->top.size(); ++i)
    EXPECT_LE(r->top[i - 1].peak_mem_bytes, r->top[i].peak_mem_bytes);
}

TEST(Search, BadOptionsAreErrors) {
  Fixture f;
  f.o.gbs = 0;
  auto r = Search(f.m, f.hw, f.o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("gbs"), std::string::npos);
}

TEST(Search, DeadlineInThePastStopsAtOnce) {
  Fixture f;
  f.o.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  f.o.threads = 2;
  auto r = Search(f.m, f.hw, f.o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(r->stopped, "deadline");
  EXPECT_EQ(r->evaluated, 0u);
  EXPECT_TRUE(r->top.empty());
  EXPECT_EQ(r->space_size, SearchSpace(f.m, f.hw, f.o).size());
}

TEST(Search, CompleteByDefault) {
  Fixture f;
  auto r = Search(f.m, f.hw, f.o);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->complete);
  EXPECT_TRUE(r->stopped.empty());
  EXPECT_EQ(r->evaluated, r->space_size);
}

// A space far larger than what runs before the cancel: Llama-3.1-405B on 16,384 GPUs.
struct BigFixture : Fixture {
  BigFixture() {
    m = LoadModel("llama3.1-405b").value();
    o.gpus = 16384;
    o.gbs = 2048;
    o.seq = 8192;
  }
};

TEST(Search, CancelFromAnotherThreadStopsIt) {
  BigFixture f;
  f.o.threads = 2;
  std::atomic<bool> cancel{false}, started{false};
  f.o.cancel = &cancel;
  f.o.progress_interval_s = 0;
  f.o.progress = [&](const SearchProgress&) { started = true; };
  std::thread canceller([&] {
    while (!started) std::this_thread::yield();
    cancel = true;
  });
  auto r = Search(f.m, f.hw, f.o);
  canceller.join();
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(r->stopped, "cancelled");
  EXPECT_LT(r->evaluated, r->space_size);
  uint64_t sum = r->feasible;
  for (const auto& [reason, n] : r->rejected) sum += n;
  EXPECT_EQ(sum, r->evaluated);  // the counts of a partial search still add up
}

TEST(Search, CancelledBeforeItStartsEvaluatesNothing) {
  Fixture f;
  std::atomic<bool> cancel{true};
  f.o.cancel = &cancel;
  auto r = Search(f.m, f.hw, f.o);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->complete);
  EXPECT_EQ(r->stopped, "cancelled");
  EXPECT_EQ(r->evaluated, 0u);
}

TEST(Search, ProgressEndsWithTheFinalCounts) {
  Fixture f;
  std::vector<SearchProgress> seen;
  f.o.progress_interval_s = 0;
  f.o.progress = [&](const SearchProgress& p) { seen.push_back(p); };
  auto r = Search(f.m, f.hw, f.o);
  ASSERT_TRUE(r.ok());
  ASSERT_GE(seen.size(), 2u);
  for (size_t i = 1; i < seen.size(); ++i) EXPECT_GE(seen[i].fraction, seen[i - 1].fraction);
  EXPECT_DOUBLE_EQ(seen.back().fraction, 1.0);
  EXPECT_EQ(seen.back().evaluated, r->evaluated);
  EXPECT_EQ(seen.back().feasible, r->feasible);
}

TEST(Search, ThreadCountIsChecked) {
  Fixture f;
  f.o.threads = -1;
  auto r = Search(f.m, f.hw, f.o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("threads"), std::string::npos);
  f.o.threads = kMaxSearchThreads + 1;
  EXPECT_FALSE(Search(f.m, f.hw, f.o).ok());
}

// SFT on one 8-GPU node in the coarse space without offload or rank orders (brute-forceable).
SearchOptions SftOnOneNode(int gbs, int top_k) {
  SearchOptions o;
  o.gpus = 8;
  o.gbs = gbs;
  o.seq = 4096;
  o.top_k = top_k;
  o.coarse = true;
  o.offload = false;
  o.orders = false;
  o.workload.stage = TrainStage::kSft;
  return o;
}

// "Which method and rank fit and run fastest": methods and ranks are search dimensions. The
// rank varies only for methods that have one (full fine-tuning appears once per layout), and the
// search over {full, lora, qlora} x {8, 64} finds exactly the best of the three single-method
// searches.
TEST(Search, MethodsAndRanksAreDimensions) {
  auto m = LoadModel("llama3-8b");
  auto hw = LoadHardware("h100_sxm_80gb");
  ASSERT_TRUE(m.ok() && hw.ok());
  SearchOptions o = SftOnOneNode(32, 50);
  const SearchSpace one(m.value(), hw.value(), o);
  o.methods = {FtMethod::kFull, FtMethod::kLora, FtMethod::kQlora};
  o.lora_ranks = {8, 64};
  const SearchSpace both(m.value(), hw.value(), o);
  EXPECT_EQ(both.size(), one.size() * 6);
  SearchOptions repeated = o;  // a list given twice is searched once
  repeated.methods = {FtMethod::kFull, FtMethod::kLora, FtMethod::kLora, FtMethod::kQlora};
  repeated.lora_ranks = {8, 64, 8};
  EXPECT_EQ(SearchSpace(m.value(), hw.value(), repeated).size(), both.size());
  uint64_t full_dups = 0, full = 0;
  for (uint64_t i = 0; i < both.size(); ++i) {
    const char* dup = nullptr;
    const Strategy s = both.At(i, &dup);
    if (s.method != FtMethod::kFull) continue;
    ++full;
    if (dup && s.lora_rank == 64) ++full_dups;
  }
  EXPECT_EQ(full_dups, full / 2);  // the rank-64 copy of every full layout is a duplicate
  auto mixed = Search(m.value(), hw.value(), o);
  ASSERT_TRUE(mixed.ok()) << mixed.status().message();
  ASSERT_FALSE(mixed->top.empty());
  std::set<FtMethod> seen;
  for (const Candidate& c : mixed->top) seen.insert(c.strategy.method);
  EXPECT_GT(seen.size(), 1u);
  double best = 1e30;
  for (FtMethod method : o.methods)
    for (int rank : o.lora_ranks) {
      SearchOptions single = o;
      single.methods.clear();
      single.lora_ranks.clear();
      single.workload.method = method;
      single.workload.lora_rank = rank;
      auto r = Search(m.value(), hw.value(), single);
      ASSERT_TRUE(r.ok());
      if (!r->top.empty()) best = std::min(best, r->top.front().step_time_s);
    }
  EXPECT_DOUBLE_EQ(mixed->top.front().step_time_s, best);
}

// Issue 12: "Llama-3-70B, LoRA, on one 8xH100 node: which layout fits and runs fastest". The
// lower bound must not reject what only full training cannot hold: LoRA keeps no gradients or
// optimizer states for the frozen base.
TEST(Search, LoraOnLlama70bFitsOneNode) {
  auto m = LoadModel("llama3-70b");
  auto hw = LoadHardware("h100_sxm_80gb");
  ASSERT_TRUE(m.ok() && hw.ok());
  SearchOptions o = SftOnOneNode(64, 3);
  o.workload.method = FtMethod::kLora;
  o.workload.lora_rank = 16;
  auto lora = Search(m.value(), hw.value(), o);
  ASSERT_TRUE(lora.ok()) << lora.status().message();
  ASSERT_FALSE(lora->top.empty());
  const Candidate& best = lora->top.front();
  EXPECT_EQ(best.strategy.method, FtMethod::kLora);
  EXPECT_EQ(best.strategy.lora_rank, 16);
  EXPECT_LT(best.reserved_bytes, hw->hbm_bytes);
  // The candidate simulates to the same step and fits.
  auto rep = Simulate(m.value(), hw.value(), best.strategy);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_TRUE(rep->fits);
  EXPECT_DOUBLE_EQ(rep->step_time_s, best.step_time_s);
  // Brute force over the same space: the bound rejected nothing faster that fits (it once
  // counted Adam states for the frozen base and dropped the best layout).
  const SearchSpace space(m.value(), hw.value(), o);
  double fastest = 1e30;
  uint64_t fit = 0;
  for (uint64_t i = 0; i < space.size(); ++i) {
    const char* dup = nullptr;
    const Strategy s = space.At(i, &dup);
    if (dup || !ValidateStrategy(s, m.value()).ok()) continue;
    auto r = Simulate(m.value(), hw.value(), s);
    if (!r.ok()) continue;
    double reserved = 0;
    for (const StageReport& st : r->stages) reserved = std::max(reserved, st.reserved_bytes);
    if (reserved > hw->hbm_bytes * (1 - o.memory_margin)) continue;
    ++fit;
    fastest = std::min(fastest, r->step_time_s);
  }
  EXPECT_DOUBLE_EQ(best.step_time_s, fastest);
  EXPECT_EQ(lora->feasible, fit);  // no rank orders in this space: nothing else to drop
  // Full fine-tuning of the same model on the same node fits in fewer layouts, none faster.
  o.workload.method = FtMethod::kFull;
  auto full = Search(m.value(), hw.value(), o);
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_LT(full->feasible, lora->feasible);
  if (!full->top.empty()) {
    EXPECT_GT(full->top.front().step_time_s, best.step_time_s);
  }
}

TEST(MegatronArgs, RoundTrip) {
  Strategy s;
  s.world_size = 512;
  s.tp = 8;
  s.pp = 4;
  s.vpp = 2;
  s.cp = 2;
  s.mbs = 2;
  s.gbs = 256;
  s.seq = 8192;
  s.zero = 1;
  s.recompute = Recompute::kSelective;
  s.recompute_modules = kRecomputeCoreAttn | kRecomputeLayerNorm;
  auto back = ParseMegatronArgs(MegatronArgs(s), Strategy{});
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->tp, 8);
  EXPECT_EQ(back->pp, 4);
  EXPECT_EQ(back->vpp, 2);
  EXPECT_EQ(back->cp, 2);
  EXPECT_EQ(back->mbs, 2);
  EXPECT_EQ(back->gbs, 256);
  EXPECT_EQ(back->seq, 8192);
  EXPECT_EQ(back->zero, 1);
  EXPECT_TRUE(back->sp);
  EXPECT_EQ(back->recompute, Recompute::kSelective);
  EXPECT_EQ(back->recompute_modules, s.recompute_modules);
  // Full recompute of every layer, and of the first 3 layers per stage, with optimizer offload.
  s.recompute = Recompute::kFull;
  s.recompute_layers = -1;
  s.offload_optimizer = true;
  Strategy world;
  world.world_size = 512;
  auto full = ParseMegatronArgs(MegatronArgs(s), world);
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_EQ(full->recompute, Recompute::kFull);
  EXPECT_EQ(full->recompute_layers, -1);
  EXPECT_TRUE(full->offload_optimizer);
  s.recompute_layers = 3;
  auto block = ParseMegatronArgs(MegatronArgs(s), Strategy{});
  ASSERT_TRUE(block.ok());
  EXPECT_EQ(block->recompute_layers, 3);
  const ModelSpec m = LoadModel("llama3-70b").value();
  EXPECT_TRUE(ValidateStrategy(full.value(), m).ok());
}

}  // namespace
}  // namespace trainsim

#include "trainsim/sweep.h"

namespace trainsim {
namespace {

TEST(Sweep, GridOfSystemsAndGpuCounts) {
  auto systems = ExpandSystems({"h100_sxm_80gb"}, {"nic_gbps_per_gpu=200,400"});
  ASSERT_TRUE(systems.ok()) << systems.status().message();
  ASSERT_EQ(systems->size(), 2u);
  EXPECT_DOUBLE_EQ(systems->at(0).hw.nic_bw_bytes_per_s, 25e9);
  SearchOptions o;
  o.gbs = 32;
  o.seq = 2048;
  auto pts = Sweep(LoadModel("llama3-8b").value(), systems.value(), {8, 16}, o);
  ASSERT_TRUE(pts.ok());
  ASSERT_EQ(pts->size(), 4u);
  for (const SweepPoint& p : pts.value()) EXPECT_TRUE(p.feasible);
  // Strong scaling: twice the GPUs, a shorter best step.
  EXPECT_LT(pts->at(1).best.step_time_s, pts->at(0).best.step_time_s);
  const std::string csv = SweepCsv(pts.value());
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5);
  EXPECT_NE(SweepScalingSvg(pts.value(), "t").find("<polyline"), std::string::npos);
  EXPECT_NE(SweepBreakdownSvg(pts.value(), "t").find("<rect"), std::string::npos);
}

TEST(Sweep, StopsAtThePointWhoseSearchWasStopped) {
  auto systems = ExpandSystems({"h100_sxm_80gb"}, {});
  ASSERT_TRUE(systems.ok());
  SearchOptions o;
  o.gbs = 32;
  o.seq = 2048;
  o.deadline = std::chrono::steady_clock::now() - std::chrono::seconds(1);
  auto pts = Sweep(LoadModel("llama3-8b").value(), systems.value(), {8, 16}, o);
  ASSERT_TRUE(pts.ok());
  ASSERT_EQ(pts->size(), 1u);
  EXPECT_FALSE(pts->front().complete);
}

TEST(Sweep, ExpandsGivenSystemsWithoutLoadingAnything) {
  SweepSystem base{"mine", LoadHardwarePreset("h100_sxm_80gb").value()};
  auto systems = ExpandSystems(std::vector<SweepSystem>{base}, {"hbm_gib=40,80"});
  ASSERT_TRUE(systems.ok()) << systems.status().message();
  ASSERT_EQ(systems->size(), 2u);
  EXPECT_EQ(systems->at(0).label, "mine hbm_gib=40");
  EXPECT_DOUBLE_EQ(systems->at(1).hw.hbm_bytes, 80.0 * (1 << 30));
}

TEST(Sweep, BadVariationNamesTheField) {
  auto bad = ExpandSystems({"h100_sxm_80gb"}, {"warp_speed=2"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("warp_speed"), std::string::npos);
  EXPECT_FALSE(ExpandSystems({"h100_sxm_80gb"}, {"nic_gbps_per_gpu"}).ok());
}

// Issue 11: an empty item of a --vary list (1,,2 or a trailing comma) was dropped silently.
TEST(Sweep, EmptyVaryItemIsRefused) {
  for (const char* v : {"hbm_tbps=1,,2", "hbm_tbps=1,", "hbm_tbps=,"}) {
    auto bad = ExpandSystems({"h100_sxm_80gb"}, {v});
    ASSERT_FALSE(bad.ok()) << v;
    EXPECT_EQ(bad.status().field(), "vary") << v;
  }
}

}  // namespace
}  // namespace trainsim
