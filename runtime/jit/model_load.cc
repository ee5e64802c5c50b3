// Model::load: reading a model file through the frontend that reads it (ONNX, TensorFlow
// GraphDef, or dlc's text IR), then applying the shared load options.
#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>

#include <spdlog/spdlog.h>

#include "frontend/onnx/importer.h"
#include "frontend/tf/importer.h"
#include "ir/parser.h"
#include "runtime/jit/model.h"

namespace dlc {

namespace {

/// `--input-shape` on an ONNX or text-IR graph: the given shape replaces the input's
/// declared one where they agree (same rank, equal known dims).
Status applyInputShapes(Graph &g, const std::map<std::string, std::vector<int64_t>> &shapes) {
  for (const auto &[name, dims] : shapes) {
    auto it = std::find_if(g.inputs().begin(), g.inputs().end(),
                           [&name = name](const Value *v) { return v->name() == name; });
    if (it == g.inputs().end())
      return invalidArgument("--input-shape {}: the model has no input named '{}'", name, name);
    Value *in = *it;
    const Shape &declared = in->shape();
    std::vector<Dim> out;
    if (declared.isRanked() && declared.rank() != static_cast<int64_t>(dims.size()))
      return invalidArgument("--input-shape {}: rank {} does not match the declared {}", name,
                             dims.size(), in->type().str());
    for (size_t d = 0; d < dims.size(); ++d) {
      const auto i = static_cast<int64_t>(d);
      if (dims[d] < 0) {
        out.push_back(declared.isRanked() ? declared[i]
                                          : Dim::symbol(fmt::format("{}_d{}", name, d)));
        continue;
      }
      if (declared.isRanked() && declared[i].isKnown() && declared[i].value() != dims[d])
        return invalidArgument("--input-shape {}: dim {} is {} but the model declares {}", name, d,
                               dims[d], in->type().str());
      out.push_back(Dim(dims[d]));
    }
    in->setType(TensorType(in->dtype(), Shape(std::move(out))));
  }
  return Status::ok();
}

} // namespace

Status parseInputShape(const std::string &spec, std::map<std::string, std::vector<int64_t>> &out) {
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0)
    return invalidArgument("--input-shape '{}': expected NAME=D0,D1,... (-1 for a symbolic dim)",
                           spec);
  std::string name = spec.substr(0, eq), rest = spec.substr(eq + 1);
  std::vector<int64_t> dims;
  size_t pos = 0;
  while (!rest.empty() && pos <= rest.size()) {
    size_t comma = rest.find(',', pos);
    std::string item =
        rest.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < -1 || errno == ERANGE)
      return invalidArgument("--input-shape '{}': '{}' is not a dim (a size >= 0, or -1)", spec,
                             item);
    dims.push_back(v);
    if (comma == std::string::npos)
      break;
    pos = comma + 1;
  }
  if (!out.emplace(name, dims).second)
    return invalidArgument("--input-shape: '{}' is given twice", name);
  return Status::ok();
}

namespace {

Expected<std::unique_ptr<Graph>> loadGraphOfFormat(const std::string &path, ModelFormat format,
                                                   const LoadOptions &opts) {
  if (format == ModelFormat::kTfGraphDef || format == ModelFormat::kTfText) {
    tf::ImportOptions io;
    io.inputShapes = opts.inputShapes;
    io.outputs = opts.outputs;
    io.text = format == ModelFormat::kTfText;
    return tf::importFile(path, io);
  }
  std::unique_ptr<Graph> g;
  if (format == ModelFormat::kDlcText) {
    DLC_ASSIGN_OR_RETURN(g, parseGraphFile(path));
  } else {
    onnx::ImportOptions io;
    io.keepInitializersAsInputs = opts.keepInitializersAsInputs;
    DLC_ASSIGN_OR_RETURN(g, onnx::importFile(path, io));
  }
  DLC_RETURN_IF_ERROR(applyInputShapes(*g, opts.inputShapes));
  if (!opts.outputs.empty())
    return invalidArgument("--outputs: {} is {}, which declares its outputs; --outputs picks "
                           "the outputs of a TensorFlow GraphDef, which declares none",
                           path, modelFormatName(format));
  return g;
}

} // namespace

Expected<std::unique_ptr<Graph>> loadGraphFile(const std::string &path, const LoadOptions &opts) {
  DLC_ASSIGN_OR_RETURN(ModelFormat format, detectModelFormat(path, opts.format));
  auto start = std::chrono::steady_clock::now();
  auto g = loadGraphOfFormat(path, format, opts);
  if (g)
    spdlog::info("{}: {} imported: {} nodes, {} inputs, {} outputs ({:.1f} ms)", path,
                 modelFormatName(format), (*g)->nodes().size(), (*g)->inputs().size(),
                 (*g)->outputs().size(),
                 std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
  return g;
}

Expected<Model> Model::load(const std::string &path, const ModelOptions &opts) {
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> graph, loadGraphFile(path, opts.load));
  return fromGraph(std::move(graph), opts, path);
}

} // namespace dlc
