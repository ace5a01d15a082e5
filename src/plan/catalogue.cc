// The hardware catalogue as recommend sees it: every embedded preset and its calibration status.
#include "trainsim/plan.h"
#include "trainsim/presets.h"

namespace trainsim {

Result<std::vector<CatalogueEntry>> LoadCatalogue() {
  std::vector<CatalogueEntry> out;
  for (const std::string& id : ListHardwarePresets()) {
    auto hw = LoadHardwarePreset(id);
    if (!hw.ok()) return hw.status();
    CatalogueEntry e;
    e.hw = std::move(hw).value();
    // The catalogue's own marking: efficiencies fitted to measurements of this GPU, not borrowed
    // (efficiency_from) or nominal.
    e.calibrated = e.hw.calibrated;
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace trainsim
