// layout: runs 16-bit float 2-D convolutions channels-last (DESIGN.md: NHWC between convolutions).
//
// The GPU's NCHW convolution gathers its im2col operand two bytes at a time and writes output
// rows that are pixels; channels-last, every 16-byte chunk of an im2col row is 8 channels of
// one tap (one cp.async) and every output row is a pixel's channels (16-byte stores). So:
//
//     %y = conv(%x, %w, %b)       =>   %xt = transpose(%x) {perm = [0, 2, 3, 1]}
//                                      %yt = conv(%xt, %w_ohwi, %b) {channels_last = 1}
//                                      %y  = transpose(%yt) {perm = [0, 3, 1, 2]}
//
// with the weight permuted to OHWI at compile time. The elementwise nodes that read %y (relu,
// the residual add, a cast) then move into NHWC too (passes/util/nhwc.h, as realize-int8 does
// for int8 convolutions), so a chain of convolutions hands NHWC tensors from one to the next
// and transposes remain only where NCHW is needed (the 3-channel stem, pooling, the head), or
// none at all where the model is NHWC already (a TensorFlow graph's own transposes cancel).
// Rewritten: Conv with f16 or bf16 operands, 4-D, group 1, a constant weight, static shapes
// and input channels a multiple of 8 (whole 16-byte chunks along C). Other convolutions stay
// NCHW (said under --debug-only=layout). The reference backend evaluates the
// channels-last form exactly as the NCHW one. Run dce after it: the transposes nothing reads.
#include "ir/annotations/fusion_roles.h"
#include "ir/match.h"
#include "passes/registry.h"
#include "passes/util/nhwc.h"
#include "passes/util/transpose_sink.h"

namespace dlc {

namespace {

using nhwc::kToNchw;
using nhwc::kToNhwc;

/// Why `n` stays NCHW, or "" when it is rewritten.
std::string keepsNchw(const Node &n) {
  const Value *x = n.input(0), *w = n.input(1);
  const DType t = x->dtype();
  if (t != DType::kF16 && t != DType::kBF16)
    return fmt::format("dtype {} (channels-last is for f16 and bf16)", dtypeName(t));
  if (n.getInt("group") != 1)
    return fmt::format("group {}", n.getInt("group"));
  if (!x->shape().isStatic() || x->shape().rank() != 4 || !n.output(0)->shape().isStatic())
    return "not a 2-D convolution of static shape";
  if (!w->isConstant())
    return "its weight is not a constant";
  const int64_t c = x->shape()[1].value();
  if (c % 8 != 0)
    return fmt::format("{} input channels, not a multiple of 8", c);
  return "";
}

class Layout : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    bool changed = false;
    for (Node *n : g.nodes()) {
      if (n->op() == Op::kConv && n->getInt("channels_last") == 0) {
        const std::string what = n->describe(), why = keepsNchw(*n);
        if (!why.empty()) {
          options.debugf("{}: stays NCHW: {}", what, why);
          continue;
        }
        DLC_RETURN_IF_ERROR(rewriteConv(g, n));
        options.debugf("{}: channels-last", what);
        changed = true;
      } else if (isElementwiseOp(n->op())) {
        DLC_ASSIGN_OR_RETURN(bool moved, nhwc::moveElementwise(g, n));
        changed = changed || moved;
      }
    }
    // A transpose to NHWC of a value that comes back from NHWC (a TensorFlow graph's
    // to_channels_last after the last convolution) reads the NHWC value itself.
    for (Node *n : g.nodes()) {
      if (!transposeWithPerm(n->output(0), kToNhwc))
        continue;
      if (Value *src = nhwc::sourceOf(n->input(0))) {
        replaceOutputNamed(g, n, src);
        changed = true;
      }
    }
    return changed;
  }

private:
  static Status rewriteConv(Graph &g, Node *n) {
    const std::string base = n->name().empty() ? std::string(n->opName()) : n->name();
    DLC_ASSIGN_OR_RETURN(Value * xt, nhwc::of(g, n->input(0), n));
    DLC_ASSIGN_OR_RETURN(Tensor wohwi, permuted(n->input(1)->constant(), kToNhwc));
    Value *wt = g.addConstant(g.uniqueName(base + "/weight_ohwi"), std::move(wohwi));
    std::vector<Value *> inputs{xt, wt};
    if (n->hasInput(2))
      inputs.push_back(n->input(2));
    const auto attrs = nhwc::channelsLastAttrs(*n);
    DLC_ASSIGN_OR_RETURN(Value * y,
                         addTypedNode(g, Op::kConv, inputs, base + "/nhwc", n, *n, attrs));
    y->producer()->setName(n->name());
    DLC_ASSIGN_OR_RETURN(Value * back, addTypedNode(g, Op::kTranspose, {y}, base + "/nchw", n, *n,
                                                    {{"perm", Attribute(kToNchw)}}));
    replaceOutputNamed(g, n, back);
    return Status::ok();
  }
};

} // namespace

std::unique_ptr<Pass> createLayout() { return std::make_unique<Layout>(); }

} // namespace dlc
