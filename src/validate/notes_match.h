// Linear-time matching of the fixed phrases validation-case notes carry ("interleave_moe_layer_step
// 2", "MEAN (max 768)"). std::regex recursed once per repeated character and overflowed the stack
// on long runs of digits or spaces, and std::stoi threw on long digit runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

// The leftmost match of `pattern` in `text`, its captures in `caps`. In the pattern, "%d" is a
// run of 1 to 9 ASCII digits (captured; a longer run does not match, so every capture fits an
// int), "%f" is a fraction "0?\.[0-9]{1,9}" (captured), "%s" is one or more blanks (space or
// tab), and every other character is itself.
bool MatchNotes(std::string_view text, std::string_view pattern, std::vector<std::string>& caps);

}  // namespace trainsim
