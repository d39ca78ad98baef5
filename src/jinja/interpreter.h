// Renders a parsed template: scopes, statements and expression evaluation.
//
// Semantics follow @huggingface/jinja (the byte-exact reference):
//   - scopes: `for` bodies get one scope for the whole loop, macros run in a
//     child of the CALLER's scope (dynamic scoping), `set` writes to the
//     current scope, `if` opens none;
//   - `break` / `continue` drop the output of the unfinished iteration, and a
//     loop whose iterations all ended in `continue` renders its `else`;
//   - most operations on undefined or null fail, printing them yields "".
// Everything is bounded: evaluation depth, macro call depth, loop
// iterations, total work and output size (RenderLimits), so a hostile
// template fails with RESOURCE_EXHAUSTED instead of hanging or crashing.
//
// One Interpreter renders one template once; it is not thread-safe, but
// any number can render the same parsed Block concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "jinja/ast.h"
#include "jinja/value.h"
#include "util/status.h"

namespace mneme::jinja {

struct RenderLimits {
  size_t max_output_bytes = size_t{64} << 20;  // any one string, the output included
  uint64_t max_loop_iterations = 10'000'000;
  uint64_t max_work = 200'000'000;         // evaluations + bytes/16 built by string ops
  size_t max_collection_size = 1'000'000;  // items in one array (range, +, ...)
  int max_eval_depth = 400;
  int max_call_depth = 64;  // nested macro / caller invocations
};

// Variables of one scope, linked to the enclosing one.
class Scope {
 public:
  explicit Scope(std::shared_ptr<Scope> parent) : parent_(std::move(parent)) {}

  // Searches this scope, then the enclosing ones.
  const Value* Find(std::string_view name) const;
  const Value* FindLocal(std::string_view name) const;
  void Set(std::string_view name, Value value);

 private:
  std::shared_ptr<Scope> parent_;
  std::vector<std::pair<std::string, Value>> vars_;
};
using ScopePtr = std::shared_ptr<Scope>;

enum class Flow : uint8_t { kNormal, kBreak, kContinue };

class Interpreter {
 public:
  Interpreter(std::string_view source, RenderLimits limits = {});

  Result<std::string> Render(const Block& program, const nlohmann::ordered_json& context);

  // --- for builtins (filters, tests, methods, globals) ---
  Result<Value> Call(const Value& fn, CallArgs& args, const ScopePtr& call_scope);
  // Charges `units` of work; fails once the budget is spent.
  Status Charge(uint64_t units);
  // Fails if a string of `bytes` would exceed the size limit; charges work.
  Status CheckStringSize(size_t bytes);
  Status CheckCollectionSize(size_t items) const;
  // Records a list or namespace the template mutated. Only mutation can make
  // a reference cycle (a list appended to itself, a namespace holding a
  // caller that holds its scope), so Render() empties these containers when
  // it is done: every value of a render is garbage by then.
  void NoteMutated(const Value& container);
  const RenderLimits& limits() const { return limits_; }

 private:
  friend class EvalDepthGuard;

  Result<Flow> ExecBlock(const Block& block, const ScopePtr& scope, std::string* out);
  Result<Flow> Exec(const Stmt& s, const ScopePtr& scope, std::string* out);
  Result<Flow> ExecFor(const Stmt& s, const ScopePtr& scope, std::string* out);
  Status ExecSet(const Stmt& s, const ScopePtr& scope);
  Status ExecCallBlock(const Stmt& s, const ScopePtr& scope, std::string* out);
  Status BindLoopTarget(const Expr& target, const Value& item, Scope* scope);
  Status Append(const Value& v, std::string* out);

  // Renders a macro or caller body with its arguments bound in `scope`.
  Result<Value> Invoke(const Stmt& s, std::string_view display_name, CallArgs& args,
                       const ScopePtr& scope);

  Result<Value> Eval(const Expr& e, const ScopePtr& scope);
  Result<Value> EvalInner(const Expr& e, const ScopePtr& scope);
  Result<Value> EvalBinary(const Expr& e, const ScopePtr& scope);
  Result<Value> EvalUnary(const Expr& e, const ScopePtr& scope);
  Result<Value> EvalMember(const Expr& e, const ScopePtr& scope);
  Result<Value> EvalSlice(const Expr& e, const ScopePtr& scope);
  Result<Value> EvalCall(const Expr& e, const ScopePtr& scope);
  Result<Value> EvalFilter(const Expr& e, const Value& operand, const ScopePtr& scope);
  Result<Value> EvalTest(const Expr& e, const ScopePtr& scope);
  Status EvalArgs(const std::vector<ExprPtr>& args, size_t first, const ScopePtr& scope,
                  CallArgs* out);
  Value Lookup(std::string_view name, const Scope& scope) const;

  // Prefixes "template LINE:COL: " unless the status already has a position
  // or is a raise_exception (FAILED_PRECONDITION) message.
  Status At(uint32_t offset, Status s) const;
  Status ErrorAt(uint32_t offset, std::string msg) const;

  std::string_view source_;
  RenderLimits limits_;
  uint64_t work_ = 0;
  uint64_t loop_iterations_ = 0;
  int eval_depth_ = 0;
  int call_depth_ = 0;
  std::vector<Value> mutated_;
  std::unordered_set<const void*> mutated_ids_;
};

}  // namespace mneme::jinja
