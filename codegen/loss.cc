// The loss family: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (ir/ops/loss.cc) as
// inference ops, in double like the reference (ir/eval/loss_eval.cc).
//
// Kernel 1, one thread per sample i = (n, d1..dk) of the scores [N, C, d1..dk] (element
// (n, c, d) at (n * C + c) * D + d): SoftmaxCrossEntropyLoss first takes the log-softmax over
// C (peak subtracted before exp) and writes log_prob when it is used; then the sample's weight
// w (weights[c], 1 without weights, 0 for ignore_index) and loss -w * score[c]. A class
// outside [0, C) that is not ignore_index gives NaN (the reference backend names it as an
// error; a kernel cannot). With reduction "none" the loss is the output; otherwise it and w go
// to scratch, and kernel 2, one block, adds both in a fixed order (each thread a strided part,
// then a tree in shared memory: the same result every run) and writes the sum or sum / sum of
// weights ("mean": NaN when every sample is ignored, as ONNX's function body gives).
#include <fmt/format.h>

#include "codegen/code_writer.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"

namespace dlc::codegen {

namespace {

constexpr int kThreads = 256;

bool claims(const Node *anchor) {
  return anchor && (anchor->op() == Op::kNegativeLogLikelihoodLoss ||
                    anchor->op() == Op::kSoftmaxCrossEntropyLoss);
}

bool supports(const Node &node, std::string *why) {
  const DType t = node.input(0)->dtype(), l = node.input(1)->dtype();
  if (!isFloat(t)) {
    *why = fmt::format("{}: scores of dtype {} have no GPU kernel", node.opName(), dtypeName(t));
    return false;
  }
  if (l != DType::kI32 && l != DType::kI64) {
    *why = fmt::format("{}: labels of dtype {} have no GPU kernel", node.opName(), dtypeName(l));
    return false;
  }
  return true;
}

/// A kernel's parameters: value buffers and the group's scratch buffer.
struct Params {
  std::vector<std::string> decls;
  std::vector<KernelParam> list;

  void value(const Value *v, const std::string &name, bool written) {
    decls.push_back(paramDecl(v, name, written));
    list.push_back({v, -1, written});
  }
  void scratch() {
    decls.push_back("double* __restrict__ scratch");
    list.push_back({nullptr, 0, true});
  }
};

Kernel finish(std::string name, const Params &p, CodeWriter &body, LaunchDims launch) {
  CodeWriter w;
  {
    auto fn = w.block("extern \"C\" __global__ void __launch_bounds__({}) {}({})", kThreads, name,
                      fmt::join(p.decls, ", "));
    w.embed(body);
  }
  Kernel k;
  k.name = std::move(name);
  k.source = w.str();
  k.prelude = w.requirements();
  k.params = p.list;
  k.launch = launch;
  return k;
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  const Node &n = *group.anchor;
  if (group.nodes.size() != 1)
    return invalidArgument("a loss group is the loss node alone");
  const bool softmax = n.op() == Op::kSoftmaxCrossEntropyLoss;
  const std::vector<int64_t> shape = staticSizes(n.input(0));
  const int64_t batch = shape[0], classes = shape[1];
  int64_t spatial = 1;
  for (size_t i = 2; i < shape.size(); ++i)
    spatial *= shape[i];
  const int64_t samples = batch * spatial;
  const std::string reduction = n.getString("reduction");
  const bool reduce = reduction != "none";
  const Value *weights = n.numInputs() > 2 ? n.input(2) : nullptr;
  const Value *logProb = softmax && n.numOutputs() > 1 ? n.output(1) : nullptr;
  if (logProb && logProb->uses().empty() && !n.graph()->isOutput(logProb))
    logProb = nullptr;
  const Value *loss = n.output(0);
  const std::string st = cudaStorageType(loss->dtype());

  Params p1;
  p1.value(n.input(0), "x", false);
  p1.value(n.input(1), "labels", false);
  if (weights)
    p1.value(weights, "weights", false);
  if (logProb)
    p1.value(logProb, "log_prob", true);
  if (reduce)
    p1.scratch();
  else
    p1.value(loss, "loss", true);
  CodeWriter b1;
  {
    auto loop = b1.block("for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; "
                         "i < {0}LL; i += (long long)gridDim.x * blockDim.x)",
                         samples);
    b1.line("const long long base = (i / {0}) * {1}LL + i % {0};", spatial, classes * spatial);
    b1.line("double ls = 0;");
    if (softmax) {
      b1.line("double peak = -__longlong_as_double(0x7ff0000000000000LL);");
      b1.line("for (long long c = 0; c < {}; ++c)", classes);
      b1.line("  peak = fmax(peak, (double)dlc_load(x[base + c * {}]));", spatial);
      b1.line("double sum = 0;");
      b1.line("for (long long c = 0; c < {}; ++c)", classes);
      b1.line("  sum += exp((double)dlc_load(x[base + c * {}]) - peak);", spatial);
      b1.line("ls = peak + log(sum);");
      if (logProb) {
        b1.line("for (long long c = 0; c < {}; ++c)", classes);
        b1.line("  log_prob[base + c * {0}] = dlc_store<{1}>((double)dlc_load(x[base + c * {0}]) "
                "- ls);",
                spatial, cudaStorageType(logProb->dtype()));
      }
    }
    b1.line("const long long c = (long long)labels[i];");
    b1.line("double w = 0, l = 0;");
    const std::string ignored =
        n.hasAttr("ignore_index") ? fmt::format("c == {}LL", n.getInt("ignore_index")) : "false";
    {
      auto taken = b1.block("if (!({}))", ignored);
      {
        auto bad = b1.block("if (c < 0 || c >= {})", classes);
        b1.line("w = l = __longlong_as_double(0x7ff8000000000000LL); // NaN");
        bad.chain("else");
        b1.line("w = {};", weights ? "(double)dlc_load(weights[c])" : "1.0");
        b1.line("l = -w * ((double)dlc_load(x[base + c * {}]) - ls);", spatial);
      }
    }
    if (reduce) {
      b1.line("scratch[i] = l;");
      b1.line("scratch[{}LL + i] = w;", samples);
    } else {
      b1.line("loss[i] = dlc_store<{}>(l);", st);
    }
  }
  KernelSet set;
  set.kernels.push_back(
      finish(group.name, p1, b1, gridStrideLaunch(samples, opts, static_cast<uint32_t>(kThreads))));
  if (!reduce)
    return set;
  set.scratchBytes.push_back(static_cast<uint64_t>(2 * samples) * sizeof(double));

  Params p2;
  p2.scratch();
  p2.value(loss, "loss", true);
  CodeWriter b2;
  b2.line("__shared__ double part[{}], weight[{}];", kThreads, kThreads);
  b2.line("double a = 0, w = 0;");
  b2.line("for (long long i = threadIdx.x; i < {0}LL; i += {1}) {{ a += scratch[i]; w += "
          "scratch[{0}LL + i]; }}",
          samples, kThreads);
  b2.line("part[threadIdx.x] = a;");
  b2.line("weight[threadIdx.x] = w;");
  b2.line("__syncthreads();");
  {
    auto tree = b2.block("for (int s = {}; s > 0; s >>= 1)", kThreads / 2);
    b2.line("if (threadIdx.x < s) {{ part[threadIdx.x] += part[threadIdx.x + s]; "
            "weight[threadIdx.x] += weight[threadIdx.x + s]; }}");
    b2.line("__syncthreads();");
  }
  b2.line("if (threadIdx.x == 0)");
  b2.line("  loss[0] = dlc_store<{}>({});", st,
          reduction == "sum" ? "part[0]" : "part[0] / weight[0]");
  LaunchDims one;
  one.block[0] = kThreads;
  set.kernels.push_back(finish(group.name + "_sum", p2, b2, one));
  return set;
}

} // namespace

Family lossFamily() { return {"loss", claims, supports, emit}; }

} // namespace dlc::codegen
