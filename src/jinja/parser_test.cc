// Tests for the parser: statement structure, operator precedence (the
// reference's, where `is` and filters bind tighter than `**`) and errors.
#include "jinja/parser.h"

#include <gtest/gtest.h>

namespace mneme::jinja {
namespace {

Result<Block> ParseSource(const std::string& src) {
  auto tokens = Tokenize(src);
  if (!tokens.ok()) return tokens.status();
  return Parse(*tokens, src);
}

// A compact rendering of an expression tree: (op a b).
std::string Shape(const Expr* e) {
  if (e == nullptr) return "_";
  switch (e->kind) {
    case ExprKind::kLiteral: {
      if (!e->literal.is_string()) return Display(e->literal);
      std::string quoted = "'";
      quoted += e->literal.str();
      quoted += "'";
      return quoted;
    }
    case ExprKind::kIdentifier: return e->name;
    default: break;
  }
  static const char* kNames[] = {"lit",    "id",      "list",  "tuple",  "dict",    "member",
                                 "slice",  "call",    "unary", "bin",    "filter",  "test",
                                 "select", "ternary", "kw",    "spread", "kwspread"};
  std::string out = "(";
  out += kNames[static_cast<int>(e->kind)];
  if (!e->name.empty()) {
    out += " ";
    out += e->name;
  }
  for (const auto& c : e->children) {
    out += " ";
    out += Shape(c.get());
  }
  out += ")";
  return out;
}

std::string ExprShape(const std::string& expr) {
  std::string src = "{{ ";
  src += expr;
  src += " }}";
  auto block = ParseSource(src);
  EXPECT_TRUE(block.ok()) << block.status().ToString();
  if (!block.ok() || block->empty()) return "";
  return Shape((*block)[0]->expr.get());
}

TEST(ParserTest, Precedence) {
  EXPECT_EQ(ExprShape("1 + 2 * 3"), "(bin + 1 (bin * 2 3))");
  EXPECT_EQ(ExprShape("a or b and not c"), "(bin or a (bin and b (unary not c)))");
  EXPECT_EQ(ExprShape("a ~ b | f"), "(bin ~ a (filter f b))");
  EXPECT_EQ(ExprShape("-x | abs"), "(filter abs (unary - x))");
  EXPECT_EQ(ExprShape("2 ** x is odd"), "(bin ** 2 (test odd x))");
  EXPECT_EQ(ExprShape("a not in b == c"), "(bin == (bin not in a b) c)");
  EXPECT_EQ(ExprShape("x if c else y if d else z"), "(ternary c x (ternary d y z))");
  EXPECT_EQ(ExprShape("x if c"), "(select x c)");
}

TEST(ParserTest, PostfixChains) {
  EXPECT_EQ(ExprShape("a.b[0](1, k=2).c"),
            "(member (call (member (member a 'b') 0) 1 (kw k 2)) 'c')");
  EXPECT_EQ(ExprShape("s[1:-1]"), "(slice s 1 -1 _)");
  EXPECT_EQ(ExprShape("s[::-1]"), "(slice s _ _ -1)");
  EXPECT_EQ(ExprShape("f(*xs, **kw)"), "(call f (spread xs) (kwspread kw))");
  EXPECT_EQ(ExprShape("x is divisibleby(3)"), "(test divisibleby x 3)");
  EXPECT_EQ(ExprShape("x is divisibleby 3 and y"), "(bin and (test divisibleby x 3) y)");
  EXPECT_EQ(ExprShape("x is eq y.z"), "(test eq x (member y 'z'))");
  EXPECT_EQ(ExprShape("x is defined and y"), "(bin and (test defined x) y)");
}

TEST(ParserTest, Literals) {
  EXPECT_EQ(ExprShape("[1, 'a', (2, 3), {'k': none}]"), "(list 1 'a' (tuple 2 3) (dict 'k' none))");
  EXPECT_EQ(ExprShape("'a' 'b'"), "'ab'");
  EXPECT_EQ(ExprShape("1.0"), "1.0");
}

TEST(ParserTest, Statements) {
  auto block = ParseSource(
      "{% for k, v in d.items() if v %}{{ k }}{% else %}none{% endfor %}"
      "{% if a %}1{% elif b %}2{% else %}3{% endif %}"
      "{% set ns.x = 1 %}{% set y %}body{% endset %}"
      "{% macro m(a, b=1) %}{{ caller() }}{% endmacro %}"
      "{% call(x) m(1) %}c{% endcall %}{% filter upper %}t{% endfilter %}");
  ASSERT_TRUE(block.ok()) << block.status().ToString();
  ASSERT_EQ(block->size(), 7u);
  const Stmt& loop = *(*block)[0];
  EXPECT_EQ(loop.kind, StmtKind::kFor);
  EXPECT_EQ(Shape(loop.target.get()), "(tuple k v)");
  EXPECT_EQ(Shape(loop.condition.get()), "v");
  EXPECT_EQ(loop.else_body.size(), 1u);
  const Stmt& cond = *(*block)[1];
  ASSERT_EQ(cond.else_body.size(), 1u);
  EXPECT_EQ(cond.else_body[0]->kind, StmtKind::kIf);  // elif nests
  EXPECT_EQ((*block)[2]->target->kind, ExprKind::kMember);
  EXPECT_EQ((*block)[3]->body.size(), 1u);
  EXPECT_EQ((*block)[4]->params.size(), 2u);
  EXPECT_EQ((*block)[5]->params.size(), 1u);
  EXPECT_EQ((*block)[6]->kind, StmtKind::kFilterBlock);
}

TEST(ParserTest, SyntaxErrors) {
  for (const char* bad :
       {"{% if x %}", "{% for x in y %}", "{% for 1 in y %}{% endfor %}", "{{ 1 + }}",
        "{% endif %}", "{% unknown %}", "{{ f(a=1, 2) }}", "{% macro m(a=1, b) %}{% endmacro %}",
        "{{ x[] }}", "{{ x[1:2:3:4] }}", "{{ (1 }}", "{% set x = 1 "}) {
    auto r = ParseSource(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_NE(r.status().message().find("template 1:"), std::string::npos)
          << r.status().message();
    }
  }
}

TEST(ParserTest, DeepNestingIsAnErrorNotACrash) {
  std::string parens = "{{ ";
  parens.append(5000, '(');
  parens += "1";
  parens.append(5000, ')');
  parens += " }}";
  EXPECT_FALSE(ParseSource(parens).ok());
  std::string nots = "{{ ";
  for (int i = 0; i < 5000; ++i) nots += "not ";
  EXPECT_FALSE(ParseSource(nots + "1 }}").ok());
  std::string ifs;
  for (int i = 0; i < 5000; ++i) ifs += "{% if 1 %}";
  for (int i = 0; i < 5000; ++i) ifs += "{% endif %}";
  EXPECT_FALSE(ParseSource(ifs).ok());
  std::string minus = "{{ ";
  for (int i = 0; i < 5000; ++i) minus += "- ";
  EXPECT_FALSE(ParseSource(minus + "x }}").ok());
}

}  // namespace
}  // namespace mneme::jinja
