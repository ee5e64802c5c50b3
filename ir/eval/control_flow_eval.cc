// Reference evaluation of If, Loop and Scan: the body runs on host tensors with evalBody
// (each node through evaluate, ir/eval/eval.h), once per branch taken or per iteration. Errors say
// which body and which iteration: `body 'body', iteration 2: node 'add' (Add): ...`.
#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "ir/eval/eval.h"
#include "ir/eval/eval_util.h"
#include "ir/eval/families.h"
#include "ir/limits.h"
#include "ir/ops/body.h"
#include "ir/ops/control_flow.h"

namespace dlc::eval {

using ops::bodyOf;
using ops::control_flow::intsOrZeros;
using ops::control_flow::LoopParts;
using ops::control_flow::loopParts;
using ops::control_flow::ScanParts;
using ops::control_flow::scanParts;

namespace {

/// Runs a body on `inputs` (one per body input) with each node's reference evaluation and
/// returns the tensors it returns. Errors name the body's node.
Expected<std::vector<Tensor>> evalBody(const Graph &body, const std::vector<Tensor> &inputs) {
  if (inputs.size() != body.inputs().size())
    return internalError("{} inputs given for a body of {} inputs", inputs.size(),
                         body.inputs().size());
  std::unordered_map<const Value *, Tensor> env;
  for (size_t i = 0; i < inputs.size(); ++i)
    env[body.inputs()[i]] = inputs[i];
  for (const Value *c : body.constants())
    env[c] = c->constant();
  std::vector<Tensor> args;
  for (const Node *n : body.nodes()) {
    args.clear();
    for (const Value *in : n->inputs()) {
      auto it = in ? env.find(in) : env.end();
      if (in && it == env.end())
        return internalError("{}: input '{}' has no value", n->describe(), in->name());
      args.push_back(in ? it->second : Tensor());
    }
    DLC_ASSIGN_OR_RETURN(std::vector<Tensor> results, evaluate(*n, args));
    for (int i = 0; i < n->numOutputs(); ++i) {
      const Value *out = n->output(i);
      if (!out)
        continue;
      if (static_cast<size_t>(i) >= results.size() || results[static_cast<size_t>(i)].empty())
        return internalError("{}: reference evaluation produced no value for output {} ('{}')",
                             n->describe(), i, out->name());
      env[out] = std::move(results[static_cast<size_t>(i)]);
    }
  }
  std::vector<Tensor> out;
  for (const Graph::Output &o : body.outputs()) {
    auto it = env.find(o.value);
    if (it == env.end())
      return internalError("body output '{}' was never computed", o.name);
    out.push_back(it->second);
  }
  return out;
}

/// A one-element tensor's truth (If's and Loop's condition).
Expected<bool> truth(const Tensor &t, const std::string &what) {
  if (t.numElements() != 1)
    return invalidArgument("{} must hold one element, got shape {}", what,
                           Shape::fromSizes(t.shape()).str());
  return t.elementAsInt64(0) != 0;
}

Tensor boolScalar(bool v) {
  Tensor t = Tensor::zeros(DType::kBool, {});
  t.mutableData<bool>()[0] = v;
  return t;
}

Expected<std::vector<Tensor>> runBody(const Graph &body, const char *name,
                                      const std::vector<Tensor> &inputs, int64_t iteration) {
  auto outs = evalBody(body, inputs);
  if (!outs) {
    std::string where = iteration < 0 ? fmt::format("body '{}'", name)
                                      : fmt::format("body '{}', iteration {}", name, iteration);
    return outs.status().withContext(where);
  }
  return outs;
}

/// Element `index` of `x` along `axis`, that axis removed.
Tensor takeAlong(const Tensor &x, int64_t axis, int64_t index) {
  AxisSplit s = splitAt(x.shape(), axis);
  std::vector<int64_t> shape = x.shape();
  shape.erase(shape.begin() + axis);
  Tensor out = Tensor::zeros(x.dtype(), std::move(shape));
  size_t block = static_cast<size_t>(s.inner * dtypeSize(x.dtype()));
  const auto *src = static_cast<const uint8_t *>(x.raw());
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  for (int64_t o = 0; o < s.outer; ++o)
    std::memcpy(dst + static_cast<size_t>(o) * block,
                src + static_cast<size_t>(o * s.len + index) * block, block);
  return out;
}

/// The iterations' tensors stacked along a new axis `axis` (may be negative); they must agree
/// on dtype and shape. With no iterations, the shape comes from the output's inferred type.
Expected<Tensor> stack(const std::vector<Tensor> &parts, int64_t axis, const Value *out) {
  if (parts.empty()) {
    const TensorType &t = out ? out->type() : TensorType();
    if (!t.isKnown())
      return invalidArgument("no iterations ran and the scan output's dtype is unknown");
    std::vector<int64_t> sizes;
    for (const Dim &d : t.shape.dims())
      sizes.push_back(d.isKnown() ? d.value() : 0);
    if (sizes.empty())
      sizes.push_back(0);
    return Tensor::zeros(t.dtype, std::move(sizes));
  }
  const Tensor &first = parts[0];
  for (size_t t = 1; t < parts.size(); ++t)
    if (parts[t].dtype() != first.dtype() || parts[t].shape() != first.shape())
      return invalidArgument("iteration {} gives {} but iteration 0 gave {}", t,
                             parts[t].type().str(), first.type().str());
  DLC_ASSIGN_OR_RETURN(int64_t a, normalizeAxis(axis, first.rank() + 1));
  std::vector<int64_t> shape = first.shape();
  shape.insert(shape.begin() + a, static_cast<int64_t>(parts.size()));
  Tensor result = Tensor::zeros(first.dtype(), shape);
  AxisSplit s = splitAt(shape, a);
  size_t block = static_cast<size_t>(s.inner * dtypeSize(first.dtype()));
  auto *dst = static_cast<uint8_t *>(result.mutableRaw());
  for (size_t t = 0; t < parts.size(); ++t) {
    const auto *src = static_cast<const uint8_t *>(parts[t].raw());
    for (int64_t o = 0; o < s.outer; ++o)
      std::memcpy(dst + (static_cast<size_t>(o * s.len) + t) * block,
                  src + static_cast<size_t>(o) * block, block);
  }
  return result;
}

/// Stacks scan output k's elements; errors name the output.
Expected<Tensor> stackOutput(const Node &node, int outIndex, int k,
                             const std::vector<Tensor> &parts, int64_t axis) {
  auto t = stack(parts, axis, node.output(outIndex));
  if (!t)
    return t.status().withContext(fmt::format("scan output {}", k));
  return t;
}

Expected<std::vector<Tensor>> evalIf(const Node &node, const std::vector<Tensor> &in) {
  DLC_ASSIGN_OR_RETURN(bool cond, truth(in[0], "input cond"));
  const char *name = cond ? "then_branch" : "else_branch";
  std::vector<Tensor> captures(in.begin() + 1, in.end());
  return runBody(bodyOf(node, name), name, captures, -1);
}

Expected<std::vector<Tensor>> evalLoop(const Node &node, const std::vector<Tensor> &in) {
  LoopParts p = loopParts(node);
  auto input = [&](int i) { return i < static_cast<int>(in.size()) ? in[i] : Tensor(); };
  std::optional<int64_t> tripLimit;
  if (!input(0).empty()) {
    DLC_ASSIGN_OR_RETURN(int64_t m, scalarIntInput(input(0), "input M"));
    tripLimit = m;
  }
  bool go = true;
  if (!input(1).empty()) {
    DLC_ASSIGN_OR_RETURN(go, truth(input(1), "input cond"));
  }
  const Graph &body = bodyOf(node, "body");
  std::vector<Tensor> args(static_cast<size_t>(2 + p.carried + p.captures));
  for (int i = 2; i < 2 + p.carried + p.captures; ++i)
    args[static_cast<size_t>(i)] = in[static_cast<size_t>(i)];
  std::vector<std::vector<Tensor>> scans(static_cast<size_t>(p.scanOutputs));
  const int64_t maxIterations = limits().maxLoopIterations;
  for (int64_t iter = 0; go && (!tripLimit || iter < *tripLimit); ++iter) {
    if (iter == maxIterations)
      return outOfRange("the loop did not end within {} iterations (trip count {}), the limit "
                        "of the reference backend (--max-loop-iterations)",
                        maxIterations, tripLimit ? std::to_string(*tripLimit) : "none");
    args[0] = Tensor::scalarI64(iter);
    args[1] = boolScalar(go);
    DLC_ASSIGN_OR_RETURN(std::vector<Tensor> outs, runBody(body, "body", args, iter));
    DLC_ASSIGN_OR_RETURN(go, truth(outs[0], fmt::format("body output 0 (the condition), "
                                                        "iteration {}",
                                                        iter)));
    for (int k = 0; k < p.carried; ++k)
      args[static_cast<size_t>(2 + k)] = std::move(outs[static_cast<size_t>(1 + k)]);
    for (int k = 0; k < p.scanOutputs; ++k)
      scans[static_cast<size_t>(k)].push_back(
          std::move(outs[static_cast<size_t>(1 + p.carried + k)]));
  }
  std::vector<Tensor> results(args.begin() + 2, args.begin() + 2 + p.carried);
  for (int k = 0; k < p.scanOutputs; ++k) {
    DLC_ASSIGN_OR_RETURN(Tensor t,
                         stackOutput(node, p.carried + k, k, scans[static_cast<size_t>(k)], 0));
    results.push_back(std::move(t));
  }
  return results;
}

Expected<std::vector<Tensor>> evalScan(const Node &node, const std::vector<Tensor> &in) {
  ScanParts p = scanParts(node);
  std::vector<int64_t> inDirs = intsOrZeros(node, "scan_input_directions", p.scanInputs);
  std::vector<int64_t> inAxes = intsOrZeros(node, "scan_input_axes", p.scanInputs);
  std::vector<int64_t> outDirs = intsOrZeros(node, "scan_output_directions", p.scanOutputs);
  std::vector<int64_t> outAxes = intsOrZeros(node, "scan_output_axes", p.scanOutputs);
  int64_t len = -1;
  for (int j = 0; j < p.scanInputs; ++j) {
    const Tensor &x = in[static_cast<size_t>(p.states + j)];
    auto a = normalizeAxis(inAxes[static_cast<size_t>(j)], x.rank());
    if (!a)
      return a.status().withContext(fmt::format("scan input {}", j));
    inAxes[static_cast<size_t>(j)] = *a;
    int64_t n = x.shape()[static_cast<size_t>(*a)];
    if (len >= 0 && n != len)
      return invalidArgument("scan inputs disagree on the sequence length: {} and {}", len, n);
    len = n;
  }
  const Graph &body = bodyOf(node, "body");
  std::vector<Tensor> args(in.begin(), in.end());
  std::vector<std::vector<Tensor>> scans(static_cast<size_t>(p.scanOutputs));
  for (int64_t t = 0; t < len; ++t) {
    for (int j = 0; j < p.scanInputs; ++j) {
      size_t i = static_cast<size_t>(p.states + j);
      int64_t index = inDirs[static_cast<size_t>(j)] ? len - 1 - t : t;
      args[i] = takeAlong(in[i], inAxes[static_cast<size_t>(j)], index);
    }
    DLC_ASSIGN_OR_RETURN(std::vector<Tensor> outs, runBody(body, "body", args, t));
    for (int k = 0; k < p.states; ++k)
      args[static_cast<size_t>(k)] = std::move(outs[static_cast<size_t>(k)]);
    for (int k = 0; k < p.scanOutputs; ++k)
      scans[static_cast<size_t>(k)].push_back(std::move(outs[static_cast<size_t>(p.states + k)]));
  }
  std::vector<Tensor> results(args.begin(), args.begin() + p.states);
  for (int k = 0; k < p.scanOutputs; ++k) {
    std::vector<Tensor> &parts = scans[static_cast<size_t>(k)];
    if (outDirs[static_cast<size_t>(k)])
      std::reverse(parts.begin(), parts.end());
    DLC_ASSIGN_OR_RETURN(
        Tensor t, stackOutput(node, p.states + k, k, parts, outAxes[static_cast<size_t>(k)]));
    results.push_back(std::move(t));
  }
  return results;
}

} // namespace

std::vector<EvalRow> controlFlowEvals() {
  return {
      {Op::kIf, evalIf},
      {Op::kLoop, evalLoop},
      {Op::kScan, evalScan},
  };
}

} // namespace dlc::eval
