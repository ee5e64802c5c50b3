// The ConvTranspose family (codegen/conv_transpose.cc) on the host emulator against the
// reference backend: 1-D, 2-D and 3-D, strides, dilations, explicit pads, output_padding,
// output_shape, SAME_UPPER and SAME_LOWER, groups, a bias, an f16 case, and a fused ReLU
// epilogue. Inputs are the emitter tests' distinct values (every element differs).
#include "host_check.h"

namespace dlc::codegen::testing {
namespace {

std::string graph(const std::string &x, const std::string &w, const std::string &attrs,
                  bool bias = false, bool relu = false) {
  std::string sig = fmt::format("%x: {}, %w: {}", x, w);
  std::string node =
      fmt::format("  %c = conv_transpose(%x, %w{}) {{{}}} : ?", bias ? ", %b" : "", attrs);
  if (bias) {
    // The bias has the output channels: w's dim 1 times the groups.
    const size_t open = w.find('[') + 1, comma = w.find(',', open), next = w.find(',', comma + 1);
    const int64_t perGroup = std::stoll(w.substr(comma + 1, next - comma - 1));
    const size_t g = attrs.find("group = ");
    const int64_t groups = g == std::string::npos ? 1 : std::stoll(attrs.substr(g + 8));
    sig += fmt::format(", %b: {}[{}]", x.substr(0, x.find('[')), perGroup * groups);
  }
  std::string body = node;
  if (relu)
    body += "\n  %y = relu(%c) : ?";
  return fmt::format("graph @ct({}) -> (y: ?) {{\n{}\n  return %{}\n}}", sig, body,
                     relu ? "y" : "c");
}

TEST(ConvTransposeEmit, HostRunsMatchTheReference) {
  const std::vector<HostCase> cases = {
      {graph("f32[1,2,5]", "f32[2,3,3]", "strides = [2]"), {}, 1e-5},
      {graph("f32[2,4,4,5]", "f32[4,3,3,2]",
             "strides = [2, 1], pads = [1, 0, 0, 1], "
             "dilations = [1, 2], output_padding = [1, 0]",
             true),
       {},
       1e-5},
      {graph("f32[1,4,3,3]", "f32[4,2,3,3]", "group = 2, strides = [3, 2]", true, true), {}, 1e-5},
      {graph("f32[1,1,3,4]", "f32[1,2,3,3]", "strides = [3, 2], output_shape = [10, 8]"), {}, 1e-5},
      {graph("f32[1,2,3,3]", "f32[2,1,3,3]", "strides = [2, 2], auto_pad = \"SAME_UPPER\""),
       {},
       1e-5},
      {graph("f32[1,2,4,3]", "f32[2,1,2,2]", "strides = [2, 2], auto_pad = \"SAME_LOWER\""),
       {},
       1e-5},
      {graph("f32[1,2,3,4,2]", "f32[2,2,2,2,2]", "strides = [2, 1, 2], pads = [0, 1, 0, 1, 0, 1]"),
       {},
       1e-5},
      {graph("f16[1,3,4,4]", "f16[3,2,3,3]", "strides = [2, 2], pads = [1, 1, 1, 1]", true),
       {},
       1e-2},
  };
  expectHostRunsMatchReference(cases);
}

} // namespace
} // namespace dlc::codegen::testing
