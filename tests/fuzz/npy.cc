// Fuzz target `npy`: bytes -> the .npy reader (parseNpy, shared with readNpy and the C API's
// dlc_array_read_npy); an accepted array must have the size its header says.
#include "runtime/tensor_io.h"
#include "tests/fuzz/fuzz_target.h"

DLC_FUZZ_TARGET(npy) {
  auto t = dlc::parseNpy(dlc::fuzz::view(data, size), "fuzz.npy");
  if (!t)
    return;
  if (static_cast<size_t>(t->byteSize()) > size)
    dlc::fuzz::fail("an array larger than its file", t->type().str());
  if (t->dtype() == dlc::DType::kBool) // stored as 0 or 1, whatever the file held
    for (int64_t i = 0; i < t->numElements(); ++i)
      if (static_cast<const uint8_t *>(t->raw())[i] > 1)
        dlc::fuzz::fail("a bool that is neither 0 nor 1", t->type().str());
}
