// FormatReportJson (a streaming writer, util/json_writer.h) against the nlohmann::json tree it
// replaced: the same bytes for every report, real and synthetic (every optional member, strings
// that need escaping, non-finite and extreme numbers), and the writer against dump(2) on random
// documents.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "trainsim/log_conventions.h"
#include "trainsim/megatron.h"
#include "trainsim/schema.h"
#include "trainsim/trainsim.h"
#include "trainsim/version.h"
#include "util/json_writer.h"

namespace trainsim {
namespace {

// The figures users compare against from their own logs, in each tool's convention.
nlohmann::json ConventionsJson(const StepReport& r, const ModelSpec& m, const HardwareSpec& hw,
                               const Strategy& s) {
  nlohmann::json c;
  const MegatronLogFigures mg = MegatronConventionFigures(r, m, s);
  c["megatron"] = {{"elapsed_time_per_iteration_ms", mg.elapsed_ms_per_iteration},
                   {"throughput_tflops_per_gpu", mg.tflops_per_gpu},
                   {"num_floating_point_operations", mg.flops_per_iteration}};
  const TorchtitanLogFigures tt = TorchtitanConventionFigures(r, m, hw, s);
  c["torchtitan"] = {
      {"tps", tt.tps}, {"mfu_percent", tt.mfu_percent}, {"flops_per_token", tt.flops_per_token}};
  const HfTrainerLogFigures hf = HfTrainerConventionFigures(r, s);
  c["hf_trainer"] = {{"train_samples_per_second", hf.samples_per_second},
                     {"train_steps_per_second", hf.steps_per_second}};
  return c;
}

// hardware_calibration (the fitted date, also when borrowed), hardware_calibrated (fitted on this
// very hardware) and hardware_efficiency_from (the preset borrowed from, or null).
void AddCalibration(nlohmann::json& j, const HardwareSpec& hw) {
  j["hardware_calibration"] =
      hw.eff.fitted_date.empty() ? nlohmann::json(nullptr) : nlohmann::json(hw.eff.fitted_date);
  j["hardware_calibrated"] = hw.calibrated;
  j["hardware_efficiency_from"] =
      hw.efficiency_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(hw.efficiency_from);
}

// One object per pipeline stage: its memory and per-micro-batch times.
nlohmann::json StagesJson(const StepReport& r) {
  using nlohmann::json;
  json stages = json::array();
  for (const StageReport& st : r.stages) {
    stages.push_back({{"index", st.index},
                      {"layers", st.layers},
                      {"params", st.params},
                      {"peak_mem_bytes", st.peak_mem_bytes},
                      {"reserved_bytes", st.reserved_bytes},
                      {"weight_bytes", st.weight_bytes},
                      {"grad_bytes", st.grad_bytes},
                      {"optimizer_bytes", st.optimizer_bytes},
                      {"activation_bytes", st.activation_bytes},
                      {"inflight_micro_batches", st.inflight_micro_batches},
                      {"transient_bytes", st.transient_bytes},
                      {"overhead_bytes", st.overhead_bytes},
                      {"fwd_s_per_micro_batch", st.fwd_per_mb_s},
                      {"bwd_s_per_micro_batch", st.bwd_per_mb_s},
                      {"bwd_weight_s_per_micro_batch", st.bwd_weight_per_mb_s},
                      {"recompute_s_per_micro_batch", st.recompute_per_mb_s},
                      {"p2p_s", st.p2p_s},
                      {"dp_grad_comm_s", st.dp_grad_comm_s},
                      {"dp_param_gather_s", st.dp_param_gather_s},
                      {"fsdp_comm_per_micro_batch_s", st.fsdp_comm_per_mb_s},
                      {"fsdp_gather_s_per_micro_batch", st.fsdp_gather_per_mb_s},
                      {"fsdp_reduce_s_per_micro_batch", st.fsdp_reduce_per_mb_s},
                      {"exposed_ep_fwd_s_per_micro_batch", st.ep_fwd_per_mb_s},
                      {"exposed_ep_bwd_s_per_micro_batch", st.ep_bwd_per_mb_s},
                      {"fwd_flops_per_micro_batch", st.fwd_flops_per_mb},
                      {"bwd_flops_per_micro_batch", st.bwd_flops_per_mb},
                      {"dp_grad_comm_bytes", st.dp_grad_comm_bytes},
                      {"dp_param_gather_bytes", st.dp_gather_comm_bytes},
                      {"static_bytes", st.static_bytes},
                      {"mirror_static_bytes", st.mirror_static_bytes},
                      {"activation_bytes_per_micro_batch", st.activation_bytes_per_mb}});
  }
  return stages;
}

// The phases of a post-training step and, for RL, its rollout figures.
void AddPhasesJson(nlohmann::json& j, const StepReport& r) {
  using nlohmann::json;
  json phases = json::array();
  for (const PhaseReport& ph : r.phases) {
    json one = {{"name", ph.name}, {"time_s", ph.time_s}, {"share", ph.share}};
    if (ph.mem_bytes > 0) one["mem_bytes"] = ph.mem_bytes;
    phases.push_back(one);
  }
  j["phases"] = phases;
  if (r.rl.updates > 0) {
    const RlReport& x = r.rl;
    j["rl"] = {{"samples", x.samples},
               {"optimizer_updates", x.updates},
               {"rollout", x.separate ? "separate" : "colocated"},
               {"generation_overlaps_training", x.overlapped},
               {"engines", x.replicas},
               {"engine_tp", x.gen_tp},
               {"engine_pp", x.gen_pp},
               {"decode_batch", x.batch},
               {"decode_steps", x.decode_steps},
               {"prefill_s", x.prefill_s},
               {"decode_s", x.decode_s},
               {"kv_pool_bytes", x.kv_pool_bytes},
               {"engine_weight_bytes", x.gen_weight_bytes},
               {"refit_s", x.refit_s},
               {"offload_s", x.offload_s}};
  }
}

// Host RAM and host link, for plans that keep anything on the host (an RL step's offloaded
// trainer and reference, offloads, paged optimizers).
void AddHostMemJson(nlohmann::json& j, const HostMemReport& h) {
  if (h.bytes_per_node <= 0 && !h.link_bound) return;
  auto or_null = [](const std::string& v) {
    return v.empty() ? nlohmann::json() : nlohmann::json(v);
  };
  j["host_mem"] = {{"activation_bytes", h.activation_bytes},
                   {"bytes_per_node", h.bytes_per_node},
                   {"capacity_bytes_per_node", h.capacity_bytes_per_node},
                   {"engine_bytes", h.engine_bytes},
                   {"fits", h.fits},
                   {"gpus_per_node", h.gpus_per_node},
                   {"grad_bytes", h.grad_bytes},
                   {"link_bound", h.link_bound},
                   {"link_s", h.link_s},
                   {"link_share", h.link_share},
                   {"optimizer_bytes", h.optimizer_bytes},
                   {"paged_bytes", h.paged_bytes},
                   {"param_bytes", h.param_bytes},
                   {"phase", or_null(h.phase)},
                   {"pinned_bytes", h.pinned_bytes},
                   {"reason", or_null(h.reason)},
                   {"reference_bytes", h.reference_bytes}};
}

// The per-layer op table (--detail).
nlohmann::json LayersJson(const StepReport& r) {
  using nlohmann::json;
  json layers = json::array();
  for (const LayerReport& l : r.layers) {
    json ops = json::array();
    for (const OpReport& o : l.ops)
      ops.push_back({{"name", o.name},
                     {"kind", o.kind},
                     {"fwd_s", o.fwd_s},
                     {"bwd_s", o.bwd_s},
                     {"fwd_flops", o.fwd_flops},
                     {"bytes", o.bytes}});
    layers.push_back({{"kind", l.kind},
                      {"count", l.count},
                      {"fwd_s", l.fwd_s},
                      {"bwd_s", l.bwd_s},
                      {"recompute_s", l.recompute_s},
                      {"activation_bytes", l.activation_bytes},
                      {"ops", ops}});
  }
  return layers;
}

// The report writer as it was before the streaming writer (an nlohmann::json tree, dump(2)):
// the oracle that FormatReportJson must match byte for byte.
std::string ReferenceReportJson(const StepReport& r, const ModelSpec& m, const HardwareSpec& hw,
                                const Strategy& s) {
  using nlohmann::json;
  json j;
  j["step_time_s"] = r.step_time_s;
  j["step_time_s_low"] = r.step_time_s_low;
  j["step_time_s_high"] = r.step_time_s_high;
  j["uncertainty"] = {{"regime", std::string(r.uncertainty.regime)},
                      {"rel_below", r.uncertainty.rel_below},
                      {"rel_above", r.uncertainty.rel_above},
                      {"cases", r.uncertainty.cases},
                      {"stack_inferred", r.uncertainty.stack_inferred},
                      {"uncalibrated_hardware", r.uncertainty.uncalibrated_hardware}};
  j["mfu"] = r.mfu;
  j["hfu"] = r.hfu;
  j["tflops_per_gpu"] = r.tflops_per_gpu;
  j["tokens_per_s_per_gpu"] = r.tokens_per_s_per_gpu;
  j["model_flops_per_step"] = r.model_flops;
  j["hardware_flops_per_step"] = r.hardware_flops;
  j["params_total"] = r.params_total;
  j["params_active"] = r.params_active;
  j["micro_batches"] = r.micro_batches;
  j["step_overhead_s"] = r.step_overhead_s;
  j["peak_mem_bytes"] = r.peak_mem_bytes;
  j["fits"] = r.fits;
  j["model"] = m.name;
  j["hardware"] = hw.id;
  j["strategy"] = StrategyToJson(s);
  j["trainsim_version"] = TrainsimVersion();
  AddCalibration(j, hw);
  const TimeBreakdown& t = r.time;
  j["time_breakdown_s"] = {{"compute", t.compute_s},
                           {"recompute", t.recompute_s},
                           {"exposed_tp_comm", t.exposed_tp_comm_s},
                           {"exposed_cp_comm", t.exposed_cp_comm_s},
                           {"exposed_ep_comm", t.exposed_ep_comm_s},
                           {"exposed_offload", t.exposed_offload_s},
                           {"pp_comm", t.pp_comm_s},
                           {"bubble", t.bubble_s},
                           {"exposed_dp_comm", t.exposed_dp_comm_s},
                           {"optimizer", t.optimizer_s},
                           {"overhead", t.overhead_s}};
  j["stages"] = StagesJson(r);
  AddPhasesJson(j, r);
  AddHostMemJson(j, r.host_mem);
  json assumed = json::array();
  for (const Assumption& a : r.assumed)
    assumed.push_back({{"field", a.field}, {"value", a.value}, {"why", a.why}});
  j["assumed"] = assumed;
  json ignored = json::array();
  for (const IgnoredInput& a : r.ignored)
    ignored.push_back({{"field", a.field}, {"value", a.value}, {"why", a.why}});
  j["ignored"] = ignored;
  j["conventions"] = ConventionsJson(r, m, hw, s);
  if (!r.layers.empty()) j["layers"] = LayersJson(r);
  return j.dump(2);
}

// A DOM walked with the writer's calls (objects iterate in key order, as dump() prints them).
void WriteDom(detail::JsonWriter& w, const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::object:
      w.BeginObject();
      for (const auto& [k, v] : j.items()) {
        w.Key(k);
        WriteDom(w, v);
      }
      return w.EndObject();
    case nlohmann::json::value_t::array:
      w.BeginArray();
      for (const auto& v : j) WriteDom(w, v);
      return w.EndArray();
    case nlohmann::json::value_t::string:
      return w.String(j.get_ref<const std::string&>());
    case nlohmann::json::value_t::boolean:
      return w.Bool(j.get<bool>());
    case nlohmann::json::value_t::number_integer:
      return w.Int(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return w.UInt(j.get<uint64_t>());
    case nlohmann::json::value_t::number_float:
      return w.Double(j.get<double>());
    default:
      return w.Null();
  }
}

std::string Written(const nlohmann::json& j) {
  std::string out;
  detail::JsonWriter w(out);
  WriteDom(w, j);
  return out;
}

double RandomDouble(std::mt19937_64& rng) {
  switch (rng() % 6) {
    case 0:
      return std::bit_cast<double>(rng());  // any bits: NaN, inf, denormals, huge
    case 1:
      return static_cast<double>(static_cast<int64_t>(rng() % 2000001) - 1000000);  // integral
    case 2:
      return std::ldexp(static_cast<double>(rng() % 1000000), static_cast<int>(rng() % 200) - 100);
    case 3:
      return (rng() % 2 ? -1.0 : 1.0) * static_cast<double>(rng() % 1000) / 1000.0;
    case 4:
      return -0.0;
    default:
      return std::uniform_real_distribution<double>(0, 1e-3)(rng);
  }
}

std::string RandomString(std::mt19937_64& rng) {
  static const std::string pieces[] = {"a",      "Z",          "_",    " ",    "\"",   "\\",
                                       "\n",     "\t",         "\x01", "\x1f", "\x7f", "\u00e9",
                                       "\u4e2d", "\U0001f600", "/",    "0",    ""};
  std::string s;
  const int n = static_cast<int>(rng() % 6);
  for (int i = 0; i < n; ++i) s += pieces[rng() % std::size(pieces)];
  return s;
}

nlohmann::json RandomDoc(std::mt19937_64& rng, int depth) {
  const int kind = static_cast<int>(rng() % (depth > 3 ? 6 : 8));
  switch (kind) {
    case 0:
      return nullptr;
    case 1:
      return rng() % 2 == 0;
    case 2:
      return static_cast<int64_t>(rng());
    case 3:
      return static_cast<uint64_t>(rng());
    case 4:
      return RandomDouble(rng);
    case 5:
      return RandomString(rng);
    case 6: {
      nlohmann::json a = nlohmann::json::array();
      for (int i = static_cast<int>(rng() % 4); i > 0; --i) a.push_back(RandomDoc(rng, depth + 1));
      return a;
    }
    default: {
      nlohmann::json o = nlohmann::json::object();
      for (int i = static_cast<int>(rng() % 4); i > 0; --i)
        o[RandomString(rng)] = RandomDoc(rng, depth + 1);
      return o;
    }
  }
}

TEST(JsonWriter, PrintsWhatDumpPrints) {
  std::mt19937_64 rng(20261123);
  for (int i = 0; i < 20000; ++i) {
    const nlohmann::json doc = RandomDoc(rng, 0);
    ASSERT_EQ(Written(doc), doc.dump(2)) << doc.dump();
  }
}

TEST(JsonWriter, InvalidUtf8ThrowsAsDumpDoes) {
  const nlohmann::json doc = {{"k", std::string("a\xff")}};
  EXPECT_THROW(doc.dump(2), nlohmann::json::type_error);
  EXPECT_THROW(Written(doc), nlohmann::json::type_error);
}

// Every member FormatReportJson can print, with values that test the number and string paths.
StepReport SyntheticReport(std::mt19937_64& rng) {
  StepReport r;
  auto d = [&] { return RandomDouble(rng); };
  r.step_time_s = d(), r.mfu = d(), r.hfu = d(), r.tflops_per_gpu = d();
  r.tokens_per_s_per_gpu = d(), r.model_flops = d(), r.hardware_flops = d();
  r.params_total = d(), r.params_active = d(), r.step_overhead_s = d(), r.peak_mem_bytes = d();
  r.micro_batches = static_cast<int>(rng()), r.dp = 3, r.fits = rng() % 2;
  r.step_time_s_low = d(), r.step_time_s_high = d();
  r.uncertainty = {"hopper/multi-node", d(), d(), static_cast<int>(rng() % 50), rng() % 2 == 0};
  r.time = {d(), d(), d(), d(), d(), d(), d(), d(), d(), d()};
  for (int i = static_cast<int>(rng() % 3); i > 0; --i) {
    r.assumed.push_back({RandomString(rng), RandomString(rng), RandomString(rng)});
    r.ignored.push_back({RandomString(rng), RandomString(rng), RandomString(rng)});
    r.phases.push_back({RandomString(rng), d(), d(), rng() % 2 ? 0.0 : d()});
  }
  for (int i = static_cast<int>(rng() % 4); i > 0; --i) {
    StageReport st;
    double* fields[] = {&st.params,
                        &st.weight_bytes,
                        &st.grad_bytes,
                        &st.optimizer_bytes,
                        &st.activation_bytes,
                        &st.inflight_micro_batches,
                        &st.transient_bytes,
                        &st.peak_mem_bytes,
                        &st.overhead_bytes,
                        &st.reserved_bytes,
                        &st.fwd_per_mb_s,
                        &st.bwd_per_mb_s,
                        &st.bwd_weight_per_mb_s,
                        &st.recompute_per_mb_s,
                        &st.p2p_s,
                        &st.dp_grad_comm_s,
                        &st.dp_param_gather_s,
                        &st.fsdp_comm_per_mb_s,
                        &st.fsdp_gather_per_mb_s,
                        &st.fsdp_reduce_per_mb_s,
                        &st.dp_grad_comm_bytes,
                        &st.dp_gather_comm_bytes,
                        &st.ep_fwd_per_mb_s,
                        &st.ep_bwd_per_mb_s,
                        &st.fwd_flops_per_mb,
                        &st.bwd_flops_per_mb,
                        &st.wgrad_flops_per_mb,
                        &st.static_bytes,
                        &st.mirror_static_bytes,
                        &st.activation_bytes_per_mb};
    for (double* f : fields) *f = d();
    st.index = i, st.layers = static_cast<int>(rng() % 100);
    r.stages.push_back(st);
  }
  if (rng() % 2) {
    r.rl = {d(),
            1 + static_cast<int>(rng() % 4),
            2,
            4,
            1,
            d(),
            d(),
            d(),
            d(),
            d(),
            d(),
            d(),
            d(),
            rng() % 2 == 0,
            rng() % 2 == 0};
  }
  for (int i = static_cast<int>(rng() % 3); i > 0; --i) {
    LayerReport l{RandomString(rng), static_cast<int>(rng() % 80), d(), d(), d(), d(), {}};
    for (int k = static_cast<int>(rng() % 3); k > 0; --k)
      l.ops.push_back({RandomString(rng), RandomString(rng), d(), d(), d(), d(), true});
    r.layers.push_back(l);
  }
  return r;
}

TEST(FormatReportJson, SameBytesAsTheTreeOnSyntheticReports) {
  auto m = LoadModelPreset("llama3-8b");
  auto hw = LoadHardwarePreset("h100_sxm_80gb");
  ASSERT_TRUE(m.ok() && hw.ok());
  std::mt19937_64 rng(7);
  for (int i = 0; i < 300; ++i) {
    const StepReport r = SyntheticReport(rng);
    ModelSpec model = m.value();
    model.name = RandomString(rng);
    HardwareSpec h = hw.value();
    h.eff.fitted_date = i % 2 ? "" : "2026-11-23";
    h.efficiency_from = i % 3 ? "" : "h100_sxm_80gb";
    h.calibrated = i % 5 == 0;
    Strategy s;
    s.world_size = 1 << (i % 8);
    s.tp = 1 << (i % 3);
    s.gbs = 64;
    ASSERT_EQ(FormatReportJson(r, model, h, s), ReferenceReportJson(r, model, h, s)) << i;
  }
}

TEST(FormatReportJson, SameBytesAsTheTreeOnSimulatedSteps) {
  struct Case {
    const char* model;
    const char* hardware;
    const char* strategy;  // a strategy file's JSON
  };
  const Case cases[] = {
      {"llama3-8b", "h100_sxm_80gb",
       R"({"global_batch_size": 64, "world_size": 8, "tp_size": 2, "pp_size": 2})"},
      {"llama3-70b", "h100_sxm_80gb",
       R"({"global_batch_size": 64, "world_size": 64, "tp_size": 8, "pp_size": 4, "interleaving_size": 5, "seq_len": 8192,
           "recompute": "selective"})"},
      {"mixtral-8x7b", "b200_sxm_180gb",
       R"({"global_batch_size": 64, "world_size": 64, "ep_size": 8, "zero_state": 3})"},
      {"llama3-8b", "a100_sxm_80gb",
       R"({"global_batch_size": 64, "world_size": 8, "stage": "dpo"})"},
      {"llama3-8b", "h100_sxm_80gb",
       R"({"global_batch_size": 64, "world_size": 16, "stage": "grpo"})"},
      {"llama3-8b", "h100_sxm_80gb",
       R"({"global_batch_size": 64, "world_size": 8, "method": "lora"})"},
  };
  for (const Case& c : cases) {
    auto m = LoadModelPreset(c.model);
    auto hw = LoadHardwarePreset(c.hardware);
    auto s = ParseStrategyJson(c.strategy, "test");
    ASSERT_TRUE(m.ok() && hw.ok()) << c.model;
    ASSERT_TRUE(s.ok()) << s.status().message();
    for (bool detail : {false, true}) {
      SimOptions o;
      o.detail = detail;
      auto r = Simulate(m.value(), hw.value(), s.value(), o);
      ASSERT_TRUE(r.ok()) << c.strategy << ": " << r.status().message();
      EXPECT_EQ(FormatReportJson(r.value(), m.value(), hw.value(), s.value()),
                ReferenceReportJson(r.value(), m.value(), hw.value(), s.value()))
          << c.strategy;
    }
  }
}

}  // namespace
}  // namespace trainsim
