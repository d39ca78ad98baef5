// Runtime values of the Jinja interpreter.
//
// Values mirror @huggingface/jinja's runtime types, because chat-template
// output must match it byte for byte:
//   - numbers are JavaScript doubles tagged "integer" or "float" (1 prints
//     "1", 1.0 prints "1.0"; a JSON 1.0 arrives as an integer, as JSON.parse
//     makes it);
//   - arrays, objects and namespaces are shared by reference (mutations
//     through one alias are seen by all; `==` on them is identity);
//   - undefined and null are distinct; both print as "".
// Strings are immutable and shared; copying a Value is cheap.
#pragma once

#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "util/status.h"

namespace mneme::jinja {

class Interpreter;
class Scope;
class Value;

enum class ValueKind : uint8_t {
  kUndefined,
  kNull,
  kBool,
  kInt,
  kFloat,
  kString,
  kArray,      // also tuples (ArrayData::is_tuple)
  kObject,     // a mapping (dict); also the loop object and kwargs
  kNamespace,  // namespace(): attribute-assignable, not a mapping
  kFunction,
};

// Arguments of one call, already evaluated.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> kwargs;

  // The keyword argument `name`, or nullptr.
  const Value* Kwarg(std::string_view name) const;
  // positional[i] if present, else kwarg `name`, else nullptr.
  const Value* Get(size_t i, std::string_view name) const;
};

// A callable: builtin, bound method, macro or caller. `call_scope` is the
// scope at the call site (macros use dynamic scoping, as the reference does).
using NativeFn =
    std::function<Result<Value>(Interpreter&, CallArgs&, const std::shared_ptr<Scope>& call_scope)>;

// Every container and function records its nesting depth (1 + its deepest
// child, as of creation; see kMaxValueDepth).
struct ArrayData {
  std::vector<Value> items;
  bool is_tuple = false;
  uint32_t depth = 1;
};

struct ObjectData {
  std::vector<std::pair<std::string, Value>> entries;  // insertion order
  bool is_loop = false;                                // the `loop` object; has loop.cycle()
  uint32_t depth = 1;

  const Value* Find(std::string_view key) const;
  Value* Find(std::string_view key);
  void Set(std::string key, Value value);
};

struct FunctionData {
  std::string name;
  NativeFn fn;
  uint32_t depth = 1;  // a bound method is one deeper than its receiver
};

// Values nested deeper than this are refused (by the interpreter and
// FromJson) so that printing and destroying them cannot exhaust the stack.
inline constexpr uint32_t kMaxValueDepth = 250;

class Value {
 public:
  Value() = default;  // undefined

  static Value Null() { return Value(ValueKind::kNull); }
  static Value Bool(bool b);
  static Value Int(double n);
  static Value Float(double n);
  static Value String(std::string s);
  static Value Array(std::vector<Value> items = {}, bool is_tuple = false);
  static Value Object(std::vector<std::pair<std::string, Value>> entries = {});
  static Value Namespace(std::vector<std::pair<std::string, Value>> entries = {});
  static Value Function(std::string name, NativeFn fn);
  // Converts JSON as JSON.parse + the reference's convertToRuntimeValues do:
  // integral numbers become integers; integer-like keys come first, ascending.
  // Fails on JSON nested deeper than kMaxValueDepth.
  static Result<Value> FromJson(const nlohmann::ordered_json& j);

  ValueKind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == ValueKind::kUndefined; }
  bool is_null() const { return kind_ == ValueKind::kNull; }
  bool is_bool() const { return kind_ == ValueKind::kBool; }
  bool is_int() const { return kind_ == ValueKind::kInt; }
  bool is_float() const { return kind_ == ValueKind::kFloat; }
  bool is_number() const { return is_int() || is_float(); }
  bool is_string() const { return kind_ == ValueKind::kString; }
  bool is_array() const { return kind_ == ValueKind::kArray; }
  bool is_tuple() const { return is_array() && array().is_tuple; }
  bool is_object() const { return kind_ == ValueKind::kObject; }
  bool is_namespace() const { return kind_ == ValueKind::kNamespace; }
  bool is_function() const { return kind_ == ValueKind::kFunction; }
  // Objects and namespaces: things with string-keyed attributes.
  bool is_attr_container() const { return is_object() || is_namespace(); }

  bool bool_value() const { return b_; }
  double number() const { return n_; }
  const std::string& str() const { return *static_cast<const std::string*>(p_.get()); }
  ArrayData& array() const { return *static_cast<ArrayData*>(p_.get()); }
  ObjectData& object() const { return *static_cast<ObjectData*>(p_.get()); }
  FunctionData& function() const { return *static_cast<FunctionData*>(p_.get()); }
  const void* identity() const { return p_.get(); }
  // 0 for scalars; see ArrayData::depth.
  uint32_t depth() const;

 private:
  explicit Value(ValueKind kind) : kind_(kind) {}

  ValueKind kind_ = ValueKind::kUndefined;
  bool b_ = false;
  double n_ = 0;
  std::shared_ptr<void> p_;  // string, ArrayData, ObjectData or FunctionData
};

// The reference's runtime type names, for error messages ("StringValue").
std::string_view TypeName(const Value& v);

// Python-style truthiness as the reference implements it (namespaces and
// functions are always true).
bool Truthy(const Value& v);

// How a value prints in `{{ }}` (RuntimeValue.toString()): floats keep ".0",
// booleans are true/false, containers print as JSON. Null and undefined never
// reach output (the caller skips them) but print "null"/"undefined" inside
// containers and strings built from them.
// Fails where the reference throws (tuples and functions inside JSON);
// Display() prints what it can instead.
Status AppendDisplay(const Value& v, std::string* out);
std::string Display(const Value& v);

// JavaScript's String(value.value), used by `~`, `+` on strings and `join`:
// floats lose ".0", arrays join their elements with ",", objects are
// "[object Map]".
std::string JsString(const Value& v);

struct JsonOptions {
  int indent = 0;  // 0: single line
  bool ensure_ascii = false;
  bool sort_keys = false;
  bool has_separators = false;
  std::string item_separator;
  std::string key_separator;
};
// tojson. `undefined_as_null` false prints undefined as `undefined` (used
// when containers are printed directly). Fails on functions.
Status AppendJson(const Value& v, const JsonOptions& options, bool undefined_as_null, int depth,
                  std::string* out);

// JavaScript `a.value == b.value` (the reference's ==) and `===` (used by
// `in` and unique).
bool LooseEquals(const Value& a, const Value& b);
bool StrictEquals(const Value& a, const Value& b);

}  // namespace mneme::jinja
