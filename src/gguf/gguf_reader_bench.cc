// How long opening a GGUF takes: the whole cost of validating metadata and
// tensor infos. The qwen2 vocab (152k tokens + 151k merges) is the largest
// metadata we test with; stories260K adds 48 tensor infos.
#include <benchmark/benchmark.h>

#include <string>

#include "gguf/gguf.h"

namespace mneme::gguf {
namespace {

void OpenFile(benchmark::State& state, const std::string& path) {
  for (auto _ : state) {
    Result<GgufFile> f = GgufFile::Open(path);
    if (!f.ok()) {
      state.SkipWithError(f.status().ToString().c_str());
      return;
    }
    benchmark::DoNotOptimize(f->metadata().size());
  }
}

void BM_OpenQwen2Vocab(benchmark::State& state) {
  OpenFile(state, std::string(MNEME_SHARED_DIR) + "/models/vocab/ggml-vocab-qwen2.gguf");
}
BENCHMARK(BM_OpenQwen2Vocab)->Unit(benchmark::kMillisecond);

void BM_GetStringArrayQwen2Tokens(benchmark::State& state) {
  Result<GgufFile> f =
      GgufFile::Open(std::string(MNEME_SHARED_DIR) + "/models/vocab/ggml-vocab-qwen2.gguf");
  if (!f.ok()) {
    state.SkipWithError(f.status().ToString().c_str());
    return;
  }
  for (auto _ : state) {
    auto tokens = f->GetStringArray("tokenizer.ggml.tokens");
    benchmark::DoNotOptimize(tokens->size());
  }
}
BENCHMARK(BM_GetStringArrayQwen2Tokens)->Unit(benchmark::kMillisecond);

void BM_OpenStories260K(benchmark::State& state) {
  OpenFile(state, std::string(MNEME_SHARED_DIR) + "/models/stories260K.gguf");
}
BENCHMARK(BM_OpenStories260K)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace mneme::gguf
