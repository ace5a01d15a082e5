// --pipeline-model-parallel-layout: Megatron-Core's grammar and rules (pipeline_layout.cc), the
// examples of Megatron-LM's documentation, and the split the simulator then uses.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "trainsim/megatron.h"
#include "trainsim/strategy.h"

namespace trainsim {
namespace {

struct Parsed {
  std::vector<int> layers, mtp;
  int vpp = 0;
};

Parsed P(const std::string& layout, int pp) {
  auto l = ParsePipelineLayout(layout, pp);
  EXPECT_TRUE(l.ok()) << layout << ": " << l.status().message();
  if (!l.ok()) return {};
  return {l->chunk_layers, l->chunk_mtp, l->vpp};
}

// Megatron-LM docs/source/api-guide/pipeline_parallel_layout.md: DeepSeek-V3 (61 decoder layers
// + 1 MTP layer) with PP16 VPP2 as "Et*3|(tt|)*29,m|L": pp rank 0 holds the embedding and 3
// layers on virtual rank 0 and 2 on virtual rank 1; ranks 1-13 2 and 2; rank 14 2 and the MTP
// layer; rank 15 2 and the loss.
TEST(PipelineLayout, MegatronDocsDeepSeekV3Pp16Vpp2) {
  const Parsed p = P("Et*3|(tt|)*29,m|L", 16);
  EXPECT_EQ(p.vpp, 2);
  ASSERT_EQ(p.layers.size(), 32u);
  auto at = [&](int pp_rank, int vpp_rank) { return p.layers[vpp_rank * 16 + pp_rank]; };
  EXPECT_EQ(at(0, 0), 3);
  EXPECT_EQ(at(0, 1), 2);
  for (int r = 1; r <= 13; ++r) EXPECT_EQ(at(r, 0) + at(r, 1), 4) << r;
  EXPECT_EQ(at(14, 0), 2);
  EXPECT_EQ(at(14, 1), 0);
  EXPECT_EQ(p.mtp[14 + 16], 1);
  EXPECT_EQ(at(15, 0), 2);
  EXPECT_EQ(at(15, 1), 0);  // only the loss
  auto l = ParsePipelineLayout("Et*3|(tt|)*29,m|L", 16);
  EXPECT_TRUE(CheckPipelineLayout(*l, 16, 61, 1, "f").ok());
  // The docstring of parse_str_to_list: "Ettt|(tt|)*29,m|L" is the same list.
  EXPECT_EQ(P("Ettt|(tt|)*29,m|L", 16).layers, p.layers);
}

// Megatron-LM docs/source/api-guide/multi_token_prediction.md, "Pipeline parallel layout for
// MTP": the MTP layer on the last stage, on the one before it with a decoder layer, and alone
// on its own stage (standalone).
TEST(PipelineLayout, MegatronDocsMtpPlacements) {
  const std::pair<const char*, int> cases[] = {
      {"E|t*3|(t|)*5mL", 7}, {"E|t*3|(t|)*4tm|L", 6}, {"E|t*3|(t|)*3tt|m|L", 6}};
  for (const auto& [layout, mtp_chunk] : cases) {
    auto l = ParsePipelineLayout(layout, 8);
    ASSERT_TRUE(l.ok()) << layout;
    EXPECT_EQ(l->vpp, 1);
    EXPECT_EQ(l->layers(), 8) << layout;
    EXPECT_EQ(l->chunk_mtp[mtp_chunk], 1) << layout;
    EXPECT_TRUE(CheckPipelineLayout(*l, 8, 8, 1, "f").ok()) << layout;
    Strategy s;
    s.pp = 8;
    s.pipeline_layout = layout;
    EXPECT_EQ(PipelineMtpStage(s), mtp_chunk) << layout;
  }
}

// parse_str_to_list's unrolling: "(...)*n" first, then "x*n" (any one character, '|'
// included); commas are cosmetic; "*0" repeats nothing.
TEST(PipelineLayout, UnrollsAsMegatron) {
  EXPECT_EQ(P("E(t|t)*2L", 1).layers, (std::vector<int>{1, 2, 1}));
  EXPECT_EQ(P("Et|*2tL", 1).layers, (std::vector<int>{1, 0, 1}));
  EXPECT_EQ(P("E,t*3,|,tL", 2).layers, (std::vector<int>{3, 1}));
  EXPECT_EQ(P("Et(t|)*0L", 1).layers, (std::vector<int>{1}));
  EXPECT_EQ(P("E|(tt|)*2L", 4).layers, (std::vector<int>{0, 2, 2, 0}));
}

// The fuzz input that overflowed the stack of std::regex (CI, sanitize-ci), and long inputs of
// the shapes that recursed per character: each is answered by a message, not a crash.
TEST(PipelineLayout, LongInputsAreScannedWithoutRecursion) {
  const std::string crash = "3***\x1a*+*\x01)*3(8889)*38883(8889\x1a***9aa";
  EXPECT_FALSE(ParsePipelineLayoutStages(crash).ok());
  const std::string open(1 << 20, '('), stars(1 << 20, '*'), digits(1 << 20, '9');
  for (const std::string& s : {open, stars, "(" + std::string(1 << 20, 't') + ")*1", "t*" + digits})
    EXPECT_FALSE(ParsePipelineLayoutStages(s).ok()) << s.substr(0, 8);
  auto l = ParsePipelineLayoutStages("(" + std::string(1 << 16, 't') + ")*2");
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->layers(), 2 << 16);
}

// A per-character reference of parse_str_to_list and the stage fold (what pipeline_layout.cc
// did before it copied runs and repeats in one piece): the parser must agree with it on every
// input, error or not. "" = the unrolled text passes 10^6 characters.
std::string ReferencePass(const std::string& in, bool group, bool& over) {
  constexpr size_t kMax = 1000000;
  std::string out;
  for (size_t i = 0; i < in.size() && !over;) {
    size_t unit = i, len = 1, digits = i + 2;  // (.)\*(\d+)
    bool star = in[i] != '\n' && i + 1 < in.size() && in[i + 1] == '*';
    if (group) {  // \(([^)]+)\)\*(\d+)
      const size_t close = in[i] == '(' ? in.find(')', i + 1) : std::string::npos;
      star = close != std::string::npos && close > i + 1 && close + 1 < in.size() &&
             in[close + 1] == '*';
      unit = i + 1, len = close - i - 1, digits = close + 2;
    }
    size_t end = digits, n = 0;
    for (; star && end < in.size() && in[end] >= '0' && in[end] <= '9'; ++end)
      n = std::min<size_t>(n * 10 + static_cast<size_t>(in[end] - '0'), kMax + 1);
    if (!star || end == digits) {
      out += in[i++];
      continue;
    }
    over = n > kMax || n * len > kMax - std::min(out.size(), kMax);
    for (size_t r = 0; r < n && !over; ++r) out += in.substr(unit, len);
    i = end;
  }
  over = over || out.size() > kMax;
  return out;
}

void ExpectSameAsReference(const std::string& layout) {
  std::string flat;
  for (char c : layout)
    if (c != ',') flat += c;
  bool over = false;
  flat = ReferencePass(ReferencePass(flat, true, over), false, over);
  auto l = ParsePipelineLayoutStages(layout);
  if (over) {
    ASSERT_FALSE(l.ok()) << layout;
    EXPECT_NE(l.status().message().find("unrolls to more than"), std::string::npos) << layout;
    return;
  }
  PipelineLayout want;
  want.chunk_layers = want.chunk_mtp = {0};
  for (char c : flat) {
    const int chunk = static_cast<int>(want.chunk_layers.size()) - 1;
    if (c != '|') want.first = want.first ? want.first : c, want.last = c;
    if (c == '|') want.chunk_layers.push_back(0), want.chunk_mtp.push_back(0);
    if (c == 't') ++want.chunk_layers.back(), want.decoder_after_mtp |= want.mtp_layers > 0;
    if (c == 'm') ++want.chunk_mtp.back(), ++want.mtp_layers;
    if (c == 'E' && want.embeddings++ == 0) want.embedding_chunk = chunk;
    if (c == 'L' && want.losses++ == 0) want.loss_chunk = chunk;
    if (std::string("|tmEL").find(c) == std::string::npos) {
      ASSERT_FALSE(l.ok()) << layout;
      EXPECT_NE(l.status().message().find(std::string("character '") + c + "'"), std::string::npos)
          << layout << ": " << l.status().message();
      return;
    }
  }
  ASSERT_TRUE(l.ok()) << layout << ": " << l.status().message();
  EXPECT_EQ(l->chunk_layers, want.chunk_layers) << layout;
  EXPECT_EQ(l->chunk_mtp, want.chunk_mtp) << layout;
  EXPECT_EQ(std::make_tuple(l->embedding_chunk, l->loss_chunk, l->embeddings, l->losses, l->first,
                            l->last, l->decoder_after_mtp, l->mtp_layers),
            std::make_tuple(want.embedding_chunk, want.loss_chunk, want.embeddings, want.losses,
                            want.first, want.last, want.decoder_after_mtp, want.mtp_layers))
      << layout;
}

// Random layouts over the grammar's characters (and a few it refuses), and long unrolls near
// the 10^6 limit: the same stages, counts and errors as the per-character reference.
TEST(PipelineLayout, AgreesWithThePerCharacterReference) {
  const std::string alphabet = "Etml|()**,0123456789\nx";
  std::mt19937 rng(11);
  for (int k = 0; k < 20000; ++k) {
    std::string s(rng() % 24, ' ');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    ExpectSameAsReference(s);
  }
  for (const char* s : {"(t|)*333333", "Et*999998L", "Et*999999L", "(tt|)*400000", "t*5*3",
                        "(Et*3|)*2,m*2|L", "(t*2|)*99999L", "((t)*2|)*3", "(|)*500000"})
    ExpectSameAsReference(s);
}

// What Megatron refuses, each with the rule.
TEST(PipelineLayout, RefusesWhatMegatronRefuses) {
  const std::pair<const char*, const char*> grammar[] = {
      {"Etx|L", "invalid layer character 'x'"},
      {"E(t|)*L", "invalid layer character '('"},       // a repetition needs its count
      {"E((t)*2|)*2L", "invalid layer character '('"},  // no nesting: the regex leaves a '('
      {"Et |L", "invalid layer character ' '"},
  };
  for (const auto& [layout, rule] : grammar) {
    auto l = ParsePipelineLayoutStages(layout);
    ASSERT_FALSE(l.ok()) << layout;
    EXPECT_EQ(l.status().field(), "--pipeline-model-parallel-layout");
    EXPECT_NE(l.status().message().find(rule), std::string::npos) << l.status().message();
  }
  EXPECT_NE(ParsePipelineLayout("Et|tL", 3).status().message().find("multiple of the pipeline"),
            std::string::npos);
  EXPECT_FALSE(ParsePipelineLayout("Et*99999999999999L", 1).ok());
  struct Case {
    const char* layout;
    int pp, layers, mtp;
    const char* rule;
  };
  const Case model[] = {
      {"tE|L", 2, 1, 0, "first layer must be the embedding"},
      {"Et|Lt", 2, 2, 0, "last layer must be the loss"},
      {"EEt|L", 2, 1, 0, "exactly once"},
      {"Et|tL", 2, 3, 0, "holds 2 decoder layers"},
      {"Et|tL", 2, 2, 1, "holds 0 MTP layers"},
      {"Em|tL", 2, 1, 1, "before MTP"},
      {"Et|tm||L", 2, 2, 1, "last virtual stage"},      // m on virtual rank 0 of 2
      {"Et|t|m|mL", 2, 2, 2, "same virtual pipeline"},  // the two m split over two chunks
  };
  for (const Case& c : model) {
    auto l = ParsePipelineLayout(c.layout, c.pp);
    ASSERT_TRUE(l.ok()) << c.layout;
    const Status st = CheckPipelineLayout(*l, c.pp, c.layers, c.mtp, "key");
    ASSERT_FALSE(st.ok()) << c.layout;
    EXPECT_EQ(st.field(), "key");
    EXPECT_NE(st.message().find(c.rule), std::string::npos) << c.layout << ": " << st.message();
  }
  // Megatron's code checks "not on the first pp rank" only for the non-last virtual ranks, so
  // with vpp 1 the MTP layer may share rank 0.
  auto first = ParsePipelineLayout("Etm|L", 2);
  EXPECT_TRUE(CheckPipelineLayout(*first, 2, 1, 1, "key").ok());
}

}  // namespace
}  // namespace trainsim
