// The search documents: JSON and CSV for people and programs, the shard document for MPI.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>

#include "trainsim/results_json.h"
#include "trainsim/schema.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

using nlohmann::json;

struct Searched {
  ModelSpec m = LoadModelPreset("llama3-8b").value();
  HardwareSpec hw = LoadHardwarePreset("h100_sxm_80gb").value();
  SearchOptions o;
  SearchResult r;
  Searched() {
    o.gpus = 16;
    o.gbs = 32;
    o.seq = 4096;
    o.top_k = 3;
    o.threads = 1;
    r = Search(m, hw, o).value();
  }
};

TEST(SearchResultJson, HasTheCountsTheCandidatesAndTheSummary) {
  Searched s;
  const json j = json::parse(SearchResultJson(s.r));
  EXPECT_EQ(j["evaluated"].get<uint64_t>(), s.r.evaluated);
  EXPECT_EQ(j["feasible"].get<uint64_t>(), s.r.feasible);
  EXPECT_EQ(j["rejected"].size(), s.r.rejected.size());
  ASSERT_EQ(j["top"].size(), 3u);
  EXPECT_EQ(j["pareto"].size(), s.r.pareto.size());
  const json& best = j["top"][0];
  const Candidate& c = s.r.top.front();
  EXPECT_EQ(best["strategy"], DescribeStrategy(c.strategy));
  EXPECT_EQ(best["megatron_args"], MegatronArgs(c.strategy));
  EXPECT_EQ(best["tp"], c.strategy.tp);
  EXPECT_EQ(best["dp"], c.strategy.dp());
  EXPECT_EQ(best["step_time_s"].get<double>(), c.step_time_s);  // exact round trip
  EXPECT_EQ(j["summary"], SearchSummaryLine(s.r));
  EXPECT_FALSE(j.contains("complete"));  // only an incomplete search says so
  EXPECT_EQ(SearchResultJson(s.r, -1).find('\n'), std::string::npos);
}

// The candidate's strategy_file is a strategy file: parsed and simulated, it gives the step time
// the search ranked (the web page simulates a clicked Pareto point from it).
TEST(SearchResultJson, StrategyFileSimulatesToTheCandidatesStepTime) {
  Searched s;
  const json j = json::parse(SearchResultJson(s.r));
  ASSERT_FALSE(j["pareto"].empty());
  for (const char* list : {"top", "pareto"}) {
    const json& c = j[list].back();
    const Strategy st = ParseStrategyJson(c["strategy_file"].dump(), "strategy_file").value();
    const StepReport rep = Simulate(s.m, s.hw, st).value();
    EXPECT_DOUBLE_EQ(rep.step_time_s, c["step_time_s"].get<double>()) << list;
    EXPECT_DOUBLE_EQ(rep.peak_mem_bytes, c["peak_mem_bytes"].get<double>()) << list;
  }
}

TEST(SearchResultJson, AnIncompleteSearchSaysWhy) {
  Searched s;
  s.o.deadline = std::chrono::steady_clock::now();
  const SearchResult r = Search(s.m, s.hw, s.o).value();
  const json j = json::parse(SearchResultJson(r));
  EXPECT_EQ(j["complete"], false);
  EXPECT_EQ(j["stopped"], "deadline");
  EXPECT_FALSE(j.contains("top"));
  EXPECT_NE(SearchSummaryLine(r).find("; incomplete: deadline"), std::string::npos);
}

TEST(SearchSummaryLine, IsStable) {
  SearchResult r;
  r.evaluated = 10;
  r.feasible = 4;
  r.seconds = 0.25;
  EXPECT_EQ(SearchSummaryLine(r), "search: evaluated 10 strategies (4 feasible) in 0.250 s");
}

TEST(SearchResultCsv, OneLinePerTopCandidate) {
  Searched s;
  const std::string csv = SearchResultCsv(s.r);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 4);
  EXPECT_EQ(csv.rfind("rank,tp,pp,vpp,cp,ep,etp,dp,mbs,zero,sp,recompute,", 0), 0u);
  EXPECT_NE(csv.find("\n1,"), std::string::npos);
}

TEST(SearchShardJson, RoundTripsAndMergesLikeTheSingleProcessSearch) {
  Searched s;
  const SearchSpace space(s.m, s.hw, s.o);
  std::vector<SearchResult> parts;
  for (int shard = 0; shard < 2; ++shard) {
    SearchOptions o = s.o;
    o.shards = 2;
    o.shard = shard;
    auto back = ParseSearchShardJson(SearchShardJson(Search(s.m, s.hw, o).value()), space);
    ASSERT_TRUE(back.ok()) << back.status().message();
    parts.push_back(back.value());
  }
  const SearchResult merged = MergeSearchResults(parts, s.o.top_k, s.o.objective);
  SearchResult a = s.r, b = merged;
  a.seconds = b.seconds = 0;
  EXPECT_EQ(json::parse(SearchResultJson(a)), json::parse(SearchResultJson(b)));
  EXPECT_EQ(b.space_size, s.r.space_size);
}

TEST(ParseSearchShardJson, RejectsMalformedDocumentsNamingTheField) {
  Searched s;
  const SearchSpace space(s.m, s.hw, s.o);
  EXPECT_EQ(ParseSearchShardJson("not json", space).status().code(), StatusCode::kParseError);
  json j = json::parse(SearchShardJson(s.r));
  j["feasible"] = -1;
  auto bad = ParseSearchShardJson(j.dump(), space);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("feasible"), std::string::npos);
  j = json::parse(SearchShardJson(s.r));
  j["top"][0][0] = space.size();
  auto outside = ParseSearchShardJson(j.dump(), space);
  ASSERT_FALSE(outside.ok());
  EXPECT_NE(outside.status().message().find("top"), std::string::npos);
}

}  // namespace
}  // namespace trainsim
