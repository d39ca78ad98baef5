// See parser.h. A recursive-descent parser, one method per statement and
// per precedence level; this file holds the statements, expression_parser.cc
// the expressions.
#include "jinja/parser.h"

#include "jinja/parser_impl.h"

namespace mneme::jinja {

namespace internal {

namespace {

bool ReadsName(const Expr* e, std::string_view name);
bool ReadsName(const Block& block, std::string_view name);

// Whether `name` is read anywhere in the tree (for macro varargs/kwargs).
bool ReadsName(const Expr* e, std::string_view name) {
  if (e == nullptr) return false;
  if (e->kind == ExprKind::kIdentifier && e->name == name) return true;
  for (const auto& c : e->children) {
    if (ReadsName(c.get(), name)) return true;
  }
  return false;
}

bool ReadsName(const Block& block, std::string_view name) {
  for (const auto& s : block) {
    if (ReadsName(s->expr.get(), name) || ReadsName(s->condition.get(), name) ||
        ReadsName(s->body, name) || ReadsName(s->else_body, name)) {
      return true;
    }
    for (const auto& p : s->params) {
      if (ReadsName(p.default_value.get(), name)) return true;
    }
  }
  return false;
}

void MarkSpecialArguments(Stmt* s) {
  bool declares_varargs = false;
  bool declares_kwargs = false;
  for (const auto& p : s->params) {
    declares_varargs |= p.name == "varargs";
    declares_kwargs |= p.name == "kwargs";
  }
  s->uses_varargs = !declares_varargs && ReadsName(s->body, "varargs");
  s->uses_kwargs = !declares_kwargs && ReadsName(s->body, "kwargs");
}

}  // namespace

Result<StmtPtr> Parser::ParseAny() {
  DepthGuard guard(&depth_);
  if (guard.exceeded()) return Error("template nested too deeply");
  const Token& tok = t_[pos_];
  switch (tok.type) {
    case TokenType::kComment: ++pos_; return StmtPtr();
    case TokenType::kText: {
      StmtPtr s = MakeStmt(StmtKind::kText, tok.offset);
      s->text = tok.value;
      ++pos_;
      return s;
    }
    case TokenType::kOpenStatement: return ParseStatement();
    case TokenType::kOpenExpression: {
      StmtPtr s = MakeStmt(StmtKind::kOutput, tok.offset);
      ++pos_;
      MNEME_ASSIGN_OR_RETURN(s->expr, ParseExpression());
      MNEME_RETURN_IF_ERROR(Expect(TokenType::kCloseExpression, "'}}'"));
      return s;
    }
    default: return Error("unexpected " + Describe());
  }
}

Result<StmtPtr> Parser::ParseStatement() {
  const uint32_t offset = Offset();
  ++pos_;  // {%
  if (!Is(TokenType::kIdentifier)) return Error("expected a statement name, got " + Describe());
  const std::string name = t_[pos_].value;
  ++pos_;
  if (name == "set") return ParseSet(offset);
  if (name == "if") {
    MNEME_ASSIGN_OR_RETURN(StmtPtr s, ParseIf(offset));
    MNEME_RETURN_IF_ERROR(ExpectEnd("endif"));
    return s;
  }
  if (name == "for") {
    MNEME_ASSIGN_OR_RETURN(StmtPtr s, ParseFor(offset));
    MNEME_RETURN_IF_ERROR(ExpectEnd("endfor"));
    return s;
  }
  if (name == "macro") {
    MNEME_ASSIGN_OR_RETURN(StmtPtr s, ParseMacro(offset));
    MNEME_RETURN_IF_ERROR(ExpectEnd("endmacro"));
    return s;
  }
  if (name == "call") return ParseCallBlock(offset);
  if (name == "filter") return ParseFilterBlock(offset);
  if (name == "break" || name == "continue") {
    MNEME_RETURN_IF_ERROR(Expect(TokenType::kCloseStatement, "'%}'"));
    return MakeStmt(name == "break" ? StmtKind::kBreak : StmtKind::kContinue, offset);
  }
  return ErrorAt(offset, "unknown statement '" + name + "'");
}

Result<StmtPtr> Parser::ParseSet(uint32_t offset) {
  StmtPtr s = MakeStmt(StmtKind::kSet, offset);
  MNEME_ASSIGN_OR_RETURN(s->target, ParseExpressionSequence(false));
  if (Is(TokenType::kEquals)) {
    ++pos_;
    MNEME_ASSIGN_OR_RETURN(s->expr, ParseExpressionSequence(false));
  } else {
    MNEME_RETURN_IF_ERROR(Expect(TokenType::kCloseStatement, "'%}' or '='"));
    MNEME_RETURN_IF_ERROR(ParseUntil({"endset"}, &s->body));
    pos_ += 2;  // {% endset
  }
  MNEME_RETURN_IF_ERROR(Expect(TokenType::kCloseStatement, "'%}'"));
  return s;
}

Result<StmtPtr> Parser::ParseIf(uint32_t offset) {
  StmtPtr s = MakeStmt(StmtKind::kIf, offset);
  MNEME_ASSIGN_OR_RETURN(s->expr, ParseExpression());
  MNEME_RETURN_IF_ERROR(Expect(TokenType::kCloseStatement, "'%}'"));
  MNEME_RETURN_IF_ERROR(ParseUntil({"elif", "else", "endif"}, &s->body));
  if (IsStatement({"elif"})) {
    const uint32_t elif_offset = Offset();
    pos_ += 2;
    DepthGuard guard(&depth_);
    if (guard.exceeded()) return Error("too many elif branches");
    MNEME_ASSIGN_OR_RETURN(StmtPtr nested, ParseIf(elif_offset));
    s->else_body.push_back(std::move(nested));
  } else if (IsStatement({"else"})) {
    pos_ += 2;
    MNEME_RETURN_IF_ERROR(Expect(TokenType::kCloseStatement, "'%}'"));
    MNEME_RETURN_IF_ERROR(ParseUntil({"endif"}, &s->else_body));
  }
  return s;
}

Result<StmtPtr> Parser::ParseFor(uint32_t offset) {
  StmtPtr s = MakeStmt(StmtKind::kFor, offset);
  MNEME_ASSIGN_OR_RETURN(s->target, ParseExpressionSequence(true));
  if (s->target->kind != ExprKind::kIdentifier && s->target->kind != ExprKind::kTuple) {
    return ErrorAt(s->target->offset, "expected identifier/tuple for the loop variable");
  }
  if (!IsIdent("in")) return Error("expected 'in' after the loop variable, got " + Describe());
  ++pos_;
  MNEME_ASSIGN_OR_RETURN(ExprPtr iterable, ParseExpression());
  if (iterable->kind == ExprKind::kSelect) {  // for x in xs if cond
    s->condition = std::move(iterable->children[1]);
    s->expr = std::move(iterable->children[0]);
  } else {
    s->expr = std::move(iterable);
  }
  MNEME_RETURN_IF_ERROR(Expect(TokenType::kCloseStatement, "'%}'"));
  MNEME_RETURN_IF_ERROR(ParseUntil({"endfor", "else"}, &s->body));
  if (IsStatement({"else"})) {
    pos_ += 2;
    MNEME_RETURN_IF_ERROR(Expect(TokenType::kCloseStatement, "'%}'"));
    MNEME_RETURN_IF_ERROR(ParseUntil({"endfor"}, &s->else_body));
  }
  return s;
}

Result<std::vector<Param>> Parser::ParseParams() {
  std::vector<ExprPtr> args;
  MNEME_RETURN_IF_ERROR(ParseArgs(/*parameters=*/true, &args));
  std::vector<Param> params;
  for (ExprPtr& a : args) {
    Param p;
    p.name = a->name;
    if (a->kind == ExprKind::kKeywordArg) p.default_value = std::move(a->children[0]);
    params.push_back(std::move(p));
  }
  return params;
}

Result<StmtPtr> Parser::ParseMacro(uint32_t offset) {
  StmtPtr s = MakeStmt(StmtKind::kMacro, offset);
  if (!Is(TokenType::kIdentifier)) return Error("expected a macro name, got " + Describe());
  s->text = t_[pos_++].value;
  MNEME_ASSIGN_OR_RETURN(s->params, ParseParams());
  MNEME_RETURN_IF_ERROR(Expect(TokenType::kCloseStatement, "'%}'"));
  MNEME_RETURN_IF_ERROR(ParseUntil({"endmacro"}, &s->body));
  MarkSpecialArguments(s.get());
  return s;
}

Result<StmtPtr> Parser::ParseCallBlock(uint32_t offset) {
  StmtPtr s = MakeStmt(StmtKind::kCallBlock, offset);
  if (Is(TokenType::kOpenParen)) {
    MNEME_ASSIGN_OR_RETURN(s->params, ParseParams());
  }
  if (!Is(TokenType::kIdentifier))
    return Error("expected a macro name after 'call', got " + Describe());
  ExprPtr callee = MakeExpr(ExprKind::kIdentifier, Offset());
  callee->name = t_[pos_++].value;
  ExprPtr call = MakeExpr(ExprKind::kCall, callee->offset);
  call->children.push_back(std::move(callee));
  MNEME_RETURN_IF_ERROR(ParseArgs(/*parameters=*/false, &call->children));
  s->expr = std::move(call);
  MNEME_RETURN_IF_ERROR(Expect(TokenType::kCloseStatement, "'%}'"));
  MNEME_RETURN_IF_ERROR(ParseUntil({"endcall"}, &s->body));
  MNEME_RETURN_IF_ERROR(ExpectEnd("endcall"));
  MarkSpecialArguments(s.get());
  return s;
}

Result<StmtPtr> Parser::ParseFilterBlock(uint32_t offset) {
  StmtPtr s = MakeStmt(StmtKind::kFilterBlock, offset);
  if (!Is(TokenType::kIdentifier)) return Error("expected a filter name, got " + Describe());
  ExprPtr filter = MakeExpr(ExprKind::kFilter, Offset());
  filter->name = t_[pos_++].value;
  filter->children.push_back(nullptr);  // operand: the rendered body
  if (Is(TokenType::kOpenParen)) {
    filter->computed = true;
    MNEME_RETURN_IF_ERROR(ParseArgs(/*parameters=*/false, &filter->children));
  }
  s->expr = std::move(filter);
  MNEME_RETURN_IF_ERROR(Expect(TokenType::kCloseStatement, "'%}'"));
  MNEME_RETURN_IF_ERROR(ParseUntil({"endfilter"}, &s->body));
  MNEME_RETURN_IF_ERROR(ExpectEnd("endfilter"));
  return s;
}

}  // namespace internal

Result<Block> Parse(const std::vector<Token>& tokens, std::string_view source) {
  internal::Parser parser(tokens, source);
  return parser.ParseProgram();
}

}  // namespace mneme::jinja
