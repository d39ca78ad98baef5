// Jinja tests (`x is defined`, `x is not none`, `n is divisibleby(3)`).
// The reference's tests take no arguments and are matched exactly; the
// comparison tests, divisibleby, in, sameas and float are Jinja2 extensions.
#include <cmath>

#include "jinja/builtins.h"
#include "jinja/js_string.h"

namespace mneme::jinja {

namespace {

Result<bool> Compare(std::string_view name, const Value& a, const Value& b) {
  int c = 0;
  if (a.is_number() && b.is_number()) {
    c = a.number() < b.number() ? -1 : a.number() > b.number() ? 1 : 0;
  } else if (a.is_string() && b.is_string()) {
    c = a.str().compare(b.str());
  } else {
    return InvalidArgument("test '" + std::string(name) + "' cannot compare " +
                           std::string(TypeName(a)) + " with " + std::string(TypeName(b)));
  }
  if (name == "lt" || name == "lessthan") return c < 0;
  if (name == "gt" || name == "greaterthan") return c > 0;
  if (name == "le") return c <= 0;
  return c >= 0;  // ge
}

}  // namespace

Result<bool> ApplyTest(std::string_view name, const Value& v, const CallArgs& args) {
  const Value arg = args.positional.empty() ? Value() : args.positional[0];
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_null();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.bool_value();
  if (name == "false") return v.is_bool() && !v.bool_value();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "callable") return v.is_function();
  if (name == "mapping") return v.is_object();
  if (name == "iterable") return (v.is_array() && !v.is_tuple()) || v.is_string();
  if (name == "sequence") return v.is_array() || v.is_object() || v.is_string();
  if (name == "lower") return v.is_string() && v.str() == JsToLower(v.str());
  if (name == "upper") return v.is_string() && v.str() == JsToUpper(v.str());
  if (name == "odd" || name == "even") {
    if (!v.is_int())
      return InvalidArgument("cannot " + std::string(name) + " on " + std::string(TypeName(v)));
    const bool odd = std::fmod(v.number(), 2) != 0;
    return name == "odd" ? odd : !odd;
  }
  if (name == "equalto" || name == "eq") return StrictEquals(v, arg);
  if (name == "ne") return !StrictEquals(v, arg);
  if (name == "sameas") return StrictEquals(v, arg);
  if (name == "lt" || name == "gt" || name == "le" || name == "ge" || name == "lessthan" ||
      name == "greaterthan") {
    return Compare(name, v, arg);
  }
  if (name == "divisibleby") {
    if (!v.is_number() || !arg.is_number() || arg.number() == 0) {
      return InvalidArgument("divisibleby needs two numbers and a non-zero divisor");
    }
    return std::fmod(v.number(), arg.number()) == 0;
  }
  if (name == "in") {
    if (arg.is_array()) {
      for (const Value& x : arg.array().items) {
        if (StrictEquals(x, v)) return true;
      }
      return false;
    }
    if (arg.is_string() && v.is_string()) return arg.str().find(v.str()) != std::string::npos;
    if (arg.is_object() && v.is_string()) return arg.object().Find(v.str()) != nullptr;
    return InvalidArgument("test 'in' needs a list, string or mapping");
  }
  return InvalidArgument("Unknown test: " + std::string(name));
}

}  // namespace mneme::jinja
