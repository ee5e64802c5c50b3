#include "ir/status.h"

namespace dlc {

const char *statusCodeName(StatusCode code) {
  switch (code) {
  case StatusCode::kOk:
    return "ok";
  case StatusCode::kInvalidArgument:
    return "invalid argument";
  case StatusCode::kNotFound:
    return "not found";
  case StatusCode::kUnimplemented:
    return "unimplemented";
  case StatusCode::kOutOfRange:
    return "out of range";
  case StatusCode::kInternal:
    return "internal error";
  case StatusCode::kUnavailable:
    return "unavailable";
  }
  return "unknown";
}

namespace detail {
void checkFailed(const char *file, int line, const char *cond, const std::string &msg) {
  std::fprintf(stderr, "dlc internal error: %s:%d: check failed: %s%s%s\n", file, line, cond,
               msg.empty() ? "" : ": ", msg.c_str());
  std::abort();
}
} // namespace detail

} // namespace dlc
