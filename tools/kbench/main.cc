// kbench: one GEMM or conv kernel group, emitted, compiled with NVRTC, run, checked, timed.
//
//   kbench matmul 4096 4096 4096 f16                  # C[M,N] = A[M,K] B[K,N]
//   kbench mm 8x128x64 64x96 bf16 --relu              # numpy matmul of two shapes
//   kbench matmul 1576 3072 768 f16 --addbias --gelu  # --addbias --residual --relu --gelu
//   kbench gemm 512 256 128 f32 --ta --tb --alpha 0.5 --beta 2 --c row
//   kbench conv 1 64 56 56 64 3 3 1 1 f16 [--group G] [--dil D] [--bias] [--relu] [--residual]
//                                            [--nhwc: channels-last, as layout makes it]
//   kbench matmul 1024 3072 768 i8 --relu              # int8: realize-int8's form (below)
//   kbench conv 32 64 56 56 256 1 1 1 0 i8 --residual --quant  # int8 residual in, int8 out
//   kbench --file cases.txt                           # one case per line, compiled in parallel
//   (--flush, on a case or for all: L2 flushed before each timed launch, as a model's kernels
//   mostly find their operands; by default back-to-back launches find them in L2)
//   (--no-wgmma: no Hopper kernels on sm_90, the mma.sync family instead; --define A=1,B=2:
//   macros for NVRTC, e.g. the DLC_SM90_* knobs of codegen/sm90_gemm.cuh;
//   --no-hopper-int8: int8 products keep to the mma.sync family, as `dlc --no-hopper-int8`
//   makes them; --no-pingpong: the Hopper family's tiles of up to 160 columns keep the
//   cooperative schedule where the GEMM has more tiles than SMs, as `dlc --no-hopper-pingpong`
//   makes them (--pingpong, dlc's default, is accepted); --no-prefetch-short: a short product
//   with a residual keeps its loads after the main loop, as `dlc --no-prefetch-short-epilogues`
//   (--prefetch-short, the default, is accepted); --cluster-split: the
//   Hopper family splits K in clusters, as `dlc --hopper-cluster-split-k`; --stream-k: it may
//   run stream-K, as `dlc --hopper-stream-k`; --multicast: its TMA kernels may pair row tiles
//   that share B, as `dlc --hopper-multicast`; --no-tma: its
//   producer loads with cp.async, as `dlc --no-hopper-tma`; --no-tile-192: no 128 x 192 tiles,
//   as `dlc --no-hopper-tile-192`; --no-narrow-tiles: no 128 x 48 or 128 x 32 tiles, as `dlc
//   --no-hopper-narrow-tiles` (--narrow-tiles, the default, is accepted); --no-int8-split-k:
//   int8 products on mma.sync keep K whole, as `dlc --no-int8-split-k` (--int8-split-k, the
//   default, is accepted); --int8-pointwise-plain: as `dlc --int8-pointwise-plain`; --no-stem:
//   a conv with at most 4 input channels keeps the
//   implicit GEMM, as `dlc --no-stem-conv`; --inline-epilogue:
//   keep a transcendental epilogue inlined; --fragment-epilogue: store from the accumulator
//   fragments instead of the staged epilogue; both for comparison)
//
// Per case: the group is built from a one-node graph (plus the epilogue asked for), emitted
// with codegen::emitGroup (or with --tile CFG, e.g. 128x256x32/2x4s4k1, through the family's
// override), compiled for the GPU present, run once on random inputs with the output poisoned,
// compared with the reference evaluation (all elements for small problems, 512 sampled ones
// computed in double otherwise), then timed: median of --runs (50) launches with CUDA events.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <thread>

#include "codegen/cuda_prelude.h"
#include "codegen/emitters.h"
#include "codegen/gemm_kernel.h"
#include "codegen/nvrtc.h"
#include "ir/eval/eval.h"
#include "ir/op.h"
#include "ir/parser.h"
#include "passes/pass_manager.h"
#include "tools/kbench/cases.h"
#include "tools/kbench/tensor_map.h"

namespace dlc::kbench {
namespace {

using codegen::gemm::TileConfig;

#define CU(call)                                                                                   \
  do {                                                                                             \
    cudaError_t e_ = (call);                                                                       \
    if (e_ != cudaSuccess) {                                                                       \
      c.error = std::string(#call) + ": " + cudaGetErrorString(e_);                                \
      return false;                                                                                \
    }                                                                                              \
  } while (0)

Tensor randomTensor(const Value *v, std::mt19937 &rng) {
  Tensor t = Tensor::zeros(v->dtype(), v->shape().sizes());
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numElements(); ++i) {
    float x = u(rng);
    if (v->dtype() == DType::kI8)
      t.mutableData<int8_t>()[i] = static_cast<int8_t>(std::lround(x * 127.0f));
    else if (v->dtype() == DType::kF32)
      t.mutableData<float>()[i] = x;
    else if (v->dtype() == DType::kF16)
      t.mutableData<uint16_t>()[i] = floatToHalf(x);
    else
      t.mutableData<uint16_t>()[i] = floatToBf16(x);
  }
  return t;
}

double elementOf(const Tensor &t, int64_t i) { return t.elementAsDouble(i); }

/// Reference value of output element `i` in double (anchor, then the kbench epilogue).
double sampledReference(const Case &c, const std::vector<Tensor> &in, int64_t i) {
  const Node &n = *c.group.anchor;
  const auto y = n.output(0)->shape().sizes();
  double acc = 0;
  if (c.kind == "matmul" || c.kind == "gemm") {
    const int64_t N = y[1], row = i / N, col = i % N;
    const bool ta = c.has("ta"), tb = c.has("tb");
    const auto sa = in[0].shape();
    const int64_t K = ta ? sa[0] : sa[1], M = y[0];
    for (int64_t k = 0; k < K; ++k)
      acc += elementOf(in[0], ta ? k * M + row : row * K + k) *
             elementOf(in[1], tb ? col * K + k : k * N + col);
    if (c.kind == "gemm") {
      acc *= std::stod(c.flag("alpha", "1.0"));
      const std::string cs = c.flag("c", "none");
      if (cs != "none") {
        const int64_t ci = cs == "scalar" ? 0 : cs == "row" ? col : cs == "col" ? row : i;
        acc += std::stod(c.flag("beta", "1.0")) * elementOf(in[2], ci);
      }
    }
  } else {
    const auto xs = in[0].shape(), ws = in[1].shape();
    const int64_t C = xs[1], H = xs[2], W = xs[3], CO = y[1], OH = y[2], OW = y[3];
    const int64_t KH = ws[2], KW = ws[3], CG = ws[1];
    const int64_t g = std::stoll(c.flag("group", "1")), d = std::stoll(c.flag("dil", "1"));
    const int64_t s = c.args[7], p = c.args[8];
    const int64_t ow = i % OW, oh = (i / OW) % OH, co = (i / (OW * OH)) % CO,
                  img = i / (OW * OH * CO);
    const int64_t grp = co / (CO / g);
    for (int64_t ci = 0; ci < CG; ++ci)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t ih = oh * s - p + kh * d, iw = ow * s - p + kw * d;
          if (ih < 0 || ih >= H || iw < 0 || iw >= W)
            continue;
          acc += elementOf(in[0], ((img * C + grp * CG + ci) * H + ih) * W + iw) *
                 elementOf(in[1], ((co * CG + ci) * KH + kh) * KW + kw);
        }
    if (c.has("bias"))
      acc += elementOf(in[2], co);
  }
  size_t next = static_cast<size_t>(n.numInputs());
  if (c.has("addbias") && c.kind != "conv") {
    const int64_t N = y.back();
    acc += elementOf(in[next++], i % N);
  }
  if (c.has("residual"))
    acc += elementOf(in[next++], i);
  if (c.has("relu"))
    acc = std::max(acc, 0.0);
  if (c.has("gelu"))
    acc = 0.5 * acc * (1.0 + std::erf(acc / std::sqrt(2.0)));
  return acc;
}

bool run(Case &c, int runs, double *medianMs, std::string *check) {
  const auto &inputs = c.group.inputs;
  std::mt19937 rng(1234);
  std::vector<Tensor> host;
  for (const Value *v : inputs) {
    host.push_back(randomTensor(v, rng));
    if (v->name() == "rs" || v->name() == "qs") // --quant's scales: positive, a few levels
      host.back().mutableData<float>()[0] = v->name() == "rs" ? 100.0f : 500.0f;
    if (v->name() == "qz")
      host.back().mutableData<int8_t>()[0] = 0;
  }
  cudaLibrary_t lib;
  CU(cudaLibraryLoadData(&lib, c.mod.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  std::vector<cudaKernel_t> kernels;
  for (const auto &k : c.set.kernels) {
    cudaKernel_t h;
    CU(cudaLibraryGetKernel(&h, lib, k.name.c_str()));
    if (k.launch.sharedBytes > 48 * 1024)
      CU(cudaFuncSetAttribute(reinterpret_cast<const void *>(h),
                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(k.launch.sharedBytes)));
    kernels.push_back(h);
    cudaFuncAttributes attr{};
    int blocks = 0;
    CU(cudaFuncGetAttributes(&attr, reinterpret_cast<const void *>(h)));
    CU(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &blocks, reinterpret_cast<const void *>(h),
        static_cast<int>(k.launch.block[0] * k.launch.block[1] * k.launch.block[2]),
        k.launch.sharedBytes));
    c.info += (c.info.empty() ? "" : " ") + std::to_string(attr.numRegs) + "r/" +
              std::to_string(attr.localSizeBytes) + "l/" + std::to_string(blocks) + "b";
  }
  std::map<const Value *, void *> dev;
  for (size_t i = 0; i < inputs.size(); ++i) {
    void *p;
    CU(cudaMalloc(&p, std::max<size_t>(16, host[i].byteSize())));
    CU(cudaMemcpy(p, host[i].raw(), host[i].byteSize(), cudaMemcpyHostToDevice));
    dev[inputs[i]] = p;
  }
  const Value *out = c.group.outputs[0];
  Tensor result = Tensor::zeros(out->dtype(), out->shape().sizes());
  void *outp;
  CU(cudaMalloc(&outp, result.byteSize()));
  CU(cudaMemset(outp, 0xff, result.byteSize())); // NaN: unwritten elements show
  dev[out] = outp;
  std::vector<void *> scratch;
  for (uint64_t bytes : c.set.scratchBytes) {
    void *p;
    CU(cudaMalloc(&p, bytes));
    CU(cudaMemset(p, 0xff, bytes));
    scratch.push_back(p);
  }
  // The program's zeroed state (stream-K's flags): zero before the first launch, and checked
  // to be zero again after the last.
  void *zeroed = nullptr;
  if (c.set.zeroedBytes > 0) {
    CU(cudaMalloc(&zeroed, c.set.zeroedBytes));
    CU(cudaMemset(zeroed, 0, c.set.zeroedBytes));
  }
  // Parameters: buffer addresses, and the TMA producer's tensor maps (encoded here as the
  // runtime encodes them once per session).
  std::vector<std::vector<void *>> argStore(c.set.kernels.size());
  std::vector<std::vector<CUtensorMap>> mapStore(c.set.kernels.size());
  std::vector<std::vector<void *>> argPtrs(c.set.kernels.size());
  for (size_t i = 0; i < c.set.kernels.size(); ++i) {
    const auto &params = c.set.kernels[i].params;
    argStore[i].reserve(params.size());
    mapStore[i].reserve(params.size());
    for (const auto &p : params) {
      void *buffer = p.value    ? dev.at(p.value)
                     : p.zeroed ? zeroed
                                : scratch.at(static_cast<size_t>(p.scratch));
      if (!p.map) {
        argStore[i].push_back(buffer);
        argPtrs[i].push_back(&argStore[i].back());
        continue;
      }
      if (!encodeTensorMap(*p.map, buffer, &mapStore[i].emplace_back())) {
        c.error = "cuTensorMapEncodeTiled failed for a parameter of " + c.set.kernels[i].name;
        return false;
      }
      argPtrs[i].push_back(&mapStore[i].back());
    }
  }
  auto launchAll = [&]() -> cudaError_t {
    for (size_t i = 0; i < kernels.size(); ++i) {
      const auto &L = c.set.kernels[i].launch;
      std::vector<void *> &ptrs = argPtrs[i];
      cudaError_t e = cudaLaunchKernel(
          reinterpret_cast<const void *>(kernels[i]), dim3(L.grid[0], L.grid[1], L.grid[2]),
          dim3(L.block[0], L.block[1], L.block[2]), ptrs.data(), L.sharedBytes, nullptr);
      if (e != cudaSuccess)
        return e;
    }
    return cudaSuccess;
  };
  CU(launchAll());
  CU(cudaDeviceSynchronize());
  CU(cudaMemcpy(result.mutableRaw(), outp, result.byteSize(), cudaMemcpyDeviceToHost));

  // Check.
  // The sampled reference knows float layouts only: int8 cases are checked in full.
  // The sampled reference knows the NCHW float layouts only: int8 and --nhwc cases are
  // checked in full.
  const bool fullOnly = c.dtype == DType::kI8 || c.has("nhwc");
  const std::string mode = c.flag("check", c.flops <= 4e9 || fullOnly ? "full" : "sample");
  if (mode == "sample" && fullOnly) {
    c.error = "--check sample: the sampled reference knows NCHW float layouts only; int8 and "
              "--nhwc cases are checked in full (or --check none)";
    return false;
  }
  const double rtol = c.dtype == DType::kI8     ? 1e-5 // exact sums, one float rescale
                      : c.dtype == DType::kF16  ? 1e-2
                      : c.dtype == DType::kBF16 ? 3e-2
                      : c.has("tf32")           ? 5e-3
                                                : 1e-4;
  std::vector<int64_t> idx;
  std::vector<double> ref;
  if (mode == "full") {
    std::map<const Value *, Tensor> env;
    for (size_t i = 0; i < inputs.size(); ++i)
      env[inputs[i]] = host[i];
    for (const Node *n : c.group.nodes) {
      std::vector<Tensor> args;
      for (const Value *v : n->inputs())
        args.push_back(v ? env.at(v) : Tensor());
      auto r = eval::evaluate(*n, args);
      if (!r) {
        c.error = "reference: " + r.status().message();
        return false;
      }
      env[n->output(0)] = (*r)[0];
    }
    const Tensor &t = env.at(out);
    for (int64_t i = 0; i < t.numElements(); ++i) {
      idx.push_back(i);
      ref.push_back(t.elementAsDouble(i));
    }
  } else if (mode == "sample") {
    std::uniform_int_distribution<int64_t> pick(0, result.numElements() - 1);
    for (int i = 0; i < 512; ++i) {
      int64_t e = i < 2 ? (i == 0 ? 0 : result.numElements() - 1) : pick(rng);
      idx.push_back(e);
      ref.push_back(sampledReference(c, host, e));
    }
  }
  if (!idx.empty()) {
    double rms = 0;
    for (double r : ref)
      rms += r * r;
    rms = std::sqrt(rms / double(ref.size())) + 1e-30;
    double worst = 0;
    int64_t worstAt = -1, bad = 0;
    for (size_t j = 0; j < idx.size(); ++j) {
      const double g = result.elementAsDouble(idx[j]);
      const double err = std::fabs(g - ref[j]);
      const double allowed = rtol * (std::fabs(ref[j]) + rms);
      const double rel = err / (std::fabs(ref[j]) + rms);
      if (!(err <= allowed))
        ++bad;
      if (!(rel <= worst)) {
        worst = std::isnan(rel) ? INFINITY : rel;
        worstAt = j;
      }
    }
    char buf[256];
    if (bad == 0)
      std::snprintf(buf, sizeof buf, "ok(%s %zu, max rel %.1e)", mode.c_str(), idx.size(), worst);
    else
      std::snprintf(buf, sizeof buf, "FAIL(%s %lld/%zu bad, worst at %lld: got %g want %g)",
                    mode.c_str(), (long long)bad, idx.size(), (long long)idx[worstAt],
                    result.elementAsDouble(idx[worstAt]), ref[worstAt]);
    *check = buf;
  } else {
    *check = "unchecked";
  }

  // Time. --flush: a 256 MiB write before each timed launch (outside the events) evicts the
  // operands from L2, as tools/bench/harness.py's timer does and as a model's kernels mostly
  // find them; without it back-to-back launches find them in L2.
  cudaEvent_t e0, e1;
  CU(cudaEventCreate(&e0));
  CU(cudaEventCreate(&e1));
  for (int i = 0; i < 3; ++i)
    CU(launchAll());
  void *flush = nullptr;
  constexpr size_t kFlushBytes = size_t{256} << 20;
  if (c.has("flush"))
    CU(cudaMalloc(&flush, kFlushBytes));
  std::vector<float> ms;
  for (int i = 0; i < runs; ++i) {
    if (flush)
      CU(cudaMemsetAsync(flush, i & 0xff, kFlushBytes));
    CU(cudaEventRecord(e0));
    CU(launchAll());
    CU(cudaEventRecord(e1));
    CU(cudaEventSynchronize(e1));
    float t = 0;
    CU(cudaEventElapsedTime(&t, e0, e1));
    ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  *medianMs = runs > 0 ? ms[ms.size() / 2] : 0;
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  if (flush)
    cudaFree(flush);
  for (auto &[v, p] : dev)
    cudaFree(p);
  for (void *p : scratch)
    cudaFree(p);
  if (zeroed) {
    std::vector<unsigned char> state(c.set.zeroedBytes);
    CU(cudaMemcpy(state.data(), zeroed, state.size(), cudaMemcpyDeviceToHost));
    cudaFree(zeroed);
    if (std::any_of(state.begin(), state.end(), [](unsigned char b) { return b != 0; })) {
      c.error = "the kernels left their zeroed state nonzero";
      cudaLibraryUnload(lib);
      return false;
    }
  }
  cudaLibraryUnload(lib);
  return true;
}

std::string tileOf(const Case &c) {
  const std::string &s = c.set.kernels[0].source;
  auto p = s.find(", tile ");
  if (p != std::string::npos)
    return s.substr(p + 7, s.find('\n', p) - p - 7);
  return c.group.anchor->op() == Op::kConv ? "direct" : "?";
}

int main(int argc, char **argv) {
  std::vector<std::vector<std::string>> lines;
  std::vector<std::string> cli(argv + 1, argv + argc);
  int runs = 50;
  bool tf32 = false, dump = false;
  for (size_t i = 0; i + 1 < cli.size(); ++i)
    if (cli[i] == "--runs")
      runs = std::stoi(cli[i + 1]);
  tf32 = std::find(cli.begin(), cli.end(), "--tf32") != cli.end();
  dump = std::find(cli.begin(), cli.end(), "--dump") != cli.end();
  std::string save; // --save PREFIX: each case's full source to PREFIX<i>.cu
  for (size_t i = 0; i + 1 < cli.size(); ++i)
    if (cli[i] == "--save")
      save = cli[i + 1];
  // --file CASES may stand anywhere among the global flags (--runs, --check, --save, ...).
  const auto file = std::find(cli.begin(), cli.end(), "--file");
  if (file != cli.end() && file + 1 != cli.end()) {
    std::ifstream f(*(file + 1));
    if (!f) {
      std::fprintf(stderr, "kbench: cannot read %s\n", (file + 1)->c_str());
      return 2;
    }
    std::string l;
    while (std::getline(f, l)) {
      if (l.empty() || l[0] == '#')
        continue;
      std::stringstream ss(l);
      std::vector<std::string> words;
      for (std::string w; ss >> w;)
        words.push_back(w);
      lines.push_back(words);
    }
  } else if (!cli.empty()) {
    lines.push_back(cli);
  } else {
    std::fprintf(stderr, "usage: kbench matmul M N K f16 | conv N C H W M KH KW S P f16 | "
                         "--file CASES\n");
    return 2;
  }
  int device = 0;
  cudaDeviceProp prop{};
  const bool gpu = cudaGetDeviceProperties(&prop, device) == cudaSuccess;
  codegen::EmitOptions opts;
  codegen::NvrtcOptions nv;
  if (gpu) {
    opts.smVersion = prop.major * 10 + prop.minor;
    opts.numSms = prop.multiProcessorCount;
    nv.smVersion = opts.smVersion;
    std::printf("# %s, sm_%d, %d SMs\n", prop.name, opts.smVersion, opts.numSms);
  } else {
    std::printf("# no GPU: emit and compile only (sm_90)\n");
  }
  std::vector<Case> cases(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    for (const auto &w : lines[i])
      cases[i].line += (cases[i].line.empty() ? "" : " ") + w;
    if (!parseCase(cases[i], lines[i]))
      continue;
    for (size_t j = 0; j + 1 < cli.size(); ++j)
      if (cli[j] == "--check" && !cases[i].has("check"))
        cases[i].flags["check"] = cli[j + 1];
    if (std::find(cli.begin(), cli.end(), "--flush") != cli.end())
      cases[i].flags["flush"] = "1";
    codegen::EmitOptions o = opts;
    o.allowTf32 = tf32 || cases[i].has("tf32");
    o.outlineHeavyEpilogues = !cases[i].has("inline-epilogue");
    o.stagedEpilogue = !cases[i].has("fragment-epilogue");
    o.sm90a = !cases[i].has("no-wgmma");
    o.prefetchEpilogue = cases[i].has("prefetch");
    o.prefetchShortEpilogues = !cases[i].has("no-prefetch-short");
    o.hopperInt8 = !cases[i].has("no-hopper-int8");
    o.hopperPingpong = !cases[i].has("no-pingpong");
    o.hopperClusterSplitK = cases[i].has("cluster-split");
    o.hopperStreamK = cases[i].has("stream-k");
    o.hopperMulticast = cases[i].has("multicast");
    // dlc's defaults unless a case turns them off (--tma, --tile-192, --stem: on anyway).
    o.hopperTma = !cases[i].has("no-tma");
    o.hopperTile192 = !cases[i].has("no-tile-192");
    // On by default as in dlc; --narrow-tiles and --int8-split-k still say so explicitly.
    o.hopperNarrowTiles = !cases[i].has("no-narrow-tiles");
    o.int8SplitK = !cases[i].has("no-int8-split-k");
    o.int8PointwisePlain = cases[i].has("int8-pointwise-plain");
    o.stemConv = !cases[i].has("no-stem");
    prepare(cases[i], o);
    if (dump && cases[i].error.empty())
      std::printf("%s\n", cases[i].source.c_str() + codegen::cudaPrelude().size());
    if (!save.empty() && cases[i].error.empty())
      std::ofstream(save + std::to_string(i) + ".cu") << cases[i].source;
  }
  // Compile in parallel.
  std::atomic<size_t> next{0};
  std::vector<std::thread> pool;
  const unsigned workers = std::max(1u, std::min(16u, std::thread::hardware_concurrency()));
  for (unsigned w = 0; w < workers; ++w)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < cases.size();) {
        Case &c = cases[i];
        if (!c.error.empty())
          continue;
        codegen::NvrtcOptions o = nv;
        o.archSpecific = codegen::needsSm90a(c.set.kernels);
        // --define A=1,B=2: macros for the program (tuning knobs of the .cuh templates).
        for (std::stringstream defs(c.flag("define", "")); defs.good();) {
          std::string d;
          std::getline(defs, d, ',');
          if (!d.empty())
            o.extra.push_back("-D" + d);
        }
        auto mod = codegen::compileCuda(c.source, c.group.name, o);
        if (!mod)
          c.error = mod.status().message();
        else
          c.mod = std::move(*mod);
      }
    });
  for (auto &t : pool)
    t.join();
  int failures = 0;
  std::printf("%-58s %-22s %9s %9s  %s\n", "case", "tile", "ms", "TFLOP/s", "check");
  for (Case &c : cases) {
    if (!c.error.empty()) {
      std::printf("%-58s ERROR %s\n", c.line.c_str(), c.error.c_str());
      ++failures;
      continue;
    }
    if (!gpu) {
      std::printf("%-58s %-22s compiled (%zu kernels, %zu bytes cubin)\n", c.line.c_str(),
                  tileOf(c).c_str(), c.set.kernels.size(), c.mod.cubin.size());
      continue;
    }
    double ms = 0;
    std::string check;
    if (!run(c, c.has("runs") ? std::stoi(c.flag("runs", "50")) : runs, &ms, &check)) {
      std::printf("%-58s ERROR %s\n", c.line.c_str(), c.error.c_str());
      ++failures;
      cudaDeviceReset();
      continue;
    }
    if (check.rfind("FAIL", 0) == 0)
      ++failures;
    std::printf("%-58s %-22s %9.4f %9.2f  %s  [%s]\n", c.line.c_str(), tileOf(c).c_str(), ms,
                ms > 0 ? c.flops / (ms * 1e-3) / 1e12 : 0.0, check.c_str(), c.info.c_str());
    std::fflush(stdout);
  }
  std::printf("# %d failure(s) in %zu case(s)\n", failures, cases.size());
  return failures ? 1 : 0;
}

} // namespace
} // namespace dlc::kbench

int main(int argc, char **argv) { return dlc::kbench::main(argc, argv); }
