// Expression parsing for the Parser of parser_impl.h: one method per
// precedence level of parser.h's table, lowest first.
#include <cstdlib>
#include <set>

#include "jinja/parser_impl.h"

namespace mneme::jinja::internal {

namespace {

ExprPtr MakeBinary(std::string op, uint32_t offset, ExprPtr left, ExprPtr right) {
  auto e = std::make_unique<Expr>();
  e->kind = ExprKind::kBinary;
  e->offset = offset;
  e->name = std::move(op);
  e->children.push_back(std::move(left));
  e->children.push_back(std::move(right));
  return e;
}

// Tests that take one argument, which may follow without parentheses.
bool TakesArgument(std::string_view test) {
  for (std::string_view t : {"divisibleby", "equalto", "eq", "ne", "sameas", "lt", "gt", "le", "ge",
                             "lessthan", "greaterthan", "in"}) {
    if (t == test) return true;
  }
  return false;
}

}  // namespace

bool Parser::StartsOperand() const {
  if (Is(TokenType::kIdentifier)) {
    const std::string& v = t_[pos_].value;
    return v != "else" && v != "or" && v != "and" && v != "if" && v != "is" && v != "in" &&
           v != "not";
  }
  return Is(TokenType::kString) || Is(TokenType::kNumber) || Is(TokenType::kOpenSquare) ||
         Is(TokenType::kOpenCurly);
}

Result<ExprPtr> Parser::ParseExpressionSequence(bool primary) {
  const uint32_t offset = Offset();
  MNEME_ASSIGN_OR_RETURN(ExprPtr first, primary ? ParsePrimary() : ParseExpression());
  if (!Is(TokenType::kComma)) return first;
  ExprPtr tuple = MakeExpr(ExprKind::kTuple, offset);
  tuple->children.push_back(std::move(first));
  while (Is(TokenType::kComma)) {
    ++pos_;
    MNEME_ASSIGN_OR_RETURN(ExprPtr next, primary ? ParsePrimary() : ParseExpression());
    tuple->children.push_back(std::move(next));
  }
  return tuple;
}

Result<ExprPtr> Parser::ParseExpression() {
  DepthGuard guard(&depth_);
  if (guard.exceeded()) return Error("expression nested too deeply");
  MNEME_ASSIGN_OR_RETURN(ExprPtr a, ParseOr());
  if (!IsIdent("if")) return a;
  const uint32_t offset = Offset();
  ++pos_;
  MNEME_ASSIGN_OR_RETURN(ExprPtr test, ParseOr());
  if (IsIdent("else")) {
    ++pos_;
    MNEME_ASSIGN_OR_RETURN(ExprPtr b, ParseExpression());
    ExprPtr e = MakeExpr(ExprKind::kTernary, offset);
    e->children.push_back(std::move(test));
    e->children.push_back(std::move(a));
    e->children.push_back(std::move(b));
    return e;
  }
  ExprPtr e = MakeExpr(ExprKind::kSelect, offset);
  e->children.push_back(std::move(a));
  e->children.push_back(std::move(test));
  return e;
}

Result<ExprPtr> Parser::ParseOr() {
  MNEME_ASSIGN_OR_RETURN(ExprPtr left, ParseAnd());
  while (IsIdent("or")) {
    const uint32_t offset = Offset();
    ++pos_;
    MNEME_ASSIGN_OR_RETURN(ExprPtr right, ParseAnd());
    left = MakeBinary("or", offset, std::move(left), std::move(right));
  }
  return left;
}

Result<ExprPtr> Parser::ParseAnd() {
  MNEME_ASSIGN_OR_RETURN(ExprPtr left, ParseNot());
  while (IsIdent("and")) {
    const uint32_t offset = Offset();
    ++pos_;
    MNEME_ASSIGN_OR_RETURN(ExprPtr right, ParseNot());
    left = MakeBinary("and", offset, std::move(left), std::move(right));
  }
  return left;
}

Result<ExprPtr> Parser::ParseNot() {
  if (!IsIdent("not")) return ParseComparison();
  DepthGuard guard(&depth_);
  if (guard.exceeded()) return Error("expression nested too deeply");
  const uint32_t offset = Offset();
  ++pos_;
  MNEME_ASSIGN_OR_RETURN(ExprPtr arg, ParseNot());
  ExprPtr e = MakeExpr(ExprKind::kUnary, offset);
  e->name = "not";
  e->children.push_back(std::move(arg));
  return e;
}

Result<ExprPtr> Parser::ParseComparison() {
  MNEME_ASSIGN_OR_RETURN(ExprPtr left, ParseAdditive());
  while (true) {
    const uint32_t offset = Offset();
    std::string op;
    if (IsIdent("not") && IsIdent("in", 1)) {
      op = "not in";
      pos_ += 2;
    } else if (IsIdent("in")) {
      op = "in";
      ++pos_;
    } else if (Is(TokenType::kComparison)) {
      op = t_[pos_++].value;
    } else {
      break;
    }
    MNEME_ASSIGN_OR_RETURN(ExprPtr right, ParseAdditive());
    left = MakeBinary(std::move(op), offset, std::move(left), std::move(right));
  }
  return left;
}

Result<ExprPtr> Parser::ParseAdditive() {
  MNEME_ASSIGN_OR_RETURN(ExprPtr left, ParseMultiplicative());
  while (Is(TokenType::kAdditive)) {
    const uint32_t offset = Offset();
    std::string op = t_[pos_++].value;
    MNEME_ASSIGN_OR_RETURN(ExprPtr right, ParseMultiplicative());
    left = MakeBinary(std::move(op), offset, std::move(left), std::move(right));
  }
  return left;
}

Result<ExprPtr> Parser::ParseMultiplicative() {
  MNEME_ASSIGN_OR_RETURN(ExprPtr left, ParsePower());
  while (Is(TokenType::kMultiplicative)) {
    const uint32_t offset = Offset();
    std::string op = t_[pos_++].value;
    MNEME_ASSIGN_OR_RETURN(ExprPtr right, ParsePower());
    left = MakeBinary(std::move(op), offset, std::move(left), std::move(right));
  }
  return left;
}

Result<ExprPtr> Parser::ParsePower() {
  MNEME_ASSIGN_OR_RETURN(ExprPtr left, ParseTest());
  while (Is(TokenType::kPower)) {
    const uint32_t offset = Offset();
    ++pos_;
    MNEME_ASSIGN_OR_RETURN(ExprPtr right, ParseTest());
    left = MakeBinary("**", offset, std::move(left), std::move(right));
  }
  return left;
}

Result<ExprPtr> Parser::ParseTest() {
  MNEME_ASSIGN_OR_RETURN(ExprPtr operand, ParseFilter());
  while (IsIdent("is")) {
    const uint32_t offset = Offset();
    ++pos_;
    const bool negate = IsIdent("not");
    if (negate) ++pos_;
    if (!Is(TokenType::kIdentifier))
      return Error("expected a test name after 'is', got " + Describe());
    ExprPtr e = MakeExpr(ExprKind::kTest, offset);
    e->name = t_[pos_++].value;
    e->negate = negate;
    e->children.push_back(std::move(operand));
    if (Is(TokenType::kOpenParen)) {
      MNEME_RETURN_IF_ERROR(ParseArgs(/*parameters=*/false, &e->children));
    } else if (TakesArgument(e->name) && StartsOperand()) {
      // Jinja2's `x is divisibleby 3`: one argument without parentheses.
      MNEME_ASSIGN_OR_RETURN(ExprPtr arg, ParseCallMember());
      e->children.push_back(std::move(arg));
    }
    operand = std::move(e);
  }
  return operand;
}

Result<ExprPtr> Parser::ParseFilter() {
  MNEME_ASSIGN_OR_RETURN(ExprPtr operand, ParseUnary());
  while (Is(TokenType::kPipe)) {
    ++pos_;
    if (!Is(TokenType::kIdentifier))
      return Error("expected a filter name after '|', got " + Describe());
    ExprPtr e = MakeExpr(ExprKind::kFilter, Offset());
    e->name = t_[pos_++].value;
    e->children.push_back(std::move(operand));
    if (Is(TokenType::kOpenParen)) {
      e->computed = true;
      MNEME_RETURN_IF_ERROR(ParseArgs(/*parameters=*/false, &e->children));
    }
    operand = std::move(e);
  }
  return operand;
}

Result<ExprPtr> Parser::ParseUnary() {
  if ((Is(TokenType::kUnary) || Is(TokenType::kAdditive)) &&
      (t_[pos_].value == "-" || t_[pos_].value == "+")) {
    DepthGuard guard(&depth_);
    if (guard.exceeded()) return Error("expression nested too deeply");
    ExprPtr e = MakeExpr(ExprKind::kUnary, Offset());
    e->name = t_[pos_++].value;
    MNEME_ASSIGN_OR_RETURN(ExprPtr arg, ParseUnary());
    e->children.push_back(std::move(arg));
    return e;
  }
  return ParseCallMember();
}

Result<ExprPtr> Parser::ParseCallMember() {
  MNEME_ASSIGN_OR_RETURN(ExprPtr primary, ParsePrimary());
  MNEME_ASSIGN_OR_RETURN(ExprPtr member, ParseMember(std::move(primary)));
  if (Is(TokenType::kOpenParen)) return ParseCall(std::move(member));
  return member;
}

Result<ExprPtr> Parser::ParseCall(ExprPtr callee) {
  // Iterative form of foo()()... with member access in between.
  while (Is(TokenType::kOpenParen)) {
    ExprPtr call = MakeExpr(ExprKind::kCall, Offset());
    call->children.push_back(std::move(callee));
    MNEME_RETURN_IF_ERROR(ParseArgs(/*parameters=*/false, &call->children));
    MNEME_ASSIGN_OR_RETURN(callee, ParseMember(std::move(call)));
  }
  return callee;
}

Status Parser::ParseArgs(bool parameters, std::vector<ExprPtr>* args) {
  MNEME_RETURN_IF_ERROR(Expect(TokenType::kOpenParen, "'('"));
  std::set<std::string> names;
  bool saw_keyword = false;
  bool saw_spread = false;
  while (!Is(TokenType::kCloseParen)) {
    if (pos_ >= t_.size()) return Error("unexpected end of template in argument list");
    const uint32_t offset = Offset();
    const bool keyword_spread = Is(TokenType::kPower);
    const bool spread = Is(TokenType::kMultiplicative) && t_[pos_].value == "*";
    if (parameters && (keyword_spread || spread)) {
      return Error("argument unpacking is not allowed in parameter declarations");
    }
    if (keyword_spread) {
      ++pos_;
      ExprPtr e = MakeExpr(ExprKind::kKeywordSpread, offset);
      MNEME_ASSIGN_OR_RETURN(ExprPtr inner, ParseExpression());
      e->children.push_back(std::move(inner));
      args->push_back(std::move(e));
      if (Is(TokenType::kComma)) ++pos_;
      if (!Is(TokenType::kCloseParen)) return Error("'**' must be applied to the final argument");
      break;
    }
    ExprPtr arg;
    if (spread) {
      if (saw_spread) return Error("only one '*' argument unpacking is allowed");
      saw_spread = true;
      ++pos_;
      arg = MakeExpr(ExprKind::kSpread, offset);
      MNEME_ASSIGN_OR_RETURN(ExprPtr inner, ParseExpression());
      arg->children.push_back(std::move(inner));
    } else {
      MNEME_ASSIGN_OR_RETURN(arg, ParseExpression());
      if (Is(TokenType::kEquals)) {
        ++pos_;
        if (arg->kind != ExprKind::kIdentifier) {
          return ErrorAt(offset, parameters ? "expected identifier for parameter declaration"
                                            : "expected identifier for keyword argument");
        }
        ExprPtr kw = MakeExpr(ExprKind::kKeywordArg, offset);
        kw->name = arg->name;
        MNEME_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
        kw->children.push_back(std::move(value));
        arg = std::move(kw);
      }
      if (parameters) {
        if (arg->kind != ExprKind::kIdentifier && arg->kind != ExprKind::kKeywordArg) {
          return ErrorAt(offset, "expected identifier for parameter declaration");
        }
        if (!names.insert(arg->name).second)
          return ErrorAt(offset, "duplicate parameter name: " + arg->name);
      }
      if (arg->kind == ExprKind::kKeywordArg) {
        saw_keyword = true;
      } else if (saw_keyword) {
        return ErrorAt(offset, parameters
                                   ? "non-default argument follows default argument"
                                   : "positional arguments must come before keyword arguments");
      } else if (saw_spread) {
        return ErrorAt(offset, "positional arguments must not follow '*' argument unpacking");
      }
    }
    args->push_back(std::move(arg));
    if (Is(TokenType::kComma)) ++pos_;
  }
  ++pos_;  // )
  return Status::Ok();
}

Result<ExprPtr> Parser::ParseMember(ExprPtr object) {
  while (Is(TokenType::kDot) || Is(TokenType::kOpenSquare)) {
    const uint32_t offset = Offset();
    const bool computed = Is(TokenType::kOpenSquare);
    ++pos_;
    if (!computed) {
      if (!Is(TokenType::kIdentifier) &&
          !(Is(TokenType::kNumber) &&
            t_[pos_].value.find_first_not_of("0123456789") == std::string::npos)) {
        return Error("expected identifier or integer after '.', got " + Describe());
      }
      ExprPtr prop = MakeExpr(ExprKind::kLiteral, Offset());
      const Token& tok = t_[pos_++];
      prop->literal = tok.type == TokenType::kNumber
                          ? Value::Int(std::strtod(tok.value.c_str(), nullptr))
                          : Value::String(tok.value);
      ExprPtr e = MakeExpr(ExprKind::kMember, offset);
      e->children.push_back(std::move(object));
      e->children.push_back(std::move(prop));
      object = std::move(e);
      continue;
    }
    // obj[expr] or a slice obj[a:b:c]
    std::vector<ExprPtr> parts;
    bool is_slice = false;
    while (!Is(TokenType::kCloseSquare)) {
      if (pos_ >= t_.size()) return Error("unexpected end of template, expected ']'");
      if (Is(TokenType::kColon)) {
        parts.push_back(nullptr);
        ++pos_;
        is_slice = true;
      } else {
        MNEME_ASSIGN_OR_RETURN(ExprPtr part, ParseExpression());
        parts.push_back(std::move(part));
        if (Is(TokenType::kColon)) {
          ++pos_;
          is_slice = true;
        }
      }
    }
    ++pos_;  // ]
    if (parts.empty())
      return ErrorAt(offset, "expected at least one argument for member/slice expression");
    ExprPtr e;
    if (is_slice) {
      if (parts.size() > 3) return ErrorAt(offset, "expected 0-3 arguments for slice expression");
      e = MakeExpr(ExprKind::kSlice, offset);
      e->children.push_back(std::move(object));
      for (auto& p : parts) e->children.push_back(std::move(p));
      while (e->children.size() < 4) e->children.push_back(nullptr);
    } else {
      e = MakeExpr(ExprKind::kMember, offset);
      e->computed = true;
      e->children.push_back(std::move(object));
      e->children.push_back(std::move(parts[0]));
    }
    object = std::move(e);
  }
  return object;
}

Result<ExprPtr> Parser::ParsePrimary() {
  DepthGuard guard(&depth_);
  if (guard.exceeded()) return Error("expression nested too deeply");
  if (pos_ >= t_.size()) return Error("unexpected end of template in expression");
  const Token& tok = t_[pos_++];
  switch (tok.type) {
    case TokenType::kNumber: {
      ExprPtr e = MakeExpr(ExprKind::kLiteral, tok.offset);
      const double v = std::strtod(tok.value.c_str(), nullptr);
      e->literal = tok.value.find('.') != std::string::npos ? Value::Float(v) : Value::Int(v);
      return e;
    }
    case TokenType::kString: {
      std::string value = tok.value;
      while (Is(TokenType::kString)) value += t_[pos_++].value;  // 'a' 'b' == 'ab'
      ExprPtr e = MakeExpr(ExprKind::kLiteral, tok.offset);
      e->literal = Value::String(std::move(value));
      return e;
    }
    case TokenType::kIdentifier: {
      ExprPtr e = MakeExpr(ExprKind::kIdentifier, tok.offset);
      e->name = tok.value;
      return e;
    }
    case TokenType::kOpenParen: {
      MNEME_ASSIGN_OR_RETURN(ExprPtr e, ParseExpressionSequence(false));
      MNEME_RETURN_IF_ERROR(Expect(TokenType::kCloseParen, "')'"));
      return e;
    }
    case TokenType::kOpenSquare: {
      ExprPtr e = MakeExpr(ExprKind::kArray, tok.offset);
      while (!Is(TokenType::kCloseSquare)) {
        if (pos_ >= t_.size()) return Error("unexpected end of template, expected ']'");
        MNEME_ASSIGN_OR_RETURN(ExprPtr item, ParseExpression());
        e->children.push_back(std::move(item));
        if (Is(TokenType::kComma)) ++pos_;
      }
      ++pos_;
      return e;
    }
    case TokenType::kOpenCurly: {
      ExprPtr e = MakeExpr(ExprKind::kObject, tok.offset);
      while (!Is(TokenType::kCloseCurly)) {
        if (pos_ >= t_.size()) return Error("unexpected end of template, expected '}'");
        MNEME_ASSIGN_OR_RETURN(ExprPtr key, ParseExpression());
        MNEME_RETURN_IF_ERROR(Expect(TokenType::kColon, "':' between key and value"));
        MNEME_ASSIGN_OR_RETURN(ExprPtr value, ParseExpression());
        e->children.push_back(std::move(key));
        e->children.push_back(std::move(value));
        if (Is(TokenType::kComma)) ++pos_;
      }
      ++pos_;
      return e;
    }
    default: --pos_; return Error("unexpected " + Describe());
  }
}

}  // namespace mneme::jinja::internal
