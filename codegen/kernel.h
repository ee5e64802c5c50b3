// What a kernel emitter receives and returns.
//
// Lowering (lower.cc) cuts a placed, fused, shape-specialised graph into FusedGroups (the nodes
// that share a `fuse.group` annotation, or a single node) and asks the family emitter for the
// group's anchor to write CUDA source for it. All shapes are static here: lowering specialises
// symbolic dims to the concrete sizes of a run before it lowers, so emitters bake sizes and
// strides into the source as constants.
//
// Emitter contract:
//  * Each Kernel is one `extern "C" __global__` function named `Kernel::name` (lowering makes
//    names unique; emitters build them from FusedGroup::name plus a suffix when they return
//    several kernels). Helper device functions an emitter needs are `static __device__` and
//    prefixed with the kernel name, so sources of many kernels concatenate into one program.
//  * The function's parameters are, in order, one pointer per entry of `Kernel::params`
//    (`const T* __restrict__` for values read, `T* __restrict__` for values written, with T
//    the storage type: float, __half, __nv_bfloat16, double, long long, ... see cuda_prelude.h).
//  * Sources may use everything in the prelude (cuda_prelude.h): dtype typedefs, load/store
//    conversions, the dlc_* math helpers the op table's CUDA expressions name. `Kernel::prelude`
//    lists the helpers a source uses (the CodeWriter that wrote it records them).
//  * No float atomics (results are deterministic); no dynamic allocation; 64-bit indices where
//    an element count can pass 2^31.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "codegen/cuda_prelude.h"
#include "ir/graph.h"
#include "ir/status.h"
#include "runtime/program.h"

namespace dlc::codegen {

/// Nodes compiled into one kernel (or a short sequence of kernels).
struct FusedGroup {
  int id = 0;
  /// A C identifier naming the group after its nodes, e.g. "conv_1_relu"; unique in the model.
  std::string name;
  /// Every node of the group, in topological order; all on the GPU, all shapes static.
  std::vector<const Node *> nodes;
  /// The node the group is built around (GEMM, conv, reduction, pooling, data movement), or
  /// nullptr for a group of elementwise/broadcast nodes only.
  const Node *anchor = nullptr;
  /// A LayerNormalization over the last axis after a MatMul/Gemm anchor (fuse{gemm-layer-norm}):
  /// its input is the GEMM's epilogue result, which the group also writes when it is used
  /// elsewhere. nullptr otherwise.
  const Node *norm = nullptr;
  /// Values read from outside the group (graph inputs, constants, other groups' outputs), in
  /// order of first use; no duplicates.
  std::vector<const Value *> inputs;
  /// Values the group writes that are used outside it or are graph outputs.
  std::vector<const Value *> outputs;

  bool contains(const Node *n) const;
  /// Whether `v` is one of `outputs` (the kernel stores it).
  bool writes(const Value *v) const;
};

/// One kernel parameter: a value's buffer, or a scratch buffer private to the group; with
/// `map`, a TMA descriptor of the value's buffer instead of its address (the Hopper GEMM's
/// operands; the runtime encodes it once per session and passes its 128 bytes by value; such
/// parameters come after every pointer parameter).
struct KernelParam {
  KernelParam() = default;
  KernelParam(const Value *v, int scratchIndex, bool writes)
      : value(v), scratch(scratchIndex), written(writes) {}
  const Value *value = nullptr; // set for value buffers
  int scratch = -1;             // index into KernelSet::scratchBytes otherwise
  /// Instead: the program's zeroed state (KernelSet::zeroedBytes of it), words that are zero
  /// when the kernel starts and that it leaves zero (stream-K's flags).
  bool zeroed = false;
  bool written = false; // the kernel writes it (an output or a scratch buffer)
  std::optional<rt::TensorMapLayout> map;
};

struct LaunchDims {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  /// Dynamic shared memory in bytes (lowering raises the kernel's limit past 48 KiB if needed).
  uint32_t sharedBytes = 0;
};

struct Kernel {
  std::string name;
  std::string source;
  /// The prelude helpers `source` uses (CodeWriter::requirements()); a program holding the
  /// kernel starts with cudaPrelude(prelude), or a superset.
  HelperSet prelude;
  /// Uses sm_90a-only instructions (wgmma, setmaxnreg): its module is compiled for sm_90a.
  bool sm90a = false;
  LaunchDims launch;
  std::vector<KernelParam> params;
};

/// Whether a program holding `kernels` must be compiled for sm_90a (one of them needs it).
inline bool needsSm90a(const std::vector<Kernel> &kernels) {
  for (const Kernel &k : kernels)
    if (k.sm90a)
      return true;
  return false;
}

/// What an emitter returns for a group: kernels launched in order, and the sizes of the
/// scratch buffers they share (allocated in the arena for the group's duration only).
struct KernelSet {
  std::vector<Kernel> kernels;
  std::vector<uint64_t> scratchBytes;
  /// Bytes of the program's zeroed state the kernels' `zeroed` parameters need. Every kernel
  /// of a program shares one such region (they run one at a time and leave it zeroed).
  uint64_t zeroedBytes = 0;
};

struct EmitOptions {
  /// The target's compute capability times ten (90 for sm_90).
  int smVersion = 90;
  /// Number of SMs (for grid sizing); 132 on the H200.
  int numSms = 132;
  /// Allow TF32 tensor cores for fp32 GEMM/conv (`--allow-tf32`).
  bool allowTf32 = false;
  /// GEMM/conv epilogues with transcendental math (erf, exp, tanh...) are called, not inlined,
  /// from the unrolled accumulator loop (see gemm::KernelContext::outlineEpilogue).
  bool outlineHeavyEpilogues = true;
  /// Tensor-core GEMM/conv kernels finish their outputs through shared memory, a lane storing
  /// 16 adjacent bytes (gemm::writeStagedStore); false keeps the fragment-order epilogue
  /// (kbench --fragment-epilogue, for comparison).
  bool stagedEpilogue = true;
  /// On sm_90: GEMMs may use the Hopper family, whose modules are compiled for sm_90a (a cubin
  /// and PTX for the sm_90 GPUs only). false keeps every kernel portable sm_90 code.
  bool sm90a = true;
  /// Whether the target gets the Hopper family (wgmma, TMA): sm_90 with sm90a. The GEMM cost
  /// model's candidates, sm90Fits and the pipeline's kmajor-weights ask this one question.
  bool hopperGemms() const { return smVersion == 90 && sm90a; }
  /// The cost model may split K in the Hopper family (partial sums and a reduction kernel) for
  /// shapes whose tiles leave SMs idle. Measured on an H100 (kbench tools/kbench/splitk.txt):
  /// 256x1024x4096 0.0176 ms split 8 against 0.0340 unsplit, ViT's 1576x768x3072 0.0352 split 3
  /// against 0.0393; the MLP b256 model 0.043 -> 0.035 ms, ViT-B/16 b8 1.431 -> 1.366 ms.
  /// false keeps every Hopper tile whole (`--no-hopper-split-k`); a tile given explicitly
  /// (kbench --tile) splits regardless.
  bool hopperSplitK = true;
  /// The cost model may choose the Hopper family for every channels-last convolution
  /// (implicit GEMM with the im2col rows read by the producer). Off: on an H100 (tools/kbench/
  /// conv_sm90.txt) it wins some of ResNet-50 b32's layers and loses others (3x3 over 128
  /// channels at 28x28: 0.0432 ms against 0.0340), and the model as a whole ran slower
  /// (2.102 ms against 2.020 with hopperInt8 too, session 31; 1.668 against 1.639, session
  /// 44). Without it the family still takes 16-bit 1x1 stride-1 convolutions, whose A is the
  /// input itself, a plain matrix it loads with TMA (codegen/conv.cc; ResNet-50 b32 fp16 1.799
  /// -> 1.639 ms, H100, session 44), but not int8 ones, which keep the im2col rows (on the
  /// Hopper kernels ResNet-50 b32 int8 ran 1.874 ms against 1.743).
  bool hopperConv = false;
  /// For measuring: an int8 1x1 stride-1 convolution reads its input as a plain matrix (which
  /// the Hopper kernels may load with TMA) at any channel count and with a residual, instead
  /// of through im2col rows below 1024 channels or with a residual (codegen/conv.cc).
  /// `--int8-pointwise-plain`; off by default (sessions 44-45 measured those layers slower on
  /// the Hopper kernels inside ResNet-50). Session 50 (H100, ResNet-50 b32 int8, 046536a): the
  /// model 1.337 -> 1.327 ms with it, every such layer faster (25088 x 128 x 512 0.0200 ->
  /// 0.0150) but the layer3 expansions with the residual, 0.0250 -> 0.0290 each, on the 128 x
  /// 128 ping-pong tile the cost model took; kbench had them at 0.0219 on the cooperative one,
  /// which the cost model now takes for short int8 products with a residual (gemm_kernel.cc).
  /// Not yet timed in the model that way (tmp_dev/s51c1.sh's "plain" variant).
  bool int8PointwisePlain = false;
  /// The cost model may choose the Hopper family (s8 wgmma, int32 accumulators) for int8
  /// products; convolutions reach it only with hopperConv too. On by default:
  /// BERT-base b8 int8 ran 0.953 ms with it against 1.106 on mma.sync (H100, session 32;
  /// kbench: the FFN up-projection with GELU 0.0240 ms at 128 x 128 against 0.0268), ResNet-50
  /// (convolutions) unchanged. With hopperConv, ResNet-50 b32 int8 ran 2.167 ms against 1.943
  /// (session 31): the requantizing epilogue, not the MMA, bounds those layers.
  bool hopperInt8 = true;
  /// The Hopper family runs its tiles of up to 160 columns ping-pong (TileConfig::pingpong: the
  /// consumer warpgroups take whole tiles in turn) where the GEMM has more tiles than the GPU
  /// has SMs. Up to 128 columns it lost on an H100 (session 35: ViT-B/16 b8 1.403 ms against
  /// 1.381); with the 160-column tiles of K-major weights it gained a little in one run
  /// (session 40: ViT 1.015 -> 0.997 ms, ResNet-50 b32 1.908 -> 1.891) and was even in the
  /// next (ViT 1.008 -> 1.005 with prefetchShortEpilogues also off), no model slower; kbench,
  /// ViT's up-projection with GELU at 128 x 160: 0.0245 ms against 0.0255 cooperative. On by
  /// default (`--no-hopper-pingpong`).
  bool hopperPingpong = true;
  /// The Hopper family splits K through thread-block clusters (TileConfig::clusterSplit: the
  /// splits' sums added in distributed shared memory, no reduction kernel; int8 products may
  /// split too). Off (`--hopper-cluster-split-k`): on an H100 (session 35) the MLP b256 ran
  /// 0.058 ms with it against 0.028, ViT-B/16 b8 1.515 against 1.381, BERT 1.034 against 1.007.
  bool hopperClusterSplitK = false;
  /// The Hopper family's producer moves plain strided operands with TMA (one thread issues
  /// each stage's boxes from tensor maps the runtime encodes) instead of cp.async from 128
  /// threads. On by default (`--no-hopper-tma`): on an H100 (session 35) 8192^3 ran 1.565 ms
  /// against 2.272 (cuBLAS 1.649), BERT-base b8 0.889 against 1.007, ViT-B/16 b8 1.218 against
  /// 1.381; with the 128 x 192 tile too, BERT 0.787 and ViT 1.213.
  bool hopperTma = true;
  /// The cost model may choose the Hopper family's 128 x 192 tile (m64n192 wgmma), which fills
  /// a wave where 128 x 256 leaves SMs idle: BERT b8's FFN up-projection is 128 tiles of it on
  /// 132 SMs against 96 of 128 x 256. On by default (`--no-hopper-tile-192`): BERT-base b8 ran
  /// 0.888 ms with it against 1.007 (H100, session 35).
  bool hopperTile192 = true;
  /// The cost model may choose the Hopper family's 128 x 48 and 128 x 32 tiles (m64n48 and
  /// m64n32 wgmma; B K-major only), which fill the SMs where even 128 x 64 leaves them idle:
  /// BERT b8's 768-column projections (1024 rows) are 128 tiles of 128 x 48 on 132 SMs
  /// against 96 of 128 x 64, and ResNet-50 b1 fp16 takes 128 x 32 for five convolutions.
  /// On by default (`--no-hopper-narrow-tiles`): on an H100 (session 50) ResNet-50 b1 fp16 ran
  /// 0.339 / 0.336 ms without them and 0.334 / 0.334 with them, BERT-base b8 int8 0.618 ->
  /// 0.616 and fp16 0.649 -> 0.645 (0.643 -> 0.646 in session 49); kbench, BERT's 1024 x 768 x
  /// 768 projection with bias and residual, 0.0114 ms at 128 x 64 against 0.0103 at 128 x 48.
  /// Their cost-model values are still fitted guesses (gemm_kernel.cc).
  bool hopperNarrowTiles = true;
  /// The cost model may split K of an int8 product on the mma.sync kernels: the splits' int32
  /// sums go through the workspace exactly and the reduction kernel runs the requantizing
  /// epilogue (ResNet-50's classifier, 1 x 1000 x 2048 at batch 1, is 16 blocks unsplit), where
  /// the output is under half a wave of 128 x 64 tiles (chooseTile). On by default
  /// (`--no-int8-split-k`): ResNet-50 b1 int8 0.315 -> 0.287 ms on an H100 (session 50).
  bool int8SplitK = true;
  /// The cost model may run a Hopper GEMM stream-K (TileConfig::streamK) where its tiles fill
  /// the last wave only in part: the CTAs share those tiles' K steps out evenly, and the CTA
  /// that starts a tile adds the others' sums (a workspace in the arena, flags in the
  /// program's zeroed state) before the epilogue: no reduction kernel, int32 sums exact.
  /// `--hopper-stream-k`.
  bool hopperStreamK = false;
  /// The Hopper family's TMA kernels run in clusters of two CTAs on pairs of row tiles that
  /// share their B tile, each CTA loading half of it into both (TileConfig::multicast), where
  /// pairing adds no wave of tiles. Off (`--hopper-multicast`): on an H100 (session 38, kbench)
  /// 5-10 % slower on the transformer GEMMs (the pairs' lock step) and no faster at 8192^3;
  /// with each CTA loading all of B in the same clusters the times were the same, so L2's
  /// bandwidth does not bound these products.
  bool hopperMulticast = false;
  /// The mma.sync kernels' staged epilogue loads its full-size operands (a residual) into
  /// registers before the main loop, so that their latency hides behind the operand loads
  /// instead of following the last MMA (gemm::KernelContext::prefetchPasses). Off: on an H100
  /// the int8 1x1 convolutions lost a block per SM to the registers it holds (ResNet-50 b32
  /// int8 2.091 ms against 1.933); an fp16 128x64 tile gained (0.0659 ms against 0.0792,
  /// tools/kbench/prefetch.txt), which the cost model does not choose today.
  bool prefetchEpilogue = false;
  /// A 16-bit mma.sync GEMM/conv whose main loop is at most 64 deep (K <= 64) and whose
  /// epilogue reads an operand as large as the output (ResNet-50's layer1 1x1 convolutions
  /// with the residual) is bound by its epilogue's loads: the cost model prices them by the
  /// warps resident to hide them, and the kernel loads them before the main loop (as
  /// prefetchEpilogue does everywhere). kbench on an H100 (session 37, tools/kbench/
  /// conv1x1.txt): ResNet-50 b32's 64 -> 256 1x1 conv with bias, residual and ReLU took 0.0919
  /// ms at 128 x 256 (the choice before) and 0.0663 ms at 128 x 64 with the prefetch; the
  /// deeper layers' (K 128, 256) kept their tiles, which were faster there. Session 38 took a
  /// 3-stage 128 x 64 tile, which holds 150 registers (one block per SM): 0.0965 ms, and the
  /// model did not gain (ResNet-50 b32 1.884 -> 1.901 ms); such a product now keeps no stage
  /// past its K tiles (2 stages, 128 registers, 2 blocks: 0.0678 ms, H100, session 39). On by
  /// default (`--no-prefetch-short-epilogues`): ResNet-50 b32 1.908 -> 1.811 ms, the other
  /// models unchanged (H100, session 40; in a second run 1.889 -> 1.838 with ping-pong too).
  bool prefetchShortEpilogues = true;
  /// The mma.sync kernels' staged epilogue reads each lane's accumulators and its operands
  /// along N (per-channel scales, a bias) 16 bytes of accumulators at a time, finishing 4
  /// elements before reading the next 4, instead of all 16 (8-bit outputs) or 8 (16-bit) up
  /// front: the same loads and arithmetic, in an order that holds fewer registers (ResNet-50
  /// b32 int8's layer1 expansions, 128 x 64 tiles of 256 threads: 119 -> 80, `ptxas -v`), where
  /// the grid has at least two blocks per SM (gemm_kernel.cc). On an H100 (session 47, `dlc run
  /// --benchmark`) ResNet-50 b32 int8 ran 1.407 ms with every kernel sub-chunked against 1.447,
  /// fp16 1.677 against 1.678; batch 1 int8 lost (0.329 against 0.321), hence the rule.
  /// `--no-epilogue-sub-chunks` turns it off.
  bool epilogueSubChunks = true;
  /// A GEMM/conv epilogue whose tail is a function of one 8-bit integer value (an int8 residual
  /// block's DQ -> Relu -> Q) computes that tail once per block for all 256 inputs into shared
  /// memory, and each element loads its result (codegen/byte_table.h): exact, since the table
  /// holds what the element loop would compute. Where the table's shared memory would cost a
  /// resident block, the kernel keeps the element loop. `--no-epilogue-tables` turns it off.
  bool epilogueTables = true;
  /// realize-int8 folds each int8 product's rescale and bias into its output quantization
  /// (`realize-int8{fast-requantize=true}`): the epilogue multiplies, adds and rounds instead of
  /// dividing correctly rounded per element, as TensorRT's int8 kernels do, and a level may
  /// differ from the exact requantization of the QDQ graph by one step near a tie (what the
  /// issue's int8 contract allows; `dlc run --verify` still compares the folded graph exactly).
  /// On by default since session 45: on an H100 ResNet-50 b32 int8 1.664 -> 1.513 ms, b1 0.352
  /// -> 0.325, BERT-base b8 int8 0.720 -> 0.714 (`dlc run --benchmark`); `--exact-requantize`
  /// turns it off. (A graph option carried with the kernel options, which reach every compile.)
  bool fastRequantize = true;
  /// The layout pass turns an NCHW conv whose window tiles its input (ViT's patch embedding)
  /// into a reshape/transpose of the image and a GEMM (`layout{patch-gemm=true}`,
  /// `--no-patch-gemm`). On by default: ViT-B/16 b8 ran 1.086 ms with it against 1.121 (H100,
  /// session 37, harness; session 36: 1.162 against 1.187). (A graph option, like
  /// fastRequantize.)
  bool patchGemm = true;
  /// For an sm_90a target the GPU pipeline stores constant 16-bit MatMul/Gemm weights K-major
  /// ([N, K], passes/kmajor_weights.cc), which lets the cost model choose the Hopper family's
  /// 80-, 96- and 160-column tiles (an N-major B tile is whole atoms of 64 columns). On by
  /// default (`--no-kmajor-weights`): on an H100 (session 39, tools/kbench/narrow_tiles.txt)
  /// ViT's FFN up-projection (1576x3072x768, GELU) took 0.0276 ms at 128 x 160 against 0.0314
  /// N-major at 128 x 192, its down-projection 0.0225 at 128 x 96 against 0.0255 at 128 x 128,
  /// its attention output projection 0.0116 against 0.0129. (A graph option, like patchGemm.)
  bool kMajorWeights = true;
  /// For an sm_90a target the GPU pipeline's fuse puts a LayerNormalization over the last axis
  /// into the GEMM group that produces its input (`fuse{gemm-layer-norm=true}`,
  /// `--gemm-layer-norm`): the Hopper GEMM normalizes its rows after its epilogue, in clusters
  /// of one CTA per column tile (codegen/gemm_norm.cc), instead of a layer-norm kernel after
  /// it. Correct on an H100 (session 43: tests/unit/gpu/gemm_norm_gpu_test.cc, compute-
  /// sanitizer memcheck clean) but slower there, so off: ViT-B/16 b8 0.930 -> 1.011 ms, BERT-base
  /// b8 0.644 -> 0.695 (harness, no torch.compile); ViT's fused down-projection took 0.029 ms
  /// (--profile) where the plain one took 0.023 and the layer norm about 0.0056: the cluster's
  /// barrier and the tail's round trip through L2 cost more than the kernel they replace.
  /// (A graph option, like patchGemm.)
  bool gemmLayerNorm = false;
  /// An NCHW f16/bf16 conv with at most 4 input channels (ResNet's 7x7 stem on the image) runs
  /// on the stem kernel (codegen/conv_stem.cc: its input window staged in shared memory, the
  /// A fragments read from it directly) instead of the implicit GEMM's element-by-element
  /// im2col gather, where its tiles of 256 pixels fill the GPU (numSms of them at least). On by
  /// default (`--no-stem-conv`): ResNet-50's stem at batch 32 took 0.0708 ms against 0.1584
  /// (H100, session 35, tools/kbench/stem.txt), the whole model 1.936 ms against 2.036; at
  /// batch 1 (49 tiles) the implicit GEMM is faster (0.0148 ms against 0.0170).
  bool stemConv = true;
  /// On sm_90 and newer, every kernel waits for the grids before it itself (rt::LaunchStep::
  /// waitsForGrid), so that the session may launch it with programmatic stream serialization:
  /// the next launch is prepared while the previous kernel finishes. On an H100 (session 36,
  /// harness) MobileNetV2 b1 ran 0.257 ms with it against 0.274, ResNet-50 b1 0.363 against
  /// 0.378 (fp32 1.048 against 1.068), the MLP, ResNet-50 b32, BERT and ViT within 1 %. On by
  /// default (`--no-programmatic-launch`) since session 37: the crash that kept it off
  /// (CApiGpu.HostDeviceAndStreamRunsMatchTheCpu) came without it too, from the session
  /// recording an event on a caller's stream the test had destroyed (GpuSession::
  /// leaveCallerStream).
  bool programmaticLaunch = true;
  /// With programmaticLaunch: each kernel also lets the next one's blocks start as soon as all
  /// of its own have started (`griddepcontrol.launch_dependents`), to wait on the GPU instead
  /// of being launched. Off (`--early-dependents`): on the same H100 it took MobileNetV2 b1 to
  /// 0.221 ms and ViT-B/16 b8 to 1.206 (1.231 without), but ResNet-50 b1 fp32 to 1.184 (1.048),
  /// BERT-base b8 to 0.806 (0.783) and ResNet-50 b32 to 1.937 (1.907).
  bool earlyDependents = false;
  /// Fused attention keeps every key/value tile of a sequence in shared memory when they fit
  /// (head size 64 and at most 256 keys: ViT's 197, BERT's 128), all loaded at the start,
  /// instead of streaming them through two stages (dlc_attn::attention's KV_TILES). On by
  /// default (`--no-attention-resident-kv`): on an H100 (session 43, harness, `--profile`)
  /// ViT-B/16 b8's 12 attentions took 0.156 ms against 0.161 streamed (0.171 before the last
  /// key tile's partial steps), the model 0.917 ms against 0.919 without torch.compile in the
  /// process and 0.954 against 0.959 with it; BERT-base b8 0.679 against 0.675 (its 128 keys
  /// are the two stages either way).
  bool attentionResidentKv = true;
  /// Tiles chosen by hand (`--gemm-tile NODE=TILE`): a GEMM or convolution kernel whose group
  /// holds a node of that name runs that tile (TileConfig's text form, gemm_kernel.h, as the
  /// kernels' comments and `kbench --tile` print it) instead of the cost model's choice. For
  /// measuring a choice inside a model, where kbench's isolated figures do not always hold.
  std::map<std::string, std::string> gemmTiles;
};

/// Starts kernel `k`'s body with the prelude helper `dlc_grid_wait();` (`griddepcontrol.wait`:
/// nothing before it touches memory), or with `early` `dlc_grid_dependency();` (the wait, then
/// `griddepcontrol.launch_dependents`: the next kernel's blocks may start once every block of
/// this one has), and adds the helper to its prelude: rt::LaunchStep::waitsForGrid. sm_90 and
/// newer. An internal error when the source has no head for k.name.
Status waitForGrid(Kernel &k, bool early);

/// Whether the GPU backend can run `node` (static shapes, supported dtypes and attributes).
/// On false, `why` says what is missing ("Conv: 3-D convolution has no GPU kernel yet").
bool gpuSupports(const Node &node, std::string *why);

/// Writes the kernels for one group: dispatches on the anchor's family. Errors name the group's
/// nodes.
Expected<KernelSet> emitGroup(const FusedGroup &group, const EmitOptions &opts);

} // namespace dlc::codegen
