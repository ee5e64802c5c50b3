#include "ir/annotations/quant_ranges.h"

#include <cmath>
#include <limits>

namespace dlc {

namespace {

constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

/// Two floats per value of `values`, NaN twice where there is no range.
std::vector<float> flatten(const std::vector<Value *> &values, const RangeMap &ranges, bool &any) {
  std::vector<float> out;
  for (const Value *v : values) {
    auto it = v ? ranges.find(v) : ranges.end();
    any = any || it != ranges.end();
    out.push_back(it == ranges.end() ? kNaN : it->second.lo);
    out.push_back(it == ranges.end() ? kNaN : it->second.hi);
  }
  return out;
}

/// Adds the ranges of `flat` (read from annotation `what`) for `values` to `out`.
Status unflatten(const std::vector<Value *> &values, const Attribute &a, const std::string &what,
                 RangeMap &out) {
  if (a.kind() != AttrKind::kFloats)
    return invalidArgument("{}: expected a list of floats", what);
  const std::vector<float> &flat = a.floats();
  if (flat.size() != 2 * values.size())
    return invalidArgument("{}: {} floats for {} value(s), expected two per value", what,
                           flat.size(), values.size());
  for (size_t i = 0; i < values.size(); ++i) {
    const float lo = flat[2 * i], hi = flat[2 * i + 1];
    if (std::isnan(lo) && std::isnan(hi))
      continue;
    if (std::isnan(lo) || std::isnan(hi) || std::isinf(lo) || std::isinf(hi) || lo > hi)
      return invalidArgument("{}: value {} has the range [{}, {}], expected finite lo <= hi", what,
                             i, lo, hi);
    if (values[i])
      out[values[i]] = {lo, hi};
  }
  return Status::ok();
}

} // namespace

void writeRanges(Graph &g, const RangeMap &ranges) {
  bool any = false;
  std::vector<float> inputs = flatten(g.inputs(), ranges, any);
  if (any)
    g.setAnnotation(std::string(kQuantInputRangesAttr), Attribute(std::move(inputs)));
  else
    g.removeAnnotation(kQuantInputRangesAttr);
  for (Node *n : g.nodes()) {
    bool measured = false;
    std::vector<float> flat = flatten(n->outputs(), ranges, measured);
    if (measured)
      n->setAttr(std::string(kQuantRangesAttr), Attribute(std::move(flat)));
    else
      n->removeAttr(kQuantRangesAttr);
  }
}

Expected<RangeMap> readRanges(const Graph &g) {
  RangeMap out;
  if (const Attribute *a = g.findAnnotation(kQuantInputRangesAttr))
    DLC_RETURN_IF_ERROR(unflatten(g.inputs(), *a, "graph annotation 'quant.input_ranges'", out));
  for (const Node *n : g.nodes())
    if (const Attribute *a = n->findAttr(kQuantRangesAttr))
      DLC_RETURN_IF_ERROR(
          unflatten(n->outputs(), *a, n->describe() + ": annotation 'quant.ranges'", out));
  return out;
}

} // namespace dlc
