#include "tools/kbench/tensor_map.h"

#include <cuda_runtime_api.h>

#include "runtime/tensor_map.h"

namespace dlc::kbench {

bool encodeTensorMap(const rt::TensorMapLayout &m, void *buffer, CUtensorMap *out) {
  static const auto encode = [] {
    void *fn = nullptr;
    cudaDriverEntryPointQueryResult q{};
    if (cudaGetDriverEntryPoint("cuTensorMapEncodeTiled", &fn, cudaEnableDefault, &q) !=
            cudaSuccess ||
        q != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<decltype(&::cuTensorMapEncodeTiled)>(fn);
  }();
  return encode && rt::encodeTensorMap(encode, m, buffer, out) == CUDA_SUCCESS;
}

} // namespace dlc::kbench
