// The helpers that the normalisation rules share: typed removal of legacy attributes, constant
// inputs, and new nodes named after the node being rewritten.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "frontend/onnx/import_context.h"

namespace dlc::onnx::detail {

class Rewriter {
public:
  Rewriter(ImportContext &ctx, Node *node, AttrMap &attrs, const std::string &desc)
      : graph(ctx.graph), node(node), attrs(attrs), desc(desc), opset(ctx.opset) {}

  Graph &graph;
  Node *node;
  AttrMap &attrs;
  const std::string &desc;
  int64_t opset;

  // Remove attribute `name` and return its value; nullopt if absent, an error naming the node
  // if it has another kind.
  Expected<std::optional<std::vector<int64_t>>> takeInts(const std::string &name);
  Expected<std::optional<std::vector<float>>> takeFloats(const std::string &name);
  Expected<std::optional<int64_t>> takeInt(const std::string &name);
  Expected<std::optional<float>> takeFloat(const std::string &name);
  Expected<std::optional<std::string>> takeString(const std::string &name);

  /// The base for names of what the rewrite creates: the node's name, else its first output's.
  std::string base() const;
  /// A new constant named `<base>_<suffix>`.
  Value *constant(const std::string &suffix, Tensor t);
  /// A new node of `op` named `<base>/<suffix>` (unnamed if the node is), placed before `node`.
  Node *createBefore(Op op, std::vector<Value *> inputs, const std::string &suffix);
  /// Sets input `i` (padding with absent inputs); an error if the model already gives it, since
  /// then the attribute `what` and the input both do.
  Status setInputSlot(int i, Value *v, const std::string &what);
  /// A scalar holding `v` in the element type of `like`: a constant of that dtype when it is
  /// known, else an f32 constant cast by a CastLike node.
  Value *scalarLike(const std::string &suffix, double v, Value *like);

  /// An error about this node: `<desc>: <message>`.
  template <typename... Args> Status error(fmt::format_string<Args...> f, Args &&...args) const {
    return invalidArgument("{}: {}", desc, fmt::format(f, std::forward<Args>(args)...));
  }
};

} // namespace dlc::onnx::detail
