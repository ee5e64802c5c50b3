#include "runtime/jit/quant_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "ir/annotations/quant_ranges.h"
#include "runtime/reference_executor.h"

namespace dlc::jit {

namespace {

/// The layers to report and, per layer, the QuantizeLinear nodes feeding its inputs.
struct Layer {
  const Node *node;
  std::vector<const Node *> quantizers;
  std::string mismatch; // a join with a range mismatch feeds it (insert-fake-quant's words)
};

/// The join with a range mismatch that produces `v`, through Q/DQ and view-like ops, if any.
std::string mismatchAbove(const Value *v) {
  for (int hops = 0; v && v->isNodeOutput() && hops < 16; ++hops) {
    const Node *p = v->producer();
    if (const Attribute *a = p->findAttr(kQuantRangeMismatchAttr))
      return fmt::format("range mismatch at {}: {}", p->describe(), a->s());
    const bool passes = p->op() == Op::kQuantizeLinear || p->op() == Op::kDequantizeLinear ||
                        p->def().fusion == FusionKind::kInjective ||
                        p->def().fusion == FusionKind::kElementwise;
    if (!passes || p->numInputs() == 0)
      return "";
    v = p->input(0);
  }
  return "";
}

std::vector<Layer> quantizedLayers(const Graph &q) {
  std::vector<Layer> out;
  for (const Node *n : q.nodes()) {
    if (n->def().fusion != FusionKind::kOutFusable || !n->output(0))
      continue;
    Layer layer{n, {}, ""};
    bool quantized = false;
    for (const Value *in : n->inputs()) {
      if (layer.mismatch.empty())
        layer.mismatch = mismatchAbove(in);
      const Node *dq = in && in->isNodeOutput() ? in->producer() : nullptr;
      if (!dq || dq->op() != Op::kDequantizeLinear)
        continue;
      quantized = true;
      const Value *qv = dq->input(0);
      if (qv && qv->isNodeOutput() && qv->producer()->op() == Op::kQuantizeLinear)
        layer.quantizers.push_back(qv->producer());
    }
    if (quantized)
      out.push_back(layer);
  }
  return out;
}

struct Sums {
  double signal = 0, noise = 0, dot = 0, ff = 0, qq = 0;
  int64_t values = 0, clipped = 0;
  std::vector<float> magnitudes; // of the quantized inputs, for the percentile
};

} // namespace

Expected<std::vector<LayerQuantReport>>
compareQuantized(const Graph &floatGraph, const Graph &quantGraph,
                 const std::vector<std::map<std::string, Tensor>> &samples) {
  std::vector<Layer> layers = quantizedLayers(quantGraph);
  DLC_ASSIGN_OR_RETURN(ReferenceExecutor fexec, ReferenceExecutor::create(floatGraph));
  DLC_ASSIGN_OR_RETURN(ReferenceExecutor qexec, ReferenceExecutor::create(quantGraph));
  // What to watch: each layer's output (both graphs) and each quantizer's input and scale.
  std::unordered_map<std::string, size_t> byOutput;
  std::unordered_map<const Value *, std::vector<size_t>> byQuantInput;
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string &name = layers[i].node->output(0)->name();
    if (!floatGraph.findValue(name))
      return invalidArgument("{}: its output '{}' is not a value of the float model",
                             layers[i].node->describe(), name);
    byOutput[name] = i;
    for (const Node *q : layers[i].quantizers)
      byQuantInput[q->input(0)].push_back(i);
  }
  std::vector<Sums> sums(layers.size());
  for (const auto &sample : samples) {
    std::unordered_map<std::string, Tensor> floatOut;
    auto f = fexec.run(sample, [&](const Value *v, const Tensor &t) {
      if (byOutput.count(v->name()))
        floatOut[v->name()] = t.castTo(DType::kF64);
    });
    if (!f)
      return f.status();
    auto q = qexec.run(sample, [&](const Value *v, const Tensor &t) {
      auto it = byOutput.find(v->name());
      if (it != byOutput.end() && v->producer() == layers[it->second].node) {
        const Tensor qt = t.castTo(DType::kF64), &ft = floatOut.at(v->name());
        Sums &s = sums[it->second];
        for (int64_t k = 0; k < qt.numElements(); ++k) {
          const double a = ft.data<double>()[k], b = qt.data<double>()[k];
          s.signal += a * a;
          s.noise += (a - b) * (a - b);
          s.dot += a * b;
          s.ff += a * a;
          s.qq += b * b;
        }
      }
      auto qi = byQuantInput.find(v);
      if (qi == byQuantInput.end())
        return;
      for (size_t layer : qi->second)
        for (const Node *qn : layers[layer].quantizers) {
          if (qn->input(0) != v || !qn->input(1) || !qn->input(1)->isConstant())
            continue;
          const Tensor &scale = qn->input(1)->constant();
          if (scale.numElements() != 1)
            continue;
          const double limit = 127.5 * scale.elementAsDouble(0);
          const Tensor x = t.castTo(DType::kF32);
          Sums &s = sums[layer];
          for (int64_t k = 0; k < x.numElements(); ++k) {
            const float m = std::fabs(x.data<float>()[k]);
            s.clipped += m > limit;
            s.magnitudes.push_back(m);
          }
          s.values += x.numElements();
        }
    });
    if (!q)
      return q.status();
  }
  std::vector<LayerQuantReport> out;
  for (size_t i = 0; i < layers.size(); ++i) {
    Sums &s = sums[i];
    LayerQuantReport r;
    r.node = layers[i].node->name();
    r.op = std::string(opOnnxName(layers[i].node->op()));
    r.value = layers[i].node->output(0)->name();
    r.sqnrDb = s.noise == 0 ? std::numeric_limits<double>::infinity()
                            : 10 * std::log10(s.signal / s.noise);
    r.cosine = s.ff > 0 && s.qq > 0 ? s.dot / std::sqrt(s.ff * s.qq) : 1.0;
    r.saturated = s.values ? static_cast<double>(s.clipped) / static_cast<double>(s.values) : 0;
    if (!s.magnitudes.empty()) {
      const size_t at = static_cast<size_t>(0.999 * static_cast<double>(s.magnitudes.size() - 1));
      std::nth_element(s.magnitudes.begin(), s.magnitudes.begin() + static_cast<ptrdiff_t>(at),
                       s.magnitudes.end());
      const double p999 = s.magnitudes[at];
      const double top = *std::max_element(s.magnitudes.begin(), s.magnitudes.end());
      r.outlierRatio = p999 > 0 ? top / p999 : 1.0;
    }
    if (!layers[i].mismatch.empty())
      r.reason = layers[i].mismatch;
    else if (r.saturated > 0.01)
      r.reason =
          fmt::format("saturation: {:.1f} % of its input values are clipped", 100 * r.saturated);
    else if (r.outlierRatio > 8)
      r.reason = fmt::format("outlier-dominated range: max |x| is {:.0f}x the 99.9th percentile",
                             r.outlierRatio);
    out.push_back(std::move(r));
  }
  std::stable_sort(
      out.begin(), out.end(),
      [](const LayerQuantReport &a, const LayerQuantReport &b) { return a.sqnrDb < b.sqnrDb; });
  return out;
}

std::string formatQuantReport(const std::vector<LayerQuantReport> &layers) {
  if (layers.empty())
    return "no quantized layer (no Conv/MatMul/Gemm with a dequantized input)\n";
  std::string out = "quantized layers, worst first (float vs quantized output on the samples):\n";
  size_t width = 5;
  for (const auto &l : layers)
    width = std::max(width, l.node.size() + l.op.size() + 3);
  out += fmt::format("  {:<{}} {:>9} {:>8} {:>9}  {}\n", "layer", width, "SQNR dB", "cosine",
                     "clipped", "reason");
  for (const auto &l : layers)
    out += fmt::format("  {:<{}} {:>9} {:>8.5f} {:>8.2f}%  {}\n", l.node + " (" + l.op + ")", width,
                       std::isinf(l.sqnrDb) ? "exact" : fmt::format("{:.1f}", l.sqnrDb), l.cosine,
                       100 * l.saturated, l.reason);
  return out;
}

} // namespace dlc::jit
