// Shared by the reduction family's emitters (reduction.cc: Reduce*, ArgMax/ArgMin;
// reduction_rows.cc: softmax and the normalisations): the parts of a fused reduction group, the
// kernel's buffer names, and passes over rows of contiguous elements.
//
// A reduction group is [prologue] anchor [epilogue] (ir/annotations/fusion_roles.h): prologue nodes
// compute the anchor's input 0 element by element, so the kernel evaluates them at every element it
// loads (`element`); epilogue nodes run on each anchor result before it is stored (`store`).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/code_writer.h"
#include "codegen/elementwise_chain.h"
#include "codegen/kernel.h"
#include "ir/sizes.h"

namespace dlc::codegen::reduction {

using dlc::product; // ir/sizes.h

/// Whether flat indices into a tensor of `n` elements need 64 bits. Past 2^30, not 2^31, so
/// that a grid-stride loop's last step cannot pass INT_MAX.
bool wideIndex(int64_t n);
/// C type for flat indices into a tensor of `n` elements: "int" or "long long".
const char *indexType(int64_t n);

/// A reduction group split around its anchor, with the names of the kernel's buffers:
/// `in<i>` for group.inputs[i], `out<i>` for group.outputs[i], `scratch` for a scratch buffer.
class GroupParts {
public:
  /// Checks the group's structure and names its buffers; `kernel` prefixes the helpers.
  static Expected<GroupParts> make(const FusedGroup &group, std::string kernel);

  const Node &anchor() const { return *anchor_; }
  const Value *data() const { return anchor_->input(0); }
  const std::vector<int64_t> &inShape() const { return inShape_; }
  const std::vector<int64_t> &outShape() const { return outShape_; }
  const std::string &kernel() const { return kernel_; }
  /// Renames the kernel (and so its helpers): two-pass reductions emit two kernels.
  void setKernel(std::string name) { kernel_ = std::move(name); }

  /// The buffer name of a group input; an error when `v` is not one.
  Expected<std::string> param(const Value *v) const;
  /// A group output that is another output of the anchor (LayerNormalization's Mean and
  /// InvStdDev): the row emitter writes it itself; store() and the output vectors skip it.
  bool isSideOutput(const Value *v) const;
  /// The buffer name of group output `v` ("out1"); an error when `v` is not one.
  Expected<std::string> outputParam(const Value *v) const;
  /// Declares every group input and output as parameters of `k`, plus the scratch buffer
  /// `scratch` (index 0 of KernelSet::scratchBytes) when `scratch` is set.
  std::string declareParams(Kernel &k, bool scratch = false, bool scratchWritten = false) const;

  /// Writes the prologue for the data element at flat index `idx` and returns a C expression of
  /// it in the data's compute type. `preloaded` maps values already loaded (vector loads) to
  /// their stored element.
  Expected<std::string> element(CodeWriter &w, std::string_view idx, std::string_view prefix,
                                const std::map<const Value *, std::string> &preloaded = {}) const;
  /// Writes the epilogue for the output element at flat index `idx`, whose anchor result is
  /// `value` (compute type of the anchor's output), and stores every group output; with `slot`
  /// the stores go to the output vectors `o<i>.v[slot]` (declareOutputVectors). One-element
  /// operands in `hoisted` (hoistEpilogueScalars) are read from their hoisted copies.
  Status store(CodeWriter &w, std::string_view idx, std::string_view value, std::string_view prefix,
               std::string_view slot = {}, const Hoisted *hoisted = nullptr) const;
  /// writeHoistedScalars (elementwise_chain.h) for the group's one-element inputs: written
  /// before a pass that stores many elements, so that a quantization's scale and reciprocal
  /// are computed once, not per element.
  Hoisted hoistEpilogueScalars(CodeWriter &w) const;

  // Vector accesses (row kernels whose rows are contiguous and a multiple of `vec` long).
  /// The values loaded at the data's own flat index: the data itself, or the full-shape inputs
  /// of the prologue.
  const std::vector<const Value *> &fullShapeLeaves() const { return leaves_; }
  /// Elements per access: 16 bytes of the widest leaf (and output, with `outputs`), halved
  /// until it divides `rowLength`; 1 when nothing can be vectorised.
  int vectorWidth(int64_t rowLength, bool outputs) const;
  /// C condition: every leaf (and output) pointer is aligned for `vec`-element accesses.
  std::string alignedCondition(int vec, bool outputs) const;
  /// `template <class T, int N> struct <kernel>_vec` (emitted once per kernel).
  void emitVectorType(CodeWriter &w) const;
  /// Loads the vectors `t<i>` of every leaf at flat index `idx`; returns the `preloaded` map
  /// (element `t<i>.v[j]`: the caller loops over j).
  Expected<std::map<const Value *, std::string>> loadVectors(CodeWriter &w, std::string_view idx,
                                                             int vec) const;
  void declareOutputVectors(CodeWriter &w, int vec) const;
  void flushOutputVectors(CodeWriter &w, std::string_view idx, int vec) const;

private:
  const FusedGroup *group_ = nullptr;
  const Node *anchor_ = nullptr;
  std::string kernel_;
  std::vector<const Node *> prologue_, epilogue_;
  std::vector<int64_t> inShape_, outShape_;
  std::map<const Value *, std::string> names_;
  std::vector<const Value *> leaves_;
};

/// Emits `template <class A> <kernel>_warp(A)` and `<kernel>_block(A)`: all-reductions over a
/// warp and over a 1-D block (a multiple of 32 threads) of accumulators with `merge`, `shfl`
/// and `init` members. Every thread gets the same bits: the butterfly pairs the same values in
/// the same order on every lane, and each merge is commutative.
void emitCollectives(CodeWriter &w, const std::string &kernel);

/// How threads cover a row of `len` contiguous elements: one thread, a warp, or the block.
struct RowShape {
  int64_t len = 0;
  int threads = 1;   // 1, 32 or the block size
  int vec = 1;       // elements per access
  bool wide = false; // 64-bit flat indices
  /// Vectors per thread when the row is cached in registers.
  int64_t slots() const;
  /// The all-reduction for this shape: "<kernel>_warp", "<kernel>_block", or "" for one thread.
  std::string collective(const std::string &kernel) const;
};

/// The loop over this thread's vectors of a row, and the bounds check of a cached row whose
/// last slot is partly past the end; open until destroyed (the check closes first). Inside it
/// `c` is the vector's first column. Cached: `k` runs over the slots; otherwise `c` steps
/// through [begin, end) (C expressions; end empty: the row's length).
struct RowLoop {
  CodeWriter::Scope loop;
  std::optional<CodeWriter::Scope> inRow;
};
RowLoop openRowLoop(CodeWriter &w, const RowShape &s, const std::string &lane, bool cached,
                    const std::string &begin, const std::string &end);

/// Callbacks of one pass over a row. `body` receives the element (a C variable in compute
/// type), its column (a C expression) and its register slot (an lvalue, empty when not
/// cached); `pre` and `post` run before and after each vector.
struct RowHooks {
  std::function<Status(CodeWriter &)> pre, post;
  std::function<Status(CodeWriter &, const std::string &x, const std::string &col,
                       const std::string &slot)>
      body;
};

/// A pass that loads the row beginning at flat index `base` (through the prologue), over
/// columns [begin, end) (C expressions; multiples of shape.vec). With `cache` (a register array
/// of shape.slots() * vec entries, only for begin = 0 and end = len) each element is kept
/// there.
Status emitLoadPass(CodeWriter &w, const GroupParts &parts, const RowShape &shape,
                    const std::string &base, const std::string &lane, const std::string &cache,
                    const RowHooks &hooks, const std::string &begin = "0",
                    const std::string &end = "");
/// A pass over a row cached by emitLoadPass; with `cache` empty, a pass over the columns that
/// loads nothing (the element given to `body` is empty).
Status emitCachedPass(CodeWriter &w, const RowShape &shape, const std::string &lane,
                      const std::string &cache, const RowHooks &hooks);

/// A scalar accumulator struct `name` with field `v` of type `type`: `add(x)` runs `add`
/// (x in `type`), `merge(o)` runs `merge`, `init()` is `init`.
std::string scalarAccumulator(const std::string &name, const std::string &type,
                              const std::string &init, const std::string &add,
                              const std::string &merge);

/// Softmax, LogSoftmax, Hardmax and the normalisations (reduction_rows.cc).
Expected<KernelSet> emitRows(const FusedGroup &group, const EmitOptions &opts);

} // namespace dlc::codegen::reduction
