// The Strategy and Efficiency schemas: every row is complete and round-trips through JSON, the
// settings the CLI flags feed, and Megatron-LM arguments; the docs tables are generated.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include "trainsim/megatron.h"
#include "trainsim/schema.h"
#include "trainsim/timeline.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

bool HasSubstr(const std::string& s, const std::string& sub) {
  return s.find(sub) != std::string::npos;
}

nlohmann::json JsonValue(const StrategyField& f, const std::string& text) {
  switch (f.kind) {
    case FieldKind::kInt:
      return std::stoll(text);
    case FieldKind::kBool:
      return text == "true";
    case FieldKind::kNumber:
      return std::stod(text);
    case FieldKind::kText:
      break;
  }
  return text;
}

// A strategy with every field set to its row's example.
Strategy AllExamples() {
  Strategy s;
  for (const StrategyField& f : StrategySchema()) EXPECT_TRUE(f.set(s, f.example).ok()) << f.key;
  return s;
}

TEST(StrategySchema, EveryRowIsComplete) {
  std::set<std::string_view> keys, flags;
  for (const StrategyField& f : StrategySchema()) {
    SCOPED_TRACE(std::string(f.key));
    EXPECT_FALSE(f.key.empty());
    EXPECT_TRUE(f.flag.rfind("--", 0) == 0) << "every field has a CLI flag";
    EXPECT_FALSE(f.rule.empty());
    EXPECT_FALSE(f.doc.empty());
    EXPECT_FALSE(f.example.empty());
    ASSERT_NE(f.set, nullptr);
    ASSERT_NE(f.get, nullptr);
    EXPECT_TRUE(keys.insert(f.key).second) << "duplicate key";
    EXPECT_TRUE(flags.insert(f.flag).second) << "duplicate flag";
    EXPECT_EQ(FindStrategyField(f.key), &f);
    // The example is legal and differs from the default, so the round trips below test it.
    Strategy s;
    ASSERT_TRUE(f.set(s, f.example).ok());
    EXPECT_EQ(f.get(s), f.example);
    EXPECT_NE(f.get(Strategy{}), f.example);
  }
  for (const StrategyAlias& a : StrategyAliases()) {
    EXPECT_FALSE(keys.count(a.key)) << a.key << " is both canonical and an alias";
    EXPECT_FALSE(a.meaning.empty()) << a.key;
  }
}

TEST(StrategySchema, EachFieldRoundTripsThroughJson) {
  for (const StrategyField& f : StrategySchema()) {
    SCOPED_TRACE(std::string(f.key));
    nlohmann::json j;
    j[std::string(f.key)] = JsonValue(f, std::string(f.example));
    Strategy s;
    Status st = ApplyStrategyJson(j.dump(), "s.json", s);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(f.get(s), f.example);
  }
}

TEST(StrategySchema, EachFieldRoundTripsThroughSettings) {
  for (const StrategyField& f : StrategySchema()) {
    SCOPED_TRACE(std::string(f.key));
    Strategy s;
    Status st = ApplyStrategySettings(s, {{std::string(f.key), std::string(f.example)}}, true);
    ASSERT_TRUE(st.ok()) << st.message();
    EXPECT_EQ(f.get(s), f.example);
  }
}

TEST(StrategySchema, BadValuesNameTheKeyOrFlag) {
  for (const StrategyField& f : StrategySchema()) {
    SCOPED_TRACE(std::string(f.key));
    const std::string bad = f.kind == FieldKind::kText ? "no-such-value" : "x";
    Strategy s;
    Status by_key = ApplyStrategySettings(s, {{std::string(f.key), bad}}, false);
    ASSERT_FALSE(by_key.ok());
    EXPECT_EQ(by_key.message().rfind(std::string(f.key) + ": ", 0), 0u) << by_key.message();
    Status by_flag = ApplyStrategySettings(s, {{std::string(f.key), bad}}, true);
    EXPECT_EQ(by_flag.message().rfind(std::string(f.flag) + ": ", 0), 0u) << by_flag.message();
  }
  Strategy s;
  EXPECT_TRUE(HasSubstr(ApplyStrategySettings(s, {{"tp", "2"}}, true).message(), "tp"));
}

TEST(StrategySchema, EchoRoundTripsEveryField) {
  const Strategy s = NormaliseStrategy(AllExamples());
  const nlohmann::json echo = StrategyToJson(s);
  for (const StrategyField& f : StrategySchema())
    EXPECT_TRUE(echo.contains(std::string(f.key))) << f.key;
  EXPECT_TRUE(echo.contains("dp"));
  auto back = ParseStrategyJson(echo.dump(), "echo");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(StrategyToJson(back.value()), echo);
  EXPECT_EQ(StrategyToJson(NormaliseStrategy(back.value())), echo);
}

TEST(StrategySchema, EchoOfDefaultsReadsBackAndHasLowerCaseDtype) {
  Strategy s;
  s.gbs = 64;
  const nlohmann::json echo = StrategyToJson(s);
  EXPECT_EQ(echo["dtype"], "bf16");
  EXPECT_EQ(echo["tp_size"], 1);
  EXPECT_EQ(echo["etp_size"], 1);  // normalised: = tp
  EXPECT_EQ(echo["micro_batch_num"], 8);
  EXPECT_EQ(echo["global_batch_size"], 64);
  EXPECT_TRUE(echo["recompute_layer_num"].is_null());  // all layers
  auto back = ParseStrategyJson(echo.dump(), "echo");
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(StrategyToJson(back.value()), echo);
}

TEST(StrategySchema, MegatronArgumentsRoundTripEachField) {
  // What Megatron-LM cannot say: ZeRO 2 without FSDP and bf16 without fp32 gradient
  // accumulation; only one non-default rank order.
  // ep_comm_overlap: Megatron-LM's overlap switches give one fraction (0.3), not the example.
  // optimizer: Megatron-LM has adam, sgd and muon, not the example's adamw8bit
  // (MegatronArgs.OptimizerChoices).
  // moe_grouped_gemm, moe_permute_fusion: written with the model's MoE arguments (an absent
  // switch means off only for a MoE model; MegatronArgs.MoeSwitchesAreMegatronDefaults).
  const std::set<std::string_view> inexpressible = {"zero_state",       "use_fp32_accum_grad",
                                                    "ep_comm_overlap",  "optimizer",
                                                    "moe_grouped_gemm", "moe_permute_fusion"};
  for (const StrategyField& f : StrategySchema()) {
    if (f.megatron.empty() || inexpressible.count(f.key)) continue;
    SCOPED_TRACE(std::string(f.key));
    Strategy s;
    s.world_size = 64;
    s.tp = s.pp = s.ep = 2;
    s.recompute = Recompute::kFull;
    s.gbs = 64;
    const std::string value = f.key == "order" ? "tp-cp-pp-dp" : std::string(f.example);
    ASSERT_TRUE(f.set(s, value).ok());
    // A partial optimizer offload is written only with the offload itself.
    if (f.key == "optimizer_offload_fraction") s.offload_optimizer = true;
    const Strategy want = NormaliseStrategy(s);
    const std::string args = FormatMegatronArgs(s);
    Strategy base;
    base.world_size = 64;
    auto back = ParseMegatronArgs(args, base);
    ASSERT_TRUE(back.ok()) << args << ": " << back.status().message();
    EXPECT_EQ(f.get(back.value()), f.get(want)) << args;
  }
}

TEST(StrategySchema, MegatronArgumentsOfAllExamples) {
  Strategy s = AllExamples();
  s.world_size = 64;
  // Megatron-LM refuses a layout with first/last-stage layers (MegatronLayout.* tests it).
  s.pipeline_layout.clear();
  const std::string args = FormatMegatronArgs(s);
  for (const char* want :
       {"--tensor-model-parallel-size 2", "--use-megatron-fsdp", "--fp8-format hybrid",
        "--recompute-granularity full", "--recompute-method block --recompute-num-layers 2",
        "--attention-backend unfused", "--cp-comm-type a2a", "--moe-token-dispatcher-type flex",
        "--optimizer-cpu-offload", "--optimizer-offload-fraction 0.5"})
    EXPECT_TRUE(HasSubstr(args, want)) << want << " in " << args;
  Strategy base;
  base.world_size = 64;
  EXPECT_TRUE(ParseMegatronArgs(args, base).ok());
}

TEST(StrategyEnums, NamesRoundTrip) {
  for (Recompute r : {Recompute::kNone, Recompute::kSelective, Recompute::kFull})
    EXPECT_EQ(ParseRecompute(RecomputeName(r)).value(), r);
  for (PipelineSchedule p :
       {PipelineSchedule::k1F1B, PipelineSchedule::kInterleaved, PipelineSchedule::kGPipe,
        PipelineSchedule::kZeroBubbleH1, PipelineSchedule::kDualPipe}) {
    EXPECT_EQ(ParseSchedule(ScheduleName(p)).value(), p);
    EXPECT_EQ(ScheduleName(p), PipelineScheduleName(p));  // the timeline's copy agrees
  }
  for (RankOrder o :
       {RankOrder::kTpCpDpPp, RankOrder::kTpDpCpPp, RankOrder::kTpCpPpDp, RankOrder::kTpPpCpDp})
    EXPECT_EQ(ParseRankOrder(RankOrderName(o)).value(), o);
  for (DType d : {DType::kFp32, DType::kTf32, DType::kFp16, DType::kBf16, DType::kFp8,
                  DType::kMxfp8, DType::kFp4})
    EXPECT_EQ(ParseDType(DTypeName(d)).value(), d);
  for (int mask = 1; mask < 128; ++mask)
    EXPECT_EQ(ParseRecomputeModules(RecomputeModulesName(mask)).value(), mask);
  EXPECT_FALSE(ParseRecompute("some").ok());
  EXPECT_FALSE(ParseSchedule("zb").ok());
  EXPECT_FALSE(ParseRecomputeModules("").ok());
  EXPECT_FALSE(ParseRecomputeModules("core_attn,,mlp").ok());
  EXPECT_EQ(ParseRecomputeModules("core_attn,").value(), kRecomputeCoreAttn);
}

TEST(NormaliseStrategy, ImpliedSettings) {
  Strategy s;
  s.fsdp = true;
  s.zero = 1;
  s.vpp = 2;
  s.pp = 2;
  s.micro_batch_num = 4;
  s.recompute_layers = 3;  // not full: meaningless
  s.recompute_modules = kRecomputeMlp;
  const Strategy n = NormaliseStrategy(s);
  EXPECT_EQ(n.zero, 3);
  EXPECT_EQ(n.etp, 1);
  EXPECT_FALSE(n.sp);
  EXPECT_EQ(n.schedule, PipelineSchedule::kInterleaved);
  EXPECT_EQ(n.gbs, 4 * 4);  // dp 4
  EXPECT_EQ(n.recompute_layers, -1);
  EXPECT_EQ(n.recompute_modules, kRecomputeCoreAttn);
  Strategy i;
  i.schedule = PipelineSchedule::kInterleaved;
  i.gbs = 24;
  i.recompute = Recompute::kFull;
  i.recompute_layers = 0;
  const Strategy m = NormaliseStrategy(i);
  EXPECT_EQ(m.schedule, PipelineSchedule::k1F1B);
  EXPECT_EQ(m.micro_batch_num, 3);
  EXPECT_EQ(m.recompute, Recompute::kNone);
  // gbs not divisible by mbs*dp: left for ValidateStrategy.
  Strategy odd;
  odd.gbs = 30;
  EXPECT_EQ(NormaliseStrategy(odd).micro_batch_num, 0);
  // Overflowing products are left alone.
  Strategy big;
  big.mbs = 1 << 30;
  big.micro_batch_num = 1 << 30;
  EXPECT_EQ(NormaliseStrategy(big).gbs, 0);
}

TEST(NormaliseStrategy, SimulateGivesTheSameResult) {
  const ModelSpec m = LoadModel("mixtral-8x7b").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  Strategy s;
  s.world_size = 16;
  s.ep = 8;  // etp 0: = tp
  s.gbs = 64;
  s.recompute_layers = 2;  // ignored: not full
  s.recompute_modules = kRecomputeMlp;
  auto a = Simulate(m, hw, s);
  auto b = Simulate(m, hw, NormaliseStrategy(s));
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(a->step_time_s, b->step_time_s);
  EXPECT_EQ(a->peak_mem_bytes, b->peak_mem_bytes);
}

// --- Readers: behaviour that the schema made uniform ----------------------------------------

TEST(StrategyJson, ScheduleZbH1AndDualPipeFromAFile) {
  auto z = ParseStrategyJson(R"({"pipeline_schedule": "zb_h1"})", "s.json");
  ASSERT_TRUE(z.ok()) << z.status().message();
  EXPECT_EQ(z->schedule, PipelineSchedule::kZeroBubbleH1);
  auto d = ParseStrategyJson(R"({"pipeline_schedule": "dualpipe"})", "s.json");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->schedule, PipelineSchedule::kDualPipe);
  // An explicit schedule other than 1f1b wins over interleaving_size.
  auto g = ParseStrategyJson(R"({"pipeline_schedule": "gpipe", "interleaving_size": 2})", "s");
  ASSERT_TRUE(g.ok());
  EXPECT_EQ(g->schedule, PipelineSchedule::kGPipe);
}

TEST(StrategyJson, EnableRecomputeWithoutGranularityIsNone) {
  auto s = ParseStrategyJson(R"({"enable_recompute": true, "micro_batch_num": 4})", "s.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->recompute, Recompute::kNone);
  auto full =
      ParseStrategyJson(R"({"enable_recompute": true, "recompute_granularity": "full"})", "s.json");
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->recompute, Recompute::kFull);
}

TEST(StrategyJson, RecomputePolicyWinsOverModules) {
  auto s = ParseStrategyJson(R"({"recompute": "full", "recompute_modules": "mlp"})", "s.json");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->recompute, Recompute::kFull);
  auto m = ParseStrategyJson(R"({"recompute_modules": "mlp,moe_act"})", "s.json");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->recompute, Recompute::kSelective);
  EXPECT_EQ(m->recompute_modules, kRecomputeMlp | kRecomputeMoeAct);
  // SimuMax switches still pick the modules under "recompute": "selective".
  auto sw = ParseStrategyJson(R"({"recompute": "selective", "mlp_recompute": true})", "s.json");
  ASSERT_TRUE(sw.ok());
  EXPECT_TRUE(sw->recompute_modules & kRecomputeMlp);
}

TEST(StrategyJson, DpIsCheckedAndBatchRule) {
  EXPECT_TRUE(ParseStrategyJson(R"({"world_size": 16, "tp_size": 2, "dp": 8})", "s").ok());
  auto bad = ParseStrategyJson(R"({"world_size": 16, "tp_size": 2, "dp": 4})", "s.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(HasSubstr(bad.status().message(), "dp"));
  // Both batch keys, agreeing: global_batch_size is kept, micro_batch_num derived again.
  Strategy s;
  ASSERT_TRUE(ApplyStrategyJson(R"({"global_batch_size": 64, "micro_batch_num": 8})", "s", s).ok());
  EXPECT_EQ(s.gbs, 64);
  EXPECT_EQ(s.micro_batch_num, 0);
  // A later source with only micro_batch_num clears global_batch_size.
  ASSERT_TRUE(ApplyStrategySettings(s, {{"micro_batch_num", "2"}}, true).ok());
  EXPECT_EQ(s.gbs, 0);
  EXPECT_EQ(s.micro_batch_num, 2);
}

TEST(StrategyJson, FsdpWithZeroOneBecomesZeroThree) {
  auto s = ParseStrategyJson(R"({"fsdp": true, "zero_state": 1})", "s.json");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->zero, 3);
  auto two = ParseStrategyJson(R"({"fsdp": true, "zero_state": 2})", "s.json");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->zero, 2);
  EXPECT_FALSE(ParseStrategyJson(R"({"zero_state": 4})", "s.json").ok());
}

TEST(StrategyJson, NewKeysHaveFlagsAndOldOnesStillRead) {
  auto s = ParseStrategyJson(
      R"({"order": "tp-dp-cp-pp", "cp_comm_type": "all2all", "offload_optimizer": true,
          "attention_kernel": "fa2", "use_math_sdp": true, "fp8": true, "fp8_recipe": "mxfp8",
          "moe_dispatcher_policy": "deepep", "cross_entropy_loss_fusion": true,
          "account_for_embedding_in_pipeline_split": true, "enable_dropout": false,
          "mem_factor": 0.9, "ep_comm_overlap": 0.5})",
      "s.json");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->order, RankOrder::kTpDpCpPp);
  EXPECT_TRUE(s->cp_a2a);
  EXPECT_TRUE(s->offload_optimizer);
  EXPECT_EQ(s->attention_kernel, AttentionImpl::kFa2);
  EXPECT_FALSE(s->flash_attention);
  EXPECT_EQ(s->dtype, DType::kMxfp8);
  EXPECT_TRUE(s->moe_dedup_dispatch);
  EXPECT_TRUE(s->fused_cross_entropy);
  EXPECT_TRUE(s->uneven_pipeline);
  EXPECT_EQ(s->ep_comm_overlap, 0.5);
  auto fa1 = ParseStrategyJson(R"({"attention_kernel": "fa1"})", "s.json");
  ASSERT_TRUE(fa1.ok()) << fa1.status().message();
  EXPECT_EQ(fa1->attention_kernel, AttentionImpl::kFa1);
  auto bad_kernel = ParseStrategyJson(R"({"attention_kernel": "fa3"})", "s.json");
  ASSERT_FALSE(bad_kernel.ok());
  EXPECT_TRUE(HasSubstr(bad_kernel.status().message(), "attention_kernel"));
  auto bad = ParseStrategyJson(R"({"ep_comm_overlap": 1.5})", "s.json");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(HasSubstr(bad.status().message(), "ep_comm_overlap"));
}

TEST(MegatronArgs, NewArguments) {
  auto s = ParseMegatronArgs(
      "--use-tp-pp-dp-mapping --attention-backend flash --accumulate-allreduce-grads-in-fp32 "
      "--fp16 --use-megatron-fsdp --data-parallel-sharding-strategy optim_grads "
      "--recompute-activations --recompute-modules core_attn mlp",
      Strategy{});
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->order, RankOrder::kTpCpPpDp);
  EXPECT_EQ(s->attention_kernel, AttentionImpl::kFa2);
  EXPECT_TRUE(s->main_grad_fp32);  // whatever the order of --fp16
  EXPECT_EQ(s->dtype, DType::kFp16);
  EXPECT_TRUE(s->fsdp);
  EXPECT_EQ(s->zero, 2);
  EXPECT_EQ(s->recompute, Recompute::kSelective);
  EXPECT_EQ(s->recompute_modules, kRecomputeCoreAttn | kRecomputeMlp);
  auto bad = ParseMegatronArgs("--data-parallel-sharding-strategy all", Strategy{});
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(HasSubstr(bad.status().message(), "--data-parallel-sharding-strategy"));
  auto zero = ParseMegatronArgs("--tensor-model-parallel-size 0", Strategy{});
  ASSERT_FALSE(zero.ok());
  EXPECT_TRUE(HasSubstr(zero.status().message(), "--tensor-model-parallel-size"));
}

// Megatron-LM reads these MoE arguments with a meaning (graph.cc, MoeMlp): each was once
// accepted with no effect or listed as ignored. Rows: arguments, then the expected values of
// moe_grouped_gemm, moe_permute_fusion, moe_router_dtype, moe_capacity_factor,
// moe_pad_to_capacity and moe_router_padding.
TEST(MegatronArgs, MoeSwitchesAreMegatronDefaults) {
  struct Row {
    const char* args;
    const char* grouped;
    const char* fused;
    const char* router;
    const char* capacity;
    const char* pad;
    const char* router_pad;
  };
  const Row rows[] = {
      {"--num-experts 8", "false", "false", "none", "0", "false", "false"},
      {"--num-experts 8 --moe-grouped-gemm --moe-permute-fusion", "true", "true", "none", "0",
       "false", "false"},
      {"--num-experts 8 --moe-router-dtype fp64", "false", "false", "fp64", "0", "false", "false"},
      {"--num-experts 8 --moe-router-dtype fp32", "false", "false", "fp32", "0", "false", "false"},
      {"--num-experts 8 --moe-expert-capacity-factor 1.25 --moe-pad-expert-input-to-capacity",
       "false", "false", "none", "1.25", "true", "false"},
      {"--num-experts 8 --moe-router-padding-for-fp8", "false", "false", "none", "0", "false",
       "true"},
      {"--num-experts 8 --moe-router-padding-for-quantization", "false", "false", "none", "0",
       "false", "true"},
      // A dense model: the MoE switches keep trainsim's values (they do nothing there).
      {"--hidden-size 1024", "true", "true", "none", "0", "false", "false"},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.args);
    std::vector<std::string> args;
    for (std::string_view rest = r.args; !rest.empty();) {
      const size_t sp = rest.find(' ');
      args.emplace_back(rest.substr(0, sp));
      rest = sp == std::string_view::npos ? std::string_view() : rest.substr(sp + 1);
    }
    Strategy s;
    MegatronReading reading;
    ASSERT_TRUE(ReadMegatronArgs(args, s, nullptr, reading).ok());
    for (const IgnoredInput& i : reading.ignored)
      EXPECT_TRUE(i.field.rfind("--moe-", 0) != 0) << i.field << " listed as ignored";
    EXPECT_EQ(FindStrategyField("moe_grouped_gemm")->get(s), r.grouped);
    EXPECT_EQ(FindStrategyField("moe_permute_fusion")->get(s), r.fused);
    EXPECT_EQ(FindStrategyField("moe_router_dtype")->get(s), r.router);
    EXPECT_EQ(FindStrategyField("moe_capacity_factor")->get(s), r.capacity);
    EXPECT_EQ(FindStrategyField("moe_pad_to_capacity")->get(s), r.pad);
    EXPECT_EQ(FindStrategyField("moe_router_padding")->get(s), r.router_pad);
  }
}

// --- Efficiency --------------------------------------------------------------------------------

TEST(EfficiencySchema, EveryFieldOnceAndRoundTrips) {
  std::set<std::string_view> keys;
  for (const EfficiencyField& f : EfficiencySchema()) {
    EXPECT_TRUE(keys.insert(f.key).second) << f.key;
    EXPECT_FALSE(f.doc.empty()) << f.key;
  }
  EXPECT_EQ(keys.size(), 23u) << "a new Efficiency field needs a schema row";
  HardwareSpec h = LoadHardware("h100_sxm_80gb").value();
  // A calibrated preset carries the day it was fitted (YYYY-MM-DD); a borrowing one the same.
  EXPECT_EQ(h.eff.fitted_date.size(), 10u);
  EXPECT_EQ(h.eff.fitted_date.substr(0, 2), "20");
  EXPECT_EQ(LoadHardware("h200_sxm_141gb")->eff.fitted_date, h.eff.fitted_date);  // borrowed
  Efficiency e = h.eff;
  e.gemm_max = 0.5;
  e.attn_fa2_fwd = -1;
  const nlohmann::json block = {{"efficiency", EfficiencyToJson(e)}};
  HardwareSpec back = LoadHardware("a100_sxm_80gb").value();
  Status st = ApplyHardwareOverrides(back, block.dump(), "o");
  ASSERT_TRUE(st.ok()) << st.message();
  for (const EfficiencyField& f : EfficiencySchema()) EXPECT_EQ(back.eff.*f.field, e.*f.field);
  EXPECT_EQ(back.eff.fitted_date, e.fitted_date);
}

TEST(EfficiencySchema, RulesNameTheKey) {
  HardwareSpec h = LoadHardware("h100_sxm_80gb").value();
  for (const char* bad :
       {R"({"efficiency": {"mem": 1.5}})", R"({"efficiency": {"attn_fa2_bwd": 0}})",
        R"({"efficiency": {"mxfp8_gemm_speedup": 0}})", R"({"efficiency": {"gemm_half_dim": -1}})",
        R"({"efficiency": {"attn_fa2_fwd": -2}})"}) {
    Status st = ApplyHardwareOverrides(h, bad, "o");
    ASSERT_FALSE(st.ok()) << bad;
    const std::string key = nlohmann::json::parse(bad)["efficiency"].begin().key();
    EXPECT_TRUE(HasSubstr(st.message(), "efficiency: " + key)) << st.message();
  }
}

// --- Docs --------------------------------------------------------------------------------------

TEST(SchemaDocs, InputsMdHoldsTheGeneratedTables) {
  std::ifstream in(std::string(TRAINSIM_SOURCE_DIR) + "/docs/INPUTS.md");
  ASSERT_TRUE(in) << "docs/INPUTS.md not found";
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string doc = buf.str();
  for (const char* name : {"strategy", "strategy-aliases", "efficiency"}) {
    const std::string md = SchemaMarkdown(name).value();
    const std::string block =
        "<!-- schema:" + std::string(name) + " -->\n" + md + "<!-- /schema:" + name + " -->";
    EXPECT_TRUE(HasSubstr(doc, block))
        << "docs/INPUTS.md is out of date: paste `trainsim schema " << name
        << " --markdown` between the schema:" << name << " markers";
  }
  EXPECT_FALSE(SchemaMarkdown("nothing").ok());
}

}  // namespace
}  // namespace trainsim
