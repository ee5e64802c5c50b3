// parse(print(g)) reproduces g, and the parser survives arbitrary damage to its input.
#include <random>

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "tests/unit/ir/text_test_graphs.h"

namespace dlc {
namespace {

PrintOptions withConstants() {
  PrintOptions opts;
  opts.printConstants = true;
  return opts;
}

void expectSameGraph(const Graph &a, const Graph &b) {
  EXPECT_EQ(a.name(), b.name());
  ASSERT_EQ(a.inputs().size(), b.inputs().size());
  for (size_t i = 0; i < a.inputs().size(); ++i) {
    EXPECT_EQ(a.inputs()[i]->name(), b.inputs()[i]->name());
    EXPECT_EQ(a.inputs()[i]->type(), b.inputs()[i]->type());
  }
  ASSERT_EQ(a.constants().size(), b.constants().size());
  for (size_t i = 0; i < a.constants().size(); ++i) {
    EXPECT_EQ(a.constants()[i]->name(), b.constants()[i]->name());
    EXPECT_TRUE(a.constants()[i]->constant().identical(b.constants()[i]->constant()))
        << a.constants()[i]->name();
  }
  std::vector<Node *> na = a.nodes(), nb = b.nodes();
  ASSERT_EQ(na.size(), nb.size());
  for (size_t k = 0; k < na.size(); ++k) {
    EXPECT_EQ(na[k]->op(), nb[k]->op());
    EXPECT_EQ(na[k]->name(), nb[k]->name());
    EXPECT_EQ(na[k]->device(), nb[k]->device());
    EXPECT_EQ(na[k]->attrs(), nb[k]->attrs());
    ASSERT_EQ(na[k]->numInputs(), nb[k]->numInputs());
    for (int i = 0; i < na[k]->numInputs(); ++i) {
      ASSERT_EQ(na[k]->hasInput(i), nb[k]->hasInput(i));
      if (na[k]->hasInput(i)) {
        EXPECT_EQ(na[k]->input(i)->name(), nb[k]->input(i)->name());
      }
    }
    ASSERT_EQ(na[k]->numOutputs(), nb[k]->numOutputs());
    for (int i = 0; i < na[k]->numOutputs(); ++i) {
      ASSERT_EQ(na[k]->output(i) != nullptr, nb[k]->output(i) != nullptr);
      if (na[k]->output(i)) {
        EXPECT_EQ(na[k]->output(i)->name(), nb[k]->output(i)->name());
        EXPECT_EQ(na[k]->output(i)->type(), nb[k]->output(i)->type());
      }
    }
  }
  ASSERT_EQ(a.outputs().size(), b.outputs().size());
  for (size_t i = 0; i < a.outputs().size(); ++i) {
    EXPECT_EQ(a.outputs()[i].name, b.outputs()[i].name);
    EXPECT_EQ(a.outputs()[i].value->name(), b.outputs()[i].value->name());
    EXPECT_EQ(a.outputs()[i].declared, b.outputs()[i].declared);
  }
}

TEST(RoundTrip, RichGraphIsReproducedExactly) {
  auto g = testing::buildRichGraph();
  std::string text = printGraph(*g, withConstants());
  auto parsed = parseGraph(text, "rich.dlc");
  ASSERT_TRUE(parsed.hasValue()) << parsed.status().message() << "\n" << text;
  EXPECT_EQ(printGraph(**parsed, withConstants()), text);
  expectSameGraph(*g, **parsed);
}

TEST(RoundTrip, SmallGraphWithoutPrintConstants) {
  // Constants within the inline limit print their values, so default printing round-trips.
  const char *text = "graph @g(%x: f32[2]) -> (y: f32[2]) {\n"
                     "  %c = constant f16[2] dense<[0.5, nan]>\n"
                     "  %y = add(%x, %c) {k = f32[1] dense<[1.0]>} : f32[2]\n"
                     "  return %y\n"
                     "}\n";
  auto g = parseGraph(text);
  ASSERT_TRUE(g.hasValue()) << g.status().message();
  EXPECT_EQ(printGraph(**g), text);
}

TEST(RoundTrip, ElidedConstantsDoNotReparse) {
  auto g = testing::buildRichGraph();
  auto parsed = parseGraph(printGraph(*g), "elided.dlc");
  ASSERT_FALSE(parsed.hasValue());
  EXPECT_NE(parsed.status().message().find("constant %\"/conv1/weight\" was printed without its "
                                           "data (hash "),
            std::string::npos)
      << parsed.status().message();
}

/// Parses damaged text; whatever parses must print and re-parse to the same text.
void parseDamaged(const std::string &text) {
  auto g = parseGraph(text, "fuzz.dlc");
  if (!g.hasValue()) {
    EXPECT_EQ(g.status().message().rfind("fuzz.dlc:", 0), 0u) << g.status().message();
    return;
  }
  std::string again = printGraph(**g, withConstants());
  auto g2 = parseGraph(again, "again.dlc");
  ASSERT_TRUE(g2.hasValue()) << g2.status().message() << "\n" << again;
  EXPECT_EQ(printGraph(**g2, withConstants()), again);
  VerifyOptions structural;
  structural.checkTypes = false;
  (void)verifyGraph(**g, structural);
}

TEST(RoundTrip, EveryTruncationIsAnErrorNotACrash) {
  auto g = testing::buildRichGraph();
  std::string text = printGraph(*g, withConstants());
  size_t closing = text.rfind('}');
  for (size_t len = 0; len < text.size(); ++len) {
    std::string prefix = text.substr(0, len);
    auto parsed = parseGraph(prefix, "fuzz.dlc");
    if (len <= closing) {
      EXPECT_FALSE(parsed.hasValue()) << "prefix of " << len << " bytes parsed";
    } else {
      EXPECT_TRUE(parsed.hasValue());
    }
  }
}

TEST(RoundTrip, RandomMutationsNeverCrash) {
  auto g = testing::buildRichGraph();
  const std::string text = printGraph(*g, withConstants());
  const std::string alphabet = "%@\"\\()[]{}<>,:=?*_-+.0123456789abcdefxnN /\n\x01\xff";
  std::mt19937 rng(1234);
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  for (int iter = 0; iter < 3000; ++iter) {
    std::string s = text;
    int edits = 1 + static_cast<int>(pick(3));
    for (int e = 0; e < edits; ++e) {
      size_t pos = pick(s.size());
      switch (pick(5)) {
      case 0:
        s[pos] = static_cast<char>(rng());
        break;
      case 1:
        s[pos] = alphabet[pick(alphabet.size())];
        break;
      case 2:
        s.erase(pos, 1 + pick(8));
        break;
      case 3:
        s.insert(pos, 1, alphabet[pick(alphabet.size())]);
        break;
      case 4:
        s.insert(pos, s.substr(pick(s.size()), pick(30)));
        break;
      }
      if (s.empty())
        s = "g";
    }
    parseDamaged(s);
  }
}

} // namespace
} // namespace dlc
