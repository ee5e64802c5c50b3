// Fuzz target `pipeline`: bytes -> an ONNX model -> the load pipeline (-O1) -> the reference
// backend on random inputs (symbolic dims bound to 2; tensors capped by fuzz_common's limits).
#include <algorithm>
#include <map>
#include <random>

#include "frontend/onnx/importer.h"
#include "runtime/jit/model.h"
#include "runtime/random_tensor.h"
#include "tests/fuzz/fuzz_target.h"

DLC_FUZZ_TARGET(pipeline) {
  auto g = dlc::onnx::importBytes(dlc::fuzz::view(data, size), "", "fuzz.onnx");
  if (!g)
    return dlc::fuzz::debug("import", g.status().message());
  auto model = dlc::Model::fromGraph(std::move(*g), {}, "fuzz.onnx");
  if (!model)
    return dlc::fuzz::debug("pipeline", model.status().message());
  dlc::SessionOptions so;
  so.backend = dlc::Backend::kCpu;
  auto session = model->createSession(so);
  if (!session)
    return dlc::fuzz::debug("session", session.status().message());
  std::mt19937_64 rng(size);
  std::map<std::string, dlc::Tensor> inputs;
  for (const dlc::TensorInfo &in : model->inputs()) {
    if (!in.type.isKnown() || !in.type.shape.isRanked())
      return;
    std::vector<int64_t> shape;
    int64_t elements = 1;
    for (const dlc::Dim &d : in.type.shape.dims()) {
      shape.push_back(d.isKnown() ? d.value() : 2);
      if (shape.back() > (1 << 20) || (elements *= std::max<int64_t>(shape.back(), 1)) > (1 << 20))
        return; // keep each execution small: a fuzzer wants many of them
    }
    auto t = dlc::randomTensor(in.type.dtype, shape, rng);
    if (!t)
      return dlc::fuzz::debug("input", t.status().message());
    inputs.emplace(in.name, std::move(*t));
  }
  auto out = session->run(inputs);
  dlc::fuzz::debug(out ? "ran" : "run", out ? "" : out.status().message());
}
