// Fuzz target `package`: bytes -> the model library's package (runtime/package.h) through
// the C API a host program calls: dlc_model_load_memory, the model's interface, a CPU session,
// inputs of zeros (symbolic dims at their smallest size) and a run.
#include <string>
#include <vector>

#include "dlc/dlc.h"
#include "tests/fuzz/fuzz_target.h"

DLC_FUZZ_TARGET(package) {
  dlc_model *model = nullptr;
  if (dlc_model_load_memory(data, size, "fuzz.dlcpkg", &model) != DLC_OK)
    return;
  int32_t inputs = 0, outputs = 0;
  dlc_model_num_inputs(model, &inputs);
  dlc_model_num_outputs(model, &outputs);
  dlc_session *session = nullptr;
  if (dlc_session_create(model, DLC_DEVICE_CPU, &session) == DLC_OK) {
    std::vector<std::vector<int64_t>> shapes(static_cast<size_t>(inputs));
    std::vector<std::vector<uint8_t>> buffers(static_cast<size_t>(inputs));
    bool bound = true;
    for (int32_t i = 0; i < inputs && bound; ++i) {
      dlc_tensor_info info{};
      if (dlc_model_input(model, i, &info) != DLC_OK)
        break;
      auto &shape = shapes[static_cast<size_t>(i)];
      int64_t elements = 1;
      for (int32_t d = 0; d < info.ndim; ++d) {
        int64_t size = info.shape[d];
        if (size < 0) {
          int64_t lo = 1, hi = 1;
          if (info.dim_names[d])
            dlc_model_dim_range(model, info.dim_names[d], &lo, &hi);
          size = lo;
        }
        shape.push_back(size);
        if (size > (int64_t{1} << 20) || __builtin_mul_overflow(elements, size, &elements) ||
            elements > (int64_t{1} << 20))
          bound = false;
      }
      if (!bound)
        break;
      int bits = info.dtype.bits == 1 ? 8 : info.dtype.bits;
      auto &bytes = buffers[static_cast<size_t>(i)];
      bytes.assign(static_cast<size_t>(elements) * static_cast<size_t>(bits / 8 + 1), 0);
      DLTensor t{};
      t.data = bytes.data();
      t.device = {kDLCPU, 0};
      t.ndim = info.ndim;
      t.dtype = info.dtype;
      t.shape = shape.data();
      dlc_session_set_input(session, info.name, &t);
    }
    if (bound && dlc_session_run(session) == DLC_OK)
      for (int32_t i = 0; i < outputs; ++i) {
        dlc_tensor_info info{};
        const DLTensor *out = nullptr;
        if (dlc_model_output(model, i, &info) == DLC_OK)
          dlc_session_get_output(session, info.name, &out);
      }
    dlc_session_free(session);
  }
  dlc_model_free(model);
}
