// The uncertainty table from leave-one-source-out residuals (data/uncertainty.json).
#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "trainsim/uncertainty.h"

namespace trainsim {
namespace {

// The band holds 80 % of held-out cases; the signed quantiles kept for reading are 10 % / 90 %.
constexpr double kCoverage = 0.80, kLowQuantile = 0.10, kHighQuantile = 0.90;
// The narrowest half-width either side.
constexpr double kMinHalfWidth = 0.01;

// Quantile q of sorted values, linear between order statistics (Hyndman & Fan 1996, type 7:
// the default of R and numpy).
double Quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double h = (sorted.size() - 1) * q;
  const size_t i = static_cast<size_t>(std::floor(h));
  if (i + 1 >= sorted.size()) return sorted.back();
  return sorted[i] + (h - i) * (sorted[i + 1] - sorted[i]);
}

double Round4(double x) {
  return std::round(x * 1e4) / 1e4;
}

struct Residuals {
  std::vector<double> errors;  // (pred - meas) / meas
  std::set<std::string> families;
};

RegimeBand Band(const std::string& name, Residuals& r) {
  RegimeBand b;
  b.regime = name;
  b.cases = static_cast<int>(r.errors.size());
  b.families = static_cast<int>(r.families.size());
  std::sort(r.errors.begin(), r.errors.end());
  b.error_q10 = Quantile(r.errors, kLowQuantile);
  b.error_q90 = Quantile(r.errors, kHighQuantile);
  // measured / predicted = 1 / (1 + error).
  std::vector<double> logs;
  for (double e : r.errors) logs.push_back(std::fabs(std::log1p(e)));
  std::sort(logs.begin(), logs.end());
  b.log_half_width = Quantile(logs, kCoverage);
  b.rel_below = std::max(kMinHalfWidth, 1 - std::exp(-b.log_half_width));
  b.rel_above = std::max(kMinHalfWidth, std::expm1(b.log_half_width));
  return b;
}

}  // namespace

namespace {

// One held-out case: its error, family and regimes (most specific first, ending with "all").
struct Placed {
  double error = 0;
  std::string family;
  std::vector<std::string> chain;
  bool unfitted = false;  // scored without a fit of its own hardware (HeldOutSource)
  bool rl = false;        // an RL step: served by kRlRegime only
};

int Depth(const std::string& regime) {
  return regime == "all" ? -1 : static_cast<int>(std::count(regime.begin(), regime.end(), '/'));
}

// Serves each case by the most specific regime that, counting only the cases no more specific
// regime already serves, meets the rule; the band of a regime then comes from exactly the cases
// it serves (a parent computed over all its children's cases was narrower than the cases left to
// it: 67 % coverage for "all"). "all" serves the rest, or every case when the rest is too few.
std::map<std::string, Residuals> Serve(const std::vector<Placed>& placed, const RegimeRule& rule) {
  std::set<std::string> names;
  for (const Placed& p : placed) names.insert(p.chain.begin(), p.chain.end());
  std::vector<std::string> order(names.begin(), names.end());
  std::stable_sort(order.begin(), order.end(),
                   [](const std::string& a, const std::string& b) { return Depth(a) > Depth(b); });
  std::vector<bool> served(placed.size(), false);
  std::map<std::string, Residuals> out;
  for (const std::string& name : order) {
    Residuals r;
    std::vector<size_t> took;
    for (size_t i = 0; i < placed.size(); ++i) {
      if (served[i] ||
          std::find(placed[i].chain.begin(), placed[i].chain.end(), name) == placed[i].chain.end())
        continue;
      r.errors.push_back(placed[i].error);
      r.families.insert(placed[i].family);
      took.push_back(i);
    }
    const bool enough = static_cast<int>(r.errors.size()) >= rule.min_cases &&
                        static_cast<int>(r.families.size()) >= rule.min_families;
    if (name == "all" && !enough) {
      r = {};
      for (const Placed& p : placed) r.errors.push_back(p.error), r.families.insert(p.family);
    } else if (!enough) {
      continue;
    }
    for (size_t i : took) served[i] = true;
    out[name] = std::move(r);
  }
  return out;
}

}  // namespace

namespace {

std::vector<Placed> PlaceHeldOut(const CrossValidation& loso,
                                 const std::vector<ValidationCase>& cases) {
  std::map<std::string, const ValidationCase*> by_id;
  for (const ValidationCase& c : cases) by_id.emplace(c.id, &c);
  // Per family, the hardware no other family measured: scored without a fit of its own.
  std::set<std::pair<std::string, std::string>> unfitted;  // (family, hardware id)
  for (const HeldOutSource& src : loso.sources)
    for (const std::string& hw : src.unfitted_hardware) unfitted.emplace(src.family, hw);
  std::vector<Placed> placed;
  for (const CaseResult& r : loso.held_out.cases) {
    auto it = by_id.find(r.id);
    if (r.skipped || it == by_id.end()) continue;
    const ValidationCase& c = *it->second;
    const RegimeFeatures f = RegimeOf(c.model, c.hw, c.strategy);
    placed.push_back(
        {r.error, r.family, RegimeNames(f), unfitted.count({r.family, c.hw.id}) > 0, f.rl});
  }
  return placed;
}

bool IsFinetune(const Placed& p) {
  return std::find(p.chain.begin(), p.chain.end(), "finetune") != p.chain.end();
}

// The non-RL cases of `blind` (source-blinded held-out results), pre-training ones for
// kStackInferredRegime, fine-tuning ones for kStackInferredFinetuneRegime.
Residuals InferredStack(const std::vector<Placed>& blind, bool finetune) {
  Residuals r;
  for (const Placed& p : blind)
    if (!p.rl && IsFinetune(p) == finetune)
      r.errors.push_back(p.error), r.families.insert(p.family);
  return r;
}

std::map<std::string, Residuals> Regimes(const std::vector<Placed>& placed, const RegimeRule& rule,
                                         const std::vector<Placed>& blind = {}) {
  // RL steps form their own regime, kept whatever its size (two source families so far), and
  // leave the training regimes as they were.
  std::vector<Placed> training;
  Residuals rl;
  for (const Placed& p : placed) {
    if (!p.rl)
      training.push_back(p);
    else
      rl.errors.push_back(p.error), rl.families.insert(p.family);
  }
  std::map<std::string, Residuals> regimes = Serve(training, rule);
  if (!rl.errors.empty()) regimes[kRlRegime] = std::move(rl);
  // "uncalibrated" is kept whatever its size: the only measurement of an error on hardware the
  // calibration never saw.
  Residuals uncalibrated;
  for (const Placed& p : training)
    if (p.unfitted) uncalibrated.errors.push_back(p.error), uncalibrated.families.insert(p.family);
  if (!uncalibrated.errors.empty()) regimes[kUncalibratedRegime] = std::move(uncalibrated);
  if (Residuals inferred = InferredStack(blind, false); !inferred.errors.empty())
    regimes[kStackInferredRegime] = std::move(inferred);
  if (Residuals inferred = InferredStack(blind, true); !inferred.errors.empty())
    regimes[kStackInferredFinetuneRegime] = std::move(inferred);
  return regimes;
}

}  // namespace

std::vector<RegimeBand> RegimeBands(const CrossValidation& loso,
                                    const std::vector<ValidationCase>& cases,
                                    const RegimeRule& rule, const CrossValidation* blind) {
  std::vector<RegimeBand> out;
  const std::vector<Placed> blinded = blind ? PlaceHeldOut(*blind, cases) : std::vector<Placed>{};
  for (auto& [name, r] : Regimes(PlaceHeldOut(loso, cases), rule, blinded))
    out.push_back(Band(name, r));
  return out;
}

namespace {

// The wider of b and the band `name` of `bands` (when there is one).
const RegimeBand* Wider(const RegimeBand* b, const std::map<std::string, RegimeBand>& bands,
                        const char* name) {
  auto u = bands.find(name);
  if (u == bands.end() || u->second.rel_below + u->second.rel_above <= b->rel_below + b->rel_above)
    return b;
  return &u->second;
}

std::vector<Placed> OtherFamilies(const std::vector<Placed>& placed, const std::string& family) {
  std::vector<Placed> out;
  for (const Placed& p : placed)
    if (p.family != family) out.push_back(p);
  return out;
}

// The band check over `scored` (held-out results of `placed`'s families, or their blinded
// twins when `blind` is given): each family's cases against bands built from the other
// families only; a blinded case takes the wider of its band and the stack-inferred one.
BandCheck Coverage(const std::vector<Placed>& placed, const std::vector<Placed>* blind,
                   const RegimeRule& rule) {
  const std::vector<Placed>& scored = blind ? *blind : placed;
  std::set<std::string> families;
  for (const Placed& p : scored) families.insert(p.family);
  BandCheck out;
  double width = 0;
  for (const std::string& family : families) {
    std::map<std::string, RegimeBand> bands;
    for (auto& [name, r] : Regimes(OtherFamilies(placed, family), rule,
                                   blind ? OtherFamilies(*blind, family) : std::vector<Placed>{}))
      bands[name] = Band(name, r);
    for (const Placed& p : scored) {
      if (p.family != family) continue;
      const RegimeBand* b = nullptr;
      for (const std::string& name : p.chain)
        if (auto it = bands.find(name); it != bands.end() && !b) b = &it->second;
      if (!b) continue;
      if (p.unfitted) b = Wider(b, bands, kUncalibratedRegime);
      if (blind && !p.rl)
        b = Wider(b, bands,
                  IsFinetune(p) && bands.count(kStackInferredFinetuneRegime)
                      ? kStackInferredFinetuneRegime
                      : kStackInferredRegime);
      const double measured = 1 / (1 + p.error);  // for a prediction of 1
      out.inside += 1 - b->rel_below <= measured && measured <= 1 + b->rel_above;
      width += (b->rel_below + b->rel_above) / 2;
      ++out.cases;
    }
  }
  out.coverage = out.cases ? static_cast<double>(out.inside) / out.cases : 0;
  out.mean_half_width = out.cases ? width / out.cases : 0;
  return out;
}

}  // namespace

BandCheck HeldOutBandCoverage(const CrossValidation& loso, const std::vector<ValidationCase>& cases,
                              const RegimeRule& rule) {
  return Coverage(PlaceHeldOut(loso, cases), nullptr, rule);
}

BandCheck InferredStackBandCoverage(const CrossValidation& loso, const CrossValidation& blind,
                                    const std::vector<ValidationCase>& cases,
                                    const RegimeRule& rule) {
  const std::vector<Placed> blinded = PlaceHeldOut(blind, cases);
  return Coverage(PlaceHeldOut(loso, cases), &blinded, rule);
}

std::string UncertaintyTableJson(const std::vector<RegimeBand>& bands,
                                 const std::vector<std::string>& case_files,
                                 std::string_view command, std::string_view date, int cases_total,
                                 const RegimeRule& rule) {
  nlohmann::ordered_json j;
  j["about"] =
      "Error bands of trainsim step-time predictions from leave-one-source-out residuals: "
      "log_half_width b is the 80th percentile of |ln(measured / predicted)| of the held-out "
      "cases of a regime; simulate reports step_time_s * (1 - rel_below) .. step_time_s * (1 + "
      "rel_above) = step_time_s * e^-b .. e^b, using the most specific regime listed. error_q10 "
      "/ error_q90: signed (predicted - measured) / measured quantiles, for reading. See "
      "docs/VALIDATION.md.";
  j["generated_by"] = std::string(command);
  j["date"] = std::string(date);
  j["case_files"] = case_files;
  j["cases"] = cases_total;
  j["min_cases"] = rule.min_cases;
  j["min_families"] = rule.min_families;
  j["coverage"] = kCoverage;
  nlohmann::ordered_json regimes = nlohmann::ordered_json::array();
  for (const RegimeBand& b : bands)
    regimes.push_back({{"regime", b.regime},
                       {"cases", b.cases},
                       {"families", b.families},
                       {"error_q10", Round4(b.error_q10)},
                       {"error_q90", Round4(b.error_q90)},
                       {"log_half_width", Round4(b.log_half_width)},
                       {"rel_below", Round4(b.rel_below)},
                       {"rel_above", Round4(b.rel_above)}});
  j["regimes"] = regimes;
  return j.dump(2) + "\n";
}

}  // namespace trainsim
