// The tables of megatron_flags.h. Names are Megatron-LM's (megatron/training/arguments.py);
// an entry ending in '*' covers a family by prefix (--log-*, --wandb-*).
#include "spec/megatron_flags.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
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
    {"--pad-vocab-size-to", kShape, ""},  // BigScience Megatron-DeepSpeed
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
    // GPT-OSS-era arguments (megatron/training/arguments.py): sliding-window layers and the
    // gated quick-GELU MLP are read (megatron_model.cc WindowAttention, gated_mlp).
    {"--window-size", kShape, ""},
    {"--window-attn-skip-freq", kShape, ""},
    {"--quick-geglu", kShape, ""},
    {"--softmax-type", kNo,
     "learnable / off-by-one softmax offsets (attention sinks: one logit per head) are costed "
     "as vanilla softmax"},
    {"--activation-func-clamp-value", kNo,
     "the clamp of linear_fc1's output inside quick-GELU is element-wise work not costed"},
    {"--glu-linear-offset", kNo,
     "the offset added to the GLU's linear half is element-wise work not costed"},
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
    {"--qk-nope-head-dim", kShape, ""},            // older spellings of --qk-head-dim,
    {"--qk-rope-head-dim", kShape, ""},            // --qk-pos-emb-head-dim (PAI, MindSpeed)
    {"--use-multi-token-prediction", kShape, ""},  // PAI-Megatron-Patch's MTP
    {"--num-mtp-predictor", kShape, ""},
    // Hybrid Mamba models (pretrain_mamba.py): refused by ResolveMegatronModel.
    {"--hybrid-attention-ratio", kShape, ""},
    {"--hybrid-mlp-ratio", kShape, ""},
    {"--hybrid-override-pattern", kShape, ""},
    {"--spec", kNo,
     "a custom layer-spec module is not read: the model is the one its shape "
     "arguments describe"},
    // epfLLM/Megatron-LLM (megatron/arguments.py, underscores read as dashes).
    {"--use-rms-norm", kShape, ""},
    {"--glu-activation", kShape, ""},
    {"--no-tie-embed-logits", kShape, ""},
    {"--parallel-attn", kNo,
     "attention and MLP computed in parallel from one LayerNorm (Falcon) is costed as the "
     "sequential block"},
    {"--model-name", kOk, ""},
    {"--data-type", kOk, ""},
    {"--vocab-extra-ids-list", kOk, ""},
    {"--wandb-logger", kOk, ""},
    // Megatron-DeepSpeed (microsoft/, bigscience-workshop/): the DeepSpeed engine's settings.
    {"--deepspeed", kNo,
     "the DeepSpeed engine (ZeRO stage, offload, its BF16 optimizer) is set by its config file, "
     "not read from the launch script: give it with --deepspeed-config"},
    {"--deepspeed_config", kNo,
     "a DeepSpeed config file is not read from the launch script: give it with "
     "--deepspeed-config"},
    {"--deepspeed-config", kNo,
     "a DeepSpeed config file is not read from the launch script: give it with "
     "--deepspeed-config"},
    {"--zero-stage", kNo,
     "DeepSpeed's ZeRO stage: give the DeepSpeed config with --deepspeed-config"},
    {"--deepspeed-activation-checkpointing", kNo,
     "DeepSpeed's activation checkpointing: the recompute is Megatron's "
     "(--checkpoint-activations / --recompute-*)"},
    // BigScience Megatron-DeepSpeed (bigscience-workshop/Megatron-DeepSpeed, arguments.py).
    {"--pp-partition-method", kNo,
     "BigScience Megatron-DeepSpeed splits pipeline stages by this layer-type rule (e.g. the "
     "embeddings counted as layers); trainsim splits the transformer layers evenly"},
    {"--embed-layernorm", kOk, ""},  // one LayerNorm after the embedding: negligible
    {"--abort-on-unmet-fused-kernel-constraints", kOk, ""},
    {"--kill-switch-path", kOk, ""},
    {"--train-weighted-split-*", kOk, ""},
    {"--valid-weighted-split-*", kOk, ""},
    {"--test-weighted-split-*", kOk, ""},
    {"--valid-num-workers", kOk, ""},
    // Performance-relevant, not modelled.
    {"--extra-vocab-size", kNo,
     "PAI-Megatron-Patch adds these rows to its tokenizer's vocabulary; the vocabulary is the "
     "model's (--model or --vocab-size)"},
    {"--max-padding-length", kNo,
     "PAI-Megatron-Patch pads fine-tuning samples to this length; the step is costed at "
     "--seq-length"},
    // Layer activation offload: read by ResolveMegatronArgs (exec.offload_activations).
    {"--cpu-offloading", kOk, ""},
    {"--cpu-offloading-num-layers", kOk, ""},
    {"--cpu-offloading-activations", kNo,
     "on by default in Megatron-Core; offload is read from --cpu-offloading-num-layers"},
    {"--cpu-offloading-weights", kNo,
     "offloading the weight copies saved for the backward is not modelled"},
    // Module-level activation offload: read by ResolveMegatronArgs with --offload-modules
    // (exec.offload_modules).
    {"--fine-grained-activation-offloading", kOk, ""},
    // CUDA graphs: read by ResolveMegatronArgs (host_issue_us_per_kernel 0).
    {"--enable-cuda-graph", kOk, ""},
    {"--external-cuda-graph", kOk, ""},
    {"--cuda-graph-impl", kOk, ""},
    {"--cuda-graph-scope", kOk, ""},
    {"--cuda-graph-modules", kOk, ""},
    {"--cuda-graph-warmup-steps", kOk, ""},
    {"--te-rng-tracker", kOk, ""},  // TE's RNG tracker, needed under CUDA graphs: no cost
    // Which tokens an expert over capacity drops (probs or position) does not change the work.
    {"--moe-token-drop-policy", kOk, ""},
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
    {"--sequence-packing", kNo, "packed sequences are not modelled"},
    {"--decoder-seq-length", kNo, "encoder-decoder models are not modelled"},
    {"--encoder-num-layers", kNo, "encoder-decoder models are not modelled"},
    {"--num-layers-per-stage", kNo, "not modelled"},
    {"--fp8-margin", kOk, ""},
    // megatron/training/arguments.py (NVIDIA/Megatron-LM @ 000c4ac2) arguments that change the
    // step and are not modelled.
    {"--no-fp8-wgrad", kNo,
     "the weight-gradient GEMMs run in BF16 under FP8 (Transformer Engine fp8_wgrad off); "
     "costed as FP8"},
    {"--distribute-saved-activations", kNo,
     "full recompute's saved layer inputs split over the tensor-parallel group are not "
     "modelled (each TP rank keeps the whole input)"},
    {"--standalone-embedding-stage", kNo,
     "the input embedding on a pipeline stage of its own (Megatron-LM 2022) is not modelled: "
     "the embedding is on the first transformer stage"},
    {"--moe-extended-tp", kNo,
     "deprecated Megatron-Core 0.8 expert sharding over tp x ep (every rank holds all "
     "experts) is not modelled: the experts are distributed over --expert-model-parallel-size"},
    {"--torch-fsdp2-no-reshard-after-forward", kNo,
     "FSDP2 without reshard after the forward (gathered weights kept until the backward) is "
     "costed as FSDP2 resharding after every forward"},
    {"--overlap-param-gather-with-optimizer-step", kNo,
     "the first bucket's parameter all-gather overlapped with the optimizer step is not "
     "modelled"},
    {"--moe-router-force-load-balancing", kOk, ""},  // balanced routing: what trainsim costs
    {"--moe-apply-probs-on-input", kOk, ""},
    {"--apply-query-key-layer-scaling", kOk, ""},  // a scale in the fused softmax
    {"--cross-entropy-fusion-impl", kOk, ""},      // native or TE: both fused
    {"--no-rope-freq", kOk, ""},
    {"--logging-level", kOk, ""},
    {"--enable-experimental", kOk, ""},  // gates experimental code paths; no cost by itself
    {"--rotary-interleaved", kOk, ""},
    {"--qk-l2-norm", kOk, ""},
    {"--embedding-init-method-std", kOk, ""},
    {"--no-align-grad-reduce", kOk, ""},
    {"--no-align-param-gather", kOk, ""},
    {"--ddp-num-buckets", kNo, "bucket sizes are not modelled"},
    {"--ddp-average-in-collective", kOk, ""},
    {"--ddp-pad-buckets-for-high-nccl-busbw", kOk, ""},
    {"--high-priority-stream-groups", kOk, ""},
    {"--disable-gloo-process-groups", kOk, ""},
    {"--train-sync-interval", kOk, ""},
    {"--no-manual-gc-eval", kOk, ""},
    {"--disable-bf16-reduced-precision-matmul", kOk, ""},
    {"--use-te-activation-func", kOk, ""},
    {"--no-clone-scatter-output-in-embedding", kOk, ""},
    {"--check-for-spiky-loss", kOk, ""},
    {"--check-for-large-grads", kOk, ""},
    {"--dist-ckpt-strictness", kOk, ""},
    {"--save-retain-interval", kOk, ""},
    {"--no-ckpt-fully-parallel-save", kOk, ""},
    // Harmless: no effect on a step's time or memory (or already how trainsim models it).
    {"--use-mcore-models", kOk, ""},
    {"--use-legacy-models", kOk, ""},
    {"--transformer-impl", kOk, ""},
    {"--use-flash-attn", kOk, ""},
    {"--moe-router-fusion", kOk, ""},
    {"--bias-swiglu-fusion", kOk, ""},
    {"--gradient-accumulation-fusion", kOk, ""},
    {"--masked-softmax-fusion", kOk, ""},
    {"--apply-rope-fusion", kOk, ""},
    {"--no-async-tensor-model-parallel-allreduce", kOk, ""},
    {"--use-torch-optimizer-for-cpu-offload", kOk, ""},
    {"--overlap-cpu-optimizer-d2h-h2d", kOk, ""},
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
    {"--rope-scaling-factor", kOk, ""},
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
    // PAI-Megatron-Patch (alibaba/Pai-Megatron-Patch, examples/*/run_mcore_*.sh): its tokenizer
    // and dataset classes, and pretrain vs finetune mode (the SFT loss mask: no cost).
    {"--patch-tokenizer-type", kOk, ""},
    {"--dataset", kOk, ""},
    {"--train-mode", kOk, ""},
    {"--vocab-file", kOk, ""},
    {"--merge-file", kOk, ""},
    {"--tiktoken-pattern", kOk, ""},
    {"--tiktoken-num-special-tokens", kOk, ""},
    {"--log-*", kOk, ""},
    {"--no-log-*", kOk, ""},
    {"--num-dataset-builder-threads", kOk, ""},
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

// Lower bounds of the edit distance of `name` (its byte histogram in `hist`) and `cand`: the
// difference in length, and the larger count of the bytes each has that the other lacks (an
// edit fixes at most one of each). O(|cand|); with the byte-class masks of Candidates() it
// rejects almost every candidate, so the table of Distance is filled for a few near names
// only and a script full of unknown or garbled arguments stays cheap (it was 90% of the time
// of the megatron fuzz target).
size_t LowerBound(std::string_view name, std::array<int, 256>& hist, std::string_view cand) {
  const size_t len_diff =
      name.size() > cand.size() ? name.size() - cand.size() : cand.size() - name.size();
  size_t extra = 0;  // bytes of cand not matched in name
  for (unsigned char c : cand)
    if (--hist[c] < 0) ++extra;
  for (unsigned char c : cand) ++hist[c];
  const size_t matched = cand.size() - extra;
  return std::max({len_diff, extra, name.size() - matched});
}

// The edit distance of a and b, or `limit` when it is `limit` or more (limit <= kMaxLimit).
// Only the band |i - j| < limit of the table can stay below the limit; b is a flag name, short.
constexpr size_t kMaxLimit = 4;
constexpr size_t kMaxFlag = 95;
size_t Distance(std::string_view a, std::string_view b, size_t limit) {
  if (b.size() > kMaxFlag || limit > kMaxLimit) return limit;
  if ((a.size() > b.size() ? a.size() - b.size() : b.size() - a.size()) >= limit) return limit;
  std::array<size_t, kMaxFlag + 1> row;
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    const size_t lo = i > limit ? i - limit : 1;
    const size_t hi = std::min(b.size(), i + limit);
    size_t diag = row[lo - 1];
    // Cells left of the band are >= limit; so is the one right of it, read as `up` next row.
    row[lo - 1] = lo == 1 ? i : limit;
    size_t row_min = row[lo - 1];
    for (size_t j = lo; j <= hi; ++j) {
      const size_t up = row[j];
      size_t v = std::min(up, row[j - 1]) + 1;
      if (diag + (a[i - 1] != b[j - 1]) < v) v = diag + (a[i - 1] != b[j - 1]);
      row[j] = std::min(v, limit);
      diag = up;
      row_min = std::min(row_min, row[j]);
    }
    if (hi < b.size()) row[hi + 1] = limit;
    if (row_min >= limit) return limit;
  }
  return std::min(row[b.size()], limit);
}

// The names NearestFlag suggests, in order of preference (the table, then the schema's
// Megatron-LM spellings), each with the set of its byte classes (64 buckets: a byte class
// missing from one name and present in the other needs an edit, however bytes collide).
struct Candidate {
  std::string_view name;
  uint64_t mask;
};

uint64_t ByteMask(std::string_view s) {
  uint64_t m = 0;
  for (unsigned char c : s) m |= uint64_t{1} << (c % 64);
  return m;
}

const std::vector<Candidate>& Candidates() {
  static const std::vector<Candidate> all = [] {
    std::vector<Candidate> v;
    auto add = [&](std::string_view cand) {
      if (!cand.empty() && cand.back() != '*') v.push_back({cand, ByteMask(cand)});
    };
    for (const FlagInfo& f : kFlags) add(f.name);
    for (const StrategyField& f : StrategySchema()) {
      std::string_view m = f.megatron;
      while (!m.empty()) {
        const size_t sp = m.find(' ');
        std::string_view token = m.substr(0, sp);
        add(token.substr(0, token.find_first_of("=:")));
        m = sp == std::string_view::npos ? "" : m.substr(sp + 1);
      }
    }
    return v;
  }();
  return all;
}

}  // namespace

const FlagInfo* FindFlag(std::string_view name) {
  for (const FlagInfo& f : kFlags)
    if (Matches(f, name)) return &f;
  return nullptr;
}

std::string NearestFlag(std::string_view name) {
  std::string best;
  size_t best_d = kMaxLimit;
  std::array<int, 256> hist{};
  for (unsigned char c : name) ++hist[c];
  const uint64_t mask = ByteMask(name);
  for (const Candidate& c : Candidates()) {
    const size_t len_diff =
        name.size() > c.name.size() ? name.size() - c.name.size() : c.name.size() - name.size();
    if (len_diff >= best_d) continue;
    // Byte classes one has and the other lacks: each takes an edit (a cheap first filter).
    const auto only_c = static_cast<size_t>(std::popcount(c.mask & ~mask));
    const auto only_n = static_cast<size_t>(std::popcount(mask & ~c.mask));
    if (std::max(only_c, only_n) >= best_d) continue;
    if (LowerBound(name, hist, c.name) >= best_d) continue;
    const size_t d = Distance(name, c.name, best_d);
    if (d < best_d) best_d = d, best = std::string(c.name);
  }
  return best;
}

}  // namespace trainsim::megatron
