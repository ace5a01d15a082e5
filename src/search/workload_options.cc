// The workload of a search (trainsim/search.h, ApplySearchWorkload): what is trained, read
// from strategy keys by the CLI, the REST service and the Python module alike.
#include <algorithm>
#include <sstream>

#include "trainsim/schema.h"
#include "trainsim/search.h"

namespace trainsim {
namespace {

// `method: lora,qlora` / `lora_rank: 8,16,64`: the values to search over, each checked as the
// single-valued key would be; the first stays in `given` for the workload.
Status ReadSearchList(std::map<std::string, std::string>& given, const std::string& key,
                      std::vector<Strategy>& out, bool name_flags) {
  auto it = given.find(key);
  if (it == given.end() || it->second.find(',') == std::string::npos) return Status::Ok();
  std::stringstream in(it->second);
  for (std::string item; std::getline(in, item, ',');) {
    if (item.empty()) return Status::Invalid(key, "empty item in the list '" + it->second + "'");
    Strategy probe;
    if (Status st = ApplyStrategySettings(probe, {{key, item}}, name_flags); !st.ok()) return st;
    out.push_back(probe);
  }
  it->second = it->second.substr(0, it->second.find(','));
  return Status::Ok();
}

}  // namespace

const std::vector<std::string>& SearchWorkloadKeys() {
  static const std::vector<std::string> keys = {
      "stage",          "method",           "lora_rank",    "lora_targets",  "freeze_layers",
      "virtual_tokens", "optimizer",        "mean_seq",     "group_size",    "prompt_len",
      "response_len",   "max_response_len", "rl_minibatch", "master_weights"};
  return keys;
}

Status ApplySearchWorkload(const std::map<std::string, std::string>& values, SearchOptions& o,
                           bool name_flags) {
  std::map<std::string, std::string> given;
  const std::vector<std::string>& keys = SearchWorkloadKeys();
  for (const auto& [key, text] : values) {
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      return Status::Invalid(key,
                             "not a workload key of a search (the search chooses the "
                             "layout; workload keys: stage, method, lora_rank, ...)");
    if (!text.empty()) given[key] = text;
  }
  std::vector<Strategy> methods, ranks;
  if (Status st = ReadSearchList(given, "method", methods, name_flags); !st.ok()) return st;
  if (Status st = ReadSearchList(given, "lora_rank", ranks, name_flags); !st.ok()) return st;
  o.methods.clear();
  o.lora_ranks.clear();
  for (const Strategy& m : methods) o.methods.push_back(m.method);
  for (const Strategy& r : ranks) o.lora_ranks.push_back(r.lora_rank);
  Strategy s;
  if (Status st = ApplyStrategySettings(s, given, name_flags); !st.ok()) return st;
  o.workload = s.workload();
  o.optimizer = s.exec.optimizer;
  o.master_weights = s.master_weights;
  return Status::Ok();
}

}  // namespace trainsim
