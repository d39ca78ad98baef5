// Sampler cost per token at Qwen's vocabulary size (151,936): greedy, plain
// temperature, and the usual truncations. Sampling runs once per sequence per
// decode step, so it should stay far below a decode step's milliseconds.
#include <benchmark/benchmark.h>

#include <cmath>
#include <vector>

#include "model/sampler.h"

namespace mneme {
namespace {

constexpr int32_t kVocab = 151936;

std::vector<float> Logits() {
  std::vector<float> l(kVocab);
  // A peaked, irregular spread like a real model's: a few tokens stand out.
  for (int32_t i = 0; i < kVocab; ++i) l[i] = 4.0f * std::sin(0.001f * i * i) - 0.00005f * i;
  return l;
}

void Run(benchmark::State& state, SamplingParams p) {
  p.seed = 1;
  p.penalty_last_n = 64;
  Result<Sampler> s = Sampler::Create(p, kVocab);
  if (!s.ok()) {
    state.SkipWithError("bad params");
    return;
  }
  Sampler sampler = std::move(s).value();
  for (int i = 0; i < 64; ++i) sampler.Accept(i * 97);
  const std::vector<float> logits = Logits();
  for (auto _ : state) benchmark::DoNotOptimize(sampler.Sample(logits));
}

SamplingParams Params(float temperature, int32_t top_k = 0, float top_p = 1.0f, float min_p = 0.0f,
                      float repetition_penalty = 1.0f) {
  SamplingParams p;
  p.temperature = temperature;
  p.top_k = top_k;
  p.top_p = top_p;
  p.min_p = min_p;
  p.repetition_penalty = repetition_penalty;
  return p;
}

void BM_Greedy(benchmark::State& state) {
  Run(state, Params(0.0f));
}
void BM_Temperature(benchmark::State& state) {
  Run(state, Params(0.8f));
}
void BM_TopK40(benchmark::State& state) {
  Run(state, Params(0.8f, 40));
}
void BM_TopP095(benchmark::State& state) {
  Run(state, Params(0.8f, 0, 0.95f));
}
void BM_MinP005(benchmark::State& state) {
  Run(state, Params(0.8f, 0, 1.0f, 0.05f));
}
void BM_Penalized(benchmark::State& state) {
  Run(state, Params(0.8f, 40, 0.95f, 0.0f, 1.1f));
}

BENCHMARK(BM_Greedy);
BENCHMARK(BM_Temperature);
BENCHMARK(BM_TopK40);
BENCHMARK(BM_TopP095);
BENCHMARK(BM_MinP005);
BENCHMARK(BM_Penalized);

}  // namespace
}  // namespace mneme
