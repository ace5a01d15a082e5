// DeepSpeed config JSON and torchtitan training TOML, each read back with trainsim's own reader
// (trainsim/formats.h) to list what the file does not carry.
//
// DeepSpeed keys: deepspeed.ai/docs/config-json (train_batch_size = micro-batch x gradient
// accumulation x data-parallel GPUs; zero_optimization.stage, overlap_comm,
// offload_optimizer.device; bf16.enabled / fp16.enabled; communication_data_type). torchtitan keys:
// torchtitan/config/job_config.py of the TOML-configured releases (2025): [parallelism]
// data_parallel_replicate_degree / data_parallel_shard_degree / tensor_parallel_degree /
// pipeline_parallel_degree / context_parallel_degree / expert_parallel_degree /
// expert_tensor_parallel_degree / pipeline_parallel_schedule / pipeline_parallel_microbatch_size
// / enable_async_tensor_parallel, [training] local_batch_size / global_batch_size / seq_len /
// mixed_precision_param, [activation_checkpoint] mode / selective_ac_option, [model] flavor and
// converters ("float8", "mx"), [parallelism] fsdp_reshard_after_forward.
#include <nlohmann/json.hpp>
#include <string>

#include "export/export_internal.h"
#include "trainsim/formats.h"

namespace trainsim::export_detail {
namespace {

// trainsim preset -> torchtitan (name, flavor): the reverse of spec/torchtitan_config.cc.
struct Flavor {
  const char* preset;
  const char* name;
  const char* flavor;
};
constexpr Flavor kFlavors[] = {
    {"llama3.1-8b", "llama3", "8B"},        {"llama3.1-70b", "llama3", "70B"},
    {"llama3.1-405b", "llama3", "405B"},    {"qwen3-8b", "qwen3", "8B"},
    {"qwen3-30b-a3b", "qwen3", "30B-A3B"},  {"qwen3-235b-a22b", "qwen3", "235B-A22B"},
    {"deepseek-v3", "deepseek_v3", "671B"},
};

std::string Bool(bool b) {
  return b ? "true" : "false";
}

std::string TitanModel(const ModelSpec& m, const Strategy& s, std::vector<std::string>& notes) {
  std::string out = "[model]\n";
  bool named = false;
  for (const Flavor& f : kFlavors)
    if (m.name == f.preset) {
      out += std::string("name = \"") + f.name + "\"\nflavor = \"" + f.flavor + "\"\n";
      named = true;
    }
  if (!named) {
    notes.push_back("model " + m.name +
                    ": no torchtitan flavor is known for it; set [model] name and flavor");
    out += "# name = \"...\"\n# flavor = \"...\"\n";
  }
  if (s.dtype == DType::kFp8) out += "converters = [\"float8\"]\n";
  if (s.dtype == DType::kMxfp8) out += "converters = [\"mx\"]\n";
  return out;
}

std::string TitanSchedule(const Strategy& s) {
  switch (s.schedule) {
    case PipelineSchedule::kInterleaved:
      return "Interleaved1F1B";
    case PipelineSchedule::kGPipe:
      return "GPipe";
    case PipelineSchedule::kDualPipe:
      return "DualPipeV";
    default:
      return "1F1B";  // zb_h1 has no torchtitan spelling the reader maps: a note says so
  }
}

std::string TitanParallelism(const Strategy& s) {
  const bool shard = s.zero >= 1 || s.fsdp;  // torchtitan shards with FSDP2, replicates with DDP
  std::string out = "[parallelism]\n";
  out += "data_parallel_replicate_degree = " + std::to_string(shard ? 1 : s.dp()) + "\n";
  out += "data_parallel_shard_degree = " + std::to_string(shard ? s.dp() : 1) + "\n";
  out += "tensor_parallel_degree = " + std::to_string(s.tp) + "\n";
  out += "pipeline_parallel_degree = " + std::to_string(s.pp) + "\n";
  out += "context_parallel_degree = " + std::to_string(s.cp) + "\n";
  out += "expert_parallel_degree = " + std::to_string(s.ep) + "\n";
  if (s.ep > 1) out += "expert_tensor_parallel_degree = " + std::to_string(s.expert_tp()) + "\n";
  if (s.tp > 1) out += "enable_async_tensor_parallel = " + Bool(s.tp_comm_overlap) + "\n";
  // fsdp_reshard_after_forward (the reader's ReadReshard): ZeRO-2 keeps the gathered
  // parameters ("never"); FSDP under pipeline parallelism says "always", since torchtitan's
  // "default" would not reshard there. Under pipeline parallelism "default" (and "never") also
  // keep the gradients unsharded until the last micro-batch: ZeRO-1, which ZeRO-2 reads back as
  // (a note says so).
  if (shard && s.pp > 1 && !s.fsdp && s.zero == 1) {
    out += "fsdp_reshard_after_forward = \"default\"\n";
  } else if (shard && !s.fsdp && s.zero == 2) {
    out += "fsdp_reshard_after_forward = \"never\"\n";
  } else if (shard && s.pp > 1) {
    out += "fsdp_reshard_after_forward = \"always\"\n";
  }
  if (s.pp > 1) {
    out += "pipeline_parallel_schedule = \"" + TitanSchedule(s) + "\"\n";
    out += "pipeline_parallel_microbatch_size = " + std::to_string(s.mbs) + "\n";
  }
  return out;
}

// mode and selective_ac_option: full recompute of N layers per stage is every k-th block when
// ceil(stage layers / k) = N (how the reader counts it).
std::string TitanCheckpointing(const ModelSpec& m, const Strategy& s) {
  std::string out = "[activation_checkpoint]\n";
  if (s.recompute == Recompute::kNone) return out + "mode = \"none\"\n";
  if (s.recompute == Recompute::kSelective)
    return out + "mode = \"selective\"\nselective_ac_option = \"op\"\n";
  const int per_stage = StageLayers(m, s);
  if (s.recompute_layers > 0 && s.recompute_layers < per_stage)
    for (int k = 2; k <= per_stage; ++k)
      if ((per_stage + k - 1) / k == s.recompute_layers)
        return out + "mode = \"selective\"\nselective_ac_option = \"" + std::to_string(k) + "\"\n";
  return out + "mode = \"full\"\n";
}

}  // namespace

Result<ExportFile> ExportDeepSpeed(const ModelSpec& m, const Strategy& s) {
  nlohmann::ordered_json j;
  const int gbs = s.mbs * s.num_micro_batches() * s.dp();
  j["train_batch_size"] = gbs;
  j["train_micro_batch_size_per_gpu"] = s.mbs;
  j["gradient_accumulation_steps"] = s.num_micro_batches();
  // fp32 / tf32: neither switch on, which DeepSpeed trains in fp32; the FP8/FP4 formats are the
  // model code's (Transformer Engine), so the config holds their bf16 base.
  const bool fp16 = s.dtype == DType::kFp16;
  const bool full = s.dtype == DType::kFp32 || s.dtype == DType::kTf32;
  j["bf16"] = {{"enabled", !fp16 && !full}};
  j["fp16"] = {{"enabled", fp16}};
  // With ZeRO, DeepSpeed reduces in the 16-bit dtype unless told (engine.py
  // communication_data_type): fp32 gradients say so.
  if ((s.fsdp || s.zero >= 1) && !full && s.main_grad_fp32) j["communication_data_type"] = "fp32";
  nlohmann::ordered_json z;
  z["stage"] = s.fsdp ? 3 : s.zero;
  z["overlap_comm"] = s.overlap_grad_reduce;
  // ZeRO-1/2 gradient buckets (omitted: DeepSpeed's default 5e8, which the reader assumes).
  if (!s.fsdp && (s.zero == 1 || s.zero == 2) && s.exec.zero_reduce_bucket_elems > 0)
    z["reduce_bucket_size"] = s.exec.zero_reduce_bucket_elems;
  if (s.offload_optimizer) {
    z["offload_optimizer"] = {{"device", "cpu"}};
    // ZeRO-Offload++ (DeepSpeed docs, offload_optimizer.ratio): partial offload, stage 3 only.
    if (s.optimizer_offload_fraction < 1)
      z["offload_optimizer"]["ratio"] = s.optimizer_offload_fraction;
  }
  // ZeRO++ (DeepSpeed docs/_tutorials/zeropp.md).
  if (s.zero_hpz_size > 1) z["zero_hpz_partition_size"] = s.zero_hpz_size;
  if (s.zero_quant_weights) z["zero_quantized_weights"] = true;
  if (s.zero_quant_grads) z["zero_quantized_gradients"] = true;
  j["zero_optimization"] = z;
  ExportFile f;
  f.text = j.dump(2) + "\n";
  auto read = ParseDeepSpeedConfig(f.text, "export");
  if (!read.ok()) return read.status().WithContext("exported DeepSpeed config");
  // The model-parallel layout is the model code's (Megatron-DeepSpeed arguments, AutoTP), not
  // the config's: read back with it, and say so.
  Strategy base = ReaderBase(s);
  base.tp = s.tp, base.pp = s.pp, base.vpp = s.vpp, base.cp = s.cp, base.ep = s.ep;
  base.etp = s.etp, base.sp = s.sp;
  const std::pair<const char*, int> sizes[] = {
      {"tp_size", s.tp}, {"pp_size", s.pp}, {"cp_size", s.cp}, {"ep_size", s.ep}};
  for (const auto& [key, v] : sizes)
    if (v > 1)
      f.notes.push_back(std::string(key) + " " + std::to_string(v) +
                        " (set by the model code, e.g. Megatron-DeepSpeed arguments: "
                        "--format megatron)");
  auto back = ReadBack(read->settings, base);
  if (!back.ok()) return back.status();
  DiffNotes(s, back.value(), {}, f.notes);
  (void)m;
  return f;
}

Result<ExportFile> ExportTorchtitan(const ModelSpec& m, const Strategy& s) {
  ExportFile f;
  std::string body = TitanModel(m, s, f.notes) + "\n" + TitanParallelism(s) + "\n[training]\n";
  const int local = s.pp > 1 ? s.mbs * s.num_micro_batches() : s.mbs;
  body += "local_batch_size = " + std::to_string(local) + "\n";
  body += "global_batch_size = " + std::to_string(s.mbs * s.num_micro_batches() * s.dp()) + "\n";
  body += "seq_len = " + std::to_string(s.seq) + "\n";
  const bool full = s.dtype == DType::kFp32 || s.dtype == DType::kTf32;
  body += std::string("mixed_precision_param = \"") + (full ? "float32" : "bfloat16") + "\"\n\n";
  body += TitanCheckpointing(m, s);
  // trainsim's fused norm / rotary / SiLU kernels are what torch.compile makes of the blocks;
  // eager_modules is torchtitan's default (compile off).
  if (!s.exec.eager_modules) body += "\n[compile]\nenable = true\n";
  auto read = ParseTorchtitanToml(body, "export", m.layers);
  if (!read.ok()) return read.status().WithContext("exported torchtitan TOML");
  auto back = ReadBack(read->settings, ReaderBase(s));
  if (!back.ok()) return back.status();
  DiffNotes(s, back.value(), {}, f.notes);
  f.text = Header(ExportFormat::kTorchtitan, m, s, "# ") +
           NoteLines(f.notes, "torchtitan TOML", "# ") + "\n" + body;
  return f;
}

}  // namespace trainsim::export_detail
