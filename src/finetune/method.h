// Fine-tuning methods as parameter groups and ops (docs/FINETUNE.md): which parameters train,
// what the adapters add to every layer's work, and how the stage changes what one step runs.
#pragma once

#include <vector>

#include "graph/graph.h"
#include "trainsim/model.h"
#include "trainsim/strategy.h"

namespace trainsim::finetune {

// NF4 with double quantisation: 4 bits per weight + 8-bit absmax per 64 weights + one fp32
// second-level constant per 256 absmax values = 4 + 8/64 + 32/(64*256) = 4.127 bits (Dettmers
// et al. 2023, "QLoRA", section 3, "Double Quantization"). In bytes per parameter.
constexpr double kNf4BytesPerParam = (4.0 + 8.0 / 64 + 32.0 / (64 * 256)) / 8;
// BOFT's block size b: PEFT BOFTConfig's default boft_block_size (4), which the PEFT
// method-comparison experiment boft/llama-3.2-3B-default uses; the butterfly factor is 1.
constexpr double kBoftBlockSize = 4;

// Checks what Simulate cannot model; the message names the field and the rule (MLA attention
// has no adapter layout here).
Status CheckWorkload(const ModelSpec& m, const Strategy& s);

// The strategy one step actually runs: paired preference stages put chosen and rejected
// sequences in one micro-batch (mbs and gbs x 2, TRL's concatenated forward); prompt / p-tuning
// prepend virtual tokens (seq + virtual_tokens); packing with a mean sample length computes
// gbs*mean_seq/seq rows. Identity for pretrain / sft full fine-tuning without mean_seq.
Strategy EffectiveStrategy(const Strategy& s);

// Virtual tokens of prefix, prompt and p-tuning (Strategy::lora_rank is not used for them).
int VirtualTokens(const Strategy& s);

// The ops of one trained transformer layer under the method: the base layer (frozen under a
// PEFT method: data gradients only, inputs saved only where an adapter needs them) and the
// adapters' ops. The base layer alone for full and freeze.
void BuildTrainLayer(const ModelSpec& m, const Strategy& s, bool moe, std::vector<graph::Op>& out);
// The ops of a layer run forward only with no gradient (a frozen layer under freeze, the
// reference model): the base layer.
void BuildFrozenLayer(const ModelSpec& m, const Strategy& s, bool moe, std::vector<graph::Op>& out);

// Trainable adapter parameters of one layer on one rank.
double LayerAdapterParams(const ModelSpec& m, const Strategy& s, bool moe);

// Applies the method to one stage's parameter groups: a frozen (maybe 4-bit) base, the
// adapters as a trainable group, frozen layers under freeze, a frozen reference copy for the
// reference stages when the policy is not a PEFT model (TRL uses the adapter-disabled base).
void ApplyMethodToParams(const ModelSpec& m, const Strategy& s, const graph::StageLayers& sl,
                         std::vector<graph::ParamGroup>& groups);

// Transformer layers frozen (method freeze), of the model's layers.
int FrozenLayers(const ModelSpec& m, const Strategy& s);
// The embedding and output layer receive gradients.
bool EmbeddingsTrained(const Strategy& s);

// Forward-only passes of the whole model per micro-batch besides the policy's training pass:
// the reference forward of dpo/ipo (1) and kto (2: batch and KL batch, plus the policy's KL
// forward: 3), 0 when precomputed or without a reference.
int ScoringForwards(const Strategy& s);

}  // namespace trainsim::finetune
