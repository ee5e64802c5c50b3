// The NonMaxSuppression family: dlc's fixed-size form (attribute slots > 0, which expand-ops
// makes; passes/util/sized_by_data.h): per batch and class, the indices of the selected boxes
// in selection order (-1 past the count) and the count. The variable-length ONNX output is
// built from them by ordinary kernels after a shape point.
//
// A block of 256 threads per (batch, class) line, selecting as the reference
// (ir/eval/nms_eval.cc) does: the next candidate is the first box, by descending score and then
// ascending index, after the last one visited with a score above the threshold (NaN below
// every number), found by each thread over its share of the boxes and a tree over the block;
// it is selected unless its IoU with a box selected before (checked by the threads in turn)
// exceeds the IoU threshold, until the limit. A pick costs boxes / 256 plus a few barriers, so
// a line costs about visited candidates x (boxes / 256 + 10) steps: right for detection heads
// (hundreds to a few thousand boxes); a sort and a bitmask of overlaps would serve much longer
// candidate lists.
#include <fmt/format.h>

#include <algorithm>

#include "codegen/anchor_epilogue.h"
#include "codegen/data_movement_internal.h"
#include "codegen/elementwise_chain.h"
#include "codegen/emitters.h"

namespace dlc::codegen {

namespace {

constexpr int kThreads = 256;

bool claims(const Node *anchor) { return anchor && anchor->op() == Op::kNonMaxSuppression; }

bool supports(const Node &node, std::string *why) {
  if (node.getInt("slots") <= 0) {
    *why = "NonMaxSuppression: only expand-ops' fixed-size form has a GPU kernel (its output "
           "size is the data's)";
    return false;
  }
  for (int i = 0; i < 2; ++i)
    if (!isFloat(node.input(i)->dtype())) {
      *why = fmt::format("NonMaxSuppression: {} boxes or scores have no GPU kernel",
                         dtypeName(node.input(i)->dtype()));
      return false;
    }
  for (int i = 3; i < 5; ++i)
    if (node.hasInput(i) && !isFloat(node.input(i)->dtype())) {
      *why = "NonMaxSuppression: a threshold that is not a float";
      return false;
    }
  return true;
}

Expected<KernelSet> emit(const FusedGroup &group, const EmitOptions &opts) {
  const Node &node = *group.anchor;
  if (group.nodes.size() != 1)
    return invalidArgument("a NonMaxSuppression group is the node alone");
  const std::vector<int64_t> bs = staticSizes(node.input(0)), ss = staticSizes(node.input(1));
  const int64_t classes = ss[1], boxes = bs[1], lines = ss[0] * classes;
  const int64_t slots = node.getInt("slots");
  const bool centerPoint = node.getInt("center_point_box") == 1;
  ParamList params;
  const std::string bn = params.read(node.input(0)), sn = params.read(node.input(1));
  const std::string lim = node.hasInput(2) ? params.read(node.input(2)) : "";
  const std::string iou = node.hasInput(3) ? params.read(node.input(3)) : "";
  const std::string thr = node.hasInput(4) ? params.read(node.input(4)) : "";
  const std::string picked = params.write(node.output(0));
  const std::string counted = node.output(1) ? params.write(node.output(1)) : "";

  CodeWriter body;
  body.line("__shared__ long long bestOf[{}];", kThreads);
  auto lineLoop = body.block("for (long long i = blockIdx.x; i < {}; i += gridDim.x)", lines);
  body.line("const long long batch = i / {};", classes);
  body.line("const long long sBase = i * {}LL, bBase = batch * {}LL;", boxes, boxes * 4);
  body.line("const float iouMax = {};",
            iou.empty() ? "0.0f" : fmt::format("(float)dlc_load({}[0])", iou));
  // Corners of box j: [y1, x1, y2, x2] in either order, or [xc, yc, w, h].
  {
    auto corners = body.blockSemi(
        "auto corners = [&](long long j, float& x0, float& y0, float& x1, float& y1)");
    body.line("const float a = (float)dlc_load({0}[bBase + j * 4]), b = (float)dlc_load({0}[bBase "
              "+ j * 4 + 1]);",
              bn);
    body.line("const float c = (float)dlc_load({0}[bBase + j * 4 + 2]), d = (float)dlc_load({0}"
              "[bBase + j * 4 + 3]);",
              bn);
    if (centerPoint)
      body.line("x0 = a - c / 2; x1 = a + c / 2; y0 = b - d / 2; y1 = b + d / 2;");
    else
      body.line("x0 = fminf(b, d); x1 = fmaxf(b, d); y0 = fminf(a, c); y1 = fmaxf(a, c);");
  }
  {
    auto over = body.blockSemi("auto overlaps = [&](long long p, long long q) -> bool");
    body.line("float ax0, ay0, ax1, ay1, bx0, by0, bx1, by1;");
    body.line("corners(p, ax0, ay0, ax1, ay1);");
    body.line("corners(q, bx0, by0, bx1, by1);");
    body.line("const float ix0 = fmaxf(ax0, bx0), ix1 = fminf(ax1, bx1);");
    body.line("if (ix1 <= ix0) return false;");
    body.line("const float iy0 = fmaxf(ay0, by0), iy1 = fminf(ay1, by1);");
    body.line("if (iy1 <= iy0) return false;");
    body.line("const float inter = (ix1 - ix0) * (iy1 - iy0);");
    body.line("const float areaA = (ax1 - ax0) * (ay1 - ay0), areaB = (bx1 - bx0) * (by1 - by0);");
    body.line("const float uni = areaA + areaB - inter;");
    body.line("if (inter <= 0 || areaA <= 0 || areaB <= 0 || uni <= 0) return false;");
    body.line("return inter / uni > iouMax;");
  }
  // Candidate order: score descending (NaN last), then index ascending.
  {
    auto key = body.blockSemi("auto key = [&](long long j) -> float");
    body.line("const float s = (float)dlc_load({}[sBase + j]);", sn);
    body.line("return s != s ? __int_as_float(0xff800000) : s; // NaN: -inf");
  }
  {
    auto before = body.blockSemi("auto precedes = [&](long long p, long long q) -> bool");
    body.line("if (q < 0) return p >= 0;");
    body.line("if (p < 0) return false;");
    body.line("const float kp = key(p), kq = key(q);");
    body.line("return kp > kq || (kp == kq && p < q);");
  }
  body.line("long long count = 0, prev = -1;");
  // max_output_boxes_per_class, at most the slots (none when absent).
  body.line("const long long limit = {};",
            lim.empty() ? "0"
                        : fmt::format("(long long)dlc_load({0}[0]) < {1}LL ? "
                                      "(long long)dlc_load({0}[0]) : {1}LL",
                                      lim, slots));
  {
    auto pick = body.block("while (count < limit)");
    // The next candidate after prev: each thread's best over its boxes, then the block's.
    body.line("long long best = -1;");
    {
      auto scan = body.block("for (long long j = threadIdx.x; j < {}; j += {})", boxes, kThreads);
      if (!thr.empty())
        body.line("if (!((float)dlc_load({}[sBase + j]) > (float)dlc_load({}[0]))) continue;", sn,
                  thr);
      body.line("if (prev >= 0 && !precedes(prev, j)) continue;");
      body.line("if (precedes(j, best)) best = j;");
    }
    body.line("bestOf[threadIdx.x] = best;");
    body.line("__syncthreads();");
    {
      auto tree = body.block("for (int half = {}; half > 0; half >>= 1)", kThreads / 2);
      body.line("if (threadIdx.x < half && precedes(bestOf[threadIdx.x + half], "
                "bestOf[threadIdx.x]))");
      body.line("  bestOf[threadIdx.x] = bestOf[threadIdx.x + half];");
      body.line("__syncthreads();");
    }
    body.line("best = bestOf[0];");
    body.line("__syncthreads();");
    body.line("if (best < 0) break;");
    body.line("prev = best;");
    // Suppressed when it overlaps a box selected before: the selected ones split among the
    // threads, their findings OR-ed by a tree (no two threads write one shared word).
    body.line("long long mine = 0;");
    body.line("for (long long s = threadIdx.x; s < count && !mine; s += {})", kThreads);
    body.line("  mine = overlaps(best, {}[i * {}LL + s]) ? 1 : 0;", picked, slots);
    body.line("bestOf[threadIdx.x] = mine;");
    body.line("__syncthreads();");
    {
      auto tree = body.block("for (int half = {}; half > 0; half >>= 1)", kThreads / 2);
      body.line("if (threadIdx.x < half) bestOf[threadIdx.x] |= bestOf[threadIdx.x + half];");
      body.line("__syncthreads();");
    }
    body.line("const bool suppressed = bestOf[0] != 0;");
    body.line("if (!suppressed && threadIdx.x == 0) {}[i * {}LL + count] = best;", picked, slots);
    body.line("count += suppressed ? 0 : 1;");
    body.line("__syncthreads();");
  }
  body.line("for (long long s = count + threadIdx.x; s < {}; s += {}) {}[i * {}LL + s] = -1;",
            slots, kThreads, picked, slots);
  if (!counted.empty())
    body.line("if (threadIdx.x == 0) {}[i] = count;", counted);
  body.line("__syncthreads();");
  lineLoop.close();
  Kernel kern;
  kern.name = group.name;
  finishKernel(kern, params, kThreads, body);
  kern.launch.block[0] = kThreads;
  kern.launch.grid[0] =
      static_cast<uint32_t>(std::clamp<int64_t>(lines, 1, int64_t{opts.numSms} * 8));
  return single(std::move(kern));
}

} // namespace

Family nmsFamily() { return {"nms", claims, supports, emit}; }

} // namespace dlc::codegen
