// Attention as exporters write it, in text IR, for the GPU tests of the views the products
// read (fold-transpose-matmul) and of the fused kernel (fuse-attention).
#pragma once

#include <fmt/format.h>

#include <string>

#include "ir/dtype.h"

namespace dlc::testing {

/// Scaled-dot-product attention over x [B, S, H, D]: q = x, k = x / 2, v = relu(x), each
/// split into heads by a transpose the GEMMs fold, the heads merged back to [B, S, H * D] by
/// a transpose the second GEMM stores through (perm_y).
inline std::string attentionText(DType t, int64_t b, int64_t s, int64_t h, int64_t d) {
  return fmt::format(R"(graph @attn(%x: {0}[{1},{2},{3},{4}]) -> (y: {0}[{1},{2},{5}]) {{
  %half = constant {0}[] dense<[0.5]>
  %k = mul(%x, %half) : {0}[{1},{2},{3},{4}]
  %v = relu(%x) : {0}[{1},{2},{3},{4}]
  %qt = transpose(%x) {{perm = [0, 2, 1, 3]}} : {0}[{1},{3},{2},{4}]
  %kt = transpose(%k) {{perm = [0, 2, 3, 1]}} : {0}[{1},{3},{4},{2}]
  %vt = transpose(%v) {{perm = [0, 2, 1, 3]}} : {0}[{1},{3},{2},{4}]
  %sc = matmul(%qt, %kt) : {0}[{1},{3},{2},{2}]
  %ss = mul(%sc, %half) : {0}[{1},{3},{2},{2}]
  %p = softmax(%ss) {{axis = -1}} : {0}[{1},{3},{2},{2}]
  %c = matmul(%p, %vt) : {0}[{1},{3},{2},{4}]
  %ct = transpose(%c) {{perm = [0, 2, 1, 3]}} : {0}[{1},{2},{3},{4}]
  %shape = constant i64[3] dense<[{1}, {2}, {5}]>
  %y = reshape(%ct, %shape) : {0}[{1},{2},{5}]
  return %y
}})",
                     dtypeName(t), b, s, h, d, h * d);
}

/// PyTorch's multi-head attention on a sequence-first x [S, B, E]: the head split
/// view(S, B*H, D) -> transpose(0, 1) -> view(B, H, S, D), Q and K scaled after it, V the
/// unscaled split, the heads merged by permute(2, 0, 1, 3) -> view(S, B, E). Every transpose
/// folds: the products read x split to [S, B, H, D] and the second stores [S, B, H, D].
inline std::string torchMhaText(DType t, int64_t s, int64_t b, int64_t h, int64_t d) {
  return fmt::format(R"(graph @mha(%x: {0}[{1},{2},{5}]) -> (y: {0}[{1},{2},{5}]) {{
  %s3 = constant i64[3] dense<[{1}, {6}, {4}]>
  %s4 = constant i64[4] dense<[{2}, {3}, {1}, {4}]>
  %c = constant {0}[] dense<[0.35]>
  %qs = reshape(%x, %s3) : {0}[{1},{6},{4}]
  %qt = transpose(%qs) {{perm = [1, 0, 2]}} : {0}[{6},{1},{4}]
  %q4 = reshape(%qt, %s4) : {0}[{2},{3},{1},{4}]
  %qm = mul(%q4, %c) : {0}[{2},{3},{1},{4}]
  %kt = transpose(%q4) {{perm = [0, 1, 3, 2]}} : {0}[{2},{3},{4},{1}]
  %km = mul(%kt, %c) : {0}[{2},{3},{4},{1}]
  %sc = matmul(%qm, %km) : {0}[{2},{3},{1},{1}]
  %p = softmax(%sc) {{axis = -1}} : {0}[{2},{3},{1},{1}]
  %ctx = matmul(%p, %q4) : {0}[{2},{3},{1},{4}]
  %ct = transpose(%ctx) {{perm = [2, 0, 1, 3]}} : {0}[{1},{2},{3},{4}]
  %sy = constant i64[3] dense<[{1}, {2}, {5}]>
  %y = reshape(%ct, %sy) : {0}[{1},{2},{5}]
  return %y
}})",
                     dtypeName(t), s, b, h, d, h * d, b * h);
}

} // namespace dlc::testing
