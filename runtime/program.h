// Program: what codegen produces and the GPU runtime executes.
//
// A Program is self-contained: compiled modules (cubin and PTX), the launch list, the buffer
// plan (one device arena, one constant pool), and the model's inputs and outputs with static
// shapes. It never refers to the graph it came from, so it can be serialized (package.fbs,
// FlatBuffers) into a `model.so` and run without the compiler.
//
// Buffers: every tensor the program touches lives at a fixed offset in either the arena
// (intermediates, and the staging slots of inputs and outputs) or the constant pool (weights,
// uploaded once per model). Fixed addresses let a session capture the launch list once as a
// CUDA graph and replay it.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "ir/dtype.h"

namespace dlc::rt {

enum class Space : uint8_t { kArena, kConstants };

/// A byte range in the arena or the constant pool. Offsets are 256-byte aligned.
struct BufferRef {
  Space space = Space::kArena;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

/// A model input or output: where its elements live while the program runs.
struct ProgramTensor {
  std::string name;
  DType dtype = DType::kUnknown;
  std::vector<int64_t> shape;
  BufferRef buffer;
  /// For an output: the first step that refers to it (its producer). From there to the end its
  /// buffer holds nothing else, so a session may point those steps at the caller's memory
  /// instead (GpuSession::runDevice). Earlier steps may use the buffer for other values. -1:
  /// unknown (packages written before dlc recorded it); inputs hold their buffer all run.
  int32_t firstStep = -1;
};

/// One compiled NVRTC program: a cubin for `arch` (may be empty when only PTX was kept) and
/// the PTX it came from (loaded through the driver when no cubin matches the GPU).
struct Module {
  std::string arch; // "sm_90"
  std::vector<uint8_t> cubin;
  std::string ptx;
  std::vector<std::string> kernels; // names of the __global__ functions in it
};

/// How a TMA descriptor reads a buffer: a 2-D tiled tensor map (128-byte swizzle, zeros where
/// a box leaves the tensor). Codegen describes its kernels' maps with it (codegen::KernelParam),
/// runtime/tensor_map.h encodes it.
struct TensorMapLayout {
  DType dtype = DType::kF16; // f16, bf16, or i8 (moved as bytes)
  uint64_t dims[2] = {1, 1}; // elements, innermost first
  uint64_t pitchBytes = 0;   // bytes between consecutive indices of dims[1]
  uint32_t box[2] = {1, 1};  // elements per box, innermost first
};

/// A TMA descriptor argument: the layout over `buffer`, which the session encodes once (the
/// buffer's address is fixed) and passes by value, 128 bytes.
struct TensorMapArg : TensorMapLayout {
  BufferRef buffer;
};

/// Launch kernel `kernel` of module `module` with one pointer argument per entry of `args`,
/// then one tensor map per entry of `tensorMaps`.
struct LaunchStep {
  uint32_t module = 0;
  std::string kernel;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t sharedBytes = 0;
  std::vector<BufferRef> args;
  std::vector<TensorMapArg> tensorMaps;
  /// The source nodes, for error messages ("conv_1 + relu_2").
  std::string origin;
  /// The kernel begins with `griddepcontrol.wait` (waits until the grids before it have
  /// completed and their writes are visible; codegen::waitForGrid): the session launches it
  /// with programmatic stream serialization, so its launch overlaps the previous kernel
  /// instead of following it. Only in programs for sm_90 and newer.
  bool waitsForGrid = false;
};

/// Device-to-device copy (used where a value must move to another buffer, e.g. an output that
/// aliases an input).
struct CopyStep {
  BufferRef src, dst;
  std::string origin;
};

/// A node run on the host by the reference backend (soft placement fallback): inputs are
/// downloaded, the one-node graph `graphText` (text IR) is evaluated, outputs are uploaded.
/// A program with host steps is not captured as a CUDA graph.
///
/// `graphText` holds exactly one node; it may also hold constants (attribute-like operands
/// such as an axis). The graph's inputs, in order, are read from `inputs`, and its outputs,
/// in order, are written to `outputs`; every one has a static type whose size is its buffer's
/// `bytes`. Example: `graph @h(%x: f32[4,8]) -> (y: f32[4,8]) { %a = constant i64[]
/// dense<[1]>  %y = cumsum(%x, %a) : f32[4,8]  return %y }`.
struct HostStep {
  std::string graphText;
  std::vector<BufferRef> inputs, outputs;
  std::string origin;
};

using Step = std::variant<LaunchStep, CopyStep, HostStep>;

struct Program {
  std::vector<Module> modules;
  std::vector<Step> steps;
  uint64_t arenaBytes = 0;
  /// The arena's last zeroedBytes: state that a session zeroes when it allocates the arena and
  /// that every kernel leaves zeroed (stream-K GEMMs' flags); never poisoned.
  uint64_t zeroedBytes = 0;
  /// The constant pool's initial contents (uploaded once per model).
  std::vector<uint8_t> constants;
  std::vector<ProgramTensor> inputs, outputs;
  /// For `dlc compile --emit cuda=DIR` and diagnostics: each kernel's source, by kernel name.
  std::vector<std::pair<std::string, std::string>> sources;
  /// How the modules were compiled (diagnostics, not serialized).
  double compileSeconds = 0;
  int cacheHits = 0;
  /// Read from a package: the bytes of `constants` stored there once, as the graph's weights
  /// (format 3 segments; `dlc inspect` shows them). Diagnostics, not serialized.
  uint64_t constantBytesFromGraph = 0;
};

} // namespace dlc::rt
