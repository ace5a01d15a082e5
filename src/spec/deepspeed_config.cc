// DeepSpeed config JSON (--deepspeed-config): the ZeRO stage, offload, batch and precision keys.
//
// Sources: DeepSpeed docs "DeepSpeed Configuration JSON" (deepspeed.ai/docs/config-json: batch
// rule train_batch_size = train_micro_batch_size_per_gpu * gradient_accumulation_steps * number
// of GPUs, zero_optimization.stage default 0, offload devices none/cpu/nvme) and
// deepspeed/runtime/zero/config.py (DeepSpeedZeroConfig.overlap_comm_valid: overlap_comm
// defaults to true for stage 3 and false otherwise). HF Transformers' DeepSpeed integration
// (integrations/deepspeed.py, HfTrainerDeepSpeedConfig.trainer_config_process) fills "auto"
// values from TrainingArguments, which trainsim does not see.
#include <optional>
#include <set>
#include <string>

#include "spec/field_text.h"
#include "spec/json_fields.h"
#include "trainsim/execution.h"
#include "trainsim/formats.h"

namespace trainsim {
namespace {

using nlohmann::json;

// Keys that do not change a step's time or memory (logging, learning-rate schedule, clipping).
const std::set<std::string> kHarmless = {"optimizer",
                                         "scheduler",
                                         "gradient_clipping",
                                         "steps_per_print",
                                         "wall_clock_breakdown",
                                         "zero_allow_untested_optimizer",
                                         "flops_profiler",
                                         "tensorboard",
                                         "wandb",
                                         "csv_monitor",
                                         "comms_logger",
                                         "monitor_config",
                                         "dump_state",
                                         "checkpoint",
                                         "memory_breakdown",
                                         "zero_force_ds_cpu_optimizer",
                                         "prescale_gradients",
                                         "gradient_predivide_factor",
                                         "train_batch_size",
                                         "train_micro_batch_size_per_gpu",
                                         "gradient_accumulation_steps",
                                         "bf16",
                                         "bfloat16",
                                         "fp16",
                                         "zero_optimization",
                                         "communication_data_type",
                                         "data_types"};
const std::set<std::string> kZeroHarmless = {"stage",
                                             "offload_optimizer",
                                             "offload_param",
                                             "overlap_comm",
                                             "cpu_offload",
                                             "contiguous_gradients",
                                             "allgather_partitions",
                                             "reduce_scatter",
                                             "round_robin_gradients",
                                             "load_from_fp32_weights",
                                             "elastic_checkpoint",
                                             "ignore_unused_parameters",
                                             "gather_16bit_weights_on_model_save",
                                             "stage3_gather_16bit_weights_on_model_save",
                                             "stage3_gather_fp16_weights_on_model_save",
                                             "sub_group_size",
                                             "memory_efficient_linear",
                                             "zero_hpz_partition_size",
                                             "zero_quantized_weights",
                                             "zero_quantized_gradients"};

struct Reader {
  const std::string& origin;
  FrameworkConfig& out;
  Status status;

  bool IsAuto(const json& v) const { return v.is_string() && v.get<std::string>() == "auto"; }
  void Auto(const std::string& key, const std::string& what) {
    out.assumed.push_back({key, "auto",
                           "filled by HF Trainer from TrainingArguments, unknown "
                           "here; " +
                               what});
  }
  void Fail(const std::string& key, const std::string& rule) {
    if (status.ok()) status = Status::Invalid(key, rule).WithContext(origin);
  }
  // A positive integer, "auto" (nullopt, noted) or absent (nullopt).
  std::optional<int> Int(const json& j, const std::string& key, const std::string& path) {
    if (!j.contains(key) || j[key].is_null()) return std::nullopt;
    const json& v = j[key];
    if (IsAuto(v)) {
      Auto(path, "trainsim's default or the command line's flag is used");
      return std::nullopt;
    }
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 1 << 30) {
      Fail(path, "must be an integer >= 1 or \"auto\", got " + v.dump());
      return std::nullopt;
    }
    return static_cast<int>(v.get<long long>());
  }
  std::optional<bool> Bool(const json& j, const std::string& key, const std::string& path) {
    if (!j.is_object() || !j.contains(key) || j[key].is_null()) return std::nullopt;
    const json& v = j[key];
    if (IsAuto(v)) {
      Auto(path, "trainsim's default is used");
      return std::nullopt;
    }
    if (!v.is_boolean()) {
      Fail(path, "must be true, false or \"auto\", got " + v.dump());
      return std::nullopt;
    }
    return v.get<bool>();
  }
  void Ignored(const std::string& key, const json& v, const std::string& why) {
    out.ignored.push_back({key, v.dump(), why});
  }
};

void ReadBatch(Reader& r, const json& j) {
  auto mbs = r.Int(j, "train_micro_batch_size_per_gpu", "train_micro_batch_size_per_gpu");
  auto gas = r.Int(j, "gradient_accumulation_steps", "gradient_accumulation_steps");
  auto tbs = r.Int(j, "train_batch_size", "train_batch_size");
  if (mbs) r.out.settings["micro_batch_size"] = std::to_string(*mbs);
  if (gas) r.out.settings["micro_batch_num"] = std::to_string(*gas);
  if (tbs && !gas) r.out.settings["global_batch_size"] = std::to_string(*tbs);
  if (tbs) {
    r.out.stated_global_batch = *tbs;
    r.out.stated_global_batch_key = "train_batch_size";
  }
}

void ReadPrecision(Reader& r, const json& j) {
  const char* bf_key = j.contains("bf16") ? "bf16" : "bfloat16";  // DeepSpeed accepts both
  const bool has_bf = j.contains(bf_key), has_fp = j.contains("fp16");
  const std::optional<bool> bf =
      has_bf ? r.Bool(j[bf_key], "enabled", "bf16.enabled") : std::optional<bool>(false);
  const std::optional<bool> fp =
      has_fp ? r.Bool(j["fp16"], "enabled", "fp16.enabled") : std::optional<bool>(false);
  const bool bf_on = bf.value_or(false), fp_on = fp.value_or(false);
  if (bf_on && fp_on) return r.Fail("fp16.enabled", "bf16.enabled and fp16.enabled are both true");
  if (bf_on) {
    r.out.settings["dtype"] = "bf16";
  } else if (fp_on) {
    r.out.settings["dtype"] = "fp16";
  } else if (bf.has_value() && fp.has_value()) {
    r.out.settings["dtype"] = "fp32";  // neither enabled (nor "auto"): DeepSpeed trains in fp32
  }
}

// offload_optimizer / offload_param: {"device": "none" | "cpu" | "nvme", ...}.
std::string OffloadDevice(Reader& r, const json& z, const char* key) {
  if (!z.contains(key) || z[key].is_null()) return "none";
  const json& o = z[key];
  if (!o.is_object() || !o.contains("device")) return "none";
  if (!o["device"].is_string()) {
    r.Fail(std::string("zero_optimization.") + key + ".device", "must be none, cpu or nvme");
    return "none";
  }
  const std::string d = o["device"].get<std::string>();
  if (d != "none" && d != "cpu" && d != "nvme")
    r.Fail(std::string("zero_optimization.") + key + ".device",
           "must be none, cpu or nvme, got '" + d + "'");
  return d;
}

// ZeRO++ (deepspeed/runtime/zero/config.py: zero_hpz_partition_size default 1,
// ZeRO-1/2's gradient buckets: zero_optimization.reduce_bucket_size elements (DeepSpeed's default
// 5e8, deepspeed/runtime/zero/config.py DeepSpeedZeroConfig.reduce_bucket_size); the two 16-bit
// buffers are held in the backward (memory) and, under ZeRO-2, mark the engine that reduces in
// every micro-batch (deepspeed/runtime/engine.py allreduce_gradients: "ZeRO stage >= 2
// communicates during non gradient accumulation boundaries as well").
constexpr double kDeepSpeedReduceBucketElems = 5e8;
void ReadReduceBucket(Reader& r, const json& z) {
  const std::string key = "zero_optimization.reduce_bucket_size";
  const json* v = z.contains("reduce_bucket_size") ? &z["reduce_bucket_size"] : nullptr;
  if (v && v->is_number() && v->get<double>() >= 1e3 && v->get<double>() <= 1e11) {
    r.out.settings["deepspeed_reduce_bucket_elems"] = v->dump();
    return;
  }
  if (v && !v->is_null() && !(v->is_string() && v->get<std::string>() == "auto"))
    return r.Fail(key, "must be a number in [1e3, 1e11] or \"auto\", got " + v->dump());
  r.out.settings["deepspeed_reduce_bucket_elems"] = detail::NumberText(kDeepSpeedReduceBucketElems);
  r.out.assumed.push_back(
      {key, detail::NumberText(kDeepSpeedReduceBucketElems),
       v ? "\"auto\": HF Trainer fills hidden_size^2 (transformers integrations/deepspeed.py); "
           "trainsim takes DeepSpeed's default, an upper bound below hidden 22360"
         : "DeepSpeed's default (DeepSpeedZeroConfig.reduce_bucket_size)"});
}

// zero_quantized_weights / zero_quantized_gradients default false; arXiv 2306.10209): hpZ's
// secondary weight partition and the int8 / int4 collectives, which act on stage 3 only.
void ReadZeroPlusPlus(Reader& r, const json& z, int stage) {
  const char* kHpz = "zero_optimization.zero_hpz_partition_size";
  std::optional<int> hpz;
  if (z.contains("zero_hpz_partition_size") && !z["zero_hpz_partition_size"].is_null()) {
    const json& v = z["zero_hpz_partition_size"];
    if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > 1 << 20)
      return r.Fail(kHpz, "must be an integer >= 1, got " + v.dump());
    hpz = static_cast<int>(v.get<long long>());
  }
  auto qw = r.Bool(z, "zero_quantized_weights", "zero_optimization.zero_quantized_weights");
  auto qg = r.Bool(z, "zero_quantized_gradients", "zero_optimization.zero_quantized_gradients");
  const bool any = hpz.value_or(1) > 1 || qw.value_or(false) || qg.value_or(false);
  if (any && stage < 3) {
    for (const char* k :
         {"zero_hpz_partition_size", "zero_quantized_weights", "zero_quantized_gradients"})
      if (z.contains(k))
        r.Ignored(std::string("zero_optimization.") + k, z[k],
                  "ZeRO++ acts on stage 3 only (stage " + std::to_string(stage) + ")");
    return;
  }
  if (hpz) r.out.settings["zero_hpz_size"] = std::to_string(*hpz);
  if (qw) r.out.settings["zero_quant_weights"] = *qw ? "true" : "false";
  if (qg) r.out.settings["zero_quant_grads"] = *qg ? "true" : "false";
  if (qw.value_or(false) || qg.value_or(false))
    r.out.assumed.push_back({"zero_optimization.zero_quantized_weights",
                             std::string(qw.value_or(false) ? "qwZ" : "") +
                                 (qw.value_or(false) && qg.value_or(false) ? "+" : "") +
                                 (qg.value_or(false) ? "qgZ" : ""),
                             "ZeRO++ volumes (int8 weights, int4 gradients); the quantisation "
                             "kernels are not costed"});
}

void ReadZero(Reader& r, const json& j) {
  if (j.contains("zero_optimization") && !j["zero_optimization"].is_object())
    return r.Fail("zero_optimization", "must be an object (its \"stage\", offload, ...), got " +
                                           j["zero_optimization"].dump());
  const json& z = j.contains("zero_optimization") && j["zero_optimization"].is_object()
                      ? j["zero_optimization"]
                      : json::object();
  int stage = 0;  // DeepSpeed's default: ZeRO disabled
  if (z.contains("stage")) {
    if (!z["stage"].is_number_integer() || z["stage"].get<long long>() < 0 ||
        z["stage"].get<long long>() > 3)
      return r.Fail("zero_optimization.stage", "must be 0, 1, 2 or 3, got " + z["stage"].dump());
    stage = static_cast<int>(z["stage"].get<long long>());
  } else {
    r.out.assumed.push_back({"zero_optimization.stage", "0", "DeepSpeed's default (no ZeRO)"});
  }
  r.out.settings["zero_state"] = std::to_string(stage);
  if (stage == 3) {
    const std::string us = std::to_string(static_cast<int>(kDeepSpeedZero3FetchUs));
    r.out.settings["zero3_fetch_us"] = us;
    r.out.assumed.push_back({"zero3_fetch_us", us,
                             "DeepSpeed ZeRO-3's module hooks per gathered weight matrix and pass "
                             "(include/trainsim/execution.h, kDeepSpeedZero3FetchUs)"});
  }
  const std::string opt = OffloadDevice(r, z, "offload_optimizer");
  const bool legacy = r.Bool(z, "cpu_offload", "zero_optimization.cpu_offload").value_or(false);
  r.out.settings["offload_optimizer"] = opt != "none" || legacy ? "true" : "false";
  if (opt == "nvme")
    r.out.assumed.push_back({"offload_optimizer", "nvme",
                             "costed as host-memory offload (NVMe bandwidth not modelled)"});
  // ZeRO-Offload++ (DeepSpeed docs, "offload_optimizer.ratio"): the share of the optimizer
  // states offloaded; the rest steps on the GPU.
  if (opt != "none" && z["offload_optimizer"].contains("ratio")) {
    const json& ratio = z["offload_optimizer"]["ratio"];
    if (!ratio.is_number() || !(ratio.get<double>() > 0 && ratio.get<double>() <= 1))
      return r.Fail("zero_optimization.offload_optimizer.ratio",
                    "must be a number in (0, 1], got " + ratio.dump());
    r.out.settings["optimizer_offload_fraction"] = ratio.dump();
  }
  const std::string param = OffloadDevice(r, z, "offload_param");
  if (param != "none")
    return r.Fail("zero_optimization.offload_param.device",
                  "parameter offload to " + param +
                      " is not represented (trainsim offloads optimizer states only)");
  auto overlap = r.Bool(z, "overlap_comm", "zero_optimization.overlap_comm");
  const bool on = overlap.value_or(stage == 3);
  if (!overlap)
    r.out.assumed.push_back({"zero_optimization.overlap_comm", on ? "true" : "false",
                             "DeepSpeed's default: true for stage 3 only"});
  r.out.settings["overlap_grad_reduce"] = on ? "true" : "false";
  r.out.settings["overlap_param_gather"] = on ? "true" : "false";
  ReadZeroPlusPlus(r, z, stage);
  if (stage == 1 || stage == 2) ReadReduceBucket(r, z);
  for (const auto& [k, v] : z.items())
    if (!kZeroHarmless.count(k) && !(k == "reduce_bucket_size" && (stage == 1 || stage == 2)))
      r.Ignored("zero_optimization." + k, v,
                "not modelled (trainsim overlaps whole collectives at comm_overlap)");
}

// The gradients' dtype and reduce. DeepSpeed's engine reduces in communication_data_type, else
// in the 16-bit training dtype (deepspeed/runtime/engine.py, communication_data_type: fp16, then
// bf16, then fp32), and ZeRO-1/2/3 keep the gradients in the model's 16-bit dtype (the
// gradient accumulation dtype defaults to the model's, get_data_types); ZeRO-1 with bf16 and
// data_types.grad_accum_dtype fp32 runs the BF16 optimizer with fp32 accumulation. Without ZeRO,
// the bf16 / fp16 optimizers accumulate in fp32 (left as read). With "auto" precision the trainer
// file decides (MergeDeepSpeedConfig).
void ReadGradientDtype(Reader& r, const json& j) {
  auto text = [&](const json& o, const char* key, const std::string& path) -> std::string {
    if (!o.is_object() || !o.contains(key) || o[key].is_null()) return "";
    if (!o[key].is_string()) {
      r.Fail(path, "must be fp32, fp16 or bf16, got " + o[key].dump());
      return "";
    }
    std::string v = o[key].get<std::string>();
    if (v == "float32") v = "fp32";
    if (v == "float16") v = "fp16";
    if (v == "bfloat16") v = "bf16";
    if (v != "fp32" && v != "fp16" && v != "bf16")
      r.Fail(path, "must be fp32, fp16 or bf16, got '" + v + "'");
    return v;
  };
  const std::string comm = text(j, "communication_data_type", "communication_data_type");
  const std::string accum = j.contains("data_types") ? text(j["data_types"], "grad_accum_dtype",
                                                            "data_types.grad_accum_dtype")
                                                     : "";
  const int stage = std::stoi(r.out.settings["zero_state"]);
  const auto dt = r.out.settings.find("dtype");
  const bool half = dt != r.out.settings.end() && (dt->second == "bf16" || dt->second == "fp16");
  if (!comm.empty()) {
    r.out.settings["use_fp32_accum_grad"] = comm == "fp32" ? "true" : "false";
  } else if (stage == 1 && half && dt->second == "bf16" && accum == "fp32") {
    r.out.settings["use_fp32_accum_grad"] = "true";  // the BF16 optimizer
  } else if (stage >= 1 && half) {
    r.out.settings["use_fp32_accum_grad"] = "false";
  }
}

}  // namespace

Result<FrameworkConfig> ParseDeepSpeedConfig(std::string_view text, std::string_view origin_sv) {
  const std::string origin(origin_sv);
  auto parsed = detail::ParseJsonText(text, origin);
  if (!parsed.ok()) return parsed.status();
  const json& j = parsed.value();
  if (!j.is_object())
    return Status::Invalid("", "a DeepSpeed config must be a JSON object").WithContext(origin);
  FrameworkConfig out;
  Reader r{origin, out, Status::Ok()};
  ReadBatch(r, j);
  ReadPrecision(r, j);
  ReadZero(r, j);
  if (r.status.ok()) ReadGradientDtype(r, j);
  if (!r.status.ok()) return r.status;
  for (const auto& [k, v] : j.items())
    if (!kHarmless.count(k)) r.Ignored(k, v, "not read by trainsim");
  return out;
}

Status CheckFrameworkBatch(const FrameworkConfig& c, const Strategy& s) {
  if (c.stated_global_batch <= 0 || s.dp() < 1) return Status::Ok();
  const long long got = 1LL * s.mbs * s.num_micro_batches() * s.dp();
  if (got == c.stated_global_batch) return Status::Ok();
  return Status::Invalid(c.stated_global_batch_key,
                         "must equal micro-batch x gradient accumulation x dp (" +
                             std::to_string(s.mbs) + " x " + std::to_string(s.num_micro_batches()) +
                             " x " + std::to_string(s.dp()) + " = " + std::to_string(got) +
                             "), got " + std::to_string(c.stated_global_batch));
}

}  // namespace trainsim
