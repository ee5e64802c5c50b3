// Fuzz target `tf_import`: bytes -> GraphDef (binary, and text when the bytes are text) ->
// Graph -> infer-shapes with the verifier -> the text form, which must read back unchanged.
#include <algorithm>

#include "frontend/tf/importer.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/fuzz/fuzz_util.h"

DLC_FUZZ_TARGET(tf_import) {
  std::string_view bytes = dlc::fuzz::view(data, size);
  bool printable = std::all_of(bytes.begin(), bytes.end(), [](char c) {
    return c == '\n' || c == '\t' || c == '\r' || (c >= 32 && c < 127);
  });
  for (bool text : {false, true}) {
    if (text && !printable)
      break;
    dlc::tf::ImportOptions opts;
    opts.text = text;
    auto g = dlc::tf::importBytes(bytes, text ? "fuzz.pbtxt" : "fuzz.pb", opts);
    if (g)
      dlc::fuzz::inferAndRoundTrip(**g);
  }
}
