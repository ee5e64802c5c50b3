#include "host_emulator.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "codegen/cuda_prelude.h"
#include "codegen/nvrtc.h"
#include "ir/eval/eval.h"
#include "ir/parser.h"

#ifndef DLC_HOST_CXX
#define DLC_HOST_CXX "c++"
#endif

namespace dlc::codegen::testing {

namespace {

constexpr const char *kShim = R"cpp(// dlc host emulation shim
#include <math.h>
#include <stdint.h>
#include <string.h>
#include <barrier>
#include <memory>
#include <utility>
#include <vector>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#undef __shared__
#define __shared__ static
#undef __launch_bounds__
#define __launch_bounds__(...)
// CUDA's min/max overloads (device code calls them unqualified).
template <class A, class B> static inline auto min(A a, B b) -> decltype(a + b) {
  return b < a ? b : a;
}
template <class A, class B> static inline auto max(A a, B b) -> decltype(a + b) {
  return a < b ? b : a;
}
struct dlc_emu_dim3 {
  unsigned x, y, z;
};
thread_local dlc_emu_dim3 threadIdx, blockIdx;
static dlc_emu_dim3 blockDim, gridDim;
static std::unique_ptr<std::barrier<>> dlc_emu_block;
static std::vector<std::unique_ptr<std::barrier<>>> dlc_emu_warps;
static std::vector<unsigned long long> dlc_emu_slots;
static std::vector<unsigned> dlc_emu_regs; // 8 words per thread (ldmatrix, mma.sync)
extern "C" void dlc_emu_set_dims(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                                 unsigned bz) {
  gridDim = {gx, gy, gz};
  blockDim = {bx, by, bz};
  const unsigned n = bx * by * bz;
  dlc_emu_block = std::make_unique<std::barrier<>>(n);
  dlc_emu_warps.clear();
  for (unsigned w = 0; w * 32 < n; ++w)
    dlc_emu_warps.push_back(std::make_unique<std::barrier<>>(n - w * 32 < 32 ? n - w * 32 : 32));
  dlc_emu_slots.assign(n, 0);
  dlc_emu_regs.assign(n * 8, 0);
}
extern "C" void dlc_emu_set_thread(unsigned bx, unsigned by, unsigned bz, unsigned tx,
                                   unsigned ty, unsigned tz) {
  blockIdx = {bx, by, bz};
  threadIdx = {tx, ty, tz};
}
static inline unsigned dlc_emu_tid() {
  return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
static inline void __syncthreads() { dlc_emu_block->arrive_and_wait(); }
template <class T> static T __shfl_up_sync(unsigned, T v, unsigned delta) {
  const unsigned t = dlc_emu_tid(), w = t / 32, lane = t % 32;
  memcpy(&dlc_emu_slots[t], &v, sizeof(T));
  dlc_emu_warps[w]->arrive_and_wait();
  T r = v;
  if (lane >= delta)
    memcpy(&r, &dlc_emu_slots[t - delta], sizeof(T));
  dlc_emu_warps[w]->arrive_and_wait();
  return r;
}
static inline void __syncwarp(unsigned = 0xffffffffu) {
  dlc_emu_warps[dlc_emu_tid() / 32]->arrive_and_wait();
}
template <class T> static T __shfl_xor_sync(unsigned, T v, int s) {
  const unsigned t = dlc_emu_tid(), w = t / 32, src = w * 32 + ((t % 32) ^ (unsigned)s);
  memcpy(&dlc_emu_slots[t], &v, sizeof(T));
  dlc_emu_warps[w]->arrive_and_wait();
  T r = v;
  if (src < dlc_emu_slots.size())
    memcpy(&r, &dlc_emu_slots[src], sizeof(T));
  dlc_emu_warps[w]->arrive_and_wait();
  return r;
}
// Dynamic shared memory (a kernel's `extern __shared__` array, which build() rewrites to read
// this): one zeroed buffer per block. Shared addresses are offsets into it.
static unsigned char *dlc_emu_dynamic_smem;
extern "C" void dlc_emu_set_smem(void *p) { dlc_emu_dynamic_smem = (unsigned char *)p; }
static inline unsigned long long __cvta_generic_to_shared(const void *p) {
  return (unsigned long long)((const unsigned char *)p - dlc_emu_dynamic_smem);
}
// The prelude's inline-PTX tensor-core helpers, emulated from the PTX ISA's fragment layouts
// (cp.async as a plain copy; ldmatrix and mma.sync gather the warp's registers through slots).
#define DLC_HOST_EMULATION 1
static inline void dlc_cp_async16(unsigned dst, const void *src, bool pred) {
  if (pred)
    memcpy(dlc_emu_dynamic_smem + dst, src, 16);
  else
    memset(dlc_emu_dynamic_smem + dst, 0, 16);
}
static inline void dlc_cp_async_commit() {}
template <int N> static inline void dlc_cp_async_wait() {}
static inline void dlc_emu_ldmatrix(unsigned (&r)[4], unsigned addr, bool trans) {
  const unsigned t = dlc_emu_tid(), w = t / 32, lane = t % 32;
  dlc_emu_regs[t * 8] = addr;
  dlc_emu_warps[w]->arrive_and_wait();
  for (unsigned i = 0; i < 4; ++i) {
    uint16_t h[2];
    for (unsigned e = 0; e < 2; ++e) {
      // Matrix i's rows are the addresses of lanes 8i .. 8i + 7. Plain: this lane holds row
      // lane / 4, columns 2 (lane % 4) + e; transposed: row 2 (lane % 4) + e, column lane / 4.
      const unsigned row = trans ? 2 * (lane % 4) + e : lane / 4;
      const unsigned col = trans ? lane / 4 : 2 * (lane % 4) + e;
      memcpy(&h[e], dlc_emu_dynamic_smem + dlc_emu_regs[(w * 32 + 8 * i + row) * 8] + 2 * col, 2);
    }
    r[i] = h[0] | ((unsigned)h[1] << 16);
  }
  dlc_emu_warps[w]->arrive_and_wait();
}
static inline void dlc_ldmatrix_x4(unsigned (&r)[4], unsigned addr) { dlc_emu_ldmatrix(r, addr, false); }
static inline void dlc_ldmatrix_x4_trans(unsigned (&r)[4], unsigned addr) { dlc_emu_ldmatrix(r, addr, true); }
// mma.sync m16n8kK row.col with P elements to a 32-bit register (f16/bf16: K 16, P 2; s8:
// K 32, P 4): A[r][k] is element k % P of a[(r >= 8) + 2 (k >= K/2)] of lane
// (r % 8) * 4 + (k % (K/2)) / P; B[k][n] element k % P of b[k >= K/2] of lane
// n * 4 + (k % (K/2)) / P; this lane's d are rows lane / 4 (+ 8), columns 2 (lane % 4) + {0, 1}.
// `elem(reg, i)` reads element i of a register.
template <unsigned K, unsigned P, class Acc, class Elem>
static inline void dlc_emu_mma(Acc (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1,
                               Elem elem) {
  const unsigned t = dlc_emu_tid(), w = t / 32, lane = t % 32;
  unsigned *mine = &dlc_emu_regs[t * 8];
  for (int i = 0; i < 4; ++i)
    mine[i] = a[i];
  mine[4] = b0;
  mine[5] = b1;
  dlc_emu_warps[w]->arrive_and_wait();
  auto at = [&](unsigned l, unsigned reg, unsigned k) {
    return elem(dlc_emu_regs[(w * 32 + l) * 8 + reg], k % P);
  };
  for (unsigned e = 0; e < 4; ++e) {
    const unsigned r = lane / 4 + 8 * (e / 2), n = 2 * (lane % 4) + e % 2;
    Acc acc = d[e];
    for (unsigned k = 0; k < K; ++k)
      acc += at((r % 8) * 4 + (k % (K / 2)) / P, (r >= 8) + 2 * (k >= K / 2), k) *
             at(n * 4 + (k % (K / 2)) / P, 4 + (k >= K / 2), k);
    d[e] = acc;
  }
  dlc_emu_warps[w]->arrive_and_wait();
}
template <class H> static inline float dlc_emu_half(unsigned reg, unsigned i) {
  const uint16_t bits = (uint16_t)(reg >> (16 * i));
  H h;
  memcpy(&h, &bits, 2);
  return (float)h;
}
static inline void dlc_mma_f16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  dlc_emu_mma<16, 2>(d, a, b0, b1, dlc_emu_half<__half>);
}
static inline void dlc_mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  dlc_emu_mma<16, 2>(d, a, b0, b1, dlc_emu_half<__nv_bfloat16>);
}
static inline void dlc_mma_s8(int (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  dlc_emu_mma<32, 4>(d, a, b0, b1,
                     [](unsigned reg, unsigned i) { return (int)(signed char)(reg >> (8 * i)); });
}
static inline float __int_as_float(int i) {
  float f;
  memcpy(&f, &i, sizeof f);
  return f;
}
static inline float __uint_as_float(unsigned i) { return __int_as_float((int)i); }
static inline unsigned __float_as_uint(float f) {
  unsigned i;
  memcpy(&i, &f, sizeof i);
  return i;
}
// Correctly rounded arithmetic the quantization helpers name (the host never contracts them).
static inline float __fdiv_rn(float a, float b) { return a / b; }
static inline float __fmul_rn(float a, float b) { return a * b; }
static inline float __fadd_rn(float a, float b) { return a + b; }
static inline float __fsub_rn(float a, float b) { return a - b; }
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dsub_rn(double a, double b) { return a - b; }
static inline double __ddiv_rn(double a, double b) { return a / b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline float __double2float_rn(double d) { return (float)d; }
static inline double __longlong_as_double(long long i) {
  double d;
  memcpy(&d, &i, sizeof d);
  return d;
}
)cpp";

using ThreadFn = void (*)(unsigned, unsigned, unsigned, unsigned, unsigned, unsigned);

template <size_t... I>
void callWith(void *fn, const std::vector<void *> &b, std::index_sequence<I...>) {
  using F = void (*)(decltype(static_cast<void>(I), static_cast<void *>(nullptr))...);
  reinterpret_cast<F>(fn)(b[I]...);
}

template <size_t... N>
bool callWithAnyCount(void *fn, const std::vector<void *> &b, std::index_sequence<N...>) {
  return ((b.size() == N ? (callWith(fn, b, std::make_index_sequence<N>{}), true) : false) || ...);
}

/// The most parameters an emulated kernel may have (a fused group's inputs and outputs).
constexpr size_t kMaxKernelParams = 48;

/// Calls a kernel whose parameters are all pointers.
void call(void *fn, const std::vector<void *> &b) {
  if (!callWithAnyCount(fn, b, std::make_index_sequence<kMaxKernelParams + 1>{})) {
    std::fprintf(stderr, "host emulator: kernels with %zu parameters are not supported\n",
                 b.size());
    std::abort();
  }
}

} // namespace

Expected<std::unique_ptr<HostModule>> HostModule::build(const std::string &source) {
  DLC_ASSIGN_OR_RETURN(std::string include, cudaIncludeDir());
  std::string tmpl = (std::filesystem::temp_directory_path() / "dlc-host-emu-XXXXXX").string();
  if (!mkdtemp(tmpl.data()))
    return unavailable("cannot create a temporary directory");
  std::unique_ptr<HostModule> m(new HostModule());
  m->dir_ = tmpl;
  const std::string cc = m->dir_ + "/kernels.cc", so = m->dir_ + "/kernels.so",
                    log = m->dir_ + "/log.txt";
  // A kernel's dynamic shared memory, `extern __shared__ ... unsigned char NAME[];`, becomes a
  // pointer to the block's buffer (run() allocates it).
  static const std::regex dynamicSmem(R"(extern __shared__[^;\[]*\b(\w+)\[\];)");
  const std::string hostSource =
      std::regex_replace(source, dynamicSmem, "unsigned char *const $1 = dlc_emu_dynamic_smem;");
  std::ofstream(cc) << kShim << cudaPrelude() << hostSource;
  const std::string cmd =
      fmt::format("{} -std=c++20 -O1 -shared -fPIC -pthread -w -I'{}' '{}' -o '{}' > '{}' 2>&1",
                  DLC_HOST_CXX, include, cc, so, log);
  if (std::system(cmd.c_str()) != 0) {
    std::stringstream s;
    s << std::ifstream(log).rdbuf();
    return internalError("host compile failed: {}\n{}", cmd, s.str());
  }
  m->handle_ = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->handle_)
    return internalError("dlopen {}: {}", so, dlerror());
  return m;
}

HostModule::~HostModule() {
  if (handle_)
    dlclose(handle_);
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

Status HostModule::run(const Kernel &k, const std::vector<void *> &buffers) {
  void *fn = dlsym(handle_, k.name.c_str());
  auto setDims = reinterpret_cast<ThreadFn>(dlsym(handle_, "dlc_emu_set_dims"));
  auto setThread = reinterpret_cast<ThreadFn>(dlsym(handle_, "dlc_emu_set_thread"));
  auto setSmem = reinterpret_cast<void (*)(void *)>(dlsym(handle_, "dlc_emu_set_smem"));
  if (!fn || !setDims || !setThread || !setSmem)
    return notFound("kernel '{}' is not in the host module", k.name);
  if (buffers.size() != k.params.size())
    return invalidArgument("kernel '{}' takes {} buffers, got {}", k.name, k.params.size(),
                           buffers.size());
  const LaunchDims &d = k.launch;
  for (unsigned bz = 0; bz < d.grid[2]; ++bz)
    for (unsigned by = 0; by < d.grid[1]; ++by)
      for (unsigned bx = 0; bx < d.grid[0]; ++bx) {
        setDims(d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1], d.block[2]);
        std::vector<unsigned char> smem(std::max<uint32_t>(d.sharedBytes, 16), 0);
        setSmem(smem.data());
        std::vector<std::thread> threads;
        for (unsigned tz = 0; tz < d.block[2]; ++tz)
          for (unsigned ty = 0; ty < d.block[1]; ++ty)
            for (unsigned tx = 0; tx < d.block[0]; ++tx)
              threads.emplace_back([=, &buffers] {
                setThread(bx, by, bz, tx, ty, tz);
                call(fn, buffers);
              });
        for (std::thread &t : threads)
          t.join();
      }
  return Status::ok();
}

namespace {

/// A host step (the one-node graph the CPU runs between kernels, as rt::GpuSession does):
/// its inputs read from their buffers, the node evaluated by the reference backend, its
/// outputs written back.
template <typename At> Status runHostStep(const rt::HostStep &h, At &&at) {
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, parseGraph(h.graphText, "host step"));
  if (g->nodes().size() != 1 || g->inputs().size() != h.inputs.size() ||
      g->outputs().size() != h.outputs.size())
    return invalidArgument("host step '{}': not one node with its buffers", h.origin);
  const Node &node = *g->nodes().front();
  std::vector<Tensor> in;
  for (const Value *v : node.inputs()) {
    if (!v) {
      in.emplace_back();
    } else if (v->isConstant()) {
      in.push_back(v->constant());
    } else {
      size_t k = 0;
      while (k < g->inputs().size() && g->inputs()[k] != v)
        ++k;
      if (k == g->inputs().size())
        return invalidArgument("host step '{}': input '{}' is not a graph input", h.origin,
                               v->name());
      Tensor t = Tensor::zeros(v->dtype(), v->shape().sizes());
      if (h.inputs[k].bytes)
        std::memcpy(t.mutableRaw(), at(h.inputs[k]), h.inputs[k].bytes);
      in.push_back(std::move(t));
    }
  }
  DLC_ASSIGN_OR_RETURN(std::vector<Tensor> out, eval::evaluate(node, in));
  for (size_t i = 0; i < h.outputs.size(); ++i) {
    const Value *o = g->outputs()[i].value;
    int slot = 0;
    while (slot < node.numOutputs() && node.output(slot) != o)
      ++slot;
    const Tensor &t = out.at(static_cast<size_t>(slot));
    if (static_cast<uint64_t>(t.byteSize()) != h.outputs[i].bytes)
      return invalidArgument("host step '{}': output {} has {} bytes, its buffer {}", h.origin, i,
                             t.byteSize(), h.outputs[i].bytes);
    if (h.outputs[i].bytes)
      std::memcpy(at(h.outputs[i]), t.raw(), h.outputs[i].bytes);
  }
  return Status::ok();
}

} // namespace

Expected<std::vector<NamedTensor>> runProgramOnHost(const rt::Program &p,
                                                    const std::map<std::string, Tensor> &inputs,
                                                    int64_t maxThreads) {
  std::string source;
  for (const auto &[name, text] : p.sources)
    source += "\n" + text;
  for (const rt::Step &s : p.steps) {
    if (const auto *l = std::get_if<rt::LaunchStep>(&s)) {
      const int64_t threads =
          int64_t{l->grid[0]} * l->grid[1] * l->grid[2] * l->block[0] * l->block[1] * l->block[2];
      if (threads > maxThreads)
        return unimplemented("kernel '{}' launches {} threads, more than the emulator takes ({})",
                             l->kernel, threads, maxThreads);
    }
  }
  std::unique_ptr<HostModule> module;
  if (!source.empty()) {
    DLC_ASSIGN_OR_RETURN(module, HostModule::build(source));
  }
  std::vector<unsigned char> arena(static_cast<size_t>(std::max<uint64_t>(p.arenaBytes, 1)), 0xA5);
  std::fill(arena.end() - static_cast<std::ptrdiff_t>(p.zeroedBytes), arena.end(), 0); // state
  std::vector<unsigned char> constants(p.constants.begin(), p.constants.end());
  auto at = [&](const rt::BufferRef &r) -> unsigned char * {
    return (r.space == rt::Space::kArena ? arena.data() : constants.data()) + r.offset;
  };
  for (const rt::ProgramTensor &t : p.inputs) {
    auto it = inputs.find(t.name);
    if (it == inputs.end())
      return invalidArgument("missing input '{}'", t.name);
    if (it->second.dtype() != t.dtype || it->second.shape() != t.shape ||
        static_cast<uint64_t>(it->second.byteSize()) != t.buffer.bytes)
      return invalidArgument("input '{}' is {}, the program takes {} {}", t.name,
                             it->second.type().str(), dtypeName(t.dtype),
                             Shape::fromSizes(t.shape).str());
    if (t.buffer.bytes)
      std::memcpy(at(t.buffer), it->second.raw(), t.buffer.bytes);
  }
  for (const rt::Step &s : p.steps) {
    if (const auto *c = std::get_if<rt::CopyStep>(&s)) {
      std::memmove(at(c->dst), at(c->src), c->src.bytes);
      continue;
    }
    if (const auto *h = std::get_if<rt::HostStep>(&s)) {
      DLC_RETURN_IF_ERROR(runHostStep(*h, at));
      continue;
    }
    const auto &l = std::get<rt::LaunchStep>(s);
    Kernel k;
    k.name = l.kernel;
    std::copy(std::begin(l.grid), std::end(l.grid), k.launch.grid);
    std::copy(std::begin(l.block), std::end(l.block), k.launch.block);
    k.launch.sharedBytes = l.sharedBytes;
    std::vector<void *> buffers;
    for (const rt::BufferRef &r : l.args) {
      buffers.push_back(at(r));
      k.params.push_back({});
    }
    DLC_RETURN_IF_ERROR(module->run(k, buffers));
  }
  std::vector<NamedTensor> out;
  for (const rt::ProgramTensor &t : p.outputs) {
    Tensor x = Tensor::zeros(t.dtype, t.shape);
    if (t.buffer.bytes)
      std::memcpy(x.mutableRaw(), at(t.buffer), t.buffer.bytes);
    out.push_back({t.name, std::move(x)});
  }
  return out;
}

} // namespace dlc::codegen::testing
