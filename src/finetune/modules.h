// The linear modules of one transformer layer as the adapters see them (internal to
// src/finetune).
#pragma once

#include <utility>
#include <vector>

#include "graph/graph.h"
#include "trainsim/model.h"
#include "trainsim/strategy.h"

namespace trainsim::finetune {

// One linear module of a layer on one rank (its TP-sharded side divided by tp).
struct Linear {
  int target = 0;  // LoraTarget bit
  double d_in = 0, d_out = 0;
  bool ia3_input = false;  // IA3 scales the input (PEFT feedforward_modules: the MLP)
};

// q, k, v, o and the dense MLP's gate, up, down (or the shared experts' of a MoE layer; routed
// experts carry no adapters). REQUIRES: not MLA.
std::vector<Linear> LayerLinears(const ModelSpec& m, const Strategy& s, bool moe);
// The modules the method adapts: lora_targets (IA3 too).
bool Adapted(const Strategy& s, const Linear& l);

void AppendModuleAdapter(const Strategy& s, const Linear& l, double tokens,
                         std::vector<graph::Op>& out);
double ModuleAdapterParams(const Strategy& s, const Linear& l);
// lora_dropout > 0 on a method with PEFT's lora_dropout (LoRA, QLoRA, PiSSA, DoRA, AdaLoRA):
// each adapter reads a dropped copy of the module input instead of the input itself.
bool LoraDropoutApplies(const Strategy& s);
std::pair<double, double> Factorize(double dim);

}  // namespace trainsim::finetune
