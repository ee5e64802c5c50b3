// kmajor-weights: stores each constant 16-bit GEMM weight K-major ([N, K]), for targets whose
// GEMM kernels read B best that way (the GPU pipeline adds it for sm_90a).
//
//     %y = matmul(%x, %w)                =>   %y = matmul(%x, %w_nk) {perm_b = [1, 0]}
//     %y = gemm(%x, %w, %c) {transB = 0} =>   %y = gemm(%x, %w_nk, %c) {transB = 1}
//
// with %w [K, N] a constant and %w_nk its transpose, made at compile time. The product reads
// the same matrix: only its storage changes. An exporter's linear layer on a 3-D input
// (BERT's and ViT's projections, torch's MatMul with the transposed weight) arrives N-major.
// sm_90a's wgmma kernels read either, but only a K-major B tile may be any multiple of 16
// columns wide (an N-major one is loaded in atoms of 64): the 80-, 96- and 160-column tiles
// that fill the SMs on ViT's 13 row tiles (codegen/gemm_sm90.cc). K-major alone was no
// slower on the transformer shapes (H100, session 39, tools/kbench/narrow_tiles.txt):
// 1576x768x3072 at 128 x 128 0.0240 ms against 0.0255 N-major, 1576x2304x768 0.0177 against
// 0.0176.
// Left as they are (said under --debug-only=kmajor-weights): weights read by several nodes
// (one copy each would double their memory), products already reading B K-major, and
// non-16-bit products (int8 weights arrive K-major from realize-int8). Run after
// fuse-attention, whose projection merge reads the exporter's layout.
#include "passes/registry.h"
#include "passes/util/transpose_sink.h"

namespace dlc {

namespace {

class KMajorWeights : public Pass {
public:
  Expected<bool> run(Graph &g, const PassOptions &options) override {
    bool changed = false;
    for (Node *n : g.nodes()) {
      if (n->op() != Op::kMatMul && n->op() != Op::kGemm)
        continue;
      Value *w = n->input(1);
      if (!w || !w->isConstant() || w->shape().rank() != 2)
        continue; // not a product of a weight: nothing to say
      const std::string what = fmt::format("{} -> {}", n->describe(), n->output(0)->name());
      if (const std::string why = keeps(*n); !why.empty()) {
        options.debugf("{}: B stays as it is: {}", what, why);
        continue;
      }
      DLC_ASSIGN_OR_RETURN(Tensor nk, permuted(w->constant(), {1, 0}));
      Value *wt = g.addConstant(g.uniqueName(w->name() + "_nk"), std::move(nk));
      n->setInput(1, wt);
      if (n->op() == Op::kMatMul)
        n->setAttr("perm_b", Attribute(std::vector<int64_t>{1, 0}));
      else
        n->setAttr("transB", Attribute(int64_t{1}));
      if (w->uses().empty())
        g.eraseConstant(w);
      options.debugf("{}: B stored K-major as {} [{}]", what, wt->name(),
                     fmt::join(wt->shape().sizes(), ", "));
      changed = true;
    }
    return changed;
  }

private:
  /// Why the constant 2-D B of MatMul/Gemm `n` is not re-laid, or "" when it is.
  static std::string keeps(const Node &n) {
    const Value *w = n.input(1);
    const DType t = w->dtype();
    if (t != DType::kF16 && t != DType::kBF16)
      return fmt::format("its dtype is {} (the re-layout is for 16-bit products)", dtypeName(t));
    if (n.op() == Op::kMatMul && n.hasAttr("perm_b") && !n.getInts("perm_b").empty())
      return "it is read through perm_b already";
    if (n.op() == Op::kGemm && n.hasAttr("transB") && n.getInt("transB") != 0)
      return "it is K-major already (transB)";
    if (w->uses().size() != 1)
      return fmt::format("{} nodes read it", w->uses().size());
    return "";
  }
};

} // namespace

std::unique_ptr<Pass> createKMajorWeights() { return std::make_unique<KMajorWeights>(); }

} // namespace dlc
