// Helpers for pass tests: run one pass by name, and made-up op rows.
#pragma once

#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "ir/eval/eval.h"
#include "ir/graph.h"
#include "passes/registry.h"

namespace dlc::testing {

/// Runs the pass `name` on `g` with the given options; when `log` is given, the pass's
/// decision log (--debug-only) goes there.
inline Expected<bool> runPass(Graph &g, std::string_view name,
                              std::map<std::string, std::string, std::less<>> values = {},
                              std::ostream *log = nullptr) {
  const PassInfo *info = findPass(name);
  EXPECT_NE(info, nullptr) << name;
  PassOptions options;
  options.pass = std::string(name);
  options.values = std::move(values);
  options.debug = log != nullptr;
  options.debugOut = log;
  return info->create()->run(g, options);
}

/// A row that accepts any arity, with the given inference; it keeps the real row's `random`
/// property.
inline OpDef fakeDef(Op op, InferFn infer) {
  OpDef d;
  d.op = op;
  d.minInputs = 0;
  d.maxInputs = -1;
  d.minOutputs = 0;
  d.maxOutputs = -1;
  d.infer = infer;
  d.random = opDef(op).random;
  return d;
}

/// While alive, `op` has a fakeDef row with `infer` and the reference kernel `eval` (nullptr:
/// none).
class FakeOp {
public:
  FakeOp(Op op, InferFn infer, eval::EvalFn eval = nullptr)
      : def_(fakeDef(op, infer)), eval_(op, eval) {}

private:
  ScopedOpDefOverride def_;
  eval::ScopedEvalOverride eval_;
};

inline TensorType f32(std::vector<Dim> dims) { return TensorType(DType::kF32, Shape(dims)); }

inline Value *f32Constant(Graph &g, std::string name, std::vector<int64_t> shape,
                          std::vector<float> data) {
  return g.addConstant(std::move(name), Tensor::fromVector<float>(DType::kF32, shape, data));
}

inline std::vector<float> floats(const Tensor &t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numElements());
}

} // namespace dlc::testing
