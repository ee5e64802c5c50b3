// The recursive-descent parser of the text IR (private to ir/parser.cc and
// ir/parser_literals.cc). One token of lookahead; every error carries FILE:LINE:COL.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "ir/limits.h"
#include "ir/parser.h"
#include "ir/text_lexer.h"

namespace dlc::text {

class Parser {
public:
  Parser(std::string_view text, std::string_view filename, const ParseOptions &opts = {})
      : lex_(text), file_(filename), opts_(opts) {}

  Expected<std::unique_ptr<Graph>> parse();

private:
  // --- Tokens (parser.cc) ---------------------------------------------------------------
  Status advance();
  bool at(Tok k) const { return tok_.kind == k; }
  bool atWord(std::string_view w) const { return tok_.kind == Tok::kWord && tok_.text == w; }
  /// `FILE:LINE:COL: error: msg` at token t.
  Status errorAt(const Token &t, const std::string &msg) const;
  /// `expected <what>, got '<token>'` at the current token.
  Status expected(std::string_view what) const;
  /// Consumes a token of kind k, else `expected <what>`.
  Status expect(Tok k, std::string_view what);
  Status expectWord(std::string_view w);

  // --- Graph structure (parser.cc) --------------------------------------------------------
  /// `graph @name(...) -> (...) { ... }` up to its closing brace, as a graph of its own; the
  /// enclosing graph being parsed (if any) is set aside meanwhile.
  Expected<std::unique_ptr<Graph>> parseGraphDef();
  Expected<std::unique_ptr<Graph>> parseNestedGraph();
  Status parseGraphParts();
  Status parseHeader();
  Status parseStatement();
  Status parseNode(std::vector<Token> results);
  Status parseReturn();
  /// A `%name` being defined: not empty, not defined before.
  Status checkNewValue(const Token &t) const;
  /// The value a `%name` token uses, or an error if it is undefined.
  Expected<Value *> useValue(const Token &t) const;
  Expected<Device> parseDevice();
  /// A base name for createNode whose output names clash with nothing (see parseNode).
  std::string scratchBase(int numOutputs, const std::vector<Token> &results);

  // --- Literals (parser_literals.cc) ----------------------------------------------------
  /// A bare name (a word of name characters) or a quoted string.
  Expected<std::string> parseName(std::string_view what);
  Expected<TensorType> parseType();
  /// The shape after a dtype (or `?`) that has been consumed: `[...]` or `[*]`.
  Expected<Shape> parseShape();
  Expected<Dim> parseDim();
  /// `dtype[dims] dense<...>`; `owner` names the tensor in the elided-data error.
  Expected<Tensor> parseTensor(const std::string &owner);
  /// The rest of a tensor literal once its dtype word `dtypeTok` has been consumed.
  Expected<Tensor> parseTensorAfterDType(const Token &dtypeTok, DType dt, const std::string &owner);
  Expected<Tensor> parseDense(const Token &typeTok, const TensorType &type,
                              const std::string &owner);
  Expected<Attribute> parseAttrValue(const std::string &name);
  Expected<Attribute> parseAttrList();
  Status parseAttrs(AttrMap &attrs);

  Lexer lex_;
  std::string file_;
  ParseOptions opts_;
  /// Graphs being parsed inside graph attributes (the outermost graph is depth 0).
  int depth_ = 0;
  /// Nodes parsed so far, bodies included (checked against ir/limits.h's maxNodes).
  int64_t nodeCount_ = 0;
  int64_t maxNodes_ = limits().maxNodes;
  Token tok_;
  std::unique_ptr<Graph> g_;
  std::vector<std::pair<std::string, TensorType>> outputs_;
  uint64_t scratchCounter_ = 0;
};

/// How a token is quoted in `got ...`: `'tok'` (shortened if long), or `end of input`.
std::string describeToken(const Token &t);

} // namespace dlc::text
