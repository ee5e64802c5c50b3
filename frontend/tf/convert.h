// The converter of one TensorFlow node: what an op's conversion function sees and builds.
//
// The importer (importer.cc) walks the NodeDefs it needs in topological order and, for every
// node that is not a Placeholder or Const, calls the conversion function registered for its
// op type (ops_*.cc) with a NodeConverter. The function reads the node's data inputs (control
// inputs only order, and are gone), its attributes and any constant inputs, builds dlc nodes
// from the IR's op table (there is no second op system) and sets the node's outputs. Every dlc
// node it builds is typed right away by the op's shape inference, so a later step can ask an
// input's rank, and an inference error names the TensorFlow node.
//
// Naming: the first node built without a role takes the TensorFlow node's name; helper nodes
// are `<name>/<role>` (`conv1/to_nchw`). Output k of the TensorFlow node is the value named
// `<name>` (k = 0) or `<name>:k`, TensorFlow's tensor names.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "frontend/tf/graph_def.pb.h"
#include "ir/graph.h"

namespace dlc::tf::detail {

/// The symbolic values of small integer tensors (shape arithmetic), as infer-shapes keeps them:
/// they let a Reshape whose target comes from Shape -> StridedSlice -> Pack get a known rank.
using ShapeValues = std::map<const Value *, std::vector<Dim>>;

class NodeConverter {
public:
  NodeConverter(Graph &graph, const tfproto::NodeDef &def, std::vector<Value *> inputs,
                ShapeValues &shapeValues);

  const std::string &name() const { return def_.name(); }
  const std::string &opType() const { return def_.op(); }
  const tfproto::NodeDef &def() const { return def_; }
  Graph &graph() { return graph_; }

  // --- Inputs (data inputs only, in order) ---------------------------------------------------
  int numInputs() const { return static_cast<int>(inputs_.size()); }
  Value *input(int i) const { return inputs_.at(static_cast<size_t>(i)); }
  /// Error unless the node has between `min` and `max` data inputs.
  Status checkInputCount(int min, int max) const;
  /// The data of input i when it is a constant, else nullptr.
  const Tensor *constInput(int i) const;
  /// Input i as integers: it must be a constant (`what` names it in the error).
  Expected<std::vector<int64_t>> constInts(int i, std::string_view what) const;
  /// The static rank of input i, or an error saying that `why` needs it.
  Expected<int64_t> inputRank(int i, std::string_view why) const;

  // --- Attributes (TensorFlow's names; `def` is the default when the attribute is absent) --
  const tfproto::AttrValue *attr(std::string_view name) const;
  Expected<int64_t> attrInt(std::string_view name, std::optional<int64_t> def = {}) const;
  Expected<float> attrFloat(std::string_view name, std::optional<float> def = {}) const;
  Expected<bool> attrBool(std::string_view name, std::optional<bool> def = {}) const;
  Expected<std::string> attrString(std::string_view name,
                                   std::optional<std::string> def = {}) const;
  Expected<std::vector<int64_t>> attrInts(std::string_view name,
                                          std::optional<std::vector<int64_t>> def = {}) const;
  Expected<std::vector<float>> attrFloats(std::string_view name,
                                          std::optional<std::vector<float>> def = {}) const;
  /// A type attribute (T, DstT, out_type, ...) as a dlc dtype; error if dlc lacks it.
  Expected<DType> attrType(std::string_view name, std::optional<DType> def = {}) const;
  /// The `data_format` attribute: true for channels-last (NHWC, NDHWC, NWC; the default).
  Expected<bool> channelsLast() const;

  // --- Building ------------------------------------------------------------------------------
  /// A dlc node (typed at once). `role` "" names it after the TensorFlow node (the first
  /// time; later unnamed nodes get `<name>/<op>`).
  Expected<Node *> node(Op op, std::vector<Value *> inputs, AttrMap attrs = {}, int numOutputs = 1,
                        std::string_view role = "");
  /// node() for a one-output op, returning the output.
  Expected<Value *> op(Op op, std::vector<Value *> inputs, AttrMap attrs = {},
                       std::string_view role = "");
  Value *constant(Tensor t, std::string_view role);
  Value *constI64(const std::vector<int64_t> &values, std::string_view role);
  /// A scalar of dtype `dtype` holding `v`.
  Value *scalar(DType dtype, double v, std::string_view role);
  Expected<Value *> transpose(Value *v, std::vector<int64_t> perm, std::string_view role);
  /// Channels-last <-> channels-first for a rank-r value (r >= 3): NHWC -> NCHW and back. The
  /// pairs the importer leaves between NHWC ops cancel in `simplify`.
  Expected<Value *> toChannelsFirst(Value *v);
  Expected<Value *> toChannelsLast(Value *v);
  Expected<Value *> cast(Value *v, DType to, std::string_view role = "cast");

  // --- Results -------------------------------------------------------------------------------
  /// Output k of the TensorFlow node; unset outputs are an internal error.
  void setOutputs(std::vector<Value *> outputs) { outputs_ = std::move(outputs); }
  const std::vector<Value *> &outputs() const { return outputs_; }
  /// Every dlc node built, in order.
  const std::vector<Node *> &built() const { return built_; }

  // --- Messages ------------------------------------------------------------------------------
  /// `node 'name' (OpType): message`, as invalidArgument.
  template <typename... Args> Status error(fmt::format_string<Args...> f, Args &&...args) const {
    return invalidArgument("node '{}' ({}): {}", name(), opType(),
                           fmt::format(f, std::forward<Args>(args)...));
  }
  /// The same as unimplemented: a valid TensorFlow node dlc cannot import yet.
  template <typename... Args>
  Status unsupported(fmt::format_string<Args...> f, Args &&...args) const {
    return unimplemented("node '{}' ({}): {}", name(), opType(),
                         fmt::format(f, std::forward<Args>(args)...));
  }
  /// A warning naming the node (the importer prints it once).
  template <typename... Args> void warn(fmt::format_string<Args...> f, Args &&...args) {
    warnings_.push_back(fmt::format("node '{}' ({}): {}", name(), opType(),
                                    fmt::format(f, std::forward<Args>(args)...)));
  }
  const std::vector<std::string> &warnings() const { return warnings_; }

private:
  Graph &graph_;
  const tfproto::NodeDef &def_;
  std::vector<Value *> inputs_;
  ShapeValues &shapeValues_;
  std::vector<Value *> outputs_;
  std::vector<Node *> built_;
  std::vector<std::string> warnings_;
  bool named_ = false;
};

using ConvertFn = Status (*)(NodeConverter &);

/// One supported TensorFlow op: its type, data input count and conversion.
struct ConverterRow {
  std::string_view op;
  int minInputs;
  int maxInputs; // -1: any number
  ConvertFn convert;
};

// The converter tables, one per file.
std::vector<ConverterRow> mathConverters();   // ops_math.cc: elementwise, comparisons, reductions
std::vector<ConverterRow> nnConverters();     // ops_nn.cc: conv, pooling, norms, activations
std::vector<ConverterRow> arrayConverters();  // ops_array*.cc: shapes and data movement
std::vector<ConverterRow> randomConverters(); // ops_random.cc: random sources

/// The row for a TensorFlow op type, or nullptr.
const ConverterRow *findConverter(std::string_view tfOp);

} // namespace dlc::tf::detail
