// The Parser class shared by parser.cc (statements) and
// expression_parser.cc (expressions). Internal to src/jinja.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "jinja/ast.h"
#include "jinja/lexer.h"
#include "jinja/parser.h"
#include "util/status.h"

namespace mneme::jinja::internal {

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, std::string_view source) : t_(tokens), source_(source) {}

  Result<Block> ParseProgram() {
    Block program;
    while (pos_ < t_.size()) {
      MNEME_ASSIGN_OR_RETURN(StmtPtr s, ParseAny());
      if (s) program.push_back(std::move(s));
    }
    return program;
  }

 private:
  // RAII nesting counter.
  class DepthGuard {
   public:
    explicit DepthGuard(int* depth) : depth_(depth) { ++*depth_; }
    ~DepthGuard() { --*depth_; }
    bool exceeded() const { return *depth_ > kMaxParseDepth; }

   private:
    int* depth_;
  };

  uint32_t Offset() const {
    if (pos_ < t_.size()) return t_[pos_].offset;
    return static_cast<uint32_t>(source_.size());
  }
  Status Error(const std::string& msg) const { return ErrorAt(Offset(), msg); }
  Status ErrorAt(uint32_t offset, const std::string& msg) const {
    return InvalidArgument("template " + FormatPosition(source_, offset) +
                           ": syntax error: " + msg);
  }

  bool Is(TokenType type, size_t ahead = 0) const {
    return pos_ + ahead < t_.size() && t_[pos_ + ahead].type == type;
  }
  bool IsIdent(std::string_view name, size_t ahead = 0) const {
    return Is(TokenType::kIdentifier, ahead) && t_[pos_ + ahead].value == name;
  }
  bool IsStatement(std::initializer_list<std::string_view> names) const {
    if (!Is(TokenType::kOpenStatement) || !Is(TokenType::kIdentifier, 1)) return false;
    for (auto n : names) {
      if (t_[pos_ + 1].value == n) return true;
    }
    return false;
  }
  std::string Describe() const {
    if (pos_ >= t_.size()) return "end of template";
    return std::string(TokenTypeName(t_[pos_].type)) + " '" + t_[pos_].value + "'";
  }
  Status Expect(TokenType type, std::string_view what) {
    if (!Is(type)) return Error("expected " + std::string(what) + ", got " + Describe());
    ++pos_;
    return Status::Ok();
  }
  Status ExpectEnd(std::string_view name) {
    MNEME_RETURN_IF_ERROR(Expect(TokenType::kOpenStatement, "'{% " + std::string(name) + " %}'"));
    if (!IsIdent(name)) return Error("expected '" + std::string(name) + "', got " + Describe());
    ++pos_;
    return Expect(TokenType::kCloseStatement, "'%}'");
  }
  // Parses statements until one of `names` opens a statement.
  Status ParseUntil(std::initializer_list<std::string_view> names, Block* block) {
    while (!IsStatement(names)) {
      if (pos_ >= t_.size()) {
        return Error("unexpected end of template, expected '{% " + std::string(*names.begin()) +
                     " %}'");
      }
      MNEME_ASSIGN_OR_RETURN(StmtPtr s, ParseAny());
      if (s) block->push_back(std::move(s));
    }
    return Status::Ok();
  }

  static ExprPtr MakeExpr(ExprKind kind, uint32_t offset) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->offset = offset;
    return e;
  }
  static StmtPtr MakeStmt(StmtKind kind, uint32_t offset) {
    auto s = std::make_unique<Stmt>();
    s->kind = kind;
    s->offset = offset;
    return s;
  }

  Result<StmtPtr> ParseAny();
  Result<StmtPtr> ParseStatement();
  Result<StmtPtr> ParseSet(uint32_t offset);
  Result<StmtPtr> ParseIf(uint32_t offset);
  Result<StmtPtr> ParseFor(uint32_t offset);
  Result<StmtPtr> ParseMacro(uint32_t offset);
  Result<StmtPtr> ParseCallBlock(uint32_t offset);
  Result<StmtPtr> ParseFilterBlock(uint32_t offset);
  Result<std::vector<Param>> ParseParams();

  Result<ExprPtr> ParseExpressionSequence(bool primary);
  Result<ExprPtr> ParseExpression();
  Result<ExprPtr> ParseOr();
  Result<ExprPtr> ParseAnd();
  Result<ExprPtr> ParseNot();
  Result<ExprPtr> ParseComparison();
  Result<ExprPtr> ParseAdditive();
  Result<ExprPtr> ParseMultiplicative();
  Result<ExprPtr> ParsePower();
  Result<ExprPtr> ParseTest();
  Result<ExprPtr> ParseFilter();
  Result<ExprPtr> ParseUnary();
  Result<ExprPtr> ParseCallMember();
  Result<ExprPtr> ParseCall(ExprPtr callee);
  Result<ExprPtr> ParseMember(ExprPtr object);
  Status ParseArgs(bool parameters, std::vector<ExprPtr>* args);
  Result<ExprPtr> ParsePrimary();
  // Whether the next token can start a test's unparenthesized argument.
  bool StartsOperand() const;

  const std::vector<Token>& t_;
  std::string_view source_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace mneme::jinja::internal
