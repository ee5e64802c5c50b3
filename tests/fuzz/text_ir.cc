// Fuzz target `text_ir`: bytes -> dlc's text IR parser -> verifier -> print -> parse -> print:
// whatever the parser accepts must print to text that reads back to the same graph.
#include "ir/parser.h"
#include "ir/verifier.h"
#include "tests/fuzz/fuzz_target.h"
#include "tests/fuzz/fuzz_util.h"

DLC_FUZZ_TARGET(text_ir) {
  auto g = dlc::parseGraph(dlc::fuzz::view(data, size), "fuzz.dlc");
  if (!g)
    return;
  if (!dlc::verifyGraph(**g).isOk())
    return;
  dlc::fuzz::checkTextRoundTrip(**g);
  dlc::fuzz::inferAndRoundTrip(**g);
}
