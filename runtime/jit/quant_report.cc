#include "runtime/jit/quant_report.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <unordered_map>

#include "ir/annotations/quant_ranges.h"
#include "ir/clone.h"
#include "passes/pass_manager.h"
#include "runtime/jit/value_runner.h"

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
      // The Q, maybe above ops that int8 flows through (insert-fake-quant moves it there).
      const Value *qv = dq->input(0);
      while (qv && qv->isNodeOutput() && qv->producer()->numInputs() > 0 &&
             (qv->producer()->op() == Op::kMaxPool ||
              qv->producer()->def().fusion == FusionKind::kInjective))
        qv = qv->producer()->input(0);
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
  int64_t compared = 0, values = 0, clipped = 0;
  int64_t lostToInf = 0;         // finite in float, Inf or NaN in the other
  std::vector<float> magnitudes; // of the quantized inputs, for the percentile

  /// One output: `f` (float) against `q` (the other precision), same element count. Elements
  /// not finite in float are left out; a finite one that is not in `q` makes the noise inf.
  void add(const Tensor &f, const Tensor &q) {
    const Tensor fd = f.castTo(DType::kF64), qd = q.castTo(DType::kF64);
    for (int64_t k = 0; k < fd.numElements() && k < qd.numElements(); ++k) {
      const double a = fd.data<double>()[k], b = qd.data<double>()[k];
      if (!std::isfinite(a))
        continue;
      ++compared;
      if (!std::isfinite(b)) {
        ++lostToInf;
        noise = std::numeric_limits<double>::infinity();
        continue;
      }
      signal += a * a;
      noise += (a - b) * (a - b);
      dot += a * b;
      ff += a * a;
      qq += b * b;
    }
  }
  double sqnrDb() const {
    return noise == 0 ? std::numeric_limits<double>::infinity() : 10 * std::log10(signal / noise);
  }
  double cosine() const { return ff > 0 && qq > 0 ? dot / std::sqrt(ff * qq) : 1.0; }
};

} // namespace

Expected<std::vector<LayerQuantReport>>
compareQuantized(const Graph &floatGraph, const Graph &quantGraph,
                 const std::vector<std::map<std::string, Tensor>> &samples, Backend backend) {
  std::vector<Layer> layers = quantizedLayers(quantGraph);
  // What to watch: each layer's output (both graphs) and each quantizer's input and scale.
  std::unordered_map<std::string, size_t> byOutput;
  std::unordered_map<const Value *, std::vector<size_t>> byQuantInput;
  std::vector<const Value *> floatWatched, quantWatched;
  for (size_t i = 0; i < layers.size(); ++i) {
    const std::string &name = layers[i].node->output(0)->name();
    const Value *fv = floatGraph.findValue(name);
    if (!fv)
      return invalidArgument("{}: its output '{}' is not a value of the float model",
                             layers[i].node->describe(), name);
    byOutput[name] = i;
    floatWatched.push_back(fv);
    quantWatched.push_back(layers[i].node->output(0));
    for (const Node *q : layers[i].quantizers) {
      byQuantInput[q->input(0)].push_back(i);
      quantWatched.push_back(q->input(0));
    }
  }
  jit::ValueRunnerOptions ro;
  ro.backend = backend;
  DLC_ASSIGN_OR_RETURN(ValueRunner fexec, ValueRunner::create(floatGraph, floatWatched, ro));
  DLC_ASSIGN_OR_RETURN(ValueRunner qexec, ValueRunner::create(quantGraph, quantWatched, ro));
  std::vector<Sums> sums(layers.size());
  for (const auto &sample : samples) {
    std::unordered_map<std::string, Tensor> floatOut;
    DLC_RETURN_IF_ERROR(fexec.run(sample, [&](const Value *v, const Tensor &t) {
      if (byOutput.count(v->name()))
        floatOut[v->name()] = t.castTo(DType::kF64);
    }));
    DLC_RETURN_IF_ERROR(qexec.run(sample, [&](const Value *v, const Tensor &t) {
      auto it = byOutput.find(v->name());
      if (it != byOutput.end() && v->producer() == layers[it->second].node &&
          floatOut.count(v->name()))
        sums[it->second].add(floatOut.at(v->name()), t);
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
    }));
  }
  std::vector<LayerQuantReport> out;
  for (size_t i = 0; i < layers.size(); ++i) {
    Sums &s = sums[i];
    LayerQuantReport r;
    r.node = layers[i].node->name();
    r.op = std::string(opOnnxName(layers[i].node->op()));
    r.value = layers[i].node->output(0)->name();
    r.sqnrDb = s.sqnrDb();
    r.cosine = s.cosine();
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

Expected<std::vector<LayerQuantReport>>
compareMixedPrecision(const Graph &floatGraph,
                      const std::vector<std::map<std::string, Tensor>> &samples,
                      const std::string &precision, const std::string &keepFp32, Backend backend) {
  if (precision != "fp16" && precision != "bf16")
    return invalidArgument("precision '{}': expected fp16 or bf16", precision);
  const DType low = precision == "fp16" ? DType::kF16 : DType::kBF16;
  // The layers: what the mixed-precision pass moves to the low type, less the data movement.
  std::unique_ptr<Graph> lowGraph = cloneGraph(floatGraph);
  DLC_ASSIGN_OR_RETURN(Pipeline p,
                       parsePipeline(fmt::format("mixed-precision{{precision={},keep-fp32={}}}",
                                                 precision, keepFp32)));
  std::ostringstream sink;
  PipelineOptions po;
  po.out = &sink;
  po.err = &sink;
  DLC_RETURN_IF_ERROR(runPipeline(*lowGraph, p, po));
  std::vector<const Node *> layers;
  std::vector<const Value *> watched;
  for (const Node *n : lowGraph->nodes()) {
    if (n->op() == Op::kCast || n->def().fusion == FusionKind::kInjective || !n->output(0) ||
        n->output(0)->dtype() != low)
      continue;
    const Node *fn = floatGraph.findValue(n->output(0)->name())
                         ? floatGraph.findValue(n->output(0)->name())->producer()
                         : nullptr;
    if (!fn || fn->name() != n->name())
      continue;
    layers.push_back(fn);
    watched.push_back(fn->output(0));
  }
  ValueRunnerOptions ro;
  ro.backend = backend;
  DLC_ASSIGN_OR_RETURN(ValueRunner fexec, ValueRunner::create(floatGraph, watched, ro));
  ro.precision = precision;
  ro.keepFp32 = keepFp32;
  DLC_ASSIGN_OR_RETURN(ValueRunner lexec, ValueRunner::create(floatGraph, watched, ro));
  std::unordered_map<const Value *, size_t> index;
  for (size_t i = 0; i < watched.size(); ++i)
    index[watched[i]] = i;
  // fp16: largest finite 65504, smallest normal 2^-14; bf16 has float32's exponent range.
  const double maxLow = low == DType::kF16 ? 65504.0 : 3.3895313892515355e38;
  const double minNormal = low == DType::kF16 ? 6.103515625e-05 : 1.1754943508222875e-38;
  std::vector<Sums> sums(layers.size());
  std::vector<int64_t> tiny(layers.size(), 0);
  std::vector<double> maxAbs(layers.size(), 0);
  for (const auto &sample : samples) {
    std::unordered_map<const Value *, Tensor> floatOut;
    DLC_RETURN_IF_ERROR(fexec.run(sample, [&](const Value *v, const Tensor &t) {
      if (!index.count(v))
        return;
      floatOut[v] = t.castTo(DType::kF64);
      const size_t i = index.at(v);
      const Tensor &f = floatOut[v];
      for (int64_t k = 0; k < f.numElements(); ++k) {
        const double m = std::fabs(f.data<double>()[k]);
        if (!std::isfinite(m))
          continue;
        maxAbs[i] = std::max(maxAbs[i], m);
        sums[i].clipped += m > maxLow;
        tiny[i] += m > 0 && m < minNormal;
        ++sums[i].values;
      }
    }));
    DLC_RETURN_IF_ERROR(lexec.run(sample, [&](const Value *v, const Tensor &t) {
      if (auto it = floatOut.find(v); it != floatOut.end())
        sums[index.at(v)].add(it->second, t);
    }));
  }
  std::vector<LayerQuantReport> out;
  for (size_t i = 0; i < layers.size(); ++i) {
    const Sums &s = sums[i];
    if (s.compared == 0)
      continue; // not observed on this backend (the GPU pipeline removed the value)
    LayerQuantReport r;
    r.node = layers[i]->name();
    r.op = std::string(opOnnxName(layers[i]->op()));
    r.value = layers[i]->output(0)->name();
    r.sqnrDb = s.sqnrDb();
    r.cosine = s.cosine();
    r.saturated = s.values ? static_cast<double>(s.clipped) / static_cast<double>(s.values) : 0;
    const double tinyShare =
        s.values ? static_cast<double>(tiny[i]) / static_cast<double>(s.values) : 0;
    if (s.clipped > 0)
      r.reason =
          fmt::format("values beyond {} range: max |x| {:g} > {:g}", precision, maxAbs[i], maxLow);
    else if (s.lostToInf > 0)
      r.reason = fmt::format("overflow to inf in {}: {} finite value{} became Inf/NaN (an "
                             "intermediate or an input beyond {:g})",
                             precision, s.lostToInf, s.lostToInf == 1 ? "" : "s", maxLow);
    else if (tinyShare > 0.01)
      r.reason = fmt::format("underflow: {:.1f} % of its values are below {}'s smallest normal "
                             "({:g})",
                             100 * tinyShare, precision, minNormal);
    out.push_back(std::move(r));
  }
  std::stable_sort(
      out.begin(), out.end(),
      [](const LayerQuantReport &a, const LayerQuantReport &b) { return a.sqnrDb < b.sqnrDb; });
  return out;
}

std::unique_ptr<Graph> stripQuantization(const Graph &g, int *removed) {
  std::unique_ptr<Graph> out = cloneGraph(g);
  int count = 0;
  for (Node *dq : out->nodes()) {
    if (dq->op() != Op::kDequantizeLinear || !dq->output(0))
      continue;
    const Value *qv = dq->input(0);
    Node *q = qv && qv->isNodeOutput() ? qv->producer() : nullptr;
    if (!q || q->op() != Op::kQuantizeLinear || !q->input(0) ||
        q->input(0)->dtype() != dq->output(0)->dtype())
      continue;
    out->replaceAllUsesWith(dq->output(0), q->input(0));
    ++count;
  }
  // The pairs left without readers go.
  for (bool erased = true; erased;) {
    erased = false;
    for (Node *n : out->nodes()) {
      if ((n->op() != Op::kDequantizeLinear && n->op() != Op::kQuantizeLinear) || !n->output(0) ||
          !n->output(0)->uses().empty() || out->isOutput(n->output(0)))
        continue;
      out->eraseNode(n);
      erased = true;
    }
  }
  if (removed)
    *removed = count;
  return out;
}

std::string formatQuantReport(const std::vector<LayerQuantReport> &layers) {
  if (layers.empty())
    return "no quantized layer (no Conv/MatMul/Gemm with a dequantized input)\n";
  return formatLayerTable(layers, "quantized layers, worst first (float vs quantized output on the "
                                  "samples):");
}

std::string formatLayerTable(const std::vector<LayerQuantReport> &layers,
                             const std::string &title) {
  std::string out = title + "\n";
  size_t width = 5;
  for (const auto &l : layers)
    width = std::max(width, l.node.size() + l.op.size() + 3);
  out += fmt::format("  {:<{}} {:>9} {:>8} {:>9}  {}\n", "layer", width, "SQNR dB", "cosine",
                     "clipped", "reason");
  for (const auto &l : layers)
    out += fmt::format("  {:<{}} {:>9} {:>8.5f} {:>8.2f}%  {}\n", l.node + " (" + l.op + ")", width,
                       std::isinf(l.sqnrDb) ? (l.sqnrDb > 0 ? "exact" : "-inf")
                                            : fmt::format("{:.1f}", l.sqnrDb),
                       l.cosine, 100 * l.saturated, l.reason);
  return out;
}

} // namespace dlc::jit
