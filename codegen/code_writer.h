// CodeWriter: builds indented C/CUDA source line by line.
//
//     CodeWriter w;
//     w.line("extern \"C\" __global__ void {}(float* out) {{", name);
//     w.indent();
//     w.line("out[0] = 1.0f;");
//     w.dedent();
//     w.line("}}");
//     std::string src = w.str();
#pragma once

#include <fmt/format.h>

#include <string>

namespace dlc::codegen {

class CodeWriter {
public:
  template <typename... Args> void line(fmt::format_string<Args...> f, Args &&...args) {
    out_.append(static_cast<size_t>(indent_) * 2, ' ');
    out_ += fmt::format(f, std::forward<Args>(args)...);
    out_ += '\n';
  }
  void raw(std::string_view text) { out_ += text; }
  void blank() { out_ += '\n'; }
  void indent() { ++indent_; }
  void dedent() { --indent_; }
  const std::string &str() const { return out_; }

private:
  std::string out_;
  int indent_ = 0;
};

} // namespace dlc::codegen
