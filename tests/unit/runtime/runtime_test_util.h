// Helpers for the runtime tests: graphs from text, tensors from values, temporary files.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <unistd.h>

#include "ir/parser.h"
#include "passes/pass_manager.h"

namespace dlc::testing {

/// Parses `text` and infers shapes; fails the test on error.
inline std::unique_ptr<Graph> inferredGraph(const std::string &text) {
  auto g = parseGraph(text, "test.dlc");
  EXPECT_TRUE(g) << g.status().message();
  if (!g)
    return nullptr;
  Status st = inferShapes(**g);
  EXPECT_TRUE(st.isOk()) << st.message();
  return std::move(*g);
}

inline Tensor f32Tensor(std::vector<int64_t> shape, std::vector<float> values) {
  return Tensor::fromVector<float>(DType::kF32, std::move(shape), values);
}

inline std::vector<float> f32Values(const Tensor &t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numElements());
}

/// A fresh directory under the system temp dir, removed when the object dies.
class TempDir {
public:
  TempDir() {
    path_ = std::filesystem::temp_directory_path() /
            ("dlc_runtime_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter()++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  std::string file(const std::string &name) const { return (path_ / name).string(); }
  /// Writes `bytes` to `name` and returns its path.
  std::string write(const std::string &name, const std::string &bytes) const {
    std::ofstream out(file(name), std::ios::binary);
    out << bytes;
    return file(name);
  }

private:
  static int &counter() {
    static int c = 0;
    return c;
  }
  std::filesystem::path path_;
};

} // namespace dlc::testing
