// `mneme render`: prints the prompt a chat template makes of a conversation,
// exactly as the server would feed it to the tokenizer. It is the CLI face of
// ChatTemplate and what the template oracle test (tests/templates/) drives.
//
//   mneme render (-m FILE.gguf | --template FILE.jinja) --messages FILE.json
//                [--tools FILE.json] [--context FILE.json]
//                [--no-generation-prompt] [--bos STR] [--eos STR]
//
// Output goes to stdout byte for byte, no newline added. Exit status: 0
// rendered; 3 the template raised (raise_exception) or failed while rendering;
// 1 anything else (bad flags or files, a --template that does not parse).
// With -m, a model without a usable template renders with the built-in ChatML
// fallback and a warning on stderr (docs/chat-templates.md).
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "app/commands.h"
#include "gguf/gguf.h"
#include "tokenizer/chat_template.h"
#include "util/status.h"

namespace mneme::app {
namespace {

using Json = nlohmann::ordered_json;

constexpr int kExitError = 1;
constexpr int kExitTemplateRaised = 3;

struct RenderOptions {
  std::string model_path;
  std::string template_path;
  std::string messages_path;
  std::string tools_path;
  std::string context_path;
  bool no_generation_prompt = false;
  std::string bos;
  std::string eos;
  bool bos_given = false;
  bool eos_given = false;
};

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return IoError(path + ": cannot open");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) return IoError(path + ": read failed");
  return text.str();
}

Result<Json> ReadJson(const std::string& path) {
  MNEME_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) return InvalidArgument(path + ": not valid JSON");
  return json;
}

Result<ChatTemplate> LoadTemplate(const RenderOptions& opts) {
  if (!opts.template_path.empty()) {
    MNEME_ASSIGN_OR_RETURN(std::string source, ReadFile(opts.template_path));
    Result<ChatTemplate> t = ChatTemplate::FromSource(std::move(source), opts.bos, opts.eos);
    if (!t.ok()) return t.status().WithContext(opts.template_path);
    return t;
  }
  MNEME_ASSIGN_OR_RETURN(gguf::GgufFile file, gguf::GgufFile::Open(opts.model_path));
  ChatTemplate t = ChatTemplate::FromGguf(file);
  if (!t.warning().empty())
    std::fprintf(stderr, "mneme render: warning: %s\n", t.warning().c_str());
  if (!opts.bos_given && !opts.eos_given) return t;
  // Explicit --bos/--eos win over the model's tokens.
  std::string bos = opts.bos_given ? opts.bos : t.bos_token();
  std::string eos = opts.eos_given ? opts.eos : t.eos_token();
  if (t.is_fallback()) return ChatTemplate::ChatMl(std::move(bos), std::move(eos));
  return ChatTemplate::FromSource(t.source(), std::move(bos), std::move(eos));
}

int RunRender(const RenderOptions& opts) {
  auto fail = [](const Status& s) {
    std::fprintf(stderr, "mneme render: %s\n", s.message().c_str());
    return kExitError;
  };
  if (opts.model_path.empty() == opts.template_path.empty()) {
    return fail(InvalidArgument("give exactly one of -m FILE.gguf and --template FILE.jinja"));
  }
  Result<ChatTemplate> chat_template = LoadTemplate(opts);
  if (!chat_template.ok()) return fail(chat_template.status());

  Result<Json> messages = ReadJson(opts.messages_path);
  if (!messages.ok()) return fail(messages.status());
  if (!messages->is_array()) {
    return fail(InvalidArgument(opts.messages_path + ": must hold a JSON array of messages"));
  }
  Json tools = nullptr;
  if (!opts.tools_path.empty()) {
    Result<Json> t = ReadJson(opts.tools_path);
    if (!t.ok()) return fail(t.status());
    tools = std::move(t).value();
  }
  Json extra = nullptr;
  if (!opts.context_path.empty()) {
    Result<Json> c = ReadJson(opts.context_path);
    if (!c.ok()) return fail(c.status());
    extra = std::move(c).value();
  }

  Result<std::string> prompt =
      chat_template->Render(*messages, tools, !opts.no_generation_prompt, extra);
  if (!prompt.ok()) {
    std::fprintf(stderr, "mneme render: %s\n", prompt.status().message().c_str());
    return prompt.status().code() == StatusCode::kFailedPrecondition ? kExitTemplateRaised
                                                                     : kExitError;
  }
  std::fwrite(prompt->data(), 1, prompt->size(), stdout);
  if (std::fflush(stdout) != 0) return fail(IoError("writing stdout failed"));
  return 0;
}

}  // namespace

void AddRenderCommand(CLI::App& app) {
  auto opts = std::make_shared<RenderOptions>();
  CLI::App* cmd = app.add_subcommand(
      "render", "Render a conversation with a chat template and print the prompt");
  CLI::Option* model = cmd->add_option("-m,--model", opts->model_path,
                                       "GGUF model whose tokenizer.chat_template to use");
  CLI::Option* tmpl =
      cmd->add_option("--template", opts->template_path, "Jinja chat template file (used as is)");
  model->excludes(tmpl);
  cmd->add_option("--messages", opts->messages_path, "JSON file: an array of messages")->required();
  cmd->add_option("--tools", opts->tools_path, "JSON file: an array of tools (OpenAI schema)");
  cmd->add_option("--context", opts->context_path,
                  "JSON file: an object of extra template variables (e.g. enable_thinking)");
  cmd->add_flag("--no-generation-prompt", opts->no_generation_prompt,
                "Set add_generation_prompt to false");
  CLI::Option* bos =
      cmd->add_option("--bos", opts->bos, "bos_token text (default: the model's, or \"\")");
  CLI::Option* eos =
      cmd->add_option("--eos", opts->eos, "eos_token text (default: the model's, or \"\")");
  cmd->callback([opts, bos, eos] {
    opts->bos_given = bos->count() > 0;
    opts->eos_given = eos->count() > 0;
    SetExitCode(RunRender(*opts));
  });
}

}  // namespace mneme::app
