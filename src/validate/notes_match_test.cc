#include "validate/notes_match.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trainsim {
namespace {

struct Row {
  const char* text;
  const char* pattern;
  bool matches;
  std::vector<std::string> caps;
};

TEST(NotesMatch, FindsTheLeftmostPhraseAndItsNumbers) {
  const Row rows[] = {
      {"Maverick, interleave_moe_layer_step  2, fp8", "interleave_moe_layer_step%s%d", true, {"2"}},
      {"interleave_moe_layer_step2", "interleave_moe_layer_step%s%d", false, {}},
      {"chunked local attention (8192) on 3 of every 4 layers",
       "chunked local attention (%d) on %d of every %d layers",
       true,
       {"8192", "3", "4"}},
      {"with 200 virtual KV tokens", "%d virtual", true, {"200"}},
      {"x12 virtual", "%d virtual", true, {"12"}},  // the run starts after a letter
      {"1 and 34 virtual", "%d virtual", true, {"34"}},
      {"MEAN (max 768)", "MEAN (max %d)", true, {"768"}},
      {"dropout 0.05, dropout .1", "dropout %f", true, {"0.05"}},
      {"dropout 1.5", "dropout %f", false, {}},
      {"8-step off-policy async GRPO", "%d-step off-policy", true, {"8"}},
      // A capture never overflows an int: a run of ten or more digits is not a number here.
      {"12345678901 virtual", "%d virtual", false, {}},
      {"", "%d virtual", false, {}},
  };
  for (const Row& r : rows) {
    std::vector<std::string> caps;
    EXPECT_EQ(MatchNotes(r.text, r.pattern, caps), r.matches) << r.text;
    EXPECT_EQ(caps, r.caps) << r.text;
  }
}

// The regression the stack overflow of std::regex left: long runs of digits and blanks are
// scanned in one pass, without recursion.
TEST(NotesMatch, LongRunsNeitherRecurseNorOverflow) {
  const std::string digits(1 << 20, '7'), blanks(1 << 20, ' ');
  std::vector<std::string> caps;
  EXPECT_FALSE(MatchNotes(digits + " virtual", "%d virtual", caps));
  EXPECT_TRUE(MatchNotes("interleave_moe_layer_step" + blanks + "4",
                         "interleave_moe_layer_step%s%d", caps));
  EXPECT_EQ(caps, std::vector<std::string>{"4"});
}

}  // namespace
}  // namespace trainsim
