// The optimizers of ONNX's ai.onnx.preview.training domain: Adagrad, Adam and Momentum. Each
// takes the learning rate R and step count T (scalars), then n tensors to optimize and, per
// tensor, its gradient and the optimizer's state, grouped by kind:
//   Adagrad(R, T, X[n], G[n], H[n])       -> (X_new[n], H_new[n])
//   Adam(R, T, X[n], G[n], V[n], H[n])    -> (X_new[n], V_new[n], H_new[n])
//   Momentum(R, T, X[n], G[n], V[n])      -> (X_new[n], V_new[n])
// Every new tensor has the type of the tensor it replaces.
#include "ir/ops/infer_checks.h"
#include "ir/ops/misc_parts.h"
#include "ir/ops/nn_util.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

/// `groups` kinds of per-tensor input after R and T (X, G and the states); outputs are X and
/// the states, so group g's output k (g = 0 for X, g >= 2 for the states) copies input g.
template <int Groups> Status inferOptimizer(InferContext &ctx) {
  const int n = (ctx.numInputs() - 2) / Groups;
  if (ctx.numInputs() < 2 + Groups || (ctx.numInputs() - 2) % Groups != 0)
    return ctx.error("takes R, T and {} groups of equally many tensors, got {} inputs", Groups,
                     ctx.numInputs());
  if (ctx.numOutputs() != (Groups - 1) * n)
    return ctx.error("has {} outputs for {} tensors, expected {}", ctx.numOutputs(), n,
                     (Groups - 1) * n);
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 0, TypeClass::kFloat));
  DLC_RETURN_IF_ERROR(checkInputDType(ctx, 1, TypeClass::kInteger));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 0, 0, "input R"));
  DLC_RETURN_IF_ERROR(expectRank(ctx, 1, 0, "input T"));
  for (int i = 0; i < n; ++i) {
    const TensorType &x = ctx.inputType(2 + i);
    for (int g = 1; g < Groups; ++g) {
      const TensorType &t = ctx.inputType(2 + g * n + i);
      if (x.dtype != DType::kUnknown && t.dtype != DType::kUnknown && t.dtype != x.dtype)
        return ctx.error("input {} is {}, but the tensor it belongs to (input {}) is {}",
                         2 + g * n + i, dtypeName(t.dtype), 2 + i, dtypeName(x.dtype));
    }
    DLC_RETURN_IF_ERROR(checkInputDType(ctx, 2 + i, TypeClass::kFloat));
    ctx.setOutputType(i, x);
    for (int g = 2; g < Groups; ++g)
      ctx.setOutputType((g - 1) * n + i, ctx.inputType(2 + g * n + i));
  }
  return Status::ok();
}

} // namespace

std::vector<OpDef> trainingOps() {
  return {
      {.op = Op::kAdagrad,
       .minInputs = 5,
       .maxInputs = -1,
       .minOutputs = 2,
       .maxOutputs = -1,
       .attrs = {floatAttr("decay_factor", 0.0f), floatAttr("epsilon", 1e-6f),
                 floatAttr("norm_coefficient", 0.0f)},
       .infer = inferOptimizer<3>},
      {.op = Op::kAdam,
       .minInputs = 6,
       .maxInputs = -1,
       .minOutputs = 3,
       .maxOutputs = -1,
       .attrs = {floatAttr("alpha", 0.9f), floatAttr("beta", 0.999f), floatAttr("epsilon", 1e-6f),
                 floatAttr("norm_coefficient", 0.0f), floatAttr("norm_coefficient_post", 0.0f)},
       .infer = inferOptimizer<4>},
      {.op = Op::kMomentum,
       .minInputs = 5,
       .maxInputs = -1,
       .minOutputs = 2,
       .maxOutputs = -1,
       .attrs = {requiredAttr("alpha", AttrKind::kFloat), requiredAttr("beta", AttrKind::kFloat),
                 requiredAttr("mode", AttrKind::kString),
                 requiredAttr("norm_coefficient", AttrKind::kFloat)},
       .infer = inferOptimizer<3>},
  };
}

} // namespace dlc::ops
