#include "frontend/onnx/normalize_rules.h"

#include <cstring>

namespace dlc::onnx::detail {

namespace {

// Resize as Upsample and Resize-10 behave: asymmetric coordinates, nearest rounds down.
void setLegacyResize(Rewriter &r, Value *x, Value *scales, std::string mode) {
  r.node->truncateInputs(0);
  r.node->appendInput(x);
  r.node->appendInput(nullptr); // roi
  r.node->appendInput(scales);
  r.attrs["mode"] = Attribute(mode == "bilinear" ? std::string("linear") : std::move(mode));
  r.attrs["coordinate_transformation_mode"] = Attribute("asymmetric");
  r.attrs["nearest_mode"] = Attribute("floor");
}

Tensor f32Vector(const std::vector<float> &v) {
  return Tensor::fromVector<float>(DType::kF32, {static_cast<int64_t>(v.size())}, v);
}

// Repeats each of the G elements of `t` C/G times: per-group values -> per-channel values.
Tensor expandPerGroup(const Tensor &t, int64_t channels, int64_t groups) {
  Tensor out = Tensor::zeros(t.dtype(), {channels});
  int64_t es = dtypeSize(t.dtype());
  const auto *src = static_cast<const uint8_t *>(t.raw());
  auto *dst = static_cast<uint8_t *>(out.mutableRaw());
  for (int64_t c = 0; c < channels; ++c)
    std::memcpy(dst + c * es, src + (c / (channels / groups)) * es, static_cast<size_t>(es));
  return out;
}

} // namespace

Status upsampleToResize(Rewriter &r) {
  DLC_ASSIGN_OR_RETURN(auto mode, r.takeString("mode"));
  Value *x = r.node->input(0);
  Value *scales = nullptr;
  if (r.opset < 7) {
    DLC_ASSIGN_OR_RETURN(auto h, r.takeFloat("height_scale"));
    DLC_ASSIGN_OR_RETURN(auto w, r.takeFloat("width_scale"));
    if (!h || !w)
      return r.error("missing required attribute '{}'", h ? "width_scale" : "height_scale");
    scales = r.constant("scales", f32Vector({1.0f, 1.0f, *h, *w}));
  } else if (r.opset < 9) {
    DLC_ASSIGN_OR_RETURN(auto s, r.takeFloats("scales"));
    if (!s)
      return r.error("missing required attribute 'scales'");
    scales = r.constant("scales", f32Vector(*s));
  } else {
    scales = r.node->input(1);
  }
  setLegacyResize(r, x, scales, mode.value_or("nearest"));
  return Status::ok();
}

Status resize(Rewriter &r) {
  if (r.opset >= 11)
    return Status::ok();
  DLC_ASSIGN_OR_RETURN(auto mode, r.takeString("mode"));
  setLegacyResize(r, r.node->input(0), r.node->input(1), mode.value_or("nearest"));
  return Status::ok();
}

Status softmaxFamily(Rewriter &r) {
  if (r.opset >= 13)
    return Status::ok();
  DLC_ASSIGN_OR_RETURN(auto axisAttr, r.takeInt("axis"));
  int64_t axis = axisAttr.value_or(1); // the old default
  Value *x = r.node->input(0);
  Value *y = r.node->output(0);
  const Shape *shape = x ? &x->shape() : nullptr;
  if (shape && shape->isRanked()) {
    auto a = normalizeAxis(axis, shape->rank());
    if (!a)
      return r.error("{}", a.status().message());
    if (*a == shape->rank() - 1) { // the 2-D coercion changes nothing
      r.attrs["axis"] = Attribute(*a);
      return Status::ok();
    }
  }
  if (!x || !y) { // malformed or dead; arity is checked later
    r.attrs["axis"] = Attribute(axis);
    return Status::ok();
  }
  // x -> flatten(axis) -> op(axis=1) -> reshape(shape(x)); the reshape takes over y's name.
  Node *flat = r.createBefore(Op::kFlatten, {x}, "flatten");
  flat->setAttr("axis", Attribute(axis));
  r.node->setInput(0, flat->output(0));
  r.attrs["axis"] = Attribute(int64_t{1});
  Node *shapeOf = r.createBefore(Op::kShape, {x}, "shape");
  std::string reshapeName = r.node->name().empty() ? "" : r.node->name() + "/reshape";
  Node *reshape = r.graph.createNode(Op::kReshape, {}, 1, reshapeName);
  Value *out = reshape->output(0);
  r.graph.replaceAllUsesWith(y, out);
  reshape->appendInput(y);
  reshape->appendInput(shapeOf->output(0));
  reshape->setAttr("allowzero", Attribute(int64_t{1})); // shape(x) may hold real zeros
  std::string name = y->name();
  r.graph.renameValue(y, r.graph.uniqueName(name + "_2d"));
  r.graph.renameValue(out, name);
  out->setType(y->type());
  y->setType(TensorType());
  return Status::ok();
}

Status groupNorm(Rewriter &r) {
  if (r.opset >= 21)
    return Status::ok();
  Value *x = r.node->input(0), *scale = r.node->input(1), *bias = r.node->input(2);
  const Attribute *g = r.attrs.count("num_groups") ? &r.attrs.at("num_groups") : nullptr;
  bool ok = x && scale && bias && scale->isConstant() && bias->isConstant() && g &&
            g->kind() == AttrKind::kInt && g->i() > 0 && x->shape().isRanked() &&
            x->shape().rank() >= 2 && x->shape()[1].isKnown();
  if (ok) {
    int64_t channels = x->shape()[1].value(), groups = g->i();
    ok = channels % groups == 0 && scale->constant().numElements() == groups &&
         bias->constant().numElements() == groups;
    if (ok) {
      r.node->setInput(1, r.constant("scale", expandPerGroup(scale->constant(), channels, groups)));
      r.node->setInput(2, r.constant("bias", expandPerGroup(bias->constant(), channels, groups)));
    }
  }
  if (!ok)
    return unimplemented("{}: opset-{} GroupNormalization needs a constant per-group scale and "
                         "bias and a known channel count",
                         r.desc, r.opset);
  return Status::ok();
}

Status legacyBroadcast(Rewriter &r) {
  if (r.opset >= 7)
    return Status::ok();
  DLC_ASSIGN_OR_RETURN(auto broadcast, r.takeInt("broadcast"));
  DLC_ASSIGN_OR_RETURN(auto axis, r.takeInt("axis"));
  if (!broadcast || *broadcast == 0 || !axis)
    return Status::ok(); // same shapes, or B matched against A's trailing dims (numpy-like)
  Value *a = r.node->input(0), *b = r.node->input(1);
  if (!a || !b || !a->shape().isRanked() || !b->shape().isRanked())
    return unimplemented("{}: legacy broadcasting with 'axis' needs the ranks of both inputs",
                         r.desc);
  int64_t ra = a->shape().rank(), rb = b->shape().rank();
  int64_t ax = *axis < 0 ? *axis + ra : *axis;
  if (ax < 0 || ax + rb > ra)
    return r.error("legacy broadcast axis {} does not fit inputs of rank {} and {}", *axis, ra, rb);
  if (ax + rb == ra)
    return Status::ok();
  std::vector<int64_t> axes;
  for (int64_t k = rb; k < ra - ax; ++k)
    axes.push_back(k);
  Node *u =
      r.createBefore(Op::kUnsqueeze, {b, r.constant("axes", Tensor::vectorI64(axes))}, "unsqueeze");
  r.node->setInput(1, u->output(0));
  return Status::ok();
}

// Scan-8 scans axis 1 of inputs shaped [batch, sequence, ...], each batch element on its own.
// That is a Scan over the batch (every input scanned along axis 0, no state) whose body runs
// the canonical Scan on one batch element; both scan outputs and final states come back
// stacked along the batch axis. A present sequence_lens (per-batch lengths) is not supported.
Status scan8(Rewriter &r) {
  if (r.opset >= 9)
    return Status::ok();
  if (r.node->hasInput(0))
    return unimplemented("{}: Scan-8's sequence_lens input is not supported", r.desc);
  DLC_ASSIGN_OR_RETURN(auto directions, r.takeInts("directions"));
  auto bodyIt = r.attrs.find("body");
  auto countIt = r.attrs.find("num_scan_inputs");
  if (bodyIt == r.attrs.end() || bodyIt->second.kind() != AttrKind::kGraph ||
      countIt == r.attrs.end() || countIt->second.kind() != AttrKind::kInt)
    return r.error("Scan needs a graph attribute 'body' and an int attribute 'num_scan_inputs'");
  auto capIt = r.attrs.find("num_captures");
  int64_t captures = capIt == r.attrs.end() ? 0 : capIt->second.i();
  std::vector<Value *> inputs(r.node->inputs().begin() + 1, r.node->inputs().end());
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i])
      return r.error("input {} is absent; only sequence_lens may be", i + 1);
  int64_t scanned = static_cast<int64_t>(inputs.size()) - captures; // states and scan inputs
  if (scanned < countIt->second.i())
    return r.error("has {} inputs after sequence_lens, fewer than num_scan_inputs = {}", scanned,
                   countIt->second.i());

  // The body of the batch scan: (state_b..., input_b..., captures...) -> inner Scan's results.
  auto outer = std::make_unique<Graph>(r.base() + "_batch");
  std::vector<Value *> innerIns;
  for (size_t i = 0; i < inputs.size(); ++i) {
    bool capture = static_cast<int64_t>(i) >= scanned;
    innerIns.push_back(
        outer->addInput(inputs[i]->name(), capture ? inputs[i]->type() : TensorType()));
  }
  Node *inner = outer->createNode(Op::kScan, innerIns, r.node->numOutputs(), r.base());
  inner->setName(r.node->name());
  inner->setAttr("body", std::move(bodyIt->second));
  inner->setAttr("num_scan_inputs", countIt->second);
  if (captures)
    inner->setAttr("num_captures", Attribute(captures));
  if (directions)
    inner->setAttr("scan_input_directions", Attribute(*directions));
  for (int k = 0; k < inner->numOutputs(); ++k) {
    Value *out = r.node->output(k);
    if (!out)
      return r.error("output {} is absent; Scan-8 needs every output", k);
    outer->renameValue(inner->output(k), out->name());
    outer->addOutput(out->name(), inner->output(k));
  }

  r.node->truncateInputs(0);
  for (Value *v : inputs)
    r.node->appendInput(v);
  r.attrs["body"] = Attribute(std::move(outer));
  r.attrs["num_scan_inputs"] = Attribute(scanned);
  return Status::ok();
}

} // namespace dlc::onnx::detail
