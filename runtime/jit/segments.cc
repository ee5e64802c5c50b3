#include "runtime/jit/segments.h"

#include <fmt/format.h>

#include <functional>
#include <set>
#include <sstream>
#include <unordered_set>

#include "codegen/lower.h"
#include "ir/annotations/placement.h"
#include "ir/clone.h"
#include "passes/util/control_flow_expand.h"

namespace dlc::jit {

namespace {

/// Ops whose output size is the data's, when expand-ops left them whole (a form it does not
/// rewrite): reading their operands back would compute them on the host.
bool sizedByData(Op op) {
  return op == Op::kNonZero || op == Op::kUnique || op == Op::kCompress ||
         op == Op::kNonMaxSuppression;
}

/// The operand of control flow that decides the path through its bodies when it is computed
/// from the data (If's condition, Loop's trip count and condition), or nullptr. Reading it back
/// lets expand-ops inline the bodies after the point, where it is a constant.
const Value *decidingOperand(const Node &n, int index) {
  if (!n.hasInput(index))
    return nullptr;
  const Value *v = n.input(index);
  auto numel = v->shape().numElements();
  return !v->isConstant() && numel && *numel == 1 ? v : nullptr;
}

/// Whether `n` is If or Loop whose path depends on a value computed from the data.
bool branchesOnData(const Node &n) {
  if (n.op() == Op::kIf)
    return decidingOperand(n, 0) != nullptr;
  if (n.op() == Op::kLoop)
    return (decidingOperand(n, 0) || decidingOperand(n, 1)) && loopRunsItsTripCount(n);
  return false;
}

/// Whether input `v` of `n` (a node whose output shape is unknown while its inputs' are known)
/// is a value the host can read back to learn that shape: a small integer operand (a shape, a
/// count, a Slice's end), or the float scales or limits of Resize and Range.
bool pointCandidate(const Node &n, const Value &v) {
  if (n.op() == Op::kIf || n.op() == Op::kLoop)
    return &v == decidingOperand(n, 0) || (n.op() == Op::kLoop && &v == decidingOperand(n, 1));
  if (v.isConstant() || !v.shape().isStatic() || v.shape().rank() > 1)
    return false;
  auto numel = v.shape().numElements();
  if (!numel || *numel > 64)
    return false;
  if (isInteger(v.dtype()))
    return true;
  return isFloat(v.dtype()) && (n.op() == Op::kResize || n.op() == Op::kRange);
}

/// The first output of `n` whose shape is not static, or nullptr.
const Value *dynamicOutput(const Node &n) {
  for (const Value *v : n.outputs())
    if (v && !v->shape().isStatic())
      return v;
  return nullptr;
}

/// A small static integer or bool value: what place-devices calls a shape computation's.
bool smallInteger(const Value *v) {
  auto numel = v->shape().numElements();
  return (isInteger(v->dtype()) || v->dtype() == DType::kBool) && numel && *numel <= 64;
}

/// Arithmetic on small integers (a count reshaped, a shape assembled by Concat): place-devices
/// would put it on the host in the middle of a segment. Before a shape point it moves after the
/// point instead, where its inputs are bound and it folds.
bool shapeArithmetic(const Node &n) {
  if (n.op() == Op::kShape || n.op() == Op::kSize || sizedByData(n.op()) || n.numOutputs() == 0)
    return false;
  for (const Value *v : n.outputs())
    if (v && !smallInteger(v))
      return false;
  for (const Value *v : n.inputs())
    if (v && !smallInteger(v))
      return false;
  return true;
}

struct Cut {
  /// Nodes of the rest: the late ones and the shape arithmetic pulled after the point.
  std::unordered_set<const Node *> late, rest;
  std::vector<const Value *> values, carried;
  std::vector<const Node *> frontier;
};

/// Splits `g` (after the front pipeline) into the nodes that can run now and the late ones:
/// those with an output of unknown shape, and everything after them.
Expected<Cut> findCut(const Graph &g) {
  Cut cut;
  for (const Node *n : g.nodes()) {
    bool late = dynamicOutput(*n) != nullptr || branchesOnData(*n);
    bool fed = false; // reads a late value
    for (const Value *v : n->inputs())
      if (v && v->isNodeOutput() && cut.late.count(v->producer()))
        fed = true;
    if (late || fed)
      cut.late.insert(n);
    if (late && !fed)
      cut.frontier.push_back(n);
  }
  std::set<const Value *> seen;
  cut.rest = cut.late;
  // A point value computed by shape arithmetic is read back at the arithmetic's roots instead.
  std::function<void(const Value *)> addPoint = [&](const Value *v) {
    const Node *p = v->isNodeOutput() ? v->producer() : nullptr;
    if (p && shapeArithmetic(*p)) {
      if (cut.rest.insert(p).second)
        for (const Value *in : p->inputs())
          if (in && !in->isConstant())
            addPoint(in);
      return;
    }
    if (seen.insert(v).second)
      cut.values.push_back(v);
  };
  for (const Node *n : cut.frontier) {
    const Value *out = dynamicOutput(*n);
    if (sizedByData(n->op()))
      return unimplemented("{}: output '{}' has shape {}, a size only the data gives, and the "
                           "GPU backend has no kernel for this form of {}",
                           n->describe(), out->name(), out->shape().str(), n->opName());
    bool any = false;
    for (const Value *v : n->inputs())
      if (v && pointCandidate(*n, *v)) {
        any = true;
        addPoint(v);
      }
    if (!any)
      return unimplemented("{}: output '{}' has shape {}, which does not follow from any small "
                           "operand the GPU could read back (a shape, a count); the GPU backend "
                           "needs it known",
                           n->describe(), out->name(), out->shape().str());
  }
  for (const Node *n : g.nodes()) {
    if (!cut.rest.count(n))
      continue;
    for (const Value *v : n->inputs())
      if (v && !v->isConstant() && !(v->isNodeOutput() && cut.rest.count(v->producer())) &&
          seen.insert(v).second)
        cut.carried.push_back(v);
  }
  return cut;
}

Status checkStatic(const Graph &g, const std::vector<std::string> &names) {
  for (const std::string &name : names) {
    const Value *v = g.findValue(name);
    if (v && !v->shape().isStatic())
      return unimplemented("{}: output '{}' still has shape {} with the values read back at the "
                           "shape point before it bound; the GPU backend needs it known",
                           v->producer() ? v->producer()->describe() : name, name,
                           v->shape().str());
  }
  return Status::ok();
}

/// `g` as one program: a model without shape points.
Expected<Segment> wholeSegment(Graph &g, const JitOptions &opts) {
  Segment seg;
  DLC_RETURN_IF_ERROR(runGpuPipeline(g, opts));
  DLC_ASSIGN_OR_RETURN(seg.program, codegen::lowerToProgram(g, opts.lower));
  for (const Graph::Output &o : g.outputs())
    seg.modelOutputs.push_back(o.name);
  return seg;
}

} // namespace

Expected<Segment> compileSegment(const Graph &model, const std::map<std::string, int64_t> &dims,
                                 const JitOptions &opts,
                                 const std::vector<std::string> &mustBeStatic) {
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, bindForGpu(model, dims, opts));
  // Shape inference first (the GPU pipeline starts with it anyway). expand-ops rewrites the
  // ops sized by data into a count and a Slice by it, which only kSettleShapes' second shape
  // inference settles when the count folds.
  DLC_RETURN_IF_ERROR(runQuietly(*g, "infer-shapes"));
  bool dynamic = false;
  for (const Node *n : g->nodes())
    dynamic |= dynamicOutput(*n) || sizedByData(n->op()) || branchesOnData(*n);
  if (!dynamic) // the common case
    return wholeSegment(*g, opts);
  DLC_RETURN_IF_ERROR(runQuietly(*g, kSettleShapes)); // expand-ops makes counts and Slices
  DLC_RETURN_IF_ERROR(checkStatic(*g, mustBeStatic));
  DLC_ASSIGN_OR_RETURN(Cut cut, findCut(*g));
  if (cut.late.empty()) // folding settled every shape
    return wholeSegment(*g, opts);
  Segment seg;
  auto isLate = [&](const Value *v) { return v->isNodeOutput() && cut.late.count(v->producer()); };

  // The first segment returns the model outputs it has, then the point values and the
  // carried values under names no model output takes.
  std::vector<std::pair<std::string, const Value *>> headOutputs, restOutputs;
  std::set<std::string> taken;
  for (const Graph::Output &o : g->outputs()) {
    taken.insert(o.name);
    if (isLate(o.value)) {
      restOutputs.push_back({o.name, o.value});
    } else {
      headOutputs.push_back({o.name, o.value});
      seg.modelOutputs.push_back(o.name);
    }
  }
  ShapePoint point;
  std::vector<std::pair<const Value *, std::string>> restInputs;
  auto feed = [&](const Value *v, std::vector<std::pair<std::string, std::string>> &into) {
    std::string name;
    for (const auto &[out, value] : headOutputs)
      if (value == v && name.empty())
        name = out;
    if (name.empty()) {
      name = v->name();
      while (taken.count(name))
        name += "$carried";
      taken.insert(name);
      headOutputs.push_back({name, v});
    }
    into.push_back({name, v->name()});
    restInputs.push_back({v, v->name()});
  };
  for (const Value *v : cut.values)
    feed(v, point.values);
  for (const Value *v : cut.carried)
    feed(v, point.carried);
  for (const Node *n : cut.frontier) {
    const Value *out = dynamicOutput(*n) ? dynamicOutput(*n) : n->output(0);
    point.waiting +=
        (point.waiting.empty() ? "" : ", ") +
        (n->name().empty() && out ? fmt::format("{} ('{}')", n->describe(), out->name())
                                  : n->describe());
    for (const Value *v : n->outputs())
      if (v && !v->shape().isStatic())
        point.waitingOutputs.push_back(v->name());
  }
  std::vector<std::pair<const Value *, std::string>> modelInputs;
  for (const Value *v : g->inputs())
    modelInputs.push_back({v, v->name()});
  DLC_ASSIGN_OR_RETURN(
      std::unique_ptr<Graph> head,
      extractGraph(
          *g, [&](const Node &n) { return !cut.late.count(&n); }, modelInputs, headOutputs));
  DLC_ASSIGN_OR_RETURN(
      std::unique_ptr<Graph> rest,
      extractGraph(
          *g, [&](const Node &n) { return cut.rest.count(&n) > 0; }, restInputs, restOutputs));
  rest->setAnnotation(std::string(kPlaceInputsOnGpuAttr), Attribute(int64_t{1}));
  DLC_RETURN_IF_ERROR(runGpuPipeline(*head, opts));
  DLC_ASSIGN_OR_RETURN(seg.program, codegen::lowerToProgram(*head, opts.lower));
  point.rest = std::move(rest);
  seg.point = std::move(point);
  return seg;
}

JitOptions restOptions(const JitOptions &opts, const ShapePoint &point,
                       const std::map<std::string, Tensor> &values) {
  JitOptions o = opts;
  o.shapeValues.clear();
  for (const auto &[out, in] : point.values)
    o.shapeValues.emplace(in, values.at(out));
  return o;
}

std::string valuesKey(const std::map<std::string, Tensor> &values) {
  std::string key;
  for (const auto &[name, t] : values) {
    key += ";" + name + "=";
    const auto *bytes = static_cast<const unsigned char *>(t.raw());
    for (int64_t b = 0; b < t.byteSize(); ++b)
      key += fmt::format("{:02x}", bytes[b]);
  }
  return key;
}

Expected<std::vector<NamedTensor>> runSegments(const Graph &model,
                                               const std::map<std::string, int64_t> &dims,
                                               const JitOptions &opts,
                                               const std::map<std::string, Tensor> &inputs,
                                               const ProgramRunner &run, Status *compileError) {
  auto compiled = [&](Expected<Segment> s) -> Expected<Segment> {
    if (!s && compileError)
      *compileError = s.status();
    return s;
  };
  DLC_ASSIGN_OR_RETURN(Segment seg, compiled(compileSegment(model, dims, opts)));
  std::map<std::string, Tensor> feed = inputs, results;
  for (;;) {
    DLC_ASSIGN_OR_RETURN(std::vector<NamedTensor> outs, run(seg.program, feed));
    std::map<std::string, Tensor> byName;
    for (NamedTensor &o : outs)
      byName.emplace(o.name, std::move(o.tensor));
    for (const std::string &name : seg.modelOutputs)
      results[name] = byName.at(name);
    if (!seg.point)
      break;
    const ShapePoint point = std::move(*seg.point);
    std::map<std::string, Tensor> values;
    feed.clear();
    for (const auto &[out, in] : point.values) {
      values.emplace(out, byName.at(out));
      feed.emplace(in, byName.at(out));
    }
    for (const auto &[out, in] : point.carried)
      feed.emplace(in, byName.at(out));
    DLC_ASSIGN_OR_RETURN(seg,
                         compiled(compileSegment(*point.rest, {}, restOptions(opts, point, values),
                                                 point.waitingOutputs)));
  }
  std::vector<NamedTensor> out;
  for (const Graph::Output &o : model.outputs())
    out.push_back({o.name, results.at(o.name)});
  return out;
}

} // namespace dlc::jit
