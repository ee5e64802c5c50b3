#include "runtime/jit/verify.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <sstream>

#include "ir/clone.h"
#include "ir/eval/eval.h"
#include "runtime/gpu_session.h"
#include "runtime/jit/gpu_jit.h"
#include "runtime/tensor_compare.h"

namespace dlc {
namespace {

double maxAbs(const Tensor &t) {
  if (!isFloat(t.dtype()))
    return 0;
  Tensor f = t.castTo(DType::kF64);
  double m = 0;
  const double *d = f.data<double>();
  for (int64_t i = 0; i < f.numElements(); ++i)
    if (std::isfinite(d[i]))
      m = std::max(m, std::abs(d[i]));
  return m;
}

// Float dtypes from least to most precise; 0 for the others.
int precisionRank(DType d) {
  switch (d) {
  case DType::kBF16:
    return 1;
  case DType::kF16:
    return 2;
  case DType::kF32:
    return 3;
  case DType::kF64:
    return 4;
  default:
    return 0;
  }
}

} // namespace

std::map<const Value *, DType> computedPrecision(const Graph &g) {
  std::map<const Value *, DType> prec;
  for (const Node *n : g.nodes()) {
    // The least precise float dtype any computed input was computed in. Graph inputs and
    // constants are exact on both sides, whatever their dtype.
    std::optional<DType> worst;
    for (const Value *in : n->inputs()) {
      auto it = in ? prec.find(in) : prec.end();
      if (it != prec.end() && (!worst || precisionRank(it->second) < precisionRank(*worst)))
        worst = it->second;
    }
    for (const Value *v : n->outputs()) {
      if (!v || !isFloat(v->dtype()))
        continue;
      DType d = v->dtype();
      if (worst && precisionRank(*worst) < precisionRank(d))
        d = *worst;
      prec[v] = d;
    }
  }
  return prec;
}

Tolerance verifyTolerance(DType dtype, double maxAbsValue) {
  // rel: relative to the largest magnitude; floor: a few units of the dtype's smallest
  // subnormal, so that values near zero that round differently do not count.
  double rel = 0, floor = 0;
  switch (dtype) {
  case DType::kF32:
  case DType::kF64:
    rel = 1e-4;
    floor = 1e-30;
    break;
  case DType::kF16:
    rel = 1e-2;
    floor = 4 * 5.960464477539063e-08; // 4 * 2^-24
    break;
  case DType::kBF16:
    rel = 4e-2;
    floor = 1e-30;
    break;
  default:
    return {0, 0};
  }
  return {rel, std::max(rel * maxAbsValue, floor)};
}

namespace {

/// The GPU's tensor of `v` under its own name, or nullptr. A value that keeps the name of the
/// graph output it used to be, now read through a cast (mixed precision's float32 interface:
/// the model's last LayerNorm in float16, its output cast back), is not the tensor under that
/// name: the dtypes differ.
const Tensor *gpuTensorOf(const Value *v, const std::map<std::string, Tensor> &gpu) {
  auto it = gpu.find(v->name());
  return it != gpu.end() && it->second.dtype() == v->dtype() ? &it->second : nullptr;
}

/// The reference value of `v` computed from what the GPU wrote: values the GPU kept are taken
/// as they are, the ones inside a fused kernel are evaluated from them (memoized in `local`).
/// `rounds`: set when a quantize_linear of a float is among the nodes evaluated.
Expected<Tensor> fromGpuValues(const Value *v, const std::map<std::string, Tensor> &gpu,
                               const std::map<std::string, Tensor> &inputs, const Value *target,
                               std::map<const Value *, Tensor> &local, bool &rounds) {
  if (auto it = local.find(v); it != local.end())
    return it->second;
  if (v != target)
    if (const Tensor *t = gpuTensorOf(v, gpu))
      return *t;
  if (v->isConstant())
    return v->constant();
  const Node *n = v->producer();
  if (!n) {
    auto it = inputs.find(v->name());
    if (it == inputs.end())
      return notFound("verify: no value for '{}'", v->name());
    return it->second;
  }
  std::vector<Tensor> args;
  for (const Value *in : n->inputs()) {
    if (!in) {
      args.emplace_back();
      continue;
    }
    DLC_ASSIGN_OR_RETURN(Tensor t, fromGpuValues(in, gpu, inputs, target, local, rounds));
    args.push_back(std::move(t));
  }
  rounds = rounds || (n->op() == Op::kQuantizeLinear && isFloat(n->input(0)->dtype()));
  DLC_ASSIGN_OR_RETURN(std::vector<Tensor> out, eval::evaluate(*n, args));
  for (size_t i = 0; i < out.size() && i < static_cast<size_t>(n->numOutputs()); ++i)
    if (const Value *o = n->output(static_cast<int>(i)))
      local[o] = std::move(out[i]);
  auto it = local.find(v);
  if (it == local.end())
    return internalError("verify: {} gave no value for '{}'", n->describe(), v->name());
  return it->second;
}

} // namespace

Expected<VerifyReport> verifyGpuAgainstReference(const Model &model,
                                                 const std::map<std::string, Tensor> &inputs,
                                                 const SessionOptions &opts) {
  DLC_ASSIGN_OR_RETURN(rt::CudaDriver * driver, rt::CudaDriver::get(opts.device));
  DLC_ASSIGN_OR_RETURN(auto dims, bindInputDims(model.graph(), inputs));
  std::ostringstream sink;
  jit::JitOptions jo = gpuJitOptions(driver->device(), opts, sink);
  jo.lower.exposeIntermediates = true;
  DLC_RETURN_IF_ERROR(jit::bindShapeInputs(model.graph(), dims, inputs, jo));
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, jit::prepareForGpu(model.graph(), dims, jo));
  DLC_ASSIGN_OR_RETURN(rt::Program program, codegen::lowerToProgram(*g, jo.lower));
  rt::GpuProgramOptions po;
  po.device = opts.device;
  DLC_ASSIGN_OR_RETURN(auto gpuProgram,
                       rt::GpuProgram::create(std::make_shared<const rt::Program>(program), po));
  rt::GpuSessionOptions so;
  so.cudaGraph = false;
  so.poison = true;
  DLC_ASSIGN_OR_RETURN(auto session, rt::GpuSession::create(gpuProgram, so));
  DLC_ASSIGN_OR_RETURN(auto gpuOut, session->runByName(inputs));

  // In a quantized graph (and for every integer) each value is checked against the reference
  // of its own kernel on the GPU's inputs of that kernel: integers exactly, or to one
  // quantization step where the kernel quantizes a float (a float on the other side of a
  // rounding boundary moves the level by one; a whole-graph run would compound such steps
  // layer after layer, and into the floats after them). Other graphs: the reference runs the
  // same specialised graph with every node output returned.
  const std::vector<Node *> nodes = g->nodes(); // a snapshot: one vector for both iterators
  const bool quantized = std::any_of(nodes.begin(), nodes.end(),
                                     [](const Node *n) { return n->op() == Op::kQuantizeLinear; });
  std::map<std::string, Tensor> refByName;
  if (!quantized) {
    std::unique_ptr<Graph> ref = cloneGraph(*g);
    std::set<std::string> returned;
    for (const auto &o : ref->outputs())
      returned.insert(o.value->name());
    for (Node *n : ref->nodes())
      for (Value *v : n->outputs())
        if (v && !returned.count(v->name()) && gpuOut.count(v->name()))
          ref->addOutput(v->name(), v, v->type());
    DLC_ASSIGN_OR_RETURN(ReferenceExecutor ex, ReferenceExecutor::create(*ref));
    DLC_ASSIGN_OR_RETURN(std::vector<NamedTensor> refOut, ex.run(inputs));
    for (NamedTensor &t : refOut)
      refByName.emplace(t.name, std::move(t.tensor));
  }
  // Public output names map to values: compare by value name where the output was renamed.
  std::map<std::string, std::string> valueOfOutput;
  for (const auto &o : g->outputs())
    valueOfOutput[o.name] = o.value->name();

  // A float32 value computed from float16 ones carries float16 error: use the tolerance of the
  // least precise dtype on its way from the inputs (a Cast to float32 does not make it exact).
  const std::map<const Value *, DType> precision = computedPrecision(*g);
  VerifyReport report;
  for (const Node *n : g->nodes()) {
    for (const Value *v : n->outputs()) {
      if (!v)
        continue;
      std::string name = v->name(), refName = name;
      const Tensor *got = gpuTensorOf(v, gpuOut);
      if (!got) // an output under its public name
        for (const auto &[pub, val] : valueOfOutput)
          if (val == name)
            if (auto it = gpuOut.find(pub); it != gpuOut.end()) {
              got = &it->second;
              refName = pub;
            }
      if (!got)
        continue;
      const Tensor *expected = nullptr;
      Tensor local;
      bool oneStep = false;
      if (quantized || (!isFloat(v->dtype()) && v->dtype() != DType::kBool)) {
        std::map<const Value *, Tensor> memo;
        DLC_ASSIGN_OR_RETURN(local, fromGpuValues(v, gpuOut, inputs, v, memo, oneStep));
        expected = &local;
        oneStep = oneStep && !isFloat(v->dtype());
      } else if (auto ri = refByName.find(refName); ri != refByName.end()) {
        expected = &ri->second;
      } else {
        continue;
      }
      ++report.compared;
      auto p = precision.find(v);
      const Tolerance tol =
          verifyTolerance(p == precision.end() ? v->dtype() : p->second, maxAbs(*expected));
      Comparison c = compareTensors(*got, *expected, tol);
      if (oneStep && !c.match && c.typeMismatch.empty() && c.maxAbsError <= 1) {
        c.match = true;
        report.oneStepValues += 1;
        report.oneStepElements += c.mismatches;
      }
      if (!c.match) {
        report.divergence =
            fmt::format("{} on {}: output '{}' diverges from the reference "
                        "({}): {}",
                        n->describe(), n->device().str(), name,
                        oneStep ? "its own kernel's inputs, one quantization step"
                                : fmt::format("rtol {:g}, atol {:g}", tol.rtol, tol.atol),
                        c.str(*got, *expected));
        report.summary = "verify: FAILED: " + report.divergence;
        return report;
      }
    }
  }
  report.summary = fmt::format("verify: ok: {} values computed on the GPU match the reference "
                               "backend",
                               report.compared);
  if (report.oneStepValues > 0)
    report.summary += fmt::format(" ({} quantized values have {} elements one quantization step "
                                  "away, a float rounding on the other side of a boundary)",
                                  report.oneStepValues, report.oneStepElements);
  return report;
}

} // namespace dlc
