// Randomized robustness test of every user-input parser and of Simulate() on what they accept.
// Valid seed documents are mutated (bytes flipped, truncated, random bytes inserted, numbers
// swapped for huge / negative / fractional / NaN-like values, keys deleted, types swapped) with
// a fixed seed; every result must be an error Status with a non-empty message or a value that
// passes its own validation, and every simulated report must have a finite, positive step time.
// The library must never crash, hang or throw on any of them.
//
// Set TRAINSIM_FUZZ_TRACE=path to write each input to `path` before it is parsed (to find the
// input that crashes the process); TRAINSIM_FUZZ_SCALE=k multiplies the input counts.
#include <gtest/gtest.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "trainsim/formats.h"
#include "trainsim/hardware_figures.h"
#include "trainsim/schema.h"
#include "trainsim/trainsim.h"
#include "trainsim/validate.h"

namespace trainsim {
namespace {

using nlohmann::json;
using Rng = std::mt19937_64;

// ---------------------------------------------------------------------------------------------
// Seeds: small valid documents of every accepted format.

const std::vector<std::string>& ModelSeeds() {
  static const std::vector<std::string> seeds = {
      // HF llama
      R"({"model_type":"llama","hidden_act":"silu","hidden_size":1024,"intermediate_size":2816,"num_attention_heads":16,"num_hidden_layers":8,"num_key_value_heads":4,"tie_word_embeddings":false,"vocab_size":32000})",
      // HF qwen2 (qkv bias)
      R"({"model_type":"qwen2","hidden_size":896,"intermediate_size":4864,"num_attention_heads":14,"num_hidden_layers":24,"num_key_value_heads":2,"tie_word_embeddings":true,"vocab_size":151936})",
      // HF qwen3 (qk norm, explicit head_dim)
      R"({"model_type":"qwen3","head_dim":128,"hidden_size":2048,"intermediate_size":6144,"num_attention_heads":16,"num_hidden_layers":28,"num_key_value_heads":8,"vocab_size":151936})",
      // HF mixtral
      R"({"model_type":"mixtral","hidden_size":1024,"intermediate_size":3584,"num_attention_heads":16,"num_experts_per_tok":2,"num_hidden_layers":8,"num_key_value_heads":8,"num_local_experts":8,"vocab_size":32000})",
      // HF qwen3_moe
      R"({"model_type":"qwen3_moe","decoder_sparse_step":1,"head_dim":128,"hidden_size":2048,"intermediate_size":6144,"mlp_only_layers":[],"moe_intermediate_size":768,"num_attention_heads":32,"num_experts":128,"num_experts_per_tok":8,"num_hidden_layers":8,"num_key_value_heads":4,"vocab_size":151936})",
      // HF deepseek_v3 (MLA, shared expert, dense first layers, MTP)
      R"({"model_type":"deepseek_v3","first_k_dense_replace":1,"hidden_size":2048,"intermediate_size":10944,"kv_lora_rank":512,"moe_intermediate_size":1408,"moe_layer_freq":1,"n_routed_experts":64,"n_shared_experts":2,"num_attention_heads":16,"num_experts_per_tok":6,"num_hidden_layers":8,"num_key_value_heads":16,"num_nextn_predict_layers":1,"q_lora_rank":1536,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128,"vocab_size":102400})",
      // HF gpt2
      R"({"model_type":"gpt2","n_embd":768,"n_head":12,"n_layer":12,"n_positions":1024,"vocab_size":50257})",
      // validation-case model object
      R"({"name":"GPT","hidden_size":2304,"num_hidden_layers":24,"num_attention_heads":24,"num_key_value_heads":null,"head_dim":96,"intermediate_size":9216,"vocab_size":51200,"hidden_act":"gelu","tie_word_embeddings":true,"moe":null,"mla":null,"mtp_layers":0})",
      R"({"name":"MoE","hidden_size":2048,"num_hidden_layers":8,"num_attention_heads":16,"num_key_value_heads":null,"head_dim":null,"intermediate_size":8192,"vocab_size":102400,"hidden_act":"silu","tie_word_embeddings":false,"moe":{"num_experts":64,"top_k":6,"moe_intermediate_size":1408,"shared_expert_intermediate_size":2816,"first_k_dense":1},"mla":{"q_lora_rank":null,"kv_lora_rank":512,"qk_nope_head_dim":128,"qk_rope_head_dim":64,"v_head_dim":128},"mtp_layers":1})",
      // SimuMax model JSON
      R"({"model_type":"dense","model_name":"x","hidden_size":4096,"head_num":32,"kv_head_num":8,"head_size":128,"intermediate_size":14336,"layer_num":32,"vocab_size":128256,"use_swiglu":true})",
      R"({"model_type":"moe","model_name":"m","hidden_size":2048,"head_num":16,"kv_head_num":16,"head_size":128,"intermediate_size":8192,"layer_num":8,"vocab_size":32000,"use_swiglu":true,"expert_num":16,"topk":2,"moe_ffn_hidden_size":1024,"dense_layers":1})",
      R"({"hidden_size":1024,"head_num":8,"kv_head_num":8,"head_size":128,"intermediate_size":4096,"layer_num":4,"expert_num":8,"topk":2,"vocab_size":32000,"use_swiglu":true,"attention_type":"mla","q_lora_rank":256,"kv_lora_rank":128,"qk_head_dim":64,"qk_pos_emb_head_dim":32,"v_head_dim":64})",
  };
  return seeds;
}

const std::vector<std::string>& HardwareSeeds() {
  static const std::vector<std::string> seeds = {
      R"({"id":"h","name":"H","peak_tflops":{"fp32":66.9,"fp16":989.4,"bf16":989.4,"fp8":1978.9,"fp4":0},"hbm_gib":80,"hbm_tbps":3.35,"sm_count":132,"scaleup_domain":8,"scaleup_gbps_per_dir":450,"scaleup_latency_us":2.5,"nic_gbps_per_gpu":400,"nic_latency_us":6.0,"host_link_gbps_per_dir":64,"tdp_w":700})",
      R"({"id":"b","peak_tflops":{"bf16":2250,"fp8":4500,"fp4":9000},"hbm_gib":180,"hbm_tbps":8,"scaleup_domain":72,"scaleup_gbps_per_dir":900,"nic_gbps_per_gpu":400,"efficiency":{"gemm_max":0.8,"attn_fwd":0.6,"mem":0.8,"comm_overlap":0.9,"layer_overhead_us":20}})",
      // A SimuMax system file (spec/simumax_system.cc).
      R"({"sys_name":"s","num_per_node":8,"accelerator":{"backend":"cuda","mem_gbs":80,"op":{"matmul":{"tflops":312,"efficient_factor":0.75,"accurate_efficient_factor":{"b=1, m=4096, k=5120, n=1536, layout=TN":0.78,"b=1, m=4096, k=1536, n=5120, layout=NN":0.73,"b=1, m=1536, k=4096, n=5120, layout=NT":0.62}},"group_matmul":{"tflops":312,"efficient_factor":0.5},"sdp_fwd":{"tflops":312,"efficient_factor":1.05},"sdp_bwd":{"tflops":312,"efficient_factor":0.8},"default":{"tflops":312,"efficient_factor":0.75}},"bandwidth":{"default":{"efficient_factor":0.91,"gbps":1600,"latency_us":40}},"mode":"roofline"},"networks":{"intra_with_pcie":false,"high_intra_node":{"processor_usage":0,"bandwidth":{"efficient_factor":0.8,"gbps":300,"latency_us":10},"op":{"all_reduce":{"scale":2,"offset":-1,"efficient_factor":0.7,"latency_us":20},"all2all":{"scale":1,"offset":-1}}},"inter_node":{"processor_usage":0,"bandwidth":{"efficient_factor":0.9,"gbps":25,"latency_us":20},"op":{}}}})",
  };
  return seeds;
}

// Hardware overrides (the validation schema's hardware_overrides).
const std::vector<std::string>& OverrideSeeds() {
  static const std::vector<std::string> seeds = {R"({"nic_gbps_per_gpu":200})",
                                                 R"({"hbm_gib":96,"tdp_w":500})",
                                                 R"({"efficiency":{"gemm_max":0.7}})", "null"};
  return seeds;
}

// SimuMax strategy files (plus trainsim extensions), legal for the model seeds on 8-64 GPUs.
const std::vector<std::string>& StrategySeeds() {
  static const std::vector<std::string> seeds = {
      R"({"seq_len":4096,"micro_batch_size":1,"micro_batch_num":8,"dtype":"bf16","world_size":8,"tp_size":1,"pp_size":1,"ep_size":1,"etp_size":1,"moe_dispatcher_policy":"all2all","enable_sequence_parallel":true,"interleaving_size":1,"zero_state":1,"enable_dropout":false,"use_fused_norm":true,"no_sync":true,"use_math_sdp":false,"use_flash_sdp":true,"use_fp32_accum_grad":true,"enable_recompute":false,"skip_ckpt_micro_batch_num":0,"mem_factor":0.94,"recompute_granularity":"full_block","recompute_layer_num":0,"attn_recompute":false,"mla_rms_recompute":false,"mlp_recompute":false,"mlp_rms_recompute":false})",
      R"({"seq_len":2048,"micro_batch_size":2,"micro_batch_num":4,"world_size":16,"tp_size":2,"pp_size":2,"interleaving_size":2,"enable_sequence_parallel":true,"zero_state":1,"enable_recompute":true,"recompute_granularity":"selective_recompute","attn_recompute":true,"mlp_recompute":true})",
      R"({"seq_len":4096,"micro_batch_size":1,"micro_batch_num":4,"world_size":8,"tp_size":1,"pp_size":1,"ep_size":8,"etp_size":1,"enable_recompute":true,"recompute_granularity":"full_block","recompute_layer_num":2})",
      R"({"seq_len":8192,"micro_batch_size":1,"global_batch_size":32,"world_size":32,"tp_size":2,"cp_size":2,"pp_size":1,"ep_size":2,"fsdp":true,"dtype":"fp8","cp_comm_type":"a2a","pipeline_schedule":"gpipe","recompute":"full","offload_optimizer":true})",
      R"({"seq_len":1024,"micro_batch_size":4,"micro_batch_num":2,"world_size":64,"tp_size":4,"pp_size":2,"zero_state":0,"tp_comm_overlap":true,"overlap_grad_reduce":false,"recompute_modules":"core_attn,mlp"})",
      R"({"seq_len":4096,"micro_batch_size":1,"micro_batch_num":8,"world_size":8,"tp_size":2,"pp_size":2,"interleaving_size":2,"pp_comm_async":false,"tp_net":"high_intra_node","pp_net":"inter_node","dp_net":"auto","order_of_paralielism":"tp-cp-ep-dp-pp","pp_schedule":"1f1b","enable_recompute":true,"recompute_granularity":"selective_recompute","recompute_layer_num":2,"megatron_recompute":true,"megatron_recompute_modules":["layernorm","mlp"]})",
  };
  return seeds;
}

const std::vector<std::string>& MegatronSeeds() {
  static const std::vector<std::string> seeds = {
      "--tensor-model-parallel-size 8 --pipeline-model-parallel-size 4 --sequence-parallel "
      "--use-distributed-optimizer --micro-batch-size 1 --global-batch-size 512 --seq-length 8192 "
      "--recompute-granularity full",
      "--tensor-model-parallel-size=2 --micro-batch-size=2 --global-batch-size=64 "
      "--seq-length=4096 "
      "--bf16 --num-layers 8 --hidden-size 1024 --overlap-grad-reduce",
      "--pipeline-model-parallel-size 2 --virtual-pipeline-model-parallel-size 2 "
      "--expert-model-parallel-size 8 --expert-tensor-parallel-size 1 --micro-batch-size 1 "
      "--global-batch-size 128 --seq-length 2048 --fp8-format hybrid --recompute-granularity "
      "selective --context-parallel-size 1 --cp-comm-type a2a",
      "--use-torch-fsdp2 --micro-batch-size 1 --global-batch-size 64 --seq-length 4096 "
      "--recompute-granularity full --recompute-num-layers 2",
  };
  return seeds;
}

const std::vector<std::string>& ValidationSeeds() {
  static const std::vector<std::string> seeds = [] {
    std::vector<std::string> out = {
        R"({"id":"seed-001","source":"NVIDIA-NeMo/Megatron-Bridge docs","model":{"name":"M","hidden_size":2048,"num_hidden_layers":9,"num_attention_heads":16,"num_key_value_heads":8,"head_dim":128,"intermediate_size":8192,"vocab_size":32000,"hidden_act":"silu","tie_word_embeddings":false,"moe":null,"mla":null,"mtp_layers":0},"hardware":"h100_sxm_80gb","hardware_overrides":{"nic_gbps_per_gpu":200},"gpus":16,"precision":"bf16","parallel":{"tp":2,"pp":2,"vpp":null,"cp":1,"ep":null,"etp":null,"dp":null,"sp":null,"zero":null,"fsdp":null},"recompute":"selective","seq":4096,"mbs":1,"gbs":64,"measured":{"iter_time_s":1.0,"peak_mem_gib":40.0},"target_iter_time_s":1.0,"target_derived":false,"notes":""})"};
    // A few real cases of different families (Megatron 2021, llm-foundry FSDP, Megatron-Bridge
    // dense / MoE+MLA, SimuMax) when the shared data is there.
    std::ifstream in(std::string(TRAINSIM_SHARED_DIR) + "/validation/cases/public.jsonl");
    std::string line;
    for (int i = 0; std::getline(in, line); ++i)
      if (i == 0 || i == 31 || i == 186 || i == 193 || i == 343) out.push_back(line);
    return out;
  }();
  return seeds;
}

// ---------------------------------------------------------------------------------------------
// Mutations

template <typename T>
const T& Pick(Rng& rng, const std::vector<T>& v) {
  return v[std::uniform_int_distribution<size_t>(0, v.size() - 1)(rng)];
}

size_t Below(Rng& rng, size_t n) {
  return n == 0 ? 0 : std::uniform_int_distribution<size_t>(0, n - 1)(rng);
}

bool Chance(Rng& rng, double p) {
  return std::uniform_real_distribution<double>(0, 1)(rng) < p;
}

// Literals that replace a number in the text: huge, negative, fractional, NaN-like, other types.
const std::vector<std::string>& NumberLiterals() {
  static const std::vector<std::string> v = {"0",
                                             "-1",
                                             "-0",
                                             "1",
                                             "2",
                                             "3",
                                             "7",
                                             "1.5",
                                             "0.5",
                                             "-2.5",
                                             "4096.0",
                                             "1e3",
                                             "1E309",
                                             "-1e309",
                                             "1e-400",
                                             "2147483647",
                                             "2147483648",
                                             "-2147483649",
                                             "4294967296",
                                             "9007199254740993",
                                             "9223372036854775807",
                                             "9223372036854775808",
                                             "18446744073709551616",
                                             "1e18",
                                             "NaN",
                                             "nan",
                                             "Infinity",
                                             "-Infinity",
                                             "inf",
                                             "0x10",
                                             "01",
                                             "+1",
                                             ".5",
                                             "5.",
                                             "1e",
                                             "--1",
                                             "\"8\"",
                                             "\"NaN\"",
                                             "\"-1\"",
                                             "\"\"",
                                             "null",
                                             "true",
                                             "false",
                                             "[]",
                                             "{}",
                                             "[1]",
                                             "{\"a\":1}"};
  return v;
}

std::string RandomBytes(Rng& rng, size_t n) {
  static const char kPunct[] = "{}[]\":,0123456789.eE+-nulltruefasN \t\n\\/";
  std::string s;
  for (size_t i = 0; i < n; ++i) {
    if (Chance(rng, 0.6))
      s += kPunct[Below(rng, sizeof(kPunct) - 1)];
    else
      s += static_cast<char>(Below(rng, 256));
  }
  return s;
}

// One byte-level mutation of `s`.
void MutateBytes(Rng& rng, std::string& s) {
  switch (Below(rng, 8)) {
    case 0:  // bit flip
      if (!s.empty()) s[Below(rng, s.size())] ^= static_cast<char>(1u << Below(rng, 8));
      break;
    case 1:  // byte set
      if (!s.empty()) s[Below(rng, s.size())] = RandomBytes(rng, 1)[0];
      break;
    case 2:  // truncation
      s.resize(Below(rng, s.size() + 1));
      break;
    case 3:  // insertion of random bytes
      s.insert(Below(rng, s.size() + 1), RandomBytes(rng, 1 + Below(rng, 8)));
      break;
    case 4: {  // range deletion
      const size_t a = Below(rng, s.size() + 1);
      s.erase(a, Below(rng, 16));
      break;
    }
    case 5: {  // range duplication
      if (s.empty()) break;
      const size_t a = Below(rng, s.size());
      const std::string piece = s.substr(a, 1 + Below(rng, 24));
      s.insert(Below(rng, s.size() + 1), piece);
      break;
    }
    default: {  // number swap: replace a run of number characters by an interesting literal
      std::vector<size_t> starts;
      for (size_t i = 0; i < s.size(); ++i)
        if ((s[i] >= '0' && s[i] <= '9') && (i == 0 || !(s[i - 1] >= '0' && s[i - 1] <= '9')))
          starts.push_back(i);
      if (starts.empty()) break;
      const size_t a = Pick(rng, starts);
      size_t b = a;
      while (b < s.size() && ((s[b] >= '0' && s[b] <= '9') || s[b] == '.' || s[b] == 'e' ||
                              s[b] == 'E' || s[b] == '-' || s[b] == '+'))
        ++b;
      s.replace(a, b - a, Pick(rng, NumberLiterals()));
      break;
    }
  }
}

json InterestingValue(Rng& rng, const json& old) {
  switch (Below(rng, 12)) {
    case 0: {  // huge
      static const std::vector<json> huge = {json(2147483647LL),
                                             json(2147483648LL),
                                             json(4294967296LL),
                                             json(65536),
                                             json(1LL << 40),
                                             json(9007199254740993ULL),
                                             json(std::numeric_limits<uint64_t>::max()),
                                             json(1e18),
                                             json(1e300),
                                             json(-1e300),
                                             json(std::numeric_limits<int64_t>::min())};
      return Pick(rng, huge);
    }
    case 1:  // negative
      return json(-static_cast<int64_t>(Below(rng, 100)) - 1);
    case 2:
      return json(0);
    case 3: {  // fractional
      static const std::vector<double> fr = {0.5, 1.5, 2.25, 4096.5, -0.5, 1e-300, 0.999999999};
      return json(Pick(rng, fr));
    }
    case 4: {  // NaN-like strings and other strings
      static const std::vector<std::string> st = {"NaN",   "nan",  "inf",     "-inf", "Infinity",
                                                  "1e999", "",     "8",       "-1",   "0x10",
                                                  "full",  "bf16", "\xff\xfe"};
      return json(Pick(rng, st));
    }
    case 5: {  // type swaps of the old value
      if (old.is_number()) return json(old.dump());
      if (old.is_boolean()) return json(old.get<bool>() ? 1 : 0);
      if (old.is_string()) return json(static_cast<int>(old.get<std::string>().size()));
      if (old.is_object() || old.is_array()) return json(1);
      return json(true);
    }
    case 6: {  // other types
      static const std::vector<json> other = {
          json(nullptr),           json(true),     json(false),
          json::array(),           json::object(), json::array({1, 2}),
          json::object({{"a", 1}})};
      return Pick(rng, other);
    }
    case 7:
    case 8: {  // numeric neighbours of the old value (keep the document near-valid)
      if (!old.is_number()) return json(static_cast<int>(1 + Below(rng, 8)));
      const double v = old.get<double>();
      static const std::vector<double> f = {0.5, 2, 3, 0.25, 4, 1000};
      const double n = Chance(rng, 0.5) ? v * Pick(rng, f) : v + (Chance(rng, 0.5) ? 1 : -1);
      if (old.is_number_integer() && std::fabs(n) < 9e15) return json(static_cast<int64_t>(n));
      return json(n);
    }
    default: {  // small sizes: hit the divisibility rules
      static const std::vector<int> small = {1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 24, 32, 64, 128};
      return json(Pick(rng, small));
    }
  }
}

// Collects pointers to every object member (recursively) so a mutation can pick any field.
void CollectMembers(json& j, std::vector<std::pair<json*, std::string>>& out) {
  if (!j.is_object()) return;
  for (auto it = j.begin(); it != j.end(); ++it) {
    out.emplace_back(&j, it.key());
    if (it->is_object()) CollectMembers(*it, out);
  }
}

// One structural mutation of a JSON document.
void MutateJson(Rng& rng, json& doc) {
  std::vector<std::pair<json*, std::string>> members;
  CollectMembers(doc, members);
  if (members.empty()) {
    doc = InterestingValue(rng, doc);
    return;
  }
  auto& [obj, key] = members[Below(rng, members.size())];
  switch (Below(rng, 10)) {
    case 0:  // delete the key
      obj->erase(key);
      break;
    case 1: {  // add an unknown key
      static const std::vector<std::string> names = {"foo",        "tp", "hidden",
                                                     "num_layers", "",   "\x01"};
      (*obj)[Pick(rng, names)] = InterestingValue(rng, json(1));
      break;
    }
    default:  // replace the value
      (*obj)[key] = InterestingValue(rng, (*obj)[key]);
      break;
  }
}

// A mutated seed: structural mutations (the result is still JSON) or byte mutations.
std::string MutatedDocument(Rng& rng, const std::string& seed, bool structural) {
  if (structural) {
    json doc = json::parse(seed);
    const int n = 1 + static_cast<int>(Below(rng, 3));
    for (int i = 0; i < n; ++i) MutateJson(rng, doc);
    return doc.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  std::string s = seed;
  const int n = 1 + static_cast<int>(Below(rng, 4));
  for (int i = 0; i < n; ++i) MutateBytes(rng, s);
  return s;
}

// Short inputs: fragments of JSON syntax and numbers (cheap, many).
std::string ShortInput(Rng& rng) {
  static const std::vector<std::string> pieces = {"{",
                                                  "}",
                                                  "[",
                                                  "]",
                                                  ":",
                                                  ",",
                                                  "\"",
                                                  "\"hidden_size\"",
                                                  "\"tp_size\"",
                                                  "\"n_embd\"",
                                                  "\"layer_num\"",
                                                  "\"moe\"",
                                                  "\"model\"",
                                                  "\"peak_tflops\"",
                                                  "1",
                                                  "0",
                                                  "-1",
                                                  "1e999",
                                                  "NaN",
                                                  "null",
                                                  "true",
                                                  "\"x\"",
                                                  " ",
                                                  "\\u0000",
                                                  "\\",
                                                  "1.5",
                                                  "2147483648"};
  std::string s;
  const size_t n = Below(rng, 8);
  for (size_t i = 0; i < n; ++i) s += Chance(rng, 0.85) ? Pick(rng, pieces) : RandomBytes(rng, 1);
  return s;
}

std::string MutatedMegatronArgs(Rng& rng, const std::string& seed) {
  static const std::vector<std::string> flags = {"--tensor-model-parallel-size",
                                                 "--pipeline-model-parallel-size",
                                                 "--virtual-pipeline-model-parallel-size",
                                                 "--context-parallel-size",
                                                 "--expert-model-parallel-size",
                                                 "--expert-tensor-parallel-size",
                                                 "--micro-batch-size",
                                                 "--global-batch-size",
                                                 "--seq-length",
                                                 "--recompute-num-layers",
                                                 "--sequence-parallel",
                                                 "--use-distributed-optimizer",
                                                 "--use-torch-fsdp2",
                                                 "--recompute-granularity",
                                                 "--fp8-format",
                                                 "--fp8-recipe",
                                                 "--cp-comm-type",
                                                 "--bf16",
                                                 "--fp16",
                                                 "--num-layers",
                                                 "--",
                                                 "-",
                                                 "=",
                                                 "--x=",
                                                 "--tensor-model-parallel-size=",
                                                 "full",
                                                 "selective",
                                                 "mxfp8",
                                                 "a2a"};
  std::vector<std::string> tok;
  {
    std::istringstream in(seed);
    std::string t;
    while (in >> t) tok.push_back(t);
  }
  const int n = 1 + static_cast<int>(Below(rng, 4));
  for (int i = 0; i < n; ++i) {
    switch (Below(rng, 6)) {
      case 0:
        if (!tok.empty()) tok.erase(tok.begin() + Below(rng, tok.size()));
        break;
      case 1:
        tok.insert(tok.begin() + Below(rng, tok.size() + 1), Pick(rng, flags));
        break;
      case 2:
        tok.insert(tok.begin() + Below(rng, tok.size() + 1), Pick(rng, NumberLiterals()));
        break;
      case 3:
        if (!tok.empty()) tok[Below(rng, tok.size())] = Pick(rng, NumberLiterals());
        break;
      case 4:
        if (!tok.empty()) tok[Below(rng, tok.size())] = std::to_string(1 + Below(rng, 64));
        break;
      default:
        if (!tok.empty()) MutateBytes(rng, tok[Below(rng, tok.size())]);
        break;
    }
  }
  std::string out;
  for (const auto& t : tok) out += (out.empty() ? "" : " ") + t;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The harness: counts inputs and records the first failures with the input that caused them.

class Harness {
 public:
  Harness() {
    if (const char* p = std::getenv("TRAINSIM_FUZZ_TRACE")) trace_ = std::fopen(p, "w");
  }
  ~Harness() {
    if (trace_) std::fclose(trace_);
  }

  void Trace(const char* kind, const std::string& input) {
    if (!trace_) return;
    std::fprintf(trace_, "%s\t%s\n", kind,
                 json(input).dump(-1, ' ', false, json::error_handler_t::replace).c_str());
    std::fflush(trace_);
  }

  // Reports the first two failures of each kind (what up to its first digit) and counts all.
  void Fail(const std::string& what, const std::string& input) {
    ++failures_;
    const std::string kind = what.substr(0, what.find_first_of("0123456789"));
    if (++failure_kinds_[kind] <= 2 && failures_ <= 40)
      ADD_FAILURE() << what << "\n  input: "
                    << json(input).dump(-1, ' ', false, json::error_handler_t::replace);
  }

  // Runs `f`; an exception escaping the library is a failure (it would abort the CLI).
  template <typename F>
  bool Guard(const char* kind, const std::string& input, F&& f) {
    try {
      f();
      return true;
    } catch (const std::exception& e) {
      Fail(std::string(kind) + " threw " + e.what(), input);
    } catch (...) {
      Fail(std::string(kind) + " threw a non-std exception", input);
    }
    return false;
  }

  // A failed parse must explain itself.
  void CheckStatus(const Status& st, const char* kind, const std::string& input) {
    if (st.ok()) return;
    if (st.message().empty())
      Fail(std::string(kind) + ": error Status with an empty message", input);
    if (st.code() == StatusCode::kOk) Fail(std::string(kind) + ": error with code kOk", input);
  }

  void CheckReport(const Result<StepReport>& r, const std::string& input) {
    ++simulated_;
    if (!r.ok()) {
      CheckStatus(r.status(), "Simulate", input);
      return;
    }
    ++simulated_ok_;
    const StepReport& rep = r.value();
    if (!std::isfinite(rep.step_time_s) || rep.step_time_s <= 0)
      Fail("Simulate: step_time_s = " + std::to_string(rep.step_time_s), input);
    if (!std::isfinite(rep.peak_mem_bytes) || rep.peak_mem_bytes < 0)
      Fail("Simulate: peak_mem_bytes = " + std::to_string(rep.peak_mem_bytes), input);
    if (!std::isfinite(rep.mfu) || rep.mfu < 0)
      Fail("Simulate: mfu = " + std::to_string(rep.mfu), input);
  }

  Result<ModelSpec> Model(const std::string& text) {
    ++count_;
    ++per_kind_[0];
    Trace("model", text);
    Result<ModelSpec> m = Status::Parse("not run");
    if (!Guard("ParseModelJson", text, [&] { m = ParseModelJson(text, "fuzz-model"); })) return m;
    CheckStatus(m.status(), "ParseModelJson", text);
    if (m.ok()) {
      ++accepted_[0];
      if (Status v = ValidateModel(m.value()); !v.ok())
        Fail("ParseModelJson accepted a model that ValidateModel rejects: " + v.message(), text);
    }
    return m;
  }

  void Hardware(const std::string& text) {
    ++count_;
    ++per_kind_[1];
    Trace("hardware", text);
    Result<HardwareSpec> hw = Status::Parse("not run");
    if (!Guard("ParseHardwareJson", text, [&] { hw = ParseHardwareJson(text, "fuzz-hw"); })) return;
    CheckStatus(hw.status(), "ParseHardwareJson", text);
    if (hw.ok()) {
      ++accepted_[1];
      if (!(hw->hbm_bytes > 0) ||
          !(hw->PeakFlops(DType::kBf16) + hw->PeakFlops(DType::kFp16) > 0 ||
            (PeakUnknown(hw.value(), "bf16") && PeakUnknown(hw.value(), "fp16"))) ||
          !std::isfinite(hw->nic_bw_bytes_per_s) || !(hw->nic_bw_bytes_per_s > 0))
        Fail("ParseHardwareJson accepted a hardware spec without capacity or throughput", text);
    }
  }

  void Override(const HardwareSpec& base, const std::string& text) {
    ++count_;
    ++per_kind_[1];
    Trace("override", text);
    HardwareSpec h = base;
    Status st;
    if (!Guard("ApplyHardwareOverrides", text,
               [&] { st = ApplyHardwareOverrides(h, text, "fuzz-override"); }))
      return;
    CheckStatus(st, "ApplyHardwareOverrides", text);
    if (st.ok()) {
      ++accepted_[1];
      if (!(h.hbm_bytes > 0) || !(h.nic_bw_bytes_per_s > 0) || !(h.scaleup_bw_bytes_per_s > 0) ||
          !std::isfinite(h.hbm_bytes))
        Fail("ApplyHardwareOverrides accepted a non-positive capacity or bandwidth", text);
    } else if (h.hbm_bytes != base.hbm_bytes || h.nic_bw_bytes_per_s != base.nic_bw_bytes_per_s) {
      Fail("ApplyHardwareOverrides changed the spec although it failed", text);
    }
  }

  Result<Strategy> StrategyJson(const std::string& text) {
    ++count_;
    ++per_kind_[2];
    Trace("strategy", text);
    Result<Strategy> s = Status::Parse("not run");
    if (!Guard("ParseStrategyJson", text, [&] { s = ParseStrategyJson(text, "fuzz-strategy"); }))
      return s;
    CheckStatus(s.status(), "ParseStrategyJson", text);
    if (s.ok()) ++accepted_[2];
    return s;
  }

  Result<Strategy> Megatron(const std::string& text, const Strategy& base) {
    ++count_;
    ++per_kind_[3];
    Trace("megatron", text);
    Result<Strategy> s = Status::Parse("not run");
    if (!Guard("ParseMegatronArgs", text, [&] { s = ParseMegatronArgs(text, base); })) return s;
    CheckStatus(s.status(), "ParseMegatronArgs", text);
    if (s.ok()) ++accepted_[3];
    return s;
  }

  Result<ValidationCase> Case(const std::string& text) {
    ++count_;
    ++per_kind_[4];
    Trace("case", text);
    Result<ValidationCase> c = Status::Parse("not run");
    if (!Guard("ParseValidationCase", text, [&] { c = ParseValidationCase(text, "fuzz-case"); }))
      return c;
    CheckStatus(c.status(), "ParseValidationCase", text);
    if (c.ok()) ++accepted_[4];
    return c;
  }

  void Sim(const ModelSpec& m, const HardwareSpec& hw, const Strategy& s, const std::string& what) {
    Trace("simulate", what);
    Result<StepReport> r = Status::Parse("not run");
    if (!Guard("Simulate", what, [&] { r = Simulate(m, hw, s); })) return;
    CheckReport(r, what);
  }

  long long count() const { return count_; }
  long long simulated() const { return simulated_; }
  long long simulated_ok() const { return simulated_ok_; }
  long long failures() const { return failures_; }
  std::string Summary() const {
    static const char* kNames[] = {"model", "hardware", "strategy", "megatron", "case"};
    std::ostringstream o;
    for (int i = 0; i < 5; ++i)
      o << kNames[i] << " " << per_kind_[i] << " (" << accepted_[i] << " accepted)  ";
    o << "simulate " << simulated_ << " (" << simulated_ok_ << " reports)";
    return o.str();
  }

 private:
  FILE* trace_ = nullptr;
  std::map<std::string, int> failure_kinds_;
  long long count_ = 0, simulated_ = 0, simulated_ok_ = 0, failures_ = 0;
  long long per_kind_[5] = {0, 0, 0, 0, 0};
  long long accepted_[5] = {0, 0, 0, 0, 0};
};

// TRAINSIM_FUZZ_SCALE multiplies the iteration counts: 10 for a long run, 0.1 for a smoke run
// (the sanitizer build, where libFuzzer's ASan+UBSan targets do the long runs); in [0.01, 1000].
double Scale() {
  static const double k = [] {
    const char* s = std::getenv("TRAINSIM_FUZZ_SCALE");
    if (!s) return 1.0;
    const std::string_view text(s);
    double v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return 1.0;  // not a number
    return v >= 0.01 && v <= 1000 ? v : 1.0;
  }();
  return k;
}

// n iterations scaled by Scale(), at least one.
int Scaled(long long n) {
  return static_cast<int>(std::max(1.0, static_cast<double>(n) * Scale()));
}

TEST(FuzzTest, ParsersAndSimulateNeverCrashOnMutatedInputs) {
  const auto t0 = std::chrono::steady_clock::now();
  Rng rng(0x7261696e73696dULL);  // fixed seed: "trainsim"
  Harness h;
  auto hw_preset = LoadHardware("h100_sxm_80gb");
  ASSERT_TRUE(hw_preset.ok()) << hw_preset.status().message();
  const HardwareSpec hw = hw_preset.value();

  // Sanity: every seed is valid, so mutations start from accepted documents.
  for (const auto& s : ModelSeeds()) ASSERT_TRUE(ParseModelJson(s, "seed").ok()) << s;
  for (const auto& s : HardwareSeeds()) ASSERT_TRUE(ParseHardwareJson(s, "seed").ok()) << s;
  for (const auto& s : StrategySeeds())
    ASSERT_TRUE(ParseStrategyJson(s, "seed").ok())
        << ParseStrategyJson(s, "seed").status().message();
  for (const auto& s : ValidationSeeds())
    ASSERT_TRUE(ParseValidationCase(s, "seed").ok())
        << ParseValidationCase(s, "seed").status().message();

  std::string laps;
  auto lap_t = std::chrono::steady_clock::now();
  auto lap = [&](const char* name) {
    const auto now = std::chrono::steady_clock::now();
    laps += std::string(name) + " " +
            std::to_string(std::chrono::duration<double>(now - lap_t).count()).substr(0, 5) +
            " s  ";
    lap_t = now;
  };

  // 1. Model x strategy pairs, structurally mutated, simulated whenever both parse.
  for (int i = 0; i < Scaled(200000); ++i) {
    const std::string& ms = Pick(rng, ModelSeeds());
    const std::string& ss = Pick(rng, StrategySeeds());
    const int which = static_cast<int>(Below(rng, 3));  // 0: model, 1: strategy, 2: both
    const std::string mt = which != 1 ? MutatedDocument(rng, ms, Chance(rng, 0.8)) : ms;
    const std::string st = which != 0 ? MutatedDocument(rng, ss, Chance(rng, 0.8)) : ss;
    auto m = h.Model(mt);
    auto s = h.StrategyJson(st);
    if (m.ok() && s.ok()) {
      Strategy strat = s.value();
      if (strat.gbs == 0 && strat.micro_batch_num == 0) strat.micro_batch_num = 4;
      h.Sim(m.value(), hw, strat, "model=" + mt + "\nstrategy=" + st);
    }
  }

  lap("pairs");

  // 2. Megatron-LM command lines, simulated on the unmutated model seeds.
  for (int i = 0; i < Scaled(100000); ++i) {
    Strategy base;
    base.world_size = 1 << Below(rng, 7);
    base.gbs = 0;
    const std::string args = MutatedMegatronArgs(rng, Pick(rng, MegatronSeeds()));
    auto s = h.Megatron(args, base);
    if (s.ok() && Chance(rng, 0.5)) {
      const std::string& ms = Pick(rng, ModelSeeds());
      auto m = ParseModelJson(ms, "seed");
      Strategy strat = s.value();
      if (strat.gbs == 0 && strat.micro_batch_num == 0) strat.micro_batch_num = 4;
      h.Sim(m.value(), hw, strat, "model=" + ms + "\nmegatron=" + args);
    }
  }

  lap("megatron");

  // 3. Hardware presets and overrides.
  for (int i = 0; i < Scaled(40000); ++i) {
    h.Hardware(MutatedDocument(rng, Pick(rng, HardwareSeeds()), Chance(rng, 0.6)));
    h.Override(hw, MutatedDocument(rng, Pick(rng, OverrideSeeds()), Chance(rng, 0.6)));
  }

  lap("hardware");

  // 4. Validation cases (whole JSONL lines), simulated when they parse.
  for (int i = 0; i < Scaled(30000); ++i) {
    const std::string text = MutatedDocument(rng, Pick(rng, ValidationSeeds()), Chance(rng, 0.7));
    auto c = h.Case(text);
    if (c.ok()) h.Sim(c->model, c->hw, c->strategy, "case=" + text);
  }

  lap("cases");

  // 5. Byte-mutated full documents of every kind (mostly malformed JSON). The (void) casts here
  // and below are deliberate: each Harness call has already checked the Status it returns
  // (CheckStatus, Fail); only the loops that go on to Simulate need the parsed value.
  for (int i = 0; i < Scaled(40000); ++i) {
    (void)h.Model(MutatedDocument(rng, Pick(rng, ModelSeeds()), false));
    (void)h.StrategyJson(MutatedDocument(rng, Pick(rng, StrategySeeds()), false));
    h.Hardware(MutatedDocument(rng, Pick(rng, HardwareSeeds()), false));
  }

  lap("bytes");

  // 6. Many short inputs to every parser.
  while (h.count() < Scaled(1000000)) {
    const std::string s = ShortInput(rng);
    switch (Below(rng, 6)) {
      case 0:
        (void)h.Model(s);
        break;
      case 1:
        h.Hardware(s);
        break;
      case 2:
        (void)h.StrategyJson(s);
        break;
      case 3:
        (void)h.Megatron(s, Strategy{});
        break;
      case 4:
        (void)h.Case(s);
        break;
      default:
        h.Override(hw, s);
        break;
    }
  }

  lap("short");
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("fuzz: %lld inputs, %lld simulated (%lld reports), %.1f s\n  %s\n", h.count(),
              h.simulated(), h.simulated_ok(), secs, h.Summary().c_str());
  std::printf("  %s\n", laps.c_str());
  EXPECT_GE(h.count(), Scaled(1000000));
  EXPECT_GT(h.simulated_ok(), Scaled(1000));  // the mutations do reach the simulator
  EXPECT_EQ(h.failures(), 0);
}

// The framework-file readers (trainsim/formats.h) on mutated DeepSpeed JSON and torchtitan TOML:
// every input gives a value or an error with a message, never an exception.
TEST(FuzzTest, FrameworkFileReadersNeverCrash) {
  static const std::vector<std::string> kDeepSpeed = {
      R"({"train_batch_size":64,"train_micro_batch_size_per_gpu":2,"gradient_accumulation_steps":4,"bf16":{"enabled":true},"zero_optimization":{"stage":2,"offload_optimizer":{"device":"cpu"},"overlap_comm":true,"reduce_bucket_size":5e8}})",
      R"({"train_batch_size":"auto","train_micro_batch_size_per_gpu":"auto","fp16":{"enabled":"auto"},"bf16":{"enabled":"auto"},"zero_optimization":{"stage":3,"stage3_prefetch_bucket_size":"auto"}})"};
  static const std::vector<std::string> kToml = {
      "[model]\nname = \"llama3\"\nflavor = \"8B\"\n[training]\nlocal_batch_size = 2\n"
      "seq_len = 8192\n[parallelism]\ndata_parallel_shard_degree = 4\n"
      "tensor_parallel_degree = 2\npipeline_parallel_degree = 2\n"
      "pipeline_parallel_schedule = \"Interleaved1F1B\"\n[activation_checkpoint]\n"
      "mode = \"selective\"\nselective_ac_option = \"2\"\n[compile]\nenable = true\n",
      "[model]\nname = \"llama3\"\nflavor = \"70B\"\nconverters = [\"float8\"]\n"
      "[parallelism]\ndata_parallel_replicate_degree = 2\ndata_parallel_shard_degree = 1\n"
      "[activation_checkpoint]\nmode = \"full\"\n"};
  // TRL / TrainingArguments JSON and LLaMA-Factory YAML (issue 11: a `? [a, b]` YAML key threw
  // out of the reader, and batch or length products wrapped an int).
  static const std::vector<std::string> kTrl = {
      R"({"per_device_train_batch_size":4,"gradient_accumulation_steps":2,"bf16":true,"max_length":2048,"packing":true,"gradient_checkpointing":true})",
      R"({"num_generations":8,"per_device_train_batch_size":8,"max_prompt_length":512,"max_completion_length":1024,"beta":0.04,"use_vllm":true,"vllm_mode":"colocate","model_init_kwargs":"{\"dtype\": \"bfloat16\"}"})"};
  static const std::vector<std::string> kYaml = {
      "stage: sft\nfinetuning_type: lora\nlora_rank: 8\nlora_target: all\ncutoff_len: 2048\n"
      "per_device_train_batch_size: 1\ngradient_accumulation_steps: 8\nbf16: true\n",
      "stage: ppo\nfinetuning_type: lora\nquantization_bit: 4\nmax_new_tokens: 512\n"
      "deepspeed:\n  zero_optimization:\n    stage: 2\n"};
  for (const auto& s : kDeepSpeed) ASSERT_TRUE(ParseDeepSpeedConfig(s, "seed").ok()) << s;
  for (const auto& s : kToml)
    ASSERT_TRUE(ParseTorchtitanToml(s, "seed").ok())
        << ParseTorchtitanToml(s, "seed").status().message();
  for (const auto& s : kTrl)
    ASSERT_TRUE(ParseTrlArgsJson(s, "seed").ok()) << ParseTrlArgsJson(s, "seed").status().message();
  for (const auto& s : kYaml)
    ASSERT_TRUE(ParseLlamaFactoryYaml(s, "seed", 32).ok())
        << ParseLlamaFactoryYaml(s, "seed", 32).status().message();
  Rng rng(0x666f726d617473ULL);  // "formats"
  long long accepted = 0;
  for (int i = 0; i < Scaled(20000); ++i) {
    const int kind = static_cast<int>(rng() % 4);
    const std::string text = kind == 0 ? MutatedDocument(rng, Pick(rng, kToml), false)
                             : kind == 1
                                 ? MutatedDocument(rng, Pick(rng, kDeepSpeed), Chance(rng, 0.7))
                             : kind == 2 ? MutatedDocument(rng, Pick(rng, kTrl), Chance(rng, 0.7))
                                         : MutatedDocument(rng, Pick(rng, kYaml), false);
    Result<FrameworkConfig> c = Status::Parse("not run");
    try {
      c = kind == 0   ? ParseTorchtitanToml(text, "fuzz")
          : kind == 1 ? ParseDeepSpeedConfig(text, "fuzz")
          : kind == 2 ? ParseTrlArgsJson(text, "fuzz")
                      : ParseLlamaFactoryYaml(text, "fuzz", 32);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "exception " << e.what() << " on\n" << text;
      continue;
    }
    if (c.ok()) {
      ++accepted;
      Strategy s;
      (void)ApplyStrategySettings(s, c->settings, false);  // an error is fine, a crash is not
    } else {
      EXPECT_FALSE(c.status().message().empty()) << text;
    }
  }
  EXPECT_GT(accepted, Scaled(100));  // the mutations do reach the mapping
}

}  // namespace
}  // namespace trainsim
