// Attention's row, shape inference and layout (see attention.h). Inference and
// attentionLayout share one reading of the operands (readOperands), over dims that may be
// symbolic.
#include "ir/ops/attention.h"

#include <cmath>

#include "ir/ops/families.h"
#include "ir/ops/infer_checks.h"
#include "ir/ops/util.h"

namespace dlc::ops {

namespace {

using Dims4 = std::array<Dim, 4>;
constexpr std::array<int64_t, 4> kIdentity = {0, 1, 2, 3};
constexpr std::array<int64_t, 4> kSplitHeads = {0, 2, 1, 3}; // [B, S, H, D] <-> [B, H, S, D]

/// An operand over dims: the view and which view axis each logical axis is; a strided one's
/// view is its logical sizes (identity perm) at `strides` from element `offset`.
struct DimOperand {
  Dims4 view;
  std::array<int64_t, 4> perm = kIdentity;
  bool strided = false;
  std::array<int64_t, 4> strides{};
  int64_t offset = 0;

  Dims4 logical() const {
    Dims4 l;
    for (size_t j = 0; j < 4; ++j)
      l[j] = view[static_cast<size_t>(perm[j])];
    return l;
  }
};

struct Operands {
  DimOperand q, k, v, y;
  /// Y as stored: the view for the 4-D form, [B, Sq, Hq * Dv] for the 3-D one.
  std::vector<Dim> yStored;
};

Dim product(const Dim &a, const Dim &b) {
  return a.isKnown() && b.isKnown() ? Dim(a.value() * b.value()) : Dim::unknown();
}

/// The known one of two compatible dims.
Dim known(const Dim &a, const Dim &b) { return a.isKnown() ? a : b; }

Expected<std::array<int64_t, 4>> permAttr(const Node &n, const char *attr) {
  DLC_ASSIGN_OR_RETURN(std::vector<int64_t> p, matmulOperandPerm(n, attr, 4));
  if (p.empty())
    return kIdentity;
  return std::array<int64_t, 4>{p[0], p[1], p[2], p[3]};
}

Expected<int64_t> headsAttr(const Node &n, const char *attr) {
  if (!n.hasAttr(attr))
    return invalidArgument("3-D Q, K and V need the attributes q_num_heads and kv_num_heads");
  const int64_t h = n.getInt(attr);
  if (h <= 0)
    return invalidArgument("{} must be positive, got {}", attr, h);
  return h;
}

/// A 3-D operand [B, S, H * D] as the view [B, S, H, D] with the middle axes swapped.
Expected<DimOperand> splitHeads(const Shape &s, int64_t heads, const char *what) {
  Dim d = Dim::unknown();
  if (s[2].isKnown()) {
    if (s[2].value() % heads != 0)
      return invalidArgument("{}'s hidden size {} is not a multiple of its {} heads", what,
                             s[2].value(), heads);
    d = Dim(s[2].value() / heads);
  }
  return DimOperand{{s[0], s[1], Dim(heads), d}, kSplitHeads};
}

constexpr const char *kPermAttrs[] = {"perm_q", "perm_k", "perm_v"};

/// Operand `i`'s strided form (sizes_q, strides_q, offset_q and so on) over the stored shape
/// `stored`, or nullopt when it has none.
Expected<std::optional<DimOperand>> stridedOperand(const Node &n, int i, const Shape &stored) {
  const StridedAttrNames a = stridedAttrNames(i);
  auto ints = [&](const char *attr) {
    return n.hasAttr(attr) ? n.getInts(attr) : std::vector<int64_t>{};
  };
  const std::vector<int64_t> sizes = ints(a.sizes), strides = ints(a.strides);
  if (sizes.empty() && strides.empty())
    return std::optional<DimOperand>();
  if (sizes.size() != 4 || strides.size() != 4)
    return invalidArgument("{} and {} give the 4 axes [B, H, S, D]; got [{}] and [{}]", a.sizes,
                           a.strides, fmt::join(sizes, ", "), fmt::join(strides, ", "));
  if (!ints(kPermAttrs[i]).empty())
    return invalidArgument("a strided operand ({}) takes no {}", a.strides, kPermAttrs[i]);
  DimOperand d;
  d.strided = true;
  d.offset = n.hasAttr(a.offset) ? n.getInt(a.offset) : 0;
  bool empty = false;
  int64_t last = d.offset;
  for (size_t j = 0; j < 4; ++j) {
    if (sizes[j] < 0 || strides[j] < 0 || d.offset < 0)
      return invalidArgument("{} [{}], {} [{}] and {} {} must not be negative", a.sizes,
                             fmt::join(sizes, ", "), a.strides, fmt::join(strides, ", "), a.offset,
                             d.offset);
    d.view[j] = Dim(sizes[j]);
    d.strides[j] = strides[j];
    empty = empty || sizes[j] == 0;
    last += sizes[j] > 0 ? (sizes[j] - 1) * strides[j] : 0;
  }
  const std::optional<int64_t> elements = stored.isStatic() ? stored.numElements() : std::nullopt;
  if (elements && !empty && last >= *elements)
    return invalidArgument("the view {} [{}] at {} [{}] from element {} reaches element {} of "
                           "a buffer of {} ({})",
                           a.sizes, fmt::join(sizes, ", "), a.strides, fmt::join(strides, ", "),
                           d.offset, last, *elements, stored.str());
  return std::optional<DimOperand>(d);
}

Expected<Operands> readOperands(const Node &n, const Shape &q, const Shape &k, const Shape &v) {
  const Shape *stored[] = {&q, &k, &v};
  std::optional<DimOperand> strided[3];
  for (int i = 0; i < 3; ++i) {
    DLC_ASSIGN_OR_RETURN(strided[i], stridedOperand(n, i, *stored[i]));
  }
  const bool anyStrided = strided[0] || strided[1] || strided[2];
  // The 3-D form: every operand [B, S, H * D]; otherwise each is 4-D or strided.
  const int64_t rank = anyStrided ? 4 : q.rank();
  for (int i = 0; i < 3; ++i) {
    if (strided[i] || ((rank == 3 || rank == 4) && stored[i]->rank() == rank))
      continue;
    if (anyStrided)
      return invalidArgument("Q, K and V must each be 4-D or strided, got shapes {}, {} and {}",
                             q.str(), k.str(), v.str());
    return invalidArgument("Q, K and V must all be 3-D or all 4-D, got shapes {}, {} and {}",
                           q.str(), k.str(), v.str());
  }
  Operands o;
  if (rank == 4) {
    DimOperand *ins[] = {&o.q, &o.k, &o.v};
    for (size_t i = 0; i < 3; ++i) {
      if (strided[i]) {
        *ins[i] = *strided[i];
        continue;
      }
      for (size_t a = 0; a < 4; ++a)
        ins[i]->view[a] = (*stored[i])[static_cast<int64_t>(a)];
      DLC_ASSIGN_OR_RETURN(ins[i]->perm, permAttr(n, kPermAttrs[i]));
    }
  } else {
    for (const char *attr : {"perm_q", "perm_k", "perm_v", "perm_y"})
      if (n.hasAttr(attr) && !n.getInts(attr).empty())
        return invalidArgument("{} needs 4-D operands; Q, K and V are 3-D", attr);
    DLC_ASSIGN_OR_RETURN(int64_t hq, headsAttr(n, "q_num_heads"));
    DLC_ASSIGN_OR_RETURN(int64_t hkv, headsAttr(n, "kv_num_heads"));
    DLC_ASSIGN_OR_RETURN(o.q, splitHeads(q, hq, "Q"));
    DLC_ASSIGN_OR_RETURN(o.k, splitHeads(k, hkv, "K"));
    DLC_ASSIGN_OR_RETURN(o.v, splitHeads(v, hkv, "V"));
  }
  const Dims4 lq = o.q.logical(), lk = o.k.logical(), lv = o.v.logical();
  auto same = [&](const Dim &a, const Dim &b, const char *what) -> Status {
    if (!dimsCompatible(a, b))
      return invalidArgument("{} differ: {} vs {} (Q {}, K {}, V {})", what, a.str(), b.str(),
                             q.str(), k.str(), v.str());
    return Status::ok();
  };
  DLC_RETURN_IF_ERROR(same(lq[0], lk[0], "the batch sizes of Q and K"));
  DLC_RETURN_IF_ERROR(same(lk[0], lv[0], "the batch sizes of K and V"));
  DLC_RETURN_IF_ERROR(same(lk[1], lv[1], "the head counts of K and V"));
  DLC_RETURN_IF_ERROR(same(lk[2], lv[2], "the sequence lengths of K and V"));
  DLC_RETURN_IF_ERROR(same(lq[3], lk[3], "the head sizes of Q and K"));
  if (lq[1].isKnown() && lk[1].isKnown() &&
      (lk[1].value() == 0 || lq[1].value() % lk[1].value() != 0))
    return invalidArgument("Q's {} heads are not a multiple of K's and V's {}", lq[1].value(),
                           lk[1].value());
  if (rank == 4 && n.hasAttr("q_num_heads") && lq[1].isKnown() &&
      n.getInt("q_num_heads") != lq[1].value())
    return invalidArgument("q_num_heads = {}, but Q has {} heads", n.getInt("q_num_heads"),
                           lq[1].value());
  const Dims4 ly = {known(known(lq[0], lk[0]), lv[0]), lq[1], lq[2], lv[3]};
  if (rank == 4) {
    using Perm = std::array<int64_t, 4>;
    DLC_ASSIGN_OR_RETURN(Perm perm, permAttr(n, "perm_y"));
    for (size_t i = 0; i < 4; ++i) {
      o.y.view[i] = ly[static_cast<size_t>(perm[i])];
      o.y.perm[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
    }
    o.yStored.assign(o.y.view.begin(), o.y.view.end());
  } else {
    o.y = DimOperand{{ly[0], ly[2], ly[1], ly[3]}, kSplitHeads};
    o.yStored = {ly[0], ly[2], product(ly[1], ly[3])};
  }
  return o;
}

Status inferAttention(InferContext &ctx) {
  for (int i : {0, 1, 2})
    DLC_RETURN_IF_ERROR(checkInputDType(ctx, i, TypeClass::kFloat));
  DLC_ASSIGN_OR_RETURN(DType dtype, commonDType(ctx, {0, 1, 2}));
  const Shape &q = ctx.inputType(0).shape, &k = ctx.inputType(1).shape, &v = ctx.inputType(2).shape;
  if (ctx.hasInput(3)) {
    const DType m = ctx.inputType(3).dtype;
    // ONNX asks for Q's dtype; dlc takes any float (a float32 mask beside float16 scores).
    if (m != DType::kUnknown && m != DType::kBool && !isFloat(m))
      return ctx.error("attn_mask must be bool or a float type, got {}", dtypeName(m));
  }
  if (!q.isRanked() || !k.isRanked() || !v.isRanked()) {
    ctx.setOutputType(0, TensorType(dtype, Shape::unranked()));
    return Status::ok();
  }
  auto o = readOperands(ctx.node(), q, k, v);
  if (!o)
    return ctx.error("{}", o.status().message());
  if (ctx.hasInput(3) && ctx.inputType(3).shape.isRanked()) {
    // The mask broadcasts to the scores [B, Hq, Sq, Sk].
    const Dims4 lq = o->q.logical(), lk = o->k.logical();
    const Dims4 scores = {o->y.logical()[0], lq[1], lq[2], lk[2]};
    const Shape &m = ctx.inputType(3).shape;
    if (m.rank() > 4)
      return ctx.error("attn_mask has rank {}; it must broadcast to the scores [B, Hq, Sq, Sk]",
                       m.rank());
    for (int64_t i = 0; i < m.rank(); ++i) {
      const Dim &d = m[i], &s = scores[static_cast<size_t>(4 - m.rank() + i)];
      if (d.isKnown() && d.value() != 1 && !dimsCompatible(d, s))
        return ctx.error("attn_mask {} does not broadcast to the scores [{}, {}, {}, {}]", m.str(),
                         scores[0].str(), scores[1].str(), scores[2].str(), scores[3].str());
    }
  }
  ctx.setOutputType(0, TensorType(dtype, Shape(o->yStored)));
  return Status::ok();
}

} // namespace

std::array<int64_t, 4> AttentionOperand::logical() const {
  std::array<int64_t, 4> l{};
  for (size_t j = 0; j < 4; ++j)
    l[j] = view[static_cast<size_t>(perm[j])];
  return l;
}

StridedAttrNames stridedAttrNames(int i) {
  static constexpr StridedAttrNames kNames[] = {{"sizes_q", "strides_q", "offset_q"},
                                                {"sizes_k", "strides_k", "offset_k"},
                                                {"sizes_v", "strides_v", "offset_v"}};
  return kNames[i];
}

std::array<int64_t, 4> AttentionOperand::strides() const {
  if (strided)
    return explicitStrides;
  std::array<int64_t, 4> viewStride{};
  int64_t s = 1;
  for (size_t a = 4; a-- > 0;) {
    viewStride[a] = s;
    s *= view[a];
  }
  std::array<int64_t, 4> out{};
  for (size_t j = 0; j < 4; ++j)
    out[j] = viewStride[static_cast<size_t>(perm[j])];
  return out;
}

std::array<int64_t, 4> attentionMaskStrides(const std::vector<int64_t> &mask) {
  std::array<int64_t, 4> out{};
  int64_t stride = 1;
  for (size_t i = mask.size(); i-- > 0;) {
    out[4 - mask.size() + i] = mask[i] == 1 ? 0 : stride;
    stride *= mask[i];
  }
  return out;
}

Expected<AttentionLayout> attentionLayout(const Node &node, const std::vector<int64_t> &q,
                                          const std::vector<int64_t> &k,
                                          const std::vector<int64_t> &v) {
  DLC_ASSIGN_OR_RETURN(Operands o, readOperands(node, Shape::fromSizes(q), Shape::fromSizes(k),
                                                Shape::fromSizes(v)));
  auto sizes = [](const DimOperand &d) {
    AttentionOperand a;
    for (size_t i = 0; i < 4; ++i)
      a.view[i] = d.view[i].value();
    a.perm = d.perm;
    a.strided = d.strided;
    a.explicitStrides = d.strides;
    a.offset = d.offset;
    return a;
  };
  AttentionLayout l;
  l.q = sizes(o.q);
  l.k = sizes(o.k);
  l.v = sizes(o.v);
  l.y = sizes(o.y);
  const auto lq = l.q.logical(), lk = l.k.logical(), lv = l.v.logical();
  l.batch = lq[0];
  l.qHeads = lq[1];
  l.kvHeads = lk[1];
  l.qSeq = lq[2];
  l.kvSeq = lk[2];
  l.headSize = lq[3];
  l.vHeadSize = lv[3];
  l.scale = node.hasAttr("scale") ? node.getFloat("scale")
                                  : 1.0f / std::sqrt(static_cast<float>(l.headSize));
  l.softcap = node.getFloat("softcap");
  l.causal = node.getInt("is_causal") != 0;
  return l;
}

OpDef attentionRow() {
  OpDef d;
  d.op = Op::kAttention;
  d.minInputs = 3;
  d.maxInputs = 4;  // Q, K, V, attn_mask (not past_key / past_value)
  d.maxOutputs = 1; // Y (not present_key, present_value, qk_matmul_output)
  d.fusion = FusionKind::kOpaque;
  d.attrs = {intAttr("is_causal", 0), optionalAttr("q_num_heads", AttrKind::kInt),
             optionalAttr("kv_num_heads", AttrKind::kInt), intAttr("qk_matmul_output_mode", 0),
             optionalAttr("scale", AttrKind::kFloat), floatAttr("softcap", 0.0f),
             intAttr("softmax_precision", 0),
             // dlc's, as MatMul's perm_a / perm_y (attention.h).
             intsAttr("perm_q", {}), intsAttr("perm_k", {}), intsAttr("perm_v", {}),
             intsAttr("perm_y", {}),
             // dlc's strided operands (attention.h).
             intsAttr("sizes_q", {}), intsAttr("strides_q", {}), intAttr("offset_q", 0),
             intsAttr("sizes_k", {}), intsAttr("strides_k", {}), intAttr("offset_k", 0),
             intsAttr("sizes_v", {}), intsAttr("strides_v", {}), intAttr("offset_v", 0)};
  d.infer = inferAttention;
  return d;
}

} // namespace dlc::ops
