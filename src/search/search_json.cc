// Search results as JSON, CSV and the summary line; the shard document the MPI driver sends.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "trainsim/results_json.h"
#include "trainsim/schema.h"

namespace trainsim {
namespace {

using nlohmann::json;

json CandidateJson(const Candidate& c) {
  const Strategy& s = c.strategy;
  return {{"strategy", DescribeStrategy(s)},
          {"tp", s.tp},
          {"pp", s.pp},
          {"vpp", s.vpp},
          {"cp", s.cp},
          {"ep", s.ep},
          {"etp", s.expert_tp()},
          {"dp", s.dp()},
          {"mbs", s.mbs},
          {"zero", s.zero},
          {"sp", s.sp && s.tp > 1},
          {"step_time_s", c.step_time_s},
          {"mfu", c.mfu},
          {"tokens_per_s_per_gpu", c.tokens_per_s_per_gpu},
          {"peak_mem_bytes", c.peak_mem_bytes},
          {"usd_per_million_tokens", c.usd_per_million_tokens},
          {"variants", c.variants},
          {"megatron_args", MegatronArgs(s)},
          // The whole strategy as a strategy file (the "strategy" object of `simulate --json`),
          // so a front-end can simulate a candidate exactly (the web page's Pareto click).
          {"strategy_file", StrategyToJson(s)}};
}

// Shard candidates: [index, step_time_s, mfu, tokens_per_s_per_gpu, peak_mem_bytes,
// reserved_bytes, usd_per_million_tokens, variants].
json ShardCandidates(const std::vector<Candidate>& v) {
  json a = json::array();
  for (const Candidate& c : v)
    a.push_back({c.index, c.step_time_s, c.mfu, c.tokens_per_s_per_gpu, c.peak_mem_bytes,
                 c.reserved_bytes, c.usd_per_million_tokens, c.variants});
  return a;
}

Result<std::vector<Candidate>> CandidatesFrom(const json& j, const char* key,
                                              const SearchSpace& space) {
  const std::string where = std::string("search shard: ") + key;
  if (!j.contains(key) || !j[key].is_array()) return Status::Parse(where + ": must be an array");
  std::vector<Candidate> out;
  for (const json& x : j[key]) {
    // The 8th element (variants) is absent from shards of older builds.
    if (!x.is_array() || (x.size() != 7 && x.size() != 8) || !x[0].is_number_unsigned() ||
        (x.size() == 8 && !x[7].is_number_unsigned()))
      return Status::Parse(where + ": each candidate must be [index, 6 numbers, variants]");
    for (size_t k = 1; k < 7; ++k)
      if (!x[k].is_number()) return Status::Parse(where + ": each candidate must be numbers");
    Candidate c;
    c.index = x[0].get<uint64_t>();
    if (c.index >= space.size())
      return Status::Parse(where + ": index " + std::to_string(c.index) + " outside the space");
    const char* dup = nullptr;
    c.strategy = space.At(c.index, &dup);
    c.step_time_s = x[1].get<double>();
    c.mfu = x[2].get<double>();
    c.tokens_per_s_per_gpu = x[3].get<double>();
    c.peak_mem_bytes = x[4].get<double>();
    c.reserved_bytes = x[5].get<double>();
    c.usd_per_million_tokens = x[6].get<double>();
    if (x.size() == 8) c.variants = x[7].get<uint64_t>();
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::string SearchSummaryLine(const SearchResult& r) {
  std::string line = fmt::format("search: evaluated {} strategies ({} feasible) in {:.3f} s",
                                 r.evaluated, r.feasible, r.seconds);
  if (!r.complete) line += "; incomplete: " + r.stopped;
  return line;
}

std::string SearchResultJson(const SearchResult& r, int indent, const HardwareSpec* hw) {
  json j;
  if (hw) {  // uncalibrated hardware is marked in every report
    j["hardware"] = hw->id;
    j["hardware_calibrated"] = hw->calibrated;
    j["hardware_calibration_status"] = CalibrationStatus(*hw);
  }
  j["evaluated"] = r.evaluated;
  j["feasible"] = r.feasible;
  j["seconds"] = r.seconds;
  j["rejected"] = r.rejected;
  j["collapsed"] = r.collapsed;
  for (const Candidate& c : r.top) j["top"].push_back(CandidateJson(c));
  for (const Candidate& c : r.pareto) j["pareto"].push_back(CandidateJson(c));
  if (!r.complete) {
    j["complete"] = false;
    j["stopped"] = r.stopped;
  }
  j["summary"] = SearchSummaryLine(r);
  return j.dump(indent);
}

std::string SearchResultCsv(const SearchResult& r) {
  std::string o =
      "rank,tp,pp,vpp,cp,ep,etp,dp,mbs,zero,sp,recompute,step_time_s,mfu,tokens_per_s_per_gpu,"
      "peak_mem_gib,usd_per_million_tokens\n";
  int rank = 1;
  for (const Candidate& c : r.top) {
    const Strategy& s = c.strategy;
    o +=
        fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{:.6f},{:.4f},{:.1f},{:.3f},{:.4f}\n",
                    rank++, s.tp, s.pp, s.vpp, s.cp, s.ep, s.expert_tp(), s.dp(), s.mbs, s.zero,
                    s.sp && s.tp > 1 ? 1 : 0, RecomputeName(s.recompute), c.step_time_s, c.mfu,
                    c.tokens_per_s_per_gpu, c.peak_mem_bytes / (1 << 30), c.usd_per_million_tokens);
  }
  return o;
}

std::string SearchShardJson(const SearchResult& r) {
  const json j = {{"space", r.space_size},
                  {"evaluated", r.evaluated},
                  {"feasible", r.feasible},
                  {"seconds", r.seconds},
                  {"rejected", r.rejected},
                  {"top", ShardCandidates(r.top)},
                  {"pareto", ShardCandidates(r.pareto)},
                  {"complete", r.complete},
                  {"stopped", r.stopped}};
  return j.dump();
}

Result<SearchResult> ParseSearchShardJson(std::string_view text, const SearchSpace& space) {
  const json j = json::parse(text.begin(), text.end(), nullptr, false);
  if (!j.is_object()) return Status::Parse("search shard: malformed JSON");
  SearchResult s;
  for (auto [key, out] : {std::pair{"space", &s.space_size}, std::pair{"evaluated", &s.evaluated},
                          std::pair{"feasible", &s.feasible}}) {
    if (!j.contains(key) || !j[key].is_number_unsigned())
      return Status::Parse(std::string("search shard: ") + key + ": must be a count");
    *out = j[key].get<uint64_t>();
  }
  if (!j.contains("seconds") || !j["seconds"].is_number())
    return Status::Parse("search shard: seconds: must be a number");
  s.seconds = j["seconds"].get<double>();
  if (!j.contains("rejected") || !j["rejected"].is_object())
    return Status::Parse("search shard: rejected: must be an object");
  for (const auto& [reason, n] : j["rejected"].items()) {
    if (!n.is_number_unsigned()) return Status::Parse("search shard: rejected: counts only");
    s.rejected[reason] = n.get<uint64_t>();
  }
  if (j.contains("complete") && j["complete"].is_boolean()) s.complete = j["complete"].get<bool>();
  if (j.contains("stopped") && j["stopped"].is_string())
    s.stopped = j["stopped"].get<std::string>();
  auto top = CandidatesFrom(j, "top", space);
  if (!top.ok()) return top.status();
  auto pareto = CandidatesFrom(j, "pareto", space);
  if (!pareto.ok()) return pareto.status();
  s.top = std::move(top).value();
  s.pareto = std::move(pareto).value();
  return s;
}

}  // namespace trainsim
