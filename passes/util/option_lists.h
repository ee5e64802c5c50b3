// List-valued pass options: `a|b|c` (node names, op text names), as place-devices'
// gpu-unsupported, insert-fake-quant's only/exclude and mixed-precision's keep-fp32 take them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace dlc {

/// The '|'-separated items of `text`, empty items dropped.
inline std::vector<std::string> splitBars(std::string_view text) {
  std::vector<std::string> out;
  while (!text.empty()) {
    const size_t bar = text.find('|');
    if (bar != 0)
      out.emplace_back(text.substr(0, bar));
    text = bar == std::string_view::npos ? std::string_view() : text.substr(bar + 1);
  }
  return out;
}

} // namespace dlc
