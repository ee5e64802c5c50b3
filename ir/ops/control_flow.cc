// The control-flow family: If, Loop and Scan, the ops that own body graphs (graph attributes).
//
// Bodies are closed graphs. The values of enclosing graphs a body uses ("captures") are
// explicit trailing inputs of the node, passed to the body as its trailing inputs, in the same
// order (the ONNX importer makes them so; see ir/ops/README.md):
//
// clang-format off
//   If(cond, captures...)                       then_branch, else_branch: (captures...) -> (outs...)
//   Loop(M?, cond?, v_initial..., captures...)  body: (iter_num, cond, v..., captures...)
//                                                     -> (cond, v..., scan_outputs...)
//   Scan(state..., scan_inputs..., captures...) body: (state..., scan_elements..., captures...)
//                                                     -> (state..., scan_output_elements...)
// clang-format on
//
// Loop and Scan say how many trailing inputs are captures with `num_captures` (default 0); If
// needs no count (every input after cond is one). OpDef::verify checks each body's signature
// against the node. Inference runs the body's own inference (ops/body.h) on the input types the
// node gives it; loop-carried and state values enter the body as what they are on every
// iteration: the initial type joined with what the body returns, repeated until it settles.
#include "ir/ops/control_flow.h"

#include <algorithm>

#include "ir/ops/body.h"
#include "ir/ops/families.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace control_flow {

LoopParts loopParts(const Node &n) {
  LoopParts p;
  p.captures = static_cast<int>(n.getInt("num_captures"));
  p.carried = std::max(0, n.numInputs() - 2 - p.captures);
  p.scanOutputs = n.numOutputs() - p.carried;
  return p;
}

ScanParts scanParts(const Node &n) {
  ScanParts p;
  p.scanInputs = static_cast<int>(n.getInt("num_scan_inputs"));
  p.captures = static_cast<int>(n.getInt("num_captures"));
  p.states = n.numInputs() - p.scanInputs - p.captures;
  p.scanOutputs = n.numOutputs() - p.states;
  return p;
}

std::vector<int64_t> intsOrZeros(const Node &n, const char *name, int count) {
  std::vector<int64_t> v = n.getInts(name);
  if (v.empty())
    v.assign(static_cast<size_t>(std::max(count, 0)), 0);
  return v;
}

} // namespace control_flow

namespace {

using namespace control_flow;

// --- Structure (OpDef::verify) ----------------------------------------------------------------

/// Body `name` has `inputs` inputs and `outputs` outputs; the reasons say what they are.
Status checkSignature(const Node &n, const char *name, size_t inputs, const std::string &inWhy,
                      size_t outputs, const std::string &outWhy) {
  const Attribute *a = n.findAttr(name);
  if (!a || a->kind() != AttrKind::kGraph)
    return invalidArgument("body '{}' is missing", name);
  const Graph &body = a->graph();
  if (body.inputs().size() != inputs)
    return invalidArgument("body '{}' has {} inputs, expected {} ({})", name, body.inputs().size(),
                           inputs, inWhy);
  if (body.outputs().size() != outputs)
    return invalidArgument("body '{}' has {} outputs, expected {} ({})", name,
                           body.outputs().size(), outputs, outWhy);
  return Status::ok();
}

/// Inputs from `first` on are present (captures, loop-carried and scanned values).
Status checkPresentFrom(const Node &n, int first) {
  for (int i = first; i < n.numInputs(); ++i)
    if (!n.hasInput(i))
      return invalidArgument("input {} must be present{}", i,
                             n.op() == Op::kLoop ? " (only M and cond are optional)" : "");
  return Status::ok();
}

Status checkCount(const Node &n, const char *attr, int64_t min) {
  int64_t v = n.getInt(attr);
  if (v < min)
    return invalidArgument("attribute '{}' must be >= {}, got {}", attr, min, v);
  return Status::ok();
}

Status verifyIf(const Node &n) {
  DLC_RETURN_IF_ERROR(checkPresentFrom(n, 1));
  size_t caps = static_cast<size_t>(n.numInputs() - 1);
  size_t outs = static_cast<size_t>(n.numOutputs());
  for (const char *name : {"then_branch", "else_branch"})
    DLC_RETURN_IF_ERROR(
        checkSignature(n, name, caps, "one per captured value", outs, "one per node output"));
  return Status::ok();
}

Status verifyLoop(const Node &n) {
  DLC_RETURN_IF_ERROR(checkCount(n, "num_captures", 0));
  LoopParts p = loopParts(n);
  if (p.captures > 0 && n.numInputs() < 2 + p.captures)
    return invalidArgument("has {} inputs, too few for M, cond and num_captures = {}",
                           n.numInputs(), p.captures);
  if (p.scanOutputs < 0)
    return invalidArgument("has {} outputs, fewer than its {} loop-carried values", n.numOutputs(),
                           p.carried);
  DLC_RETURN_IF_ERROR(checkPresentFrom(n, 2));
  return checkSignature(
      n, "body", static_cast<size_t>(2 + p.carried + p.captures),
      fmt::format("iteration number, condition, {} loop-carried, {} captured", p.carried,
                  p.captures),
      static_cast<size_t>(1 + p.carried + p.scanOutputs),
      fmt::format("condition, {} loop-carried, {} scan outputs", p.carried, p.scanOutputs));
}

Status checkListAttr(const Node &n, const char *name, int count, bool direction) {
  std::vector<int64_t> v = n.getInts(name);
  if (!n.hasAttr(name))
    return Status::ok();
  if (static_cast<int>(v.size()) != count)
    return invalidArgument("attribute '{}' has {} values, expected {}", name, v.size(), count);
  for (int64_t x : v)
    if (direction && x != 0 && x != 1)
      return invalidArgument("attribute '{}' must hold 0 (forward) or 1 (reverse), got {}", name,
                             x);
  return Status::ok();
}

Status verifyScan(const Node &n) {
  DLC_RETURN_IF_ERROR(checkCount(n, "num_scan_inputs", 1));
  DLC_RETURN_IF_ERROR(checkCount(n, "num_captures", 0));
  ScanParts p = scanParts(n);
  if (p.states < 0)
    return invalidArgument("has {} inputs, fewer than num_scan_inputs + num_captures = {}",
                           n.numInputs(), p.scanInputs + p.captures);
  if (p.scanOutputs < 0)
    return invalidArgument("has {} outputs, fewer than its {} state values", n.numOutputs(),
                           p.states);
  DLC_RETURN_IF_ERROR(checkPresentFrom(n, 0));
  DLC_RETURN_IF_ERROR(checkListAttr(n, "scan_input_directions", p.scanInputs, true));
  DLC_RETURN_IF_ERROR(checkListAttr(n, "scan_input_axes", p.scanInputs, false));
  DLC_RETURN_IF_ERROR(checkListAttr(n, "scan_output_directions", p.scanOutputs, true));
  DLC_RETURN_IF_ERROR(checkListAttr(n, "scan_output_axes", p.scanOutputs, false));
  return checkSignature(
      n, "body", static_cast<size_t>(p.states + p.scanInputs + p.captures),
      fmt::format("{} state, {} scanned, {} captured", p.states, p.scanInputs, p.captures),
      static_cast<size_t>(p.states + p.scanOutputs),
      fmt::format("{} state, {} scan outputs", p.states, p.scanOutputs));
}

// --- Inference --------------------------------------------------------------------------------

/// A body run: its name, its graph, and what its inputs are.
struct BodyRun {
  const char *name;
  const Graph &body;
  std::vector<TensorType> types;
  std::vector<const Tensor *> constants;
};

/// `given` completed by what the body declares for input i; an error if they contradict.
Status refineInput(const InferContext &ctx, BodyRun &run, size_t i, const TensorType &given) {
  const Value *in = run.body.inputs()[i];
  std::optional<TensorType> t = refineType(given, in->type());
  if (!t)
    return ctx.error("body '{}': input {} '{}' is declared {} but receives {}", run.name, i,
                     in->name(), in->type().str(), given.str());
  run.types[i] = std::move(*t);
  return Status::ok();
}

/// A value fed back to the body keeps its dtype; its shape may change between iterations.
TensorType carriedJoin(const TensorType &a, const TensorType &b) {
  TensorType t = joinTypes(a, b);
  t.dtype = a.isKnown() ? a.dtype : b.dtype;
  return t;
}

/// Infers the body of `run`, whose inputs [inFirst, inFirst + count) receive its outputs
/// [outFirst, outFirst + count) on the next iteration: those inputs widen (carriedJoin) until
/// they hold every iteration's type. Records the body's input types; returns its output types.
Expected<std::vector<TensorType>> inferIterated(InferContext &ctx, BodyRun &run, int inFirst,
                                                int outFirst, int count) {
  constexpr int kMaxRounds = 4;
  auto infer = [&]() -> Expected<std::vector<TensorType>> {
    auto outs = inferBodyOutputs(run.body, run.types, run.constants);
    if (!outs)
      return outs.status().withContext(fmt::format("body '{}'", run.name));
    return outs;
  };
  for (int round = 0; round <= kMaxRounds; ++round) {
    DLC_ASSIGN_OR_RETURN(std::vector<TensorType> outs, infer());
    bool settled = true;
    for (int k = 0; k < count; ++k) {
      size_t i = static_cast<size_t>(inFirst + k);
      const TensorType &in = run.types[i], &out = outs[static_cast<size_t>(outFirst + k)];
      if (in.isKnown() && out.isKnown() && in.dtype != out.dtype)
        return ctx.error("body '{}': value {} enters an iteration as {} but leaves it as {}",
                         run.name, k, in.str(), out.str());
      TensorType next = carriedJoin(in, out);
      if (round == kMaxRounds) // no fixed point: give up on the shape
        next.shape = Shape::unranked();
      TensorType before = in;
      DLC_RETURN_IF_ERROR(refineInput(ctx, run, i, next));
      settled = settled && run.types[i] == before;
    }
    if (settled) {
      ctx.setBodyInputTypes(run.name, run.types);
      return outs;
    }
  }
  DLC_ASSIGN_OR_RETURN(std::vector<TensorType> outs, infer());
  ctx.setBodyInputTypes(run.name, run.types);
  return outs;
}

/// The body run for `name` whose inputs from `firstCapture` on are the node's captured inputs
/// from `nodeFirst` on.
Expected<BodyRun> startRun(const InferContext &ctx, const char *name, int firstCapture,
                           int nodeFirst) {
  BodyRun run{name, bodyOf(ctx.node(), name), {}, {}};
  size_t n = run.body.inputs().size();
  run.types.resize(n);
  run.constants.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i)
    run.types[i] = run.body.inputs()[i]->type();
  for (int i = nodeFirst; i < ctx.numInputs(); ++i) {
    size_t b = static_cast<size_t>(firstCapture + i - nodeFirst);
    DLC_RETURN_IF_ERROR(refineInput(ctx, run, b, ctx.inputType(i)));
    run.constants[b] = ctx.inputConstant(i);
  }
  return run;
}

/// A one-element bool input (If's and Loop's cond).
Status checkCondition(const InferContext &ctx, int i, const char *what) {
  const TensorType &t = ctx.inputType(i);
  if (t.isKnown() && t.dtype != DType::kBool)
    return ctx.error("{} must be bool, got {}", what, t.str());
  std::optional<int64_t> n = t.shape.numElements();
  if (n && *n != 1)
    return ctx.error("{} must hold one element, got {}", what, t.str());
  return Status::ok();
}

/// A constant one-element input's truth, when known.
std::optional<bool> constantTruth(const InferContext &ctx, int i) {
  const Tensor *t = ctx.hasInput(i) ? ctx.inputConstant(i) : nullptr;
  if (!t || t->numElements() != 1)
    return std::nullopt;
  return t->elementAsInt64(0) != 0;
}

Status inferIf(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(checkCondition(ctx, 0, "input cond"));
  std::vector<std::vector<TensorType>> branches;
  for (const char *name : {"then_branch", "else_branch"}) {
    DLC_ASSIGN_OR_RETURN(BodyRun run, startRun(ctx, name, 0, 1));
    auto outs = inferBodyOutputs(run.body, run.types, run.constants);
    if (!outs)
      return outs.status().withContext(fmt::format("body '{}'", name));
    ctx.setBodyInputTypes(name, run.types);
    branches.push_back(std::move(*outs));
  }
  std::optional<bool> cond = constantTruth(ctx, 0);
  for (int i = 0; i < ctx.numOutputs(); ++i) {
    const TensorType &a = branches[0][static_cast<size_t>(i)];
    const TensorType &b = branches[1][static_cast<size_t>(i)];
    if (a.isKnown() && b.isKnown() && a.dtype != b.dtype)
      return ctx.error("output {}: then_branch gives {} but else_branch gives {}", i, a.str(),
                       b.str());
    if (cond)
      ctx.setOutputType(i, *cond ? a : b);
    else
      ctx.setOutputType(i, carriedJoin(a, b));
  }
  return Status::ok();
}

/// Follows Identity nodes back from `v`.
const Value *throughIdentities(const Value *v) {
  while (v && v->isNodeOutput() && v->producer()->op() == Op::kIdentity)
    v = v->producer()->input(0);
  return v;
}

/// How many iterations a Loop runs, when inference can tell: M is known, and the condition
/// stays true (absent or constant true on entry, and the body passes it through or returns a
/// constant true).
Dim loopTripCount(const InferContext &ctx, const Graph &body) {
  if (!ctx.hasInput(0))
    return Dim::unknown();
  std::optional<std::vector<Dim>> m = ctx.inputAsDims(0);
  if (!m || m->size() != 1)
    return Dim::unknown();
  if (ctx.hasInput(1) && constantTruth(ctx, 1) != std::optional<bool>(true))
    return Dim::unknown();
  const Value *cond = throughIdentities(body.outputs()[0].value);
  bool staysTrue =
      cond == body.inputs()[1] || (cond->isConstant() && cond->constant().numElements() == 1 &&
                                   cond->constant().elementAsInt64(0) != 0);
  if (!staysTrue)
    return Dim::unknown();
  std::optional<int64_t> count = shapeValueInt((*m)[0]);
  if (count)
    return Dim(std::max<int64_t>(*count, 0));
  return (*m)[0];
}

/// `per` (the type of one iteration's element) with `len` inserted at `axis` (which may be
/// negative, counted against the result's rank).
Expected<TensorType> stacked(const InferContext &ctx, const TensorType &per, const Dim &len,
                             int64_t axis, int k) {
  if (!per.shape.isRanked())
    return TensorType(per.dtype, Shape::unranked());
  auto a = normalizeAxis(axis, per.shape.rank() + 1);
  if (!a)
    return ctx.error("scan output {}: {}", k, a.status().message());
  std::vector<Dim> dims = per.shape.dims();
  dims.insert(dims.begin() + *a, len);
  return TensorType(per.dtype, Shape(std::move(dims)));
}

Status inferLoop(InferContext &ctx) {
  LoopParts p = loopParts(ctx.node());
  if (ctx.hasInput(0)) {
    const TensorType &m = ctx.inputType(0);
    if (m.isKnown() && m.dtype != DType::kI64)
      return ctx.error("input M must be i64, got {}", m.str());
  }
  if (ctx.hasInput(1))
    DLC_RETURN_IF_ERROR(checkCondition(ctx, 1, "input cond"));
  DLC_ASSIGN_OR_RETURN(BodyRun run, startRun(ctx, "body", 2 + p.carried, 2 + p.carried));
  DLC_RETURN_IF_ERROR(refineInput(ctx, run, 0, TensorType(DType::kI64, Shape())));
  DLC_RETURN_IF_ERROR(refineInput(ctx, run, 1, TensorType(DType::kBool, Shape())));
  std::vector<TensorType> initial;
  for (int k = 0; k < p.carried; ++k) {
    DLC_RETURN_IF_ERROR(refineInput(ctx, run, static_cast<size_t>(2 + k), ctx.inputType(2 + k)));
    initial.push_back(run.types[static_cast<size_t>(2 + k)]);
  }
  DLC_ASSIGN_OR_RETURN(std::vector<TensorType> outs, inferIterated(ctx, run, 2, 1, p.carried));
  if (outs[0].isKnown() && outs[0].dtype != DType::kBool)
    return ctx.error("body 'body': output 0 (the condition) must be bool, got {}", outs[0].str());
  for (int k = 0; k < p.carried; ++k)
    ctx.setOutputType(
        k, carriedJoin(initial[static_cast<size_t>(k)], outs[static_cast<size_t>(1 + k)]));
  Dim trips = loopTripCount(ctx, run.body);
  for (int k = 0; k < p.scanOutputs; ++k) {
    DLC_ASSIGN_OR_RETURN(TensorType t,
                         stacked(ctx, outs[static_cast<size_t>(1 + p.carried + k)], trips, 0, k));
    ctx.setOutputType(p.carried + k, std::move(t));
  }
  return Status::ok();
}

Status inferScan(InferContext &ctx) {
  ScanParts p = scanParts(ctx.node());
  std::vector<int64_t> inAxes = intsOrZeros(ctx.node(), "scan_input_axes", p.scanInputs);
  std::vector<int64_t> outAxes = intsOrZeros(ctx.node(), "scan_output_axes", p.scanOutputs);
  DLC_ASSIGN_OR_RETURN(BodyRun run,
                       startRun(ctx, "body", p.states + p.scanInputs, p.states + p.scanInputs));
  // Each scanned input gives the body one slice along its axis; all agree on the length.
  Dim len;
  for (int j = 0; j < p.scanInputs; ++j) {
    const TensorType &t = ctx.inputType(p.states + j);
    TensorType elem(t.dtype, Shape::unranked());
    if (t.shape.isRanked()) {
      auto a = normalizeAxis(inAxes[static_cast<size_t>(j)], t.shape.rank());
      if (!a)
        return ctx.error("scan input {}: {}", j, a.status().message());
      const Dim &d = t.shape[*a];
      if (d.isKnown() && len.isKnown() && d.value() != len.value())
        return ctx.error("scan inputs disagree on the sequence length: {} and {}", len.value(),
                         d.value());
      if (len.isUnknown() || (d.isKnown() && !len.isKnown()))
        len = d;
      std::vector<Dim> dims = t.shape.dims();
      dims.erase(dims.begin() + *a);
      elem.shape = Shape(std::move(dims));
    }
    DLC_RETURN_IF_ERROR(refineInput(ctx, run, static_cast<size_t>(p.states + j), elem));
  }
  std::vector<TensorType> initial;
  for (int k = 0; k < p.states; ++k) {
    DLC_RETURN_IF_ERROR(refineInput(ctx, run, static_cast<size_t>(k), ctx.inputType(k)));
    initial.push_back(run.types[static_cast<size_t>(k)]);
  }
  DLC_ASSIGN_OR_RETURN(std::vector<TensorType> outs, inferIterated(ctx, run, 0, 0, p.states));
  for (int k = 0; k < p.states; ++k)
    ctx.setOutputType(k,
                      carriedJoin(initial[static_cast<size_t>(k)], outs[static_cast<size_t>(k)]));
  for (int k = 0; k < p.scanOutputs; ++k) {
    DLC_ASSIGN_OR_RETURN(TensorType t, stacked(ctx, outs[static_cast<size_t>(p.states + k)], len,
                                               outAxes[static_cast<size_t>(k)], k));
    ctx.setOutputType(p.states + k, std::move(t));
  }
  return Status::ok();
}

} // namespace

std::vector<OpDef> controlFlowOps() {
  constexpr int kVar = -1;
  std::vector<OpDef> ops;
  ops.push_back({.op = Op::kIf,
                 .minInputs = 1,
                 .maxInputs = kVar,
                 .minOutputs = 1,
                 .maxOutputs = kVar,
                 .attrs = {requiredAttr("then_branch", AttrKind::kGraph),
                           requiredAttr("else_branch", AttrKind::kGraph)},
                 .infer = inferIf,
                 .verify = verifyIf});
  ops.push_back({.op = Op::kLoop,
                 .minInputs = 0,
                 .maxInputs = kVar,
                 .minOutputs = 1,
                 .maxOutputs = kVar,
                 .attrs = {requiredAttr("body", AttrKind::kGraph), intAttr("num_captures", 0)},
                 .infer = inferLoop,
                 .verify = verifyLoop});
  ops.push_back(
      {.op = Op::kScan,
       .minInputs = 1,
       .maxInputs = kVar,
       .minOutputs = 1,
       .maxOutputs = kVar,
       .attrs = {requiredAttr("body", AttrKind::kGraph),
                 requiredAttr("num_scan_inputs", AttrKind::kInt),
                 optionalAttr("scan_input_directions", AttrKind::kInts),
                 optionalAttr("scan_output_directions", AttrKind::kInts),
                 optionalAttr("scan_input_axes", AttrKind::kInts),
                 optionalAttr("scan_output_axes", AttrKind::kInts), intAttr("num_captures", 0)},
       .infer = inferScan,
       .verify = verifyScan});
  return ops;
}

} // namespace dlc::ops
