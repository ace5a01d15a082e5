// The engine launch line for a layout (vLLM `vllm serve`, SGLang `python -m sglang.launch_server`,
// TensorRT-LLM `trtllm-serve`), from the engines' documented CLI flags.
#include <sstream>

#include "trainsim/infer.h"

namespace trainsim {
namespace {

std::string Num(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

bool FpKv(const InferenceReport& r) {
  return r.kv_dtype == KvDType::kFp8;
}

}  // namespace

std::string LaunchCommand(const std::string& model, const InferenceReport& r) {
  std::ostringstream o;
  const std::string& id = r.profile.id;
  const std::string seqs = Num(r.profile.max_num_seqs);
  if (id == "vllm") {
    // vLLM engine arguments (docs.vllm.ai, "Engine Arguments").
    o << "vllm serve " << model << " --tensor-parallel-size " << r.tp
      << " --pipeline-parallel-size " << r.pp << " --gpu-memory-utilization "
      << Num(r.profile.gpu_memory_utilization) << " --max-num-seqs " << seqs
      << " --max-num-batched-tokens " << r.profile.max_num_batched_tokens;
    // Online FP8 quantisation of a BF16 checkpoint (vLLM "FP8 W8A8"); other formats load a
    // pre-quantised checkpoint (AWQ / GPTQ / ModelOpt NVFP4) whose config names the scheme.
    if (r.weight_dtype == WeightDType::kFp8) o << " --quantization fp8";
    if (FpKv(r)) o << " --kv-cache-dtype fp8";
    if (r.expert_parallel) o << " --enable-expert-parallel";
    // vLLM --speculative-config (JSON: model, num_speculative_tokens).
    if (r.spec_tokens > 0)
      o << " --speculative-config '{\"model\": \"" << r.draft_model
        << "\", \"num_speculative_tokens\": " << r.spec_tokens << "}'";
    if (r.replicas > 1) o << "  # x" << r.replicas << " replicas (or --data-parallel-size)";
  } else if (id == "sglang") {
    // SGLang server arguments (docs.sglang.ai, "Server Arguments").
    o << "python -m sglang.launch_server --model-path " << model << " --tp-size " << r.tp
      << " --pp-size " << r.pp << " --mem-fraction-static " << Num(r.profile.gpu_memory_utilization)
      << " --max-running-requests " << seqs << " --chunked-prefill-size "
      << r.profile.max_num_batched_tokens;
    if (r.weight_dtype == WeightDType::kFp8) o << " --quantization fp8";
    if (FpKv(r)) o << " --kv-cache-dtype fp8_e4m3";
    if (r.expert_parallel) o << " --ep-size " << r.tp << " --enable-dp-attention";
    if (r.spec_tokens > 0)
      o << " --speculative-algorithm STANDALONE --speculative-draft-model-path " << r.draft_model
        << " --speculative-num-draft-tokens " << r.spec_tokens + 1;
    if (r.replicas > 1) o << " --dp-size " << r.replicas;
  } else if (id == "tensorrt-llm") {
    // trtllm-serve options (TensorRT-LLM docs, "trtllm-serve").
    o << "trtllm-serve " << model << " --backend pytorch --tp_size " << r.tp << " --pp_size "
      << r.pp << " --max_batch_size " << seqs << " --max_num_tokens "
      << r.profile.max_num_batched_tokens << " --kv_cache_free_gpu_memory_fraction "
      << Num(r.profile.gpu_memory_utilization);
    if (r.expert_parallel) o << " --ep_size " << r.tp;
  } else {
    o << "# " << id << ": no server launch line (batch generation in-process)";
  }
  return o.str();
}

}  // namespace trainsim
