// The parser of the text IR: names, types, tensor literals and attributes.
#include "ir/parser_impl.h"
#include "ir/tensor_text.h"
#include "ir/text_util.h"

namespace dlc::text {

namespace {
bool isBareName(std::string_view w) {
  if (w.empty())
    return false;
  for (char c : w)
    if (!isNameChar(c))
      return false;
  return true;
}
bool startsLikeIdentifier(std::string_view w) {
  return !w.empty() && (std::isalpha(static_cast<unsigned char>(w[0])) || w[0] == '_');
}
} // namespace

Expected<std::string> Parser::parseName(std::string_view what) {
  if (!at(Tok::kString) && !(at(Tok::kWord) && isBareName(tok_.text)))
    return expected(what);
  std::string name = tok_.text;
  DLC_RETURN_IF_ERROR(advance());
  return name;
}

Expected<TensorType> Parser::parseType() {
  if (at(Tok::kQuestion)) {
    DLC_RETURN_IF_ERROR(advance());
    if (!at(Tok::kLBracket))
      return TensorType();
    DLC_ASSIGN_OR_RETURN(Shape shape, parseShape());
    return TensorType(DType::kUnknown, std::move(shape));
  }
  if (!at(Tok::kWord))
    return expected("a type");
  auto dt = parseDType(tok_.text);
  if (!dt) {
    if (startsLikeIdentifier(tok_.text))
      return errorAt(tok_, fmt::format("unknown dtype '{}'", tok_.text));
    return expected("a type");
  }
  DLC_RETURN_IF_ERROR(advance());
  DLC_ASSIGN_OR_RETURN(Shape shape, parseShape());
  return TensorType(*dt, std::move(shape));
}

Expected<Shape> Parser::parseShape() {
  DLC_RETURN_IF_ERROR(expect(Tok::kLBracket, "'['"));
  if (at(Tok::kStar)) {
    DLC_RETURN_IF_ERROR(advance());
    DLC_RETURN_IF_ERROR(expect(Tok::kRBracket, "']'"));
    return Shape::unranked();
  }
  std::vector<Dim> dims;
  while (!at(Tok::kRBracket)) {
    if (!dims.empty())
      DLC_RETURN_IF_ERROR(expect(Tok::kComma, "',' or ']'"));
    DLC_ASSIGN_OR_RETURN(Dim d, parseDim());
    dims.push_back(std::move(d));
  }
  DLC_RETURN_IF_ERROR(advance());
  return Shape(std::move(dims));
}

Expected<Dim> Parser::parseDim() {
  Dim d;
  if (at(Tok::kQuestion)) {
    d = Dim::unknown();
  } else if (at(Tok::kString) && !tok_.text.empty()) {
    d = Dim::symbol(tok_.text);
  } else if (at(Tok::kWord) && isNumberWord(tok_.text)) {
    auto v = isIntegerWord(tok_.text) ? parseI64(tok_.text) : std::nullopt;
    if (!v || *v < 0)
      return expected("a dimension (a size >= 0, a symbol or '?')");
    d = Dim(*v);
  } else if (at(Tok::kWord) && isBareName(tok_.text) && tok_.text[0] != '.') {
    d = Dim::symbol(tok_.text);
  } else {
    return expected("a dimension");
  }
  DLC_RETURN_IF_ERROR(advance());
  return d;
}

Expected<Tensor> Parser::parseTensor(const std::string &owner) {
  if (!at(Tok::kWord))
    return expected("a tensor type");
  Token typeTok = tok_;
  auto dt = parseDType(tok_.text);
  if (!dt) {
    if (startsLikeIdentifier(tok_.text))
      return errorAt(tok_, fmt::format("unknown dtype '{}'", tok_.text));
    return expected("a tensor type");
  }
  DLC_RETURN_IF_ERROR(advance());
  return parseTensorAfterDType(typeTok, *dt, owner);
}

Expected<Tensor> Parser::parseTensorAfterDType(const Token &typeTok, DType dt,
                                               const std::string &owner) {
  DLC_ASSIGN_OR_RETURN(Shape shape, parseShape());
  TensorType type(dt, std::move(shape));
  if (!type.shape.isStatic())
    return errorAt(typeTok,
                   fmt::format("a tensor literal needs a static shape, got {}", formatType(type)));
  return parseDense(typeTok, type, owner);
}

Expected<Tensor> Parser::parseDense(const Token &typeTok, const TensorType &type,
                                    const std::string &owner) {
  std::vector<int64_t> sizes = type.shape.sizes();
  int64_t bytes = 0;
  auto n = checkedNumElements(sizes, "tensor literal");
  if (!n || __builtin_mul_overflow(*n, dtypeSize(type.dtype), &bytes))
    return errorAt(typeTok, fmt::format("tensor literal type {} is too large", formatType(type)));
  DLC_RETURN_IF_ERROR(expectWord("dense"));
  DLC_RETURN_IF_ERROR(expect(Tok::kLAngle, "'<'"));
  std::vector<uint8_t> data;
  Token body = tok_;
  if (at(Tok::kLBracket)) {
    DLC_RETURN_IF_ERROR(advance());
    int64_t count = 0;
    std::vector<uint8_t> scratch;
    while (!at(Tok::kRBracket)) {
      if (count)
        DLC_RETURN_IF_ERROR(expect(Tok::kComma, "',' or ']'"));
      if (!at(Tok::kWord))
        return expected(fmt::format("{} value", dtypeName(type.dtype)));
      // Values past the type's count are checked but not kept.
      std::vector<uint8_t> &dst = count < *n ? data : scratch;
      scratch.clear();
      Status s = appendElement(type.dtype, tok_.text, dst);
      if (!s)
        return errorAt(tok_, s.message());
      ++count;
      DLC_RETURN_IF_ERROR(advance());
    }
    if (count != *n)
      return errorAt(body, fmt::format("tensor literal has {} values but type {} needs {}", count,
                                       formatType(type), *n));
  } else if (at(Tok::kWord) && tok_.text.starts_with("0x")) {
    Status s = decodeHexBytes(tok_.text, data);
    if (!s)
      return errorAt(tok_, s.message());
    if (static_cast<int64_t>(data.size()) != bytes)
      return errorAt(tok_, fmt::format("tensor literal has {} bytes but type {} needs {}",
                                       data.size(), formatType(type), bytes));
    if (type.dtype == DType::kBool)
      for (uint8_t b : data)
        if (b > 1)
          return errorAt(tok_, fmt::format("bool tensor byte {:#04x} is not 0 or 1", b));
  } else if (atWord("hash")) {
    DLC_RETURN_IF_ERROR(advance());
    DLC_RETURN_IF_ERROR(expect(Tok::kColon, "':'"));
    if (!at(Tok::kString))
      return expected("a hash string");
    const Tensor *known = opts_.resolveConstant ? opts_.resolveConstant(tok_.text) : nullptr;
    if (!known)
      return errorAt(body, fmt::format("{} was printed without its data (hash {}): print it with "
                                       "--print-constants",
                                       owner, tok_.text));
    if (known->dtype() != type.dtype || known->shape() != sizes)
      return errorAt(body, fmt::format("{}: the constant with hash {} is {}, not {}", owner,
                                       tok_.text, formatType(known->type()), formatType(type)));
    Tensor shared = *known;
    DLC_RETURN_IF_ERROR(advance());
    DLC_RETURN_IF_ERROR(expect(Tok::kRAngle, "'>'"));
    return shared;
  } else {
    return expected("'[', hex bytes '0x...' or 'hash:'");
  }
  DLC_RETURN_IF_ERROR(advance());
  DLC_RETURN_IF_ERROR(expect(Tok::kRAngle, "'>'"));
  Tensor t = Tensor::zeros(type.dtype, std::move(sizes));
  if (!data.empty())
    std::memcpy(t.mutableRaw(), data.data(), data.size());
  return t;
}

Expected<Attribute> Parser::parseAttrList() {
  DLC_RETURN_IF_ERROR(advance()); // '['
  if (at(Tok::kRBracket))
    return errorAt(tok_, "an empty list needs its kind: write ints[], floats[] or strings[]");
  enum { kInts, kFloats, kStrings } kind;
  if (at(Tok::kString))
    kind = kStrings;
  else if (at(Tok::kWord) && isFloatWord(tok_.text))
    kind = kFloats;
  else if (at(Tok::kWord) && isIntegerWord(tok_.text))
    kind = kInts;
  else
    return expected("a list element (integer, float or string)");
  std::vector<int64_t> ints;
  std::vector<float> floats;
  std::vector<std::string> strings;
  for (bool first = true; !at(Tok::kRBracket); first = false) {
    if (!first)
      DLC_RETURN_IF_ERROR(expect(Tok::kComma, "',' or ']'"));
    if (kind == kStrings) {
      if (!at(Tok::kString))
        return expected("a string");
      strings.push_back(tok_.text);
    } else if (kind == kFloats) {
      auto f = at(Tok::kWord) && isFloatWord(tok_.text) ? parseF32(tok_.text) : std::nullopt;
      if (!f)
        return expected("a float");
      floats.push_back(*f);
    } else {
      if (!at(Tok::kWord) || !isIntegerWord(tok_.text))
        return expected("an integer");
      auto v = parseI64(tok_.text);
      if (!v)
        return errorAt(tok_, fmt::format("integer {} is out of range for i64", tok_.text));
      ints.push_back(*v);
    }
    DLC_RETURN_IF_ERROR(advance());
  }
  DLC_RETURN_IF_ERROR(advance());
  if (kind == kStrings)
    return Attribute(std::move(strings));
  if (kind == kFloats)
    return Attribute(std::move(floats));
  return Attribute(std::move(ints));
}

Expected<Attribute> Parser::parseAttrValue(const std::string &name) {
  if (at(Tok::kString)) {
    std::string s = tok_.text;
    DLC_RETURN_IF_ERROR(advance());
    return Attribute(std::move(s));
  }
  if (at(Tok::kLBracket))
    return parseAttrList();
  if (atWord("graph")) {
    DLC_ASSIGN_OR_RETURN(std::unique_ptr<Graph> g, parseGraphDef());
    return Attribute(std::move(g));
  }
  if (!at(Tok::kWord))
    return expected("an attribute value");
  Token word = tok_;
  if (isIntegerWord(word.text)) {
    auto v = parseI64(word.text);
    if (!v)
      return errorAt(word, fmt::format("integer {} is out of range for i64", word.text));
    DLC_RETURN_IF_ERROR(advance());
    return Attribute(*v);
  }
  if (isFloatWord(word.text)) {
    auto f = parseF32(word.text);
    if (!f && parseF64(word.text))
      return errorAt(word, fmt::format("float {} is out of range for f32", word.text));
    if (!f)
      return expected("an attribute value");
    DLC_RETURN_IF_ERROR(advance());
    return Attribute(*f);
  }
  if (word.text == "ints" || word.text == "floats" || word.text == "strings") {
    DLC_RETURN_IF_ERROR(advance());
    DLC_RETURN_IF_ERROR(expect(Tok::kLBracket, "'['"));
    DLC_RETURN_IF_ERROR(expect(Tok::kRBracket, "']'"));
    if (word.text == "ints")
      return Attribute(std::vector<int64_t>{});
    if (word.text == "floats")
      return Attribute(std::vector<float>{});
    return Attribute(std::vector<std::string>{});
  }
  if (auto dt = parseDType(word.text)) {
    DLC_RETURN_IF_ERROR(advance());
    if (!at(Tok::kLBracket))
      return Attribute(*dt);
    DLC_ASSIGN_OR_RETURN(Tensor t, parseTensorAfterDType(word, *dt, "attribute '" + name + "'"));
    return Attribute(std::move(t));
  }
  return expected("an attribute value");
}

Status Parser::parseAttrs(AttrMap &attrs) {
  DLC_RETURN_IF_ERROR(advance()); // '{'
  while (true) {
    Token nameTok = tok_;
    DLC_ASSIGN_OR_RETURN(std::string name, parseName("an attribute name"));
    if (attrs.count(name))
      return errorAt(nameTok, fmt::format("duplicate attribute '{}'", name));
    DLC_RETURN_IF_ERROR(expect(Tok::kEquals, "'='"));
    DLC_ASSIGN_OR_RETURN(Attribute a, parseAttrValue(name));
    attrs.emplace(std::move(name), std::move(a));
    if (at(Tok::kRBrace))
      break;
    DLC_RETURN_IF_ERROR(expect(Tok::kComma, "',' or '}'"));
  }
  return advance();
}

} // namespace dlc::text
