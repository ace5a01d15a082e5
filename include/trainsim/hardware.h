// HardwareSpec: one GPU type and the cluster fabric around it, with its calibrated efficiencies.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainsim/status.h"

namespace trainsim {

enum class DType { kFp32, kTf32, kFp16, kBf16, kFp8, kMxfp8, kFp4 };
// Bytes of a model weight held in the training dtype: fp32 and tf32 keep fp32 weights (TF32 only
// changes how the GEMMs multiply); the 16-bit and low-precision recipes keep 16-bit weights
// (fp8/fp4 GEMMs quantize them on the fly).
constexpr double WeightBytes(DType d) {
  return d == DType::kFp32 || d == DType::kTf32 ? 4.0 : 2.0;
}

std::string_view DTypeName(DType d);
// True for the FP8 / MXFP8 / FP4 GEMM precisions (Transformer Engine low-precision recipes).
inline bool IsLowPrecision(DType d) {
  return d == DType::kFp8 || d == DType::kMxfp8 || d == DType::kFp4;
}
// DTypeName's names (lower case) and the spellings "bfloat16", "float16", "float32", "e4m3",
// "hybrid", "fp4", "mxfp4".
Result<DType> ParseDType(std::string_view s);

// Efficiencies are fractions of the nominal peak that a well-tuned framework reaches; they are
// fitted on public measured runs (docs/VALIDATION.md) and stored in the hardware preset. Each
// field's key, rule and calibration bounds are in EfficiencySchema() (trainsim/schema.h).
struct Efficiency {
  double gemm_max = 0.80;  // best GEMM efficiency for large, well-shaped matmuls
  // Reduction depth k at which a GEMM's main loop reaches half its asymptotic rate: the factor
  // k/(k+gemm_k_half) (prologue/epilogue of each output tile against its k-loop). Measured on
  // H100 (data/measurements/h100_small_kernels.csv: k 768 -> 0.62 of peak, k >= 4096 -> 0.70).
  double gemm_k_half = 100;
  // Optional extra factor x/(x+gemm_half_dim) on the output dimensions m and n; 0 = none (the
  // measured cuBLAS rates show no such loss beyond tile and wave quantization).
  double gemm_half_dim = 0;
  double grouped_gemm = 0.75;  // grouped (MoE expert) GEMM efficiency relative to dense GEMM
  double attn_fwd = 0.65;      // flash-attention forward, fraction of peak (causal FLOPs)
  double attn_bwd = 0.50;      // flash-attention backward
  // FlashAttention-2 (no Hopper/Blackwell-specific kernels), used by stacks without TE/cuDNN
  // attention (framework profile "attention": "fa2"); <= 0 means same as attn_fwd/attn_bwd.
  double attn_fa2_fwd = -1;
  double attn_fa2_bwd = -1;
  // Block-sparse attention through FlexAttention (Triton) kernels, used for block-sparse patterns
  // (AttentionKind::kBlockSparse); <= 0 means same as attn_fwd/attn_bwd.
  double attn_flex_fwd = -1;
  double attn_flex_bwd = -1;
  double mem = 0.80;  // memory-bound kernels, fraction of HBM bandwidth
  // Memory-bound kernels of stacks that compile or hand-fuse their element-wise work
  // (Execution::fused_elementwise: torch.compile, llm.c), whose graph then holds all of it;
  // measured per GPU (docs/MODEL.md, "Memory-bound kernels"). <= 0 means `mem`.
  double mem_fused = -1;
  double scaleup_bus = 0.80;       // NCCL bus bandwidth / nominal, scale-up domain
  double nic_bus = 0.85;           // NCCL bus bandwidth / nominal, across NICs
  double a2a_scaleup = 0.60;       // all-to-all bandwidth / nominal, scale-up domain
  double a2a_nic = 0.50;           // all-to-all bandwidth / nominal, across NICs
  double fp8_gemm_speedup = 1.50;  // achieved FP8/BF16 GEMM speed ratio (peak ratio is 2)
  double mxfp8_gemm_speedup = -1;  // MXFP8 (block-scaled) recipe; <= 0 means fp8_gemm_speedup
  double fp4_gemm_speedup = 2.20;  // achieved FP4/BF16 GEMM speed ratio
  double layer_overhead_us = 30;   // host/launch overhead per layer per micro-batch (fwd+bwd)
  // Shortest time a kernel occupies the GPU when kernels run back to back (launch, ramp-up and
  // drain of a tiny kernel), microseconds; every kernel of an op takes at least this long.
  double kernel_floor_us = 2.0;
  double step_overhead_s = 0.0;  // fixed per-step overhead (data, logging, sync)
  double comm_overlap = 0.90;    // fraction of overlappable comm hidden when it is overlapped
  // The day `trainsim calibrate` fitted these values ("YYYY-MM-DD", the preset's
  // efficiency.fitted_date); "" = not calibrated. Borrowed with the values by efficiency_from.
  std::string fitted_date;
};

struct HardwareSpec {
  std::string id;
  std::string name;
  // Dense peak tensor throughput, FLOP/s.
  double peak_bf16_flops = 0;
  double peak_fp16_flops = 0;
  double peak_fp8_flops = 0;
  double peak_fp4_flops = 0;
  double peak_fp32_flops = 0;
  double peak_tf32_flops = 0;  // TF32 tensor cores (fp32 storage, 10-bit mantissa GEMMs); 0 = none
  double hbm_bytes = 0;        // capacity
  double hbm_bw_bytes_per_s = 0;
  int sm_count = 0;
  int scaleup_domain = 8;             // GPUs per scale-up (NVLink) domain
  double scaleup_bw_bytes_per_s = 0;  // per GPU per direction
  // Collective latency (docs/MODEL.md, "Collective latency"): a fixed start-up per collective
  // plus a cost per ring step, inside the scale-up domain and across NICs; a tree all-reduce
  // across domains pays tree_level per level of the inter-node tree.
  double scaleup_latency_s = 3e-6;      // start-up of a collective inside the domain
  double scaleup_hop_latency_s = 0;     // per ring step between members of one domain
  double nic_bw_bytes_per_s = 0;        // per GPU per direction
  double nic_latency_s = 8e-6;          // start-up of a collective across domains
  double nic_hop_latency_s = 0;         // per ring step that crosses a NIC
  double nic_tree_level_latency_s = 0;  // per level of an inter-node tree (all-reduce); 0 = none
  double host_link_bw_bytes_per_s = 32e9;
  // Scale-up fabric: "nvlink" (NVLink / NVSwitch: one bus efficiency for every group size,
  // Efficiency::scaleup_bus) or "pcie" (GPUs behind PCIe switches: the bus bandwidth a ring gets
  // depends on how many GPUs it spans, through shared switch uplinks and the CPU socket link).
  std::string scaleup_topology = "nvlink";
  // Measured bus efficiency (fraction of scaleup_bw_bytes_per_s) by group size inside the
  // scale-up domain, for ring collectives and for all-to-all; empty = the Efficiency fields.
  // A group size between two entries takes the next larger entry's value.
  std::vector<std::pair<int, double>> scaleup_bus_by_group;
  std::vector<std::pair<int, double>> scaleup_a2a_by_group;
  double tdp_w = 0;
  // Power cap: an override that lowers tdp_w below the preset's rated figure lowers the tensor
  // clocks, and the peaks with them, by this factor (ApplyHardwareOverrides; 1 = rated).
  double power_cap_clock = 1;
  double rated_tdp_w = 0;  // the preset's tdp_w before a power-cap override (0 = not capped)
  double price_usd_per_gpu_hour = 0;
  Efficiency eff;
  // Efficiency fields whose values come from a measurement on this hardware (the file's
  // "efficiency_pinned", with the measurement in "efficiency_measured"): `trainsim calibrate`
  // keeps them instead of fitting them.
  std::vector<std::string> efficiency_pinned;

  // Catalogue metadata (data/hardware/README.md). None of it changes a simulated number.
  std::string source;                    // document of the compute / memory figures
  std::string source_date;               // its date, "YYYY" or "YYYY-MM"; "" = not recorded
  std::string price_source, price_date;  // of price_usd_per_gpu_hour (0 = none recorded)
  // A typical reserved (committed-use, capacity block) or spot price; 0 = none recorded.
  double price_reserved_usd_per_gpu_hour = 0;
  std::string price_reserved_source, price_reserved_date;
  int gpus_per_node = 0;  // accelerators per server (host); 0 = not recorded
  // Host (CPU) memory of one server, bytes: the bound of what optimizer / parameter / activation
  // offload and paged optimizers keep on the host (docs/FINETUNE.md, "Host memory"). The file's
  // host_mem_gib; a file without it gets a default that the reports list as assumed
  // (twice the server's HBM: src/spec/hardware_default.h, HostMemBytesPerNode).
  double host_mem_bytes = 0;
  int rails = 0;  // scale-out NICs (rails) per server; 0 = not recorded
  // A cloud instance shape names the silicon preset its chip figures are copied from
  // ("aws_p5_48xlarge" -> "h100_sxm_80gb"); "" = a silicon profile.
  std::string instance_of;
  // The source document and date of one group of figures ("peak_tflops", "hbm", "scaleup", "nic",
  // "tdp_w", ...): the file's "sources" object.
  struct FieldSource {
    std::string field, document, date;
  };
  std::vector<FieldSource> sources;
  // True when the efficiencies were fitted on public measured runs of this very preset (its own
  // "efficiency" block with a fitted_date); false when they are borrowed (efficiency_from), the
  // nominal defaults, or overridden. Reports mark uncalibrated hardware and widen the band.
  bool calibrated = false;
  // True when the preset's own efficiency block comes from microbenchmarks of this hardware (the
  // file's "efficiency_measured" provenance) and was not fitted: still uncalibrated.
  bool efficiency_measured = false;
  std::string efficiency_from;  // the preset the efficiencies are borrowed from; "" = none

  // Peak FLOP/s for GEMMs in `d`; 0 when unsupported.
  double PeakFlops(DType d) const;
  // Bus efficiency of a ring collective / an all-to-all over `group` GPUs of one scale-up domain.
  double ScaleupBusEfficiency(int group) const;
  double ScaleupA2aEfficiency(int group) const;
};

// One line for reports on an uncalibrated spec (!hw.calibrated): "uncalibrated hardware:
// efficiencies borrowed from h100_sxm_80gb, not fitted on <id>; wider uncertainty band".
std::string UncalibratedNote(const HardwareSpec& hw);
// "calibrated <fitted_date>", "uncalibrated (from <id>)", "uncalibrated (measured)" (own block
// from microbenchmarks, not fitted) or "uncalibrated (nominal)".
std::string CalibrationStatus(const HardwareSpec& hw);

// Parses a hardware preset (data/hardware/*.json schema, docs/INPUTS.md). A spec without an
// "efficiency" block that names "efficiency_from": "<preset id>" borrows that embedded preset's
// efficiencies (never a file).
Result<HardwareSpec> ParseHardwareJson(std::string_view text, std::string_view origin);
// Applies overrides such as {"nic_gbps_per_gpu": 200, "hbm_gib": 96} (the preset's own keys).
Status ApplyHardwareOverrides(HardwareSpec& hw, std::string_view json_object,
                              std::string_view origin);
// Checks every number of `hw` against its physical range (finite, inside the documented bounds
// of docs/INPUTS.md, "Input limits"; efficiencies by their schema rules). Parsing, overrides and
// Simulate call it, so a spec from any door meets the same ranges.
Status ValidateHardware(const HardwareSpec& hw);
// An embedded preset by id (see ListHardwarePresets); never reads a file. NotFound lists the ids.
Result<HardwareSpec> LoadHardwarePreset(std::string_view id);
// Reads and parses a hardware file; NotFound names the path.
Result<HardwareSpec> LoadHardwareFile(std::string_view path);
// Convenience for command lines: the preset `id_or_path` if there is one, else, if the argument
// looks like a path (contains '/' or ".json"), the file. Servers: LoadHardwarePreset or
// ParseHardwareJson, so that a request cannot name a file.
Result<HardwareSpec> LoadHardware(std::string_view id_or_path);

}  // namespace trainsim
