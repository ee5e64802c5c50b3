// Signal processing: BlackmanWindow, HammingWindow, HannWindow, DFT (opset-20 form: axis is
// an input), STFT, MelWeightMatrix. Output element types of the generators are
// `output_datatype` attributes (AttrKind::kDType).
#include "ir/ops/misc_parts.h"
#include "ir/ops/nn_util.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

/// A size given by a one-element input: its dim, checked positive when known.
Expected<Dim> positiveSizeInput(const InferContext &ctx, int i, std::string_view what) {
  Dim d = scalarInputAsDim(ctx, i);
  if (d.isKnown() && d.value() < 1)
    return invalidArgument("{} must be positive, got {}", what, d.value());
  return d;
}

/// *Window(size) -> [size].
Status inferWindow(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(expectRank(ctx, 0, 0, "input size"));
  DLC_ASSIGN_OR_RETURN(Dim size, positiveSizeInput(ctx, 0, "input size"));
  ctx.setOutputType(0, TensorType(ctx.node().getDType("output_datatype"), Shape({size})));
  return Status::ok();
}

/// MelWeightMatrix(num_mel_bins, dft_length, sample_rate, lower_edge_hertz,
/// upper_edge_hertz) -> [floor(dft_length / 2) + 1, num_mel_bins].
Status inferMelWeightMatrix(InferContext &ctx) {
  DLC_ASSIGN_OR_RETURN(Dim bins, positiveSizeInput(ctx, 0, "input num_mel_bins"));
  DLC_ASSIGN_OR_RETURN(Dim dft, positiveSizeInput(ctx, 1, "input dft_length"));
  Dim rows = dft.isKnown() ? Dim(dft.value() / 2 + 1) : Dim::unknown();
  ctx.setOutputType(0, TensorType(ctx.node().getDType("output_datatype"), Shape({rows, bins})));
  return Status::ok();
}

/// DFT(input [..., 1 or 2], dft_length?, axis?): the input's shape with the last dim 2, the
/// axis dim dft_length (halved + 1 when onesided).
Status inferDft(InferContext &ctx) {
  const Node &node = ctx.node();
  bool onesided = node.getInt("onesided") != 0;
  if (onesided && node.getInt("inverse") != 0)
    return ctx.error("onesided and inverse cannot both be set");
  DLC_RETURN_IF_ERROR(expectRank(ctx, 1, 0, "input dft_length"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 2, 0, "input axis"));
  DLC_RETURN_IF_ERROR(expectMinRank(ctx, 0, 2, "input"));
  const TensorType &x = ctx.inputType(0);
  if (!x.shape.isRanked()) {
    ctx.setOutputType(0, x);
    return Status::ok();
  }
  int64_t rank = x.shape.rank();
  std::vector<Dim> out = x.shape.dims();
  out.back() = Dim(2);
  std::optional<int64_t> axis = ctx.hasInput(2) ? constantScalarInt(ctx, 2) : -2;
  if (!axis) {
    // Unknown signal axis: only the complex dim is known once the axis length can change.
    if (onesided || ctx.hasInput(1))
      for (int64_t i = 0; i + 1 < rank; ++i)
        out[static_cast<size_t>(i)] = Dim::unknown();
    ctx.setOutputType(0, TensorType(x.dtype, Shape(std::move(out))));
    return Status::ok();
  }
  if (*axis < -rank || *axis == -1 || *axis >= rank - 1)
    return ctx.error("axis {} is invalid for rank {}; expected [-{}, -2] or [0, {}]", *axis, rank,
                     rank, rank - 2);
  Dim &d = out[static_cast<size_t>(*axis < 0 ? *axis + rank : *axis)];
  if (ctx.hasInput(1)) {
    DLC_ASSIGN_OR_RETURN(d, positiveSizeInput(ctx, 1, "input dft_length"));
  }
  if (onesided)
    d = d.isKnown() ? Dim(d.value() / 2 + 1) : Dim::unknown();
  ctx.setOutputType(0, TensorType(x.dtype, Shape(std::move(out))));
  return Status::ok();
}

/// STFT(signal [batch, length, 1 or 2], frame_step, window?, frame_length?)
///   -> [batch, frames, bins, 2], frames = (length - frame_length) / frame_step + 1,
///   bins = frame_length / 2 + 1 when onesided, else frame_length.
Status inferStft(InferContext &ctx) {
  DLC_RETURN_IF_ERROR(expectRank(ctx, 0, 3, "input signal"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 1, 0, "input frame_step"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 2, 1, "input window"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 3, 0, "input frame_length"));
  const TensorType &signal = ctx.inputType(0);
  DLC_ASSIGN_OR_RETURN(Dim step, positiveSizeInput(ctx, 1, "input frame_step"));
  Dim frameLength;
  if (ctx.hasInput(3)) {
    DLC_ASSIGN_OR_RETURN(frameLength, positiveSizeInput(ctx, 3, "input frame_length"));
  }
  if (ctx.hasInput(2) && ctx.inputType(2).shape.isRanked()) {
    const Dim &window = ctx.inputType(2).shape[0];
    if (!dimsCompatible(window, frameLength))
      return ctx.error("window has {} elements but frame_length is {}", window.str(),
                       frameLength.str());
    frameLength = unifyDims(frameLength, window);
  }
  Dim batch, length;
  if (signal.shape.isRanked()) {
    batch = signal.shape[0];
    length = signal.shape[1];
  }
  Dim frames;
  if (length.isKnown() && frameLength.isKnown()) {
    if (frameLength.value() > length.value())
      return ctx.error("frame_length {} exceeds the signal length {}", frameLength.value(),
                       length.value());
    if (step.isKnown())
      frames = Dim((length.value() - frameLength.value()) / step.value() + 1);
  }
  Dim bins = frameLength;
  if (ctx.node().getInt("onesided") != 0)
    bins = frameLength.isKnown() ? Dim(frameLength.value() / 2 + 1) : Dim::unknown();
  ctx.setOutputType(0, TensorType(signal.dtype, Shape({batch, frames, bins, Dim(2)})));
  return Status::ok();
}

} // namespace

std::vector<OpDef> signalOps() {
  std::vector<AttrSpec> windowAttrs{dtypeAttr("output_datatype", DType::kF32),
                                    intAttr("periodic", 1)};
  return {
      {.op = Op::kBlackmanWindow, .attrs = windowAttrs, .infer = inferWindow},
      {.op = Op::kHammingWindow, .attrs = windowAttrs, .infer = inferWindow},
      {.op = Op::kHannWindow, .attrs = windowAttrs, .infer = inferWindow},
      // (input, dft_length?, axis?)
      {.op = Op::kDFT,
       .maxInputs = 3,
       .attrs = {intAttr("inverse", 0), intAttr("onesided", 0)},
       .infer = inferDft},
      // (signal, frame_step, window?, frame_length?)
      {.op = Op::kSTFT,
       .minInputs = 2,
       .maxInputs = 4,
       .attrs = {intAttr("onesided", 1)},
       .infer = inferStft},
      // (num_mel_bins, dft_length, sample_rate, lower_edge_hertz, upper_edge_hertz)
      {.op = Op::kMelWeightMatrix,
       .minInputs = 5,
       .maxInputs = 5,
       .attrs = {dtypeAttr("output_datatype", DType::kF32)},
       .infer = inferMelWeightMatrix},
  };
}

} // namespace dlc::ops
