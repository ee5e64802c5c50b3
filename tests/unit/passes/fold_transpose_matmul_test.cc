// fold-transpose-matmul on random chains of transposes, reshapes (splits and merges of axes)
// and unsqueezes in front of a MatMul's operands, and random transposes after it: whatever it
// folds, the reference backend computes the same outputs, bit for bit, and the folds happen
// (most chains lose their transposes), and the GPU's GEMM writer addresses every view left.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "ir/clone.h"
#include "numerics_util.h"
#include "pass_test_util.h"
#include "runtime/jit/compile.h"

namespace dlc {
namespace {

std::string shapeText(const std::vector<int64_t> &s) {
  std::string out;
  for (int64_t d : s)
    out += (out.empty() ? "" : ",") + std::to_string(d);
  return "f32[" + out + "]";
}

std::string intsText(const std::vector<int64_t> &v) {
  std::string out;
  for (int64_t d : v)
    out += (out.empty() ? "" : ", ") + std::to_string(d);
  return "[" + out + "]";
}

/// Builds, in `body`, a random chain of data movement from value `%{name}` of shape `shape`;
/// returns the chain's last value and leaves `shape` its shape.
std::string randomChain(std::mt19937 &rng, std::string name, std::vector<int64_t> &shape,
                        std::string &body, int &next) {
  const int steps = 1 + static_cast<int>(rng() % 4);
  for (int s = 0; s < steps; ++s) {
    const std::string out = "v" + std::to_string(next++);
    const size_t r = shape.size();
    const int kind = static_cast<int>(rng() % 4);
    if (kind <= 1) { // transpose
      std::vector<int64_t> perm(r);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      std::vector<int64_t> y;
      for (int64_t p : perm)
        y.push_back(shape[static_cast<size_t>(p)]);
      body += "  %" + out + " = transpose(%" + name + ") {perm = " + intsText(perm) +
              "} : " + shapeText(y) + "\n";
      shape = y;
    } else {
      std::vector<int64_t> y = shape;
      const size_t a = rng() % r;
      if (kind == 2 && r > 2 && a + 1 < r) { // merge a and a + 1
        y[a] *= y[a + 1];
        y.erase(y.begin() + static_cast<long>(a) + 1);
      } else if (y[a] % 2 == 0 && y[a] > 2) { // split a into 2 x (n / 2)
        y[a] /= 2;
        y.insert(y.begin() + static_cast<long>(a), 2);
      } else { // unsqueeze
        y.insert(y.begin() + static_cast<long>(a), 1);
      }
      const std::string c = out + "_shape";
      body += "  %" + c + " = constant i64[" + std::to_string(y.size()) + "] dense<" + intsText(y) +
              ">\n";
      body += "  %" + out + " = reshape(%" + name + ", %" + c + ") : " + shapeText(y) + "\n";
      shape = y;
    }
    name = out;
  }
  return name;
}

TEST(FoldTransposeMatmul, RandomChainsKeepTheResults) {
  int folded = 0, graphs = 0;
  for (uint32_t seed = 0; seed < 300; ++seed) {
    std::mt19937 rng(seed);
    // A source of 3 or 4 axes of 2..6.
    std::vector<int64_t> xs;
    const int rank = 3 + static_cast<int>(rng() % 2);
    for (int i = 0; i < rank; ++i)
      xs.push_back(2 + static_cast<int64_t>(rng() % 5));
    std::string body;
    int next = 0;
    std::vector<int64_t> a = xs;
    const std::string av = randomChain(rng, "x", a, body, next);
    if (a.size() < 2)
      continue;
    // B: A's batch dims, then [K, N]; read through a transpose of its last two axes half the
    // time.
    std::vector<int64_t> b(a.begin(), a.end() - 2);
    const int64_t k = a.back(), n = 2 + static_cast<int64_t>(rng() % 4);
    const bool bt = rng() % 2 == 0;
    std::vector<int64_t> bIn = b;
    bIn.push_back(bt ? n : k);
    bIn.push_back(bt ? k : n);
    std::string bv = "w";
    if (bt) {
      std::vector<int64_t> perm(bIn.size());
      std::iota(perm.begin(), perm.end(), 0);
      std::swap(perm[perm.size() - 1], perm[perm.size() - 2]);
      std::vector<int64_t> bs = b;
      bs.push_back(k);
      bs.push_back(n);
      body += "  %wt = transpose(%w) {perm = " + intsText(perm) + "} : " + shapeText(bs) + "\n";
      bv = "wt";
    }
    std::vector<int64_t> y(a.begin(), a.end() - 1);
    y.push_back(n);
    body += "  %y = matmul(%" + av + ", %" + bv + ") : " + shapeText(y) + "\n";
    std::string out = "y";
    // A transpose after it, keeping the columns last, half the time.
    if (y.size() >= 3 && rng() % 2 == 0) {
      std::vector<int64_t> perm(y.size() - 1);
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng);
      perm.push_back(static_cast<int64_t>(y.size()) - 1);
      std::vector<int64_t> z;
      for (int64_t p : perm)
        z.push_back(y[static_cast<size_t>(p)]);
      body += "  %z = transpose(%y) {perm = " + intsText(perm) + "} : " + shapeText(z) + "\n";
      out = "z";
    }
    const std::string text = "graph @g(%x: " + shapeText(xs) + ", %w: " + shapeText(bIn) +
                             ") -> (" + out + ": ?) {\n" + body + "  return %" + out + "\n}";
    SCOPED_TRACE(text);
    auto before = testing::parsed(text);
    ASSERT_TRUE(before);
    auto after = cloneGraph(*before);
    auto changed = testing::runPass(*after, "fold-transpose-matmul");
    ASSERT_TRUE(changed) << changed.status().message();
    ASSERT_TRUE(testing::runPass(*after, "dce"));
    ++graphs;
    folded += *changed;
    testing::expectSameResults(*before, *after, 0.0, seed);
    // The GPU's GEMM writer addresses every view the pass leaves (the GPU pipeline runs it).
    jit::JitOptions jo;
    jo.lower.compile = false;
    jo.strictPlacement = true;
    auto program = jit::compileForGpu(*before, {}, jo);
    EXPECT_TRUE(program) << program.status().message();
  }
  EXPECT_GT(graphs, 250);
  EXPECT_GT(folded, graphs / 2) << folded << " of " << graphs << " graphs folded";
}

} // namespace
} // namespace dlc
