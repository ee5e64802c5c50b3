// fuse-attention: scaled dot-product attention as exporters write it becomes one Attention
// node (ir/ops/attention.h), which the GPU runs as one flash-attention kernel: the scores
// never go to memory.
//
// After fold-transpose-matmul, BERT's attention reads (one layer; mask and casts optional):
//
//     %s  = matmul(%q, %k) {perm_a = [0, 2, 1, 3], perm_b = [0, 2, 3, 1]}   // [B, H, Sq, Sk]
//     %t  = div(%s, %c)                      // or mul; %c a one-element constant
//     %u  = add(%t, %mask)                   // mask broadcast to [B, H, Sq, Sk]
//     %p  = softmax(%u) {axis = -1}
//     %y  = matmul(%p, %v) {perm_b = [0, 2, 1, 3], perm_y = [0, 2, 1, 3]}
//  =>
//     %y  = attention(%q, %k, %v, %mask) {scale = 1/c, perm_q = [0, 2, 1, 3],
//                                        perm_k = [0, 2, 1, 3], perm_v = ..., perm_y = ...}
//
// The product's perm_b reads Kᵀ; perm_k is it with the last two axes swapped. One-element
// constant multiplications (or divisions) of Q or K just before the product (PyTorch's
// export of scaled_dot_product_attention scales both by sqrt(scale)) join the scale when the
// product is their only reader. Casts from the product's dtype to a wider float and back
// around the softmax chain (mixed precision keeps softmax in float32) are absorbed: the
// kernel computes the scores and the softmax in float32 anyway.
//
// Then each operand is read from the buffer its data was moved out of (passes/util/
// strided_view.h): walking up through Reshapes, Transposes, Gathers of one constant index and,
// for Q and K, one-element constant scalings (which join the scale), the operand becomes a
// strided one (sizes_q, strides_q, offset_q) over the buffer where the walk stopped. PyTorch's
// multi-head attention (ViT) then reads Q, K and V straight out of its packed projection:
//
//     %p = add(%b, matmul(%x, %w))                      // [S, B, 3 * E]
//     %t = transpose(unsqueeze(reshape(%p)))            // [3, S, B, 1, E]
//     %q = gather(squeeze(%t), 0) ... %v = gather(squeeze(%t), 2)
//     %y = attention(mul(reshape(%q), c), mul(reshape(%k), c), reshape(%v)) {perm_q = ...}
//  =>
//     %y = attention(%p, %p, %p) {sizes_q = [B, H, S, D], strides_q = [3E, D, 3BE, 1],
//                                 offset_k = E, offset_v = 2E, ..., scale = c * c}
//
// The walk keeps the deepest point past which something was saved (a data-moving op or a
// scaling), and is undone when the GPU cannot read the strided operands.
//
// Fused only when every intermediate value is read by the chain alone, the logical operands
// are 4-D with equal batch and head counts, and (when the pipeline knows a GPU backend,
// PassOptions::gpuSupport) the GPU can run the Attention node; otherwise the reason is given
// under --debug-only=fuse-attention. Run dce after this pass (the chain's nodes stay until
// then).
#include <cstring>
#include <set>

#include "ir/annotations/fusion_roles.h"
#include "ir/match.h"
#include "ir/ops/attention.h"
#include "ir/ops/util.h"
#include "passes/registry.h"
#include "passes/util/strided_view.h"

namespace dlc {

namespace {

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

/// An intermediate cast between float types (f16 <-> f32 and the like).
bool isFloatCast(const Node &n) {
  return n.op() == Op::kCast && n.input(0) && isFloat(n.input(0)->dtype()) &&
         isFloat(n.output(0)->dtype());
}

std::vector<int64_t> identity4() { return {0, 1, 2, 3}; }

constexpr const char *kPermAttrs[] = {"perm_q", "perm_k", "perm_v"};

/// "node 'name' (Op) -> value" for the decision log (text IR nodes have no names).
std::string label(const Node &n) {
  return n.output(0) ? fmt::format("{} -> {}", n.describe(), n.output(0)->name()) : n.describe();
}

/// Erases softmax `s` of a fused chain and what only it read, up to the nodes still read:
/// first its readers (a cast) when they are unread, then `s`, then the producers of the
/// erased nodes' inputs. Of the softmaxes only `s` goes (the pass holds the others).
void eraseDeadChain(Graph &g, Node &s) {
  std::vector<Node *> work = {&s};
  for (const Use &u : s.output(0)->uses())
    work.push_back(u.node);
  std::set<const Node *> gone; // a node may be reached twice; compared, never read
  while (!work.empty()) {
    Node *x = work.back();
    work.pop_back();
    if (!x || gone.count(x) || (x->op() == Op::kSoftmax && x != &s))
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

class FuseAttention : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    std::vector<Node *> softmaxes;
    for (Node *n : g.nodes())
      if (n->op() == Op::kSoftmax)
        softmaxes.push_back(n);
    bool changed = false;
    for (Node *s : softmaxes) {
      std::string why;
      DLC_ASSIGN_OR_RETURN(bool fused, fuse(g, *s, options, &why));
      if (!fused && !why.empty())
        options.debugf("{}: not fused: {}", label(*s), why);
      changed = changed || fused;
    }
    return changed;
  }

private:
  struct Match {
    Node *scores = nullptr, *context = nullptr;
    Value *q = nullptr, *k = nullptr, *mask = nullptr;
    double scale = 1.0;
  };

  /// Which operand of the mask add `p` carries the scores: the one with the sum's shape, read
  /// by `p` alone, made by the chain (a product, scaling or cast), the product preferred when
  /// both are; -1 when none is.
  static int chainOperand(const Graph &g, const Node &p) {
    int best = -1;
    for (int i : {0, 1}) {
      const Value *x = p.input(i);
      const Node *maker = x ? x->producer() : nullptr;
      int unused = 0;
      if (!maker || x->shape() != p.output(0)->shape() || !onlyReader(g, x, &p) ||
          !(maker->op() == Op::kMatMul || isFloatCast(*maker) || scalarFactor(*maker, &unused)))
        continue;
      if (best < 0 || maker->op() == Op::kMatMul)
        best = i;
    }
    return best;
  }

  /// Walks from softmax `s` to both products; false (with `why`) when it is not attention.
  static bool match(const Graph &g, Node &s, Match &m, std::string *why) {
    auto no = [&](std::string msg) {
      *why = std::move(msg);
      return false;
    };
    const Value *in = s.input(0);
    if (!in->shape().isRanked() || in->shape().rank() != 4)
      return no("the scores are not 4-D [batch, heads, queries, keys]");
    const int64_t axis = s.getInt("axis");
    if (axis != -1 && axis != 3)
      return no("softmax is not over the last axis");
    // Down: softmax -> [cast] -> matmul(p, v).
    Value *probs = s.output(0);
    Node *after = soleReader(g, probs);
    if (after && isFloatCast(*after)) {
      probs = after->output(0);
      after = soleReader(g, probs);
    }
    if (!after || after->op() != Op::kMatMul || after->input(0) != probs ||
        after->input(1) == probs)
      return no("the probabilities are not the first operand of one MatMul, their only reader");
    if (after->hasAttr("perm_a") && !after->getInts("perm_a").empty())
      return no("the second product reads the probabilities permuted");
    m.context = after;
    // Up: [cast] <- [add mask] <- [scale] <- [cast] <- matmul(q, k).
    // A scale met before the mask (walking up) would scale the mask too.
    const Node *reader = &s;
    Value *v = s.input(0);
    bool scaled = false;
    for (;;) {
      Node *p = v->producer();
      if (!p || !onlyReader(g, v, reader))
        return no(fmt::format("'{}' has other readers or no producer", v->name()));
      reader = p;
      if (p->op() == Op::kMatMul) {
        m.scores = p;
        break;
      }
      int data = 0;
      if (isFloatCast(*p)) {
        v = p->input(0);
      } else if (auto f = scalarFactor(*p, &data)) {
        m.scale *= *f;
        scaled = true;
        v = p->input(data);
      } else if (p->op() == Op::kAdd && !m.mask) {
        if (scaled)
          return no(fmt::format("{} adds the mask before a scaling, which would scale it too",
                                label(*p)));
        const int chain = chainOperand(g, *p);
        if (chain < 0)
          return no(fmt::format("{}: neither operand is the scores alone", label(*p)));
        m.mask = p->input(1 - chain);
        v = p->input(chain);
      } else {
        return no(fmt::format("{} between the product and the softmax", label(*p)));
      }
    }
    if (m.scores->hasAttr("perm_y") && !m.scores->getInts("perm_y").empty())
      return no("the scores are stored permuted");
    if (m.scores->output(0)->dtype() != m.context->output(0)->dtype() ||
        m.scores->input(0)->dtype() != m.context->input(1)->dtype())
      return no("the two products have different dtypes");
    m.q = m.scores->input(0);
    m.k = m.scores->input(1);
    return true;
  }

  /// Operand `i` of product `p` as an Attention operand: its source and perm (identity when
  /// absent); with `scale`, one-element constant scalings just before it, read by `p` alone,
  /// join it.
  static Value *operand(const Graph &g, Node &p, int i, std::vector<int64_t> *perm, double *scale) {
    const char *attr = i == 0 ? "perm_a" : "perm_b";
    *perm = p.hasAttr(attr) && !p.getInts(attr).empty() ? p.getInts(attr) : identity4();
    Value *v = p.input(i);
    const Node *reader = &p;
    int data = 0;
    while (Node *s = scale ? v->producer() : nullptr) {
      auto f = scalarFactor(*s, &data);
      if (!f || !onlyReader(g, v, reader))
        break;
      *scale *= *f;
      reader = s;
      v = s->input(data);
    }
    return v;
  }

  static Expected<bool> fuse(Graph &g, Node &s, const PassOptions &options, std::string *why) {
    Match m;
    if (!match(g, s, m, why))
      return false;
    for (const Value *v : {m.scores->input(0), m.scores->input(1), m.context->input(1)})
      if (!v->shape().isRanked() || v->shape().rank() != 4)
        return (*why = "Q, K and V are not 4-D", false);
    double scale = m.scale;
    std::vector<int64_t> pq, pk, pv;
    Value *q = operand(g, *m.scores, 0, &pq, &scale);
    Value *k = operand(g, *m.scores, 1, &pk, &scale);
    std::swap(pk[2], pk[3]); // the product read Kᵀ
    Value *v = operand(g, *m.context, 1, &pv, nullptr);
    std::vector<std::pair<std::string, Attribute>> attrs = {
        {"scale", Attribute(static_cast<float>(scale))}};
    auto perm = [&](const char *name, const std::vector<int64_t> &p) {
      if (p != identity4())
        attrs.emplace_back(name, Attribute(p));
    };
    perm("perm_q", pq);
    perm("perm_k", pk);
    perm("perm_v", pv);
    if (m.context->hasAttr("perm_y"))
      perm("perm_y", m.context->getInts("perm_y"));
    std::vector<Value *> inputs = {q, k, v};
    if (m.mask)
      inputs.push_back(m.mask);
    auto y = addTypedNode(g, Op::kAttention, inputs, m.context->output(0)->name(), m.context,
                          *m.context, attrs);
    if (!y)
      return (*why = std::string(y.status().message()), false);
    // Equal batch and head counts (the products could broadcast them; the kernel does not).
    auto logical = [](const Value *x, const std::vector<int64_t> &p) {
      std::vector<Dim> d;
      for (int64_t a : p)
        d.push_back(x->shape()[a]);
      return d;
    };
    const auto lq = logical(q, pq), lk = logical(k, pk), lv = logical(v, pv);
    std::string no;
    if (lq[0] != lk[0] || lk[0] != lv[0] || lq[1] != lk[1] || lk[1] != lv[1])
      no = "Q, K and V differ in batch or head counts (broadcast products)";
    else if ((*y)->type() != m.context->output(0)->type())
      no = fmt::format("the Attention node's type {} is not the product's {}", (*y)->type().str(),
                       m.context->output(0)->type().str());
    else if (options.gpuSupport && !options.gpuSupport(*(*y)->producer(), &no))
      no = no.empty() ? "the GPU backend cannot run it" : no;
    if (!no.empty()) {
      g.eraseNode((*y)->producer());
      return (*why = no, false);
    }
    options.debugf("{}: fused {} .. {} into attention -> {}", label(s), label(*m.scores),
                   label(*m.context), m.context->output(0)->name());
    // The Attention node takes the second product's name (profiles and errors keep the
    // model's names).
    const std::string name = m.context->name();
    replaceOutputNamed(g, m.context, *y);
    (*y)->producer()->setName(name);
    // The chain is dead now; gone, it no longer counts as a reader of Q, K and V.
    eraseDeadChain(g, s);
    DLC_ASSIGN_OR_RETURN(Node * a, foldOperandViews(g, *(*y)->producer(), options));
    mergeProjections(g, *a, options);
    return true;
  }

  /// Where operand `i` of an attention can be read from: the buffer, the strided view of it
  /// and the factor that joins the scale.
  struct Source {
    Value *value = nullptr;
    StridedView view;
    double factor = 1.0;
  };

  /// The deepest source of operand `i` (its layout `op`) past a data-moving op or a scaling,
  /// or nullopt when there is none.
  static std::optional<Source> deepestSource(Node &a, int i, const ops::AttentionOperand &op) {
    Source cur{a.input(i), {}, 1.0};
    const auto sizes = op.logical();
    const auto strides = op.strides();
    cur.view = {{sizes.begin(), sizes.end()}, {strides.begin(), strides.end()}, op.offset};
    for (size_t j = 0; j < 4; ++j)
      if (cur.view.sizes[j] == 1)
        cur.view.strides[j] = 0;
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
  static Expected<Node *> foldOperandViews(Graph &g, Node &a, const PassOptions &options) {
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
    Node *b = replaceAttention(g, a, inputs, attrs, options, "operands read in place");
    if (!b)
      return &a;
    options.debugf("{}: operands read in place{}", label(*b), log);
    return b;
  }

  /// A projection making an attention operand: add(matmul(%x, %w), %b) or matmul(%x, %w),
  /// %w a 2-D constant [K, N], %b a constant [N].
  struct Projection {
    Node *matmul = nullptr;
    Value *out = nullptr; // the add's result, or the product's
    const Tensor *w = nullptr, *b = nullptr;
  };

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
    Node *p = v->producer();
    if (!p || !onlyReader(g, v, reader) || !v->shape().isStatic())
      return std::nullopt;
    Projection r;
    r.out = v;
    if (p->op() == Op::kAdd) {
      for (int j : {0, 1}) {
        const Value *c = p->input(j);
        Node *m = p->input(1 - j)->producer();
        if (c->isConstant() && c->shape().rank() == 1 && m && m->op() == Op::kMatMul &&
            onlyReader(g, p->input(1 - j), p)) {
          r.b = &c->constant();
          r.matmul = m;
        }
      }
    } else if (p->op() == Op::kMatMul) {
      r.matmul = p;
    }
    if (!r.matmul || r.matmul->output(0)->shape() != v->shape())
      return std::nullopt;
    for (const char *perm : {"perm_a", "perm_b", "perm_y"})
      if (r.matmul->hasAttr(perm) && !r.matmul->getInts(perm).empty())
        return std::nullopt;
    const Value *w = r.matmul->input(1);
    if (!w->isConstant() || w->shape().rank() != 2)
      return std::nullopt;
    r.w = &w->constant();
    if (r.b && (r.b->dtype() != r.w->dtype() || r.b->shape()[0] != r.w->shape()[1]))
      return std::nullopt;
    return r;
  }

  /// `parts` side by side along their last axis (2-D weights or 1-D biases of one dtype).
  static Tensor sideBySide(const std::vector<const Tensor *> &parts) {
    const std::vector<int64_t> first = parts[0]->shape();
    const int64_t rows = first.size() == 2 ? first[0] : 1;
    const int64_t bytes = dtypeSize(parts[0]->dtype());
    int64_t cols = 0;
    for (const Tensor *t : parts)
      cols += t->shape().back();
    Tensor out =
        Tensor::zeros(parts[0]->dtype(), first.size() == 2 ? std::vector<int64_t>{rows, cols}
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

  /// Q, K and V made by three projections of one input (BERT's query, key and value Linear
  /// layers) become one projection with the weights side by side, which attention `a` reads
  /// through strided operands: one GEMM three times as wide instead of three. Kept as they
  /// were when anything does not fit.
  static void mergeProjections(Graph &g, Node &a, const PassOptions &options) {
    std::optional<Projection> p[3];
    for (int i = 0; i < 3; ++i)
      if (!(p[i] = projectionOf(g, a, i)))
        return;
    Value *x = p[0]->matmul->input(0);
    for (int i = 1; i < 3; ++i)
      if (p[i]->matmul->input(0) != x || p[i]->matmul == p[0]->matmul ||
          (p[i]->b != nullptr) != (p[0]->b != nullptr) || p[i]->w->dtype() != p[0]->w->dtype() ||
          p[i]->w->shape()[0] != p[0]->w->shape()[0] || p[i]->out->dtype() != p[0]->out->dtype() ||
          p[1]->matmul == p[2]->matmul)
        return;
    auto layout = staticLayout(a);
    if (!layout)
      return;
    const std::string base = p[0]->matmul->output(0)->name() + "/qkv";
    Value *w = g.addConstant(base + "_weight", sideBySide({p[0]->w, p[1]->w, p[2]->w}));
    auto product = addTypedNode(g, Op::kMatMul, {x, w}, base, &a, *p[0]->matmul);
    if (!product) {
      g.eraseConstant(w);
      return;
    }
    Value *proj = *product, *bias = nullptr;
    if (p[0]->b) {
      bias = g.addConstant(base + "_bias", sideBySide({p[0]->b, p[1]->b, p[2]->b}));
      auto sum = addTypedNode(g, Op::kAdd, {*product, bias}, base, &a, *p[0]->matmul);
      proj = sum ? *sum : nullptr;
    }
    auto undo = [&] {
      if (proj && proj != *product)
        g.eraseNode(proj->producer());
      g.eraseNode((*product)->producer());
      g.eraseConstant(w);
      if (bias)
        g.eraseConstant(bias);
    };
    if (!proj || !proj->shape().isStatic()) {
      undo();
      return;
    }
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
        options.debugf("{}: projections not merged: {} cannot be read as a block of {}", label(a),
                       "QKV"[i], proj -> name());
        undo();
        return;
      }
      addStrided(attrs, i, *view);
    }
    std::vector<Value *> inputs = {proj, proj, proj};
    if (a.numInputs() > 3 && a.input(3))
      inputs.push_back(a.input(3));
    const std::string names = fmt::format("{}, {} and {}", label(*p[0]->matmul),
                                          label(*p[1]->matmul), label(*p[2]->matmul));
    if (!replaceAttention(g, a, inputs, attrs, options, "merging the projections")) {
      undo();
      return;
    }
    options.debugf("{}: merged the projections {} into {}", label(*proj->uses()[0].node), names,
                   proj->name());
  }
};

} // namespace

std::unique_ptr<Pass> createFuseAttention() { return std::make_unique<FuseAttention>(); }

} // namespace dlc
