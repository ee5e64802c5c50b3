// The random family: RandomUniform(Like), RandomNormal(Like) and Bernoulli, one thread per
// element, drawing exactly what the reference backend draws (ir/eval/random_eval.cc): element
// n's uniform is SplitMix64's n-th output from the seed's f32 bit pattern (0 without a seed),
// its top 53 bits scaled to [0, 1), computed in double and rounded once to the output type.
// RandomNormal pairs draws 2k and 2k+1 by Box-Muller, as the reference does (the GPU's log,
// sqrt, sin and cos may differ from the host's in the last bits). So a program's random
// tensors are a pure function of the seed: every run, and every CUDA-graph replay, gives the
// same values, as the reference backend does. expand-ops writes Dropout in training with
// RandomUniformLike (passes/expand_ops.cc).
#include <fmt/format.h>

#include <bit>

#include "codegen/anchor_epilogue.h"
#include "codegen/cuda_prelude.h"
#include "codegen/data_movement_internal.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"

namespace dlc::codegen {

namespace {

bool claims(const Node *anchor) {
  if (!anchor)
    return false;
  switch (anchor->op()) {
  case Op::kRandomUniform:
  case Op::kRandomUniformLike:
  case Op::kRandomNormal:
  case Op::kRandomNormalLike:
  case Op::kBernoulli:
    return true;
  default:
    return false;
  }
}

bool supports(const Node &node, std::string *why) {
  const DType out = node.output(0)->dtype();
  if (node.op() == Op::kBernoulli) {
    if (!isFloat(node.input(0)->dtype())) {
      *why = "Bernoulli: probabilities that are not floats";
      return false;
    }
    if (!isNumeric(out) && out != DType::kBool) {
      *why = fmt::format("Bernoulli: a {} output has no GPU kernel", dtypeName(out));
      return false;
    }
    return true;
  }
  if (!isFloat(out)) {
    *why = fmt::format("{}: a {} output has no GPU kernel", node.opName(), dtypeName(out));
    return false;
  }
  return true;
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  if (group.nodes.size() != 1)
    return invalidArgument("a random group is the node alone");
  const Value *out = node.output(0);
  const int64_t n = *out->shape().numElements();
  const uint64_t state =
      node.hasAttr("seed") ? std::bit_cast<uint32_t>(node.getFloat("seed")) : uint64_t{0};
  ParamList params;
  const std::string p = node.op() == Op::kBernoulli ? params.read(node.input(0)) : "";
  const std::string y = params.write(out);
  CodeWriter body;
  {
    auto draw = body.blockSemi("auto uniform = [](unsigned long long n) -> double");
    body.line("unsigned long long z = {}ULL + (n + 1ULL) * 0x9E3779B97F4A7C15ULL;", state);
    body.line("z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;");
    body.line("z = (z ^ (z >> 27)) * 0x94D049EB133111EBULL;");
    body.line("z ^= z >> 31;");
    body.line("return (double)(z >> 11) * 1.1102230246251565e-16; // 2^-53");
  }
  auto loop = body.block("{}", gridStrideLoop("long long", n));
  switch (node.op()) {
  case Op::kRandomUniform:
  case Op::kRandomUniformLike:
    body.line("const double v = {} + ({} - {}) * uniform(i);", node.getFloat("low"),
              node.getFloat("high"), node.getFloat("low"));
    break;
  case Op::kRandomNormal:
  case Op::kRandomNormalLike:
    body.line("const unsigned long long k = (unsigned long long)i / 2;");
    body.line("const double r = sqrt(-2.0 * log(1.0 - uniform(2 * k)));");
    body.line("const double th = 6.283185307179586 * uniform(2 * k + 1);");
    body.line("const double v = {} + {} * (r * ((i % 2 == 0) ? cos(th) : sin(th)));",
              node.getFloat("mean"), node.getFloat("scale"));
    break;
  default: // Bernoulli
    body.line("const double v = uniform(i) < (double)dlc_load({}[i]) ? 1.0 : 0.0;", p);
    break;
  }
  body.line("{}[i] = dlc_store<{}>(v);", y, cudaStorageType(out->dtype()));
  loop.close();
  Kernel kern;
  kern.name = group.name;
  finishKernel(kern, params, 256, body);
  kern.launch = gridStrideLaunch(n, opts);
  return single(std::move(kern));
}

} // namespace

Family randomFamily() { return {"random", claims, supports, emit}; }

} // namespace dlc::codegen
