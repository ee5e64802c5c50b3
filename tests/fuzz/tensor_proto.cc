// Fuzz target `tensor_proto`: bytes -> an ONNX TensorProto (the test data sets' input_0.pb)
// -> a tensor; external data is refused.
#include "frontend/onnx/tensor_file.h"
#include "tests/fuzz/fuzz_target.h"

DLC_FUZZ_TARGET(tensor_proto) {
  std::string name;
  auto t = dlc::onnx::parseTensorProto(dlc::fuzz::view(data, size), "fuzz.pb", &name);
  if (t && t->numElements() > 0 && !t->raw())
    dlc::fuzz::fail("a tensor without data", t->type().str());
}
