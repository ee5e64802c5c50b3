// The elementwise expression table against the op table and the prelude: every op whose fusion
// kind is elementwise or broadcast has a CUDA expression (fuse groups such ops around anchors on
// that promise), and every `dlc_*` helper an expression names is defined in cudaPrelude() (a
// contract NVRTC alone would check, and only for the dtypes a test happens to compile).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "codegen/cuda_prelude.h"
#include "codegen/elementwise_expr.h"
#include "codegen/quant_expr.h"
#include "ir/graph.h"
#include "ir/quant_layout.h"

namespace dlc::codegen {
namespace {

/// Elementwise or broadcast ops without a CUDA expression, each with the reason. Empty today:
/// every such op has one.
const std::map<Op, std::string> kWithoutExpression = {};

bool isElementwiseKind(Op op) {
  const FusionKind k = opDef(op).fusion;
  return k == FusionKind::kElementwise || k == FusionKind::kBroadcast;
}

std::vector<Op> allOps() {
  std::vector<Op> ops;
  for (int i = 0; i < kNumOps; ++i)
    ops.push_back(static_cast<Op>(i));
  return ops;
}

TEST(ElementwiseExpr, EveryElementwiseOpHasAnExpression) {
  int count = 0;
  for (Op op : allOps()) {
    if (!isElementwiseKind(op))
      continue;
    ++count;
    if (kWithoutExpression.count(op))
      EXPECT_EQ(elementwiseExpr(op), nullptr) << opName(op) << " is listed as having none";
    else
      EXPECT_NE(elementwiseExpr(op), nullptr) << opName(op) << " has no CUDA expression";
  }
  EXPECT_GT(count, 60); // the elementwise family and Dropout
}

TEST(ElementwiseExpr, OnlyElementwiseOpsHaveAnExpression) {
  // fuse classifies nodes by fusion kind; codegen by expression: the two must agree. Q/DQ are
  // the exception: opaque in the table, elementwise per node (isElementwiseNode) by the layout
  // of their scale and zero point.
  for (Op op : allOps()) {
    if (elementwiseExpr(op) && op != Op::kQuantizeLinear && op != Op::kDequantizeLinear) {
      EXPECT_TRUE(isElementwiseKind(op)) << opName(op) << " has an expression but fusion kind "
                                         << fusionKindName(opDef(op).fusion);
    }
  }
  EXPECT_NE(elementwiseExpr(Op::kQuantizeLinear), nullptr);
  EXPECT_NE(elementwiseExpr(Op::kDequantizeLinear), nullptr);
  for (const auto &[op, reason] : kWithoutExpression)
    EXPECT_TRUE(isElementwiseKind(op)) << opName(op) << " is listed but not elementwise";
}

// --- Helpers named by expressions -------------------------------------------------------------

/// Whether `text` defines `name`: a `__device__` declaration whose declarator is `name(` or
/// `name<` (a specialisation), with no `;` or `{` in between (a call in a body does not count).
bool definesHelper(const std::string &text, const std::string &name) {
  const std::regex def("__device__[^;{]*\\b" + name + "\\s*[(<]");
  return std::regex_search(text, def);
}

/// The `dlc_*` identifiers in `expr`.
std::set<std::string> helpersIn(const std::string &expr) {
  static const std::regex id("\\bdlc_[A-Za-z0-9_]+");
  std::set<std::string> out;
  for (auto it = std::sregex_iterator(expr.begin(), expr.end(), id); it != std::sregex_iterator();
       ++it)
    out.insert(it->str());
  return out;
}

TEST(ElementwiseExpr, HelperCheckTellsDefinitionsFromUses) {
  const std::string prelude(cudaPrelude());
  EXPECT_TRUE(definesHelper(prelude, "dlc_sigmoid"));
  EXPECT_TRUE(definesHelper(prelude, "dlc_shift"));
  EXPECT_FALSE(definesHelper(prelude, "dlc_no_such_helper"));
  EXPECT_FALSE(
      definesHelper("__device__ float f(float x) { return dlc_sigmoid(x); }", "dlc_sigmoid"));
  EXPECT_EQ(helpersIn("dlc_max(dlc_abs(a0), b) + dlc_shift<true>(x, y)"),
            (std::set<std::string>{"dlc_abs", "dlc_max", "dlc_shift"}));
}

/// Attribute sets an op's expression branches on (the defaults are tried too).
std::vector<std::map<std::string, Attribute>> attributeVariants(Op op) {
  switch (op) {
  case Op::kBitShift:
    return {{{"direction", Attribute("LEFT")}}, {{"direction", Attribute("RIGHT")}}};
  case Op::kMod:
    return {{}, {{"fmod", Attribute(int64_t{1})}}};
  case Op::kGelu:
    return {{}, {{"approximate", Attribute("tanh")}}};
  case Op::kIsInf:
    return {{}, {{"detect_negative", Attribute(int64_t{0})}}};
  case Op::kQuantizeLinear:
  case Op::kDequantizeLinear: // per tensor (scalar parameters aside) and per axis on [4]
    return {{{"axis", Attribute(int64_t{0})}}};
  case Op::kCast: {
    std::vector<std::map<std::string, Attribute>> v;
    for (DType to : {DType::kF32, DType::kF16, DType::kF64, DType::kI32, DType::kU8, DType::kBool})
      v.push_back({{"to", Attribute(to)}});
    return v;
  }
  default:
    return {{}};
  }
}

/// Every expression `op` yields for nodes that pass inference: input 0 of one dtype and the
/// other inputs of another (so Where's bool condition and CastLike's target are covered), every
/// arity up to three, every attribute variant.
std::vector<std::string> expressionsOf(Op op) {
  const DType dtypes[] = {DType::kF32, DType::kF16, DType::kBF16, DType::kF64, DType::kI32,
                          DType::kI64, DType::kU8,  DType::kU32,  DType::kBool};
  const OpDef &def = opDef(op);
  const int maxIn = def.maxInputs < 0 ? 3 : std::min(def.maxInputs, 3);
  std::vector<std::string> out;
  for (int arity = std::max(def.minInputs, 1); arity <= maxIn; ++arity)
    for (DType first : dtypes)
      for (DType rest : dtypes)
        for (const auto &attrs : attributeVariants(op)) {
          Graph g("g");
          std::vector<Value *> ins;
          std::vector<TensorType> types;
          std::vector<std::string> args;
          for (int i = 0; i < arity; ++i) {
            types.emplace_back(i == 0 ? first : rest, Shape({4}));
            ins.push_back(g.addInput("x" + std::to_string(i), types.back()));
            args.push_back("a" + std::to_string(i));
          }
          Node *n = g.createNode(op, ins, 1, "e");
          for (const auto &[name, a] : attrs)
            n->setAttr(name, a);
          InferContext ctx(*n, types, {}, {});
          if (!inferNode(ctx).isOk())
            continue;
          n->output(0)->setType(ctx.outputType(0));
          std::string why;
          if (isQdqNode(*n) && !qdqSupported(*n, &why))
            continue; // dtypes the GPU refuses (placement keeps such nodes on the CPU)
          auto expr = elementwiseExpr(op)(*n, args);
          EXPECT_TRUE(expr) << opName(op) << " on " << types[0].str() << ": "
                            << expr.status().message();
          if (expr)
            out.push_back(*expr);
        }
  return out;
}

TEST(ElementwiseExpr, EveryHelperAnExpressionNamesIsInThePrelude) {
  const std::string prelude(cudaPrelude());
  std::map<std::string, std::set<std::string>> users; // helper -> ops naming it
  for (Op op : allOps()) {
    if (!elementwiseExpr(op))
      continue;
    std::vector<std::string> exprs = expressionsOf(op);
    EXPECT_FALSE(exprs.empty()) << opName(op) << ": no node of it passed inference";
    for (const std::string &e : exprs)
      for (const std::string &h : helpersIn(e))
        users[h].insert(std::string(opName(op)));
  }
  EXPECT_GT(users.size(), 20u); // the expressions were really built
  for (const auto &[helper, ops] : users)
    EXPECT_TRUE(definesHelper(prelude, helper))
        << helper << " (named by " << *ops.begin() << ") is not defined in the prelude";
}

} // namespace
} // namespace dlc::codegen
