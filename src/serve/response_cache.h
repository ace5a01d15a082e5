// A bounded cache of answers by request body, for the endpoints whose answer is a pure function
// of the body (POST /v1/simulate: the presets are embedded and immutable, the simulation is
// deterministic). Least recently used entries go first. Thread-safe; the lock is held only to
// look up or insert, never while computing.
#pragma once

#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace trainsim::serve {

class ResponseCache {
 public:
  // At most `max_entries` answers of at most `max_answer_bytes` each; 0 entries disables it.
  explicit ResponseCache(size_t max_entries, size_t max_answer_bytes = 64 * 1024)
      : max_entries_(max_entries), max_answer_bytes_(max_answer_bytes) {}

  std::optional<std::string> Find(std::string_view body) const {
    if (max_entries_ == 0) return std::nullopt;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = index_.find(std::string(body));
    if (it == index_.end()) return std::nullopt;
    order_.splice(order_.begin(), order_, it->second);  // most recently used
    return it->second->second;
  }

  void Insert(std::string_view body, const std::string& answer) const {
    if (max_entries_ == 0 || answer.size() > max_answer_bytes_ || body.size() > max_answer_bytes_)
      return;
    std::lock_guard<std::mutex> lock(mu_);
    std::string key(body);
    if (index_.count(key)) return;
    order_.emplace_front(key, answer);
    index_.emplace(std::move(key), order_.begin());
    if (order_.size() > max_entries_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
  }

 private:
  using Entry = std::pair<std::string, std::string>;  // body, answer
  const size_t max_entries_, max_answer_bytes_;
  mutable std::mutex mu_;
  mutable std::list<Entry> order_;
  mutable std::unordered_map<std::string, std::list<Entry>::iterator> index_;
};

}  // namespace trainsim::serve
