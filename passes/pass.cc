#include "passes/pass.h"

#include <charconv>

namespace dlc {

Expected<int64_t> PassOptions::getInt(std::string_view key, int64_t dflt) const {
  auto it = values.find(key);
  if (it == values.end())
    return dflt;
  const std::string &text = it->second;
  int64_t v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size())
    return invalidArgument("option '{}': expected an integer, got '{}'", key, text);
  return v;
}

Expected<bool> PassOptions::getBool(std::string_view key, bool dflt) const {
  auto it = values.find(key);
  if (it == values.end())
    return dflt;
  const std::string &text = it->second;
  if (text == "true" || text == "1")
    return true;
  if (text == "false" || text == "0")
    return false;
  return invalidArgument("option '{}': expected true or false, got '{}'", key, text);
}

std::string PassOptions::getString(std::string_view key, std::string dflt) const {
  auto it = values.find(key);
  return it == values.end() ? dflt : it->second;
}

void PassOptions::writeDebugLine(const std::string &message) const {
  *debugOut << "[" << pass << "] " << message << "\n";
}

} // namespace dlc
