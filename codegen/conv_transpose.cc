// The ConvTranspose family: a transposed convolution over any number of spatial axes (strides,
// dilations, pads, output_padding, output_shape, auto_pad, groups, bias), with its group's
// elementwise epilogue.
//
// One thread per output element y[n, m, o...] gathers what scatters into it: for each input
// channel c of m's group and each kernel tap j, the input position i with
// o = i * stride - padBegin + j * dilation (the axis skipped when o + padBegin - j * dilation is
// negative, not a multiple of the stride, or past the input), adding x[n, c, i...] *
// w[c, m % (M / group), j...] in the compute type (float for f16/bf16, double for f64). The pads
// are WindowGeometry::transposedPadsBegin's, which the reference (ir/eval/conv_eval.cc) uses
// too. A direct kernel, each output reading C / group * prod(kernel / stride) inputs: right
// for the decoders and upsampling heads where ConvTranspose appears, not a GEMM.
#include <fmt/format.h>

#include "codegen/anchor_epilogue.h"
#include "codegen/data_movement_internal.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"
#include "ir/ops/conv_util.h"

namespace dlc::codegen {

namespace {

bool claims(const Node *anchor) { return anchor && anchor->op() == Op::kConvTranspose; }

bool supports(const Node &node, std::string *why) {
  const DType t = node.input(0)->dtype();
  if (!isFloat(t)) {
    *why = fmt::format("ConvTranspose: {} has no GPU kernel", dtypeName(t));
    return false;
  }
  if (node.input(0)->shape().rank() < 3) {
    *why = "ConvTranspose: the input needs a spatial axis";
    return false;
  }
  return true;
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  const Value *x = node.input(0), *w = node.input(1), *y = node.output(0);
  const Value *bias = node.numInputs() > 2 ? node.input(2) : nullptr;
  const std::vector<int64_t> xs = staticSizes(x), ws = staticSizes(w), ys = staticSizes(y);
  const size_t n = xs.size() - 2;
  const std::vector<int64_t> in(xs.begin() + 2, xs.end()), out(ys.begin() + 2, ys.end());
  const std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  DLC_ASSIGN_OR_RETURN(ops::WindowGeometry g,
                       ops::readWindowGeometry(node, static_cast<int64_t>(n), &kernel, {}));
  const std::vector<int64_t> padBegin = g.transposedPadsBegin(node, in, out);
  const int64_t groups = node.getInt("group"), channels = xs[1], outChannels = ys[1];
  const int64_t cg = channels / groups, mg = outChannels / groups;
  const int64_t count = y->shape().numElements().value_or(0);
  const std::string ct = cudaComputeType(x->dtype());
  const std::string idx =
      count < (int64_t{1} << 31) && x->shape().numElements().value_or(0) < (int64_t{1} << 31)
          ? "int"
          : "long long";
  ParamList params;
  const std::string xn = params.read(x), wn = params.read(w);
  const std::string bn = bias ? params.read(bias) : "";

  CodeWriter body;
  auto loop = body.block("{}", gridStrideLoop(idx, count));
  // y's coordinates: [N, M, out...], row-major.
  body.line("{} r = i;", idx);
  for (size_t a = n; a-- > 0;) {
    body.line("const {0} o{1} = r % {2};", idx, a, out[a]);
    body.line("r /= {};", out[a]);
  }
  body.line("const {} m = r % {};", idx, outChannels);
  body.line("const {} b = r / {};", idx, outChannels);
  body.line("const {} grp = m / {}, mm = m % {};", idx, mg, mg);
  body.line("{} acc = {};", ct, bias ? fmt::format("dlc_load({}[m])", bn) : "0");
  {
    auto channel = body.block("for ({0} c = grp * {1}; c < (grp + 1) * {1}; ++c)", idx, cg);
    std::vector<CodeWriter::Scope> taps;
    for (size_t a = 0; a < n; ++a) {
      taps.push_back(body.block("for (int j{0} = 0; j{0} < {1}; ++j{0})", a, kernel[a]));
      body.line("const {0} t{1} = o{1} + {2} - ({0})j{1} * {3};", idx, a, padBegin[a],
                g.dilations[a]);
      body.line("if (t{0} < 0 || t{0} % {1} != 0 || t{0} / {1} >= {2})", a, g.strides[a], in[a]);
      body.line("  continue;");
    }
    // x[b, c, t / stride...] and w[c, mm, j...].
    std::string xi = fmt::format("(b * {} + c)", channels), wi = fmt::format("(c * {} + mm)", mg);
    for (size_t a = 0; a < n; ++a) {
      xi = fmt::format("({} * {} + t{} / {})", xi, in[a], a, g.strides[a]);
      wi = fmt::format("({} * {} + j{})", wi, kernel[a], a);
    }
    body.line("acc += dlc_load({}[{}]) * dlc_load({}[{}]);", xn, xi, wn, wi);
    while (!taps.empty())
      taps.pop_back();
  }
  body.line("const {} y = acc;", ct);
  return finishPerOutput(body, loop, group, y, params, count, opts);
}

} // namespace

Family convTransposeFamily() { return {"conv-transpose", claims, supports, emit}; }

} // namespace dlc::codegen
