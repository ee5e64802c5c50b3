// Placeholder: the printer lands with the text-form work.
#include "ir/printer.h"

#include <sstream>

namespace dlc {
void printGraph(const Graph &g, std::ostream &os, const PrintOptions &) {
  os << "graph @" << g.name() << " {}\n";
}
std::string printGraph(const Graph &g, const PrintOptions &opts) {
  std::ostringstream os;
  printGraph(g, os, opts);
  return os.str();
}
std::string printNode(const Node &n) { return std::string(n.opName()); }
} // namespace dlc
