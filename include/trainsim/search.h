// Strategy search: every legal parallel strategy of a model on a cluster, ranked.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "trainsim/hardware.h"
#include "trainsim/model.h"
#include "trainsim/status.h"
#include "trainsim/strategy.h"

namespace trainsim {

enum class Objective { kTime, kCost, kMemory };
Result<Objective> ParseObjective(std::string_view s);  // "time" | "cost" | "memory"

// A search's progress, as reported to SearchOptions::progress.
struct SearchProgress {
  double fraction = 0;     // of this shard's indices evaluated (0..1)
  uint64_t evaluated = 0;  // indices evaluated so far (all threads; lags by up to 1024 each)
  uint64_t feasible = 0;   // of which feasible (same lag)
  double elapsed_s = 0;    // since Search was called
};

constexpr int kMaxSearchThreads = 1024;

struct SearchOptions {
  int gpus = 8;
  int gbs = 0;  // global batch in sequences (required)
  int seq = 4096;
  DType dtype = DType::kBf16;
  int top_k = 10;
  Objective objective = Objective::kTime;
  double memory_margin = 0.05;  // fraction of HBM kept free for what the model does not see
  int threads = 0;              // worker threads, 0..kMaxSearchThreads; 0 = all hardware threads
  int shard = 0, shards = 1;    // this process evaluates indices i with i % shards == shard (MPI)
  bool offload = true;          // include optimizer offload
  bool orders = true;           // include non-default rank orders
  int max_vpp = 8;
  // What is trained besides seq and gbs: the stage, fine-tuning method, LoRA rank and targets,
  // freeze layers, packing, RL shape (trainsim/strategy.h Workload; docs/FINETUNE.md), and the
  // optimizer with its states' precision. Every candidate trains it; the workload's seq, gbs,
  // mbs and micro_batch_num are ignored (seq and gbs above; mbs is searched). Default:
  // pre-training with mixed-precision AdamW.
  Workload workload;
  // Fine-tuning methods and adapter ranks to try (search dimensions: "which method and rank fit
  // and run fastest"); empty = the workload's own. A rank varies only for methods with one
  // (UsesLoraRank).
  std::vector<FtMethod> methods;
  std::vector<int> lora_ranks;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  bool master_weights = true;
  // A coarser space for ranking many clusters (recommend): ZeRO 1 and 3, recompute none,
  // selective (core attention) and full, micro-batches of 1 and 2, SP on with TP, 1F1B
  // (interleaved with vpp > 1) only. With offload and orders off, about 1/100 of the full space.
  bool coarse = false;
  // Stopping early, for callers that bound a request. When *cancel becomes true (set from any
  // thread; the flag must outlive the call) or the clock passes `deadline`, every worker stops
  // within about 1024 indices (well under a millisecond) and Search returns what it has, with
  // SearchResult::complete = false and `stopped` = "cancelled" or "deadline". A deadline already
  // past evaluates nothing. The defaults never stop.
  const std::atomic<bool>* cancel = nullptr;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  // Called from one worker thread (never concurrently with itself) at most once every
  // progress_interval_s while the search runs, and once from the calling thread at the end with
  // the final counts (fraction 1 when complete). Keep it cheap: it runs on the search's time.
  std::function<void(const SearchProgress&)> progress;
  double progress_interval_s = 0.05;
};

struct Candidate {
  uint64_t index = 0;  // position in the search space (stable; used to merge shards)
  Strategy strategy;
  double step_time_s = 0, mfu = 0, tokens_per_s_per_gpu = 0;
  double peak_mem_bytes = 0, reserved_bytes = 0;
  double usd_per_million_tokens = 0;
  // Other feasible strategies with the same step time, peak and reserved memory (to 1e-9),
  // collapsed into this one in SearchResult::top: they differ only in settings that change
  // nothing ranked (e.g. ZeRO 1 vs 2, rank orders that place every group alike).
  uint64_t variants = 0;
};

struct SearchResult {
  uint64_t space_size = 0;  // strategies enumerated (this shard's share when sharded)
  uint64_t evaluated = 0;   // == space_size when complete: every index is evaluated or rejected
  uint64_t feasible = 0;
  std::map<std::string, uint64_t> rejected;  // reason -> count; sums with feasible to evaluated
  // Best first by the objective (ties: lower index); one entry per distinct result, the lowest
  // index standing for its variants (Candidate::variants).
  std::vector<Candidate> top;
  uint64_t collapsed = 0;  // strategies collapsed into the entries of `top` (sum of variants)
  std::vector<Candidate> pareto;  // non-dominated in (step time, peak memory), by time
  double seconds = 0;
  // False when the search was stopped by SearchOptions::cancel or deadline: the counts, the top
  // and the front then cover only the `evaluated` indices (which ones depends on timing).
  bool complete = true;
  std::string stopped;  // why it is incomplete: "cancelled" or "deadline"; empty when complete
};

// The enumerated space: a mixed-radix index over the strategy dimensions.
class SearchSpace {
 public:
  SearchSpace(const ModelSpec& m, const HardwareSpec& hw, const SearchOptions& o);
  uint64_t size() const { return size_; }
  // The strategy at `index`; `reason` is set (and the strategy is not meaningful) when the
  // index is a duplicate of another point of the space.
  Strategy At(uint64_t index, const char** duplicate_reason) const;

 private:
  std::vector<int> tp_, cp_, pp_, vpp_, ep_, mbs_;
  std::vector<FtMethod> methods_;
  std::vector<int> ranks_;
  std::vector<int> zero_{0, 1, 2, 3};
  std::vector<int> recompute_{0, 1, 2, 3, 4};  // none, selective, selective-wide, full, full/2
  int sp_choices_ = 2;                         // on, off (with TP)
  int schedule_choices_ = 3;                   // 1F1B (interleaved with vpp), ZB-H1, DualPipe
  Strategy base_;
  bool moe_ = false, offload_ = true, orders_ = true;
  int layers_ = 1;
  uint64_t size_ = 1;
};

// The workload keys a search takes besides gbs and seq (docs/FINETUNE.md): what is trained,
// as strategy keys ("stage", "method", "lora_rank", ...), plus "master_weights". The CLI's
// flags, the REST body and the Python keywords of a search are these keys.
const std::vector<std::string>& SearchWorkloadKeys();
// Applies `given` (key -> text as a strategy file or the CLI spells it; only SearchWorkloadKeys)
// to o.workload, o.optimizer and o.master_weights. Comma lists of "method" and "lora_rank"
// become search dimensions (o.methods, o.lora_ranks), each item checked as the single key
// would be. InvalidArgument naming the key (its CLI flag with `name_flags`).
Status ApplySearchWorkload(const std::map<std::string, std::string>& given, SearchOptions& o,
                           bool name_flags = false);

// The rules Search applies to its options before it enumerates: the sizes and the workload
// every candidate trains under simulate's rules (an adapter rank past the hidden size, an RL
// group x gbs past the limit, ...), so that a front-end can refuse a request before it starts.
// InvalidArgument naming the field and the rule.
Status CheckSearchOptions(const ModelSpec& m, const HardwareSpec& hw, const SearchOptions& o);

// Evaluates every index of the space (this shard's share) on `o.threads` threads. The result
// does not depend on the thread count. Bad options are InvalidArgument naming the field; a
// cancelled or timed-out search is not an error (see SearchResult::complete).
Result<SearchResult> Search(const ModelSpec& m, const HardwareSpec& hw, const SearchOptions& o);

// Merges shard results (e.g. from MPI ranks): sums the counts, keeps the best top_k and the
// Pareto front. Equal to the single-process result. Incomplete if any part is (the first
// part's reason).
SearchResult MergeSearchResults(const std::vector<SearchResult>& parts, int top_k, Objective obj);

// The strategy as Megatron-LM command-line arguments.
std::string MegatronArgs(const Strategy& s);
// One line: "tp 8 pp 4 vpp 2 cp 1 ep 1 etp 8 dp 32 mbs 1 zero 1 sp rc=selective order=..."
std::string DescribeStrategy(const Strategy& s);

}  // namespace trainsim
