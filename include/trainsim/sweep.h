// Design sweeps: the best strategy at every point of a grid of systems and GPU counts.
#pragma once

#include <string>
#include <vector>

#include "trainsim/report.h"
#include "trainsim/search.h"

namespace trainsim {

struct SweepSystem {
  std::string label;  // e.g. "h100_sxm_80gb" or "h100_sxm_80gb nic_gbps_per_gpu=200"
  HardwareSpec hw;
};

struct SweepPoint {
  std::string system;
  int gpus = 0;
  bool feasible = false;
  uint64_t evaluated = 0;
  Candidate best;
  TimeBreakdown time;    // of the best strategy
  bool complete = true;  // false: its search was stopped (cancel or deadline); the last point
};

// Expands "field=v1,v2,..." hardware variations (preset keys, as in hardware overrides) of each
// base system into systems labelled "<base label> field=v". The error names the field.
Result<std::vector<SweepSystem>> ExpandSystems(const std::vector<SweepSystem>& bases,
                                               const std::vector<std::string>& vary);
// Same with the bases loaded by LoadHardware (preset ids or file paths; labels are the ids).
Result<std::vector<SweepSystem>> ExpandSystems(const std::vector<std::string>& hardware,
                                               const std::vector<std::string>& vary);

// Runs Search at every (system, gpus) point; `o.gpus` is replaced by each count. o.cancel and
// o.deadline bound the whole sweep: the point whose search was stopped is the last one returned
// (complete = false); o.progress reports each point's search.
Result<std::vector<SweepPoint>> Sweep(const ModelSpec& m, const std::vector<SweepSystem>& systems,
                                      const std::vector<int>& gpus, SearchOptions o);

std::string SweepCsv(const std::vector<SweepPoint>& points);
// Best step time vs GPU count, one line per system (log-log): strong scaling.
std::string SweepScalingSvg(const std::vector<SweepPoint>& points, const std::string& title);
// Stacked bars of the best strategy's time breakdown at every point.
std::string SweepBreakdownSvg(const std::vector<SweepPoint>& points, const std::string& title);

}  // namespace trainsim
