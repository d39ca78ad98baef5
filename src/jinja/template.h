// A Jinja2 interpreter for the subset real chat templates use.
//
//   source --Lexer--> tokens --Parser--> AST --Interpreter(context)--> text
//
// Semantics follow Hugging Face's chat-template environment as implemented by
// @huggingface/jinja (trim_blocks and lstrip_blocks on, one trailing newline of
// the source dropped, `raise_exception(msg)`, `strftime_now(fmt)`, JS-style
// value printing and tojson); docs/jinja.md lists where and why we follow it
// rather than Python's Jinja2.
// Byte-for-byte agreement with @huggingface/jinja is tested on every template
// in ../shared/templates.
//
// Parsing and rendering never throw across this interface and never crash on
// bad templates: errors come back as Status with line/column.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "util/status.h"

namespace mneme::jinja {

class Template {
 public:
  static Result<Template> Parse(std::string_view source);

  Template(Template&&) noexcept;
  Template& operator=(Template&&) noexcept;
  ~Template();

  // Renders with `context` as the global variables. A template that calls
  // raise_exception returns FAILED_PRECONDITION with the template's message.
  Result<std::string> Render(const nlohmann::ordered_json& context) const;

 private:
  Template();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mneme::jinja
