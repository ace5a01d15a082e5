// Speed of one prediction (issue target: median <= 20 us for Llama-3-70B on 1,024 GPUs).
#include <benchmark/benchmark.h>

#include <string>

#include "trainsim/megatron.h"
#include "trainsim/plan.h"
#include "trainsim/search.h"
#include "trainsim/trainsim.h"

namespace {

using namespace trainsim;

void BM_SimulateLlama70B_1024(benchmark::State& state) {
  const ModelSpec m = LoadModel("llama3-70b").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  Strategy s;
  s.world_size = 1024;
  s.tp = 8;
  s.pp = 4;
  s.seq = 8192;
  s.gbs = 1024;
  for (auto _ : state) {
    auto r = Simulate(m, hw, s);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_SimulateLlama70B_1024);

void BM_SimulateDeepSeekV3_2048(benchmark::State& state) {
  const ModelSpec m = LoadModel("deepseek-v3").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  Strategy s;
  s.world_size = 2048;
  s.tp = 1;
  s.pp = 16;
  s.ep = 64;
  s.etp = 1;
  s.seq = 4096;
  s.gbs = 8192;
  s.uneven_pipeline = true;
  for (auto _ : state) {
    auto r = Simulate(m, hw, s);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_SimulateDeepSeekV3_2048);

// The JSON report of the REST service's load body (docs/SERVE.md "Load": Llama-3 8B on 8 H100,
// tp 2, pp 2): what POST /v1/simulate formats per request.
void BM_FormatReportJson(benchmark::State& state) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  Strategy s;
  s.world_size = 8;
  s.tp = 2;
  s.pp = 2;
  s.gbs = 32;
  const StepReport r = Simulate(m, hw, s).value();
  for (auto _ : state) {
    std::string text = FormatReportJson(r, m, hw, s);
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_FormatReportJson);

void BM_ParsePresetLlama70B(benchmark::State& state) {
  for (auto _ : state) {
    auto m = LoadModel("llama3-70b");
    benchmark::DoNotOptimize(m);
  }
}
BENCHMARK(BM_ParsePresetLlama70B);

// Parsers of untrusted text (the REST service's bodies, `make fuzz`): the worst inputs their
// limits allow. A pipeline layout of a few bytes that unrolls to the 10^6-character limit,
// "(t|)*333333" (stage list) and "t*999999" (one run), was copied one repeat and one character
// at a time before 2026-11-25.
void BM_ParsePipelineLayoutAtUnrollLimit(benchmark::State& state) {
  const std::string layout = state.range(0) == 0 ? "E(t|)*333333L" : "Et*999998L";
  for (auto _ : state) {
    auto l = ParsePipelineLayoutStages(layout);
    benchmark::DoNotOptimize(l);
  }
}
BENCHMARK(BM_ParsePipelineLayoutAtUnrollLimit)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

// A launch script whose loop never ends over a 300-command body: refused when loop rounds and
// the bodies they run pass limits::kMaxScriptRunTokens (before 2026-11-25: after 1000 rounds,
// 3*10^5 commands).
void BM_MegatronScriptEndlessLoop(benchmark::State& state) {
  std::string script = "while true; do\n";
  for (int k = 0; k < 300; ++k) script += "A=1\n";
  script += "done\npython pretrain_gpt.py\n";
  for (auto _ : state) {
    auto c = ParseMegatronScript(script);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_MegatronScriptEndlessLoop)->Unit(benchmark::kMillisecond);

// Strategies evaluated per second by the exhaustive search (issue target: >= 1,000,000/s on two
// cores for Llama-3-70B on 1,024 H100s).
void BM_SearchLlama70B_1024(benchmark::State& state) {
  const ModelSpec m = LoadModel("llama3-70b").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  SearchOptions o;
  o.gpus = 1024;
  o.gbs = 1024;
  o.seq = 8192;
  o.threads = static_cast<int>(state.range(0));
  uint64_t evaluated = 0;
  for (auto _ : state) {
    auto r = Search(m, hw, o);
    evaluated += r->evaluated;
    benchmark::DoNotOptimize(r);
  }
  state.counters["strategies_per_s"] =
      benchmark::Counter(static_cast<double>(evaluated), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SearchLlama70B_1024)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

// The exhaustive search for Llama-3.1-405B on 16,384 H100s (issue target: < 10 s).
void BM_SearchLlama405B_16384(benchmark::State& state) {
  const ModelSpec m = LoadModel("llama3.1-405b").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  SearchOptions o;
  o.gpus = 16384;
  o.gbs = 2048;
  o.seq = 8192;
  o.threads = 2;
  for (auto _ : state) {
    auto r = Search(m, hw, o);
    benchmark::DoNotOptimize(r);
  }
}
BENCHMARK(BM_SearchLlama405B_16384)->Unit(benchmark::kMillisecond)->UseRealTime();

// `trainsim recommend` over the whole embedded catalogue (issue 13: seconds, never more than a
// minute on two cores): Llama-3-70B, 15 T tokens, a 90-day deadline, cost objective, the batch
// chosen among 2, 4, 8 and 16 M tokens per step, GPU counts 8 ... 16,384.
void BM_RecommendLlama70B_Catalogue(benchmark::State& state) {
  const ModelSpec m = LoadModel("llama3-70b").value();
  const std::vector<CatalogueEntry> catalogue = LoadCatalogue().value();
  RecommendOptions o;
  o.tokens = 15e12;
  o.seq = 8192;
  o.deadline_s = 90 * 86400.0;
  o.threads = 2;
  uint64_t clusters = 0;
  for (auto _ : state) {
    auto r = Recommend(m, catalogue, o);
    clusters += r->clusters;
    benchmark::DoNotOptimize(r);
  }
  state.counters["profiles"] = static_cast<double>(catalogue.size());
  state.counters["clusters_per_s"] =
      benchmark::Counter(static_cast<double>(clusters), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_RecommendLlama70B_Catalogue)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
