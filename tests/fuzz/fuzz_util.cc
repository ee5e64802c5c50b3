#include "tests/fuzz/fuzz_util.h"

#include <sstream>

#include "ir/parser.h"
#include "ir/printer.h"
#include "passes/pass_manager.h"
#include "tests/fuzz/fuzz_target.h"

namespace dlc::fuzz {

void checkTextRoundTrip(const Graph &g) {
  PrintOptions all;
  all.printConstants = true; // every constant's bytes: the text alone rebuilds the graph
  std::string first = printGraph(g, all);
  auto back = parseGraph(first, "<printed>");
  if (!back)
    fail("the printed graph does not parse", back.status().message() + "\n" + first);
  std::string second = printGraph(**back, all);
  if (second != first)
    fail("the graph prints differently after a round trip", first + "\n----\n" + second);
}

void inferAndRoundTrip(Graph &g) {
  auto pipeline = parsePipeline("infer-shapes");
  if (!pipeline)
    fail("the pipeline does not parse", pipeline.status().message());
  std::ostringstream sink;
  PipelineOptions po;
  po.verifyEach = true;
  po.out = &sink;
  po.err = &sink;
  if (Status st = runPipeline(g, *pipeline, po); !st.isOk())
    return debug("infer-shapes", st.message());
  debug("ok", "");
  checkTextRoundTrip(g);
}

} // namespace dlc::fuzz
