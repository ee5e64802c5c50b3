// The kernel families. Each family file (elementwise.cc, data_movement.cc, reduction.cc,
// pool.cc, gemm.cc, conv.cc, attention.cc, loss.cc) defines one Family; emit.cc lists them and
// dispatches a group to the family that claims its anchor.
#pragma once

#include <string>

#include "codegen/kernel.h"

namespace dlc::codegen {

struct Family {
  const char *name;
  /// Whether this family writes groups anchored at `anchor` (nullptr: an elementwise group).
  bool (*claims)(const Node *anchor);
  /// Whether the family can run this node (dtypes, attributes, sizes); else `why` says what
  /// is missing. Only asked for nodes it claims.
  bool (*supports)(const Node &node, std::string *why);
  Expected<KernelSet> (*emit)(const FusedGroup &group, const EmitOptions &opts);
};

Family elementwiseFamily();   // elementwise.cc: groups of elementwise/broadcast nodes
Family dataMovementFamily();  // data_movement.cc: transpose, concat, slice, gather, pad, ...
Family reductionFamily();     // reduction.cc: Reduce*, ArgMax/Min, softmax, normalisations
Family poolFamily();          // pool.cc: MaxPool, AveragePool, global pools
Family gemmFamily();          // gemm.cc: MatMul, Gemm
Family convFamily();          // conv.cc: Conv (implicit GEMM)
Family attentionFamily();     // attention.cc: Attention (one flash-attention kernel)
Family lossFamily();          // loss.cc: NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
Family convTransposeFamily(); // conv_transpose.cc: ConvTranspose (direct, one thread per output)
Family scanFamily();          // scan.cc: CumSum (a block-wide scan per line, run-time axis)
Family gridSampleFamily();    // grid_sample.cc: GridSample (one thread per output, in double)
Family scatterFamily();       // scatter.cc: ScatterElements, ScatterND (as gathers, deterministic)
Family topKFamily();          // top_k.cc: TopK (one thread per line, k selection passes)
Family nmsFamily();           // nms.cc: NonMaxSuppression's fixed-size form (a thread per class)
Family randomFamily(); // random.cc: RandomUniform/Normal(Like), Bernoulli (the reference's draws)

/// The families in dispatch order (emit.cc).
const std::vector<Family> &families();

/// Parameter declaration for a value buffer: "const __half* __restrict__ name".
std::string paramDecl(const Value *v, const std::string &name, bool written);

/// Threads per block and blocks for a grid-stride loop over `n` elements.
LaunchDims gridStrideLaunch(int64_t n, const EmitOptions &opts, uint32_t threads = 256);

} // namespace dlc::codegen
