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
// and transposes remain only where NCHW is needed (the 3-channel stem, windowed pooling), or
// none at all where the model is NHWC already (a TensorFlow graph's own transposes cancel).
// A global pool of an NHWC value (ResNet's head; int8 convolutions' too, as realize-int8 runs
// first) pools it channels-last (channels_last = 1), its output [N, C, 1, 1] as before.
// Rewritten: Conv with f16 or bf16 operands, 4-D, group 1, a constant weight, static shapes
// and input channels a multiple of 8 (whole 16-byte chunks along C). Other convolutions stay
// NCHW (said under --debug-only=layout). The reference backend evaluates the
// channels-last form exactly as the NCHW one. Run dce after it: the transposes nothing reads.
//
// With option `patch-gemm` (the GPU pipeline sets it unless `--no-patch-gemm`), a conv that
// stays NCHW and whose window tiles its input exactly (strides equal to the window, no padding
// or dilation: ViT's 16x16 patch embedding of a 3-channel image) becomes a GEMM over the
// image's patches, where the NCHW kernel would gather its im2col operand element by element:
//
//     %p = reshape(%x) [N, C, OH, KH, OW, KW] -> transpose [0, 2, 4, 1, 3, 5]
//          -> reshape [N * OH * OW, C * KH * KW]
//     %y = transpose(reshape(matmul(%p, %w_km) + %b) [N, OH, OW, M]) {perm = [0, 3, 1, 2]}
//
// with the weight as [C * KH * KW, M] at compile time, so that the result is NHWC like a
// channels-last conv's and what reads it moves into NHWC the same way.
#include "ir/annotations/fusion_roles.h"
#include "ir/match.h"
#include "ir/ops/conv_util.h"
#include "passes/registry.h"
#include "passes/util/nhwc.h"
#include "passes/util/node_builder.h"
#include "passes/util/transpose_sink.h"

namespace dlc {

namespace {

using nhwc::kToNchw;
using nhwc::kToNhwc;

/// Why conv `n` is rewritten by neither form (channels-last, patches), or "".
std::string notRewritable(const Node &n) {
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
  return "";
}

/// Why `n` stays NCHW, or "" when it is rewritten.
std::string keepsNchw(const Node &n) {
  if (std::string no = notRewritable(n); !no.empty())
    return no;
  const int64_t c = n.input(0)->shape()[1].value();
  if (c % 8 != 0)
    return fmt::format("{} input channels, not a multiple of 8", c);
  return "";
}

/// Why conv `n` (rewritable, but not channels-last) is not a GEMM over its patches, or "".
std::string notPatches(const Node &n) {
  const std::vector<int64_t> ws = n.input(1)->shape().sizes(), xs = n.input(0)->shape().sizes();
  std::vector<int64_t> window{ws[2], ws[3]};
  auto geo = ops::readWindowGeometry(n, 2, &window, {});
  if (!geo)
    return geo.status().message();
  bool tiles = geo->strides == window && geo->dilations == std::vector<int64_t>{1, 1} &&
               window != std::vector<int64_t>{1, 1};
  for (int64_t axis = 0; axis < 2 && tiles; ++axis)
    tiles = geo->resolvePads(axis, xs[2 + axis]) == std::pair<int64_t, int64_t>{0, 0};
  if (!tiles)
    return "its window does not tile the input (strides equal to a window of more than one "
           "element, no padding or dilation)";
  if (xs[2] % window[0] != 0 || xs[3] % window[1] != 0)
    return "the input is not a whole number of windows";
  if (ws[1] * window[0] * window[1] % 8 != 0)
    return "a patch is not whole 16-byte chunks";
  return "";
}

class Layout : public Pass {
public:
  std::vector<PassOptionSpec> options() const override {
    return {{"patch-gemm", PassOptionSpec::Kind::kBool,
             "a conv that stays NCHW and whose window tiles its input (ViT's patch embedding) "
             "becomes a reshape/transpose of the image and a GEMM (default false)"}};
  }

  Expected<bool> run(Graph &g, const PassOptions &options) override {
    DLC_ASSIGN_OR_RETURN(bool patchGemm, options.getBool("patch-gemm", false));
    bool changed = false;
    for (Node *n : g.nodes()) {
      if (n->op() == Op::kConv && n->getInt("channels_last") == 0) {
        const std::string what = n->describe(), why = keepsNchw(*n);
        if (!why.empty() && patchGemm && notRewritable(*n).empty()) {
          const std::string no = notPatches(*n);
          if (no.empty()) {
            DLC_RETURN_IF_ERROR(rewritePatches(g, n));
            options.debugf("{}: a GEMM over its patches ({})", what, why);
            changed = true;
            continue;
          }
          options.debugf("{}: not a GEMM over its patches: {}", what, no);
        }
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
    // A global pool of a value that comes back from NHWC (ResNet's head) pools the NHWC value
    // itself (channels_last = 1; its output is [N, C, 1, 1] either way), without the transpose.
    for (Node *n : g.nodes()) {
      const Op op = n->op();
      if (!ops::isGlobalPool(op) || n->getInt("channels_last") != 0)
        continue;
      Value *src = nhwc::sourceOf(n->input(0));
      if (!src)
        continue;
      const std::string base = n->name().empty() ? std::string(n->opName()) : n->name();
      DLC_ASSIGN_OR_RETURN(Value * y, addTypedNode(g, op, {src}, base + "/nhwc", n, *n,
                                                   nhwc::channelsLastAttrs(*n)));
      y->producer()->setName(n->name());
      options.debugf("{}: pools the channels-last value '{}'", n->describe(), src->name());
      replaceOutputNamed(g, n, y);
      changed = true;
    }
    // Tokens from a feature map (ViT: flatten(2), then transpose(1, 2)) of a value that comes
    // back from NHWC are the NHWC value reshaped: [N, C, H, W] -> [N, C, HW] -> [N, HW, C].
    for (Node *n : g.nodes()) {
      if (!transposeWithPerm(n->output(0), {0, 2, 1}))
        continue;
      Node *flat = n->input(0)->producer();
      if (!flat || flat->op() != Op::kReshape || flat->input(0)->shape().rank() != 4)
        continue;
      Value *src = nhwc::sourceOf(flat->input(0));
      const std::vector<int64_t> in = flat->input(0)->shape().sizes(),
                                 out = flat->output(0)->shape().sizes();
      if (!src || out != std::vector<int64_t>{in[0], in[1], in[2] * in[3]})
        continue;
      NodeBuilder b(g, n);
      DLC_ASSIGN_OR_RETURN(Value * tokens, b.reshape(src, n->output(0)->shape().sizes(), "tokens"));
      replaceOutputNamed(g, n, tokens);
      changed = true;
    }
    return changed;
  }

private:
  static Status rewritePatches(Graph &g, Node *n) {
    NodeBuilder b(g, n);
    const std::vector<int64_t> xs = n->input(0)->shape().sizes(), ws = n->input(1)->shape().sizes();
    const int64_t images = xs[0], c = xs[1], kh = ws[2], kw = ws[3], m = ws[0];
    const int64_t oh = xs[2] / kh, ow = xs[3] / kw, k = c * kh * kw;
    DLC_ASSIGN_OR_RETURN(Value * split,
                         b.reshape(n->input(0), {images, c, oh, kh, ow, kw}, "patches"));
    DLC_ASSIGN_OR_RETURN(Value * rows, b.transpose(split, {0, 2, 4, 1, 3, 5}, "patch_order"));
    DLC_ASSIGN_OR_RETURN(rows, b.reshape(rows, {images * oh * ow, k}, "patch_rows"));
    DLC_ASSIGN_OR_RETURN(Tensor wkm, permuted(n->input(1)->constant().reshaped({m, k}), {1, 0}));
    DLC_ASSIGN_OR_RETURN(
        Value * y,
        b.op(Op::kMatMul, {rows, b.constant("weight_km", std::move(wkm))}, "patch_gemm"));
    if (n->hasInput(2)) {
      DLC_ASSIGN_OR_RETURN(y, b.op(Op::kAdd, {y, n->input(2)}, "patch_bias"));
    }
    DLC_ASSIGN_OR_RETURN(y, b.reshape(y, {images, oh, ow, m}, "nhwc"));
    DLC_ASSIGN_OR_RETURN(Value * back, b.transpose(y, kToNchw, "nchw"));
    replaceOutputNamed(g, n, back);
    return Status::ok();
  }

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
