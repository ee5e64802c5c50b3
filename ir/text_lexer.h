// Tokens of the text IR (ir/TEXT_FORMAT.md) and the lexer that produces them on demand.
#pragma once

#include <string>
#include <string_view>

#include "ir/status.h"

namespace dlc::text {

enum class Tok {
  kEof,
  kWord,     // [A-Za-z0-9_.$-]+: keywords, bare names, numbers, dtypes, `0x..` hex bytes
  kString,   // "...": text holds the decoded contents
  kValue,    // %name or %"name": text holds the name
  kAt,       // @name or @"name": text holds the name
  kLParen,   // (
  kRParen,   // )
  kLBrace,   // {
  kRBrace,   // }
  kLBracket, // [
  kRBracket, // ]
  kLAngle,   // <
  kRAngle,   // >
  kComma,    // ,
  kColon,    // :
  kEquals,   // =
  kQuestion, // ?
  kStar,     // *
  kArrow,    // ->
};

struct Token {
  Tok kind = Tok::kEof;
  /// Decoded text: the word, the string's contents, or the name after `%` / `@`.
  std::string text;
  /// The token as written in the source (for error messages).
  std::string_view spelling;
  int line = 1;
  int col = 1;
  /// A `%` / `@` name or a string written in quotes.
  bool quoted = false;
};

/// Splits text into tokens, one at a time. Whitespace and `//` comments are skipped.
class Lexer {
public:
  explicit Lexer(std::string_view text) : text_(text) {}

  /// The next token, or on malformed input (a stray character, an unterminated string, a
  /// bad escape) an error whose message carries no position: the position is errorLine() and
  /// errorCol().
  Expected<Token> next();
  int errorLine() const { return errLine_; }
  int errorCol() const { return errCol_; }

private:
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  bool atEnd(size_t ahead = 0) const { return pos_ + ahead >= text_.size(); }
  void bump();
  void skipSpaceAndComments();
  Status fail(int line, int col, std::string msg);
  Status lexString(Token &tok);
  void lexWord(Token &tok);
  /// After `%` or `@`: a bare name or a quoted string.
  Status lexName(Token &tok, char sigil);

  std::string_view text_;
  size_t pos_ = 0;
  int line_ = 1;
  int col_ = 1;
  int errLine_ = 0;
  int errCol_ = 0;
};

/// Characters of a bare name: [A-Za-z0-9_.$-].
bool isNameChar(char c);

} // namespace dlc::text
