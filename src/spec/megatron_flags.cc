// The tables of megatron_flags.h. Names are Megatron-LM's (megatron/training/arguments.py);
// an entry ending in '*' covers a family by prefix (--log-*, --wandb-*).
#include "spec/megatron_flags.h"

#include <algorithm>
#include <vector>

#include "trainsim/schema.h"

namespace trainsim::megatron {
namespace {

constexpr FlagKind kShape = FlagKind::kShape;
constexpr FlagKind kOk = FlagKind::kHarmless;
constexpr FlagKind kNo = FlagKind::kUnmodelled;

constexpr FlagInfo kFlags[] = {
    // Model shape (ModelFromMegatronShape; megatron_model.cc).
    {"--num-layers", kShape, ""},
    {"--hidden-size", kShape, ""},
    {"--ffn-hidden-size", kShape, ""},
    {"--num-attention-heads", kShape, ""},
    {"--group-query-attention", kShape, ""},
    {"--num-query-groups", kShape, ""},
    {"--kv-channels", kShape, ""},
    {"--swiglu", kShape, ""},
    {"--squared-relu", kShape, ""},
    {"--vocab-size", kShape, ""},
    {"--padded-vocab-size", kShape, ""},
    {"--make-vocab-size-divisible-by", kShape, ""},
    {"--untie-embeddings-and-output-weights", kShape, ""},
    {"--normalization", kShape, ""},
    {"--position-embedding-type", kShape, ""},
    {"--use-rotary-position-embeddings", kShape, ""},
    {"--no-position-embedding", kShape, ""},
    {"--max-position-embeddings", kShape, ""},
    {"--add-bias-linear", kShape, ""},
    {"--disable-bias-linear", kShape, ""},
    {"--add-qkv-bias", kShape, ""},
    {"--qk-layernorm", kShape, ""},
    {"--hidden-dropout", kShape, ""},
    {"--attention-dropout", kShape, ""},
    {"--num-experts", kShape, ""},
    {"--moe-router-topk", kShape, ""},
    {"--moe-ffn-hidden-size", kShape, ""},
    {"--moe-shared-expert-intermediate-size", kShape, ""},
    {"--moe-layer-freq", kShape, ""},
    {"--multi-latent-attention", kShape, ""},
    {"--q-lora-rank", kShape, ""},
    {"--kv-lora-rank", kShape, ""},
    {"--qk-head-dim", kShape, ""},
    {"--qk-pos-emb-head-dim", kShape, ""},
    {"--v-head-dim", kShape, ""},
    {"--mtp-num-layers", kShape, ""},
    // Performance-relevant, not modelled.
    {"--cpu-offloading", kNo, "activation/weight offload to host memory is not modelled"},
    {"--cpu-offloading-num-layers", kNo, "activation offload to host memory is not modelled"},
    {"--cpu-offloading-activations", kNo, "activation offload to host memory is not modelled"},
    {"--cpu-offloading-weights", kNo, "weight offload to host memory is not modelled"},
    {"--fine-grained-activation-offloading", kNo,
     "activation offload to host memory is not modelled"},
    {"--offload-modules", kNo, "activation offload to host memory is not modelled"},
    // CUDA graphs: read by ResolveMegatronArgs (host_issue_us_per_kernel 0).
    {"--enable-cuda-graph", kOk, ""},
    {"--external-cuda-graph", kOk, ""},
    {"--cuda-graph-impl", kOk, ""},
    {"--cuda-graph-scope", kOk, ""},
    {"--cuda-graph-modules", kOk, ""},
    {"--cuda-graph-warmup-steps", kOk, ""},
    {"--moe-expert-capacity-factor", kNo,
     "expert capacity (dropped or padded tokens) is not modelled: experts get balanced loads"},
    {"--moe-pad-expert-input-to-capacity", kNo,
     "padding expert inputs to capacity is not modelled: experts get balanced loads"},
    {"--moe-token-drop-policy", kNo, "token dropping is not modelled"},
    {"--delay-wgrad-compute", kNo,
     "the delayed weight gradient is part of the EP overlap fraction (ep_comm_overlap)"},
    {"--hierarchical-context-parallel-sizes", kNo,
     "hierarchical (a2a+p2p) context parallelism is modelled as the p2p ring"},
    {"--cpu-offloading-double-buffering", kNo, "activation offload is not modelled"},
    {"--first-last-layers-bf16", kNo, "BF16 first/last layers in FP8 runs are not modelled"},
    {"--num-layers-at-start-in-bf16", kNo, "BF16 first/last layers in FP8 runs are not modelled"},
    {"--num-layers-at-end-in-bf16", kNo, "BF16 first/last layers in FP8 runs are not modelled"},
    {"--no-gradient-accumulation-fusion", kNo, "the unfused wgrad accumulation is not modelled"},
    {"--no-bias-swiglu-fusion", kNo, "unfused element-wise kernels are not modelled"},
    {"--no-bias-gelu-fusion", kNo, "unfused element-wise kernels are not modelled"},
    {"--no-bias-dropout-fusion", kNo, "unfused element-wise kernels are not modelled"},
    {"--no-masked-softmax-fusion", kNo, "unfused element-wise kernels are not modelled"},
    {"--no-rope-fusion", kNo, "unfused element-wise kernels are not modelled"},
    {"--no-persist-layer-norm", kNo, "unfused element-wise kernels are not modelled"},
    {"--defer-embedding-wgrad-compute", kNo, "deferred embedding wgrad is not modelled"},
    {"--moe-use-legacy-grouped-gemm", kNo, "the legacy grouped GEMM is not modelled"},
    {"--no-overlap-p2p-communication", kNo, "exposed pipeline p2p is not modelled"},
    {"--microbatch-group-size-per-virtual-pipeline-stage", kNo,
     "the interleaved schedule's group size is not modelled"},
    {"--recompute-activations-moe", kNo, "not modelled"},
    {"--moe-layer-recompute", kNo,
     "MoE layer recompute is not modelled (use --recompute-modules moe)"},
    {"--overlap-grad-reduce-bucket-size", kNo, "bucket sizes are not modelled"},
    {"--ddp-bucket-size", kNo, "bucket sizes are not modelled"},
    {"--empty-unused-memory-level", kNo, "freeing the allocator cache each step is not modelled"},
    {"--moe-router-padding-for-fp8", kNo, "not modelled"},
    {"--moe-router-padding-for-quantization", kNo, "not modelled"},
    {"--sequence-packing", kNo, "packed sequences are not modelled"},
    {"--decoder-seq-length", kNo, "encoder-decoder models are not modelled"},
    {"--encoder-num-layers", kNo, "encoder-decoder models are not modelled"},
    {"--num-layers-per-stage", kNo, "not modelled"},
    {"--fp8-margin", kOk, ""},
    // Harmless: no effect on a step's time or memory (or already how trainsim models it).
    {"--use-mcore-models", kOk, ""},
    {"--use-legacy-models", kOk, ""},
    {"--transformer-impl", kOk, ""},
    {"--use-flash-attn", kOk, ""},
    {"--moe-grouped-gemm", kOk, ""},
    {"--moe-permute-fusion", kOk, ""},
    {"--moe-router-fusion", kOk, ""},
    {"--bias-swiglu-fusion", kOk, ""},
    {"--gradient-accumulation-fusion", kOk, ""},
    {"--masked-softmax-fusion", kOk, ""},
    {"--apply-rope-fusion", kOk, ""},
    {"--no-async-tensor-model-parallel-allreduce", kOk, ""},
    {"--use-torch-optimizer-for-cpu-offload", kOk, ""},
    {"--overlap-cpu-optimizer-d2h-h2d", kOk, ""},
    {"--moe-router-dtype", kOk, ""},
    {"--moe-router-load-balancing-type", kOk, ""},
    {"--moe-aux-loss-coeff", kOk, ""},
    {"--moe-z-loss-coeff", kOk, ""},
    {"--moe-router-score-function", kOk, ""},
    {"--moe-router-pre-softmax", kOk, ""},
    {"--moe-router-enable-expert-bias", kOk, ""},
    {"--moe-router-bias-update-rate", kOk, ""},
    {"--moe-router-topk-scaling-factor", kOk, ""},
    {"--moe-router-num-groups", kOk, ""},
    {"--moe-router-group-topk", kOk, ""},
    {"--moe-router-topk-limited-devices", kOk, ""},
    {"--moe-router-group-topk-limited-devices", kOk, ""},
    {"--moe-input-jitter-eps", kOk, ""},
    {"--moe-per-layer-logging", kOk, ""},
    {"--moe-shared-expert-gate", kOk, ""},
    {"--moe-aux-loss-free", kOk, ""},
    {"--mtp-loss-scaling-factor", kOk, ""},
    {"--rotary-base", kOk, ""},
    {"--rotary-percent", kOk, ""},
    {"--rotary-seq-len-interpolation-factor", kOk, ""},
    {"--rotary-scaling-factor", kOk, ""},
    {"--use-rope-scaling", kOk, ""},
    {"--rope-type", kOk, ""},
    {"--mscale", kOk, ""},
    {"--mscale-all-dim", kOk, ""},
    {"--beta-fast", kOk, ""},
    {"--beta-slow", kOk, ""},
    {"--original-max-position-embeddings", kOk, ""},
    {"--norm-epsilon", kOk, ""},
    {"--layernorm-epsilon", kOk, ""},
    {"--apply-layernorm-1p", kOk, ""},
    {"--apply-residual-connection-post-layernorm", kOk, ""},
    {"--openai-gelu", kOk, ""},
    {"--init-method-std", kOk, ""},
    {"--init-method-xavier-uniform", kOk, ""},
    {"--seed", kOk, ""},
    {"--data-parallel-random-init", kOk, ""},
    {"--lr", kOk, ""},
    {"--lr-*", kOk, ""},
    {"--min-lr", kOk, ""},
    {"--decoupled-lr", kOk, ""},
    {"--decoupled-min-lr", kOk, ""},
    {"--warmup", kOk, ""},
    {"--weight-decay", kOk, ""},
    {"--weight-decay-incr-style", kOk, ""},
    {"--start-weight-decay", kOk, ""},
    {"--end-weight-decay", kOk, ""},
    {"--clip-grad", kOk, ""},
    {"--adam-beta1", kOk, ""},
    {"--adam-beta2", kOk, ""},
    {"--adam-eps", kOk, ""},
    {"--optimizer", kOk, ""},
    {"--loss-scale", kOk, ""},
    {"--initial-loss-scale", kOk, ""},
    {"--min-loss-scale", kOk, ""},
    {"--loss-scale-window", kOk, ""},
    {"--hysteresis", kOk, ""},
    {"--attention-softmax-in-fp32", kOk, ""},
    {"--calculate-per-token-loss", kOk, ""},
    {"--fp8-amax-history-len", kOk, ""},
    {"--fp8-amax-compute-algo", kOk, ""},
    {"--fp8-interval", kOk, ""},
    {"--fp8-wgrad", kOk, ""},
    {"--train-iters", kOk, ""},
    {"--train-samples", kOk, ""},
    {"--exit-interval", kOk, ""},
    {"--exit-duration-in-mins", kOk, ""},
    {"--exit-on-missing-checkpoint", kOk, ""},
    {"--rampup-batch-size", kOk, ""},
    {"--manual-gc", kOk, ""},
    {"--manual-gc-interval", kOk, ""},
    {"--no-check-for-nan-in-loss-and-grad", kOk, ""},
    {"--check-for-nan-in-loss-and-grad", kOk, ""},
    {"--check-weight-hash-across-dp-replicas-interval", kOk, ""},
    {"--distributed-backend", kOk, ""},
    {"--distributed-timeout-minutes", kOk, ""},
    {"--nccl-communicator-config-path", kOk, ""},
    {"--use-distributed-optimizer-*", kOk, ""},
    {"--data-path", kOk, ""},
    {"--train-data-path", kOk, ""},
    {"--valid-data-path", kOk, ""},
    {"--test-data-path", kOk, ""},
    {"--data-cache-path", kOk, ""},
    {"--data-args-path", kOk, ""},
    {"--mock-data", kOk, ""},
    {"--data-impl", kOk, ""},
    {"--split", kOk, ""},
    {"--num-workers", kOk, ""},
    {"--dataloader-type", kOk, ""},
    {"--no-mmap-bin-files", kOk, ""},
    {"--no-create-attention-mask-in-dataloader", kOk, ""},
    {"--reset-position-ids", kOk, ""},
    {"--reset-attention-mask", kOk, ""},
    {"--eod-mask-loss", kOk, ""},
    {"--object-storage-cache-path", kOk, ""},
    {"--tokenizer-*", kOk, ""},
    {"--vocab-file", kOk, ""},
    {"--merge-file", kOk, ""},
    {"--tiktoken-pattern", kOk, ""},
    {"--tiktoken-num-special-tokens", kOk, ""},
    {"--log-*", kOk, ""},
    {"--wandb-*", kOk, ""},
    {"--tensorboard-*", kOk, ""},
    {"--timing-log-level", kOk, ""},
    {"--timing-log-option", kOk, ""},
    {"--no-barrier-with-level-1-timing", kOk, ""},
    {"--barrier-with-L1-time", kOk, ""},
    {"--profile", kOk, ""},
    {"--profile-*", kOk, ""},
    {"--use-pytorch-profiler", kOk, ""},
    {"--record-memory-history", kOk, ""},
    {"--memory-snapshot-path", kOk, ""},
    {"--eval-*", kOk, ""},
    {"--skip-train", kOk, ""},
    {"--save", kOk, ""},
    {"--load", kOk, ""},
    {"--pretrained-checkpoint", kOk, ""},
    {"--save-interval", kOk, ""},
    {"--no-save-optim", kOk, ""},
    {"--no-save-rng", kOk, ""},
    {"--no-load-optim", kOk, ""},
    {"--no-load-rng", kOk, ""},
    {"--finetune", kOk, ""},
    {"--ckpt-*", kOk, ""},
    {"--dist-ckpt-*", kOk, ""},
    {"--async-save", kOk, ""},
    {"--use-dist-ckpt", kOk, ""},
    {"--auto-detect-ckpt-format", kOk, ""},
    {"--use-checkpoint-args", kOk, ""},
    {"--use-checkpoint-opt_param-scheduler", kOk, ""},
    {"--override-opt_param-scheduler", kOk, ""},
    {"--non-persistent-*", kOk, ""},
    {"--write-throughput-to-tensorboard", kOk, ""},
    {"--one-logger-*", kOk, ""},
    {"--no-one-logger", kOk, ""},
    {"--enable-one-logger", kOk, ""},
    {"--straggler-*", kOk, ""},
    {"--log-straggler", kOk, ""},
    {"--enable-ft-package", kOk, ""},
    {"--calc-ft-timeouts", kOk, ""},
    {"--deterministic-mode", kOk, ""},
    {"--use-cpu-initialization", kOk, ""},
    {"--no-initialization", kOk, ""},
    {"--use-tp-pp-dp-mapping", kOk, ""},
    {"--no-load-main-params-from-ckpt", kOk, ""},
    {"--rerun-mode", kOk, ""},
};

bool Matches(const FlagInfo& f, std::string_view name) {
  if (!f.name.empty() && f.name.back() == '*') {
    const std::string_view prefix = f.name.substr(0, f.name.size() - 1);
    return name.size() > prefix.size() && name.substr(0, prefix.size()) == prefix;
  }
  return f.name == name;
}

// The edit distance of a and b, or `limit` when it is `limit` or more. Bounded so that a long
// unknown argument (a 64 KB token in a script) costs O(1) per candidate flag, not O(|a|·|b|):
// the distance is at least the difference in length, and no row of the table goes below it.
size_t Distance(std::string_view a, std::string_view b, size_t limit) {
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) >= limit) return limit;
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    size_t row_min = row[0];
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] != b[j - 1])});
      diag = up;
      row_min = std::min(row_min, row[j]);
    }
    if (row_min >= limit) return limit;
  }
  return std::min(row[b.size()], limit);
}

}  // namespace

const FlagInfo* FindFlag(std::string_view name) {
  for (const FlagInfo& f : kFlags)
    if (Matches(f, name)) return &f;
  return nullptr;
}

std::string NearestFlag(std::string_view name) {
  std::string best;
  size_t best_d = 4;
  auto consider = [&](std::string_view cand) {
    if (cand.empty() || cand.back() == '*') return;
    const size_t d = Distance(name, cand, best_d);
    if (d < best_d) best_d = d, best = std::string(cand);
  };
  for (const FlagInfo& f : kFlags) consider(f.name);
  for (const StrategyField& f : StrategySchema()) {
    std::string_view m = f.megatron;
    while (!m.empty()) {
      const size_t sp = m.find(' ');
      std::string_view token = m.substr(0, sp);
      consider(token.substr(0, token.find_first_of("=:")));
      m = sp == std::string_view::npos ? "" : m.substr(sp + 1);
    }
  }
  return best;
}

}  // namespace trainsim::megatron
