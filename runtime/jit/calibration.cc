#include "runtime/jit/calibration.h"

#include <cmath>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "ir/printer.h"

namespace dlc {

Expected<Calibrator> Calibrator::create(const Graph &graph, const RangeMethod &method,
                                        Backend backend) {
  std::vector<const Value *> watched(graph.inputs().begin(), graph.inputs().end());
  for (const Node *n : graph.nodes())
    for (const Value *v : n->outputs())
      if (v)
        watched.push_back(v);
  jit::ValueRunnerOptions opts;
  opts.backend = backend;
  DLC_ASSIGN_OR_RETURN(jit::ValueRunner runner, jit::ValueRunner::create(graph, watched, opts));
  return Calibrator(graph, std::move(runner), method);
}

void Calibrator::observe(const Value *v, const Tensor &t) {
  if (!isFloat(t.dtype()))
    return;
  auto it = collectors_.find(v);
  if (it == collectors_.end())
    it = collectors_.emplace(v, RangeCollector(method_)).first;
  it->second.add(t);
}

Status Calibrator::addSample(const std::map<std::string, Tensor> &inputs) {
  DLC_RETURN_IF_ERROR(
      runner_.run(inputs, [this](const Value *v, const Tensor &t) { observe(v, t); }));
  ++samples_;
  return Status::ok();
}

std::vector<const Value *> Calibrator::valuesInOrder() const {
  std::vector<const Value *> out(graph_->inputs().begin(), graph_->inputs().end());
  for (const Node *n : graph_->nodes())
    for (const Value *v : n->outputs())
      if (v)
        out.push_back(v);
  return out;
}

RangeMap Calibrator::ranges() const {
  RangeMap out;
  for (const auto &[v, c] : collectors_)
    if (auto r = c.range())
      out[v] = *r;
  return out;
}

std::vector<std::pair<const Value *, int64_t>> Calibrator::nonFinite() const {
  std::vector<std::pair<const Value *, int64_t>> out;
  for (const Value *v : valuesInOrder()) {
    auto it = collectors_.find(v);
    if (it != collectors_.end() && it->second.nonFinite() > 0)
      out.emplace_back(v, it->second.nonFinite());
  }
  return out;
}

std::string graphHash(const Graph &g) {
  const std::string text = printGraph(g); // large constants print as their data hash
  return fmt::format("{:016x}", fnv1a64(text.data(), text.size()));
}

RangeTable makeRangeTable(const Graph &g, const RangeMap &ranges, const std::string &method,
                          int samples) {
  RangeTable t{graphHash(g), method, samples, {}};
  auto add = [&](const Value *v) {
    auto it = v ? ranges.find(v) : ranges.end();
    if (it != ranges.end())
      t.ranges.emplace_back(v->name(), it->second);
  };
  for (const Value *v : g.inputs())
    add(v);
  for (const Node *n : g.nodes())
    for (const Value *v : n->outputs())
      add(v);
  return t;
}

std::string rangeTableJson(const RangeTable &table) {
  std::string out = fmt::format("{{\n  \"graph_hash\": {},\n  \"method\": {},\n  \"samples\": "
                                "{},\n  \"ranges\": {{",
                                nlohmann::json(table.graphHash).dump(),
                                nlohmann::json(table.method).dump(), table.samples);
  for (size_t i = 0; i < table.ranges.size(); ++i) {
    const auto &[name, r] = table.ranges[i];
    out +=
        fmt::format("{}\n    {}: [{}, {}]", i ? "," : "", nlohmann::json(name).dump(), r.lo, r.hi);
  }
  out += table.ranges.empty() ? "}\n}\n" : "\n  }\n}\n";
  return out;
}

Expected<RangeTable> parseRangeTable(const std::string &json, const std::string &what) {
  nlohmann::json j = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object())
    return invalidArgument("{}: not a range table (expected a JSON object with graph_hash, "
                           "method, samples and ranges)",
                           what);
  RangeTable t;
  if (!j.contains("graph_hash") || !j["graph_hash"].is_string())
    return invalidArgument("{}: 'graph_hash' is missing or not a string", what);
  t.graphHash = j["graph_hash"].get<std::string>();
  if (j.contains("method") && j["method"].is_string())
    t.method = j["method"].get<std::string>();
  if (j.contains("samples") && j["samples"].is_number_integer())
    t.samples = j["samples"].get<int>();
  if (!j.contains("ranges") || !j["ranges"].is_object())
    return invalidArgument("{}: 'ranges' is missing or not an object", what);
  for (const auto &[name, r] : j["ranges"].items()) {
    if (!r.is_array() || r.size() != 2 || !r[0].is_number() || !r[1].is_number())
      return invalidArgument("{}: range of '{}': expected [lo, hi], got {}", what, name, r.dump());
    const auto lo = r[0].get<float>(), hi = r[1].get<float>();
    if (!std::isfinite(lo) || !std::isfinite(hi) || lo > hi)
      return invalidArgument("{}: range of '{}': [{}, {}] is not a finite range with lo <= hi",
                             what, name, lo, hi);
    t.ranges.emplace_back(name, ValueRange{lo, hi});
  }
  return t;
}

Expected<RangeMap> rangesForGraph(const RangeTable &table, const Graph &g,
                                  const std::string &what) {
  const std::string hash = graphHash(g);
  if (table.graphHash != hash)
    return invalidArgument("{}: the ranges were calibrated for another graph (graph_hash {}, "
                           "this graph's is {}); calibrate again with --calibration DIR",
                           what, table.graphHash, hash);
  RangeMap out;
  for (const auto &[name, r] : table.ranges) {
    const Value *v = g.findValue(name);
    if (!v || (!v->isInput() && !v->isNodeOutput()))
      return invalidArgument("{}: the graph has no input or node output named '{}'", what, name);
    out[v] = r;
  }
  return out;
}

} // namespace dlc
