// CodeWriter: builds indented C/CUDA source, with scopes that close themselves, a supply of
// unique names, and a record of the prelude helpers the text uses.
//
//     CodeWriter w;
//     {
//       auto fn = w.block("extern \"C\" __global__ void {}(float* out, int n)", "k");
//       const std::string i = w.fresh("i"); // "i0"
//       auto loop = w.block("for (int {0} = threadIdx.x; {0} < n; {0} += blockDim.x)", i);
//       w.line("out[{}] = dlc_relu(out[{}]);", i, i);
//     } // closes the loop, then the function
//     std::string src = w.str();
//     HelperSet helpers = w.requirements(); // dlc_relu: the kernel's prelude (cuda_prelude.h)
//
// writes
//
//     extern "C" __global__ void k(float* out, int n) {
//       for (int i0 = threadIdx.x; i0 < n; i0 += blockDim.x) {
//         out[i0] = dlc_relu(out[i0]);
//       }
//     }
//
// Scopes:
//  * block(head): `head {`, the body one level deeper, `}` when the Scope is destroyed.
//  * blockSemi(head): the same closed by `};` (lambdas, structs: `auto f = [&](int i)`).
//  * lambdaArg(head): closed by `});` (a lambda as a call's last argument); lambdaArgThen(rest,
//    head) by `}, rest);`.
//  * Scope::chain(head): closes the body and opens the next one on the same line, for
//    `} else {` and `} else if (c) {`.
//  * Scope::close(): closes early (a Scope closes once).
//  * indented(): one level deeper with no braces, for a brace-less loop or if body.
// Scopes must close in the reverse order they open (C++ destroys locals that way; a vector of
// scopes is emptied from the back). A body written before its head (a signature that lists the
// parameters the body read) goes in its own writer, which embed() places inside the head's block.
//
// Names: fresh("v") gives v0, v1, ... unique among the names drawn in the blocks still open;
// when a block closes (or chains), the names drawn inside it can be drawn again.
//
// Prelude helpers: every `dlc_*` identifier the writer writes that names a prelude helper is
// recorded (the helpers are all named `dlc_*`, so naming one is using it); require() records
// one explicitly. requirements() is what the kernel's prelude must hold.
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "codegen/cuda_prelude.h"
#include "ir/status.h"

namespace dlc::codegen {

class CodeWriter {
public:
  /// An open block of the writer; destroying it (or close()) dedents and writes the closer.
  class [[nodiscard]] Scope {
  public:
    Scope(Scope &&o) noexcept
        : w_(std::exchange(o.w_, nullptr)), closer_(std::move(o.closer_)),
          fresh_(std::move(o.fresh_)), depth_(o.depth_) {}
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;
    Scope &operator=(Scope &&) = delete;
    ~Scope() { close(); }

    /// `} head {`: closes this block's body and opens the next (else, else if) in its place.
    template <typename... Args> void chain(fmt::format_string<Args...> head, Args &&...args) {
      DLC_CHECK(w_ && w_->indent_ == depth_, "CodeWriter: chain on a closed or outer scope");
      w_->dedent();
      w_->put(fmt::format("}} {} {{", fmt::format(head, std::forward<Args>(args)...)));
      w_->indent();
      w_->fresh_ = fresh_;
    }
    void close() {
      if (!w_)
        return;
      DLC_CHECK(w_->indent_ == depth_, "CodeWriter: scopes closed out of order");
      w_->dedent();
      if (!closer_.empty())
        w_->put(closer_);
      w_->fresh_ = std::move(fresh_); // the block's names went out of scope with it
      w_ = nullptr;
    }

  private:
    friend class CodeWriter;
    Scope(CodeWriter *w, std::string closer)
        : w_(w), closer_(std::move(closer)), fresh_(w->fresh_), depth_(w->indent_ + 1) {
      w_->indent();
    }
    CodeWriter *w_;
    std::string closer_;
    std::map<std::string, int> fresh_; // the name supply when the block opened
    int depth_;                        // the writer's indentation inside the block
  };

  /// Writes one line at the current indentation.
  template <typename... Args> void line(fmt::format_string<Args...> f, Args &&...args) {
    put(fmt::format(f, std::forward<Args>(args)...));
  }
  /// Writes `head {` and opens a scope closed by `}`; an empty head writes a bare `{`.
  template <typename... Args> Scope block(fmt::format_string<Args...> head, Args &&...args) {
    return open(fmt::format(head, std::forward<Args>(args)...), "}");
  }
  /// Writes `head {` and opens a scope closed by `};`.
  template <typename... Args> Scope blockSemi(fmt::format_string<Args...> head, Args &&...args) {
    return open(fmt::format(head, std::forward<Args>(args)...), "};");
  }
  /// Writes `head {` and opens a scope closed by `});`: a lambda, the last argument of a call
  /// that `head` opens (`f(x, [&](int i)`).
  template <typename... Args> Scope lambdaArg(fmt::format_string<Args...> head, Args &&...args) {
    return open(fmt::format(head, std::forward<Args>(args)...), "});");
  }
  /// The same, closed by `}, rest);`: a lambda followed by the call's last argument `rest`.
  template <typename... Args>
  Scope lambdaArgThen(std::string_view rest, fmt::format_string<Args...> head, Args &&...args) {
    return open(fmt::format(head, std::forward<Args>(args)...), fmt::format("}}, {});", rest));
  }
  /// One level deeper, no braces (the body of a brace-less for or if).
  Scope indented() { return Scope(this, ""); }

  /// Text written as is (its own indentation and newlines), e.g. another writer's str().
  void raw(std::string_view text) {
    note(text);
    out_ += text;
  }
  void blank() { out_ += '\n'; }
  /// Another writer's text, each line one level per open block deeper, and its helpers (for a
  /// body written before the head that encloses it, e.g. a signature that needs the parameters
  /// the body read).
  void embed(const CodeWriter &inner) {
    helpers_.merge(inner.helpers_);
    std::string_view text = inner.out_;
    while (!text.empty()) {
      const size_t end = std::min(text.find('\n'), text.size() - 1) + 1;
      if (end > 1)
        out_.append(static_cast<size_t>(indent_) * 2, ' ');
      out_ += text.substr(0, end);
      text.remove_prefix(end);
    }
  }

  /// A name unique among the names fresh() returned in the open blocks: base0, base1, ... in
  /// call order. A block's names are released when it closes (they are out of scope in C++).
  std::string fresh(std::string_view base) {
    int &n = fresh_[std::string(base)];
    return fmt::format("{}{}", base, n++);
  }

  /// Records that the text needs prelude helper `name` (a `dlc_*` identifier it defines).
  void require(std::string_view name) { helpers_.add(name); }
  /// The prelude helpers the text written so far uses (with their dependencies).
  const HelperSet &requirements() const { return helpers_; }

  const std::string &str() const { return out_; }

private:
  Scope open(const std::string &head, std::string closer) {
    put(head.empty() ? "{" : head + " {");
    return Scope(this, std::move(closer));
  }
  void put(std::string_view text) {
    note(text);
    out_.append(static_cast<size_t>(indent_) * 2, ' ');
    out_ += text;
    out_ += '\n';
  }
  void note(std::string_view text) { helpers_.merge(helpersNamedIn(text)); }
  void indent() { ++indent_; }
  void dedent() { --indent_; }

  std::string out_;
  int indent_ = 0;
  std::map<std::string, int> fresh_;
  HelperSet helpers_;
};

} // namespace dlc::codegen
