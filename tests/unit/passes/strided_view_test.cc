// passes/util/strided_view.h: which view of a data-moving op's input holds the elements a view
// of its output names, checked element by element against the reference backend (the op's
// output read through the view equals its input read through the answer), and the views that
// cannot be written over the input.
#include "numerics_util.h"
#include "passes/util/strided_view.h"

namespace dlc {
namespace {

using testing::parsed;

/// The elements `v` names in `t`, in row-major order of the view.
std::vector<float> read(const Tensor &t, const StridedView &v) {
  std::vector<float> out;
  const float *p = t.data<float>();
  std::vector<int64_t> i(v.sizes.size(), 0);
  const bool empty = std::any_of(v.sizes.begin(), v.sizes.end(), [](int64_t s) { return s == 0; });
  while (!empty) {
    int64_t at = v.offset;
    for (size_t j = 0; j < i.size(); ++j)
      at += i[j] * v.strides[j];
    out.push_back(p[at]);
    size_t j = i.size();
    while (j > 0 && ++i[j - 1] == v.sizes[j - 1])
      i[--j] = 0;
    if (j == 0)
      break;
  }
  return out;
}

/// Iota data of `shape`.
Tensor iota(const std::vector<int64_t> &shape) {
  Tensor t = Tensor::zeros(DType::kF32, shape);
  for (int64_t i = 0; i < t.numElements(); ++i)
    t.mutableData<float>()[i] = static_cast<float>(i);
  return t;
}

/// The only node of `text` (one op on input %x), its output computed by the reference
/// backend from iota data, and viewThrough's answer for `view` checked against both.
void expectThrough(const std::string &text, const StridedView &view,
                   const std::optional<StridedView> &want) {
  SCOPED_TRACE(text);
  auto g = parsed(text);
  ASSERT_TRUE(g);
  const Node *n = g->nodes().back();
  auto got = viewThrough(*n, view);
  ASSERT_EQ(got.has_value(), want.has_value()) << (got ? got->str() : "none");
  if (!got)
    return;
  EXPECT_EQ(got->str(), want->str());
  const Tensor x = iota(g->inputs()[0]->shape().sizes());
  auto exec = ReferenceExecutor::create(*g);
  ASSERT_TRUE(exec);
  auto y = exec->run({{g->inputs()[0]->name(), x}});
  ASSERT_TRUE(y) << y.status().message();
  EXPECT_EQ(read(x, *got), read((*y)[0].tensor, view));
}

TEST(StridedView, TransposeAndGatherOfTorchsPackedProjection) {
  // K of torch's multi-head attention: [S, B, 3, E] moved to [3, S, B, E], index 1.
  expectThrough(R"(graph @g(%x: f32[5,2,3,8]) -> (y: f32[3,5,2,8]) {
  %y = transpose(%x) {perm = [2, 0, 1, 3]} : f32[3,5,2,8]
  return %y
})",
                {{2, 2, 5, 4}, {8, 4, 16, 1}, 80}, StridedView{{2, 2, 5, 4}, {24, 4, 48, 1}, 8});
  expectThrough(R"(graph @g(%x: f32[3,5,2,8]) -> (y: f32[5,2,8]) {
  %i = constant i64[] dense<[1]>
  %y = gather(%x, %i) {axis = 0} : f32[5,2,8]
  return %y
})",
                {{2, 2, 5, 4}, {8, 4, 16, 1}, 0}, StridedView{{2, 2, 5, 4}, {8, 4, 16, 1}, 80});
  // A one-element index keeps the axis (size 1); a negative one counts from the end.
  expectThrough(R"(graph @g(%x: f32[4,6]) -> (y: f32[4,1]) {
  %i = constant i64[1] dense<[-2]>
  %y = gather(%x, %i) {axis = 1} : f32[4,1]
  return %y
})",
                {{4}, {1}, 0}, StridedView{{4}, {6}, 4});
}

TEST(StridedView, RefusesAViewThatWouldCarryAcrossAxes) {
  // 32 rows of the transposed [16, 2, 16] run across its first two axes: no one stride.
  expectThrough(R"(graph @g(%x: f32[2,16,16]) -> (y: f32[16,2,16]) {
  %y = transpose(%x) {perm = [1, 0, 2]} : f32[16,2,16]
  return %y
})",
                {{32, 16}, {16, 1}, 0}, std::nullopt);
  // A gather with a data index, an op that computes: not views.
  expectThrough(R"(graph @g(%x: f32[3,4], %i: i64[]) -> (y: f32[4]) {
  %y = gather(%x, %i) {axis = 0} : f32[4]
  return %y
})",
                {{4}, {1}, 0}, std::nullopt);
  expectThrough(R"(graph @g(%x: f32[3,4]) -> (y: f32[3,4]) {
  %y = neg(%x) : f32[3,4]
  return %y
})",
                {{3, 4}, {4, 1}, 0}, std::nullopt);
}

TEST(StridedView, BlockOfAWiderBuffer) {
  // K's [2, 10, 32] projection as columns 32..63 of the merged [2, 10, 96] one.
  auto v = viewInBlock({2, 10, 32}, {{2, 2, 10, 16}, {320, 16, 32, 1}, 0}, {2, 10, 96}, {0, 0, 32});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->str(), "[2, 2, 10, 16] at [960, 16, 96, 1] + 32");
  // A view walking across the part's rows cannot be a block's (its row is 96 wide there).
  EXPECT_FALSE(viewInBlock({2, 10, 32}, {{640}, {1}, 0}, {2, 10, 96}, {0, 0, 32}));
  // The block must fit.
  EXPECT_FALSE(
      viewInBlock({2, 10, 32}, {{2, 2, 10, 16}, {320, 16, 32, 1}, 0}, {2, 10, 96}, {0, 0, 70}));
}

} // namespace
} // namespace dlc
