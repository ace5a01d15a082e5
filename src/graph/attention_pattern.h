// Keys a query attends to under an attention pattern: causal, sliding window, document masking,
// token-exact or at the block granularity of a block-sparse kernel (docs/MODEL.md, "Attention
// patterns"). Pure functions of the pattern and the sequence length.
#pragma once

#include "trainsim/model.h"

namespace trainsim::graph {

// Block size of block-sparse attention masks (FlexAttention's default BLOCK_SIZE = 128).
inline constexpr double kAttnMaskBlock = 128.0;

// Mean keys per query over `seq` positions of chunked local attention (aligned chunks of
// `chunk` positions, each causal on its own; Llama-4 attention_chunk_size), documents masked as
// in TokenKeysPerQuery. chunk <= 0: no chunks.
double ChunkKeysPerQuery(double seq, double chunk, double mean_doc);

// Mean over the layers of `m` of the keys a query at positions (from, to] of a context attends
// to (causal; window or chunk in the windowed layers; documents not masked): inference, where
// the queries follow `from` cached positions. from == to: the one query at position `from`.
double ContextKeysPerQuery(const ModelSpec& m, double from, double to);

// KV positions per sequence of `len` tokens, averaged over the layers, when the windowed layers
// keep only their window (sliding) or their current chunk (chunked local, up to a chunk).
double HeldKvTokens(const ModelSpec& m, double len);

// Mean keys per query of a causal pattern over a training sequence of `seq` positions, token
// exact. `window` > 0 limits a query to the last `window` positions (itself included);
// `mean_doc` > 0 masks documents whose lengths are exponential with that mean.
// REQUIRES: seq > 0, window >= 0, mean_doc >= 0.
double TokenKeysPerQuery(double seq, double window, double mean_doc);

// The same pattern at the granularity of `block` x `block` tiles: a tile that is not fully
// masked is computed whole (FlexAttention block masks). Returns keys computed per query.
double BlockKeysPerQuery(double seq, double window, double mean_doc, double block);

// Keys per query of one layer of `m` (windowed or not) in training over `seq` positions: token
// exact for dense-causal and sliding-window patterns, block-rounded for block-sparse ones. Mean
// document length: the model's, else kDefaultMeanDocumentTokens when documents are masked.
double LayerKeysPerQuery(const AttentionSpec& a, double seq, bool windowed);

// Mean over the layers of `m` of the keys a query attends to in training (the layers that use
// the window and the others); `useful` counts token-exact keys even for block-sparse kernels
// (model FLOPs), else the keys the kernel computes.
double MeanKeysPerQuery(const ModelSpec& m, double seq, bool useful);

// Mean document length in use: the given one, kDefaultMeanDocumentTokens when documents are
// masked without one, 0 without document masking.
double EffectiveMeanDocument(const AttentionSpec& a);

}  // namespace trainsim::graph
