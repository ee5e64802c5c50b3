// Tiled transpose: when a transpose moves the input's innermost axis A away from the end, the
// plain gather kernel reads with a large stride. Here a block of 32x8 threads loads a 32x32
// tile spanning A and the axis B that becomes the output's innermost one (reads coalesced
// along A), then writes it out of shared memory transposed (writes coalesced along B). Every
// other axis is a batch coordinate of the block. The epilogue runs at the write.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/anchor_epilogue.h"
#include "codegen/cuda_prelude.h"
#include "codegen/data_movement_internal.h"
#include "codegen/data_movement_plan.h"
#include "codegen/elementwise_chain.h"
#include "ir/ops/tensor_internal.h"

namespace dlc::codegen {

std::optional<Expected<KernelSet>> emitTiledTranspose(const FusedGroup &group,
                                                      const EmitOptions &opts) {
  (void)opts;
  const Node &node = *group.anchor;
  const Value *x = node.input(0), *out = node.output(0);
  const std::vector<int64_t> in = staticSizes(x);
  auto perm = ops::tensor::transposePerm(node, static_cast<int64_t>(in.size()));
  if (!perm)
    return std::nullopt;
  const auto [dims, cperm] = canonicalTranspose(in, *perm);
  const size_t r = dims.size();
  if (r < 2 || cperm.back() == static_cast<int64_t>(r) - 1)
    return std::nullopt;
  constexpr int64_t kTile = 32, kRows = 8;
  const size_t axisA = r - 1, axisB = static_cast<size_t>(cperm.back());
  // Narrow tiles waste most threads; the plain kernel does better there.
  if (dims[axisA] < 16 || dims[axisB] < 16)
    return std::nullopt;
  const std::vector<int64_t> is = ops::tensor::stridesOf(dims);
  std::vector<int64_t> outDims;
  for (int64_t a : cperm)
    outDims.push_back(dims[static_cast<size_t>(a)]);
  const std::vector<int64_t> outStrides = ops::tensor::stridesOf(outDims);
  std::vector<int64_t> os(r); // output stride of each input axis
  for (size_t j = 0; j < r; ++j)
    os[static_cast<size_t>(cperm[j])] = outStrides[j];
  const int64_t tilesA = (dims[axisA] + kTile - 1) / kTile;
  const int64_t tilesB = (dims[axisB] + kTile - 1) / kTile;
  int64_t blocks = tilesA * tilesB;
  for (size_t k = 0; k < r; ++k)
    if (k != axisA && k != axisB)
      blocks *= dims[k];
  if (blocks >= (int64_t{1} << 31))
    return std::nullopt;

  ParamList params;
  params.read(x);
  const int64_t n = out->shape().numElements().value_or(0);
  const std::string idx = n < (int64_t{1} << 31) ? "int" : "long long";
  const std::string st = cudaStorageType(x->dtype());
  CodeWriter body;
  body.line("__shared__ {} tile[{}][{}];", st, kTile, kTile + 1);
  body.line("{} blk = blockIdx.x;", idx);
  body.line("const {} a0 = (blk % {}) * {};", idx, tilesA, kTile);
  body.line("blk /= {};", tilesA);
  body.line("const {} b0 = (blk % {}) * {};", idx, tilesB, kTile);
  body.line("blk /= {};", tilesB);
  std::string inBase = "0", outBase = "0";
  for (size_t k = r; k-- > 0;) {
    if (k == axisA || k == axisB)
      continue;
    body.line("const {} k{} = blk % {};", idx, k, dims[k]);
    body.line("blk /= {};", dims[k]);
    inBase += fmt::format(" + k{} * {}", k, is[k]);
    outBase += fmt::format(" + k{} * {}", k, os[k]);
  }
  body.line("const {} inBase = {};", idx, inBase);
  body.line("const {} outBase = {};", idx, outBase);
  body.line("const int tx = threadIdx.x, ty = threadIdx.y;");
  {
    auto load = body.block("for (int j = 0; j < {}; j += {})", kTile, kRows);
    body.line("const {} a = a0 + tx, b = b0 + ty + j;", idx);
    body.line("if (a < {} && b < {})", dims[axisA], dims[axisB]);
    body.line("  tile[ty + j][tx] = in0[inBase + a + b * {}];", is[axisB]);
  }
  body.line("__syncthreads();");
  {
    auto store = body.block("for (int j = 0; j < {}; j += {})", kTile, kRows);
    body.line("const {} b = b0 + tx, a = a0 + ty + j;", idx);
    auto inside = body.block("if (a < {} && b < {})", dims[axisA], dims[axisB]);
    body.line("const {} o = outBase + a * {} + b;", idx, os[axisA]);
    body.line("const {} e = tile[tx][ty + j];", st);
    std::vector<const Value *> stored;
    if (Status s = emitEpilogue(body, group, out, {"e", true}, "o", params, "v", stored); !s.isOk())
      return Expected<KernelSet>(s);
    if (Status s = checkAllStored(group, stored); !s.isOk())
      return Expected<KernelSet>(s);
  }

  Kernel k;
  k.name = group.name;
  finishKernel(k, params, static_cast<int>(kTile * kRows), body);
  k.launch.grid[0] = static_cast<uint32_t>(blocks);
  k.launch.block[0] = static_cast<uint32_t>(kTile);
  k.launch.block[1] = static_cast<uint32_t>(kRows);
  KernelSet set;
  set.kernels.push_back(std::move(k));
  return Expected<KernelSet>(std::move(set));
}

std::optional<Expected<KernelSet>> emitVectorTranspose(const FusedGroup &group,
                                                       const EmitOptions &opts) {
  const Node &node = *group.anchor;
  const Value *x = node.input(0), *out = node.output(0);
  // The transpose alone: an epilogue works element by element.
  if (group.nodes.size() != 1 || group.outputs.size() != 1 || group.outputs[0] != out)
    return std::nullopt;
  const std::vector<int64_t> in = staticSizes(x);
  auto perm = ops::tensor::transposePerm(node, static_cast<int64_t>(in.size()));
  if (!perm)
    return std::nullopt;
  auto [dims, cperm] = canonicalTranspose(in, *perm);
  const size_t r = dims.size();
  if (r < 2 || cperm.back() != static_cast<int64_t>(r) - 1)
    return std::nullopt;
  // The widest chunk of the innermost run, which both sides hold contiguously: 16, 8 or 4
  // bytes (the arena and the constant pool align every buffer to 256 bytes).
  const int64_t bytes = dtypeSize(x->dtype());
  if (bytes < 1 || bytes > 8)
    return std::nullopt;
  int64_t chunk = 16; // at least two elements a chunk
  while (chunk >= 4 && chunk >= 2 * bytes && (dims.back() * bytes) % chunk != 0)
    chunk /= 2;
  if (chunk < 4 || chunk < 2 * bytes)
    return std::nullopt;
  const int64_t per = chunk / bytes;
  dims.back() /= per; // in chunks from here on
  const std::vector<int64_t> is = ops::tensor::stridesOf(dims);
  std::vector<int64_t> outDims;
  for (int64_t a : cperm)
    outDims.push_back(dims[static_cast<size_t>(a)]);
  const int64_t n = out->shape().numElements().value_or(0) / per;
  ParamList params;
  params.read(x);
  params.write(out);
  const std::string idx = n * per < (int64_t{1} << 31) ? "int" : "long long";
  const char *vec = chunk == 16 ? "uint4" : chunk == 8 ? "uint2" : "unsigned";
  CodeWriter body;
  body.line("const {0} *src = reinterpret_cast<const {0} *>(in0);", vec);
  body.line("{0} *dst = reinterpret_cast<{0} *>(out0);", vec);
  auto loop = body.block("{}", gridStrideLoop(idx, n));
  // i walks the output's chunks: decode it over the output's axes, then read the input's.
  body.line("{} q = i;", idx);
  std::string offset = "0";
  for (size_t j = r; j-- > 0;) {
    const auto a = static_cast<size_t>(cperm[j]);
    body.line("const {} c{} = q % {};", idx, a, outDims[j]);
    if (j > 0)
      body.line("q /= {};", outDims[j]);
    offset += fmt::format(" + c{} * {}", a, is[a]);
  }
  body.line("dst[i] = src[{}];", offset);
  loop.close();
  Kernel k;
  k.name = group.name;
  return finishGridStride(std::move(k), body, params, n, opts);
}

} // namespace dlc::codegen
