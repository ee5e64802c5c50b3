#include "frontend/onnx/normalize.h"

#include <unordered_map>

#include "frontend/onnx/attributes.h"
#include "frontend/onnx/normalize_rules.h"
#include "frontend/onnx/tensor_proto.h"

namespace dlc::onnx::detail {

namespace {

// Attribute `name` (ints) becomes i64 input `slot` when the model's opset is below `before`.
Status intsToInput(Rewriter &r, const char *name, int slot, int64_t before) {
  if (r.opset >= before)
    return Status::ok();
  DLC_ASSIGN_OR_RETURN(auto v, r.takeInts(name));
  if (!v)
    return Status::ok();
  return r.setInputSlot(slot, r.constant(name, Tensor::vectorI64(*v)), name);
}

Status reshape(Rewriter &r) { return intsToInput(r, "shape", 1, 5); }
Status squeeze(Rewriter &r) { return intsToInput(r, "axes", 1, 13); }
Status reduceSum(Rewriter &r) { return intsToInput(r, "axes", 1, 13); }
Status reduce(Rewriter &r) { return intsToInput(r, "axes", 1, 18); }
Status split(Rewriter &r) { return intsToInput(r, "split", 1, 13); }

Status slice(Rewriter &r) {
  if (r.opset >= 10)
    return Status::ok();
  for (const auto &[name, slot] : {std::pair{"starts", 1}, {"ends", 2}}) {
    DLC_ASSIGN_OR_RETURN(auto v, r.takeInts(name));
    if (!v)
      return r.error("missing required attribute '{}'", name);
    DLC_RETURN_IF_ERROR(r.setInputSlot(slot, r.constant(name, Tensor::vectorI64(*v)), name));
  }
  return intsToInput(r, "axes", 3, 10);
}

Status topK(Rewriter &r) {
  if (r.opset >= 10)
    return Status::ok();
  DLC_ASSIGN_OR_RETURN(auto k, r.takeInt("k"));
  if (!k)
    return r.error("missing required attribute 'k'");
  return r.setInputSlot(1, r.constant("k", Tensor::vectorI64({*k})), "k");
}

Status clip(Rewriter &r) {
  if (r.opset >= 11)
    return Status::ok();
  for (const auto &[name, slot] : {std::pair{"min", 1}, {"max", 2}}) {
    DLC_ASSIGN_OR_RETURN(auto v, r.takeFloat(name));
    if (v)
      DLC_RETURN_IF_ERROR(r.setInputSlot(slot, r.scalarLike(name, *v, r.node->input(0)), name));
  }
  return Status::ok();
}

Status pad(Rewriter &r) {
  if (r.opset >= 11)
    return Status::ok();
  DLC_ASSIGN_OR_RETURN(auto pads, r.takeInts("pads"));
  DLC_ASSIGN_OR_RETURN(auto paddings, r.takeInts("paddings")); // Pad-1's name for it
  if (!pads)
    pads = paddings;
  if (!pads)
    return r.error("missing required attribute 'pads'");
  DLC_RETURN_IF_ERROR(r.setInputSlot(1, r.constant("pads", Tensor::vectorI64(*pads)), "pads"));
  DLC_ASSIGN_OR_RETURN(auto value, r.takeFloat("value"));
  if (value)
    DLC_RETURN_IF_ERROR(
        r.setInputSlot(2, r.scalarLike("value", *value, r.node->input(0)), "value"));
  return Status::ok();
}

Status dropout(Rewriter &r) {
  if (r.opset >= 12)
    return Status::ok();
  DLC_ASSIGN_OR_RETURN(auto ratio, r.takeFloat("ratio"));
  if (!ratio)
    return Status::ok();
  return r.setInputSlot(1, r.constant("ratio", Tensor::scalarF32(*ratio)), "ratio");
}

Status batchNorm(Rewriter &r) {
  DLC_ASSIGN_OR_RETURN(auto spatial, r.takeInt("spatial"));
  if (spatial && *spatial == 0)
    return unimplemented("{}: spatial=0 (per-activation statistics) is not supported", r.desc);
  return Status::ok();
}

Status dft(Rewriter &r) {
  if (r.opset >= 20)
    return Status::ok();
  DLC_ASSIGN_OR_RETURN(auto axis, r.takeInt("axis"));
  // Always explicit: DFT-17's default (1) differs from the canonical input's default (-2).
  return r.setInputSlot(2, r.constant("axis", Tensor::scalarI64(axis.value_or(1))), "axis");
}

// GridSample-16 named its modes bilinear/bicubic; opset 20 renamed them linear/cubic.
Status gridSample(Rewriter &r) {
  auto it = r.attrs.find("mode");
  if (r.opset >= 20 || it == r.attrs.end() || it->second.kind() != AttrKind::kString)
    return Status::ok();
  if (it->second.s() == "bilinear")
    it->second = Attribute("linear");
  else if (it->second.s() == "bicubic")
    it->second = Attribute("cubic");
  return Status::ok();
}

// LpPool-1 / GlobalLpPool-1 gave `p` as a float; later opsets as an int.
Status lpPool(Rewriter &r) {
  auto it = r.attrs.find("p");
  if (r.opset < 2 && it != r.attrs.end() && it->second.kind() == AttrKind::kFloat)
    it->second = Attribute(static_cast<int64_t>(it->second.f()));
  return Status::ok();
}

// RNN-1, GRU-1, LSTM-1: `output_sequence` only said whether Y is produced; the output list
// says that already.
Status recurrent(Rewriter &r) { return r.takeInt("output_sequence").takeStatus(); }

Status gemm(Rewriter &r) { return r.takeInt("broadcast").takeStatus(); }

Status concat(Rewriter &r) {
  if (r.opset < 4 && !r.attrs.count("axis"))
    r.attrs["axis"] = Attribute(int64_t{1}); // Concat-1's default
  return Status::ok();
}

// An element type given as an ONNX TensorProto::DataType int (or, for Cast-1, its name).
Status dtypeAttr(Rewriter &r, const char *name) {
  auto it = r.attrs.find(name);
  if (it == r.attrs.end())
    return Status::ok();
  std::string what = fmt::format("{}: attribute '{}'", r.desc, name);
  int64_t code;
  if (it->second.kind() == AttrKind::kInt) {
    code = it->second.i();
  } else if (it->second.kind() == AttrKind::kString) {
    ::onnx::TensorProto::DataType parsed;
    if (!::onnx::TensorProto::DataType_Parse(it->second.s(), &parsed))
      return invalidArgument("{}: unknown data type '{}'", what, it->second.s());
    code = parsed;
  } else {
    return attrKindError(r.desc, name, "int", it->second.kind());
  }
  DLC_ASSIGN_OR_RETURN(DType dt, dtypeFromOnnx(code, what));
  it->second = Attribute(dt);
  return Status::ok();
}

Status cast(Rewriter &r) { return dtypeAttr(r, "to"); }
Status dtypeOnly(Rewriter &r) { return dtypeAttr(r, "dtype"); }

// Attention is an ai.onnx op from opset 23 (com.microsoft's Attention, a different op, is in
// its own domain). dlc runs its Y from Q, K, V and attn_mask; a KV cache is not supported.
Status attention(Rewriter &r) {
  if (r.opset < 23)
    return unimplemented("{}: Attention is an ai.onnx op from opset 23; the model imports opset {}",
                         r.desc, r.opset);
  for (int i = 4; i < r.node->numInputs(); ++i)
    if (r.node->hasInput(i))
      return unimplemented("{}: Attention's input {} ({}) is not supported: no KV cache", r.desc, i,
                           i == 4   ? "past_key"
                           : i == 5 ? "past_value"
                                    : "nonpad_kv_seqlen");
  for (int i = 1; i < r.node->numOutputs(); ++i)
    if (r.node->output(i))
      return unimplemented("{}: only Attention's output Y is supported, not present_key, "
                           "present_value or qk_matmul_output",
                           r.desc);
  return Status::ok();
}

using Rule = Status (*)(Rewriter &);

const std::unordered_map<std::string_view, Rule> &rules() {
  static const std::unordered_map<std::string_view, Rule> table = {
      {"Reshape", reshape},
      {"Attention", attention},
      {"Squeeze", squeeze},
      {"Unsqueeze", squeeze},
      {"ReduceSum", reduceSum},
      {"ReduceL1", reduce},
      {"ReduceL2", reduce},
      {"ReduceLogSum", reduce},
      {"ReduceLogSumExp", reduce},
      {"ReduceMax", reduce},
      {"ReduceMean", reduce},
      {"ReduceMin", reduce},
      {"ReduceProd", reduce},
      {"ReduceSumSquare", reduce},
      {"Split", split},
      {"Slice", slice},
      {"TopK", topK},
      {"Clip", clip},
      {"Pad", pad},
      {"Dropout", dropout},
      {"BatchNormalization", batchNorm},
      {"Gemm", gemm},
      {"DFT", dft},
      {"GridSample", gridSample},
      {"LpPool", lpPool},
      {"GlobalLpPool", lpPool},
      {"RNN", recurrent},
      {"GRU", recurrent},
      {"LSTM", recurrent},
      {"Concat", concat},
      {"Cast", cast},
      {"EyeLike", dtypeOnly},
      {"RandomNormal", dtypeOnly},
      {"RandomNormalLike", dtypeOnly},
      {"RandomUniform", dtypeOnly},
      {"RandomUniformLike", dtypeOnly},
      {"Bernoulli", dtypeOnly},
      {"Multinomial", dtypeOnly},
      {"Upsample", upsampleToResize},
      {"Resize", resize},
      {"Softmax", softmaxFamily},
      {"LogSoftmax", softmaxFamily},
      {"Hardmax", softmaxFamily},
      {"GroupNormalization", groupNorm},
      {"Add", legacyBroadcast},
      {"Sub", legacyBroadcast},
      {"Mul", legacyBroadcast},
      {"Div", legacyBroadcast},
      {"Pow", legacyBroadcast},
      {"And", legacyBroadcast},
      {"Or", legacyBroadcast},
      {"Xor", legacyBroadcast},
      {"Equal", legacyBroadcast},
      {"Greater", legacyBroadcast},
      {"Less", legacyBroadcast},
      {"Scan", scan8},
  };
  return table;
}

} // namespace

std::optional<Op> canonicalOp(std::string_view onnxType) {
  if (onnxType == "Upsample")
    return Op::kResize;
  if (onnxType == "Scatter")
    return Op::kScatterElements;
  // dlc's own ops (ir/ops.def) have no ONNX op type, only a display name.
  if (onnxType == "Copy" || onnxType == "FakeQuant")
    return std::nullopt;
  return opFromOnnx(onnxType);
}

Status normalizeNode(ImportContext &ctx, Node *node, std::string_view onnxType, AttrMap &attrs,
                     const std::string &desc) {
  // ONNX-deprecated hints that never changed results.
  attrs.erase("consumed_inputs");
  attrs.erase("is_test");
  Rewriter r(ctx, node, attrs, desc);
  auto it = rules().find(onnxType);
  return it == rules().end() ? Status::ok() : it->second(r);
}

} // namespace dlc::onnx::detail
