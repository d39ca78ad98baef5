// The syntax tree a parsed template is made of.
//
// Two node types keep the tree small: Expr (anything that yields a value)
// and Stmt (anything that renders). Each kind uses a documented subset of
// the fields. `offset` is the byte offset in the original source, for
// line:column in runtime errors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "jinja/value.h"

namespace mneme::jinja {

enum class ExprKind : uint8_t {
  kLiteral,        // literal: an integer, float or string constant
  kIdentifier,     // name
  kArray,          // children: elements
  kTuple,          // children: elements
  kObject,         // children: key0, value0, key1, value1, ...
  kMember,         // children[0] object, children[1] property; computed: obj[prop]
  kSlice,          // children[0] object, [1..3] start/stop/step (null if absent)
  kCall,           // children[0] callee, [1..] arguments
  kUnary,          // name: "not" "-" "+"; children[0]
  kBinary,         // name: operator ("and", "in", "not in", "~", "==", ...)
  kFilter,         // children[0] operand, [1..] arguments; name: filter;
                   // computed: written with parentheses
  kTest,           // children[0] operand, [1..] arguments; name: test; negate
  kSelect,         // `a if c` without else: children[0] a, [1] c
  kTernary,        // children[0] condition, [1] if-true, [2] if-false
  kKeywordArg,     // name = children[0] (in argument lists)
  kSpread,         // *children[0] (in call arguments)
  kKeywordSpread,  // **children[0] (in call arguments)
};

struct Expr {
  ExprKind kind;
  uint32_t offset = 0;
  std::string name;
  Value literal;
  std::vector<std::unique_ptr<Expr>> children;  // entries may be null (slices)
  bool computed = false;
  bool negate = false;
};
using ExprPtr = std::unique_ptr<Expr>;

struct Stmt;
using StmtPtr = std::unique_ptr<Stmt>;
using Block = std::vector<StmtPtr>;

struct Param {
  std::string name;
  ExprPtr default_value;  // may be null
};

enum class StmtKind : uint8_t {
  kText,         // text
  kOutput,       // {{ expr }}
  kIf,           // expr: test; body; else_body (an elif is a nested kIf)
  kFor,          // target (identifier/tuple), expr: iterable, condition
                 // (`for x in xs if c`, may be null), body, else_body
  kSet,          // target; expr: value, or body for {% set x %}...{% endset %}
  kMacro,        // name, params, body; uses_varargs / uses_kwargs
  kCallBlock,    // expr: the call (kCall), params: caller's, body
  kFilterBlock,  // expr: filter (kFilter with null operand), body
  kBreak,
  kContinue,
};

struct Stmt {
  StmtKind kind;
  uint32_t offset = 0;
  std::string text;  // kText; macro name for kMacro
  ExprPtr target;
  ExprPtr expr;
  ExprPtr condition;
  Block body;
  Block else_body;
  std::vector<Param> params;
  bool uses_varargs = false;
  bool uses_kwargs = false;
};

}  // namespace mneme::jinja
