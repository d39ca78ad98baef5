// Tokens -> syntax tree (ast.h), with @huggingface/jinja's grammar and
// operator precedence (lowest first):
//
//   a if c else b  |  or  |  and  |  not  |  in, not in, == != < > <= >=
//   |  + - ~  |  * / // %  |  **  |  is [not] test  |  x|filter  |  unary -/+
//   |  member access, calls, slices  |  primary
//
// (`is` binds tighter than `**`, filters tighter than `is`, as in the
// reference.) Extensions over the reference: tests may take arguments in
// parentheses (`x is divisibleby(3)`). Nesting is capped so that hostile
// input cannot overflow the stack.
#pragma once

#include <string_view>
#include <vector>

#include "jinja/ast.h"
#include "jinja/lexer.h"
#include "util/status.h"

namespace mneme::jinja {

// Maximum nesting of expressions and blocks.
inline constexpr int kMaxParseDepth = 200;

// `source` is only used for line:column in error messages.
Result<Block> Parse(const std::vector<Token>& tokens, std::string_view source);

}  // namespace mneme::jinja
