// summarizeFile: what `dlc inspect` shows about a model, read straight from the ModelProto
// without building a graph, so it works (and lists what is unsupported) even when the model
// cannot be imported. It is lenient where the importer is strict: a type it cannot express is
// reported as unknown, a tensor with a bad header is left out of the parameter counts.
#include <set>

#include "frontend/onnx/importer.h"
#include "frontend/onnx/model_reader.h"
#include "frontend/onnx/tensor_proto.h"
#include "frontend/onnx/unsupported.h"

namespace dlc::onnx {

namespace {

using namespace detail;

TensorType typeOrUnknown(const ::onnx::ValueInfoProto &vi) {
  auto t = typeFromProto(vi.type(), vi.name());
  return t ? *t : TensorType();
}

void addParams(ModelSummary &s, DType dtype, int64_t count) {
  ModelSummary::Params &p = s.params[dtype];
  p.count += count;
  p.bytes += count * dtypeSize(dtype);
}

void countTensor(ModelSummary &s, const ::onnx::TensorProto &t) {
  auto h = tensorHeader(t, t.name());
  if (h)
    addParams(s, h->dtype, h->numElements);
}

void countConstantNode(ModelSummary &s, const ::onnx::NodeProto &node) {
  for (const auto &a : node.attribute()) {
    if (a.name() == "value")
      countTensor(s, a.t());
    else if (a.name() == "value_float")
      addParams(s, DType::kF32, 1);
    else if (a.name() == "value_floats")
      addParams(s, DType::kF32, a.floats_size());
    else if (a.name() == "value_int")
      addParams(s, DType::kI64, 1);
    else if (a.name() == "value_ints")
      addParams(s, DType::kI64, a.ints_size());
  }
}

} // namespace

Expected<ModelSummary> summarizeFile(const std::string &path) {
  auto parsed = readModelFile(path);
  if (!parsed)
    return parsed.takeStatus().withContext(path);
  const ::onnx::ModelProto &model = **parsed;
  if (!model.has_graph())
    return invalidArgument("{}: model has no graph", path);
  ModelSummary s;
  s.irVersion = model.ir_version();
  s.producer = model.producer_name();
  if (!model.producer_version().empty())
    s.producer += (s.producer.empty() ? "" : " ") + model.producer_version();
  Opsets opsets = opsetsOf(model);
  s.opsets = opsets.versions;
  const ::onnx::GraphProto &g = model.graph();
  std::set<std::string> initializers;
  for (const auto &init : g.initializer()) {
    initializers.insert(init.name());
    countTensor(s, init);
  }
  for (const auto &in : g.input())
    if (!initializers.count(in.name()))
      s.inputs.push_back({in.name(), typeOrUnknown(in)});
  for (const auto &out : g.output())
    s.outputs.push_back({out.name(), typeOrUnknown(out)});
  for (const auto &node : g.node()) {
    bool dflt = isDefaultDomain(node.domain());
    ++s.opHistogram[dflt ? node.op_type() : node.domain() + "::" + node.op_type()];
    if (dflt && node.op_type() == "Constant")
      countConstantNode(s, node);
  }
  s.unsupported = findUnsupported(g, opsets);
  return s;
}

} // namespace dlc::onnx
