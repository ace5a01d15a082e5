// Mean keys per query under causal, sliding-window, document and block-sparse masks.
//
// Token level. Query i (1-based) of a causal window w over s positions sees min(i, w) keys; the
// exact sum is sum_i min(i, w) = s*w - w(w-1)/2, i.e. w - w(w-1)/(2s) per query. We use the
// continuous form c - c^2/(2s) with c = min(w, s) (the integral of min(t, c) over [0, s]): it
// is s/2 for dense causal attention, as the rest of the cost model, and differs from the sum
// by c/(2s) < 1/2 key.
//
// Documents. With only a mean document length d known, we take the maximum-entropy length
// distribution: exponential with mean d. A token's position within its document is then
// exponential with mean d as well (length-biased sampling of a memoryless distribution), and a
// query sees min(p, c, u) keys, with p its position in the document and u its position in the
// sequence (uniform on [0, s), the sequence cut documents). Integrating the survival functions:
//   E[min(p, u, c)] = int_0^c e^{-t/d} (1 - t/s) dt
//                   = d (1 - e^{-c/d}) - (d^2/s) (1 - e^{-c/d} (1 + c/d)),
// which tends to c - c^2/(2s) as d grows. (Equal-length documents would give d/2 per query;
// the exponential law gives about d because long documents hold most tokens.)
//
// Blocks. A block-sparse kernel computes, for the query block starting at position q0, every
// key block from the one holding its earliest needed key to its own: 1 + ceil(P/B) blocks with
// P = min(position of q0 in its document, q0, c - 1). Over the query blocks j = 0..n-1 (q0 = jB)
// E[ceil(P/B)] = sum_{k>=0} P(P > kB) = sum_{k=0}^{K-1} r^k (n-1-k)/n, K = ceil((c-1)/B),
// r = e^{-B/d} (r = 1 without documents: K - K(K+1)/(2n)).
//
// Chunks. Chunked local attention (Llama-4 iRoPE, attention_chunk_size C) masks each aligned
// chunk of C positions as its own sequence: the chunk boundaries cut documents as the sequence
// ends do, so over s = kC + r positions the mean is (kC f(C) + r f(r)) / s, f the unchunked mean
// keys per query (C/2 each for causal chunks). Queries at positions (a, b] of a longer context
// (inference): with F(x) the keys summed over positions [0, x), i.e. the integral of the keys at
// position t, dense F = x^2/2, window W: F = x^2/2 (x <= W) else W^2/2 + (x - W) W, chunk C:
// F = floor(x/C) C^2/2 + (x mod C)^2/2; the mean is (F(b) - F(a)) / (b - a) and, for one query
// (a = b), the keys at a: a, min(a, W), a mod C.
#include "graph/attention_pattern.h"

#include <algorithm>
#include <cmath>

namespace trainsim::graph {
namespace {

// 1 - e^{-x} (1 + x), accurate for small x.
double OneMinusExpOnePlus(double x) {
  if (x < 1e-4) return x * x / 2 - x * x * x / 3;
  return -std::expm1(-x) - x * std::exp(-x);
}

// sum_{k=0}^{K-1} r^k (A - k), closed form (geometric series and its derivative).
double GeometricRamp(double r, double K, double A) {
  if (K <= 0) return 0;
  if (1 - r < 1e-9) return A * K - K * (K - 1) / 2;
  const double rK = std::pow(r, K);
  const double s0 = (1 - rK) / (1 - r);
  const double s1 = r * (1 - K * std::pow(r, K - 1) + (K - 1) * rK) / ((1 - r) * (1 - r));
  return A * s0 - s1;
}

}  // namespace

double TokenKeysPerQuery(double seq, double window, double mean_doc) {
  if (seq <= 0) return 0;
  const double c = window > 0 ? std::min(window, seq) : seq;
  if (mean_doc <= 0) return c - c * c / (2 * seq);
  const double x = c / mean_doc;
  return mean_doc * -std::expm1(-x) - mean_doc * mean_doc / seq * OneMinusExpOnePlus(x);
}

double BlockKeysPerQuery(double seq, double window, double mean_doc, double block) {
  if (seq <= 0 || block <= 0) return 0;
  const double c = window > 0 ? std::min(window, seq) : seq;
  const double n = std::ceil(seq / block);                                    // query blocks
  const double K = std::min(std::ceil(std::max(0.0, c - 1) / block), n - 1);  // blocks back
  const double r = mean_doc > 0 ? std::exp(-block / mean_doc) : 1.0;
  return block * (1 + GeometricRamp(r, K, n - 1) / n);
}

namespace {

// Mean keys per query of `seq` positions cut into aligned chunks of `chunk`, each chunk masked
// as a sequence of its own with `per_chunk(len)` the mean keys per query over len positions.
template <typename F>
double Chunked(double seq, double chunk, F per_chunk) {
  if (seq <= 0) return 0;
  if (chunk <= 0 || seq <= chunk) return per_chunk(seq);
  const double k = std::floor(seq / chunk), r = seq - k * chunk;
  return (k * chunk * per_chunk(chunk) + (r > 0 ? r * per_chunk(r) : 0.0)) / seq;
}

// Keys summed over query positions [0, x) of one layer (see the header comment).
double KeysIntegral(AttentionKind kind, double window, double x) {
  if (window <= 0) return x * x / 2;
  if (kind == AttentionKind::kChunkedLocal) {
    const double k = std::floor(x / window), r = x - k * window;
    return k * window * window / 2 + r * r / 2;
  }
  return x <= window ? x * x / 2 : window * window / 2 + (x - window) * window;
}

// Keys of the query at position x (the derivative of KeysIntegral).
double KeysAt(AttentionKind kind, double window, double x) {
  if (window <= 0) return x;
  if (kind == AttentionKind::kChunkedLocal) return x - std::floor(x / window) * window;
  return std::min(x, window);
}

}  // namespace

double ChunkKeysPerQuery(double seq, double chunk, double mean_doc) {
  return Chunked(seq, chunk, [&](double len) { return TokenKeysPerQuery(len, 0, mean_doc); });
}

double ContextKeysPerQuery(const ModelSpec& m, double from, double to) {
  const AttentionSpec& a = m.attention;
  const int layers = std::max(1, m.layers), windowed = m.windowed_layers();
  const double w = static_cast<double>(a.window);
  auto keys = [&](double window) {
    if (to - from < 1e-9) return KeysAt(a.kind, window, from);
    return (KeysIntegral(a.kind, window, to) - KeysIntegral(a.kind, window, from)) / (to - from);
  };
  return (windowed * keys(w) + (layers - windowed) * keys(0)) / layers;
}

double HeldKvTokens(const ModelSpec& m, double len) {
  const int layers = std::max(1, m.layers), windowed = m.windowed_layers();
  if (windowed == 0) return len;
  const double local = std::min(len, static_cast<double>(m.attention.window));
  return (windowed * local + (layers - windowed) * len) / layers;
}

double EffectiveMeanDocument(const AttentionSpec& a) {
  if (!a.document_masking) return 0;
  return a.mean_document_tokens > 0 ? a.mean_document_tokens : kDefaultMeanDocumentTokens;
}

double LayerKeysPerQuery(const AttentionSpec& a, double seq, bool windowed) {
  const double w = windowed ? static_cast<double>(a.window) : 0.0;
  const double d = EffectiveMeanDocument(a);
  if (a.kind == AttentionKind::kBlockSparse) return BlockKeysPerQuery(seq, w, d, kAttnMaskBlock);
  if (a.kind == AttentionKind::kChunkedLocal) return ChunkKeysPerQuery(seq, w, d);
  return TokenKeysPerQuery(seq, w, d);
}

double MeanKeysPerQuery(const ModelSpec& m, double seq, bool useful) {
  AttentionSpec a = m.attention;
  if (useful && a.kind == AttentionKind::kBlockSparse)
    a.kind = AttentionKind::kSlidingWindow;  // token exact
  const int layers = std::max(1, m.layers), windowed = m.windowed_layers();
  return (windowed * LayerKeysPerQuery(a, seq, true) +
          (layers - windowed) * LayerKeysPerQuery(a, seq, false)) /
         layers;
}

}  // namespace trainsim::graph
