// Megatron-LM's --pipeline-model-parallel-layout (trainsim/megatron.h: ParsePipelineLayout,
// CheckPipelineLayout). Grammar and rules are those of Megatron-Core's
// PipelineParallelLayerLayout (megatron/core/transformer/pipeline_parallel_layer_layout.py):
//  * parse_str_to_list: commas removed; then, in this order and once each, the regular
//    expressions r'\(([^)]+)\)\*(\d+)' and r'(.)\*(\d+)' replaced by their group repeated n
//    times; the result split at '|'; every character must be E, L, t or m;
//  * __init__ (and megatron/training/arguments.py): the stage count a multiple of pp, vpp =
//    stages / pp, stage i on virtual rank i / pp of pipeline rank i % pp;
//  * validate_layer_layout: see CheckPipelineLayout.
#include <algorithm>
#include <string>

#include "trainsim/limits.h"
#include "trainsim/megatron.h"

namespace trainsim {
namespace {

// Unrolled layouts longer than this are refused: no model has a million layers, and Python's
// string repetition would run out of memory long before.
constexpr size_t kMaxUnrolled = limits::kMaxLayoutUnrolled;

std::string S(long long x) {
  return std::to_string(x);
}

// The digits of a repeat count starting at `at` (Python's \d on ASCII): their end, or `at`
// when there are none.
size_t DigitsEnd(const std::string& s, size_t at) {
  while (at < s.size() && s[at] >= '0' && s[at] <= '9') ++at;
  return at;
}

// A match of one parse_str_to_list pattern at a position: the repeated unit and the count text.
// `next_close` carries the last ')' found from one position to the next, so that a long run of
// '(' is scanned once rather than once per '('.
struct RepeatMatch {
  size_t unit_begin = 0, unit_end = 0, digits_begin = 0, digits_end = 0;
  size_t next_close = 0;
};

// r'\(([^)]+)\)\*(\d+)' at i: '[^)]+' can only stop at the first ')', so there is at most
// one match, found without backtracking.
bool MatchGroup(const std::string& s, size_t i, RepeatMatch& m) {
  if (s[i] != '(') return false;
  if (m.next_close != std::string::npos && m.next_close <= i) m.next_close = s.find(')', i + 1);
  const size_t close = m.next_close;
  if (close == std::string::npos || close == i + 1) return false;
  if (close + 1 >= s.size() || s[close + 1] != '*') return false;
  const size_t end = DigitsEnd(s, close + 2);
  if (end == close + 2) return false;
  m.unit_begin = i + 1, m.unit_end = close, m.digits_begin = close + 2, m.digits_end = end;
  return true;
}

// r'(.)\*(\d+)' at i: Python's '.' is any character but a newline.
bool MatchSingle(const std::string& s, size_t i, RepeatMatch& m) {
  if (s[i] == '\n' || i + 1 >= s.size() || s[i + 1] != '*') return false;
  const size_t end = DigitsEnd(s, i + 2);
  if (end == i + 2) return false;
  m.unit_begin = i, m.unit_end = i + 1, m.digits_begin = i + 2, m.digits_end = end;
  return true;
}

// Where a match of each pattern can start, from `from` on: at a '(' for the group, one before
// a '*' for the single character; the text before it is copied in one piece.
size_t NextGroupStart(const std::string& s, size_t from) {
  return std::min(s.find('(', from), s.size());
}
size_t NextSingleStart(const std::string& s, size_t from) {
  const size_t star = s.find('*', from + 1);
  return star == std::string::npos ? s.size() : star - 1;
}

struct Pattern {
  bool (*match)(const std::string&, size_t, RepeatMatch&);
  size_t (*next_start)(const std::string&, size_t);
};

// Appends in[from, from + len) n times, doubling what was appended: log2(n) copies rather
// than n (a layout of ten bytes unrolls to a million characters).
void AppendRepeated(std::string& out, const std::string& in, size_t from, size_t len, size_t n) {
  if (n == 0 || len == 0) return;
  const size_t start = out.size(), total = len * n;
  out.reserve(start + total);  // the copies below read `out` itself: no reallocation
  out.append(in, from, len);
  for (size_t have = len; have < total; have = out.size() - start)
    out.append(out, start, std::min(have, total - have));
}

// One re.sub pass of parse_str_to_list: leftmost non-overlapping matches, each replaced by its
// unit repeated count times. A linear scan (std::regex recursed once per character and
// overflowed the stack on long inputs). False when the result passes kMaxUnrolled.
bool UnrollPass(const std::string& in, Pattern pattern, std::string& out) {
  out.clear();
  size_t i = 0;
  RepeatMatch m;
  while (i < in.size()) {
    const size_t start = pattern.next_start(in, i);
    out.append(in, i, start - i);
    i = start;
    if (i >= in.size()) break;
    if (!pattern.match(in, i, m)) {
      out += in[i++];
      continue;
    }
    size_t n = 0;
    for (size_t d = m.digits_begin; d < m.digits_end; ++d) {
      n = n * 10 + static_cast<size_t>(in[d] - '0');
      if (n > kMaxUnrolled) return false;
    }
    const size_t len = m.unit_end - m.unit_begin;
    if (n > (kMaxUnrolled - std::min(out.size(), kMaxUnrolled)) / len) return false;
    AppendRepeated(out, in, m.unit_begin, len, n);
    i = m.digits_end;
  }
  return out.size() <= kMaxUnrolled;
}

Result<std::string> Unroll(std::string_view layout, std::string_view field) {
  std::string s;
  s.reserve(layout.size());
  for (size_t at = 0; at < layout.size();) {  // "purely cosmetic commas"
    const size_t comma = std::min(layout.find(',', at), layout.size());
    s.append(layout, at, comma - at);
    at = comma + 1;
  }
  std::string once, twice;
  if (!UnrollPass(s, {MatchGroup, NextGroupStart}, once) ||
      !UnrollPass(once, {MatchSingle, NextSingleStart}, twice))
    return Status::Invalid(std::string(field),
                           "unrolls to more than " + S(kMaxUnrolled) + " layers");
  return twice;
}

}  // namespace

int PipelineLayout::layers() const {
  int n = 0;
  for (int x : chunk_layers) n += x;
  return n;
}

Result<PipelineLayout> ParsePipelineLayoutStages(std::string_view layout, std::string_view field) {
  auto flat = Unroll(layout, field);
  if (!flat.ok()) return flat.status();
  PipelineLayout out;
  out.chunk_layers.push_back(0);
  out.chunk_mtp.push_back(0);
  const std::string& text = flat.value();
  // A run of one character at a time (the unrolled text is up to a million characters).
  for (size_t at = 0, end = 0; at < text.size(); at = end) {
    const char c = text[at];
    for (end = at + 1; end < text.size() && text[end] == c;) ++end;
    const int n = static_cast<int>(end - at);  // <= kMaxUnrolled
    const int chunk = static_cast<int>(out.chunk_layers.size()) - 1;
    if (c != '|') {
      if (out.first == 0) out.first = c;
      out.last = c;
    }
    switch (c) {
      case '|':
        for (int k = 0; k < n; ++k) {
          out.chunk_layers.push_back(0);
          out.chunk_mtp.push_back(0);
        }
        break;
      case 't':
        out.chunk_layers.back() += n;
        out.decoder_after_mtp = out.decoder_after_mtp || out.mtp_layers > 0;
        break;
      case 'm':
        out.chunk_mtp.back() += n;
        out.mtp_layers += n;
        break;
      case 'E':
        if (out.embeddings == 0) out.embedding_chunk = chunk;
        out.embeddings += n;
        break;
      case 'L':
        if (out.losses == 0) out.loss_chunk = chunk;
        out.losses += n;
        break;
      default:
        return Status::Invalid(std::string(field),
                               std::string("invalid layer character '") + c +
                                   "' (known: E embedding, t decoder, m MTP, L loss; "
                                   "'(...)*n' and 'x*n' repeat, '|' ends a stage)");
    }
  }
  return out;
}

Result<PipelineLayout> ParsePipelineLayout(std::string_view layout, int pp,
                                           std::string_view field) {
  auto l = ParsePipelineLayoutStages(layout, field);
  if (!l.ok()) return l.status();
  const int stages = static_cast<int>(l->chunk_layers.size());
  if (pp < 1 || stages % pp != 0)
    return Status::Invalid(std::string(field),
                           "the " + S(stages) +
                               " stages must be a multiple of the pipeline size (pp " + S(pp) +
                               "): stages = pp x vpp");
  PipelineLayout out = std::move(l).value();
  out.vpp = stages / pp;
  return out;
}

Status CheckPipelineLayout(const PipelineLayout& l, int pp, int layers, int mtp_layers,
                           std::string_view field) {
  auto bad = [&](const std::string& rule) { return Status::Invalid(std::string(field), rule); };
  const int chunks = static_cast<int>(l.chunk_layers.size());
  if (l.first != 'E') return bad("the first layer must be the embedding E");
  if (l.last != 'L') return bad("the last layer must be the loss L");
  if (l.embeddings != 1 || l.losses != 1)
    return bad("must hold the embedding E and the loss L exactly once each");
  if (l.layers() != layers)
    return bad("holds " + S(l.layers()) + " decoder layers t; the model has " + S(layers));
  if (l.mtp_layers != mtp_layers)
    return bad("holds " + S(l.mtp_layers) + " MTP layers m; the model has " + S(mtp_layers));
  if (l.decoder_after_mtp) return bad("decoder layers t must be placed before MTP layers m");
  for (int c = 0; c < chunks; ++c) {
    if (l.chunk_mtp[c] == 0) continue;
    if (c / pp != l.vpp - 1)
      return bad("MTP layers m must be in the last virtual stage of their pipeline rank");
    if (l.chunk_mtp[c] != mtp_layers)
      return bad("all MTP layers m must be in the same virtual pipeline stage");
  }
  return Status::Ok();
}

}  // namespace trainsim
