// Template: the public face of the interpreter (see template.h). Parsing
// happens once; each Render builds a fresh Interpreter, so one Template can
// render from several threads at once.
#include "jinja/template.h"

#include "jinja/interpreter.h"
#include "jinja/lexer.h"
#include "jinja/parser.h"

namespace mneme::jinja {

struct Template::Impl {
  std::string source;
  Block program;
};

Template::Template() : impl_(std::make_unique<Impl>()) {}
Template::Template(Template&&) noexcept = default;
Template& Template::operator=(Template&&) noexcept = default;
Template::~Template() = default;

Result<Template> Template::Parse(std::string_view source) {
  Template t;
  t.impl_->source.assign(source);
  MNEME_ASSIGN_OR_RETURN(std::vector<Token> tokens, Tokenize(t.impl_->source));
  MNEME_ASSIGN_OR_RETURN(t.impl_->program, jinja::Parse(tokens, t.impl_->source));
  return t;
}

Result<std::string> Template::Render(const nlohmann::ordered_json& context) const {
  Interpreter interpreter(impl_->source);
  return interpreter.Render(impl_->program, context);
}

}  // namespace mneme::jinja
