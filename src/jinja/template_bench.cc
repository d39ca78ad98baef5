// Rendering cost of real chat templates on a 20-message conversation (the
// per-turn work of a chat server before tokenization), and parse cost.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "jinja/template.h"

namespace mneme::jinja {
namespace {

std::string ReadTemplate(const std::string& name) {
  std::ifstream f(std::filesystem::path(MNEME_SHARED_DIR) / "templates" / name);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

nlohmann::ordered_json Conversation(int turns) {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  messages.push_back({{"role", "system"}, {"content", "You are a helpful assistant."}});
  for (int i = 0; i < turns; ++i) {
    messages.push_back(
        {{"role", i % 2 == 0 ? "user" : "assistant"},
         {"content", "Message number " + std::to_string(i) +
                         " with a few sentences of ordinary text in it. Nothing special here."}});
  }
  return {{"messages", messages},
          {"bos_token", "<s>"},
          {"eos_token", "</s>"},
          {"add_generation_prompt", true}};
}

void BM_Render(benchmark::State& state, const std::string& name) {
  auto tpl = Template::Parse(ReadTemplate(name));
  if (!tpl.ok()) {
    state.SkipWithError(tpl.status().ToString().c_str());
    return;
  }
  const auto ctx = Conversation(20);
  for (auto _ : state) {
    auto out = tpl->Render(ctx);
    if (!out.ok()) {
      state.SkipWithError(out.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(out->data());
  }
}

void BM_Parse(benchmark::State& state, const std::string& name) {
  const std::string src = ReadTemplate(name);
  for (auto _ : state) {
    auto tpl = Template::Parse(src);
    benchmark::DoNotOptimize(tpl.ok());
  }
}

BENCHMARK_CAPTURE(BM_Render, qwen3, std::string("Qwen-Qwen3-0.6B.jinja"));
BENCHMARK_CAPTURE(BM_Render, llama31, std::string("meta-llama-Llama-3.1-8B-Instruct.jinja"));
BENCHMARK_CAPTURE(BM_Render, gpt_oss, std::string("openai-gpt-oss-120b.jinja"));
BENCHMARK_CAPTURE(BM_Parse, gpt_oss, std::string("openai-gpt-oss-120b.jinja"));

}  // namespace
}  // namespace mneme::jinja
