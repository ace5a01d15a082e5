// What every front-end (the CLI, the REST service, the Python module) does with an inference
// request, in one place so that they cannot disagree: `trainsim infer`'s options by their flag
// names, the spec they make, and the JSON document `trainsim infer --json` prints.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "trainsim/hardware.h"
#include "trainsim/infer.h"
#include "trainsim/infer_search.h"
#include "trainsim/model.h"
#include "trainsim/status.h"

namespace trainsim {

// `trainsim infer`'s options, named as its flags without "--" and with '_' for '-'.
struct InferRequest {
  int gpus = 0;  // 0 = tp x pp (or the disaggregated pools' sum)
  int tp = 1, pp = 1, ep = 0, max_num_seqs = 0;
  double prompt_len = 0, output_len = 0;  // required (>= 1)
  double batch = 1, rate = 0, gpu_memory_utilization = 0;
  double prefix_cache_hit = -1;  // fraction of each prompt served from the prefix cache
  bool batch_given = false;      // batch and rate exclude each other
  std::string weight_dtype = "bf16", kv_dtype, quant, engine = "vllm";
  // Speculative decoding.
  std::optional<ModelSpec> draft_model;
  int spec_tokens = 0;
  double acceptance_rate = 0;
  // Disaggregated prefill/decode: "P:D" / "xPyD", each pool's tp (0 = tp).
  std::string disaggregate;
  int prefill_tp = 0, decode_tp = 0;
  double slo_ttft_ms = 0, slo_tpot_ms = 0;  // --search's SLO; the goodput of --disaggregate
  // --search: the best layout over gpus.
  bool search = false;
  std::string objective = "throughput", search_weight_dtypes, search_kv_dtypes;
  double price = 0;
  int top = 10;
  bool search_disaggregate = false;
};

// The spec of `r` with the CLI's rules (errors name the option).
Result<InferenceSpec> MakeInferenceSpec(const InferRequest& r);
Result<InferSearchSpec> MakeInferSearchSpec(const InferRequest& r, const InferenceSpec& base);

// `trainsim infer --json`'s document (indent 2, no trailing newline): the report of `r` (or,
// with r.search, the ranked layouts) and the hardware's id and calibration. A search that
// reaches `deadline` is InvalidArgument with field "time_limit".
Result<std::string> InferJson(
    const ModelSpec& m, const HardwareSpec& hw, const InferRequest& r,
    std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max());

// An object's keys named as InferRequest's fields (model, hardware and hw_override are the
// caller's); draft_model is a preset id or a config.json object. Unknown keys other than
// `extra` are an error naming the key.
Result<InferRequest> ReadInferRequest(const nlohmann::json& body,
                                      const std::vector<std::string>& extra = {});

}  // namespace trainsim
