// Bytes per rank of one pipeline stage: model states under ZeRO/FSDP (Rajbhandari et al. 2020,
// "ZeRO", section 5), activations of the in-flight micro-batches, transient peaks, overheads.
#pragma once

#include <span>
#include <vector>

#include "graph/graph.h"
#include "trainsim/report.h"
#include "trainsim/strategy.h"

namespace trainsim::memory {

// Allocator fragmentation as a fraction of the peak allocated bytes (reserved = peak*(1+f) + ...).
constexpr double kFragmentation = 0.05;

struct StageInput {
  // The parameter groups one rank of the stage holds (a view: the caller keeps them alive).
  std::span<const graph::ParamGroup> params;
  double dense_shard = 1;     // DP x CP: shards non-expert groups under ZeRO
  double expert_shard = 1;    // expert DP: shards expert groups under ZeRO
  double act_per_mb = 0;      // saved activations of one micro-batch through the whole stage
  double inflight = 1;        // from schedule::InflightMicroBatches
  double transient = 0;       // largest short-lived buffer (recompute, loss, gradients)
  double fsdp_unsharded = 0;  // params gathered at once under ZeRO-3 (current + prefetched layer)
  double low_precision_weight_cache = 0;  // params kept as FP8 copies (bytes per param = 1)
  bool fp8_params_only = false;  // params held in FP8 only (--fp8-param-gather): no 16-bit copy
  // For the phase peak of Execution::grad_set_to_none loops and for activation offloading:
  double layers = 1;                // transformer layers on the stage
  double head_saved = 0;            // of act_per_mb: the embedding's and the loss's saved bytes
  double loss_transient = 0;        // the loss backward's working set besides the saved logits
  double layer_transient = 0;       // one layer's backward working set (recompute, intermediates)
  bool single_micro_batch = false;  // one micro-batch per optimizer step (no accumulation)
  // Activation offload: the offloaded bytes of one layer and micro-batch (already out of
  // act_per_mb); the layer being copied out and the one copied back stay in HBM.
  double offload_per_layer = 0;
};

// Fills the memory fields of `out` (weights, grads, optimizer, activations, peak, reserved):
// weights of every group, gradients and optimizer states of the trainable ones. The peak is
// their sum, except for loops whose gradients are freed after every step
// (Execution::grad_set_to_none) running one micro-batch per step: no gradient exists during the
// forward, and the backward frees each layer's activations as its gradients appear, so
//   peak = weights + optimizer + max(activations + loss working set,
//                                    max(gradients, layer activations) + one layer's working set).
// optimizer_in_backward leaves one layer's gradients resident; activation offloading two
// layers' offloaded activations (the loss's stay).
void StageMemory(const StageInput& in, const Strategy& s, StageReport& out);

// What one rank of a stage keeps in host (CPU) memory, bytes: exactly what StageMemory moves out
// of HBM, plus the host copies the host optimizer steps on (docs/FINETUNE.md, "Host memory").
struct HostBytes {
  double optimizer = 0;    // offloaded share of the optimizer states (and fp32 master weights)
  double grads = 0;        // gradients the host optimizer reads
  double params = 0;       // FSDP CPU offload: the parameter shards
  double activations = 0;  // offloaded saved activations of every layer and in-flight micro-batch
  double paged = 0;        // paged optimizer states (unified memory: paged out under pressure)
  double pinned = 0;       // of the above: page-locked buffers the copies DMA into
  double Total() const { return optimizer + grads + params + activations + paged; }
};
// - optimizer offload (Strategy::offload_optimizer; DeepSpeed ZeRO-Offload, Megatron-LM
//   --optimizer-cpu-offload): the host share of the sharded optimizer states, and an fp32
//   gradient per parameter of that share, which the CPU Adam reads (DeepSpeed
//   deepspeed/runtime/zero/stage_1_and_2.py keeps the fp32 partition's .grad on the CPU; Megatron
//   HybridDeviceOptimizer copies the gradients into pinned CPU tensors). Ren et al. 2021
//   ("ZeRO-Offload", section 4): fp32 parameters, momentum, variance and gradients on the CPU,
//   16 bytes per parameter of the partition.
// - FSDP CPU offload (Execution::offload_params; FSDP2 CPUOffloadPolicy): the parameter and
//   gradient shards themselves, in their training dtypes (no fp32 gradient copy).
// - activation offload: every layer's offloaded bytes of every in-flight micro-batch, in pinned
//   host tensors (torchtune OffloadActivations use_pin_memory=True; Megatron-Core fine-grained
//   offloading).
// - paged optimizers: the states that CUDA unified memory pages out (bitsandbytes paged
//   optimizers allocate them with cudaMallocManaged), counted whole: the worst case the host
//   must be able to hold.
HostBytes HostStageMemory(const StageInput& in, const Strategy& s);

// The stacks' memory habits (Execution's profile keys), one rule each for the model and for the
// report's assumed list. DeepSpeed's engine runs ZeRO without FSDP (zero >= 1, fsdp off).
bool DeepSpeedEngine(const Strategy& s);
// Bytes per token and vocabulary entry at the loss's peak: 2 with a fused or chunked
// cross-entropy; else the stack's loss_bytes_per_logit, or 6 (Megatron-LM's unfused path: the
// 16-bit logits and one fp32 copy that the softmax and its gradient reuse, 2 + 4). Model code
// whose logits go fp32 only under autocast (loss_fp32_by_autocast) keeps a 16-bit loss under
// DeepSpeed, which runs the module without autocast: logits, shifted copy, log-softmax, 2 each.
double LossBytesPerLogit(const Strategy& s);
// DeepSpeed ZeRO-1/2's two 16-bit reduce buckets (zero_reduce_bucket_elems) are held.
bool HoldsReduceBuckets(const Strategy& s);
// torch AdamW's foreach update makes adam_foreach_temporaries parameter-sized temporaries at the
// step: DeepSpeed steps with its own optimizer, optimizer_in_backward one parameter at a time,
// an offloaded optimizer on the host.
bool TorchForeachStep(const Strategy& s);

}  // namespace trainsim::memory
