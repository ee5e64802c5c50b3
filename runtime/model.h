// The C++ API for host programs: load a model once, create sessions, run them.
//
//     auto model = dlc::Model::load("model.onnx");          // Expected<Model>
//     if (!model) { print(model.status().message()); ... }
//     auto session = model->createSession();               // Expected<Session>
//     auto outputs = session->run({{"x", x}});             // Expected<map<name, Tensor>>
//
// A Model holds the imported graph after the default pipeline (`defaultPipeline(optLevel)`),
// immutable and shared by its sessions. Sessions are independent and keep no state between
// runs, so any number of them, on any threads, may run at once (so may one session).
// Today every session runs on the CPU reference backend; the GPU backend comes later.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "runtime/reference_executor.h"

namespace dlc {

/// Where a session runs.
enum class Backend : uint8_t {
  kAuto, // the GPU when there is one and the GPU backend is built, else the CPU
  kCpu,  // the reference backend
  kGpu,  // the GPU backend (not built yet)
};

/// Reads a model file into a graph, by file type: `.onnx`/`.pb` through the ONNX importer,
/// `.dlc` (or any text starting with `graph` or a `//` comment) through the text parser. No
/// passes run. Defined in `dlc_model_load`, like Model::load.
Expected<std::unique_ptr<Graph>> loadGraphFile(const std::string &path,
                                               bool keepInitializersAsInputs = false);

struct ModelOptions {
  /// The level of the default pipeline run after loading (0: infer-shapes only).
  int optLevel = 1;
};

struct SessionOptions {
  Backend backend = Backend::kAuto;
};

class Session;

/// A model input or output: its name and (inferred) type; symbolic dims stay symbolic.
struct TensorInfo {
  std::string name;
  TensorType type;
};

class Model {
public:
  /// Loads `.onnx`/`.pb` (ONNX) or `.dlc` (text IR; also any file that starts with `graph` or
  /// a `//` comment) and runs the default pipeline. Defined in the `dlc_model_load` library,
  /// which links the ONNX importer (protobuf); `dlc_runtime` alone stays protobuf-free.
  static Expected<Model> load(const std::string &path, const ModelOptions &opts = {});
  /// A model over a graph built or loaded by the caller; runs the default pipeline on it.
  /// `displayName` prefixes pipeline errors.
  static Expected<Model> fromGraph(std::unique_ptr<Graph> graph, const ModelOptions &opts = {},
                                   const std::string &displayName = "");

  const std::vector<TensorInfo> &inputs() const { return inputs_; }
  const std::vector<TensorInfo> &outputs() const { return outputs_; }
  /// The graph after the pipeline (read-only: sessions share it).
  const Graph &graph() const { return *graph_; }

  /// A session on the chosen backend. Fails when a node's op has no reference evaluation
  /// (naming every such op) or when the GPU backend is asked for.
  Expected<Session> createSession(const SessionOptions &opts = {}) const;

private:
  explicit Model(std::shared_ptr<const Graph> graph);

  std::shared_ptr<const Graph> graph_;
  std::vector<TensorInfo> inputs_;
  std::vector<TensorInfo> outputs_;
};

class Session {
public:
  /// Runs the model. Inputs by name; outputs by their public names. Errors name the input or
  /// node at fault (see ReferenceExecutor::run).
  Expected<std::map<std::string, Tensor>> run(const std::map<std::string, Tensor> &inputs) const;
  /// The same, with outputs in the model's order.
  Expected<std::vector<NamedTensor>> runOrdered(const std::map<std::string, Tensor> &inputs) const;

  Backend backend() const { return Backend::kCpu; }

private:
  friend class Model;
  Session(std::shared_ptr<const Graph> graph, ReferenceExecutor executor)
      : graph_(std::move(graph)), executor_(std::move(executor)) {}

  std::shared_ptr<const Graph> graph_; // keeps the executor's graph alive
  ReferenceExecutor executor_;
};

} // namespace dlc
