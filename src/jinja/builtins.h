// The library of names a template can use without defining them: filters
// (filters.cc), tests (tests.cc), methods and properties of strings, lists
// and dicts (methods.cc) and global functions (globals.cc).
//
// Where @huggingface/jinja defines a builtin, Mneme matches its output byte
// for byte (including its quirks: `capitalize` and `title` leave the rest of
// the word alone, `strip('x')` ignores its argument, `string` of a boolean is
// "true"). Builtins it lacks but Jinja2 has (select, reject, map('filter'),
// sum, min, max, batch, wordcount, center, format, round, dict(), list
// append/pop, ...) follow Jinja2.
#pragma once

#include <string_view>

#include "jinja/interpreter.h"
#include "jinja/value.h"
#include "util/status.h"

namespace mneme::jinja {

// Applies filter `name`. `called` is whether it was written with
// parentheses (`x|f()`), which changes a few filters in the reference.
Result<Value> ApplyFilter(Interpreter& in, std::string_view name, const Value& operand,
                          CallArgs& args, bool called, const ScopePtr& scope);

// Evaluates test `name` (`x is name(args)`).
Result<bool> ApplyTest(std::string_view name, const Value& operand, const CallArgs& args);

// A builtin method or property of `receiver` (e.g. "abc".upper, [1].length,
// dict.items, loop.cycle); undefined when there is none.
Value BuiltinMember(const Value& receiver, std::string_view name);

// Declares true/false/none (and title-case spellings), raise_exception,
// range and strftime_now in the root scope.
void DeclareGlobals(Scope* root);
// Whether a context variable of this name would clash with a global (the
// reference refuses to render then).
bool IsDeclaredGlobal(std::string_view name);
// Globals found when no scope defines the name: namespace, dict.
Value FallbackGlobal(std::string_view name);

// Sort order of the reference's `sort` / `dictsort`: numbers (and booleans)
// by value, strings case-(in)sensitively; other mixes fail.
Result<int> CompareValues(const Value& a, const Value& b, bool case_sensitive);

// The value at a dotted attribute path ("a.b.0"), as sort/map/sum use.
Value AttributePath(const Value& item, std::string_view path);

}  // namespace mneme::jinja
