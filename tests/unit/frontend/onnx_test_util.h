// Helpers for the ONNX importer tests: build ModelProtos in C++, serialize, import.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "frontend/onnx/importer.h"
#include "ir/verifier.h"
#include "onnx/onnx.pb.h"

namespace dlc::onnx::testing {

/// A dim of a declared type: a size, a symbol ("N"), or "" for neither.
using DimSpec = std::variant<int64_t, std::string>;

/// Null dims: the type has no shape (unknown rank); an empty list is a scalar.
inline void setType(::onnx::ValueInfoProto &vi, int elemType, const std::vector<DimSpec> *dims) {
  auto *tt = vi.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elemType);
  if (!dims)
    return;
  auto *shape = tt->mutable_shape();
  for (const DimSpec &d : *dims) {
    auto *dim = shape->add_dim();
    if (const int64_t *v = std::get_if<int64_t>(&d))
      dim->set_dim_value(*v);
    else if (!std::get<std::string>(d).empty())
      dim->set_dim_param(std::get<std::string>(d));
  }
}

inline void addAttr(::onnx::NodeProto &n, const std::string &name, int64_t v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INT);
  a->set_i(v);
}
inline void addAttr(::onnx::NodeProto &n, const std::string &name, float v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOAT);
  a->set_f(v);
}
inline void addAttr(::onnx::NodeProto &n, const std::string &name, const char *v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::STRING);
  a->set_s(v);
}
inline void addAttr(::onnx::NodeProto &n, const std::string &name, const std::vector<int64_t> &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::INTS);
  for (int64_t x : v)
    a->add_ints(x);
}
inline void addAttr(::onnx::NodeProto &n, const std::string &name, const std::vector<float> &v) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::FLOATS);
  for (float x : v)
    a->add_floats(x);
}
inline void addAttr(::onnx::NodeProto &n, const std::string &name, const ::onnx::TensorProto &t) {
  auto *a = n.add_attribute();
  a->set_name(name);
  a->set_type(::onnx::AttributeProto::TENSOR);
  *a->mutable_t() = t;
}

/// A float tensor proto with its data in raw_data.
inline ::onnx::TensorProto floatTensor(const std::string &name, const std::vector<int64_t> &dims,
                                       const std::vector<float> &values) {
  ::onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(::onnx::TensorProto::FLOAT);
  for (int64_t d : dims)
    t.add_dims(d);
  t.set_raw_data(std::string(reinterpret_cast<const char *>(values.data()), values.size() * 4));
  return t;
}

class ModelBuilder {
public:
  explicit ModelBuilder(int64_t opset = 17, int64_t irVersion = 8) {
    model.set_ir_version(irVersion);
    auto *o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model.mutable_graph()->set_name("g");
  }

  ::onnx::GraphProto &graph() { return *model.mutable_graph(); }

  ::onnx::NodeProto &node(const std::string &type, const std::vector<std::string> &inputs,
                          const std::vector<std::string> &outputs, const std::string &name = "") {
    auto *n = graph().add_node();
    n->set_op_type(type);
    n->set_name(name);
    for (const auto &i : inputs)
      n->add_input(i);
    for (const auto &o : outputs)
      n->add_output(o);
    return *n;
  }
  /// A graph input of unknown rank.
  void input(const std::string &name, int elemType = 1) {
    addValueInfo(graph().add_input(), name, elemType, nullptr);
  }
  void input(const std::string &name, int elemType, const std::vector<DimSpec> &dims) {
    addValueInfo(graph().add_input(), name, elemType, &dims);
  }
  void output(const std::string &name, int elemType = 1) {
    addValueInfo(graph().add_output(), name, elemType, nullptr);
  }
  void output(const std::string &name, int elemType, const std::vector<DimSpec> &dims) {
    addValueInfo(graph().add_output(), name, elemType, &dims);
  }
  void valueInfo(const std::string &name, int elemType, const std::vector<DimSpec> &dims) {
    addValueInfo(graph().add_value_info(), name, elemType, &dims);
  }
  ::onnx::TensorProto &initializer(const ::onnx::TensorProto &t) {
    auto *p = graph().add_initializer();
    *p = t;
    return *p;
  }

  static void addValueInfo(::onnx::ValueInfoProto *vi, const std::string &name, int elemType,
                           const std::vector<DimSpec> *dims) {
    vi->set_name(name);
    setType(*vi, elemType, dims);
  }

  std::string bytes() const { return model.SerializeAsString(); }
  Expected<std::unique_ptr<Graph>> import(const ImportOptions &opts = {}) const {
    return importBytes(bytes(), "", "model.onnx", opts);
  }
  /// Imports and fails the test on error, or if the verifier rejects the imported graph.
  std::unique_ptr<Graph> importOk(const ImportOptions &opts = {}) const {
    auto g = import(opts);
    EXPECT_TRUE(g.hasValue()) << g.status().message();
    if (!g)
      return nullptr;
    Status v = verifyGraph(**g);
    EXPECT_TRUE(v.isOk()) << v.message();
    return std::move(*g);
  }
  /// The import error's message ("" if the import succeeded).
  std::string importError(const ImportOptions &opts = {}) const {
    auto g = import(opts);
    return g ? "" : g.status().message();
  }

  ::onnx::ModelProto model;
};

/// A fresh directory under the system temp dir, removed with everything in it at the end.
class TempDir {
public:
  TempDir() {
    static int counter = 0;
    path_ = std::filesystem::temp_directory_path() /
            ("dlc_onnx_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path &path() const { return path_; }
  std::string file(const std::string &name) const { return (path_ / name).string(); }
  std::string write(const std::string &name, const std::string &bytes) const {
    std::filesystem::create_directories((path_ / name).parent_path());
    std::ofstream(path_ / name, std::ios::binary) << bytes;
    return file(name);
  }

private:
  std::filesystem::path path_;
};

/// The values of a constant (any integer dtype) as int64.
inline std::vector<int64_t> constInts(const Value *v) {
  if (!v || !v->isConstant())
    return {};
  return v->constant().toInt64Vector();
}

/// The node producing the graph value named `name`.
inline Node *producerOf(const Graph &g, const std::string &name) {
  Value *v = g.findValue(name);
  return v ? v->producer() : nullptr;
}

} // namespace dlc::onnx::testing
