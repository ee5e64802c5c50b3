// Fuzz target `onnx_import`: bytes -> ModelProto -> Graph (external data refused) ->
// infer-shapes with the verifier -> the text form, which must read back unchanged.
#include "frontend/onnx/importer.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/fuzz/fuzz_util.h"

DLC_FUZZ_TARGET(onnx_import) {
  auto g = dlc::onnx::importBytes(dlc::fuzz::view(data, size), "", "fuzz.onnx");
  if (!g)
    return dlc::fuzz::debug("import", g.status().message());
  dlc::fuzz::inferAndRoundTrip(**g);
}
