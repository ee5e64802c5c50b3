// The scan family (codegen/scan.cc): CumSum on the host emulator against the reference, with
// the axis read at run time: lines longer than a block (several chunks and the carry), every
// axis of a 3-D tensor (negative too), exclusive and reverse, f32, f16, i32 and i64 (wrapping),
// and a scalar.
#include "host_check.h"

namespace dlc::codegen::testing {
namespace {

std::string cumsum(const std::string &x, const char *axisType, const std::string &attrs) {
  return fmt::format("graph @c(%x: {}, %a: {}[]) -> (y: ?) {{\n  %y = cumsum(%x, %a){} : ?\n  "
                     "return %y\n}}",
                     x, axisType, attrs.empty() ? "" : " {" + attrs + "}");
}

Tensor axis(DType t, int64_t a) {
  return t == DType::kI64 ? Tensor::scalarI64(a)
                          : Tensor::fromVector<int32_t>(DType::kI32, {}, {static_cast<int32_t>(a)});
}

TEST(ScanEmit, HostRunsMatchTheReference) {
  std::vector<HostCase> cases;
  // 600 elements: three chunks of 256 with the carry between them.
  cases.push_back({cumsum("f32[600]", "i64", ""), {{"a", axis(DType::kI64, 0)}}, 1e-6});
  cases.push_back({cumsum("f32[600]", "i64", "exclusive = 1, reverse = 1"),
                   {{"a", axis(DType::kI64, 0)}},
                   1e-6});
  const std::pair<int64_t, const char *> axes[] = {
      {0, ""}, {1, "exclusive = 1"}, {2, "reverse = 1"}, {-2, "exclusive = 1, reverse = 1"}};
  for (const auto &[a, attrs] : axes)
    cases.push_back({cumsum("f32[3,6,4]", "i32", attrs), {{"a", axis(DType::kI32, a)}}, 1e-6});
  cases.push_back({cumsum("f16[4,70]", "i64", "reverse = 1"), {{"a", axis(DType::kI64, 1)}}, 1e-2});
  cases.push_back({cumsum("i32[3,300]", "i64", "exclusive = 1"), {{"a", axis(DType::kI64, 1)}}, 0});
  // i8 wraps in its own type.
  cases.push_back({cumsum("i8[2,50]", "i64", ""), {{"a", axis(DType::kI64, 1)}}, 0});
  cases.push_back({cumsum("i64[7,3]", "i32", ""), {{"a", axis(DType::kI32, 0)}}, 0});
  expectHostRunsMatchReference(cases);
}

} // namespace
} // namespace dlc::codegen::testing
