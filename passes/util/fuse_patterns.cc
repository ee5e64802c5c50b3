#include "passes/util/fuse_patterns.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include "ir/match.h"

namespace dlc::passes {

namespace {

/// The producer of `v` when it has op `op`.
Node *producer(const Value *v, Op op) {
  return v && v->producer() && v->producer()->op() == op ? v->producer() : nullptr;
}

/// Whether `v` is a one-element constant equal to `want` up to the rounding of its dtype
/// (float16 sqrt(2) is 1.4140625, 1.1e-4 below it).
bool near(const Value *v, double want) {
  const std::optional<double> c = scalarConstant(v);
  if (!c)
    return false;
  const double rel = v->dtype() == DType::kF16 ? 1e-3 : v->dtype() == DType::kBF16 ? 8e-3 : 1e-4;
  return std::abs(*c - want) <= rel * std::abs(want);
}

/// For a binary op: the operand that is not `v` (either order), or nullptr.
Value *otherOperand(const Node &n, const Value *v) {
  if (n.numInputs() != 2)
    return nullptr;
  if (n.input(0) == v)
    return n.input(1);
  return n.input(1) == v ? n.input(0) : nullptr;
}

/// The single node using `v` (all its uses are by that node; not a graph output).
Node *soleUser(const Value *v) {
  if (!v || v->uses().empty() || v->graph()->isOutput(v))
    return nullptr;
  Node *n = v->uses().front().node;
  for (const Use &u : v->uses())
    if (u.node != n)
      return nullptr;
  return n;
}

/// The axes of a Reduce* node with keepdims=1 and constant (or absent: all) axes, normalised
/// and sorted; nullopt otherwise.
std::optional<std::vector<int64_t>> keptReduceAxes(const Node &r) {
  const Shape &x = r.input(0)->shape();
  if (!x.isRanked() || r.getInt("keepdims") != 1)
    return std::nullopt;
  std::vector<int64_t> axes;
  if (r.hasInput(1)) {
    std::optional<std::vector<int64_t>> given = constantInts(r.input(1));
    if (!given)
      return std::nullopt;
    axes = *given;
  }
  if (axes.empty()) {
    if (r.getInt("noop_with_empty_axes") != 0)
      return std::nullopt;
    axes.resize(static_cast<size_t>(x.rank()));
    std::iota(axes.begin(), axes.end(), 0);
  }
  for (int64_t &a : axes) {
    if (a < -x.rank() || a >= x.rank())
      return std::nullopt;
    a = a < 0 ? a + x.rank() : a;
  }
  std::sort(axes.begin(), axes.end());
  return axes;
}

/// A match in progress: its nodes, and a check that values inside it are used only inside it.
struct Match {
  std::vector<Node *> nodes; // in graph order when complete
  std::string refusal;

  bool refuse(std::string why) {
    if (refusal.empty())
      refusal = std::move(why);
    return false;
  }
  /// Every use of every node output is by a node of the match, except `result`'s.
  bool closed(const Value *result) {
    std::set<const Node *> inside(nodes.begin(), nodes.end());
    for (const Node *n : nodes)
      for (const Value *out : n->outputs()) {
        if (!out || out == result)
          continue;
        if (out->graph()->isOutput(out))
          return refuse(fmt::format("%{} is a graph output", out->name()));
        for (const Use &u : out->uses())
          if (!inside.count(u.node))
            return refuse(fmt::format("%{} is also used by {}", out->name(), u.node->describe()));
      }
    return true;
  }
  bool oneDevice() {
    for (const Node *n : nodes)
      if (n->device() != nodes.front()->device())
        return refuse(fmt::format("{} is on another device", n->describe()));
    return true;
  }
};

/// Where the rewrites happen: the graph, the log, and the nodes erased so far (the caller's
/// snapshot of the node list must skip them).
struct Rewriter {
  Graph &g;
  const PassOptions &options;
  std::set<const Node *> erased;

  /// Puts `replacement` (already created before `last`) in place of the match, whose last
  /// node is `last`, and erases the match (its nodes are in a topological order) and the
  /// constants only it used.
  void commit(Match &m, Node *last, Node *replacement) {
    Value *out = last->output(0);
    std::string name = out->name();
    replacement->output(0)->setType(out->type());
    replacement->setDevice(last->device());
    g.replaceAllUsesWith(out, replacement->output(0));
    std::set<Value *> constants;
    for (auto it = m.nodes.rbegin(); it != m.nodes.rend(); ++it) {
      for (Value *in : (*it)->inputs())
        if (in && in->isConstant())
          constants.insert(in);
      erased.insert(*it);
      g.eraseNode(*it);
    }
    g.renameValue(replacement->output(0), name);
    for (Value *c : constants)
      if (isUnused(c))
        g.eraseConstant(c);
  }
};

Tensor ones(const std::vector<int64_t> &shape, DType dtype) {
  int64_t count = std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
  return Tensor::fromVector<double>(DType::kF64, shape,
                                    std::vector<double>(static_cast<size_t>(count), 1.0))
      .castTo(dtype);
}

/// var + eps under a sqrt, either operand order: the add, the variance (a ReduceMean) and eps.
struct VarianceEps {
  Node *addEps = nullptr;
  Node *var = nullptr;
  Value *eps = nullptr;
};
std::optional<VarianceEps> varianceUnderSqrt(const Node *sqrt) {
  Node *addEps = sqrt ? producer(sqrt->input(0), Op::kAdd) : nullptr;
  if (!addEps)
    return std::nullopt;
  for (int i : {0, 1})
    if (Node *var = producer(addEps->input(i), Op::kReduceMean))
      return VarianceEps{addEps, var, addEps->input(1 - i)};
  return std::nullopt;
}

/// The checks both layer-norm patterns make on their means, epsilon and x; refusals go to
/// `m`. Returns the first normalised axis (0 when refused).
int64_t checkNormalization(Match &m, const Node &mean, const Node &var, const Value *x,
                           const std::optional<double> &eps) {
  std::optional<std::vector<int64_t>> axes = keptReduceAxes(mean);
  const int64_t rank = x->shape().isRanked() ? x->shape().rank() : 0;
  bool trailing = axes && !axes->empty() && axes->back() == rank - 1 &&
                  axes->back() - axes->front() + 1 == static_cast<int64_t>(axes->size());
  if (!eps)
    m.refuse("epsilon is not a scalar constant");
  else if (!trailing || keptReduceAxes(var) != axes)
    m.refuse("the means are not over the same trailing axes with keepdims=1");
  else if (!isFloat(x->dtype()))
    m.refuse("x is not a float tensor");
  return trailing ? axes->front() : 0;
}

/// x / sqrt(mean((x - mean(x))^2) + eps), then [* gamma] [+ beta], rooted at the div.
bool layerNorm(Rewriter &r, Node *div) {
  Graph &g = r.g;
  Match m;
  Value *d = div->input(0);
  Node *sqrt = producer(div->input(1), Op::kSqrt);
  Node *sub = producer(d, Op::kSub);
  std::optional<VarianceEps> ve = varianceUnderSqrt(sqrt);
  Node *mean = sub ? producer(sub->input(1), Op::kReduceMean) : nullptr;
  if (!ve || !mean)
    return false;
  Node *addEps = ve->addEps, *var = ve->var;
  Value *eps = ve->eps;
  Node *square = var->input(0) ? var->input(0)->producer() : nullptr;
  Value *x = sub->input(0);
  bool isSquare =
      square &&
      ((square->op() == Op::kPow && square->input(0) == d && near(square->input(1), 2.0)) ||
       (square->op() == Op::kMul && square->input(0) == d && square->input(1) == d));
  if (!isSquare || mean->input(0) != x)
    return false;
  m.nodes = {mean, sub, square, var, addEps, sqrt, div};
  std::optional<double> epsValue = scalarConstant(eps);
  const int64_t rank = x->shape().isRanked() ? x->shape().rank() : 0;
  const int64_t axis = checkNormalization(m, *mean, *var, x, epsValue);

  // The optional affine part: its operand must vary only along the normalised axes.
  Node *last = div;
  Value *gamma = nullptr, *beta = nullptr;
  auto affine = [&](Op op, Value *&param) {
    Node *n = soleUser(last->output(0));
    if (!n || n->op() != op || n->numInputs() != 2)
      return;
    Value *p = otherOperand(*n, last->output(0));
    bool fromMatch = p && std::find(m.nodes.begin(), m.nodes.end(), p->producer()) != m.nodes.end();
    if (!p || fromMatch || p->dtype() != x->dtype() || !p->shape().isRanked() ||
        p->shape().rank() > rank - axis || n->output(0)->shape() != x->shape())
      return;
    param = p;
    last = n;
    m.nodes.push_back(n);
  };
  affine(Op::kMul, gamma);
  if (gamma)
    affine(Op::kAdd, beta);
  if (m.refusal.empty() && m.closed(last->output(0)) && m.oneDevice()) {
    std::vector<int64_t> normShape;
    for (int64_t i = axis; i < rank; ++i)
      normShape.push_back(x->shape()[i].value());
    if (!gamma && !x->shape().isStatic())
      m.refuse("there is no scale and the normalised shape is not static");
    else if (!gamma)
      gamma = g.addConstant(g.uniqueName(last->output(0)->name() + ".ones"),
                            ones(normShape, x->dtype()));
  }
  if (!m.refusal.empty()) {
    r.options.debugf("{}: layer-norm pattern not rewritten: {}", div->describe(), m.refusal);
    return false;
  }
  std::vector<Value *> inputs{x, gamma};
  if (beta)
    inputs.push_back(beta);
  Node *ln = g.createNode(Op::kLayerNormalization, inputs, 1, last->name(), last);
  ln->setAttr("axis", Attribute(axis));
  ln->setAttr("epsilon", Attribute(static_cast<float>(*epsValue)));
  r.options.debugf("{}: layer-norm pattern of {} nodes rewritten as LayerNormalization",
                   last->describe(), m.nodes.size());
  r.commit(m, last, ln);
  return true;
}

/// The node using `v` that is a binary `op` with `v` as one operand, the other operand in
/// `other` (when v has several users, the first such).
Node *binaryUser(const Value *v, Op op, Value *&other) {
  for (const Use &u : v->uses())
    if (u.node->op() == op && (other = otherOperand(*u.node, v)))
      return u.node;
  return nullptr;
}

/// TensorFlow's layer norm (tf.nn.moments + tf.nn.batch_normalization, as BERT writes it),
/// rooted at the reciprocal square root (Rsqrt imports as Reciprocal(Sqrt)):
///   mean = mean(x); var = mean((x - mean)^2); r = 1 / sqrt(var + eps); s = r * gamma
///   y = x * s + (beta - mean * s)
/// which is (x - mean) / sqrt(var + eps) * gamma + beta.
bool tfLayerNorm(Rewriter &r, Node *recip) {
  Graph &g = r.g;
  Node *sqrt = producer(recip->input(0), Op::kSqrt);
  std::optional<VarianceEps> ve = varianceUnderSqrt(sqrt);
  if (!ve)
    return false;
  Node *addEps = ve->addEps, *var = ve->var;
  Node *square = producer(var->input(0), Op::kMul);
  if (!square || square->input(0) != square->input(1))
    return false;
  Node *sub = producer(square->input(0), Op::kSub);
  Node *mean = sub ? producer(sub->input(1), Op::kReduceMean) : nullptr;
  Value *x = sub ? sub->input(0) : nullptr;
  if (!mean || mean->input(0) != x)
    return false;
  Value *gamma = nullptr, *beta = nullptr, *unused = nullptr;
  Node *scale = soleUser(recip->output(0));
  if (!scale || scale->op() != Op::kMul || !(gamma = otherOperand(*scale, recip->output(0))))
    return false;
  Node *xs = binaryUser(scale->output(0), Op::kMul, unused);
  if (!xs || unused != x)
    return false;
  Node *ms = binaryUser(mean->output(0), Op::kMul, unused);
  if (!ms || unused != scale->output(0))
    return false;
  Node *shift = soleUser(ms->output(0));
  if (!shift || shift->op() != Op::kSub || shift->input(1) != ms->output(0))
    return false;
  beta = shift->input(0);
  Node *out = soleUser(xs->output(0));
  if (!out || out->op() != Op::kAdd || otherOperand(*out, xs->output(0)) != shift->output(0))
    return false;
  Match m;
  m.nodes = {mean, sub, square, var, addEps, sqrt, recip, scale, xs, ms, shift, out};
  std::sort(m.nodes.begin(), m.nodes.end(), [&](const Node *a, const Node *b) {
    for (const Node *n : g.nodes()) { // graph order
      if (n == a)
        return n != b;
      if (n == b)
        return false;
    }
    return false;
  });
  std::optional<double> epsValue = scalarConstant(ve->eps);
  const int64_t rank = x->shape().isRanked() ? x->shape().rank() : 0;
  const int64_t axis = checkNormalization(m, *mean, *var, x, epsValue);
  auto param = [&](const Value *p) {
    return p->dtype() == x->dtype() && p->shape().isRanked() && p->shape().rank() <= rank - axis &&
           std::find(m.nodes.begin(), m.nodes.end(), p->producer()) == m.nodes.end();
  };
  // refuse() keeps the first reason: these only add one when the checks above found none.
  if (!param(gamma) || !param(beta))
    m.refuse("the scale or offset varies along a dim that is not normalised");
  else if (out->output(0)->shape() != x->shape())
    m.refuse("the result does not have x's shape");
  if (!m.refusal.empty() || !m.closed(out->output(0)) || !m.oneDevice()) {
    r.options.debugf("{}: TensorFlow layer-norm pattern not rewritten: {}", recip->describe(),
                     m.refusal);
    return false;
  }
  Node *ln = g.createNode(Op::kLayerNormalization, {x, gamma, beta}, 1, out->name(), out);
  ln->setAttr("axis", Attribute(axis));
  ln->setAttr("epsilon", Attribute(static_cast<float>(*epsValue)));
  r.options.debugf("{}: TensorFlow layer-norm pattern of {} nodes rewritten as "
                   "LayerNormalization",
                   out->describe(), m.nodes.size());
  r.commit(m, out, ln);
  return true;
}

/// x * 0.5 * (1 + erf(x / sqrt(2))) in its usual orderings, rooted at the erf.
bool gelu(Rewriter &r, Node *erf) {
  const PassOptions &options = r.options;
  Node *scale = erf->input(0) ? erf->input(0)->producer() : nullptr;
  if (!scale)
    return false;
  Value *x = nullptr;
  if (scale->op() == Op::kDiv && near(scale->input(1), std::sqrt(2.0)))
    x = scale->input(0);
  else if (scale->op() == Op::kMul)
    for (int i = 0; i < 2 && scale->numInputs() == 2; ++i)
      if (near(scale->input(1 - i), std::sqrt(0.5)))
        x = scale->input(i);
  Node *plus = soleUser(erf->output(0));
  if (!x || !plus || plus->op() != Op::kAdd || !near(otherOperand(*plus, erf->output(0)), 1.0))
    return false;
  Match m;
  m.nodes = {scale, erf, plus};
  Node *m1 = soleUser(plus->output(0));
  Value *o = m1 && m1->op() == Op::kMul ? otherOperand(*m1, plus->output(0)) : nullptr;
  Node *last = nullptr;
  if (o == x || near(o, 0.5)) { // (x * b) * 0.5 or (b * 0.5) * x
    Node *m2 = soleUser(m1->output(0));
    Value *o2 = m2 && m2->op() == Op::kMul ? otherOperand(*m2, m1->output(0)) : nullptr;
    if (o2 && (o == x ? near(o2, 0.5) : o2 == x)) {
      m.nodes.insert(m.nodes.end(), {m1, m2});
      last = m2;
    }
  } else if (Node *half = o ? producer(o, Op::kMul) : nullptr) { // (x * 0.5) * b
    if (otherOperand(*half, x) && near(otherOperand(*half, x), 0.5)) {
      m.nodes.insert(m.nodes.end(), {half, m1});
      last = m1;
    }
  }
  if (!last) {
    options.debugf("{}: gelu pattern not rewritten: no multiplication by x and 0.5 follows",
                   erf->describe());
    return false;
  }
  if (!isFloat(x->dtype()) || last->output(0)->type() != x->type())
    m.refuse(fmt::format("the result's type {} differs from x's {}", last->output(0)->type().str(),
                         x->type().str()));
  if (!m.refusal.empty() || !m.closed(last->output(0)) || !m.oneDevice()) {
    options.debugf("{}: gelu pattern not rewritten: {}", erf->describe(), m.refusal);
    return false;
  }
  Node *gelu = r.g.createNode(Op::kGelu, {x}, 1, last->name(), last);
  options.debugf("{}: gelu pattern rewritten as Gelu", last->describe());
  r.commit(m, last, gelu);
  return true;
}

/// exp(x - max(x)) / sum(exp(x - max(x))) over the last axis, rooted at the div.
bool softmax(Rewriter &r, Node *div) {
  const PassOptions &options = r.options;
  Node *exp = producer(div->input(0), Op::kExp);
  Node *sum = producer(div->input(1), Op::kReduceSum);
  Node *sub = exp ? producer(exp->input(0), Op::kSub) : nullptr;
  Node *max = sub ? producer(sub->input(1), Op::kReduceMax) : nullptr;
  if (!sum || !max || sum->input(0) != exp->output(0) || max->input(0) != sub->input(0))
    return false;
  Match m;
  m.nodes = {max, sub, exp, sum, div};
  Value *x = sub->input(0);
  std::optional<std::vector<int64_t>> axes = keptReduceAxes(*max);
  const int64_t rank = x->shape().isRanked() ? x->shape().rank() : -1;
  if (!axes || axes->size() != 1 || axes->front() != rank - 1 || keptReduceAxes(*sum) != axes)
    m.refuse("the max and the sum are not both over the last axis with keepdims=1");
  else if (!isFloat(x->dtype()) || div->output(0)->type() != x->type())
    m.refuse("the result's type differs from x's");
  if (!m.refusal.empty() || !m.closed(div->output(0)) || !m.oneDevice()) {
    options.debugf("{}: softmax pattern not rewritten: {}", div->describe(), m.refusal);
    return false;
  }
  Node *softmax = r.g.createNode(Op::kSoftmax, {x}, 1, div->name(), div);
  softmax->setAttr("axis", Attribute(int64_t{-1}));
  options.debugf("{}: softmax pattern rewritten as Softmax", div->describe());
  r.commit(m, div, softmax);
  return true;
}

} // namespace

int rewriteNormalizationPatterns(Graph &g, const PassOptions &options) {
  Rewriter r{g, options, {}};
  int rewrites = 0;
  for (Node *n : g.nodes()) {
    if (r.erased.count(n)) // erased by an earlier rewrite: do not touch
      continue;
    if (n->op() == Op::kDiv && n->numInputs() == 2)
      rewrites += layerNorm(r, n) || softmax(r, n);
    else if (n->op() == Op::kErf)
      rewrites += gelu(r, n);
    else if (n->op() == Op::kReciprocal)
      rewrites += tfLayerNorm(r, n);
  }
  return rewrites;
}

} // namespace dlc::passes
