// Input limits: the one table of how much input trainsim accepts, shared by every front-end
// (the CLI now, the REST server and the Python module later). A limit is a refusal with a
// message that names it, never a crash, a hang or an out-of-memory kill. docs/INPUTS.md
// ("Input limits") lists the same values; tests/cli_probes.txt probes each one.
#pragma once

#include <cstddef>
#include <cstdint>

namespace trainsim::limits {

// --- Text ---------------------------------------------------------------------------------------
// Largest file read as input (model, hardware, strategy, validation cases): 16 MiB. The largest
// real input is a validation file of a few hundred KiB; an HF config.json is a few KiB.
inline constexpr int64_t kMaxInputFileBytes = int64_t{16} << 20;
// Largest request body the REST server accepts: 1 MiB (a model + hardware + strategy is < 64 KiB).
inline constexpr int64_t kMaxRequestBodyBytes = int64_t{1} << 20;
// Deepest nesting of JSON arrays/objects in any input. The real inputs nest at most 4 levels;
// the bound keeps every recursive walk of a parsed document (copy, compare, dump) shallow.
inline constexpr int kMaxJsonDepth = 64;

// --- Strategy -----------------------------------------------------------------------------------
// Each parallel degree (tp, pp, vpp, cp, ep, etp): <= 2^20. With world_size <= 2^24 every
// product of two or three degrees fits in int64 and the model's sizes in int.
inline constexpr int kMaxParallelDegree = 1 << 20;
// GPUs in one job (world_size, search --gpus, sweep --gpus): <= 2^24 (16.7 M; the largest
// published training job is ~10^5 GPUs).
inline constexpr int kMaxWorldSize = 1 << 24;
// Sequence length in tokens: <= 2^24 (16.7 M; the longest published contexts are ~10^7).
inline constexpr int kMaxSeqLen = 1 << 24;
// Micro-batch size (sequences): <= 2^20.
inline constexpr int kMaxMicroBatch = 1 << 20;
// Micro-batches per DP rank per step: <= 2^20 (the event-driven timeline has its own bound).
inline constexpr int kMaxMicroBatchNum = 1 << 20;
// Global batch in sequences (given or derived, mbs * dp * micro-batches): <= 2^30, so that it
// and its token count (gbs * seq <= 2^54) fit the report's integers.
inline constexpr int64_t kMaxGlobalBatch = int64_t{1} << 30;

// --- Grids and searches -------------------------------------------------------------------------
// Points of a sweep grid (hardware variants x GPU counts), counted before it is built.
inline constexpr int64_t kMaxSweepPoints = 10000;
// Strategies in one search space, counted before enumerating: 10^9 (about three minutes at the
// measured 6 M strategies/s on one core). A larger space is refused with its size.
inline constexpr int64_t kMaxSearchSpace = 1'000'000'000;

// --- Framework files -----------------------------------------------------------------------------
// Launch scripts (--megatron-script), read as bash would: one word expands to at most 1 MiB, one
// variable holds at most 1 MiB, all expansions of a script total at most 64 MiB (variables that
// double themselves reach terabytes in forty lines); ${...} nests at most 64 deep, $(( )) at most
// 256 parentheses or signs, eval / sh -c / function calls at most 8 deep (each recursed; deeper
// overflowed the stack or copied the script once per level). Real scripts stay far below.
inline constexpr size_t kMaxScriptWordBytes = size_t{1} << 20;
inline constexpr size_t kMaxScriptExpansionBytes = size_t{64} << 20;
inline constexpr int kMaxScriptExpansionNesting = 64;
inline constexpr int kMaxScriptArithmeticNesting = 256;
inline constexpr int kMaxScriptEvalNesting = 8;
// while / until loops of a script (argument loops: one round per argument or two) run at most
// 1000 rounds together; a loop whose condition never changes ends in an error, cheaply (10^4
// rounds took 150 ms per input under the sanitizers and slowed the fuzzer 25-fold).
inline constexpr int kMaxScriptLoopRounds = 1000;
// The tokens those rounds and the bodies of function calls, eval and sh -c run, all together,
// at most 2^18 (262,144; an argument loop of 400 tokens over 50 arguments runs 2*10^4): 1000
// rounds of a 20 KB loop body ran 5*10^6 commands, 82 s under the sanitizers, and a REST body of
// a megabyte would have run for minutes (the request time limit is checked after the answer).
inline constexpr size_t kMaxScriptRunTokens = size_t{1} << 18;
// YAML files (LLaMA-Factory, Accelerate): a mapping converted to JSON (fsdp_config, deepspeed)
// holds at most 10^5 values once aliases are expanded (a six-deep alias nest is 10^7).
inline constexpr size_t kMaxYamlValues = 100000;
// --pipeline-model-parallel-layout unrolls to at most 10^6 layer characters.
inline constexpr size_t kMaxLayoutUnrolled = 1000000;

// --- Outputs ------------------------------------------------------------------------------------
// Forward/backward slots of the event-driven timeline (pp * vpp * micro-batches): 10^6 (at the
// old 4·10^6 a trace took ~75 s and ~8 GB; issue 11).
inline constexpr int64_t kMaxTraceEvents = 1'000'000;

}  // namespace trainsim::limits
