// Global functions and constants: true/false/none (also True/False/None),
// raise_exception, range, strftime_now and namespace as the reference
// defines them, plus Jinja2's dict().
#include <cmath>
#include <ctime>

#include "jinja/builtins.h"
#include "jinja/js_string.h"

namespace mneme::jinja {

namespace {

constexpr std::string_view kDeclared[] = {
    "false",           "true",  "none",         "True",     "False", "None",
    "raise_exception", "range", "strftime_now", "namespace"};

Result<Value> RaiseException(Interpreter&, CallArgs& args, const ScopePtr&) {
  // The reference throws Error(args[0].value): the message is its String().
  std::string msg;
  if (!args.positional.empty() && !args.positional[0].is_undefined())
    msg = JsString(args.positional[0]);
  return FailedPrecondition(msg);
}

Result<Value> Range(Interpreter& in, CallArgs& args, const ScopePtr&) {
  std::vector<double> nums;
  for (const Value& v : args.positional) {
    if (!v.is_number() && !v.is_bool()) return InvalidArgument("range() arguments must be numbers");
    nums.push_back(v.is_bool() ? (v.bool_value() ? 1 : 0) : v.number());
  }
  if (nums.empty() || nums.size() > 3) return InvalidArgument("range() takes 1 to 3 arguments");
  double start = 0, stop = nums[0], step = 1;
  if (nums.size() >= 2) {
    start = nums[0];
    stop = nums[1];
  }
  if (nums.size() == 3) step = nums[2];
  if (step == 0) return InvalidArgument("range() step must not be zero");
  if (std::isnan(start) || std::isnan(stop) || std::isnan(step)) return Value::Array();
  const double count = std::max(0.0, std::ceil((stop - start) / step));
  MNEME_RETURN_IF_ERROR(
      in.CheckCollectionSize(count > 1e15 ? SIZE_MAX : static_cast<size_t>(count)));
  MNEME_RETURN_IF_ERROR(in.Charge(static_cast<uint64_t>(count)));
  std::vector<Value> out;
  for (double i = start; step > 0 ? i < stop : i > stop; i += step) {
    out.push_back(std::trunc(i) == i ? Value::Int(i) : Value::Float(i));
  }
  return Value::Array(std::move(out));
}

Result<Value> StrftimeNow(Interpreter&, CallArgs& args, const ScopePtr&) {
  static constexpr const char* kMonths[] = {"January",   "February", "March",    "April",
                                            "May",       "June",     "July",     "August",
                                            "September", "October",  "November", "December"};
  if (args.positional.empty() || !args.positional[0].is_string()) {
    return InvalidArgument("strftime_now() expects a format string");
  }
  const std::string& fmt = args.positional[0].str();
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  localtime_r(&now, &tm);
  auto pad2 = [](int n) {
    std::string s = std::to_string(n);
    if (n < 10) s.insert(s.begin(), '0');
    return s;
  };
  std::string out;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%' || i + 1 >= fmt.size()) {
      out.push_back(fmt[i]);
      continue;
    }
    const char c = fmt[i + 1];
    switch (c) {
      case 'Y': out += std::to_string(tm.tm_year + 1900); break;
      case 'm': out += pad2(tm.tm_mon + 1); break;
      case 'd': out += pad2(tm.tm_mday); break;
      case 'b': out += std::string(kMonths[tm.tm_mon]).substr(0, 3); break;
      case 'B': out += kMonths[tm.tm_mon]; break;
      case 'H': out += pad2(tm.tm_hour); break;
      case 'M': out += pad2(tm.tm_min); break;
      case '%': out += '%'; break;
      default:  // unknown directives stay as written
        out.push_back('%');
        out.push_back(c);
        break;
    }
    ++i;
  }
  return Value::String(std::move(out));
}

Result<Value> Namespace(Interpreter&, CallArgs& args, const ScopePtr&) {
  if (args.positional.size() > 1) {
    return InvalidArgument("namespace expected at most 1 argument, got " +
                           std::to_string(args.positional.size()));
  }
  Value ns = Value::Namespace();
  if (args.positional.size() == 1) {
    const Value& source = args.positional[0];
    if (source.is_object()) {
      for (const auto& [k, v] : source.object().entries) ns.object().Set(k, v);
    } else if (source.is_array()) {
      for (const Value& pair : source.array().items) {
        std::vector<Value> kv;
        if (pair.is_array()) kv = pair.array().items;
        if (pair.is_string()) {
          for (auto& c : SplitCodePoints(pair.str())) kv.push_back(Value::String(c));
        }
        if (kv.size() != 2)
          return InvalidArgument(
              "namespace expected an object or an iterable of [key, value] pairs");
        if (!kv[0].is_string()) return InvalidArgument("namespace keys must be strings");
        ns.object().Set(kv[0].str(), kv[1]);
      }
    } else {
      std::string msg = "'";
      msg += TypeName(source);
      msg += "' object is not iterable";
      return InvalidArgument(msg);
    }
  }
  for (const auto& [k, v] : args.kwargs) ns.object().Set(k, v);
  return ns;
}

Result<Value> Dict(Interpreter&, CallArgs& args, const ScopePtr&) {
  Value d = Value::Object();
  if (!args.positional.empty()) {
    const Value& source = args.positional[0];
    if (source.is_attr_container()) {
      for (const auto& [k, v] : source.object().entries) d.object().Set(k, v);
    } else {
      return InvalidArgument("dict() expects a mapping");
    }
  }
  for (const auto& [k, v] : args.kwargs) d.object().Set(k, v);
  return d;
}

}  // namespace

void DeclareGlobals(Scope* root) {
  root->Set("false", Value::Bool(false));
  root->Set("true", Value::Bool(true));
  root->Set("none", Value::Null());
  root->Set("raise_exception", Value::Function("raise_exception", RaiseException));
  root->Set("range", Value::Function("range", Range));
  root->Set("strftime_now", Value::Function("strftime_now", StrftimeNow));
  root->Set("True", Value::Bool(true));
  root->Set("False", Value::Bool(false));
  root->Set("None", Value::Null());
}

bool IsDeclaredGlobal(std::string_view name) {
  for (auto n : kDeclared) {
    if (n == name) return true;
  }
  return false;
}

Value FallbackGlobal(std::string_view name) {
  if (name == "namespace") return Value::Function("namespace", Namespace);
  if (name == "dict") return Value::Function("dict", Dict);
  return Value();
}

}  // namespace mneme::jinja
