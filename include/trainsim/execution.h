// Execution: how a framework runs the step on the host and which optimizer it steps, as far as
// the time of small, launch-bound steps needs it (docs/MODEL.md, "Launch floor and host issue",
// "Optimizer"). Framework profiles (data/frameworks.json) fill it.
#pragma once

#include <cstdint>

namespace trainsim {

enum class OptimizerKind : uint8_t {
  kAdam,  // Adam / AdamW on every parameter
  kMuon,  // Muon (Newton-Schulz orthogonalised momentum) on the hidden matrices, Adam elsewhere
  kAdamW8bit,        // bitsandbytes 8-bit AdamW: m and v in 8 bits with block-wise scales
  kPagedAdamW8bit,   // the same in CUDA unified (paged) memory, outside the torch allocator
  kPagedAdamW32bit,  // 32-bit AdamW states in paged memory
  kAdafactor,        // factored second moment (row and column vectors), no first moment
  kSgd,              // SGD with momentum (one state)
  kLion,             // Lion: one momentum state (Chen et al. 2023)
};

// How the optimizer's element-wise update is launched.
enum class OptimizerImpl : uint8_t {
  kFused,      // one multi-tensor kernel over all tensors (apex/TE FusedAdam, torch fused=True)
  kForeach,    // torch foreach: one multi-tensor launch per arithmetic step
  kPerTensor,  // a Python loop: every arithmetic step of every tensor is its own kernel
};

// How a 4-bit base weight (method qlora) becomes the bf16/fp16 operand of its GEMM.
enum class DequantKernel : uint8_t {
  // One fused CUDA kernel per GEMM that reads the packed weight and writes 16-bit values,
  // re-run in backward for the data gradient (bitsandbytes matmul_4bit, torchao NF4).
  kFused,
  // auto-gptq's trainable QuantLinear path (Qwen *-Int4 GPTQ checkpoints under PEFT): the
  // weight is unpacked by PyTorch element-wise ops with int32/int8 temporaries; autograd keeps
  // the dequantised weight for the data gradient, so backward does not dequantise again.
  kTorchUnpack,
};

// Host issue per cost-graph kernel of a PyTorch training script, microseconds, measured on one
// H100 host with PyTorch 2.11 (data/measurements/h100_small_kernels.csv; data/frameworks.json
// "about"): eager 81, torch.compile without CUDA graphs 70. The profiles of eager and compiled
// stacks in data/frameworks.json carry the same figures.
constexpr double kEagerHostIssueUs = 81;
constexpr double kCompiledHostIssueUs = 70;

// DeepSpeed ZeRO-3's host time per gathered weight matrix and pass, microseconds: the fixed part
// of the QwenLM/Qwen README's ZeRO-3 rows (Qwen-1.8B full fine-tuning on one A100: 2.1-2.2 s per
// step at 256-1024 tokens whatever the length, 0.67 s of modelled GPU work and kernel issue) over
// 24 layers x 5 gathered matrices x 3 passes (forward, recomputed forward, backward) x 8
// micro-batches; norms and biases stay resident (stage3_param_persistence_threshold, HF "auto"
// = 10 x hidden). Checked on the same table's 7B (2 GPUs) and 72B LoRA (4 GPUs) rows.
constexpr double kDeepSpeedZero3FetchUs = 500;

struct Execution {
  // Host time to issue one GPU kernel, microseconds: the step runs no faster than its kernels
  // can be launched (eager PyTorch tens of us, CUDA graphs far less); 0 = never host bound.
  // 30: eager stacks on bare-metal hosts, bounded by the public Megatron-LM runs
  // (data/frameworks.json, "about"; docs/MODEL.md, "Launch floor and host issue").
  double host_issue_us_per_kernel = 30;
  // Host time of DeepSpeed ZeRO-3's module hooks per gathered weight matrix and pass (fetch,
  // release and the gradient's reduce-partition hook), microseconds; it adds to the kernels'
  // host issue, so it binds only when the GPU work is short. 0 outside DeepSpeed stage 3.
  // DeepSpeed: kDeepSpeedZero3FetchUs (docs/MODEL.md, "ZeRO-3 hooks").
  double zero3_fetch_us = 0;
  OptimizerKind optimizer = OptimizerKind::kAdam;
  OptimizerImpl optimizer_impl = OptimizerImpl::kFused;
  int muon_ns_steps = 5;         // Newton-Schulz iterations per Muon step
  bool muon_distributed = true;  // each DP rank orthogonalises its share, then all-gather
  // The element-wise work (norms, residual adds, activations, loss, optimizer update) runs as
  // compiler-generated (torch.compile / Inductor) or hand-fused kernels: memory-bound ops take
  // the hardware's measured Efficiency::mem_fused instead of the fitted `mem`.
  bool fused_elementwise = false;
  DequantKernel dequant = DequantKernel::kFused;  // 4-bit base weights (method qlora)
  // The model code runs its RMSNorm, rotary embedding and gated activation as chains of eager
  // PyTorch ops (Hugging Face Transformers modeling code, torchtune modules without
  // torch.compile): the norm upcasts to fp32 and makes a pass per arithmetic step, RoPE builds
  // rotate_half with a slice, negation and cat, SiLU and the gate product are two kernels. The
  // graph then costs those passes, their kernels and the tensors autograd saves for them
  // (graph/graph.cc) instead of one fused kernel each.
  bool eager_modules = false;
  // The training loop keeps gradients as param.grad tensors that zero_grad(set_to_none=True)
  // frees after every optimizer step (torch-native loops: torchtune, a plain Transformers/PEFT
  // script), not persistent gradient buffers (Megatron-LM, DeepSpeed ZeRO): with one
  // micro-batch per step no gradient exists during the forward, so the peak is the larger of
  // the forward's and the backward's working sets, not their sum (memory/memory.h).
  bool grad_set_to_none = false;
  // torchtune optimizer_in_bwd: each parameter is stepped in its post-accumulate-grad hook and
  // its gradient freed at once, so about one layer's gradients are resident
  // (torchtune docs, "Memory optimization overview": fusing the optimizer step into backward).
  bool optimizer_in_backward = false;
  // torchtune enable_activation_offloading: the saved activations of the transformer layers go
  // to pinned host memory on a side stream during the forward and come back for the backward;
  // about two layers' worth (the one copied out and the one copied back) stay in HBM.
  bool offload_activations = false;
  // Megatron-Core fine-grained activation offloading: an OffloadModule mask (strategy.h) of the
  // modules whose saved tensors go to host memory during the forward and come back before
  // their backward; copies overlap the layer's compute and only their excess is exposed
  // (docs/MODEL.md, "Activation offload"). offload_activations is every module.
  int offload_modules = 0;
  // FSDP CPU offload (torchtune fsdp_cpu_offload, FSDP2 CPUOffloadPolicy): the parameter
  // shards and their gradients live in host memory and the optimizer steps there; HBM holds
  // only the layers gathered for the current computation (PyTorch docs, torch.distributed.fsdp
  // CPUOffloadPolicy: "offloads parameters, gradients, and optimizer states to CPU").
  bool offload_params = false;
  // Bytes the unfused loss holds per logit (token x vocabulary entry) at its peak; 0: 6, the
  // Megatron-LM path (16-bit logits and one fp32 copy that the softmax and its gradient reuse).
  // Profile key loss_bytes_per_logit: data/frameworks.json derives it from each stack's loss
  // code (sim/stage_memory.cc, LossBytesPerLogit).
  double loss_bytes_per_logit = 0;
  // The model code keeps its logits 16-bit and only autocast makes the loss fp32 (Qwen1's
  // modeling_qwen.py has no .float()): under DeepSpeed ZeRO, which runs the 16-bit module
  // without autocast, loss_bytes_per_logit does not apply. Profile key loss_fp32_by_autocast.
  bool loss_fp32_by_autocast = false;
  // DeepSpeed ZeRO-1/2 gradient buckets: elements of each of the two reduce_bucket_size buffers
  // of the 16-bit dtype that its backward allocates with contiguous_gradients and overlap_comm
  // (deepspeed/runtime/zero/stage_1_and_2.py, backward: ipg_buffer); 0 = none. Profile key
  // deepspeed_reduce_bucket_elems.
  double zero_reduce_bucket_elems = 0;
  // Parameter-sized temporaries of torch AdamW's foreach update (_multi_tensor_adamw), in the
  // trainable parameters' dtype, alive at the optimizer step besides weights, gradients and
  // states: PyTorch 2.0 makes exp_avg_sq_sqrt = _foreach_sqrt(...) and denom = _foreach_add(...)
  // (2), later releases add eps in place (1); 0 = none (fused). Not under DeepSpeed ZeRO, whose
  // own optimizer steps. Profile key adam_foreach_temporaries.
  int adam_foreach_temporaries = 0;
  // RL with a KL reference: for the reference's forward the trainer swaps the policy's weight
  // shard out to pinned host memory and the reference's in, then back (NeMo RL policy workers,
  // use_reference_model): the policy's shard sits on the host too. false: the reference is a
  // module of its own whose weights live on the host and stream in for its forward (verl
  // actor_rollout_ref.ref.fsdp_config.param_offload, set in its recipes), the policy stays in
  // HBM. Profile key rl_reference_swap (src/rl/step.cc, host_memory.cc).
  bool reference_swap = true;
};

}  // namespace trainsim
