// See interpreter.h. This file holds scopes, statements and calls;
// expression evaluation is in evaluator.cc.
#include "jinja/interpreter.h"

#include "jinja/builtins.h"
#include "jinja/js_string.h"
#include "jinja/lexer.h"

namespace mneme::jinja {

const Value* Scope::FindLocal(std::string_view name) const {
  for (const auto& [k, v] : vars_) {
    if (k == name) return &v;
  }
  return nullptr;
}

const Value* Scope::Find(std::string_view name) const {
  for (const Scope* s = this; s != nullptr; s = s->parent_.get()) {
    if (const Value* v = s->FindLocal(name)) return v;
  }
  return nullptr;
}

void Scope::Set(std::string_view name, Value value) {
  for (auto& [k, v] : vars_) {
    if (k == name) {
      v = std::move(value);
      return;
    }
  }
  vars_.emplace_back(std::string(name), std::move(value));
}

Interpreter::Interpreter(std::string_view source, RenderLimits limits)
    : source_(source), limits_(limits) {}

Status Interpreter::At(uint32_t offset, Status s) const {
  if (s.ok() || s.code() == StatusCode::kFailedPrecondition || s.message().starts_with("template "))
    return s;
  return Status(s.code(), "template " + FormatPosition(source_, offset) + ": " + s.message());
}

Status Interpreter::ErrorAt(uint32_t offset, std::string msg) const {
  return At(offset, InvalidArgument(std::move(msg)));
}

Status Interpreter::Charge(uint64_t units) {
  work_ += units;
  if (work_ > limits_.max_work)
    return ResourceExhausted("template rendering exceeded its work budget");
  return Status::Ok();
}

Status Interpreter::CheckStringSize(size_t bytes) {
  if (bytes > limits_.max_output_bytes) {
    return ResourceExhausted("template produced a string over " +
                             std::to_string(limits_.max_output_bytes) + " bytes");
  }
  return Charge(bytes / 16);
}

Status Interpreter::CheckCollectionSize(size_t items) const {
  if (items > limits_.max_collection_size) {
    return ResourceExhausted("template built a list of over " +
                             std::to_string(limits_.max_collection_size) + " items");
  }
  return Status::Ok();
}

Result<std::string> Interpreter::Render(const Block& program,
                                        const nlohmann::ordered_json& context) {
  auto root = std::make_shared<Scope>(nullptr);
  DeclareGlobals(root.get());
  if (!context.is_null() && !context.is_object())
    return InvalidArgument("template context must be a JSON object");
  if (context.is_object()) {
    for (auto it = context.begin(); it != context.end(); ++it) {
      if (IsDeclaredGlobal(it.key()))
        return InvalidArgument("Variable already declared: " + it.key());
    }
    // Same order rules as any other JSON object (Value::FromJson).
    MNEME_ASSIGN_OR_RETURN(const Value ctx, Value::FromJson(context));
    for (auto& [k, v] : ctx.object().entries) root->Set(k, v);
  }
  std::string out;
  Result<Flow> flow = ExecBlock(program, root, &out);
  for (const Value& v : mutated_) {  // break any reference cycles
    if (v.is_array()) {
      v.array().items.clear();
    } else {
      v.object().entries.clear();
    }
  }
  mutated_.clear();
  mutated_ids_.clear();
  if (!flow.ok()) return flow.status();
  if (*flow != Flow::kNormal)
    return InvalidArgument("template: 'break' or 'continue' outside of a loop");
  return out;
}

void Interpreter::NoteMutated(const Value& container) {
  if (mutated_ids_.insert(container.identity()).second) mutated_.push_back(container);
}

Status Interpreter::Append(const Value& v, std::string* out) {
  if (v.is_null() || v.is_undefined()) return Status::Ok();
  if (v.is_string()) {
    out->append(v.str());
  } else {
    MNEME_RETURN_IF_ERROR(AppendDisplay(v, out));
  }
  return CheckStringSize(out->size());
}

Result<Flow> Interpreter::ExecBlock(const Block& block, const ScopePtr& scope, std::string* out) {
  for (const StmtPtr& s : block) {
    MNEME_ASSIGN_OR_RETURN(Flow flow, Exec(*s, scope, out));
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Result<Flow> Interpreter::Exec(const Stmt& s, const ScopePtr& scope, std::string* out) {
  if (++eval_depth_ > limits_.max_eval_depth) {
    --eval_depth_;
    return At(s.offset, ResourceExhausted("template nested too deeply"));
  }
  struct Unwind {
    int* depth;
    ~Unwind() { --*depth; }
  } unwind{&eval_depth_};

  switch (s.kind) {
    case StmtKind::kText:
      out->append(s.text);
      MNEME_RETURN_IF_ERROR(CheckStringSize(out->size()));
      return Flow::kNormal;
    case StmtKind::kOutput: {
      MNEME_ASSIGN_OR_RETURN(Value v, Eval(*s.expr, scope));
      MNEME_RETURN_IF_ERROR(At(s.offset, Append(v, out)));
      return Flow::kNormal;
    }
    case StmtKind::kIf: {
      MNEME_ASSIGN_OR_RETURN(Value test, Eval(*s.expr, scope));
      return ExecBlock(Truthy(test) ? s.body : s.else_body, scope, out);
    }
    case StmtKind::kFor: return ExecFor(s, scope, out);
    case StmtKind::kSet: MNEME_RETURN_IF_ERROR(ExecSet(s, scope)); return Flow::kNormal;
    case StmtKind::kMacro: {
      const Stmt* macro = &s;
      scope->Set(s.text, Value::Function(s.text,
                                         [macro](Interpreter& in, CallArgs& args,
                                                 const ScopePtr& call_scope) -> Result<Value> {
                                           return in.Invoke(*macro, "'" + macro->text + "'", args,
                                                            std::make_shared<Scope>(call_scope));
                                         }));
      return Flow::kNormal;
    }
    case StmtKind::kCallBlock:
      MNEME_RETURN_IF_ERROR(ExecCallBlock(s, scope, out));
      return Flow::kNormal;
    case StmtKind::kFilterBlock: {
      std::string body;
      MNEME_ASSIGN_OR_RETURN(Flow flow, ExecBlock(s.body, scope, &body));
      if (flow != Flow::kNormal) return flow;
      MNEME_ASSIGN_OR_RETURN(Value v, EvalFilter(*s.expr, Value::String(std::move(body)), scope));
      MNEME_RETURN_IF_ERROR(At(s.offset, Append(v, out)));
      return Flow::kNormal;
    }
    case StmtKind::kBreak: return Flow::kBreak;
    case StmtKind::kContinue: return Flow::kContinue;
  }
  return Flow::kNormal;
}

Status Interpreter::BindLoopTarget(const Expr& target, const Value& item, Scope* scope) {
  if (target.kind == ExprKind::kIdentifier) {
    scope->Set(target.name, item);
    return Status::Ok();
  }
  // Tuple target: for k, v in ...
  if (!item.is_array())
    return ErrorAt(target.offset,
                   "Cannot unpack non-iterable type: " + std::string(TypeName(item)));
  const auto& items = item.array().items;
  if (items.size() != target.children.size()) {
    return ErrorAt(target.offset, std::string("Too ") +
                                      (target.children.size() > items.size() ? "few" : "many") +
                                      " items to unpack");
  }
  for (size_t j = 0; j < items.size(); ++j) {
    if (target.children[j]->kind != ExprKind::kIdentifier) {
      return ErrorAt(target.offset, "Cannot unpack non-identifier type");
    }
    scope->Set(target.children[j]->name, items[j]);
  }
  return Status::Ok();
}

Result<Flow> Interpreter::ExecFor(const Stmt& s, const ScopePtr& scope, std::string* out) {
  auto loop_scope = std::make_shared<Scope>(scope);
  MNEME_ASSIGN_OR_RETURN(Value iterable, Eval(*s.expr, loop_scope));
  std::vector<Value> candidates;
  if (iterable.is_array()) {
    candidates = iterable.array().items;  // a snapshot: the body may append
  } else if (iterable.is_object()) {
    for (const auto& [k, v] : iterable.object().entries) candidates.push_back(Value::String(k));
  } else if (iterable.is_string()) {  // Jinja2 iterates characters; the reference refuses
    for (std::string& c : SplitCodePoints(iterable.str()))
      candidates.push_back(Value::String(std::move(c)));
  } else {
    return ErrorAt(s.expr->offset, "Expected iterable or object type in for loop: got " +
                                       std::string(TypeName(iterable)));
  }
  std::vector<Value> items;
  if (s.condition) {
    for (const Value& c : candidates) {
      auto test_scope = std::make_shared<Scope>(loop_scope);
      MNEME_RETURN_IF_ERROR(BindLoopTarget(*s.target, c, test_scope.get()));
      MNEME_ASSIGN_OR_RETURN(Value keep, Eval(*s.condition, test_scope));
      if (Truthy(keep)) items.push_back(c);
    }
  } else {
    items = std::move(candidates);
  }

  bool no_iteration = true;
  const size_t n = items.size();
  for (size_t i = 0; i < n; ++i) {
    if (++loop_iterations_ > limits_.max_loop_iterations) {
      return At(s.offset, ResourceExhausted("template ran more than " +
                                            std::to_string(limits_.max_loop_iterations) +
                                            " loop iterations"));
    }
    MNEME_RETURN_IF_ERROR(Charge(1));
    Value loop = Value::Object({
        {"index", Value::Int(static_cast<double>(i + 1))},
        {"index0", Value::Int(static_cast<double>(i))},
        {"revindex", Value::Int(static_cast<double>(n - i))},
        {"revindex0", Value::Int(static_cast<double>(n - i - 1))},
        {"first", Value::Bool(i == 0)},
        {"last", Value::Bool(i == n - 1)},
        {"length", Value::Int(static_cast<double>(n))},
        {"previtem", i > 0 ? items[i - 1] : Value()},
        {"nextitem", i + 1 < n ? items[i + 1] : Value()},
    });
    loop.object().is_loop = true;
    loop_scope->Set("loop", std::move(loop));
    MNEME_RETURN_IF_ERROR(BindLoopTarget(*s.target, items[i], loop_scope.get()));
    const size_t mark = out->size();
    MNEME_ASSIGN_OR_RETURN(Flow flow, ExecBlock(s.body, loop_scope, out));
    if (flow != Flow::kNormal) {
      out->resize(mark);  // the reference drops an interrupted iteration's output
      if (flow == Flow::kBreak) break;
      continue;
    }
    no_iteration = false;
  }
  if (no_iteration) return ExecBlock(s.else_body, loop_scope, out);
  return Flow::kNormal;
}

Status Interpreter::ExecSet(const Stmt& s, const ScopePtr& scope) {
  Value rhs;
  if (s.expr) {
    MNEME_ASSIGN_OR_RETURN(rhs, Eval(*s.expr, scope));
  } else {
    std::string body;
    MNEME_ASSIGN_OR_RETURN(Flow flow, ExecBlock(s.body, scope, &body));
    if (flow != Flow::kNormal) return ErrorAt(s.offset, "'break' or 'continue' inside a set block");
    rhs = Value::String(std::move(body));
  }
  const Expr& target = *s.target;
  switch (target.kind) {
    case ExprKind::kIdentifier: scope->Set(target.name, std::move(rhs)); return Status::Ok();
    case ExprKind::kTuple: {
      if (!rhs.is_array()) {
        return ErrorAt(s.offset,
                       "Cannot unpack non-iterable type in set: " + std::string(TypeName(rhs)));
      }
      const auto items = rhs.array().items;
      if (items.size() != target.children.size()) {
        return ErrorAt(s.offset, std::string("Too ") +
                                     (target.children.size() > items.size() ? "few" : "many") +
                                     " items to unpack in set");
      }
      for (size_t i = 0; i < items.size(); ++i) {
        if (target.children[i]->kind != ExprKind::kIdentifier) {
          return ErrorAt(s.offset, "Cannot unpack to non-identifier in set");
        }
        scope->Set(target.children[i]->name, items[i]);
      }
      return Status::Ok();
    }
    case ExprKind::kMember: {
      MNEME_ASSIGN_OR_RETURN(Value object, Eval(*target.children[0], scope));
      if (!object.is_namespace())
        return ErrorAt(s.offset, "cannot assign attribute on non-namespace object");
      const Expr& prop = *target.children[1];
      if (target.computed || !prop.literal.is_string()) {
        return ErrorAt(s.offset, "Cannot assign to member with non-identifier property");
      }
      NoteMutated(object);
      object.object().Set(prop.literal.str(), std::move(rhs));
      if (object.depth() > kMaxValueDepth) {
        return At(s.offset, ResourceExhausted("template built a value nested too deeply"));
      }
      return Status::Ok();
    }
    default: return ErrorAt(s.offset, "Invalid left-hand side in set");
  }
}

Status Interpreter::ExecCallBlock(const Stmt& s, const ScopePtr& scope, std::string* out) {
  const Stmt* block = &s;
  ScopePtr definition_scope = scope;
  Value caller = Value::Function(
      "caller",
      [block, definition_scope](Interpreter& in, CallArgs& args, const ScopePtr&) -> Result<Value> {
        return in.Invoke(*block, "None", args, std::make_shared<Scope>(definition_scope));
      });
  const Expr& call = *s.expr;
  CallArgs args;
  MNEME_RETURN_IF_ERROR(EvalArgs(call.children, 1, scope, &args));
  MNEME_ASSIGN_OR_RETURN(Value fn, Eval(*call.children[0], scope));
  if (!fn.is_function()) {
    return ErrorAt(
        s.offset, "Cannot call something that is not a function: got " + std::string(TypeName(fn)));
  }
  auto call_scope = std::make_shared<Scope>(scope);
  call_scope->Set("caller", std::move(caller));
  MNEME_ASSIGN_OR_RETURN(Value result, Call(fn, args, call_scope));
  return At(s.offset, Append(result, out));
}

Result<Value> Interpreter::Call(const Value& fn, CallArgs& args, const ScopePtr& call_scope) {
  if (++call_depth_ > limits_.max_call_depth) {
    --call_depth_;
    return ResourceExhausted("template macro calls nested too deeply (recursion?)");
  }
  auto result = fn.function().fn(*this, args, call_scope);
  --call_depth_;
  return result;
}

Result<Value> Interpreter::Invoke(const Stmt& s, std::string_view display_name, CallArgs& args,
                                  const ScopePtr& scope) {
  MNEME_RETURN_IF_ERROR(Charge(1));
  // Bind every parameter first so defaults cannot see an outer variable of
  // the same name; then evaluate the defaults that are needed, in order.
  std::vector<std::pair<std::string, Value>> kwargs = args.kwargs;
  std::vector<const Param*> pending;
  for (size_t i = 0; i < s.params.size(); ++i) {
    const Param& p = s.params[i];
    Value value;
    bool given = false;
    if (i < args.positional.size()) {
      value = args.positional[i];
      given = true;
    } else {
      for (auto it = kwargs.begin(); it != kwargs.end(); ++it) {
        if (it->first == p.name) {
          value = std::move(it->second);
          kwargs.erase(it);
          given = true;
          break;
        }
      }
    }
    if (!given && p.default_value) pending.push_back(&p);
    scope->Set(p.name, std::move(value));
  }
  if (s.uses_kwargs) {
    scope->Set("kwargs", Value::Object(std::move(kwargs)));
  } else if (!kwargs.empty()) {
    return InvalidArgument("macro " + std::string(display_name) + " takes no keyword argument '" +
                           kwargs.front().first + "'");
  }
  if (s.uses_varargs) {
    std::vector<Value> rest;
    for (size_t i = s.params.size(); i < args.positional.size(); ++i)
      rest.push_back(args.positional[i]);
    scope->Set("varargs", Value::Array(std::move(rest)));
  } else if (args.positional.size() > s.params.size()) {
    return InvalidArgument("macro " + std::string(display_name) + " takes not more than " +
                           std::to_string(s.params.size()) + " argument(s)");
  }
  for (const Param* p : pending) {
    MNEME_ASSIGN_OR_RETURN(Value v, Eval(*p->default_value, scope));
    scope->Set(p->name, std::move(v));
  }
  std::string out;
  MNEME_ASSIGN_OR_RETURN(Flow flow, ExecBlock(s.body, scope, &out));
  if (flow != Flow::kNormal) return ErrorAt(s.offset, "'break' or 'continue' outside of a loop");
  return Value::String(std::move(out));
}

}  // namespace mneme::jinja
