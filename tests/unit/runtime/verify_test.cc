// `--verify`'s tolerances: a value takes the tolerance of the least precise float dtype it was
// computed through, not only its own dtype.
#include <gtest/gtest.h>

#include "ir/parser.h"
#include "runtime/jit/verify.h"

namespace dlc {
namespace {

const Value *valueNamed(const Graph &g, const std::string &name) {
  for (const Node *n : g.nodes())
    for (const Value *v : n->outputs())
      if (v && v->name() == name)
        return v;
  return nullptr;
}

TEST(VerifyPrecision, CastToF32KeepsTheF16ErrorOfItsProducer) {
  auto g = parseGraph("graph @g(%x: f16[4], %y: f32[4]) -> (a: f32[4], b: f32[4], c: f32[4]) {\n"
                      "  %h = add(%x, %x) : f16[4]\n"
                      "  %a = cast(%h) {to = f32} : f32[4]\n"
                      "  %b = add(%a, %y) : f32[4]\n"
                      "  %xf = cast(%x) {to = f32} : f32[4]\n"
                      "  %c = add(%xf, %y) : f32[4]\n"
                      "  %i = cast(%b) {to = i64} : i64[4]\n"
                      "  return %a, %b, %c\n"
                      "}\n");
  ASSERT_TRUE(g) << g.status().message();
  const auto prec = computedPrecision(**g);
  // Computed in f16, then widened: f16 error.
  EXPECT_EQ(prec.at(valueNamed(**g, "h")), DType::kF16);
  EXPECT_EQ(prec.at(valueNamed(**g, "a")), DType::kF16);
  EXPECT_EQ(prec.at(valueNamed(**g, "b")), DType::kF16);
  // A cast of a graph input is exact: f32 arithmetic after it keeps f32 tolerances.
  EXPECT_EQ(prec.at(valueNamed(**g, "xf")), DType::kF32);
  EXPECT_EQ(prec.at(valueNamed(**g, "c")), DType::kF32);
  // Integers are compared exactly and have no entry.
  EXPECT_EQ(prec.count(valueNamed(**g, "i")), 0u);
  // The tolerance follows: f16's is a hundred times looser than f32's.
  EXPECT_GT(verifyTolerance(prec.at(valueNamed(**g, "b")), 1.0).rtol,
            50 * verifyTolerance(DType::kF32, 1.0).rtol);
}

} // namespace
} // namespace dlc
