#include "frontend/onnx/exporter.h"

#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "frontend/onnx/model_reader.h"
#include "frontend/onnx/tensor_proto.h"
#include "ir/annotations/fused_groups.h"
#include "ir/eval/eval_util.h"
#include "ir/ops/attention.h"
#include "ir/ops/conv_util.h"
#include "onnx/onnx.pb.h"

namespace dlc::onnx {

namespace {

using TP = ::onnx::TensorProto;

void setType(const TensorType &t, ::onnx::ValueInfoProto &info) {
  auto *tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(detail::onnxDTypeOf(t.dtype));
  if (!t.shape.isRanked())
    return;
  auto *shape = tensor->mutable_shape();
  for (int64_t i = 0; i < t.shape.rank(); ++i) {
    auto *dim = shape->add_dim();
    const Dim &d = t.shape[i];
    if (d.isKnown())
      dim->set_dim_value(d.value());
    else if (d.isSymbol())
      dim->set_dim_param(d.symbolName());
  }
}

Status fillTensor(const Tensor &t, const std::string &name, TP &proto) {
  const int type = detail::onnxDTypeOf(t.dtype());
  if (type == TP::UNDEFINED)
    return unimplemented("constant '{}': dtype {} has no ONNX type", name, dtypeName(t.dtype()));
  proto.set_name(name);
  proto.set_data_type(type);
  for (int64_t d : t.shape())
    proto.add_dims(d);
  if (t.byteSize() > 0)
    proto.set_raw_data(t.raw(), static_cast<size_t>(t.byteSize()));
  return Status::ok();
}

Status addAttribute(const std::string &name, const Attribute &a, const Node &n,
                    ::onnx::NodeProto &node) {
  ::onnx::AttributeProto &p = *node.add_attribute();
  p.set_name(name);
  switch (a.kind()) {
  case AttrKind::kInt:
    p.set_type(::onnx::AttributeProto::INT);
    p.set_i(a.i());
    break;
  case AttrKind::kFloat:
    p.set_type(::onnx::AttributeProto::FLOAT);
    p.set_f(a.f());
    break;
  case AttrKind::kString:
    p.set_type(::onnx::AttributeProto::STRING);
    p.set_s(a.s());
    break;
  case AttrKind::kInts:
    p.set_type(::onnx::AttributeProto::INTS);
    for (int64_t v : a.ints())
      p.add_ints(v);
    break;
  case AttrKind::kFloats:
    p.set_type(::onnx::AttributeProto::FLOATS);
    for (float v : a.floats())
      p.add_floats(v);
    break;
  case AttrKind::kStrings:
    p.set_type(::onnx::AttributeProto::STRINGS);
    for (const std::string &v : a.strings())
      p.add_strings(v);
    break;
  case AttrKind::kTensor:
    p.set_type(::onnx::AttributeProto::TENSOR);
    DLC_RETURN_IF_ERROR(fillTensor(a.tensor(), name, *p.mutable_t()));
    break;
  case AttrKind::kDType:
    p.set_type(::onnx::AttributeProto::INT);
    p.set_i(detail::onnxDTypeOf(a.dtype()));
    break;
  default:
    return unimplemented("{}: attribute '{}' cannot be exported to ONNX", n.describe(), name);
  }
  return Status::ok();
}

/// Writes an Attention node (fuse-attention's, or an imported ONNX-23 one) as the ops ONNX had
/// before opset 23, so that the export loads in any runtime: the views of Q, K and V as
/// Reshape/Transpose, MatMul with Kᵀ, Mul by the scale, softcap, mask (Add, or Where for a
/// bool mask), the causal mask as a constant, Softmax, MatMul with V, Y's view back.
Status writeAttention(const Node &n, ::onnx::GraphProto &graph) {
  const Value *q = n.input(0), *k = n.input(1), *v = n.input(2);
  const Value *mask = n.numInputs() > 3 ? n.input(3) : nullptr;
  for (const Value *x : {q, k, v})
    if (!x->shape().isStatic())
      return unimplemented("{}: exporting Attention needs static shapes", n.describe());
  DLC_ASSIGN_OR_RETURN(
      ops::AttentionLayout l,
      ops::attentionLayout(n, q->shape().sizes(), k->shape().sizes(), v->shape().sizes()));
  if (l.qHeads != l.kvHeads)
    return unimplemented("{}: exporting grouped-query Attention (q_num_heads != kv_num_heads) "
                         "is not supported",
                         n.describe());
  const std::string out = n.output(0)->name(), base = out + ".dlc_attn";
  int counter = 0;
  auto add = [&](const char *op, std::vector<std::string> inputs) -> ::onnx::NodeProto & {
    ::onnx::NodeProto &node = *graph.add_node();
    node.set_op_type(op);
    node.set_name(fmt::format("{}.{}", base, counter++));
    for (std::string &in : inputs)
      node.add_input(std::move(in));
    node.add_output(node.name());
    return node;
  };
  auto ints = [](::onnx::NodeProto &node, const char *name, const std::vector<int64_t> &values) {
    ::onnx::AttributeProto &a = *node.add_attribute();
    a.set_name(name);
    a.set_type(::onnx::AttributeProto::INTS);
    for (int64_t x : values)
      a.add_ints(x);
  };
  auto constant = [&](const Tensor &t) -> Expected<std::string> {
    const std::string name = fmt::format("{}.{}", base, counter++);
    DLC_RETURN_IF_ERROR(fillTensor(t, name, *graph.add_initializer()));
    return name;
  };
  auto scalar = [&](double x) {
    return constant(eval::castTensor(Tensor::scalarF32(static_cast<float>(x)), q->dtype()));
  };
  // An operand's stored view as its logical [B, H, S, D].
  auto logical = [&](const Value *x, const ops::AttentionOperand &op) -> Expected<std::string> {
    std::string name = x->name();
    if (op.strided) {
      // Gather(flattened buffer, offset + b sB + h sH + s sS + d sD), the index the broadcast
      // sum of one small constant per axis.
      DLC_ASSIGN_OR_RETURN(std::string flatShape, constant(Tensor::vectorI64({-1})));
      const std::string flat = add("Reshape", {name, flatShape}).output(0);
      std::string index;
      for (size_t j = 0; j < 4; ++j) {
        std::vector<int64_t> shape(4, 1), values;
        shape[j] = op.view[j];
        for (int64_t i = 0; i < op.view[j]; ++i)
          values.push_back((j == 0 ? op.offset : 0) + i * op.explicitStrides[j]);
        DLC_ASSIGN_OR_RETURN(std::string axis, constant(Tensor::vectorI64(values).reshaped(shape)));
        index = j == 0 ? axis : add("Add", {index, axis}).output(0);
      }
      return add("Gather", {flat, index}).output(0);
    }
    if (x->shape().rank() == 3) {
      DLC_ASSIGN_OR_RETURN(std::string shape,
                           constant(Tensor::vectorI64({op.view.begin(), op.view.end()})));
      name = add("Reshape", {name, shape}).output(0);
    }
    if (op.perm != std::array<int64_t, 4>{0, 1, 2, 3}) {
      ::onnx::NodeProto &t = add("Transpose", {name});
      ints(t, "perm", {op.perm.begin(), op.perm.end()});
      name = t.output(0);
    }
    return name;
  };
  DLC_ASSIGN_OR_RETURN(std::string lq, logical(q, l.q));
  DLC_ASSIGN_OR_RETURN(std::string lk, logical(k, l.k));
  DLC_ASSIGN_OR_RETURN(std::string lv, logical(v, l.v));
  ::onnx::NodeProto &kt = add("Transpose", {lk});
  ints(kt, "perm", {0, 1, 3, 2});
  std::string s = add("MatMul", {lq, kt.output(0)}).output(0);
  DLC_ASSIGN_OR_RETURN(std::string scale, scalar(l.scale));
  s = add("Mul", {s, scale}).output(0);
  if (l.softcap > 0) {
    DLC_ASSIGN_OR_RETURN(std::string cap, scalar(l.softcap));
    s = add("Mul", {add("Tanh", {add("Div", {s, cap}).output(0)}).output(0), cap}).output(0);
  }
  if (mask && mask->dtype() == DType::kBool) {
    DLC_ASSIGN_OR_RETURN(std::string ninf, scalar(-std::numeric_limits<double>::infinity()));
    s = add("Where", {mask->name(), s, ninf}).output(0);
  } else if (mask) {
    std::string m = mask->name();
    if (mask->dtype() != q->dtype()) {
      ::onnx::NodeProto &c = add("Cast", {m});
      ::onnx::AttributeProto &to = *c.add_attribute();
      to.set_name("to");
      to.set_type(::onnx::AttributeProto::INT);
      to.set_i(detail::onnxDTypeOf(q->dtype()));
      m = c.output(0);
    }
    s = add("Add", {s, m}).output(0);
  }
  if (l.causal) {
    std::vector<float> tri(static_cast<size_t>(l.qSeq * l.kvSeq), 0.0f);
    for (int64_t i = 0; i < l.qSeq; ++i)
      for (int64_t j = i + 1; j < l.kvSeq; ++j)
        tri[static_cast<size_t>(i * l.kvSeq + j)] = -std::numeric_limits<float>::infinity();
    DLC_ASSIGN_OR_RETURN(std::string c,
                         constant(eval::castTensor(
                             Tensor::fromVector(DType::kF32, {l.qSeq, l.kvSeq}, tri), q->dtype())));
    s = add("Add", {s, c}).output(0);
  }
  ::onnx::NodeProto &softmax = add("Softmax", {s});
  ::onnx::AttributeProto &axis = *softmax.add_attribute();
  axis.set_name("axis");
  axis.set_type(::onnx::AttributeProto::INT);
  axis.set_i(-1);
  std::string y = add("MatMul", {softmax.output(0), lv}).output(0);
  // Back to Y's stored view: logical axis j is view axis perm[j].
  std::vector<int64_t> toView(4);
  for (size_t j = 0; j < 4; ++j)
    toView[static_cast<size_t>(l.y.perm[j])] = static_cast<int64_t>(j);
  if (toView != std::vector<int64_t>{0, 1, 2, 3}) {
    ::onnx::NodeProto &t = add("Transpose", {y});
    ints(t, "perm", toView);
    y = t.output(0);
  }
  DLC_ASSIGN_OR_RETURN(std::string shape,
                       constant(Tensor::vectorI64(n.output(0)->shape().sizes())));
  ::onnx::NodeProto &last = add("Reshape", {y, shape});
  last.set_output(0, out);
  last.set_doc_string("dlc: fused Attention, written as the ops it computes");
  return Status::ok();
}

} // namespace

Expected<std::string> exportModel(const Graph &g, const std::string &producer) {
  ::onnx::ModelProto model;
  model.set_ir_version(10);
  model.set_producer_name(producer);
  model.add_opset_import()->set_version(kExportOpset);
  bool training = false; // whether ai.onnx.preview.training is imported yet
  ::onnx::GraphProto &graph = *model.mutable_graph();
  graph.set_name(g.name());
  for (const Value *in : g.inputs()) {
    auto &info = *graph.add_input();
    info.set_name(in->name());
    setType(in->type(), info);
  }
  for (const Value *c : g.constants())
    DLC_RETURN_IF_ERROR(fillTensor(c->constant(), c->name(), *graph.add_initializer()));
  std::map<int64_t, std::string> groupOps; // fused group -> its ops ("conv + add + relu")
  for (const Node *n : g.nodes())
    if (auto group = fuseGroupOf(*n)) {
      std::string &ops = groupOps[*group];
      ops += (ops.empty() ? "" : " + ") + std::string(opOnnxName(n->op()));
    }
  int64_t fusedNodes = 0;
  for (const Node *n : g.nodes()) {
    if (n->op() == Op::kFakeQuant)
      return unimplemented("{}: ONNX has no FakeQuant; run canonicalize-quant first (it makes "
                           "it QuantizeLinear -> DequantizeLinear)",
                           n->describe());
    if ((n->op() == Op::kMatMulInteger && n->getInt("transB") != 0) ||
        (n->op() == Op::kConvInteger && n->getInt("channels_last") != 0))
      return unimplemented("{}: the int8 kernel form realize-int8 makes (transB / channels_last) "
                           "has no ONNX spelling; export the model before realize-int8",
                           n->describe());
    if (n->def().op == Op::kIf || n->def().op == Op::kLoop || n->def().op == Op::kScan)
      return unimplemented("{}: exporting control flow to ONNX is not supported yet",
                           n->describe());
    if (n->op() == Op::kAttention) {
      DLC_RETURN_IF_ERROR(writeAttention(*n, graph));
      continue;
    }
    // ONNX's Conv is channels first: the layout pass's channels-last Conv is written between
    // transposes of its input, its OHWI weight and its output.
    const bool lastConv = n->op() == Op::kConv && n->getInt("channels_last") != 0;
    auto transpose = [&](const std::string &in, const std::string &out,
                         const std::vector<int64_t> &perm) {
      ::onnx::NodeProto &t = *graph.add_node();
      t.set_op_type("Transpose");
      t.set_name(out);
      t.add_input(in);
      t.add_output(out);
      ::onnx::AttributeProto &a = *t.add_attribute();
      a.set_name("perm");
      a.set_type(::onnx::AttributeProto::INTS);
      for (int64_t p : perm)
        a.add_ints(p);
    };
    const std::string lastY = lastConv ? n->output(0)->name() : "";
    if (lastConv) {
      transpose(n->input(0)->name(), lastY + ".dlc_x_nchw", {0, 3, 1, 2});
      transpose(n->input(1)->name(), lastY + ".dlc_w_oihw", {0, 3, 1, 2});
    }
    // The layout pass's channels-last global pool reads [N, spatial..., C]: a transpose to
    // channels first, then the ONNX pool (its output is [N, C, 1, ...] either way).
    const bool lastPool = ops::isGlobalPool(n->op()) && n->getInt("channels_last") != 0;
    const std::string poolX = lastPool ? n->output(0)->name() + ".dlc_x_nchw" : "";
    if (lastPool)
      transpose(n->input(0)->name(), poolX, ops::channelsFirstPerm(n->input(0)->shape().rank()));
    // fold-transpose-matmul's permutations (perm_a, perm_b of the operands, perm_y of the
    // product) are Transposes in ONNX.
    std::vector<int64_t> permY;
    if (n->op() == Op::kMatMul && n->hasAttr("perm_y"))
      permY = n->getInts("perm_y");
    const std::string product = permY.empty() ? "" : n->output(0)->name() + ".dlc_product";
    std::string permuted[2];
    if (n->op() == Op::kMatMul)
      for (int i : {0, 1})
        if (n->hasAttr(i == 0 ? "perm_a" : "perm_b")) {
          const std::vector<int64_t> perm = n->getInts(i == 0 ? "perm_a" : "perm_b");
          if (perm.empty())
            continue;
          permuted[i] = n->output(0)->name() + (i == 0 ? ".dlc_a" : ".dlc_b");
          transpose(n->input(i)->name(), permuted[i], perm);
        }
    ::onnx::NodeProto &node = *graph.add_node();
    node.set_op_type(n->op() == Op::kCopy ? "Identity" : std::string(opOnnxName(n->op())));
    if (n->op() == Op::kAdagrad || n->op() == Op::kAdam || n->op() == Op::kMomentum) {
      node.set_domain(std::string(detail::kTrainingDomain));
      if (!training) {
        auto &imp = *model.add_opset_import();
        imp.set_domain(std::string(detail::kTrainingDomain));
        imp.set_version(1);
        training = true;
      }
    }
    node.set_name(n->name());
    for (int i = 0; i < n->numInputs(); ++i) {
      const Value *v = n->input(i);
      node.add_input(lastConv && i < 2    ? lastY + (i == 0 ? ".dlc_x_nchw" : ".dlc_w_oihw")
                     : lastPool && i == 0 ? poolX
                     : i < 2 && !permuted[i].empty() ? permuted[i]
                     : v                             ? v->name()
                                                     : "");
    }
    for (const Value *v : n->outputs())
      node.add_output(lastConv           ? lastY + ".dlc_y_nchw"
                      : !product.empty() ? product
                      : v                ? v->name()
                                         : "");
    for (const auto &[name, a] : n->attrs())
      if (name.find('.') == std::string::npos && // annotations are dlc's
          !((lastConv || lastPool) && name == "channels_last") &&
          !(n->op() == Op::kMatMul && (name == "perm_a" || name == "perm_b" || name == "perm_y")))
        DLC_RETURN_IF_ERROR(addAttribute(name, a, *n, node));
    if (lastConv)
      transpose(lastY + ".dlc_y_nchw", lastY, {0, 2, 3, 1});
    if (!product.empty())
      transpose(product, n->output(0)->name(), permY);
    // What the passes decided, where viewers (Netron) show it: the node's doc string.
    std::string doc;
    if (auto group = fuseGroupOf(*n)) {
      doc = fmt::format("dlc: fused group {} ({})", *group, groupOps[*group]);
      ++fusedNodes;
    }
    if (n->device().isSet())
      doc += fmt::format("{}dlc: runs on {}", doc.empty() ? "" : "; ", n->device().str());
    if (!doc.empty())
      node.set_doc_string(doc);
  }
  if (fusedNodes > 0) {
    auto *prop = model.add_metadata_props();
    prop->set_key("dlc.fused_groups");
    prop->set_value(std::to_string(groupOps.size()));
  }
  // ONNX names outputs by value: an output known under another name gets an Identity.
  std::set<std::string> declared;
  for (const Graph::Output &o : g.outputs()) {
    if (o.name != o.value->name()) {
      if (!declared.insert(o.name).second || g.findValue(o.name))
        return unimplemented("output '{}': the name is taken by another value", o.name);
      ::onnx::NodeProto &id = *graph.add_node();
      id.set_op_type("Identity");
      id.set_name(o.name);
      id.add_input(o.value->name());
      id.add_output(o.name);
    }
    auto &info = *graph.add_output();
    info.set_name(o.name);
    setType(o.value->type(), info);
  }
  std::string bytes;
  if (!model.SerializeToString(&bytes))
    return internalError("the ONNX model could not be serialized (over 2 GiB?)");
  return bytes;
}

Status exportModelFile(const Graph &g, const std::string &path, const std::string &producer) {
  DLC_ASSIGN_OR_RETURN(std::string bytes, exportModel(g, producer));
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out)
    return unavailable("{}: cannot write the file", path);
  return Status::ok();
}

} // namespace dlc::onnx
