// Shared by the families whose groups have an anchor with an elementwise epilogue (data
// movement, pooling): the kernel's parameter list, and the epilogue written for one element of
// an anchor output followed by the stores of the group outputs.
//
// The fuse pass guarantees the shape of such groups (see kernel.h and
// ir/annotations/fusion_roles.h): every other node is elementwise, consumes (transitively) an
// anchor output, has that output's shape, and reads everything else from group inputs, which
// broadcast against it. The helpers check this and fail with the offending node's name instead of
// writing a wrong kernel.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/code_writer.h"
#include "codegen/elementwise_chain.h"
#include "codegen/kernel.h"

namespace dlc::codegen {

/// The buffers a kernel reads and writes, in parameter order: read values are named in0, in1,
/// ... and written ones out0, out1, ... in the order they are first asked for.
class ParamList {
public:
  /// The name of a value the kernel reads (added on first use).
  const std::string &read(const Value *v);
  /// The name of a value the kernel writes (added on first use).
  const std::string &write(const Value *v);
  /// The C parameter declarations, comma-separated.
  std::string decls() const;
  std::vector<KernelParam> params() const { return params_; }
  /// Whether every value in the list has fewer than 2^31 elements.
  bool allSmall() const;

private:
  std::vector<KernelParam> params_;
  std::vector<std::string> decls_;
  std::map<std::pair<const Value *, bool>, std::string> names_;
  int reads_ = 0, writes_ = 0;
};

/// An anchor output's element as the kernel holds it: a C expression in the value's storage
/// type (a copied element, stored without conversion) or in its compute type.
struct AnchorElement {
  std::string expr;
  bool storage = false;
};

/// For one element of anchor output `root`, whose flat index into root's shape is the C
/// expression `idx`: writes the group's epilogue nodes that derive from root and stores each
/// group output among root and those nodes at `idx`. Variables are named `<prefix>N`. Adds the
/// outputs it stored to `stored`. One-element operands in `hoisted` (writeHoistedEpilogueScalars)
/// are read from their hoisted copies.
Status emitEpilogue(CodeWriter &w, const FusedGroup &group, const Value *root,
                    const AnchorElement &value, std::string_view idx, ParamList &params,
                    std::string_view prefix, std::vector<const Value *> &stored,
                    const Hoisted *hoisted = nullptr);

/// writeHoistedScalars (elementwise_chain.h) for the group inputs among the epilogue's
/// operands, named through `params`: written once before the code that runs the epilogue per
/// element, and handed to emitEpilogue (`assign`: loaded later, see writeHoistedScalars).
Hoisted writeHoistedEpilogueScalars(CodeWriter &w, const FusedGroup &group, ParamList &params,
                                    CodeWriter *assign = nullptr);

/// Checks that every group output was stored by some emitEpilogue call.
Status checkAllStored(const FusedGroup &group, const std::vector<const Value *> &stored);

/// "int" when every buffer of the kernel has fewer than 2^31 elements, else "long long".
std::string indexType(const ParamList &params);

/// The kernel's head, `extern "C" __global__ void __launch_bounds__(T) name(params)` (for
/// CodeWriter::block).
std::string kernelSignature(const std::string &name, const ParamList &params, int threads);

/// A kernel set of one kernel.
KernelSet single(Kernel k);

/// The end of a kernel with one thread per output element `i` (a grid-stride `loop` over
/// `count`, 256 threads a block): the group's epilogue stores compute-type `y` (and each of
/// `moreRoots`, another anchor output of the same shape with its element), then the loop closes
/// and the kernel is named after the group.
Expected<KernelSet>
finishPerOutput(CodeWriter &body, CodeWriter::Scope &loop, const FusedGroup &group, const Value *y,
                ParamList &params, int64_t count, const EmitOptions &opts,
                const std::vector<std::pair<const Value *, AnchorElement>> &moreRoots = {});

/// Completes `k` from a body written before its parameters were known: its source is `body`
/// inside kernelSignature(k.name, params, threads), and its prelude and parameters follow.
void finishKernel(Kernel &k, const ParamList &params, int threads, const CodeWriter &body);

} // namespace dlc::codegen
