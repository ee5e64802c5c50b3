// simplify: removes nodes that do nothing and collapses chains of data-movement ops.
//
// Rewrites, each local to one node (x is the node's data input):
//   identity(x)                                  -> x
//   dropout(x) in inference (training_mode absent
//     or a constant false; mask output unused)   -> x
//   reshape(x) / expand(x) whose static output type equals x's type          -> x
//   transpose(x) with the identity permutation   -> x
//   cast(x) to x's own dtype                     -> x
//   reshape(reshape(x, s1), s2)                  -> reshape(x, s2)   (s2 constant without 0,
//                                                                     or allowzero=1)
//   transpose(transpose(x, p1), p2)              -> transpose(x, p1 o p2), or x if identity
//   squeeze(unsqueeze(x, a), a), a constant      -> x
//   gather(layer_norm(x), i, axis a), the layer norm normalising axes after a only and read
//     by the gather alone                        -> layer_norm(gather(x, i, a))
//   op(transpose(x, p), y...), op elementwise or broadcast, the transpose used only here
//                                                -> transpose(op(x, y'...), p)
//     where each other operand y takes p's inverse for free: y = transpose(y', p), one
//     element, a constant (y' is its data padded to full rank and permuted), or a value a
//     transpose by p's inverse already reads (y' is that transpose). Sinking never adds a
//     node; it moves transposes toward the outputs, where inverse pairs meet and cancel.
//     So NHWC imports, conv -> to_nhwc -> relu -> add(residual) -> to_nchw -> conv, keep
//     transposes only at the graph's inputs and outputs.
// Nodes are visited in order and the walk repeats until nothing changes, so longer chains
// collapse fully. When a removed node's output is a graph output, the output keeps its public
// name and now returns the replacement value.
//
// Before: types inferred (the no-op tests compare static types). After: none of the rewrites
// above applies. Not done here: the inner node of a collapsed chain is left for dce; no
// arithmetic identities (x*1, x+0); transposes are not hoisted toward the inputs, nor sunk
// when their result has other uses or through non-elementwise ops (reductions, concat);
// refusals of partly matching chains are reported under --debug-only=simplify.
#include <algorithm>
#include <numeric>
#include <set>
#include <sstream>

#include "ir/match.h"
#include "passes/registry.h"
#include "passes/util/transpose_sink.h"

namespace dlc {

namespace {

/// The node's output 0 is replaced by `v` everywhere; the node is erased.
bool forward(Graph &g, Node *n, Value *v, const PassOptions &options, std::string_view why) {
  options.debugf("{}: removed: {}", n->describe(), why);
  replaceNode(g, n, {v});
  return true;
}

Node *producerWithOp(const Value *v, Op op) {
  return v && v->producer() && v->producer()->op() == op ? v->producer() : nullptr;
}

bool sameStaticType(const Value *a, const Value *b) {
  return a && b && a->type() == b->type() && a->type().isKnown() && a->shape().isStatic();
}

bool simplifyDropout(Graph &g, Node *n, const PassOptions &options) {
  const Value *mode = n->input(2);
  if (mode && !isConstantFalse(mode)) {
    options.debugf("{}: not removed: training_mode is not a constant false", n->describe());
    return false;
  }
  if (!isUnused(n->output(1))) {
    options.debugf("{}: not removed: its mask output is used", n->describe());
    return false;
  }
  return forward(g, n, n->input(0), options, "dropout in inference");
}

bool simplifyReshape(Graph &g, Node *n, const PassOptions &options) {
  if (sameStaticType(n->input(0), n->output(0)))
    return forward(g, n, n->input(0), options, "reshape to the same type");
  Node *inner = producerWithOp(n->input(0), Op::kReshape);
  if (!inner || !inner->hasInput(0))
    return false;
  const Attribute *allowZero = n->findAttr("allowzero");
  bool zeroIsLiteral = allowZero && allowZero->kind() == AttrKind::kInt && allowZero->i() != 0;
  std::optional<std::vector<int64_t>> shape = constantInts(n->input(1));
  if (!zeroIsLiteral && (!shape || std::count(shape->begin(), shape->end(), 0) > 0)) {
    options.debugf("{}: reshape chain kept: the outer shape may copy a dim (0) from the "
                   "inner result",
                   n->describe());
    return false;
  }
  options.debugf("{}: now reads the input of {}", n->describe(), inner->describe());
  n->setInput(0, inner->input(0));
  return true;
}

bool simplifyTranspose(Graph &g, Node *n, const PassOptions &options) {
  std::optional<std::vector<int64_t>> outer = transposePerm(*n);
  if (!outer)
    return false;
  if (isIdentityPerm(*outer))
    return forward(g, n, n->input(0), options, "identity permutation");
  Node *inner = producerWithOp(n->input(0), Op::kTranspose);
  if (!inner || !inner->hasInput(0))
    return false;
  std::optional<std::vector<int64_t>> first = transposePerm(*inner);
  if (!first || first->size() != outer->size())
    return false;
  std::vector<int64_t> composed(outer->size());
  for (size_t i = 0; i < composed.size(); ++i)
    composed[i] = (*first)[static_cast<size_t>((*outer)[i])];
  if (isIdentityPerm(composed))
    return forward(g, n, inner->input(0), options, "transposes cancel out");
  options.debugf("{}: composed with {}", n->describe(), inner->describe());
  n->setInput(0, inner->input(0));
  n->setAttr("perm", Attribute(composed));
  return true;
}

bool simplifyCast(Graph &g, Node *n, const PassOptions &options) {
  const Attribute *to = n->findAttr("to");
  const Value *in = n->input(0);
  if (!to || to->kind() != AttrKind::kDType || !in || in->dtype() != to->dtype())
    return false;
  return forward(g, n, n->input(0), options, "cast to the same dtype");
}

/// Axes normalised against `rank` (when known) and sorted.
std::vector<int64_t> normalizedAxes(std::vector<int64_t> axes, std::optional<int64_t> rank) {
  for (int64_t &a : axes)
    if (a < 0 && rank)
      a += *rank;
  std::sort(axes.begin(), axes.end());
  return axes;
}

bool simplifySqueeze(Graph &g, Node *n, const PassOptions &options) {
  Node *inner = producerWithOp(n->input(0), Op::kUnsqueeze);
  if (!inner || !inner->hasInput(0))
    return false;
  std::optional<std::vector<int64_t>> outerAxes = constantInts(n->input(1));
  std::optional<std::vector<int64_t>> innerAxes = constantInts(inner->input(1));
  if (!outerAxes || !innerAxes) {
    options.debugf("{}: squeeze(unsqueeze) kept: axes are not both constant", n->describe());
    return false;
  }
  const Shape &xShape = inner->input(0)->shape();
  std::optional<int64_t> rank;
  if (xShape.isRanked())
    rank = xShape.rank() + static_cast<int64_t>(innerAxes->size());
  if (normalizedAxes(*outerAxes, rank) != normalizedAxes(*innerAxes, rank)) {
    options.debugf("{}: squeeze(unsqueeze) kept: different axes", n->describe());
    return false;
  }
  return forward(g, n, inner->input(0), options, "squeeze undoes unsqueeze");
}

/// gather(layer_norm(x, scale, bias), i, axis a) -> layer_norm(gather(x, i, a), scale, bias)
/// when the layer norm normalises only axes after a and the gather alone reads it: the rows
/// kept are normalised alone (ViT's classifier reads token 0 of its final layer norm's 197).
bool hoistGatherAboveLayerNorm(Graph &g, Node *n, const PassOptions &options) {
  if (n->op() != Op::kGather)
    return false;
  Node *ln = producerWithOp(n->input(0), Op::kLayerNormalization);
  if (!ln || n->input(0) != ln->output(0)) // not its Mean or InvStdDev
    return false;
  const Value *x = ln->input(0), *indices = n->input(1);
  if (!x || !x->shape().isRanked() || !indices || !indices->shape().isRanked())
    return false;
  const int64_t rank = x->shape().rank();
  int64_t axis = n->getInt("axis"), lnAxis = ln->getInt("axis");
  axis += axis < 0 ? rank : 0;
  const int64_t lnFirst = lnAxis < 0 ? lnAxis + rank : lnAxis;
  if (axis >= lnFirst)
    return false; // the gather picks within the normalised axes
  if (ln->output(0)->uses().size() != 1 || g.isOutput(ln->output(0)) || !isUnused(ln->output(1)) ||
      !isUnused(ln->output(2))) {
    options.debugf("{}: kept below {}: the layer norm has other readers", n->describe(),
                   ln->describe());
    return false;
  }
  // The gather replaces axis `axis` by the indices' axes; a non-negative layer-norm axis moves.
  const int64_t shift = indices->shape().rank() - 1;
  std::vector<std::pair<std::string, Attribute>> attrs = ownAttributes(*ln);
  for (auto &[name, a] : attrs)
    if (name == "axis")
      a = Attribute(lnAxis < 0 ? lnAxis : lnAxis + shift);
  Expected<Value *> picked = addTypedNode(g, Op::kGather, {ln->input(0), n->input(1)}, n->name(), n,
                                          *n, ownAttributes(*n));
  if (!picked)
    return false;
  std::vector<Value *> lnInputs = {*picked, ln->input(1)};
  if (ln->hasInput(2))
    lnInputs.push_back(ln->input(2));
  Expected<Value *> y =
      addTypedNode(g, Op::kLayerNormalization, std::move(lnInputs), ln->name(), n, *ln, attrs);
  if (!y) {
    g.eraseNode((*picked)->producer());
    return false;
  }
  options.debugf("{}: moved above {}: normalises only the rows it keeps", n->describe(),
                 ln->describe());
  replaceOutputNamed(g, n, *y);
  return true;
}

bool simplifyChain(Graph &g, Node *n, const PassOptions &options) {
  switch (n->op()) {
  case Op::kIdentity:
    return forward(g, n, n->input(0), options, "identity");
  case Op::kDropout:
    return simplifyDropout(g, n, options);
  case Op::kReshape:
    return simplifyReshape(g, n, options);
  case Op::kExpand:
    if (!sameStaticType(n->input(0), n->output(0)))
      return false;
    return forward(g, n, n->input(0), options, "expand to the same shape");
  case Op::kTranspose:
    return simplifyTranspose(g, n, options);
  case Op::kCast:
    return simplifyCast(g, n, options);
  case Op::kSqueeze:
    return simplifySqueeze(g, n, options);
  default:
    return false;
  }
}

bool simplifyNode(Graph &g, Node *n, const PassOptions &options) {
  if (!n->hasInput(0) || !n->output(0))
    return false;
  return simplifyChain(g, n, options) || hoistGatherAboveLayerNorm(g, n, options) ||
         sinkTranspose(g, n, options);
}

class Simplify : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    constexpr int kMaxRounds = 32;
    // Rounds repeat refusals; the log keeps each line once, in first-seen order.
    std::ostringstream log;
    PassOptions quiet = options;
    quiet.debugOut = &log;
    bool changed = false;
    for (int round = 0; round < kMaxRounds; ++round) {
      bool roundChanged = false;
      for (Node *n : g.nodes())
        roundChanged |= simplifyNode(g, n, quiet);
      if (!roundChanged)
        break;
      changed = true;
    }
    if (options.debug && options.debugOut) {
      std::set<std::string> seen;
      std::istringstream lines(log.str());
      for (std::string line; std::getline(lines, line);)
        if (seen.insert(line).second)
          *options.debugOut << line << "\n";
    }
    return changed;
  }
};

} // namespace

std::unique_ptr<Pass> createSimplify() { return std::make_unique<Simplify>(); }

} // namespace dlc
