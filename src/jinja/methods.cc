// Methods and properties of builtin types: "abc".upper(), s.split(',', 1),
// [1, 2].length, d.items(), d.get('k', 0), loop.cycle('odd', 'even').
// The reference's set is matched exactly (strip/lstrip/rstrip ignore their
// argument there, and so they do here); find, count, join, rsplit, format,
// is* on strings and append/pop/extend/insert/index/count on lists are
// Python extensions.
#include <algorithm>
#include <cmath>

#include "jinja/builtins.h"
#include "jinja/js_string.h"

namespace mneme::jinja {

namespace {

using Method = Result<Value> (*)(Interpreter& in, const Value& self, CallArgs& args);

Value Bind(const Value& self, std::string_view name, Method m) {
  Value fn = Value::Function(
      std::string(name),
      [self, m](Interpreter& in, CallArgs& args, const ScopePtr&) { return m(in, self, args); });
  fn.function().depth = self.depth() + 1;
  return fn;
}

// Notes a mutation of list `a` that adds `added` (see NoteMutated).
Status Grow(Interpreter& in, const Value& a, const Value& added) {
  in.NoteMutated(a);
  a.array().depth = std::max(a.array().depth, added.depth() + 1);
  if (a.array().depth > kMaxValueDepth)
    return ResourceExhausted("template built a value nested too deeply");
  return Status::Ok();
}

bool IsAsciiWord(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// ---- strings ----

std::vector<std::string> JsSplit(const std::string& s, const std::string& sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const size_t at = s.find(sep, start);
    if (at == std::string::npos) break;
    parts.push_back(s.substr(start, at - start));
    start = at + sep.size();
  }
  parts.push_back(s.substr(start));
  return parts;
}

Result<Value> Split(Interpreter& in, const Value& self, CallArgs& args) {
  const Value* sep = args.Get(0, "sep");
  const Value* maxsplit_v = args.Get(1, "maxsplit");
  if (sep != nullptr && !sep->is_string() && !sep->is_null()) {
    return InvalidArgument("sep argument must be a string or null");
  }
  if (maxsplit_v != nullptr && !maxsplit_v->is_int())
    return InvalidArgument("maxsplit argument must be a number");
  const double maxsplit = maxsplit_v ? maxsplit_v->number() : -1;
  std::vector<std::string> result;
  const std::string& s = self.str();
  if (sep == nullptr || sep->is_null()) {
    const std::string_view text = JsTrimStart(s);
    size_t i = 0;
    while (i < text.size()) {
      size_t next = i;
      if (IsJsSpace(DecodeUtf8(text, &next))) {
        i = next;
        continue;
      }
      size_t end = i;
      while (end < text.size()) {
        size_t n2 = end;
        if (IsJsSpace(DecodeUtf8(text, &n2))) break;
        end = n2;
      }
      if (maxsplit != -1 && static_cast<double>(result.size()) >= maxsplit) {
        result.emplace_back(text.substr(i));
        break;
      }
      result.emplace_back(text.substr(i, end - i));
      i = end;
    }
  } else {
    if (sep->str().empty()) return InvalidArgument("empty separator");
    result = JsSplit(s, sep->str());
    if (maxsplit != -1 && static_cast<double>(result.size()) > maxsplit) {
      const double n = static_cast<double>(result.size());
      const size_t k = static_cast<size_t>(maxsplit < 0 ? std::max(n + maxsplit, 0.0) : maxsplit);
      std::string tail;
      for (size_t i = k; i < result.size(); ++i) {
        if (i > k) tail += sep->str();
        tail += result[i];
      }
      result.resize(k);
      result.push_back(std::move(tail));
    }
  }
  MNEME_RETURN_IF_ERROR(in.Charge(result.size()));
  std::vector<Value> out;
  for (auto& p : result) out.push_back(Value::String(std::move(p)));
  return Value::Array(std::move(out));
}

Result<Value> RSplit(Interpreter&, const Value& self, CallArgs& args) {
  const Value* sep = args.Get(0, "sep");
  const Value* maxsplit_v = args.Get(1, "maxsplit");
  if (sep == nullptr || !sep->is_string() || sep->str().empty()) {
    return InvalidArgument("rsplit() needs a non-empty string separator");
  }
  std::vector<std::string> parts = JsSplit(self.str(), sep->str());
  const double maxsplit = maxsplit_v && maxsplit_v->is_number() ? maxsplit_v->number() : -1;
  if (maxsplit >= 0 && static_cast<double>(parts.size()) > maxsplit + 1) {
    const size_t head_count = parts.size() - static_cast<size_t>(maxsplit);
    std::string head;
    for (size_t i = 0; i < head_count; ++i) {
      if (i > 0) head += sep->str();
      head += parts[i];
    }
    std::vector<std::string> rest(parts.begin() + head_count, parts.end());
    parts = {std::move(head)};
    parts.insert(parts.end(), rest.begin(), rest.end());
  }
  std::vector<Value> out;
  for (auto& p : parts) out.push_back(Value::String(std::move(p)));
  return Value::Array(std::move(out));
}

Result<bool> AffixMatch(const Value& self, const Value* pattern, bool prefix) {
  const std::string_view fn = prefix ? "startswith" : "endswith";
  if (pattern == nullptr)
    return InvalidArgument(std::string(fn) + "() requires at least one argument");
  auto match = [&](const std::string& p) {
    return prefix ? self.str().starts_with(p) : self.str().ends_with(p);
  };
  if (pattern->is_string()) return match(pattern->str());
  if (pattern->is_array()) {
    for (const Value& item : pattern->array().items) {
      if (!item.is_string())
        return InvalidArgument(std::string(fn) + "() tuple elements must be strings");
      if (match(item.str())) return true;
    }
    return false;
  }
  return InvalidArgument(std::string(fn) + "() argument must be a string or tuple of strings");
}

Result<Value> StartsWith(Interpreter&, const Value& self, CallArgs& args) {
  MNEME_ASSIGN_OR_RETURN(bool b, AffixMatch(self, args.Get(0, "prefix"), true));
  return Value::Bool(b);
}

Result<Value> EndsWith(Interpreter&, const Value& self, CallArgs& args) {
  MNEME_ASSIGN_OR_RETURN(bool b, AffixMatch(self, args.Get(0, "suffix"), false));
  return Value::Bool(b);
}

Result<Value> Find(Interpreter&, const Value& self, CallArgs& args) {
  const Value* sub = args.Get(0, "sub");
  if (sub == nullptr || !sub->is_string()) return InvalidArgument("find() needs a string");
  const size_t at = self.str().find(sub->str());
  if (at == std::string::npos) return Value::Int(-1);
  return Value::Int(static_cast<double>(Utf16Length(std::string_view(self.str()).substr(0, at))));
}

Result<Value> Count(Interpreter&, const Value& self, CallArgs& args) {
  const Value* x = args.Get(0, "x");
  if (self.is_array()) {
    double n = 0;
    for (const Value& item : self.array().items) n += (x && StrictEquals(item, *x)) ? 1 : 0;
    return Value::Int(n);
  }
  if (x == nullptr || !x->is_string()) return InvalidArgument("count() needs a string");
  if (x->str().empty())
    return Value::Int(static_cast<double>(SplitCodePoints(self.str()).size() + 1));
  double n = 0;
  for (size_t at = self.str().find(x->str()); at != std::string::npos;
       at = self.str().find(x->str(), at + x->str().size())) {
    ++n;
  }
  return Value::Int(n);
}

Result<Value> JoinMethod(Interpreter& in, const Value& self, CallArgs& args) {
  const Value* items = args.Get(0, "iterable");
  if (items == nullptr || !items->is_array()) return InvalidArgument("join() needs a list");
  std::string out;
  bool first = true;
  for (const Value& item : items->array().items) {
    if (!first) out += self.str();
    first = false;
    out += JsString(item);
    MNEME_RETURN_IF_ERROR(in.CheckStringSize(out.size()));
  }
  return Value::String(std::move(out));
}

// Python str.format with {} / {0} / {name} fields (no format specs).
Result<Value> Format(Interpreter& in, const Value& self, CallArgs& args) {
  const std::string& f = self.str();
  std::string out;
  size_t auto_index = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    if (f[i] == '{' && i + 1 < f.size() && f[i + 1] == '{') {
      out.push_back('{');
      ++i;
    } else if (f[i] == '}' && i + 1 < f.size() && f[i + 1] == '}') {
      out.push_back('}');
      ++i;
    } else if (f[i] == '{') {
      const size_t close = f.find('}', i);
      if (close == std::string::npos) return InvalidArgument("format(): unmatched '{'");
      const std::string field = f.substr(i + 1, close - i - 1);
      const Value* v = nullptr;
      if (field.empty()) {
        v = auto_index < args.positional.size() ? &args.positional[auto_index] : nullptr;
        ++auto_index;
      } else if (std::all_of(field.begin(), field.end(),
                             [](char c) { return c >= '0' && c <= '9'; })) {
        const size_t k = std::stoul(field);
        v = k < args.positional.size() ? &args.positional[k] : nullptr;
      } else {
        v = args.Kwarg(field);
      }
      if (v == nullptr) return InvalidArgument("format(): no value for field {" + field + "}");
      out += v->is_string() ? v->str() : Display(*v);
      i = close;
    } else {
      out.push_back(f[i]);
    }
    MNEME_RETURN_IF_ERROR(in.CheckStringSize(out.size()));
  }
  return Value::String(std::move(out));
}

template <bool (*Pred)(char32_t)>
Result<Value> CharClass(Interpreter&, const Value& self, CallArgs&) {
  const std::string& s = self.str();
  if (s.empty()) return Value::Bool(false);
  size_t i = 0;
  while (i < s.size()) {
    if (!Pred(DecodeUtf8(s, &i))) return Value::Bool(false);
  }
  return Value::Bool(true);
}
bool IsDigitCp(char32_t c) {
  return c >= '0' && c <= '9';
}
bool IsAlphaCp(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0xC0;
}
bool IsAlnumCp(char32_t c) {
  return IsDigitCp(c) || IsAlphaCp(c);
}

Value StringMember(const Value& self, std::string_view name) {
  if (name == "length") return Value::Int(static_cast<double>(Utf16Length(self.str())));
  if (name == "upper") {
    return Bind(self, name, [](Interpreter&, const Value& s, CallArgs&) -> Result<Value> {
      return Value::String(JsToUpper(s.str()));
    });
  }
  if (name == "lower") {
    return Bind(self, name, [](Interpreter&, const Value& s, CallArgs&) -> Result<Value> {
      return Value::String(JsToLower(s.str()));
    });
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    // The reference ignores a `chars` argument and strips whitespace.
    if (name == "strip") {
      return Bind(self, name, [](Interpreter&, const Value& s, CallArgs&) -> Result<Value> {
        return Value::String(std::string(JsTrim(s.str())));
      });
    }
    if (name == "lstrip") {
      return Bind(self, name, [](Interpreter&, const Value& s, CallArgs&) -> Result<Value> {
        return Value::String(std::string(JsTrimStart(s.str())));
      });
    }
    return Bind(self, name, [](Interpreter&, const Value& s, CallArgs&) -> Result<Value> {
      return Value::String(std::string(JsTrimEnd(s.str())));
    });
  }
  if (name == "title") {
    return Bind(self, name, [](Interpreter&, const Value& s, CallArgs&) -> Result<Value> {
      std::string out = s.str();
      for (size_t i = 0; i < out.size(); ++i) {  // /\b\w/g -> upper
        if (IsAsciiWord(out[i]) && (i == 0 || !IsAsciiWord(out[i - 1])) && out[i] >= 'a' &&
            out[i] <= 'z') {
          out[i] = static_cast<char>(out[i] - 'a' + 'A');
        }
      }
      return Value::String(std::move(out));
    });
  }
  if (name == "capitalize") {
    return Bind(self, name, [](Interpreter&, const Value& s, CallArgs&) -> Result<Value> {
      const std::string& str = s.str();
      if (str.empty()) return Value::String("");
      size_t i = 0;
      DecodeUtf8(str, &i);
      return Value::String(JsToUpper(std::string_view(str).substr(0, i)) + str.substr(i));
    });
  }
  if (name == "startswith") return Bind(self, name, StartsWith);
  if (name == "endswith") return Bind(self, name, EndsWith);
  if (name == "split") return Bind(self, name, Split);
  if (name == "rsplit") return Bind(self, name, RSplit);
  if (name == "replace") {
    return Bind(self, name, [](Interpreter& in, const Value& s, CallArgs& args) -> Result<Value> {
      return ApplyFilter(in, "replace", s, args, true, nullptr);
    });
  }
  if (name == "find") return Bind(self, name, Find);
  if (name == "count") return Bind(self, name, Count);
  if (name == "join") return Bind(self, name, JoinMethod);
  if (name == "format") return Bind(self, name, Format);
  if (name == "isdigit") return Bind(self, name, CharClass<IsDigitCp>);
  if (name == "isalpha") return Bind(self, name, CharClass<IsAlphaCp>);
  if (name == "isalnum") return Bind(self, name, CharClass<IsAlnumCp>);
  if (name == "isspace") return Bind(self, name, CharClass<IsJsSpace>);
  if (name == "islower" || name == "isupper") {
    return Bind(
        self, name,
        name == "islower"
            ? Method([](Interpreter&, const Value& s, CallArgs&) -> Result<Value> {
                return Value::Bool(JsToLower(s.str()) == s.str() && JsToUpper(s.str()) != s.str());
              })
            : Method([](Interpreter&, const Value& s, CallArgs&) -> Result<Value> {
                return Value::Bool(JsToUpper(s.str()) == s.str() && JsToLower(s.str()) != s.str());
              }));
  }
  return Value();
}

// ---- lists (Python extensions; the reference only has .length) ----

Value ArrayMember(const Value& self, std::string_view name) {
  if (name == "length") return Value::Int(static_cast<double>(self.array().items.size()));
  if (name == "append") {
    return Bind(self, name, [](Interpreter& in, const Value& a, CallArgs& args) -> Result<Value> {
      if (args.positional.size() != 1)
        return InvalidArgument("append() takes exactly one argument");
      MNEME_RETURN_IF_ERROR(in.CheckCollectionSize(a.array().items.size() + 1));
      MNEME_RETURN_IF_ERROR(Grow(in, a, args.positional[0]));
      a.array().items.push_back(args.positional[0]);
      return Value::Null();
    });
  }
  if (name == "extend") {
    return Bind(self, name, [](Interpreter& in, const Value& a, CallArgs& args) -> Result<Value> {
      if (args.positional.size() != 1 || !args.positional[0].is_array()) {
        return InvalidArgument("extend() takes one list");
      }
      const std::vector<Value> more = args.positional[0].array().items;
      MNEME_RETURN_IF_ERROR(in.CheckCollectionSize(a.array().items.size() + more.size()));
      for (const Value& m : more) MNEME_RETURN_IF_ERROR(Grow(in, a, m));
      a.array().items.insert(a.array().items.end(), more.begin(), more.end());
      return Value::Null();
    });
  }
  if (name == "pop") {
    return Bind(self, name, [](Interpreter&, const Value& a, CallArgs& args) -> Result<Value> {
      auto& items = a.array().items;
      if (items.empty()) return InvalidArgument("pop from empty list");
      double idx = static_cast<double>(items.size()) - 1;
      if (!args.positional.empty()) {
        if (!args.positional[0].is_int()) return InvalidArgument("pop() index must be an integer");
        idx = args.positional[0].number();
        if (idx < 0) idx += static_cast<double>(items.size());
      }
      if (idx < 0 || idx >= static_cast<double>(items.size()))
        return InvalidArgument("pop index out of range");
      Value v = items[static_cast<size_t>(idx)];
      items.erase(items.begin() + static_cast<ptrdiff_t>(idx));
      return v;
    });
  }
  if (name == "insert") {
    return Bind(self, name, [](Interpreter& in, const Value& a, CallArgs& args) -> Result<Value> {
      if (args.positional.size() != 2 || !args.positional[0].is_int()) {
        return InvalidArgument("insert() takes an index and a value");
      }
      auto& items = a.array().items;
      MNEME_RETURN_IF_ERROR(in.CheckCollectionSize(items.size() + 1));
      const double n = static_cast<double>(items.size());
      double idx = args.positional[0].number();
      if (idx < 0) idx = std::max(0.0, idx + n);
      idx = std::min(idx, n);
      MNEME_RETURN_IF_ERROR(Grow(in, a, args.positional[1]));
      items.insert(items.begin() + static_cast<ptrdiff_t>(idx), args.positional[1]);
      return Value::Null();
    });
  }
  if (name == "index") {
    return Bind(self, name, [](Interpreter&, const Value& a, CallArgs& args) -> Result<Value> {
      if (args.positional.empty()) return InvalidArgument("index() takes one argument");
      const auto& items = a.array().items;
      for (size_t i = 0; i < items.size(); ++i) {
        if (StrictEquals(items[i], args.positional[0])) return Value::Int(static_cast<double>(i));
      }
      return InvalidArgument("value is not in list");
    });
  }
  if (name == "count") return Bind(self, name, Count);
  return Value();
}

// ---- dicts ----

Result<Value> Items(const Value& self) {
  std::vector<Value> out;
  for (const auto& [k, v] : self.object().entries)
    out.push_back(Value::Array({Value::String(k), v}));
  return Value::Array(std::move(out));
}

Result<Value> DictSort(Interpreter&, const Value& self, CallArgs& args) {
  const Value* case_sensitive = args.Get(0, "case_sensitive");
  const Value* by = args.Get(1, "by");
  const Value* reverse = args.Get(2, "reverse");
  if (case_sensitive && !case_sensitive->is_bool())
    return InvalidArgument("case_sensitive must be a boolean");
  if (by && !by->is_string()) return InvalidArgument("by must be a string");
  if (by && by->str() != "key" && by->str() != "value")
    return InvalidArgument("by must be either 'key' or 'value'");
  if (reverse && !reverse->is_bool()) return InvalidArgument("reverse must be a boolean");
  const bool cs = case_sensitive && case_sensitive->bool_value();
  const size_t index = (by && by->str() == "value") ? 1 : 0;
  const bool rev = reverse && reverse->bool_value();
  std::vector<Value> items;
  for (const auto& [k, v] : self.object().entries)
    items.push_back(Value::Array({Value::String(k), v}));
  Status error;
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    if (!error.ok()) return false;
    Result<int> c = CompareValues(a.array().items[index], b.array().items[index], cs);
    if (!c.ok()) {
      error = c.status();
      return false;
    }
    return rev ? *c > 0 : *c < 0;
  });
  MNEME_RETURN_IF_ERROR(error);
  return Value::Array(std::move(items));
}

Value ObjectMember(const Value& self, std::string_view name) {
  if (name == "get") {
    return Bind(self, name, [](Interpreter&, const Value& d, CallArgs& args) -> Result<Value> {
      const Value* key = args.Get(0, "key");
      if (key == nullptr || !key->is_string()) {
        return InvalidArgument("Object key must be a string: got " +
                               std::string(key ? TypeName(*key) : "UndefinedValue"));
      }
      if (const Value* v = d.object().Find(key->str())) return *v;
      const Value* fallback = args.Get(1, "default");
      return fallback ? *fallback : Value::Null();
    });
  }
  if (name == "items") {
    return Bind(self, name, [](Interpreter&, const Value& d, CallArgs&) { return Items(d); });
  }
  if (name == "keys") {
    return Bind(self, name, [](Interpreter&, const Value& d, CallArgs&) -> Result<Value> {
      std::vector<Value> out;
      for (const auto& [k, v] : d.object().entries) out.push_back(Value::String(k));
      return Value::Array(std::move(out));
    });
  }
  if (name == "values") {
    return Bind(self, name, [](Interpreter&, const Value& d, CallArgs&) -> Result<Value> {
      std::vector<Value> out;
      for (const auto& [k, v] : d.object().entries) out.push_back(v);
      return Value::Array(std::move(out));
    });
  }
  if (name == "dictsort") return Bind(self, name, DictSort);
  if (name == "cycle" && self.object().is_loop) {
    return Bind(self, name, [](Interpreter&, const Value& loop, CallArgs& args) -> Result<Value> {
      if (args.positional.empty())
        return InvalidArgument("loop.cycle() needs at least one argument");
      const Value* index0 = loop.object().Find("index0");
      const double i = index0 ? index0->number() : 0;
      return args.positional[static_cast<size_t>(
          std::fmod(i, static_cast<double>(args.positional.size())))];
    });
  }
  return Value();
}

}  // namespace

Value BuiltinMember(const Value& receiver, std::string_view name) {
  if (receiver.is_string()) return StringMember(receiver, name);
  if (receiver.is_array()) return ArrayMember(receiver, name);
  if (receiver.is_object()) return ObjectMember(receiver, name);
  return Value();
}

}  // namespace mneme::jinja
