#include "passes/registry.h"

#include <algorithm>
#include <set>

namespace dlc {

const std::vector<PassInfo> &registeredPasses() {
  static const std::vector<PassInfo> passes = [] {
    std::vector<PassInfo> list = {
#define DLC_PASS(cls, name, summary) {name, summary, &create##cls},
#include "passes/passes.def"
#undef DLC_PASS
    };
    std::set<std::string_view> seen;
    for (const PassInfo &p : list)
      DLC_CHECK(seen.insert(p.name).second, "pass '{}' is listed twice in passes.def", p.name);
    return list;
  }();
  return passes;
}

const PassInfo *findPass(std::string_view name) {
  const auto &passes = registeredPasses();
  auto it =
      std::find_if(passes.begin(), passes.end(), [&](const PassInfo &p) { return p.name == name; });
  return it == passes.end() ? nullptr : &*it;
}

Status unknownPassError(std::string_view name) {
  std::string known;
  for (const PassInfo &p : registeredPasses())
    known += (known.empty() ? "" : ", ") + std::string(p.name);
  return invalidArgument("unknown pass '{}'; known passes: {}", name, known);
}

std::string passListHelp() {
  size_t width = 0;
  for (const PassInfo &p : registeredPasses())
    width = std::max(width, p.name.size());
  std::string out;
  for (const PassInfo &p : registeredPasses()) {
    out += fmt::format("  {:<{}}  {}\n", p.name, width, p.summary);
    for (const PassOptionSpec &o : p.create()->options())
      out += fmt::format("  {:<{}}    {{{}=...}} {}\n", "", width, o.name, o.help);
  }
  return out;
}

} // namespace dlc
