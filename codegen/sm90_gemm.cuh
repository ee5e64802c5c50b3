// The Hopper GEMM main loop (sm_90a), compiled by NVRTC into the GEMM kernels that
// codegen/gemm_sm90.cc writes: this file is the tile machinery, the generated part is the
// kernel's entry (tile raster, operand pointers per tile) and its epilogue.
//
// The kernel is persistent: CTA x computes output tiles x, x + gridDim.x, ... (BM x BN each,
// BM = 128; BN 64, 128, 192 or 256, or with B K-major also 32, 48, 80, 96 or 160) with three
// warpgroups:
//   * warpgroup 0 is the producer: its 128 threads copy each K step's A and B tiles (128
//     bytes of K per row: 64 f16/bf16, 128 int8) from global memory into a ring of STAGES
//     shared-memory stages with 16-byte cp.async, in the 128-byte-swizzled layout wgmma reads
//     (with TmaOperands instead, one thread loads each stage as TMA boxes from tensor maps,
//     which swizzle the same way). It runs on into the next tile while the consumers finish
//     the last one, so a short K (a transformer's 768) does not pay the pipeline's fill for
//     every tile;
//   * warpgroups 1 and 2 are consumers (cooperative; see gemm() for ping-pong): each owns 64
//     rows of the tile and multiplies them by the whole B tile with wgmma.mma_async m64nBNk16
//     (f16/bf16, float accumulators) or m64nBNk32 (s8, int32 accumulators), BN / 2
//     accumulators per thread in registers, then runs the epilogue through a private
//     shared-memory slab.
// The stages are handed over with mbarriers: `full[s]` completes when all 128 producer
// threads' copies of stage s have landed (each thread waits for its own cp.async group, makes
// the writes visible to the async proxy that wgmma reads through, then arrives; with TMA, when
// the one thread's expect_tx arrival and the boxes' bytes have), `empty[s]` when the 8
// consumer warps (4 in ping-pong) have finished reading it. A consumer keeps one K step of wgmma in
// flight while it waits for the next stage. Step counters run on across tiles, so the
// barriers' phases do too.
//
// Shared-memory layouts (stage s at s * STAGE_BYTES, 1024-byte aligned):
//   * A, K-major: row r of the tile (m) at r * 128 bytes, its 16-byte chunk c at
//     ((c ^ (r % 8)) * 16): the 128B swizzle; descriptors advance 32 bytes per wgmma (k16
//     for 16-bit types, k32 for int8).
//   * B, K-major ([N, K] in memory): the same, row = n.
//   * B, N-major ([K, N] in memory; 16-bit types only): atoms of 64 columns x 64 K rows;
//     K row r of atom a at a * 8192 + r * 128, chunks swizzled by r % 8. Its descriptor has
//     the transpose bit, the leading byte offset (atom to atom along N) 8192 and the stride
//     byte offset (8 K rows to the next 8) 1024; a k16 step advances 2048 bytes.
// The accumulator fragment of consumer warp w (0..3 in its warpgroup), lane l: d[4j + 2h + e]
// is row 16w + l / 4 + 8h, column 8j + 2(l % 4) + e of the warpgroup's 64 x BN block.

namespace dlc_sm90 {

enum : int { BM = 128 }; // tile rows; K per stage: 128 bytes (bk_elems)

/// Shared memory of one pipeline stage. The whole kernel (shared_bytes) holds STAGES of them,
/// then the epilogue's slabs (8 consumer warps x EP_ROWS rows of EP_COLS + 8 words), then
/// (split-K in a cluster) the buffer a CTA hands its partial sums over in, then the full and
/// empty mbarriers (and the cluster's ready and freed ones), plus the 1024 bytes that aligning
/// the dynamic shared memory to the swizzle atom may skip.
enum : int { EP_ROWS = 8, EP_COLS = 64, EP_PITCH = EP_COLS + 8 };
template <int BN> __host__ __device__ constexpr unsigned stage_bytes() { return (BM + BN) * 128u; }
__host__ __device__ constexpr unsigned slab_bytes() { return 8u * EP_ROWS * EP_PITCH * 4u; }
/// The partial sums of a BM x BN tile (4-byte accumulators), for split-K in a cluster.
template <int BN, int CLUSTER> __host__ __device__ constexpr unsigned handover_bytes() {
  return CLUSTER > 1 ? BM * BN * 4u : 0u;
}
/// ROWS > 0 (the kernel normalizes its rows, gemm()'s tail): two more mbarriers, in the
/// place of split-K's ready and freed.
template <int BN, int STAGES, int CLUSTER = 1, int ROWS = 0>
__host__ __device__ constexpr unsigned shared_bytes() {
  return STAGES * stage_bytes<BN>() + slab_bytes() + handover_bytes<BN, CLUSTER>() +
         2 * STAGES * 8 + (CLUSTER > 1 || ROWS > 0 ? 16 : 0) + 1024;
}

/// 16 bytes from global memory through L2 only (ld.global.cg): what another SM stored in this
/// kernel, which this SM's L1 may not hold (the rows a cluster normalizes).
__device__ __forceinline__ uint4 load_cg16(const void *p) {
  uint4 r;
  asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
               : "l"(p));
  return r;
}

/// gemm()'s tail when the kernel does not normalize its rows.
struct NoTail {
  template <class X> __device__ __forceinline__ void operator()(const X &, int, int) const {}
};

/// An accumulator's 32 bits, and back (the handover moves them as b32).
__device__ __forceinline__ unsigned acc_bits(float x) { return __float_as_uint(x); }
__device__ __forceinline__ unsigned acc_bits(int x) { return static_cast<unsigned>(x); }
__device__ __forceinline__ void acc_add_bits(float &x, unsigned b) { x += __uint_as_float(b); }
__device__ __forceinline__ void acc_add_bits(int &x, unsigned b) { x += static_cast<int>(b); }
/// Stores 4 accumulators at shared `addr`.
template <class A> __device__ __forceinline__ void store4(unsigned addr, const A *v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(acc_bits(v[0])),
               "r"(acc_bits(v[1])), "r"(acc_bits(v[2])), "r"(acc_bits(v[3]))
               : "memory");
}
/// v += the 4 accumulators at `cluster_addr` in another CTA's shared memory.
template <class A> __device__ __forceinline__ void add_remote4(unsigned cluster_addr, A *v) {
  unsigned r[4];
  asm volatile("ld.shared::cluster.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(cluster_addr)
               : "memory");
#pragma unroll
  for (int e = 0; e < 4; ++e)
    acc_add_bits(v[e], r[e]);
}

// Stream-K: a CTA's units of work are contiguous ranges of K steps, so the tiles of a last,
// partly filled wave are shared out by K steps instead of leaving SMs idle.

/// Where stream-K's units meet: `partials` holds one BM x BN tile of accumulators per CTA (a
/// CTA hands over at most one: its first unit, when that starts inside a tile), `flags` one
/// word per CTA, zero between launches (the session zeroes them once; the CTA that reads a
/// tile's partial sums zeroes their flags again).
template <class A> struct StreamK {
  A *partials;
  int *flags;
  int sk_tiles; // tiles 0 .. sk_tiles - 1 are shared out by K steps, the rest run whole
  int per_cta;  // K steps of those tiles per CTA (the last CTA's range may be shorter)
};
/// How a unit finishes: a whole tile runs the epilogue; a unit that starts inside a tile hands
/// its sums over (kPeer); the unit that starts a tile someone else finishes (kOwner) adds the
/// peers' sums, CTAs blockIdx.x + 1 .. last_peer, then runs the epilogue.
enum : int { kWhole = 0, kPeer = 1, kOwner = 2 };

/// The walk over this CTA's units: tiles t0, t0 + stride, ... < tiles; with stream-K
/// (sk.per_cta > 0) first its range of the stream-K tiles' K steps (tile-major), then its
/// whole tiles sk_tiles + blockIdx.x, + gridDim.x, ... The producer and the consumers each
/// walk their own copy.
struct Walk {
  int t, stride, tiles; // the next whole tile, the step, the end
  int pos, end;         // stream-K: the K steps still to do, [pos, end)
  int k_tiles, per_cta;
  template <class A>
  __device__ __forceinline__ Walk(int t0, int step, int count, int kt, const StreamK<A> *sk)
      : t(t0), stride(step), tiles(count), pos(0), end(0), k_tiles(kt), per_cta(0) {
    if (sk) {
      per_cta = sk->per_cta;
      pos = static_cast<int>(blockIdx.x) * per_cta;
      const int total = sk->sk_tiles * kt;
      end = pos + per_cta < total ? pos + per_cta : total;
      t = sk->sk_tiles + static_cast<int>(blockIdx.x);
    }
  }
  /// The next unit: its tile (for tile_of), K steps [kt0, kt1) and role; false when done.
  __device__ __forceinline__ bool next(int &tile, int &kt0, int &kt1, int &role, int &last_peer) {
    if (pos < end) {
      tile = pos / k_tiles;
      kt0 = pos % k_tiles;
      kt1 = kt0 + (end - pos) < k_tiles ? kt0 + (end - pos) : k_tiles;
      pos += kt1 - kt0;
      role = kt0 > 0 ? kPeer : kt1 < k_tiles ? kOwner : kWhole;
      last_peer = ((tile + 1) * k_tiles - 1) / per_cta; // the CTA holding the tile's last step
      return true;
    }
    if (t >= tiles)
      return false;
    tile = t;
    t += stride;
    kt0 = 0;
    kt1 = 1 << 30;
    role = kWhole;
    last_peer = 0;
    return true;
  }
  /// Whether a whole tile follows (ping-pong's hand-over; not used with stream-K).
  __device__ __forceinline__ bool more() const { return t < tiles; }
};

/// The consumers' named barrier (the 256 threads of both consumer warpgroups).
__device__ __forceinline__ void consumers_sync() { asm volatile("bar.sync 3, 256;" ::: "memory"); }
/// Publishes this CTA's hand-over (the consumers' stores before consumers_sync) to the GPU.
__device__ __forceinline__ void flag_release(int *flag) {
  asm volatile("fence.acq_rel.gpu;\nst.relaxed.gpu.global.b32 [%0], 1;" ::"l"(flag) : "memory");
}
/// Waits until `flag` is set, acquiring what its CTA published.
__device__ __forceinline__ void flag_acquire(const int *flag) {
  int v = 0;
  do
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];" : "=r"(v) : "l"(flag) : "memory");
  while (v == 0);
}
/// 4 accumulators to global memory (kept in L2 for the CTA that adds them), and added back.
template <class A> __device__ __forceinline__ void store_partial4(A *p, const A *v) {
  asm volatile("st.global.cg.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(acc_bits(v[0])),
               "r"(acc_bits(v[1])), "r"(acc_bits(v[2])), "r"(acc_bits(v[3]))
               : "memory");
}
template <class A> __device__ __forceinline__ void add_partial4(const A *p, A *v) {
  unsigned r[4];
  asm volatile("ld.global.cg.v4.b32 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "l"(p)
               : "memory");
#pragma unroll
  for (int e = 0; e < 4; ++e)
    acc_add_bits(v[e], r[e]);
}

/// The operands as TMA descriptors (plain strided matrices, 128-byte swizzle): A [M, K] in
/// boxes of 128 rows x 128 bytes of K; B [N, K] (B_KMAJOR) in boxes of BN rows x 128 bytes,
/// or [K, N] in boxes of 64 K rows x 64 columns, one per 64-column atom. Passed to gemm() in
/// place of the chunk addressing (StridedRows): one producer thread then moves each stage.
struct TmaOperands {
  const TensorMap *a, *b;
};
template <class R> struct IsTma { static constexpr bool value = false; };
template <> struct IsTma<TmaOperands> { static constexpr bool value = true; };

/// Half `r` of a stage's B tile, from the tensor map's half-size box: rows r * BN / 2 .. of a
/// K-major B, K rows r * 32 .. of each 64-column atom of an N-major one; into this CTA's
/// stage, or with PAIR into the same offset of both CTAs of a 2-CTA cluster (tma_load_pair).
template <int BN, bool B_KMAJOR, bool PAIR>
__device__ __forceinline__ void tma_b_half(const TmaOperands &ops, int n0, int k0, int r,
                                           unsigned sb, unsigned long long *bar) {
  auto load = [&](unsigned dst, int x, int y) {
    if constexpr (PAIR)
      tma_load_pair(dst, ops.b, x, y, bar);
    else
      tma_load(dst, ops.b, x, y, bar);
  };
  if constexpr (B_KMAJOR) {
    load(sb + r * (BN / 2) * 128, k0, n0 + r * (BN / 2));
  } else {
#pragma unroll
    for (int a = 0; a < BN / 64; ++a)
      load(sb + a * 8192 + r * 32 * 128, n0 + a * 64, k0 + r * 32);
  }
}

/// The TMA producer's loads of K step kt into the stage at `sa` (A) and `sb` (B), all
/// completing on `bar`, which expects the stage's bytes. MULTICAST (a 2-CTA cluster whose
/// CTAs hold row tiles m0 and m0 + 128 of one column of tiles): this CTA, cluster rank
/// `rank`, loads half of the shared B tile into both CTAs, so each B byte leaves L2 once per
/// pair; the peer's half completes on this CTA's `bar` too.
template <class T, int BN, bool B_KMAJOR, bool MULTICAST>
__device__ __forceinline__ void tma_stage(const TmaOperands &ops, int m0, int n0, int kt,
                                          unsigned sa, unsigned sb, unsigned long long *bar,
                                          unsigned rank) {
  mbar_expect_tx(bar, stage_bytes<BN>());
  const int k0 = kt * bk_elems<T>();
  tma_load(sa, ops.a, k0, m0, bar);
  if constexpr (MULTICAST) {
#ifdef DLC_SM90_MC_LOCAL_B // diagnostic knob: each CTA loads both halves itself (no multicast)
    for (int r = 0; r < 2; ++r)
      tma_b_half<BN, B_KMAJOR, false>(ops, n0, k0, r, sb, bar);
#else
    tma_b_half<BN, B_KMAJOR, true>(ops, n0, k0, static_cast<int>(rank), sb, bar);
#endif
  } else if constexpr (B_KMAJOR) {
    tma_load(sb, ops.b, k0, n0, bar);
  } else {
#pragma unroll
    for (int a = 0; a < BN / 64; ++a)
      tma_load(sb + a * 8192, ops.b, n0 + a * 64, k0, bar);
  }
}

/// Where A's 16-byte chunk (row m, K offset kc) lies, or nullptr for zeros: a strided matrix
/// (rows lda apart). Convolutions pass their own (the im2col rows of an NHWC image).
template <class T> struct StridedRows {
  long long lda;
  int M, K;
  __device__ __forceinline__ const T *operator()(const T *A, int m, int kc) const {
    return m < M && kc < K ? A + m * lda + kc : nullptr;
  }
};

/// The producer's copies of K step kt into the stage at shared address `sa` (A) and `sb` (B),
/// by thread p of the producer warpgroup. Each warp writes 512 contiguous bytes of the stage
/// per copy (no bank conflicts) from four 128-byte row pieces: thread p copies chunk p % 8 of
/// A rows p / 8 + 16 i (B likewise when K-major); for an N-major B, chunk p % 8 of K rows
/// (p / 8) % 16 + 16 i of each 64-column atom. `a_rows(A, m, kc)` says where A's chunks are.
template <class T, int BN, bool B_KMAJOR, class ARows>
__device__ __forceinline__ void load_stage(const ARows &a_rows, const T *A, const T *B,
                                           long long ldb, int N, int K, int m0, int n0, int kt,
                                           unsigned sa, unsigned sb, int p) {
  constexpr int CE = chunk_elems<T>();
  const int k0 = kt * bk_elems<T>(), c = p % 8, r0 = p / 8; // r0 < 16: swizzle row r0 % 8
  {
    const int kc = k0 + c * CE;
    const unsigned dst = sa + r0 * 128 + ((c ^ (r0 % 8)) * 16);
#pragma unroll
    for (int i = 0; i < BM / 16; ++i) {
      const T *src = a_rows(A, m0 + r0 + 16 * i, kc);
      copy16(dst + i * 16 * 128, src ? src : A, src != nullptr);
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
    static_assert(sizeof(T) == 2, "an N-major B is for 16-bit types");
    const unsigned dst = sb + r0 * 128 + ((c ^ (r0 % 8)) * 16);
#pragma unroll
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

/// One unit of work: an output tile (its operands, batch applied, and its origin) over the K
/// steps [kt0, kt1) (split-K: one split's share, `split` its index; else every step).
template <class T> struct Tile {
  const T *A, *B;
  int m0, n0;
  long long b; // the batch index
  int kt0 = 0, kt1 = 1 << 30, split = 0;
};

/// Named barrier `id` between the two consumer warpgroups (256 threads): `signal` passes
/// without waiting, `wait` returns once the other warpgroup has signalled.
__device__ __forceinline__ void order_signal(int id) {
  asm volatile("bar.arrive %0, 256;" ::"r"(id) : "memory");
}
__device__ __forceinline__ void order_wait(int id) {
  asm volatile("bar.sync %0, 256;" ::"r"(id) : "memory");
}

/// A persistent GEMM: CTA x computes tiles x, x + gridDim.x, ... < `tiles`, each a BM x BN
/// block of A (M x K, K-contiguous, its chunks where `a_rows` says: StridedRows for a matrix)
/// times B (N x K with stride ldb when B_KMAJOR, else K x N); `tile_of(t, tile)` says where
/// tile t lies and which of its K steps it sums (split-K: a share, the epilogue then writes
/// partial sums). The producer runs ahead into the next tile while the consumers finish the
/// last one with `epilogue(acc, w, lane, tile, slab)`, once per 16 rows of the tile a warp
/// holds (w: rows 16 w .. 16 w + 15; `slab` the warp's EP_ROWS x EP_PITCH words of shared
/// memory). Two schedules for the consumers:
///   * cooperative (!PINGPONG): both consumer warpgroups share each tile, 64 rows each, and
///     run its epilogue together while the tensor cores idle;
///   * ping-pong: the warpgroups take the CTA's tiles in turn, each whole (two m64 blocks of
///     wgmma per K step, BN accumulators per thread), so one warpgroup's epilogue runs while
///     the other multiplies. Their main loops take turns through two named barriers: a
///     warpgroup starts waiting on a tile's stages only once the other has waited on its
///     last, which also keeps each stage's `full` barrier within one phase of the waiter (an
///     mbarrier's parity cannot tell a phase from the one two later). It pays where a CTA
///     gets several tiles and K is short: a transformer's K of 768 is 12 steps.
/// Split-K in a cluster (CLUSTER > 1, cooperative only): the kernel is launched in clusters of
/// CLUSTER CTAs, which walk the same tiles (t = cluster, cluster + clusters, ...; `tiles`
/// counts tiles, not splits) and each sum the K steps of split `cluster_rank()` (tile_of says
/// which). The CTAs past rank 0 hand their accumulators over in their shared memory; rank 0
/// adds them to its own in rank order (the same sums every run), tells them their buffer is
/// free again, and alone runs the epilogue: no partial sums in global memory and no second
/// kernel, and int32 sums stay exact.
/// B multicast (MULTICAST, TMA only, CLUSTER 1): the kernel is launched in clusters of two
/// CTAs, which walk the same units (t = cluster, cluster + clusters, ...) and take row tiles
/// 2i and 2i + 1 of one column of tiles (tile_of reads cluster_rank()): each CTA's producer
/// loads its A tile and half of the shared B tile into both CTAs' stages (tma_stage). A
/// stage is refilled only when both CTAs' consumers have freed it, so each consumer warp
/// frees it in both (`empty` counts twice the readers), and a producer waits, before its CTA
/// leaves, until its stages' last phases are freed: the peer's consumers arrive on them.
/// Rows normalized in the kernel (ROWS > 0, cooperative only, a layer norm fused after the
/// GEMM: FusedGroup::norm): the kernel is launched in clusters of ROWS CTAs, which walk row
/// tiles (t = cluster, cluster + clusters, ...; tile_of gives rank r column tile r, so a
/// cluster's CTAs hold every column of a row tile). Once a CTA's consumers have stored a
/// tile's epilogue, one of them releases those stores to the cluster and arrives on every
/// CTA's `rowdone` barrier of the tile's parity; when all ROWS CTAs have arrived, each
/// consumer warp runs `tail(tile, warp, lane)`, which normalizes whole rows of the tile,
/// reading what the cluster's CTAs stored. Two barriers, taken by the tiles in turn, so a CTA
/// that runs ahead into the next tile cannot arrive on a phase a slower peer still waits for.
/// A CTA leaves only after its last wait: every arrival on its barriers has happened.
/// tools/kbench/sm90_protocols.py model-checks both protocols under random interleavings.
/// K is a multiple of 8, the operands 16-byte aligned, their strides multiples of 8
/// elements; rows and columns past M and N read zeros. Every thread of the CTA (384) calls it.
template <class T, int BN, int STAGES, bool B_KMAJOR, bool PINGPONG, int CLUSTER,
          bool MULTICAST = false, int ROWS = 0, class ARows, class TileOf, class Epilogue,
          class Tail = NoTail>
__device__ __forceinline__ void gemm(const ARows &a_rows, long long ldb, int N, int K, int tiles,
                                     const StreamK<Acc<T>> *sk, unsigned char *smem,
                                     TileOf &&tile_of, Epilogue &&epilogue, Tail &&tail = Tail()) {
  // The producer signals K step `it` once it has issued it + LAG: LAG + 1 steps' copies in
  // flight per thread. A consumer frees step it - 1's stage when it starts `it`, so the
  // producer waiting for a free stage has signalled enough steps only while LAG <= STAGES - 2.
  static_assert(STAGES >= 3, "at least three stages");
  static_assert(!PINGPONG || BN <= 160, "a ping-pong warpgroup holds 128 x BN accumulators");
  static_assert(CLUSTER >= 1 && CLUSTER <= 8 && !(PINGPONG && CLUSTER > 1),
                "split-K clusters of 2 to 8 CTAs, with the cooperative schedule");
  static_assert(!MULTICAST || (IsTma<ARows>::value && CLUSTER == 1),
                "B multicast is for the TMA producer, without split-K clusters");
  static_assert(ROWS == 0 || (ROWS <= 8 && !PINGPONG && CLUSTER == 1 && !MULTICAST),
                "rows normalized in clusters of 1 to 8 CTAs, cooperative, without split-K or "
                "multicast");
  // Stream-K (sk) is for the cooperative schedule without clusters (the caller's promise).
#ifdef DLC_SM90_LAG // tuning knob (kbench --define)
  constexpr int LAG = DLC_SM90_LAG;
#else
  constexpr int LAG = STAGES - 2;
#endif
  static_assert(LAG >= 0 && LAG <= STAGES - 2, "LAG outside [0, STAGES - 2]");
  // m64 blocks of the tile per consumer warpgroup, and the warps that free each stage.
  constexpr int MB = PINGPONG ? 2 : 1, READERS = PINGPONG ? 4 : 8;
  Acc<T> *slabs = reinterpret_cast<Acc<T> *>(smem + STAGES * stage_bytes<BN>());
  unsigned char *handover = smem + STAGES * stage_bytes<BN>() + slab_bytes();
  unsigned long long *full =
      reinterpret_cast<unsigned long long *>(handover + handover_bytes<BN, CLUSTER>());
  unsigned long long *empty = full + STAGES;
  // Split-K in a cluster: rank 0's `ready` completes when every other CTA's consumers have
  // handed a tile's sums over; another rank's `freed` when rank 0's have read them.
  unsigned long long *ready = empty + STAGES, *freed = ready + 1;
  // Rows normalized in the kernel: the tiles' two rowdone barriers (tile parity).
  unsigned long long *rowdone = empty + STAGES;
  const int tid = threadIdx.x, wg = tid / 128;
  const int kTiles = (K + bk_elems<T>() - 1) / bk_elems<T>();
  // With TMA one producer thread arrives per stage (its expect_tx), else all 128.
  constexpr bool TMA = IsTma<ARows>::value;
  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&full[s], TMA ? 1 : 128);
      mbar_init(&empty[s], MULTICAST ? 2 * READERS : READERS);
    }
    if (CLUSTER > 1) {
      mbar_init(ready, (CLUSTER - 1) * 256);
      mbar_init(freed, 256);
    }
    if (ROWS > 1) {
      mbar_init(&rowdone[0], ROWS);
      mbar_init(&rowdone[1], ROWS);
    }
    // The initializations ordered before the other CTAs' arrivals (with cluster_sync).
    if (CLUSTER > 1 || MULTICAST || ROWS > 1)
      asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  constexpr bool CLUSTERED = CLUSTER > 1 || MULTICAST || ROWS > 1;
  if (CLUSTERED)
    cluster_sync(); // the barriers initialized before another CTA arrives on them
  // This CTA's tiles: t0, t0 + stride, ... (a cluster's CTAs walk the same ones).
  const int t0 = CLUSTERED ? static_cast<int>(cluster_id()) : static_cast<int>(blockIdx.x);
  const int stride = CLUSTERED ? static_cast<int>(cluster_count()) : static_cast<int>(gridDim.x);
  // B multicast: the peer CTA's `empty` barriers, which this CTA's consumers free too.
  const unsigned rank = MULTICAST ? cluster_rank() : 0u;
  const unsigned peerEmpty = MULTICAST ? cluster_map(smem_addr(empty), rank ^ 1u) : 0u;
  auto release = [&](int s) {
    mbar_arrive(&empty[s]);
    // The stage's reads are wgmma's, complete (wgmma_wait): nothing for the peer to acquire,
    // so the arrival keeps the default (CTA-scope) semantics. Releasing at cluster scope
    // (mbar_arrive_remote) took ViT's 1576x768x768 from 0.0141 to 0.0205 ms (H100, kbench).
    if constexpr (MULTICAST)
      asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(peerEmpty + s * 8)
                   : "memory");
  };
  const unsigned base = smem_addr(smem);
  if (wg == 0) {
    asm volatile("setmaxnreg.dec.sync.aligned.u32 " DLC_SM90_STR(DLC_SM90_PRODUCER_REGS) ";");
    if (TMA && tid != 0)
      return;   // one thread moves each stage
    int it = 0; // K steps issued, over all tiles
    Walk walk(t0, stride, tiles, kTiles, sk);
    for (int t, kt0, kt1, role, lastPeer; walk.next(t, kt0, kt1, role, lastPeer);) {
      Tile<T> x;
      tile_of(t, x);
      if (sk) {
        x.kt0 = kt0;
        x.kt1 = kt1;
      }
      const int kEnd = x.kt1 < kTiles ? x.kt1 : kTiles;
      for (int kt = x.kt0; kt < kEnd; ++kt, ++it) {
        const int s = it % STAGES;
        if (it >= STAGES)
          mbar_wait(&empty[s], ((it / STAGES) - 1) & 1);
        const unsigned sa = base + s * stage_bytes<BN>();
        if constexpr (TMA) {
          tma_stage<T, BN, B_KMAJOR, MULTICAST>(a_rows, x.m0, x.n0, kt, sa, sa + BM * 128, &full[s],
                                                rank);
        } else {
#ifndef DLC_SM90_NO_LOADS // diagnostic knob: the consumers multiply whatever the stages hold
          load_stage<T, BN, B_KMAJOR>(a_rows, x.A, x.B, ldb, N, K, x.m0, x.n0, kt, sa,
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
    }
    if constexpr (!TMA) {
      copies_wait<0>();
      asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
      for (int j = it - LAG < 0 ? 0 : it - LAG; j < it; ++j)
        mbar_arrive(&full[j % STAGES]);
    }
    // B multicast: the CTA stays until both CTAs' consumers have freed its last stages (the
    // peer's arrive on its barriers).
    if constexpr (MULTICAST)
      for (int j = it - STAGES < 0 ? 0 : it - STAGES; j < it; ++j)
        mbar_wait<true>(&empty[j % STAGES], (j / STAGES) & 1);
  } else {
    asm volatile("setmaxnreg.inc.sync.aligned.u32 " DLC_SM90_STR(DLC_SM90_CONSUMER_REGS) ";");
    const int lane = tid % 32, cw = (tid - 128) / 32; // consumer warp 0..7: its slab
    const int c = wg - 1;                             // consumer warpgroup 0, 1
    // Where this warpgroup's rows of A start in a stage, and the tile rows its warps hold.
    const unsigned aOff = PINGPONG ? 0u : c * 64 * 128;
    const int w0 = PINGPONG ? cw % 4 : cw;
    Acc<T> acc[MB][BN / 2];
    int it = 0;   // K steps consumed (by either warpgroup in ping-pong), over all tiles
    int turn = 0; // tiles of this CTA so far
    Walk walk(t0, stride, tiles, kTiles, sk);
    for (int t, kt0, kt1, role, lastPeer; walk.next(t, kt0, kt1, role, lastPeer); ++turn) {
      Tile<T> x;
      tile_of(t, x);
      if (sk) {
        x.kt0 = kt0;
        x.kt1 = kt1;
      }
      const int kEnd = x.kt1 < kTiles ? x.kt1 : kTiles; // at least one step (kt0 < kEnd)
      if (PINGPONG && turn % 2 != c) {                  // the other warpgroup's tile
        it += kEnd - x.kt0;
        continue;
      }
      if (PINGPONG && turn > 0)
        order_wait(1 + c);
#pragma unroll
      for (int mb = 0; mb < MB; ++mb)
#pragma unroll
        for (int i = 0; i < BN / 2; ++i)
          acc[mb][i] = 0;
      for (int kt = x.kt0; kt < kEnd; ++kt, ++it) {
        const int s = it % STAGES;
        mbar_wait(&full[s], (it / STAGES) & 1);
        const unsigned sa = base + s * stage_bytes<BN>(), sb = sa + BM * 128;
        wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) { // 32 bytes of K per wgmma
          const unsigned long long db = B_KMAJOR ? descriptor(sb + kk * 32, 16, 1024)
                                                 : descriptor(sb + kk * 2048, 8192, 1024);
#pragma unroll
          for (int mb = 0; mb < MB; ++mb) {
            const unsigned long long da = descriptor(sa + aOff + mb * 64 * 128 + kk * 32, 16, 1024);
#ifndef DLC_SM90_NO_MMA // diagnostic knob: the pipeline without the math
            wgmma<BN, T, B_KMAJOR ? 0 : 1>(acc[mb], da, db);
#endif
          }
        }
        wgmma_commit();
        wgmma_wait<1>(acc);
        if (kt > x.kt0 && lane == 0)
          release((it - 1) % STAGES);
      }
      // Every stage of this tile has been waited on: the other warpgroup may start its next.
      if (PINGPONG && walk.more())
        order_signal(2 - c);
      wgmma_wait<0>(acc);
      if (lane == 0)
        release((it - 1) % STAGES);
      if constexpr (CLUSTER > 1) {
        // Consumer thread ct's accumulators 4q .. 4q + 3 at (q * 256 + ct) * 16 bytes of the
        // handover buffer: a warp's 16-byte accesses are contiguous.
        const int ct = tid - 128;
        const unsigned mine = smem_addr(handover) + ct * 16;
        if (const unsigned rank = cluster_rank(); rank != 0) {
          if (turn > 0) // rank 0 has read the last tile's
            mbar_wait<true>(freed, (turn - 1) & 1);
#pragma unroll
          for (int q = 0; q < BN / 8; ++q)
            store4(mine + q * 256 * 16, &acc[0][4 * q]);
          mbar_arrive_remote(cluster_map(smem_addr(ready), 0));
          continue; // rank 0 finishes the tile
        }
        mbar_wait<true>(ready, turn & 1);
#pragma unroll 1
        for (int r = 1; r < CLUSTER; ++r) {
          const unsigned theirs = cluster_map(mine, r);
#pragma unroll
          for (int q = 0; q < BN / 8; ++q)
            add_remote4(theirs + q * 256 * 16, &acc[0][4 * q]);
        }
        for (int r = 1; r < CLUSTER; ++r)
          mbar_arrive_remote(cluster_map(smem_addr(freed), r));
      }
      if (sk && role != kWhole) {
        // Consumer thread ct's accumulators 4q .. 4q + 3 at (q * 256 + ct) * 4 of a CTA's
        // partials: a warp's 16-byte accesses are contiguous.
        const int ct = tid - 128;
        if (role == kPeer) { // hand the sums over; the tile's owner finishes it
          Acc<T> *mine = sk->partials + static_cast<long long>(blockIdx.x) * (BM * BN) + ct * 4;
#pragma unroll
          for (int q = 0; q < BN / 8; ++q)
            store_partial4(mine + q * 256 * 4, &acc[0][4 * q]);
          consumers_sync();
          if (ct == 0)
            flag_release(&sk->flags[blockIdx.x]);
          continue;
        }
        // The owner: the peers' sums in CTA order (the same sums every run), then the epilogue.
        if (ct == 0)
          for (int p = blockIdx.x + 1; p <= lastPeer; ++p)
            flag_acquire(&sk->flags[p]);
        consumers_sync();
#pragma unroll 1
        for (int p = blockIdx.x + 1; p <= lastPeer; ++p) {
          const Acc<T> *theirs = sk->partials + static_cast<long long>(p) * (BM * BN) + ct * 4;
#pragma unroll
          for (int q = 0; q < BN / 8; ++q)
            add_partial4(theirs + q * 256 * 4, &acc[0][4 * q]);
        }
        // Zero for the next launch (no CTA of this one sets them again).
        if (ct == 0)
          for (int p = blockIdx.x + 1; p <= lastPeer; ++p)
            sk->flags[p] = 0;
      }
#pragma unroll
      for (int mb = 0; mb < MB; ++mb)
        epilogue(acc[mb], w0 + 4 * mb, lane, x, slabs + cw * (EP_ROWS * EP_PITCH));
      if constexpr (ROWS > 0) {
        // Every consumer's stores of this tile, then one release to the cluster: an arrival
        // on each CTA's barrier of this tile's parity (the stream-K hand-over's pattern).
        // (A CTA whose tile spans the rows only needs its consumers' barrier.)
        consumers_sync();
        if constexpr (ROWS > 1) {
          unsigned long long *done = &rowdone[turn & 1];
          if (tid == 128) {
            asm volatile("fence.acq_rel.cluster;" ::: "memory");
#pragma unroll 1
            for (int r = 0; r < ROWS; ++r)
              mbar_arrive_remote(cluster_map(smem_addr(done), r));
          }
          mbar_wait<true>(done, (turn >> 1) & 1);
        }
        tail(x, cw, lane);
      }
    }
    // A CTA past rank 0 leaves once rank 0 has read its last sums (its shared memory must
    // outlive the reads).
    if constexpr (CLUSTER > 1)
      if (cluster_rank() != 0 && turn > 0)
        mbar_wait<true>(freed, (turn - 1) & 1);
  }
}

} // namespace dlc_sm90
