#include <cerrno>
#include <cstdlib>

#include <sys/stat.h>

#include "codegen/gemm_kernel.h"
#include "runtime/jit/model.h"
#include "tools/dlc/commands.h"

namespace dlc::tool {

void addLoadFlags(CLI::App *cmd, LoadArgs &args) {
  cmd->add_option("--format", args.format,
                  "The model's format: onnx, tf (GraphDef, binary or text) or dlc; default: "
                  "decided by the file's content");
  cmd->add_option("--input-shape", args.inputShapes,
                  "An input's shape, NAME=D0,D1,... (-1: a symbolic dim); needed for a "
                  "TensorFlow Placeholder of unknown rank")
      ->allow_extra_args(false);
  cmd->add_option("--outputs", args.outputs,
                  "TensorFlow graphs: the outputs, as tensor names NAME or NAME:K (repeatable, "
                  "or comma-separated); default: the sinks, nodes nobody consumes")
      ->delimiter(',')
      ->allow_extra_args(false);
}

Expected<LoadOptions> toLoadOptions(const LoadArgs &args) {
  LoadOptions lo;
  DLC_ASSIGN_OR_RETURN(lo.format, parseModelFormatFlag(args.format));
  for (const std::string &spec : args.inputShapes)
    DLC_RETURN_IF_ERROR(parseInputShape(spec, lo.inputShapes));
  lo.outputs = args.outputs;
  lo.keepInitializersAsInputs = args.keepInitializersAsInputs;
  return lo;
}

void addPrecisionFlags(CLI::App *cmd, PrecisionArgs &args) {
  cmd->add_option("--precision", args.precision,
                  "GPU: fp16 or bf16 runs a float32 model in mixed precision (matmul/conv in "
                  "the low type, sums/softmax/normalisation/exp/log/pow in float32); default fp32")
      ->check(CLI::IsMember({"fp32", "fp16", "bf16"}));
  cmd->add_option("--keep-fp32", args.keepFp32,
                  "With --precision: keep this node (by name) or op (text name, e.g. softmax) "
                  "in float32; repeatable")
      ->allow_extra_args(false);
}

void addKernelFlags(CLI::App *cmd, codegen::EmitOptions &kernels) {
  cmd->add_flag("--allow-tf32", kernels.allowTf32, "GPU: let fp32 GEMM/conv use TF32 tensor cores");
  cmd->add_flag("!--no-hopper-kernels", kernels.sm90a,
                "GPU, sm_90: no Hopper GEMM kernels (wgmma, compiled for sm_90a); every kernel is "
                "plain sm_90 code");
  cmd->add_flag("--hopper-split-k,!--no-hopper-split-k", kernels.hopperSplitK,
                "GPU, sm_90: let the cost model split K in the Hopper GEMM kernels (partial "
                "sums, then a reduction kernel) for shapes that leave SMs idle (on by default)");
  cmd->add_flag("--hopper-conv", kernels.hopperConv,
                "GPU, sm_90, experimental: let the cost model run every channels-last "
                "convolution on the Hopper GEMM kernels (without it, only float16/bfloat16 1x1 "
                "stride-1 ones, whose input is a plain matrix loaded with TMA)");
  cmd->add_flag("--int8-pointwise-plain", kernels.int8PointwisePlain,
                "GPU, for measuring: int8 1x1 stride-1 convolutions read their input as a plain "
                "matrix (the Hopper kernels may load it with TMA) at any channel count, instead "
                "of through im2col rows below 1024 channels or with a residual");
  cmd->add_flag("--hopper-int8,!--no-hopper-int8", kernels.hopperInt8,
                "GPU, sm_90: let the cost model run int8 products on the Hopper GEMM kernels "
                "(s8 wgmma; convolutions only with --hopper-conv too; on by default)");
  cmd->add_flag("--hopper-pingpong,!--no-hopper-pingpong", kernels.hopperPingpong,
                "GPU, sm_90: run the Hopper GEMM kernels' tiles of up to 160 columns ping-pong "
                "(the two consumer warpgroups take whole tiles in turn, one's epilogue hidden "
                "behind the other's products) where a GEMM has more tiles than the GPU has SMs "
                "(on by default)");
  cmd->add_flag("--hopper-cluster-split-k,!--no-hopper-cluster-split-k",
                kernels.hopperClusterSplitK,
                "GPU, sm_90, experimental: split K in the Hopper GEMM kernels through thread-block "
                "clusters (a tile's splits add their sums in distributed shared memory; no "
                "reduction kernel, and int8 products may split too)");
  cmd->add_flag("--hopper-tma,!--no-hopper-tma", kernels.hopperTma,
                "GPU, sm_90: the Hopper GEMM kernels load plain strided operands with TMA (one "
                "thread issues each stage from tensor maps the session encodes) instead of "
                "cp.async from 128 threads (on by default)");
  cmd->add_flag("--hopper-stream-k,!--no-hopper-stream-k", kernels.hopperStreamK,
                "GPU, sm_90, experimental: where a Hopper GEMM's tiles fill the last wave only "
                "in part, the SMs share those tiles' K steps out evenly (stream-K; the CTA that "
                "starts a tile adds the others' sums: no reduction kernel, exact int8 sums)");
  cmd->add_flag("--hopper-multicast,!--no-hopper-multicast", kernels.hopperMulticast,
                "GPU, sm_90, experimental: the Hopper GEMM kernels with TMA run in clusters of two "
                "CTAs on neighbouring row tiles, each loading half of their common B tile into "
                "both (B read from L2 once per pair), where pairing adds no wave of tiles");
  cmd->add_flag("--hopper-tile-192,!--no-hopper-tile-192", kernels.hopperTile192,
                "GPU, sm_90: let the cost model choose 128 x 192 Hopper GEMM tiles, which fill a "
                "wave where 128 x 256 ones leave SMs idle (on by default)");
  cmd->add_flag("--hopper-narrow-tiles,!--no-hopper-narrow-tiles", kernels.hopperNarrowTiles,
                "GPU, sm_90: let the cost model choose 128 x 48 and 128 x 32 Hopper GEMM tiles (B "
                "K-major), which fill the SMs where 128 x 64 ones leave some idle (on by "
                "default)");
  cmd->add_flag("--int8-split-k,!--no-int8-split-k", kernels.int8SplitK,
                "GPU: let the cost model split K of int8 products on the mma.sync kernels where "
                "the output is small (exact int32 partial sums, then a reduction kernel with the "
                "epilogue; on by default)");
  cmd->add_flag("--epilogue-tables,!--no-epilogue-tables", kernels.epilogueTables,
                "GPU: a GEMM/conv epilogue whose tail depends on one 8-bit value (an int8 "
                "residual block's dequantize, ReLU, quantize) computes it once per block into a "
                "256-entry table, exact (on by default)");
  cmd->add_flag("--fast-requantize,!--exact-requantize", kernels.fastRequantize,
                "GPU: fold each int8 product's rescale and bias into its output quantization at "
                "compile time (no division per element, as TensorRT does; a level may differ "
                "from the QDQ graph's exact requantization by one step near a tie; on by "
                "default); --exact-requantize divides correctly rounded per element instead");
  cmd->add_flag("--programmatic-launch,!--no-programmatic-launch", kernels.programmaticLaunch,
                "GPU, sm_90+: each kernel waits for the one before it itself (griddepcontrol), "
                "so the session may launch it before the previous one ends (programmatic "
                "dependent launch; on by default)");
  cmd->add_flag("--early-dependents,!--no-early-dependents", kernels.earlyDependents,
                "GPU, sm_90+, experimental, with --programmatic-launch: a kernel lets the next "
                "one's blocks start (and wait on the GPU) once all of its own have started, not "
                "once they have exited");
  cmd->add_flag("--attention-resident-kv,!--no-attention-resident-kv", kernels.attentionResidentKv,
                "GPU: fused attention loads every key/value tile of a sequence into shared "
                "memory at the start (head size 64, at most 256 keys) instead of streaming them "
                "through two stages (on by default)");
  cmd->add_flag("--stem-conv,!--no-stem-conv", kernels.stemConv,
                "GPU: an NCHW f16/bf16 convolution with at most 4 input channels (ResNet's 7x7 "
                "stem) runs on a direct tensor-core kernel that stages its input window in shared "
                "memory, instead of the implicit GEMM's element-by-element gather, where its "
                "tiles fill the GPU (on by default)");
  cmd->add_flag("--patch-gemm,!--no-patch-gemm", kernels.patchGemm,
                "GPU: a float16/bfloat16 convolution whose window tiles its input (ViT's patch "
                "embedding: strides equal to the window, no padding) runs as a reshape/transpose "
                "of the image and a GEMM instead of the NCHW implicit GEMM (on by default)");
  cmd->add_flag("--kmajor-weights,!--no-kmajor-weights", kernels.kMajorWeights,
                "GPU, sm_90a: store constant float16/bfloat16 MatMul/Gemm weights K-major ([N, K]) "
                "at compile time, so that the Hopper GEMM may use 80-, 96- and 160-column tiles "
                "(on by default)");
  cmd->add_flag("--gemm-layer-norm", kernels.gemmLayerNorm,
                "GPU, sm_90a, experimental: a LayerNormalization over the last axis after a "
                "float16/bfloat16 MatMul/Gemm (a transformer's residual projection) is computed "
                "by the GEMM kernel, which normalizes its rows in clusters of one CTA per column "
                "tile, instead of by a kernel of its own");
  cmd->add_flag("--prefetch-short-epilogues,!--no-prefetch-short-epilogues",
                kernels.prefetchShortEpilogues,
                "GPU: a 16-bit GEMM/conv at most 64 deep whose epilogue reads an operand as "
                "large as its output (a residual) is priced by the warps that hide those loads, "
                "and loads them before its main loop (on by default)");
  cmd->add_flag("--epilogue-sub-chunks,!--no-epilogue-sub-chunks", kernels.epilogueSubChunks,
                "GPU: the mma.sync GEMM/conv epilogue reads its accumulators and per-channel "
                "operands 4 elements at a time instead of a whole 16-byte output chunk's (fewer "
                "registers, more resident blocks) where the grid has at least two blocks per SM "
                "(on by default)");
  cmd->add_flag("--epilogue-prefetch", kernels.prefetchEpilogue,
                "GPU, experimental: GEMM/conv kernels (mma.sync) load their residual operand "
                "before the main loop, not after it");
  const CLI::Validator nodeTile(
      [](std::string &text) -> std::string {
        const size_t eq = text.rfind('=');
        if (eq == std::string::npos || eq == 0)
          return fmt::format("'{}' is not NODE=TILE", text);
        if (!codegen::gemm::parseTileConfig(text.substr(eq + 1)))
          return fmt::format("'{}' is not a tile (as kernels print them: 128x64x32/4x2s2k1, "
                             "128x128x64/wgs6k1t)",
                             text.substr(eq + 1));
        return "";
      },
      "NODE=TILE");
  cmd->add_option_function<std::vector<std::string>>(
         "--gemm-tile",
         [&kernels](const std::vector<std::string> &items) {
           for (const std::string &item : items) {
             const size_t eq = item.rfind('=');
             kernels.gemmTiles[item.substr(0, eq)] = item.substr(eq + 1);
           }
         },
         "GPU, for measuring: the GEMM/conv kernel of node NODE (a name `dlc opt` or `dlc run "
         "--profile` prints, e.g. conv_27/int8) runs tile TILE (the text its kernel's comment and "
         "kbench --tile use, e.g. 64x64x64/2x2s2k1) instead of the cost model's choice "
         "(repeatable)")
      ->check(nodeTile);
}

Status precisionOptions(const PrecisionArgs &args, std::string &precision, std::string &keepFp32) {
  precision = args.precision == "fp32" ? "" : args.precision;
  keepFp32.clear();
  for (const std::string &k : args.keepFp32) {
    if (k.empty() || k.find_first_of(",{}=|") != std::string::npos)
      return invalidArgument("--keep-fp32 '{}': a node or op name without , {{ }} = or |", k);
    keepFp32 += (keepFp32.empty() ? "" : "|") + k;
  }
  if (!keepFp32.empty() && precision.empty())
    return invalidArgument("--keep-fp32 needs --precision fp16 or bf16");
  return Status::ok();
}

Expected<std::unique_ptr<Graph>> loadGraph(const std::string &path, const LoadArgs &args) {
  DLC_ASSIGN_OR_RETURN(LoadOptions lo, toLoadOptions(args));
  return loadGraphFile(path, lo);
}

namespace {

/// A dim size: a whole number >= 0 and nothing else.
bool parseSize(const std::string &text, int64_t &out) {
  char *end = nullptr;
  errno = 0;
  const long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < 0 || errno == ERANGE)
    return false;
  out = v;
  return true;
}

} // namespace

Expected<std::map<std::string, int64_t>> parseDims(const std::vector<std::string> &specs) {
  std::map<std::string, int64_t> out;
  for (const std::string &s : specs) {
    size_t eq = s.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalidArgument("--dim '{}': expected NAME=SIZE", s);
    int64_t v = 0;
    if (!parseSize(s.substr(eq + 1), v))
      return invalidArgument("--dim '{}': SIZE must be a non-negative integer", s);
    out[s.substr(0, eq)] = v;
  }
  return out;
}

Expected<std::vector<rt::DimRange>> parseDimRanges(const std::vector<std::string> &specs) {
  std::vector<rt::DimRange> ranges;
  for (const std::string &spec : specs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return invalidArgument("--dim '{}': expected NAME=SIZE or NAME=MIN..MAX", spec);
    rt::DimRange r;
    r.name = spec.substr(0, eq);
    const std::string value = spec.substr(eq + 1);
    const size_t dots = value.find("..");
    bool ok = dots == std::string::npos ? parseSize(value, r.min) && parseSize(value, r.max)
                                        : parseSize(value.substr(0, dots), r.min) &&
                                              parseSize(value.substr(dots + 2), r.max);
    if (!ok)
      return invalidArgument("--dim '{}': expected NAME=SIZE or NAME=MIN..MAX with sizes >= 0",
                             spec);
    if (r.min > r.max)
      return invalidArgument("--dim '{}': the range is empty ({} > {})", spec, r.min, r.max);
    for (const rt::DimRange &o : ranges)
      if (o.name == r.name)
        return invalidArgument("--dim: '{}' is given twice", r.name);
    ranges.push_back(r);
  }
  return ranges;
}

Status checkOutputFile(const std::string &flag, const std::string &path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0)
    return Status::ok(); // a new file (or a folder that is missing: the write says so)
  if (S_ISREG(st.st_mode))
    return Status::ok();
  const char *what = S_ISLNK(st.st_mode)                          ? "a symbolic link"
                     : S_ISDIR(st.st_mode)                        ? "a directory"
                     : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                     : S_ISFIFO(st.st_mode)                       ? "a FIFO"
                                                                  : "not a regular file";
  return invalidArgument("{} '{}' is {}: dlc writes new files or replaces regular ones only", flag,
                         path, what);
}

int reportError(const Status &status) {
  std::fprintf(stderr, "dlc: error: %s\n", status.message().c_str());
  return 1;
}

} // namespace dlc::tool
