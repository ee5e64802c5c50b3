// `dlc inspect MODEL`: what a model holds, before compiling it (or, for a model library, what
// `dlc compile -o` put in it: inspect_library.cc).
//
// Reads the ONNX summary (inputs, outputs, opsets, op histogram, parameters, unsupported
// ops) without converting anything, then, when the model imports, infers shapes, estimates
// the FLOPs of its convolutions and matrix products, and counts nodes per device: requested
// (`place.request`) and as place-devices assigns them on a copy with `dlc opt`'s fake GPU.
#include <cinttypes>
#include <iostream>
#include <map>

#include <nlohmann/json.hpp>

#include "frontend/onnx/importer.h"
#include "passes/pass_manager.h"
#include "tools/dlc/commands.h"
#include "tools/dlc/flops.h"
#include "tools/dlc/inspect_library.h"
#include "tools/dlc/placement_report.h"

namespace dlc::tool {

std::string humanBytes(int64_t b) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024.0 && u < 4) {
    v /= 1024.0;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, units[u]);
}

namespace {

struct InspectArgs {
  std::string model;
  std::string format;
  bool json = false;
  std::vector<std::string> dims;
};

std::string humanCount(double v) {
  const char *units[] = {"", "K", "M", "G", "T", "P"};
  int u = 0;
  while (v >= 1000.0 && u < 5) {
    v /= 1000.0;
    ++u;
  }
  return u == 0 ? fmt::format("{:.0f}", v) : fmt::format("{:.2f}{}", v, units[u]);
}

std::string domainName(const std::string &d) { return d.empty() ? "ai.onnx" : d; }

int runInspect(const InspectArgs &args) {
  if (looksLikeModelLibrary(args.model)) {
    Status st = inspectModelLibrary(args.model, args.json);
    return st.isOk() ? 0 : reportError(st);
  }
  auto formatFlag = parseModelFormatFlag(args.format);
  if (!formatFlag)
    return reportError(formatFlag.status());
  auto format = detectModelFormat(args.model, *formatFlag);
  if (!format)
    return reportError(format.status());
  if (*format == ModelFormat::kTfGraphDef || *format == ModelFormat::kTfText)
    return inspectTfGraph(args.model, *format == ModelFormat::kTfText, args.json);
  auto summaryOr = onnx::summarizeFile(args.model);
  if (!summaryOr)
    return reportError(summaryOr.status());
  const onnx::ModelSummary &sum = *summaryOr;
  auto dimsOr = parseDims(args.dims);
  if (!dimsOr)
    return reportError(dimsOr.status());

  // FLOPs need shapes: import and infer when the model is supported.
  std::optional<FlopReport> flops;
  std::string flopsNote;
  std::optional<DeviceCounts> devices;
  if (sum.unsupported.empty()) {
    auto graphOr = onnx::importFile(args.model);
    if (!graphOr) {
      flopsNote = graphOr.status().message();
    } else {
      Status st = inferShapes(**graphOr);
      if (!st.isOk())
        flopsNote = st.message();
      else
        flops = estimateFlops(**graphOr, *dimsOr);
      if (st.isOk())
        devices = countNodesPerDevice(**graphOr);
    }
  } else {
    flopsNote = "the model has unsupported ops";
  }

  if (args.json) {
    nlohmann::ordered_json j;
    j["model"] = args.model;
    j["ir_version"] = sum.irVersion;
    j["producer"] = sum.producer;
    for (const auto &[d, v] : sum.opsets)
      j["opsets"][domainName(d)] = v;
    for (const auto &io : sum.inputs)
      j["inputs"].push_back({{"name", io.name}, {"type", io.type.str()}});
    for (const auto &io : sum.outputs)
      j["outputs"].push_back({{"name", io.name}, {"type", io.type.str()}});
    j["ops"] = sum.opHistogram;
    for (const auto &[dt, p] : sum.params)
      j["parameters"][std::string(dtypeName(dt))] = {{"count", p.count}, {"bytes", p.bytes}};
    j["unsupported"] = nlohmann::json::array();
    for (const auto &u : sum.unsupported)
      j["unsupported"].push_back({{"op", u.opType},
                                  {"domain", domainName(u.domain)},
                                  {"opset", u.opset},
                                  {"count", u.count},
                                  {"nodes", u.nodes},
                                  {"reason", u.reason}});
    if (flops) {
      j["flops"]["total"] = flops->total;
      j["flops"]["by_op"] = flops->byOp;
      j["flops"]["symbolic_dims"] = flops->assumedDims;
    } else {
      j["flops"] = nullptr;
      j["flops_note"] = flopsNote;
    }
    if (devices) {
      j["placement"] = deviceCountsJson(*devices);
    } else {
      j["placement"] = nullptr;
    }
    std::cout << j.dump(2) << "\n";
    return 0;
  }

  std::cout << "model: " << args.model << "\n";
  std::cout << "  ir_version " << sum.irVersion;
  if (!sum.producer.empty())
    std::cout << ", producer " << sum.producer;
  std::cout << "\n  opsets:";
  for (const auto &[d, v] : sum.opsets)
    std::cout << " " << domainName(d) << " " << v;
  std::cout << "\n";
  size_t width = 8;
  for (const auto *list : {&sum.inputs, &sum.outputs})
    for (const auto &io : *list)
      width = std::max(width, io.name.size());
  std::cout << "inputs:\n";
  for (const auto &io : sum.inputs)
    std::cout << fmt::format("  {:<{}}  {}\n", io.name, width, io.type.str());
  std::cout << "outputs:\n";
  for (const auto &io : sum.outputs)
    std::cout << fmt::format("  {:<{}}  {}\n", io.name, width, io.type.str());
  int64_t nodes = 0;
  for (const auto &[op, n] : sum.opHistogram)
    nodes += n;
  std::cout << fmt::format("ops: {} nodes, {} types\n", nodes, sum.opHistogram.size());
  for (const auto &[op, n] : sum.opHistogram)
    std::cout << fmt::format("  {:<28} {:>6}\n", op, n);
  int64_t totalCount = 0, totalBytes = 0;
  for (const auto &[dt, p] : sum.params) {
    totalCount += p.count;
    totalBytes += p.bytes;
  }
  std::cout << fmt::format("parameters: {} ({})\n", humanCount(static_cast<double>(totalCount)),
                           humanBytes(totalBytes));
  for (const auto &[dt, p] : sum.params)
    std::cout << fmt::format("  {:<6} {:>12} {:>12}\n", dtypeName(dt), p.count,
                             humanBytes(p.bytes));
  if (flops) {
    std::cout << "FLOPs: " << humanCount(flops->total) << " FLOP";
    if (!flops->assumedDims.empty()) {
      std::cout << " (with";
      for (const auto &[name, v] : flops->assumedDims)
        std::cout << " " << name << "=" << v;
      std::cout << ")";
    }
    std::cout << "\n";
    for (const auto &[op, f] : flops->byOp)
      std::cout << fmt::format("  {:<28} {} FLOP\n", op, humanCount(f));
  } else {
    std::cout << "FLOPs: unknown (" << flopsNote << ")\n";
  }
  if (sum.unsupported.empty()) {
    std::cout << "unsupported ops: none\n";
  } else {
    std::cout << "unsupported ops: " << sum.unsupported.size() << "\n";
    for (const auto &u : sum.unsupported) {
      std::string names;
      for (const auto &n : u.nodes)
        names += (names.empty() ? "" : ", ") + (n.empty() ? std::string("<unnamed>") : n);
      std::cout << fmt::format("  {} ({} opset {}): {} node{}: {} -- {}\n", u.opType,
                               domainName(u.domain), u.opset, u.count, u.count == 1 ? "" : "s",
                               names, u.reason);
    }
  }
  if (devices) {
    // Requested: as the model gives them; assigned: place-devices on a copy, with the fake GPU
    // of `dlc opt` (it runs every op): what the GPU pipeline would do before asking the backend.
    std::cout << "nodes per device:\n" << formatDeviceCounts(*devices);
  }
  return 0;
}

} // namespace

void addInspectCommand(CLI::App &app, int &exitCode) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App *cmd = app.add_subcommand(
      "inspect", "Print a model's inputs, outputs, ops, parameters, FLOPs, unsupported ops and "
                 "nodes per device (requested, and as place-devices assigns them), or what a "
                 "model library (dlc compile -o) holds");
  cmd->add_option("model", args->model,
                  "ONNX model (.onnx/.pb), TensorFlow GraphDef (.pb/.pbtxt), or a model library "
                  "(.so)")
      ->required();
  cmd->add_option("--format", args->format,
                  "The model's format: onnx or tf; default: decided by the file's content");
  cmd->add_flag("--json", args->json, "Print the report as JSON");
  cmd->add_option("--dim", args->dims,
                  "Size of a symbolic dim for the FLOP estimate, NAME=SIZE (default 1)");
  cmd->callback([args, &exitCode] { exitCode = runInspect(*args); });
}

} // namespace dlc::tool
