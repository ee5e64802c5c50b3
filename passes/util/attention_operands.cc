// The rewrites of an Attention node's operands and surroundings that fuse-attention runs after
// forming it (see attention_operands.h and passes/fuse_attention.cc).
#include "passes/util/attention_operands.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cstring>
#include <set>

#include "ir/annotations/fusion_roles.h"
#include "ir/match.h"
#include "ir/ops/attention.h"
#include "ir/ops/util.h"
#include "passes/util/strided_view.h"
#include "passes/util/transpose_sink.h"

namespace dlc::attention {

namespace {

constexpr const char *kPermAttrs[] = {"perm_q", "perm_k", "perm_v"};

} // namespace

/// Whether `reader` is the only reader of `v` (and `v` no graph output).
bool onlyReader(const Graph &g, const Value *v, const Node *reader) {
  return v && !g.isOutput(v) && v->uses().size() == 1 && v->uses()[0].node == reader;
}

/// The only node reading `v`, or nullptr.
Node *soleReader(const Graph &g, const Value *v) {
  return !g.isOutput(v) && v->uses().size() == 1 ? v->uses()[0].node : nullptr;
}

/// The one-element constant operand of a Mul or Div whose other operand is input `data`, as
/// the factor it multiplies by; nullopt when `n` is not such a node.
std::optional<double> scalarFactor(const Node &n, int *data) {
  if ((n.op() != Op::kMul && n.op() != Op::kDiv) || n.numInputs() != 2)
    return std::nullopt;
  for (int i : {1, 0}) {
    if (n.op() == Op::kDiv && i == 0)
      break; // c / x is not a scaling of x
    const Value *c = n.input(i);
    if (!c || !c->isConstant() || c->constant().numElements() != 1)
      continue;
    auto value = scalarConstant(c);
    const Value *x = n.input(1 - i);
    if (!value || !x || x->shape() != n.output(0)->shape())
      continue;
    *data = 1 - i;
    return n.op() == Op::kDiv ? 1.0 / *value : *value;
  }
  return std::nullopt;
}

/// "node 'name' (Op) -> value" for the decision log (text IR nodes have no names).
std::string label(const Node &n) {
  return n.output(0) ? fmt::format("{} -> {}", n.describe(), n.output(0)->name()) : n.describe();
}

/// Erases the nodes of `work` whose outputs nobody reads, then so the producers of the
/// erased nodes' inputs, up to the nodes still read. Of the softmaxes only `s` may go (the
/// pass holds the others).
void eraseDead(Graph &g, std::vector<Node *> work, const Node *s) {
  std::set<const Node *> gone; // a node may be reached twice; compared, never read
  while (!work.empty()) {
    Node *x = work.back();
    work.pop_back();
    if (!x || gone.count(x) || (x->op() == Op::kSoftmax && x != s))
      continue;
    bool read = false;
    for (const Value *o : x->outputs())
      read = read || !isUnused(o);
    if (read)
      continue;
    std::vector<Node *> producers;
    for (const Value *in : x->inputs())
      if (in && in->producer() &&
          std::find(producers.begin(), producers.end(), in->producer()) == producers.end())
        producers.push_back(in->producer());
    gone.insert(x);
    g.eraseNode(x);
    for (Node *p : producers)
      work.push_back(p);
  }
}

/// Where operand `i` of an attention can be read from: the buffer, the strided view of it
/// and the factor that joins the scale.
struct Source {
  Value *value = nullptr;
  StridedView view;
  double factor = 1.0;
};

/// Operand `op` as a strided view of its own buffer (axes of size 1 get stride 0).
static StridedView viewOf(const ops::AttentionOperand &op) {
  const auto sizes = op.logical();
  const auto strides = op.strides();
  StridedView v{{sizes.begin(), sizes.end()}, {strides.begin(), strides.end()}, op.offset};
  for (size_t j = 0; j < 4; ++j)
    if (v.sizes[j] == 1)
      v.strides[j] = 0;
  return v;
}

/// The deepest source of operand `i` (its layout `op`) past a data-moving op or a scaling,
/// or nullopt when there is none.
static std::optional<Source> deepestSource(Node &a, int i, const ops::AttentionOperand &op) {
  Source cur{a.input(i), viewOf(op), 1.0};
  std::optional<Source> best;
  while (Node *p = cur.value->producer()) {
    int data = 0;
    std::optional<double> f = i < 2 ? scalarFactor(*p, &data) : std::nullopt;
    if (f) {
      cur.factor *= *f;
      cur.value = p->input(data);
    } else if (auto next = viewThrough(*p, cur.view)) {
      cur.view = *next;
      cur.value = p->input(0);
      if (isViewNode(*p) && !best)
        continue; // nothing saved yet: a reshape costs nothing
    } else {
      break;
    }
    best = cur;
  }
  return best;
}

/// The layout of attention `a` when its operands' shapes are static.
static std::optional<ops::AttentionLayout> staticLayout(const Node &a) {
  std::vector<std::vector<int64_t>> shapes;
  for (int i = 0; i < 3; ++i) {
    if (!a.input(i)->shape().isStatic())
      return std::nullopt;
    shapes.push_back(a.input(i)->shape().sizes());
  }
  auto layout = ops::attentionLayout(a, shapes[0], shapes[1], shapes[2]);
  return layout ? std::optional<ops::AttentionLayout>(*layout) : std::nullopt;
}

/// `a`'s attributes without those of the operands in `rewritten` (0 Q, 1 K, 2 V) and,
/// with `scale`, without the scale.
static std::vector<std::pair<std::string, Attribute>>
keptAttributes(const Node &a, const std::vector<int> &rewritten, bool scale) {
  std::set<std::string, std::less<>> names;
  if (scale)
    names.insert("scale");
  for (int i : rewritten) {
    const auto n = ops::stridedAttrNames(i);
    names.insert({kPermAttrs[i], n.sizes, n.strides, n.offset});
  }
  std::vector<std::pair<std::string, Attribute>> attrs;
  for (auto &[name, attr] : ownAttributes(a))
    if (!names.count(name))
      attrs.emplace_back(name, attr);
  return attrs;
}

/// Adds operand `i`'s strided attributes for `view`.
static void addStrided(std::vector<std::pair<std::string, Attribute>> &attrs, int i,
                       const StridedView &view) {
  const auto names = ops::stridedAttrNames(i);
  attrs.emplace_back(names.sizes, Attribute(view.sizes));
  attrs.emplace_back(names.strides, Attribute(view.strides));
  if (view.offset)
    attrs.emplace_back(names.offset, Attribute(view.offset));
}

/// Builds the Attention node replacing `a` on `inputs` with `attrs`; nullptr (the reason
/// logged, nothing left behind) when it is not `a`'s type or the GPU cannot run it.
static Node *replaceAttention(Graph &g, Node &a, const std::vector<Value *> &inputs,
                              const std::vector<std::pair<std::string, Attribute>> &attrs,
                              const PassOptions &options, const char *what) {
  auto y = addTypedNode(g, Op::kAttention, inputs, a.output(0)->name(), &a, a, attrs);
  std::string no;
  if (!y)
    no = std::string(y.status().message());
  else if ((*y)->type() != a.output(0)->type())
    no = fmt::format("the new node's type {} is not {}", (*y)->type().str(),
                     a.output(0)->type().str());
  else if (options.gpuSupport && !options.gpuSupport(*(*y)->producer(), &no))
    no = no.empty() ? "the GPU backend cannot run it" : no;
  if (!no.empty()) {
    if (y)
      g.eraseNode((*y)->producer());
    options.debugf("{}: {}: no: {}", label(a), what, no);
    return nullptr;
  }
  const std::string name = a.name();
  replaceOutputNamed(g, &a, *y);
  (*y)->producer()->setName(name);
  return (*y)->producer();
}

/// Reads Q, K and V of attention `a` from the buffers their data was moved out of (see the
/// top of this file); keeps `a` when nothing moves or the GPU cannot read the result.
/// Returns the attention node that stands.
Expected<Node *> foldOperandViews(Graph &g, Node &a, const PassOptions &options) {
  auto layout = staticLayout(a);
  if (!layout)
    return &a;
  const ops::AttentionOperand *ops[] = {&layout->q, &layout->k, &layout->v};
  std::optional<Source> sources[3];
  for (int i = 0; i < 3; ++i)
    sources[i] = deepestSource(a, i, *ops[i]);
  if (!sources[0] && !sources[1] && !sources[2])
    return &a;
  std::vector<int> moved;
  for (int i = 0; i < 3; ++i)
    if (sources[i])
      moved.push_back(i);
  auto attrs = keptAttributes(a, moved, /*scale=*/true);
  std::vector<Value *> inputs(a.inputs().begin(), a.inputs().end());
  double scale = layout->scale;
  std::string log;
  for (int i : moved) {
    const Source &src = *sources[i];
    inputs[static_cast<size_t>(i)] = src.value;
    scale *= src.factor;
    addStrided(attrs, i, src.view);
    log += fmt::format("; {} reads {} as {}{}", "QKV"[i], src.value->name(), src.view.str(),
                       src.factor != 1.0 ? fmt::format(", scaled by {}", src.factor) : "");
  }
  attrs.emplace_back("scale", Attribute(static_cast<float>(scale)));
  std::vector<Node *> before;
  for (int i : moved)
    before.push_back(a.input(i)->producer());
  Node *b = replaceAttention(g, a, inputs, attrs, options, "operands read in place");
  if (!b)
    return &a;
  eraseDead(g, before, nullptr); // the movers, so that they no longer count as readers
  options.debugf("{}: operands read in place{}", label(*b), log);
  return b;
}

/// A projection making an attention operand: a product of %x by a 2-D constant %w, then
/// column-wise nodes, each read by the next alone:
///   * float:  matmul(%x, %w) [-> add(%b)], %w [K, N];
///   * int8 (realize-int8's form): matmul_integer(%xq, %w) -> cast -> mul(%requant_scale)
///     [-> add(%b)] [-> cast], %w [N, K] under transB = 1, else [K, N].
/// A column-wise node is a Cast, or an Add or Mul whose other operand is a constant scalar or
/// a row of N, broadcast along the last axis.
struct Projection {
  Node *product = nullptr;
  std::vector<Node *> tail;     // the column-wise nodes, first to last
  std::vector<Value *> columns; // the constant each of them reads (nullptr for a Cast)
  Value *out = nullptr;         // the last one's result, or the product's
  const Tensor *w = nullptr;
  int wColumns = 1; // the axis of %w that runs along N
};

static bool isColumnConstant(const Value *c, int64_t n) {
  if (!c || !c->isConstant() || c->shape().rank() > 1)
    return false;
  const int64_t count = c->constant().numElements();
  return count == 1 || (c->shape().rank() == 1 && count == n);
}

/// The projection whose result is `v`, or nullopt.
static std::optional<Projection> projectionMaking(const Graph &g, Value *v) {
  if (!v->producer() || !v->shape().isStatic())
    return std::nullopt;
  Projection r;
  r.out = v;
  const int64_t n = v->shape().rank() ? v->shape().sizes().back() : 0;
  Value *at = v;
  while (Node *p = at->producer()) {
    if (p->op() == Op::kMatMul || p->op() == Op::kMatMulInteger) {
      r.product = p;
      break;
    }
    const bool cast = p->op() == Op::kCast && p->numInputs() == 1;
    const bool binary = (p->op() == Op::kAdd || p->op() == Op::kMul) && p->numInputs() == 2;
    if (!cast && !binary)
      return std::nullopt;
    Value *chain = p->input(0), *column = binary ? p->input(1) : nullptr;
    if (binary && isColumnConstant(chain, n))
      std::swap(chain, column);
    if (!chain || chain->isConstant() || (binary && !isColumnConstant(column, n)))
      return std::nullopt;
    if (chain->shape() != v->shape() || (at != v && !onlyReader(g, at, r.tail.back())))
      return std::nullopt;
    r.tail.push_back(p);
    r.columns.push_back(column);
    at = chain;
  }
  if (!r.product || r.product->output(0)->shape() != v->shape() ||
      (at != v && !onlyReader(g, at, r.tail.back())))
    return std::nullopt;
  std::reverse(r.tail.begin(), r.tail.end());
  std::reverse(r.columns.begin(), r.columns.end());
  for (const char *perm : {"perm_a", "perm_b", "perm_y"})
    if (r.product->hasAttr(perm) && !r.product->getInts(perm).empty())
      return std::nullopt;
  const Value *w = r.product->input(1);
  if (!w || !w->isConstant() || w->shape().rank() != 2)
    return std::nullopt;
  r.w = &w->constant();
  r.wColumns = r.product->hasAttr("transB") && r.product->getInt("transB") != 0 ? 0 : 1;
  if (r.w->shape()[static_cast<size_t>(r.wColumns)] != n)
    return std::nullopt;
  return r;
}

/// The projection that operand `i` of `a` is a reshape of, when every value between is
/// read by that chain alone.
static std::optional<Projection> projectionOf(const Graph &g, Node &a, int i) {
  Value *v = a.input(i);
  const Node *reader = &a;
  while (v->producer() && isViewNode(*v->producer())) {
    if (!onlyReader(g, v, reader))
      return std::nullopt;
    reader = v->producer();
    v = reader->input(0);
  }
  if (!onlyReader(g, v, reader))
    return std::nullopt;
  return projectionMaking(g, v);
}

/// A new projection of `x` by the constant `w`, built in front of `a` like `like`'s nodes,
/// with `columns[j]` as the constant of `like.tail[j]` (ignored for a Cast); erase() takes
/// it back.
struct NewProjection {
  std::vector<Node *> nodes;
  Value *out = nullptr;

  void erase(Graph &g) const {
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it)
      g.eraseNode(*it);
  }
};

static std::optional<NewProjection> addProjection(Graph &g, Node &a, Value *x, Value *w,
                                                  const std::vector<Value *> &columns,
                                                  const Projection &like, const std::string &name) {
  NewProjection r;
  std::vector<Value *> inputs(like.product->inputs().begin(), like.product->inputs().end());
  inputs[0] = x;
  inputs[1] = w;
  auto product = addTypedNode(g, like.product->op(), inputs, name, &a, *like.product,
                              ownAttributes(*like.product));
  if (!product)
    return std::nullopt;
  r.nodes.push_back((*product)->producer());
  r.nodes.back()->setName(like.product->name());
  Value *at = *product;
  for (size_t j = 0; j < like.tail.size(); ++j) {
    const Node &t = *like.tail[j];
    // The chain first: add(product, bias), mul(product, scale).
    std::vector<Value *> in = {at};
    if (t.op() != Op::kCast)
      in.push_back(columns[j]);
    auto next = addTypedNode(g, t.op(), in, name, &a, t, ownAttributes(t));
    if (!next || !(*next)->shape().isStatic()) {
      if (next)
        g.eraseNode((*next)->producer());
      r.erase(g);
      return std::nullopt;
    }
    r.nodes.push_back((*next)->producer());
    r.nodes.back()->setName(t.name());
    at = *next;
  }
  r.out = at;
  return r;
}

/// `a`'s inputs with Q, K and V all `proj` (its mask kept).
static std::vector<Value *> packedInputs(const Node &a, Value *proj) {
  std::vector<Value *> inputs = {proj, proj, proj};
  if (a.numInputs() > 3 && a.input(3))
    inputs.push_back(a.input(3));
  return inputs;
}

/// Q, K and V read (strided) from one projection of a transposed input, as torch's
/// multi-head attention with batch_first computes them: add(matmul(transpose(%x), %w), %b)
/// with the transpose keeping the last axis. The projection then reads %x itself (its rows
/// in %x's order: the same GEMM) and the attention reads the product through the
/// transpose, which no kernel runs. Returns whether `a` was rewritten.
Node *sinkInputTranspose(Graph &g, Node &a, const PassOptions &options) {
  Value *p = a.input(0);
  if (a.input(1) != p || a.input(2) != p || g.isOutput(p))
    return nullptr;
  for (const Use &u : p->uses())
    if (u.node != &a)
      return nullptr;
  auto made = projectionMaking(g, p);
  Node *t = made ? made->product->input(0)->producer() : nullptr;
  if (!t || t->op() != Op::kTranspose)
    return nullptr;
  auto perm = transposePerm(*t);
  const int64_t rank = p->shape().rank();
  if (!perm || static_cast<int64_t>(perm->size()) != rank || perm->back() != rank - 1)
    return nullptr;
  auto layout = staticLayout(a);
  if (!layout || !layout->q.strided || !layout->k.strided || !layout->v.strided)
    return nullptr;
  // The product of the untransposed input, and each operand's view through the transpose.
  auto built = addProjection(g, a, t->input(0), made->product->input(1), made->columns, *made,
                             made->product->output(0)->name() + "/untransposed");
  if (!built)
    return nullptr;
  Value *proj = built->out;
  auto undo = [&] { built->erase(g); };
  const std::vector<int64_t> shape = p->shape().sizes();
  auto attrs = keptAttributes(a, {0, 1, 2}, /*scale=*/false);
  const ops::AttentionOperand *ops[] = {&layout->q, &layout->k, &layout->v};
  for (int i = 0; i < 3; ++i) {
    auto view = viewThroughTranspose(shape, *perm, viewOf(*ops[i]));
    if (!view) {
      undo();
      return nullptr;
    }
    addStrided(attrs, i, *view);
  }
  const std::vector<Value *> inputs = packedInputs(a, proj);
  const std::string was = label(*t);
  Node *b = replaceAttention(g, a, inputs, attrs, options, "reading the projection untransposed");
  if (!b) {
    undo();
    return nullptr;
  }
  options.debugf("{}: the projection reads {}'s input; the attention reads through the "
                 "transpose",
                 label(*proj->uses()[0].node), was);
  return b;
}

/// The output side of torch's batch_first multi-head attention: Y stored [S, B, H, D],
/// reshaped to rows [S * B, E], projected (Gemm or MatMul by a 2-D weight), reshaped to
/// [S, B, N] and transposed to [B, S, N]. The attention then stores Y as
/// [B, S, H, D] and the projection's rows come out in the transposed order: no transpose
/// runs, and what reads it (the residual add) can join the projection's epilogue.
void hoistOutputTranspose(Graph &g, Node &attention, const PassOptions &options) {
  Node *a = &attention;
  if (!a->output(0)->shape().isStatic() || a->output(0)->shape().rank() != 4)
    return;
  auto next = [&](Value *v, Op op) -> Node * {
    Node *r = soleReader(g, v);
    return r && r->op() == op && r->input(0) == v ? r : nullptr;
  };
  const std::vector<int64_t> ys = a->output(0)->shape().sizes();
  Node *flat = next(a->output(0), Op::kReshape);
  if (!flat || flat->output(0)->shape() != Shape::fromSizes({ys[0] * ys[1], ys[2] * ys[3]}))
    return;
  Node *proj = soleReader(g, flat->output(0));
  auto attrIs = [&](const char *attr, double want) {
    return !proj->hasAttr(attr) ||
           (attr[0] == 't' ? proj->getInt(attr) == want : proj->getFloat(attr) == want);
  };
  if (!proj || proj->input(0) != flat->output(0) ||
      (proj->op() != Op::kGemm && proj->op() != Op::kMatMul) || proj->input(1) == nullptr ||
      !proj->input(1)->isConstant() || proj->input(1)->shape().rank() != 2 ||
      !proj->output(0)->shape().isStatic() ||
      (proj->op() == Op::kGemm &&
       (!attrIs("transA", 0) || !attrIs("alpha", 1) || !attrIs("beta", 1) ||
        (proj->numInputs() > 2 && proj->input(2) && proj->input(2)->shape().rank() > 1))))
    return;
  for (const char *perm : {"perm_a", "perm_b", "perm_y"})
    if (proj->hasAttr(perm) && !proj->getInts(perm).empty())
      return;
  const int64_t n = proj->output(0)->shape().sizes()[1];
  Node *split = next(proj->output(0), Op::kReshape);
  if (!split || split->output(0)->shape() != Shape::fromSizes({ys[0], ys[1], n}))
    return;
  Node *t = next(split->output(0), Op::kTranspose);
  auto perm = t ? transposePerm(*t) : std::nullopt;
  if (!perm || *perm != std::vector<int64_t>{1, 0, 2})
    return;
  // Y stored with its first two axes swapped: perm_y's first two entries swap.
  std::vector<int64_t> py = a->hasAttr("perm_y") && !a->getInts("perm_y").empty()
                                ? a->getInts("perm_y")
                                : std::vector<int64_t>{0, 1, 2, 3};
  std::swap(py[0], py[1]);
  auto attrs = ownAttributes(*a);
  std::erase_if(attrs, [](const auto &x) { return x.first == "perm_y"; });
  attrs.emplace_back("perm_y", Attribute(py));
  std::vector<Value *> inputs(a->inputs().begin(), a->inputs().end());
  auto y = addTypedNode(g, Op::kAttention, inputs, a->output(0)->name(), t, *a, attrs);
  if (!y)
    return;
  std::string no;
  if (options.gpuSupport && !options.gpuSupport(*(*y)->producer(), &no)) {
    g.eraseNode((*y)->producer());
    options.debugf("{}: the output transpose stays: {}", label(*a), no);
    return;
  }
  // [B, S, E] rows times the weight (a MatMul, so that a residual add joins its epilogue
  // through no reshape), then the bias.
  auto built = [&]() -> Expected<Value *> {
    Value *shape = g.addConstant(flat->output(0)->name() + "/rows",
                                 Tensor::vectorI64({ys[1], ys[0], ys[2] * ys[3]}));
    DLC_ASSIGN_OR_RETURN(Value * rows, addTypedNode(g, Op::kReshape, {*y, shape},
                                                    flat->output(0)->name(), t, *flat));
    rows->producer()->setName(flat->name());
    std::vector<std::pair<std::string, Attribute>> mm;
    if (proj->op() == Op::kGemm && proj->hasAttr("transB") && proj->getInt("transB") != 0)
      mm.emplace_back("perm_b", Attribute(std::vector<int64_t>{1, 0}));
    DLC_ASSIGN_OR_RETURN(Value * out, addTypedNode(g, Op::kMatMul, {rows, proj->input(1)},
                                                   proj->output(0)->name(), t, *proj, mm));
    out->producer()->setName(proj->name());
    if (!proj->input(2))
      return out;
    DLC_ASSIGN_OR_RETURN(Value * biased, addTypedNode(g, Op::kAdd, {out, proj->input(2)},
                                                      split->output(0)->name(), t, *proj));
    biased->producer()->setName(proj->name() + "/bias");
    return biased;
  }();
  if (!built || (*built)->type() != t->output(0)->type()) {
    options.debugf("{}: the output transpose stays: {}", label(*a),
                   built ? "the types differ" : built.status().message());
    return; // the partial rewrite is dead; dce removes it
  }
  options.debugf("{}: stores Y as [B, S, H, D] (perm_y = [{}]); {} no longer runs", label(*a),
                 fmt::join(py, ", "), label(*t));
  (*y)->producer()->setName(a->name());
  replaceOutputNamed(g, t, *built);
}

/// `parts` side by side along their last axis (2-D weights or 1-D rows of one dtype), or, for
/// `axis` 0, 2-D weights one below the other.
static Tensor sideBySide(const std::vector<const Tensor *> &parts, int axis = 1) {
  const std::vector<int64_t> first = parts[0]->shape();
  const int64_t bytes = dtypeSize(parts[0]->dtype());
  if (axis == 0) {
    int64_t rows = 0;
    for (const Tensor *t : parts)
      rows += t->shape()[0];
    Tensor out = Tensor::zeros(parts[0]->dtype(), {rows, first[1]});
    auto *dst = static_cast<unsigned char *>(out.mutableRaw());
    for (const Tensor *t : parts) {
      const auto n = static_cast<size_t>(t->numElements() * bytes);
      std::memcpy(dst, t->raw(), n);
      dst += n;
    }
    return out;
  }
  const int64_t rows = first.size() == 2 ? first[0] : 1;
  int64_t cols = 0;
  for (const Tensor *t : parts)
    cols += t->shape().back();
  Tensor out = Tensor::zeros(parts[0]->dtype(), first.size() == 2 ? std::vector<int64_t>{rows, cols}
                                                                  : std::vector<int64_t>{cols});
  auto *dst = static_cast<unsigned char *>(out.mutableRaw());
  for (int64_t r = 0; r < rows; ++r)
    for (const Tensor *t : parts) {
      const int64_t n = t->shape().back() * bytes;
      std::memcpy(dst, static_cast<const unsigned char *>(t->raw()) + r * n,
                  static_cast<size_t>(n));
      dst += n;
    }
  return out;
}

/// A one-element constant repeated to a row of `n`.
static Tensor repeated(const Tensor &scalar, int64_t n) {
  Tensor out = Tensor::zeros(scalar.dtype(), {n});
  const auto bytes = static_cast<size_t>(dtypeSize(scalar.dtype()));
  auto *dst = static_cast<unsigned char *>(out.mutableRaw());
  for (int64_t i = 0; i < n; ++i)
    std::memcpy(dst + static_cast<size_t>(i) * bytes, scalar.raw(), bytes);
  return out;
}

/// Whether three projections of one input can become one: the same product (op, attributes,
/// zero points, weight dtype and depth) and the same column-wise nodes, constants of one dtype.
static bool mergeable(const std::optional<Projection> (&p)[3]) {
  const Node &m = *p[0]->product;
  const int depth = 1 - p[0]->wColumns;
  for (int i = 1; i < 3; ++i) {
    const Node &n = *p[i]->product;
    if (&n == &m || n.op() != m.op() || n.input(0) != m.input(0) ||
        n.numInputs() != m.numInputs() || ownAttributes(n) != ownAttributes(m) ||
        p[i]->w->dtype() != p[0]->w->dtype() || p[i]->wColumns != p[0]->wColumns ||
        p[i]->w->shape()[depth] != p[0]->w->shape()[depth] ||
        p[i]->out->dtype() != p[0]->out->dtype() || p[i]->tail.size() != p[0]->tail.size())
      return false;
    // Zero points: one scalar that all three share (a per-column one would need merging too).
    for (int k = 2; k < m.numInputs(); ++k)
      if (n.input(k) != m.input(k) ||
          (m.input(k) && (!m.input(k)->isConstant() || m.input(k)->constant().numElements() != 1)))
        return false;
    const std::vector<Value *> &mine = p[i]->columns, &first = p[0]->columns;
    for (size_t j = 0; j < p[0]->tail.size(); ++j) {
      const Node &t = *p[i]->tail[j], &u = *p[0]->tail[j];
      if (t.op() != u.op() || ownAttributes(t) != ownAttributes(u) ||
          (mine[j] && mine[j]->dtype() != first[j]->dtype()))
        return false;
    }
  }
  return p[1]->product != p[2]->product;
}

/// The constants of the merged projection's column-wise nodes: one that all three share as
/// it is, else the three as rows side by side (a scalar repeated across its columns).
static std::vector<Value *> mergedColumns(Graph &g, const std::optional<Projection> (&p)[3],
                                          const std::string &base, std::vector<Value *> *added) {
  std::vector<Value *> r;
  for (size_t j = 0; j < p[0]->columns.size(); ++j) {
    Value *a = p[0]->columns[j];
    // One scalar (the same value) serves all three; a row, even one they share (CSE merges
    // equal biases: zeros at initialisation), goes three times side by side.
    auto same = [&](const Value *b) {
      return a->constant().numElements() == 1 && a->constant().identical(b->constant());
    };
    if (!a || (same(p[1]->columns[j]) && same(p[2]->columns[j]))) {
      r.push_back(a);
      continue;
    }
    std::vector<Tensor> rows;
    for (int i = 0; i < 3; ++i) {
      const Tensor &t = p[i]->columns[j]->constant();
      rows.push_back(t.numElements() == 1 && p[i]->out->shape().sizes().back() != 1
                         ? repeated(t, p[i]->out->shape().sizes().back())
                         : t.reshaped({t.numElements()}));
    }
    const Op op = p[0]->tail[j]->op();
    const std::string role = op == Op::kAdd ? "bias" : "scale";
    const auto earlier = std::count_if(p[0]->tail.begin(), p[0]->tail.begin() + j,
                                       [&](const Node *t) { return t->op() == op; });
    Value *merged =
        g.addConstant(fmt::format("{}_{}{}", base, role, earlier ? fmt::format("{}", earlier) : ""),
                      sideBySide({&rows[0], &rows[1], &rows[2]}));
    added->push_back(merged);
    r.push_back(merged);
  }
  return r;
}

/// Q, K and V made by three projections of one input (BERT's query, key and value Linear
/// layers, float or realized in int8) become one projection with the weights side by side,
/// which attention `a` reads through strided operands: one GEMM three times as wide instead
/// of three. Kept as they were when anything does not fit.
Node *mergeProjections(Graph &g, Node &a, const PassOptions &options) {
  std::optional<Projection> p[3];
  for (int i = 0; i < 3; ++i)
    if (!(p[i] = projectionOf(g, a, i)))
      return nullptr;
  if (!mergeable(p))
    return nullptr;
  Value *x = p[0]->product->input(0);
  auto layout = staticLayout(a);
  if (!layout)
    return nullptr;
  const std::string base = p[0]->product->output(0)->name() + "/qkv";
  std::vector<Value *> added = {
      g.addConstant(base + "_weight", sideBySide({p[0]->w, p[1]->w, p[2]->w}, p[0]->wColumns))};
  const std::vector<Value *> columns = mergedColumns(g, p, base, &added);
  auto dropConstants = [&] {
    for (Value *c : added)
      g.eraseConstant(c);
  };
  auto built = addProjection(g, a, x, added[0], columns, *p[0], base);
  if (!built) {
    dropConstants();
    return nullptr;
  }
  Value *proj = built->out;
  auto undo = [&] {
    built->erase(g);
    dropConstants();
  };
  const ops::AttentionOperand *ops[] = {&layout->q, &layout->k, &layout->v};
  auto attrs = keptAttributes(a, {0, 1, 2}, /*scale=*/false);
  const std::vector<int64_t> whole = proj->shape().sizes();
  int64_t column = 0;
  for (int i = 0; i < 3; ++i) {
    const std::vector<int64_t> part = p[i]->out->shape().sizes();
    std::vector<int64_t> start(whole.size(), 0);
    start.back() = column;
    column += part.back();
    auto view = viewInBlock(part, viewOf(*ops[i]), whole, start);
    if (!view) {
      const std::string projName = proj->name();
      options.debugf("{}: projections not merged: {} cannot be read as a block of {}", label(a),
                     "QKV"[i], projName);
      undo();
      return nullptr;
    }
    addStrided(attrs, i, *view);
  }
  const std::vector<Value *> inputs = packedInputs(a, proj);
  const std::string names = fmt::format("{}, {} and {}", label(*p[0]->product),
                                        label(*p[1]->product), label(*p[2]->product));
  Node *b = replaceAttention(g, a, inputs, attrs, options, "merging the projections");
  if (!b) {
    undo();
    return nullptr;
  }
  options.debugf("{}: merged the projections {} into {}", label(*proj->uses()[0].node), names,
                 proj->name());
  return b;
}

} // namespace dlc::attention
