#include "passes/util/einsum_expand.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "ir/ops/einsum.h"
#include "passes/util/node_builder.h"

namespace dlc {

namespace {

/// An operand (or intermediate result) and the label of each of its axes.
struct Term {
  Value *v;
  std::string labels;
};

/// The equation with every "..." spelled out: the labels of each input and of the output, an
/// ellipsis's axes as the digits '0'.. (right-aligned across the inputs, so that an operand
/// with fewer of them lacks the leading ones, which is how they broadcast). The implicit output
/// is the ellipsis's axes, then the letters used once, in alphabetical order.
struct Labels {
  std::vector<std::string> inputs;
  std::string output;
};

Expected<Labels> spelledOut(const Node &n, const ops::EinsumEquation &eq) {
  if (eq.inputs.size() != static_cast<size_t>(n.numInputs()))
    return invalidArgument("the equation has {} operands, the node {} inputs", eq.inputs.size(),
                           n.numInputs());
  std::vector<int64_t> spans;
  int64_t widest = 0;
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    const Value *v = n.input(static_cast<int>(i));
    if (!v->shape().isRanked())
      return invalidArgument("input {} has no rank", i);
    const ops::EinsumTerm &t = eq.inputs[i];
    const int64_t span = v->shape().rank() - static_cast<int64_t>(t.labels.size());
    if (span < 0 || (span > 0 && t.ellipsis < 0))
      return invalidArgument("input {} ({}) has no axis for each of '{}'", i, v->type().str(),
                             t.labels);
    spans.push_back(t.ellipsis < 0 ? 0 : span);
    widest = std::max(widest, spans.back());
  }
  if (widest > 10)
    return invalidArgument("an ellipsis over {} axes (at most 10 are expanded)", widest);
  auto spell = [&](const ops::EinsumTerm &t, int64_t span) {
    std::string axes;
    for (int64_t k = widest - span; k < widest; ++k)
      axes += static_cast<char>('0' + k);
    std::string out = t.labels;
    if (t.ellipsis >= 0)
      out.insert(static_cast<size_t>(t.ellipsis), axes);
    return out;
  };
  Labels l;
  std::map<char, int> uses;
  for (size_t i = 0; i < eq.inputs.size(); ++i) {
    l.inputs.push_back(spell(eq.inputs[i], spans[i]));
    for (char c : eq.inputs[i].labels)
      ++uses[c];
  }
  if (eq.output) {
    l.output = spell(*eq.output, widest);
  } else {
    l.output = spell({"", 0}, widest);
    for (const auto &[c, count] : uses)
      if (count == 1)
        l.output += c;
  }
  return l;
}

bool has(const std::string &s, char c) { return s.find(c) != std::string::npos; }

/// The types the GPU's GEMM takes; others contract as a broadcast product and a sum.
bool gemmType(DType t) { return t == DType::kF32 || t == DType::kF16 || t == DType::kBF16; }

/// The largest broadcast product (elements) a contraction without GEMM may make.
constexpr int64_t kMaxProductElements = int64_t{1} << 22;

class EinsumExpander {
public:
  EinsumExpander(Graph &g, Node *n) : b_(g, n) {}

  Expected<Value *> run(const Node &n) {
    DLC_ASSIGN_OR_RETURN(ops::EinsumEquation eq, ops::parseEinsum(n.getString("equation")));
    DLC_ASSIGN_OR_RETURN(Labels spelled, spelledOut(n, eq));
    const std::string out = spelled.output;
    for (int i = 0; i < n.numInputs(); ++i) {
      const std::string &labels = spelled.inputs[static_cast<size_t>(i)];
      for (size_t a = 0; a < labels.size(); ++a)
        sizes_[labels[a]] = n.input(i)->shape()[static_cast<int64_t>(a)].value();
      terms_.push_back({n.input(i), labels});
    }
    for (size_t i = 0; i < terms_.size(); ++i) {
      DLC_ASSIGN_OR_RETURN(terms_[i], diagonals(terms_[i]));
      DLC_ASSIGN_OR_RETURN(terms_[i], sumOut(terms_[i], neededBesides(i, out)));
    }
    Term acc = terms_[0];
    for (size_t i = 1; i < terms_.size(); ++i) {
      std::string keep = out;
      for (size_t j = i + 1; j < terms_.size(); ++j)
        keep += terms_[j].labels;
      DLC_ASSIGN_OR_RETURN(acc, contract(acc, terms_[i], keep));
    }
    DLC_ASSIGN_OR_RETURN(acc, sumOut(acc, out)); // one operand: what the output drops
    std::vector<int64_t> perm;
    for (char c : out)
      perm.push_back(static_cast<int64_t>(acc.labels.find(c)));
    acc = transposed(acc, perm, "out");
    for (const Value *in : n.inputs())
      if (acc.v == in) // nothing to compute: the result is a node still
        return b_.op(Op::kIdentity, {acc.v}, name("same"));
    return acc.v;
  }

private:
  /// The labels operand `i` must keep: the output's and every other operand's.
  std::string neededBesides(size_t i, const std::string &out) const {
    std::string keep = out;
    for (size_t j = 0; j < terms_.size(); ++j)
      if (j != i)
        keep += terms_[j].labels;
    return keep;
  }

  std::string name(const std::string &what) { return fmt::format("{}{}", what, next_++); }

  /// Each label that repeats in `t`: the diagonal, its second axis gone.
  Expected<Term> diagonals(Term t) {
    for (size_t p = 0; p < t.labels.size(); ++p) {
      const size_t q = t.labels.find(t.labels[p], p + 1);
      if (q == std::string::npos)
        continue;
      const int64_t n = sizes_[t.labels[p]];
      std::vector<int64_t> shape(t.labels.size(), 1);
      shape[p] = shape[q] = n;
      Tensor eye = Tensor::zeros(DType::kF64, {n * n});
      for (int64_t k = 0; k < n; ++k)
        eye.mutableData<double>()[k * n + k] = 1;
      Value *mask = b_.constant(name("eye"), eye.castTo(t.v->dtype()).reshaped(shape));
      DLC_ASSIGN_OR_RETURN(Value * m, b_.op(Op::kMul, {t.v, mask}, name("diag_mask")));
      DLC_ASSIGN_OR_RETURN(t.v, b_.op(Op::kReduceSum,
                                      {m, b_.ints(name("diag_axes"), {static_cast<int64_t>(q)})},
                                      name("diag"), {{"keepdims", Attribute(int64_t{0})}}));
      t.labels.erase(q, 1);
      --p; // the label may repeat a third time
    }
    return t;
  }

  /// `t` with the labels not in `keep` summed out.
  Expected<Term> sumOut(Term t, const std::string &keep) {
    std::vector<int64_t> axes;
    std::string left;
    for (size_t a = 0; a < t.labels.size(); ++a)
      if (has(keep, t.labels[a]))
        left += t.labels[a];
      else
        axes.push_back(static_cast<int64_t>(a));
    if (axes.empty())
      return t;
    DLC_ASSIGN_OR_RETURN(t.v, b_.op(Op::kReduceSum, {t.v, b_.ints(name("sum_axes"), axes)},
                                    name("sum"), {{"keepdims", Attribute(int64_t{0})}}));
    t.labels = left;
    return t;
  }

  Term transposed(Term t, const std::vector<int64_t> &perm, const std::string &what) {
    bool identity = true;
    for (size_t i = 0; i < perm.size(); ++i)
      identity &= perm[i] == static_cast<int64_t>(i);
    if (identity)
      return t;
    std::string labels;
    for (int64_t p : perm)
      labels += t.labels[static_cast<size_t>(p)];
    auto v = b_.op(Op::kTranspose, {t.v}, name(what), {{"perm", Attribute(perm)}});
    return v ? Term{*v, labels} : t; // a transpose of a typed value always infers
  }

  /// a x b over their shared labels: batch (kept), contracted (not kept).
  Expected<Term> contract(const Term &a, const Term &b, const std::string &keep) {
    std::string batch, contracted, left, right;
    for (char c : a.labels)
      (has(b.labels, c) ? (has(keep, c) ? batch : contracted) : left) += c;
    for (char c : b.labels)
      if (!has(a.labels, c))
        right += c;
    auto order = [](const Term &t, const std::string &labels) {
      std::vector<int64_t> perm;
      for (char c : labels)
        perm.push_back(static_cast<int64_t>(t.labels.find(c)));
      return perm;
    };
    auto size = [&](const std::string &labels) {
      int64_t n = 1;
      for (char c : labels)
        n *= sizes_[c];
      return n;
    };
    Term ta = transposed(a, order(a, batch + left + contracted), "lhs");
    Term tb = transposed(b, order(b, batch + contracted + right), "rhs");
    const int64_t nb = size(batch), m = size(left), k = size(contracted), n = size(right);
    if (!gemmType(a.v->dtype())) { // no GEMM kernel (f64): a broadcast product, then a sum
      std::vector<int64_t> sa, sb, sumAxes;
      for (char c : batch)
        sa.push_back(sizes_[c]), sb.push_back(sizes_[c]);
      for (char c : left)
        sa.push_back(sizes_[c]), sb.push_back(1);
      for (char c : contracted) {
        sumAxes.push_back(static_cast<int64_t>(sa.size()));
        sa.push_back(sizes_[c]), sb.push_back(sizes_[c]);
      }
      for (char c : right)
        sa.push_back(1), sb.push_back(sizes_[c]);
      DLC_ASSIGN_OR_RETURN(Value * ba, b_.reshape(ta.v, sa, name("lhs_b")));
      DLC_ASSIGN_OR_RETURN(Value * bb, b_.reshape(tb.v, sb, name("rhs_b")));
      DLC_ASSIGN_OR_RETURN(Value * p, b_.op(Op::kMul, {ba, bb}, name("product")));
      if (!sumAxes.empty()) {
        DLC_ASSIGN_OR_RETURN(p, b_.op(Op::kReduceSum, {p, b_.ints(name("contract_axes"), sumAxes)},
                                      name("contract"), {{"keepdims", Attribute(int64_t{0})}}));
      }
      return Term{p, batch + left + right};
    }
    DLC_ASSIGN_OR_RETURN(Value * ra, b_.reshape(ta.v, {nb, m, k}, name("lhs_3d")));
    DLC_ASSIGN_OR_RETURN(Value * rb, b_.reshape(tb.v, {nb, k, n}, name("rhs_3d")));
    DLC_ASSIGN_OR_RETURN(Value * p, b_.op(Op::kMatMul, {ra, rb}, name("product")));
    std::vector<int64_t> shape;
    const std::string labels = batch + left + right;
    for (char c : labels)
      shape.push_back(sizes_[c]);
    DLC_ASSIGN_OR_RETURN(Value * r, b_.reshape(p, shape, name("product_nd")));
    return Term{r, labels};
  }

  NodeBuilder b_;
  std::vector<Term> terms_;
  std::map<char, int64_t> sizes_;
  int next_ = 0;
};

} // namespace

Status checkEinsumExpandable(const Node &n) {
  DLC_ASSIGN_OR_RETURN(ops::EinsumEquation eq, ops::parseEinsum(n.getString("equation")));
  DLC_ASSIGN_OR_RETURN(Labels spelled, spelledOut(n, eq));
  std::map<char, int64_t> sizes;
  for (int i = 0; i < n.numInputs(); ++i) {
    const Value *v = n.input(i);
    const std::string &labels = spelled.inputs[static_cast<size_t>(i)];
    if (!gemmType(v->dtype()) && v->dtype() != DType::kF64)
      return invalidArgument("input {} is {}; only f32, f16, bf16 and f64 are expanded", i,
                             v->type().str());
    if (!v->shape().isStatic())
      return invalidArgument("input {} ({}) has no static shape", i, v->type().str());
    for (size_t a = 0; a < labels.size(); ++a) {
      const int64_t size = v->shape()[static_cast<int64_t>(a)].value();
      auto [it, fresh] = sizes.emplace(labels[a], size);
      if (!fresh && it->second != size)
        return invalidArgument("axes labelled '{}' have sizes {} and {} (broadcasting is not "
                               "expanded)",
                               labels[a], it->second, size);
    }
  }
  if (!gemmType(n.input(0)->dtype())) { // a broadcast product over every label at once
    int64_t product = 1;
    for (const auto &[label, size] : sizes)
      product *= size;
    if (product > kMaxProductElements)
      return invalidArgument("{} has no GEMM kernel, and the product over every label has {} "
                             "elements (above {})",
                             dtypeName(n.input(0)->dtype()), product, kMaxProductElements);
  }
  return Status::ok();
}

Expected<Value *> expandEinsum(Graph &g, Node *n) { return EinsumExpander(g, n).run(*n); }

} // namespace dlc
