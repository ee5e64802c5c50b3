// The printer of the text IR; the grammar is ir/TEXT_FORMAT.md. Output is deterministic:
// constants in creation order, nodes in graph order, attributes sorted by name. A graph
// attribute prints as a nested graph whose statements are indented two more spaces than the
// node that holds it.
#include "ir/printer.h"

#include <sstream>

#include "ir/tensor_text.h"
#include "ir/text_util.h"

namespace dlc {

using text::formatName;
using text::formatType;

namespace {

std::string valueRef(const Value *v) { return v ? "%" + formatName(v->name()) : "_"; }

template <typename T, typename F> std::string list(const std::vector<T> &xs, F fmtOne) {
  std::string s = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    if (i)
      s += ", ";
    s += fmtOne(xs[i]);
  }
  return s + "]";
}

void printGraphAt(const Graph &g, std::ostream &os, const PrintOptions &opts,
                  const std::string &indent);

std::string formatAttr(const Attribute &a, const PrintOptions &opts, const std::string &indent) {
  switch (a.kind()) {
  case AttrKind::kInt:
    return std::to_string(a.i());
  case AttrKind::kFloat:
    return text::formatF32(a.f());
  case AttrKind::kString:
    return text::quoteString(a.s());
  case AttrKind::kInts:
    if (a.ints().empty())
      return "ints[]";
    return list(a.ints(), [](int64_t v) { return std::to_string(v); });
  case AttrKind::kFloats:
    if (a.floats().empty())
      return "floats[]";
    return list(a.floats(), text::formatF32);
  case AttrKind::kStrings:
    if (a.strings().empty())
      return "strings[]";
    return list(a.strings(), [](const std::string &s) { return text::quoteString(s); });
  case AttrKind::kTensor:
    return text::formatTensor(a.tensor(), opts);
  case AttrKind::kDType:
    return std::string(dtypeName(a.dtype()));
  case AttrKind::kGraph: {
    std::ostringstream os;
    printGraphAt(a.graph(), os, opts, indent);
    return os.str();
  }
  }
  return "?";
}

/// `{name = value, ...}`, sorted by name.
std::string formatAttrs(const AttrMap &attrs, const PrintOptions &opts, const std::string &indent) {
  std::string s = "{";
  for (const auto &[name, attr] : attrs)
    s += (s.size() > 1 ? ", " : "") + formatName(name) + " = " + formatAttr(attr, opts, indent);
  return s + '}';
}

/// `indent` is the indentation of the line the node starts on.
std::string formatNode(const Node &n, const PrintOptions &opts, const std::string &indent) {
  std::string s;
  for (int i = 0; i < n.numOutputs(); ++i)
    s += (i ? ", " : "") + valueRef(n.output(i));
  s += n.numOutputs() ? " = " : "= ";
  s += n.opName();
  s += '(';
  for (int i = 0; i < n.numInputs(); ++i)
    s += (i ? ", " : "") + valueRef(n.input(i));
  s += ')';
  if (!n.attrs().empty())
    s += " " + formatAttrs(n.attrs(), opts, indent);
  for (int i = 0; i < n.numOutputs(); ++i) {
    s += i ? ", " : " : ";
    const Value *v = n.output(i);
    s += v ? formatType(v->type()) : "_";
  }
  if (n.device().isSet())
    s += " @" + n.device().str();
  if (!n.name().empty())
    s += " loc(" + text::quoteString(n.name()) + ")";
  return s;
}

/// The graph from `graph @` to its closing `}` (no newline after it); its statements are
/// indented by `indent` plus two spaces.
void printGraphAt(const Graph &g, std::ostream &os, const PrintOptions &opts,
                  const std::string &indent) {
  std::string inner = indent + "  ";
  os << "graph @" << formatName(g.name()) << '(';
  for (size_t i = 0; i < g.inputs().size(); ++i) {
    const Value *v = g.inputs()[i];
    os << (i ? ", " : "") << valueRef(v) << ": " << formatType(v->type());
  }
  os << ") -> (";
  for (size_t i = 0; i < g.outputs().size(); ++i) {
    const Graph::Output &o = g.outputs()[i];
    os << (i ? ", " : "") << formatName(o.name) << ": " << formatType(o.declared);
  }
  os << ')';
  if (!g.annotations().empty())
    os << " attributes " << formatAttrs(g.annotations(), opts, indent);
  os << " {\n";
  for (const Value *c : g.constants())
    os << inner << valueRef(c) << " = constant " << text::formatTensor(c->constant(), opts) << '\n';
  for (const Node *n : g.nodes())
    os << inner << formatNode(*n, opts, inner) << '\n';
  os << inner << "return";
  for (size_t i = 0; i < g.outputs().size(); ++i)
    os << (i ? ", " : " ") << valueRef(g.outputs()[i].value);
  os << '\n' << indent << '}';
}

} // namespace

void printGraph(const Graph &g, std::ostream &os, const PrintOptions &opts) {
  printGraphAt(g, os, opts, "");
  os << '\n';
}

std::string printGraph(const Graph &g, const PrintOptions &opts) {
  std::ostringstream os;
  printGraph(g, os, opts);
  return os.str();
}

std::string printNode(const Node &n) { return formatNode(n, PrintOptions(), ""); }

} // namespace dlc
