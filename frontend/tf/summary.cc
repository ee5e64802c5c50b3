// `dlc inspect` on a GraphDef: what it holds and what would be refused, without building it.
#include "frontend/tf/graph_def_io.h"
#include "frontend/tf/import_graph.h"
#include "frontend/tf/tensor_proto.h"

namespace dlc::tf {

Expected<GraphSummary> summarizeFile(const std::string &path, bool text) {
  DLC_ASSIGN_OR_RETURN(std::string bytes, detail::readFileBytes(path));
  DLC_ASSIGN_OR_RETURN(tfproto::GraphDef gd, detail::parseGraphDef(bytes, text, path));
  DLC_ASSIGN_OR_RETURN(detail::ImportGraph graph, detail::ImportGraph::index(gd, path, "main"));
  GraphSummary s;
  s.producer = gd.has_versions() ? gd.versions().producer() : gd.version();
  s.numNodes = gd.node_size();
  for (const tfproto::NodeDef &n : gd.node()) {
    ++s.opHistogram[n.op()];
    ++s.requestedDevices[n.device()];
    if (n.attr().count("_class"))
      ++s.colocatedNodes;
    if (n.op() == "Placeholder" || n.op() == "PlaceholderWithDefault") {
      GraphSummary::Io io{n.name(), "?"};
      auto dt = n.attr().find("dtype");
      auto sh = n.attr().find("shape");
      if (dt != n.attr().end()) {
        TfType t = fromTfType(dt->second.type());
        Shape shape = Shape::unranked();
        if (sh != n.attr().end() && sh->second.value_case() == tfproto::AttrValue::kShape)
          if (auto parsed = fromTfShape(sh->second.shape(), n.name()))
            shape = *parsed;
        io.type = t.dtype == DType::kUnknown ? tfTypeName(dt->second.type())
                                             : TensorType(t.dtype, shape).str();
      }
      s.placeholders.push_back(std::move(io));
    }
    if (n.op() == "Const") {
      auto v = n.attr().find("value");
      if (v != n.attr().end())
        if (auto t = fromTfTensor(v->second.tensor())) {
          s.params[t->dtype()].count += t->numElements();
          s.params[t->dtype()].bytes += t->byteSize();
        }
    }
  }
  std::vector<int> sinks = graph.sinks();
  for (int i : sinks)
    s.sinks.push_back(gd.node(i).name());
  DLC_RETURN_IF_ERROR(graph.selectNeeded(sinks));
  std::vector<int> all;
  for (int i = 0; i < gd.node_size(); ++i)
    all.push_back(i);
  // Refusals among what the default outputs need (liveness is not worked out here).
  std::vector<int> needed;
  auto order = graph.sortNeeded();
  if (order)
    needed = *order;
  else
    needed = all;
  s.refused = graph.refused(needed);
  return s;
}

} // namespace dlc::tf
