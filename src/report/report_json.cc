// The report as JSON: every field of StepReport, plus the inputs that produced it (the strategy
// in the strategy file's keys, so that it can be read back) and the version that produced it.
//
// Written with a streaming writer (util/json_writer.h), not an nlohmann::json tree: the bytes are
// those of the tree's dump(2) (keys in sorted order, nlohmann's number and string formatting;
// tests/golden and report_json_test check it), at a fraction of the cost (docs/SERVE.md, "Load").
// Keys below are therefore written in byte order within each object.
#include "spec/strategy_apply.h"
#include "trainsim/log_conventions.h"
#include "trainsim/megatron.h"
#include "trainsim/schema.h"
#include "trainsim/trainsim.h"
#include "trainsim/version.h"
#include "util/json_writer.h"

namespace trainsim {

namespace {

using detail::JsonWriter;

// The figures users compare against from their own logs, in each tool's convention.
void WriteConventions(JsonWriter& w, const StepReport& r, const ModelSpec& m,
                      const HardwareSpec& hw, const Strategy& s) {
  w.BeginObject();
  const HfTrainerLogFigures hf = HfTrainerConventionFigures(r, s);
  w.Key("hf_trainer").BeginObject();
  w.Field("train_samples_per_second", hf.samples_per_second);
  w.Field("train_steps_per_second", hf.steps_per_second);
  w.EndObject();
  const MegatronLogFigures mg = MegatronConventionFigures(r, m, s);
  w.Key("megatron").BeginObject();
  w.Field("elapsed_time_per_iteration_ms", mg.elapsed_ms_per_iteration);
  w.Field("num_floating_point_operations", mg.flops_per_iteration);
  w.Field("throughput_tflops_per_gpu", mg.tflops_per_gpu);
  w.EndObject();
  const TorchtitanLogFigures tt = TorchtitanConventionFigures(r, m, hw, s);
  w.Key("torchtitan").BeginObject();
  w.Field("flops_per_token", tt.flops_per_token);
  w.Field("mfu_percent", tt.mfu_percent);
  w.Field("tps", tt.tps);
  w.EndObject();
  w.EndObject();
}

// One object per pipeline stage: its memory and per-micro-batch times.
void WriteStage(JsonWriter& w, const StageReport& st) {
  w.BeginObject();
  w.Field("activation_bytes", st.activation_bytes);
  w.Field("activation_bytes_per_micro_batch", st.activation_bytes_per_mb);
  w.Field("bwd_flops_per_micro_batch", st.bwd_flops_per_mb);
  w.Field("bwd_s_per_micro_batch", st.bwd_per_mb_s);
  w.Field("bwd_weight_s_per_micro_batch", st.bwd_weight_per_mb_s);
  w.Field("dp_grad_comm_bytes", st.dp_grad_comm_bytes);
  w.Field("dp_grad_comm_s", st.dp_grad_comm_s);
  w.Field("dp_param_gather_bytes", st.dp_gather_comm_bytes);
  w.Field("dp_param_gather_s", st.dp_param_gather_s);
  w.Field("exposed_ep_bwd_s_per_micro_batch", st.ep_bwd_per_mb_s);
  w.Field("exposed_ep_fwd_s_per_micro_batch", st.ep_fwd_per_mb_s);
  w.Field("fsdp_comm_per_micro_batch_s", st.fsdp_comm_per_mb_s);
  w.Field("fsdp_gather_s_per_micro_batch", st.fsdp_gather_per_mb_s);
  w.Field("fsdp_reduce_s_per_micro_batch", st.fsdp_reduce_per_mb_s);
  w.Field("fwd_flops_per_micro_batch", st.fwd_flops_per_mb);
  w.Field("fwd_s_per_micro_batch", st.fwd_per_mb_s);
  w.Field("grad_bytes", st.grad_bytes);
  w.Field("index", st.index);
  w.Field("inflight_micro_batches", st.inflight_micro_batches);
  w.Field("layers", st.layers);
  w.Field("mirror_static_bytes", st.mirror_static_bytes);
  w.Field("optimizer_bytes", st.optimizer_bytes);
  w.Field("overhead_bytes", st.overhead_bytes);
  w.Field("p2p_s", st.p2p_s);
  w.Field("params", st.params);
  w.Field("peak_mem_bytes", st.peak_mem_bytes);
  w.Field("recompute_s_per_micro_batch", st.recompute_per_mb_s);
  w.Field("reserved_bytes", st.reserved_bytes);
  w.Field("static_bytes", st.static_bytes);
  w.Field("transient_bytes", st.transient_bytes);
  w.Field("weight_bytes", st.weight_bytes);
  w.EndObject();
}

void WritePhases(JsonWriter& w, const StepReport& r) {
  w.Key("phases").BeginArray();
  for (const PhaseReport& ph : r.phases) {
    w.BeginObject();
    if (ph.mem_bytes > 0) w.Field("mem_bytes", ph.mem_bytes);
    w.Field("name", ph.name);
    w.Field("share", ph.share);
    w.Field("time_s", ph.time_s);
    w.EndObject();
  }
  w.EndArray();
}

// RL stages: the rollout's figures.
void WriteRl(JsonWriter& w, const RlReport& x) {
  w.Key("rl").BeginObject();
  w.Field("decode_batch", x.batch);
  w.Field("decode_s", x.decode_s);
  w.Field("decode_steps", x.decode_steps);
  w.Field("engine_pp", x.gen_pp);
  w.Field("engine_tp", x.gen_tp);
  w.Field("engine_weight_bytes", x.gen_weight_bytes);
  w.Field("engines", x.replicas);
  w.Field("generation_overlaps_training", x.overlapped);
  w.Field("kv_pool_bytes", x.kv_pool_bytes);
  w.Field("offload_s", x.offload_s);
  w.Field("optimizer_updates", x.updates);
  w.Field("prefill_s", x.prefill_s);
  w.Field("refit_s", x.refit_s);
  w.Field("rollout", x.separate ? "separate" : "colocated");
  w.Field("samples", x.samples);
  w.EndObject();
}

// The per-layer op table (--detail).
void WriteLayers(JsonWriter& w, const StepReport& r) {
  w.Key("layers").BeginArray();
  for (const LayerReport& l : r.layers) {
    w.BeginObject();
    w.Field("activation_bytes", l.activation_bytes);
    w.Field("bwd_s", l.bwd_s);
    w.Field("count", l.count);
    w.Field("fwd_s", l.fwd_s);
    w.Field("kind", l.kind);
    w.Key("ops").BeginArray();
    for (const OpReport& o : l.ops) {
      w.BeginObject();
      w.Field("bwd_s", o.bwd_s);
      w.Field("bytes", o.bytes);
      w.Field("fwd_flops", o.fwd_flops);
      w.Field("fwd_s", o.fwd_s);
      w.Field("kind", o.kind);
      w.Field("name", o.name);
      w.EndObject();
    }
    w.EndArray();
    w.Field("recompute_s", l.recompute_s);
    w.EndObject();
  }
  w.EndArray();
}

// "assumed" and "ignored": {field, value, why} each.
void WriteNotes(JsonWriter& w, std::string_view key, const std::vector<Assumption>& notes) {
  w.Key(key).BeginArray();
  for (const Assumption& a : notes) {
    w.BeginObject();
    w.Field("field", a.field);
    w.Field("value", a.value);
    w.Field("why", a.why);
    w.EndObject();
  }
  w.EndArray();
}

void StringOrNull(JsonWriter& w, std::string_view key, const std::string& v) {
  w.Key(key);
  if (v.empty())
    w.Null();
  else
    w.String(v);
}

// Host RAM and host link (docs/FINETUNE.md, "Host memory"): only for plans that keep state on
// the host or whose host-link copies bound the step.
void WriteHostMem(JsonWriter& w, const HostMemReport& h) {
  if (h.bytes_per_node <= 0 && !h.link_bound) return;
  w.Key("host_mem").BeginObject();
  w.Field("activation_bytes", h.activation_bytes);
  w.Field("bytes_per_node", h.bytes_per_node);
  w.Field("capacity_bytes_per_node", h.capacity_bytes_per_node);
  w.Field("engine_bytes", h.engine_bytes);
  w.Field("fits", h.fits);
  w.Field("gpus_per_node", h.gpus_per_node);
  w.Field("grad_bytes", h.grad_bytes);
  w.Field("link_bound", h.link_bound);
  w.Field("link_s", h.link_s);
  w.Field("link_share", h.link_share);
  w.Field("optimizer_bytes", h.optimizer_bytes);
  w.Field("paged_bytes", h.paged_bytes);
  w.Field("param_bytes", h.param_bytes);
  StringOrNull(w, "phase", h.phase);
  w.Field("pinned_bytes", h.pinned_bytes);
  StringOrNull(w, "reason", h.reason);
  w.Field("reference_bytes", h.reference_bytes);
  w.EndObject();
}

// The members from "assumed" to "ignored": the hardware's calibration (hardware_calibration:
// the fitted date, also when borrowed; hardware_calibrated: fitted on this very hardware;
// hardware_efficiency_from: the preset borrowed from, or null), totals and the model.
void WriteHead(JsonWriter& w, const StepReport& r, const ModelSpec& m, const HardwareSpec& hw,
               const Strategy& s) {
  WriteNotes(w, "assumed", r.assumed);
  w.Key("conventions");
  WriteConventions(w, r, m, hw, s);
  w.Field("fits", r.fits);
  w.Field("hardware", hw.id);
  w.Field("hardware_calibrated", hw.calibrated);
  StringOrNull(w, "hardware_calibration", hw.eff.fitted_date);
  StringOrNull(w, "hardware_efficiency_from", hw.efficiency_from);
  w.Field("hardware_flops_per_step", r.hardware_flops);
  w.Field("hfu", r.hfu);
  WriteHostMem(w, r.host_mem);
  WriteNotes(w, "ignored", r.ignored);
}

void WriteTimeBreakdown(JsonWriter& w, const TimeBreakdown& t) {
  w.Key("time_breakdown_s").BeginObject();
  w.Field("bubble", t.bubble_s);
  w.Field("compute", t.compute_s);
  w.Field("exposed_cp_comm", t.exposed_cp_comm_s);
  w.Field("exposed_dp_comm", t.exposed_dp_comm_s);
  w.Field("exposed_ep_comm", t.exposed_ep_comm_s);
  w.Field("exposed_offload", t.exposed_offload_s);
  w.Field("exposed_tp_comm", t.exposed_tp_comm_s);
  w.Field("optimizer", t.optimizer_s);
  w.Field("overhead", t.overhead_s);
  w.Field("pp_comm", t.pp_comm_s);
  w.Field("recompute", t.recompute_s);
  w.EndObject();
}

// The members from "stages" to the end.
void WriteTail(JsonWriter& w, const StepReport& r, const Strategy& s) {
  w.Key("stages").BeginArray();
  for (const StageReport& st : r.stages) WriteStage(w, st);
  w.EndArray();
  w.Field("step_overhead_s", r.step_overhead_s);
  w.Field("step_time_s", r.step_time_s);
  w.Field("step_time_s_high", r.step_time_s_high);
  w.Field("step_time_s_low", r.step_time_s_low);
  w.Key("strategy");
  WriteStrategyJson(w, s);
  w.Field("tflops_per_gpu", r.tflops_per_gpu);
  WriteTimeBreakdown(w, r.time);
  w.Field("tokens_per_s_per_gpu", r.tokens_per_s_per_gpu);
  w.Field("trainsim_version", TrainsimVersion());
  const StepUncertainty& u = r.uncertainty;
  w.Key("uncertainty").BeginObject();
  w.Field("cases", u.cases);
  w.Field("regime", u.regime);
  w.Field("rel_above", u.rel_above);
  w.Field("rel_below", u.rel_below);
  w.Field("stack_inferred", u.stack_inferred);
  w.Field("uncalibrated_hardware", u.uncalibrated_hardware);
  w.EndObject();
}

}  // namespace

std::string FormatReportJson(const StepReport& r, const ModelSpec& m, const HardwareSpec& hw,
                             const Strategy& s) {
  std::string out;
  out.reserve(8192 + 1024 * r.stages.size() + 4096 * r.layers.size());
  JsonWriter w(out);
  w.BeginObject();
  WriteHead(w, r, m, hw, s);
  if (!r.layers.empty()) WriteLayers(w, r);
  w.Field("mfu", r.mfu);
  w.Field("micro_batches", r.micro_batches);
  w.Field("model", m.name);
  w.Field("model_flops_per_step", r.model_flops);
  w.Field("params_active", r.params_active);
  w.Field("params_total", r.params_total);
  w.Field("peak_mem_bytes", r.peak_mem_bytes);
  WritePhases(w, r);
  if (r.rl.updates > 0) WriteRl(w, r.rl);
  WriteTail(w, r, s);
  w.EndObject();
  return out;
}

}  // namespace trainsim
