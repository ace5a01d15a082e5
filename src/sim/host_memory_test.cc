// Host memory (issue 12): what the offloads keep on the host per node, against the server's
// memory, and the verdict when host RAM or the host link limits the plan.
#include <gtest/gtest.h>

#include "sim/sim_test_util.h"
#include "trainsim/search.h"
#include "trainsim/trainsim.h"
#include "util/units.h"

namespace trainsim {
namespace {

// Mixed-precision Adam, ZeRO-2 with the optimizer on the CPU (DeepSpeed ZeRO-Offload), one
// 8-GPU node.
Strategy ZeroOffload(int gpus) {
  Strategy s;
  s.world_size = gpus;
  s.zero = 2;
  s.offload_optimizer = true;
  s.seq = 2048;
  s.mbs = 1;
  s.gbs = gpus;
  return s;
}

StepReport Step(const char* model, const HardwareSpec& hw, const Strategy& s) {
  auto r = Simulate(LoadModel(model).value(), hw, s);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.value() : StepReport{};
}

HardwareSpec H100() {
  return LoadHardwarePreset("h100_sxm_80gb").value();
}

// ZeRO-Offload (Ren et al. 2021, section 4; DeepSpeed stage_1_and_2.py with offload_optimizer):
// the CPU holds the fp32 master weights, momentum and variance (12 bytes) and the fp32 gradient
// (4 bytes) of every parameter of each GPU's partition; the 8 GPUs of a node partition the model
// among them, so the node holds 16 bytes per parameter of the whole model.
TEST(HostMemory, ZeroOffloadKeepsSixteenBytesPerParameterPerNode) {
  const StepReport r = Step("llama2-7b", H100(), ZeroOffload(8));
  const HostMemReport& h = r.host_mem;
  const double p = r.params_total;
  EXPECT_GT(p, 6.5e9);
  EXPECT_EQ(h.gpus_per_node, 8);
  EXPECT_NEAR(h.optimizer_bytes, 12 * p, 1e-9 * p);
  EXPECT_NEAR(h.grad_bytes, 4 * p, 1e-9 * p);
  EXPECT_NEAR(h.bytes_per_node, 16 * p, 1e-9 * p);
  EXPECT_EQ(h.param_bytes + h.activation_bytes + h.paged_bytes, 0);
  // DGX H100: 2 TiB of host memory holds the 108 GB.
  EXPECT_EQ(h.capacity_bytes_per_node, 2048 * units::kGiB);
  EXPECT_TRUE(h.fits);
  EXPECT_TRUE(r.fits);
  EXPECT_TRUE(h.reason.empty());
  EXPECT_GT(h.link_s, 0);
}

// Half the states on the host (--optimizer-offload-fraction 0.5): half the host bytes.
TEST(HostMemory, OffloadFractionScalesTheHostShare) {
  Strategy s = ZeroOffload(8);
  const double full = Step("llama2-7b", H100(), s).host_mem.bytes_per_node;
  s.optimizer_offload_fraction = 0.5;
  EXPECT_NEAR(Step("llama2-7b", H100(), s).host_mem.bytes_per_node, 0.5 * full, 1e-9 * full);
}

// The GPUs of one server share its memory: more of the job's GPUs per server, more host bytes per
// server (16 GPUs shard the model 16 ways; 4 or 8 of them per server).
TEST(HostMemory, MoreGpusPerServerNeedMoreHostMemoryPerServer) {
  double last = 0;
  for (int gpn : {2, 4, 8, 16}) {
    HardwareSpec hw = H100();
    hw.gpus_per_node = gpn;
    const HostMemReport h = Step("llama2-7b", hw, ZeroOffload(16)).host_mem;
    EXPECT_EQ(h.gpus_per_node, gpn);
    EXPECT_GT(h.bytes_per_node, last) << gpn;
    last = h.bytes_per_node;
  }
  // A job smaller than the server has all its GPUs on one.
  EXPECT_EQ(Step("llama2-7b", H100(), ZeroOffload(2)).host_mem.gpus_per_node, 2);
}

// A plan that needs more host memory than the server has: still a step time, fits false, and the
// reason names host RAM.
TEST(HostMemory, ExceedingHostRamDoesNotFitAndSaysWhy) {
  HardwareSpec hw = H100();
  const StepReport ok = Step("llama2-7b", hw, ZeroOffload(8));
  hw.host_mem_bytes = 64 * units::kGiB;
  const StepReport r = Step("llama2-7b", hw, ZeroOffload(8));
  EXPECT_FALSE(r.host_mem.fits);
  EXPECT_FALSE(r.fits);
  EXPECT_NE(r.host_mem.reason.find("host RAM"), std::string::npos) << r.host_mem.reason;
  EXPECT_EQ(r.step_time_s, ok.step_time_s);
  EXPECT_EQ(r.peak_mem_bytes, ok.peak_mem_bytes);
  // Nothing on the host: nothing to exceed.
  Strategy none = ZeroOffload(8);
  none.offload_optimizer = false;
  const StepReport plain = Step("llama2-7b", hw, none);
  EXPECT_EQ(plain.host_mem.bytes_per_node, 0);
  EXPECT_TRUE(plain.host_mem.fits);
}

// Search counts such a plan as not fitting.
TEST(HostMemory, SearchRejectsPlansThatExceedHostRam) {
  HardwareSpec hw = H100();
  hw.host_mem_bytes = 8 * units::kGiB;
  SearchOptions o;
  o.gpus = 8;
  o.gbs = 8;
  o.seq = 2048;
  auto r = Search(LoadModel("llama2-7b").value(), hw, o);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_TRUE(r->rejected.count("out of host memory"));
  EXPECT_GT(r->rejected.at("out of host memory"), 0u);
  for (const Candidate& c : r->top) EXPECT_FALSE(c.strategy.offload_optimizer);
}

// Whole-layer activation offload on one GPU: every layer's offloaded bytes sit on the host (two
// layers' worth also stay in HBM, being copied out and back).
TEST(HostMemory, ActivationOffloadParksEveryLayerOnTheHost) {
  Strategy s = test::OneGpu(8192);
  const ModelSpec m = LoadModel("llama3-8b").value();
  const StepReport base = Simulate(m, H100(), s).value();
  s.exec.offload_activations = true;
  const StepReport off = Simulate(m, H100(), s).value();
  const double per_layer =
      (base.stages[0].activation_bytes - off.stages[0].activation_bytes) / (m.layers - 2);
  EXPECT_NEAR(off.host_mem.activation_bytes, per_layer * m.layers, 1e-6 * per_layer * m.layers);
  EXPECT_EQ(off.host_mem.pinned_bytes, off.host_mem.activation_bytes);
  EXPECT_EQ(off.host_mem.gpus_per_node, 1);
}

// Paged 8-bit AdamW: the states CUDA unified memory may page out, 2 bytes per trained parameter
// plus one fp32 absmax per 2048-value block each (bitsandbytes block-wise quantisation).
TEST(HostMemory, PagedOptimizerStatesMayPageToTheHost) {
  Strategy s = test::OneGpu(1024);
  s.exec.optimizer = OptimizerKind::kPagedAdamW8bit;
  const StepReport r = Step("llama2-7b", H100(), s);
  EXPECT_NEAR(r.host_mem.paged_bytes, 2 * (1 + 4.0 / 2048) * r.params_total, 1e-9 * r.params_total);
}

// A host link too slow for the offloaded optimizer's copies: the plan is host-link bound.
TEST(HostMemory, SlowHostLinkBoundsTheStep) {
  HardwareSpec hw = H100();
  hw.host_link_bw_bytes_per_s = 1e9;
  const StepReport r = Step("llama2-7b", hw, ZeroOffload(8));
  EXPECT_TRUE(r.host_mem.link_bound);
  EXPECT_GE(r.host_mem.link_share, 0.5);
  EXPECT_LE(r.host_mem.link_s, r.step_time_s);
  EXPECT_NE(r.host_mem.reason.find("host link"), std::string::npos) << r.host_mem.reason;
  EXPECT_TRUE(r.fits);  // slow, not out of memory
}

// A preset without a host-memory figure: twice the server's HBM, listed as assumed when the plan
// keeps anything on the host.
TEST(HostMemory, DefaultCapacityIsListedAsAssumed) {
  HardwareSpec hw = H100();
  hw.host_mem_bytes = 0;
  const StepReport r = Step("llama2-7b", hw, ZeroOffload(8));
  EXPECT_EQ(r.host_mem.capacity_bytes_per_node, 2 * 8 * hw.hbm_bytes);
  bool listed = false;
  for (const Assumption& a : r.assumed) listed = listed || a.field == "host_mem_gib";
  EXPECT_TRUE(listed);
  Strategy none = ZeroOffload(8);
  none.offload_optimizer = false;
  for (const Assumption& a : Step("llama2-7b", hw, none).assumed)
    EXPECT_NE(a.field, "host_mem_gib");
}

TEST(HostMemory, OverridesAreBounded) {
  HardwareSpec hw = H100();
  ASSERT_TRUE(ApplyHardwareOverrides(hw, R"({"host_mem_gib": 512})", "override").ok());
  EXPECT_EQ(hw.host_mem_bytes, 512 * units::kGiB);
  for (const char* bad :
       {R"({"host_mem_gib": 0})", R"({"host_mem_gib": -1})", R"({"host_mem_gib": 1e300})",
        R"({"host_mem_gib": 1e9})", R"({"host_mem_gib": "lots"})"}) {
    HardwareSpec h = H100();
    const Status st = ApplyHardwareOverrides(h, bad, "override");
    EXPECT_FALSE(st.ok()) << bad;
    EXPECT_NE(st.message().find("host_mem_gib"), std::string::npos) << st.message();
    EXPECT_EQ(h.host_mem_bytes, 2048 * units::kGiB) << bad;
  }
}

}  // namespace
}  // namespace trainsim
