// End-to-end tests of Template on the real chat templates in
// ../shared/templates: every one parses; a few render known prefixes; and,
// when node and @huggingface/jinja are installed under tests/oracle, every
// template is rendered with many conversations by both the reference and
// Mneme and the outputs are compared byte for byte (an error in the
// reference must be an error here too).
#include "jinja/template.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mneme::jinja {
namespace {

namespace fs = std::filesystem;

const fs::path kTemplates = fs::path(MNEME_SHARED_DIR) / "templates";
const fs::path kReference =
    fs::path(MNEME_SOURCE_DIR) / "tests/oracle/node_modules/@huggingface/jinja/dist/index.js";

std::string ReadFile(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::vector<fs::path> TemplateFiles() {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(kTemplates)) {
    if (e.path().extension() == ".jinja") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Conversations and tool lists the templates are rendered with.
const char* const kContexts = R"json(
{"tools": [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather for a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}, "unit": {"type": "string", "enum": ["c", "f"], "description": "Unit"}}, "required": ["city"]}}}, {"type": "function", "function": {"name": "search", "description": "Search the web", "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "Query text"}, "limit": {"type": "integer", "description": "Max results"}, "tags": {"type": "array", "items": {"type": "string"}, "description": "Tags"}}, "required": ["query"]}}}], "tools_simple": [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather for a city", "parameters": {"type": "object", "properties": {"city": {"type": "string", "description": "City name"}, "unit": {"type": "string", "enum": ["c", "f"], "description": "Unit"}}, "required": ["city"]}}}, {"type": "function", "function": {"name": "search", "description": "Search the web", "parameters": {"type": "object", "properties": {"query": {"type": "string", "description": "Query text"}, "limit": {"type": "integer", "description": "Max results"}}, "required": ["query"]}}}], "convs": {"user": [{"role": "user", "content": "Hello, how are you?"}], "sys_user": [{"role": "system", "content": "You are a helpful assistant."}, {"role": "user", "content": "What is 2+2?"}], "multi": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello! How can I help?"}, {"role": "user", "content": "Tell me a joke ünïcödé 日本語 🎉"}], "multi_nosys": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "  spaced  \n"}], "think": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "<think>\nreasoning here\n</think>\n\nThe answer."}, {"role": "user", "content": "Again"}], "tool_calls": [{"role": "system", "content": "You can call tools."}, {"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": "", "tool_calls": [{"id": "abc123XYZ", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]}, {"role": "tool", "tool_call_id": "abc123XYZ", "name": "get_weather", "content": "{\"temp\": 21}"}, {"role": "tool", "tool_call_id": "abc123XYZ", "content": {"weird": [1, 2.5, null, true]}}, {"role": "assistant", "content": "It is 21C in Paris."}, {"role": "user", "content": "Thanks"}], "tool_calls_nocontent": [{"role": "user", "content": "Weather in Paris?"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "q9w8e7r6t", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "c"}}}]}, {"role": "tool", "tool_call_id": "q9w8e7r6t", "content": "21"}]}}
)json";

nlohmann::ordered_json Context(const nlohmann::ordered_json& messages, bool add_generation_prompt,
                               const nlohmann::ordered_json* tools) {
  nlohmann::ordered_json c = {{"bos_token", "<s>"}, {"eos_token", "</s>"}};
  c["messages"] = messages;
  c["add_generation_prompt"] = add_generation_prompt;
  if (tools != nullptr) c["tools"] = *tools;
  return c;
}

TEST(TemplateTest, EverySharedTemplateParses) {
  const auto files = TemplateFiles();
  ASSERT_GE(files.size(), 14u);
  for (const auto& f : files) {
    auto t = Template::Parse(ReadFile(f));
    EXPECT_TRUE(t.ok()) << f.filename() << ": " << t.status().ToString();
  }
}

TEST(TemplateTest, RendersKnownPrompts) {
  const nlohmann::ordered_json messages = {{{"role", "system"}, {"content", "Be brief."}},
                                           {{"role", "user"}, {"content", "Hi"}}};
  auto qwen = Template::Parse(ReadFile(kTemplates / "Qwen-Qwen2.5-7B-Instruct.jinja"));
  ASSERT_TRUE(qwen.ok());
  auto out = qwen->Render(Context(messages, true, nullptr));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out,
            "<|im_start|>system\nBe "
            "brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");

  auto phi = Template::Parse(ReadFile(kTemplates / "microsoft-Phi-3.5-mini-instruct.jinja"));
  ASSERT_TRUE(phi.ok());
  out = phi->Render(Context(messages, true, nullptr));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, "<|system|>\nBe brief.<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\n");
}

TEST(TemplateTest, GemmaRaisesOnASystemMessage) {
  auto gemma = Template::Parse(ReadFile(kTemplates / "google-gemma-2-2b-it.jinja"));
  ASSERT_TRUE(gemma.ok());
  const nlohmann::ordered_json messages = {{{"role", "system"}, {"content", "x"}},
                                           {{"role", "user"}, {"content", "y"}}};
  auto out = gemma->Render(Context(messages, true, nullptr));
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(out.status().message(), "System role not supported");
}

TEST(TemplateTest, SurvivesMangledTemplates) {
  // Cut and splice the real templates at many points: whatever happens, it
  // must be a Status, never a crash or a hang.
  const nlohmann::ordered_json ctx =
      Context({{{"role", "user"}, {"content", "hi"}}}, true, nullptr);
  int rendered = 0;
  for (const auto& f : TemplateFiles()) {
    const std::string src = ReadFile(f);
    for (size_t cut = 0; cut < src.size(); cut += 97) {
      const std::string variants[] = {
          src.substr(0, cut), src.substr(cut),
          src.substr(0, cut) + src.substr(cut + 7 < src.size() ? cut + 7 : src.size())};
      for (const std::string& v : variants) {
        auto t = Template::Parse(v);
        if (t.ok() && t->Render(ctx).ok()) ++rendered;
      }
    }
  }
  EXPECT_GT(rendered, 0);
}

// Renders all cases with the reference through node; false if unavailable.
bool RunReference(const nlohmann::ordered_json& cases, nlohmann::ordered_json* results) {
  if (!fs::exists(kReference) || std::system("node --version > /dev/null 2>&1") != 0) return false;
  const fs::path dir =
      fs::temp_directory_path() / ("mneme_jinja_oracle_" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "cases.json") << cases.dump();
  std::ofstream(dir / "render.mjs")
      << "import { Template } from '" << kReference.string() << "';\n"
      << "import fs from 'fs';\n"
      << "const cases = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));\n"
      << "const out = cases.map(c => { try { return { ok: true, out: new Template(c.t).render(c.c) "
         "}; }\n"
      << "  catch (e) { return { ok: false, err: String(e && e.message) }; } });\n"
      << "fs.writeFileSync(process.argv[3], JSON.stringify(out));\n";
  const std::string cmd = "node " + (dir / "render.mjs").string() + " " +
                          (dir / "cases.json").string() + " " + (dir / "results.json").string();
  const bool ok = std::system(cmd.c_str()) == 0;
  if (ok) *results = nlohmann::ordered_json::parse(ReadFile(dir / "results.json"));
  fs::remove_all(dir);
  return ok;
}

TEST(TemplateTest, MatchesTheReferenceOnEverySharedTemplate) {
  const auto data = nlohmann::ordered_json::parse(kContexts);
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  std::vector<std::string> names;
  for (const auto& f : TemplateFiles()) {
    const std::string src = ReadFile(f);
    for (auto it = data["convs"].begin(); it != data["convs"].end(); ++it) {
      for (bool agp : {false, true}) {
        for (const char* tools : {"", "tools", "tools_simple"}) {
          const nlohmann::ordered_json* t = *tools ? &data[tools] : nullptr;
          cases.push_back({{"t", src}, {"c", Context(it.value(), agp, t)}});
          names.push_back(f.filename().string() + " " + it.key() + (agp ? " +gen" : "") + " " +
                          tools);
        }
      }
    }
  }
  nlohmann::ordered_json results;
  if (!RunReference(cases, &results)) GTEST_SKIP() << "node or @huggingface/jinja not available";
  ASSERT_EQ(results.size(), cases.size());
  int matched_output = 0;
  int matched_error = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    SCOPED_TRACE(names[i]);
    auto tpl = Template::Parse(cases[i]["t"].get<std::string>());
    ASSERT_TRUE(tpl.ok()) << tpl.status().ToString();
    auto out = tpl->Render(cases[i]["c"]);
    if (results[i]["ok"].get<bool>()) {
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      EXPECT_EQ(*out, results[i]["out"].get<std::string>());
      ++matched_output;
    } else {
      EXPECT_FALSE(out.ok()) << "reference failed with: " << results[i]["err"]
                             << "\nMneme rendered: " << *out;
      ++matched_error;
    }
  }
  std::printf("compared %zu renders: %d outputs, %d errors\n", cases.size(), matched_output,
              matched_error);
}

}  // namespace
}  // namespace mneme::jinja
