// Splitting one big host-side job (a weight scaled, a tensor re-laid) over a few threads:
// compile-time work on weights of tens of megabytes, which `dlc compile` does on every run.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace dlc {

/// Threads for a job of `bytes` over `count` independent parts: one under `threshold` bytes,
/// else up to 8, the machine's cores and `count`.
inline int64_t threadsFor(uint64_t bytes, uint64_t threshold, int64_t count) {
  if (bytes < threshold)
    return 1;
  return std::min<int64_t>({8, count, std::max(1u, std::thread::hardware_concurrency())});
}

/// Runs f(first, last) over [0, count) split into `threads` consecutive ranges, the first on
/// the calling thread; returns when every range is done. Each part must be independent of
/// the others (its own output bytes), so the result does not depend on `threads`.
template <class F> void parallelRanges(int64_t count, int64_t threads, F f) {
  if (threads <= 1) {
    f(int64_t{0}, count);
    return;
  }
  std::vector<std::thread> pool;
  for (int64_t k = 1; k < threads; ++k)
    pool.emplace_back(f, count * k / threads, count * (k + 1) / threads);
  f(int64_t{0}, count / threads);
  for (std::thread &t : pool)
    t.join();
}

} // namespace dlc
