// A report can be fed back in: Simulate -> report JSON -> its "strategy" object ->
// ParseStrategyJson -> Simulate gives a bit-identical step.
#include <gtest/gtest.h>

#include "trainsim/schema.h"
#include "trainsim/trainsim.h"

namespace trainsim {
namespace {

struct Case {
  const char* name;
  const char* model;
  const char* hardware;
  const char* strategy;  // strategy JSON
};

const Case kCases[] = {
    {"dense", "llama3-8b", "h100_sxm_80gb",
     R"({"world_size": 16, "tp_size": 2, "pp_size": 2, "global_batch_size": 64})"},
    {"moe_ep_etp", "mixtral-8x7b", "h100_sxm_80gb",
     R"({"world_size": 32, "tp_size": 2, "pp_size": 2, "ep_size": 4, "etp_size": 1,
         "global_batch_size": 64, "moe_dedup_dispatch": true, "ep_comm_overlap": 0.3})"},
    {"interleaved", "llama3-70b", "h100_sxm_80gb",
     R"({"world_size": 32, "tp_size": 4, "pp_size": 4, "interleaving_size": 2,
         "global_batch_size": 64, "recompute": "full", "recompute_layer_num": 3})"},
    {"zb_h1", "llama3-8b", "h100_sxm_80gb",
     R"({"world_size": 8, "tp_size": 2, "pp_size": 4, "pipeline_schedule": "zb_h1",
         "global_batch_size": 32})"},
    {"dualpipe_uneven", "deepseek-v2-lite", "h100_sxm_80gb",
     R"({"world_size": 16, "pp_size": 4, "ep_size": 4, "pipeline_schedule": "dualpipe",
         "uneven_pipeline": true, "global_batch_size": 64})"},
    {"fsdp", "llama3-8b", "h100_sxm_80gb",
     R"({"world_size": 16, "fsdp": true, "global_batch_size": 32, "use_fp32_accum_grad": false})"},
    {"selective_modules", "deepseek-v2-lite", "h100_sxm_80gb",
     R"({"world_size": 8, "ep_size": 8, "micro_batch_num": 4,
         "recompute_modules": "core_attn,layernorm,mla_up_proj,moe_act"})"},
    {"fp8", "llama3-8b", "h100_sxm_80gb",
     R"({"world_size": 8, "tp_size": 2, "dtype": "fp8", "global_batch_size": 16,
         "tp_comm_overlap": true})"},
    {"mxfp8_nvfp4", "llama3-8b", "b200_sxm_180gb",
     R"({"world_size": 8, "dtype": "mxfp8", "global_batch_size": 16, "fused_cross_entropy": true})"},
    {"cp_a2a", "llama3-8b", "h100_sxm_80gb",
     R"({"world_size": 16, "tp_size": 2, "cp_size": 2, "cp_comm_type": "a2a", "seq_len": 16384,
         "global_batch_size": 16, "order": "tp-dp-cp-pp"})"},
    {"offload", "llama3-8b", "h100_sxm_80gb",
     R"({"world_size": 8, "offload_optimizer": true, "global_batch_size": 16,
         "attention_kernel": "fa2", "overlap_grad_reduce": false})"},
    {"simumax_file", "llama3-8b", "a100_sxm_80gb",
     R"({"seq_len": 4096, "micro_batch_size": 1, "micro_batch_num": 16, "world_size": 32,
         "tp_size": 2, "pp_size": 2, "enable_recompute": true, "recompute_granularity":
         "selective_recompute", "recompute_layer_num": 2, "mlp_recompute": true,
         "use_math_sdp": true, "dtype": "fp16"})"},
};

TEST(StrategyRoundTrip, ReportStrategyFeedsBackBitIdentical) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const ModelSpec m = LoadModel(c.model).value();
    const HardwareSpec hw = LoadHardware(c.hardware).value();
    auto s1 = ParseStrategyJson(c.strategy, c.name);
    ASSERT_TRUE(s1.ok()) << s1.status().message();
    auto r1 = Simulate(m, hw, s1.value());
    ASSERT_TRUE(r1.ok()) << r1.status().message();
    const nlohmann::json report =
        nlohmann::json::parse(FormatReportJson(r1.value(), m, hw, s1.value()));
    ASSERT_TRUE(report.contains("trainsim_version"));
    const std::string echo = report["strategy"].dump();
    auto s2 = ParseStrategyJson(echo, "echo");
    ASSERT_TRUE(s2.ok()) << s2.status().message() << "\n" << echo;
    auto r2 = Simulate(m, hw, s2.value());
    ASSERT_TRUE(r2.ok()) << r2.status().message();
    EXPECT_EQ(r1->step_time_s, r2->step_time_s);
    EXPECT_EQ(r1->peak_mem_bytes, r2->peak_mem_bytes);
    EXPECT_EQ(StrategyToJson(s2.value()), report["strategy"]);
    EXPECT_EQ(report["strategy"]["dp"], r1->dp);
    EXPECT_EQ(report["strategy"]["micro_batch_num"], r1->micro_batches);
  }
}

TEST(StrategyRoundTrip, OneWorkloadUnderSeveralLayouts) {
  const ModelSpec m = LoadModel("llama3-8b").value();
  const HardwareSpec hw = LoadHardware("h100_sxm_80gb").value();
  Workload w;
  w.seq = 8192;
  w.gbs = 64;
  Layout a, b;
  a.world_size = b.world_size = 16;
  a.tp = 2;
  b.pp = 2;
  for (const Layout& l : {a, b}) {
    const Strategy s = NormaliseStrategy(Combine(w, l));
    auto r = Simulate(m, hw, s);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(s.seq, 8192);
    EXPECT_EQ(1LL * r->micro_batches * s.mbs * r->dp, 64);
  }
  const Strategy c{w, a};
  EXPECT_EQ(c.workload().gbs, 64);
  EXPECT_EQ(c.layout().tp, 2);
}

}  // namespace
}  // namespace trainsim
