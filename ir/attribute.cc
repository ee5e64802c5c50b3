#include "ir/attribute.h"

#include <bit>

#include "ir/clone.h"

namespace dlc {

GraphAttr::GraphAttr(std::unique_ptr<Graph> g) : g_(std::move(g)) {
  DLC_CHECK(g_ != nullptr, "a graph attribute needs a graph");
}
GraphAttr::GraphAttr(const GraphAttr &o) : g_(o.g_ ? cloneGraph(*o.g_) : nullptr) {}
GraphAttr &GraphAttr::operator=(const GraphAttr &o) {
  if (this != &o)
    g_ = o.g_ ? cloneGraph(*o.g_) : nullptr;
  return *this;
}
GraphAttr::GraphAttr(GraphAttr &&) noexcept = default;
GraphAttr &GraphAttr::operator=(GraphAttr &&) noexcept = default;
GraphAttr::~GraphAttr() = default;

Attribute::Attribute(std::unique_ptr<Graph> g) : v_(GraphAttr(std::move(g))) {}

const char *attrKindName(AttrKind kind) {
  switch (kind) {
  case AttrKind::kInt:
    return "int";
  case AttrKind::kFloat:
    return "float";
  case AttrKind::kString:
    return "string";
  case AttrKind::kInts:
    return "ints";
  case AttrKind::kFloats:
    return "floats";
  case AttrKind::kStrings:
    return "strings";
  case AttrKind::kTensor:
    return "tensor";
  case AttrKind::kDType:
    return "dtype";
  case AttrKind::kGraph:
    return "graph";
  }
  return "?";
}

bool Attribute::operator==(const Attribute &o) const {
  if (kind() != o.kind())
    return false;
  switch (kind()) {
  case AttrKind::kFloat:
    return std::bit_cast<uint32_t>(f()) == std::bit_cast<uint32_t>(o.f());
  case AttrKind::kFloats: {
    if (floats().size() != o.floats().size())
      return false;
    for (size_t k = 0; k < floats().size(); ++k)
      if (std::bit_cast<uint32_t>(floats()[k]) != std::bit_cast<uint32_t>(o.floats()[k]))
        return false;
    return true;
  }
  case AttrKind::kTensor:
    return tensor().identical(o.tensor());
  case AttrKind::kInt:
    return i() == o.i();
  case AttrKind::kString:
    return s() == o.s();
  case AttrKind::kInts:
    return ints() == o.ints();
  case AttrKind::kStrings:
    return strings() == o.strings();
  case AttrKind::kDType:
    return dtype() == o.dtype();
  case AttrKind::kGraph:
    return graph().structurallyEqual(o.graph());
  }
  return false;
}

} // namespace dlc
