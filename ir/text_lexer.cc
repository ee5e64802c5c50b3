#include "ir/text_lexer.h"

#include <cctype>

namespace dlc::text {

bool isNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '$' ||
         c == '-';
}

namespace {
bool isDigit(char c) { return c >= '0' && c <= '9'; }
int hexValue(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}
/// `1e`, `-2.5E`: a number's mantissa and exponent mark, so a following `+` belongs to it.
bool endsInExponentMark(std::string_view w) {
  if (w.size() < 2 || (w.back() != 'e' && w.back() != 'E'))
    return false;
  size_t i = w[0] == '-' ? 1 : 0;
  return i < w.size() && (isDigit(w[i]) || w[i] == '.');
}
std::string printableChar(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  if (u < 0x20 || u >= 0x7f)
    return fmt::format("\\x{:02x}", u);
  return std::string(1, c);
}
} // namespace

void Lexer::bump() {
  if (atEnd())
    return;
  if (text_[pos_] == '\n') {
    ++line_;
    col_ = 1;
  } else {
    ++col_;
  }
  ++pos_;
}

void Lexer::skipSpaceAndComments() {
  while (!atEnd()) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      bump();
    } else if (c == '/' && peek(1) == '/') {
      while (!atEnd() && peek() != '\n')
        bump();
    } else {
      return;
    }
  }
}

Status Lexer::fail(int line, int col, std::string msg) {
  errLine_ = line;
  errCol_ = col;
  return invalidArgument("{}", msg);
}

Status Lexer::lexString(Token &tok) {
  int line = line_, col = col_;
  bump(); // opening quote
  std::string out;
  while (true) {
    if (atEnd() || peek() == '\n')
      return fail(line, col, "unterminated string");
    char c = peek();
    if (c == '"') {
      bump();
      break;
    }
    if (c != '\\') {
      out += c;
      bump();
      continue;
    }
    int escLine = line_, escCol = col_;
    char e = peek(1);
    if (e == '"' || e == '\\') {
      out += e;
    } else if (e == 'n') {
      out += '\n';
    } else if (e == 't') {
      out += '\t';
    } else if (e == 'x' && hexValue(peek(2)) >= 0 && hexValue(peek(3)) >= 0) {
      out += static_cast<char>(hexValue(peek(2)) * 16 + hexValue(peek(3)));
      bump();
      bump();
    } else {
      return fail(escLine, escCol,
                  e == 'x' ? "bad escape in string: \\x needs two hex digits"
                           : fmt::format("bad escape '\\{}' in string", printableChar(e)));
    }
    bump();
    bump();
  }
  tok.text = std::move(out);
  tok.quoted = true;
  return Status::ok();
}

void Lexer::lexWord(Token &tok) {
  size_t start = pos_;
  while (!atEnd()) {
    char c = peek();
    std::string_view sofar = text_.substr(start, pos_ - start);
    if (c == '-' && peek(1) == '>')
      break; // `->` is an arrow, never part of a word
    if (isNameChar(c)) {
      bump();
    } else if (c == '+' && isDigit(peek(1)) && endsInExponentMark(sofar)) {
      bump(); // the exponent sign of a number: 1e+10
    } else {
      break;
    }
  }
  // `nan(0x7fc00001)`: a NaN with explicit bits is one token.
  if (text_.substr(start, pos_ - start) == "nan" && peek() == '(') {
    size_t k = 1;
    while (isNameChar(peek(k)))
      ++k;
    if (k > 1 && peek(k) == ')')
      for (size_t i = 0; i <= k; ++i)
        bump();
  }
  tok.text = std::string(text_.substr(start, pos_ - start));
}

Status Lexer::lexName(Token &tok, char sigil) {
  int line = line_, col = col_;
  bump(); // the sigil
  if (peek() == '"')
    return lexString(tok);
  size_t start = pos_;
  while (!atEnd() && isNameChar(peek()) && !(peek() == '-' && peek(1) == '>'))
    bump();
  if (pos_ == start)
    return fail(line, col, fmt::format("expected a name after '{}'", sigil));
  tok.text = std::string(text_.substr(start, pos_ - start));
  return Status::ok();
}

Expected<Token> Lexer::next() {
  skipSpaceAndComments();
  Token tok;
  tok.line = line_;
  tok.col = col_;
  size_t start = pos_;
  if (atEnd()) {
    tok.kind = Tok::kEof;
    return tok;
  }
  char c = peek();
  auto single = [&](Tok k) {
    tok.kind = k;
    bump();
  };
  switch (c) {
  case '(':
    single(Tok::kLParen);
    break;
  case ')':
    single(Tok::kRParen);
    break;
  case '{':
    single(Tok::kLBrace);
    break;
  case '}':
    single(Tok::kRBrace);
    break;
  case '[':
    single(Tok::kLBracket);
    break;
  case ']':
    single(Tok::kRBracket);
    break;
  case '<':
    single(Tok::kLAngle);
    break;
  case '>':
    single(Tok::kRAngle);
    break;
  case ',':
    single(Tok::kComma);
    break;
  case ':':
    single(Tok::kColon);
    break;
  case '=':
    single(Tok::kEquals);
    break;
  case '?':
    single(Tok::kQuestion);
    break;
  case '*':
    single(Tok::kStar);
    break;
  case '"':
    tok.kind = Tok::kString;
    DLC_RETURN_IF_ERROR(lexString(tok));
    break;
  case '%':
  case '@':
    tok.kind = c == '%' ? Tok::kValue : Tok::kAt;
    DLC_RETURN_IF_ERROR(lexName(tok, c));
    break;
  default:
    if (c == '-' && peek(1) == '>') {
      tok.kind = Tok::kArrow;
      bump();
      bump();
    } else if (isNameChar(c)) {
      tok.kind = Tok::kWord;
      lexWord(tok);
    } else {
      return fail(line_, col_, fmt::format("unexpected character '{}'", printableChar(c)));
    }
  }
  tok.spelling = text_.substr(start, pos_ - start);
  return tok;
}

} // namespace dlc::text
