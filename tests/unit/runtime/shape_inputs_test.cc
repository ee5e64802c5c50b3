// Shape inputs (jit::shapeInputs): small integer graph inputs whose values give shapes are bound
// to the run's values before the GPU pipeline, so that a Reshape, a reduction's axes or an
// Expand whose shape arrives as an input compile for the GPU with static shapes. Checked
// without a GPU: the GPU pipeline (prepareForGpu, strict placement, the real codegen's
// answers) on a graph and on the ONNX node tests whose shapes come from such inputs.
#include <gtest/gtest.h>

#include <filesystem>

#include "frontend/onnx/tensor_file.h"
#include "ir/parser.h"
#include "runtime/jit/compile.h"
#include "runtime/jit/model.h"

namespace dlc {
namespace {

namespace fs = std::filesystem;

Tensor ints(std::vector<int64_t> v) { return Tensor::vectorI64(v); }

jit::JitOptions strict() {
  jit::JitOptions jo;
  jo.strictPlacement = true;
  return jo;
}

TEST(ShapeInputs, ShapeGivingInputsAreBoundAndDataStays) {
  auto g = parseGraph(
      R"(graph @g(%x: f32[2,3,4], %shape: i64[2], %axes: i64[1], %idx: i64[2]) -> (r: ?, s: ?, t: ?) {
  %r = reshape(%x, %shape) : ?
  %s = reduce_sum(%x, %axes) {keepdims = 0} : ?
  %t = gather(%x, %idx) {axis = 1} : ?
  return %r, %s, %t
})");
  ASSERT_TRUE(g) << g.status().message();
  auto model = Model::fromGraph(std::move(*g));
  ASSERT_TRUE(model) << model.status().message();
  const std::map<std::string, Tensor> inputs = {{"x", Tensor::zeros(DType::kF32, {2, 3, 4})},
                                                {"shape", ints({4, 6})},
                                                {"axes", ints({2})},
                                                {"idx", ints({0, 2})}};
  auto names = jit::shapeInputs(model->graph(), {}, inputs);
  ASSERT_TRUE(names) << names.status().message();
  // The indices are data: binding them changes no shape.
  EXPECT_EQ(*names, (std::vector<std::string>{"shape", "axes"}));

  // Unbound, the reshape's and the reduction's shapes are unknown: strict placement refuses.
  EXPECT_FALSE(jit::prepareForGpu(model->graph(), {}, strict()));
  // Bound, the graph is static and every node has a GPU kernel.
  jit::JitOptions jo = strict();
  for (const std::string &n : *names)
    jo.shapeValues.emplace(n, inputs.at(n));
  auto bound = jit::prepareForGpu(model->graph(), {}, jo);
  ASSERT_TRUE(bound) << bound.status().message();
  EXPECT_EQ((*bound)->outputs()[0].value->type().str(), "f32[4,6]");
  EXPECT_EQ((*bound)->outputs()[1].value->type().str(), "f32[2,3]");
  // The inputs stay in the signature (a program keeps its callers' inputs).
  EXPECT_EQ((*bound)->inputs().size(), 4u);

  // A value of the wrong type is refused by name.
  jit::JitOptions bad = strict();
  bad.shapeValues.emplace("shape", Tensor::vectorI64({1, 2, 3}));
  auto refused = jit::prepareForGpu(model->graph(), {}, bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.status().message().find("shape input 'shape'"), std::string::npos)
      << refused.status().message();
}

/// The node test's model and the inputs of its first data set.
Expected<std::pair<Model, std::map<std::string, Tensor>>> loadNodeTest(const fs::path &dir) {
  DLC_ASSIGN_OR_RETURN(Model model, Model::load((dir / "model.onnx").string()));
  std::map<std::string, Tensor> inputs;
  for (size_t i = 0; i < model.inputs().size(); ++i) {
    const fs::path p = dir / "test_data_set_0" / fmt::format("input_{}.pb", i);
    if (!fs::exists(p))
      break;
    DLC_ASSIGN_OR_RETURN(Tensor t, onnx::readTensorProtoFile(p.string()));
    inputs.emplace(model.inputs()[i].name, std::move(t));
  }
  return std::make_pair(std::move(model), std::move(inputs));
}

TEST(ShapeInputs, NodeTestsWithShapesFromInputsCompileForTheGpu) {
  const fs::path root = fs::path(DLC_BINARY_DIR) / "onnx-node-tests" / "node";
  if (!fs::exists(root))
    GTEST_SKIP() << "no ONNX node tests at " << root
                 << " (ctest's conformance_generate makes them)";
  for (const char *test :
       {"test_reshape_negative_dim", "test_reshape_extended_dims",
        "test_reduce_sum_keepdims_example", "test_reduce_sum_do_not_keepdims_random",
        "test_expand_dim_changed", "test_constant_pad", "test_unsqueeze_axis_0", "test_slice",
        "test_tile", "test_constantofshape_float_ones", "test_range_float_type_positive_delta"}) {
    SCOPED_TRACE(test);
    auto t = loadNodeTest(root / test);
    ASSERT_TRUE(t) << t.status().message();
    auto &[model, inputs] = *t;
    std::map<std::string, std::vector<int64_t>> shapes;
    for (const auto &[n, v] : inputs)
      shapes.emplace(n, v.shape());
    auto dims = bindInputShapes(model.graph(), shapes);
    ASSERT_TRUE(dims) << dims.status().message();
    EXPECT_FALSE(jit::prepareForGpu(model.graph(), *dims, strict())) << "static already?";
    auto names = jit::shapeInputs(model.graph(), *dims, inputs);
    ASSERT_TRUE(names) << names.status().message();
    EXPECT_FALSE(names->empty());
    jit::JitOptions jo = strict();
    for (const std::string &n : *names)
      jo.shapeValues.emplace(n, inputs.at(n));
    auto g = jit::prepareForGpu(model.graph(), *dims, jo);
    EXPECT_TRUE(g) << g.status().message();
  }
}

} // namespace
} // namespace dlc
