// Expression evaluation for Interpreter (see interpreter.h): operators,
// member access, slicing, calls. Operator semantics are the reference's,
// which are JavaScript's where it lets them through (`%` keeps the sign of
// the dividend, `==` is JS loose equality, numbers are doubles).
#include <cmath>

#include "jinja/builtins.h"
#include "jinja/interpreter.h"
#include "jinja/js_string.h"

namespace mneme::jinja {

namespace {

bool IsNumericLike(const Value& v) {
  return v.is_number() || v.is_bool();
}
double NumericValue(const Value& v) {
  return v.is_bool() ? (v.bool_value() ? 1 : 0) : v.number();
}

// str.at(index) in UTF-16 units; half of a surrogate pair reads as U+FFFD.
Value StringAt(const std::string& s, double index) {
  const double len = static_cast<double>(Utf16Length(s));
  const double idx = index < 0 ? len + index : index;
  if (idx < 0 || idx >= len) return Value();
  size_t i = 0;
  double unit = 0;
  while (i < s.size()) {
    const size_t start = i;
    const char32_t cp = DecodeUtf8(s, &i);
    const double width = cp >= 0x10000 ? 2 : 1;
    if (idx < unit + width) {
      if (width == 2) return Value::String("\xEF\xBF\xBD");
      return Value::String(s.substr(start, i - start));
    }
    unit += width;
  }
  return Value();
}

// Python-style slice bounds exactly as the reference's utils.slice.
std::vector<size_t> SliceIndices(size_t size, const Value& start_v, const Value& stop_v,
                                 const Value& step_v) {
  const double n = static_cast<double>(size);
  const double step = step_v.is_undefined() ? 1 : step_v.number();
  double start, stop;
  if (step >= 0) {
    start = start_v.is_undefined() ? 0 : start_v.number();
    start = start < 0 ? std::max(n + start, 0.0) : std::min(start, n);
    stop = stop_v.is_undefined() ? n : stop_v.number();
    stop = stop < 0 ? std::max(n + stop, 0.0) : std::min(stop, n);
  } else {
    start = start_v.is_undefined() ? n - 1 : start_v.number();
    start = start < 0 ? std::max(n + start, -1.0) : std::min(start, n - 1);
    stop = stop_v.is_undefined() ? -1 : stop_v.number();
    stop = stop < -1 ? std::max(n + stop, -1.0) : std::min(stop, n - 1);
  }
  std::vector<size_t> out;
  if (step == 0) return out;
  const double direction = step > 0 ? 1 : -1;
  for (double i = start; direction * i < direction * stop; i += step)
    out.push_back(static_cast<size_t>(i));
  return out;
}

}  // namespace

Value Interpreter::Lookup(std::string_view name, const Scope& scope) const {
  if (name == "namespace") {  // every reference scope defines its own
    if (const Value* v = scope.FindLocal(name)) return *v;
    return FallbackGlobal(name);
  }
  if (const Value* v = scope.Find(name)) return *v;
  return FallbackGlobal(name);
}

Result<Value> Interpreter::Eval(const Expr& e, const ScopePtr& scope) {
  if (++eval_depth_ > limits_.max_eval_depth) {
    --eval_depth_;
    return At(e.offset, ResourceExhausted("template nested too deeply"));
  }
  Status charged = Charge(1);
  Result<Value> v = charged.ok() ? EvalInner(e, scope) : Result<Value>(charged);
  --eval_depth_;
  if (v.ok() && v->is_string() && v->str().size() > limits_.max_output_bytes) {
    return At(e.offset, CheckStringSize(v->str().size()));
  }
  if (v.ok() && v->depth() > kMaxValueDepth) {
    return At(e.offset, ResourceExhausted("template built a value nested too deeply"));
  }
  return v;
}

Result<Value> Interpreter::EvalInner(const Expr& e, const ScopePtr& scope) {
  switch (e.kind) {
    case ExprKind::kLiteral: return e.literal;
    case ExprKind::kIdentifier: return Lookup(e.name, *scope);
    case ExprKind::kArray:
    case ExprKind::kTuple: {
      std::vector<Value> items;
      items.reserve(e.children.size());
      for (const auto& c : e.children) {
        MNEME_ASSIGN_OR_RETURN(Value v, Eval(*c, scope));
        items.push_back(std::move(v));
      }
      return Value::Array(std::move(items), e.kind == ExprKind::kTuple);
    }
    case ExprKind::kObject: {
      Value obj = Value::Object();
      for (size_t i = 0; i + 1 < e.children.size(); i += 2) {
        MNEME_ASSIGN_OR_RETURN(Value key, Eval(*e.children[i], scope));
        if (!key.is_string()) {
          return ErrorAt(e.children[i]->offset,
                         "Object keys must be strings: got " + std::string(TypeName(key)));
        }
        MNEME_ASSIGN_OR_RETURN(Value value, Eval(*e.children[i + 1], scope));
        obj.object().Set(key.str(), std::move(value));
      }
      return obj;
    }
    case ExprKind::kMember: return EvalMember(e, scope);
    case ExprKind::kSlice: return EvalSlice(e, scope);
    case ExprKind::kCall: return EvalCall(e, scope);
    case ExprKind::kUnary: return EvalUnary(e, scope);
    case ExprKind::kBinary: return EvalBinary(e, scope);
    case ExprKind::kFilter: {
      MNEME_ASSIGN_OR_RETURN(Value operand, Eval(*e.children[0], scope));
      return EvalFilter(e, operand, scope);
    }
    case ExprKind::kTest: return EvalTest(e, scope);
    case ExprKind::kSelect: {
      MNEME_ASSIGN_OR_RETURN(Value test, Eval(*e.children[1], scope));
      if (!Truthy(test)) return Value();
      return Eval(*e.children[0], scope);
    }
    case ExprKind::kTernary: {
      MNEME_ASSIGN_OR_RETURN(Value test, Eval(*e.children[0], scope));
      return Eval(*e.children[Truthy(test) ? 1 : 2], scope);
    }
    case ExprKind::kKeywordArg:
    case ExprKind::kSpread:
    case ExprKind::kKeywordSpread: return ErrorAt(e.offset, "argument syntax outside of a call");
  }
  return ErrorAt(e.offset, "unknown expression");
}

Result<Value> Interpreter::EvalUnary(const Expr& e, const ScopePtr& scope) {
  MNEME_ASSIGN_OR_RETURN(Value arg, Eval(*e.children[0], scope));
  if (e.name == "not") return Value::Bool(!Truthy(arg));
  if (!IsNumericLike(arg)) {
    return ErrorAt(e.offset,
                   "Unknown operator \"" + e.name + "\" for " + std::string(TypeName(arg)));
  }
  const double v = (e.name == "-" ? -1 : 1) * NumericValue(arg);
  return arg.is_float() ? Value::Float(v) : Value::Int(v);
}

Result<Value> Interpreter::EvalBinary(const Expr& e, const ScopePtr& scope) {
  const std::string& op = e.name;
  MNEME_ASSIGN_OR_RETURN(Value l, Eval(*e.children[0], scope));
  if (op == "and") return Truthy(l) ? Eval(*e.children[1], scope) : Result<Value>(l);
  if (op == "or") return Truthy(l) ? Result<Value>(l) : Eval(*e.children[1], scope);
  MNEME_ASSIGN_OR_RETURN(Value r, Eval(*e.children[1], scope));
  if (op == "==") return Value::Bool(LooseEquals(l, r));
  if (op == "!=") return Value::Bool(!LooseEquals(l, r));
  const bool membership = op == "in" || op == "not in";
  if (l.is_undefined() || r.is_undefined()) {
    if (r.is_undefined() && membership) return Value::Bool(op == "not in");
    return ErrorAt(e.offset, "Cannot perform operation " + op + " on undefined values");
  }
  if (l.is_null() || r.is_null())
    return ErrorAt(e.offset, "Cannot perform operation on null values");
  if (op == "~") {
    std::string s = JsString(l);
    s += JsString(r);
    MNEME_RETURN_IF_ERROR(At(e.offset, CheckStringSize(s.size())));
    return Value::String(std::move(s));
  }
  if (op == "**" && IsNumericLike(l) && IsNumericLike(r)) {
    const double a = NumericValue(l);
    const double b = NumericValue(r);
    if (a == 0 && b < 0) return ErrorAt(e.offset, "0.0 cannot be raised to a negative power");
    const double res = std::pow(a, b);
    if (!std::isfinite(res))
      return ErrorAt(e.offset, "Exponentiation result is not a finite real number");
    return (l.is_float() || r.is_float() || b < 0) ? Value::Float(res) : Value::Int(res);
  }
  if (l.is_number() && r.is_number()) {
    const double a = l.number();
    const double b = r.number();
    const bool is_float = l.is_float() || r.is_float();
    auto num = [is_float](double v) { return is_float ? Value::Float(v) : Value::Int(v); };
    if (op == "+") return num(a + b);
    if (op == "-") return num(a - b);
    if (op == "*") return num(a * b);
    if (op == "/") return Value::Float(a / b);
    if (op == "//") return num(std::floor(a / b));
    if (op == "%") return num(std::fmod(a, b));
    if (op == "<") return Value::Bool(a < b);
    if (op == ">") return Value::Bool(a > b);
    if (op == "<=") return Value::Bool(a <= b);
    if (op == ">=") return Value::Bool(a >= b);
  } else if (l.is_array() && r.is_array()) {
    if (op == "+") {
      const auto& a = l.array().items;
      const auto& b = r.array().items;
      MNEME_RETURN_IF_ERROR(At(e.offset, CheckCollectionSize(a.size() + b.size())));
      MNEME_RETURN_IF_ERROR(Charge(a.size() + b.size()));
      std::vector<Value> items = a;
      items.insert(items.end(), b.begin(), b.end());
      return Value::Array(std::move(items));
    }
  } else if (r.is_array() && membership) {
    bool found = false;
    for (const Value& x : r.array().items) {
      if (StrictEquals(x, l)) {
        found = true;
        break;
      }
    }
    return Value::Bool(found == (op == "in"));
  }
  if ((l.is_string() || r.is_string()) && op == "+") {
    std::string s = JsString(l);
    s += JsString(r);
    MNEME_RETURN_IF_ERROR(At(e.offset, CheckStringSize(s.size())));
    return Value::String(std::move(s));
  }
  if (l.is_string() && r.is_string()) {
    if (membership)
      return Value::Bool((r.str().find(l.str()) != std::string::npos) == (op == "in"));
    // Extension (Jinja2): lexicographic string comparison.
    const int c = l.str().compare(r.str());
    if (op == "<") return Value::Bool(c < 0);
    if (op == ">") return Value::Bool(c > 0);
    if (op == "<=") return Value::Bool(c <= 0);
    if (op == ">=") return Value::Bool(c >= 0);
  }
  if (l.is_string() && r.is_object() && membership) {
    return Value::Bool((r.object().Find(l.str()) != nullptr) == (op == "in"));
  }
  // Extension (Jinja2): "ab" * 3.
  if (op == "*" && ((l.is_string() && r.is_int()) || (l.is_int() && r.is_string()))) {
    const std::string& s = l.is_string() ? l.str() : r.str();
    const double times = std::max(0.0, l.is_string() ? r.number() : l.number());
    if (times * static_cast<double>(s.size()) > static_cast<double>(limits_.max_output_bytes)) {
      return At(e.offset, CheckStringSize(limits_.max_output_bytes + 1));
    }
    std::string out;
    for (double i = 0; i < times; ++i) out += s;
    MNEME_RETURN_IF_ERROR(At(e.offset, CheckStringSize(out.size())));
    return Value::String(std::move(out));
  }
  return ErrorAt(e.offset, "Unknown operator \"" + op + "\" between " + std::string(TypeName(l)) +
                               " and " + std::string(TypeName(r)));
}

Result<Value> Interpreter::EvalMember(const Expr& e, const ScopePtr& scope) {
  MNEME_ASSIGN_OR_RETURN(Value object, Eval(*e.children[0], scope));
  Value prop;
  if (e.computed) {
    MNEME_ASSIGN_OR_RETURN(prop, Eval(*e.children[1], scope));
  } else {
    prop = e.children[1]->literal;
  }
  if (object.is_attr_container()) {
    if (!prop.is_string()) {
      return ErrorAt(e.offset,
                     "Cannot access property with non-string: got " + std::string(TypeName(prop)));
    }
    if (const Value* v = object.object().Find(prop.str())) return *v;
    if (object.is_object()) return BuiltinMember(object, prop.str());
    return Value();
  }
  if (object.is_array() || object.is_string()) {
    if (prop.is_int()) {
      if (object.is_string()) return StringAt(object.str(), prop.number());
      const auto& items = object.array().items;
      const double n = static_cast<double>(items.size());
      const double idx = prop.number() < 0 ? n + prop.number() : prop.number();
      if (idx < 0 || idx >= n) return Value();
      return items[static_cast<size_t>(idx)];
    }
    if (prop.is_string()) return BuiltinMember(object, prop.str());
    return ErrorAt(e.offset, "Cannot access property with non-string/non-number: got " +
                                 std::string(TypeName(prop)));
  }
  if (!prop.is_string()) {
    return ErrorAt(e.offset,
                   "Cannot access property with non-string: got " + std::string(TypeName(prop)));
  }
  return BuiltinMember(object, prop.str());
}

Result<Value> Interpreter::EvalSlice(const Expr& e, const ScopePtr& scope) {
  MNEME_ASSIGN_OR_RETURN(Value object, Eval(*e.children[0], scope));
  if (!object.is_array() && !object.is_string())
    return ErrorAt(e.offset, "Slice object must be an array or string");
  Value bounds[3];
  static constexpr const char* kNames[] = {"start", "stop", "step"};
  for (int i = 0; i < 3; ++i) {
    if (e.children[i + 1]) {
      MNEME_ASSIGN_OR_RETURN(bounds[i], Eval(*e.children[i + 1], scope));
    }
    if (!bounds[i].is_int() && !bounds[i].is_undefined()) {
      return ErrorAt(e.offset, std::string("Slice ") + kNames[i] + " must be numeric or undefined");
    }
  }
  if (object.is_array()) {
    const auto& items = object.array().items;
    const auto indices = SliceIndices(items.size(), bounds[0], bounds[1], bounds[2]);
    MNEME_RETURN_IF_ERROR(Charge(indices.size()));
    std::vector<Value> out;
    out.reserve(indices.size());
    for (size_t i : indices) out.push_back(items[i]);
    return Value::Array(std::move(out));
  }
  const auto chars = SplitCodePoints(object.str());
  const auto indices = SliceIndices(chars.size(), bounds[0], bounds[1], bounds[2]);
  MNEME_RETURN_IF_ERROR(Charge(indices.size()));
  std::string out;
  for (size_t i : indices) out += chars[i];
  return Value::String(std::move(out));
}

Status Interpreter::EvalArgs(const std::vector<ExprPtr>& args, size_t first, const ScopePtr& scope,
                             CallArgs* out) {
  // All positional arguments (with *spread) are evaluated before keywords.
  for (size_t i = first; i < args.size(); ++i) {
    const Expr& a = *args[i];
    if (a.kind == ExprKind::kSpread) {
      MNEME_ASSIGN_OR_RETURN(Value v, Eval(*a.children[0], scope));
      if (!v.is_array())
        return ErrorAt(a.offset, "Cannot unpack non-iterable type: " + std::string(TypeName(v)));
      for (const Value& x : v.array().items) out->positional.push_back(x);
    } else if (a.kind != ExprKind::kKeywordArg && a.kind != ExprKind::kKeywordSpread) {
      MNEME_ASSIGN_OR_RETURN(Value v, Eval(a, scope));
      out->positional.push_back(std::move(v));
    }
  }
  auto add = [&](const std::string& key, Value v, uint32_t offset) -> Status {
    if (out->Kwarg(key) != nullptr)
      return ErrorAt(offset, "Got multiple values for keyword argument '" + key + "'");
    out->kwargs.emplace_back(key, std::move(v));
    return Status::Ok();
  };
  for (size_t i = first; i < args.size(); ++i) {
    const Expr& a = *args[i];
    if (a.kind == ExprKind::kKeywordArg) {
      MNEME_ASSIGN_OR_RETURN(Value v, Eval(*a.children[0], scope));
      MNEME_RETURN_IF_ERROR(add(a.name, std::move(v), a.offset));
    } else if (a.kind == ExprKind::kKeywordSpread) {
      MNEME_ASSIGN_OR_RETURN(Value v, Eval(*a.children[0], scope));
      if (!v.is_object()) {
        return ErrorAt(a.offset,
                       "Argument after ** must be a mapping, not " + std::string(TypeName(v)));
      }
      for (const auto& [k, x] : v.object().entries) MNEME_RETURN_IF_ERROR(add(k, x, a.offset));
    }
  }
  return Status::Ok();
}

Result<Value> Interpreter::EvalCall(const Expr& e, const ScopePtr& scope) {
  CallArgs args;
  MNEME_RETURN_IF_ERROR(EvalArgs(e.children, 1, scope, &args));
  MNEME_ASSIGN_OR_RETURN(Value fn, Eval(*e.children[0], scope));
  if (!fn.is_function()) {
    return ErrorAt(
        e.offset, "Cannot call something that is not a function: got " + std::string(TypeName(fn)));
  }
  auto result = Call(fn, args, scope);
  if (!result.ok()) return At(e.offset, result.status());
  return result;
}

Result<Value> Interpreter::EvalFilter(const Expr& e, const Value& operand, const ScopePtr& scope) {
  CallArgs args;
  MNEME_RETURN_IF_ERROR(EvalArgs(e.children, 1, scope, &args));
  auto result = ApplyFilter(*this, e.name, operand, args, e.computed, scope);
  if (!result.ok()) return At(e.offset, result.status());
  return result;
}

Result<Value> Interpreter::EvalTest(const Expr& e, const ScopePtr& scope) {
  MNEME_ASSIGN_OR_RETURN(Value operand, Eval(*e.children[0], scope));
  CallArgs args;
  MNEME_RETURN_IF_ERROR(EvalArgs(e.children, 1, scope, &args));
  auto result = ApplyTest(e.name, operand, args);
  if (!result.ok()) return At(e.offset, result.status());
  return Value::Bool(*result != e.negate);
}

}  // namespace mneme::jinja
