// Filters (`x|name`, `x|name(args)`), dispatched on the operand's type the
// way the reference does; see builtins.h for the extension policy.
#include <algorithm>
#include <cmath>

#include "jinja/builtins.h"
#include "jinja/js_string.h"

namespace mneme::jinja {

namespace {

Status Unknown(std::string_view kind, std::string_view name) {
  return InvalidArgument("Unknown " + std::string(kind) + " filter: " + std::string(name));
}
Status CannotApply(std::string_view name, const Value& v) {
  return InvalidArgument("Cannot apply filter \"" + std::string(name) +
                         "\" to type: " + std::string(TypeName(v)));
}

// utils.replace: Python str.replace(old, new, count) on code points.
std::string Replace(const std::string& s, const std::string& from, const std::string& to,
                    double count) {
  if (count == 0) return s;
  double remaining = count < 0 ? INFINITY : count;
  std::string out;
  if (from.empty()) {  // insert at every code-point boundary, ends included
    size_t i = 0;
    while (true) {
      if (remaining > 0) {
        out += to;
        --remaining;
      }
      if (i >= s.size()) break;
      const size_t start = i;
      DecodeUtf8(s, &i);
      out.append(s, start, i - start);
    }
    return out;
  }
  size_t start = 0;
  while (remaining > 0) {
    const size_t at = s.find(from, start);
    if (at == std::string::npos) break;
    out.append(s, start, at - start);
    out += to;
    start = at + from.size();
    --remaining;
  }
  out.append(s, start, std::string::npos);
  return out;
}

Result<Value> ReplaceFilter(Interpreter& in, const Value& s, CallArgs& args) {
  if (args.positional.size() < 2)
    return InvalidArgument("replace() requires at least two arguments");
  const Value& from = args.positional[0];
  const Value& to = args.positional[1];
  if (!from.is_string() || !to.is_string())
    return InvalidArgument("replace() arguments must be strings");
  const Value* count = args.Get(2, "count");
  if (count && !count->is_int() && !count->is_null()) {
    return InvalidArgument("replace() count argument must be a number or null");
  }
  const double n = (count && count->is_int()) ? count->number() : -1;
  // Bound the result before building it.
  const double growth =
      to.str().size() > from.str().size()
          ? static_cast<double>(to.str().size()) * (static_cast<double>(s.str().size()) + 1)
          : 0;
  if (growth > static_cast<double>(in.limits().max_output_bytes)) {
    MNEME_RETURN_IF_ERROR(in.CheckStringSize(static_cast<size_t>(
        std::min(growth, static_cast<double>(in.limits().max_output_bytes) + 1))));
  }
  std::string out = Replace(s.str(), from.str(), to.str(), n);
  MNEME_RETURN_IF_ERROR(in.CheckStringSize(out.size()));
  return Value::String(std::move(out));
}

Result<std::string> ToJson(const Value& v, const CallArgs& args) {
  JsonOptions options;
  if (const Value* indent = args.Kwarg("indent")) {
    if (!indent->is_int() && !indent->is_null())
      return InvalidArgument("If set, indent must be a number");
    if (indent->is_int())
      options.indent = static_cast<int>(std::clamp(indent->number(), 0.0, 64.0));
  }
  if (const Value* ea = args.Kwarg("ensure_ascii")) {
    if (!ea->is_bool()) return InvalidArgument("If set, ensure_ascii must be a boolean");
    options.ensure_ascii = ea->bool_value();
  }
  if (const Value* sk = args.Kwarg("sort_keys")) {
    if (!sk->is_bool()) return InvalidArgument("If set, sort_keys must be a boolean");
    options.sort_keys = sk->bool_value();
  }
  if (const Value* sep = args.Kwarg("separators"); sep && !sep->is_null()) {
    if (!sep->is_array() || sep->array().items.size() != 2 || !sep->array().items[0].is_string() ||
        !sep->array().items[1].is_string()) {
      return InvalidArgument("separators must be a tuple of two strings");
    }
    options.has_separators = true;
    options.item_separator = sep->array().items[0].str();
    options.key_separator = sep->array().items[1].str();
  }
  std::string out;
  MNEME_RETURN_IF_ERROR(AppendJson(v, options, /*undefined_as_null=*/true, 0, &out));
  return out;
}

// Elements as JavaScript's Array.prototype.join sees them.
std::string JoinElement(const Value& v) {
  return (v.is_null() || v.is_undefined()) ? "" : JsString(v);
}

Result<Value> Join(Interpreter& in, const Value& operand, const CallArgs& args) {
  const Value* sep = args.Get(0, "separator");
  if (sep == nullptr) sep = args.Kwarg("d");
  if (sep && !sep->is_string()) return InvalidArgument("separator must be a string");
  const std::string separator = sep ? sep->str() : "";
  std::vector<std::string> parts;
  if (operand.is_string()) {
    parts = SplitCodePoints(operand.str());
  } else if (operand.is_array()) {
    const Value* attribute = args.Kwarg("attribute");
    for (const Value& x : operand.array().items) {
      parts.push_back(JoinElement(
          attribute && attribute->is_string() ? AttributePath(x, attribute->str()) : x));
    }
  } else {
    return CannotApply("join", operand);
  }
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += separator;
    out += parts[i];
    MNEME_RETURN_IF_ERROR(in.CheckStringSize(out.size()));
  }
  return Value::String(std::move(out));
}

Result<Value> IntOrFloat(std::string_view name, const Value& operand, const CallArgs& args,
                         bool called) {
  const bool to_int = name == "int";
  if (operand.is_string()) {
    const double v = to_int ? JsParseInt(operand.str()) : JsParseFloat(operand.str());
    if (std::isnan(v)) {
      if (const Value* d = args.Get(0, "default")) return *d;
      return to_int ? Value::Int(0) : Value::Float(0);
    }
    return to_int ? Value::Int(v) : Value::Float(v);
  }
  if (operand.is_number()) {
    if (called)
      return operand;  // the reference's int()/float() with parentheses keep numbers as they are
    return to_int ? Value::Int(std::floor(operand.number())) : Value::Float(operand.number());
  }
  if (operand.is_bool()) {
    const double v = operand.bool_value() ? 1 : 0;
    return to_int ? Value::Int(v) : Value::Float(v);
  }
  return CannotApply(name, operand);
}

Result<Value> Sort(const Value& operand, const CallArgs& args) {
  const Value* reverse = args.Get(0, "reverse");
  const Value* case_sensitive = args.Get(1, "case_sensitive");
  const Value* attribute = args.Get(2, "attribute");
  if (reverse && !reverse->is_bool()) return InvalidArgument("reverse must be a boolean");
  if (case_sensitive && !case_sensitive->is_bool())
    return InvalidArgument("case_sensitive must be a boolean");
  if (attribute && !attribute->is_string() && !attribute->is_int() && !attribute->is_null()) {
    return InvalidArgument("attribute must be a string, integer, or null");
  }
  const bool rev = reverse && reverse->bool_value();
  const bool cs = case_sensitive && case_sensitive->bool_value();
  std::string path;
  const bool by_attribute = attribute && !attribute->is_null();
  if (by_attribute) path = attribute->is_string() ? attribute->str() : JsString(*attribute);
  std::vector<Value> items = operand.array().items;
  Status error;
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    if (!error.ok()) return false;
    Result<int> c = by_attribute ? CompareValues(AttributePath(a, path), AttributePath(b, path), cs)
                                 : CompareValues(a, b, cs);
    if (!c.ok()) {
      error = c.status();
      return false;
    }
    return rev ? *c > 0 : *c < 0;
  });
  MNEME_RETURN_IF_ERROR(error);
  return Value::Array(std::move(items));
}

// selectattr / rejectattr / select / reject.
Result<Value> SelectFilter(std::string_view name, const Value& operand, const CallArgs& args) {
  const bool by_attr = name == "selectattr" || name == "rejectattr";
  const bool select = name == "selectattr" || name == "select";
  size_t next = 0;
  std::string attr;
  if (by_attr) {
    for (const Value& item : operand.array().items) {
      if (!item.is_attr_container()) {
        std::string msg = "`";
        msg += name;
        msg += "` can only be applied to array of objects";
        return InvalidArgument(msg);
      }
    }
    if (args.positional.empty() || !args.positional[0].is_string()) {
      std::string msg = "arguments of `";
      msg += name;
      msg += "` must be strings";
      return InvalidArgument(msg);
    }
    attr = args.positional[0].str();
    next = 1;
  }
  std::string test;
  if (next < args.positional.size()) {
    if (!args.positional[next].is_string()) return InvalidArgument("test name must be a string");
    test = args.positional[next].str();
  }
  CallArgs test_args;
  for (size_t i = next + 1; i < args.positional.size(); ++i)
    test_args.positional.push_back(args.positional[i]);
  std::vector<Value> out;
  for (const Value& item : operand.array().items) {
    bool result = false;
    const Value* subject = &item;
    if (by_attr) subject = item.object().Find(attr);
    if (subject != nullptr) {
      if (test.empty()) {
        result = Truthy(*subject);
      } else {
        MNEME_ASSIGN_OR_RETURN(result, ApplyTest(test, *subject, test_args));
      }
    }
    if (result == select) out.push_back(item);
  }
  return Value::Array(std::move(out));
}

Result<Value> Map(Interpreter& in, const Value& operand, CallArgs& args, const ScopePtr& scope) {
  if (const Value* attribute = args.Kwarg("attribute")) {
    if (!attribute->is_string()) return InvalidArgument("attribute must be a string");
    const Value* fallback = args.Kwarg("default");
    std::vector<Value> out;
    for (const Value& item : operand.array().items) {
      if (!item.is_attr_container()) return InvalidArgument("items in map must be an object");
      Value v = AttributePath(item, attribute->str());
      out.push_back(v.is_undefined() && fallback ? *fallback : v);
    }
    return Value::Array(std::move(out));
  }
  // Extension (Jinja2): map('filter', args...).
  if (args.positional.empty() || !args.positional[0].is_string()) {
    return InvalidArgument("map needs attribute= or a filter name");
  }
  const std::string filter = args.positional[0].str();
  CallArgs rest;
  rest.positional.assign(args.positional.begin() + 1, args.positional.end());
  rest.kwargs = args.kwargs;
  std::vector<Value> out;
  for (const Value& item : operand.array().items) {
    CallArgs call = rest;
    MNEME_ASSIGN_OR_RETURN(Value v, ApplyFilter(in, filter, item, call, true, scope));
    out.push_back(std::move(v));
  }
  return Value::Array(std::move(out));
}

Result<Value> SumMinMax(std::string_view name, const Value& operand, const CallArgs& args) {
  const Value* attribute = args.Kwarg("attribute");
  std::vector<Value> items;
  for (const Value& x : operand.array().items) {
    items.push_back(attribute && attribute->is_string() ? AttributePath(x, attribute->str()) : x);
  }
  if (name == "sum") {
    const Value* start = args.Kwarg("start");
    double total = start && start->is_number() ? start->number() : 0;
    bool is_float = start && start->is_float();
    for (const Value& x : items) {
      if (!x.is_number() && !x.is_bool()) return InvalidArgument("sum() can only add numbers");
      total += x.is_bool() ? (x.bool_value() ? 1 : 0) : x.number();
      is_float |= x.is_float();
    }
    return is_float ? Value::Float(total) : Value::Int(total);
  }
  if (items.empty()) return Value();
  const Value* cs = args.Kwarg("case_sensitive");
  const bool case_sensitive = cs && Truthy(*cs);
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    MNEME_ASSIGN_OR_RETURN(int c, CompareValues(items[i], items[best], case_sensitive));
    if (name == "min" ? c < 0 : c > 0) best = i;
  }
  return operand.array().items[best];
}

Result<Value> Indent(Interpreter& in, const Value& s, const CallArgs& args) {
  const Value* width = args.Get(0, "width");
  std::string pad = "    ";
  if (width && width->is_int()) {
    const double w = std::clamp(width->number(), 0.0, 1024.0);
    pad.assign(static_cast<size_t>(w), ' ');
  } else if (width && width->is_string()) {
    pad = width->str();
  } else if (width) {
    return InvalidArgument("width must be a number");
  }
  const Value* first = args.Get(1, "first");
  const Value* blank = args.Get(2, "blank");
  const bool indent_first = first && Truthy(*first);
  const bool indent_blank = blank && Truthy(*blank);
  std::string out;
  size_t start = 0;
  bool is_first = true;
  while (true) {
    const size_t nl = s.str().find('\n', start);
    const std::string_view line =
        std::string_view(s.str()).substr(start, nl == std::string::npos ? nl : nl - start);
    if (!is_first) out.push_back('\n');
    if ((indent_first || !is_first) && (indent_blank || !line.empty())) out += pad;
    out += line;
    MNEME_RETURN_IF_ERROR(in.CheckStringSize(out.size()));
    is_first = false;
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return Value::String(std::move(out));
}

std::string HtmlEscape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

// Python %-formatting for the `format` filter: %s %d %i %f %x %% with
// optional precision (%.2f).
Result<Value> PercentFormat(const std::string& f, const CallArgs& args) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] != '%') {
      out.push_back(f[i]);
      continue;
    }
    if (i + 1 < f.size() && f[i + 1] == '%') {
      out.push_back('%');
      ++i;
      continue;
    }
    size_t j = i + 1;
    int precision = -1;
    if (j < f.size() && f[j] == '.') {
      precision = 0;
      for (++j; j < f.size() && f[j] >= '0' && f[j] <= '9'; ++j)
        precision = precision * 10 + (f[j] - '0');
      precision = std::min(precision, 50);
    }
    if (j >= f.size()) return InvalidArgument("format: incomplete format");
    if (next >= args.positional.size()) return InvalidArgument("format: not enough arguments");
    const Value& v = args.positional[next++];
    char buf[128];
    switch (f[j]) {
      case 's': out += v.is_string() ? v.str() : Display(v); break;
      case 'd':
      case 'i':
        if (!v.is_number()) return InvalidArgument("format: %d needs a number");
        out += JsNumberToString(std::trunc(v.number()));
        break;
      case 'f':
        if (!v.is_number()) return InvalidArgument("format: %f needs a number");
        std::snprintf(buf, sizeof(buf), "%.*f", precision < 0 ? 6 : precision, v.number());
        out += buf;
        break;
      case 'x':
        if (!v.is_int() || std::fabs(v.number()) > 9e15)
          return InvalidArgument("format: %x needs an integer");
        std::snprintf(buf, sizeof(buf), "%llx", static_cast<long long>(v.number()));
        out += buf;
        break;
      default: return InvalidArgument(std::string("format: unsupported conversion %") + f[j]);
    }
    i = j;
  }
  return Value::String(std::move(out));
}

Result<Value> StringFilter(Interpreter& in, std::string_view name, const Value& s, CallArgs& args) {
  if (name == "length" || name == "count")
    return Value::Int(static_cast<double>(Utf16Length(s.str())));
  if (name == "upper") return Value::String(JsToUpper(s.str()));
  if (name == "lower") return Value::String(JsToLower(s.str()));
  if (name == "title" || name == "capitalize") {
    CallArgs none;
    return in.Call(BuiltinMember(s, name), none, nullptr);
  }
  if (name == "trim") {
    const Value* chars = args.Get(0, "chars");
    if (chars == nullptr || !chars->is_string()) return Value::String(std::string(JsTrim(s.str())));
    const std::string& set = chars->str();  // Jinja2 trim(chars), byte-wise
    const size_t b = s.str().find_first_not_of(set);
    if (b == std::string::npos) return Value::String("");
    return Value::String(s.str().substr(b, s.str().find_last_not_of(set) - b + 1));
  }
  if (name == "indent") return Indent(in, s, args);
  if (name == "string") return s;
  if (name == "replace") return ReplaceFilter(in, s, args);
  if (name == "list") {
    std::vector<Value> chars;
    for (auto& c : SplitCodePoints(s.str())) chars.push_back(Value::String(std::move(c)));
    return Value::Array(std::move(chars));
  }
  if (name == "first" || name == "last") {
    const auto chars = SplitCodePoints(s.str());
    if (chars.empty()) return Value();
    return Value::String(name == "first" ? chars.front() : chars.back());
  }
  if (name == "reverse") {
    auto chars = SplitCodePoints(s.str());
    std::string out;
    for (auto it = chars.rbegin(); it != chars.rend(); ++it) out += *it;
    return Value::String(std::move(out));
  }
  if (name == "wordcount") {
    double n = 0;
    bool in_word = false;
    for (char c : s.str()) {
      const bool word = (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                        (c >= 'A' && c <= 'Z') || c == '_' || static_cast<unsigned char>(c) >= 0x80;
      if (word && !in_word) ++n;
      in_word = word;
    }
    return Value::Int(n);
  }
  if (name == "center") {
    const Value* width = args.Get(0, "width");
    const double w = width && width->is_number() ? std::min(width->number(), 1e6) : 80;
    const double len = static_cast<double>(Utf16Length(s.str()));
    if (w <= len) return s;
    const auto margin = static_cast<long long>(w - len);
    const long long left = margin / 2 + (margin & static_cast<long long>(w) & 1);
    return Value::String(std::string(left, ' ') + s.str() + std::string(margin - left, ' '));
  }
  if (name == "format") return PercentFormat(s.str(), args);
  if (name == "escape" || name == "e" || name == "forceescape")
    return Value::String(HtmlEscape(s.str()));
  return Unknown("StringValue", name);
}

Result<Value> ArrayFilter(Interpreter& in, std::string_view name, const Value& a, CallArgs& args,
                          const ScopePtr& scope) {
  const auto& items = a.array().items;
  MNEME_RETURN_IF_ERROR(in.Charge(items.size()));
  if (name == "list") return a;
  if (name == "first") return items.empty() ? Value() : items.front();
  if (name == "last") return items.empty() ? Value() : items.back();
  if (name == "length" || name == "count") return Value::Int(static_cast<double>(items.size()));
  if (name == "reverse") return Value::Array(std::vector<Value>(items.rbegin(), items.rend()));
  if (name == "sort") return Sort(a, args);
  if (name == "string") {
    std::string out;
    MNEME_RETURN_IF_ERROR(AppendDisplay(a, &out));
    return Value::String(std::move(out));
  }
  if (name == "unique") {
    std::vector<Value> out;
    for (const Value& x : items) {
      bool seen = false;
      for (const Value& y : out) seen = seen || StrictEquals(x, y);
      if (!seen) out.push_back(x);
    }
    return Value::Array(std::move(out));
  }
  if (name == "selectattr" || name == "rejectattr" || name == "select" || name == "reject") {
    return SelectFilter(name, a, args);
  }
  if (name == "map") return Map(in, a, args, scope);
  if (name == "sum" || name == "min" || name == "max") return SumMinMax(name, a, args);
  if (name == "batch") {
    const Value* size = args.Get(0, "linecount");
    if (size == nullptr || !size->is_int() || size->number() < 1)
      return InvalidArgument("batch needs a count >= 1");
    const Value* fill = args.Get(1, "fill_with");
    const auto n = static_cast<size_t>(std::min(size->number(), 1e9));
    std::vector<Value> out;
    for (size_t i = 0; i < items.size(); i += n) {
      std::vector<Value> chunk(items.begin() + i, items.begin() + std::min(items.size(), i + n));
      while (fill && chunk.size() < n) chunk.push_back(*fill);
      out.push_back(Value::Array(std::move(chunk)));
    }
    return Value::Array(std::move(out));
  }
  return Unknown("ArrayValue", name);
}

Result<Value> NumberFilter(std::string_view name, const Value& n, const CallArgs& args) {
  if (name == "abs")
    return n.is_int() ? Value::Int(std::fabs(n.number())) : Value::Float(std::fabs(n.number()));
  if (name == "string") return Value::String(Display(n));
  if (name == "round") {
    const Value* precision = args.Get(0, "precision");
    const Value* method = args.Get(1, "method");
    const double digits =
        precision && precision->is_number() ? std::clamp(precision->number(), 0.0, 15.0) : 0;
    const double scale = std::pow(10.0, digits);
    const double x = n.number() * scale;
    const std::string m = method && method->is_string() ? method->str() : "common";
    double r;
    if (m == "ceil") {
      r = std::ceil(x);
    } else if (m == "floor") {
      r = std::floor(x);
    } else {
      r = std::nearbyint(x);  // Python's round(): ties to even
    }
    return Value::Float(r / scale);
  }
  return Unknown("NumericValue", name);
}

}  // namespace

Result<int> CompareValues(const Value& a, const Value& b, bool case_sensitive) {
  auto incomparable = [&](std::string_view what) {
    return InvalidArgument(std::string(what) + std::string(TypeName(a)) + " with " +
                           std::string(TypeName(b)));
  };
  if (a.is_null() && b.is_null()) return 0;
  if (a.is_null() || b.is_null()) return incomparable("Cannot compare ");
  if (a.is_undefined() && b.is_undefined()) return 0;
  if (a.is_undefined() || b.is_undefined()) return incomparable("Cannot compare ");
  const bool a_num = a.is_number() || a.is_bool();
  const bool b_num = b.is_number() || b.is_bool();
  if (a_num && b_num) {
    const double x = a.is_bool() ? (a.bool_value() ? 1 : 0) : a.number();
    const double y = b.is_bool() ? (b.bool_value() ? 1 : 0) : b.number();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) {
    const std::string x = case_sensitive ? a.str() : JsToLower(a.str());
    const std::string y = case_sensitive ? b.str() : JsToLower(b.str());
    const int c = x.compare(y);
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.kind() != b.kind()) {
    return InvalidArgument("Cannot compare different types: " + std::string(TypeName(a)) + " and " +
                           std::string(TypeName(b)));
  }
  return InvalidArgument("Cannot compare type: " + std::string(TypeName(a)));
}

Value AttributePath(const Value& item, std::string_view path) {
  Value v = item;
  size_t start = 0;
  while (true) {
    const size_t dot = path.find('.', start);
    const std::string_view part =
        path.substr(start, dot == std::string_view::npos ? dot : dot - start);
    if (v.is_attr_container()) {
      const Value* next = v.object().Find(part);
      if (next == nullptr) return Value();
      v = *next;
    } else if (v.is_array()) {
      const double index = JsParseInt(part);
      if (std::isnan(index) || index < 0 || index >= static_cast<double>(v.array().items.size()))
        return Value();
      v = v.array().items[static_cast<size_t>(index)];
    } else {
      return Value();
    }
    if (dot == std::string_view::npos) return v;
    start = dot + 1;
  }
}

Result<Value> ApplyFilter(Interpreter& in, std::string_view name, const Value& operand,
                          CallArgs& args, bool called, const ScopePtr& scope) {
  if (name == "safe") return operand;
  if (name == "tojson") {
    MNEME_ASSIGN_OR_RETURN(std::string json, ToJson(operand, args));
    MNEME_RETURN_IF_ERROR(in.CheckStringSize(json.size()));
    return Value::String(std::move(json));
  }
  if (name == "default" || name == "d") {
    const Value* fallback = args.Get(0, "default_value");
    const Value* boolean = args.Get(1, "boolean");
    if (boolean && !boolean->is_bool())
      return InvalidArgument("`default` filter flag must be a boolean");
    if (operand.is_undefined() || (boolean && boolean->bool_value() && !Truthy(operand))) {
      return fallback ? *fallback : Value::String("");
    }
    return operand;
  }
  if (name == "join" && (operand.is_string() || operand.is_array())) return Join(in, operand, args);
  if (name == "int" || name == "float") return IntOrFloat(name, operand, args, called);
  if (name == "escape" || name == "e" || name == "forceescape") {
    if (!operand.is_string()) return Value::String(HtmlEscape(Display(operand)));
  }
  switch (operand.kind()) {
    case ValueKind::kArray: return ArrayFilter(in, name, operand, args, scope);
    case ValueKind::kString: return StringFilter(in, name, operand, args);
    case ValueKind::kInt:
    case ValueKind::kFloat: return NumberFilter(name, operand, args);
    case ValueKind::kObject: {
      if (name == "items") return BuiltinMember(operand, "items").function().fn(in, args, scope);
      if (name == "length" || name == "count") {
        return Value::Int(static_cast<double>(operand.object().entries.size()));
      }
      if (name == "list") return BuiltinMember(operand, "keys").function().fn(in, args, scope);
      Value method = BuiltinMember(operand, name);
      if (method.is_function()) return in.Call(method, args, scope);
      return Unknown("ObjectValue", name);
    }
    case ValueKind::kBool:
      if (name == "bool") return operand;
      if (name == "string") return Value::String(operand.bool_value() ? "true" : "false");
      return Unknown("BooleanValue", name);
    default: return CannotApply(name, operand);
  }
}

}  // namespace mneme::jinja
