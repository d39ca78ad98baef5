// See lexer.h. The preprocessing passes rewrite the source the way the
// reference's regular expressions do, while carrying a per-byte map back to
// original offsets.
#include "jinja/lexer.h"

#include <algorithm>
#include <limits>

#include "jinja/js_string.h"

namespace mneme::jinja {

namespace {

struct Mapped {
  std::string text;
  std::vector<uint32_t> origin;  // origin[i]: offset in the original source

  void Push(char c, uint32_t from) {
    text.push_back(c);
    origin.push_back(from);
  }
};

bool IsLineTerminatorAt(std::string_view s, size_t i) {  // JS `^` with /m
  if (s[i] == '\n' || s[i] == '\r') return true;
  return i + 2 < s.size() && static_cast<unsigned char>(s[i]) == 0xE2 &&
         static_cast<unsigned char>(s[i + 1]) == 0x80 &&
         (static_cast<unsigned char>(s[i + 2]) == 0xA8 ||
          static_cast<unsigned char>(s[i + 2]) == 0xA9);
}

// /^[ \t]*({[#%-])/gm -> "$1"
Mapped LstripBlocks(const Mapped& in) {
  Mapped out;
  const std::string& s = in.text;
  bool line_start = true;
  size_t i = 0;
  while (i < s.size()) {
    if (line_start) {
      size_t j = i;
      while (j < s.size() && (s[j] == ' ' || s[j] == '\t')) ++j;
      if (j + 1 < s.size() && s[j] == '{' &&
          (s[j + 1] == '#' || s[j + 1] == '%' || s[j + 1] == '-')) {
        i = j;
      }
    }
    // A multi-byte terminator ends its line after its last byte.
    if (IsLineTerminatorAt(s, i) && static_cast<unsigned char>(s[i]) == 0xE2) {
      for (int k = 0; k < 3; ++k) out.Push(s[i + k], in.origin[i + k]);
      i += 3;
      line_start = true;
      continue;
    }
    line_start = IsLineTerminatorAt(s, i);
    out.Push(s[i], in.origin[i]);
    ++i;
  }
  return out;
}

// /([#%-]})\n/g -> "$1"
Mapped TrimBlocks(const Mapped& in) {
  Mapped out;
  const std::string& s = in.text;
  size_t i = 0;
  while (i < s.size()) {
    if (i + 2 < s.size() && (s[i] == '#' || s[i] == '%' || s[i] == '-') && s[i + 1] == '}' &&
        s[i + 2] == '\n') {
      out.Push(s[i], in.origin[i]);
      out.Push(s[i + 1], in.origin[i + 1]);
      i += 3;
      continue;
    }
    out.Push(s[i], in.origin[i]);
    ++i;
  }
  return out;
}

size_t SkipJsSpaces(std::string_view s, size_t i) {
  while (i < s.size()) {
    size_t next = i;
    if (!IsJsSpace(DecodeUtf8(s, &next))) break;
    i = next;
  }
  return i;
}

// If a generation tag starts at `i`, returns its end and whether it has the
// leading / trailing `-`.
bool MatchGenerationTag(std::string_view s, size_t i, size_t* end, bool* lstrip, bool* rstrip) {
  if (s.substr(i, 2) != "{%") return false;
  size_t p = i + 2;
  *lstrip = p < s.size() && s[p] == '-';
  if (*lstrip) ++p;
  p = SkipJsSpaces(s, p);
  if (s.substr(p, 3) == "end") p += 3;
  if (s.substr(p, 10) != "generation") return false;
  p = SkipJsSpaces(s, p + 10);
  *rstrip = p < s.size() && s[p] == '-';
  if (*rstrip) ++p;
  if (s.substr(p, 2) != "%}") return false;
  *end = p + 2;
  return true;
}

// /(\s*){%(-?)\s*(?:end)?generation\s*(-?)%}(\s*)/gs
Mapped StripGenerationTags(const Mapped& in) {
  Mapped out;
  const std::string& s = in.text;
  size_t protect = 0;  // output before this belongs to an earlier match
  size_t i = 0;
  while (i < s.size()) {
    size_t end = 0;
    bool lstrip = false;
    bool rstrip = false;
    if (s[i] == '{' && MatchGenerationTag(s, i, &end, &lstrip, &rstrip)) {
      if (lstrip) {
        // Drop the run of whitespace that precedes the tag.
        size_t keep = protect;
        size_t k = protect;
        while (k < out.text.size()) {
          size_t next = k;
          if (!IsJsSpace(DecodeUtf8(out.text, &next))) keep = next;
          k = next;
        }
        out.text.resize(keep);
        out.origin.resize(keep);
      }
      i = end;
      const size_t after = SkipJsSpaces(s, i);
      if (!rstrip) {
        for (size_t k = i; k < after; ++k) out.Push(s[k], in.origin[k]);
      }
      i = after;
      protect = out.text.size();
      continue;
    }
    out.Push(s[i], in.origin[i]);
    ++i;
  }
  return out;
}

Mapped Preprocess(std::string_view source) {
  Mapped m;
  m.text.assign(source);
  m.origin.resize(source.size());
  for (size_t i = 0; i < source.size(); ++i) m.origin[i] = static_cast<uint32_t>(i);
  if (!m.text.empty() && m.text.back() == '\n') {
    m.text.pop_back();
    m.origin.pop_back();
  }
  return StripGenerationTags(TrimBlocks(LstripBlocks(m)));
}

bool IsDigit(char c) {
  return c >= '0' && c <= '9';
}
bool IsWordChar(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

struct Rule {
  std::string_view seq;
  TokenType type;
};

// Longest-first where prefixes collide, as the reference's ordered table.
constexpr Rule kRules[] = {
    {"{%", TokenType::kOpenStatement},  {"%}", TokenType::kCloseStatement},
    {"{{", TokenType::kOpenExpression}, {"}}", TokenType::kCloseExpression},
    {"(", TokenType::kOpenParen},       {")", TokenType::kCloseParen},
    {"{", TokenType::kOpenCurly},       {"}", TokenType::kCloseCurly},
    {"[", TokenType::kOpenSquare},      {"]", TokenType::kCloseSquare},
    {",", TokenType::kComma},           {".", TokenType::kDot},
    {":", TokenType::kColon},           {"|", TokenType::kPipe},
    {"<=", TokenType::kComparison},     {">=", TokenType::kComparison},
    {"==", TokenType::kComparison},     {"!=", TokenType::kComparison},
    {"<", TokenType::kComparison},      {">", TokenType::kComparison},
    {"+", TokenType::kAdditive},        {"-", TokenType::kAdditive},
    {"~", TokenType::kAdditive},        {"**", TokenType::kPower},
    {"*", TokenType::kMultiplicative},  {"//", TokenType::kMultiplicative},
    {"/", TokenType::kMultiplicative},  {"%", TokenType::kMultiplicative},
    {"=", TokenType::kEquals},
};

class Lexer {
 public:
  Lexer(std::string_view source, Mapped m) : source_(source), m_(std::move(m)), s_(m_.text) {}

  Result<std::vector<Token>> Run() {
    while (pos_ < s_.size()) {
      MNEME_RETURN_IF_ERROR(Step());
    }
    return std::move(tokens_);
  }

 private:
  uint32_t Origin(size_t i) const {
    if (i < m_.origin.size()) return m_.origin[i];
    return static_cast<uint32_t>(source_.size());
  }
  Status Error(size_t at, const std::string& msg) const {
    return InvalidArgument("template " + FormatPosition(source_, Origin(at)) +
                           ": syntax error: " + msg);
  }
  void Push(TokenType type, std::string value, size_t at) {
    tokens_.push_back(Token{type, std::move(value), Origin(at)});
  }
  bool LastIs(std::initializer_list<TokenType> types) const {
    if (tokens_.empty()) return false;
    return std::find(types.begin(), types.end(), tokens_.back().type) != types.end();
  }
  bool At(std::string_view seq) const { return s_.substr(pos_, seq.size()) == seq; }

  void StripTrailingWhitespace() {
    if (!tokens_.empty() && tokens_.back().type == TokenType::kText) {
      std::string& v = tokens_.back().value;
      v.resize(JsTrimEnd(v).size());
      if (v.empty()) tokens_.pop_back();
    }
  }
  void SkipLeadingWhitespace() { pos_ = SkipJsSpaces(s_, pos_); }

  Status Step();
  Status LexString(char quote);
  Status LexComment();
  Status LexDigits(std::string* out);

  std::string_view source_;
  Mapped m_;
  std::string_view s_;
  size_t pos_ = 0;
  int curly_depth_ = 0;
  std::vector<Token> tokens_;
};

Status Lexer::LexComment() {
  const size_t start = pos_;
  pos_ += 2;
  const bool strip_before = pos_ < s_.size() && s_[pos_] == '-';
  if (strip_before) ++pos_;
  const size_t close = s_.find("#}", pos_);
  if (close == std::string_view::npos) return Error(start, "missing end of comment tag");
  std::string comment(s_.substr(pos_, close - pos_));
  const bool strip_after = !comment.empty() && comment.back() == '-';
  if (strip_after) comment.pop_back();
  if (strip_before) StripTrailingWhitespace();
  Push(TokenType::kComment, std::move(comment), start);
  pos_ = close + 2;
  if (strip_after) SkipLeadingWhitespace();
  return Status::Ok();
}

Status Lexer::LexString(char quote) {
  const size_t start = pos_;
  ++pos_;
  std::string value;
  while (true) {
    if (pos_ >= s_.size()) return Error(start, "unterminated string literal");
    const char c = s_[pos_];
    if (c == quote) break;
    if (c != '\\') {
      value.push_back(c);
      ++pos_;
      continue;
    }
    if (pos_ + 1 >= s_.size()) return Error(start, "unterminated string literal");
    const char e = s_[pos_ + 1];
    pos_ += 2;
    if (e == 'x' || e == 'u') {
      const size_t len = e == 'x' ? 2 : 4;
      const std::string_view hex = s_.substr(pos_, len);
      const bool ok = hex.size() == len && std::all_of(hex.begin(), hex.end(), [](char h) {
                        return IsDigit(h) || (h >= 'a' && h <= 'f') || (h >= 'A' && h <= 'F');
                      });
      if (!ok) return Error(pos_, "invalid hexadecimal escape sequence");
      const auto cp = static_cast<char32_t>(std::stoul(std::string(hex), nullptr, 16));
      // A lone surrogate cannot be UTF-8; write U+FFFD as JS would on output.
      AppendUtf8(cp >= 0xD800 && cp <= 0xDFFF ? 0xFFFD : cp, &value);
      pos_ += len;
      continue;
    }
    switch (e) {
      case 'n': value.push_back('\n'); break;
      case 't': value.push_back('\t'); break;
      case 'r': value.push_back('\r'); break;
      case 'b': value.push_back('\b'); break;
      case 'f': value.push_back('\f'); break;
      case 'v': value.push_back('\v'); break;
      case '\'': value.push_back('\''); break;
      case '"': value.push_back('"'); break;
      case '\\': value.push_back('\\'); break;
      default: return Error(pos_ - 2, std::string("unexpected escaped character: ") + e);
    }
  }
  ++pos_;  // closing quote
  Push(TokenType::kString, std::move(value), start);
  return Status::Ok();
}

Status Lexer::LexDigits(std::string* out) {
  while (pos_ < s_.size() && IsDigit(s_[pos_])) out->push_back(s_[pos_++]);
  return Status::Ok();
}

Status Lexer::Step() {
  if (tokens_.empty() ||
      LastIs({TokenType::kCloseStatement, TokenType::kCloseExpression, TokenType::kComment})) {
    const size_t start = pos_;
    while (pos_ < s_.size() &&
           !(s_[pos_] == '{' && pos_ + 1 < s_.size() &&
             (s_[pos_ + 1] == '%' || s_[pos_ + 1] == '{' || s_[pos_ + 1] == '#'))) {
      ++pos_;
    }
    if (pos_ > start) {
      Push(TokenType::kText, std::string(s_.substr(start, pos_ - start)), start);
      return Status::Ok();
    }
  }
  if (At("{#")) return LexComment();
  if (At("{%-") || At("{{-")) {
    StripTrailingWhitespace();
    const bool statement = s_[pos_ + 1] == '%';
    Push(statement ? TokenType::kOpenStatement : TokenType::kOpenExpression,
         statement ? "{%" : "{{", pos_);
    if (!statement) curly_depth_ = 0;
    pos_ += 3;
    return Status::Ok();
  }
  SkipLeadingWhitespace();
  if (pos_ >= s_.size()) return Error(pos_, "unexpected end of input");
  if (At("-%}") || At("-}}")) {
    const bool statement = s_[pos_ + 1] == '%';
    Push(statement ? TokenType::kCloseStatement : TokenType::kCloseExpression,
         statement ? "%}" : "}}", pos_);
    pos_ += 3;
    SkipLeadingWhitespace();
    return Status::Ok();
  }
  const char c = s_[pos_];
  if (c == '-' || c == '+') {
    if (tokens_.empty() || LastIs({TokenType::kText})) {
      return Error(pos_, std::string("unexpected character: ") + c);
    }
    if (!LastIs({TokenType::kIdentifier, TokenType::kNumber, TokenType::kString,
                 TokenType::kCloseParen, TokenType::kCloseSquare})) {
      const size_t start = pos_;
      ++pos_;
      std::string num;
      MNEME_RETURN_IF_ERROR(LexDigits(&num));
      if (!num.empty() && pos_ + 1 < s_.size() && s_[pos_] == '.' && IsDigit(s_[pos_ + 1])) {
        ++pos_;
        num.push_back('.');
        MNEME_RETURN_IF_ERROR(LexDigits(&num));
      }
      Push(num.empty() ? TokenType::kUnary : TokenType::kNumber, std::string(1, c) + num, start);
      return Status::Ok();
    }
  }
  for (const Rule& rule : kRules) {
    if (rule.seq == "}}" && curly_depth_ > 0) continue;
    if (!At(rule.seq)) continue;
    Push(rule.type, std::string(rule.seq), pos_);
    if (rule.type == TokenType::kOpenExpression) curly_depth_ = 0;
    if (rule.type == TokenType::kOpenCurly) ++curly_depth_;
    if (rule.type == TokenType::kCloseCurly) --curly_depth_;
    pos_ += rule.seq.size();
    return Status::Ok();
  }
  if (c == '\'' || c == '"') return LexString(c);
  if (IsDigit(c)) {
    const size_t start = pos_;
    std::string num;
    MNEME_RETURN_IF_ERROR(LexDigits(&num));
    if (!LastIs({TokenType::kDot}) && pos_ + 1 < s_.size() && s_[pos_] == '.' &&
        IsDigit(s_[pos_ + 1])) {
      ++pos_;
      num.push_back('.');
      MNEME_RETURN_IF_ERROR(LexDigits(&num));
    }
    Push(TokenType::kNumber, std::move(num), start);
    return Status::Ok();
  }
  if (IsWordChar(c)) {
    const size_t start = pos_;
    while (pos_ < s_.size() && IsWordChar(s_[pos_])) ++pos_;
    Push(TokenType::kIdentifier, std::string(s_.substr(start, pos_ - start)), start);
    return Status::Ok();
  }
  size_t end = pos_;
  DecodeUtf8(s_, &end);
  return Error(pos_, "unexpected character: " + std::string(s_.substr(pos_, end - pos_)));
}

}  // namespace

std::string_view TokenTypeName(TokenType t) {
  static constexpr std::string_view kNames[] = {"Text",
                                                "NumericLiteral",
                                                "StringLiteral",
                                                "Identifier",
                                                "Equals",
                                                "OpenParen",
                                                "CloseParen",
                                                "OpenStatement",
                                                "CloseStatement",
                                                "OpenExpression",
                                                "CloseExpression",
                                                "OpenSquareBracket",
                                                "CloseSquareBracket",
                                                "OpenCurlyBracket",
                                                "CloseCurlyBracket",
                                                "Comma",
                                                "Dot",
                                                "Colon",
                                                "Pipe",
                                                "AdditiveBinaryOperator",
                                                "MultiplicativeBinaryOperator",
                                                "ExponentiationBinaryOperator",
                                                "ComparisonBinaryOperator",
                                                "UnaryOperator",
                                                "Comment"};
  return kNames[static_cast<size_t>(t)];
}

std::string FormatPosition(std::string_view source, size_t offset) {
  offset = std::min(offset, source.size());
  size_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (source[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return std::to_string(line) + ":" + std::to_string(offset - line_start + 1);
}

Result<std::vector<Token>> Tokenize(std::string_view source) {
  if (source.size() >= std::numeric_limits<uint32_t>::max()) {
    return InvalidArgument("template too large");
  }
  Lexer lexer(source, Preprocess(source));
  return lexer.Run();
}

}  // namespace mneme::jinja
