// Fused scaled dot-product attention (flash-attention style), compiled by NVRTC into the
// kernels codegen/attention.cc writes: this file is the whole algorithm; the generated part
// is the entry point with the operands' strides, sizes and scale as constants.
//
// One CTA computes BM = 64 query rows of one (batch, head) with 4 warps, 16 rows each:
//   * Q's 64 x D tile is loaded once; each warp keeps its 16 rows as mma A fragments in
//     registers (D / 16 fragments).
//   * K and V stream through shared memory in tiles of BN = 64 keys, double-buffered: while
//     the warps work on tile t, cp.async brings tile t + 1. Rows past the sequence (and past
//     Sq for Q) are zero-filled.
//   * Per key tile, S = Q Kᵀ (16 x 64 per warp, mma.sync m16n8k16, float accumulators) is
//     scaled into the log2 domain, the mask added (read from global memory through its
//     strides, which are 0 where it broadcasts), keys past Sk and, when causal, keys after the
//     query masked with -inf. The online softmax keeps each row's running max m and sum l:
//     a new max rescales l and the output accumulators by exp2(m_old - m_new).
//   * P = exp2(S - m) goes straight from the S accumulators into A fragments (the m16n8 C
//     layout of two adjacent n-tiles is the m16k16 A layout), rounded to T, and O += P V
//     reads V with ldmatrix.trans. The scores never leave registers.
//   * Work past the sequences is skipped: a warp whose rows all lie past Sq only loads and
//     meets the barriers, and the last key tile multiplies only its 16-key steps that reach a
//     key below Sk, each count its own instantiation of key_tile (ViT's 197 keys end in a tile
//     of 5: one step of four).
//   * At the end each row is divided by its sum (0 / 0 = NaN for a row whose keys are all
//     masked, as the unfused softmax gives) and stored through Y's strides, or handed to the
//     group's epilogue (Y's elementwise consumers fused: its quantization in int8 models).
// Shared memory: Q [BM][D], then two stages of K [BN][D] and V [BN][D]; a row's 16-byte chunk
// c sits at chunk (c ^ (row % 8)) so that ldmatrix's eight rows hit distinct banks (D is 64 or
// 128: 8 or 16 chunks per row).

namespace dlc_attn {

enum : int { BM = 64, BN = 64, WARPS = 4, THREADS = 128 };

/// Element strides of the logical (batch, head, sequence) axes of an operand; the head-size
/// axis is contiguous.
struct Strides {
  long long b, h, s;
};

template <class T, class M> struct Params {
  const T *q, *k, *v;
  T *y;
  const M *mask;            // nullptr: no mask
  Strides qs, ks, vs, ys;   // Y's too
  long long mb, mh, mq, mk; // the mask's strides over [B, Hq, Sq, Sk] (0: broadcast)
  int group;                // query heads per key/value head
  int sq, sk;
  float scale_log2; // scale * log2(e)
};

__device__ __forceinline__ float neg_inf() { return __int_as_float(0xff800000); }

/// Key/value tiles in shared memory: two stages streamed, or all KV_TILES of the sequence
/// resident (attention()'s KV_TILES > 0).
constexpr int kv_buffers(int kv_tiles) { return kv_tiles > 2 ? kv_tiles : 2; }
template <int D, int KV_TILES = 0> constexpr int shared_bytes() {
  return (BM + 2 * kv_buffers(KV_TILES) * BN) * D * 2;
}

/// Waits until at most `pending` of this thread's cp.async groups are in flight (a run-time
/// count that is a constant once the resident loop is unrolled).
template <int MAX> __device__ __forceinline__ void cp_async_wait_upto(int pending) {
  if constexpr (MAX > 0) {
    if (pending >= MAX) {
      dlc_cp_async_wait<MAX>();
      return;
    }
    cp_async_wait_upto<MAX - 1>(pending);
  } else {
    dlc_cp_async_wait<0>();
  }
}

/// Byte offset of 16-byte chunk `c` of row `r` in a tile of D-element rows.
template <int D> __device__ __forceinline__ unsigned chunk_at(int r, int c) {
  return static_cast<unsigned>(r * D * 2 + ((c ^ (r & 7)) << 4));
}

/// Copies `rows` rows (row i at src + i * stride) into a swizzled tile at `dst`; rows at or
/// past `valid` are zero-filled.
template <class T, int D, int ROWS>
__device__ __forceinline__ void load_tile(unsigned dst, const T *src, long long stride, int valid) {
  constexpr int CH = D / 8;
#pragma unroll
  for (int i = threadIdx.x; i < ROWS * CH; i += THREADS) {
    const int r = i / CH, c = i % CH;
    const bool ok = r < valid;
    dlc_cp_async16(dst + chunk_at<D>(r, c), ok ? src + r * stride + c * 8 : src, ok);
  }
}

template <class T> struct Math;
template <> struct Math<__half> {
  static __device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                             unsigned b1) {
    dlc_mma_f16(d, a, b0, b1);
  }
  static __device__ __forceinline__ unsigned pack(float lo, float hi) {
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<unsigned *>(&h);
  }
  static __device__ __forceinline__ float round(float x) { return __half2float(__float2half_rn(x)); }
};
template <> struct Math<__nv_bfloat16> {
  static __device__ __forceinline__ void mma(float (&d)[4], const unsigned (&a)[4], unsigned b0,
                                             unsigned b1) {
    dlc_mma_bf16(d, a, b0, b1);
  }
  static __device__ __forceinline__ unsigned pack(float lo, float hi) {
    __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<unsigned *>(&h);
  }
  static __device__ __forceinline__ float round(float x) {
    return __bfloat162float(__float2bfloat16_rn(x));
  }
};

/// A mask element as the bias it adds (bool: keep or -inf).
__device__ __forceinline__ float bias(float x) { return x; }
__device__ __forceinline__ float bias(__half x) { return __half2float(x); }
__device__ __forceinline__ float bias(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float bias(bool x) { return x ? 0.0f : neg_inf(); }

/// The plain end: Y's elements stored in T through its strides, two to a 32-bit store.
struct StoreY {
  static constexpr bool plain = true;
};

/// A fused epilogue (the quantization of Y, a cast): `f(i, y)` gets each element's offset
/// into Y (through its strides; Y is dense in its logical shape) and its value in float, and
/// stores what the group outputs. `prepare()` loads what it reads once (a scale and its
/// reciprocal); the kernel calls it once its first tiles' loads are in flight.
template <class F, class P> struct Epilogue {
  static constexpr bool plain = false;
  F f;
  P prepare;
};

/// One key tile of the online softmax for a warp's 16 rows: S = Q Kᵀ over the tile's first
/// 16 KC keys (the tile at shared address `stage`, its first key n0), the scale, mask and
/// running max and sum, and O += P V. KC is a template argument so that the last tile of a
/// sequence that is not a multiple of BN (ViT's 197 keys end in a tile of 5) multiplies only
/// the 16-key steps that reach a key below Sk, with the loops still unrolled straight-line.
template <class T, int D, class M, bool CAUSAL, int KC>
__device__ __forceinline__ void key_tile(const Params<T, M> &p, unsigned stage, int n0, int row0,
                                         int b, int h, const unsigned (&qa)[D / 16][4],
                                         float (&o)[D / 8][4], float (&mx)[2], float (&l)[2]) {
  constexpr int KSTEPS = D / 16, DT = D / 8, NT = 2 * KC;
  constexpr unsigned TILE = BN * D * 2;
  const int lane = threadIdx.x % 32;
  // S = Q Kᵀ for this warp's 16 rows and the tile's first 16 KC keys.
  float s[NT][4];
#pragma unroll
  for (int j = 0; j < NT; ++j)
    s[j][0] = s[j][1] = s[j][2] = s[j][3] = 0.0f;
#pragma unroll
  for (int kk = 0; kk < KSTEPS; ++kk)
#pragma unroll
    for (int j = 0; j < NT; j += 2) {
      // Keys 8j .. 8j + 15, head-size chunks 2kk and 2kk + 1: b0/b1 of n-tiles j and j + 1.
      unsigned kb[4];
      const int key = j * 8 + lane % 8 + (lane / 16) * 8;
      dlc_ldmatrix_x4(kb, stage + chunk_at<D>(key, kk * 2 + (lane / 8) % 2));
      Math<T>::mma(s[j], qa[kk], kb[0], kb[1]);
      Math<T>::mma(s[j + 1], qa[kk], kb[2], kb[3]);
    }
  // Scale, mask, and the online softmax over this tile.
  float tmax[2] = {neg_inf(), neg_inf()};
#pragma unroll
  for (int j = 0; j < NT; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = row0 + (e / 2) * 8, key = n0 + j * 8 + (lane % 4) * 2 + e % 2;
      float x = s[j][e] * p.scale_log2;
      if (key >= p.sk || (CAUSAL && key > row)) {
        x = neg_inf();
      } else if (p.mask && row < p.sq) {
        x += bias(p.mask[b * p.mb + h * p.mh + row * p.mq + key * p.mk]) * 1.4426950408889634f;
      }
      s[j][e] = x;
      tmax[e / 2] = fmaxf(tmax[e / 2], x);
    }
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    tmax[r] = fmaxf(tmax[r], __shfl_xor_sync(0xffffffffu, tmax[r], 1));
    tmax[r] = fmaxf(tmax[r], __shfl_xor_sync(0xffffffffu, tmax[r], 2));
    const float m = fmaxf(mx[r], tmax[r]);
    // All keys so far masked: keep 0 as the reference so that exp2 gives 0, not NaN.
    const float ref = m == neg_inf() ? 0.0f : m;
    const float alpha = exp2f(mx[r] - ref);
    mx[r] = m;
    l[r] *= alpha;
#pragma unroll
    for (int j = 0; j < DT; ++j) {
      o[j][2 * r] *= alpha;
      o[j][2 * r + 1] *= alpha;
    }
#pragma unroll
    for (int j = 0; j < NT; ++j) {
      s[j][2 * r] = exp2f(s[j][2 * r] - ref);
      s[j][2 * r + 1] = exp2f(s[j][2 * r + 1] - ref);
      l[r] += s[j][2 * r] + s[j][2 * r + 1];
    }
  }
  // O += P V: keys in k16 steps; P's A fragment is two adjacent n-tiles of S.
#pragma unroll
  for (int kt = 0; kt < KC; ++kt) {
    const unsigned pa[4] = {Math<T>::pack(s[2 * kt][0], s[2 * kt][1]),
                            Math<T>::pack(s[2 * kt][2], s[2 * kt][3]),
                            Math<T>::pack(s[2 * kt + 1][0], s[2 * kt + 1][1]),
                            Math<T>::pack(s[2 * kt + 1][2], s[2 * kt + 1][3])};
#pragma unroll
    for (int j = 0; j < DT; j += 2) {
      // Keys 16kt .. 16kt + 15, head-size chunks j and j + 1, transposed: b0/b1 of the
      // output n-tiles j and j + 1.
      unsigned vb[4];
      const int key = kt * 16 + lane % 8 + ((lane / 8) % 2) * 8;
      dlc_ldmatrix_x4_trans(vb, stage + TILE + chunk_at<D>(key, j + lane / 16));
      Math<T>::mma(o[j], pa, vb[0], vb[1]);
      Math<T>::mma(o[j + 1], pa, vb[2], vb[3]);
    }
  }
}

/// KV_TILES = 0 streams the key/value tiles through two stages; KV_TILES = n (the sequence's
/// ceil(Sk / BN) tiles) loads all of them at the start, one cp.async group per tile, so that
/// the loads of later tiles overlap each other and the work on the first, and no stage is
/// refilled (no barrier after each tile).
template <class T, int D, class M, bool CAUSAL, class E = StoreY, int KV_TILES = 0>
__device__ __forceinline__ void attention(const Params<T, M> &p, unsigned char *smem,
                                          const E &epi = E()) {
  static_assert(D == 64 || D == 128, "head sizes 64 and 128");
  constexpr int KSTEPS = D / 16; // k16 steps of Q Kᵀ
  constexpr int DT = D / 8;      // n8 tiles of the output
  constexpr unsigned TILE = BN * D * 2;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int m0 = blockIdx.x * BM, h = blockIdx.y, b = blockIdx.z, kvh = h / p.group;
  const T *Q = p.q + b * p.qs.b + h * p.qs.h + m0 * p.qs.s;
  const T *K = p.k + b * p.ks.b + kvh * p.ks.h;
  const T *V = p.v + b * p.vs.b + kvh * p.vs.h;
  const unsigned sq = dlc_smem_u32(smem);
  const unsigned sk = sq + BM * D * 2; // stage s: K at sk + 2 s TILE, V at sk + (2 s + 1) TILE
  const int tiles = (p.sk + BN - 1) / BN;

  load_tile<T, D, BM>(sq, Q, p.qs.s, p.sq - m0);
  load_tile<T, D, BN>(sk, K, p.ks.s, p.sk);
  load_tile<T, D, BN>(sk + TILE, V, p.vs.s, p.sk);
  dlc_cp_async_commit();
  if constexpr (KV_TILES > 0) {
#pragma unroll
    for (int t = 1; t < KV_TILES; ++t) {
      const int n0 = t * BN;
      load_tile<T, D, BN>(sk + t * 2 * TILE, K + n0 * p.ks.s, p.ks.s, p.sk - n0);
      load_tile<T, D, BN>(sk + t * 2 * TILE + TILE, V + n0 * p.vs.s, p.vs.s, p.sk - n0);
      dlc_cp_async_commit();
    }
  }
  if constexpr (!E::plain)
    epi.prepare();

  unsigned qa[KSTEPS][4];
  float o[DT][4];
#pragma unroll
  for (int j = 0; j < DT; ++j)
    o[j][0] = o[j][1] = o[j][2] = o[j][3] = 0.0f;
  float mx[2] = {neg_inf(), neg_inf()}, l[2] = {0.0f, 0.0f};
  // This lane's two rows of the warp's 16 (fragment rows lane / 4 and lane / 4 + 8).
  const int row0 = m0 + warp * 16 + lane / 4;

  for (int t = 0; t < tiles; ++t) {
    const unsigned stage = sk + (KV_TILES > 0 ? t : t & 1) * 2 * TILE;
    if constexpr (KV_TILES > 0) {
      cp_async_wait_upto<KV_TILES - 1>(tiles - 1 - t);
    } else if (t + 1 < tiles) {
      const unsigned next = sk + ((t + 1) & 1) * 2 * TILE;
      const int n0 = (t + 1) * BN;
      load_tile<T, D, BN>(next, K + n0 * p.ks.s, p.ks.s, p.sk - n0);
      load_tile<T, D, BN>(next + TILE, V + n0 * p.vs.s, p.vs.s, p.sk - n0);
      dlc_cp_async_commit();
      dlc_cp_async_wait<1>();
    } else {
      dlc_cp_async_wait<0>();
    }
    __syncthreads();
    if (t == 0) {
#pragma unroll
      for (int kk = 0; kk < KSTEPS; ++kk)
        dlc_ldmatrix_x4(qa[kk], sq + chunk_at<D>(warp * 16 + lane % 16, kk * 2 + lane / 16));
    }
    // Warps whose 16 rows all lie past Sq (3 of the last row tile's 4 for ViT's 197 queries)
    // only load and meet the barriers.
    if (m0 + warp * 16 < p.sq) {
      const int n0 = t * BN, steps = (min(p.sk - n0, BN) + 15) / 16;
      if (steps >= BN / 16)
        key_tile<T, D, M, CAUSAL, BN / 16>(p, stage, n0, row0, b, h, qa, o, mx, l);
      else if (steps == 3)
        key_tile<T, D, M, CAUSAL, 3>(p, stage, n0, row0, b, h, qa, o, mx, l);
      else if (steps == 2)
        key_tile<T, D, M, CAUSAL, 2>(p, stage, n0, row0, b, h, qa, o, mx, l);
      else
        key_tile<T, D, M, CAUSAL, 1>(p, stage, n0, row0, b, h, qa, o, mx, l);
    }
    if constexpr (KV_TILES == 0)
      __syncthreads(); // the stage is refilled by the iteration after next's loads
  }
  // Finish: the row sums across the quad, then Y = O / l.
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 1);
    l[r] += __shfl_xor_sync(0xffffffffu, l[r], 2);
    const int row = row0 + r * 8;
    if (row >= p.sq)
      continue;
    const float inv = 1.0f / l[r];
    const long long at = b * p.ys.b + h * p.ys.h + row * p.ys.s + (lane % 4) * 2;
#pragma unroll
    for (int j = 0; j < DT; ++j) {
      if constexpr (E::plain) {
        *reinterpret_cast<unsigned *>(p.y + at + j * 8) =
            Math<T>::pack(o[j][2 * r] * inv, o[j][2 * r + 1] * inv);
      } else {
        // Rounded to T first: the epilogue reads Y as the unfused graph stores it.
        epi.f(at + j * 8, Math<T>::round(o[j][2 * r] * inv));
        epi.f(at + j * 8 + 1, Math<T>::round(o[j][2 * r + 1] * inv));
      }
    }
  }
}

} // namespace dlc_attn
