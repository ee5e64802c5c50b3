// place-devices: gives every node a device (after TensorFlow's placer, DESIGN.md "Placement").
//
// Constraints, in order:
//  1. A device already set on a node (from the model, the text IR or the user) stays.
//  2. With `gpu=false` every other node goes to `cpu`.
//  3. Small integer shape computations go to `cpu`: nodes whose outputs are all integer or
//     bool with a static shape of at most 64 elements, and whose present inputs are too (Shape
//     and Size read only their input's type, so any input will do). This is the Shape ->
//     Gather -> Concat arithmetic that fold-constants could not resolve; a kernel launch costs
//     more than computing it on the host.
//  4. A node the GPU backend can run goes to `gpu:0`. The backend answers through
//     PassOptions::gpuSupport (passes/placement.h); without an answer (plain `dlc opt`) the GPU
//     is a fake device that runs every op except those listed in `gpu-unsupported`.
//  5. Any other node falls back to `cpu` with a warning that names the node and the reason
//     (soft placement, the default). With `strict=true` that is an error instead, listing every
//     such node and its reason at once.
//
// Before: types inferred (rule 3 reads them). After: every node has a device.
// Not done here: copies between devices (insert-copies), colocation groups, more than one GPU;
// a node whose shapes are not static is asked about like any other (the backend says no).
#include <algorithm>
#include <sstream>

#include "passes/registry.h"

namespace dlc {

namespace {

constexpr int64_t kShapeComputationLimit = 64;

bool isIntegerLike(DType t) { return isInteger(t) || t == DType::kBool; }

/// A small, static, integer or bool value.
bool isSmallInteger(const Value *v) {
  if (!isIntegerLike(v->dtype()))
    return false;
  std::optional<int64_t> count = v->shape().numElements();
  return count && *count <= kShapeComputationLimit;
}

/// Rule 3: every output is a small integer value, and so is every present input unless the
/// node reads only its input's type.
bool isShapeComputation(const Node &n) {
  for (const Value *v : n.outputs())
    if (v && !isSmallInteger(v))
      return false;
  if (n.op() == Op::kShape || n.op() == Op::kSize)
    return true;
  bool any = false;
  for (const Value *v : n.inputs()) {
    if (!v)
      continue;
    if (!isSmallInteger(v))
      return false;
    any = true;
  }
  return any;
}

/// Splits `a|b|c` (op text names) and checks each name.
Expected<std::vector<Op>> parseOpList(std::string_view text) {
  std::vector<Op> ops;
  while (!text.empty()) {
    size_t bar = text.find('|');
    std::string_view name = text.substr(0, bar);
    std::optional<Op> op = parseOpName(name);
    if (!op)
      return invalidArgument("option 'gpu-unsupported': unknown op '{}' (use text names such as "
                             "'top_k', separated by '|')",
                             name);
    ops.push_back(*op);
    text = bar == std::string_view::npos ? std::string_view() : text.substr(bar + 1);
  }
  return ops;
}

class PlaceDevices : public Pass {
public:
  std::vector<PassOptionSpec> options() const override {
    return {
        {"gpu", PassOptionSpec::Kind::kBool,
         "place nodes on gpu:0 where the GPU can run them (default true)"},
        {"strict", PassOptionSpec::Kind::kBool,
         "a node the GPU cannot run is an error instead of a CPU fallback (default false)"},
        {"gpu-unsupported", PassOptionSpec::Kind::kString,
         "ops (text names, '|'-separated) the GPU is assumed to lack, for testing (default none)"},
    };
  }

  Expected<bool> run(Graph &g, const PassOptions &options) override {
    DLC_ASSIGN_OR_RETURN(bool gpu, options.getBool("gpu", true));
    DLC_ASSIGN_OR_RETURN(bool strict, options.getBool("strict", false));
    DLC_ASSIGN_OR_RETURN(std::vector<Op> unsupported,
                         parseOpList(options.getString("gpu-unsupported", "")));

    std::vector<std::pair<Node *, std::string>> refused; // with strict=true
    bool changed = false;
    for (Node *n : g.nodes()) {
      if (n->device().isSet()) {
        options.debugf("{}: keeps its device {}", n->describe(), n->device().str());
        continue;
      }
      std::string why;
      if (!gpu) {
        place(*n, Device::cpu(), "the GPU is off (gpu=false)", options);
      } else if (isShapeComputation(*n)) {
        place(*n, Device::cpu(), "small integer shape computation", options);
      } else if (gpuCanRun(*n, unsupported, options, why)) {
        place(*n, Device::gpu(0), "", options);
      } else if (strict) {
        refused.emplace_back(n, why);
        continue;
      } else {
        options.warnf("{}: runs on cpu: {}", n->describe(), why);
        place(*n, Device::cpu(), "no GPU kernel: " + why, options);
      }
      changed = true;
    }
    if (!refused.empty()) {
      std::ostringstream list;
      for (const auto &[n, why] : refused)
        list << "\n  " << n->describe() << ": " << why;
      return unimplemented("{} node(s) cannot run on the GPU and strict=true forbids the CPU "
                           "fallback:{}",
                           refused.size(), list.str());
    }
    return changed;
  }

private:
  static bool gpuCanRun(const Node &n, const std::vector<Op> &unsupported,
                        const PassOptions &options, std::string &why) {
    if (std::find(unsupported.begin(), unsupported.end(), n.op()) != unsupported.end()) {
      why = fmt::format("op '{}' is listed in gpu-unsupported", n.opName());
      return false;
    }
    if (!options.gpuSupport)
      return true;
    if (options.gpuSupport(n, &why))
      return true;
    if (why.empty())
      why = fmt::format("the GPU backend has no kernel for op '{}'", n.opName());
    return false;
  }

  static void place(Node &n, Device d, const std::string &why, const PassOptions &options) {
    n.setDevice(d);
    if (why.empty())
      options.debugf("{}: {}", n.describe(), d.str());
    else
      options.debugf("{}: {} ({})", n.describe(), d.str(), why);
  }
};

} // namespace

std::unique_ptr<Pass> createPlaceDevices() { return std::make_unique<PlaceDevices>(); }

} // namespace dlc
