// Parsing and printing pipeline strings (declared in passes/pass_manager.h).
#include <algorithm>

#include "passes/pass_manager.h"

namespace dlc {

namespace {

std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t\n");
  if (b == std::string_view::npos)
    return {};
  size_t e = s.find_last_not_of(" \t\n");
  return s.substr(b, e - b + 1);
}

/// Checks every given option against what the pass accepts.
Status checkOptions(const PassOptions &options, const std::vector<PassOptionSpec> &specs) {
  for (const auto &[key, value] : options.values) {
    const std::string &name = key; // clang 14 cannot capture a structured binding
    auto spec = std::find_if(specs.begin(), specs.end(),
                             [&](const PassOptionSpec &s) { return s.name == name; });
    if (spec == specs.end()) {
      if (specs.empty())
        return invalidArgument("unknown option '{}'; it takes no options", key);
      std::string known;
      for (const PassOptionSpec &s : specs)
        known += (known.empty() ? "" : ", ") + s.name;
      return invalidArgument("unknown option '{}'; known options: {}", key, known);
    }
    switch (spec->kind) {
    case PassOptionSpec::Kind::kInt:
      DLC_RETURN_IF_ERROR(options.getInt(key, 0));
      break;
    case PassOptionSpec::Kind::kBool:
      DLC_RETURN_IF_ERROR(options.getBool(key, false));
      break;
    case PassOptionSpec::Kind::kString:
      break;
    }
  }
  return Status::ok();
}

/// Parses `k=v,k=v` (the text between braces) into `options`.
Status parseOptionList(std::string_view text, PassOptions &options) {
  if (trim(text).empty())
    return Status::ok();
  while (true) {
    size_t comma = text.find(',');
    std::string_view item = trim(text.substr(0, comma));
    size_t eq = item.find('=');
    std::string_view key = trim(item.substr(0, eq));
    if (eq == std::string_view::npos || key.empty())
      return invalidArgument("expected 'key=value' in options, got '{}'", item);
    std::string_view value = trim(item.substr(eq + 1));
    if (!options.values.emplace(std::string(key), std::string(value)).second)
      return invalidArgument("option '{}' is given twice", key);
    if (comma == std::string_view::npos)
      return Status::ok();
    text = text.substr(comma + 1);
  }
}

} // namespace

Expected<Pipeline> parsePipeline(std::string_view text) {
  Pipeline pipeline;
  if (trim(text).empty())
    return pipeline;
  size_t pos = 0;
  while (true) {
    size_t stop = text.find_first_of(",{", pos);
    std::string_view name = trim(text.substr(pos, stop - pos));
    if (name.empty())
      return invalidArgument("empty pass name at offset {} of pipeline '{}'", pos, text);
    const PassInfo *info = findPass(name);
    if (!info)
      return unknownPassError(name);
    PipelineEntry entry{std::string(name), info->create, {}};
    entry.options.pass = entry.name;
    pos = stop;
    if (pos != std::string_view::npos && text[pos] == '{') {
      size_t close = text.find('}', pos);
      if (close == std::string_view::npos)
        return invalidArgument("pass '{}': missing '}}' after its options", name);
      DLC_RETURN_IF_ERROR(parseOptionList(text.substr(pos + 1, close - pos - 1), entry.options)
                              .withContext(fmt::format("pass '{}'", name)));
      pos = text.find_first_not_of(" \t\n", close + 1);
      if (pos != std::string_view::npos && text[pos] != ',')
        return invalidArgument("expected ',' after the options of pass '{}', got '{}'", name,
                               text[pos]);
    }
    DLC_RETURN_IF_ERROR(checkOptions(entry.options, entry.create()->options())
                            .withContext(fmt::format("pass '{}'", name)));
    pipeline.passes.push_back(std::move(entry));
    if (pos == std::string_view::npos)
      return pipeline;
    ++pos; // past ','
  }
}

std::string Pipeline::str() const {
  std::string out;
  for (const PipelineEntry &e : passes) {
    if (!out.empty())
      out += ",";
    out += e.name;
    if (e.options.values.empty())
      continue;
    std::string opts;
    for (const auto &[key, value] : e.options.values)
      opts += (opts.empty() ? "" : ",") + key + "=" + value;
    out += "{" + opts + "}";
  }
  return out;
}

bool Pipeline::contains(std::string_view name) const {
  return std::any_of(passes.begin(), passes.end(),
                     [&](const PipelineEntry &e) { return e.name == name; });
}

} // namespace dlc
