// The report for people: totals, the time breakdown, memory per stage, optional per-op table.
// One unit system: every byte count is GiB (binary, like torch.cuda memory stats); step-level
// times (step time, breakdown) are seconds, per-layer and per-op times are milliseconds, and
// every number's unit is printed next to it or in its column header.
#include <fmt/format.h>

#include "trainsim/log_conventions.h"
#include "trainsim/megatron.h"
#include "trainsim/trainsim.h"
#include "trainsim/uncertainty.h"
#include "util/units.h"

namespace trainsim {
namespace {

// The fine-tuning workload (docs/FINETUNE.md) when it is not plain pre-training.
std::string WorkloadLine(const Strategy& s) {
  if (s.stage == TrainStage::kPretrain && s.method == FtMethod::kFull &&
      s.exec.optimizer == OptimizerKind::kAdam)
    return "";
  std::string adapters;
  if (IsPeftMethod(s.method))
    adapters = fmt::format(" r {} on {}", s.lora_rank, LoraTargetsName(s.lora_targets));
  return fmt::format("  workload {} | {}{} | optimizer {}{}\n", TrainStageName(s.stage),
                     FtMethodName(s.method), adapters, OptimizerName(s.exec.optimizer),
                     s.master_weights ? " (fp32 master)" : " (bf16 states)");
}

std::string PhaseLines(const StepReport& r) {
  std::string o;
  for (const PhaseReport& p : r.phases) {
    o += fmt::format("    phase {:<34} {:9.4f}  {:5.1f} %", p.name, p.time_s, 100 * p.share);
    o += p.mem_bytes > 0 ? fmt::format("  {:7.2f} GiB resident\n", units::BytesToGiB(p.mem_bytes))
                         : std::string("\n");
  }
  const RlReport& x = r.rl;
  if (x.updates > 0) {
    o += fmt::format(
        "    rl: {:g} samples, {} update(s); {} rollout on {} engine(s) of tp {} pp {}{}\n",
        x.samples, x.updates, x.separate ? "separate" : "colocated", x.replicas, x.gen_tp, x.gen_pp,
        x.overlapped ? " (overlapped with training, one step off-policy)" : "");
    o += fmt::format(
        "    rl: decode batch {:g}, {:.0f} steps (prefill {:.2f} s, decode {:.2f} s); KV pool "
        "{:.1f} GiB/GPU; refit {:.2f} s, offload {:.2f} s\n",
        x.batch, x.decode_steps, x.prefill_s, x.decode_s, units::BytesToGiB(x.kv_pool_bytes),
        x.refit_s, x.offload_s);
  }
  return o;
}

}  // namespace

// "optimizer states 61.0, gradients 20.3 GiB": the nonzero parts of the host bytes.
std::string HostMemParts(const HostMemReport& h) {
  std::string out;
  auto part = [&](const char* name, double bytes) {
    if (bytes <= 0) return;
    out += fmt::format("{}{} {:.1f}", out.empty() ? "" : ", ", name, units::BytesToGiB(bytes));
  };
  part("optimizer states", h.optimizer_bytes);
  part("gradients", h.grad_bytes);
  part("parameters", h.param_bytes);
  part("activations", h.activation_bytes);
  part("paged optimizer states", h.paged_bytes);
  part("reference weights", h.reference_bytes);
  part("sleeping engine weights", h.engine_bytes);
  return out + " GiB";
}

// Host RAM and host link of a plan that keeps state on the host (docs/FINETUNE.md, "Host
// memory"); nothing otherwise.
std::string HostMemLines(const StepReport& r) {
  const HostMemReport& h = r.host_mem;
  if (h.bytes_per_node <= 0 && !h.link_bound) return "";
  std::string o = fmt::format(
      "  host memory      {:10.2f} GiB per node of {:.0f} GiB ({} GPUs sharing it{}){}\n",
      units::BytesToGiB(h.bytes_per_node), units::BytesToGiB(h.capacity_bytes_per_node),
      h.gpus_per_node, h.phase.empty() ? "" : ", peak during " + h.phase,
      h.fits ? "" : "  ** exceeds host RAM: does not fit **");
  if (!h.phase.empty())  // RL: what the peak phase keeps there
    o += "                   " + HostMemParts(h) + " per node\n";
  if (h.link_s > 0)
    o += fmt::format("  host link        {:10.4f} s exposed copies per step ({:.1f} %){}\n",
                     h.link_s, 100 * h.link_share, h.link_bound ? "  ** host-link bound **" : "");
  if (!h.reason.empty()) o += "  WARNING: " + h.reason + "\n";
  return o;
}

std::string FormatReportText(const StepReport& r, const ModelSpec& m, const HardwareSpec& hw,
                             const Strategy& s) {
  using units::BytesToGiB;
  using units::SToMs;
  std::string o;
  auto line = [&](const std::string& x) { o += x + "\n"; };
  line(fmt::format("trainsim: {} on {} x {}", m.name, s.world_size, hw.id));
  if (!hw.calibrated) line("  " + UncalibratedNote(hw));
  line(fmt::format("  params {:.2f} B total, {:.2f} B active", r.params_total / units::kGiga,
                   r.params_active / units::kGiga));
  const std::string experts =
      m.is_moe() ? fmt::format(" ep {} etp {} edp {}", s.ep, s.expert_tp(), s.expert_dp()) : "";
  // The sharding layout: HSDP replicas, ZeRO++ hpZ group and quantized collectives.
  std::string shard = s.fsdp ? " (fsdp)" : "";
  if (s.zero >= 1 && s.dist_opt_instances > 1)
    shard += fmt::format(" hsdp {} replicas", s.dist_opt_instances);
  if (s.zero >= 3 && s.zero_hpz_size > 1) shard += fmt::format(" hpZ {}", s.zero_hpz_size);
  if (s.zero >= 3 && s.zero_quant_weights) shard += " qwZ";
  if (s.zero >= 3 && s.zero_quant_grads) shard += " qgZ";
  line(
      fmt::format("  strategy tp {} pp {} vpp {} cp {}{} dp {} | sp {} zero {}{} | "
                  "seq {} mbs {} gbs {} ({} micro-batches) | {} | recompute {}",
                  s.tp, s.pp, s.vpp, s.cp, experts, r.dp, s.sp && s.tp > 1 ? "on" : "off", s.zero,
                  shard, s.seq, s.mbs, r.micro_batches * s.mbs * r.dp, r.micro_batches,
                  DTypeName(s.dtype), RecomputeName(s.recompute)));
  o += WorkloadLine(s);
  line("");
  if (r.rl.updates > 0)  // RL: the strategy line above is one optimizer update's packed rows
    line(fmt::format("  step time        {:10.4f} s (one RL step; no uncertainty band fitted)",
                     r.step_time_s));
  else
    line(fmt::format(
        "  step time        {:10.4f} s ± {:.0f} %  (80 % band {:.4f} - {:.4f} s, {} regime{})",
        r.step_time_s, 50 * (r.step_time_s_high - r.step_time_s_low) / r.step_time_s,
        r.step_time_s_low, r.step_time_s_high, r.uncertainty.regime,
        r.uncertainty.regime == kStackInferredRegime
            ? "; no framework named: --framework or a framework file narrows it"
            : ""));
  line(fmt::format("  MFU / HFU        {:9.1f} % / {:.1f} %", 100 * r.mfu, 100 * r.hfu));
  line(fmt::format("  TFLOP/s per GPU  {:10.1f}", r.tflops_per_gpu));
  line(fmt::format("  tokens/s per GPU {:10.0f}", r.tokens_per_s_per_gpu));
  const MegatronLogFigures mg = MegatronConventionFigures(r, m, s);
  line(
      fmt::format("  Megatron-LM log  {:10.1f} ms elapsed time per iteration, {:.1f} TFLOP/s/GPU "
                  "(its num_floating_point_operations convention)",
                  mg.elapsed_ms_per_iteration, mg.tflops_per_gpu));
  const TorchtitanLogFigures tt = TorchtitanConventionFigures(r, m, hw, s);
  line(
      fmt::format("  torchtitan log   {:10.0f} tps, mfu {:.2f} % (its 6N + 12·l·h·q·t flops per "
                  "token, bf16 peak)",
                  tt.tps, tt.mfu_percent));
  const HfTrainerLogFigures hf = HfTrainerConventionFigures(r, s);
  line(
      fmt::format("  HF Trainer log   {:10.3f} train_samples_per_second, {:.4f} "
                  "train_steps_per_second (steady state)",
                  hf.samples_per_second, hf.steps_per_second));
  bool hbm_fits = true;
  for (const StageReport& st : r.stages) hbm_fits = hbm_fits && st.reserved_bytes <= hw.hbm_bytes;
  line(fmt::format("  peak memory      {:10.2f} GiB (max over stages){}",
                   BytesToGiB(r.peak_mem_bytes), hbm_fits ? "" : "  ** does not fit in HBM **"));
  o += HostMemLines(r);
  line("");
  line("  time breakdown (critical stage)                s      share");
  const TimeBreakdown& t = r.time;
  auto row = [&](const char* name, double x) {
    line(fmt::format("    {:<40} {:9.4f}  {:5.1f} %", name, x, 100 * x / r.step_time_s));
  };
  row("compute (incl. recompute)", t.compute_s);
  row("  of which recompute", t.recompute_s);
  row("exposed TP communication", t.exposed_tp_comm_s);
  row("exposed CP communication", t.exposed_cp_comm_s);
  row("exposed EP communication", t.exposed_ep_comm_s);
  row("pipeline p2p", t.pp_comm_s);
  row("pipeline bubble", t.bubble_s);
  row("exposed DP / ZeRO communication", t.exposed_dp_comm_s);
  if (t.exposed_offload_s > 0) row("exposed activation offload (host copies)", t.exposed_offload_s);
  row("optimizer step (memory-bound update)", t.optimizer_s);
  row("launch / framework overhead", t.overhead_s);
  o += PhaseLines(r);
  line("");
  line(
      "  memory per stage (GiB)  layers  weights   grads  optimizer  activations (in-flight mbs)  "
      "transient    peak  reserved");
  for (const StageReport& st : r.stages) {
    line(fmt::format(
        "    stage {:<3}           {:6}  {:7.2f} {:7.2f}  {:9.2f}  {:8.2f} ({:4.1f})              "
        "{:9.2f} {:7.2f}  {:8.2f}",
        st.index, st.layers, BytesToGiB(st.weight_bytes), BytesToGiB(st.grad_bytes),
        BytesToGiB(st.optimizer_bytes), BytesToGiB(st.activation_bytes), st.inflight_micro_batches,
        BytesToGiB(st.transient_bytes), BytesToGiB(st.peak_mem_bytes),
        BytesToGiB(st.reserved_bytes)));
  }
  if (!r.ignored.empty()) {
    line("");
    line("  Ignored (read but not used: the prediction does not reflect them)");
    for (const IgnoredInput& a : r.ignored)
      line(fmt::format("    {:<40} {:<12} {}", a.field, a.value.empty() ? "-" : a.value, a.why));
  }
  if (!r.assumed.empty()) {
    line("");
    line("  Assumed (not given; the value taken and why)");
    for (const Assumption& a : r.assumed)
      line(fmt::format("    {:<26} {:<12} {}", a.field, a.value, a.why));
  }
  for (const LayerReport& l : r.layers) {
    line("");
    line(
        fmt::format("  {} layer x{} per micro-batch: fwd {:.3f} ms, bwd {:.3f} ms, recompute "
                    "{:.3f} ms, saved activations {:.3f} GiB",
                    l.kind, l.count, SToMs(l.fwd_s), SToMs(l.bwd_s), SToMs(l.recompute_s),
                    BytesToGiB(l.activation_bytes)));
    line(fmt::format("    {:<22} {:<10} {:>10} {:>10} {:>12} {:>12}", "op", "kind", "fwd ms",
                     "bwd ms", "GFLOP", "GiB"));
    for (const OpReport& op : l.ops)
      line(fmt::format("    {:<22} {:<10} {:10.3f} {:10.3f} {:12.2f} {:12.4f}", op.name, op.kind,
                       SToMs(op.fwd_s), SToMs(op.bwd_s), op.fwd_flops / units::kGiga,
                       BytesToGiB(op.bytes)));
  }
  return o;
}

}  // namespace trainsim
