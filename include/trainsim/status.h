// Errors are values: every fallible library call returns Status or Result<T>.
// The library never exits or aborts on user input.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace trainsim {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // a field breaks a rule; the message names the field and the rule
  kNotFound,         // file or preset missing
  kParseError,       // malformed text (JSON)
  kInfeasible,       // legal strategy that cannot run (does not fit in memory)
};

// A Status that is dropped on the floor is a bug (an error nobody sees): [[nodiscard]].
class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  // "field: rule"; field() returns `field`. An empty field gives just "rule" (an error about the
  // input as a whole; add the origin with WithContext).
  static Status Invalid(std::string field, std::string_view rule) {
    return Status(StatusCode::kInvalidArgument, std::move(field), rule);
  }
  // A whole message "field: rule..."; field() is the text before the first ": " (empty if none).
  static Status Invalid(std::string msg) {
    return Status(StatusCode::kInvalidArgument, std::move(msg));
  }
  static Status NotFound(std::string msg) { return Status(StatusCode::kNotFound, std::move(msg)); }
  static Status Parse(std::string msg) { return Status(StatusCode::kParseError, std::move(msg)); }
  static Status Infeasible(std::string field, std::string_view rule) {
    return Status(StatusCode::kInfeasible, std::move(field), rule);
  }
  static Status Infeasible(std::string msg) {
    return Status(StatusCode::kInfeasible, std::move(msg));
  }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // The offending field (a JSON key, a strategy field, a command-line flag); empty when the
  // error is not about one field. Computed once, at construction.
  const std::string& field() const { return field_; }

  // The message on one line for a terminal or a log: newlines and control characters (echoed
  // from input) escaped, at most 2000 bytes (then " ... (N bytes)").
  std::string OneLine() const;

  // The same error with "context: " in front of the message (an origin such as a file name);
  // code and field are kept. No-op on an ok Status.
  Status WithContext(std::string_view context) const;

 private:
  // Defined out of line (src/util/status.cc): errors are the cold path, and inlining the message
  // handling into every caller bloats hot functions such as Simulate.
  Status(StatusCode c, std::string m);
  Status(StatusCode c, std::string field, std::string_view rule);
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string field_;
};

// Holds either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}  // NOLINT: implicit by design
  bool ok() const { return std::holds_alternative<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T& value() & { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  const T& operator*() const& { return value(); }
  const T* operator->() const { return &value(); }
  Status status() const { return ok() ? Status::Ok() : std::get<Status>(v_); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace trainsim
