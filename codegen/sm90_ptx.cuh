// The Hopper (sm_90a) PTX that codegen/sm90_gemm.cuh's GEMM main loop is built from, as thin
// inline-asm wrappers: shared-memory addresses and wgmma's matrix descriptors, mbarriers,
// cp.async, wgmma with its accumulator register lists, thread-block clusters and distributed
// shared memory, and TMA (tensor maps, bulk tensor loads, their multicast to a cluster's
// CTAs). NVRTC sees this file and sm90_gemm.cuh as one text (codegen/cuda_prelude.cc's
// "dlc_sm90" prelude), this one first.

namespace dlc_sm90 {

__device__ __forceinline__ unsigned smem_addr(const void *p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// The first 1024-byte-aligned address at or after `p` (the swizzle atoms need it).
__device__ __forceinline__ unsigned char *align1024(unsigned char *p) {
  return p + ((1024u - (smem_addr(p) & 1023u)) & 1023u);
}

/// A wgmma shared-memory matrix descriptor with the 128-byte swizzle.
__device__ __forceinline__ unsigned long long descriptor(unsigned addr, unsigned lbo,
                                                         unsigned sbo) {
  return static_cast<unsigned long long>((addr & 0x3FFFFu) >> 4) |
         (static_cast<unsigned long long>(lbo >> 4) << 16) |
         (static_cast<unsigned long long>(sbo >> 4) << 32) | (1ull << 62);
}

__device__ __forceinline__ void mbar_init(unsigned long long *bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}

__device__ __forceinline__ void mbar_arrive(unsigned long long *bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

/// Waits until the phase with parity `parity` of `bar` has completed; with ACQUIRE_CLUSTER it
/// also acquires what the arriving threads of other CTAs of the cluster released.
#define DLC_SM90_TRY_WAIT(SEM)                                                                     \
  "{\n.reg .pred p;\nmbarrier.try_wait.parity" SEM ".shared::cta.b64 p, [%1], %2;\n"               \
  "selp.u32 %0, 1, 0, p;\n}\n"
template <bool ACQUIRE_CLUSTER = false>
__device__ __forceinline__ void mbar_wait(unsigned long long *bar, unsigned parity) {
  unsigned done = 0;
  do {
    if constexpr (ACQUIRE_CLUSTER)
      asm volatile(DLC_SM90_TRY_WAIT(".acquire.cluster")
                   : "=r"(done)
                   : "r"(smem_addr(bar)), "r"(parity)
                   : "memory");
    else
      asm volatile(DLC_SM90_TRY_WAIT("")
                   : "=r"(done)
                   : "r"(smem_addr(bar)), "r"(parity)
                   : "memory");
  } while (!done);
}

/// 16 bytes from `src` to shared `dst`; zeros when !valid (src is then not read).
__device__ __forceinline__ void copy16(unsigned dst, const void *src, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src),
               "r"(valid ? 16 : 0)
               : "memory");
}

template <int N> __device__ __forceinline__ void copies_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

template <class T> struct Kind; // the wgmma input type and its accumulator
template <> struct Kind<__half> {
  static constexpr int value = 0;
  using Acc = float;
};
template <> struct Kind<__nv_bfloat16> {
  static constexpr int value = 1;
  using Acc = float;
};
template <> struct Kind<signed char> {
  static constexpr int value = 2;
  using Acc = int;
};
template <class T> using Acc = typename Kind<T>::Acc;
/// Elements of T in one 16-byte chunk, and in a stage row of 128 bytes (K per stage).
template <class T> __host__ __device__ constexpr int chunk_elems() { return 16 / sizeof(T); }
template <class T> __host__ __device__ constexpr int bk_elems() { return 128 / sizeof(T); }

// The accumulator registers of one wgmma, in groups of 8 (16 columns of N, 4 registers per
// 8 columns): the group's list in the instruction (DLC_SM90_D<g>) and its asm operands
// (DLC_SM90_A<g>(C), C the constraint: "+f" for float, "+r" for int32).
#define DLC_SM90_D0 "%0, %1, %2, %3, %4, %5, %6, %7"
#define DLC_SM90_D1 ", %8, %9, %10, %11, %12, %13, %14, %15"
#define DLC_SM90_D2 ", %16, %17, %18, %19, %20, %21, %22, %23"
#define DLC_SM90_D3 ", %24, %25, %26, %27, %28, %29, %30, %31"
#define DLC_SM90_D4 ", %32, %33, %34, %35, %36, %37, %38, %39"
#define DLC_SM90_D5 ", %40, %41, %42, %43, %44, %45, %46, %47"
#define DLC_SM90_D6 ", %48, %49, %50, %51, %52, %53, %54, %55"
#define DLC_SM90_D7 ", %56, %57, %58, %59, %60, %61, %62, %63"
#define DLC_SM90_D8 ", %64, %65, %66, %67, %68, %69, %70, %71"
#define DLC_SM90_D9 ", %72, %73, %74, %75, %76, %77, %78, %79"
#define DLC_SM90_D10 ", %80, %81, %82, %83, %84, %85, %86, %87"
#define DLC_SM90_D11 ", %88, %89, %90, %91, %92, %93, %94, %95"
#define DLC_SM90_D12 ", %96, %97, %98, %99, %100, %101, %102, %103"
#define DLC_SM90_D13 ", %104, %105, %106, %107, %108, %109, %110, %111"
#define DLC_SM90_D14 ", %112, %113, %114, %115, %116, %117, %118, %119"
#define DLC_SM90_D15 ", %120, %121, %122, %123, %124, %125, %126, %127"
#define DLC_SM90_A0(C) C(d[0]), C(d[1]), C(d[2]), C(d[3]), C(d[4]), C(d[5]), C(d[6]), C(d[7])
#define DLC_SM90_A1(C)                                                                             \
  , C(d[8]), C(d[9]), C(d[10]), C(d[11]), C(d[12]), C(d[13]), C(d[14]), C(d[15])
#define DLC_SM90_A2(C)                                                                             \
  , C(d[16]), C(d[17]), C(d[18]), C(d[19]), C(d[20]), C(d[21]), C(d[22]), C(d[23])
#define DLC_SM90_A3(C)                                                                             \
  , C(d[24]), C(d[25]), C(d[26]), C(d[27]), C(d[28]), C(d[29]), C(d[30]), C(d[31])
#define DLC_SM90_A4(C)                                                                             \
  , C(d[32]), C(d[33]), C(d[34]), C(d[35]), C(d[36]), C(d[37]), C(d[38]), C(d[39])
#define DLC_SM90_A5(C)                                                                             \
  , C(d[40]), C(d[41]), C(d[42]), C(d[43]), C(d[44]), C(d[45]), C(d[46]), C(d[47])
#define DLC_SM90_A6(C)                                                                             \
  , C(d[48]), C(d[49]), C(d[50]), C(d[51]), C(d[52]), C(d[53]), C(d[54]), C(d[55])
#define DLC_SM90_A7(C)                                                                             \
  , C(d[56]), C(d[57]), C(d[58]), C(d[59]), C(d[60]), C(d[61]), C(d[62]), C(d[63])
#define DLC_SM90_A8(C)                                                                             \
  , C(d[64]), C(d[65]), C(d[66]), C(d[67]), C(d[68]), C(d[69]), C(d[70]), C(d[71])
#define DLC_SM90_A9(C)                                                                             \
  , C(d[72]), C(d[73]), C(d[74]), C(d[75]), C(d[76]), C(d[77]), C(d[78]), C(d[79])
#define DLC_SM90_A10(C)                                                                            \
  , C(d[80]), C(d[81]), C(d[82]), C(d[83]), C(d[84]), C(d[85]), C(d[86]), C(d[87])
#define DLC_SM90_A11(C)                                                                            \
  , C(d[88]), C(d[89]), C(d[90]), C(d[91]), C(d[92]), C(d[93]), C(d[94]), C(d[95])
#define DLC_SM90_A12(C)                                                                            \
  , C(d[96]), C(d[97]), C(d[98]), C(d[99]), C(d[100]), C(d[101]), C(d[102]), C(d[103])
#define DLC_SM90_A13(C)                                                                            \
  , C(d[104]), C(d[105]), C(d[106]), C(d[107]), C(d[108]), C(d[109]), C(d[110]), C(d[111])
#define DLC_SM90_A14(C)                                                                            \
  , C(d[112]), C(d[113]), C(d[114]), C(d[115]), C(d[116]), C(d[117]), C(d[118]), C(d[119])
#define DLC_SM90_A15(C)                                                                            \
  , C(d[120]), C(d[121]), C(d[122]), C(d[123]), C(d[124]), C(d[125]), C(d[126]), C(d[127])

// A width's lists (DLC_SM90_DREGS_N<n>, DLC_SM90_ACC_N<n>) and the operand numbers after its
// accumulators (DLC_SM90_OPS_N<n>: desc A, desc B, scale-d, trans-b).
#define DLC_SM90_DREGS_N32 DLC_SM90_D0 DLC_SM90_D1
#define DLC_SM90_ACC_N32(C) DLC_SM90_A0(C) DLC_SM90_A1(C)
#define DLC_SM90_OPS_N32 "%16", "%17", "%18", "%19"
#define DLC_SM90_DREGS_N48 DLC_SM90_D0 DLC_SM90_D1 DLC_SM90_D2
#define DLC_SM90_ACC_N48(C) DLC_SM90_A0(C) DLC_SM90_A1(C) DLC_SM90_A2(C)
#define DLC_SM90_OPS_N48 "%24", "%25", "%26", "%27"
#define DLC_SM90_DREGS_N64 DLC_SM90_D0 DLC_SM90_D1 DLC_SM90_D2 DLC_SM90_D3
#define DLC_SM90_ACC_N64(C) DLC_SM90_A0(C) DLC_SM90_A1(C) DLC_SM90_A2(C) DLC_SM90_A3(C)
#define DLC_SM90_OPS_N64 "%32", "%33", "%34", "%35"
#define DLC_SM90_DREGS_N80 DLC_SM90_D0 DLC_SM90_D1 DLC_SM90_D2 DLC_SM90_D3 DLC_SM90_D4
#define DLC_SM90_ACC_N80(C)                                                                        \
  DLC_SM90_A0(C) DLC_SM90_A1(C) DLC_SM90_A2(C) DLC_SM90_A3(C) DLC_SM90_A4(C)
#define DLC_SM90_OPS_N80 "%40", "%41", "%42", "%43"
#define DLC_SM90_DREGS_N96 DLC_SM90_D0 DLC_SM90_D1 DLC_SM90_D2 DLC_SM90_D3 DLC_SM90_D4 DLC_SM90_D5
#define DLC_SM90_ACC_N96(C)                                                                        \
  DLC_SM90_A0(C) DLC_SM90_A1(C) DLC_SM90_A2(C) DLC_SM90_A3(C) DLC_SM90_A4(C) DLC_SM90_A5(C)
#define DLC_SM90_OPS_N96 "%48", "%49", "%50", "%51"
#define DLC_SM90_DREGS_N128                                                                        \
  DLC_SM90_D0 DLC_SM90_D1 DLC_SM90_D2 DLC_SM90_D3 DLC_SM90_D4 DLC_SM90_D5 DLC_SM90_D6 DLC_SM90_D7
#define DLC_SM90_ACC_N128(C)                                                                       \
  DLC_SM90_A0(C)                                                                                   \
  DLC_SM90_A1(C) DLC_SM90_A2(C) DLC_SM90_A3(C) DLC_SM90_A4(C) DLC_SM90_A5(C) DLC_SM90_A6(C)        \
      DLC_SM90_A7(C)
#define DLC_SM90_OPS_N128 "%64", "%65", "%66", "%67"
#define DLC_SM90_DREGS_N160                                                                        \
  DLC_SM90_D0 DLC_SM90_D1 DLC_SM90_D2 DLC_SM90_D3 DLC_SM90_D4 DLC_SM90_D5 DLC_SM90_D6 DLC_SM90_D7  \
      DLC_SM90_D8 DLC_SM90_D9
#define DLC_SM90_ACC_N160(C)                                                                       \
  DLC_SM90_A0(C)                                                                                   \
  DLC_SM90_A1(C) DLC_SM90_A2(C) DLC_SM90_A3(C) DLC_SM90_A4(C) DLC_SM90_A5(C) DLC_SM90_A6(C)        \
      DLC_SM90_A7(C) DLC_SM90_A8(C) DLC_SM90_A9(C)
#define DLC_SM90_OPS_N160 "%80", "%81", "%82", "%83"
#define DLC_SM90_DREGS_N192                                                                        \
  DLC_SM90_D0 DLC_SM90_D1 DLC_SM90_D2 DLC_SM90_D3 DLC_SM90_D4 DLC_SM90_D5 DLC_SM90_D6 DLC_SM90_D7  \
      DLC_SM90_D8 DLC_SM90_D9 DLC_SM90_D10 DLC_SM90_D11
#define DLC_SM90_ACC_N192(C)                                                                       \
  DLC_SM90_A0(C)                                                                                   \
  DLC_SM90_A1(C) DLC_SM90_A2(C) DLC_SM90_A3(C) DLC_SM90_A4(C) DLC_SM90_A5(C) DLC_SM90_A6(C)        \
      DLC_SM90_A7(C) DLC_SM90_A8(C) DLC_SM90_A9(C) DLC_SM90_A10(C) DLC_SM90_A11(C)
#define DLC_SM90_OPS_N192 "%96", "%97", "%98", "%99"
#define DLC_SM90_DREGS_N256                                                                        \
  DLC_SM90_D0 DLC_SM90_D1 DLC_SM90_D2 DLC_SM90_D3 DLC_SM90_D4 DLC_SM90_D5 DLC_SM90_D6 DLC_SM90_D7  \
      DLC_SM90_D8 DLC_SM90_D9 DLC_SM90_D10 DLC_SM90_D11 DLC_SM90_D12 DLC_SM90_D13 DLC_SM90_D14     \
          DLC_SM90_D15
#define DLC_SM90_ACC_N256(C)                                                                       \
  DLC_SM90_A0(C)                                                                                   \
  DLC_SM90_A1(C) DLC_SM90_A2(C) DLC_SM90_A3(C) DLC_SM90_A4(C) DLC_SM90_A5(C) DLC_SM90_A6(C)        \
      DLC_SM90_A7(C) DLC_SM90_A8(C) DLC_SM90_A9(C) DLC_SM90_A10(C) DLC_SM90_A11(C) DLC_SM90_A12(C) \
          DLC_SM90_A13(C) DLC_SM90_A14(C) DLC_SM90_A15(C)
#define DLC_SM90_OPS_N256 "%128", "%129", "%130", "%131"

// The instructions: accumulators, then desc A, desc B, scale-d (and for f16/bf16 trans-b).
#define DLC_SM90_WGMMA_TEXT16(NN, TY)                                                              \
  DLC_SM90_WGMMA_TEXT16_(#NN, TY, DLC_SM90_DREGS_N##NN, DLC_SM90_OPS_N##NN)
#define DLC_SM90_WGMMA_TEXT16_(NN, TY, REGS, OPS) DLC_SM90_WGMMA_TEXT16__(NN, TY, REGS, OPS)
#define DLC_SM90_WGMMA_TEXT16__(NN, TY, REGS, DA, DB, P, TB)                                       \
  "{\n.reg .pred p;\nsetp.ne.b32 p, " P ", 0;\n"                                                   \
  "wgmma.mma_async.sync.aligned.m64n" NN "k16.f32." TY "." TY " {" REGS "}, " DA ", " DB           \
  ", p, 1, 1, 0, " TB ";\n}\n"
#define DLC_SM90_WGMMA_TEXT8(NN)                                                                   \
  DLC_SM90_WGMMA_TEXT8_(#NN, DLC_SM90_DREGS_N##NN, DLC_SM90_OPS_N##NN)
#define DLC_SM90_WGMMA_TEXT8_(NN, REGS, OPS) DLC_SM90_WGMMA_TEXT8__(NN, REGS, OPS)
#define DLC_SM90_WGMMA_TEXT8__(NN, REGS, DA, DB, P, TB)                                            \
  "{\n.reg .pred p;\nsetp.ne.b32 p, " P ", 0;\n"                                                   \
  "wgmma.mma_async.sync.aligned.m64n" NN "k32.s32.s8.s8 {" REGS "}, " DA ", " DB ", p;\n}\n"

/// d += A (64 x 32 bytes of K, descriptor da) * B (32 bytes of K x N, descriptor db),
/// asynchronously: k16 for f16/bf16 (TRANS_B: B N-major), k32 for s8 (K-major only).
template <int N, class T, int TRANS_B>
__device__ __forceinline__ void wgmma(Acc<T> (&d)[N / 2], unsigned long long da,
                                      unsigned long long db) {
  static_assert(N == 32 || N == 48 || N == 64 || N == 80 || N == 96 || N == 128 || N == 160 ||
                    N == 192 || N == 256,
                "wgmma tile widths: 32, 48, 64, 80, 96, 128, 160, 192, 256");
  constexpr bool bf16 = Kind<T>::value == 1;
// One width's instruction on d: s8 (int32 accumulators), or f16/bf16 (float ones, TRANS_B).
#define DLC_SM90_WGMMA_S8(NN)                                                                      \
  asm volatile(DLC_SM90_WGMMA_TEXT8(NN) : DLC_SM90_ACC_N##NN("+r") : "l"(da), "l"(db), "r"(1))
#define DLC_SM90_WGMMA_16(NN, TY)                                                                  \
  asm volatile(DLC_SM90_WGMMA_TEXT16(NN, TY)                                                       \
               : DLC_SM90_ACC_N##NN("+f")                                                          \
               : "l"(da), "l"(db), "r"(1), "n"(TRANS_B))
#define DLC_SM90_WGMMA_WIDTH(NN)                                                                   \
  if constexpr (Kind<T>::value == 2)                                                               \
    DLC_SM90_WGMMA_S8(NN);                                                                         \
  else if constexpr (bf16)                                                                         \
    DLC_SM90_WGMMA_16(NN, "bf16");                                                                 \
  else                                                                                             \
    DLC_SM90_WGMMA_16(NN, "f16")
  static_assert(Kind<T>::value != 2 || TRANS_B == 0, "s8 wgmma reads both operands K-major");
  if constexpr (N == 32) {
    DLC_SM90_WGMMA_WIDTH(32);
  } else if constexpr (N == 48) {
    DLC_SM90_WGMMA_WIDTH(48);
  } else if constexpr (N == 64) {
    DLC_SM90_WGMMA_WIDTH(64);
  } else if constexpr (N == 80) {
    DLC_SM90_WGMMA_WIDTH(80);
  } else if constexpr (N == 96) {
    DLC_SM90_WGMMA_WIDTH(96);
  } else if constexpr (N == 128) {
    DLC_SM90_WGMMA_WIDTH(128);
  } else if constexpr (N == 160) {
    DLC_SM90_WGMMA_WIDTH(160);
  } else if constexpr (N == 192) {
    DLC_SM90_WGMMA_WIDTH(192);
  } else {
    DLC_SM90_WGMMA_WIDTH(256);
  }
#undef DLC_SM90_WGMMA_WIDTH
#undef DLC_SM90_WGMMA_16
#undef DLC_SM90_WGMMA_S8
}

__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
}
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
/// Waits until at most N wgmma groups are in flight. The accumulators pass through an empty
/// asm after it, so the compiler neither reads them before the wait nor keeps copies across.
__device__ __forceinline__ void keep_register(float &r) { asm volatile("" : "+f"(r)::"memory"); }
__device__ __forceinline__ void keep_register(int &r) { asm volatile("" : "+r"(r)::"memory"); }
template <int N, class A, int MB, int R> __device__ __forceinline__ void wgmma_wait(A (&d)[MB][R]) {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#pragma unroll
  for (int b = 0; b < MB; ++b)
#pragma unroll
    for (int i = 0; i < R; ++i)
      keep_register(d[b][i]);
}

/// Registers per thread after setmaxnreg: the producer needs few, the consumers hold the
/// accumulators (128 x 56 + 256 x 224 <= 65536).
#ifndef DLC_SM90_PRODUCER_REGS
#define DLC_SM90_PRODUCER_REGS 56
#endif
#ifndef DLC_SM90_CONSUMER_REGS
#define DLC_SM90_CONSUMER_REGS 224
#endif
#define DLC_SM90_STR(x) DLC_SM90_STR_(x)
#define DLC_SM90_STR_(x) #x

// Thread-block clusters (split-K: the splits of a tile are one cluster's CTAs).
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%clusterid.x;" : "=r"(r));
  return r;
}
__device__ __forceinline__ unsigned cluster_count() {
  unsigned r;
  asm volatile("mov.u32 %0, %%nclusterid.x;" : "=r"(r));
  return r;
}
/// Every thread of every CTA of the cluster: what each wrote before is visible after.
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}
/// The address of the same shared-memory location in CTA `rank` of the cluster.
__device__ __forceinline__ unsigned cluster_map(unsigned addr, unsigned rank) {
  unsigned r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(r) : "r"(addr), "r"(rank));
  return r;
}
/// Arrives on an mbarrier of another CTA of the cluster (its address from cluster_map),
/// releasing this thread's writes to the cluster.
__device__ __forceinline__ void mbar_arrive_remote(unsigned cluster_addr) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(cluster_addr)
               : "memory");
}

/// A TMA descriptor (the driver's CUtensorMap: 128 opaque bytes, 64-byte aligned), encoded on
/// the host and passed by value as a __grid_constant__ kernel parameter.
struct alignas(64) TensorMap {
  unsigned long long opaque[16];
};

/// Arrives on `bar` and adds `bytes` to the transactions its phase waits for.
__device__ __forceinline__ void mbar_expect_tx(unsigned long long *bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

/// The box at element coordinates (x: innermost, y) of `map` into shared `dst` (1024-byte
/// aligned, swizzled as the map says; zeros where the box leaves the tensor), its bytes
/// completing on `bar`.
__device__ __forceinline__ void tma_load(unsigned dst, const TensorMap *map, int x, int y,
                                         unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
               "[%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
               "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(smem_addr(bar))
               : "memory");
}

/// tma_load into the same shared-memory offset `dst` of both CTAs of a 2-CTA cluster, the
/// bytes completing on the mbarrier at `bar`'s offset in each.
__device__ __forceinline__ void tma_load_pair(unsigned dst, const TensorMap *map, int x, int y,
                                              unsigned long long *bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
               "l"(reinterpret_cast<unsigned long long>(map)), "r"(x), "r"(y), "r"(smem_addr(bar)),
               "h"(static_cast<unsigned short>(3))
               : "memory");
}

} // namespace dlc_sm90
