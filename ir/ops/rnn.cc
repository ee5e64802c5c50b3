// Recurrent layers: RNN, GRU, LSTM.
//
// Outputs (all optional): Y [seq, dirs, batch, hidden] (layout 0) or [batch, seq, dirs,
// hidden] (layout 1); Y_h and (LSTM) Y_c [dirs, batch, hidden] or [batch, dirs, hidden].
// hidden_size comes from the attribute, else from R [dirs, gates * hidden, hidden].
#include "ir/ops/misc_parts.h"
#include "ir/ops/nn_util.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

Expected<int64_t> numDirections(const std::string &direction) {
  if (direction == "forward" || direction == "reverse")
    return 1;
  if (direction == "bidirectional")
    return 2;
  return invalidArgument("invalid direction '{}'; expected forward, reverse or bidirectional",
                         direction);
}

/// Shared by the three ops; `gates` is 1 (RNN), 3 (GRU) or 4 (LSTM).
Status inferRecurrent(InferContext &ctx, int64_t gates) {
  const Node &node = ctx.node();
  const std::string &direction = node.getString("direction");
  DLC_ASSIGN_OR_RETURN(int64_t dirs, numDirections(direction));
  int64_t layout = node.getInt("layout");
  if (layout != 0 && layout != 1)
    return ctx.error("attribute 'layout' must be 0 or 1, got {}", layout);
  DLC_RETURN_IF_ERROR(expectRank(ctx, 0, 3, "input X"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 1, 3, "input W"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 2, 3, "input R"));

  const TensorType &x = ctx.inputType(0);
  const Shape &w = ctx.inputType(1).shape, &r = ctx.inputType(2).shape;
  Dim seq, batch;
  if (x.shape.isRanked()) {
    seq = x.shape[layout == 0 ? 0 : 1];
    batch = x.shape[layout == 0 ? 1 : 0];
  }
  Dim hidden;
  if (node.hasAttr("hidden_size")) {
    int64_t h = node.getInt("hidden_size");
    if (h < 1)
      return ctx.error("attribute 'hidden_size' must be positive, got {}", h);
    hidden = Dim(h);
  }
  if (r.isRanked()) {
    if (!dimsCompatible(hidden, r[2]))
      return ctx.error("hidden_size is {} but R has {} columns", hidden.str(), r[2].str());
    hidden = unifyDims(hidden, r[2]);
  }
  if (w.isRanked() && w[1].isKnown()) {
    if (hidden.isKnown() && w[1].value() != gates * hidden.value())
      return ctx.error("W has {} rows, expected {} * hidden_size ({})", w[1].value(), gates,
                       hidden.value());
    if (!hidden.isKnown() && w[1].value() % gates == 0)
      hidden = Dim(w[1].value() / gates);
  }
  for (const Shape *s : {&w, &r})
    if (s->isRanked() && (*s)[0].isKnown() && (*s)[0].value() != dirs)
      return ctx.error("direction '{}' needs {} directions in W and R, got {}", direction, dirs,
                       (*s)[0].value());

  Dim d(dirs);
  ctx.setOutputType(0, TensorType(x.dtype, layout == 0 ? Shape({seq, d, batch, hidden})
                                                       : Shape({batch, seq, d, hidden})));
  Shape state = layout == 0 ? Shape({d, batch, hidden}) : Shape({batch, d, hidden});
  for (int i = 1; i < ctx.numOutputs(); ++i)
    ctx.setOutputType(i, TensorType(x.dtype, state));
  return Status::ok();
}

Status inferRnn(InferContext &ctx) { return inferRecurrent(ctx, 1); }
Status inferGru(InferContext &ctx) { return inferRecurrent(ctx, 3); }
Status inferLstm(InferContext &ctx) { return inferRecurrent(ctx, 4); }

/// Attributes of all three ops; `activations` differs (RNN alone has a default).
std::vector<AttrSpec> recurrentAttrs(AttrSpec activations) {
  return {optionalAttr("activation_alpha", AttrKind::kFloats),
          optionalAttr("activation_beta", AttrKind::kFloats),
          std::move(activations),
          optionalAttr("clip", AttrKind::kFloat),
          stringAttr("direction", "forward"),
          optionalAttr("hidden_size", AttrKind::kInt),
          intAttr("layout", 0)};
}

} // namespace

std::vector<OpDef> rnnOps() {
  std::vector<AttrSpec> gru = recurrentAttrs(optionalAttr("activations", AttrKind::kStrings));
  gru.push_back(intAttr("linear_before_reset", 0));
  std::vector<AttrSpec> lstm = recurrentAttrs(optionalAttr("activations", AttrKind::kStrings));
  lstm.push_back(intAttr("input_forget", 0));
  return {
      // (X, W, R, B?, sequence_lens?, initial_h?) -> (Y?, Y_h?)
      {.op = Op::kRNN,
       .minInputs = 3,
       .maxInputs = 6,
       .minOutputs = 0,
       .maxOutputs = 2,
       .attrs = recurrentAttrs(stringsAttr("activations", {"Tanh", "Tanh"})),
       .infer = inferRnn},
      {.op = Op::kGRU,
       .minInputs = 3,
       .maxInputs = 6,
       .minOutputs = 0,
       .maxOutputs = 2,
       .attrs = std::move(gru),
       .infer = inferGru},
      // (X, W, R, B?, sequence_lens?, initial_h?, initial_c?, P?) -> (Y?, Y_h?, Y_c?)
      {.op = Op::kLSTM,
       .minInputs = 3,
       .maxInputs = 8,
       .minOutputs = 0,
       .maxOutputs = 3,
       .attrs = std::move(lstm),
       .infer = inferLstm},
  };
}

} // namespace dlc::ops
