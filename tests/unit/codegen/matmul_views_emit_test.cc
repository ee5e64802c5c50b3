// MatMuls through fold-transpose-matmul's views (perm_a / perm_b / perm_y) on the host
// emulator against the reference: BERT's head split and merge over [B, S, H, D] buffers and
// PyTorch's sequence-first [S, B, H, D] views, on the tensor-core kernels (f16: cp.async,
// ldmatrix and mma.sync emulated) and the SIMT one (f32), plain f16/bf16 products beside them.
#include "host_check.h"

namespace dlc::codegen::testing {
namespace {

std::string product(const std::string &sig, const std::string &attrs) {
  return fmt::format("graph @g({}) -> (y: ?) {{\n  %y = matmul(%a, %b){} : ?\n  return %y\n}}", sig,
                     attrs.empty() ? "" : " {" + attrs + "}");
}

TEST(MatMulViewsEmit, HostRunsMatchTheReference) {
  std::vector<HostCase> cases({
      {product("%a: f32[3,4], %b: f32[4,5]", ""), {}, 1e-5},
      {product("%a: f16[70,40], %b: f16[40,72]", ""), {}, 1e-2},
      {product("%a: bf16[2,33,64], %b: bf16[2,64,24]", ""), {}, 3e-2},
      // Q Kᵀ and P V of BERT-like heads, f16 and f32.
      {product("%a: f16[2,40,4,64], %b: f16[2,40,4,64]",
               "perm_a = [0, 2, 1, 3], perm_b = [0, 2, 3, 1]"),
       {},
       1e-2},
      {product("%a: f16[2,4,40,40], %b: f16[2,40,4,64]",
               "perm_b = [0, 2, 1, 3], perm_y = [0, 2, 1, 3]"),
       {},
       1e-2},
      {product("%a: f32[2,24,3,16], %b: f32[2,24,3,16]",
               "perm_a = [0, 2, 1, 3], perm_b = [0, 2, 3, 1]"),
       {},
       1e-4},
      // PyTorch's multi-head attention: x [S, B, H, D] read as [B, H, S, D].
      {product("%a: f16[50,3,4,32], %b: f16[50,3,4,32]",
               "perm_a = [1, 2, 0, 3], perm_b = [1, 2, 3, 0]"),
       {},
       1e-2},
      {product("%a: f16[3,4,50,50], %b: f16[50,3,4,32]",
               "perm_b = [1, 2, 0, 3], perm_y = [2, 0, 1, 3]"),
       {},
       1e-2},
  });
  for (HostCase &c : cases)
    c.bounded = true; // distinctData's ramps overflow the f16 products
  expectHostRunsMatchReference(cases);
}

} // namespace
} // namespace dlc::codegen::testing
