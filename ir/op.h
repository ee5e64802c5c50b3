// The op table: what dlc knows about each op.
//
// The list of ops is ir/ops.def. Each op has exactly one OpDef row, in its family file under
// ir/ops/ (elementwise.cc, nn.cc, ...): arity, attribute schema with defaults, fusion kind,
// structural checks and shape inference. Passes ask the table about properties; they never
// switch on op names to rediscover them. What an op computes is kept apart, keyed by op: its
// reference (CPU) kernel in ir/eval/eval.h, its CUDA spelling in codegen/.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ir/attribute.h"
#include "ir/shape.h"
#include "ir/status.h"
#include "ir/tensor.h"

namespace dlc {

enum class Op : uint16_t {
#define DLC_OP(e, text, onnx) k##e,
#include "ir/ops.def"
#undef DLC_OP
};

inline constexpr int kNumOps = 0
#define DLC_OP(e, text, onnx) +1
#include "ir/ops.def"
#undef DLC_OP
    ;

/// How an op can take part in fusion (after TVM's TOpPattern).
enum class FusionKind : uint8_t {
  kElementwise, // out[i] = f(in0[i], ...) on same-shaped operands
  kBroadcast,   // elementwise with multidirectional broadcasting
  kInjective,   // each output element reads one input element (transpose, slice, ...)
  kReduction,   // reduces over axes
  kOutFusable,  // GEMM / convolution: elementwise epilogues can fuse into it
  kOpaque,      // none of the above
};
const char *fusionKindName(FusionKind k);

struct AttrSpec {
  std::string name;
  AttrKind kind;
  /// The ONNX default; nullopt when the attribute has no default.
  std::optional<Attribute> defaultValue;
  /// Must be present on every node of this op.
  bool required = false;
};

class Node;
class InferContext;

using InferFn = Status (*)(InferContext &);
/// Structural checks of one node beyond arity and attribute kinds, needing no types (a body's
/// signature against the node's inputs and outputs). Errors do not name the node.
using VerifyFn = Status (*)(const Node &);
struct OpDef {
  Op op;
  int minInputs = 1;
  int maxInputs = 1; // -1: variadic
  int minOutputs = 1;
  int maxOutputs = 1;
  FusionKind fusion = FusionKind::kOpaque;
  std::vector<AttrSpec> attrs;
  InferFn infer = nullptr;
  /// Two evaluations may differ (random ops): never folded, never merged by cse.
  bool random = false;
  /// Run by the verifier, and before every inference and evaluation (see checkSchema).
  VerifyFn verify = nullptr;

  const AttrSpec *findAttr(std::string_view name) const;
};

/// Text name ("conv_transpose").
std::string_view opName(Op op);
/// ONNX op type ("ConvTranspose").
std::string_view opOnnxName(Op op);
std::optional<Op> parseOpName(std::string_view textName);
std::optional<Op> opFromOnnx(std::string_view onnxType);
const OpDef &opDef(Op op);

/// For tests: while alive, opDef(def.op) answers `def` instead of the table's row, so a pass
/// can be tested with made-up inference (eval::ScopedEvalOverride does it for evaluation). Not
/// thread-safe; scopes may nest.
class ScopedOpDefOverride {
public:
  explicit ScopedOpDefOverride(OpDef def);
  ~ScopedOpDefOverride();
  ScopedOpDefOverride(const ScopedOpDefOverride &) = delete;
  ScopedOpDefOverride &operator=(const ScopedOpDefOverride &) = delete;

private:
  OpDef def_;
  const OpDef *previous_;
};

/// Shape values (InferContext::inputShapeValue) hold the elements of small integer tensors as
/// Dims. A Dim cannot hold a negative size, yet Reshape's -1 and negative Slice bounds travel
/// through shape arithmetic, so a negative element is kept as a Dim named by the number
/// (prints as `-1`); it never becomes a dimension of a type.
Dim shapeValueDim(int64_t v);
/// The integer a shape-value element stands for (a known size or a negative literal).
std::optional<int64_t> shapeValueInt(const Dim &d);

/// What shape inference sees of a node: input types, constant inputs, symbolic values of
/// small integer shape tensors, attributes (through node()); it sets output types.
class InferContext {
public:
  InferContext(const Node &node, std::vector<TensorType> inputTypes,
               std::vector<const Tensor *> inputConstants,
               std::vector<const std::vector<Dim> *> inputShapeValues);

  const Node &node() const { return node_; }
  int numInputs() const { return static_cast<int>(inputTypes_.size()); }
  /// Whether optional input i is present.
  bool hasInput(int i) const;
  const TensorType &inputType(int i) const { return inputTypes_[static_cast<size_t>(i)]; }
  /// The input's data if it is a constant, else nullptr.
  const Tensor *inputConstant(int i) const;
  /// For a 0-D/1-D integer input whose elements are known as dims (for example the result of
  /// Shape on a tensor with symbolic dims): those dims; else nullptr.
  const std::vector<Dim> *inputShapeValue(int i) const;
  /// Known as dims: inputShapeValue, or a constant integer tensor converted.
  std::optional<std::vector<Dim>> inputAsDims(int i) const;

  int numOutputs() const { return static_cast<int>(outputTypes_.size()); }
  void setOutputType(int i, TensorType t);
  const TensorType &outputType(int i) const { return outputTypes_[static_cast<size_t>(i)]; }
  /// Records the symbolic value of a small integer output (see inputShapeValue).
  void setOutputShapeValue(int i, std::vector<Dim> dims);
  const std::optional<std::vector<Dim>> &outputShapeValue(int i) const {
    return outputShapeValues_[static_cast<size_t>(i)];
  }

  /// Records the input types body `attr` (a graph attribute) runs with, as this inference
  /// worked them out, so that infer-shapes can type the body's values too.
  void setBodyInputTypes(std::string attr, std::vector<TensorType> types);
  const std::vector<std::pair<std::string, std::vector<TensorType>>> &bodyInputTypes() const {
    return bodyInputTypes_;
  }

  /// An error about this node: the caller prefixes the node's description.
  template <typename... Args> Status error(fmt::format_string<Args...> f, Args &&...args) const {
    return invalidArgument(f, std::forward<Args>(args)...);
  }

private:
  const Node &node_;
  std::vector<TensorType> inputTypes_;
  std::vector<const Tensor *> inputConstants_;
  std::vector<const std::vector<Dim> *> inputShapeValues_;
  std::vector<TensorType> outputTypes_;
  std::vector<std::optional<std::vector<Dim>>> outputShapeValues_;
  std::vector<std::pair<std::string, std::vector<TensorType>>> bodyInputTypes_;
};

/// Runs the op's shape inference for `node` with the given context; errors are prefixed with
/// the node's description.
Status inferNode(InferContext &ctx);

} // namespace dlc
