// Status construction (include/trainsim/status.h), out of line: only error paths build one.
#include "trainsim/status.h"

#include "util/text_guard.h"

namespace trainsim {

Status::Status(StatusCode c, std::string m) : code_(c), message_(std::move(m)) {
  const size_t colon = message_.find(": ");
  if (colon != std::string::npos) field_ = message_.substr(0, colon);
}

Status::Status(StatusCode c, std::string field, std::string_view rule)
    : code_(c), message_(field), field_(std::move(field)) {
  if (!message_.empty()) message_ += ": ";
  message_ += rule;
}

std::string Status::OneLine() const {
  return util::EscapeForTerminal(message_);
}

Status Status::WithContext(std::string_view context) const {
  if (ok() || context.empty()) return *this;
  Status s = *this;
  s.message_ = std::string(context) + ": " + message_;
  return s;
}

}  // namespace trainsim
