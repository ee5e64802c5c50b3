#include "ir/limits.h"

#include <unistd.h>

#include <atomic>

#include "ir/shape.h"

namespace dlc {

namespace {

std::atomic<int64_t> g_maxTensorBytes{0};
std::atomic<int64_t> g_maxNodes{Limits{}.maxNodes};
std::atomic<int64_t> g_maxLoopIterations{Limits{}.maxLoopIterations};

} // namespace

int64_t physicalMemoryBytes() {
  static const int64_t bytes = [] {
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    int64_t b = 0;
    if (pages <= 0 || page <= 0 || __builtin_mul_overflow(int64_t{pages}, int64_t{page}, &b))
      return int64_t{1} << 40;
    return b;
  }();
  return bytes;
}

Limits limits() {
  Limits l;
  int64_t t = g_maxTensorBytes.load(std::memory_order_relaxed);
  l.maxTensorBytes = t > 0 ? t : physicalMemoryBytes();
  l.maxNodes = g_maxNodes.load(std::memory_order_relaxed);
  l.maxLoopIterations = g_maxLoopIterations.load(std::memory_order_relaxed);
  return l;
}

void setLimits(const Limits &l) {
  g_maxTensorBytes.store(l.maxTensorBytes > 0 ? l.maxTensorBytes : 0, std::memory_order_relaxed);
  g_maxNodes.store(l.maxNodes > 0 ? l.maxNodes : Limits{}.maxNodes, std::memory_order_relaxed);
  g_maxLoopIterations.store(l.maxLoopIterations > 0 ? l.maxLoopIterations
                                                    : Limits{}.maxLoopIterations,
                            std::memory_order_relaxed);
}

Status checkTensorBytes(DType dtype, const std::vector<int64_t> &shape, std::string_view what) {
  int64_t limit = limits().maxTensorBytes;
  int64_t n = 1, bytes = 0;
  bool overflow = false;
  for (int64_t d : shape) {
    if (d < 0)
      return invalidArgument("{} would have a negative dim ({})", what, d);
    overflow |= __builtin_mul_overflow(n, d, &n);
  }
  std::string type = TensorType(dtype, Shape::fromSizes(shape)).str();
  if (overflow || __builtin_mul_overflow(n, static_cast<int64_t>(dtypeSize(dtype)), &bytes))
    return outOfRange("{} would be {}, whose byte size overflows int64", what, type);
  if (bytes > limit)
    return outOfRange("{} would be {} ({} bytes), past the limit of {} bytes per tensor "
                      "(--max-tensor-bytes)",
                      what, type, bytes, limit);
  return Status::ok();
}

Status checkNodeCount(int64_t nodes, std::string_view what) {
  int64_t limit = limits().maxNodes;
  if (nodes > limit)
    return outOfRange("{} has {} nodes, past the limit of {} (--max-nodes)", what, nodes, limit);
  return Status::ok();
}

} // namespace dlc
