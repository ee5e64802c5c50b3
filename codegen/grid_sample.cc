// The GridSample family: any number of spatial axes, nearest / linear / cubic, zeros / border /
// reflection padding, align_corners, as the reference (ir/eval/sample_eval.cc, after ONNX's
// reference) computes it: the grid lists coordinates innermost axis first; each is
// denormalised and kept in f32, nearest rounds half to even, an outside coordinate is clamped
// (border) or reflected (reflection) first, then the taps (2 per axis for linear, 4 for Keys'
// cubic with A = -0.75) read 0 outside the input (zeros), the clamped pixel or the reflected
// one. One thread per output element (its taps computed per axis, then the weighted sum over
// their product), in double.
#include <fmt/format.h>

#include "codegen/anchor_epilogue.h"
#include "codegen/data_movement_internal.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"

namespace dlc::codegen {

namespace {

bool claims(const Node *anchor) { return anchor && anchor->op() == Op::kGridSample; }

bool supports(const Node &node, std::string *why) {
  for (int i : {0, 1})
    if (!isFloat(node.input(i)->dtype())) {
      *why =
          fmt::format("GridSample: {} input has no GPU kernel", dtypeName(node.input(i)->dtype()));
      return false;
    }
  const std::string &mode = node.getString("mode"), &pad = node.getString("padding_mode");
  if (mode != "nearest" && mode != "linear" && mode != "bilinear" && mode != "cubic" &&
      mode != "bicubic") {
    *why = fmt::format("GridSample: mode '{}' is not nearest, linear or cubic", mode);
    return false;
  }
  if (pad != "zeros" && pad != "border" && pad != "reflection") {
    *why = fmt::format("GridSample: padding_mode '{}' is not zeros, border or reflection", pad);
    return false;
  }
  if (node.input(0)->shape().rank() < 3) {
    *why = "GridSample: the input needs a spatial axis";
    return false;
  }
  return true;
}

/// The kernel's helpers: reflect, Keys' cubic weights and one axis's taps (`k` prefixes them).
void writeHelpers(CodeWriter &w, const std::string &k, const Node &node) {
  const std::string &mode = node.getString("mode"), &pad = node.getString("padding_mode");
  const bool align = node.getInt("align_corners") != 0;
  {
    auto f = w.block("static __device__ double {}_reflect(double x, double lo, double hi)", k);
    w.line("const double range = hi - lo;");
    w.line("if (range <= 0)");
    w.line("  return lo;");
    {
      auto below = w.block("if (x < lo)");
      w.line("const double dx = lo - x;");
      w.line("const long long n = (long long)(dx / range);");
      w.line("const double r = dx - (double)n * range;");
      w.line("return n % 2 == 0 ? lo + r : hi - r;");
    }
    {
      auto above = w.block("if (x > hi)");
      w.line("const double dx = x - hi;");
      w.line("const long long n = (long long)(dx / range);");
      w.line("const double r = dx - (double)n * range;");
      w.line("return n % 2 == 0 ? hi - r : lo + r;");
    }
    w.line("return x;");
  }
  w.line("struct {}_taps {{ int count; long long index[4]; double weight[4]; }};", k);
  auto f = w.block("static __device__ {0}_taps {0}_axis(double g, long long size)", k);
  w.line("const double len = (double)size;");
  w.line("double x = (double)(float)({});",
         align ? "(g + 1) / 2.0 * (len - 1)" : "((g + 1) * len - 1) / 2.0");
  w.line("const double lo = {}, hi = {};", align ? "0.0" : "-0.5", align ? "len - 1" : "len - 0.5");
  if (mode == "nearest")
    w.line("x = rint(x); // half to even");
  if (pad == "border")
    w.line("if (x < lo || x > hi) x = fmin(fmax(x, 0.0), len - 1);");
  else if (pad == "reflection")
    w.line("if (x < lo || x > hi) x = {}_reflect(x, lo, hi);", k);
  // An input index through the padding mode: -1 reads 0.
  std::string map;
  if (pad == "zeros")
    map = "(i >= 0 && i < size ? i : -1LL)";
  else if (pad == "border")
    map = "(i < 0 ? 0LL : i >= size ? size - 1 : i)";
  else
    map = fmt::format("(long long){}_reflect((double)i, lo, hi)", k);
  w.line("{}_taps t;", k);
  if (mode == "nearest") {
    w.line("t.count = 1;");
    w.line("{{ const long long i = (long long)x; t.index[0] = {}; }}", map);
    w.line("t.weight[0] = 1.0;");
  } else if (mode == "linear" || mode == "bilinear") {
    w.line("const long long x0 = (long long)floor(x);");
    w.line("const double f = fabs(x - (double)x0);");
    w.line("t.count = 2;");
    w.line("for (int j = 0; j < 2; ++j) {{ const long long i = x0 + j; t.index[j] = {}; }}", map);
    w.line("t.weight[0] = 1 - f;");
    w.line("t.weight[1] = f;");
  } else {
    w.line("const long long x0 = (long long)floor(x) - 1;");
    w.line("t.count = 4;");
    w.line("const double A = -0.75, s = fabs(x - (double)x0 - 1);");
    w.line("t.weight[0] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;");
    w.line("t.weight[1] = ((A + 2) * s - (A + 3)) * s * s + 1;");
    w.line("t.weight[2] = ((A + 2) * (1 - s) - (A + 3)) * (1 - s) * (1 - s) + 1;");
    w.line("t.weight[3] = ((A * (2 - s) - 5 * A) * (2 - s) + 8 * A) * (2 - s) - 4 * A;");
    w.line("for (int j = 0; j < 4; ++j) {{ const long long i = x0 + j; t.index[j] = {}; }}", map);
  }
  w.line("return t;");
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  std::string why;
  if (!supports(node, &why))
    return invalidArgument("{}", why);
  const Value *x = node.input(0), *grid = node.input(1), *y = node.output(0);
  const std::vector<int64_t> xs = staticSizes(x), ys = staticSizes(y);
  const size_t n = xs.size() - 2;
  int64_t inPlane = 1, outPlane = 1;
  for (size_t a = 0; a < n; ++a) {
    inPlane *= xs[a + 2];
    outPlane *= ys[a + 2];
  }
  const int64_t count = y->shape().numElements().value_or(0);
  if (inPlane == 0 && count > 0)
    return invalidArgument("{}: cannot sample an empty input", node.describe());
  ParamList params;
  const std::string xn = params.read(x), gn = params.read(grid);
  const std::string k = group.name;

  CodeWriter helpers;
  writeHelpers(helpers, k, node);
  CodeWriter body;
  auto loop = body.block("{}", gridStrideLoop("long long", count));
  body.line("const long long o = i % {}, bc = i / {};", outPlane, outPlane);
  body.line("const long long c = bc % {}, b = bc / {};", xs[1], xs[1]);
  body.line("const {} *g = {} + (b * {} + o) * {};", cudaStorageType(grid->dtype()), gn, outPlane,
            n);
  body.line("const {} *plane = {} + (b * {} + c) * {};", cudaStorageType(x->dtype()), xn, xs[1],
            inPlane);
  // Axis a (outer to inner) reads grid coordinate n - 1 - a.
  for (size_t a = 0; a < n; ++a)
    body.line("const {0}_taps t{1} = {0}_axis((double)dlc_load(g[{2}]), {3}LL);", k, a, n - 1 - a,
              xs[a + 2]);
  body.line("double sum = 0;");
  {
    std::vector<CodeWriter::Scope> taps;
    std::string offset = "0", weight = "1.0";
    int64_t stride = inPlane;
    for (size_t a = 0; a < n; ++a) {
      stride /= xs[a + 2];
      taps.push_back(body.block("for (int j{0} = 0; j{0} < t{0}.count; ++j{0})", a));
      body.line("if (t{0}.index[j{0}] < 0)", a);
      body.line("  continue;");
      offset += fmt::format(" + t{}.index[j{}] * {}", a, a, stride);
      weight += fmt::format(" * t{}.weight[j{}]", a, a);
    }
    body.line("sum += {} * (double)dlc_load(plane[{}]);", weight, offset);
    while (!taps.empty())
      taps.pop_back();
  }
  body.line("const {} y = ({})sum;", cudaComputeType(y->dtype()), cudaComputeType(y->dtype()));
  DLC_ASSIGN_OR_RETURN(KernelSet set, finishPerOutput(body, loop, group, y, params, count, opts));
  // The helpers go before the kernel (static device functions named after it).
  set.kernels[0].source = helpers.str() + set.kernels[0].source;
  set.kernels[0].prelude.merge(helpers.requirements());
  return set;
}

} // namespace

Family gridSampleFamily() { return {"grid-sample", claims, supports, emit}; }

} // namespace dlc::codegen
