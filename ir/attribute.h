// Typed node attributes. A graph attribute owns its graph (the body of If, Loop, Scan).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ir/dtype.h"
#include "ir/tensor.h"

namespace dlc {

class Graph;

enum class AttrKind : uint8_t {
  kInt,
  kFloat,
  kString,
  kInts,
  kFloats,
  kStrings,
  kTensor,
  kDType,
  kGraph,
};

/// "int", "float", "string", "ints", "floats", "strings", "tensor", "dtype", "graph".
const char *attrKindName(AttrKind kind);

/// Attribute names with a '.' (`fuse.group`, `mem.offset`) are annotations that passes attach
/// to nodes for later passes and for the IR dump. They are not op attributes: the op schema
/// ignores them, and the printer and parser carry them like any other attribute.
inline bool isAnnotation(std::string_view name) { return name.find('.') != std::string_view::npos; }

/// The value of a graph attribute: a graph the attribute owns. Copying copies the graph deeply
/// (cloneGraph), so two nodes never share a body.
class GraphAttr {
public:
  explicit GraphAttr(std::unique_ptr<Graph> g);
  GraphAttr(const GraphAttr &o);
  GraphAttr &operator=(const GraphAttr &o);
  GraphAttr(GraphAttr &&) noexcept;
  GraphAttr &operator=(GraphAttr &&) noexcept;
  ~GraphAttr();

  const Graph &graph() const { return *g_; }
  Graph &graph() { return *g_; }

private:
  std::unique_ptr<Graph> g_;
};

class Attribute {
public:
  Attribute() : v_(int64_t{0}) {}
  Attribute(int64_t v) : v_(v) {}
  Attribute(int v) : v_(static_cast<int64_t>(v)) {}
  Attribute(float v) : v_(v) {}
  Attribute(std::string v) : v_(std::move(v)) {}
  Attribute(const char *v) : v_(std::string(v)) {}
  Attribute(std::vector<int64_t> v) : v_(std::move(v)) {}
  Attribute(std::vector<float> v) : v_(std::move(v)) {}
  Attribute(std::vector<std::string> v) : v_(std::move(v)) {}
  Attribute(Tensor v) : v_(std::move(v)) {}
  Attribute(DType v) : v_(v) {}
  /// A graph attribute owning `g` (not null).
  Attribute(std::unique_ptr<Graph> g);

  AttrKind kind() const { return static_cast<AttrKind>(v_.index()); }

  int64_t i() const { return std::get<int64_t>(v_); }
  float f() const { return std::get<float>(v_); }
  const std::string &s() const { return std::get<std::string>(v_); }
  const std::vector<int64_t> &ints() const { return std::get<std::vector<int64_t>>(v_); }
  const std::vector<float> &floats() const { return std::get<std::vector<float>>(v_); }
  const std::vector<std::string> &strings() const { return std::get<std::vector<std::string>>(v_); }
  const Tensor &tensor() const { return std::get<Tensor>(v_); }
  DType dtype() const { return std::get<DType>(v_); }
  const Graph &graph() const { return std::get<GraphAttr>(v_).graph(); }
  Graph &mutableGraph() { return std::get<GraphAttr>(v_).graph(); }

  /// Equal kind and value (tensors compared by bytes; floats bitwise, so NaN == NaN; graphs
  /// structurally, see Graph::structurallyEqual).
  bool operator==(const Attribute &o) const;
  bool operator!=(const Attribute &o) const { return !(*this == o); }

private:
  // Order matches AttrKind.
  std::variant<int64_t, float, std::string, std::vector<int64_t>, std::vector<float>,
               std::vector<std::string>, Tensor, DType, GraphAttr>
      v_;
};

/// Attributes of a node, sorted by name (so printing and hashing are deterministic).
using AttrMap = std::map<std::string, Attribute, std::less<>>;

} // namespace dlc
