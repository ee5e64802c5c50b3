#include <cstdio>
#include <cstdlib>
#include <string>

#include <spdlog/spdlog.h>

#include "ir/limits.h"
#include "tests/fuzz/fuzz_target.h"

namespace dlc::fuzz {

void setUp() {
  Limits l;
  l.maxTensorBytes = int64_t{64} << 20;
  l.maxNodes = 20'000;
  l.maxLoopIterations = 1'000;
  setLimits(l);
  spdlog::set_level(spdlog::level::off);
}

void debug(std::string_view stage, std::string_view message) {
  static const bool on = std::getenv("DLC_FUZZ_DEBUG") != nullptr;
  if (on)
    std::fprintf(stderr, "%s: %s\n", std::string(stage).c_str(), std::string(message).c_str());
}

void fail(std::string_view what, std::string_view detail) {
  std::fprintf(stderr, "dlc fuzz finding: %s\n%s\n", std::string(what).c_str(),
               std::string(detail).c_str());
  std::abort();
}

} // namespace dlc::fuzz
