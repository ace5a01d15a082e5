// Filling a validation case's strategy from the case and its framework profile.
#include "validate/case_strategy.h"

#include "rl/rl.h"
#include "spec/field_text.h"
#include "spec/json_fields.h"
#include "trainsim/limits.h"
#include "validate/notes_match.h"

namespace trainsim::detail {
namespace {

using nlohmann::json;

bool Given(const json& o, const char* key) {
  return o.is_object() && o.contains(key) && !o[key].is_null();
}

std::string B(bool b) {
  return b ? "true" : "false";
}

// Appends the assumptions of one case: trainsim's own defaults and the profile's.
struct Recorder {
  std::vector<Assumption>& out;
  const std::string& profile_why;
  void Default(std::string field, std::string value, std::string why) {
    out.push_back({std::move(field), std::move(value), std::move(why)});
  }
  void Profile(std::string field, std::string value, const std::string& note = "") {
    out.push_back({std::move(field), std::move(value),
                   note.empty() ? profile_why : profile_why + "; " + note});
  }
};

Status ReadTop(const json& j, const std::string& where, const Framework& fw, Strategy& s,
               Recorder& rec) {
  FieldReader top(j, where);
  top.Int("gpus", s.world_size);
  top.Int("seq", s.seq);
  s.mbs = fw.mbs;
  top.Int("mbs", s.mbs);
  top.Int("gbs", s.gbs);
  std::string precision = "bf16";
  top.String("precision", precision);
  if (!top.status().ok()) return top.status();
  auto dt = ParseDType(precision);
  if (!dt.ok()) {  // ParseDType's message starts "dtype: "; the case's key is "precision"
    const std::string msg = dt.status().message();
    return Status::Invalid(where + ": precision: " + msg.substr(msg.find(": ") + 2));
  }
  s.dtype = dt.value();
  if (!Given(j, "gpus"))
    rec.Default("gpus", std::to_string(s.world_size), "not in the case: one 8-GPU node");
  if (!Given(j, "seq"))
    rec.Default("seq", std::to_string(s.seq), "not in the case: trainsim's default length");
  if (!Given(j, "mbs") && s.mbs > 0) rec.Profile("mbs", std::to_string(s.mbs));
  if (!Given(j, "precision"))
    rec.Default("precision", precision, "not in the case: bf16 mixed precision, the recipes'");
  return Status::Ok();
}

// Sizes the case leaves null are 1 (no parallelism along that axis); listed where they matter.
void RecordNullSizes(const json& par, const ValidationCase& c, Recorder& rec) {
  const Strategy& s = c.strategy;
  const char* why = "not in the case: no parallelism along this axis";
  if (!Given(par, "tp")) rec.Default("parallel.tp", "1", why);
  if (!Given(par, "pp")) rec.Default("parallel.pp", "1", why);
  if (!Given(par, "vpp") && s.pp > 1) rec.Default("parallel.vpp", "1", why);
  if (!Given(par, "ep") && c.model.is_moe()) rec.Default("parallel.ep", "1", why);
  if (!Given(par, "etp") && c.model.is_moe()) rec.Profile("parallel.etp", std::to_string(s.etp));
  if (!Given(par, "sp") && s.tp > 1) rec.Profile("parallel.sp", B(s.sp));
}

Status ReadParallel(const json& j, const std::string& where, const Framework& fw, ValidationCase& c,
                    Recorder& rec) {
  if (!j.contains("parallel") || !j["parallel"].is_object())
    return Status::Invalid(where + ": parallel: missing");
  Strategy& s = c.strategy;
  const json& par = j["parallel"];
  FieldReader p(par, where + ": parallel");
  p.Int("tp", s.tp);
  p.Int("pp", s.pp);
  p.Int("vpp", s.vpp);
  p.Int("cp", s.cp);
  p.Int("ep", s.ep);
  s.etp = 0;
  p.Int("etp", s.etp);
  int dp = 0;
  p.Int("dp", dp);
  p.Bool("fsdp", s.fsdp);
  int zero = -1;
  p.Int("zero", zero, 0);
  // fsdp is read above: a Megatron-backend case takes the stack's Megatron default.
  s.sp = !s.fsdp && fw.sp_megatron >= 0 ? fw.sp_megatron == 1 : fw.sp;
  p.Bool("sp", s.sp);
  if (!p.status().ok()) return p.status();
  // The input limits (trainsim/limits.h) before any product of sizes is formed: tp*pp*cp of a
  // case once wrapped to 0 and divided by zero, losing every case of the file (issue 11).
  for (const auto& [key, v] :
       {std::pair{"tp", s.tp}, std::pair{"pp", s.pp}, std::pair{"vpp", s.vpp},
        std::pair{"cp", s.cp}, std::pair{"ep", s.ep}, std::pair{"etp", s.etp}, std::pair{"dp", dp}})
    if (v > limits::kMaxParallelDegree)
      return Status::Invalid(where + ": parallel." + key +
                             ": must be <= " + std::to_string(limits::kMaxParallelDegree));
  if (s.world_size > limits::kMaxWorldSize)
    return Status::Invalid(where + ": gpus: must be <= " + std::to_string(limits::kMaxWorldSize));
  if (1LL * s.tp * s.pp * s.cp > s.world_size)  // Strategy::dp() divides in int
    return Status::Invalid(where + ": parallel: tp*pp*cp must divide gpus");
  if (dp > 0 && 1LL * dp * s.tp * s.pp * s.cp != s.world_size)
    return Status::Invalid(where + ": parallel.dp: dp*tp*pp*cp must equal gpus");
  if (s.etp == 0) s.etp = fw.etp_one && c.model.is_moe() ? 1 : s.tp;
  s.zero = zero >= 0 ? zero : (s.fsdp ? 3 : fw.zero);  // fsdp with zero < 2: 3 (normalised)
  RecordNullSizes(par, c, rec);
  // torchtitan with PP (parallelize fsdp: reshard_after_forward False when pp is on; the
  // pipelining stage sets requires_gradient_sync only for the last backward): the stage's
  // parameters stay gathered and fp32 gradients accumulate unsharded until the last
  // micro-batch, then one reduce-scatter: ZeRO-1's memory and traffic.
  if (fw.pp_fsdp_unsharded && s.pp > 1 && s.dp() > 1 && (s.fsdp || s.zero >= 2)) {
    s.fsdp = false;
    s.zero = 1;
    rec.Profile("parallel.zero", "1",
                "with PP, FSDP keeps parameters gathered and gradients unsharded until the "
                "last micro-batch (costed as ZeRO-1)");
    return Status::Ok();
  }
  if (zero < 0 && s.dp() > 1) {
    if (s.fsdp)
      rec.Default("parallel.zero", "3", "not in the case: FSDP shards parameters (ZeRO-3)");
    else
      rec.Profile("parallel.zero", std::to_string(s.zero));
  }
  return Status::Ok();
}

// A profile `mbs` of 0 (MaxText: gradient_accumulation_steps 1): the micro-batch is the whole
// local batch, gbs / dp sequences in one micro-batch; without gbs (or an uneven split) 1.
void OneMicroBatch(Strategy& s, Recorder& rec) {
  const int dp = s.dp();
  if (s.gbs > 0 && dp > 0 && s.gbs % dp == 0) {
    s.mbs = s.gbs / dp;
    rec.Profile("mbs", std::to_string(s.mbs),
                "one micro-batch: gbs / dp, no gradient accumulation");
    return;
  }
  s.mbs = 1;
  rec.Profile("mbs", "1", "gbs is not a multiple of dp: micro-batches of 1");
}

// The settings a case never states come from the profile.
void ApplyProfile(const Framework& fw, const HardwareSpec& hw, const std::string& notes,
                  Strategy& s, Recorder& rec) {
  const bool dp = s.dp() > 1;
  s.overlap_grad_reduce = fw.overlap_grad;
  s.overlap_param_gather = fw.overlap_param;
  const bool tp_overlap_fits = ScaleUpAllowsTpOverlap(hw, s.tp);
  s.tp_comm_overlap = fw.tp_overlap && tp_overlap_fits;
  s.cp_a2a = fw.cp_a2a;
  s.fused_cross_entropy = fw.fused_ce;
  s.uneven_pipeline = fw.uneven;  // the split itself is reported by Simulate (pipeline_split)
  s.ep_comm_overlap = fw.ep_overlap;
  s.moe_dedup_dispatch = fw.dedup;
  s.moe_grouped_gemm = fw.grouped_gemm;
  s.moe_permute_fusion = fw.permute_fusion;
  s.moe_router_bytes = fw.router_bytes;
  s.moe_router_padding = fw.router_padding;
  s.attention_kernel = ProfileAttention(fw, hw);
  const bool cudnn = s.attention_kernel != fw.attention;  // the GPU's SDPA / Blackwell rule
  const bool cudnn_sdpa = cudnn && fw.attention_sdpa && SdpaPrefersCudnn(hw);
  s.flash_attention = fw.flash_attention;
  if (dp) rec.Profile("overlap_grad_reduce", B(s.overlap_grad_reduce));
  if (dp && s.zero >= 1) rec.Profile("overlap_param_gather", B(s.overlap_param_gather));
  if (s.tp > 1)
    rec.Profile("tp_comm_overlap", B(s.tp_comm_overlap),
                fw.tp_overlap && !tp_overlap_fits
                    ? "off: the TP group is not inside an NVLink-class scale-up domain"
                    : "");
  if (s.cp > 1) rec.Profile("cp_comm_type", s.cp_a2a ? "a2a" : "p2p");
  if (s.ep > 1) rec.Profile("ep_comm_overlap", NumberText(s.ep_comm_overlap));
  if (s.ep > 1) rec.Profile("moe_dedup_dispatch", B(s.moe_dedup_dispatch));
  if (s.flash_attention)
    rec.Profile("attention_kernel", std::string(AttentionImplName(s.attention_kernel)),
                cudnn_sdpa ? "torch SDPA, which prefers cuDNN's fused attention on this GPU "
                             "(PyTorch 2.11 wheels and later)"
                : cudnn    ? "FlashAttention-2 does not run on Blackwell: SDPA's cuDNN "
                             "fused attention"
                           : "");
  else
    rec.Profile("use_flash_sdp", "false", "unfused core attention: the scores are materialised");
  // A profile's pipeline schedule (nanotron's default all-forward-all-backward engine) applies
  // to a plain pipeline; an interleaved one (vpp > 1) keeps Megatron's interleaved 1F1B.
  if (s.pp > 1 && s.vpp <= 1 && !fw.schedule.empty())
    if (const Result<PipelineSchedule> sched = ParseSchedule(fw.schedule); sched.ok()) {
      s.schedule = sched.value();
      rec.Profile("schedule", fw.schedule);
    }
  rec.Profile("fused_cross_entropy", B(s.fused_cross_entropy));
  // FSDP mixed precision PURE reduces gradients in bf16; DEFAULT in fp32 (Composer).
  // Megatron-LM accumulates and reduces gradients in fp32 for bf16 only
  // (arguments.py: bf16 implies --accumulate-allreduce-grads-in-fp32); fp16 keeps fp16 grads.
  // Megatron-FSDP: its user guide (Megatron-LM docs/discussions/megatron-fsdp-user-guide)
  // recommends --grad-reduce-in-bf16 with --use-megatron-fsdp (profile fsdp_bf16_grads).
  const bool pure = notes.find("PURE") != std::string::npos;
  s.main_grad_fp32 = s.fsdp ? !(pure || fw.fsdp_bf16_grads) : s.dtype != DType::kFp16;
  rec.Default("use_fp32_accum_grad", B(s.main_grad_fp32),
              !s.fsdp ? "Megatron-LM's default: fp32 main gradients with bf16, fp16 with fp16"
              : pure  ? "FSDP mixed precision PURE (case notes): gradients reduced in bf16"
              : fw.fsdp_bf16_grads
                  ? "Megatron-FSDP as its user guide recommends it: --grad-reduce-in-bf16"
                  : "FSDP mixed precision DEFAULT: gradients reduced in fp32");
}

Status ReadRecompute(const json& j, const std::string& where, const Framework& fw,
                     ValidationCase& c, Recorder& rec) {
  std::string rc;
  if (j.contains("recompute") && j["recompute"].is_string()) rc = j["recompute"].get<std::string>();
  const bool given = !rc.empty();
  if (!given)
    rc = !c.strategy.fsdp && !fw.recompute_megatron.empty() ? fw.recompute_megatron : fw.recompute;
  if (rc == "auto") {
    c.recompute_auto = true;  // the policy is chosen, and recorded, when the case is scored
  } else if (auto policy = ParseRecompute(rc); policy.ok()) {
    c.strategy.recompute = policy.value();
    if (!given) rec.Profile("recompute", rc);
    // The stack's own selective policy (torchtitan: per-op SAC, its llama3 configs'
    // selective_ac_option "op"), not Megatron-LM's core_attn.
    if (c.strategy.recompute == Recompute::kSelective && !fw.selective_modules.empty())
      if (auto mods = ParseRecomputeModules(fw.selective_modules); mods.ok()) {
        c.strategy.recompute_modules = mods.value();
        rec.Profile("recompute_modules", fw.selective_modules);
      }
  } else {
    return Status::Invalid(where + ": recompute: must be none, selective, full or null");
  }
  return Status::Ok();
}

// The number before `word` in the notes ("200 virtual KV tokens"), or 0.
int NumberBefore(const std::string& notes, const char* word) {
  std::vector<std::string> mt;
  return MatchNotes(notes, std::string("%d ") + word, mt) ? std::stoi(mt[0]) : 0;
}

// The `lora` object: rank, alpha, targets (a list, "all-linear" or null), quant_bits.
Status ReadLora(const json& lora, const std::string& where, Strategy& s, Recorder& rec) {
  if (!lora.is_object()) return Status::Ok();
  if (Given(lora, "rank")) s.lora_rank = lora["rank"].get<int>();
  if (Given(lora, "alpha")) s.lora_alpha = lora["alpha"].get<double>();
  if (Given(lora, "quant_bits") && lora["quant_bits"].get<int>() == 4 &&
      s.method == FtMethod::kLora)
    s.method = FtMethod::kQlora;
  if (!Given(lora, "targets")) {
    rec.Default("lora.targets", "all-linear", "not in the case: LLaMA-Factory's lora_target all");
    return Status::Ok();
  }
  std::string list;
  if (lora["targets"].is_string()) list = lora["targets"].get<std::string>();
  for (const json& name : lora["targets"].is_array() ? lora["targets"] : json::array()) {
    if (!name.is_string()) continue;
    if (!list.empty()) list += ',';
    list += name.get<std::string>();
  }
  auto mask = ParseLoraTargets(list);
  if (!mask.ok()) return Status::Invalid(where + ": lora.targets: " + mask.status().message());
  s.lora_targets = mask.value();
  return Status::Ok();
}

// stage, method, lora and the method's settings the notes state (virtual tokens, IA3 targets,
// trained embeddings: "LoRA (emb)", pure bf16 training).
Status ReadFinetune(const json& j, const std::string& where, const std::string& notes, Strategy& s,
                    Recorder& rec) {
  if (Given(j, "stage")) {
    auto st = ParseTrainStage(j["stage"].get<std::string>());
    if (!st.ok()) return Status::Invalid(where + ": " + st.status().message());
    s.stage = st.value();
  }
  if (Given(j, "method")) {
    auto m = ParseFtMethod(j["method"].get<std::string>());
    if (!m.ok()) return Status::Invalid(where + ": " + m.status().message());
    s.method = m.value();
  }
  if (s.method == FtMethod::kIa3)  // PEFT's llama mapping: k_proj, v_proj, down_proj
    s.lora_targets = notes.find("all linear") != std::string::npos ? kLoraAllLinear
                                                                   : kLoraK | kLoraV | kLoraDown;
  // PEFT's llama target mapping for BOFT: q_proj, v_proj (the 802,816 trainable parameters
  // the method-comparison run prints for Llama-3.2-3B at block size 4).
  if (s.method == FtMethod::kBoft) s.lora_targets = kLoraQ | kLoraV;
  if (j.contains("lora"))
    if (Status st = ReadLora(j["lora"], where, s, rec); !st.ok()) return st;
  if (const int nv = NumberBefore(notes, "virtual"); nv > 0) s.virtual_tokens = nv;
  // seq is the mean of batches padded to their longest sample: "... is that MEAN (max 768)".
  std::vector<std::string> mt;
  if (MatchNotes(notes, "MEAN (max %d)", mt)) s.max_seq = std::stoi(mt[0]);
  s.train_embeddings = notes.find("LoRA (emb)") != std::string::npos;
  // torchtune's fsdp_cpu_offload, verl's Megatron OFFLOAD_FRACTION 1: optimizer states and
  // the step on the host.
  if (notes.find("fsdp_cpu_offload=True") != std::string::npos ||
      notes.find("optimizer CPU offload") != std::string::npos) {
    s.offload_optimizer = true;
    rec.Default("offload_optimizer", "true", "case notes: optimizer states offloaded to the CPU");
  }
  return Status::Ok();
}

// lora_dropout of a LoRA-family method: the notes' "dropout 0.05" (the Qwen README rows quote
// finetune.py's defaults), else the framework profile's script default, else PEFT's 0.0.
void ReadLoraDropout(const Framework& fw, const std::string& notes, Strategy& s, Recorder& rec) {
  s.lora_dropout = 0;
  if (!HasLoraDropout(s.method)) return;
  std::vector<std::string> mt;
  if (MatchNotes(notes, "dropout %f", mt)) {
    s.lora_dropout = std::stod(mt[0]);
    rec.Default("lora_dropout", mt[0], "case notes");
  } else if (fw.lora_dropout > 0) {
    s.lora_dropout = fw.lora_dropout;
    rec.Profile("lora_dropout", NumberText(fw.lora_dropout));
  } else {
    rec.Default("lora_dropout", "0", "not in the case: PEFT LoraConfig's default");
  }
}

// The `rl` object's pools: with a separate rollout, world_size is the actor (training) GPUs
// and rollout_gpus the generation GPUs; an unstated split is half and half.
Status ReadRlPool(const json& rl, const std::string& where, Strategy& s, Recorder& rec) {
  if (!rl.is_object() || !Given(rl, "rollout")) return Status::Ok();
  const std::string mode = rl["rollout"].is_string() ? rl["rollout"].get<std::string>() : "";
  if (mode != "colocated" && mode != "separate")
    return Status::Invalid(where + ": rl.rollout: must be colocated or separate");
  s.rollout_separate = mode == "separate";
  if (!s.rollout_separate) return Status::Ok();
  FieldReader r(rl, where + ": rl");
  int actor = 0, rollout = 0;
  r.Int("actor_gpus", actor, 0);
  r.Int("rollout_gpus", rollout, 0);
  if (!r.status().ok()) return r.status();
  const int total = s.world_size;
  if (actor <= 0) {
    actor = rollout > 0 && rollout < total ? total - rollout : total / 2;
    rec.Default("rl.actor_gpus", std::to_string(actor),
                "not in the case: the GPUs not generating train (half when neither is stated)");
  }
  if (rollout <= 0) rollout = total - actor;
  if (actor >= total || rollout < 1)
    return Status::Invalid(where + ": rl.actor_gpus: must leave GPUs for the rollout");
  s.world_size = actor;
  s.rollout_gpus = rollout;
  return Status::Ok();
}

// The `rl` object: group, prompts per step and per update, lengths (a mean from the mean
// response or the mean sequence), the generation engines' layout, the reference model.
Status ReadRl(const json& j, const std::string& where, const Framework& fw,
              const std::string& notes, Strategy& s, Recorder& rec) {
  const json& rl = j["rl"];
  FieldReader r(rl, where + ": rl");
  int group = 0, prompts = 0, train_samples = 0, prompt = 0, mean_resp = 0, mean_seq = 0;
  int max_resp = 0, max_seq = 0;
  r.Int("group_size", group, 1);
  r.Int("num_prompts_per_step", prompts, 1);
  r.Int("train_samples_per_step", train_samples, 1);
  r.Int("prompt_len", prompt, 1);
  r.Int("mean_response_len", mean_resp, 1);
  r.Int("mean_seq_len", mean_seq, 1);
  r.Int("max_response_len", max_resp, 1);
  r.Int("max_seq_len", max_seq, 1);
  if (!r.status().ok()) return r.status();
  if (group > 0) s.group_size = group;
  const int g = std::max(1, group);
  // The case's gbs counts generated samples (NeMo RL G-GBS); trainsim's counts prompts.
  s.gbs = prompts > 0 ? prompts : (s.gbs > 0 ? s.gbs / g : 0);
  if (train_samples > 0 && train_samples % g == 0) s.rl_minibatch = train_samples / g;
  if (!Given(j, "seq") && max_seq > 0) s.seq = max_seq;
  if (prompt > 0) s.prompt_len = prompt;
  const int prompt_mean = prompt > 0 ? prompt : rl::kDefaultPromptTokens;
  if (mean_resp > 0)
    s.response_len = mean_resp;
  else if (mean_seq > prompt_mean)
    s.response_len = mean_seq - prompt_mean;
  if (max_resp > 0) s.max_response_len = max_resp;
  if (Given(rl, "kl_reference") && rl["kl_reference"].is_boolean())
    s.kl_reference = rl["kl_reference"].get<bool>() ? 1 : 0;
  const json gp = Given(rl, "generation_parallel") ? rl["generation_parallel"] : json::object();
  FieldReader gr(gp, where + ": rl.generation_parallel");
  gr.Int("tp", s.rollout_tp, 1);
  gr.Int("pp", s.rollout_pp, 1);
  if (!gr.status().ok()) return gr.status();
  if (!Given(gp, "tp") && fw.rollout_tp > 0) {
    s.rollout_tp = fw.rollout_tp;
    rec.Profile("rl.generation_parallel.tp", std::to_string(s.rollout_tp));
  }
  // A separate pool smaller than the stated expert-parallel group: EP over the training GPUs.
  const int ep_room = s.world_size / std::max(1, s.pp * s.expert_tp());
  if (s.ep > ep_room && ep_room >= 1) {
    rec.Default("parallel.ep", std::to_string(ep_room),
                "the case's ep " + std::to_string(s.ep) + " exceeds the " +
                    std::to_string(s.world_size) + " training GPUs of the separate pool");
    s.ep = ep_room;
  }
  // A published old_log_prob phase of 0 s: the trainer ran no old-policy forward, the ratio
  // used the engine's log-probs (verl use_rollout_log_probs).
  if (s.rollout_logprobs < 0 && notes.find("old_log_prob=0;") != std::string::npos) {
    s.rollout_logprobs = 1;
    rec.Default("rollout_logprobs", "true", "case notes: the old_log_prob phase took 0 s");
  }
  if (!s.fsdp && fw.rollout_eager_megatron) {
    s.rollout_eager = true;
    rec.Profile("rollout_eager", "true");
  }
  if (s.rollout_separate && fw.separate_rollout_logprobs && s.rollout_logprobs < 0) {
    s.rollout_logprobs = 1;
    rec.Profile("rollout_logprobs", "true");
  }
  if (s.rollout_separate)
    rec.Default("async_rollout", "true",
                "the sources' separate pools run one step off-policy (NeMo RL async GRPO, verl "
                "one_step_off / fully_async)");
  // "8-step off-policy async GRPO": NeMo RL's max_trajectory_age_steps as the notes state it.
  std::vector<std::string> age;
  if (s.rollout_separate && MatchNotes(notes, "%d-step off-policy", age) && std::stoi(age[0]) > 1) {
    s.rollout_max_age = std::stoi(age[0]);
    rec.Default("rollout_max_age", age[0],
                "case notes: the rollout runs up to this many steps ahead of training");
  }
  if (s.rollout_separate && s.rollout_max_age <= 1 && fw.separate_rollout_max_age > 1) {
    s.rollout_max_age = fw.separate_rollout_max_age;
    rec.Profile("rollout_max_age", std::to_string(s.rollout_max_age));
  }
  return Status::Ok();
}

}  // namespace

Status FillCaseStrategy(const json& j, const std::string& where, const ProfilePick& pick,
                        const std::string& notes, ValidationCase& c) {
  const Framework& fw = *pick.fw;
  Recorder rec{c.assumed, pick.why};
  Strategy& s = c.strategy;
  if (Status st = ReadTop(j, where, fw, s, rec); !st.ok()) return st;
  if (Given(j, "rl"))  // separate rollout pools: the training layout spans the actor GPUs
    if (Status st = ReadRlPool(j["rl"], where, s, rec); !st.ok()) return st;
  if (Status st = ReadParallel(j, where, fw, c, rec); !st.ok()) return st;
  if (s.mbs == 0 && !Given(j, "mbs")) OneMicroBatch(s, rec);
  ApplyProfile(fw, c.hw, notes, s, rec);
  if (c.model.is_moe()) {  // the profile's MoE expert and router settings
    rec.Profile("moe_grouped_gemm", B(s.moe_grouped_gemm));
    rec.Profile("moe_permute_fusion", B(s.moe_permute_fusion));
    rec.Profile("moe_router_dtype", s.moe_router_bytes == 8   ? "fp64"
                                    : s.moe_router_bytes == 4 ? "fp32"
                                                              : "none");
    if (s.dtype == DType::kFp8 || s.dtype == DType::kMxfp8 || s.dtype == DType::kFp4)
      rec.Profile("moe_router_padding", B(s.moe_router_padding));
  }
  if (Status st = ReadRecompute(j, where, fw, c, rec); !st.ok()) return st;
  if (Status st = ReadFinetune(j, where, notes, s, rec); !st.ok()) return st;
  ReadLoraDropout(fw, notes, s, rec);
  if (Given(j, "rl") && IsRlStage(s.stage))
    if (Status st = ReadRl(j, where, fw, notes, s, rec); !st.ok()) return st;
  // Models loaded in bf16 and trained without autocast keep bf16 optimizer states and
  // gradients, with no fp32 master copy (the PEFT harness: "no autocast"; torchtune: bf16).
  // pure_bf16_without_zero: the model code casts itself to bf16 and the script trains it under
  // autocast with no fp32 copy unless DeepSpeed ZeRO keeps fp32 master partitions (Qwen1).
  const bool pure = fw.pure_bf16 || (fw.pure_bf16_without_zero && s.zero == 0 && !s.fsdp);
  s.master_weights = !pure;
  if (pure) rec.Profile("master_weights", "false");
  s = NormaliseStrategy(s);  // vpp > 1: interleaved; fsdp: zero >= 2; the batch both ways
  return Status::Ok();
}

void ReadLoopOptions(const std::string& notes, ValidationCase& c) {
  Execution& e = c.strategy.exec;
  auto has = [&](const char* text) { return notes.find(text) != std::string::npos; };
  if (has("optimizer_in_bwd=True") || has("fused into backward")) {
    e.optimizer_in_backward = true;
    c.assumed.push_back({"optimizer_in_backward", "true",
                         "case notes: the optimizer step runs in backward (optimizer_in_bwd)"});
  }
  if (has("fsdp_cpu_offload=True") && c.strategy.zero >= 3) {
    e.offload_params = true;
    c.assumed.push_back({"offload_params", "true",
                         "case notes: fsdp_cpu_offload (FSDP CPU offload: parameter shards, "
                         "gradients and optimizer states in host memory)"});
  }
  if (has("activation offloading")) {
    e.offload_activations = true;
    c.assumed.push_back(
        {"offload_activations", "true", "case notes: activation offloading to host memory"});
  }
  // torchtune's optimisation-flag rows before "+ torch.compile": the modules run eagerly.
  if (has("cumulative optimisations") && !has("torch.compile")) {
    e.eager_modules = true;
    e.host_issue_us_per_kernel = kEagerHostIssueUs;
    c.assumed.push_back({"eager_modules", "true",
                         "case notes list the row's optimisations; torch.compile is not among "
                         "them: eager RMSNorm, rotary and SiLU chains"});
    // Replaces the profile's entry (listed when the profile was applied).
    std::erase_if(c.assumed,
                  [](const Assumption& a) { return a.field == "host_issue_us_per_kernel"; });
    c.assumed.push_back({"host_issue_us_per_kernel", "81",
                         "eager PyTorch (measured, data/frameworks.json \"about\")"});
  }
  if (c.strategy.fused_cross_entropy && has("cumulative optimisations") &&
      !has("chunked cross-entropy")) {
    c.strategy.fused_cross_entropy = false;
    c.assumed.push_back({"fused_cross_entropy", "false",
                         "case notes list the row's optimisations; chunked cross-entropy is not "
                         "among them: full logits upcast to fp32"});
  }
}

std::string RecomputeText(const Strategy& s) {
  std::string out(RecomputeName(s.recompute));
  if (s.recompute == Recompute::kSelective) {
    out += ' ';
    out += RecomputeModulesName(s.recompute_modules);
  }
  if (s.recompute == Recompute::kFull && s.recompute_layers > 0) {
    out += ' ';
    out += std::to_string(s.recompute_layers);
    out += " layers per stage";
  }
  return out;
}

}  // namespace trainsim::detail
