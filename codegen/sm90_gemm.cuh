// The Hopper GEMM main loop (sm_90a), compiled by NVRTC into the GEMM kernels that
// codegen/gemm_sm90.cc writes: this file is the tile machinery, the generated part is the
// kernel's entry (tile raster, operand pointers per tile) and its epilogue.
//
// The kernel is persistent: CTA x computes output tiles x, x + gridDim.x, ... (BM x BN each,
// BM = 128) with three warpgroups:
//   * warpgroup 0 is the producer: its 128 threads copy each K step's A and B tiles (128
//     bytes of K per row: 64 f16/bf16, 128 int8) from global memory into a ring of STAGES
//     shared-memory stages with 16-byte cp.async, in the 128-byte-swizzled layout wgmma reads.
//     It runs on into the next tile while the consumers finish the last one, so a short K
//     (a transformer's 768) does not pay the pipeline's fill for every tile;
//   * warpgroups 1 and 2 are consumers: each owns 64 rows of the tile and multiplies them by
//     the whole B tile with wgmma.mma_async m64nBNk16 (f16/bf16, float accumulators) or
//     m64nBNk32 (s8, int32 accumulators), BN / 2 accumulators per thread in registers, then
//     runs the epilogue through a private shared-memory slab.
// The stages are handed over with mbarriers: `full[s]` completes when all 128 producer
// threads' copies of stage s have landed (each thread waits for its own cp.async group, makes
// the writes visible to the async proxy that wgmma reads through, then arrives), `empty[s]`
// when the 8 consumer warps have finished reading it. A consumer keeps one K step of wgmma in
// flight while it waits for the next stage. Step counters run on across tiles, so the
// barriers' phases do too.
//
// Shared-memory layouts (stage s at s * STAGE_BYTES, 1024-byte aligned):
//   * A, K-major: row r of the tile (m) at r * 128 bytes, its 16-byte chunk c at
//     ((c ^ (r % 8)) * 16): the 128B swizzle; descriptors advance 32 bytes per wgmma (k16
//     for 16-bit types, k32 for int8).
//   * B, K-major ([N, K] in memory): the same, row = n.
//   * B, N-major ([K, N] in memory; 16-bit types only): atoms of 64 columns x 64 K rows;
//     K row r of atom a at a * 8192 + r * 128, chunks swizzled by r % 8. Its descriptor has the transpose bit, the
//     leading byte offset (atom to atom along N) 8192 and the stride byte offset (8 K rows to
//     the next 8) 1024; a k16 step advances 2048 bytes.
// The accumulator fragment of consumer warp w (0..3 in its warpgroup), lane l: d[4j + 2h + e]
// is row 16w + l / 4 + 8h, column 8j + 2(l % 4) + e of the warpgroup's 64 x BN block.

namespace dlc_sm90 {

enum : int { BM = 128 }; // tile rows; K per stage: 128 bytes (bk_elems)

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

/// Waits until the phase with parity `parity` of `bar` has completed.
__device__ __forceinline__ void mbar_wait(unsigned long long *bar, unsigned parity) {
  unsigned done = 0;
  do {
    asm volatile("{\n.reg .pred p;\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 "selp.u32 %0, 1, 0, p;\n}\n"
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

// m64n64k16: 32 accumulator registers per thread, then desc A, desc B, scale-d, trans-b.
#define DLC_SM90_WGMMA_N64(TY) \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " {" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
  "}, %32, %33, p, 1, 1, 0, %35;\n}\n"
#define DLC_SM90_ACC_N64 \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])

// m64n128k16: 64 accumulator registers per thread, then desc A, desc B, scale-d, trans-b.
#define DLC_SM90_WGMMA_N128(TY) \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " {" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
  "}, %64, %65, p, 1, 1, 0, %67;\n}\n"
#define DLC_SM90_ACC_N128 \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])

// m64n256k16: 128 accumulator registers per thread, then desc A, desc B, scale-d, trans-b.
#define DLC_SM90_WGMMA_N256(TY) \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n256k16.f32." TY "." TY " {" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
  "}, %128, %129, p, 1, 1, 0, %131;\n}\n"
#define DLC_SM90_ACC_N256 \
    "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
    "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
    "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
    "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
    "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
    "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
    "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
    "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
    "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
    "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
    "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
    "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
    "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
    "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
    "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
    "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127])

// m64n64k32 s8: 32 int32 accumulators per thread, then desc A, desc B, scale-d.
#define DLC_SM90_WGMMA_S8_N64 \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n64k32.s32.s8.s8 {" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31" \
  "}, %32, %33, p;\n}\n"
#define DLC_SM90_ACC_S32_N64 \
    "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), \
    "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), \
    "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), \
    "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31])

// m64n128k32 s8: 64 int32 accumulators per thread, then desc A, desc B, scale-d.
#define DLC_SM90_WGMMA_S8_N128 \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n128k32.s32.s8.s8 {" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63" \
  "}, %64, %65, p;\n}\n"
#define DLC_SM90_ACC_S32_N128 \
    "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), \
    "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), \
    "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), \
    "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), \
    "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), \
    "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), \
    "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), \
    "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63])

// m64n256k32 s8: 128 int32 accumulators per thread, then desc A, desc B, scale-d.
#define DLC_SM90_WGMMA_S8_N256 \
  "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n" \
  "wgmma.mma_async.sync.aligned.m64n256k32.s32.s8.s8 {" \
    "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
    "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
    "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
    "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
    "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
    "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
    "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
    "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
  "}, %128, %129, p;\n}\n"
#define DLC_SM90_ACC_S32_N256 \
    "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3]), "+r"(d[4]), "+r"(d[5]), "+r"(d[6]), "+r"(d[7]), \
    "+r"(d[8]), "+r"(d[9]), "+r"(d[10]), "+r"(d[11]), "+r"(d[12]), "+r"(d[13]), "+r"(d[14]), "+r"(d[15]), \
    "+r"(d[16]), "+r"(d[17]), "+r"(d[18]), "+r"(d[19]), "+r"(d[20]), "+r"(d[21]), "+r"(d[22]), "+r"(d[23]), \
    "+r"(d[24]), "+r"(d[25]), "+r"(d[26]), "+r"(d[27]), "+r"(d[28]), "+r"(d[29]), "+r"(d[30]), "+r"(d[31]), \
    "+r"(d[32]), "+r"(d[33]), "+r"(d[34]), "+r"(d[35]), "+r"(d[36]), "+r"(d[37]), "+r"(d[38]), "+r"(d[39]), \
    "+r"(d[40]), "+r"(d[41]), "+r"(d[42]), "+r"(d[43]), "+r"(d[44]), "+r"(d[45]), "+r"(d[46]), "+r"(d[47]), \
    "+r"(d[48]), "+r"(d[49]), "+r"(d[50]), "+r"(d[51]), "+r"(d[52]), "+r"(d[53]), "+r"(d[54]), "+r"(d[55]), \
    "+r"(d[56]), "+r"(d[57]), "+r"(d[58]), "+r"(d[59]), "+r"(d[60]), "+r"(d[61]), "+r"(d[62]), "+r"(d[63]), \
    "+r"(d[64]), "+r"(d[65]), "+r"(d[66]), "+r"(d[67]), "+r"(d[68]), "+r"(d[69]), "+r"(d[70]), "+r"(d[71]), \
    "+r"(d[72]), "+r"(d[73]), "+r"(d[74]), "+r"(d[75]), "+r"(d[76]), "+r"(d[77]), "+r"(d[78]), "+r"(d[79]), \
    "+r"(d[80]), "+r"(d[81]), "+r"(d[82]), "+r"(d[83]), "+r"(d[84]), "+r"(d[85]), "+r"(d[86]), "+r"(d[87]), \
    "+r"(d[88]), "+r"(d[89]), "+r"(d[90]), "+r"(d[91]), "+r"(d[92]), "+r"(d[93]), "+r"(d[94]), "+r"(d[95]), \
    "+r"(d[96]), "+r"(d[97]), "+r"(d[98]), "+r"(d[99]), "+r"(d[100]), "+r"(d[101]), "+r"(d[102]), "+r"(d[103]), \
    "+r"(d[104]), "+r"(d[105]), "+r"(d[106]), "+r"(d[107]), "+r"(d[108]), "+r"(d[109]), "+r"(d[110]), "+r"(d[111]), \
    "+r"(d[112]), "+r"(d[113]), "+r"(d[114]), "+r"(d[115]), "+r"(d[116]), "+r"(d[117]), "+r"(d[118]), "+r"(d[119]), \
    "+r"(d[120]), "+r"(d[121]), "+r"(d[122]), "+r"(d[123]), "+r"(d[124]), "+r"(d[125]), "+r"(d[126]), "+r"(d[127])

/// d += A (64 x 32 bytes of K, descriptor da) * B (32 bytes of K x N, descriptor db),
/// asynchronously: k16 for f16/bf16 (TRANS_B: B N-major), k32 for s8 (K-major only).
template <int N, class T, int TRANS_B>
__device__ __forceinline__ void wgmma(Acc<T> (&d)[N / 2], unsigned long long da,
                                      unsigned long long db) {
  static_assert(N == 64 || N == 128 || N == 256, "wgmma tile widths: 64, 128, 256");
  constexpr bool bf16 = Kind<T>::value == 1;
  if constexpr (Kind<T>::value == 2) {
    static_assert(TRANS_B == 0, "s8 wgmma reads both operands K-major");
    if constexpr (N == 64)
      asm volatile(DLC_SM90_WGMMA_S8_N64 : DLC_SM90_ACC_S32_N64 : "l"(da), "l"(db), "r"(1));
    else if constexpr (N == 128)
      asm volatile(DLC_SM90_WGMMA_S8_N128 : DLC_SM90_ACC_S32_N128 : "l"(da), "l"(db), "r"(1));
    else
      asm volatile(DLC_SM90_WGMMA_S8_N256 : DLC_SM90_ACC_S32_N256 : "l"(da), "l"(db), "r"(1));
  } else if constexpr (N == 64) {
    if constexpr (bf16)
      asm volatile(DLC_SM90_WGMMA_N64("bf16") : DLC_SM90_ACC_N64 : "l"(da), "l"(db), "r"(1), "n"(TRANS_B));
    else
      asm volatile(DLC_SM90_WGMMA_N64("f16") : DLC_SM90_ACC_N64 : "l"(da), "l"(db), "r"(1), "n"(TRANS_B));
  } else if constexpr (N == 128) {
    if constexpr (bf16)
      asm volatile(DLC_SM90_WGMMA_N128("bf16") : DLC_SM90_ACC_N128 : "l"(da), "l"(db), "r"(1), "n"(TRANS_B));
    else
      asm volatile(DLC_SM90_WGMMA_N128("f16") : DLC_SM90_ACC_N128 : "l"(da), "l"(db), "r"(1), "n"(TRANS_B));
  } else {
    if constexpr (bf16)
      asm volatile(DLC_SM90_WGMMA_N256("bf16") : DLC_SM90_ACC_N256 : "l"(da), "l"(db), "r"(1), "n"(TRANS_B));
    else
      asm volatile(DLC_SM90_WGMMA_N256("f16") : DLC_SM90_ACC_N256 : "l"(da), "l"(db), "r"(1), "n"(TRANS_B));
  }
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}
/// Waits until at most N wgmma groups are in flight. The accumulators pass through an empty
/// asm after it, so the compiler neither reads them before the wait nor keeps copies across.
template <int N, int R> __device__ __forceinline__ void wgmma_wait(float (&d)[R]) {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#pragma unroll
  for (int i = 0; i < R; ++i)
    asm volatile("" : "+f"(d[i])::"memory");
}
template <int N, int R> __device__ __forceinline__ void wgmma_wait(int (&d)[R]) {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
#pragma unroll
  for (int i = 0; i < R; ++i)
    asm volatile("" : "+r"(d[i])::"memory");
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

/// Shared memory of one pipeline stage. The whole kernel (shared_bytes) holds STAGES of them,
/// then the epilogue's slabs (8 consumer warps x EP_ROWS rows of EP_COLS + 8 words), then the
/// full and empty mbarriers, plus the 1024 bytes that aligning the dynamic shared memory to
/// the swizzle atom may skip.
enum : int { EP_ROWS = 8, EP_COLS = 64, EP_PITCH = EP_COLS + 8 };
template <int BN> __host__ __device__ constexpr unsigned stage_bytes() { return (BM + BN) * 128u; }
__host__ __device__ constexpr unsigned slab_bytes() { return 8u * EP_ROWS * EP_PITCH * 4u; }
template <int BN, int STAGES> __host__ __device__ constexpr unsigned shared_bytes() {
  return STAGES * stage_bytes<BN>() + slab_bytes() + 2 * STAGES * 8 + 1024;
}

/// The producer's copies of K step kt into the stage at shared address `sa` (A) and `sb` (B),
/// by thread p of the producer warpgroup. Each warp writes 512 contiguous bytes of the stage
/// per copy (no bank conflicts) from four 128-byte row pieces: thread p copies chunk p % 8 of
/// A rows p / 8 + 16 i (B likewise when K-major); for an N-major B, chunk p % 8 of K rows
/// (p / 8) % 16 + 16 i of each 64-column atom.
template <class T, int BN, bool B_KMAJOR>
__device__ __forceinline__ void load_stage(const T *A, long long lda, const T *B, long long ldb,
                                           int M, int N, int K, int m0, int n0, int kt,
                                           unsigned sa, unsigned sb, int p) {
  constexpr int CE = chunk_elems<T>();
  const int k0 = kt * bk_elems<T>(), c = p % 8, r0 = p / 8; // r0 < 16: swizzle row r0 % 8
  {
    const int kc = k0 + c * CE;
    const unsigned dst = sa + r0 * 128 + ((c ^ (r0 % 8)) * 16);
#pragma unroll
    for (int i = 0; i < BM / 16; ++i) {
      const int m = m0 + r0 + 16 * i;
      const bool ok = m < M && kc < K;
      copy16(dst + i * 16 * 128, ok ? A + m * lda + kc : A, ok);
    }
  }
  if constexpr (B_KMAJOR) {
    const int kc = k0 + c * CE;
    const unsigned dst = sb + r0 * 128 + ((c ^ (r0 % 8)) * 16);
#pragma unroll
    for (int i = 0; i < BN / 16; ++i) {
      const int n = n0 + r0 + 16 * i;
      const bool ok = n < N && kc < K;
      copy16(dst + i * 16 * 128, ok ? B + n * ldb + kc : B, ok);
    }
  } else {
    const unsigned dst = sb + r0 * 128 + ((c ^ (r0 % 8)) * 16);
#pragma unroll
    static_assert(sizeof(T) == 2, "an N-major B is for 16-bit types");
    for (int a = 0; a < BN / 64; ++a) {
      const int n = n0 + a * 64 + c * 8;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int k = k0 + r0 + 16 * i;
        const bool ok = n < N && k < K;
        copy16(dst + a * 8192 + i * 16 * 128, ok ? B + k * ldb + n : B, ok);
      }
    }
  }
}

/// One output tile: its operands (batch applied) and its origin.
template <class T> struct Tile {
  const T *A, *B;
  int m0, n0;
  long long b; // the batch index
};

/// A persistent GEMM: CTA x computes tiles x, x + gridDim.x, ... < `tiles`, each a BM x BN
/// block of A (M x K, K-contiguous, row stride lda) times B (N x K with stride ldb when
/// B_KMAJOR, else K x N); `tile_of(t, tile)` says where tile t lies. The producer runs ahead
/// into the next tile while the consumers finish the last one with `epilogue(acc, w, lane,
/// tile, slab)` in each consumer warp w (0..7: rows 16 w .. 16 w + 15 of the tile; `slab` its
/// EP_ROWS x EP_PITCH words of shared memory). K is a multiple of 8, the operands 16-byte
/// aligned, their strides multiples of 8 elements; rows and columns past M and N read zeros.
/// Every thread of the CTA (384) calls it.
template <class T, int BN, int STAGES, bool B_KMAJOR, class TileOf, class Epilogue>
__device__ __forceinline__ void gemm(long long lda, long long ldb, int M, int N, int K,
                                     int tiles, unsigned char *smem, TileOf &&tile_of,
                                     Epilogue &&epilogue) {
  // The producer signals K step `it` once it has issued it + LAG: LAG + 1 steps' copies in
  // flight per thread. A consumer frees step it - 1's stage when it starts `it`, so the
  // producer waiting for a free stage has signalled enough steps only while LAG <= STAGES - 2.
  static_assert(STAGES >= 3, "at least three stages");
#ifdef DLC_SM90_LAG // tuning knob (kbench --define)
  constexpr int LAG = DLC_SM90_LAG;
#else
  constexpr int LAG = STAGES - 2;
#endif
  static_assert(LAG >= 0 && LAG <= STAGES - 2, "LAG outside [0, STAGES - 2]");
  Acc<T> *slabs = reinterpret_cast<Acc<T> *>(smem + STAGES * stage_bytes<BN>());
  unsigned long long *full = reinterpret_cast<unsigned long long *>(
      smem + STAGES * stage_bytes<BN>() + slab_bytes());
  unsigned long long *empty = full + STAGES;
  const int tid = threadIdx.x, wg = tid / 128;
  const int kTiles = (K + bk_elems<T>() - 1) / bk_elems<T>();
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], 128);
      mbar_init(&empty[s], 8);
    }
  }
  __syncthreads();
  const unsigned base = smem_addr(smem);
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 " DLC_SM90_STR(DLC_SM90_PRODUCER_REGS) ";");
    int it = 0; // K steps issued, over all tiles
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      Tile<T> x;
      tile_of(t, x);
      for (int kt = 0; kt < kTiles; ++kt, ++it) {
        const int s = it % STAGES;
        if (it >= STAGES)
          mbar_wait(&empty[s], ((it / STAGES) - 1) & 1);
        const unsigned sa = base + s * stage_bytes<BN>();
#ifndef DLC_SM90_NO_LOADS // diagnostic knob: the consumers multiply whatever the stages hold
        load_stage<T, BN, B_KMAJOR>(x.A, lda, x.B, ldb, M, N, K, x.m0, x.n0, kt, sa,
                                    sa + BM * 128, tid);
#endif
        asm volatile("cp.async.commit_group;" ::: "memory");
        if (it >= LAG) {
          copies_wait<LAG>();
          asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
          mbar_arrive(&full[(it - LAG) % STAGES]);
        }
      }
    }
    copies_wait<0>();
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    for (int j = it - LAG < 0 ? 0 : it - LAG; j < it; ++j)
      mbar_arrive(&full[j % STAGES]);
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 " DLC_SM90_STR(DLC_SM90_CONSUMER_REGS) ";");
    const int lane = tid % 32, w = (tid - 128) / 32; // consumer warp 0..7
    const unsigned aOff = (wg - 1) * 64 * 128;      // this warpgroup's 64 rows of A
    Acc<T> acc[BN / 2];
    int it = 0; // K steps consumed, over all tiles
    for (int t = blockIdx.x; t < tiles; t += gridDim.x) {
      Tile<T> x;
      tile_of(t, x);
#pragma unroll
      for (int i = 0; i < BN / 2; ++i)
        acc[i] = 0;
      for (int kt = 0; kt < kTiles; ++kt, ++it) {
        const int s = it % STAGES;
        mbar_wait(&full[s], (it / STAGES) & 1);
        const unsigned sa = base + s * stage_bytes<BN>(), sb = sa + BM * 128;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) { // 32 bytes of K per wgmma
          const unsigned long long da = descriptor(sa + aOff + kk * 32, 16, 1024);
          const unsigned long long db = B_KMAJOR ? descriptor(sb + kk * 32, 16, 1024)
                                                 : descriptor(sb + kk * 2048, 8192, 1024);
#ifndef DLC_SM90_NO_MMA // diagnostic knob: the pipeline without the math
          wgmma<BN, T, B_KMAJOR ? 0 : 1>(acc, da, db);
#endif
        }
        wgmma_commit();
        wgmma_wait<1>(acc);
        if (kt > 0 && lane == 0)
          mbar_arrive(&empty[(it - 1) % STAGES]);
      }
      wgmma_wait<0>(acc);
      if (lane == 0)
        mbar_arrive(&empty[(it - 1) % STAGES]);
      epilogue(acc, w, lane, x, slabs + w * (EP_ROWS * EP_PITCH));
    }
  }
}

} // namespace dlc_sm90
