// Online serving at a request rate (rate.cc).
#pragma once

#include <functional>

#include "trainsim/infer.h"

namespace trainsim::infer {

struct RateInputs {
  double rate = 0;  // requests/s, whole system
  int replicas = 1;
  double output_len = 0;
  double max_seqs = 0;           // concurrency the KV pool and max_num_seqs allow per replica
  double prefill_one_s = 0;      // prefill of one prompt (all its chunks)
  double prefill_iters_one = 1;  // chunked-prefill iterations of one prompt
  double prefill_iter_s = 0;     // one of those iterations
  std::function<double(double)> decode_step;  // seconds of a decode step at a concurrency
};

ServingLatency ServeAtRate(const RateInputs& in);

}  // namespace trainsim::infer
