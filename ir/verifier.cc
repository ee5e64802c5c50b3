// The IR verifier. Checks run in this order and the first problem is returned:
//   1. every value is registered under its unique name and knows its producer;
//   2. every node input is defined before use: a graph input, a constant, or an output of an
//      earlier node (this also rules out cycles);
//   3. use lists match node inputs exactly;
//   4. arity per the op table; required inputs present;
//   5. attributes per the op's schema: known names, right kinds, required ones present;
//   6. the op's own structural checks (OpDef::verify: a body's signature against the node),
//      then every body (graph attribute), recursively, with errors as
//      `verifier: node 'l' (Loop): body 'body': <what>`;
//   7. (VerifyOptions::checkTypes) recorded output types are compatible with inference;
//   8. graph outputs are live values of this graph, compatible with their declared types.
// Bodies are closed: a value of an enclosing graph used inside a body is `not a value of this
// graph` (captured values are explicit inputs of the node and of the body).
// Pointers are checked for membership before they are followed, so a dangling input (a value
// whose node was erased) is reported, not dereferenced.
#include "ir/verifier.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/text_util.h"

namespace dlc {

namespace {

using text::formatName;
using text::formatType;

std::string ref(const Value *v) { return "%" + formatName(v->name()); }

template <typename... Args> Status fail(fmt::format_string<Args...> f, Args &&...args) {
  return invalidArgument("verifier: {}", fmt::format(f, std::forward<Args>(args)...));
}

/// Ops not yet given a row in the op table accept any arity and infer nothing (see op.cc).
bool isPlaceholderRow(const OpDef &d) {
  return d.minOutputs == 0 && d.maxOutputs == -1 && d.minInputs == 0 && d.maxInputs == -1 &&
         d.attrs.empty() && !d.infer;
}

std::string arityText(int lo, int hi) {
  if (hi < 0)
    return fmt::format("at least {}", lo);
  if (lo == hi)
    return std::to_string(lo);
  return fmt::format("{} to {}", lo, hi);
}

class Verifier {
public:
  Verifier(const Graph &g, const VerifyOptions &opts) : g_(g), opts_(opts) {}

  Status run() {
    for (const auto &[name, a] : g_.annotations())
      if (!isAnnotation(name))
        return fail("graph attribute '{}' is not an annotation (a name with a '.')", name);
    DLC_RETURN_IF_ERROR(checkDefinitions());
    DLC_RETURN_IF_ERROR(checkOrder());
    DLC_RETURN_IF_ERROR(checkUses());
    for (const Node *n : nodes_) {
      DLC_RETURN_IF_ERROR(checkArity(*n));
      DLC_RETURN_IF_ERROR(checkAttrs(*n));
      DLC_RETURN_IF_ERROR(checkBodies(*n));
      if (opts_.checkTypes)
        DLC_RETURN_IF_ERROR(checkTypes(*n));
    }
    return checkOutputs();
  }

private:
  Status define(const Value *v) {
    if (!names_.insert(v->name()).second)
      return fail("value {}: defined more than once", ref(v));
    if (g_.findValue(v->name()) != v)
      return fail("value {}: not registered in the graph under its name", ref(v));
    if (v->graph() != &g_)
      return fail("value {}: belongs to another graph", ref(v));
    live_.insert(v);
    liveOrder_.push_back(v);
    return Status::ok();
  }

  Status checkDefinitions() {
    nodes_ = g_.nodes();
    nodeSet_.insert(nodes_.begin(), nodes_.end());
    for (const Value *v : g_.inputs())
      DLC_RETURN_IF_ERROR(define(v));
    for (const Value *v : g_.constants())
      DLC_RETURN_IF_ERROR(define(v));
    for (const Node *n : nodes_) {
      for (int i = 0; i < n->numOutputs(); ++i) {
        const Value *v = n->output(i);
        if (!v)
          continue;
        DLC_RETURN_IF_ERROR(define(v));
        if (v->producer() != n || v->producerIndex() != i)
          return fail("{}: output {} {} does not name this node as its producer", n->describe(), i,
                      ref(v));
      }
    }
    return Status::ok();
  }

  Status checkOrder() {
    std::unordered_set<const Value *> defined(g_.inputs().begin(), g_.inputs().end());
    defined.insert(g_.constants().begin(), g_.constants().end());
    for (const Node *n : nodes_) {
      for (int i = 0; i < n->numInputs(); ++i) {
        const Value *v = n->input(i);
        if (!v || defined.count(v))
          continue;
        if (!live_.count(v))
          return fail("{}: input {} is not a value of this graph", n->describe(), i);
        return fail("{}: input {} {} is used before its definition", n->describe(), i, ref(v));
      }
      for (const Value *v : n->outputs())
        if (v)
          defined.insert(v);
    }
    return Status::ok();
  }

  Status checkUses() {
    // Each use names a distinct input slot, holding the value, of a node in the graph...
    for (const Value *v : liveOrder_) {
      std::set<std::pair<const Node *, int>> seen;
      for (const Use &u : v->uses()) {
        if (!nodeSet_.count(u.node))
          return fail("value {}: use list names a node that is not in the graph", ref(v));
        if (u.index < 0 || u.node->input(u.index) != v)
          return fail("value {}: use list names input {} of {}, which is not this value", ref(v),
                      u.index, u.node->describe());
        if (!seen.insert({u.node, u.index}).second)
          return fail("value {}: use list names input {} of {} twice", ref(v), u.index,
                      u.node->describe());
      }
    }
    // ...so every input is on its value's use list when the value has as many uses as inputs
    // name it. (Searching the list once per input is quadratic in a value's uses: a weight
    // or a scalar shared by thousands of nodes.) Only a value short of uses is searched, to
    // name the input missing from its list.
    std::unordered_map<const Value *, size_t> slots;
    for (const Node *n : nodes_)
      for (const Value *v : n->inputs())
        if (v)
          ++slots[v];
    for (const Node *n : nodes_) {
      for (int i = 0; i < n->numInputs(); ++i) {
        const Value *v = n->input(i);
        if (!v || slots[v] == v->uses().size())
          continue;
        Use u{const_cast<Node *>(n), i};
        if (std::find(v->uses().begin(), v->uses().end(), u) == v->uses().end())
          return fail("{}: input {} {} is missing from the value's use list", n->describe(), i,
                      ref(v));
      }
    }
    return Status::ok();
  }

  Status checkArity(const Node &n) {
    const OpDef &d = n.def();
    if (n.numInputs() < d.minInputs || (d.maxInputs >= 0 && n.numInputs() > d.maxInputs))
      return fail("{}: has {} inputs, expected {}", n.describe(), n.numInputs(),
                  arityText(d.minInputs, d.maxInputs));
    if (n.numOutputs() < d.minOutputs || (d.maxOutputs >= 0 && n.numOutputs() > d.maxOutputs))
      return fail("{}: has {} outputs, expected {}", n.describe(), n.numOutputs(),
                  arityText(d.minOutputs, d.maxOutputs));
    for (int i = 0; i < d.minInputs; ++i)
      if (!n.hasInput(i))
        return fail("{}: required input {} is absent", n.describe(), i);
    return Status::ok();
  }

  Status checkAttrs(const Node &n) {
    const OpDef &d = n.def();
    if (isPlaceholderRow(d))
      return Status::ok();
    for (const auto &[name, attr] : n.attrs()) {
      if (isAnnotation(name)) // pass annotations (`fuse.group`, `mem.offset`): not op attributes
        continue;
      const AttrSpec *spec = d.findAttr(name);
      if (!spec)
        return fail("{}: unknown attribute '{}'", n.describe(), name);
      if (spec->kind != attr.kind())
        return fail("{}: attribute '{}' must be {}, got {}", n.describe(), name,
                    attrKindName(spec->kind), attrKindName(attr.kind()));
    }
    for (const AttrSpec &spec : d.attrs)
      if (spec.required && !n.hasAttr(spec.name))
        return fail("{}: missing required attribute '{}'", n.describe(), spec.name);
    return Status::ok();
  }

  Status checkBodies(const Node &n) {
    if (n.def().verify) {
      Status s = n.def().verify(n);
      if (!s)
        return fail("{}: {}", n.describe(), s.message());
    }
    for (const auto &[name, attr] : n.attrs()) {
      if (attr.kind() != AttrKind::kGraph)
        continue;
      Status s = Verifier(attr.graph(), opts_).run();
      if (!s) {
        std::string_view msg = s.message();
        if (msg.starts_with("verifier: "))
          msg.remove_prefix(10);
        return fail("{}: body '{}': {}", n.describe(), name, msg);
      }
    }
    return Status::ok();
  }

  Status checkTypes(const Node &n) {
    if (!n.def().infer)
      return Status::ok();
    std::vector<TensorType> types;
    std::vector<const Tensor *> constants;
    for (const Value *v : n.inputs()) {
      if (v && !v->type().isKnown())
        return Status::ok(); // nothing to check against before the inputs are typed
      types.push_back(v ? v->type() : TensorType());
      constants.push_back(v && v->isConstant() ? &v->constant() : nullptr);
    }
    InferContext ctx(n, std::move(types), std::move(constants), {});
    Status s = inferNode(ctx);
    if (!s)
      return fail("{}", s.message());
    for (int i = 0; i < n.numOutputs(); ++i) {
      const Value *v = n.output(i);
      if (!v || v->type() == TensorType())
        continue;
      if (!typesCompatible(v->type(), ctx.outputType(i)))
        return fail("{}: output {} {} has type {} but inference gives {}", n.describe(), i, ref(v),
                    formatType(v->type()), formatType(ctx.outputType(i)));
    }
    return Status::ok();
  }

  Status checkOutputs() {
    for (size_t i = 0; i < g_.outputs().size(); ++i) {
      const Graph::Output &o = g_.outputs()[i];
      if (!o.value || !live_.count(o.value))
        return fail("output {} '{}': not a live value of this graph", i, o.name);
      if (!typesCompatible(o.declared, o.value->type()))
        return fail("output {} '{}': declared type {} but {} has type {}", i, o.name,
                    formatType(o.declared), ref(o.value), formatType(o.value->type()));
    }
    return Status::ok();
  }

  const Graph &g_;
  const VerifyOptions &opts_;
  std::vector<Node *> nodes_;
  std::unordered_set<const Node *> nodeSet_;
  std::unordered_set<std::string> names_;
  std::unordered_set<const Value *> live_;
  std::vector<const Value *> liveOrder_;
};

} // namespace

Status verifyGraph(const Graph &g, const VerifyOptions &opts) { return Verifier(g, opts).run(); }

} // namespace dlc
