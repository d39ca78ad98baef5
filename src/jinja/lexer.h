// Template source -> tokens.
//
// Follows @huggingface/jinja's lexer, including its preprocessing (in this
// order, on the raw source): drop one trailing newline; lstrip_blocks (spaces
// and tabs before a line-leading `{%`, `{#` or `{-` are removed); trim_blocks
// (the newline right after `%}`, `#}` or `-}` is removed); and the
// transformers-specific `{% generation %}` / `{% endgeneration %}` tags are
// deleted (with the whitespace around them when they carry `-`).
// Then text runs, `{{ }}`, `{% %}` and `{# #}` are split, `{%-` / `-%}` style
// markers trim neighbouring whitespace, and tag contents become tokens.
//
// Every token remembers its byte offset in the ORIGINAL source so errors can
// say line:column.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "util/status.h"

namespace mneme::jinja {

enum class TokenType : uint8_t {
  kText,
  kNumber,      // 12, 1.5, and -3 / +2.5 where a unary sign is glued on
  kString,      // value is the unescaped contents
  kIdentifier,  // names and keywords alike (if, in, true, ...)
  kEquals,
  kOpenParen,
  kCloseParen,
  kOpenStatement,    // {%
  kCloseStatement,   // %}
  kOpenExpression,   // {{
  kCloseExpression,  // }}
  kOpenSquare,
  kCloseSquare,
  kOpenCurly,
  kCloseCurly,
  kComma,
  kDot,
  kColon,
  kPipe,
  kAdditive,        // + - ~
  kMultiplicative,  // * / // %
  kPower,           // **
  kComparison,      // == != < > <= >=
  kUnary,           // - + in prefix position
  kComment,
};

std::string_view TokenTypeName(TokenType t);

struct Token {
  TokenType type;
  std::string value;
  uint32_t offset;  // byte offset in the original source
};

// "LINE:COL" (1-based) of a byte offset in `source`.
std::string FormatPosition(std::string_view source, size_t offset);

// Tokenizes with trim_blocks and lstrip_blocks on. Errors carry line:column.
Result<std::vector<Token>> Tokenize(std::string_view source);

}  // namespace mneme::jinja
