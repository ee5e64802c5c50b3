// kbench's cases (cases.h): the graphs each kind of line builds, and their kernel groups.
#include "tools/kbench/cases.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "codegen/cuda_prelude.h"
#include "codegen/gemm_kernel.h"
#include "ir/op.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"

namespace dlc::kbench {
namespace {

std::string dims(const std::vector<int64_t> &v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? "," : "") + std::to_string(v[i]);
  return s;
}

std::vector<int64_t> parseShape(const std::string &s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string part;
  while (std::getline(ss, part, 'x'))
    out.push_back(std::stoll(part));
  return out;
}

/// The anchor's graph inputs and node; sets error on bad arguments.
struct Parts {
  std::vector<std::string> inputs;
  std::string body;
  std::vector<int64_t> biasShape; // --addbias operand
};

std::string assemble(const std::vector<std::string> &inputs, const std::string &body,
                     const std::string &result) {
  std::string head;
  for (size_t i = 0; i < inputs.size(); ++i)
    head += (i ? ", " : "") + inputs[i];
  return "graph @kbench(" + head + ") -> (y: ?) {\n" + body + "  return " + result + "\n}\n";
}

/// i8: the product in realize-int8's form (matmul_integer with B [N, K]; conv_integer
/// channels-last, NHWC input and OHWI weight), its int32 result cast to f32 and scaled per
/// output channel; the epilogue flags apply after that, in f32.
bool int8Parts(Case &c, Parts &out) {
  const auto &a = c.args;
  if (c.kind == "matmul" && a.size() == 3) {
    const int64_t m = a[0], n = a[1], k = a[2];
    out.inputs = {"%a: i8[" + dims({m, k}) + "]", "%b: i8[" + dims({n, k}) + "]",
                  "%s: f32[" + dims({n}) + "]"};
    out.body = "  %acc = matmul_integer(%a, %b) {transB = 1} : ?\n";
    out.biasShape = {n};
  } else if (c.kind == "conv" && a.size() == 9 && c.flag("group", "1") == "1") {
    const int64_t n = a[0], ci = a[1], h = a[2], w = a[3], co = a[4], kh = a[5], kw = a[6],
                  st = a[7], p = a[8];
    const std::string d = c.flag("dil", "1"), ss = std::to_string(st), ps = std::to_string(p);
    out.inputs = {"%x: i8[" + dims({n, h, w, ci}) + "]", "%w: i8[" + dims({co, kh, kw, ci}) + "]",
                  "%s: f32[" + dims({co}) + "]"};
    out.body = "  %acc = conv_integer(%x, %w) {channels_last = 1, dilations = [" + d + ", " + d +
               "], pads = [" + ps + ", " + ps + ", " + ps + ", " + ps + "], strides = [" + ss +
               ", " + ss + "]} : ?\n";
    out.biasShape = {co};
  } else {
    c.error = "i8 cases: matmul M N K, conv N C H W M KH KW S P (group 1)";
    return false;
  }
  out.body += "  %f = cast(%acc) {to = f32} : ?\n  %m = mul(%f, %s) : ?\n";
  return true;
}

bool anchorParts(Case &c, Parts &out) {
  if (c.dtype == DType::kI8)
    return int8Parts(c, out);
  const std::string dt(dtypeName(c.dtype));
  auto t = [&](const std::vector<int64_t> &s) { return dt + "[" + dims(s) + "]"; };
  const auto &a = c.args;
  if (c.kind == "matmul" || c.kind == "mm") {
    // The sampled check would transpose what the graph does not (session 38 timed "K-major"
    // matmuls that were N-major and failed their checks).
    if (c.has("ta") || c.has("tb")) {
      c.error = "--ta and --tb are gemm's: a matmul multiplies [M, K] by [K, N]";
      return false;
    }
    std::vector<int64_t> sa, sb;
    if (c.kind == "matmul" && a.size() == 3) {
      sa = {a[0], a[2]};
      sb = {a[2], a[1]};
    } else if (c.kind == "mm") {
      auto pos = c.flags["shapes"].find(' ');
      sa = parseShape(c.flags["shapes"].substr(0, pos));
      sb = parseShape(c.flags["shapes"].substr(pos + 1));
    } else {
      c.error = "usage: matmul M N K dtype | mm AxB.. KxN.. dtype";
      return false;
    }
    out.inputs = {"%a: " + t(sa), "%b: " + t(sb)};
    out.body = "  %m = matmul(%a, %b) : ?\n";
    out.biasShape = {sb.size() == 1 ? 1 : sb.back()};
  } else if (c.kind == "gemm" && a.size() == 3) {
    const int64_t m = a[0], n = a[1], k = a[2];
    std::vector<int64_t> sa = c.has("ta") ? std::vector<int64_t>{k, m} : std::vector<int64_t>{m, k};
    std::vector<int64_t> sb = c.has("tb") ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
    out.inputs = {"%a: " + t(sa), "%b: " + t(sb)};
    std::string cin;
    const std::string cs = c.flag("c", "none");
    if (cs != "none") {
      std::vector<int64_t> shape = cs == "scalar" ? std::vector<int64_t>{}
                                   : cs == "row"  ? std::vector<int64_t>{n}
                                   : cs == "col"  ? std::vector<int64_t>{m, 1}
                                                  : std::vector<int64_t>{m, n};
      out.inputs.push_back("%c: " + t(shape));
      cin = ", %c";
    }
    auto real = [](std::string v) {
      return v.find_first_of(".e") == std::string::npos ? v + ".0" : v;
    };
    out.body = "  %m = gemm(%a, %b" + cin + ") {alpha = " + real(c.flag("alpha", "1.0")) +
               ", beta = " + real(c.flag("beta", "1.0")) +
               ", transA = " + (c.has("ta") ? "1" : "0") +
               ", transB = " + (c.has("tb") ? "1" : "0") + "} : ?\n";
    out.biasShape = {n};
  } else if (c.kind == "conv" && a.size() == 9) {
    const int64_t n = a[0], ci = a[1], h = a[2], w = a[3], co = a[4], kh = a[5], kw = a[6],
                  s = a[7], p = a[8];
    const int64_t g = std::stoll(c.flag("group", "1")), d = std::stoll(c.flag("dil", "1"));
    // --nhwc: the layout pass's channels-last form (x NHWC, w OHWI, y NHWC; group 1).
    const bool last = c.has("nhwc");
    if (last && g != 1) {
      c.error = "--nhwc convolutions have group 1";
      return false;
    }
    out.inputs = {"%x: " + (last ? t({n, h, w, ci}) : t({n, ci, h, w})),
                  "%w: " + (last ? t({co, kh, kw, ci}) : t({co, ci / g, kh, kw}))};
    std::string bias;
    if (c.has("bias")) {
      out.inputs.push_back("%cb: " + t({co}));
      bias = ", %cb";
    }
    const std::string ds = std::to_string(d), ss = std::to_string(s), ps = std::to_string(p);
    out.body = "  %m = conv(%x, %w" + bias + ") {" + (last ? "channels_last = 1, " : "") +
               "dilations = [" + ds + ", " + ds + "], group = " + std::to_string(g) + ", pads = [" +
               ps + ", " + ps + ", " + ps + ", " + ps + "], strides = [" + ss + ", " + ss +
               "]} : ?\n";
    out.biasShape = last ? std::vector<int64_t>{co} : std::vector<int64_t>{co, 1, 1};
  } else {
    c.error = "unknown case (kinds: matmul M N K, mm A B, gemm M N K, conv N C H W M KH KW S P)";
    return false;
  }
  return true;
}

} // namespace

bool parseCase(Case &c, const std::vector<std::string> &words) {
  std::vector<std::string> pos;
  static const std::vector<std::string> valued = {"tile", "group", "dil",   "alpha", "beta",
                                                  "c",    "runs",  "check", "save",  "define"};
  static const std::vector<std::string> switches = {"addbias",
                                                    "bias",
                                                    "cluster-split",
                                                    "flush",
                                                    "fragment-epilogue",
                                                    "gelu",
                                                    "inline-epilogue",
                                                    "int8-pointwise-plain",
                                                    "int8-split-k",
                                                    "multicast",
                                                    "narrow-tiles",
                                                    "nhwc",
                                                    "no-hopper-int8",
                                                    "no-int8-split-k",
                                                    "no-narrow-tiles",
                                                    "no-pingpong",
                                                    "no-prefetch-short",
                                                    "no-stem",
                                                    "no-tile-192",
                                                    "no-tma",
                                                    "no-wgmma",
                                                    "pingpong",
                                                    "prefetch",
                                                    "prefetch-short",
                                                    "quant",
                                                    "relu",
                                                    "residual",
                                                    "stream-k",
                                                    "ta",
                                                    "tb",
                                                    "tf32"};
  for (size_t i = 0; i < words.size(); ++i) {
    if (words[i].rfind("--", 0) == 0) {
      std::string f = words[i].substr(2);
      if (std::find(valued.begin(), valued.end(), f) != valued.end() && i + 1 < words.size()) {
        c.flags[f] = words[++i];
      } else if (std::find(switches.begin(), switches.end(), f) != switches.end()) {
        c.flags[f] = "1";
      } else {
        c.error = fmt::format("unknown flag '{}'", words[i]);
        return false;
      }
    } else {
      pos.push_back(words[i]);
    }
  }
  if (pos.size() < 2) {
    c.error = "a case needs a kind, sizes and a dtype";
    return false;
  }
  c.kind = pos[0];
  const std::string dt = pos.back();
  c.dtype = dt == "f32"    ? DType::kF32
            : dt == "bf16" ? DType::kBF16
            : dt == "i8"   ? DType::kI8
                           : DType::kF16;
  if (dt != "f32" && dt != "f16" && dt != "bf16" && dt != "i8") {
    c.error = "dtype must be f32, f16, bf16 or i8";
    return false;
  }
  if (c.kind == "mm") {
    if (pos.size() != 4) {
      c.error = "usage: mm SHAPE_A SHAPE_B dtype";
      return false;
    }
    c.flags["shapes"] = pos[1] + " " + pos[2];
    return true;
  }
  for (size_t i = 1; i + 1 < pos.size(); ++i)
    c.args.push_back(std::stoll(pos[i]));
  return true;
}

bool prepare(Case &c, const codegen::EmitOptions &opts) {
  Parts parts;
  if (!anchorParts(c, parts))
    return false;
  auto probe = parseGraph(assemble(parts.inputs, parts.body, "%m"), "kbench");
  if (!probe) {
    c.error = probe.status().message();
    return false;
  }
  if (Status st = inferShapes(**probe); !st.isOk()) {
    c.error = st.message();
    return false;
  }
  const Value *anchorOut = (*probe)->nodes()[0]->output(0);
  const std::vector<int64_t> outShape = anchorOut->shape().sizes();
  double outCount = 1;
  for (int64_t d : outShape)
    outCount *= double(d);
  const Node *an = (*probe)->nodes()[0];
  if (c.kind == "conv") {
    const auto w = an->input(1)->shape().sizes();
    c.flops = 2.0 * outCount * double(w[1] * w[2] * w[3]);
  } else {
    const auto a = an->input(0)->shape().sizes();
    c.flops = 2.0 * outCount * double(c.kind == "gemm" && c.has("ta") ? a[0] : a.back());
  }
  // Epilogue operands: f32 after an int8 product's rescale.
  const std::string dt(dtypeName(c.dtype == DType::kI8 ? DType::kF32 : c.dtype));
  std::string last = "%m";
  if (c.has("addbias") && c.kind != "conv") {
    parts.inputs.push_back("%ab: " + dt + "[" + dims(parts.biasShape) + "]");
    parts.body += "  %e1 = add(" + last + ", %ab) : ?\n";
    last = "%e1";
  }
  // --quant (i8): the epilogue realize-int8 leaves between two int8 layers: the residual
  // arrives as int8 and is dequantized, the result is quantized to int8 (scales %rs, %qs).
  const bool quant = c.dtype == DType::kI8 && c.has("quant");
  if (c.has("residual")) {
    if (quant) {
      parts.inputs.push_back("%res: i8[" + dims(outShape) + "]");
      parts.inputs.push_back("%rs: f32[]");
      parts.body += "  %rd = dequantize_linear(%res, %rs) : ?\n";
      parts.body += "  %e2 = add(" + last + ", %rd) : ?\n";
    } else {
      parts.inputs.push_back("%res: " + dt + "[" + dims(outShape) + "]");
      parts.body += "  %e2 = add(" + last + ", %res) : ?\n";
    }
    last = "%e2";
  }
  if (c.has("relu")) {
    parts.body += "  %e3 = relu(" + last + ") : ?\n";
    last = "%e3";
  }
  if (c.has("gelu")) {
    parts.body += "  %e4 = gelu(" + last + ") : ?\n";
    last = "%e4";
  }
  if (quant) {
    parts.inputs.push_back("%qs: f32[]");
    parts.inputs.push_back("%qz: i8[]");
    parts.body += "  %q = quantize_linear(" + last + ", %qs, %qz) : ?\n";
    last = "%q";
  }
  const std::string text = assemble(parts.inputs, parts.body, last);
  auto g = parseGraph(text, "kbench");
  if (!g) {
    c.error = g.status().message() + "\n" + text;
    return false;
  }
  c.graph = std::move(*g);
  if (Status st = inferShapes(*c.graph); !st.isOk()) {
    c.error = st.message();
    return false;
  }
  codegen::FusedGroup &grp = c.group;
  grp.name = "kbench_" + c.kind;
  for (const Node *n : c.graph->nodes())
    grp.nodes.push_back(n);
  grp.anchor = grp.nodes[0];
  for (const Value *v : c.graph->inputs())
    grp.inputs.push_back(v);
  grp.outputs.push_back(c.graph->outputs()[0].value);
  Expected<codegen::KernelSet> set = invalidArgument("unset");
  if (c.has("tile")) {
    auto cfg = codegen::gemm::parseTileConfig(c.flag("tile", ""));
    if (!cfg) {
      c.error = "bad --tile " + c.flag("tile", "");
      return false;
    }
    set = c.kind == "conv" ? codegen::gemm::emitConvGroup(grp, opts, cfg)
                           : codegen::gemm::emitGemmGroup(grp, opts, cfg);
  } else {
    set = codegen::emitGroup(grp, opts);
  }
  if (!set) {
    c.error = set.status().message();
    return false;
  }
  c.set = std::move(*set);
  c.source = std::string(codegen::cudaPrelude());
  for (const auto &k : c.set.kernels)
    c.source += k.source;
  return true;
}

} // namespace dlc::kbench
