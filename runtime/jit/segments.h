// Shape points: a model whose shapes depend on values it computes runs on the GPU in segments.
//
// After the model's input dims and shape inputs are bound, shape inference and folding may
// still leave some sizes unknown because they depend on values the model computes from its
// data: the number of non-zero elements (expand-ops turns NonZero, Compress, Unique and
// NonMaxSuppression into fixed-size kernels, a count, and a Slice whose end is the count), or
// a Reshape whose target shape is computed. The GPU program then stops at a *shape point*:
//
//   1. the first segment computes everything that does not depend on those sizes and returns,
//      beside the model outputs it has, the small values the sizes come from (the *point
//      values*, read back to the host) and the values the rest reads (*carried*: they stay in
//      the segment's device arena);
//   2. the host binds the point values as constants into the rest of the graph (as shape
//      inputs are bound, compile.h) and compiles it for them: once per set of values, the
//      program then kept like any other;
//   3. the rest runs on the carried values, and may itself stop at a further shape point.
//
// Each segment is an ordinary rt::Program, captured and replayed as a CUDA graph. What a shape
// point costs is one device-to-host copy of a few bytes and a wait for the stream, plus a
// compile the first time a set of values is seen.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/jit/compile.h"
#include "runtime/reference_executor.h"

namespace dlc::jit {

/// Where a segment stops, and the rest of the model after it.
struct ShapePoint {
  /// Program outputs of the segment that the rest reads: (segment output, rest input).
  /// `values` are read back to the host and bound as constants; `carried` stay on the device.
  std::vector<std::pair<std::string, std::string>> values, carried;
  /// The rest of the model: its inputs are the rest-input names above, its outputs the model
  /// outputs the segment does not compute (by their public names).
  std::shared_ptr<const Graph> rest;
  /// The nodes whose output shapes wait for the values ("slice_7, reshape_2"), for messages
  /// and profiles; and those outputs, which must be static once the values are bound.
  std::string waiting;
  std::vector<std::string> waitingOutputs;
};

struct Segment {
  rt::Program program;
  /// Program outputs that are model outputs (public names); the others feed the rest.
  std::vector<std::string> modelOutputs;
  /// Set when the segment stops at a shape point.
  std::optional<ShapePoint> point;
};

/// Compiles `model` (symbolic dims bound by `dims`, opts.shapeValues bound) up to its first
/// shape point; a model without one is one segment whose program is compileForGpu's.
/// `mustBeStatic` names values that a previous shape point promised to make static: an error
/// names the node when one is not (no progress).
Expected<Segment> compileSegment(const Graph &model, const std::map<std::string, int64_t> &dims,
                                 const JitOptions &opts,
                                 const std::vector<std::string> &mustBeStatic = {});

/// The options that compile `point.rest` once its values are known: `opts` with the point
/// values (by the rest's input names) as the shape values.
JitOptions restOptions(const JitOptions &opts, const ShapePoint &point,
                       const std::map<std::string, Tensor> &values);

/// A key for a set of point or shape-input values: each name and its bytes.
std::string valuesKey(const std::map<std::string, Tensor> &values);

/// Runs a model segment by segment, each program through `run` (host tensors in and out: the
/// host emulator, tests), compiling each rest when its point values are known. Returns the
/// model's outputs in its order. A compile error also goes to `compileError` when given (to
/// tell "the GPU backend does not claim this" from a failed run).
using ProgramRunner = std::function<Expected<std::vector<NamedTensor>>(
    const rt::Program &, const std::map<std::string, Tensor> &)>;
Expected<std::vector<NamedTensor>>
runSegments(const Graph &model, const std::map<std::string, int64_t> &dims, const JitOptions &opts,
            const std::map<std::string, Tensor> &inputs, const ProgramRunner &run,
            Status *compileError = nullptr);

} // namespace dlc::jit
