// Helpers for the emitter tests: parse a small text-IR graph and infer its types, make fused
// groups from it, build distinct input data, and compile many kernels in one NVRTC program.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>

#include "codegen/cuda_prelude.h"
#include "codegen/emitters.h"
#include "codegen/nvrtc.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"

namespace dlc::codegen::testing {

/// Parses `text` and infers every type (node results may be written `: ?`).
inline std::unique_ptr<Graph> parseInfer(const std::string &text) {
  auto g = parseGraph(text, "test.dlc");
  EXPECT_TRUE(g) << g.status().message();
  if (!g)
    return nullptr;
  Status s = inferShapes(**g);
  EXPECT_TRUE(s.isOk()) << s.message();
  return std::move(*g);
}

/// The graph's first node whose op is not elementwise (nullptr if none).
inline const Node *anchorOf(const Graph &g) {
  for (const Node *n : g.nodes())
    if (!elementwiseExpr(n->op()))
      return n;
  return nullptr;
}

/// Every node of the graph as one group; outputs are the graph's outputs.
inline FusedGroup wholeGraph(const Graph &g, std::string name = "fused_test") {
  FusedGroup grp;
  grp.name = std::move(name);
  for (const Node *n : g.nodes()) {
    grp.nodes.push_back(n);
    for (const Value *v : n->inputs())
      if (v && (!v->producer()) &&
          std::find(grp.inputs.begin(), grp.inputs.end(), v) == grp.inputs.end())
        grp.inputs.push_back(v);
  }
  grp.anchor = anchorOf(g);
  for (const auto &o : g.outputs())
    grp.outputs.push_back(o.value);
  return grp;
}

/// Element i of a float tensor is i * 0.25 + 1 (exact in f16 for small tensors); integers
/// count up from 1, bools alternate: any two elements a kernel could confuse differ.
inline Tensor distinctData(const TensorType &t) {
  const std::vector<int64_t> shape = t.shape.sizes();
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i)
    v[static_cast<size_t>(i)] = t.dtype == DType::kBool ? static_cast<double>(i % 2)
                                : isFloat(t.dtype)      ? static_cast<double>(i) * 0.25 + 1.0
                                                        : static_cast<double>(i + 1);
  return Tensor::fromVector<double>(DType::kF64, shape, v).castTo(t.dtype);
}

/// The node's inputs as tensors: constants as they are, others from `given` or distinctData.
inline std::vector<Tensor> nodeInputs(const Node &n, const std::map<std::string, Tensor> &given) {
  std::vector<Tensor> in;
  for (const Value *v : n.inputs()) {
    if (!v)
      in.emplace_back();
    else if (v->isConstant())
      in.push_back(v->constant());
    else if (auto it = given.find(v->name()); it != given.end())
      in.push_back(it->second);
    else
      in.push_back(distinctData(v->type()));
  }
  return in;
}

/// Whether element i of a and element j of b hold the same bytes (same dtype).
inline bool sameElement(const Tensor &a, int64_t i, const Tensor &b, int64_t j) {
  const size_t es = static_cast<size_t>(dtypeSize(a.dtype()));
  return a.dtype() == b.dtype() &&
         std::memcmp(static_cast<const uint8_t *>(a.raw()) + static_cast<size_t>(i) * es,
                     static_cast<const uint8_t *>(b.raw()) + static_cast<size_t>(j) * es, es) == 0;
}

/// Emits the group and returns its kernels' source (failing the test on an error). Each kernel's
/// prelude must hold every helper its source names.
inline std::string emitSource(const FusedGroup &grp, KernelSet *out = nullptr,
                              const EmitOptions &opts = {}) {
  auto set = emitGroup(grp, opts);
  EXPECT_TRUE(set) << grp.name << ": " << set.status().message();
  if (!set)
    return "";
  std::string src;
  for (const Kernel &k : set->kernels) {
    EXPECT_TRUE(k.prelude.contains(helpersNamedIn(k.source)))
        << k.name << ": prelude " << k.prelude.str() << ", names "
        << helpersNamedIn(k.source).str();
    src += k.source;
  }
  if (out)
    *out = std::move(*set);
  return src;
}

/// Compiles `sources` after the prelude helpers they name (only those) for sm_90.
inline void expectCompiles(const std::string &sources, const std::string &name) {
  auto mod = compileCuda(cudaPrelude(helpersNamedIn(sources)) + sources, name);
  ASSERT_TRUE(mod) << mod.status().message();
  EXPECT_FALSE(mod->cubin.empty());
  EXPECT_EQ(mod->log.find("warning"), std::string::npos) << mod->log;
}

} // namespace dlc::codegen::testing
