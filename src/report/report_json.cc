// The report as JSON: every field of StepReport, plus the inputs that produced it (the strategy
// in the strategy file's keys, so that it can be read back) and the version that produced it.
#include <nlohmann/json.hpp>

#include "trainsim/log_conventions.h"
#include "trainsim/megatron.h"
#include "trainsim/schema.h"
#include "trainsim/trainsim.h"
#include "trainsim/version.h"

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

}  // namespace

std::string FormatReportJson(const StepReport& r, const ModelSpec& m, const HardwareSpec& hw,
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
                           {"pp_comm", t.pp_comm_s},
                           {"bubble", t.bubble_s},
                           {"exposed_dp_comm", t.exposed_dp_comm_s},
                           {"optimizer", t.optimizer_s},
                           {"overhead", t.overhead_s}};
  j["stages"] = StagesJson(r);
  AddPhasesJson(j, r);
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

}  // namespace trainsim
