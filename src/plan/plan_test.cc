// Whole-run plan: cost, energy bounds, goodput limits, the Young/Daly interval, the Chinchilla fit.
#include "trainsim/plan.h"

#include <gtest/gtest.h>

#include <cmath>

#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

struct Step {
  ModelSpec m;
  HardwareSpec hw;
  Strategy s;
  StepReport r;
};

Step MakeStep(int gpus = 8, bool detail = true) {
  Step st;
  st.m = LoadModelPreset("llama3-8b").value();
  st.hw = LoadHardwarePreset("h100_sxm_80gb").value();
  st.s.world_size = gpus;
  st.s.tp = 2;
  st.s.pp = 1;
  st.s.gbs = 8 * gpus;
  st.s.seq = 4096;
  st.s = NormaliseStrategy(st.s);
  SimOptions o;
  o.detail = detail;
  st.r = Simulate(st.m, st.hw, st.s, o).value();
  return st;
}

PlanOptions Tokens(double t) {
  PlanOptions o;
  o.tokens = t;
  return o;
}

TEST(Plan, CostIsGpuHoursTimesPrice) {
  const Step st = MakeStep();
  ASSERT_GT(st.hw.price_usd_per_gpu_hour, 0);
  const RunPlan p = PlanRun(st.r, st.m, st.hw, st.s, Tokens(1e10)).value();
  EXPECT_DOUBLE_EQ(p.gpu_hours, p.wall_time_s * 8 / 3600);
  ASSERT_TRUE(p.cost_usd);
  EXPECT_DOUBLE_EQ(*p.cost_usd, p.gpu_hours * st.hw.price_usd_per_gpu_hour);
  PlanOptions o = Tokens(1e10);
  o.price_usd_per_gpu_hour = 1.25;
  const RunPlan q = PlanRun(st.r, st.m, st.hw, st.s, o).value();
  EXPECT_DOUBLE_EQ(*q.cost_usd, q.gpu_hours * 1.25);
}

TEST(Plan, CostIsNullWithAReasonWithoutAPrice) {
  Step st = MakeStep();
  st.hw.price_usd_per_gpu_hour = 0;
  const RunPlan p = PlanRun(st.r, st.m, st.hw, st.s, Tokens(1e10)).value();
  EXPECT_FALSE(p.cost_usd);
  EXPECT_NE(p.cost_note.find("--price-per-gpu-hour"), std::string::npos);
}

TEST(Plan, StepsFromTokensOrEpochs) {
  const Step st = MakeStep();
  const double per_step = 64.0 * 4096;
  const RunPlan p = PlanRun(st.r, st.m, st.hw, st.s, Tokens(10 * per_step + 1)).value();
  EXPECT_EQ(p.steps, 11);
  EXPECT_DOUBLE_EQ(p.ideal_wall_time_s, 11 * st.r.step_time_s);
  PlanOptions e;
  e.epochs = 3;
  e.dataset_tokens = 5 * per_step;
  EXPECT_EQ(PlanRun(st.r, st.m, st.hw, st.s, e).value().steps, 15);
}

TEST(Plan, BadOptionsNameTheField) {
  const Step st = MakeStep();
  EXPECT_EQ(PlanRun(st.r, st.m, st.hw, st.s, PlanOptions{}).status().field(), "tokens");
  PlanOptions e;
  e.epochs = 2;
  EXPECT_EQ(PlanRun(st.r, st.m, st.hw, st.s, e).status().field(), "epochs");
  PlanOptions pue = Tokens(1e9);
  pue.pue = 0.9;
  EXPECT_EQ(PlanRun(st.r, st.m, st.hw, st.s, pue).status().field(), "pue");
  PlanOptions nan = Tokens(1e9);
  nan.mtbf_gpu_hours = std::nan("");
  EXPECT_EQ(PlanRun(st.r, st.m, st.hw, st.s, nan).status().field(), "mtbf_gpu_hours");
}

TEST(Plan, EnergyWithinIdleAndTdpTimesTime) {
  const Step st = MakeStep();
  const RunPlan p = PlanRun(st.r, st.m, st.hw, st.s, Tokens(1e10)).value();
  ASSERT_TRUE(p.energy_kwh);
  const double gpu_s = 8 * p.wall_time_s / 3.6e6;  // GPU-seconds in kWh per watt
  EXPECT_GE(p.gpu_energy_kwh, 0.11 * st.hw.tdp_w * gpu_s);
  EXPECT_LE(p.gpu_energy_kwh, st.hw.tdp_w * gpu_s);
  // Strictly inside: the step has both compute and waits.
  EXPECT_GT(p.gpu_power.average_w, p.gpu_power.idle_w);
  EXPECT_LT(p.gpu_power.average_w, st.hw.tdp_w);
  EXPECT_GT(p.gpu_power.memory_bound_s, 0);  // from the per-layer table and the optimizer
  EXPECT_NEAR(*p.energy_kwh, (p.gpu_energy_kwh + p.host_energy_kwh) * 1.58, 1e-9 * *p.energy_kwh);
  EXPECT_NEAR(*p.co2_kg, *p.energy_kwh * 0.481, 1e-9 * *p.co2_kg);
  EXPECT_NEAR(p.host_energy_kwh, 2800 * 1 * p.wall_time_s / 3.6e6, 1e-9);
}

TEST(Plan, GpuPowerFollowsThePhases) {
  StepReport r;
  r.step_time_s = 10;
  r.time.compute_s = 10;  // all compute-bound (no per-layer table): TDP
  EXPECT_DOUBLE_EQ(StepGpuPower(r, 700, 0.1).average_w, 700);
  r.time.compute_s = 0;
  r.time.bubble_s = 10;  // all waiting
  EXPECT_DOUBLE_EQ(StepGpuPower(r, 700, 0.1).average_w, 70 + 630 * 0.15);
}

TEST(Plan, EnergyNullWithoutTdp) {
  Step st = MakeStep();
  st.hw.tdp_w = 0;
  const RunPlan p = PlanRun(st.r, st.m, st.hw, st.s, Tokens(1e10)).value();
  EXPECT_FALSE(p.energy_kwh);
  EXPECT_FALSE(p.co2_kg);
  EXPECT_NE(p.energy_note.find("tdp_w"), std::string::npos);
}

TEST(Plan, YoungDalyInterval) {
  EXPECT_DOUBLE_EQ(YoungDalyIntervalS(100, 36000), std::sqrt(2.0 * 100 * 36000));
  // It is (to first order) the interval that minimises the expected wall time of the model.
  const double C = 60, R = 300, M = 2e6, T = 1e8;
  const double tau = YoungDalyIntervalS(C, M);
  double best_tau = 0, best = 1e300;
  for (double t = tau / 4; t < tau * 4; t *= 1.001) {
    const double w = ExpectedGoodput(T, C, R, M, t).value().wall_time_s;
    if (w < best) best = w, best_tau = t;
  }
  EXPECT_NEAR(best_tau / tau, 1.0, 0.02);
  // The plan uses it by default and lists it as assumed.
  const Step st = MakeStep();
  const RunPlan p = PlanRun(st.r, st.m, st.hw, st.s, Tokens(1e10)).value();
  EXPECT_DOUBLE_EQ(p.goodput.interval_s,
                   YoungDalyIntervalS(p.goodput.checkpoint_write_s, p.goodput.mtbf_job_s));
  EXPECT_DOUBLE_EQ(p.goodput.mtbf_job_s, 54.0 * 24 * 16384 / 466 * 3600 / 8);
  bool listed = false;
  for (const Assumption& a : p.assumed) listed = listed || a.field == "checkpoint_interval_s";
  EXPECT_TRUE(listed);
}

TEST(Plan, GoodputTendsToOneAsMtbfGrows) {
  const Step st = MakeStep();
  double last = 0;
  for (double mtbf : {1e3, 1e5, 1e7, 1e9, 1e11}) {
    PlanOptions o = Tokens(1e11);
    o.mtbf_gpu_hours = mtbf;
    const RunPlan p = PlanRun(st.r, st.m, st.hw, st.s, o).value();
    EXPECT_GT(p.goodput.fraction, last) << mtbf;
    EXPECT_LE(p.wall_time_s, p.ideal_wall_time_s / p.goodput.fraction * (1 + 1e-12));
    last = p.goodput.fraction;
  }
  EXPECT_GT(last, 0.9999);
  EXPECT_DOUBLE_EQ(ExpectedGoodput(100, 1, 1, INFINITY, 1e300).value().fraction, 1.0);
}

TEST(Plan, GoodputFallsWithScale) {
  // The same checkpoint and storage, more GPUs: interruptions come more often.
  double last = 1.1;
  for (int gpus : {1024, 4096, 16384, 65536}) {
    const double M = plan_defaults::kMtbfGpuHours * 3600 / gpus, C = 120;
    const double g = ExpectedGoodput(1e7, C, 600, M, YoungDalyIntervalS(C, M)).value().fraction;
    EXPECT_LT(g, last) << gpus;
    last = g;
  }
  // Through the plan, with the default storage that grows with the job.
  const Step small = MakeStep(8), large = MakeStep(64);
  const double g8 =
      PlanRun(small.r, small.m, small.hw, small.s, Tokens(1e11)).value().goodput.fraction;
  const double g64 =
      PlanRun(large.r, large.m, large.hw, large.s, Tokens(1e11)).value().goodput.fraction;
  EXPECT_LT(g64, g8);
}

TEST(Plan, NoProgressWhenInterruptionsOutpaceRestarts) {
  EXPECT_EQ(ExpectedGoodput(100, 10, 600, 500, 100).status().field(), "goodput");
}

TEST(Plan, CheckpointHoldsWeightsAndOptimizerStates) {
  const Step st = MakeStep();
  const double params = static_cast<double>(CountParams(st.m).total);
  // 16-bit weights + fp32 master, momentum and variance (12 bytes), sharded, counted once.
  EXPECT_NEAR(CheckpointBytes(st.r, st.m, st.s) / params, 14.0, 0.2);
}

TEST(Plan, ChinchillaOptimumLiesOnTheBudgetAndMinimisesLoss) {
  const double C = 5.76e23;  // Gopher's budget (Hoffmann et al. 2022)
  const ComputeOptimal o = ChinchillaOptimal(C);
  EXPECT_NEAR(6 * o.params * o.tokens / C, 1.0, 1e-9);
  auto loss = [](double n, double d) {
    return 1.69 + 406.4 / std::pow(n, 0.34) + 410.7 / std::pow(d, 0.28);
  };
  EXPECT_NEAR(o.loss, loss(o.params, o.tokens), 1e-12);
  for (double f : {0.8, 0.95, 1.05, 1.25})
    EXPECT_GT(loss(o.params * f, C / 6 / (o.params * f)), o.loss) << f;
  // Tens of billions of parameters and about a trillion tokens at that budget.
  EXPECT_GT(o.params, 2e10);
  EXPECT_LT(o.params, 6e10);
  EXPECT_NEAR(ChinchillaTokensForParams(o.params) / o.tokens, 1.0, 1e-9);
}

TEST(Plan, JsonHasTheDocumentedKeys) {
  const Step st = MakeStep(8, false);
  const RunPlan p = PlanRun(st.r, st.m, st.hw, st.s, Tokens(1e10)).value();
  const std::string j =
      RunPlanJson(p, FormatReportJson(st.r, st.m, st.hw, st.s), ChinchillaOptimal(1e21));
  for (const char* k :
       {"\"steps\"", "\"wall_time_s\"", "\"ideal_wall_time_s\"", "\"gpu_hours\"", "\"cost_usd\"",
        "\"energy_kwh\"", "\"co2_kg\"", "\"goodput\"", "\"checkpoint_interval_s\"", "\"step\"",
        "\"assumed\"", "\"compute_optimal\"", "\"step_time_s\""})
    EXPECT_NE(j.find(k), std::string::npos) << k;
}

}  // namespace
}  // namespace trainsim
