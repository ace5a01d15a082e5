// The hardware catalogue as recommend sees it: every embedded preset and its calibration status.
#include <nlohmann/json.hpp>

#include "spec/embedded.h"
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
    // Uncalibrated: efficiencies borrowed from other silicon ("efficiency_from"), or a preset
    // marked "calibrated": false (the catalogue's own marking).
    if (const std::string_view* text = detail::FindEmbeddedFile("hardware/" + id + ".json")) {
      const auto j = nlohmann::json::parse(text->begin(), text->end(), nullptr, false);
      if (j.is_object()) {
        if (j.contains("efficiency_from") && !j["efficiency_from"].is_null()) e.calibrated = false;
        if (j.contains("calibrated") && j["calibrated"].is_boolean() &&
            !j["calibrated"].get<bool>())
          e.calibrated = false;
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace trainsim
