// Tests only: the factor by which a test stretches its wall-clock limits (a server's search
// budget, an "answers within N s" check). TRAINSIM_TEST_TIME_SCALE=k multiplies them; unset, or
// not a number in [1, 1000], it is 1. `make test-sanitize` sets it (Makefile SAN_TIME_SCALE): an
// ASan + UBSan build at -O1 runs the simulator several times slower than Release, and CI runs it
// on shared cores, so a limit that holds with room in Release would fail on speed, not on a defect.
// The tests/serve_test.py twin reads the same variable.
#pragma once

#include <cstdlib>

#include "util/parse_number.h"

namespace trainsim::util {

inline double TestTimeScale() {
  static const double k = [] {
    const char* s = std::getenv("TRAINSIM_TEST_TIME_SCALE");
    const auto v = s ? ParseDouble(s) : std::nullopt;
    return v && *v >= 1 && *v <= 1000 ? *v : 1.0;
  }();
  return k;
}

}  // namespace trainsim::util
