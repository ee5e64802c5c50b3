// CodeWriter (scopes, fresh names, the helpers a text names) and the prelude's helper list: each
// helper with its dependencies compiles on its own, and the full prelude holds every helper.
#include <gtest/gtest.h>

#include "codegen/code_writer.h"
#include "codegen/cuda_prelude.h"
#include "codegen/nvrtc.h"

namespace dlc::codegen {
namespace {

TEST(CodeWriter, ScopesIndentAndClose) {
  CodeWriter w;
  {
    auto fn = w.block("__global__ void k(float *p, int n)");
    w.line("int i = threadIdx.x;");
    {
      auto check = w.block("if (i < {})", "n");
      w.line("p[i] = 0.f;");
      check.chain("else if (i == {})", "n");
      w.line("p[0] = 1.f;");
      check.chain("else");
      w.line("return;");
    }
    {
      auto f = w.blockSemi("auto f = [&](int j)");
      w.line("return j;");
    }
    w.line("for (int j = 0; j < 2; ++j)");
    auto body = w.indented();
    w.line("p[j] = f(j);");
  }
  {
    auto bare = w.block("");
    w.line("x();");
  }
  EXPECT_EQ(w.str(), "__global__ void k(float *p, int n) {\n"
                     "  int i = threadIdx.x;\n"
                     "  if (i < n) {\n"
                     "    p[i] = 0.f;\n"
                     "  } else if (i == n) {\n"
                     "    p[0] = 1.f;\n"
                     "  } else {\n"
                     "    return;\n"
                     "  }\n"
                     "  auto f = [&](int j) {\n"
                     "    return j;\n"
                     "  };\n"
                     "  for (int j = 0; j < 2; ++j)\n"
                     "    p[j] = f(j);\n"
                     "}\n"
                     "{\n"
                     "  x();\n"
                     "}\n");
}

TEST(CodeWriter, CloseEarlyAndMove) {
  CodeWriter w;
  auto a = w.block("a");
  auto moved = std::move(a);
  w.line("x;");
  moved.close();
  moved.close(); // closes once
  w.line("y;");
  EXPECT_EQ(w.str(), "a {\n  x;\n}\ny;\n");
}

TEST(CodeWriter, EmbedIndentsAnotherWritersText) {
  CodeWriter body;
  {
    auto loop = body.block("for (;;)");
    body.line("v = dlc_relu(v);");
  }
  body.blank();
  CodeWriter w;
  {
    auto fn = w.block("void f()");
    w.embed(body);
  }
  EXPECT_EQ(w.str(), "void f() {\n  for (;;) {\n    v = dlc_relu(v);\n  }\n\n}\n");
  EXPECT_EQ(w.requirements().str(), "dlc_relu");
}

TEST(CodeWriter, FreshNamesAreUniqueInOpenBlocks) {
  CodeWriter w;
  EXPECT_EQ(w.fresh("v"), "v0");
  EXPECT_EQ(w.fresh("v"), "v1");
  EXPECT_EQ(w.fresh("acc"), "acc0");
  {
    auto a = w.block("if (a)");
    EXPECT_EQ(w.fresh("v"), "v2");
    a.chain("else"); // the names of the closed branch are out of scope
    EXPECT_EQ(w.fresh("v"), "v2");
  }
  // ... and so are those of a closed block.
  EXPECT_EQ(w.fresh("v"), "v2");
  EXPECT_EQ(w.fresh("v"), "v3");
}

TEST(CodeWriter, RecordsTheHelpersItsTextNames) {
  CodeWriter w;
  w.line("float y = dlc_mish(dlc_load(x[i]));");
  w.line("extern __shared__ unsigned char dlc_smem[];"); // a kernel's own name
  w.line("my_dlc_abs(y);");                              // not a whole identifier
  w.raw("dlc_vec<float, 4> t;\n");
  w.require("dlc_imax");
  EXPECT_EQ(w.requirements().str(), "dlc_load dlc_softplus dlc_mish dlc_vec dlc_imin");
}

TEST(CudaPrelude, SubsetsFollowDependenciesInListOrder) {
  const HelperSet s = helpersNamedIn("dlc_store2<float>(p, a, b); dlc_float_to_int<int>(x)");
  EXPECT_EQ(s.str(), "dlc_load dlc_limits dlc_float_to_int dlc_store2");
  const std::string text = cudaPrelude(s);
  EXPECT_EQ(text.rfind("// dlc prelude\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n", 0), 0u);
  EXPECT_LT(text.find("template <class T> struct dlc_limits;"), text.find("dlc_float_to_int(F x)"));
  EXPECT_EQ(text.find("dlc_relu"), std::string::npos);
  EXPECT_TRUE(helpersNamedIn("").empty());
  EXPECT_EQ(cudaPrelude(HelperSet()),
            "// dlc prelude\n#include <cuda_fp16.h>\n#include <cuda_bf16.h>\n");
}

TEST(CudaPrelude, FullPreludeHoldsEveryHelper) {
  const HelperSet all = helpersNamedIn(cudaPrelude());
  EXPECT_EQ(cudaPrelude(all), cudaPrelude());
  for (const char *name : {"dlc_load", "dlc_store", "dlc_gelu_tanh", "dlc_imod_floor", "dlc_ipow",
                           "dlc_cp_async_wait", "dlc_mma_tf32", "dlc_store2"}) {
    HelperSet one;
    one.add(name);
    EXPECT_TRUE(all.contains(one)) << name;
  }
}

TEST(CudaPrelude, EveryHelperCompilesWithItsDependenciesAlone) {
  // A helper missing a dependency in the list would not compile without the rest of the
  // prelude; each is compiled alone (with one kernel that names it, so templates are parsed).
  const HelperSet all = helpersNamedIn(cudaPrelude());
  for (const std::string &name : [&] {
         std::vector<std::string> names;
         std::string s = all.str();
         for (size_t at = 0; at < s.size();) {
           const size_t end = std::min(s.find(' ', at), s.size());
           names.push_back(s.substr(at, end - at));
           at = end + 1;
         }
         return names;
       }()) {
    HelperSet one;
    one.add(name);
    auto mod = compileCuda(cudaPrelude(one) + "extern \"C\" __global__ void k() {}\n", name);
    EXPECT_TRUE(mod) << name << ": " << mod.status().message();
  }
}

} // namespace
} // namespace dlc::codegen
