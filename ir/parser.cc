// The parser of the text IR: graph structure, statements and nodes. Types, tensor literals
// and attributes are in parser_literals.cc; the grammar is ir/TEXT_FORMAT.md.
#include "ir/parser.h"

#include <climits>
#include <fstream>
#include <sstream>
#include <unordered_set>

#include "ir/file_util.h"
#include "ir/limits.h"
#include "ir/parser_impl.h"
#include "ir/text_util.h"

namespace dlc {
namespace text {

std::string describeToken(const Token &t) {
  if (t.kind == Tok::kEof)
    return "end of input";
  std::string_view s = t.spelling;
  bool cut = s.size() > 40;
  if (cut)
    s = s.substr(0, 37);
  std::string out = "'";
  for (char c : s) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f)
      out += fmt::format("\\x{:02x}", u);
    else
      out += c;
  }
  return out + (cut ? "...'" : "'");
}

Status Parser::advance() {
  auto next = lex_.next();
  if (!next) {
    return invalidArgument("{}:{}:{}: error: {}", file_, lex_.errorLine(), lex_.errorCol(),
                           next.status().message());
  }
  tok_ = std::move(next).value();
  return Status::ok();
}

Status Parser::errorAt(const Token &t, const std::string &msg) const {
  return invalidArgument("{}:{}:{}: error: {}", file_, t.line, t.col, msg);
}

Status Parser::expected(std::string_view what) const {
  return errorAt(tok_, fmt::format("expected {}, got {}", what, describeToken(tok_)));
}

Status Parser::expect(Tok k, std::string_view what) {
  if (!at(k))
    return expected(what);
  return advance();
}

Status Parser::expectWord(std::string_view w) {
  if (!atWord(w))
    return expected(fmt::format("'{}'", w));
  return advance();
}

Status Parser::checkNewValue(const Token &t) const {
  if (t.text.empty())
    return errorAt(t, "value name must not be empty");
  if (g_->findValue(t.text))
    return errorAt(t, fmt::format("redefinition of %{}", formatName(t.text)));
  return Status::ok();
}

Expected<Value *> Parser::useValue(const Token &t) const {
  Value *v = g_->findValue(t.text);
  if (!v)
    return errorAt(t, fmt::format("use of undefined value %{}", formatName(t.text)));
  return v;
}

Expected<std::unique_ptr<Graph>> Parser::parse() {
  DLC_RETURN_IF_ERROR(advance());
  DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, parseGraphDef());
  if (!at(Tok::kEof))
    return expected("end of input");
  return g;
}

Expected<std::unique_ptr<Graph>> Parser::parseGraphDef() {
  // Bodies nest by recursion: past the limit a file would overflow the stack, not parse.
  if (depth_ > kMaxGraphNesting) // depth_: the graphs around this one
    return errorAt(tok_,
                   fmt::format("graph attributes nested more than {} deep", kMaxGraphNesting));
  ++depth_;
  auto g = parseNestedGraph();
  --depth_;
  return g;
}

Expected<std::unique_ptr<Graph>> Parser::parseNestedGraph() {
  // A nested graph (a graph attribute) is a scope of its own: it sees only its own values.
  std::unique_ptr<Graph> outerGraph = std::exchange(g_, std::make_unique<Graph>());
  auto outerOutputs = std::exchange(outputs_, {});
  Status s = parseGraphParts();
  std::unique_ptr<Graph> g = std::exchange(g_, std::move(outerGraph));
  outputs_ = std::move(outerOutputs);
  if (!s)
    return s;
  return g;
}

Status Parser::parseGraphParts() {
  DLC_RETURN_IF_ERROR(parseHeader());
  while (!atWord("return")) {
    if (!at(Tok::kValue) && !atWord("_") && !at(Tok::kEquals))
      return expected("a statement or 'return'");
    DLC_RETURN_IF_ERROR(parseStatement());
  }
  return parseReturn();
}

Status Parser::parseHeader() {
  DLC_RETURN_IF_ERROR(expectWord("graph"));
  if (!at(Tok::kAt))
    return expected("'@' and the graph's name");
  g_->setName(tok_.text);
  DLC_RETURN_IF_ERROR(advance());
  DLC_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  while (!at(Tok::kRParen)) {
    if (!g_->inputs().empty())
      DLC_RETURN_IF_ERROR(expect(Tok::kComma, "',' or ')'"));
    if (!at(Tok::kValue))
      return expected(g_->inputs().empty() ? "an input '%name' or ')'" : "an input '%name'");
    Token name = tok_;
    DLC_RETURN_IF_ERROR(checkNewValue(name));
    DLC_RETURN_IF_ERROR(advance());
    DLC_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
    DLC_ASSIGN_OR_RETURN(TensorType type, parseType());
    g_->addInput(name.text, std::move(type));
  }
  DLC_RETURN_IF_ERROR(advance());
  DLC_RETURN_IF_ERROR(expect(Tok::kArrow, "'->'"));
  DLC_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  while (!at(Tok::kRParen)) {
    if (!outputs_.empty())
      DLC_RETURN_IF_ERROR(expect(Tok::kComma, "',' or ')'"));
    DLC_ASSIGN_OR_RETURN(std::string name, parseName("an output name"));
    DLC_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
    DLC_ASSIGN_OR_RETURN(TensorType type, parseType());
    outputs_.emplace_back(std::move(name), std::move(type));
  }
  DLC_RETURN_IF_ERROR(advance());
  if (atWord("attributes")) {
    DLC_RETURN_IF_ERROR(advance());
    if (!at(Tok::kLBrace))
      return expected("'{' and the graph's annotations");
    Token at = tok_;
    AttrMap annotations;
    DLC_RETURN_IF_ERROR(parseAttrs(annotations));
    for (auto &[name, a] : annotations) {
      if (!isAnnotation(name))
        return errorAt(at, fmt::format("graph attribute '{}' is not an annotation (a name with "
                                       "a '.', such as 'mem.arena')",
                                       name));
      g_->setAnnotation(name, std::move(a));
    }
  }
  return expect(Tok::kLBrace, "'{'");
}

Status Parser::parseStatement() {
  std::vector<Token> results; // kValue tokens, or the word `_` for an absent output
  if (!at(Tok::kEquals)) {
    while (true) {
      if (!at(Tok::kValue) && !atWord("_"))
        return expected("a result '%name' or '_'");
      if (at(Tok::kValue)) {
        DLC_RETURN_IF_ERROR(checkNewValue(tok_));
        for (const Token &r : results)
          if (r.kind == Tok::kValue && r.text == tok_.text)
            return errorAt(tok_, fmt::format("redefinition of %{}", formatName(tok_.text)));
      }
      results.push_back(tok_);
      DLC_RETURN_IF_ERROR(advance());
      if (!at(Tok::kComma))
        break;
      DLC_RETURN_IF_ERROR(advance());
    }
  }
  DLC_RETURN_IF_ERROR(expect(Tok::kEquals, "'='"));
  if (!atWord("constant"))
    return parseNode(std::move(results));
  if (results.size() != 1 || results[0].kind != Tok::kValue)
    return errorAt(tok_, "a constant defines exactly one value");
  DLC_RETURN_IF_ERROR(advance());
  const Token &name = results[0];
  DLC_ASSIGN_OR_RETURN(Tensor data, parseTensor("constant %" + formatName(name.text)));
  g_->addConstant(name.text, std::move(data));
  return Status::ok();
}

std::string Parser::scratchBase(int numOutputs, const std::vector<Token> &results) {
  // createNode names the outputs `base` or `base_i`; they are renamed right after, so they
  // must clash neither with existing values nor with the names about to be given.
  while (true) {
    std::string base = "\x01tmp" + std::to_string(scratchCounter_++);
    bool clash = false;
    for (int i = 0; i < numOutputs && !clash; ++i) {
      std::string n = numOutputs == 1 ? base : base + "_" + std::to_string(i);
      clash = g_->findValue(n) != nullptr;
      for (const Token &r : results)
        clash = clash || (r.kind == Tok::kValue && r.text == n);
    }
    if (!clash)
      return base;
  }
}

Status Parser::parseNode(std::vector<Token> results) {
  if (!at(Tok::kWord))
    return expected("an op name");
  auto op = parseOpName(tok_.text);
  if (!op)
    return errorAt(tok_, fmt::format("unknown op '{}'", tok_.text));
  DLC_RETURN_IF_ERROR(advance());
  DLC_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
  std::vector<Value *> inputs;
  while (!at(Tok::kRParen)) {
    if (!inputs.empty())
      DLC_RETURN_IF_ERROR(expect(Tok::kComma, "',' or ')'"));
    if (atWord("_")) {
      inputs.push_back(nullptr);
    } else if (at(Tok::kValue)) {
      DLC_ASSIGN_OR_RETURN(Value * v, useValue(tok_));
      inputs.push_back(v);
    } else {
      return expected(inputs.empty() ? "an operand '%name', '_' or ')'"
                                     : "an operand '%name' or '_'");
    }
    DLC_RETURN_IF_ERROR(advance());
  }
  DLC_RETURN_IF_ERROR(advance());
  AttrMap attrs;
  if (at(Tok::kLBrace))
    DLC_RETURN_IF_ERROR(parseAttrs(attrs));
  std::vector<TensorType> types;
  if (!results.empty()) {
    DLC_RETURN_IF_ERROR(expect(Tok::kColon, "':' and the result types"));
    for (size_t i = 0; i < results.size(); ++i) {
      if (i)
        DLC_RETURN_IF_ERROR(expect(Tok::kComma, "','"));
      bool absent = results[i].kind != Tok::kValue;
      if (absent) {
        if (!atWord("_"))
          return expected(fmt::format("'_' as the type of absent result {}", i));
        DLC_RETURN_IF_ERROR(advance());
        types.emplace_back();
      } else {
        if (atWord("_"))
          return expected(fmt::format("the type of result {} %{}", i, formatName(results[i].text)));
        DLC_ASSIGN_OR_RETURN(TensorType t, parseType());
        types.push_back(std::move(t));
      }
    }
    if (at(Tok::kComma))
      return errorAt(tok_,
                     fmt::format("more result types than the node's {} results", results.size()));
  }
  Device device;
  if (at(Tok::kAt)) {
    DLC_ASSIGN_OR_RETURN(device, parseDevice());
  }
  std::string loc;
  if (atWord("loc")) {
    DLC_RETURN_IF_ERROR(advance());
    DLC_RETURN_IF_ERROR(expect(Tok::kLParen, "'('"));
    if (!at(Tok::kString))
      return expected("a string");
    loc = tok_.text;
    DLC_RETURN_IF_ERROR(advance());
    DLC_RETURN_IF_ERROR(expect(Tok::kRParen, "')'"));
  }

  if (++nodeCount_ > maxNodes_)
    return errorAt(results.empty() ? tok_ : results.front(),
                   fmt::format("more than {} nodes, the limit (--max-nodes)", maxNodes_));
  int numOutputs = static_cast<int>(results.size());
  Node *n = g_->createNode(*op, std::move(inputs), numOutputs, scratchBase(numOutputs, results));
  n->setName(std::move(loc));
  n->setDevice(device);
  for (auto &[name, attr] : attrs)
    n->setAttr(name, std::move(attr));
  for (int i = 0; i < numOutputs; ++i) {
    const Token &r = results[static_cast<size_t>(i)];
    if (r.kind != Tok::kValue) {
      n->removeOutput(i);
      continue;
    }
    g_->renameValue(n->output(i), r.text);
    n->output(i)->setType(std::move(types[static_cast<size_t>(i)]));
  }
  return Status::ok();
}

Expected<Device> Parser::parseDevice() {
  Token atTok = tok_;
  auto bad = [&] {
    return errorAt(atTok, fmt::format("bad device '{}': expected @cpu or @gpu:N", atTok.text));
  };
  if (atTok.text == "cpu") {
    DLC_RETURN_IF_ERROR(advance());
    return Device::cpu();
  }
  if (atTok.text != "gpu")
    return bad();
  DLC_RETURN_IF_ERROR(advance());
  if (!at(Tok::kColon))
    return bad();
  DLC_RETURN_IF_ERROR(advance());
  auto idx = at(Tok::kWord) ? parseI64(tok_.text) : std::nullopt;
  if (!idx || *idx < 0 || *idx > INT_MAX)
    return expected("a GPU index");
  DLC_RETURN_IF_ERROR(advance());
  return Device::gpu(static_cast<int>(*idx));
}

Status Parser::parseReturn() {
  Token ret = tok_;
  DLC_RETURN_IF_ERROR(advance());
  std::vector<Value *> values;
  while (at(Tok::kValue)) {
    DLC_ASSIGN_OR_RETURN(Value * v, useValue(tok_));
    values.push_back(v);
    DLC_RETURN_IF_ERROR(advance());
    if (!at(Tok::kComma))
      break;
    DLC_RETURN_IF_ERROR(advance());
    if (!at(Tok::kValue))
      return expected("a returned value '%name'");
  }
  if (values.size() != outputs_.size())
    return errorAt(ret, fmt::format("return has {} values but the graph declares {} outputs",
                                    values.size(), outputs_.size()));
  DLC_RETURN_IF_ERROR(
      expect(Tok::kRBrace, values.empty() ? "a value '%name' or '}'" : "',' or '}'"));
  for (size_t i = 0; i < values.size(); ++i)
    g_->addOutput(outputs_[i].first, values[i], outputs_[i].second);
  return Status::ok();
}

} // namespace text

Expected<std::unique_ptr<Graph>> parseGraph(std::string_view text, std::string_view filename) {
  return text::Parser(text, filename).parse();
}

Expected<std::unique_ptr<Graph>> parseGraph(std::string_view text, std::string_view filename,
                                            const ParseOptions &opts) {
  return text::Parser(text, filename, opts).parse();
}

Expected<std::unique_ptr<Graph>> parseGraphFile(const std::string &path) {
  if (Status regular = checkRegularFile(path); !regular.isOk())
    return regular.withContext(path);
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return notFound("cannot open '{}'", path);
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad())
    return notFound("cannot read '{}'", path);
  return parseGraph(ss.str(), path);
}

} // namespace dlc
