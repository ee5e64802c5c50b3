// A builder of typed nodes for rewrites that expand one node into several (expand-ops and its
// helpers): each node goes in front of the node being replaced, on its device, its output
// named after it and typed by inference (addTypedNode, ir/match.h).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/match.h"

namespace dlc {

/// Builds typed nodes in front of `at`, on its device, named after it.
class NodeBuilder {
public:
  NodeBuilder(Graph &g, Node *at) : g_(g), at_(at), base_(at->name()) {
    for (int i = 0; base_.empty() && i < at->numOutputs(); ++i) // unnamed: its first output's
      if (at->output(i))
        base_ = at->output(i)->name();
  }

  Expected<Value *> op(Op op, std::vector<Value *> inputs, const std::string &suffix,
                       const std::vector<std::pair<std::string, Attribute>> &attrs = {}) {
    return addTypedNode(g_, op, std::move(inputs), base_ + "/" + suffix, at_, *at_, attrs);
  }
  /// A node with `outputs` outputs (TopK's values and indices), typed.
  Expected<Node *> node(Op op, std::vector<Value *> inputs, int outputs, const std::string &suffix,
                        const std::vector<std::pair<std::string, Attribute>> &attrs = {}) {
    Node *n =
        g_.createNode(op, std::move(inputs), outputs, g_.uniqueName(base_ + "/" + suffix), at_);
    for (const auto &[k, a] : attrs)
      n->setAttr(k, a);
    n->setDevice(at_->device());
    DLC_RETURN_IF_ERROR(inferNewNode(n));
    return n;
  }
  Value *constant(const std::string &suffix, Tensor t) {
    return g_.addConstant(g_.uniqueName(base_ + "/" + suffix), std::move(t));
  }
  Expected<Value *> reshape(Value *v, const std::vector<int64_t> &shape,
                            const std::string &suffix) {
    return op(Op::kReshape, {v, ints(suffix + "_shape", shape)}, suffix);
  }
  Value *ints(const std::string &suffix, const std::vector<int64_t> &v) {
    return g_.addConstant(g_.uniqueName(base_ + "/" + suffix), Tensor::vectorI64(v));
  }
  Value *scalar(const std::string &suffix, double v, DType dtype) {
    return g_.addConstant(g_.uniqueName(base_ + "/" + suffix),
                          Tensor::fromVector<double>(DType::kF64, {}, {v}).castTo(dtype));
  }
  Value *zeros(const std::string &suffix, DType dtype, std::vector<int64_t> shape) {
    return g_.addConstant(g_.uniqueName(base_ + "/" + suffix), Tensor::zeros(dtype, shape));
  }
  /// v[index] along `axis`, the axis removed.
  Expected<Value *> pick(Value *v, int64_t index, int64_t axis, const std::string &suffix) {
    Value *i =
        g_.addConstant(g_.uniqueName(base_ + "/" + suffix + "_index"), Tensor::scalarI64(index));
    return op(Op::kGather, {v, i}, suffix, {{"axis", Attribute(axis)}});
  }
  /// v[..., begin:end] along `axis`.
  Expected<Value *> slice(Value *v, int64_t begin, int64_t end, int64_t axis,
                          const std::string &suffix) {
    return op(Op::kSlice,
              {v, ints(suffix + "_starts", {begin}), ints(suffix + "_ends", {end}),
               ints(suffix + "_axes", {axis})},
              suffix);
  }
  Expected<Value *> unsqueeze(Value *v, const std::vector<int64_t> &axes,
                              const std::string &suffix) {
    return op(Op::kUnsqueeze, {v, ints(suffix + "_axes", axes)}, suffix);
  }
  Expected<Value *> transpose(Value *v, const std::vector<int64_t> &perm,
                              const std::string &suffix) {
    return op(Op::kTranspose, {v}, suffix, {{"perm", Attribute(perm)}});
  }
  Expected<Value *> concat(std::vector<Value *> parts, int64_t axis, const std::string &suffix) {
    if (parts.size() == 1)
      return parts[0];
    return op(Op::kConcat, std::move(parts), suffix, {{"axis", Attribute(axis)}});
  }

private:
  Graph &g_;
  Node *at_;
  std::string base_;
};

} // namespace dlc
