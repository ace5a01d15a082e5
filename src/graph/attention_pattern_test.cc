// Keys per query under attention patterns, against hand sums over the positions.
#include "graph/attention_pattern.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "graph/graph.h"

namespace trainsim::graph {
namespace {

// sum_{i=1}^{s} min(i, w) / s: query i (1-based) of a causal window sees min(i, w) keys.
double HandWindow(int s, int w) {
  double sum = 0;
  for (int i = 1; i <= s; ++i) sum += std::min(i, w);
  return sum / s;
}

TEST(AttentionPattern, DenseCausalIsHalfTheSequence) {
  EXPECT_DOUBLE_EQ(TokenKeysPerQuery(4096, 0, 0), 2048);
  EXPECT_NEAR(TokenKeysPerQuery(4096, 0, 0), HandWindow(4096, 4096), 0.5);
  EXPECT_DOUBLE_EQ(TokenKeysPerQuery(4096, 8192, 0), 2048);  // a window longer than the sequence
}

TEST(AttentionPattern, SlidingWindowMatchesTheHandSum) {
  // w - w^2/(2s) against sum_i min(i, w) / s = w - w(w-1)/(2s): within half a key.
  for (int w : {128, 1408, 1792, 4096}) {
    const double s = 65536;
    EXPECT_NEAR(TokenKeysPerQuery(s, w, 0), w - w * w / (2 * s), 1e-9);
    EXPECT_NEAR(TokenKeysPerQuery(s, w, 0), HandWindow(65536, w), 0.5) << w;
  }
  EXPECT_NEAR(TokenKeysPerQuery(2048, 1408, 0), HandWindow(2048, 1408), 0.5);
}

// Documents of exponential length (mean d) cut a query's keys at its position in its document
// p ~ Exp(d) and at its position u in the sequence; hand sum over a fine grid of p and u.
double HandDocuments(double s, double w, double d) {
  const int n = 1000;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    const double u = (i + 0.5) / n * s;
    // E[min(p, c)] for p ~ Exp(d) by the midpoint rule on the survival function.
    const double c = std::min({w > 0 ? w : s, s, u});
    const int m = 1000;
    double e = 0;
    for (int k = 0; k < m; ++k) e += std::exp(-(k + 0.5) / m * c / d) * c / m;
    sum += e;
  }
  return sum / n;
}

TEST(AttentionPattern, DocumentMaskingMatchesTheHandSum) {
  for (double d : {300.0, 622.0, 5000.0}) {
    for (double w : {0.0, 1408.0}) {
      const double s = 2048;
      EXPECT_NEAR(TokenKeysPerQuery(s, w, d), HandDocuments(s, w, d), 0.5) << d << " " << w;
    }
  }
  // Long documents give back the plain window; short ones about their mean length.
  EXPECT_NEAR(TokenKeysPerQuery(65536, 1792, 1e9), TokenKeysPerQuery(65536, 1792, 0), 0.01);
  EXPECT_NEAR(TokenKeysPerQuery(65536, 0, 100), 100, 1);
}

// Key blocks computed per query block, enumerated: query block j needs the key blocks from the
// one holding max(0, jB - (w-1)) to its own.
double HandBlocks(int s, int w, int block) {
  const int n = (s + block - 1) / block;
  double sum = 0;
  for (int j = 0; j < n; ++j) {
    const int first_key = std::max(0, j * block - (w - 1));
    sum += j - first_key / block + 1;
  }
  return sum / n * block;
}

TEST(AttentionPattern, BlockSparseRoundsUpToWholeBlocks) {
  for (int w : {128, 1024, 1792, 65536}) {
    EXPECT_NEAR(BlockKeysPerQuery(65536, w, 0, 128), HandBlocks(65536, w, 128), 1e-6) << w;
  }
  // FlexAttention's block mask of a 1792-token window over 65536 positions is 2.89 % dense
  // (data/measurements/h100_small_kernels.csv, flex_win1792_block_density): 1894 keys a query.
  EXPECT_NEAR(BlockKeysPerQuery(65536, 1792, 0, 128) / 65536, 0.0289, 0.0001);
  // Blocks never compute fewer keys than the token-exact pattern.
  EXPECT_GT(BlockKeysPerQuery(65536, 1792, 622, 128), TokenKeysPerQuery(65536, 1792, 622));
}

TEST(AttentionPattern, BlockSparseWithDocumentsMatchesTheSeries) {
  // sum_{k<K} r^k (n-1-k)/n with r = e^{-B/d}, summed directly.
  const double s = 65536, w = 1792, d = 622, B = 128;
  const int n = 512, K = 14;
  double sum = 0;
  for (int k = 0; k < K; ++k) sum += std::exp(-k * B / d) * (n - 1 - k) / n;
  EXPECT_NEAR(BlockKeysPerQuery(s, w, d, B), B * (1 + sum), 1e-6);
}

TEST(AttentionPattern, LayersOutsideTheWindowAttendDensely) {
  ModelSpec m;
  m.layers = 4;
  m.attention.kind = AttentionKind::kSlidingWindow;
  m.attention.window = 1024;
  m.attention.window_layers = 1;
  const double s = 8192;
  EXPECT_NEAR(MeanKeysPerQuery(m, s, false),
              (TokenKeysPerQuery(s, 1024, 0) + 3 * TokenKeysPerQuery(s, 0, 0)) / 4, 1e-9);
}

// Llama-4 iRoPE: 3 of 4 layers attend within aligned chunks of 8192. Over s = 20000 = 2 x 8192
// + 3616 positions a chunked layer's query sees (2 x 8192 x 4096 + 3616 x 1808) / 20000 keys on
// average (the hand sum of (i mod C) + 1 over i < s is within one key); the global layer s/2.
TEST(AttentionPattern, ChunkedLocalAttentionMatchesTheHandSum) {
  const double C = 8192, s = 20000;
  double hand = 0;
  for (int i = 0; i < s; ++i) hand += std::fmod(i, C) + 1;
  EXPECT_NEAR(ChunkKeysPerQuery(s, C, 0), (2 * C * C / 2 + 3616.0 * 3616 / 2) / s, 1e-9);
  EXPECT_NEAR(ChunkKeysPerQuery(s, C, 0), hand / s, 1.0);
  EXPECT_DOUBLE_EQ(ChunkKeysPerQuery(4096, C, 0), 2048);  // one partial chunk: causal
  ModelSpec m;
  m.layers = 48;
  m.attention.kind = AttentionKind::kChunkedLocal;
  m.attention.window = 8192;
  m.attention.window_layers = 36;
  EXPECT_NEAR(MeanKeysPerQuery(m, s, false), (36 * ChunkKeysPerQuery(s, C, 0) + 12 * s / 2) / 48,
              1e-9);
  // Inference: a decode query at position 21000 sees 21000 mod 8192 = 4616 keys in a chunked
  // layer; prefill of positions (16384, 20000] a mean of 1808 there.
  EXPECT_NEAR(ContextKeysPerQuery(m, 21000, 21000), (36 * 4616.0 + 12 * 21000.0) / 48, 1e-9);
  EXPECT_NEAR(ContextKeysPerQuery(m, 16384, 20000), (36 * 1808.0 + 12 * 18192.0) / 48, 1e-6);
  // KV held per sequence when chunked layers keep only their current chunk.
  EXPECT_NEAR(HeldKvTokens(m, 20000), (36 * 8192.0 + 12 * 20000.0) / 48, 1e-9);
  EXPECT_DOUBLE_EQ(HeldKvTokens(m, 4000), 4000);
}

TEST(AttentionPattern, DefaultDocumentLengthOnlyWithDocumentMasking) {
  AttentionSpec a;
  EXPECT_EQ(EffectiveMeanDocument(a), 0);
  a.document_masking = true;
  EXPECT_EQ(EffectiveMeanDocument(a), kDefaultMeanDocumentTokens);
  a.mean_document_tokens = 400;
  EXPECT_EQ(EffectiveMeanDocument(a), 400);
}

TEST(AttentionPattern, CoreAttentionFlopsFollowTheKeys) {
  ModelSpec m;
  m.name = "t";
  m.hidden = 768;
  m.layers = 12;
  m.heads = 6;
  m.kv_heads = 6;
  m.head_dim = 128;
  m.ffn = 3072;
  m.vocab = 50304;
  Strategy s;
  s.world_size = 1;
  s.seq = 65536;
  s.mbs = 1;
  s.gbs = 1;
  auto flops = [&](const ModelSpec& model) {
    std::vector<Op> ops;
    BuildLayer(model, s, false, ops);
    for (const Op& op : ops)
      if (op.kind == OpKind::kAttention) return op.flops;
    return 0.0;
  };
  const double dense = flops(m);
  EXPECT_DOUBLE_EQ(dense, 2.0 * 65536 * 32768 * 6 * 256);
  m.attention.kind = AttentionKind::kBlockSparse;
  m.attention.window = 1792;
  EXPECT_NEAR(flops(m) / dense, BlockKeysPerQuery(65536, 1792, 0, 128) / 32768, 1e-12);
  // Llama-4 chunks of 8192 on 9 of the 12 layers: 65536 = 8 whole chunks, 4096 keys a query
  // there; the layer mean (9 x 4096 + 3 x 32768) / 12 = 11264 keys against 32768.
  m.attention.kind = AttentionKind::kChunkedLocal;
  m.attention.window = 8192;
  m.attention.window_layers = 9;
  EXPECT_NEAR(flops(m) / dense, 11264.0 / 32768, 1e-12);
}

}  // namespace
}  // namespace trainsim::graph
