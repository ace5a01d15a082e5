// The defaults of the Strategy schema's fields that no source gave, as the report's assumptions
// (trainsim/schema.h).
#include "trainsim/schema.h"

namespace trainsim {

std::vector<Assumption> AssumedStrategyDefaults(const Strategy& strategy,
                                                const StrategyKeys& given) {
  const Strategy s = NormaliseStrategy(strategy);
  std::vector<Assumption> out;
  for (const StrategyField& f : StrategySchema()) {
    if (f.assumed.empty() || given.count(f.key)) continue;
    if (f.key == "global_batch_size" && given.count("micro_batch_num")) continue;  // derived
    if (f.matters && !f.matters(s)) continue;
    out.push_back({std::string(f.key), f.get(s), std::string(f.assumed)});
  }
  return out;
}

}  // namespace trainsim
