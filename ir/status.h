// Status and Expected<T>: how every fallible step in dlc reports failure.
//
// A Status is either ok or carries a code and a message meant for the user; the message
// names where things went wrong (file, node, op, pass). Expected<T> is a value or a Status.
// Two macros propagate errors: DLC_RETURN_IF_ERROR and DLC_ASSIGN_OR_RETURN. DLC_CHECK is
// only for internal invariants: user input never reaches it.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <variant>

#include <fmt/format.h>

namespace dlc {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument, // bad user input: a malformed model, a wrong flag
  kNotFound,        // a file, an input, a name that does not exist
  kUnimplemented,   // well-formed, but dlc does not support it (yet)
  kOutOfRange,      // an index or size past a limit
  kInternal,        // a bug in dlc
  kUnavailable,     // a resource (GPU, driver, toolkit) is not there
};

const char *statusCodeName(StatusCode code);

class [[nodiscard]] Status {
public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  bool isOk() const { return code_ == StatusCode::kOk; }
  explicit operator bool() const { return isOk(); }
  StatusCode code() const { return code_; }
  const std::string &message() const { return message_; }

  /// Returns a copy whose message is prefixed with `context: `.
  Status withContext(const std::string &context) const {
    if (isOk())
      return *this;
    return Status(code_, context + ": " + message_);
  }

private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

template <typename... Args> Status invalidArgument(fmt::format_string<Args...> f, Args &&...args) {
  return Status(StatusCode::kInvalidArgument, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args> Status notFound(fmt::format_string<Args...> f, Args &&...args) {
  return Status(StatusCode::kNotFound, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args> Status unimplemented(fmt::format_string<Args...> f, Args &&...args) {
  return Status(StatusCode::kUnimplemented, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args> Status outOfRange(fmt::format_string<Args...> f, Args &&...args) {
  return Status(StatusCode::kOutOfRange, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args> Status internalError(fmt::format_string<Args...> f, Args &&...args) {
  return Status(StatusCode::kInternal, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args> Status unavailable(fmt::format_string<Args...> f, Args &&...args) {
  return Status(StatusCode::kUnavailable, fmt::format(f, std::forward<Args>(args)...));
}

/// A value of type T, or the Status that explains why there is none.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : v_(std::move(value)) {}
  Expected(Status status) : v_(std::move(status)) {
    if (std::get<Status>(v_).isOk()) {
      std::fprintf(stderr, "dlc internal error: Expected constructed from an ok Status\n");
      std::abort();
    }
  }

  bool hasValue() const { return std::holds_alternative<T>(v_); }
  explicit operator bool() const { return hasValue(); }
  const Status &status() const {
    static const Status kOk;
    return hasValue() ? kOk : std::get<Status>(v_);
  }
  Status takeStatus() { return hasValue() ? Status() : std::move(std::get<Status>(v_)); }

  T &value() & { return std::get<T>(v_); }
  const T &value() const & { return std::get<T>(v_); }
  T &&value() && { return std::move(std::get<T>(v_)); }
  T &operator*() & { return value(); }
  const T &operator*() const & { return value(); }
  T *operator->() { return &value(); }
  const T *operator->() const { return &value(); }

private:
  std::variant<T, Status> v_;
};

namespace detail {
inline Status toStatus(Status s) { return s; }
template <typename T> Status toStatus(Expected<T> &&e) { return e.takeStatus(); }
[[noreturn]] void checkFailed(const char *file, int line, const char *cond, const std::string &msg);
} // namespace detail

} // namespace dlc

#define DLC_CONCAT_IMPL(a, b) a##b
#define DLC_CONCAT(a, b) DLC_CONCAT_IMPL(a, b)

/// Returns the Status of `expr` (a Status or an Expected) from the enclosing function if it
/// is an error.
#define DLC_RETURN_IF_ERROR(expr)                                                                  \
  do {                                                                                             \
    ::dlc::Status _dlc_status = ::dlc::detail::toStatus(expr);                                     \
    if (!_dlc_status.isOk())                                                                       \
      return _dlc_status;                                                                          \
  } while (0)

/// `DLC_ASSIGN_OR_RETURN(auto x, f());` declares x from an Expected, or returns its error.
#define DLC_ASSIGN_OR_RETURN(lhs, expr)                                                            \
  DLC_ASSIGN_OR_RETURN_IMPL(DLC_CONCAT(_dlc_expected_, __LINE__), lhs, expr)
#define DLC_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr)                                                  \
  auto tmp = (expr);                                                                               \
  if (!tmp.hasValue())                                                                             \
    return tmp.takeStatus();                                                                       \
  lhs = std::move(tmp).value()

/// Internal invariant. Never use it for anything a user's input can trigger.
#define DLC_CHECK(cond, ...)                                                                       \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      ::dlc::detail::checkFailed(__FILE__, __LINE__, #cond, ::fmt::format("" __VA_ARGS__));        \
  } while (0)
