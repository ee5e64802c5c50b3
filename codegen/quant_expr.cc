#include "codegen/quant_expr.h"

#include <fmt/format.h>

#include "codegen/elementwise_expr.h"
#include "ir/quant_layout.h"

namespace dlc::codegen {
namespace {

bool smallInt(DType t) {
  return t == DType::kI8 || t == DType::kU8 || t == DType::kI16 || t == DType::kU16;
}
bool byteInt(DType t) { return t == DType::kI8 || t == DType::kU8; }
bool floatScale(DType t) {
  return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16 || t == DType::kF64;
}

/// Why the dtypes of Q `n` have no GPU expression, or "".
std::string quantizeDTypeRefusal(const Node &n) {
  const DType x = n.input(0)->dtype(), s = n.input(1)->dtype(), y = n.output(0)->dtype();
  if (!isFloat(x) && x != DType::kI32)
    return fmt::format("QuantizeLinear of {} input has no GPU kernel (float or i32 only)",
                       dtypeName(x));
  if (!floatScale(s))
    return fmt::format("QuantizeLinear with a {} scale has no GPU kernel", dtypeName(s));
  if (!smallInt(y))
    return fmt::format("QuantizeLinear to {} has no GPU kernel (i8, u8, i16, u16 only)",
                       dtypeName(y));
  return "";
}

/// Why the dtypes of DQ `n` have no GPU expression, or "".
std::string dequantizeDTypeRefusal(const Node &n) {
  const DType x = n.input(0)->dtype(), y = n.output(0)->dtype();
  if (!smallInt(x) && x != DType::kI32)
    return fmt::format("DequantizeLinear of {} input has no GPU kernel (i8, u8, i16, u16, i32 "
                       "only)",
                       dtypeName(x));
  if (!floatScale(y))
    return fmt::format("DequantizeLinear with a {} scale has no GPU kernel", dtypeName(y));
  if ((y == DType::kF16 || y == DType::kBF16) && !byteInt(x))
    return fmt::format("DequantizeLinear of {} input with a {} scale has no GPU kernel (a "
                       "half-precision scale needs 8-bit input)",
                       dtypeName(x), dtypeName(y));
  return "";
}

/// Whether `scale` is a constant whose every element is exactly 1.
bool unitScale(const Value *scale) {
  if (!scale || !scale->isConstant())
    return false;
  const Tensor &t = scale->constant();
  for (int64_t i = 0; i < t.numElements(); ++i)
    if (t.elementAsDouble(i) != 1.0)
      return false;
  return t.numElements() > 0;
}

} // namespace

bool qdqSupported(const Node &n, std::string *why) {
  auto layout = qdqLayout(n);
  if (!layout) {
    *why =
        fmt::format("{} has no GPU kernel here: {}", opOnnxName(n.op()), layout.status().message());
    return false;
  }
  if (layout->kind == QdqLayout::Kind::kBlocked) {
    *why = fmt::format("{} with block_size {} (blocked quantization) has no GPU kernel",
                       opOnnxName(n.op()), n.getInt("block_size"));
    return false;
  }
  std::string refusal =
      n.op() == Op::kQuantizeLinear ? quantizeDTypeRefusal(n) : dequantizeDTypeRefusal(n);
  if (!refusal.empty()) {
    *why = std::move(refusal);
    return false;
  }
  return true;
}

Expected<std::string> quantizeLinearExpr(const Node &n, const std::vector<std::string> &args) {
  if (std::string why = quantizeDTypeRefusal(n); !why.empty())
    return invalidArgument("{}", why);
  const DType x = n.input(0)->dtype();
  const std::string q = cudaComputeType(n.output(0)->dtype());
  const std::string zp =
      args.size() > 2 && !args[2].empty() ? fmt::format("(int)({})", args[2]) : std::string("0");
  if (x == DType::kI32)
    return fmt::format("dlc_quantize_wide<{}>((double)({}), (double)(float)({}), {})", q, args[0],
                       args[1], zp);
  if (unitScale(n.input(1))) // x / 1 is x: no division (realize-int8's fast-requantize)
    return fmt::format("dlc_quantize_unit<{}>((float)({}), {})", q, args[0], zp);
  return fmt::format("dlc_quantize<{}>((float)({}), dlc_qscale_of({}), {})", q, args[0], args[1],
                     zp);
}

bool unreadOperand(const Node &n, int i) {
  return n.op() == Op::kQuantizeLinear && i == 1 && isFloat(n.input(0)->dtype()) &&
         unitScale(n.input(1));
}

Expected<std::string> dequantizeLinearExpr(const Node &n, const std::vector<std::string> &args) {
  if (std::string why = dequantizeDTypeRefusal(n); !why.empty())
    return invalidArgument("{}", why);
  const DType x = n.input(0)->dtype(), y = n.output(0)->dtype();
  const bool zp = args.size() > 2 && !args[2].empty();
  if (smallInt(x) && y != DType::kF64) {
    std::string c = zp ? fmt::format("(int)({}) - (int)({})", args[0], args[2])
                       : fmt::format("(int)({})", args[0]);
    return fmt::format("dlc_dequantize({}, (float)({}))", c, args[1]);
  }
  std::string c = zp ? fmt::format("(long long)({}) - (long long)({})", args[0], args[2])
                     : fmt::format("(long long)({})", args[0]);
  return fmt::format("dlc_dequantize({}, ({})({}))", c, y == DType::kF64 ? "double" : "float",
                     args[1]);
}

std::optional<std::vector<int64_t>> operandView(const Node &n, int i) {
  if (!isQdqNode(n) || (i != 1 && i != 2))
    return std::nullopt;
  auto layout = qdqLayout(n);
  if (!layout || layout->kind != QdqLayout::Kind::kAxis)
    return std::nullopt;
  std::vector<int64_t> view = layout->paramView();
  if (n.input(i)->shape().sizes() == view)
    return std::nullopt;
  return view;
}

} // namespace dlc::codegen
